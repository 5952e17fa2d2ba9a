/* trace.c -- the simulation's trace, an observer: every round trip of every connection
 * with its cause, each command's reply and fate and the delivery it came from, plus notes
 * (settles, flush decisions, crashes, restarts); the flush diagrams; the round-trip map.
 * It reads what wsi_send hands it (the round trip, its annotation, the effective outcomes
 * of ledger.c) and writes only its own records: the ledger the checks read is ledger.c's,
 * so a simulation without a trace (ws_sim_config.no_trace) checks the same.  Everything
 * here is a function of the inputs: no times, no addresses, so the text and its hash are
 * deterministic. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sim_int.h"

/* Appends a record (text owned) to the trace. */
static void add_rec(ws_sim *sim, char *text, ws_sub *sub, uint64_t flush)
{
    if (sim->nrecs == sim->caprecs) {
        sim->caprecs = sim->caprecs ? sim->caprecs * 2 : 64;
        sim->recs = wsi_xrealloc(sim->recs, sim->caprecs * sizeof *sim->recs);
    }
    sim->recs[sim->nrecs++] = (wsi_rec){text, flush, sub};
}

/* A free-form note in the trace (none without trace text). */
void wsi_trace_note(ws_sim *sim, const char *fmt, ...)
{
    if (sim->cfg.no_trace_text || sim->cfg.no_trace) return;
    char buf[1024];
    va_list ap;
    va_start(ap, fmt);
    wsi_vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    add_rec(sim, wsi_xstrdup(buf), NULL, 0);
}

static int applied(int fate) { return fate == WS_FATE_REPLIED || fate == WS_FATE_LOST; }

/* A role as the trace names it; NULL for none. */
static const char *role_word(int role)
{
    switch (role) {
    case WSI_ROLE_READ: return "read";
    case WSI_ROLE_SWEEP: return "sweep";
    case WSI_ROLE_POOL: return "pool";
    case WSI_ROLE_DIRECT: return "direct write";
    case WSI_ROLE_PUBLISH: return "publish";
    case WSI_ROLE_SEGMENT: return "segment";
    case WSI_ROLE_MULTI: return "MULTI";
    case WSI_ROLE_EXEC: return "EXEC";
    case WSI_ROLE_INSETTLE: return "own settle";
    case WSI_ROLE_RETRY: return "retry write";
    case WSI_ROLE_SETTLE: return "settle";
    case WSI_ROLE_TIMER: return "timer copy";
    case WSI_ROLE_COPY: return "runtime copy";
    default: return NULL;
    }
}

/* A fate as the trace names it; NULL for replied. */
static const char *fate_word(int fate)
{
    switch (fate) {
    case WS_FATE_INJECTED: return "injected";
    case WS_FATE_LOST: return "lost";
    case WS_FATE_UNSENT: return "not sent";
    case WS_FATE_UNKNOWN: return "outcome unknown";
    default: return NULL;
    }
}

/* The "[role of id]" tag of a trace line. */
static void tag(wsi_text *t, int role, const ws_delivery *d)
{
    const char *w = role_word(role);
    if (!w) return;
    wsi_text_printf(t, "  [%s", w);
    if (d) wsi_text_printf(t, " of %s", d->shown);
    wsi_text_add(t, "]", 1);
}

/* The flush record the round trip belongs to, NULL if none. */
static wsi_flushrec *current_flush(ws_sim *sim, const wsi_annot *an)
{
    for (size_t i = sim->nflushes; i-- > 0;)
        if (sim->flushes[i].sub == an->sub && sim->flushes[i].number == an->flush)
            return &sim->flushes[i];
    return NULL;
}

