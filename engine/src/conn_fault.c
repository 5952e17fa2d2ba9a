/* conn_fault.c -- the fault layer: a connection around another one that crashes the
 * consumer, loses replies, answers injected errors, refuses to send or is lost while the
 * consumer lives on, at armed points.
 *
 * Everything is decided before anything is sent: each command of the round trip gets its
 * position and its per-name occurrence number, armed faults are matched against them,
 * and the layer then sends one pipeline to the inner connection -- the prefix a crash
 * leaves, minus the commands whose reply it injects.  Working from the outside keeps it
 * the same on both backends: the fake's own fr_fault_* hooks count executions server-wide
 * and cannot address "this pipeline's third command" of one connection.
 *
 * A crash or a lost-replies fault reads the inner replies first (so "the server applied
 * exactly these" holds on a real server too, which might otherwise still be reading the
 * socket) and then closes the inner connection, as the dead consumer's socket closes:
 * the server discards that connection's open MULTI and its WATCHes. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ws_int.h"

#define DEFAULT_ERROR "ERR injected by wsim"

/* One armed fault. */
typedef struct armed {
    ws_fault f;  /* as given; f.name and f.error point at the copies below */
    char *name;  /* owned copy of f.name, or NULL */
    char *error; /* owned copy of the error text */
    int fired;   /* fired already (faults are one-shot) */
} armed;

/* How many commands of one name this connection was given. */
typedef struct name_count {
    char *name;     /* lower case, owned */
    size_t len;     /* bytes in name */
    uint64_t count; /* occurrences so far */
} name_count;

/* An injected error waiting for EXEC: where it sits in the transaction's queue. */
typedef struct pending_error {
    size_t queue_index; /* 0-based among the commands queued since MULTI */
    char *error;        /* owned copy of the text */
} pending_error;

/* What the layer decided for one command of a round trip, as the caller gave it. */
typedef struct rt_plan {
    uint64_t occ;           /* its occurrence number for its name */
    const char *inject;     /* its injected error, or NULL */
    unsigned char discard;  /* an injected EXEC/DISCARD sent as DISCARD */
} rt_plan;

/* Per-round-trip scratch, grown as needed: every array has room for cap commands. */
typedef struct rt_scratch {
    size_t cap;
    rt_plan *plan;                  /* the caller's command j */
    fr_command *send;               /* the commands actually sent (ws_pipeline's input) */
    size_t *send_of;                /* send index -> caller index */
    const fr_reply **inner_replies; /* the sent commands' replies (ws_pipeline's output) */
} rt_scratch;

typedef struct fault_conn {
    ws_conn base;           /* the common head */
    ws_conn *inner;         /* the wrapped connection; NULL once a fault killed it */
    armed *faults;          /* armed faults, in arming order */
    size_t nfaults, capfaults;
    name_count *names;      /* per-name counters over the connection's life */
    size_t nnames, capnames;
    uint64_t fired;         /* faults fired so far */
    int in_multi;           /* MULTI answered +OK and no EXEC/DISCARD yet */
    size_t queued;          /* commands answered +QUEUED since that MULTI */
    pending_error *pending; /* injected errors of the open transaction */
    size_t npending, cappending;
    wsi_arena arena;        /* synthesised replies and copies, per round trip */
    rt_scratch rt;          /* per-round-trip scratch */
    int gone;               /* a disconnect fired: nothing is sent any more, every
                               command answers WS_DISCONNECT_ERROR */
    ws_fault_hook hook;     /* called at the start of each round trip, or NULL */
    void *hook_arg;         /* its argument */
} fault_conn;

/* ----- Helpers ----------------------------------------------------------------------- */

/* Room for need elements of size bytes in *p (capacity *cap, doubled); 0, or -1 when out of
 * memory with *p unchanged. */
static int grow(void **p, size_t *cap, size_t need, size_t size)
{
    if (need <= *cap) return 0;
    size_t cap2 = *cap ? *cap * 2 : 8;
    while (cap2 < need) cap2 *= 2;
    *p = wsi_xrealloc(*p, cap2 * size);
    *cap = cap2;
    return 0;
}

