/* t_geo.c -- the GEO commands of Redis 7.0: GEOADD, GEODIST, GEOHASH, GEOPOS, GEORADIUS
 * (and its _RO and BYMEMBER forms), GEOSEARCH and GEOSEARCHSTORE.
 *
 * A geo set is a sorted set whose scores are 52-bit geohashes (geohash.c); GEOADD is ZADD
 * with the coordinates turned into scores, as Redis runs it, so its reply, its encoding
 * rules and its "zadd" notification are ZADD's.  A search looks in the nine cells Redis
 * picks, in Redis's order, each a range of scores walked in (score, member) order; the
 * matches are then sorted by distance the way redis-server sorts them: glibc's qsort (a
 * stable merge sort) for a full sort, Redis's own partial quicksort (pqsort.c, which
 * leaves ties in its own order) when COUNT keeps fewer than were found.  Distances are
 * answered with 4 decimals (fixedpoint_d2string), coordinates in Redis's long double human
 * form.  Every handler checks its arguments in Redis's order, so a command with two faults
 * answers the same error.
 */
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fr_int.h"
#include "geohash.h"
#include "zskiplist.h"

#define GEO_ERR_MEMBER "ERR could not decode requested zset member"

/* ----- Arguments ------------------------------------------------------------------------ */

/* A longitude and a latitude at argv[0..1] within the WGS84 limits; 0, or -1 answered. */
static int lonlat_or_reply(fr_client *c, const fri_arg *argv, double *xy)
{
    for (int i = 0; i < 2; i++)
        if (fri_get_double_or_reply(c, &argv[i], &xy[i], NULL) < 0) return -1;
    if (xy[0] < FRI_GEO_LONG_MIN || xy[0] > FRI_GEO_LONG_MAX || xy[1] < FRI_GEO_LAT_MIN ||
        xy[1] > FRI_GEO_LAT_MAX) {
        fri_reply_errorf(c, "ERR invalid longitude,latitude pair %f,%f", xy[0], xy[1]);
        return -1;
    }
    return 0;
}

/* *to_meter gets the metres per unit (m, km, ft, mi, compared as C strings like Redis's
 * strcasecmp): 0, or -1 answered. */
static int unit_or_reply(fr_client *c, const fri_arg *a, double *to_meter)
{
    static const struct {
        const char *name;
        double metres;
    } units[] = {{"m", 1}, {"km", 1000}, {"ft", 0.3048}, {"mi", 1609.34}};
    for (size_t i = 0; i < sizeof(units) / sizeof(units[0]); i++) {
        if (fri_arg_is_cstr(a, units[i].name)) {
            *to_meter = units[i].metres;
            return 0;
        }
    }
    fri_reply_error(c, "ERR unsupported unit provided. please use M, KM, FT, MI");
    return -1;
}

/* <radius> <unit>: 0, or -1 answered. */
static int radius_or_reply(fr_client *c, const fri_arg *argv, fri_geoshape *s)
{
    double r;
    if (fri_get_double_or_reply(c, &argv[0], &r, "ERR need numeric radius") < 0) return -1;
    if (r < 0) {
        fri_reply_error(c, "ERR radius cannot be negative");
        return -1;
    }
    s->radius = r;
    return unit_or_reply(c, &argv[1], &s->conversion);
}

/* <width> <height> <unit>: 0, or -1 answered. */
static int box_or_reply(fr_client *c, const fri_arg *argv, fri_geoshape *s)
{
    double w, h;
    if (fri_get_double_or_reply(c, &argv[0], &w, "ERR need numeric width") < 0 ||
        fri_get_double_or_reply(c, &argv[1], &h, "ERR need numeric height") < 0)
        return -1;
    if (h < 0 || w < 0) {
        fri_reply_error(c, "ERR height or width cannot be negative");
        return -1;
    }
    s->width = w;
    s->height = h;
    return unit_or_reply(c, &argv[2], &s->conversion);
}

/* A member's position: 1, or 0 when it is not in the set. */
static int member_position(fri_zset *z, const fri_arg *member, double *xy)
{
    double score;
    if (!fri_zset_score(z, member->ptr, member->len, &score)) return 0;
    return fri_geo_decode_score(score, xy);
}