/* See sim_int.h: the round trip's text, flush record lines and round-trip map entry. */
void wsi_trace_round_trip(ws_sim *sim, const ws_round_trip *rt, wsi_cmd *const *cmds,
                          const wsi_annot *an, const wsi_eff *eff)
{
    /* Without trace text there is no diagram either: only the flush commands and the
     * round-trip map, which the checks, the explorer and the fuzzer read, are kept. */
    int text = !sim->cfg.no_trace_text;
    wsi_text t = {0};
    if (text) {
        wsi_text_printf(&t, "#%llu %s (%s): %s", (unsigned long long)rt->index, rt->conn,
                        rt->cause, rt->status ? ws_err_name(rt->status) : "ok");
        if (rt->note && *rt->note) wsi_text_printf(&t, ", %s", rt->note);
        wsi_text_add(&t, "\n", 1);
    }
    wsi_flushrec *f = an->flush ? current_flush(sim, an) : NULL;
    wsi_text body = {0};
    if (f) {
        f->rts++;
        if (text) {
            if (f->body) {
                wsi_text_add(&body, f->body, strlen(f->body));
                wsi_free(f->body);
            }
            wsi_text_printf(&body, "  round trip #%llu on %s%s%s:\n",
                            (unsigned long long)rt->index, rt->conn, rt->status ? ", " : "",
                            rt->status ? ws_err_name(rt->status) : "");
        }
    }
    int small = rt->n <= 32;
    /* The round-trip map and the flush records keep each command's arguments (copies in
     * the records arena): the fuzzer compares them with the model's as they are.  Their
     * text is rendered here only for the trace; without it, at the first request
     * (ws_sim_round_trip, ws_sub_flush_command). */
    int mapped = strcmp(rt->conn, "admin") != 0;
    wsi_cmd **args = NULL;
    if (mapped || f) {
        args = wsi_rec_alloc(sim, (rt->n ? rt->n : 1) * sizeof *args);
        for (size_t i = 0; i < rt->n; i++)
            /* a read's COUNT LMOVEs are one command n times: one copy */
            args[i] = i && cmds[i] == cmds[i - 1] ? args[i - 1] : wsi_rec_cmd(sim, cmds[i]);
    }
    size_t offs_small[33];
    size_t *off = small ? offs_small : wsi_xmalloc((rt->n + 1) * sizeof *off);
    int want_lines = text || f;
    int want_replies = text || f;
    wsi_text all = sim->scratch; /* reused from round trip to round trip */
    all.len = 0;
    off[0] = 0;
    for (size_t i = 0; text && i < rt->n; i++) {
        wsi_text_cmd(&all, cmds[i]);
        wsi_text_add(&all, "", 1); /* each line NUL-terminated in the block */
        off[i + 1] = all.len;
    }
    for (size_t i = 0; want_lines && i < rt->n; i++) {
        wsi_text line = {0};
        if (text) line = (wsi_text){.p = all.p + off[i], .len = off[i + 1] - off[i] - 1};
        size_t rl = 6;
        char *rs = want_replies && rt->replies[i] ? ws_reply_text(rt->replies[i], &rl) : NULL;
        const char *reply = rs ? rs : "(none)";
        const char *fw = fate_word(rt->fates[i]);
        if (eff[i].discarded && applied(rt->fates[i]))
            fw = "queued, then discarded: EXEC never ran";
        if (text) {
            wsi_text_add(&t, "  ", 2);
            wsi_text_add(&t, line.p, line.len);
            wsi_text_add(&t, " -> ", 4);
            wsi_text_add(&t, reply, rl);
            if (fw) wsi_text_printf(&t, " (%s)", fw);
            tag(&t, wsi_annot_role(an, i), wsi_annot_dl(an, i));
            wsi_text_add(&t, "\n", 1);
        }
        if (f) {
            if ((f->ncmds & (f->ncmds - 1)) == 0) /* capacity doubles at powers of two */
                f->cmds = wsi_xrealloc(f->cmds, (f->ncmds ? f->ncmds * 2 : 1) * sizeof *f->cmds);
            ws_flush_command *fc = &f->cmds[f->ncmds++];
            fc->round_trip = f->rts;
            fc->pipeline = an->pipes ? an->pipes[i] : 0;
            fc->text = text ? wsi_rec_memdup(sim, line.p, line.len) : NULL;
            fc->argc = args[i]->argc;
            fc->argv = (const char *const *)args[i]->argv;
            fc->argvlen = args[i]->argvlen;
            fc->reply = rs ? rs : wsi_xstrdup("(none)");
            rs = NULL;
            fc->from = wsi_annot_dl(an, i);
            int frole = wsi_annot_role(an, i);
            fc->role = frole == WSI_ROLE_SEGMENT || frole == WSI_ROLE_MULTI ||
                               frole == WSI_ROLE_EXEC || frole == WSI_ROLE_INSETTLE ||
                               frole == WSI_ROLE_RETRY || frole == WSI_ROLE_SETTLE
                           ? role_word(frole)
                           : NULL;
            fc->fate = fw;
            fc->rt_index = rt->index;
            fc->rt_status = rt->status;
            fc->settles = NULL;
            fc->nsettles = 0;
            if (frole == WSI_ROLE_SETTLE && !fc->from && an->nxack) {
                ws_delivery **xs = wsi_rec_alloc(sim, an->nxack * sizeof *xs);
                memcpy(xs, an->xack, an->nxack * sizeof *xs);
                fc->settles = (const ws_delivery *const *)xs;
                fc->nsettles = an->nxack;
            }
            fc->fate_code = rt->fates[i];
            if (text) {
                /* a new pipeline inside the round trip: the `..` of a flush expectation */
                if (i > 0 && an->pipes && an->pipes[i] != an->pipes[i - 1])
                    wsi_text_add(&body, "    ..\n", 7);
                wsi_text_printf(&body, "    %-40s", line.p);
                int role = frole;
                const ws_delivery *d = fc->from;
                if (role == WSI_ROLE_SETTLE && !d) {
                    wsi_text_add(&body, "  settles", 9);
                    for (size_t k = 0; k < an->nxack; k++)
                        wsi_text_printf(&body, " %s", an->xack[k]->shown);
                } else if (d && role_word(role)) {
                    wsi_text_printf(&body, "  %s of %s", role_word(role), d->shown);
                }
                if (fw) wsi_text_printf(&body, " (%s)", fw);
                wsi_text_add(&body, "\n", 1);
            }
        }
        wsi_free(rs);
    }
    if (f && text) f->body = body.p;
    if (text) add_rec(sim, t.p, an->sub, an->flush);
    if (mapped) {
        if (sim->nrts == sim->caprts) {
            sim->caprts = sim->caprts ? sim->caprts * 2 : 64;
            sim->rts = wsi_xrealloc(sim->rts, sim->caprts * sizeof *sim->rts);
        }
        struct wsi_rtrec *rr = &sim->rts[sim->nrts++];
        wsi_copy_str(rr->conn, sizeof rr->conn, rt->conn);
        rr->incarnation = sim->incarnation;
        rr->index = rt->index;
        rr->n = rt->n;
        rr->status = rt->status;
        const char *cause = rt->cause ? rt->cause : "";
        rr->cause = wsi_rec_memdup(sim, cause, strlen(cause));
        rr->args = args;
        rr->commands = NULL;
        if (text) { /* the texts are at hand: keep them now */
            rr->commands = wsi_rec_alloc(sim, (rt->n ? rt->n : 1) * sizeof *rr->commands);
            for (size_t i = 0; i < rt->n; i++)
                rr->commands[i] = wsi_rec_memdup(sim, all.p + off[i], off[i + 1] - off[i] - 1);
        }
    }
    sim->scratch = all;
    if (!small) wsi_free(off);
}

