/* ws_sim.h -- libwsim's consumer model: one simulated consumer of ../shared/SEMANTICS.md,
 * driven step by step against the in-process fake or a real server.
 *
 * A ws_sim is one world: a server (the fake, made and owned by the simulation, or a real
 * one reached by URL), one virtual clock, one seed, an admin connection for setup and
 * checks, and one consumer process.  The process has two connections, as the framework
 * has: the "reader" (reads, sweeps) and the "window" (the pool: pool commands, flushes,
 * settles, retry copies), both behind the fault layer of ws_conn.h, and any number of
 * subscriptions (ws_sub), each with its own window.
 *
 * The caller drives everything: a read hands out deliveries (ws_delivery); for each, any
 * number of actions (queue into the segment, run through the pool, publish, bind) and
 * then an outcome (ack, drop, retry, retry_after) or abandonment, in any order across
 * deliveries.  Flushes happen when SEMANTICS.md §3 says, inside the call that triggers
 * them.  A crash (ws_sim_crash, or an armed fault firing) drops the process's whole
 * memory; ws_sim_restart makes a fresh one whose subscriptions recover through the
 * configured paths.  Every round trip is recorded in the trace (ws_sim_trace_text) with
 * what caused it and which delivery each command came from; ws_sim_check evaluates the
 * invariants of §8 against the server's final state and the trace.
 *
 * Errors: functions return 0 or a negative WS_E* code (ws_conn.h's table); the
 * simulation keeps the last refusal's message (ws_sim_errstr), one sentence naming the
 * delivery.  Out of memory aborts the process with one line on stderr, "wsim: out of
 * memory in libwsim" (as ws_conn.h says why: a step lost to it would be a wrong verdict);
 * the in-process fake's own memory follows fakeredis.h.  Nothing here is thread safe,
 * nothing reads the wall clock on the fake.
 */
#ifndef WS_SIM_H
#define WS_SIM_H

#include <stddef.h>
#include <stdint.h>

#include "fakeredis.h"
#include "ws_conn.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The engine's version (wsim --version prints it). */
#define WS_VERSION "0.1.0"

/* One framework file the engine follows, at the revision read (engine/framework.pins, the
 * one place that says so; docs/engine.md cites it, wsim --version lists it). */
typedef struct ws_framework_pin {
    const char *repo;    /* "powersemmi/ruststream-fred" or "powersemmi/ruststream" */
    const char *path;    /* the file's path in the repository */
    const char *commit;  /* the commit of the version read (7 to 40 hex digits) */
    const char *what;    /* what the engine takes from it ("" if nothing said) */
} ws_framework_pin;

/* How many framework files the engine follows, and the i-th (NULL past the end), in the
 * order engine/framework.pins lists them. */
size_t ws_framework_pin_count(void);
const ws_framework_pin *ws_framework_pin_at(size_t i);

typedef struct ws_sim ws_sim;
typedef struct ws_sub ws_sub;
typedef struct ws_delivery ws_delivery;

/* ----- The world ---------------------------------------------------------------------- */

typedef struct ws_sim_config {
    const char *backend; /* NULL or "fake": a new in-process fake owned by the simulation;
                            "redis://host:port" or "unix:///path": a real server */
    uint64_t seed;       /* drives consumer names, salts and the fake's randomness */
    int64_t start_ms;    /* the fake's clock at the start (0: 1,700,000,000,000); a real
                            server's clock is its own (the wall clock) */
    int cluster;         /* the server is a one-node Redis Cluster: the fake emulates one
                            (CROSSSLOT); a real server must be one (not checked).  Either
                            way warn_crossslot is on */
    int timeout_ms;      /* real server: bound on every wait (0: 10 s) */
    int no_trace_text;   /* keep the ledger, the round-trip map and the flush commands,
                            but neither the trace text (ws_sim_trace_text gives "") nor
                            the flush diagrams' round trips (ws_sim_diagram shows their
                            headers and entries only): what the crash explorer's and the
                            fuzzer's many runs need, at less cost */
    int no_trace;        /* no trace at all: no text, no flush diagrams' round trips and
                            commands, no round-trip map (ws_sim_round_trip_count is 0).
                            The delivery ledger does not depend on the trace: the checks,
                            the published messages and the counts are what they are with
                            it (tests/unit/test_sim_ledger.c) */
    int no_faults;       /* the consumer's connections are plain, not ws_conn_faulty:
                            ws_fault_arm on them answers WS_EINVAL, and every round trip
                            costs a little less (the fuzzer's runs that arm nothing) */
    int mutant;          /* testing the checks: deliberately break one rule of the window
                            (a WS_MUTANT_*), so that a test can show the invariant that
                            guards it fires; 0 in every real use */
    fr_server *reuse;    /* backend fake only: a fake of the caller's to use instead of a
                            new one.  ws_sim_new resets it (fr_server_reset: what a new
                            fake would be, with this seed, clock and cluster setting) and
                            ws_sim_free leaves it to the caller, reset or freed by the
                            next user: many short simulations in a row (the fuzzer's) make
                            no new server each.  NULL: a new fake, owned */
} ws_sim_config;