/* ----- Replies ---------------------------------------------------------------------------- */

/* Redis's fixedpoint_d2string(..., 4): the value rounded (llrint) to 1/10000, written
 * with exactly 4 decimals; 0 and -0 are "0.0000", and a value llrint cannot hold (NaN,
 * infinities, past 9.2e14) comes out as LLONG_MIN does on x86-64. */
static void reply_distance(fr_client *c, double d)
{
    char buf[64];
    if (d == 0) {
        fri_reply_bulk(c, "0.0000", 6);
        return;
    }
    double scaled = d * 10000.0;
    long long sv = scaled >= -9223372036854775808.0 && scaled < 9223372036854775808.0
                       ? llrint(scaled) : LLONG_MIN;
    unsigned long long v = sv < 0 ? (sv == LLONG_MIN ? (unsigned long long)LLONG_MAX + 1
                                                     : (unsigned long long)-sv)
                                  : (unsigned long long)sv;
    int n = snprintf(buf, sizeof(buf), "%s%llu.%04llu", sv < 0 ? "-" : "", v / 10000,
                     v % 10000);
    fri_reply_bulk(c, buf, (size_t)n);
}

/* A coordinate as addReplyHumanLongDouble writes it. */
static void reply_coord(fr_client *c, double d)
{
    char buf[128];
    size_t n = fri_ld2string(buf, sizeof(buf), (long double)d);
    fri_reply_bulk(c, buf, n);
}

/* ----- GEOADD ----------------------------------------------------------------------------- */

/* GEOADD key [NX|XX] [CH] lon lat member ...: checked here (options, then every pair in
 * order), then run as ZADD key [options] score member ... on the same client, as Redis
 * replaces the command vector and calls zaddCommand. */
static void geoadd_command(fr_client *c)
{
    int nx = 0, xx = 0, longidx = 2;
    while (longidx < c->argc) {
        const fri_arg *opt = &c->argv[longidx];
        if (fri_arg_is_cstr(opt, "nx")) nx = 1;
        else if (fri_arg_is_cstr(opt, "xx")) xx = 1;
        else if (!fri_arg_is_cstr(opt, "ch")) break;
        longidx++;
    }
    if ((c->argc - longidx) % 3 || (xx && nx)) {
        fri_reply_error(c, FRI_ERR_SYNTAX);
        return;
    }
    int elements = (c->argc - longidx) / 3;
    int argc = longidx + elements * 2;
    fri_arg *argv = fri_malloc(sizeof(fri_arg) * (size_t)argc);
    char(*scores)[24] = fri_malloc(sizeof(*scores) * (size_t)(elements ? elements : 1));
    if (!argv || !scores) {
        fri_free(argv);
        fri_free(scores);
        fri_reply_error(c, FRI_ERR_OOM);
        return;
    }
    argv[0] = (fri_arg){"zadd", 4};
    argv[1] = c->argv[1];
    /* the options as words ZADD reads the same way ("nx\0..." counts as NX here) */
    for (int i = 2; i < longidx; i++) {
        const fri_arg *opt = &c->argv[i];
        argv[i] = fri_arg_is_cstr(opt, "nx")   ? (fri_arg){"nx", 2}
                  : fri_arg_is_cstr(opt, "xx") ? (fri_arg){"xx", 2}
                                               : (fri_arg){"ch", 2};
    }
    for (int i = 0; i < elements; i++) {
        double xy[2];
        if (lonlat_or_reply(c, &c->argv[longidx + i * 3], xy) < 0) goto done;
        fri_geohash h;
        fri_geohash_encode_wgs84(xy[0], xy[1], FRI_GEO_STEP_MAX, &h);
        size_t n = fri_ull2string(scores[i], sizeof(scores[i]), fri_geohash_align52(h));
        argv[longidx + i * 2] = (fri_arg){scores[i], n};
        argv[longidx + i * 2 + 1] = c->argv[longidx + i * 3 + 2];
    }
    {
        int saved_argc = c->argc;
        fri_arg *saved_argv = c->argv;
        c->argc = argc;
        c->argv = argv;
        fri_zadd_command(c);
        c->argc = saved_argc;
        c->argv = saved_argv;
        /* propagated as that ZADD (replaceClientCommandVector), its options as sent */
        for (int i = 2; i < longidx; i++) argv[i] = c->argv[i];
        argv[0] = (fri_arg){"zadd", 4};
        fri_propagate_rewrite(c, argc, argv);
    }
done:
    fri_free(argv);
    fri_free(scores);
}

