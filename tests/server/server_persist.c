/* server_persist.c -- fakeredis-server's persistence (server/src/persist.c), the binary
 * started in a temporary directory:
 * - SAVE, BGSAVE (a forked child; "already in progress" while one runs, rdb-key-save-delay
 *   keeping it running), LASTSAVE, INFO's persistence figures;
 * - the file read at start from --dir/--dbfilename, written at SHUTDOWN SAVE, on SIGTERM
 *   with save points, never with NOSAVE; the save points on the virtual clock; FLUSHALL
 *   with save points;
 * - DEBUG RELOAD (and NOSAVE reading a file put there), a refused file answered with
 *   Redis's error and the keyspace unchanged; a server started on a corrupt file exits
 *   with Redis's lines;
 * - CONFIG SET dir;
 * - the AOF (server/src/aof.c): the multi-part files written and read at start, a
 *   BGREWRITEAOF's new base, DEBUG LOADAOF, CONFIG SET appendonly, each appendfsync policy,
 *   a truncated file loaded up to the cut (aof-load-truncated) or refused, an unknown
 *   command refused;
 * - with redis-server (label real-redis): the fake's dump.rdb read by a redis-server
 *   started on the same directory, and a redis-server's read by the fake at start; the
 *   same with the AOF directory (streams' groups and pending entries included).
 */
#include <errno.h>
#include <fcntl.h>
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
#include <unistd.h>

#include <cmocka.h>

#include "frs_harness.h"
#include "redis_harness.h"

static char g_dir[256]; /* the data directory every server of a test shares */

static void fresh_dir(void)
{
    if (g_dir[0]) {
        char cmd[300];
        snprintf(cmd, sizeof(cmd), "rm -rf '%s'", g_dir);
        assert_int_equal(system(cmd), 0);
    }
    snprintf(g_dir, sizeof(g_dir), "/tmp/server_persist.XXXXXX");
    assert_non_null(mkdtemp(g_dir));
}

static char *in_dir(const char *name)
{
    static char path[400];
    snprintf(path, sizeof(path), "%s/%s", g_dir, name);
    return path;
}

/* A server on g_dir with the extra options (NULL-terminated). */
static frsh_server *start(const char *opt1, ...)
{
    const char *args[32] = {"--dir", g_dir, "--enable-debug-command", "yes"};
    int n = 4;
    va_list ap;
    va_start(ap, opt1);
    for (const char *a = opt1; a && n < 30; a = va_arg(ap, const char *)) args[n++] = a;
    va_end(ap);
    args[n] = NULL;
    frsh_server *s = frsh_start(args);
    assert_non_null(s);
    return s;
}

/* One INFO persistence field as an integer. */
static long long info_field(frsh_conn *c, const char *field)
{
    rh_buf out = {0};
    const char *r = frsh_call(c, &out, "INFO", "persistence", NULL);
    char key[80];
    snprintf(key, sizeof(key), "\r\n%s:", field);
    const char *at = strstr(r, key);
    if (!at) fail_msg("no %s in %s", field, r);
    long long v = strtoll(at + strlen(key), NULL, 10);
    rh_buf_free(&out);
    return v;
}

static void expect(frsh_conn *c, const char *want, const char *arg0, ...)
{
    const char *argv[16];
    int n = 0;
    va_list ap;
    va_start(ap, arg0);
    for (const char *a = arg0; a && n < 16; a = va_arg(ap, const char *)) argv[n++] = a;
    va_end(ap);
    rh_buf cmd = {0};
    rh_buf_printf(&cmd, "*%d\r\n", n);
    for (int i = 0; i < n; i++) rh_buf_printf(&cmd, "$%zu\r\n%s\r\n", strlen(argv[i]), argv[i]);
    frsh_send_raw(c, cmd.data, cmd.len);
    rh_buf out = {0};
    frsh_expect_reply(c, &out);
    if (strcmp(out.data, want))
        fail_msg("%s ...: got %s, want %s", arg0, frsh_show(out.data, out.len),
                 frsh_show(want, strlen(want)));
    rh_buf_free(&out);
    rh_buf_free(&cmd);
}

/* Waits (at most 10 s) for INFO's field to become v. */
static void wait_field(frsh_conn *c, const char *field, long long v)
{
    for (int i = 0; i < 400; i++) {
        if (info_field(c, field) == v) return;
        frsh_sleep_ms(25);
    }
    fail_msg("%s never became %lld", field, v);
}

