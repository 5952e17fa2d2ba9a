/* test_conn.c -- libwsim's backends (engine/include/ws_conn.h): pipelines and their
 * counters, every fault kind of the fault layer, faults by position and by name, and the
 * trace text.
 *
 * The same tests run on two backends: without arguments on the in-process fake (ctest
 * test_conn, label unit), with --real on a throwaway redis-server started by the harness
 * on a unix socket (test_conn_real, label real-redis), where one more test checks that
 * the fake and the real server give the same replies to the same pipelines, and one
 * connects over TCP (redis://127.0.0.1:port) to a one-node cluster.  Each test
 * checks what the server applied through a second, fault-free connection.
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
#include "redis_harness.h"
#include "ws_conn.h"

/* ----- Backends -------------------------------------------------------------------- */

static int g_real;          /* run on the real server (--real) instead of the fake */
static rh_server *g_redis;  /* the real server, for the whole run */

/* One test's world: the fake server (NULL on the real backend) and a checker. */
typedef struct world {
    fr_server *fake; /* the fake, or NULL when g_real */
    ws_conn *check;  /* a second connection, fault-free, to look at what was applied */
} world;

/* A fresh connection to the world's server. */
static ws_conn *new_conn(world *w)
{
    ws_conn *c;
    if (w->fake) {
        c = ws_conn_fake(w->fake);
    } else {
        char url[400];
        snprintf(url, sizeof url, "unix://%s", g_redis->socket);
        c = ws_conn_open(url, 5000);
    }
    assert_non_null(c);
    if (ws_conn_dead(c)) fail_msg("cannot connect: %s", ws_conn_errstr(c));
    return c;
}

/* A command line split as redis-cli splits it, kept until free_cmds. */
typedef struct cmds {
    size_t n;
    fr_command cmd[32];
    char **argv[32];
    size_t *lens[32];
} cmds;

static void make_cmds(cmds *cs, size_t n, const char *const *lines)
{
    assert_true(n <= 32);
    cs->n = n;
    for (size_t i = 0; i < n; i++) {
        int argc = fr_split_line(lines[i], &cs->argv[i], &cs->lens[i]);
        assert_true(argc > 0);
        cs->cmd[i] = (fr_command){argc, (const char *const *)cs->argv[i], cs->lens[i]};
    }
}

static void free_cmds(cmds *cs)
{
    for (size_t i = 0; i < cs->n; i++) fr_split_free(cs->cmd[i].argc, cs->argv[i], cs->lens[i]);
    cs->n = 0;
}

/* Sends the lines as one pipeline; returns ws_pipeline's code, replies in out. */
static int send_lines(ws_conn *c, const char *cause, size_t n, const char *const *lines,
                      const fr_reply **out)
{
    cmds cs;
    make_cmds(&cs, n, lines);
    int rc = ws_pipeline(c, cause, n, cs.cmd, out);
    free_cmds(&cs);
    return rc;
}

/* The RESP2 bytes of a reply, as a string in one of a few rotating static buffers. */
static const char *resp(const fr_reply *r)
{
    static char bufs[4][8192];
    static int next;
    char *b = bufs[next++ % 4];
    if (!r) return "(null)";
    size_t len = fr_reply_encode(r, b, sizeof bufs[0] - 1);
    assert_true(len < sizeof bufs[0] - 1);
    b[len] = '\0';
    return b;
}

/* One command on the checker; its reply's RESP2 bytes. */
static const char *check1(world *w, const char *line)
{
    const fr_reply *r;
    assert_int_equal(send_lines(w->check, NULL, 1, &line, &r), 0);
    return resp(r);
}

static int setup(void **state)
{
    world *w = calloc(1, sizeof *w);
    assert_non_null(w);
    if (!g_real) {
        w->fake = fr_server_new(NULL);
        assert_non_null(w->fake);
    }
    w->check = new_conn(w);
    if (g_real) assert_string_equal(check1(w, "FLUSHALL"), "+OK\r\n");
    *state = w;
    return 0;
}

static int teardown(void **state)
{
    world *w = *state;
    ws_conn_close(w->check);
    if (w->fake) fr_server_free(w->fake);
    free(w);
    return 0;
}

#define L(...) ((const char *const[]){__VA_ARGS__})
#define NL(...) (sizeof((const char *const[]){__VA_ARGS__}) / sizeof(const char *))
/* Sends a pipeline of literal lines on c; replies in out (an array of at least n). */
#define SEND(c, out, ...) send_lines((c), NULL, NL(__VA_ARGS__), L(__VA_ARGS__), (out))

