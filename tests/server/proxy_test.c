/* proxy_test.c -- `wsim proxy` in front of a real redis-server (started by the harness on a
 * unix socket in a temporary directory): the bytes it forwards are the server's, and the
 * recording it writes is fakeredis-server's format (docs/recording.md) -- the recording of
 * a scripted session is compared whole (times masked: the proxy's clock is the wall clock),
 * then RESP3 pushes, SUBSCRIBE's several confirmations, UNSUBSCRIBE with no channel, MONITOR's
 * lines, CLIENT REPLY SKIP, a pipeline in one batch, and a client that closes. */
#include <errno.h>
#include <poll.h>
#include <regex.h>
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
#include "wsr.h"

#define EXPECT FRSH_EXPECT
#define CALL FRSH_CALL

/* The real server, the proxy in front of it, and where the recording goes. */
typedef struct world {
    rh_server *redis;
    frsh_server *proxy;
    char dir[64];
    char rec[128];
    char upstream[400];
} world;

static int setup(void **state)
{
    world *w = calloc(1, sizeof *w);
    rh_options ro = {.quiet = 1};
    w->redis = rh_start(&ro);
    if (!w->redis) return -1;
    snprintf(w->dir, sizeof w->dir, "/tmp/proxy_test.XXXXXX");
    if (!mkdtemp(w->dir)) return -1;
    snprintf(w->rec, sizeof w->rec, "%s/p.rec", w->dir);
    snprintf(w->upstream, sizeof w->upstream, "unix://%s", w->redis->socket);
    const char *args[] = {"proxy", "--upstream", w->upstream, "--record", w->rec,
                          "--unixsocket", "{sock}", NULL};
    w->proxy = frsh_start_program(WSIM_BINARY, "wsim proxy", args);
    if (!w->proxy) return -1;
    *state = w;
    return 0;
}

static int teardown(void **state)
{
    world *w = *state;
    frsh_stop(w->proxy);
    rh_stop(w->redis);
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", w->dir);
    int rc = system(cmd);
    free(w);
    return rc == 0 ? 0 : -1;
}

/* Stops the proxy (SIGTERM: it writes the end line) and returns the recording with every
 * t=DIGITS as t=T (heap). */
static char *stop_and_read(world *w)
{
    int st = frsh_stop(w->proxy);
    w->proxy = NULL;
    assert_true(st != -1 && WIFEXITED(st) && WEXITSTATUS(st) == 0);
    FILE *f = fopen(w->rec, "rb");
    assert_non_null(f);
    char *raw = calloc(1, 1 << 20), *out = calloc(1, 1 << 20);
    size_t n = fread(raw, 1, (1 << 20) - 1, f);
    raw[n] = '\0';
    fclose(f);
    size_t k = 0;
    for (const char *p = raw; *p;) {
        if (!strncmp(p, " t=", 3) && p[3] >= '0' && p[3] <= '9') {
            memcpy(out + k, " t=T", 4);
            k += 4;
            p += 3;
            while (*p >= '0' && *p <= '9') p++;
            continue;
        }
        out[k++] = *p++;
    }
    free(raw);
    return out;
}

#define same_text frsh_same_text

/* A scripted session through the proxy: what the client gets is the server's, and the
 * recording is the session's, line by line. */
