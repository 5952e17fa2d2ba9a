/* test_sets.c -- the set type's random choices and its two encodings (t_set.c).
 *
 * SPOP and SRANDMEMBER draw from the server's seeded generator: two servers with the same
 * seed must answer the same members in the same order, and another seed must (almost
 * surely) answer differently.  Positive counts must give distinct members, negative
 * counts exactly -count members with repetition, and every answer must come from the set.
 *
 * Order is observable: Redis 7.0 keeps a set of at most 512 canonical integers as an
 * intset, which answers in ascending numeric order, and turns it into a hash table for
 * good on the first non-integer member or the 513th member.  The fake's table answers in
 * insertion order (members of a converted intset entering in ascending order), which the
 * tests below use to see which encoding a set is in.
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

/* A fresh server with seed and one client. */
typedef fake_fixture fixture;

static fixture *fixture_new(uint64_t seed)
{
    fr_config cfg = fr_config_default();
    cfg.seed = seed;
    return fake_fixture_new(&cfg, 1);
}

static int setup(void **state)
{
    *state = fixture_new(1);
    return 0;
}

/* A test on a seed 1 fixture. */
#define TEST(fn) cmocka_unit_test_setup_teardown(fn, setup, fake_fixture_teardown)

/* Commands run through fake_run_logged, so a failing test shows which command went wrong.
 * The integer a command answers (fails the test for any other reply). */
#define INT(c, ...) fake_int_reply(fake_run_logged((c), __VA_ARGS__))

/* Asserts an array reply of bulk strings equal to the space-separated words. */
static void assert_members(const fr_reply *r, const char *words)
{
    assert_int_equal(r->type, FR_REPLY_ARRAY);
    char buf[64 * 1024];
    snprintf(buf, sizeof(buf), "%s", words);
    size_t i = 0;
    for (char *save, *w = strtok_r(buf, " ", &save); w; w = strtok_r(NULL, " ", &save), i++) {
        assert_true(i < r->count);
        assert_int_equal(r->elements[i].type, FR_REPLY_BULK);
        assert_string_equal(r->elements[i].str, w);
    }
    assert_int_equal(r->count, i);
}

/* Builds "SADD key a0 a1 ..." (n non-integer members) or "SADD key 0 1 ..." (integers). */
static void sadd_range(fr_client *c, const char *key, const char *prefix, int from, int n)
{
    static char line[64 * 1024];
    size_t len = (size_t)snprintf(line, sizeof(line), "SADD %s", key);
    for (int i = from; i < from + n; i++)
        len += (size_t)snprintf(line + len, sizeof(line) - len, " %s%d", prefix, i);
    const fr_reply *r = fr_exec_line(c, line);
    assert_int_equal(r->type, FR_REPLY_INTEGER);
}

/* ----- Determinism ------------------------------------------------------------------ */

/* Every random command of a fixed script, as RESP text, one reply per line. */
static char *random_transcript(uint64_t seed)
{
    fixture *f = fixture_new(seed);
    sadd_range(f->c, "ints", "", 0, 100);
    sadd_range(f->c, "strs", "m", 0, 300);
    const char *cmds[] = {
        "SRANDMEMBER ints", "SRANDMEMBER strs", "SRANDMEMBER ints 5", "SRANDMEMBER strs 5",
        "SRANDMEMBER ints -7", "SRANDMEMBER strs -7", "SRANDMEMBER ints 60",
        "SRANDMEMBER strs 200", "SPOP ints", "SPOP strs", "SPOP ints 3", "SPOP strs 3",
        "SPOP ints 90", "SPOP strs 250", "SMEMBERS ints", "SMEMBERS strs",
    };
    char *out = fake_transcript(f->c, cmds, sizeof(cmds) / sizeof(cmds[0]));
    fake_fixture_free(f);
    return out;
}

static void test_same_seed_same_answers(void **state)
{
    (void)state;
    char *a = random_transcript(42), *b = random_transcript(42);
    assert_string_equal(a, b);
    free(a);
    free(b);
}

