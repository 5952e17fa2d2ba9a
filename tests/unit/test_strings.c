/* test_strings.c -- the string commands where the differential scripts cannot look.
 *
 * The diff scripts run on the wall clock, so they cannot pin a deadline to the
 * millisecond.  Here the virtual clock does: SET EX/PX/EXAT/PXAT, SETEX, PSETEX and GETEX
 * must expire a key exactly when Redis would -- alive through its deadline millisecond
 * (keyIsExpired: now > when), gone one millisecond later -- except GETEX EXAT/PXAT, which
 * deletes at once when the deadline is <= now (checkAlreadyExpired).  A clock near the end
 * of the int64 range shows the relative-expire overflow check.  Also: INCR's in-place
 * rewrite across digit-count boundaries, which writes touch WATCHed keys (and which
 * refusals do not), and the commands' view of keys whose TTL has passed.
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

#define START_MS FAKE_START_MS /* a whole second, so EXAT maps to exact ms */

/* A test on a fresh server on the default config with two clients (c2 for WATCH). */
typedef fake_fixture fixture;
#define TEST(fn) FAKE_TEST2(fn)

/* The integer a command answers, and +OK (fail the test for any other reply). */
#define INT(c, ...) fake_int_reply(fake_run((c), __VA_ARGS__))
#define OK(c, ...) fake_ok_reply(fake_run((c), __VA_ARGS__))

/* The bulk string a command answers, as a C string (fails for any other reply). */
#define BULK(c, ...) bulk_reply(fake_run((c), __VA_ARGS__))
static const char *bulk_reply(const fr_reply *r)
{
    if (r->type == FR_REPLY_ERROR) print_message("unexpected error: %s\n", r->str);
    assert_int_equal(r->type, FR_REPLY_BULK);
    return r->str;
}

/* The error text a command answers (fails for any other reply). */
#define ERR(c, ...) err_reply(fake_run((c), __VA_ARGS__))
static const char *err_reply(const fr_reply *r)
{
    assert_int_equal(r->type, FR_REPLY_ERROR);
    return r->str;
}

#define IS_NIL(c, ...) assert_int_equal(fake_run((c), __VA_ARGS__)->type, FR_REPLY_NIL)

/* Asserts that k is alive now and through `left` more ms, and gone one ms later. */
static void expect_deadline(fixture *f, const char *k, long long left)
{
    if (left > 0) fr_clock_advance(f->srv, left - 1);
    if (left > 0) assert_int_equal(INT(f->c, "PTTL %s", k), 1);
    if (left > 0) fr_clock_advance(f->srv, 1);
    assert_int_equal(INT(f->c, "EXISTS %s", k), 1);
    assert_int_equal(INT(f->c, "PTTL %s", k), 0);
    fr_clock_advance(f->srv, 1);
    assert_int_equal(INT(f->c, "EXISTS %s", k), 0);
    IS_NIL(f->c, "GET %s", k);
    assert_int_equal(INT(f->c, "PTTL %s", k), -2);
}

/* ----- Deadlines ------------------------------------------------------------------- */

static void test_set_ex_px_deadline(void **state)
{
    fixture *f = *state;
    OK(f->c, "SET a v EX 10");
    assert_int_equal(INT(f->c, "PTTL a"), 10000);
    assert_int_equal(INT(f->c, "PEXPIRETIME a"), START_MS + 10000);
    expect_deadline(f, "a", 10000);

    OK(f->c, "SET b v PX 1");
    expect_deadline(f, "b", 1);
}

static void test_set_exat_pxat_deadline(void **state)
{
    fixture *f = *state;
    OK(f->c, "SET a v EXAT %lld", START_MS / 1000 + 5);
    assert_int_equal(INT(f->c, "PEXPIRETIME a"), START_MS + 5000);
    expect_deadline(f, "a", 5000);

    /* PXAT exactly now: SET stores it, and the key lives through this millisecond. */
    long long now = fr_clock_now(f->srv);
    OK(f->c, "SET b v PXAT %lld", now);
    expect_deadline(f, "b", 0);

    /* One ms in the past: gone at once, and the reply is still OK. */
    now = fr_clock_now(f->srv);
    OK(f->c, "SET c v PXAT %lld", now - 1);
    assert_int_equal(INT(f->c, "EXISTS c"), 0);

    /* ... and an existing value answered by GET before it goes. */
    OK(f->c, "SET d old");
    assert_string_equal(BULK(f->c, "SET d new PXAT %lld GET", now - 1), "old");
    assert_int_equal(INT(f->c, "EXISTS d"), 0);
}

