/* test_api.c -- the public API of libfakeredis: executing commands, reply trees and their
 * RESP encoding, pipelines, line splitting, the clock and lazy expiry, the fault hooks,
 * the publish log, the command table and the dump. */
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

/* A fresh server and one client (fake_fixture_setup / fake_fixture_teardown). */
typedef fake_fixture fixture;

/* Runs a line (as it is, no printf) and returns its RESP2 encoding (static buffer, for
 * assertions). */
static const char *resp(fr_client *c, const char *line)
{
    return fake_resp(fr_exec_line(c, line));
}

static void test_reply_tree(void **state)
{
    fixture *f = *state;
    const fr_reply *r = fr_exec_line(f->c, "PING");
    assert_int_equal(r->type, FR_REPLY_STATUS);
    assert_string_equal(r->str, "PONG");
    assert_int_equal(r->len, 4);

    r = fr_exec_line(f->c, "ECHO \"a\\x00b\"");
    assert_int_equal(r->type, FR_REPLY_BULK);
    assert_int_equal(r->len, 3);
    assert_memory_equal(r->str, "a\0b", 3);

    r = fr_exec_line(f->c, "NOSUCH x");
    assert_int_equal(r->type, FR_REPLY_ERROR);
    assert_string_equal(r->str,
                        "ERR unknown command 'NOSUCH', with args beginning with: 'x' ");

    r = fr_exec_line(f->c, "TIME");
    assert_int_equal(r->type, FR_REPLY_ARRAY);
    assert_int_equal(r->count, 2);
    assert_string_equal(r->elements[0].str, "1700000000");
    assert_string_equal(r->elements[1].str, "0");
}

static void test_exec_binary_args(void **state)
{
    fixture *f = *state;
    const char *argv[] = {"ECHO", "x\0y\r\n"};
    size_t lens[] = {4, 5};
    const fr_reply *r = fr_exec(f->c, 2, argv, lens);
    assert_int_equal(r->type, FR_REPLY_BULK);
    assert_int_equal(r->len, 5);
    assert_memory_equal(r->str, "x\0y\r\n", 5);

    size_t n;
    const char *raw = fr_exec_resp(f->c, 2, argv, lens, &n);
    assert_int_equal(n, 11);
    assert_memory_equal(raw, "$5\r\nx\0y\r\n\r\n", 11);

    /* argvlen NULL: NUL-terminated arguments */
    const char *argv2[] = {"echo", "hello"};
    r = fr_exec(f->c, 2, argv2, NULL);
    assert_string_equal(r->str, "hello");

    r = fr_exec(f->c, 0, argv2, NULL);
    assert_int_equal(r->type, FR_REPLY_ERROR);
}

static void test_encode_roundtrip_and_truncation(void **state)
{
    fixture *f = *state;
    const fr_reply *r = fr_exec_line(f->c, "TIME");
    char small[8];
    size_t need = fr_reply_encode(r, small, sizeof(small));
    assert_true(need > sizeof(small));
    assert_memory_equal(small, "*2\r\n$10\r", 8);
    size_t len;
    char *full = fr_reply_to_resp(r, &len);
    assert_int_equal(len, need);
    assert_string_equal(full, "*2\r\n$10\r\n1700000000\r\n$1\r\n0\r\n");
    free(full);
}

static void test_pipeline(void **state)
{
    fixture *f = *state;
    const char *a[] = {"PING"};
    const char *b[] = {"ECHO", "one"};
    const char *d[] = {"MULTI"};
    const char *e[] = {"EXEC"};
    fr_command cmds[] = {{1, a, NULL}, {2, b, NULL}, {1, d, NULL}, {2, b, NULL}, {1, e, NULL}};
    const fr_reply *out[5];
    assert_int_equal(fr_pipeline(f->c, 5, cmds, out), 0);
    assert_string_equal(out[0]->str, "PONG");
    assert_string_equal(out[1]->str, "one");
    assert_string_equal(out[2]->str, "OK");
    assert_string_equal(out[3]->str, "QUEUED");
    assert_int_equal(out[4]->type, FR_REPLY_ARRAY);
    assert_int_equal(out[4]->count, 1);
    assert_string_equal(out[4]->elements[0].str, "one");
}

