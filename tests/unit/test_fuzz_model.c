/* test_fuzz_model.c -- libwsm (model/): the choice source's back ends, the reference model against
 * hand-written expectations for the stories of SEMANTICS.md and docs/engine.md, the
 * scenario writer's round trip, seeded runs of the engine against the model, and the
 * shrinker (`wsim repro`).
 *
 * The model's expectations below are written from the contract, not from the engine: the
 * stream ids are the fake's virtual clock (1700000000000-0, -1, ...), keys are gen.h's
 * (`k`, group `g`, consumer `c1`, delay queue `k:delayed`).  A seeded run that fails
 * prints its seed; `wsim repro seed:N` turns it into the smallest failing scenario. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "wsm.h"
#include "wsc.h"

/* ----- The choice source -------------------------------------------------------------- */

/* FuzzedDataProvider's own answers for these bytes and calls (computed once with
 * libFuzzer's FuzzedDataProvider.h from clang 14: ConsumeIntegralInRange<uint64_t>(0,
 * 1000), ConsumeBool, PickValueInArray of 5, ConsumeBytes(3), ConsumeIntegralInRange
 * (10, 10), (5, 70000), (0, UINT64_MAX), ConsumeBool, (7, 9)). */
static void fdp_reads_as_libfuzzer(void **state)
{
    (void)state;
    static const uint8_t data[] = {0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x07,
                                   0x08, 0x09, 0x0a, 0xff, 0x80, 0x33};
    ch c;
    ch_init_fdp(&c, data, sizeof data, 1);
    assert_int_equal(ch_int(&c, 0, 1000), 171); /* 0x3380 % 1001: from the end, MSB first */
    assert_int_equal(ch_bool(&c), 1);           /* 1 & 0xff */
    assert_int_equal(ch_pick(&c, 5), 0);        /* 0x0a % 5 */
    uint8_t b[3];
    assert_int_equal(ch_bytes(&c, b, 3), 3);    /* ConsumeBytes: from the start */
    assert_int_equal(b[0], 1);
    assert_int_equal(b[1], 2);
    assert_int_equal(b[2], 3);
    assert_int_equal(ch_int(&c, 10, 10), 10);   /* no byte for an empty range */
    assert_int_equal(ch_int(&c, 5, 70000), 31916);
    assert_int_equal(ch_int(&c, 0, UINT64_MAX), 394500); /* what is left, no modulo */
    assert_int_equal(ch_bool(&c), 0);           /* exhausted: lo */
    assert_int_equal(ch_int(&c, 7, 9), 7);
    assert_true(c.exhausted);
    ch_free(&c);
}

/* Recorded choices written back as fuzz bytes replay as the same choices. */
static void recorded_choices_replay_as_fuzz_bytes(void **state)
{
    (void)state;
    for (uint64_t seed = 1; seed <= 50; seed++) {
        ch c;
        ch_init_prng(&c, seed, 1);
        uint64_t want[64];
        uint8_t head[4];
        for (int i = 0; i < 64; i++) {
            uint64_t hi = (uint64_t)(i * 37 % 300);
            want[i] = i % 5 == 4 ? (uint64_t)ch_bool(&c) : ch_int(&c, 0, hi);
        }
        ch_bytes(&c, head, 4);
        size_t n;
        const ch_rec *rec = ch_recorded(&c, &n);
        uint8_t *bytes;
        size_t len = ch_to_fdp(rec, n, &bytes);
        ch f;
        ch_init_fdp(&f, bytes, len, 0);
        for (int i = 0; i < 64; i++) {
            uint64_t hi = (uint64_t)(i * 37 % 300);
            uint64_t got = i % 5 == 4 ? (uint64_t)ch_bool(&f) : ch_int(&f, 0, hi);
            assert_int_equal(got, want[i]);
        }
        uint8_t again[4];
        assert_int_equal(ch_bytes(&f, again, 4), 4);
        assert_memory_equal(again, head, 4);
        free(bytes);
        ch_free(&c);
        ch_free(&f);
    }
}

/* A small generator with choices that depend on earlier ones. */
static uint64_t nested(ch *c)
{
    uint64_t a = ch_int(c, 0, 2);
    if (a == 0) return 1000;                      /* 1 vector */
    if (a == 1) return 100 + ch_int(c, 0, 9);     /* digits capped at max_value 3: 4 */
    uint64_t b = ch_int(c, 0, 1);
    uint64_t d = ch_int(c, 0, b ? 2 : 1);         /* 2 + 3 */
    return 10 * b + d;
}

/* The odometer runs every vector within its bounds exactly once, in lexicographic
 * order. */
static void odometer_covers_exactly_the_space(void **state)
{
    (void)state;
    ch c;
    ch_init_odometer(&c, 8, 3, 1);
    uint64_t seen[64];
    size_t n = 0;
    uint64_t prev[8] = {0};
    size_t prevn = 0;
    do {
        seen[n++] = nested(&c);
        size_t k;
        const ch_rec *rec = ch_recorded(&c, &k);
        uint64_t cur[8] = {0};
        for (size_t i = 0; i < k; i++) cur[i] = rec[i].value;
        if (n > 1) { /* strictly after the previous vector */
            size_t i = 0;
            while (i < k && i < prevn && cur[i] == prev[i]) i++;
            assert_true(i < k && i < prevn && cur[i] > prev[i]);
        }
        memcpy(prev, cur, sizeof prev);
        prevn = k;
        assert_true(n < 64);
    } while (ch_odo_next(&c));
    assert_int_equal(n, 1 + 4 + 2 + 3);
    for (size_t i = 0; i < n; i++)
        for (size_t j = i + 1; j < n; j++) assert_int_not_equal(seen[i], seen[j]);
    ch_free(&c);
    /* max_depth bounds a run: later choices take lo and say so */
    ch_init_odometer(&c, 2, 1, 0);
    size_t runs = 0;
    do {
        for (int i = 0; i < 4; i++) ch_int(&c, 0, 1);
        assert_true(c.truncated);
        runs++;
    } while (ch_odo_next(&c));
    assert_int_equal(runs, 4);
    ch_free(&c);
}