static void test_other_seed_other_answers(void **state)
{
    (void)state;
    char *a = random_transcript(42), *b = random_transcript(43);
    assert_true(strcmp(a, b) != 0);
    free(a);
    free(b);
}

/* ----- Counts ------------------------------------------------------------------------- */

/* Checks that r is an array of n members of key, distinct if distinct. */
static void check_members(fr_client *c, const char *key, const fr_reply *r, size_t n,
                          int distinct)
{
    assert_int_equal(r->type, FR_REPLY_ARRAY);
    assert_int_equal(r->count, n);
    /* Copy the members first: the next command reuses the reply memory. */
    char **m = calloc(n ? n : 1, sizeof(*m));
    assert_non_null(m);
    for (size_t i = 0; i < n; i++) {
        assert_int_equal(r->elements[i].type, FR_REPLY_BULK);
        m[i] = strdup(r->elements[i].str);
    }
    for (size_t i = 0; i < n; i++) {
        if (distinct)
            for (size_t j = 0; j < i; j++) assert_string_not_equal(m[i], m[j]);
        assert_int_equal(INT(c, "SISMEMBER %s %s", key, m[i]), 1);
    }
    for (size_t i = 0; i < n; i++) free(m[i]);
    free(m);
}

static void test_srandmember_counts(void **state)
{
    fixture *f = *state;
    sadd_range(f->c, "ints", "", 0, 200);
    sadd_range(f->c, "strs", "m", 0, 1000);
    const long counts[] = {1, 2, 5, 50, 66, 67, 100, 199, 333, 334, 500, 999};
    for (size_t i = 0; i < sizeof(counts) / sizeof(counts[0]); i++) {
        long k = counts[i];
        if (k < 200)
            check_members(f->c, "ints", fake_run_logged(f->c, "SRANDMEMBER ints %ld", k),
                          (size_t)k, 1);
        check_members(f->c, "strs", fake_run_logged(f->c, "SRANDMEMBER strs %ld", k),
                      (size_t)k, 1);
        check_members(f->c, "ints", fake_run_logged(f->c, "SRANDMEMBER ints -%ld", k),
                      (size_t)k, 0);
        check_members(f->c, "strs", fake_run_logged(f->c, "SRANDMEMBER strs -%ld", k),
                      (size_t)k, 0);
    }
    /* Repetition does happen with negative counts: 300 draws from 200 members. */
    const fr_reply *r = fake_run_logged(f->c, "SRANDMEMBER ints -300");
    assert_int_equal(r->count, 300);
    int repeated = 0;
    for (size_t i = 0; i < r->count && !repeated; i++)
        for (size_t j = 0; j < i && !repeated; j++)
            repeated = strcmp(r->elements[i].str, r->elements[j].str) == 0;
    assert_true(repeated);
    /* SRANDMEMBER never changes the set. */
    assert_int_equal(INT(f->c, "SCARD ints"), 200);
    assert_int_equal(INT(f->c, "SCARD strs"), 1000);
}

/* SPOP count: distinct members that were in the set and no longer are, both strategies
 * (pop one by one, or keep a small random remainder). */
static void test_spop_counts(void **state)
{
    fixture *f = *state;
    const long counts[] = {1, 3, 40, 83, 84, 90, 99};
    for (int table = 0; table < 2; table++) {
        for (size_t i = 0; i < sizeof(counts) / sizeof(counts[0]); i++) {
            long k = counts[i];
            fake_run_logged(f->c, "DEL s");
            sadd_range(f->c, "s", table ? "x" : "", 0, 100);
            sadd_range(f->c, "copy", table ? "x" : "", 0, 100);
            const fr_reply *r = fake_run_logged(f->c, "SPOP s %ld", k);
            assert_int_equal(r->type, FR_REPLY_ARRAY);
            assert_int_equal(r->count, (size_t)k);
            char **m = calloc((size_t)k, sizeof(*m));
            for (long j = 0; j < k; j++) m[j] = strdup(r->elements[j].str);
            for (long j = 0; j < k; j++) {
                for (long l = 0; l < j; l++) assert_string_not_equal(m[j], m[l]);
                assert_int_equal(INT(f->c, "SISMEMBER s %s", m[j]), 0);
                assert_int_equal(INT(f->c, "SISMEMBER copy %s", m[j]), 1);
            }
            for (long j = 0; j < k; j++) free(m[j]);
            free(m);
            assert_int_equal(INT(f->c, "SCARD s"), 100 - k);
            fake_run_logged(f->c, "DEL copy");
        }
    }
}

