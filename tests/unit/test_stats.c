/* test_stats.c -- the statistics API (stats.c): what INFO commandstats, errorstats and
 * latencystats report, counted by redis-server 7.0.15's rules.
 *
 * - error replies: total_error_replies, one count per prefix (the first word when it ends
 *   within 32 bytes, else ERR), prefixes in byte order;
 * - rejected calls (arity, a container without subcommand, NO_MULTI-free paths, CROSSSLOT,
 *   subscribed mode) against failed calls (ran and answered an error), inside MULTI/EXEC:
 *   EXEC fails for its own errors only;
 * - blocked calls: counted when they block, failed when served with an error
 *   (XGROUP DESTROY's NOGROUP) or unblocked by CLIENT UNBLOCK, nothing on a timeout;
 * - durations from an embedder's clock and hdr_histogram's percentiles; latency-tracking
 *   off; fr_stats_reset; counts recorded by an embedder for names of its own.
 * The same rules are compared with a real redis-server by tests/server/stats_diff.py.
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

typedef fake_fixture fixture;
#define TEST(fn) FAKE_TEST2(fn)
#define RUN(c, ...) fake_run((c), __VA_ARGS__)

/* The counters of name (zeros when it has none). */
static fr_command_stats cmd(fr_server *s, const char *name)
{
    fr_command_stats st;
    fr_stats_command(s, name, &st);
    return st;
}

/* The count of an error prefix, 0 when it has none. */
static uint64_t errors(fr_server *s, const char *prefix)
{
    for (size_t i = 0; i < fr_stats_error_count(s); i++) {
        const char *p;
        size_t len;
        uint64_t n;
        assert_int_equal(fr_stats_error_at(s, i, &p, &len, &n), 0);
        if (len == strlen(prefix) && memcmp(p, prefix, len) == 0) return n;
    }
    return 0;
}

/* Asserts calls, rejected and failed of name. */
static void expect(fr_server *s, const char *name, uint64_t calls, uint64_t rejected,
                   uint64_t failed)
{
    fr_command_stats st = cmd(s, name);
    if (st.calls != calls || st.rejected_calls != rejected || st.failed_calls != failed)
        fail_msg("%s: calls=%llu rejected=%llu failed=%llu, want %llu %llu %llu", name,
                 (unsigned long long)st.calls, (unsigned long long)st.rejected_calls,
                 (unsigned long long)st.failed_calls, (unsigned long long)calls,
                 (unsigned long long)rejected, (unsigned long long)failed);
}

static void errors_by_prefix(void **state)
{
    fixture *f = *state;
    RUN(f->c, "NOSUCH a");                 /* unknown: ERR, no row */
    RUN(f->c, "SET k v");
    RUN(f->c, "LPUSH k x");                /* WRONGTYPE */
    RUN(f->c, "XGROUP CREATECONSUMER s g c"); /* ERR (no key) */
    RUN(f->c, "XADD s 1-1 f v");
    RUN(f->c, "XGROUP CREATECONSUMER s g c"); /* NOGROUP */
    assert_int_equal(fr_stats_total_error_replies(f->srv), 4);
    assert_int_equal(errors(f->srv, "ERR"), 2);
    assert_int_equal(errors(f->srv, "WRONGTYPE"), 1);
    assert_int_equal(errors(f->srv, "NOGROUP"), 1);
    expect(f->srv, "lpush", 1, 0, 1);
    expect(f->srv, "set", 1, 0, 0);
    expect(f->srv, "xgroup|createconsumer", 2, 0, 2);
    /* byte order, as Redis's radix tree */
    const char *prev = "";
    size_t prevlen = 0;
    for (size_t i = 0; i < fr_stats_error_count(f->srv); i++) {
        const char *p;
        size_t len;
        fr_stats_error_at(f->srv, i, &p, &len, NULL);
        size_t n = len < prevlen ? len : prevlen;
        int cmp = memcmp(prev, p, n);
        assert_true(cmp < 0 || (cmp == 0 && prevlen < len));
        prev = p;
        prevlen = len;
    }
    assert_int_equal(fr_stats_error_at(f->srv, 99, NULL, NULL, NULL), -1);
}

