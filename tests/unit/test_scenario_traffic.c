/* test_scenario_traffic.c -- the traffic checker (scenario/include/wsc_traffic.h) on
 * recordings written for the purpose, one per shape of RustStream's traffic and per
 * verdict: a plain window's flush (writes, then one XACK: the round), a crash inside it and
 * the reclaim (doubled, by round), direct mode (by connection and order; an ack sent before
 * the write: settle-before-writes), atomic segments (exact; a settle outside the MULTI, a
 * write after the settle, a segment sent unwrapped), scripts whose commands the server
 * recorded (call lines; one whose commands are missing), reliable lists with a processing list
 * and a recovery set (settled; stranded; a sweep cut short: lost), the delay queue (a sweep
 * cut short: lost), XREADGROUP ... CLAIM (Redis 8.4), RESP3 replies, retries whose copies
 * are not doubles, a read recorded before the XADD that served it (a proxy's order),
 * transactions that never ran, unsettled entries, and the report's quotes word for word.
 *
 * The recordings are written through wsr_writer (recording/include/wsr.h), so the lines
 * quoted are the file's. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "wsc.h"
#include "wsc_traffic.h"
#include "wsr.h"

/* ----- Writing a recording ---------------------------------------------------------------- */

static char dir[64];
static char path[128];
static wsr_writer *W;
static uint64_t batch;
static size_t line; /* the line the next event gets */

static void begin(void)
{
    if (!dir[0]) {
        snprintf(dir, sizeof dir, "/tmp/test_traffic.XXXXXX");
        assert_non_null(mkdtemp(dir));
    }
    snprintf(path, sizeof path, "%s/t.rec", dir);
    char err[256];
    W = wsr_writer_open(path, NULL, 0, err, sizeof err);
    if (!W) fail_msg("%s", err);
    batch = 0;
    line = 2;
}

/* Connection c opens (pid: its process; the same pid is one process). */
static size_t opened(uint64_t c, long long pid)
{
    assert_int_equal(wsr_write_open(W, c, 0, "unix:/s.sock", pid, NULL, 0), 0);
    return line++;
}

static size_t closed(uint64_t c)
{
    assert_int_equal(wsr_write_close(W, c, 0, "peer"), 0);
    return line++;
}

/* The NULL-terminated arguments of ap, at most 32, into argv; how many. */
static int collect(const char **argv, va_list ap)
{
    int argc = 0;
    for (const char *a; (a = va_arg(ap, const char *)) && argc < 32;) argv[argc++] = a;
    return argc;
}

/* A command of connection c: in a new batch (same 0) or the last one, inside MULTI or not,
 * its reply, then its arguments (NULL-terminated).  Its line. */
static size_t cmd(uint64_t c, int same, int multi, const char *reply, ...)
{
    const char *argv[32];
    va_list ap;
    va_start(ap, reply);
    int argc = collect(argv, ap);
    va_end(ap);
    if (!same) batch++;
    assert_int_equal(wsr_write_cmd(W, c, batch, 0, multi, NULL, 0, -1, argc, argv, NULL, reply,
                                   strlen(reply)),
                     0);
    return line++;
}

/* A command alone in its batch whose arguments (argvlen, or NULL: strings) and reply may
 * hold any bytes; returns its line. */
static size_t cmd_bytes(uint64_t c, int argc, const char *const *argv, const size_t *argvlen,
                        const char *reply, size_t reply_len)
{
    assert_int_equal(
        wsr_write_cmd(W, c, ++batch, 0, 0, NULL, 0, -1, argc, argv, argvlen, reply, reply_len), 0);
    return line++;
}

/* A command c's script ran (a call line, in the batch of the script's command), its reply,
 * then its arguments (NULL-terminated).  Its line. */
static size_t call(uint64_t c, const char *reply, ...)
{
    const char *argv[32];
    va_list ap;
    va_start(ap, reply);
    int argc = collect(argv, ap);
    va_end(ap);
    assert_int_equal(wsr_write_call(W, c, batch + 1, 0, argc, argv, NULL, reply, strlen(reply)), 0);
    return line++;
}

static wsr_recording *finish(void)
{
    char err[256];
    assert_int_equal(wsr_writer_close(W, 0, err, sizeof err), 0);
    char *error = NULL;
    wsr_recording *r = wsr_read_file(path, NULL, &error);
    if (!r) fail_msg("%s", error);
    return r;
}

/* ----- RESP replies --------------------------------------------------------------------------- */

static char replies[64][1024];
static int nreplies;

static char *fresh(void) { return replies[nreplies++ % 64]; }

static const char *bulk(const char *s)
{
    char *b = fresh();
    snprintf(b, 1024, "$%zu\r\n%s\r\n", strlen(s), s);
    return b;
}

/* An XREADGROUP reply of n entries of key: id, payload pairs. */
static const char *xread(const char *key, int n, ...)
{
    char *b = fresh();
    int k = snprintf(b, 1024, "*1\r\n*2\r\n$%zu\r\n%s\r\n*%d\r\n", strlen(key), key, n);
    va_list ap;
    va_start(ap, n);
    for (int i = 0; i < n; i++) {
        const char *id = va_arg(ap, const char *), *p = va_arg(ap, const char *);
        k += snprintf(b + k, 1024 - (size_t)k, "*2\r\n$%zu\r\n%s\r\n*2\r\n$8\r\n_payload\r\n$%zu\r\n%s\r\n",
                      strlen(id), id, strlen(p), p);
    }
    va_end(ap);
    return b;
}

