/* test_geo.c -- the geohash arithmetic (geohash.c) and the GEO commands (t_geo.c) where
 * the differential script cannot look often enough.
 *
 * - Encoding: every random point encodes to a cell that contains it, and the cell's
 *   centre encodes back to the same bits; the bits are the two coordinates' fixed-point
 *   values interleaved (checked bit by bit against a reference written here); the
 *   example of Redis's GEOADD documentation (Palermo, Catania) gives its documented
 *   scores, positions, geohashes and distance.
 * - Neighbours: east then west (north then south ...) is the identity away from the
 *   edges, and a neighbour's cell touches the centre's.
 * - Scores the fake never wrote: the conversion of any double to 64 bits follows x86-64's
 *   truncation (negative, beyond 2^63, infinite) and decoding stays within the limits.
 * - Searches: over thousands of seeded random sets, centres and radii, a search by radius
 *   or box answers exactly the members a brute-force scan finds inside the shape (the
 *   nine cells miss nothing), sorted answers are sorted, and COUNT n answers the n
 *   nearest distances whatever the partial sort does with ties.
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "fake_fixture.h"
#include "fakeredis.h"
#include "geohash.h"
#include "test_rng.h"

#define TEST(fn) FAKE_TEST(fn)

static double uniform(uint64_t *s, double lo, double hi)
{
    return lo + (hi - lo) * ((double)(splitmix64_next(s) >> 11) / 9007199254740992.0);
}

/* ----- Encoding ------------------------------------------------------------------------- */

/* The reference interleave: latitude bit i to bit 2i, longitude bit i to bit 2i+1. */
static uint64_t ref_interleave(uint32_t lat, uint32_t lon)
{
    uint64_t out = 0;
    for (int i = 31; i >= 0; i--) {
        out = out << 1 | ((lon >> i) & 1u);
        out = out << 1 | ((lat >> i) & 1u);
    }
    return out;
}

static void test_encode_decode_roundtrip(void **state)
{
    (void)state;
    uint64_t s = 1;
    for (int i = 0; i < 20000; i++) {
        double lon = uniform(&s, -180, 180), lat = uniform(&s, FRI_GEO_LAT_MIN, FRI_GEO_LAT_MAX);
        unsigned step = 1 + splitmix64_below(&s, 26);
        fri_geohash h;
        assert_true(fri_geohash_encode_wgs84(lon, lat, step, &h));
        assert_int_equal(h.step, step);
        /* the bits are the interleaved fixed-point coordinates */
        double cells = (double)(1ULL << step);
        uint32_t ilat = (uint32_t)((lat - FRI_GEO_LAT_MIN) / (FRI_GEO_LAT_MAX - FRI_GEO_LAT_MIN) *
                                   cells);
        uint32_t ilon = (uint32_t)((lon + 180) / 360.0 * cells);
        assert_int_equal(h.bits, ref_interleave(ilat, ilon));
        /* the cell holds the point, and its centre encodes to the same cell */
        fri_georange lonr = {-180, 180}, latr = {FRI_GEO_LAT_MIN, FRI_GEO_LAT_MAX};
        fri_geoarea a;
        assert_true(fri_geohash_decode(lonr, latr, h, &a));
        assert_true(a.lon.min <= lon && lon <= a.lon.max);
        assert_true(a.lat.min <= lat && lat <= a.lat.max);
        double xy[2];
        assert_true(fri_geohash_decode_wgs84(h, xy));
        fri_geohash back;
        assert_true(fri_geohash_encode_wgs84(xy[0], xy[1], step, &back));
        assert_int_equal(back.bits, h.bits);
    }
    /* outside the limits nothing encodes */
    fri_geohash h;
    assert_false(fri_geohash_encode_wgs84(180.0000001, 0, 26, &h));
    assert_false(fri_geohash_encode_wgs84(0, 85.06, 26, &h));
    assert_false(fri_geohash_encode_wgs84(0, 0, 0, &h));
    assert_false(fri_geohash_encode_wgs84(0, 0, 33, &h));
    /* the top of a range is one past the last cell: Redis's 53rd bit */
    assert_true(fri_geohash_encode_wgs84(180, FRI_GEO_LAT_MAX, 26, &h));
    assert_int_equal(fri_geohash_align52(h), ref_interleave(1u << 26, 1u << 26));
}

