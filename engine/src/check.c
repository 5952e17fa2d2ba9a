/* check.c -- the invariants of SEMANTICS.md §8, evaluated on the server's present state
 * (read through the admin connection) and the deliveries' ledger (what each queued
 * command did, from the trace):
 *
 *   lost     a produced entry is neither settled (acked with its effects applied, or
 *            dropped) nor pending, unread, on a list or scheduled in the delay queue;
 *   leaked   a dropped, retried or abandoned delivery's queued command took effect;
 *   split    an atomic segment's effects and its XACK did not take effect together;
 *   doubled  an entry's effects were applied by two deliveries (direct mode and the
 *            plain window after a crash between a write and its ack);
 *   stranded a reliable list's value sits on the processing list where nothing will ever
 *            deliver it again: no live delivery holds it and no member of the recovery
 *            set names it (the orphan sweep finds values by their members), e.g. a failed
 *            LREM whose ZREM went through, or a crash between the claim's LMOVE and its
 *            ZADD.  The seed's promise ("an entry whose settle failed stays pending and is
 *            delivered again") fails there.  A list without a recovery set makes no such
 *            promise (nothing ever returns its processing list, as nothing reclaims a
 *            stream's pending entries without a reclaim subscription): not checked.
 *
 * Each violation is one sentence naming the entry, the command and the crash point.
 * Plain lists and channels settle nothing, so "lost" is not checked for them (they are
 * at most once by design); the other three are. */
#include <fnmatch.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sim_int.h"

/* A set of strings (hashed: checks run once per crash point of large scenarios). */
typedef wsi_strmap strset;

static void set_add(strset *set, const char *p, size_t len) { wsi_strmap_xput(set, p, len, 1); }

/* Whether the set holds the len bytes at p. */
static int set_has(const strset *set, const char *p, size_t len)
{
    size_t v;
    return wsi_strmap_get(set, p, len, &v);
}

static void set_free(strset *set) { wsi_strmap_free(set); }

static void violation(ws_sim *sim, const char *inv, const wsi_produced *p, const char *fmt,
                      ...) __attribute__((format(printf, 4, 5)));

/* Records one violation of entry p (its id copied whole: a list frame may hold NULs). */
static void violation(ws_sim *sim, const char *inv, const wsi_produced *p, const char *fmt,
                      ...)
{
    char buf[1024];
    va_list ap;
    va_start(ap, fmt);
    wsi_vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    sim->viol = wsi_xrealloc(sim->viol, (sim->nviol + 1) * sizeof *sim->viol);
    sim->viol_text = wsi_xrealloc(sim->viol_text, (sim->nviol + 1) * 3 * sizeof(char *));
    sim->viol_root = wsi_xrealloc(sim->viol_root, (sim->nviol + 1) * sizeof *sim->viol_root);
    char **keep = &sim->viol_text[sim->nviol * 3];
    keep[0] = wsi_xstrdup(inv);
    keep[1] = wsi_xmemdup(p->id, p->id_len);
    keep[2] = wsi_xstrdup(buf);
    sim->viol_root[sim->nviol] = (size_t)(p - sim->produced) + 1;
    /* the pointers in viol may move with the realloc above: rebuild them all */
    sim->nviol++;
    for (size_t i = 0; i < sim->nviol; i++)
        sim->viol[i] = (ws_violation){
            .invariant = sim->viol_text[i * 3],
            .entry = sim->viol_text[i * 3 + 1],
            .entry_size = sim->produced[sim->viol_root[i] - 1].id_len,
            .root = sim->viol_root[i],
            .sentence = sim->viol_text[i * 3 + 2],
        };
}

static int applied(int fate) { return fate == WS_FATE_REPLIED || fate == WS_FATE_LOST; }

/* The first queued or direct command of d that took effect (no error), or NULL. */
static const wsi_effect *first_applied(const ws_delivery *d)
{
    for (size_t i = 0; i < d->neffects; i++)
        if (applied(d->effects[i].fate) && !d->effects[i].error) return &d->effects[i];
    return NULL;
}

/* Every queued command of d ran inside EXEC and failed there: a run-time error, reported,
 * not a split (§8). */
static int all_failed(const ws_delivery *d)
{
    for (size_t i = 0; i < d->neffects; i++)
        if (!applied(d->effects[i].fate) || !d->effects[i].error) return 0;
    return 1;
}

/* c as the trace writes it (heap). */
static char *cmd_text(const wsi_cmd *c)
{
    wsi_text t = {0};
    wsi_text_cmd(&t, c);
    return t.p;
}

/* Runs one admin command; the reply lives until the next admin call. */
static const fr_reply *admin(ws_sim *sim, wsi_cmdb *b)
{
    wsi_cmd *c = wsi_cmdb_done(b);
    const fr_reply *r = NULL;
    int rc = ws_sim_command(sim, c->argc, (const char *const *)c->argv, c->argvlen, &r);
    wsi_cmd_free(c);
    return rc ? NULL : r;
}

/* Parses a complete stream id "ms-seq" of len bytes; 0, or -1 for anything else (no
 * overflow accepted). */
int wsi_stream_id_parse(const char *p, size_t len, uint64_t *ms, uint64_t *seq)
{
    uint64_t v[2] = {0, 0};
    size_t i = 0;
    for (int part = 0; part < 2; part++) {
        size_t start = i;
        while (i < len && p[i] >= '0' && p[i] <= '9') {
            if (v[part] > (UINT64_MAX - 9) / 10) return -1;
            v[part] = v[part] * 10 + (uint64_t)(p[i++] - '0');
        }
        if (i == start) return -1;
        if (part == 0 && (i >= len || p[i++] != '-')) return -1;
    }
    if (i != len) return -1;
    *ms = v[0];
    *seq = v[1];
    return 0;
}

/* a < b for stream ids */
static int sid_less(uint64_t ams, uint64_t aseq, uint64_t bms, uint64_t bseq)
{
    return ams < bms || (ams == bms && aseq < bseq);
}

/* A field of a flat field-value reply (XINFO's RESP2 shape), or NULL. */
static const fr_reply *info_field(const fr_reply *r, const char *name)
{
    for (size_t k = 0; r && r->type == FR_REPLY_ARRAY && k + 1 < r->count; k += 2)
        if (r->elements[k].type == FR_REPLY_BULK && strcmp(r->elements[k].str, name) == 0)
            return &r->elements[k + 1];
    return NULL;
}

/* What the bounded recovery and the checks' shortcut need to know of a stream source:
 * whether every entry the stream ever held is one ws_sim_produce put there, and where the
 * group's reading stands. */