/* A server started on g_dir with the extra options (NULL-terminated) that must exit
 * without serving: what it wrote to stderr (a static buffer). */
static const char *start_refused(const char *opt1, ...)
{
    const char *args[32] = {FRS_BINARY, "--port", "0", "--dir", g_dir};
    int n = 5;
    va_list ap;
    va_start(ap, opt1);
    for (const char *a = opt1; a && n < 30; a = va_arg(ap, const char *)) args[n++] = a;
    va_end(ap);
    args[n] = NULL;
    char log[400];
    snprintf(log, sizeof(log), "%s/start.log", g_dir);
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        int lfd = open(log, O_WRONLY | O_CREAT | O_TRUNC, 0644);
        dup2(lfd, 2);
        int null = open("/dev/null", O_WRONLY);
        dup2(null, 1);
        execv(FRS_BINARY, (char *const *)args);
        _exit(127);
    }
    int status;
    assert_int_equal(waitpid(pid, &status, 0), pid);
    if (!WIFEXITED(status) || WEXITSTATUS(status) == 0) fail_msg("the server did not refuse");
    static char text[8192];
    FILE *f = fopen(log, "r");
    assert_non_null(f);
    size_t got = fread(text, 1, sizeof(text) - 1, f);
    fclose(f);
    text[got] = 0;
    return text;
}

static void put_keys(frsh_conn *c)
{
    expect(c, "+OK\r\n", "SET", "k", "v", NULL);
    expect(c, ":3\r\n", "RPUSH", "l", "a", "b", "c", NULL);
    expect(c, "$3\r\n1-1\r\n", "XADD", "s", "1-1", "f", "v", NULL);
    expect(c, "+OK\r\n", "XGROUP", "CREATE", "s", "g", "0", NULL);
    expect(c, ":1\r\n", "SADD", "set", "m", NULL);
}

static void expect_keys(frsh_conn *c)
{
    expect(c, "$1\r\nv\r\n", "GET", "k", NULL);
    expect(c, "*3\r\n$1\r\na\r\n$1\r\nb\r\n$1\r\nc\r\n", "LRANGE", "l", "0", "-1", NULL);
    expect(c, ":1\r\n", "XLEN", "s", NULL);
    expect(c, ":1\r\n", "SCARD", "set", NULL);
}

static void test_save_and_start(void **state)
{
    (void)state;
    fresh_dir();
    frsh_server *s = start(NULL);
    frsh_conn *c = frsh_connect(s);
    long long before = info_field(c, "rdb_last_save_time");
    put_keys(c);
    assert_true(info_field(c, "rdb_changes_since_last_save") >= 5);
    expect(c, "+OK\r\n", "SAVE", NULL);
    assert_int_equal(info_field(c, "rdb_changes_since_last_save"), 0);
    assert_int_equal(info_field(c, "rdb_saves"), 1);
    assert_true(info_field(c, "rdb_last_save_time") >= before);
    assert_int_equal(access(in_dir("dump.rdb"), F_OK), 0);
    frsh_close(c);
    frsh_stop(s);
    /* a new server reads it */
    s = start(NULL);
    c = frsh_connect(s);
    expect_keys(c);
    assert_int_equal(info_field(c, "rdb_last_load_keys_loaded"), 4);
    frsh_close(c);
    frsh_stop(s);
    /* --dbfilename names another file: nothing there, an empty keyspace */
    s = start("--dbfilename", "other.rdb", NULL);
    c = frsh_connect(s);
    expect(c, ":0\r\n", "DBSIZE", NULL);
    frsh_close(c);
    frsh_stop(s);
}