/* ----- Plain pipelines ---------------------------------------------------------------- */

/* Replies come back in order, errors and a MULTI block included, and every call is one
 * counted round trip. */
static void test_pipeline_and_counters(void **state)
{
    world *w = *state;
    ws_conn *c = new_conn(w);
    const fr_reply *r[8];
    assert_int_equal(SEND(c, r, "SET a 1", "INCR a", "GET a", "GET nosuch"), 0);
    assert_string_equal(resp(r[0]), "+OK\r\n");
    assert_string_equal(resp(r[1]), ":2\r\n");
    assert_string_equal(resp(r[2]), "$1\r\n2\r\n");
    assert_int_equal(r[3]->type, FR_REPLY_NIL);
    assert_int_equal(SEND(c, r, "MULTI", "INCR a", "LPUSH a x", "EXEC"), 0);
    assert_string_equal(resp(r[3]), "*2\r\n:3\r\n-WRONGTYPE Operation against a key holding "
                                    "the wrong kind of value\r\n");
    ws_conn_stats st = ws_conn_get_stats(c);
    assert_int_equal(st.round_trips, 2);
    assert_int_equal(st.commands_sent, 8);
    assert_int_equal(st.replies_received, 8);

    /* n == 0 costs nothing; a command without a name is refused before anything leaves. */
    assert_int_equal(ws_pipeline(c, NULL, 0, NULL, NULL), 0);
    fr_command bad = {0, NULL, NULL};
    assert_int_equal(ws_pipeline(c, NULL, 1, &bad, r), WS_EINVAL);
    assert_int_equal(ws_conn_err(c), WS_EINVAL);
    assert_false(ws_conn_dead(c));
    st = ws_conn_get_stats(c);
    assert_int_equal(st.round_trips, 2);
    assert_int_equal(st.commands_sent, 8);

    /* Binary-safe arguments and replies. */
    const char *argv[] = {"ECHO", "a\0b\r\n"};
    size_t lens[] = {4, 5};
    fr_command echo = {2, argv, lens};
    assert_int_equal(ws_pipeline(c, NULL, 1, &echo, r), 0);
    assert_int_equal(r[0]->len, 5);
    assert_memory_equal(r[0]->str, "a\0b\r\n", 5);
    ws_conn_close(c);
}

/* A fault layer with nothing armed is transparent, with its own counters. */
static void test_fault_layer_transparent(void **state)
{
    world *w = *state;
    ws_conn *c = ws_conn_faulty(new_conn(w));
    assert_non_null(c);
    const fr_reply *r[4];
    assert_int_equal(SEND(c, r, "MULTI", "SET a 1", "EXEC"), 0);
    assert_string_equal(resp(r[2]), "*1\r\n+OK\r\n");
    assert_int_equal(ws_conn_get_stats(c).round_trips, 1);
    assert_int_equal(ws_fault_fired(c), 0);
    ws_conn_close(c);
}

/* ----- Faults --------------------------------------------------------------------------- */

/* Crash after k of n: exactly the first k applied; the connection is dead afterwards. */
static void test_crash_after_k(void **state)
{
    world *w = *state;
    ws_conn *c = ws_conn_faulty(new_conn(w));
    const fr_reply *r[4];
    assert_int_equal(SEND(c, r, "SET k0 0"), 0);
    assert_int_equal(ws_fault_crash_after(c, 2, 2), 0);
    assert_int_equal(SEND(c, r, "SET k1 1", "SET k2 2", "SET k3 3", "SET k4 4"), WS_ECRASHED);
    for (int i = 0; i < 4; i++) assert_null(r[i]);
    assert_true(ws_conn_dead(c));
    assert_int_equal(ws_conn_err(c), WS_ECRASHED);
    assert_string_equal(check1(w, "EXISTS k1 k2 k3 k4"), ":2\r\n");
    assert_string_equal(check1(w, "EXISTS k1 k2"), ":2\r\n");
    ws_conn_stats st = ws_conn_get_stats(c);
    assert_int_equal(st.round_trips, 2);
    assert_int_equal(st.commands_sent, 3);
    assert_int_equal(st.replies_received, 1);
    /* Dead: nothing more leaves, and err keeps the cause. */
    assert_int_equal(SEND(c, r, "SET k5 5"), WS_EDEAD);
    assert_int_equal(ws_conn_err(c), WS_ECRASHED);
    assert_string_equal(check1(w, "EXISTS k5"), ":0\r\n");
    assert_int_equal(ws_fault_fired(c), 1);
    ws_conn_close(c);
}