typedef struct fresh_state {
    int only_produced;     /* entries-added equals the entries produced into the key, the
                              last generated id is the last produced entry's, and no retry
                              copy was made there: every entry is a produced one */
    int group_found;       /* the group exists: last_* hold its last-delivered id */
    uint64_t last_ms, last_seq;
    int none_beyond;       /* no delivery of the group carried an id after last-delivered */
    int intact_after;      /* no entry after last-delivered was deleted or trimmed:
                              max-deleted-entry-id <= last-delivered and the first entry is
                              at or before it */
} fresh_state;

static int same_source(const ws_sub *a, const ws_sub *b);

/* Reads s's stream (XINFO STREAM, XINFO GROUPS through the admin connection) into *f. */
static int read_fresh_state(ws_sim *sim, const ws_sub *s, fresh_state *f)
{
    memset(f, 0, sizeof *f);
    if (s->cfg.form != WS_FORM_STREAM) return 0;
    size_t klen = strlen(s->key), made = 0, lastp = 0;
    if (!wsi_strmap_get(&sim->produced_per_key, s->key, klen, &made) ||
        !wsi_strmap_get(&sim->produced_last, s->key, klen, &lastp))
        return 0;
    for (size_t i = 0; i < sim->nlineage; i++)
        if (strcmp(sim->lineage[i].key, s->key) == 0) return 0;
    wsi_cmdb b = {0};
    wsi_cmdb_adds(&b, "XINFO");
    wsi_cmdb_adds(&b, "STREAM");
    wsi_cmdb_adds(&b, s->key);
    const fr_reply *r = admin(sim, &b);
    if (!r) return sim->err;
    const fr_reply *added = info_field(r, "entries-added");
    const fr_reply *lastgen = info_field(r, "last-generated-id");
    const fr_reply *maxdel = info_field(r, "max-deleted-entry-id");
    const fr_reply *first = info_field(r, "first-entry");
    const wsi_produced *lp = &sim->produced[lastp - 1];
    if (!added || added->type != FR_REPLY_INTEGER || added->integer < 0 ||
        (size_t)added->integer != made || !lastgen || lastgen->type != FR_REPLY_BULK ||
        lastgen->len != lp->id_len || memcmp(lastgen->str, lp->id, lp->id_len) != 0)
        return 0;
    f->only_produced = 1;
    uint64_t del_ms = 0, del_seq = 0, first_ms = 0, first_seq = 0;
    int have_del = maxdel && maxdel->type == FR_REPLY_BULK &&
                   wsi_stream_id_parse(maxdel->str, maxdel->len, &del_ms, &del_seq) == 0;
    int have_first = first && first->type == FR_REPLY_ARRAY && first->count >= 1 &&
                     first->elements[0].type == FR_REPLY_BULK &&
                     wsi_stream_id_parse(first->elements[0].str, first->elements[0].len,
                                         &first_ms, &first_seq) == 0;
    wsi_cmdb_adds(&b, "XINFO");
    wsi_cmdb_adds(&b, "GROUPS");
    wsi_cmdb_adds(&b, s->key);
    r = admin(sim, &b);
    if (!r) return sim->err;
    for (size_t i = 0; r->type == FR_REPLY_ARRAY && i < r->count; i++) {
        const fr_reply *name = info_field(&r->elements[i], "name");
        const fr_reply *last = info_field(&r->elements[i], "last-delivered-id");
        if (!name || name->type != FR_REPLY_BULK || strcmp(name->str, s->group) != 0 || !last ||
            last->type != FR_REPLY_BULK)
            continue;
        if (wsi_stream_id_parse(last->str, last->len, &f->last_ms, &f->last_seq) == 0)
            f->group_found = 1;
    }
    if (!f->group_found) return 0;
    f->none_beyond = 1;
    for (size_t i = 0; i < sim->nsubs; i++) {
        const ws_sub *o = sim->subs[i];
        if (same_source(o, s) && o->top_set &&
            sid_less(f->last_ms, f->last_seq, o->top_ms, o->top_seq))
            f->none_beyond = 0;
    }
    f->intact_after = have_del && have_first &&
                      !sid_less(f->last_ms, f->last_seq, del_ms, del_seq) &&
                      !sid_less(f->last_ms, f->last_seq, first_ms, first_seq);
    return 0;
}

/* Whether every entry s's fresh reads could still hand out is one produced and never
 * delivered (ws_sim.h); the check's reads stay out of the trace. */
int ws_sub_fresh_only(ws_sub *s, int *only_fresh)
{
    *only_fresh = 0;
    if (s->cfg.form != WS_FORM_STREAM || s->cfg.reclaim || s->cfg.claiming || s->delay_queue)
        return 0;
    ws_sim *sim = s->sim;
    fresh_state f;
    int quiet = sim->quiet;
    sim->quiet = 1;
    int rc = read_fresh_state(sim, s, &f);
    sim->quiet = quiet;
    if (rc) return rc;
    *only_fresh = f.only_produced && f.group_found && f.none_beyond;
    return 0;
}

/* ----- What the server still holds for a key --------------------------------------------- */

typedef struct holding {
    strset pending;   /* stream: ids pending in the group */
    strset pending_payloads; /* stream: the payloads of those entries (a copy whose id the
                                consumer never read is told by its payload) */
    strset unread;    /* stream: ids after the group's last-delivered id */
    strset scheduled; /* stream: original ids held by delay-queue members */
    strset listed;    /* reliable list: values on the main or processing list */
    wsi_strmap on_processing; /* reliable list: value -> how many times it is on the
                                 processing list */
    wsi_strmap claimed;       /* reliable list: value -> recovery members naming it */
    int unread_by_id;         /* stream: `unread` is not filled; an entry is unread when it
                                 is a produced entry after last_* (read_stream_holding says
                                 when that is exact) */
    uint64_t last_ms, last_seq; /* ... the group's last-delivered id */
    int none_beyond;          /* stream: no delivery carried an id after it */
} holding;

/* Frees what a holding read. */
static void holding_free(holding *h)
{
    set_free(&h->pending);
    set_free(&h->pending_payloads);
    set_free(&h->unread);
    set_free(&h->scheduled);
    set_free(&h->listed);
    wsi_strmap_free(&h->on_processing);
    wsi_strmap_free(&h->claimed);
}

/* One more occurrence of p in a counting map. */
static void count_add(wsi_strmap *m, const char *p, size_t len)
{
    size_t v = 0;
    wsi_strmap_get(m, p, len, &v);
    wsi_strmap_xput(m, p, len, v + 1);
}

