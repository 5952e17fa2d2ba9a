/* test_sim_retry.c -- retry_after (SEMANTICS.md §2.1, §2.2): with a delay queue, ZADD of
 * a member holding the id and the copy (our own reversible encoding), PEXPIRE with a TTL,
 * and the sweep before each read (ZRANGEBYSCORE, ZREM, and XADD only if the ZREM removed
 * the member); without one, a timer publishes the copy through the pool when the clock
 * passes the delay, in deadline order.
 *
 * Each test runs on the fake and, with --real, on redis-server too (sim_fixture.h); the
 * delays are 30 s on the fake's clock and 300 ms on a real server, where ws_sim_advance
 * really sleeps. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sim_fixture.h"

/* A stream subscription "orders", with the delay queue `dq` (NULL: none). */
static ws_sub *orders(ws_sim *sim, const char *dq, int64_t ttl)
{
    ws_sub_config cfg = sf_sub_config(sim, WS_FORM_STREAM, WS_MODE_WINDOW, "orders", 0);
    cfg.delay_queue = dq;
    cfg.delay_ttl_ms = ttl;
    return sf_subscribe(sim, &cfg);
}

/* §9 a_delayed_retry_leaves_nothing_it_queued, on one source: retry_after d; nothing
 * written until the clock passes d; then the copy is handled and its write applied once. */
static void delayed_retry(sf_world *w, ws_form form, const char *dq)
{
    ws_sim *sim = sf_sim(w, 1);
    ws_sub *sub;
    if (form == WS_FORM_STREAM) {
        sub = orders(sim, dq, 0);
    } else {
        sub = sf_sub(sim, form, WS_MODE_WINDOW, "orders", 0);
    }
    int64_t d = sf_ms(w, 30000, 300);
    sf_produce(sim, form, "orders", "order-1");
    assert_int_equal(sf_read(sub), 1);
    sf_queue(sf_d(sub, 0), "LPUSH picks sku-1");
    assert_int_equal(ws_settle(sf_d(sub, 0), WS_RETRY_AFTER, d), 0);
    /* Settled now: dropped (no delay queue) or moved to the delay queue. */
    assert_int_equal(sf_unsettled(sim, form, "orders"), 0);

    assert_int_equal(ws_sim_advance(sim, d - 1), 0);
    assert_int_equal(sf_read(sub), 0);
    assert_int_equal(sf_int(sim, "EXISTS picks"), 0);

    assert_int_equal(ws_sim_advance(sim, 1), 0);
    assert_int_equal(sf_read(sub), 1);
    ws_delivery *copy = sf_d(sub, 0);
    size_t len;
    assert_memory_equal(ws_delivery_payload(copy, &len), "order-1", 7);
    if (form == WS_FORM_STREAM) assert_int_equal(ws_delivery_retries(copy), 1);
    sf_queue(copy, "LPUSH picks sku-1");
    sf_settle(copy, WS_ACK);
    assert_string_equal(sf_q(sim, "LRANGE picks 0 -1"), "[\"sku-1\"]");
    assert_int_equal(sf_unsettled(sim, form, "orders"), 0);
    if (dq) assert_int_equal(sf_int(sim, "EXISTS %s", dq), 0);
}

SF_TEST(a_delayed_retry_leaves_nothing_it_queued_stream_with_a_delay_queue)
{
    delayed_retry(w, WS_FORM_STREAM, "orders:delayed");
}

SF_TEST(a_delayed_retry_leaves_nothing_it_queued_stream_without_a_delay_queue)
{
    delayed_retry(w, WS_FORM_STREAM, NULL);
}

SF_TEST(a_delayed_retry_leaves_nothing_it_queued_reliable_list)
{
    delayed_retry(w, WS_FORM_RELIABLE_LIST, NULL);
}

/* The settle of a retry_after with a delay queue: ZADD <now+d> <member>, PEXPIRE with a
 * TTL, in round trip 1; XACK in round trip 2. */
SF_TEST(a_retry_after_with_a_delay_queue_is_zadd_pexpire_then_xack)
{
    ws_sim *sim = sf_sim(w, 1);
    ws_sub *sub = orders(sim, "orders:delayed", 60000);
    const char *id = sf_produce(sim, WS_FORM_STREAM, "orders", "order-1");
    assert_int_equal(sf_read(sub), 1);
    int64_t now = ws_sim_now(sim);
    assert_int_equal(ws_settle(sf_d(sub, 0), WS_RETRY_AFTER, 5000), 0);
    char zadd[64];
    snprintf(zadd, sizeof zadd, "ZADD orders:delayed %lld wsim1", (long long)(now + 5000));
    char xack[128];
    snprintf(xack, sizeof xack, "XACK orders g %s\n", id);
    const char *flush = sf_commands(sim, "flush");
    sf_in_order(flush, zadd, "PEXPIRE orders:delayed 60000\n", xack, NULL);
    assert_int_equal(ws_sim_get_counts(sim).flush_round_trips, 2);
    assert_int_equal(sf_int(sim, "ZCARD orders:delayed"), 1);
    assert_true(sf_int(sim, "PEXPIRETIME orders:delayed") > now);
    assert_int_equal(sf_pending(sim, "orders", "g"), 0);
}

