/* test_sim_atomic.c -- atomic mode (SEMANTICS.md §4): each acked segment is MULTI, the
 * handler's commands, the delivery's own settle, EXEC; an ack that queued nothing joins
 * the shared XACK; drop and retry go through the shared steps; a transaction Redis
 * refuses at queue time (EXECABORT) runs nothing and leaves the entry pending; a run-time
 * error inside EXEC fails alone; on a cluster a segment outside the stream's slot is
 * refused with CROSSSLOT.
 *
 * Each test runs on the fake and, with --real, on redis-server too (sim_fixture.h). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sim_fixture.h"

/* §9: the acked delivery's segment is MULTI, its command, its own settle, EXEC. */
SF_TEST_FORMS(an_atomic_segment_leaves_with_the_ack)
{
    ws_sim *sim = sf_sim(w, 1);
    ws_sub *sub = sf_sub(sim, form, WS_MODE_ATOMIC, "orders", 0);
    const char *id = sf_produce(sim, form, "orders", "order-1");
    assert_int_equal(sf_read(sub), 1);
    sf_queue(sf_d(sub, 0), "LPUSH picks sku-1");
    sf_settle(sf_d(sub, 0), WS_ACK);
    assert_string_equal(sf_q(sim, "LRANGE picks 0 -1"), "[\"sku-1\"]");
    assert_int_equal(sf_unsettled(sim, form, "orders"), 0);
    char want[256];
    if (form == WS_FORM_STREAM)
        snprintf(want, sizeof want, "MULTI\nLPUSH picks sku-1\nXACK orders g %s\nEXEC\n", id);
    else if (form == WS_FORM_RELIABLE_LIST)
        snprintf(want, sizeof want,
                 "MULTI\nLPUSH picks sku-1\nLREM orders.processing 1 order-1\nEXEC\n");
    else
        snprintf(want, sizeof want, "MULTI\nLPUSH picks sku-1\nEXEC\n");
    assert_string_equal(sf_commands(sim, "flush"), want);
    assert_int_equal(ws_sim_get_counts(sim).flush_round_trips, 1);
}

/* §9: a dropped delivery's half-built segment never leaves; the drop settles alone. */
SF_TEST_FORMS(an_atomic_segment_of_a_dropped_delivery_never_leaves)
{
    ws_sim *sim = sf_sim(w, 1);
    ws_sub *sub = sf_sub(sim, form, WS_MODE_ATOMIC, "orders", 0);
    const char *id = sf_produce(sim, form, "orders", "order-1");
    assert_int_equal(sf_read(sub), 1);
    sf_queue(sf_d(sub, 0), "LPUSH picks sku-1");
    sf_settle(sf_d(sub, 0), WS_DROP);
    assert_int_equal(sf_int(sim, "EXISTS picks"), 0);
    assert_int_equal(sf_unsettled(sim, form, "orders"), 0);
    const char *flush = sf_commands(sim, "flush");
    assert_int_equal(sf_count(flush, "MULTI"), 0);
    char want[256];
    if (form == WS_FORM_STREAM) {
        snprintf(want, sizeof want, "XACK orders g %s\n", id);
        assert_string_equal(flush, want);
    } else if (form == WS_FORM_RELIABLE_LIST) {
        assert_string_equal(flush, "LREM orders.processing 1 order-1\n");
    } else {
        assert_string_equal(flush, "");
    }
}

/* An ack whose handler queued nothing is not wrapped: its id joins the shared XACK, with
 * the dropped one's, after the acked segment's MULTI/EXEC, in one round trip. */
SF_TEST(an_atomic_ack_that_queued_nothing_joins_the_shared_xack)
{
    ws_sim *sim = NULL;
    ws_sub *sub = sf_orders_read(w, &sim, WS_FORM_STREAM, WS_MODE_ATOMIC, 0, 3);
    ws_delivery *a = sf_d(sub, 0), *b = sf_d(sub, 1), *c = sf_d(sub, 2);
    sf_settle(b, WS_ACK);             /* nothing queued */
    sf_queue(a, "LPUSH picks sku-1");
    sf_settle(a, WS_ACK);             /* a segment */
    sf_queue(c, "LPUSH picks never");
    sf_settle(c, WS_DROP);
    char want[512];
    snprintf(want, sizeof want,
             "MULTI\nLPUSH picks sku-1\nXACK orders g %s\nEXEC\nXACK orders g %s %s\n",
             ws_delivery_id(a), ws_delivery_id(b), ws_delivery_id(c));
    assert_string_equal(sf_commands(sim, "flush"), want);
    assert_int_equal(ws_sim_get_counts(sim).flush_round_trips, 1);
    assert_string_equal(sf_q(sim, "LRANGE picks 0 -1"), "[\"sku-1\"]");
    assert_int_equal(sf_pending(sim, "orders", "g"), 0);
}