/* How many occurrences of p a counting map holds. */
static size_t count_of(const wsi_strmap *m, const char *p, size_t len)
{
    size_t v = 0;
    wsi_strmap_get(m, p, len, &v);
    return v;
}

/* Reads what the server holds of s's stream into h: pending ids and their payloads, unread
 * entries (or the shortcut that tells them by id), delay-queue members; 0 or the admin
 * round trip's error. */
static int read_stream_holding(ws_sim *sim, const ws_sub *s, holding *h)
{
    wsi_cmdb b = {0};
    wsi_cmdb_adds(&b, "XPENDING");
    wsi_cmdb_adds(&b, s->key);
    wsi_cmdb_adds(&b, s->group);
    wsi_cmdb_adds(&b, "-");
    wsi_cmdb_adds(&b, "+");
    wsi_cmdb_adds(&b, "1000000");
    const fr_reply *r = admin(sim, &b);
    if (!r) return sim->err;
    if (r->type == FR_REPLY_ARRAY)
        for (size_t i = 0; i < r->count; i++)
            if (r->elements[i].type == FR_REPLY_ARRAY && r->elements[i].count >= 1)
                set_add(&h->pending, r->elements[i].elements[0].str,
                        r->elements[i].elements[0].len);
    /* the pending entries' payloads: each pending id's own XRANGE, not the whole stream
     * (a check runs at every crash point; what is pending is a few reads' worth) */
    if (h->pending.n) {
        size_t np = 0;
        char **ids = wsi_xcalloc(h->pending.n, sizeof *ids);
        size_t *lens = wsi_xcalloc(h->pending.n, sizeof *lens);
        for (size_t i = 0; i < h->pending.cap; i++)
            if (h->pending.slots[i].key) {
                ids[np] = h->pending.slots[i].key;
                lens[np++] = h->pending.slots[i].len;
            }
        for (size_t j = 0; j < np; j++) {
            wsi_cmdb_adds(&b, "XRANGE");
            wsi_cmdb_adds(&b, s->key);
            wsi_cmdb_add(&b, ids[j], lens[j]);
            wsi_cmdb_add(&b, ids[j], lens[j]);
            r = admin(sim, &b);
            if (!r) {
                wsi_free(ids);
                wsi_free(lens);
                return sim->err;
            }
            for (size_t i = 0; r->type == FR_REPLY_ARRAY && i < r->count; i++) {
                const fr_reply *e = &r->elements[i];
                if (e->type != FR_REPLY_ARRAY || e->count < 2) continue;
                const fr_reply *f = &e->elements[1];
                for (size_t k = 0; f->type == FR_REPLY_ARRAY && k + 1 < f->count; k += 2)
                    if (strcmp(f->elements[k].str, "_payload") == 0)
                        set_add(&h->pending_payloads, f->elements[k + 1].str,
                                f->elements[k + 1].len);
            }
        }
        wsi_free(ids);
        wsi_free(lens);
    }
    /* Unread entries without reading them: when every entry the stream ever held is a
     * produced one, none after the group's last-delivered id was deleted or trimmed, and
     * no two produced entries share a payload, the entries after last-delivered are
     * exactly the produced entries with a later id -- what the XRANGE below would list,
     * by id and by payload -- so an entry is unread when its id is later. */
    fresh_state fs;
    int rc = read_fresh_state(sim, s, &fs);
    if (rc) return rc;
    if (fs.only_produced && fs.group_found && fs.intact_after && !sim->payload_twice) {
        h->unread_by_id = 1;
        h->last_ms = fs.last_ms;
        h->last_seq = fs.last_seq;
        h->none_beyond = fs.none_beyond;
    }
    /* unread entries: after the group's last-delivered id */
    wsi_cmdb_adds(&b, "XINFO");
    wsi_cmdb_adds(&b, "GROUPS");
    wsi_cmdb_adds(&b, s->key);
    r = admin(sim, &b);
    if (!r) return sim->err;
    char last[64] = "";
    if (r->type == FR_REPLY_ARRAY)
        for (size_t i = 0; i < r->count; i++) {
            const fr_reply *g = &r->elements[i];
            if (g->type != FR_REPLY_ARRAY) continue;
            int mine = 0;
            for (size_t k = 0; k + 1 < g->count; k += 2) {
                if (strcmp(g->elements[k].str, "name") == 0 &&
                    strcmp(g->elements[k + 1].str, s->group) == 0)
                    mine = 1;
                if (mine && strcmp(g->elements[k].str, "last-delivered-id") == 0)
                    wsi_snprintf(last, sizeof last, "(%s", g->elements[k + 1].str);
            }
        }
    if (*last && !h->unread_by_id) {
        wsi_cmdb_adds(&b, "XRANGE");
        wsi_cmdb_adds(&b, s->key);
        wsi_cmdb_adds(&b, last);
        wsi_cmdb_adds(&b, "+");
        r = admin(sim, &b);
        if (!r) return sim->err;
        if (r->type == FR_REPLY_ARRAY)
            for (size_t i = 0; i < r->count; i++) {
                const fr_reply *e = &r->elements[i];
                if (e->type != FR_REPLY_ARRAY || e->count < 2) continue;
                /* keep the payload: an unread copy is told by it */
                const fr_reply *f = &e->elements[1];
                set_add(&h->unread, e->elements[0].str, e->elements[0].len);
                for (size_t k = 0; f->type == FR_REPLY_ARRAY && k + 1 < f->count; k += 2)
                    if (strcmp(f->elements[k].str, "_payload") == 0)
                        set_add(&h->unread, f->elements[k + 1].str, f->elements[k + 1].len);
            }
    }
    if (s->delay_queue) {
        wsi_cmdb_adds(&b, "ZRANGE");
        wsi_cmdb_adds(&b, s->delay_queue);
        wsi_cmdb_adds(&b, "0");
        wsi_cmdb_adds(&b, "-1");
        r = admin(sim, &b);
        if (!r) return sim->err;
        for (size_t i = 0; r->type == FR_REPLY_ARRAY && i < r->count; i++) {
            char **parts;
            size_t *lens;
            long n = wsi_dq_decode(r->elements[i].str, r->elements[i].len, &parts, &lens);
            if (n < 1) continue;
            set_add(&h->scheduled, parts[0], lens[0]);
            for (long k = 1; k + 1 < n; k += 2)
                if (lens[k] == 8 && memcmp(parts[k], "_payload", 8) == 0)
                    set_add(&h->scheduled, parts[k + 1], lens[k + 1]);
            wsi_strings_free(parts, lens, (size_t)n);
        }
    }
    return 0;
}

