/* sim_fixture.h -- what the consumer model's tests (tests/unit/test_sim_*.c) share: every
 * test runs on the in-process fake and, with --real, once more on a throwaway
 * redis-server, and the two runs must agree.
 *
 * A test is written once, as a body taking an sf_world:
 *
 *     SF_TEST(a_queued_command_leaves_with_the_ack)
 *     {
 *         ws_sim *sim = sf_sim(w, 1);
 *         ...
 *         assert_string_equal(sf_q(sim, "LRANGE picks 0 -1"), "[\"sku-1\"]");
 *     }
 *
 * and registers itself: the file's main is SF_MAIN("group name"), which runs the file's
 * tests in the order they are defined.  Without arguments (ctest test_sim_x, label unit)
 * the body runs on the fake.  With --real (test_sim_x_real, labels unit;real-redis) it runs
 * on the fake, then on a redis-server the harness started (FLUSHALL before each test), and
 * the fixture compares the two runs: the transcript (every reply the body read through
 * the sf_ helpers, what it logged with sf_log, the final keyspace and the invariant check)
 * and the simulation's trace, both with stream ids and clock values masked
 * (sf_same_masked).
 *
 * WSIM_SF_PRINT=1 in the environment prints each run's transcript and masked trace.
 *
 * Every helper fails the running test (it does not return) when something is wrong, so
 * bodies use what they get without checking.  Strings a helper returns are owned by the
 * world and live until the test ends.
 */
#ifndef SIM_FIXTURE_H
#define SIM_FIXTURE_H

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>

#include <cmocka.h>

#include "ws_sim.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct sf_world sf_world;

/* ----- Running tests -------------------------------------------------------------------- */

/* Defines the cmocka test `name` running the body that follows on each backend, and
 * registers it (a constructor, before main) for SF_MAIN; __COUNTER__ keeps the tests in
 * the order the file defines them. */
