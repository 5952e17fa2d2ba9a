/* test_streams.c -- the stream type (t_stream.c) and its id map (sidmap.c).
 *
 * - Ids: the parser against Redis's rules (string2ull quirks, "-", "+", incomplete ids,
 *   "<ms>-*", strict mode, "(" bounds), increment/decrement wrap-around, formatting.
 * - Id generation on the virtual clock: the same ms gives seq+1, a clock that goes
 *   backwards still gives growing ids, a later ms starts at seq 0.
 * - The entry store against a simple model (a sorted array of entries): thousands of seeded
 *   random appends with explicit ids, deletes of present and absent ids, exact and
 *   approximate trims, and range scans both ways with counts, all through the commands;
 *   after every step the store's invariants are checked (fri_stream_check), and regularly
 *   the whole content is compared through fr_stream_entries.
 * - Binary field names and values (NUL, CR LF, empty, long, integer-looking) round trip.
 * - Node boundaries: 100 entries, or 4096 listpack bytes, as Redis 7.0.15 has them, and
 *   under other stream-node-max-entries / -bytes: node counts against the rule, the
 *   master entry's counters taking a byte more past 127, the default LIMIT of "~" trims
 *   (100 * max-entries, clamped), nodes out of creation order after XSETID, and two
 *   iterators taking turns over nodes bigger than an iterator's own arrays.  The model
 *   runs above repeat under small and unlimited node sizes.
 * - The sidmap against a sorted-array model, with changes during range scans.
 * A failure prints the seed and the step.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "fakeredis.h"
#include "sidmap.h"
#include "stream_int.h"
#include "test_rng.h"


/* ----- Helpers ------------------------------------------------------------------------ */

static const fr_reply *exec_v(fr_client *c, int argc, const char *const *argv,
                              const size_t *lens)
{
    const fr_reply *r = fr_exec(c, argc, argv, lens);
    assert_non_null(r);
    return r;
}

static const fr_reply *run(fr_client *c, const char *line)
{
    const fr_reply *r = fr_exec_line(c, line);
    assert_non_null(r);
    return r;
}

static void expect_bulk(const fr_reply *r, const char *s)
{
    if (r->type != FR_REPLY_BULK || r->len != strlen(s) || memcmp(r->str, s, r->len) != 0) {
        fprintf(stderr, "expected bulk '%s', got type %d '%.*s'\n", s, (int)r->type,
                (int)r->len, r->str ? r->str : "");
        fail();
    }
}

static void expect_error(const fr_reply *r, const char *s)
{
    if (r->type != FR_REPLY_ERROR || strcmp(r->str, s) != 0) {
        fprintf(stderr, "expected error '%s', got type %d '%s'\n", s, (int)r->type,
                r->str ? r->str : "");
        fail();
    }
}

static void expect_int(const fr_reply *r, long long v)
{
    if (r->type != FR_REPLY_INTEGER || r->integer != v) {
        fprintf(stderr, "expected :%lld, got type %d %lld '%s'\n", v, (int)r->type, r->integer,
                r->str ? r->str : "");
        fail();
    }
}

static fri_stream *stream_of(fr_server *srv, const char *key)
{
    fri_dent *e = fri_dict_find(srv->db[0].keys, key, strlen(key));
    if (!e) return NULL;
    fri_obj *o = e->v.ptr;
    assert_int_equal(o->type, FRI_STREAM);
    return o->ptr;
}

/* ----- Ids ------------------------------------------------------------------------------ */

static int parse(const char *s, size_t len, uint64_t missing, int strict, int *seq_given,
                 fri_sid *id)
{
    fri_arg a = {s, len};
    return fri_sid_parse_or_reply(NULL, &a, id, missing, strict, seq_given);
}

static void test_sid_parse(void **state)
{
    (void)state;
    struct {
        const char *in;
        int ok;
        uint64_t ms, seq;
    } cases[] = {
        {"0", 1, 0, 7},       {"1-2", 1, 1, 2},       {"-", 1, 0, 0},
        {"+", 1, UINT64_MAX, UINT64_MAX},               {"18446744073709551615", 1, UINT64_MAX, 7},
        {"18446744073709551616", 0, 0, 0},              {" 5", 1, 5, 7},
        {"+5", 1, 5, 7},      {"007", 1, 7, 7},       {"5-+1", 1, 5, 1},
        {"5--1", 0, 0, 0},    {"5--01", 1, 5, UINT64_MAX},                 {"-1", 0, 0, 0},
        {"", 0, 0, 0},        {"5-", 0, 0, 0},        {"a", 0, 0, 0},
        {"1-2-3", 0, 0, 0},   {"0x10", 0, 0, 0},      {"5 ", 0, 0, 0},
        {"9223372036854775808-9223372036854775808", 1, 9223372036854775808ull,
         9223372036854775808ull},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        fri_sid id = {99, 99};
        int rc = parse(cases[i].in, strlen(cases[i].in), 7, 0, NULL, &id);
        int same = id.ms == cases[i].ms && id.seq == cases[i].seq;
        if ((rc == 0) != cases[i].ok || (rc == 0 && !same)) {
            fprintf(stderr, "case '%s': rc %d id %llu-%llu\n", cases[i].in, rc,
                    (unsigned long long)id.ms, (unsigned long long)id.seq);
            fail();
        }
    }
    fri_sid id;
    int given = -1;
    /* strict refuses "-" and "+" only */
    assert_int_equal(parse("-", 1, 0, 1, NULL, &id), -1);
    assert_int_equal(parse("+", 1, 0, 1, NULL, &id), -1);
    assert_int_equal(parse("1", 1, 0, 1, NULL, &id), 0);
    /* "<ms>-*" only where a seq_given pointer is passed */
    assert_int_equal(parse("5-*", 3, 0, 1, &given, &id), 0);
    assert_int_equal(given, 0);
    assert_true(id.ms == 5 && id.seq == 0);
    assert_int_equal(parse("5-3", 3, 0, 1, &given, &id), 0);
    assert_int_equal(given, 1);
    assert_int_equal(parse("5-*", 3, 0, 1, NULL, &id), -1);
    assert_int_equal(parse("5-**", 4, 0, 1, &given, &id), -1);
    /* an embedded NUL ends the argument, as in Redis's C-string parse */
    assert_int_equal(parse("13\0-5", 5, 0, 1, NULL, &id), 0);
    assert_true(id.ms == 13 && id.seq == 0);
    /* over 127 bytes is refused whatever it holds */
    char longid[200];
    memset(longid, '0', sizeof(longid));
    assert_int_equal(parse(longid, 127, 0, 0, NULL, &id), 0);
    assert_int_equal(parse(longid, 128, 0, 0, NULL, &id), -1);

    /* interval bounds */
    int ex;
    fri_arg a = {"(5-1", 4};
    assert_int_equal(fri_sid_parse_interval_or_reply(NULL, &a, &id, &ex, 0), 0);
    assert_int_equal(ex, 1);
    assert_true(id.ms == 5 && id.seq == 1);
    fri_arg b = {"(", 1};
    assert_int_equal(fri_sid_parse_interval_or_reply(NULL, &b, &id, &ex, 0), -1);
    assert_int_equal(ex, 0);
    fri_arg c = {"(-", 2};
    assert_int_equal(fri_sid_parse_interval_or_reply(NULL, &c, &id, &ex, 0), -1);
    fri_arg d = {"(9", 2};
    assert_int_equal(fri_sid_parse_interval_or_reply(NULL, &d, &id, &ex, UINT64_MAX), 0);
    assert_true(ex == 1 && id.ms == 9 && id.seq == UINT64_MAX);
}

