/* bench_stream_memory.c -- bytes per stream entry: the fake against a real redis-server.
 *
 * The same N XADDs (default 1,000,000) go to both sides: explicit ids that advance the way
 * a busy producer's do (ten entries per millisecond), and two small fields per entry, an
 * integer and a short string ("XADD s <ms>-<seq> n <i> name user:<i mod 5000>").  Then:
 *
 *   fake   the heap growth over the XADDs (mallinfo2's in-use bytes, so it includes
 *          everything the fake allocated for them: nodes, their index, the key), and the
 *          stream's own accounting (fri_stream_memory: malloc_usable_size of its nodes);
 *   real   INFO memory's used_memory growth over the same XADDs, and MEMORY USAGE of the
 *          key, on a redis-server started for the run (tests/support/redis_harness.h),
 *          fed through hiredis in pipelined batches.
 *
 * Prints bytes per entry for each and the ratio fake / real (the target: at most 2).
 * Usage: bench_stream_memory [-n entries].  Exit status: 0 when within 2x, 1 when not,
 * 2 on bad usage or when the server cannot be started.
 */
#include <malloc.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <hiredis/hiredis.h>

#include "fakeredis.h"
#include "redis_harness.h"
#include "stream_int.h"

/* The i-th command's arguments, in buffers owned by the caller. */
typedef struct xadd_args {
    char id[48], n[24], name[24];
    const char *argv[7];
    size_t lens[7];
} xadd_args;

static void make_xadd(xadd_args *a, size_t i)
{
    uint64_t ms = 1700000000000ull + i / 10;
    snprintf(a->id, sizeof(a->id), "%llu-%zu", (unsigned long long)ms, i % 10);
    snprintf(a->n, sizeof(a->n), "%zu", i);
    snprintf(a->name, sizeof(a->name), "user:%zu", i % 5000);
    const char *argv[7] = {"XADD", "s", a->id, "n", a->n, "name", a->name};
    for (int k = 0; k < 7; k++) {
        a->argv[k] = argv[k];
        a->lens[k] = strlen(argv[k]);
    }
}

static size_t heap_in_use(void)
{
    struct mallinfo2 mi = mallinfo2();
    return mi.uordblks + mi.hblkhd;
}

/* used_memory from INFO memory, or 0 on failure. */
static long long used_memory(redisContext *rc)
{
    redisReply *r = redisCommand(rc, "INFO memory");
    long long v = 0;
    if (r && r->type == REDIS_REPLY_STRING) {
        const char *p = strstr(r->str, "used_memory:");
        if (p) v = atoll(p + strlen("used_memory:"));
    }
    freeReplyObject(r);
    return v;
}

int main(int argc, char **argv)
{
    size_t n = 1000000;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "-n") == 0 && i + 1 < argc) {
            n = strtoull(argv[++i], NULL, 10);
        } else {
            fprintf(stderr, "usage: %s [-n entries]\n", argv[0]);
            return 2;
        }
    }
    if (n == 0) n = 1;

    /* ----- the fake ----- */
    fr_server *srv = fr_server_new(NULL);
    fr_client *c = fr_client_new(srv);
    xadd_args a;
    size_t len;
    /* warm up: the client's buffers and the key exist before the measurement */
    const char *warm[] = {"XADD", "warm", "1-1", "n", "1"};
    fr_exec_resp(c, 5, warm, NULL, &len);
    size_t before = heap_in_use();
    for (size_t i = 0; i < n; i++) {
        make_xadd(&a, i);
        const char *rep = fr_exec_resp(c, 7, a.argv, a.lens, &len);
        if (len == 0 || rep[0] != '$') {
            fprintf(stderr, "fake: XADD %zu failed: %.*s\n", i, (int)len, rep);
            return 2;
        }
    }
    size_t after = heap_in_use();
    fri_dent *e = fri_dict_find(srv->db[0].keys, "s", 1);
    fri_stream *s = ((fri_obj *)e->v.ptr)->ptr;
    double fake_heap = (double)(after - before) / (double)n;
    double fake_store = (double)fri_stream_memory(s) / (double)n;
    size_t nodes = fri_stream_node_count(s);
    fr_client_free(c);
    fr_server_free(srv);

    /* ----- the real server ----- */
    rh_options ro = {.cluster = 0, .quiet = 1};
    rh_server *rs = rh_start(&ro);
    if (!rs) return 2;
    redisContext *rc = redisConnectUnix(rs->socket);
    if (!rc || rc->err) {
        fprintf(stderr, "cannot connect to %s\n", rs->socket);
        rh_stop(rs);
        return 2;
    }
    freeReplyObject(redisCommand(rc, "XADD warm 1-1 n 1"));
    long long rbefore = used_memory(rc);
    const size_t batch = 1000;
    for (size_t i = 0; i < n; i += batch) {
        size_t end = i + batch < n ? i + batch : n;
        for (size_t j = i; j < end; j++) {
            make_xadd(&a, j);
            redisAppendCommandArgv(rc, 7, a.argv, a.lens);
        }
        for (size_t j = i; j < end; j++) {
            redisReply *r;
            if (redisGetReply(rc, (void **)&r) != REDIS_OK || r->type != REDIS_REPLY_STRING) {
                fprintf(stderr, "real: XADD %zu failed\n", j);
                rh_stop(rs);
                return 2;
            }
            freeReplyObject(r);
        }
    }
    long long rafter = used_memory(rc);
    redisReply *mu = redisCommand(rc, "MEMORY USAGE s SAMPLES 0");
    long long key_usage = mu && mu->type == REDIS_REPLY_INTEGER ? mu->integer : 0;
    freeReplyObject(mu);
    redisReply *xi = redisCommand(rc, "XINFO STREAM s");
    long long real_nodes = 0;
    if (xi && xi->type == REDIS_REPLY_ARRAY)
        for (size_t k = 0; k + 1 < xi->elements; k += 2)
            if (strcmp(xi->element[k]->str, "radix-tree-keys") == 0)
                real_nodes = xi->element[k + 1]->integer;
    freeReplyObject(xi);
    redisFree(rc);
    rh_stop(rs);

    double real_used = (double)(rafter - rbefore) / (double)n;
    double real_key = (double)key_usage / (double)n;
    double ratio = fake_heap / real_used;
    printf("entries                      %zu (two fields: an integer, a short string)\n", n);
    printf("nodes                        fake %zu, real %lld\n", nodes, real_nodes);
    printf("fake heap growth             %.2f bytes/entry\n", fake_heap);
    printf("fake stream (usable sizes)   %.2f bytes/entry\n", fake_store);
    printf("real used_memory growth      %.2f bytes/entry\n", real_used);
    printf("real MEMORY USAGE of the key %.2f bytes/entry\n", real_key);
    printf("ratio fake/real              %.2f (target <= 2)\n", ratio);
    return ratio <= 2.0 ? 0 : 1;
}