/* An XAUTOCLAIM reply claiming one entry. */
static const char *autoclaim(const char *id, const char *p)
{
    char *b = fresh();
    snprintf(b, 1024, "*3\r\n$3\r\n0-0\r\n*1\r\n*2\r\n$%zu\r\n%s\r\n*2\r\n$8\r\n_payload\r\n$%zu\r\n%s\r\n*0\r\n",
             strlen(id), id, strlen(p), p);
    return b;
}

/* ----- Checking --------------------------------------------------------------------------- */

static wsc_scenario *subs(const char *lines)
{
    char text[1024];
    snprintf(text, sizeof text, "scenario T\n%s", lines);
    char *err = NULL;
    wsc_scenario *sc = wsc_parse("subs.wsim", text, strlen(text), &err);
    if (!sc) fail_msg("%s", err);
    return sc;
}

typedef struct outcome {
    wsc_traffic_result res;
    wsr_recording *rec;
    wsc_scenario *sc;
} outcome;

static outcome *check(const char *subscriptions, int allow_unsettled)
{
    outcome *o = calloc(1, sizeof *o);
    o->rec = finish();
    o->sc = subs(subscriptions);
    wsc_traffic_options opt = {.allow_unsettled = allow_unsettled};
    assert_int_equal(wsc_traffic_check(o->rec, o->sc, &opt, &o->res), 0);
    return o;
}

static void done(outcome *o)
{
    wsc_traffic_result_free(&o->res);
    wsr_free(o->rec);
    wsc_free(o->sc);
    free(o);
}

/* How many violations of kind there are. */
static size_t count(const outcome *o, const char *kind)
{
    size_t n = 0;
    for (size_t i = 0; i < o->res.nviolations; i++) n += strcmp(o->res.violations[i].kind, kind) == 0;
    return n;
}

/* The violation of kind about entry id, or a failure. */
static const wsc_traffic_violation *find(const outcome *o, const char *kind, const char *id)
{
    for (size_t i = 0; i < o->res.nviolations; i++) {
        const wsc_traffic_violation *v = &o->res.violations[i];
        if (!strcmp(v->kind, kind) && v->entry_len == strlen(id) && !memcmp(v->entry, id, v->entry_len))
            return v;
    }
    fail_msg("no %s violation of %s in:\n%s", kind, id, o->res.report);
    return NULL;
}

static void clean(const outcome *o)
{
    if (o->res.nviolations) fail_msg("violations where none was expected:\n%s", o->res.report);
}

/* Whether a note holds text. */
static int noted(const outcome *o, const char *text)
{
    for (size_t i = 0; i < o->res.nnotes; i++)
        if (strstr(o->res.notes[i], text)) return 1;
    return 0;
}

#define STREAM_SUB "subscribe s stream s group g consumer c1"

/* The producer (conn 1, pid 10), a consumer process (pid 20): its reader (2) and pool (3). */
static void producer_and_consumer(void)
{
    begin();
    opened(1, 10);
    cmd(1, 0, 0, "+OK\r\n", "XGROUP", "CREATE", "s", "g", "$", "MKSTREAM", NULL);
    opened(2, 20);
    opened(3, 20);
}

/* ----- Tests ------------------------------------------------------------------------------ */

/* A plain window: the writes and the XACK of three entries in one pipeline. */
static void test_window_flush(void **state)
{
    (void)state;
    producer_and_consumer();
    cmd(1, 0, 0, bulk("1-1"), "XADD", "s", "*", "_payload", "a", NULL);
    cmd(1, 0, 0, bulk("1-2"), "XADD", "s", "*", "_payload", "b", NULL);
    cmd(2, 0, 0, xread("s", 2, "1-1", "a", "1-2", "b"), "XREADGROUP", "GROUP", "g", "c1", "COUNT",
        "64", "STREAMS", "s", ">", NULL);
    cmd(3, 0, 0, ":1\r\n", "INCR", "x", NULL);
    cmd(3, 1, 0, ":2\r\n", "XACK", "s", "g", "1-1", "1-2", NULL);
    outcome *o = check(STREAM_SUB "\n", 0);
    clean(o);
    assert_int_equal(o->res.entries, 2);
    assert_int_equal(o->res.deliveries, 2);
    assert_int_equal(o->res.settles, 2);
    assert_int_equal(o->res.rounds, 1);
    assert_int_equal(o->res.writes, 1);
    assert_true(noted(o, "1 to the round their pipeline settles"));
    assert_non_null(strstr(o->res.report, ": 2 entries, 2 deliveries, 1 round, 2 settles, 1 "
                                          "write; 0 violations\n"));
    done(o);
}

/* A crash inside a plain window's flush (the writes applied, the XACK never sent), then the
 * reclaim and the same writes again: doubled, by round, with the lines that prove it. */