/* Reads what the server holds of s's reliable list into h: the main and processing lists'
 * values and the values recovery members name; 0 or the admin round trip's error. */
static int read_list_holding(ws_sim *sim, const ws_sub *s, holding *h)
{
    const char *keys[2] = {s->key, s->processing};
    for (int k = 0; k < 2; k++) {
        wsi_cmdb b = {0};
        wsi_cmdb_adds(&b, "LRANGE");
        wsi_cmdb_adds(&b, keys[k]);
        wsi_cmdb_adds(&b, "0");
        wsi_cmdb_adds(&b, "-1");
        const fr_reply *r = admin(sim, &b);
        if (!r) return sim->err;
        for (size_t i = 0; r->type == FR_REPLY_ARRAY && i < r->count; i++) {
            set_add(&h->listed, r->elements[i].str, r->elements[i].len);
            if (k == 1) count_add(&h->on_processing, r->elements[i].str, r->elements[i].len);
        }
    }
    if (!s->recovery) return 0;
    wsi_cmdb b = {0};
    wsi_cmdb_adds(&b, "ZRANGE");
    wsi_cmdb_adds(&b, s->recovery);
    wsi_cmdb_adds(&b, "0");
    wsi_cmdb_adds(&b, "-1");
    const fr_reply *r = admin(sim, &b);
    if (!r) return sim->err;
    for (size_t i = 0; r->type == FR_REPLY_ARRAY && i < r->count; i++) {
        size_t vlen;
        const char *v = wsi_recovery_value(r->elements[i].str, r->elements[i].len, &vlen);
        if (v) count_add(&h->claimed, v, vlen);
    }
    return 0;
}

/* ----- The invariants ------------------------------------------------------------------------ */

/* Produced entry p is unread (after the group's last-delivered id), by its id or by its
 * payload (an unread copy whose id was never learnt). */
static int unread(const holding *h, const wsi_produced *p)
{
    if (!h->unread_by_id)
        return set_has(&h->unread, p->id, p->id_len) ||
               set_has(&h->unread, p->payload, p->payload_len);
    uint64_t ms, seq;
    return wsi_stream_id_parse(p->id, p->id_len, &ms, &seq) == 0 &&
           sid_less(h->last_ms, h->last_seq, ms, seq);
}

/* Whether a and b read the same source: one key and form, and for streams one group. */
static int same_source(const ws_sub *a, const ws_sub *b)
{
    if (strcmp(a->key, b->key) != 0 || a->cfg.form != b->cfg.form) return 0;
    if (a->cfg.form == WS_FORM_STREAM) return strcmp(a->group, b->group) == 0;
    return 1;
}

/* The deliveries of every produced entry through subscriptions reading like s, bucketed
 * by root (1-based; bucket 0: unknown roots), in delivery order. */
typedef struct buckets {
    ws_delivery **dl;   /* every bucket's deliveries, bucket after bucket */
    size_t *start;      /* bucket r is dl[start[r] .. start[r + 1]) */
} buckets;

/* Files every delivery through a source like s's under its produced entry (b->dl,
 * b->start). */
static void buckets_make(ws_sim *sim, const ws_sub *s, buckets *b)
{
    size_t nr = sim->nproduced + 1;
    b->start = wsi_xcalloc(nr + 1, sizeof *b->start);
    size_t *fill = wsi_xcalloc(nr, sizeof *fill);
    size_t total = 0;
    for (size_t i = 0; i < sim->ndl; i++)
        if (same_source(sim->dl[i]->sub, s)) {
            b->start[wsi_root_of(sim, sim->dl[i]) + 1]++;
            total++;
        }
    for (size_t r = 1; r <= nr; r++) b->start[r] += b->start[r - 1];
    b->dl = wsi_xcalloc(total ? total : 1, sizeof *b->dl);
    for (size_t i = 0; i < sim->ndl; i++) {
        ws_delivery *d = sim->dl[i];
        if (!same_source(d->sub, s)) continue;
        size_t r = wsi_root_of(sim, d);
        b->dl[b->start[r] + fill[r]++] = d;
    }
    wsi_free(fill);
}

/* Frees the buckets' arrays. */
static void buckets_free(buckets *b)
{
    wsi_free(b->dl);
    wsi_free(b->start);
}

/* Entry root's deliveries through the source, in delivery order: *out and the count. */
static size_t lineage(const buckets *b, size_t root, ws_delivery ***out)
{
    *out = &b->dl[b->start[root]];
    return b->start[root + 1] - b->start[root];
}

/* Whether a retry timer of the live process waits on one of v[0..n). */
static int timer_pending(const ws_sim *sim, ws_delivery *const *v, size_t n)
{
    for (size_t t = 0; t < sim->ntimers; t++)
        for (size_t i = 0; i < n; i++)
            if (sim->timers[t].d == v[i]) return 1;
    return 0;
}

/* The crash that ended d's process, or "no crash". */
static const char *crash_of(const ws_sim *sim, const ws_delivery *d)
{
    unsigned inc = d->incarnation;
    if (inc >= 1 && inc <= sim->ncrashes && sim->crashes[inc - 1]) return sim->crashes[inc - 1];
    return "no crash";
}

/* doubled: two deliveries of entry p whose effects took effect (v[0..n), in delivery
 * order); one sentence naming the first two. */
static void check_doubled(ws_sim *sim, const wsi_produced *p, ws_delivery *const *v, size_t n)
{
    ws_delivery *firstd = NULL;
    for (size_t i = 0; i < n; i++) {
        const wsi_effect *e = first_applied(v[i]);
        if (!e) continue;
        if (!firstd) {
            firstd = v[i];
            continue;
        }
        const wsi_effect *e0 = first_applied(firstd);
        char *c0 = cmd_text(e0->cmd);
        char w0[96], w1[96];
        violation(sim, "doubled", p,
                  "entry %s's effects were applied twice: `%s` by its delivery in read %llu "
                  "of %s (%s) and again by its redelivery as %s in read %llu of %s (%s), "
                  "after the crash at %s",
                  p->shown, c0, (unsigned long long)firstd->read, firstd->sub->name,
                  wsi_where_text(&e0->where, w0, sizeof w0), v[i]->shown,
                  (unsigned long long)v[i]->read, v[i]->sub->name,
                  wsi_where_text(&e->where, w1, sizeof w1), crash_of(sim, firstd));
        wsi_free(c0);
        return;
    }
}

/* leaked: what delivery d of entry p queued took effect although d was dropped, retried
 * or abandoned (or acked with its segment dropped); one sentence for the first such. */
