/* test_sort.c -- SORT and SORT_RO (t_sort.c) where the differential scripts cannot look,
 * or cannot look often enough.
 *
 * - Models: LIMIT against its definition (the elements at offset .. offset+count-1 of the
 *   sorted sequence that exist; a negative offset is 0, a negative count runs to the end)
 *   over random lists, offsets and counts up to the 64-bit edges, for sorting, for BY
 *   nosort on lists and sorted sets (DESC reverses them), and for sets (intsets answer
 *   in ascending order).
 * - Ties: without LIMIT, ALPHA with a BY pattern keeps tied elements in their list order
 *   (glibc's qsort is a stable merge sort), checked against a stable model; with a LIMIT
 *   that cuts, pqsort's window holds the model's keys in order, and the tie orders that
 *   redis-server 7.0.15 answered for a few lists are reproduced exactly.
 * - Numbers read as strtod reads them, and Redis's sticky errno: an ERANGE left behind
 *   fails later numeric sorts until something resets it; what Redis holds as an integer
 *   is read without strtod (list elements, SET's and INCR's strings, listpack hash
 *   values), what it holds as a string is not (APPEND, SETRANGE, SETBIT, INCRBYFLOAT,
 *   set members); XADD's error text follows errno == EDOM.
 * - STORE on the virtual clock and with WATCH: the destination replaced whatever it was,
 *   its TTL dropped, deleted by an empty result (a missing one is not touched).
 * - A sorted set becomes a skiplist for good: a -0 score keeps its sign afterwards.
 * - The command table and the key positions SORT's getkeys finds, CROSSSLOT included.
 */
#include <limits.h>
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
#include "test_rng.h"

/* A fresh server on the default config and two clients (c2 for WATCH). */
typedef fake_fixture fixture;
#define TEST(fn) FAKE_TEST2(fn)

#define INT(c, ...) fake_int_reply(fake_run((c), __VA_ARGS__))
#define OK(c, ...) fake_ok_reply(fake_run((c), __VA_ARGS__))
#define RESP(c, ...) fake_resp(fake_run((c), __VA_ARGS__))
#define RESP_EQ(c, expected, ...) assert_string_equal(RESP((c), __VA_ARGS__), (expected))

#define ERR_SCORES "-ERR One or more scores can't be converted into double\r\n"

/* The reply's elements as one space-separated line ("nil" for a nil), for comparisons. */
static const char *words(const fr_reply *r)
{
    static char buf[8192];
    size_t n = 0;
    buf[0] = '\0';
    assert_int_equal(r->type, FR_REPLY_ARRAY);
    for (size_t i = 0; i < r->count; i++) {
        const fr_reply *e = &r->elements[i];
        int w = e->type == FR_REPLY_NIL
                    ? snprintf(buf + n, sizeof(buf) - n, "%snil", i ? " " : "")
                    : snprintf(buf + n, sizeof(buf) - n, "%s%.*s", i ? " " : "", (int)e->len,
                               e->str);
        assert_true(w >= 0 && (size_t)w < sizeof(buf) - n);
        n += (size_t)w;
    }
    return buf;
}
#define WORDS(c, ...) words(fake_run((c), __VA_ARGS__))

/* ----- LIMIT against its definition ----------------------------------------------------- */

/* The window of a sequence of len items that LIMIT offset count means: *first and the
 * number of items, written from the documentation rather than from Redis's clamping. */
static size_t model_window(long long len, long long offset, long long count, long long *first)
{
    if (offset < 0) offset = 0;
    *first = offset;
    if (offset >= len || count == 0) return 0;
    long long left = len - offset;
    return (size_t)(count < 0 || count > left ? left : count);
}

static const long long LIMIT_EDGES[] = {0, 1, 2, 3, 5, 8, -1, -2, -100, 100, LLONG_MAX,
                                        LLONG_MIN, LLONG_MAX - 1, LLONG_MIN + 1};

/* One value of LIMIT_EDGES or a small number, at random. */
static long long limit_arg(uint64_t *seed)
{
    if (splitmix64_below(seed, 2)) return (long long)splitmix64_below(seed, 12) - 2;
    return LIMIT_EDGES[splitmix64_below(seed, sizeof(LIMIT_EDGES) / sizeof(LIMIT_EDGES[0]))];
}

