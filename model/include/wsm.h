/* wsm.h -- libwsm, the consumer-run model: generated runs of the engine, an independent
 * reference model of the settlement window, and the shrinker (docs/fuzzing.md, "The model
 * and the invariants"; docs/architecture.md).
 *
 * One header for its users -- the fuzz target fuzz/fuzz_outcomes.c and its replay driver,
 * bench/bench_fuzz.c, the `wsim repro` subcommand, tests/unit/test_fuzz_model.c:
 *
 *   wsm_choice.h  one source of choices (seeded, exhaustive, fuzz bytes, replayed)
 *   wsm_gen.h     runs drawn from choices and played on the engine; the scenario writer;
 *                 gen_check, the run against the model and the invariants
 *   wsm_model.h   the reference model (mdl_predict), sharing no code with engine/src
 *   wsm_repro.h   `wsim repro`: a failing input shrunk to the smallest failing scenario
 *
 * The library needs no fuzzing engine: it builds with any C11 compiler, and only the
 * libFuzzer binary of fuzz/ links libFuzzer.  Prefixes: ch_ (choices), gen_ (runs),
 * mdl_ (model), wsf_ (repro).
 *
 * Out of memory aborts the process with one line on stderr, "wsim: out of memory in
 * libwsm" (common/'s family, wsi_alloc.h): the model and the generator are test
 * machinery whose every user is a test, a fuzzer or `wsim repro`, where a lost allocation
 * reported as an error would only hide as a mismatch against the engine.  The engine
 * they drive aborts the same way (ws_sim.h); docs/architecture.md, "Running out of
 * memory".
 */
#ifndef WSM_H
#define WSM_H

#include "wsm_choice.h"
#include "wsm_gen.h"
#include "wsm_model.h"
#include "wsm_repro.h"

#endif /* WSM_H */
