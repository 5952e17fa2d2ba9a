/* explore.c -- the crash explorer: every crash point of a scenario, each classified.
 *
 * SQLite's crash tests kill the writer at every sync point; this kills the consumer at
 * every point where the server may have applied part of what it was sent: before each
 * command of each consumer round trip, and after each round trip applied with its
 * replies lost.  After the crash the consumer restarts and recovers the way the scenario
 * configured it (reclaim subscriptions, list orphan sweeps, delay-queue sweeps), handling
 * each redelivery as the scenario handles its entry; then the invariants of §8 say what
 * the crash did.  Only the first process's round trips are crash points: a scenario that
 * crashes by itself is explored up to its own crash. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "wsc_int.h"

/* How far the clock moves between recovery rounds: past every min-idle and delay the
 * scenario uses, so that whatever waits becomes due. */
static int64_t recovery_step(const wsc_scenario *sc)
{
    int64_t step = 1;
    for (size_t i = 0; i < sc->nst; i++) {
        const wsc_stmt *st = &sc->st[i];
        if (st->kind == K_SUBSCRIBE && st->cfg.min_idle_ms + 1 > step)
            step = st->cfg.min_idle_ms + 1;
        if (st->kind == K_SETTLE && st->outcome == WS_RETRY_AFTER && st->n + 1 > step)
            step = st->n + 1;
    }
    return step;
}

/* Restarts the consumer and lets every subscription read and handle until a whole round
 * brings nothing (at most `rounds` rounds). */
static void recover(wsc_runner *r, const wsc_scenario *sc, int rounds)
{
    ws_sim *sim = wsc_runner_sim(r);
    ws_sim_restart(sim);
    int64_t step = recovery_step(sc);
    for (int round = 0; round < rounds; round++) {
        ws_sim_advance(sim, step);
        size_t got = 0;
        for (size_t i = 0; i < wsc_runner_subs(r) && !ws_sim_dead(sim); i++) {
            ws_sub *s = wsc_runner_sub(r, i);
            for (int reads = 0; reads < 64 && !ws_sim_dead(sim); reads++) {
                ws_read_result res;
                if (wsc_runner_read(r, s, &res) != 0) break;
                if (res.is_report) continue;
                if (res.n == 0) break;
                got += res.n;
                for (size_t k = 0; k < res.n && !ws_sim_dead(sim); k++) {
                    ws_delivery *d = ws_read_delivery(s, k);
                    if (d && !ws_delivery_done(d)) wsc_runner_handle(r, d);
                }
            }
        }
        if (got == 0 || ws_sim_dead(sim)) break;
    }
}

const char *const WSC_INVARIANTS[WSC_NINVARIANTS] = {"lost", "leaked", "split", "doubled",
                                                     "stranded"};

static char *xstrdup0(const char *s)
{
    char *d = strdup(s ? s : "");
    if (!d) abort();
    return d;
}

/* Runs the scenario with one fault armed, recovers, classifies. */
static void explore_point(const wsc_scenario *sc, const wsc_options *opt, wsc_crash_point *p)
{
    wsc_runner *r = wsc_runner_new(sc, opt);
    if (!r) abort();
    ws_sim *sim = wsc_runner_sim(r);
    ws_fault f = {0};
    f.kind = p->command ? WS_FAULT_CRASH_BEFORE : WS_FAULT_LOSE_REPLIES;
    f.round_trip = p->round_trip;
    f.command = p->command;
    int armed = 0;
    for (size_t i = 0; i < sc->nst && !ws_sim_dead(sim) && !wsc_runner_failed(r); i++) {
        if (!armed) {
            ws_conn *c = NULL;
            if (strcmp(p->conn, "reader") == 0) c = ws_sim_reader(sim);
            else if (strcmp(p->conn, "window") == 0) c = ws_sim_window(sim);
            else
                for (size_t k = 0; k < wsc_runner_subs(r) && !c; k++)
                    if (ws_sub_connection(wsc_runner_sub(r, k)) &&
                        strcmp(ws_conn_label(ws_sub_connection(wsc_runner_sub(r, k))), p->conn) == 0)
                        c = ws_sub_connection(wsc_runner_sub(r, k));
            if (c) armed = ws_fault_arm(c, &f) == 0;
        }
        wsc_runner_exec(r, i);
    }
    if (!ws_sim_dead(sim)) {
        p->verdict = wsc_runner_failed(r) ? "error" : "not reached";
        p->detail = xstrdup0(wsc_runner_failed(r) ? "the scenario failed before the crash point"
                                                  : "the crash point was never reached");
        wsc_runner_free(r);
        return;
    }
    recover(r, sc, 16);
    const ws_violation *v;
    size_t n;
    if (ws_sim_check(sim, &v, &n) != 0) {
        p->verdict = "error";
        p->detail = xstrdup0(ws_sim_errstr(sim));
    } else if (n == 0) {
        p->verdict = "fine";
        p->detail = xstrdup0("");
    } else {
        /* the first violation names the point; every sentence goes into the detail */
        p->verdict = "error";
        for (int k = 0; k < WSC_NINVARIANTS; k++)
            if (strcmp(v[0].invariant, WSC_INVARIANTS[k]) == 0) p->verdict = WSC_INVARIANTS[k];
        size_t len = 1;
        for (size_t i = 0; i < n; i++) len += strlen(v[i].sentence) + 2;
        p->detail = calloc(len, 1);
        if (!p->detail) abort();
        for (size_t i = 0; i < n; i++) {
            if (i) strcat(p->detail, "; ");
            strcat(p->detail, v[i].sentence);
            for (int k = 0; k < WSC_NINVARIANTS; k++)
                if ((sc->forbid & (1u << k)) && strcmp(v[i].invariant, WSC_INVARIANTS[k]) == 0)
                    p->forbidden = 1;
        }
    }
    wsc_runner_free(r);
}

