/* bench_process.c -- the figures of issue 22 (docs/benchmarks.md, "Consumer processes"):
 *
 *   explore: `wsim explore` on the process form of a scenario of ENTRIES (default 100)
 *            entries, the engine run as a live consumer process (`wsim consume`, the
 *            C/libwsim consumer), with --jobs 1 and --jobs 2: points per second, and
 *            wsim's own share of each point's time beyond the consumer's own time (from
 *            each start of the consumer to its crash, or to its last command before it
 *            settled: wsc_world.h) -- the target is at most 20%;
 *   block:   a consumer whose reads block 5 s (BLOCK 5000) and whose recovery waits 5 s
 *            (a reclaim's min-idle 5000) settling ENTRIES entries after a crash, on the
 *            virtual clock that moves itself: its wall time (target: under a second)
 *            against the virtual time it covered.
 *
 *   bench_process [--entries N] [--only explore|block] [-r REPEATS]
 *
 * Times are wall clock; the machine is shared, so the load average is printed with them.
 * BENCH_KEEP=1 keeps the generated files (their directory is in /tmp). */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "wsc.h"

#ifndef WSIM_TOOL
#define WSIM_TOOL "wsim"
#endif

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void load(char *buf, size_t cap)
{
    FILE *f = fopen("/proc/loadavg", "r");
    buf[0] = '\0';
    if (f) {
        if (!fgets(buf, (int)cap, f)) buf[0] = '\0';
        fclose(f);
    }
    char *sp = strchr(buf, ' ');
    if (sp) sp = strchr(sp + 1, ' ');
    if (sp) *sp = '\0';
}

/* Writes text to dir/name; returns the path (static buffer per call site: copied by the
 * caller). */
static int write_file(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");
    if (!f) return -1;
    fputs(text, f);
    return fclose(f);
}

/* The engine's handler spec: ENTRIES entries read in one window (COUNT), each INCRs a key
 * of its own and acks; block/min-idle as given. */
static char *spec(int entries, int block_ms, int min_idle_ms, int reads)
{
    size_t cap = (size_t)entries * 160 + 4096, len = 0;
    char *t = malloc(cap);
    len += (size_t)snprintf(t + len, cap - len,
                            "scenario bench: %d entries, each INCRs a key of its own and acks\n"
                            "setup XGROUP CREATE orders g $ MKSTREAM\n"
                            "subscribe orders stream orders group g consumer c1 count %d "
                            "block %d\n"
                            "subscribe recovery stream orders group g consumer c2 reclaim %d "
                            "count %d block %d\n",
                            entries, entries, block_ms, min_idle_ms, entries, block_ms);
    for (int i = 1; i <= entries; i++)
        len += (size_t)snprintf(t + len, cap - len, "produce orders \"order %d\" as o%d\n", i, i);
    if (reads) len += (size_t)snprintf(t + len, cap - len, "read orders\n");
    for (int i = 1; i <= entries; i++)
        len += (size_t)snprintf(t + len, cap - len, "o%d: queue INCR n:$o%d\no%d: ack\n", i, i, i);
    snprintf(t + len, cap - len, "expect nothing\n");
    return t;
}

/* The process form: the spec's world, the engine as the consumer process, a wait; fault:
 * a fault line before the start, or NULL. */
static char *process_form(const char *spec_path, const char *spec_text, const char *fault)
{
    size_t cap = strlen(spec_text) + 4096, len = 0;
    char *t = malloc(cap);
    len += (size_t)snprintf(t + len, cap - len, "scenario bench: the process form of %s\n"
                            "consumer live run %s consume %s\n", spec_path, WSIM_TOOL, spec_path);
    for (const char *p = spec_text; *p;) {
        const char *e = strchr(p, '\n');
        size_t n = e ? (size_t)(e - p) + 1 : strlen(p);
        if (!strncmp(p, "setup ", 6) || !strncmp(p, "subscribe ", 10) || !strncmp(p, "produce ", 8)) {
            memcpy(t + len, p, n);
            len += n;
        }
        p += n;
    }
    snprintf(t + len, cap - len, "%s%sstart live\nwait live settled within 60s\nexpect nothing\n",
             fault ? fault : "", fault ? "\n" : "");
    return t;
}

static wsc_scenario *parse(const char *path)
{
    char *err = NULL;
    wsc_scenario *sc = wsc_parse_file(path, &err);
    if (!sc) {
        fprintf(stderr, "bench_process: %s\n", err ? err : "out of memory");
        exit(1);
    }
    return sc;
}