static void check_leaked(ws_sim *sim, const wsi_produced *p, const ws_delivery *d)
{
    int discarded = d->outcome != WS_ACK || d->seg_state == WSI_SEG_DROPPED;
    if (!discarded) return;
    for (size_t k = 0; k < d->neffects; k++) {
        const wsi_effect *e = &d->effects[k];
        if (e->kind == WSI_EFFECT_DIRECT || !applied(e->fate)) continue;
        char *c = cmd_text(e->cmd);
        char w[96];
        violation(sim, "leaked", p,
                  "delivery %s of entry %s ended %s, yet its queued `%s` took effect "
                  "(%s)",
                  d->shown, p->shown,
                  d->outcome == WS_DROP      ? "dropped"
                  : d->outcome == WS_RETRY   ? "retried"
                  : d->outcome == WS_RETRY_AFTER ? "retried later"
                  : d->outcome == WS_ACK     ? "acked with its segment dropped"
                                             : "without an outcome",
                  c, wsi_where_text(&e->where, w, sizeof w));
        wsi_free(c);
        return;
    }
}

/* split: delivery d's atomic segment, kept and flushed, had its effects and its XACK part
 * (plain lists and channels owe no settle: nothing to split). */
static void check_split(ws_sim *sim, const wsi_produced *p, const ws_delivery *d)
{
    if (d->sub->cfg.mode != WS_MODE_ATOMIC || d->seg_state != WSI_SEG_KEPT || !d->flush ||
        d->in_batch ||
        (d->sub->cfg.form != WS_FORM_STREAM && d->sub->cfg.form != WS_FORM_RELIABLE_LIST))
        return;
    const wsi_effect *e = first_applied(d);
    if (e && !d->settle_sent && !d->settle_failed) {
        char *c = cmd_text(e->cmd);
        char w[96];
        violation(sim, "split", p,
                  "entry %s's atomic segment was split: `%s` took effect (%s) but "
                  "its XACK did not",
                  p->shown, c, wsi_where_text(&e->where, w, sizeof w));
        wsi_free(c);
    } else if (!e && d->settle_sent && d->neffects && !all_failed(d)) {
        char w[96];
        violation(sim, "split", p,
                  "entry %s's atomic segment was split: its XACK took effect (%s) "
                  "but none of its commands did",
                  p->shown, wsi_where_text(&d->settle_where, w, sizeof w));
    }
}

/* Whether the server (or the live process) still holds produced entry root of s's source,
 * whose deliveries are v[0..n): one of its ids is pending, scheduled or listed, it is
 * unread, or a retry timer of the live process will publish its copy. */
static int entry_held(const ws_sim *sim, const ws_sub *s, size_t root, const holding *h,
                      ws_delivery *const *v, size_t n)
{
    const wsi_produced *p = &sim->produced[root - 1];
    int stream = s->cfg.form == WS_FORM_STREAM;
    for (size_t i = 0; i < n; i++) {
        const ws_delivery *d = v[i];
        if (stream ? set_has(&h->pending, d->id, d->id_len) ||
                         set_has(&h->scheduled, d->id, d->id_len)
                   : set_has(&h->listed, d->id, d->id_len))
            return 1;
    }
    for (size_t i = 0; i < sim->nlineage; i++)
        if (sim->lineage[i].root == root && strcmp(sim->lineage[i].key, s->key) == 0 &&
            (stream ? set_has(&h->pending, sim->lineage[i].id, sim->lineage[i].len)
                    : set_has(&h->listed, sim->lineage[i].id, sim->lineage[i].len)))
            return 1;
    if (stream) {
        if (set_has(&h->pending, p->id, p->id_len) ||
            set_has(&h->pending_payloads, p->payload, p->payload_len) || unread(h, p) ||
            set_has(&h->scheduled, p->payload, p->payload_len))
            return 1;
    } else if (set_has(&h->listed, p->id, p->id_len)) {
        return 1;
    }
    return !sim->dead && timer_pending(sim, v, n);
}

/* Whether an entry the server no longer holds was settled by one of its deliveries
 * v[0..n): acked with every queued command applied, dropped, rejected at the retry cap or
 * moved to the dead letter. */
static int entry_settled(const ws_sub *s, ws_delivery *const *v, size_t n)
{
    int stream = s->cfg.form == WS_FORM_STREAM;
    for (size_t i = 0; i < n; i++) {
        const ws_delivery *d = v[i];
        int settled = 0;
        /* An acked stream delivery whose queued commands all took effect, its entry
         * no longer pending, was settled by those commands themselves: a script that
         * XACKs its own entry atomically with its write (a crash before the
         * runtime's own XACK leaves nothing owed). */
        if (!d->settle_sent && stream && d->outcome == WS_ACK && d->neffects) {
            settled = 1;
            for (size_t k = 0; k < d->neffects; k++)
                if (!applied(d->effects[k].fate)) settled = 0;
        }
        if (d->settle_sent) {
            if (d->outcome == WS_DROP && !d->delay_ms) settled = 1;
            /* retried at the cap: rejected, or moved to the dead letter */
            if (d->rejected || (d->copy_planned == WSI_COPY_DEAD_LETTER && d->copy_sent))
                settled = 1;
            if (d->outcome == WS_ACK) {
                settled = 1;
                for (size_t k = 0; k < d->neffects; k++)
                    if (!applied(d->effects[k].fate)) settled = 0;
            }
        }
        if (settled) return 1;
    }
    return 0;
}

/* The "lost" sentence for entry p, which is neither held nor settled: the story of the
 * delivery that lost it (a retry copy never published, a delay-queue sweep cut short, a
 * retry timer the crash killed, a batch sibling's discarded segment) or the bare fact. */