/* Lists of distinct integers (so the numeric order is total), and the same numbers as an
 * intset and a sorted set (score = member): SORT, SORT ... DESC, BY nosort on each. */
static void test_limit_model(void **state)
{
    fixture *f = *state;
    uint64_t seed = 7;
    for (int round = 0; round < 60; round++) {
        long long len = (long long)splitmix64_below(&seed, 12);
        long long vals[16], sorted[16];
        OK(f->c, "FLUSHALL");
        for (long long i = 0; i < len; i++) {
            /* distinct: i plus a multiple of 16, shuffled by the draw */
            vals[i] = i + 16 * (long long)splitmix64_below(&seed, 50) - 300;
            fake_int_reply(fake_run(f->c, "RPUSH l %lld", vals[i]));
            fake_int_reply(fake_run(f->c, "SADD s %lld", vals[i]));
            fake_int_reply(fake_run(f->c, "ZADD z %lld %lld", vals[i], vals[i]));
            sorted[i] = vals[i];
        }
        for (long long i = 1; i < len; i++)
            for (long long j = i; j > 0 && sorted[j - 1] > sorted[j]; j--) {
                long long t = sorted[j];
                sorted[j] = sorted[j - 1];
                sorted[j - 1] = t;
            }
        for (int q = 0; q < 25; q++) {
            long long off = limit_arg(&seed), cnt = limit_arg(&seed), first;
            size_t n = model_window(len, off, cnt, &first);
            for (int form = 0; form < 6; form++) {
                static const char *const cmds[] = {
                    "SORT l LIMIT %lld %lld",       "SORT l DESC LIMIT %lld %lld",
                    "SORT l BY nosort LIMIT %lld %lld", "SORT l BY nosort DESC LIMIT %lld %lld",
                    "SORT z BY nosort DESC LIMIT %lld %lld", "SORT_RO s BY nosort LIMIT %lld %lld",
                };
                char want[4096];
                size_t w = 0;
                want[0] = '\0';
                for (size_t k = 0; k < n; k++) {
                    long long idx = first + (long long)k, v;
                    switch (form) {
                    case 1: case 4: v = sorted[len - 1 - idx]; break;
                    case 2: v = vals[idx]; break;
                    case 3: v = vals[len - 1 - idx]; break;
                    default: v = sorted[idx]; break; /* an intset answers ascending */
                    }
                    w += (size_t)snprintf(want + w, sizeof(want) - w, "%s%lld", k ? " " : "", v);
                }
                const char *got = WORDS(f->c, cmds[form], off, cnt);
                if (strcmp(got, want) != 0)
                    print_message("round %d: %s with %lld %lld on %lld items\n", round,
                                  cmds[form], off, cnt, len);
                assert_string_equal(got, want);
            }
        }
    }
}

/* ----- Ties ----------------------------------------------------------------------------- */

/* Stable insertion sort of idx[0..n) by key (NULL first; bytes up to a NUL, as strcoll in
 * the C locale), reversed comparisons for desc: the order Redis's stable qsort gives. */
static void model_stable(int *idx, size_t n, const char *const *key, int desc)
{
    for (size_t i = 1; i < n; i++) {
        for (size_t j = i; j > 0; j--) {
            const char *a = key[idx[j - 1]], *b = key[idx[j]];
            int cmp = !a || !b ? (a == b ? 0 : !a ? -1 : 1) : strcmp(a, b);
            if (desc) cmp = -cmp;
            if (cmp <= 0) break;
            int t = idx[j];
            idx[j] = idx[j - 1];
            idx[j - 1] = t;
        }
    }
}

/* ALPHA BY over few distinct values (some missing): without LIMIT the order is the stable
 * model's, ASC and DESC alike; with a LIMIT that cuts (pqsort), each position of the
 * window holds the model's key there, whatever the order among equal keys. */