/* PRNG: the same seed, the same choices; REPLAY: clamped, then lo. */
static void prng_and_replay(void **state)
{
    (void)state;
    ch a, b;
    ch_init_prng(&a, 42, 0);
    ch_init_prng(&b, 42, 0);
    for (int i = 0; i < 1000; i++) {
        uint64_t x = ch_int(&a, 3, 17);
        assert_int_equal(x, ch_int(&b, 3, 17));
        assert_true(x >= 3 && x <= 17);
    }
    static const uint64_t v[] = {5, 99, 1};
    ch r;
    ch_init_replay(&r, v, 3, 0);
    assert_int_equal(ch_int(&r, 10, 20), 15);
    assert_int_equal(ch_int(&r, 0, 3), 3); /* clamped */
    assert_int_equal(ch_bool(&r), 1);
    assert_int_equal(ch_int(&r, 7, 9), 7); /* past the end: lo */
    assert_true(r.exhausted);
    unsigned w[3] = {0, 2, 1};
    static const uint64_t z[] = {0, 2};
    ch_init_replay(&r, z, 2, 0);
    assert_int_equal(ch_weighted(&r, w, 3), 1); /* 0 picks the first non-zero weight */
    assert_int_equal(ch_weighted(&r, w, 3), 2);
}

/* ----- The model on hand-made runs ----------------------------------------------------- */

static gen_str str(const char *s)
{
    gen_str g;
    g.len = strlen(s);
    g.p = malloc(g.len + 1);
    assert_non_null(g.p);
    memcpy(g.p, s, g.len + 1);
    return g;
}

static gen_step *add(gen_run *r, gen_kind kind)
{
    r->steps = realloc(r->steps, (r->nsteps + 1) * sizeof *r->steps);
    assert_non_null(r->steps);
    gen_step *s = &r->steps[r->nsteps++];
    memset(s, 0, sizeof *s);
    s->kind = kind;
    return s;
}

static void produce(gen_run *r, const char *payload)
{
    add(r, GS_PRODUCE)->payload = str(payload);
    r->nentries++;
}

static void read_(gen_run *r) { add(r, GS_READ); }

/* e<entry>: queue/pool a space-separated command. */
static void command(gen_run *r, gen_kind kind, size_t entry, const char *line)
{
    gen_step *s = add(r, kind);
    s->entry = entry;
    char buf[256];
    snprintf(buf, sizeof buf, "%s", line);
    for (char *tok = strtok(buf, " "); tok; tok = strtok(NULL, " ")) {
        s->cmd.argv = realloc(s->cmd.argv, (size_t)(s->cmd.argc + 1) * sizeof *s->cmd.argv);
        assert_non_null(s->cmd.argv);
        s->cmd.argv[s->cmd.argc++] = str(tok);
    }
}

static void settle(gen_run *r, size_t entry, ws_outcome o, int64_t ms)
{
    gen_step *s = add(r, GS_SETTLE);
    s->entry = entry;
    s->outcome = o;
    s->ms = ms;
}

static gen_run run_of(ws_form form, ws_mode mode, size_t count)
{
    gen_run r;
    memset(&r, 0, sizeof r);
    r.cfg.form = form;
    r.cfg.mode = mode;
    r.cfg.count = count;
    r.cfg.seed = 1;
    return r;
}

/* Flush `number` of main as "[rt] command -> reply" lines. */
static char *flush_text(const mdl_result *m, uint64_t number)
{
    size_t cap = 4096, len = 0;
    char *t = calloc(cap, 1);
    assert_non_null(t);
    for (size_t i = 0; i < m->nflushes; i++) {
        if (m->flushes[i].sub != 0 || m->flushes[i].number != number) continue;
        for (size_t k = 0; k < m->flushes[i].n; k++) {
            const mdl_fcmd *c = &m->flushes[i].cmds[k];
            size_t need = strlen(c->text) + strlen(c->reply) + 32;
            if (len + need >= cap) {
                cap = (cap + need) * 2;
                t = realloc(t, cap);
                assert_non_null(t);
            }
            len += (size_t)snprintf(t + len, cap - len, "[%zu] %s -> %s\n", c->rt, c->text, c->reply);
        }
    }
    return t;
}

static void expect_flush(const gen_run *r, uint64_t number, const char *want)
{
    mdl_result m;
    mdl_predict(r, 0, &m);
    assert_null(m.error);
    char *got = flush_text(&m, number);
    if (strcmp(got, want) != 0) fprintf(stderr, "flush %llu:\n%s\nwanted:\n%s\n",
                                        (unsigned long long)number, got, want);
    assert_string_equal(got, want);
    free(got);
    mdl_result_free(&m);
}

/* docs/engine.md's example, the seed page "Window": three entries each queue an INCR, the
 * middle one dropped: both kept segments, then one XACK of all three, one round trip. */
static void window_story(void **state)
{
    (void)state;
    gen_run r = run_of(WS_FORM_STREAM, WS_MODE_WINDOW, 3);
    produce(&r, "order-1");
    produce(&r, "order-2");
    produce(&r, "order-3");
    read_(&r);
    command(&r, GS_QUEUE, 1, "INCR picked:order-1");
    command(&r, GS_QUEUE, 2, "INCR picked:order-2");
    command(&r, GS_QUEUE, 3, "INCR picked:order-3");
    settle(&r, 1, WS_ACK, 0);
    settle(&r, 2, WS_DROP, 0);
    settle(&r, 3, WS_ACK, 0);
    expect_flush(&r, 1,
                 "[1] INCR picked:order-1 -> :1\n"
                 "[1] INCR picked:order-3 -> :1\n"
                 "[1] XACK k g 1700000000000-0 1700000000000-1 1700000000000-2 -> :3\n");
    gen_free(&r);
}