/* Redis's GEOADD documentation: Palermo and Catania. */
static void test_documented_example(void **state)
{
    fake_fixture *f = *state;
    assert_int_equal(fake_int_reply(fake_run(f->c, "GEOADD Sicily 13.361389 38.115556 Palermo "
                                                   "15.087269 37.502669 Catania")),
                     2);
    static const fake_case cases[] = {
        {"ZSCORE Sicily Palermo", "$16\r\n3479099956230698\r\n"},
        {"ZSCORE Sicily Catania", "$16\r\n3479447370796909\r\n"},
        {"GEOHASH Sicily Palermo Catania",
         "*2\r\n$11\r\nsqc8b49rny0\r\n$11\r\nsqdtr74hyu0\r\n"},
        {"GEODIST Sicily Palermo Catania", "$11\r\n166274.1516\r\n"},
        {"GEODIST Sicily Palermo Catania km", "$8\r\n166.2742\r\n"},
        {"GEOPOS Sicily Palermo",
         "*1\r\n*2\r\n$20\r\n13.36138933897018433\r\n"
         "$20\r\n38.11555639549629859\r\n"},
    };
    fake_expect(f->c, cases, sizeof(cases) / sizeof(cases[0]));
}

static void test_neighbors(void **state)
{
    (void)state;
    uint64_t s = 2;
    fri_georange lonr = {-180, 180}, latr = {FRI_GEO_LAT_MIN, FRI_GEO_LAT_MAX};
    for (int i = 0; i < 5000; i++) {
        unsigned step = 2 + splitmix64_below(&s, 25);
        fri_geohash h;
        assert_true(fri_geohash_encode_wgs84(uniform(&s, -170, 170), uniform(&s, -80, 80), step,
                                             &h));
        fri_geohash nb[8], back[8];
        fri_geohash_neighbors(h, nb);
        /* north <-> south, east <-> west, NE <-> SW, NW <-> SE */
        static const int opposite[8] = {1, 0, 3, 2, 7, 6, 5, 4};
        fri_geoarea c, a;
        fri_geohash_decode(lonr, latr, h, &c);
        for (int k = 0; k < 8; k++) {
            fri_geohash_neighbors(nb[k], back);
            fri_geoarea n;
            fri_geohash_decode(lonr, latr, nb[k], &n);
            if (n.lat.min <= FRI_GEO_LAT_MIN || n.lat.max >= FRI_GEO_LAT_MAX) continue;
            if (fabs(n.lon.min - c.lon.min) > 180) continue; /* wrapped at the antimeridian */
            assert_int_equal(back[opposite[k]].bits, h.bits);
            /* the neighbour's cell touches the centre's */
            a = n;
            double tol = 1e-9;
            int touch_lon = fabs(a.lon.max - c.lon.min) < tol || fabs(a.lon.min - c.lon.max) < tol ||
                            fabs(a.lon.min - c.lon.min) < tol;
            int touch_lat = fabs(a.lat.max - c.lat.min) < tol || fabs(a.lat.min - c.lat.max) < tol ||
                            fabs(a.lat.min - c.lat.min) < tol;
            assert_true(touch_lon && touch_lat);
        }
    }
}

/* x86-64's double -> uint64 conversion, as the (uint64_t) cast of Redis's decodeGeohash
 * does it there. */
