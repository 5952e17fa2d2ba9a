/* test_zset.c -- the sorted set's ordered index (zskiplist.c) and the type around it
 * (t_zset.c), checked against a simple model.
 *
 * The model is a sorted array of (score, member) pairs, searched linearly: slow, but
 * obviously right.  Thousands of seeded random inserts, score updates and deletes run on
 * the skiplist and the model side by side; after each step the list's invariants (order,
 * spans, backward links, length, tail) are checked, and regularly every rank, every
 * element at a rank, and random score and lexicographic range searches are compared.
 * Members are short byte strings over a tiny alphabet that includes NUL, and scores come
 * from a small set with infinities, so ties on the score, shared prefixes and binary
 * members happen all the time.
 *
 * A second part drives the commands through the public API (ZADD, ZINCRBY, ZREM,
 * ZRANGE, ZRANGEBYSCORE, ZRANK, ZPOPMIN ...) against the same kind of model, across the
 * 128-member point where Redis changes encoding.  A failure prints the seed and step.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "fakeredis.h"
#include "test_rng.h"
#include "zskiplist.h"


/* ----- The model ----------------------------------------------------------------------- */

#define MEMBER_MAX 4

typedef struct entry {
    double score;
    char mem[MEMBER_MAX];
    size_t len;
} entry;

typedef struct model {
    entry *e;   /* sorted by (score, member bytes) */
    size_t n;
    size_t cap;
} model;

static int entry_cmp(double s1, const char *m1, size_t l1, double s2, const char *m2, size_t l2)
{
    if (s1 < s2) return -1;
    if (s1 > s2) return 1;
    return fri_zsl_member_cmp(m1, l1, m2, l2);
}

/* Index of member in the model, or -1. */
static long model_find(const model *m, const char *mem, size_t len)
{
    for (size_t i = 0; i < m->n; i++)
        if (m->e[i].len == len && (len == 0 || memcmp(m->e[i].mem, mem, len) == 0))
            return (long)i;
    return -1;
}

static void model_insert(model *m, double score, const char *mem, size_t len)
{
    if (m->n == m->cap) {
        m->cap = m->cap ? m->cap * 2 : 64;
        m->e = realloc(m->e, m->cap * sizeof(entry));
        assert_non_null(m->e);
    }
    size_t i = 0;
    while (i < m->n && entry_cmp(m->e[i].score, m->e[i].mem, m->e[i].len, score, mem, len) < 0)
        i++;
    memmove(&m->e[i + 1], &m->e[i], (m->n - i) * sizeof(entry));
    m->e[i].score = score;
    if (len) memcpy(m->e[i].mem, mem, len);
    m->e[i].len = len;
    m->n++;
}

static void model_remove_at(model *m, size_t i)
{
    memmove(&m->e[i], &m->e[i + 1], (m->n - i - 1) * sizeof(entry));
    m->n--;
}

/* Scores with many ties, both infinities and a negative and a fractional value. */
static double random_score(uint64_t *s)
{
    static const double scores[] = {-INFINITY, -2, -1, 0, 0.5, 1, 1, 2, 3, 1e300, INFINITY};
    return scores[splitmix64_below(s, sizeof(scores) / sizeof(scores[0]))];
}

/* 0..MEMBER_MAX bytes over {NUL, 'a', 'b', 0xff}. */
static size_t random_member(uint64_t *s, char *out)
{
    static const char alphabet[] = {'\0', 'a', 'b', (char)0xff};
    size_t len = splitmix64_below(s, MEMBER_MAX + 1);
    for (size_t i = 0; i < len; i++) out[i] = alphabet[splitmix64_below(s, 4)];
    return len;
}

/* ----- Comparing the list with the model ----------------------------------------------- */

static void assert_node_is(const fri_zsl_node *n, const entry *e)
{
    assert_non_null(n);
    assert_true(n->score == e->score || (isnan(n->score) && isnan(e->score)));
    assert_int_equal(n->len, e->len);
    if (e->len) assert_memory_equal(n->ele, e->mem, e->len);
}

