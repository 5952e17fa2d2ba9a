/* bench_engine.c -- the engine's consumer model: round trips per read, and deliveries per
 * second, the window against direct mode, on the in-process fake and on redis-server.
 *
 * Every run is one simulation (ws_sim.h) of one stream subscription (`orders`, group
 * `fulfilment`, consumer `bench`, COUNT -c) whose entries were produced beforehand with
 * ws_sim_produce (not timed): READS x COUNT entries, so every read is full.  For each read
 * the benchmark plays the handlers: each delivery queues one command (`LPUSH picks <id>`,
 * a segment of one command in window and atomic mode, a write through the pool at once in
 * direct mode) and is settled, in read order.
 *
 * Part 1, round trips (SEMANTICS.md §3 and §7), with -R reads per scenario: window, atomic
 * and direct mode, each without retries and with one retried delivery per read (and the
 * window with one retry_after per read through a delay queue); then a reliable list with a
 * recovery set (`jobs`, `jobs:claims`), per COUNT deliveries: a window reads them in one
 * read (orphan sweep, the LMOVE pipeline, the claims), direct mode one per read, as the
 * framework does (ruststream-fred list.rs next_entry: sweep, BLMOVE, ZADD; then the write,
 * LREM and ZREM, each awaited).  The numbers per read come
 * from the engine's own counters (ws_sim_get_counts: read, flush and pool round trips) and
 * the window connection's (ws_conn_get_stats), not from a formula; the formula of §3/§7 is
 * printed beside them as the expectation and a row that differs is flagged.
 *
 * Part 2, throughput: every delivery acked, window, atomic and direct mode, -n reads of
 * COUNT each, timed from the first read to the last settle (CLOCK_MONOTONIC), on the
 * fake and on a redis-server this program starts on a unix socket in a temporary
 * directory (tests/support/redis_harness.h, as bench_fake does), in the same run, -r
 * rounds after one warm-up round, the median reported with the ratio fake/real.  The
 * fake's runs are also timed in this thread's CPU time (the machine is shared: the
 * wall-clock rate moves with whatever else runs, the CPU-time rate much less), and the
 * heap growth per delivery is printed (mallinfo2).  After each run the server's state is
 * checked (nothing pending, one LPUSH per acked delivery).
 *
 * Exit status: 0; 1 if a count or a final state differs from what SEMANTICS.md says (the
 * numbers are still printed); 2 on bad usage, an engine failure, or no server.
 */
#include <malloc.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "bench_common.h"
#include "ws_sim.h"

/* ----- Options -------------------------------------------------------------------- */

typedef struct options {
    size_t count;    /* COUNT per read */
    size_t reads;    /* reads per timed run */
    size_t rt_reads; /* reads per round-trip scenario */
    int rounds;      /* timed rounds per side and mode; the median is reported */
    int real;        /* also run against a real redis-server */
} options;

/* Prints the options on f. */
static void usage(FILE *f)
{
    fprintf(f,
            "usage: bench_engine [-c COUNT] [-n READS] [-R READS] [-r ROUNDS] [--fake-only]\n"
            "  -c, --count N      COUNT per read (default 64)\n"
            "  -n, --reads N      reads per timed run (default 200)\n"
            "  -R, --rt-reads N   reads per round-trip scenario (default 20)\n"
            "  -r, --rounds N     timed rounds per side and mode, median reported "
            "(default 5)\n"
            "  --fake-only        do not start a redis-server\n");
}

/* Reads the command line; exits 0 after --help, 2 on a bad option or value. */
static options parse_options(int argc, char **argv)
{
    options o = {64, 200, 20, 5, 1};
    const bench_opt opts[] = {
        {"-c", "--count", BENCH_OPT_SIZE, &o.count, 2, 10000, NULL},
        {"-n", "--reads", BENCH_OPT_SIZE, &o.reads, 1, 1000000, NULL},
        {"-R", "--rt-reads", BENCH_OPT_SIZE, &o.rt_reads, 1, 100000, NULL},
        {"-r", "--rounds", BENCH_OPT_INT, &o.rounds, 1, 1000, NULL},
        {NULL, "--fake-only", BENCH_OPT_OFF, &o.real, 0, 0, NULL},
    };
    bench_parse_options(argc, argv, opts, sizeof opts / sizeof opts[0], usage);
    return o;
}

