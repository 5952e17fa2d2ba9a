/* geohash.h -- the geohash arithmetic behind the GEO commands (t_geo.c), as redis-server
 * 7.0.15 computes it (its geohash.c and geohash_helper.c), so that every score, decoded
 * position, distance and search area comes out bit for bit the same.
 *
 * A position is a longitude in [-180, 180] and a latitude in [-85.05112878, 85.05112878]
 * (the Web Mercator limits Redis uses).  Each is scaled to a fixed-point number of `step`
 * bits (26 for a stored member) and the two are interleaved, latitude in the even bits and
 * longitude in the odd bits: a geo set's score is that 52-bit number.  A search covers the
 * cell of the centre at a coarser step and its eight neighbours, each one contiguous range
 * of scores.
 *
 * Nothing here touches the server; tests/unit/test_geo.c drives it alone.
 */
#ifndef FRI_GEOHASH_H
#define FRI_GEOHASH_H

#include <stdint.h>

#define FRI_GEO_STEP_MAX 26 /* 26 bits per coordinate: a 52-bit score */
#define FRI_GEO_LAT_MIN -85.05112878
#define FRI_GEO_LAT_MAX 85.05112878
#define FRI_GEO_LONG_MIN -180
#define FRI_GEO_LONG_MAX 180

/* A cell: step bits per coordinate, interleaved into bits.  {0, 0} is "no cell" (a
 * neighbour a search leaves out). */
typedef struct fri_geohash {
    uint64_t bits;
    uint8_t step;
} fri_geohash;

typedef struct fri_georange {
    double min, max;
} fri_georange;

/* A cell's extent in degrees. */
typedef struct fri_geoarea {
    fri_georange lon, lat;
} fri_geoarea;

/* The search shapes of GEOSEARCH and GEORADIUS: a circle of `radius`, or a box of
 * width x height, in the unit whose size in metres is `conversion`, around xy. */
typedef enum fri_geoshape_type { FRI_GEO_CIRCLE = 1, FRI_GEO_BOX = 2 } fri_geoshape_type;

typedef struct fri_geoshape {
    fri_geoshape_type type;
    double xy[2];        /* the centre: longitude, latitude */
    double conversion;   /* metres per unit */
    double radius;       /* circle */
    double width, height; /* box */
    double bounds[4];    /* set by fri_geo_search_cells: min lon, min lat, max lon, max lat */
} fri_geoshape;

/* The nine cells a search looks in, in Redis's order: the centre, north, south, east,
 * west, north-east, north-west, south-east, south-west; a left-out one is {0, 0}. */
#define FRI_GEO_CELLS 9

/* Encodes (lon, lat) in the given ranges at step bits (1..32).  0 when the point is
 * outside the WGS84 limits or the ranges, or the arguments are unusable. */
int fri_geohash_encode(fri_georange lon_range, fri_georange lat_range, double lon, double lat,
                       unsigned step, fri_geohash *out);
/* The same in the WGS84 ranges Redis stores members in. */
int fri_geohash_encode_wgs84(double lon, double lat, unsigned step, fri_geohash *out);
/* A cell's extent in the given ranges: 0 for {0, 0}. */
int fri_geohash_decode(fri_georange lon_range, fri_georange lat_range, fri_geohash h,
                       fri_geoarea *area);
/* The centre of a WGS84 cell, clamped to the limits: xy[0] longitude, xy[1] latitude. */
int fri_geohash_decode_wgs84(fri_geohash h, double *xy);
/* The cell's bits shifted to the 52-bit score scale. */
uint64_t fri_geohash_align52(fri_geohash h);
/* The position a stored score stands for (decodeGeohash: the score converted to 64 bits
 * the way x86-64 truncates a double, as redis-server's (uint64_t) cast does for scores
 * out of range too, then decoded at step 26).  Always 1. */
int fri_geo_decode_score(double score, double *xy);
/* The score's 64 bits as that cast gives them. */
uint64_t fri_geo_score_bits(double score);

/* The eight neighbours of h: north, south, east, west, north-east, north-west,
 * south-east, south-west (wrapping around at the edges, as Redis's bit moves do). */
void fri_geohash_neighbors(fri_geohash h, fri_geohash out[8]);
/* The step a search of range_meters around latitude lat starts from. */
unsigned fri_geo_estimate_step(double range_meters, double lat);
/* Fills shape->bounds and the nine cells to search (geohashCalculateAreasByShapeWGS84). */
void fri_geo_search_cells(fri_geoshape *shape, fri_geohash cells[FRI_GEO_CELLS]);

/* Great-circle distance in metres (Redis's haversine on a 6372797.560856 m sphere). */
double fri_geo_distance(double lon1, double lat1, double lon2, double lat2);
/* The distance along a meridian between two latitudes. */
double fri_geo_lat_distance(double lat1, double lat2);
/* Whether the point (lon, lat) with score lies in the shape: 1 and *dist (metres from the
 * centre) and xy (the point) set, or 0. */
int fri_geo_within_shape(const fri_geoshape *shape, double score, double *xy, double *dist);

#endif /* FRI_GEOHASH_H */