static void check_full(const fri_zsl *zsl, const model *m)
{
    assert_int_equal(fri_zsl_check(zsl), 0);
    assert_int_equal(zsl->length, m->n);
    const fri_zsl_node *n = fri_zsl_first(zsl);
    for (size_t i = 0; i < m->n; i++, n = n->level[0].forward) {
        assert_node_is(n, &m->e[i]);
        assert_int_equal(fri_zsl_rank(zsl, m->e[i].score, m->e[i].mem, m->e[i].len), i + 1);
        assert_ptr_equal(fri_zsl_by_rank(zsl, i + 1), n);
    }
    assert_null(n);
    assert_null(fri_zsl_by_rank(zsl, 0));
    assert_null(fri_zsl_by_rank(zsl, m->n + 1));
    if (m->n) assert_node_is(fri_zsl_last(zsl), &m->e[m->n - 1]);
    else assert_null(fri_zsl_last(zsl));
}

static int in_score_range(double v, const fri_zrangespec *r)
{
    return (r->minex ? v > r->min : v >= r->min) && (r->maxex ? v < r->max : v <= r->max);
}

/* A range search found f and l, the first and last nodes in range: they must be the
 * model's elements first and last, or both NULL when first < 0 (nothing in range). */
static void assert_range_ends(fri_zsl_node *f, fri_zsl_node *l, const model *m, long first,
                              long last)
{
    if (first < 0) {
        assert_null(f);
        assert_null(l);
        return;
    }
    assert_node_is(f, &m->e[first]);
    assert_node_is(l, &m->e[last]);
}

/* A random score interval and the model's first and last element inside it. */
static void check_score_range(const fri_zsl *zsl, const model *m, uint64_t *s)
{
    fri_zrangespec r = {random_score(s), random_score(s), (int)splitmix64_below(s, 2),
                        (int)splitmix64_below(s, 2)};
    long first = -1, last = -1;
    for (size_t i = 0; i < m->n; i++) {
        if (in_score_range(m->e[i].score, &r)) {
            if (first < 0) first = (long)i;
            last = (long)i;
        }
    }
    assert_range_ends(fri_zsl_first_in_range(zsl, &r), fri_zsl_last_in_range(zsl, &r), m,
                      first, last);
}

/* A random lexicographic bound: "-", "+", or a member with "(" or "[". */
static void random_lex_bound(uint64_t *s, fri_zlex_kind *kind, const char **p, size_t *len,
                             int *ex, char *buf)
{
    unsigned k = splitmix64_below(s, 10);
    *p = NULL;
    *len = 0;
    if (k == 0) {
        *kind = FRI_ZLEX_MIN;
        *ex = 1;
    } else if (k == 1) {
        *kind = FRI_ZLEX_MAX;
        *ex = 1;
    } else {
        *kind = FRI_ZLEX_BYTES;
        *ex = (int)splitmix64_below(s, 2);
        *len = random_member(s, buf);
        *p = buf;
    }
}

static int lex_bound_cmp(const entry *e, fri_zlex_kind kind, const char *p, size_t len)
{
    if (kind == FRI_ZLEX_MIN) return 1;
    if (kind == FRI_ZLEX_MAX) return -1;
    return fri_zsl_member_cmp(e->mem, e->len, p, len);
}

/* Every score is equal in the lex list, so the model just filters by member. */
static void check_lex_range(const fri_zsl *zsl, const model *m, uint64_t *s)
{
    char minbuf[MEMBER_MAX], maxbuf[MEMBER_MAX];
    fri_zlexspec r;
    random_lex_bound(s, &r.minkind, &r.min, &r.minlen, &r.minex, minbuf);
    random_lex_bound(s, &r.maxkind, &r.max, &r.maxlen, &r.maxex, maxbuf);
    long first = -1, last = -1;
    for (size_t i = 0; i < m->n; i++) {
        int cmin = lex_bound_cmp(&m->e[i], r.minkind, r.min, r.minlen);
        int cmax = lex_bound_cmp(&m->e[i], r.maxkind, r.max, r.maxlen);
        int in = (r.minex ? cmin > 0 : cmin >= 0) && (r.maxex ? cmax < 0 : cmax <= 0);
        assert_int_equal(fri_zsl_lex_gte_min(m->e[i].mem, m->e[i].len, &r),
                         r.minex ? cmin > 0 : cmin >= 0);
        assert_int_equal(fri_zsl_lex_lte_max(m->e[i].mem, m->e[i].len, &r),
                         r.maxex ? cmax < 0 : cmax <= 0);
        if (in) {
            if (first < 0) first = (long)i;
            last = (long)i;
        }
    }
    assert_range_ends(fri_zsl_first_in_lex_range(zsl, &r), fri_zsl_last_in_lex_range(zsl, &r),
                      m, first, last);
}