static void test_ties_model(void **state)
{
    fixture *f = *state;
    uint64_t seed = 11;
    static const char *const keys[] = {NULL, "a", "b", "c", "a\\x00z"};
    static const char *const cvals[] = {NULL, "a", "b", "c", "a"}; /* strcoll sees "a" */
    for (int round = 0; round < 40; round++) {
        size_t n = 1 + splitmix64_below(&seed, 60);
        const char *key[64];
        OK(f->c, "FLUSHALL");
        for (size_t i = 0; i < n; i++) {
            unsigned k = splitmix64_below(&seed, 5);
            key[i] = cvals[k];
            fake_int_reply(fake_run(f->c, "RPUSH l %zu", i));
            if (keys[k]) OK(f->c, "SET w_%zu \"%s\"", i, keys[k]);
        }
        for (int desc = 0; desc < 2; desc++) {
            int idx[64];
            for (size_t i = 0; i < n; i++) idx[i] = (int)i;
            model_stable(idx, n, key, desc);
            char want[1024];
            size_t w = 0;
            want[0] = '\0';
            for (size_t i = 0; i < n; i++)
                w += (size_t)snprintf(want + w, sizeof(want) - w, "%s%d", i ? " " : "", idx[i]);
            assert_string_equal(WORDS(f->c, "SORT l BY w_* ALPHA%s", desc ? " DESC" : ""), want);

            long long off = (long long)splitmix64_below(&seed, (unsigned)n);
            long long cnt = 1 + (long long)splitmix64_below(&seed, (unsigned)n);
            const fr_reply *r =
                fake_run(f->c, "SORT l BY w_* ALPHA%s LIMIT %lld %lld", desc ? " DESC" : "", off, cnt);
            long long first;
            size_t m = model_window((long long)n, off, cnt, &first);
            assert_int_equal(r->type, FR_REPLY_ARRAY);
            assert_int_equal(r->count, m);
            for (size_t i = 0; i < m; i++) {
                int got = atoi(r->elements[i].str);
                const char *a = key[got], *b = key[idx[first + (long long)i]];
                assert_true(a == b || (a && b && strcmp(a, b) == 0));
            }
        }
    }
}

/* Tie orders redis-server 7.0.15 answered (tests/diff/sort.redis has them too): every
 * BY key missing, so all sixteen elements tie, and pqsort's swaps decide. */
static void test_pqsort_recorded(void **state)
{
    fixture *f = *state;
    fake_int_reply(fake_run(f->c, "RPUSH t 5 3 9 1 7 2 8 4 6 0 11 15 13 12 14 10"));
    assert_string_equal(WORDS(f->c, "SORT t BY nokey_* ALPHA"),
                        "5 3 9 1 7 2 8 4 6 0 11 15 13 12 14 10");
    assert_string_equal(WORDS(f->c, "SORT t BY nokey_* ALPHA DESC"),
                        "5 3 9 1 7 2 8 4 6 0 11 15 13 12 14 10");
    assert_string_equal(WORDS(f->c, "SORT t BY nokey_* ALPHA LIMIT 0 5"), "10 3 9 1 7");
    assert_string_equal(WORDS(f->c, "SORT t BY nokey_* ALPHA LIMIT 3 4"), "1 7 2 8");
    assert_string_equal(WORDS(f->c, "SORT t BY nokey_* ALPHA LIMIT 10 40"), "11 15 13 12 14 5");
    OK(f->c, "MSET w_5 b w_3 a w_9 b w_1 a");
    assert_string_equal(WORDS(f->c, "SORT t BY w_* ALPHA"),
                        "7 2 8 4 6 0 11 15 13 12 14 10 3 1 5 9");
    assert_string_equal(WORDS(f->c, "SORT t BY w_* ALPHA LIMIT 0 6"), "10 15 13 12 14 7");
    assert_string_equal(WORDS(f->c, "SORT t BY w_* ALPHA DESC LIMIT 0 6"), "9 5 1 3 4 6");
    /* numbers never tie unless the elements are equal: the bytes decide */
    fake_int_reply(fake_run(f->c, "RPUSH n 1.0 01 1 1e0 +1 0x1 \" 1\""));
    assert_string_equal(WORDS(f->c, "SORT n"), " 1 +1 01 0x1 1 1.0 1e0");
    assert_string_equal(WORDS(f->c, "SORT n DESC"), "1e0 1.0 1 0x1 01 +1  1");
}

/* ----- Numbers and Redis's errno -------------------------------------------------------- */

