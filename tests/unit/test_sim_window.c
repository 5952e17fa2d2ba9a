/* test_sim_window.c -- the window of SEMANTICS.md §3 and the framework's own window tests
 * of §9, on every form where they apply: what leaves with an ack, what a drop, a retry
 * or an abandon leaves behind, commit order, the three flush triggers, the flush layout
 * (segments, then retry writes, then one XACK) and its round trips, stale handles, and
 * whole windows of 20 orders.
 *
 * Each test runs on the fake and, with --real, on redis-server too (sim_fixture.h). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sim_fixture.h"

/* ----- §9, one test each ---------------------------------------------------------------- */

/* An acked delivery's queued LPUSH is applied once, and the delivery is settled. */
SF_TEST_FORMS(a_queued_command_leaves_with_the_ack)
{
    ws_sim *sim = NULL;
    ws_sub *sub = sf_orders_read(w, &sim, form, WS_MODE_WINDOW, 0, 1);
    ws_delivery *d = sf_d(sub, 0);
    sf_queue(d, "LPUSH picks sku-1");
    /* Queued, not sent: nothing has reached the server yet. */
    assert_int_equal(sf_int(sim, "LLEN picks"), 0);
    sf_settle(d, WS_ACK);
    assert_string_equal(sf_q(sim, "LRANGE picks 0 -1"), "[\"sku-1\"]");
    assert_int_equal(sf_unsettled(sim, form, "orders"), 0);
}

/* A dropped delivery's queued write never happens; the drop still settles it. */
SF_TEST_FORMS(a_dropped_delivery_leaves_nothing_it_queued)
{
    ws_sim *sim = NULL;
    ws_sub *sub = sf_orders_read(w, &sim, form, WS_MODE_WINDOW, 0, 1);
    ws_delivery *d = sf_d(sub, 0);
    sf_queue(d, "LPUSH picks sku-1");
    sf_settle(d, WS_DROP);
    assert_int_equal(sf_int(sim, "EXISTS picks"), 0);
    assert_int_equal(sf_unsettled(sim, form, "orders"), 0);
    /* The flush carried the settle only. */
    assert_int_equal(sf_count(sf_commands(sim, "flush"), "LPUSH picks"), 0);
}

/* The first delivery retries; its copy is handled again and acked: the handler ran twice,
 * the write was applied once.  Undeclared, the retry is the broker's requeue: a stream
 * re-adds the entry verbatim (a new id, the counter not raised), a reliable list pushes the
 * value back as it was.  With max-attempts declared it is the runtime's copy, the counter
 * raised (a reliable list's copy is re-framed). */
static void retried_once(sf_world *w, ws_form form, unsigned max_attempts)
{
    ws_sim *sim = sf_sim(w, 1);
    ws_sub_config cfg = sf_sub_config(sim, form, WS_MODE_WINDOW, "orders", 0);
    cfg.max_attempts = max_attempts;
    ws_sub *sub = sf_subscribe(sim, &cfg);
    sf_produce(sim, form, "orders", "order-1");
    assert_int_equal(sf_read(sub), 1);
    ws_delivery *first = sf_d(sub, 0);
    assert_int_equal(ws_delivery_retries(first), 0);
    sf_queue(first, "LPUSH picks sku-1");
    sf_settle(first, WS_RETRY);
    assert_int_equal(sf_int(sim, "EXISTS picks"), 0);

    assert_int_equal(sf_read(sub), 1);
    ws_delivery *again = sf_d(sub, 0);
    size_t len = 0;
    assert_memory_equal(ws_delivery_payload(again, &len), "order-1", 7);
    assert_int_equal(len, 7);
    if (max_attempts) {
        assert_int_equal(ws_delivery_retries(again), 1);
        assert_string_equal(ws_delivery_header(again, "x-ruststream-retry-count", NULL), "1");
    } else {
        assert_int_equal(ws_delivery_retries(again), 0);
        assert_null(ws_delivery_header(again, "x-ruststream-retry-count", NULL));
    }
    if (form == WS_FORM_STREAM || max_attempts)
        assert_string_not_equal(ws_delivery_id(again), ws_delivery_id(first));
    else
        assert_string_equal(ws_delivery_id(again), ws_delivery_id(first)); /* the value */
    sf_queue(again, "LPUSH picks sku-1");
    sf_settle(again, WS_ACK);
    assert_string_equal(sf_q(sim, "LRANGE picks 0 -1"), "[\"sku-1\"]");
    assert_int_equal(sf_unsettled(sim, form, "orders"), 0);
    if (form == WS_FORM_RELIABLE_LIST) assert_int_equal(sf_int(sim, "LLEN orders"), 0);
}

SF_TEST_SETTLING(a_retried_delivery_leaves_only_what_its_acknowledged_redelivery_queued)
{
    retried_once(w, form, 0);
}

SF_TEST_SETTLING(a_declared_retry_leaves_only_what_its_acknowledged_copy_queued)
{
    retried_once(w, form, 3);
}

/* Five deliveries, the third dropped: five handler runs, four writes. */
SF_TEST_FORMS(every_acknowledged_delivery_of_a_window_leaves)
{
    ws_sim *sim = NULL;
    ws_sub *sub = sf_orders_read(w, &sim, form, WS_MODE_WINDOW, 0, 5);
    for (size_t i = 0; i < 5; i++) {
        ws_delivery *d = sf_d(sub, i);
        size_t len;
        const char *p = ws_delivery_payload(d, &len);
        sf_queue(d, "RPUSH picks %.*s", (int)len, p);
        sf_settle(d, i == 2 ? WS_DROP : WS_ACK);
    }
    assert_string_equal(sf_q(sim, "LRANGE picks 0 -1"),
                        "[\"order-1\", \"order-2\", \"order-4\", \"order-5\"]");
    assert_int_equal(sf_unsettled(sim, form, "orders"), 0);
    /* One window, one flush, one round trip. */
    ws_sim_counts c = ws_sim_get_counts(sim);
    assert_int_equal(c.flushes, 1);
    assert_int_equal(c.flush_round_trips, 1);
}

