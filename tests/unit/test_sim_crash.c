/* test_sim_crash.c -- crashes, restarts and recovery (SEMANTICS.md §8) and ws_sim_check:
 * a crash drops the consumer's whole memory (handles go stale, timers and delayed copies
 * go), the server keeps exactly what it applied; a restart makes a fresh consumer that
 * recovers through reclaim reads (XAUTOCLAIM with its cursor, XPENDING for delivery
 * counts); a fresh subscription never re-reads its own pending list; crashes inside a
 * flush after k commands, lost replies, and a crash during a read; a timer copy lost
 * with the process is "lost", a delay-queue copy survives.
 *
 * Each test runs on the fake and, with --real, on redis-server too (sim_fixture.h). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sim_fixture.h"

/* A fresh window subscription "orders" (COUNT 0: 64) and a reclaim subscription
 * "orders-reclaim" on its group with min-idle 100 ms and COUNT reclaim_count. */
static ws_sub *orders(ws_sim *sim, ws_sub **reclaim, size_t reclaim_count)
{
    ws_sub *sub = sf_sub(sim, WS_FORM_STREAM, WS_MODE_WINDOW, "orders", 0);
    ws_sub_config cfg = {.form = WS_FORM_STREAM, .mode = WS_MODE_WINDOW, .key = "orders",
                         .group = "g", .reclaim = 1, .min_idle_ms = 100,
                         .count = reclaim_count, .block_ms = 100, .name = "orders-reclaim"};
    *reclaim = sf_subscribe(sim, &cfg);
    return sub;
}

/* A crash kills the process: while dead every consumer call is refused (WS_EDEAD); after
 * the restart the old handles are stale (WS_ESTALE, a sentence saying the process
 * crashed), and the trace shows both.  Generated consumer names come from a per-process
 * counter (stream.rs auto_consumer): the new process names its subscriptions ruststream-0,
 * ruststream-1 again, in subscription order, as the crashed one did. */
SF_TEST(a_crash_makes_every_handle_of_the_process_stale)
{
    ws_sim *sim = sf_sim(w, 1);
    ws_sub *reclaim;
    ws_sub *sub = orders(sim, &reclaim, 0);
    sf_produce_n(sim, WS_FORM_STREAM, "orders", 1);
    assert_int_equal(sf_read(sub), 1);
    ws_delivery *d = sf_d(sub, 0);
    assert_string_equal(ws_sub_consumer(sub), "ruststream-0");
    assert_string_equal(ws_sub_consumer(reclaim), "ruststream-1");
    assert_int_equal(ws_sim_incarnation(sim), 1);

    assert_int_equal(ws_sim_crash(sim), 0);
    assert_true(ws_sim_dead(sim));
    assert_int_equal(ws_sim_crash(sim), WS_EDEAD);
    assert_int_equal(ws_settle(d, WS_ACK, 0), WS_EDEAD);
    assert_int_equal(ws_queue_line(d, "INCR x"), WS_EDEAD);
    ws_read_result res;
    assert_int_equal(ws_read(sub, &res), WS_EDEAD);
    assert_int_equal(ws_sim_advance(sim, 0), 0);

    assert_int_equal(ws_sim_restart(sim), 0);
    assert_false(ws_sim_dead(sim));
    assert_int_equal(ws_sim_incarnation(sim), 2);
    assert_string_equal(ws_sub_consumer(sub), "ruststream-0");
    assert_string_equal(ws_sub_consumer(reclaim), "ruststream-1");
    assert_int_equal(ws_settle(d, WS_ACK, 0), WS_ESTALE);
    assert_non_null(strstr(ws_sim_errstr(sim), ws_delivery_id(d)));
    assert_non_null(strstr(ws_sim_errstr(sim), "crashed"));
    assert_int_equal(sf_pending(sim, "orders", "g"), 1);
    const char *trace = sf_trace(sim);
    sf_in_order(trace, "-- the consumer process 1 crashed", "-- the consumer process 2 starts",
                NULL);
    /* Recovery: the reclaim subscription takes the entry over. */
    assert_int_equal(ws_sim_advance(sim, 100), 0);
    assert_int_equal(sf_read(reclaim), 1);
    sf_settle(sf_d(reclaim, 0), WS_ACK);
    assert_int_equal(sf_pending(sim, "orders", "g"), 0);
}

/* Reclaim reads: XAUTOCLAIM from cursor 0-0, carried between reads; a non-empty answer
 * is followed by XPENDING ... IDLE 0 - + <n> <consumer> for the delivery counts. */
