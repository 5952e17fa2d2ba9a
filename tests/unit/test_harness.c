/* test_harness.c -- the test harness itself: the real redis-server it starts, the RESP
 * framing of rh_read_reply, the .redis script parser and the reply comparison.
 *
 * These tests need redis-server (Debian package redis-server) and FAIL without it: a
 * differential test that silently skips proves nothing.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "diff_script.h"
#include "redis_harness.h"

/* Asserts that raw holds exactly the bytes of the string literal want. */
#define assert_raw(raw, want)                                                    \
    do {                                                                         \
        assert_int_equal((raw).len, sizeof(want) - 1);                           \
        assert_memory_equal((raw).data, (want), sizeof(want) - 1);               \
    } while (0)

static rh_server *start_quiet(int cluster) {
    rh_options opt = {0};
    opt.cluster = cluster;
    opt.quiet = 1;
    rh_server *srv = rh_start(&opt);
    if (!srv) fail_msg("cannot start redis-server (see stderr)");
    return srv;
}

/* ----- The server and raw replies ----------------------------------------------------- */

static void test_ping(void **state) {
    (void)state;
    rh_server *srv = start_quiet(0);
    rh_conn *c = rh_connect(srv);
    assert_non_null(c);
    rh_buf raw = {0};
    char *argv[] = {"PING"};
    assert_int_equal(rh_send(c, 1, argv, NULL), 0);
    assert_int_equal(rh_read_reply(c, &raw), 0);
    assert_raw(raw, "+PONG\r\n");

    /* The directory exists while the server runs and is gone after rh_stop. */
    char dir[sizeof srv->dir];
    memcpy(dir, srv->dir, sizeof dir);
    assert_int_equal(access(dir, F_OK), 0);
    rh_buf_free(&raw);
    rh_close(c);
    rh_stop(srv);
    assert_int_not_equal(access(dir, F_OK), 0);
}

/* Every kind of RESP2 reply comes back whole, and the next reply starts right after it. */
static void test_reply_framing(void **state) {
    (void)state;
    rh_server *srv = start_quiet(0);
    rh_conn *c = rh_connect(srv);
    assert_non_null(c);
    rh_buf raw = {0};

    /* A flat array of ten bulk strings, in hash-table order. */
    assert_int_equal(rh_call(c, &raw, "CONFIG", "GET", "maxmemory*", NULL), 0);
    assert_true(raw.len > 5);
    assert_memory_equal(raw.data, "*10\r\n", 5);
    assert_non_null(strstr(raw.data, "$16\r\nmaxmemory-policy\r\n$10\r\nnoeviction\r\n"));
    assert_memory_equal(raw.data + raw.len - 2, "\r\n", 2);
    /* As a multiset it equals the same pairs in another order. */
    rh_buf sorted = {0};
    assert_int_equal(ds_sort_reply(raw.data, raw.len, &sorted), 0);
    assert_int_equal(sorted.len, raw.len);
    rh_buf_free(&sorted);

    /* A nested array (arrays of arrays of arrays). */
    assert_int_equal(rh_call(c, &raw, "COMMAND", "INFO", "get", NULL), 0);
    static const char head[] = "*1\r\n*10\r\n$3\r\nget\r\n:2\r\n*";
    assert_memory_equal(raw.data, head, sizeof head - 1);
    assert_memory_equal(raw.data + raw.len - 2, "\r\n", 2);

    assert_int_equal(rh_call(c, &raw, "GET", "missing", NULL), 0);
    assert_raw(raw, "$-1\r\n");
    assert_int_equal(rh_call(c, &raw, "BLPOP", "missing", "0.01", NULL), 0);
    assert_raw(raw, "*-1\r\n");
    assert_int_equal(rh_call(c, &raw, "EXEC", NULL), 0);
    assert_raw(raw, "-ERR EXEC without MULTI\r\n");
    assert_int_equal(rh_call(c, &raw, "DBSIZE", NULL), 0);
    assert_raw(raw, ":0\r\n");
    assert_int_equal(rh_call(c, &raw, "LRANGE", "missing", "0", "-1", NULL), 0);
    assert_raw(raw, "*0\r\n");

    /* Binary-safe arguments and a reply containing \r\n and NUL inside a bulk. */
    char *argv[] = {"ECHO", "a\r\n\0b"};
    size_t lens[] = {4, 5};
    assert_int_equal(rh_send(c, 2, argv, lens), 0);
    assert_int_equal(rh_read_reply(c, &raw), 0);
    assert_raw(raw, "$5\r\na\r\n\0b\r\n");

    /* A large bulk reply, which arrives in many reads. */
    size_t big = 3u << 20;
    char *payload = malloc(big);
    assert_non_null(payload);
    memset(payload, 'x', big);
    char *argv2[] = {"ECHO", payload};
    size_t lens2[] = {4, big};
    assert_int_equal(rh_send(c, 2, argv2, lens2), 0);
    assert_int_equal(rh_read_reply(c, &raw), 0);
    assert_int_equal(raw.len, big + strlen("$3145728\r\n") + 2);
    free(payload);

    /* Pipelined: three replies are read one at a time, each exactly. */
    char *p1[] = {"PING"};
    char *p2[] = {"ECHO", "two"};
    char *p3[] = {"CONFIG", "GET", "maxmemory"};
    assert_int_equal(rh_send(c, 1, p1, NULL), 0);
    assert_int_equal(rh_send(c, 2, p2, NULL), 0);
    assert_int_equal(rh_send(c, 3, p3, NULL), 0);
    assert_int_equal(rh_read_reply(c, &raw), 0);
    assert_raw(raw, "+PONG\r\n");
    assert_int_equal(rh_read_reply(c, &raw), 0);
    assert_raw(raw, "$3\r\ntwo\r\n");
    assert_int_equal(rh_read_reply(c, &raw), 0);
    assert_raw(raw, "*2\r\n$9\r\nmaxmemory\r\n$1\r\n0\r\n");

    /* After QUIT the server closes the connection: a read fails instead of hanging. */
    assert_int_equal(rh_call(c, &raw, "QUIT", NULL), 0);
    assert_raw(raw, "+OK\r\n");
    assert_int_equal(rh_read_reply(c, &raw), -1);
    assert_string_not_equal(rh_conn_error(c), "");

    rh_buf_free(&raw);
    rh_close(c);
    rh_stop(srv);
}

