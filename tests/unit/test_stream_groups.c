/* test_stream_groups.c -- consumer groups on the virtual clock (t_stream_group.c).
 *
 * The differential tests compare every reply with a real redis-server, except the idle
 * times, which are wall-clock milliseconds there.  Here the clock is virtual, so the
 * delivery counts and idle times are checked exactly: what each command does to them,
 * XAUTOCLAIM's, XCLAIM's and XPENDING's min-idle boundaries to the millisecond, entries
 * deleted while pending, and the consumers' seen times.
 *
 * The last tests run seeded random sequences of XREADGROUP / XACK / XCLAIM / XAUTOCLAIM /
 * XDEL / XGROUP DELCONSUMER / SETID against a model built from the replies, and after
 * every command check that the group's PEL and its consumers' PELs hold the same records
 * (the invariant every command must keep) and that they match the model, through the
 * public inspection API (fr_stream_pending / fr_stream_consumer) and the internals.
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
#include "fr_int.h"
#include "stream_int.h"
#include "test_rng.h"

/* A fresh server on the virtual clock with one client (fake_fixture_setup). */
typedef fake_fixture fixture;

#define INT(c, ...) fake_int_reply(fake_run((c), __VA_ARGS__))
#define OK(c, ...) fake_ok_reply(fake_run((c), __VA_ARGS__))
#define RESP_EQ(c, expected, ...) \
    assert_string_equal(fake_resp(fake_run((c), __VA_ARGS__)), (expected))

/* Entry ms-0 of group g of stream s: pending for consumer, idle, delivered count times. */
static void assert_pending(fixture *f, uint64_t ms, const char *consumer, int64_t idle,
                           uint64_t count)
{
    fake_assert_pending(f->srv, "s", "g", ms, 0, consumer, idle, count);
}

static fr_consumer_state consumer_of(fixture *f, const char *name)
{
    fr_consumer_state st;
    assert_int_equal(fr_stream_consumer(f->srv, 0, "s", 1, "g", 1, name, strlen(name), &st), 0);
    return st;
}

/* s with entries 1-0 .. n-0 and group g at 0. */
static void make_stream(fixture *f, int n)
{
    for (int i = 1; i <= n; i++) {
        const fr_reply *r = fake_run(f->c, "XADD s %d-0 f v%d", i, i);
        assert_int_equal(r->type, FR_REPLY_BULK);
    }
    OK(f->c, "XGROUP CREATE s g 0");
}

/* ----- Delivery counts and idle times --------------------------------------------------- */

static void test_delivery_count_and_idle(void **state)
{
    fixture *f = *state;
    make_stream(f, 3);
    fake_run(f->c, "XREADGROUP GROUP g alice COUNT 2 STREAMS s >");
    assert_pending(f, 1, "alice", 0, 1);
    assert_pending(f, 2, "alice", 0, 1);
    assert_false(fake_pending(f->srv, "s", "g", 3, 0).found);

    fr_clock_advance(f->srv, 1500);
    assert_pending(f, 1, "alice", 1500, 1);
    /* XPENDING reports the same, on the command's clock */
    RESP_EQ(f->c, "*1\r\n*4\r\n$3\r\n1-0\r\n$5\r\nalice\r\n:1500\r\n:1\r\n",
            "XPENDING s g - 1-0 10");
    RESP_EQ(f->c, "*0\r\n", "XPENDING s g IDLE 1501 - + 10");
    RESP_EQ(f->c, "*1\r\n*4\r\n$3\r\n2-0\r\n$5\r\nalice\r\n:1500\r\n:1\r\n",
            "XPENDING s g IDLE 1500 2-0 + 10");

    /* a history read is a delivery: count + 1, idle back to 0 */
    fake_run(f->c, "XREADGROUP GROUP g alice COUNT 1 STREAMS s 0");
    assert_pending(f, 1, "alice", 0, 2);
    assert_pending(f, 2, "alice", 1500, 1);
    fake_run(f->c, "XREADGROUP GROUP g alice STREAMS s 0");
    assert_pending(f, 1, "alice", 0, 3);
    assert_pending(f, 2, "alice", 0, 2);

    /* NOACK delivers without a pending entry */
    fake_run(f->c, "XREADGROUP GROUP g bob NOACK STREAMS s >");
    assert_false(fake_pending(f->srv, "s", "g", 3, 0).found);
    assert_int_equal(consumer_of(f, "bob").pending, 0);
}