/* A delivery that queues nothing has no segment: the flush is its plain settle. */
SF_TEST_FORMS(a_delivery_that_queues_nothing_settles_as_before)
{
    ws_sim *sim = sf_sim(w, 1);
    ws_sub *sub = sf_sub(sim, form, WS_MODE_WINDOW, "orders", 0);
    const char *id = sf_produce(sim, form, "orders", "order-1");
    assert_int_equal(sf_read(sub), 1);
    sf_settle(sf_d(sub, 0), WS_ACK);
    assert_int_equal(sf_unsettled(sim, form, "orders"), 0);
    char want[256];
    if (form == WS_FORM_STREAM) {
        snprintf(want, sizeof want, "XACK orders g %s\n", id);
        assert_string_equal(sf_commands(sim, "flush"), want);
    } else if (form == WS_FORM_RELIABLE_LIST) {
        assert_string_equal(sf_commands(sim, "flush"), "LREM orders.processing 1 order-1\n");
    } else {
        /* Nothing owed and nothing committed: no flush round trip at all. */
        assert_int_equal(ws_sim_get_counts(sim).flush_round_trips, 0);
        assert_int_equal(sf_window_round_trips(sim), 0);
    }
}

/* Two entries, one acked, one abandoned (its handler died): the abandon leaves nothing
 * outstanding, so the window flushes the ack; the abandoned entry stays pending. */
SF_TEST_SETTLING(a_delivery_dropped_on_another_runtime_flushes_what_its_window_owes)
{
    ws_sim *sim = NULL;
    ws_sub *sub = sf_orders_read(w, &sim, form, WS_MODE_WINDOW, 0, 2);
    ws_delivery *acked = sf_d(sub, 0), *lost = sf_d(sub, 1);
    sf_queue(acked, "LPUSH picks sku-1");
    sf_settle(acked, WS_ACK);
    assert_int_equal(ws_abandon(lost), 0);
    assert_string_equal(sf_q(sim, "LRANGE picks 0 -1"), "[\"sku-1\"]");
    assert_int_equal(sf_unsettled(sim, form, "orders"), 1);
    if (form == WS_FORM_STREAM) {
        char want[128];
        snprintf(want, sizeof want, "[[\"%s\", ", ws_delivery_id(lost));
        assert_non_null(strstr(sf_q(sim, "XPENDING orders g - + 10"), want));
    } else {
        assert_string_equal(sf_q(sim, "LRANGE orders.processing 0 -1"), "[\"order-2\"]");
    }
}

/* One acked, one held, the subscription stops: the stop flushes the ack; the held entry
 * stays pending and can no longer be settled. */
SF_TEST_SETTLING(a_subscription_dropped_off_any_runtime_flushes_what_its_window_owes)
{
    ws_sim *sim = NULL;
    ws_sub *sub = sf_orders_read(w, &sim, form, WS_MODE_WINDOW, 0, 2);
    ws_delivery *acked = sf_d(sub, 0), *held = sf_d(sub, 1);
    sf_queue(acked, "LPUSH picks sku-1");
    sf_settle(acked, WS_ACK);
    /* Still outstanding: the window waits. */
    assert_int_equal(sf_int(sim, "EXISTS picks"), 0);
    assert_int_equal(ws_stop(sub), 0);
    assert_string_equal(sf_q(sim, "LRANGE picks 0 -1"), "[\"sku-1\"]");
    assert_int_equal(sf_unsettled(sim, form, "orders"), 1);
    ws_read_result res;
    assert_int_equal(ws_read(sub, &res), WS_ESTATE);
    assert_int_equal(ws_settle(held, WS_ACK, 0), WS_ESTATE);
    assert_int_equal(ws_stop(sub), WS_ESTATE);
    assert_int_equal(sf_unsettled(sim, form, "orders"), 1);
}

/* A handle kept after its delivery settled is refused (WS_ESTALE, a sentence naming the
 * delivery); the next delivery on the same slot gets its own segment. */
SF_TEST_FORMS(a_round_kept_past_its_delivery_joins_no_later_one)
{
    ws_sim *sim = sf_sim(w, 1);
    ws_sub *sub = sf_sub(sim, form, WS_MODE_WINDOW, "orders", 1);
    sf_produce_n(sim, form, "orders", 2);
    assert_int_equal(sf_read(sub), 1);
    ws_delivery *old = sf_d(sub, 0);
    sf_queue(old, "RPUSH picks a");
    sf_settle(old, WS_ACK);
    assert_true(ws_delivery_done(old));

    assert_int_equal(sf_read(sub), 1);
    ws_delivery *next = sf_d(sub, 0);
    assert_int_equal(ws_delivery_slot(next), ws_delivery_slot(old));
    assert_int_not_equal(ws_delivery_generation(next), ws_delivery_generation(old));
    assert_int_equal(ws_queue_line(old, "RPUSH picks stale"), WS_ESTALE);
    assert_int_equal(ws_sim_err(sim), WS_ESTALE);
    assert_non_null(strstr(ws_sim_errstr(sim), ws_delivery_id(old)));
    sf_queue(next, "RPUSH picks b");
    /* The stale handle's queue did not become next's: next drops, nothing leaves. */
    sf_settle(next, WS_DROP);
    assert_string_equal(sf_q(sim, "LRANGE picks 0 -1"), "[\"a\"]");
    assert_int_equal(sf_unsettled(sim, form, "orders"), 0);
}