/* ----- One run ---------------------------------------------------------------------- */

/* The sides: the simulation's own fake, or the server this program started. */
enum { SIDE_FAKE, SIDE_REAL, SIDE_COUNT };
static const char *const side_names[SIDE_COUNT] = {"fake", "real"};

/* What one read's non-acked delivery does (the rest ack). */
enum { ODD_NONE, ODD_RETRY, ODD_RETRY_AFTER };

/* One way of running the subscription. */
typedef struct scenario {
    const char *label; /* as printed */
    ws_mode mode;      /* direct, window, atomic */
    int odd;           /* ODD_*: one delivery per read settles this way */
    int list;          /* a reliable list with recovery instead of the stream */
} scenario;

/* The delivery of each read that retries (when the scenario has one): mid-read, so acks
 * come before and after it in settle order. */
#define ODD_INDEX(count) ((count) / 2)
/* retry_after's delay: far beyond the run, so no copy comes back during it. */
#define DELAY_MS 3600000

/* What a run measured. */
typedef struct result {
    ws_sim_counts counts;  /* the engine's round-trip counters over the reads (reads,
                              deliveries and flushes: in all, nothing came before) */
    ws_conn_stats window;  /* the window connection's counters (it is fresh) */
    size_t acked;          /* deliveries acked */
    double seconds;        /* first read to last settle */
    double cpu_seconds;    /* the same span in this thread's CPU time: on the fake, the
                              engine's and the fake's own work, whatever else runs on the
                              machine */
    double heap_bytes;     /* heap growth over the reads (mallinfo2): what the simulation
                              keeps (trace, delivery records) plus, on the fake, the fake's
                              own growth */
    int state_ok;          /* the server's final state is what the outcomes say */
} result;

/* This thread's CPU time, in seconds. */
static double cpu_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* Exits with status 2 after printing the simulation's last failure. */
static void die_sim(ws_sim *sim, const char *what)
{
    fprintf(stderr, "bench_engine: %s: %s (%s)\n", what, ws_err_name(ws_sim_err(sim)),
            ws_sim_errstr(sim));
    exit(2);
}

/* An admin command whose reply must be an integer (XLEN, LLEN, ZCARD); exits otherwise. */
static long long admin_int(ws_sim *sim, const char *line)
{
    const fr_reply *r = NULL;
    if (ws_sim_command_line(sim, line, &r) != 0)
        die_sim(sim, line);
    if (r->type != FR_REPLY_INTEGER) {
        fprintf(stderr, "bench_engine: %s answered no integer\n", line);
        exit(2);
    }
    return r->integer;
}

/* The pending count of the group (XPENDING's summary form). */
static long long pending(ws_sim *sim)
{
    const fr_reply *r = NULL;
    if (ws_sim_command_line(sim, "XPENDING orders fulfilment", &r) != 0)
        die_sim(sim, "XPENDING");
    if (r->type != FR_REPLY_ARRAY || r->count < 1 || r->elements[0].type != FR_REPLY_INTEGER) {
        fprintf(stderr, "bench_engine: XPENDING answered no summary\n");
        exit(2);
    }
    return r->elements[0].integer;
}

/* Runs `reads` full reads of sc on backend (NULL: a new fake), produced beforehand, and
 * fills *out.  Exits (status 2) when the engine refuses a step. */
