/* test_hashes.c -- HRANDFIELD's random choices and what HSCAN shows of a hash's encoding
 * (t_hash.c).
 *
 * HRANDFIELD draws from the server's seeded generator: two servers with the same seed
 * must answer the same fields in the same order, another seed (almost surely) not.  A
 * positive count gives distinct fields, a negative one exactly -count fields that may
 * repeat, WITHVALUES each field's own value.
 *
 * Redis 7.0 holds a hash as a listpack until it gets more than 512 fields or a field or
 * value longer than 64 bytes, then as a hash table for good.  HSCAN answers a listpack
 * whole with cursor 0 whatever COUNT says, a table a page at a time: the tests below use
 * that to see which encoding the fake thinks Redis would have.  The differential scripts
 * can only see one direction of it (a table's cursors are Redis's own), so the rules are
 * pinned here.
 */
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

#define INT(c, ...) fake_int_reply(fake_run_logged((c), __VA_ARGS__))

/* HSET key with n fields named prefix0.. (values their numbers), from number from. */
static void hset_range(fr_client *c, const char *key, const char *prefix, int from, int n)
{
    static char line[64 * 1024];
    size_t len = (size_t)snprintf(line, sizeof(line), "HSET %s", key);
    for (int i = from; i < from + n; i++)
        len += (size_t)snprintf(line + len, sizeof(line) - len, " %s%d %d", prefix, i, i);
    assert_true(len < sizeof(line));
    const fr_reply *r = fr_exec_line(c, line);
    assert_int_equal(r->type, FR_REPLY_INTEGER);
}

/* Whether HSCAN answers key whole with cursor 0 for COUNT 1 (a listpack); the hash must
 * have two fields or more. */
static int scans_whole(fr_client *c, const char *key)
{
    const fr_reply *r = fake_run_logged(c, "HSCAN %s 0 COUNT 1", key);
    assert_int_equal(r->type, FR_REPLY_ARRAY);
    assert_int_equal(r->count, 2);
    return strcmp(r->elements[0].str, "0") == 0;
}

/* ----- HRANDFIELD -------------------------------------------------------------------------- */

/* Every reply of a fixed script of HRANDFIELDs on a server with seed, one per line. */
static char *hrandfield_transcript(uint64_t seed)
{
    fr_config cfg = fr_config_default();
    cfg.seed = seed;
    fake_fixture *f = fake_fixture_new(&cfg, 1);
    hset_range(f->c, "small", "f", 0, 10);
    hset_range(f->c, "big", "g", 0, 600);
    const char *cmds[] = {
        "HRANDFIELD small",        "HRANDFIELD big",         "HRANDFIELD small 3",
        "HRANDFIELD big 3",        "HRANDFIELD small -7",    "HRANDFIELD big -7 WITHVALUES",
        "HRANDFIELD small 8",      "HRANDFIELD big 500",     "HRANDFIELD small 9 WITHVALUES",
    };
    char *out = fake_transcript(f->c, cmds, sizeof(cmds) / sizeof(cmds[0]));
    fake_fixture_free(f);
    return out;
}

static void test_hrandfield_seeded(void **state)
{
    (void)state;
    char *a = hrandfield_transcript(7), *b = hrandfield_transcript(7);
    char *c = hrandfield_transcript(8);
    assert_string_equal(a, b);
    assert_true(strcmp(a, c) != 0);
    free(a);
    free(b);
    free(c);
}

/* The fields of h are f0..f(n-1) with values 0..n-1: checks a reply of count fields (and
 * values), distinct when asked. */
static void check_fields(const fr_reply *r, size_t count, int withvalues, int distinct, int n)
{
    size_t step = withvalues ? 2 : 1;
    assert_int_equal(r->type, FR_REPLY_ARRAY);
    assert_int_equal(r->count, count * step);
    int *seen = calloc((size_t)n, sizeof(*seen));
    assert_non_null(seen);
    for (size_t i = 0; i < r->count; i += step) {
        assert_int_equal(r->elements[i].str[0], 'f');
        int k = atoi(r->elements[i].str + 1);
        assert_true(k >= 0 && k < n);
        if (withvalues) assert_int_equal(atoi(r->elements[i + 1].str), k);
        seen[k]++;
        if (distinct) assert_int_equal(seen[k], 1);
    }
    free(seen);
}

static void test_hrandfield_counts(void **state)
{
    fake_fixture *f = *state;
    hset_range(f->c, "h", "f", 0, 20);
    check_fields(fake_run_logged(f->c, "HRANDFIELD h 1"), 1, 0, 1, 20);
    check_fields(fake_run_logged(f->c, "HRANDFIELD h 5"), 5, 0, 1, 20);
    check_fields(fake_run_logged(f->c, "HRANDFIELD h 15 WITHVALUES"), 15, 1, 1, 20);
    check_fields(fake_run_logged(f->c, "HRANDFIELD h 19"), 19, 0, 1, 20);
    check_fields(fake_run_logged(f->c, "HRANDFIELD h -50"), 50, 0, 0, 20);
    check_fields(fake_run_logged(f->c, "HRANDFIELD h -3 WITHVALUES"), 3, 1, 0, 20);
    /* A count covering the hash answers it whole, in its order. */
    const fr_reply *r = fake_run_logged(f->c, "HRANDFIELD h 20 WITHVALUES");
    check_fields(r, 20, 1, 1, 20);
    for (size_t i = 0; i < r->count; i += 2) assert_int_equal(atoi(r->elements[i].str + 1), i / 2);
    /* One random field: one of them. */
    r = fake_run_logged(f->c, "HRANDFIELD h");
    assert_int_equal(r->type, FR_REPLY_BULK);
    assert_int_equal(r->str[0], 'f');
    /* Fields deleted leave no trace in the draws. */
    for (int i = 0; i < 20; i += 2) assert_int_equal(INT(f->c, "HDEL h f%d", i), 1);
    r = fake_run_logged(f->c, "HRANDFIELD h -200");
    check_fields(r, 200, 0, 0, 20);
    for (size_t i = 0; i < r->count; i++) assert_int_equal(atoi(r->elements[i].str + 1) % 2, 1);
    /* An absurd negative count is an error, not a reply that exhausts memory. */
    r = fr_exec_line(f->c, "HRANDFIELD h -100000000000");
    assert_int_equal(r->type, FR_REPLY_ERROR);
    assert_string_equal(r->str, "OOM command not allowed when used memory > 'maxmemory'.");
}

