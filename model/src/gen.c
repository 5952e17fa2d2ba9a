/* gen.c -- runs from a choice source, played on the engine, written as scenarios, and
 * checked against the model (gen.h).
 *
 * The generator draws one step at a time and plays it at once, so it only ever draws a
 * step the engine's present state allows, and records what the engine answered.  The
 * same player (play_step) replays a recorded run (gen_play): a run is a plain list of
 * scenario statements, whichever way it was made.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "wsm_gen.h"
#include "wsi_alloc.h"
#include "wsi_buf.h"
#include "wsm_model.h"
#include "wsm_int.h"

#ifdef __GLIBC__
#include <malloc.h>
#endif

/* ----- Memory and text ----------------------------------------------------------------- */

/* common/'s family and buffer: out of memory aborts with "wsim: out of memory in libwsm". */

static gen_str gstr(const char *p, size_t n) { return wsm_str_in(wsi_xrealloc(NULL, n + 1), p, n); }

static gen_str gstrz(const char *s) { return gstr(s, strlen(s)); }

static gen_cmd cmd_of(const char *first, ...)
{
    /* the arguments counted first: one argv array, not one realloc per argument */
    va_list ap;
    int n = 0;
    va_start(ap, first);
    for (const char *a = first; a; a = va_arg(ap, const char *)) n++;
    va_end(ap);
    gen_cmd c = {0, n ? wsi_xcalloc((size_t)n, sizeof *c.argv) : NULL};
    va_start(ap, first);
    for (const char *a = first; a; a = va_arg(ap, const char *)) c.argv[c.argc++] = gstrz(a);
    va_end(ap);
    return c;
}

static void cmd_release(gen_cmd *c)
{
    for (int i = 0; i < c->argc; i++) wsi_free(c->argv[i].p);
    wsi_free(c->argv);
    c->argv = NULL;
    c->argc = 0;
}

static gen_cmd cmd_copy(const gen_cmd *c)
{
    gen_cmd d = {c->argc, wsi_xcalloc((size_t)c->argc, sizeof *d.argv)};
    for (int i = 0; i < c->argc; i++) d.argv[i] = gstr(c->argv[i].p, c->argv[i].len);
    return d;
}

static gen_str str_copy(gen_str s) { return s.p ? gstr(s.p, s.len) : (gen_str){NULL, 0}; }

/* ----- Names ----------------------------------------------------------------------------- */

static const char *form_word(ws_form f)
{
    switch (f) {
    case WS_FORM_STREAM: return "stream";
    case WS_FORM_RELIABLE_LIST: return "reliable-list";
    case WS_FORM_PLAIN_LIST: return "list";
    case WS_FORM_CHANNEL: return "channel";
    default: return "?";
    }
}

static const char *mode_word(ws_mode m)
{
    return m == WS_MODE_DIRECT ? "direct" : m == WS_MODE_ATOMIC ? "atomic" : "window";
}

static const char *out_key_of(ws_form f)
{
    return f == WS_FORM_STREAM ? "out.s" : f == WS_FORM_CHANNEL ? "out.c" : "out.l";
}

static const char *fault_word(ws_fault_kind k)
{
    switch (k) {
    case WS_FAULT_CRASH_AFTER: return "crash-after";
    case WS_FAULT_CRASH_BEFORE: return "crash-before";
    case WS_FAULT_LOSE_REPLIES: return "lose-replies";
    case WS_FAULT_ERROR: return "error";
    case WS_FAULT_REFUSE: return "refuse";
    case WS_FAULT_DISCONNECT: return "disconnect";
    default: return "?";
    }
}

static const char *ordinal(uint64_t n)
{
    uint64_t t = n % 100;
    if (t >= 11 && t <= 13) return "th";
    switch (n % 10) {
    case 1: return "st";
    case 2: return "nd";
    case 3: return "rd";
    default: return "th";
    }
}

/* ----- Steps --------------------------------------------------------------------------- */

static gen_step *new_step(gen_run *r, gen_kind kind)
{
    if (r->nsteps == r->capsteps) {
        r->capsteps = r->capsteps ? r->capsteps * 2 : 32;
        r->steps = wsi_xrealloc(r->steps, r->capsteps * sizeof *r->steps);
    }
    gen_step *s = &r->steps[r->nsteps++];
    memset(s, 0, sizeof *s);
    s->kind = kind;
    return s;
}

static void step_free(gen_step *s)
{
    wsi_free(s->fired);
    cmd_release(&s->cmd);
    wsi_free(s->report_error);
    wsi_free(s->payload.p);
    wsi_free(s->hname.p);
    wsi_free(s->hval.p);
    for (size_t i = 0; i < s->ndl; i++) {
        wsi_free(s->dl[i].id.p);
        wsi_free(s->dl[i].payload.p);
    }
    wsi_free(s->dl);
}

/* Copies a step's description (not its observations). */
static void step_copy(gen_step *d, const gen_step *s)
{
    memset(d, 0, sizeof *d);
    d->kind = s->kind;
    d->sub = s->sub;
    d->drains_lost = s->drains_lost;
    d->entry = s->entry;
    d->cmd = cmd_copy(&s->cmd);
    d->out_form = s->out_form;
    d->out_key = s->out_key;
    d->payload = str_copy(s->payload);
    d->hname = str_copy(s->hname);
    d->hval = str_copy(s->hval);
    d->outcome = s->outcome;
    d->ms = s->ms;
    d->fconn = s->fconn;
    d->fault = s->fault;
    memcpy(d->fname, s->fname, sizeof d->fname);
    d->fault.name = s->fault.name ? d->fname : NULL;
}

void gen_free(gen_run *r)
{
    if (!r) return;
    for (size_t i = 0; i < r->nsteps; i++) step_free(&r->steps[i]);
    wsi_free(r->steps);
    ws_sim_free(r->sim);
    wsi_free(r->seen);
    wsi_free(r->refusal);
    memset(r, 0, sizeof *r);
}

/* ----- The engine ------------------------------------------------------------------------- */

/* A fresh simulation with the run's world: setup, subscriptions, as gen_scenario writes
 * them.  0 or WS_ENOMEM. */
static int world_start(gen_run *r)
{
    const gen_config *c = &r->cfg;
    /* model mode arms no fault: plain connections, one layer less per round trip */
    ws_sim_config sc = {.seed = c->seed, .no_trace_text = !r->keep_trace,
                        .no_faults = !c->faults, .reuse = r->reuse};
    r->sim = ws_sim_new(&sc);
    if (!r->sim) return WS_ENOMEM;
    static const char *const group[] = {"XGROUP", "CREATE", "k", "g", "$", "MKSTREAM"};
    static const char *const str[] = {"SET", "str", "x"};
    if (c->form == WS_FORM_STREAM) ws_sim_command(r->sim, 6, group, NULL, NULL);
    ws_sim_command(r->sim, 3, str, NULL, NULL);
    ws_sub_config m = {0};
    m.form = c->form;
    m.mode = c->mode;
    m.key = "k";
    m.count = c->count;
    m.batch = c->batch;
    m.label = "main";
    m.buffer = c->buffer;
    m.max_attempts = c->max_attempts;
    m.dead_letter = c->dead_letter ? GEN_DEAD_LETTER : NULL;
    if (c->form == WS_FORM_STREAM) {
        m.group = "g";
        m.consumer = c->auto_consumer ? NULL : "c1";
        if (c->delay_queue) {
            m.delay_queue = "k:delayed";
            m.delay_ttl_ms = c->ttl_ms;
        }
    }
    if (c->form == WS_FORM_RELIABLE_LIST && c->recovery) {
        m.recovery = "k:claims";
        m.min_idle_ms = GEN_MIN_IDLE_MS;
    }
    if (c->reply_form) {
        m.reply.form = c->reply_form;
        m.reply.key = out_key_of(c->reply_form);
        m.reply_in_round = c->reply_in_round;
    }
    r->subs[0] = ws_subscribe(r->sim, &m);
    if (c->form == WS_FORM_STREAM && c->rescue) {
        ws_sub_config q = m;
        q.delay_queue = NULL;
        q.delay_ttl_ms = 0;
        q.consumer = c->auto_consumer ? NULL : "c2";
        q.reclaim = 1;
        if (!c->rescue_declared) {
            q.max_attempts = 0;
            q.dead_letter = NULL;
        }
        q.min_idle_ms = GEN_MIN_IDLE_MS;
        q.label = "rescue";
        r->subs[1] = ws_subscribe(r->sim, &q);
    }
    if (!r->subs[0]) return WS_EINVAL;
    return 0;
}

/* The latest delivery of entry e, as the scenario runner finds it. */
static ws_delivery *latest(gen_run *r, size_t e)
{
    for (size_t i = r->nseen; i-- > 0;)
        if (ws_delivery_root(r->seen[i]) == e) return r->seen[i];
    return NULL;
}