static void test_setex_psetex_deadline(void **state)
{
    fixture *f = *state;
    OK(f->c, "SETEX a 3 v");
    expect_deadline(f, "a", 3000);
    OK(f->c, "PSETEX b 7 v");
    expect_deadline(f, "b", 7);
}

/* GETEX EXAT/PXAT deletes when the deadline is <= now, unlike SET's lazy rule. */
static void test_getex_deadlines(void **state)
{
    fixture *f = *state;
    long long now = fr_clock_now(f->srv);

    OK(f->c, "SET a v");
    assert_string_equal(BULK(f->c, "GETEX a PXAT %lld", now), "v");
    assert_int_equal(INT(f->c, "EXISTS a"), 0);

    OK(f->c, "SET a v");
    assert_string_equal(BULK(f->c, "GETEX a PXAT %lld", now + 1), "v");
    expect_deadline(f, "a", 1);

    OK(f->c, "SET a v");
    assert_string_equal(BULK(f->c, "GETEX a EX 2"), "v");
    expect_deadline(f, "a", 2000);

    OK(f->c, "SET a v PX 50");
    assert_string_equal(BULK(f->c, "GETEX a PERSIST"), "v");
    assert_int_equal(INT(f->c, "PTTL a"), -1);
    fr_clock_advance(f->srv, 1000);
    assert_int_equal(INT(f->c, "EXISTS a"), 1);
}

/* KEEPTTL keeps the absolute deadline; a plain SET, GETSET and MSET drop it. */
static void test_keepttl_and_ttl_drop(void **state)
{
    fixture *f = *state;
    OK(f->c, "SET a v PX 100");
    fr_clock_advance(f->srv, 40);
    OK(f->c, "SET a w KEEPTTL");
    assert_int_equal(INT(f->c, "PTTL a"), 60);
    OK(f->c, "SET a xyz XX KEEPTTL"); /* a new length: a new buffer, same deadline */
    assert_int_equal(INT(f->c, "PTTL a"), 60);
    expect_deadline(f, "a", 60);

    /* KEEPTTL over another type (a hash) keeps that key's deadline too. */
    assert_int_equal(INT(f->c, "HSET l a b"), 1);
    assert_int_equal(INT(f->c, "PEXPIRE l 30"), 1);
    OK(f->c, "SET l s KEEPTTL");
    assert_int_equal(INT(f->c, "PTTL l"), 30);

    OK(f->c, "SET b v PX 100");
    OK(f->c, "SET b w");
    assert_int_equal(INT(f->c, "PTTL b"), -1);
    OK(f->c, "SET b v PX 100");
    IS_NIL(f->c, "GETSET c x");
    assert_string_equal(BULK(f->c, "GETSET b w"), "v");
    assert_int_equal(INT(f->c, "PTTL b"), -1);
    OK(f->c, "SET b v PX 100");
    OK(f->c, "MSET b w");
    assert_int_equal(INT(f->c, "PTTL b"), -1);
}

/* INCR, INCRBYFLOAT, APPEND and SETRANGE keep the TTL. */
static void test_updates_keep_ttl(void **state)
{
    fixture *f = *state;
    OK(f->c, "SET n 9 PX 100");
    assert_int_equal(INT(f->c, "INCR n"), 10); /* grows a digit: new buffer */
    assert_int_equal(INT(f->c, "PTTL n"), 100);
    assert_string_equal(BULK(f->c, "INCRBYFLOAT n 0.5"), "10.5");
    assert_int_equal(INT(f->c, "PTTL n"), 100);
    assert_int_equal(INT(f->c, "APPEND n 1"), 5);
    assert_int_equal(INT(f->c, "SETRANGE n 10 x"), 11);
    assert_int_equal(INT(f->c, "PTTL n"), 100);
    expect_deadline(f, "n", 100);
}