/* The whole trace as one text (heap). */
char *ws_sim_trace_text(const ws_sim *sim, size_t *len)
{
    wsi_text t = {0};
    wsi_text_add(&t, "", 0);
    for (size_t i = 0; i < sim->nrecs; i++)
        wsi_text_add(&t, sim->recs[i].text, strlen(sim->recs[i].text));
    if (len) *len = t.len;
    return t.p;
}

/* FNV-1a 64 of the trace text. */
uint64_t ws_sim_trace_hash(const ws_sim *sim)
{
    uint64_t h = 0xcbf29ce484222325ULL;
    for (size_t i = 0; i < sim->nrecs; i++)
        for (const unsigned char *p = (const unsigned char *)sim->recs[i].text; *p; p++) {
            h ^= *p;
            h *= 0x100000001b3ULL;
        }
    return h;
}

/* A delivery's outcome as the diagrams name it. */
static const char *outcome_text(const ws_delivery *d)
{
    if (d->dead && !d->done) return "lost in a crash";
    switch (d->outcome) {
    case WS_ACK: return "ack";
    case WS_DROP: return "drop";
    case WS_RETRY: return "retry";
    case WS_RETRY_AFTER: return "retry_after";
    case WS_ABANDON: return "abandoned";
    default: return "outstanding";
    }
}