SF_TEST(a_reclaim_read_picks_up_what_a_crashed_consumer_left)
{
    ws_sim *sim = sf_sim(w, 1);
    ws_sub *reclaim;
    ws_sub *sub = orders(sim, &reclaim, 2);
    sf_produce_n(sim, WS_FORM_STREAM, "orders", 3);
    assert_int_equal(sf_read(sub), 3);
    const char *third = ws_delivery_id(sf_d(sub, 2));
    assert_int_equal(ws_sim_crash(sim), 0);
    assert_int_equal(ws_sim_restart(sim), 0);
    assert_int_equal(ws_sim_advance(sim, 100), 0);

    const char *c = ws_sub_consumer(reclaim);
    assert_int_equal(sf_read(reclaim), 2);
    for (size_t i = 0; i < 2; i++) {
        assert_int_equal(ws_delivery_count(sf_d(reclaim, i)), 2);
        sf_settle(sf_d(reclaim, i), WS_ACK);
    }
    assert_int_equal(sf_read(reclaim), 1);
    assert_string_equal(ws_delivery_id(sf_d(reclaim, 0)), third);
    sf_settle(sf_d(reclaim, 0), WS_ACK);
    char first_read[256], xpending[256], second_read[256];
    snprintf(first_read, sizeof first_read, "XAUTOCLAIM orders g %s 100 0-0 COUNT 2\n", c);
    snprintf(xpending, sizeof xpending, "XPENDING orders g IDLE 0 - + 2 %s\n", c);
    snprintf(second_read, sizeof second_read, "XAUTOCLAIM orders g %s 100 %s COUNT 2\n", c,
             third);
    sf_in_order(sf_commands(sim, "orders-reclaim"), first_read, xpending, second_read,
                xpending, NULL);
    assert_int_equal(sf_pending(sim, "orders", "g"), 0);
    /* Nothing left: the cursor is back at 0-0 and the answer empty, without XPENDING. */
    assert_int_equal(sf_read(reclaim), 0);
    assert_int_equal(sf_count(sf_commands(sim, "orders-reclaim"), "XPENDING"), 2);
}

/* A fresh (`>`) subscription never re-reads its own pending list: an abandoned entry
 * comes back only through a reclaim subscription. */
SF_TEST(a_fresh_subscription_never_rereads_its_pending_list)
{
    ws_sim *sim = sf_sim(w, 1);
    ws_sub *reclaim;
    ws_sub *sub = orders(sim, &reclaim, 0);
    sf_produce_n(sim, WS_FORM_STREAM, "orders", 1);
    assert_int_equal(sf_read(sub), 1);
    assert_int_equal(ws_abandon(sf_d(sub, 0)), 0);
    assert_int_equal(sf_read(sub), 0);
    assert_int_equal(sf_pending(sim, "orders", "g"), 1);
    assert_int_equal(ws_sim_advance(sim, 100), 0);
    assert_int_equal(sf_read(reclaim), 1);
    sf_settle(sf_d(reclaim, 0), WS_ACK);
    assert_int_equal(sf_pending(sim, "orders", "g"), 0);
}

/* A crash inside a flush after k of its n commands: the server keeps exactly the first
 * k.  Here the first segment's LPUSH went, the second's and the XACK did not: after
 * recovery the first write is applied twice (named "doubled"), the second once. */
SF_TEST(a_crash_inside_a_flush_keeps_exactly_the_first_k_commands)
{
    ws_sim *sim = sf_sim(w, 1);
    ws_sub *reclaim;
    ws_sub *sub = orders(sim, &reclaim, 0);
    sf_produce_n(sim, WS_FORM_STREAM, "orders", 2);
    assert_int_equal(sf_read(sub), 2);
    const char *first = ws_delivery_id(sf_d(sub, 0));
    ws_fault f = {.kind = WS_FAULT_CRASH_AFTER, .name = "RPUSH", .nth = 1};
    assert_int_equal(ws_fault_arm(ws_sim_window(sim), &f), 0);
    sf_queue(sf_d(sub, 0), "RPUSH picks order-1");
    sf_settle(sf_d(sub, 0), WS_ACK);
    sf_queue(sf_d(sub, 1), "RPUSH picks order-2");
    assert_int_equal(ws_settle(sf_d(sub, 1), WS_ACK, 0), WS_ECRASHED);
    assert_true(ws_sim_dead(sim));
    assert_int_equal(ws_sim_restart(sim), 0);
    assert_string_equal(sf_q(sim, "LRANGE picks 0 -1"), "[\"order-1\"]");
    assert_int_equal(sf_pending(sim, "orders", "g"), 2);

    assert_int_equal(ws_sim_advance(sim, 100), 0);
    assert_int_equal(sf_read(reclaim), 2);
    for (size_t i = 0; i < 2; i++) {
        size_t len;
        const char *p = ws_delivery_payload(sf_d(reclaim, i), &len);
        sf_queue(sf_d(reclaim, i), "RPUSH picks %.*s", (int)len, p);
        sf_settle(sf_d(reclaim, i), WS_ACK);
    }
    assert_string_equal(sf_q(sim, "LRANGE picks 0 -1"),
                        "[\"order-1\", \"order-1\", \"order-2\"]");
    sf_expect_violations(w);
    sf_only_violation(sim, "doubled", first);
}