/* A key whose deadline passed is missing to every command, and nothing of its TTL
 * carries over to the key that replaces it. */
static void test_expired_keys_are_missing(void **state)
{
    fixture *f = *state;
    const char *cmds[] = {"INCR k", "INCRBYFLOAT k 1", "APPEND k 1", "SETRANGE k 0 1",
                          "SETNX k 1", "MSETNX k 1", "SET k 1 NX", "SET k 1 GET"};
    for (size_t i = 0; i < sizeof(cmds) / sizeof(cmds[0]); i++) {
        OK(f->c, "SET k 41 PX 10");
        fr_clock_advance(f->srv, 11);
        const fr_reply *r = fake_run(f->c, "%s", cmds[i]);
        assert_int_not_equal(r->type, FR_REPLY_ERROR);
        if (i == 7) assert_int_equal(r->type, FR_REPLY_NIL);
        assert_string_equal(BULK(f->c, "GET k"), "1");
        assert_int_equal(INT(f->c, "PTTL k"), -1);
    }
    OK(f->c, "SET k v PX 10");
    fr_clock_advance(f->srv, 11);
    IS_NIL(f->c, "SET k v XX");
    assert_int_equal(INT(f->c, "EXISTS k"), 0);
    IS_NIL(f->c, "GETDEL k");
    IS_NIL(f->c, "GETEX k PERSIST");
    assert_int_equal(INT(f->c, "STRLEN k"), 0);
    assert_string_equal(BULK(f->c, "GETRANGE k 0 -1"), "");
}

/* ----- Relative expires near the end of the clock ------------------------------------ */

/* Redis adds the clock to EX/PX and rejects a sum that wraps; EXAT/PXAT are not added. */
static void test_relative_expire_overflow(void **state)
{
    fixture *f = *state;
    const char *msg = "ERR invalid expire time in 'set' command";

    fr_clock_set(f->srv, LLONG_MAX - 1000);
    OK(f->c, "SET a v PX 1000");
    assert_int_equal(INT(f->c, "PTTL a"), 1000);
    assert_string_equal(ERR(f->c, "SET a v PX 1001"), msg);
    assert_string_equal(ERR(f->c, "SET a v EX 2"), msg);
    OK(f->c, "SET a v EX 1"); /* exactly LLONG_MAX */
    assert_int_equal(INT(f->c, "PTTL a"), 1000);
    assert_string_equal(ERR(f->c, "SETEX a 2 v"), "ERR invalid expire time in 'setex' command");
    assert_string_equal(ERR(f->c, "PSETEX a 1001 v"),
                        "ERR invalid expire time in 'psetex' command");
    assert_string_equal(ERR(f->c, "GETEX a PX 1001"),
                        "ERR invalid expire time in 'getex' command");
    OK(f->c, "SET a v PXAT %lld", LLONG_MAX);
    assert_int_equal(INT(f->c, "PTTL a"), 1000);
}

/* ----- INCR's in-place rewrite -------------------------------------------------------- */

/* Walking through every digit-count boundary, up and down, GET always shows the exact
 * decimal text: the shrinking and regrowing buffer never leaves stale digits. */
