/* bench_fake.c -- throughput of the in-process fake against a real redis-server.
 *
 * One fixed, seeded workload of N commands -- SET/GET/INCR, LPUSH/LRANGE/LREM, HINCRBY,
 * ZADD/ZRANGEBYSCORE and MULTI blocks (MULTI, INCR, LPUSH, EXEC) in fixed proportions over
 * a bounded key space -- is generated once, then executed in several rounds:
 *
 *   fake   through fr_exec, the reply-tree API a test calls, on a fresh fr_server per round;
 *   fake   through fr_exec_resp (raw reply bytes, no tree), for reference;
 *   real   through hiredis on the unix socket of a redis-server this program starts
 *          (tests/support/redis_harness.h), fully pipelined: a batch of commands appended
 *          with redisAppendCommandArgv, then one redisGetReply per command; FLUSHALL
 *          between rounds.
 *
 * Before the timed rounds both sides run the workload once in lockstep and every reply is
 * compared (the fake's reply tree against hiredis' parse of the real one), so the numbers
 * are for a fake that answers what the server answers.  Each round's time covers only
 * executing the commands and reading their replies.  Prints commands per second per round,
 * the medians and the ratio fake/real (the target is at least 20x).
 *
 * Exit status: 0; 1 if the replies differed (the numbers are still printed); 2 on bad
 * usage or when the server cannot be started.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <hiredis/hiredis.h>

#include "fakeredis.h"
#include "redis_harness.h"

/* ----- Options -------------------------------------------------------------------- */

typedef struct options {
    size_t ops;       /* commands per round */
    int rounds;       /* timed rounds per side; the median is reported */
    size_t batch;     /* commands per pipelined batch on the real server */
    unsigned keys;    /* distinct keys per data type */
    uint64_t seed;    /* the workload's generator seed */
    int real;         /* also run against a real redis-server */
    int verify;       /* compare every reply before timing */
} options;

static void usage(FILE *f)
{
    fprintf(f,
            "usage: bench_fake [-n OPS] [-r ROUNDS] [-b BATCH] [-k KEYS] [-s SEED]\n"
            "                  [--fake-only] [--no-verify]\n"
            "  -n, --ops N      commands per round (default 200000)\n"
            "  -r, --rounds N   timed rounds per side, median reported (default 5)\n"
            "  -b, --batch N    pipeline batch for the real server (default 1000)\n"
            "  -k, --keys N     distinct keys per data type (default 1000)\n"
            "  -s, --seed N     workload seed (default 42)\n"
            "  --fake-only      do not start a redis-server\n"
            "  --no-verify      skip the reply-by-reply comparison with the server\n");
}

/* Parses an unsigned decimal option value in [min, max]; exits with usage on error. */
static unsigned long long parse_num(const char *opt, const char *s, unsigned long long min,
                                    unsigned long long max)
{
    char *end;
    errno = 0;
    unsigned long long v = strtoull(s ? s : "", &end, 10);
    if (!s || !*s || *end || errno || v < min || v > max || *s == '-') {
        fprintf(stderr, "bench_fake: %s wants a number in [%llu, %llu], got '%s'\n", opt, min,
                max, s ? s : "");
        exit(2);
    }
    return v;
}

static options parse_options(int argc, char **argv)
{
    options o = {200000, 5, 1000, 1000, 42, 1, 1};
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!strcmp(a, "-n") || !strcmp(a, "--ops"))
            o.ops = parse_num(a, v, 1, 100000000), i++;
        else if (!strcmp(a, "-r") || !strcmp(a, "--rounds"))
            o.rounds = (int)parse_num(a, v, 1, 1000), i++;
        else if (!strcmp(a, "-b") || !strcmp(a, "--batch"))
            o.batch = parse_num(a, v, 1, 1000000), i++;
        else if (!strcmp(a, "-k") || !strcmp(a, "--keys"))
            o.keys = (unsigned)parse_num(a, v, 1, 10000000), i++;
        else if (!strcmp(a, "-s") || !strcmp(a, "--seed"))
            o.seed = parse_num(a, v, 0, UINT64_MAX), i++;
        else if (!strcmp(a, "--fake-only"))
            o.real = 0;
        else if (!strcmp(a, "--no-verify"))
            o.verify = 0;
        else if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
            usage(stdout);
            exit(0);
        } else {
            usage(stderr);
            exit(2);
        }
    }
    return o;
}