static void test_window_crash_doubles(void **state)
{
    (void)state;
    producer_and_consumer();
    cmd(1, 0, 0, bulk("1-1"), "XADD", "s", "*", "_payload", "a", NULL);
    size_t read1 = cmd(2, 0, 0, xread("s", 1, "1-1", "a"), "XREADGROUP", "GROUP", "g", "c1",
                       "COUNT", "64", "STREAMS", "s", ">", NULL);
    size_t w1 = cmd(3, 0, 0, ":1\r\n", "INCR", "x", NULL);
    closed(3);
    closed(2);
    opened(4, 20);
    opened(5, 20);
    size_t read2 = cmd(4, 0, 0, autoclaim("1-1", "a"), "XAUTOCLAIM", "s", "g", "c2", "0", "0-0",
                       "COUNT", "64", NULL);
    size_t w2 = cmd(5, 0, 0, ":2\r\n", "INCR", "x", NULL);
    size_t ack = cmd(5, 1, 0, ":1\r\n", "XACK", "s", "g", "1-1", NULL);
    outcome *o = check(STREAM_SUB "\nsubscribe r stream s group g consumer c2 reclaim 0\n", 0);
    assert_int_equal(o->res.nviolations, 1);
    const wsc_traffic_violation *v = find(o, "doubled", "1-1");
    char want[512];
    snprintf(want, sizeof want,
             "entry 1-1's writes took effect twice: `INCR x` (line %zu, the one delivery in "
             "handling) for its delivery read at line %zu, and `INCR x` (line %zu, in the "
             "pipeline that settles it) for its redelivery read at line %zu",
             w1, read1, w2, read2);
    assert_string_equal(v->sentence, want);
    char quote[2048];
    snprintf(quote, sizeof quote,
             "%s:%zu: cmd 2 b=3 t=0 m=0 XREADGROUP GROUP g c1 COUNT 64 STREAMS s > => "
             "\"*1\\r\\n*2\\r\\n$1\\r\\ns\\r\\n*1\\r\\n*2\\r\\n$3\\r\\n1-1\\r\\n*2\\r\\n$8\\r\\n_payload\\r\\n$1\\r\\na\\r\\n\"\n"
             "%s:%zu: cmd 3 b=4 t=0 m=0 INCR x => \":1\\r\\n\"\n"
             "%s:%zu: cmd 4 b=5 t=0 m=0 XAUTOCLAIM s g c2 0 0-0 COUNT 64 => \"*3\\r\\n$3\\r\\n0-0\\r\\n*1\\r\\n"
             "*2\\r\\n$3\\r\\n1-1\\r\\n*2\\r\\n$8\\r\\n_payload\\r\\n$1\\r\\na\\r\\n*0\\r\\n\"\n"
             "%s:%zu: cmd 5 b=6 t=0 m=0 INCR x => \":2\\r\\n\"\n"
             "%s:%zu: cmd 5 b=6 t=0 m=0 XACK s g 1-1 => \":1\\r\\n\"\n",
             path, read1, path, w1, path, read2, path, w2, path, ack);
    assert_string_equal(v->quote, quote);
    done(o);
}

/* Direct mode: the write, then the ack, on the pool connection: attributed by connection and
 * order; an ack sent first and the write after it: settle-before-writes. */
static void test_direct_order(void **state)
{
    (void)state;
    producer_and_consumer();
    cmd(1, 0, 0, bulk("1-1"), "XADD", "s", "*", "_payload", "a", NULL);
    cmd(1, 0, 0, bulk("1-2"), "XADD", "s", "*", "_payload", "b", NULL);
    cmd(2, 0, 0, xread("s", 2, "1-1", "a", "1-2", "b"), "XREADGROUP", "GROUP", "g", "c1", "COUNT",
        "2", "STREAMS", "s", ">", NULL);
    cmd(3, 0, 0, ":1\r\n", "INCR", "x", NULL);
    cmd(3, 0, 0, ":1\r\n", "XACK", "s", "g", "1-1", NULL);
    size_t ack = cmd(3, 0, 0, ":1\r\n", "XACK", "s", "g", "1-2", NULL);
    size_t late = cmd(3, 0, 0, ":2\r\n", "INCR", "x", NULL);
    outcome *o = check(STREAM_SUB " mode direct\n", 0);
    assert_int_equal(o->res.nviolations, 1);
    const wsc_traffic_violation *v = find(o, "settle-before-writes", "1-2");
    char want[512];
    snprintf(want, sizeof want,
             "the delivery of entry 1-2 read at line 8 was settled at line %zu before `INCR x` "
             "(line %zu), a write sent when nothing else was in handling: a crash between the "
             "two loses that write, the entry being settled already", ack, late);
    assert_string_equal(v->sentence, want);
    assert_true(noted(o, "1 by connection and order"));
    done(o);
}

/* A consumer that acks, then writes, on one connection, killed right after a write while
 * two more deliveries were in handling; its successor reclaims them and handles them the
 * same way.  The killed write is the acked delivery's (sent after its settle), not one of
 * the two in handling: no doubled, a settle-before-writes. */