static void test_split_line(void **state)
{
    (void)state;
    char **argv;
    size_t *lens;
    int argc = fr_split_line("  SET \"a b\\x41\\n\" 'it\\'s' plain  ", &argv, &lens);
    assert_int_equal(argc, 4);
    assert_string_equal(argv[0], "SET");
    assert_int_equal(lens[1], 5);
    assert_memory_equal(argv[1], "a bA\n", 5);
    assert_string_equal(argv[2], "it's");
    assert_string_equal(argv[3], "plain");
    fr_split_free(argc, argv, lens);

    assert_int_equal(fr_split_line("", &argv, &lens), 0);
    fr_split_free(0, argv, lens);
    assert_int_equal(fr_split_line("GET \"open", &argv, &lens), -1);
    assert_int_equal(fr_split_line("GET \"closed\"x", &argv, &lens), -1);
    assert_int_equal(fr_split_line("GET 'open", &argv, &lens), -1);
}

/* fr_split_args reads len bytes at most, stops at a NUL, and allocates nothing. */
static void test_split_args(void **state)
{
    (void)state;
    char out[32];
    size_t off[8], lens[8];
    /* the bytes past len are not part of the line: "abc def" cut after 5 bytes */
    assert_int_equal(fr_split_args("abc def", 5, out, off, lens, 8), 2);
    assert_memory_equal(out + off[1], "d", 1);
    assert_int_equal(lens[1], 1);
    /* a quote cut by len is unbalanced */
    assert_int_equal(fr_split_args("\"ab\"", 3, out, off, lens, 8), -1);
    /* a NUL ends the line */
    assert_int_equal(fr_split_args("a\0b c", 5, out, off, lens, 8), 1);
    assert_int_equal(lens[0], 1);
    /* more arguments than max */
    assert_int_equal(fr_split_args("a b c", 5, out, off, lens, 2), -1);
    /* escapes and single quotes, as fr_split_line */
    assert_int_equal(fr_split_args("\"\\x41\\q\" 'it\\'s'", 16, out, off, lens, 8), 2);
    assert_memory_equal(out + off[0], "Aq", 2);
    assert_int_equal(lens[0], 2);
    assert_memory_equal(out + off[1], "it's", 4);
}

static void test_unbalanced_quotes_reply(void **state)
{
    fixture *f = *state;
    assert_string_equal(resp(f->c, "ECHO \"x"),
                        "-ERR Protocol error: unbalanced quotes in request\r\n");
}

static void test_clock(void **state)
{
    fixture *f = *state;
    assert_int_equal(fr_clock_now(f->srv), 1700000000000LL);
    fr_clock_advance(f->srv, 1500);
    assert_int_equal(fr_clock_now(f->srv), 1700000001500LL);
    assert_string_equal(resp(f->c, "TIME"), "*2\r\n$10\r\n1700000001\r\n$6\r\n500000\r\n");
    fr_clock_set(f->srv, 42);
    assert_string_equal(resp(f->c, "TIME"), "*2\r\n$1\r\n0\r\n$5\r\n42000\r\n");

    fr_config cfg = fr_config_default();
    cfg.start_ms = 5000;
    fr_server *s2 = fr_server_new(&cfg);
    assert_int_equal(fr_clock_now(s2), 5000);
    fr_clock_use_wall(s2, 1);
    assert_true(fr_clock_now(s2) > 1700000000000LL);
    fr_clock_use_wall(s2, 0);
    assert_true(fr_clock_now(s2) > 1700000000000LL); /* frozen at the last wall reading */
    fr_server_free(s2);
}

