/* test_observer.c -- the fake's observer hooks (observer.c), what fakeredis-server builds
 * MONITOR, SLOWLOG, LATENCY and client-side caching on:
 *
 * - the call hook sees every command as Redis's call() runs it: a client's command after
 *   it ran, EXEC's queue (each command, then EXEC), a script's redis.call (from_script,
 *   the caller as client, the script's database) after the script's own "before" event,
 *   readonly/fast flags, each call's reply (a script's command: what the script got), a
 *   blocked call flagged and without a reply, refused commands not at all;
 * - the key hook sees every written, deleted or expired key with the writing client, and
 *   a flush (NULL key, -1 for FLUSHALL);
 * - fr_key_exists without expiring anything;
 * - fr_stats_latency_cdf walks the latency histogram as Redis's fillCommandCDF. */
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

typedef fake_fixture fixture;
#define TEST(fn) FAKE_TEST2(fn)
#define RUN(c, ...) fake_run((c), __VA_ARGS__)

/* What the hooks saw, one line per event. */
typedef struct seen {
    char log[4096];
    size_t len;
    fr_client *client;    /* the last call event's client */
} seen;

static void add(seen *s, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void add(seen *s, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(s->log + s->len, sizeof(s->log) - s->len, fmt, ap);
    va_end(ap);
    if (n > 0) s->len += (size_t)n;
}

static void on_call(void *ctx, const fr_call_event *ev)
{
    seen *s = ctx;
    add(s, "%s%s%s db=%d %s%s%s%s:", ev->before ? "before " : "", ev->from_script ? "lua " : "",
        ev->name, ev->db, ev->flags & FR_CALL_READONLY ? "r" : "",
        ev->flags & FR_CALL_ADMIN ? "a" : "", ev->flags & FR_CALL_FAST ? "f" : "",
        ev->flags & FR_CALL_BLOCKED ? "b" : "");
    for (int i = 0; i < ev->argc; i++) add(s, " %.*s", (int)ev->argvlen[i], ev->argv[i]);
    if (ev->reply) { /* its reply, CR and LF shown as | */
        add(s, " =>");
        for (size_t i = 0; i < ev->reply_len; i++)
            add(s, "%c", ev->reply[i] == '\r' || ev->reply[i] == '\n' ? '|' : ev->reply[i]);
    }
    add(s, "\n");
    s->client = ev->client;
}

static void on_key(void *ctx, fr_client *client, int db, const char *key, size_t len)
{
    seen *s = ctx;
    if (key) add(s, "key db=%d %.*s%s\n", db, (int)len, key, client ? "" : " (no client)");
    else add(s, "flush db=%d\n", db);
}

static void test_call_events(void **state)
{
    fixture *f = *state;
    seen s = {0};
    fr_server_set_call_hook(f->srv, on_call, &s);
    RUN(f->c, "SET a 1");
    RUN(f->c, "GET a");
    RUN(f->c, "NOSUCH x");     /* refused: not called */
    RUN(f->c, "GET");          /* wrong arity: not called */
    RUN(f->c, "MULTI");
    RUN(f->c, "INCR a");
    RUN(f->c, "EXEC");
    RUN(f->c, "SELECT 2");
    RUN(f->c, "EVAL \"redis.call('select','5') return redis.call('set',KEYS[1],'v')\" 1 k");
    assert_string_equal(s.log,
                        "set db=0 : SET a 1 =>+OK||\n"
                        "get db=0 rf: GET a =>$1||1||\n"
                        "multi db=0 f: MULTI =>+OK||\n"
                        "incr db=0 f: INCR a =>:2||\n"
                        "exec db=0 : EXEC =>*1||:2||\n" /* its whole reply */
                        "select db=2 f: SELECT 2 =>+OK||\n" /* the db after it ran, as Redis */
                        "before eval db=2 : EVAL redis.call('select','5') return "
                        "redis.call('set',KEYS[1],'v') 1 k\n"
                        "lua select db=5 f: select 5 =>+OK||\n"
                        "lua set db=5 : set k v =>+OK||\n"
                        "eval db=2 : EVAL redis.call('select','5') return "
                        "redis.call('set',KEYS[1],'v') 1 k =>+OK||\n");
    assert_ptr_equal(s.client, f->c); /* a script's commands name the script's caller */
    fr_server_set_call_hook(f->srv, NULL, NULL);
    s.len = 0;
    s.log[0] = '\0';
    RUN(f->c, "PING");
    assert_string_equal(s.log, "");
}

static void test_blocked_call(void **state)
{
    fixture *f = *state;
    seen s = {0};
    fr_client_set_blocking(f->c, 1);
    fr_server_set_call_hook(f->srv, on_call, &s);
    assert_null(fr_exec_line(f->c, "BLPOP q 0")); /* no reply: it blocked */
    assert_true(fr_client_is_blocked(f->c));
    assert_string_equal(s.log, "blpop db=0 b: BLPOP q 0\n");
    fr_server_set_call_hook(f->srv, NULL, NULL);
    RUN(f->c2, "RPUSH q x");
}

static void test_key_events(void **state)
{
    fixture *f = *state;
    seen s = {0};
    fr_server_set_key_hook(f->srv, on_key, &s);
    RUN(f->c, "SET a 1");
    RUN(f->c, "GET a");         /* a read: nothing */
    RUN(f->c, "DEL a nokey");   /* only what was there */
    RUN(f->c, "SELECT 3");
    RUN(f->c, "SET b 1 PX 10");
    fr_clock_advance(f->srv, 11);
    RUN(f->c, "GET b");         /* expired on access */
    RUN(f->c, "FLUSHDB");
    RUN(f->c, "FLUSHALL");
    assert_string_equal(s.log,
                        "key db=0 a\n"
                        "key db=0 a\n"
                        "key db=3 b\n"
                        "key db=3 b (no client)\n"
                        "flush db=3\n"
                        "flush db=-1\n");
    fr_server_set_key_hook(f->srv, NULL, NULL);
}

static void test_key_exists(void **state)
{
    fixture *f = *state;
    RUN(f->c, "SET a 1");
    RUN(f->c, "SET t 1 PX 5");
    assert_int_equal(fr_key_exists(f->srv, 0, "a", 1), 1);
    assert_int_equal(fr_key_exists(f->srv, 1, "a", 1), 0);
    assert_int_equal(fr_key_exists(f->srv, 0, "t", 1), 1);
    fr_clock_advance(f->srv, 6);
    assert_int_equal(fr_key_exists(f->srv, 0, "t", 1), 0);
    assert_int_equal(fr_key_exists(f->srv, 99, "a", 1), 0);
    size_t keys;
    fr_db_counts(f->srv, 0, &keys, NULL);
    assert_int_equal(keys, 1); /* nothing was expired by looking */
}

/* A clock that moves by *step microseconds per reading. */
static uint64_t stepping(void *arg)
{
    static uint64_t t;
    return t += *(uint64_t *)arg;
}

static void test_latency_cdf(void **state)
{
    fixture *f = *state;
    uint64_t step = 0;
    fr_stats_set_clock(f->srv, stepping, &step);
    step = 3; /* each call lasts 3 us: 3000 ns, between 2048 and 4096 */
    RUN(f->c, "SET a 1");
    step = 100; /* 100 us */
    RUN(f->c, "SET a 2");
    RUN(f->c, "SET a 3");
    fr_stats_set_clock(f->srv, NULL, NULL);
    size_t row = (size_t)-1;
    for (size_t i = 0; i < fr_stats_command_rows(f->srv); i++) {
        fr_command_stats st;
        fr_stats_command_at(f->srv, i, &st);
        if (!strcmp(st.name, "set")) row = i;
    }
    assert_int_not_equal(row, (size_t)-1);
    uint64_t calls, cum[64];
    int64_t usec[64];
    size_t n;
    assert_int_equal(fr_stats_latency_cdf(f->srv, row, &calls, usec, cum, 64, &n), 0);
    assert_int_equal(calls, 3);
    /* reports only where the count grew: the 4096 ns level (4 us), then 131072 ns */
    assert_int_equal(n, 2);
    assert_int_equal(usec[0], 4);
    assert_int_equal(cum[0], 1);
    assert_int_equal(usec[1], 132); /* the 131072 ns slot's highest value, 132095 */
    assert_int_equal(cum[1], 3);
    /* a row without samples */
    size_t get = (size_t)-1;
    for (size_t i = 0; i < fr_stats_command_rows(f->srv); i++) {
        fr_command_stats st;
        fr_stats_command_at(f->srv, i, &st);
        if (!strcmp(st.name, "hget")) get = i;
    }
    assert_int_equal(fr_stats_latency_cdf(f->srv, get, &calls, usec, cum, 64, &n), -1);
    assert_int_equal(n, 0);
    /* samples all in one slot (no clock: every call lasts 0): kept without a histogram,
     * reported as one (the 1024 ns level, its slot's highest value) */
    RUN(f->c, "GET a");
    RUN(f->c, "GET a");
    for (size_t i = 0; i < fr_stats_command_rows(f->srv); i++) {
        fr_command_stats st;
        fr_stats_command_at(f->srv, i, &st);
        if (!strcmp(st.name, "get")) get = i;
    }
    assert_int_equal(fr_stats_latency_cdf(f->srv, get, &calls, usec, cum, 64, &n), 0);
    assert_int_equal(calls, 2);
    assert_int_equal(n, 1);
    assert_int_equal(usec[0], 1);
    assert_int_equal(cum[0], 2);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        TEST(test_call_events), TEST(test_blocked_call), TEST(test_key_events),
        TEST(test_key_exists), TEST(test_latency_cdf),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