/* A crash inside MULTI: the dead consumer's connection closes, so the server discards
 * the open transaction; k == 0 sends nothing at all. */
static void test_crash_inside_multi(void **state)
{
    world *w = *state;
    ws_conn *c = ws_conn_faulty(new_conn(w));
    const fr_reply *r[5];
    ws_fault f = {.kind = WS_FAULT_CRASH_BEFORE, .name = "exec", .nth = 1};
    assert_int_equal(ws_fault_arm(c, &f), 0);
    assert_int_equal(SEND(c, r, "SET before 1", "MULTI", "SET a 1", "INCR n", "EXEC"),
                     WS_ECRASHED);
    assert_string_equal(check1(w, "EXISTS before a n"), ":1\r\n");
    ws_conn_close(c);

    c = ws_conn_faulty(new_conn(w));
    assert_int_equal(ws_fault_crash_after(c, 1, 0), 0);
    assert_int_equal(SEND(c, r, "SET z 1"), WS_ECRASHED);
    assert_int_equal(ws_conn_get_stats(c).commands_sent, 0);
    assert_string_equal(check1(w, "EXISTS z"), ":0\r\n");
    ws_conn_close(c);
}

/* Replies lost: the whole round trip applied, the call fails, the connection is dead. */
static void test_replies_lost(void **state)
{
    world *w = *state;
    ws_conn *c = ws_conn_faulty(new_conn(w));
    const fr_reply *r[3];
    ws_fault f = {.kind = WS_FAULT_LOSE_REPLIES, .round_trip = 1, .command = 0};
    assert_int_equal(ws_fault_arm(c, &f), 0);
    assert_int_equal(SEND(c, r, "SET a 1", "INCR n", "RPUSH l x"), WS_ELOST);
    assert_null(r[0]);
    assert_true(ws_conn_dead(c));
    assert_string_equal(check1(w, "MGET a n"), "*2\r\n$1\r\n1\r\n$1\r\n1\r\n");
    assert_string_equal(check1(w, "LLEN l"), ":1\r\n");
    ws_conn_stats st = ws_conn_get_stats(c);
    assert_int_equal(st.commands_sent, 3);
    assert_int_equal(st.replies_received, 0);
    ws_conn_close(c);
}

/* An injected error: that command is not applied, its reply is the error, the rest run. */
static void test_injected_error(void **state)
{
    world *w = *state;
    ws_conn *c = ws_conn_faulty(new_conn(w));
    const fr_reply *r[3];
    ws_fault f = {.kind = WS_FAULT_ERROR, .round_trip = 1, .command = 2,
                  .error = "READONLY You can't write against a read only replica."};
    assert_int_equal(ws_fault_arm(c, &f), 0);
    assert_int_equal(SEND(c, r, "SET a 1", "INCR n", "SET b 2"), 0);
    assert_string_equal(resp(r[0]), "+OK\r\n");
    assert_string_equal(resp(r[1]),
                        "-READONLY You can't write against a read only replica.\r\n");
    assert_string_equal(resp(r[2]), "+OK\r\n");
    assert_false(ws_conn_dead(c));
    assert_string_equal(check1(w, "EXISTS a n b"), ":2\r\n");
    ws_conn_stats st = ws_conn_get_stats(c);
    assert_int_equal(st.commands_sent, 2);
    assert_int_equal(st.replies_received, 2);
    ws_conn_close(c);
}

/* Inside MULTI an injected error looks like a run-time error: +QUEUED, then its place in
 * EXEC's array -- byte for byte what a real run-time failure of INCR gives -- and the
 * other commands of the transaction run.  The transaction may span round trips. */