/* A retry discards the half-built segment; its copy and XACK go through the shared steps
 * (copy in round trip 1, the XACK in round trip 2), as in plain mode.  Undeclared, the
 * retry is the broker's requeue: the copy is the entry verbatim, the counter not raised. */
SF_TEST(an_atomic_retry_goes_through_the_shared_steps)
{
    ws_sim *sim = sf_sim(w, 1);
    ws_sub *sub = sf_sub(sim, WS_FORM_STREAM, WS_MODE_ATOMIC, "orders", 0);
    const char *id = sf_produce(sim, WS_FORM_STREAM, "orders", "order-1");
    assert_int_equal(sf_read(sub), 1);
    sf_queue(sf_d(sub, 0), "LPUSH picks never");
    sf_settle(sf_d(sub, 0), WS_RETRY);
    char want[256];
    snprintf(want, sizeof want, "XADD orders * _payload order-1\nXACK orders g %s\n", id);
    assert_string_equal(sf_commands(sim, "flush"), want);
    assert_int_equal(ws_sim_get_counts(sim).flush_round_trips, 2);
    assert_int_equal(sf_int(sim, "EXISTS picks"), 0);
    assert_int_equal(sf_pending(sim, "orders", "g"), 0);
    assert_int_equal(sf_int(sim, "XLEN orders"), 2);
    assert_int_equal(sf_read(sub), 1);
    assert_int_equal(ws_delivery_retries(sf_d(sub, 0)), 0);
}

/* With max-attempts declared the retry is the runtime's: the half-built segment goes, the
 * window settles the entry as dropped (the XACK alone in the flush), then the copy with the
 * counter raised leaves on its own round trip, outside the window, with no MULTI. */
SF_TEST(an_atomic_declared_retry_settles_then_copies_outside_the_window)
{
    ws_sim *sim = sf_sim(w, 1);
    ws_sub_config cfg = sf_sub_config(sim, WS_FORM_STREAM, WS_MODE_ATOMIC, "orders", 0);
    cfg.max_attempts = 3;
    ws_sub *sub = sf_subscribe(sim, &cfg);
    const char *id = sf_produce(sim, WS_FORM_STREAM, "orders", "order-1");
    assert_int_equal(sf_read(sub), 1);
    sf_queue(sf_d(sub, 0), "LPUSH picks never");
    sf_settle(sf_d(sub, 0), WS_RETRY);
    char want[256];
    snprintf(want, sizeof want, "XACK orders g %s\n", id);
    assert_string_equal(sf_commands(sim, "flush"), want);
    assert_int_equal(ws_sim_get_counts(sim).flush_round_trips, 1);
    assert_string_equal(sf_commands(sim, "retry copy of"),
                        "XADD orders * _payload order-1 h:x-ruststream-retry-count 1\n");
    assert_int_equal(sf_count(sf_commands(sim, NULL), "MULTI"), 0);
    assert_int_equal(sf_int(sim, "EXISTS picks"), 0);
    assert_int_equal(sf_pending(sim, "orders", "g"), 0);
    sf_ack_copy(sub, 1);
}

/* §9: LPUSH plus an INCR without its key: Redis refuses INCR at queue time, EXEC answers
 * EXECABORT, nothing of the segment runs, its XACK neither: the list stays empty and the
 * entry stays pending.  The failure is reported. */
