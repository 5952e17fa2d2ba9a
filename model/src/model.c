/* model.c -- the reference model of the settlement window (model.h).
 *
 * Written from ../shared/SEMANTICS.md, docs/engine.md and the framework behaviour the
 * engine follows since 6155edb (model.h): a plain, obviously correct reading of the
 * contract, with no code from engine/src.  Three parts:
 *
 *   1. a small Redis: the keys a generated run touches, and the commands it sends,
 *      answered with Redis 7.0's replies (MULTI/EXEC with queue-time and run-time errors
 *      included), each reply kept as the text ws_reply_text prints;
 *   2. the consumer: processes, subscriptions, reads, deliveries, segments, batches, the
 *      window, flushes, direct mode, timers, reports, crashes -- each step of the run in
 *      turn, recording every round trip the consumer makes;
 *   3. the end: the final state as admin commands with their replies, and the invariant
 *      violations docs/engine.md's table says ws_sim_check reports.
 *
 * Memory: the fuzz target runs the model once per input, so it must be cheap as well as
 * plain.  Everything it makes -- strings, commands, arrays, working ones and the result's
 * alike -- comes from one arena that the result owns and mdl_result_free releases at
 * once.  Nothing is freed one by one, so a string or command, never changed once made,
 * may be shared instead of copied; an array that fills up moves to a block twice as large
 * and leaves the old one behind.  Texts are built in a buffer on the stack (common/'s
 * wsi_buf on its own room: shared plumbing, not engine code), numbers are written by hand
 * (no printf).  Out of memory aborts with "wsim: out of memory in libwsm" (wsm.h).
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "wsi_alloc.h"
#include "wsi_buf.h"
#include "wsm_model.h"
#include "wsm_int.h"

#define START_MS 1700000000000LL   /* the fake's clock when a simulation starts */
#define RETRY_HEADER "h:x-ruststream-retry-count"
#define ERR_ARITY_INCR "ERR wrong number of arguments for 'incr' command"
#define ERR_WRONGTYPE "WRONGTYPE Operation against a key holding the wrong kind of value"
#define ERR_EXECABORT "EXECABORT Transaction discarded because of previous errors."

/* ----- Memory ------------------------------------------------------------------------------ */

/* common/'s family (wsi_alloc.h): out of memory aborts with "wsim: out of memory in
 * libwsm" (wsm.h). */

#define ARENA_ALIGN 16             /* enough for every type the model stores */
#define ARENA_BLOCK 4096           /* a block (or the request, when larger): small, so that
                                      the heap a run needs stays close to what it uses --
                                      larger blocks make malloc grow the heap (brk, page
                                      faults) in most runs, as profiles of bench_fuzz show */

/* One block of the arena; its bytes follow the header. */
typedef struct ablock {
    struct ablock *prev;   /* the block before it (freed with it) */
    size_t size;           /* its bytes */
} ablock;

#define ABLOCK_HDR ((sizeof(ablock) + ARENA_ALIGN - 1) & ~(size_t)(ARENA_ALIGN - 1))

typedef struct mdl_arena {
    ablock *last;          /* the block being carved */
    char *p, *end;         /* its free bytes */
} arena;

/* A new block of at least need bytes becomes the one being carved. */
static void arena_block(arena *a, size_t need)
{
    size_t size = need > ARENA_BLOCK ? need : ARENA_BLOCK;
    ablock *b = wsi_xmalloc(ABLOCK_HDR + size);
    b->prev = a->last;
    b->size = size;
    a->last = b;
    a->p = (char *)b + ABLOCK_HDR;
    a->end = a->p + size;
}

/* n bytes, uninitialised, valid until arena_free: unaligned, for text. */
static char *abytes(arena *a, size_t n)
{
    if ((size_t)(a->end - a->p) < n) arena_block(a, n);
    char *q = a->p;
    a->p += n;
    return q;
}

/* n bytes aligned for any type the model stores. */
static void *aalloc(arena *a, size_t n)
{
    size_t pad = (size_t)-(uintptr_t)a->p & (ARENA_ALIGN - 1);
    if ((size_t)(a->end - a->p) < pad + n) {
        arena_block(a, n); /* blocks start aligned */
        pad = 0;
    }
    a->p += pad;
    return abytes(a, n);
}

static void *azalloc(arena *a, size_t n)
{
    void *q = aalloc(a, n);
    memset(q, 0, n);
    return q;
}

/* n zeroed objects of type T. */
#define ANEW(a, n, T) ((T *)azalloc((a), (size_t)(n) * sizeof(T)))

/* Room for one more element in arr (n used, *cap room, size bytes each): when it is full,
 * a block twice as large from the arena, the old one left there unused. */
static void *agrow(arena *a, void *arr, size_t n, size_t *cap, size_t size)
{
    if (n < *cap) return arr;
    size_t c = *cap ? 2 * *cap : 8;
    void *q = aalloc(a, c * size);
    if (n) memcpy(q, arr, n * size);
    *cap = c;
    return q;
}

#define GROW(a, arr, n, cap) ((arr) = agrow((a), (arr), (n), &(cap), sizeof *(arr)))

/* A new arena, itself in its first block. */
static arena *arena_new(void)
{
    arena tmp = {NULL, NULL, NULL};
    arena_block(&tmp, ARENA_BLOCK);
    arena *a = aalloc(&tmp, sizeof *a);
    *a = tmp;
    return a;
}

static void arena_free(arena *a)
{
    if (!a) return;
    ablock *b = a->last; /* a itself lives in the first block: read it before freeing */
    while (b) {
        ablock *prev = b->prev;
        wsi_free(b);
        b = prev;
    }
}

/* ----- Text --------------------------------------------------------------------------------- */

/* A text being built: common/'s wsi_buf started on its own room, so that it stays on the
 * stack while it fits (out of memory aborts: libwsm's rule). */
typedef struct sbuf {
    wsi_buf b;             /* the text (b.p, b.len) */
    char small[256];       /* most texts fit here (never copy an sbuf: b.p may point here) */
} sbuf;

static void sb_init(sbuf *b) { wsi_buf_room(&b->b, b->small, sizeof b->small); }

/* Room for n more bytes and the NUL; returns where they go (then wsi_buf_grew). */
static char *sb_room(sbuf *b, size_t n) { return wsi_buf_xreserve(&b->b, n); }

static void sb_add(sbuf *b, const char *p, size_t n) { wsi_buf_xadd(&b->b, p, n); }

static void sb_puts(sbuf *b, const char *s) { wsi_buf_xputs(&b->b, s); }

/* The same for a signed number (as %lld prints it: at most 21 bytes and the NUL). */
static size_t ll_text(char *out, long long v)
{
    if (v >= 0) return wsm_u64_text(out, (uint64_t)v);
    out[0] = '-';
    return 1 + wsm_u64_text(out + 1, 0 - (uint64_t)v);
}

static void sb_u64(sbuf *b, uint64_t v) { wsi_buf_xu64(&b->b, v); }

/* Starts b with a trace cause naming a numbered step of a subscription: "<what>N of
 * <label>" ("flush 2 of orders", "claims of read 3 of jobs"). */
static void sb_cause(sbuf *b, const char *what, uint64_t n, const char *label)
{
    sb_init(b);
    sb_puts(b, what);
    sb_u64(b, n);
    sb_puts(b, " of ");
    sb_puts(b, label);
}

static void sb_ll(sbuf *b, long long v) { wsi_buf_xll(&b->b, v); }

/* The text as a C string in the arena; b is released. */
static char *sb_take(arena *a, sbuf *b)
{
    char *s = abytes(a, b->b.len + 1);
    memcpy(s, b->b.p, b->b.len + 1);
    wsi_buf_free(&b->b);
    sb_init(b);
    return s;
}

/* Releases b without keeping its text. */
static void sb_drop(sbuf *b)
{
    wsi_buf_free(&b->b);
    sb_init(b);
}

/* A C string's copy (up to its NUL). */
static char *astrdup(arena *a, const char *s)
{
    size_t n = strlen(s);
    char *q = abytes(a, n + 1);
    memcpy(q, s, n + 1);
    return q;
}

static gen_str str_of(arena *a, const char *p, size_t n) { return wsm_str_in(abytes(a, n + 1), p, n); }

static gen_str str_dup(arena *a, gen_str s) { return str_of(a, s.p ? s.p : "", s.len); }
static int str_eq(gen_str a, gen_str b) { return a.len == b.len && memcmp(a.p, b.p, a.len) == 0; }
static int str_is(gen_str a, const char *z) { return a.len == strlen(z) && memcmp(a.p, z, a.len) == 0; }

/* Byte order, then length, as Redis compares sorted-set members. */
static int str_cmp(gen_str a, gen_str b)
{
    size_t n = a.len < b.len ? a.len : b.len;
    int c = memcmp(a.p, b.p, n);
    if (c) return c;
    return a.len < b.len ? -1 : a.len > b.len;
}

static gen_str *strs_dup(arena *a, const gen_str *v, size_t n)
{
    gen_str *d = ANEW(a, n, gen_str);
    for (size_t i = 0; i < n; i++) d[i] = str_dup(a, v[i]);
    return d;
}

/* ----- Commands ------------------------------------------------------------------------------ */

/* A command's argv has room for a power of two (at least 8) arguments: when argc reaches
 * that, a block twice as large takes over (the old one stays in the arena). */
static size_t argv_room(size_t argc)
{
    if (argc == 0) return 0;
    size_t r = 8;
    while (r < argc) r *= 2;
    return r;
}

/* Appends s itself to c's arguments. */
static void cmd_push(arena *a, gen_cmd *c, gen_str s)
{
    size_t k = (size_t)c->argc;
    if (k == argv_room(k)) {
        gen_str *v = ANEW(a, k ? 2 * k : 8, gen_str);
        if (k) memcpy(v, c->argv, k * sizeof *v);
        c->argv = v;
    }
    c->argv[c->argc++] = s;
}

/* A command, built argument by argument (these take copies). */
static void cmd_add(arena *a, gen_cmd *c, const char *p, size_t n)
{
    cmd_push(a, c, str_of(a, p, n));
}
static void cmd_addz(arena *a, gen_cmd *c, const char *s) { cmd_add(a, c, s, strlen(s)); }
static void cmd_adds(arena *a, gen_cmd *c, gen_str s) { cmd_add(a, c, s.p, s.len); }
static void cmd_addll(arena *a, gen_cmd *c, long long v)
{
    char b[24];
    cmd_add(a, c, b, ll_text(b, v));
}
/* A command's copy: its own argv, the same strings (they never change, and the run's
 * outlive the model). */
static gen_cmd cmd_dup(arena *a, const gen_cmd *c)
{
    gen_cmd d = {c->argc, NULL};
    if (c->argc) {
        d.argv = ANEW(a, argv_room((size_t)c->argc), gen_str);
        memcpy(d.argv, c->argv, (size_t)c->argc * sizeof *d.argv);
    }
    return d;
}
static int cmd_is(const gen_cmd *c, const char *name)
{
    if (c->argc < 1 || c->argv[0].len != strlen(name)) return 0;
    for (size_t i = 0; i < c->argv[0].len; i++) {
        char a = c->argv[0].p[i], b = name[i];
        if (a >= 'a' && a <= 'z') a = (char)(a - 32);
        if (a != b) return 0;
    }
    return 1;
}

static const char hexdig[] = "0123456789abcdef";

/* The trace's form of an argument (docs/engine.md "The trace"): bare when it has no byte
 * <= ' ', >= 127, quote or backslash; else quoted with \\ \" \n \r \t and \xHH (the
 * quoted form's length first, then its bytes: exactly that many, no NUL). */
static int arg_bare(const char *p, size_t n)
{
    if (n == 0) return 0;
    for (size_t i = 0; i < n; i++) {
        unsigned char uc = (unsigned char)p[i];
        /* uc - 33 wraps for uc <= ' ': one test for both ends of the printable range */
        if ((unsigned char)(uc - 33) >= 126 - 32 || uc == '"' || uc == '\'' || uc == '\\') return 0;
    }
    return 1;
}

/* The quoted form's length. */
static size_t arg_quoted_len(const char *p, size_t n)
{
    size_t len = 2;
    for (size_t i = 0; i < n; i++) {
        unsigned char uc = (unsigned char)p[i];
        if (uc == '\\' || uc == '"' || uc == '\n' || uc == '\r' || uc == '\t') len += 2;
        else if (uc < ' ' || uc >= 127) len += 4;
        else len++;
    }
    return len;
}

/* The quoted form at q; returns its end. */
static char *arg_put_quoted(char *q, const char *p, size_t n)
{
    *q++ = '"';
    for (size_t i = 0; i < n; i++) {
        unsigned char uc = (unsigned char)p[i];
        char esc = uc == '\\' ? '\\' : uc == '"' ? '"' : uc == '\n' ? 'n' : uc == '\r' ? 'r'
                 : uc == '\t' ? 't' : 0;
        if (esc) {
            *q++ = '\\';
            *q++ = esc;
        } else if (uc < ' ' || uc >= 127) {
            *q++ = '\\';
            *q++ = 'x';
            *q++ = hexdig[uc >> 4];
            *q++ = hexdig[uc & 15];
        } else {
            *q++ = (char)uc;
        }
    }
    *q++ = '"';
    return q;
}

void mdl_arg_text(char **buf, size_t *len, size_t *cap, const char *p, size_t n)
{
    int bare = arg_bare(p, n);
    size_t k = bare ? n : arg_quoted_len(p, n);
    if (*len + k + 1 > *cap) {
        size_t c = *cap ? *cap : 64;
        while (c < *len + k + 1) c *= 2;
        *buf = wsi_xrealloc(*buf, c);
        *cap = c;
    }
    char *q = *buf + *len;
    if (bare) memcpy(q, p, n);
    else arg_put_quoted(q, p, n);
    *len += k;
    (*buf)[*len] = '\0';
}

/* The command as the trace prints it: its arguments' forms, one space apart. */
static char *cmd_text(arena *a, const gen_cmd *c)
{
    size_t len = 0;
    unsigned bare = 0; /* bit i: argument i is bare (the first 32; the others are measured again) */
    for (int i = 0; i < c->argc; i++) {
        const gen_str *v = &c->argv[i];
        int b = arg_bare(v->p, v->len);
        if (b && i < 32) bare |= 1u << i;
        len += (i ? 1 : 0) + (b ? v->len : arg_quoted_len(v->p, v->len));
    }
    char *s = abytes(a, len + 1), *q = s;
    for (int i = 0; i < c->argc; i++) {
        const gen_str *v = &c->argv[i];
        if (i) *q++ = ' ';
        if (i < 32 ? (int)((bare >> i) & 1) : arg_bare(v->p, v->len)) {
            memcpy(q, v->p, v->len);
            q += v->len;
        } else {
            q = arg_put_quoted(q, v->p, v->len);
        }
    }
    *q = '\0';
    return s;
}

/* A bulk reply as ws_reply_text prints it: always quoted, with \a \b among the escapes. */
static void bulk_text(sbuf *b, const char *p, size_t n)
{
    /* most values (ids, payloads, names) have nothing to escape: one copy */
    size_t plain = 0;
    while (plain < n && (unsigned char)p[plain] >= 32 && (unsigned char)p[plain] < 127 &&
           p[plain] != '"' && p[plain] != '\\')
        plain++;
    if (plain == n) {
        char *q = sb_room(b, n + 2);
        q[0] = '"';
        memcpy(q + 1, p, n);
        q[n + 1] = '"';
        wsi_buf_grew(&b->b, n + 2);
        return;
    }
    size_t len = 2;
    for (size_t i = 0; i < n; i++) {
        unsigned char uc = (unsigned char)p[i];
        if (uc == '\\' || uc == '"' || uc == '\n' || uc == '\r' || uc == '\t' || uc == '\a' ||
            uc == '\b')
            len += 2;
        else if (uc < 32 || uc >= 127) len += 4;
        else len++;
    }
    char *q = sb_room(b, len);
    *q++ = '"';
    for (size_t i = 0; i < n; i++) {
        unsigned char uc = (unsigned char)p[i];
        char esc = uc == '\\' ? '\\' : uc == '"' ? '"' : uc == '\n' ? 'n' : uc == '\r' ? 'r'
                 : uc == '\t' ? 't' : uc == '\a' ? 'a' : uc == '\b' ? 'b' : 0;
        if (esc) {
            *q++ = '\\';
            *q++ = esc;
        } else if (uc < 32 || uc >= 127) {
            *q++ = '\\';
            *q++ = 'x';
            *q++ = hexdig[uc >> 4];
            *q++ = hexdig[uc & 15];
        } else {
            *q++ = (char)uc;
        }
    }
    *q++ = '"';
    wsi_buf_grew(&b->b, len);
}

