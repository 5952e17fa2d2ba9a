/* test_oom.c -- running out of memory, the SQLite way: fail the n-th allocation for
 * n = 1, 2, ... until a run passes without meeting a failure, and check the fake's promise
 * every time (docs/architecture.md, "Running out of memory"; fakeredis.h):
 *
 *  - a command never stops half-way: its reply is the one a server that never ran out of
 *    memory gives (a shadow server, run in lockstep on the commands the first accepted),
 *    or the OOM refusal, which left the keyspace as it was (its canonical dump equals
 *    the shadow's, which did not run it);
 *  - the keyspaces stay equal (dump after every command), the subscriber's pushes too;
 *  - once the failures stop, the server takes writes again and its reserve is whole;
 *  - nothing leaks and nothing crashes (the sanitize build runs this too: ASan and LSan);
 *  - outside a command, fr_server_new, fr_client_new, fr_server_reset and fr_split_line
 *    answer NULL / -1 and leave nothing behind.
 *
 * The mix covers every data type, streams with a consumer group (reads, acks, claims,
 * XINFO), MULTI/EXEC, a script and a function (their Lua interpreters are made inside the
 * mix), Pub/Sub with a subscriber and keyspace notifications.  Two modes: the n-th
 * allocation fails once (the reserve serves it, the next command takes a fresh reserve),
 * or it and every later one fail (the server stays short: deny-oom commands are refused,
 * reads and deletions go on, all from the reserve).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "fakeredis.h"

#define OOM_REPLY "-OOM command not allowed when used memory > 'maxmemory'.\r\n"

/* The mix: one command per line, redis-cli's quoting. */
static const char *const mix[] = {
    /* strings and bitmaps */
    "SET s1 hello",
    "APPEND s1 \" world, a value long enough to leave the embedded encoding behind\"",
    "INCR n1",
    "INCRBYFLOAT f1 1.5",
    "SETRANGE s2 5 abc",
    "GETRANGE s1 0 4",
    "MSET a 1 b 2 c 3",
    "GETDEL a",
    "SETBIT bm 7 1",
    "BITCOUNT bm",
    "MGET s1 b c nosuch",
    /* lists */
    "RPUSH l1 a b c d e f g",
    "LPUSH l1 z",
    "LRANGE l1 0 -1",
    "LPOP l1",
    "LMOVE l1 l2 LEFT RIGHT",
    "LINSERT l1 BEFORE c x",
    "SORT l1 ALPHA",
    /* hashes */
    "HSET h1 f1 v1 f2 v2 f3 v3",
    "HINCRBY h1 n 5",
    "HGETALL h1",
    "HDEL h1 f2",
    /* sets */
    "SADD s:a 1 2 3 x y",
    "SADD s:b 2 3 4",
    "SINTERSTORE s:c s:a s:b",
    "SUNION s:a s:b",
    "SREM s:a x",
    /* sorted sets */
    "ZADD z1 1 a 2 b 3 c",
    "ZINCRBY z1 5 a",
    "ZRANGE z1 0 -1 WITHSCORES",
    "ZUNIONSTORE z2 2 z1 z1",
    "ZRANGEBYSCORE z1 -inf +inf",
    "ZREM z1 b",
    /* HyperLogLog, geo */
    "PFADD hll a b c d e",
    "PFCOUNT hll",
    "GEOADD geo 13.361389 38.115556 Palermo 15.087269 37.502669 Catania",
    "GEOSEARCH geo FROMLONLAT 15 37 BYRADIUS 200 km ASC WITHDIST",
    /* streams with a consumer group */
    "XADD st 1-1 f v1",
    "XADD st 2-1 f v2 g w2",
    "XADD st * f v3",
    "XGROUP CREATE st g 0",
    "XREADGROUP GROUP g c1 COUNT 2 STREAMS st >",
    "XACK st g 1-1",
    "XPENDING st g",
    "XPENDING st g - + 10",
    "XCLAIM st g c2 0 2-1",
    "XAUTOCLAIM st g c3 0 0",
    "XREADGROUP GROUP g c1 STREAMS st 0",
    "XINFO STREAM st FULL",
    "XINFO GROUPS st",
    "XINFO CONSUMERS st g",
    "XGROUP CREATECONSUMER st g c4",
    "XGROUP DELCONSUMER st g c4",
    "XTRIM st MAXLEN 2",
    "XRANGE st - +",
    /* keys */
    "EXPIRE s1 100",
    "TTL s1",
    "RENAME s2 s3",
    "COPY h1 h2",
    "OBJECT ENCODING z1",
    "MEMORY USAGE h1",
    "EXISTS s1 s3 nosuch",
    "SCAN 0 COUNT 100",
    /* transactions, scripts, functions, Pub/Sub */
    "MULTI",
    "SET m1 1",
    "INCR m1",
    "LPUSH ml a b",
    "EXEC",
    "EVAL \"redis.call('set', KEYS[1], ARGV[1]); return redis.call('get', KEYS[1])\" 1 lk lv",
    "EVAL \"return redis.call('lrange', KEYS[1], 0, -1)\" 1 l1",
    "FUNCTION LOAD \"#!lua name=lib\\nredis.register_function('f', function(k, a) "
    "return redis.call('incr', k[1]) end)\"",
    "FCALL f 1 fc",
    "PUBLISH ch hello",
    /* deletions go on */
    "DEL l2 s:c",
    "UNLINK z2",
    "XGROUP DESTROY st g",
    "DEL st geo hll",
    "SET after-deletes 1",
};
#define NMIX (sizeof(mix) / sizeof(mix[0]))