static void test_cluster_start(void **state) {
    (void)state;
    rh_server *srv = start_quiet(1);
    assert_true(srv->cluster);
    assert_true(srv->port > 0);
    rh_conn *c = rh_connect(srv);
    assert_non_null(c);
    rh_buf raw = {0};
    assert_int_equal(rh_call(c, &raw, "CLUSTER", "INFO", NULL), 0);
    assert_non_null(strstr(raw.data, "cluster_state:ok"));
    assert_int_equal(rh_call(c, &raw, "SELECT", "1", NULL), 0);
    assert_raw(raw, "-ERR SELECT is not allowed in cluster mode\r\n");
    rh_buf_free(&raw);
    rh_close(c);
    rh_stop(srv);
}

/* A missing or broken binary is a failure with a message, never a hang or a crash. */
static void test_start_failures(void **state) {
    (void)state;
    const char *old_path = getenv("PATH");
    char *saved = old_path ? strdup(old_path) : NULL;
    setenv("PATH", "/nonexistent-wsim", 1);
    assert_null(rh_start(NULL));
    if (saved) setenv("PATH", saved, 1);
    free(saved);

    setenv("WSIM_REDIS_SERVER", "/bin/false", 1);
    assert_null(rh_start(NULL));
    setenv("WSIM_REDIS_SERVER", "/nonexistent-wsim/redis-server", 1);
    assert_null(rh_start(NULL));
    unsetenv("WSIM_REDIS_SERVER");
}

/* ----- The script parser ---------------------------------------------------------------- */

