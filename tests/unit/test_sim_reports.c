/* test_sim_reports.c -- failure reporting (SEMANTICS.md §5): a failed flush makes one
 * report, handed out once as the next item of the delivery stream; while one waits,
 * later failures are not reported again; counts of commands, settles and failures; the
 * ack that triggered it still succeeded; nothing is re-sent; a failed XACK or LREM
 * leaves its entries to recovery; one failing command fails only itself.
 *
 * Each test runs on the fake and, with --real, on redis-server too (sim_fixture.h). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sim_fixture.h"

static const char WRONGTYPE[] = "WRONGTYPE Operation against a key holding the wrong kind of value";

/* §9: the handler queues an XADD to a key holding a list; the ack succeeds; the next item
 * of the delivery stream is the report (naming the stream, saying it failed); the item
 * after it is a normal delivery. */
SF_TEST(a_failed_flush_is_reported_once_on_the_delivery_stream)
{
    ws_sim *sim = sf_sim(w, 1);
    ws_sub *sub = sf_sub(sim, WS_FORM_STREAM, WS_MODE_WINDOW, "orders", 1);
    sf_do(sim, "RPUSH events not-a-stream");
    sf_produce_n(sim, WS_FORM_STREAM, "orders", 2);
    assert_int_equal(sf_read(sub), 1);
    sf_queue(sf_d(sub, 0), "XADD events * kind picked");
    assert_int_equal(ws_settle(sf_d(sub, 0), WS_ACK, 0), 0);

    ws_report r = sf_read_report(sub);
    assert_string_equal(r.subscription, "orders");
    assert_int_equal(r.commands, 1);
    assert_int_equal(r.settles, 1);
    assert_int_equal(r.failed, 1);
    assert_string_equal(r.first_error, WRONGTYPE);
    assert_int_equal(r.flush, 1);
    assert_int_equal(ws_sim_get_counts(sim).reports, 1);

    assert_int_equal(sf_read(sub), 1);
    size_t len;
    assert_memory_equal(ws_delivery_payload(sf_d(sub, 0), &len), "order-2", 7);
    sf_settle(sf_d(sub, 0), WS_ACK);
    /* The failing XADD failed alone: the XACK of its flush ran. */
    assert_int_equal(sf_pending(sim, "orders", "g"), 0);
    assert_int_equal(ws_sim_get_counts(sim).reports, 1);
}

/* While a report waits to be taken, a second failed flush is not reported again. */
SF_TEST(a_second_failure_while_a_report_waits_is_not_reported_again)
{
    ws_sim *sim = sf_sim(w, 1);
    ws_sub *sub = sf_sub(sim, WS_FORM_STREAM, WS_MODE_WINDOW, "orders", 1);
    sf_do(sim, "SET counter not-a-number");
    sf_produce_n(sim, WS_FORM_STREAM, "orders", 2);
    /* Two reads of one before any settle: no report waits yet. */
    assert_int_equal(sf_read(sub), 1);
    ws_delivery *a = sf_d(sub, 0);
    assert_int_equal(sf_read(sub), 1);
    ws_delivery *b = sf_d(sub, 0);
    sf_queue(a, "INCR counter");
    sf_settle(a, WS_ACK); /* flush 1 fails: reported */
    sf_queue(b, "LPUSH counter x");
    sf_settle(b, WS_ACK); /* flush 2 fails: a report waits, not reported again */
    assert_int_equal(ws_sim_get_counts(sim).flushes, 2);
    assert_int_equal(ws_sim_get_counts(sim).reports, 1);

    ws_report r = sf_read_report(sub);
    assert_int_equal(r.flush, 1);
    assert_string_equal(r.first_error, "ERR value is not an integer or out of range");
    /* The next item is not a report: a read (nothing left to read). */
    assert_int_equal(sf_read(sub), 0);
    assert_int_equal(sf_pending(sim, "orders", "g"), 0);
}

/* The report counts every reply of the segment pipelines (commands) and of the settles,
 * and names the subscription by its configured name. */
