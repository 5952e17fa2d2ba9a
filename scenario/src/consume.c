/* consume.c -- wsim consume: the engine (libwsim) as a live consumer process
 * (docs/consumer.md, "The engine as a process").
 *
 * A scenario file of wsim's own consumer doubles as a handler spec: its subscriptions are
 * what the process reads, its `produce` lines name the entries (by payload), and each
 * entry's handler lines (queue, pool, publish, reply, bind, its outcome) say what every
 * delivery of it does.  Against the server REDIS_URL names, with the framework's encodings
 * and connection layout (the engine's: a reader, a pool, a subscriber per channel):
 *
 *   - the first process (WSIM_INCARNATION 1 or unset) plays the file's consumer steps in
 *     file order -- its subscriptions, reads and handler lines, as the simulated run
 *     does, so that its commands are the simulation's;
 *   - then, and from the start in a process started again after a crash, it serves:
 *     reads every subscription in turn and handles each delivery as the file handles its
 *     entry (what wsim explore's recovery does in the simulation), and when a round hands
 *     out nothing, waits in a blocking pop on a key of its own for as long as the
 *     subscriptions' longest min-idle (the served fake's clock moves past it while every
 *     client waits) -- until SIGTERM or SIGKILL ends it. */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "wsc_int.h"
#include "wsi_alloc.h"

int wsc_consume_file(const wsc_scenario *sc, const char *url, int incarnation)
{
    wsc_options opt = {.backend = url, .consume = 1, .no_trace_text = 1};
    wsc_runner *r = wsc_runner_new(sc, &opt);
    if (!r) {
        fprintf(stderr, "wsim consume: out of memory\n");
        return 1;
    }
    if (wsc_runner_failed(r)) {
        fprintf(stderr, "wsim consume: cannot reach %s\n", url);
        wsc_runner_free(r);
        return 1;
    }
    /* the file's consumer steps; a restarted process only subscribes (and names the
     * entries), as the framework's start does */
    for (size_t i = 0; i < sc->nst && !wsc_runner_failed(r); i++) {
        wsc_kind k = sc->st[i].kind;
        if (incarnation > 1 && k != K_SUBSCRIBE && k != K_PRODUCE) continue;
        wsc_runner_exec(r, i);
        if (ws_sim_dead(wsc_runner_sim(r))) break;
    }
    /* how long an empty round waits: past the longest min-idle of a reclaim or claiming
     * read (and the orphan sweep's), so that what a dead process left comes due */
    long long idle_ms = 100;
    for (size_t i = 0; i < sc->nst; i++) {
        const wsc_stmt *st = &sc->st[i];
        if (st->kind == K_SUBSCRIBE && st->cfg.min_idle_ms + 10 > idle_ms)
            idle_ms = st->cfg.min_idle_ms + 10;
    }
    char timeout[32];
    snprintf(timeout, sizeof timeout, "%lld.%03lld", idle_ms / 1000, idle_ms % 1000);
    ws_conn *idle = ws_conn_open(url, (int)idle_ms + 10000);
    char key[64];
    snprintf(key, sizeof key, "wsim:consume:idle:%ld", (long)getpid());
    ws_sim *sim = wsc_runner_sim(r);
    while (!wsc_runner_failed(r) && !ws_sim_dead(sim)) {
        size_t got = 0;
        for (size_t i = 0; i < wsc_runner_subs(r) && !ws_sim_dead(sim); i++) {
            ws_sub *s = wsc_runner_sub(r, i);
            ws_read_result res;
            if (!s || wsc_runner_read(r, s, &res) != 0 || res.is_report) continue;
            got += res.n;
            for (size_t k = 0; k < res.n && !ws_sim_dead(sim); k++) {
                ws_delivery *d = ws_read_delivery(s, k);
                if (d && !ws_delivery_done(d)) wsc_runner_handle(r, d);
            }
        }
        if (got) continue;
        const char *argv[] = {"BLPOP", key, timeout};
        fr_command c = {3, argv, NULL};
        const fr_reply *rep;
        if (ws_pipeline(idle, "idle", 1, &c, &rep) != 0) break;
    }
    int rc = 0;
    if (wsc_runner_failed(r)) {
        wsc_result res;
        wsc_runner_finish(r, &res);
        fprintf(stderr, "wsim consume: %s\n", res.report ? res.report : "the run failed");
        wsc_result_free(&res);
        rc = 1;
    } else if (ws_sim_dead(sim)) {
        fprintf(stderr, "wsim consume: %s\n", ws_sim_errstr(sim));
        rc = 1;
    }
    ws_conn_close(idle);
    wsc_runner_free(r);
    return rc;
}