static void test_parse_good_lines(void **state) {
    (void)state;
    ds_line l;
    ds_error err;

    assert_int_equal(ds_parse_line("", 1, &l, &err), 0);
    assert_int_equal(ds_parse_line("   \t ", 1, &l, &err), 0);
    assert_int_equal(ds_parse_line("# a comment", 1, &l, &err), 0);
    assert_int_equal(ds_parse_line("   # indented comment", 1, &l, &err), 0);

    assert_int_equal(ds_parse_line("SET k v", 3, &l, &err), 1);
    assert_int_equal(l.kind, DS_COMMAND);
    assert_int_equal(l.lineno, 3);
    assert_int_equal(l.client, 1);
    assert_int_equal(l.flags, 0);
    assert_int_equal(l.argc, 3);
    assert_string_equal(l.argv[0], "SET");
    assert_string_equal(l.argv[2], "v");
    assert_string_equal(l.text, "SET k v");
    ds_line_free(&l);

    /* Modifiers in any order, CRLF line ending, quoting like redis-cli. */
    assert_int_equal(ds_parse_line("  @sorted <3> @type SMEMBERS \"a b\" '\\'' \"\\x00\\xff\"\r",
                                   7, &l, &err), 1);
    assert_int_equal(l.client, 3);
    assert_int_equal(l.flags, DS_SORTED | DS_TYPE);
    assert_int_equal(l.argc, 4);
    assert_string_equal(l.argv[1], "a b");
    assert_string_equal(l.argv[2], "'");
    assert_int_equal(l.argvlen[3], 2);
    assert_memory_equal(l.argv[3], "\x00\xff", 2);
    assert_string_equal(l.text, "@sorted <3> @type SMEMBERS \"a b\" '\\'' \"\\x00\\xff\"");
    ds_line_free(&l);

    assert_int_equal(ds_parse_line("<8> @fake PING", 1, &l, &err), 1);
    assert_int_equal(l.client, 8);
    assert_int_equal(l.flags, DS_FAKE);
    ds_line_free(&l);

    /* A quoted "@x" or "<2>" is a command name, not a modifier. */
    assert_int_equal(ds_parse_line("\"@sorted\" x", 1, &l, &err), 1);
    assert_int_equal(l.flags, 0);
    assert_string_equal(l.argv[0], "@sorted");
    ds_line_free(&l);

    assert_int_equal(ds_parse_line("!sleep 250", 1, &l, &err), 1);
    assert_int_equal(l.kind, DS_SLEEP);
    assert_int_equal(l.sleep_ms, 250);
    ds_line_free(&l);

    assert_int_equal(ds_parse_line("!cluster", 1, &l, &err), 1);
    assert_int_equal(l.kind, DS_CLUSTER);
    ds_line_free(&l);

    assert_int_equal(ds_parse_line("  !config maxmemory-policy  allkeys-lfu ", 1, &l, &err), 1);
    assert_int_equal(l.kind, DS_CONFIG);
    assert_int_equal(l.argc, 2);
    assert_string_equal(l.argv[0], "maxmemory-policy");
    assert_string_equal(l.argv[1], "allkeys-lfu");
    assert_int_equal(l.argvlen[1], 11);
    ds_line_free(&l);

    assert_int_equal(ds_parse_line("!events", 1, &l, &err), 1);
    assert_int_equal(l.kind, DS_EVENTS);
    ds_line_free(&l);

    assert_int_equal(ds_parse_line("!dumprestore src dst 0 REPLACE ABSTTL", 1, &l, &err), 1);
    assert_int_equal(l.kind, DS_DUMPRESTORE);
    assert_int_equal(l.argc, 5);
    assert_string_equal(l.argv[0], "src");
    assert_string_equal(l.argv[2], "0");
    assert_string_equal(l.argv[4], "ABSTTL");
    ds_line_free(&l);
}

/* Expects line to be rejected at column col with a message containing what. */
static void expect_error(const char *line, int col, const char *what) {
    ds_line l;
    ds_error err;
    int rc = ds_parse_line(line, 1, &l, &err);
    if (rc != -1) fail_msg("accepted: %s", line);
    if (err.col != col || !strstr(err.msg, what)) {
        fail_msg("%s\n  got col %d \"%s\", want col %d \"%s\"", line, err.col, err.msg, col,
                 what);
    }
}

