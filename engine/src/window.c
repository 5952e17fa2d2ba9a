/* window.c -- settling deliveries and flushing the window (SEMANTICS.md §3-§5, §7).
 *
 * A settle decides the delivery's segment (commit on ack, discard otherwise), records
 * what the outcome owes the broker, and flushes when the window says so.  A flush sends,
 * on the window connection: the committed segments in commit order (atomic ones as
 * MULTI, body, the delivery's own settle, EXEC), then the retry writes in settle order,
 * and -- in the same round trip when there are no retry writes, in a second one after
 * their replies otherwise -- the settles (one XACK for a stream; LREM [+ZREM] per
 * delivery for a reliable list).  Error replies become one failure report.  What the
 * broker owes for an outcome, and the runtime's copies that follow it, are outcome.c's
 * decision (the framework's dispatch.rs); this file carries it out.
 *
 * The window's state is this file's: its slots (one per outstanding delivery or batch,
 * with generations), the segments queued into, what is committed and owed.  When the
 * process dies in a round trip, wsi_send only records it; the public call's end
 * (wsi_api_end) frees that state here (wsi_process_gone), so no call runs back up. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sim_int.h"

/* ----- Slots and segments -------------------------------------------------------------------- */

/* The lowest free slot of s's window, with its next generation. */
static void take_slot(ws_sub *s, unsigned *slot, unsigned *gen)
{
    size_t i = 0;
    while (i < s->nslots && s->slot_busy[i]) i++;
    if (i == s->nslots) {
        s->slot_gen = wsi_xrealloc(s->slot_gen, (s->nslots + 1) * sizeof *s->slot_gen);
        s->slot_busy = wsi_xrealloc(s->slot_busy, s->nslots + 1);
        s->slot_gen[i] = 0;
        s->nslots++;
    }
    s->slot_busy[i] = 1;
    *slot = (unsigned)i;
    *gen = ++s->slot_gen[i];
}

/* Frees a slot for reuse (its generation is bumped when it is taken again). */
static void slot_release(ws_sub *s, unsigned slot)
{
    if (slot < s->nslots) s->slot_busy[slot] = 0;
}

/* Groups the read's deliveries into batches of cfg.batch, each with one slot. */
void wsi_assign_slots(ws_sub *s, size_t first)
{
    if (!s->cfg.batch) {
        for (size_t i = first; i < s->nlast; i++)
            take_slot(s, &s->last[i]->slot, &s->last[i]->gen);
        return;
    }
    for (size_t i = first; i < s->nlast; i += s->cfg.batch) {
        size_t n = s->nlast - i < s->cfg.batch ? s->nlast - i : s->cfg.batch;
        wsi_batch *bt = wsi_xcalloc(1, sizeof *bt);
        bt->members = wsi_xcalloc(n, sizeof *bt->members);
        bt->n = n;
        bt->all_acked = 1;
        take_slot(s, &bt->slot, &bt->gen);
        for (size_t k = 0; k < n; k++) {
            ws_delivery *d = s->last[i + k];
            bt->members[k] = d;
            d->batch = bt;
            d->in_batch = 1;
            d->slot = bt->slot;
            d->gen = bt->gen;
        }
    }
}

/* Frees a segment (its commands belong to their deliveries' effects). */
static void segment_free(wsi_segment *seg)
{
    if (!seg) return;
    wsi_free(seg->effect);
    wsi_free(seg->from);
    wsi_free(seg);
}

/* Queues cmd (ownership taken) into the segment of d (or of its batch), made at the first
 * command; the segment is open until d's settle decides it. */
void wsi_segment_queue(ws_delivery *d, wsi_cmd *cmd, int kind)
{
    wsi_segment **slot = d->batch ? &d->batch->seg : &d->seg;
    if (!*slot) {
        *slot = wsi_xcalloc(1, sizeof **slot);
        (*slot)->owner = d->batch ? d->batch->members[0] : d;
        (*slot)->batch = d->batch;
    }
    wsi_segment *seg = *slot;
    size_t e = wsi_effect_add(d, cmd, kind);
    if (seg->n == seg->cap) {
        seg->cap = seg->cap ? seg->cap * 2 : 4;
        seg->effect = wsi_xrealloc(seg->effect, seg->cap * sizeof *seg->effect);
        seg->from = wsi_xrealloc(seg->from, seg->cap * sizeof *seg->from);
    }
    seg->effect[seg->n] = e;
    seg->from[seg->n] = d;
    seg->n++;
    if (d->batch) {
        for (size_t i = 0; i < d->batch->n; i++)
            if (d->batch->members[i]->seg_state == WSI_SEG_NONE)
                d->batch->members[i]->seg_state = WSI_SEG_OPEN;
    } else {
        d->seg_state = WSI_SEG_OPEN;
    }
}

/* ----- A process gone ------------------------------------------------------------------------ */

/* Frees what s held in a process that is gone: its window, segments, batches, slots,
 * buffered messages and channel connection; outstanding deliveries are marked dead and
 * their open segments dropped. */