static void run(const char *backend, const scenario *sc, size_t count, size_t reads,
                result *out)
{
    memset(out, 0, sizeof *out);
    ws_sim_config cfg = {.backend = backend, .seed = 1};
    ws_sim *sim = ws_sim_new(&cfg);
    if (!sim) {
        fprintf(stderr, "bench_engine: out of memory\n");
        exit(2);
    }
    if (ws_sim_err(sim))
        die_sim(sim, "ws_sim_new");
    if (ws_sim_command_line(sim, "FLUSHALL", NULL) != 0 ||
        ws_sim_command_line(sim, "XGROUP CREATE orders fulfilment $ MKSTREAM", NULL) != 0)
        die_sim(sim, "setup");
    size_t total = count * reads;
    for (size_t i = 0; i < total; i++) {
        char payload[32];
        int n = snprintf(payload, sizeof payload, "order-%zu", i + 1);
        if (ws_sim_produce(sim, sc->list ? WS_FORM_RELIABLE_LIST : WS_FORM_STREAM,
                           sc->list ? "jobs" : "orders", payload, (size_t)n, NULL, 0, NULL))
            die_sim(sim, "ws_sim_produce");
    }
    ws_sub_config sub_cfg = {
        .form = WS_FORM_STREAM,
        .mode = sc->mode,
        .key = "orders",
        .group = "fulfilment",
        .consumer = "bench",
        .count = count,
        .delay_queue = sc->odd == ODD_RETRY_AFTER ? "orders:delayed" : NULL,
    };
    if (sc->list)
        sub_cfg = (ws_sub_config){.form = WS_FORM_RELIABLE_LIST, .mode = sc->mode,
                                  .key = "jobs", .count = count, .recovery = "jobs:claims",
                                  .min_idle_ms = DELAY_MS};
    ws_sub *sub = ws_subscribe(sim, &sub_cfg);
    if (!sub)
        die_sim(sim, "ws_subscribe");
    ws_sim_counts before = ws_sim_get_counts(sim);
    struct mallinfo2 m0 = mallinfo2();
    double t0 = bench_now(), c0 = cpu_now();
    /* a direct list read hands out one delivery: COUNT of them make one "read" here */
    size_t per = sc->list && sc->mode == WS_MODE_DIRECT ? count : 1;
    for (size_t r = 0; r < reads * per; r++) {
        ws_read_result rr;
        if (ws_read(sub, &rr) != 0)
            die_sim(sim, "ws_read");
        if (rr.is_report) {
            fprintf(stderr, "bench_engine: %s: a failure report: %s\n", sc->label,
                    rr.report.first_error);
            exit(2);
        }
        if (rr.n != count / per) {
            fprintf(stderr, "bench_engine: %s: read %zu gave %zu deliveries, not %zu\n",
                    sc->label, r + 1, rr.n, count);
            exit(2);
        }
        for (size_t i = 0; i < rr.n; i++) {
            ws_delivery *d = ws_read_delivery(sub, i);
            const char *argv[3] = {"LPUSH", "picks", ws_delivery_id(d)};
            if (ws_queue(d, 3, argv, NULL) != 0)
                die_sim(sim, "ws_queue");
            ws_outcome o = WS_ACK;
            if (i + (per > 1 ? r % per : 0) == ODD_INDEX(count) && sc->odd == ODD_RETRY)
                o = WS_RETRY;
            else if (i == ODD_INDEX(count) && sc->odd == ODD_RETRY_AFTER)
                o = WS_RETRY_AFTER;
            if (ws_settle(d, o, o == WS_RETRY_AFTER ? DELAY_MS : 0) != 0)
                die_sim(sim, "ws_settle");
            out->acked += o == WS_ACK;
        }
    }
    out->seconds = bench_now() - t0;
    out->cpu_seconds = cpu_now() - c0;
    struct mallinfo2 m1 = mallinfo2();
    out->heap_bytes = ((double)m1.uordblks + (double)m1.hblkhd) -
                      ((double)m0.uordblks + (double)m0.hblkhd);
    ws_sim_counts after = ws_sim_get_counts(sim);
    /* Only the reads' round trips: setup was the admin's, uncounted; subtract anyway. */
    out->counts = after;
    out->counts.round_trips -= before.round_trips;
    out->counts.read_round_trips -= before.read_round_trips;
    out->counts.flush_round_trips -= before.flush_round_trips;
    out->counts.pool_round_trips -= before.pool_round_trips;
    out->window = ws_conn_get_stats(ws_sim_window(sim));

    /* What the server holds must be what the outcomes say: nothing pending, one pick per
     * acked delivery (and per retried one in direct mode, whose write went at once), one
     * copy (appended, or scheduled) per odd delivery. */
    long long odd = sc->odd ? (long long)reads : 0;
    long long want_picks = (long long)out->acked + (sc->mode == WS_MODE_DIRECT ? odd : 0);
    if (sc->list) {
        long long picks = admin_int(sim, "LLEN picks");
        long long left = admin_int(sim, "LLEN jobs.processing") + admin_int(sim, "LLEN jobs");
        long long claims = admin_int(sim, "ZCARD jobs:claims");
        out->state_ok = picks == (long long)out->acked && left == 0 && claims == 0;
        if (!out->state_ok)
            fprintf(stderr, "bench_engine: %s: final state: LLEN picks %lld (want %zu), "
                            "%lld left on the lists, ZCARD jobs:claims %lld\n",
                    sc->label, picks, out->acked, left, claims);
        ws_sim_free(sim);
        return;
    }
    long long picks = admin_int(sim, "LLEN picks");
    long long len = admin_int(sim, "XLEN orders");
    long long delayed = admin_int(sim, "ZCARD orders:delayed");
    out->state_ok = pending(sim) == 0 && picks == want_picks &&
                    len == (long long)total + (sc->odd == ODD_RETRY ? odd : 0) &&
                    delayed == (sc->odd == ODD_RETRY_AFTER ? odd : 0);
    if (!out->state_ok)
        fprintf(stderr, "bench_engine: %s: final state: %lld pending, LLEN picks %lld "
                        "(want %lld), XLEN orders %lld, ZCARD orders:delayed %lld\n",
                sc->label, pending(sim), picks, want_picks, len, delayed);
    ws_sim_free(sim);
}