/* ----- The small Redis ------------------------------------------------------------------ */

/* A stream entry. */
typedef struct sentry {
    char id[48];
    uint64_t ms, seq;
    size_t root;           /* the produced entry it carries (a copy carries its original's) */
    gen_str *f;            /* field, value, ... */
    size_t nf;
} sentry;

typedef struct stream {
    sentry *e;
    size_t n, cap;
    uint64_t last_ms, last_seq;
    int exists;
} stream;

/* One pending entry of the group. */
typedef struct pel {
    size_t ei;             /* index into the stream's entries */
    int consumer;          /* 1: c1, 2: c2 */
    int64_t time;          /* last delivery */
    long long count;       /* deliveries */
} pel;

typedef struct list {
    gen_str *v;            /* v[0] is the head (LPUSH side, LRANGE's first) */
    size_t n, cap;
} list;

/* A sorted-set member; delay-queue members also keep what they carry. */
typedef struct zmem {
    gen_str member;
    int64_t score;
    size_t root;           /* delay queue: the entry of the copy */
    gen_str orig;          /* delay queue: the original delivery's id */
    gen_str *copy;         /* delay queue: the copy's fields */
    size_t ncopy;
    gen_str value;         /* recovery set: the claimed value */
} zmem;

typedef struct zset {
    zmem *m;
    size_t n, cap;
    int64_t expire_at;     /* 0: no TTL */
} zset;

typedef struct kv {
    gen_str key;           /* up to the first NUL of the key it was set with (a C string) */
    gen_str val;
} kv;

/* ----- The consumer --------------------------------------------------------------------- */

enum { SEG_NONE = 0, SEG_OPEN, SEG_KEPT, SEG_DROPPED };
enum { EFF_QUEUED = 1, EFF_DIRECT, EFF_REPLY };

typedef struct eff {
    gen_cmd cmd;
    int kind;              /* EFF_* */
    int applied;           /* the server ran it (replied, or inside an EXEC that ran) */
    int error;             /* its reply was an error */
} eff;

typedef struct seg {
    size_t *dl;            /* per command: the delivery that queued it */
    size_t *ef;            /* per command: that delivery's effect */
    size_t n, cap;
    size_t owner;          /* the delivery (a batch's first member) */
    long batch;            /* its batch, or -1 */
} seg;

typedef struct batch {
    size_t *members;
    size_t n, done;
    int all_acked;
    long seg;              /* its segment, or -1 */
} batch;

typedef struct dlv {
    int sub;
    size_t entry;          /* 0: not one of ours */
    gen_str id;
    gen_str *f;            /* stream: the fields as delivered */
    size_t nf;
    gen_str member;        /* reliable list with recovery */
    unsigned inc;          /* its process */
    ws_outcome outcome;    /* 0 while outstanding */
    int64_t delay;
    int done, dead;
    int seg_state;         /* SEG_* */
    long seg;              /* its own segment, or -1 */
    long batch;            /* its batch, or -1 */
    int bound[5];          /* outputs it bound, by form */
    eff *ef;
    size_t nef, capef;
    int settle_sent, settle_failed;
    int flushed;           /* a flush carried its settle or segment */
    int in_batch_ever;     /* it was a batch member (split is not checked for those) */
    long long count;       /* a reclaim read's delivery count (XPENDING's; 0 unlisted) */
    gen_str reply;         /* a reply waiting for the handler's Ok (has_reply) */
    int has_reply;
    int rejected;          /* retried at the cap with no dead letter */
    int copy;              /* COPY_*: the runtime's copy it was settled for */
    int copy_sent;         /* ... and that copy took effect */
} dlv;

/* What the runtime makes of an outcome: what the broker settles, and the copy it
 * publishes itself after that settle (ruststream dispatch.rs settle_outcome). */
enum { COPY_NONE = 0, COPY_OWN, COPY_DEAD_LETTER };

typedef struct plan {
    ws_outcome broker;     /* WS_ACK, WS_DROP, WS_RETRY (its own requeue), WS_RETRY_AFTER
                              (its own delay: the delay queue), WS_ABANDON */
    int copy;              /* COPY_* */
    int64_t delay;         /* the copy after this long (0: at once) */
    int rejected;          /* at the cap with no dead letter */
} plan;

typedef struct owed {
    size_t dl;
    gen_cmd w[2];          /* retry writes */
    size_t nw;
    int retried;
    int held;              /* an atomic batch member's ack, until the batch is decided */
} owed;

typedef struct sub {
    int present;
    int reclaim;
    const char *label;
    const char *consumer;  /* stream: its consumer name */
    unsigned max_attempts; /* the registration's declarations */
    int dead_letter;
    int stopped;
    uint64_t reads, flushes;
    char cursor[48];       /* the reclaim scan's cursor, as XAUTOCLAIM takes it */
    uint64_t cursor_ms, cursor_seq; /* ... and as numbers */
    /* the window (gone in a crash) */
    size_t outstanding, settled;
    size_t *committed;     /* segments, in commit order */
    size_t ncom, capcom;
    owed *ow;
    size_t now_, capow;
    size_t *flight;        /* outstanding deliveries */
    size_t nflight, capflight;
    /* reports */
    int report_waiting;
    size_t r_commands, r_settles, r_failed;
    const char *r_error;   /* the arena's, or a literal */
    /* channel */
    gen_str *buf;
    size_t nbuf, capbuf;
    size_t waiting;        /* messages buffered behind the last one handed out, as of that
                              read (pubsub.rs round_stream: window.yielded(rx.len())) */
    uint64_t sub_rts;      /* the subscriber connection's round trips */
} sub;

typedef struct timer {
    int64_t due;
    uint64_t order;
    size_t dl;
    gen_cmd cmd;
} timer;

typedef struct model {
    const gen_run *run;
    const gen_config *cfg;
    unsigned quirks;
    int no_text;           /* mdl_predict_args: the commands' arguments only */
    mdl_result *out;
    arena *a;              /* out->arena: everything the model makes */
    size_t caprts, capflushes, capreads, capstate, capviol; /* room of out's arrays */
    size_t capfcmds;       /* ... of the last flush's commands */
    size_t capread;        /* ... of the last read's entries and ids */
    const char *count_text; /* cfg->count in decimal (the arena's) */
    size_t step;           /* the step being followed */
    int64_t now;
    /* keys */
    stream ks, outs, dlqs; /* k, out.s, the dead letter */
    pel *pl;               /* the group's pending list, by entry index */
    size_t npl, cappl;
    size_t delivered;      /* the group's last-delivered: entries [0, delivered) */
    list kl, kproc, outl, log, dlql; /* ..., the dead letter of a list form */
    zset dq, claims;
    kv *kvs;               /* strings */
    size_t nkv, capkv;
    /* the consumer */
    int alive;
    unsigned inc;
    uint64_t reader_rts, window_rts;
    sub subs[2];
    dlv *dl;
    size_t ndl, capdl;
    seg *segs;
    size_t nsegs, capsegs;
    batch *bts;
    size_t nbts, capbts;
    timer *tm;
    size_t ntm, captm;
    uint64_t timer_order;
    uint32_t pid;          /* this process's id, read off its first recovery member */
    int pid_known;
    uint64_t nclaimed;     /* recovery members this process made (their counter) */
    size_t count;          /* COUNT of the reads */
    /* produced entries */
    size_t nproduced;      /* so far */
    gen_str *payloads;     /* per entry of the run (index entry-1): its payload */
    gen_str *frames;       /* ... and its list or channel frame */
    size_t nentries;
} model;

/* ----- Keys ----------------------------------------------------------------------------- */

static kv *kv_find(model *m, gen_str key)
{
    for (size_t i = 0; i < m->nkv; i++)
        if (str_eq(key, m->kvs[i].key)) return &m->kvs[i];
    return NULL;
}

/* The key's type: 's' string, 'l' list, 'x' stream, 'z' sorted set, 0 none. */
static int key_type(model *m, gen_str key)
{
    if (str_is(key, "k")) {
        if (m->cfg->form == WS_FORM_STREAM) return m->ks.exists ? 'x' : 0;
        if (m->cfg->form == WS_FORM_CHANNEL) return 0;
        return m->kl.n ? 'l' : 0;
    }
    if (str_is(key, "k.processing")) return m->kproc.n ? 'l' : 0;
    if (str_is(key, "out.l")) return m->outl.n ? 'l' : 0;
    if (str_is(key, "log")) return m->log.n ? 'l' : 0;
    if (str_is(key, "out.s")) return m->outs.exists ? 'x' : 0;
    if (str_is(key, GEN_DEAD_LETTER)) return m->dlqs.exists ? 'x' : m->dlql.n ? 'l' : 0;
    if (str_is(key, "k:delayed")) {
        if (m->dq.expire_at && m->now > m->dq.expire_at) { /* Redis: expired once now > when */
            m->dq.n = 0;
            m->dq.expire_at = 0;
        }
        return m->dq.n ? 'z' : 0;
    }
    if (str_is(key, "k:claims")) return m->claims.n ? 'z' : 0;
    if (kv_find(m, key)) return 's';
    return 0;
}

static list *list_of(model *m, gen_str key)
{
    if (str_is(key, "k")) return &m->kl;
    if (str_is(key, "k.processing")) return &m->kproc;
    if (str_is(key, "out.l")) return &m->outl;
    if (str_is(key, "log")) return &m->log;
    if (str_is(key, GEN_DEAD_LETTER)) return &m->dlql;
    return NULL;
}


static kv *kv_set(model *m, gen_str key, gen_str val)
{
    kv *k = kv_find(m, key);
    if (!k) {
        GROW(m->a, m->kvs, m->nkv, m->capkv);
        k = &m->kvs[m->nkv++];
        k->key = str_of(m->a, key.p, strlen(key.p));
    }
    k->val = str_dup(m->a, val);
    return k;
}

static void list_lpush(model *m, list *l, gen_str v)
{
    GROW(m->a, l->v, l->n, l->cap);
    memmove(&l->v[1], &l->v[0], l->n * sizeof *l->v);
    l->v[0] = str_dup(m->a, v);
    l->n++;
}

static void list_rpush(model *m, list *l, gen_str v)
{
    GROW(m->a, l->v, l->n, l->cap);
    l->v[l->n++] = str_dup(m->a, v);
}

/* Takes the tail (RPOP side). */
static gen_str list_rpop(list *l)
{
    gen_str v = l->v[--l->n];
    return v;
}

/* LREM key 1 v: the first occurrence from the head. */
static int list_lrem1(list *l, gen_str v)
{
    for (size_t i = 0; i < l->n; i++)
        if (str_eq(l->v[i], v)) {
            memmove(&l->v[i], &l->v[i + 1], (l->n - i - 1) * sizeof *l->v);
            l->n--;
            return 1;
        }
    return 0;
}

/* XADD <key> * ...: the next id on the clock, as Redis makes it. */
static sentry *stream_add(model *m, stream *s, const gen_str *f, size_t nf, size_t root)
{
    uint64_t now = (uint64_t)m->now, ms, seq;
    if (now > s->last_ms) {
        ms = now;
        seq = 0;
    } else {
        ms = s->last_ms;
        seq = s->last_seq + 1;
    }
    s->last_ms = ms;
    s->last_seq = seq;
    s->exists = 1;
    GROW(m->a, s->e, s->n, s->cap);
    sentry *e = &s->e[s->n++];
    memset(e, 0, sizeof *e);
    size_t k = wsm_u64_text(e->id, ms);
    e->id[k++] = '-';
    wsm_u64_text(e->id + k, seq);
    e->ms = ms;
    e->seq = seq;
    e->root = root;
    e->f = strs_dup(m->a, f, nf);
    e->nf = nf;
    return e;
}

static long stream_find(const stream *s, gen_str id)
{
    for (size_t i = 0; i < s->n; i++)
        if (str_is(id, s->e[i].id)) return (long)i;
    return -1;
}

static long pel_find(model *m, size_t ei)
{
    for (size_t i = 0; i < m->npl; i++)
        if (m->pl[i].ei == ei) return (long)i;
    return -1;
}

static void pel_add(model *m, size_t ei, int consumer)
{
    long at = pel_find(m, ei);
    if (at >= 0) {
        m->pl[at].consumer = consumer;
        m->pl[at].time = m->now;
        m->pl[at].count++;
        return;
    }
    GROW(m->a, m->pl, m->npl, m->cappl);
    size_t i = m->npl;
    while (i > 0 && m->pl[i - 1].ei > ei) i--;
    memmove(&m->pl[i + 1], &m->pl[i], (m->npl - i) * sizeof *m->pl);
    m->pl[i] = (pel){ei, consumer, m->now, 1};
    m->npl++;
}

static void pel_del(model *m, size_t at)
{
    memmove(&m->pl[at], &m->pl[at + 1], (m->npl - at - 1) * sizeof *m->pl);
    m->npl--;
}

static zmem *zset_find(zset *z, gen_str member)
{
    for (size_t i = 0; i < z->n; i++)
        if (str_eq(z->m[i].member, member)) return &z->m[i];
    return NULL;
}

/* Adds or rescores; 1 when the member is new. */
static int zset_add(model *m, zset *z, gen_str member, int64_t score, zmem **out)
{
    zmem *e = zset_find(z, member);
    if (e) {
        e->score = score;
        *out = e;
        return 0;
    }
    GROW(m->a, z->m, z->n, z->cap);
    e = &z->m[z->n++];
    memset(e, 0, sizeof *e);
    e->member = str_dup(m->a, member);
    e->score = score;
    *out = e;
    return 1;
}

static int zset_rem(zset *z, gen_str member)
{
    for (size_t i = 0; i < z->n; i++)
        if (str_eq(z->m[i].member, member)) {
            memmove(&z->m[i], &z->m[i + 1], (z->n - i - 1) * sizeof *z->m);
            z->n--;
            if (z->n == 0) z->expire_at = 0;
            return 1;
        }
    return 0;
}

/* The members in score order, ties by member bytes: indexes into z->m. */
static size_t *zset_order(model *m, const zset *z)
{
    size_t *o = ANEW(m->a, z->n, size_t);
    for (size_t i = 0; i < z->n; i++) o[i] = i;
    for (size_t i = 1; i < z->n; i++) {
        size_t v = o[i], j = i;
        while (j > 0) {
            const zmem *a = &z->m[o[j - 1]], *b = &z->m[v];
            int after = a->score > b->score ||
                        (a->score == b->score && str_cmp(a->member, b->member) > 0);
            if (!after) break;
            o[j] = o[j - 1];
            j--;
        }
        o[j] = v;
    }
    return o;
}

/* ----- Encodings (the framework's: envelope.rs, delay.rs, recovery.rs) ---------------------- */

/* A message travels in stream form: "_payload", payload, then "h:<name>", value, ... */

static void sb_u32(sbuf *b, uint32_t v)
{
    char t[4] = {(char)(v >> 24), (char)(v >> 16), (char)(v >> 8), (char)v};
    sb_add(b, t, 4);
}

static uint32_t u32_at(const char *p)
{
    const unsigned char *u = (const unsigned char *)p;
    return (uint32_t)u[0] << 24 | (uint32_t)u[1] << 16 | (uint32_t)u[2] << 8 | (uint32_t)u[3];
}