/* The inline fast path (fri_sid_parse_plain) against a plain reading of its contract, on
 * random strings near the ids it takes (13-digit times, 18- and 19-digit parts, leading
 * zeros, signs, blanks, a '-' anywhere): when it takes one, the full parse agrees. */
static int plain_part(const char *p, size_t n, uint64_t *v)
{
    if (n == 0 || n > 18 || (p[0] == '0' && n > 1)) return 0;
    uint64_t r = 0;
    for (size_t i = 0; i < n; i++) {
        if (p[i] < '0' || p[i] > '9') return 0;
        r = r * 10 + (uint64_t)(p[i] - '0');
    }
    *v = r;
    return 1;
}

static void test_sid_parse_plain(void **state)
{
    (void)state;
    static const char alphabet[] = "0123456789012345678901234567890123456789-- +a";
    uint64_t rs = 42;
    char buf[48];
    long taken = 0;
    for (int iter = 0; iter < 200000; iter++) {
        size_t len = splitmix64_below(&rs, 3) == 0 ? splitmix64_below(&rs, 41)
                                                   : 11 + splitmix64_below(&rs, 12);
        for (size_t i = 0; i < len; i++)
            buf[i] = alphabet[splitmix64_below(&rs, sizeof(alphabet) - 1)];
        if (len > 13 && splitmix64_below(&rs, 2)) buf[13] = '-'; /* a 13-digit time */
        fri_sid want = {0, 0}, got = {99, 99};
        const char *dash = memchr(buf, '-', len);
        int ok = dash ? plain_part(buf, (size_t)(dash - buf), &want.ms) &&
                            plain_part(dash + 1, len - (size_t)(dash - buf) - 1, &want.seq)
                      : plain_part(buf, len, &want.ms);
        if (!dash) want.seq = 7;
        fri_arg a = {buf, len};
        int rc = fri_sid_parse_plain(&a, &got, 7);
        if (rc != ok || (ok && fri_sid_cmp(got, want) != 0)) {
            fprintf(stderr, "'%.*s': fast path %d (%llu-%llu), expected %d\n", (int)len, buf,
                    rc, (unsigned long long)got.ms, (unsigned long long)got.seq, ok);
            fail();
        }
        if (ok) {
            fri_sid full;
            assert_int_equal(parse(buf, len, 7, 1, NULL, &full), 0);
            assert_int_equal(fri_sid_cmp(full, want), 0);
            taken++;
        }
    }
    assert_true(taken > 10000); /* the generator does reach the fast path */
}

static void test_sid_incr_decr_format(void **state)
{
    (void)state;
    fri_sid a = {1, UINT64_MAX};
    assert_int_equal(fri_sid_incr(&a), 0);
    assert_true(a.ms == 2 && a.seq == 0);
    assert_int_equal(fri_sid_decr(&a), 0);
    assert_true(a.ms == 1 && a.seq == UINT64_MAX);
    fri_sid max = FRI_SID_MAX, min = FRI_SID_MIN;
    assert_int_equal(fri_sid_incr(&max), -1);
    assert_true(fri_sid_is_zero(max));
    assert_int_equal(fri_sid_decr(&min), -1);
    assert_true(min.ms == UINT64_MAX && min.seq == UINT64_MAX);
    char buf[FRI_SID_STRLEN];
    assert_int_equal(fri_sid_format(buf, FRI_SID_MAX), 41);
    assert_string_equal(buf, "18446744073709551615-18446744073709551615");
    assert_int_equal(fri_sid_format(buf, (fri_sid){0, 0}), 3);
    assert_string_equal(buf, "0-0");
    assert_true(fri_sid_cmp((fri_sid){1, 5}, (fri_sid){2, 0}) < 0);
    assert_true(fri_sid_cmp((fri_sid){2, 5}, (fri_sid){2, 0}) > 0);
    assert_true(fri_sid_cmp((fri_sid){2, 5}, (fri_sid){2, 5}) == 0);
    /* ids print as printf prints them: every power of ten and its neighbours (where the
     * eight-digits-at-once path starts and stops), and random ones of every length */
    uint64_t rs = 12345;
    for (int k = 0; k < 4000; k++) {
        uint64_t ms, seq;
        if (k < 20 * 3) {
            uint64_t p = 1;
            for (int e = 0; e < k / 3; e++) p *= 10;
            ms = p - 1 + (uint64_t)(k % 3);
            seq = UINT64_MAX - (uint64_t)k;
        } else {
            ms = splitmix64_next(&rs) >> splitmix64_below(&rs, 64);
            seq = splitmix64_next(&rs) >> splitmix64_below(&rs, 64);
        }
        char want[64];
        snprintf(want, sizeof want, "%llu-%llu", (unsigned long long)ms, (unsigned long long)seq);
        assert_int_equal(fri_sid_format(buf, (fri_sid){ms, seq}), strlen(want));
        assert_string_equal(buf, want);
    }
}

/* ----- Id generation on the virtual clock ----------------------------------------------- */