static void test_ack_then_write_killed(void **state)
{
    (void)state;
    begin();
    opened(1, 10);
    cmd(1, 0, 0, "+OK\r\n", "XGROUP", "CREATE", "s", "g", "$", "MKSTREAM", NULL);
    cmd(1, 0, 0, bulk("1-1"), "XADD", "s", "*", "_payload", "a", NULL);
    cmd(1, 0, 0, bulk("1-2"), "XADD", "s", "*", "_payload", "b", NULL);
    cmd(1, 0, 0, bulk("1-3"), "XADD", "s", "*", "_payload", "c", NULL);
    opened(2, 20);
    cmd(2, 0, 0, xread("s", 3, "1-1", "a", "1-2", "b", "1-3", "c"), "XREADGROUP", "GROUP", "g",
        "c1", "COUNT", "3", "STREAMS", "s", ">", NULL);
    cmd(2, 0, 0, ":1\r\n", "XACK", "s", "g", "1-1", NULL);
    cmd(2, 0, 0, ":100\r\n", "INCRBY", "x", "100", NULL);
    closed(2);
    opened(3, 30);
    for (int i = 0; i < 2; i++) {
        const char *id = i ? "1-3" : "1-2", *p = i ? "c" : "b";
        cmd(3, 0, 0, autoclaim(id, p), "XAUTOCLAIM", "s", "g", "c1", "0", "0-0", "COUNT", "1", NULL);
        cmd(3, 0, 0, ":1\r\n", "XACK", "s", "g", id, NULL);
        cmd(3, 0, 0, i ? ":300\r\n" : ":200\r\n", "INCRBY", "x", "100", NULL);
    }
    outcome *o = check(STREAM_SUB " mode direct\nsubscribe r stream s group g consumer c1 "
                                  "mode direct reclaim 0\n", 0);
    assert_int_equal(count(o, "doubled"), 0);
    assert_true(count(o, "settle-before-writes") >= 1);
    find(o, "settle-before-writes", "1-1");
    done(o);
}

/* The same kill in a consumer that writes, then acks (the framework's direct mode, two_roads'
 * crash_between_write_and_ack_direct): the first delivery wrote before its XACK, so the
 * write after that XACK is the next delivery's, in handling; the successor reclaims it and
 * writes again: doubled, and no settle-before-writes. */
static void test_write_then_ack_killed(void **state)
{
    (void)state;
    begin();
    opened(1, 10);
    cmd(1, 0, 0, "+OK\r\n", "XGROUP", "CREATE", "s", "g", "$", "MKSTREAM", NULL);
    cmd(1, 0, 0, bulk("1-1"), "XADD", "s", "*", "_payload", "a", NULL);
    cmd(1, 0, 0, bulk("1-2"), "XADD", "s", "*", "_payload", "b", NULL);
    opened(2, 20);
    cmd(2, 0, 0, xread("s", 2, "1-1", "a", "1-2", "b"), "XREADGROUP", "GROUP", "g", "c1",
        "COUNT", "2", "STREAMS", "s", ">", NULL);
    cmd(2, 0, 0, ":100\r\n", "INCRBY", "x", "100", NULL);
    cmd(2, 0, 0, ":1\r\n", "XACK", "s", "g", "1-1", NULL);
    cmd(2, 0, 0, ":200\r\n", "INCRBY", "x", "100", NULL);
    closed(2);
    opened(3, 30);
    cmd(3, 0, 0, autoclaim("1-2", "b"), "XAUTOCLAIM", "s", "g", "c1", "0", "0-0", "COUNT", "1",
        NULL);
    cmd(3, 0, 0, ":300\r\n", "INCRBY", "x", "100", NULL);
    cmd(3, 0, 0, ":1\r\n", "XACK", "s", "g", "1-2", NULL);
    outcome *o = check(STREAM_SUB " mode direct\nsubscribe r stream s group g consumer c1 "
                                  "mode direct reclaim 0\n", 0);
    assert_int_equal(count(o, "settle-before-writes"), 0);
    assert_int_equal(count(o, "doubled"), 1);
    find(o, "doubled", "1-2");
    done(o);
}

/* A pipeline that sends the XACK before the writes of its round. */
static void test_settle_before_writes_in_a_pipeline(void **state)
{
    (void)state;
    producer_and_consumer();
    cmd(1, 0, 0, bulk("1-1"), "XADD", "s", "*", "_payload", "a", NULL);
    cmd(2, 0, 0, xread("s", 1, "1-1", "a"), "XREADGROUP", "GROUP", "g", "c1", "STREAMS", "s", ">",
        NULL);
    cmd(3, 0, 0, ":1\r\n", "XACK", "s", "g", "1-1", NULL);
    cmd(3, 1, 0, ":1\r\n", "INCR", "x", NULL);
    outcome *o = check(STREAM_SUB "\n", 0);
    assert_int_equal(count(o, "settle-before-writes"), 1);
    assert_non_null(strstr(find(o, "settle-before-writes", "1-1")->sentence,
                           "a write of its round sent after it in the same pipeline"));
    done(o);
}

/* Atomic segments: MULTI, the write, its own XACK, EXEC is right; a settle outside the MULTI,
 * a write after the settle inside it, or a segment sent without MULTI is not. */
