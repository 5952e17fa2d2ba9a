/* test_stream_claim.c -- XREADGROUP ... CLAIM min-idle-time (Redis 8.4) on the virtual
 * clock.
 *
 * The 8.4 transcript (tests/diff/claim_8_4.transcript) checks the replies against a real
 * Redis 8.4-era server, but its idle times come from a wall clock and are compared within
 * a few milliseconds.  Here they are exact: which pending entries a read claims (idle >=
 * min-idle-time, to the millisecond), in which order (oldest delivery first, not id
 * order), how COUNT is shared with new entries, what a claim does to the owner, the
 * delivery count and time, entries deleted while pending, NOACK, several streams, and a
 * blocked CLAIM read woken by new entries, by its claim time passing, or by its key
 * going away.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "fake_fixture.h"
#include "fakeredis.h"

typedef fake_fixture fixture;

#define RESP_EQ(c, expected, ...) \
    assert_string_equal(fake_resp(fake_run((c), __VA_ARGS__)), (expected))
#define OK(c, ...) fake_ok_reply(fake_run((c), __VA_ARGS__))

/* The fixture's clock starts here (fr_config_default). */
#define T0 1700000000000LL

/* Entry ms-0 of group g of stream s: pending for consumer, idle, delivered count times. */
static void assert_pending(fixture *f, const char *s, uint64_t ms, const char *consumer,
                           int64_t idle, uint64_t count)
{
    fake_assert_pending(f->srv, s, "g", ms, 0, consumer, idle, count);
}

/* Checks the reply that woke c, byte for byte. */
static void assert_woken(fr_client *c, const char *expected)
{
    size_t len;
    const char *resp = fr_client_woken_resp(c, &len);
    char *copy = malloc(len + 1);
    assert_non_null(copy);
    memcpy(copy, resp, len);
    copy[len] = '\0';
    assert_string_equal(copy, expected);
    free(copy);
}

/* Stream s with entries 1-0 .. n-0 ("f" = "v<i>") and group g at 0. */
static void make_stream(fixture *f, const char *s, int n)
{
    for (int i = 1; i <= n; i++) fake_run(f->c, "XADD %s %d-0 f v%d", s, i, i);
    OK(f->c, "XGROUP CREATE %s g 0", s);
}

/* The option's errors, in 8.4's words and order. */
static void test_claim_errors(void **state)
{
    fixture *f = *state;
    make_stream(f, "s", 1);
    RESP_EQ(f->c, "-ERR The CLAIM option is only supported by XREADGROUP. You called XREAD "
                  "instead.\r\n",
            "XREAD CLAIM 10 STREAMS s 0");
    /* XREAD refuses it before reading the value */
    RESP_EQ(f->c, "-ERR The CLAIM option is only supported by XREADGROUP. You called XREAD "
                  "instead.\r\n",
            "XREAD CLAIM x STREAMS s 0");
    RESP_EQ(f->c, "-ERR min-idle-time is not an integer or out of range\r\n",
            "XREADGROUP GROUP g c CLAIM x STREAMS s >");
    RESP_EQ(f->c, "-ERR min-idle-time is not an integer or out of range\r\n",
            "XREADGROUP GROUP g c CLAIM 9223372036854775808 STREAMS s >");
    RESP_EQ(f->c, "-ERR min-idle-time must be a positive integer\r\n",
            "XREADGROUP GROUP g c CLAIM -1 STREAMS s >");
    /* a CLAIM with nothing after it is not an option */
    RESP_EQ(f->c, "-ERR syntax error\r\n", "XREADGROUP GROUP g c NOACK NOACK CLAIM");
    /* an 8.4 command: 8.4's wording of the unbalanced list and of "+" */
    RESP_EQ(f->c, "-ERR Unbalanced 'xreadgroup' list of streams: for each stream key an ID "
                  "or '>' must be specified.\r\n",
            "XREADGROUP GROUP g c CLAIM 0 STREAMS s > s");
    RESP_EQ(f->c, "-ERR Unbalanced XREAD list of streams: for each stream key an ID or '$' "
                  "must be specified.\r\n",
            "XREADGROUP GROUP g c STREAMS s > s");
    RESP_EQ(f->c, "-ERR The + ID is meaningless in the context of XREADGROUP: you want to "
                  "read the history of this consumer by specifying a proper ID, or use the > "
                  "ID to get new messages. The + ID would just return an empty result set.\r\n",
            "XREADGROUP GROUP g c CLAIM 0 STREAMS s +");
    RESP_EQ(f->c, "-ERR Invalid stream ID specified as stream command argument\r\n",
            "XREADGROUP GROUP g c STREAMS s +");
    /* the last CLAIM counts; 0 is allowed */
    RESP_EQ(f->c, "-ERR min-idle-time must be a positive integer\r\n",
            "XREADGROUP GROUP g c CLAIM 0 CLAIM -5 STREAMS s >");
    RESP_EQ(f->c, "-NOGROUP No such key 'nokey' or consumer group 'g' in XREADGROUP with GROUP "
                  "option\r\n",
            "XREADGROUP GROUP g c CLAIM 0 STREAMS nokey >");
}