static void test_id_generation_clock(void **state)
{
    (void)state;
    fr_config cfg = fr_config_default();
    cfg.start_ms = 1000;
    fr_server *srv = fr_server_new(&cfg);
    fr_client *c = fr_client_new(srv);
    expect_bulk(run(c, "XADD s * f v"), "1000-0");
    expect_bulk(run(c, "XADD s * f v"), "1000-1"); /* same ms: next seq */
    fr_clock_advance(srv, 5);
    expect_bulk(run(c, "XADD s * f v"), "1005-0");
    fr_clock_set(srv, 10); /* the clock goes backwards: ids keep growing */
    expect_bulk(run(c, "XADD s * f v"), "1005-1");
    expect_bulk(run(c, "XADD s * f v"), "1005-2");
    expect_bulk(run(c, "XADD s 1005-* f v"), "1005-3");
    expect_bulk(run(c, "XADD s 2000-* f v"), "2000-0");
    expect_bulk(run(c, "XADD s * f v"), "2000-1");
    fr_clock_set(srv, 3000);
    expect_bulk(run(c, "XADD s * f v"), "3000-0");
    /* MULTI: each command reads the clock when it runs */
    run(c, "MULTI");
    run(c, "XADD s * f v");
    run(c, "XADD s * f v");
    const fr_reply *r = run(c, "EXEC");
    assert_int_equal(r->type, FR_REPLY_ARRAY);
    assert_int_equal(r->count, 2);
    expect_bulk(&r->elements[0], "3000-1");
    expect_bulk(&r->elements[1], "3000-2");
    /* a stream whose last id is in the future */
    expect_bulk(run(c, "XADD t 99999-7 f v"), "99999-7");
    expect_bulk(run(c, "XADD t * f v"), "99999-8");
    /* the seq part exhausted: the next ms */
    expect_bulk(run(c, "XADD u 4000-18446744073709551615 f v"), "4000-18446744073709551615");
    expect_bulk(run(c, "XADD u * f v"), "4001-0");
    /* the very last id */
    expect_bulk(run(c, "XADD w 18446744073709551615-18446744073709551615 f v"),
                "18446744073709551615-18446744073709551615");
    expect_error(run(c, "XADD w * f v"), "ERR The stream has exhausted the last possible ID, "
                                         "unable to add more items");
    assert_int_equal(fri_stream_check(stream_of(srv, "s")), 0);
    fr_client_free(c);
    fr_server_free(srv);
}

/* ----- The entry store against a model --------------------------------------------------- */

#define MAXF 3

typedef struct mentry {
    fri_sid id;
    int nf;
    char f[MAXF][8], v[MAXF][24];
    size_t fl[MAXF], vl[MAXF];
} mentry;

typedef struct smodel {
    mentry *e;
    size_t n, cap;
    fri_sid last;
} smodel;

static void model_push(smodel *m, const mentry *e)
{
    if (m->n == m->cap) {
        m->cap = m->cap ? m->cap * 2 : 64;
        m->e = realloc(m->e, m->cap * sizeof(*m->e));
        assert_non_null(m->e);
    }
    m->e[m->n++] = *e;
    m->last = e->id;
}

static long model_find(const smodel *m, fri_sid id)
{
    size_t lo = 0, hi = m->n;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        int c = fri_sid_cmp(m->e[mid].id, id);
        if (c == 0) return (long)mid;
        if (c < 0) lo = mid + 1;
        else hi = mid;
    }
    return -1;
}

static void model_remove_at(smodel *m, size_t i)
{
    memmove(&m->e[i], &m->e[i + 1], (m->n - i - 1) * sizeof(*m->e));
    m->n--;
}

/* A random field name or value: short, from an alphabet with NUL and digits, so names
 * repeat (same-fields entries) and values are sometimes integers. */
static size_t rand_bytes(uint64_t *rs, char *dst, size_t max)
{
    static const char alpha[] = {'a', 'b', '1', '0', '-', '\0', '\r', '\n'};
    size_t len = splitmix64_below(rs, (unsigned)max + 1);
    for (size_t i = 0; i < len; i++) dst[i] = alpha[splitmix64_below(rs, sizeof(alpha))];
    return len;
}

static void format_id(char *buf, fri_sid id) { fri_sid_format(buf, id); }

/* Compares an entries reply ([[id, [f, v ...]] ...]) with model entries from..(count) in
 * the given direction. */
static void compare_range(const fr_reply *r, const smodel *m, long first, long step, size_t n)
{
    if (r->type != FR_REPLY_ARRAY || r->count != n) {
        fprintf(stderr, "range: type %d count %zu, expected %zu\n", (int)r->type, r->count, n);
        fail();
    }
    for (size_t i = 0; i < n; i++) {
        const mentry *e = &m->e[first + (long)i * step];
        const fr_reply *x = &r->elements[i];
        char idb[FRI_SID_STRLEN];
        format_id(idb, e->id);
        assert_int_equal(x->count, 2);
        expect_bulk(&x->elements[0], idb);
        const fr_reply *fv = &x->elements[1];
        assert_int_equal(fv->count, (size_t)(2 * e->nf));
        for (int k = 0; k < e->nf; k++) {
            assert_int_equal(fv->elements[2 * k].len, e->fl[k]);
            if (e->fl[k]) assert_memory_equal(fv->elements[2 * k].str, e->f[k], e->fl[k]);
            assert_int_equal(fv->elements[2 * k + 1].len, e->vl[k]);
            if (e->vl[k]) assert_memory_equal(fv->elements[2 * k + 1].str, e->v[k], e->vl[k]);
        }
    }
}

static void compare_all(fr_server *srv, const smodel *m)
{
    fr_stream_entry *ents;
    size_t n;
    int rc = fr_stream_entries(srv, 0, "s", 1, &ents, &n);
    if (m->n == 0 && rc == -1) return; /* never created */
    assert_int_equal(rc, 0);
    assert_int_equal(n, m->n);
    for (size_t i = 0; i < n; i++) {
        assert_true(ents[i].id_ms == m->e[i].id.ms && ents[i].id_seq == m->e[i].id.seq);
        assert_int_equal(ents[i].nfields, (size_t)m->e[i].nf);
        for (int k = 0; k < m->e[i].nf; k++) {
            assert_int_equal(ents[i].fv_len[2 * k], m->e[i].fl[k]);
            assert_int_equal(ents[i].fv_len[2 * k + 1], m->e[i].vl[k]);
            if (m->e[i].fl[k]) assert_memory_equal(ents[i].fv[2 * k], m->e[i].f[k], m->e[i].fl[k]);
            if (m->e[i].vl[k])
                assert_memory_equal(ents[i].fv[2 * k + 1], m->e[i].v[k], m->e[i].vl[k]);
            assert_int_equal(ents[i].fv[2 * k][m->e[i].fl[k]], '\0');
        }
    }
    free(ents);
}

/* An id near the model's: below the first, between two, equal to one, past the last. */
static fri_sid rand_probe(uint64_t *rs, const smodel *m)
{
    if (m->n == 0 || splitmix64_below(rs, 8) == 0)
        return (fri_sid){splitmix64_below(rs, 50), splitmix64_below(rs, 4)};
    fri_sid id = m->e[splitmix64_below(rs, (unsigned)m->n)].id;
    switch (splitmix64_below(rs, 4)) {
    case 0: fri_sid_incr(&id); break;
    case 1: fri_sid_decr(&id); break;
    default: break;
    }
    return id;
}