/* Popping a big table set down to nothing, one and several at a time, keeps it whole. */
static void test_spop_drains_big_set(void **state)
{
    fixture *f = *state;
    sadd_range(f->c, "big", "k", 0, 3000);
    long left = 3000;
    while (left > 0) {
        const fr_reply *r = fake_run_logged(f->c, "SPOP big");
        assert_int_equal(r->type, FR_REPLY_BULK);
        left--;
        if (left > 7) {
            r = fake_run_logged(f->c, "SPOP big 7");
            assert_int_equal(r->count, 7);
            left -= 7;
        }
        if (left % 97 == 0) assert_int_equal(INT(f->c, "SCARD big"), left);
    }
    assert_int_equal(INT(f->c, "EXISTS big"), 0);
    assert_int_equal(fake_run_logged(f->c, "SPOP big")->type, FR_REPLY_NIL);
}

/* ----- Encodings and order ----------------------------------------------------------------- */

static void test_intset_answers_sorted(void **state)
{
    fixture *f = *state;
    assert_int_equal(INT(f->c, "SADD s 5 -3 10 0 9223372036854775807 -9223372036854775808"), 6);
    /* every read of the whole set, the last one emptying it */
    static const char *const reads[] = {"SMEMBERS s", "SRANDMEMBER s 100", "SPOP s 6"};
    for (size_t i = 0; i < sizeof(reads) / sizeof(reads[0]); i++)
        assert_members(fake_run_logged(f->c, "%s", reads[i]),
                       "-9223372036854775808 -3 0 5 10 9223372036854775807");
    assert_int_equal(INT(f->c, "EXISTS s"), 0);
}

/* A non-integer member converts the set for good: members keep the order they had, later
 * ones go at the end, and removing the offender does not convert back. */
static void test_conversion_is_for_good(void **state)
{
    fixture *f = *state;
    fake_run_logged(f->c, "SADD s 5 3");
    fake_run_logged(f->c, "SADD s a");
    assert_members(fake_run_logged(f->c, "SMEMBERS s"), "3 5 a");
    assert_int_equal(INT(f->c, "SREM s a"), 1);
    fake_run_logged(f->c, "SADD s 1");
    assert_members(fake_run_logged(f->c, "SMEMBERS s"), "3 5 1");
    /* SRANDMEMBER over the whole set answers the set's own order... */
    assert_members(fake_run_logged(f->c, "SRANDMEMBER s 3"), "3 5 1");
    /* ...while SPOP over the whole set answers as SUNION builds it: an intset. */
    assert_members(fake_run_logged(f->c, "SPOP s 3"), "1 3 5");
}

/* Only string2ll's canonical form is an integer. */
static void test_noncanonical_integers_convert(void **state)
{
    fixture *f = *state;
    const char *forms[] = {"07", "+7", "-0", "\" 7\"", "\"7 \"", "1.0", "1e3",
                           "9223372036854775808", "-9223372036854775809", "\"\""};
    for (size_t i = 0; i < sizeof(forms) / sizeof(forms[0]); i++) {
        fake_run_logged(f->c, "DEL s");
        fake_run_logged(f->c, "SADD s 9 8");
        fake_run_logged(f->c, "SADD s %s", forms[i]);
        fake_run_logged(f->c, "SREM s %s", forms[i]);
        fake_run_logged(f->c, "SADD s 1");
        assert_members(fake_run_logged(f->c, "SMEMBERS s"), "8 9 1");
    }
    /* And the canonical forms stay in the intset. */
    fake_run_logged(f->c, "DEL s");
    fake_run_logged(f->c, "SADD s 9 8 0 -1 123");
    assert_members(fake_run_logged(f->c, "SMEMBERS s"), "-1 0 8 9 123");
    /* A new key's first member decides its encoding. */
    fake_run_logged(f->c, "SADD t x 3 2");
    fake_run_logged(f->c, "SREM t x");
    assert_members(fake_run_logged(f->c, "SMEMBERS t"), "3 2");
}