/* The probes fr_server_reset is checked with: every part of a server a run can change. */
static const char *const reset_probes[] = {
    "DBSIZE", "KEYS *", "GET s", "XINFO STREAM k", "TIME", "CLIENT ID",
    "SCRIPT EXISTS e0e1f9fabfc9d4800c877a703b823ac0578ff8db", "FUNCTION LIST",
    "PUBSUB CHANNELS", "CONFIG GET maxmemory-policy", "CONFIG GET latency-tracking",
    "SELECT 3", "DBSIZE", "INFO commandstats", "INFO errorstats", "SPOP set 2",
    "SADD set a b c d e f g", "SPOP set 2", "XADD k * f v", "SET s 1", "GET s",
};

/* Runs the probes on a new client of srv; their replies, concatenated (heap). */
static char *reset_probe(fr_server *srv)
{
    fr_client *c = fr_client_new(srv);
    char *all = calloc(1, 1);
    size_t len = 0;
    for (size_t i = 0; i < sizeof reset_probes / sizeof *reset_probes; i++) {
        const char *r = resp(c, reset_probes[i]);
        all = realloc(all, len + strlen(r) + 1);
        memcpy(all + len, r, strlen(r) + 1);
        len += strlen(r);
    }
    fr_client_free(c);
    return all;
}

/* A reset server is a new one: after a run that touched the keyspace of two databases,
 * the clock, scripts, functions, Pub/Sub, settings, statistics and fault hooks, the
 * probes answer as on a server just made with the same configuration. */
static void test_server_reset(void **state)
{
    (void)state;
    fr_config cfg = fr_config_default();
    cfg.seed = 7;
    cfg.start_ms = 1800000000000LL;
    fr_server *used = fr_server_new(NULL);
    fr_client *a = fr_client_new(used), *b = fr_client_new(used);
    const char *dirty[] = {
        "SET s x", "SELECT 3", "SET other y", "SELECT 0", "XADD k * a 1",
        "XGROUP CREATE k g $", "SADD set x y z", "EVAL \"return 1\" 0",
        "FUNCTION LOAD \"#!lua name=lib\\nredis.register_function('f', function() return 1 end)\"",
        "CONFIG SET maxmemory-policy allkeys-lru", "CONFIG SET latency-tracking no",
        "NOSUCH command", "WATCH s", "MULTI", "SET s z",
    };
    for (size_t i = 0; i < sizeof dirty / sizeof *dirty; i++) (void)resp(a, dirty[i]);
    (void)resp(b, "SUBSCRIBE news");
    fr_clock_advance(used, 5000);
    assert_int_equal(fr_fault_nth(used, 3, "ERR injected"), 0);
    /* the probes see all that (else the comparison below could not fail) */
    fr_server *other = fr_server_new(&cfg);
    char *dirty_probe = reset_probe(used), *new_probe = reset_probe(other);
    assert_string_not_equal(dirty_probe, new_probe);
    free(dirty_probe);
    free(new_probe);
    fr_server_free(other);
    assert_int_equal(fr_server_reset(used, &cfg), 0); /* a and b die here */
    fr_server *fresh = fr_server_new(&cfg);
    char *got = reset_probe(used), *want = reset_probe(fresh);
    assert_string_equal(got, want);
    size_t l1, l2;
    char *d1 = fr_dump(used, &l1), *d2 = fr_dump(fresh, &l2);
    assert_int_equal(l1, l2);
    assert_memory_equal(d1, d2, l1);
    free(d1);
    free(d2);
    free(got);
    free(want);
    fr_server_free(fresh);
    fr_server_free(used);
}