/* The rules ws_sim_config.mutant can break, each caught by one invariant of §8. */
enum {
    WS_MUTANT_NONE = 0,
    /* a dropped, retried or abandoned delivery's segment is committed anyway (window and
     * atomic modes, not batches): its commands leave with the flush -> "leaked" */
    WS_MUTANT_KEEP_DISCARDED,
    /* an atomic segment's own settle leaves after its EXEC, with the flush's shared
     * settles, instead of inside MULTI (not batches): a crash between EXEC and the settle,
     * or an EXEC that runs nothing, parts the two -> "split" */
    WS_MUTANT_SETTLE_OUTSIDE_EXEC,
    /* a reliable list's settle leaves out its LREM and keeps the ZREM of the claim: the
     * value stays on the processing list with no recovery member -> "stranded" */
    WS_MUTANT_SKIP_LREM,
};

/* Makes a simulation and starts its consumer process (no subscriptions yet).  Returns
 * NULL only when the fake cannot be made (its own out of memory); a real server that cannot be reached gives a simulation
 * whose ws_sim_err() is WS_ECONNECT, and whose calls all fail. */
ws_sim *ws_sim_new(const ws_sim_config *cfg);
void ws_sim_free(ws_sim *sim);

/* The last failure's code and message (one sentence; "" when none). */
int ws_sim_err(const ws_sim *sim);
const char *ws_sim_errstr(const ws_sim *sim);

/* The fake the simulation runs on, or NULL on a real server. */
fr_server *ws_sim_fake(ws_sim *sim);
/* Non-zero when running on a real server. */
int ws_sim_is_real(const ws_sim *sim);

/* The clock, in Unix ms: the fake's virtual clock; on a real server the simulation's own
 * reading of the wall clock, moved only by ws_sim_advance (which really waits). */
int64_t ws_sim_now(const ws_sim *sim);
/* Moves the clock by ms (>= 0) and then fires the consumer's due timers (retry copies
 * published through the pool, §2.1), in deadline order.  On a real server it sleeps ms.
 * Returns 0 or the first failure of a timer's round trip. */
int ws_sim_advance(ws_sim *sim, int64_t ms);

/* Runs one command on the admin connection (setup and checks; not the consumer's), cause
 * "setup" in the trace.  *reply (if not NULL) is valid until the next admin call.  An
 * error reply is not a failure. */
int ws_sim_command(ws_sim *sim, int argc, const char *const *argv, const size_t *argvlen,
                   const fr_reply **reply);
/* The same with the trace's cause given ("check": a scenario's check, not its setup). */
int ws_sim_command_as(ws_sim *sim, const char *cause, int argc, const char *const *argv,
                      const size_t *argvlen, const fr_reply **reply);
/* The same with a redis-cli style line ("SET k \"a b\""). */
int ws_sim_command_line(ws_sim *sim, const char *line, const fr_reply **reply);

/* One header of an entry or a publish. */
typedef struct ws_header {
    const char *name;
    const char *value;
    size_t value_len; /* 0 with value != NULL: strlen(value) */
} ws_header;

/* Produces one entry the way the framework's producer does, on the admin connection
 * (cause "produce"): a stream gets `XADD <key> * _payload <payload> h:<name> <value>...`,
 * a list `LPUSH <key> <frame>`, a channel `PUBLISH <key> <frame>` (the binary frame of
 * docs/engine.md, headers or not: the framework's publishers always frame a value).  The
 * simulation remembers what it produced: ws_sim_check accounts for every produced entry.
 * *id (may be NULL) gets the stream id or the frame (heap, wsi_free() it). */