/* New entries in the CLAIM form: [id, fields, 0, 0]; nothing pending and nothing new
 * answers the nil array. */
static void test_claim_fresh_entries(void **state)
{
    fixture *f = *state;
    make_stream(f, "s", 2);
    RESP_EQ(f->c,
            "*1\r\n*2\r\n$1\r\ns\r\n*2\r\n"
            "*4\r\n$3\r\n1-0\r\n*2\r\n$1\r\nf\r\n$2\r\nv1\r\n:0\r\n:0\r\n"
            "*4\r\n$3\r\n2-0\r\n*2\r\n$1\r\nf\r\n$2\r\nv2\r\n:0\r\n:0\r\n",
            "XREADGROUP GROUP g c1 CLAIM 100 STREAMS s >");
    assert_pending(f, "s", 1, "c1", 0, 1);
    /* both pending for 0 ms: not idle enough for 100, and nothing new */
    RESP_EQ(f->c, "*-1\r\n", "XREADGROUP GROUP g c2 CLAIM 100 STREAMS s >");
    RESP_EQ(f->c, "*-1\r\n", "XREADGROUP GROUP g c2 COUNT 5 BLOCK 10 CLAIM 100 STREAMS s >");
}

/* The boundary is idle >= min-idle-time, to the millisecond; the reply's idle is the time
 * since the last delivery and its count the deliveries before this one; the entry moves
 * to the reader, delivered now once more. */
static void test_claim_boundary_and_effects(void **state)
{
    fixture *f = *state;
    make_stream(f, "s", 1);
    fake_run(f->c, "XREADGROUP GROUP g c1 STREAMS s >");
    fr_clock_advance(f->srv, 99);
    RESP_EQ(f->c, "*-1\r\n", "XREADGROUP GROUP g c2 CLAIM 100 STREAMS s >");
    assert_pending(f, "s", 1, "c1", 99, 1);
    fr_clock_advance(f->srv, 1);
    RESP_EQ(f->c,
            "*1\r\n*2\r\n$1\r\ns\r\n*1\r\n"
            "*4\r\n$3\r\n1-0\r\n*2\r\n$1\r\nf\r\n$2\r\nv1\r\n:100\r\n:1\r\n",
            "XREADGROUP GROUP g c2 CLAIM 100 STREAMS s >");
    assert_pending(f, "s", 1, "c2", 0, 2);
    RESP_EQ(f->c, "*1\r\n*4\r\n$3\r\n1-0\r\n$2\r\nc2\r\n:0\r\n:2\r\n",
            "XPENDING s g - + 10");
    RESP_EQ(f->c, "*4\r\n:1\r\n$3\r\n1-0\r\n$3\r\n1-0\r\n*1\r\n*2\r\n$2\r\nc2\r\n$1\r\n1\r\n",
            "XPENDING s g");
    /* claiming from oneself also counts a delivery */
    fr_clock_advance(f->srv, 5);
    RESP_EQ(f->c,
            "*1\r\n*2\r\n$1\r\ns\r\n*1\r\n"
            "*4\r\n$3\r\n1-0\r\n*2\r\n$1\r\nf\r\n$2\r\nv1\r\n:5\r\n:2\r\n",
            "XREADGROUP GROUP g c2 CLAIM 0 STREAMS s >");
    assert_pending(f, "s", 1, "c2", 0, 3);
}