void wsi_window_reset(ws_sub *s)
{
    /* Outstanding deliveries die with the process; their segments go unsent. */
    for (size_t i = 0; i < s->nflight; i++) {
        ws_delivery *d = s->flight[i];
        d->dead = 1;
        if (d->seg_state == WSI_SEG_OPEN) d->seg_state = WSI_SEG_DROPPED;
        if (d->batch && d->batch->seg) {
            for (size_t j = 0; j < d->batch->n; j++)
                if (d->batch->members[j]->seg_state == WSI_SEG_OPEN)
                    d->batch->members[j]->seg_state = WSI_SEG_DROPPED;
        }
    }
    /* Batches are reachable from every member: collect each once (from its first
     * member), unlink them all, then free them. */
    wsi_batch **batches = NULL;
    size_t nbatches = 0;
    /* Without batches only an outstanding delivery holds a segment (settling commits or
     * drops it), so the deliveries in flight are all there is to look at: a restart then
     * costs what the process left, not the whole ledger (the crash explorer restarts
     * once per crash point). */
    size_t nscan = s->cfg.batch ? s->sim->ndl : s->nflight;
    for (size_t i = 0; i < nscan; i++) {
        ws_delivery *d = s->cfg.batch ? s->sim->dl[i] : s->flight[i];
        if (d->sub != s) continue;
        if (d->seg) {
            segment_free(d->seg);
            d->seg = NULL;
        }
        if (d->batch && d->batch->members[0] == d) {
            batches = wsi_xrealloc(batches, (nbatches + 1) * sizeof *batches);
            batches[nbatches++] = d->batch;
        }
    }
    /* written only where set: the crash explorer's children share these pages with
     * their parent, and a write copies the page */
    for (size_t i = 0; s->cfg.batch && i < s->sim->ndl; i++)
        if (s->sim->dl[i]->sub == s && s->sim->dl[i]->batch) s->sim->dl[i]->batch = NULL;
    for (size_t i = 0; i < nbatches; i++) {
        segment_free(batches[i]->seg);
        wsi_free(batches[i]->members);
        wsi_free(batches[i]);
    }
    wsi_free(batches);
    /* committed segments belong to the window once their delivery settled */
    for (size_t i = 0; i < s->ncommitted; i++) segment_free(s->committed[i].seg);
    for (size_t i = 0; i < s->nowed; i++)
        for (size_t j = 0; j < s->owed[i].nwrites; j++) wsi_cmd_free(s->owed[i].writes[j]);
    wsi_free(s->committed);
    wsi_free(s->owed);
    wsi_free(s->slot_gen);
    wsi_free(s->slot_busy);
    wsi_free(s->flight);
    wsi_free(s->since);
    wsi_free(s->last);
    for (size_t i = 0; i < s->nbuffered; i++) wsi_free(s->buffered[i]);
    wsi_free(s->buffered);
    wsi_free(s->buffered_len);
    s->buffered = NULL;
    s->buffered_len = NULL;
    s->nbuffered = s->capbuffered = 0;
    ws_conn_close(s->conn);
    s->conn = NULL;
    s->committed = NULL;
    s->owed = NULL;
    s->slot_gen = NULL;
    s->slot_busy = NULL;
    s->flight = NULL;
    s->since = NULL;
    s->last = NULL;
    s->ncommitted = s->capcommitted = s->nowed = s->capowed = s->nslots = 0;
    s->nflight = s->capflight = s->nsince = s->capsince = s->nlast = s->caplast = 0;
    s->outstanding = s->settled = s->waiting = 0;
    s->report_waiting = 0;
}

/* Frees what the dead process held: every subscription's window, and the timers. */
void wsi_process_gone(ws_sim *sim)
{
    sim->gone_pending = 0;
    for (size_t i = 0; i < sim->nsubs; i++) wsi_window_reset(sim->subs[i]);
    wsi_timers_free(sim);
}

/* See sim_int.h: frees a process that died in this public call; returns rc. */
int wsi_api_end(ws_sim *sim, int rc)
{
    if (sim->gone_pending) wsi_process_gone(sim);
    return rc;
}

/* ----- What an outcome owes --------------------------------------------------------------- */

/* Records what the broker's settle of d owes the window (o: the plan's broker outcome,
 * outcome.c).  Plain lists and channels settle nothing; a claiming read leaves a retried
 * entry pending (RequeueMode::LeavePending) unless a delay queue takes a retry_after. */