static void test_parse_bad_lines(void **state) {
    (void)state;
    expect_error("ECHO \"abc", 6, "unbalanced");
    expect_error("ECHO 'abc", 6, "unbalanced");
    expect_error("  ECHO x \"a\\\"", 10, "unbalanced");
    expect_error("ECHO \"abc\"def", 11, "closing quote");
    expect_error("ECHO 'abc'def", 11, "closing quote");
    expect_error("<9> PING", 1, "bad client");
    expect_error("<0> PING", 1, "bad client");
    expect_error("<x> PING", 1, "bad client");
    expect_error("<1> <2> PING", 5, "more than one client");
    expect_error("  @bogus PING", 3, "unknown modifier");
    expect_error("@sorted", 8, "without a command");
    expect_error("<2> !sleep 1", 5, "cannot have modifiers");
    expect_error("!sleep", 7, "needs a number");
    expect_error("!sleep x", 8, "milliseconds");
    expect_error("!sleep -1", 8, "milliseconds");
    expect_error("!sleep 99999999", 8, "milliseconds");
    expect_error("!sleep 1 2", 10, "one argument");
    expect_error("!cluster now", 10, "no argument");
    expect_error("!wait 5", 1, "unknown directive");
    expect_error("!events now", 9, "!events takes no argument");
    expect_error("!dumprestore a b", 14, "needs SRC DST TTL");
    expect_error("!config", 8, "name and a value");
    expect_error("!config hz", 11, "name and a value");
    expect_error("!config hz 10 20", 15, "two arguments");
    expect_error("<2> !config hz 10", 5, "cannot have modifiers");
}

static void test_parse_script(void **state) {
    (void)state;
    const char *good = "!cluster\n# comment\n\nPING\n<2> GET k\n!sleep 5\n@sorted KEYS *";
    ds_script *s = ds_parse_text("good.redis", good, strlen(good), NULL);
    assert_non_null(s);
    assert_true(s->cluster);
    assert_int_equal(s->nclients, 2);
    assert_int_equal(s->count, 4);
    assert_int_equal(s->lines[0].lineno, 4);
    assert_int_equal(s->lines[1].client, 2);
    assert_int_equal(s->lines[2].kind, DS_SLEEP);
    assert_int_equal(s->lines[3].flags, DS_SORTED);
    assert_int_equal(s->lines[3].lineno, 7);
    ds_script_free(s);

    /* Every error is reported as file:line:col, and the script is rejected. */
    const char *bad = "PING\n!cluster\nECHO \"x\n";
    char *out = NULL;
    size_t outlen = 0;
    FILE *f = open_memstream(&out, &outlen);
    assert_non_null(f);
    assert_null(ds_parse_text("bad.redis", bad, strlen(bad), f));
    fclose(f);
    assert_non_null(strstr(out, "bad.redis:2:1: error: !cluster must come before"));
    assert_non_null(strstr(out, "bad.redis:3:6: error: unbalanced quotes"));
    free(out);

    /* A NUL byte in the file is an error, not a silently truncated line. */
    const char nul[] = "PING\nECHO a\0b\n";
    assert_null(ds_parse_text("nul.redis", nul, sizeof nul - 1, NULL));
}

/* ----- Comparison ------------------------------------------------------------------------- */

static void test_compare(void **state) {
    (void)state;
    const char a[] = "*3\r\n$1\r\nb\r\n*2\r\n:2\r\n:1\r\n$1\r\na\r\n";
    const char b[] = "*3\r\n*2\r\n:1\r\n:2\r\n$1\r\na\r\n$1\r\nb\r\n";
    assert_false(ds_replies_equal(0, a, sizeof a - 1, b, sizeof b - 1));
    assert_true(ds_replies_equal(DS_SORTED, a, sizeof a - 1, b, sizeof b - 1));
    assert_true(ds_replies_equal(DS_TYPE, a, sizeof a - 1, "*0\r\n", 4));
    assert_false(ds_replies_equal(DS_TYPE, a, sizeof a - 1, "$-1\r\n", 5));
    assert_false(ds_replies_equal(DS_SORTED, "*2\r\n:1\r\n:1\r\n", 12, "*2\r\n:1\r\n:2\r\n", 12));

    /* @near: integers within DS_NEAR_MS at any depth, everything else exact */
    const char n1[] = "*3\r\n$1\r\nc\r\n:1000\r\n*1\r\n:5\r\n";
    const char n2[] = "*3\r\n$1\r\nc\r\n:1020\r\n*1\r\n:0\r\n";
    const char n3[] = "*3\r\n$1\r\nc\r\n:1026\r\n*1\r\n:5\r\n";
    const char n4[] = "*3\r\n$1\r\nd\r\n:1000\r\n*1\r\n:5\r\n";
    assert_true(ds_replies_equal(DS_NEAR, n1, sizeof n1 - 1, n2, sizeof n2 - 1));
    assert_false(ds_replies_equal(DS_NEAR, n1, sizeof n1 - 1, n3, sizeof n3 - 1));
    assert_false(ds_replies_equal(DS_NEAR, n1, sizeof n1 - 1, n4, sizeof n4 - 1));
    assert_false(ds_replies_equal(DS_NEAR, ":1\r\n", 4, "$1\r\n1\r\n", 7));
    assert_false(ds_replies_equal(DS_NEAR, "*2\r\n:1\r\n:1\r\n", 12, "*1\r\n:1\r\n", 8));
    assert_true(ds_replies_equal(DS_NEAR, "-ERR x\r\n", 8, "-ERR x\r\n", 8));
    assert_true(ds_replies_equal(DS_SORTED, "*-1\r\n", 5, "*-1\r\n", 5));

    rh_buf out = {0};
    assert_int_equal(ds_sort_reply(a, sizeof a - 1, &out), 0);
    assert_raw(out, "*3\r\n$1\r\na\r\n$1\r\nb\r\n*2\r\n:1\r\n:2\r\n");
    rh_buf_reset(&out);
    assert_int_equal(ds_sort_reply("*2\r\n:1\r\n", 8, &out), -1); /* truncated */
    assert_int_equal(out.len, 0);

    static const char esc[] = "$2\r\n\x00\xff\\ok\t";
    ds_escape(esc, sizeof esc - 1, &out);
    assert_string_equal(out.data, "$2\\r\\n\\x00\\xff\\\\ok\\t");
    rh_buf_free(&out);
}

