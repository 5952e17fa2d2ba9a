/* test_sim_publish.c -- replies, bound publishers, the pool and batch handlers
 * (SEMANTICS.md §6): an InRound reply leaves after what the handler queued and only on
 * ack; a reply outside the round waits for the handler's Ok and leaves at the ack, before
 * the window (never for another outcome; a failed publish turns the ack into a retry); bound publishes join
 * the segment, unbound ones leave at once whatever the outcome; the shape of a publish
 * on each form; pool commands land at once, with replies, before the flush; a batch has
 * one segment, committed only if every member acked, and capacity = the batch size.
 *
 * Each test runs on the fake and, with --real, on redis-server too (sim_fixture.h). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sim_fixture.h"

/* A stream subscription "orders" whose replies go to the stream "receipts". */
static ws_sub *with_receipts(ws_sim *sim, ws_mode mode, int in_round)
{
    ws_sub_config cfg = sf_sub_config(sim, WS_FORM_STREAM, mode, "orders", 0);
    cfg.reply = (ws_out){WS_FORM_STREAM, "receipts"};
    cfg.reply_in_round = in_round;
    return sf_subscribe(sim, &cfg);
}

/* In a subscription with InRound receipts (mode): order-1 read (*id its id), its
 * handler's LPUSH picks sku-1 queued and its receipt-1 replied; the delivery. */
static ws_delivery *queued_and_replied(ws_sim *sim, ws_mode mode, const char **id)
{
    ws_sub *sub = with_receipts(sim, mode, 1);
    *id = sf_produce(sim, WS_FORM_STREAM, "orders", "order-1");
    assert_int_equal(sf_read(sub), 1);
    ws_delivery *d = sf_d(sub, 0);
    sf_queue(d, "LPUSH picks sku-1");
    assert_int_equal(ws_reply(d, "receipt-1", 9), 0);
    return d;
}

/* ----- Replies ------------------------------------------------------------------------------ */

/* §9: a reply in the round leaves after what the handler queued (order: queued, reply). */
SF_TEST(a_reply_in_the_round_leaves_after_what_the_handler_queued)
{
    ws_sim *sim = sf_sim(w, 1);
    const char *id;
    ws_delivery *d = queued_and_replied(sim, WS_MODE_WINDOW, &id);
    assert_int_equal(sf_int(sim, "EXISTS receipts"), 0); /* in the round: not yet */
    sf_settle(d, WS_ACK);
    char want[256];
    snprintf(want, sizeof want,
             "LPUSH picks sku-1\nXADD receipts * _payload receipt-1\nXACK orders g %s\n", id);
    assert_string_equal(sf_commands(sim, "flush"), want);
    assert_int_equal(sf_int(sim, "XLEN receipts"), 1);
}

/* A reply in the round follows the outcome: a dropped delivery's reply never leaves. */
SF_TEST(a_reply_in_the_round_of_a_dropped_delivery_never_leaves)
{
    ws_sim *sim = sf_sim(w, 1);
    ws_sub *sub = with_receipts(sim, WS_MODE_WINDOW, 1);
    sf_produce(sim, WS_FORM_STREAM, "orders", "order-1");
    assert_int_equal(sf_read(sub), 1);
    assert_int_equal(ws_reply(sf_d(sub, 0), "receipt-1", 9), 0);
    sf_settle(sf_d(sub, 0), WS_DROP);
    assert_int_equal(sf_int(sim, "EXISTS receipts"), 0);
    assert_int_equal(sf_pending(sim, "orders", "g"), 0);
}

/* A reply outside the round waits for the handler's Ok (ruststream publishing.rs: the
 * reply is delivered when the body returns Ok, before the dispatcher settles): nothing
 * leaves at ws_reply; at the ack it is published at once through the pool (cause
 * "publish of <id>"), ahead of the window's flush that carries the queued commands and
 * the XACK (order: reply, queued).  A dropped delivery's reply is never published. */
