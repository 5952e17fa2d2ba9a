/* sim_int.h -- what the consumer model's files share (sim.c, sub.c, read.c, action.c,
 * window.c, outcome.c, check.c, runtime.c, trace.c, ledger.c, delivery.c, records.c,
 * codec.c; "The layers" below).  Internal names start with wsi_.
 *
 * Memory: a simulation keeps every delivery record it ever made (the invariants and the
 * diagrams read them after crashes); the process's working state (windows, segments,
 * timers) is what a crash frees.  The records that live as long as the simulation -- the
 * deliveries with their ids, fields and effect lists, the produced entries, the lineage
 * of copies, the round-trip map, the flush records' delivery lists and command texts, the
 * published messages -- come from one arena (ws_sim.records, wsi_rec_alloc), freed at
 * once with the simulation: a fuzzing run makes and drops a simulation per input, and one
 * malloc and free per record was a fifth of its time.
 */
#ifndef SIM_INT_H
#define SIM_INT_H

#include <stddef.h>
#include <stdint.h>

#include "wsi_alloc.h"
#include "wsi_buf.h"
#include "wsi_strmap.h"
#include "ws_int.h"
#include "ws_sim.h"

/* ----- Owned commands ---------------------------------------------------------------- */

/* One command with its own copy of every argument (argv[i] NUL-terminated).  Made by
 * wsi_cmdb_done / wsi_cmd_copy / wsi_cmd_line as ONE heap block (the struct, argv,
 * argvlen and the bytes): the engine makes several commands per delivery, and one
 * allocation each instead of one per argument is what keeps a fuzzer's run cheap. */
typedef struct wsi_cmd {
    int argc;
    char **argv;
    size_t *argvlen;
} wsi_cmd;

/* Room a builder has before it touches the heap: what nearly every command fits in. */
#define WSI_CMDB_ARGS 16
#define WSI_CMDB_BYTES 256
/* A Pub/Sub subscriber's buffer when ws_sub_config.buffer is 0: fred's PerformanceConfig
 * default broadcast_channel_capacity, which ruststream-fred's dedicated Pub/Sub client keeps
 * (broker.rs new_client @ e9525ff: Client::new(config, None, None, None)). */
#define WSI_PUBSUB_BUFFER 32

/* A command being built argument by argument, in place (a local `wsi_cmdb b = {0};`,
 * never copied by value: it may point into itself); wsi_cmdb_done turns it into a
 * wsi_cmd and leaves it empty for the next command.  Aborts on out of memory, which the
 * engine treats as fatal (it cannot lose a step silently). */
typedef struct wsi_cmdb {
    int argc, cap;               /* arguments so far; room in off / lens */
    size_t len, capbytes;        /* bytes used in data (each argument and its NUL); room */
    size_t *off, *lens;          /* each argument's offset in data and length */
    char *data;                  /* the arguments, NUL after each (NULL until the first) */
    size_t off0[WSI_CMDB_ARGS];  /* the inline room off / lens / data start with */
    size_t lens0[WSI_CMDB_ARGS];
    char data0[WSI_CMDB_BYTES];
} wsi_cmdb;

void wsi_cmdb_add(wsi_cmdb *b, const char *p, size_t len);
void wsi_cmdb_adds(wsi_cmdb *b, const char *s);
void wsi_cmdb_addll(wsi_cmdb *b, long long v);
/* Hands the built command over (b is empty again). */
wsi_cmd *wsi_cmdb_done(wsi_cmdb *b);
wsi_cmd *wsi_cmd_copy(int argc, const char *const *argv, const size_t *argvlen);
/* A redis-cli style line; NULL for a blank line or unbalanced quotes. */
wsi_cmd *wsi_cmd_line(const char *line);
void wsi_cmd_free(wsi_cmd *c);
/* Case-insensitive test of the command's name. */
int wsi_cmd_is(const wsi_cmd *c, const char *name);

/* Memory: common/'s family (wsi_alloc.h).  Out of memory aborts with "wsim: out of memory
 * in libwsim" (wsi_xmalloc ...): the engine would otherwise lose a step silently, which a
 * simulator of lost steps must never do (docs/architecture.md, "Running out of memory"). */

/* Text: common/'s buffer (wsi_buf.h), with the appends that abort on out of memory. */
typedef wsi_buf wsi_text;
#define wsi_text_add wsi_buf_xadd
#define wsi_text_printf wsi_buf_xprintf
/* An argument as redis-cli shows it: bare when safe, else "quoted" with escapes. */
void wsi_text_arg(wsi_text *t, const char *p, size_t len);
void wsi_text_cmd(wsi_text *t, const wsi_cmd *c);
/* An id as the trace's sentences show it: p itself when every byte prints, else its
 * "quoted" form with escapes, on the heap (a list value in a binary frame).  The caller
 * frees it when it is not p. */