static void test_redelivery_moves_entry(void **state)
{
    fixture *f = *state;
    make_stream(f, 3);
    fake_run(f->c, "XREADGROUP GROUP g alice STREAMS s >");
    fake_run(f->c, "XREADGROUP GROUP g alice STREAMS s 0");
    assert_pending(f, 2, "alice", 0, 2);
    fr_clock_advance(f->srv, 10);
    /* SETID makes the group deliver again: the entry moves, its count restarts at 1 */
    OK(f->c, "XGROUP SETID s g 1-0");
    fake_run(f->c, "XREADGROUP GROUP g bob COUNT 1 STREAMS s >");
    assert_pending(f, 2, "bob", 0, 1);
    assert_pending(f, 3, "alice", 10, 2);
    assert_int_equal(consumer_of(f, "alice").pending, 2);
    assert_int_equal(consumer_of(f, "bob").pending, 1);
    /* the same consumer again: still a fresh delivery */
    OK(f->c, "XGROUP SETID s g 1-0");
    fr_clock_advance(f->srv, 5);
    fake_run(f->c, "XREADGROUP GROUP g bob COUNT 1 STREAMS s >");
    assert_pending(f, 2, "bob", 0, 1);
}

static void test_xclaim_times_and_counts(void **state)
{
    fixture *f = *state;
    make_stream(f, 4);
    fake_run(f->c, "XREADGROUP GROUP g alice STREAMS s >");
    fr_clock_advance(f->srv, 100);
    int64_t now = fr_clock_now(f->srv);

    RESP_EQ(f->c, "*1\r\n$3\r\n1-0\r\n", "XCLAIM s g bob 0 1-0 JUSTID");
    assert_pending(f, 1, "bob", 0, 1); /* JUSTID leaves the count */
    fake_run(f->c, "XCLAIM s g bob 0 2-0");
    assert_pending(f, 2, "bob", 0, 2);
    fake_run(f->c, "XCLAIM s g bob 0 3-0 RETRYCOUNT 9 IDLE 5000");
    assert_pending(f, 3, "bob", 5000, 9);
    fake_run(f->c, "XCLAIM s g bob 0 4-0 TIME %lld JUSTID", (long long)(now - 777));
    assert_pending(f, 4, "bob", 777, 1);
    /* a delivery time in the future, or negative, means now */
    fake_run(f->c, "XCLAIM s g alice 0 4-0 TIME %lld JUSTID", (long long)(now + 1000));
    assert_pending(f, 4, "alice", 0, 1);
    fake_run(f->c, "XCLAIM s g alice 0 3-0 IDLE -50 JUSTID");
    assert_pending(f, 3, "alice", 0, 9);
    fake_run(f->c, "XCLAIM s g alice 0 3-0 TIME -5 RETRYCOUNT 0 JUSTID");
    assert_pending(f, 3, "alice", 0, 0);

    /* FORCE: an entry never delivered becomes pending with count 1 (+1 unless JUSTID) */
    fake_run(f->c, "XADD s 5-0 f v5");
    fake_run(f->c, "XCLAIM s g carol 0 5-0 FORCE");
    assert_pending(f, 5, "carol", 0, 2);
    fake_run(f->c, "XADD s 6-0 f v6");
    fake_run(f->c, "XCLAIM s g carol 0 6-0 FORCE JUSTID");
    assert_pending(f, 6, "carol", 0, 1);
    /* XPENDING's extended form shows the same */
    fr_clock_advance(f->srv, 3);
    RESP_EQ(f->c,
            "*2\r\n*4\r\n$3\r\n5-0\r\n$5\r\ncarol\r\n:3\r\n:2\r\n"
            "*4\r\n$3\r\n6-0\r\n$5\r\ncarol\r\n:3\r\n:1\r\n",
            "XPENDING s g - + 10 carol");
}

/* Idle exactly at the limit qualifies, one millisecond short does not: XAUTOCLAIM and
 * XCLAIM skip an entry whose idle is below min-idle-time, XPENDING IDLE likewise. */