static void report_lost(ws_sim *sim, const ws_sub *s, const wsi_produced *p,
                        ws_delivery *const *v, size_t n)
{
    int stream = s->cfg.form == WS_FORM_STREAM;
    ws_delivery *timer = NULL, *queued = NULL, *copied = NULL;
    for (size_t i = 0; i < n; i++) {
        if (v[i]->copy_planned && !v[i]->copy_sent && !v[i]->delay_ms)
            copied = v[i];
        else if (v[i]->outcome == WS_RETRY_AFTER && v[i]->settle_sent) {
            if (v[i]->sub->delay_queue) queued = v[i];
            else timer = v[i];
        }
    }
    if (copied)
        violation(sim, "lost", p,
                  "entry %s was lost: the runtime settled its delivery %s for a retry "
                  "(%s declared: the settle first, then the copy), and the consumer "
                  "crashed after the settle took effect and before the %s was "
                  "published (%s)",
                  p->shown, copied->shown,
                  copied->sub->cfg.max_attempts && copied->sub->dead_letter
                      ? "max-attempts and a dead letter"
                  : copied->sub->dead_letter ? "a dead letter" : "max-attempts",
                  copied->copy_planned == WSI_COPY_DEAD_LETTER ? "dead-letter copy"
                                                               : "copy",
                  crash_of(sim, copied));
    else if (queued)
        violation(sim, "lost", p,
                  "entry %s was lost: its delivery %s was scheduled in the delay queue "
                  "%s for a retry after %lld ms, and the copy left the queue (the sweep's "
                  "ZREM) but never reached the stream: the consumer crashed between the "
                  "sweep's ZREM and its XADD (%s)",
                  p->shown, queued->shown, queued->sub->delay_queue, (long long)queued->delay_ms,
                  sim->last_crash[0] ? sim->last_crash : "no crash");
    else if (timer)
        violation(sim, "lost", p,
                  "entry %s was lost: its delivery %s was settled as dropped for a "
                  "retry after %lld ms, and the copy was never published because the "
                  "consumer crashed first (%s)",
                  p->shown, timer->shown, (long long)timer->delay_ms, crash_of(sim, timer));
    else {
        /* an acked member of a batch that another member did not ack (§6) */
        ws_delivery *sibling = NULL;
        for (size_t i = 0; i < n; i++)
            if (v[i]->outcome == WS_ACK && v[i]->seg_state == WSI_SEG_DROPPED &&
                v[i]->settle_sent)
                sibling = v[i];
        if (sibling)
            violation(sim, "lost", p,
                      "entry %s was lost: its delivery %s was acked and settled, but "
                      "its batch's segment was discarded because another member of "
                      "the batch did not ack (SEMANTICS.md §6), so its effects never "
                      "applied",
                      p->shown, sibling->shown);
        else
            violation(sim, "lost", p,
                      "entry %s was lost: it is neither acknowledged with its effects "
                      "applied, nor pending, nor %s",
                      p->shown, stream ? "unread or scheduled in a delay queue"
                                    : "on the main or the processing list");
    }
}

/* lost: entry root of s's source is settled nowhere and held nowhere (streams and
 * reliable lists only: plain lists and channels are at most once by design). */
static void check_lost(ws_sim *sim, const ws_sub *s, size_t root, const holding *h,
                       ws_delivery *const *v, size_t n)
{
    if (s->cfg.form != WS_FORM_STREAM && s->cfg.form != WS_FORM_RELIABLE_LIST) return;
    if (entry_held(sim, s, root, h, v, n) || entry_settled(s, v, n)) return;
    report_lost(sim, s, &sim->produced[root - 1], v, n);
}

/* The checks of produced entry root (1-based) read by s, whose deliveries through s's
 * source are v[0..n), in delivery order: doubled, then leaked and split delivery by
 * delivery, then lost. */
static void check_entry(ws_sim *sim, const ws_sub *s, size_t root, const holding *h,
                        ws_delivery *const *v, size_t n)
{
    const wsi_produced *p = &sim->produced[root - 1];
    check_doubled(sim, p, v, n);
    for (size_t i = 0; i < n; i++) {
        check_leaked(sim, p, v[i]);
        check_split(sim, p, v[i]);
    }
    check_lost(sim, s, root, h, v, n);
}

/* Outstanding deliveries of the live process holding value, without a recovery member
 * (those with one are counted through the recovery set already). */
static size_t live_unclaimed(const ws_sim *sim, const ws_sub *s, const char *value, size_t len)
{
    size_t n = 0;
    if (sim->dead) return 0;
    for (size_t i = 0; i < sim->ndl; i++) {
        const ws_delivery *d = sim->dl[i];
        if (d->done || d->dead || d->incarnation != sim->incarnation || d->member ||
            !same_source(d->sub, s) || d->id_len != len || memcmp(d->id, value, len) != 0)
            continue;
        n++;
    }
    return n;
}

/* stranded: the produced value sits on the processing list more often than live
 * deliveries and recovery members account for (reliable lists only). */
static void check_stranded(ws_sim *sim, const ws_sub *s, size_t root, const holding *h,
                           const buckets *bk)
{
    wsi_produced *p = &sim->produced[root - 1];
    size_t on = count_of(&h->on_processing, p->id, p->id_len);
    if (on == 0) return;
    size_t covered = count_of(&h->claimed, p->id, p->id_len) +
                     live_unclaimed(sim, s, p->id, p->id_len);
    if (on <= covered) return;
    /* say how it got there: the last delivery's story */
    ws_delivery **v;
    size_t n = lineage(bk, root, &v);
    const ws_delivery *last = n ? v[n - 1] : NULL;
    char how[512];
    if (last && last->done && !last->settle_sent &&
        (last->outcome == WS_ACK || last->outcome == WS_DROP))
        wsi_snprintf(how, sizeof how, "its delivery in read %llu of %s ended %s, but its LREM "
                 "did not take effect while its recovery member went, so the orphan sweep "
                 "never finds it", (unsigned long long)last->read, last->sub->name,
                 last->outcome == WS_ACK ? "ack" : "drop");
    else
        wsi_snprintf(how, sizeof how, "no member of the recovery set %s names it (the claim's ZADD "
                 "that follows its LMOVE never took effect), so the orphan sweep never finds "
                 "it; the crash: %s", s->recovery,
                 last ? crash_of(sim, last) : sim->last_crash[0] ? sim->last_crash : "none");
    violation(sim, "stranded", p,
              "entry %s is stranded on the processing list %s: no live delivery holds it "
              "and %s; it will never be delivered again",
              p->shown, s->processing, how);
}


/* ----- The checks' incremental state ------------------------------------------------------
 *
 * A check reads every produced entry, and a crash explorer checks once per crash point:
 * the cost grows with the run, and in a forked child every page it writes is copied.
 * Most entries, though, are finished long before the crash: delivered once, acked with
 * every queued command applied (or dropped with nothing applied), the settle applied.
 * check_entry can find nothing wrong with such an entry -- one delivery doubles nothing,
 * an acked delivery whose segment was kept leaks nothing, a settle that took effect with
 * its effects splits nothing, and an entry so settled is not lost -- and none of that
 * changes unless the entry is delivered again.  ws_sim_check_prepare files each delivery
 * by its produced entry and marks the entries so finished CLEAN; the check then looks only
 * at the others, when it can tell that the entries it skips are exactly the clean ones and
 * the unread ones (fast_source).  The state only grows with the run: a forked child
 * inherits it and files only what its crash and recovery added. */