const char *wsi_shown(const char *p, size_t len);

/* ----- Where each command of a round trip came from ------------------------------------ */

typedef enum wsi_role {
    WSI_ROLE_SETUP = 1, /* the admin connection */
    WSI_ROLE_READ,      /* a read command */
    WSI_ROLE_SWEEP,     /* delay-queue or orphan sweep, list claim bookkeeping */
    WSI_ROLE_POOL,      /* a pool command of a handler */
    WSI_ROLE_DIRECT,    /* a direct-mode write of a handler */
    WSI_ROLE_PUBLISH,   /* a publish sent at once */
    WSI_ROLE_SEGMENT,   /* a command of a committed segment */
    WSI_ROLE_MULTI,     /* an atomic segment's MULTI */
    WSI_ROLE_EXEC,      /* an atomic segment's EXEC */
    WSI_ROLE_INSETTLE,  /* the delivery's own settle inside an atomic segment */
    WSI_ROLE_RETRY,     /* a retry write (XADD copy, ZADD, PEXPIRE, LPUSH) */
    WSI_ROLE_SETTLE,    /* a settle (XACK, LREM, ZREM) */
    WSI_ROLE_TIMER,     /* a timer's copy published through the pool */
    WSI_ROLE_COPY,      /* the runtime's copy of a retried delivery, at once (pool) */
    WSI_ROLE_SUBSCRIBE, /* a subscription's start: its group made, its channel subscribed */
} wsi_role;

/* What a round trip is for, given to wsi_send by whoever builds it: the one description
 * the ledger and the trace both read.  A per-command array, when set, wins over the
 * single value for every command. */
typedef struct wsi_annot {
    const char *cause;        /* why it is sent (the trace's heading), e.g. "read 3 of s" */
    ws_sub *sub;              /* on behalf of this subscription, or NULL */
    uint64_t flush;           /* the subscription's flush it carries; 0: not a flush */
    int role;                 /* every command's WSI_ROLE_* (when roles is NULL) */
    struct ws_delivery *dl;   /* every command's delivery, or NULL (when dls is NULL) */
    const int *roles;         /* per command: its WSI_ROLE_*, or NULL */
    struct ws_delivery *const *dls; /* per command: the delivery it came from, or NULL */
    const size_t *effects;    /* per command: the index of its effect in its delivery's
                                 list, or (size_t)-1; NULL: no command is an effect */
    const size_t *pipes;      /* a flush's commands' pipelines (1-based), or NULL */
    struct ws_delivery *const *xack; /* the deliveries a shared XACK of it names */
    size_t nxack;
} wsi_annot;

static inline int wsi_annot_role(const wsi_annot *an, size_t i)
{
    return an->roles ? an->roles[i] : an->role;
}
static inline struct ws_delivery *wsi_annot_dl(const wsi_annot *an, size_t i)
{
    return an->dls ? an->dls[i] : an->dl;
}
static inline size_t wsi_annot_effect(const wsi_annot *an, size_t i)
{
    return an->effects ? an->effects[i] : (size_t)-1;
}

/* What one command of a round trip did, as it counts: worked out once per round trip
 * (wsi_effective) and read by the ledger and the trace alike.  A command queued between
 * a MULTI that opened a transaction and its EXEC is decided by that EXEC; any other
 * command (one after a MULTI the server refused too) by its own reply. */
typedef struct wsi_eff {
    int fate;                 /* alone: its own ws_fate; in a transaction: the EXEC's when
                                 the EXEC ran, else WS_FATE_UNSENT */
    const fr_reply *reply;    /* alone: its own reply (NULL: none); in a transaction: its
                                 element of the EXEC's array (NULL when the EXEC did not
                                 run) */
    unsigned char tx;         /* queued in a transaction (an EXEC: its MULTI opened one) */
    unsigned char ran;        /* alone: it reached the server; in a transaction (and an
                                 EXEC): the EXEC reached it and answered an array */
    unsigned char discarded;  /* in a transaction whose EXEC never reached the server: it
                                 was discarded with the connection */
    unsigned char took;       /* it ran and its reply is no error: it took effect */
} wsi_eff;

/* ----- Deliveries ------------------------------------------------------------------------ */

/* Where a command was applied: kept as data at every round trip and written out
 * ("window round trip 3, command 2") only in the sentence of a violation. */