/* What strtod accepts: spaces before, hex, inf, "" as 0; not bytes after, nan, overflow. */
static void test_numbers(void **state)
{
    fixture *f = *state;
    fake_int_reply(fake_run(f->c, "RPUSH l 0x10 \" 4\" \"\" inf -inf 1e308 -0 3e-5"));
    assert_string_equal(WORDS(f->c, "SORT l"), "-inf  -0 3e-5  4 0x10 1e308 inf");
    static const char *const bad[] = {"abc", "\"1 \"", "nan", "-nan", "1e400", "\" \""};
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        OK(f->c, "FLUSHALL");
        fake_int_reply(fake_run(f->c, "RPUSH l 1 %s", bad[i]));
        RESP_EQ(f->c, ERR_SCORES, "SORT l");
        assert_int_equal(fake_run(f->c, "SORT l ALPHA")->type, FR_REPLY_ARRAY);
        fake_run(f->c, "ZADD zr 1 m"); /* 1e400 left ERANGE behind: reset it */
    }
    OK(f->c, "FLUSHALL");
    fake_int_reply(fake_run(f->c, "RPUSH l \"5\\x00junk\" 3"));
    RESP_EQ(f->c, "*2\r\n$1\r\n3\r\n$6\r\n5\x00junk\r\n", "SORT l");
}

/* An ERANGE left by a parse stays in Redis's errno, and SORT reads it: every value SORT
 * reads with strtod then fails, until a parse that resets errno runs. */
static void test_sticky_errno(void **state)
{
    fixture *f = *state;
    fake_int_reply(fake_run(f->c, "RPUSH tiny 1e-310"));
    fake_int_reply(fake_run(f->c, "RPUSH fl 1.5 0.5"));
    fake_int_reply(fake_run(f->c, "RPUSH ints 3 1 2"));
    fake_int_reply(fake_run(f->c, "SADD sints 3 1 2"));
    fake_int_reply(fake_run(f->c, "ZADD zz 1 m"));
    assert_string_equal(WORDS(f->c, "SORT fl"), "0.5 1.5");
    /* (resets use a sorted set of their own: Redis reads a subnormal score kept in a
     * listpack with strtod again, which leaves ERANGE: not mirrored by the fake) */

    /* each setter, then what resets it */
    static const struct {
        const char *set, *reset;
    } cases[] = {
        {"SORT tiny", "ZADD zr 1 m"},
        {"SORT tiny", "INCRBYFLOAT f 1"},
        {"SORT tiny", "HINCRBYFLOAT h f 1"},
        {"SORT tiny", "SCAN 0"},
        {"SORT tiny", "BLPOP nolist 0.01"},
        {"SORT tiny", "XRANGE nostream abc +"},
        {"SCAN 99999999999999999999", "ZADD zr 1 m"},
        {"ZRANGEBYSCORE zz 1e400 +inf", "ZADD zr 1 m"},
        {"ZCOUNT zz (1e-320 1", "ZADD zr 1 m"},
        {"ZADD zz 1e-320 m2", "ZADD zr 1 m"},
        {"XRANGE nostream 99999999999999999999 +", "INCRBYFLOAT f 1"},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        fake_run(f->c, "%s", cases[i].set);
        RESP_EQ(f->c, ERR_SCORES, "SORT fl");
        RESP_EQ(f->c, ERR_SCORES, "SORT sints");     /* set members: strtod */
        RESP_EQ(f->c, ERR_SCORES, "SORT fl DESC");    /* and it stays */
        assert_string_equal(WORDS(f->c, "SORT ints"), "1 2 3"); /* integers: no strtod */
        assert_string_equal(WORDS(f->c, "SORT fl ALPHA"), "0.5 1.5");
        fake_run(f->c, "%s", cases[i].reset);
        assert_string_equal(WORDS(f->c, "SORT fl"), "0.5 1.5");
        assert_string_equal(WORDS(f->c, "SORT sints"), "1 2 3");
    }
    /* a new connection resets it (Redis's accept loop ends on EAGAIN) */
    fake_run(f->c, "SORT tiny");
    RESP_EQ(f->c, ERR_SCORES, "SORT fl");
    fr_client *c3 = fr_client_new(f->srv);
    assert_string_equal(WORDS(f->c, "SORT fl"), "0.5 1.5");
    fr_client_free(c3);
    /* stream walks that run off the radix tree reset it, others do not */
    fake_run(f->c, "XADD s 1-0 f v"); /* a new node */
    fake_run(f->c, "XADD s 2-0 f v");
    fake_run(f->c, "SORT tiny");
    fake_run(f->c, "XADD s 3-0 f v");                     /* the same node */
    fake_run(f->c, "XRANGE s - 2");                        /* a bound stops it */
    fake_run(f->c, "XRANGE s - + COUNT 3");                /* COUNT stops it */
    fake_run(f->c, "XLEN s");
    RESP_EQ(f->c, ERR_SCORES, "SORT fl");
    fake_run(f->c, "XRANGE s 2 +");                        /* runs off the end */
    assert_string_equal(WORDS(f->c, "SORT fl"), "0.5 1.5");
    fake_run(f->c, "SORT tiny");
    fake_run(f->c, "XDEL s 9-0");                          /* nothing at or after 9-0 */
    assert_string_equal(WORDS(f->c, "SORT fl"), "0.5 1.5");
    fake_run(f->c, "SORT tiny");
    fake_run(f->c, "XTRIM s MINID 2");                     /* flags 1-0: raxInsert again */
    assert_string_equal(WORDS(f->c, "SORT fl"), "0.5 1.5");
    /* a plain stream ID resets it only when string2ll refuses it (a leading zero) */
    fake_run(f->c, "SORT tiny");
    fake_run(f->c, "XRANGE nostream 1 +");
    RESP_EQ(f->c, ERR_SCORES, "SORT fl");
    fake_run(f->c, "XRANGE nostream 01 +");
    assert_string_equal(WORDS(f->c, "SORT fl"), "0.5 1.5");
}