static void test_min_idle_boundaries(void **state)
{
    fixture *f = *state;
    make_stream(f, 3);
    fake_run(f->c, "XREADGROUP GROUP g alice STREAMS s >");
    fr_clock_advance(f->srv, 999);
    RESP_EQ(f->c, "*3\r\n$3\r\n0-0\r\n*0\r\n*0\r\n", "XAUTOCLAIM s g bob 1000 - JUSTID");
    RESP_EQ(f->c, "*0\r\n", "XCLAIM s g bob 1000 1-0 2-0 JUSTID");
    RESP_EQ(f->c, "*0\r\n", "XPENDING s g IDLE 1000 - + 10");
    assert_int_equal(fr_stream_consumer(f->srv, 0, "s", 1, "g", 1, "bob", 3,
                                        &(fr_consumer_state){0}),
                     -1); /* nothing claimed: bob was never created */
    fr_clock_advance(f->srv, 1);
    RESP_EQ(f->c, "*1\r\n*4\r\n$3\r\n1-0\r\n$5\r\nalice\r\n:1000\r\n:1\r\n",
            "XPENDING s g IDLE 1000 - + 1");
    RESP_EQ(f->c, "*3\r\n$3\r\n2-0\r\n*1\r\n$3\r\n1-0\r\n*0\r\n",
            "XAUTOCLAIM s g bob 1000 - COUNT 1 JUSTID");
    assert_pending(f, 1, "bob", 0, 1);
    RESP_EQ(f->c, "*1\r\n$3\r\n2-0\r\n", "XCLAIM s g carol 1000 1-0 2-0 JUSTID");
    assert_pending(f, 2, "carol", 0, 1);
    /* without JUSTID the claim counts as a delivery */
    fr_clock_advance(f->srv, 1000);
    RESP_EQ(f->c, "*3\r\n$3\r\n0-0\r\n*1\r\n*2\r\n$3\r\n3-0\r\n*2\r\n$1\r\nf\r\n$2\r\nv3\r\n*0\r\n",
            "XAUTOCLAIM s g dave 2000 - COUNT 5");
    assert_pending(f, 3, "dave", 0, 2);
    assert_pending(f, 1, "bob", 1000, 1);
}

static void test_deleted_while_pending(void **state)
{
    fixture *f = *state;
    make_stream(f, 5);
    fake_run(f->c, "XREADGROUP GROUP g alice STREAMS s >");
    fake_run(f->c, "XDEL s 2-0 4-0");
    fr_clock_advance(f->srv, 50);
    /* history: [id, nil] for the deleted ones, whose counters do not move */
    RESP_EQ(f->c,
            "*1\r\n*2\r\n$1\r\ns\r\n*3\r\n*2\r\n$3\r\n1-0\r\n*2\r\n$1\r\nf\r\n$2\r\nv1\r\n"
            "*2\r\n$3\r\n2-0\r\n*-1\r\n*2\r\n$3\r\n3-0\r\n*2\r\n$1\r\nf\r\n$2\r\nv3\r\n",
            "XREADGROUP GROUP g alice COUNT 3 STREAMS s 0");
    assert_pending(f, 1, "alice", 0, 2);
    assert_pending(f, 2, "alice", 50, 1);
    /* XCLAIM drops a deleted entry from the PEL without reporting it */
    RESP_EQ(f->c, "*1\r\n$3\r\n3-0\r\n", "XCLAIM s g bob 0 2-0 3-0 JUSTID");
    assert_false(fake_pending(f->srv, "s", "g", 2, 0).found);
    assert_int_equal(consumer_of(f, "alice").pending, 3);
    /* XAUTOCLAIM reports it in its third element, and it counts against COUNT */
    RESP_EQ(f->c, "*3\r\n$3\r\n5-0\r\n*0\r\n*1\r\n$3\r\n4-0\r\n",
            "XAUTOCLAIM s g bob 0 (3-0 COUNT 1 JUSTID");
    assert_false(fake_pending(f->srv, "s", "g", 4, 0).found);
    RESP_EQ(f->c, "*3\r\n$3\r\n0-0\r\n*1\r\n$3\r\n5-0\r\n*0\r\n",
            "XAUTOCLAIM s g bob 0 (3-0 COUNT 1 JUSTID");
    assert_int_equal(consumer_of(f, "alice").pending, 1);
    assert_int_equal(consumer_of(f, "bob").pending, 2);
    /* a pending entry deleted later can still be acknowledged */
    fake_run(f->c, "XDEL s 5-0");
    assert_int_equal(INT(f->c, "XACK s g 5-0 5-0 1-0"), 2);
    assert_int_equal(consumer_of(f, "alice").pending, 0);
    assert_int_equal(consumer_of(f, "bob").pending, 1);
    RESP_EQ(f->c, "*1\r\n*2\r\n$1\r\ns\r\n*0\r\n", "XREADGROUP GROUP g alice STREAMS s 0");
}

/* A consumer is seen when something is delivered to it or claimed by it, when it is
 * created, and on every history read; not by reads that serve nothing, failed claims,
 * XPENDING, or CREATECONSUMER of an existing name. */
