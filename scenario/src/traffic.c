/* traffic.c -- the window's invariants checked on a recording of real traffic
 * (wsc_traffic.h; docs/recording.md, "Checking traffic").
 *
 * Three passes over the recording:
 *
 *   1. the commands as the server applied them: a command queued in MULTI runs where its
 *      EXEC ran, with its element of EXEC's reply; a transaction that EXEC did not run
 *      (EXECABORT, DISCARD, a connection that closed) applies nothing.  Each connection
 *      that reads or settles a subscribed source is a consumer's; consumers' connections
 *      are grouped by their process (the peer's pid, when the recording has it);
 *   2. the model: entries produced (XADD, LPUSH to a source by anyone but a consumer),
 *      their deliveries, settles, the retries that copy them (a consumer's XADD or LPUSH of
 *      an entry's payload, a delay-queue ZADD, its sweep's ZREM and XADD), what ends them,
 *      and every other write of a consumer's connection (a command the command table flags
 *      write or may_replicate, that did not answer an error);
 *   3. attribution of the writes to deliveries, then the verdicts.
 *
 * The rules say what the traffic proves and no more (wsc_traffic.h); each verdict keeps the
 * lines of the recording it rests on, quoted in the report.
 *
 * Memory: every block of a check comes from one arena; out of memory anywhere jumps back
 * to wsc_traffic_check, which frees the arena and answers WS_ENOMEM. */
#include <inttypes.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "traffic_int.h"
#include "wsc_int.h"
#include "wsc_traffic.h"
#include "wsi_alloc.h"
#include "wsi_buf.h"
#include "wsi_strmap.h"

const char *const WSC_TRAFFIC_KINDS[WSC_TRAFFIC_NKINDS] = {
    "lost", "doubled", "stranded", "unsettled", "settle-before-writes", "atomic-shape",
};

/* ----- Memory ------------------------------------------------------------------------------ */

typedef struct chunk {
    struct chunk *next;
    size_t used, cap;
    max_align_t data[];
} chunk;

/* The check's state that must be freed whatever happens. */
typedef struct arena {
    chunk *chunks;
    jmp_buf *oom;             /* where out of memory jumps */
    void **heap;              /* blocks of other allocators (parsed replies) */
    size_t nheap, capheap;
    wsi_strmap *maps[8];      /* maps to free */
    size_t nmaps;
} arena;

static void *amalloc(arena *a, size_t n)
{
    n = (n + sizeof(max_align_t) - 1) / sizeof(max_align_t) * sizeof(max_align_t);
    if (!a->chunks || a->chunks->cap - a->chunks->used < n) {
        size_t cap = n > 65536 ? n : 65536;
        chunk *c = wsi_malloc(sizeof *c + cap);
        if (!c) longjmp(*a->oom, 1);
        c->next = a->chunks;
        c->used = 0;
        c->cap = cap;
        a->chunks = c;
    }
    void *p = (char *)a->chunks->data + a->chunks->used;
    a->chunks->used += n;
    memset(p, 0, n);
    return p;
}

static char *adup(arena *a, const char *p, size_t n)
{
    char *s = amalloc(a, n + 1);
    if (n) memcpy(s, p, n);
    s[n] = '\0';
    return s;
}

/* Keeps a block of another allocator to free with the arena. */
static void aown(arena *a, void *p)
{
    if (!p) return;
    if (a->nheap == a->capheap) {
        size_t cap = a->capheap ? a->capheap * 2 : 64;
        void **v = wsi_realloc(a->heap, cap * sizeof *v);
        if (!v) {
            wsi_free(p);
            longjmp(*a->oom, 1);
        }
        a->heap = v;
        a->capheap = cap;
    }
    a->heap[a->nheap++] = p;
}

static void arena_free(arena *a)
{
    for (size_t i = 0; i < a->nheap; i++) wsi_free(a->heap[i]);
    wsi_free(a->heap);
    for (size_t i = 0; i < a->nmaps; i++) wsi_strmap_free(a->maps[i]);
    while (a->chunks) {
        chunk *c = a->chunks;
        a->chunks = c->next;
        wsi_free(c);
    }
}

/* A growable array of T in the arena: VEC(T) v; vpush(a, &v) gives a new zeroed slot. */
#define VEC(T)        \
    struct {          \
        T *v;         \
        size_t n, cap; \
    }

static void *vgrow(arena *a, void *v, size_t *cap, size_t n, size_t size)
{
    if (n < *cap) return v;
    size_t ncap = *cap ? *cap * 2 : 16;
    void *nv = amalloc(a, ncap * size);
    if (n) memcpy(nv, v, n * size);
    *cap = ncap;
    return nv;
}

/* A vector of indices. */
typedef VEC(size_t) idvec;

#define vpush(a, vec) \
    ((vec)->v = vgrow((a), (vec)->v, &(vec)->cap, (vec)->n, sizeof(*(vec)->v)), &(vec)->v[(vec)->n++])

/* A map of the arena's (freed with it). */
static wsi_strmap *amap(arena *a)
{
    if (a->nmaps == sizeof a->maps / sizeof a->maps[0]) longjmp(*a->oom, 1);
    wsi_strmap *m = amalloc(a, sizeof *m);
    a->maps[a->nmaps++] = m;
    return m;
}

static void mput(arena *a, wsi_strmap *m, const char *k, size_t len, size_t v)
{
    if (wsi_strmap_put(m, k, len, v)) longjmp(*a->oom, 1);
}

static size_t mget(const wsi_strmap *m, const char *k, size_t len)
{
    size_t v = 0;
    wsi_strmap_get(m, k, len, &v);
    return v;
}

/* ----- The model's records -------------------------------------------------------------------- */

/* What a subscription reads from: a stream and a group, or a list. */
typedef struct source {
    int form;                 /* WS_FORM_STREAM, WS_FORM_RELIABLE_LIST, WS_FORM_PLAIN_LIST */
    const char *key, *group;  /* group: streams */
    const char *processing;   /* reliable list: its processing list */
    const char *recovery;     /* reliable list: its recovery set, or NULL */
    const char *delay;        /* stream: its delay queue, or NULL */
    const char *dead_letter;  /* where capped retries go, or NULL */
    const char *reply_key;    /* its reply output, or NULL */
    const wsc_stmt *fresh;    /* the subscription that reads it fresh (not reclaiming) */
    const wsc_stmt *again;    /* the reclaiming one (XAUTOCLAIM, re-reads), or fresh */
    int created;              /* stream: the group's XGROUP CREATE was seen */
} source;

/* Where an entry is. */
enum {
    N_UNREAD = 1,   /* produced (or put back), not delivered */
    N_PENDING,      /* delivered, not settled (a stream's pending list) */
    N_PROCESSING,   /* delivered from a reliable list: on its processing list */
    N_SETTLED,      /* settled (acknowledged, removed from the processing list) */
    N_SCHEDULED,    /* a delay-queue member holds its copy */
    N_INFLIGHT,     /* taken off the delay queue or the processing list by a sweep, not
                       back yet */
    N_TAKEN,        /* popped from a plain list (at most once by design) */
    N_DEAD,         /* copied to the dead letter */
    N_GONE,         /* deleted (XDEL, DEL, a trimming the model followed) */
    N_OUTSIDE,      /* not the group's (before its XGROUP CREATE ... $) */
};

static const char *state_name(int s)
{
    switch (s) {
    case N_UNREAD: return "unread";
    case N_PENDING: return "pending";
    case N_PROCESSING: return "on the processing list";
    case N_SETTLED: return "settled";
    case N_SCHEDULED: return "scheduled in the delay queue";
    case N_INFLIGHT: return "taken by a sweep and never put back";
    case N_TAKEN: return "popped";
    case N_DEAD: return "copied to the dead letter";
    case N_GONE: return "deleted";
    default: return "not the group's";
    }
}

/* An entry, or a copy of one (a retry, a delay-queue member): a node of its lineage. */
typedef struct node {
    size_t src;               /* its source */
    const char *id;           /* stream id, list value, or delay member */
    size_t id_len;
    const char *payload;      /* what copies are matched by: a stream's _payload, a list
                                 value's frame payload, a member's copy's _payload */
    size_t payload_len;
    size_t root;              /* the produced entry it descends from (a node index + 1) */
    size_t parent_dl;         /* the delivery it was copied from (+1), 0 */
    int state;
    size_t line;              /* where it appeared */
    size_t state_line;        /* where its state last changed */
    size_t head;              /* roots only: the lineage's newest node (+1) */
    int produced;             /* roots: produced in the recording (else first seen read) */
    uint64_t inflight_conn;   /* N_INFLIGHT: the connection whose sweep took it */
    size_t open_dl;           /* its latest delivery not settled (+1), 0 none */
} node;

/* How a delivery was read. */
enum { R_FRESH = 1, R_REREAD, R_AUTOCLAIM, R_CLAIM, R_MOVE, R_POP };

/* A delivery: one handing-out of a node to a handler. */
typedef struct dl {
    size_t node;              /* the node delivered */
    uint64_t conn;            /* the connection that read it */
    size_t proc;              /* its process (consumer group of connections) */
    const wsc_stmt *sub;      /* the subscription it came through */
    int how;                  /* R_* */
    size_t read_op, read_line;
    size_t end_op;            /* when it stopped being in handling: its settle, or its
                                 reading connection's close (SIZE_MAX: never) */
    size_t settle_op, settle_line; /* its settle that took effect (0: none) */
    int retried;              /* settled for a retry: a copy of it was made (requeue, delay
                                 queue, a runtime copy) */
    size_t copy_line;         /* the copy's line */
    int claimed;              /* reliable list: a recovery member names it */
} dl;

/* One command as the server applied it. */
typedef struct op {
    const wsr_event *e;       /* its recording line (a queued command: where it was queued) */
    const wsr_event *exec;    /* the EXEC that ran it, or NULL */
    size_t txn;               /* its transaction (+1), 0 outside */
    const wsr_value *reply;   /* its effective reply, or NULL (none: CLIENT REPLY OFF) */
    int applied;              /* it ran */
    size_t conn;              /* its connection (index) */
    int write;                /* a handler's write (pass 2 decides) */
    int settle;               /* it settled deliveries (pass 2) */
    int ran_calls;            /* a script command whose commands have their own call lines
                                 (they are the writes and settles, not it) */
    size_t first_settled;     /* pass 2: the deliveries it settled: settled[first..first+n) */
    size_t nsettled;
} op;

/* A MULTI ... EXEC, or a script whose commands the recording shows (call lines): both run
 * whole, nothing else between their commands. */
typedef struct txn {
    size_t conn;
    int script;               /* a script: `end` is its EVAL/EVALSHA/FCALL, no MULTI */
    size_t multi_op;          /* the MULTI (an op index; a script: its first command's) */
    const wsr_event *end;     /* the EXEC or DISCARD line (a script: its command), or NULL */
    int ran;                  /* EXEC ran its queue */
    size_t first, n;          /* its queued commands: ops[first .. first+n) when ran, else
                                 the `dropped` list's */
} txn;

/* A connection. */
typedef struct conn {
    uint64_t id;
    const char *name;         /* its latest name */
    long long pid;
    int consumer;             /* it reads or settles a subscribed source */
    size_t proc;              /* its process (1-based), 0 when not a consumer */
    size_t open_line, close_line;
    size_t close_op;          /* SIZE_MAX while open */
    /* pass 1 */
    int in_multi;             /* MULTI was answered +OK */
    int doomed;               /* a command queued in it was refused */
    size_t txn;               /* the open transaction (+1) */
    VEC(const wsr_event *) queue; /* queued commands not yet run */
    VEC(const wsr_event *) calls; /* call lines of the script that is running */
    /* pass 2 */
    VEC(const char *) swept;  /* values the last recovery sweep listed */
    idvec swept_len;
} conn;

/* One attribution of a write. */
enum { A_EXACT_MULTI = 1, A_PIPELINE, A_ORDER, A_ONLY, A_SET, A_NONE, A_AFTER, A_EXACT_SCRIPT };

typedef struct attrib {
    size_t op;                /* the write */
    int how;                  /* A_* */
    size_t first, n;          /* the deliveries: cand[first .. first+n) */
} attrib;

typedef struct violation {
    int kind;                 /* index in WSC_TRAFFIC_KINDS */
    size_t root;              /* the entry (node index + 1) */
    size_t order;             /* for sorting: the line of its first quote */
    char *sentence;
    idvec lines;              /* recording lines to quote */
} violation;

typedef struct checker {
    arena A;
    const wsr_recording *rec;
    const wsc_scenario *sc;
    wsc_traffic_options opt;
    VEC(source) src;
    VEC(conn) conns;
    wsi_strmap *conn_index;   /* conn id (decimal) -> index + 1 */
    VEC(op) ops;
    VEC(txn) txns;
    VEC(const wsr_event *) dropped; /* queued commands of transactions that did not run */
    VEC(node) nodes;
    VEC(dl) dls;
    idvec settled;            /* ops' settled deliveries */
    wsi_strmap *node_index;   /* "src\0id" -> node index + 1 (latest node with that id) */
    idvec *main;              /* per source: its main list (node indices), lists only */
    idvec *proc_list;         /* per source: its processing list's nodes */
    wsi_strmap *claims;       /* "src\0value" -> recovery members naming it */
    VEC(attrib) attribs;
    idvec cand;               /* attributions' deliveries */
    size_t *first_write;      /* per delivery: its first attribution (+1), 0 none */
    idvec *reads;             /* per process (1-based): the ops of its reads, ascending */
    VEC(violation) viol;
    VEC(char *) notes;
    size_t nprocs;
    size_t writes, settles, rounds;
    int note_unknown_pid;
    size_t opaque_scripts;    /* scripts whose commands the recording lacks */
    size_t opaque_line;       /* the first one's line */
} checker;