SF_TEST(an_atomic_segment_redis_refuses_runs_nothing)
{
    ws_sim *sim = NULL;
    ws_sub *sub = sf_orders_read(w, &sim, WS_FORM_STREAM, WS_MODE_ATOMIC, 0, 2);
    ws_delivery *d = sf_d(sub, 0);
    sf_queue(d, "LPUSH picks sku-1");
    sf_queue(d, "INCR");
    assert_int_equal(ws_settle(d, WS_ACK, 0), 0); /* the ack succeeded, for the handler */
    sf_settle(sf_d(sub, 1), WS_ACK);
    assert_int_equal(sf_int(sim, "EXISTS picks"), 0);
    assert_int_equal(sf_pending(sim, "orders", "g"), 1);
    char want[128];
    snprintf(want, sizeof want, "[[\"%s\", ", ws_delivery_id(d));
    assert_non_null(strstr(sf_q(sim, "XPENDING orders g - + 10"), want));
    assert_non_null(strstr(sf_trace(sim), "EXEC -> -EXECABORT"));
    ws_report r = sf_read_report(sub);
    assert_string_equal(r.subscription, "orders");
    /* MULTI, LPUSH, INCR, XACK, EXEC: 5 replies; INCR's and EXEC's are errors. */
    assert_int_equal(r.commands, 5);
    assert_int_equal(r.failed, 2);
    assert_string_equal(r.first_error, "ERR wrong number of arguments for 'incr' command");
}

/* A command failing at run time inside EXEC (LPUSH on a string: WRONGTYPE) fails alone:
 * the others, the XACK included, take effect.  Redis has no rollback. */
SF_TEST(a_run_time_error_inside_exec_fails_alone)
{
    ws_sim *sim = sf_sim(w, 1);
    ws_sub *sub = sf_sub(sim, WS_FORM_STREAM, WS_MODE_ATOMIC, "orders", 0);
    sf_do(sim, "SET ledger not-a-list");
    sf_produce(sim, WS_FORM_STREAM, "orders", "order-1");
    assert_int_equal(sf_read(sub), 1);
    ws_delivery *d = sf_d(sub, 0);
    sf_queue(d, "LPUSH ledger entry-1");
    sf_queue(d, "HINCRBY balances acct 10");
    sf_settle(d, WS_ACK);
    assert_string_equal(sf_q(sim, "GET ledger"), "\"not-a-list\"");
    assert_string_equal(sf_q(sim, "HGET balances acct"), "\"10\"");
    assert_int_equal(sf_pending(sim, "orders", "g"), 0);
    ws_report r = sf_read_report(sub);
    /* MULTI +OK, 3 × +QUEUED, EXEC [error, :1, :1]. */
    assert_int_equal(r.commands, 5);
    assert_int_equal(r.settles, 0);
    assert_int_equal(r.failed, 1);
    assert_string_equal(r.first_error,
                        "WRONGTYPE Operation against a key holding the wrong kind of value");
    /* The check accepts it: run-time errors inside EXEC are reported, not hidden. */
}

/* An atomic reliable list settles inside each segment: LREM in the MULTI block. */
SF_TEST(an_atomic_reliable_list_settles_inside_each_segment)
{
    ws_sim *sim = NULL;
    ws_sub *sub = sf_orders_read(w, &sim, WS_FORM_RELIABLE_LIST, WS_MODE_ATOMIC, 0, 2);
    sf_queue(sf_d(sub, 0), "RPUSH picks a");
    sf_settle(sf_d(sub, 0), WS_ACK);
    sf_queue(sf_d(sub, 1), "RPUSH picks b");
    sf_settle(sf_d(sub, 1), WS_ACK);
    assert_string_equal(sf_commands(sim, "flush"),
                        "MULTI\nRPUSH picks a\nLREM orders.processing 1 order-1\nEXEC\n"
                        "MULTI\nRPUSH picks b\nLREM orders.processing 1 order-2\nEXEC\n");
    assert_int_equal(sf_int(sim, "LLEN orders.processing"), 0);
    assert_string_equal(sf_q(sim, "LRANGE picks 0 -1"), "[\"a\", \"b\"]");
}