/* §3 with retries (docs/engine.md "The window"): 1-0 acked with a segment, 1-1 retried,
 * 1-2 dropped, 1-3 retried after 30 s through a delay queue with a TTL, settled 1-1, 1-0,
 * 1-3, 1-2: segments and retry writes in one round trip, then one XACK -- the deliveries
 * that wrote nothing first, then the retried ones, each in settle order.  An undeclared
 * retry is the broker's requeue: the entry re-added as delivered (the counter not
 * raised); the delay-queue member is [u32 id length][id][binary frame of the copy, its
 * counter raised]. */
static void retries_in_a_flush(void **state)
{
    (void)state;
    gen_run r = run_of(WS_FORM_STREAM, WS_MODE_WINDOW, 4);
    r.cfg.delay_queue = 1;
    r.cfg.ttl_ms = 86400000;
    for (int i = 1; i <= 4; i++) {
        char p[8];
        snprintf(p, sizeof p, "o%d", i);
        produce(&r, p);
    }
    read_(&r);
    command(&r, GS_QUEUE, 1, "INCR n");
    settle(&r, 2, WS_RETRY, 0);
    settle(&r, 1, WS_ACK, 0);
    settle(&r, 4, WS_RETRY_AFTER, 30000);
    settle(&r, 3, WS_DROP, 0);
    expect_flush(&r, 1,
                 "[1] INCR n -> :1\n"
                 "[1] XADD k * _payload o2 -> \"1700000000000-4\"\n"
                 "[1] ZADD k:delayed 1700000030000 "
                 "\"\\x00\\x00\\x00\\x0f1700000000000-3\\x00\\x00\\x00\\x01\\x00\\x00\\x00\\x18"
                 "x-ruststream-retry-count\\x00\\x00\\x00\\x011o4\" -> :1\n"
                 "[1] PEXPIRE k:delayed 86400000 -> :1\n"
                 "[2] XACK k g 1700000000000-0 1700000000000-2 1700000000000-1 "
                 "1700000000000-3 -> :4\n");
    gen_free(&r);
}

/* §4: an acked segment wrapped in MULTI with its own XACK; an ack with no segment joins
 * the shared XACK; a dropped segment never leaves. */
static void atomic_segments(void **state)
{
    (void)state;
    gen_run r = run_of(WS_FORM_STREAM, WS_MODE_ATOMIC, 3);
    produce(&r, "a");
    produce(&r, "b");
    produce(&r, "c");
    read_(&r);
    command(&r, GS_QUEUE, 1, "INCR n:1");
    command(&r, GS_QUEUE, 2, "INCR n:2");
    settle(&r, 1, WS_ACK, 0);
    settle(&r, 2, WS_DROP, 0);
    settle(&r, 3, WS_ACK, 0);
    expect_flush(&r, 1,
                 "[1] MULTI -> +OK\n"
                 "[1] INCR n:1 -> +QUEUED\n"
                 "[1] XACK k g 1700000000000-0 -> +QUEUED\n"
                 "[1] EXEC -> [:1, :1]\n"
                 "[1] XACK k g 1700000000000-1 1700000000000-2 -> :2\n");
    gen_free(&r);
}

/* §4 and §5: a segment Redis refuses at queue time runs nothing (EXECABORT, the entry
 * stays pending); a run-time error fails alone; one report, handed out by the next read
 * instead of a read. */
static void execabort_and_the_report(void **state)
{
    (void)state;
    gen_run r = run_of(WS_FORM_STREAM, WS_MODE_ATOMIC, 2);
    produce(&r, "a");
    produce(&r, "b");
    read_(&r);
    command(&r, GS_QUEUE, 1, "RPUSH log a");
    command(&r, GS_QUEUE, 1, "INCR");
    command(&r, GS_QUEUE, 2, "RPUSH log b");
    command(&r, GS_QUEUE, 2, "LPUSH str b");
    settle(&r, 1, WS_ACK, 0);
    settle(&r, 2, WS_ACK, 0);
    read_(&r);
    expect_flush(&r, 1,
                 "[1] MULTI -> +OK\n"
                 "[1] RPUSH log a -> +QUEUED\n"
                 "[1] INCR -> -ERR wrong number of arguments for 'incr' command\n"
                 "[1] XACK k g 1700000000000-0 -> +QUEUED\n"
                 "[1] EXEC -> -EXECABORT Transaction discarded because of previous errors.\n"
                 "[1] MULTI -> +OK\n"
                 "[1] RPUSH log b -> +QUEUED\n"
                 "[1] LPUSH str b -> +QUEUED\n"
                 "[1] XACK k g 1700000000000-1 -> +QUEUED\n"
                 "[1] EXEC -> [:1, -WRONGTYPE Operation against a key holding the wrong kind "
                 "of value, :1]\n");
    mdl_result m;
    mdl_predict(&r, 0, &m);
    assert_int_equal(m.nreads, 2);
    assert_true(m.reads[1].is_report);
    assert_int_equal(m.reads[1].commands, 10);
    assert_int_equal(m.reads[1].settles, 0);
    assert_int_equal(m.reads[1].failed, 3);
    assert_string_equal(m.reads[1].first_error, "ERR wrong number of arguments for 'incr' command");
    int pending_checked = 0;
    for (size_t i = 0; i < m.nstate; i++)
        if (!strcmp(m.state[i].command, "XPENDING k g - + 1000000")) {
            assert_string_equal(m.state[i].reply, "[[\"1700000000000-0\", \"c1\", :0, :1]]");
            pending_checked = 1;
        }
    assert_true(pending_checked);
    assert_int_equal(m.nviol, 0);
    mdl_result_free(&m);
    gen_free(&r);
}

/* §6: an atomic batch of two acked members is one transaction with a settle per member;
 * a batch of a drop and an ack is discarded, its acked member settled with the others
 * in settle order.  A batch subscription reads COUNT = its size: one batch per read. */