#define SF_TEST(name) SF_TEST_AT(name, __COUNTER__)
#define SF_TEST_AT(name, order)                                                            \
    static void name##_body(sf_world *w);                                                  \
    static void name(void **state)                                                         \
    {                                                                                      \
        (void)state;                                                                       \
        sf_run(#name, name##_body);                                                        \
    }                                                                                      \
    SF_REGISTER(name, order)                                                               \
    static void name##_body(sf_world *w)

/* A plain cmocka test (no world, no second run on redis-server), registered the same way:
 * SF_PLAIN_TEST(name) { ... state ... }. */
#define SF_PLAIN_TEST(name) SF_PLAIN_TEST_AT(name, __COUNTER__)
#define SF_PLAIN_TEST_AT(name, order)                                                      \
    static void name(void **state);                                                        \
    SF_REGISTER(name, order)                                                               \
    static void name(void **state)

/* The constructor registering the test function `name` with sf_register. */
#define SF_REGISTER(name, order)                                                           \
    __attribute__((constructor)) static void name##_register(void)                         \
    {                                                                                      \
        sf_register(#name, name, order);                                                   \
    }

/* A test file's main: runs the tests its SF_TESTs registered under the group's name. */
#define SF_MAIN(group)                                                                     \
    int main(int argc, char **argv) { return sf_main(argc, argv, (group)); }

/* A test run once per form (name_stream, name_reliable_list, name_plain_list,
 * name_channel): the body gets `w` and `form`. */
#define SF_TEST_FORMS(name)                                                                \
    static void name(sf_world *w, ws_form form);                                           \
    SF_TEST(name##_stream) { name(w, WS_FORM_STREAM); }                                    \
    SF_TEST(name##_reliable_list) { name(w, WS_FORM_RELIABLE_LIST); }                      \
    SF_TEST(name##_plain_list) { name(w, WS_FORM_PLAIN_LIST); }                            \
    SF_TEST(name##_channel) { name(w, WS_FORM_CHANNEL); }                                  \
    static void name(sf_world *w, ws_form form)
/* The same for the forms that settle (name_stream, name_reliable_list). */
#define SF_TEST_SETTLING(name)                                                             \
    static void name(sf_world *w, ws_form form);                                           \
    SF_TEST(name##_stream) { name(w, WS_FORM_STREAM); }                                    \
    SF_TEST(name##_reliable_list) { name(w, WS_FORM_RELIABLE_LIST); }                      \
    static void name(sf_world *w, ws_form form)
/* The same for the forms that settle nothing (name_plain_list, name_channel). */
#define SF_TEST_UNSETTLED(name)                                                            \
    static void name(sf_world *w, ws_form form);                                           \
    SF_TEST(name##_plain_list) { name(w, WS_FORM_PLAIN_LIST); }                            \
    SF_TEST(name##_channel) { name(w, WS_FORM_CHANNEL); }                                  \
    static void name(sf_world *w, ws_form form)

/* Runs body on the fake, and with --real on redis-server too, and compares the runs. */
void sf_run(const char *name, void (*body)(sf_world *w));

/* Registers a test for sf_main (SF_TEST does, before main); order sorts them. */
void sf_register(const char *name, void (*fn)(void **state), int order);

/* A test file's main (SF_MAIN): parses --real, starts the server if asked, runs the
 * registered tests as a group. */
int sf_main(int argc, char **argv, const char *group);

/* Non-zero when this run is on redis-server. */
int sf_real(const sf_world *w);

/* For tests that need the fake (clock jumps, cluster emulation): on redis-server it prints
 * "skipped on redis-server: <why>" and returns 1 (the body then returns at once and the
 * test is reported skipped); on the fake it returns 0. */
int sf_fake_only(sf_world *w, const char *why);

/* ----- Simulations ------------------------------------------------------------------------ */

/* A simulation on this run's backend with the given seed, start_ms 0 (the fake's
 * 1,700,000,000,000), whose first command is FLUSHALL (a real server is shared by every
 * simulation of the run; a fake is the simulation's own).  A test that makes several uses
 * them one after another; the last one made is the world's: its keyspace, check and trace
 * are what the runs compare.  Freed with the world. */
ws_sim *sf_sim(sf_world *w, uint64_t seed);
/* The same with a config (its backend is replaced by this run's). */
ws_sim *sf_sim_cfg(sf_world *w, const ws_sim_config *cfg);

/* The world's number for a period the test waits: fake_ms on the fake, real_ms on
 * redis-server (where ws_sim_advance really sleeps).  Clock values are masked in the
 * comparison, so the two may differ. */
int64_t sf_ms(const sf_world *w, int64_t fake_ms, int64_t real_ms);

/* ----- Admin commands: run on the simulation's admin connection and logged ---------------- */

/* Runs the printf-formatted redis-cli line and returns its reply as ws_reply_text writes
 * it (`"bulk"`, `:1`, `[a, b]`, `-ERR ...`).  Logged in the transcript. */
const char *sf_q(ws_sim *sim, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* The same, for an integer reply (anything else fails the test). */
long long sf_int(ws_sim *sim, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Runs a command and fails unless it answers +OK (or an integer, for setup like DEL). */
void sf_do(ws_sim *sim, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* XPENDING <key> <group>'s count. */
long long sf_pending(ws_sim *sim, const char *key, const char *group);
/* XGROUP CREATE <key> <group> 0 MKSTREAM. */
void sf_group(ws_sim *sim, const char *key, const char *group);

/* Produces one entry (ws_sim_produce with no headers on a stream; a list's or channel's
 * value bare, ws_sim_produce_raw); returns its stream id (streams) or its value, owned by
 * the world. */
const char *sf_produce(ws_sim *sim, ws_form form, const char *key, const char *payload);

/* Produces order-1 .. order-n on key (sf_produce, in that order). */
void sf_produce_n(ws_sim *sim, ws_form form, const char *key, int n);

/* The opening most tests share: a simulation with seed 1 (*simp), a subscription
 * sf_sub(sim, form, mode, "orders", count), order-1 .. order-n produced on "orders", and
 * one sf_read that must hand out all n; returns the subscription. */
ws_sub *sf_orders_read(sf_world *w, ws_sim **simp, ws_form form, ws_mode mode, size_t count,
                       int n);

/* What of the source is not settled: a stream's pending count (group "g"), a reliable
 * list's processing list length (<key>.processing); 0 for forms that settle nothing. */
long long sf_unsettled(ws_sim *sim, ws_form form, const char *key);

/* ----- The consumer ------------------------------------------------------------------------- */

/* A subscription with the usual defaults of these tests: form, mode, key; group "g" for
 * streams (created at 0 with MKSTREAM); block_ms 100 (an empty read must not block a
 * real server for ever: BLOCK 0 and BLMOVE ... 0 wait without end); count as given
 * (0: 64).  Fails the test when refused. */
ws_sub *sf_sub(ws_sim *sim, ws_form form, ws_mode mode, const char *key, size_t count);
/* The config sf_sub uses, to adjust before sf_subscribe (creates the stream's group). */
ws_sub_config sf_sub_config(ws_sim *sim, ws_form form, ws_mode mode, const char *key,
                            size_t count);
/* ws_subscribe that must succeed. */
ws_sub *sf_subscribe(ws_sim *sim, const ws_sub_config *cfg);

/* One ws_read that must succeed and hand out deliveries (not a report): returns n, and
 * logs "read <r>: <n> deliveries: <id> <payload>, ..." in the transcript. */
size_t sf_read(ws_sub *sub);
/* One ws_read that must hand out a report; logs it and returns it. */
ws_report sf_read_report(ws_sub *sub);
/* Delivery i of the latest read (must exist). */
ws_delivery *sf_d(ws_sub *sub, size_t i);
/* ws_queue_line that must succeed. */
void sf_queue(ws_delivery *d, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* ws_settle that must return 0. */
void sf_settle(ws_delivery *d, ws_outcome outcome);
/* One sf_read that must hand out exactly one delivery, a copy carrying `retries` retries
 * (ws_delivery_retries); acks it. */
void sf_ack_copy(ws_sub *sub, long long retries);
/* ws_pool_line that must succeed: the reply's text, logged. */
const char *sf_pool(ws_sim *sim, ws_delivery *d, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* ----- The transcript ------------------------------------------------------------------------ */

/* Adds a printf-formatted line to the transcript the runs compare. */
void sf_log(sf_world *w, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Says the world's simulation is expected to break invariants: the fixture then logs
 * ws_sim_check's findings without failing the test on them. */
void sf_expect_violations(sf_world *w);

/* ws_sim_check that must run: its violations, also logged as "check: <inv> <entry>". */
const ws_violation *sf_check(ws_sim *sim, size_t *n);
/* The first violation of the named invariant, or NULL. */
const ws_violation *sf_violation(ws_sim *sim, const char *invariant);

/* Fails unless ws_sim_check finds exactly one violation, of invariant, for entry; returns
 * it (its sentence is the caller's to check). */
const ws_violation *sf_only_violation(ws_sim *sim, const char *invariant, const char *entry);

/* ----- The trace ---------------------------------------------------------------------------- */

/* The simulation's trace text (owned by the world). */
const char *sf_trace(ws_sim *sim);
/* The commands of the trace, one per line, as "COMMAND args" (arguments as
 * redis-cli shows them, no replies), only those of round trips whose header contains
 * `filter` (NULL: all), e.g. "flush".  Owned by the world.  The lines are taken from the
 * trace's command lines: the lines indented under a round trip header. */
const char *sf_commands(ws_sim *sim, const char *filter);
/* How many times needle occurs in hay. */
size_t sf_count(const char *hay, const char *needle);
/* Fails the test unless the needles occur in hay in this order (NULL-terminated). */
void sf_in_order(const char *hay, ...) __attribute__((sentinel));

/* text with stream ids replaced by <id1>, <id2>... in order of appearance, clock values
 * (13-digit Unix ms) by <ms>, XPENDING's idle times by <idle>, and the trace's
 * "-- the clock advances N ms" by "<ms>" (tests wait sf_ms, which differs per backend).
 * A \xHH escape of a binary argument is kept whole, so an id right after a length byte
 * (a delay-queue member) is found whatever that byte is.  Heap: free() it. */
char *sf_mask(const char *text);

/* Non-zero when the texts are equal once masked (sf_mask) and with every "<idN>" read as
 * "<id>": how the runs are compared (an id is unique only within its stream, and two
 * streams' ids coincide at different places on the fake and on a server). */
int sf_same_masked(const char *a, const char *b);

/* The round trips the window connection made so far (ws_conn_get_stats). */
uint64_t sf_window_round_trips(ws_sim *sim);

#ifdef __cplusplus
}
#endif

#endif /* SIM_FIXTURE_H */