static void test_consumer_seen_time(void **state)
{
    fixture *f = *state;
    make_stream(f, 2);
    assert_int_equal(INT(f->c, "XGROUP CREATECONSUMER s g alice"), 1);
    fr_clock_advance(f->srv, 100);
    assert_int_equal(consumer_of(f, "alice").idle_ms, 100);
    assert_int_equal(INT(f->c, "XGROUP CREATECONSUMER s g alice"), 0);
    fake_run(f->c, "XCLAIM s g alice 0 1-0");
    fake_run(f->c, "XAUTOCLAIM s g alice 0 -");
    fake_run(f->c, "XPENDING s g - + 10 alice");
    assert_int_equal(consumer_of(f, "alice").idle_ms, 100);
    fake_run(f->c, "XREADGROUP GROUP g alice COUNT 1 STREAMS s >");
    assert_int_equal(consumer_of(f, "alice").idle_ms, 0);
    fr_clock_advance(f->srv, 40);
    fake_run(f->c, "XGROUP SETID s g $");
    fake_run(f->c, "XREADGROUP GROUP g alice STREAMS s >"); /* nothing new */
    assert_int_equal(consumer_of(f, "alice").idle_ms, 40);
    RESP_EQ(f->c, "*1\r\n*6\r\n$4\r\nname\r\n$5\r\nalice\r\n$7\r\npending\r\n:1\r\n"
                  "$4\r\nidle\r\n:40\r\n",
            "XINFO CONSUMERS s g");
    fake_run(f->c, "XREADGROUP GROUP g alice STREAMS s 9-0"); /* history, even if empty */
    assert_int_equal(consumer_of(f, "alice").idle_ms, 0);
    fr_clock_advance(f->srv, 7);
    fake_run(f->c, "XCLAIM s g bob 0 1-0 JUSTID");
    assert_int_equal(consumer_of(f, "bob").idle_ms, 0);
    assert_int_equal(consumer_of(f, "alice").pending, 0);
    assert_int_equal(consumer_of(f, "alice").idle_ms, 7);
    /* XINFO STREAM FULL prints absolute times */
    int64_t now = fr_clock_now(f->srv);
    const fr_reply *r = fake_run(f->c, "XINFO STREAM s FULL");
    assert_int_equal(r->type, FR_REPLY_ARRAY);
    const fr_reply *groups = &r->elements[17];
    const fr_reply *g = &groups->elements[0];
    const fr_reply *pel = &g->elements[11];
    assert_int_equal(pel->count, 1);
    assert_int_equal(pel->elements[0].elements[2].integer, now);
    const fr_reply *consumers = &g->elements[13];
    assert_int_equal(consumers->count, 2);
    assert_string_equal(consumers->elements[0].elements[1].str, "alice");
    assert_int_equal(consumers->elements[0].elements[3].integer, now - 7);
}

static void test_inspection_api(void **state)
{
    fixture *f = *state;
    fr_pending *p = (fr_pending *)1;
    size_t n = 99;
    fr_consumer_state st;
    assert_int_equal(fr_stream_pending(f->srv, 0, "s", 1, "g", 1, NULL, 0, &p, &n), -1);
    assert_null(p);
    assert_int_equal(n, 0);
    fake_run(f->c, "SET str v");
    assert_int_equal(fr_stream_pending(f->srv, 0, "str", 3, "g", 1, NULL, 0, &p, &n), -1);
    make_stream(f, 2);
    assert_int_equal(fr_stream_pending(f->srv, 0, "s", 1, "nog", 3, NULL, 0, &p, &n), -1);
    assert_int_equal(fr_stream_pending(f->srv, 1, "s", 1, "g", 1, NULL, 0, &p, &n), -1);
    assert_int_equal(fr_stream_pending(f->srv, 0, "s", 1, "g", 1, NULL, 0, &p, &n), 0);
    assert_null(p);
    assert_int_equal(n, 0);
    assert_int_equal(fr_stream_pending(f->srv, 0, "s", 1, "g", 1, "x", 1, &p, &n), -1);
    assert_int_equal(fr_stream_consumer(f->srv, 0, "s", 1, "g", 1, "x", 1, &st), -1);

    /* binary consumer names survive */
    const char *argv[] = {"XREADGROUP", "GROUP", "g", "a\0b", "STREAMS", "s", ">"};
    size_t lens[] = {10, 5, 1, 3, 7, 1, 1};
    fr_exec(f->c, 7, argv, lens);
    assert_int_equal(fr_stream_pending(f->srv, 0, "s", 1, "g", 1, "a\0b", 3, &p, &n), 0);
    assert_int_equal(n, 2);
    assert_int_equal(p[0].id_ms, 1);
    assert_int_equal(p[1].id_ms, 2);
    assert_int_equal(p[1].consumer_len, 3);
    assert_memory_equal(p[1].consumer, "a\0b", 4);
    free(p);
    assert_int_equal(fr_stream_consumer(f->srv, 0, "s", 1, "g", 1, "a\0b", 3, &st), 0);
    assert_int_equal(st.pending, 2);

    /* an expired key is gone, though no command deleted it yet */
    fake_run(f->c, "PEXPIRE s 10");
    fr_clock_advance(f->srv, 11);
    assert_int_equal(fr_stream_pending(f->srv, 0, "s", 1, "g", 1, NULL, 0, &p, &n), -1);
}