static void test_expiry_on_virtual_clock(void **state)
{
    fixture *f = *state;
    assert_string_equal(resp(f->c, "SET k v PX 100"), "+OK\r\n");
    fr_clock_advance(f->srv, 100);
    /* Redis keeps a key through its deadline millisecond (expired when now > deadline) */
    assert_string_equal(resp(f->c, "GET k"), "$1\r\nv\r\n");
    assert_string_equal(resp(f->c, "PTTL k"), ":0\r\n");
    fr_clock_advance(f->srv, 1);
    assert_string_equal(resp(f->c, "GET k"), "$-1\r\n");
    assert_string_equal(resp(f->c, "EXISTS k"), ":0\r\n");

    /* the dump never shows an expired key, even before anything touched it */
    assert_string_equal(resp(f->c, "SET gone v PX 10"), "+OK\r\n");
    assert_string_equal(resp(f->c, "SET stays v"), "+OK\r\n");
    fr_clock_advance(f->srv, 11);
    char *d = fr_dump(f->srv, NULL);
    assert_null(strstr(d, "gone"));
    assert_non_null(strstr(d, "stays"));
    free(d);
    assert_string_equal(resp(f->c, "DBSIZE"), ":1\r\n");
}

static void test_watch_sees_expiry(void **state)
{
    fixture *f = *state;
    fr_client *other = fr_client_new(f->srv);
    assert_string_equal(resp(f->c, "SET k v PX 50"), "+OK\r\n");
    assert_string_equal(resp(f->c, "WATCH k"), "+OK\r\n");
    fr_clock_advance(f->srv, 60);
    assert_string_equal(resp(f->c, "MULTI"), "+OK\r\n");
    assert_string_equal(resp(f->c, "PING"), "+QUEUED\r\n");
    /* the key was alive at WATCH and expired before EXEC: the transaction fails */
    assert_string_equal(resp(f->c, "EXEC"), "*-1\r\n");

    /* a write by another client makes EXEC fail too; UNWATCH forgives it */
    assert_string_equal(resp(f->c, "WATCH a"), "+OK\r\n");
    assert_string_equal(resp(other, "SET a 1"), "+OK\r\n");
    assert_string_equal(resp(f->c, "MULTI"), "+OK\r\n");
    assert_string_equal(resp(f->c, "EXEC"), "*-1\r\n");
    assert_string_equal(resp(f->c, "WATCH a"), "+OK\r\n");
    assert_string_equal(resp(other, "SET a 2"), "+OK\r\n");
    assert_string_equal(resp(f->c, "UNWATCH"), "+OK\r\n");
    assert_string_equal(resp(f->c, "MULTI"), "+OK\r\n");
    assert_string_equal(resp(f->c, "GET a"), "+QUEUED\r\n");
    assert_string_equal(resp(f->c, "EXEC"), "*1\r\n$1\r\n2\r\n");
    fr_client_free(other);
}

static void test_client_state(void **state)
{
    fixture *f = *state;
    assert_int_equal(fr_client_db(f->c), 0);
    assert_string_equal(resp(f->c, "SELECT 3"), "+OK\r\n");
    assert_int_equal(fr_client_db(f->c), 3);
    assert_false(fr_client_in_multi(f->c));
    resp(f->c, "MULTI");
    assert_true(fr_client_in_multi(f->c));
    resp(f->c, "DISCARD");
    assert_false(fr_client_in_multi(f->c));
    /* another client has its own database */
    fr_client *c2 = fr_client_new(f->srv);
    assert_int_equal(fr_client_db(c2), 0);
    fr_client_free(c2);
}

static void test_quit(void **state)
{
    fixture *f = *state;
    resp(f->c, "MULTI");
    assert_string_equal(resp(f->c, "QUIT anything"), "+OK\r\n");
    assert_false(fr_client_in_multi(f->c));
}

static void test_fault_nth(void **state)
{
    fixture *f = *state;
    uint64_t before = fr_server_commands_executed(f->srv);
    assert_int_equal(fr_fault_nth(f->srv, 2, "ERR injected"), 0);
    assert_string_equal(resp(f->c, "SET a 1"), "+OK\r\n");
    assert_string_equal(resp(f->c, "SET b 2"), "-ERR injected\r\n");
    assert_string_equal(resp(f->c, "SET c 3"), "+OK\r\n");
    assert_string_equal(resp(f->c, "EXISTS b"), ":0\r\n"); /* the faulted command changed nothing */
    assert_int_equal(fr_fault_fired(f->srv), 1);
    assert_int_equal(fr_server_commands_executed(f->srv), before + 4);
    assert_int_equal(fr_fault_nth(f->srv, 0, "ERR x"), -1);
    assert_int_equal(fr_fault_nth(f->srv, 1, NULL), -1);
}