/* ----- GEOHASH, GEOPOS, GEODIST ----------------------------------------------------------- */

/* The zset at argv[1] for reading: NULL with *answered set after WRONGTYPE. */
static fri_zset *read_geo(fr_client *c, int idx, int *answered)
{
    fri_obj *o = fri_lookup_typed(c, &c->argv[idx], FRI_ZSET, 0, answered);
    return o ? o->ptr : NULL;
}

/* GEOHASH and GEOPOS key member ...: one element per member, by found(c, xy) for a member
 * at xy, by missing(c) for one that is not there (or when the key is missing). */
static void reply_member_positions(fr_client *c, void (*found)(fr_client *c, const double *xy),
                                   void (*missing)(fr_client *c))
{
    int answered;
    fri_zset *z = read_geo(c, 1, &answered);
    if (answered) return;
    fri_reply_array_len(c, c->argc - 2);
    for (int j = 2; j < c->argc; j++) {
        double xy[2];
        if (z && member_position(z, &c->argv[j], xy)) found(c, xy);
        else missing(c);
    }
}

/* The standard 11-character geohash of xy (decoded, then encoded again over latitudes
 * -90..90; the 11th character is always '0'). */
static void reply_geohash(fr_client *c, const double *xy)
{
    static const char alphabet[] = "0123456789bcdefghjkmnpqrstuvwxyz";
    fri_georange lon = {-180, 180}, lat = {-90, 90};
    fri_geohash h = {0, 0};
    fri_geohash_encode(lon, lat, xy[0], xy[1], 26, &h);
    char buf[11];
    for (int i = 0; i < 11; i++)
        buf[i] = i == 10 ? alphabet[0] : alphabet[(h.bits >> (52 - (i + 1) * 5)) & 0x1f];
    fri_reply_bulk(c, buf, 11);
}

/* [longitude, latitude]. */
static void reply_lonlat(fr_client *c, const double *xy)
{
    fri_reply_array_len(c, 2);
    reply_coord(c, xy[0]);
    reply_coord(c, xy[1]);
}

/* GEOHASH key member ...: each member's geohash, or nil. */
static void geohash_command(fr_client *c)
{
    reply_member_positions(c, reply_geohash, fri_reply_nil);
}

/* GEOPOS key member ...: [longitude, latitude] of each member, or a null array. */
static void geopos_command(fr_client *c)
{
    reply_member_positions(c, reply_lonlat, fri_reply_null_array);
}

/* GEODIST key m1 m2 [unit]: the unit is checked before the key is read; nil when the key
 * or either member is missing. */
static void geodist_command(fr_client *c)
{
    double to_meter = 1;
    if (c->argc == 5) {
        if (unit_or_reply(c, &c->argv[4], &to_meter) < 0) return;
    } else if (c->argc > 5) {
        fri_reply_error(c, FRI_ERR_SYNTAX);
        return;
    }
    int answered;
    fri_zset *z = read_geo(c, 1, &answered);
    if (answered) return;
    double a[2], b[2];
    if (!z || !member_position(z, &c->argv[2], a) || !member_position(z, &c->argv[3], b)) {
        fri_reply_nil(c);
        return;
    }
    reply_distance(c, fri_geo_distance(a[0], a[1], b[0], b[1]) / to_meter);
}

/* ----- Searches ----------------------------------------------------------------------------- */

typedef struct geo_point {
    double lon, lat;    /* decoded from the score */
    double dist;        /* from the centre, metres (then in the unit asked) */
    double score;
    const char *member; /* the set's own bytes: valid while the command runs */
    size_t len;
} geo_point;

typedef struct geo_points {
    geo_point *p;
    size_t used, cap;
    int oom;
} geo_points;