/* The dump of a stream (fri_stream_dump, t_stream.c) covers groups, consumers and
 * pending entries, with times relative to the clock. */
static void test_dump_has_groups(void **state)
{
    fixture *f = *state;
    make_stream(f, 2);
    fake_run(f->c, "XREADGROUP GROUP g alice COUNT 1 STREAMS s >");
    fr_clock_advance(f->srv, 25);
    fri_dent *e = fri_dict_find(f->srv->db[0].keys, "s", 1);
    assert_non_null(e);
    fri_buf b = {0};
    fri_stream_dump(&b, ((fri_obj *)e->v.ptr)->ptr, fr_clock_now(f->srv));
    fri_buf_append(&b, "", 1);
    assert_string_equal(b.p, "  1-0 \"f\" \"v1\"\n"
                             "  2-0 \"f\" \"v2\"\n"
                             "  group \"g\" last-delivered=1-0 entries-read=1\n"
                             "    consumer \"alice\" seen-ms-ago=25 pending=1\n"
                             "    pending 1-0 consumer=\"alice\" delivered-ms-ago=25 count=1\n");
    fri_buf_free(&b);
}

/* XREADGROUP's keys move (they follow STREAMS): in cluster mode they must share a slot,
 * and a line whose keys cannot be found is left to the command's own errors. */
static void test_xreadgroup_keys_in_cluster(void **state)
{
    (void)state;
    fr_config cfg = fr_config_default();
    cfg.cluster_enabled = 1;
    fr_server *srv = fr_server_new(&cfg);
    assert_non_null(srv);
    fr_client *c = fr_client_new(srv);
    assert_non_null(c);
    RESP_EQ(c, "-CROSSSLOT Keys in request don't hash to the same slot\r\n",
            "XREADGROUP GROUP g c COUNT 1 STREAMS a b > >");
    RESP_EQ(c, "-NOGROUP No such key '{t}a' or consumer group 'g' in XREADGROUP with GROUP "
               "option\r\n",
            "XREADGROUP GROUP g c NOACK STREAMS {t}a {t}b > >");
    /* "streams" as a group name is skipped as GROUP's argument */
    RESP_EQ(c, "-CROSSSLOT Keys in request don't hash to the same slot\r\n",
            "XREADGROUP GROUP streams streams BLOCK 1 STREAMS a b > >");
    RESP_EQ(c, "-ERR Unbalanced XREAD list of streams: for each stream key an ID or '$' must be "
               "specified.\r\n",
            "XREADGROUP GROUP g c STREAMS a b >");
    fr_client_free(c);
    fr_server_free(srv);
}

/* ----- The PEL invariant under random commands ------------------------------------------- */

#define R_ENTRIES 64  /* entry ids 1-0 .. R_ENTRIES-0 */
#define R_CONSUMERS 4 /* consumers c0 .. c3 */

/* What the replies say the PEL is. */
typedef struct model {
    int added;                        /* entries added so far (ids 1..added) */
    int deleted[R_ENTRIES + 1];       /* XDEL removed the entry */
    int pending[R_ENTRIES + 1];       /* the id is in the group's PEL */
    int owner[R_ENTRIES + 1];         /* its consumer */
    uint64_t count[R_ENTRIES + 1];    /* its delivery count */
    int64_t delivered[R_ENTRIES + 1]; /* its last delivery time */
    int exists[R_CONSUMERS];          /* the consumer exists */
} model;

static int id_of(const fr_reply *r)
{
    assert_int_equal(r->type, FR_REPLY_BULK);
    char *end;
    unsigned long long ms = strtoull(r->str, &end, 10);
    assert_string_equal(end, "-0");
    assert_true(ms >= 1 && ms <= R_ENTRIES);
    return (int)ms;
}