static void owe(ws_sub *s, ws_delivery *d, ws_outcome o, int64_t delay_ms)
{
    int form = s->cfg.form;
    if (o == WS_ABANDON) return;
    if (form == WS_FORM_PLAIN_LIST || form == WS_FORM_CHANNEL) {
        if (o == WS_RETRY)
            wsi_trace_note(s->sim, "-- %s: a %s cannot requeue %s (nothing is published; the "
                           "message is gone)\n", s->name,
                           form == WS_FORM_CHANNEL ? "channel" : "plain list", d->shown);
        return;
    }
    if (s->cfg.claiming && (o == WS_RETRY || (o == WS_RETRY_AFTER && !s->delay_queue))) {
        wsi_trace_note(s->sim, "-- %s: %s stays pending for the claiming read\n", s->name,
                       d->shown);
        return;
    }
    wsi_owed w = {.d = d};
    if (o == WS_RETRY) {
        w.writes[0] = wsi_requeue_copy(d);
        w.nwrites = 1;
        w.retried = 1;
    } else if (o == WS_RETRY_AFTER) {
        w.nwrites = wsi_delay_writes(d, delay_ms, w.writes);
        w.retried = 1;
    }
    if (s->nowed == s->capowed) {
        s->capowed = s->capowed ? s->capowed * 2 : 16;
        s->owed = wsi_xrealloc(s->owed, s->capowed * sizeof *s->owed);
    }
    s->owed[s->nowed++] = w;
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
    wsi_warn(s->sim, t.p);
    wsi_free(t.p);
    return 1;
}

/* Warns when seg's keys leave the slot of s's key (atomic segments on a cluster). */
static void warn_crossslot(ws_sub *s, const wsi_segment *seg)
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

/* The InRound reply is the handler's return value: it leaves after everything the
 * handler queued, whenever ws_reply was called (a stable move to the end). */
static void reply_last(wsi_segment *seg)
{
    size_t n = seg->n;
    size_t *eff = wsi_xmalloc(n * sizeof *eff);
    ws_delivery **from = wsi_xmalloc(n * sizeof *from);
    size_t k = 0;
    for (int pass = 0; pass < 2; pass++)
        for (size_t i = 0; i < n; i++) {
            int reply = seg->from[i]->effects[seg->effect[i]].kind == WSI_EFFECT_REPLY;
            if (reply != pass) continue;
            eff[k] = seg->effect[i];
            from[k++] = seg->from[i];
        }
    memcpy(seg->effect, eff, n * sizeof *eff);
    memcpy(seg->from, from, n * sizeof *from);
    wsi_free(eff);
    wsi_free(from);
}

/* Commits seg to the window: the reply last, a cluster warning, sent at the next flush. */
static void commit(ws_sub *s, wsi_segment *seg)
{
    reply_last(seg);
    if (s->cfg.mode == WS_MODE_ATOMIC && (s->cfg.warn_crossslot || s->sim->cfg.cluster))
        warn_crossslot(s, seg);
    if (s->ncommitted == s->capcommitted) {
        s->capcommitted = s->capcommitted ? s->capcommitted * 2 : 16;
        s->committed = wsi_xrealloc(s->committed, s->capcommitted * sizeof *s->committed);
    }
    s->committed[s->ncommitted++] =
        (wsi_committed){.seg = seg, .atomic = s->cfg.mode == WS_MODE_ATOMIC};
}

/* ----- Reports ------------------------------------------------------------------------------ */

/* Keeps one failure report for the subscription's next read, unless one waits already. */
void wsi_report(ws_sub *s, size_t commands, size_t settles, size_t failed,
                const char *first_error, size_t first_len)
{
    ws_sim *sim = s->sim;
    if (s->report_waiting) {
        wsi_trace_note(sim, "-- %s: a failure (%zu failed) while a report waits: not "
                       "reported again\n", s->name, failed);
        return;
    }
    s->report_waiting = 1;
    sim->counts.reports++;
    wsi_snprintf(s->report_error, sizeof s->report_error, "%.*s", (int)first_len, first_error);
    wsi_snprintf(s->report_name, sizeof s->report_name, "%s", s->subject);
    s->report = (ws_report){
        .subscription = s->report_name,
        .commands = commands,
        .settles = settles,
        .failed = failed,
        .first_error = s->report_error,
        .flush = s->flushes,
    };
    wsi_trace_note(sim, "-- %s: failure report: %zu commands, %zu settles, %zu failed, "
                   "first error: %s\n", s->name, commands, settles, failed, s->report_error);
}

/* The first error of a flush, copied: replies die with the next round trip. */
typedef struct first_error {
    char text[256];
    size_t len;
    int set;
} first_error;

/* Error replies in r (EXEC's array counts its elements); the first one's text. */
static size_t count_errors(const fr_reply *r, first_error *first)
{
    if (!r) return 0;
    if (r->type == FR_REPLY_ERROR) {
        if (!first->set) {
            first->set = 1;
            first->len = r->len < sizeof first->text ? r->len : sizeof first->text - 1;
            memcpy(first->text, r->str, first->len);
            first->text[first->len] = '\0';
        }
        return 1;
    }
    return 0;
}

/* Error replies of an EXEC: its own and its array's elements; the first one's text. */
static size_t count_exec_errors(const fr_reply *r, first_error *first)
{
    size_t n = count_errors(r, first);
    if (r && r->type == FR_REPLY_ARRAY)
        for (size_t i = 0; i < r->count; i++) n += count_errors(&r->elements[i], first);
    return n;
}

