/* server_record.c -- fakeredis-server's recording (--record FILE, FAKE.RECORD START|STOP|
 * STATUS; docs/recording.md), the version it claims (--redis-version) and the virtual
 * clock that moves itself (--clock auto), against the binary.
 *
 * The recording of a scripted session is compared whole with what it must be: each
 * connection's open and close (and why), each command with its batch (a pipeline shares
 * one), the MULTI flag, the connection's name, the exact reply bytes, a blocked command's
 * wait and its completion after the command that served it, a push to a subscriber, a
 * reply CLIENT REPLY OFF dropped, the end line; and the commands scripts ran.  The clock is
 * virtual, so every line is known in advance. */
#include <errno.h>
#include <poll.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "frs_harness.h"

/* The harness's forms, under the short names the tests use (frs_harness.h). */
#define EXPECT FRSH_EXPECT
#define CALL FRSH_CALL
#define start(extra) frsh_start_ok(extra)
#define stop(s) frsh_stop_ok(s)

/* A directory of this test's own (the harness removes its directory with the server). */
static char dir[64];

static int make_dir(void **state)
{
    (void)state;
    snprintf(dir, sizeof dir, "/tmp/server_record.XXXXXX");
    return mkdtemp(dir) ? 0 : -1;
}

static int remove_dir(void **state)
{
    (void)state;
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    return system(cmd) == 0 ? 0 : -1;
}

static char *file_text(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    char *buf = calloc(1, 1 << 20);
    size_t n = fread(buf, 1, (1 << 20) - 1, f);
    buf[n] = '\0';
    fclose(f);
    return buf;
}

/* Waits (bounded) until the file holds needle: the server writes its lines once per loop
 * turn, so a line is there soon after the command ran. */
static void wait_for_line(const char *path, const char *needle)
{
    for (int i = 0; i < 500; i++) {
        char *t = file_text(path);
        int found = t && strstr(t, needle);
        free(t);
        if (found) return;
        frsh_sleep_ms(10);
    }
    fail_msg("%s never showed '%s'", path, needle);
}

#define same_text frsh_same_text

/* The first lines of a recording of fakeredis-server --clock virtual. */
#define HEAD \
    "wsim-recording 1\n" \
    "meta source \"fakeredis-server 0.1.0\"\n" \
    "meta redis-version 7.0.15\n" \
    "meta clock virtual\n" \
    "meta seed 1\n"

/* A server on the virtual clock recording from the start into dir/name (its path in
 * path[cap]). */
static frsh_server *start_recording(const char *name, char *path, size_t cap)
{
    snprintf(path, cap, "%s/%s", dir, name);
    const char *const extra[] = {"--clock", "virtual", "--record", path, NULL};
    return start(extra);
}