SF_TEST(a_report_counts_commands_settles_and_failures)
{
    ws_sim *sim = sf_sim(w, 1);
    ws_sub_config cfg = sf_sub_config(sim, WS_FORM_STREAM, WS_MODE_WINDOW, "orders", 0);
    cfg.name = "accept";
    ws_sub *sub = sf_subscribe(sim, &cfg);
    assert_string_equal(ws_sub_name(sub), "accept");
    sf_do(sim, "SET str x");
    sf_produce_n(sim, WS_FORM_STREAM, "orders", 3);
    assert_int_equal(sf_read(sub), 3);
    sf_queue(sf_d(sub, 0), "LPUSH str a");  /* fails */
    sf_queue(sf_d(sub, 0), "LPUSH picks a");
    sf_settle(sf_d(sub, 0), WS_ACK);
    sf_queue(sf_d(sub, 1), "HSET str f v"); /* fails */
    sf_settle(sf_d(sub, 1), WS_ACK);
    sf_settle(sf_d(sub, 2), WS_RETRY);
    ws_report r = sf_read_report(sub);
    assert_string_equal(r.subscription, "accept");
    assert_int_equal(r.commands, 3);  /* the two segments' replies */
    assert_int_equal(r.settles, 2);   /* the retry's XADD copy and the XACK */
    assert_int_equal(r.failed, 2);
    assert_string_equal(r.first_error, WRONGTYPE);
    /* One failing command inside a plain pipeline fails only itself. */
    assert_string_equal(sf_q(sim, "LRANGE picks 0 -1"), "[\"a\"]");
    assert_int_equal(sf_pending(sim, "orders", "g"), 0);
}

/* A failed XACK (an injected error) leaves every id of it pending; nothing is re-sent by
 * later flushes; the entries come back through a reclaim subscription. */
SF_TEST(a_failed_xack_leaves_every_id_pending_until_recovery)
{
    ws_sim *sim = sf_sim(w, 1);
    ws_sub *sub = sf_sub(sim, WS_FORM_STREAM, WS_MODE_WINDOW, "orders", 0);
    sf_produce_n(sim, WS_FORM_STREAM, "orders", 4);
    assert_int_equal(ws_fault_error_nth(ws_sim_window(sim), "XACK", 1, NULL), 0);
    ws_sub_config cfg = {.form = WS_FORM_STREAM, .mode = WS_MODE_WINDOW, .key = "orders",
                         .group = "g", .consumer = "rescuer", .reclaim = 1, .block_ms = 100,
                         .name = "orders-reclaim"};
    ws_sub *rescue = sf_subscribe(sim, &cfg);
    assert_int_equal(sf_read(sub), 4);
    for (size_t i = 0; i < 3; i++) sf_settle(sf_d(sub, i), WS_ACK);
    ws_delivery *last = sf_d(sub, 3);
    sf_settle(last, WS_ACK);
    assert_int_equal(sf_pending(sim, "orders", "g"), 4);
    ws_report r = sf_read_report(sub);
    assert_int_equal(r.commands, 0);
    assert_int_equal(r.settles, 1);
    assert_int_equal(r.failed, 1);
    assert_string_equal(r.first_error, "ERR injected by wsim");
    /* Nothing is re-sent: another window's flush carries only its own id. */
    const char *more = sf_produce(sim, WS_FORM_STREAM, "orders", "order-5");
    assert_int_equal(sf_read(sub), 1);
    sf_settle(sf_d(sub, 0), WS_ACK);
    char want[128];
    snprintf(want, sizeof want, "XACK orders g %s\n", more);
    assert_int_equal(sf_count(sf_commands(sim, "flush"), "XACK"), 2);
    assert_non_null(strstr(sf_commands(sim, "flush"), want));
    assert_int_equal(sf_pending(sim, "orders", "g"), 4);
    /* Recovery: the reclaim subscription claims the four and acks them. */
    assert_int_equal(sf_read(rescue), 4);
    for (size_t i = 0; i < 4; i++) {
        assert_int_equal(ws_delivery_count(sf_d(rescue, i)), 2);
        sf_settle(sf_d(rescue, i), WS_ACK);
    }
    assert_int_equal(sf_pending(sim, "orders", "g"), 0);
}