/* ----- Flushes ---------------------------------------------------------------------------------- */

/* A round trip under construction. */
typedef struct rt_build {
    wsi_cmd **cmds;
    int *roles;
    ws_delivery **dls;
    size_t *effs;
    unsigned char *owned; /* the flush made the command and frees it */
    size_t *pipes;        /* each command's pipeline, 1-based within the flush */
    size_t pipe;          /* the pipeline rt_add puts the next command in */
    size_t n, cap;
} rt_build;

/* Appends a command with its role, delivery and effect to b, in b's current pipeline. */
static void rt_add(rt_build *b, wsi_cmd *c, int role, ws_delivery *d, size_t eff, int owned)
{
    if (b->n == b->cap) {
        b->cap = b->cap ? b->cap * 2 : 16;
        b->cmds = wsi_xrealloc(b->cmds, b->cap * sizeof *b->cmds);
        b->roles = wsi_xrealloc(b->roles, b->cap * sizeof *b->roles);
        b->dls = wsi_xrealloc(b->dls, b->cap * sizeof *b->dls);
        b->effs = wsi_xrealloc(b->effs, b->cap * sizeof *b->effs);
        b->owned = wsi_xrealloc(b->owned, b->cap);
        b->pipes = wsi_xrealloc(b->pipes, b->cap * sizeof *b->pipes);
    }
    b->pipes[b->n] = b->pipe;
    b->cmds[b->n] = c;
    b->roles[b->n] = role;
    b->dls[b->n] = d;
    b->effs[b->n] = eff;
    b->owned[b->n] = (unsigned char)owned;
    b->n++;
}

/* Frees b and the commands it owns. */
static void rt_free(rt_build *b)
{
    for (size_t i = 0; i < b->n; i++)
        if (b->owned[i]) wsi_cmd_free(b->cmds[i]);
    wsi_free(b->cmds);
    wsi_free(b->roles);
    wsi_free(b->dls);
    wsi_free(b->effs);
    wsi_free(b->owned);
    wsi_free(b->pipes);
    memset(b, 0, sizeof *b);
}

/* A one-word command (MULTI, EXEC). */
static wsi_cmd *word(const char *w)
{
    wsi_cmdb b = {0};
    wsi_cmdb_adds(&b, w);
    return wsi_cmdb_done(&b);
}

/* The reliable-list settle of d: LREM <processing> 1 <value> [+ ZREM <recovery> <member>]. */
static void list_settle(rt_build *b, ws_delivery *d, int role)
{
    ws_sub *s = d->sub;
    wsi_cmdb c = {0};
    if (s->sim->cfg.mutant != WS_MUTANT_SKIP_LREM) {
        wsi_cmdb_adds(&c, "LREM");
        wsi_cmdb_adds(&c, s->processing);
        wsi_cmdb_adds(&c, "1");
        wsi_cmdb_add(&c, d->id, d->id_len);
        rt_add(b, wsi_cmdb_done(&c), role, d, (size_t)-1, 1);
    }
    if (s->recovery && d->member) {
        wsi_cmdb_adds(&c, "ZREM");
        wsi_cmdb_adds(&c, s->recovery);
        wsi_cmdb_add(&c, d->member, d->member_len);
        rt_add(b, wsi_cmdb_done(&c), role, d, (size_t)-1, 1);
    }
}

/* A delivery's own settle inside its atomic segment. */
static void own_settle(rt_build *b, ws_delivery *d)
{
    ws_sub *s = d->sub;
    if (s->cfg.form == WS_FORM_STREAM) {
        wsi_cmdb c = {0};
        wsi_cmdb_adds(&c, "XACK");
        wsi_cmdb_adds(&c, s->key);
        wsi_cmdb_adds(&c, s->group);
        wsi_cmdb_add(&c, d->id, d->id_len);
        rt_add(b, wsi_cmdb_done(&c), WSI_ROLE_INSETTLE, d, (size_t)-1, 1);
    } else if (s->cfg.form == WS_FORM_RELIABLE_LIST) {
        list_settle(b, d, WSI_ROLE_INSETTLE);
    }
}

/* Sends b on the window; the failure codes of wsi_send. */
static int flush_send(ws_sub *s, uint64_t flush, rt_build *b, const fr_reply **replies,
                      ws_delivery **xack, size_t nxack)
{
    ws_sim *sim = s->sim;
    char cause[192];
    wsi_snprintf(cause, sizeof cause, "flush %llu of %s after read %llu", (unsigned long long)flush,
             s->name, (unsigned long long)s->reads);
    wsi_annot an = {.cause = cause, .sub = s, .flush = flush, .roles = b->roles,
                    .dls = b->dls, .effects = b->effs, .pipes = b->pipes, .xack = xack,
                    .nxack = nxack};
    return wsi_send(sim, sim->window, b->n, b->cmds, &an, replies);
}

/* Appends the settles of the deliveries in list[0..n) (settle order) to b; for a stream
 * one XACK listing their ids.  *xack gets the deliveries the XACK names. */
