/* wsm_model.h -- the reference model of the settlement window: from a run's configuration and
 * steps (wsm_gen.h), what the engine must do, written from ../shared/SEMANTICS.md,
 * docs/engine.md and the framework's behaviour the engine follows since 6155edb (the
 * RustStream runtime and ruststream-fred: retry paths, copies, sweeps, encodings, reads),
 * as plainly as possible, sharing no code with engine/src.
 *
 * It follows one consumer process at a time through the run's steps, with its own small
 * Redis: the stream `k` with its group (entries, ids on the virtual clock, the pending
 * list with owners, delivery times and counts), the lists, the delay queue, the recovery
 * set, the dead letter, and the handlers' keys (`log`, counters, `str`, the outputs),
 * enough to answer every command a generated run sends.  From that it predicts:
 *
 *   - every round trip of the consumer, in order: connection, cause, each command as the
 *     trace prints it (ws_sim_round_trip) -- the groups made at each process's start,
 *     the sweeps and the claims through the pool, the reads, flushes, direct settles,
 *     publishes, and the runtime's copies (at once, to the dead letter, from timers);
 *   - every flush: its commands with their round trip, reply text and source entry
 *     (ws_sub_flush_command);
 *   - the counts of round trips by kind, reads, deliveries, flushes, reports and skipped
 *     channel messages (ws_sim_get_counts);
 *   - what each read hands out: a failure report (with its counts and first error) or
 *     deliveries (which entry each is, its id and its payload);
 *   - the final state: the group's pending list, the lists, the delay queue, the recovery
 *     set, the dead letter and the handlers' keys, as (admin command, reply text) pairs;
 *   - the invariant violations ws_sim_check must report (SEMANTICS.md §8 as docs/engine.md
 *     states it, with the framework's settled-at-the-cap cases), by kind and entry.
 *
 * Scope: every form (stream with a fresh and a reclaim subscription, delay queue with or
 * without TTL; reliable list with or without recovery; plain list; channel), every mode
 * (direct, window, atomic), batches (COUNT = the batch size), the runtime's outcomes
 * (undeclared retries as the broker's requeue, max-attempts, dead letters, rejection,
 * runtime copies at once or after a delay), replies in and outside the round, bound
 * publishes, the pool, abandon, stop, shutdown, crashes between steps and restarts,
 * generated consumer names, failure reports from error replies.  Not modelled: faults
 * (gen.h's fault mode), claiming reads (XREADGROUP ... CLAIM), group start ids, recovery
 * TTLs, pattern subscriptions, cluster emulation, real servers.
 *
 * What comes from the engine: the process id in list recovery members (drawn from the
 * simulation's seed at each process start), read off the first member each process makes
 * (the observations of the run's read steps); the members' counters are predicted.
 * Stream ids are predicted from the virtual clock, and compared.
 */
#ifndef WSM_MODEL_H
#define WSM_MODEL_H

#include <stddef.h>
#include <stdint.h>

#include "wsm_gen.h"