/* Under a sticky ERANGE a BY value fails unless Redis holds it as an integer: what SET,
 * MSET, GETSET and INCR write, or APPEND to a missing key; not what APPEND, SETRANGE,
 * SETBIT, BITFIELD's writes or INCRBYFLOAT make; a listpack hash's integer values, not a
 * hash table's. */
static void test_integer_encoding(void **state)
{
    fixture *f = *state;
    fake_int_reply(fake_run(f->c, "RPUSH tiny 1e-310"));
    fake_int_reply(fake_run(f->c, "RPUSH l 1"));
    static const struct {
        const char *write;
        int as_int;
    } cases[] = {
        {"SET s1 5", 1},           {"MSET s1 5", 1},         {"GETSET s1 5", 1},
        {"SET s1 5 KEEPTTL", 1},   {"SETEX s1 100 5", 1},    {"INCR s1", 1},
        {"DEL s1", 0},             {"APPEND s1 5", 1},       {"APPEND s1 0", 0},
        {"SET s1 5", 1},           {"SETRANGE s1 0 \"\"", 1}, {"SETRANGE s1 0 7", 0},
        {"SET s1 5", 1},           {"SETBIT s1 0 0", 0},     {"SET s1 5", 1},
        {"BITFIELD s1 GET u8 0", 1}, {"BITFIELD s1 SET u8 0 55", 0}, {"SET s1 5", 1},
        {"INCRBYFLOAT s1 1", 0},   {"INCRBY s1 1", 1},       {"SET s1 5.5", 0},
        {"SET s1 007", 0},         {"SET s1 -9223372036854775808", 1},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        fake_run(f->c, "%s", cases[i].write);
        if (strncmp(cases[i].write, "DEL", 3) == 0) continue;
        fake_run(f->c, "SORT tiny");
        const char *got = RESP(f->c, "SORT l BY s*");
        if ((strcmp(got, ERR_SCORES) != 0) != cases[i].as_int)
            print_message("after %s: %s", cases[i].write, got);
        assert_int_equal(strcmp(got, ERR_SCORES) != 0, cases[i].as_int);
    }
    /* hash values: integers in a listpack, strings once it is a hash table */
    fake_int_reply(fake_run(f->c, "HSET h1 f 5"));
    fake_run(f->c, "SORT tiny");
    assert_string_equal(WORDS(f->c, "SORT l BY h*->f"), "1");
    fake_int_reply(fake_run(f->c, "HSET h1 big "
                                  "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx"));
    RESP_EQ(f->c, ERR_SCORES, "SORT l BY h*->f");
}

/* XADD words its failure by errno == EDOM, and 7.0.15 fails a "<ms>-*" past the last
 * sequence without setting errno: its text is what an earlier command left, unless
 * parsing the id itself reset errno (digits that string2ll refuses go to strtoull). */
