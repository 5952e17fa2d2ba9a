/* test_sim_lists.c -- the list forms and Pub/Sub (SEMANTICS.md §2.2, §2.3): a reliable
 * list reads with one pipeline of COUNT × LMOVE into its processing list and falls back
 * to BLMOVE, settles with one LREM per delivery, retries with LPUSH then LREM, and with a
 * recovery set records each claim (ZADD) and sweeps orphans back after a crash; a plain
 * list reads with RPOP <n> and BRPOP, settles nothing; a channel buffers messages and
 * settles nothing; on both, the window still keeps a segment on ack only.
 *
 * Each test runs on the fake and, with --real, on redis-server too (sim_fixture.h). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sim_fixture.h"

/* ----- Reliable lists ---------------------------------------------------------------------- */

/* A read is one pipeline of COUNT × LMOVE <k> <k>.processing RIGHT LEFT; every non-nil
 * reply is a delivery, oldest first. */
SF_TEST(a_reliable_read_is_one_pipeline_of_lmoves)
{
    ws_sim *sim = sf_sim(w, 1);
    ws_sub *sub = sf_sub(sim, WS_FORM_RELIABLE_LIST, WS_MODE_WINDOW, "orders", 3);
    sf_produce_n(sim, WS_FORM_RELIABLE_LIST, "orders", 2);
    uint64_t rt = ws_sim_get_counts(sim).read_round_trips;
    assert_int_equal(sf_read(sub), 2);
    assert_int_equal(ws_sim_get_counts(sim).read_round_trips - rt, 1);
    assert_string_equal(ws_delivery_id(sf_d(sub, 0)), "order-1");
    assert_string_equal(ws_delivery_id(sf_d(sub, 1)), "order-2");
    assert_string_equal(sf_commands(sim, "read 1"),
                        "LMOVE orders orders.processing RIGHT LEFT\n"
                        "LMOVE orders orders.processing RIGHT LEFT\n"
                        "LMOVE orders orders.processing RIGHT LEFT\n");
    assert_string_equal(sf_q(sim, "LRANGE orders.processing 0 -1"),
                        "[\"order-2\", \"order-1\"]");
    sf_settle(sf_d(sub, 0), WS_ACK);
    sf_settle(sf_d(sub, 1), WS_DROP);
    /* One LREM per delivery, in settle order. */
    assert_string_equal(sf_commands(sim, "flush"),
                        "LREM orders.processing 1 order-1\nLREM orders.processing 1 order-2\n");
    assert_int_equal(sf_int(sim, "EXISTS orders.processing"), 0);
}

/* Nothing to move: the read falls back to BLMOVE with the block time in seconds. */
SF_TEST(an_empty_reliable_list_falls_back_to_blmove)
{
    ws_sim *sim = sf_sim(w, 1);
    ws_sub *sub = sf_sub(sim, WS_FORM_RELIABLE_LIST, WS_MODE_WINDOW, "orders", 2);
    assert_int_equal(sf_read(sub), 0);
    assert_string_equal(sf_commands(sim, "read 1"),
                        "LMOVE orders orders.processing RIGHT LEFT\n"
                        "LMOVE orders orders.processing RIGHT LEFT\n"
                        "BLMOVE orders orders.processing RIGHT LEFT 0.100\n");
}

/* A custom processing list is used for the moves and the settles. */
SF_TEST(a_reliable_list_uses_its_configured_processing_list)
{
    ws_sim *sim = sf_sim(w, 1);
    ws_sub_config cfg = sf_sub_config(sim, WS_FORM_RELIABLE_LIST, WS_MODE_WINDOW, "orders", 1);
    cfg.processing = "orders:inflight";
    ws_sub *sub = sf_subscribe(sim, &cfg);
    sf_produce_n(sim, WS_FORM_RELIABLE_LIST, "orders", 1);
    assert_int_equal(sf_read(sub), 1);
    assert_string_equal(sf_q(sim, "LRANGE orders:inflight 0 -1"), "[\"order-1\"]");
    sf_settle(sf_d(sub, 0), WS_ACK);
    assert_string_equal(sf_commands(sim, "flush"), "LREM orders:inflight 1 order-1\n");
    assert_int_equal(sf_int(sim, "EXISTS orders:inflight"), 0);
}