SF_TEST(a_reply_outside_the_round_leaves_at_the_ack_before_the_window)
{
    ws_sim *sim = sf_sim(w, 1);
    ws_sub *sub = with_receipts(sim, WS_MODE_WINDOW, 0);
    sf_produce_n(sim, WS_FORM_STREAM, "orders", 2);
    assert_int_equal(sf_read(sub), 2);
    ws_delivery *a = sf_d(sub, 0), *b = sf_d(sub, 1);
    char waits[160];
    snprintf(waits, sizeof waits, "-- orders: the reply of %s waits for the handler's Ok\n",
             ws_delivery_id(a));
    sf_queue(a, "LPUSH picks sku-1");
    assert_int_equal(ws_reply(a, "receipt-1", 9), 0);
    assert_int_equal(sf_int(sim, "EXISTS receipts"), 0); /* waits */
    assert_non_null(strstr(sf_trace(sim), waits));
    assert_int_equal(ws_reply(a, "receipt-1 again", 15), WS_EINVAL); /* one reply */
    sf_settle(a, WS_ACK);
    assert_int_equal(sf_int(sim, "XLEN receipts"), 1);    /* published at the ack */
    assert_int_equal(sf_int(sim, "EXISTS picks"), 0);     /* the window still owes */
    char publish[64];
    snprintf(publish, sizeof publish, "publish of %s", ws_delivery_id(a));
    assert_string_equal(sf_commands(sim, publish), "XADD receipts * _payload receipt-1\n");
    assert_int_equal(ws_reply(b, "receipt-2", 9), 0);
    sf_settle(b, WS_DROP);
    assert_int_equal(sf_int(sim, "XLEN receipts"), 1);    /* never, for the drop */
    assert_int_equal(sf_count(sf_commands(sim, NULL), "receipt-2"), 0);
    sf_in_order(sf_commands(sim, NULL), "XADD receipts * _payload receipt-1\n",
                "LPUSH picks sku-1\n", NULL);
    assert_string_equal(sf_q(sim, "LRANGE picks 0 -1"), "[\"sku-1\"]");
    assert_int_equal(sf_pending(sim, "orders", "g"), 0);
}

/* The handler's Ok publishes the reply; a publish that fails turns the outcome into a
 * retry (publishing.rs: "publish error -> retry()"): the handler's queued commands are
 * dropped with the segment and the entry is requeued (undeclared: the entry verbatim,
 * then XACK). */
SF_TEST(a_reply_outside_the_round_that_fails_turns_the_ack_into_a_retry)
{
    ws_sim *sim = sf_sim(w, 1);
    sf_do(sim, "SET receipts not-a-stream");
    ws_sub *sub = with_receipts(sim, WS_MODE_WINDOW, 0);
    const char *id = sf_produce(sim, WS_FORM_STREAM, "orders", "order-1");
    assert_int_equal(sf_read(sub), 1);
    ws_delivery *d = sf_d(sub, 0);
    sf_queue(d, "LPUSH picks sku-1");
    assert_int_equal(ws_reply(d, "receipt-1", 9), 0);
    sf_settle(d, WS_ACK);
    assert_int_equal(ws_delivery_outcome(d), WS_RETRY);
    assert_non_null(strstr(sf_trace(sim), "the outcome becomes retry"));
    char want[160];
    snprintf(want, sizeof want, "XADD orders * _payload order-1\nXACK orders g %s\n", id);
    assert_string_equal(sf_commands(sim, "flush"), want);
    assert_int_equal(sf_int(sim, "EXISTS picks"), 0);
    assert_int_equal(sf_pending(sim, "orders", "g"), 0);
    assert_int_equal(sf_int(sim, "XLEN orders"), 2);
    assert_string_equal(sf_q(sim, "GET receipts"), "\"not-a-stream\"");
}

/* Under atomic, the InRound reply sits inside MULTI/EXEC, after the queued commands and
 * before the delivery's XACK. */
SF_TEST(an_in_round_reply_under_atomic_sits_inside_multi_before_the_xack)
{
    ws_sim *sim = sf_sim(w, 1);
    const char *id;
    ws_delivery *d = queued_and_replied(sim, WS_MODE_ATOMIC, &id);
    sf_settle(d, WS_ACK);
    char want[256];
    snprintf(want, sizeof want,
             "MULTI\nLPUSH picks sku-1\nXADD receipts * _payload receipt-1\nXACK orders g %s\n"
             "EXEC\n", id);
    assert_string_equal(sf_commands(sim, "flush"), want);
}

