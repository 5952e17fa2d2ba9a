/* server_pause.c -- CLIENT PAUSE, fakeredis-server against redis-server 7.0.15.
 *
 * One script of steps over five connections runs on each server; each step sends a
 * command on one connection, or reads what one connection got -- its next reply, or
 * "(none)" when nothing came within a quiet interval (a held command).  The two
 * transcripts must be the same, and the real server's must show the holds the script is
 * about (so the test cannot pass on two servers that never hold).  What it covers: a WRITE
 * pause holds writes, PUBLISH, PFCOUNT, scripts without no-writes, a write queued in MULTI
 * and an EXEC of writes, not reads, no-writes scripts or a command answered with an error;
 * INFO's blocked_clients counts the held; CLIENT UNPAUSE lets them go in the order they
 * were held; an ALL pause holds everything and ends by its timeout; expired keys stay
 * while paused (expired_keys does not move) and go when it ends; CLIENT PAUSE's errors. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "frs_harness.h"
#include "redis_harness.h"

#define NCONN 5
#define QUIET_MS 200 /* nothing within this: the command is held */

/* A step: on connection `conn`, `cmd` (arguments split at '|') is sent; with cmd NULL the
 * next reply is read ("(none)" when held), `field` set: only that INFO line is kept;
 * `sleep_ms`: wait first. */
typedef struct step {
    int conn;
    const char *cmd;
    const char *field;
    int sleep_ms;
    int wait_ms; /* a read waits this long for its reply (0: QUIET_MS) */
} step;

#define SEND(c, s) {c, s, NULL, 0, 0}
#define READ(c) {c, NULL, NULL, 0, 0}
#define READ_WAIT(c, ms) {c, NULL, NULL, 0, ms}
#define INFO_FIELD(c, section, f) {c, "INFO|" section, f, 0, 0}
#define SLEEP_SEND(c, ms, s) {c, s, NULL, ms, 0}

static const step script[] = {
    /* CLIENT PAUSE's errors, as clientCommand checks them (mode before timeout) */
    SEND(0, "CLIENT|PAUSE|10|foo"), READ(0),
    SEND(0, "CLIENT|PAUSE|-1"), READ(0),
    SEND(0, "CLIENT|PAUSE|abc"), READ(0),
    SEND(0, "CLIENT|PAUSE|10|write|x"), READ(0),
    /* WRITE: reads pass, writes, PUBLISH, PFCOUNT and write scripts wait */
    SEND(0, "SET|k|v|PX|150"), READ(0),
    SEND(0, "CLIENT|PAUSE|100000|WRITE"), READ(0),
    SEND(1, "GET|foo"), READ(1),
    SEND(1, "SET|foo|bar"), READ(1),
    SEND(2, "PUBLISH|ch|m"), READ(2),
    SEND(3, "EVAL|#!lua flags=no-writes\nreturn 2|0"), READ(3),
    SEND(3, "EVAL|return 1|0"), READ(3),
    SEND(4, "SET|foo"), READ(4), /* a wrong arity is answered at once */
    SEND(4, "PFCOUNT|h"), READ(4),
    INFO_FIELD(0, "clients", "blocked_clients:"), READ(0),
    /* a key expires during the pause: read as gone, not deleted */
    SLEEP_SEND(0, 250, "GET|k"), READ(0),
    SEND(0, "EXISTS|k"), READ(0),
    INFO_FIELD(0, "stats", "expired_keys:"), READ(0),
    /* UNPAUSE: the held go on in order */
    SEND(0, "CLIENT|UNPAUSE"), READ(0),
    READ(1), READ(2), READ(3), READ(4),
    INFO_FIELD(0, "clients", "blocked_clients:"), READ(0),
    SEND(0, "GET|k"), READ(0),
    INFO_FIELD(0, "stats", "expired_keys:"), READ(0),
    /* MULTI: queueing a write waits too; an EXEC of writes waits */
    SEND(1, "MULTI"), READ(1),
    SEND(2, "MULTI"), READ(2),
    SEND(2, "INCR|n"), READ(2),
    SEND(3, "MULTI"), READ(3),
    SEND(3, "GET|n"), READ(3),
    SEND(0, "CLIENT|PAUSE|100000|WRITE"), READ(0),
    SEND(1, "SET|a|b"), READ(1),
    SEND(2, "EXEC"), READ(2),
    SEND(3, "EXEC"), READ(3),
    SEND(0, "CLIENT|UNPAUSE"), READ(0),
    READ(1), READ(2),
    SEND(1, "EXEC"), READ(1),
    /* ALL: everything waits, CLIENT commands too, until the timeout */
    SEND(0, "CLIENT|PAUSE|1000|ALL"), READ(0),
    SEND(1, "PING"), READ(1),
    SEND(0, "CLIENT|UNPAUSE"), READ(0),
    READ_WAIT(1, 3000), READ_WAIT(0, 3000),
};