/* ----- Part 1: round trips per read --------------------------------------------------- */

static const scenario rt_scenarios[] = {
    {"window", WS_MODE_WINDOW, ODD_NONE, 0},
    {"window, 1 retry per read", WS_MODE_WINDOW, ODD_RETRY, 0},
    {"window, 1 retry_after (delay queue)", WS_MODE_WINDOW, ODD_RETRY_AFTER, 0},
    {"atomic", WS_MODE_ATOMIC, ODD_NONE, 0},
    {"atomic, 1 retry per read", WS_MODE_ATOMIC, ODD_RETRY, 0},
    {"direct", WS_MODE_DIRECT, ODD_NONE, 0},
    {"direct, 1 retry per read", WS_MODE_DIRECT, ODD_RETRY, 0},
    {"reliable list, window", WS_MODE_WINDOW, ODD_NONE, 1},
    {"reliable list, atomic", WS_MODE_ATOMIC, ODD_NONE, 1},
    {"reliable list, direct", WS_MODE_DIRECT, ODD_NONE, 1},
};
#define N_RT (sizeof rt_scenarios / sizeof rt_scenarios[0])

/* What §3/§7 say a read costs, as the label printed beside the measurement, and whether
 * the measurement agrees.  Window and atomic: one flush round trip per read, two when a
 * retry write must be awaited before the XACK.  Direct: 1 + 2 x COUNT round trips per
 * read (the read, then per delivery its write and its XACK), and a retried delivery's
 * copy is one more round trip (awaited before its XACK, as in the window). */
static int expected(const scenario *sc, size_t count, const result *r, size_t reads,
                    char *label, size_t cap)
{
    if (sc->list && sc->mode == WS_MODE_DIRECT) {
        /* per delivery: the orphan sweep's ZRANGEBYSCORE, BLMOVE, the claim's ZADD, the
         * write, LREM, ZREM (list.rs, recovery.rs) */
        unsigned long long want = 6 * (unsigned long long)count;
        snprintf(label, cap, "all = 6x%zu = %llu", count, want);
        return r->counts.round_trips == want * reads && r->counts.flush_round_trips == 0;
    }
    if (sc->list) {
        /* the sweep, the LMOVE pipeline, the claims; one flush */
        snprintf(label, cap, "read = 3, flush = 1");
        return r->counts.read_round_trips == 3 * reads &&
               r->counts.flush_round_trips == reads && r->counts.flushes == reads;
    }
    if (sc->mode == WS_MODE_DIRECT) {
        unsigned long long want = 1 + 2 * (unsigned long long)count + (sc->odd ? 1 : 0);
        snprintf(label, cap, "all = 1+2x%zu%s = %llu", count, sc->odd ? "+1" : "", want);
        return r->counts.round_trips == want * reads && r->counts.flush_round_trips == 0;
    }
    unsigned want = sc->odd ? 2 : 1;
    snprintf(label, cap, "flush = %u", want);
    return r->counts.flush_round_trips == want * reads &&
           r->counts.flushes == reads;
}

/* Runs every scenario on each active side and prints the table; returns the rows that
 * differ from §3/§7 or whose final state is wrong. */