static void test_bgsave(void **state)
{
    (void)state;
    fresh_dir();
    frsh_server *s = start(NULL);
    frsh_conn *c = frsh_connect(s);
    put_keys(c);
    expect(c, "+Background saving started\r\n", "BGSAVE", NULL);
    wait_field(c, "rdb_bgsave_in_progress", 0);
    assert_int_equal(info_field(c, "rdb_changes_since_last_save"), 0);
    rh_buf out = {0};
    assert_non_null(strstr(frsh_call(c, &out, "INFO", "persistence", NULL),
                           "rdb_last_bgsave_status:ok\r\n"));
    /* a slow child: one at a time */
    expect(c, "+OK\r\n", "CONFIG", "SET", "rdb-key-save-delay", "1000000", NULL);
    expect(c, "+Background saving started\r\n", "BGSAVE", NULL);
    assert_int_equal(info_field(c, "rdb_bgsave_in_progress"), 1);
    expect(c, "-ERR Background save already in progress\r\n", "BGSAVE", NULL);
    expect(c, "-ERR Background save already in progress\r\n", "BGSAVE", "SCHEDULE", NULL);
    expect(c, "-ERR Background save already in progress\r\n", "SAVE", NULL);
    expect(c, "-ERR syntax error\r\n", "BGSAVE", "LATER", NULL);
    /* SHUTDOWN NOSAVE kills the child: its temporary file goes */
    frsh_send(c, "SHUTDOWN", "NOSAVE", NULL);
    frsh_expect_eof(c, NULL, FRSH_TIMEOUT_MS);
    frsh_close(c);
    assert_int_equal(frsh_stop(s), 0);
    rh_buf_free(&out);
    char cmd[400];
    snprintf(cmd, sizeof(cmd), "ls '%s' | grep -q '^temp-'", g_dir);
    assert_int_not_equal(system(cmd), 0);
}

static void test_shutdown_and_sigterm(void **state)
{
    (void)state;
    fresh_dir();
    /* SHUTDOWN NOSAVE: no file; SHUTDOWN SAVE: a file even without save points */
    frsh_server *s = start(NULL);
    frsh_conn *c = frsh_connect(s);
    put_keys(c);
    frsh_send(c, "SHUTDOWN", "NOSAVE", NULL);
    frsh_expect_eof(c, NULL, FRSH_TIMEOUT_MS);
    frsh_close(c);
    frsh_stop(s);
    assert_int_equal(access(in_dir("dump.rdb"), F_OK), -1);
    s = start(NULL);
    c = frsh_connect(s);
    put_keys(c);
    frsh_send(c, "SHUTDOWN", "SAVE", NULL);
    frsh_expect_eof(c, NULL, FRSH_TIMEOUT_MS);
    frsh_close(c);
    frsh_stop(s);
    s = start(NULL);
    c = frsh_connect(s);
    expect_keys(c);
    /* SIGTERM without save points: nothing written */
    expect(c, "+OK\r\n", "SET", "k", "changed", NULL);
    frsh_close(c);
    frsh_stop(s); /* SIGTERM */
    s = start("--save", "3600 1", NULL);
    c = frsh_connect(s);
    expect(c, "$1\r\nv\r\n", "GET", "k", NULL);
    expect(c, "+OK\r\n", "SET", "k", "changed", NULL);
    frsh_close(c);
    frsh_stop(s); /* SIGTERM with save points: saved */
    s = start(NULL);
    c = frsh_connect(s);
    expect(c, "$7\r\nchanged\r\n", "GET", "k", NULL);
    /* a save that cannot be written: SHUTDOWN answers Redis's error and the server stays */
    expect(c, "+OK\r\n", "CONFIG", "SET", "dbfilename", "no/such/dir/dump.rdb", NULL);
    expect(c, "-ERR Errors trying to SHUTDOWN. Check logs.\r\n", "SHUTDOWN", "SAVE", NULL);
    expect(c, "-ERR\r\n", "SAVE", NULL);
    expect(c, "$7\r\nchanged\r\n", "GET", "k", NULL);
    frsh_send(c, "SHUTDOWN", "SAVE", "FORCE", NULL);
    frsh_expect_eof(c, NULL, FRSH_TIMEOUT_MS);
    frsh_close(c);
    frsh_stop(s);
}

