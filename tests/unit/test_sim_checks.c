/* test_sim_checks.c -- each invariant of ws_sim_check (SEMANTICS.md §8) fires, with its
 * exact kind, entry and sentence: were a check a no-op, one of these tests would fail.
 *
 * "leaked" and "split" guard rules the engine keeps, so nothing but a broken engine can
 * break them: ws_sim_config.mutant breaks one rule on purpose (WS_MUTANT_KEEP_DISCARDED
 * commits a dropped delivery's segment; WS_MUTANT_SETTLE_OUTSIDE_EXEC sends an atomic
 * segment's own XACK after its EXEC), and the matching check must name it.  "lost" and
 * "doubled" need no mutant: an XACK sent by hand behind the consumer's back loses an entry,
 * a crash between a direct write and its XACK doubles one.  "stranded" fires for a crash
 * between a list claim's LMOVE and its ZADD, and for WS_MUTANT_SKIP_LREM (a list settle
 * without its LREM, as when the LREM fails and its ZREM goes through).  Without the mutant
 * the same runs keep every invariant.
 *
 * Each test runs on the fake and, with --real, on redis-server too (sim_fixture.h); the
 * sentences hold stream ids, which the tests read back rather than write out. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sim_fixture.h"

/* A simulation with the given mutant (seed 1). */
static ws_sim *mutant_sim(sf_world *w, int mutant)
{
    ws_sim_config cfg = {.seed = 1, .mutant = mutant};
    return sf_sim_cfg(w, &cfg);
}

/* The world's simulation breaks an invariant, and the only violation the check finds must
 * be exactly (kind, entry, the printf-formatted sentence). */
static void only_violation(sf_world *w, ws_sim *sim, const char *kind, const char *entry,
                           const char *fmt, ...) __attribute__((format(printf, 5, 6)));
static void only_violation(sf_world *w, ws_sim *sim, const char *kind, const char *entry,
                           const char *fmt, ...)
{
    char sentence[768];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(sentence, sizeof sentence, fmt, ap);
    va_end(ap);
    sf_expect_violations(w);
    assert_string_equal(sf_only_violation(sim, kind, entry)->sentence, sentence);
}

/* One delivery of "orders" that queues INCR counter and ends with outcome.  The
 * subscription's start made its group on the window connection (round trip 1: XGROUP
 * CREATE), so the flush is window round trip 2. */
static const char *one_delivery(ws_sim *sim, ws_mode mode, ws_outcome outcome)
{
    ws_sub *sub = sf_sub(sim, WS_FORM_STREAM, mode, "orders", 1);
    const char *id = sf_produce(sim, WS_FORM_STREAM, "orders", "order-1");
    assert_int_equal(sf_read(sub), 1);
    sf_queue(sf_d(sub, 0), "INCR counter");
    sf_settle(sf_d(sub, 0), outcome);
    return id;
}

/* A subscription on orders (mode, count 1) and, in *reclaim, its reclaim subscription
 * orders-reclaim (min-idle 50 ms, count 1). */
static ws_sub *sub_and_reclaim(ws_sim *sim, ws_mode mode, ws_sub **reclaim)
{
    ws_sub *sub = sf_sub(sim, WS_FORM_STREAM, mode, "orders", 1);
    ws_sub_config rc = {.form = WS_FORM_STREAM, .mode = mode, .key = "orders",
                        .group = "g", .reclaim = 1, .min_idle_ms = 50, .count = 1,
                        .block_ms = 100, .name = "orders-reclaim"};
    *reclaim = sf_subscribe(sim, &rc);
    return sub;
}

/* ----- leaked ---------------------------------------------------------------------------- */

/* A dropped delivery's segment committed anyway: its INCR leaves with the flush. */
SF_TEST(leaked_fires_when_a_dropped_segment_is_committed)
{
    ws_sim *sim = mutant_sim(w, WS_MUTANT_KEEP_DISCARDED);
    const char *id = one_delivery(sim, WS_MODE_WINDOW, WS_DROP);
    assert_string_equal(sf_q(sim, "GET counter"), "\"1\"");
    only_violation(w, sim, "leaked", id,
                   "delivery %s of entry %s ended dropped, yet its queued `INCR counter` took "
                   "effect (window round trip 2, command 1)",
                   id, id);
}

