/* bench_explore.c -- what `wsim explore` costs: every crash point of a 1,000-delivery
 * scenario (stream, COUNT 64, one queued INCR per delivery, every delivery acked, a
 * reclaim subscription for recovery), against one plain run of the same scenario, in the
 * same process, on the in-process fake.  Prints the crash points, both times, the ratio
 * and the cost of one point in plain runs; for the plain window and the atomic window.
 *
 * usage: bench_explore [deliveries]   (default 1000) */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "wsc.h"

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* The scenario text: n entries, read COUNT 64 at a time, each queues an INCR and acks. */
static char *scenario_text(int n, const char *mode)
{
    size_t cap = (size_t)n * 96 + 1024, len = 0;
    char *s = malloc(cap);
    if (!s) abort();
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

int main(int argc, char **argv)
{
    int n = argc > 1 ? atoi(argv[1]) : 1000;
    if (n < 1 || n > 100000) {
        fprintf(stderr, "usage: bench_explore [deliveries 1..100000]\n");
        return 2;
    }
    printf("crash exploration of a %d-delivery scenario (in-process fake, one core)\n\n", n);
    printf("%-8s %8s %12s %12s %10s %14s %s\n", "mode", "points", "plain run", "explore",
           "ratio", "per point", "verdicts");
    const char *modes[] = {"window", "atomic"};
    for (int m = 0; m < 2; m++) {
        char *text = scenario_text(n, modes[m]);
        char *err = NULL;
        wsc_scenario *sc = wsc_parse("bench.wsim", text, strlen(text), &err);
        free(text);
        if (!sc) {
            fprintf(stderr, "%s\n", err);
            return 1;
        }
        /* the plain run: best of 5 */
        double plain = 1e9;
        for (int k = 0; k < 5; k++) {
            wsc_result r;
            double t0 = now_s();
            if (wsc_run(sc, NULL, &r) || r.status != WSC_PASS) {
                fprintf(stderr, "the plain run failed: %s\n", r.report ? r.report : "?");
                return 1;
            }
            double dt = now_s() - t0;
            if (dt < plain) plain = dt;
            wsc_result_free(&r);
        }
        wsc_exploration ex;
        double t0 = now_s();
        if (wsc_explore(sc, NULL, &ex) || ex.error) {
            fprintf(stderr, "explore failed: %s\n", ex.error ? ex.error : "out of memory");
            return 1;
        }
        double dt = now_s() - t0;
        printf("%-8s %8zu %10.1f ms %10.2f s %9.0fx %11.2f runs   %zu fine, %zu doubled, "
               "%zu lost, %zu split\n",
               modes[m], ex.npoints, plain * 1e3, dt, dt / plain,
               dt / plain / (double)ex.npoints, ex.fine, ex.doubled, ex.lost, ex.split);
        wsc_exploration_free(&ex);
        wsc_free(sc);
    }
    return 0;
}