static void prefix_rule(void **state)
{
    fixture *f = *state;
    /* a first word ending within 32 bytes (with the '-') is the prefix; past that, ERR */
    fr_fault_command(f->srv, "GET", "MYCODE injected", 1);
    RUN(f->c, "GET a");
    fr_fault_command(f->srv, "GET", "ABCDEFGHIJKLMNOPQRSTUVWXYZ01234 x", 1); /* 31 + space */
    RUN(f->c, "GET a");
    fr_fault_command(f->srv, "GET", "ABCDEFGHIJKLMNOPQRSTUVWXYZ012345 x", 1); /* 32 */
    RUN(f->c, "GET a");
    fr_fault_command(f->srv, "GET", "NOSPACE", 1);
    RUN(f->c, "GET a");
    assert_int_equal(errors(f->srv, "MYCODE"), 1);
    assert_int_equal(errors(f->srv, "ABCDEFGHIJKLMNOPQRSTUVWXYZ01234"), 0);
    assert_int_equal(errors(f->srv, "ABCDEFGHIJKLMNOPQRSTUVWXYZ012345"), 0);
    assert_int_equal(errors(f->srv, "ERR"), 3);
    expect(f->srv, "get", 4, 0, 4); /* a fault replaces a run: a failed call */
}

static void rejected_before_running(void **state)
{
    fixture *f = *state;
    RUN(f->c, "SET k");           /* arity */
    RUN(f->c, "OBJECT");          /* a container alone: its own row */
    RUN(f->c, "OBJECT NOSUCH k"); /* unknown subcommand: no row */
    RUN(f->c, "SET k1 v1");
    RUN(f->c, "SET k2 v2");
    expect(f->srv, "set", 2, 1, 0);
    expect(f->srv, "object", 0, 1, 0);
    assert_int_equal(fr_stats_total_error_replies(f->srv), 3);
    /* subscribed mode refuses GET: rejected */
    RUN(f->c2, "SUBSCRIBE ch");
    RUN(f->c2, "GET k1");
    expect(f->srv, "get", 0, 1, 0);
    expect(f->srv, "subscribe", 1, 0, 0);
    /* QUIT is a call */
    RUN(f->c, "QUIT");
    expect(f->srv, "quit", 1, 0, 0);
}

static void multi_exec(void **state)
{
    fixture *f = *state;
    /* a run-time error inside EXEC fails that command, not EXEC */
    RUN(f->c, "SET s x");
    RUN(f->c, "MULTI");
    RUN(f->c, "SET a b");
    RUN(f->c, "LPUSH s x");
    RUN(f->c, "EXEC");
    expect(f->srv, "multi", 1, 0, 0);
    expect(f->srv, "set", 2, 0, 0);
    expect(f->srv, "lpush", 1, 0, 1);
    expect(f->srv, "exec", 1, 0, 0);
    RUN(f->c, "EXEC"); /* EXEC without MULTI: its own failure */
    expect(f->srv, "exec", 2, 0, 1);
    /* a queue-time refusal: rejected, then EXECABORT fails EXEC */
    fr_stats_reset(f->srv);
    RUN(f->c, "MULTI");
    RUN(f->c, "SET");
    RUN(f->c, "EXEC");
    expect(f->srv, "set", 0, 1, 0);
    expect(f->srv, "exec", 1, 0, 1);
    assert_int_equal(errors(f->srv, "ERR"), 1);
    assert_int_equal(errors(f->srv, "EXECABORT"), 1);
    assert_int_equal(fr_stats_total_error_replies(f->srv), 2);
    /* EXEC with arguments is refused itself: rejected */
    RUN(f->c, "MULTI");
    RUN(f->c, "EXEC x");
    expect(f->srv, "exec", 1, 1, 1);
    assert_int_equal(errors(f->srv, "EXECABORT"), 2);
}

