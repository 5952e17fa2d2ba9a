/* bench_common.c -- command lists, timing, running and comparing, for the benchmarks.
 * The contracts are in bench_common.h. */
#include "bench_common.h"

#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

const char *bench_name = "bench";

unsigned long long bench_parse_num(const char *opt, const char *s, unsigned long long min,
                                   unsigned long long max)
{
    char *end;
    errno = 0;
    unsigned long long v = strtoull(s ? s : "", &end, 10);
    /* strtoull accepts "-1" (as a huge value): refuse a sign explicitly */
    if (!s || !*s || *end || errno || v < min || v > max || *s == '-') {
        fprintf(stderr, "%s: %s wants a number in [%llu, %llu], got '%s'\n", bench_name, opt,
                min, max, s ? s : "");
        exit(2);
    }
    return v;
}

/* The row of opts named a, or NULL. */
static const bench_opt *find_opt(const bench_opt *opts, size_t n, const char *a)
{
    for (size_t k = 0; k < n; k++)
        if ((opts[k].short_name && !strcmp(a, opts[k].short_name)) ||
            !strcmp(a, opts[k].long_name))
            return &opts[k];
    return NULL;
}

void bench_parse_options(int argc, char **argv, const bench_opt *opts, size_t n,
                         void (*usage)(FILE *f))
{
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        const bench_opt *o = find_opt(opts, n, a);
        if (!o) {
            int help = !strcmp(a, "-h") || !strcmp(a, "--help");
            usage(help ? stdout : stderr);
            exit(help ? 0 : 2);
        }
        switch (o->kind) {
        case BENCH_OPT_OFF: *(int *)o->dst = 0; continue;
        case BENCH_OPT_ON: *(int *)o->dst = 1; continue;
        case BENCH_OPT_FN:
            if (!v) {
                usage(stderr);
                exit(2);
            }
            o->fn(o->dst, v);
            break;
        default: {
            unsigned long long x = bench_parse_num(a, v, o->min, o->max);
            if (o->kind == BENCH_OPT_SIZE)
                *(size_t *)o->dst = (size_t)x;
            else if (o->kind == BENCH_OPT_INT)
                *(int *)o->dst = (int)x;
            else if (o->kind == BENCH_OPT_UINT)
                *(unsigned *)o->dst = (unsigned)x;
            else
                *(uint64_t *)o->dst = x;
        }
        }
        i++; /* the value */
    }
}

/* ----- Command lists ------------------------------------------------------------------ */

void bench_cmd_begin(bench_cmds *l)
{
    if (l->n == l->cap_cmds) {
        l->cap_cmds = l->cap_cmds ? l->cap_cmds * 2 : 1024;
        l->argc = wsi_xrealloc(l->argc, l->cap_cmds * sizeof *l->argc);
        l->first = wsi_xrealloc(l->first, l->cap_cmds * sizeof *l->first);
    }
    l->argc[l->n] = 0;
    l->first[l->n] = l->nargs;
    l->n++;
}

/* Appends the len bytes at p as one argument of the last command. */
static void add_arg(bench_cmds *l, const char *p, size_t len)
{
    if (l->nargs == l->cap_args) {
        l->cap_args = l->cap_args ? l->cap_args * 2 : 4096;
        l->offs = wsi_xrealloc(l->offs, l->cap_args * sizeof *l->offs);
        l->argvlen = wsi_xrealloc(l->argvlen, l->cap_args * sizeof *l->argvlen);
    }
    if (l->text_len + len + 1 > l->text_cap) {
        l->text_cap = l->text_cap ? l->text_cap * 2 : 65536;
        while (l->text_len + len + 1 > l->text_cap)
            l->text_cap *= 2;
        l->text = wsi_xrealloc(l->text, l->text_cap);
    }
    memcpy(l->text + l->text_len, p, len);
    l->text[l->text_len + len] = '\0';
    l->offs[l->nargs] = l->text_len;
    l->argvlen[l->nargs] = len;
    l->text_len += len + 1;
    l->nargs++;
    l->argc[l->n - 1]++;
}

/* Formats into tmp (cap bytes) and returns the length; a text that does not fit, or an
 * empty one when min_len is 1, is a bug in the calling benchmark (its arguments are all
 * short), so it aborts. */
static size_t format_checked(char *tmp, size_t cap, int min_len, const char *fmt, va_list ap)
    __attribute__((format(printf, 4, 0)));
static size_t format_checked(char *tmp, size_t cap, int min_len, const char *fmt, va_list ap)
{
    int len = vsnprintf(tmp, cap, fmt, ap);
    if (len < min_len || (size_t)len >= cap)
        abort();
    return (size_t)len;
}