/* The same for a retry: the copy and the INCR both leave. */
SF_TEST(leaked_fires_when_a_retried_segment_is_committed)
{
    ws_sim *sim = mutant_sim(w, WS_MUTANT_KEEP_DISCARDED);
    const char *id = one_delivery(sim, WS_MODE_WINDOW, WS_RETRY);
    assert_string_equal(sf_q(sim, "GET counter"), "\"1\"");
    assert_int_equal(sf_int(sim, "XLEN orders"), 2);
    only_violation(w, sim, "leaked", id,
                   "delivery %s of entry %s ended retried, yet its queued `INCR counter` took "
                   "effect (window round trip 2, command 1)",
                   id, id);
}

/* Without the mutant the drop leaves nothing and nothing is found. */
SF_TEST(a_dropped_segment_leaks_nothing_without_the_mutant)
{
    ws_sim *sim = mutant_sim(w, WS_MUTANT_NONE);
    one_delivery(sim, WS_MODE_WINDOW, WS_DROP);
    assert_string_equal(sf_q(sim, "EXISTS counter"), ":0");
    size_t n;
    sf_check(sim, &n);
    assert_int_equal(n, 0);
}

/* ----- split ----------------------------------------------------------------------------- */

/* The own XACK after EXEC, and the process dies between them: the INCR took effect, the
 * XACK did not. */
SF_TEST(split_fires_when_the_settle_outside_exec_is_cut_off_by_a_crash)
{
    ws_sim *sim = mutant_sim(w, WS_MUTANT_SETTLE_OUTSIDE_EXEC);
    ws_fault f = {.kind = WS_FAULT_CRASH_BEFORE, .name = "XACK", .nth = 1};
    assert_int_equal(ws_fault_arm(ws_sim_window(sim), &f), 0);
    ws_sub *sub = sf_sub(sim, WS_FORM_STREAM, WS_MODE_ATOMIC, "orders", 1);
    const char *id = sf_produce(sim, WS_FORM_STREAM, "orders", "order-1");
    assert_int_equal(sf_read(sub), 1);
    sf_queue(sf_d(sub, 0), "INCR counter");
    assert_int_equal(ws_settle(sf_d(sub, 0), WS_ACK, 0), WS_ECRASHED);
    char cmds[256];
    snprintf(cmds, sizeof cmds, "MULTI\nINCR counter\nEXEC\nXACK orders g %s\n", id);
    assert_string_equal(sf_commands(sim, "flush"), cmds);
    assert_string_equal(sf_q(sim, "GET counter"), "\"1\"");
    assert_int_equal(sf_pending(sim, "orders", "g"), 1);
    only_violation(w, sim, "split", id,
                   "entry %s's atomic segment was split: `INCR counter` took effect (window round "
                   "trip 2, command 2) but its XACK did not",
                   id);
}

/* The own XACK after an EXEC that ran nothing (EXECABORT: a command refused at queue
 * time): the XACK took effect, the segment did not -- split, and lost too, since the
 * entry is acknowledged without its effects. */
SF_TEST(split_fires_when_the_settle_outside_exec_outlives_an_execabort)
{
    ws_sim *sim = mutant_sim(w, WS_MUTANT_SETTLE_OUTSIDE_EXEC);
    ws_sub *sub = sf_sub(sim, WS_FORM_STREAM, WS_MODE_ATOMIC, "orders", 1);
    const char *id = sf_produce(sim, WS_FORM_STREAM, "orders", "order-1");
    assert_int_equal(sf_read(sub), 1);
    sf_queue(sf_d(sub, 0), "INCR counter");
    sf_queue(sf_d(sub, 0), "INCR");
    sf_settle(sf_d(sub, 0), WS_ACK);
    assert_string_equal(sf_q(sim, "EXISTS counter"), ":0");
    assert_int_equal(sf_pending(sim, "orders", "g"), 0);
    sf_expect_violations(w);
    size_t n;
    const ws_violation *v = sf_check(sim, &n);
    assert_int_equal(n, 2);
    char want[512];
    snprintf(want, sizeof want,
             "entry %s's atomic segment was split: its XACK took effect (window round trip "
             "2, command 5) but none of its commands did",
             id);
    assert_string_equal(v[0].invariant, "split");
    assert_string_equal(v[0].entry, id);
    assert_string_equal(v[0].sentence, want);
    snprintf(want, sizeof want,
             "entry %s was lost: it is neither acknowledged with its effects applied, nor "
             "pending, nor unread or scheduled in a delay queue",
             id);
    assert_string_equal(v[1].invariant, "lost");
    assert_string_equal(v[1].entry, id);
    assert_string_equal(v[1].sentence, want);
}