static void run_store_model(uint64_t seed, int steps, const char *max_entries,
                            const char *max_bytes)
{
    uint64_t rs = seed;
    fr_config cfg = fr_config_default();
    fr_server *srv = fr_server_new(&cfg);
    assert_int_equal(fr_server_set_param(srv, "stream-node-max-entries", max_entries), 0);
    assert_int_equal(fr_server_set_param(srv, "stream-node-max-bytes", max_bytes), 0);
    fr_client *c = fr_client_new(srv);
    smodel m = {0};
    static const char *const names[] = {"a", "b", "c"};
    for (int step = 0; step < steps; step++) {
        unsigned op = splitmix64_below(&rs, 100);
        char idb[FRI_SID_STRLEN], idb2[FRI_SID_STRLEN], num[32];
        if (op < 55) {
            /* XADD with an explicit id past the last */
            mentry e;
            memset(&e, 0, sizeof(e));
            e.id = m.last;
            unsigned how = splitmix64_below(&rs, 10);
            if (how < 6) fri_sid_incr(&e.id);
            else if (how < 9)
                e.id = (fri_sid){m.last.ms + 1 + splitmix64_below(&rs, 300000),
                                 splitmix64_below(&rs, 3)};
            else e.id.seq += 1 + splitmix64_below(&rs, 1000);
            e.nf = 1 + (int)splitmix64_below(&rs, MAXF);
            int same = splitmix64_below(&rs, 4) != 0;
            for (int k = 0; k < e.nf; k++) {
                if (same) {
                    e.fl[k] = 1;
                    e.f[k][0] = names[k][0];
                } else {
                    e.fl[k] = rand_bytes(&rs, e.f[k], 4);
                }
                e.vl[k] = splitmix64_below(&rs, 5) == 0
                              ? (size_t)snprintf(e.v[k], sizeof(e.v[k]), "%lld",
                                                 (long long)(splitmix64_next(&rs) >>
                                                             splitmix64_below(&rs, 64)))
                              : rand_bytes(&rs, e.v[k], 20);
            }
            format_id(idb, e.id);
            const char *argv[3 + 2 * MAXF];
            size_t lens[3 + 2 * MAXF];
            argv[0] = "XADD";
            argv[1] = "s";
            argv[2] = idb;
            lens[0] = 4;
            lens[1] = 1;
            lens[2] = strlen(idb);
            for (int k = 0; k < e.nf; k++) {
                argv[3 + 2 * k] = e.f[k];
                lens[3 + 2 * k] = e.fl[k];
                argv[4 + 2 * k] = e.v[k];
                lens[4 + 2 * k] = e.vl[k];
            }
            expect_bulk(exec_v(c, 3 + 2 * e.nf, argv, lens), idb);
            model_push(&m, &e);
        } else if (op < 70) {
            /* XDEL one to three ids, present or not */
            int k = 1 + (int)splitmix64_below(&rs, 3);
            char bufs[3][FRI_SID_STRLEN];
            const char *argv[5] = {"XDEL", "s"};
            fri_sid ids[3];
            for (int j = 0; j < k; j++) {
                ids[j] = rand_probe(&rs, &m);
                format_id(bufs[j], ids[j]);
                argv[2 + j] = bufs[j];
            }
            long expect = 0;
            for (int j = 0; j < k; j++) {
                long at = model_find(&m, ids[j]);
                if (at >= 0) {
                    model_remove_at(&m, (size_t)at);
                    expect++;
                }
            }
            const fr_reply *r = exec_v(c, 2 + k, argv, NULL);
            expect_int(r, expect);
        } else if (op < 76) {
            /* exact trims */
            if (splitmix64_below(&rs, 2)) {
                size_t maxlen = splitmix64_below(&rs, (unsigned)m.n + 3);
                snprintf(num, sizeof(num), "XTRIM s MAXLEN %zu", maxlen);
                long expect = m.n > maxlen ? (long)(m.n - maxlen) : 0;
                expect_int(run(c, num), expect);
                if (expect > 0) {
                    memmove(m.e, m.e + expect, (m.n - (size_t)expect) * sizeof(*m.e));
                    m.n -= (size_t)expect;
                }
            } else {
                fri_sid minid = rand_probe(&rs, &m);
                format_id(idb, minid);
                char line[80];
                snprintf(line, sizeof(line), "XTRIM s MINID %s", idb);
                size_t k = 0;
                while (k < m.n && fri_sid_cmp(m.e[k].id, minid) < 0) k++;
                expect_int(run(c, line), (long long)k);
                if (k) memmove(m.e, m.e + k, (m.n - k) * sizeof(*m.e));
                m.n -= k;
            }
        } else if (op < 80) {
            /* approximate trims remove a prefix and never go below the threshold */
            size_t maxlen = splitmix64_below(&rs, (unsigned)m.n + 3);
            char line[80];
            snprintf(line, sizeof(line), "XTRIM s MAXLEN ~ %zu", maxlen);
            const fr_reply *r = run(c, line);
            assert_int_equal(r->type, FR_REPLY_INTEGER);
            size_t removed = (size_t)r->integer;
            assert_true(removed <= m.n);
            if (removed) assert_true(m.n - removed >= maxlen);
            if (removed) memmove(m.e, m.e + removed, (m.n - removed) * sizeof(*m.e));
            m.n -= removed;
        } else {
            /* XRANGE / XREVRANGE over random bounds, exclusive or not, with a count */
            fri_sid lo = rand_probe(&rs, &m), hi = rand_probe(&rs, &m);
            if (fri_sid_cmp(lo, hi) > 0 && splitmix64_below(&rs, 4)) {
                fri_sid t = lo;
                lo = hi;
                hi = t;
            }
            int lox = (int)splitmix64_below(&rs, 2), hix = (int)splitmix64_below(&rs, 2);
            size_t count = splitmix64_below(&rs, 3) == 0 ? 0 : 1 + splitmix64_below(&rs, 30);
            int rev = (int)splitmix64_below(&rs, 2);
            format_id(idb, lo);
            format_id(idb2, hi);
            char line[160];
            char cnt[32] = "";
            if (count) snprintf(cnt, sizeof(cnt), " COUNT %zu", count);
            if (!rev)
                snprintf(line, sizeof(line), "XRANGE s %s%s %s%s%s", lox ? "(" : "", idb,
                         hix ? "(" : "", idb2, cnt);
            else
                snprintf(line, sizeof(line), "XREVRANGE s %s%s %s%s%s", hix ? "(" : "", idb2,
                         lox ? "(" : "", idb, cnt);
            const fr_reply *r = run(c, line);
            /* the model's answer */
            fri_sid a = lo, b = hi;
            int bad = (lox && fri_sid_incr(&a) < 0) || (hix && fri_sid_decr(&b) < 0);
            if (bad) {
                assert_int_equal(r->type, FR_REPLY_ERROR);
            } else {
                size_t first = 0;
                while (first < m.n && fri_sid_cmp(m.e[first].id, a) < 0) first++;
                size_t end = first;
                while (end < m.n && fri_sid_cmp(m.e[end].id, b) <= 0) end++;
                size_t n = end - first;
                if (count && n > count) n = count;
                if (!stream_of(srv, "s")) {
                    assert_int_equal(r->type, FR_REPLY_ARRAY); /* no key: an empty array */
                    assert_int_equal(r->count, 0);
                } else if (!rev) {
                    compare_range(r, &m, (long)first, 1, n);
                } else {
                    compare_range(r, &m, (long)end - 1, -1, n);
                }
            }
        }
        fri_stream *s = stream_of(srv, "s");
        if (s) {
            int rc = fri_stream_check(s);
            if (rc != 0 || s->length != m.n) {
                fprintf(stderr, "seed %llu step %d: check %d, length %llu, model %zu\n",
                        (unsigned long long)seed, step, rc, (unsigned long long)s->length, m.n);
                fail();
            }
            for (int j = 0; j < 3 && m.n; j++) {
                fri_sid probe = rand_probe(&rs, &m);
                assert_int_equal(fri_stream_entry_exists(s, probe), model_find(&m, probe) >= 0);
            }
        }
        if (step % 97 == 0) compare_all(srv, &m);
    }
    compare_all(srv, &m);
    /* XREAD from random ids agrees with the model too */
    for (int j = 0; j < 50 && m.n; j++) {
        fri_sid from = rand_probe(&rs, &m);
        char idb[FRI_SID_STRLEN], line[96];
        format_id(idb, from);
        snprintf(line, sizeof(line), "XREAD COUNT 7 STREAMS s %s", idb);
        const fr_reply *r = run(c, line);
        size_t first = 0;
        while (first < m.n && fri_sid_cmp(m.e[first].id, from) <= 0) first++;
        if (first == m.n) {
            assert_int_equal(r->type, FR_REPLY_NIL_ARRAY);
        } else {
            assert_int_equal(r->count, 1);
            size_t n = m.n - first < 7 ? m.n - first : 7;
            compare_range(&r->elements[0].elements[1], &m, (long)first, 1, n);
        }
    }
    free(m.e);
    fr_client_free(c);
    fr_server_free(srv);
}

