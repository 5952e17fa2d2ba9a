/* wsm_gen.h -- consumer runs made from a choice source (wsm_choice.h), played on the engine,
 * written out as scenario files, and checked against the reference model (wsm_model.h).
 *
 * A run is one world: a configuration (form, mode, COUNT, batch size -- COUNT is the batch
 * size when there is one --, delay queue, list recovery, reply output, max-attempts and a
 * dead letter, named or generated consumers, whether faults may be injected) and a list
 * of steps, each one line of a scenario file (docs/scenarios.md):
 *
 *   produce, read, queue, pool, publish, reply, bind, ack | drop | retry | retry-after |
 *   abandon, advance, crash, shutdown, restart, stop, fault
 *
 * gen_generate draws the configuration and then one step at a time from the choice
 * source, looking at the engine's state to draw only steps that are valid now (a settle
 * only for an outstanding delivery, a read only while the process lives...), and plays
 * each step on a fresh ws_sim as it goes.  What the engine answered (each read's
 * deliveries, each step's return code) is kept in the step ("observations"), so the model
 * and the scenario writer see exactly the run the engine saw.  It draws no step the
 * engine refuses: a second reply that would wait for the handler's Ok, a shutdown of a
 * dead process.  Choices are interpreted
 * so that 0 is always the simplest thing (the first option, "end the run" for the next
 * step): zeroing or deleting choices shrinks a run.
 *
 * Keys are fixed: the source `k` (stream with group `g`, consumers `c1` and, for the
 * reclaim subscription, `c2` -- or, when the run leaves them unnamed, the framework's
 * `ruststream-0` and `ruststream-1`; or a list / a channel), delay queue `k:delayed`, list
 * recovery set `k:claims`, the dead letter `dlq` (a stream: no subscription reads it),
 * outputs `out.s` (stream), `out.l` (list), `out.c` (channel), and the handlers' keys
 * `log`, `n:<entry>`, `s:<entry>`, `pc`, and `str` (a string, so that `LPUSH str ...`
 * fails with WRONGTYPE).  Subscriptions are labelled `main` and, for streams with
 * recovery, `rescue` (XAUTOCLAIM, min-idle GEN_MIN_IDLE_MS).
 *
 * Model mode (cfg.faults == 0) injects nothing: crashes happen only between steps, where
 * the model follows them.  Fault mode arms faults on the consumer's connections (crashes
 * inside round trips, lost replies, injected error replies, refused sends), which the
 * model does not follow: only the invariants are checked then.
 *
 * Errors: 0 / negative; messages in heap strings.  Out of memory aborts (as the engine).
 */
#ifndef WSM_GEN_H
#define WSM_GEN_H

#include <stddef.h>
#include <stdint.h>

#include "wsm_choice.h"
#include "ws_sim.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The recovery age of the reclaim subscription and of list recovery.  Ordinary clock
 * steps of one process stay below GEN_ADVANCE_BUDGET_MS, so an entry is reclaimed only
 * after the process that held it died and a "recovery advance" moved the clock past it:
 * one live delivery per entry at a time, as the scenario format's aliases need. */
#define GEN_MIN_IDLE_MS 100000
#define GEN_ADVANCE_BUDGET_MS 50000

/* The dead letter of a run that declares one (a stream). */
#define GEN_DEAD_LETTER "dlq"

/* Step kinds, one per scenario statement. */
typedef enum gen_kind {
    GS_PRODUCE = 1, /* produce main <payload> [header n v] as e<N> */
    GS_READ,        /* read <sub> */
    GS_QUEUE,       /* e<N>: queue <command> */
    GS_POOL,        /* e<N>: pool <command> */
    GS_PUBLISH,     /* e<N>: publish <form> <key> <payload> [header n v] */
    GS_REPLY,       /* e<N>: reply <payload> */
    GS_BIND,        /* e<N>: bind <form> <key> */
    GS_SETTLE,      /* e<N>: ack | drop | retry | retry-after <ms> | abandon */
    GS_ADVANCE,     /* advance <ms> */
    GS_CRASH,       /* crash */
    GS_RESTART,     /* restart */
    GS_STOP,        /* stop <sub> */
    GS_FAULT,       /* fault <conn> <kind> <where> (fault mode only) */
    GS_SHUTDOWN,    /* shutdown (the graceful stop of the whole process) */
} gen_kind;

/* A byte string (NUL-terminated copy, may hold NULs). */
typedef struct gen_str {
    char *p;
    size_t len;
} gen_str;

/* A command as argv (owned). */
typedef struct gen_cmd {
    int argc;
    gen_str *argv;
} gen_cmd;

/* One delivery a read handed out, as the engine saw it. */
typedef struct gen_delivered {
    size_t entry;   /* the produced entry it descends from (1-based), 0 if unknown */
    gen_str id;     /* stream id, list value or channel message, as ws_delivery_id gives
                       it: up to its first NUL (a binary frame's is cut short) */
    gen_str payload;/* its payload (ws_delivery_payload; p NULL when it has none) */
    unsigned char member[12]; /* reliable list with recovery: the first 12 bytes of its
                                 recovery member (process id, counter), read off the
                                 read's ZADD */
    int has_member;   /* member[] was read */
} gen_delivered;