/* The whole session, recorded from the start (--record). */
static void test_record_session(void **state)
{
    (void)state;
    char path[128];
    frsh_server *s = start_recording("session.rec", path, sizeof path);
    rh_buf r = {0};
    frsh_conn *p = frsh_connect(s);
    frsh_conn *c = frsh_connect(s);
    frsh_window_session(p, c, "*", "1700000000000-0");
    /* blocked, then served by the producer */
    frsh_send(c, "BLPOP", "q", "0", NULL);
    wait_for_line(path, "wait 2 b=9 ");
    CALL(p, &r, ":1\r\n", "RPUSH", "q", "x");
    EXPECT(c, &r, "*2\r\n$1\r\nq\r\n$1\r\nx\r\n");
    /* a push to a subscriber */
    frsh_conn *sub = frsh_connect(s);
    CALL(sub, &r, "*3\r\n$9\r\nsubscribe\r\n$2\r\nch\r\n:1\r\n", "SUBSCRIBE", "ch");
    CALL(p, &r, ":1\r\n", "PUBLISH", "ch", "hi");
    EXPECT(sub, &r, "*3\r\n$7\r\nmessage\r\n$2\r\nch\r\n$2\r\nhi\r\n");
    /* replies CLIENT REPLY OFF drops */
    static const char off[] = "*3\r\n$6\r\nCLIENT\r\n$5\r\nREPLY\r\n$3\r\nOFF\r\n"
                              "*1\r\n$4\r\nPING\r\n"
                              "*3\r\n$6\r\nCLIENT\r\n$5\r\nREPLY\r\n$2\r\nON\r\n";
    frsh_send_raw(c, off, sizeof off - 1);
    EXPECT(c, &r, "+OK\r\n");
    CALL(c, &r, "+OK\r\n", "QUIT");
    frsh_expect_eof(c, NULL, 2000);
    frsh_close(c);
    frsh_close(sub);
    wait_for_line(path, "close 3 ");
    char sock[sizeof s->sock]; /* the recording names it; stop frees s */
    snprintf(sock, sizeof sock, "%s", s->sock);
    stop(s);
    frsh_close(p);

    char *got = file_text(path);
    assert_non_null(got);
    char want[8192];
    long pid = (long)getpid();
    snprintf(want, sizeof want,
             HEAD
             "open 1 t=1700000000000 addr=unix:%s pid=%ld\n"
             "open 2 t=1700000000000 addr=unix:%s pid=%ld\n"
             "cmd 1 b=1 t=1700000000000 m=0 name=producer CLIENT SETNAME producer => \"+OK\\r\\n\"\n"
             "cmd 1 b=2 t=1700000000000 m=0 name=producer XGROUP CREATE orders g $ MKSTREAM => \"+OK\\r\\n\"\n"
             "cmd 1 b=3 t=1700000000000 m=0 name=producer XADD orders * _payload \"o 1\" => "
             "\"$15\\r\\n1700000000000-0\\r\\n\"\n"
             "cmd 2 b=4 t=1700000000000 m=0 XREADGROUP GROUP g c COUNT 10 STREAMS orders > => "
             "\"*1\\r\\n*2\\r\\n$6\\r\\norders\\r\\n*1\\r\\n*2\\r\\n$15\\r\\n1700000000000-0\\r\\n*2\\r\\n"
             "$8\\r\\n_payload\\r\\n$3\\r\\no 1\\r\\n\"\n"
             "cmd 2 b=5 t=1700000000000 m=0 INCR n => \":1\\r\\n\"\n"
             "cmd 2 b=5 t=1700000000000 m=0 XACK orders g 1700000000000-0 => \":1\\r\\n\"\n"
             "cmd 2 b=6 t=1700000000000 m=0 MULTI => \"+OK\\r\\n\"\n"
             "cmd 2 b=7 t=1700000000000 m=1 INCR n => \"+QUEUED\\r\\n\"\n"
             "cmd 2 b=8 t=1700000000000 m=1 EXEC => \"*1\\r\\n:2\\r\\n\"\n"
             "wait 2 b=9 t=1700000000000 m=0 BLPOP q 0\n"
             "cmd 1 b=10 t=1700000000000 m=0 name=producer RPUSH q x => \":1\\r\\n\"\n"
             "cmd 2 b=9 t=1700000000000 m=0 since=1700000000000 BLPOP q 0 => "
             "\"*2\\r\\n$1\\r\\nq\\r\\n$1\\r\\nx\\r\\n\"\n"
             "open 3 t=1700000000000 addr=unix:%s pid=%ld\n"
             "cmd 3 b=11 t=1700000000000 m=0 SUBSCRIBE ch => "
             "\"*3\\r\\n$9\\r\\nsubscribe\\r\\n$2\\r\\nch\\r\\n:1\\r\\n\"\n"
             "cmd 1 b=12 t=1700000000000 m=0 name=producer PUBLISH ch hi => \":1\\r\\n\"\n"
             "push 3 t=1700000000000 => \"*3\\r\\n$7\\r\\nmessage\\r\\n$2\\r\\nch\\r\\n$2\\r\\nhi\\r\\n\"\n"
             "cmd 2 b=13 t=1700000000000 m=0 CLIENT REPLY OFF => \"\"\n"
             "cmd 2 b=13 t=1700000000000 m=0 PING => \"\"\n"
             "cmd 2 b=13 t=1700000000000 m=0 CLIENT REPLY ON => \"+OK\\r\\n\"\n"
             "cmd 2 b=14 t=1700000000000 m=0 QUIT => \"+OK\\r\\n\"\n"
             "close 2 t=1700000000000 why=quit\n"
             "close 3 t=1700000000000 why=peer\n"
             "close 1 t=1700000000000 why=shutdown\n"
             "end t=1700000000000\n",
             sock, pid, sock, pid, sock, pid);
    same_text(got, want);
    free(got);
    rh_buf_free(&r);
}

/* FAKE.RECORD at run time: the connections already open first, STATUS, the errors, and a
 * file of the user's never overwritten. */