static void test_atomic_shapes(void **state)
{
    (void)state;
    const char *sub = STREAM_SUB " mode atomic\n";
    for (int shape = 0; shape < 4; shape++) {
        producer_and_consumer();
        cmd(1, 0, 0, bulk("1-1"), "XADD", "s", "*", "_payload", "a", NULL);
        cmd(2, 0, 0, xread("s", 1, "1-1", "a"), "XREADGROUP", "GROUP", "g", "c1", "STREAMS",
            "s", ">", NULL);
        if (shape == 3) { /* unwrapped */
            cmd(3, 0, 0, ":1\r\n", "INCR", "x", NULL);
            cmd(3, 1, 0, ":1\r\n", "XACK", "s", "g", "1-1", NULL);
        } else {
            cmd(3, 0, 0, "+OK\r\n", "MULTI", NULL);
            if (shape == 2) cmd(3, 1, 1, "+QUEUED\r\n", "XACK", "s", "g", "1-1", NULL);
            cmd(3, 1, 1, "+QUEUED\r\n", "INCR", "x", NULL);
            if (shape == 0) cmd(3, 1, 1, "+QUEUED\r\n", "XACK", "s", "g", "1-1", NULL);
            cmd(3, 1, 1, shape == 1 ? "*1\r\n:1\r\n" : "*2\r\n:1\r\n:1\r\n", "EXEC", NULL);
            if (shape == 1) cmd(3, 1, 0, ":1\r\n", "XACK", "s", "g", "1-1", NULL);
        }
        outcome *o = check(sub, 0);
        if (shape == 0) {
            clean(o);
            assert_true(noted(o, "1 exactly (inside the MULTI/EXEC of their settle)"));
        } else {
            assert_int_equal(count(o, "atomic-shape"), 1);
            const char *s = find(o, "atomic-shape", "1-1")->sentence;
            const char *want = shape == 1 ? "holds `INCR x` but not its settle, which was sent outside it"
                               : shape == 2 ? "puts `INCR x` (line 10) after its own settle (line 9)"
                                            : "left in its flush outside MULTI/EXEC";
            if (!strstr(s, want)) fail_msg("shape %d: %s", shape, s);
        }
        done(o);
    }
}

/* Scripts whose commands the server recorded (call lines): a script that writes and settles
 * is one unit, exactly attributed; a write after a script's settle is settle-before-writes;
 * an atomic delivery's script is its segment (writes without the settle: atomic-shape); a
 * script queued in MULTI counts where it stands in the queue; a script whose commands are
 * not shown is said in a note and its settle is not seen. */
static void test_scripts(void **state)
{
    (void)state;
    static const char lua[] = "redis.call('INCR', KEYS[2]); "
                              "return redis.call('XACK', KEYS[1], 'g', ARGV[1])";
    for (int story = 0; story < 6; story++) {
        producer_and_consumer();
        cmd(1, 0, 0, bulk("1-1"), "XADD", "s", "*", "_payload", "a", NULL);
        cmd(2, 0, 0, xread("s", 1, "1-1", "a"), "XREADGROUP", "GROUP", "g", "c1", "STREAMS",
            "s", ">", NULL);
        size_t ack = 0, incr = 0, eval = 0;
        if (story == 0 || story == 5) { /* writes and settles in one script */
            if (story == 0) {
                incr = call(3, ":1\r\n", "INCR", "x", NULL);
                ack = call(3, ":1\r\n", "XACK", "s", "g", "1-1", NULL);
            }
            eval = cmd(3, 0, 0, ":1\r\n", "EVAL", lua, "2", "s", "x", "1-1", NULL);
        } else if (story == 1) { /* the script settles, the write comes after it */
            ack = call(3, ":1\r\n", "XACK", "s", "g", "1-1", NULL);
            cmd(3, 0, 0, ":1\r\n", "EVAL", "return redis.call('XACK', KEYS[1], 'g', ARGV[1])",
                "1", "s", "1-1", NULL);
            incr = cmd(3, 0, 0, ":1\r\n", "INCR", "x", NULL);
        } else if (story == 2) { /* atomic: the script writes, the settle is outside it */
            incr = call(3, ":1\r\n", "INCR", "x", NULL);
            eval = cmd(3, 0, 0, ":1\r\n", "EVAL", "return redis.call('INCR', KEYS[1])", "1", "x",
                       NULL);
            ack = cmd(3, 0, 0, ":1\r\n", "XACK", "s", "g", "1-1", NULL);
        } else { /* atomic, MULTI: a queued script's write, then (3) or before (4) the XACK */
            cmd(3, 0, 0, "+OK\r\n", "MULTI", NULL);
            if (story == 4) cmd(3, 1, 1, "+QUEUED\r\n", "XACK", "s", "g", "1-1", NULL);
            cmd(3, 1, 1, "+QUEUED\r\n", "EVAL", "return redis.call('INCR', KEYS[1])", "1", "x",
                NULL);
            if (story == 3) cmd(3, 1, 1, "+QUEUED\r\n", "XACK", "s", "g", "1-1", NULL);
            batch--; /* the call line shares EXEC's batch */
            incr = call(3, ":1\r\n", "INCR", "x", NULL);
            batch++;
            cmd(3, 1, 1, "*2\r\n:1\r\n:1\r\n", "EXEC", NULL);
        }
        outcome *o = check(story >= 2 && story <= 4 ? STREAM_SUB " mode atomic\n" : STREAM_SUB "\n",
                           story == 5);
        if (story == 0 || story == 3) {
            clean(o);
            assert_true(noted(o, story == 0 ? "1 exactly (inside the script of their settle)"
                                            : "1 exactly (inside the MULTI/EXEC of their settle)"));
            assert_int_equal(o->res.writes, 1);
            assert_int_equal(o->res.settles, 1);
        } else if (story == 1) {
            assert_int_equal(o->res.nviolations, 1);
            const wsc_traffic_violation *v = find(o, "settle-before-writes", "1-1");
            char want[128];
            snprintf(want, sizeof want, "was settled at line %zu before `INCR x` (line %zu)", ack,
                     incr);
            if (!strstr(v->sentence, want)) fail_msg("%s", v->sentence);
        } else if (story == 2) {
            assert_int_equal(o->res.nviolations, 1);
            const char *s = find(o, "atomic-shape", "1-1")->sentence;
            char want[160];
            snprintf(want, sizeof want, "atomic segment (the script at line %zu) holds `INCR x` "
                                        "but not its settle, which was sent outside it", eval);
            if (!strstr(s, want)) fail_msg("%s", s);
            (void)ack;
        } else if (story == 4) {
            assert_int_equal(o->res.nviolations, 1);
            const char *s = find(o, "atomic-shape", "1-1")->sentence;
            char want[128];
            snprintf(want, sizeof want, "puts `INCR x` (line %zu) after its own settle", incr);
            if (!strstr(s, want)) fail_msg("%s", s);
        } else { /* story 5: the script's commands are not in the recording (a proxy's) */
            assert_int_equal(o->res.settles, 0);
            assert_true(noted(o, "1 script ran without the recording showing its commands (first "
                                 "at line"));
            assert_int_equal(count(o, "unsettled"), 0); /* allowed: a note */
        }
        done(o);
    }
}