static void test_injected_error_in_multi(void **state)
{
    world *w = *state;
    const char *incr_err = "ERR value is not an integer or out of range";
    /* The real thing, on the checker: INCR of a non-integer fails at run time. */
    assert_string_equal(check1(w, "SET s abc"), "+OK\r\n");
    const fr_reply *r[6];
    assert_int_equal(SEND(w->check, r, "MULTI", "SET x 1", "INCR s", "SET y 2", "EXEC"), 0);
    char want[256];
    snprintf(want, sizeof want, "%s", resp(r[4]));
    assert_string_equal(want, "*3\r\n+OK\r\n-ERR value is not an integer or out of range\r\n"
                              "+OK\r\n");

    ws_conn *c = ws_conn_faulty(new_conn(w));
    assert_int_equal(ws_fault_error_nth(c, "incr", 1, incr_err), 0);
    assert_int_equal(SEND(c, r, "MULTI", "SET a 1"), 0);
    assert_int_equal(SEND(c, r, "INCR n", "SET b 2", "EXEC"), 0);
    assert_string_equal(resp(r[0]), "+QUEUED\r\n");
    assert_string_equal(resp(r[2]), want);
    assert_string_equal(check1(w, "EXISTS a n b"), ":2\r\n");

    /* EXECABORT stays EXECABORT: nothing ran, as in Redis. */
    assert_int_equal(ws_fault_error_nth(c, "incr", 2, NULL), 0);
    assert_int_equal(SEND(c, r, "MULTI", "INCR m", "NOSUCHCMD", "SET c 3", "EXEC"), 0);
    assert_int_equal(r[4]->type, FR_REPLY_ERROR);
    assert_true(strncmp(r[4]->str, "EXECABORT", 9) == 0);
    assert_string_equal(check1(w, "EXISTS m c"), ":0\r\n");
    assert_int_equal(ws_fault_fired(c), 2);
    ws_conn_close(c);
}

/* An injected error on EXEC inside MULTI ends the transaction, as a server answering EXEC
 * an error has: DISCARD goes in its place, nothing queued ran, and the next round trip is
 * outside MULTI (not queued, and a new MULTI is not "nested").  The same for DISCARD; an
 * EXEC outside MULTI is an ordinary injected error, nothing sent. */
static void test_injected_error_on_exec(void **state)
{
    world *w = *state;
    ws_conn *c = ws_conn_faulty(new_conn(w));
    const fr_reply *r[5];
    assert_int_equal(ws_fault_error_nth(c, "exec", 1, "ERR injected EXEC failure"), 0);
    assert_int_equal(ws_fault_error_nth(c, "incr", 1, NULL), 0); /* pending in the queue */
    assert_int_equal(SEND(c, r, "MULTI", "SET a 1", "INCR n", "EXEC"), 0);
    assert_string_equal(resp(r[0]), "+OK\r\n");
    assert_string_equal(resp(r[1]), "+QUEUED\r\n");
    assert_string_equal(resp(r[2]), "+QUEUED\r\n");
    assert_string_equal(resp(r[3]), "-ERR injected EXEC failure\r\n");
    ws_conn_stats st = ws_conn_get_stats(c);
    assert_int_equal(st.commands_sent, 3); /* MULTI, SET, and DISCARD for EXEC */
    assert_int_equal(st.replies_received, 2);
    assert_string_equal(check1(w, "EXISTS a n"), ":0\r\n");
    /* Out of MULTI on both sides: the next command runs at once, a MULTI opens afresh. */
    assert_int_equal(SEND(c, r, "SET b 1", "MULTI", "SET c 1", "EXEC"), 0);
    assert_string_equal(resp(r[0]), "+OK\r\n");
    assert_string_equal(resp(r[1]), "+OK\r\n");
    assert_string_equal(resp(r[3]), "*1\r\n+OK\r\n");
    assert_string_equal(check1(w, "EXISTS a b c n"), ":2\r\n");

    /* DISCARD inside MULTI, across round trips: still a DISCARD that the server sees. */
    assert_int_equal(ws_fault_error_nth(c, "discard", 1, NULL), 0);
    assert_int_equal(SEND(c, r, "MULTI", "SET d 1"), 0);
    assert_int_equal(SEND(c, r, "DISCARD"), 0);
    assert_string_equal(resp(r[0]), "-ERR injected by wsim\r\n");
    assert_int_equal(SEND(c, r, "SET e 1"), 0);
    assert_string_equal(resp(r[0]), "+OK\r\n");
    assert_string_equal(check1(w, "EXISTS d e"), ":1\r\n");

    /* Outside MULTI nothing is sent for an injected EXEC. */
    st = ws_conn_get_stats(c);
    assert_int_equal(ws_fault_error_nth(c, "exec", 3, NULL), 0);
    assert_int_equal(SEND(c, r, "EXEC"), 0);
    assert_string_equal(resp(r[0]), "-ERR injected by wsim\r\n");
    assert_int_equal(ws_conn_get_stats(c).commands_sent, st.commands_sent);
    assert_int_equal(ws_fault_fired(c), 4);
    ws_conn_close(c);
}

/* An injected error on MULTI: MULTI is not sent, so the commands after it run at once
 * and EXEC answers what a server says to an EXEC without MULTI. */