/* A fully acked batch under atomic: MULTI, the batch's body, one XACK per member, EXEC. */
SF_TEST(an_atomic_batch_settles_every_member_inside_its_block)
{
    ws_sim *sim = sf_sim(w, 1);
    ws_sub_config cfg = sf_sub_config(sim, WS_FORM_STREAM, WS_MODE_ATOMIC, "orders", 0);
    cfg.batch = 3;
    ws_sub *sub = sf_subscribe(sim, &cfg);
    sf_produce_n(sim, WS_FORM_STREAM, "orders", 3);
    assert_int_equal(sf_read(sub), 3);
    for (size_t i = 0; i < 3; i++) sf_queue(sf_d(sub, i), "RPUSH picks %zu", i + 1);
    for (size_t i = 0; i < 3; i++) sf_settle(sf_d(sub, i), WS_ACK);
    char want[512];
    snprintf(want, sizeof want,
             "MULTI\nRPUSH picks 1\nRPUSH picks 2\nRPUSH picks 3\nXACK orders g %s\n"
             "XACK orders g %s\nXACK orders g %s\nEXEC\n",
             ws_delivery_id(sf_d(sub, 0)), ws_delivery_id(sf_d(sub, 1)),
             ws_delivery_id(sf_d(sub, 2)));
    assert_string_equal(sf_commands(sim, "flush"), want);
    assert_int_equal(sf_pending(sim, "orders", "g"), 0);
}

/* Cluster emulation (fake only): segments whose keys share the stream's slot through a
 * hash tag ({payments}) commit; a segment with a key outside it is refused with
 * CROSSSLOT, runs nothing, and leaves its entry pending. */
SF_TEST(an_atomic_segment_outside_the_streams_slot_is_refused_with_crossslot)
{
    ws_sim_config cfg = {.seed = 1, .cluster = 1}; /* --real: a one-node cluster */
    ws_sim *sim = sf_sim_cfg(w, &cfg);
    ws_sub *sub = sf_sub(sim, WS_FORM_STREAM, WS_MODE_ATOMIC, "{payments}", 0);
    sf_produce(sim, WS_FORM_STREAM, "{payments}", "pay-1");
    sf_produce(sim, WS_FORM_STREAM, "{payments}", "pay-2");
    assert_int_equal(sf_read(sub), 2);
    ws_delivery *good = sf_d(sub, 0), *bad = sf_d(sub, 1);
    sf_queue(good, "LPUSH {payments}:ledger pay-1:100");
    sf_queue(good, "HINCRBY {payments}:balances acct 100");
    sf_settle(good, WS_ACK);
    sf_queue(bad, "LPUSH ledger pay-2:200");
    sf_settle(bad, WS_ACK);
    assert_string_equal(sf_q(sim, "LRANGE {payments}:ledger 0 -1"), "[\"pay-1:100\"]");
    assert_int_equal(sf_int(sim, "EXISTS ledger"), 0);
    assert_int_equal(sf_pending(sim, "{payments}", "g"), 1);
    assert_non_null(strstr(sf_trace(sim), "CROSSSLOT"));
    ws_report r = sf_read_report(sub);
    assert_non_null(strstr(r.first_error, "CROSSSLOT"));
    /* With cluster emulation the engine warned before sending, naming the key. */
    assert_int_equal(ws_sim_warning_count(sim), 1);
    assert_non_null(strstr(ws_sim_warning(sim, 0), "ledger"));
    assert_null(ws_sim_warning(sim, 1));
}

/* retry_after with a delay queue under atomic: the half-built segment goes; ZADD, then
 * the shared XACK, as in plain mode. */
SF_TEST(an_atomic_retry_after_goes_through_the_shared_steps)
{
    ws_sim *sim = sf_sim(w, 1);
    ws_sub_config cfg = sf_sub_config(sim, WS_FORM_STREAM, WS_MODE_ATOMIC, "orders", 0);
    cfg.delay_queue = "orders:delayed";
    ws_sub *sub = sf_subscribe(sim, &cfg);
    const char *id = sf_produce(sim, WS_FORM_STREAM, "orders", "order-1");
    assert_int_equal(sf_read(sub), 1);
    sf_queue(sf_d(sub, 0), "LPUSH picks never");
    assert_int_equal(ws_settle(sf_d(sub, 0), WS_RETRY_AFTER, 1000), 0);
    char xack[128];
    snprintf(xack, sizeof xack, "XACK orders g %s\n", id);
    const char *flush = sf_commands(sim, "flush");
    sf_in_order(flush, "ZADD orders:delayed ", xack, NULL);
    assert_int_equal(sf_count(flush, "MULTI"), 0);
    assert_int_equal(sf_int(sim, "EXISTS picks"), 0);
    assert_int_equal(sf_int(sim, "ZCARD orders:delayed"), 1);
}

SF_MAIN("sim: atomic mode (§4)")