/* ----- The skiplist against the model ------------------------------------------------------ */

static void count_deleted(fri_zsl_node *n, void *ctx)
{
    (void)n;
    (*(size_t *)ctx)++;
}

/* One seeded run of steps random operations; lex = every score 0 (lex searches). */
static void run_skiplist(uint64_t seed, int steps, int lex)
{
    uint64_t s = seed;
    fri_zsl *zsl = fri_zsl_new();
    assert_non_null(zsl);
    model m = {0};

    for (int step = 0; step < steps; step++) {
        char mem[MEMBER_MAX];
        size_t len = random_member(&s, mem);
        double score = lex ? 0 : random_score(&s);
        long at = model_find(&m, mem, len);
        unsigned op = splitmix64_below(&s, 100);

        if (op < 50) {
            /* insert, or move an existing member to a new score */
            if (at < 0) {
                fri_zsl_node *n = fri_zsl_insert(zsl, score, mem, len);
                assert_non_null(n);
                model_insert(&m, score, mem, len);
            } else {
                entry old = m.e[at];
                fri_zsl_node *n = fri_zsl_by_rank(zsl, (size_t)at + 1);
                assert_node_is(n, &old);
                fri_zsl_update_score(zsl, n, score);
                model_remove_at(&m, (size_t)at);
                model_insert(&m, score, mem, len);
                /* the node itself moved: pointers to it stay valid */
                size_t rank = fri_zsl_rank(zsl, score, mem, len);
                assert_ptr_equal(fri_zsl_by_rank(zsl, rank), n);
                assert_true(n->score == score);
            }
        } else if (op < 85) {
            /* delete by (score, member): wrong score or absent member removes nothing */
            if (at >= 0) {
                if (!lex && m.e[at].score != score)
                    assert_int_equal(fri_zsl_delete(zsl, score, mem, len), 0);
                assert_int_equal(fri_zsl_delete(zsl, m.e[at].score, mem, len), 1);
                model_remove_at(&m, (size_t)at);
            } else {
                assert_int_equal(fri_zsl_delete(zsl, score, mem, len), 0);
            }
        } else if (op < 88 && m.n) {
            /* delete a run of ranks, sometimes past the end */
            size_t start = 1 + splitmix64_below(&s, (unsigned)m.n);
            size_t end = start + splitmix64_below(&s, 4);
            size_t seen = 0;
            size_t removed = fri_zsl_delete_range_by_rank(zsl, start, end, count_deleted, &seen);
            size_t expect = (end > m.n ? m.n : end) - start + 1;
            assert_int_equal(removed, expect);
            assert_int_equal(seen, expect);
            for (size_t i = 0; i < expect; i++) model_remove_at(&m, start - 1);
        } else {
            if (lex) check_lex_range(zsl, &m, &s);
            else check_score_range(zsl, &m, &s);
        }

        if (fri_zsl_check(zsl) != 0 || zsl->length != m.n)
            fail_msg("seed %llu step %d: list broken (check %d, length %zu, model %zu)",
                     (unsigned long long)seed, step, fri_zsl_check(zsl), zsl->length, m.n);
        if (step % 97 == 0) check_full(zsl, &m);
    }
    check_full(zsl, &m);
    fri_zsl_free(zsl);
    free(m.e);
}

static void test_skiplist_random_scores(void **state)
{
    (void)state;
    for (uint64_t seed = 1; seed <= 8; seed++) run_skiplist(seed, 5000, 0);
}

static void test_skiplist_random_lex(void **state)
{
    (void)state;
    for (uint64_t seed = 100; seed <= 105; seed++) run_skiplist(seed, 4000, 1);
}