static void test_incr_text_across_boundaries(void **state)
{
    fixture *f = *state;
    char want[32];

    OK(f->c, "SET n -1005");
    for (long long v = -1004; v <= 1005; v++) {
        assert_int_equal(INT(f->c, "INCR n"), v);
        snprintf(want, sizeof(want), "%lld", v);
        assert_string_equal(BULK(f->c, "GET n"), want);
        assert_int_equal(INT(f->c, "STRLEN n"), (long long)strlen(want));
    }
    for (long long v = 1004; v >= -1005; v--) {
        assert_int_equal(INT(f->c, "DECR n"), v);
        snprintf(want, sizeof(want), "%lld", v);
        assert_string_equal(BULK(f->c, "GET n"), want);
    }
    OK(f->c, "SET n 5");
    assert_int_equal(INT(f->c, "INCRBY n %lld", LLONG_MAX - 5), LLONG_MAX);
    assert_string_equal(BULK(f->c, "GET n"), "9223372036854775807");
    assert_int_equal(INT(f->c, "DECRBY n %lld", LLONG_MAX), 0);
    assert_string_equal(BULK(f->c, "GET n"), "0");
    assert_int_equal(INT(f->c, "DECRBY n %lld", LLONG_MAX), -LLONG_MAX);
    assert_int_equal(INT(f->c, "DECR n"), LLONG_MIN);
    assert_string_equal(BULK(f->c, "GET n"), "-9223372036854775808");
    assert_string_equal(ERR(f->c, "DECR n"), "ERR increment or decrement would overflow");
    assert_string_equal(BULK(f->c, "GET n"), "-9223372036854775808");
    /* APPEND after an in-place shrink sees the short text, not the old buffer. */
    OK(f->c, "SET n 100");
    assert_int_equal(INT(f->c, "DECR n"), 99);
    assert_int_equal(INT(f->c, "APPEND n x"), 3);
    assert_string_equal(BULK(f->c, "GET n"), "99x");
}

/* SET over a string of the same length rewrites it in place; other lengths replace it. */
static void test_set_in_place(void **state)
{
    fixture *f = *state;
    OK(f->c, "SET k abc");
    OK(f->c, "SET k xyz");
    assert_string_equal(BULK(f->c, "GET k"), "xyz");
    OK(f->c, "SET k longer-value");
    assert_string_equal(BULK(f->c, "GET k"), "longer-value");
    OK(f->c, "SET k \"\"");
    assert_string_equal(BULK(f->c, "GET k"), "");
    assert_string_equal(BULK(f->c, "SET k \"a\\x00b\" GET"), "");
    const fr_reply *r = fake_run(f->c, "GET k");
    assert_int_equal(r->type, FR_REPLY_BULK);
    assert_int_equal(r->len, 3);
    assert_memory_equal(r->str, "a\0b", 3);
}

/* SETRANGE and APPEND grow with zero bytes and keep binary content. */
static void test_setrange_append_binary(void **state)
{
    fixture *f = *state;
    assert_int_equal(INT(f->c, "SETRANGE k 4 \"\\x00z\""), 6);
    const fr_reply *r = fake_run(f->c, "GET k");
    assert_int_equal(r->len, 6);
    assert_memory_equal(r->str, "\0\0\0\0\0z", 6);
    assert_int_equal(INT(f->c, "APPEND k \"\\xff\""), 7);
    assert_int_equal(INT(f->c, "SETRANGE k 0 ab"), 7);
    r = fake_run(f->c, "GETRANGE k 0 -1");
    assert_int_equal(r->len, 7);
    assert_memory_equal(r->str, "ab\0\0\0z\xff", 7);
    for (int i = 0; i < 1000; i++) assert_int_equal(INT(f->c, "APPEND big 0123456789"), (i + 1) * 10);
    assert_string_equal(BULK(f->c, "GETRANGE big 9990 -1"), "0123456789");
}

/* ----- WATCH ------------------------------------------------------------------------- */

/* c WATCHes k; c2 runs cmd; c's EXEC then answers nil (touched) or an array. */
static void check_touch(fixture *f, const char *setup_cmd, const char *cmd, int touches)
{
    fake_run(f->c, "FLUSHALL");
    if (setup_cmd) fake_run(f->c, "%s", setup_cmd);
    OK(f->c, "WATCH k");
    fake_run(f->c2, "%s", cmd);
    OK(f->c, "MULTI");
    fake_run(f->c, "PING");
    const fr_reply *r = fake_run(f->c, "EXEC");
    if (touches != (r->type == FR_REPLY_NIL_ARRAY))
        print_message("setup '%s', cmd '%s': expected %s\n", setup_cmd ? setup_cmd : "-", cmd,
                      touches ? "EXEC to fail" : "EXEC to run");
    assert_int_equal(r->type, touches ? FR_REPLY_NIL_ARRAY : FR_REPLY_ARRAY);
}