/* Checks the structures behind group g of s: every record of the group's PEL is in its
 * consumer's PEL and the other way round, with the same pointers. */
static void check_internals(fixture *f)
{
    fri_dent *e = fri_dict_find(f->srv->db[0].keys, "s", 1);
    assert_non_null(e);
    fri_stream *s = ((fri_obj *)e->v.ptr)->ptr;
    fri_dent *ge = fri_dict_find(s->cgroups, "g", 1);
    assert_non_null(ge);
    fri_stream_cg *cg = ge->v.ptr;
    assert_int_equal(fri_sidmap_check(cg->pel), 0);
    size_t total = 0;
    for (size_t i = 0; i < fri_dict_slots(cg->consumers); i++) {
        fri_dent *ce = fri_dict_slot(cg->consumers, i);
        if (!ce) continue;
        fri_stream_consumer *consumer = ce->v.ptr;
        assert_int_equal(fri_sidmap_check(consumer->pel), 0);
        assert_int_equal(consumer->name->len, ce->key->len);
        assert_memory_equal(consumer->name->buf, ce->key->buf, ce->key->len);
        fri_sidmap_iter it;
        fri_sid id;
        void *val;
        fri_sidmap_iter_init(&it, consumer->pel, FRI_SID_MIN, FRI_SID_MAX, 0);
        while (fri_sidmap_iter_next(&it, &id, &val)) {
            fri_stream_nack *nack = val;
            assert_ptr_equal(nack->consumer, consumer);
            assert_ptr_equal(fri_sidmap_get(cg->pel, id), nack);
            total++;
        }
    }
    assert_int_equal(total, fri_sidmap_len(cg->pel));
    fri_sidmap_iter it;
    fri_sid id;
    void *val;
    fri_sidmap_iter_init(&it, cg->pel, FRI_SID_MIN, FRI_SID_MAX, 0);
    while (fri_sidmap_iter_next(&it, &id, &val)) {
        fri_stream_nack *nack = val;
        assert_non_null(nack->consumer);
        assert_ptr_equal(fri_sidmap_get(nack->consumer->pel, id), nack);
        fri_dent *ce = fri_dict_find(cg->consumers, nack->consumer->name->buf,
                                     nack->consumer->name->len);
        assert_non_null(ce);
        assert_ptr_equal(ce->v.ptr, nack->consumer);
    }
}

/* Compares the model with the inspection API: the group's PEL and each consumer's. */
static void check_model(fixture *f, const model *m)
{
    fr_pending *p;
    size_t n;
    int64_t now = fr_clock_now(f->srv);
    assert_int_equal(fr_stream_pending(f->srv, 0, "s", 1, "g", 1, NULL, 0, &p, &n), 0);
    size_t k = 0;
    for (int id = 1; id <= R_ENTRIES; id++) {
        if (!m->pending[id]) continue;
        assert_true(k < n);
        assert_int_equal(p[k].id_ms, id);
        assert_int_equal(p[k].id_seq, 0);
        char name[8];
        snprintf(name, sizeof(name), "c%d", m->owner[id]);
        assert_string_equal(p[k].consumer, name);
        assert_int_equal(p[k].delivery_count, m->count[id]);
        assert_int_equal(p[k].idle_ms, now - m->delivered[id]);
        k++;
    }
    assert_int_equal(k, n);
    free(p);
    for (int ci = 0; ci < R_CONSUMERS; ci++) {
        char name[8];
        snprintf(name, sizeof(name), "c%d", ci);
        fr_consumer_state st;
        int rc = fr_stream_consumer(f->srv, 0, "s", 1, "g", 1, name, strlen(name), &st);
        if (!m->exists[ci]) {
            assert_int_equal(rc, -1);
            continue;
        }
        assert_int_equal(rc, 0);
        size_t mine = 0;
        for (int id = 1; id <= R_ENTRIES; id++) mine += m->pending[id] && m->owner[id] == ci;
        assert_int_equal(st.pending, mine);
        assert_int_equal(fr_stream_pending(f->srv, 0, "s", 1, "g", 1, name, strlen(name), &p, &n),
                         0);
        assert_int_equal(n, mine);
        for (size_t i = 0; i < n; i++) assert_string_equal(p[i].consumer, name);
        free(p);
    }
}