static void test_save_points_and_flushall(void **state)
{
    (void)state;
    fresh_dir();
    frsh_server *s = start("--clock", "virtual", "--save", "60 2", NULL);
    frsh_conn *c = frsh_connect(s);
    expect(c, "+OK\r\n", "SET", "a", "1", NULL);
    rh_buf out = {0};
    frsh_call(c, &out, "FAKE.TIME", "ADVANCE", "61000", NULL);
    frsh_sleep_ms(300);
    assert_int_equal(info_field(c, "rdb_saves"), 0); /* one change of the two */
    expect(c, "+OK\r\n", "SET", "b", "2", NULL);
    frsh_sleep_ms(300); /* the cron runs ten times a second */
    wait_field(c, "rdb_saves", 1);
    wait_field(c, "rdb_bgsave_in_progress", 0);
    assert_int_equal(info_field(c, "rdb_changes_since_last_save"), 0);
    /* FLUSHALL with save points writes the empty keyspace at once */
    expect(c, "+OK\r\n", "SET", "c", "3", NULL);
    expect(c, "+OK\r\n", "FLUSHALL", NULL);
    assert_int_equal(info_field(c, "rdb_changes_since_last_save"), 0);
    assert_int_equal(info_field(c, "rdb_saves"), 2);
    expect(c, "+OK\r\n", "DEBUG", "RELOAD", "NOSAVE", NULL);
    expect(c, ":0\r\n", "DBSIZE", NULL);
    /* without save points FLUSHALL leaves the count */
    expect(c, "+OK\r\n", "CONFIG", "SET", "save", "", NULL);
    expect(c, "+OK\r\n", "SET", "d", "4", NULL);
    expect(c, "+OK\r\n", "FLUSHALL", NULL);
    assert_true(info_field(c, "rdb_changes_since_last_save") > 0);
    rh_buf_free(&out);
    frsh_close(c);
    frsh_stop(s);
}

static void test_debug_reload(void **state)
{
    (void)state;
    fresh_dir();
    frsh_server *s = start(NULL);
    frsh_conn *c = frsh_connect(s);
    put_keys(c);
    expect(c, "+OK\r\n", "DEBUG", "RELOAD", NULL);
    expect_keys(c);
    /* NOSAVE reads what is on disk */
    expect(c, "+OK\r\n", "SET", "later", "x", NULL);
    expect(c, "+OK\r\n", "DEBUG", "RELOAD", "NOSAVE", NULL);
    expect(c, ":0\r\n", "EXISTS", "later", NULL);
    expect(c, "+OK\r\n", "SET", "later", "x", NULL);
    expect(c, "+OK\r\n", "DEBUG", "RELOAD", "NOSAVE", "NOFLUSH", "MERGE", NULL);
    expect(c, ":1\r\n", "EXISTS", "later", NULL);
    expect(c, "-ERR Error trying to load the RDB dump\r\n", "DEBUG", "RELOAD", "NOSAVE",
           "NOFLUSH", NULL);
    /* a corrupt file: refused, nothing changed */
    int fd = open(in_dir("dump.rdb"), O_WRONLY | O_TRUNC);
    assert_true(fd >= 0);
    assert_int_equal(write(fd, "REDIS0010\xfa", 10), 10);
    close(fd);
    expect(c, "-ERR Error trying to load the RDB dump\r\n", "DEBUG", "RELOAD", "NOSAVE", NULL);
    expect_keys(c);
    expect(c, ":1\r\n", "EXISTS", "later", NULL);
    frsh_close(c);
    frsh_stop(s);
    /* a server started on it does not start, with Redis's lines */
    const char *text = start_refused(NULL);
    if (!strstr(text, "Short read or OOM loading DB. Unrecoverable error, aborting now.") ||
        !strstr(text, "Unexpected EOF reading RDB file"))
        fail_msg("the refusal: %s", text);
}

static void test_config_dir(void **state)
{
    (void)state;
    fresh_dir();
    frsh_server *s = start(NULL);
    frsh_conn *c = frsh_connect(s);
    rh_buf out = {0};
    char want[600];
    snprintf(want, sizeof(want), "*2\r\n$3\r\ndir\r\n$%zu\r\n%s\r\n", strlen(g_dir), g_dir);
    assert_string_equal(frsh_call(c, &out, "CONFIG", "GET", "dir", NULL), want);
    expect(c, "-ERR CONFIG SET failed (possibly related to argument 'dir') - No such file or "
              "directory\r\n", "CONFIG", "SET", "dir", "/no/such/place", NULL);
    mkdir(in_dir("sub"), 0700);
    expect(c, "+OK\r\n", "CONFIG", "SET", "dir", in_dir("sub"), NULL);
    expect(c, "+OK\r\n", "SAVE", NULL);
    assert_int_equal(access(in_dir("sub/dump.rdb"), F_OK), 0);
    rh_buf_free(&out);
    frsh_close(c);
    frsh_stop(s);
}