/* ----- Bound and unbound publishes -------------------------------------------------------- */

/* §9: a bound publish leaves with the ack, in call order with the queued commands. */
SF_TEST(a_bound_publish_leaves_with_the_ack)
{
    ws_sim *sim = NULL;
    ws_sub *sub = sf_orders_read(w, &sim, WS_FORM_STREAM, WS_MODE_WINDOW, 0, 1);
    ws_delivery *d = sf_d(sub, 0);
    ws_out audit = {WS_FORM_PLAIN_LIST, "audit"};
    sf_queue(d, "LPUSH picks sku-1");
    assert_int_equal(ws_bind(d, &audit), 0);
    assert_int_equal(ws_publish(d, &audit, "audit-1", 7, NULL, 0), 0);
    sf_queue(d, "INCR picked");
    assert_int_equal(sf_int(sim, "EXISTS audit"), 0);
    sf_settle(d, WS_ACK);
    sf_in_order(sf_commands(sim, "flush"), "LPUSH picks sku-1\n",
                "LPUSH audit \"\\x00\\x00\\x00\\x00audit-1\"\n", "INCR picked\n", "XACK", NULL);
    assert_string_equal(sf_q(sim, "LRANGE audit 0 -1"), "[\"\\x00\\x00\\x00\\x00audit-1\"]");
}

/* §9: a bound publish never leaves for a dropped delivery. */
SF_TEST(a_bound_publish_never_leaves_for_a_dropped_delivery)
{
    ws_sim *sim = NULL;
    ws_sub *sub = sf_orders_read(w, &sim, WS_FORM_STREAM, WS_MODE_WINDOW, 0, 1);
    ws_delivery *d = sf_d(sub, 0);
    ws_out audit = {WS_FORM_PLAIN_LIST, "audit"};
    assert_int_equal(ws_bind(d, &audit), 0);
    assert_int_equal(ws_publish(d, &audit, "audit-1", 7, NULL, 0), 0);
    sf_settle(d, WS_DROP);
    assert_int_equal(sf_int(sim, "EXISTS audit"), 0);
}

/* §9: an unbound publish leaves at once, even when the delivery is dropped. */
SF_TEST(an_unbound_publish_leaves_at_once_even_when_dropped)
{
    ws_sim *sim = NULL;
    ws_sub *sub = sf_orders_read(w, &sim, WS_FORM_STREAM, WS_MODE_WINDOW, 0, 1);
    ws_delivery *d = sf_d(sub, 0);
    ws_out audit = {WS_FORM_PLAIN_LIST, "audit"};
    assert_int_equal(ws_publish(d, &audit, "audit-1", 7, NULL, 0), 0);
    assert_string_equal(sf_q(sim, "LRANGE audit 0 -1"), "[\"\\x00\\x00\\x00\\x00audit-1\"]");
    sf_settle(d, WS_DROP);
    assert_string_equal(sf_q(sim, "LRANGE audit 0 -1"), "[\"\\x00\\x00\\x00\\x00audit-1\"]");
    assert_int_equal(sf_count(sf_commands(sim, "flush"), "audit"), 0);
}

/* A publish joining a round has its form's shape: a stream gets XADD with _payload and
 * h:<name> fields, a list LPUSH of the frame, a channel PUBLISH of the frame; the frame
 * of a publish with headers is the framework's binary frame (envelope.rs: [u32 BE header
 * count], per header [u32 BE name length][name][u32 BE value length][value], then the
 * payload to the end), without headers too: the count 0 (the framework's publishers frame
 * every value: pubsub.rs, list.rs `frame`). */