/* Room for n commands in every array of s: 0, or -1 when out of memory (s unchanged but
 * possibly partly grown, still consistent with s->cap). */
static int scratch_reserve(rt_scratch *s, size_t n)
{
    if (n <= s->cap) return 0;
    size_t cap = s->cap ? s->cap * 2 : 8;
    while (cap < n) cap *= 2;
    rt_plan *plan = wsi_xrealloc(s->plan, cap * sizeof *plan);
    if (plan) s->plan = plan;
    fr_command *send = wsi_xrealloc(s->send, cap * sizeof *send);
    if (send) s->send = send;
    size_t *send_of = wsi_xrealloc(s->send_of, cap * sizeof *send_of);
    if (send_of) s->send_of = send_of;
    const fr_reply **inner = wsi_xrealloc(s->inner_replies, cap * sizeof *inner);
    if (inner) s->inner_replies = inner;
    if (!plan || !send || !send_of || !inner) return -1;
    s->cap = cap;
    return 0;
}

/* Frees the scratch's arrays; it is empty and usable again afterwards. */
static void scratch_free(rt_scratch *s)
{
    wsi_free(s->plan);
    wsi_free(s->send);
    wsi_free(s->send_of);
    wsi_free(s->inner_replies);
    memset(s, 0, sizeof *s);
}

/* A heap copy of s, or NULL when out of memory. */
static char *dupstr(const char *s)
{
    size_t n = strlen(s);
    return wsi_xmemdup(s, n);
}

/* Counts one more command named (arg, len) and returns its occurrence number (1-based). */
static uint64_t count_name(fault_conn *fc, const char *arg, size_t len)
{
    for (size_t i = 0; i < fc->nnames; i++) {
        if (fc->names[i].len == len && wsi_name_eq(arg, len, fc->names[i].name))
            return ++fc->names[i].count;
    }
    if (grow((void **)&fc->names, &fc->capnames, fc->nnames + 1, sizeof *fc->names))
        return 0;
    char *lc = wsi_xmalloc(len + 1);
    for (size_t i = 0; i < len; i++) {
        char ch = arg[i];
        lc[i] = (ch >= 'A' && ch <= 'Z') ? (char)(ch - 'A' + 'a') : ch;
    }
    lc[len] = '\0';
    fc->names[fc->nnames++] = (name_count){lc, len, 1};
    return 1;
}

/* The length of argument k of cmd (strlen when the command has no lengths). */
static size_t arg_len(const fr_command *cmd, int k)
{
    return cmd->argvlen ? cmd->argvlen[k] : strlen(cmd->argv[k]);
}

/* Whether cmd's name is name, ignoring case. */
static int cmd_is(const fr_command *cmd, const char *name)
{
    return wsi_name_eq(cmd->argv[0], arg_len(cmd, 0), name);
}

/* Marks a fired (faults are one-shot) and tells its arming caller, if it asked. */
static void fire(fault_conn *fc, armed *a)
{
    a->fired = 1;
    fc->fired++;
    if (a->f.fired_flag) *a->f.fired_flag = 1;
}

/* Does armed fault a hit command pos (1-based; 0 = the round trip itself) of round trip
 * rt, whose occurrence number for its name is occ? */
static int hits(const armed *a, uint64_t rt, size_t pos, const fr_command *cmd, uint64_t occ)
{
    if (a->fired) return 0;
    if (a->name) {
        if (pos == 0) return 0;
        return occ == a->f.nth && wsi_name_eq(cmd->argv[0], arg_len(cmd, 0), a->name);
    }
    return a->f.round_trip == rt && a->f.command == pos;
}

/* A reply of type type with text, made in the round trip's arena; NULL when out of
 * memory. */
