/* bench_fuzz.c -- fuzz_outcomes executions per second on one core, without sanitizers
 * (docs/benchmarks.md, "Fuzzing").
 *
 * A plain loop over fuzz inputs calling what LLVMFuzzerTestOneInput calls (gen_check_choices
 * on the bytes read as FuzzedDataProvider reads them, fault mode allowed, the known quirks
 * mimicked): a fresh simulation on the in-process fake per input, the run, the model, the
 * comparison, ws_sim_check.  The inputs are random bytes from our own seeded generator
 * (lengths uniform in [--min, --max]), or every file of a corpus directory (--corpus).
 * Prints executions per second, the mean steps and round trips per run, and how many
 * inputs failed (there should be none).
 *
 *   bench_fuzz [--inputs N] [--min BYTES] [--max BYTES] [--seconds S] [--seed N]
 *              [--corpus DIR] [--verbose]
 *   bench_fuzz --seeds FIRST COUNT
 *   bench_fuzz --emit-corpus DIR [DICT]
 *
 * --seeds runs the seeded generator's runs FIRST .. FIRST+COUNT-1 once each (the runs
 * `wsim repro seed:N` replays), prints every failing seed, and counts the runs that use
 * the registration's declarations (max-attempts, a dead letter), a retry under them,
 * shutdowns and generated consumer names: a long agreement check in chunks.
 *
 * --emit-corpus writes fuzz_outcomes' seed corpus (fuzz/corpus/fuzz_outcomes/): seeded
 * runs re-encoded as the fuzz bytes that replay them (ch_to_fdp), two passing model-mode
 * runs for every form and mode and one fault-mode run each, checked to replay the same
 * trace from their bytes; and, given DICT, the dictionary (fuzz/dict/fuzz_outcomes.dict)
 * made of their worlds: FuzzedDataProvider reads the world's choices from the end of the
 * input, so each file's last bytes -- as many as its world's choices take -- are a world
 * libFuzzer can splice onto another.
 *
 * Build the release preset for the figure: the engine's debug build is several times
 * slower.
 */
#include <dirent.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "wsi_io.h"
#include "wsi_alloc.h"
#include "wsm.h"

/* The benchmark measures wall time on purpose: it is not a simulation path. */
static double now_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

/* The process's CPU time: on a shared machine, runs per CPU second drift less with the
 * load than runs per wall second (docs/benchmarks.md reports both). */
static double cpu_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
    return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

typedef struct input {
    uint8_t *p;
    size_t n;
} input;

/* Every regular file of dir, in name order is not needed: the mean is what counts. */
static size_t load_corpus(const char *dir, input **out)
{
    DIR *d = opendir(dir);
    if (!d) return 0;
    struct dirent *e;
    size_t n = 0;
    input *v = NULL;
    while ((e = readdir(d)) != NULL) {
        if (e->d_name[0] == '.') continue;
        char path[4096];
        snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
        size_t len;
        uint8_t *buf = (uint8_t *)wsi_read_file(path, 0, &len);
        if (!buf && errno == ENOMEM) wsi_oom("bench");
        if (!buf) continue; /* unreadable: not part of the corpus */
        v = wsi_xrealloc(v, (n + 1) * sizeof *v);
        v[n++] = (input){buf, len};
    }
    closedir(d);
    *out = v;
    return n;
}

static void dict_entry(FILE *d, const char *name, const uint8_t *p, size_t n)
{
    fprintf(d, "%s=\"", name);
    for (size_t i = 0; i < n; i++) fprintf(d, "\\x%02x", p[i]);
    fprintf(d, "\"\n");
}