static void test_xadd_errno_text(void **state)
{
    fixture *f = *state;
    const char *id_err = "-ERR The ID specified in XADD is equal or smaller than the target "
                         "stream top item\r\n";
    const char *size_err = "-ERR Elements are too large to be stored\r\n";
    RESP_EQ(f->c, "$22\r\n5-18446744073709551615\r\n", "XADD x 5-18446744073709551615 f v");
    RESP_EQ(f->c, size_err, "XADD x 5-* f v");
    RESP_EQ(f->c, id_err, "XADD x 1-0 f v"); /* errno = EDOM */
    RESP_EQ(f->c, id_err, "XADD x 5-* f v");
    RESP_EQ(f->c, id_err, "XADD x 5-* f v");
    fake_run(f->c, "ZADD z 1 m"); /* errno = 0 */
    RESP_EQ(f->c, size_err, "XADD x 5-* f v");
    RESP_EQ(f->c, id_err, "XADD x 1-0 f v");
    RESP_EQ(f->c, size_err, "XADD x 05-* f v"); /* "05" goes through strtoull */
}

/* ----- STORE ---------------------------------------------------------------------------- */

static void test_store(void **state)
{
    fixture *f = *state;
    fake_int_reply(fake_run(f->c, "RPUSH l 3 1 2"));
    OK(f->c, "SET k str EX 100");
    assert_int_equal(INT(f->c, "SORT l STORE k"), 3);
    assert_int_equal(INT(f->c, "TTL k"), -1);
    assert_string_equal(WORDS(f->c, "LRANGE k 0 -1"), "1 2 3");
    assert_int_equal(INT(f->c, "SORT l GET # GET nokey_* STORE k"), 6);
    RESP_EQ(f->c, "*6\r\n$1\r\n1\r\n$0\r\n\r\n$1\r\n2\r\n$0\r\n\r\n$1\r\n3\r\n$0\r\n\r\n",
            "LRANGE k 0 -1");
    /* the source as its own destination */
    assert_int_equal(INT(f->c, "SORT l DESC STORE l"), 3);
    assert_string_equal(WORDS(f->c, "LRANGE l 0 -1"), "3 2 1");

    /* WATCH: a stored result or a deleted destination touch it; nothing to delete does not */
    assert_false(fake_exec_survives(f, "SORT l STORE k"));
    assert_false(fake_exec_survives(f, "SORT l LIMIT 5 5 STORE k"));
    assert_int_equal(INT(f->c, "EXISTS k"), 0);
    assert_true(fake_exec_survives(f, "SORT l LIMIT 5 5 STORE k"));
    assert_true(fake_exec_survives(f, "SORT l GET k"));
    assert_true(fake_exec_survives(f, "SORT_RO l BY k"));
    /* an expired destination is deleted, unseen, by an empty result */
    OK(f->c, "SET k v PX 10");
    fr_clock_advance(f->srv, 11);
    assert_int_equal(INT(f->c, "SORT nokey STORE k"), 0);
    assert_int_equal(INT(f->c, "EXISTS k"), 0);
    /* an expired source sorts as an empty list; an expired BY key counts as missing */
    fake_int_reply(fake_run(f->c, "RPUSH e 2 1"));
    fake_int_reply(fake_run(f->c, "PEXPIRE e 10"));
    OK(f->c, "SET w_1 9 PX 20");
    OK(f->c, "SET w_2 5");
    assert_string_equal(WORDS(f->c, "SORT e BY w_*"), "2 1");
    fr_clock_advance(f->srv, 11);
    RESP_EQ(f->c, "*0\r\n", "SORT e");
    fake_int_reply(fake_run(f->c, "RPUSH e 2 1"));
    fr_clock_advance(f->srv, 10);
    assert_string_equal(WORDS(f->c, "SORT e BY w_* GET w_*"), "nil 5");
}

/* SORT converts a sorted set for good, as Redis's zsetConvert: a listpack keeps no -0. */
static void test_zset_becomes_skiplist(void **state)
{
    fixture *f = *state;
    fake_int_reply(fake_run(f->c, "ZADD a 1 x"));
    fake_int_reply(fake_run(f->c, "ZADD b 1 x"));
    fake_int_reply(fake_run(f->c, "ZADD c 1 x"));
    RESP_EQ(f->c, ERR_SCORES, "SORT b");          /* "x" is no number: converted anyway */
    RESP_EQ(f->c, "-ERR syntax error\r\n", "SORT c foo"); /* refused first: not converted */
    const char *keys[] = {"a", "b", "c"}, *want[] = {"$1\r\n0\r\n", "$2\r\n-0\r\n", "$1\r\n0\r\n"};
    for (int i = 0; i < 3; i++) {
        fake_int_reply(fake_run(f->c, "ZADD %s -0 m", keys[i]));
        RESP_EQ(f->c, want[i], "ZSCORE %s m", keys[i]);
    }
}

