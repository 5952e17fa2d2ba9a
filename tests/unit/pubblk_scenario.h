/* pubblk_scenario.h -- plays one multi-connection scenario on the fake and on a real
 * redis-server and compares every byte each connection receives: the replies, the
 * messages pushed to subscribers and the replies of blocked clients when they wake.
 * Shared by test_pubsub.c and test_blocking.c (static: each includes it once).
 *
 * A scenario is a list of steps "client N runs this line" (redis-cli splitting).  On the
 * real side each client is its own connection; on the fake, a fr_client with blocking on
 * (the fake reads the wall clock, so timeouts mean the same on both sides).  After each
 * command:
 *   - if the fake blocked the client, the test waits until the real server reports as
 *     many blocked clients (INFO), so the next command cannot overtake it;
 *   - otherwise as many replies as the fake wrote (SUBSCRIBE a b writes two) are read
 *     from the real connection and compared;
 *   - then every client the fake woke (fr_server_take_woken) must get the same reply from
 *     the real server, and every client the fake pushed messages to
 *     (fr_server_take_pushed) the same messages.
 * A step "!sleep MS" sleeps and then lets the fake expire its deadlines.  At the end each
 * client that is not blocked runs PING on both sides, which catches anything the real
 * server sent that the fake did not. */
#ifndef PUBBLK_SCENARIO_H
#define PUBBLK_SCENARIO_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "fakeredis.h"
#include "redis_harness.h"

#define PB_CLIENTS 5 /* clients 1..4; 0 is unused */

/* One step: client (1..4) runs line, or client 0 runs a directive ("!sleep MS"). */
typedef struct pb_step {
    int client;
    const char *line;
} pb_step;

static rh_server *pb_redis; /* the real server, for the whole test program */

/* cmocka group setup / teardown starting and stopping the real server. */
static int pb_start_real(void **state)
{
    (void)state;
    rh_options opt = {0};
    opt.quiet = 1;
    pb_redis = rh_start(&opt);
    return pb_redis ? 0 : -1;
}

static int pb_stop_real(void **state)
{
    (void)state;
    rh_stop(pb_redis);
    pb_redis = NULL;
    return 0;
}

/* The end of the RESP2 reply at p[0..len), or NULL when it is not complete. */
static const char *pb_skip(const char *p, const char *end)
{
    if (p >= end) return NULL;
    const char *eol = memchr(p, '\r', (size_t)(end - p));
    if (!eol || eol + 1 >= end) return NULL;
    long long n = strtoll(p + 1, NULL, 10);
    char kind = *p;
    p = eol + 2;
    if (kind == '$' && n >= 0) return p + n + 2 <= end ? p + n + 2 : NULL;
    if (kind == '*')
        for (long long i = 0; i < n && p; i++) p = pb_skip(p, end);
    return p;
}

/* How many whole replies p[0..len) holds. */
static size_t pb_count(const char *p, size_t len)
{
    size_t n = 0;
    const char *end = p + len;
    while (p && p < end && (p = pb_skip(p, end))) n++;
    return n;
}

/* p[0..len) with \r \n and other non-printable bytes escaped, into a static buffer. */
static const char *pb_escape(const char *p, size_t len)
{
    static char out[8192];
    size_t o = 0;
    for (size_t i = 0; i < len && o < sizeof(out) - 8; i++) {
        unsigned char ch = (unsigned char)p[i];
        if (ch == '\r') o += (size_t)snprintf(out + o, 8, "\\r");
        else if (ch == '\n') o += (size_t)snprintf(out + o, 8, "\\n");
        else if (ch < 32 || ch > 126 || ch == '\\') o += (size_t)snprintf(out + o, 8, "\\x%02x", ch);
        else out[o++] = (char)ch;
    }
    out[o] = '\0';
    return out;
}

/* The state of a running scenario. */
typedef struct pb_run {
    const char *name;            /* the scenario, for messages */
    size_t step;                 /* the step running, for messages */
    fr_server *fake;
    fr_client *fc[PB_CLIENTS];   /* fake clients, made on first use */
    rh_conn *rc[PB_CLIENTS];     /* real connections, made on first use */
    rh_conn *control;            /* a real connection for INFO */
    rh_buf raw, acc;             /* scratch for real replies */
} pb_run;

/* Reads n replies from real client i and fails unless their bytes are want[0..len). */
/* Runs a redis-cli style line on c; returns its raw reply bytes (valid until c's next
 * call) and their length in *len. */
static const char *run_resp(fr_client *c, const char *line, size_t *len)
{
    char **argv;
    size_t *lens;
    int argc = fr_split_line(line, &argv, &lens);
    assert_true(argc > 0);
    const char *p = fr_exec_resp(c, argc, (const char *const *)argv, lens, len);
    fr_split_free(argc, argv, lens);
    return p;
}

/* Fails unless line's raw reply on c is exactly want. */
#define EXPECT(c, line, want)                                                       \
    do {                                                                            \
        size_t len_;                                                                \
        const char *p_ = run_resp((c), (line), &len_);                              \
        if (len_ != sizeof(want) - 1 || memcmp(p_, (want), len_) != 0)              \
            fail_msg("%s\n  got:  %s\n  want: %s", (line), pb_escape(p_, len_),     \
                     (want));                                                       \
    } while (0)