/* One acked (committed, not flushed while another is outstanding), the last abandoned:
 * the flush goes out. */
SF_TEST_SETTLING(the_last_delivery_abandoned_flushes_what_the_others_settled)
{
    ws_sim *sim = NULL;
    ws_sub *sub = sf_orders_read(w, &sim, form, WS_MODE_WINDOW, 0, 2);
    sf_queue(sf_d(sub, 0), "LPUSH picks sku-1");
    sf_settle(sf_d(sub, 0), WS_ACK);
    assert_int_equal(ws_sim_get_counts(sim).flushes, 0);
    assert_int_equal(sf_int(sim, "EXISTS picks"), 0);
    assert_int_equal(ws_abandon(sf_d(sub, 1)), 0);
    assert_int_equal(ws_sim_get_counts(sim).flushes, 1);
    assert_string_equal(sf_q(sim, "LRANGE picks 0 -1"), "[\"sku-1\"]");
    assert_int_equal(sf_unsettled(sim, form, "orders"), 1);
}

/* ----- Commit order, triggers, abandon ---------------------------------------------------- */

/* Commit order is completion order: three deliveries settled in reverse read order leave
 * their segments in that order, and the XACK lists their ids in settle order. */
SF_TEST(commit_order_is_completion_order)
{
    ws_sim *sim = NULL;
    ws_sub *sub = sf_orders_read(w, &sim, WS_FORM_STREAM, WS_MODE_WINDOW, 0, 3);
    for (size_t i = 0; i < 3; i++) sf_queue(sf_d(sub, i), "RPUSH done order-%zu", i + 1);
    for (size_t i = 3; i-- > 0;) sf_settle(sf_d(sub, i), WS_ACK);
    assert_string_equal(sf_q(sim, "LRANGE done 0 -1"),
                        "[\"order-3\", \"order-2\", \"order-1\"]");
    char want[512];
    snprintf(want, sizeof want,
             "RPUSH done order-3\nRPUSH done order-2\nRPUSH done order-1\nXACK orders g %s %s %s\n",
             ws_delivery_id(sf_d(sub, 2)), ws_delivery_id(sf_d(sub, 1)),
             ws_delivery_id(sf_d(sub, 0)));
    assert_string_equal(sf_commands(sim, "flush"), want);
    ws_sim_counts c = ws_sim_get_counts(sim);
    assert_int_equal(c.flushes, 1);
    assert_int_equal(c.flush_round_trips, 1);
}

/* Trigger 1, capacity: with COUNT 2, two settles flush even while a later read's
 * delivery is still outstanding. */
SF_TEST(a_window_flushes_when_the_settled_reach_capacity)
{
    ws_sim *sim = sf_sim(w, 1);
    ws_sub *sub = sf_sub(sim, WS_FORM_STREAM, WS_MODE_WINDOW, "orders", 2);
    sf_produce_n(sim, WS_FORM_STREAM, "orders", 3);
    assert_int_equal(sf_read(sub), 2);
    ws_delivery *a = sf_d(sub, 0), *b = sf_d(sub, 1);
    assert_int_equal(sf_read(sub), 1);
    ws_delivery *c = sf_d(sub, 0);
    sf_settle(a, WS_ACK);
    assert_int_equal(ws_sim_get_counts(sim).flushes, 0);
    sf_settle(b, WS_ACK);
    assert_int_equal(ws_sim_get_counts(sim).flushes, 1);
    assert_int_equal(sf_pending(sim, "orders", "g"), 1);
    /* The last one: one settled, below capacity, but nothing outstanding. */
    sf_settle(c, WS_ACK);
    assert_int_equal(ws_sim_get_counts(sim).flushes, 2);
    assert_int_equal(sf_pending(sim, "orders", "g"), 0);
}

/* Trigger 2, nothing outstanding: below capacity, the window waits for the last
 * outstanding delivery, then flushes once. */
SF_TEST(a_window_flushes_when_nothing_is_outstanding)
{
    ws_sim *sim = NULL;
    ws_sub *sub = sf_orders_read(w, &sim, WS_FORM_STREAM, WS_MODE_WINDOW, 0, 2);
    uint64_t before = sf_window_round_trips(sim);
    sf_settle(sf_d(sub, 0), WS_ACK);
    assert_int_equal(sf_window_round_trips(sim), before);
    assert_int_equal(sf_pending(sim, "orders", "g"), 2);
    sf_settle(sf_d(sub, 1), WS_ACK);
    assert_int_equal(sf_window_round_trips(sim), before + 1);
    assert_int_equal(sf_pending(sim, "orders", "g"), 0);
}

/* Trigger 3, stop: see a_subscription_dropped_off_any_runtime_flushes_what_its_window_owes;
 * here a stop with nothing owed sends nothing. */
SF_TEST(a_stop_with_nothing_owed_sends_nothing)
{
    ws_sim *sim = NULL;
    ws_sub *sub = sf_orders_read(w, &sim, WS_FORM_STREAM, WS_MODE_WINDOW, 0, 1);
    uint64_t before = sf_window_round_trips(sim); /* 1: the subscription made its group */
    assert_int_equal(ws_stop(sub), 0);
    assert_int_equal(sf_window_round_trips(sim), before);
    assert_int_equal(ws_sim_get_counts(sim).flushes, 0);
    assert_int_equal(sf_pending(sim, "orders", "g"), 1);
}

