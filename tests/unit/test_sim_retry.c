/* test_sim_retry.c -- retry and retry_after (SEMANTICS.md §2.1, §2.2, as the framework's
 * runtime does them: docs/engine.md).  retry_after with a delay queue: ZADD of a member
 * holding the id and the copy (delay.rs encode_member: [u32 BE id length][id][binary
 * frame]), PEXPIRE with a TTL, and the sweep before each read (ZRANGEBYSCORE, then per
 * member ZREM and XADD only if the ZREM removed it, each its own round trip); without one,
 * a timer publishes the copy through the pool when the clock passes the delay, in deadline
 * order, on every form.  A plain retry is the broker's requeue (a stream's copy is the
 * entry verbatim: _payload and h:* only; a plain list cannot requeue); max-attempts and
 * dead-letter make it the runtime's copy with the counter raised, to the dead letter or
 * rejected at the cap.
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
    assert_int_equal(ws_delivery_retries(copy), 1); /* every path raises the counter */
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

/* A plain list and a channel settle nothing and have no delay of their own, yet a
 * retry_after is the runtime's (dispatch.rs settle_nack_after -> publish_copy): after the
 * delay a framed copy, the counter raised, is LPUSHed or PUBLISHed through the pool. */
SF_TEST_UNSETTLED(a_delayed_retry_leaves_nothing_it_queued)
{
    delayed_retry(w, form, NULL);
}

/* The copy a plain list's or a channel's retry_after publishes, as sent: the frame of one
 * header, x-ruststream-retry-count 1, then the payload. */
SF_TEST_UNSETTLED(a_delayed_retry_copy_is_framed_with_the_counter)
{
    ws_sim *sim = NULL;
    ws_sub *sub = sf_orders_read(w, &sim, form, WS_MODE_WINDOW, 0, 1);
    int64_t d = sf_ms(w, 2000, 200);
    assert_int_equal(ws_settle(sf_d(sub, 0), WS_RETRY_AFTER, d), 0);
    assert_string_equal(sf_commands(sim, "timer"), "");
    assert_int_equal(ws_sim_advance(sim, d), 0);
    char want[160];
    snprintf(want, sizeof want,
             "%s orders \"\\x00\\x00\\x00\\x01\\x00\\x00\\x00\\x18"
             "x-ruststream-retry-count\\x00\\x00\\x00\\x011order-1\"\n",
             form == WS_FORM_CHANNEL ? "PUBLISH" : "LPUSH");
    assert_string_equal(sf_commands(sim, "retry timer of order-1"), want);
    sf_ack_copy(sub, 1);
}

/* An undeclared retry on a plain list or a channel is the broker's requeue, which they do
 * not have (AckError::Unsupported): nothing is published, the message is gone (a trace
 * note says so).  With max-attempts declared the same retry is the runtime's: a framed
 * copy, the counter raised, at once. */
SF_TEST_UNSETTLED(an_undeclared_retry_publishes_nothing)
{
    ws_sim *sim = NULL;
    ws_sub *sub = sf_orders_read(w, &sim, form, WS_MODE_WINDOW, 0, 1);
    sf_queue(sf_d(sub, 0), "INCR handled");
    sf_settle(sf_d(sub, 0), WS_RETRY);
    assert_non_null(strstr(sf_trace(sim), "cannot requeue order-1 (nothing is published; "
                                          "the message is gone)"));
    const char *all = sf_commands(sim, NULL);
    /* the produce's LPUSH or PUBLISH alone */
    assert_int_equal(sf_count(all, form == WS_FORM_CHANNEL ? "PUBLISH orders" : "LPUSH orders"),
                     1);
    assert_int_equal(sf_count(all, "INCR"), 0);
    assert_int_equal(sf_read(sub), 0);

    /* another key: on redis-server the first simulation's subscriber still listens */
    ws_sim *declared = sf_sim(w, 1);
    ws_sub_config cfg = sf_sub_config(declared, form, WS_MODE_WINDOW, "jobs", 0);
    cfg.max_attempts = 3;
    sub = sf_subscribe(declared, &cfg);
    sf_produce(declared, form, "jobs", "job-1");
    assert_int_equal(sf_read(sub), 1);
    sf_settle(sf_d(sub, 0), WS_RETRY);
    assert_int_equal(sf_count(sf_commands(declared, "retry copy of job-1"), " jobs "), 1);
    sf_ack_copy(sub, 1);
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
    char zadd[128]; /* the member starts with the id's length, 15: \x0f */
    snprintf(zadd, sizeof zadd, "ZADD orders:delayed %lld \"\\x00\\x00\\x00\\x%02zx%s",
             (long long)(now + 5000), strlen(id), id);
    char xack[128];
    snprintf(xack, sizeof xack, "XACK orders g %s\n", id);
    const char *flush = sf_commands(sim, "flush");
    sf_in_order(flush, zadd, "PEXPIRE orders:delayed 60000\n", xack, NULL);
    assert_int_equal(ws_sim_get_counts(sim).flush_round_trips, 2);
    assert_int_equal(sf_int(sim, "ZCARD orders:delayed"), 1);
    assert_true(sf_int(sim, "PEXPIRETIME orders:delayed") > now);
    assert_int_equal(sf_pending(sim, "orders", "g"), 0);
}