/* At most 512 members in an intset: the 513th converts.  As in Redis it enters the intset
 * first, so all 513 members enter the table in ascending order; later ones go last. */
static void test_intset_limit(void **state)
{
    fixture *f = *state;
    sadd_range(f->c, "s", "", 1, 512);
    const fr_reply *r = fake_run_logged(f->c, "SMEMBERS s");
    assert_int_equal(r->count, 512);
    assert_string_equal(r->elements[0].str, "1");
    assert_string_equal(r->elements[511].str, "512");
    fake_run_logged(f->c, "SADD s 0");
    r = fake_run_logged(f->c, "SMEMBERS s");
    assert_int_equal(r->count, 513);
    assert_string_equal(r->elements[0].str, "0");
    assert_string_equal(r->elements[1].str, "1");
    assert_string_equal(r->elements[512].str, "512");
    /* Shrinking back under the limit does not convert back. */
    fake_run_logged(f->c, "SREM s 512 511");
    fake_run_logged(f->c, "SADD s -5");
    r = fake_run_logged(f->c, "SMEMBERS s");
    assert_string_equal(r->elements[r->count - 1].str, "-5");
    /* SPOP of the whole set answers as SUNION builds it: 512 integers fit an intset. */
    r = fake_run_logged(f->c, "SPOP s 1000");
    assert_int_equal(r->count, 512);
    assert_string_equal(r->elements[0].str, "-5");
    assert_string_equal(r->elements[1].str, "0");
    assert_string_equal(r->elements[511].str, "510");
}

/* SPOP keeping a small remainder rebuilds the set from it, as an intset when the
 * remainder is all integers (Redis's setTypeCreate on the first member kept). */
static void test_spop_remainder_rebuilds_intset(void **state)
{
    fixture *f = *state;
    fake_run_logged(f->c, "SADD s x 1 2 3 4 5 6 7 8 9 10 11 12");
    fake_run_logged(f->c, "SREM s x");
    fake_run_logged(f->c, "SPOP s 10"); /* 2 kept, 2 * 5 <= 10: the rebuild strategy */
    fake_run_logged(f->c, "SADD s 12 11 10 9 8 7 6 5 4 3 2 1");
    assert_members(fake_run_logged(f->c, "SMEMBERS s"), "1 2 3 4 5 6 7 8 9 10 11 12");
    /* The pop-one-by-one strategy keeps the table. */
    fake_run_logged(f->c, "SADD t x 1 2 3 4 5 6 7 8 9 10 11 12");
    fake_run_logged(f->c, "SREM t x");
    fake_run_logged(f->c, "SPOP t 9"); /* 3 kept, 3 * 5 > 9 */
    fake_run_logged(f->c, "SADD t 12 11 10 9 8 7 6 5 4 3 2 1");
    const fr_reply *r = fake_run_logged(f->c, "SMEMBERS t");
    assert_int_equal(r->count, 12);
    int sorted = 1;
    for (size_t i = 1; i < r->count; i++)
        sorted &= atoll(r->elements[i - 1].str) < atoll(r->elements[i].str);
    assert_false(sorted);
}

/* An absurd negative count is answered with an error, not a reply that exhausts memory. */
static void test_absurd_negative_count(void **state)
{
    fixture *f = *state;
    fr_exec_line(f->c, "SADD s a");
    const fr_reply *r = fr_exec_line(f->c, "SRANDMEMBER s -100000000000");
    assert_int_equal(r->type, FR_REPLY_ERROR);
    assert_string_equal(r->str, "OOM command not allowed when used memory > 'maxmemory'.");
    r = fr_exec_line(f->c, "SRANDMEMBER s -3");
    assert_int_equal(r->type, FR_REPLY_ARRAY);
    assert_int_equal(r->count, 3);
}