typedef struct split {
    int argc;
    char **argv;
    size_t *lens;
} split;

static split lines[NMIX];

/* A server in the state the mix starts from: keyspace notifications on, a subscriber. */
typedef struct world {
    fr_server *srv;
    fr_client *c;   /* runs the mix */
    fr_client *sub; /* subscribed to ch and every keyspace event */
} world;

static void world_new(world *w)
{
    w->srv = fr_server_new(NULL);
    assert_non_null(w->srv);
    assert_int_equal(fr_server_set_param(w->srv, "notify-keyspace-events", "KEA"), 0);
    w->c = fr_client_new(w->srv);
    w->sub = fr_client_new(w->srv);
    assert_non_null(w->c);
    assert_non_null(w->sub);
    const char *argv[] = {"PSUBSCRIBE", "ch", "__key*__:*"};
    fr_exec_resp(w->sub, 3, argv, NULL, NULL);
    fr_client_push_clear(w->sub);
}

static void world_free(world *w)
{
    fr_client_free(w->c);
    fr_client_free(w->sub);
    fr_server_free(w->srv);
}

static char *dup_bytes(const char *p, size_t n)
{
    char *d = malloc(n + 1);
    assert_non_null(d);
    memcpy(d, p, n);
    d[n] = '\0';
    return d;
}

static char *dump_of(fr_server *s)
{
    char *d = fr_dump(s, NULL);
    assert_non_null(d);
    return d;
}

/* The pushes the subscriber got, taken (so each command's are compared on their own). */
static char *pushes_of(fr_client *sub)
{
    size_t n;
    const char *p = fr_client_push_resp(sub, &n);
    char *d = dup_bytes(p, n);
    fr_client_push_clear(sub);
    return d;
}

/* Stops failing allocations (the test's own dumps must not fail) and returns what
 * resumes the hook's setting. */
static long pause_failures(void) { return fr_debug_fail_allocations(0, 0); }
static void resume_failures(long left, int persistent)
{
    if (left >= 0) fr_debug_fail_allocations(left == 0 ? 1 : left, persistent);
}

typedef struct run_stats {
    size_t refused;      /* commands answered the OOM refusal */
    size_t peak_reserve; /* the most of a reserve in use after a command */
} run_stats;

/* One run of the mix with the n-th allocation failing (once or from then on).  Returns
 * whether a failure was met. */