void bench_cmd_arg(bench_cmds *l, const char *fmt, ...)
{
    char tmp[128];
    va_list ap;
    va_start(ap, fmt);
    size_t len = format_checked(tmp, sizeof tmp, 0, fmt, ap);
    va_end(ap);
    add_arg(l, tmp, len);
}

void bench_cmd_line(bench_cmds *l, const char *fmt, ...)
{
    char tmp[4096]; /* enough for XACK with 64 ids and the like */
    va_list ap;
    va_start(ap, fmt);
    size_t len = format_checked(tmp, sizeof tmp, 1, fmt, ap);
    va_end(ap);
    bench_cmd_begin(l);
    for (const char *p = tmp, *end = tmp + len; p < end;) {
        const char *sp = memchr(p, ' ', (size_t)(end - p));
        size_t n = sp ? (size_t)(sp - p) : (size_t)(end - p);
        add_arg(l, p, n);
        p += n + 1;
    }
}

void bench_cmds_finish(bench_cmds *l)
{
    l->argv = wsi_xrealloc(l->argv, l->nargs * sizeof *l->argv);
    for (size_t i = 0; i < l->nargs; i++)
        l->argv[i] = l->text + l->offs[i];
}

void bench_cmds_free(bench_cmds *l)
{
    free(l->argc);
    free(l->first);
    free(l->argv);
    free(l->argvlen);
    free(l->text);
    free(l->offs);
    memset(l, 0, sizeof *l);
}

void bench_cmd_print(FILE *f, const bench_cmds *l, size_t i)
{
    for (int a = 0; a < l->argc[i]; a++)
        fprintf(f, "%s%s", a ? " " : "", l->argv[l->first[i] + (size_t)a]);
}

/* ----- Timing ------------------------------------------------------------------------ */

double bench_now(void)
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

double bench_median(double *v, int n)
{
    qsort(v, (size_t)n, sizeof *v, cmp_double);
    return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

/* ----- Running a list ------------------------------------------------------------------ */

double bench_fake_run(fr_client *c, const bench_cmds *l, int raw, uint64_t *sink)
{
    uint64_t acc = 0;
    double t0 = bench_now();
    if (raw) {
        for (size_t i = 0; i < l->n; i++) {
            size_t len;
            const char *r = fr_exec_resp(c, l->argc[i], l->argv + l->first[i],
                                         l->argvlen + l->first[i], &len);
            acc += len + (unsigned char)r[0];
        }
    } else {
        for (size_t i = 0; i < l->n; i++) {
            const fr_reply *r = fr_exec(c, l->argc[i], l->argv + l->first[i],
                                        l->argvlen + l->first[i]);
            acc += (uint64_t)r->type;
        }
    }
    double t = bench_now() - t0;
    *sink += acc;
    return t;
}

/* Prints what failed on the connection and exits: without it there is nothing to measure. */
static void die_redis(redisContext *ctx, const char *what)
{
    fprintf(stderr, "%s: %s: %s\n", bench_name, what, ctx->errstr[0] ? ctx->errstr : "failed");
    exit(2);
}

/* The server's redis_version from INFO server, into buf ("?" when it says none). */
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

int bench_real_start(bench_real *r)
{
    memset(r, 0, sizeof *r);
    rh_options ro = {.cluster = 0, .quiet = 1};
    r->rs = rh_start(&ro);
    if (!r->rs)
        return -1; /* the harness said why */
    r->ctx = redisConnectUnix(r->rs->socket);
    if (!r->ctx || r->ctx->err) {
        fprintf(stderr, "%s: cannot connect to %s: %s\n", bench_name, r->rs->socket,
                r->ctx ? r->ctx->errstr : "out of memory");
        bench_real_stop(r);
        return -1;
    }
    real_version(r->ctx, r->version, sizeof r->version);
    return 0;
}

int bench_real_announce(bench_real *r, int has_fake_only, size_t batch)
{
    if (bench_real_start(r) != 0) {
        fprintf(stderr, "%s: cannot start redis-server%s\n", bench_name,
                has_fake_only ? " (use --fake-only to measure the fake alone)" : "");
        return -1;
    }
    if (batch)
        printf("real: redis-server %s on a unix socket, pipelined in batches of %zu "
               "(hiredis)\n", r->version, batch);
    else
        printf("real: redis-server %s on a unix socket in a temporary directory\n",
               r->version);
    return 0;
}

void bench_real_stop(bench_real *r)
{
    if (r->ctx)
        redisFree(r->ctx);
    rh_stop(r->rs);
    r->ctx = NULL;
    r->rs = NULL;
}

void bench_real_simple(redisContext *ctx, const char *cmd)
{
    redisReply *r = redisCommand(ctx, cmd);
    if (!r)
        die_redis(ctx, cmd);
    freeReplyObject(r);
}

/* Appends commands [start, end) of the list to the connection's output buffer. */
static void append_batch(redisContext *ctx, const bench_cmds *l, size_t start, size_t end)
{
    for (size_t i = start; i < end; i++)
        if (redisAppendCommandArgv(ctx, l->argc[i], l->argv + l->first[i],
                                   l->argvlen + l->first[i]) != REDIS_OK)
            die_redis(ctx, "redisAppendCommandArgv");
}

double bench_real_run(redisContext *ctx, const bench_cmds *l, size_t batch, size_t *errors)
{
    size_t errs = 0;
    double t0 = bench_now();
    for (size_t start = 0; start < l->n; start += batch) {
        size_t end = start + batch < l->n ? start + batch : l->n;
        append_batch(ctx, l, start, end);
        for (size_t i = start; i < end; i++) {
            void *r;
            if (redisGetReply(ctx, &r) != REDIS_OK)
                die_redis(ctx, "redisGetReply");
            errs += ((redisReply *)r)->type == REDIS_REPLY_ERROR;
            freeReplyObject(r);
        }
    }
    double t = bench_now() - t0;
    if (errors)
        *errors = errs;
    return t;
}

/* ----- Comparing replies --------------------------------------------------------------- */

void bench_show_fake(FILE *f, const fr_reply *r)
{
    switch (r->type) {
    case FR_REPLY_STATUS: fprintf(f, "+%s", r->str); break;
    case FR_REPLY_ERROR: fprintf(f, "-%s", r->str); break;
    case FR_REPLY_INTEGER: fprintf(f, ":%lld", r->integer); break;
    case FR_REPLY_BULK: fprintf(f, "\"%.*s\"", (int)r->len, r->str); break;
    case FR_REPLY_NIL:
    case FR_REPLY_NIL_ARRAY: fprintf(f, "(nil)"); break; /* hiredis shows both as nil */
    case FR_REPLY_ARRAY:
        fprintf(f, "[");
        for (size_t i = 0; i < r->count; i++) {
            fprintf(f, i ? ", " : "");
            bench_show_fake(f, &r->elements[i]);
        }
        fprintf(f, "]");
        break;
    }
}

void bench_show_real(FILE *f, const redisReply *r)
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
            bench_show_real(f, r->element[i]);
        }
        fprintf(f, "]");
        break;
    default: fprintf(f, "(hiredis type %d)", r->type);
    }
}