/* Claimed entries come oldest delivery first (not in id order), before the new ones;
 * COUNT bounds claimed and new together. */
static void test_claim_order_and_count(void **state)
{
    fixture *f = *state;
    make_stream(f, "s", 3);
    fake_run(f->c, "XREADGROUP GROUP g c1 COUNT 1 STREAMS s >"); /* 1-0 at T0 */
    fr_clock_advance(f->srv, 10);
    fake_run(f->c, "XREADGROUP GROUP g c1 COUNT 1 STREAMS s >"); /* 2-0 at T0+10 */
    fr_clock_advance(f->srv, 10);
    /* 1-0 delivered again at T0+20: now the newest delivery */
    fake_run(f->c, "XCLAIM s g c1 0 1-0 JUSTID");
    fake_run(f->c, "XADD s 4-0 f v4");
    fr_clock_advance(f->srv, 30);
    /* COUNT 1: the oldest delivery only, 2-0 (idle 40) */
    RESP_EQ(f->c,
            "*1\r\n*2\r\n$1\r\ns\r\n*1\r\n"
            "*4\r\n$3\r\n2-0\r\n*2\r\n$1\r\nf\r\n$2\r\nv2\r\n:40\r\n:1\r\n",
            "XREADGROUP GROUP g c2 COUNT 1 CLAIM 0 STREAMS s >");
    /* COUNT 3: 1-0 (idle 30, delivered once by XREADGROUP, JUSTID did not count), 2-0 just
     * claimed (idle 0), then one new entry */
    RESP_EQ(f->c,
            "*1\r\n*2\r\n$1\r\ns\r\n*3\r\n"
            "*4\r\n$3\r\n1-0\r\n*2\r\n$1\r\nf\r\n$2\r\nv1\r\n:30\r\n:1\r\n"
            "*4\r\n$3\r\n2-0\r\n*2\r\n$1\r\nf\r\n$2\r\nv2\r\n:0\r\n:2\r\n"
            "*4\r\n$3\r\n3-0\r\n*2\r\n$1\r\nf\r\n$2\r\nv3\r\n:0\r\n:0\r\n",
            "XREADGROUP GROUP g c3 COUNT 3 CLAIM 0 STREAMS s >");
    assert_pending(f, "s", 1, "c3", 0, 2);
    assert_pending(f, "s", 2, "c3", 0, 3);
    assert_pending(f, "s", 3, "c3", 0, 1);
    /* without COUNT: everything idle enough, then every new entry */
    fr_clock_advance(f->srv, 7);
    RESP_EQ(f->c,
            "*1\r\n*2\r\n$1\r\ns\r\n*4\r\n"
            "*4\r\n$3\r\n1-0\r\n*2\r\n$1\r\nf\r\n$2\r\nv1\r\n:7\r\n:2\r\n"
            "*4\r\n$3\r\n2-0\r\n*2\r\n$1\r\nf\r\n$2\r\nv2\r\n:7\r\n:3\r\n"
            "*4\r\n$3\r\n3-0\r\n*2\r\n$1\r\nf\r\n$2\r\nv3\r\n:7\r\n:1\r\n"
            "*4\r\n$3\r\n4-0\r\n*2\r\n$1\r\nf\r\n$2\r\nv4\r\n:0\r\n:0\r\n",
            "XREADGROUP GROUP g c1 CLAIM 5 STREAMS s >");
    /* a threshold between two deliveries claims the older ones only */
    fr_clock_advance(f->srv, 10);
    fake_run(f->c, "XCLAIM s g c1 0 2-0 JUSTID"); /* 2-0 now idle 0, the others 10 */
    RESP_EQ(f->c, "*1\r\n*2\r\n$1\r\ns\r\n*3\r\n"
                  "*4\r\n$3\r\n1-0\r\n*2\r\n$1\r\nf\r\n$2\r\nv1\r\n:10\r\n:3\r\n"
                  "*4\r\n$3\r\n3-0\r\n*2\r\n$1\r\nf\r\n$2\r\nv3\r\n:10\r\n:2\r\n"
                  "*4\r\n$3\r\n4-0\r\n*2\r\n$1\r\nf\r\n$2\r\nv4\r\n:10\r\n:1\r\n",
            "XREADGROUP GROUP g c2 CLAIM 10 STREAMS s >");
    assert_pending(f, "s", 2, "c1", 0, 4);
}