static void points_add(geo_points *ga, const double *xy, double dist, const fri_zsl_node *n)
{
    if (ga->used == ga->cap) {
        size_t cap = ga->cap ? ga->cap * 2 : 8;
        geo_point *p = fri_realloc(ga->p, cap * sizeof(*p));
        if (!p) {
            ga->oom = 1;
            return;
        }
        ga->p = p;
        ga->cap = cap;
    }
    ga->p[ga->used++] = (geo_point){xy[0], xy[1], dist, n->score, n->ele, n->len};
}

/* The members whose scores lie in [min, max) and that are in the shape, appended in set
 * order; stops once `limit` (0: none) points are held. */
static void points_in_range(fri_zsl *zsl, double min, double max, const fri_geoshape *s,
                            geo_points *ga, unsigned long limit)
{
    fri_zrangespec range = {min, max, 0, 1};
    for (fri_zsl_node *n = fri_zsl_first_in_range(zsl, &range); n; n = n->level[0].forward) {
        if (!fri_zsl_value_lte_max(n->score, &range)) break;
        double xy[2], dist = 0;
        if (fri_geo_within_shape(s, n->score, xy, &dist)) points_add(ga, xy, dist, n);
        if (ga->used && limit && ga->used >= limit) break;
    }
}

/* The nine cells in Redis's order; a cell equal to the last one searched is skipped (as
 * Redis compares it: never against the centre, its "last" marker starting at 0). */
static void points_in_cells(fri_zsl *zsl, const fri_geohash *cells, const fri_geoshape *s,
                            geo_points *ga, unsigned long limit)
{
    unsigned last = 0;
    for (unsigned i = 0; i < FRI_GEO_CELLS; i++) {
        if (cells[i].bits == 0 && cells[i].step == 0) continue;
        if (last && cells[i].bits == cells[last].bits && cells[i].step == cells[last].step)
            continue;
        if (ga->used && limit && ga->used >= limit) break;
        fri_geohash h = cells[i];
        uint64_t min = fri_geohash_align52(h);
        h.bits++;
        uint64_t max = fri_geohash_align52(h);
        points_in_range(zsl, (double)min, (double)max, s, ga, limit);
        last = i;
    }
}

/* Redis's comparators: by distance, NaN never equal nor greater. */
static int cmp_asc(const geo_point *a, const geo_point *b)
{
    if (a->dist > b->dist) return 1;
    if (a->dist == b->dist) return 0;
    return -1;
}

static int cmp_desc(const geo_point *a, const geo_point *b) { return -cmp_asc(a, b); }

typedef int geo_cmp(const geo_point *a, const geo_point *b);

/* glibc's qsort, as redis-server 7.0.15 on glibc runs it: a top-down merge sort (first
 * half n/2), taking from the left on ties, so equal distances keep their order. */
static void merge_sort(geo_point *a, geo_point *tmp, size_t n, geo_cmp *cmp)
{
    if (n <= 1) return;
    size_t n1 = n / 2, n2 = n - n1;
    merge_sort(a, tmp, n1, cmp);
    merge_sort(a + n1, tmp, n2, cmp);
    size_t i = 0, j = n1, k = 0;
    while (i < n1 && j < n) tmp[k++] = cmp(&a[i], &a[j]) <= 0 ? a[i++] : a[j++];
    while (i < n1) tmp[k++] = a[i++];
    memcpy(a, tmp, k * sizeof(*a)); /* the rest of the right half is in place */
}

static void swap_pt(geo_point *a, size_t i, size_t j)
{
    geo_point t = a[i];
    a[i] = a[j];
    a[j] = t;
}

static void vecswap_pt(geo_point *a, size_t i, size_t j, size_t n)
{
    for (size_t k = 0; k < n; k++) swap_pt(a, i + k, j + k);
}

static size_t med3(geo_point *a, size_t i, size_t j, size_t k, geo_cmp *cmp)
{
    return cmp(&a[i], &a[j]) < 0
               ? (cmp(&a[j], &a[k]) < 0 ? j : (cmp(&a[i], &a[k]) < 0 ? k : i))
               : (cmp(&a[j], &a[k]) > 0 ? j : (cmp(&a[i], &a[k]) < 0 ? i : k));
}