/* retry: LPUSH <k> <value> (in round trip 1), then LREM (round trip 2). */
SF_TEST(a_reliable_retry_pushes_the_value_back_then_removes_it)
{
    ws_sim *sim = NULL;
    ws_sub *sub = sf_orders_read(w, &sim, WS_FORM_RELIABLE_LIST, WS_MODE_WINDOW, 0, 1);
    sf_queue(sf_d(sub, 0), "RPUSH picks never");
    sf_settle(sf_d(sub, 0), WS_RETRY);
    assert_string_equal(sf_commands(sim, "flush"),
                        "LPUSH orders order-1\nLREM orders.processing 1 order-1\n");
    assert_int_equal(ws_sim_get_counts(sim).flush_round_trips, 2);
    assert_string_equal(sf_q(sim, "LRANGE orders 0 -1"), "[\"order-1\"]");
    assert_int_equal(sf_int(sim, "EXISTS orders.processing"), 0);
    assert_int_equal(sf_int(sim, "EXISTS picks"), 0);
}

/* An abandoned value stays on the processing list. */
SF_TEST(an_abandoned_value_stays_on_the_processing_list)
{
    ws_sim *sim = NULL;
    ws_sub *sub = sf_orders_read(w, &sim, WS_FORM_RELIABLE_LIST, WS_MODE_WINDOW, 0, 1);
    assert_int_equal(ws_abandon(sf_d(sub, 0)), 0);
    assert_string_equal(sf_q(sim, "LRANGE orders.processing 0 -1"), "[\"order-1\"]");
    assert_int_equal(sf_window_round_trips(sim), 0);
}

/* With a recovery set: every claimed value is recorded (ZADD <z> <now> <member>, the
 * member a salt and the value); a settle removes it (LREM + ZREM); after a crash the
 * orphan sweep before a read (ZRANGEBYSCORE <z> 0 <now-min_idle> LIMIT 0 128, LREM from
 * the processing list, LPUSH back if that removed 1, ZREM) brings the value back. */
SF_TEST(a_reliable_list_recovers_its_orphans_after_a_crash)
{
    ws_sim *sim = sf_sim(w, 1);
    ws_sub_config cfg = sf_sub_config(sim, WS_FORM_RELIABLE_LIST, WS_MODE_WINDOW, "orders", 1);
    cfg.recovery = "orders:claims";
    cfg.min_idle_ms = 100;
    ws_sub *sub = sf_subscribe(sim, &cfg);
    sf_produce_n(sim, WS_FORM_RELIABLE_LIST, "orders", 2);
    int64_t t0 = ws_sim_now(sim);
    /* Two reads of one: order-1, then order-2. */
    assert_int_equal(sf_read(sub), 1);
    ws_delivery *first = sf_d(sub, 0);
    assert_int_equal(sf_read(sub), 1);
    assert_int_equal(sf_int(sim, "ZCARD orders:claims"), 2);
    char zadd[64];
    snprintf(zadd, sizeof zadd, "ZADD orders:claims %lld ", (long long)t0);
    sf_in_order(sf_commands(sim, "read 1"), "LMOVE", zadd, NULL);
    /* order-1 settles (capacity 1: it flushes): LREM and ZREM of its member. */
    sf_settle(first, WS_ACK);
    assert_int_equal(sf_int(sim, "ZCARD orders:claims"), 1);
    assert_int_equal(ws_sim_crash(sim), 0);
    assert_int_equal(ws_sim_restart(sim), 0);
    assert_string_equal(sf_q(sim, "LRANGE orders.processing 0 -1"), "[\"order-2\"]");

    /* Too young: the sweep leaves it. */
    assert_int_equal(sf_read(sub), 0);
    assert_string_equal(sf_q(sim, "LRANGE orders.processing 0 -1"), "[\"order-2\"]");
    assert_int_equal(ws_sim_advance(sim, 100), 0);
    int64_t now = ws_sim_now(sim);
    assert_int_equal(sf_read(sub), 1);
    assert_string_equal(ws_delivery_id(sf_d(sub, 0)), "order-2");
    char range[128];
    snprintf(range, sizeof range, "ZRANGEBYSCORE orders:claims 0 %lld LIMIT 0 128\n",
             (long long)(now - 100));
    sf_in_order(sf_commands(sim, "read 4"), range, "LREM orders.processing 1 order-2\n",
                "LPUSH orders order-2\n", "ZREM orders:claims ", "LMOVE", "ZADD orders:claims",
                NULL);
    sf_settle(sf_d(sub, 0), WS_ACK);
    assert_int_equal(sf_int(sim, "EXISTS orders orders.processing orders:claims"), 0);
}