/* ws_sim_shutdown, the framework's graceful stop (source.rs: a dropped subscription
 * spawns window.drain(); run.rs does not await the detached copies): every window is
 * flushed with why "shutdown" -- what an ack queued and the owed XACKs leave although a
 * delivery is still outstanding -- then the process ends like a crash: the outstanding
 * entry stays pending, and the timer of a retry_after's copy dies with it, so that entry
 * is lost.  A second shutdown finds the process dead. */
SF_TEST(a_shutdown_drains_the_window_and_drops_the_timers)
{
    ws_sim *sim = NULL;
    ws_sub *sub = sf_orders_read(w, &sim, WS_FORM_STREAM, WS_MODE_WINDOW, 0, 3);
    ws_delivery *acked = sf_d(sub, 0), *later = sf_d(sub, 1);
    sf_queue(acked, "INCR seen");
    sf_settle(acked, WS_ACK);
    int64_t d = 200; /* the same on both backends: the check's sentence names it */
    assert_int_equal(ws_settle(later, WS_RETRY_AFTER, d), 0);
    assert_int_equal(ws_sim_get_counts(sim).flushes, 0); /* the third is outstanding */
    assert_int_equal(ws_sim_shutdown(sim), 0);
    assert_true(ws_sim_dead(sim));
    char xack[160];
    snprintf(xack, sizeof xack, "INCR seen\nXACK orders g %s %s\n", ws_delivery_id(acked),
             ws_delivery_id(later));
    assert_string_equal(sf_commands(sim, "flush"), xack);
    const char *trace = sf_trace(sim);
    sf_in_order(trace, "-- the consumer process 1 shuts down: its windows drain\n",
                "-- orders: flush 1 (shutdown)", "-- 1 delayed copy dies with the process\n",
                "-- the consumer process 1 stopped: graceful shutdown at ", NULL);
    assert_string_equal(sf_q(sim, "GET seen"), "\"1\"");
    assert_int_equal(sf_pending(sim, "orders", "g"), 1);
    assert_int_equal(ws_sim_shutdown(sim), WS_EDEAD);
    ws_read_result res;
    assert_int_equal(ws_read(sub, &res), WS_EDEAD);
    assert_int_equal(ws_sim_advance(sim, 2 * d), 0);
    assert_int_equal(sf_int(sim, "XLEN orders"), 3); /* no copy */
    assert_int_equal(ws_sim_restart(sim), 0);
    assert_int_equal(sf_read(sub), 0);
    sf_expect_violations(w);
    const ws_violation *v = sf_only_violation(sim, "lost", ws_delivery_id(later));
    assert_non_null(strstr(v->sentence, "graceful shutdown"));
}

/* ws_sim_shutdown_drains_lost: the same stop when the detached drains lose their race with
 * the pool's QUIT (source.rs Drop spawns window.drain() on a task nothing awaits; app/run.rs
 * then shuts the brokers down): nothing the window owed leaves -- neither the acked entry's
 * XACK nor the command its handler queued -- and both entries stay pending for a reclaim. */
SF_TEST(a_shutdown_whose_drains_lose_the_race_sends_nothing)
{
    ws_sim *sim = NULL;
    ws_sub *sub = sf_orders_read(w, &sim, WS_FORM_STREAM, WS_MODE_WINDOW, 0, 2);
    ws_delivery *acked = sf_d(sub, 0);
    sf_queue(acked, "INCR seen");
    sf_settle(acked, WS_ACK);
    assert_int_equal(ws_sim_get_counts(sim).flushes, 0); /* the second is outstanding */
    assert_int_equal(ws_sim_shutdown_drains_lost(sim), 0);
    assert_true(ws_sim_dead(sim));
    assert_string_equal(sf_commands(sim, "flush"), "");
    sf_in_order(sf_trace(sim), "windows' drains lose the race with the pool's QUIT",
                "-- the consumer process 1 stopped: graceful shutdown at ", NULL);
    assert_int_equal(sf_int(sim, "EXISTS seen"), 0);
    assert_int_equal(sf_pending(sim, "orders", "g"), 2);
    assert_int_equal(ws_sim_shutdown_drains_lost(sim), WS_EDEAD);
}

/* The abandon rule: an abandon does not count as settled and flushes only when something
 * is owed and nothing is outstanding. */
SF_TEST(an_abandon_flushes_only_what_is_owed)
{
    ws_sim *sim = sf_sim(w, 1);
    ws_sub *sub = sf_sub(sim, WS_FORM_STREAM, WS_MODE_WINDOW, "orders", 2);
    sf_produce_n(sim, WS_FORM_STREAM, "orders", 4);
    uint64_t before = sf_window_round_trips(sim); /* 1: the subscription made its group */
    /* Read 1: both abandoned, nothing owed: no flush, no round trip. */
    assert_int_equal(sf_read(sub), 2);
    sf_queue(sf_d(sub, 0), "LPUSH picks never");
    assert_int_equal(ws_abandon(sf_d(sub, 0)), 0);
    assert_int_equal(ws_abandon(sf_d(sub, 1)), 0);
    assert_int_equal(sf_window_round_trips(sim), before);
    assert_int_equal(ws_sim_get_counts(sim).flushes, 0);
    /* Read 2: one abandoned while the other is outstanding (no flush), then the other
     * acks: settled 1 < capacity 2, but nothing outstanding: one flush of one XACK. */
    assert_int_equal(sf_read(sub), 2);
    assert_int_equal(ws_abandon(sf_d(sub, 0)), 0);
    assert_int_equal(ws_sim_get_counts(sim).flushes, 0);
    sf_settle(sf_d(sub, 1), WS_ACK);
    assert_int_equal(ws_sim_get_counts(sim).flushes, 1);
    char want[128];
    snprintf(want, sizeof want, "XACK orders g %s\n", ws_delivery_id(sf_d(sub, 1)));
    assert_string_equal(sf_commands(sim, "flush"), want);
    assert_int_equal(sf_pending(sim, "orders", "g"), 3);
    assert_int_equal(sf_int(sim, "EXISTS picks"), 0);
    /* An abandoned handle is stale. */
    assert_int_equal(ws_settle(sf_d(sub, 0), WS_ACK, 0), WS_ESTALE);
}

