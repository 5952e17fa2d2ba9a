/* fuzz_outcomes.c -- outcome sequences: the engine against its reference model
 * (libFuzzer target; docs/fuzzing.md).
 *
 * The input is read as FuzzedDataProvider reads fuzz bytes (wsm_choice.h, CH_FDP): the
 * first choices pick the world (form, mode, COUNT, batch size, delay queue, recovery,
 * reply output, max-attempts and a dead letter, consumer names, and, one run in eight,
 * fault mode), then each next step of a consumer run (wsm_gen.h): entries, reads,
 * handler actions and outcomes in any completion order, clock steps, crashes, shutdowns,
 * restarts, stops and faults.  The run is played on the in-process
 * fake and checked (gen_check):
 *
 *   - model mode: every round trip of the consumer, every flush command with its reply,
 *     what every read handed out, the final state and the invariant violations must be
 *     what model/src/model.c predicts;
 *   - fault mode: every violation ws_sim_check reports must be one the run's faults or
 *     crashes explain (never `leaked`; `split` and atomic `doubled` only after an
 *     injected error reply).
 *
 * A failure prints what broke and the run as a scenario file, then aborts: libFuzzer
 * keeps the input, and `wsim repro FILE` shrinks it to the smallest scenario that still
 * fails.  Known deviations of the engine (gen.h's GEN_QUIRKS_KNOWN, reported in
 * .notes/fuzzmodel.md; none today) are mimicked by the model so fuzzing goes on finding
 * new ones while they wait for their fix; WSIM_FUZZ_STRICT=1 in the environment turns
 * that off.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "wsm.h" /* model/: the run generator and the reference model */

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerInitialize(int *argc, char ***argv);

static unsigned quirks = GEN_QUIRKS_KNOWN;
/* One fake for the whole process, reset for each input (fr_server_reset): one input runs
 * at a time, and a reset server is what a new one is. */
static fr_server *fake;

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc;
    (void)argv;
    const char *strict = getenv("WSIM_FUZZ_STRICT");
    if (strict && strcmp(strict, "1") == 0) quirks = 0;
    gen_tune_heap();
    fake = fr_server_new(NULL);
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    /* everything of the run -- the simulation, the model, their texts -- from one region,
     * dropped whole at the end (wsi_alloc.h; the C library's under the sanitizers) */
    wsi_region_begin();
    ch c;
    ch_init_fdp(&c, data, size, 0);
    gen_limits lim = gen_target_limits();
    lim.reuse = fake;
    gen_failure f;
    gen_run run;
    int failed = gen_check_choices(&c, &lim, quirks, &f, &run);
    ch_free(&c);
    if (failed) {
        char *text = gen_scenario(&run, "a run fuzz_outcomes found failing", f.message,
                                  f.expect, NULL);
        fprintf(stderr, "fuzz_outcomes: %s\n%s\n--- the run as a scenario (wsim repro FILE "
                "shrinks it) ---\n%s", f.kind, f.message, text);
        wsi_free(text);
        gen_failure_free(&f);
        gen_free(&run);
        abort();
    }
    gen_free(&run);
    wsi_region_end();
    return 0;
}