/* Frees the checks' incremental state; the next prepare starts over. */
void wsi_ck_free(ws_sim *sim)
{
    struct wsi_ck *ck = &sim->ck;
    wsi_free(ck->state);
    wsi_free(ck->first);
    wsi_free(ck->last);
    wsi_free(ck->next);
    wsi_free(ck->open);
    wsi_free(ck->dirty);
    for (size_t i = 0; i < ck->nkeys; i++) wsi_free(ck->keys[i].roots);
    wsi_free(ck->keys);
    wsi_strmap_free(&ck->key_index);
    memset(ck, 0, sizeof *ck);
}

/* Grows a zeroed array to at least n elements of size bytes (cap in elements). */
static void ck_grow(void **p, size_t *cap, size_t n, size_t size)
{
    if (n <= *cap) return;
    size_t c = *cap ? *cap : 256;
    while (c < n) c *= 2;
    *p = wsi_xrealloc(*p, c * size);
    memset((char *)*p + *cap * size, 0, (c - *cap) * size);
    *cap = c;
}

/* Whether d is decided: nothing a check reads of it changes any more. */
static int ck_decided(const ws_delivery *d)
{
    return d->dead || (d->done && (d->settle_sent || d->settle_failed || d->outcome == WS_ABANDON));
}

/* Whether a decided d, its entry's only delivery, leaves nothing for check_entry to find
 * (see above; each condition mirrors one of its tests). */
static int ck_clean(const ws_delivery *d)
{
    if (d->dead || !d->done || !d->settle_sent || d->settle_failed || d->delay_ms ||
        d->copy_planned || d->rejected)
        return 0;
    if (d->outcome == WS_ACK) {
        if (d->seg_state == WSI_SEG_DROPPED) return 0;           /* leaked, lost */
        for (size_t k = 0; k < d->neffects; k++)
            if (!applied(d->effects[k].fate)) return 0;          /* lost, split */
        return 1;
    }
    if (d->outcome == WS_DROP) {
        for (size_t k = 0; k < d->neffects; k++)
            if (d->effects[k].kind != WSI_EFFECT_DIRECT && applied(d->effects[k].fate))
                return 0;                                        /* leaked */
        return 1;
    }
    return 0;
}

/* Marks entry root dirty (checked at every check from now on), once. */
static void ck_dirty(struct wsi_ck *ck, size_t root)
{
    if (ck->state[root - 1] == WSI_CK_DIRTY) return;
    ck->state[root - 1] = WSI_CK_DIRTY;
    if (ck->ndirty == ck->capdirty) {
        ck->capdirty = ck->capdirty ? ck->capdirty * 2 : 64;
        ck->dirty = wsi_xrealloc(ck->dirty, ck->capdirty * sizeof *ck->dirty);
    }
    ck->dirty[ck->ndirty++] = root;
}

/* The produced stream entries filed under key, or NULL. */
static struct wsi_ck_key *ck_key(struct wsi_ck *ck, const char *key)
{
    size_t i;
    if (wsi_strmap_get(&ck->key_index, key, strlen(key), &i)) return &ck->keys[i];
    return NULL;
}

/* Brings the incremental state up to date with the deliveries made since the last call:
 * files each under its entry and marks decided entries clean or dirty. */
void ws_sim_check_prepare(ws_sim *sim)
{
    struct wsi_ck *ck = &sim->ck;
    if (sim->nproduced > ck->cap_roots) {
        size_t c1 = ck->cap_roots, c2 = ck->cap_roots, c3 = ck->cap_roots;
        ck_grow((void **)&ck->state, &c1, sim->nproduced, sizeof *ck->state);
        ck_grow((void **)&ck->first, &c2, sim->nproduced, sizeof *ck->first);
        ck_grow((void **)&ck->last, &c3, sim->nproduced, sizeof *ck->last);
        ck->cap_roots = c1;
    }
    ck_grow((void **)&ck->next, &ck->cap_dl, sim->ndl, sizeof *ck->next);
    /* produced stream entries, filed by key in id order (produce order: XADD * ids grow) */
    for (; ck->produced_seen < sim->nproduced; ck->produced_seen++) {
        const wsi_produced *p = &sim->produced[ck->produced_seen];
        if (p->form != WS_FORM_STREAM) continue;
        struct wsi_ck_key *k = ck_key(ck, p->key);
        if (!k) {
            if (ck->nkeys == ck->capkeys) {
                ck->capkeys = ck->capkeys ? ck->capkeys * 2 : 4;
                ck->keys = wsi_xrealloc(ck->keys, ck->capkeys * sizeof *ck->keys);
            }
            wsi_strmap_xput(&ck->key_index, p->key, strlen(p->key), ck->nkeys);
            k = &ck->keys[ck->nkeys++];
            memset(k, 0, sizeof *k);
        }
        if (k->n == k->cap) {
            k->cap = k->cap ? k->cap * 2 : 64;
            k->roots = wsi_xrealloc(k->roots, k->cap * sizeof *k->roots);
        }
        k->roots[k->n++] = ck->produced_seen + 1;
    }
    /* new deliveries: filed under their entry; a second delivery makes it dirty */
    for (; ck->scanned < sim->ndl; ck->scanned++) {
        ws_delivery *d = sim->dl[ck->scanned];
        size_t root = wsi_root_of(sim, d);
        if (!root) continue;
        size_t at = ck->scanned + 1;
        if (ck->last[root - 1]) ck->next[ck->last[root - 1] - 1] = at;
        else ck->first[root - 1] = at;
        ck->last[root - 1] = at;
        unsigned char st = ck->state[root - 1];
        if (st == WSI_CK_UNTOUCHED) {
            const wsi_produced *p = &sim->produced[root - 1];
            struct wsi_ck_key *k = p->form == WS_FORM_STREAM ? ck_key(ck, p->key) : NULL;
            if (k) k->touched++;
            ck->state[root - 1] = WSI_CK_OPEN;
            if (ck->nopen == ck->capopen) {
                ck->capopen = ck->capopen ? ck->capopen * 2 : 64;
                ck->open = wsi_xrealloc(ck->open, ck->capopen * sizeof *ck->open);
            }
            ck->open[ck->nopen++] = ck->scanned;
        } else {
            ck_dirty(ck, root);
        }
    }
    /* open deliveries that are decided now: their entry is clean or dirty for good */
    size_t keep = 0;
    for (size_t i = 0; i < ck->nopen; i++) {
        ws_delivery *d = sim->dl[ck->open[i]];
        size_t root = wsi_root_of(sim, d);
        if (ck->state[root - 1] != WSI_CK_OPEN) continue; /* dirty meanwhile */
        if (!ck_decided(d)) {
            ck->open[keep++] = ck->open[i];
            continue;
        }
        if (ck_clean(d)) ck->state[root - 1] = WSI_CK_CLEAN;
        else ck_dirty(ck, root);
    }
    ck->nopen = keep;
}

