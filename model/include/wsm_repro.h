/* wsm_repro.h -- `wsim repro INPUT`: a failing fuzz_outcomes input (a crash file libFuzzer
 * kept) or a failing seed, shrunk to the smallest scenario file that still fails.
 *
 * Contract of wsf_repro(input, opt, out):
 *   - input is "seed:N" (N decimal: the run gen_check_choices draws from the seeded
 *     generator with seed N, fault mode allowed -- what bench_fuzz and the unit test
 *     run) or the path of a file of fuzz bytes (read as fuzz_outcomes reads them);
 *   - the input is turned into its run, and the run checked as fuzz_outcomes checks it
 *     (gen_check with opt->quirks).  When it holds, out->failed is 0 and nothing else is
 *     made;
 *   - when it fails, the run's recorded choices are shrunk (delta debugging: spans of
 *     choices deleted, single choices zeroed and lowered; a candidate is kept while it
 *     fails the same way -- the same gen_failure kind, or a crash of the process for a
 *     crash) within opt->max_attempts candidate runs, each run in a child process
 *     unless opt->no_fork, so an input that crashes the engine is shrunk too;
 *   - out->scenario is then the smallest failing run as a scenario file (gen_scenario):
 *     its first comment lines say what broke (and where the input came from), its
 *     expectations (when the failure gives some: `expect flush`, `check ... =>`, `expect
 *     invariants` ...) fail on today's engine and pass once it is fixed, so it can stay
 *     as a regression scenario; out->what says what broke in a paragraph.
 * Returns 0, or -1 with out->what saying why (input unreadable, a bad seed).  Free out
 * with wsf_repro_result_free.  Deterministic: the same input gives the same scenario.
 *
 * Usage (the wsim tool's `repro` subcommand):
 *
 *   wsf_repro_options o = {.quirks = GEN_QUIRKS_KNOWN, .log = stderr};
 *   wsf_repro_result res;
 *   if (wsf_repro(argv[2], &o, &res) != 0) { fprintf(stderr, "%s\n", res.what); ... }
 *   else if (!res.failed) puts("the input passes: nothing to reproduce");
 *   else fputs(res.scenario, out);     // then `wsim run` on it fails as the input did
 *   wsf_repro_result_free(&res);
 */
#ifndef WSM_REPRO_H
#define WSM_REPRO_H

#include <stddef.h>
#include <stdio.h>

#include "wsm_gen.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct wsf_repro_options {
    unsigned quirks;        /* GEN_QUIRK_* the model mimics (fuzz_outcomes: GEN_QUIRKS_KNOWN;
                               0 for SEMANTICS.md to the letter) */
    size_t max_attempts;    /* candidate runs while shrinking (0: 4000) */
    int no_fork;            /* run candidates in this process (an engine crash then
                               kills the caller) */
    FILE *log;              /* progress lines, or NULL */
} wsf_repro_options;

typedef struct wsf_repro_result {
    int failed;             /* 1: the input fails and scenario holds its smallest run */
    char *scenario;         /* heap */
    char *what;             /* heap: what broke (or, on -1, why nothing could be done) */
    char kind[32];          /* the failure's kind (gen_failure.kind, or "crash") */
    size_t choices_before, choices_after;
    size_t steps_before, steps_after;
    size_t attempts;        /* candidate runs made */
} wsf_repro_result;

int wsf_repro(const char *input, const wsf_repro_options *opt, wsf_repro_result *out);

/* The N of an input "seed:N": text must be decimal digits only (no sign, no space) and
 * fit 64 bits.  0 with *seed set, or -1. */
int wsf_parse_seed(const char *text, uint64_t *seed);
void wsf_repro_result_free(wsf_repro_result *r);

#ifdef __cplusplus
}
#endif

#endif /* WSM_REPRO_H */