/* Redis's pqsort (Bentley & McIlroy's quicksort that only sorts the parts meeting
 * positions lo..hi) on a[s .. s+n), in the same steps, so ties end where Redis puts
 * them.  Indexes instead of byte pointers. */
static void partial_sort(geo_point *a, size_t s, size_t n, geo_cmp *cmp, size_t lo, size_t hi)
{
    for (;;) {
        if (n < 7) {
            for (size_t m = s + 1; m < s + n; m++)
                for (size_t l = m; l > s && cmp(&a[l - 1], &a[l]) > 0; l--) swap_pt(a, l, l - 1);
            return;
        }
        size_t pm = s + n / 2;
        if (n > 7) {
            size_t pl = s, pn = s + n - 1;
            if (n > 40) {
                size_t d = n / 8;
                pl = med3(a, pl, pl + d, pl + 2 * d, cmp);
                pm = med3(a, pm - d, pm, pm + d, cmp);
                pn = med3(a, pn - 2 * d, pn - d, pn, cmp);
            }
            pm = med3(a, pl, pm, pn, cmp);
        }
        swap_pt(a, s, pm);
        size_t pa = s + 1, pb = s + 1, pc = s + n - 1, pd = s + n - 1;
        for (;;) {
            int r;
            while (pb <= pc && (r = cmp(&a[pb], &a[s])) <= 0) {
                if (r == 0) swap_pt(a, pa++, pb);
                pb++;
            }
            while (pb <= pc && (r = cmp(&a[pc], &a[s])) >= 0) {
                if (r == 0) swap_pt(a, pc, pd--);
                pc--;
            }
            if (pb > pc) break;
            swap_pt(a, pb++, pc--);
        }
        size_t pn = s + n;
        size_t r = pa - s < pb - pa ? pa - s : pb - pa;
        vecswap_pt(a, s, pb - r, r);
        r = pd - pc < pn - pd - 1 ? pd - pc : pn - pd - 1;
        vecswap_pt(a, pb, pn - r, r);
        if ((r = pb - pa) > 1) {
            if (!((lo < s && hi < s) || (lo >= s + r && hi >= s + r)))
                partial_sort(a, s, r, cmp, lo, hi);
        }
        if ((r = pd - pc) <= 1) return;
        s = pn - r;
        n = r;
        if ((lo < s && hi < s) || (lo >= s + r && hi >= s + r)) return;
    }
}

#define SORT_NONE 0
#define SORT_ASC 1
#define SORT_DESC 2

#define RADIUS_COORDS (1 << 0)  /* GEORADIUS: around coordinates */
#define RADIUS_MEMBER (1 << 1)  /* GEORADIUSBYMEMBER: around a member */
#define RADIUS_NOSTORE (1 << 2) /* the _RO forms: no STORE / STOREDIST */
#define GEOSEARCH (1 << 3)      /* GEOSEARCH's arguments */
#define GEOSEARCHSTORE (1 << 4) /* ... with a destination and STOREDIST */

/* Deletes the destination of an empty stored search, as Redis's dbDelete does (no lookup
 * first: a key past its TTL still counts). */
static void delete_store_key(fr_client *c, const fri_arg *key)
{
    if (fri_db_delete(c->db, key->ptr, key->len)) {
        fri_signal_modified(c, c->db, key->ptr, key->len);
        fri_notify_key(c, FR_NOTIFY_GENERIC, "del", key);
    }
}