static int run_mix(long n, int persistent, run_stats *st)
{
    world real, shadow;
    world_new(&real);
    world_new(&shadow);
    unsigned long failures_before = fr_debug_allocation_failures();
    fr_debug_fail_allocations(n, persistent);
    for (size_t i = 0; i < NMIX; i++) {
        const split *l = &lines[i];
        size_t len;
        const char *out = fr_exec_resp(real.c, l->argc, (const char *const *)l->argv, l->lens,
                                       &len);
        long left = pause_failures();
        char *reply = dup_bytes(out, len);
        char *after = dump_of(real.srv);
        size_t used = fr_debug_reserve_used(real.srv);
        if (used > st->peak_reserve) st->peak_reserve = used;
        int refused = strncmp(reply, OOM_REPLY, strlen(OOM_REPLY) - 2) == 0;
        if (refused) {
            /* refused before it ran (or, in a script, its first deny-oom redis.call before
             * any write: Redis's scriptVerifyOOM): the shadow does not run it, so the
             * keyspaces compared below show it changed nothing; the shadow's transaction
             * is doomed the same way (Redis's flagTransaction) */
            fr_client_flag_transaction(shadow.c);
            st->refused++;
        } else {
            out = fr_exec_resp(shadow.c, l->argc, (const char *const *)l->argv, l->lens, &len);
            if (len != strlen(reply) || memcmp(out, reply, len) != 0)
                fail_msg("n=%ld%s %s: the reply differs from the shadow's\ngot:  %s\nwant: %.*s",
                         n, persistent ? " (persistent)" : "", mix[i], reply, (int)len, out);
        }
        char *sdump = dump_of(shadow.srv);
        if (strcmp(after, sdump) != 0)
            fail_msg("n=%ld %s: %s\ngot:\n%s\nwant:\n%s", n, mix[i],
                     refused ? "refused, but the keyspace changed"
                             : "the keyspace differs from the shadow's",
                     after, sdump);
        char *p1 = pushes_of(real.sub), *p2 = pushes_of(shadow.sub);
        if (strcmp(p1, p2) != 0)
            fail_msg("n=%ld %s: the subscriber's pushes differ\ngot:  %s\nwant: %s", n, mix[i],
                     p1, p2);
        free(p1);
        free(p2);
        free(sdump);
        free(after);
        free(reply);
        resume_failures(left, persistent);
    }
    pause_failures();
    int met = fr_debug_allocation_failures() != failures_before;

    /* the failures stopped: the server takes writes again, with a whole reserve */
    const char *set[] = {"SET", "written-after", "1"};
    size_t len;
    const char *out = fr_exec_resp(real.c, 3, set, NULL, &len);
    assert_int_equal(len, 5);
    assert_memory_equal(out, "+OK\r\n", 5);
    assert_int_equal(fr_debug_reserve_used(real.srv), 0);
    world_free(&real);
    world_free(&shadow);
    return met;
}

static void fail_loop(int persistent)
{
    run_stats st = {0};
    long n = 1;
    while (run_mix(n, persistent, &st)) n++;
    printf("# %s: %ld runs (allocation 1 to %ld failed), %zu commands refused, reserve "
           "peak %zu of %zu bytes\n",
           persistent ? "the n-th and every later allocation fail" : "the n-th allocation fails",
           n, n - 1, st.refused, st.peak_reserve, (size_t)1 << 20);
    assert_true(n > (long)NMIX); /* the mix allocates: the loop really failed something */
    if (persistent) assert_true(st.refused > 0);
    else assert_int_equal(st.refused, 0); /* a fresh reserve is taken before the next one */
}

static void test_fail_once(void **state)
{
    (void)state;
    fail_loop(0);
}

static void test_fail_from_then_on(void **state)
{
    (void)state;
    fail_loop(1);
}

/* Outside a command: a failed constructor answers NULL / -1 and leaves nothing behind
 * (LSan checks the last part). */
static void test_outside_commands(void **state)
{
    (void)state;
    long n;
    for (n = 1;; n++) {
        unsigned long before = fr_debug_allocation_failures();
        fr_debug_fail_allocations(n, 1);
        fr_server *s = fr_server_new(NULL);
        pause_failures();
        int met = fr_debug_allocation_failures() != before;
        if (met) {
            assert_null(s);
            continue;
        }
        assert_non_null(s);
        fr_server_free(s);
        break;
    }
    assert_true(n > 2);

    fr_server *s = fr_server_new(NULL);
    for (n = 1;; n++) {
        unsigned long before = fr_debug_allocation_failures();
        fr_debug_fail_allocations(n, 1);
        fr_client *c = fr_client_new(s);
        pause_failures();
        if (fr_debug_allocation_failures() != before) {
            assert_null(c);
            continue;
        }
        assert_non_null(c);
        fr_client_free(c);
        break;
    }

    for (n = 1;; n++) {
        unsigned long before = fr_debug_allocation_failures();
        char **argv;
        size_t *lens;
        fr_debug_fail_allocations(n, 1);
        int argc = fr_split_line("SET \"a b\" 'c'", &argv, &lens);
        pause_failures();
        if (fr_debug_allocation_failures() != before) {
            assert_int_equal(argc, -1);
            continue;
        }
        assert_int_equal(argc, 3);
        fr_split_free(argc, argv, lens);
        break;
    }

    /* a reset that fails leaves a server fr_server_free can free */
    for (n = 1;; n++) {
        fr_client *c = fr_client_new(s);
        const char *set[] = {"SET", "k", "v"};
        fr_exec_resp(c, 3, set, NULL, NULL);
        unsigned long before = fr_debug_allocation_failures();
        fr_debug_fail_allocations(n, 1);
        int rc = fr_server_reset(s, NULL);
        pause_failures();
        if (fr_debug_allocation_failures() != before) {
            assert_int_equal(rc, -1);
            fr_server_free(s);
            s = fr_server_new(NULL);
            assert_non_null(s);
            continue;
        }
        assert_int_equal(rc, 0);
        break;
    }
    fr_server_free(s);
}