/* Splits a "wsim1" member into its strings (<len>:<bytes> each); returns how many. */
static size_t decode_member(const char *p, size_t len, const char **s, size_t *l, size_t max)
{
    assert_true(len >= 5 && memcmp(p, "wsim1", 5) == 0);
    size_t pos = 5, n = 0;
    while (pos < len) {
        char *end;
        size_t v = strtoul(p + pos, &end, 10);
        assert_true(end < p + len && *end == ':');
        pos = (size_t)(end - p) + 1;
        assert_true(v <= len - pos && n < max);
        s[n] = p + pos;
        l[n] = v;
        n++;
        pos += v;
    }
    return n;
}

/* The delay-queue member holds the entry id and the copy's fields, retry counter raised;
 * binary payloads and headers survive the round trip through the zset and the sweep. */
SF_TEST(a_delay_queue_member_round_trips_binary_payloads)
{
    ws_sim *sim = sf_sim(w, 1);
    ws_sub *sub = orders(sim, "orders:delayed", 0);
    static const char payload[] = "a\0b\r\n9:x";
    size_t plen = sizeof payload - 1;
    ws_header h = {"tenant", "t:1\n", 0};
    char *id = NULL;
    assert_int_equal(ws_sim_produce(sim, WS_FORM_STREAM, "orders", payload, plen, &h, 1, &id), 0);
    assert_int_equal(sf_read(sub), 1);
    assert_int_equal(ws_settle(sf_d(sub, 0), WS_RETRY_AFTER, 1000), 0);

    const fr_reply *r = NULL;
    assert_int_equal(ws_sim_command_line(sim, "ZRANGE orders:delayed 0 -1", &r), 0);
    assert_int_equal(r->count, 1);
    const char *s[16];
    size_t l[16];
    size_t n = decode_member(r->elements[0].str, r->elements[0].len, s, l, 16);
    assert_int_equal(n, 7);
    assert_int_equal(l[0], strlen(id));
    assert_memory_equal(s[0], id, l[0]);
    assert_memory_equal(s[1], "_payload", 8);
    assert_int_equal(l[2], plen);
    assert_memory_equal(s[2], payload, plen);
    assert_memory_equal(s[3], "h:tenant", 8);
    assert_memory_equal(s[4], "t:1\n", 4);
    assert_memory_equal(s[5], "h:x-ruststream-retry-count", 26);
    assert_memory_equal(s[6], "1", 1);
    free(id);

    assert_int_equal(ws_sim_advance(sim, 1000), 0);
    assert_int_equal(sf_read(sub), 1);
    ws_delivery *copy = sf_d(sub, 0);
    size_t len;
    const char *p = ws_delivery_payload(copy, &len);
    assert_int_equal(len, plen);
    assert_memory_equal(p, payload, plen);
    assert_string_equal(ws_delivery_header(copy, "tenant", NULL), "t:1\n");
    assert_int_equal(ws_delivery_retries(copy), 1);
    /* A second retry_after raises the counter again. */
    assert_int_equal(ws_settle(copy, WS_RETRY_AFTER, 1000), 0);
    assert_int_equal(ws_sim_advance(sim, 1000), 0);
    assert_int_equal(sf_read(sub), 1);
    assert_int_equal(ws_delivery_retries(sf_d(sub, 0)), 2);
    sf_settle(sf_d(sub, 0), WS_ACK);
}

/* The sweep before a read: ZRANGEBYSCORE <zset> 0 <now> LIMIT 0 128, then ZREM per
 * member, then XADD of the copy only where the ZREM removed it (here the first ZREM is
 * refused by an injected error: no copy, the member stays for the next sweep). */
SF_TEST(the_delay_queue_sweep_adds_a_copy_only_where_zrem_removed_the_member)
{
    ws_sim *sim = sf_sim(w, 1);
    ws_sub *sub = orders(sim, "orders:delayed", 0);
    sf_produce(sim, WS_FORM_STREAM, "orders", "order-1");
    assert_int_equal(sf_read(sub), 1);
    assert_int_equal(ws_settle(sf_d(sub, 0), WS_RETRY_AFTER, 1000), 0);
    assert_int_equal(ws_sim_advance(sim, 1000), 0);
    assert_int_equal(ws_fault_error_nth(ws_sim_reader(sim), "ZREM", 1, NULL), 0);
    int64_t now = ws_sim_now(sim);
    assert_int_equal(sf_read(sub), 0);
    assert_int_equal(sf_int(sim, "ZCARD orders:delayed"), 1);
    assert_int_equal(sf_int(sim, "XLEN orders"), 1);
    char range[128];
    snprintf(range, sizeof range, "ZRANGEBYSCORE orders:delayed 0 %lld LIMIT 0 128\n",
             (long long)now);
    sf_in_order(sf_commands(sim, "read 2"), range, "ZREM orders:delayed wsim1", NULL);
    /* The next sweep moves it. */
    assert_int_equal(sf_read(sub), 1);
    assert_int_equal(ws_delivery_retries(sf_d(sub, 0)), 1);
    sf_in_order(sf_commands(sim, "read 3"), "ZRANGEBYSCORE", "ZREM orders:delayed wsim1",
                "XADD orders * _payload order-1 h:x-ruststream-retry-count 1\n",
                "XREADGROUP", NULL);
    sf_settle(sf_d(sub, 0), WS_ACK);
    assert_int_equal(sf_int(sim, "EXISTS orders:delayed"), 0);
}