/* ----- The flush layout -------------------------------------------------------------------- */

/* Without retries a flush is one round trip: every segment and the XACK leave together. */
SF_TEST(a_flush_without_retries_is_one_round_trip)
{
    ws_sim *sim = NULL;
    ws_sub *sub = sf_orders_read(w, &sim, WS_FORM_STREAM, WS_MODE_WINDOW, 0, 3);
    ws_sim_counts before = ws_sim_get_counts(sim);
    uint64_t rt = sf_window_round_trips(sim);
    for (size_t i = 0; i < 3; i++) {
        sf_queue(sf_d(sub, i), "INCR seen");
        sf_queue(sf_d(sub, i), "RPUSH picks %zu", i);
        sf_settle(sf_d(sub, i), i == 1 ? WS_DROP : WS_ACK);
    }
    ws_sim_counts after = ws_sim_get_counts(sim);
    assert_int_equal(after.flush_round_trips - before.flush_round_trips, 1);
    assert_int_equal(after.round_trips - before.round_trips, 1);
    assert_int_equal(sf_window_round_trips(sim) - rt, 1);
    assert_string_equal(sf_q(sim, "GET seen"), "\"2\"");
}

/* With retries: segments in commit order and the retry writes in settle order leave in
 * round trip 1; their replies are awaited; round trip 2 is ONE XACK listing the ids of
 * deliveries that wrote nothing first (settle order), then the retried ones.  The retry
 * writes are the broker's requeue: each entry verbatim. */
SF_TEST(a_flush_with_retries_sends_segments_then_retry_writes_then_one_xack)
{
    ws_sim *sim = NULL;
    ws_sub *sub = sf_orders_read(w, &sim, WS_FORM_STREAM, WS_MODE_WINDOW, 0, 5);
    ws_delivery *d[5];
    for (size_t i = 0; i < 5; i++) d[i] = sf_d(sub, i);
    uint64_t rt = sf_window_round_trips(sim);
    sf_queue(d[0], "RPUSH picks never-0");
    sf_settle(d[0], WS_RETRY);
    sf_queue(d[1], "RPUSH picks kept-1");
    sf_settle(d[1], WS_ACK);
    sf_queue(d[2], "RPUSH picks never-2");
    sf_settle(d[2], WS_DROP);
    sf_settle(d[3], WS_RETRY);
    sf_queue(d[4], "RPUSH picks kept-4");
    sf_settle(d[4], WS_ACK);

    const char *flush = sf_commands(sim, "flush");
    char xack[512];
    snprintf(xack, sizeof xack, "XACK orders g %s %s %s %s %s\n", ws_delivery_id(d[1]),
             ws_delivery_id(d[2]), ws_delivery_id(d[4]), ws_delivery_id(d[0]),
             ws_delivery_id(d[3]));
    sf_in_order(flush, "RPUSH picks kept-1\n", "RPUSH picks kept-4\n",
                "XADD orders * _payload order-1\n", "XADD orders * _payload order-4\n", xack,
                NULL);
    assert_int_equal(sf_count(flush, "x-ruststream-retry-count"), 0);
    assert_int_equal(sf_count(flush, "XACK"), 1);
    assert_int_equal(sf_count(flush, "never"), 0);
    /* The same through ws_sub_flush_command: which round trip, which delivery. */
    assert_int_equal(ws_sub_flushes(sub), 1);
    const ws_delivery *from[] = {d[1], d[4], d[0], d[3], NULL};
    const size_t rts[] = {1, 1, 1, 1, 2};
    ws_flush_command fc;
    for (size_t i = 0; i < 5; i++) {
        assert_int_equal(ws_sub_flush_command(sub, 1, i, &fc), 0);
        assert_int_equal(fc.round_trip, rts[i]);
        assert_ptr_equal(fc.from, from[i]);
    }
    assert_int_equal(ws_sub_flush_command(sub, 1, 5, &fc), -1);
    ws_sim_counts c = ws_sim_get_counts(sim);
    assert_int_equal(c.flushes, 1);
    assert_int_equal(c.flush_round_trips, 2);
    assert_int_equal(sf_window_round_trips(sim) - rt, 2);
    assert_string_equal(sf_q(sim, "LRANGE picks 0 -1"), "[\"kept-1\", \"kept-4\"]");
    assert_int_equal(sf_pending(sim, "orders", "g"), 0);
    assert_int_equal(sf_int(sim, "XLEN orders"), 7);
}

/* The flush records as data (ws_sim_flush and friends, what `wsim diagram --format svg`
 * draws): the seed page "Window"'s flush -- ack, drop, ack -- and its atomic twin. */
