/* test_evict.c -- maxmemory's eviction (evict.c) on the virtual clock.  The test plays
 * the embedder's OOM hook: "over the limit" while the keyspace holds more than `limit`
 * keys, so each command evicts down to that many, and what a policy picks is observable:
 *
 * - noeviction, or no maxmemory: nothing goes, deny-oom commands get -OOM;
 * - volatile-*: only keys with a TTL go; with none left, -OOM as under noeviction;
 * - allkeys-lru with maxmemory-samples at least the key count: the longest idle key
 *   (idle on Redis's LRU clock, whole seconds) goes first;
 * - allkeys-lfu: the least used key goes; volatile-ttl: the nearest deadline;
 * - allkeys-random: any key, the same ones for the same seed;
 * - each eviction: an "evicted" event, WATCHers touched, fr_server_evicted_keys.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "fake_fixture.h"
#include "fakeredis.h"

typedef fake_fixture fixture;
#define TEST(fn) FAKE_TEST2(fn)
#define OK(c, ...) FAKE_OK((c), __VA_ARGS__)
#define INT(c, ...) FAKE_INT((c), __VA_ARGS__)

static size_t limit; /* keys the "memory" holds */

/* Over the limit while database 0 holds more than `limit` keys. */
static int keys_over(fr_server *s, void *ctx)
{
    (void)ctx;
    size_t keys = 0;
    fr_db_counts(s, 0, &keys, NULL);
    return keys > limit;
}

static void setup_policy(fixture *f, const char *policy, size_t max_keys)
{
    limit = max_keys;
    assert_int_equal(fr_server_set_param(f->srv, "maxmemory", "1mb"), 0);
    assert_int_equal(fr_server_set_param(f->srv, "maxmemory-policy", policy), 0);
    assert_int_equal(fr_server_set_param(f->srv, "maxmemory-samples", "64"), 0);
    fr_server_set_oom_hook(f->srv, keys_over, NULL);
}

static int exists(fixture *f, const char *key) { return (int)INT(f->c, "EXISTS %s", key); }

static void noeviction_refuses(void **state)
{
    fixture *f = *state;
    setup_policy(f, "noeviction", 2);
    OK(f->c, "MSET a 1 b 2");
    OK(f->c, "SET c 3"); /* 2 keys before it: not over yet */
    const fr_reply *r = fake_run(f->c, "SET d 4");
    assert_int_equal(r->type, FR_REPLY_ERROR);
    assert_string_equal(r->str, "OOM command not allowed when used memory > 'maxmemory'.");
    assert_int_equal(INT(f->c, "DBSIZE"), 3);
    assert_int_equal(fr_server_evicted_keys(f->srv), 0);
}

static void volatile_only_keys_with_ttl(void **state)
{
    fixture *f = *state;
    setup_policy(f, "volatile-random", 2);
    OK(f->c, "MSET a 1 b 2");
    OK(f->c, "SET t1 x EX 100"); /* 2 keys before it: not over yet */
    assert_int_equal(exists(f, "a"), 1); /* over: t1, the only key with a TTL, goes */
    assert_int_equal(exists(f, "t1"), 0);
    assert_int_equal(exists(f, "b"), 1);
    assert_int_equal(fr_server_evicted_keys(f->srv), 1);
    OK(f->c, "SET c 3");
    /* over, and no key has a TTL: a deny-oom command is refused, a read runs */
    const fr_reply *r = fake_run(f->c, "SET d 4");
    assert_int_equal(r->type, FR_REPLY_ERROR);
    assert_string_equal(fake_resp(fake_run(f->c, "GET a")), "$1\r\n1\r\n");
    assert_int_equal(INT(f->c, "DBSIZE"), 3);
    assert_int_equal(fr_server_evicted_keys(f->srv), 1);
}

static void allkeys_lru_takes_the_most_idle(void **state)
{
    fixture *f = *state;
    /* not small integers: those would share one LRU field (Redis's shared objects) */
    OK(f->c, "SET old v1");
    fr_clock_advance(f->srv, 10000);
    OK(f->c, "SET mid v2");
    fr_clock_advance(f->srv, 10000);
    OK(f->c, "SET new v3");
    assert_non_null(fake_run(f->c, "GET old")); /* old is now the most recently used */
    fr_clock_advance(f->srv, 1000);
    setup_policy(f, "allkeys-lru", 2);
    assert_int_equal(INT(f->c, "DBSIZE"), 2); /* mid, idle 11 s, went first */
    assert_int_equal(exists(f, "mid"), 0);
    assert_int_equal(exists(f, "old") + exists(f, "new"), 2);
}