static void atomic_batches(void **state)
{
    (void)state;
    gen_run r = run_of(WS_FORM_STREAM, WS_MODE_ATOMIC, 2);
    r.cfg.batch = 2;
    for (int i = 0; i < 4; i++) produce(&r, i == 0 ? "a" : i == 1 ? "b" : i == 2 ? "c" : "d");
    read_(&r);
    read_(&r);
    command(&r, GS_QUEUE, 1, "INCR b");
    command(&r, GS_QUEUE, 2, "INCR b");
    settle(&r, 1, WS_ACK, 0);
    settle(&r, 2, WS_ACK, 0);
    settle(&r, 4, WS_DROP, 0);
    settle(&r, 3, WS_ACK, 0);
    expect_flush(&r, 1,
                 "[1] MULTI -> +OK\n"
                 "[1] INCR b -> +QUEUED\n"
                 "[1] INCR b -> +QUEUED\n"
                 "[1] XACK k g 1700000000000-0 -> +QUEUED\n"
                 "[1] XACK k g 1700000000000-1 -> +QUEUED\n"
                 "[1] EXEC -> [:1, :2, :1, :1]\n");
    expect_flush(&r, 2, "[1] XACK k g 1700000000000-3 1700000000000-2 -> :2\n");
    gen_free(&r);
}

/* §9: the last delivery abandoned flushes what the others settled; a stop flushes what
 * is owed; in both the unsettled entry stays pending. */
static void abandon_and_stop_flush(void **state)
{
    (void)state;
    gen_run r = run_of(WS_FORM_STREAM, WS_MODE_WINDOW, 2);
    produce(&r, "a");
    produce(&r, "b");
    read_(&r);
    settle(&r, 1, WS_ACK, 0);
    settle(&r, 2, WS_ABANDON, 0);
    expect_flush(&r, 1, "[1] XACK k g 1700000000000-0 -> :1\n");
    gen_free(&r);

    r = run_of(WS_FORM_STREAM, WS_MODE_WINDOW, 2);
    produce(&r, "a");
    produce(&r, "b");
    read_(&r);
    settle(&r, 1, WS_ACK, 0);
    add(&r, GS_STOP);
    expect_flush(&r, 1, "[1] XACK k g 1700000000000-0 -> :1\n");
    gen_free(&r);
}

/* §2.2: a reliable list settles with one LREM per delivery; §6: the InRound reply leaves
 * after what the handler queued, whenever it was made. */
static void lists_and_in_round_replies(void **state)
{
    (void)state;
    gen_run r = run_of(WS_FORM_RELIABLE_LIST, WS_MODE_WINDOW, 2);
    r.cfg.reply_form = WS_FORM_PLAIN_LIST;
    r.cfg.reply_in_round = 1;
    produce(&r, "j1");
    produce(&r, "j2");
    read_(&r);
    gen_step *s = add(&r, GS_REPLY);
    s->entry = 1;
    s->payload = str("done");
    command(&r, GS_QUEUE, 1, "RPUSH log x");
    settle(&r, 1, WS_ACK, 0);
    settle(&r, 2, WS_DROP, 0);
    expect_flush(&r, 1,
                 "[1] RPUSH log x -> :1\n"
                 "[1] LPUSH out.l \"\\x00\\x00\\x00\\x00done\" -> :1\n"
                 "[1] LREM k.processing 1 \"\\x00\\x00\\x00\\x00j1\" -> :1\n"
                 "[1] LREM k.processing 1 \"\\x00\\x00\\x00\\x00j2\" -> :1\n");
    gen_free(&r);
}

/* §7: direct mode writes at once and settles each delivery on its own, one command per
 * round trip; an undeclared retry is the broker's requeue (the entry re-added as it was,
 * then acknowledged), and the redelivery writes again: the model says "doubled".  The
 * subscription's start makes its group through the pool first. */
static void direct_mode_doubles(void **state)
{
    (void)state;
    gen_run r = run_of(WS_FORM_STREAM, WS_MODE_DIRECT, 1);
    produce(&r, "o1");
    read_(&r);
    command(&r, GS_QUEUE, 1, "RPUSH log a");
    settle(&r, 1, WS_RETRY, 0);
    read_(&r);
    command(&r, GS_QUEUE, 1, "RPUSH log b");
    settle(&r, 1, WS_ACK, 0);
    mdl_result m;
    mdl_predict(&r, 0, &m);
    assert_null(m.error);
    assert_int_equal(m.nflushes, 0);
    const char *want[][2] = {
        {"subscribe main", "XGROUP CREATE k g $ MKSTREAM"},
        {"read 1 of main", "XREADGROUP GROUP g c1 COUNT 1 BLOCK 10 STREAMS k >"},
        {"direct write of 1700000000000-0", "RPUSH log a"},
        {"settle of 1700000000000-0", "XADD k * _payload o1"},
        {"settle of 1700000000000-0", "XACK k g 1700000000000-0"},
        {"read 2 of main", "XREADGROUP GROUP g c1 COUNT 1 BLOCK 10 STREAMS k >"},
        {"direct write of 1700000000000-1", "RPUSH log b"},
        {"settle of 1700000000000-1", "XACK k g 1700000000000-1"},
    };
    assert_int_equal(m.nrts, 8);
    for (size_t i = 0; i < 8; i++) {
        assert_string_equal(m.rts[i].cause, want[i][0]);
        assert_string_equal(m.rts[i].cmds[0], want[i][1]);
    }
    assert_int_equal(m.nviol, 1);
    assert_string_equal(m.viol[0].kind, "doubled");
    assert_int_equal(m.viol[0].entry, 1);
    mdl_result_free(&m);
    gen_free(&r);
}

/* §2.1 and §8: retry_after without a delay queue settles as dropped now and publishes the
 * copy (its counter raised) when the clock passes; a crash first loses it ("lost"). */