typedef struct wsi_where {
    char conn[64];     /* the connection's label (as ws_conn keeps it); "" while nowhere */
    uint64_t rt;       /* its round trip */
    size_t cmd;        /* the command's position in it, from 1 */
} wsi_where;

/* "conn round trip N, command K", or "?" when nowhere; buf of at least 96 bytes. */
const char *wsi_where_text(const wsi_where *w, char *buf, size_t size);

/* A command a delivery caused, and what became of it (the ledger the checks read). */
typedef struct wsi_effect {
    wsi_cmd *cmd;
    int kind;          /* WSI_EFFECT_*: how the command relates to the delivery */
    int fate;          /* a ws_fate once sent; 0 while never sent */
    int error;         /* the reply was an error */
    wsi_where where;   /* where it was sent, once sent */
} wsi_effect;

enum {
    WSI_EFFECT_QUEUED = 1, /* queued into the segment (commands, in-round reply, bound) */
    WSI_EFFECT_DIRECT,     /* a direct-mode write (applied at once) */
    WSI_EFFECT_REPLY,      /* the InRound reply: queued, and kept last in its segment */
};

typedef struct wsi_segment wsi_segment;
typedef struct wsi_batch wsi_batch;

struct ws_delivery {
    ws_sub *sub;
    uint64_t seq;           /* 1-based number across the simulation (trace: "d3") */
    unsigned incarnation;   /* the process that got it */
    uint64_t read;          /* the read of its subscription */
    size_t index;           /* its place in that read */
    unsigned slot, gen;     /* its slot in the window and the slot's generation */
    char *id;               /* stream id, list value, channel message */
    size_t id_len;
    const char *shown;      /* the id as sentences show it (wsi_shown: id, or heap) */
    char **fields;          /* stream: field, value, field, value... (one block with
                               field_lens and the bytes: free fields only) */
    size_t *field_lens;
    size_t nfields;         /* entries of fields (2 per pair) */
    long long count;        /* delivery count (reclaim reads), else 1 */
    char *member;           /* reliable list with recovery: its recovery member */
    size_t member_len;
    ws_outcome outcome;     /* 0 while outstanding */
    int64_t delay_ms;       /* WS_RETRY_AFTER */
    int done;               /* settled or abandoned */
    int dead;               /* its process crashed while it was outstanding */
    wsi_segment *seg;       /* its segment (not for batch members), NULL if none */
    wsi_batch *batch;       /* its batch, for batch handlers (NULL again after a crash) */
    int in_batch;           /* it was a batch member (kept for the checks) */
    ws_out *bound;          /* outputs it bound (copied) */
    size_t nbound;
    wsi_effect *effects;    /* what it queued or wrote directly, in order (records arena;
                               the commands are on the heap) */
    size_t neffects, capeffects;
    size_t root;            /* the produced entry it descends from, 0 if unknown (1-based) */
    int settle_sent;        /* its settle (XACK / LREM) was applied */
    int settle_failed;      /* its settle answered an error */
    wsi_where settle_where; /* where its settle was applied */
    int seg_state;          /* WSI_SEG_*: what became of its segment */
    int exec_ok;            /* atomic: EXEC answered an array */
    uint64_t flush;         /* the flush that carried it (0: none yet) */
    int copy_planned;       /* WSI_COPY_*: the runtime owes a copy of it (outcome.c) */
    int copy_sent;          /* that copy took effect (at once or from its timer) */
    int rejected;           /* retried at the cap of max-attempts with no dead letter */
    char *reply;            /* a reply published outside the round, waiting for the
                               handler's Ok (the ack); NULL if none */
    size_t reply_len;
};

enum {
    WSI_SEG_NONE = 0,   /* never had one */
    WSI_SEG_OPEN,       /* queued into, not yet decided */
    WSI_SEG_KEPT,       /* committed (ack) */
    WSI_SEG_DROPPED,    /* discarded (drop, retry, abandon, crash) */
};

/* A segment: the commands queued by one delivery (or one batch), in order. */
struct wsi_segment {
    ws_delivery *owner;     /* the delivery (a batch's first member for a batch) */
    wsi_batch *batch;       /* the batch it belongs to, or NULL */
    size_t *effect;         /* per command: the index into owner's effects (per member
                               for batches: see members) */
    ws_delivery **from;     /* per command: the delivery that queued it */
    size_t n, cap;
};

struct wsi_batch {
    ws_delivery **members;
    size_t n;
    size_t done;            /* members settled or abandoned */
    int all_acked;          /* every member done so far acked */
    wsi_segment *seg;       /* the batch's one segment, NULL if nothing queued */
    unsigned slot, gen;
};

/* ----- Subscriptions and the window ------------------------------------------------------- */