/* Without the mutant the same EXECABORT takes the XACK down with it: nothing is split. */
SF_TEST(an_execabort_splits_nothing_without_the_mutant)
{
    ws_sim *sim = mutant_sim(w, WS_MUTANT_NONE);
    ws_sub *sub = sf_sub(sim, WS_FORM_STREAM, WS_MODE_ATOMIC, "orders", 1);
    sf_produce(sim, WS_FORM_STREAM, "orders", "order-1");
    assert_int_equal(sf_read(sub), 1);
    sf_queue(sf_d(sub, 0), "INCR counter");
    sf_queue(sf_d(sub, 0), "INCR");
    sf_settle(sf_d(sub, 0), WS_ACK);
    assert_int_equal(sf_pending(sim, "orders", "g"), 1);
    size_t n;
    sf_check(sim, &n);
    assert_int_equal(n, 0);
}

/* ----- stranded ---------------------------------------------------------------------------- */

/* A reliable list with recovery "orders:claims" (min-idle 50 ms), COUNT 1. */
static ws_sub *recovered_list(ws_sim *sim)
{
    ws_sub_config c = {.form = WS_FORM_RELIABLE_LIST, .mode = WS_MODE_WINDOW, .key = "orders",
                       .count = 1, .recovery = "orders:claims", .min_idle_ms = 50};
    return sf_subscribe(sim, &c);
}

/* The settle's LREM left out, its ZREM sent: the value stays on the processing list and no
 * member names it any more, however long the sweep waits. */
SF_TEST(stranded_fires_when_a_settle_drops_the_claim_but_not_the_value)
{
    ws_sim *sim = mutant_sim(w, WS_MUTANT_SKIP_LREM);
    ws_sub *sub = recovered_list(sim);
    sf_produce(sim, WS_FORM_RELIABLE_LIST, "orders", "order-1");
    assert_int_equal(sf_read(sub), 1);
    sf_settle(sf_d(sub, 0), WS_ACK);
    assert_int_equal(ws_sim_advance(sim, 60), 0);
    assert_int_equal(sf_read(sub), 0); /* the sweep finds no claim to follow */
    assert_string_equal(sf_q(sim, "LRANGE orders.processing 0 -1"), "[\"order-1\"]");
    assert_string_equal(sf_q(sim, "ZCARD orders:claims"), ":0");
    only_violation(w, sim, "stranded", "order-1",
                   "entry order-1 is stranded on the processing list orders.processing: no "
                   "live delivery holds it and its delivery in read 1 of orders ended ack, "
                   "but its LREM did not take effect while its recovery member went, so the "
                   "orphan sweep never finds it; it will never be delivered again");
}

/* A crash after the claim's LMOVE and before its ZADD (the framework's order: list.rs
 * moves on the reader, then records the claim through the pool in a round trip of its
 * own: the window connection here). */
SF_TEST(stranded_fires_for_a_crash_between_the_lmove_and_its_zadd)
{
    ws_sim *sim = mutant_sim(w, WS_MUTANT_NONE);
    ws_fault f = {.kind = WS_FAULT_CRASH_BEFORE, .name = "ZADD", .nth = 1};
    assert_int_equal(ws_fault_arm(ws_sim_window(sim), &f), 0);
    ws_sub *sub = recovered_list(sim);
    sf_produce(sim, WS_FORM_RELIABLE_LIST, "orders", "order-1");
    ws_read_result res;
    assert_int_equal(ws_read(sub, &res), WS_ECRASHED);
    assert_int_equal(ws_sim_restart(sim), 0);
    assert_int_equal(ws_sim_advance(sim, 60), 0);
    assert_int_equal(sf_read(sub), 0);
    sf_expect_violations(w);
    const ws_violation *v = sf_only_violation(sim, "stranded", "order-1");
    assert_non_null(
        strstr(v->sentence, "the claim's ZADD that follows its LMOVE never took effect"));
}