static void test_injected_error_on_multi(void **state)
{
    world *w = *state;
    ws_conn *c = ws_conn_faulty(new_conn(w));
    const fr_reply *r[4];
    assert_int_equal(ws_fault_error_nth(c, "multi", 1, NULL), 0);
    assert_int_equal(SEND(c, r, "MULTI", "SET a 1", "INCR n", "EXEC"), 0);
    assert_string_equal(resp(r[0]), "-ERR injected by wsim\r\n");
    assert_string_equal(resp(r[1]), "+OK\r\n");
    assert_string_equal(resp(r[2]), ":1\r\n");
    assert_string_equal(resp(r[3]), "-ERR EXEC without MULTI\r\n");
    assert_string_equal(check1(w, "EXISTS a n"), ":2\r\n");
    ws_conn_close(c);
}

/* REFUSE by name: the round trip holding the 2nd INCR is not sent (nothing of it), the
 * connection stays usable, and the refused INCR still counted. */
static void test_refused_by_name(void **state)
{
    world *w = *state;
    ws_conn *c = ws_conn_faulty(new_conn(w));
    const fr_reply *r[3];
    ws_fault f = {.kind = WS_FAULT_REFUSE, .name = "INCR", .nth = 2};
    assert_int_equal(ws_fault_arm(c, &f), 0);
    assert_int_equal(SEND(c, r, "INCR n"), 0);
    assert_int_equal(SEND(c, r, "SET a 1", "incr n", "SET b 1"), WS_EREFUSED);
    assert_null(r[0]);
    assert_false(ws_conn_dead(c));
    assert_string_equal(check1(w, "EXISTS a b"), ":0\r\n");
    assert_int_equal(SEND(c, r, "INCR n"), 0);
    assert_string_equal(resp(r[0]), ":2\r\n");
    ws_conn_stats st = ws_conn_get_stats(c);
    assert_int_equal(st.round_trips, 3);
    assert_int_equal(st.commands_sent, 2);
    assert_int_equal(ws_fault_fired(c), 1);
    ws_conn_close(c);
}

/* CRASH_BEFORE by position: round trip 2, command 2 -- the first command of that round
 * trip applied, the addressed one and the rest not; dead afterwards. */
static void test_crash_before_by_position(void **state)
{
    world *w = *state;
    ws_conn *c = ws_conn_faulty(new_conn(w));
    const fr_reply *r[3];
    ws_fault f = {.kind = WS_FAULT_CRASH_BEFORE, .round_trip = 2, .command = 2};
    assert_int_equal(ws_fault_arm(c, &f), 0);
    assert_int_equal(SEND(c, r, "SET k0 0", "SET k00 0"), 0); /* command 2 of round trip 1 */
    assert_int_equal(SEND(c, r, "SET k1 1", "SET k2 2", "SET k3 3"), WS_ECRASHED);
    assert_true(ws_conn_dead(c));
    assert_string_equal(check1(w, "EXISTS k0 k00 k1 k2 k3"), ":3\r\n");
    assert_string_equal(check1(w, "EXISTS k1"), ":1\r\n");
    ws_conn_stats st = ws_conn_get_stats(c);
    assert_int_equal(st.commands_sent, 3);
    assert_int_equal(st.replies_received, 2);
    ws_conn_close(c);
}

/* Refused: nothing applied, the call fails, the connection stays usable. */
static void test_refused(void **state)
{
    world *w = *state;
    ws_conn *c = ws_conn_faulty(new_conn(w));
    const fr_reply *r[2];
    ws_fault f = {.kind = WS_FAULT_REFUSE, .round_trip = 2};
    assert_int_equal(ws_fault_arm(c, &f), 0);
    assert_int_equal(SEND(c, r, "SET a 1"), 0);
    assert_int_equal(SEND(c, r, "SET b 1", "SET c 1"), WS_EREFUSED);
    assert_null(r[0]);
    assert_false(ws_conn_dead(c));
    assert_int_equal(ws_conn_err(c), WS_EREFUSED);
    assert_string_equal(check1(w, "EXISTS a b c"), ":1\r\n");
    assert_int_equal(SEND(c, r, "SET d 1"), 0);
    assert_string_equal(check1(w, "EXISTS d"), ":1\r\n");
    ws_conn_stats st = ws_conn_get_stats(c);
    assert_int_equal(st.round_trips, 3);
    assert_int_equal(st.commands_sent, 2);
    /* The error stays sticky after the later success. */
    assert_int_equal(ws_conn_err(c), WS_EREFUSED);
    ws_conn_close(c);
}

