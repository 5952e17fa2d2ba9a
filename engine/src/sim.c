/* sim.c -- the world of a simulation: the server (an owned fake or a real one), the
 * clock, the seeded generator, the admin connection, the consumer process with its two
 * connections, crashes and restarts, retry timers, what was produced and the lineage of
 * retry copies.  Round trips of the consumer all go through wsi_send, which labels each
 * command with the delivery it came from and turns a fatal fault into a crash. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fnmatch.h>
#include <time.h>

#include "sim_int.h"

/* ----- Errors and randomness -------------------------------------------------------------- */

int wsi_fail(ws_sim *sim, int code, const char *fmt, ...)
{
    sim->err = code;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(sim->errstr, sizeof sim->errstr, fmt, ap);
    va_end(ap);
    return code;
}

int ws_sim_err(const ws_sim *sim) { return sim->err; }
const char *ws_sim_errstr(const ws_sim *sim) { return sim->errstr; }

/* splitmix64: small, fast, and the same numbers on every machine. */
uint64_t wsi_rand(ws_sim *sim)
{
    uint64_t z = (sim->rng += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

/* ----- Clock ------------------------------------------------------------------------------ */

static int64_t wall_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

int64_t wsi_now(const ws_sim *sim) { return sim->fake ? fr_clock_now(sim->fake) : sim->now_ms; }
int64_t ws_sim_now(const ws_sim *sim) { return wsi_now(sim); }

fr_server *ws_sim_fake(ws_sim *sim) { return sim->fake; }
int ws_sim_is_real(const ws_sim *sim) { return sim->fake == NULL; }
int ws_sim_dead(const ws_sim *sim) { return sim->dead; }
unsigned ws_sim_incarnation(const ws_sim *sim) { return sim->incarnation; }
ws_conn *ws_sim_reader(ws_sim *sim) { return sim->reader; }
ws_conn *ws_sim_window(ws_sim *sim) { return sim->window; }
ws_sim_counts ws_sim_get_counts(const ws_sim *sim) { return sim->counts; }

/* ----- Connections ------------------------------------------------------------------------- */

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
        snprintf(rl, sizeof rl, "reader");
        snprintf(wl, sizeof wl, "window");
    } else {
        snprintf(rl, sizeof rl, "reader.%u", sim->incarnation);
        snprintf(wl, sizeof wl, "window.%u", sim->incarnation);
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

ws_sim *ws_sim_new(const ws_sim_config *cfg)
{
    ws_sim *sim = calloc(1, sizeof *sim);
    if (!sim) return NULL;
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
            free(sim);
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
    process_start(sim);
    return sim;
}

static void timers_free(ws_sim *sim)
{
    for (size_t i = 0; i < sim->ntimers; i++) wsi_cmd_free(sim->timers[i].cmd);
    sim->ntimers = 0;
}

/* Ends the process: frees every window, segment and timer, marks outstanding deliveries
 * dead, closes the connections; `how` ("crashed", "stopped") and why go into the trace. */
static void process_end(ws_sim *sim, const char *how, const char *why)
{
    if (sim->dead) return;
    snprintf(sim->last_crash, sizeof sim->last_crash, "%s", why);
    if (sim->ncrashes < sim->incarnation) {
        sim->crashes = wsi_xrealloc(sim->crashes, sim->incarnation * sizeof *sim->crashes);
        while (sim->ncrashes < sim->incarnation) sim->crashes[sim->ncrashes++] = NULL;
    }
    free(sim->crashes[sim->incarnation - 1]);
    sim->crashes[sim->incarnation - 1] = wsi_xstrdup(why);
    wsi_trace_note(sim, "-- the consumer process %u %s: %s\n", sim->incarnation, how, why);
    for (size_t i = 0; i < sim->nsubs; i++) wsi_sub_reset(sim->subs[i]);
    timers_free(sim);
    ws_conn_close(sim->reader);
    ws_conn_close(sim->window);
    sim->reader = sim->window = NULL;
    sim->dead = 1;
}

void wsi_process_crash(ws_sim *sim, const char *why) { process_end(sim, "crashed", why); }

int ws_sim_shutdown(ws_sim *sim)
{
    if (sim->dead) return wsi_fail(sim, WS_EDEAD, "the consumer is dead already");
    wsi_trace_note(sim, "-- the consumer process %u shuts down: its windows drain\n",
                   sim->incarnation);
    /* the framework drains each window as its subscription is dropped (source.rs) */
    for (size_t i = 0; i < sim->nsubs && !sim->dead; i++)
        if (!sim->subs[i]->stopped) wsi_flush(sim->subs[i], "shutdown");
    if (sim->dead) return WS_ECRASHED;
    if (sim->ntimers)
        wsi_trace_note(sim, "-- %zu delayed cop%s die%s with the process\n", sim->ntimers,
                       sim->ntimers == 1 ? "y" : "ies", sim->ntimers == 1 ? "s" : "");
    char why[160];
    snprintf(why, sizeof why, "graceful shutdown at %lld ms", (long long)wsi_now(sim));
    process_end(sim, "stopped", why);
    return 0;
}

int ws_sim_crash(ws_sim *sim)
{
    if (sim->dead) return wsi_fail(sim, WS_EDEAD, "the consumer is dead already");
    char why[160];
    snprintf(why, sizeof why, "crash between steps (ws_sim_crash) at %lld ms",
             (long long)wsi_now(sim));
    wsi_process_crash(sim, why);
    return 0;
}

int ws_sim_restart(ws_sim *sim)
{
    if (!sim->dead) wsi_process_crash(sim, "stopped for a restart");
    wsi_trace_note(sim, "-- the consumer process %u starts\n", sim->incarnation + 1);
    return process_start(sim);
}

void ws_sim_free(ws_sim *sim)
{
    if (!sim) return;
    for (size_t i = 0; i < sim->nsubs; i++) wsi_sub_free(sim->subs[i]);
    free(sim->subs);
    timers_free(sim);
    free(sim->timers);
    for (size_t i = 0; i < sim->ndl; i++) {
        ws_delivery *d = sim->dl[i];
        /* the record, its id, fields and effect list are in the records arena */
        if (d->shown != d->id) free((char *)d->shown);
        free(d->member);
        free(d->reply);
        for (size_t j = 0; j < d->nbound; j++) free((char *)d->bound[j].key);
        free(d->bound);
        for (size_t j = 0; j < d->neffects; j++) wsi_cmd_free(d->effects[j].cmd);
    }
    free(sim->dl);
    for (size_t i = 0; i < sim->nproduced; i++) {
    {
        /* key, payload and id: one block in the records arena */
        if (sim->produced[i].shown != sim->produced[i].id) free((char *)sim->produced[i].shown);
    }
    }
    free(sim->produced);
    free(sim->lineage); /* the copies' ids are in the records arena */
    wsi_strmap_free(&sim->produced_by_id);
    wsi_strmap_free(&sim->produced_by_payload);
    wsi_strmap_free(&sim->lineage_by_id);
    wsi_ck_free(sim);
    wsi_strmap_free(&sim->produced_per_key);
    wsi_strmap_free(&sim->produced_last);
    for (size_t i = 0; i < sim->nrecs; i++) free(sim->recs[i].text);
    free(sim->recs);
    for (size_t i = 0; i < sim->nflushes; i++) {
        /* dl and the commands' arguments and texts are in the records arena */
        free(sim->flushes[i].body);
        for (size_t k = 0; k < sim->flushes[i].ncmds; k++)
            free((char *)sim->flushes[i].cmds[k].reply);
        free(sim->flushes[i].cmds);
    }
    free(sim->flushes);
    for (size_t i = 0; i < sim->nviol * 3; i++) free(sim->viol_text[i]);
    for (size_t i = 0; i < sim->ncrashes; i++) free(sim->crashes[i]);
    free(sim->crashes);
    free(sim->rts);  /* each round trip's block is in the records arena */
    free(sim->pubs); /* channels and payloads too */
    for (size_t i = 0; i < sim->nwarnings; i++) free(sim->warnings[i]);
    free(sim->warnings);
    if (sim->table) fr_server_free(sim->table);
    free(sim->viol_text);
    free(sim->viol);
    free(sim->viol_root);
    ws_conn_close(sim->reader);
    ws_conn_close(sim->window);
    ws_conn_close(sim->admin);
    if (sim->fake && sim->fake != sim->cfg.reuse) fr_server_free(sim->fake);
    free(sim->backend);
    free(sim->scratch.p);
    wsi_arena_free(&sim->records);
    free(sim);
}

void *wsi_rec_alloc(ws_sim *sim, size_t n)
{
    void *p = wsi_arena_alloc(&sim->records, n);
    if (!p) {
        fputs("wsim: out of memory\n", stderr);
        abort();
    }
    memset(p, 0, n);
    return p;
}

char *wsi_rec_memdup(ws_sim *sim, const char *p, size_t len)
{
    char *s = wsi_rec_alloc(sim, len + 1);
    if (len) memcpy(s, p, len);
    return s;
}

wsi_cmd *wsi_rec_cmd(ws_sim *sim, const wsi_cmd *c)
{
    size_t bytes = 0;
    for (int i = 0; i < c->argc; i++) bytes += c->argvlen[i] + 1;
    size_t n = (size_t)c->argc;
    char *block = wsi_rec_alloc(sim, sizeof(wsi_cmd) + n * (sizeof(char *) + sizeof(size_t)) +
                                         bytes);
    wsi_cmd *d = (wsi_cmd *)(void *)block;
    d->argc = c->argc;
    d->argv = (char **)(void *)(block + sizeof(wsi_cmd));
    d->argvlen = (size_t *)(void *)(block + sizeof(wsi_cmd) + n * sizeof(char *));
    char *text = block + sizeof(wsi_cmd) + n * (sizeof(char *) + sizeof(size_t));
    for (size_t i = 0; i < n; i++) {
        if (c->argvlen[i]) memcpy(text, c->argv[i], c->argvlen[i]);
        d->argv[i] = text;
        d->argvlen[i] = c->argvlen[i];
        text += c->argvlen[i] + 1; /* NUL from the zeroed block */
    }
    return d;
}

/* ----- Sending ------------------------------------------------------------------------------ */

/* What the connection's round trip was, as its trace hook would have seen it: read back
 * from the connection once ws_pipeline returned (its replies and fates live until c's next
 * round trip). */
static ws_round_trip round_trip_of(const ws_conn *c, const char *cause, size_t n,
                                   const fr_command *fc, int status)
{
    return (ws_round_trip){.conn = c->label, .cause = cause ? cause : "",
                           .index = c->stats.round_trips, .status = status, .note = c->note,
                           .n = n, .commands = fc, .replies = c->rbuf, .fates = c->fbuf};
}

int wsi_send(ws_sim *sim, ws_conn *c, size_t n, wsi_cmd *const *cmds, const wsi_annot *an,
             const fr_reply **replies)
{
    if (n == 0) return 0;
    const char *cause = an->cause;
    /* the admin connection is not the consumer's: it outlives the consumer's crashes */
    if (!c || (sim->dead && c != sim->admin))
        return wsi_fail(sim, WS_EDEAD, "the consumer process is dead");
    fr_command stackc[16];
    fr_command *fc = n <= 16 ? stackc : wsi_xmalloc(n * sizeof *fc);
    for (size_t i = 0; i < n; i++)
        fc[i] = (fr_command){cmds[i]->argc, (const char *const *)cmds[i]->argv,
                             cmds[i]->argvlen};
    uint64_t before = c->stats.round_trips;
    int rc = ws_pipeline(c, cause, n, fc, replies);
    if (c->stats.round_trips != before) { /* it left (a refused or failed one too) */
        ws_round_trip rt = round_trip_of(c, cause, n, fc, rc);
        wsi_eff small[16];
        wsi_eff *eff = n <= 16 ? small : wsi_xmalloc(n * sizeof *eff);
        wsi_effective(&rt, an, eff);
        wsi_ledger(sim, &rt, cmds, an, eff);
        if (!sim->quiet && !sim->cfg.no_trace) wsi_trace_round_trip(sim, &rt, cmds, an, eff);
        if (eff != small) free(eff);
    }
    if (fc != stackc) free(fc);
    int role0 = wsi_annot_role(an, 0);
    if (c != sim->admin) {
        sim->counts.round_trips++;
        if (an->flush) sim->counts.flush_round_trips++;
        else if (role0 == WSI_ROLE_READ || role0 == WSI_ROLE_SWEEP)
            sim->counts.read_round_trips++;
        else if (role0 != WSI_ROLE_SUBSCRIBE)
            sim->counts.pool_round_trips++;
    }
    if (rc == 0) return 0;
    if (rc == WS_EREFUSED)
        return wsi_fail(sim, rc, "%s refused to send the round trip (%s)", ws_conn_label(c),
                        cause);
    if (c == sim->admin)
        return wsi_fail(sim, rc, "the admin connection failed: %s", ws_conn_errstr(c));
    if (ws_conn_dead(c)) {
        char why[160];
        snprintf(why, sizeof why, "%s round trip %llu (%s): %s", ws_conn_label(c),
                 (unsigned long long)ws_conn_get_stats(c).round_trips, cause,
                 ws_conn_errstr(c));
        wsi_process_crash(sim, why);
        wsi_fail(sim, WS_ECRASHED, "the consumer crashed: %s", why);
        return WS_ECRASHED;
    }
    return wsi_fail(sim, rc, "%s: %s", ws_conn_label(c), ws_conn_errstr(c));
}

/* ----- The admin connection ----------------------------------------------------------------- */

int ws_sim_command(ws_sim *sim, int argc, const char *const *argv, const size_t *argvlen,
                   const fr_reply **reply)
{
    return ws_sim_command_as(sim, "setup", argc, argv, argvlen, reply);
}

int ws_sim_command_as(ws_sim *sim, const char *cause, int argc, const char *const *argv,
                      const size_t *argvlen, const fr_reply **reply)
{
    if (argc < 1 || !argv) return wsi_fail(sim, WS_EINVAL, "ws_sim_command: no command");
    wsi_cmd *c = wsi_cmd_copy(argc, argv, argvlen);
    const fr_reply *r = NULL;
    int rc = wsi_send(sim, sim->admin, 1, &c, &(wsi_annot){.cause = cause, .role = WSI_ROLE_SETUP},
                      &r);
    wsi_cmd_free(c);
    if (reply) *reply = r;
    return rc;
}

int ws_sim_command_line(ws_sim *sim, const char *line, const fr_reply **reply)
{
    wsi_cmd *c = wsi_cmd_line(line);
    if (!c) return wsi_fail(sim, WS_EINVAL, "cannot split the command line: %s", line);
    int rc = ws_sim_command(sim, c->argc, (const char *const *)c->argv, c->argvlen, reply);
    wsi_cmd_free(c);
    return rc;
}

/* An index key "<key> NUL <part>" for the produced-entry maps, built on the stack when it
 * fits: the maps are looked up at every delivery and every produce. */
typedef struct index_key {
    char *p;          /* the key: small, or a heap block */
    size_t len;       /* its length, part included */
    size_t base;      /* where the part starts */
    size_t cap;       /* room at p */
    char small[192];  /* the usual key's room */
} index_key;

static void index_key_start(index_key *k, const char *key)
{
    size_t n = strlen(key) + 1;
    k->p = k->small;
    k->cap = sizeof k->small;
    if (n > k->cap) {
        k->cap = n * 2;
        k->p = wsi_xmalloc(k->cap);
    }
    memcpy(k->p, key, n);
    k->base = k->len = n;
}

/* Sets the part after the key (replacing any earlier one). */
static void index_key_part(index_key *k, const char *part, size_t len)
{
    if (k->base + len > k->cap) {
        size_t cap = k->base + len;
        char *p = wsi_xmalloc(cap);
        memcpy(p, k->p, k->base);
        if (k->p != k->small) free(k->p);
        k->p = p;
        k->cap = cap;
    }
    if (len) memcpy(k->p + k->base, part, len);
    k->len = k->base + len;
}

static void index_key_done(index_key *k)
{
    if (k->p != k->small) free(k->p);
}

int ws_sim_produce(ws_sim *sim, int form, const char *key, const char *payload,
                   size_t payload_len, const ws_header *headers, size_t nheaders, char **id)
{
    if (id) *id = NULL;
    if (!key || (!payload && payload_len))
        return wsi_fail(sim, WS_EINVAL, "ws_sim_produce: no key or payload");
    if (!payload) payload = "";
    if (form < WS_FORM_STREAM || form > WS_FORM_CHANNEL)
        return wsi_fail(sim, WS_EINVAL, "ws_sim_produce: unknown form %d", form);
    /* the producer publishes as a handler's publish does: the same command */
    wsi_cmd *c = wsi_publish_cmd(form, key, payload, payload_len, headers, nheaders);
    const fr_reply *r = NULL;
    int rc = wsi_send(sim, sim->admin, 1, &c,
                      &(wsi_annot){.cause = "produce", .role = WSI_ROLE_SETUP}, &r);
    if (rc == 0 && r->type == FR_REPLY_ERROR)
        rc = wsi_fail(sim, WS_EINVAL, "producing into %s failed: %s", key, r->str);
    if (rc) {
        wsi_cmd_free(c);
        return rc;
    }
    /* a stream entry is known by the id XADD answered, a list or channel entry by its
     * frame, the command's last argument */
    const char *eid = form == WS_FORM_STREAM ? r->str : c->argv[2];
    size_t eid_len = form == WS_FORM_STREAM ? r->len : c->argvlen[2];
    if (sim->nproduced == sim->capproduced) {
        sim->capproduced = sim->capproduced ? sim->capproduced * 2 : 16;
        sim->produced = wsi_xrealloc(sim->produced, sim->capproduced * sizeof *sim->produced);
    }
    wsi_produced *p = &sim->produced[sim->nproduced++];
    p->form = form;
    /* key, payload and id in one block, each NUL-terminated (p->key owns it) */
    size_t key_len = strlen(key);
    char *block = wsi_rec_alloc(sim, key_len + 1 + payload_len + 1 + eid_len + 1);
    p->key = block;
    memcpy(p->key, key, key_len + 1);
    p->payload = p->key + key_len + 1;
    if (payload_len) memcpy(p->payload, payload, payload_len);
    p->payload[payload_len] = '\0';
    p->payload_len = payload_len;
    p->id = p->payload + payload_len + 1;
    if (eid_len) memcpy(p->id, eid, eid_len);
    p->id[eid_len] = '\0';
    p->id_len = eid_len;
    p->shown = wsi_shown(p->id, p->id_len);
    wsi_cmd_free(c);
    if (id) *id = wsi_xmemdup(p->id, p->id_len);
    /* indexes: by key and id, and (streams) by key and payload, first one kept */
    index_key k;
    index_key_start(&k, key);
    index_key_part(&k, p->id, p->id_len);
    wsi_strmap_put(&sim->produced_by_id, k.p, k.len, sim->nproduced);
    index_key_part(&k, p->payload, p->payload_len);
    size_t first;
    if (form == WS_FORM_STREAM && !wsi_strmap_get(&sim->produced_by_payload, k.p, k.len, &first))
        wsi_strmap_put(&sim->produced_by_payload, k.p, k.len, sim->nproduced);
    else if (form == WS_FORM_STREAM)
        sim->payload_twice = 1;
    index_key_done(&k);
    if (form == WS_FORM_STREAM) {
        size_t made = 0;
        wsi_strmap_get(&sim->produced_per_key, key, key_len, &made);
        wsi_strmap_put(&sim->produced_per_key, key, key_len, made + 1);
        wsi_strmap_put(&sim->produced_last, key, key_len, sim->nproduced);
    }
    return 0;
}

/* ----- Publishing ------------------------------------------------------------------------- */

wsi_cmd *wsi_publish_cmd(int form, const char *key, const char *payload, size_t len,
                         const ws_header *h, size_t nh)
{
    wsi_cmdb b = {0};
    if (form == WS_FORM_STREAM) {
        wsi_cmdb_adds(&b, "XADD");
        wsi_cmdb_adds(&b, key);
        wsi_cmdb_adds(&b, "*");
        wsi_cmdb_adds(&b, "_payload");
        wsi_cmdb_add(&b, payload, len);
        for (size_t i = 0; i < nh; i++) {
            wsi_text name = {0};
            wsi_text_printf(&name, "h:%s", h[i].name);
            wsi_cmdb_add(&b, name.p, name.len);
            free(name.p);
            size_t vl = h[i].value_len ? h[i].value_len : (h[i].value ? strlen(h[i].value) : 0);
            wsi_cmdb_add(&b, h[i].value ? h[i].value : "", vl);
        }
    } else {
        size_t flen;
        char *frame = wsi_frame_encode(payload, len, h, nh, &flen);
        wsi_cmdb_adds(&b, form == WS_FORM_CHANNEL ? "PUBLISH" : "LPUSH");
        wsi_cmdb_adds(&b, key);
        wsi_cmdb_add(&b, frame, flen);
        free(frame);
    }
    return wsi_cmdb_done(&b);
}

/* ----- Deliveries and lineage ------------------------------------------------------------------ */

ws_delivery *wsi_delivery_new(ws_sim *sim, ws_sub *sub)
{
    if (sim->ndl == sim->capdl) {
        sim->capdl = sim->capdl ? sim->capdl * 2 : 64;
        sim->dl = wsi_xrealloc(sim->dl, sim->capdl * sizeof *sim->dl);
    }
    ws_delivery *d = wsi_rec_alloc(sim, sizeof *d);
    d->sub = sub;
    d->seq = sim->ndl + 1;
    d->incarnation = sim->incarnation;
    d->count = 1;
    sim->dl[sim->ndl++] = d;
    sim->counts.deliveries++;
    return d;
}

void wsi_lineage_add(ws_sim *sim, ws_delivery *d, const char *copy, size_t len)
{
    size_t root = wsi_root_of(sim, d);
    if (!root) return;
    if (sim->nlineage == sim->caplineage) {
        sim->caplineage = sim->caplineage ? sim->caplineage * 2 : 16;
        sim->lineage = wsi_xrealloc(sim->lineage, sim->caplineage * sizeof *sim->lineage);
    }
    sim->lineage[sim->nlineage].key = d->sub->key;
    sim->lineage[sim->nlineage].id = wsi_rec_memdup(sim, copy, len);
    sim->lineage[sim->nlineage].len = len;
    sim->lineage[sim->nlineage].root = root;
    sim->nlineage++;
    index_key k;
    index_key_start(&k, d->sub->key);
    index_key_part(&k, copy, len);
    wsi_strmap_put(&sim->lineage_by_id, k.p, k.len, root);
    index_key_done(&k);
}

size_t wsi_root_of(ws_sim *sim, ws_delivery *d)
{
    if (d->root) return d->root;
    const char *key = d->sub->key;
    int stream = d->sub->cfg.form == WS_FORM_STREAM;
    int pattern = d->sub->cfg.form == WS_FORM_CHANNEL && d->sub->cfg.pattern;
    size_t found;
    if (pattern) {
        /* a pattern subscription hears every channel its glob matches */
        for (size_t i = 0; i < sim->nproduced; i++) {
            wsi_produced *p = &sim->produced[i];
            if (fnmatch(key, p->key, 0) == 0 && p->id_len == d->id_len &&
                memcmp(p->id, d->id, d->id_len) == 0)
                return d->root = i + 1;
        }
        return 0;
    }
    index_key k;
    index_key_start(&k, key);
    index_key_part(&k, d->id, d->id_len);
    int hit = wsi_strmap_get(&sim->produced_by_id, k.p, k.len, &found);
    if (!hit) hit = wsi_strmap_get(&sim->lineage_by_id, k.p, k.len, &found);
    if (!hit && stream) {
        /* A copy whose XADD reply was never read (a crash, lost replies): tell it by its
         * payload, which the copy keeps. */
        size_t plen;
        const char *pl = ws_delivery_payload(d, &plen);
        if (pl) index_key_part(&k, pl, plen);
        hit = pl && wsi_strmap_get(&sim->produced_by_payload, k.p, k.len, &found);
    }
    index_key_done(&k);
    return hit ? (d->root = found) : 0;
}

/* ----- Timers ------------------------------------------------------------------------------------ */

void wsi_timer_add(ws_sim *sim, ws_sub *sub, ws_delivery *d, int64_t due, wsi_cmd *cmd)
{
    if (sim->ntimers == sim->captimers) {
        sim->captimers = sim->captimers ? sim->captimers * 2 : 8;
        sim->timers = wsi_xrealloc(sim->timers, sim->captimers * sizeof *sim->timers);
    }
    sim->timers[sim->ntimers++] = (wsi_timer){due, ++sim->timer_order, sub, d, cmd};
}

/* Fires the earliest due timer; 1 if one fired, 0 if none is due, < 0 on failure. */
static int fire_one_timer(ws_sim *sim)
{
    int64_t now = wsi_now(sim);
    size_t best = sim->ntimers;
    for (size_t i = 0; i < sim->ntimers; i++) {
        wsi_timer *t = &sim->timers[i];
        if (t->due > now) continue;
        if (best == sim->ntimers || t->due < sim->timers[best].due ||
            (t->due == sim->timers[best].due && t->order < sim->timers[best].order))
            best = i;
    }
    if (best == sim->ntimers) return 0;
    wsi_timer t = sim->timers[best];
    sim->timers[best] = sim->timers[--sim->ntimers];
    char cause[128];
    snprintf(cause, sizeof cause, "retry timer of %s", t.d->shown);
    const fr_reply *r = NULL;
    wsi_annot an = {.cause = cause, .sub = t.sub, .role = WSI_ROLE_TIMER, .dl = t.d};
    int rc = wsi_send(sim, sim->window, 1, &t.cmd, &an, &r);
    if (rc == 0 && r->type == FR_REPLY_BULK && wsi_cmd_is(t.cmd, "XADD"))
        wsi_lineage_add(sim, t.d, r->str, r->len);
    wsi_cmd_free(t.cmd);
    return rc ? rc : 1;
}

int ws_sim_advance(ws_sim *sim, int64_t ms)
{
    if (ms < 0) return wsi_fail(sim, WS_EINVAL, "the clock does not go back (%lld ms)",
                                (long long)ms);
    if (sim->fake) {
        fr_clock_advance(sim->fake, ms);
    } else {
        struct timespec ts = {(time_t)(ms / 1000), (long)(ms % 1000) * 1000000L};
        while (nanosleep(&ts, &ts) != 0) {
        }
        sim->now_ms += ms;
    }
    wsi_trace_note(sim, "-- the clock advances %lld ms\n", (long long)ms);
    int rc;
    while (!sim->dead && (rc = fire_one_timer(sim)) != 0)
        if (rc < 0) return rc;
    return 0;
}

/* ----- Warnings ------------------------------------------------------------------------------ */

size_t ws_sim_warning_count(const ws_sim *sim) { return sim->nwarnings; }
const char *ws_sim_warning(const ws_sim *sim, size_t i)
{
    return i < sim->nwarnings ? sim->warnings[i] : NULL;
}

static void warn(ws_sim *sim, const char *text)
{
    sim->warnings = wsi_xrealloc(sim->warnings, (sim->nwarnings + 1) * sizeof *sim->warnings);
    sim->warnings[sim->nwarnings++] = wsi_xstrdup(text);
    wsi_trace_note(sim, "-- warning: %s\n", text);
}

/* Warns once about the first key outside the slot of s's key, naming it. */
static int warn_key(ws_sub *s, const wsi_segment *seg, unsigned want, const char *key,
                    size_t len, const char *how)
{
    unsigned slot = fr_key_slot(key, len);
    if (slot == want) return 0;
    wsi_text t = {0};
    wsi_text_printf(&t, "the atomic segment of %s %s ", seg->owner->shown, how);
    wsi_text_arg(&t, key, len);
    wsi_text_printf(&t, " (slot %u) outside the slot of %s (%u): Redis Cluster refuses the "
                    "transaction with CROSSSLOT", slot, s->key, want);
    warn(s->sim, t.p);
    free(t.p);
    return 1;
}

void wsi_warn_crossslot(ws_sub *s, const wsi_segment *seg)
{
    ws_sim *sim = s->sim;
    if (!sim->fake && !sim->table) {
        fr_config fc = fr_config_default();
        sim->table = fr_server_new(&fc);
        if (!sim->table) return;
    }
    fr_server *table = sim->fake ? sim->fake : sim->table;
    unsigned want = fr_key_slot(s->key, strlen(s->key));
    for (size_t k = 0; k < seg->n; k++) {
        const wsi_cmd *c = seg->from[k]->effects[seg->effect[k]].cmd;
        int keys[64];
        int n = fr_command_keys(table, c->argc, (const char *const *)c->argv, c->argvlen, keys,
                                64);
        for (int i = 0; i < n; i++)
            if (warn_key(s, seg, want, c->argv[keys[i]], c->argvlen[keys[i]], "touches"))
                return;
    }
    /* The delivery's own settle goes inside the transaction too (SEMANTICS.md §4): a
     * reliable list's LREM of the processing list and ZREM of the recovery set (a
     * stream's XACK names the subscription's key itself). */
    if (s->cfg.form != WS_FORM_RELIABLE_LIST) return;
    if (warn_key(s, seg, want, s->processing, strlen(s->processing),
                 "settles through the processing list"))
        return;
    if (s->recovery)
        warn_key(s, seg, want, s->recovery, strlen(s->recovery),
                 "settles through the recovery set");
}

/* ----- Accessors ------------------------------------------------------------------------------- */

size_t ws_sim_produced_count(const ws_sim *sim) { return sim->nproduced; }
const char *ws_sim_produced_id(const ws_sim *sim, size_t i)
{
    return i >= 1 && i <= sim->nproduced ? sim->produced[i - 1].id : NULL;
}
size_t ws_sim_produced_id_size(const ws_sim *sim, size_t i)
{
    return i >= 1 && i <= sim->nproduced ? sim->produced[i - 1].id_len : 0;
}
ws_sub *ws_delivery_sub(const ws_delivery *d) { return d->sub; }
uint64_t ws_delivery_read(const ws_delivery *d) { return d->read; }
ws_outcome ws_delivery_outcome(const ws_delivery *d) { return d->outcome; }
size_t ws_delivery_root(ws_delivery *d) { return wsi_root_of(d->sub->sim, d); }
uint64_t ws_sub_flushes(const ws_sub *s) { return s->flushes; }

size_t ws_sim_published_count(const ws_sim *sim) { return sim->npubs; }

int ws_sim_published(const ws_sim *sim, size_t i, const char **channel, const char **payload,
                     size_t *payload_len)
{
    if (i >= sim->npubs) return -1;
    if (channel) *channel = sim->pubs[i].channel;
    if (payload) *payload = sim->pubs[i].payload;
    if (payload_len) *payload_len = sim->pubs[i].len;
    return 0;
}