static void note(checker *k, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void note(checker *k, const char *fmt, ...)
{
    char buf[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    for (size_t i = 0; i < k->notes.n; i++)
        if (strcmp(k->notes.v[i], buf) == 0) return;
    *vpush(&k->A, &k->notes) = adup(&k->A, buf, strlen(buf));
}

/* ----- Commands ------------------------------------------------------------------------------ */

/* Whether argument i of e is the word w (case-insensitive). */
static int arg_is(const wsr_event *e, int i, const char *w)
{
    return i < e->argc && e->argvlen[i] == strlen(w) && strncasecmp(e->argv[i], w, strlen(w)) == 0;
}

static int arg_eq(const wsr_event *e, int i, const char *s)
{
    return s && i < e->argc && e->argvlen[i] == strlen(s) && memcmp(e->argv[i], s, strlen(s)) == 0;
}

/* The command's name is w. */
static int cmd_is(const wsr_event *e, const char *w) { return arg_is(e, 0, w); }

/* The names the command table flags write or may_replicate (built once). */
static wsi_strmap write_names;
static int write_names_built;

static int builds_write_names(void)
{
    if (write_names_built) return 0;
    for (size_t i = 0; i < fr_command_count(); i++) {
        const fr_command_info *c = fr_command_at(i);
        if (!c || !c->flags) continue;
        if (!strstr(c->flags, "write") && !strstr(c->flags, "may_replicate")) continue;
        const char *bar = strchr(c->name, '|');
        size_t n = bar ? (size_t)(bar - c->name) : strlen(c->name);
        if (wsi_strmap_put(&write_names, c->name, n, 1)) return -1;
    }
    write_names_built = 1;
    return 0;
}

/* Whether e may write (its name, any of its subcommands). */
static int may_write(const wsr_event *e)
{
    char low[32];
    size_t n = e->argvlen[0];
    if (n >= sizeof low) return 0;
    for (size_t i = 0; i < n; i++) {
        char c = e->argv[0][i];
        low[i] = (char)(c >= 'A' && c <= 'Z' ? c + 32 : c);
    }
    size_t v;
    return wsi_strmap_get(&write_names, low, n, &v);
}

/* A reply's string (bulk, status, verbatim text): its bytes and length, or NULL. */
static const char *vstr(const wsr_value *v, size_t *len)
{
    if (!v || v->nil || !v->str || (v->type != '$' && v->type != '+' && v->type != '=')) return NULL;
    if (v->type == '=' && v->len >= 4) {
        *len = v->len - 4;
        return v->str + 4;
    }
    *len = v->len;
    return v->str;
}

static int verror(const wsr_value *v) { return v && (v->type == '-' || v->type == '!'); }

static int vint(const wsr_value *v, long long *out)
{
    if (!v || v->type != ':') return 0;
    *out = v->integer;
    return 1;
}

/* An aggregate's elements (array, set, push, map's flat pairs), or NULL. */
static const wsr_value *velems(const wsr_value *v, size_t *n)
{
    if (!v || v->nil || (v->type != '*' && v->type != '~' && v->type != '%' && v->type != '>'))
        return NULL;
    *n = v->count;
    return v->elements;
}

/* ----- Sources ------------------------------------------------------------------------------- */

static size_t find_source(const checker *k, int form, const char *key, size_t klen,
                          const char *group, size_t glen)
{
    for (size_t i = 0; i < k->src.n; i++) {
        const source *s = &k->src.v[i];
        int f = s->form == WS_FORM_PLAIN_LIST ? WS_FORM_RELIABLE_LIST : s->form;
        int want = form == WS_FORM_PLAIN_LIST ? WS_FORM_RELIABLE_LIST : form;
        if (f != want || strlen(s->key) != klen || memcmp(s->key, key, klen) != 0) continue;
        if (s->form == WS_FORM_STREAM && group &&
            (strlen(s->group) != glen || memcmp(s->group, group, glen) != 0))
            continue;
        return i + 1;
    }
    return 0;
}

/* The source whose list (processing == 0) or processing list (1), recovery set (2) or delay
 * queue (3) is key. */
static size_t source_by(const checker *k, int which, const char *key, size_t klen)
{
    for (size_t i = 0; i < k->src.n; i++) {
        const source *s = &k->src.v[i];
        const char *n = which == 0 ? (s->form != WS_FORM_STREAM ? s->key : NULL)
                        : which == 1 ? s->processing : which == 2 ? s->recovery : s->delay;
        if (n && strlen(n) == klen && memcmp(n, key, klen) == 0) return i + 1;
    }
    return 0;
}

static void sources_from(checker *k)
{
    const wsc_scenario *sc = k->sc;
    for (size_t i = 0; i < sc->nst; i++) {
        const wsc_stmt *st = &sc->st[i];
        if (st->kind != K_SUBSCRIBE || st->cfg.form == WS_FORM_CHANNEL) continue;
        const char *key = st->s_key;
        size_t at = find_source(k, st->cfg.form, key, strlen(key), st->s_group,
                                st->s_group ? strlen(st->s_group) : 0);
        source *s;
        if (!at) {
            s = vpush(&k->A, &k->src);
            s->form = st->cfg.form;
            s->key = key;
            s->group = st->s_group;
            if (s->form == WS_FORM_RELIABLE_LIST) {
                if (st->s_processing) {
                    s->processing = st->s_processing;
                } else {
                    char *p = amalloc(&k->A, strlen(key) + 12);
                    sprintf(p, "%s.processing", key);
                    s->processing = p;
                }
                s->recovery = st->s_recovery;
            }
        } else {
            s = &k->src.v[at - 1];
        }
        if (st->s_dq) s->delay = st->s_dq;
        if (st->s_dead_letter) s->dead_letter = st->s_dead_letter;
        if (st->s_reply) s->reply_key = st->s_reply;
        if (st->cfg.reclaim || st->cfg.claiming) {
            if (!s->again || s->again == s->fresh) s->again = st;
            if (st->cfg.claiming && !s->fresh) s->fresh = st;
        } else if (!s->fresh) {
            s->fresh = st;
            if (!s->again) s->again = st;
        }
    }
    for (size_t i = 0; i < k->src.n; i++) {
        source *s = &k->src.v[i];
        if (!s->fresh) s->fresh = s->again;
        if (!s->again) s->again = s->fresh;
    }
    k->main = amalloc(&k->A, (k->src.n + 1) * sizeof *k->main);
    k->proc_list = amalloc(&k->A, (k->src.n + 1) * sizeof *k->proc_list);
}

/* ----- Pass 1: connections, transactions, the applied commands ------------------------------- */

static size_t conn_of(checker *k, uint64_t id)
{
    char key[24];
    int n = snprintf(key, sizeof key, "%" PRIu64, id);
    size_t at = mget(k->conn_index, key, (size_t)n);
    if (at) return at - 1;
    conn *c = vpush(&k->A, &k->conns);
    c->id = id;
    c->pid = -1;
    c->close_op = SIZE_MAX;
    mput(&k->A, k->conn_index, key, (size_t)n, k->conns.n);
    return k->conns.n - 1;
}

/* Parses a reply for the model (kept with the arena). */
static const wsr_value *parse_reply(checker *k, const char *p, size_t len)
{
    if (!len) return NULL;
    int oom = 0;
    wsr_value *v = wsr_resp_parse(p, len, NULL, &oom);
    if (!v && oom) longjmp(*k->A.oom, 1);
    aown(&k->A, v);
    return v;
}

static op *add_op(checker *k, const wsr_event *e, size_t c, const wsr_value *reply, int applied)
{
    op *o = vpush(&k->A, &k->ops);
    o->e = e;
    o->conn = c;
    o->reply = reply;
    o->applied = applied;
    return o;
}

/* Whether e runs a script (EVAL, EVALSHA, FCALL and their _RO forms). */
static int script_command(const wsr_event *e)
{
    return cmd_is(e, "EVAL") || cmd_is(e, "EVALSHA") || cmd_is(e, "EVAL_RO") ||
           cmd_is(e, "EVALSHA_RO") || cmd_is(e, "FCALL") || cmd_is(e, "FCALL_RO");
}

/* Adds the call lines c's scripts ran before `end` (their EVAL or EXEC, or NULL: none came)
 * as ops of transaction tx (+1, or 0); how many. */
static size_t add_calls(checker *k, size_t ci, const wsr_event *end, size_t tx)
{
    conn *c = &k->conns.v[ci];
    size_t n = c->calls.n;
    for (size_t i = 0; i < n; i++) {
        const wsr_event *e = c->calls.v[i];
        const wsr_value *r = parse_reply(k, e->reply, e->reply_len);
        op *o = add_op(k, e, ci, r, !verror(r));
        o->exec = end;
        o->txn = tx;
    }
    c->calls.n = 0;
    return n;
}

/* Ends c's open transaction; ran: its queue ran with EXEC's reply `r`. */
static void end_txn(checker *k, size_t ci, const wsr_event *end, const wsr_value *r, int ran)
{
    conn *c = &k->conns.v[ci];
    txn *t = c->txn ? &k->txns.v[c->txn - 1] : NULL;
    size_t n = 0;
    const wsr_value *els = velems(r, &n);
    if (ran && (!els || n != c->queue.n)) ran = 0; /* EXECABORT, a WATCH that failed */
    if (t) {
        t->end = end;
        t->ran = ran;
        t->first = ran ? k->ops.n : k->dropped.n;
        t->n = c->queue.n;
    }
    int calls = c->calls.n > 0;
    for (size_t i = 0; i < c->queue.n; i++) {
        if (ran) {
            /* what its scripts ran, where the first script stands in its queue (the lines
             * do not say which of several scripts ran which command) */
            int script = calls && script_command(c->queue.v[i]);
            if (script && t) t->n += add_calls(k, ci, end, c->txn);
            op *o = add_op(k, c->queue.v[i], ci, &els[i], 1);
            o->exec = end;
            o->txn = c->txn;
            o->ran_calls = script;
        } else {
            *vpush(&k->A, &k->dropped) = c->queue.v[i];
        }
    }
    c->queue.n = 0;
    c->in_multi = 0;
    c->doomed = 0;
    c->txn = 0;
}

/* Pass 1 over every event. */
static void applied_commands(checker *k)
{
    const wsr_recording *rec = k->rec;
    for (size_t i = 0; i < rec->n; i++) {
        const wsr_event *e = &rec->ev[i];
        if (e->kind == WSR_OPEN) {
            size_t ci = conn_of(k, e->conn);
            conn *c = &k->conns.v[ci];
            c->pid = e->pid;
            c->open_line = e->line;
            if (e->name) c->name = adup(&k->A, e->name, e->name_len);
            continue;
        }
        if (e->kind == WSR_CLOSE) {
            size_t ci = conn_of(k, e->conn);
            if (k->conns.v[ci].in_multi) end_txn(k, ci, NULL, NULL, 0);
            k->conns.v[ci].close_line = e->line;
            k->conns.v[ci].close_op = k->ops.n;
            continue;
        }
        if (e->kind == WSR_CALL) {
            conn *c = &k->conns.v[conn_of(k, e->conn)];
            *vpush(&k->A, &c->calls) = e;
            continue;
        }
        if (e->kind != WSR_CMD) continue;
        size_t ci = conn_of(k, e->conn);
        conn *c = &k->conns.v[ci];
        if (e->name) c->name = adup(&k->A, e->name, e->name_len);
        if (c->calls.n && !c->in_multi && script_command(e)) {
            /* a script the recording shows the commands of: they are its effects */
            txn *t = vpush(&k->A, &k->txns);
            t->conn = ci;
            t->script = 1;
            t->multi_op = k->ops.n;
            t->end = e;
            t->ran = 1;
            t->first = k->ops.n;
            t->n = add_calls(k, ci, e, k->txns.n);
            add_op(k, e, ci, parse_reply(k, e->reply, e->reply_len), 1)->ran_calls = 1;
            continue;
        }
        if (c->calls.n && !(c->in_multi && cmd_is(e, "EXEC"))) {
            note(k, "line %zu: call lines with no script command after them on connection "
                    "%" PRIu64 ": taken as commands of their own", c->calls.v[0]->line, c->id);
            add_calls(k, ci, NULL, 0);
        }
        const wsr_value *r = parse_reply(k, e->reply, e->reply_len);
        if (c->in_multi) {
            if (cmd_is(e, "EXEC")) {
                end_txn(k, ci, e, r, !verror(r));
                add_op(k, e, ci, r, 1);
            } else if (cmd_is(e, "DISCARD")) {
                end_txn(k, ci, e, NULL, 0);
                add_op(k, e, ci, r, 1);
            } else if (cmd_is(e, "MULTI") || cmd_is(e, "WATCH")) {
                add_op(k, e, ci, r, 1); /* refused inside MULTI, nothing changes */
            } else if (r && r->type == '+' && r->len == 6 && memcmp(r->str, "QUEUED", 6) == 0) {
                *vpush(&k->A, &c->queue) = e;
            } else {
                c->doomed = 1; /* refused at queue time: EXEC will answer EXECABORT */
                add_op(k, e, ci, r, 0);
            }
            continue;
        }
        if (cmd_is(e, "MULTI") && r && r->type == '+') {
            c->in_multi = 1;
            txn *t = vpush(&k->A, &k->txns);
            t->conn = ci;
            t->multi_op = k->ops.n;
            c->txn = k->txns.n;
        }
        add_op(k, e, ci, r, !verror(r));
    }
    for (size_t ci = 0; ci < k->conns.n; ci++) {
        if (k->conns.v[ci].in_multi) end_txn(k, ci, NULL, NULL, 0);
        if (k->conns.v[ci].calls.n) add_calls(k, ci, NULL, 0);
    }
}

/* Whether op o reads or settles a subscribed source (what makes its connection a
 * consumer's). */
static int consumer_command(const checker *k, const wsr_event *e)
{
    if (cmd_is(e, "XREADGROUP") && e->argc > 2) {
        int streams = -1;
        for (int i = 1; i < e->argc; i++)
            if (arg_is(e, i, "STREAMS")) streams = i;
        int nkeys = streams < 0 ? 0 : (e->argc - streams - 1) / 2;
        for (int i = 0; i < nkeys; i++)
            if (find_source(k, WS_FORM_STREAM, e->argv[streams + 1 + i],
                            e->argvlen[streams + 1 + i], e->argv[2], e->argvlen[2]))
                return 1;
        return 0;
    }
    if ((cmd_is(e, "XACK") || cmd_is(e, "XAUTOCLAIM") || cmd_is(e, "XCLAIM")) && e->argc > 2)
        return find_source(k, WS_FORM_STREAM, e->argv[1], e->argvlen[1], e->argv[2],
                           e->argvlen[2]) != 0;
    if ((cmd_is(e, "LMOVE") || cmd_is(e, "BLMOVE") || cmd_is(e, "RPOPLPUSH") ||
         cmd_is(e, "BRPOPLPUSH")) && e->argc > 2)
        return source_by(k, 0, e->argv[1], e->argvlen[1]) != 0;
    if ((cmd_is(e, "RPOP") || cmd_is(e, "LPOP")) && e->argc > 1)
        return source_by(k, 0, e->argv[1], e->argvlen[1]) != 0;
    if ((cmd_is(e, "BRPOP") || cmd_is(e, "BLPOP")) && e->argc > 2)
        for (int i = 1; i < e->argc - 1; i++)
            if (source_by(k, 0, e->argv[i], e->argvlen[i])) return 1;
    if (cmd_is(e, "LREM") && e->argc > 1) return source_by(k, 1, e->argv[1], e->argvlen[1]) != 0;
    if ((cmd_is(e, "ZADD") || cmd_is(e, "ZREM") || cmd_is(e, "ZRANGEBYSCORE")) && e->argc > 1)
        return source_by(k, 2, e->argv[1], e->argvlen[1]) ||
               source_by(k, 3, e->argv[1], e->argvlen[1]);
    return 0;
}

/* Whether e pushes into a source (XADD to a stream, LPUSH/RPUSH to a list): what a
 * producer does. */
static int pushes_into_source(const checker *k, const wsr_event *e)
{
    if (e->argc < 3) return 0;
    if (cmd_is(e, "XADD")) return find_source(k, WS_FORM_STREAM, e->argv[1], e->argvlen[1], NULL, 0) != 0;
    if (cmd_is(e, "LPUSH") || cmd_is(e, "RPUSH")) return source_by(k, 0, e->argv[1], e->argvlen[1]) != 0;
    return 0;
}

/* Marks the consumers' connections and groups them into processes: a connection that reads
 * or settles a subscribed source is a consumer's; so is one of the same process (peer pid)
 * that never pushes into a source -- the pool connection of a consumer that died before
 * its first settle (a producer, or wsim's own admin connection on the same pid, pushes). */
static void consumers(checker *k)
{
    for (size_t i = 0; i < k->ops.n; i++)
        if (consumer_command(k, k->ops.v[i].e)) k->conns.v[k->ops.v[i].conn].consumer = 1;
    int *producer = amalloc(&k->A, (k->conns.n + 1) * sizeof *producer);
    for (size_t i = 0; i < k->ops.n; i++)
        if (k->ops.v[i].applied && pushes_into_source(k, k->ops.v[i].e))
            producer[k->ops.v[i].conn] = 1;
    for (size_t i = 0; i < k->conns.n; i++) {
        conn *c = &k->conns.v[i];
        if (c->consumer || producer[i]) continue;
        for (size_t j = 0; j < k->conns.n && !c->consumer; j++)
            if (k->conns.v[j].consumer && j != i && k->conns.v[j].pid == c->pid) c->consumer = 2;
    }
    for (size_t i = 0; i < k->dropped.n; i++)
        if (consumer_command(k, k->dropped.v[i])) {
            size_t ci = conn_of(k, k->dropped.v[i]->conn);
            k->conns.v[ci].consumer = 1;
        }
    /* a process per pid; the connections without one make one process between them */
    size_t unknown = 0;
    for (size_t i = 0; i < k->conns.n; i++) {
        conn *c = &k->conns.v[i];
        if (!c->consumer) continue;
        if (c->pid < 0) {
            if (!unknown) unknown = ++k->nprocs;
            c->proc = unknown;
            k->note_unknown_pid = 1;
            continue;
        }
        for (size_t j = 0; j < i && !c->proc; j++)
            if (k->conns.v[j].consumer && k->conns.v[j].pid == c->pid) c->proc = k->conns.v[j].proc;
        if (!c->proc) c->proc = ++k->nprocs;
    }
}

/* ----- Pass 2: the model -------------------------------------------------------------------- */

/* "src\0id": the key of the node index. */
static size_t node_key(char *buf, size_t cap, size_t src, const char *id, size_t len)
{
    size_t n = (size_t)snprintf(buf, cap, "%zu", src) + 1;
    if (n + len > cap) len = cap - n;
    buf[n - 1] = '\0';
    memcpy(buf + n, id, len);
    return n + len;
}

static size_t node_find(checker *k, size_t src, const char *id, size_t len)
{
    char key[512];
    if (len > sizeof key - 32) return 0;
    size_t kl = node_key(key, sizeof key, src, id, len);
    return mget(k->node_index, key, kl);
}

static void set_state(checker *k, size_t n, int state, size_t line)
{
    node *x = &k->nodes.v[n];
    x->state = state;
    x->state_line = line;
}

/* A new node of source src (index); parent_dl: the delivery it copies (+1), or 0 for a
 * produced (or first seen) entry. */
static size_t node_new(checker *k, size_t src, const char *id, size_t len, const char *payload,
                       size_t plen, size_t parent_dl, int state, size_t line)
{
    node *x = vpush(&k->A, &k->nodes);
    size_t n = k->nodes.n - 1;
    x->src = src;
    x->id = adup(&k->A, id, len);
    x->id_len = len;
    x->payload = payload ? adup(&k->A, payload, plen) : NULL;
    x->payload_len = plen;
    x->parent_dl = parent_dl;
    x->line = line;
    set_state(k, n, state, line);
    if (parent_dl) {
        node *p = &k->nodes.v[k->dls.v[parent_dl - 1].node];
        x->root = p->root;
    } else {
        x->root = n + 1;
    }
    k->nodes.v[x->root - 1].head = n + 1;
    char key[512];
    if (len <= sizeof key - 32) {
        size_t kl = node_key(key, sizeof key, src, id, len);
        mput(&k->A, k->node_index, key, kl, n + 1);
    }
    return n;
}

/* A stream entry's _payload among its fields (a flat [field, value, ...]). */
static const char *field_payload(const wsr_value *fields, size_t *len)
{
    size_t n = 0;
    const wsr_value *f = velems(fields, &n);
    for (size_t i = 0; f && i + 1 < n; i += 2) {
        size_t kl;
        const char *key = vstr(&f[i], &kl);
        if (key && kl == 8 && memcmp(key, "_payload", 8) == 0) return vstr(&f[i + 1], len);
    }
    return NULL;
}

/* The same from a command's arguments (XADD's field value pairs from argument i). */
static const char *arg_payload(const wsr_event *e, int i, size_t *len)
{
    for (; i + 1 < e->argc; i += 2)
        if (e->argvlen[i] == 8 && memcmp(e->argv[i], "_payload", 8) == 0) {
            *len = e->argvlen[i + 1];
            return e->argv[i + 1];
        }
    return NULL;
}

static uint32_t be32(const unsigned char *p)
{
    return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

/* A list value's payload: the framework's binary frame ([u32 headers][u32 len name][u32 len
 * value]... then the payload; docs/engine.md "Encodings") when the value is one, else the
 * value itself, as the framework reads it. */
static const char *list_payload(const char *v, size_t len, size_t *plen)
{
    const unsigned char *p = (const unsigned char *)v;
    if (len >= 4) {
        uint32_t n = be32(p);
        size_t at = 4;
        int ok = n <= len / 8;
        for (uint32_t i = 0; ok && i < 2 * n; i++) {
            if (len - at < 4) {
                ok = 0;
                break;
            }
            uint32_t l = be32(p + at);
            at += 4;
            if (l > len - at) ok = 0;
            else at += l;
        }
        if (ok) {
            *plen = len - at;
            return v + at;
        }
    }
    *plen = len;
    return v;
}

/* Whether delivery d is in handling at op t: read before it, neither settled nor its
 * reading connection closed by then. */
static int in_handling(const dl *d, size_t t) { return d->read_op < t && t < d->end_op; }

/* The delivery a consumer's copy of payload (to source src; SIZE_MAX: any source) comes
 * from: one in handling in process proc first, then the latest settled in proc, then the
 * latest anywhere.  +1, or 0. */
static size_t copy_parent(checker *k, size_t src, const char *payload, size_t plen, size_t proc,
                          size_t t)
{
    size_t settled = 0, any = 0;
    for (size_t i = k->dls.n; i-- > 0;) {
        const dl *d = &k->dls.v[i];
        const node *x = &k->nodes.v[d->node];
        if ((src != SIZE_MAX && x->src != src) || !x->payload || x->payload_len != plen ||
            memcmp(x->payload, payload, plen) != 0)
            continue;
        if (k->conns.v[d->conn].proc == proc && in_handling(d, t)) return i + 1;
        if (!settled && k->conns.v[d->conn].proc == proc && d->settle_op) settled = i + 1;
        if (!any) any = i + 1;
    }
    return settled ? settled : any;
}

/* A delivery of node n read by op t on connection ci. */
static size_t deliver(checker *k, size_t n, size_t t, size_t ci, const wsc_stmt *sub, int how)
{
    dl *d = vpush(&k->A, &k->dls);
    d->node = n;
    d->conn = ci;
    d->proc = k->conns.v[ci].proc;
    d->sub = sub;
    d->how = how;
    d->read_op = t;
    d->read_line = k->ops.v[t].e->line;
    d->end_op = k->conns.v[ci].close_op;
    k->nodes.v[n].open_dl = k->dls.n;
    return k->dls.n - 1;
}

/* The latest delivery of node n that is not settled, or SIZE_MAX. */
static size_t open_delivery(const checker *k, size_t n)
{
    return k->nodes.v[n].open_dl ? k->nodes.v[n].open_dl - 1 : SIZE_MAX;
}

/* Delivery i settled by op t. */
static void settle(checker *k, size_t i, size_t t)
{
    dl *d = &k->dls.v[i];
    d->settle_op = t;
    d->settle_line = k->ops.v[t].e->line;
    if (k->nodes.v[d->node].open_dl == i + 1) { /* an older one may stay open under it */
        k->nodes.v[d->node].open_dl = 0;
        for (size_t j = i; j-- > 0;)
            if (k->dls.v[j].node == d->node && !k->dls.v[j].settle_op) {
                k->nodes.v[d->node].open_dl = j + 1;
                break;
            }
    }
    if (t < d->end_op) d->end_op = t;
    op *o = &k->ops.v[t];
    k->settles++;
    if (!o->settle) {
        o->settle = 1;
        o->first_settled = k->settled.n;
    }
    *vpush(&k->A, &k->settled) = i;
    o->nsettled = k->settled.n - o->first_settled;
}

/* Starts over after a FLUSHALL/FLUSHDB: what the model held is not the check's any more. */
static void start_over(checker *k, const wsr_event *e)
{
    int held = 0;
    for (size_t i = 0; i < k->nodes.n; i++)
        if (k->nodes.v[i].state != N_SETTLED && k->nodes.v[i].state != N_OUTSIDE &&
            k->nodes.v[i].state != N_TAKEN && k->nodes.v[i].state != N_DEAD) {
            set_state(k, i, N_OUTSIDE, e->line);
            held = 1;
        }
    for (size_t s = 0; s < k->src.n; s++) {
        k->main[s].n = 0;
        k->proc_list[s].n = 0;
    }
    wsi_strmap_free(k->claims);
    memset(k->claims, 0, sizeof *k->claims);
    if (held)
        note(k, "line %zu: %.*s: what the server held before is left out of the check", e->line,
             (int)e->argvlen[0], e->argv[0]);
}

/* XADD key [NOMKSTREAM] [MAXLEN|MINID [=|~] n [LIMIT c]] id field value ... */
static void model_xadd(checker *k, size_t t)
{
    op *o = &k->ops.v[t];
    const wsr_event *e = o->e;
    size_t idl;
    const char *id = vstr(o->reply, &idl);
    if (!id || e->argc < 3) return;
    int i = 2;
    for (;;) {
        if (arg_is(e, i, "NOMKSTREAM")) {
            i++;
        } else if (arg_is(e, i, "MAXLEN") || arg_is(e, i, "MINID")) {
            i++;
            if (arg_is(e, i, "=") || arg_is(e, i, "~")) i++;
            i++;
            if (arg_is(e, i, "LIMIT")) i += 2;
            note(k, "line %zu: XADD trims the stream: the entries it removed are not followed",
                 e->line);
        } else {
            break;
        }
    }
    size_t plen = 0;
    const char *payload = arg_payload(e, i + 1, &plen);
    conn *c = &k->conns.v[o->conn];
    int any = 0;
    for (size_t s = 0; s < k->src.n; s++) {
        source *src = &k->src.v[s];
        if (src->form != WS_FORM_STREAM || !arg_eq(e, 1, src->key)) continue;
        any = 1;
        /* a read that reached the recording before the XADD that served it (a proxy writes
         * lines in the order replies reached it): that entry is this one */
        size_t seen = node_find(k, s, id, idl);
        if (seen && !k->nodes.v[seen - 1].produced && !k->nodes.v[seen - 1].parent_dl) {
            k->nodes.v[seen - 1].produced = 1;
            continue;
        }
        size_t parent = 0;
        if (c->consumer && payload) {
            /* a sweep's XADD: the delay-queue member it took, on this connection first */
            size_t member = 0;
            for (size_t n = k->nodes.n; n-- > 0 && !member;) {
                node *x = &k->nodes.v[n];
                if (x->src == s && x->state == N_INFLIGHT && x->parent_dl && x->payload &&
                    x->payload_len == plen && memcmp(x->payload, payload, plen) == 0 &&
                    (x->inflight_conn == c->id || !member))
                    member = n + 1;
            }
            if (member) {
                set_state(k, member - 1, N_SETTLED, e->line); /* its copy lands */
                node_new(k, s, id, idl, payload, plen, k->nodes.v[member - 1].parent_dl,
                         N_UNREAD, e->line);
                continue;
            }
            parent = copy_parent(k, s, payload, plen, c->proc, t);
            if (!parent)
                note(k, "line %zu: a consumer's XADD to %s copies no delivery of its payload: "
                        "taken as a produced entry", e->line, src->key);
        }
        size_t n = node_new(k, s, id, idl, payload, plen, parent, N_UNREAD, e->line);
        if (parent) {
            dl *d = &k->dls.v[parent - 1];
            if (!d->retried) {
                d->retried = 1;
                d->copy_line = e->line;
            }
        } else {
            k->nodes.v[n].produced = 1;
        }
    }
    /* a copy to a dead letter ends its lineage there */
    if (!any && c->consumer && payload)
        for (size_t s = 0; s < k->src.n; s++)
            if (arg_eq(e, 1, k->src.v[s].dead_letter)) {
                size_t parent = copy_parent(k, s, payload, plen, c->proc, t);
                if (!parent) break;
                dl *d = &k->dls.v[parent - 1];
                d->retried = 1;
                d->copy_line = e->line;
                node_new(k, s, id, idl, payload, plen, parent, N_DEAD, e->line);
                any = 1;
                break;
            }
    if (!any && c->consumer && !verror(o->reply)) o->write = 1;
}

/* The node a stream read delivers: the one with that id, or a new one first seen here. */
static size_t read_node(checker *k, size_t s, const wsr_value *entry, size_t t)
{
    size_t n = 0;
    const wsr_value *parts = velems(entry, &n);
    size_t idl = 0;
    const char *id = parts && n >= 1 ? vstr(&parts[0], &idl) : NULL;
    if (!id) return SIZE_MAX;
    size_t at = node_find(k, s, id, idl);
    if (at) return at - 1;
    size_t plen = 0;
    const char *payload = n >= 2 ? field_payload(&parts[1], &plen) : NULL;
    note(k, "entries first seen when read (produced before the recording started, or by "
            "something it does not show) are checked from their delivery on");
    return node_new(k, s, id, idl, payload, plen, 0, N_UNREAD, k->ops.v[t].e->line);
}

/* XREADGROUP GROUP g c [COUNT n] [BLOCK ms] [NOACK] [CLAIM min] STREAMS k... id... */
static void model_xreadgroup(checker *k, size_t t)
{
    op *o = &k->ops.v[t];
    const wsr_event *e = o->e;
    int streams = -1, noack = 0, claim = 0;
    for (int i = 3; i < e->argc; i++) {
        if (arg_is(e, i, "STREAMS")) {
            streams = i;
            break;
        }
        if (arg_is(e, i, "NOACK")) noack = 1;
        if (arg_is(e, i, "CLAIM")) claim = 1;
    }
    if (streams < 0 || e->argc < 4) return;
    int nkeys = (e->argc - streams - 1) / 2;
    size_t n = 0;
    const wsr_value *r = velems(o->reply, &n);
    int map = o->reply && o->reply->type == '%';
    for (size_t i = 0; r && i < n; i += map ? 2 : 1) {
        const wsr_value *key, *entries;
        size_t kn;
        if (map) {
            key = &r[i];
            entries = i + 1 < n ? &r[i + 1] : NULL;
        } else {
            const wsr_value *pair = velems(&r[i], &kn);
            if (!pair || kn < 2) continue;
            key = &pair[0];
            entries = &pair[1];
        }
        size_t klen;
        const char *kname = vstr(key, &klen);
        if (!kname) continue;
        size_t s = find_source(k, WS_FORM_STREAM, kname, klen, e->argv[2], e->argvlen[2]);
        if (!s--) continue;
        int fresh = 0;
        for (int j = 0; j < nkeys; j++)
            if (e->argvlen[streams + 1 + j] == klen &&
                memcmp(e->argv[streams + 1 + j], kname, klen) == 0)
                fresh = arg_eq(e, streams + 1 + nkeys + j, ">");
        size_t ne = 0;
        const wsr_value *list = velems(entries, &ne);
        for (size_t j = 0; list && j < ne; j++) {
            size_t np = 0;
            const wsr_value *parts = velems(&list[j], &np);
            if (!parts || np < 2 || parts[1].nil) continue; /* an entry deleted while pending */
            size_t x = read_node(k, s, &list[j], t);
            if (x == SIZE_MAX) continue;
            long long count = 0;
            int claimed = claim && np >= 4 && vint(&parts[3], &count) && count > 0;
            const source *src = &k->src.v[s];
            size_t d = deliver(k, x, t, o->conn, claimed || !fresh ? src->again : src->fresh,
                               claimed ? R_CLAIM : fresh ? R_FRESH : R_REREAD);
            if (noack) {
                settle(k, d, t);
                set_state(k, x, N_SETTLED, e->line);
            } else {
                set_state(k, x, N_PENDING, e->line);
            }
        }
    }
    if (noack)
        note(k, "line %zu: XREADGROUP ... NOACK: what it delivers counts as settled at once",
             e->line);
}

/* XAUTOCLAIM key group consumer min start ... and XCLAIM key group consumer min id ... */
static void model_claim(checker *k, size_t t, int autoclaim)
{
    op *o = &k->ops.v[t];
    const wsr_event *e = o->e;
    size_t s = find_source(k, WS_FORM_STREAM, e->argv[1], e->argvlen[1], e->argv[2], e->argvlen[2]);
    if (!s--) return;
    for (int i = 5; i < e->argc; i++)
        if (arg_is(e, i, "JUSTID")) {
            note(k, "line %zu: %.*s ... JUSTID hands out no entry: not a delivery", e->line,
                 (int)e->argvlen[0], e->argv[0]);
            return;
        }
    size_t n = 0;
    const wsr_value *r = velems(o->reply, &n);
    const wsr_value *list = r;
    size_t ne = n;
    if (autoclaim) {
        list = r && n >= 2 ? velems(&r[1], &ne) : NULL;
        size_t nd = 0;
        const wsr_value *gone = r && n >= 3 ? velems(&r[2], &nd) : NULL;
        for (size_t j = 0; gone && j < nd; j++) {
            size_t idl;
            const char *id = vstr(&gone[j], &idl);
            size_t x = id ? node_find(k, s, id, idl) : 0;
            if (x) set_state(k, x - 1, N_GONE, e->line);
        }
    }
    for (size_t j = 0; list && j < ne; j++) {
        size_t np = 0;
        const wsr_value *parts = velems(&list[j], &np);
        if (!parts || np < 2 || parts[1].nil) continue;
        size_t x = read_node(k, s, &list[j], t);
        if (x == SIZE_MAX) continue;
        deliver(k, x, t, o->conn, k->src.v[s].again, R_AUTOCLAIM);
        set_state(k, x, N_PENDING, e->line);
    }
}

/* XACK key group id ... */
static void model_xack(checker *k, size_t t)
{
    op *o = &k->ops.v[t];
    const wsr_event *e = o->e;
    size_t s = find_source(k, WS_FORM_STREAM, e->argv[1], e->argvlen[1], e->argv[2], e->argvlen[2]);
    if (!s--) return;
    long long acked = 0;
    if (!vint(o->reply, &acked)) return;
    long long pending = 0;
    for (int i = 3; i < e->argc; i++) {
        size_t x = node_find(k, s, e->argv[i], e->argvlen[i]);
        if (x && k->nodes.v[x - 1].state == N_PENDING) pending++;
    }
    if (acked != pending)
        note(k, "line %zu: XACK answered :%lld where the recording shows %lld pending: the ids "
                "it names are taken as settled (by it, or by something the recording does not "
                "show, such as a script)", e->line, acked, pending);
    for (int i = 3; i < e->argc; i++) {
        size_t x = node_find(k, s, e->argv[i], e->argvlen[i]);
        if (!x-- || k->nodes.v[x].state != N_PENDING) continue;
        size_t d = open_delivery(k, x);
        if (d != SIZE_MAX) settle(k, d, t);
        set_state(k, x, N_SETTLED, e->line);
    }
}

/* XGROUP CREATE key group id|$ ...: the group's first entries; DESTROY: note. */
static void model_xgroup(checker *k, size_t t)
{
    op *o = &k->ops.v[t];
    const wsr_event *e = o->e;
    if (e->argc < 4) return;
    size_t s = find_source(k, WS_FORM_STREAM, e->argv[2], e->argvlen[2], e->argv[3], e->argvlen[3]);
    if (!s--) return;
    if (arg_is(e, 1, "CREATE") && e->argc >= 5 && !k->src.v[s].created) {
        k->src.v[s].created = 1;
        /* with $ (or an id) the entries already there are not the group's to read */
        if (arg_eq(e, 4, "0") || arg_eq(e, 4, "0-0")) return;
        for (size_t n = 0; n < k->nodes.n; n++)
            if (k->nodes.v[n].src == s && k->nodes.v[n].state == N_UNREAD)
                set_state(k, n, N_OUTSIDE, e->line);
        if (!arg_eq(e, 4, "$"))
            note(k, "line %zu: XGROUP CREATE at an id: the entries before the recording "
                    "started are not followed", e->line);
    } else if (arg_is(e, 1, "DESTROY") || arg_is(e, 1, "SETID")) {
        note(k, "line %zu: XGROUP %.*s: the group's entries are not followed from here", e->line,
             (int)e->argvlen[1], e->argv[1]);
        for (size_t n = 0; n < k->nodes.n; n++)
            if (k->nodes.v[n].src == s && k->nodes.v[n].state != N_SETTLED)
                set_state(k, n, N_OUTSIDE, e->line);
    }
}

/* XDEL key id ...: deleted entries; DEL/UNLINK of a source's key: all of them. */
static void model_delete(checker *k, size_t t)
{
    op *o = &k->ops.v[t];
    const wsr_event *e = o->e;
    long long n = 0;
    if (!vint(o->reply, &n) || n == 0) return;
    int xdel = cmd_is(e, "XDEL");
    for (size_t s = 0; s < k->src.n; s++) {
        const source *src = &k->src.v[s];
        for (int i = 1; i < e->argc; i++) {
            if (xdel && i > 1) break;
            int whole = !xdel && (arg_eq(e, i, src->key) || arg_eq(e, i, src->processing) ||
                                  arg_eq(e, i, src->delay));
            if (xdel && !arg_eq(e, 1, src->key)) break;
            if (xdel) {
                for (int j = 2; j < e->argc; j++) {
                    size_t x = node_find(k, s, e->argv[j], e->argvlen[j]);
                    if (x && k->nodes.v[x - 1].state != N_SETTLED)
                        set_state(k, x - 1, N_GONE, e->line);
                }
            } else if (whole) {
                for (size_t x = 0; x < k->nodes.n; x++) {
                    node *nd = &k->nodes.v[x];
                    if (nd->src != s || nd->state == N_SETTLED || nd->state == N_OUTSIDE ||
                        nd->state == N_DEAD || nd->state == N_TAKEN)
                        continue;
                    int there = arg_eq(e, i, src->key) ? nd->state == N_UNREAD ||
                                                             nd->state == N_PENDING
                                : arg_eq(e, i, src->processing) ? nd->state == N_PROCESSING
                                                                : nd->state == N_SCHEDULED;
                    if (there) set_state(k, x, N_GONE, e->line);
                }
                if (arg_eq(e, i, src->key)) k->main[s].n = 0;
                if (arg_eq(e, i, src->processing)) k->proc_list[s].n = 0;
            }
        }
    }
}

/* ----- Lists ------------------------------------------------------------------------------- */

/* Removes and returns the node of list v at its left (left) or right end whose value is
 * val (the end's node when it matches, else the nearest that does); SIZE_MAX when none. */
static size_t list_take(checker *k, idvec *v, int left, const char *val, size_t len, size_t line)
{
    for (size_t step = 0; step < v->n; step++) {
        size_t at = left ? step : v->n - 1 - step;
        const node *x = &k->nodes.v[v->v[at]];
        if (x->id_len != len || memcmp(x->id, val, len) != 0) continue;
        if (step)
            note(k, "line %zu: the value taken is not at the end of the list where the "
                    "recording put it: the list held values the recording does not show",
                 line);
        size_t n = v->v[at];
        memmove(&v->v[at], &v->v[at + 1], (v->n - at - 1) * sizeof *v->v);
        v->n--;
        return n;
    }
    return SIZE_MAX;
}

static void list_put(checker *k, idvec *v, int left, size_t n)
{
    vpush(&k->A, v);
    if (left) {
        memmove(&v->v[1], &v->v[0], (v->n - 1) * sizeof *v->v);
        v->v[0] = n;
    } else {
        v->v[v->n - 1] = n;
    }
}

/* A node for a value read from list source s that the model did not have (first seen). */
static size_t unseen_value(checker *k, size_t s, const char *val, size_t len, size_t line)
{
    size_t plen;
    const char *payload = list_payload(val, len, &plen);
    note(k, "values first seen when read (pushed before the recording started) are checked "
            "from their delivery on");
    return node_new(k, s, val, len, payload, plen, 0, N_UNREAD, line);
}

/* LPUSH/RPUSH key value ...: produced entries, or a consumer's requeue of a delivery, or an
 * orphan sweep putting a value back. */
static void model_push(checker *k, size_t t)
{
    op *o = &k->ops.v[t];
    const wsr_event *e = o->e;
    if (e->argc < 3 || verror(o->reply)) return;
    size_t s = source_by(k, 0, e->argv[1], e->argvlen[1]);
    conn *c = &k->conns.v[o->conn];
    int left = cmd_is(e, "LPUSH");
    if (!s--) {
        int dead = 0;
        for (size_t j = 0; j < k->src.n && !dead; j++)
            if (arg_eq(e, 1, k->src.v[j].dead_letter) && c->consumer) {
                for (int i = 2; i < e->argc; i++) {
                    size_t plen;
                    const char *payload = list_payload(e->argv[i], e->argvlen[i], &plen);
                    size_t parent = copy_parent(k, j, payload, plen, c->proc, t);
                    if (!parent) continue;
                    k->dls.v[parent - 1].retried = 1;
                    k->dls.v[parent - 1].copy_line = e->line;
                    node_new(k, j, e->argv[i], e->argvlen[i], payload, plen, parent, N_DEAD,
                             e->line);
                    dead = 1;
                }
            }
        if (!dead && c->consumer) o->write = 1;
        return;
    }
    for (int i = 2; i < e->argc; i++) {
        const char *val = e->argv[i];
        size_t len = e->argvlen[i];
        size_t plen;
        const char *payload = list_payload(val, len, &plen);
        size_t n = SIZE_MAX, parent = 0;
        if (c->consumer) {
            /* an orphan sweep putting back what it took */
            for (size_t x = k->nodes.n; x-- > 0 && n == SIZE_MAX;) {
                node *nd = &k->nodes.v[x];
                if (nd->src == s && nd->state == N_INFLIGHT && !nd->parent_dl &&
                    nd->id_len == len && memcmp(nd->id, val, len) == 0)
                    n = x;
            }
            if (n == SIZE_MAX) {
                for (size_t x = k->nodes.n; x-- > 0 && n == SIZE_MAX;) {
                    node *nd = &k->nodes.v[x];
                    if (nd->src == s && nd->state == N_INFLIGHT && nd->id_len == len &&
                        memcmp(nd->id, val, len) == 0)
                        n = x;
                }
            }
            if (n != SIZE_MAX) {
                set_state(k, n, N_UNREAD, e->line);
            } else {
                parent = copy_parent(k, s, payload, plen, c->proc, t);
                if (!parent)
                    note(k, "line %zu: a consumer's push to %s copies no delivery: taken as a "
                            "produced entry", e->line, k->src.v[s].key);
            }
        }
        if (n == SIZE_MAX && !c->consumer) {
            /* a read that reached the recording before the push that served it */
            for (size_t x = 0; x < k->nodes.n && n == SIZE_MAX; x++) {
                node *nd = &k->nodes.v[x];
                if (nd->src == s && !nd->produced && !nd->parent_dl && nd->state != N_UNREAD &&
                    nd->id_len == len && memcmp(nd->id, val, len) == 0) {
                    nd->produced = 1;
                    n = x;
                }
            }
            if (n != SIZE_MAX) continue;
        }
        if (n == SIZE_MAX) {
            n = node_new(k, s, val, len, payload, plen, parent, N_UNREAD, e->line);
            if (parent) {
                k->dls.v[parent - 1].retried = 1;
                k->dls.v[parent - 1].copy_line = e->line;
            } else {
                k->nodes.v[n].produced = 1;
            }
        }
        list_put(k, &k->main[s], left, n);
    }
}

/* LMOVE/BLMOVE src dst from to, RPOPLPUSH/BRPOPLPUSH src dst: a reliable list's read. */
static void model_move(checker *k, size_t t)
{
    op *o = &k->ops.v[t];
    const wsr_event *e = o->e;
    size_t len;
    const char *val = vstr(o->reply, &len);
    if (!val || e->argc < 3) return;
    size_t s = source_by(k, 0, e->argv[1], e->argvlen[1]);
    if (!s--) return;
    int left = (cmd_is(e, "LMOVE") || cmd_is(e, "BLMOVE")) && arg_is(e, 3, "LEFT");
    size_t n = list_take(k, &k->main[s], left, val, len, e->line);
    if (n == SIZE_MAX) n = unseen_value(k, s, val, len, e->line);
    const source *src = &k->src.v[s];
    if (!arg_eq(e, 2, src->processing)) {
        note(k, "line %zu: a move out of %s into another list than its processing list: the "
                "value is not followed", e->line, src->key);
        set_state(k, n, N_TAKEN, e->line);
        return;
    }
    list_put(k, &k->proc_list[s], 1, n);
    set_state(k, n, N_PROCESSING, e->line);
    deliver(k, n, t, o->conn, src->fresh, R_MOVE);
}

/* RPOP/LPOP key [count], BRPOP/BLPOP key ... timeout: a plain list's read. */
static void model_pop(checker *k, size_t t)
{
    op *o = &k->ops.v[t];
    const wsr_event *e = o->e;
    int blocking = cmd_is(e, "BRPOP") || cmd_is(e, "BLPOP");
    int left = cmd_is(e, "LPOP") || cmd_is(e, "BLPOP");
    const wsr_value *vals = NULL;
    wsr_value single = {0};
    size_t nv = 0;
    const char *key = e->argc > 1 ? e->argv[1] : NULL;
    size_t klen = e->argc > 1 ? e->argvlen[1] : 0;
    if (blocking) {
        const wsr_value *pair = velems(o->reply, &nv);
        if (!pair || nv < 2) return;
        key = vstr(&pair[0], &klen);
        vals = &pair[1];
        nv = 1;
    } else if (o->reply && o->reply->type == '$' && !o->reply->nil) {
        single = *o->reply;
        vals = &single;
        nv = 1;
    } else {
        vals = velems(o->reply, &nv);
    }
    if (!key) return;
    size_t s = source_by(k, 0, key, klen);
    if (!s--) return;
    for (size_t i = 0; vals && i < nv; i++) {
        size_t len;
        const char *val = vstr(&vals[i], &len);
        if (!val) continue;
        size_t n = list_take(k, &k->main[s], left, val, len, e->line);
        if (n == SIZE_MAX) n = unseen_value(k, s, val, len, e->line);
        set_state(k, n, N_TAKEN, e->line);
        deliver(k, n, t, o->conn, k->src.v[s].fresh, R_POP);
        if (k->src.v[s].form == WS_FORM_RELIABLE_LIST)
            note(k, "line %zu: %s is a reliable list read without its processing list: what "
                    "it pops is not followed", e->line, k->src.v[s].key);
    }
}

/* Whether connection c's last recovery sweep listed val (and forgets it: one LREM each). */
static int swept(conn *c, const char *val, size_t len)
{
    for (size_t i = 0; i < c->swept.n; i++)
        if (c->swept_len.v[i] == len && memcmp(c->swept.v[i], val, len) == 0) {
            c->swept.v[i] = c->swept.v[--c->swept.n];
            c->swept_len.v[i] = c->swept_len.v[--c->swept_len.n];
            return 1;
        }
    return 0;
}

/* LREM processing count value: a reliable list's settle, or an orphan sweep's take. */
static void model_lrem(checker *k, size_t t)
{
    op *o = &k->ops.v[t];
    const wsr_event *e = o->e;
    long long removed = 0;
    if (e->argc < 4 || !vint(o->reply, &removed) || removed <= 0) return;
    size_t s = source_by(k, 1, e->argv[1], e->argvlen[1]);
    if (!s--) return;
    conn *c = &k->conns.v[o->conn];
    const char *val = e->argv[3];
    size_t len = e->argvlen[3];
    idvec *pl = &k->proc_list[s];
    for (long long r = 0; r < removed; r++) {
        int sweep = swept(c, val, len);
        /* which node: a settle takes its process's delivery in handling; a sweep any other */
        size_t pick = SIZE_MAX;
        for (size_t i = 0; i < pl->n; i++) {
            const node *x = &k->nodes.v[pl->v[i]];
            if (x->id_len != len || memcmp(x->id, val, len) != 0) continue;
            size_t d = open_delivery(k, pl->v[i]);
            int mine = d != SIZE_MAX && k->dls.v[d].proc == c->proc && in_handling(&k->dls.v[d], t);
            if (pick == SIZE_MAX || (sweep ? !mine : mine)) pick = i;
        }
        if (pick == SIZE_MAX) {
            note(k, "line %zu: LREM removed a value the recording never put on %s", e->line,
                 k->src.v[s].processing);
            return;
        }
        size_t n = pl->v[pick];
        memmove(&pl->v[pick], &pl->v[pick + 1], (pl->n - pick - 1) * sizeof *pl->v);
        pl->n--;
        if (sweep) {
            set_state(k, n, N_INFLIGHT, e->line);
            k->nodes.v[n].inflight_conn = c->id;
            continue;
        }
        size_t d = open_delivery(k, n);
        if (d != SIZE_MAX) settle(k, d, t);
        set_state(k, n, N_SETTLED, e->line);
    }
}

/* "src\0value" for the claims map. */
static size_t claim_key(char *buf, size_t cap, size_t s, const char *member, size_t len)
{
    /* a recovery member is [u32 process id][u64 counter][the value] (docs/engine.md) */
    if (len < 12) return 0;
    return node_key(buf, cap, s, member + 12, len - 12);
}

/* ZADD key [NX|XX|GT|LT|CH|INCR]... score member ...: a delay queue's scheduled copy, a
 * recovery set's claim. */
static void model_zadd(checker *k, size_t t)
{
    op *o = &k->ops.v[t];
    const wsr_event *e = o->e;
    if (verror(o->reply) || e->argc < 4) return;
    size_t dq = source_by(k, 3, e->argv[1], e->argvlen[1]);
    size_t rs = source_by(k, 2, e->argv[1], e->argvlen[1]);
    int i = 2;
    while (i < e->argc && (arg_is(e, i, "NX") || arg_is(e, i, "XX") || arg_is(e, i, "GT") ||
                           arg_is(e, i, "LT") || arg_is(e, i, "CH") || arg_is(e, i, "INCR")))
        i++;
    conn *c = &k->conns.v[o->conn];
    for (; i + 1 < e->argc; i += 2) {
        const char *member = e->argv[i + 1];
        size_t mlen = e->argvlen[i + 1];
        if (dq) {
            char **parts = NULL;
            size_t *lens = NULL;
            long np = ws_delay_member_decode(member, mlen, &parts, &lens);
            if (np < 1) {
                note(k, "line %zu: a member of the delay queue %s that is not the framework's "
                        "encoding: not followed", e->line, k->src.v[dq - 1].delay);
                continue;
            }
            size_t x = node_find(k, dq - 1, parts[0], lens[0]);
            const char *payload = NULL;
            size_t plen = 0;
            for (long j = 1; j + 1 < np; j += 2)
                if (lens[j] == 8 && memcmp(parts[j], "_payload", 8) == 0) {
                    payload = parts[j + 1];
                    plen = lens[j + 1];
                }
            size_t parent = 0;
            if (x) {
                size_t d = open_delivery(k, x - 1);
                if (d == SIZE_MAX)
                    for (size_t j = k->dls.n; j-- > 0 && d == SIZE_MAX;)
                        if (k->dls.v[j].node == x - 1) d = j;
                parent = d == SIZE_MAX ? 0 : d + 1;
            }
            if (parent) {
                dl *d = &k->dls.v[parent - 1];
                d->retried = 1;
                d->copy_line = e->line;
            } else {
                note(k, "line %zu: a delay-queue member for an entry the recording never "
                        "delivered: followed as an entry of its own", e->line);
            }
            node_new(k, dq - 1, member, mlen, payload, plen, parent, N_SCHEDULED, e->line);
            ws_strings_free(parts, lens, (size_t)np);
        } else if (rs) {
            char key[512];
            size_t kl = claim_key(key, sizeof key, rs - 1, member, mlen);
            if (!kl) continue;
            mput(&k->A, k->claims, key, kl, mget(k->claims, key, kl) + 1);
            for (size_t j = k->dls.n; j-- > 0;) {
                dl *d = &k->dls.v[j];
                const node *x = &k->nodes.v[d->node];
                if (x->src == rs - 1 && !d->claimed && d->proc == c->proc && x->id_len == mlen - 12 &&
                    memcmp(x->id, member + 12, mlen - 12) == 0) {
                    d->claimed = 1;
                    break;
                }
            }
        }
    }
}

/* ZREM key member ...: a delay-queue sweep's take, a recovery member's end. */
static void model_zrem(checker *k, size_t t)
{
    op *o = &k->ops.v[t];
    const wsr_event *e = o->e;
    long long removed = 0;
    if (!vint(o->reply, &removed) || removed <= 0) return;
    size_t dq = source_by(k, 3, e->argv[1], e->argvlen[1]);
    size_t rs = source_by(k, 2, e->argv[1], e->argvlen[1]);
    if (removed < e->argc - 2)
        note(k, "line %zu: ZREM removed %lld of %d members: each is taken as removed", e->line,
             removed, e->argc - 2);
    for (int i = 2; i < e->argc; i++) {
        if (dq) {
            size_t x = node_find(k, dq - 1, e->argv[i], e->argvlen[i]);
            if (x && k->nodes.v[x - 1].state == N_SCHEDULED) {
                set_state(k, x - 1, N_INFLIGHT, e->line);
                k->nodes.v[x - 1].inflight_conn = k->conns.v[o->conn].id;
            }
        } else if (rs) {
            char key[512];
            size_t kl = claim_key(key, sizeof key, rs - 1, e->argv[i], e->argvlen[i]);
            size_t have = kl ? mget(k->claims, key, kl) : 0;
            if (have) mput(&k->A, k->claims, key, kl, have - 1);
        }
    }
}

/* ZRANGEBYSCORE recovery-set ...: an orphan sweep's list of what it will take. */
static void model_sweep_list(checker *k, size_t t)
{
    op *o = &k->ops.v[t];
    const wsr_event *e = o->e;
    if (!source_by(k, 2, e->argv[1], e->argvlen[1])) return;
    conn *c = &k->conns.v[o->conn];
    c->swept.n = c->swept_len.n = 0;
    size_t n = 0;
    const wsr_value *m = velems(o->reply, &n);
    for (size_t i = 0; m && i < n; i++) {
        size_t len;
        const char *p = vstr(&m[i], &len);
        if (!p || len < 12) continue;
        *vpush(&k->A, &c->swept) = p + 12;
        *vpush(&k->A, &c->swept_len) = len - 12;
    }
}

/* Pass 2 over the applied commands. */
static void model(checker *k)
{
    for (size_t t = 0; t < k->ops.n; t++) {
        op *o = &k->ops.v[t];
        const wsr_event *e = o->e;
        if (!o->applied) continue;
        conn *c = &k->conns.v[o->conn];
        if (cmd_is(e, "FLUSHALL") || cmd_is(e, "FLUSHDB")) start_over(k, e);
        else if (cmd_is(e, "XADD")) model_xadd(k, t);
        else if (cmd_is(e, "XREADGROUP")) model_xreadgroup(k, t);
        else if ((cmd_is(e, "XAUTOCLAIM") || cmd_is(e, "XCLAIM")) && e->argc > 5)
            model_claim(k, t, cmd_is(e, "XAUTOCLAIM"));
        else if (cmd_is(e, "XACK") && e->argc > 3) model_xack(k, t);
        else if (cmd_is(e, "XGROUP")) model_xgroup(k, t);
        else if (cmd_is(e, "XDEL") || cmd_is(e, "DEL") || cmd_is(e, "UNLINK")) {
            model_delete(k, t);
            if (c->consumer && !verror(o->reply) && !cmd_is(e, "XDEL")) o->write = 1;
        } else if (cmd_is(e, "LPUSH") || cmd_is(e, "RPUSH")) model_push(k, t);
        else if (cmd_is(e, "LMOVE") || cmd_is(e, "BLMOVE") || cmd_is(e, "RPOPLPUSH") ||
                 cmd_is(e, "BRPOPLPUSH")) {
            if (source_by(k, 0, e->argv[1], e->argvlen[1])) model_move(k, t);
            else if (c->consumer && may_write(e)) o->write = 1;
        } else if (cmd_is(e, "RPOP") || cmd_is(e, "LPOP") || cmd_is(e, "BRPOP") ||
                   cmd_is(e, "BLPOP"))
            model_pop(k, t);
        else if (cmd_is(e, "LREM") && source_by(k, 1, e->argv[1], e->argvlen[1])) model_lrem(k, t);
        else if (cmd_is(e, "ZADD") && e->argc > 1 && (source_by(k, 2, e->argv[1], e->argvlen[1]) ||
                                                     source_by(k, 3, e->argv[1], e->argvlen[1])))
            model_zadd(k, t);
        else if (cmd_is(e, "ZREM") && e->argc > 1 && (source_by(k, 2, e->argv[1], e->argvlen[1]) ||
                                                     source_by(k, 3, e->argv[1], e->argvlen[1])))
            model_zrem(k, t);
        else if (cmd_is(e, "ZRANGEBYSCORE") && e->argc > 1) model_sweep_list(k, t);
        else if ((cmd_is(e, "PEXPIRE") || cmd_is(e, "EXPIRE")) && e->argc > 1 &&
                 (source_by(k, 2, e->argv[1], e->argvlen[1]) ||
                  source_by(k, 3, e->argv[1], e->argvlen[1])))
            ; /* the framework's ttl on its own sets */
        else if (cmd_is(e, "PUBLISH") && c->consumer) {
            int dead = 0;
            for (size_t s = 0; s < k->src.n; s++) dead |= arg_eq(e, 1, k->src.v[s].dead_letter);
            if (!dead) o->write = 1;
        } else if (c->consumer && may_write(e) && !cmd_is(e, "EXEC") && !cmd_is(e, "MULTI") &&
                   !o->ran_calls && !verror(o->reply))
            o->write = 1;
        if (!o->ran_calls && script_command(e) && !k->opaque_scripts++)
            k->opaque_line = e->line;
        if (o->write) k->writes++;
    }
}

/* ----- Pass 3: attribution --------------------------------------------------------------- */

/* Adds the deliveries op t settled (not the retried ones unless with_retried; only those in
 * handling at w when w is not SIZE_MAX) to the candidates; how many it added. */
static size_t add_settled(checker *k, size_t t, int with_retried, size_t w)
{
    const op *o = &k->ops.v[t];
    size_t added = 0;
    for (size_t i = 0; i < o->nsettled; i++) {
        size_t d = k->settled.v[o->first_settled + i];
        const dl *x = &k->dls.v[d];
        if (x->retried && !with_retried) continue;
        if (w != SIZE_MAX && !(x->read_op < w)) continue;
        int dup = 0;
        for (size_t j = 0; j < added; j++) dup |= k->cand.v[k->cand.n - added + j] == d;
        if (dup) continue;
        *vpush(&k->A, &k->cand) = d;
        added++;
    }
    return added;
}

/* Files each delivery's read under its process (k->reads), once the model is done: the
 * deliveries were made in op order, so each process's list is ascending. */
static void file_reads(checker *k)
{
    k->reads = amalloc(&k->A, (k->nprocs + 1) * sizeof *k->reads);
    for (size_t d = 0; d < k->dls.n; d++) {
        idvec *v = &k->reads[k->dls.v[d].proc];
        if (!v->n || v->v[v->n - 1] != k->dls.v[d].read_op) *vpush(&k->A, v) = k->dls.v[d].read_op;
    }
}

/* Whether process proc read anything at an op strictly between lo and hi. */
static int read_between(const checker *k, size_t proc, size_t lo, size_t hi)
{
    const idvec *v = &k->reads[proc];
    size_t a = 0, b = v->n;
    while (a < b) { /* the first read after lo */
        size_t m = a + (b - a) / 2;
        if (v->v[m] <= lo) a = m + 1;
        else b = m;
    }
    return a < v->n && v->v[a] < hi;
}

/* Adds the deliveries settled, outside a MULTI, by the ops of w's pipeline (its batch on
 * its connection) after w (dir +1) or before it (dir -1); returns how many. */
static size_t add_pipeline_settles(checker *k, size_t w, int dir)
{
    const op *o = &k->ops.v[w];
    size_t added = 0;
    for (size_t i = w; dir > 0 ? i + 1 < k->ops.n : i > 0;) {
        i = dir > 0 ? i + 1 : i - 1;
        const op *x = &k->ops.v[i];
        if (x->conn != o->conn) continue;
        if (x->e->batch != o->e->batch) break;
        if (x->settle && !x->txn) added += add_settled(k, i, 0, SIZE_MAX);
    }
    return added;
}

/* Whether process proc (0: none known) has a delivery in handling at op t that is not
 * retried. */
static int proc_in_handling(const checker *k, size_t proc, size_t t)
{
    for (size_t i = 0; proc && i < k->dls.n; i++) {
        const dl *d = &k->dls.v[i];
        if (d->proc == proc && in_handling(d, t) && !d->retried) return 1;
    }
    return 0;
}

/* Whether the one delivery settled by op t had a write on t's connection between its
 * read and t, with no other settle between: its consumer writes, then settles. */
static int wrote_before_settle(const checker *k, size_t t)
{
    const op *s = &k->ops.v[t];
    const dl *d = &k->dls.v[k->settled.v[s->first_settled]];
    for (size_t j = t; j-- > d->read_op + 1;) {
        const op *x = &k->ops.v[j];
        if (x->conn != s->conn) continue;
        if (x->settle) return 0;
        if (x->write) return 1;
    }
    return 0;
}

/* Attributes write w (docs/recording.md, "Attribution"). */
static void attribute(checker *k, size_t w)
{
    const op *o = &k->ops.v[w];
    const conn *c = &k->conns.v[o->conn];
    attrib a = {.op = w, .first = k->cand.n};
    /* 1. inside a MULTI/EXEC (or a script) that settles deliveries: theirs */
    if (o->txn) {
        const txn *T = &k->txns.v[o->txn - 1];
        for (size_t i = T->first; i < T->first + T->n; i++)
            if (k->ops.v[i].settle) add_settled(k, i, 1, SIZE_MAX);
        if (k->cand.n > a.first) {
            a.how = T->script ? A_EXACT_SCRIPT : A_EXACT_MULTI;
            goto done;
        }
    }
    /* 2. a pipeline of writes, then settles: the round it settles */
    if (add_pipeline_settles(k, w, +1)) {
        a.how = A_PIPELINE;
        goto done;
    }
    /* 2'. ... or settles before it in its pipeline: its round's, sent after their settle */
    if (add_pipeline_settles(k, w, -1)) {
        a.how = A_AFTER;
        goto done;
    }
    /* 3. by connection and order: the next settle on its connection, of a delivery in
     * handling when it was sent */
    for (size_t i = w + 1; i < k->ops.n; i++) {
        const op *x = &k->ops.v[i];
        if (x->conn != o->conn || !x->settle) continue;
        size_t before = k->cand.n;
        add_settled(k, i, 0, w);
        for (size_t j = before; j < k->cand.n; j++)
            if (!in_handling(&k->dls.v[k->cand.v[j]], w)) k->cand.v[j--] = k->cand.v[--k->cand.n];
        break;
    }
    if (k->cand.n > a.first) {
        a.how = A_ORDER;
        goto done;
    }
    /* 3'. right after a settle of one delivery on its connection, no read between and no
     * settle after it: that delivery's write, sent after its settle (a consumer that acks,
     * then writes, cut short or at its last delivery) -- unless that delivery wrote before
     * its settle while another is still in handling: a consumer that writes, then settles
     * (the framework's direct mode) sends the next handler's write after the previous
     * settle, so the write is the next delivery's (rule 4). */
    for (size_t i = w; i-- > 0;) {
        const op *x = &k->ops.v[i];
        if (x->conn != o->conn) continue;
        if (x->settle && x->nsettled == 1 && !read_between(k, c->proc, i, w) &&
            !(wrote_before_settle(k, i) && proc_in_handling(k, c->proc, w)))
            add_settled(k, i, 0, SIZE_MAX);
        break;
    }
    if (k->cand.n > a.first) {
        a.how = A_AFTER;
        goto done;
    }
    /* 4. what its process had in handling */
    for (size_t i = 0; c->proc && i < k->dls.n; i++) {
        const dl *d = &k->dls.v[i];
        if (d->proc == c->proc && in_handling(d, w) && !d->retried) *vpush(&k->A, &k->cand) = i;
    }
    if (k->cand.n > a.first) {
        a.how = k->cand.n - a.first == 1 ? A_ONLY : A_SET;
        goto done;
    }
    /* 5. nothing in handling: after the last settle on its connection, if no read came
     * between */
    for (size_t i = w; i-- > 0;) {
        const op *x = &k->ops.v[i];
        if (x->conn != o->conn || !x->settle) continue;
        if (!read_between(k, c->proc, i, w)) add_settled(k, i, 0, SIZE_MAX);
        break;
    }
    a.how = k->cand.n > a.first ? A_AFTER : A_NONE;
done:
    a.n = k->cand.n - a.first;
    *vpush(&k->A, &k->attribs) = a;
}

/* How an attribution is said in a sentence. */
static const char *how_text(const attrib *a)
{
    switch (a->how) {
    case A_EXACT_MULTI: return a->n == 1 ? "inside the MULTI/EXEC that settles it"
                                         : "inside the MULTI/EXEC that settles its batch";
    case A_PIPELINE: return a->n == 1 ? "in the pipeline that settles it"
                                      : "in the pipeline that settles its round (the round's "
                                        "write: perhaps another delivery's)";
    case A_ORDER: return "on the connection that settles it next";
    case A_ONLY: return "the one delivery in handling";
    case A_SET: return "while several deliveries were in handling (perhaps another's)";
    case A_AFTER: return "after its settle";
    case A_EXACT_SCRIPT: return a->n == 1 ? "inside the script that settles it"
                                          : "inside the script that settles its batch";
    default: return "outside any delivery";
    }
}


/* Each delivery's first attribution (its first write), computed once: k->first_write. */
static void first_writes(checker *k)
{
    k->first_write = amalloc(&k->A, (k->dls.n + 1) * sizeof *k->first_write);
    for (size_t i = 0; i < k->attribs.n; i++) {
        const attrib *a = &k->attribs.v[i];
        if (a->how == A_NONE) continue;
        for (size_t j = 0; j < a->n; j++) {
            size_t d = k->cand.v[a->first + j];
            if (!k->first_write[d]) k->first_write[d] = i + 1;
        }
    }
}

/* The first attribution naming delivery d (its write), or NULL. */
static const attrib *first_write_of(const checker *k, size_t d)
{
    return k->first_write[d] ? &k->attribs.v[k->first_write[d] - 1] : NULL;
}

/* ----- Verdicts --------------------------------------------------------------------------------- */

static violation *violate(checker *k, int kind, size_t root, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
static violation *violate(checker *k, int kind, size_t root, const char *fmt, ...)
{
    char buf[1536];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    violation *v = vpush(&k->A, &k->viol);
    v->kind = kind;
    v->root = root;
    v->sentence = adup(&k->A, buf, strlen(buf));
    return v;
}

static void quote(checker *k, violation *v, size_t line)
{
    if (!line) return;
    for (size_t i = 0; i < v->lines.n; i++)
        if (v->lines.v[i] == line) return;
    *vpush(&k->A, &v->lines) = line;
    if (!v->order || line < v->order) v->order = line;
}

/* An entry's id as a sentence shows it (escaped when it holds bytes outside ASCII). */
static const char *shown(checker *k, const char *p, size_t len)
{
    for (size_t i = 0; i < len; i++)
        if ((unsigned char)p[i] < 0x20 || (unsigned char)p[i] > 0x7e) {
            size_t need = wsr_token(NULL, 0, p, len);
            char *s = amalloc(&k->A, need + 1);
            wsr_token(s, need + 1, p, len);
            return s;
        }
    return adup(&k->A, p, len);
}

/* A command's text (arena). */
static const char *cmd_text(checker *k, const wsr_event *e)
{
    char *t = wsct_command_text(e->argc, e->argv, e->argvlen);
    if (!t) longjmp(*k->A.oom, 1);
    aown(&k->A, t);
    return t;
}

static const char *root_id(checker *k, size_t root)
{
    const node *x = &k->nodes.v[root - 1];
    return shown(k, x->id, x->id_len);
}

/* doubled: two deliveries of one entry whose writes both took effect (the first two such,
 * in delivery order). */
static void check_doubled(checker *k)
{
    size_t *first = amalloc(&k->A, (k->nodes.n + 1) * sizeof *first); /* per root: +1 */
    for (size_t d = 0; d < k->dls.n; d++) {
        const attrib *a = first_write_of(k, d);
        if (!a) continue;
        size_t r = k->nodes.v[k->dls.v[d].node].root;
        if (!first[r]) {
            first[r] = d + 1;
            continue;
        }
        if (first[r] == SIZE_MAX) continue; /* reported already */
        const dl *d1 = &k->dls.v[first[r] - 1], *d2 = &k->dls.v[d];
        const attrib *fa = first_write_of(k, first[r] - 1);
        const op *w1 = &k->ops.v[fa->op], *w2 = &k->ops.v[a->op];
        violation *v = violate(
            k, 1, r,
            "entry %s's writes took effect twice: `%s` (line %zu, %s) for its delivery read "
            "at line %zu, and `%s` (line %zu, %s) for its redelivery read at line %zu",
            root_id(k, r), cmd_text(k, w1->e), w1->e->line, how_text(fa), d1->read_line,
            cmd_text(k, w2->e), w2->e->line, how_text(a), d2->read_line);
        quote(k, v, d1->read_line);
        quote(k, v, w1->e->line);
        quote(k, v, d1->settle_line);
        quote(k, v, d2->read_line);
        quote(k, v, w2->e->line);
        quote(k, v, d2->settle_line);
        first[r] = SIZE_MAX;
    }
}

/* settle-before-writes: writes attributed to a delivery after its settle. */
static void check_order(checker *k)
{
    for (size_t i = 0; i < k->attribs.n; i++) {
        const attrib *a = &k->attribs.v[i];
        if (a->how != A_AFTER) continue;
        const op *w = &k->ops.v[a->op];
        for (size_t j = 0; j < a->n; j++) {
            const dl *d = &k->dls.v[k->cand.v[a->first + j]];
            size_t r = k->nodes.v[d->node].root;
            int seen = 0;
            for (size_t x = 0; x < k->viol.n; x++)
                seen |= k->viol.v[x].kind == 4 && k->viol.v[x].root == r;
            if (seen) continue;
            violation *v = violate(
                k, 4, r,
                "the delivery of entry %s read at line %zu was settled at line %zu before "
                "`%s` (line %zu), %s: a crash between the two loses that write, the entry "
                "being settled already",
                root_id(k, r), d->read_line, d->settle_line, cmd_text(k, w->e), w->e->line,
                w->e->batch == k->ops.v[d->settle_op].e->batch &&
                        w->conn == k->ops.v[d->settle_op].conn
                    ? "a write of its round sent after it in the same pipeline"
                    : "a write sent when nothing else was in handling");
            quote(k, v, d->read_line);
            quote(k, v, d->settle_line);
            quote(k, v, w->e->line);
        }
    }
}

/* atomic-shape: an atomic subscription's delivery, its writes and its settle must be one
 * MULTI, its writes, its settle, EXEC. */
static void check_atomic(checker *k)
{
    /* an atomic delivery's segment sent unwrapped: writes in the pipeline of its settle,
     * outside any transaction (a write sent at once while it was in handling is the
     * pool's, not its segment's: not a shape of the segment) */
    for (size_t i = 0; i < k->attribs.n; i++) {
        const attrib *a = &k->attribs.v[i];
        const op *w = &k->ops.v[a->op];
        if (w->txn || (a->how != A_PIPELINE && a->how != A_AFTER)) continue;
        for (size_t j = 0; j < a->n; j++) {
            const dl *d = &k->dls.v[k->cand.v[a->first + j]];
            if (!d->sub || d->sub->cfg.mode != WS_MODE_ATOMIC) continue;
            size_t r = k->nodes.v[d->node].root;
            violation *v = violate(k, 5, r,
                                   "entry %s's delivery (read at line %zu) belongs to the atomic "
                                   "subscription %s, but its write `%s` (line %zu, %s) left in "
                                   "its flush outside MULTI/EXEC%s",
                                   root_id(k, r), d->read_line, d->sub->sub, cmd_text(k, w->e),
                                   w->e->line, how_text(a),
                                   d->settle_line ? "" : " (and it was never settled)");
            quote(k, v, d->read_line);
            quote(k, v, w->e->line);
            quote(k, v, d->settle_line);
            break;
        }
    }
    /* transactions: their settle last, one delivery's (a batch's for a batch subscription) */
    for (size_t ti = 0; ti < k->txns.n; ti++) {
        const txn *T = &k->txns.v[ti];
        if (!T->ran || !T->n) continue;
        size_t nset = 0, last_settle = 0, write_after = 0, first_set = SIZE_MAX;
        for (size_t i = T->first; i < T->first + T->n; i++) {
            const op *x = &k->ops.v[i];
            if (x->settle) {
                nset += x->nsettled;
                last_settle = i + 1;
                if (first_set == SIZE_MAX) first_set = k->settled.v[x->first_settled];
            } else if (x->write && last_settle) {
                write_after = i + 1;
            }
        }
        if (!nset || first_set == SIZE_MAX) continue;
        const dl *d = &k->dls.v[first_set];
        if (!d->sub || d->sub->cfg.mode != WS_MODE_ATOMIC) continue;
        size_t r = k->nodes.v[d->node].root;
        const wsr_event *multi = T->script ? T->end : k->ops.v[T->multi_op].e;
        if (write_after && !T->script) { /* a script runs whole: its order is its own */
            const op *w = &k->ops.v[write_after - 1];
            violation *v = violate(k, 5, r,
                                   "entry %s's atomic segment puts `%s` (line %zu) after its own "
                                   "settle (line %zu): the segment is MULTI, its commands, its "
                                   "settle, EXEC",
                                   root_id(k, r), cmd_text(k, w->e), w->e->line,
                                   k->ops.v[last_settle - 1].e->line);
            quote(k, v, multi->line);
            quote(k, v, k->ops.v[last_settle - 1].e->line);
            quote(k, v, w->e->line);
            quote(k, v, T->end ? T->end->line : 0);
        }
        int batch = d->sub->cfg.batch > 0;
        size_t distinct = 0;
        for (size_t i = T->first; i < T->first + T->n; i++)
            distinct += k->ops.v[i].nsettled;
        if (distinct > 1 && !batch) {
            violation *v = violate(k, 5, r,
                                   "the %s of line %zu settles %zu deliveries of the "
                                   "atomic subscription %s: each delivery's segment is a "
                                   "MULTI/EXEC of its own",
                                   T->script ? "script" : "transaction", multi->line, distinct,
                                   d->sub->sub);
            quote(k, v, multi->line);
            quote(k, v, k->ops.v[last_settle - 1].e->line);
        }
    }
    /* transactions with writes and no settle, whose writes belong to an atomic delivery */
    for (size_t ti = 0; ti < k->txns.n; ti++) {
        const txn *T = &k->txns.v[ti];
        if (!T->ran) continue;
        int has_settle = 0;
        for (size_t i = T->first; i < T->first + T->n; i++) has_settle |= k->ops.v[i].settle;
        if (has_settle) continue;
        for (size_t i = 0; i < k->attribs.n; i++) {
            const attrib *a = &k->attribs.v[i];
            const op *w = &k->ops.v[a->op];
            if (w->txn != ti + 1 || a->how == A_NONE) continue;
            const dl *d = a->n ? &k->dls.v[k->cand.v[a->first]] : NULL;
            if (!d || !d->sub || d->sub->cfg.mode != WS_MODE_ATOMIC ||
                k->src.v[k->nodes.v[d->node].src].form == WS_FORM_PLAIN_LIST)
                continue; /* a plain list owes no settle: its segment is MULTI, writes, EXEC */
            size_t r = k->nodes.v[d->node].root;
            size_t unit_line = T->script ? T->end->line : k->ops.v[T->multi_op].e->line;
            violation *v = violate(k, 5, r,
                                   "entry %s's atomic segment (%s at line %zu) holds `%s` but "
                                   "not its settle, %s: a crash between the %s and the settle "
                                   "applies the writes and leaves the entry to be delivered again",
                                   root_id(k, r), T->script ? "the script" : "MULTI", unit_line,
                                   cmd_text(k, w->e),
                                   d->settle_line ? "which was sent outside it" : "which never came",
                                   T->script ? "script" : "EXEC");
            quote(k, v, unit_line);
            quote(k, v, w->e->line);
            quote(k, v, T->end ? T->end->line : 0);
            quote(k, v, d->settle_line);
            break;
        }
    }
}

/* lost, unsettled: where each entry's lineage ended. */
static void check_ends(checker *k)
{
    size_t unsettled = 0;
    for (size_t r = 1; r <= k->nodes.n; r++) {
        const node *root = &k->nodes.v[r - 1];
        if (root->root != r || !root->head) continue;
        const node *h = &k->nodes.v[root->head - 1];
        const source *src = &k->src.v[h->src];
        switch (h->state) {
        case N_INFLIGHT: {
            violation *v;
            if (h->parent_dl)
                v = violate(k, 0, r,
                            "entry %s was lost: its retry's copy was taken off the delay queue "
                            "%s (line %zu) and never reached the stream %s",
                            root_id(k, r), src->delay, h->state_line, src->key);
            else
                v = violate(k, 0, r,
                            "entry %s was lost: an orphan sweep took it off the processing list "
                            "%s (line %zu) and never pushed it back to %s",
                            root_id(k, r), src->processing, h->state_line, src->key);
            quote(k, v, root->line);
            quote(k, v, h->line);
            quote(k, v, h->state_line);
            break;
        }
        case N_GONE: {
            const wsr_event *e = NULL;
            for (size_t t = 0; t < k->ops.n && !e; t++)
                if (k->ops.v[t].e->line == h->state_line) e = k->ops.v[t].e;
            violation *v = violate(k, 0, r, "entry %s was lost: `%s` (line %zu) deleted it while "
                                            "it was %s",
                                   root_id(k, r), e ? cmd_text(k, e) : "?", h->state_line,
                                   h == root ? "unsettled" : "a retry's copy");
            quote(k, v, root->line);
            quote(k, v, h->state_line);
            break;
        }
        case N_UNREAD:
        case N_PENDING:
        case N_PROCESSING:
        case N_SCHEDULED:
            if (src->form == WS_FORM_PLAIN_LIST) break; /* settles nothing (at most once) */
            if (k->opt.allow_unsettled) {
                unsettled++;
                break;
            }
            {
                violation *v = violate(k, 3, r, "entry %s is still %s at the end of the "
                                                "recording (since line %zu)",
                                       root_id(k, r), state_name(h->state), h->state_line);
                quote(k, v, root->line);
                if (h != root) quote(k, v, h->line);
                quote(k, v, h->state_line);
            }
            break;
        default: break;
        }
    }
    if (unsettled)
        note(k, "%zu entr%s still unsettled at the end of the recording (allowed)", unsettled,
             unsettled == 1 ? "y is" : "ies are");
}

/* stranded: a reliable list's value on its processing list that no recovery member names
 * and no live delivery holds. */
static void check_stranded(checker *k)
{
    for (size_t s = 0; s < k->src.n; s++) {
        const source *src = &k->src.v[s];
        if (src->form != WS_FORM_RELIABLE_LIST || !src->recovery) continue;
        const idvec *pl = &k->proc_list[s];
        for (size_t i = 0; i < pl->n; i++) {
            const node *x = &k->nodes.v[pl->v[i]];
            size_t on = 0, first = SIZE_MAX;
            for (size_t j = 0; j < pl->n; j++) {
                const node *y = &k->nodes.v[pl->v[j]];
                if (y->id_len == x->id_len && memcmp(y->id, x->id, x->id_len) == 0) {
                    on++;
                    if (first == SIZE_MAX) first = j;
                }
            }
            if (first != i) continue; /* each value once */
            char key[512];
            size_t kl = node_key(key, sizeof key, s, x->id, x->id_len);
            size_t claimed = mget(k->claims, key, kl), live = 0;
            const dl *lastd = NULL;
            for (size_t d = 0; d < k->dls.n; d++) {
                const dl *y = &k->dls.v[d];
                const node *yn = &k->nodes.v[y->node];
                if (yn->src != s || yn->id_len != x->id_len || memcmp(yn->id, x->id, x->id_len))
                    continue;
                lastd = y;
                if (y->end_op == SIZE_MAX && !y->claimed) live++;
            }
            if (on <= claimed + live) continue;
            size_t r = x->root;
            violation *v = violate(k, 2, r,
                                   "entry %s is stranded on the processing list %s: it is there "
                                   "%zu time%s, the recovery set %s names it %zu time%s and %zu "
                                   "live deliver%s hold it, so no orphan sweep will return it%s",
                                   root_id(k, r), src->processing, on, on == 1 ? "" : "s",
                                   src->recovery, claimed, claimed == 1 ? "" : "s", live,
                                   live == 1 ? "y" : "ies",
                                   lastd && !lastd->claimed
                                       ? " (the claim's ZADD after its move never came)"
                                       : " (its recovery member went without its LREM)");
            quote(k, v, k->nodes.v[r - 1].line);
            if (lastd) {
                quote(k, v, lastd->read_line);
                quote(k, v, lastd->settle_line);
                const conn *c = &k->conns.v[lastd->conn];
                quote(k, v, c->close_line);
            }
        }
    }
}

/* ----- The report ------------------------------------------------------------------------------ */

/* The event at a line (events are in line order), or NULL. */
static const wsr_event *event_at(const wsr_recording *rec, size_t line)
{
    size_t lo = 0, hi = rec->n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (rec->ev[mid].line < line) lo = mid + 1;
        else hi = mid;
    }
    return lo < rec->n && rec->ev[lo].line == line ? &rec->ev[lo] : NULL;
}

static int cmp_size(const void *a, const void *b)
{
    size_t x = *(const size_t *)a, y = *(const size_t *)b;
    return x < y ? -1 : x > y;
}

static int cmp_viol(const void *a, const void *b)
{
    const violation *x = a, *y = b;
    if (x->kind != y->kind) return x->kind - y->kind;
    return x->order < y->order ? -1 : x->order > y->order;
}

/* The quote of v: its lines in order, "NAME:LINE: TEXT" each (arena). */
static char *quote_text(checker *k, violation *v)
{
    if (v->lines.n > 1) qsort(v->lines.v, v->lines.n, sizeof *v->lines.v, cmp_size);
    wsi_buf b = {0};
    for (size_t i = 0; i < v->lines.n; i++) {
        const wsr_event *e = event_at(k->rec, v->lines.v[i]);
        if (!e) continue;
        char *t = wsr_event_text(e, 240);
        if (!t) {
            wsi_buf_free(&b);
            longjmp(*k->A.oom, 1);
        }
        wsi_buf_printf(&b, "%s:%zu: %s\n", k->rec->name, e->line, t);
        wsi_free(t);
    }
    if (b.oom) {
        wsi_buf_free(&b);
        longjmp(*k->A.oom, 1);
    }
    char *s = adup(&k->A, b.p ? b.p : "", b.len);
    wsi_buf_free(&b);
    return s;
}

/* The notes on attribution: how many writes each rule attributed (the rules that did). */
static void attribution_notes(checker *k)
{
    static const char *const said[] = {
        [A_EXACT_MULTI] = "exactly (inside the MULTI/EXEC of their settle)",
        [A_PIPELINE] = "to the round their pipeline settles",
        [A_ORDER] = "by connection and order (the next settle on their connection)",
        [A_ONLY] = "to the one delivery in handling",
        [A_SET] = "to the set of deliveries in handling (not attributable to one)",
        [A_AFTER] = "to the delivery settled just before them (sent after its settle)",
        [A_NONE] = "to no delivery (none in handling, no settle on their connection)",
        [A_EXACT_SCRIPT] = "exactly (inside the script of their settle)",
    };
    size_t by[A_EXACT_SCRIPT + 1] = {0};
    for (size_t i = 0; i < k->attribs.n; i++) by[k->attribs.v[i].how]++;
    char text[1024];
    size_t len = 0;
    for (int h = A_EXACT_MULTI; h <= A_EXACT_SCRIPT; h++) {
        if (!by[h]) continue;
        int n = snprintf(text + len, sizeof text - len, "%s%zu %s", len ? ", " : "", by[h], said[h]);
        if (n > 0 && (size_t)n < sizeof text - len) len += (size_t)n;
    }
    if (len) note(k, "writes attributed: %s", text);
    if (k->note_unknown_pid)
        note(k, "consumer connections without a peer process id (TCP, a proxy) are taken as "
                "one process");
    if (k->opaque_scripts)
        note(k, "%zu script%s ran without the recording showing %s commands (first at line "
                "%zu; a proxy cannot see them): a settle inside is not seen, and a consumer's "
                "script is taken as one write",
             k->opaque_scripts, k->opaque_scripts == 1 ? "" : "s",
             k->opaque_scripts == 1 ? "its" : "their", k->opaque_line);
}

/* Rounds: the transactions and pipelines (connection and batch) that settled something. */
static size_t count_rounds(const checker *k)
{
    size_t n = 0;
    const op *prev = NULL;
    for (size_t t = 0; t < k->ops.n; t++) {
        const op *o = &k->ops.v[t];
        if (!o->settle) continue;
        if (prev && prev->conn == o->conn &&
            (o->txn ? o->txn == prev->txn : !prev->txn && prev->e->batch == o->e->batch))
            continue;
        n++;
        prev = o;
    }
    return n;
}

static char *report(checker *k, wsc_traffic_result *out)
{
    wsi_buf b = {0};
    wsi_buf_printf(&b, "%s %s: %zu entr%s, %zu deliver%s, %zu round%s, %zu settle%s, %zu "
                       "write%s; %zu violation%s\n",
                   out->nviolations ? "FAIL" : "PASS", k->rec->name, out->entries,
                   out->entries == 1 ? "y" : "ies", out->deliveries,
                   out->deliveries == 1 ? "y" : "ies", out->rounds, out->rounds == 1 ? "" : "s",
                   out->settles, out->settles == 1 ? "" : "s", out->writes,
                   out->writes == 1 ? "" : "s", out->nviolations, out->nviolations == 1 ? "" : "s");
    for (size_t i = 0; i < out->nviolations; i++) {
        const wsc_traffic_violation *v = &out->violations[i];
        wsi_buf_printf(&b, "  %s [%s]: %s\n", v->kind, shown(k, v->entry, v->entry_len),
                       v->sentence);
        for (const char *p = v->quote, *nl; *p; p = nl + 1) {
            nl = strchr(p, '\n');
            if (!nl) break;
            wsi_buf_puts(&b, "    ");
            wsi_buf_add(&b, p, (size_t)(nl - p) + 1);
        }
    }
    if (out->nnotes) wsi_buf_puts(&b, "notes:\n");
    for (size_t i = 0; i < out->nnotes; i++) wsi_buf_printf(&b, "  %s\n", out->notes[i]);
    if (b.oom) {
        wsi_buf_free(&b);
        longjmp(*k->A.oom, 1);
    }
    char *s = adup(&k->A, b.p ? b.p : "", b.len);
    wsi_buf_free(&b);
    return s;
}

/* ----- The API ---------------------------------------------------------------------------------- */

int wsc_traffic_check(const wsr_recording *rec, const wsc_scenario *sc,
                      const wsc_traffic_options *opt, wsc_traffic_result *out)
{
    memset(out, 0, sizeof *out);
    if (builds_write_names()) return WS_ENOMEM;
    checker *k = wsi_calloc(1, sizeof *k);
    if (!k) return WS_ENOMEM;
    jmp_buf oom;
    k->A.oom = &oom;
    k->rec = rec;
    k->sc = sc;
    if (opt) k->opt = *opt;
    if (setjmp(oom)) {
        arena_free(&k->A);
        wsi_free(k);
        memset(out, 0, sizeof *out);
        return WS_ENOMEM;
    }
    sources_from(k);
    int channels = 0;
    for (size_t i = 0; i < sc->nst; i++)
        channels |= sc->st[i].kind == K_SUBSCRIBE && sc->st[i].cfg.form == WS_FORM_CHANNEL;
    if (!k->src.n && !channels) {
        arena_free(&k->A);
        wsi_free(k);
        return WS_EINVAL;
    }
    if (channels)
        note(k, "channel subscriptions settle nothing (at most once): their messages are not "
                "checked");
    k->conn_index = amap(&k->A);
    k->node_index = amap(&k->A);
    k->claims = amap(&k->A);
    applied_commands(k);
    consumers(k);
    model(k);
    file_reads(k);
    for (size_t t = 0; t < k->ops.n; t++)
        if (k->ops.v[t].write) attribute(k, t);
    first_writes(k);
    check_ends(k);
    check_doubled(k);
    check_stranded(k);
    check_order(k);
    check_atomic(k);
    attribution_notes(k);
    for (size_t i = 0; i < k->src.n; i++)
        if (k->src.v[i].form == WS_FORM_PLAIN_LIST)
            note(k, "%s is a plain list: it settles nothing (at most once), so nothing of it can be "
                    "lost or left unsettled", k->src.v[i].key);
    if (k->viol.n > 1) qsort(k->viol.v, k->viol.n, sizeof *k->viol.v, cmp_viol);
    wsc_traffic_violation *vs = amalloc(&k->A, (k->viol.n + 1) * sizeof *vs);
    for (size_t i = 0; i < k->viol.n; i++) {
        violation *v = &k->viol.v[i];
        const node *root = &k->nodes.v[v->root - 1];
        vs[i] = (wsc_traffic_violation){.kind = WSC_TRAFFIC_KINDS[v->kind], .entry = root->id,
                                        .entry_len = root->id_len, .sentence = v->sentence,
                                        .quote = quote_text(k, v)};
    }
    out->violations = vs;
    out->nviolations = k->viol.n;
    out->notes = (const char *const *)k->notes.v;
    out->nnotes = k->notes.n;
    for (size_t i = 0; i < k->nodes.n; i++) out->entries += k->nodes.v[i].root == i + 1;
    out->deliveries = k->dls.n;
    out->settles = k->settles;
    out->rounds = count_rounds(k);
    out->writes = k->writes;
    out->report = report(k, out);
    out->priv = k;
    return 0;
}

void wsc_traffic_result_free(wsc_traffic_result *res)
{
    if (!res || !res->priv) return;
    checker *k = res->priv;
    arena_free(&k->A);
    wsi_free(k);
    memset(res, 0, sizeof *res);
}
