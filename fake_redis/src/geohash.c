/* geohash.c -- cells, neighbours, search areas and distances, computed in the same
 * floating-point steps as redis-server 7.0.15 (geohash.c, geohash_helper.c) so that the
 * results agree to the last bit: every expression below keeps Redis's operand order. */
#include <math.h>
#include <stddef.h>

#include "geohash.h"

#define GEO_PI 3.14159265358979323846 /* M_PI, which strict C11 does not define */
#define DEG_TO_RAD_FACTOR (GEO_PI / 180.0)
#define EARTH_RADIUS_M 6372797.560856 /* the quadratic mean radius Redis uses */
#define MERCATOR_MAX 20037726.37

static double deg_rad(double deg) { return deg * DEG_TO_RAD_FACTOR; }
static double rad_deg(double rad) { return rad / DEG_TO_RAD_FACTOR; }

static const fri_georange wgs84_lon = {FRI_GEO_LONG_MIN, FRI_GEO_LONG_MAX};
static const fri_georange wgs84_lat = {FRI_GEO_LAT_MIN, FRI_GEO_LAT_MAX};

/* Latitude bits to the even positions, longitude bits to the odd ones. */
static uint64_t interleave(uint32_t lat, uint32_t lon)
{
    uint64_t out = 0;
    for (unsigned i = 0; i < 32; i++) {
        out |= (uint64_t)((lat >> i) & 1u) << (2 * i);
        out |= (uint64_t)((lon >> i) & 1u) << (2 * i + 1);
    }
    return out;
}

/* The inverse: latitude in the low 32 bits, longitude in the high ones. */
static uint64_t deinterleave(uint64_t bits)
{
    uint64_t lat = 0, lon = 0;
    for (unsigned i = 0; i < 32; i++) {
        lat |= ((bits >> (2 * i)) & 1u) << i;
        lon |= ((bits >> (2 * i + 1)) & 1u) << i;
    }
    return lat | (lon << 32);
}

static int range_is_zero(fri_georange r) { return r.min == 0 && r.max == 0; }
static int hash_is_zero(fri_geohash h) { return h.bits == 0 && h.step == 0; }

int fri_geohash_encode(fri_georange lon_range, fri_georange lat_range, double lon, double lat,
                       unsigned step, fri_geohash *out)
{
    if (!out || step > 32 || step == 0 || range_is_zero(lat_range) || range_is_zero(lon_range))
        return 0;
    /* the WGS84 limits apply whatever the ranges (GEOHASH re-encodes in -90..90) */
    if (lon > FRI_GEO_LONG_MAX || lon < FRI_GEO_LONG_MIN || lat > FRI_GEO_LAT_MAX ||
        lat < FRI_GEO_LAT_MIN)
        return 0;
    out->bits = 0;
    out->step = (uint8_t)step;
    if (lat < lat_range.min || lat > lat_range.max || lon < lon_range.min ||
        lon > lon_range.max)
        return 0;
    double lat_offset = (lat - lat_range.min) / (lat_range.max - lat_range.min);
    double lon_offset = (lon - lon_range.min) / (lon_range.max - lon_range.min);
    lat_offset *= (double)(1ULL << step);
    lon_offset *= (double)(1ULL << step);
    /* at the top of a range the offset is 2^step itself: one bit above the cell's */
    out->bits = interleave((uint32_t)lat_offset, (uint32_t)lon_offset);
    return 1;
}

int fri_geohash_encode_wgs84(double lon, double lat, unsigned step, fri_geohash *out)
{
    return fri_geohash_encode(wgs84_lon, wgs84_lat, lon, lat, step, out);
}

int fri_geohash_decode(fri_georange lon_range, fri_georange lat_range, fri_geohash h,
                       fri_geoarea *area)
{
    if (hash_is_zero(h) || !area || range_is_zero(lat_range) || range_is_zero(lon_range))
        return 0;
    uint64_t sep = deinterleave(h.bits);
    double lat_scale = lat_range.max - lat_range.min;
    double lon_scale = lon_range.max - lon_range.min;
    uint32_t ilat = (uint32_t)sep, ilon = (uint32_t)(sep >> 32);
    double cells = (double)(1ULL << h.step);
    /* a 32-bit index + 1 wraps, as Redis's uint32_t arithmetic does */
    area->lat.min = lat_range.min + (ilat * 1.0 / cells) * lat_scale;
    area->lat.max = lat_range.min + ((uint32_t)(ilat + 1u) * 1.0 / cells) * lat_scale;
    area->lon.min = lon_range.min + (ilon * 1.0 / cells) * lon_scale;
    area->lon.max = lon_range.min + ((uint32_t)(ilon + 1u) * 1.0 / cells) * lon_scale;
    return 1;
}