SF_TEST(a_publish_joining_a_round_has_its_forms_shape)
{
    ws_sim *sim = NULL;
    ws_sub *sub = sf_orders_read(w, &sim, WS_FORM_STREAM, WS_MODE_WINDOW, 0, 1);
    ws_delivery *d = sf_d(sub, 0);
    ws_out outs[3] = {{WS_FORM_STREAM, "events"}, {WS_FORM_RELIABLE_LIST, "audit"},
                      {WS_FORM_CHANNEL, "alerts"}};
    ws_header h = {"trace", "abc", 0};
    for (size_t i = 0; i < 3; i++) {
        assert_int_equal(ws_bind(d, &outs[i]), 0);
        assert_int_equal(ws_publish(d, &outs[i], "p-1", 3, &h, 1), 0);
    }
    assert_int_equal(ws_publish(d, &outs[1], "plain", 5, NULL, 0), 0);
    sf_settle(d, WS_ACK);
    sf_in_order(sf_commands(sim, "flush"), "XADD events * _payload p-1 h:trace abc\n",
                "LPUSH audit \"\\x00\\x00\\x00\\x01\\x00\\x00\\x00\\x05trace"
                "\\x00\\x00\\x00\\x03abcp-1\"\n",
                "PUBLISH alerts \"\\x00\\x00\\x00\\x01\\x00\\x00\\x00\\x05trace"
                "\\x00\\x00\\x00\\x03abcp-1\"\n",
                "LPUSH audit \"\\x00\\x00\\x00\\x00plain\"\n", "XACK", NULL);
    assert_int_equal(sf_int(sim, "LLEN audit"), 2);
    static const char frame[] = "\0\0\0\1\0\0\0\5trace\0\0\0\3abcp-1";
    const fr_reply *r = NULL;
    assert_int_equal(ws_sim_command_line(sim, "LINDEX audit 1", &r), 0);
    assert_int_equal(r->type, FR_REPLY_BULK);
    assert_int_equal(r->len, sizeof frame - 1);
    assert_memory_equal(r->str, frame, sizeof frame - 1);
}

/* ----- The pool ------------------------------------------------------------------------------ */

/* §9: a handler's pool write lands at once, with its reply, on every form, whatever the
 * outcome. */
SF_TEST_FORMS(a_pool_write_lands_at_once_whatever_the_outcome)
{
    ws_sim *sim = NULL;
    ws_sub *sub = sf_orders_read(w, &sim, form, WS_MODE_WINDOW, 0, 2);
    assert_string_equal(sf_pool(sim, sf_d(sub, 0), "INCR receipts:sequence"), ":1");
    assert_string_equal(sf_q(sim, "GET receipts:sequence"), "\"1\"");
    sf_settle(sf_d(sub, 0), WS_DROP);
    assert_string_equal(sf_pool(sim, sf_d(sub, 1), "INCR receipts:sequence"), ":2");
    assert_int_equal(ws_abandon(sf_d(sub, 1)), 0);
    assert_string_equal(sf_q(sim, "GET receipts:sequence"), "\"2\"");
    assert_int_equal(ws_sim_get_counts(sim).pool_round_trips, 2);
}

/* Pool commands reach Redis before any segment command of the flush, even when the pool
 * command was made after the segment's. */
SF_TEST(pool_commands_reach_redis_before_the_flush)
{
    ws_sim *sim = NULL;
    ws_sub *sub = sf_orders_read(w, &sim, WS_FORM_STREAM, WS_MODE_ATOMIC, 0, 1);
    ws_delivery *d = sf_d(sub, 0);
    sf_queue(d, "RPUSH log queued");
    assert_string_equal(sf_pool(sim, d, "RPUSH log pooled"), ":1");
    sf_settle(d, WS_ACK);
    assert_string_equal(sf_q(sim, "LRANGE log 0 -1"), "[\"pooled\", \"queued\"]");
    /* Never inside MULTI. */
    const char *flush = sf_commands(sim, "flush");
    assert_int_equal(sf_count(flush, "pooled"), 0);
    /* A pool command outside any handler. */
    const fr_reply *r = NULL;
    assert_int_equal(ws_pool_line(sim, NULL, "GET nothing", &r), 0);
    assert_int_equal(r->type, FR_REPLY_NIL);
}

/* ----- Batches --------------------------------------------------------------------------------- */

/* A stream subscription with batch handlers of n. */
static ws_sub *batched(ws_sim *sim, ws_mode mode, size_t n, int entries)
{
    ws_sub_config cfg = sf_sub_config(sim, WS_FORM_STREAM, mode, "orders", 0);
    cfg.batch = n;
    ws_sub *sub = sf_subscribe(sim, &cfg);
    sf_produce_n(sim, WS_FORM_STREAM, "orders", entries);
    return sub;
}