static fr_reply *synth(fault_conn *fc, fr_reply_type type, const char *text)
{
    fr_reply *r = wsi_arena_alloc(&fc->arena, sizeof *r);
    if (!r) return NULL;
    memset(r, 0, sizeof *r);
    r->type = type;
    r->len = strlen(text);
    r->str = wsi_arena_strdup(&fc->arena, text, r->len);
    return r->str ? r : NULL;
}

/* A deep copy into the layer's arena, so replies outlive the inner connection. */
static int copy_reply(fault_conn *fc, fr_reply *dst, const fr_reply *src)
{
    *dst = *src;
    if (src->str) {
        dst->str = wsi_arena_strdup(&fc->arena, src->str, src->len);
        if (!dst->str) return -1;
    }
    if (src->type == FR_REPLY_ARRAY && src->count) {
        fr_reply *el = wsi_arena_alloc(&fc->arena, src->count * sizeof *el);
        if (!el) return -1;
        for (size_t i = 0; i < src->count; i++)
            if (copy_reply(fc, &el[i], &src->elements[i])) return -1;
        dst->elements = el;
    }
    return 0;
}

/* Forgets the open transaction's injected errors. */
static void clear_pending(fault_conn *fc)
{
    for (size_t i = 0; i < fc->npending; i++) wsi_free(fc->pending[i].error);
    fc->npending = 0;
}

/* EXEC's array with the transaction's injected errors put back at their queue places:
 * what Redis answers when those commands fail at run time. */
static const fr_reply *splice_exec(fault_conn *fc, const fr_reply *exec)
{
    size_t total = exec->count + fc->npending;
    fr_reply *out = wsi_arena_alloc(&fc->arena, sizeof *out);
    fr_reply *el = wsi_arena_alloc(&fc->arena, total * sizeof *el);
    if (!out || !el) return NULL;
    size_t real = 0, p = 0;
    for (size_t q = 0; q < total; q++) {
        if (p < fc->npending && (fc->pending[p].queue_index == q || real >= exec->count)) {
            memset(&el[q], 0, sizeof el[q]);
            el[q].type = FR_REPLY_ERROR;
            el[q].str = fc->pending[p].error;
            el[q].len = strlen(fc->pending[p].error);
            el[q].str = wsi_arena_strdup(&fc->arena, el[q].str, el[q].len);
            if (!el[q].str) return NULL;
            p++;
        } else {
            el[q] = exec->elements[real++];
        }
    }
    *out = *exec;
    out->elements = el;
    out->count = total;
    return out;
}

/* Follows MULTI/EXEC/DISCARD through one command and its reply (real or synthesised),
 * and returns the reply the caller sees (EXEC's may be spliced).  NULL on OOM. */
static const fr_reply *track(fault_conn *fc, const fr_command *cmd, const fr_reply *r,
                             const char *injected)
{
    if (injected && r) {
        /* an injected EXEC or DISCARD inside MULTI, sent as DISCARD: the server dropped
         * the queue, so the transaction is over and nothing of it ran */
        fc->in_multi = 0;
        clear_pending(fc);
        return synth(fc, FR_REPLY_ERROR, injected);
    }
    if (injected) {
        if (!fc->in_multi) return synth(fc, FR_REPLY_ERROR, injected);
        if (grow((void **)&fc->pending, &fc->cappending, fc->npending + 1,
                 sizeof *fc->pending))
            return NULL;
        char *e = dupstr(injected);
        if (!e) return NULL;
        fc->pending[fc->npending++] = (pending_error){fc->queued++, e};
        return synth(fc, FR_REPLY_STATUS, "QUEUED");
    }
    /* MULTI, EXEC and DISCARD take no argument: with one they are refused for arity and
     * change no state (inside MULTI that flags the transaction, which the server tracks). */
    int bare = cmd->argc == 1;
    if (cmd_is(cmd, "multi")) {
        if (!fc->in_multi && bare && r->type == FR_REPLY_STATUS) {
            fc->in_multi = 1;
            fc->queued = 0;
            clear_pending(fc);
        }
    } else if (fc->in_multi && bare && cmd_is(cmd, "exec")) {
        fc->in_multi = 0;
        if (r->type == FR_REPLY_ARRAY && fc->npending) r = splice_exec(fc, r);
        clear_pending(fc);
    } else if (fc->in_multi && bare && cmd_is(cmd, "discard")) {
        fc->in_multi = 0;
        clear_pending(fc);
    } else if (fc->in_multi && r->type == FR_REPLY_STATUS && r->len == 6 &&
               memcmp(r->str, "QUEUED", 6) == 0) {
        fc->queued++;
    }
    return r;
}