/* ----- The append-only file ----------------------------------------------------------- */

static const char *const PENDING_ONE =
    "*4\r\n:1\r\n$3\r\n1-1\r\n$3\r\n1-1\r\n*1\r\n*2\r\n$1\r\nc\r\n$1\r\n1\r\n";

/* The whole of a file of g_dir's ("" when missing; a static buffer). */
static const char *file_text(const char *name)
{
    static char text[65536];
    text[0] = 0;
    FILE *f = fopen(in_dir(name), "rb");
    if (!f) return text;
    size_t n = fread(text, 1, sizeof(text) - 1, f);
    fclose(f);
    text[n] = 0;
    return text;
}

static int exists(const char *name)
{
    struct stat st;
    return stat(in_dir(name), &st) == 0;
}

static void test_aof_restart(void **state)
{
    (void)state;
    fresh_dir();
    frsh_server *s = start("--appendonly", "yes", NULL);
    frsh_conn *c = frsh_connect(s);
    put_keys(c);
    expect(c, "*1\r\n*2\r\n$1\r\ns\r\n*1\r\n*2\r\n$3\r\n1-1\r\n*2\r\n$1\r\nf\r\n$1\r\nv\r\n",
           "XREADGROUP", "GROUP", "g", "c", "STREAMS", "s", ">", NULL);
    expect(c, "+OK\r\n", "SET", "ttl", "x", "EX", "1000", NULL);
    assert_true(exists("appendonlydir/appendonly.aof.1.base.rdb"));
    assert_true(exists("appendonlydir/appendonly.aof.1.incr.aof"));
    assert_non_null(strstr(file_text("appendonlydir/appendonly.aof.manifest"),
                           "file appendonly.aof.1.base.rdb seq 1 type b\n"
                           "file appendonly.aof.1.incr.aof seq 1 type i\n"));
    assert_non_null(strstr(file_text("appendonlydir/appendonly.aof.1.incr.aof"),
                           "$4\r\nSET\r\n$3\r\nttl\r\n$1\r\nx\r\n$4\r\nPXAT\r\n") ||
                    strstr(file_text("appendonlydir/appendonly.aof.1.incr.aof"),
                           "$3\r\nSET\r\n$3\r\nttl\r\n$1\r\nx\r\n$4\r\nPXAT\r\n"));
    frsh_close(c);
    frsh_stop(s);
    /* started again: the AOF is what is read (there is no dump.rdb) */
    assert_false(exists("dump.rdb"));
    s = start("--appendonly", "yes", NULL);
    c = frsh_connect(s);
    expect_keys(c);
    expect(c, PENDING_ONE, "XPENDING", "s", "g", NULL);
    expect(c, ":1\r\n", "EXISTS", "ttl", NULL);
    /* a rewrite: a new base, the old files gone */
    expect(c, "+Background append only file rewriting started\r\n", "BGREWRITEAOF", NULL);
    wait_field(c, "aof_rewrite_in_progress", 0);
    assert_int_equal(info_field(c, "aof_rewrites"), 1);
    assert_non_null(strstr(file_text("appendonlydir/appendonly.aof.manifest"),
                           "file appendonly.aof.2.base.rdb seq 2 type b\n"));
    assert_false(exists("appendonlydir/appendonly.aof.1.base.rdb"));
    expect(c, "+OK\r\n", "SET", "after", "rewrite", NULL);
    /* DEBUG LOADAOF: flushed to the files, the keyspace read back from them */
    expect(c, "+OK\r\n", "DEBUG", "LOADAOF", NULL);
    expect_keys(c);
    expect(c, "$7\r\nrewrite\r\n", "GET", "after", NULL);
    expect(c, PENDING_ONE, "XPENDING", "s", "g", NULL);
    frsh_close(c);
    frsh_stop(s);
    s = start("--appendonly", "yes", NULL);
    c = frsh_connect(s);
    expect_keys(c);
    expect(c, "$7\r\nrewrite\r\n", "GET", "after", NULL);
    /* CONFIG SET appendonly no, then yes: a rewrite makes the files anew */
    expect(c, "+OK\r\n", "CONFIG", "SET", "appendonly", "no", NULL);
    expect(c, "+OK\r\n", "SET", "off", "1", NULL);
    expect(c, "+OK\r\n", "CONFIG", "SET", "appendonly", "yes", NULL);
    wait_field(c, "aof_rewrite_in_progress", 0);
    wait_field(c, "aof_enabled", 1);
    frsh_close(c);
    frsh_stop(s);
    s = start("--appendonly", "yes", NULL);
    c = frsh_connect(s);
    expect(c, "$1\r\n1\r\n", "GET", "off", NULL);
    frsh_close(c);
    frsh_stop(s);
}