static void a_timer_copy_and_its_loss(void **state)
{
    (void)state;
    for (int crash_first = 0; crash_first < 2; crash_first++) {
        gen_run r = run_of(WS_FORM_STREAM, WS_MODE_WINDOW, 1);
        produce(&r, "o1");
        read_(&r);
        settle(&r, 1, WS_RETRY_AFTER, 5000);
        if (crash_first) add(&r, GS_CRASH);
        add(&r, GS_ADVANCE)->ms = 5000;
        mdl_result m;
        mdl_predict(&r, 0, &m);
        assert_null(m.error);
        assert_string_equal(m.rts[2].cause, "flush 1 of main after read 1");
        assert_string_equal(m.rts[2].cmds[0], "XACK k g 1700000000000-0");
        if (crash_first) {
            assert_int_equal(m.nrts, 3);
            assert_int_equal(m.nviol, 1);
            assert_string_equal(m.viol[0].kind, "lost");
        } else {
            assert_int_equal(m.nrts, 4);
            assert_string_equal(m.rts[3].cause, "retry timer of 1700000000000-0");
            assert_string_equal(m.rts[3].cmds[0],
                                "XADD k * _payload o1 h:x-ruststream-retry-count 1");
            assert_int_equal(m.nviol, 0);
        }
        mdl_result_free(&m);
        gen_free(&r);
    }
}

/* The model's round trips as "conn (cause): command | command" lines. */
static char *rts_text(const mdl_result *m)
{
    size_t cap = 4096, len = 0;
    char *t = calloc(cap, 1);
    assert_non_null(t);
    for (size_t i = 0; i < m->nrts; i++) {
        const mdl_rt *rt = &m->rts[i];
        size_t need = strlen(rt->conn) + strlen(rt->cause) + 8;
        for (size_t k = 0; k < rt->n; k++) need += strlen(rt->cmds[k]) + 3;
        if (len + need >= cap) {
            cap = (cap + need) * 2;
            t = realloc(t, cap);
            assert_non_null(t);
        }
        len += (size_t)snprintf(t + len, cap - len, "%s (%s):", rt->conn, rt->cause);
        for (size_t k = 0; k < rt->n; k++)
            len += (size_t)snprintf(t + len, cap - len, "%s %s", k ? " |" : "", rt->cmds[k]);
        len += (size_t)snprintf(t + len, cap - len, "\n");
    }
    return t;
}

static void expect_rts(const gen_run *r, const char *want, size_t nviol)
{
    mdl_result m;
    mdl_predict(r, 0, &m);
    assert_null(m.error);
    char *got = rts_text(&m);
    if (strcmp(got, want) != 0) fprintf(stderr, "round trips:\n%s\nwanted:\n%s\n", got, want);
    assert_string_equal(got, want);
    if (m.nviol != nviol)
        for (size_t i = 0; i < m.nviol; i++) fprintf(stderr, "violation %s e%zu\n", m.viol[i].kind, m.viol[i].entry);
    assert_int_equal(m.nviol, nviol);
    free(got);
    mdl_result_free(&m);
}

static void produce_with(gen_run *r, const char *payload, const char *hname, const char *hval)
{
    gen_step *s = add(r, GS_PRODUCE);
    s->payload = str(payload);
    s->hname = str(hname);
    s->hval = str(hval);
    r->nentries++;
}

/* A retry at the cap of max-attempts (the retry counter + 1 >= N): the broker settles it
 * as dropped; the runtime then copies it to the dead letter at once, its counter raised,
 * after the window's flush -- or, with no dead letter, rejects it (nothing more).  Either
 * way the entry is settled: no violation. */
static void dead_letter_and_rejection_at_the_cap(void **state)
{
    (void)state;
    for (int dlq = 0; dlq < 2; dlq++) {
        gen_run r = run_of(WS_FORM_STREAM, WS_MODE_WINDOW, 1);
        r.cfg.max_attempts = dlq ? 2 : 1;
        r.cfg.dead_letter = dlq;
        if (dlq) produce_with(&r, "o1", "x-ruststream-retry-count", "1");
        else produce(&r, "o1");
        read_(&r);
        settle(&r, 1, WS_RETRY, 0);
        expect_rts(&r,
                   dlq ? "window (subscribe main): XGROUP CREATE k g $ MKSTREAM\n"
                         "reader (read 1 of main): XREADGROUP GROUP g c1 COUNT 1 BLOCK 10 STREAMS k >\n"
                         "window (flush 1 of main after read 1): XACK k g 1700000000000-0\n"
                         "window (dead letter of 1700000000000-0): XADD dlq * _payload o1 "
                         "h:x-ruststream-retry-count 2\n"
                       : "window (subscribe main): XGROUP CREATE k g $ MKSTREAM\n"
                         "reader (read 1 of main): XREADGROUP GROUP g c1 COUNT 1 BLOCK 10 STREAMS k >\n"
                         "window (flush 1 of main after read 1): XACK k g 1700000000000-0\n",
                   0);
        gen_free(&r);
    }
}

/* A plain list cannot requeue: an undeclared retry publishes nothing.  Declared (below
 * the cap), the runtime copies the message back at once, framed, its counter raised; the
 * next read hands the copy out as the same entry. */
static void plain_list_retries(void **state)
{
    (void)state;
    for (int declared = 0; declared < 2; declared++) {
        gen_run r = run_of(WS_FORM_PLAIN_LIST, WS_MODE_WINDOW, 1);
        r.cfg.max_attempts = declared ? 3 : 0;
        produce(&r, "p1");
        read_(&r);
        settle(&r, 1, WS_RETRY, 0);
        read_(&r);
        expect_rts(&r,
                   declared ? "reader (read 1 of main): RPOP k 1\n"
                              "window (retry copy of \"\\x00\\x00\\x00\\x00p1\"): LPUSH k \"\\x00\\x00\\x00\\x01\\x00\\x00"
                              "\\x00\\x18x-ruststream-retry-count\\x00\\x00\\x00\\x011p1\"\n"
                              "reader (read 2 of main): RPOP k 1\n"
                            : "reader (read 1 of main): RPOP k 1\n"
                              "reader (read 2 of main): RPOP k 1\n"
                              "reader (read 2 of main): BRPOP k 0.010\n",
                   0);
        mdl_result m;
        mdl_predict(&r, 0, &m);
        assert_int_equal(m.nreads, 2);
        assert_int_equal(m.reads[1].n, (size_t)declared);
        if (declared) {
            assert_int_equal(m.reads[1].entries[0], 1);
            assert_string_equal(m.reads[1].payloads[0].p, "p1");
        }
        mdl_result_free(&m);
        gen_free(&r);
    }
}