/* What one settled delivery owes the broker, in settle order. */
typedef struct wsi_owed {
    ws_delivery *d;
    wsi_cmd *writes[2];     /* retry writes (XADD copy | ZADD [+PEXPIRE] | LPUSH) */
    size_t nwrites;
    int retried;            /* it has retry writes: it is settled only if they succeed */
    int held;               /* an atomic batch member's ack, held at its settle position
                               until the batch is decided: dropped if the batch commits
                               (its settle goes inside), released otherwise; a flush
                               leaves it in the window meanwhile */
} wsi_owed;

typedef struct wsi_committed {
    wsi_segment *seg;
    int atomic;             /* wrap in MULTI ... settle ... EXEC */
} wsi_committed;

/* A retry copy waiting on the clock (retry_after without a delay queue). */
typedef struct wsi_timer {
    int64_t due;
    uint64_t order;         /* ties broken by the order they were set */
    ws_sub *sub;
    ws_delivery *d;         /* the delivery it copies */
    wsi_cmd *cmd;           /* XADD copy / LPUSH value */
} wsi_timer;

struct ws_sub {
    ws_sim *sim;
    ws_sub_config cfg;      /* strings point into owned copies below */
    char *key, *group, *consumer_cfg, *delay_queue, *processing, *recovery, *dead_letter;
    char *group_start;
    char *name;             /* the label: the trace's name for it (unique) */
    char *subject;          /* the name reports carry (§5: the key by default) */
    char *reply_key;
    char consumer[64];      /* this incarnation's consumer name */
    int stopped;
    uint64_t reads;         /* reads made (all incarnations) */
    uint64_t flushes;       /* flushes made */
    char cursor[48];        /* reclaim: XAUTOCLAIM's cursor */
    uint64_t top_ms, top_seq; /* stream: the highest id any delivery of it carried */
    int top_set;            /* ... once it has one (ws_sub_fresh_only) */
    /* the latest read */
    ws_delivery **last;
    size_t nlast, caplast;
    /* the window (freed by a crash) */
    size_t outstanding, settled, capacity, waiting;
    wsi_committed *committed;
    size_t ncommitted, capcommitted;
    wsi_owed *owed;
    size_t nowed, capowed;
    unsigned *slot_gen;     /* per slot: its generation (bumped at each reuse) */
    unsigned char *slot_busy;
    size_t nslots;
    ws_delivery **flight;   /* outstanding deliveries, for ws_find */
    size_t nflight, capflight;
    ws_delivery **since;    /* settled or abandoned since the last flush, in that order */
    size_t nsince, capsince;
    /* failure reports */
    int report_waiting;
    ws_report report;       /* the waiting or last handed-out report */
    char report_error[256];
    char report_name[128];
    /* channels: their own connection and the messages buffered on it */
    ws_conn *conn;
    char **buffered;
    size_t *buffered_len;
    size_t nbuffered, capbuffered;
};

/* One produced entry, the root of a lineage of copies. */
typedef struct wsi_produced {
    int form;
    char *key;              /* one block holding key, payload and id (free this only) */
    char *id;               /* stream id or list frame, in the block */
    size_t id_len;
    const char *shown;      /* the id as sentences show it (wsi_shown: id, or heap) */
    char *payload;          /* in the block */
    size_t payload_len;
} wsi_produced;

/* One record of the trace. */
typedef struct wsi_rec {
    char *text;             /* the record's text, lines ending in '\n' */
    uint64_t flush;         /* the flush it belongs to (0: none) */
    ws_sub *sub;            /* ... of this subscription */
} wsi_rec;

/* A flush, for the diagrams. */
typedef struct wsi_flushrec {
    ws_sub *sub;
    uint64_t number;        /* the subscription's flush number */
    uint64_t read;          /* the latest read when it left */
    const char *why;        /* "capacity", "nothing outstanding", "stop", "abandon" */
    ws_delivery **dl;       /* the deliveries it settled, in settle order */
    size_t ndl;
    char *body;             /* the round trips as diagram lines */
    ws_flush_command *cmds; /* every command sent, in order (text, reply and settles
                               owned) */
    size_t ncmds;
    size_t rts;             /* round trips so far */
} wsi_flushrec;