static void add_settles(ws_sub *s, rt_build *b, ws_delivery **list, size_t n)
{
    if (n == 0) return;
    if (s->cfg.form == WS_FORM_STREAM) {
        wsi_cmdb c = {0};
        wsi_cmdb_adds(&c, "XACK");
        wsi_cmdb_adds(&c, s->key);
        wsi_cmdb_adds(&c, s->group);
        for (size_t i = 0; i < n; i++) wsi_cmdb_add(&c, list[i]->id, list[i]->id_len);
        rt_add(b, wsi_cmdb_done(&c), WSI_ROLE_SETTLE, NULL, (size_t)-1, 1);
    } else if (s->cfg.form == WS_FORM_RELIABLE_LIST) {
        for (size_t i = 0; i < n; i++) list_settle(b, list[i], WSI_ROLE_SETTLE);
    }
}

/* Opens the flush record the diagrams draw: the deliveries it settles, its trigger. */
static void record_flush(ws_sub *s, uint64_t number, const char *why, ws_delivery **since,
                         size_t nsince)
{
    ws_sim *sim = s->sim;
    if (sim->nflushes == sim->capflushes) {
        sim->capflushes = sim->capflushes ? sim->capflushes * 2 : 16;
        sim->flushes = wsi_xrealloc(sim->flushes, sim->capflushes * sizeof *sim->flushes);
    }
    wsi_flushrec *f = &sim->flushes[sim->nflushes++];
    memset(f, 0, sizeof *f);
    f->sub = s;
    f->number = number;
    f->read = s->reads;
    f->why = why;
    f->dl = wsi_rec_alloc(sim, (nsince ? nsince : 1) * sizeof *f->dl);
    if (nsince) memcpy(f->dl, since, nsince * sizeof *since);
    f->ndl = nsince;
}

/* Sends what the window owes (segments, retry writes, settles; §3) and reports
 * failures. */