/* Many members so the list grows tall; ranks still add up and scans see every one. */
static void test_skiplist_large(void **state)
{
    (void)state;
    fri_zsl *zsl = fri_zsl_new();
    assert_non_null(zsl);
    char buf[16];
    const int n = 50000;
    for (int i = 0; i < n; i++) {
        int len = snprintf(buf, sizeof(buf), "m%06d", (i * 7919) % n);
        assert_non_null(fri_zsl_insert(zsl, (double)((i * 7919) % n / 10), buf, (size_t)len));
    }
    assert_int_equal(fri_zsl_check(zsl), 0);
    assert_true(zsl->level > 4);
    for (int k = 0; k < n; k += 1234) {
        int len = snprintf(buf, sizeof(buf), "m%06d", k);
        assert_int_equal(fri_zsl_rank(zsl, (double)(k / 10), buf, (size_t)len), (size_t)k + 1);
        fri_zsl_node *node = fri_zsl_by_rank(zsl, (size_t)k + 1);
        assert_string_equal(node->ele, buf);
    }
    fri_zrangespec r = {100, 200, 1, 0}; /* (100, 200]: members 1010..2009 */
    assert_string_equal(fri_zsl_first_in_range(zsl, &r)->ele, "m001010");
    assert_string_equal(fri_zsl_last_in_range(zsl, &r)->ele, "m002009");
    /* delete every other tenth */
    size_t removed = 0;
    for (size_t rank = 1; rank <= zsl->length; rank += 9)
        removed += fri_zsl_delete_range_by_rank(zsl, rank, rank, NULL, NULL);
    assert_int_equal(zsl->length, (size_t)n - removed);
    assert_int_equal(fri_zsl_check(zsl), 0);
    fri_zsl_free(zsl);
}

/* The empty list and the bounds of the interval predicates. */
static void test_skiplist_edges(void **state)
{
    (void)state;
    fri_zsl *zsl = fri_zsl_new();
    assert_non_null(zsl);
    assert_int_equal(fri_zsl_check(zsl), 0);
    fri_zrangespec all = {-INFINITY, INFINITY, 0, 0};
    assert_null(fri_zsl_first_in_range(zsl, &all));
    assert_null(fri_zsl_last_in_range(zsl, &all));
    assert_int_equal(fri_zsl_rank(zsl, 0, "a", 1), 0);
    assert_int_equal(fri_zsl_delete_range_by_rank(zsl, 1, 10, NULL, NULL), 0);

    assert_non_null(fri_zsl_insert(zsl, INFINITY, "x", 1));
    assert_non_null(fri_zsl_insert(zsl, -INFINITY, "y", 1));
    assert_non_null(fri_zsl_insert(zsl, 1, "", 0));
    fri_zrangespec pinf = {INFINITY, INFINITY, 0, 0};
    assert_string_equal(fri_zsl_first_in_range(zsl, &pinf)->ele, "x");
    fri_zrangespec empty = {1, 1, 1, 0}; /* (1 1 */
    assert_null(fri_zsl_first_in_range(zsl, &empty));
    fri_zrangespec backwards = {2, 1, 0, 0};
    assert_null(fri_zsl_last_in_range(zsl, &backwards));

    fri_zlexspec same = {FRI_ZLEX_MIN, FRI_ZLEX_MIN, NULL, NULL, 0, 0, 1, 1}; /* - - */
    assert_true(fri_zsl_lex_range_empty(&same));
    fri_zlexspec inv = {FRI_ZLEX_MAX, FRI_ZLEX_MIN, NULL, NULL, 0, 0, 1, 1}; /* + - */
    assert_true(fri_zsl_lex_range_empty(&inv));
    fri_zlexspec whole = {FRI_ZLEX_MIN, FRI_ZLEX_MAX, NULL, NULL, 0, 0, 1, 1}; /* - + */
    assert_false(fri_zsl_lex_range_empty(&whole));
    fri_zlexspec point = {FRI_ZLEX_BYTES, FRI_ZLEX_BYTES, "a", "a", 1, 1, 0, 0}; /* [a [a */
    assert_false(fri_zsl_lex_range_empty(&point));
    point.minex = 1; /* (a [a */
    assert_true(fri_zsl_lex_range_empty(&point));
    fri_zsl_free(zsl);
}