/* The seed corpus and its dictionary: see the top of the file. */
static int emit_corpus(const char *dir, const char *dict)
{
    FILE *d = NULL;
    if (dict) {
        d = fopen(dict, "w");
        if (!d) {
            fprintf(stderr, "bench_fuzz: cannot write %s\n", dict);
            return 1;
        }
        fputs("# fuzz_outcomes: the input is read as FuzzedDataProvider reads it (wsm_choice.h),\n"
              "# the world first, from the END of the input (fault mode, form, mode, COUNT, batch,\n"
              "# delay queue, recovery, reply output, max-attempts and dead letter, consumer\n"
              "# names), then each step.  The world_ tokens are the last bytes of the seed corpus\n"
              "# files that its world's choices take -- whole worlds, every form and mode, fault\n"
              "# mode or not, that libFuzzer can splice onto an input; the others end a run (0),\n"
              "# turn fault mode on (7 as the last byte) or take the last choice of a range.\n"
              "# Written with the corpus by `bench_fuzz --emit-corpus DIR DICT`.\n"
              "end_of_run=\"\\x00\"\nfault_mode=\"\\x07\"\nmax_byte=\"\\xff\"\n", d);
    }
    unsigned want[5][4][2] = {{{0}}};
    size_t written = 0;
    for (uint64_t seed = 1; seed < 200000 && written < 36; seed++) {
        ch c;
        ch_init_prng(&c, seed, 1);
        gen_limits lim = gen_target_limits();
        lim.keep_trace = 1; /* the two runs below are compared by their traces */
        gen_failure f;
        gen_run run;
        int failed = gen_check_choices(&c, &lim, GEN_QUIRKS_KNOWN, &f, &run);
        int form = run.cfg.form, mode = run.cfg.mode, faults = run.cfg.faults;
        unsigned need = faults ? 1 : 2;
        size_t steps = run.nsteps;
        size_t nworld = steps ? run.steps[0].choice_at : 0; /* the world's choices */
        gen_failure_free(&f);
        gen_free(&run);
        if (failed || steps < 12 || steps > 60 || want[form][mode][faults] >= need) {
            ch_free(&c);
            continue;
        }
        size_t n;
        const ch_rec *rec = ch_recorded(&c, &n);
        uint8_t *bytes;
        size_t len = ch_to_fdp(rec, n, &bytes);
        size_t wbytes = 0; /* the bytes the world takes: the last ones of the input */
        for (size_t i = 0; i < nworld && i < n; i++) wbytes += ch_fdp_width(rec[i].range, rec[i].how);
        /* the bytes must replay the very run the seed made */
        ch a, b;
        ch_init_prng(&a, seed, 0);
        ch_init_fdp(&b, bytes, len, 0);
        gen_run ra, rb;
        gen_generate(&a, &lim, &ra);
        gen_generate(&b, &lim, &rb);
        int same = ws_sim_trace_hash(ra.sim) == ws_sim_trace_hash(rb.sim);
        gen_free(&ra);
        gen_free(&rb);
        ch_free(&a);
        ch_free(&b);
        if (same) {
            char path[4096];
            snprintf(path, sizeof path, "%s/seed-%06llu", dir, (unsigned long long)seed);
            FILE *out = fopen(path, "wb");
            if (!out || fwrite(bytes, 1, len, out) != len) {
                fprintf(stderr, "bench_fuzz: cannot write %s\n", path);
                free(bytes);
                ch_free(&c);
                if (out) fclose(out);
                return 1;
            }
            fclose(out);
            want[form][mode][faults]++;
            written++;
            if (d) {
                char name[32];
                snprintf(name, sizeof name, "world_%02zu", written);
                size_t k = len < wbytes ? len : wbytes;
                dict_entry(d, name, bytes + len - k, k);
            }
        }
        free(bytes);
        ch_free(&c);
    }
    if (d) fclose(d);
    printf("bench_fuzz: %zu corpus files written to %s\n", written, dir);
    return written ? 0 : 1;
}

/* Seeds first .. first+count-1, each run once: see the top of the file. */
static int run_seeds(uint64_t first, uint64_t count)
{
    uint64_t failures = 0, model_mode = 0, declared = 0, retried_declared = 0, shutdowns = 0,
             auto_names = 0, steps = 0, drains_lost = 0, skipping = 0;
    double t0 = now_s();
    for (uint64_t seed = first; seed < first + count; seed++) {
        ch c;
        ch_init_prng(&c, seed, 0);
        gen_limits lim = gen_target_limits();
        gen_failure f;
        gen_run run;
        int failed = gen_check_choices(&c, &lim, GEN_QUIRKS_KNOWN, &f, &run);
        if (failed) {
            failures++;
            fprintf(stderr, "seed:%llu fails (%s): %.300s\n", (unsigned long long)seed, f.kind,
                    f.message ? f.message : "");
        }
        const gen_config *cfg = &run.cfg;
        int decl = cfg->max_attempts || cfg->dead_letter;
        int retried = 0, shut = 0, lost_drain = 0;
        for (size_t i = 0; i < run.nsteps; i++) {
            const gen_step *st = &run.steps[i];
            retried |= st->kind == GS_SETTLE &&
                       (st->outcome == WS_RETRY || st->outcome == WS_RETRY_AFTER);
            shut |= st->kind == GS_SHUTDOWN;
            lost_drain |= st->kind == GS_SHUTDOWN && st->drains_lost;
        }
        drains_lost += (uint64_t)lost_drain;
        if (run.sim) skipping += ws_sim_get_counts(run.sim).skipped > 0;
        model_mode += !cfg->faults;
        declared += (uint64_t)decl;
        retried_declared += (uint64_t)(decl && retried);
        shutdowns += (uint64_t)shut;
        auto_names += (uint64_t)cfg->auto_consumer;
        steps += run.nsteps;
        gen_failure_free(&f);
        gen_free(&run);
        ch_free(&c);
    }
    double el = now_s() - t0;
    printf("bench_fuzz: seeds %llu..%llu: %llu runs in %.1f s, %llu failed; %llu in model mode; "
           "%llu declare max-attempts or a dead letter (%llu retry under it); %llu shut down; "
           "%llu with generated consumer names; %llu with a drain that lost the race; %llu "
           "with skipped channel messages; mean %.1f steps\n",
           (unsigned long long)first, (unsigned long long)(first + count - 1),
           (unsigned long long)count, el, (unsigned long long)failures,
           (unsigned long long)model_mode, (unsigned long long)declared,
           (unsigned long long)retried_declared, (unsigned long long)shutdowns,
           (unsigned long long)auto_names, (unsigned long long)drains_lost,
           (unsigned long long)skipping, count ? (double)steps / (double)count : 0.0);
    return failures ? 1 : 0;
}