int ws_sim_produce(ws_sim *sim, int form, const char *key, const char *payload,
                   size_t payload_len, const ws_header *headers, size_t nheaders,
                   char **id);
/* The same for a list or a channel, with the bare payload as the value instead of a frame:
 * what a producer outside the framework writes, which the framework decodes as a payload
 * without headers (envelope.rs unframe).  WS_EINVAL for a stream (its entry has fields). */
int ws_sim_produce_raw(ws_sim *sim, int form, const char *key, const char *payload,
                       size_t payload_len, char **id);

/* ----- The consumer process ------------------------------------------------------------ */

/* Kills the consumer process now, between two commands: its window, slots, segments,
 * timers and delayed copies are gone; the server keeps what it applied.  Every handle of
 * the process becomes stale.  An armed fault that fires (ws_conn.h: crash, lost replies)
 * does the same.  Returns 0 (WS_EDEAD if it was dead already). */
int ws_sim_crash(ws_sim *sim);
/* Stops the consumer process gracefully, as the framework's shutdown does: every live
 * subscription's window drains (what it owes is flushed, cause "shutdown"), then the
 * process ends.  Outstanding deliveries are abandoned (their entries stay pending or on
 * the processing list), and the runtime's delayed copies die with the process (its
 * timers are detached tasks nothing awaits: docs/engine.md).  ws_sim_restart starts the
 * next one.  Returns 0, WS_ECRASHED when an armed fault killed it during the drain, or
 * WS_EDEAD when it was dead already. */
int ws_sim_shutdown(ws_sim *sim);
/* The same stop when the windows' drains lose their race with the pool's QUIT: the
 * framework spawns each drain on a task nothing awaits and then quits the pool (source.rs,
 * app/run.rs), so what a window owes may never leave.  Nothing is flushed; what the windows
 * owed stays with the broker (pending, or on the processing list).  Returns 0 or WS_EDEAD. */
int ws_sim_shutdown_drains_lost(ws_sim *sim);
/* Non-zero while the process is dead (crashed and not restarted). */
int ws_sim_dead(const ws_sim *sim);
/* Starts a fresh process: new connections, and every subscription made so far started
 * again with an empty window (a generated consumer name is drawn again).  Recovery is
 * what the subscriptions' reads do: reclaim reads, list orphan sweeps, delay-queue sweeps.
 * Returns 0. */
int ws_sim_restart(ws_sim *sim);
/* How many times the process was started (1 after ws_sim_new). */
unsigned ws_sim_incarnation(const ws_sim *sim);

/* The process's connections, to arm faults on (ws_fault_arm): they are ws_conn_faulty
 * connections (plain ones under ws_sim_config.no_faults), labelled "reader" and "window",
 * and change at every restart. */
ws_conn *ws_sim_reader(ws_sim *sim);
ws_conn *ws_sim_window(ws_sim *sim);
/* A channel subscription's own connection (labelled "subscriber"), NULL for other
 * forms or while the process is dead. */
ws_conn *ws_sub_connection(ws_sub *sub);

/* ----- Subscriptions --------------------------------------------------------------------- */

typedef enum ws_form {
    WS_FORM_STREAM = 1,   /* a stream with a consumer group (§2.1) */
    WS_FORM_RELIABLE_LIST,/* LMOVE into a processing list (§2.2) */
    WS_FORM_PLAIN_LIST,   /* RPOP (§2.3) */
    WS_FORM_CHANNEL,      /* Pub/Sub (§2.3) */
} ws_form;

typedef enum ws_mode {
    WS_MODE_DIRECT = 1, /* no window: every write and settle on its own (§7) */
    WS_MODE_WINDOW,     /* .pipeline() */
    WS_MODE_ATOMIC,     /* .pipeline().atomic() */
} ws_mode;

/* Where publishes go (the reply output and bound outputs). */
typedef struct ws_out {
    ws_form form;    /* WS_FORM_STREAM (XADD), a list form (LPUSH), WS_FORM_CHANNEL */
    const char *key; /* stream, list or channel */
} ws_out;