static void test_watch_touches(void **state)
{
    fixture *f = *state;
    static const struct {
        const char *setup, *cmd; /* setup: NULL for none */
        int touches;
    } cases[] = {
        /* Writes touch the key. */
        {NULL, "SET k v", 1},
        {"SET k v", "SET k w", 1}, /* in place */
        {"SET k v", "SET k w KEEPTTL XX", 1},
        {NULL, "SETNX k v", 1},
        {NULL, "SETEX k 10 v", 1},
        {NULL, "PSETEX k 10 v", 1},
        {"SET k v", "GETSET k w", 1},
        {"SET k v", "GETDEL k", 1},
        {"SET k v", "GETEX k EX 10", 1},
        {"SET k v EX 10", "GETEX k PERSIST", 1},
        {"SET k v", "GETEX k PXAT 1", 1},
        {NULL, "MSET a 1 k 2", 1},
        {NULL, "MSETNX a 1 k 2", 1},
        {"SET k 1", "INCR k", 1},
        {NULL, "DECRBY k 5", 1},
        {"SET k 1", "INCRBYFLOAT k 1.5", 1},
        {NULL, "APPEND k x", 1},
        {NULL, "APPEND k \"\"", 1},
        {"SET k v", "SETRANGE k 0 x", 1},
        /* Reads, refusals and no-ops do not. */
        {"SET k v", "GET k", 0},
        {"SET k v", "SET k w NX", 0},
        {NULL, "SET k w XX", 0},
        {"SET k v", "SETNX k w", 0},
        {"SET k v", "MSETNX a 1 k 2", 0},
        {"SET k v", "GETEX k", 0},
        {"SET k v", "GETEX k PERSIST", 0},
        {NULL, "GETDEL k", 0},
        {"SET k v", "SETRANGE k 0 \"\"", 0},
        {NULL, "SETRANGE k 3 \"\"", 0},
        {"SET k 1", "INCRBY k x", 0},
        {"SET k v", "INCR k", 0},
        {"SET k v", "SET k v EX 0", 0},
        {"HSET k a b", "SET k v GET", 0},
        {"SET k v", "MGET k a", 0},
        {"SET k v", "STRLEN k", 0},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
        check_touch(f, cases[i].setup, cases[i].cmd, cases[i].touches);
}

/* ----- The command table ---------------------------------------------------------- */

/* Every string command is in the table with Redis 7.0's arity and group. */
static void test_command_table(void **state)
{
    (void)state;
    static const struct {
        const char *name;
        int arity;
    } want[] = {
        {"get", 2},      {"set", -3},      {"setnx", 3},       {"setex", 4},
        {"psetex", 4},   {"getset", 3},    {"getdel", 2},      {"getex", -2},
        {"mget", -2},    {"mset", -3},     {"msetnx", -3},     {"incr", 2},
        {"decr", 2},     {"incrby", 3},    {"decrby", 3},      {"incrbyfloat", 3},
        {"append", 3},   {"strlen", 2},    {"getrange", 4},    {"substr", 4},
        {"setrange", 4}, {"lcs", -3},
    };
    for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++) {
        const fr_command_info *ci = fake_command_info(want[i].name);
        assert_int_equal(ci->arity, want[i].arity);
        assert_string_equal(ci->group, "string");
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        TEST(test_set_ex_px_deadline),
        TEST(test_set_exat_pxat_deadline),
        TEST(test_setex_psetex_deadline),
        TEST(test_getex_deadlines),
        TEST(test_keepttl_and_ttl_drop),
        TEST(test_updates_keep_ttl),
        TEST(test_expired_keys_are_missing),
        TEST(test_relative_expire_overflow),
        TEST(test_incr_text_across_boundaries),
        TEST(test_set_in_place),
        TEST(test_setrange_append_binary),
        TEST(test_watch_touches),
        cmocka_unit_test(test_command_table),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