static void test_session(void **state)
{
    world *w = *state;
    rh_buf r = {0};
    frsh_conn *p = frsh_connect(w->proxy);
    frsh_conn *c = frsh_connect(w->proxy);
    frsh_window_session(p, c, "1-1", "1-1");
    CALL(c, &r, "*-1\r\n", "BLPOP", "q", "0.05");
    frsh_conn *sub = frsh_connect(w->proxy);
    /* two channels: two confirmations answer one command */
    frsh_send(sub, "SUBSCRIBE", "ch", "other", NULL);
    EXPECT(sub, &r, "*3\r\n$9\r\nsubscribe\r\n$2\r\nch\r\n:1\r\n");
    EXPECT(sub, &r, "*3\r\n$9\r\nsubscribe\r\n$5\r\nother\r\n:2\r\n");
    CALL(p, &r, ":1\r\n", "PUBLISH", "ch", "hi");
    EXPECT(sub, &r, "*3\r\n$7\r\nmessage\r\n$2\r\nch\r\n$2\r\nhi\r\n");
    /* no channel: one confirmation per subscription */
    /* (in the order of redis-server's hash table: what the client got is what is recorded) */
    frsh_send(sub, "UNSUBSCRIBE", NULL);
    rh_buf both = {0};
    for (int i = 0; i < 2; i++) {
        frsh_expect_reply(sub, &r);
        assert_true(strstr(r.data, "unsubscribe") != NULL);
        rh_buf_append(&both, r.data, r.len);
    }
    assert_non_null(strstr(both.data, ":0\r\n"));
    char unsub[256];
    wsr_token(unsub, sizeof unsub, both.data, both.len);
    rh_buf_free(&both);
    CALL(sub, &r, "+PONG\r\n", "PING");
    /* replies CLIENT REPLY drops */
    static const char off[] = "*3\r\n$6\r\nCLIENT\r\n$5\r\nREPLY\r\n$4\r\nSKIP\r\n"
                              "*1\r\n$4\r\nPING\r\n"
                              "*2\r\n$4\r\nECHO\r\n$1\r\nx\r\n";
    frsh_send_raw(c, off, sizeof off - 1);
    EXPECT(c, &r, "$1\r\nx\r\n");
    CALL(c, &r, "+OK\r\n", "QUIT");
    frsh_expect_eof(c, NULL, 2000);
    frsh_close(c);
    frsh_close(sub);
    frsh_close(p);
    frsh_sleep_ms(50);
    char *got = stop_and_read(w);
    char want[8192];
    long pid = (long)getpid();
    snprintf(want, sizeof want,
             "wsim-recording 1\n"
             "meta source \"wsim proxy\"\n"
             "meta upstream %s\n"
             "meta clock wall\n"
             "open 1 t=T addr=unix: pid=%ld\n"
             "open 2 t=T addr=unix: pid=%ld\n"
             "cmd 1 b=1 t=T m=0 name=producer CLIENT SETNAME producer => \"+OK\\r\\n\"\n"
             "cmd 1 b=2 t=T m=0 name=producer XGROUP CREATE orders g $ MKSTREAM => \"+OK\\r\\n\"\n"
             "cmd 1 b=3 t=T m=0 name=producer XADD orders 1-1 _payload \"o 1\" => \"$3\\r\\n1-1\\r\\n\"\n"
             "cmd 2 b=4 t=T m=0 XREADGROUP GROUP g c COUNT 10 STREAMS orders > => "
             "\"*1\\r\\n*2\\r\\n$6\\r\\norders\\r\\n*1\\r\\n*2\\r\\n$3\\r\\n1-1\\r\\n*2\\r\\n"
             "$8\\r\\n_payload\\r\\n$3\\r\\no 1\\r\\n\"\n"
             "cmd 2 b=5 t=T m=0 INCR n => \":1\\r\\n\"\n"
             "cmd 2 b=5 t=T m=0 XACK orders g 1-1 => \":1\\r\\n\"\n"
             "cmd 2 b=6 t=T m=0 MULTI => \"+OK\\r\\n\"\n"
             "cmd 2 b=7 t=T m=1 INCR n => \"+QUEUED\\r\\n\"\n"
             "cmd 2 b=8 t=T m=1 EXEC => \"*1\\r\\n:2\\r\\n\"\n"
             "cmd 2 b=9 t=T m=0 BLPOP q 0.05 => \"*-1\\r\\n\"\n"
             "open 3 t=T addr=unix: pid=%ld\n"
             "cmd 3 b=10 t=T m=0 SUBSCRIBE ch other => "
             "\"*3\\r\\n$9\\r\\nsubscribe\\r\\n$2\\r\\nch\\r\\n:1\\r\\n"
             "*3\\r\\n$9\\r\\nsubscribe\\r\\n$5\\r\\nother\\r\\n:2\\r\\n\"\n"
             "cmd 1 b=11 t=T m=0 name=producer PUBLISH ch hi => \":1\\r\\n\"\n"
             "push 3 t=T => \"*3\\r\\n$7\\r\\nmessage\\r\\n$2\\r\\nch\\r\\n$2\\r\\nhi\\r\\n\"\n"
             "cmd 3 b=12 t=T m=0 UNSUBSCRIBE => %s\n"
             "cmd 3 b=13 t=T m=0 PING => \"+PONG\\r\\n\"\n"
             "cmd 2 b=14 t=T m=0 CLIENT REPLY SKIP => \"\"\n"
             "cmd 2 b=14 t=T m=0 PING => \"\"\n"
             "cmd 2 b=14 t=T m=0 ECHO x => \"$1\\r\\nx\\r\\n\"\n"
             "cmd 2 b=15 t=T m=0 QUIT => \"+OK\\r\\n\"\n",
             w->upstream, pid, pid, pid, unsub);
    /* the proxy's socket path is in a temporary directory: "addr=unix:" alone compares */
    for (char *t = got; (t = strstr(t, "addr=unix:"));) {
        t += 10;
        char *e = strchr(t, ' ');
        if (e) memmove(t, e, strlen(e) + 1);
    }
    /* the rest (closes, end) comes in an order the sockets decide: check it after */
    char *closes = strstr(got, "close ");
    assert_non_null(closes);
    size_t head = (size_t)(closes - got);
    char *head_text = strndup(got, head);
    same_text(head_text, want);
    free(head_text);
    assert_non_null(strstr(closes, "close 2 t=T why=upstream\n"));
    assert_non_null(strstr(closes, "close 3 t=T why=peer\n"));
    assert_non_null(strstr(closes, "close 1 t=T why=peer\n"));
    assert_non_null(strstr(closes, "end t=T\n"));
    free(got);
    rh_buf_free(&r);
}

