/* test_server_hold.c -- the hold hook of frs_core (server/src/frs.h, "hold.c") and the loop
 * one turn at a time (frs_server_turn), as a program that embeds the server uses them:
 * the server runs in this process on a unix socket in a temporary directory, the clients
 * are sockets of this process, and the test turns the loop itself between a client's
 * write and its read.
 *
 * What must hold: the nth matching command (by name or not, on the connections the
 * predicate accepts) is held before it runs -- not applied, nothing after it read -- or
 * after it runs and before its reply leaves; `reached` is told once; a held connection
 * that closes drops the command (inside MULTI: nothing of the transaction), a release lets
 * it go on; counting alone (nth 0) counts; a blocking command is held once it is served;
 * the recording shows the hold. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>
#include <poll.h>

#include <cmocka.h>

#include "frs.h"
#include "wsr.h"

/* The server under test and its directory. */
typedef struct world {
    char dir[64];
    char sock[96];
    char rec[96];
    frs_server srv;
    int reached;              /* times `reached` was called */
    frs_hold_info info;       /* what it was told */
    char *argv0;              /* the held command's name, copied */
} world;

static int setup(void **state)
{
    world *w = calloc(1, sizeof *w);
    snprintf(w->dir, sizeof w->dir, "/tmp/test_hold.XXXXXX");
    if (!mkdtemp(w->dir)) return -1;
    snprintf(w->sock, sizeof w->sock, "%s/s.sock", w->dir);
    snprintf(w->rec, sizeof w->rec, "%s/r.rec", w->dir);
    frs_options opt = {.port = -1, .unixsocket = w->sock, .seed = 1, .wall_clock = 0,
                       .record = w->rec};
    char *cfg[1] = {NULL};
    opt.config = cfg;
    if (frs_server_init(&w->srv, &opt) != 0) return -1;
    *state = w;
    return 0;
}

static int teardown(void **state)
{
    world *w = *state;
    frs_server_free(&w->srv);
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", w->dir);
    int rc = system(cmd);
    free(w->argv0);
    free(w);
    return rc == 0 ? 0 : -1;
}

/* Turns the loop until nothing more happens for a moment. */
static void settle(world *w)
{
    for (int i = 0; i < 20; i++) assert_int_equal(frs_server_turn(&w->srv, 1), 0);
}

static int client(world *w)
{
    int fd = socket(AF_UNIX, SOCK_STREAM, 0);
    struct sockaddr_un sa = {.sun_family = AF_UNIX};
    snprintf(sa.sun_path, sizeof sa.sun_path, "%s", w->sock);
    assert_int_equal(connect(fd, (struct sockaddr *)&sa, sizeof sa), 0);
    settle(w); /* accepted */
    return fd;
}

/* Sends an inline command (the bytes as written, CRLF added). */
static void send_line(world *w, int fd, const char *line)
{
    char buf[512];
    int n = snprintf(buf, sizeof buf, "%s\r\n", line);
    assert_int_equal(write(fd, buf, (size_t)n), n);
    settle(w);
}

/* What the client has been sent so far ("" when nothing). */
static const char *received(world *w, int fd)
{
    static char buf[4096];
    settle(w);
    size_t len = 0;
    for (;;) {
        struct pollfd p = {.fd = fd, .events = POLLIN};
        if (poll(&p, 1, 0) <= 0 || !(p.revents & POLLIN)) break;
        ssize_t n = read(fd, buf + len, sizeof buf - 1 - len);
        if (n <= 0) break;
        len += (size_t)n;
    }
    buf[len] = '\0';
    return buf;
}

/* A command and its whole reply on a fresh observer connection. */
static const char *observe(world *w, const char *line)
{
    int fd = client(w);
    send_line(w, fd, line);
    const char *r = received(w, fd);
    close(fd);
    settle(w);
    return r;
}