static void pb_expect(pb_run *r, int i, const char *what, const char *want, size_t len, size_t n)
{
    r->acc.len = 0;
    for (size_t k = 0; k < n; k++) {
        if (rh_read_reply(r->rc[i], &r->raw) != 0)
            fail_msg("%s step %zu: client %d: %s: no reply from redis-server (%s); the fake "
                     "gave %s", r->name, r->step, i, what, rh_conn_error(r->rc[i]),
                     pb_escape(want, len));
        rh_buf_append(&r->acc, r->raw.data, r->raw.len);
    }
    if (r->acc.len != len || memcmp(r->acc.data, want, len) != 0) {
        fprintf(stderr, "%s step %zu: client %d: %s differs\n  real: %s\n", r->name, r->step,
                i, what, pb_escape(r->acc.data, r->acc.len));
        fail_msg("  fake: %s", pb_escape(want, len));
    }
}

static int pb_index(const pb_run *r, const fr_client *c)
{
    for (int i = 1; i < PB_CLIENTS; i++)
        if (r->fc[i] == c) return i;
    fail_msg("%s: a woken or pushed client the scenario does not know", r->name);
    return 0;
}

/* Compares what the fake woke and pushed since the last step with the real side. */
static void pb_drain(pb_run *r)
{
    fr_client *c;
    while ((c = fr_server_take_woken(r->fake))) {
        size_t len;
        const char *p = fr_client_woken_resp(c, &len);
        pb_expect(r, pb_index(r, c), "woken reply", p, len, 1);
    }
    while ((c = fr_server_take_pushed(r->fake))) {
        size_t len;
        const char *p = fr_client_push_resp(c, &len);
        pb_expect(r, pb_index(r, c), "pushed messages", p, len, pb_count(p, len));
        fr_client_push_clear(c);
    }
}

/* Waits (at most ~5 s) until INFO clients of the real server shows field:n. */
static void pb_wait_info(pb_run *r, const char *field, size_t n)
{
    char want[64];
    snprintf(want, sizeof want, "%s:%zu\r", field, n);
    for (int tries = 0; tries < 500; tries++) {
        if (rh_call(r->control, &r->raw, "INFO", "clients", NULL) != 0)
            fail_msg("%s: INFO failed: %s", r->name, rh_conn_error(r->control));
        if (strstr(r->raw.data, want)) return;
        struct timespec ts = {0, 10 * 1000 * 1000};
        nanosleep(&ts, NULL);
    }
    fail_msg("%s step %zu: the real server never had %s %zu", r->name, r->step, field, n);
}

/* Runs steps (ending with a NULL line) on a fresh fake and fresh real connections. */
static void pb_scenario(const char *name, const pb_step *steps)
{
    pb_run run = {.name = name};
    pb_run *r = &run;
    if (!pb_redis) fail_msg("no redis-server");
    r->fake = fr_server_new(NULL);
    assert_non_null(r->fake);
    fr_clock_use_wall(r->fake, 1);
    r->control = rh_connect(pb_redis);
    assert_non_null(r->control);
    assert_int_equal(rh_call(r->control, &r->raw, "FLUSHALL", NULL), 0);
    /* the connections of the scenario before (and their subscriptions) are gone, even
     * when it failed half-way */
    rh_call(r->control, &r->raw, "CLIENT", "KILL", "TYPE", "normal", "SKIPME", "yes", NULL);
    rh_call(r->control, &r->raw, "CLIENT", "KILL", "TYPE", "pubsub", NULL);
    pb_wait_info(r, "connected_clients", 1);

    for (r->step = 0; steps[r->step].line; r->step++) {
        const pb_step *st = &steps[r->step];
        if (st->client == 0) {
            long ms = 0;
            if (sscanf(st->line, "!sleep %ld", &ms) != 1) fail_msg("bad directive %s", st->line);
            struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
            nanosleep(&ts, NULL);
            fr_server_expire_blocked(r->fake);
            pb_drain(r);
            continue;
        }
        int i = st->client;
        assert_true(i > 0 && i < PB_CLIENTS);
        if (!r->fc[i]) {
            r->fc[i] = fr_client_new(r->fake);
            fr_client_set_blocking(r->fc[i], 1);
            r->rc[i] = rh_connect(pb_redis);
            assert_non_null(r->rc[i]);
        }
        char **argv;
        size_t *lens;
        int argc = fr_split_line(st->line, &argv, &lens);
        assert_true(argc > 0);
        if (rh_send(r->rc[i], argc, argv, lens) != 0) fail_msg("%s: send failed", name);
        size_t len;
        const char *p = fr_exec_resp(r->fc[i], argc, (const char *const *)argv, lens, &len);
        fr_split_free(argc, argv, lens);
        if (fr_client_is_blocked(r->fc[i])) {
            assert_int_equal(len, 0);
            pb_wait_info(r, "blocked_clients", fr_server_blocked_count(r->fake));
        } else {
            char what[200];
            snprintf(what, sizeof what, "reply to %s", st->line);
            pb_expect(r, i, what, p, len, pb_count(p, len));
        }
        pb_drain(r);
    }
    /* anything the real server sent that the fake did not shows up before PONG */
    for (int i = 1; i < PB_CLIENTS; i++) {
        if (!r->fc[i] || fr_client_is_blocked(r->fc[i])) continue;
        const char *ping[] = {"PING"};
        size_t len;
        const char *p = fr_exec_resp(r->fc[i], 1, ping, NULL, &len);
        if (rh_send(r->rc[i], 1, (char **)ping, NULL) != 0) fail_msg("%s: send failed", name);
        pb_expect(r, i, "final PING", p, len, 1);
    }
    for (int i = 1; i < PB_CLIENTS; i++) {
        rh_close(r->rc[i]);
        fr_client_free(r->fc[i]);
    }
    rh_close(r->control);
    rh_buf_free(&r->raw);
    rh_buf_free(&r->acc);
    fr_server_free(r->fake);
}

#endif /* PUBBLK_SCENARIO_H */