static void test_store_against_model(void **state)
{
    (void)state;
    for (uint64_t seed = 1; seed <= 12; seed++) run_store_model(seed, 3000, "100", "4096");
    /* nodes of one or a few entries, of a few hundred bytes, and without limits (every
     * entry in one node, walked through the stream's scratch arrays) */
    static const char *const params[][2] = {{"1", "4096"}, {"3", "0"},   {"0", "300"},
                                            {"0", "0"},    {"250", "0"}, {"7", "200"}};
    for (size_t i = 0; i < sizeof(params) / sizeof(params[0]); i++)
        run_store_model(100 + i, 2000, params[i][0], params[i][1]);
}

/* Long runs that fill many nodes between deletes. */
static void test_store_large(void **state)
{
    (void)state;
    fr_server *srv = fr_server_new(NULL);
    fr_client *c = fr_client_new(srv);
    char line[96];
    for (int i = 1; i <= 20000; i++) {
        snprintf(line, sizeof(line), "XADD s %d-%d f %d g x", i / 3, i % 3, i);
        run(c, line);
    }
    fri_stream *s = stream_of(srv, "s");
    assert_int_equal(s->length, 20000);
    assert_int_equal(fri_stream_node_count(s), 200);
    assert_int_equal(fri_stream_check(s), 0);
    /* delete every entry of one node: it goes */
    for (int i = 101; i <= 200; i++) {
        snprintf(line, sizeof(line), "XDEL s %d-%d", i / 3, i % 3);
        expect_int(run(c, line), 1);
    }
    assert_int_equal(fri_stream_node_count(s), 199);
    assert_int_equal(fri_stream_check(s), 0);
    expect_int(run(c, "XTRIM s MAXLEN ~ 15000"), 4900);
    expect_int(run(c, "XTRIM s MAXLEN 10000"), 5000);
    assert_int_equal(fri_stream_check(s), 0);
    const fr_reply *r = run(c, "XRANGE s - + COUNT 1");
    assert_int_equal(r->count, 1);
    expect_bulk(&r->elements[0].elements[0], "3333-2"); /* entry 10001 */
    r = run(c, "XREVRANGE s + - COUNT 1");
    expect_bulk(&r->elements[0].elements[0], "6666-2");
    expect_int(run(c, "XTRIM s MINID 5000"), 5000 - 1); /* 10001..14999 go */
    assert_int_equal(fri_stream_check(s), 0);
    fr_client_free(c);
    fr_server_free(srv);
}

/* ----- Binary values ------------------------------------------------------------------------ */

static void test_binary_values(void **state)
{
    (void)state;
    fr_server *srv = fr_server_new(NULL);
    fr_client *c = fr_client_new(srv);
    static char big[70000];
    for (size_t i = 0; i < sizeof(big); i++) big[i] = (char)(i * 7);
    const char *argv[] = {"XADD", "b", "1-1", "\0k\xff", "v\r\n\0", "", "", "12", "-9",
                          "f", big};
    size_t lens[] = {4, 1, 3, 3, 4, 0, 0, 2, 2, 1, sizeof(big)};
    expect_bulk(exec_v(c, 11, argv, lens), "1-1");
    const char *argv2[] = {"XADD", "b",  "1-2", "\0k\xff", "x", "", "\0", "12",
                           "9223372036854775807", "f", "-9223372036854775808"};
    size_t lens2[] = {4, 1, 3, 3, 1, 0, 1, 2, 19, 1, 20};
    expect_bulk(exec_v(c, 11, argv2, lens2), "1-2");
    const fr_reply *r = run(c, "XRANGE b - +");
    assert_int_equal(r->count, 2);
    for (int e = 0; e < 2; e++) {
        const fr_reply *fv = &r->elements[e].elements[1];
        const char *const *av = e ? argv2 : argv;
        const size_t *al = e ? lens2 : lens;
        assert_int_equal(fv->count, 8);
        for (int k = 0; k < 8; k++) {
            assert_int_equal(fv->elements[k].len, al[3 + k]);
            if (al[3 + k]) assert_memory_equal(fv->elements[k].str, av[3 + k], al[3 + k]);
        }
    }
    fr_stream_entry *ents;
    size_t n;
    assert_int_equal(fr_stream_entries(srv, 0, "b", 1, &ents, &n), 0);
    assert_int_equal(n, 2);
    assert_int_equal(ents[0].fv_len[7], sizeof(big));
    assert_memory_equal(ents[0].fv[7], big, sizeof(big));
    assert_memory_equal(ents[1].fv[1], "x", 2);
    free(ents);
    assert_int_equal(fr_stream_entries(srv, 0, "nokey", 5, &ents, &n), -1);
    run(c, "SET str x");
    assert_int_equal(fr_stream_entries(srv, 0, "str", 3, &ents, &n), -1);
    fr_stream_meta meta;
    assert_int_equal(fr_stream_meta_get(srv, 0, "b", 1, &meta), 0);
    assert_true(meta.length == 2 && meta.last_id_ms == 1 && meta.last_id_seq == 2);
    assert_true(meta.first_id_ms == 1 && meta.first_id_seq == 1 && meta.entries_added == 2);
    assert_int_equal(meta.nodes, 2); /* the 70000-byte value filled the first node */
    fr_client_free(c);
    fr_server_free(srv);
}