/* An entry deleted while pending is never answered, stays pending where it was, and
 * still takes a place in COUNT's share of claims (new entries fill the rest). */
static void test_claim_deleted_entries(void **state)
{
    fixture *f = *state;
    make_stream(f, "s", 3);
    fake_run(f->c, "XREADGROUP GROUP g c1 COUNT 2 STREAMS s >"); /* 1-0, 2-0 */
    fake_run(f->c, "XDEL s 1-0");
    fr_clock_advance(f->srv, 50);
    /* COUNT 1: 1-0 (deleted) is the oldest and takes the slot; 3-0 is new */
    RESP_EQ(f->c,
            "*1\r\n*2\r\n$1\r\ns\r\n*1\r\n"
            "*4\r\n$3\r\n3-0\r\n*2\r\n$1\r\nf\r\n$2\r\nv3\r\n:0\r\n:0\r\n",
            "XREADGROUP GROUP g c2 COUNT 1 CLAIM 10 STREAMS s >");
    assert_pending(f, "s", 1, "c1", 50, 1);
    assert_pending(f, "s", 2, "c1", 50, 1);
    RESP_EQ(f->c,
            "*1\r\n*2\r\n$1\r\ns\r\n*2\r\n"
            "*4\r\n$3\r\n2-0\r\n*2\r\n$1\r\nf\r\n$2\r\nv2\r\n:50\r\n:1\r\n"
            "*4\r\n$3\r\n3-0\r\n*2\r\n$1\r\nf\r\n$2\r\nv3\r\n:0\r\n:1\r\n",
            "XREADGROUP GROUP g c2 CLAIM 0 STREAMS s >");
    assert_pending(f, "s", 1, "c1", 50, 1);
    /* only the deleted entry pending and idle: not served (the check skips it) */
    fake_run(f->c, "XACK s g 2-0 3-0");
    fr_clock_advance(f->srv, 50);
    RESP_EQ(f->c, "*-1\r\n", "XREADGROUP GROUP g c2 CLAIM 0 STREAMS s >");
    assert_pending(f, "s", 1, "c1", 100, 1);
}

/* NOACK leaves the new entries out of the PEL, but a claimed entry still moves. */
static void test_claim_noack(void **state)
{
    fixture *f = *state;
    make_stream(f, "s", 1);
    fake_run(f->c, "XREADGROUP GROUP g c1 STREAMS s >");
    fake_run(f->c, "XADD s 2-0 f v2");
    fr_clock_advance(f->srv, 20);
    RESP_EQ(f->c,
            "*1\r\n*2\r\n$1\r\ns\r\n*2\r\n"
            "*4\r\n$3\r\n1-0\r\n*2\r\n$1\r\nf\r\n$2\r\nv1\r\n:20\r\n:1\r\n"
            "*4\r\n$3\r\n2-0\r\n*2\r\n$1\r\nf\r\n$2\r\nv2\r\n:0\r\n:0\r\n",
            "XREADGROUP GROUP g c2 NOACK CLAIM 10 STREAMS s >");
    assert_pending(f, "s", 1, "c2", 0, 2);
    assert_false(fake_pending(f->srv, "s", "g", 2, 0).found);
}

/* Several streams: each claims from its own group's PEL; a stream read by history (an id
 * other than ">") ignores CLAIM, and so do the streams after it. */