/* An orphan sweep with a min-idle of 300 ms leaves a value claimed 299 ms ago and takes
 * it back 1 ms later: the boundary, on both backends (on redis-server the waits are real,
 * and the claim times are the simulation's clock, which only ws_sim_advance moves). */
SF_TEST(an_orphan_waits_for_the_sweeps_min_idle)
{
    ws_sim *sim = sf_sim(w, 1);
    ws_sub_config cfg = sf_sub_config(sim, WS_FORM_RELIABLE_LIST, WS_MODE_WINDOW, "orders", 0);
    cfg.recovery = "orders:claims";
    cfg.min_idle_ms = 300;
    ws_sub *sub = sf_subscribe(sim, &cfg);
    sf_produce_n(sim, WS_FORM_RELIABLE_LIST, "orders", 1);
    assert_int_equal(sf_read(sub), 1);
    assert_int_equal(ws_sim_crash(sim), 0);
    assert_int_equal(ws_sim_restart(sim), 0);
    assert_int_equal(ws_sim_advance(sim, 299), 0);
    assert_int_equal(sf_read(sub), 0);
    assert_int_equal(ws_sim_advance(sim, 1), 0);
    assert_int_equal(sf_read(sub), 1);
    sf_settle(sf_d(sub, 0), WS_ACK);
    assert_int_equal(sf_int(sim, "EXISTS orders orders.processing orders:claims"), 0);
}

/* A reliable retry whose LPUSH fails is not settled: the value stays on the processing
 * list (and comes back through recovery). */
SF_TEST(a_reliable_retry_whose_lpush_fails_keeps_the_value_in_processing)
{
    ws_sim *sim = NULL;
    ws_sub *sub = sf_orders_read(w, &sim, WS_FORM_RELIABLE_LIST, WS_MODE_WINDOW, 0, 1);
    assert_int_equal(ws_fault_error_nth(ws_sim_window(sim), "LPUSH", 1, NULL), 0);
    sf_settle(sf_d(sub, 0), WS_RETRY);
    assert_int_equal(sf_count(sf_commands(sim, "flush"), "LREM"), 0);
    assert_string_equal(sf_q(sim, "LRANGE orders.processing 0 -1"), "[\"order-1\"]");
    assert_int_equal(sf_int(sim, "EXISTS orders"), 0);
    assert_int_equal(sf_read_report(sub).failed, 1);
}

/* An atomic reliable list with recovery settles with LREM and ZREM inside the block. */
SF_TEST(an_atomic_reliable_list_with_recovery_settles_inside_the_block)
{
    ws_sim *sim = sf_sim(w, 1);
    ws_sub_config cfg = sf_sub_config(sim, WS_FORM_RELIABLE_LIST, WS_MODE_ATOMIC, "orders", 0);
    cfg.recovery = "orders:claims";
    cfg.min_idle_ms = 100;
    ws_sub *sub = sf_subscribe(sim, &cfg);
    sf_produce_n(sim, WS_FORM_RELIABLE_LIST, "orders", 1);
    assert_int_equal(sf_read(sub), 1);
    sf_queue(sf_d(sub, 0), "RPUSH picks a");
    sf_settle(sf_d(sub, 0), WS_ACK);
    sf_in_order(sf_commands(sim, "flush"), "MULTI\n", "RPUSH picks a\n",
                "LREM orders.processing 1 order-1\n", "ZREM orders:claims ", "EXEC\n", NULL);
    assert_int_equal(sf_int(sim, "EXISTS orders.processing orders:claims"), 0);
}

/* ----- Plain lists ---------------------------------------------------------------------------- */

/* A plain list reads with RPOP <k> <n>, falls back to BRPOP, and settles nothing; the
 * window still sends an acked segment and drops a dropped one. */
