/* bench_eval.c -- Lua scripts on the in-process fake against a real redis-server.
 *
 * Three workloads of N commands each, built once (docs/benchmarks.md, "Scripts"):
 *
 *   eval     EVAL "return redis.call('INCR', KEYS[1])" 1 k
 *   evalsha  EVALSHA <its sha1> 1 k (the script loaded with SCRIPT LOAD first, untimed)
 *   incr     INCR k, the same effect without a script, for reference
 *
 * Each round runs a workload on a fresh fr_server through fr_exec, and on a redis-server
 * this program starts (tests/support/redis_harness.h) through hiredis, fully pipelined in
 * batches, after FLUSHALL (and SCRIPT LOAD for evalsha) outside the timed part.  Before
 * timing, each workload runs once on both sides in lockstep and every reply is compared.
 * Prints commands per second per round, the medians and the ratio fake/real per workload,
 * all measured in the same run.
 *
 * Exit status: 0; 1 if the replies differed (the numbers are still printed); 2 on bad
 * usage or when the server cannot be started.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench_common.h"

#define SCRIPT "return redis.call('INCR', KEYS[1])"

typedef struct options {
    size_t ops;   /* commands per round */
    int rounds;   /* timed rounds per side; the median is reported */
    size_t batch; /* commands per pipelined batch on the real server */
} options;

static void usage(FILE *f)
{
    fprintf(f, "usage: bench_eval [-n OPS] [-r ROUNDS] [-b BATCH]\n"
               "  -n, --ops N      commands per round and workload (default 200000)\n"
               "  -r, --rounds N   timed rounds per side, median reported (default 5)\n"
               "  -b, --batch N    pipeline batch for the real server (default 1000)\n");
}

static options parse_options(int argc, char **argv)
{
    options o = {200000, 5, 1000};
    const bench_opt opts[] = {
        {"-n", "--ops", BENCH_OPT_SIZE, &o.ops, 1, 100000000, NULL},
        {"-r", "--rounds", BENCH_OPT_INT, &o.rounds, 1, 1000, NULL},
        {"-b", "--batch", BENCH_OPT_SIZE, &o.batch, 1, 1000000, NULL},
    };
    bench_parse_options(argc, argv, opts, sizeof opts / sizeof opts[0], usage);
    return o;
}

enum { W_EVAL, W_EVALSHA, W_INCR, W_COUNT };
static const char *const wl_names[W_COUNT] = {"eval", "evalsha", "incr"};

/* The script's SHA1 as the fake computes it (SCRIPT LOAD); the server must agree. */
static void script_sha(char sha[41])
{
    fr_server *srv = fr_server_new(NULL);
    fr_client *c = srv ? fr_client_new(srv) : NULL;
    const char *argv[] = {"SCRIPT", "LOAD", SCRIPT};
    const fr_reply *r = c ? fr_exec(c, 3, argv, NULL) : NULL;
    if (!r || r->type != FR_REPLY_BULK || r->len != 40) {
        fprintf(stderr, "bench_eval: SCRIPT LOAD failed on the fake\n");
        exit(2);
    }
    memcpy(sha, r->str, 40);
    sha[40] = '\0';
    fr_client_free(c);
    fr_server_free(srv);
}

static bench_cmds make_workload(int w, size_t ops, const char *sha)
{
    bench_cmds l = {0};
    for (size_t i = 0; i < ops; i++) {
        bench_cmd_begin(&l);
        if (w == W_INCR) {
            bench_cmd_arg(&l, "INCR");
        } else {
            bench_cmd_arg(&l, "%s", w == W_EVAL ? "EVAL" : "EVALSHA");
            bench_cmd_arg(&l, "%s", w == W_EVAL ? SCRIPT : sha);
            bench_cmd_arg(&l, "1");
        }
        bench_cmd_arg(&l, "k");
    }
    bench_cmds_finish(&l);
    return l;
}

/* A fresh fake with the script loaded (the evalsha workload needs it). */
static fr_client *fresh_fake(fr_server **srv)
{
    *srv = fr_server_new(NULL);
    fr_client *c = *srv ? fr_client_new(*srv) : NULL;
    if (!c) {
        fprintf(stderr, "bench_eval: out of memory\n");
        exit(2);
    }
    const char *argv[] = {"SCRIPT", "LOAD", SCRIPT};
    fr_exec(c, 3, argv, NULL);
    return c;
}

static void reset_real(redisContext *ctx)
{
    bench_real_simple(ctx, "FLUSHALL");
    redisReply *r = redisCommand(ctx, "SCRIPT LOAD %s", SCRIPT);
    if (!r || r->type != REDIS_REPLY_STRING) {
        fprintf(stderr, "bench_eval: SCRIPT LOAD failed on the server\n");
        exit(2);
    }
    freeReplyObject(r);
}

int main(int argc, char **argv)
{
    bench_name = "bench_eval";
    options o = parse_options(argc, argv);
    char sha[41];
    script_sha(sha);
    printf("bench_eval: %zu commands per round and workload, %d rounds (median reported)\n"
           "script: %s (sha1 %s)\n", o.ops, o.rounds, SCRIPT, sha);

    bench_real real = {0};
    if (bench_real_announce(&real, 0, o.batch) != 0)
        return 2;

    size_t mismatches = 0;
    uint64_t sink = 0;
    double *fake = wsi_xrealloc(NULL, (size_t)o.rounds * sizeof *fake);
    double *rr = wsi_xrealloc(NULL, (size_t)o.rounds * sizeof *rr);
    double mf[W_COUNT], mreal[W_COUNT];
    for (int w = 0; w < W_COUNT; w++) {
        bench_cmds l = make_workload(w, o.ops, sha);
        fr_server *srv;
        fr_client *c = fresh_fake(&srv);
        reset_real(real.ctx);
        fflush(stdout);
        size_t bad = bench_verify(c, real.ctx, &l, l.n, o.batch, NULL, NULL);
        fr_client_free(c);
        fr_server_free(srv);
        mismatches += bad;
        printf("\n%s: replies %s\n", wl_names[w],
               bad ? "DIFFER (see stderr)" : "agree with the server's");
        printf("%-7s %16s %16s\n", "round", "fake fr_exec", "real pipelined");
        for (int r = 0; r < o.rounds; r++) {
            c = fresh_fake(&srv);
            fake[r] = (double)l.n / bench_fake_run(c, &l, 0, &sink);
            fr_client_free(c);
            fr_server_free(srv);
            reset_real(real.ctx);
            size_t errors = 0;
            rr[r] = (double)l.n / bench_real_run(real.ctx, &l, o.batch, &errors);
            if (errors) mismatches += errors;
            printf("%-7d %14.0f/s %14.0f/s\n", r + 1, fake[r], rr[r]);
        }
        mf[w] = bench_median(fake, o.rounds);
        mreal[w] = bench_median(rr, o.rounds);
        printf("%-7s %14.0f/s %14.0f/s   ratio fake/real %.1fx\n", "median", mf[w], mreal[w],
               mf[w] / mreal[w]);
        bench_cmds_free(&l);
    }
    printf("\nratios fake/real (medians):");
    for (int w = 0; w < W_COUNT; w++)
        printf(" %s %.1fx%s", wl_names[w], mf[w] / mreal[w], w + 1 < W_COUNT ? "," : "\n");
    if (sink == 42) printf("(sink)\n");
    bench_real_stop(&real);
    free(fake);
    free(rr);
    return mismatches ? 1 : 0;
}