static void test_claim_several_streams(void **state)
{
    fixture *f = *state;
    make_stream(f, "a", 1);
    make_stream(f, "b", 1);
    fake_run(f->c, "XREADGROUP GROUP g c1 STREAMS a b > >");
    fr_clock_advance(f->srv, 30);
    fake_run(f->c, "XADD b 2-0 f v2");
    RESP_EQ(f->c,
            "*2\r\n*2\r\n$1\r\na\r\n*1\r\n"
            "*4\r\n$3\r\n1-0\r\n*2\r\n$1\r\nf\r\n$2\r\nv1\r\n:30\r\n:1\r\n"
            "*2\r\n$1\r\nb\r\n*2\r\n"
            "*4\r\n$3\r\n1-0\r\n*2\r\n$1\r\nf\r\n$2\r\nv1\r\n:30\r\n:1\r\n"
            "*4\r\n$3\r\n2-0\r\n*2\r\n$1\r\nf\r\n$2\r\nv2\r\n:0\r\n:0\r\n",
            "XREADGROUP GROUP g c2 COUNT 2 CLAIM 30 STREAMS a b > >");
    fr_clock_advance(f->srv, 40);
    fake_run(f->c, "XADD b 3-0 f v3");
    /* a by history (c2's own pending 1-0, two elements), then b: CLAIM forgotten, so
     * b's idle pending entries stay where they are and 3-0 comes in two elements */
    RESP_EQ(f->c,
            "*2\r\n*2\r\n$1\r\na\r\n*1\r\n*2\r\n$3\r\n1-0\r\n*2\r\n$1\r\nf\r\n$2\r\nv1\r\n"
            "*2\r\n$1\r\nb\r\n*1\r\n*2\r\n$3\r\n3-0\r\n*2\r\n$1\r\nf\r\n$2\r\nv3\r\n",
            "XREADGROUP GROUP g c2 CLAIM 0 STREAMS a b 0 >");
    /* the other way round: b claims (1-0, delivered at T0+30), then a's history of c3 */
    RESP_EQ(f->c, "*2\r\n*2\r\n$1\r\nb\r\n*1\r\n"
                  "*4\r\n$3\r\n1-0\r\n*2\r\n$1\r\nf\r\n$2\r\nv1\r\n:40\r\n:2\r\n"
                  "*2\r\n$1\r\na\r\n*0\r\n",
            "XREADGROUP GROUP g c3 COUNT 1 CLAIM 0 STREAMS b a > 0");
}

/* A CLAIM read makes (and sees) its consumer on every stream, served or not, as 8.4 does. */
static void test_claim_creates_consumer(void **state)
{
    fixture *f = *state;
    make_stream(f, "s", 1);
    fake_run(f->c, "XREADGROUP GROUP g c1 STREAMS s >");
    RESP_EQ(f->c, "*-1\r\n", "XREADGROUP GROUP g c2 CLAIM 1000 STREAMS s >");
    RESP_EQ(f->c, ":0\r\n", "XGROUP CREATECONSUMER s g c2");
    RESP_EQ(f->c, "*-1\r\n", "XREADGROUP GROUP g c3 STREAMS s >");
    RESP_EQ(f->c, ":1\r\n", "XGROUP CREATECONSUMER s g c3"); /* 7.0 without CLAIM */
}

/* A blocked CLAIM read: woken by new entries it gets the claims too (its command runs
 * again); woken by the clock once an entry becomes claimable (the first ms past its
 * claim time, which fr_server_next_deadline names); a key deleted answers NOGROUP. */
