/* test_sim_direct.c -- direct mode, the baseline (SEMANTICS.md §7): every write and
 * settle on its own, 1 + 2×COUNT round trips per read against 2 for the window; a crash
 * between a handler's write and its XACK applies the write twice after redelivery, and
 * ws_sim_check names it "doubled"; the atomic window removes it, the plain window does
 * not.
 *
 * Each test runs on the fake and, with --real, on redis-server too (sim_fixture.h). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sim_fixture.h"

/* The round trips one read of three deliveries costs in `mode`, each handler writing one
 * LPUSH and acking. */
static uint64_t cost_of_a_read(ws_sim *sim, ws_mode mode, const char *key)
{
    ws_sub *sub = sf_sub(sim, WS_FORM_STREAM, mode, key, 3);
    sf_produce_n(sim, WS_FORM_STREAM, key, 3);
    uint64_t before = ws_sim_get_counts(sim).round_trips;
    assert_int_equal(sf_read(sub), 3);
    for (size_t i = 0; i < 3; i++) {
        sf_queue(sf_d(sub, i), "LPUSH picks:%s %zu", key, i);
        sf_settle(sf_d(sub, i), WS_ACK);
    }
    assert_int_equal(sf_pending(sim, key, "g"), 0);
    assert_int_equal(sf_int(sim, "LLEN picks:%s", key), 3);
    return ws_sim_get_counts(sim).round_trips - before;
}

/* 1 + 2×COUNT round trips per read in direct mode, 1 + 1 with a window. */
SF_TEST(direct_mode_costs_one_plus_two_round_trips_per_delivery)
{
    ws_sim *sim = sf_sim(w, 1);
    assert_int_equal(cost_of_a_read(sim, WS_MODE_DIRECT, "direct"), 1 + 2 * 3);
    assert_int_equal(cost_of_a_read(sim, WS_MODE_WINDOW, "window"), 1 + 1);
    assert_int_equal(cost_of_a_read(sim, WS_MODE_ATOMIC, "atomic"), 1 + 1);
}

/* The consumer's round trips whose cause starts with `cause`: how many, each of which
 * must hold exactly `per` commands. */
static size_t round_trips_of(ws_sim *sim, const char *cause, size_t per)
{
    size_t found = 0;
    for (size_t i = 0; i < ws_sim_round_trip_count(sim); i++) {
        ws_rt_info rt;
        assert_int_equal(ws_sim_round_trip(sim, i, &rt), 0);
        if (strncmp(rt.cause, cause, strlen(cause)) != 0) continue;
        if (rt.n != per)
            fail_msg("round trip %s #%llu (%s) holds %zu commands, want %zu", rt.conn,
                     (unsigned long long)rt.index, rt.cause, rt.n, per);
        found++;
    }
    return found;
}

/* Each delivery settles on its own, right after its handler, one command per round trip
 * (cause "settle of <id>"): ack = XACK of its id; retry (undeclared: the broker's
 * requeue) = the XADD copy of the entry verbatim, then XACK; retry_after with a delay
 * queue = ZADD, then XACK; the handler's writes leave at once (cause "direct write"),
 * whatever the outcome. */
SF_TEST(direct_mode_settles_each_delivery_on_its_own)
{
    ws_sim *sim = sf_sim(w, 1);
    ws_sub_config cfg = sf_sub_config(sim, WS_FORM_STREAM, WS_MODE_DIRECT, "orders", 0);
    cfg.delay_queue = "orders:delayed";
    ws_sub *sub = sf_subscribe(sim, &cfg);
    const char *id[3];
    id[0] = sf_produce(sim, WS_FORM_STREAM, "orders", "order-1");
    id[1] = sf_produce(sim, WS_FORM_STREAM, "orders", "order-2");
    id[2] = sf_produce(sim, WS_FORM_STREAM, "orders", "order-3");
    assert_int_equal(sf_read(sub), 3);
    sf_queue(sf_d(sub, 0), "RPUSH picks a");
    assert_string_equal(sf_q(sim, "LRANGE picks 0 -1"), "[\"a\"]"); /* at once */
    sf_settle(sf_d(sub, 0), WS_ACK);
    sf_queue(sf_d(sub, 1), "RPUSH picks b");
    sf_settle(sf_d(sub, 1), WS_RETRY);
    sf_queue(sf_d(sub, 2), "RPUSH picks c");
    assert_int_equal(ws_settle(sf_d(sub, 2), WS_RETRY_AFTER, 1000), 0);
    char x0[128], x1[128], x2[128];
    snprintf(x0, sizeof x0, "XACK orders g %s\n", id[0]);
    snprintf(x1, sizeof x1, "XACK orders g %s\n", id[1]);
    snprintf(x2, sizeof x2, "XACK orders g %s\n", id[2]);
    sf_in_order(sf_commands(sim, "window"), "RPUSH picks a\n", x0, "RPUSH picks b\n",
                "XADD orders * _payload order-2\n", x1, "RPUSH picks c\n",
                "ZADD orders:delayed", x2, NULL);
    /* XACK; XADD, XACK; ZADD, XACK: five round trips of one command each. */
    assert_int_equal(round_trips_of(sim, "settle of ", 1), 5);
    /* The writes of the dropped-by-retry deliveries took effect: direct mode cannot
     * take them back. */
    assert_string_equal(sf_q(sim, "LRANGE picks 0 -1"), "[\"a\", \"b\", \"c\"]");
    assert_int_equal(sf_pending(sim, "orders", "g"), 0);
    assert_int_equal(ws_sim_get_counts(sim).flushes, 0);
}