/* Without the mutant the settle removes both: nothing is stranded. */
SF_TEST(nothing_is_stranded_without_the_mutant)
{
    ws_sim *sim = mutant_sim(w, WS_MUTANT_NONE);
    ws_sub *sub = recovered_list(sim);
    sf_produce(sim, WS_FORM_RELIABLE_LIST, "orders", "order-1");
    assert_int_equal(sf_read(sub), 1);
    sf_settle(sf_d(sub, 0), WS_ACK);
    size_t n;
    sf_check(sim, &n);
    assert_int_equal(n, 0);
}

/* ----- lost and doubled -------------------------------------------------------------------- */

/* An XACK behind the consumer's back: the entry is neither settled by the consumer nor
 * pending any more. */
SF_TEST(lost_fires_for_an_entry_acknowledged_behind_the_consumers_back)
{
    ws_sim *sim = mutant_sim(w, WS_MUTANT_NONE);
    ws_sub *sub = sf_sub(sim, WS_FORM_STREAM, WS_MODE_WINDOW, "orders", 1);
    const char *id = sf_produce(sim, WS_FORM_STREAM, "orders", "order-1");
    assert_int_equal(sf_read(sub), 1);
    assert_int_equal(sf_int(sim, "XACK orders g %s", id), 1);
    only_violation(w, sim, "lost", id,
                   "entry %s was lost: it is neither acknowledged with its effects applied, nor "
                   "pending, nor unread or scheduled in a delay queue",
                   id);
}

/* §7: a crash between a direct write and its XACK; the reclaim redelivery writes again.
 * In each process the two subscriptions' starts are window round trips 1 and 2 (XGROUP
 * CREATE), so the writes are round trip 3 of "window" and of "window.2". */
SF_TEST(doubled_fires_for_a_direct_write_applied_before_and_after_a_crash)
{
    ws_sim *sim = mutant_sim(w, WS_MUTANT_NONE);
    ws_sub *reclaim;
    ws_sub *sub = sub_and_reclaim(sim, WS_MODE_DIRECT, &reclaim);
    const char *id = sf_produce(sim, WS_FORM_STREAM, "orders", "order-1");
    assert_int_equal(sf_read(sub), 1);
    sf_queue(sf_d(sub, 0), "RPUSH picks order-1");
    long long crashed_at = (long long)ws_sim_now(sim);
    assert_int_equal(ws_sim_crash(sim), 0);
    assert_int_equal(ws_sim_restart(sim), 0);
    assert_int_equal(ws_sim_advance(sim, 60), 0);
    assert_int_equal(sf_read(reclaim), 1);
    sf_queue(sf_d(reclaim, 0), "RPUSH picks order-1");
    sf_settle(sf_d(reclaim, 0), WS_ACK);
    assert_string_equal(sf_q(sim, "LRANGE picks 0 -1"), "[\"order-1\", \"order-1\"]");
    only_violation(w, sim, "doubled", id,
                   "entry %s's effects were applied twice: `RPUSH picks order-1` by its "
                   "delivery in read 1 of orders (window round trip 3, command 1) and again by "
                   "its redelivery as %s in read 1 of orders-reclaim (window.2 round trip 3, "
                   "command 1), after the crash at crash between steps (ws_sim_crash) at %lld ms",
                   id, id, crashed_at);
}

/* ----- What a crash explorer's checks read less of -------------------------------------- */

/* ws_sub_fresh_only: while every entry after the group's last-delivered id is one the test
 * produced and no delivery carried, a fresh read would bring only such entries; a reclaim
 * subscription is never one, and an entry another client adds ends it. */