SF_TEST(a_plain_list_reads_with_rpop_and_settles_nothing)
{
    ws_sim *sim = NULL;
    ws_sub *sub = sf_orders_read(w, &sim, WS_FORM_PLAIN_LIST, WS_MODE_WINDOW, 5, 2);
    assert_string_equal(sf_commands(sim, "read 1"), "RPOP orders 5\n");
    assert_int_equal(sf_int(sim, "EXISTS orders"), 0);
    sf_queue(sf_d(sub, 0), "RPUSH picks a");
    sf_settle(sf_d(sub, 0), WS_ACK);
    sf_queue(sf_d(sub, 1), "RPUSH picks b");
    sf_settle(sf_d(sub, 1), WS_DROP);
    assert_string_equal(sf_commands(sim, "flush"), "RPUSH picks a\n");
    assert_string_equal(sf_q(sim, "LRANGE picks 0 -1"), "[\"a\"]");
    assert_int_equal(sf_read(sub), 0);
    assert_string_equal(sf_commands(sim, "read 2"), "RPOP orders 5\nBRPOP orders 0.100\n");
}

/* ----- Channels ---------------------------------------------------------------------------------- */

/* SUBSCRIBE at once; messages are buffered as they come and handed out by reads; acked
 * events send what they queued, dropped ones nothing; no settles. */
SF_TEST(a_channel_buffers_messages_and_settles_nothing)
{
    ws_sim *sim = sf_sim(w, 1);
    ws_sub *sub = sf_sub(sim, WS_FORM_CHANNEL, WS_MODE_ATOMIC, "events", 0);
    assert_non_null(strstr(sf_commands(sim, NULL), "SUBSCRIBE events\n"));
    sf_produce(sim, WS_FORM_CHANNEL, "events", "e-1");
    sf_produce(sim, WS_FORM_CHANNEL, "events", "e-2");
    assert_int_equal(sf_read(sub), 2);
    sf_queue(sf_d(sub, 0), "RPUSH seen e-1");
    sf_settle(sf_d(sub, 0), WS_ACK);
    sf_queue(sf_d(sub, 1), "RPUSH seen e-2");
    sf_settle(sf_d(sub, 1), WS_DROP);
    assert_string_equal(sf_commands(sim, "flush"), "MULTI\nRPUSH seen e-1\nEXEC\n");
    assert_string_equal(sf_q(sim, "LRANGE seen 0 -1"), "[\"e-1\"]");
}

/* §3's `waiting`, as the framework sets it (pubsub.rs round_stream @ 0010e47:
 * window.yielded(rx.len()) when a message is handed out): a read that leaves a message
 * buffered behind the ones it hands out holds the "nothing outstanding" flush back; a
 * message that arrives while the handlers run does not (fake only: on a server when a
 * message reaches the subscriber socket is a race). */
SF_TEST(a_channel_window_waits_while_messages_are_buffered)
{
    if (sf_fake_only(w, "Pub/Sub arrival times are the server's")) return;
    ws_sim *sim = sf_sim(w, 1);
    ws_sub *sub = sf_sub(sim, WS_FORM_CHANNEL, WS_MODE_WINDOW, "events", 2);
    sf_produce(sim, WS_FORM_CHANNEL, "events", "e-1");
    sf_produce(sim, WS_FORM_CHANNEL, "events", "e-2");
    sf_produce(sim, WS_FORM_CHANNEL, "events", "e-3");
    assert_int_equal(sf_read(sub), 2); /* COUNT 2: e-3 stays behind, waiting 1 */
    ws_delivery *first = sf_d(sub, 0);
    assert_int_equal(ws_abandon(sf_d(sub, 1)), 0); /* an abandon settles nothing */
    sf_queue(first, "RPUSH seen e-1");
    sf_settle(first, WS_ACK); /* settled 1 < 2, outstanding 0, but waiting 1 */
    assert_int_equal(ws_sim_get_counts(sim).flushes, 0);
    assert_int_equal(sf_read(sub), 1); /* e-3: waiting 0 */
    sf_produce(sim, WS_FORM_CHANNEL, "events", "e-4"); /* arrives while e-3's handler runs */
    sf_queue(sf_d(sub, 0), "RPUSH seen e-3");
    sf_settle(sf_d(sub, 0), WS_ACK); /* settled 2: capacity */
    assert_int_equal(ws_sim_get_counts(sim).flushes, 1);
    assert_string_equal(sf_commands(sim, "flush"), "RPUSH seen e-1\nRPUSH seen e-3\n");
    assert_int_equal(sf_read(sub), 1); /* e-4 */
    sf_queue(sf_d(sub, 0), "RPUSH seen e-4");
    sf_produce(sim, WS_FORM_CHANNEL, "events", "e-5"); /* after the read: not waiting */
    sf_settle(sf_d(sub, 0), WS_ACK); /* outstanding 0, waiting 0: nothing outstanding */
    assert_int_equal(ws_sim_get_counts(sim).flushes, 2);
    assert_string_equal(sf_q(sim, "LRANGE seen 0 -1"), "[\"e-1\", \"e-3\", \"e-4\"]");
}