/* A reply outside the round is the handler's return value: published through the pool at
 * the ack, before the settle; never for a drop. */
static void a_reply_waits_for_the_ack(void **state)
{
    (void)state;
    for (int ack = 0; ack < 2; ack++) {
        gen_run r = run_of(WS_FORM_STREAM, WS_MODE_WINDOW, 1);
        r.cfg.reply_form = WS_FORM_PLAIN_LIST;
        produce(&r, "o1");
        read_(&r);
        gen_step *s = add(&r, GS_REPLY);
        s->entry = 1;
        s->payload = str("done");
        settle(&r, 1, ack ? WS_ACK : WS_DROP, 0);
        expect_rts(&r,
                   ack ? "window (subscribe main): XGROUP CREATE k g $ MKSTREAM\n"
                         "reader (read 1 of main): XREADGROUP GROUP g c1 COUNT 1 BLOCK 10 STREAMS k >\n"
                         "window (publish of 1700000000000-0): LPUSH out.l \"\\x00\\x00\\x00\\x00done\"\n"
                         "window (flush 1 of main after read 1): XACK k g 1700000000000-0\n"
                       : "window (subscribe main): XGROUP CREATE k g $ MKSTREAM\n"
                         "reader (read 1 of main): XREADGROUP GROUP g c1 COUNT 1 BLOCK 10 STREAMS k >\n"
                         "window (flush 1 of main after read 1): XACK k g 1700000000000-0\n",
                   0);
        gen_free(&r);
    }
}

/* A shutdown drains the window (what it owes is flushed), then the process ends: the
 * unsettled delivery stays pending; the next process makes its group again. */
static void shutdown_drains_the_window(void **state)
{
    (void)state;
    gen_run r = run_of(WS_FORM_STREAM, WS_MODE_WINDOW, 2);
    r.cfg.auto_consumer = 1;
    produce(&r, "a");
    produce(&r, "b");
    read_(&r);
    settle(&r, 1, WS_ACK, 0);
    add(&r, GS_SHUTDOWN);
    add(&r, GS_RESTART);
    expect_rts(&r,
               "window (subscribe main): XGROUP CREATE k g $ MKSTREAM\n"
               "reader (read 1 of main): XREADGROUP GROUP g ruststream-0 COUNT 2 BLOCK 10 STREAMS k >\n"
               "window (flush 1 of main after read 1): XACK k g 1700000000000-0\n"
               "window.2 (subscribe main): XGROUP CREATE k g $ MKSTREAM\n",
               0);
    mdl_result m;
    mdl_predict(&r, 0, &m);
    int checked = 0;
    for (size_t i = 0; i < m.nstate; i++)
        if (!strcmp(m.state[i].command, "XPENDING k g - + 1000000")) {
            assert_string_equal(m.state[i].reply, "[[\"1700000000000-1\", \"ruststream-0\", :0, :1]]");
            checked = 1;
        }
    assert_true(checked);
    mdl_result_free(&m);
    gen_free(&r);
}

/* A reclaim read's deliveries carry h:redis-delivery-count and h:redis-idle-ms from
 * XPENDING; an undeclared retry there is the broker's requeue, which copies them. */
static void reclaim_headers_and_the_requeue(void **state)
{
    (void)state;
    gen_run r = run_of(WS_FORM_STREAM, WS_MODE_WINDOW, 1);
    r.cfg.rescue = 1;
    produce(&r, "o1");
    read_(&r);
    add(&r, GS_CRASH);
    add(&r, GS_RESTART);
    add(&r, GS_ADVANCE)->ms = GEN_MIN_IDLE_MS + 1;
    add(&r, GS_READ)->sub = 1;
    settle(&r, 1, WS_RETRY, 0);
    mdl_result m;
    mdl_predict(&r, 0, &m);
    assert_null(m.error);
    char *got = rts_text(&m);
    assert_non_null(strstr(got, "reader.2 (read 1 of rescue): XAUTOCLAIM k g c2 100000 0-0 COUNT 1\n"
                                "reader.2 (read 1 of rescue): XPENDING k g IDLE 0 - + 1 c2\n"));
    free(got);
    /* the flush of rescue: the copy as delivered, then its XACK */
    for (size_t i = 0; i < m.nflushes; i++) {
        if (m.flushes[i].sub != 1) continue;
        assert_int_equal(m.flushes[i].n, 2);
        assert_string_equal(m.flushes[i].cmds[0].text,
                            "XADD k * _payload o1 h:redis-delivery-count 2 h:redis-idle-ms 0");
        assert_string_equal(m.flushes[i].cmds[1].text, "XACK k g 1700000000000-0");
        assert_int_equal(m.flushes[i].cmds[1].rt, 2);
    }
    assert_int_equal(m.nflushes, 1);
    assert_int_equal(m.nviol, 0);
    mdl_result_free(&m);
    gen_free(&r);
}

/* A reliable list's recovery member is [u32 process id][u64 counter][the value]: the
 * process id read off the engine's first member, the counter the model's own (from 0 in
 * each process); claims go through the pool after the read. */