/* ----- The round trip ------------------------------------------------------------------ */

/* One round trip through the armed faults: refused whole, or the prefix before a crash
 * point sent with injected errors answered in place, replies lost or the consumer crashed
 * as armed; fates say which. */
static int fault_pipeline(ws_conn *c, size_t n, const fr_command *commands,
                          const fr_reply **replies, unsigned char *fates)
{
    fault_conn *fc = (fault_conn *)c;
    uint64_t rt = c->stats.round_trips;
    if (fc->hook) fc->hook(fc->hook_arg, c, rt, n);
    wsi_arena_reset(&fc->arena);
    if (scratch_reserve(&fc->rt, n)) return wsi_conn_fail(c, WS_ENOMEM, 0, NULL);
    rt_plan *plan = fc->rt.plan;
    /* Name counters advance for every command given, whatever happens next, so "the 3rd
     * XACK" means the same thing however earlier round trips ended. */
    for (size_t j = 0; j < n; j++) {
        plan[j].occ = count_name(fc, commands[j].argv[0], arg_len(&commands[j], 0));
        if (!plan[j].occ) return wsi_conn_fail(c, WS_ENOMEM, 0, NULL);
        plan[j].inject = NULL;
        plan[j].discard = 0;
    }

    /* A lost connection sends nothing: every command answers the error at once -- unless
     * the consumer crashes there (a crash is the process's, whatever its connections). */
    if (fc->gone) {
        for (size_t i = 0; i < fc->nfaults; i++) {
            armed *a = &fc->faults[i];
            if (a->f.kind != WS_FAULT_CRASH_AFTER && a->f.kind != WS_FAULT_CRASH_BEFORE &&
                a->f.kind != WS_FAULT_LOSE_REPLIES)
                continue;
            for (size_t pos = 0; pos <= n; pos++) {
                if (!hits(a, rt, pos, pos ? &commands[pos - 1] : NULL, pos ? plan[pos - 1].occ : 0))
                    continue;
                fire(fc, a);
                snprintf(c->note, sizeof c->note, "crash, nothing sent (connection lost)");
                return wsi_conn_fail(c, WS_ECRASHED, 1,
                                     "injected: consumer crashed in round trip %llu after 0 "
                                     "of %zu commands (its connection was lost already)",
                                     (unsigned long long)rt, n);
            }
        }
        for (size_t j = 0; j < n; j++) {
            replies[j] = synth(fc, FR_REPLY_ERROR, WS_DISCONNECT_ERROR);
            if (!replies[j]) return wsi_conn_fail(c, WS_ENOMEM, 0, NULL);
            fates[j] = WS_FATE_INJECTED;
        }
        snprintf(c->note, sizeof c->note, "connection lost: nothing sent");
        return 0;
    }

    /* A refusal anywhere in the round trip: nothing leaves. */
    int refused = 0;
    for (size_t i = 0; i < fc->nfaults; i++) {
        armed *a = &fc->faults[i];
        if (a->f.kind != WS_FAULT_REFUSE) continue;
        for (size_t pos = 0; pos <= n; pos++) {
            if (hits(a, rt, pos, pos ? &commands[pos - 1] : NULL, pos ? plan[pos - 1].occ : 0)) {
                fire(fc, a);
                refused = 1;
                break;
            }
        }
    }
    if (refused) {
        wsi_snprintf(c->note, sizeof c->note, "refused, nothing sent");
        return wsi_conn_fail(c, WS_EREFUSED, 0, "injected: round trip %llu refused",
                             (unsigned long long)rt);
    }

    /* The crash point: the first command not applied. */
    size_t cutoff = n;
    armed *crash = NULL, *lose = NULL, *drop = NULL;
    for (size_t i = 0; i < fc->nfaults; i++) {
        armed *a = &fc->faults[i];
        for (size_t pos = 0; pos <= n; pos++) {
            if (!hits(a, rt, pos, pos ? &commands[pos - 1] : NULL, pos ? plan[pos - 1].occ : 0))
                continue;
            if (a->f.kind == WS_FAULT_CRASH_AFTER || a->f.kind == WS_FAULT_CRASH_BEFORE) {
                size_t cut = a->f.kind == WS_FAULT_CRASH_AFTER ? pos : pos - 1;
                if (!crash || cut < cutoff) {
                    crash = a;
                    cutoff = cut;
                }
            } else if (a->f.kind == WS_FAULT_LOSE_REPLIES) {
                if (!lose) lose = a;
            } else if (a->f.kind == WS_FAULT_DISCONNECT) {
                if (!drop) drop = a;
            }
            break;
        }
    }
    if (crash) lose = NULL;
    if (crash || lose) drop = NULL; /* the consumer dies: nothing lives on to see the loss */
    for (size_t i = 0; i < fc->nfaults; i++) {
        armed *a = &fc->faults[i];
        if (a->f.kind != WS_FAULT_ERROR) continue;
        for (size_t pos = 1; pos <= cutoff; pos++) {
            if (!plan[pos - 1].inject &&
                hits(a, rt, pos, &commands[pos - 1], plan[pos - 1].occ)) {
                plan[pos - 1].inject = a->error;
                fire(fc, a);
                break;
            }
        }
    }
    if (crash) fire(fc, crash);
    if (lose) fire(fc, lose);
    if (drop) fire(fc, drop);

    /* An error answered to EXEC or DISCARD ends the transaction (a server answering EXEC
     * an error has discarded it), so inside MULTI a DISCARD goes in its place: otherwise
     * the server would stay in MULTI and queue the next round trip.  Whether MULTI is
     * open there is followed through the round trip as the server will see it. */
    static const char *const discard_argv[] = {"DISCARD"};
    static const size_t discard_len[] = {7};
    static const fr_command discard_cmd = {1, discard_argv, discard_len};
    int open = fc->in_multi;
    for (size_t j = 0; j < cutoff; j++) {
        const fr_command *cmd = &commands[j];
        int bare = cmd->argc == 1;
        int ends = bare && (cmd_is(cmd, "exec") || cmd_is(cmd, "discard"));
        plan[j].discard = plan[j].inject && open && ends;
        if (plan[j].inject && !plan[j].discard) continue; /* never reaches the server */
        if (ends) open = 0;
        else if (bare && cmd_is(cmd, "multi")) open = 1;
    }

    /* Send what is left. */
    size_t m = 0;
    for (size_t j = 0; j < cutoff; j++) {
        if (plan[j].inject && !plan[j].discard) continue;
        fc->rt.send[m] = plan[j].discard ? discard_cmd : commands[j];
        fc->rt.send_of[m++] = j;
    }
    if (m > 0) {
        int rc = ws_pipeline(fc->inner, NULL, m, fc->rt.send, fc->rt.inner_replies);
        if (rc != 0) {
            /* A real failure underneath: report it as it is. */
            if (fc->inner->fbuf && fc->inner->bufcap >= m && rc != WS_EDEAD)
                for (size_t s = 0; s < m; s++) fates[fc->rt.send_of[s]] = fc->inner->fbuf[s];
            return wsi_conn_fail(c, rc, 1, "%s", fc->inner->errstr);
        }
        c->stats.commands_sent += m;
    }

    if (drop) {
        /* The connection is lost with the round trip applied: its replies are never read
         * (what the server answered stays unknown), and each command answers the error. */
        for (size_t j = 0; j < cutoff; j++) {
            replies[j] = synth(fc, FR_REPLY_ERROR, WS_DISCONNECT_ERROR);
            if (!replies[j]) return wsi_conn_fail(c, WS_ENOMEM, 1, NULL);
            fates[j] = plan[j].inject && !plan[j].discard ? WS_FATE_INJECTED : WS_FATE_LOST;
        }
        ws_conn_close(fc->inner);
        fc->inner = NULL;
        fc->gone = 1;
        fc->in_multi = 0;
        clear_pending(fc);
        snprintf(c->note, sizeof c->note, "connection lost: replies of %zu commands never read",
                 n);
        return 0;
    }

    /* The replies, in the caller's order, with MULTI followed through them. */
    size_t s = 0;
    for (size_t j = 0; j < cutoff; j++) {
        const fr_reply *r =
            plan[j].inject && !plan[j].discard ? NULL : fc->rt.inner_replies[s++];
        if ((crash || lose) && r) {
            fr_reply *copy = wsi_arena_alloc(&fc->arena, sizeof *copy);
            if (!copy || copy_reply(fc, copy, r)) r = NULL;
            else r = copy;
        }
        replies[j] = r || plan[j].inject ? track(fc, &commands[j], r, plan[j].inject) : NULL;
        if (!replies[j] && !(crash || lose))
            return wsi_conn_fail(c, WS_ENOMEM, 1, "out of memory building replies");
        fates[j] = plan[j].inject ? WS_FATE_INJECTED
                   : (crash || lose) ? WS_FATE_LOST
                                     : WS_FATE_REPLIED;
    }
    if (crash || lose) {
        /* The consumer's socket dies with it. */
        ws_conn_close(fc->inner);
        fc->inner = NULL;
        if (crash) {
            wsi_snprintf(c->note, sizeof c->note, "crash after %zu of %zu commands", cutoff, n);
            return wsi_conn_fail(c, WS_ECRASHED, 1,
                                 "injected: consumer crashed in round trip %llu after %zu "
                                 "of %zu commands",
                                 (unsigned long long)rt, cutoff, n);
        }
        wsi_snprintf(c->note, sizeof c->note, "replies of %zu commands lost", n);
        return wsi_conn_fail(c, WS_ELOST, 1,
                             "injected: connection dropped in round trip %llu, %zu replies "
                             "lost",
                             (unsigned long long)rt, n);
    }
    /* a DISCARD sent for an injected EXEC: its reply is not the caller's */
    for (size_t j = 0; j < cutoff; j++) m -= plan[j].discard;
    c->stats.replies_received += m;
    return 0;
}