typedef struct gen_step {
    gen_kind kind;
    size_t choice_at;     /* how many choices the source had made when this step was
                             drawn (the shrinker deletes whole steps with it) */
    int sub;              /* READ, STOP: 0 main, 1 rescue */
    int drains_lost;      /* SHUTDOWN: the windows' drains lose the race with the pool's
                             QUIT (shutdown drains-lost) */
    size_t entry;         /* acting steps: the entry e<N> (1-based) */
    gen_cmd cmd;          /* QUEUE, POOL */
    ws_form out_form;     /* PUBLISH, BIND: the output */
    const char *out_key;  /* PUBLISH, BIND (static: "out.s", "out.l", "out.c") */
    gen_str payload;      /* PRODUCE, PUBLISH, REPLY */
    gen_str hname, hval;  /* PRODUCE, PUBLISH: one header when hname.p != NULL */
    ws_outcome outcome;   /* SETTLE */
    int64_t ms;           /* SETTLE retry-after delay, ADVANCE */
    /* FAULT */
    int fconn;            /* 0 reader, 1 window */
    ws_fault fault;       /* name points at fname */
    char fname[16];
    /* observations: what the engine did */
    int *fired;           /* FAULT: heap, set to 1 by the fault layer when the fault fires
                             (a fault that never fires is not written in the scenario: it
                             changed nothing, and a scenario's fault must fire) */
    int rc;               /* the step's return code */
    int is_report;        /* READ: a failure report came instead of deliveries */
    ws_report report;     /* READ with is_report (first_error points at report_error) */
    char *report_error;   /* heap: the report's first error */
    uint64_t read_no;     /* READ: the engine's read number */
    gen_delivered *dl;    /* READ: the deliveries, in read order */
    size_t ndl;
} gen_step;

/* What a run is made of, apart from its steps. */
typedef struct gen_config {
    ws_form form;
    ws_mode mode;
    size_t count;         /* COUNT of the reads */
    size_t batch;         /* 0 or the batch size (window modes) */
    int delay_queue;      /* stream: retry_after through k:delayed */
    int64_t ttl_ms;       /* delay queue: PEXPIRE after each ZADD (0: none) */
    int rescue;           /* stream: a reclaim subscription `rescue` */
    int recovery;         /* reliable list: the recovery set k:claims */
    ws_form reply_form;   /* 0: no reply output; else its form (key out.s/out.l/out.c) */
    int reply_in_round;   /* the InRound transform */
    unsigned max_attempts;/* main: max-attempts N (0: none) */
    int dead_letter;      /* main: dead-letter GEN_DEAD_LETTER */
    int rescue_declared;  /* rescue: the same max-attempts and dead letter as main */
    int auto_consumer;    /* stream: no consumer names (the framework's ruststream-<n>) */
    size_t buffer;        /* channel: the subscriber's buffer (0: 32; else 1 or 2, so that
                             a read skips what its subscriber fell behind on) */
    int faults;           /* fault mode: faults may be armed (the model does not follow) */
    uint64_t seed;        /* the simulation's seed */
} gen_config;

/* Bounds of a generated run. */
typedef struct gen_run gen_run;

typedef struct gen_limits {
    size_t max_steps;     /* steps at most (0: 96) */
    size_t max_entries;   /* produced entries at most (0: 16) */
    int allow_faults;     /* 0: never fault mode (the model follows every run) */
    int force_faults;     /* 1: always fault mode */
    /* called with i == (size_t)-1 once the world is made, then before step i is played
     * (drawn, not yet run): the shrinker streams the scenario of a run that may crash
     * the process (NULL: none) */
    void (*before_step)(void *ud, const gen_run *run, size_t i);
    void *ud;
    unsigned quirks;      /* GEN_QUIRK_* the generator steers around (gen_check_choices
                             sets it to its own quirks) */
    int keep_trace;       /* 1: the simulation keeps its trace text and flush diagrams
                             (ws_sim_trace_hash compares runs); 0: it keeps only what the
                             checks read (ws_sim_config.no_trace_text), which is cheaper */
    fr_server *reuse;     /* a fake of the caller's that the run's simulation resets and
                             uses (ws_sim_config.reuse) instead of making its own; NULL: a
                             new one.  Only while no other run on it is live: the fuzz
                             target and bench_fuzz run one input at a time */
} gen_limits;

struct gen_run {
    gen_config cfg;
    gen_step *steps;
    size_t nsteps, capsteps;
    size_t nentries;      /* entries produced (e1 .. eN) */
    /* the engine, while the run is live (gen_generate / gen_play) */
    ws_sim *sim;
    ws_sub *subs[2];      /* main, rescue (NULL when absent) */
    ws_delivery **seen;   /* every delivery handed out, in order (as the scenario runner
                             keeps them: an entry's "latest" delivery is found here) */
    size_t nseen, capseen;
    int keep_trace;       /* the simulation keeps its trace text (gen_limits.keep_trace) */
    fr_server *reuse;     /* gen_limits.reuse (gen_play makes a new fake) */
    int refused;          /* a step the engine refused (in model mode: a failure) */
    char *refusal;        /* the first one: which step and the engine's message */
};