#ifdef __cplusplus
extern "C" {
#endif

/* One round trip of the consumer. */
typedef struct mdl_rt {
    char conn[32];        /* "reader", "window.2", "subscriber" */
    char *cause;          /* "read 2 of main", "flush 1 of main", "settle of <id>" ... */
    uint64_t index;       /* its number on that connection (1-based) */
    unsigned incarnation; /* the process that made it */
    size_t n;
    gen_cmd *args;        /* each command's arguments */
    char **cmds;          /* each command as the trace prints it (NULL from
                             mdl_predict_args) */
    size_t step;          /* the run's step that made it (index into run->steps; the
                             world's setup counts as step (size_t)-1) */
} mdl_rt;

/* One command of a flush. */
typedef struct mdl_fcmd {
    size_t rt;            /* round trip within the flush (1-based) */
    const gen_cmd *args;  /* the command's arguments */
    char *text;           /* ... as the trace prints them (NULL from mdl_predict_args) */
    char *reply;          /* the reply as ws_reply_text prints it */
    size_t from;          /* the entry (1-based) of the delivery it came from; 0 for a
                             shared XACK */
} mdl_fcmd;

typedef struct mdl_flush {
    int sub;              /* 0 main, 1 rescue */
    uint64_t number;      /* the subscription's flush number (1-based) */
    mdl_fcmd *cmds;
    size_t n;
} mdl_flush;

/* What one read step handed out. */
typedef struct mdl_read {
    size_t step;          /* index into run->steps */
    int is_report;
    size_t commands, settles, failed; /* the report */
    char *first_error;    /* the report's first error (no '-') */
    size_t n;             /* deliveries */
    size_t *entries;      /* per delivery: its entry (1-based) */
    gen_str *ids;         /* per delivery: its id (all of it) */
    gen_str *payloads;    /* per delivery: its payload (p NULL when it has none) */
} mdl_read;

/* One final-state check: run `command` on the admin connection, expect `reply`. */
typedef struct mdl_state {
    char *command;        /* a redis-cli line (gen_token quoting) */
    char *reply;          /* as ws_reply_text prints it */
} mdl_state;

/* One invariant violation ws_sim_check must report. */
typedef struct mdl_violation {
    char kind[12];        /* "lost", "leaked", "split", "doubled", "stranded" */
    size_t entry;         /* 1-based */
} mdl_violation;

/* The engine's counts (ws_sim_counts): round trips in total, on reads (with their sweeps
 * and claims), on flushes and through the pool (a subscription's start counts in the
 * total only); reads made, deliveries handed out, flushes, failure reports. */
typedef struct mdl_counts {
    uint64_t round_trips, read_round_trips, flush_round_trips, pool_round_trips;
    uint64_t reads, deliveries, flushes, reports;
    uint64_t skipped;     /* channel messages a read skipped (its subscriber's buffer) */
} mdl_counts;

typedef struct mdl_result {
    mdl_rt *rts;
    size_t nrts;
    mdl_counts counts;
    mdl_flush *flushes;   /* in the order they were made */
    size_t nflushes;
    mdl_read *reads;      /* one per read step, in step order */
    size_t nreads;
    mdl_state *state;
    size_t nstate;
    mdl_violation *viol;
    size_t nviol;
    char *error;          /* the model could not follow the run (a step acts on an entry
                             it never delivered, a fault in the run...): why; the rest
                             is what it predicted up to there */
    size_t error_step;    /* the step it stopped at */
    struct mdl_arena *arena; /* where all of the above lives (arrays and strings), with
                                the model's own working memory: mdl_result_free frees
                                it at once */
} mdl_result;

/* Predicts what the engine does with run (its configuration, steps and read
 * observations; the engine itself is not touched).  quirks: GEN_QUIRK_* deviations to
 * mimic.  Returns 0 (out filled; out->error says where it stopped, if it did); free with
 * mdl_result_free. */
int mdl_predict(const gen_run *run, unsigned quirks, mdl_result *out);
void mdl_result_free(mdl_result *r);
/* The same prediction without the commands' texts (mdl_rt.cmds and mdl_fcmd.text NULL):
 * gen_check compares the engine's commands with the model's on their arguments, and
 * writes a command's text only for a failure (mdl_cmd_text). */
int mdl_predict_args(const gen_run *run, unsigned quirks, mdl_result *out);
/* A command as the trace prints it (the form of mdl_arg_text, one space apart): heap. */
char *mdl_cmd_text(const gen_cmd *c);

/* An argument as the trace prints a command's argument (bare, or "quoted" with \\ \" \n
 * \r \t and \xHH escapes) appended to a heap buffer. */
void mdl_arg_text(char **buf, size_t *len, size_t *cap, const char *p, size_t n);

#ifdef __cplusplus
}
#endif

#endif /* WSM_MODEL_H */