/* Closes the inner connection and frees the faults, the counters and the scratch. */
static void fault_close(ws_conn *c)
{
    fault_conn *fc = (fault_conn *)c;
    ws_conn_close(fc->inner);
    for (size_t i = 0; i < fc->nfaults; i++) {
        wsi_free(fc->faults[i].name);
        wsi_free(fc->faults[i].error);
    }
    wsi_free(fc->faults);
    for (size_t i = 0; i < fc->nnames; i++) wsi_free(fc->names[i].name);
    wsi_free(fc->names);
    clear_pending(fc);
    wsi_free(fc->pending);
    wsi_arena_free(&fc->arena);
    scratch_free(&fc->rt);
    wsi_free(fc);
}

/* Pushes pass through untouched: faults address round trips, and pushes are none. */
static int fault_pushes(ws_conn *c, int timeout_ms, size_t max, const fr_reply **out,
                        size_t *n)
{
    fault_conn *fc = (fault_conn *)c;
    if (fc->gone) {
        *n = 0; /* nothing arrives on a lost connection */
        return 0;
    }
    if (!fc->inner) return WS_EDEAD;
    int rc = ws_conn_pushes(fc->inner, timeout_ms, max, out, n);
    if (rc && fc->inner->dead) return wsi_conn_fail(c, rc, 1, "%s", fc->inner->errstr);
    return rc;
}

