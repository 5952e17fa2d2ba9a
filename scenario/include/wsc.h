/* wsc.h -- scenario files: parsing them and running them on libwsim (docs/scenarios.md).
 *
 * A scenario file says, line by line, what is in Redis, how the consumer is set up, what
 * each read returns, what each handler does and how it ends, where it crashes, and what
 * must be true afterwards.  wsc_parse turns the text into a scenario or its errors
 * "file:line:col: error: ...", one a line (it never runs half a file); wsc_run runs it on
 * a fresh ws_sim and says precisely what held and what did not -- a run that checked
 * nothing (without `expect nothing`) or whose fault never fired fails too.
 *
 * Prefix wsc_.  Errors: NULL / negative codes with a message, never a crash.  Out of
 * memory is one of those errors, never an abort of the library's own: WS_ENOMEM from
 * wsc_run and the explorer, "name:0:0: error: out of memory" from the parser, NULL from
 * the text makers; nothing is left allocated.  The engine under it aborts instead
 * (ws_sim.h; docs/architecture.md, "Running out of memory").
 */
#ifndef WSC_H
#define WSC_H

#include <stddef.h>
#include <stdint.h>

#include "ws_sim.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The scenario library's version (wsim --version prints it). */
#define WSC_VERSION "0.1.0"

typedef struct wsc_scenario wsc_scenario;

/* wsc_parse says at most this many errors of a file (one a line). */
#define WSC_MAX_ERRORS 20

/* Parses text[0..len) (need not be NUL-terminated) read from file `name` (used in
 * messages).  Returns the scenario, or NULL with *error (heap, wsi_free() it) set to the
 * errors, one line each "name:line:col: error: what" in file order, at most one per line
 * and WSC_MAX_ERRORS in all (then a last line "name: note: stopped after 20 errors"); no
 * newline after the last.  Names and references are checked once every line reads.  Out
 * of memory: NULL and "name:0:0: error: out of memory" (*error NULL when even that text
 * cannot be allocated); nothing is left allocated. */
wsc_scenario *wsc_parse(const char *name, const char *text, size_t len, char **error);
/* Reads and parses a file; a file that cannot be read is an error "name:0:0: error: ...". */
wsc_scenario *wsc_parse_file(const char *path, char **error);
void wsc_free(wsc_scenario *sc);

/* The title (the `scenario` line), the file name, and why it needs the fake (the
 * `needs fake` line's reason) or NULL when it is portable. */
const char *wsc_title(const wsc_scenario *sc);
const char *wsc_name(const wsc_scenario *sc);
const char *wsc_needs_fake(const wsc_scenario *sc);
/* Why it needs a real server (the `needs real` line's reason: what the fake lacks) or
 * NULL: it is skipped on the fake, and by `wsim diff`. */
const char *wsc_needs_real(const wsc_scenario *sc);
/* How many statements it has. */
size_t wsc_statements(const wsc_scenario *sc);
/* The grammar of the language, generated from the parser's statement table: one line per
 * statement form with a note, as docs/scenarios.md shows it (`wsim grammar`).  Heap,
 * wsi_free() it; NULL when out of memory. */
char *wsc_grammar(void);

typedef struct wsc_options {
    const char *backend; /* NULL or "fake", or a redis:// / unix:// URL */
    uint64_t seed;       /* used when seed_set, else the file's `seed` (default 1) */
    int seed_set;
    int flushall;        /* on a real server: FLUSHALL before the run (the tool sets it) */
    int no_trace_text;   /* keep no trace text (wsc_result.trace ""): cheaper, for many runs */
    int fake_server;     /* the backend URL is a fakeredis-server: what `needs real` needs
                            (what the fake lacks) is not there either, so those files skip */
    int picture;         /* also draw the flush diagrams as SVG (wsc_result.picture,
                            wsc_picture.h) */
    int no_crash_faults; /* skip the file's crash faults (crash-after, crash-before,
                            lose-replies; error and refuse stay): wsim explore crashes the
                            consumer itself, and the file's own crash would mix with it */
    int cluster;         /* the real server is a one-node Redis Cluster: run every file as
                            if it said `cluster` (the fake's emulation on the fake) */
    int no_checks;       /* run the steps only: every expectation is skipped (the explorer
                            of a consumer process classifies each point itself) */
    const char *redis_version; /* the version the fake claims to consumer processes (INFO's
                            redis_version, HELLO's version), NULL: its own */
    int consume;         /* the consumer's side of the file only (wsim consume): its
                            subscriptions, reads and handlers run against the backend;
                            `produce` lines only name the entries, found again by their
                            payloads in what the reads hand out; setup, checks,
                            expectations, faults, the clock and process steps are left out */
} wsc_options;