struct ws_sim {
    ws_sim_config cfg;
    wsi_arena records;      /* the long-lived records (see the top of this file) */
    wsi_text scratch;       /* the trace's text of a round trip, reused */
    char *backend;
    fr_server *fake;        /* owned (unless cfg.reuse), or NULL on a real server */
    ws_conn *admin;         /* setup and checks (not the consumer's) */
    ws_conn *reader, *window;
    int dead;               /* the process crashed and was not restarted */
    int gone_pending;       /* it died in a round trip: what it held is freed at the end
                               of the public call (wsi_api_end) */
    int quiet;              /* admin round trips of the checks stay out of the trace */
    unsigned incarnation;
    uint32_t pid;           /* this process's id (drawn from the seed at its start): the
                               first part of its recovery members */
    uint64_t claims;        /* recovery members it made (their counter, from 0) */
    unsigned auto_consumers;/* consumer names it generated: ruststream-<n>, from 0 */
    int64_t now_ms;         /* real server: the simulation's clock */
    uint64_t rng;           /* splitmix64 state */
    int err;
    char errstr[512];
    ws_sub **subs;
    size_t nsubs;
    ws_delivery **dl;       /* every delivery ever made */
    size_t ndl, capdl;
    wsi_produced *produced;
    size_t nproduced, capproduced;
    struct {
        const char *key;    /* where the copy went (its subscription's key) */
        char *id;           /* a retry copy's id (stream) or value (list, channel) */
        size_t len;
        size_t root;        /* the produced entry it descends from (1-based) */
    } *lineage;
    size_t nlineage, caplineage;
    wsi_strmap produced_by_id;      /* "<key>\0<id or frame>" -> produced index (1-based) */
    wsi_strmap produced_by_payload; /* streams: "<key>\0<payload>" -> first such index */
    wsi_strmap lineage_by_id;       /* "<key>\0<copy id or value>" -> its root: ids of
                                       two streams may be equal */
    wsi_strmap produced_per_key;    /* streams: "<key>" -> entries produced into it (the
                                       bounded recovery compares it with entries-added) */
    wsi_strmap produced_last;       /* streams: "<key>" -> the last entry produced into it
                                       (1-based index in produced) */
    int payload_twice;      /* two produced stream entries of one key share a payload: the
                               checks' shortcut for unread entries is off (check.c) */
    wsi_timer *timers;
    size_t ntimers, captimers;
    uint64_t timer_order;
    wsi_rec *recs;
    size_t nrecs, caprecs;
    wsi_flushrec *flushes;
    size_t nflushes, capflushes;
    ws_sim_counts counts;
    char last_crash[160];   /* where the last crash happened */
    struct wsi_rtrec {      /* (cause, args, commands: in the records arena) */
        char conn[64];
        char *cause;
        unsigned incarnation;
        uint64_t index;
        size_t n;
        wsi_cmd **args;     /* each command's arguments; NULL when the engine did not
                               build them (shown blank) */
        char **commands;    /* each command's text (or ""); NULL until the trace or
                               ws_sim_round_trip renders them */
        int status;
    } *rts;                 /* the consumer's round trips (ws_sim_round_trip) */
    size_t nrts, caprts;
    struct wsi_pub {
        char *channel;
        char *payload;
        size_t len;
    } *pubs;                /* ws_sim_published */
    size_t npubs;
    char **warnings;        /* ws_sim_warning */
    size_t nwarnings;
    fr_server *table;       /* a fake used only for its command table (real servers) */
    char **crashes;         /* per incarnation (index incarnation-1): where it crashed */
    size_t ncrashes;
    /* the checks' incremental state (check.c, ws_sim_check_prepare): which produced
     * entries no check needs to look at again, kept up to date as the run goes so that a
     * crash explorer's forked child checks only what its crash and recovery touched */
    struct wsi_ck {
        size_t scanned;         /* deliveries of dl seen so far */
        size_t produced_seen;   /* produced entries filed by key so far */
        unsigned char *state;   /* per produced entry: WSI_CK_* */
        size_t *first, *last;   /* per produced entry: 1 + dl index of its first / last
                                   delivery (0: none) */
        size_t *next;           /* per delivery (dl index): 1 + dl index of the next
                                   delivery of its produced entry (0: none) */
        size_t cap_roots, cap_dl;
        size_t *open;           /* dl indexes of deliveries not decided yet */
        size_t nopen, capopen;
        size_t *dirty;          /* produced entries (1-based) found dirty, in that order */
        size_t ndirty, capdirty;
        wsi_strmap key_index;   /* streams: "<key>" -> index in keys */
        struct wsi_ck_key {
            size_t *roots;      /* its produced entries (1-based), in id order */
            size_t n, cap;
            size_t touched;     /* of them, entries some delivery carried */
        } *keys;
        size_t nkeys, capkeys;
    } ck;
    /* the checks' results */
    ws_violation *viol;
    size_t *viol_root;      /* per violation: its produced entry (1-based) */
    size_t nviol;
    char **viol_text;
};

/* ----- check.c ---------------------------------------------------------------------------- */