int wsi_flush(ws_sub *s, const char *why)
{
    ws_sim *sim = s->sim;
    s->settled = 0;
    size_t nheld = 0;
    for (size_t i = 0; i < s->nowed; i++) nheld += s->owed[i].held;
    if (s->ncommitted == 0 && s->nowed == nheld) {
        /* Nothing to send: no round trip.  Held acks (an atomic batch still undecided)
         * stay owed; the deliveries settled so far wait in `since` for the flush that
         * carries them -- unless nothing is held, when nothing ever will. */
        if (nheld == 0) s->nsince = 0;
        return 0;
    }
    ws_delivery **since = s->since;
    size_t nsince = s->nsince;
    s->since = NULL;
    s->nsince = s->capsince = 0;
    for (size_t i = 0; i < nsince; i++) since[i]->flush = s->flushes + 1;
    /* Take the window's debts: a crash during the sends frees the window, not these. */
    wsi_committed *com = s->committed;
    size_t ncom = s->ncommitted;
    wsi_owed *owed = s->owed;
    size_t nowed = s->nowed;
    s->committed = NULL;
    s->owed = NULL;
    s->ncommitted = s->capcommitted = s->nowed = s->capowed = 0;
    /* held acks (atomic batches not yet decided) stay in the window, in order */
    size_t keep = 0;
    for (size_t i = 0; i < nowed; i++) {
        if (!owed[i].held) {
            owed[keep++] = owed[i];
            continue;
        }
        if (s->nowed == s->capowed) {
            s->capowed = s->capowed ? s->capowed * 2 : 16;
            s->owed = wsi_xrealloc(s->owed, s->capowed * sizeof *s->owed);
        }
        s->owed[s->nowed++] = owed[i];
    }
    nowed = keep;
    uint64_t F = ++s->flushes;
    sim->counts.flushes++;
    record_flush(s, F, why, since, nsince);
    wsi_free(since);
    wsi_trace_note(sim, "-- %s: flush %llu (%s): %zu segments, %zu settles owed\n", s->name,
                   (unsigned long long)F, why, ncom, nowed);

    rt_build b1 = {0}, b2 = {0};
    for (size_t i = 0; i < ncom; i++) {
        wsi_segment *seg = com[i].seg;
        ws_delivery *owner = seg->owner;
        b1.pipe++; /* each committed segment is a pipeline of its own (§3 step 1) */
        if (com[i].atomic) rt_add(&b1, word("MULTI"), WSI_ROLE_MULTI, owner, (size_t)-1, 1);
        for (size_t k = 0; k < seg->n; k++)
            rt_add(&b1, seg->from[k]->effects[seg->effect[k]].cmd, WSI_ROLE_SEGMENT,
                   seg->from[k], seg->effect[k], 0);
        if (com[i].atomic) {
            if (seg->batch)
                for (size_t m = 0; m < seg->batch->n; m++) own_settle(&b1, seg->batch->members[m]);
            else if (sim->cfg.mutant != WS_MUTANT_SETTLE_OUTSIDE_EXEC)
                own_settle(&b1, owner); /* (the mutant owes it with the shared settles) */
            rt_add(&b1, word("EXEC"), WSI_ROLE_EXEC, owner, (size_t)-1, 1);
        }
    }
    size_t nseg_cmds = b1.n;
    int has_retry = 0;
    for (size_t i = 0; i < nowed; i++) has_retry |= owed[i].retried;

    /* Settle order: deliveries that wrote nothing, then retried ones whose writes held. */
    ws_delivery **list = wsi_xcalloc(nowed ? nowed : 1, sizeof *list);
    size_t nlist = 0;
    for (size_t i = 0; i < nowed; i++)
        if (!owed[i].retried) list[nlist++] = owed[i].d;

    first_error first = {0};
    size_t failed = 0, nsettles = 0;
    int rc = 0;
    const fr_reply **rep = NULL;
    b1.pipe++; /* then the retry writes, or the settles when there are none */
    if (!has_retry) {
        add_settles(s, &b1, list, nlist);
        nsettles = b1.n - nseg_cmds;
        rep = wsi_xcalloc(b1.n, sizeof *rep);
        rc = flush_send(s, F, &b1, rep, list, nlist);
        for (size_t i = 0; rc == 0 && i < b1.n; i++)
            failed += b1.roles[i] == WSI_ROLE_EXEC ? count_exec_errors(rep[i], &first)
                                                   : count_errors(rep[i], &first);
    } else {
        for (size_t i = 0; i < nowed; i++)
            for (size_t w = 0; w < owed[i].nwrites; w++)
                rt_add(&b1, owed[i].writes[w], WSI_ROLE_RETRY, owed[i].d, (size_t)-1, 0);
        nsettles = b1.n - nseg_cmds;
        rep = wsi_xcalloc(b1.n, sizeof *rep);
        rc = flush_send(s, F, &b1, rep, NULL, 0);
        if (rc == 0) {
            for (size_t i = 0; i < b1.n; i++)
                failed += b1.roles[i] == WSI_ROLE_EXEC
                              ? count_exec_errors(rep[i], &first)
                              : count_errors(rep[i], &first);
            /* A retried delivery is settled only if every one of its writes held. */
            size_t pos = nseg_cmds;
            for (size_t i = 0; i < nowed; i++) {
                int ok = 1;
                for (size_t w = 0; w < owed[i].nwrites; w++, pos++) {
                    if (!rep[pos] || rep[pos]->type == FR_REPLY_ERROR) ok = 0;
                    else if (wsi_cmd_is(owed[i].writes[w], "XADD") &&
                             rep[pos]->type == FR_REPLY_BULK)
                        wsi_lineage_add(sim, owed[i].d, rep[pos]->str, rep[pos]->len);
                }
                if (owed[i].retried && ok) list[nlist++] = owed[i].d;
                else if (owed[i].retried)
                    wsi_trace_note(sim, "-- %s: the retry write of %s failed: not "
                                   "acknowledged, it stays pending\n", s->name, owed[i].d->shown);
            }
            b2.pipe = b1.pipe + 1;
            add_settles(s, &b2, list, nlist);
            nsettles += b2.n;
            if (b2.n) {
                const fr_reply **rep2 = wsi_xcalloc(b2.n, sizeof *rep2);
                rc = flush_send(s, F, &b2, rep2, list, nlist);
                for (size_t i = 0; rc == 0 && i < b2.n; i++)
                    failed += count_errors(rep2[i], &first);
                wsi_free(rep2);
            }
        }
    }
    if (rc == WS_EREFUSED) {
        char msg[128];
        snprintf(msg, sizeof msg, "%s", ws_conn_errstr(sim->window));
        wsi_report(s, nseg_cmds, nsettles, b1.n + b2.n, msg, strlen(msg));
        rc = 0;
    } else if (rc == 0 && failed) {
        wsi_report(s, nseg_cmds, nsettles, failed, first.text, first.len);
    }
    wsi_free(rep);
    wsi_free(list);
    rt_free(&b1);
    rt_free(&b2);
    for (size_t i = 0; i < ncom; i++) segment_free(com[i].seg);
    wsi_free(com);
    for (size_t i = 0; i < nowed; i++)
        for (size_t w = 0; w < owed[i].nwrites; w++) wsi_cmd_free(owed[i].writes[w]);
    wsi_free(owed);
    return rc;
}

/* ----- Settling ------------------------------------------------------------------------------------ */

/* d is no longer outstanding: it waits in `since` for the flush that carries it. */
static void leave_flight(ws_sub *s, ws_delivery *d)
{
    for (size_t i = 0; i < s->nflight; i++)
        if (s->flight[i] == d) {
            memmove(&s->flight[i], &s->flight[i + 1], (s->nflight - i - 1) * sizeof *s->flight);
            s->nflight--;
            break;
        }
    if (s->nsince == s->capsince) {
        s->capsince = s->capsince ? s->capsince * 2 : 16;
        s->since = wsi_xrealloc(s->since, s->capsince * sizeof *s->since);
    }
    s->since[s->nsince++] = d;
}

