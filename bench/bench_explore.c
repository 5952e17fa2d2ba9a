/* bench_explore.c -- what `wsim explore` costs: every crash point of an N-delivery scenario
 * (stream, COUNT 64, one queued INCR per delivery, every delivery acked, a reclaim
 * subscription for recovery), against one plain run of the same scenario, in the same
 * process, on the in-process fake; for the plain window and the atomic window.
 *
 * Per mode it prints the crash points, one plain run (best of 5), the exploration with
 * snapshots and one worker (--jobs 1) and with two (--jobs 2), each as a time, a ratio to
 * the plain run and the cost of one point in plain runs, and the speed-up of two workers
 * (the medians of -r repetitions); with --replay also the old path, whose verdicts must be
 * identical (the program fails otherwise).  Then the cost against size: the window mode
 * at N and at 10N deliveries, one worker; the larger one explores every K-th point only
 * (--sample K, default 20: a shard of the points, spread over the whole scenario) and its
 * cost is that per point times the points, said as such.
 *
 * usage: bench_explore [-r REPS] [--replay] [--sample K] [--no-size] [deliveries]
 *        (default 1000 deliveries, 3 repetitions) */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

#include "wsc.h"
#include "wsi_alloc.h"

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* CPU seconds so far, this process and its reaped children (the workers). */
static double cpu_s(void)
{
    struct rusage self, kids;
    getrusage(RUSAGE_SELF, &self);
    getrusage(RUSAGE_CHILDREN, &kids);
    return (double)(self.ru_utime.tv_sec + self.ru_stime.tv_sec + kids.ru_utime.tv_sec +
                    kids.ru_stime.tv_sec) +
           (double)(self.ru_utime.tv_usec + self.ru_stime.tv_usec + kids.ru_utime.tv_usec +
                    kids.ru_stime.tv_usec) / 1e6;
}

/* The scenario text: n entries, read COUNT 64 at a time, each queues an INCR and acks. */
static char *scenario_text(int n, const char *mode)
{
    size_t cap = (size_t)n * 96 + 1024, len = 0;
    char *s = wsi_xmalloc(cap);
#define PUT(...) (len += (size_t)snprintf(s + len, cap - len, __VA_ARGS__))
    PUT("scenario %d deliveries, %s window, COUNT 64\n", n, mode);
    PUT("setup XGROUP CREATE orders g $ MKSTREAM\n");
    PUT("subscribe orders stream orders group g consumer c1 mode %s count 64\n", mode);
    PUT("subscribe recovery stream orders group g consumer c2 mode %s count 64 reclaim 100\n",
        mode);
    for (int i = 0; i < n; i++) PUT("produce orders o%d as e%d\n", i, i);
    for (int i = 0; i < n; i += 64) {
        PUT("read orders\n");
        for (int j = i; j < n && j < i + 64; j++) PUT("e%d: queue INCR n:%d\ne%d: ack\n", j, j, j);
    }
    PUT("expect invariants\n");
#undef PUT
    return s;
}

static wsc_scenario *make(int n, const char *mode)
{
    char *text = scenario_text(n, mode);
    char *err = NULL;
    wsc_scenario *sc = wsc_parse("bench.wsim", text, strlen(text), &err);
    free(text);
    if (!sc) {
        fprintf(stderr, "bench_explore: %s\n", err);
        exit(1);
    }
    return sc;
}

/* This process's CPU seconds (a plain run is single-threaded: on a busy machine its CPU
 * time is what it costs, its wall time also what it waited for a core). */
static double self_cpu_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static double plain_cpu_best; /* the last plain_run's best CPU time */