enum {
    WSI_CK_UNTOUCHED = 0, /* no delivery carried it yet */
    WSI_CK_OPEN,          /* delivered once, that delivery not decided yet */
    WSI_CK_CLEAN,         /* delivered once, acked with every effect applied or dropped
                             with nothing applied, its settle applied: no check can find
                             anything wrong with it until it is delivered again */
    WSI_CK_DIRTY,         /* anything else: checked every time */
};

/* Frees the checks' incremental state. */
void wsi_ck_free(ws_sim *sim);

/* A stream id "<ms>-<seq>" (both decimal) into *ms and *seq: 0, or -1 when it is not one. */
int wsi_stream_id_parse(const char *p, size_t len, uint64_t *ms, uint64_t *seq);

/* ----- The layers ----------------------------------------------------------------------
 *
 * The consumer model's files call down only, never back up into a file that calls them
 * (tests/callgraph.sh checks it on the objects):
 *
 *   sim.c          the world: the process's start, crashes, shutdown, restarts; the end
 *   sub.c read.c action.c    subscriptions; reads, form by form; a handler's actions
 *   window.c       settling, flushing, slots, segments, what a dead process leaves
 *   outcome.c check.c        what the runtime makes of an outcome; the invariants
 *   runtime.c      sending, the clock and timers, the generator, errors, the admin
 *                  connection and the producer, the lineage, warnings
 *   trace.c ledger.c delivery.c   the trace (an observer); the ledger; delivery records
 *   records.c codec.c cmd.c  the records arena; the framework's encodings; commands, text
 *
 * A crash met deep down (wsi_send) is recorded there and freed at the public call's end
 * (wsi_api_end), so that no call runs back up. */

/* ----- records.c -------------------------------------------------------------------------- */

/* A long-lived record of n bytes, zeroed, from the simulation's arena (freed with the
 * simulation, never alone); aborts on out of memory. */
void *wsi_rec_alloc(ws_sim *sim, size_t n);
/* A NUL-terminated copy of p[0..len) in the simulation's arena. */
char *wsi_rec_memdup(ws_sim *sim, const char *p, size_t len);
/* A copy of c (one block, arguments NUL-terminated) in the simulation's arena. */
wsi_cmd *wsi_rec_cmd(ws_sim *sim, const wsi_cmd *c);

/* ----- delivery.c ------------------------------------------------------------------------- */

/* Adds a delivery record of sub to the simulation (outstanding, count 1). */
ws_delivery *wsi_delivery_new(ws_sim *sim, ws_sub *sub);
/* Appends cmd (ownership taken) to d's effects as a WSI_EFFECT_* kind; returns its index. */
size_t wsi_effect_add(ws_delivery *d, wsi_cmd *cmd, int kind);
/* A stream entry's field-value list as delivered (arr: the reply's array). */
void wsi_delivery_set_fields(ws_delivery *d, const fr_reply *arr);
/* The same from a command's arguments c->argv[first..] (field, value, ...). */
void wsi_delivery_set_fields_from(ws_delivery *d, const wsi_cmd *c, int first);
/* Sets (adds or replaces) one field, as the framework inserts its headers into the fields
 * it read (subscriber.rs insert_meta_header). */
void wsi_delivery_set_field(ws_delivery *d, const char *name, long long value);
/* A list value's or channel message's fields as the framework decodes its id (a binary
 * frame's payload and headers, or the whole value as the payload). */
void wsi_delivery_message_fields(ws_delivery *d);

/* ----- runtime.c -------------------------------------------------------------------------- */