/* Connections named "consumer" count (CLIENT SETNAME). */
static int is_consumer(void *ud, const frs_conn *c)
{
    (void)ud;
    return c->name && strcmp(c->name, "consumer") == 0;
}

static void on_reached(void *ud, const frs_hold_info *info)
{
    world *w = ud;
    w->reached++;
    w->info = *info;
    free(w->argv0);
    w->argv0 = strndup(info->argv[0], info->argvlen[0]);
}

static void arm(world *w, const char *name, uint64_t nth, int when)
{
    frs_hold_spec spec = {.match = is_consumer, .name = name, .nth = nth, .when = when,
                          .reached = on_reached, .ud = w};
    assert_int_equal(frs_hold_arm(&w->srv, &spec), 0);
}

static int consumer(world *w)
{
    int fd = client(w);
    send_line(w, fd, "CLIENT SETNAME consumer");
    assert_string_equal(received(w, fd), "+OK\r\n");
    return fd;
}

/* The recording so far (after a flush), heap. */
static char *recording(world *w)
{
    frs_record_flush(&w->srv);
    FILE *f = fopen(w->rec, "rb");
    char *buf = calloc(1, 1 << 16);
    size_t n = fread(buf, 1, (1 << 16) - 1, f);
    buf[n] = '\0';
    fclose(f);
    return buf;
}

static void test_hold_before_then_kill(void **state)
{
    world *w = *state;
    arm(w, "INCR", 2, FRS_HOLD_BEFORE);
    int other = client(w); /* not a consumer: its INCRs do not count */
    send_line(w, other, "INCR x");
    int fd = consumer(w);
    send_line(w, fd, "INCR x");
    assert_string_equal(received(w, fd), ":2\r\n");
    assert_int_equal(frs_hold_get(&w->srv, NULL), FRS_HOLD_ARMED);
    /* the 2nd INCR of the consumer, pipelined with a SET after it */
    assert_int_equal(write(fd, "INCR x\r\nSET after 1\r\n", 21), 21);
    assert_string_equal(received(w, fd), "");
    assert_int_equal(w->reached, 1);
    assert_int_equal(w->info.when, FRS_HOLD_BEFORE);
    assert_string_equal(w->argv0, "INCR");
    frs_hold_info info;
    assert_int_equal(frs_hold_get(&w->srv, &info), FRS_HOLD_HELD);
    assert_int_equal(info.counted, 2);
    /* not applied, and nothing after it ran */
    assert_string_equal(observe(w, "GET x"), "$1\r\n2\r\n");
    assert_string_equal(observe(w, "EXISTS after"), ":0\r\n");
    /* the consumer dies: the command is dropped */
    close(fd);
    settle(w);
    assert_int_equal(frs_hold_get(&w->srv, NULL), FRS_HOLD_DROPPED);
    assert_string_equal(observe(w, "GET x"), "$1\r\n2\r\n");
    assert_int_equal(w->reached, 1);
    char *rec = recording(w);
    assert_non_null(strstr(rec, " what=before n=2 INCR x\n"));
    assert_non_null(strstr(rec, " what=dropped n=2\n"));
    free(rec);
    close(other);
}

static void test_hold_before_then_release(void **state)
{
    world *w = *state;
    /* every command counts, from the moment the connection is a consumer: its SETNAME
     * came while it had no name, so the 2nd is the second INCR */
    arm(w, NULL, 2, FRS_HOLD_BEFORE);
    int fd = consumer(w);
    assert_int_equal(write(fd, "INCR x\r\nINCR x\r\n", 16), 16);
    assert_string_equal(received(w, fd), ":1\r\n");
    assert_string_equal(observe(w, "GET x"), "$1\r\n1\r\n");
    frs_hold_release(&w->srv);
    assert_string_equal(received(w, fd), ":2\r\n");
    assert_int_equal(frs_hold_get(&w->srv, NULL), FRS_HOLD_RELEASED);
    char *rec = recording(w);
    assert_non_null(strstr(rec, " what=released n=2\n"));
    free(rec);
    close(fd);
}