/* georadiusGeneric: every search command, src_idx being the source key's position. */
static void georadius_generic(fr_client *c, int src_idx, int flags)
{
    const fri_arg *storekey = NULL;
    int storedist = 0;
    int answered;
    fri_zset *z = read_geo(c, src_idx, &answered);
    if (answered) return;

    int base;
    fri_geoshape shape;
    memset(&shape, 0, sizeof(shape));
    if (flags & RADIUS_COORDS) {
        base = 6;
        shape.type = FRI_GEO_CIRCLE;
        if (lonlat_or_reply(c, &c->argv[2], shape.xy) < 0) return;
        if (radius_or_reply(c, &c->argv[base - 2], &shape) < 0) return;
    } else if ((flags & RADIUS_MEMBER) && !z) {
        base = 5; /* no source: the options still decide which empty reply */
    } else if (flags & RADIUS_MEMBER) {
        base = 5;
        shape.type = FRI_GEO_CIRCLE;
        if (!member_position(z, &c->argv[2], shape.xy)) {
            fri_reply_error(c, GEO_ERR_MEMBER);
            return;
        }
        if (radius_or_reply(c, &c->argv[base - 2], &shape) < 0) return;
    } else {
        base = 2;
        if (flags & GEOSEARCHSTORE) {
            base = 3;
            storekey = &c->argv[1];
        }
    }

    int withdist = 0, withhash = 0, withcoords = 0;
    int frommember = 0, fromloc = 0, byradius = 0, bybox = 0;
    int sort = SORT_NONE, any = 0;
    long long count = 0;
    int remaining = c->argc - base;
    for (int i = 0; i < remaining; i++) {
        const fri_arg *arg = &c->argv[base + i];
        if (fri_arg_is_cstr(arg, "withdist")) {
            withdist = 1;
        } else if (fri_arg_is_cstr(arg, "withhash")) {
            withhash = 1;
        } else if (fri_arg_is_cstr(arg, "withcoord")) {
            withcoords = 1;
        } else if (fri_arg_is_cstr(arg, "any")) {
            any = 1;
        } else if (fri_arg_is_cstr(arg, "asc")) {
            sort = SORT_ASC;
        } else if (fri_arg_is_cstr(arg, "desc")) {
            sort = SORT_DESC;
        } else if (fri_arg_is_cstr(arg, "count") && i + 1 < remaining) {
            if (fri_get_ll_or_reply(c, &c->argv[base + i + 1], &count, NULL) < 0) return;
            if (count <= 0) {
                fri_reply_error(c, "ERR COUNT must be > 0");
                return;
            }
            i++;
        } else if (fri_arg_is_cstr(arg, "store") && i + 1 < remaining &&
                   !(flags & RADIUS_NOSTORE) && !(flags & GEOSEARCH)) {
            storekey = &c->argv[base + i + 1];
            storedist = 0;
            i++;
        } else if (fri_arg_is_cstr(arg, "storedist") && i + 1 < remaining &&
                   !(flags & RADIUS_NOSTORE) && !(flags & GEOSEARCH)) {
            storekey = &c->argv[base + i + 1];
            storedist = 1;
            i++;
        } else if (fri_arg_is_cstr(arg, "storedist") && (flags & GEOSEARCH) &&
                   (flags & GEOSEARCHSTORE)) {
            storedist = 1;
        } else if (fri_arg_is_cstr(arg, "frommember") && i + 1 < remaining &&
                   (flags & GEOSEARCH) && !fromloc) {
            if (z && !member_position(z, &c->argv[base + i + 1], shape.xy)) {
                fri_reply_error(c, GEO_ERR_MEMBER);
                return;
            }
            frommember = 1;
            i++;
        } else if (fri_arg_is_cstr(arg, "fromlonlat") && i + 2 < remaining &&
                   (flags & GEOSEARCH) && !frommember) {
            if (lonlat_or_reply(c, &c->argv[base + i + 1], shape.xy) < 0) return;
            fromloc = 1;
            i += 2;
        } else if (fri_arg_is_cstr(arg, "byradius") && i + 2 < remaining &&
                   (flags & GEOSEARCH) && !bybox) {
            if (radius_or_reply(c, &c->argv[base + i + 1], &shape) < 0) return;
            shape.type = FRI_GEO_CIRCLE;
            byradius = 1;
            i += 2;
        } else if (fri_arg_is_cstr(arg, "bybox") && i + 3 < remaining &&
                   (flags & GEOSEARCH) && !byradius) {
            if (box_or_reply(c, &c->argv[base + i + 1], &shape) < 0) return;
            shape.type = FRI_GEO_BOX;
            bybox = 1;
            i += 3;
        } else {
            fri_reply_error(c, FRI_ERR_SYNTAX);
            return;
        }
    }

    if (storekey && (withdist || withhash || withcoords)) {
        fri_reply_errorf(c, "ERR %s is not compatible with WITHDIST, WITHHASH and WITHCOORD "
                            "options",
                         (flags & GEOSEARCHSTORE) ? "GEOSEARCHSTORE"
                                                  : "STORE option in GEORADIUS");
        return;
    }
    /* the command name as typed, up to a NUL (Redis prints argv[0] with %s) */
    int namelen = (int)strnlen(c->argv[0].ptr, c->argv[0].len);
    if ((flags & GEOSEARCH) && !(frommember || fromloc)) {
        fri_reply_errorf(c, "ERR exactly one of FROMMEMBER or FROMLONLAT can be specified "
                            "for %.*s", namelen, c->argv[0].ptr);
        return;
    }
    if ((flags & GEOSEARCH) && !(byradius || bybox)) {
        fri_reply_errorf(c, "ERR exactly one of BYRADIUS and BYBOX can be specified for %.*s",
                         namelen, c->argv[0].ptr);
        return;
    }
    if (any && !count) {
        fri_reply_error(c, "ERR the ANY argument requires COUNT argument");
        return;
    }

    if (!z) {
        if (storekey) {
            delete_store_key(c, storekey);
            fri_reply_ll(c, 0);
        } else {
            fri_reply_empty_array(c);
        }
        return;
    }

    /* COUNT alone sorts (the nearest N), unless ANY asked for any N */
    if (count != 0 && sort == SORT_NONE && !any) sort = SORT_ASC;

    fri_geohash cells[FRI_GEO_CELLS];
    fri_geo_search_cells(&shape, cells);
    geo_points ga = {NULL, 0, 0, 0};
    points_in_cells(fri_zset_zsl(z), cells, &shape, &ga, any ? (unsigned long)count : 0);
    if (ga.oom) {
        fri_free(ga.p);
        fri_reply_error(c, FRI_ERR_OOM);
        return;
    }
    if (ga.used == 0 && !storekey) {
        fri_reply_empty_array(c);
        return;
    }

    size_t result_length = ga.used;
    size_t returned = (count == 0 || (long long)result_length < count) ? result_length
                                                                        : (size_t)count;
    if (sort != SORT_NONE) {
        geo_cmp *cmp = sort == SORT_ASC ? cmp_asc : cmp_desc;
        if (returned == result_length) {
            geo_point *tmp = fri_malloc(result_length * sizeof(*tmp));
            if (!tmp) {
                fri_free(ga.p);
                fri_reply_error(c, FRI_ERR_OOM);
                return;
            }
            merge_sort(ga.p, tmp, result_length, cmp);
            fri_free(tmp);
        } else {
            partial_sort(ga.p, 0, result_length, cmp, 0, returned - 1);
        }
    }

    if (!storekey) {
        long options = withdist + withcoords + withhash;
        fri_reply_array_len(c, (long)returned);
        for (size_t i = 0; i < returned; i++) {
            geo_point *gp = &ga.p[i];
            gp->dist /= shape.conversion;
            if (options) fri_reply_array_len(c, options + 1);
            fri_reply_bulk(c, gp->member, gp->len);
            if (withdist) reply_distance(c, gp->dist);
            if (withhash) fri_reply_ll(c, (long long)gp->score);
            if (withcoords) {
                fri_reply_array_len(c, 2);
                reply_coord(c, gp->lon);
                reply_coord(c, gp->lat);
            }
        }
        fri_free(ga.p);
        return;
    }

    if (returned) {
        /* a skiplist made listpack when small enough (zsetConvertToListpackIfNeeded) */
        size_t maxelelen = 0;
        for (size_t i = 0; i < returned; i++)
            if (ga.p[i].len > maxelelen) maxelelen = ga.p[i].len;
        const fri_tunables *t = &c->srv->tun;
        int listpack = (long long)returned <= t->zset_max_listpack_entries &&
                       (long long)maxelelen <= t->zset_max_listpack_value;
        fri_zset *dst = fri_zset_restore_new(listpack, t);
        fri_obj *o = dst ? fri_obj_new(FRI_ZSET, dst) : NULL;
        if (dst && !o) fri_zset_free(dst);
        for (size_t i = 0; o && i < returned; i++) {
            geo_point *gp = &ga.p[i];
            gp->dist /= shape.conversion;
            if (fri_zset_restore_add(dst, storedist ? gp->dist : gp->score, gp->member,
                                     gp->len) < 0) {
                fri_obj_free(o); /* and its set */
                o = NULL;
            }
        }
        fri_free(ga.p);
        if (!o) {
            fri_reply_error(c, FRI_ERR_OOM);
            return;
        }
        fri_lookup_write(c, storekey); /* an expired destination goes first, as in setKey */
        fri_db_set(c->db, storekey->ptr, storekey->len, o, 0);
        fri_signal_modified(c, c->db, storekey->ptr, storekey->len);
        fri_notify_key(c, FR_NOTIFY_ZSET,
                       (flags & GEOSEARCH) ? "geosearchstore" : "georadiusstore", storekey);
    } else {
        fri_free(ga.p);
        delete_store_key(c, storekey);
    }
    fri_reply_ll(c, (long long)returned);
}