/* The subscriber's buffer (pubsub.rs round_stream @ 0010e47: RecvError::Lagged, the gap
 * skipped): fred's broadcast channel holds 32 unread messages by default, so a read that
 * finds 35 skips the 3 oldest, counts them and warns; what it leaves behind counts against
 * the buffer at the next read. */
SF_TEST(a_channel_subscriber_behind_its_buffer_skips_the_oldest)
{
    ws_sim *sim = sf_sim(w, 1);
    ws_sub *sub = sf_sub(sim, WS_FORM_CHANNEL, WS_MODE_WINDOW, "events", 64);
    char payload[32];
    for (int i = 1; i <= 35; i++) {
        snprintf(payload, sizeof payload, "e-%d", i);
        sf_produce(sim, WS_FORM_CHANNEL, "events", payload);
    }
    assert_int_equal(sf_read(sub), 32);
    size_t len;
    assert_memory_equal(ws_delivery_payload(sf_d(sub, 0), &len), "e-4", 3);
    assert_int_equal(ws_sim_get_counts(sim).skipped, 3);
    assert_int_equal(ws_sim_warning_count(sim), 1);
    assert_non_null(strstr(ws_sim_warning(sim, 0), "read 1 of events skips 3 messages"));
    for (size_t i = 0; i < 32; i++) sf_settle(sf_d(sub, i), WS_ACK);
    /* a buffer of 1, COUNT 1: two unread at the next read, one skipped */
    ws_sub_config cfg = sf_sub_config(sim, WS_FORM_CHANNEL, WS_MODE_WINDOW, "alerts", 1);
    cfg.buffer = 1;
    ws_sub *small = sf_subscribe(sim, &cfg);
    sf_produce(sim, WS_FORM_CHANNEL, "alerts", "a-1");
    sf_produce(sim, WS_FORM_CHANNEL, "alerts", "a-2");
    assert_int_equal(sf_read(small), 1);
    assert_memory_equal(ws_delivery_payload(sf_d(small, 0), &len), "a-2", 3);
    assert_int_equal(ws_sim_get_counts(sim).skipped, 4);
    sf_settle(sf_d(small, 0), WS_ACK);
    /* a buffer that is not a power of two, or on another form, is refused */
    cfg.buffer = 3;
    assert_null(ws_subscribe(sim, &cfg));
    ws_sub_config list = sf_sub_config(sim, WS_FORM_PLAIN_LIST, WS_MODE_WINDOW, "jobs", 1);
    list.buffer = 2;
    assert_null(ws_subscribe(sim, &list));
}

/* PSUBSCRIBE with `pattern`; a message's id is the message. */
SF_TEST(a_pattern_subscription_receives_matching_channels)
{
    ws_sim *sim = sf_sim(w, 1);
    ws_sub_config cfg = sf_sub_config(sim, WS_FORM_CHANNEL, WS_MODE_WINDOW, "events.*", 0);
    cfg.pattern = 1;
    ws_sub *sub = sf_subscribe(sim, &cfg);
    assert_non_null(strstr(sf_commands(sim, NULL), "PSUBSCRIBE events.*\n"));
    sf_produce(sim, WS_FORM_CHANNEL, "events.a", "e-1");
    sf_produce(sim, WS_FORM_CHANNEL, "other", "x");
    sf_produce(sim, WS_FORM_CHANNEL, "events.b", "e-2");
    assert_int_equal(sf_read(sub), 2);
    assert_string_equal(ws_delivery_id(sf_d(sub, 0)), "e-1");
    assert_string_equal(ws_delivery_id(sf_d(sub, 1)), "e-2");
    sf_settle(sf_d(sub, 0), WS_ACK);
    sf_settle(sf_d(sub, 1), WS_ACK);
}

SF_MAIN("sim: lists and channels (§2.2, §2.3)")