/* A reliable list with a processing list and a recovery set: a read, its claim, its settle. */
static void test_reliable_list(void **state)
{
    (void)state;
    const char *sub = "subscribe j reliable-list j recovery j:claims 100\n";
    const char member[] = "\x00\x00\x00\x07\x00\x00\x00\x00\x00\x00\x00\x00v1";
    char mb[32];
    memcpy(mb, member, sizeof member - 1);
    mb[sizeof member - 1] = '\0';
    for (int story = 0; story < 3; story++) {
        begin();
        opened(1, 10);
        opened(2, 20);
        opened(3, 20);
        size_t push = cmd(1, 0, 0, ":1\r\n", "LPUSH", "j", "v1", NULL);
        size_t move = cmd(2, 0, 0, bulk("v1"), "LMOVE", "j", "j.processing", "RIGHT", "LEFT", NULL);
        if (story != 1) {
            /* the claim: a member [pid][counter]value; written as raw bytes */
            cmd_bytes(3, 4, (const char *[]){"ZADD", "j:claims", "0", mb},
                      (const size_t[]){4, 8, 1, sizeof member - 1}, ":1\r\n", 4);
        }
        if (story == 1) { /* the process dies between the move and its claim */
            closed(2);
            closed(3);
        }
        if (story == 0) {
            cmd(3, 0, 0, ":1\r\n", "INCR", "x", NULL);
            cmd(3, 0, 0, ":1\r\n", "LREM", "j.processing", "1", "v1", NULL);
            cmd_bytes(3, 3, (const char *[]){"ZREM", "j:claims", mb},
                      (const size_t[]){4, 8, sizeof member - 1}, ":1\r\n", 4);
        }
        if (story == 2) {
            /* the process died; a new one's orphan sweep takes the value and dies too */
            closed(2);
            closed(3);
            opened(4, 30);
            char zr[64];
            int zl = snprintf(zr, sizeof zr, "*1\r\n$%zu\r\n", sizeof member - 1);
            memcpy(zr + zl, member, sizeof member - 1);
            memcpy(zr + zl + sizeof member - 1, "\r\n", 2);
            cmd_bytes(4, 7,
                      (const char *[]){"ZRANGEBYSCORE", "j:claims", "0", "99", "LIMIT", "0", "128"},
                      NULL, zr, (size_t)zl + sizeof member - 1 + 2);
            cmd(4, 0, 0, ":1\r\n", "LREM", "j.processing", "1", "v1", NULL);
            cmd(4, 0, 0, ":1\r\n", "XADD", "unrelated", "*", "f", "v", NULL);
        }
        outcome *o = check(sub, 0);
        if (story == 0) {
            clean(o);
        } else if (story == 1) {
            /* moved, never claimed, its process gone: stranded */
            assert_int_equal(count(o, "stranded"), 1);
            const wsc_traffic_violation *v = find(o, "stranded", "v1");
            assert_non_null(strstr(v->sentence, "it is there 1 time, the recovery set j:claims "
                                                "names it 0 times and 0 live deliveries hold it"));
            assert_non_null(strstr(v->sentence, "the claim's ZADD after its move never came"));
            char q[128];
            snprintf(q, sizeof q, ":%zu: cmd 1 b=1 t=0 m=0 LPUSH j v1", push);
            assert_non_null(strstr(v->quote, q));
            snprintf(q, sizeof q, ":%zu: cmd 2 b=2 t=0 m=0 LMOVE j j.processing RIGHT LEFT", move);
            assert_non_null(strstr(v->quote, q));
        } else {
            assert_int_equal(count(o, "lost"), 1);
            assert_non_null(strstr(find(o, "lost", "v1")->sentence,
                                   "an orphan sweep took it off the processing list j.processing"));
        }
        done(o);
    }
}

/* The delay queue: a retry_after's ZADD and XACK, the sweep's ZREM and its XADD of the copy;
 * cut after the ZREM, the entry is lost. */