typedef struct ws_sub_config {
    ws_form form;
    ws_mode mode;
    const char *key;        /* stream, list or channel (or pattern with `pattern`) */
    const char *group;      /* stream: the consumer group, made when the subscription
                               starts (`XGROUP CREATE <key> <group> <start> MKSTREAM`
                               through the pool, BUSYGROUP taken as done: broker.rs
                               ensure_group), in every process */
    const char *group_start;/* stream: where a new group starts: "$" (NULL), "0" or an id */
    const char *consumer;   /* stream: the consumer name; NULL: "ruststream-<n>", n from a
                               per-process counter from 0 in subscription order
                               (stream.rs auto_consumer): a restarted process reads under
                               its predecessor's names */
    int reclaim;            /* stream: a reclaim subscription (XAUTOCLAIM), not `>` */
    int64_t min_idle_ms;    /* reclaim: XAUTOCLAIM's min-idle-time; reliable list: the
                               orphan sweep's age */
    size_t count;           /* COUNT per read (0: 64) */
    size_t batch;           /* batch handler: the batch size (0: one delivery a slot) */
    int64_t block_ms;       /* BLOCK of XREADGROUP, BLMOVE/BRPOP's timeout, the wait for
                               Pub/Sub messages (ms; sent as seconds "0.010" for lists;
                               0: 10 ms -- never BLOCK 0, which waits for ever) */
    const char *delay_queue;/* stream: a sorted set for retry_after, or NULL */
    int64_t delay_ttl_ms;   /* delay queue: PEXPIRE after each ZADD (0: none) */
    const char *processing; /* reliable list: processing list (NULL: <key>.processing) */
    const char *recovery;   /* reliable list: the recovery sorted set, or NULL */
    int pattern;            /* channel: PSUBSCRIBE instead of SUBSCRIBE */
    size_t buffer;          /* channel: how many unread messages the subscriber's client
                               holds (0: 32, fred's PerformanceConfig default
                               broadcast_channel_capacity, which ruststream-fred's dedicated
                               Pub/Sub client keeps: broker.rs new_client); a power of two,
                               as a broadcast channel's capacity is.  A read that finds more
                               skips the oldest (pubsub.rs round_stream: RecvError::Lagged,
                               "skip the gap"): counted in ws_sim_counts.skipped and warned
                               (ws_sim_warning).  wsim's own knob: the framework sets none */
    const char *name;       /* the name in reports (NULL: the key, as §5 says) */
    const char *label;      /* the name in the trace, its causes and diagrams (NULL: the
                               report name, "<key> (reclaim)" for a reclaim subscription,
                               and "#2", "#3"... appended while it is not unique) */
    ws_out reply;           /* where ws_reply publishes (key NULL: no reply output) */
    int reply_in_round;     /* the InRound transform on the reply */
    unsigned max_attempts;  /* the registration's max_attempts(n) (0: none): a retry whose
                               attempt (the retry counter + 1, or the server's delivery
                               count) reaches n goes to the dead letter, or is rejected
                               (settled as dropped).  With it or dead_letter, a retry is
                               the runtime's: settled first, then a copy published
                               through the pool with the counter raised (docs/engine.md) */
    const char *dead_letter;/* dead_letter(dest): where a capped retry's copy goes (a key
                               a subscription reads as a list or channel gets LPUSH or
                               PUBLISH of the frame; any other key, XADD); without
                               max_attempts every retry goes there */
    int claiming;           /* stream: RedisStream::claiming -- XREADGROUP ... CLAIM
                               min_idle_ms (Redis 8.4): pending entries idle that long come
                               back with the fresh ones; retry settles nothing */
    int64_t recovery_ttl_ms;/* reliable list with recovery: PEXPIRE of the recovery set
                               after each read's claims (0: none) */
    int warn_crossslot;     /* atomic: warn (ws_sim_warning) when a committed segment
                               touches a key outside the slot of the subscription's key,
                               before sending it; on by default with cluster emulation.
                               The framework does not check; the server refuses. */
} ws_sub_config;

/* Adds a subscription to the process (strings are copied).  Stream, list and channel
 * forms with every mode.  A channel subscription gets a connection of its own ("subscriber":
 * a subscribed connection can do nothing else) and SUBSCRIBEs on it at once.  NULL on
 * a malformed config (ws_sim_errstr says why). */
ws_sub *ws_subscribe(ws_sim *sim, const ws_sub_config *cfg);
/* The subscription's label (the trace: "read 2 of <label>", "flush 1 of <label>"); reports
 * carry its report name (ws_sub_config.name, the key by default). */
const char *ws_sub_name(const ws_sub *sub);
/* The consumer name it reads as in this incarnation (streams), else "". */
const char *ws_sub_consumer(const ws_sub *sub);

/* A failure report (§5): the subscription, the failed flush's command count (segment
 * replies), settle count (retry writes and settles), failed count and first error. */