/* An outcome as the trace names it. */
static const char *outcome_word(ws_outcome o)
{
    switch (o) {
    case WS_ACK: return "ack";
    case WS_DROP: return "drop";
    case WS_RETRY: return "retry";
    case WS_RETRY_AFTER: return "retry_after";
    default: return "abandoned";
    }
}

/* Discards a segment: none of its commands is ever sent. */
static void drop_segment(wsi_segment **seg)
{
    segment_free(*seg);
    *seg = NULL;
}

/* A member of a batch settles: the batch's one segment is decided when its last member
 * is done -- committed only if every member acked. */
static void settle_member(ws_sub *s, ws_delivery *d, ws_outcome o, const wsi_plan *plan)
{
    wsi_batch *bt = d->batch;
    int atomic = s->cfg.mode == WS_MODE_ATOMIC;
    bt->done++;
    if (o != WS_ACK) bt->all_acked = 0;
    /* An atomic ack is held in its settle position until the batch is decided: its settle
     * may go inside the batch's transaction instead. */
    size_t before = s->nowed;
    owe(s, d, plan->broker, d->delay_ms); /* plain lists and channels owe nothing */
    if (atomic && o == WS_ACK && s->nowed > before) s->owed[s->nowed - 1].held = 1;
    if (bt->done < bt->n) return;
    int kept = bt->seg && bt->all_acked;
    for (size_t i = 0; i < bt->n; i++)
        if (bt->seg) bt->members[i]->seg_state = kept ? WSI_SEG_KEPT : WSI_SEG_DROPPED;
    if (kept) {
        commit(s, bt->seg);
        bt->seg = NULL;
    } else if (bt->seg) {
        drop_segment(&bt->seg);
    }
    /* decide the held acks: gone when the transaction carries them, released otherwise */
    size_t keep = 0;
    for (size_t i = 0; i < s->nowed; i++) {
        wsi_owed *w = &s->owed[i];
        if (w->held && w->d->batch == bt) {
            if (kept) continue;
            w->held = 0;
        }
        s->owed[keep++] = *w;
    }
    s->nowed = keep;
    slot_release(s, bt->slot);
}

/* Settles or abandons d in its window (§3-§5), flushing when the window says so. */
int wsi_settle(ws_delivery *d, ws_outcome o, int64_t delay_ms)
{
    ws_sub *s = d->sub;
    ws_sim *sim = s->sim;
    if (s->cfg.mode == WS_MODE_DIRECT) return wsi_direct_settle(d, o, delay_ms);
    d->done = 1;
    d->outcome = o;
    d->delay_ms = delay_ms;
    leave_flight(s, d);
    int atomic = s->cfg.mode == WS_MODE_ATOMIC;
    wsi_plan plan = wsi_plan_outcome(d, o, delay_ms);
    d->rejected = plan.rejected;
    d->copy_planned = plan.copy;
    if (d->batch) {
        settle_member(s, d, o, &plan);
    } else {
        int mutant = sim->cfg.mutant;
        if ((o == WS_ACK || (mutant == WS_MUTANT_KEEP_DISCARDED && o != WS_ABANDON)) &&
            d->seg) {
            d->seg_state = WSI_SEG_KEPT;
            commit(s, d->seg);
            d->seg = NULL;
            if (!atomic || o != WS_ACK || mutant == WS_MUTANT_SETTLE_OUTSIDE_EXEC)
                owe(s, d, plan.broker, delay_ms);
        } else {
            if (d->seg) {
                d->seg_state = WSI_SEG_DROPPED;
                drop_segment(&d->seg);
            }
            owe(s, d, plan.broker, delay_ms);
        }
        slot_release(s, d->slot);
    }
    wsi_trace_note(sim, "-- %s: %s %s (slot %u, generation %u)%s\n", s->name, d->shown,
                   outcome_word(o), d->slot, d->gen,
                   d->seg_state == WSI_SEG_KEPT      ? ": segment kept"
                   : d->seg_state == WSI_SEG_DROPPED ? ": segment dropped"
                   : d->seg_state == WSI_SEG_OPEN    ? ": batch segment open"
                                                     : "");
    s->outstanding--;
    /* Pub/Sub: `waiting` is what the last read left behind it (pubsub.rs round_stream sets it
     * as it hands a message out: window.yielded(rx.len())); a message that arrives while the
     * handlers run changes nothing until the next read, so it does not hold the flush. */
    if (o == WS_ABANDON) {
        if ((s->ncommitted || s->nowed) && s->outstanding == 0 && s->waiting == 0)
            return wsi_flush(s, "the last outstanding delivery was abandoned");
        return 0;
    }
    s->settled++;
    int rc = 0;
    if (s->settled >= s->capacity) rc = wsi_flush(s, "capacity");
    else if (s->outstanding == 0 && s->waiting == 0) rc = wsi_flush(s, "nothing outstanding");
    /* the runtime's copy follows the settle, whether or not the window flushed it */
    if (rc == 0 && (plan.copy || plan.rejected)) rc = wsi_publish_copy(d, &plan);
    return rc;
}