static void test_aof_fsync_policies(void **state)
{
    (void)state;
    const char *policies[] = {"always", "everysec", "no"};
    for (int i = 0; i < 3; i++) {
        fresh_dir();
        frsh_server *s = start("--appendonly", "yes", "--appendfsync", policies[i], NULL);
        frsh_conn *c = frsh_connect(s);
        expect(c, "+OK\r\n", "SET", "k", policies[i], NULL);
        /* written before the reply whatever the policy (the fsync is what differs) */
        assert_non_null(strstr(file_text("appendonlydir/appendonly.aof.1.incr.aof"),
                               policies[i]));
        frsh_close(c);
        frsh_stop(s);
    }
}

static void test_aof_truncated_and_corrupt(void **state)
{
    (void)state;
    fresh_dir();
    frsh_server *s = start("--appendonly", "yes", NULL);
    frsh_conn *c = frsh_connect(s);
    expect(c, "+OK\r\n", "SET", "a", "1", NULL);
    expect(c, "+OK\r\n", "SET", "b", "2", NULL);
    frsh_close(c);
    frsh_stop(s);
    /* the last command cut short */
    const char *incr = in_dir("appendonlydir/appendonly.aof.1.incr.aof");
    struct stat st;
    assert_int_equal(stat(incr, &st), 0);
    assert_int_equal(truncate(incr, st.st_size - 3), 0);
    const char *text = start_refused("--appendonly", "yes", "--aof-load-truncated", "no", NULL);
    if (!strstr(text, "Unexpected end of file reading the append only file "
                      "appendonly.aof.1.incr.aof"))
        fail_msg("the refusal: %s", text);
    s = start("--appendonly", "yes", NULL); /* aof-load-truncated yes: up to the cut */
    c = frsh_connect(s);
    expect(c, "$1\r\n1\r\n", "GET", "a", NULL);
    expect(c, ":0\r\n", "EXISTS", "b", NULL);
    frsh_close(c);
    frsh_stop(s);
    /* an unknown command: refused, with Redis's line */
    FILE *f = fopen(incr, "ab");
    assert_non_null(f);
    fputs("*1\r\n$6\r\nNOSUCH\r\n", f);
    fclose(f);
    text = start_refused("--appendonly", "yes", NULL);
    if (!strstr(text, "Unknown command 'NOSUCH' reading the append only file "
                      "appendonly.aof.1.incr.aof"))
        fail_msg("the refusal: %s", text);
}

/* ----- With redis-server ----------------------------------------------------------------- */

/* A redis-server started on g_dir (its dump.rdb read at start), on a socket there. */
static pid_t start_redis(char *sock, size_t cap, const char *appendonly)
{
    snprintf(sock, cap, "%s/redis.sock", g_dir);
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        const char *exe = getenv("WSIM_REDIS_SERVER") ? getenv("WSIM_REDIS_SERVER") : "redis-server";
        int null = open("/dev/null", O_WRONLY);
        dup2(null, 1);
        dup2(null, 2); /* a failed test leaves it running: no pipe of the test's held */
        execlp(exe, exe, "--port", "0", "--unixsocket", sock, "--dir", g_dir, "--save", "",
               "--appendonly", appendonly, (char *)NULL);
        _exit(127);
    }
    return pid;
}

static frsh_conn *connect_wait(const char *sock)
{
    for (int i = 0; i < 200; i++) {
        frsh_conn *c = frsh_connect_path(sock);
        if (c) {
            /* it answers -LOADING until its files are read */
            for (int j = 0; j < 400; j++) {
                rh_buf out = {0};
                int up = !strcmp(frsh_call(c, &out, "PING", NULL), "+PONG\r\n");
                rh_buf_free(&out);
                if (up) return c;
                frsh_sleep_ms(25);
            }
            fail_msg("redis-server did not finish loading");
        }
        frsh_sleep_ms(25);
    }
    fail_msg("redis-server did not start");
    return NULL;
}