static void recovery_members(void **state)
{
    (void)state;
    gen_run r = run_of(WS_FORM_RELIABLE_LIST, WS_MODE_WINDOW, 1);
    r.cfg.recovery = 1;
    produce_with(&r, "j1", "trace", "t1");
    gen_step *rd = add(&r, GS_READ);
    rd->ndl = 1;
    rd->dl = calloc(1, sizeof *rd->dl);
    assert_non_null(rd->dl);
    static const unsigned char seen[12] = {0, 0, '0', '9', 0, 0, 0, 0, 0, 0, 0, 0};
    memcpy(rd->dl[0].member, seen, 12);
    rd->dl[0].has_member = 1;
    settle(&r, 1, WS_ACK, 0);
    expect_rts(&r,
               "window (recovery sweep before read 1 of main): ZRANGEBYSCORE k:claims 0 "
               "1699999900000 LIMIT 0 128\n"
               "reader (read 1 of main): LMOVE k k.processing RIGHT LEFT\n"
               "window (claims of read 1 of main): ZADD k:claims 1700000000000 "
               "\"\\x00\\x0009\\x00\\x00\\x00\\x00\\x00\\x00\\x00\\x00\\x00\\x00\\x00\\x01\\x00\\x00"
               "\\x00\\x05trace\\x00\\x00\\x00\\x02t1j1\"\n"
               "window (flush 1 of main after read 1): LREM k.processing 1 "
               "\"\\x00\\x00\\x00\\x01\\x00\\x00\\x00\\x05trace\\x00\\x00\\x00\\x02t1j1\" | ZREM "
               "k:claims \"\\x00\\x0009\\x00\\x00\\x00\\x00\\x00\\x00\\x00\\x00\\x00\\x00\\x00\\x01"
               "\\x00\\x00\\x00\\x05trace\\x00\\x00\\x00\\x02t1j1\"\n",
               0);
    gen_free(&r);
}

/* ----- Generated runs ---------------------------------------------------------------------- */

/* A generated run written as a scenario parses and replays the same run: the same trace,
 * byte for byte, under wsc_run and under gen_play. */
static void scenarios_replay_their_runs(void **state)
{
    (void)state;
    for (uint64_t seed = 1; seed <= 150; seed++) {
        ch c;
        ch_init_prng(&c, seed, 0);
        gen_limits lim = gen_target_limits();
        lim.keep_trace = 1; /* the trace hashes are compared */
        gen_run run;
        assert_int_equal(gen_generate(&c, &lim, &run), 0);
        uint64_t hash = ws_sim_trace_hash(run.sim);
        size_t len;
        char *text = gen_scenario(&run, "round trip", "a comment\nof two lines", NULL, &len);
        char *err = NULL;
        wsc_scenario *sc = wsc_parse("gen.wsim", text, len, &err);
        if (!sc) fprintf(stderr, "seed %llu: %s\n%s", (unsigned long long)seed, err, text);
        assert_non_null(sc);
        wsc_result res;
        assert_int_equal(wsc_run(sc, NULL, &res), 0);
        if (res.trace_hash != hash || res.status != WSC_PASS)
            fprintf(stderr, "seed %llu: %s\n%s\n", (unsigned long long)seed,
                    res.report ? res.report : "", text);
        assert_int_equal(res.status, WSC_PASS);
        assert_true(res.trace_hash == hash);
        gen_run again;
        assert_int_equal(gen_play(&run, &again), 0);
        assert_true(ws_sim_trace_hash(again.sim) == hash);
        gen_free(&again);
        wsc_result_free(&res);
        wsc_free(sc);
        free(text);
        gen_free(&run);
        ch_free(&c);
    }
}

/* Runs on one fake reset for each (gen_limits.reuse, as fuzz_outcomes and bench_fuzz
 * run): each one's trace is the trace of the same run on a new fake (gen_play), and the
 * checks hold. */
static void a_reused_fake_runs_as_a_new_one(void **state)
{
    (void)state;
    fr_server *fake = fr_server_new(NULL);
    assert_non_null(fake);
    size_t failed = 0;
    for (uint64_t seed = 1; seed <= 400; seed++) {
        ch c;
        ch_init_prng(&c, seed, 0);
        gen_limits lim = gen_target_limits();
        lim.keep_trace = 1;
        lim.reuse = fake;
        gen_run run;
        assert_int_equal(gen_generate(&c, &lim, &run), 0);
        assert_true(ws_sim_fake(run.sim) == fake);
        uint64_t hash = ws_sim_trace_hash(run.sim);
        gen_run fresh;
        assert_int_equal(gen_play(&run, &fresh), 0);
        assert_true(ws_sim_fake(fresh.sim) != fake);
        if (ws_sim_trace_hash(fresh.sim) != hash)
            fprintf(stderr, "seed %llu: the reused fake's run differs\n", (unsigned long long)seed);
        assert_true(ws_sim_trace_hash(fresh.sim) == hash);
        gen_free(&fresh);
        gen_failure f;
        failed += (size_t)gen_check(&run, GEN_QUIRKS_KNOWN, &f);
        gen_failure_free(&f);
        gen_free(&run);
        ch_free(&c);
    }
    assert_int_equal(failed, 0);
    fr_server_free(fake);
}

/* Thousands of seeded runs: the engine does what the model says (model mode), and in fault
 * mode breaks no invariant its faults do not explain. */
static void seeded_runs_agree_with_the_model(void **state)
{
    (void)state;
    size_t faulty = 0, failed = 0;
    for (uint64_t seed = 1; seed <= 3000; seed++) {
        ch c;
        ch_init_prng(&c, seed, 0);
        gen_limits lim = gen_target_limits();
        gen_failure f;
        gen_run run;
        if (gen_check_choices(&c, &lim, GEN_QUIRKS_KNOWN, &f, &run)) {
            if (failed++ < 3)
                fprintf(stderr, "seed:%llu fails (%s): %s\n  (wsim repro seed:%llu)\n",
                        (unsigned long long)seed, f.kind, f.message, (unsigned long long)seed);
        }
        faulty += (size_t)run.cfg.faults;
        gen_failure_free(&f);
        gen_free(&run);
        ch_free(&c);
    }
    assert_int_equal(failed, 0);
    assert_true(faulty > 100); /* fault mode is exercised too */
}