/* qsort's order of size_t values. */
static int cmp_size(const void *a, const void *b)
{
    size_t x = *(const size_t *)a, y = *(const size_t *)b;
    return x < y ? -1 : x > y;
}

/* The produced entries of s's stream that are neither clean nor unread -- the only ones
 * check_entry can find anything wrong with -- into *out (ascending, heap), when that can
 * be told without reading the others: s's key is read through s's group only, the
 * holding's unread shortcut holds (every entry a produced one, none after last-delivered
 * gone), and every produced entry up to last-delivered was delivered (so the ones no
 * delivery carried are exactly the unread ones).  Returns the count, or -1 when it cannot
 * tell (the caller checks every entry). */
static long fast_source(ws_sim *sim, const ws_sub *s, const holding *h, size_t **out)
{
    struct wsi_ck *ck = &sim->ck;
    *out = NULL;
    if (s->cfg.form != WS_FORM_STREAM || !h->unread_by_id || !h->none_beyond ||
        ck->produced_seen != sim->nproduced ||
        ck->scanned != sim->ndl)
        return -1;
    for (size_t i = 0; i < sim->nsubs; i++) {
        const ws_sub *o = sim->subs[i];
        if (o->cfg.form == WS_FORM_STREAM && strcmp(o->key, s->key) == 0 &&
            strcmp(o->group, s->group) != 0)
            return -1;
        if (o->cfg.form == WS_FORM_CHANNEL) return -1; /* a pattern may name the key */
    }
    const struct wsi_ck_key *k = ck_key(ck, s->key);
    if (!k) return -1;
    /* entries up to last-delivered: the first index whose id is later, by bisection */
    size_t lo = 0, hi = k->n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        const wsi_produced *p = &sim->produced[k->roots[mid] - 1];
        uint64_t ms, seq;
        if (wsi_stream_id_parse(p->id, p->id_len, &ms, &seq) != 0) return -1;
        if (sid_less(h->last_ms, h->last_seq, ms, seq)) hi = mid;
        else lo = mid + 1;
    }
    /* every delivery carries an id up to last-delivered (ws_sub_fresh_only's test), so the
     * touched entries are among the first lo: all of them touched, or look at all */
    if (k->touched != lo) return -1;
    size_t n = 0, cap = ck->ndirty + ck->nopen + 1;
    size_t *v = wsi_xmalloc(cap * sizeof *v);
    for (size_t i = 0; i < ck->ndirty; i++)
        if (strcmp(sim->produced[ck->dirty[i] - 1].key, s->key) == 0) v[n++] = ck->dirty[i];
    for (size_t i = 0; i < ck->nopen; i++) {
        size_t root = wsi_root_of(sim, sim->dl[ck->open[i]]);
        if (strcmp(sim->produced[root - 1].key, s->key) == 0) v[n++] = root;
    }
    qsort(v, n, sizeof *v, cmp_size);
    size_t u = 0;
    for (size_t i = 0; i < n; i++)
        if (!u || v[u - 1] != v[i]) v[u++] = v[i];
    *out = v;
    return (long)u;
}

/* Evaluates every invariant on every source's entries; the violations (valid until the next
 * check) in *out, 0 or the error of an admin round trip. */
int ws_sim_check(ws_sim *sim, const ws_violation **out, size_t *nout)
{
    for (size_t i = 0; i < sim->nviol * 3; i++) wsi_free(sim->viol_text[i]);
    wsi_free(sim->viol_text);
    wsi_free(sim->viol);
    wsi_free(sim->viol_root);
    sim->viol_root = NULL;
    sim->viol_text = NULL;
    sim->viol = NULL;
    sim->nviol = 0;
    int rc = 0;
    sim->quiet = 1;
    /* each distinct source (stream+group, list, channel) once */
    for (size_t i = 0; i < sim->nsubs && rc == 0; i++) {
        const ws_sub *s = sim->subs[i];
        int seen = 0;
        for (size_t j = 0; j < i; j++) seen |= same_source(sim->subs[j], s);
        if (seen) continue;
        holding h = {0};
        buckets bk;
        if (s->cfg.form == WS_FORM_STREAM) rc = read_stream_holding(sim, s, &h);
        else if (s->cfg.form == WS_FORM_RELIABLE_LIST) rc = read_list_holding(sim, s, &h);
        size_t *roots = NULL;
        long nroots = rc == 0 ? fast_source(sim, s, &h, &roots) : -1;
        if (nroots >= 0) {
            /* only the entries that are neither clean nor unread (fast_source) */
            ws_delivery **v = NULL;
            size_t capv = 0;
            for (long k = 0; k < nroots; k++) {
                size_t n = 0;
                for (size_t at = sim->ck.first[roots[k] - 1]; at; at = sim->ck.next[at - 1]) {
                    if (n == capv) {
                        capv = capv ? capv * 2 : 8;
                        v = wsi_xrealloc(v, capv * sizeof *v);
                    }
                    v[n++] = sim->dl[at - 1];
                }
                check_entry(sim, s, roots[k], &h, v, n);
            }
            wsi_free(v);
            wsi_free(roots);
            holding_free(&h);
            continue;
        }
        buckets_make(sim, s, &bk);
        for (size_t r = 0; rc == 0 && r < sim->nproduced; r++) {
            const wsi_produced *p = &sim->produced[r];
            int form = p->form == WS_FORM_PLAIN_LIST ? WS_FORM_RELIABLE_LIST : p->form;
            int sform = s->cfg.form == WS_FORM_PLAIN_LIST ? WS_FORM_RELIABLE_LIST : s->cfg.form;
            int match = s->cfg.form == WS_FORM_CHANNEL && s->cfg.pattern
                            ? fnmatch(s->key, p->key, 0) == 0
                            : strcmp(p->key, s->key) == 0;
            if (!match || form != sform) continue;
            ws_delivery **v;
            size_t n = lineage(&bk, r + 1, &v);
            check_entry(sim, s, r + 1, &h, v, n);
            if (s->cfg.form == WS_FORM_RELIABLE_LIST && s->recovery)
                check_stranded(sim, s, r + 1, &h, &bk);
        }
        holding_free(&h);
        buckets_free(&bk);
    }
    sim->quiet = 0;
    if (out) *out = sim->viol;
    if (nout) *nout = sim->nviol;
    return rc;
}