int fri_geohash_decode_wgs84(fri_geohash h, double *xy)
{
    fri_geoarea a;
    if (!xy || !fri_geohash_decode(wgs84_lon, wgs84_lat, h, &a)) return 0;
    xy[0] = (a.lon.min + a.lon.max) / 2;
    if (xy[0] > FRI_GEO_LONG_MAX) xy[0] = FRI_GEO_LONG_MAX;
    if (xy[0] < FRI_GEO_LONG_MIN) xy[0] = FRI_GEO_LONG_MIN;
    xy[1] = (a.lat.min + a.lat.max) / 2;
    if (xy[1] > FRI_GEO_LAT_MAX) xy[1] = FRI_GEO_LAT_MAX;
    if (xy[1] < FRI_GEO_LAT_MIN) xy[1] = FRI_GEO_LAT_MIN;
    return 1;
}

uint64_t fri_geohash_align52(fri_geohash h) { return h.bits << (52 - h.step * 2); }

uint64_t fri_geo_score_bits(double score)
{
    /* x86-64's conversion: below 2^63 a signed truncation (the "integer indefinite"
     * 2^63 when it does not fit, NaN included), from 2^63 on the same of score - 2^63
     * with the top bit flipped */
    const double two63 = 9223372036854775808.0;
    if (!(score >= two63)) {
        if (score != score || score < -two63) return UINT64_C(1) << 63;
        return (uint64_t)(int64_t)score;
    }
    double t = score - two63;
    if (t >= two63) return 0; /* indefinite, flipped */
    return (uint64_t)(int64_t)t ^ (UINT64_C(1) << 63);
}

int fri_geo_decode_score(double score, double *xy)
{
    fri_geohash h = {fri_geo_score_bits(score), FRI_GEO_STEP_MAX};
    return fri_geohash_decode_wgs84(h, xy);
}

/* Moves a cell one step along longitude (the odd bits) or latitude (the even bits):
 * the other lane's bits are filled with ones so the carry or borrow runs through them. */
static void move_lane(fri_geohash *h, int d, uint64_t lane_mask)
{
    if (d == 0) return;
    uint64_t lane = h->bits & lane_mask;
    uint64_t other = h->bits & ~lane_mask;
    unsigned shift = 64 - h->step * 2u;
    uint64_t fill = ~lane_mask >> shift; /* the other lane's bits of this step */
    if (d > 0) {
        lane = lane + (fill + 1);
    } else {
        lane = lane | fill;
        lane = lane - (fill + 1);
    }
    lane &= lane_mask >> shift;
    h->bits = lane | other;
}

#define LON_LANE UINT64_C(0xaaaaaaaaaaaaaaaa)
#define LAT_LANE UINT64_C(0x5555555555555555)

void fri_geohash_neighbors(fri_geohash h, fri_geohash out[8])
{
    /* north, south, east, west, north-east, north-west, south-east, south-west */
    static const int dlon[8] = {0, 0, 1, -1, 1, -1, 1, -1};
    static const int dlat[8] = {1, -1, 0, 0, 1, 1, -1, -1};
    for (int i = 0; i < 8; i++) {
        out[i] = h;
        move_lane(&out[i], dlon[i], LON_LANE);
        move_lane(&out[i], dlat[i], LAT_LANE);
    }
}

unsigned fri_geo_estimate_step(double range_meters, double lat)
{
    if (range_meters == 0) return 26;
    int step = 1;
    while (range_meters < MERCATOR_MAX) {
        range_meters *= 2;
        step++;
    }
    step -= 2;
    /* meridians converge towards the poles: a coarser cell there */
    if (lat > 66 || lat < -66) {
        step--;
        if (lat > 80 || lat < -80) step--;
    }
    if (step < 1) step = 1;
    if (step > 26) step = 26;
    return (unsigned)step;
}

/* The shape's bounding box in degrees (geohashBoundingBox). */
static void bounding_box(fri_geoshape *s)
{
    double lon = s->xy[0], lat = s->xy[1];
    double height = s->conversion * (s->type == FRI_GEO_CIRCLE ? s->radius : s->height / 2);
    double width = s->conversion * (s->type == FRI_GEO_CIRCLE ? s->radius : s->width / 2);
    const double lat_delta = rad_deg(height / EARTH_RADIUS_M);
    const double lon_delta_top = rad_deg(width / EARTH_RADIUS_M / cos(deg_rad(lat + lat_delta)));
    const double lon_delta_bottom =
        rad_deg(width / EARTH_RADIUS_M / cos(deg_rad(lat - lat_delta)));
    /* the wider edge is the one nearer the equator */
    int south = lat < 0;
    s->bounds[0] = south ? lon - lon_delta_bottom : lon - lon_delta_top;
    s->bounds[2] = south ? lon + lon_delta_bottom : lon + lon_delta_top;
    s->bounds[1] = lat - lat_delta;
    s->bounds[3] = lat + lat_delta;
}