/* §9: an acked batch of 3 sends its 3 writes (one segment for the batch), and the batch
 * window settles every entry. */
SF_TEST(an_acked_batch_of_3_sends_its_3_writes)
{
    ws_sim *sim = sf_sim(w, 1);
    ws_sub *sub = batched(sim, WS_MODE_WINDOW, 3, 3);
    assert_int_equal(sf_read(sub), 3);
    /* One slot for the batch. */
    assert_int_equal(ws_delivery_slot(sf_d(sub, 0)), ws_delivery_slot(sf_d(sub, 2)));
    for (size_t i = 0; i < 3; i++) sf_queue(sf_d(sub, i), "RPUSH picks %zu", i + 1);
    sf_settle(sf_d(sub, 0), WS_ACK);
    sf_settle(sf_d(sub, 1), WS_ACK);
    assert_int_equal(sf_int(sim, "EXISTS picks"), 0);
    sf_settle(sf_d(sub, 2), WS_ACK);
    char want[256];
    snprintf(want, sizeof want, "RPUSH picks 1\nRPUSH picks 2\nRPUSH picks 3\nXACK orders g %s %s %s\n",
             ws_delivery_id(sf_d(sub, 0)), ws_delivery_id(sf_d(sub, 1)),
             ws_delivery_id(sf_d(sub, 2)));
    assert_string_equal(sf_commands(sim, "flush"), want);
    assert_int_equal(sf_pending(sim, "orders", "g"), 0);
}

/* §9: a batch with one dropped member sends none of its writes; every member settles. */
SF_TEST(a_dropped_batch_sends_none)
{
    ws_sim *sim = sf_sim(w, 1);
    ws_sub *sub = batched(sim, WS_MODE_WINDOW, 3, 3);
    assert_int_equal(sf_read(sub), 3);
    for (size_t i = 0; i < 3; i++) sf_queue(sf_d(sub, i), "RPUSH picks %zu", i + 1);
    sf_settle(sf_d(sub, 0), WS_ACK);
    sf_settle(sf_d(sub, 1), WS_DROP);
    sf_settle(sf_d(sub, 2), WS_DROP);
    assert_int_equal(sf_int(sim, "EXISTS picks"), 0);
    assert_int_equal(sf_pending(sim, "orders", "g"), 0);
    /* The acked member was acked without its effects: §8 calls that lost. */
    sf_expect_violations(w);
    const ws_violation *v = sf_violation(sim, "lost");
    assert_non_null(v);
    assert_string_equal(v->entry, ws_delivery_id(sf_d(sub, 0)));
}

/* Capacity is the batch size: with batches of 3, a read is one batch (COUNT 3, the batch
 * size: source.rs "one batch per read"), and with two batches read, the window flushes
 * after the first batch's three settles while the second batch is still outstanding. */
SF_TEST(a_batch_windows_capacity_is_the_batch_size)
{
    ws_sim *sim = sf_sim(w, 1);
    ws_sub *sub = batched(sim, WS_MODE_WINDOW, 3, 6);
    assert_int_equal(sf_read(sub), 3);
    ws_delivery *first[3];
    for (size_t i = 0; i < 3; i++) first[i] = sf_d(sub, i);
    assert_int_equal(sf_read(sub), 3);
    assert_int_equal(sf_count(sf_commands(sim, "read"), "XREADGROUP GROUP g ruststream-0 "
                              "COUNT 3 BLOCK 100 STREAMS orders >\n"), 2);
    assert_int_not_equal(ws_delivery_slot(first[0]), ws_delivery_slot(sf_d(sub, 0)));
    for (size_t i = 0; i < 3; i++) sf_settle(first[i], WS_ACK);
    assert_int_equal(ws_sim_get_counts(sim).flushes, 1);
    assert_non_null(strstr(sf_trace(sim), "flush 1 (capacity)"));
    assert_int_equal(sf_pending(sim, "orders", "g"), 3);
    for (size_t i = 0; i < 3; i++) sf_settle(sf_d(sub, i), WS_ACK);
    assert_int_equal(ws_sim_get_counts(sim).flushes, 2);
    assert_int_equal(sf_pending(sim, "orders", "g"), 0);
}

SF_MAIN("sim: publishes, the pool, batches (§6)")