/* RESP3: subscription confirmations are pushes that answer their command, messages are
 * pushes that answer none; MONITOR's lines are pushes. */
static void test_resp3_and_monitor(void **state)
{
    world *w = *state;
    rh_buf r = {0};
    frsh_conn *a = frsh_connect(w->proxy), *b = frsh_connect(w->proxy), *m = frsh_connect(w->proxy);
    frsh_send(a, "HELLO", "3", NULL);
    frsh_expect_reply(a, &r);
    CALL(a, &r, ">3\r\n$9\r\nsubscribe\r\n$1\r\nc\r\n:1\r\n", "SUBSCRIBE", "c");
    CALL(m, &r, "+OK\r\n", "MONITOR");
    CALL(b, &r, ":1\r\n", "PUBLISH", "c", "m1");
    EXPECT(a, &r, ">3\r\n$7\r\nmessage\r\n$1\r\nc\r\n$2\r\nm1\r\n");
    frsh_expect_reply(m, &r); /* the MONITOR line of the PUBLISH */
    CALL(a, &r, "+PONG\r\n", "PING");
    frsh_close(a);
    frsh_close(b);
    frsh_close(m);
    frsh_sleep_ms(50);
    char *got = stop_and_read(w);
    assert_non_null(strstr(got, "m=0 SUBSCRIBE c => \">3\\r\\n$9\\r\\nsubscribe\\r\\n$1\\r\\nc\\r\\n:1\\r\\n\"\n"));
    assert_non_null(strstr(got, "\npush 1 t=T => \">3\\r\\n$7\\r\\nmessage\\r\\n$1\\r\\nc\\r\\n$2\\r\\nm1\\r\\n\"\n"));
    assert_non_null(strstr(got, "m=0 PING => \"+PONG\\r\\n\"\n"));
    assert_non_null(strstr(got, "m=0 MONITOR => \"+OK\\r\\n\"\n"));
    regex_t re;
    assert_int_equal(regcomp(&re, "\npush 3 t=T => \"\\+[0-9]+\\.[0-9]+ \\[0 unix:[^]]*\\] "
                                  "\\\\\"PUBLISH\\\\\" \\\\\"c\\\\\" \\\\\"m1\\\\\"\\\\r\\\\n\"\n",
                             REG_EXTENDED), 0);
    if (regexec(&re, got, 0, NULL, 0) != 0) fail_msg("no MONITOR push line in:\n%s", got);
    regfree(&re);
    free(got);
    rh_buf_free(&r);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_session, setup, teardown),
        cmocka_unit_test_setup_teardown(test_resp3_and_monitor, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