/* Applies one claimed id (XCLAIM / XAUTOCLAIM reply) to the model. */
static void model_claim(model *m, int id, int ci, int justid, int64_t now)
{
    assert_true(m->pending[id]);
    assert_false(m->deleted[id]);
    m->owner[id] = ci;
    if (!justid) m->count[id]++;
    m->delivered[id] = now;
}

static void random_step(fixture *f, model *m, uint64_t *rng)
{
    fr_client *c = f->c;
    int ci = (int)(xorshift64_next(rng) % R_CONSUMERS);
    int64_t now;
    int op = (int)(xorshift64_next(rng) % 100);
    fr_clock_advance(f->srv, (int64_t)(xorshift64_next(rng) % 50));
    now = fr_clock_now(f->srv);

    if (op < 6 && m->added < R_ENTRIES) { /* XADD */
        m->added++;
        fake_run(c, "XADD s %d-0 f v", m->added);
    } else if (op < 26) { /* XREADGROUP > */
        int count = 1 + (int)(xorshift64_next(rng) % 4);
        int noack = xorshift64_next(rng) % 5 == 0;
        const fr_reply *r = fake_run(c, "XREADGROUP GROUP g c%d COUNT %d %s STREAMS s >", ci, count,
                                noack ? "NOACK" : "");
        if (r->type == FR_REPLY_NIL_ARRAY) return;
        assert_int_equal(r->type, FR_REPLY_ARRAY);
        m->exists[ci] = 1;
        const fr_reply *entries = &r->elements[0].elements[1];
        assert_true(entries->count >= 1 && entries->count <= (size_t)count);
        for (size_t i = 0; i < entries->count; i++) {
            int id = id_of(&entries->elements[i].elements[0]);
            assert_false(m->deleted[id]);
            if (noack) continue;
            m->pending[id] = 1;
            m->owner[id] = ci;
            m->count[id] = 1;
            m->delivered[id] = now;
        }
    } else if (op < 38) { /* XREADGROUP history */
        int from = (int)(xorshift64_next(rng) % (R_ENTRIES / 2));
        const fr_reply *r = fake_run(c, "XREADGROUP GROUP g c%d COUNT 3 STREAMS s %d", ci, from);
        assert_int_equal(r->type, FR_REPLY_ARRAY);
        m->exists[ci] = 1;
        const fr_reply *entries = &r->elements[0].elements[1];
        for (size_t i = 0; i < entries->count; i++) {
            const fr_reply *e = &entries->elements[i];
            int id = id_of(&e->elements[0]);
            assert_true(id > from);
            assert_true(m->pending[id]);
            assert_int_equal(m->owner[id], ci);
            if (e->elements[1].type == FR_REPLY_NIL_ARRAY) {
                assert_true(m->deleted[id]);
            } else {
                assert_false(m->deleted[id]);
                m->count[id]++;
                m->delivered[id] = now;
            }
        }
    } else if (op < 50) { /* XACK */
        int a = 1 + (int)(xorshift64_next(rng) % R_ENTRIES),
            b = 1 + (int)(xorshift64_next(rng) % R_ENTRIES);
        long long expect = m->pending[a] + (b != a && m->pending[b]);
        assert_int_equal(INT(c, "XACK s g %d-0 %d %d-0", a, b, a), expect);
        m->pending[a] = m->pending[b] = 0;
    } else if (op < 64) { /* XCLAIM */
        int a = 1 + (int)(xorshift64_next(rng) % R_ENTRIES),
            b = 1 + (int)(xorshift64_next(rng) % R_ENTRIES);
        int justid = xorshift64_next(rng) % 2 == 0;
        const fr_reply *r = fake_run(c, "XCLAIM s g c%d 0 %d-0 %d-0 %s", ci, a, b,
                                justid ? "JUSTID" : "");
        assert_int_equal(r->type, FR_REPLY_ARRAY);
        size_t k = 0;
        int ids[2] = {a, b};
        for (int i = 0; i < 2; i++) {
            int id = ids[i];
            if (m->pending[id] && m->deleted[id]) m->pending[id] = 0;
            if (!m->pending[id]) continue;
            assert_true(k < r->count);
            const fr_reply *e = &r->elements[k++];
            assert_int_equal(id_of(justid ? e : &e->elements[0]), id);
            m->exists[ci] = 1;
            model_claim(m, id, ci, justid, now);
        }
        assert_int_equal(k, r->count);
    } else if (op < 76) { /* XAUTOCLAIM */
        int from = 1 + (int)(xorshift64_next(rng) % R_ENTRIES);
        int count = 1 + (int)(xorshift64_next(rng) % 5);
        int justid = xorshift64_next(rng) % 2 == 0;
        const fr_reply *r = fake_run(c, "XAUTOCLAIM s g c%d 0 %d-0 COUNT %d %s", ci, from, count,
                                justid ? "JUSTID" : "");
        assert_int_equal(r->type, FR_REPLY_ARRAY);
        assert_int_equal(r->count, 3);
        const fr_reply *claimed = &r->elements[1], *deleted = &r->elements[2];
        /* with min-idle 0 the scan takes the first count pending ids from `from` on:
         * the deleted ones leave the PEL, the others are claimed */
        size_t nd = 0, nc = 0;
        int examined = 0, id = from;
        for (; id <= R_ENTRIES && examined < count; id++) {
            if (!m->pending[id]) continue;
            examined++;
            if (m->deleted[id]) {
                assert_true(nd < deleted->count);
                assert_int_equal(id_of(&deleted->elements[nd++]), id);
                m->pending[id] = 0;
            } else {
                assert_true(nc < claimed->count);
                const fr_reply *e = &claimed->elements[nc++];
                assert_int_equal(id_of(justid ? e : &e->elements[0]), id);
                m->exists[ci] = 1;
                model_claim(m, id, ci, justid, now);
            }
        }
        assert_int_equal(nd, deleted->count);
        assert_int_equal(nc, claimed->count);
        /* the cursor: the next pending id after the scan, or 0-0 at the end */
        while (id <= R_ENTRIES && !m->pending[id]) id++;
        if (id > R_ENTRIES) assert_string_equal(r->elements[0].str, "0-0");
        else assert_int_equal(id_of(&r->elements[0]), id);
    } else if (op < 86) { /* XDEL */
        int id = 1 + (int)(xorshift64_next(rng) % R_ENTRIES);
        long long expect = id <= m->added && !m->deleted[id];
        assert_int_equal(INT(c, "XDEL s %d-0", id), expect);
        if (id <= m->added) m->deleted[id] = 1;
    } else if (op < 93) { /* XGROUP DELCONSUMER */
        long long mine = 0;
        for (int id = 1; id <= R_ENTRIES; id++) mine += m->pending[id] && m->owner[id] == ci;
        assert_int_equal(INT(c, "XGROUP DELCONSUMER s g c%d", ci), mine);
        for (int id = 1; id <= R_ENTRIES; id++)
            if (m->pending[id] && m->owner[id] == ci) m->pending[id] = 0;
        m->exists[ci] = 0;
    } else if (op < 97) { /* XGROUP SETID: entries get delivered again */
        int to = (int)(xorshift64_next(rng) % (m->added + 1));
        OK(c, "XGROUP SETID s g %d", to);
    } else { /* XGROUP CREATECONSUMER */
        assert_int_equal(INT(c, "XGROUP CREATECONSUMER s g c%d", ci), !m->exists[ci]);
        m->exists[ci] = 1;
    }
}