/* ----- Node boundaries --------------------------------------------------------------------- */

static size_t nodes_of(fr_server *srv, const char *key)
{
    fr_stream_meta meta;
    assert_int_equal(fr_stream_meta_get(srv, 0, key, strlen(key), &meta), 0);
    return meta.nodes;
}

static void test_node_boundaries(void **state)
{
    (void)state;
    fr_server *srv = fr_server_new(NULL);
    fr_client *c = fr_client_new(srv);
    char line[8192];
    for (int i = 1; i <= 250; i++) {
        snprintf(line, sizeof(line), "XADD n %d-1 f %d", i, i);
        run(c, line);
    }
    assert_int_equal(nodes_of(srv, "n"), 3); /* 100 + 100 + 50 */
    /* listpack bytes: header 7 + master 11, first entry 2+2+2+1004+2 = 1030 bytes; the next
     * entry starts a node when 1030 + its field and value bytes reach 4096 (checked
     * against redis-server 7.0.15) */
    for (int v = 3064; v <= 3065; v++) {
        char key[8];
        snprintf(key, sizeof(key), "b%d", v);
        snprintf(line, sizeof(line), "XADD %s 1-1 f %01000d", key, 0);
        run(c, line);
        snprintf(line, sizeof(line), "XADD %s 2-1 f %0*d", key, v, 0);
        line[strlen(line) - 1] = 'x'; /* keep it a string, not an integer */
        run(c, line);
        assert_int_equal(nodes_of(srv, key), v == 3064 ? 1 : 2);
    }
    /* deleted entries still count towards the 100 */
    for (int i = 1; i <= 100; i++) {
        snprintf(line, sizeof(line), "XADD d %d-1 f %d", i, i);
        run(c, line);
        if (i > 1) {
            snprintf(line, sizeof(line), "XDEL d %d-1", i);
            expect_int(run(c, line), 1);
        }
    }
    assert_int_equal(nodes_of(srv, "d"), 1);
    run(c, "XADD d 101-1 f 1");
    assert_int_equal(nodes_of(srv, "d"), 2);
    fr_client_free(c);
    fr_server_free(srv);
}

static void set_params(fr_server *srv, const char *entries, const char *bytes)
{
    assert_int_equal(fr_server_set_param(srv, "stream-node-max-entries", entries), 0);
    assert_int_equal(fr_server_set_param(srv, "stream-node-max-bytes", bytes), 0);
}

static void test_node_params(void **state)
{
    (void)state;
    fr_server *srv = fr_server_new(NULL);
    fr_client *c = fr_client_new(srv);
    char line[128];
    /* max-entries k without a byte limit: ceil(n / k) nodes */
    static const int ks[] = {1, 2, 7, 10, 100, 128, 300};
    for (size_t j = 0; j < sizeof(ks) / sizeof(ks[0]); j++) {
        char key[16], num[16];
        snprintf(key, sizeof(key), "k%d", ks[j]);
        snprintf(num, sizeof(num), "%d", ks[j]);
        set_params(srv, num, "0");
        for (int i = 1; i <= 1000; i++) {
            snprintf(line, sizeof(line), "XADD %s %d-0 f %d", key, i, i);
            run(c, line);
        }
        assert_int_equal(nodes_of(srv, key), (size_t)((1000 + ks[j] - 1) / ks[j]));
        /* "~" removes whole nodes only, LIMIT caps the entries removed */
        snprintf(line, sizeof(line), "XTRIM %s MAXLEN ~ 500 LIMIT %d", key, 3 * ks[j] + 1);
        long long whole = 500 / ks[j] * ks[j]; /* entries in the nodes that may go */
        long long limit = 3 * ks[j] + 1, removed = whole < limit / ks[j] * ks[j]
                                                       ? whole
                                                       : limit / ks[j] * ks[j];
        expect_int(run(c, line), removed);
        assert_int_equal(fri_stream_check(stream_of(srv, key)), 0);
    }
    /* the default LIMIT: 100 * max-entries, 10000 when that is 0 or wraps negative,
     * 1000000 at most; one entry per node (max-bytes 1) shows how many go */
    static const struct { const char *entries; long long limit; } lims[] = {
        {"7", 700}, {"0", 10000}, {"9223372036854775807", 10000}, {"20000", 1000000}};
    for (size_t j = 0; j < sizeof(lims) / sizeof(lims[0]); j++) {
        set_params(srv, lims[j].entries, "1");
        run(c, "DEL one");
        for (int i = 1; i <= 12000; i++) {
            snprintf(line, sizeof(line), "XADD one %d-0 f v", i);
            run(c, line);
        }
        assert_int_equal(nodes_of(srv, "one"), 12000);
        expect_int(run(c, "XTRIM one MAXLEN ~ 0"), lims[j].limit < 12000 ? lims[j].limit : 12000);
    }
    /* entries "f 1" at 1-i: a node of 128 entries takes a byte more for its count, so with
     * max-bytes 1301 the 129th entry starts a node, with 1302 it does not (checked against
     * redis-server 7.0.15) */
    for (int b = 1301; b <= 1302; b++) {
        char num[16];
        snprintf(num, sizeof(num), "%d", b);
        set_params(srv, "0", num);
        run(c, "DEL cnt");
        for (int i = 0; i < 140; i++) {
            snprintf(line, sizeof(line), "XADD cnt 1-%d f 1", i);
            run(c, line);
        }
        expect_int(run(c, "XTRIM cnt MAXLEN ~ 1"), b == 1301 ? 128 : 129);
    }
    /* XSETID below an emptied node: XADD appends to the node with the greatest key, and
     * a node started when that one is full sorts before it */
    set_params(srv, "0", "60");
    run(c, "DEL low");
    run(c, "XADD low 1000-0 f 1");
    run(c, "XADD low 18446744073709551615-18446744073709551615 f 2");
    expect_int(run(c, "XDEL low 18446744073709551615-18446744073709551615"), 1);
    expect_int(run(c, "XTRIM low MINID 18446744073709551615-18446744073709551615"), 1);
    assert_int_equal(nodes_of(srv, "low"), 1); /* kept though empty: trimmed, not XDELed */
    run(c, "XSETID low 5");
    set_params(srv, "0", "30"); /* now full: its two deleted entries take ~40 bytes */
    run(c, "XADD low 8-0 f 8");
    run(c, "XADD low 9-0 f 9");
    fri_stream *s = stream_of(srv, "low");
    assert_int_equal(fri_stream_node_count(s), 3);
    for (size_t i = 1; i < fri_stream_node_count(s); i++)
        assert_true(fri_sid_cmp(fri_stream_node_key(s, i - 1), fri_stream_node_key(s, i)) < 0);
    assert_int_equal(fri_stream_check(s), 0);
    fr_client_free(c);
    fr_server_free(srv);
}