static void test_delay_queue(void **state)
{
    (void)state;
    /* a member: [u32 id length][id][frame of the copy: u32 0 headers][payload] */
    const char member[] = "\x00\x00\x00\x03" "1-1" "\x00\x00\x00\x00" "a";
    size_t mlen = sizeof member - 1;
    for (int cut = 0; cut < 2; cut++) {
        producer_and_consumer();
        cmd(1, 0, 0, bulk("1-1"), "XADD", "s", "*", "_payload", "a", NULL);
        cmd(2, 0, 0, xread("s", 1, "1-1", "a"), "XREADGROUP", "GROUP", "g", "c1", "STREAMS", "s",
            ">", NULL);
        cmd_bytes(3, 4, (const char *[]){"ZADD", "dq", "5", member}, (const size_t[]){4, 2, 1, mlen},
                  ":1\r\n", 4);
        cmd(3, 0, 0, ":1\r\n", "XACK", "s", "g", "1-1", NULL);
        cmd_bytes(3, 3, (const char *[]){"ZREM", "dq", member}, (const size_t[]){4, 2, mlen},
                  ":1\r\n", 4);
        if (!cut) {
            cmd(3, 0, 0, bulk("2-1"), "XADD", "s", "*", "_payload", "a", NULL);
            cmd(2, 0, 0, xread("s", 1, "2-1", "a"), "XREADGROUP", "GROUP", "g", "c1", "STREAMS",
                "s", ">", NULL);
            cmd(3, 0, 0, ":1\r\n", "XACK", "s", "g", "2-1", NULL);
        } else {
            closed(3);
        }
        outcome *o = check(STREAM_SUB " delay-queue dq\n", 0);
        if (!cut) {
            clean(o);
        } else {
            assert_int_equal(o->res.nviolations, 1);
            assert_non_null(strstr(find(o, "lost", "1-1")->sentence,
                                   "its retry's copy was taken off the delay queue dq (line 10) "
                                   "and never reached the stream s"));
        }
        done(o);
    }
}

/* XREADGROUP ... CLAIM (Redis 8.4): a claimed entry (delivery count > 0) is a redelivery;
 * with writes both times it is doubled.  The reply in RESP3 (a map) reads the same. */
static void test_claiming_read_and_resp3(void **state)
{
    (void)state;
    producer_and_consumer();
    cmd(1, 0, 0, bulk("1-1"), "XADD", "s", "*", "_payload", "a", NULL);
    /* RESP3: %1 key -> entries; each entry [id, fields, idle, count] */
    cmd(2, 0, 0,
        "%1\r\n$1\r\ns\r\n*1\r\n*4\r\n$3\r\n1-1\r\n*2\r\n$8\r\n_payload\r\n$1\r\na\r\n:0\r\n:0\r\n",
        "XREADGROUP", "GROUP", "g", "c1", "CLAIM", "100", "STREAMS", "s", ">", NULL);
    cmd(3, 0, 0, ":1\r\n", "INCR", "x", NULL);
    closed(3);
    opened(4, 20);
    cmd(2, 0, 0,
        "%1\r\n$1\r\ns\r\n*1\r\n*4\r\n$3\r\n1-1\r\n*2\r\n$8\r\n_payload\r\n$1\r\na\r\n:150\r\n:1\r\n",
        "XREADGROUP", "GROUP", "g", "c1", "CLAIM", "100", "STREAMS", "s", ">", NULL);
    cmd(4, 0, 0, ":2\r\n", "INCR", "x", NULL);
    cmd(4, 0, 0, ":1\r\n", "XACK", "s", "g", "1-1", NULL);
    outcome *o = check(STREAM_SUB " read claiming 100\n", 0);
    assert_int_equal(count(o, "doubled"), 1);
    find(o, "doubled", "1-1");
    done(o);
}

/* A retried delivery's round writes are not its: its copy, delivered again with a write, is
 * no double; the acked one's write is attributed to the round without it. */
static void test_retry_copy_is_not_a_double(void **state)
{
    (void)state;
    producer_and_consumer();
    cmd(1, 0, 0, bulk("1-1"), "XADD", "s", "*", "_payload", "a", NULL);
    cmd(1, 0, 0, bulk("1-2"), "XADD", "s", "*", "_payload", "b", NULL);
    cmd(2, 0, 0, xread("s", 2, "1-1", "a", "1-2", "b"), "XREADGROUP", "GROUP", "g", "c1",
        "STREAMS", "s", ">", NULL);
    /* the flush: 1-1's write, 1-2's retry write (a copy), then the XACK of both */
    cmd(3, 0, 0, ":1\r\n", "INCR", "x", NULL);
    cmd(3, 1, 0, bulk("1-3"), "XADD", "s", "*", "_payload", "b", NULL);
    cmd(3, 0, 0, ":2\r\n", "XACK", "s", "g", "1-1", "1-2", NULL);
    cmd(2, 0, 0, xread("s", 1, "1-3", "b"), "XREADGROUP", "GROUP", "g", "c1", "STREAMS", "s", ">",
        NULL);
    cmd(3, 0, 0, ":2\r\n", "INCR", "x", NULL);
    cmd(3, 1, 0, ":1\r\n", "XACK", "s", "g", "1-3", NULL);
    outcome *o = check(STREAM_SUB "\n", 0);
    clean(o);
    assert_int_equal(o->res.entries, 2);
    assert_int_equal(o->res.deliveries, 3);
    done(o);
}

