/* runtime.c -- the runtime's services, the layer every other part of the consumer model
 * stands on: the sticky error and the seeded generator; the clock and the retry timers;
 * sending a round trip (wsi_send: the ledger, the trace, a crash recorded) and receiving a
 * channel's messages; the admin connection and what the producer produced; the lineage
 * of retry copies; warnings.  Nothing here calls the window, the reads, the actions or
 * the subscriptions: a crash is recorded and its freeing left to the public call. */
#include <fnmatch.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "sim_int.h"

/* ----- Errors and randomness ----------------------------------------------------------------- */

/* The sticky error: code and the sentence, returned for the caller to pass on. */
int wsi_fail(ws_sim *sim, int code, const char *fmt, ...)
{
    sim->err = code;
    va_list ap;
    va_start(ap, fmt);
    wsi_vsnprintf(sim->errstr, sizeof sim->errstr, fmt, ap);
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

/* ----- Clock and timers ---------------------------------------------------------------------- */

int64_t wsi_now(const ws_sim *sim) { return sim->fake ? fr_clock_now(sim->fake) : sim->now_ms; }

int64_t ws_sim_now(const ws_sim *sim) { return wsi_now(sim); }

/* Frees every timer: the copies they owed die with the process. */
void wsi_timers_free(ws_sim *sim)
{
    for (size_t i = 0; i < sim->ntimers; i++) wsi_cmd_free(sim->timers[i].cmd);
    sim->ntimers = 0;
}

/* A timer that sends cmd through the pool when the clock reaches due. */
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
    wsi_snprintf(cause, sizeof cause, "retry timer of %s", t.d->shown);
    const fr_reply *r = NULL;
    wsi_annot an = {.cause = cause, .sub = t.sub, .role = WSI_ROLE_TIMER, .dl = t.d};
    int rc = wsi_send(sim, sim->window, 1, &t.cmd, &an, &r);
    if (rc == 0 && r->type == FR_REPLY_BULK && wsi_cmd_is(t.cmd, "XADD"))
        wsi_lineage_add(sim, t.d, r->str, r->len);
    wsi_cmd_free(t.cmd);
    return rc ? rc : 1;
}

/* Moves the clock on by ms (a real server: sleeps) and fires the timers that fell due,
 * earliest first, until one fails or the process dies. */
int wsi_advance(ws_sim *sim, int64_t ms)
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

/* ----- Sending and receiving ----------------------------------------------------------------- */

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

/* See sim_int.h.  A crash is only recorded here (wsi_process_end); the public call that
 * made the round trip frees what the process held (wsi_api_end), so nothing here calls
 * back up into the window or the subscriptions. */
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
        if (eff != small) wsi_free(eff);
    }
    if (fc != stackc) wsi_free(fc);
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
        wsi_snprintf(why, sizeof why, "%s round trip %llu (%s): %s", ws_conn_label(c),
                 (unsigned long long)ws_conn_get_stats(c).round_trips, cause,
                 ws_conn_errstr(c));
        wsi_process_end(sim, "crashed", why);
        wsi_fail(sim, WS_ECRASHED, "the consumer crashed: %s", why);
        return WS_ECRASHED;
    }
    return wsi_fail(sim, rc, "%s: %s", ws_conn_label(c), ws_conn_errstr(c));
}

/* Records the end of the consumer process (how: "crashed", "stopped"; why: where): its
 * crash point, the trace's note; its connections are closed and it is dead from now on.
 * What it held (windows, segments, timers) is freed by wsi_process_gone, at the end of
 * the public call (wsi_api_end) or at once by sim.c's own ends. */
void wsi_process_end(ws_sim *sim, const char *how, const char *why)
{
    if (sim->dead) return;
    wsi_snprintf(sim->last_crash, sizeof sim->last_crash, "%s", why);
    if (sim->ncrashes < sim->incarnation) {
        sim->crashes = wsi_xrealloc(sim->crashes, sim->incarnation * sizeof *sim->crashes);
        while (sim->ncrashes < sim->incarnation) sim->crashes[sim->ncrashes++] = NULL;
    }
    wsi_free(sim->crashes[sim->incarnation - 1]);
    sim->crashes[sim->incarnation - 1] = wsi_xstrdup(why);
    wsi_trace_note(sim, "-- the consumer process %u %s: %s\n", sim->incarnation, how, why);
    ws_conn_close(sim->reader);
    ws_conn_close(sim->window);
    sim->reader = sim->window = NULL;
    sim->dead = 1;
    sim->gone_pending = 1;
}