/* Faults by name count over the connection's life, case-insensitively: "the 3rd XACK". */
static void test_fault_by_name(void **state)
{
    world *w = *state;
    const fr_reply *r[4];
    assert_int_equal(SEND(w->check, r, "XGROUP CREATE s g $ MKSTREAM", "XADD s 1-1 f a",
                          "XADD s 2-1 f b", "XADD s 3-1 f c"),
                     0);
    assert_int_equal(SEND(w->check, r, "XREADGROUP GROUP g c1 COUNT 10 STREAMS s >"), 0);
    assert_int_equal(r[0]->type, FR_REPLY_ARRAY);

    ws_conn *c = ws_conn_faulty(new_conn(w));
    assert_int_equal(ws_fault_error_nth(c, "XACK", 3, "ERR the third XACK"), 0);
    assert_int_equal(SEND(c, r, "xack s g 1-1", "PING"), 0);
    assert_string_equal(resp(r[0]), ":1\r\n");
    assert_int_equal(SEND(c, r, "PING", "XAck s g 2-1", "XACK s g 3-1"), 0);
    assert_string_equal(resp(r[1]), ":1\r\n");
    assert_string_equal(resp(r[2]), "-ERR the third XACK\r\n");
    assert_string_equal(check1(w, "XPENDING s g"),
                        "*4\r\n:1\r\n$3\r\n3-1\r\n$3\r\n3-1\r\n*1\r\n*2\r\n$2\r\nc1\r\n$1\r\n1\r\n");

    /* Crash before the 4th XACK: the write before it applied, the XACK not -- the direct
     * mode's double-apply window. */
    ws_fault f = {.kind = WS_FAULT_CRASH_BEFORE, .name = "xack", .nth = 4};
    assert_int_equal(ws_fault_arm(c, &f), 0);
    assert_int_equal(SEND(c, r, "LPUSH out 3-1", "XACK s g 3-1"), WS_ECRASHED);
    assert_string_equal(check1(w, "LLEN out"), ":1\r\n");
    assert_string_equal(check1(w, "XPENDING s g"),
                        "*4\r\n:1\r\n$3\r\n3-1\r\n$3\r\n3-1\r\n*1\r\n*2\r\n$2\r\nc1\r\n$1\r\n1\r\n");
    ws_conn_close(c);
}

/* Bad arming and fault calls on a connection without a fault layer. */
static void test_fault_arming_errors(void **state)
{
    world *w = *state;
    ws_conn *plain = new_conn(w);
    assert_int_equal(ws_fault_crash_after(plain, 1, 0), WS_EINVAL);
    assert_int_equal(ws_fault_fired(plain), 0);
    ws_conn *c = ws_conn_faulty(plain);
    ws_fault f = {.kind = WS_FAULT_ERROR, .round_trip = 1, .command = 0};
    assert_int_equal(ws_fault_arm(c, &f), WS_EINVAL);
    f.command = 1;
    f.round_trip = 0;
    assert_int_equal(ws_fault_arm(c, &f), WS_EINVAL);
    assert_int_equal(ws_fault_error_nth(c, "get", 0, NULL), WS_EINVAL);
    /* Cleared faults never fire. */
    assert_int_equal(ws_fault_error_nth(c, "get", 1, NULL), 0);
    ws_fault_clear(c);
    const fr_reply *r[1];
    assert_int_equal(SEND(c, r, "GET x"), 0);
    assert_int_equal(r[0]->type, FR_REPLY_NIL);
    assert_string_equal(ws_err_name(WS_ECRASHED), "WS_ECRASHED");
    assert_string_equal(ws_strerror(WS_EREFUSED), "the connection refused to send (injected)");
    assert_string_equal(ws_err_name(-999), "WS_E?");
    ws_conn_close(c);
}

/* ----- The trace ---------------------------------------------------------------------- */

typedef struct trace_log {
    char text[4096]; /* every round trip's text, appended */
} trace_log;

static void record(void *ud, const ws_round_trip *rt)
{
    trace_log *log = ud;
    char *t = ws_round_trip_text(rt, NULL);
    assert_non_null(t);
    strncat(log->text, t, sizeof log->text - strlen(log->text) - 1);
    free(t);
}

/* Every round trip reaches the hook with its cause, and prints the same on every run and
 * backend. */