/* A direct reliable list has no LMOVE pipeline (list.rs ListWire::next_entry): each read
 * is one BLMOVE on the reader, one delivery at most, then the claim's ZADD through the pool
 * and, with a recovery ttl, its PEXPIRE, each a round trip of its own (recovery.rs
 * record_claim); the ack is LREM, then ZREM, again one round trip each. */
SF_TEST(a_direct_reliable_list_reads_one_blmove_and_records_each_claim_on_its_own)
{
    ws_sim *sim = sf_sim(w, 1);
    ws_sub_config cfg = sf_sub_config(sim, WS_FORM_RELIABLE_LIST, WS_MODE_DIRECT, "orders", 0);
    cfg.recovery = "orders:claims";
    cfg.min_idle_ms = 100;
    cfg.recovery_ttl_ms = 60000;
    ws_sub *sub = sf_subscribe(sim, &cfg);
    sf_produce_n(sim, WS_FORM_RELIABLE_LIST, "orders", 2);
    assert_int_equal(sf_read(sub), 1); /* one delivery per read, though two wait */
    assert_int_equal(sf_int(sim, "LLEN orders"), 1);
    assert_int_equal(round_trips_of(sim, "read 1 of orders", 1), 1);
    assert_int_equal(sf_count(sf_commands(sim, "read 1 of orders"), "BLMOVE orders "
                              "orders.processing RIGHT LEFT "), 1);
    assert_int_equal(sf_count(sf_commands(sim, NULL), "LMOVE orders orders.processing RIGHT "
                              "LEFT\n"), 0);
    assert_int_equal(round_trips_of(sim, "claims of read 1 of orders", 1), 2);
    sf_in_order(sf_commands(sim, "claims of read 1 of orders"), "ZADD orders:claims ",
                "PEXPIRE orders:claims 60000\n", NULL);
    assert_int_equal(sf_int(sim, "ZCARD orders:claims"), 1);
    /* TTL, not PTTL: the admin's commands are in the trace, which must be the same on a
     * real server, whose clock moves on (59999 ms rounds to 60 s as 60000 does) */
    assert_int_equal(sf_int(sim, "TTL orders:claims"), 60);
    sf_settle(sf_d(sub, 0), WS_ACK);
    assert_int_equal(round_trips_of(sim, "settle of order-1", 1), 2);
    sf_in_order(sf_commands(sim, "settle of order-1"), "LREM orders.processing 1 order-1\n",
                "ZREM orders:claims ", NULL);
    assert_int_equal(sf_read(sub), 1);
    assert_string_equal(ws_delivery_id(sf_d(sub, 0)), "order-2");
    sf_settle(sf_d(sub, 0), WS_ACK);
    assert_int_equal(sf_int(sim, "LLEN orders.processing"), 0);
    assert_int_equal(sf_int(sim, "EXISTS orders:claims"), 0);
}

/* A fresh subscription and a reclaim subscription (min-idle 100 ms) on one stream, in
 * `mode`. */
static ws_sub *with_reclaim(sf_world *w, ws_sim *sim, ws_mode mode, ws_sub **reclaim)
{
    ws_sub *sub = sf_sub(sim, WS_FORM_STREAM, mode, "orders", 0);
    ws_sub_config cfg = {.form = WS_FORM_STREAM, .mode = mode, .key = "orders",
                         .group = "g", .reclaim = 1, .min_idle_ms = 100,
                         .block_ms = 100, .name = "orders-reclaim"};
    *reclaim = sf_subscribe(sim, &cfg);
    return sub;
}

/* The redelivery after a restart: wait min-idle, reclaim, write again, ack. */
static void redeliver(sf_world *w, ws_sim *sim, ws_sub *reclaim, size_t expect)
{
    assert_int_equal(ws_sim_restart(sim), 0);
    assert_int_equal(ws_sim_advance(sim, 100), 0);
    assert_int_equal(sf_read(reclaim), expect);
    for (size_t i = 0; i < expect; i++) {
        ws_delivery *d = sf_d(reclaim, i);
        assert_int_equal(ws_delivery_count(d), 2);
        size_t len;
        const char *p = ws_delivery_payload(d, &len);
        sf_queue(d, "RPUSH picks %.*s", (int)len, p);
        sf_settle(d, WS_ACK);
    }
    assert_int_equal(sf_pending(sim, "orders", "g"), 0);
}