SF_TEST(a_fresh_read_brings_only_produced_entries_until_another_client_adds_one)
{
    ws_sim *sim = mutant_sim(w, WS_MUTANT_NONE);
    ws_sub *reclaim;
    ws_sub *sub = sub_and_reclaim(sim, WS_MODE_WINDOW, &reclaim);
    sf_produce_n(sim, WS_FORM_STREAM, "orders", 3);
    int only = -1;
    assert_int_equal(ws_sub_fresh_only(sub, &only), 0);
    assert_int_equal(only, 1);
    assert_int_equal(sf_read(sub), 1);
    sf_settle(sf_d(sub, 0), WS_ACK);
    assert_int_equal(ws_sub_fresh_only(sub, &only), 0);
    assert_int_equal(only, 1); /* the other two were never delivered */
    assert_int_equal(ws_sub_fresh_only(reclaim, &only), 0);
    assert_int_equal(only, 0);
    sf_q(sim, "XADD orders * _payload foreign");
    assert_int_equal(ws_sub_fresh_only(sub, &only), 0);
    assert_int_equal(only, 0);
}

/* Three entries: the first acked cleanly, the second written, crashed on and written again
 * by its reclaim, the third never read.  Returns the check's sentences ("; " between), on
 * the heap; with `prepare` the checks' incremental state is kept up to date along the
 * way, so the check reads only the entries that are neither clean nor unread. */
static char *three_entries_one_doubled(sf_world *w, int prepare)
{
    ws_sim *sim = mutant_sim(w, WS_MUTANT_NONE);
    ws_sub *reclaim;
    ws_sub *sub = sub_and_reclaim(sim, WS_MODE_DIRECT, &reclaim);
    sf_produce_n(sim, WS_FORM_STREAM, "orders", 3);
    assert_int_equal(sf_read(sub), 1);
    sf_queue(sf_d(sub, 0), "RPUSH picks order-1");
    sf_settle(sf_d(sub, 0), WS_ACK);
    if (prepare) ws_sim_check_prepare(sim);
    assert_int_equal(sf_read(sub), 1);
    sf_queue(sf_d(sub, 0), "RPUSH picks order-2");
    if (prepare) ws_sim_check_prepare(sim);
    assert_int_equal(ws_sim_crash(sim), 0);
    assert_int_equal(ws_sim_restart(sim), 0);
    assert_int_equal(ws_sim_advance(sim, 60), 0);
    assert_int_equal(sf_read(reclaim), 1);
    sf_queue(sf_d(reclaim, 0), "RPUSH picks order-2");
    sf_settle(sf_d(reclaim, 0), WS_ACK);
    if (prepare) ws_sim_check_prepare(sim);
    sf_expect_violations(w);
    size_t n;
    const ws_violation *v = sf_check(sim, &n);
    size_t len = 1;
    for (size_t i = 0; i < n; i++) len += strlen(v[i].invariant) + strlen(v[i].sentence) + 4;
    char *out = calloc(len, 1);
    assert_non_null(out);
    for (size_t i = 0; i < n; i++) {
        if (i) strcat(out, "; ");
        strcat(out, v[i].invariant);
        strcat(out, ": ");
        strcat(out, v[i].sentence);
    }
    return out;
}

/* Digits out (a real server's ids and times differ from one simulation to the next). */
static void without_digits(char *s)
{
    char *o = s;
    for (char *p = s; *p; p++)
        if (*p < '0' || *p > '9') *o++ = *p;
        else if (o == s || o[-1] != '#') *o++ = '#';
    *o = '\0';
}

/* The check that reads only what was touched finds what the whole check finds: the
 * second entry doubled, the clean first and the unread third nothing. */
SF_TEST(the_touched_only_check_finds_what_the_whole_check_finds)
{
    char *whole = three_entries_one_doubled(w, 0);
    char *touched = three_entries_one_doubled(w, 1);
    if (sf_real(w)) {
        without_digits(whole);
        without_digits(touched);
    }
    assert_string_equal(touched, whole);
    assert_non_null(strstr(whole, "doubled: entry "));
    assert_null(strstr(whole, ";")); /* one violation */
    free(whole);
    free(touched);
}

SF_MAIN("sim: the invariants fire (§8)")