/* The limits fuzz_outcomes, bench_fuzz, the unit test and `wsim repro` share (fault
 * mode allowed, the default bounds, the known quirks steered around): a seed or a fuzz
 * input means one run everywhere. */
gen_limits gen_target_limits(void);
/* Tunes the process for many runs in a row (fuzz_outcomes, bench_fuzz): glibc's heap keeps
 * what a run frees for the next one instead of handing it back to the kernel after every
 * run and faulting it in again (a third of a run's time went there).  No effect on other
 * C libraries or under a sanitizer's allocator. */
void gen_tune_heap(void);
/* Draws a run from c within lim (NULL: defaults) and plays it on a fresh simulation as it
 * goes; run->sim stays open (the checks read it) until gen_free.  Returns 0 (a step the
 * engine refused is kept in run->refused/refusal), or WS_ENOMEM when the simulation
 * cannot be made. */
int gen_generate(ch *c, const gen_limits *lim, gen_run *run);
/* Plays the configuration and steps of src again on a fresh simulation into out (its
 * observations made anew); what gen_generate played and what this plays must agree
 * (tests/unit/test_fuzz_model.c compares their traces). */
int gen_play(const gen_run *src, gen_run *out);
/* Frees the run and its simulation. */
void gen_free(gen_run *run);

/* The run as a scenario file (docs/scenarios.md): the title line, `needs fake`, the
 * comment lines of `comment` (each line prefixed "# "; may be NULL), the world, then one
 * line per step -- steps the engine refused end in "=> refused" -- and the text of
 * `expect` (NULL: none; then `expect nothing` when no step is refused, as a scenario
 * that checks nothing must say) at the end.  wsc_parse accepts it and wsc_run plays the same run
 * (same trace).  Heap text (wsi_free() it), *len its length (len may be NULL). */
char *gen_scenario(const gen_run *run, const char *title, const char *comment,
                   const char *expect, size_t *len);
/* The same in pieces: the head (title, comments, world, subscriptions) and the line of
 * step i (with its newline).  Heap text. */
char *gen_scenario_head(const gen_run *run, const char *title, const char *comment);
char *gen_scenario_step(const gen_run *run, size_t i);
/* One argument as a scenario token: bare when that reads back the same, else "quoted"
 * with the format's escapes.  Appended to a heap buffer *buf of length *len. */
void gen_token(char **buf, size_t *len, size_t *cap, const char *p, size_t n);

/* ----- Checking a run against the model and the invariants ------------------------------- */

/* Why a run failed. */
typedef struct gen_failure {
    char kind[32];        /* "refused" (the engine refused a step), "model" (the model
                             could not follow the run), "round trip", "counts", "read",
                             "report", "flush", "state", "violation" (model mode),
                             "invariant" (fault mode); "" when it passed */
    char *message;        /* what broke, several lines (heap) */
    char *expect;         /* scenario expectations that fail on the engine and hold on the
                             model (heap; NULL when none can be written) */
} gen_failure;

/* Compares the engine's run with the model's prediction (model mode) and classifies the
 * invariants' violations (both modes): a violation the run explains (the model predicts
 * it, or a fault or crash explains it in fault mode) is expected; any other is a
 * failure.  Returns 0 when the run holds, 1 with *f filled when it does not.
 * quirks: GEN_QUIRK_* bits, deviations of the engine that are known and reported, which
 * the model then mimics instead of failing on. */
int gen_check(gen_run *run, unsigned quirks, gen_failure *f);
void gen_failure_free(gen_failure *f);

/* Known deviations of the engine from SEMANTICS.md, reported in .notes/fuzzmodel.md: the
 * model can mimic one (and the generator steer around one) so that fuzzing goes on
 * finding new ones while it waits for its fix.  GEN_QUIRKS_KNOWN is the set the fuzz
 * target mimics by default: empty today, every deviation found so far has been fixed
 * (the bits of fixed ones are gone; this one stays for the shrinker's tests). */
#define GEN_QUIRK_SPLIT_RUNTIME 2u /* ws_sim_check calls an atomic segment whose commands
                                      all failed at run time (its XACK applied) "split"
                                      (fixed in ca44e97) */
#define GEN_QUIRKS_KNOWN 0u

/* One whole check, as the fuzz target makes it: choices from c, a run, the check.
 * Returns 0 (held) or 1 (*f filled; f may be NULL); the run is freed.  out_run (may be
 * NULL) keeps the run instead (gen_free it). */
int gen_check_choices(ch *c, const gen_limits *lim, unsigned quirks, gen_failure *f,
                      gen_run *out_run);

#ifdef __cplusplus
}
#endif

#endif /* WSM_GEN_H */