static const wsi_conn_ops fault_ops = {fault_pipeline, fault_close, fault_pushes};

/* A fault layer owning inner (dead from the start when inner is); NULL when inner is NULL
 * or out of memory, inner closed then. */
ws_conn *ws_conn_faulty(ws_conn *inner)
{
    if (!inner) return NULL;
    fault_conn *fc = wsi_xcalloc(1, sizeof *fc);
    wsi_conn_init(&fc->base, &fault_ops, inner->label);
    fc->base.faulty = 1;
    fc->inner = inner;
    if (inner->dead) {
        fc->base.err = inner->err;
        memcpy(fc->base.errstr, inner->errstr, sizeof fc->base.errstr);
        fc->base.dead = 1;
    }
    return &fc->base;
}

/* ----- Arming ------------------------------------------------------------------------ */

/* Arms a copy of f (one-shot): 0, WS_EINVAL for a fault that can name no point, or
 * WS_ENOMEM. */
int ws_fault_arm(ws_conn *c, const ws_fault *f)
{
    if (!c || !c->faulty || !f) return WS_EINVAL;
    fault_conn *fc = (fault_conn *)c;
    if (f->kind < WS_FAULT_CRASH_AFTER || f->kind > WS_FAULT_DISCONNECT) return WS_EINVAL;
    if (f->name) {
        if (!f->name[0] || f->nth == 0) return WS_EINVAL;
    } else {
        if (f->round_trip == 0) return WS_EINVAL;
        if (f->command == 0 &&
            (f->kind == WS_FAULT_ERROR || f->kind == WS_FAULT_CRASH_BEFORE))
            return WS_EINVAL;
    }
    if (grow((void **)&fc->faults, &fc->capfaults, fc->nfaults + 1, sizeof *fc->faults))
        return WS_ENOMEM;
    armed a = {.f = *f};
    a.error = dupstr(f->error ? f->error : DEFAULT_ERROR);
    a.name = f->name ? dupstr(f->name) : NULL;
    if (!a.error || (f->name && !a.name)) {
        wsi_free(a.error);
        wsi_free(a.name);
        return WS_ENOMEM;
    }
    a.f.name = a.name;
    a.f.error = a.error;
    fc->faults[fc->nfaults++] = a;
    return 0;
}