/* A proxy writes a blocked read's line when its reply comes, which may be before the XADD
 * that served it: the entry is the produced one, not a second. */
static void test_read_recorded_before_its_xadd(void **state)
{
    (void)state;
    producer_and_consumer();
    cmd(2, 0, 0, xread("s", 1, "1-1", "a"), "XREADGROUP", "GROUP", "g", "c1", "BLOCK", "0",
        "STREAMS", "s", ">", NULL);
    cmd(1, 0, 0, bulk("1-1"), "XADD", "s", "*", "_payload", "a", NULL);
    cmd(3, 0, 0, ":1\r\n", "XACK", "s", "g", "1-1", NULL);
    outcome *o = check(STREAM_SUB "\n", 0);
    clean(o);
    assert_int_equal(o->res.entries, 1);
    done(o);
}

/* Transactions that never ran apply nothing: a DISCARD, an EXECABORT. */
static void test_transactions_that_did_not_run(void **state)
{
    (void)state;
    producer_and_consumer();
    cmd(1, 0, 0, bulk("1-1"), "XADD", "s", "*", "_payload", "a", NULL);
    cmd(2, 0, 0, xread("s", 1, "1-1", "a"), "XREADGROUP", "GROUP", "g", "c1", "STREAMS", "s", ">",
        NULL);
    cmd(3, 0, 0, "+OK\r\n", "MULTI", NULL);
    cmd(3, 1, 1, "+QUEUED\r\n", "XACK", "s", "g", "1-1", NULL);
    cmd(3, 1, 1, "+OK\r\n", "DISCARD", NULL);
    cmd(3, 0, 0, "+OK\r\n", "MULTI", NULL);
    cmd(3, 1, 1, "+QUEUED\r\n", "XACK", "s", "g", "1-1", NULL);
    cmd(3, 1, 1, "-ERR unknown command 'NOPE'\r\n", "NOPE", NULL);
    cmd(3, 1, 1, "-EXECABORT Transaction discarded because of previous errors.\r\n", "EXEC", NULL);
    outcome *o = check(STREAM_SUB "\n", 0);
    assert_int_equal(o->res.settles, 0);
    assert_int_equal(count(o, "unsettled"), 1);
    assert_non_null(strstr(find(o, "unsettled", "1-1")->sentence,
                           "entry 1-1 is still pending at the end of the recording"));
    done(o);
}

/* Unsettled entries: a violation, or with allow_unsettled a note. */
static void test_unsettled(void **state)
{
    (void)state;
    for (int allow = 0; allow < 2; allow++) {
        producer_and_consumer();
        cmd(1, 0, 0, bulk("1-1"), "XADD", "s", "*", "_payload", "a", NULL);
        outcome *o = check(STREAM_SUB "\n", allow);
        if (allow) {
            clean(o);
            assert_true(noted(o, "1 entry is still unsettled at the end of the recording (allowed)"));
        } else {
            assert_string_equal(find(o, "unsettled", "1-1")->sentence,
                                "entry 1-1 is still unread at the end of the recording (since "
                                "line 6)");
        }
        done(o);
    }
}

/* What the checker refuses or skips: a file that subscribes nothing; channels only. */
static void test_nothing_to_check(void **state)
{
    (void)state;
    begin();
    wsr_recording *r = finish();
    wsc_scenario *none = subs("setup SET a 1\n");
    wsc_traffic_result res;
    assert_int_equal(wsc_traffic_check(r, none, NULL, &res), WS_EINVAL);
    wsc_free(none);
    wsc_scenario *ch = subs("subscribe n channel news\n");
    assert_int_equal(wsc_traffic_check(r, ch, NULL, &res), 0);
    assert_int_equal(res.nviolations, 0);
    assert_true(res.nnotes >= 1);
    assert_non_null(strstr(res.notes[0], "channel subscriptions settle nothing"));
    wsc_traffic_result_free(&res);
    wsc_free(ch);
    wsr_free(r);
}

static int teardown_dir(void **state)
{
    (void)state;
    char c[128];
    snprintf(c, sizeof c, "rm -rf '%s'", dir);
    return system(c) == 0 ? 0 : -1;
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_window_flush),
        cmocka_unit_test(test_window_crash_doubles),
        cmocka_unit_test(test_direct_order),
        cmocka_unit_test(test_ack_then_write_killed),
        cmocka_unit_test(test_write_then_ack_killed),
        cmocka_unit_test(test_settle_before_writes_in_a_pipeline),
        cmocka_unit_test(test_atomic_shapes),
        cmocka_unit_test(test_scripts),
        cmocka_unit_test(test_reliable_list),
        cmocka_unit_test(test_delay_queue),
        cmocka_unit_test(test_claiming_read_and_resp3),
        cmocka_unit_test(test_retry_copy_is_not_a_double),
        cmocka_unit_test(test_read_recorded_before_its_xadd),
        cmocka_unit_test(test_transactions_that_did_not_run),
        cmocka_unit_test(test_unsettled),
        cmocka_unit_test(test_nothing_to_check),
    };
    return cmocka_run_group_tests(tests, NULL, teardown_dir);
}