static int always_over(fr_server *s, void *ctx)
{
    (void)s;
    (void)ctx;
    return 1;
}

/* Short of memory, reads and deletions go on and free the reserve: once every block it
 * served is freed, the reserve is whole again without a new allocation, and writes are
 * taken again even while the C library still refuses. */
static void test_deletions_make_the_reserve_whole(void **state)
{
    (void)state;
    fr_server *s = fr_server_new(NULL);
    fr_client *c = fr_client_new(s);
    size_t len;
    const char *out;
    /* the client's buffers, the keyspace's table and the commands' statistics rows
     * exist before memory runs out: what is made then stays (and holds the reserve) */
    const char *warm[] = {"SET", "x", "a value that is not shared or embedded, 48 bytes"};
    fr_exec_resp(c, 3, warm, NULL, &len);
    const char *warm_get[] = {"GET", "x"}, *warm_del[] = {"DEL", "nosuch"};
    fr_exec_resp(c, 2, warm_get, NULL, &len);
    fr_exec_resp(c, 2, warm_del, NULL, &len);
    fr_server_set_oom_hook(s, always_over, NULL); /* errorstats' OOM row, made */
    out = fr_exec_resp(c, 3, warm, NULL, &len);
    assert_memory_equal(out, OOM_REPLY, len);
    fr_server_set_oom_hook(s, NULL, NULL);
    fr_debug_fail_allocations(1, 1);
    const char *set[] = {"SET", "k", "a value that is not shared or embedded, 48 bytes"};
    out = fr_exec_resp(c, 3, set, NULL, &len);
    assert_memory_equal(out, "+OK\r\n", 5); /* completed from the reserve */
    assert_true(fr_debug_reserve_used(s) > 0);
    const char *set2[] = {"SET", "k2", "v"};
    out = fr_exec_resp(c, 3, set2, NULL, &len);
    assert_int_equal(len, strlen(OOM_REPLY));
    assert_memory_equal(out, OOM_REPLY, len); /* deny-oom: refused */
    const char *get[] = {"GET", "k"};
    out = fr_exec_resp(c, 2, get, NULL, &len);
    assert_memory_equal(out, "$48\r\n", 5); /* reads go on */
    const char *del[] = {"DEL", "k"};
    out = fr_exec_resp(c, 2, del, NULL, &len);
    assert_memory_equal(out, ":1\r\n", 4);
    /* the reply buffers served from the reserve went back too: the next gate finds it
     * whole, while every allocation still fails */
    out = fr_exec_resp(c, 3, set2, NULL, &len);
    assert_memory_equal(out, "+OK\r\n", 5);
    pause_failures();
    fr_client_free(c);
    fr_server_free(s);
}

static int setup(void **state)
{
    (void)state;
    for (size_t i = 0; i < NMIX; i++) {
        lines[i].argc = fr_split_line(mix[i], &lines[i].argv, &lines[i].lens);
        if (lines[i].argc <= 0) return -1;
    }
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    for (size_t i = 0; i < NMIX; i++) fr_split_free(lines[i].argc, lines[i].argv, lines[i].lens);
    return 0;
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_fail_once),
        cmocka_unit_test(test_fail_from_then_on),
        cmocka_unit_test(test_outside_commands),
        cmocka_unit_test(test_deletions_make_the_reserve_whole),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