/* A header field: "h:" and a name (at least one byte: "h:" alone is no header). */
static int is_header(gen_str f) { return f.len > 2 && f.p[0] == 'h' && f.p[1] == ':'; }

/* The binary frame of a message in stream form (envelope.rs binary_encode): [u32 header
 * count], per header [u32 name length][name][u32 value length][value], then the payload
 * to the end; all u32 big-endian.  Fields that are neither the payload nor a header are
 * not the message's and are left out. */
static void frame_into(sbuf *b, const gen_str *f, size_t nf)
{
    uint32_t nh = 0;
    gen_str payload = {"", 0};
    for (size_t i = 0; i + 1 < nf; i += 2) {
        if (str_is(f[i], "_payload")) payload = f[i + 1];
        else if (is_header(f[i])) nh++;
    }
    sb_u32(b, nh);
    for (size_t i = 0; i + 1 < nf; i += 2) {
        if (!is_header(f[i])) continue;
        sb_u32(b, (uint32_t)(f[i].len - 2));
        sb_add(b, f[i].p + 2, f[i].len - 2);
        sb_u32(b, (uint32_t)f[i + 1].len);
        sb_add(b, f[i + 1].p, f[i + 1].len);
    }
    sb_add(b, payload.p, payload.len);
}

static gen_str frame_of(model *m, const gen_str *f, size_t nf)
{
    sbuf b;
    sb_init(&b);
    frame_into(&b, f, nf);
    gen_str s = {NULL, b.b.len};
    s.p = sb_take(m->a, &b);
    return s;
}

/* A header's field name: "h:" and the header's name. */
static gen_str header_field(model *m, const gen_str *hname)
{
    gen_str f;
    f.len = 2 + hname->len;
    f.p = abytes(m->a, f.len + 1);
    memcpy(f.p, "h:", 2);
    memcpy(f.p + 2, hname->p, hname->len);
    f.p[f.len] = '\0';
    return f;
}

/* What a producer (and a handler's publish) sends to a list or channel: the binary frame,
 * headers or not -- the framework's publishers frame every value (pubsub.rs, list.rs). */
static gen_str frame(model *m, gen_str payload, const gen_str *hname, const gen_str *hval)
{
    if (!hname || !hname->p) {
        gen_str f[2] = {{"_payload", 8}, payload};
        return frame_of(m, f, 2);
    }
    gen_str f[4] = {{"_payload", 8}, payload, header_field(m, hname), *hval};
    return frame_of(m, f, 4);
}

/* UTF-8 as its bytes say (a lead byte, then its continuation bytes); the framework's
 * decoder refuses a header name that is not. */
static int utf8_valid(const char *p, size_t n)
{
    size_t i = 0;
    while (i < n) {
        unsigned char c = (unsigned char)p[i++];
        size_t more = c < 0x80 ? 0 : (c >> 5) == 6 ? 1 : (c >> 4) == 14 ? 2 : (c >> 3) == 30 ? 3 : 9;
        if (more == 9 || more > n - i) return 0;
        while (more--)
            if (((unsigned char)p[i++] >> 6) != 2) return 0;
    }
    return 1;
}

/* A frame at s in stream form ("_payload" first, then the headers in frame order), or
 * NULL when s is not one (*nf the count). */
static gen_str *frame_parse(model *m, gen_str s, size_t *nf)
{
    *nf = 0;
    if (s.len < 4) return NULL;
    uint32_t nh = u32_at(s.p);
    if ((uint64_t)nh * 8 > s.len - 4) return NULL; /* a header takes 8 bytes at least */
    gen_str *f = ANEW(m->a, 2 + 2 * (size_t)nh, gen_str);
    size_t at = 4;
    for (uint32_t h = 0; h < nh; h++) {
        if (s.len - at < 4) return NULL;
        size_t nl = u32_at(s.p + at);
        at += 4;
        if (nl > s.len - at || !utf8_valid(s.p + at, nl)) return NULL;
        gen_str name = {s.p + at, nl};
        f[2 + 2 * h] = header_field(m, &name);
        at += nl;
        if (s.len - at < 4) return NULL;
        size_t vl = u32_at(s.p + at);
        at += 4;
        if (vl > s.len - at) return NULL;
        f[3 + 2 * h] = str_of(m->a, s.p + at, vl);
        at += vl;
    }
    f[0] = (gen_str){"_payload", 8};
    f[1] = str_of(m->a, s.p + at, s.len - at);
    *nf = 2 + 2 * (size_t)nh;
    return f;
}

/* A list value or channel message as the framework decodes it: its frame, or, when it
 * is not one, the whole value as a payload without headers. */
static gen_str *decode_value(model *m, gen_str v, size_t *nf)
{
    gen_str *f = frame_parse(m, v, nf);
    if (f) return f;
    f = ANEW(m->a, 2, gen_str);
    f[0] = (gen_str){"_payload", 8};
    f[1] = v;
    *nf = 2;
    return f;
}

/* The delay-queue member of a retry_after (delay.rs encode_member): [u32 id length][the
 * entry id][the binary frame of the copy]. */
static gen_str dq_member(model *m, gen_str id, const gen_str *f, size_t nf)
{
    sbuf b;
    sb_init(&b);
    sb_u32(&b, (uint32_t)id.len);
    sb_add(&b, id.p, id.len);
    frame_into(&b, f, nf);
    gen_str s = {NULL, b.b.len};
    s.p = sb_take(m->a, &b);
    return s;
}

/* A delay-queue member's id (*id) and copy in stream form, or NULL when it is not one. */
static gen_str *dq_decode(model *m, gen_str s, gen_str *id, size_t *nf)
{
    *nf = 0;
    if (s.len < 4) return NULL;
    size_t idl = u32_at(s.p);
    if (idl > s.len - 4) return NULL;
    *id = str_of(m->a, s.p + 4, idl);
    return frame_parse(m, (gen_str){s.p + 4 + idl, s.len - 4 - idl}, nf);
}

/* A reliable list's recovery member (recovery.rs claim_member): [u32 process id][u64
 * per-process counter][the value], big-endian. */
#define MEMBER_PREFIX 12
static gen_str recovery_member(model *m, uint32_t pid, uint64_t counter, gen_str value)
{
    sbuf b;
    sb_init(&b);
    sb_u32(&b, pid);
    sb_u32(&b, (uint32_t)(counter >> 32));
    sb_u32(&b, (uint32_t)counter);
    sb_add(&b, value.p, value.len);
    gen_str s = {NULL, b.b.len};
    s.p = sb_take(m->a, &b);
    return s;
}

/* The retry counter a delivery carries (header x-ruststream-retry-count, its first
 * field): missing, empty, longer than 18 digits or not decimal counts as 0. */
static long long retries_of(const dlv *d)
{
    for (size_t i = 0; i + 1 < d->nf; i += 2) {
        if (!str_is(d->f[i], RETRY_HEADER)) continue;
        const gen_str *v = &d->f[i + 1];
        if (v->len == 0 || v->len > 18) return 0;
        long long n = 0;
        for (size_t k = 0; k < v->len; k++) {
            if (v->p[k] < '0' || v->p[k] > '9') return 0;
            n = n * 10 + (v->p[k] - '0');
        }
        return n;
    }
    return 0;
}

/* A copy of a delivery's message (convert.rs fields_for_publish): "_payload" and its
 * payload ("" when it has none), then its h:* fields as delivered -- other fields are
 * dropped -- with, when `raise`, the retry counter set to its value + 1 in place, or
 * appended when the delivery has none. */
static gen_str *copy_fields(model *m, const dlv *d, int raise, size_t *nout)
{
    gen_str payload = {"", 0};
    size_t nh = 0;
    for (size_t i = 0; i + 1 < d->nf; i += 2) {
        if (str_is(d->f[i], "_payload")) payload = d->f[i + 1];
        else if (is_header(d->f[i])) nh++;
    }
    gen_str *f = ANEW(m->a, 4 + 2 * nh, gen_str);
    size_t n = 0;
    char num[24];
    gen_str next = {num, ll_text(num, retries_of(d) + 1)};
    next = str_dup(m->a, next);
    int has = 0;
    f[n++] = (gen_str){"_payload", 8};
    f[n++] = payload;
    for (size_t i = 0; i + 1 < d->nf; i += 2) {
        if (!is_header(d->f[i])) continue;
        f[n++] = d->f[i]; /* strings never change: sharing is copying */
        if (raise && str_is(d->f[i], RETRY_HEADER)) {
            f[n++] = next;
            has = 1;
        } else {
            f[n++] = d->f[i + 1];
        }
    }
    if (raise && !has) {
        f[n++] = (gen_str){RETRY_HEADER, sizeof RETRY_HEADER - 1};
        f[n++] = next;
    }
    *nout = n;
    return f;
}

/* Sets field `name` of a field list to v: every pair of that name takes it, or it is
 * appended (subscriber.rs insert_meta_header). */
static gen_str *set_field(model *m, const gen_str *f, size_t nf, const char *name, long long v,
                          size_t *nout)
{
    gen_str *o = ANEW(m->a, nf + 2, gen_str);
    char num[24];
    gen_str val = {num, ll_text(num, v)};
    val = str_dup(m->a, val);
    int found = 0;
    for (size_t i = 0; i < nf; i++) {
        o[i] = f[i];
        if (i % 2 == 1 && str_is(f[i - 1], name)) {
            o[i] = val;
            found = 1;
        }
    }
    *nout = nf;
    if (!found) {
        o[nf] = (gen_str){(char *)name, strlen(name)};
        o[nf + 1] = val;
        *nout = nf + 2;
    }
    return o;
}

/* ----- Replies ------------------------------------------------------------------------------ */

typedef struct reply {
    const char *text;      /* as ws_reply_text prints it (the arena's, or a literal) */
    int error;             /* an error reply */
    size_t inner_errors;   /* EXEC: errors inside its array */
    const char *first_inner; /* EXEC: the first of them (no '-') */
    int exec_ran;          /* EXEC: answered an array */
    int *elem_error;       /* EXEC: per queued command */
    size_t nelem;
} reply;

static reply r_text(const char *t, int error)
{
    reply r = {0};
    r.text = t;
    r.error = error;
    return r;
}

static reply r_int(model *m, long long v)
{
    char b[24];
    b[0] = ':';
    size_t n = 1 + ll_text(b + 1, v);
    return r_text(str_of(m->a, b, n).p, 0);
}

static reply r_bulk(model *m, const char *p, size_t n)
{
    sbuf b;
    sb_init(&b);
    bulk_text(&b, p, n);
    return r_text(sb_take(m->a, &b), 0);
}

/* An error reply: '-' and msg (up to its NUL). */
static reply r_err(model *m, const char *msg)
{
    size_t n = strlen(msg);
    char *t = abytes(m->a, n + 2);
    t[0] = '-';
    memcpy(t + 1, msg, n + 1);
    return r_text(t, 1);
}

/* A command Redis refuses at queue time inside MULTI: the generated runs only make one,
 * INCR without its key. */
static int queue_time_error(const gen_cmd *c)
{
    return cmd_is(c, "INCR") && c->argc != 2;
}

static size_t root_of_fields(model *m, const gen_str *f, size_t nf);

/* Runs one command (outside MULTI) on the small Redis. */
static reply exec_cmd(model *m, const gen_cmd *c)
{
    const gen_str *a = c->argv;
    int n = c->argc;
    if (cmd_is(c, "RPUSH") || cmd_is(c, "LPUSH")) {
        int t = key_type(m, a[1]);
        if (t && t != 'l') return r_err(m, ERR_WRONGTYPE);
        list *l = list_of(m, a[1]);
        if (!l) return r_err(m, "ERR model: unknown list");
        for (int i = 2; i < n; i++) {
            if (cmd_is(c, "RPUSH")) list_rpush(m, l, a[i]);
            else list_lpush(m, l, a[i]);
        }
        return r_int(m, (long long)l->n);
    }
    if (cmd_is(c, "INCR")) {
        if (n != 2) return r_err(m, ERR_ARITY_INCR);
        int t = key_type(m, a[1]);
        if (t && t != 's') return r_err(m, ERR_WRONGTYPE);
        kv *k = kv_find(m, a[1]);
        long long v = k ? strtoll(k->val.p, NULL, 10) : 0;
        char b[24];
        size_t bn = ll_text(b, v + 1);
        kv_set(m, a[1], (gen_str){b, bn});
        return r_int(m, v + 1);
    }
    if (cmd_is(c, "SET")) {
        kv_set(m, a[1], a[2]);
        return r_text("+OK", 0);
    }
    if (cmd_is(c, "GET")) {
        kv *k = kv_find(m, a[1]);
        if (!k) return r_text("$-1", 0);
        return r_bulk(m, k->val.p, k->val.len);
    }
    if (cmd_is(c, "PUBLISH")) {
        /* the channel subscription hears k (a runtime copy) while its process lives;
         * nobody subscribes to the outputs */
        if (m->cfg->form != WS_FORM_CHANNEL || !str_is(a[1], "k") || !m->alive) return r_int(m, 0);
        sub *s = &m->subs[0];
        GROW(m->a, s->buf, s->nbuf, s->capbuf);
        s->buf[s->nbuf++] = str_dup(m->a, a[2]);
        return r_int(m, 1);
    }
    if (cmd_is(c, "XGROUP")) /* the subscription's group, made by the world's setup */
        return r_err(m, "BUSYGROUP Consumer Group name already exists");
    if (cmd_is(c, "XADD")) {
        stream *s = str_is(a[1], "k") ? &m->ks : str_is(a[1], GEN_DEAD_LETTER) ? &m->dlqs : &m->outs;
        size_t root = s == &m->ks ? root_of_fields(m, &a[3], (size_t)n - 3) : 0;
        sentry *e = stream_add(m, s, &a[3], (size_t)n - 3, root);
        return r_bulk(m, e->id, strlen(e->id));
    }
    if (cmd_is(c, "ZRANGEBYSCORE")) { /* key min max LIMIT 0 128 */
        zset *z = str_is(a[1], "k:delayed") ? &m->dq : &m->claims;
        key_type(m, a[1]); /* expires the delay queue when due */
        long long lo = strtoll(a[2].p, NULL, 10), hi = strtoll(a[3].p, NULL, 10);
        size_t *o = zset_order(m, z);
        sbuf b;
        sb_init(&b);
        sb_puts(&b, "[");
        for (size_t i = 0, k = 0; i < z->n && k < 128; i++) {
            const zmem *e = &z->m[o[i]];
            if (e->score < lo || e->score > hi) continue;
            if (k++) sb_puts(&b, ", ");
            bulk_text(&b, e->member.p, e->member.len);
        }
        sb_puts(&b, "]");
        return r_text(sb_take(m->a, &b), 0);
    }
    if (cmd_is(c, "ZADD")) {
        zset *z = str_is(a[1], "k:delayed") ? &m->dq : &m->claims;
        key_type(m, a[1]); /* expires the delay queue when due */
        zmem *e;
        int added = zset_add(m, z, a[3], strtoll(a[2].p, NULL, 10), &e);
        if (z == &m->dq && added) {
            /* a delay-queue member carries the original's id and the copy's fields */
            size_t np;
            gen_str *parts = dq_decode(m, a[3], &e->orig, &np);
            if (parts) {
                e->copy = parts;
                e->ncopy = np;
                e->root = root_of_fields(m, e->copy, e->ncopy);
            }
        }
        return r_int(m, added);
    }
    if (cmd_is(c, "PEXPIRE")) {
        if (!key_type(m, a[1])) return r_int(m, 0);
        m->dq.expire_at = m->now + strtoll(a[2].p, NULL, 10);
        return r_int(m, 1);
    }
    if (cmd_is(c, "XACK")) {
        long long acked = 0;
        for (int i = 3; i < n; i++) {
            long ei = stream_find(&m->ks, a[i]);
            long at = ei >= 0 ? pel_find(m, (size_t)ei) : -1;
            if (at >= 0) {
                pel_del(m, (size_t)at);
                acked++;
            }
        }
        return r_int(m, acked);
    }
    if (cmd_is(c, "LREM")) {
        list *l = list_of(m, a[1]);
        return r_int(m, l ? list_lrem1(l, a[3]) : 0);
    }
    if (cmd_is(c, "ZREM")) {
        zset *z = str_is(a[1], "k:delayed") ? &m->dq : &m->claims;
        key_type(m, a[1]);
        return r_int(m, zset_rem(z, a[2]));
    }
    sbuf b;
    sb_init(&b);
    sb_puts(&b, "ERR model: no such command ");
    sb_add(&b, a[0].p, a[0].len);
    reply r = r_err(m, b.b.p);
    sb_drop(&b);
    return r;
}