/* ----- The commands against the model ------------------------------------------------------ */

typedef struct api {
    fr_server *srv;
    fr_client *c;
} api;

static const fr_reply *cmd(api *a, const char *const *argv, const size_t *lens, int argc)
{
    return fr_exec(a->c, argc, argv, lens);
}

/* Runs a command given as NUL-terminated words. */
static const fr_reply *cmdv(api *a, int argc, ...)
{
    const char *argv[16];
    va_list ap;
    va_start(ap, argc);
    for (int i = 0; i < argc; i++) argv[i] = va_arg(ap, const char *);
    va_end(ap);
    return cmd(a, argv, NULL, argc);
}

static double reply_double(const fr_reply *r)
{
    assert_int_equal(r->type, FR_REPLY_BULK);
    if (strcmp(r->str, "inf") == 0) return INFINITY;
    if (strcmp(r->str, "-inf") == 0) return -INFINITY;
    char *end;
    double d = strtod(r->str, &end);
    assert_true(*end == '\0');
    return d;
}

/* ZRANGE key 0 -1 WITHSCORES must list the model exactly. */
static void api_check_all(api *a, const model *m)
{
    const fr_reply *r = cmdv(a, 5, "ZRANGE", "k", "0", "-1", "WITHSCORES");
    assert_int_equal(r->type, FR_REPLY_ARRAY);
    assert_int_equal(r->count, m->n * 2);
    for (size_t i = 0; i < m->n; i++) {
        const fr_reply *mem = &r->elements[2 * i];
        assert_int_equal(mem->type, FR_REPLY_BULK);
        assert_int_equal(mem->len, m->e[i].len);
        if (m->e[i].len) assert_memory_equal(mem->str, m->e[i].mem, m->e[i].len);
        assert_true(reply_double(&r->elements[2 * i + 1]) == m->e[i].score);
    }
    r = cmdv(a, 2, "ZCARD", "k");
    assert_int_equal(r->type, FR_REPLY_INTEGER);
    assert_int_equal(r->integer, (long long)m->n);
}

static void format_score(double d, char *buf, size_t cap)
{
    if (isinf(d)) snprintf(buf, cap, "%s", d > 0 ? "+inf" : "-inf");
    else snprintf(buf, cap, "%.17g", d);
}