/* ----- Direct mode (§7) ----------------------------------------------------------------------------- */

/* One direct round trip of one command for d (its role: a retry write or a settle); an
 * error reply is counted into *failed.  *ok: the reply was not an error. */
static int direct_one(ws_delivery *d, wsi_cmd *c, int role, first_error *first, size_t *failed,
                      int *ok)
{
    ws_sim *sim = d->sub->sim;
    char cause[160];
    wsi_snprintf(cause, sizeof cause, "settle of %s", d->shown);
    const fr_reply *r = NULL;
    wsi_annot an = {.cause = cause, .sub = d->sub, .role = role, .dl = d};
    if (d->sub->cfg.form == WS_FORM_STREAM && wsi_cmd_is(c, "XACK")) {
        /* a stream's settle is an XACK naming the delivery, as a shared one does */
        an.xack = &d;
        an.nxack = 1;
        if (role == WSI_ROLE_SETTLE) an.dl = NULL;
    }
    int rc = wsi_send(sim, sim->window, 1, &c, &an, &r);
    *ok = rc == 0 && r && r->type != FR_REPLY_ERROR;
    if (rc == 0) *failed += count_errors(r, first);
    if (rc == 0 && *ok && role == WSI_ROLE_RETRY && wsi_cmd_is(c, "XADD") &&
        r->type == FR_REPLY_BULK)
        wsi_lineage_add(sim, d, r->str, r->len);
    return rc;
}

/* The commands of a direct settle, each awaited on its own (message.rs, list.rs: the
 * broker's settle is a sequence of awaited calls on the pool, each ending the settle at its
 * first error: `?`).  Retry writes first; the settles only if every write held; a
 * reliable list's ZREM only if its LREM held (list.rs settle @ e9525ff).  A settle that
 * fails is logged by the runtime and nothing more (dispatch.rs settle_outcome @ 042b614:
 * "ack / nack failed"): no failure report, and no runtime copy after a failed drop
 * (publish_copy: "a copy on top would duplicate the message"). */
int wsi_direct_settle(ws_delivery *d, ws_outcome o, int64_t delay_ms)
{
    ws_sub *s = d->sub;
    ws_sim *sim = s->sim;
    d->done = 1;
    d->outcome = o;
    d->delay_ms = delay_ms;
    leave_flight(s, d);
    s->nsince = 0; /* no window: nothing to flush */
    slot_release(s, d->slot);
    s->outstanding--;
    wsi_trace_note(sim, "-- %s: %s %s (direct)\n", s->name, d->shown, outcome_word(o));
    wsi_plan plan = wsi_plan_outcome(d, o, delay_ms);
    d->rejected = plan.rejected;
    d->copy_planned = plan.copy;
    /* what the broker's settle owes, as the window would record it */
    size_t before = s->nowed;
    owe(s, d, plan.broker, delay_ms);
    wsi_owed w = {0};
    int owes = s->nowed > before;
    if (owes) w = s->owed[--s->nowed];
    first_error first = {0};
    size_t failed = 0;
    int rc = 0, ok = 1;
    for (size_t i = 0; owes && rc == 0 && ok && i < w.nwrites; i++)
        rc = direct_one(d, w.writes[i], WSI_ROLE_RETRY, &first, &failed, &ok);
    if (owes && rc == 0 && ok) {
        rt_build st = {0};
        if (s->cfg.form == WS_FORM_STREAM) add_settles(s, &st, &d, 1);
        else list_settle(&st, d, WSI_ROLE_SETTLE);
        for (size_t i = 0; rc == 0 && ok && i < st.n; i++)
            rc = direct_one(d, st.cmds[i], WSI_ROLE_SETTLE, &first, &failed, &ok);
        rt_free(&st);
    }
    for (size_t i = 0; owes && i < w.nwrites; i++) wsi_cmd_free(w.writes[i]);
    if (rc == WS_EREFUSED) {
        snprintf(first.text, sizeof first.text, "%s", ws_conn_errstr(sim->window));
        first.len = strlen(first.text);
        ok = 0;
        rc = 0;
    }
    if (rc == 0 && !ok) {
        wsi_trace_note(sim, "-- %s: ack / nack of %s failed: %s (logged by the runtime, not "
                       "reported)%s\n", s->name, d->shown, first.text,
                       plan.copy ? ": no copy is published, the delivery stays with the broker"
                                 : "");
        /* the drop did not happen: neither the copy nor the rejection took the entry over */
        if (plan.rejected) wsi_publish_copy(d, &(wsi_plan){.rejected = 1}); /* its note */
        d->copy_planned = WSI_COPY_NONE;
        d->rejected = 0;
        return 0;
    }
    if (rc == 0 && (plan.copy || plan.rejected)) rc = wsi_publish_copy(d, &plan);
    return rc;
}