/* One pipeline on a connection, as Redis answers it: MULTI opens a transaction, commands
 * are queued (or refused at queue time, which aborts it), EXEC runs them or answers
 * EXECABORT.  out[i] per command. */
static void exec_pipeline(model *m, size_t n, gen_cmd *const *cmds, reply *out)
{
    int in_multi = 0, abort_multi = 0;
    size_t *queued = ANEW(m->a, n, size_t);
    size_t nq = 0;
    for (size_t i = 0; i < n; i++) {
        const gen_cmd *c = cmds[i];
        if (cmd_is(c, "MULTI")) {
            in_multi = 1;
            abort_multi = 0;
            nq = 0;
            out[i] = r_text("+OK", 0);
        } else if (cmd_is(c, "EXEC")) {
            in_multi = 0;
            if (abort_multi) {
                out[i] = r_err(m, ERR_EXECABORT);
                continue;
            }
            sbuf b;
            sb_init(&b);
            sb_puts(&b, "[");
            reply r = {0};
            r.exec_ran = 1;
            r.elem_error = ANEW(m->a, nq, int);
            r.nelem = nq;
            for (size_t k = 0; k < nq; k++) {
                reply e = exec_cmd(m, cmds[queued[k]]);
                if (k) sb_puts(&b, ", ");
                sb_puts(&b, e.text);
                if (e.error) {
                    r.elem_error[k] = 1;
                    r.inner_errors++;
                    if (!r.first_inner) r.first_inner = e.text + 1;
                }
            }
            sb_puts(&b, "]");
            r.text = sb_take(m->a, &b);
            out[i] = r;
        } else if (in_multi) {
            if (queue_time_error(c)) {
                out[i] = r_err(m, ERR_ARITY_INCR);
                abort_multi = 1;
            } else {
                queued[nq++] = i;
                out[i] = r_text("+QUEUED", 0);
            }
        } else {
            out[i] = exec_cmd(m, c);
        }
    }
}

/* ----- Round trips ---------------------------------------------------------------------------- */

enum { CONN_READER, CONN_WINDOW, CONN_SUBSCRIBER };

/* "reader", "window.2": out has room for the longest ("subscriber." and 10 digits). */
static void conn_label(model *m, int conn, char out[32])
{
    const char *base = conn == CONN_READER ? "reader" : conn == CONN_WINDOW ? "window" : "subscriber";
    size_t n = strlen(base);
    memcpy(out, base, n + 1);
    if (m->inc != 1) {
        out[n] = '.';
        wsm_u64_text(out + n + 1, m->inc);
    }
}

/* Records one round trip of the consumer (the engine's causes are at most 159 bytes and
 * stop at a NUL, as a C string does). */
static void record_rt(model *m, int conn, const char *cause, size_t n, gen_cmd *const *cmds,
                      int subi)
{
    mdl_result *o = m->out;
    GROW(m->a, o->rts, o->nrts, m->caprts);
    mdl_rt *rt = &o->rts[o->nrts++];
    memset(rt, 0, sizeof *rt);
    conn_label(m, conn, rt->conn);
    rt->cause = str_of(m->a, cause, strnlen(cause, 159)).p;
    rt->incarnation = m->inc;
    rt->index = conn == CONN_READER ? ++m->reader_rts
                : conn == CONN_WINDOW ? ++m->window_rts : ++m->subs[subi].sub_rts;
    rt->n = n;
    rt->args = ANEW(m->a, n, gen_cmd);
    for (size_t i = 0; i < n; i++) /* a read's COUNT LMOVEs are one command n times */
        rt->args[i] = i && cmds[i] == cmds[i - 1] ? rt->args[i - 1] : cmd_dup(m->a, cmds[i]);
    if (!m->no_text) {
        rt->cmds = ANEW(m->a, n, char *);
        for (size_t i = 0; i < n; i++)
            rt->cmds[i] = i && cmds[i] == cmds[i - 1] ? rt->cmds[i - 1]
                                                      : cmd_text(m->a, cmds[i]);
    }
    rt->step = m->step;
    /* its kind, by its cause: a subscription's start counts in the total only */
    mdl_counts *k = &o->counts;
    k->round_trips++;
    if (!strncmp(rt->cause, "flush ", 6)) k->flush_round_trips++;
    else if (!strncmp(rt->cause, "subscribe ", 10)) (void)0;
    else if (strstr(rt->cause, "read ")) k->read_round_trips++; /* reads, sweeps, claims */
    else k->pool_round_trips++;
}

/* A cause naming a delivery: "<what> of <id>". */
static char *cause_of(model *m, const char *what, const dlv *d)
{
    sbuf b;
    sb_init(&b);
    sb_puts(&b, what);
    sb_add(&b, " of ", 4);
    /* the id as it is, or quoted with escapes when a byte does not print (a framed list
     * value): docs/engine.md, "The trace" */
    int prints = 1;
    for (size_t i = 0; i < d->id.len && prints; i++) {
        unsigned char c = (unsigned char)d->id.p[i];
        prints = c >= 0x20 && c < 127;
    }
    if (prints) {
        sb_add(&b, d->id.p, d->id.len);
    } else {
        char *q = abytes(m->a, arg_quoted_len(d->id.p, d->id.len) + 1);
        arg_put_quoted(q, d->id.p, d->id.len);
        sb_add(&b, q, arg_quoted_len(d->id.p, d->id.len));
    }
    return sb_take(m->a, &b);
}

/* Sends cmds on the window connection (one round trip): recorded, run, replies out. */
static void window_rt(model *m, const char *cause, size_t n, gen_cmd *const *cmds, reply *out)
{
    record_rt(m, CONN_WINDOW, cause, n, cmds, 0);
    exec_pipeline(m, n, cmds, out);
}

/* The same on the reader (sweeps and reads run their commands themselves). */
static void reader_rt(model *m, const char *cause, size_t n, gen_cmd *const *cmds)
{
    record_rt(m, CONN_READER, cause, n, cmds, 0);
}

/* ----- Failing ------------------------------------------------------------------------------- */

