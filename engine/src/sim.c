/* sim.c -- the world of a simulation, the top of the consumer model: the server (an owned
 * fake or a real one), the consumer process with its two connections, its start, crashes,
 * shutdown and restarts, the public clock, and the simulation's end.  The services every
 * part uses (sending, the clock, the generator, the lineage) are runtime.c's. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "sim_int.h"

/* ----- The world ----------------------------------------------------------------------- */

/* The wall clock in ms: a real server's simulation starts its clock there. */
static int64_t wall_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

fr_server *ws_sim_fake(ws_sim *sim) { return sim->fake; }
int ws_sim_is_real(const ws_sim *sim) { return sim->fake == NULL; }
int ws_sim_dead(const ws_sim *sim) { return sim->dead; }
unsigned ws_sim_incarnation(const ws_sim *sim) { return sim->incarnation; }
ws_conn *ws_sim_reader(ws_sim *sim) { return sim->reader; }
ws_conn *ws_sim_window(ws_sim *sim) { return sim->window; }
ws_sim_counts ws_sim_get_counts(const ws_sim *sim) { return sim->counts; }

/* ----- Connections ------------------------------------------------------------------------- */

/* A connection to the simulation's server labelled label, through the fault layer when
 * faulty (and faults are on); NULL when out of memory. */
static ws_conn *connect_one(ws_sim *sim, const char *label, int faulty)
{
    ws_conn *c = sim->fake ? ws_conn_fake(sim->fake)
                           : ws_conn_open(sim->backend, sim->cfg.timeout_ms);
    if (!c) return NULL;
    if (faulty && !sim->cfg.no_faults) c = ws_conn_faulty(c);
    if (!c) return NULL;
    ws_conn_set_label(c, label);
    return c;
}

/* Opens the process's two connections; labels carry the incarnation after the first. */
static int process_start(ws_sim *sim)
{
    char rl[32], wl[32];
    sim->incarnation++;
    if (sim->incarnation == 1) {
        wsi_snprintf(rl, sizeof rl, "reader");
        wsi_snprintf(wl, sizeof wl, "window");
    } else {
        wsi_snprintf(rl, sizeof rl, "reader.%u", sim->incarnation);
        wsi_snprintf(wl, sizeof wl, "window.%u", sim->incarnation);
    }
    sim->reader = connect_one(sim, rl, 1);
    sim->window = connect_one(sim, wl, 1);
    if (!sim->reader || !sim->window) return wsi_fail(sim, WS_ENOMEM, "out of memory");
    if (ws_conn_dead(sim->reader) || ws_conn_dead(sim->window)) {
        return wsi_fail(sim, WS_ECONNECT, "cannot reach the server: %s",
                        ws_conn_errstr(ws_conn_dead(sim->reader) ? sim->reader
                                                                 : sim->window));
    }
    sim->dead = 0;
    /* a process id as Linux hands them out (2 .. 4194303), and its per-process counters */
    sim->pid = (uint32_t)(2 + wsi_rand(sim) % 4194302u);
    sim->claims = 0;
    sim->auto_consumers = 0;
    for (size_t i = 0; i < sim->nsubs; i++) {
        int rc = wsi_sub_start(sim->subs[i]);
        if (rc) return rc;
    }
    return 0;
}

/* A new simulation on its backend, with its admin connection and a running process. */
ws_sim *ws_sim_new(const ws_sim_config *cfg)
{
    ws_sim *sim = wsi_xcalloc(1, sizeof *sim);
    ws_sim_config d = {0};
    sim->cfg = cfg ? *cfg : d;
    sim->rng = sim->cfg.seed;
    const char *b = sim->cfg.backend;
    if (!b || strcmp(b, "fake") == 0) {
        fr_config fc = fr_config_default();
        fc.seed = sim->cfg.seed ? sim->cfg.seed : 1;
        if (sim->cfg.start_ms) fc.start_ms = sim->cfg.start_ms;
        fc.cluster_enabled = sim->cfg.cluster;
        if (sim->cfg.reuse)
            sim->fake = fr_server_reset(sim->cfg.reuse, &fc) == 0 ? sim->cfg.reuse : NULL;
        else
            sim->fake = fr_server_new(&fc);
        if (!sim->fake) {
            wsi_free(sim);
            return NULL;
        }
        sim->backend = wsi_xstrdup("fake");
    } else {
        sim->backend = wsi_xstrdup(b);
        sim->now_ms = wall_ms();
    }
    sim->cfg.backend = sim->backend;
    sim->admin = connect_one(sim, "admin", 0);
    if (!sim->admin) {
        ws_sim_free(sim);
        return NULL;
    }
    if (ws_conn_dead(sim->admin)) {
        wsi_fail(sim, WS_ECONNECT, "cannot reach the server: %s",
                 ws_conn_errstr(sim->admin));
        sim->dead = 1;
        return sim;
    }
    wsi_api_end(sim, process_start(sim));
    return sim;
}

/* Ends the process at once: records it (`how`: "crashed", "stopped"; why: into the trace)
 * and frees every window, segment and timer, marking outstanding deliveries dead. */
static void process_end(ws_sim *sim, const char *how, const char *why)
{
    if (sim->dead) return;
    wsi_process_end(sim, how, why);
    wsi_process_gone(sim);
}

/* A graceful shutdown: every window drains (or its drain loses the race with the pool's
 * QUIT and sends nothing), then the process stops (its timers die). */