/* Lost replies: the server applied the whole flush, the consumer died before reading the
 * replies.  Nothing is pending, nothing doubles. */
SF_TEST(a_flush_whose_replies_are_lost_was_applied_whole)
{
    ws_sim *sim = sf_sim(w, 1);
    ws_sub *reclaim;
    ws_sub *sub = orders(sim, &reclaim, 0);
    sf_produce_n(sim, WS_FORM_STREAM, "orders", 1);
    assert_int_equal(sf_read(sub), 1);
    ws_fault f = {.kind = WS_FAULT_LOSE_REPLIES, .name = "XACK", .nth = 1};
    assert_int_equal(ws_fault_arm(ws_sim_window(sim), &f), 0);
    sf_queue(sf_d(sub, 0), "RPUSH picks order-1");
    assert_int_equal(ws_settle(sf_d(sub, 0), WS_ACK, 0), WS_ECRASHED);
    assert_true(ws_sim_dead(sim));
    assert_int_equal(ws_sim_restart(sim), 0);
    assert_int_equal(sf_pending(sim, "orders", "g"), 0);
    assert_string_equal(sf_q(sim, "LRANGE picks 0 -1"), "[\"order-1\"]");
    assert_int_equal(ws_sim_advance(sim, 100), 0);
    assert_int_equal(sf_read(reclaim), 0);
    assert_non_null(strstr(sf_trace(sim), "(lost)"));
}

/* A lost connection is not a crash (issue 23, item 5: the framework's clients have no
 * reconnect policy, broker.rs @ e9525ff, and the runtime logs a failed read or flush and
 * goes on, dispatch.rs @ 042b614): the round trip in flight was applied and answers
 * errors, every later one on that connection sends nothing and answers errors, and the
 * process lives on -- until a crash point armed there, which still kills it. */
SF_TEST(a_lost_connection_fails_its_commands_and_the_process_lives_on)
{
    ws_sim *sim = sf_sim(w, 1);
    ws_sub *reclaim;
    ws_sub *sub = orders(sim, &reclaim, 0);
    sf_produce_n(sim, WS_FORM_STREAM, "orders", 2);
    assert_int_equal(sf_read(sub), 2);
    ws_fault f = {.kind = WS_FAULT_DISCONNECT, .name = "XACK", .nth = 1};
    assert_int_equal(ws_fault_arm(ws_sim_window(sim), &f), 0);
    sf_queue(sf_d(sub, 0), "RPUSH picks order-1");
    sf_settle(sf_d(sub, 0), WS_ACK);
    assert_int_equal(ws_abandon(sf_d(sub, 1)), 0); /* flush: applied, replies lost */
    assert_false(ws_sim_dead(sim));
    assert_int_equal(ws_fault_fired(ws_sim_window(sim)), 1);
    assert_string_equal(sf_q(sim, "LRANGE picks 0 -1"), "[\"order-1\"]");
    assert_int_equal(sf_pending(sim, "orders", "g"), 1); /* order-1 acked, order-2 held */
    ws_read_result res;
    assert_int_equal(ws_read(sub, &res), 0);
    assert_true(res.is_report);
    assert_non_null(strstr(res.report.first_error, "connection lost"));
    /* the pool connection sends nothing any more: a pool command answers the error */
    uint64_t sent = ws_conn_get_stats(ws_sim_window(sim)).commands_sent;
    const fr_reply *r = NULL;
    assert_int_equal(ws_pool_line(sim, NULL, "INCR seen", &r), 0);
    assert_int_equal(r->type, FR_REPLY_ERROR);
    assert_false(ws_sim_dead(sim));
    assert_int_equal(ws_conn_get_stats(ws_sim_window(sim)).commands_sent, sent);
    assert_non_null(strstr(sf_trace(sim), "connection lost: nothing sent"));
    /* a crash point on the lost connection still ends the process */
    ws_fault crash = {.kind = WS_FAULT_CRASH_AFTER,
                      .round_trip = ws_conn_get_stats(ws_sim_window(sim)).round_trips + 1};
    assert_int_equal(ws_fault_arm(ws_sim_window(sim), &crash), 0);
    assert_int_equal(ws_pool_line(sim, NULL, "INCR seen", &r), WS_ECRASHED);
    assert_true(ws_sim_dead(sim));
    assert_int_equal(ws_sim_restart(sim), 0);
    assert_int_equal(sf_pending(sim, "orders", "g"), 1);
    assert_int_equal(sf_int(sim, "EXISTS seen"), 0);
}