/* One plain run, best of 5 (wall; its best CPU time in plain_cpu_best). */
static double plain_run(const wsc_scenario *sc)
{
    double best = 1e9;
    plain_cpu_best = 1e9;
    for (int k = 0; k < 5; k++) {
        wsc_result r;
        double c0 = self_cpu_s();
        double t0 = now_s();
        if (wsc_run(sc, NULL, &r) || r.status != WSC_PASS) {
            fprintf(stderr, "bench_explore: the plain run failed: %s\n", r.report ? r.report : "?");
            exit(1);
        }
        double dt = now_s() - t0, dc = self_cpu_s() - c0;
        if (dt < best) best = dt;
        if (dc < plain_cpu_best) plain_cpu_best = dc;
        wsc_result_free(&r);
    }
    return best;
}

/* One exploration, timed; ex is kept for the verdicts (free it). */
static double explore(const wsc_scenario *sc, const wsc_explore_options *xo, wsc_exploration *ex,
                      double *cpu)
{
    double t0 = now_s(), c0 = cpu_s();
    if (wsc_explore_with(sc, NULL, xo, ex) || ex->error || ex->failure) {
        fprintf(stderr, "bench_explore: explore failed: %s\n",
                ex->error ? ex->error : ex->failure ? ex->failure : "out of memory");
        exit(1);
    }
    if (cpu) *cpu = cpu_s() - c0;
    return now_s() - t0;
}

/* A sentence with the recovery's round-trip positions ("window.2 round trip 5") written
 * as "window.2 round trip #": the full recovery's fresh reads and flushes come before the
 * redeliveries on that connection, so its numbers are higher; the rest must agree. */
static char *without_recovery_positions(const char *d)
{
    size_t len = strlen(d);
    char *out = wsi_xmalloc(len + 1);
    size_t n = 0;
    for (size_t i = 0; i < len;) {
        static const char rt[] = " round trip ";
        size_t j = i;
        if (d[i] == '.' && i + 1 < len && d[i + 1] >= '0' && d[i + 1] <= '9') {
            j = i + 1;
            while (j < len && d[j] >= '0' && d[j] <= '9') j++;
            if (strncmp(d + j, rt, sizeof rt - 1) == 0 && j + sizeof rt - 1 < len &&
                d[j + sizeof rt - 1] >= '0' && d[j + sizeof rt - 1] <= '9') {
                memcpy(out + n, d + i, j + sizeof rt - 1 - i);
                n += j + sizeof rt - 1 - i;
                j += sizeof rt - 1;
                while (j < len && d[j] >= '0' && d[j] <= '9') j++;
                out[n++] = '#';
                i = j;
                continue;
            }
        }
        out[n++] = d[i++];
    }
    out[n] = '\0';
    return out;
}

/* Non-zero when the details x and y agree: to the letter, or with but_positions, but for
 * the recovery's round-trip positions. */
static int same_detail(const char *x, const char *y, int but_positions)
{
    if (!but_positions) return !strcmp(x, y);
    char *u = without_recovery_positions(x), *v = without_recovery_positions(y);
    int same = !strcmp(u, v);
    free(u);
    free(v);
    return same;
}

/* Non-zero when a and b give every point the same verdict, flag and detail (same_detail:
 * with but_positions, but for the recovery's round-trip positions). */