static void test_trace_text(void **state)
{
    world *w = *state;
    ws_conn *c = ws_conn_faulty(new_conn(w));
    assert_int_equal(ws_conn_set_label(c, "window"), 0);
    trace_log log = {{0}};
    ws_conn_set_trace(c, record, &log);
    assert_int_equal(ws_fault_error_nth(c, "incr", 1, NULL), 0);
    assert_int_equal(ws_fault_crash_after(c, 3, 1), 0);
    const fr_reply *r[4];
    assert_int_equal(send_lines(c, "read", 4,
                                L("SET \"a b\" \"x\\ny\"", "GET \"a b\"", "INCR n", "GET nope"),
                                r),
                     0);
    assert_int_equal(send_lines(c, "pool", 3, L("MULTI", "INCR n", "EXEC"), r), 0);
    assert_int_equal(send_lines(c, "flush of read 3", 2, L("RPUSH l '' v", "DEL l"), r),
                     WS_ECRASHED);
    assert_string_equal(log.text,
                        "#1 window (read): ok\n"
                        "  SET \"a b\" \"x\\ny\" -> +OK\n"
                        "  GET \"a b\" -> \"x\\ny\"\n"
                        "  INCR n -> -ERR injected by wsim (injected)\n"
                        "  GET nope -> $-1\n"
                        "#2 window (pool): ok\n"
                        "  MULTI -> +OK\n"
                        "  INCR n -> +QUEUED\n"
                        "  EXEC -> [:1]\n"
                        "#3 window (flush of read 3): WS_ECRASHED, crash after 1 of 2 commands\n"
                        "  RPUSH l \"\" v -> :2 (lost)\n"
                        "  DEL l -> (not sent)\n");
    ws_conn_close(c);
}

/* ----- Against a real server only ------------------------------------------------------ */

/* The fake and redis-server answer the same pipelines with the same replies: strings, a
 * MULTI block with a run-time error, queue-time errors, nil and nil array. */
static void test_fake_and_real_agree(void **state)
{
    world *w = *state;
    fr_server *fake = fr_server_new(NULL);
    ws_conn *f = ws_conn_fake(fake);
    ws_conn *real = new_conn(w);
    static const char *const rts[][8] = {
        {"SET a 1", "INCR a", "GET a", "GET nosuch", "APPEND a \"\\x00\\r\\n\"", "GET a", NULL},
        {"MULTI", "INCR a", "LPUSH l x", "LRANGE l 0 -1", "EXEC", NULL},
        {"NOSUCH x", "GET", "LPUSH a x", "XREAD COUNT 1 STREAMS nostream 0", "DEL a l",
         "MULTI", "GET", "EXEC"},
        {"HSET h f v g w", "HGETALL h", "ZADD z 1 a 2 b", "ZRANGE z 0 -1 WITHSCORES",
         "XADD s 1-1 f v", "XRANGE s - +", NULL},
    };
    for (size_t t = 0; t < sizeof rts / sizeof rts[0]; t++) {
        size_t n = 0;
        while (n < 8 && rts[t][n]) n++;
        const fr_reply *rf[8], *rr[8];
        cmds cs;
        make_cmds(&cs, n, rts[t]);
        assert_int_equal(ws_pipeline(f, NULL, n, cs.cmd, rf), 0);
        assert_int_equal(ws_pipeline(real, NULL, n, cs.cmd, rr), 0);
        for (size_t i = 0; i < n; i++) {
            char a[8192];
            snprintf(a, sizeof a, "%s", resp(rf[i]));
            if (strcmp(a, resp(rr[i])) != 0)
                fail_msg("%s: fake %s, redis-server %s", rts[t][i], a, resp(rr[i]));
            assert_int_equal(rf[i]->type, rr[i]->type);
        }
        free_cmds(&cs);
    }
    ws_conn_close(f);
    ws_conn_close(real);
    fr_server_free(fake);
}

/* Connecting: bad urls and a missing socket give a dead connection with a reason. */
static void test_open_errors(void **state)
{
    (void)state;
    ws_conn *c = ws_conn_open("http://x", 100);
    assert_non_null(c);
    assert_true(ws_conn_dead(c));
    assert_int_equal(ws_conn_err(c), WS_EINVAL);
    const fr_reply *r[1];
    assert_int_equal(SEND(c, r, "PING"), WS_EDEAD);
    ws_conn_close(c);

    c = ws_conn_open("unix:///nonexistent/wsim.sock", 100);
    assert_int_equal(ws_conn_err(c), WS_ECONNECT);
    assert_non_null(strstr(ws_conn_errstr(c), "unix:///nonexistent/wsim.sock"));
    /* A fault layer around a dead connection is dead too. */
    ws_conn *fc = ws_conn_faulty(c);
    assert_true(ws_conn_dead(fc));
    assert_int_equal(SEND(fc, r, "PING"), WS_EDEAD);
    ws_conn_close(fc);

    c = ws_conn_open("redis://127.0.0.1:notaport", 100);
    assert_int_equal(ws_conn_err(c), WS_EINVAL);
    ws_conn_close(c);
}