static void test_fault_by_name_inside_exec(void **state)
{
    fixture *f = *state;
    assert_int_equal(fr_fault_command(f->srv, "incr", "READONLY You can't write against a "
                                                      "read only replica.", 1), 0);
    resp(f->c, "MULTI");
    /* queueing does not count: the fault fires when EXEC runs the command */
    assert_string_equal(resp(f->c, "INCR n"), "+QUEUED\r\n");
    assert_string_equal(resp(f->c, "INCR n"), "+QUEUED\r\n");
    assert_string_equal(resp(f->c, "EXEC"),
                        "*2\r\n-READONLY You can't write against a read only replica.\r\n"
                        ":1\r\n");
    /* times = 1: used up */
    assert_string_equal(resp(f->c, "INCR n"), ":2\r\n");

    assert_int_equal(fr_fault_command(f->srv, "GET", "ERR down", -1), 0);
    assert_string_equal(resp(f->c, "GET n"), "-ERR down\r\n");
    assert_string_equal(resp(f->c, "GET n"), "-ERR down\r\n");
    fr_fault_clear(f->srv);
    assert_string_equal(resp(f->c, "GET n"), "$1\r\n2\r\n");
    assert_int_equal(fr_fault_command(f->srv, "get", "ERR x", 0), -1);
    assert_int_equal(fr_fault_command(f->srv, "", "ERR x", 1), -1);
}

static void test_fault_on_exec_itself(void **state)
{
    fixture *f = *state;
    fr_fault_command(f->srv, "exec", "ERR connection lost", 1);
    resp(f->c, "MULTI");
    resp(f->c, "SET x 1");
    assert_string_equal(resp(f->c, "EXEC"), "-ERR connection lost\r\n");
    /* the transaction is still open, as after any EXEC that did not run */
    assert_true(fr_client_in_multi(f->c));
    assert_string_equal(resp(f->c, "EXEC"), "*1\r\n+OK\r\n");
}

static void test_published_log(void **state)
{
    fixture *f = *state;
    assert_int_equal(fr_published_count(f->srv), 0);
    fr_clock_advance(f->srv, 7);
    assert_string_equal(resp(f->c, "PUBLISH news \"a\\x00b\""), ":0\r\n");
    assert_string_equal(resp(f->c, "PUBLISH other x"), ":0\r\n");
    assert_int_equal(fr_published_count(f->srv), 2);
    const fr_message *m = fr_published(f->srv, 0);
    assert_string_equal(m->channel, "news");
    assert_int_equal(m->payload_len, 3);
    assert_memory_equal(m->payload, "a\0b", 3);
    assert_int_equal(m->at_ms, 1700000000007LL);
    assert_null(fr_published(f->srv, 2));
    fr_published_clear(f->srv);
    assert_int_equal(fr_published_count(f->srv), 0);
}

/* The published log's payload of message i (as PUBLISH wrote it: "m<i>"). */
static void assert_published(fr_server *srv, size_t index, const char *payload)
{
    const fr_message *m = fr_published(srv, index);
    assert_non_null(m);
    assert_string_equal(m->payload, payload);
}

/* The log keeps the newest messages within its bounds, oldest dropped first and counted
 * (issue 26: 200,000 PUBLISHes of 1 KiB held 214 MB before it was bounded). */