SF_TEST(the_flush_records_say_what_the_diagram_says)
{
    for (int atomic = 0; atomic <= 1; atomic++) {
        ws_sim *sim = sf_sim(w, 1);
        ws_sub *sub = sf_sub(sim, WS_FORM_STREAM, atomic ? WS_MODE_ATOMIC : WS_MODE_WINDOW,
                             "orders", 0);
        sf_produce_n(sim, WS_FORM_STREAM, "orders", 3);
        assert_int_equal(ws_sim_flush_count(sim), 0);
        assert_int_equal(sf_read(sub), 3);
        ws_delivery *d[3];
        for (size_t i = 0; i < 3; i++) d[i] = sf_d(sub, i);
        sf_queue(d[0], "INCR c1");
        sf_settle(d[0], WS_ACK);
        sf_queue(d[1], "INCR c2");
        sf_settle(d[1], WS_DROP);
        sf_queue(d[2], "INCR c3");
        sf_settle(d[2], WS_ACK);

        assert_int_equal(ws_sim_flush_count(sim), 1);
        ws_flush_info fi;
        assert_int_equal(ws_sim_flush(sim, 0, &fi), 0);
        assert_int_equal(ws_sim_flush(sim, 1, &fi), -1);
        assert_int_equal(ws_sim_flush(sim, 0, &fi), 0);
        assert_ptr_equal(fi.sub, sub);
        assert_int_equal(fi.number, 1);
        assert_int_equal(fi.read, 1);
        assert_string_equal(fi.why, "nothing outstanding");
        assert_int_equal(fi.deliveries, 3);
        assert_int_equal(fi.round_trips, 1);
        /* the deliveries in settle order, as the diagram's entry lines */
        char *diagram = ws_sim_diagram(sim, NULL);
        static const char *const outcome[] = {"ack", "drop", "ack"};
        static const char *const segment[] = {"segment kept", "segment dropped", "segment kept"};
        for (size_t k = 0; k < 3; k++) {
            ws_flush_delivery fd;
            assert_int_equal(ws_sim_flush_delivery(sim, 0, k, &fd), 0);
            assert_ptr_equal(fd.d, d[k]);
            assert_string_equal(fd.id, ws_delivery_id(d[k]));
            assert_string_equal(fd.outcome, outcome[k]);
            assert_string_equal(fd.segment, segment[k]);
            assert_int_equal(fd.queued, 1);
            char line[128];
            snprintf(line, sizeof line, "  entry %-24s %-12s %-16s (1 queued)", fd.id,
                     fd.outcome, fd.segment);
            assert_non_null(strstr(diagram, line));
        }
        ws_flush_delivery fd;
        assert_int_equal(ws_sim_flush_delivery(sim, 0, 3, &fd), -1);
        free(diagram);
        /* the commands: window -- INCR c1, INCR c3, XACK of all three; atomic -- each kept
         * segment MULTI, INCR, its own XACK, EXEC, then the dropped one's XACK */
        static const char *const wroles[] = {"segment", "segment", "settle"};
        static const char *const aroles[] = {"MULTI", "segment", "own settle", "EXEC",
                                             "MULTI", "segment", "own settle", "EXEC",
                                             "settle"};
        const ws_delivery *wfrom[] = {d[0], d[2], NULL};
        const ws_delivery *afrom[] = {d[0], d[0], d[0], d[0], d[2], d[2], d[2], d[2], NULL};
        size_t n = atomic ? 9 : 3;
        assert_int_equal(fi.commands, n);
        for (size_t k = 0; k < n; k++) {
            ws_flush_command fc, same;
            assert_int_equal(ws_sim_flush_command(sim, 0, k, &fc), 0);
            assert_int_equal(ws_sub_flush_command(sub, 1, k, &same), 0);
            assert_string_equal(fc.text, same.text);
            assert_string_equal(fc.role, atomic ? aroles[k] : wroles[k]);
            assert_ptr_equal(fc.from, atomic ? afrom[k] : wfrom[k]);
            assert_null(fc.fate);
            assert_int_equal(fc.rt_status, 0);
            assert_int_equal(fc.round_trip, 1);
            assert_int_equal(fc.rt_index, sf_window_round_trips(sim));
            if (k + 1 < n) {
                assert_null(fc.settles);
                assert_int_equal(fc.nsettles, 0);
                continue;
            }
            /* the shared XACK names the deliveries it settles */
            size_t want = atomic ? 1 : 3;
            assert_int_equal(fc.nsettles, want);
            for (size_t q = 0; q < want; q++)
                assert_ptr_equal(fc.settles[q], atomic ? d[1] : d[q]);
        }
        ws_flush_command fc;
        assert_int_equal(ws_sim_flush_command(sim, 0, n, &fc), -1);
        assert_int_equal(ws_sim_flush_command(sim, 1, 0, &fc), -1);
    }
}

/* A retry whose copy XADD fails (an injected error on the window connection) is not
 * acked: it stays pending; the other retried delivery's id is in the XACK. */
SF_TEST(a_retry_whose_copy_fails_is_not_acknowledged)
{
    ws_sim *sim = NULL;
    ws_sub *sub = sf_orders_read(w, &sim, WS_FORM_STREAM, WS_MODE_WINDOW, 0, 3);
    assert_int_equal(ws_fault_error_nth(ws_sim_window(sim), "XADD", 1, NULL), 0);
    ws_delivery *a = sf_d(sub, 0), *b = sf_d(sub, 1), *c = sf_d(sub, 2);
    sf_settle(a, WS_RETRY);
    sf_settle(b, WS_RETRY);
    sf_settle(c, WS_ACK);
    char xack[256];
    snprintf(xack, sizeof xack, "XACK orders g %s %s\n", ws_delivery_id(c), ws_delivery_id(b));
    assert_non_null(strstr(sf_commands(sim, "flush"), xack));
    assert_int_equal(sf_pending(sim, "orders", "g"), 1);
    char want[128];
    snprintf(want, sizeof want, "[[\"%s\", ", ws_delivery_id(a));
    assert_non_null(strstr(sf_q(sim, "XPENDING orders g - + 10"), want));
    /* b's copy was written, a's was not. */
    assert_int_equal(sf_int(sim, "XLEN orders"), 4);
    ws_report r = sf_read_report(sub);
    assert_int_equal(r.failed, 1);
    assert_string_equal(r.first_error, "ERR injected by wsim");
}