static void run_random(uint64_t seed, int steps)
{
    fixture *f = fake_fixture_new(NULL, 1);
    model *m = calloc(1, sizeof(*m));
    assert_non_null(m);
    for (m->added = 0; m->added < R_ENTRIES / 2;) {
        m->added++;
        fake_run(f->c, "XADD s %d-0 f v", m->added);
    }
    OK(f->c, "XGROUP CREATE s g 0");
    uint64_t rng = seed * 0x9e3779b97f4a7c15ull + 1;
    for (int i = 0; i < steps; i++) {
        random_step(f, m, &rng);
        check_internals(f);
        check_model(f, m);
    }
    free(m);
    fake_fixture_free(f);
}

static void test_pel_random_seed1(void **state)
{
    (void)state;
    run_random(1, 3000);
}

static void test_pel_random_many_seeds(void **state)
{
    (void)state;
    for (uint64_t seed = 2; seed < 30; seed++) run_random(seed, 400);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        FAKE_TEST(test_delivery_count_and_idle),
        FAKE_TEST(test_redelivery_moves_entry),
        FAKE_TEST(test_xclaim_times_and_counts),
        FAKE_TEST(test_min_idle_boundaries),
        FAKE_TEST(test_deleted_while_pending),
        FAKE_TEST(test_consumer_seen_time),
        FAKE_TEST(test_inspection_api),
        FAKE_TEST(test_dump_has_groups),
        cmocka_unit_test(test_xreadgroup_keys_in_cluster),
        cmocka_unit_test(test_pel_random_seed1),
        cmocka_unit_test(test_pel_random_many_seeds),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