/* Moves the messages that arrived on a channel subscription into its buffer, waiting at
 * most wait_ms for the first (the read sets `waiting` from what it leaves behind). */
int wsi_channel_poll(ws_sub *s, int wait_ms)
{
    ws_sim *sim = s->sim;
    if (!s->conn || sim->dead) return 0;
    for (;;) {
        const fr_reply *got[64];
        size_t n = 0;
        int rc = ws_conn_pushes(s->conn, wait_ms, 64, got, &n);
        if (rc) return wsi_fail(sim, rc, "%s: %s", s->name, ws_conn_errstr(s->conn));
        for (size_t i = 0; i < n; i++) {
            const fr_reply *m = got[i];
            if (m->type != FR_REPLY_ARRAY || m->count < 3) continue;
            const fr_reply *payload = &m->elements[m->count - 1];
            if (payload->type != FR_REPLY_BULK) continue;
            if (s->nbuffered == s->capbuffered) {
                s->capbuffered = s->capbuffered ? s->capbuffered * 2 : 16;
                s->buffered = wsi_xrealloc(s->buffered, s->capbuffered * sizeof *s->buffered);
                s->buffered_len =
                    wsi_xrealloc(s->buffered_len, s->capbuffered * sizeof *s->buffered_len);
            }
            s->buffered[s->nbuffered] = wsi_xmemdup(payload->str, payload->len);
            s->buffered_len[s->nbuffered++] = payload->len;
            wsi_text t = {0};
            wsi_text_printf(&t, "-- %s receives a message: ", s->name);
            wsi_text_arg(&t, payload->str, payload->len);
            wsi_text_add(&t, "\n", 1);
            wsi_trace_note(sim, "%s", t.p);
            wsi_free(t.p);
        }
        if (n < 64) break;
        wait_ms = 0;
    }
    return 0;
}

/* Appends text to buf (size bytes, NUL-terminated, cut when full) from *at: the causes
 * of reads and writes are written at every step, without the printf machinery. */
void wsi_cause_put(char *buf, size_t size, size_t *at, const char *text)
{
    size_t n = strlen(text);
    if (*at + n >= size) n = size - 1 - *at;
    memcpy(buf + *at, text, n);
    *at += n;
    buf[*at] = '\0';
}

/* "<a><n><b><name>", e.g. "read 3 of main". */
void wsi_cause_numbered(char *buf, size_t size, const char *a, uint64_t n, const char *b,
                           const char *name)
{
    char digits[25];
    digits[24] = '\0';
    size_t at = 0;
    buf[0] = '\0';
    wsi_cause_put(buf, size, &at, a);
    wsi_cause_put(buf, size, &at, wsi_decimal(digits, (long long)n));
    wsi_cause_put(buf, size, &at, b);
    wsi_cause_put(buf, size, &at, name);
}

/* ----- The admin connection and the producer ------------------------------------------------- */

/* An admin command with the cause "setup". */
int ws_sim_command(ws_sim *sim, int argc, const char *const *argv, const size_t *argvlen,
                   const fr_reply **reply)
{
    return ws_sim_command_as(sim, "setup", argc, argv, argvlen, reply);
}

/* An admin command with a cause: it never touches the consumer process. */
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

/* An admin command from a redis-cli style line; WS_EINVAL when it does not split. */
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

/* Starts k as "<key> NUL", on the stack when it fits. */
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
        if (k->p != k->small) wsi_free(k->p);
        k->p = p;
        k->cap = cap;
    }
    if (len) memcpy(k->p + k->base, part, len);
    k->len = k->base + len;
}

static void index_key_done(index_key *k)
{
    if (k->p != k->small) wsi_free(k->p);
}

static int produce(ws_sim *sim, int form, const char *key, const char *payload,
                   size_t payload_len, const ws_header *headers, size_t nheaders, int raw,
                   char **id);

int ws_sim_produce(ws_sim *sim, int form, const char *key, const char *payload,
                   size_t payload_len, const ws_header *headers, size_t nheaders, char **id)
{
    return produce(sim, form, key, payload, payload_len, headers, nheaders, 0, id);
}

int ws_sim_produce_raw(ws_sim *sim, int form, const char *key, const char *payload,
                       size_t payload_len, char **id)
{
    if (form == WS_FORM_STREAM) {
        if (id) *id = NULL;
        return wsi_fail(sim, WS_EINVAL, "ws_sim_produce_raw: a stream entry has fields, not a "
                        "bare value (%s)", key ? key : "");
    }
    return produce(sim, form, key, payload, payload_len, NULL, 0, 1, id);
}