/* Every form and mode, every step and every declaration comes out of the generator. */
static void the_generator_covers_forms_and_modes(void **state)
{
    (void)state;
    unsigned seen[5][4] = {{0}};
    unsigned kinds[GS_SHUTDOWN + 1] = {0};
    unsigned caps[4] = {0}, dlq = 0, rescue_declared = 0, auto_names = 0, batches = 0;
    unsigned drains_lost = 0, skipping = 0;
    for (uint64_t seed = 1; seed <= 400; seed++) {
        ch c;
        ch_init_prng(&c, seed, 0);
        gen_limits lim = gen_target_limits();
        gen_run run;
        gen_generate(&c, &lim, &run);
        seen[run.cfg.form][run.cfg.mode]++;
        for (size_t i = 0; i < run.nsteps; i++) {
            kinds[run.steps[i].kind]++;
            drains_lost += run.steps[i].kind == GS_SHUTDOWN && run.steps[i].drains_lost;
        }
        if (run.sim) skipping += ws_sim_get_counts(run.sim).skipped > 0;
        assert_true(run.cfg.max_attempts <= 3);
        caps[run.cfg.max_attempts]++;
        dlq += (unsigned)run.cfg.dead_letter;
        rescue_declared += (unsigned)run.cfg.rescue_declared;
        auto_names += (unsigned)run.cfg.auto_consumer;
        if (run.cfg.batch) {
            assert_int_equal(run.cfg.count, run.cfg.batch); /* COUNT = the batch size */
            batches++;
        }
        gen_free(&run);
        ch_free(&c);
    }
    for (int f = 1; f <= 4; f++)
        for (int m = 1; m <= 3; m++) assert_true(seen[f][m] > 0);
    for (int k = GS_PRODUCE; k <= GS_SHUTDOWN; k++) assert_true(kinds[k] > 0);
    for (int n = 0; n <= 3; n++) assert_true(caps[n] > 0);
    assert_true(dlq > 0 && rescue_declared > 0 && auto_names > 0 && batches > 0);
    assert_true(drains_lost > 0); /* a shutdown whose drains lose the race with QUIT */
    assert_true(skipping > 0);    /* a channel read that skips what its buffer lost */
}

/* ----- The shrinker ------------------------------------------------------------------------ */

/* A model that mimics a deviation the engine no longer has (GEN_QUIRK_SPLIT_RUNTIME:
 * "split" for an atomic segment whose commands all failed at run time) disagrees with the
 * engine on some seed; repro shrinks that seed to a few steps, and the scenario it
 * writes fails under wsim run as the check did. */
static void repro_shrinks_a_failing_seed(void **state)
{
    (void)state;
    unsigned quirks = GEN_QUIRK_SPLIT_RUNTIME;
    char input[32] = "";
    for (uint64_t seed = 1; seed <= 5000 && !input[0]; seed++) {
        ch c;
        ch_init_prng(&c, seed, 0);
        gen_limits lim = gen_target_limits();
        gen_failure f;
        if (gen_check_choices(&c, &lim, quirks, &f, NULL) && !strcmp(f.kind, "violation"))
            snprintf(input, sizeof input, "seed:%llu", (unsigned long long)seed);
        gen_failure_free(&f);
        ch_free(&c);
    }
    assert_true(input[0] != '\0');
    wsf_repro_options o = {.quirks = quirks, .no_fork = 1, .max_attempts = 3000};
    wsf_repro_result res;
    assert_int_equal(wsf_repro(input, &o, &res), 0);
    assert_true(res.failed);
    assert_string_equal(res.kind, "violation");
    assert_true(res.choices_after < res.choices_before);
    assert_true(res.steps_after <= 8);
    char *err = NULL;
    wsc_scenario *sc = wsc_parse("repro.wsim", res.scenario, strlen(res.scenario), &err);
    assert_non_null(sc);
    wsc_result run;
    assert_int_equal(wsc_run(sc, NULL, &run), 0);
    assert_int_equal(run.status, WSC_FAIL); /* its `expect violation split` fails */
    wsc_result_free(&run);
    wsc_free(sc);
    /* a passing input has nothing to reproduce */
    wsf_repro_result ok;
    o.quirks = GEN_QUIRKS_KNOWN;
    assert_int_equal(wsf_repro("seed:1", &o, &ok), 0);
    assert_false(ok.failed);
    wsf_repro_result_free(&ok);
    wsf_repro_result_free(&res);
    assert_int_equal(wsf_repro("seed:x", &o, &ok), -1);
    wsf_repro_result_free(&ok);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(fdp_reads_as_libfuzzer),
        cmocka_unit_test(recorded_choices_replay_as_fuzz_bytes),
        cmocka_unit_test(odometer_covers_exactly_the_space),
        cmocka_unit_test(prng_and_replay),
        cmocka_unit_test(window_story),
        cmocka_unit_test(retries_in_a_flush),
        cmocka_unit_test(atomic_segments),
        cmocka_unit_test(execabort_and_the_report),
        cmocka_unit_test(atomic_batches),
        cmocka_unit_test(abandon_and_stop_flush),
        cmocka_unit_test(lists_and_in_round_replies),
        cmocka_unit_test(direct_mode_doubles),
        cmocka_unit_test(a_timer_copy_and_its_loss),
        cmocka_unit_test(dead_letter_and_rejection_at_the_cap),
        cmocka_unit_test(plain_list_retries),
        cmocka_unit_test(a_reply_waits_for_the_ack),
        cmocka_unit_test(shutdown_drains_the_window),
        cmocka_unit_test(reclaim_headers_and_the_requeue),
        cmocka_unit_test(recovery_members),
        cmocka_unit_test(scenarios_replay_their_runs),
        cmocka_unit_test(a_reused_fake_runs_as_a_new_one),
        cmocka_unit_test(seeded_runs_agree_with_the_model),
        cmocka_unit_test(the_generator_covers_forms_and_modes),
        cmocka_unit_test(repro_shrinks_a_failing_seed),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