/* ----- Set operations, SMOVE and SSCAN ---------------------------------------------------- */

/* Whether SSCAN answers key whole with cursor 0 even for COUNT 1, as it answers an intset;
 * a table of two members or more is answered a page at a time. */
static int scans_whole(fr_client *c, const char *key)
{
    const fr_reply *r = fake_run_logged(c, "SSCAN %s 0 COUNT 1", key);
    assert_int_equal(r->type, FR_REPLY_ARRAY);
    assert_int_equal(r->count, 2);
    return strcmp(r->elements[0].str, "0") == 0;
}

/* A set operation's result starts as an empty intset and takes members in the inputs'
 * order, so it ends in the encoding Redis's ends in, which SMEMBERS and SSCAN show. */
static void test_setop_result_encodings(void **state)
{
    fixture *f = *state;
    fake_run_logged(f->c, "SADD ta x 9 3 7 1 5");
    fake_run_logged(f->c, "SREM ta x");
    fake_run_logged(f->c, "SADD tb y 5 1 9 100 3 7");
    assert_false(scans_whole(f->c, "ta"));
    /* Two tables whose common members are integers: an intset, ascending. */
    assert_int_equal(INT(f->c, "SINTERSTORE r ta tb"), 5);
    assert_true(scans_whole(f->c, "r"));
    assert_members(fake_run_logged(f->c, "SMEMBERS r"), "1 3 5 7 9");
    assert_members(fake_run_logged(f->c, "SUNION ta"), "1 3 5 7 9");
    assert_members(fake_run_logged(f->c, "SDIFF ta"), "1 3 5 7 9");
    assert_members(fake_run_logged(f->c, "SINTER ta"), "9 3 7 1 5");
    /* SDIFF's way (1) adds only the members that survive: an intset. */
    fake_run_logged(f->c, "SADD s0 x 1 2 3 4 5 6 7 8 9 10");
    fake_run_logged(f->c, "SADD s1 x");
    fake_run_logged(f->c, "SADD s2 1");
    assert_int_equal(INT(f->c, "SDIFFSTORE r s0 s1"), 10);
    assert_true(scans_whole(f->c, "r"));
    /* Way (2), for a first set big next to the others (11 * 3 / 2 > 11 + 1 + 1), copies
     * it, x included, then removes: a table, although only integers are left. */
    assert_int_equal(INT(f->c, "SDIFFSTORE r s0 s1 s2"), 9);
    assert_false(scans_whole(f->c, "r"));
    /* A union of 512 integers is an intset, of 513 a table. */
    sadd_range(f->c, "a", "", 1, 300);
    sadd_range(f->c, "b", "", 213, 300);
    assert_int_equal(INT(f->c, "SUNIONSTORE r a b"), 512);
    assert_true(scans_whole(f->c, "r"));
    fake_run_logged(f->c, "SADD c 513");
    assert_int_equal(INT(f->c, "SUNIONSTORE r a b c"), 513);
    assert_false(scans_whole(f->c, "r"));
    /* An empty result deletes the destination. */
    assert_int_equal(INT(f->c, "SDIFFSTORE r s0 s0"), 0);
    assert_int_equal(INT(f->c, "EXISTS r"), 0);
}

/* SINTER answers in its smallest input's order, the first of the smallest on a tie (Redis
 * sorts the inputs with a stable sort); SINTERCARD stops counting at its limit. */