/* ----- The command table and key positions ---------------------------------------------- */

static void expect_keys(fr_server *srv, const char *line, const char *want)
{
    char **argv;
    size_t *lens;
    int argc = fr_split_line(line, &argv, &lens);
    assert_true(argc > 0);
    int keys[8];
    int n = fr_command_keys(srv, argc, (const char *const *)argv, lens, keys, 8);
    char got[64] = "";
    size_t w = 0;
    for (int i = 0; i < n; i++) w += (size_t)snprintf(got + w, sizeof(got) - w, "%s%d", i ? " " : "", keys[i]);
    if (n < 0) snprintf(got, sizeof(got), "refused");
    if (strcmp(got, want) != 0) print_message("%s\n", line);
    assert_string_equal(got, want);
    fr_split_free(argc, argv, lens);
}

static void test_command_table_and_keys(void **state)
{
    fixture *f = *state;
    int seen = 0;
    for (size_t j = 0; j < fr_command_count(); j++) {
        const fr_command_info *ci = fr_command_at(j);
        if (strcmp(ci->name, "sort") && strcmp(ci->name, "sort_ro")) continue;
        seen++;
        int ro = strcmp(ci->name, "sort_ro") == 0;
        assert_string_equal(ci->group, "generic");
        assert_string_equal(ci->flags, ro ? "readonly" : "write denyoom");
        assert_int_equal(ci->arity, -2);
        assert_int_equal(ci->first_key, 1);
        assert_int_equal(ci->last_key, 1);
        assert_int_equal(ci->key_step, 1);
        assert_int_equal(ci->movable_keys, !ro);
    }
    assert_int_equal(seen, 2);

    expect_keys(f->srv, "SORT k", "1");
    expect_keys(f->srv, "SORT", "refused");
    expect_keys(f->srv, "SORT k STORE d", "1 3");
    expect_keys(f->srv, "SORT k store a STORE b", "1 5");
    expect_keys(f->srv, "SORT k STORE", "1");
    expect_keys(f->srv, "SORT k GET STORE d", "1");        /* GET takes "STORE" */
    expect_keys(f->srv, "SORT k LIMIT 0 STORE d", "1");     /* LIMIT takes two */
    expect_keys(f->srv, "SORT k BY x GET y ALPHA STORE d LIMIT 0 1", "1 8");
    expect_keys(f->srv, "SORT \"k\\x00\" \"store\\x00x\" d", "1 3");
    expect_keys(f->srv, "SORT_RO k STORE d", "1");

    fr_config cfg = fr_config_default();
    cfg.cluster_enabled = 1;
    fr_server *srv = fr_server_new(&cfg);
    fr_client *c = fr_client_new(srv);
    const char *cross = "-CROSSSLOT Keys in request don't hash to the same slot\r\n";
    RESP_EQ(c, cross, "SORT {a}x STORE {b}y");
    RESP_EQ(c, ":0\r\n", "SORT {a}x STORE {b}y STORE {a}y");
    RESP_EQ(c, "-ERR syntax error\r\n", "SORT_RO {a}x STORE {b}y");
    RESP_EQ(c, "-ERR GET option of SORT denied in Cluster mode.\r\n", "SORT {a}x GET #");
    RESP_EQ(c, "-ERR BY option of SORT denied in Cluster mode.\r\n", "SORT {a}x BY {a}*");
    RESP_EQ(c, "*0\r\n", "SORT {a}x BY nosort");
    fr_server_free(srv);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        TEST(test_limit_model),
        TEST(test_ties_model),
        TEST(test_pqsort_recorded),
        TEST(test_numbers),
        TEST(test_sticky_errno),
        TEST(test_integer_encoding),
        TEST(test_xadd_errno_text),
        TEST(test_store),
        TEST(test_zset_becomes_skiplist),
        TEST(test_command_table_and_keys),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