/* ws_find: the outstanding delivery with an id, until it settles. */
SF_TEST(ws_find_gives_an_outstanding_delivery_by_id)
{
    ws_sim *sim = sf_sim(w, 1);
    ws_sub *sub = sf_sub(sim, WS_FORM_STREAM, WS_MODE_WINDOW, "orders", 0);
    const char *id = sf_produce(sim, WS_FORM_STREAM, "orders", "order-1");
    assert_null(ws_find(sub, id));
    assert_int_equal(sf_read(sub), 1);
    assert_ptr_equal(ws_find(sub, id), sf_d(sub, 0));
    sf_settle(sf_d(sub, 0), WS_ACK);
    assert_null(ws_find(sub, id));
    ws_sim_counts c = ws_sim_get_counts(sim);
    assert_int_equal(c.reads, 1);
    assert_int_equal(c.deliveries, 1);
    assert_int_equal(ws_sim_produced_count(sim), 1);
    assert_string_equal(ws_sim_produced_id(sim, 1), id);
    assert_null(ws_sim_produced_id(sim, 2));
}

/* block_ms 0 never sends a wait without end (BLOCK 0, BLMOVE ... 0): an empty read on a
 * real server comes back. */
SF_TEST(an_empty_read_never_blocks_for_ever)
{
    ws_sim *sim = sf_sim(w, 1);
    ws_sub_config cfg = sf_sub_config(sim, WS_FORM_STREAM, WS_MODE_WINDOW, "orders", 0);
    cfg.block_ms = 0;
    ws_sub *stream = sf_subscribe(sim, &cfg);
    cfg = sf_sub_config(sim, WS_FORM_RELIABLE_LIST, WS_MODE_WINDOW, "jobs", 1);
    cfg.block_ms = 0;
    ws_sub *list = sf_subscribe(sim, &cfg);
    assert_int_equal(sf_read(stream), 0);
    assert_int_equal(sf_read(list), 0);
    const char *all = sf_commands(sim, NULL);
    assert_int_equal(sf_count(all, "BLOCK 0 "), 0);
    assert_int_equal(sf_count(all, "LEFT 0\n"), 0);
    assert_int_equal(sf_count(all, "LEFT 0.000\n"), 0);
}

/* ----- Refusals ---------------------------------------------------------------------------- */

/* A second settle is refused with WS_ESTALE and a sentence naming the delivery; it
 * changes nothing. */
SF_TEST(a_second_settle_is_refused)
{
    ws_sim *sim = NULL;
    ws_sub *sub = sf_orders_read(w, &sim, WS_FORM_STREAM, WS_MODE_WINDOW, 0, 2);
    ws_delivery *d = sf_d(sub, 0);
    sf_settle(d, WS_DROP);
    assert_int_equal(ws_settle(d, WS_ACK, 0), WS_ESTALE);
    assert_non_null(strstr(ws_sim_errstr(sim), ws_delivery_id(d)));
    sf_log(w, "refusal: %s", ws_sim_errstr(sim));
    assert_int_equal(ws_abandon(d), WS_ESTALE);
    assert_int_equal(ws_bind(d, &(ws_out){WS_FORM_PLAIN_LIST, "audit"}), WS_ESTALE);
    /* The window still waits for the other delivery. */
    assert_int_equal(ws_sim_get_counts(sim).flushes, 0);
    sf_settle(sf_d(sub, 1), WS_ACK);
    assert_int_equal(ws_sim_get_counts(sim).flushes, 1);
    assert_int_equal(sf_pending(sim, "orders", "g"), 0);
}

/* Malformed subscriptions are refused with a sentence. */
SF_TEST(a_malformed_subscription_is_refused)
{
    ws_sim *sim = sf_sim(w, 1);
    ws_sub_config cfg = {.form = WS_FORM_STREAM, .mode = WS_MODE_WINDOW, .key = "orders"};
    assert_null(ws_subscribe(sim, &cfg)); /* no group */
    assert_int_equal(ws_sim_err(sim), WS_EINVAL);
    assert_non_null(strstr(ws_sim_errstr(sim), "group"));
    cfg = (ws_sub_config){.form = WS_FORM_PLAIN_LIST, .mode = WS_MODE_WINDOW, .key = "l",
                          .delay_queue = "z"};
    assert_null(ws_subscribe(sim, &cfg)); /* a delay queue is for streams */
    cfg = (ws_sub_config){.form = WS_FORM_STREAM, .mode = WS_MODE_DIRECT, .key = "s",
                          .group = "g", .batch = 3};
    assert_null(ws_subscribe(sim, &cfg)); /* a batch needs a window */
}

/* ----- Whole windows ------------------------------------------------------------------------ */

/* 20 orders, every order whose number is divisible by 3 dropped, the rest acked, each
 * handler queueing `RPUSH picks order-n`.  Returns the subscription for more checks. */