/* What became of a delivery's segment, as the diagrams name it. */
static const char *segment_text(const ws_delivery *d)
{
    switch (d->seg_state) {
    case WSI_SEG_KEPT: return "segment kept";
    case WSI_SEG_DROPPED: return "segment dropped";
    case WSI_SEG_OPEN: return "segment open";
    default: return "no segment";
    }
}

/* Every flush drawn as text: header, entries, round trips. */
char *ws_sim_diagram(const ws_sim *sim, size_t *len)
{
    wsi_text t = {0};
    wsi_text_add(&t, "", 0);
    for (size_t i = 0; i < sim->nflushes; i++) {
        const wsi_flushrec *f = &sim->flushes[i];
        size_t rts = f->rts;
        wsi_text_printf(&t, "flush %llu of %s after read %llu (%s): %zu round trip%s\n",
                        (unsigned long long)f->number, f->sub->name,
                        (unsigned long long)f->read, f->why, rts, rts == 1 ? "" : "s");
        for (size_t k = 0; k < f->ndl; k++) {
            ws_flush_delivery fd;
            ws_sim_flush_delivery(sim, i, k, &fd);
            wsi_text_printf(&t, "  entry %-24s %-12s %-16s", fd.id, fd.outcome, fd.segment);
            if (fd.queued) wsi_text_printf(&t, " (%zu queued)", fd.queued);
            wsi_text_add(&t, "\n", 1);
        }
        if (f->body) wsi_text_add(&t, f->body, strlen(f->body));
        wsi_text_add(&t, "\n", 1);
    }
    if (len) *len = t.len;
    return t.p;
}

size_t ws_sim_flush_count(const ws_sim *sim) { return sim->nflushes; }

/* Flush i's summary; -1 past the end. */
int ws_sim_flush(const ws_sim *sim, size_t i, ws_flush_info *out)
{
    if (i >= sim->nflushes) return -1;
    const wsi_flushrec *f = &sim->flushes[i];
    *out = (ws_flush_info){f->sub, f->number, f->read, f->why, f->ndl, f->ncmds, f->rts};
    return 0;
}

/* Delivery k of flush i; -1 past the end. */
int ws_sim_flush_delivery(const ws_sim *sim, size_t i, size_t k, ws_flush_delivery *out)
{
    if (i >= sim->nflushes || k >= sim->flushes[i].ndl) return -1;
    const ws_delivery *d = sim->flushes[i].dl[k];
    size_t queued = 0;
    for (size_t e = 0; e < d->neffects; e++) queued += d->effects[e].kind != WSI_EFFECT_DIRECT;
    *out = (ws_flush_delivery){d, d->shown, outcome_text(d), segment_text(d), queued};
    return 0;
}