static void georadius_command(fr_client *c) { georadius_generic(c, 1, RADIUS_COORDS); }
static void georadiusbymember_command(fr_client *c) { georadius_generic(c, 1, RADIUS_MEMBER); }
static void georadiusro_command(fr_client *c)
{
    georadius_generic(c, 1, RADIUS_COORDS | RADIUS_NOSTORE);
}
static void georadiusbymemberro_command(fr_client *c)
{
    georadius_generic(c, 1, RADIUS_MEMBER | RADIUS_NOSTORE);
}
static void geosearch_command(fr_client *c) { georadius_generic(c, 1, GEOSEARCH); }
static void geosearchstore_command(fr_client *c)
{
    georadius_generic(c, 2, GEOSEARCH | GEOSEARCHSTORE);
}

/* GEORADIUS[BYMEMBER]'s keys: the source and the last STORE / STOREDIST destination
 * (Redis's georadiusGetKeys, which looks from the sixth argument on). */
static int georadiusKeys(int argc, const fri_arg *argv, int *keys, int max)
{
    int n = 0, stored = -1;
    for (int i = 5; i < argc; i++) {
        if ((fri_arg_is_cstr(&argv[i], "store") || fri_arg_is_cstr(&argv[i], "storedist")) &&
            i + 1 < argc) {
            stored = i + 1;
            i++;
        }
    }
    if (n < max) keys[n++] = 1;
    if (stored > 0 && n < max) keys[n++] = stored;
    return n;
}