void fri_geo_search_cells(fri_geoshape *s, fri_geohash cells[FRI_GEO_CELLS])
{
    bounding_box(s);
    double min_lon = s->bounds[0], min_lat = s->bounds[1];
    double max_lon = s->bounds[2], max_lat = s->bounds[3];
    double lon = s->xy[0], lat = s->xy[1];
    double radius_m = s->type == FRI_GEO_CIRCLE
                          ? s->radius
                          : sqrt((s->width / 2) * (s->width / 2) +
                                 (s->height / 2) * (s->height / 2));
    radius_m *= s->conversion;

    unsigned step = fri_geo_estimate_step(radius_m, lat);
    fri_geohash h, nb[8];
    fri_geoarea area;
    fri_geohash_encode(wgs84_lon, wgs84_lat, lon, lat, step, &h);
    fri_geohash_neighbors(h, nb);
    fri_geohash_decode(wgs84_lon, wgs84_lat, h, &area);

    /* a neighbour that does not reach the box's edge: one step coarser */
    fri_geoarea north, south, east, west;
    fri_geohash_decode(wgs84_lon, wgs84_lat, nb[0], &north);
    fri_geohash_decode(wgs84_lon, wgs84_lat, nb[1], &south);
    fri_geohash_decode(wgs84_lon, wgs84_lat, nb[2], &east);
    fri_geohash_decode(wgs84_lon, wgs84_lat, nb[3], &west);
    int coarser = north.lat.max < max_lat || south.lat.min > min_lat ||
                  east.lon.max < max_lon || west.lon.min > min_lon;
    if (step > 1 && coarser) {
        step--;
        fri_geohash_encode(wgs84_lon, wgs84_lat, lon, lat, step, &h);
        fri_geohash_neighbors(h, nb);
        fri_geohash_decode(wgs84_lon, wgs84_lat, h, &area);
    }

    /* leave out the neighbours the box does not reach */
    if (step >= 2) {
        static const fri_geohash zero = {0, 0};
        if (area.lat.min < min_lat) nb[1] = nb[7] = nb[6] = zero;  /* S, SW, SE */
        if (area.lat.max > max_lat) nb[0] = nb[4] = nb[5] = zero;  /* N, NE, NW */
        if (area.lon.min < min_lon) nb[3] = nb[7] = nb[5] = zero;  /* W, SW, NW */
        if (area.lon.max > max_lon) nb[2] = nb[6] = nb[4] = zero;  /* E, SE, NE */
    }
    cells[0] = h;
    for (int i = 0; i < 8; i++) cells[1 + i] = nb[i];
}

double fri_geo_lat_distance(double lat1, double lat2)
{
    return EARTH_RADIUS_M * fabs(deg_rad(lat2) - deg_rad(lat1));
}

double fri_geo_distance(double lon1, double lat1, double lon2, double lat2)
{
    double lon1r = deg_rad(lon1), lon2r = deg_rad(lon2);
    double v = sin((lon2r - lon1r) / 2);
    /* the same meridian: the latitude difference alone, as Redis shortcuts it */
    if (v == 0.0) return fri_geo_lat_distance(lat1, lat2);
    double lat1r = deg_rad(lat1), lat2r = deg_rad(lat2);
    double u = sin((lat2r - lat1r) / 2);
    double a = u * u + cos(lat1r) * cos(lat2r) * v * v;
    return 2.0 * EARTH_RADIUS_M * asin(sqrt(a));
}

int fri_geo_within_shape(const fri_geoshape *s, double score, double *xy, double *dist)
{
    if (!fri_geo_decode_score(score, xy)) return 0;
    if (s->type == FRI_GEO_CIRCLE) {
        *dist = fri_geo_distance(s->xy[0], s->xy[1], xy[0], xy[1]);
        return !(*dist > s->radius * s->conversion); /* a NaN distance is in, as in Redis */
    }
    /* the box: latitude first (cheaper), then the longitude distance along the
     * point's own parallel, then the distance from the centre */
    double width_m = s->width * s->conversion, height_m = s->height * s->conversion;
    if (fri_geo_lat_distance(xy[1], s->xy[1]) > height_m / 2) return 0;
    if (fri_geo_distance(xy[0], xy[1], s->xy[0], xy[1]) > width_m / 2) return 0;
    *dist = fri_geo_distance(s->xy[0], s->xy[1], xy[0], xy[1]);
    return 1;
}