static uint32_t be32(const char *p)
{
    const unsigned char *u = (const unsigned char *)p;
    return (uint32_t)u[0] << 24 | (uint32_t)u[1] << 16 | (uint32_t)u[2] << 8 | u[3];
}

/* Splits a delay-queue member ([u32 BE id length][id], then the binary frame: [u32 BE
 * header count], per header [u32 BE name length][name][u32 BE value length][value], the
 * payload to the end) into strings: the id, then name, value per header, then the payload.
 * Returns how many. */
static size_t decode_member(const char *p, size_t len, const char **s, size_t *l, size_t max)
{
    size_t pos = 0, n = 0;
    assert_true(len >= 4);
    size_t idlen = be32(p);
    assert_true(idlen <= len - 4);
    s[n] = p + 4;
    l[n++] = idlen;
    pos = 4 + idlen;
    assert_true(len - pos >= 4);
    size_t nh = be32(p + pos);
    pos += 4;
    for (size_t i = 0; i < 2 * nh; i++) {
        assert_true(len - pos >= 4 && n < max);
        size_t v = be32(p + pos);
        pos += 4;
        assert_true(v <= len - pos);
        s[n] = p + pos;
        l[n++] = v;
        pos += v;
    }
    assert_true(n < max);
    s[n] = p + pos;
    l[n++] = len - pos;
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
    assert_int_equal(n, 6); /* the id, two headers, the payload */
    assert_int_equal(l[0], strlen(id));
    assert_memory_equal(s[0], id, l[0]);
    assert_int_equal(l[1], 6);
    assert_memory_equal(s[1], "tenant", 6);
    assert_int_equal(l[2], 4);
    assert_memory_equal(s[2], "t:1\n", 4);
    assert_int_equal(l[3], 24);
    assert_memory_equal(s[3], "x-ruststream-retry-count", 24);
    assert_int_equal(l[4], 1);
    assert_memory_equal(s[4], "1", 1);
    assert_int_equal(l[5], plen);
    assert_memory_equal(s[5], payload, plen);
    /* The engine's decoder agrees: the id, then the copy's fields in stream form. */
    char **str = NULL;
    size_t *lens = NULL;
    long k = ws_delay_member_decode(r->elements[0].str, r->elements[0].len, &str, &lens);
    assert_int_equal(k, 7);
    assert_memory_equal(str[0], id, strlen(id));
    assert_string_equal(str[1], "_payload");
    assert_int_equal(lens[2], plen);
    assert_memory_equal(str[2], payload, plen);
    assert_string_equal(str[3], "h:tenant");
    assert_string_equal(str[5], "h:x-ruststream-retry-count");
    assert_string_equal(str[6], "1");
    ws_strings_free(str, lens, (size_t)k);
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
    sf_ack_copy(sub, 2);
}

/* The sweep before a read, through the pool (the window connection): ZRANGEBYSCORE
 * <zset> 0 <now> LIMIT 0 128, then per member ZREM and XADD of the copy only where the
 * ZREM removed it, each a round trip of its own (here the first ZREM answers an injected
 * error: the sweep ends there and the read with it -- delay.rs sweep_due's `?` -- no copy,
 * the member stays for the next sweep). */