static void test_hold_after_then_release(void **state)
{
    world *w = *state;
    arm(w, "incr", 1, FRS_HOLD_AFTER);
    int fd = consumer(w);
    send_line(w, fd, "INCR x");
    /* applied, reply held */
    assert_string_equal(received(w, fd), "");
    assert_string_equal(observe(w, "GET x"), "$1\r\n1\r\n");
    assert_int_equal(w->reached, 1);
    assert_int_equal(w->info.when, FRS_HOLD_AFTER);
    /* the recording has the command, then the hold */
    char *rec = recording(w);
    char *cmd = strstr(rec, " INCR x => \":1\\r\\n\"\n");
    char *hold = strstr(rec, " what=after n=1 INCR x\n");
    assert_non_null(cmd);
    assert_non_null(hold);
    assert_true(cmd < hold);
    free(rec);
    send_line(w, fd, "INCR x"); /* waits behind the hold */
    assert_string_equal(observe(w, "GET x"), "$1\r\n1\r\n");
    frs_hold_release(&w->srv);
    assert_string_equal(received(w, fd), ":1\r\n:2\r\n");
    close(fd);
}

static void test_hold_inside_multi_then_kill(void **state)
{
    world *w = *state;
    arm(w, "XACK", 1, FRS_HOLD_AFTER); /* the XACK is queued, its +QUEUED held */
    int fd = consumer(w);
    send_line(w, fd, "XADD s 1-1 f v");
    send_line(w, fd, "XGROUP CREATE s g 0");
    send_line(w, fd, "XREADGROUP GROUP g c STREAMS s >");
    received(w, fd);
    assert_int_equal(write(fd, "MULTI\r\nINCR done\r\nXACK s g 1-1\r\nEXEC\r\n", 38), 38);
    assert_string_equal(received(w, fd), "+OK\r\n+QUEUED\r\n");
    assert_int_equal(frs_hold_get(&w->srv, NULL), FRS_HOLD_HELD);
    close(fd); /* killed: the server discards the transaction */
    settle(w);
    assert_string_equal(observe(w, "EXISTS done"), ":0\r\n");
    assert_string_equal(observe(w, "XPENDING s g"),
                        "*4\r\n:1\r\n$3\r\n1-1\r\n$3\r\n1-1\r\n*1\r\n*2\r\n$1\r\nc\r\n$1\r\n1\r\n");
}

static void test_count_only(void **state)
{
    world *w = *state;
    arm(w, "xgroup|create", 0, FRS_HOLD_BEFORE);
    int fd = consumer(w);
    send_line(w, fd, "XGROUP CREATE s g $ MKSTREAM");
    send_line(w, fd, "XGROUP CREATE s g2 $");
    send_line(w, fd, "XGROUP DESTROY s g2");
    send_line(w, fd, "INCR n");
    frs_hold_info info;
    assert_int_equal(frs_hold_get(&w->srv, &info), FRS_HOLD_ARMED);
    assert_int_equal(info.counted, 2);
    assert_int_equal(w->reached, 0);
    frs_hold_disarm(&w->srv);
    assert_int_equal(frs_hold_get(&w->srv, NULL), FRS_HOLD_OFF);
    close(fd);
}

static void test_hold_after_blocked(void **state)
{
    world *w = *state;
    arm(w, "BLPOP", 1, FRS_HOLD_AFTER);
    int fd = consumer(w);
    send_line(w, fd, "BLPOP q 0");
    assert_int_equal(frs_hold_get(&w->srv, NULL), FRS_HOLD_ARMED); /* blocked, not held */
    assert_string_equal(observe(w, "RPUSH q a"), ":1\r\n");
    /* served (the element is gone), its reply held */
    assert_int_equal(frs_hold_get(&w->srv, NULL), FRS_HOLD_HELD);
    assert_string_equal(observe(w, "LLEN q"), ":0\r\n");
    assert_string_equal(received(w, fd), "");
    frs_hold_release(&w->srv);
    assert_string_equal(received(w, fd), "*2\r\n$1\r\nq\r\n$1\r\na\r\n");
    close(fd);
}