/* A crash during a read: XREADGROUP was applied (the entry is pending for the dead
 * consumer), the consumer never saw it; it is not lost, and a reclaim read recovers it. */
SF_TEST(a_crash_during_a_read_leaves_the_entry_pending_for_recovery)
{
    ws_sim *sim = sf_sim(w, 1);
    ws_sub *reclaim;
    ws_sub *sub = orders(sim, &reclaim, 0);
    sf_produce_n(sim, WS_FORM_STREAM, "orders", 1);
    ws_fault f = {.kind = WS_FAULT_CRASH_AFTER, .name = "XREADGROUP", .nth = 1};
    assert_int_equal(ws_fault_arm(ws_sim_reader(sim), &f), 0);
    ws_read_result res;
    assert_int_equal(ws_read(sub, &res), WS_ECRASHED);
    assert_true(ws_sim_dead(sim));
    assert_int_equal(ws_sim_restart(sim), 0);
    assert_int_equal(sf_pending(sim, "orders", "g"), 1);
    size_t n = 1;
    sf_check(sim, &n); /* pending is not lost */
    assert_int_equal(n, 0);
    assert_int_equal(ws_sim_advance(sim, 100), 0);
    assert_int_equal(sf_read(reclaim), 1);
    sf_settle(sf_d(reclaim, 0), WS_ACK);
    assert_int_equal(sf_pending(sim, "orders", "g"), 0);
}

/* retry_after without a delay queue: the original is settled now and the copy lives in
 * the process's timer; a crash during the delay loses it, and the check says "lost". */
SF_TEST(a_timer_copy_dies_with_the_process_and_the_entry_is_lost)
{
    ws_sim *sim = sf_sim(w, 1);
    ws_sub *reclaim;
    ws_sub *sub = orders(sim, &reclaim, 0);
    const char *id = sf_produce(sim, WS_FORM_STREAM, "orders", "order-1");
    assert_int_equal(sf_read(sub), 1);
    int64_t d = 300;
    assert_int_equal(ws_settle(sf_d(sub, 0), WS_RETRY_AFTER, d), 0);
    assert_int_equal(sf_pending(sim, "orders", "g"), 0);
    assert_int_equal(ws_sim_crash(sim), 0);
    assert_int_equal(ws_sim_restart(sim), 0);
    assert_int_equal(ws_sim_advance(sim, d), 0);
    assert_int_equal(sf_read(sub), 0);
    assert_int_equal(sf_read(reclaim), 0);
    assert_int_equal(sf_int(sim, "XLEN orders"), 1);
    sf_expect_violations(w);
    const ws_violation *v = sf_violation(sim, "lost");
    assert_non_null(v);
    assert_string_equal(v->entry, id);
    assert_non_null(strstr(v->sentence, id));
}

/* With a delay queue the copy is on the server: it survives the crash and the restarted
 * consumer's sweep moves it back when due. */
SF_TEST(a_delay_queue_copy_survives_a_crash)
{
    ws_sim *sim = sf_sim(w, 1);
    ws_sub_config cfg = sf_sub_config(sim, WS_FORM_STREAM, WS_MODE_WINDOW, "orders", 0);
    cfg.delay_queue = "orders:delayed";
    ws_sub *sub = sf_subscribe(sim, &cfg);
    sf_produce(sim, WS_FORM_STREAM, "orders", "order-1");
    assert_int_equal(sf_read(sub), 1);
    int64_t d = 300;
    assert_int_equal(ws_settle(sf_d(sub, 0), WS_RETRY_AFTER, d), 0);
    assert_int_equal(ws_sim_crash(sim), 0);
    assert_int_equal(ws_sim_restart(sim), 0);
    assert_int_equal(sf_int(sim, "ZCARD orders:delayed"), 1);
    /* Scheduled in the delay queue: not lost. */
    size_t n = 1;
    sf_check(sim, &n);
    assert_int_equal(n, 0);
    assert_int_equal(ws_sim_advance(sim, d), 0);
    sf_ack_copy(sub, 1);
    assert_int_equal(sf_pending(sim, "orders", "g"), 0);
}

