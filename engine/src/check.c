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

static void set_add(strset *set, const char *p, size_t len) { wsi_strmap_put(set, p, len, 1); }

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
    vsnprintf(buf, sizeof buf, fmt, ap);
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
} holding;

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
    wsi_strmap_put(m, p, len, v + 1);
}

static size_t count_of(const wsi_strmap *m, const char *p, size_t len)
{
    size_t v = 0;
    wsi_strmap_get(m, p, len, &v);
    return v;
}

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
    /* the pending entries' payloads */
    if (h->pending.n) {
        wsi_cmdb_adds(&b, "XRANGE");
        wsi_cmdb_adds(&b, s->key);
        wsi_cmdb_adds(&b, "-");
        wsi_cmdb_adds(&b, "+");
        r = admin(sim, &b);
        if (!r) return sim->err;
        for (size_t i = 0; r->type == FR_REPLY_ARRAY && i < r->count; i++) {
            const fr_reply *e = &r->elements[i];
            if (e->type != FR_REPLY_ARRAY || e->count < 2 ||
                !set_has(&h->pending, e->elements[0].str, e->elements[0].len))
                continue;
            const fr_reply *f = &e->elements[1];
            for (size_t k = 0; f->type == FR_REPLY_ARRAY && k + 1 < f->count; k += 2)
                if (strcmp(f->elements[k].str, "_payload") == 0)
                    set_add(&h->pending_payloads, f->elements[k + 1].str, f->elements[k + 1].len);
        }
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
                    snprintf(last, sizeof last, "(%s", g->elements[k + 1].str);
            }
        }
    if (*last) {
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
    free(fill);
}

static void buckets_free(buckets *b)
{
    free(b->dl);
    free(b->start);
}

static size_t lineage(const buckets *b, size_t root, ws_delivery ***out)
{
    *out = &b->dl[b->start[root]];
    return b->start[root + 1] - b->start[root];
}

static int timer_pending(const ws_sim *sim, ws_delivery *const *v, size_t n)
{
    for (size_t t = 0; t < sim->ntimers; t++)
        for (size_t i = 0; i < n; i++)
            if (sim->timers[t].d == v[i]) return 1;
    return 0;
}

static const char *crash_of(const ws_sim *sim, const ws_delivery *d)
{
    unsigned inc = d->incarnation;
    if (inc >= 1 && inc <= sim->ncrashes && sim->crashes[inc - 1]) return sim->crashes[inc - 1];
    return "no crash";
}