static void test_score_bits(void **state)
{
    (void)state;
    assert_int_equal(fri_geo_score_bits(0), 0);
    assert_int_equal(fri_geo_score_bits(3479099956230698.0), 3479099956230698ULL);
    assert_int_equal(fri_geo_score_bits(-1), UINT64_MAX);
    assert_int_equal(fri_geo_score_bits(-5.5), (uint64_t)-5);
    assert_int_equal(fri_geo_score_bits(1.5), 1);
    assert_int_equal(fri_geo_score_bits(9223372036854775808.0), 1ULL << 63);
    assert_int_equal(fri_geo_score_bits(1.8e19), 18000000000000000000ULL);
    assert_int_equal(fri_geo_score_bits(1.9e19), 0);            /* past 2^64 */
    assert_int_equal(fri_geo_score_bits(INFINITY), 0);
    assert_int_equal(fri_geo_score_bits(-INFINITY), 1ULL << 63);
    assert_int_equal(fri_geo_score_bits(-1e30), 1ULL << 63);
    assert_int_equal(fri_geo_score_bits(-9223372036854775808.0), 1ULL << 63);
    uint64_t s = 3;
    for (int i = 0; i < 10000; i++) {
        double xy[2];
        double score = uniform(&s, -2e19, 2e19);
        assert_true(fri_geo_decode_score(score, xy));
        assert_true(xy[0] >= -180 && xy[0] <= 180);
        assert_true(xy[1] >= FRI_GEO_LAT_MIN && xy[1] <= FRI_GEO_LAT_MAX);
    }
}

static void test_estimate_step(void **state)
{
    (void)state;
    assert_int_equal(fri_geo_estimate_step(0, 0), 26);
    assert_int_equal(fri_geo_estimate_step(1e9, 0), 1);
    unsigned prev = 26;
    for (double r = 0.5; r < 4e7; r *= 1.7) {
        unsigned st = fri_geo_estimate_step(r, 10);
        assert_true(st <= prev && st >= 1);
        assert_true(fri_geo_estimate_step(r, 85) <= st); /* coarser near the poles */
        prev = st;
    }
}

/* ----- Searches against brute force -------------------------------------------------------- */

#define SEARCH_MEMBERS 60

typedef struct member {
    double lon, lat;
} member;

/* The fake's reply as a sorted list of member indexes (members are named m<i>). */
static int reply_members(const fr_reply *r, int *out)
{
    assert_int_equal(r->type, FR_REPLY_ARRAY);
    for (size_t i = 0; i < r->count; i++) {
        const fr_reply *e = &r->elements[i];
        if (e->type == FR_REPLY_ARRAY) e = &e->elements[0];
        assert_int_equal(e->type, FR_REPLY_BULK);
        out[i] = atoi(e->str + 1);
    }
    return (int)r->count;
}

static int cmp_int(const void *a, const void *b) { return *(const int *)a - *(const int *)b; }