int main(int argc, char **argv)
{
    if ((argc == 3 || argc == 4) && !strcmp(argv[1], "--emit-corpus"))
        return emit_corpus(argv[2], argc == 4 ? argv[3] : NULL);
    if (argc == 4 && !strcmp(argv[1], "--seeds")) {
        gen_tune_heap();
        return run_seeds(strtoull(argv[2], NULL, 10), strtoull(argv[3], NULL, 10));
    }
    gen_tune_heap(); /* as fuzz_outcomes does */
    size_t ninputs = 2000, minlen = 16, maxlen = 256;
    double seconds = 3.0;
    uint64_t seed = 1;
    const char *corpus = NULL;
    int verbose = 0;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        const char *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!strcmp(a, "--inputs") && v) ninputs = strtoull(argv[++i], NULL, 10);
        else if (!strcmp(a, "--min") && v) minlen = strtoull(argv[++i], NULL, 10);
        else if (!strcmp(a, "--max") && v) maxlen = strtoull(argv[++i], NULL, 10);
        else if (!strcmp(a, "--seconds") && v) seconds = atof(argv[++i]);
        else if (!strcmp(a, "--seed") && v) seed = strtoull(argv[++i], NULL, 10);
        else if (!strcmp(a, "--corpus") && v) corpus = argv[++i];
        else if (!strcmp(a, "--verbose")) verbose = 1;
        else {
            fprintf(stderr, "usage: %s [--inputs N] [--min BYTES] [--max BYTES] [--seconds S] "
                    "[--seed N] [--corpus DIR] [--verbose]\n       %s --seeds FIRST COUNT\n"
                    "       %s --emit-corpus DIR [DICT]\n", argv[0], argv[0], argv[0]);
            return 2;
        }
    }
    if (maxlen < minlen) maxlen = minlen;
    input *in = NULL;
    size_t n = 0;
    if (corpus) {
        n = load_corpus(corpus, &in);
        if (!n) {
            fprintf(stderr, "bench_fuzz: no inputs in %s\n", corpus);
            return 2;
        }
    } else {
        uint64_t st = seed;
        in = wsi_xcalloc(ninputs, sizeof *in);
        for (size_t i = 0; i < ninputs; i++) {
            size_t len = minlen + (size_t)(wsi_splitmix64(&st) % (maxlen - minlen + 1));
            in[i].p = wsi_xmalloc(len ? len : 1);
            for (size_t k = 0; k < len; k++) in[i].p[k] = (uint8_t)wsi_splitmix64(&st);
            in[i].n = len;
        }
        n = ninputs;
    }
    gen_limits lim = gen_target_limits();
    lim.reuse = fr_server_new(NULL); /* as fuzz_outcomes: one fake, reset for each input */
    uint64_t runs = 0, failures = 0, steps = 0, rts = 0, faulty = 0;
    size_t bytes = 0;
    double t0 = now_s(), t = t0, c0 = cpu_s();
    /* whole passes over the inputs until the time is up (at least one pass) */
    do {
        for (size_t i = 0; i < n; i++) {
            wsi_region_begin(); /* as fuzz_outcomes: the run's memory dropped whole */
            ch c;
            ch_init_fdp(&c, in[i].p, in[i].n, 0);
            gen_run run;
            gen_failure f;
            int failed = gen_check_choices(&c, &lim, GEN_QUIRKS_KNOWN, &f, &run);
            failures += (uint64_t)failed;
            if (failed && verbose && failures <= 3) {
                char *text = gen_scenario(&run, "a failing bench input", f.message, f.expect, NULL);
                fprintf(stderr, "input %zu fails (%s):\n%s\n", i, f.kind, text);
                wsi_free(text);
            }
            steps += run.nsteps;
            rts += run.sim ? ws_sim_round_trip_count(run.sim) : 0;
            faulty += (uint64_t)run.cfg.faults;
            gen_failure_free(&f);
            gen_free(&run);
            ch_free(&c);
            wsi_region_end();
            runs++;
            bytes += in[i].n;
        }
        t = now_s();
    } while (t - t0 < seconds);
    double el = t - t0, cpu = cpu_s() - c0;
    printf("bench_fuzz: %llu executions in %.2f s on one core: %.0f per second "
           "(%.0f per CPU second)\n",
           (unsigned long long)runs, el, (double)runs / el, (double)runs / cpu);
    printf("  inputs: %zu %s, mean %.0f bytes; mean %.1f steps and %.1f consumer round trips "
           "per run; %.1f%% in fault mode; %llu failed\n",
           n, corpus ? "corpus files" : "random", (double)bytes / (double)runs,
           (double)steps / (double)runs, (double)rts / (double)runs,
           100.0 * (double)faulty / (double)runs, (unsigned long long)failures);
    for (size_t i = 0; i < n; i++) free(in[i].p);
    free(in);
    fr_server_free(lim.reuse);
    return 0;
}