static void test_published_log_bounded(void **state)
{
    fixture *f = *state;
    size_t max = 0, max_bytes = 0, bytes = 0;
    fr_published_limit(f->srv, &max, &max_bytes, &bytes);
    assert_int_equal(max, FR_PUBLISHED_DEFAULT_MAX);
    assert_int_equal(max_bytes, FR_PUBLISHED_DEFAULT_MAX_BYTES);
    assert_int_equal(bytes, 0);

    /* by count: five into three */
    fr_published_set_limit(f->srv, 3, 1000);
    const char *const first[5] = {"PUBLISH ch m0", "PUBLISH ch m1", "PUBLISH ch m2",
                                  "PUBLISH ch m3", "PUBLISH ch m4"};
    for (int i = 0; i < 5; i++) resp(f->c, first[i]);
    assert_int_equal(fr_published_count(f->srv), 3);
    assert_int_equal(fr_published_dropped(f->srv), 2);
    assert_published(f->srv, 0, "m2");
    assert_published(f->srv, 2, "m4");
    assert_null(fr_published(f->srv, 3));
    fr_published_limit(f->srv, NULL, NULL, &bytes);
    assert_int_equal(bytes, 3 * (2 + 2));

    /* by bytes: "ch" + "m5" is 4 bytes, so 10 bytes hold two */
    fr_published_set_limit(f->srv, 100, 10);
    assert_int_equal(fr_published_count(f->srv), 2); /* lowering drops at once */
    assert_int_equal(fr_published_dropped(f->srv), 3);
    resp(f->c, "PUBLISH ch m5");
    assert_int_equal(fr_published_count(f->srv), 2);
    assert_published(f->srv, 0, "m4");
    assert_published(f->srv, 1, "m5");
    /* one message larger than the whole bound is not kept, and drops nothing */
    resp(f->c, "PUBLISH ch a-message-of-twenty-bytes");
    assert_int_equal(fr_published_count(f->srv), 2);
    assert_int_equal(fr_published_dropped(f->srv), 5);

    /* 0 messages: nothing kept, everything counted */
    fr_published_set_limit(f->srv, 0, 10);
    resp(f->c, "PUBLISH ch m6");
    assert_int_equal(fr_published_count(f->srv), 0);
    assert_int_equal(fr_published_dropped(f->srv), 8);
    fr_published_clear(f->srv);
    assert_int_equal(fr_published_dropped(f->srv), 0);

    /* the defaults hold 20,000 messages of 1 KiB to the last 10,000 */
    fr_published_set_limit(f->srv, FR_PUBLISHED_DEFAULT_MAX, FR_PUBLISHED_DEFAULT_MAX_BYTES);
    char big[1024 + 1];
    memset(big, 'x', 1024);
    big[1024] = '\0';
    for (int i = 0; i < 20000; i++) {
        const char *argv[3] = {"PUBLISH", "ch", big};
        snprintf(big, 8, "%07d", i);
        big[7] = 'x';
        const size_t lens[3] = {7, 2, 1024};
        assert_non_null(fr_exec(f->c, 3, argv, lens));
    }
    assert_int_equal(fr_published_count(f->srv), FR_PUBLISHED_DEFAULT_MAX);
    assert_int_equal(fr_published_dropped(f->srv), 20000 - FR_PUBLISHED_DEFAULT_MAX);
    fr_published_limit(f->srv, NULL, NULL, &bytes);
    assert_int_equal(bytes, FR_PUBLISHED_DEFAULT_MAX * (2 + 1024));
    assert_memory_equal(fr_published(f->srv, 0)->payload, "0010000", 7);
    assert_memory_equal(fr_published(f->srv, FR_PUBLISHED_DEFAULT_MAX - 1)->payload, "0019999", 7);
    /* and a bound in bytes below that: 16 KiB keep 15 of them */
    fr_published_set_limit(f->srv, FR_PUBLISHED_DEFAULT_MAX, 16 * 1024);
    assert_int_equal(fr_published_count(f->srv), 15);
    assert_memory_equal(fr_published(f->srv, 14)->payload, "0019999", 7);
}