typedef enum wsc_status {
    WSC_PASS = 0,
    WSC_FAIL,  /* an expectation did not hold */
    WSC_SKIP,  /* needs the fake, run on a real server; or needs a real one, on the fake */
    WSC_ERROR, /* the run could not go on (server unreachable, a step failed unexpectedly) */
} wsc_status;

typedef struct wsc_result {
    wsc_status status;
    size_t checks;       /* expectations evaluated */
    size_t failures;     /* 1 when an expectation did not hold, else 0 (the run stops at the first
                            failing step; at the end, a fault that never fired or a run
                            that checked nothing fails it) */
    char *report;        /* FAIL/ERROR: "file:line: expectation\n  expected: ...\n  got:
                            ...\n  trace around it:\n..."; SKIP: the reason; else NULL */
    char *trace;         /* the whole trace (ws_sim_trace_text) */
    char *diagram;       /* the flush diagrams (ws_sim_diagram) */
    char *picture;       /* with wsc_options.picture: the same as an SVG document
                            (wsc_picture_svg); else NULL */
    char *state;         /* the final keyspace as the scenario's `dump` reads it, for
                            wsim diff: every key (KEYS *, sorted) with TYPE and value */
    uint64_t trace_hash;
    ws_sim_counts counts;
    int bad_input;       /* an ERROR that is the input's fault rather than a verdict: a
                            consumer process that could not start, exited, did not settle
                            in time or ignored SIGTERM (wsim exits 2 for it) */
} wsc_result;

/* Whether wsc_run skips sc with opt, and why: NULL when it runs; else the reason (its
 * `needs` line's, or why a `cluster` file needs a cluster), and *needs (when not NULL)
 * says what it needs: "the fake", "a real server" or "a one-node Redis Cluster". */
const char *wsc_skips(const wsc_scenario *sc, const wsc_options *opt, const char **needs);

/* Runs sc on a fresh simulation.  Returns 0 and fills *res (free with
 * wsc_result_free), or WS_ENOMEM. */
int wsc_run(const wsc_scenario *sc, const wsc_options *opt, wsc_result *res);
void wsc_result_free(wsc_result *res);

/* ----- Crash exploration (wsim explore) ------------------------------------------------- */

/* What the explorer found at one crash point. */
typedef struct wsc_crash_point {
    char conn[64];          /* the consumer connection ("window", "reader", "subscriber") */
    uint64_t round_trip;    /* its round trip (1-based) */
    size_t command;         /* the crash comes before this command (1-based) is applied;
                               0: after the whole round trip applied, its replies lost */
    size_t commands;        /* commands in that round trip */
    char *command_text;     /* the command the crash precedes (or the round trip's last) */
    const char *verdict;    /* "fine", "doubled", "lost", "split", "leaked", "stranded",
                               "not reached", "error" */
    char *detail;           /* the violations, one sentence each ("; " between), or the
                               error; "" when fine */
    int forbidden;          /* the verdict is one the scenario forbids (`forbid ...`) */
    int explored;           /* explored here (0: another shard's point; verdict NULL) */
    size_t recovered;       /* deliveries the point's recovery read (what the crash left to
                               redeliver, and fresh entries when the recovery is the full
                               one): the work a point cannot do without */
    char *fault;            /* a point of a consumer process: the fault statement that
                               replays it, after `fault CONSUMER` ("crash-before 2nd
                               XACK"); conn is the consumer, round_trip the command's
                               number among all it sent, command 1 (before it is applied)
                               or 0 (after), commands how many it sent, and command_text
                               the command the point held.  NULL for wsim's own consumer */
} wsc_crash_point;

typedef struct wsc_exploration {
    wsc_crash_point *points;
    size_t npoints;
    size_t fine, doubled, lost, split, leaked, stranded, other; /* points per verdict */
    size_t forbidden;       /* points whose verdict the scenario forbids */
    char *error;            /* the baseline run failed: why (then npoints is 0) */
    size_t explored;        /* points explored (all of them, or one shard's) */
    int bounded;            /* the recovery was bounded to what each crash left (the
                               scenario is one where that provably changes no verdict) */
    size_t replayed;        /* of those, points the snapshot path could not reach from
                               its one run and replayed instead (0 on every known
                               scenario; docs/wsim-explore.md) */
    char *failure;          /* the exploration did not complete: a worker died (which
                               point it was exploring, and how); the points are then not
                               to be reported */
    char *note;             /* something the report must say besides the points (a consumer
                               process that is not deterministic), or NULL */
} wsc_exploration;

/* How wsc_explore_with explores. */
typedef struct wsc_explore_options {
    int replay;             /* replay the scenario's prefix for every point (the path
                               before snapshots; kept to compare the two) */
    int jobs;               /* worker processes at once (fork); 0: 1 */
    size_t shard, nshards;  /* only every nshards-th point from the shard-th (1-based,
                               shard <= nshards); nshards 0: every point */
    int full_recovery;      /* recover by reading until nothing comes even where the
                               bounded recovery gives the same verdicts (the reference the
                               tests compare it with; docs/wsim-explore.md) */
} wsc_explore_options;