/* @idle: only the idle time of a four-element entry ending with two integers is loose. */
static void test_compare_idle(void **state) {
    (void)state;
    /* XREADGROUP ... CLAIM: [[key, [[id, fields, idle, count]]]] */
    const char c1[] = "*1\r\n*2\r\n$1\r\ns\r\n*1\r\n*4\r\n$3\r\n1-0\r\n*2\r\n$1\r\nf\r\n"
                      "$1\r\nv\r\n:300\r\n:2\r\n";
    const char c2[] = "*1\r\n*2\r\n$1\r\ns\r\n*1\r\n*4\r\n$3\r\n1-0\r\n*2\r\n$1\r\nf\r\n"
                      "$1\r\nv\r\n:318\r\n:2\r\n";
    const char c3[] = "*1\r\n*2\r\n$1\r\ns\r\n*1\r\n*4\r\n$3\r\n1-0\r\n*2\r\n$1\r\nf\r\n"
                      "$1\r\nv\r\n:300\r\n:3\r\n"; /* another delivery count */
    const char c4[] = "*1\r\n*2\r\n$1\r\ns\r\n*1\r\n*4\r\n$3\r\n1-0\r\n*2\r\n$1\r\nf\r\n"
                      "$1\r\nv\r\n:326\r\n:2\r\n"; /* 26 ms off */
    assert_true(ds_replies_equal(DS_IDLE, c1, sizeof c1 - 1, c2, sizeof c2 - 1));
    assert_false(ds_replies_equal(DS_IDLE, c1, sizeof c1 - 1, c3, sizeof c3 - 1));
    assert_false(ds_replies_equal(DS_IDLE, c1, sizeof c1 - 1, c4, sizeof c4 - 1));
    assert_true(ds_replies_equal(DS_NEAR, c1, sizeof c1 - 1, c3, sizeof c3 - 1));
    /* XPENDING's entries too; other integers exactly */
    const char p1[] = "*4\r\n$1\r\na\r\n$1\r\nb\r\n:10\r\n:1\r\n";
    const char p2[] = "*4\r\n$1\r\na\r\n$1\r\nb\r\n:0\r\n:1\r\n";
    const char t1[] = "*3\r\n:10\r\n:1\r\n:1\r\n";
    const char t2[] = "*3\r\n:0\r\n:1\r\n:1\r\n";
    const char s1[] = "*4\r\n$1\r\na\r\n$1\r\nb\r\n:10\r\n$1\r\n1\r\n";
    const char s2[] = "*4\r\n$1\r\na\r\n$1\r\nb\r\n:0\r\n$1\r\n1\r\n";
    assert_true(ds_replies_equal(DS_IDLE, p1, sizeof p1 - 1, p2, sizeof p2 - 1));
    assert_false(ds_replies_equal(DS_IDLE, t1, sizeof t1 - 1, t2, sizeof t2 - 1));
    assert_false(ds_replies_equal(DS_IDLE, ":10\r\n", 5, ":0\r\n", 4));
    assert_false(ds_replies_equal(DS_IDLE, s1, sizeof s1 - 1, s2, sizeof s2 - 1));
}