static void crossslot_is_rejected(void **state)
{
    (void)state;
    fr_config cfg = fr_config_default();
    cfg.cluster_enabled = 1;
    fake_fixture *f = fake_fixture_new(&cfg, 1);
    RUN(f->c, "MSET a 1 b 2");
    expect(f->srv, "mset", 0, 1, 0);
    assert_int_equal(errors(f->srv, "CROSSSLOT"), 1);
    fake_fixture_free(f);
}

static void blocked_calls(void **state)
{
    fixture *f = *state;
    fr_client_set_blocking(f->c2, 1);
    /* blocks: one call; CLIENT UNBLOCK ERROR fails it */
    assert_null(fr_exec_line(f->c2, "BLPOP q 0"));
    expect(f->srv, "blpop", 1, 0, 0);
    fr_client_unblock(f->c2, 1);
    assert_non_null(fr_server_take_woken(f->srv));
    expect(f->srv, "blpop", 1, 0, 1);
    assert_int_equal(errors(f->srv, "UNBLOCKED"), 1);
    /* 7.0.15 counts CLIENT UNBLOCK TIMEOUT as a failure too */
    assert_null(fr_exec_line(f->c2, "BLPOP q 0"));
    fr_client_unblock(f->c2, 0);
    assert_non_null(fr_server_take_woken(f->srv));
    expect(f->srv, "blpop", 2, 0, 2);
    /* served with data: no failure; a timeout adds nothing */
    assert_null(fr_exec_line(f->c2, "BLPOP q 0"));
    RUN(f->c, "RPUSH q a");
    assert_non_null(fr_server_take_woken(f->srv));
    expect(f->srv, "blpop", 3, 0, 2);
    expect(f->srv, "rpush", 1, 0, 0);
    assert_null(fr_exec_line(f->c2, "BLPOP q 1"));
    fr_clock_advance(f->srv, 2000);
    fr_server_expire_blocked(f->srv);
    assert_non_null(fr_server_take_woken(f->srv));
    expect(f->srv, "blpop", 4, 0, 2);
    /* XGROUP DESTROY: the reader fails with NOGROUP, DESTROY does not */
    fr_stats_reset(f->srv);
    RUN(f->c, "XGROUP CREATE s g $ MKSTREAM");
    assert_null(fr_exec_line(f->c2, "XREADGROUP GROUP g alice BLOCK 0 STREAMS s >"));
    RUN(f->c, "XGROUP DESTROY s g");
    assert_non_null(fr_server_take_woken(f->srv));
    expect(f->srv, "xreadgroup", 1, 0, 1);
    expect(f->srv, "xgroup|destroy", 1, 0, 0);
    assert_int_equal(errors(f->srv, "NOGROUP"), 1);
    assert_int_equal(fr_stats_total_error_replies(f->srv), 1);
}

/* A clock that moves 5 microseconds per reading. */
static uint64_t ticking(void *arg)
{
    uint64_t *t = arg;
    return *t += 5;
}

/* The row index of name. */
static size_t row(fr_server *s, const char *name)
{
    for (size_t i = 0; i < fr_stats_command_rows(s); i++) {
        fr_command_stats st;
        fr_stats_command_at(s, i, &st);
        if (strcmp(st.name, name) == 0) return i;
    }
    fail_msg("no row %s", name);
    return 0;
}