/* Runs the script on a server (unix socket path); the transcript goes to *out. */
static void run_script(const char *path, rh_buf *out)
{
    frsh_conn *c[NCONN];
    for (int i = 0; i < NCONN; i++) {
        c[i] = frsh_connect_path(path);
        assert_non_null(c[i]);
    }
    rh_buf r = {0};
    for (size_t i = 0; i < sizeof(script) / sizeof(script[0]); i++) {
        const step *s = &script[i];
        if (s->sleep_ms) frsh_sleep_ms(s->sleep_ms);
        if (s->cmd) {
            char buf[256];
            snprintf(buf, sizeof(buf), "%s", s->cmd);
            char *argv[8];
            int argc = 0;
            argv[argc++] = buf;
            for (char *p = buf; *p && argc < 8; p++)
                if (*p == '|') {
                    *p = '\0';
                    argv[argc++] = p + 1;
                }
            rh_buf req = {0};
            rh_buf_printf(&req, "*%d\r\n", argc);
            for (int j = 0; j < argc; j++)
                rh_buf_printf(&req, "$%zu\r\n%s\r\n", strlen(argv[j]), argv[j]);
            frsh_send_raw(c[s->conn], req.data, req.len);
            rh_buf_free(&req);
            continue;
        }
        rh_buf_reset(&r);
        int st = frsh_read(c[s->conn], &r, s->wait_ms ? s->wait_ms : QUIET_MS);
        rh_buf_printf(out, "%zu c%d: ", i, s->conn);
        if (st != 0) {
            rh_buf_printf(out, "(none)\n");
            continue;
        }
        const step *sent = i > 0 ? &script[i - 1] : NULL;
        if (sent && sent->field) { /* only the INFO line asked for */
            rh_buf_append(&r, "", 1);
            const char *f = strstr(r.data, sent->field);
            size_t n = f ? strcspn(f, "\r") : 0;
            rh_buf_printf(out, "%.*s\n", (int)n, f ? f : "");
            continue;
        }
        rh_buf_printf(out, "%s\n", frsh_show(r.data, r.len));
    }
    rh_buf_free(&r);
    for (int i = 0; i < NCONN; i++) frsh_close(c[i]);
}

static void test_pause_same_as_redis(void **state)
{
    (void)state;
    rh_server *real = rh_start(&(rh_options){.quiet = 1});
    assert_non_null(real);
    const char *const extra[] = {"--clock", "wall", NULL};
    frsh_server *fake = frsh_start_ok(extra);
    rh_buf a = {0}, b = {0};
    run_script(real->socket, &a);
    run_script(fake->sock, &b);
    rh_buf_append(&a, "", 1);
    rh_buf_append(&b, "", 1);
    /* the real server's transcript shows the holds the script is about */
    assert_non_null(strstr(a.data, "c1: (none)"));
    assert_non_null(strstr(a.data, "blocked_clients:4"));
    assert_non_null(strstr(a.data, "expired_keys:0"));
    assert_non_null(strstr(a.data, "expired_keys:1"));
    frsh_same_text(b.data, a.data);
    rh_buf_free(&a);
    rh_buf_free(&b);
    frsh_stop_ok(fake);
    rh_stop(real);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_pause_same_as_redis),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