static void test_claim_blocking(void **state)
{
    fixture *f = *state;
    fr_client *b = fr_client_new(f->srv);
    fr_client_set_blocking(b, 1);
    make_stream(f, "s", 2);
    fake_run(f->c, "XREADGROUP GROUP g c1 COUNT 1 STREAMS s >"); /* 1-0 at T0 */
    fr_clock_advance(f->srv, 10);
    fake_run(f->c, "XREADGROUP GROUP g c1 COUNT 1 STREAMS s >"); /* 2-0 at T0+10 */

    /* nothing idle for 100 ms yet, nothing new: blocks; 1-0 is claimable after T0+100 */
    assert_null(fr_exec_line(b, "XREADGROUP GROUP g c2 BLOCK 5000 CLAIM 100 STREAMS s >"));
    assert_true(fr_client_is_blocked(b));
    assert_int_equal(fr_server_next_deadline(f->srv), T0 + 101);
    fr_clock_set(f->srv, T0 + 100);
    assert_int_equal(fr_server_expire_blocked(f->srv), 0);
    fr_clock_set(f->srv, T0 + 101);
    assert_int_equal(fr_server_expire_blocked(f->srv), 1);
    assert_ptr_equal(fr_server_take_woken(f->srv), b);
    assert_woken(b, "*1\r\n*2\r\n$1\r\ns\r\n*1\r\n"
                              "*4\r\n$3\r\n1-0\r\n*2\r\n$1\r\nf\r\n$2\r\nv1\r\n:101\r\n:1\r\n");
    assert_pending(f, "s", 1, "c2", 0, 2);

    /* blocks again (2-0 idle 91 < 200); an XADD wakes it after 2-0 became claimable
     * (the clock moved, nobody expired anything): the claim phase runs too */
    assert_null(fr_exec_line(b, "XREADGROUP GROUP g c2 BLOCK 0 CLAIM 200 STREAMS s >"));
    assert_int_equal(fr_server_next_deadline(f->srv), T0 + 211); /* 2-0's delivery + 200 + 1 */
    fr_clock_set(f->srv, T0 + 250);
    fake_run(f->c, "XADD s 3-0 f v3");
    assert_ptr_equal(fr_server_take_woken(f->srv), b);
    assert_woken(b, "*1\r\n*2\r\n$1\r\ns\r\n*2\r\n"
                              "*4\r\n$3\r\n2-0\r\n*2\r\n$1\r\nf\r\n$2\r\nv2\r\n:240\r\n:1\r\n"
                              "*4\r\n$3\r\n3-0\r\n*2\r\n$1\r\nf\r\n$2\r\nv3\r\n:0\r\n:0\r\n");

    /* an entry acked before the claim time: the rerun finds nothing and blocks on, with
     * the next claim time */
    assert_null(fr_exec_line(b, "XREADGROUP GROUP g c3 BLOCK 0 CLAIM 1000 STREAMS s >"));
    assert_int_equal(fr_server_next_deadline(f->srv), T0 + 101 + 1000 + 1); /* 1-0 */
    fake_run(f->c, "XACK s g 1-0");
    fr_clock_set(f->srv, T0 + 1102);
    assert_int_equal(fr_server_expire_blocked(f->srv), 0);
    assert_true(fr_client_is_blocked(b));
    assert_int_equal(fr_server_next_deadline(f->srv), T0 + 250 + 1000 + 1); /* 2-0, 3-0 */
    /* the key deleted: run again, NOGROUP */
    fake_run(f->c, "DEL s");
    assert_ptr_equal(fr_server_take_woken(f->srv), b);
    assert_woken(b, "-NOGROUP No such key 's' or consumer group 'g' in XREADGROUP "
                              "with GROUP option\r\n");

    /* the timeout comes before the claim time */
    make_stream(f, "t", 1);
    fake_run(f->c, "XREADGROUP GROUP g c1 STREAMS t >");
    int64_t now = fr_clock_now(f->srv);
    assert_null(fr_exec_line(b, "XREADGROUP GROUP g c2 BLOCK 20 CLAIM 100 STREAMS t >"));
    assert_int_equal(fr_server_next_deadline(f->srv), now + 20);
    fr_clock_set(f->srv, now + 20);
    assert_int_equal(fr_server_expire_blocked(f->srv), 1);
    assert_ptr_equal(fr_server_take_woken(f->srv), b);
    assert_woken(b, "*-1\r\n");
    /* no pending entry at all: the claim time is now + min-idle-time */
    fake_run(f->c, "XACK t g 1-0");
    now = fr_clock_now(f->srv);
    assert_null(fr_exec_line(b, "XREADGROUP GROUP g c2 BLOCK 0 CLAIM 100 STREAMS t >"));
    assert_int_equal(fr_server_next_deadline(f->srv), now + 101);
    fr_client_free(b);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        FAKE_TEST(test_claim_errors),
        FAKE_TEST(test_claim_fresh_entries),
        FAKE_TEST(test_claim_boundary_and_effects),
        FAKE_TEST(test_claim_order_and_count),
        FAKE_TEST(test_claim_deleted_entries),
        FAKE_TEST(test_claim_noack),
        FAKE_TEST(test_claim_several_streams),
        FAKE_TEST(test_claim_creates_consumer),
        FAKE_TEST(test_claim_blocking),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