/* Runs sc once on the fake to learn its consumer round trips (the first process's only),
 * then once more per crash point -- before each command the server applies, and after
 * each round trip applied with its replies lost -- following the scenario up to the
 * crash, then restarting the consumer and recovering through the configured paths (the
 * clock is moved past every min-idle and delay; each subscription reads until nothing
 * comes; each delivery is handled as the scenario handles its entry), and classifies the
 * point with ws_sim_check.  This is the replay path, all in this process (no fork: what
 * a fuzz target wants); wsc_explore_with explores from snapshots.  Returns 0 (fills
 * *out; free with wsc_exploration_free) or WS_ENOMEM. */
int wsc_explore(const wsc_scenario *sc, const wsc_options *opt, wsc_exploration *out);
/* The same, as xo says.  Unless xo->replay, the scenario runs once more (after the
 * baseline) and, at each crash point, the process forks: the child crashes there, runs
 * only the recovery and the classification, sends the verdict back through a pipe and
 * _exits (it never returns to the caller); up to xo->jobs children run at once.  The
 * verdicts, details and their order are the replay path's.  A child that dies (a
 * signal, a non-zero exit, an incomplete answer) makes out->failure name the point it
 * was exploring; the others are then stopped.  Returns 0 or WS_ENOMEM; WS_EINVAL for
 * a shard outside 1..nshards. */
int wsc_explore_with(const wsc_scenario *sc, const wsc_options *opt,
                     const wsc_explore_options *xo, wsc_exploration *out);
void wsc_exploration_free(wsc_exploration *ex);
/* Counts point p, explored, into ex's totals (explored, its verdict's count, forbidden). */
void wsc_exploration_count(wsc_exploration *ex, const wsc_crash_point *p);
/* The kinds the scenario forbids (its `forbid` lines), as a bit set over WSC_INVARIANTS
 * ("lost", "leaked", "split", "doubled", "stranded": bits 0-4). */
unsigned wsc_forbidden(const wsc_scenario *sc);

/* `wsim consume`: runs the consumer's side of sc -- its subscriptions, reads and
 * handlers -- against the server at url as a live consumer process until it is killed
 * (docs/consumer.md, "The engine as a process"); incarnation > 1: a process started again
 * after a crash, which subscribes and serves.  Returns an exit status when the run cannot
 * go on (said on stderr). */
int wsc_consume_file(const wsc_scenario *sc, const char *url, int incarnation);

/* ----- Drawn outcomes for a consumer process (wsim outcomes) --------------------------- */

typedef struct wsc_outcomes_options {
    uint64_t seed;          /* run r draws from seed + r */
    size_t runs;            /* runs to draw (0: 20) */
    size_t max_entries;     /* entries a run draws, 1 to this (0: 4; at most 16) */
    int shrink;             /* shrink the first finding to the smallest run that shows it */
} wsc_outcomes_options;

typedef struct wsc_outcomes_result {
    size_t runs;            /* runs drawn and played */
    int failed;             /* a run broke what the file forbids (any invariant when it
                               forbids nothing) */
    uint64_t seed;          /* that run's seed: --seed SEED --runs 1 replays it alone */
    char *drawn;            /* what it drew, and the verdict ("2 entries (e1 ack [INCRBY
                               w:e1:1 7], ...), crash-after 1 of INCRBY: doubled") */
    const char *verdict;    /* the verdict (one of the explorer's) */
    char *detail;           /* its sentences */
    char *shrunk;           /* the same after shrinking */
    size_t tries;           /* runs the shrinking played */
    char *scenario;         /* the (shrunk) run as a scenario file: the file's lines, the
                               entries, the crash as a fault line; `wsim run` fails on it */
    char *error;            /* the file cannot be drawn for, or a drawn run fails without
                               a crash: why (then nothing else is set) */
} wsc_outcomes_result;

/* Draws outcome sequences and crash points for the consumer process sc drives (a file of
 * the handler convention's consumer, whose own produce lines are replaced by the drawn
 * ones: docs/consumer.md, "Drawn outcomes"), plays each run's crash point and stops at the
 * first finding.  0 (out filled; free with wsc_outcomes_result_free) or WS_ENOMEM. */
int wsc_outcomes(const wsc_scenario *sc, const wsc_options *opt,
                 const wsc_outcomes_options *oo, wsc_outcomes_result *out);
void wsc_outcomes_result_free(wsc_outcomes_result *r);

/* The invariants ws_sim_check names, in their bit order; WSC_NINVARIANTS of them. */
#define WSC_NINVARIANTS 5
extern const char *const WSC_INVARIANTS[WSC_NINVARIANTS];

#ifdef __cplusplus
}
#endif

#endif /* WSC_H */