/* ----- The command table ---------------------------------------------------------------- */

#include "cmd_flags.h"

/* Arity, flags and key positions as Redis 7.0's COMMAND INFO gives them. */
const fri_command fri_geo_commands[] = {
    {"geoadd", geoadd_command, -5, W | M, "geo", 1, 1, 1, NULL, NULL},
    {"geodist", geodist_command, -4, R, "geo", 1, 1, 1, NULL, NULL},
    {"geohash", geohash_command, -2, R, "geo", 1, 1, 1, NULL, NULL},
    {"geopos", geopos_command, -2, R, "geo", 1, 1, 1, NULL, NULL},
    {"georadius", georadius_command, -6, W | M, "geo", 1, 1, 1, georadiusKeys, NULL},
    {"georadius_ro", georadiusro_command, -6, R, "geo", 1, 1, 1, NULL, NULL},
    {"georadiusbymember", georadiusbymember_command, -5, W | M, "geo", 1, 1, 1, georadiusKeys,
     NULL},
    {"georadiusbymember_ro", georadiusbymemberro_command, -5, R, "geo", 1, 1, 1, NULL, NULL},
    {"geosearch", geosearch_command, -7, R, "geo", 1, 1, 1, NULL, NULL},
    {"geosearchstore", geosearchstore_command, -8, W | M, "geo", 1, 2, 1, NULL, NULL},
    {NULL, NULL, 0, 0, NULL, 0, 0, 0, NULL, NULL},
};