static void test_sinter_order_and_limit(void **state)
{
    fixture *f = *state;
    fake_setup(f->c, (const char *const[]){"SADD ia 9 3 7 1 5", "SADD ta x 9 3 7 1 5",
                                          "SREM ta x", "SADD big 1 3 5 7 9 11", NULL});
    assert_members(fake_run_logged(f->c, "SINTER ia ta"), "1 3 5 7 9");
    assert_members(fake_run_logged(f->c, "SINTER ta ia"), "9 3 7 1 5");
    assert_members(fake_run_logged(f->c, "SINTER big ta"), "9 3 7 1 5");
    static const fake_case cards[] = {
        {"SINTERCARD 3 big ta ia", ":5\r\n"},
        {"SINTERCARD 3 big ta ia LIMIT 2", ":2\r\n"},
        {"SINTERCARD 3 big ta ia LIMIT 0", ":5\r\n"}, /* 0: no limit */
        {"SINTERCARD 2 big nokey LIMIT 1", ":0\r\n"},
    };
    fake_expect(f->c, cards, sizeof(cards) / sizeof(cards[0]));
}

/* SMOVE: the destination takes the encoding its first member calls for; a move within one
 * set changes nothing; the source goes with its last member. */
static void test_smove(void **state)
{
    fixture *f = *state;
    fake_run_logged(f->c, "SADD src 3 x");
    assert_int_equal(INT(f->c, "SMOVE src src x"), 1);
    assert_int_equal(INT(f->c, "SMOVE src src y"), 0);
    assert_int_equal(INT(f->c, "SMOVE src dst 3"), 1);
    assert_int_equal(INT(f->c, "SMOVE src dst 3"), 0);
    fake_run_logged(f->c, "SADD dst 2 1");
    assert_members(fake_run_logged(f->c, "SMEMBERS dst"), "1 2 3");
    assert_int_equal(INT(f->c, "SMOVE src dst x"), 1);
    assert_int_equal(INT(f->c, "EXISTS src"), 0);
    fake_run_logged(f->c, "SREM dst x");
    fake_run_logged(f->c, "SADD dst 0");
    assert_members(fake_run_logged(f->c, "SMEMBERS dst"), "1 2 3 0");
}

/* A walk over a table answers every member present for the whole walk exactly once, while
 * SREM removes most of the others as it goes: the compaction SREM triggers keeps the
 * cursors (sequence numbers) valid. */
static void test_sscan_walk_survives_srem(void **state)
{
    fixture *f = *state;
    enum { N = 400 };
    sadd_range(f->c, "s", "m", 0, N);
    int seen[N] = {0};
    char cursor[32] = "0";
    int next_gone = 1, calls = 0;
    do {
        const fr_reply *page = fake_scan_step(f->c, "SSCAN s %s COUNT 7", cursor, sizeof(cursor));
        assert_true(page->count <= 7);
        for (size_t i = 0; i < page->count; i++) {
            int k = atoi(page->elements[i].str + 1);
            assert_true(k >= 0 && k < N);
            seen[k]++;
        }
        /* Remove 20 members that are not multiples of 4, lowest first: visited ones and
         * some not visited yet, so that the survivors' positions shift. */
        for (int removed = 0; removed < 20 && next_gone < N; next_gone++) {
            if (next_gone % 4 == 0) continue;
            assert_int_equal(INT(f->c, "SREM s m%d", next_gone), 1);
            removed++;
        }
        assert_true(++calls < 1000);
    } while (strcmp(cursor, "0") != 0);
    for (int k = 0; k < N; k++) {
        assert_true(seen[k] <= 1);
        if (k % 4 == 0) assert_int_equal(seen[k], 1);
    }
    assert_int_equal(INT(f->c, "SCARD s"), N / 4);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_same_seed_same_answers),
        TEST(test_absurd_negative_count),
        cmocka_unit_test(test_other_seed_other_answers),
        TEST(test_srandmember_counts),
        TEST(test_spop_counts),
        TEST(test_spop_drains_big_set),
        TEST(test_intset_answers_sorted),
        TEST(test_conversion_is_for_good),
        TEST(test_noncanonical_integers_convert),
        TEST(test_intset_limit),
        TEST(test_spop_remainder_rebuilds_intset),
        TEST(test_setop_result_encodings),
        TEST(test_sinter_order_and_limit),
        TEST(test_smove),
        TEST(test_sscan_walk_survives_srem),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