typedef struct ws_report {
    const char *subscription;
    size_t commands;
    size_t settles;
    size_t failed;
    const char *first_error; /* without the leading '-' */
    uint64_t flush;          /* which flush of the subscription failed (1-based) */
} ws_report;

/* What one ws_read gave: either the report that waited (then nothing was read) or a
 * read's deliveries. */
typedef struct ws_read_result {
    int is_report;       /* the next item of the delivery stream was a report */
    ws_report report;    /* valid until the next ws_read of this subscription */
    uint64_t read;       /* the read's number in this subscription (1-based) */
    size_t n;            /* deliveries handed out */
} ws_read_result;

/* The next items of the delivery stream: if a failure report waits, it is handed out
 * (once) and nothing is read; else the sweeps run (delay queue, list orphans) and one read
 * is made, and its deliveries become outstanding.  WS_ECRASHED when the read crashed the
 * process (the subscription then has nothing), WS_EDEAD when it is dead, WS_ESTATE when
 * the subscription stopped. */
int ws_read(ws_sub *sub, ws_read_result *out);
/* Delivery i (0-based) of the subscription's latest read, or NULL. */
ws_delivery *ws_read_delivery(ws_sub *sub, size_t i);
/* The outstanding delivery of the current incarnation whose id is id (stream id, list
 * value, channel message), the most recent if several; NULL if none. */
ws_delivery *ws_find(ws_sub *sub, const char *id);

/* Stops the subscription: whatever its window owes is flushed; later reads and settles
 * are refused (WS_ESTATE).  Returns 0 or the flush's failure. */
int ws_stop(ws_sub *sub);

/* ----- Deliveries -------------------------------------------------------------------------- */

typedef enum ws_outcome {
    WS_ACK = 1,
    WS_DROP,
    WS_RETRY,
    WS_RETRY_AFTER,
    WS_ABANDON, /* no outcome: the handler died (ws_abandon) */
} ws_outcome;

/* Its id: the stream entry id, the list value, or the channel message (NUL-terminated;
 * a list value or message may hold NULs: ws_delivery_id_size gives its length). */
const char *ws_delivery_id(const ws_delivery *d);
size_t ws_delivery_id_size(const ws_delivery *d);
/* The payload (`_payload`, or the whole value/message) and one header (NULL if absent). */
const char *ws_delivery_payload(const ws_delivery *d, size_t *len);
const char *ws_delivery_header(const ws_delivery *d, const char *name, size_t *len);
/* The framework's retry counter header (SEMANTICS.md §2; a stream entry's field
 * "h:" WS_RETRY_HEADER): decimal, missing = 0. */
#define WS_RETRY_HEADER "x-ruststream-retry-count"
/* The framework's retry counter (WS_RETRY_HEADER; 0 when missing). */
long long ws_delivery_retries(const ws_delivery *d);
/* Reclaim reads: the delivery count XPENDING gave; otherwise 1. */
long long ws_delivery_count(const ws_delivery *d);
/* Its slot and the slot's generation in the window. */
unsigned ws_delivery_slot(const ws_delivery *d);
unsigned ws_delivery_generation(const ws_delivery *d);
/* Non-zero once it settled or was abandoned (its handle is then stale). */
int ws_delivery_done(const ws_delivery *d);
/* Its subscription and its outcome (0 while outstanding). */
ws_sub *ws_delivery_sub(const ws_delivery *d);
ws_outcome ws_delivery_outcome(const ws_delivery *d);
/* The produced entry it descends from (1-based, in ws_sim_produce order; a retry copy
 * descends from its original), 0 when it was not produced through ws_sim_produce. */
size_t ws_delivery_root(ws_delivery *d);

/* Queues a command into the delivery's segment (the batch's, for a batch handler); the
 * segment is made at the first one.  Direct mode has no window: the command runs at once
 * through the pool (cause "direct write").  Refusals: WS_ESTALE (the delivery settled:
 * a stale handle joins no later delivery), WS_EDEAD, WS_EINVAL. */
int ws_queue(ws_delivery *d, int argc, const char *const *argv, const size_t *argvlen);
int ws_queue_line(ws_delivery *d, const char *line);
/* Runs a command through the pool at once (window connection, cause "pool") and gives
 * its reply (valid until the next call on the window connection).  Never discarded,
 * never inside MULTI.  d may be NULL for a command outside any handler. */