/* The end of the crash tests below that double the write: the redelivery writes the pick
 * a second time, and the check says "doubled". */
static void redeliver_doubled(sf_world *w, ws_sim *sim, ws_sub *reclaim)
{
    redeliver(w, sim, reclaim, 1);
    assert_int_equal(sf_int(sim, "LLEN picks"), 2);
    sf_expect_violations(w);
    assert_non_null(sf_violation(sim, "doubled"));
}

/* The opening of the crash tests below: a subscription in mode and its reclaim
 * subscription (*reclaim), order-1 read, a crash armed before the window connection sends
 * `before`, the handler's RPUSH queued, and the ack that crashes (WS_ECRASHED). */
static ws_sim *crash_before(sf_world *w, ws_mode mode, const char *before, ws_sub **reclaim)
{
    ws_sim *sim = sf_sim(w, 1);
    ws_sub *sub = with_reclaim(w, sim, mode, reclaim);
    sf_produce(sim, WS_FORM_STREAM, "orders", "order-1");
    assert_int_equal(sf_read(sub), 1);
    ws_fault f = {.kind = WS_FAULT_CRASH_BEFORE, .name = before, .nth = 1};
    assert_int_equal(ws_fault_arm(ws_sim_window(sim), &f), 0);
    sf_queue(sf_d(sub, 0), "RPUSH picks order-1");
    assert_int_equal(ws_settle(sf_d(sub, 0), WS_ACK, 0), WS_ECRASHED);
    return sim;
}

/* §7: a crash between a handler's write and its XACK leaves the write applied and the
 * entry pending; the redelivery applies it twice, and the check names the entry. */
SF_TEST(a_crash_between_a_direct_write_and_its_xack_applies_the_write_twice)
{
    ws_sim *sim = sf_sim(w, 1);
    ws_sub *reclaim;
    ws_sub *sub = with_reclaim(w, sim, WS_MODE_DIRECT, &reclaim);
    const char *id = sf_produce(sim, WS_FORM_STREAM, "orders", "order-1");
    assert_int_equal(sf_read(sub), 1);
    sf_queue(sf_d(sub, 0), "RPUSH picks order-1");
    assert_int_equal(ws_sim_crash(sim), 0);
    redeliver(w, sim, reclaim, 1);
    assert_string_equal(sf_q(sim, "LRANGE picks 0 -1"), "[\"order-1\", \"order-1\"]");
    sf_expect_violations(w);
    const ws_violation *v = sf_violation(sim, "doubled");
    assert_non_null(v);
    assert_string_equal(v->entry, id);
    assert_non_null(strstr(v->sentence, id));
    assert_non_null(strstr(v->sentence, "RPUSH picks order-1"));
}

/* The same crash, by a fault: the consumer dies before its XACK is sent. */
SF_TEST(a_direct_settle_that_crashes_before_its_xack_leaves_the_entry_pending)
{
    ws_sub *reclaim;
    ws_sim *sim = crash_before(w, WS_MODE_DIRECT, "XACK", &reclaim);
    assert_true(ws_sim_dead(sim));
    assert_int_equal(sf_pending(sim, "orders", "g"), 1);
    redeliver_doubled(w, sim, reclaim);
}

/* The plain window does not remove it: a crash inside the flush after the segment and
 * before the XACK doubles the write too. */
SF_TEST(a_plain_window_crash_between_segment_and_xack_applies_the_write_twice)
{
    ws_sub *reclaim;
    ws_sim *sim = crash_before(w, WS_MODE_WINDOW, "XACK", &reclaim);
    redeliver_doubled(w, sim, reclaim);
}

/* The atomic window removes it: the same crash point is inside MULTI, so the server
 * discards the transaction with the dead connection; the redelivery applies it once. */
SF_TEST(the_atomic_window_removes_the_doubled_effect)
{
    ws_sub *reclaim;
    ws_sim *sim = crash_before(w, WS_MODE_ATOMIC, "EXEC", &reclaim);
    assert_int_equal(sf_int(sim, "EXISTS picks"), 0);
    assert_int_equal(sf_pending(sim, "orders", "g"), 1);
    redeliver(w, sim, reclaim, 1);
    assert_string_equal(sf_q(sim, "LRANGE picks 0 -1"), "[\"order-1\"]");
    size_t n = 1;
    sf_check(sim, &n);
    assert_int_equal(n, 0);
}

SF_MAIN("sim: direct mode (§7)")