/* An embedder's in-process client in the recording (frs_record_embedded_*): its own
 * connection id, its commands with the fake's replies, a pipeline sharing one batch, and
 * the socket client its command woke after it. */
static void test_embedded_commands(void **state)
{
    world *w = *state;
    int fd = consumer(w);
    send_line(w, fd, "BLPOP q 0");
    uint64_t id = frs_record_embedded_open(&w->srv, "wsim-admin");
    assert_true(id > 0);
    fr_client *fc = fr_client_new(w->srv.fake);
    const char *argv[] = {"RPUSH", "q", "x"};
    size_t n;
    const char *reply = fr_exec_resp(fc, 3, argv, NULL, &n);
    frs_record_embedded_command(&w->srv, id, "wsim-admin", 0, 0, 3, argv, NULL, reply, n);
    frs_drain_fake_events(&w->srv, NULL);
    uint64_t b = frs_record_new_batch(&w->srv);
    const char *get[] = {"GET", "k"};
    reply = fr_exec_resp(fc, 2, get, NULL, &n);
    frs_record_embedded_command(&w->srv, id, "wsim-admin", b, 0, 2, get, NULL, reply, n);
    frs_record_embedded_command(&w->srv, id, "wsim-admin", b, 0, 2, get, NULL, reply, n);
    frs_record_embedded_close(&w->srv, id);
    fr_client_free(fc);
    assert_string_equal(received(w, fd), "*2\r\n$1\r\nq\r\n$1\r\nx\r\n");
    char *rec = recording(w);
    char want[512];
    snprintf(want, sizeof want,
             "open %llu t=1700000000000 addr=embedded name=wsim-admin\n"
             "cmd %llu b=3 t=1700000000000 m=0 name=wsim-admin RPUSH q x => \":1\\r\\n\"\n"
             "cmd 1 b=2 t=1700000000000 m=0 name=consumer since=1700000000000 BLPOP q 0 => "
             "\"*2\\r\\n$1\\r\\nq\\r\\n$1\\r\\nx\\r\\n\"\n"
             "cmd %llu b=4 t=1700000000000 m=0 name=wsim-admin GET k => \"$-1\\r\\n\"\n"
             "cmd %llu b=4 t=1700000000000 m=0 name=wsim-admin GET k => \"$-1\\r\\n\"\n"
             "close %llu t=1700000000000 why=embedded\n",
             (unsigned long long)id, (unsigned long long)id, (unsigned long long)id,
             (unsigned long long)id, (unsigned long long)id);
    if (!strstr(rec, want)) fail_msg("want:\n%s\ngot:\n%s", want, rec);
    free(rec);
    close(fd);
}

static void test_bad_spec(void **state)
{
    world *w = *state;
    frs_hold_spec spec = {.nth = 1, .when = 3};
    assert_int_equal(frs_hold_arm(&w->srv, &spec), -1);
    assert_int_equal(frs_hold_arm(&w->srv, NULL), -1);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_hold_before_then_kill, setup, teardown),
        cmocka_unit_test_setup_teardown(test_hold_before_then_release, setup, teardown),
        cmocka_unit_test_setup_teardown(test_hold_after_then_release, setup, teardown),
        cmocka_unit_test_setup_teardown(test_hold_inside_multi_then_kill, setup, teardown),
        cmocka_unit_test_setup_teardown(test_count_only, setup, teardown),
        cmocka_unit_test_setup_teardown(test_hold_after_blocked, setup, teardown),
        cmocka_unit_test_setup_teardown(test_embedded_commands, setup, teardown),
        cmocka_unit_test_setup_teardown(test_bad_spec, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