static void test_record_command(void **state)
{
    (void)state;
    char path[128], mine[128];
    snprintf(path, sizeof path, "%s/live.rec", dir);
    snprintf(mine, sizeof mine, "%s/notes.txt", dir);
    FILE *f = fopen(mine, "w");
    fputs("my notes\n", f);
    fclose(f);
    const char *const extra[] = {"--clock", "virtual", NULL};
    frsh_server *s = start(extra);
    rh_buf r = {0};
    frsh_conn *a = frsh_connect(s), *b = frsh_connect(s);
    CALL(a, &r, "+OK\r\n", "CLIENT", "SETNAME", "early");
    CALL(a, &r, "*0\r\n", "FAKE.RECORD", "STATUS");
    CALL(a, &r, "-ERR not recording\r\n", "FAKE.RECORD", "STOP");
    char want[512];
    snprintf(want, sizeof want, "-ERR %s exists and is not a recording: not overwritten\r\n", mine);
    CALL(a, &r, want, "FAKE.RECORD", "START", mine);
    char *t = file_text(mine);
    assert_string_equal(t, "my notes\n");
    free(t);
    CALL(a, &r, "-ERR wrong number of arguments for 'fake.record|start' command\r\n",
         "FAKE.RECORD", "START");
    CALL(a, &r, "+OK\r\n", "FAKE.RECORD", "START", path);
    snprintf(want, sizeof want, "-ERR already recording to %s (FAKE.RECORD STOP first)\r\n", path);
    CALL(b, &r, want, "FAKE.RECORD", "START", path);
    CALL(b, &r, "+OK\r\n", "SET", "k", "v");
    frsh_send(a, "FAKE.RECORD", "STATUS", NULL);
    frsh_expect_reply(a, &r);
    assert_non_null(strstr(r.data, path));
    assert_non_null(strstr(r.data, "$6\r\nevents\r\n:"));
    CALL(a, &r, "+OK\r\n", "FAKE.RECORD", "STOP");
    CALL(b, &r, "+OK\r\n", "SET", "k", "w"); /* not recorded any more */
    char *got = file_text(path);
    long pid = (long)getpid();
    char expect[2048];
    snprintf(expect, sizeof expect,
             HEAD
             "open 1 t=1700000000000 addr=unix:%s pid=%ld name=early\n"
             "open 2 t=1700000000000 addr=unix:%s pid=%ld\n"
             "cmd 1 b=6 t=1700000000000 m=0 name=early FAKE.RECORD START %s => \"+OK\\r\\n\"\n"
             "cmd 2 b=7 t=1700000000000 m=0 FAKE.RECORD START %s => "
             "\"-ERR already recording to %s (FAKE.RECORD STOP first)\\r\\n\"\n"
             "cmd 2 b=8 t=1700000000000 m=0 SET k v => \"+OK\\r\\n\"\n"
             "cmd 1 b=9 t=1700000000000 m=0 name=early FAKE.RECORD STATUS => ",
             s->sock, pid, s->sock, pid, path, path, path);
    if (strncmp(got, expect, strlen(expect)) != 0) same_text(got, expect);
    assert_non_null(strstr(got, "\nend t=1700000000000\n"));
    assert_null(strstr(got, "SET k w"));
    free(got);
    frsh_close(a);
    frsh_close(b);
    stop(s);
    rh_buf_free(&r);
}

/* A script's commands: a call line each, with what the script got, before the line of the
 * command that ran the script (EVAL, or the EXEC that ran a queued EVAL); an error a script
 * caught with redis.pcall too.  The whole recording, compared. */