SF_TEST(the_delay_queue_sweep_adds_a_copy_only_where_zrem_removed_the_member)
{
    ws_sim *sim = sf_sim(w, 1);
    ws_sub *sub = orders(sim, "orders:delayed", 0);
    sf_produce(sim, WS_FORM_STREAM, "orders", "order-1");
    assert_int_equal(sf_read(sub), 1);
    assert_int_equal(ws_settle(sf_d(sub, 0), WS_RETRY_AFTER, 1000), 0);
    assert_int_equal(ws_sim_advance(sim, 1000), 0);
    assert_int_equal(ws_fault_error_nth(ws_sim_window(sim), "ZREM", 1, NULL), 0);
    int64_t now = ws_sim_now(sim);
    ws_read_result rr;
    assert_int_equal(ws_read(sub, &rr), WS_EINVAL);
    assert_string_equal(ws_sim_errstr(sim), "delay-queue sweep before read 2 of orders "
                        "failed: ERR injected by wsim");
    assert_int_equal(sf_count(sf_commands(sim, "read 2 of orders"), "XREADGROUP"), 0);
    assert_int_equal(sf_int(sim, "ZCARD orders:delayed"), 1);
    assert_int_equal(sf_int(sim, "XLEN orders"), 1);
    char range[128];
    snprintf(range, sizeof range, "ZRANGEBYSCORE orders:delayed 0 %lld LIMIT 0 128\n",
             (long long)now);
    sf_in_order(sf_commands(sim, "before read 2"), range, "ZREM orders:delayed \"", NULL);
    assert_int_equal(sf_count(sf_commands(sim, "before read 2"), "XADD"), 0);
    /* The next sweep moves it: three round trips of one command each. */
    assert_int_equal(sf_read(sub), 1);
    assert_int_equal(ws_delivery_retries(sf_d(sub, 0)), 1);
    sf_in_order(sf_commands(sim, "read 3"), "ZRANGEBYSCORE", "ZREM orders:delayed \"",
                "XADD orders * _payload order-1 h:x-ruststream-retry-count 1\n",
                "XREADGROUP", NULL);
    size_t sweeps = 0;
    for (size_t i = 0; i < ws_sim_round_trip_count(sim); i++) {
        ws_rt_info rt;
        assert_int_equal(ws_sim_round_trip(sim, i, &rt), 0);
        if (strcmp(rt.cause, "delay-queue sweep before read 3 of orders") != 0) continue;
        assert_string_equal(rt.conn, "window");
        assert_int_equal(rt.n, 1);
        sweeps++;
    }
    assert_int_equal(sweeps, 3);
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
    sf_produce_n(sim, WS_FORM_STREAM, "orders", 2);
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

/* A reliable list's retry_after has no native delay: the runtime settles it now (LREM)
 * and LPUSHes a copy through the pool after the delay, re-framed with the counter raised
 * (dispatch.rs publish_copy; envelope.rs frame). */
SF_TEST(a_reliable_list_retry_after_is_lrem_now_and_a_timer_lpush)
{
    ws_sim *sim = NULL;
    ws_sub *sub = sf_orders_read(w, &sim, WS_FORM_RELIABLE_LIST, WS_MODE_WINDOW, 0, 1);
    int64_t d = sf_ms(w, 2000, 200);
    assert_int_equal(ws_settle(sf_d(sub, 0), WS_RETRY_AFTER, d), 0);
    assert_string_equal(sf_commands(sim, "flush"), "LREM orders.processing 1 order-1\n");
    assert_int_equal(sf_int(sim, "EXISTS orders"), 0);
    assert_int_equal(ws_sim_advance(sim, d), 0);
    assert_string_equal(sf_commands(sim, "timer"),
                        "LPUSH orders \"\\x00\\x00\\x00\\x01\\x00\\x00\\x00\\x18"
                        "x-ruststream-retry-count\\x00\\x00\\x00\\x011order-1\"\n");
    assert_int_equal(sf_int(sim, "LLEN orders"), 1);
    assert_int_equal(sf_read(sub), 1);
    size_t len;
    assert_memory_equal(ws_delivery_payload(sf_d(sub, 0), &len), "order-1", 7);
    assert_int_equal(len, 7);
    assert_int_equal(ws_delivery_retries(sf_d(sub, 0)), 1);
    sf_settle(sf_d(sub, 0), WS_ACK);
    assert_int_equal(sf_int(sim, "LLEN orders.processing"), 0);
}

/* ----- Plain retries and the declared paths ---------------------------------------------- */

/* A plain retry is the broker's requeue (message.rs nack -> republish): the copy is
 * convert.rs fields_for_publish of what parts_from_fields read -- `_payload` first, then
 * the h:* headers, and nothing else: a field that is neither is dropped.  The counter is
 * not raised. */
SF_TEST(a_stream_retry_copy_keeps_only_the_payload_and_headers)
{
    ws_sim *sim = sf_sim(w, 1);
    ws_sub *sub = orders(sim, NULL, 0);
    const char *id = sf_q(sim, "XADD orders * source legacy _payload order-1 h:tenant acme");
    assert_int_equal(sf_read(sub), 1);
    ws_delivery *d = sf_d(sub, 0);
    sf_settle(d, WS_RETRY);
    char want[160];
    snprintf(want, sizeof want, "XADD orders * _payload order-1 h:tenant acme\nXACK orders g %.*s\n",
             (int)strlen(id) - 2, id + 1); /* id is the bulk reply, quoted */
    assert_string_equal(sf_commands(sim, "flush"), want);
    assert_int_equal(sf_read(sub), 1);
    ws_delivery *copy = sf_d(sub, 0);
    assert_string_equal(ws_delivery_header(copy, "tenant", NULL), "acme");
    assert_int_equal(ws_delivery_retries(copy), 0);
    char range[160];
    snprintf(range, sizeof range, "XRANGE orders %s %s", ws_delivery_id(copy),
             ws_delivery_id(copy));
    const char *entry = sf_q(sim, "%s", range);
    assert_null(strstr(entry, "source"));
    assert_non_null(strstr(entry, "[\"_payload\", \"order-1\", \"h:tenant\", \"acme\"]"));
    sf_settle(copy, WS_ACK);
    assert_int_equal(sf_pending(sim, "orders", "g"), 0);
}

/* A stream subscription "orders" with max-attempts and a dead letter (0 / NULL: none). */
static ws_sub *declared(ws_sim *sim, unsigned max_attempts, const char *dead_letter)
{
    ws_sub_config cfg = sf_sub_config(sim, WS_FORM_STREAM, WS_MODE_WINDOW, "orders", 0);
    cfg.max_attempts = max_attempts;
    cfg.dead_letter = dead_letter;
    return sf_subscribe(sim, &cfg);
}

/* The commands of the round trips caused by "<what> of <id>". */
static const char *copy_of(ws_sim *sim, const char *what, const ws_delivery *d)
{
    char cause[128];
    snprintf(cause, sizeof cause, "%s of %s", what, ws_delivery_id(d));
    return sf_commands(sim, cause);
}

/* max-attempts 2 and a dead letter (dispatch.rs redelivery_of: the attempt is the counter
 * + 1, at the cap when it reaches 2): the first retry settles the entry (XACK) and copies
 * it to the stream with the counter at 1; the second is at the cap: XACK, then the copy
 * to the dead letter with the counter at 2.  Nothing stays pending and nothing is lost. */
SF_TEST(max_attempts_2_with_a_dead_letter_copies_once_then_dead_letters)
{
    ws_sim *sim = sf_sim(w, 1);
    ws_sub *sub = declared(sim, 2, "orders:dead");
    const char *id = sf_produce(sim, WS_FORM_STREAM, "orders", "order-1");
    assert_int_equal(sf_read(sub), 1);
    ws_delivery *d = sf_d(sub, 0);
    sf_settle(d, WS_RETRY);
    char xack[128];
    snprintf(xack, sizeof xack, "XACK orders g %s\n", id);
    assert_string_equal(sf_commands(sim, "flush 1"), xack);
    assert_string_equal(copy_of(sim, "retry copy", d),
                        "XADD orders * _payload order-1 h:x-ruststream-retry-count 1\n");
    assert_int_equal(sf_read(sub), 1);
    ws_delivery *copy = sf_d(sub, 0);
    assert_int_equal(ws_delivery_retries(copy), 1);
    sf_settle(copy, WS_RETRY);
    snprintf(xack, sizeof xack, "XACK orders g %s\n", ws_delivery_id(copy));
    assert_string_equal(sf_commands(sim, "flush 2"), xack);
    assert_string_equal(copy_of(sim, "retry copy", copy), "");
    assert_string_equal(copy_of(sim, "dead letter", copy),
                        "XADD orders:dead * _payload order-1 h:x-ruststream-retry-count 2\n");
    assert_int_equal(sf_int(sim, "XLEN orders"), 2);
    assert_int_equal(sf_int(sim, "XLEN orders:dead"), 1);
    assert_int_equal(sf_pending(sim, "orders", "g"), 0);
    assert_int_equal(sf_read(sub), 0);
}

/* max-attempts without a dead letter: at the cap the retry is rejected -- settled as
 * dropped (the XACK alone), no copy anywhere; the check counts it as settled. */
SF_TEST(max_attempts_without_a_dead_letter_rejects_at_the_cap)
{
    ws_sim *sim = sf_sim(w, 1);
    ws_sub *sub = declared(sim, 2, NULL);
    sf_produce(sim, WS_FORM_STREAM, "orders", "order-1");
    assert_int_equal(sf_read(sub), 1);
    sf_settle(sf_d(sub, 0), WS_RETRY); /* attempt 1: a copy */
    assert_int_equal(sf_read(sub), 1);
    ws_delivery *copy = sf_d(sub, 0);
    sf_settle(copy, WS_RETRY);         /* attempt 2: at the cap */
    char xack[128];
    snprintf(xack, sizeof xack, "XACK orders g %s\n", ws_delivery_id(copy));
    assert_string_equal(sf_commands(sim, "flush 2"), xack);
    assert_string_equal(copy_of(sim, "retry copy", copy), "");
    assert_string_equal(copy_of(sim, "dead letter", copy), "");
    char note[192];
    snprintf(note, sizeof note, "-- orders: %s is at the cap of max-attempts 2 with no dead "
             "letter: rejected (settled as dropped)\n", ws_delivery_id(copy));
    assert_non_null(strstr(sf_trace(sim), note));
    assert_int_equal(sf_int(sim, "XLEN orders"), 2);
    assert_int_equal(sf_pending(sim, "orders", "g"), 0);
    assert_int_equal(sf_read(sub), 0);
}

/* A dead letter without max-attempts (the (None, Some(dest)) arm of redelivery_of): every
 * retry goes to the dead letter at once, the counter raised; a retry_after too, its delay
 * dropped (no timer). */
SF_TEST(a_dead_letter_without_max_attempts_takes_every_retry)
{
    ws_sim *sim = sf_sim(w, 1);
    ws_sub *sub = declared(sim, 0, "orders:dead");
    sf_produce_n(sim, WS_FORM_STREAM, "orders", 2);
    assert_int_equal(sf_read(sub), 2);
    ws_delivery *a = sf_d(sub, 0), *b = sf_d(sub, 1);
    sf_settle(a, WS_RETRY);
    assert_int_equal(ws_settle(b, WS_RETRY_AFTER, 60000), 0);
    assert_string_equal(copy_of(sim, "dead letter", a),
                        "XADD orders:dead * _payload order-1 h:x-ruststream-retry-count 1\n");
    assert_string_equal(copy_of(sim, "dead letter", b),
                        "XADD orders:dead * _payload order-2 h:x-ruststream-retry-count 1\n");
    assert_int_equal(sf_count(sf_trace(sim), "-- timer:"), 0);
    assert_int_equal(sf_int(sim, "XLEN orders"), 2);
    assert_int_equal(sf_int(sim, "XLEN orders:dead"), 2);
    assert_int_equal(sf_pending(sim, "orders", "g"), 0);
    assert_int_equal(sf_read(sub), 0);
}

/* The dead letter takes the declaring subscription's form (route.rs
 * Routes::record_subscription records a subscription's name and its dead letter with its own
 * route; publisher.rs RedisDefaultPublish writes a name by its route): a reliable list's
 * goes out as LPUSH of the frame, a channel's as PUBLISH of the frame -- with no
 * subscription reading the dead letter at all. */
SF_TEST(a_dead_letter_takes_the_declaring_subscriptions_form)
{
    ws_sim *sim = sf_sim(w, 1);
    ws_sub_config cfg = sf_sub_config(sim, WS_FORM_RELIABLE_LIST, WS_MODE_WINDOW, "tasks", 0);
    cfg.max_attempts = 1;
    cfg.dead_letter = "tasks.dead";
    ws_sub *tasks = sf_subscribe(sim, &cfg);
    sf_produce(sim, WS_FORM_RELIABLE_LIST, "tasks", "t1");
    assert_int_equal(sf_read(tasks), 1);
    ws_delivery *d = sf_d(tasks, 0);
    sf_settle(d, WS_RETRY);
    assert_string_equal(copy_of(sim, "dead letter", d),
                        "LPUSH tasks.dead \"\\x00\\x00\\x00\\x01\\x00\\x00\\x00\\x18"
                        "x-ruststream-retry-count\\x00\\x00\\x00\\x011t1\"\n");
    assert_int_equal(sf_int(sim, "LLEN tasks.dead"), 1);
    assert_int_equal(sf_int(sim, "EXISTS tasks"), 0);

    ws_sim *ch = sf_sim(w, 1);
    cfg = sf_sub_config(ch, WS_FORM_CHANNEL, WS_MODE_WINDOW, "news", 0);
    cfg.dead_letter = "news.dead";
    ws_sub *news = sf_subscribe(ch, &cfg);
    sf_produce(ch, WS_FORM_CHANNEL, "news", "n1");
    assert_int_equal(sf_read(news), 1);
    d = sf_d(news, 0);
    sf_settle(d, WS_RETRY);
    assert_string_equal(copy_of(ch, "dead letter", d),
                        "PUBLISH news.dead \"\\x00\\x00\\x00\\x01\\x00\\x00\\x00\\x18"
                        "x-ruststream-retry-count\\x00\\x00\\x00\\x011n1\"\n");
}

/* One name written as two Redis types -- a stream subscription's dead letter read by a list
 * subscription -- is refused when the second subscription opens (route.rs: "one of the two
 * would receive writes it cannot read"); the first keeps its route, and a reliable and a
 * plain list share one. */
SF_TEST(a_name_written_as_two_types_is_refused_at_the_start)
{
    ws_sim *sim = sf_sim(w, 1);
    declared(sim, 0, "dead");
    ws_sub_config cfg = sf_sub_config(sim, WS_FORM_PLAIN_LIST, WS_MODE_WINDOW, "dead", 0);
    assert_null(ws_subscribe(sim, &cfg));
    assert_int_equal(ws_sim_err(sim), WS_EINVAL);
    assert_string_equal(ws_sim_errstr(sim),
                        "the subscription on dead writes dead as a list, but subscription "
                        "orders already reads or dead-letters to dead as a stream: one of the "
                        "two would receive writes it cannot read, so the framework refuses to "
                        "start (give one of them another name)");
    cfg = sf_sub_config(sim, WS_FORM_RELIABLE_LIST, WS_MODE_WINDOW, "jobs", 0);
    cfg.dead_letter = "jobs.dead";
    assert_non_null(sf_subscribe(sim, &cfg));
    cfg = sf_sub_config(sim, WS_FORM_PLAIN_LIST, WS_MODE_WINDOW, "jobs.dead", 0);
    assert_non_null(sf_subscribe(sim, &cfg));
    cfg = sf_sub_config(sim, WS_FORM_CHANNEL, WS_MODE_WINDOW, "dead*", 0);
    cfg.pattern = 1; /* a pattern records nothing */
    cfg.dead_letter = "jobs.dead";
    assert_non_null(sf_subscribe(sim, &cfg));
}

SF_MAIN("sim: retries and delays (§2.1, §2.2)")