static int shutdown_process(ws_sim *sim, int drains_lost)
{
    if (sim->dead) return wsi_fail(sim, WS_EDEAD, "the consumer is dead already");
    /* The framework drains each window as its subscription is dropped, on a task nothing
     * awaits (source.rs Drop for PipelinedSubscriber @ 0010e47), and then shuts its brokers
     * down, the pool's QUIT among them (app/run.rs teardown @ 042b614): the drain reaches
     * Redis if it wins that race, and sends nothing if it loses. */
    if (drains_lost) {
        wsi_trace_note(sim, "-- the consumer process %u shuts down: its windows' drains lose "
                       "the race with the pool's QUIT, and nothing they owe reaches Redis\n",
                       sim->incarnation);
    } else {
        wsi_trace_note(sim, "-- the consumer process %u shuts down: its windows drain\n",
                       sim->incarnation);
    }
    for (size_t i = 0; i < sim->nsubs && !sim->dead && !drains_lost; i++)
        if (!sim->subs[i]->stopped) wsi_flush(sim->subs[i], "shutdown");
    if (sim->dead) return wsi_api_end(sim, WS_ECRASHED);
    if (sim->ntimers)
        wsi_trace_note(sim, "-- %zu delayed cop%s die%s with the process\n", sim->ntimers,
                       sim->ntimers == 1 ? "y" : "ies", sim->ntimers == 1 ? "s" : "");
    char why[160];
    wsi_snprintf(why, sizeof why, "graceful shutdown at %lld ms", (long long)wsi_now(sim));
    process_end(sim, "stopped", why);
    return 0;
}

int ws_sim_shutdown(ws_sim *sim) { return shutdown_process(sim, 0); }

int ws_sim_shutdown_drains_lost(ws_sim *sim) { return shutdown_process(sim, 1); }

/* Crashes the process between steps. */
int ws_sim_crash(ws_sim *sim)
{
    if (sim->dead) return wsi_fail(sim, WS_EDEAD, "the consumer is dead already");
    char why[160];
    wsi_snprintf(why, sizeof why, "crash between steps (ws_sim_crash) at %lld ms",
             (long long)wsi_now(sim));
    process_end(sim, "crashed", why);
    return 0;
}

/* Starts a new process (crashing the running one first): subscriptions start again. */
int ws_sim_restart(ws_sim *sim)
{
    if (!sim->dead) process_end(sim, "crashed", "stopped for a restart");
    wsi_trace_note(sim, "-- the consumer process %u starts\n", sim->incarnation + 1);
    return wsi_api_end(sim, process_start(sim));
}

int ws_sim_advance(ws_sim *sim, int64_t ms) { return wsi_api_end(sim, wsi_advance(sim, ms)); }

/* Frees the simulation and every record it kept. */
void ws_sim_free(ws_sim *sim)
{
    if (!sim) return;
    for (size_t i = 0; i < sim->nsubs; i++) wsi_sub_free(sim->subs[i]);
    wsi_free(sim->subs);
    wsi_timers_free(sim);
    wsi_free(sim->timers);
    for (size_t i = 0; i < sim->ndl; i++) {
        ws_delivery *d = sim->dl[i];
        /* the record, its id, fields and effect list are in the records arena */
        if (d->shown != d->id) wsi_free((char *)d->shown);
        wsi_free(d->member);
        wsi_free(d->reply);
        for (size_t j = 0; j < d->nbound; j++) wsi_free((char *)d->bound[j].key);
        wsi_free(d->bound);
        for (size_t j = 0; j < d->neffects; j++) wsi_cmd_free(d->effects[j].cmd);
    }
    wsi_free(sim->dl);
    for (size_t i = 0; i < sim->nproduced; i++) {
        /* key, payload and id: one block in the records arena */
        if (sim->produced[i].shown != sim->produced[i].id) wsi_free((char *)sim->produced[i].shown);
    }
    wsi_free(sim->produced);
    wsi_free(sim->lineage); /* the copies' ids are in the records arena */
    wsi_strmap_free(&sim->produced_by_id);
    wsi_strmap_free(&sim->produced_by_payload);
    wsi_strmap_free(&sim->lineage_by_id);
    wsi_ck_free(sim);
    wsi_strmap_free(&sim->produced_per_key);
    wsi_strmap_free(&sim->produced_last);
    for (size_t i = 0; i < sim->nrecs; i++) wsi_free(sim->recs[i].text);
    wsi_free(sim->recs);
    for (size_t i = 0; i < sim->nflushes; i++) {
        /* dl and the commands' arguments and texts are in the records arena */
        wsi_free(sim->flushes[i].body);
        for (size_t k = 0; k < sim->flushes[i].ncmds; k++)
            wsi_free((char *)sim->flushes[i].cmds[k].reply);
        wsi_free(sim->flushes[i].cmds);
    }
    wsi_free(sim->flushes);
    for (size_t i = 0; i < sim->nviol * 3; i++) wsi_free(sim->viol_text[i]);
    for (size_t i = 0; i < sim->ncrashes; i++) wsi_free(sim->crashes[i]);
    wsi_free(sim->crashes);
    wsi_free(sim->rts);  /* each round trip's block is in the records arena */
    wsi_free(sim->pubs); /* channels and payloads too */
    for (size_t i = 0; i < sim->nwarnings; i++) wsi_free(sim->warnings[i]);
    wsi_free(sim->warnings);
    if (sim->table) fr_server_free(sim->table);
    wsi_free(sim->viol_text);
    wsi_free(sim->viol);
    wsi_free(sim->viol_root);
    ws_conn_close(sim->reader);
    ws_conn_close(sim->window);
    ws_conn_close(sim->admin);
    if (sim->fake && sim->fake != sim->cfg.reuse) fr_server_free(sim->fake);
    wsi_free(sim->backend);
    wsi_free(sim->scratch.p);
    wsi_arena_free(&sim->records);
    wsi_free(sim);
}