/* A declared retry is the runtime's: the window settles the entry first (its XACK), then
 * the copy with the counter raised goes out on a round trip of its own (dispatch.rs
 * publish_copy).  A crash between the two -- armed before the copy's XADD, the only XADD
 * the window connection sends -- leaves the entry acknowledged with no copy anywhere: the
 * check says "lost", naming the settle and the crash. */
SF_TEST(a_crash_between_the_settle_and_the_runtime_copy_loses_the_entry)
{
    ws_sim *sim = sf_sim(w, 1);
    ws_sub_config cfg = sf_sub_config(sim, WS_FORM_STREAM, WS_MODE_WINDOW, "orders", 0);
    cfg.max_attempts = 3;
    ws_sub *sub = sf_subscribe(sim, &cfg);
    const char *id = sf_produce(sim, WS_FORM_STREAM, "orders", "order-1");
    ws_fault f = {.kind = WS_FAULT_CRASH_BEFORE, .name = "XADD", .nth = 1};
    assert_int_equal(ws_fault_arm(ws_sim_window(sim), &f), 0);
    assert_int_equal(sf_read(sub), 1);
    assert_int_equal(ws_settle(sf_d(sub, 0), WS_RETRY, 0), WS_ECRASHED);
    assert_true(ws_sim_dead(sim));
    char xack[128];
    snprintf(xack, sizeof xack, "XACK orders g %s\n", id);
    assert_string_equal(sf_commands(sim, "flush"), xack);
    assert_string_equal(sf_commands(sim, "retry copy of"),
                        "XADD orders * _payload order-1 h:x-ruststream-retry-count 1\n");
    assert_int_equal(ws_sim_restart(sim), 0);
    assert_int_equal(sf_pending(sim, "orders", "g"), 0);
    assert_int_equal(sf_int(sim, "XLEN orders"), 1);
    assert_int_equal(sf_read(sub), 0);
    sf_expect_violations(w);
    const ws_violation *v = sf_only_violation(sim, "lost", id);
    assert_non_null(strstr(v->sentence, "max-attempts declared: the settle first, then the copy"));
    assert_non_null(strstr(v->sentence, "before the copy was published"));
}

/* Without the crash the same retry keeps the entry: the copy is on the stream, unread. */
SF_TEST(a_declared_retry_without_a_crash_loses_nothing)
{
    ws_sim *sim = sf_sim(w, 1);
    ws_sub_config cfg = sf_sub_config(sim, WS_FORM_STREAM, WS_MODE_WINDOW, "orders", 0);
    cfg.max_attempts = 3;
    ws_sub *sub = sf_subscribe(sim, &cfg);
    sf_produce(sim, WS_FORM_STREAM, "orders", "order-1");
    assert_int_equal(sf_read(sub), 1);
    sf_settle(sf_d(sub, 0), WS_RETRY);
    assert_int_equal(sf_int(sim, "XLEN orders"), 2);
    size_t n = 1;
    sf_check(sim, &n);
    assert_int_equal(n, 0);
}

/* The armed faults follow the process: a restart makes new connections without them.
 * The new window connection's only round trips are the two subscriptions' starts (each
 * stream subscription makes its group again, BUSYGROUP being fine). */
SF_TEST(a_restart_makes_new_connections)
{
    ws_sim *sim = sf_sim(w, 1);
    ws_sub *reclaim;
    ws_sub *sub = orders(sim, &reclaim, 0);
    sf_produce_n(sim, WS_FORM_STREAM, "orders", 2);
    ws_conn *old = ws_sim_window(sim);
    assert_int_equal(ws_fault_error_nth(old, "XACK", 2, NULL), 0);
    assert_int_equal(sf_read(sub), 2);
    assert_int_equal(ws_sim_crash(sim), 0);
    assert_int_equal(ws_sim_restart(sim), 0);
    assert_string_equal(ws_conn_label(ws_sim_window(sim)), "window.2");
    assert_int_equal(ws_conn_get_stats(ws_sim_window(sim)).round_trips, 2);
    assert_int_equal(ws_sim_advance(sim, 100), 0);
    assert_int_equal(sf_read(reclaim), 2);
    sf_settle(sf_d(reclaim, 0), WS_ACK);
    sf_settle(sf_d(reclaim, 1), WS_ACK);
    assert_int_equal(sf_pending(sim, "orders", "g"), 0);
}

SF_MAIN("sim: crashes and recovery (§8)")