static void test_record_script_calls(void **state)
{
    (void)state;
    char path[128];
    frsh_server *s = start_recording("script.rec", path, sizeof path);
    rh_buf r = {0};
    frsh_conn *c = frsh_connect(s);
    CALL(c, &r, "+OK\r\n", "XGROUP", "CREATE", "s", "g", "$", "MKSTREAM");
    CALL(c, &r, "$15\r\n1700000000000-0\r\n", "XADD", "s", "*", "_payload", "a");
    CALL(c, &r, "*1\r\n*2\r\n$1\r\ns\r\n*1\r\n*2\r\n$15\r\n1700000000000-0\r\n*2\r\n"
                "$8\r\n_payload\r\n$1\r\na\r\n",
         "XREADGROUP", "GROUP", "g", "c1", "STREAMS", "s", ">");
    CALL(c, &r, ":1\r\n", "EVAL",
         "redis.call('INCRBY', KEYS[2], 5); return redis.call('XACK', KEYS[1], 'g', ARGV[1])",
         "2", "s", "total", "1700000000000-0");
    CALL(c, &r, ":1\r\n", "EVAL", "redis.pcall('LPUSH', KEYS[1], 'x'); return 1", "1", "total");
    CALL(c, &r, "+OK\r\n", "MULTI");
    CALL(c, &r, "+QUEUED\r\n", "EVAL", "return redis.call('SET', KEYS[1], 'v')", "1", "k");
    CALL(c, &r, "*1\r\n+OK\r\n", "EXEC");
    char sock[sizeof s->sock]; /* the recording names it; stop frees s */
    snprintf(sock, sizeof sock, "%s", s->sock);
    frsh_close(c);
    wait_for_line(path, "close 1 ");
    stop(s);
    rh_buf_free(&r);
    char *got = file_text(path);
    char want[4096];
    snprintf(want, sizeof want,
             HEAD
             "open 1 t=1700000000000 addr=unix:%s pid=%ld\n"
             "cmd 1 b=1 t=1700000000000 m=0 XGROUP CREATE s g $ MKSTREAM => \"+OK\\r\\n\"\n"
             "cmd 1 b=2 t=1700000000000 m=0 XADD s * _payload a => "
             "\"$15\\r\\n1700000000000-0\\r\\n\"\n"
             "cmd 1 b=3 t=1700000000000 m=0 XREADGROUP GROUP g c1 STREAMS s > => "
             "\"*1\\r\\n*2\\r\\n$1\\r\\ns\\r\\n*1\\r\\n*2\\r\\n$15\\r\\n"
             "1700000000000-0\\r\\n*2\\r\\n$8\\r\\n_payload\\r\\n$1\\r\\na\\r\\n\"\n"
             "call 1 b=4 t=1700000000000 INCRBY total 5 => \":5\\r\\n\"\n"
             "call 1 b=4 t=1700000000000 XACK s g 1700000000000-0 => \":1\\r\\n\"\n"
             "cmd 1 b=4 t=1700000000000 m=0 EVAL \"redis.call('INCRBY', KEYS[2], 5); return "
             "redis.call('XACK', KEYS[1], 'g', ARGV[1])\" 2 s total 1700000000000-0 => "
             "\":1\\r\\n\"\n"
             "call 1 b=5 t=1700000000000 LPUSH total x => \"-WRONGTYPE Operation against a key "
             "holding the wrong kind of value\\r\\n\"\n"
             "cmd 1 b=5 t=1700000000000 m=0 EVAL \"redis.pcall('LPUSH', KEYS[1], 'x'); return 1\" "
             "1 total => \":1\\r\\n\"\n"
             "cmd 1 b=6 t=1700000000000 m=0 MULTI => \"+OK\\r\\n\"\n"
             "cmd 1 b=7 t=1700000000000 m=1 EVAL \"return redis.call('SET', KEYS[1], 'v')\" 1 k => "
             "\"+QUEUED\\r\\n\"\n"
             "call 1 b=8 t=1700000000000 SET k v => \"+OK\\r\\n\"\n"
             "cmd 1 b=8 t=1700000000000 m=1 EXEC => \"*1\\r\\n+OK\\r\\n\"\n"
             "close 1 t=1700000000000 why=peer\n"
             "end t=1700000000000\n",
             sock, (long)getpid());
    same_text(got, want);
    free(got);
}

/* --record onto a file of the user's: the server does not start, the file is intact. */
static void test_record_refuses_a_users_file(void **state)
{
    (void)state;
    char mine[128];
    snprintf(mine, sizeof mine, "%s/keep.txt", dir);
    FILE *f = fopen(mine, "w");
    fputs("keep me\n", f);
    fclose(f);
    const char *const extra[] = {"--record", mine, NULL};
    frsh_server *s = frsh_start(extra);
    assert_null(s);
    char *t = file_text(mine);
    assert_string_equal(t, "keep me\n");
    free(t);
}