/* Arms a crash after the server applied the first k commands of round trip round_trip
 * (k == 0: nothing sent). */
int ws_fault_crash_after(ws_conn *c, uint64_t round_trip, size_t k)
{
    ws_fault f = {.kind = WS_FAULT_CRASH_AFTER, .round_trip = round_trip, .command = k};
    return ws_fault_arm(c, &f);
}

/* Arms error (NULL: the default text) as the reply of the nth command called name. */
int ws_fault_error_nth(ws_conn *c, const char *name, uint64_t nth, const char *error)
{
    if (!name) return WS_EINVAL;
    ws_fault f = {.kind = WS_FAULT_ERROR, .name = name, .nth = nth, .error = error};
    return ws_fault_arm(c, &f);
}

/* Disarms every fault not yet fired; the per-name counters go on. */
void ws_fault_clear(ws_conn *c)
{
    if (!c || !c->faulty) return;
    fault_conn *fc = (fault_conn *)c;
    for (size_t i = 0; i < fc->nfaults; i++) {
        wsi_free(fc->faults[i].name);
        wsi_free(fc->faults[i].error);
    }
    fc->nfaults = 0;
}

/* How many faults fired on c so far (0 for a connection without the layer). */
uint64_t ws_fault_fired(const ws_conn *c)
{
    if (!c || !c->faulty) return 0;
    return ((const fault_conn *)c)->fired;
}

/* Calls fn at the start of each round trip of c (NULL stops it); WS_EINVAL without the
 * fault layer. */
int ws_fault_set_hook(ws_conn *c, ws_fault_hook fn, void *arg)
{
    if (!c || !c->faulty) return WS_EINVAL;
    fault_conn *fc = (fault_conn *)c;
    fc->hook = fn;
    fc->hook_arg = arg;
    return 0;
}