/* @len: only the first line counts: an array's or a bulk string's length, an error, an
 * integer or a status as a whole. */
static void test_compare_len(void **state) {
    (void)state;
    const char a1[] = "*2\r\n$1\r\na\r\n$1\r\nb\r\n";
    const char a2[] = "*2\r\n$2\r\nbb\r\n$1\r\nc\r\n";
    const char a3[] = "*3\r\n$1\r\na\r\n$1\r\nb\r\n$1\r\nc\r\n";
    assert_true(ds_replies_equal(DS_LEN, a1, sizeof a1 - 1, a2, sizeof a2 - 1));
    assert_false(ds_replies_equal(DS_LEN, a1, sizeof a1 - 1, a3, sizeof a3 - 1));
    assert_true(ds_replies_equal(DS_LEN, "$1\r\na\r\n", 7, "$1\r\nb\r\n", 7));
    assert_false(ds_replies_equal(DS_LEN, "$1\r\na\r\n", 7, "$2\r\nab\r\n", 8));
    assert_false(ds_replies_equal(DS_LEN, ":1\r\n", 4, ":2\r\n", 4));
    assert_false(ds_replies_equal(DS_LEN, "-ERR a\r\n", 8, "-ERR b\r\n", 8));
    assert_false(ds_replies_equal(DS_LEN, "*1\r\n", 4, "", 0));
    ds_line l;
    ds_error err;
    assert_int_equal(ds_parse_line("@len SRANDMEMBER s -5", 1, &l, &err), 1);
    assert_int_equal(l.flags, DS_LEN);
    ds_line_free(&l);
}

/* Transcripts: "= reply" lines after commands, unescaped into ds_line.expected. */
static void test_parse_transcript(void **state) {
    (void)state;
    const char good[] = "# t\n@idle XPENDING s g\n= *0\\r\\n\n!sleep 5\nGET \"k\"\n"
                        "  = $2\\r\\n\\x00\\\\\\r\\n\nPING\n";
    ds_script *s = ds_parse_text("t.transcript", good, strlen(good), NULL);
    assert_non_null(s);
    assert_int_equal(s->count, 4);
    assert_true(s->lines[0].has_expected);
    assert_int_equal(s->lines[0].flags, DS_IDLE);
    assert_int_equal(s->lines[0].expected_len, 4);
    assert_memory_equal(s->lines[0].expected, "*0\r\n", 4);
    assert_true(s->lines[2].has_expected);
    assert_int_equal(s->lines[2].expected_len, 8);
    assert_memory_equal(s->lines[2].expected, "$2\r\n\0\\\r\n", 8);
    assert_false(s->lines[3].has_expected);
    ds_script_free(s);

    const char *bad[] = {
        "= +OK\\r\\n\n",                 /* nothing before it */
        "PING\n\n= +PONG\\r\\n\n",       /* not right after its command */
        "PING\n= +PONG\\r\\n\n= +PONG\n", /* twice */
        "PING\n= +PONG\\q\n",             /* bad escape */
        "PING\n= \\x4\n",                 /* short \xHH */
        "!sleep 1\n= +OK\n",               /* after a directive */
    };
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++)
        assert_null(ds_parse_text("bad.transcript", bad[i], strlen(bad[i]), NULL));

    rh_buf out = {0};
    size_t at = 0;
    assert_int_equal(ds_unescape("a\\tb\\xffc", 9, &out, &at), 0);
    assert_raw(out, "a\tb\xff" "c");
    rh_buf_reset(&out);
    assert_int_equal(ds_unescape("ab\\", 3, &out, &at), -1);
    assert_int_equal(at, 2);
    rh_buf_free(&out);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_ping),
        cmocka_unit_test(test_reply_framing),
        cmocka_unit_test(test_cluster_start),
        cmocka_unit_test(test_start_failures),
        cmocka_unit_test(test_parse_good_lines),
        cmocka_unit_test(test_parse_bad_lines),
        cmocka_unit_test(test_parse_script),
        cmocka_unit_test(test_compare),
        cmocka_unit_test(test_compare_idle),
        cmocka_unit_test(test_compare_len),
        cmocka_unit_test(test_parse_transcript),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