/* Command k of flush i; -1 past the end. */
int ws_sim_flush_command(const ws_sim *sim, size_t i, size_t k, ws_flush_command *out)
{
    if (i >= sim->nflushes || k >= sim->flushes[i].ncmds) return -1;
    *out = sim->flushes[i].cmds[k];
    return 0;
}

size_t ws_sim_round_trip_count(const ws_sim *sim) { return sim->nrts; }

/* A command's text as the trace prints it, in the records arena. */
static char *rec_cmd_text(ws_sim *sim, const wsi_cmd *c)
{
    wsi_text t = sim->scratch;
    t.len = 0;
    wsi_text_cmd(&t, c);
    char *s = wsi_rec_memdup(sim, t.p ? t.p : "", t.len);
    sim->scratch = t;
    return s;
}

/* Round trip i of the map, its command texts rendered at the first request. */
int ws_sim_round_trip(const ws_sim *csim, size_t i, ws_rt_info *out)
{
    if (i >= csim->nrts) return -1;
    /* The texts are rendered at the first request and kept: a cache in the records
     * arena, which does not change what the simulation is. */
    ws_sim *sim = (ws_sim *)csim;
    struct wsi_rtrec *r = &sim->rts[i];
    if (!r->commands) {
        r->commands = wsi_rec_alloc(sim, (r->n ? r->n : 1) * sizeof *r->commands);
        for (size_t k = 0; k < r->n; k++)
            r->commands[k] = k && r->args[k] == r->args[k - 1] ? r->commands[k - 1]
                                                               : rec_cmd_text(sim, r->args[k]);
    }
    *out = (ws_rt_info){r->conn, r->cause, r->incarnation, r->index, r->n,
                        (const char *const *)r->commands, r->status};
    return 0;
}

/* Round trip i of the map without rendering its texts. */
int ws_sim_round_trip_args(const ws_sim *sim, size_t i, ws_rt_info *out)
{
    if (i >= sim->nrts) return -1;
    const struct wsi_rtrec *r = &sim->rts[i];
    *out = (ws_rt_info){r->conn, r->cause, r->incarnation, r->index, r->n,
                        (const char *const *)r->commands, r->status};
    return 0;
}

/* Command k of round trip i as arguments; -1 past the end. */
int ws_sim_round_trip_command(const ws_sim *sim, size_t i, size_t k, int *argc,
                              const char *const **argv, const size_t **argvlen)
{
    if (i >= sim->nrts || k >= sim->rts[i].n) return -1;
    const wsi_cmd *c = sim->rts[i].args ? sim->rts[i].args[k] : NULL;
    *argc = c ? c->argc : 0;
    *argv = c ? (const char *const *)c->argv : NULL;
    *argvlen = c ? c->argvlen : NULL;
    return 0;
}

/* The flush record's command i, its text rendered when render is set. */
static int flush_command(const ws_sub *s, uint64_t flush, size_t i, ws_flush_command *out,
                         int render)
{
    ws_sim *sim = s->sim;
    for (size_t k = 0; k < sim->nflushes; k++) {
        wsi_flushrec *f = &sim->flushes[k];
        if (f->sub != s || f->number != flush) continue;
        if (i >= f->ncmds) return -1;
        ws_flush_command *fc = &f->cmds[i];
        if (render && !fc->text)
            fc->text = rec_cmd_text(sim, &(wsi_cmd){fc->argc, (char **)fc->argv,
                                                   (size_t *)fc->argvlen});
        *out = *fc;
        return 0;
    }
    return -1;
}

int ws_sub_flush_command(const ws_sub *s, uint64_t flush, size_t i, ws_flush_command *out)
{
    return flush_command(s, flush, i, out, 1);
}

/* Command i of the subscription's flush, its text not rendered. */
int ws_sub_flush_command_args(const ws_sub *s, uint64_t flush, size_t i,
                              ws_flush_command *out)
{
    return flush_command(s, flush, i, out, 0);
}