/* Two iterators take turns over a node bigger than an iterator's own arrays: each sees
 * its own walk, whatever the other decoded into the stream's scratch arrays meanwhile. */
static void test_big_node_iterators(void **state)
{
    (void)state;
    fr_server *srv = fr_server_new(NULL);
    set_params(srv, "0", "0");
    fr_client *c = fr_client_new(srv);
    char line[96];
    for (int i = 1; i <= 700; i++) {
        snprintf(line, sizeof(line), "XADD b %d-0 f %d", i, i);
        run(c, line);
        if (i % 5 == 0) {
            snprintf(line, sizeof(line), "XDEL b %d-0", i - 2);
            expect_int(run(c, line), 1);
        }
    }
    fri_stream *s = stream_of(srv, "b");
    assert_int_equal(fri_stream_node_count(s), 1);
    fri_stream_iter fwd, rev, seek;
    fri_stream_iter_start(&fwd, s, FRI_SID_MIN, FRI_SID_MAX, 0);
    fri_stream_iter_start(&rev, s, FRI_SID_MIN, FRI_SID_MAX, 1);
    fri_stream_iter_start(&seek, s, FRI_SID_MIN, FRI_SID_MAX, 0);
    uint64_t next_fwd = 1, next_rev = 700;
    fri_sid id;
    long nf;
    for (int step = 0; step < 2000; step++) {
        fri_stream_iter *it = step % 3 == 0 ? &fwd : step % 3 == 1 ? &rev : &seek;
        if (it == &seek) {
            uint64_t want = 1 + (uint64_t)step % 700;
            int live = want % 5 != 3;
            assert_int_equal(fri_stream_iter_seek(&seek, (fri_sid){want, 0}, &nf), live);
            if (live) {
                const char *f, *v;
                size_t fl, vl;
                fri_stream_iter_field(&seek, &f, &fl, &v, &vl);
                assert_int_equal(strtoull(v, NULL, 10), want);
            }
            continue;
        }
        uint64_t *next = it == &fwd ? &next_fwd : &next_rev;
        while (*next >= 1 && *next <= 700 && *next % 5 == 3) *next += it == &fwd ? 1 : -1;
        int more = *next >= 1 && *next <= 700;
        assert_int_equal(fri_stream_iter_next(it, &id, &nf), more);
        if (!more) continue;
        assert_true(id.ms == *next && id.seq == 0 && nf == 1);
        *next += it == &fwd ? 1 : -1;
    }
    fr_client_free(c);
    fr_server_free(srv);
}

/* ----- The dump --------------------------------------------------------------------------- */

static void test_dump(void **state)
{
    (void)state;
    fr_server *srv = fr_server_new(NULL);
    fr_client *c = fr_client_new(srv);
    run(c, "XADD s 1-1 f \"a b\" g 2");
    run(c, "XADD s 1-2 f \"\\x00\"");
    run(c, "XADD s 1-3 h x");
    run(c, "XDEL s 1-3");
    fri_stream *s = stream_of(srv, "s");
    /* a group built by hand, as t_stream_group.c builds them */
    s->cgroups = fri_dict_new();
    fri_stream_cg *cg = calloc(1, sizeof(*cg));
    cg->stream = s; /* its records come from the stream's pool */
    cg->last_id = (fri_sid){1, 2};
    cg->entries_read = 2;
    cg->pel = fri_sidmap_new();
    cg->consumers = fri_dict_new();
    fri_stream_consumer *co = calloc(1, sizeof(*co));
    co->name = fri_str_new("alice", 5);
    co->pel = fri_sidmap_new();
    co->seen_time = fr_clock_now(srv) - 30;
    fri_dict_add(cg->consumers, "alice", 5, NULL)->v.ptr = co;
    fri_stream_nack *nack = fri_stream_nack_alloc(s);
    memset(nack, 0, sizeof(*nack));
    nack->consumer = co;
    nack->delivery_count = 3;
    nack->delivery_time = fr_clock_now(srv) - 10;
    fri_sidmap_insert(cg->pel, (fri_sid){1, 1}, nack);
    fri_sidmap_insert(co->pel, (fri_sid){1, 1}, nack);
    fri_dict_add(s->cgroups, "g2", 2, NULL)->v.ptr = cg;
    fri_stream_cg *cg1 = calloc(1, sizeof(*cg1));
    cg1->stream = s;
    cg1->entries_read = -1;
    cg1->pel = fri_sidmap_new();
    cg1->consumers = fri_dict_new();
    fri_dict_add(s->cgroups, "g1", 2, NULL)->v.ptr = cg1;

    fri_buf b = {0};
    fri_stream_dump(&b, s, fr_clock_now(srv));
    fri_buf_append(&b, "", 1);
    assert_string_equal(b.p, "  1-1 \"f\" \"a b\" \"g\" \"2\"\n"
                             "  1-2 \"f\" \"\\x00\"\n"
                             "  group \"g1\" last-delivered=0-0 entries-read=-1\n"
                             "  group \"g2\" last-delivered=1-2 entries-read=2\n"
                             "    consumer \"alice\" seen-ms-ago=30 pending=1\n"
                             "    pending 1-1 consumer=\"alice\" delivered-ms-ago=10 count=3\n");
    fri_buf_free(&b);
    /* deleting the key frees the groups (checked by the sanitizer builds) */
    expect_int(run(c, "DEL s"), 1);
    fr_client_free(c);
    fr_server_free(srv);
}

/* ----- sidmap against a sorted array ------------------------------------------------------ */

static int sid_cmp_qsort(const void *a, const void *b)
{
    return fri_sid_cmp(*(const fri_sid *)a, *(const fri_sid *)b);
}

