/* test_sim_ledger.c -- the delivery ledger does not depend on the trace.
 *
 * The ledger the checks read (what each delivery's commands did, its settle, its EXEC,
 * the runtime's copy) is written by wsi_send itself (engine/src/ledger.c), the trace only
 * reads it.  Each test runs one story twice, with the trace and without any
 * (ws_sim_config.no_trace), and the two runs must report the same: the same violations
 * with the same sentences (which name where each command was applied), the same published
 * messages, the same counts.  The stories are the ones each invariant fires on (the
 * mutants of test_sim_checks.c), so a ledger left unwritten without the trace would find
 * nothing where it must find something; and the run without a trace must really have
 * none (no text, no round-trip map). */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sim_fixture.h"

typedef void (*story_fn)(ws_sim *sim);

static void add(char **s, size_t *len, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void add(char **s, size_t *len, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    *s = realloc(*s, *len + (size_t)n + 1);
    if (!*s) fail_msg("out of memory");
    va_start(ap, fmt);
    vsnprintf(*s + *len, (size_t)n + 1, fmt, ap);
    va_end(ap);
    *len += (size_t)n;
}

/* What a run reports: its violations, its published messages and its counts, as text. */
static char *report(ws_sim *sim, size_t *nviol)
{
    char *s = NULL;
    size_t len = 0;
    add(&s, &len, "%s", "");
    const ws_violation *v;
    assert_int_equal(ws_sim_check(sim, &v, nviol), 0);
    for (size_t i = 0; i < *nviol; i++)
        add(&s, &len, "violation %s of %s: %s\n", v[i].invariant, v[i].entry, v[i].sentence);
    for (size_t i = 0; i < ws_sim_published_count(sim); i++) {
        const char *channel, *payload;
        size_t plen;
        assert_int_equal(ws_sim_published(sim, i, &channel, &payload, &plen), 0);
        add(&s, &len, "published on %s: %.*s\n", channel, (int)plen, payload);
    }
    ws_sim_counts c = ws_sim_get_counts(sim);
    add(&s, &len, "deliveries %llu, round trips %llu, flushes %llu, reports %llu\n",
        (unsigned long long)c.deliveries, (unsigned long long)c.round_trips,
        (unsigned long long)c.flushes, (unsigned long long)c.reports);
    return s;
}

/* Runs story with the trace and without, with mutant; both must report the same, and
 * find want violations. */
static void same_without_trace(sf_world *w, int mutant, story_fn story, size_t want)
{
    char *got[2];
    for (int off = 0; off < 2; off++) {
        ws_sim_config cfg = {.seed = 1, .mutant = mutant, .no_trace = off};
        ws_sim *sim = sf_sim_cfg(w, &cfg);
        if (want) sf_expect_violations(w);
        story(sim);
        size_t n;
        got[off] = report(sim, &n);
        if (n != want) fail_msg("%s the trace: %zu violations, want %zu\n%s",
                                off ? "without" : "with", n, want, got[off]);
        size_t tlen;
        char *trace = ws_sim_trace_text(sim, &tlen);
        if (off) {
            assert_int_equal(tlen, 0);
            assert_int_equal(ws_sim_round_trip_count(sim), 0);
        } else {
            assert_true(tlen > 0);
            assert_true(ws_sim_round_trip_count(sim) > 0);
        }
        free(trace);
    }
    if (!sf_same_masked(got[0], got[1]))
        fail_msg("with the trace:\n%s\nwithout:\n%s", got[0], got[1]);
    free(got[0]);
    free(got[1]);
}

/* ----- The stories ------------------------------------------------------------------------ */

static ws_sub *orders(ws_sim *sim, ws_mode mode)
{
    ws_sub *sub = sf_sub(sim, WS_FORM_STREAM, mode, "orders", 1);
    sf_produce(sim, WS_FORM_STREAM, "orders", "order-1");
    assert_int_equal(sf_read(sub), 1);
    return sub;
}

/* A dropped delivery's segment committed anyway (WS_MUTANT_KEEP_DISCARDED): leaked. */
static void leaked(ws_sim *sim)
{
    ws_sub *sub = orders(sim, WS_MODE_WINDOW);
    sf_queue(sf_d(sub, 0), "INCR counter");
    sf_settle(sf_d(sub, 0), WS_DROP);
}

/* The own XACK after EXEC (WS_MUTANT_SETTLE_OUTSIDE_EXEC), the process dying before it:
 * split, read from the EXEC's reply. */
static void split_by_a_crash(ws_sim *sim)
{
    ws_fault f = {.kind = WS_FAULT_CRASH_BEFORE, .name = "XACK", .nth = 1};
    assert_int_equal(ws_fault_arm(ws_sim_window(sim), &f), 0);
    ws_sub *sub = orders(sim, WS_MODE_ATOMIC);
    sf_queue(sf_d(sub, 0), "INCR counter");
    assert_int_equal(ws_settle(sf_d(sub, 0), WS_ACK, 0), WS_ECRASHED);
}

/* The same mutant and an EXEC that ran nothing (EXECABORT): split and lost. */
static void split_by_an_execabort(ws_sim *sim)
{
    ws_sub *sub = orders(sim, WS_MODE_ATOMIC);
    sf_queue(sf_d(sub, 0), "INCR counter");
    sf_queue(sf_d(sub, 0), "INCR");
    sf_settle(sf_d(sub, 0), WS_ACK);
}

/* A list settle without its LREM (WS_MUTANT_SKIP_LREM): stranded. */
static void stranded(ws_sim *sim)
{
    ws_sub_config c = {.form = WS_FORM_RELIABLE_LIST, .mode = WS_MODE_WINDOW, .key = "orders",
                       .count = 1, .recovery = "orders:claims", .min_idle_ms = 50};
    ws_sub *sub = sf_subscribe(sim, &c);
    sf_produce(sim, WS_FORM_RELIABLE_LIST, "orders", "order-1");
    assert_int_equal(sf_read(sub), 1);
    sf_settle(sf_d(sub, 0), WS_ACK);
    assert_int_equal(ws_sim_advance(sim, 60), 0);
    assert_int_equal(sf_read(sub), 0);
}

/* A crash between a direct write and its XACK, the reclaim writing again: doubled, named
 * by where each write was applied. */
static void doubled(ws_sim *sim)
{
    ws_sub *sub = sf_sub(sim, WS_FORM_STREAM, WS_MODE_DIRECT, "orders", 1);
    ws_sub_config rc = {.form = WS_FORM_STREAM, .mode = WS_MODE_DIRECT, .key = "orders",
                        .group = "g", .reclaim = 1, .min_idle_ms = 50, .count = 1,
                        .block_ms = 100, .name = "orders-reclaim"};
    ws_sub *reclaim = sf_subscribe(sim, &rc);
    sf_produce(sim, WS_FORM_STREAM, "orders", "order-1");
    assert_int_equal(sf_read(sub), 1);
    sf_queue(sf_d(sub, 0), "RPUSH picks order-1");
    assert_int_equal(ws_sim_crash(sim), 0);
    assert_int_equal(ws_sim_restart(sim), 0);
    assert_int_equal(ws_sim_advance(sim, 60), 0);
    assert_int_equal(sf_read(reclaim), 1);
    sf_queue(sf_d(reclaim, 0), "RPUSH picks order-1");
    sf_settle(sf_d(reclaim, 0), WS_ACK);
}

/* Publishes inside an atomic segment (bound output, in MULTI ... EXEC), one at once through
 * the pool, and a dropped delivery's bound publish that never leaves: the published
 * messages are the ledger's, read from EXEC's reply. */
static void publishes(ws_sim *sim)
{
    ws_sub_config c = {.form = WS_FORM_STREAM, .mode = WS_MODE_ATOMIC, .key = "orders",
                       .group = "g", .count = 2};
    ws_sub *sub = sf_subscribe(sim, &c);
    sf_produce(sim, WS_FORM_STREAM, "orders", "order-1");
    sf_produce(sim, WS_FORM_STREAM, "orders", "order-2");
    assert_int_equal(sf_read(sub), 2);
    ws_out news = {.form = WS_FORM_CHANNEL, .key = "news"};
    for (size_t i = 0; i < 2; i++) {
        ws_delivery *d = sf_d(sub, i);
        assert_int_equal(ws_bind(d, &news), 0);
        assert_int_equal(ws_publish(d, &news, i ? "dropped" : "kept", i ? 7 : 4, NULL, 0), 0);
    }
    ws_out later = {.form = WS_FORM_CHANNEL, .key = "later"};
    assert_int_equal(ws_publish(sf_d(sub, 0), &later, "at once", 7, NULL, 0), 0);
    sf_settle(sf_d(sub, 0), WS_ACK);
    sf_settle(sf_d(sub, 1), WS_DROP);
}

/* ----- The tests -------------------------------------------------------------------------- */

SF_TEST(leaked_is_found_without_the_trace)
{
    same_without_trace(w, WS_MUTANT_KEEP_DISCARDED, leaked, 1);
}

SF_TEST(a_split_by_a_crash_is_found_without_the_trace)
{
    same_without_trace(w, WS_MUTANT_SETTLE_OUTSIDE_EXEC, split_by_a_crash, 1);
}

SF_TEST(a_split_by_an_execabort_is_found_without_the_trace)
{
    same_without_trace(w, WS_MUTANT_SETTLE_OUTSIDE_EXEC, split_by_an_execabort, 2);
}

SF_TEST(stranded_is_found_without_the_trace)
{
    same_without_trace(w, WS_MUTANT_SKIP_LREM, stranded, 1);
}

SF_TEST(doubled_is_found_without_the_trace)
{
    same_without_trace(w, WS_MUTANT_NONE, doubled, 1);
}

SF_TEST(the_published_messages_are_the_same_without_the_trace)
{
    same_without_trace(w, WS_MUTANT_NONE, publishes, 0);
    /* the run compared last (without the trace) published what took effect */
    ws_sim *sim = sf_sim_cfg(w, &(ws_sim_config){.seed = 1, .no_trace = 1});
    publishes(sim);
    assert_int_equal(ws_sim_published_count(sim), 2);
    const char *channel, *payload;
    size_t len;
    assert_int_equal(ws_sim_published(sim, 0, &channel, &payload, &len), 0);
    assert_string_equal(channel, "later");
    assert_int_equal(ws_sim_published(sim, 1, &channel, &payload, &len), 0);
    assert_string_equal(channel, "news");
    assert_int_equal(len, 8); /* framed: the framework's publishers frame every value */
    assert_memory_equal(payload, "\0\0\0\0kept", 8);
}

SF_MAIN("sim: the ledger does not depend on the trace")