static void check_entry(ws_sim *sim, const ws_sub *s, size_t root, const holding *h,
                        const buckets *bk)
{
    wsi_produced *p = &sim->produced[root - 1];
    ws_delivery **v;
    size_t n = lineage(bk, root, &v);
    int stream = s->cfg.form == WS_FORM_STREAM;

    /* doubled: two deliveries of one entry whose effects took effect */
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
        free(c0);
        break;
    }

    for (size_t i = 0; i < n; i++) {
        ws_delivery *d = v[i];
        /* leaked: what a dropped, retried or abandoned delivery queued took effect */
        int discarded = d->outcome != WS_ACK || d->seg_state == WSI_SEG_DROPPED;
        if (discarded) {
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
                free(c);
                break;
            }
        }
        /* split: an atomic segment whose effects and XACK parted */
        /* (plain lists and channels owe no settle: nothing to split) */
        if (d->sub->cfg.mode == WS_MODE_ATOMIC && d->seg_state == WSI_SEG_KEPT && d->flush &&
            !d->in_batch &&
            (d->sub->cfg.form == WS_FORM_STREAM || d->sub->cfg.form == WS_FORM_RELIABLE_LIST)) {
            const wsi_effect *e = first_applied(d);
            if (e && !d->settle_sent && !d->settle_failed) {
                char *c = cmd_text(e->cmd);
                char w[96];
                violation(sim, "split", p,
                          "entry %s's atomic segment was split: `%s` took effect (%s) but "
                          "its XACK did not",
                          p->shown, c, wsi_where_text(&e->where, w, sizeof w));
                free(c);
            } else if (!e && d->settle_sent && d->neffects && !all_failed(d)) {
                char w[96];
                violation(sim, "split", p,
                          "entry %s's atomic segment was split: its XACK took effect (%s) "
                          "but none of its commands did",
                          p->shown, wsi_where_text(&d->settle_where, w, sizeof w));
            }
        }
    }

    /* lost: settled nowhere and held nowhere */
    if (s->cfg.form == WS_FORM_STREAM || s->cfg.form == WS_FORM_RELIABLE_LIST) {
        int held = 0, settled = 0;
        for (size_t i = 0; i < n && !held; i++) {
            ws_delivery *d = v[i];
            if (stream) {
                held = set_has(&h->pending, d->id, d->id_len) ||
                       set_has(&h->scheduled, d->id, d->id_len);
            } else {
                held = set_has(&h->listed, d->id, d->id_len);
            }
        }
        for (size_t i = 0; !held && i < sim->nlineage; i++)
            if (sim->lineage[i].root == root && strcmp(sim->lineage[i].key, s->key) == 0)
                held = stream ? set_has(&h->pending, sim->lineage[i].id, sim->lineage[i].len)
                              : set_has(&h->listed, sim->lineage[i].id, sim->lineage[i].len);
        if (stream) {
            held = held || set_has(&h->pending, p->id, p->id_len) ||
                   set_has(&h->pending_payloads, p->payload, p->payload_len) ||
                   set_has(&h->unread, p->id, p->id_len) ||
                   set_has(&h->unread, p->payload, p->payload_len) ||
                   set_has(&h->scheduled, p->payload, p->payload_len);
        } else {
            held = held || set_has(&h->listed, p->id, p->id_len);
        }
        if (!sim->dead) held = held || timer_pending(sim, v, n);
        for (size_t i = 0; i < n && !settled; i++) {
            ws_delivery *d = v[i];
            /* An acked stream delivery whose queued commands all took effect, its entry
             * no longer pending, was settled by those commands themselves: a script that
             * XACKs its own entry atomically with its write (a crash before the
             * runtime's own XACK leaves nothing owed). */
            if (!d->settle_sent && !held && stream && d->outcome == WS_ACK && d->neffects) {
                settled = 1;
                for (size_t k = 0; k < d->neffects; k++)
                    if (!applied(d->effects[k].fate)) settled = 0;
            }
            if (!d->settle_sent) continue;
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
        if (!held && !settled) {
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
    }
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
        snprintf(how, sizeof how, "its delivery in read %llu of %s ended %s, but its LREM "
                 "did not take effect while its recovery member went, so the orphan sweep "
                 "never finds it", (unsigned long long)last->read, last->sub->name,
                 last->outcome == WS_ACK ? "ack" : "drop");
    else
        snprintf(how, sizeof how, "no member of the recovery set %s names it (the claim's ZADD "
                 "that follows its LMOVE never took effect), so the orphan sweep never finds "
                 "it; the crash: %s", s->recovery,
                 last ? crash_of(sim, last) : sim->last_crash[0] ? sim->last_crash : "none");
    violation(sim, "stranded", p,
              "entry %s is stranded on the processing list %s: no live delivery holds it "
              "and %s; it will never be delivered again",
              p->shown, s->processing, how);
}

int ws_sim_check(ws_sim *sim, const ws_violation **out, size_t *nout)
{
    for (size_t i = 0; i < sim->nviol * 3; i++) free(sim->viol_text[i]);
    free(sim->viol_text);
    free(sim->viol);
    free(sim->viol_root);
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
        buckets_make(sim, s, &bk);
        if (s->cfg.form == WS_FORM_STREAM) rc = read_stream_holding(sim, s, &h);
        else if (s->cfg.form == WS_FORM_RELIABLE_LIST) rc = read_list_holding(sim, s, &h);
        for (size_t r = 0; rc == 0 && r < sim->nproduced; r++) {
            const wsi_produced *p = &sim->produced[r];
            int form = p->form == WS_FORM_PLAIN_LIST ? WS_FORM_RELIABLE_LIST : p->form;
            int sform = s->cfg.form == WS_FORM_PLAIN_LIST ? WS_FORM_RELIABLE_LIST : s->cfg.form;
            int match = s->cfg.form == WS_FORM_CHANNEL && s->cfg.pattern
                            ? fnmatch(s->key, p->key, 0) == 0
                            : strcmp(p->key, s->key) == 0;
            if (!match || form != sform) continue;
            check_entry(sim, s, r + 1, &h, &bk);
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