int ws_pool(ws_sim *sim, ws_delivery *d, int argc, const char *const *argv,
            const size_t *argvlen, const fr_reply **reply);
int ws_pool_line(ws_sim *sim, ws_delivery *d, const char *line, const fr_reply **reply);

/* Publishes through out (§6): if this delivery bound out, or it is the reply output with
 * InRound, the publish joins the segment; otherwise it is sent at once through the pool. */
int ws_publish(ws_delivery *d, const ws_out *out, const char *payload, size_t len,
               const ws_header *headers, size_t nheaders);
/* Publishes the handler's reply on the subscription's reply output. */
int ws_reply(ws_delivery *d, const char *payload, size_t len);
/* bind(out): later publishes of this delivery through out join its segment. */
int ws_bind(ws_delivery *d, const ws_out *out);

/* Settles the delivery with an outcome (delay_ms for WS_RETRY_AFTER), and flushes if the
 * window says so.  Returns 0 even when the flush had error replies (they become a
 * report); WS_ESTALE for a second settle; WS_ECRASHED if a fault killed the process
 * during the flush; WS_EDEAD when dead. */
int ws_settle(ws_delivery *d, ws_outcome outcome, int64_t delay_ms);
/* Abandons it (no outcome): the segment goes, nothing is owed, the entry stays pending. */
int ws_abandon(ws_delivery *d);

/* How many entries ws_sim_produce made, and the id (stream) or frame (list, channel) of
 * entry i (1-based), NULL past the end. */
size_t ws_sim_produced_count(const ws_sim *sim);
const char *ws_sim_produced_id(const ws_sim *sim, size_t i);
/* Its length (a frame may hold NULs), 0 past the end. */
size_t ws_sim_produced_id_size(const ws_sim *sim, size_t i);

/* ----- The trace --------------------------------------------------------------------------- */

/* The whole trace so far as text (heap, wsi_free() it): one block per round trip of every
 * connection, in order, with the cause and, per command, its reply, its fate and the
 * delivery it came from; crashes and restarts as lines of their own.  Deterministic: the
 * same inputs give the same bytes on the fake. */
char *ws_sim_trace_text(const ws_sim *sim, size_t *len);
/* The flush diagrams (every flush of every subscription), in the spirit of the seed page
 * "Window": per flush its round trips, each command with the delivery it came from and
 * that delivery's outcome.  Heap, wsi_free() it. */
char *ws_sim_diagram(const ws_sim *sim, size_t *len);
/* FNV-1a 64 of ws_sim_trace_text: two runs agree iff their traces are byte-identical. */
uint64_t ws_sim_trace_hash(const ws_sim *sim);
/* Round trips made by the consumer process(es) so far: in total, on reads (and sweeps and
 * claims), on flushes, and through the pool (pool commands, direct writes and settles,
 * publishes, runtime copies, timers).  A subscription's start (its group made, its
 * channel subscribed) counts in the total only. */
typedef struct ws_sim_counts {
    uint64_t round_trips, read_round_trips, flush_round_trips, pool_round_trips;
    uint64_t reads, deliveries, flushes, reports;
    uint64_t skipped;   /* channel messages a read skipped: its subscriber had fallen further
                           behind than its buffer holds (ws_sub_config.buffer) */
} ws_sim_counts;
ws_sim_counts ws_sim_get_counts(const ws_sim *sim);

/* One command of a flush, as sent. */
typedef struct ws_flush_command {
    size_t round_trip;         /* 1-based within the flush */
    size_t pipeline;           /* 1-based within the flush: each committed segment is a
                                  pipeline of its own (MULTI to EXEC in atomic mode), then
                                  the retry writes, then the settles (§3) */
    const char *text;          /* the command as the trace prints it (NULL from
                                  ws_sub_flush_command_args when not rendered yet) */
    const char *reply;         /* the reply as the trace prints it ("(none)" if none) */
    const ws_delivery *from;   /* the delivery it came from (segment, MULTI, EXEC, own
                                  settle, retry write, list settle); NULL for a shared
                                  XACK */
    const char *role;          /* what it is: "segment", "MULTI", "EXEC", "own settle",
                                  "retry write", "settle" (static; NULL: none of those) */
    const char *fate;          /* NULL when the server applied it as sent; else "lost",
                                  "not sent", "outcome unknown", "injected" or "queued,
                                  then discarded: EXEC never ran" (static) */
    uint64_t rt_index;         /* its round trip's number on the connection (the trace's
                                  and the diagram's "#N") */
    int rt_status;             /* 0 or the WS_E* code that round trip ended with */
    const ws_delivery *const *settles; /* a shared XACK: the deliveries it settles, in
                                  its order; NULL otherwise */
    size_t nsettles;
    int argc;                  /* the command's arguments, as sent */
    const char *const *argv;
    const size_t *argvlen;
    int fate_code;             /* its ws_fate as the connection recorded it:
                                  WS_FATE_UNSENT when a crash stopped the consumer before it
                                  left */
} ws_flush_command;
/* The number of flushes sub made so far, and command i (0-based) of its flush number
 * `flush` (1-based): 0, or -1 past the end. */