static void test_commands_against_model(void **state)
{
    (void)state;
    for (uint64_t seed = 1; seed <= 3; seed++) {
        uint64_t s = seed * 1000003;
        fr_config cfg = fr_config_default();
        api a = {fr_server_new(&cfg), NULL};
        assert_non_null(a.srv);
        a.c = fr_client_new(a.srv);
        assert_non_null(a.c);
        model m = {0};

        for (int step = 0; step < 3000; step++) {
            /* members "m0".."m299" so the set crosses 128 members and back */
            char mem[8], sc[40];
            int len = snprintf(mem, sizeof(mem), "m%u", splitmix64_below(&s, 300));
            double score = (double)((int)splitmix64_below(&s, 21) - 10) / 2;
            format_score(score, sc, sizeof(sc));
            long at = model_find(&m, mem, (size_t)len);
            unsigned op = splitmix64_below(&s, 100);
            const fr_reply *r;

            if (op < 45) {
                r = cmdv(&a, 4, "ZADD", "k", sc, mem);
                assert_int_equal(r->type, FR_REPLY_INTEGER);
                assert_int_equal(r->integer, at < 0 ? 1 : 0);
                if (at >= 0) model_remove_at(&m, (size_t)at);
                model_insert(&m, score, mem, (size_t)len);
            } else if (op < 55) {
                r = cmdv(&a, 4, "ZINCRBY", "k", sc, mem);
                double nv = (at < 0 ? 0 : m.e[at].score) + score;
                if (nv == 0) nv = 0; /* no -0 here: small sets store 0 */
                assert_true(reply_double(r) == nv);
                if (at >= 0) model_remove_at(&m, (size_t)at);
                model_insert(&m, nv, mem, (size_t)len);
            } else if (op < 80) {
                r = cmdv(&a, 3, "ZREM", "k", mem);
                assert_int_equal(r->integer, at < 0 ? 0 : 1);
                if (at >= 0) model_remove_at(&m, (size_t)at);
            } else if (op < 85) {
                r = cmdv(&a, 3, "ZRANK", "k", mem);
                if (at < 0) assert_int_equal(r->type, FR_REPLY_NIL);
                else assert_int_equal(r->integer, at);
                r = cmdv(&a, 3, "ZREVRANK", "k", mem);
                if (at >= 0) assert_int_equal(r->integer, (long long)m.n - 1 - at);
            } else if (op < 95) {
                /* ZRANGEBYSCORE (lo hi] LIMIT off cnt against the model */
                double lo = score, hi = lo + splitmix64_below(&s, 6);
                char los[48], his[48], offs[16], cnts[16];
                snprintf(los, sizeof(los), "(%.17g", lo);
                snprintf(his, sizeof(his), "%.17g", hi);
                unsigned off = splitmix64_below(&s, 5), cnt = splitmix64_below(&s, 10);
                snprintf(offs, sizeof(offs), "%u", off);
                snprintf(cnts, sizeof(cnts), "%u", cnt);
                r = cmdv(&a, 7, "ZRANGEBYSCORE", "k", los, his, "LIMIT", offs, cnts);
                assert_int_equal(r->type, FR_REPLY_ARRAY);
                size_t got = 0, skipped = 0;
                for (size_t i = 0; i < m.n && got < cnt; i++) {
                    if (!(m.e[i].score > lo && m.e[i].score <= hi)) continue;
                    if (skipped++ < off) continue;
                    assert_true(got < r->count);
                    assert_int_equal(r->elements[got].len, m.e[i].len);
                    assert_memory_equal(r->elements[got].str, m.e[i].mem, m.e[i].len);
                    got++;
                }
                assert_int_equal(r->count, got);
            } else {
                /* pop from one end */
                int max = splitmix64_below(&s, 2);
                r = cmdv(&a, 2, max ? "ZPOPMAX" : "ZPOPMIN", "k");
                assert_int_equal(r->type, FR_REPLY_ARRAY);
                if (m.n == 0) {
                    assert_int_equal(r->count, 0);
                } else {
                    size_t i = max ? m.n - 1 : 0;
                    assert_int_equal(r->count, 2);
                    assert_int_equal(r->elements[0].len, m.e[i].len);
                    assert_memory_equal(r->elements[0].str, m.e[i].mem, m.e[i].len);
                    assert_true(reply_double(&r->elements[1]) == m.e[i].score);
                    model_remove_at(&m, i);
                }
            }
            if (step % 50 == 0) api_check_all(&a, &m);
        }
        api_check_all(&a, &m);
        fr_client_free(a.c);
        fr_server_free(a.srv);
        free(m.e);
    }
}

/* An absurd negative count is answered with an error, not a reply that exhausts memory
 * (or takes for ever to build). */
static void test_zrandmember_absurd_count(void **state)
{
    (void)state;
    fr_server *srv = fr_server_new(NULL);
    fr_client *c = fr_client_new(srv);
    fr_exec_line(c, "ZADD z 1 a");
    const fr_reply *r = fr_exec_line(c, "ZRANDMEMBER z -100000000000 WITHSCORES");
    assert_int_equal(r->type, FR_REPLY_ERROR);
    assert_string_equal(r->str, "OOM command not allowed when used memory > 'maxmemory'.");
    r = fr_exec_line(c, "ZRANDMEMBER z -3 WITHSCORES");
    assert_int_equal(r->type, FR_REPLY_ARRAY);
    assert_int_equal(r->count, 6);
    fr_server_free(srv);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_zrandmember_absurd_count),
        cmocka_unit_test(test_skiplist_random_scores),
        cmocka_unit_test(test_skiplist_random_lex),
        cmocka_unit_test(test_skiplist_large),
        cmocka_unit_test(test_skiplist_edges),
        cmocka_unit_test(test_commands_against_model),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