/* fr_db_counts: live keys and those with a TTL, at the clock, changing nothing. */
static void test_db_counts(void **state)
{
    fixture *f = *state;
    size_t keys = 99, expires = 99;
    assert_int_equal(fr_db_counts(f->srv, 0, &keys, &expires), 0);
    assert_int_equal(keys, 0);
    assert_int_equal(expires, 0);
    resp(f->c, "SET a 1");
    resp(f->c, "SET b 1 PX 100");
    resp(f->c, "SET c 1 PX 10");
    resp(f->c, "SELECT 3");
    resp(f->c, "RPUSH l x");
    uint64_t executed = fr_server_commands_executed(f->srv);
    assert_int_equal(fr_db_counts(f->srv, 0, &keys, &expires), 0);
    assert_int_equal(keys, 3);
    assert_int_equal(expires, 2);
    fr_clock_advance(f->srv, 11); /* c's deadline passed: gone from the counts */
    assert_int_equal(fr_db_counts(f->srv, 0, &keys, &expires), 0);
    assert_int_equal(keys, 2);
    assert_int_equal(expires, 1);
    assert_int_equal(fr_db_counts(f->srv, 3, &keys, NULL), 0);
    assert_int_equal(keys, 1);
    assert_int_equal(fr_db_counts(f->srv, 16, &keys, &expires), -1);
    assert_int_equal(fr_db_counts(f->srv, -1, NULL, NULL), -1);
    assert_int_equal(fr_server_commands_executed(f->srv), executed);
}

/* fr_client_flag_transaction dooms an open MULTI as a queue-time refusal does. */
static void test_flag_transaction(void **state)
{
    fixture *f = *state;
    fr_client_flag_transaction(f->c); /* outside MULTI: nothing */
    assert_string_equal(resp(f->c, "MULTI"), "+OK\r\n");
    assert_string_equal(resp(f->c, "SET k v"), "+QUEUED\r\n");
    fr_client_flag_transaction(f->c);
    assert_string_equal(resp(f->c, "EXEC"),
                        "-EXECABORT Transaction discarded because of previous errors.\r\n");
    assert_string_equal(resp(f->c, "EXISTS k"), ":0\r\n");
    assert_string_equal(resp(f->c, "MULTI"), "+OK\r\n");
    assert_string_equal(resp(f->c, "SET k v"), "+QUEUED\r\n");
    assert_string_equal(resp(f->c, "EXEC"), "*1\r\n+OK\r\n");
}

/* The legacy key specs of COMMAND INFO, from the table. */
static void test_command_keys_info(void **state)
{
    (void)state;
    int seen = 0;
    for (size_t i = 0; i < fr_command_count(); i++) {
        const fr_command_info *ci = fr_command_at(i);
        if (strcmp(ci->name, "get") == 0) {
            assert_int_equal(ci->first_key, 1);
            assert_int_equal(ci->last_key, 1);
            assert_int_equal(ci->key_step, 1);
            assert_int_equal(ci->movable_keys, 0);
            seen++;
        } else if (strcmp(ci->name, "mset") == 0) {
            assert_int_equal(ci->first_key, 1);
            assert_int_equal(ci->last_key, -1);
            assert_int_equal(ci->key_step, 2);
            seen++;
        } else if (strcmp(ci->name, "xread") == 0) {
            assert_int_equal(ci->first_key, 0);
            assert_int_equal(ci->movable_keys, 1);
            seen++;
        } else if (strcmp(ci->name, "ping") == 0) {
            assert_int_equal(ci->first_key, 0);
            assert_int_equal(ci->last_key, 0);
            assert_int_equal(ci->key_step, 0);
            seen++;
        }
    }
    assert_int_equal(seen, 4);
}

static void test_command_table(void **state)
{
    (void)state;
    size_t n = fr_command_count();
    assert_true(n > 50);
    int seen_get = 0, seen_keyslot = 0;
    for (size_t i = 0; i < n; i++) {
        const fr_command_info *ci = fr_command_at(i);
        assert_non_null(ci);
        assert_non_null(ci->name);
        assert_non_null(ci->group);
        if (strcmp(ci->name, "get") == 0) {
            seen_get = 1;
            assert_int_equal(ci->arity, 2);
            assert_string_equal(ci->group, "string");
        }
        if (strcmp(ci->name, "cluster|keyslot") == 0) seen_keyslot = 1;
    }
    assert_true(seen_get);
    assert_true(seen_keyslot);
    assert_null(fr_command_at(n));
}