uint64_t ws_sub_flushes(const ws_sub *sub);
int ws_sub_flush_command(const ws_sub *sub, uint64_t flush, size_t i, ws_flush_command *out);
/* The same without rendering the command's text (out->text is NULL unless the trace or
 * ws_sub_flush_command rendered it): what a comparison on the arguments needs, at no
 * cost for the text. */
int ws_sub_flush_command_args(const ws_sub *sub, uint64_t flush, size_t i,
                              ws_flush_command *out);

/* Every flush of the simulation as data, in the order they left: what ws_sim_diagram
 * prints, for pictures (`wsim diagram --format svg`).  All of it stays valid until
 * ws_sim_free. */
typedef struct ws_flush_info {
    const ws_sub *sub;       /* its subscription (ws_sub_name: the label) */
    uint64_t number;         /* the subscription's flush number (1-based) */
    uint64_t read;           /* the subscription's latest read when it left */
    const char *why;         /* "capacity", "nothing outstanding", "stop", "abandon", ... */
    size_t deliveries;       /* the deliveries it settled (ws_sim_flush_delivery) */
    size_t commands;         /* the commands it sent (ws_sim_flush_command) */
    size_t round_trips;      /* the round trips it took */
} ws_flush_info;
/* One delivery a flush settled, as the diagram's "entry" line shows it. */
typedef struct ws_flush_delivery {
    const ws_delivery *d;    /* the delivery: what ws_flush_command.from and .settles
                                point at */
    const char *id;          /* its id as the diagram shows it (printable) */
    const char *outcome;     /* "ack", "drop", "retry", "retry_after", "abandoned",
                                "lost in a crash", "outstanding" */
    const char *segment;     /* "segment kept", "segment dropped", "segment open",
                                "no segment" */
    size_t queued;           /* the commands its handler queued */
} ws_flush_delivery;
/* How many flushes the simulation made (every subscription, every process). */
size_t ws_sim_flush_count(const ws_sim *sim);
/* Flush i (0-based), its delivery k and its command k (0-based, in settle and sending
 * order): 0, or -1 past the end. */
int ws_sim_flush(const ws_sim *sim, size_t i, ws_flush_info *out);
int ws_sim_flush_delivery(const ws_sim *sim, size_t i, size_t k, ws_flush_delivery *out);
int ws_sim_flush_command(const ws_sim *sim, size_t i, size_t k, ws_flush_command *out);

/* Messages PUBLISHed through the simulation's connections (produce, publishes, segments)
 * that took effect -- an error reply, or a MULTI whose EXEC never ran, publishes nothing --
 * in the order they took effect: message i's channel and payload (valid for the
 * simulation's life).  -1 past the end. */
size_t ws_sim_published_count(const ws_sim *sim);
int ws_sim_published(const ws_sim *sim, size_t i, const char **channel, const char **payload,
                     size_t *payload_len);

/* Warnings the engine gave before sending (e.g. an atomic segment Redis Cluster will
 * refuse with CROSSSLOT), in order; also in the trace.  NULL past the end. */
size_t ws_sim_warning_count(const ws_sim *sim);
const char *ws_sim_warning(const ws_sim *sim, size_t i);

/* One round trip of the consumer (reader, window or subscriber connections; not the
 * admin's), in the order they happened: the crash explorer's map of crash points. */