static int same_verdicts(const wsc_exploration *a, const wsc_exploration *b, int but_positions)
{
    if (a->npoints != b->npoints) return 0;
    for (size_t i = 0; i < a->npoints; i++) {
        const wsc_crash_point *p = &a->points[i], *q = &b->points[i];
        if (p->explored != q->explored) return 0;
        if (!p->explored) continue;
        if (strcmp(p->verdict, q->verdict) || p->forbidden != q->forbidden ||
            !same_detail(p->detail, q->detail, but_positions))
            return 0;
    }
    return 1;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static double median(double *v, int n)
{
    qsort(v, (size_t)n, sizeof *v, cmp_double);
    return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

static void load_average(void)
{
    FILE *f = fopen("/proc/loadavg", "r");
    char buf[128] = "";
    if (f) {
        if (!fgets(buf, sizeof buf, f)) buf[0] = '\0';
        fclose(f);
    }
    buf[strcspn(buf, "\n")] = '\0';
    printf("load average (1, 5, 15 min, runnable/total, last pid): %s\n", buf);
}

int main(int argc, char **argv)
{
    int n = 1000, reps = 3, replay = 0, sample = 20, size = 1;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "-r") && i + 1 < argc) reps = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--sample") && i + 1 < argc) sample = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--replay")) replay = 1;
        else if (!strcmp(argv[i], "--no-size")) size = 0;
        else n = atoi(argv[i]);
    }
    if (n < 1 || n > 100000 || reps < 1 || reps > 99 || sample < 1) {
        fprintf(stderr, "usage: bench_explore [-r REPS] [--replay] [--sample K] [--no-size] "
                        "[deliveries 1..100000]\n");
        return 2;
    }
    printf("crash exploration of a %d-delivery scenario (in-process fake), medians of %d\n", n,
           reps);
    load_average();
    printf("\n%-7s %7s %10s | %-28s | %-28s | %8s | %s\n", "mode", "points", "plain run",
           "--jobs 1: time, ratio, /point", "--jobs 2: time, ratio, /point", "2 vs 1",
           "verdicts");
    const char *modes[] = {"window", "atomic"};
    double per_point_1000 = 0, explore_1000 = 0, cpu_1000 = 0;
    int status = 0;
    for (int m = 0; m < 2; m++) {
        wsc_scenario *sc = make(n, modes[m]);
        double plain = plain_run(sc), plain_cpu = plain_cpu_best;
        double t1[99], t2[99], ratio[99], c1[99];
        wsc_exploration first = {0};
        for (int k = 0; k < reps; k++) {
            wsc_exploration a, b;
            wsc_explore_options one = {.jobs = 1}, two = {.jobs = 2};
            t1[k] = explore(sc, &one, &a, &c1[k]);
            t2[k] = explore(sc, &two, &b, NULL);
            ratio[k] = t1[k] / t2[k];
            if (!same_verdicts(&a, &b, 0)) {
                fprintf(stderr, "bench_explore: --jobs 1 and --jobs 2 disagree\n");
                status = 1;
            }
            if (k == 0) first = a;
            else wsc_exploration_free(&a);
            wsc_exploration_free(&b);
        }
        double j1 = median(t1, reps), j2 = median(t2, reps), sp = median(ratio, reps),
               cpu1 = median(c1, reps);
        double pts = (double)first.npoints;
        printf("%-7s %7zu %7.1f ms | %6.2f s %6.0fx %7.3f runs | %6.2f s %6.0fx %7.3f runs | "
               "%7.2fx | %zu fine, %zu doubled, %zu lost, %zu split\n",
               modes[m], first.npoints, plain * 1e3, j1, j1 / plain, j1 / plain / pts, j2,
               j2 / plain, j2 / plain / pts, sp, first.fine, first.doubled, first.lost,
               first.split);
        printf("%-7s --jobs 1 used %.2f s of CPU (parent and workers): %.3f ms a point, %.3f "
               "plain runs' CPU (%.1f ms) per point; recovery %s\n",
               modes[m], cpu1, cpu1 / pts * 1e3, cpu1 / plain_cpu / pts, plain_cpu * 1e3,
               first.bounded ? "bounded to what each crash left" : "full (read until nothing comes)");
        /* what a point cannot cost less than: its recovery's deliveries, each at what a
         * delivery costs in the plain run (its CPU over its n deliveries) */
        size_t recovered = 0, explored = 0;
        for (size_t i = 0; i < first.npoints; i++)
            if (first.points[i].explored) {
                recovered += first.points[i].recovered;
                explored++;
            }
        double per_delivery = plain_cpu / n, redo = explored ? (double)recovered / explored : 0;
        double necessary = redo * per_delivery, point = cpu1 / pts, beyond = point - necessary;
        printf("%-7s a point's recovery redoes %.1f deliveries (%.3f ms at the plain run's %.2f "
               "us a delivery); the point costs %.3f ms of CPU: %.3f ms beyond them, %.2fx the "
               "necessary recovery (target <= 0.5x)\n",
               modes[m], redo, necessary * 1e3, per_delivery * 1e6, point * 1e3, beyond * 1e3,
               necessary > 0 ? beyond / necessary : 0);
        if (m == 0) {
            per_point_1000 = j1 / pts;
            explore_1000 = j1;
            cpu_1000 = cpu1;
        }
        if (replay) {
            wsc_exploration r;
            /* the path of before: replayed, the full recovery, every entry checked */
            wsc_explore_options old = {.replay = 1, .full_recovery = 1};
            double cr;
            double tr = explore(sc, &old, &r, &cr);
            int same = same_verdicts(&first, &r, 0);
            int close = same || same_verdicts(&first, &r, 1);
            printf("%-7s the path of before (--replay, the full recovery, every entry checked): "
                   "%.2f s (%.2f s of CPU), %.0fx, %.3f runs per point; verdicts %s\n",
                   modes[m], tr, cr, tr / plain, tr / plain / pts,
                   same    ? "identical"
                   : close ? "identical (the sentences differ only in the recovery's round-trip "
                             "numbers)"
                           : "DIFFERENT");
            if (!close) status = 1;
            wsc_exploration_free(&r);
        }
        fflush(stdout);
        wsc_exploration_free(&first);
        wsc_free(sc);
    }
    if (size) {
        /* cost against size: the window mode at 10n, every sample-th point */
        int big = n * 10;
        wsc_scenario *sc = make(big, "window");
        double plain = plain_run(sc);
        wsc_exploration ex;
        wsc_explore_options xo = {.jobs = 1, .shard = 1, .nshards = (size_t)sample};
        double cs, c1;
        double t = explore(sc, &xo, &ex, &cs);
        /* what every exploration pays once: the baseline and the snapshot run (a shard of
         * one point: the last), taken out of the sample before it is scaled up */
        wsc_exploration one;
        wsc_explore_options xo1 = {.jobs = 1, .shard = ex.npoints, .nshards = ex.npoints};
        double t1 = explore(sc, &xo1, &one, &c1);
        wsc_exploration_free(&one);
        double per_point = t / (double)ex.explored, total = per_point * (double)ex.npoints;
        double marginal = (t - t1) / (double)(ex.explored - 1);
        double total2 = t1 + marginal * (double)(ex.npoints - 1);
        double cpu_marginal = (cs - c1) / (double)(ex.explored - 1);
        printf("\ncost against size (window, --jobs 1):\n");
        printf("  %6d deliveries: %6zu points, %8.2f s (all points), %6.2f ms per point\n", n,
               (size_t)(explore_1000 / per_point_1000 + 0.5), explore_1000, per_point_1000 * 1e3);
        printf("  %6d deliveries: %6zu points, %8.2f s (estimated: %zu points explored, every "
               "%d-th, in %.2f s), %6.2f ms per point; one plain run %.1f ms\n",
               big, ex.npoints, total, ex.explored, sample, t, per_point * 1e3, plain * 1e3);
        printf("  ratio %.1fx for 10x the deliveries (linear would be about 10x)\n",
               total / explore_1000);
        printf("  the same with the runs every exploration makes once (baseline and snapshot "
               "run: %.2f s, %.2f s of CPU, measured with one point) counted once: %.2f s, "
               "%.2f ms (%.2f ms of CPU) a point beyond them; ratio %.1fx\n",
               t1, c1, total2, marginal * 1e3, cpu_marginal * 1e3, total2 / explore_1000);
        double cpu_total = c1 + cpu_marginal * (double)(ex.npoints - 1);
        printf("  in CPU time (parent and workers): %.2f s at %d deliveries, %.1f s estimated at "
               "%d: ratio %.1fx\n",
               cpu_1000, n, cpu_total, big, cpu_total / cpu_1000);
        wsc_exploration_free(&ex);
        wsc_free(sc);
    }
    return status;
}