static void durations_and_latency(void **state)
{
    fixture *f = *state;
    double us;
    /* no clock: durations are 0, samples 1 ns (hdr's minimum) */
    RUN(f->c, "SET a b");
    assert_int_equal(cmd(f->srv, "set").usec, 0);
    assert_int_equal(fr_stats_latency_at(f->srv, row(f->srv, "set"), 50, &us), 0);
    assert_true(us == 0.001);
    uint64_t t = 0;
    fr_stats_set_clock(f->srv, ticking, &t);
    fr_stats_reset(f->srv);
    RUN(f->c, "SET a b");
    RUN(f->c, "GET a");
    fr_command_stats st = cmd(f->srv, "set");
    assert_int_equal(st.usec, 5);
    assert_true(st.has_latency);
    /* 5000 ns falls in hdr's [4992, 5023] bucket */
    assert_int_equal(fr_stats_latency_at(f->srv, row(f->srv, "set"), 50, &us), 0);
    assert_true(us == 5.023);
    assert_int_equal(fr_stats_latency_at(f->srv, row(f->srv, "set"), 0, &us), 0);
    assert_true(us == 4.992);
    assert_int_equal(fr_stats_latency_at(f->srv, row(f->srv, "del"), 50, &us), -1);
    /* samples in two of hdr's buckets: 3000 ns in [2992, 3007] twice, then 7000 ns in
     * [6976, 7007].  The first two are counted before the second bucket appears, and
     * must still count: the median is in the first bucket. */
    fr_stats_reset(f->srv);
    fr_stats_record_call(f->srv, "set", 3, 0);
    fr_stats_record_call(f->srv, "set", 3, 0);
    assert_int_equal(fr_stats_latency_at(f->srv, row(f->srv, "set"), 100, &us), 0);
    assert_true(us == 3.007);
    fr_stats_record_call(f->srv, "set", 7, 0);
    assert_int_equal(fr_stats_latency_at(f->srv, row(f->srv, "set"), 50, &us), 0);
    assert_true(us == 3.007);
    assert_int_equal(fr_stats_latency_at(f->srv, row(f->srv, "set"), 0, &us), 0);
    assert_true(us == 2.992);
    assert_int_equal(fr_stats_latency_at(f->srv, row(f->srv, "set"), 100, &us), 0);
    assert_true(us == 7.007);
    /* latency-tracking no: counters go on, samples stop */
    fr_stats_reset(f->srv);
    fr_stats_set_latency_tracking(f->srv, 0);
    RUN(f->c, "SET a b");
    st = cmd(f->srv, "set");
    assert_int_equal(st.calls, 1);
    assert_false(st.has_latency);
    fr_stats_set_latency_tracking(f->srv, 1);
    fr_stats_set_clock(f->srv, NULL, NULL);
}

static void reset_and_embedder_rows(void **state)
{
    fixture *f = *state;
    RUN(f->c, "GET");
    fr_stats_record_error(f->srv, "ERR AUTH <password> called without any password", 48);
    fr_stats_record_call(f->srv, "auth", 7, 1);
    fr_stats_record_call(f->srv, "AUTH", 3, 0);
    fr_stats_record_rejected(f->srv, "get"); /* the server's NOAUTH for a fake command */
    fr_stats_record_rejected(f->srv, "config|get");
    expect(f->srv, "auth", 2, 0, 1);
    assert_int_equal(cmd(f->srv, "auth").usec, 10);
    expect(f->srv, "get", 0, 2, 0);
    expect(f->srv, "config|get", 0, 1, 0);
    assert_int_equal(errors(f->srv, "ERR"), 2);
    fr_stats_reset(f->srv);
    assert_int_equal(fr_stats_total_error_replies(f->srv), 0);
    assert_int_equal(fr_stats_error_count(f->srv), 0);
    for (size_t i = 0; i < fr_stats_command_rows(f->srv); i++) {
        fr_command_stats st;
        assert_int_equal(fr_stats_command_at(f->srv, i, &st), 0);
        assert_true(st.calls == 0 && st.rejected_calls == 0 && st.failed_calls == 0 &&
                    !st.has_latency);
    }
    assert_int_equal(fr_stats_command_at(f->srv, fr_stats_command_rows(f->srv), &(fr_command_stats){0}),
                     -1);
    assert_int_equal(fr_stats_command(f->srv, "nosuch", &(fr_command_stats){0}), -1);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        TEST(errors_by_prefix),
        TEST(prefix_rule),
        TEST(rejected_before_running),
        TEST(multi_exec),
        TEST(crossslot_is_rejected),
        TEST(blocked_calls),
        TEST(durations_and_latency),
        TEST(reset_and_embedder_rows),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