static void model_stop(model *m, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void model_stop(model *m, const char *fmt, ...)
{
    if (m->out->error) return;
    char buf[512];
    va_list ap;
    va_start(ap, fmt);
    wsi_vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    m->out->error = astrdup(m->a, buf);
    m->out->error_step = m->step;
}

/* ----- Deliveries ------------------------------------------------------------------------------ */

static size_t root_of_fields(model *m, const gen_str *f, size_t nf)
{
    /* a copy keeps its original's payload, and payloads are unique per produced entry */
    for (size_t i = 0; i + 1 < nf; i += 2) {
        if (!str_is(f[i], "_payload")) continue;
        for (size_t e = 0; e < m->nentries; e++)
            if (str_eq(m->payloads[e], f[i + 1])) return e + 1;
    }
    return 0;
}

/* The produced entry a list value or channel message is: the value produced, or a copy
 * of it (a runtime copy is framed anew), told by its payload. */
static size_t root_of_value(model *m, gen_str v)
{
    for (size_t e = 0; e < m->nentries; e++)
        if (str_eq(m->frames[e], v)) return e + 1;
    size_t nf;
    gen_str *f = decode_value(m, v, &nf);
    return root_of_fields(m, f, nf);
}

static size_t new_dl(model *m, int subi, size_t entry, gen_str id)
{
    GROW(m->a, m->dl, m->ndl, m->capdl);
    dlv *d = &m->dl[m->ndl];
    memset(d, 0, sizeof *d);
    d->sub = subi;
    d->entry = entry;
    d->id = str_dup(m->a, id);
    d->inc = m->inc;
    d->seg = -1;
    d->batch = -1;
    /* a list value or channel message: its fields as the framework decodes it (a stream
     * entry's are the entry's: stream_dl) */
    if (m->cfg->form != WS_FORM_STREAM) d->f = decode_value(m, d->id, &d->nf);
    sub *s = &m->subs[subi];
    GROW(m->a, s->flight, s->nflight, s->capflight);
    s->flight[s->nflight++] = m->ndl;
    s->outstanding++;
    m->out->counts.deliveries++;
    return m->ndl++;
}

/* The latest delivery of an entry, as the scenario runner finds it: the last one handed
 * out whose entry it is. */
static long latest(model *m, size_t entry)
{
    for (size_t i = m->ndl; i-- > 0;)
        if (m->dl[i].entry == entry) return (long)i;
    return -1;
}

static void leave_flight(sub *s, size_t d)
{
    for (size_t i = 0; i < s->nflight; i++)
        if (s->flight[i] == d) {
            memmove(&s->flight[i], &s->flight[i + 1], (s->nflight - i - 1) * sizeof *s->flight);
            s->nflight--;
            return;
        }
}

static size_t add_eff(model *m, dlv *d, const gen_cmd *c, int kind)
{
    GROW(m->a, d->ef, d->nef, d->capef);
    d->ef[d->nef].cmd = cmd_dup(m->a, c);
    d->ef[d->nef].kind = kind;
    d->ef[d->nef].applied = 0;
    d->ef[d->nef].error = 0;
    return d->nef++;
}

/* ----- Reads ------------------------------------------------------------------------------------ */

static void read_record_start(model *m)
{
    mdl_result *o = m->out;
    GROW(m->a, o->reads, o->nreads, m->capreads);
    memset(&o->reads[o->nreads], 0, sizeof o->reads[o->nreads]);
    o->reads[o->nreads].step = m->step;
    o->nreads++;
    m->capread = 0;
}

static void read_record_dl(model *m, size_t d)
{
    mdl_read *r = &m->out->reads[m->out->nreads - 1];
    size_t cap = m->capread;
    GROW(m->a, r->entries, r->n, cap);
    cap = m->capread;
    GROW(m->a, r->payloads, r->n, cap);
    GROW(m->a, r->ids, r->n, m->capread);
    r->entries[r->n] = m->dl[d].entry;
    r->ids[r->n] = m->dl[d].id; /* the arena's, never changed */
    r->payloads[r->n] = (gen_str){NULL, 0};
    for (size_t i = 0; i + 1 < m->dl[d].nf; i += 2) /* the first, as ws_delivery_payload */
        if (str_is(m->dl[d].f[i], "_payload")) {
            r->payloads[r->n] = m->dl[d].f[i + 1];
            break;
        }
    r->n++;
}

/* A command of fixed words, NULL-terminated: literals or the arena's strings, which are
 * kept as they are (no copy: neither changes nor goes away while the model runs). */
static gen_cmd mk(model *m, const char *first, ...)
{
    gen_cmd c = {0};
    va_list ap;
    va_start(ap, first);
    for (const char *a = first; a; a = va_arg(ap, const char *))
        cmd_push(m->a, &c, (gen_str){(char *)a, strlen(a)});
    va_end(ap);
    return c;
}

/* One command through the pool (the window connection): the sweeps and the claims go
 * there, each awaited (delay.rs, recovery.rs).  Its reply. */
static reply pool_one(model *m, const char *cause, gen_cmd c)
{
    gen_cmd *cp = &c;
    reply r;
    window_rt(m, cause, 1, &cp, &r);
    return r;
}

/* `ZRANGEBYSCORE <zset> 0 <max> LIMIT 0 128` through the pool: the due members in score
 * order (indexes into z->m, *n of them). */
static size_t *due_members(model *m, zset *z, const char *key, int64_t max, const char *cause,
                           size_t *n)
{
    gen_cmd range = mk(m, "ZRANGEBYSCORE", key, "0", NULL);
    cmd_addll(m->a, &range, max);
    cmd_addz(m->a, &range, "LIMIT");
    cmd_addz(m->a, &range, "0");
    cmd_addz(m->a, &range, "128");
    pool_one(m, cause, range); /* expires the delay queue when its TTL passed */
    size_t *o = zset_order(m, z);
    size_t due = 0;
    while (due < z->n && due < 128 && z->m[o[due]].score <= max) due++;
    *n = due;
    return o;
}

/* The delay-queue sweep before a stream read (delay.rs sweep_due): per due member, its
 * ZREM, and only when that removed it, its copy XADDed back -- each its own round trip. */
static void delay_sweep(model *m, const char *cause)
{
    size_t due;
    size_t *o = due_members(m, &m->dq, "k:delayed", m->now, cause, &due);
    /* the members first: each ZREM moves the others */
    zmem *ms = ANEW(m->a, due, zmem);
    for (size_t i = 0; i < due; i++) ms[i] = m->dq.m[o[i]];
    for (size_t i = 0; i < due; i++) {
        gen_cmd zrem = mk(m, "ZREM", "k:delayed", NULL);
        cmd_adds(m->a, &zrem, ms[i].member);
        reply r = pool_one(m, cause, zrem);
        if (r.error || strcmp(r.text, ":1") != 0 || !ms[i].copy) continue;
        gen_cmd add = mk(m, "XADD", "k", "*", NULL);
        for (size_t k = 0; k < ms[i].ncopy; k++) cmd_adds(m->a, &add, ms[i].copy[k]);
        pool_one(m, cause, add);
    }
}

/* Deliveries of stream entry ei for subscription subi. */
static size_t stream_dl(model *m, int subi, size_t ei)
{
    sentry *e = &m->ks.e[ei];
    size_t d = new_dl(m, subi, e->root, (gen_str){e->id, strlen(e->id)});
    m->dl[d].f = e->f; /* the entry's, which never change */
    m->dl[d].nf = e->nf;
    return d;
}

static int id_less(const sentry *e, uint64_t ms, uint64_t seq)
{
    return e->ms < ms || (e->ms == ms && e->seq < seq);
}

static void fire_timers(model *m);

/* The reclaim cursor moves to entry e's id, or back to 0-0 (e NULL). */
static void set_cursor(sub *s, const sentry *e)
{
    if (e) {
        memcpy(s->cursor, e->id, sizeof s->cursor);
        s->cursor_ms = e->ms;
        s->cursor_seq = e->seq;
    } else {
        memcpy(s->cursor, "0-0", 4);
        s->cursor_ms = s->cursor_seq = 0;
    }
}

static void read_stream(model *m, int subi, const char *cause)
{
    sub *s = &m->subs[subi];
    size_t count = m->count;
    const char *num = m->count_text;
    if (!s->reclaim) {
        gen_cmd c = mk(m, "XREADGROUP", "GROUP", "g", s->consumer, "COUNT", num, "BLOCK", "10",
                       "STREAMS", "k", ">", NULL);
        gen_cmd *cp = &c;
        reader_rt(m, cause, 1, &cp);
        while (count-- > 0 && m->delivered < m->ks.n) {
            size_t ei = m->delivered++;
            pel_add(m, ei, subi + 1);
            read_record_dl(m, stream_dl(m, subi, ei));
        }
        return;
    }
    /* XAUTOCLAIM k g <consumer> <min-idle> <cursor> COUNT n */
    gen_cmd c = mk(m, "XAUTOCLAIM", "k", "g", s->consumer, NULL);
    cmd_addll(m->a, &c, GEN_MIN_IDLE_MS);
    cmd_addz(m->a, &c, s->cursor);
    cmd_addz(m->a, &c, "COUNT");
    cmd_addz(m->a, &c, num);
    gen_cmd *cp = &c;
    reader_rt(m, cause, 1, &cp);
    size_t i = 0;
    while (i < m->npl && id_less(&m->ks.e[m->pl[i].ei], s->cursor_ms, s->cursor_seq)) i++;
    long attempts = (long)count * 10;
    size_t left = count;
    size_t *claimed = ANEW(m->a, count, size_t);
    size_t nclaimed = 0;
    while (attempts-- > 0 && left > 0 && i < m->npl) {
        pel *p = &m->pl[i++];
        if (m->now - p->time < GEN_MIN_IDLE_MS) continue;
        p->consumer = subi + 1;
        p->time = m->now;
        p->count++;
        claimed[nclaimed++] = p->ei;
        left--;
    }
    if (i < m->npl) set_cursor(s, &m->ks.e[m->pl[i].ei]);
    else set_cursor(s, NULL);
    if (!nclaimed) {
        /* an empty reclaim: the reader sleeps BLOCK (10 ms) before the next read, and the
         * due timers fire meanwhile (docs/engine.md, Reads) */
        m->now += 10;
        fire_timers(m);
        return;
    }
    /* XPENDING k g IDLE 0 - + n <consumer>: the consumer's first n pending entries, oldest
     * first; each claimed delivery takes its count and idle time from its row, 0 and 0
     * when it has none (subscriber.rs enrich_reclaimed) */
    gen_cmd x = mk(m, "XPENDING", "k", "g", "IDLE", "0", "-", "+", num, s->consumer, NULL);
    gen_cmd *xp = &x;
    reader_rt(m, cause, 1, &xp);
    for (size_t k = 0; k < nclaimed; k++) {
        size_t d = stream_dl(m, subi, claimed[k]);
        dlv *x2 = &m->dl[d];
        long long cnt = 0, idle = 0;
        size_t rows = 0;
        for (size_t j = 0; j < m->npl && rows < count; j++) {
            const pel *p = &m->pl[j];
            if (p->consumer != subi + 1) continue;
            rows++;
            if (p->ei == claimed[k]) {
                cnt = p->count;
                idle = (long long)(m->now - p->time);
                break;
            }
        }
        x2->count = cnt;
        size_t n1, n2;
        gen_str *f1 = set_field(m, x2->f, x2->nf, "h:redis-delivery-count", cnt, &n1);
        x2->f = set_field(m, f1, n1, "h:redis-idle-ms", idle, &n2);
        x2->nf = n2;
        read_record_dl(m, d);
    }
}

/* The first bytes of the recovery member the engine made for delivery i of this read (its
 * process id), or NULL when the run did not see it. */
static const unsigned char *observed_member(model *m, size_t i)
{
    const gen_step *st = &m->run->steps[m->step];
    if (i >= st->ndl || !st->dl[i].has_member) return NULL;
    return st->dl[i].member;
}

/* The orphan sweep of a reliable list with recovery (recovery.rs sweep_orphans): per due
 * member, LREM of its value from the processing list, LPUSH back to the list only when
 * that removed it, then ZREM of the member whatever LREM said -- each its own round
 * trip. */
static void orphan_sweep(model *m, const char *cause)
{
    size_t due;
    size_t *o = due_members(m, &m->claims, "k:claims", m->now - GEN_MIN_IDLE_MS, cause, &due);
    gen_str *members = ANEW(m->a, due, gen_str);
    for (size_t i = 0; i < due; i++) members[i] = m->claims.m[o[i]].member;
    for (size_t i = 0; i < due; i++) {
        gen_str mb = members[i];
        size_t skip = mb.len >= MEMBER_PREFIX ? MEMBER_PREFIX : mb.len;
        gen_str value = {mb.p + skip, mb.len - skip};
        if (mb.len < MEMBER_PREFIX) value = (gen_str){"", 0};
        gen_cmd lrem = mk(m, "LREM", "k.processing", "1", NULL);
        cmd_adds(m->a, &lrem, value);
        reply r = pool_one(m, cause, lrem);
        if (!r.error && strcmp(r.text, ":1") == 0) {
            gen_cmd push = mk(m, "LPUSH", "k", NULL);
            cmd_adds(m->a, &push, value);
            pool_one(m, cause, push);
        }
        gen_cmd zrem = mk(m, "ZREM", "k:claims", NULL);
        cmd_adds(m->a, &zrem, mb);
        pool_one(m, cause, zrem);
    }
}

/* The recovery members of the read's new deliveries [first, ndl): `ZADD k:claims <now>
 * <member>` each -- one round trip through the pool for a window's read, one each for a
 * direct read (recovery.rs record_claim). */
static void record_claims(model *m, size_t first, const char *cause)
{
    size_t k = m->ndl - first;
    gen_cmd *adds = ANEW(m->a, k, gen_cmd);
    gen_cmd **ap = ANEW(m->a, k, gen_cmd *);
    for (size_t i = 0; i < k; i++) {
        dlv *d = &m->dl[first + i];
        if (!m->pid_known) {
            /* the process id is the engine's (drawn from the seed at the process's start):
             * read off the first member it made; the model says the rest */
            const unsigned char *seen = observed_member(m, i);
            if (seen) {
                m->pid = (uint32_t)seen[0] << 24 | (uint32_t)seen[1] << 16 |
                         (uint32_t)seen[2] << 8 | (uint32_t)seen[3];
                m->pid_known = 1;
            }
        }
        d->member = recovery_member(m, m->pid, m->nclaimed++, d->id);
        adds[i] = mk(m, "ZADD", "k:claims", NULL);
        cmd_addll(m->a, &adds[i], m->now);
        cmd_adds(m->a, &adds[i], d->member);
        ap[i] = &adds[i];
    }
    if (m->cfg->mode == WS_MODE_DIRECT) {
        for (size_t i = 0; i < k; i++) pool_one(m, cause, adds[i]);
    } else {
        reply *rep = ANEW(m->a, k, reply);
        window_rt(m, cause, k, ap, rep);
    }
    for (size_t i = 0; i < k; i++) {
        zmem *e = zset_find(&m->claims, m->dl[first + i].member);
        if (e) e->value = m->dl[first + i].id;
    }
}

/* A list read: direct, one blocking pop (list.rs next_entry); a window's, RPOP k COUNT
 * (plain) or COUNT LMOVEs in one pipeline (reliable), falling back to the blocking pop
 * when that gave nothing (ListReader::round_batches).  A reliable list with recovery
 * sweeps its orphans first and records its claims after. */
static void read_list(model *m, int subi, uint64_t r, const char *cause)
{
    sub *s = &m->subs[subi];
    size_t count = m->count;
    int reliable = m->cfg->form == WS_FORM_RELIABLE_LIST;
    int direct = m->cfg->mode == WS_MODE_DIRECT;
    size_t first = m->ndl;
    if (reliable && m->cfg->recovery) {
        sbuf sweep;
        sb_init(&sweep);
        sb_puts(&sweep, "recovery sweep before ");
        sb_puts(&sweep, cause);
        orphan_sweep(m, sweep.b.p);
        sb_drop(&sweep);
    }
    if (!direct && !reliable) {
        gen_cmd c = mk(m, "RPOP", "k", m->count_text, NULL);
        gen_cmd *cp = &c;
        reader_rt(m, cause, 1, &cp);
        while (count-- > 0 && m->kl.n) {
            gen_str v = list_rpop(&m->kl);
            read_record_dl(m, new_dl(m, subi, root_of_value(m, v), v));
        }
    } else if (!direct) {
        gen_cmd move = mk(m, "LMOVE", "k", "k.processing", "RIGHT", "LEFT", NULL);
        gen_cmd **ptr = ANEW(m->a, count, gen_cmd *);
        for (size_t i = 0; i < count; i++) ptr[i] = &move; /* COUNT LMOVEs, all alike */
        reader_rt(m, cause, count, ptr);
        while (count-- > 0 && m->kl.n) {
            gen_str v = list_rpop(&m->kl);
            list_lpush(m, &m->kproc, v);
            read_record_dl(m, new_dl(m, subi, root_of_value(m, v), v));
        }
    }
    if (m->ndl == first) {
        gen_cmd b = reliable ? mk(m, "BLMOVE", "k", "k.processing", "RIGHT", "LEFT", "0.010", NULL)
                             : mk(m, "BRPOP", "k", "0.010", NULL);
        gen_cmd *bp = &b;
        reader_rt(m, cause, 1, &bp);
        if (m->kl.n) { /* one delivery at most */
            gen_str v = list_rpop(&m->kl);
            if (reliable) list_lpush(m, &m->kproc, v);
            read_record_dl(m, new_dl(m, subi, root_of_value(m, v), v));
        }
    }
    if (reliable && m->cfg->recovery && m->ndl > first) {
        sbuf cc;
        sb_cause(&cc, "claims of read ", r, s->label);
        record_claims(m, first, cc.b.p);
        sb_drop(&cc);
    }
}

/* The read step: a waiting report, or one read with its sweeps. */
static void do_read(model *m, int subi)
{
    sub *s = &m->subs[subi];
    read_record_start(m);
    mdl_read *rec = &m->out->reads[m->out->nreads - 1];
    if (s->report_waiting) {
        s->report_waiting = 0;
        rec->is_report = 1;
        rec->commands = s->r_commands;
        rec->settles = s->r_settles;
        rec->failed = s->r_failed;
        rec->first_error = astrdup(m->a, s->r_error ? s->r_error : "");
        return;
    }
    uint64_t r = ++s->reads;
    m->out->counts.reads++;
    /* the sweep's cause, whose end is the read's */
    sbuf cause;
    sb_cause(&cause, "delay-queue sweep before read ", r, s->label);
    const char *read_cause = cause.b.p + strlen("delay-queue sweep before ");
    size_t first = m->ndl;
    if (m->cfg->form == WS_FORM_STREAM) {
        if (m->cfg->delay_queue && !s->reclaim) delay_sweep(m, cause.b.p);
        read_stream(m, subi, read_cause);
    } else if (m->cfg->form == WS_FORM_CHANNEL) {
        /* the client's broadcast buffer keeps the newest `buffer` messages unread (32 by
         * default): a subscriber further behind skips the oldest (pubsub.rs: Lagged) */
        size_t cap = m->cfg->buffer ? m->cfg->buffer : 32;
        if (s->nbuf > cap) {
            size_t skip = s->nbuf - cap;
            memmove(s->buf, s->buf + skip, cap * sizeof *s->buf);
            s->nbuf = cap;
            m->out->counts.skipped += skip;
        }
        size_t take = s->nbuf < m->count ? s->nbuf : m->count;
        for (size_t i = 0; i < take; i++) {
            size_t d = new_dl(m, subi, root_of_value(m, s->buf[i]), s->buf[i]);
            read_record_dl(m, d);
        }
        if (take) memmove(s->buf, s->buf + take, (s->nbuf - take) * sizeof *s->buf);
        s->nbuf -= take;
        if (take) s->waiting = s->nbuf;
    } else {
        read_list(m, subi, r, read_cause);
    }
    sb_drop(&cause);
    /* batches: the read's deliveries in read order, cfg->batch at a time */
    size_t b = m->cfg->batch;
    for (size_t i = first; b && i < m->ndl; i += b) {
        size_t n = m->ndl - i < b ? m->ndl - i : b;
        GROW(m->a, m->bts, m->nbts, m->capbts);
        batch *bt = &m->bts[m->nbts];
        memset(bt, 0, sizeof *bt);
        bt->members = ANEW(m->a, n, size_t);
        bt->n = n;
        bt->all_acked = 1;
        bt->seg = -1;
        for (size_t k = 0; k < n; k++) {
            bt->members[k] = i + k;
            m->dl[i + k].batch = (long)m->nbts;
            m->dl[i + k].in_batch_ever = 1;
        }
        m->nbts++;
    }
}

/* ----- Segments, the window, flushes ------------------------------------------------------- */

static long new_seg(model *m, size_t owner, long bt)
{
    GROW(m->a, m->segs, m->nsegs, m->capsegs);
    seg *g = &m->segs[m->nsegs];
    memset(g, 0, sizeof *g);
    g->owner = owner;
    g->batch = bt;
    return (long)m->nsegs++;
}

static void seg_push(model *m, long gi, size_t d, size_t e)
{
    seg *g = &m->segs[gi];
    size_t cap = g->cap;
    GROW(m->a, g->dl, g->n, cap);
    GROW(m->a, g->ef, g->n, g->cap);
    g->dl[g->n] = d;
    g->ef[g->n] = e;
    g->n++;
}

/* Queues c into d's segment (its batch's), made at the first command. */
static void queue_into(model *m, size_t d, const gen_cmd *c, int kind)
{
    dlv *x = &m->dl[d];
    long *slot = x->batch >= 0 ? &m->bts[x->batch].seg : &x->seg;
    if (*slot < 0) {
        size_t owner = x->batch >= 0 ? m->bts[x->batch].members[0] : d;
        *slot = new_seg(m, owner, x->batch);
    }
    size_t e = add_eff(m, x, c, kind);
    seg_push(m, *slot, d, e);
    if (x->batch >= 0) {
        batch *bt = &m->bts[x->batch];
        for (size_t i = 0; i < bt->n; i++)
            if (m->dl[bt->members[i]].seg_state == SEG_NONE) m->dl[bt->members[i]].seg_state = SEG_OPEN;
    } else {
        x->seg_state = SEG_OPEN;
    }
}

/* The InRound reply leaves after everything else the handler queued (a stable move). */
static void commit(model *m, int subi, long gi)
{
    seg *g = &m->segs[gi];
    size_t *dl2 = ANEW(m->a, g->n, size_t), *ef2 = ANEW(m->a, g->n, size_t), k = 0;
    for (int pass = 0; pass < 2; pass++)
        for (size_t i = 0; i < g->n; i++) {
            int is_reply = m->dl[g->dl[i]].ef[g->ef[i]].kind == EFF_REPLY;
            if (is_reply != pass) continue;
            dl2[k] = g->dl[i];
            ef2[k++] = g->ef[i];
        }
    memcpy(g->dl, dl2, g->n * sizeof *dl2);
    memcpy(g->ef, ef2, g->n * sizeof *ef2);
    sub *s = &m->subs[subi];
    GROW(m->a, s->committed, s->ncom, s->capcom);
    s->committed[s->ncom++] = (size_t)gi;
}

/* The broker's own requeue of a retried delivery: a stream re-adds the entry as
 * delivered (`XADD k * _payload <p> <h:* fields>`, the counter not raised: message.rs
 * republish); a reliable list pushes the value back as it was (list.rs nack). */
static gen_cmd requeue_copy(model *m, const dlv *d)
{
    if (m->cfg->form == WS_FORM_STREAM) {
        gen_cmd c = mk(m, "XADD", "k", "*", NULL);
        size_t nf;
        gen_str *f = copy_fields(m, d, 0, &nf);
        for (size_t i = 0; i < nf; i++) cmd_adds(m->a, &c, f[i]);
        return c;
    }
    gen_cmd c = mk(m, "LPUSH", "k", NULL);
    cmd_adds(m->a, &c, d->id);
    return c;
}

/* ZADD k:delayed <now+delay> <member> [+ PEXPIRE k:delayed <ttl>] (delay.rs schedule): the
 * member carries the copy with the counter raised. */
static size_t delay_writes(model *m, const dlv *d, int64_t delay, gen_cmd *w)
{
    size_t nf;
    gen_str *f = copy_fields(m, d, 1, &nf);
    gen_str member = dq_member(m, d->id, f, nf);
    w[0] = mk(m, "ZADD", "k:delayed", NULL);
    cmd_addll(m->a, &w[0], m->now + delay);
    cmd_adds(m->a, &w[0], member);
    if (!m->cfg->ttl_ms) return 1;
    w[1] = mk(m, "PEXPIRE", "k:delayed", NULL);
    cmd_addll(m->a, &w[1], m->cfg->ttl_ms);
    return 2;
}

/* The runtime's decision for an outcome (dispatch.rs settle_outcome, redelivery_of):
 *
 *   - ack, drop, abandon: the broker's;
 *   - the attempt: a reclaim read's delivery count, else the retry counter + 1; the cap
 *     is reached when max-attempts is declared and attempt >= it;
 *   - retry_after where the broker delays natively (a stream with a delay queue): the
 *     broker's delay queue, unless the cap is reached;
 *   - undeclared (no max-attempts, no dead letter): retry is the broker's requeue;
 *     retry_after (no native delay) settles as dropped and copies to the key after the
 *     delay;
 *   - a dead letter without max-attempts, or the cap reached: settled as dropped, then a
 *     copy to the dead letter at once, or nothing (rejected) without one;
 *   - a declared retry below the cap on a reclaim read: the broker's requeue;
 *   - else: settled as dropped, then a copy to the key -- at once for retry, after the
 *     delay for retry_after. */
static plan plan_outcome(model *m, const dlv *d, ws_outcome o, int64_t delay)
{
    plan p = {o, COPY_NONE, 0, 0};
    if (o != WS_RETRY && o != WS_RETRY_AFTER) return p;
    const sub *s = &m->subs[d->sub];
    int declared = s->max_attempts || s->dead_letter;
    long long attempt = s->reclaim ? d->count : retries_of(d) + 1;
    int at_cap = s->max_attempts && attempt >= (long long)s->max_attempts;
    int native = m->cfg->form == WS_FORM_STREAM && m->cfg->delay_queue && !s->reclaim;
    if (o == WS_RETRY_AFTER && native) {
        if (!at_cap) return p;
    } else if (!declared) {
        if (o == WS_RETRY) return p;
        p.broker = WS_DROP;
        p.copy = COPY_OWN;
        p.delay = delay;
        return p;
    }
    if (at_cap || (!s->max_attempts && s->dead_letter)) {
        p.broker = WS_DROP;
        p.copy = s->dead_letter ? COPY_DEAD_LETTER : COPY_NONE;
        p.rejected = !s->dead_letter;
        return p;
    }
    if (o == WS_RETRY && s->reclaim) return p;
    p.broker = WS_DROP;
    p.copy = COPY_OWN;
    p.delay = o == WS_RETRY_AFTER ? delay : 0;
    return p;
}

/* The runtime's copy of d (publish_copy: the delivered message, counter raised) to key:
 * a stream's XADD, a list's LPUSH or a channel's PUBLISH of the binary frame. */
static gen_cmd runtime_copy(model *m, const dlv *d, const char *key, ws_form form)
{
    size_t nf;
    gen_str *f = copy_fields(m, d, 1, &nf);
    gen_cmd c = mk(m, form == WS_FORM_STREAM ? "XADD" : form == WS_FORM_CHANNEL ? "PUBLISH" : "LPUSH",
                   key, NULL);
    if (form == WS_FORM_STREAM) {
        cmd_addz(m->a, &c, "*");
        for (size_t i = 0; i < nf; i++) cmd_adds(m->a, &c, f[i]);
    } else {
        cmd_adds(m->a, &c, frame_of(m, f, nf));
    }
    return c;
}

/* After the broker's settle: the plan's copy, through the pool at once (cause "retry copy
 * of <id>" or "dead letter of <id>") or from a timer after its delay.  Both the copy to
 * the key and the one to the dead letter take the declaring subscription's form (a
 * reliable list's is a list's): the framework records a subscription's dead letter under
 * its own route when it opens (route.rs Routes::record_subscription). */
static void publish_copy(model *m, size_t d, plan p)
{
    if (p.copy == COPY_NONE || !m->alive) return;
    dlv *x = &m->dl[d];
    int dlq = p.copy == COPY_DEAD_LETTER;
    ws_form form = m->cfg->form == WS_FORM_RELIABLE_LIST ? WS_FORM_PLAIN_LIST : m->cfg->form;
    gen_cmd c = runtime_copy(m, x, dlq ? GEN_DEAD_LETTER : "k", form);
    x->copy = p.copy;
    if (p.delay > 0) {
        GROW(m->a, m->tm, m->ntm, m->captm);
        timer *t = &m->tm[m->ntm++];
        t->due = m->now + p.delay;
        t->order = ++m->timer_order;
        t->dl = d;
        t->cmd = c;
        return;
    }
    gen_cmd *cp = &c;
    reply r;
    window_rt(m, cause_of(m, dlq ? "dead letter" : "retry copy", x), 1, &cp, &r);
    if (!r.error) x->copy_sent = 1;
}

/* What the broker's settle of an outcome owes the window, appended in settle order: the
 * settle (ack, drop), with the requeue copy or delay-queue writes first for its own retry
 * and retry_after.  Plain lists and channels owe nothing (they settle nothing, and cannot
 * requeue: an undeclared retry loses the message). */
static void owe(model *m, int subi, size_t d, ws_outcome o, int64_t delay)
{
    int form = m->cfg->form;
    if (form == WS_FORM_PLAIN_LIST || form == WS_FORM_CHANNEL || o == WS_ABANDON) return;
    sub *s = &m->subs[subi];
    owed w;
    memset(&w, 0, sizeof w);
    w.dl = d;
    if (o == WS_RETRY) {
        w.w[0] = requeue_copy(m, &m->dl[d]);
        w.nw = 1;
        w.retried = 1;
    } else if (o == WS_RETRY_AFTER) {
        w.nw = delay_writes(m, &m->dl[d], delay, w.w);
        w.retried = 1;
    }
    GROW(m->a, s->ow, s->now_, s->capow);
    s->ow[s->now_++] = w;
}

/* The delivery's own settle inside its atomic segment. */
static void own_settle(model *m, size_t d, gen_cmd *out, size_t *n)
{
    dlv *x = &m->dl[d];
    if (m->cfg->form == WS_FORM_STREAM) {
        out[*n] = mk(m, "XACK", "k", "g", NULL);
        cmd_adds(m->a, &out[(*n)++], x->id);
    } else if (m->cfg->form == WS_FORM_RELIABLE_LIST) {
        out[*n] = mk(m, "LREM", "k.processing", "1", NULL);
        cmd_adds(m->a, &out[(*n)++], x->id);
        if (m->cfg->recovery && x->member.p) {
            out[*n] = mk(m, "ZREM", "k:claims", NULL);
            cmd_adds(m->a, &out[(*n)++], x->member);
        }
    }
}

/* A round trip being built: commands with where they came from. */
enum { ROLE_SEGMENT = 1, ROLE_MULTI, ROLE_EXEC, ROLE_INSETTLE, ROLE_RETRY, ROLE_SETTLE };

typedef struct rtb {
    gen_cmd *c;
    int *role;
    long *dl;              /* the delivery, -1 for a shared XACK */
    long *ef;              /* the effect (segments), -1 otherwise */
    size_t n, cap;
} rtb;

static void rtb_add(model *m, rtb *b, gen_cmd c, int role, long d, long e)
{
    size_t cap = b->cap;
    GROW(m->a, b->c, b->n, cap);
    cap = b->cap;
    GROW(m->a, b->role, b->n, cap);
    cap = b->cap;
    GROW(m->a, b->dl, b->n, cap);
    GROW(m->a, b->ef, b->n, b->cap);
    b->c[b->n] = c;
    b->role[b->n] = role;
    b->dl[b->n] = d;
    b->ef[b->n] = e;
    b->n++;
}

/* The settles of the deliveries list[0..n) in settle order: one XACK (stream), an LREM
 * [+ ZREM] each (reliable list). */
static void add_settles(model *m, rtb *b, const size_t *ids, size_t n)
{
    if (n == 0) return;
    if (m->cfg->form == WS_FORM_STREAM) {
        gen_cmd c = mk(m, "XACK", "k", "g", NULL);
        for (size_t i = 0; i < n; i++) cmd_adds(m->a, &c, m->dl[ids[i]].id);
        rtb_add(m, b, c, ROLE_SETTLE, -1, -1);
    } else if (m->cfg->form == WS_FORM_RELIABLE_LIST) {
        for (size_t i = 0; i < n; i++) {
            gen_cmd tmp[2];
            size_t k = 0;
            own_settle(m, ids[i], tmp, &k);
            for (size_t j = 0; j < k; j++) rtb_add(m, b, tmp[j], ROLE_SETTLE, (long)ids[i], -1);
        }
    }
}

/* Sends b on the window for a flush; records the flush's commands; updates the ledger of
 * the deliveries (what ran, what failed, which settles were applied).  Returns the error
 * count (an EXEC's array counts each error in it) and keeps the first error's text. */
static size_t flush_send(model *m, int subi, mdl_flush *fl, size_t rt_no, rtb *b,
                         const size_t *xack, size_t nxack, const char **first, reply **keep)
{
    sub *s = &m->subs[subi];
    sbuf cause;
    sb_cause(&cause, "flush ", s->flushes, s->label);
    sb_puts(&cause, " after read ");
    sb_u64(&cause, s->reads);
    gen_cmd **ptr = ANEW(m->a, b->n, gen_cmd *);
    for (size_t i = 0; i < b->n; i++) ptr[i] = &b->c[i];
    reply *rep = ANEW(m->a, b->n, reply);
    window_rt(m, cause.b.p, b->n, ptr, rep);
    sb_drop(&cause);
    const mdl_rt *sent = &m->out->rts[m->out->nrts - 1]; /* the round trip, just recorded */
    size_t failed = 0;
    long multi = -1;
    for (size_t i = 0; i < b->n; i++) {
        GROW(m->a, fl->cmds, fl->n, m->capfcmds);
        mdl_fcmd *fc = &fl->cmds[fl->n++];
        fc->rt = rt_no;
        fc->args = &sent->args[i];
        fc->text = sent->cmds ? sent->cmds[i] : NULL;
        fc->reply = astrdup(m->a, rep[i].text);
        fc->from = b->dl[i] >= 0 ? m->dl[b->dl[i]].entry : 0;
        /* errors of the flush */
        if (rep[i].error) {
            failed++;
            if (!*first) *first = rep[i].text + 1;
        }
        if (b->role[i] == ROLE_EXEC) {
            failed += rep[i].inner_errors;
            if (!*first && rep[i].first_inner) *first = rep[i].first_inner;
        }
        /* the ledger */
        int role = b->role[i];
        if (role == ROLE_MULTI) {
            multi = (long)i;
        } else if (role == ROLE_EXEC) {
            int ran = rep[i].exec_ran;
            for (size_t k = (size_t)multi + 1, q = 0; k < i; k++, q++) {
                int err = ran && q < rep[i].nelem && rep[i].elem_error[q];
                if (b->role[k] == ROLE_SEGMENT) {
                    eff *e = &m->dl[b->dl[k]].ef[b->ef[k]];
                    e->applied = ran;
                    e->error = err;
                } else if (b->role[k] == ROLE_INSETTLE) {
                    dlv *x = &m->dl[b->dl[k]];
                    if (ran && !err) x->settle_sent = 1;
                    else if (ran) x->settle_failed = 1;
                }
            }
            multi = -1;
        } else if (role == ROLE_SEGMENT && multi < 0) {
            eff *e = &m->dl[b->dl[i]].ef[b->ef[i]];
            e->applied = 1;
            e->error = rep[i].error;
        } else if (role == ROLE_SETTLE) {
            if (b->dl[i] < 0) {
                for (size_t k = 0; k < nxack; k++) {
                    if (rep[i].error) m->dl[xack[k]].settle_failed = 1;
                    else m->dl[xack[k]].settle_sent = 1;
                }
            } else if (rep[i].error) {
                m->dl[b->dl[i]].settle_failed = 1;
            } else if (cmd_is(&b->c[i], "LREM")) {
                m->dl[b->dl[i]].settle_sent = 1;
            }
        }
    }
    *keep = rep;
    return failed;
}

/* Makes a failure report unless one waits already. */
static void report(model *m, int subi, size_t commands, size_t settles, size_t failed,
                   const char *first)
{
    sub *s = &m->subs[subi];
    if (s->report_waiting) return;
    s->report_waiting = 1;
    m->out->counts.reports++;
    s->r_commands = commands;
    s->r_settles = settles;
    s->r_failed = failed;
    s->r_error = first ? first : "";
}

/* A flush (SEMANTICS.md §3): segments in commit order, retry writes, settles. */
static void flush(model *m, int subi)
{
    sub *s = &m->subs[subi];
    s->settled = 0;
    size_t nheld = 0;
    for (size_t i = 0; i < s->now_; i++) nheld += s->ow[i].held;
    if (s->ncom == 0 && s->now_ == nheld) return; /* nothing owed: no round trip */
    /* take the debts; held acks stay in the window, in order */
    size_t *com = s->committed, ncom = s->ncom;
    s->committed = NULL;
    s->ncom = s->capcom = 0;
    owed *ow = ANEW(m->a, s->now_, owed);
    size_t nown = 0, keep = 0;
    for (size_t i = 0; i < s->now_; i++) {
        if (s->ow[i].held) s->ow[keep++] = s->ow[i];
        else ow[nown++] = s->ow[i];
    }
    s->now_ = keep;
    s->flushes++;
    mdl_result *o = m->out;
    o->counts.flushes++;
    GROW(m->a, o->flushes, o->nflushes, m->capflushes);
    mdl_flush *fl = &o->flushes[o->nflushes++];
    memset(fl, 0, sizeof *fl);
    m->capfcmds = 0;
    fl->sub = subi;
    fl->number = s->flushes;
    int atomic = m->cfg->mode == WS_MODE_ATOMIC;

    rtb b1 = {0}, b2 = {0};
    for (size_t i = 0; i < ncom; i++) {
        seg *g = &m->segs[com[i]];
        if (atomic) rtb_add(m, &b1, mk(m, "MULTI", NULL), ROLE_MULTI, (long)g->owner, -1);
        for (size_t k = 0; k < g->n; k++)
            rtb_add(m, &b1, m->dl[g->dl[k]].ef[g->ef[k]].cmd, ROLE_SEGMENT, (long)g->dl[k],
                    (long)g->ef[k]); /* commands never change: sharing is copying */
        if (atomic) {
            size_t nm = g->batch >= 0 ? m->bts[g->batch].n : 1;
            for (size_t k = 0; k < nm; k++) {
                size_t d = g->batch >= 0 ? m->bts[g->batch].members[k] : g->owner;
                gen_cmd tmp[2];
                size_t t = 0;
                own_settle(m, d, tmp, &t);
                for (size_t j = 0; j < t; j++) rtb_add(m, &b1, tmp[j], ROLE_INSETTLE, (long)d, -1);
            }
            rtb_add(m, &b1, mk(m, "EXEC", NULL), ROLE_EXEC, (long)g->owner, -1);
        }
        for (size_t k = 0; k < g->n; k++) m->dl[g->dl[k]].flushed = 1;
    }
    size_t nseg = b1.n;
    int has_retry = 0;
    for (size_t i = 0; i < nown; i++) has_retry |= ow[i].retried;
    size_t *order = ANEW(m->a, nown, size_t);
    size_t nlist = 0;
    for (size_t i = 0; i < nown; i++)
        if (!ow[i].retried) order[nlist++] = ow[i].dl;
    for (size_t i = 0; i < nown; i++) m->dl[ow[i].dl].flushed = 1;

    const char *first = NULL;
    size_t failed = 0, nsettles = 0;
    reply *rep = NULL;
    if (!has_retry) {
        add_settles(m, &b1, order, nlist);
        nsettles = b1.n - nseg;
        failed = flush_send(m, subi, fl, 1, &b1, order, nlist, &first, &rep);
    } else {
        for (size_t i = 0; i < nown; i++)
            for (size_t w = 0; w < ow[i].nw; w++)
                rtb_add(m, &b1, ow[i].w[w], ROLE_RETRY, (long)ow[i].dl, -1);
        nsettles = b1.n - nseg;
        failed = flush_send(m, subi, fl, 1, &b1, NULL, 0, &first, &rep);
        size_t pos = nseg;
        for (size_t i = 0; i < nown; i++) {
            int ok = 1;
            for (size_t w = 0; w < ow[i].nw; w++, pos++)
                if (rep[pos].error) ok = 0;
            if (ow[i].retried && ok) order[nlist++] = ow[i].dl;
        }
        add_settles(m, &b2, order, nlist);
        nsettles += b2.n;
        if (b2.n) {
            reply *rep2 = NULL;
            failed += flush_send(m, subi, fl, 2, &b2, order, nlist, &first, &rep2);
        }
    }
    if (failed) report(m, subi, nseg, nsettles, failed, first);
}

/* A batch member settles: the batch's segment is decided with its last member. */
static void settle_member(model *m, int subi, size_t d, ws_outcome o, ws_outcome broker,
                          int64_t delay)
{
    sub *s = &m->subs[subi];
    batch *bt = &m->bts[m->dl[d].batch];
    int atomic = m->cfg->mode == WS_MODE_ATOMIC;
    bt->done++;
    if (o != WS_ACK) bt->all_acked = 0;
    size_t before = s->now_;
    owe(m, subi, d, broker, delay);
    if (atomic && o == WS_ACK && s->now_ > before) s->ow[s->now_ - 1].held = 1;
    if (bt->done < bt->n) return;
    int kept = bt->seg >= 0 && bt->all_acked;
    for (size_t i = 0; i < bt->n; i++)
        if (bt->seg >= 0) m->dl[bt->members[i]].seg_state = kept ? SEG_KEPT : SEG_DROPPED;
    if (kept) commit(m, subi, bt->seg);
    size_t keep = 0;
    for (size_t i = 0; i < s->now_; i++) {
        owed *w = &s->ow[i];
        if (w->held && m->dl[w->dl].batch == m->dl[d].batch) {
            if (kept) continue;
            w->held = 0;
        }
        s->ow[keep++] = *w;
    }
    s->now_ = keep;
}

/* Direct mode (§7; message.rs, list.rs): the broker's settle is a sequence of awaited
 * calls, one command per round trip (cause "settle of <id>"): its requeue copy or
 * delay-queue writes first, then the settles (XACK; LREM, then ZREM) -- the first error
 * ends it.  A failure is logged by the runtime, never reported (dispatch.rs
 * settle_outcome).  Plain lists and channels settle nothing.  Returns 0 when a command
 * failed (then the runtime publishes no copy: dispatch.rs publish_copy), else 1. */
static int direct_settle(model *m, int subi, size_t d, ws_outcome broker, int64_t delay)
{
    (void)subi;
    int form = m->cfg->form;
    if (broker == WS_ABANDON || form == WS_FORM_PLAIN_LIST || form == WS_FORM_CHANNEL) return 1;
    char *cause = cause_of(m, "settle", &m->dl[d]);
    gen_cmd cmds[4];
    size_t n = 0;
    if (broker == WS_RETRY) cmds[n++] = requeue_copy(m, &m->dl[d]);
    else if (broker == WS_RETRY_AFTER) n = delay_writes(m, &m->dl[d], delay, cmds);
    size_t nw = n;
    own_settle(m, d, cmds, &n);
    for (size_t i = 0; i < n; i++) {
        reply r = pool_one(m, cause, cmds[i]);
        if (r.error) {
            if (i >= nw) m->dl[d].settle_failed = 1;
            return 0;
        }
        if (i >= nw && (cmd_is(&cmds[i], "XACK") || cmd_is(&cmds[i], "LREM")))
            m->dl[d].settle_sent = 1;
    }
    return 1;
}

static gen_cmd publish_cmd(model *m, ws_form form, const char *key, gen_str payload,
                           const gen_str *hn, const gen_str *hv);
static const char *out_key(ws_form f);

/* A settle: the waiting reply first (published at an ack, through the pool, before the
 * settle -- publishing.rs: an error reply makes the outcome a retry; dropped otherwise),
 * then the broker's settle of what the runtime decided (the window's, or direct), then
 * the runtime's copy: after the settle, whether or not the window flushed it. */
static void do_settle(model *m, size_t d, ws_outcome o, int64_t delay)
{
    dlv *x = &m->dl[d];
    int subi = x->sub;
    sub *s = &m->subs[subi];
    if (x->has_reply) {
        x->has_reply = 0;
        if (o == WS_ACK) {
            ws_form rf = m->cfg->reply_form;
            gen_cmd c = publish_cmd(m, rf, out_key(rf), x->reply, NULL, NULL);
            gen_cmd *cp = &c;
            reply r;
            window_rt(m, cause_of(m, "publish", x), 1, &cp, &r);
            if (r.error) o = WS_RETRY;
        }
    }
    x->done = 1;
    x->outcome = o;
    x->delay = delay;
    leave_flight(s, d);
    plan p = plan_outcome(m, x, o, delay);
    x->rejected = p.rejected;
    if (m->cfg->mode == WS_MODE_DIRECT) {
        s->outstanding--;
        if (direct_settle(m, subi, d, p.broker, delay)) {
            publish_copy(m, d, p);
        } else {
            x->rejected = 0; /* the drop failed: the delivery stays with the broker */
        }
        return;
    }
    int atomic = m->cfg->mode == WS_MODE_ATOMIC;
    if (x->batch >= 0) {
        settle_member(m, subi, d, o, p.broker, delay);
    } else if (o == WS_ACK && x->seg >= 0) {
        x->seg_state = SEG_KEPT;
        commit(m, subi, x->seg);
        x->seg = -1;
        if (!atomic) owe(m, subi, d, p.broker, delay);
    } else {
        if (x->seg >= 0) {
            x->seg_state = SEG_DROPPED;
            x->seg = -1;
        }
        owe(m, subi, d, p.broker, delay);
    }
    s->outstanding--;
    /* a channel's `waiting` is what its last read left behind, not what arrived since */
    size_t waiting = m->cfg->form == WS_FORM_CHANNEL ? s->waiting : 0;
    size_t capacity = m->count;
    if (o == WS_ABANDON) {
        if ((s->ncom || s->now_) && s->outstanding == 0 && waiting == 0) flush(m, subi);
        return;
    }
    s->settled++;
    if (s->settled >= capacity) flush(m, subi);
    else if (s->outstanding == 0 && waiting == 0) flush(m, subi);
    publish_copy(m, d, p);
}

/* ----- The process --------------------------------------------------------------------------- */

/* A process starts its subscriptions in order: a stream's group is made through the
 * pool (`XGROUP CREATE k g $ MKSTREAM`; BUSYGROUP, made by the world's setup, is fine:
 * broker.rs ensure_group), a channel is subscribed on a connection of its own.  Its
 * recovery members count from 0 under a process id of its own. */
static void start_subs(model *m)
{
    m->pid_known = 0;
    m->pid = 0;
    m->nclaimed = 0;
    for (int i = 0; i < 2; i++) {
        sub *s = &m->subs[i];
        if (!s->present) continue;
        s->sub_rts = 0;
        char cause[64] = "subscribe ";
        memcpy(cause + 10, s->label, strlen(s->label) + 1); /* "main" or "rescue" */
        if (m->cfg->form == WS_FORM_STREAM) {
            pool_one(m, cause, mk(m, "XGROUP", "CREATE", "k", "g", "$", "MKSTREAM", NULL));
        } else if (m->cfg->form == WS_FORM_CHANNEL) {
            gen_cmd c = mk(m, "SUBSCRIBE", "k", NULL);
            gen_cmd *cp = &c;
            record_rt(m, CONN_SUBSCRIBER, cause, 1, &cp, i);
        }
    }
}

static void crash(model *m)
{
    if (!m->alive) return;
    m->alive = 0;
    for (int i = 0; i < 2; i++) {
        sub *s = &m->subs[i];
        if (!s->present) continue;
        for (size_t k = 0; k < s->nflight; k++) {
            dlv *d = &m->dl[s->flight[k]];
            d->dead = 1;
        }
        for (size_t k = 0; k < m->ndl; k++) {
            dlv *d = &m->dl[k];
            if (d->sub == i && d->seg_state == SEG_OPEN) d->seg_state = SEG_DROPPED;
            if (d->sub == i) {
                d->seg = -1;
                d->batch = -1;
            }
        }
        s->committed = NULL;
        s->ncom = s->capcom = 0;
        s->now_ = 0;
        s->nflight = 0;
        s->outstanding = s->settled = 0;
        s->report_waiting = 0;
        s->nbuf = s->waiting = 0;
        /* a fresh process starts the reclaim scan over (§8: it keeps nothing) */
        set_cursor(s, NULL);
    }
    m->ntm = 0;
}

static void restart(model *m)
{
    crash(m);
    /* the new process mounts every subscription again: a stop lasts one process */
    for (int i = 0; i < 2; i++) m->subs[i].stopped = 0;
    m->inc++;
    m->alive = 1;
    m->reader_rts = m->window_rts = 0;
    start_subs(m);
}

/* Fires the due timers, earliest first (ties in the order they were set). */
static void fire_timers(model *m)
{
    while (m->alive) {
        size_t best = m->ntm;
        for (size_t i = 0; i < m->ntm; i++) {
            if (m->tm[i].due > m->now) continue;
            if (best == m->ntm || m->tm[i].due < m->tm[best].due ||
                (m->tm[i].due == m->tm[best].due && m->tm[i].order < m->tm[best].order))
                best = i;
        }
        if (best == m->ntm) return;
        timer t = m->tm[best];
        m->tm[best] = m->tm[--m->ntm];
        char *cause = cause_of(m, "retry timer", &m->dl[t.dl]);
        if (strlen(cause) > 127) cause[127] = '\0'; /* the engine's timer cause: 128 bytes */
        gen_cmd *cp = &t.cmd;
        reply r;
        window_rt(m, cause, 1, &cp, &r);
        if (!r.error) m->dl[t.dl].copy_sent = 1;
    }
}

/* ----- Handler actions -------------------------------------------------------------------------- */

static gen_cmd publish_cmd(model *m, ws_form form, const char *key, gen_str payload,
                           const gen_str *hn, const gen_str *hv)
{
    gen_cmd c = {0};
    if (form == WS_FORM_STREAM) {
        c = mk(m, "XADD", key, "*", "_payload", NULL);
        cmd_adds(m->a, &c, payload);
        if (hn && hn->p) {
            cmd_adds(m->a, &c, header_field(m, hn));
            cmd_adds(m->a, &c, *hv);
        }
        return c;
    }
    gen_str f = frame(m, payload, hn, hv);
    c = mk(m, form == WS_FORM_CHANNEL ? "PUBLISH" : "LPUSH", key, NULL);
    cmd_adds(m->a, &c, f);
    return c;
}

static const char *out_key(ws_form f)
{
    return f == WS_FORM_STREAM ? "out.s" : f == WS_FORM_CHANNEL ? "out.c" : "out.l";
}

/* A publish: joins the segment when in_round (window modes), else leaves at once. */
static void publish(model *m, size_t d, gen_cmd c, int in_round, int is_reply)
{
    if (in_round && m->cfg->mode != WS_MODE_DIRECT) {
        queue_into(m, d, &c, is_reply && m->cfg->reply_in_round ? EFF_REPLY : EFF_QUEUED);
    } else {
        char *cause = cause_of(m, "publish", &m->dl[d]);
        gen_cmd *cp = &c;
        reply r;
        window_rt(m, cause, 1, &cp, &r);
    }
}

/* ----- Steps ------------------------------------------------------------------------------------ */

static int form_index(ws_form f) { return (int)f >= 1 && (int)f <= 4 ? (int)f : 0; }

static long acting_dl(model *m, const gen_step *st)
{
    long d = latest(m, st->entry);
    if (d < 0) {
        model_stop(m, "step %zu acts on e%zu, which the model never delivered", m->step + 1,
                   st->entry);
        return -1;
    }
    dlv *x = &m->dl[d];
    if (x->done || x->dead || x->inc != m->inc || !m->alive || m->subs[x->sub].stopped) {
        model_stop(m, "step %zu acts on e%zu, whose latest delivery cannot act (the model "
                   "says it is %s)", m->step + 1, st->entry,
                   x->done ? "settled" : x->dead || x->inc != m->inc ? "dead" : "stopped");
        return -1;
    }
    return d;
}

static void step(model *m, const gen_step *st)
{
    switch (st->kind) {
    case GS_PRODUCE: {
        m->nproduced++;
        if (m->cfg->form == WS_FORM_STREAM) {
            gen_str f[4];
            size_t nf = 0;
            f[nf++] = (gen_str){"_payload", 8};
            f[nf++] = st->payload;
            if (st->hname.p) {
                f[nf++] = header_field(m, &st->hname);
                f[nf++] = st->hval;
            }
            stream_add(m, &m->ks, f, nf, m->nproduced); /* copies them */
        } else {
            gen_str fr = m->frames[m->nproduced - 1]; /* made at the start */
            if (m->cfg->form == WS_FORM_CHANNEL) {
                /* buffered by the live subscriber; nobody hears it while the process is dead */
                sub *s = &m->subs[0];
                if (m->alive) {
                    GROW(m->a, s->buf, s->nbuf, s->capbuf);
                    s->buf[s->nbuf++] = fr;
                }
            } else {
                list_lpush(m, &m->kl, fr);
            }
        }
        break;
    }
    case GS_READ:
        do_read(m, st->sub);
        break;
    case GS_QUEUE: {
        long d = acting_dl(m, st);
        if (d < 0) return;
        if (m->cfg->mode == WS_MODE_DIRECT) {
            size_t e = add_eff(m, &m->dl[d], &st->cmd, EFF_DIRECT);
            char *cause = cause_of(m, "direct write", &m->dl[d]);
            gen_cmd *cp = &m->dl[d].ef[e].cmd;
            reply r;
            window_rt(m, cause, 1, &cp, &r);
            m->dl[d].ef[e].applied = 1;
            m->dl[d].ef[e].error = r.error;
        } else {
            queue_into(m, (size_t)d, &st->cmd, EFF_QUEUED);
        }
        break;
    }
    case GS_POOL: {
        long d = acting_dl(m, st);
        if (d < 0) return;
        char *cause = cause_of(m, "pool", &m->dl[d]);
        gen_cmd c = cmd_dup(m->a, &st->cmd), *cp = &c;
        reply r;
        window_rt(m, cause, 1, &cp, &r);
        break;
    }
    case GS_PUBLISH: {
        long d = acting_dl(m, st);
        if (d < 0) return;
        int bound = m->dl[d].bound[form_index(st->out_form)];
        publish(m, (size_t)d,
                publish_cmd(m, st->out_form, st->out_key, st->payload, &st->hname, &st->hval),
                bound, 0);
        break;
    }
    case GS_REPLY: {
        long d = acting_dl(m, st);
        if (d < 0) return;
        ws_form rf = m->cfg->reply_form;
        int bound = m->dl[d].bound[form_index(rf)];
        if ((m->cfg->reply_in_round || bound) && m->cfg->mode != WS_MODE_DIRECT) {
            publish(m, (size_t)d, publish_cmd(m, rf, out_key(rf), st->payload, NULL, NULL), 1, 1);
            break;
        }
        /* the handler's return value: it waits for the handler's Ok (do_settle) */
        if (m->dl[d].has_reply) {
            model_stop(m, "step %zu replies a second time for e%zu (refused)", m->step + 1,
                       st->entry);
            return;
        }
        m->dl[d].reply = st->payload; /* the run's: it outlives the model */
        m->dl[d].has_reply = 1;
        break;
    }
    case GS_BIND: {
        long d = acting_dl(m, st);
        if (d < 0) return;
        m->dl[d].bound[form_index(st->out_form)] = 1;
        break;
    }
    case GS_SETTLE: {
        long d = acting_dl(m, st);
        if (d < 0) return;
        do_settle(m, (size_t)d, st->outcome, st->ms);
        break;
    }
    case GS_ADVANCE:
        m->now += st->ms;
        fire_timers(m);
        /* delay-queue members a timer copy cannot touch; nothing else moves with time */
        break;
    case GS_CRASH:
        crash(m);
        break;
    case GS_SHUTDOWN:
        /* the graceful stop: each live subscription's window drains, then the process
         * ends as in a crash (its deliveries abandoned, its timers gone) */
        if (!m->alive) {
            model_stop(m, "step %zu shuts a dead process down", m->step + 1);
            return;
        }
        /* ... unless the drains lose their race with the pool's QUIT: nothing is sent */
        for (int i = 0; i < 2 && !st->drains_lost; i++)
            if (m->subs[i].present && !m->subs[i].stopped) flush(m, i);
        crash(m);
        break;
    case GS_RESTART:
        restart(m);
        break;
    case GS_STOP: {
        sub *s = &m->subs[st->sub];
        flush(m, st->sub);
        s->stopped = 1;
        break;
    }
    case GS_FAULT:
        model_stop(m, "step %zu arms a fault, which the model does not follow", m->step + 1);
        break;
    }
}

/* ----- The end: final state and invariants ------------------------------------------------- */

static void add_state(model *m, char *command, char *reply_text)
{
    mdl_result *o = m->out;
    GROW(m->a, o->state, o->nstate, m->capstate);
    o->state[o->nstate].command = command;
    o->state[o->nstate].reply = reply_text;
    o->nstate++;
}

/* Appends the strings v[0..n) as an array of bulk strings: ["a", "b"]. */
static void bulks_text(sbuf *b, const gen_str *v, size_t n)
{
    sb_puts(b, "[");
    for (size_t i = 0; i < n; i++) {
        if (i) sb_puts(b, ", ");
        bulk_text(b, v[i].p, v[i].len);
    }
    sb_puts(b, "]");
}

/* LRANGE 0 -1 of the list, as the state's reply text. */
static char *list_text(model *m, const list *l)
{
    sbuf b;
    sb_init(&b);
    bulks_text(&b, l->v, l->n);
    return sb_take(m->a, &b);
}

/* XRANGE - + of the stream, as the state's reply text: [[id, [field, value, ...]], ...]. */
static char *stream_text(model *m, const stream *s)
{
    sbuf b;
    sb_init(&b);
    sb_puts(&b, "[");
    for (size_t i = 0; i < s->n; i++) {
        if (i) sb_puts(&b, ", ");
        sb_puts(&b, "[");
        bulk_text(&b, s->e[i].id, strlen(s->e[i].id));
        sb_puts(&b, ", ");
        bulks_text(&b, s->e[i].f, s->e[i].nf);
        sb_puts(&b, "]");
    }
    sb_puts(&b, "]");
    return sb_take(m->a, &b);
}

static char *zset_text(model *m, zset *z, const char *key)
{
    key_type(m, (gen_str){(char *)key, strlen(key)});
    size_t *o = zset_order(m, z);
    sbuf b;
    sb_init(&b);
    sb_puts(&b, "[");
    for (size_t i = 0; i < z->n; i++) {
        if (i) sb_puts(&b, ", ");
        bulk_text(&b, z->m[o[i]].member.p, z->m[o[i]].member.len);
        char sc[24];
        size_t scn = ll_text(sc, (long long)z->m[o[i]].score);
        sb_puts(&b, ", ");
        bulk_text(&b, sc, scn);
    }
    sb_puts(&b, "]");
    return sb_take(m->a, &b);
}

static void final_state(model *m)
{
    int form = m->cfg->form;
    if (form == WS_FORM_STREAM) {
        sbuf b;
        sb_init(&b);
        sb_puts(&b, "[");
        for (size_t i = 0; i < m->npl; i++) {
            pel *p = &m->pl[i];
            if (i) sb_puts(&b, ", ");
            sb_puts(&b, "[");
            bulk_text(&b, m->ks.e[p->ei].id, strlen(m->ks.e[p->ei].id));
            sb_puts(&b, ", ");
            const char *cn = m->subs[p->consumer - 1].consumer;
            bulk_text(&b, cn, strlen(cn));
            sb_puts(&b, ", :");
            sb_ll(&b, (long long)(m->now - p->time));
            sb_puts(&b, ", :");
            sb_ll(&b, p->count);
            sb_puts(&b, "]");
        }
        sb_puts(&b, "]");
        add_state(m, astrdup(m->a, "XPENDING k g - + 1000000"), sb_take(m->a, &b));
        add_state(m, astrdup(m->a, "XRANGE k - +"), stream_text(m, &m->ks));
        if (m->cfg->delay_queue)
            add_state(m, astrdup(m->a, "ZRANGE k:delayed 0 -1 WITHSCORES"),
                      zset_text(m, &m->dq, "k:delayed"));
    } else if (form == WS_FORM_RELIABLE_LIST || form == WS_FORM_PLAIN_LIST) {
        add_state(m, astrdup(m->a, "LRANGE k 0 -1"), list_text(m, &m->kl));
        if (form == WS_FORM_RELIABLE_LIST) {
            add_state(m, astrdup(m->a, "LRANGE k.processing 0 -1"), list_text(m, &m->kproc));
            if (m->cfg->recovery)
                add_state(m, astrdup(m->a, "ZRANGE k:claims 0 -1 WITHSCORES"),
                          zset_text(m, &m->claims, "k:claims"));
        }
    }
    add_state(m, astrdup(m->a, "LRANGE log 0 -1"), list_text(m, &m->log));
    add_state(m, astrdup(m->a, "LRANGE out.l 0 -1"), list_text(m, &m->outl));
    add_state(m, astrdup(m->a, "XRANGE out.s - +"), stream_text(m, &m->outs));
    /* the dead letter, in the declaring subscription's form (a channel's keeps nothing) */
    if ((m->subs[0].dead_letter || m->subs[1].dead_letter) && form == WS_FORM_STREAM)
        add_state(m, astrdup(m->a, "XRANGE " GEN_DEAD_LETTER " - +"), stream_text(m, &m->dlqs));
    else if ((m->subs[0].dead_letter || m->subs[1].dead_letter) && form != WS_FORM_CHANNEL)
        add_state(m, astrdup(m->a, "LRANGE " GEN_DEAD_LETTER " 0 -1"), list_text(m, &m->dlql));
    /* the strings: pc, n:e1.., s:e1.. */
    sbuf cmd, rep;
    sb_init(&cmd);
    sb_init(&rep);
    sb_puts(&cmd, "MGET pc str");
    sb_puts(&rep, "[");
    const char *first[] = {"pc", "str"};
    for (size_t i = 0; i < 2 + 2 * m->nproduced; i++) {
        char key[32];
        size_t kn;
        if (i < 2) {
            kn = strlen(first[i]);
            memcpy(key, first[i], kn + 1);
        } else {
            memcpy(key, (i - 2) % 2 == 0 ? "n:e" : "s:e", 3);
            kn = 3 + wsm_u64_text(key + 3, (i - 2) / 2 + 1);
            sb_add(&cmd, " ", 1);
            sb_add(&cmd, key, kn);
        }
        if (i) sb_puts(&rep, ", ");
        kv *k = kv_find(m, (gen_str){key, kn});
        if (k) bulk_text(&rep, k->val.p, k->val.len);
        else sb_puts(&rep, "$-1");
    }
    sb_puts(&rep, "]");
    char *cmd_s = sb_take(m->a, &cmd);
    add_state(m, cmd_s, sb_take(m->a, &rep));
}

static void violation(model *m, const char *kind, size_t entry)
{
    mdl_result *o = m->out;
    GROW(m->a, o->viol, o->nviol, m->capviol);
    memset(o->viol[o->nviol].kind, 0, sizeof o->viol[o->nviol].kind);
    memcpy(o->viol[o->nviol].kind, kind, strlen(kind)); /* at most 8: "stranded" */
    o->viol[o->nviol].entry = entry;
    o->nviol++;
}

static int first_applied(const dlv *d)
{
    for (size_t i = 0; i < d->nef; i++)
        if (d->ef[i].applied && !d->ef[i].error) return 1;
    return 0;
}

static int all_applied(const dlv *d)
{
    for (size_t i = 0; i < d->nef; i++)
        if (!d->ef[i].applied) return 0;
    return 1;
}

/* A reliable list with recovery: entry e's value is on the processing list more times
 * than recovery members and live deliveries without one account for (docs/engine.md,
 * "stranded": no sweep will ever find it). */
static int stranded(model *m, size_t e, const size_t *kproc_root)
{
    size_t on = 0, covered = 0;
    for (size_t i = 0; i < m->kproc.n; i++) on += kproc_root[i] == e;
    if (on == 0) return 0;
    for (size_t i = 0; i < m->claims.n; i++)
        covered += root_of_value(m, m->claims.m[i].value) == e;
    for (size_t i = 0; m->alive && i < m->ndl; i++) {
        const dlv *d = &m->dl[i];
        covered += d->entry == e && !d->done && !d->dead && d->inc == m->inc && !d->member.p;
    }
    return on > covered;
}

/* SEMANTICS.md §8 as docs/engine.md's table states it, entry by entry. */
static void invariants(model *m)
{
    int form = m->cfg->form;
    /* the entries the list keys hold, found once */
    size_t *kl_root = ANEW(m->a, m->kl.n, size_t), *kproc_root = ANEW(m->a, m->kproc.n, size_t);
    if (form == WS_FORM_RELIABLE_LIST) {
        for (size_t i = 0; i < m->kl.n; i++) kl_root[i] = root_of_value(m, m->kl.v[i]);
        for (size_t i = 0; i < m->kproc.n; i++) kproc_root[i] = root_of_value(m, m->kproc.v[i]);
    }
    for (size_t e = 1; e <= m->nproduced; e++) {
        size_t with_effects = 0;
        for (size_t i = 0; i < m->ndl; i++)
            if (m->dl[i].entry == e && first_applied(&m->dl[i])) with_effects++;
        if (with_effects >= 2) violation(m, "doubled", e);
        for (size_t i = 0; i < m->ndl; i++) {
            dlv *d = &m->dl[i];
            if (d->entry != e) continue;
            /* leaked: a discarded delivery's queued command took effect */
            int discarded = d->outcome != WS_ACK || d->seg_state == SEG_DROPPED;
            for (size_t k = 0; discarded && k < d->nef; k++)
                if (d->ef[k].kind != EFF_DIRECT && d->ef[k].applied) {
                    violation(m, "leaked", e);
                    break;
                }
            /* split: an atomic segment's effects without its settle, or its settle
             * without its effects -- barring run-time errors inside EXEC (§8) */
            if (m->cfg->mode == WS_MODE_ATOMIC && d->seg_state == SEG_KEPT && d->flushed &&
                !d->in_batch_ever && (form == WS_FORM_STREAM || form == WS_FORM_RELIABLE_LIST)) {
                int fa = first_applied(d);
                int ran_all_failed = 0;
                if (!fa && d->settle_sent && d->nef) {
                    ran_all_failed = 1;
                    for (size_t k = 0; k < d->nef; k++)
                        if (!d->ef[k].applied || !d->ef[k].error) ran_all_failed = 0;
                }
                if (fa && !d->settle_sent && !d->settle_failed) violation(m, "split", e);
                else if (!fa && d->settle_sent && d->nef &&
                         (!ran_all_failed || (m->quirks & GEN_QUIRK_SPLIT_RUNTIME)))
                    violation(m, "split", e);
            }
        }
        if (form != WS_FORM_STREAM && form != WS_FORM_RELIABLE_LIST) continue;
        int held = 0, settled = 0;
        if (form == WS_FORM_STREAM) {
            for (size_t i = 0; i < m->npl && !held; i++) held = m->ks.e[m->pl[i].ei].root == e;
            for (size_t i = m->delivered; i < m->ks.n && !held; i++) held = m->ks.e[i].root == e;
            key_type(m, (gen_str){"k:delayed", 9});
            for (size_t i = 0; i < m->dq.n && !held; i++) held = m->dq.m[i].root == e;
        } else {
            for (size_t i = 0; i < m->kl.n && !held; i++) held = kl_root[i] == e;
            for (size_t i = 0; i < m->kproc.n && !held; i++) held = kproc_root[i] == e;
        }
        for (size_t i = 0; m->alive && i < m->ntm && !held; i++) held = m->dl[m->tm[i].dl].entry == e;
        for (size_t i = 0; i < m->ndl && !settled; i++) {
            dlv *d = &m->dl[i];
            if (d->entry != e || !d->settle_sent) continue;
            if (d->outcome == WS_DROP) settled = 1;
            if (d->outcome == WS_ACK && all_applied(d)) settled = 1;
            /* retried at the cap: rejected, or its copy moved to the dead letter */
            if (d->rejected || (d->copy == COPY_DEAD_LETTER && d->copy_sent)) settled = 1;
        }
        if (!held && !settled) violation(m, "lost", e);
        if (form == WS_FORM_RELIABLE_LIST && m->cfg->recovery && stranded(m, e, kproc_root))
            violation(m, "stranded", e);
    }
}

/* ----- Entry point -------------------------------------------------------------------------- */

static int predict(const gen_run *run, unsigned quirks, int no_text, mdl_result *out);

int mdl_predict(const gen_run *run, unsigned quirks, mdl_result *out)
{
    return predict(run, quirks, 0, out);
}

int mdl_predict_args(const gen_run *run, unsigned quirks, mdl_result *out)
{
    return predict(run, quirks, 1, out);
}

char *mdl_cmd_text(const gen_cmd *c)
{
    arena *a = arena_new();
    char *t = wsi_xstrdup(cmd_text(a, c));
    arena_free(a);
    return t;
}

static int predict(const gen_run *run, unsigned quirks, int no_text, mdl_result *out)
{
    memset(out, 0, sizeof *out);
    out->arena = arena_new();
    model m;
    memset(&m, 0, sizeof m);
    m.no_text = no_text;
    m.run = run;
    m.cfg = &run->cfg;
    m.quirks = quirks;
    m.out = out;
    m.a = out->arena;
    m.now = START_MS;
    m.step = (size_t)-1;
    char num[24];
    m.count = run->cfg.batch ? run->cfg.batch : run->cfg.count; /* a batch reads its size */
    m.count_text = str_of(m.a, num, wsm_u64_text(num, m.count)).p;
    size_t nprod = 0;
    for (size_t i = 0; i < run->nsteps; i++) nprod += run->steps[i].kind == GS_PRODUCE;
    m.payloads = ANEW(m.a, nprod, gen_str);
    m.frames = ANEW(m.a, nprod, gen_str);
    for (size_t i = 0; i < run->nsteps; i++) {
        const gen_step *st = &run->steps[i];
        if (st->kind != GS_PRODUCE) continue;
        m.payloads[m.nentries] = st->payload; /* the run's: it outlives the model */
        m.frames[m.nentries] = frame(&m, st->payload, &st->hname, &st->hval);
        m.nentries++;
    }
    /* the world: setup (admin, not the consumer's), subscriptions, the first process */
    m.ks.exists = run->cfg.form == WS_FORM_STREAM; /* XGROUP CREATE ... MKSTREAM */
    kv_set(&m, (gen_str){"str", 3}, (gen_str){"x", 1});
    m.subs[0].present = 1;
    m.subs[0].label = "main";
    m.subs[0].consumer = run->cfg.auto_consumer ? "ruststream-0" : "c1";
    m.subs[0].max_attempts = run->cfg.max_attempts;
    m.subs[0].dead_letter = run->cfg.dead_letter;
    set_cursor(&m.subs[0], NULL);
    if (run->cfg.form == WS_FORM_STREAM && run->cfg.rescue) {
        m.subs[1].present = 1;
        m.subs[1].reclaim = 1;
        m.subs[1].label = "rescue";
        /* stream.rs auto_consumer: a per-process counter in subscription order, so each
         * process names them alike */
        m.subs[1].consumer = run->cfg.auto_consumer ? "ruststream-1" : "c2";
        if (run->cfg.rescue_declared) {
            m.subs[1].max_attempts = run->cfg.max_attempts;
            m.subs[1].dead_letter = run->cfg.dead_letter;
        }
        set_cursor(&m.subs[1], NULL);
    }
    m.inc = 1;
    m.alive = 1;
    start_subs(&m);
    for (size_t i = 0; i < run->nsteps && !out->error; i++) {
        m.step = i;
        step(&m, &run->steps[i]);
    }
    if (!out->error) {
        m.step = run->nsteps;
        final_state(&m);
        invariants(&m);
    }
    return 0;
}

void mdl_result_free(mdl_result *r)
{
    arena_free(r->arena);
    memset(r, 0, sizeof *r);
}