static void refuse(gen_run *r, size_t i, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void refuse(gen_run *r, size_t i, const char *fmt, ...)
{
    if (r->refused) return;
    r->refused = 1;
    char buf[1024];
    va_list ap;
    va_start(ap, fmt);
    wsi_vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    wsi_buf b = {0};
    wsi_buf_xprintf(&b, "step %zu: %s", i + 1, buf);
    r->refusal = wsi_buf_xtake(&b);
}

/* The recovery members a reliable-list read made (their first 12 bytes: the process id
 * and the counter), read off its ZADDs (round trips [rt0, now)), in delivery order. */
static void observe_members(gen_run *r, gen_step *s, size_t rt0)
{
    size_t k = 0;
    size_t n = ws_sim_round_trip_count(r->sim);
    for (size_t i = rt0; i < n && k < s->ndl; i++) {
        int argc;
        const char *const *argv;
        const size_t *lens;
        for (size_t c = 0; k < s->ndl && ws_sim_round_trip_command(r->sim, i, c, &argc, &argv,
                                                                    &lens) == 0; c++) {
            if (argc < 3 || lens[0] != 4 || memcmp(argv[0], "ZADD", 4) != 0 || lens[1] != 8 ||
                memcmp(argv[1], "k:claims", 8) != 0)
                continue;
            if (argc == 4 && lens[3] >= 12) {
                memcpy(s->dl[k].member, argv[3], 12);
                s->dl[k].has_member = 1;
            }
            k++;
        }
    }
}

/* Plays step i of r on r->sim and records what happened. */
static void play_step(gen_run *r, size_t i)
{
    gen_step *s = &r->steps[i];
    ws_sim *sim = r->sim;
    int rc = 0;
    ws_delivery *d = NULL;
    if (s->kind == GS_QUEUE || s->kind == GS_POOL || s->kind == GS_PUBLISH ||
        s->kind == GS_REPLY || s->kind == GS_BIND || s->kind == GS_SETTLE) {
        d = latest(r, s->entry);
        if (!d) {
            s->rc = WS_EINVAL;
            refuse(r, i, "e%zu was never delivered", s->entry);
            return;
        }
    }
    ws_header h = {s->hname.p, s->hval.p, s->hval.len};
    ws_out out = {s->out_form, s->out_key};
    switch (s->kind) {
    case GS_PRODUCE:
        rc = ws_sim_produce(sim, r->cfg.form, "k", s->payload.p, s->payload.len, &h,
                            s->hname.p ? 1 : 0, NULL);
        break;
    case GS_READ: {
        ws_sub *sub = r->subs[s->sub];
        size_t rt0 = ws_sim_round_trip_count(sim);
        ws_read_result rr;
        rc = sub ? ws_read(sub, &rr) : WS_EINVAL;
        if (rc) break;
        s->read_no = rr.read;
        if (rr.is_report) {
            s->is_report = 1;
            s->report = rr.report;
            wsi_free(s->report_error);
            s->report_error = wsi_xstrdup(rr.report.first_error ? rr.report.first_error : "");
            s->report.first_error = s->report_error;
            s->report.subscription = NULL;
            break;
        }
        s->ndl = rr.n;
        s->dl = wsi_xcalloc(rr.n, sizeof *s->dl);
        for (size_t k = 0; k < rr.n; k++) {
            ws_delivery *x = ws_read_delivery(sub, k);
            if (r->nseen == r->capseen) {
                r->capseen = r->capseen ? r->capseen * 2 : 64;
                r->seen = wsi_xrealloc(r->seen, r->capseen * sizeof *r->seen);
            }
            r->seen[r->nseen++] = x;
            s->dl[k].entry = ws_delivery_root(x);
            const char *id = ws_delivery_id(x);
            s->dl[k].id = gstr(id, strlen(id));
            size_t plen;
            const char *pl = ws_delivery_payload(x, &plen);
            if (pl) s->dl[k].payload = gstr(pl, plen);
        }
        if (r->cfg.form == WS_FORM_RELIABLE_LIST && r->cfg.recovery) observe_members(r, s, rt0);
        break;
    }
    case GS_QUEUE:
    case GS_POOL: {
        /* the step's command as argv (generated commands have a handful of arguments) */
        const char *argv_small[16];
        size_t lens_small[16];
        int big = s->cmd.argc > 16;
        const char **argv = big ? wsi_xcalloc((size_t)s->cmd.argc, sizeof *argv) : argv_small;
        size_t *lens = big ? wsi_xcalloc((size_t)s->cmd.argc, sizeof *lens) : lens_small;
        for (int k = 0; k < s->cmd.argc; k++) {
            argv[k] = s->cmd.argv[k].p;
            lens[k] = s->cmd.argv[k].len;
        }
        if (s->kind == GS_QUEUE) rc = ws_queue(d, s->cmd.argc, argv, lens);
        else rc = ws_pool(sim, d, s->cmd.argc, argv, lens, NULL);
        if (big) {
            wsi_free(argv);
            wsi_free(lens);
        }
        break;
    }
    case GS_PUBLISH:
        rc = ws_publish(d, &out, s->payload.p, s->payload.len, &h, s->hname.p ? 1 : 0);
        break;
    case GS_REPLY: rc = ws_reply(d, s->payload.p, s->payload.len); break;
    case GS_BIND: rc = ws_bind(d, &out); break;
    case GS_SETTLE: rc = ws_settle(d, s->outcome, s->ms); break;
    case GS_ADVANCE: rc = ws_sim_advance(sim, s->ms); break;
    case GS_CRASH: rc = ws_sim_crash(sim); break;
    case GS_SHUTDOWN:
        rc = s->drains_lost ? ws_sim_shutdown_drains_lost(sim) : ws_sim_shutdown(sim);
        break;
    case GS_RESTART: rc = ws_sim_restart(sim); break;
    case GS_STOP: rc = r->subs[s->sub] ? ws_stop(r->subs[s->sub]) : WS_EINVAL; break;
    case GS_FAULT: {
        ws_conn *c = s->fconn ? ws_sim_window(sim) : ws_sim_reader(sim);
        ws_fault f = s->fault;
        f.name = s->fault.name ? s->fname : NULL;
        if (!s->fired) s->fired = wsi_xcalloc(1, sizeof *s->fired);
        f.fired_flag = s->fired;
        rc = c ? ws_fault_arm(c, &f) : WS_EINVAL;
        break;
    }
    }
    s->rc = rc;
    /* in fault mode a crash, a refused round trip or a read answered with an injected
     * error is the fault doing its work */
    int faulted = rc == WS_ECRASHED || rc == WS_EREFUSED || (s->kind == GS_READ && rc == WS_EINVAL);
    if (rc && !(r->cfg.faults && faulted))
        refuse(r, i, "the engine refused it: %s (%s)", ws_sim_errstr(sim), ws_err_name(rc));
}

/* ----- Drawing a run --------------------------------------------------------------------- */

/* What the generator knows between steps. */
typedef struct genstate {
    gen_run *r;
    ch *c;
    const gen_limits *lim;
    int stopped[2];
    int64_t budget_used;   /* ordinary clock steps in this process */
    size_t reads;          /* reads made by this process */
    size_t actions;        /* handler actions so far (their tags) */
    ws_delivery **act;     /* actionable()'s answer, reused from step to step */
    size_t capact;
    /* the deliveries whose reply waits for the handler's Ok (a second one is refused),
     * and the outputs each delivery bound (a bound reply joins the round instead) */
    ws_delivery **waiting;
    size_t nwaiting, capwaiting;
    ws_delivery **bound_dl;
    ws_form *bound_form;
    size_t nbound, capbound;
} genstate;

static void draw_config(ch *c, const gen_limits *lim, gen_config *cfg)
{
    memset(cfg, 0, sizeof *cfg);
    int faults = ch_int(c, 0, 7) == 7;
    cfg->faults = lim->force_faults ? 1 : lim->allow_faults ? faults : 0;
    static const ws_form forms[] = {WS_FORM_STREAM, WS_FORM_RELIABLE_LIST, WS_FORM_PLAIN_LIST,
                                    WS_FORM_CHANNEL};
    static const ws_mode modes[] = {WS_MODE_WINDOW, WS_MODE_ATOMIC, WS_MODE_DIRECT};
    cfg->form = forms[ch_pick(c, 4)];
    cfg->mode = modes[ch_pick(c, 3)];
    cfg->count = (size_t)ch_int(c, 1, 5);
    size_t batch = (size_t)ch_int(c, 0, 3);
    cfg->batch = cfg->mode == WS_MODE_DIRECT ? 0 : batch;
    if (cfg->form == WS_FORM_STREAM) {
        cfg->delay_queue = ch_bool(c);
        static const int64_t ttls[] = {0, 86400000, 20000};
        int64_t ttl = ttls[ch_pick(c, 3)];
        cfg->ttl_ms = cfg->delay_queue ? ttl : 0;
        cfg->rescue = ch_bool(c);
    }
    if (cfg->form == WS_FORM_RELIABLE_LIST) cfg->recovery = ch_bool(c);
    static const ws_form outs[] = {0, WS_FORM_PLAIN_LIST, WS_FORM_STREAM, WS_FORM_CHANNEL};
    cfg->reply_form = outs[ch_pick(c, 4)];
    if (cfg->reply_form) cfg->reply_in_round = ch_bool(c);
    /* a batch subscription reads COUNT = its batch size (source.rs round_batches) */
    if (cfg->batch) cfg->count = cfg->batch;
    /* the registration's declarations: none, max-attempts, a dead letter, both */
    unsigned declared = (unsigned)ch_int(c, 0, 3);
    if (declared & 1) cfg->max_attempts = (unsigned)ch_int(c, 1, 3);
    cfg->dead_letter = (declared & 2) != 0;
    if (cfg->rescue && declared) cfg->rescue_declared = ch_bool(c);
    if (cfg->form == WS_FORM_STREAM) cfg->auto_consumer = ch_bool(c);
    if (cfg->form == WS_FORM_CHANNEL) {
        static const size_t bufs[] = {0, 0, 1, 2};
        cfg->buffer = bufs[ch_pick(c, 4)];
    }
    cfg->seed = 1;
}

/* Does d's reply wait for the handler's Ok (outside the round), rather than join the
 * round (in-round, or bound to the reply output, in a window mode)? */
static int reply_waits(const genstate *g, ws_delivery *d)
{
    const gen_config *c = &g->r->cfg;
    if (c->mode == WS_MODE_DIRECT) return 1;
    if (c->reply_in_round) return 0;
    for (size_t i = 0; i < g->nbound; i++)
        if (g->bound_dl[i] == d && g->bound_form[i] == c->reply_form) return 0;
    return 1;
}

static int has_waiting_reply(const genstate *g, ws_delivery *d)
{
    for (size_t i = 0; i < g->nwaiting; i++)
        if (g->waiting[i] == d) return 1;
    return 0;
}

/* Records what an action step does to the generator's view of d: a reply that waits, an
 * output bound. */
static void note_action(genstate *g, const gen_step *s, ws_delivery *d)
{
    if (s->kind == GS_REPLY && reply_waits(g, d)) {
        if (g->nwaiting == g->capwaiting) {
            g->capwaiting = g->capwaiting ? 2 * g->capwaiting : 16;
            g->waiting = wsi_xrealloc(g->waiting, g->capwaiting * sizeof *g->waiting);
        }
        g->waiting[g->nwaiting++] = d;
    } else if (s->kind == GS_BIND) {
        if (g->nbound == g->capbound) {
            g->capbound = g->capbound ? 2 * g->capbound : 16;
            g->bound_dl = wsi_xrealloc(g->bound_dl, g->capbound * sizeof *g->bound_dl);
            g->bound_form = wsi_xrealloc(g->bound_form, g->capbound * sizeof *g->bound_form);
        }
        g->bound_dl[g->nbound] = d;
        g->bound_form[g->nbound++] = s->out_form;
    }
}

/* The deliveries a handler may act on: outstanding, of a live subscription, and the
 * latest delivery of their entry (the scenario's aliases reach only that one). */
static size_t actionable(genstate *g, ws_delivery ***out)
{
    gen_run *r = g->r;
    if (g->capact < r->nseen) {
        g->capact = r->nseen * 2;
        g->act = wsi_xrealloc(g->act, g->capact * sizeof *g->act);
    }
    size_t n = 0;
    for (size_t i = 0; i < r->nseen; i++) {
        ws_delivery *d = r->seen[i];
        if (ws_delivery_done(d)) continue;
        ws_sub *s = ws_delivery_sub(d);
        if ((s == r->subs[0] && g->stopped[0]) || (s == r->subs[1] && g->stopped[1])) continue;
        size_t e = ws_delivery_root(d);
        if (!e || latest(r, e) != d) continue;
        g->act[n++] = d;
    }
    *out = g->act;
    return n;
}

/* Appends v in decimal and a NUL to buf at *at (buf has room for 21 more bytes): the
 * generator writes names and payloads at every step, without printf. */
static void put_size(char *buf, size_t *at, size_t v) { *at += wsm_u64_text(buf + *at, v); }

/* The forms a handler publishes to or binds (keys out.l, out.s, out.c). */
static const ws_form OUT_FORMS[] = {WS_FORM_PLAIN_LIST, WS_FORM_STREAM, WS_FORM_CHANNEL};

/* "e<entry>.<action>" into buf (n bytes, cut when short), the next action's tag. */
static void tag(genstate *g, size_t entry, char *buf, size_t n)
{
    char t[48]; /* two 20-digit numbers and three bytes fit */
    size_t at = 0;
    t[at++] = 'e';
    put_size(t, &at, entry);
    t[at++] = '.';
    put_size(t, &at, ++g->actions);
    if (at >= n) at = n - 1;
    memcpy(buf, t, at);
    buf[at] = '\0';
}

/* A fresh tag into t (as tag()), and "<prefix><tag>" as a new string: the payload of a
 * publish or a reply, naming the action it came from. */
static gen_str tagged(genstate *g, size_t entry, const char *prefix, char *t, size_t n)
{
    tag(g, entry, t, n);
    char p[64];
    wsi_snprintf(p, sizeof p, "%s%s", prefix, t);
    return gstrz(p);
}

/* A payload: unique (its number), sometimes with bytes that need quoting. */
static gen_str payload_of(ch *c, const char *prefix, size_t num)
{
    static const char seps[] = {0, ' ', '"', '\\', '\n', '\x01', '\xff', '#'};
    char buf[64];
    size_t at = strlen(prefix);
    if (at > 16) at = 16; /* prefixes are a few letters */
    memcpy(buf, prefix, at);
    char sep = seps[ch_pick(c, 8)];
    if (sep) buf[at++] = sep;
    put_size(buf, &at, num);
    return gstr(buf, at);
}

static void draw_header(ch *c, gen_step *s, size_t num)
{
    switch (ch_int(c, 0, 3)) {
    case 1: {
        char v[32];
        wsi_snprintf(v, sizeof v, "t%zu", num);
        s->hname = gstrz("trace");
        s->hval = gstrz(v);
        break;
    }
    case 2:
        s->hname = gstrz("x-ruststream-retry-count");
        s->hval = gstrz("2");
        break;
    case 3:
        s->hname = gstrz("note");
        s->hval = gstrz("a b");
        break;
    default: break;
    }
}

static void draw_action(genstate *g, gen_step *s, ws_delivery *d)
{
    gen_run *r = g->r;
    ch *c = g->c;
    size_t e = ws_delivery_root(d);
    s->entry = e;
    char t[48], key[32];
    /* a second reply that would wait is refused (ws_reply): not drawn */
    int can_reply = r->cfg.reply_form && !(reply_waits(g, d) && has_waiting_reply(g, d));
    unsigned w[6] = {6, 1, 1, can_reply ? 1 : 0, 1, 7};
    switch (ch_weighted(c, w, 6)) {
    case 0: { /* queue */
        s->kind = GS_QUEUE;
        tag(g, e, t, sizeof t);
        unsigned q[5] = {5, 2, 1, 1, 1};
        switch (ch_weighted(c, q, 5)) {
        case 0: s->cmd = cmd_of("RPUSH", "log", t, NULL); break;
        case 1:
            wsi_snprintf(key, sizeof key, "n:e%zu", e);
            s->cmd = cmd_of("INCR", key, NULL);
            break;
        case 2:
            wsi_snprintf(key, sizeof key, "s:e%zu", e);
            s->cmd = cmd_of("SET", key, t, NULL);
            break;
        case 3: s->cmd = cmd_of("INCR", NULL); break; /* refused at queue time */
        default: s->cmd = cmd_of("LPUSH", "str", t, NULL); break; /* WRONGTYPE */
        }
        break;
    }
    case 1: { /* pool */
        s->kind = GS_POOL;
        tag(g, e, t, sizeof t);
        char pt[64];
        wsi_snprintf(pt, sizeof pt, "pool:%s", t);
        unsigned q[3] = {2, 1, 1};
        switch (ch_weighted(c, q, 3)) {
        case 0: s->cmd = cmd_of("RPUSH", "log", pt, NULL); break;
        case 1: s->cmd = cmd_of("INCR", "pc", NULL); break;
        default: s->cmd = cmd_of("GET", "pc", NULL); break;
        }
        break;
    }
    case 2: { /* publish */
        s->kind = GS_PUBLISH;
        s->out_form = OUT_FORMS[ch_pick(c, 3)];
        s->out_key = out_key_of(s->out_form);
        s->payload = tagged(g, e, "pub:", t, sizeof t);
        if (ch_bool(c)) {
            s->hname = gstrz("via");
            s->hval = gstrz(t);
        }
        break;
    }
    case 3: { /* reply */
        s->kind = GS_REPLY;
        s->payload = tagged(g, e, "re:", t, sizeof t);
        break;
    }
    case 4: { /* bind */
        s->kind = GS_BIND;
        s->out_form = OUT_FORMS[ch_pick(c, 3)];
        s->out_key = out_key_of(s->out_form);
        break;
    }
    default: { /* settle */
        s->kind = GS_SETTLE;
        unsigned o[5] = {6, 1, 1, 1, 1};
        static const ws_outcome outcomes[] = {WS_ACK, WS_DROP, WS_RETRY, WS_RETRY_AFTER, WS_ABANDON};
        s->outcome = outcomes[ch_weighted(c, o, 5)];
        if (s->outcome == WS_RETRY_AFTER) {
            static const int64_t delays[] = {0, 50, 1000, 30000};
            s->ms = delays[ch_pick(c, 4)];
        }
        break;
    }
    }
}

/* The fault's target by name: the (1 + 0..extra)th command called one of a few names. */
static void fault_named(gen_step *s, ch *c, uint64_t extra)
{
    static const char *names[] = {"XACK", "EXEC", "RPUSH", "LPUSH", "XADD", "ZADD", "LREM", "MULTI"};
    wsi_snprintf(s->fname, sizeof s->fname, "%s", names[ch_pick(c, 8)]);
    s->fault.name = s->fname;
    s->fault.nth = 1 + ch_int(c, 0, extra);
}

/* The fault's target by position: one of the next three round trips, its command
 * first_command..3 (0: the round trip as a whole). */
static void fault_placed(gen_step *s, ch *c, uint64_t next, uint64_t first_command)
{
    s->fault.round_trip = next + ch_int(c, 0, 2);
    s->fault.command = (size_t)ch_int(c, first_command, 3);
}

static void draw_fault(genstate *g, gen_step *s)
{
    ch *c = g->c;
    gen_run *r = g->r;
    s->kind = GS_FAULT;
    s->fconn = ch_pick(c, 4) == 3 ? 0 : 1; /* mostly the window */
    ws_conn *conn = s->fconn ? ws_sim_window(r->sim) : ws_sim_reader(r->sim);
    uint64_t next = ws_conn_get_stats(conn).round_trips + 1;
    unsigned w[7] = {3, 1, 2, 1, 1, 1, 1};
    switch (ch_weighted(c, w, 7)) {
    case 0: /* an error reply by name */
        s->fault.kind = WS_FAULT_ERROR;
        fault_named(s, c, 3);
        break;
    case 1: /* an error reply by position */
        s->fault.kind = WS_FAULT_ERROR;
        fault_placed(s, c, next, 1);
        break;
    case 2:
        s->fault.kind = WS_FAULT_CRASH_AFTER;
        if (ch_bool(c))
            fault_named(s, c, 2);
        else
            fault_placed(s, c, next, 0);
        break;
    case 3:
        s->fault.kind = WS_FAULT_CRASH_BEFORE;
        fault_placed(s, c, next, 1);
        break;
    case 4:
        s->fault.kind = WS_FAULT_LOSE_REPLIES;
        s->fault.round_trip = next + ch_int(c, 0, 2);
        break;
    case 5:
        s->fault.kind = WS_FAULT_REFUSE;
        s->fault.round_trip = next + ch_int(c, 0, 2);
        break;
    default: /* the connection is lost and the process lives on */
        s->fault.kind = WS_FAULT_DISCONNECT;
        s->fault.round_trip = next + ch_int(c, 0, 2);
        break;
    }
}

/* Step kinds, in the order of the weighted choice: 0 ends the run. */
enum { D_END, D_PRODUCE, D_READ_MAIN, D_READ_RESCUE, D_ACT, D_ADVANCE, D_CRASH, D_RESTART,
       D_STOP, D_FAULT, D_SHUTDOWN, D_KINDS };

gen_limits gen_target_limits(void)
{
    gen_limits l = {0};
    l.allow_faults = 1;
    l.quirks = GEN_QUIRKS_KNOWN;
    return l;
}

void gen_tune_heap(void)
{
#ifdef __GLIBC__
    mallopt(M_TRIM_THRESHOLD, 64 << 20);
    mallopt(M_TOP_PAD, 1 << 20);
#endif
}

int gen_generate(ch *c, const gen_limits *lim_in, gen_run *r)
{
    static const gen_limits defaults = {0};
    gen_limits lim = lim_in ? *lim_in : defaults;
    if (!lim.max_steps) lim.max_steps = 96;
    if (!lim.max_entries) lim.max_entries = 16;
    memset(r, 0, sizeof *r);
    r->keep_trace = lim.keep_trace;
    r->reuse = lim.reuse;
    draw_config(c, &lim, &r->cfg);
    int rc = world_start(r);
    if (rc) {
        refuse(r, 0, "the world could not be made: %s", r->sim ? ws_sim_errstr(r->sim) : "out of memory");
        return r->sim ? 0 : rc;
    }
    genstate g = {.r = r, .c = c, .lim = &lim};
    if (lim.before_step) lim.before_step(lim.ud, r, (size_t)-1);
    while (r->nsteps < lim.max_steps && !r->refused) {
        int alive = !ws_sim_dead(r->sim);
        ws_delivery **act = NULL;
        size_t nact = alive ? actionable(&g, &act) : 0;
        unsigned w[D_KINDS] = {0};
        w[D_END] = 1;
        w[D_PRODUCE] = r->nentries < lim.max_entries ? 16 : 0;
        w[D_READ_MAIN] = alive && !g.stopped[0] ? 16 : 0;
        w[D_READ_RESCUE] = alive && r->subs[1] && !g.stopped[1] ? 6 : 0;
        w[D_ACT] = nact ? 48 : 0;
        w[D_ADVANCE] = 6;
        w[D_CRASH] = alive ? 2 : 0;
        w[D_RESTART] = alive ? 1 : 24;
        w[D_STOP] = alive && (!g.stopped[0] || (r->subs[1] && !g.stopped[1])) ? 1 : 0;
        w[D_FAULT] = alive && r->cfg.faults ? 6 : 0;
        w[D_SHUTDOWN] = alive ? 2 : 0;
        size_t at = c->pos;
        size_t k = ch_weighted(c, w, D_KINDS);
        if (k == D_END) break;
        gen_step *s = new_step(r, GS_PRODUCE);
        s->choice_at = at;
        switch (k) {
        case D_PRODUCE: {
            size_t num = ++r->nentries;
            s->kind = GS_PRODUCE;
            s->payload = payload_of(c, "p", num);
            draw_header(c, s, num);
            break;
        }
        case D_READ_MAIN:
        case D_READ_RESCUE:
            s->kind = GS_READ;
            s->sub = k == D_READ_RESCUE;
            g.reads++;
            break;
        case D_ACT: {
            ws_delivery *d = act[ch_pick(c, nact)];
            draw_action(&g, s, d);
            note_action(&g, s, d);
            break;
        }
        case D_ADVANCE: {
            static const int64_t steps[] = {1, 10, 100, 1000, 5000, 30000, -1};
            int64_t ms = steps[ch_pick(c, 7)];
            if (ms < 0) {
                /* the recovery advance: only while this process holds nothing */
                ms = g.reads == 0 ? GEN_MIN_IDLE_MS + 1 : 1;
            }
            if (ms <= GEN_MIN_IDLE_MS) {
                if (g.budget_used + ms > GEN_ADVANCE_BUDGET_MS) ms = GEN_ADVANCE_BUDGET_MS - g.budget_used;
                g.budget_used += ms;
            }
            s->kind = GS_ADVANCE;
            s->ms = ms;
            break;
        }
        case D_CRASH: s->kind = GS_CRASH; break;
        case D_SHUTDOWN:
            s->kind = GS_SHUTDOWN;
            s->drains_lost = ch_pick(c, 4) == 3; /* one in four loses the race */
            break;
        case D_RESTART:
            s->kind = GS_RESTART;
            g.budget_used = 0;
            g.reads = 0;
            g.stopped[0] = g.stopped[1] = 0; /* a stop lasts one process */
            break;
        case D_STOP: {
            int which = 0;
            if (r->subs[1] && !g.stopped[1] && (g.stopped[0] || ch_bool(c))) which = 1;
            s->kind = GS_STOP;
            s->sub = which;
            g.stopped[which] = 1;
            break;
        }
        default:
            draw_fault(&g, s);
            break;
        }
        if (lim.before_step) lim.before_step(lim.ud, r, r->nsteps - 1);
        play_step(r, r->nsteps - 1);
    }
    wsi_free(g.act);
    wsi_free(g.waiting);
    wsi_free(g.bound_dl);
    wsi_free(g.bound_form);
    return 0;
}

int gen_play(const gen_run *src, gen_run *out)
{
    memset(out, 0, sizeof *out);
    out->cfg = src->cfg;
    out->nentries = src->nentries;
    out->keep_trace = src->keep_trace;
    int rc = world_start(out);
    if (rc) {
        refuse(out, 0, "the world could not be made");
        return out->sim ? 0 : rc;
    }
    for (size_t i = 0; i < src->nsteps && !out->refused; i++) {
        gen_step *s = new_step(out, src->steps[i].kind);
        step_copy(s, &src->steps[i]);
        play_step(out, i);
    }
    return 0;
}

/* ----- Writing the scenario -------------------------------------------------------------- */

void gen_token(char **buf, size_t *len, size_t *cap, const char *p, size_t n)
{
    wsi_buf b = {.p = *buf, .len = *len, .cap = *cap};
    int bare = n > 0 && !(n == 1 && p[0] == '?') && !(n == 2 && p[0] == '-' && p[1] == '-') &&
               !(n == 2 && p[0] == '=' && p[1] == '>') && p[0] != '#' && p[n - 1] != ':';
    for (size_t i = 0; i < n && bare; i++) {
        unsigned char uc = (unsigned char)p[i];
        if (uc <= ' ' || uc >= 127 || uc == '"' || uc == '\'' || uc == '\\' || uc == '#') bare = 0;
    }
    if (bare) {
        wsi_buf_xadd(&b, p, n);
    } else {
        wsi_buf_xadd(&b, "\"", 1);
        for (size_t i = 0; i < n; i++) {
            unsigned char uc = (unsigned char)p[i];
            if (uc == '\\') wsi_buf_xadd(&b, "\\\\", 2);
            else if (uc == '"') wsi_buf_xadd(&b, "\\\"", 2);
            else if (uc == '\n') wsi_buf_xadd(&b, "\\n", 2);
            else if (uc == '\r') wsi_buf_xadd(&b, "\\r", 2);
            else if (uc == '\t') wsi_buf_xadd(&b, "\\t", 2);
            else if (uc < ' ' || uc >= 127) wsi_buf_xprintf(&b, "\\x%02x", uc);
            else wsi_buf_xadd(&b, (const char *)&p[i], 1);
        }
        wsi_buf_xadd(&b, "\"", 1);
    }
    *buf = b.p;
    *len = b.len;
    *cap = b.cap;
}

static void tok(wsi_buf *b, const char *p, size_t n)
{
    wsi_buf_xadd(b, " ", 1);
    gen_token(&b->p, &b->len, &b->cap, p, n);
}

/* A command's tokens: '$' is the format's alias sign, written $$. */
static void cmd_tokens(wsi_buf *b, const gen_cmd *c)
{
    for (int i = 0; i < c->argc; i++) {
        wsi_buf t = {0};
        for (size_t k = 0; k < c->argv[i].len; k++) {
            if (c->argv[i].p[k] == '$') wsi_buf_xadd(&t, "$$", 2);
            else wsi_buf_xadd(&t, &c->argv[i].p[k], 1);
        }
        tok(b, t.p ? t.p : "", t.len);
        wsi_free(t.p);
    }
}

static void write_step(wsi_buf *b, const gen_run *r, const gen_step *s)
{
    const char *subname = s->sub ? "rescue" : "main";
    /* an armed fault that never fired changed nothing: a scenario says none such */
    if (s->kind == GS_FAULT && s->rc == 0 && s->fired && !*s->fired) return;
    if (s->entry && s->kind != GS_PRODUCE) wsi_buf_xprintf(b, "e%zu:", s->entry);
    switch (s->kind) {
    case GS_PRODUCE: {
        size_t num = 0;
        for (const gen_step *p = r->steps; p <= s; p++) num += p->kind == GS_PRODUCE;
        wsi_buf_xputs(b, "produce main");
        tok(b, s->payload.p, s->payload.len);
        if (s->hname.p) {
            wsi_buf_xputs(b, " header");
            tok(b, s->hname.p, s->hname.len);
            tok(b, s->hval.p, s->hval.len);
        }
        wsi_buf_xprintf(b, " as e%zu", num);
        break;
    }
    case GS_READ: wsi_buf_xprintf(b, "read %s", subname); break;
    case GS_QUEUE:
        wsi_buf_xputs(b, " queue");
        cmd_tokens(b, &s->cmd);
        break;
    case GS_POOL:
        wsi_buf_xputs(b, " pool");
        cmd_tokens(b, &s->cmd);
        break;
    case GS_PUBLISH:
        wsi_buf_xprintf(b, " publish %s %s", form_word(s->out_form), s->out_key);
        tok(b, s->payload.p, s->payload.len);
        if (s->hname.p) {
            wsi_buf_xputs(b, " header");
            tok(b, s->hname.p, s->hname.len);
            tok(b, s->hval.p, s->hval.len);
        }
        break;
    case GS_REPLY:
        wsi_buf_xputs(b, " reply");
        tok(b, s->payload.p, s->payload.len);
        break;
    case GS_BIND: wsi_buf_xprintf(b, " bind %s %s", form_word(s->out_form), s->out_key); break;
    case GS_SETTLE:
        switch (s->outcome) {
        case WS_ACK: wsi_buf_xputs(b, " ack"); break;
        case WS_DROP: wsi_buf_xputs(b, " drop"); break;
        case WS_RETRY: wsi_buf_xputs(b, " retry"); break;
        case WS_RETRY_AFTER: wsi_buf_xprintf(b, " retry-after %lld", (long long)s->ms); break;
        default: wsi_buf_xputs(b, " abandon"); break;
        }
        break;
    case GS_ADVANCE: wsi_buf_xprintf(b, "advance %lld", (long long)s->ms); break;
    case GS_CRASH: wsi_buf_xputs(b, "crash"); break;
    case GS_SHUTDOWN: wsi_buf_xputs(b, s->drains_lost ? "shutdown drains-lost" : "shutdown"); break;
    case GS_RESTART: wsi_buf_xputs(b, "restart"); break;
    case GS_STOP: wsi_buf_xprintf(b, "stop %s", subname); break;
    case GS_FAULT:
        wsi_buf_xprintf(b, "fault %s %s", s->fconn ? "window" : "reader", fault_word(s->fault.kind));
        if (s->fault.name)
            wsi_buf_xprintf(b, " %llu%s %s", (unsigned long long)s->fault.nth, ordinal(s->fault.nth),
                      s->fname);
        else if (s->fault.command)
            wsi_buf_xprintf(b, " round-trip %llu command %zu", (unsigned long long)s->fault.round_trip,
                      s->fault.command);
        else
            wsi_buf_xprintf(b, " round-trip %llu", (unsigned long long)s->fault.round_trip);
        break;
    }
    /* a step the engine refused must be refused again when the scenario runs */
    int expected_rc = s->rc == 0 || s->rc == WS_ECRASHED;
    if (!expected_rc) wsi_buf_xputs(b, " => refused");
    wsi_buf_xputs(b, "\n");
}

char *gen_scenario_head(const gen_run *r, const char *title, const char *comment)
{
    const gen_config *c = &r->cfg;
    wsi_buf b = {0};
    wsi_buf_xprintf(&b, "scenario %s\n", title && *title ? title : "a generated run");
    wsi_buf_xputs(&b, "needs fake its ids and expectations come from a run on the fake's virtual clock\n");
    if (comment) {
        const char *p = comment;
        while (*p) {
            const char *e = strchr(p, '\n');
            size_t n = e ? (size_t)(e - p) : strlen(p);
            wsi_buf_xputs(&b, "# ");
            wsi_buf_xadd(&b, p, n);
            wsi_buf_xputs(&b, "\n");
            p += n;
            if (*p == '\n') p++;
        }
    }
    wsi_buf_xprintf(&b, "seed %llu\n", (unsigned long long)c->seed);
    if (c->form == WS_FORM_STREAM) wsi_buf_xputs(&b, "setup XGROUP CREATE k g $ MKSTREAM\n");
    wsi_buf_xputs(&b, "setup SET str x\n");
    wsi_buf tail = {0};
    if (c->reply_form) {
        wsi_buf_xprintf(&tail, " reply %s %s", form_word(c->reply_form), out_key_of(c->reply_form));
        if (c->reply_in_round) wsi_buf_xputs(&tail, " in-round");
    }
    wsi_buf decl = {0};
    if (c->max_attempts) wsi_buf_xprintf(&decl, " max-attempts %u", c->max_attempts);
    if (c->dead_letter) wsi_buf_xprintf(&decl, " dead-letter %s", GEN_DEAD_LETTER);
    wsi_buf_xprintf(&b, "subscribe main %s k", form_word(c->form));
    if (c->form == WS_FORM_STREAM) wsi_buf_xputs(&b, c->auto_consumer ? " group g" : " group g consumer c1");
    wsi_buf_xprintf(&b, " mode %s count %zu", mode_word(c->mode), c->count);
    if (c->batch) wsi_buf_xprintf(&b, " batch %zu", c->batch);
    if (c->buffer) wsi_buf_xprintf(&b, " buffer %zu", c->buffer);
    if (c->form == WS_FORM_STREAM && c->delay_queue) {
        wsi_buf_xputs(&b, " delay-queue k:delayed");
        if (c->ttl_ms) wsi_buf_xprintf(&b, " ttl %lld", (long long)c->ttl_ms);
    }
    if (c->form == WS_FORM_RELIABLE_LIST && c->recovery)
        wsi_buf_xprintf(&b, " recovery k:claims %d", GEN_MIN_IDLE_MS);
    if (decl.p) wsi_buf_xadd(&b, decl.p, decl.len);
    if (tail.p) wsi_buf_xadd(&b, tail.p, tail.len);
    wsi_buf_xputs(&b, "\n");
    if (c->form == WS_FORM_STREAM && c->rescue) {
        wsi_buf_xprintf(&b, "subscribe rescue stream k group g%s mode %s count %zu",
                  c->auto_consumer ? "" : " consumer c2", mode_word(c->mode), c->count);
        if (c->batch) wsi_buf_xprintf(&b, " batch %zu", c->batch);
        wsi_buf_xprintf(&b, " reclaim %d", GEN_MIN_IDLE_MS);
        if (c->rescue_declared && decl.p) wsi_buf_xadd(&b, decl.p, decl.len);
        if (tail.p) wsi_buf_xadd(&b, tail.p, tail.len);
        wsi_buf_xputs(&b, "\n");
    }
    wsi_free(tail.p);
    wsi_free(decl.p);
    return wsi_buf_xtake(&b);
}

char *gen_scenario_step(const gen_run *r, size_t i)
{
    wsi_buf b = {0};
    if (i < r->nsteps) write_step(&b, r, &r->steps[i]);
    return wsi_buf_xtake(&b);
}

char *gen_scenario(const gen_run *r, const char *title, const char *comment, const char *expect,
                   size_t *len)
{
    wsi_buf b = {0};
    char *head = gen_scenario_head(r, title, comment);
    wsi_buf_xputs(&b, head);
    wsi_free(head);
    int refused = 0; /* a "=> refused" step is a check of the run */
    for (size_t i = 0; i < r->nsteps; i++) {
        write_step(&b, r, &r->steps[i]);
        refused |= r->steps[i].rc != 0 && r->steps[i].rc != WS_ECRASHED;
    }
    if (expect) wsi_buf_xputs(&b, expect);
    else if (!refused) wsi_buf_xputs(&b, "expect nothing\n"); /* it replays the run, no more */
    if (len) *len = b.len;
    return wsi_buf_xtake(&b);
}

/* ----- Checking --------------------------------------------------------------------------- */

void gen_failure_free(gen_failure *f)
{
    if (!f) return;
    wsi_free(f->message);
    wsi_free(f->expect);
    memset(f, 0, sizeof *f);
}

static int failv(gen_failure *f, const char *kind, char *expect, const char *fmt, va_list ap)
{
    if (!f) {
        wsi_free(expect);
        return 1;
    }
    wsi_snprintf(f->kind, sizeof f->kind, "%s", kind);
    wsi_buf b = {0};
    char tmp[4096];
    wsi_vsnprintf(tmp, sizeof tmp, fmt, ap);
    wsi_buf_xputs(&b, tmp);
    f->message = wsi_buf_xtake(&b);
    f->expect = expect;
    return 1;
}

static int fail(gen_failure *f, const char *kind, char *expect, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
static int fail(gen_failure *f, const char *kind, char *expect, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int rc = failv(f, kind, expect, fmt, ap);
    va_end(ap);
    return rc;
}

static const char *sub_label(int i) { return i ? "rescue" : "main"; }

/* `expect flush N of SUB` with the model's commands: what a fixed engine must send. */
static char *expect_flush(const mdl_flush *fl)
{
    wsi_buf b = {0};
    wsi_buf_xprintf(&b, "expect flush %llu of %s\n", (unsigned long long)fl->number, sub_label(fl->sub));
    size_t rt = 1;
    for (size_t i = 0; i < fl->n; i++) {
        if (fl->cmds[i].rt != rt) {
            wsi_buf_xputs(&b, "  --\n");
            rt = fl->cmds[i].rt;
        }
        wsi_buf_xputs(&b, " ");
        cmd_tokens(&b, fl->cmds[i].args);
        wsi_buf_xputs(&b, "\n");
    }
    return wsi_buf_xtake(&b);
}

static char *rt_text(const char *conn, const char *cause, size_t n, const char *const *cmds)
{
    wsi_buf b = {0};
    wsi_buf_xprintf(&b, "%s (%s):", conn, cause);
    for (size_t i = 0; i < n; i++) wsi_buf_xprintf(&b, "\n      %s", cmds[i]);
    return wsi_buf_xtake(&b);
}

/* The model's round trip as rt_text writes it (its commands' texts made for it). */
static char *model_rt_text(const mdl_rt *x)
{
    char **t = wsi_xrealloc(NULL, (x->n ? x->n : 1) * sizeof *t);
    for (size_t k = 0; k < x->n; k++) t[k] = mdl_cmd_text(&x->args[k]);
    char *s = rt_text(x->conn, x->cause, x->n, (const char *const *)t);
    for (size_t k = 0; k < x->n; k++) wsi_free(t[k]);
    wsi_free(t);
    return s;
}

/* The engine's command (ws_sim_round_trip_command, ws_flush_command) and the model's are
 * the same arguments.  A command the engine did not build has none, and neither has the
 * model's empty one: the trace shows both blank. */
static int same_args(int argc, const char *const *argv, const size_t *lens, const gen_cmd *c)
{
    if (argc != c->argc) return 0;
    for (int i = 0; i < argc; i++)
        if (lens[i] != c->argv[i].len || memcmp(argv[i], c->argv[i].p, lens[i]) != 0) return 0;
    return 1;
}

/* The model's round trips of read R of SUB (sweeps included) as an `expect read` block,
 * for a round trip whose cause names that read; NULL otherwise. */
static char *expect_read_block(const mdl_result *m, const char *cause)
{
    const char *at = strstr(cause, "read ");
    unsigned long long no;
    char sub[32];
    if (!at || sscanf(at, "read %llu of %31s", &no, sub) != 2) return NULL;
    char tail[64];
    wsi_snprintf(tail, sizeof tail, "read %llu of %s", no, sub);
    wsi_buf b = {0};
    wsi_buf_xprintf(&b, "expect read %llu of %s\n", no, sub);
    size_t rts = 0;
    for (size_t i = 0; i < m->nrts; i++) {
        const char *c = m->rts[i].cause;
        size_t cl = strlen(c), tl = strlen(tail);
        if (cl < tl || strcmp(c + cl - tl, tail) != 0) continue;
        if (cl > tl && (cl < tl + 7 || strncmp(c + cl - tl - 7, "before ", 7) != 0) &&
            (cl != tl + 10 || strncmp(c, "claims of ", 10) != 0))
            continue;
        if (rts++) wsi_buf_xputs(&b, "  --\n");
        for (size_t k = 0; k < m->rts[i].n; k++) {
            wsi_buf_xputs(&b, " ");
            cmd_tokens(&b, &m->rts[i].args[k]);
            wsi_buf_xputs(&b, "\n");
        }
    }
    if (!rts) {
        wsi_free(b.p);
        return NULL;
    }
    return wsi_buf_xtake(&b);
}

/* Engine and model, round trip by round trip. */
static int compare_rts(gen_run *r, const mdl_result *m, gen_failure *f)
{
    size_t ne = ws_sim_round_trip_count(r->sim);
    size_t n = ne < m->nrts ? ne : m->nrts;
    for (size_t i = 0; i <= n; i++) {
        ws_rt_info e;
        int has_e = i < ne && ws_sim_round_trip_args(r->sim, i, &e) == 0;
        int has_m = i < m->nrts;
        if (!has_e && !has_m) break;
        const mdl_rt *x = has_m ? &m->rts[i] : NULL;
        int same = has_e && has_m && strcmp(e.conn, x->conn) == 0 &&
                   strcmp(e.cause, x->cause) == 0 && e.n == x->n && e.index == x->index;
        for (size_t k = 0; same && k < e.n; k++) {
            int argc;
            const char *const *argv;
            const size_t *lens;
            same = ws_sim_round_trip_command(r->sim, i, k, &argc, &argv, &lens) == 0 &&
                   same_args(argc, argv, lens, &x->args[k]);
        }
        if (same) continue;
        /* the texts, for the message only */
        has_e = i < ne && ws_sim_round_trip(r->sim, i, &e) == 0;
        char *et = has_e ? rt_text(e.conn, e.cause, e.n, e.commands) : wsi_xstrdup("(none)");
        char *mt = has_m ? model_rt_text(x) : wsi_xstrdup("(none)");
        size_t st = has_m ? x->step : (size_t)-1;
        char where[64] = "";
        if (st != (size_t)-1) wsi_snprintf(where, sizeof where, ", step %zu", st + 1);
        char *ex = NULL;
        if (has_m && strncmp(x->cause, "flush ", 6) == 0) {
            unsigned long long no;
            char sub[32];
            if (sscanf(x->cause, "flush %llu of %31s", &no, sub) == 2)
                for (size_t q = 0; q < m->nflushes && !ex; q++)
                    if (m->flushes[q].number == no && !strcmp(sub_label(m->flushes[q].sub), sub))
                        ex = expect_flush(&m->flushes[q]);
        } else if (has_m) {
            ex = expect_read_block(m, x->cause);
        }
        if (!ex && ne != m->nrts) {
            wsi_buf t = {0};
            wsi_buf_xprintf(&t, "expect round-trips %zu\n", m->nrts);
            ex = wsi_buf_xtake(&t);
        }
        int rc = fail(f, "round trip", ex,
                      "the consumer's round trip %zu differs (engine and model agree on the %zu "
                      "before it%s)\n  engine: %s\n  model:  %s",
                      i + 1, i, where, et, mt);
        wsi_free(et);
        wsi_free(mt);
        return rc;
    }
    return 0;
}

/* "e<N> (<id> payload <payload>)" with the trace's quoting, for a failure message. */
static void delivery_text(wsi_buf *b, size_t k, size_t entry, gen_str id, gen_str payload)
{
    wsi_buf_xprintf(b, "%se%zu (", k ? ", " : "", entry);
    char *t = NULL;
    size_t len = 0, cap = 0;
    mdl_arg_text(&t, &len, &cap, id.p, id.len);
    if (payload.p) {
        mdl_arg_text(&t, &len, &cap, " payload ", 9);
        mdl_arg_text(&t, &len, &cap, payload.p, payload.len);
    }
    wsi_buf_xadd(b, t ? t : "", len);
    wsi_buf_xputs(b, ")");
    wsi_free(t);
}

/* The engine's counts (ws_sim_get_counts) and the model's. */
static int compare_counts(gen_run *r, const mdl_result *m, gen_failure *f)
{
    ws_sim_counts e = ws_sim_get_counts(r->sim);
    const mdl_counts *x = &m->counts;
    static const char *const names[] = {"round trips", "read round trips", "flush round trips",
                                        "pool round trips", "reads", "deliveries", "flushes",
                                        "reports", "skipped messages"};
    const uint64_t ev[] = {e.round_trips, e.read_round_trips, e.flush_round_trips,
                           e.pool_round_trips, e.reads, e.deliveries, e.flushes, e.reports,
                           e.skipped};
    const uint64_t mv[] = {x->round_trips, x->read_round_trips, x->flush_round_trips,
                           x->pool_round_trips, x->reads, x->deliveries, x->flushes, x->reports,
                           x->skipped};
    for (size_t i = 0; i < sizeof ev / sizeof *ev; i++)
        if (ev[i] != mv[i])
            return fail(f, "counts", NULL, "ws_sim_get_counts: %s %llu, the model %llu", names[i],
                        (unsigned long long)ev[i], (unsigned long long)mv[i]);
    return 0;
}

static int compare_reads(gen_run *r, const mdl_result *m, gen_failure *f)
{
    for (size_t i = 0; i < m->nreads; i++) {
        const mdl_read *x = &m->reads[i];
        const gen_step *s = &r->steps[x->step];
        int same = s->is_report == x->is_report;
        if (same && x->is_report)
            same = s->report.commands == x->commands && s->report.settles == x->settles &&
                   s->report.failed == x->failed && strcmp(s->report_error, x->first_error) == 0;
        if (same && !x->is_report) {
            same = s->ndl == x->n;
            /* an id as ws_delivery_id gives it: up to its first NUL */
            for (size_t k = 0; same && k < x->n; k++)
                same = s->dl[k].entry == x->entries[k] &&
                       s->dl[k].id.len == strnlen(x->ids[k].p, x->ids[k].len) &&
                       memcmp(s->dl[k].id.p, x->ids[k].p, s->dl[k].id.len) == 0 &&
                       !s->dl[k].payload.p == !x->payloads[k].p &&
                       s->dl[k].payload.len == x->payloads[k].len &&
                       (!x->payloads[k].p ||
                        memcmp(s->dl[k].payload.p, x->payloads[k].p, x->payloads[k].len) == 0);
        }
        if (same) continue;
        wsi_buf e = {0}, mm = {0};
        if (s->is_report)
            wsi_buf_xprintf(&e, "a report: %zu commands, %zu settles, %zu failed, first error %s",
                      s->report.commands, s->report.settles, s->report.failed, s->report_error);
        else
            for (size_t k = 0; k < s->ndl; k++)
                delivery_text(&e, k, s->dl[k].entry, s->dl[k].id, s->dl[k].payload);
        if (x->is_report)
            wsi_buf_xprintf(&mm, "a report: %zu commands, %zu settles, %zu failed, first error %s",
                      x->commands, x->settles, x->failed, x->first_error);
        else
            for (size_t k = 0; k < x->n; k++)
                delivery_text(&mm, k, x->entries[k], x->ids[k], x->payloads[k]);
        int rc = fail(f, x->is_report || s->is_report ? "report" : "read", NULL,
                      "step %zu (read %s) handed out something else\n  engine: %s\n  model:  %s",
                      x->step + 1, sub_label(s->sub), e.p ? e.p : "nothing",
                      mm.p ? mm.p : "nothing");
        wsi_free(e.p);
        wsi_free(mm.p);
        return rc;
    }
    return 0;
}

static int compare_flushes(gen_run *r, const mdl_result *m, gen_failure *f)
{
    for (int si = 0; si < 2; si++) {
        if (!r->subs[si]) continue;
        uint64_t mine = 0;
        for (size_t i = 0; i < m->nflushes; i++) mine += m->flushes[i].sub == si;
        uint64_t theirs = ws_sub_flushes(r->subs[si]);
        if (mine != theirs)
            return fail(f, "flush", NULL, "%s made %llu flushes, the model %llu", sub_label(si),
                        (unsigned long long)theirs, (unsigned long long)mine);
    }
    for (size_t i = 0; i < m->nflushes; i++) {
        const mdl_flush *fl = &m->flushes[i];
        ws_sub *s = r->subs[fl->sub];
        for (size_t k = 0;; k++) {
            ws_flush_command fc;
            int has_e = ws_sub_flush_command_args(s, fl->number, k, &fc) == 0;
            int has_m = k < fl->n;
            if (!has_e && !has_m) break;
            const mdl_fcmd *x = has_m ? &fl->cmds[k] : NULL;
            size_t efrom = has_e && fc.from ? ws_delivery_root((ws_delivery *)fc.from) : 0;
            int same = has_e && has_m && fc.round_trip == x->rt &&
                       same_args(fc.argc, fc.argv, fc.argvlen, x->args) &&
                       strcmp(fc.reply, x->reply) == 0 && efrom == x->from;
            if (same) continue;
            /* the texts, for the message only */
            if (has_e) ws_sub_flush_command(s, fl->number, k, &fc);
            char *mtext = has_m ? mdl_cmd_text(x->args) : NULL;
            wsi_buf e = {0}, mm = {0};
            if (has_e) wsi_buf_xprintf(&e, "[rt %zu] %s -> %s (from e%zu)", fc.round_trip, fc.text, fc.reply, efrom);
            if (has_m) wsi_buf_xprintf(&mm, "[rt %zu] %s -> %s (from e%zu)", x->rt, mtext, x->reply, x->from);
            wsi_free(mtext);
            int rc = fail(f, "flush", expect_flush(fl),
                          "flush %llu of %s, command %zu differs\n  engine: %s\n  model:  %s",
                          (unsigned long long)fl->number, sub_label(fl->sub), k + 1,
                          e.p ? e.p : "(none)", mm.p ? mm.p : "(none)");
            wsi_free(e.p);
            wsi_free(mm.p);
            return rc;
        }
    }
    return 0;
}

/* Runs a command line on cl: split on spaces in place when it has no quoting (the
 * model's final-state commands: fixed words and key names), else as redis-cli splits it
 * (fr_exec_line).  NULL when it cannot run. */
static const fr_reply *exec_plain_line(fr_client *cl, const char *line)
{
    char buf[1024];
    size_t len = strlen(line);
    if (len >= sizeof buf || strpbrk(line, "\"'\\\t\r\n")) return fr_exec_line(cl, line);
    memcpy(buf, line, len + 1);
    const char *argv[64];
    size_t lens[64];
    int argc = 0;
    for (char *p = buf; *p;) {
        while (*p == ' ') p++;
        if (!*p) break;
        if (argc == 64) return fr_exec_line(cl, line);
        char *e = strchr(p, ' ');
        size_t n = e ? (size_t)(e - p) : strlen(p);
        argv[argc] = p;
        lens[argc++] = n;
        p += n;
        if (*p) *p++ = '\0';
    }
    return argc ? fr_exec(cl, argc, argv, lens) : NULL;
}

/* The final state, read straight off the fake by a client of its own: what the
 * consumer's connections did is in the trace already, and the checks need no trace. */
static int compare_state(gen_run *r, const mdl_result *m, gen_failure *f)
{
    fr_client *cl = m->nstate ? fr_client_new(ws_sim_fake(r->sim)) : NULL;
    if (m->nstate && !cl) return fail(f, "state", NULL, "out of memory");
    int rc = 0;
    for (size_t i = 0; i < m->nstate && !rc; i++) {
        const fr_reply *rep = exec_plain_line(cl, m->state[i].command);
        if (!rep) {
            rc = fail(f, "state", NULL, "cannot run %s", m->state[i].command);
            break;
        }
        char *got = ws_reply_text(rep, NULL);
        int same = got && strcmp(got, m->state[i].reply) == 0;
        if (!same) {
            wsi_buf ex = {0};
            wsi_buf_xprintf(&ex, "check %s => %s\n", m->state[i].command, m->state[i].reply);
            rc = fail(f, "state", wsi_buf_xtake(&ex),
                      "the final state differs: %s\n  engine: %s\n  model:  %s",
                      m->state[i].command, got ? got : "?", m->state[i].reply);
        }
        wsi_free(got);
    }
    fr_client_free(cl);
    return rc;
}

/* A violation as ws_sim_check names it: its kind and its produced entry (1-based). */
typedef struct vio {
    char kind[12];
    size_t entry;
    const char *sentence;
} vio;

static int vio_cmp(const void *a, const void *b)
{
    const vio *x = a, *y = b;
    if (x->entry != y->entry) return x->entry < y->entry ? -1 : 1;
    return strcmp(x->kind, y->kind);
}

/* What the run armed: which kinds of faults. */
static unsigned faults_armed(const gen_run *r)
{
    unsigned k = 0;
    for (size_t i = 0; i < r->nsteps; i++)
        if (r->steps[i].kind == GS_FAULT) k |= 1u << r->steps[i].fault.kind;
    return k;
}

static int has_kind(const gen_run *r, gen_kind kind)
{
    for (size_t i = 0; i < r->nsteps; i++)
        if (r->steps[i].kind == kind) return 1;
    return 0;
}

/* In fault mode the model does not follow the run: a violation is explained when a fault
 * or a crash of the run can cause it (docs/engine.md, "The invariants"). */
static const char *unexplained(const gen_run *r, const vio *v, unsigned quirks)
{
    unsigned armed = faults_armed(r);
    /* a lost connection is both: what it applied answers errors, and its entries wait for
     * the next process as a crash's do */
    int lost_conn = (armed >> WS_FAULT_DISCONNECT) & 1;
    int errors = ((armed >> WS_FAULT_ERROR) & 1) || lost_conn;
    int crashes = lost_conn || ((armed >> WS_FAULT_CRASH_AFTER) & 1) ||
                  ((armed >> WS_FAULT_CRASH_BEFORE) & 1) ||
                  ((armed >> WS_FAULT_LOSE_REPLIES) & 1) || has_kind(r, GS_CRASH) ||
                  has_kind(r, GS_SHUTDOWN) || has_kind(r, GS_RESTART);
    ws_mode mode = r->cfg.mode;
    if (!strcmp(v->kind, "leaked")) return "a dropped, retried or abandoned delivery's queued command took effect";
    if (!strcmp(v->kind, "split")) {
        if (errors || (quirks & GEN_QUIRK_SPLIT_RUNTIME)) return NULL;
        return "an atomic segment was split without an injected error";
    }
    if (!strcmp(v->kind, "doubled")) {
        if (mode == WS_MODE_DIRECT) return NULL;
        if (mode == WS_MODE_WINDOW && (crashes || errors)) return NULL;
        if (mode == WS_MODE_ATOMIC && errors && crashes) return NULL;
        return mode == WS_MODE_ATOMIC ? "an entry's effects were applied twice under the atomic window"
                                      : "an entry's effects were applied twice without a crash";
    }
    /* lost: a crash (timers, delayed copies), a fault, a mixed batch, a delay queue TTL */
    if (crashes || armed || r->cfg.batch || r->cfg.ttl_ms) return NULL;
    return "an entry was lost with no crash or fault to explain it";
}

static int compare_violations(gen_run *r, const mdl_result *m, unsigned quirks, gen_failure *f)
{
    const ws_violation *v;
    size_t nv = 0;
    if (ws_sim_check(r->sim, &v, &nv) != 0)
        return fail(f, "invariant", NULL, "ws_sim_check failed: %s", ws_sim_errstr(r->sim));
    vio *ev = wsi_xcalloc(nv, sizeof *ev);
    for (size_t i = 0; i < nv; i++) {
        wsi_snprintf(ev[i].kind, sizeof ev[i].kind, "%s", v[i].invariant);
        ev[i].entry = v[i].root;
        ev[i].sentence = v[i].sentence;
    }
    qsort(ev, nv, sizeof *ev, vio_cmp);
    int rc = 0;
    if (r->cfg.faults) {
        for (size_t i = 0; i < nv && !rc; i++) {
            const char *why = unexplained(r, &ev[i], quirks);
            if (why)
                rc = fail(f, "invariant", wsi_xstrdup("expect invariants\n"), "%s: %s [e%zu]\n  %s",
                          why, ev[i].kind, ev[i].entry, ev[i].sentence);
        }
        wsi_free(ev);
        return rc;
    }
    vio *mv = wsi_xcalloc(m->nviol, sizeof *mv);
    for (size_t i = 0; i < m->nviol; i++) {
        memcpy(mv[i].kind, m->viol[i].kind, sizeof mv[i].kind);
        mv[i].entry = m->viol[i].entry;
    }
    qsort(mv, m->nviol, sizeof *mv, vio_cmp);
    size_t n = nv < m->nviol ? nv : m->nviol;
    size_t at = n;
    for (size_t i = 0; i < n && at == n; i++)
        if (vio_cmp(&ev[i], &mv[i]) != 0) at = i;
    if (at < n || nv != m->nviol) {
        wsi_buf e = {0}, mm = {0}, ex = {0};
        for (size_t i = 0; i < nv; i++)
            wsi_buf_xprintf(&e, "\n    %s [e%zu]: %s", ev[i].kind, ev[i].entry, ev[i].sentence);
        for (size_t i = 0; i < m->nviol; i++) wsi_buf_xprintf(&mm, "\n    %s [e%zu]", mv[i].kind, mv[i].entry);
        if (m->nviol == 0) wsi_buf_xputs(&ex, "expect invariants\n");
        for (size_t i = 0; i < m->nviol; i++)
            wsi_buf_xprintf(&ex, "expect violation %s e%zu\n", mv[i].kind, mv[i].entry);
        rc = fail(f, "violation", wsi_buf_xtake(&ex),
                  "ws_sim_check's violations differ from the model's\n  engine:%s\n  model:%s",
                  e.p ? e.p : " none", mm.p ? mm.p : " none");
        wsi_free(e.p);
        wsi_free(mm.p);
    }
    wsi_free(ev);
    wsi_free(mv);
    return rc;
}

int gen_check(gen_run *r, unsigned quirks, gen_failure *f)
{
    if (f) memset(f, 0, sizeof *f);
    if (!r->sim) return fail(f, "refused", NULL, "no simulation");
    if (r->refused) return fail(f, "refused", NULL, "%s", r->refusal);
    if (r->cfg.faults) return compare_violations(r, NULL, quirks, f);
    mdl_result m;
    mdl_predict_args(r, quirks, &m); /* compared on arguments: no texts */
    int rc = 0;
    if (m.error) rc = fail(f, "model", NULL, "the model stopped at step %zu: %s", m.error_step + 1, m.error);
    if (!rc) rc = compare_rts(r, &m, f);
    if (!rc) rc = compare_counts(r, &m, f);
    if (!rc) rc = compare_reads(r, &m, f);
    if (!rc) rc = compare_flushes(r, &m, f);
    if (!rc) rc = compare_state(r, &m, f);
    if (!rc) rc = compare_violations(r, &m, quirks, f);
    mdl_result_free(&m);
    return rc;
}

int gen_check_choices(ch *c, const gen_limits *lim, unsigned quirks, gen_failure *f,
                      gen_run *out_run)
{
    gen_run r;
    if (f) memset(f, 0, sizeof *f);
    gen_limits l = {0};
    if (lim) l = *lim;
    l.quirks = quirks;
    if (gen_generate(c, &l, &r) != 0) {
        gen_free(&r);
        return fail(f, "refused", NULL, "the simulation could not be made");
    }
    int rc = gen_check(&r, quirks, f);
    if (out_run) *out_run = r;
    else gen_free(&r);
    return rc;
}