/* See ws_sim.h: the entry is produced through the admin connection and filed by key and
 * id (and, streams, by payload) for the lineage and the checks; raw: a list or channel
 * value is the bare payload, not a frame. */
static int produce(ws_sim *sim, int form, const char *key, const char *payload,
                   size_t payload_len, const ws_header *headers, size_t nheaders, int raw,
                   char **id)
{
    if (id) *id = NULL;
    if (!key || (!payload && payload_len))
        return wsi_fail(sim, WS_EINVAL, "ws_sim_produce: no key or payload");
    if (!payload) payload = "";
    if (form < WS_FORM_STREAM || form > WS_FORM_CHANNEL)
        return wsi_fail(sim, WS_EINVAL, "ws_sim_produce: unknown form %d", form);
    /* the producer publishes as a handler's publish does: the same command (or, raw, the
     * bare payload a producer outside the framework writes) */
    wsi_cmd *c;
    if (raw) {
        wsi_cmdb b = {0};
        wsi_cmdb_adds(&b, form == WS_FORM_CHANNEL ? "PUBLISH" : "LPUSH");
        wsi_cmdb_adds(&b, key);
        wsi_cmdb_add(&b, payload, payload_len);
        c = wsi_cmdb_done(&b);
    } else {
        c = wsi_publish_cmd(form, key, payload, payload_len, headers, nheaders);
    }
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
    wsi_strmap_xput(&sim->produced_by_id, k.p, k.len, sim->nproduced);
    index_key_part(&k, p->payload, p->payload_len);
    size_t first;
    if (form == WS_FORM_STREAM && !wsi_strmap_get(&sim->produced_by_payload, k.p, k.len, &first))
        wsi_strmap_xput(&sim->produced_by_payload, k.p, k.len, sim->nproduced);
    else if (form == WS_FORM_STREAM)
        sim->payload_twice = 1;
    index_key_done(&k);
    if (form == WS_FORM_STREAM) {
        size_t made = 0;
        wsi_strmap_get(&sim->produced_per_key, key, key_len, &made);
        wsi_strmap_xput(&sim->produced_per_key, key, key_len, made + 1);
        wsi_strmap_xput(&sim->produced_last, key, key_len, sim->nproduced);
    }
    return 0;
}

/* See sim_int.h. */
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
            wsi_free(name.p);
            size_t vl = h[i].value_len ? h[i].value_len : (h[i].value ? strlen(h[i].value) : 0);
            wsi_cmdb_add(&b, h[i].value ? h[i].value : "", vl);
        }
    } else {
        size_t flen;
        char *frame = wsi_frame_encode(payload, len, h, nh, &flen);
        wsi_cmdb_adds(&b, form == WS_FORM_CHANNEL ? "PUBLISH" : "LPUSH");
        wsi_cmdb_adds(&b, key);
        wsi_cmdb_add(&b, frame, flen);
        wsi_free(frame);
    }
    return wsi_cmdb_done(&b);
}

size_t ws_sim_produced_count(const ws_sim *sim) { return sim->nproduced; }

const char *ws_sim_produced_id(const ws_sim *sim, size_t i)
{
    return i >= 1 && i <= sim->nproduced ? sim->produced[i - 1].id : NULL;
}

size_t ws_sim_produced_id_size(const ws_sim *sim, size_t i)
{
    return i >= 1 && i <= sim->nproduced ? sim->produced[i - 1].id_len : 0;
}

/* ----- Lineage ------------------------------------------------------------------------------- */

/* Files the copy `copy` of d under d's key as a descendant of d's root. */
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
    wsi_strmap_xput(&sim->lineage_by_id, k.p, k.len, root);
    index_key_done(&k);
}

/* The produced entry d descends from (1-based), 0 if none is known; remembered in d. */
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

size_t ws_delivery_root(ws_delivery *d) { return wsi_root_of(d->sub->sim, d); }

/* ----- Warnings ------------------------------------------------------------------------------ */

size_t ws_sim_warning_count(const ws_sim *sim) { return sim->nwarnings; }

const char *ws_sim_warning(const ws_sim *sim, size_t i)
{
    return i < sim->nwarnings ? sim->warnings[i] : NULL;
}

/* Keeps a warning (ws_sim_warning) and notes it in the trace. */
void wsi_warn(ws_sim *sim, const char *text)
{
    sim->warnings = wsi_xrealloc(sim->warnings, (sim->nwarnings + 1) * sizeof *sim->warnings);
    sim->warnings[sim->nwarnings++] = wsi_xstrdup(text);
    wsi_trace_note(sim, "-- warning: %s\n", text);
}