static void test_sidmap_model(void **state)
{
    (void)state;
    /* seeds 7 and 8 draw from 25 times as many keys: thousands at once, so that the map's
     * blocks split, empty, merge and move */
    for (uint64_t seed = 1; seed <= 8; seed++) {
        uint64_t rs = seed * 7919, space = seed <= 6 ? 60 : 1500;
        int steps = seed <= 6 ? 6000 : 20000;
        fri_sidmap *m = fri_sidmap_new();
        fri_sid *model = NULL;
        size_t n = 0, cap = 0;
        for (int step = 0; step < steps; step++) {
            fri_sid k = {splitmix64_below(&rs, space), splitmix64_below(&rs, 4)};
            if (step > steps / 2 && splitmix64_below(&rs, 3) == 0)
                k.seq = UINT64_MAX - splitmix64_below(&rs, 2);
            void *val = (void *)(uintptr_t)(k.ms * 8 + (k.seq & 7) + 1);
            size_t pos = 0;
            while (pos < n && fri_sid_cmp(model[pos], k) < 0) pos++;
            int present = pos < n && fri_sid_cmp(model[pos], k) == 0;
            if (splitmix64_below(&rs, 5) < 3) {
                assert_int_equal(fri_sidmap_insert(m, k, val), present ? 0 : 1);
                if (!present) {
                    if (n == cap) {
                        cap = cap ? cap * 2 : 16;
                        model = realloc(model, cap * sizeof(*model));
                    }
                    memmove(&model[pos + 1], &model[pos], (n - pos) * sizeof(*model));
                    model[pos] = k;
                    n++;
                }
            } else {
                void *got = fri_sidmap_remove(m, k);
                assert_true(present ? got == val : got == NULL);
                if (present) {
                    memmove(&model[pos], &model[pos + 1], (n - pos - 1) * sizeof(*model));
                    n--;
                }
            }
            assert_int_equal(fri_sidmap_len(m), n);
            if (step % 50 == 0) assert_int_equal(fri_sidmap_check(m), 0);
            /* seeks */
            fri_sid q = {splitmix64_below(&rs, space + 2), splitmix64_below(&rs, 5)}, got;
            for (int op = FRI_SIDMAP_GE; op <= FRI_SIDMAP_LT; op++) {
                long want = -1;
                for (size_t i = 0; i < n; i++) {
                    int c = fri_sid_cmp(model[i], q);
                    if ((op == FRI_SIDMAP_GE && c >= 0) || (op == FRI_SIDMAP_GT && c > 0)) {
                        want = (long)i;
                        break;
                    }
                    if ((op == FRI_SIDMAP_LE && c <= 0) || (op == FRI_SIDMAP_LT && c < 0))
                        want = (long)i;
                }
                int found = fri_sidmap_seek(m, q, op, &got, NULL);
                assert_int_equal(found, want >= 0);
                if (found) assert_int_equal(fri_sid_cmp(got, model[want]), 0);
            }
        }
        qsort(model, n, sizeof(*model), sid_cmp_qsort);
        /* a scan that removes every other key as it goes still sees every key once */
        fri_sidmap_iter it;
        fri_sid id;
        void *v;
        size_t i = 0;
        fri_sidmap_iter_init(&it, m, FRI_SID_MIN, FRI_SID_MAX, 0);
        while (fri_sidmap_iter_next(&it, &id, &v)) {
            assert_true(i < n);
            assert_int_equal(fri_sid_cmp(id, model[i]), 0);
            if (i % 2 == 0) assert_ptr_equal(fri_sidmap_remove(m, id), v);
            i++;
        }
        assert_int_equal(i, n);
        assert_int_equal(fri_sidmap_check(m), 0);
        /* a reverse scan of a sub-range */
        if (n > 4) {
            size_t lo = 1, hi = n - 2, expect = 0;
            for (size_t j = lo; j <= hi; j++) expect += j % 2 == 1;
            size_t seen = 0;
            fri_sidmap_iter_init(&it, m, model[hi], model[lo], 1);
            fri_sid prev = FRI_SID_MAX;
            while (fri_sidmap_iter_next(&it, &id, NULL)) {
                assert_true(fri_sid_cmp(id, prev) < 0);
                prev = id;
                seen++;
            }
            assert_int_equal(seen, expect);
        }
        fri_sidmap_free(m, NULL);
        free(model);
    }
}

/* Removing the smallest key, as XACK of the oldest deliveries does (the first block's
 * start moved on), mixed with new keys above (deliveries), removals elsewhere and of absent keys,
 * checked against a model after every step. */
static void test_sidmap_remove_oldest(void **state)
{
    (void)state;
    for (uint64_t seed = 1; seed <= 4; seed++) {
        uint64_t rs = seed * 104729;
        fri_sidmap *m = fri_sidmap_new();
        fri_sid *model = malloc(40000 * sizeof(*model));
        size_t lo = 0, hi = 0; /* the model's keys: model[lo .. hi), ascending */
        uint64_t next = 1;
        for (int i = 0; i < 6000; i++, next++) {
            model[hi] = (fri_sid){next / 10, next % 10};
            assert_int_equal(fri_sidmap_insert(m, model[hi], (void *)(uintptr_t)next), 1);
            hi++;
        }
        for (int step = 0; step < 20000 && lo < hi; step++) {
            unsigned what = splitmix64_below(&rs, 20);
            if (what < 13) { /* the oldest */
                void *v = fri_sidmap_remove(m, model[lo]);
                assert_non_null(v);
                assert_int_equal(fri_sid_cmp(model[lo], (fri_sid){(uintptr_t)v / 10,
                                                                  (uintptr_t)v % 10}), 0);
                lo++;
            } else if (what < 15) { /* one already gone, or below every key */
                fri_sid gone = lo ? model[lo - 1] : (fri_sid){0, 0};
                assert_null(fri_sidmap_remove(m, gone));
            } else if (what < 18 && hi < 40000) { /* a delivery */
                model[hi] = (fri_sid){next / 10, next % 10};
                assert_int_equal(fri_sidmap_insert(m, model[hi], (void *)(uintptr_t)next), 1);
                hi++;
                next++;
            } else if (hi - lo > 2) { /* one in the middle */
                size_t at = lo + 1 + splitmix64_below(&rs, (unsigned)(hi - lo - 1));
                assert_non_null(fri_sidmap_remove(m, model[at]));
                memmove(&model[at], &model[at + 1], (hi - at - 1) * sizeof(*model));
                hi--;
            }
            assert_int_equal(fri_sidmap_len(m), hi - lo);
            if (step % 500 == 0) assert_int_equal(fri_sidmap_check(m), 0);
            fri_sid first;
            if (lo < hi) {
                assert_true(fri_sidmap_first(m, &first, NULL));
                assert_int_equal(fri_sid_cmp(first, model[lo]), 0);
            }
        }
        assert_int_equal(fri_sidmap_check(m), 0);
        fri_sidmap_iter it;
        fri_sid id;
        fri_sidmap_iter_init(&it, m, FRI_SID_MIN, FRI_SID_MAX, 0);
        size_t i = lo;
        while (fri_sidmap_iter_next(&it, &id, NULL)) assert_int_equal(fri_sid_cmp(id, model[i++]), 0);
        assert_int_equal(i, hi);
        fri_sidmap_free(m, NULL);
        free(model);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_sid_parse),
        cmocka_unit_test(test_sid_parse_plain),
        cmocka_unit_test(test_sid_incr_decr_format),
        cmocka_unit_test(test_id_generation_clock),
        cmocka_unit_test(test_store_against_model),
        cmocka_unit_test(test_store_large),
        cmocka_unit_test(test_binary_values),
        cmocka_unit_test(test_node_boundaries),
        cmocka_unit_test(test_node_params),
        cmocka_unit_test(test_big_node_iterators),
        cmocka_unit_test(test_dump),
        cmocka_unit_test(test_sidmap_model),
        cmocka_unit_test(test_sidmap_remove_oldest),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