/* ----- HSCAN and the encoding --------------------------------------------------------------- */

static void test_listpack_limits(void **state)
{
    fake_fixture *f = *state;
    /* 512 fields: still a listpack, answered whole; the 513th makes a table for good. */
    hset_range(f->c, "n", "f", 0, 512);
    assert_true(scans_whole(f->c, "n"));
    hset_range(f->c, "n", "f", 512, 1);
    assert_false(scans_whole(f->c, "n"));
    assert_int_equal(INT(f->c, "HDEL n f0 f1 f2 f3 f4"), 5);
    assert_false(scans_whole(f->c, "n"));

    /* 64 bytes is fine, 65 converts, for a field as for a value, and a shorter value
     * later does not convert back. */
    char v64[65], v65[66];
    memset(v64, 'v', 64);
    v64[64] = '\0';
    memset(v65, 'v', 65);
    v65[65] = '\0';
    fake_run_logged(f->c, "HSET a f1 %s %s x", v64, v64);
    assert_true(scans_whole(f->c, "a"));
    fake_run_logged(f->c, "HSET a f1 %s", v65);
    assert_false(scans_whole(f->c, "a"));
    fake_run_logged(f->c, "HSET a f1 short");
    assert_false(scans_whole(f->c, "a"));
    fake_run_logged(f->c, "HSET b f1 v %s v", v65);
    assert_false(scans_whole(f->c, "b"));

    /* HSETNX looks at its arguments only when the field is new. */
    fake_run_logged(f->c, "HSET c f1 v1 f2 v2");
    assert_int_equal(INT(f->c, "HSETNX c f1 %s", v65), 0);
    assert_true(scans_whole(f->c, "c"));
    assert_int_equal(INT(f->c, "HSETNX c %s v", v65), 1);
    assert_false(scans_whole(f->c, "c"));

    /* HINCRBY and HINCRBYFLOAT look at the field and the new value; an error converts
     * nothing. */
    fake_run_logged(f->c, "HSET d f1 1 f2 x");
    assert_int_equal(fake_run(f->c, "HINCRBY d f2 1")->type, FR_REPLY_ERROR);
    assert_int_equal(fake_run(f->c, "HINCRBYFLOAT d f2 1")->type, FR_REPLY_ERROR);
    assert_true(scans_whole(f->c, "d"));
    fake_run_logged(f->c, "HINCRBYFLOAT d f1 1e60");
    assert_true(scans_whole(f->c, "d")); /* 61 digits */
    fake_run_logged(f->c, "HINCRBYFLOAT d f1 1e70");
    assert_false(scans_whole(f->c, "d"));
    fake_run_logged(f->c, "HSET e f1 1 f2 2");
    fake_run_logged(f->c, "HINCRBY e %s 1", v65);
    assert_false(scans_whole(f->c, "e"));
}

/* A walk over a table answers every field present for the whole walk exactly once, with
 * its value, while fields are deleted and added as it goes. */
static void test_hscan_walk(void **state)
{
    fake_fixture *f = *state;
    enum { N = 600 };
    hset_range(f->c, "h", "f", 0, N);
    int seen[N] = {0};
    char cursor[32] = "0";
    int gone = 1, calls = 0;
    do {
        const fr_reply *page = fake_scan_step(f->c, "HSCAN h %s COUNT 9", cursor, sizeof(cursor));
        assert_true(page->count <= 18 && page->count % 2 == 0);
        for (size_t i = 0; i < page->count; i += 2) {
            if (page->elements[i].str[0] != 'f') continue; /* added during the walk */
            int k = atoi(page->elements[i].str + 1);
            assert_true(k >= 0 && k < N);
            assert_int_equal(atoi(page->elements[i + 1].str), k);
            seen[k]++;
        }
        for (int removed = 0; removed < 15 && gone < N; gone++) {
            if (gone % 3 == 0) continue;
            assert_int_equal(INT(f->c, "HDEL h f%d", gone), 1);
            removed++;
        }
        fake_run_logged(f->c, "HSET h new%d x", calls);
        assert_true(++calls < 1000);
    } while (strcmp(cursor, "0") != 0);
    for (int k = 0; k < N; k++) {
        assert_true(seen[k] <= 1);
        if (k % 3 == 0) assert_int_equal(seen[k], 1);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_hrandfield_seeded),
        FAKE_TEST(test_hrandfield_counts),
        FAKE_TEST(test_listpack_limits),
        FAKE_TEST(test_hscan_walk),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
