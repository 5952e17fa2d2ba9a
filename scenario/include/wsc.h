/* wsc.h -- scenario files: parsing them and running them on libwsim (docs/scenarios.md).
 *
 * A scenario file says, line by line, what is in Redis, how the consumer is set up, what
 * each read returns, what each handler does and how it ends, where it crashes, and what
 * must be true afterwards.  wsc_parse turns the text into a scenario or one error
 * "file:line:col: error: ..." (it never runs half a file); wsc_run runs it on a fresh
 * ws_sim and says precisely what held and what did not.
 *
 * Prefix wsc_.  Errors: NULL / negative codes with a message, never a crash.
 */
#ifndef WSC_H
#define WSC_H

#include <stddef.h>
#include <stdint.h>

#include "ws_sim.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct wsc_scenario wsc_scenario;

/* Parses text[0..len) (need not be NUL-terminated) read from file `name` (used in
 * messages).  Returns the scenario, or NULL with *error (heap, free() it) set to one line
 * "name:line:col: error: what" -- for out of memory too ("name:0:0: error: out of
 * memory"). */
wsc_scenario *wsc_parse(const char *name, const char *text, size_t len, char **error);
/* Reads and parses a file; a file that cannot be read is an error "name:0:0: error: ...". */
wsc_scenario *wsc_parse_file(const char *path, char **error);
void wsc_free(wsc_scenario *sc);

/* The title (the `scenario` line), the file name, and why it needs the fake (the
 * `needs fake` line's reason) or NULL when it is portable. */
const char *wsc_title(const wsc_scenario *sc);
const char *wsc_name(const wsc_scenario *sc);
const char *wsc_needs_fake(const wsc_scenario *sc);
/* How many statements it has. */
size_t wsc_statements(const wsc_scenario *sc);

typedef struct wsc_options {
    const char *backend; /* NULL or "fake", or a redis:// / unix:// URL */
    uint64_t seed;       /* used when seed_set, else the file's `seed` (default 1) */
    int seed_set;
    int flushall;        /* on a real server: FLUSHALL before the run (the tool sets it) */
} wsc_options;

typedef enum wsc_status {
    WSC_PASS = 0,
    WSC_FAIL,  /* an expectation did not hold */
    WSC_SKIP,  /* needs the fake, run on a real server */
    WSC_ERROR, /* the run could not go on (server unreachable, a step failed unexpectedly) */
} wsc_status;

typedef struct wsc_result {
    wsc_status status;
    size_t checks;       /* expectations evaluated */
    size_t failures;     /* expectations that did not hold (the run stops at the first
                            failing step, but keeps checking expectations at the end) */
    char *report;        /* FAIL/ERROR: "file:line: expectation\n  expected: ...\n  got:
                            ...\n  trace around it:\n..."; SKIP: the reason; else NULL */
    char *trace;         /* the whole trace (ws_sim_trace_text) */
    char *diagram;       /* the flush diagrams (ws_sim_diagram) */
    char *state;         /* the final keyspace as the scenario's `dump` reads it, for
                            wsim diff: every key (KEYS *, sorted) with TYPE and value */
    uint64_t trace_hash;
    ws_sim_counts counts;
} wsc_result;

/* Runs sc on a fresh simulation.  Returns 0 and fills *res (free with
 * wsc_result_free), or WS_ENOMEM. */
int wsc_run(const wsc_scenario *sc, const wsc_options *opt, wsc_result *res);
void wsc_result_free(wsc_result *res);

#ifdef __cplusplus
}
#endif

#endif /* WSC_H */