int bench_same_reply(const fr_reply *a, const redisReply *b)
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
            if (!bench_same_reply(&a->elements[i], b->element[i]))
                return 0;
        return 1;
    }
    return 0;
}

/* Prints a reply (fake when f is set, else real) clipped to about 400 characters: a
 * mismatch report must stay readable when replies carry 64 entries. */
static void show_clipped(FILE *out, const fr_reply *f, const redisReply *r)
{
    enum { CLIP = 400 };
    char *text = NULL;
    size_t len = 0;
    FILE *m = open_memstream(&text, &len);
    if (!m) {
        f ? bench_show_fake(out, f) : bench_show_real(out, r);
        return;
    }
    f ? bench_show_fake(m, f) : bench_show_real(m, r);
    fclose(m);
    if (len > CLIP)
        fprintf(out, "%.*s ... (%zu characters in all)", CLIP, text, len);
    else
        fputs(text, out);
    free(text);
}

size_t bench_verify(fr_client *c, redisContext *ctx, const bench_cmds *l, size_t n,
                    size_t batch, bench_same_fn same, void *arg)
{
    size_t bad = 0;
    if (n > l->n)
        n = l->n;
    for (size_t start = 0; start < n; start += batch) {
        size_t end = start + batch < n ? start + batch : n;
        append_batch(ctx, l, start, end);
        for (size_t i = start; i < end; i++) {
            void *rv;
            if (redisGetReply(ctx, &rv) != REDIS_OK)
                die_redis(ctx, "redisGetReply");
            const fr_reply *fake = fr_exec(c, l->argc[i], l->argv + l->first[i],
                                           l->argvlen + l->first[i]);
            int ok = same ? same(i, fake, rv, arg) : bench_same_reply(fake, rv);
            if (ok < 0)
                bad++; /* the comparison reported it */
            else if (!ok && bad++ < 5) {
                fprintf(stderr, "MISMATCH at command %zu: ", i + 1);
                bench_cmd_print(stderr, l, i);
                fprintf(stderr, "\n  fake: ");
                show_clipped(stderr, fake, NULL);
                fprintf(stderr, "\n  real: ");
                show_clipped(stderr, NULL, rv);
                fprintf(stderr, "\n");
            }
            freeReplyObject(rv);
        }
    }
    return bad;
}