static void test_files_with_redis(void **state)
{
    (void)state;
    fresh_dir();
    frsh_server *s = start(NULL);
    frsh_conn *c = frsh_connect(s);
    put_keys(c);
    expect(c, "+OK\r\n", "SAVE", NULL);
    frsh_close(c);
    frsh_stop(s);
    /* redis-server reads the fake's file at start */
    char sock[400];
    pid_t r = start_redis(sock, sizeof(sock), "no");
    frsh_conn *rc = connect_wait(sock);
    expect_keys(rc);
    expect(rc, "+OK\r\n", "SET", "from", "redis", NULL);
    expect(rc, "+OK\r\n", "SAVE", NULL);
    frsh_close(rc);
    kill(r, SIGTERM);
    waitpid(r, NULL, 0);
    /* and the fake reads redis-server's */
    s = start(NULL);
    c = frsh_connect(s);
    expect_keys(c);
    expect(c, "$5\r\nredis\r\n", "GET", "from", NULL);
    frsh_close(c);
    frsh_stop(s);
}

static void test_aof_with_redis(void **state)
{
    (void)state;
    fresh_dir();
    frsh_server *s = start("--appendonly", "yes", NULL);
    frsh_conn *c = frsh_connect(s);
    put_keys(c);
    expect(c, "*1\r\n*2\r\n$1\r\ns\r\n*1\r\n*2\r\n$3\r\n1-1\r\n*2\r\n$1\r\nf\r\n$1\r\nv\r\n",
           "XREADGROUP", "GROUP", "g", "c", "STREAMS", "s", ">", NULL);
    frsh_close(c);
    frsh_stop(s);
    /* redis-server reads the fake's AOF (its manifest, base and incremental file) */
    char sock[400];
    pid_t r = start_redis(sock, sizeof(sock), "yes");
    frsh_conn *rc = connect_wait(sock);
    expect_keys(rc);
    expect(rc, PENDING_ONE, "XPENDING", "s", "g", NULL);
    expect(rc, "+OK\r\n", "SET", "from", "redis", NULL);
    expect(rc, "+Background append only file rewriting started\r\n", "BGREWRITEAOF", NULL);
    wait_field(rc, "aof_rewrite_in_progress", 0);
    expect(rc, ":3\r\n", "RPUSH", "after", "x", "y", "z", NULL);
    frsh_close(rc);
    kill(r, SIGTERM);
    waitpid(r, NULL, 0);
    /* and the fake reads redis-server's (an RDB base after its rewrite) */
    s = start("--appendonly", "yes", NULL);
    c = frsh_connect(s);
    expect_keys(c);
    expect(c, PENDING_ONE, "XPENDING", "s", "g", NULL);
    expect(c, "$5\r\nredis\r\n", "GET", "from", NULL);
    expect(c, ":3\r\n", "LLEN", "after", NULL);
    frsh_close(c);
    frsh_stop(s);
}

int main(int argc, char **argv)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_save_and_start),
        cmocka_unit_test(test_bgsave),
        cmocka_unit_test(test_shutdown_and_sigterm),
        cmocka_unit_test(test_save_points_and_flushall),
        cmocka_unit_test(test_debug_reload),
        cmocka_unit_test(test_config_dir),
        cmocka_unit_test(test_aof_restart),
        cmocka_unit_test(test_aof_fsync_policies),
        cmocka_unit_test(test_aof_truncated_and_corrupt),
    };
    const struct CMUnitTest real[] = {
        cmocka_unit_test(test_files_with_redis),
        cmocka_unit_test(test_aof_with_redis),
    };
    int rc;
    if (argc > 1 && !strcmp(argv[1], "--real"))
        rc = cmocka_run_group_tests_name("fakeredis-server's files and redis-server", real, NULL,
                                         NULL);
    else rc = cmocka_run_group_tests_name("fakeredis-server persistence", tests, NULL, NULL);
    if (g_dir[0]) {
        char cmd[300];
        snprintf(cmd, sizeof(cmd), "rm -rf '%s'", g_dir);
        if (system(cmd) != 0 && !rc) rc = 1;
    }
    return rc;
}