typedef struct ws_rt_info {
    const char *conn;       /* the connection's label ("window", "reader.2") */
    const char *cause;      /* why ("read 2 of orders", "flush 1 of orders", "pool of 1-0",
                               "delay-queue sweep before read 2 of orders", ...) */
    unsigned incarnation;   /* the process that made it */
    uint64_t index;         /* its number on that connection (1-based) */
    size_t n;               /* commands */
    const char *const *commands; /* each as the trace prints it */
    int status;             /* 0 or the WS_E* code ws_pipeline returned */
} ws_rt_info;
size_t ws_sim_round_trip_count(const ws_sim *sim);
/* Round trip i (0-based) of the consumer; 0, or -1 past the end.  Without trace text
 * (ws_sim_config.no_trace_text) the commands' texts are rendered at the first call. */
int ws_sim_round_trip(const ws_sim *sim, size_t i, ws_rt_info *out);
/* The same without rendering the commands' texts (out->commands is NULL unless the trace
 * or ws_sim_round_trip rendered them): with ws_sim_round_trip_command, what a comparison
 * on the arguments needs. */
int ws_sim_round_trip_args(const ws_sim *sim, size_t i, ws_rt_info *out);
/* The arguments of command k of round trip i, as sent (what commands[k] shows, unquoted):
 * 0, or -1 past the end.  *argc is 0 (and *argv NULL) for a command the engine did not
 * build, which the text shows blank. */
int ws_sim_round_trip_command(const ws_sim *sim, size_t i, size_t k, int *argc,
                              const char *const **argv, const size_t **argvlen);

/* ----- Checks ----------------------------------------------------------------------------- */

/* One broken invariant: which, the entry it concerns, and a sentence. */
typedef struct ws_violation {
    const char *invariant; /* "lost", "leaked", "split", "doubled", "stranded" */
    const char *entry;     /* the produced entry's id (a list frame may hold NULs) */
    size_t entry_size;     /* its length */
    size_t root;           /* the produced entry (1-based, as ws_sim_produced_id counts) */
    const char *sentence;  /* one sentence naming the entry, the command, the crash point */
} ws_violation;

/* Evaluates §8's invariants on the server's present state and the trace: no produced
 * entry lost; no dropped or retried delivery's queued command applied; atomic segments
 * all or nothing; every effect applied twice named.  Fills *out (valid until the next
 * check or ws_sim_free) and *n.  Returns 0 (the check ran; *n may be > 0) or a failure to
 * read the server. */
int ws_sim_check(ws_sim *sim, const ws_violation **out, size_t *n);
/* Brings the checks' incremental state up to date with the deliveries made so far (each
 * filed by its produced entry; an entry delivered once and settled cleanly is marked
 * clean).  A ws_sim_check right after (nothing delivered in between) reads only the
 * entries that are neither clean nor unread, where it can tell that this finds every
 * violation the whole check finds (check.c: fast_source); without it, ws_sim_check reads
 * every entry.  The cost is the deliveries made since the last call: the crash explorer
 * calls it in the parent before each fork, so that a child files only what its own
 * crash and recovery added. */
void ws_sim_check_prepare(ws_sim *sim);

/* Whether a fresh read of sub (a stream subscription reading `>`: not reclaiming, not
 * claiming, no delay queue to sweep first) would now deliver only entries that
 * ws_sim_produce put into its stream and that no delivery of its group ever carried:
 * XINFO STREAM's entries-added equals the entries produced into the key and its last
 * generated id is the last produced entry's (so every entry the stream ever held is a
 * produced one, no retry copy among them), and no delivery of the group carried an id
 * after the group's last-delivered id.  Such an entry was never handed to a handler: no
 * effect of it can have applied, and it stays readable.  *only_fresh is 1 then, else 0
 * (any other form, or any doubt).  Returns 0, or the admin round trip's error.  The crash
 * explorer's bounded recovery leaves these entries unread (docs/wsim-explore.md). */
int ws_sub_fresh_only(ws_sub *sub, int *only_fresh);

/* ----- Encodings ------------------------------------------------------------------------- */

/* Decodes a delay-queue member (a retry_after through a delay queue; docs/engine.md,
 * "Encodings"): the strings it holds, the retried entry's id first, then the copy's
 * fields (name, value, ...).  Returns their number (>= 1) and sets *strings and *lens
 * (heap; free with ws_strings_free), or -1 (both NULL) when member is not the engine's
 * encoding. */
long ws_delay_member_decode(const char *member, size_t len, char ***strings, size_t **lens);
/* Frees what ws_delay_member_decode gave (n strings); NULL is accepted. */
void ws_strings_free(char **strings, size_t *lens, size_t n);

#ifdef __cplusplus
}
#endif

#endif /* WS_SIM_H */