/* Without a delay queue the original is settled as dropped at once, and the copy is
 * published through the pool (the window connection) when the clock passes the delay;
 * timers fire in deadline order. */
SF_TEST(a_retry_after_without_a_delay_queue_is_a_timer_copy_through_the_pool)
{
    ws_sim *sim = sf_sim(w, 1);
    ws_sub *sub = orders(sim, NULL, 0);
    sf_produce(sim, WS_FORM_STREAM, "orders", "order-1");
    sf_produce(sim, WS_FORM_STREAM, "orders", "order-2");
    assert_int_equal(sf_read(sub), 2);
    int64_t d = sf_ms(w, 2000, 200);
    assert_int_equal(ws_settle(sf_d(sub, 0), WS_RETRY_AFTER, 2 * d), 0);
    assert_int_equal(ws_settle(sf_d(sub, 1), WS_RETRY_AFTER, d), 0);
    /* Both settled as dropped, in one XACK. */
    char xack[128];
    snprintf(xack, sizeof xack, "XACK orders g %s %s\n", ws_delivery_id(sf_d(sub, 0)),
             ws_delivery_id(sf_d(sub, 1)));
    assert_string_equal(sf_commands(sim, "flush"), xack);
    assert_int_equal(sf_pending(sim, "orders", "g"), 0);
    uint64_t pool = ws_sim_get_counts(sim).pool_round_trips;
    assert_int_equal(ws_sim_advance(sim, 3 * d), 0);
    assert_int_equal(ws_sim_get_counts(sim).pool_round_trips - pool, 2);
    sf_in_order(sf_commands(sim, "timer"),
                "XADD orders * _payload order-2 h:x-ruststream-retry-count 1\n",
                "XADD orders * _payload order-1 h:x-ruststream-retry-count 1\n", NULL);
    assert_int_equal(sf_read(sub), 2);
    size_t len;
    assert_memory_equal(ws_delivery_payload(sf_d(sub, 0), &len), "order-2", 7);
    sf_settle(sf_d(sub, 0), WS_ACK);
    sf_settle(sf_d(sub, 1), WS_ACK);
    assert_int_equal(sf_pending(sim, "orders", "g"), 0);
}

/* A reliable list's retry_after: LREM now; LPUSH of the value through the pool later. */
SF_TEST(a_reliable_list_retry_after_is_lrem_now_and_a_timer_lpush)
{
    ws_sim *sim = sf_sim(w, 1);
    ws_sub *sub = sf_sub(sim, WS_FORM_RELIABLE_LIST, WS_MODE_WINDOW, "orders", 0);
    sf_produce(sim, WS_FORM_RELIABLE_LIST, "orders", "order-1");
    assert_int_equal(sf_read(sub), 1);
    int64_t d = sf_ms(w, 2000, 200);
    assert_int_equal(ws_settle(sf_d(sub, 0), WS_RETRY_AFTER, d), 0);
    assert_string_equal(sf_commands(sim, "flush"), "LREM orders.processing 1 order-1\n");
    assert_int_equal(sf_int(sim, "EXISTS orders"), 0);
    assert_int_equal(ws_sim_advance(sim, d), 0);
    assert_string_equal(sf_commands(sim, "timer"), "LPUSH orders order-1\n");
    assert_string_equal(sf_q(sim, "LRANGE orders 0 -1"), "[\"order-1\"]");
}

int main(int argc, char **argv)
{
    const struct CMUnitTest tests[] = {
        SF_T(a_delayed_retry_leaves_nothing_it_queued_stream_with_a_delay_queue),
        SF_T(a_delayed_retry_leaves_nothing_it_queued_stream_without_a_delay_queue),
        SF_T(a_delayed_retry_leaves_nothing_it_queued_reliable_list),
        SF_T(a_retry_after_with_a_delay_queue_is_zadd_pexpire_then_xack),
        SF_T(a_delay_queue_member_round_trips_binary_payloads),
        SF_T(the_delay_queue_sweep_adds_a_copy_only_where_zrem_removed_the_member),
        SF_T(a_retry_after_without_a_delay_queue_is_a_timer_copy_through_the_pool),
        SF_T(a_reliable_list_retry_after_is_lrem_now_and_a_timer_lpush),
    };
    return sf_main(argc, argv, "sim: retries and delays (§2.1, §2.2)", tests,
                   sizeof tests / sizeof tests[0]);
}