/* --redis-version: INFO's redis_version and HELLO's version; a bad one is refused. */
static void test_redis_version(void **state)
{
    (void)state;
    const char *const extra[] = {"--redis-version", "8.4.0", NULL};
    frsh_server *s = start(extra);
    rh_buf r = {0};
    frsh_conn *c = frsh_connect(s);
    frsh_call(c, &r, "INFO", "server", NULL);
    assert_non_null(strstr(r.data, "\r\nredis_version:8.4.0\r\n"));
    frsh_call(c, &r, "HELLO", "3", NULL);
    assert_non_null(strstr(r.data, "$7\r\nversion\r\n$5\r\n8.4.0\r\n"));
    frsh_close(c);
    stop(s);
    /* without it: the fake's own */
    s = start(NULL);
    c = frsh_connect(s);
    frsh_call(c, &r, "HELLO", NULL);
    assert_non_null(strstr(r.data, "$7\r\nversion\r\n$6\r\n7.0.15\r\n"));
    frsh_close(c);
    stop(s);
    static const char *const bad[] = {"8", "8.4.0.1", "8.x", "8..4", "8.4.", "", "123456.1"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        const char *const e[] = {"--redis-version", bad[i], NULL};
        assert_null(frsh_start(e));
    }
    rh_buf_free(&r);
}

static int64_t now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* --clock auto: a BLOCK 5000 read on an empty stream answers after a few milliseconds of
 * real time, with the virtual clock exactly 5000 ms on; twice the same; the recording says
 * why the clock moved. */
static void test_clock_auto(void **state)
{
    (void)state;
    char path[128];
    snprintf(path, sizeof path, "%s/auto.rec", dir);
    for (int run = 0; run < 2; run++) {
        const char *const extra[] = {"--clock", "auto", "--record", path, NULL};
        frsh_server *s = start(extra);
        rh_buf r = {0};
        frsh_conn *c = frsh_connect(s);
        CALL(c, &r, "+OK\r\n", "XGROUP", "CREATE", "s", "g", "$", "MKSTREAM");
        int64_t t0 = now_ms();
        CALL(c, &r, "*-1\r\n", "XREADGROUP", "GROUP", "g", "c", "BLOCK", "5000", "STREAMS", "s",
             ">");
        int64_t took = now_ms() - t0;
        CALL(c, &r, ":1700000005000\r\n", "FAKE.TIME", "GET");
        if (took > 1000) fail_msg("BLOCK 5000 took %lld ms of wall time", (long long)took);
        /* nothing blocked, nothing due: the clock stays */
        frsh_sleep_ms(100);
        CALL(c, &r, ":1700000005000\r\n", "FAKE.TIME", "GET");
        /* a key's expiry is a deadline only while something observes it */
        CALL(c, &r, "+OK\r\n", "SET", "k", "v", "PX", "1000");
        frsh_sleep_ms(100);
        CALL(c, &r, ":1700000005000\r\n", "FAKE.TIME", "GET");
        CALL(c, &r, "+OK\r\n", "CONFIG", "SET", "notify-keyspace-events", "Ex");
        frsh_conn *sub = frsh_connect(s);
        CALL(sub, &r, "*3\r\n$9\r\nsubscribe\r\n$22\r\n__keyevent@0__:expired\r\n:1\r\n",
             "SUBSCRIBE", "__keyevent@0__:expired");
        EXPECT(sub, &r, "*3\r\n$7\r\nmessage\r\n$22\r\n__keyevent@0__:expired\r\n$1\r\nk\r\n");
        CALL(c, &r, ":1700000006001\r\n", "FAKE.TIME", "GET");
        frsh_close(sub);
        frsh_close(c);
        stop(s);
        char *t = file_text(path);
        assert_non_null(strstr(t, "\nmeta clock auto\n"));
        assert_non_null(strstr(t, "\nclock t=1700000005000 from=1700000000000 why=auto\n"));
        assert_non_null(strstr(t, "since=1700000000000 XREADGROUP GROUP g c BLOCK 5000 STREAMS s > "
                                  "=> \"*-1\\r\\n\"\n"));
        assert_non_null(strstr(t, "\nclock t=1700000006001 from=1700000005000 why=auto\n"));
        free(t);
        rh_buf_free(&r);
    }
    /* --quiet-ms needs --clock auto */
    const char *const e[] = {"--quiet-ms", "5", NULL};
    assert_null(frsh_start(e));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_record_session, make_dir, remove_dir),
        cmocka_unit_test_setup_teardown(test_record_command, make_dir, remove_dir),
        cmocka_unit_test_setup_teardown(test_record_script_calls, make_dir, remove_dir),
        cmocka_unit_test_setup_teardown(test_record_refuses_a_users_file, make_dir, remove_dir),
        cmocka_unit_test(test_redis_version),
        cmocka_unit_test_setup_teardown(test_clock_auto, make_dir, remove_dir),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