static ws_sub *whole_window(sf_world *w, ws_sim *sim, ws_sub_config *cfg)
{
    ws_sub *sub = sf_subscribe(sim, cfg);
    sf_produce_n(sim, cfg->form, "orders", 20);
    size_t handled = 0;
    while (handled < 20) {
        size_t n = sf_read(sub);
        assert_true(n > 0);
        for (size_t i = 0; i < n; i++) {
            ws_delivery *d = sf_d(sub, i);
            size_t len;
            const char *p = ws_delivery_payload(d, &len);
            int number = atoi(p + 6);
            sf_queue(d, "RPUSH picks %.*s", (int)len, p);
            sf_settle(d, number % 3 == 0 ? WS_DROP : WS_ACK);
        }
        handled += n;
    }
    assert_int_equal(handled, 20);
    (void)w;
    return sub;
}

/* The acked orders, each once, in order. */
static const char ACKED[] =
    "[\"order-1\", \"order-2\", \"order-4\", \"order-5\", \"order-7\", \"order-8\", "
    "\"order-10\", \"order-11\", \"order-13\", \"order-14\", \"order-16\", \"order-17\", "
    "\"order-19\", \"order-20\"]";

static void whole_window_of(sf_world *w, ws_form form, ws_mode mode)
{
    ws_sim *sim = sf_sim(w, 7);
    ws_sub_config cfg = sf_sub_config(sim, form, mode, "orders", 0);
    whole_window(w, sim, &cfg);
    assert_string_equal(sf_q(sim, "LRANGE picks 0 -1"), ACKED);
    assert_int_equal(sf_unsettled(sim, form, "orders"), 0);
    if (form != WS_FORM_STREAM && form != WS_FORM_CHANNEL)
        assert_int_equal(sf_int(sim, "LLEN orders"), 0);
}

SF_TEST(whole_window_plain_stream) { whole_window_of(w, WS_FORM_STREAM, WS_MODE_WINDOW); }
SF_TEST(whole_window_atomic_stream) { whole_window_of(w, WS_FORM_STREAM, WS_MODE_ATOMIC); }
SF_TEST(whole_window_channel) { whole_window_of(w, WS_FORM_CHANNEL, WS_MODE_WINDOW); }
SF_TEST(whole_window_reliable_list) { whole_window_of(w, WS_FORM_RELIABLE_LIST, WS_MODE_WINDOW); }
SF_TEST(whole_window_atomic_reliable_list)
{
    whole_window_of(w, WS_FORM_RELIABLE_LIST, WS_MODE_ATOMIC);
}
SF_TEST(whole_window_plain_list) { whole_window_of(w, WS_FORM_PLAIN_LIST, WS_MODE_WINDOW); }

/* A batch window of 8: a batch's segment leaves only if every member acked (§6), so with
 * every third order dropped no batch of 8 (1-8, 9-16, 17-20) commits its writes; every
 * entry is still settled (acked or dropped), so nothing stays pending -- and the 14
 * acked members, acked without their effects, are what §8 calls lost.  (§9's line for
 * this window says the acked ids land; with batches of 8 that contradicts §6, and §6 is
 * the rule the engine keeps.) */
SF_TEST(whole_window_batch_of_8)
{
    ws_sim *sim = sf_sim(w, 7);
    ws_sub_config cfg = sf_sub_config(sim, WS_FORM_STREAM, WS_MODE_WINDOW, "orders", 0);
    cfg.batch = 8;
    whole_window(w, sim, &cfg);
    assert_int_equal(sf_int(sim, "EXISTS picks"), 0);
    assert_int_equal(sf_pending(sim, "orders", "g"), 0);
    sf_expect_violations(w);
    size_t n = 0;
    const ws_violation *v = sf_check(sim, &n);
    assert_int_equal(n, 14);
    for (size_t i = 0; i < n; i++) assert_string_equal(v[i].invariant, "lost");
}

/* Atomic, with a bound audit list and an InRound receipt on a reply stream: audit and
 * receipts both hold exactly the acked orders. */
SF_TEST(whole_window_atomic_with_bound_publishes_and_an_in_round_reply)
{
    ws_sim *sim = sf_sim(w, 7);
    ws_sub_config cfg = sf_sub_config(sim, WS_FORM_STREAM, WS_MODE_ATOMIC, "orders", 0);
    cfg.reply = (ws_out){WS_FORM_STREAM, "receipts"};
    cfg.reply_in_round = 1;
    ws_sub *sub = sf_subscribe(sim, &cfg);
    sf_produce_n(sim, WS_FORM_STREAM, "orders", 20);
    ws_out audit = {WS_FORM_PLAIN_LIST, "audit"};
    assert_int_equal(sf_read(sub), 20);
    for (size_t i = 0; i < 20; i++) {
        ws_delivery *d = sf_d(sub, i);
        size_t len;
        const char *p = ws_delivery_payload(d, &len);
        assert_int_equal(ws_bind(d, &audit), 0);
        assert_int_equal(ws_publish(d, &audit, p, len, NULL, 0), 0);
        sf_queue(d, "RPUSH picks %.*s", (int)len, p);
        assert_int_equal(ws_reply(d, p, len), 0);
        sf_settle(d, atoi(p + 6) % 3 == 0 ? WS_DROP : WS_ACK);
    }
    assert_string_equal(sf_q(sim, "LRANGE picks 0 -1"), ACKED);
    assert_int_equal(sf_int(sim, "LLEN audit"), 14);
    assert_int_equal(sf_int(sim, "XLEN receipts"), 14);
    assert_int_equal(sf_pending(sim, "orders", "g"), 0);
}

SF_MAIN("sim: the window (§3, §9)")