static int part_round_trips(const options *o, const char *urls[SIDE_COUNT])
{
    printf("\nRound trips per read, measured (ws_sim_get_counts; window connection: "
           "ws_conn_get_stats), COUNT %zu, %zu reads per row\n\n",
           o->count, o->rt_reads);
    printf("%-36s %-4s %6s %6s %6s %7s %8s %9s  %-22s\n", "scenario", "side", "read",
           "flush", "pool", "all", "window", "win cmds", "SEMANTICS.md says");
    int bad = 0;
    for (size_t k = 0; k < N_RT; k++) {
        for (int s = 0; s < SIDE_COUNT; s++) {
            if (s == SIDE_REAL && !urls[s])
                continue;
            result r;
            run(urls[s], &rt_scenarios[k], o->count, o->rt_reads, &r);
            double per = 1.0 / (double)o->rt_reads;
            char label[64];
            int ok = expected(&rt_scenarios[k], o->count, &r, o->rt_reads, label,
                              sizeof label) && r.state_ok;
            bad += !ok;
            printf("%-36s %-4s %6.2f %6.2f %6.2f %7.2f %8.2f %9.2f  %-22s %s\n",
                   rt_scenarios[k].label, side_names[s],
                   (double)r.counts.read_round_trips * per,
                   (double)r.counts.flush_round_trips * per,
                   (double)r.counts.pool_round_trips * per,
                   (double)r.counts.round_trips * per, (double)r.window.round_trips * per,
                   (double)r.window.commands_sent * per, label, ok ? "ok" : "DIFFERS");
        }
    }
    printf("\nread/flush/pool/all: the consumer's round trips per read by cause "
           "(reads, sweeps and list claims; flushes; pool, direct writes and direct "
           "settles); window: round trips of the window connection per read; win cmds: "
           "commands it sent per read.  A reliable list's rows count per COUNT "
           "deliveries: one read of COUNT in a window, COUNT reads of one in direct "
           "mode.\n");
    return bad;
}

/* ----- Part 2: deliveries per second ------------------------------------------------ */

static const scenario tp_scenarios[] = {
    {"window", WS_MODE_WINDOW, ODD_NONE, 0},
    {"atomic", WS_MODE_ATOMIC, ODD_NONE, 0},
    {"direct", WS_MODE_DIRECT, ODD_NONE, 0},
};
#define N_TP (sizeof tp_scenarios / sizeof tp_scenarios[0])

/* Times every mode on each active side, -r rounds after one warm-up round (not counted:
 * the process's heap is cold in it, and on this machine the page faults of a cold heap
 * cost more than the engine), and prints each round, then the medians and the ratios;
 * returns the runs whose final state was wrong. */