static int bench_explore(const char *dir, int entries)
{
    char sp[512], pf[512];
    snprintf(sp, sizeof sp, "%s/spec.wsim", dir);
    snprintf(pf, sizeof pf, "%s/process.wsim", dir);
    char *s = spec(entries, 10, 100, 1), *p = process_form(sp, s, NULL);
    if (write_file(sp, s) || write_file(pf, p)) return 1;
    free(s);
    free(p);
    wsc_scenario *sc = parse(pf);
    printf("explore: %d entries, the engine as a live process (wsim consume), window mode\n",
           entries);
    for (int jobs = 1; jobs <= 2; jobs++) {
        char times[600], ld[64];
        snprintf(times, sizeof times, "%s/times-%d", dir, jobs);
        unlink(times);
        setenv("WSIM_EXPLORE_TIMES", times, 1);
        wsc_options o = {0};
        wsc_explore_options xo = {.jobs = jobs};
        wsc_exploration ex;
        double t0 = now_s();
        if (wsc_explore_with(sc, &o, &xo, &ex)) return 1;
        double el = now_s() - t0;
        load(ld, sizeof ld);
        if (ex.error || ex.failure) {
            fprintf(stderr, "bench_process: %s\n", ex.error ? ex.error : ex.failure);
            return 1;
        }
        /* the points' own times: wsim's share beyond the consumer's */
        FILE *f = fopen(times, "r");
        long long pt, ct, sum_p = 0, sum_c = 0, n = 0;
        while (f && fscanf(f, "%lld %lld", &pt, &ct) == 2) {
            sum_p += pt;
            sum_c += ct;
            n++;
        }
        if (f) fclose(f);
        printf("  --jobs %d: %zu points in %.2f s: %.1f points/s (%zu fine, %zu doubled, %zu "
               "other); per point %.1f ms, the consumer's own %.1f ms, wsim's share %.1f%% "
               "beyond it (load %s)\n",
               jobs, ex.explored, el, (double)ex.explored / el, ex.fine, ex.doubled, ex.other,
               n ? (double)sum_p / (double)n : 0, n ? (double)sum_c / (double)n : 0,
               sum_c ? 100.0 * (double)(sum_p - sum_c) / (double)sum_c : 0, ld);
        wsc_exploration_free(&ex);
    }
    unsetenv("WSIM_EXPLORE_TIMES");
    wsc_free(sc);
    return 0;
}

static int bench_block(const char *dir, int entries)
{
    char sp[512], pf[512];
    snprintf(sp, sizeof sp, "%s/spec-block.wsim", dir);
    snprintf(pf, sizeof pf, "%s/process-block.wsim", dir);
    /* reads block 5 s; the recovery claims what was left pending once it is 5 s idle */
    char *s = spec(entries, 5000, 5000, 0);
    char *p = process_form(sp, s, "fault live crash-before 1st XACK");
    if (write_file(sp, s) || write_file(pf, p)) return 1;
    free(s);
    free(p);
    wsc_scenario *sc = parse(pf);
    wsc_options o = {0};
    wsc_result r;
    char ld[64];
    double t0 = now_s();
    if (wsc_run(sc, &o, &r)) return 1;
    double el = now_s() - t0;
    load(ld, sizeof ld);
    if (r.status != WSC_PASS) {
        fprintf(stderr, "bench_process: block: %s\n", r.report ? r.report : "failed");
        return 1;
    }
    printf("block: %d entries read with BLOCK 5000, the consumer killed before its XACK, "
           "claimed back after 5 s idle (XAUTOCLAIM min-idle 5000) and settled: %.3f s of "
           "wall time, the virtual clock's moves included (load %s)\n",
           entries, el, ld);
    wsc_result_free(&r);
    wsc_free(sc);
    return 0;
}

int main(int argc, char **argv)
{
    int entries = 100, repeats = 1;
    const char *only = NULL;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--entries") && i + 1 < argc) entries = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--only") && i + 1 < argc) only = argv[++i];
        else if (!strcmp(argv[i], "-r") && i + 1 < argc) repeats = atoi(argv[++i]);
        else {
            fprintf(stderr, "usage: bench_process [--entries N] [--only explore|block] [-r N]\n");
            return 2;
        }
    }
    if (entries < 1 || entries > 10000 || repeats < 1) return 2;
    char dir[] = "/tmp/wsim-bench-process.XXXXXX";
    if (!mkdtemp(dir)) return 1;
    int rc = 0;
    for (int r = 0; r < repeats && !rc; r++) {
        if (!only || !strcmp(only, "explore")) rc |= bench_explore(dir, entries);
        if (!only || !strcmp(only, "block")) rc |= bench_block(dir, entries);
    }
    if (getenv("BENCH_KEEP")) return rc;
    char cmd[600];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    if (system(cmd) != 0) rc = 1;
    return rc;
}