int wsc_explore(const wsc_scenario *sc, const wsc_options *opt, wsc_exploration *out)
{
    memset(out, 0, sizeof *out);
    wsc_options o = opt ? *opt : (wsc_options){0};
    if (o.backend && strcmp(o.backend, "fake") != 0) {
        out->error = xstrdup0("the explorer runs on the in-process fake only (it replays the "
                              "scenario once per crash point)");
        return 0;
    }
    o.backend = NULL;
    /* the baseline: which round trips the first process makes */
    wsc_runner *r = wsc_runner_new(sc, &o);
    if (!r) return WS_ENOMEM;
    for (size_t i = 0; i < sc->nst && !wsc_runner_failed(r); i++) wsc_runner_exec(r, i);
    if (wsc_runner_failed(r)) {
        wsc_result res;
        wsc_runner_finish(r, &res);
        size_t len = strlen(res.report ? res.report : "") + 64;
        out->error = malloc(len);
        if (!out->error) abort();
        snprintf(out->error, len, "the scenario fails without a crash:\n%s",
                 res.report ? res.report : "");
        wsc_result_free(&res);
        wsc_runner_free(r);
        return 0;
    }
    ws_sim *sim = wsc_runner_sim(r);
    size_t nrt = ws_sim_round_trip_count(sim);
    for (size_t i = 0; i < nrt; i++) {
        ws_rt_info rt;
        ws_sim_round_trip(sim, i, &rt);
        /* the first process only; a subscriber connection only ever sends SUBSCRIBE,
         * inside the subscribe step, before any fault could be armed on it */
        if (rt.incarnation != 1 || strncmp(rt.conn, "subscriber", 10) == 0) continue;
        for (size_t k = 0; k <= rt.n; k++) {
            out->points = realloc(out->points, (out->npoints + 1) * sizeof *out->points);
            if (!out->points) abort();
            wsc_crash_point *p = &out->points[out->npoints++];
            memset(p, 0, sizeof *p);
            snprintf(p->conn, sizeof p->conn, "%s", rt.conn);
            p->round_trip = rt.index;
            /* k = 0 .. n-1: before command k+1; k = n: all applied, replies lost */
            p->command = k < rt.n ? k + 1 : 0;
            p->commands = rt.n;
            p->command_text = xstrdup0(rt.commands[k < rt.n ? k : rt.n - 1]);
        }
    }
    wsc_runner_free(r);
    o.no_trace_text = 1; /* the points' runs are classified, never printed */
    for (size_t i = 0; i < out->npoints; i++) {
        wsc_crash_point *p = &out->points[i];
        explore_point(sc, &o, p);
        if (!strcmp(p->verdict, "fine")) out->fine++;
        else if (!strcmp(p->verdict, "doubled")) out->doubled++;
        else if (!strcmp(p->verdict, "lost")) out->lost++;
        else if (!strcmp(p->verdict, "split")) out->split++;
        else if (!strcmp(p->verdict, "leaked")) out->leaked++;
        else if (!strcmp(p->verdict, "stranded")) out->stranded++;
        else out->other++;
        if (p->forbidden) out->forbidden++;
    }
    return 0;
}

void wsc_exploration_free(wsc_exploration *ex)
{
    for (size_t i = 0; i < ex->npoints; i++) {
        free(ex->points[i].command_text);
        free(ex->points[i].detail);
    }
    free(ex->points);
    free(ex->error);
    memset(ex, 0, sizeof *ex);
}