/* ----- The workload ----------------------------------------------------------------- */

/* The workload's own generator (splitmix64), so the command sequence is the same on every
 * machine and libc for a given seed. */
static uint64_t rng_next(uint64_t *s)
{
    uint64_t z = (*s += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

static unsigned rng_below(uint64_t *s, unsigned n) { return (unsigned)(rng_next(s) % n); }

/* The commands, stored flat: command i has argc[i] arguments starting at argv[first[i]]. */
typedef struct workload {
    size_t n;            /* commands */
    int *argc;           /* per command */
    size_t *first;       /* per command: index of its first argument */
    const char **argv;   /* every argument, NUL-terminated, pointing into text */
    size_t *argvlen;     /* every argument's length */
    size_t nargs;        /* arguments in all */
    char *text;          /* the arguments' bytes */
    size_t mix[11];      /* commands generated per kind (see kind_names) */
} workload;

/* The kinds of operation and their share of the draws, in percent. */
enum { K_SET, K_GET, K_INCR, K_LPUSH, K_LRANGE, K_LREM, K_HINCRBY, K_ZADD, K_ZRANGEBYSCORE,
       K_MULTI, K_COUNT };
static const char *const kind_names[K_COUNT] = {
    "SET", "GET", "INCR", "LPUSH", "LRANGE", "LREM", "HINCRBY", "ZADD", "ZRANGEBYSCORE",
    "MULTI/INCR/LPUSH/EXEC"};
static const unsigned kind_percent[K_COUNT] = {15, 20, 10, 10, 7, 5, 10, 10, 8, 5};

/* A builder: arguments are first collected as offsets into a growing text buffer and
 * turned into pointers once the buffer stops moving. */
typedef struct builder {
    workload *w;
    size_t cap_cmds, cap_args, text_len, text_cap;
    size_t *offs; /* argument offsets into w->text until finish_workload */
} builder;

static void *xrealloc(void *p, size_t n)
{
    p = realloc(p, n ? n : 1);
    if (!p) {
        fprintf(stderr, "bench_fake: out of memory\n");
        exit(2);
    }
    return p;
}

static void begin_command(builder *b)
{
    workload *w = b->w;
    if (w->n == b->cap_cmds) {
        b->cap_cmds = b->cap_cmds ? b->cap_cmds * 2 : 1024;
        w->argc = xrealloc(w->argc, b->cap_cmds * sizeof *w->argc);
        w->first = xrealloc(w->first, b->cap_cmds * sizeof *w->first);
    }
    w->argc[w->n] = 0;
    w->first[w->n] = w->nargs;
    w->n++;
}

/* Appends one printf-formatted argument to the command being built. */
static void arg(builder *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void arg(builder *b, const char *fmt, ...)
{
    workload *w = b->w;
    char tmp[128];
    va_list ap;
    va_start(ap, fmt);
    int len = vsnprintf(tmp, sizeof tmp, fmt, ap);
    va_end(ap);
    if (len < 0 || (size_t)len >= sizeof tmp)
        abort(); /* the workload's arguments are all short */
    if (w->nargs == b->cap_args) {
        b->cap_args = b->cap_args ? b->cap_args * 2 : 4096;
        b->offs = xrealloc(b->offs, b->cap_args * sizeof *b->offs);
        w->argvlen = xrealloc(w->argvlen, b->cap_args * sizeof *w->argvlen);
    }
    if (b->text_len + (size_t)len + 1 > b->text_cap) {
        b->text_cap = b->text_cap ? b->text_cap * 2 : 65536;
        while (b->text_len + (size_t)len + 1 > b->text_cap)
            b->text_cap *= 2;
        w->text = xrealloc(w->text, b->text_cap);
    }
    memcpy(w->text + b->text_len, tmp, (size_t)len + 1);
    b->offs[w->nargs] = b->text_len;
    w->argvlen[w->nargs] = (size_t)len;
    b->text_len += (size_t)len + 1;
    w->nargs++;
    w->argc[w->n - 1]++;
}

/* Generates exactly ops commands from seed over keys keys per type. */
static workload make_workload(size_t ops, unsigned keys, uint64_t seed)
{
    workload w = {0};
    builder b = {.w = &w};
    uint64_t s = seed;
    while (w.n < ops) {
        unsigned draw = rng_below(&s, 100), kind = 0;
        for (unsigned acc = kind_percent[0]; draw >= acc; acc += kind_percent[++kind])
            ;
        if (kind == K_MULTI && ops - w.n < 4)
            kind = K_GET; /* a block would overshoot the exact count */
        unsigned k = rng_below(&s, keys);
        w.mix[kind]++;
        switch (kind) {
        case K_SET:
            begin_command(&b);
            arg(&b, "SET"), arg(&b, "str:%u", k);
            arg(&b, "value-%016llx", (unsigned long long)rng_next(&s));
            break;
        case K_GET:
            begin_command(&b);
            arg(&b, "GET"), arg(&b, "str:%u", k);
            break;
        case K_INCR:
            begin_command(&b);
            arg(&b, "INCR"), arg(&b, "ctr:%u", k);
            break;
        case K_LPUSH:
            begin_command(&b);
            arg(&b, "LPUSH"), arg(&b, "list:%u", k), arg(&b, "item-%u", rng_below(&s, 16));
            break;
        case K_LRANGE:
            begin_command(&b);
            arg(&b, "LRANGE"), arg(&b, "list:%u", k), arg(&b, "0"), arg(&b, "9");
            break;
        case K_LREM:
            begin_command(&b);
            arg(&b, "LREM"), arg(&b, "list:%u", k), arg(&b, "1");
            arg(&b, "item-%u", rng_below(&s, 16));
            break;
        case K_HINCRBY:
            begin_command(&b);
            arg(&b, "HINCRBY"), arg(&b, "hash:%u", k), arg(&b, "field-%u", rng_below(&s, 16));
            arg(&b, "%u", 1 + rng_below(&s, 10));
            break;
        case K_ZADD:
            begin_command(&b);
            arg(&b, "ZADD"), arg(&b, "zset:%u", k), arg(&b, "%u", rng_below(&s, 1000));
            arg(&b, "member-%u", rng_below(&s, 64));
            break;
        case K_ZRANGEBYSCORE: {
            unsigned lo = rng_below(&s, 1000);
            begin_command(&b);
            arg(&b, "ZRANGEBYSCORE"), arg(&b, "zset:%u", k), arg(&b, "%u", lo);
            arg(&b, "%u", lo + 100);
            break;
        }
        case K_MULTI:
            begin_command(&b);
            arg(&b, "MULTI");
            begin_command(&b);
            arg(&b, "INCR"), arg(&b, "ctr:%u", k);
            begin_command(&b);
            arg(&b, "LPUSH"), arg(&b, "list:%u", k), arg(&b, "item-%u", rng_below(&s, 16));
            begin_command(&b);
            arg(&b, "EXEC");
            break;
        }
    }
    w.argv = xrealloc(NULL, w.nargs * sizeof *w.argv);
    for (size_t i = 0; i < w.nargs; i++)
        w.argv[i] = w.text + b.offs[i];
    free(b.offs);
    return w;
}

static void free_workload(workload *w)
{
    free(w->argc);
    free(w->first);
    free(w->argv);
    free(w->argvlen);
    free(w->text);
}

/* Prints command i as a redis-cli would show it (arguments are printable, no spaces). */
static void print_command(FILE *f, const workload *w, size_t i)
{
    for (int a = 0; a < w->argc[i]; a++)
        fprintf(f, "%s%s", a ? " " : "", w->argv[w->first[i] + (size_t)a]);
}

/* ----- Timing ------------------------------------------------------------------------ */

static double now_seconds(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static double median(double *v, int n)
{
    qsort(v, (size_t)n, sizeof *v, cmp_double);
    return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

/* ----- The fake ----------------------------------------------------------------------- */

/* Runs the workload on a fresh server through fr_exec (raw == 0) or fr_exec_resp (raw !=
 * 0) and returns commands per second.  sink keeps the replies observably used. */
static double run_fake(const workload *w, int raw, uint64_t *sink)
{
    fr_server *srv = fr_server_new(NULL);
    fr_client *c = srv ? fr_client_new(srv) : NULL;
    if (!c) {
        fprintf(stderr, "bench_fake: out of memory\n");
        exit(2);
    }
    uint64_t acc = 0;
    double t0 = now_seconds();
    if (raw) {
        for (size_t i = 0; i < w->n; i++) {
            size_t len;
            const char *r = fr_exec_resp(c, w->argc[i], w->argv + w->first[i],
                                         w->argvlen + w->first[i], &len);
            acc += len + (unsigned char)r[0];
        }
    } else {
        for (size_t i = 0; i < w->n; i++) {
            const fr_reply *r = fr_exec(c, w->argc[i], w->argv + w->first[i],
                                        w->argvlen + w->first[i]);
            acc += (uint64_t)r->type;
        }
    }
    double t = now_seconds() - t0;
    *sink += acc;
    fr_client_free(c);
    fr_server_free(srv);
    return (double)w->n / t;
}

/* ----- The real server ---------------------------------------------------------------- */

static void die_redis(redisContext *ctx, const char *what)
{
    fprintf(stderr, "bench_fake: %s: %s\n", what, ctx->errstr[0] ? ctx->errstr : "failed");
    exit(2);
}

/* Sends one command synchronously and frees its reply; dies on a connection error. */
static void real_simple(redisContext *ctx, const char *cmd)
{
    redisReply *r = redisCommand(ctx, cmd);
    if (!r)
        die_redis(ctx, cmd);
    freeReplyObject(r);
}

/* Runs the workload against the server, pipelined in batches, and returns commands per
 * second.  The database is flushed first, outside the timed part. */
static double run_real(redisContext *ctx, const workload *w, size_t batch)
{
    real_simple(ctx, "FLUSHALL");
    double t0 = now_seconds();
    for (size_t start = 0; start < w->n; start += batch) {
        size_t end = start + batch < w->n ? start + batch : w->n;
        for (size_t i = start; i < end; i++)
            if (redisAppendCommandArgv(ctx, w->argc[i], w->argv + w->first[i],
                                       w->argvlen + w->first[i]) != REDIS_OK)
                die_redis(ctx, "redisAppendCommandArgv");
        for (size_t i = start; i < end; i++) {
            void *r;
            if (redisGetReply(ctx, &r) != REDIS_OK)
                die_redis(ctx, "redisGetReply");
            freeReplyObject(r);
        }
    }
    return (double)w->n / (now_seconds() - t0);
}

/* Appends a reply as RESP-like text (CR LF shown as \r\n) for a mismatch report.  hiredis
 * cannot tell $-1 from *-1 in RESP2, so both print as "(nil)" in either source. */
static void show_fake(FILE *f, const fr_reply *r)
{
    switch (r->type) {
    case FR_REPLY_STATUS: fprintf(f, "+%s", r->str); break;
    case FR_REPLY_ERROR: fprintf(f, "-%s", r->str); break;
    case FR_REPLY_INTEGER: fprintf(f, ":%lld", r->integer); break;
    case FR_REPLY_BULK: fprintf(f, "\"%.*s\"", (int)r->len, r->str); break;
    case FR_REPLY_NIL:
    case FR_REPLY_NIL_ARRAY: fprintf(f, "(nil)"); break;
    case FR_REPLY_ARRAY:
        fprintf(f, "[");
        for (size_t i = 0; i < r->count; i++) {
            fprintf(f, i ? ", " : "");
            show_fake(f, &r->elements[i]);
        }
        fprintf(f, "]");
        break;
    }
}

static void show_real(FILE *f, const redisReply *r)
{
    switch (r->type) {
    case REDIS_REPLY_STATUS: fprintf(f, "+%.*s", (int)r->len, r->str); break;
    case REDIS_REPLY_ERROR: fprintf(f, "-%.*s", (int)r->len, r->str); break;
    case REDIS_REPLY_INTEGER: fprintf(f, ":%lld", r->integer); break;
    case REDIS_REPLY_STRING: fprintf(f, "\"%.*s\"", (int)r->len, r->str); break;
    case REDIS_REPLY_NIL: fprintf(f, "(nil)"); break;
    case REDIS_REPLY_ARRAY:
        fprintf(f, "[");
        for (size_t i = 0; i < r->elements; i++) {
            fprintf(f, i ? ", " : "");
            show_real(f, r->element[i]);
        }
        fprintf(f, "]");
        break;
    default: fprintf(f, "(hiredis type %d)", r->type);
    }
}

/* Is the fake's reply the same as the real one, as far as RESP2 via hiredis can tell? */
static int same_reply(const fr_reply *a, const redisReply *b)
{
    switch (a->type) {
    case FR_REPLY_STATUS:
    case FR_REPLY_ERROR:
    case FR_REPLY_BULK: {
        int want = a->type == FR_REPLY_STATUS  ? REDIS_REPLY_STATUS
                   : a->type == FR_REPLY_ERROR ? REDIS_REPLY_ERROR
                                               : REDIS_REPLY_STRING;
        return b->type == want && b->len == a->len && memcmp(a->str, b->str, a->len) == 0;
    }
    case FR_REPLY_INTEGER: return b->type == REDIS_REPLY_INTEGER && b->integer == a->integer;
    case FR_REPLY_NIL:
    case FR_REPLY_NIL_ARRAY: return b->type == REDIS_REPLY_NIL;
    case FR_REPLY_ARRAY:
        if (b->type != REDIS_REPLY_ARRAY || b->elements != a->count)
            return 0;
        for (size_t i = 0; i < a->count; i++)
            if (!same_reply(&a->elements[i], b->element[i]))
                return 0;
        return 1;
    }
    return 0;
}

/* Runs the workload once on a fresh fake and on the flushed server in lockstep (the
 * server pipelined per batch) and compares every reply.  Prints the first few mismatches;
 * returns how many commands answered differently. */
static size_t verify(redisContext *ctx, const workload *w, size_t batch)
{
    fr_server *srv = fr_server_new(NULL);
    fr_client *c = srv ? fr_client_new(srv) : NULL;
    if (!c) {
        fprintf(stderr, "bench_fake: out of memory\n");
        exit(2);
    }
    real_simple(ctx, "FLUSHALL");
    size_t bad = 0;
    for (size_t start = 0; start < w->n; start += batch) {
        size_t end = start + batch < w->n ? start + batch : w->n;
        for (size_t i = start; i < end; i++)
            if (redisAppendCommandArgv(ctx, w->argc[i], w->argv + w->first[i],
                                       w->argvlen + w->first[i]) != REDIS_OK)
                die_redis(ctx, "redisAppendCommandArgv");
        for (size_t i = start; i < end; i++) {
            void *rv;
            if (redisGetReply(ctx, &rv) != REDIS_OK)
                die_redis(ctx, "redisGetReply");
            const fr_reply *fake = fr_exec(c, w->argc[i], w->argv + w->first[i],
                                           w->argvlen + w->first[i]);
            if (!same_reply(fake, rv) && bad++ < 5) {
                fprintf(stderr, "MISMATCH at command %zu: ", i + 1);
                print_command(stderr, w, i);
                fprintf(stderr, "\n  fake: ");
                show_fake(stderr, fake);
                fprintf(stderr, "\n  real: ");
                show_real(stderr, rv);
                fprintf(stderr, "\n");
            }
            freeReplyObject(rv);
        }
    }
    fr_client_free(c);
    fr_server_free(srv);
    return bad;
}

/* The server's redis_version from INFO server, into buf. */
static void real_version(redisContext *ctx, char *buf, size_t cap)
{
    snprintf(buf, cap, "?");
    redisReply *r = redisCommand(ctx, "INFO server");
    if (!r)
        die_redis(ctx, "INFO");
    const char *p = r->type == REDIS_REPLY_STRING ? strstr(r->str, "redis_version:") : NULL;
    if (p) {
        p += strlen("redis_version:");
        size_t n = strcspn(p, "\r\n");
        snprintf(buf, cap, "%.*s", (int)(n < cap ? n : cap - 1), p);
    }
    freeReplyObject(r);
}

/* ----- Main ---------------------------------------------------------------------------- */

int main(int argc, char **argv)
{
    options o = parse_options(argc, argv);
    workload w = make_workload(o.ops, o.keys, o.seed);

    printf("bench_fake: %zu commands per round, %d rounds (median reported), seed %llu, "
           "%u keys per type\n", w.n, o.rounds, (unsigned long long)o.seed, o.keys);
    printf("workload draws:");
    for (int k = 0; k < K_COUNT; k++)
        printf(" %s %zu%s", kind_names[k], w.mix[k], k + 1 < K_COUNT ? "," : "\n");

    rh_server *rs = NULL;
    redisContext *ctx = NULL;
    char version[64] = "";
    if (o.real) {
        rh_options ro = {.cluster = 0, .quiet = 1};
        rs = rh_start(&ro);
        if (!rs) {
            fprintf(stderr, "bench_fake: cannot start redis-server (use --fake-only to "
                            "measure the fake alone)\n");
            return 2;
        }
        ctx = redisConnectUnix(rs->socket);
        if (!ctx || ctx->err) {
            fprintf(stderr, "bench_fake: cannot connect to %s: %s\n", rs->socket,
                    ctx ? ctx->errstr : "out of memory");
            rh_stop(rs);
            return 2;
        }
        real_version(ctx, version, sizeof version);
        printf("real: redis-server %s on a unix socket, pipelined in batches of %zu "
               "(hiredis)\n", version, o.batch);
    }

    size_t mismatches = 0;
    if (o.real && o.verify) {
        fflush(stdout); /* mismatches go to stderr: keep the two in order */
        mismatches = verify(ctx, &w, o.batch);
        if (mismatches)
            printf("replies: %zu of %zu commands answered differently on the fake (see "
                   "stderr)\n", mismatches, w.n);
        else
            printf("replies: the fake and the server agree on all %zu replies\n", w.n);
    }

    double *fake = xrealloc(NULL, (size_t)o.rounds * sizeof *fake);
    double *fake_raw = xrealloc(NULL, (size_t)o.rounds * sizeof *fake_raw);
    double *real = xrealloc(NULL, (size_t)o.rounds * sizeof *real);
    uint64_t sink = 0;
    printf("\n%-7s %16s %20s %16s\n", "round", "fake fr_exec", "fake fr_exec_resp",
           o.real ? "real pipelined" : "");
    for (int r = 0; r < o.rounds; r++) {
        fake[r] = run_fake(&w, 0, &sink);
        fake_raw[r] = run_fake(&w, 1, &sink);
        real[r] = o.real ? run_real(ctx, &w, o.batch) : 0;
        printf("%-7d %12.0f/s %16.0f/s", r + 1, fake[r], fake_raw[r]);
        if (o.real)
            printf(" %12.0f/s", real[r]);
        printf("\n");
    }
    double mf = median(fake, o.rounds), mr = median(fake_raw, o.rounds);
    printf("%-7s %12.0f/s %16.0f/s", "median", mf, mr);
    if (o.real) {
        double mreal = median(real, o.rounds);
        printf(" %12.0f/s\n", mreal);
        printf("\nratio fake/real: %.1fx with fr_exec (target >= 20x), %.1fx with "
               "fr_exec_resp\n", mf / mreal, mr / mreal);
    } else {
        printf("\n");
    }
    if (sink == 42)
        printf("(sink)\n"); /* keeps the replies "used" */

    if (ctx)
        redisFree(ctx);
    rh_stop(rs);
    free(fake);
    free(fake_raw);
    free(real);
    free_workload(&w);
    return mismatches ? 1 : 0;
}