static void test_search_matches_brute_force(void **state)
{
    fake_fixture *f = *state;
    uint64_t s = 4;
    for (int round = 0; round < 300; round++) {
        fake_run(f->c, "DEL g");
        double clon = uniform(&s, -179, 179), clat = uniform(&s, -80, 80);
        double spread = 0.05 + uniform(&s, 0, 3);
        member m[SEARCH_MEMBERS];
        for (int i = 0; i < SEARCH_MEMBERS; i++) {
            double lon = clon + uniform(&s, -spread, spread);
            double lat = clat + uniform(&s, -spread, spread);
            if (lon > 180) lon -= 360;
            if (lon < -180) lon += 360;
            if (lat > 85) lat = 85;
            if (lat < -85) lat = -85;
            fake_int_reply(fake_run(f->c, "GEOADD g %.9f %.9f m%d", lon, lat, i));
            /* what Redis stores: the cell's centre */
            fri_geohash h;
            fri_geohash_encode_wgs84(lon, lat, FRI_GEO_STEP_MAX, &h);
            double xy[2];
            fri_geo_decode_score((double)fri_geohash_align52(h), xy);
            m[i].lon = xy[0];
            m[i].lat = xy[1];
        }
        double radius_km = uniform(&s, 0.5, spread * 150);
        double w_km = uniform(&s, 1, spread * 250), h_km = uniform(&s, 1, spread * 250);
        fri_geoshape circle = {.type = FRI_GEO_CIRCLE, .xy = {clon, clat}, .conversion = 1000,
                               .radius = radius_km};
        fri_geoshape box = {.type = FRI_GEO_BOX, .xy = {clon, clat}, .conversion = 1000,
                            .width = w_km, .height = h_km};
        for (int b = 0; b < 2; b++) {
            const fri_geoshape *shape = b ? &box : &circle;
            int want[SEARCH_MEMBERS], nwant = 0;
            for (int i = 0; i < SEARCH_MEMBERS; i++) {
                fri_geohash h;
                fri_geohash_encode_wgs84(m[i].lon, m[i].lat, FRI_GEO_STEP_MAX, &h);
                double xy[2], d;
                if (fri_geo_within_shape(shape, (double)fri_geohash_align52(h), xy, &d))
                    want[nwant++] = i;
            }
            const fr_reply *r =
                b ? fake_run(f->c, "GEOSEARCH g FROMLONLAT %.17g %.17g BYBOX %.17g %.17g km",
                             clon, clat, w_km, h_km)
                  : fake_run(f->c, "GEOSEARCH g FROMLONLAT %.17g %.17g BYRADIUS %.17g km",
                             clon, clat, radius_km);
            int got[SEARCH_MEMBERS];
            int ngot = reply_members(r, got);
            qsort(got, (size_t)ngot, sizeof(int), cmp_int);
            if (ngot != nwant || memcmp(got, want, sizeof(int) * (size_t)nwant) != 0) {
                fprintf(stderr, "round %d shape %d: %d found, %d inside\n", round, b, ngot,
                        nwant);
                fail();
            }
        }
    }
}

/* Distances of a WITHDIST reply, in order. */
static int reply_dists(const fr_reply *r, double *out)
{
    assert_int_equal(r->type, FR_REPLY_ARRAY);
    for (size_t i = 0; i < r->count; i++) out[i] = strtod(r->elements[i].elements[1].str, NULL);
    return (int)r->count;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static void test_sorted_and_count(void **state)
{
    fake_fixture *f = *state;
    uint64_t s = 5;
    for (int round = 0; round < 100; round++) {
        fake_run(f->c, "DEL g");
        int n = 1 + (int)splitmix64_below(&s, 150);
        for (int i = 0; i < n; i++) {
            /* few distinct places: many ties */
            int place = (int)splitmix64_below(&s, 6);
            fake_int_reply(fake_run(f->c, "GEOADD g %d.%d 45.%d m%d", 10 + place, place, place, i));
        }
        double all[200], part[200];
        int nall = reply_dists(fake_run(f->c, "GEOSEARCH g FROMLONLAT 10 45 BYRADIUS 2000 km "
                                              "ASC WITHDIST"),
                               all);
        assert_int_equal(nall, n);
        for (int i = 1; i < nall; i++) assert_true(all[i - 1] <= all[i]);
        int count = 1 + (int)splitmix64_below(&s, (unsigned)n + 5);
        int npart = reply_dists(fake_run(f->c, "GEOSEARCH g FROMLONLAT 10 45 BYRADIUS 2000 km "
                                               "COUNT %d WITHDIST DESC", count),
                                part);
        assert_int_equal(npart, count < n ? count : n);
        for (int i = 1; i < npart; i++) assert_true(part[i - 1] >= part[i]);
        qsort(part, (size_t)npart, sizeof(double), cmp_double);
        /* the largest npart distances */
        assert_memory_equal(part, all + (nall - npart), sizeof(double) * (size_t)npart);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_encode_decode_roundtrip),
        TEST(test_documented_example),
        cmocka_unit_test(test_neighbors),
        cmocka_unit_test(test_score_bits),
        cmocka_unit_test(test_estimate_step),
        TEST(test_search_matches_brute_force),
        TEST(test_sorted_and_count),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