/* A failed LREM leaves its value on the processing list. */
SF_TEST(a_failed_lrem_leaves_the_value_on_the_processing_list)
{
    ws_sim *sim = sf_sim(w, 1);
    ws_sub *sub = sf_sub(sim, WS_FORM_RELIABLE_LIST, WS_MODE_WINDOW, "orders", 0);
    sf_produce_n(sim, WS_FORM_RELIABLE_LIST, "orders", 2);
    assert_int_equal(ws_fault_error_nth(ws_sim_window(sim), "LREM", 2, "ERR refused"), 0);
    assert_int_equal(sf_read(sub), 2);
    sf_settle(sf_d(sub, 0), WS_ACK);
    sf_settle(sf_d(sub, 1), WS_DROP);
    assert_string_equal(sf_q(sim, "LRANGE orders.processing 0 -1"), "[\"order-2\"]");
    ws_report r = sf_read_report(sub);
    assert_string_equal(r.subscription, "orders");
    assert_int_equal(r.settles, 2);
    assert_int_equal(r.failed, 1);
    assert_string_equal(r.first_error, "ERR refused");
}

/* A retry write refused by the server (the delay queue key holds a string: ZADD answers
 * WRONGTYPE) is not acknowledged: the entry stays pending, the failure is reported. */
SF_TEST(a_retry_whose_write_fails_is_not_acknowledged)
{
    ws_sim *sim = sf_sim(w, 1);
    ws_sub_config cfg = sf_sub_config(sim, WS_FORM_STREAM, WS_MODE_WINDOW, "orders", 0);
    cfg.delay_queue = "orders:delayed";
    ws_sub *sub = sf_subscribe(sim, &cfg);
    const char *id = sf_produce(sim, WS_FORM_STREAM, "orders", "order-1");
    assert_int_equal(sf_read(sub), 1);
    sf_do(sim, "SET orders:delayed not-a-zset"); /* after the read: its sweep would fail */
    assert_int_equal(ws_settle(sf_d(sub, 0), WS_RETRY_AFTER, 30000), 0);
    assert_int_equal(sf_pending(sim, "orders", "g"), 1);
    char want[128];
    snprintf(want, sizeof want, "[[\"%s\", ", id);
    assert_non_null(strstr(sf_q(sim, "XPENDING orders g - + 10"), want));
    /* No id to acknowledge: no XACK at all. */
    assert_int_equal(sf_count(sf_commands(sim, "flush"), "XACK"), 0);
    ws_report r = sf_read_report(sub);
    assert_int_equal(r.settles, 1);
    assert_int_equal(r.failed, 1);
    assert_string_equal(r.first_error, WRONGTYPE);
}

/* Without a window there is nothing to report on: a direct settle that fails is logged
 * by the runtime and the delivery stream goes on (dispatch.rs settle_outcome @ 042b614:
 * "ack / nack failed").  A reliable list's settle stops at its failed LREM, so its ZREM is
 * never sent (list.rs settle @ e9525ff); the value stays on the processing list, its
 * recovery member naming it. */
SF_TEST(a_direct_settle_that_fails_is_logged_not_reported)
{
    ws_sim *sim = sf_sim(w, 1);
    ws_sub_config cfg = sf_sub_config(sim, WS_FORM_RELIABLE_LIST, WS_MODE_DIRECT, "orders", 0);
    cfg.recovery = "orders:claims";
    cfg.min_idle_ms = 60000;
    ws_sub *sub = sf_subscribe(sim, &cfg);
    sf_produce(sim, WS_FORM_RELIABLE_LIST, "orders", "order-1");
    assert_int_equal(sf_read(sub), 1);
    ws_delivery *d = sf_d(sub, 0);
    assert_int_equal(ws_fault_error_nth(ws_sim_window(sim), "LREM", 1, "ERR refused"), 0);
    sf_settle(d, WS_ACK);
    char cause[160];
    snprintf(cause, sizeof cause, "settle of %s", ws_delivery_id(d));
    assert_string_equal(sf_commands(sim, cause), "LREM orders.processing 1 order-1\n");
    char note[256];
    snprintf(note, sizeof note, "-- orders: ack / nack of %s failed: ERR refused (logged by "
             "the runtime, not reported)\n", ws_delivery_id(d));
    assert_non_null(strstr(sf_trace(sim), note));
    assert_int_equal(ws_sim_get_counts(sim).reports, 0);
    assert_int_equal(sf_int(sim, "ZCARD orders:claims"), 1);
    assert_string_equal(sf_q(sim, "LRANGE orders.processing 0 -1"), "[\"order-1\"]");
    assert_int_equal(sf_read(sub), 0); /* a read, not a report */
}

SF_MAIN("sim: failure reports (§5)")