/* TCP: "redis://127.0.0.1:<port>" reaches a server listening on loopback (the harness's
 * one-node cluster, the one that has a TCP port: the harness picks a free one), and a
 * fault layer over it works as over a unix socket. */
static void test_tcp(void **state)
{
    (void)state;
    rh_options opt = {0};
    opt.cluster = 1;
    opt.quiet = 1;
    rh_server *srv = rh_start(&opt);
    assert_non_null(srv);
    assert_true(srv->port > 0);
    char url[64];
    snprintf(url, sizeof url, "redis://127.0.0.1:%d", srv->port);
    ws_conn *c = ws_conn_faulty(ws_conn_open(url, 5000));
    assert_non_null(c);
    if (ws_conn_dead(c)) fail_msg("cannot connect to %s: %s", url, ws_conn_errstr(c));
    assert_string_equal(ws_conn_label(c), "redis");
    assert_int_equal(ws_fault_error_nth(c, "get", 2, NULL), 0);
    const fr_reply *r[3];
    assert_int_equal(SEND(c, r, "SET a 1", "GET a", "GET a"), 0);
    assert_string_equal(resp(r[0]), "+OK\r\n");
    assert_string_equal(resp(r[1]), "$1\r\n1\r\n");
    assert_string_equal(resp(r[2]), "-ERR injected by wsim\r\n");
    assert_int_equal(SEND(c, r, "CLUSTER KEYSLOT a"), 0);
    assert_string_equal(resp(r[0]), ":15495\r\n");
    ws_conn_stats st = ws_conn_get_stats(c);
    assert_int_equal(st.round_trips, 2);
    assert_int_equal(st.commands_sent, 3);
    ws_conn_close(c);
    rh_stop(srv);
}

/* Every wait is bounded: a reply that does not come in time kills the connection with
 * WS_ETIMEDOUT (here a BLPOP that would block for ever, with a 200 ms timeout). */
static void test_timeout(void **state)
{
    (void)state;
    char url[400];
    snprintf(url, sizeof url, "unix://%s", g_redis->socket);
    ws_conn *c = ws_conn_open(url, 200);
    assert_false(ws_conn_dead(c));
    const fr_reply *r[1];
    assert_int_equal(SEND(c, r, "BLPOP nokey 0"), WS_ETIMEDOUT);
    assert_true(ws_conn_dead(c));
    assert_int_equal(ws_conn_err(c), WS_ETIMEDOUT);
    ws_conn_close(c);
}

#define T(fn) cmocka_unit_test_setup_teardown(fn, setup, teardown)

int main(int argc, char **argv)
{
    const struct CMUnitTest common[] = {
        T(test_pipeline_and_counters), T(test_fault_layer_transparent),
        T(test_crash_after_k),         T(test_crash_inside_multi),
        T(test_replies_lost),          T(test_injected_error),
        T(test_injected_error_in_multi), T(test_injected_error_on_exec),
        T(test_injected_error_on_multi), T(test_refused),
        T(test_refused_by_name),       T(test_crash_before_by_position),
        T(test_fault_by_name),         T(test_fault_arming_errors),
        T(test_trace_text),
    };
    const struct CMUnitTest real_only[] = {
        T(test_fake_and_real_agree),
        T(test_open_errors),
        T(test_timeout),
        T(test_tcp),
    };
    g_real = argc > 1 && strcmp(argv[1], "--real") == 0;
    if (!g_real) return cmocka_run_group_tests_name("conn on the fake", common, NULL, NULL);
    rh_options opt = {0};
    opt.quiet = 1;
    g_redis = rh_start(&opt);
    if (!g_redis) {
        fprintf(stderr, "test_conn --real: cannot start redis-server\n");
        return 1;
    }
    int failed = cmocka_run_group_tests_name("conn on redis-server", common, NULL, NULL);
    failed += cmocka_run_group_tests_name("fake and redis-server", real_only, NULL, NULL);
    rh_stop(g_redis);
    return failed;
}