static void test_dump_format(void **state)
{
    fixture *f = *state;
    fake_setup(f->c, (const char *const[]){"SET b \"two\\nlines\"", "RPUSH a x y",
                                          "HSET h f2 v2 f1 v1", "SADD s m2 m1",
                                          "ZADD z 2 two 1 one", "PEXPIRE a 1500", "SELECT 2",
                                          "SET \"\\x00k\" v", NULL});
    char *d = fr_dump(f->srv, NULL);
    assert_string_equal(d, "# fakeredis dump v1\n"
                           "db 0 keys 5\n"
                           "\"a\" list pttl=1500\n  \"x\"\n  \"y\"\n"
                           "\"b\" string\n  \"two\\nlines\"\n"
                           "\"h\" hash\n  \"f1\" \"v1\"\n  \"f2\" \"v2\"\n"
                           "\"s\" set\n  \"m1\"\n  \"m2\"\n"
                           "\"z\" zset\n  \"one\" 1\n  \"two\" 2\n"
                           "db 2 keys 1\n"
                           "\"\\x00k\" string\n  \"v\"\n");
    free(d);

    /* the same keyspace built in another order dumps the same */
    fr_server *s2 = fr_server_new(NULL);
    fr_client *c2 = fr_client_new(s2);
    fake_setup(c2, (const char *const[]){"SELECT 2", "SET \"\\x00k\" v", "SELECT 0",
                                        "ZADD z 1 one 2 two", "SADD s m1 m2",
                                        "HSET h f1 v1 f2 v2", "SET b \"two\\nlines\"",
                                        "RPUSH a x y", "PEXPIRE a 1500", NULL});
    char *d1 = fr_dump(f->srv, NULL), *d2 = fr_dump(s2, NULL);
    assert_string_equal(d1, d2);
    free(d1);
    free(d2);
    fr_server_free(s2);
}

static void test_determinism_of_random_commands(void **state)
{
    (void)state;
    char out[2][4096];
    for (int run = 0; run < 2; run++) {
        fr_config cfg = fr_config_default();
        cfg.seed = 99;
        fr_server *s = fr_server_new(&cfg);
        fr_client *c = fr_client_new(s);
        resp(c, "SADD s a b c d e f g h i j");
        out[run][0] = '\0';
        for (int i = 0; i < 5; i++) strcat(out[run], resp(c, "SRANDMEMBER s 3"));
        strcat(out[run], resp(c, "SPOP s 4"));
        fr_server_free(s);
    }
    assert_string_equal(out[0], out[1]);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        FAKE_TEST(test_reply_tree),
        FAKE_TEST(test_exec_binary_args),
        FAKE_TEST(test_encode_roundtrip_and_truncation),
        FAKE_TEST(test_pipeline),
        cmocka_unit_test(test_split_line),
        cmocka_unit_test(test_split_args),
        FAKE_TEST(test_unbalanced_quotes_reply),
        cmocka_unit_test(test_server_reset),
        FAKE_TEST(test_clock),
        FAKE_TEST(test_expiry_on_virtual_clock),
        FAKE_TEST(test_watch_sees_expiry),
        FAKE_TEST(test_client_state),
        FAKE_TEST(test_quit),
        FAKE_TEST(test_fault_nth),
        FAKE_TEST(test_fault_by_name_inside_exec),
        FAKE_TEST(test_fault_on_exec_itself),
        FAKE_TEST(test_published_log),
        FAKE_TEST(test_published_log_bounded),
        cmocka_unit_test(test_command_table),
        cmocka_unit_test(test_command_keys_info),
        FAKE_TEST(test_db_counts),
        FAKE_TEST(test_flag_transaction),
        FAKE_TEST(test_dump_format),
        cmocka_unit_test(test_determinism_of_random_commands),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