static int part_throughput(const options *o, const char *urls[SIDE_COUNT])
{
    printf("\nDeliveries per second: COUNT %zu, %zu reads (%zu deliveries) per run, one "
           "queued LPUSH per delivery, every delivery acked; 1 warm-up round, then %d "
           "rounds\n\n",
           o->count, o->reads, o->count * o->reads, o->rounds);
    int sides = urls[SIDE_REAL] ? SIDE_COUNT : 1;
    double *rate[N_TP][SIDE_COUNT], *cpu_rate[N_TP];
    double rts[N_TP] = {0}, heap[N_TP][SIDE_COUNT] = {{0}};
    int bad = 0;
    for (size_t k = 0; k < N_TP; k++)
        for (int s = 0; s < SIDE_COUNT; s++)
            rate[k][s] = wsi_xrealloc(NULL, (size_t)o->rounds * sizeof(double));
    for (size_t k = 0; k < N_TP; k++)
        cpu_rate[k] = wsi_xrealloc(NULL, (size_t)o->rounds * sizeof(double));
    printf("%-6s %-8s %16s %16s\n", "round", "mode", "fake", sides > 1 ? "real" : "");
    for (int round = -1; round < o->rounds; round++) {
        for (size_t k = 0; k < N_TP; k++) {
            double v[SIDE_COUNT] = {0};
            for (int s = 0; s < sides; s++) {
                result r;
                run(urls[s], &tp_scenarios[k], o->count, o->reads, &r);
                bad += !r.state_ok;
                v[s] = (double)r.counts.deliveries / r.seconds;
                if (round >= 0)
                    rate[k][s][round] = v[s];
                if (round >= 0 && s == SIDE_FAKE)
                    cpu_rate[k][round] = (double)r.counts.deliveries / r.cpu_seconds;
                rts[k] = (double)r.counts.round_trips / (double)o->reads;
                heap[k][s] = r.heap_bytes / (double)r.counts.deliveries;
            }
            char label[16];
            snprintf(label, sizeof label, round < 0 ? "warm" : "%d", round + 1);
            printf("%-6s %-8s %14.0f/s", label, tp_scenarios[k].label, v[SIDE_FAKE]);
            if (sides > 1)
                printf(" %14.0f/s", v[SIDE_REAL]);
            printf("\n");
        }
        fflush(stdout);
    }
    printf("\nmedians of %d rounds, deliveries per second%s\n\n", o->rounds,
           sides > 1 ? "; ratio = fake / real" : "");
    printf("%-8s %8s %14s %14s", "mode", "RT/read", "fake", "fake per CPU");
    if (sides > 1)
        printf(" %14s %7s", "real", "ratio");
    printf(" %10s", "fake/dir");
    if (sides > 1)
        printf(" %10s", "real/dir");
    printf(" %12s", "heap fake");
    if (sides > 1)
        printf(" %12s", "heap real");
    printf("\n");
    double med[N_TP][SIDE_COUNT] = {{0}};
    for (size_t k = 0; k < N_TP; k++)
        for (int s = 0; s < sides; s++)
            med[k][s] = bench_median(rate[k][s], o->rounds);
    for (size_t k = 0; k < N_TP; k++) {
        printf("%-8s %8.2f %12.0f/s %12.0f/s", tp_scenarios[k].label, rts[k], med[k][SIDE_FAKE],
               bench_median(cpu_rate[k], o->rounds));
        if (sides > 1)
            printf(" %12.0f/s %6.1fx", med[k][SIDE_REAL], med[k][SIDE_FAKE] / med[k][SIDE_REAL]);
        printf(" %9.1fx", med[k][SIDE_FAKE] / med[N_TP - 1][SIDE_FAKE]);
        if (sides > 1)
            printf(" %9.1fx", med[k][SIDE_REAL] / med[N_TP - 1][SIDE_REAL]);
        /* mallinfo2 sees nothing under AddressSanitizer's allocator: print "-" then */
        for (int s = 0; s < sides; s++) {
            if (heap[k][s] > 0)
                printf(" %10.0f B", heap[k][s]);
            else
                printf(" %12s", "-");
        }
        printf("\n");
    }
    printf("\nRT/read: the consumer's round trips per read in the timed runs; fake per CPU: "
           "deliveries per second of this thread's CPU time on the fake (what the engine "
           "and the fake cost, whatever else the machine runs); fake/dir, "
           "real/dir: the mode's rate over direct mode's on that side; heap: heap growth "
           "per delivery over the reads of the last run (the simulation keeps its trace and "
           "every delivery record; on the fake the fake's own keyspace growth is "
           "included).\n");
    for (size_t k = 0; k < N_TP; k++) {
        for (int s = 0; s < SIDE_COUNT; s++)
            free(rate[k][s]);
        free(cpu_rate[k]);
    }
    return bad;
}

/* ----- Main ------------------------------------------------------------------------- */

int main(int argc, char **argv)
{
    bench_name = "bench_engine";
    options o = parse_options(argc, argv);
    printf("bench_engine: stream orders, group fulfilment, COUNT %zu; entries produced "
           "beforehand (not timed)\n", o.count);

    bench_real real = {0};
    char url[400] = "";
    const char *urls[SIDE_COUNT] = {NULL, NULL};
    if (o.real) {
        if (bench_real_announce(&real, 1, 0) != 0)
            return 2;
        snprintf(url, sizeof url, "unix://%s", real.rs->socket);
        urls[SIDE_REAL] = url;
    }
    int bad = part_round_trips(&o, urls);
    bad += part_throughput(&o, urls);
    if (bad)
        printf("\n%d runs differ from SEMANTICS.md or left a wrong final state (see above "
               "and stderr)\n", bad);
    bench_real_stop(&real);
    return bad ? 1 : 0;
}