/* Records a refusal on sim (errstr = the sentence) and returns code. */
int wsi_fail(ws_sim *sim, int code, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
/* The seeded generator. */
uint64_t wsi_rand(ws_sim *sim);
/* The clock now (ms). */
int64_t wsi_now(const ws_sim *sim);
/* Moves the clock on by ms and fires the timers that fell due (ws_sim_advance without the
 * end of a public call). */
int wsi_advance(ws_sim *sim, int64_t ms);
/* Sets a retry timer: cmd goes through the pool when the clock reaches due. */
void wsi_timer_add(ws_sim *sim, ws_sub *sub, ws_delivery *d, int64_t due, wsi_cmd *cmd);
/* Frees every timer (a process that is gone). */
void wsi_timers_free(ws_sim *sim);

/* Sends a round trip of n commands on c (the admin connection, the consumer's reader or
 * window, a channel subscription's), described by an (what each command is for).  Once the
 * round trip happened, each command's effective outcome is worked out (wsi_effective), the
 * delivery ledger updated from it (wsi_ledger), and the trace -- unless it is off -- told
 * (wsi_trace_round_trip).  A fault that kills the process ends it (wsi_process_end) and
 * this returns WS_ECRASHED: the caller returns it up to the public call, whose end
 * (wsi_api_end) frees what the process held.  replies as ws_pipeline. */
int wsi_send(ws_sim *sim, ws_conn *c, size_t n, wsi_cmd *const *cmds, const wsi_annot *an,
             const fr_reply **replies);
/* The consumer process ends: its crash point and the trace's note ("crashed", "stopped"
 * and why), its connections closed, dead from now on; what it held waits for
 * wsi_process_gone (sim->gone_pending). */
void wsi_process_end(ws_sim *sim, const char *how, const char *why);
/* Channel subscriptions: buffers what arrived (waiting at most wait_ms for the first). */
int wsi_channel_poll(ws_sub *sub, int wait_ms);
/* Appends text to buf (size bytes, NUL-terminated, cut when full) from *at: the causes of
 * reads and writes are written at every step, without the printf machinery. */
void wsi_cause_put(char *buf, size_t size, size_t *at, const char *text);
/* "<a><n><b><name>", e.g. "read 3 of main". */
void wsi_cause_numbered(char *buf, size_t size, const char *a, uint64_t n, const char *b,
                        const char *name);
/* The command that publishes payload (with headers) to key in form (§6, and how the
 * producer produces): stream `XADD <key> * _payload <p> h:<name> <value>...`, list
 * `LPUSH <key> <frame>`, channel `PUBLISH <key> <frame>`. */
wsi_cmd *wsi_publish_cmd(int form, const char *key, const char *payload, size_t len,
                         const ws_header *h, size_t nh);
/* The lineage root of a delivered entry (by copy id or by payload), 0 if unknown. */
size_t wsi_root_of(ws_sim *sim, ws_delivery *d);
/* Remembers that the copy with id `copy` descends from delivery d. */
/* (A copy to d's own key: the runtime's dead-letter copies are not followed.) */
void wsi_lineage_add(ws_sim *sim, ws_delivery *d, const char *copy, size_t len);
/* Keeps a warning (ws_sim_warning) and notes it in the trace. */
void wsi_warn(ws_sim *sim, const char *text);

/* ----- outcome.c --------------------------------------------------------------------------- */

enum { WSI_COPY_NONE = 0, WSI_COPY_SUBSCRIPTION, WSI_COPY_DEAD_LETTER };

/* What the runtime makes of an outcome (dispatch.rs settle_outcome). */
typedef struct wsi_plan {
    ws_outcome broker;   /* what the broker settles: WS_ACK; WS_DROP (XACK, LREM; nothing on
                            a plain list or channel); WS_RETRY (its own requeue: a stream's
                            verbatim XADD, a reliable list's LPUSH, a claiming read leaves
                            it pending; a plain list or channel cannot); WS_RETRY_AFTER
                            (its own delay: the delay queue, a claiming read); WS_ABANDON */
    int copy;            /* WSI_COPY_*: the runtime's copy, published after the settle */
    int64_t delay_ms;    /* ... after this long (0: at once, through the pool) */
    int rejected;        /* at the cap of max-attempts with no dead letter */
} wsi_plan;

wsi_plan wsi_plan_outcome(const ws_delivery *d, ws_outcome o, int64_t delay_ms);
/* Publishes (or sets the timer of) the plan's copy of d, once its settle is done; a note
 * in the trace for a rejection.  The failure codes of wsi_send. */
int wsi_publish_copy(ws_delivery *d, const wsi_plan *p);
/* The message's fields for a copy: "_payload" then the h:* fields as delivered (other
 * fields are not the message's: convert.rs), the retry counter raised when `raise`. */
void wsi_copy_fields(const ws_delivery *d, int raise, wsi_cmdb *b);
/* The broker's own requeue of d: a stream's XADD of the fields as delivered, a reliable
 * list's LPUSH of the value as it was. */
wsi_cmd *wsi_requeue_copy(const ws_delivery *d);
/* The delay-queue writes of a retry_after: ZADD <zset> <due> <member> [+ PEXPIRE]. */
size_t wsi_delay_writes(const ws_delivery *d, int64_t delay_ms, wsi_cmd **out);

/* ----- window.c ---------------------------------------------------------------------------- */

/* Settles d (outcome != WS_ABANDON) or abandons it, and flushes when due. */
int wsi_settle(ws_delivery *d, ws_outcome outcome, int64_t delay_ms);
/* Flushes whatever sub's window owes; why names the trigger. */
int wsi_flush(ws_sub *sub, const char *why);
/* Direct mode: runs the delivery's settle at once. */
int wsi_direct_settle(ws_delivery *d, ws_outcome outcome, int64_t delay_ms);
/* Records a failure report for sub unless one waits already. */
void wsi_report(ws_sub *sub, size_t commands, size_t settles, size_t failed,
                const char *first_error, size_t first_len);
/* Gives the deliveries of the latest read from index first their slots: one each, or one
 * per batch of cfg.batch. */
void wsi_assign_slots(ws_sub *sub, size_t first);
/* Queues cmd (ownership taken) into d's segment (its batch's), as an effect of kind. */
void wsi_segment_queue(ws_delivery *d, wsi_cmd *cmd, int kind);
/* Frees what sub held in a process that is gone: window, segments, batches, slots,
 * buffered messages, its channel connection; outstanding deliveries are marked dead. */
void wsi_window_reset(ws_sub *sub);
/* Frees what the dead process held: every subscription's window, the timers. */
void wsi_process_gone(ws_sim *sim);
/* The end of every public call that may send: when one of its round trips crashed the
 * process (wsi_process_end), frees what the process held (wsi_process_gone).  Returns rc. */
int wsi_api_end(ws_sim *sim, int rc);

/* ----- sub.c ------------------------------------------------------------------------------ */

/* Frees a subscription (its window state first). */
void wsi_sub_free(ws_sub *sub);
/* Starts a subscription in a (new) incarnation: consumer name, group, channel subscription. */
int wsi_sub_start(ws_sub *sub);

/* ----- codec.c: the framework's encodings -------------------------------------------- */

/* A message's parts travel in stream form: "_payload", payload, "h:<name>", value, ...  */

/* The delay-queue member of a retry_after (delay.rs encode_member): [u32 id length][id]
 * [binary frame of fields].  Heap, *len its length. */
char *wsi_dq_encode(const char *id, size_t id_len, char *const *fields,
                    const size_t *lens, size_t n, size_t *len);
/* Decodes a member; returns the number of strings (the id, then the fields in stream
 * form) or -1 when it is not a member.  *out and *lens: free with wsi_strings_free. */
long wsi_dq_decode(const char *p, size_t len, char ***out, size_t **lens);
void wsi_strings_free(char **s, size_t *lens, size_t n);
/* A list or channel message as the framework's publishers write it: the binary frame,
 * headers or not (envelope.rs).  Heap. */
char *wsi_frame_encode(const char *payload, size_t plen, const ws_header *h, size_t nh,
                       size_t *len);
/* The binary frame of fields in stream form (always framed, even without headers: how the
 * framework re-frames a copy).  Heap. */
char *wsi_frame_fields(char *const *fields, const size_t *lens, size_t n, size_t *len);
/* A list or channel value as the framework decodes it, in stream form: a frame's payload
 * and headers, or (not a frame) the whole value as the payload.  Returns the count (>= 2);
 * free with wsi_strings_free. */
long wsi_frame_decode(const char *p, size_t len, char ***out, size_t **lens);

/* A reliable list's recovery member (recovery.rs claim_member): [u32 process id][u64 BE
 * per-process counter][the value].  Heap, *mlen its length.  wsi_recovery_value gives the
 * value inside a member (NULL when it is too short to be one). */
char *wsi_recovery_member(uint32_t pid, uint64_t counter, const char *value, size_t len,
                          size_t *mlen);
const char *wsi_recovery_value(const char *member, size_t len, size_t *vlen);

/* ----- ledger.c: what each delivery's commands did ----------------------------------- */

/* Each command's effective outcome in round trip rt (eff[0..rt->n)). */
void wsi_effective(const ws_round_trip *rt, const wsi_annot *an, wsi_eff *eff);
/* Updates the deliveries' ledger (their effects' fates, settles, EXEC results, copies) and
 * the published messages from one round trip whose outcomes are eff. */
void wsi_ledger(ws_sim *sim, const ws_round_trip *rt, wsi_cmd *const *cmds,
                const wsi_annot *an, const wsi_eff *eff);

/* ----- trace.c ---------------------------------------------------------------------------- */

/* Appends a free-form record to the trace (nothing without trace text). */
void wsi_trace_note(ws_sim *sim, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Records one round trip in the trace: its text, its flush record's commands and
 * diagram lines, the round-trip map.  Reads the round trip, its annotation and the
 * effective outcomes; writes nothing the ledger or the checks read. */
void wsi_trace_round_trip(ws_sim *sim, const ws_round_trip *rt, wsi_cmd *const *cmds,
                          const wsi_annot *an, const wsi_eff *eff);

#endif /* SIM_INT_H */