static void allkeys_lfu_takes_the_least_used(void **state)
{
    fixture *f = *state;
    assert_int_equal(fr_server_set_param(f->srv, "maxmemory-policy", "allkeys-lfu"), 0);
    assert_int_equal(fr_server_set_param(f->srv, "lfu-log-factor", "0"), 0);
    OK(f->c, "MSET a v1 b v2 c v3");
    for (int i = 0; i < 5; i++) {
        assert_non_null(fake_run(f->c, "GET a"));
        assert_non_null(fake_run(f->c, "GET c"));
    }
    setup_policy(f, "allkeys-lfu", 2);
    assert_int_equal(INT(f->c, "DBSIZE"), 2);
    assert_int_equal(exists(f, "b"), 0);
}

static void volatile_ttl_takes_the_nearest(void **state)
{
    fixture *f = *state;
    OK(f->c, "SET far x EX 1000");
    OK(f->c, "SET near x EX 10");
    OK(f->c, "SET mid x EX 100");
    OK(f->c, "SET keep x");
    setup_policy(f, "volatile-ttl", 3);
    assert_int_equal(INT(f->c, "DBSIZE"), 3);
    assert_int_equal(exists(f, "near"), 0);
    limit = 2;
    assert_int_equal(INT(f->c, "DBSIZE"), 2);
    assert_int_equal(exists(f, "mid"), 0);
    assert_int_equal(exists(f, "far") + exists(f, "keep"), 2);
}

/* The keys allkeys-random leaves of k0..k19 with room for 10, as a bit mask. */
static unsigned random_survivors(uint64_t seed)
{
    fr_config cfg = fr_config_default();
    cfg.seed = seed;
    fixture *f = fake_fixture_new(&cfg, 1);
    assert_non_null(f);
    for (int i = 0; i < 20; i++) OK(f->c, "SET k%d v", i);
    setup_policy(f, "allkeys-random", 10);
    assert_int_equal(INT(f->c, "DBSIZE"), 10);
    unsigned mask = 0;
    for (int i = 0; i < 20; i++) {
        char key[8];
        snprintf(key, sizeof(key), "k%d", i);
        if (exists(f, key)) mask |= 1u << i;
    }
    fake_fixture_free(f);
    return mask;
}

static void allkeys_random_is_seeded(void **state)
{
    (void)state;
    assert_int_equal(random_survivors(7), random_survivors(7));
    unsigned a = random_survivors(7), b = random_survivors(8), c = random_survivors(9);
    assert_true(a != b || b != c); /* the seed decides */
}

static char last_event[64], last_key[64];

static void on_event(void *ud, unsigned type, const char *event, const char *key, size_t len,
                     int db)
{
    (void)ud;
    (void)db;
    if (type != FR_NOTIFY_EVICTED) return;
    snprintf(last_event, sizeof(last_event), "%s", event);
    snprintf(last_key, sizeof(last_key), "%.*s", (int)len, key);
}

static void eviction_is_seen(void **state)
{
    fixture *f = *state;
    assert_int_equal(fr_server_set_param(f->srv, "notify-keyspace-events", "Ee"), 0);
    fr_server_set_keyspace_hook(f->srv, on_event, NULL);
    OK(f->c, "SET w 1 EX 100");
    OK(f->c2, "WATCH w");
    OK(f->c2, "MULTI");
    assert_string_equal(fake_resp(fake_run(f->c2, "PING")), "+QUEUED\r\n");
    OK(f->c, "SET other 1");
    setup_policy(f, "volatile-lru", 1);
    assert_int_equal(INT(f->c, "EXISTS w"), 0);
    assert_int_equal(fr_server_evicted_keys(f->srv), 1);
    assert_string_equal(last_event, "evicted");
    assert_string_equal(last_key, "w");
    /* the WATCHed key was evicted: the transaction fails */
    assert_string_equal(fake_resp(fake_run(f->c2, "EXEC")), "*-1\r\n");
}

/* fr_server_evict: the same eviction outside a command (CONFIG SET maxmemory). */
static void evict_now(void **state)
{
    fixture *f = *state;
    OK(f->c, "MSET a v1 b v2 c v3 d v4");
    assert_int_equal(fr_server_evict(f->srv), 0); /* no maxmemory yet */
    setup_policy(f, "allkeys-random", 1);
    assert_int_equal(fr_server_evict(f->srv), 3);
    assert_int_equal(fr_server_evicted_keys(f->srv), 3);
    size_t keys = 0;
    assert_int_equal(fr_db_counts(f->srv, 0, &keys, NULL), 0);
    assert_int_equal(keys, 1);
    assert_int_equal(fr_server_set_param(f->srv, "maxmemory-policy", "noeviction"), 0);
    limit = 0;
    assert_int_equal(fr_server_evict(f->srv), 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        TEST(noeviction_refuses),
        TEST(volatile_only_keys_with_ttl),
        TEST(allkeys_lru_takes_the_most_idle),
        TEST(allkeys_lfu_takes_the_least_used),
        TEST(volatile_ttl_takes_the_nearest),
        cmocka_unit_test(allkeys_random_is_seeded),
        TEST(eviction_is_seen),
        TEST(evict_now),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
