/* test_lists.c -- the list type (t_list.c): its ring-buffer deque, the accessors other
 * modules read lists through, and the blocking commands answering at once.
 *
 * The deque wraps around its ring and grows and shrinks with the list; those paths are
 * only reached by long mixed sequences, which a differential script cannot afford.  So a
 * seeded random walk of 10,000 commands (pushes and pops at both ends, with and without
 * counts, LINSERT, LREM both ways, LSET, LTRIM, rotations) runs against a plain array
 * model, and after every command the list is compared element by element through
 * fri_list_len/fri_list_at, the accessors the dump and the engine use.
 *
 * In-process nothing can push while a command waits, so BLPOP and friends never block:
 * they must answer at once, with an element or with the reply Redis gives when the
 * timeout fires (outside MULTI) or when it refuses to block (inside MULTI).
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

/* A fresh server and one client (fake_fixture_setup / fake_fixture_teardown). */
typedef fake_fixture fixture;

#define INT(c, ...) fake_int_reply(fake_run((c), __VA_ARGS__))

static void assert_bulk(const fr_reply *r, const char *want)
{
    assert_int_equal(r->type, FR_REPLY_BULK);
    assert_int_equal(r->len, strlen(want));
    assert_memory_equal(r->str, want, r->len);
}

static void assert_error(const fr_reply *r, const char *want)
{
    assert_int_equal(r->type, FR_REPLY_ERROR);
    assert_string_equal(r->str, want);
}

/* The list object stored at key in db 0, or NULL. */
static fri_obj *list_obj(fixture *f, const char *key)
{
    fri_obj *o = fri_db_lookup(f->srv, &f->srv->db[0], key, strlen(key), fr_clock_now(f->srv));
    if (o) assert_int_equal(o->type, FRI_LIST);
    return o;
}

/* ----- The model: a plain array with memmove ------------------------------------------ */

typedef struct model {
    char **v;   /* the elements, NUL-terminated copies */
    size_t len; /* how many */
    size_t cap; /* allocated */
} model;

static void model_insert(model *m, size_t i, const char *s)
{
    if (m->len == m->cap) {
        m->cap = m->cap ? m->cap * 2 : 16;
        m->v = realloc(m->v, m->cap * sizeof(*m->v));
        assert_non_null(m->v);
    }
    memmove(m->v + i + 1, m->v + i, (m->len - i) * sizeof(*m->v));
    m->v[i] = strdup(s);
    assert_non_null(m->v[i]);
    m->len++;
}

/* Removes element i; the caller frees the returned copy. */
static char *model_take(model *m, size_t i)
{
    char *s = m->v[i];
    memmove(m->v + i, m->v + i + 1, (m->len - i - 1) * sizeof(*m->v));
    m->len--;
    return s;
}

static void model_free(model *m)
{
    for (size_t i = 0; i < m->len; i++) free(m->v[i]);
    free(m->v);
}

/* The stored list must be exactly the model (and absent when the model is empty). */
static void check_list(fixture *f, const char *key, const model *m, unsigned step)
{
    fri_obj *o = list_obj(f, key);
    if (m->len == 0) {
        if (o) fail_msg("step %u: an empty list was left in the keyspace", step);
        return;
    }
    if (!o) fail_msg("step %u: list missing, model has %zu elements", step, m->len);
    fri_list *l = o->ptr;
    if (fri_list_len(l) != m->len)
        fail_msg("step %u: length %zu, model %zu", step, fri_list_len(l), m->len);
    for (size_t i = 0; i < m->len; i++) {
        const fri_str *s = fri_list_at(l, i);
        assert_non_null(s);
        if (s->len != strlen(m->v[i]) || memcmp(s->buf, m->v[i], s->len) != 0)
            fail_msg("step %u: element %zu is '%.*s', model '%s'", step, i, (int)s->len,
                     s->buf, m->v[i]);
    }
}

/* The test's own generator (xorshift64*), so the walk is the same everywhere. */
static uint64_t rng_state = 88172645463325252ull;
static uint64_t rnd(uint64_t n)
{
    rng_state ^= rng_state >> 12;
    rng_state ^= rng_state << 25;
    rng_state ^= rng_state >> 27;
    return (rng_state * 2685821657736338717ull) % n;
}

/* A value: mostly unique, sometimes one of three repeated ones for LREM and LPOS. */
static void pick_value(char *buf, size_t cap, unsigned *counter)
{
    if (rnd(8) == 0) snprintf(buf, cap, "dup%u", (unsigned)rnd(3));
    else snprintf(buf, cap, "v%u", (*counter)++);
}

/* ----- Tests -------------------------------------------------------------------------- */

/* 10,000 mixed commands against the model.  Phases alternate between growing (pushes
 * win) and draining (pops win), so the ring wraps at both ends, doubles, shrinks, and the
 * list empties (and must disappear) several times. */
static void test_deque_against_model(void **state)
{
    fixture *f = *state;
    model m = {0};
    unsigned counter = 0;
    char a[32], b[32];
    size_t longest = 0, emptied = 0, was = 0;
    for (unsigned step = 0; step < 10000; step++) {
        int growing = (step / 700) % 2 == 0;
        unsigned op = (unsigned)rnd(100);
        if (growing ? op < 35 : op < 15) {
            /* LPUSH or RPUSH of 1..3 elements */
            int left = (int)rnd(2);
            unsigned n = 1 + (unsigned)rnd(3);
            char line[256];
            int off = snprintf(line, sizeof(line), "%s k", left ? "LPUSH" : "RPUSH");
            for (unsigned i = 0; i < n; i++) {
                pick_value(a, sizeof(a), &counter);
                off += snprintf(line + off, sizeof(line) - (size_t)off, " %s", a);
                model_insert(&m, left ? 0 : m.len, a);
            }
            assert_int_equal(INT(f->c, "%s", line), m.len);
        } else if (growing ? op < 50 : op < 55) {
            /* LPOP or RPOP, with or without a count */
            int left = (int)rnd(2);
            if (rnd(2)) {
                const fr_reply *r = fake_run(f->c, "%s k", left ? "LPOP" : "RPOP");
                if (m.len == 0) {
                    assert_int_equal(r->type, FR_REPLY_NIL);
                } else {
                    char *s = model_take(&m, left ? 0 : m.len - 1);
                    assert_bulk(r, s);
                    free(s);
                }
            } else {
                unsigned n = (unsigned)rnd(growing ? 4 : 40);
                const fr_reply *r = fake_run(f->c, "%s k %u", left ? "LPOP" : "RPOP", n);
                if (m.len == 0) {
                    assert_int_equal(r->type, FR_REPLY_NIL_ARRAY);
                } else {
                    size_t want = n < m.len ? n : m.len;
                    assert_int_equal(r->type, FR_REPLY_ARRAY);
                    assert_int_equal(r->count, want);
                    for (size_t i = 0; i < want; i++) {
                        char *s = model_take(&m, left ? 0 : m.len - 1);
                        assert_bulk(&r->elements[i], s);
                        free(s);
                    }
                }
            }
        } else if (op < 62) {
            /* LINSERT around an element picked from the model (or a missing pivot) */
            int after = (int)rnd(2);
            pick_value(b, sizeof(b), &counter);
            if (m.len == 0 || rnd(10) == 0) {
                long long want = m.len == 0 ? 0 : -1;
                const char *dir = after ? "AFTER" : "BEFORE";
                assert_int_equal(INT(f->c, "LINSERT k %s nothere %s", dir, b), want);
            } else {
                size_t p = (size_t)rnd(m.len);
                snprintf(a, sizeof(a), "%s", m.v[p]);
                size_t first = 0;
                while (strcmp(m.v[first], a) != 0) first++;
                model_insert(&m, after ? first + 1 : first, b);
                const char *dir = after ? "after" : "before";
                assert_int_equal(INT(f->c, "LINSERT k %s %s %s", dir, a, b), m.len);
            }
        } else if (op < 70) {
            /* LREM of a repeated value, from the head, the tail, or everywhere */
            snprintf(a, sizeof(a), "dup%u", (unsigned)rnd(3));
            long long count = (long long)rnd(5) - 2;
            unsigned long long limit =
                count == 0 ? ~0ull : (unsigned long long)(count < 0 ? -count : count);
            size_t removed = 0;
            if (count >= 0) {
                for (size_t i = 0; i < m.len && removed < limit;) {
                    if (strcmp(m.v[i], a) == 0) {
                        free(model_take(&m, i));
                        removed++;
                    } else {
                        i++;
                    }
                }
            } else {
                for (size_t i = m.len; i-- > 0 && removed < limit;) {
                    if (strcmp(m.v[i], a) == 0) {
                        free(model_take(&m, i));
                        removed++;
                    }
                }
            }
            assert_int_equal(INT(f->c, "LREM k %lld %s", count, a), removed);
        } else if (op < 76) {
            /* LSET at a random index, positive or negative */
            pick_value(b, sizeof(b), &counter);
            if (m.len == 0) {
                assert_error(fake_run(f->c, "LSET k 0 %s", b), "ERR no such key");
            } else {
                size_t i = (size_t)rnd(m.len);
                long long idx = rnd(2) ? (long long)i : (long long)i - (long long)m.len;
                assert_int_equal(fake_run(f->c, "LSET k %lld %s", idx, b)->type, FR_REPLY_STATUS);
                free(m.v[i]);
                m.v[i] = strdup(b);
            }
        } else if (op < 78) {
            /* LTRIM off a few elements at each end */
            long long l = (long long)rnd(4), r = (long long)rnd(4);
            assert_int_equal(fake_run(f->c, "LTRIM k %lld %lld", l, -1 - r)->type, FR_REPLY_STATUS);
            size_t keep_from = (size_t)l, drop_tail = (size_t)r;
            if (keep_from + drop_tail >= m.len) {
                while (m.len) free(model_take(&m, 0));
            } else {
                while (drop_tail--) free(model_take(&m, m.len - 1));
                while (keep_from--) free(model_take(&m, 0));
            }
        } else if (op < 86) {
            /* A rotation: LMOVE/RPOPLPUSH with the list as its own destination */
            int from_left = (int)rnd(2), to_left = (int)rnd(2);
            const fr_reply *r = fake_run(f->c, "LMOVE k k %s %s", from_left ? "LEFT" : "RIGHT",
                                    to_left ? "LEFT" : "RIGHT");
            if (m.len == 0) {
                assert_int_equal(r->type, FR_REPLY_NIL);
            } else {
                char *s = model_take(&m, from_left ? 0 : m.len - 1);
                assert_bulk(r, s);
                model_insert(&m, to_left ? 0 : m.len, s);
                free(s);
            }
        } else {
            /* Reads: LINDEX and LPOS must agree with the model */
            if (m.len == 0) {
                assert_int_equal(fake_run(f->c, "LINDEX k 0")->type, FR_REPLY_NIL);
            } else {
                size_t i = (size_t)rnd(m.len);
                assert_bulk(fake_run(f->c, "LINDEX k %zu", i), m.v[i]);
                long long neg = (long long)i - (long long)m.len;
                assert_bulk(fake_run(f->c, "LINDEX k %lld", neg), m.v[i]);
                size_t first = 0;
                while (strcmp(m.v[first], m.v[i]) != 0) first++;
                assert_int_equal(INT(f->c, "LPOS k %s", m.v[i]), first);
            }
        }
        assert_int_equal(INT(f->c, "LLEN k"), m.len);
        check_list(f, "k", &m, step);
        if (m.len > longest) longest = m.len;
        if (was && !m.len) emptied++;
        was = m.len;
        if (step % 500 == 0 && m.len) {
            const fr_reply *r = fake_run(f->c, "LRANGE k 0 -1");
            assert_int_equal(r->type, FR_REPLY_ARRAY);
            assert_int_equal(r->count, m.len);
            for (size_t i = 0; i < m.len; i++) assert_bulk(&r->elements[i], m.v[i]);
        }
    }
    print_message("walk: longest list %zu, emptied %zu times\n", longest, emptied);
    /* The walk must have reached the paths it is meant for. */
    assert_true(longest > 200);
    assert_true(emptied >= 3);
    model_free(&m);
}

/* A list that grows to 100,000 elements from both ends and is then drained from both
 * ends keeps its order through every doubling and every shrink. */
static void test_growth_and_shrink(void **state)
{
    fixture *f = *state;
    const long n = 50000;
    for (long i = 0; i < n; i++) {
        char v[32];
        snprintf(v, sizeof(v), "%ld", i);
        const char *argv[3] = {"LPUSH", "g", v};
        fr_exec(f->c, 3, argv, NULL);
        argv[0] = "RPUSH";
        snprintf(v, sizeof(v), "%ld", n + i);
        fr_exec(f->c, 3, argv, NULL);
    }
    /* The list is n-1 ... 0, n ... 2n-1 */
    fri_list *l = list_obj(f, "g")->ptr;
    assert_int_equal(fri_list_len(l), 2 * n);
    for (long i = 0; i < 2 * n; i += 997) {
        long want = i < n ? n - 1 - i : i;
        char buf[32];
        snprintf(buf, sizeof(buf), "%ld", want);
        assert_string_equal(fri_list_at(l, (size_t)i)->buf, buf);
    }
    /* Drain all but 3 from alternating ends, in big counts. */
    long left = 0, right = 2 * n - 1;
    for (int turn = 0; right - left + 1 > 3; turn++) {
        long k = right - left + 1 - 3 < 777 ? right - left + 1 - 3 : 777;
        const fr_reply *r = fake_run(f->c, "%s g %ld", turn % 2 ? "LPOP" : "RPOP", k);
        assert_int_equal(r->type, FR_REPLY_ARRAY);
        assert_int_equal(r->count, k);
        if (turn % 2) left += k;
        else right -= k;
    }
    l = list_obj(f, "g")->ptr;
    assert_int_equal(fri_list_len(l), 3);
    for (long i = 0; i < 3; i++) {
        long pos = left + i, want = pos < n ? n - 1 - pos : pos;
        char buf[32];
        snprintf(buf, sizeof(buf), "%ld", want);
        assert_string_equal(fri_list_at(l, (size_t)i)->buf, buf);
    }
    assert_int_equal(fake_run(f->c, "LPOP g 3")->count, 3);
    assert_null(list_obj(f, "g"));
}

/* The accessors: length, every index, binary-safe contents, NULL past the end. */
static void test_accessors(void **state)
{
    fixture *f = *state;
    const char *argv[] = {"RPUSH", "acc", "a\0b", "", "\xff"};
    const size_t argvlen[] = {5, 3, 3, 0, 1};
    const fr_reply *r = fr_exec(f->c, 5, argv, argvlen);
    assert_int_equal(r->type, FR_REPLY_INTEGER);
    assert_int_equal(r->integer, 3);
    fri_list *l = list_obj(f, "acc")->ptr;
    assert_int_equal(fri_list_len(l), 3);
    assert_int_equal(fri_list_at(l, 0)->len, 3);
    assert_memory_equal(fri_list_at(l, 0)->buf, "a\0b", 3);
    assert_int_equal(fri_list_at(l, 1)->len, 0);
    assert_int_equal(fri_list_at(l, 1)->buf[0], '\0'); /* NUL-terminated as fri_str says */
    assert_int_equal(fri_list_at(l, 2)->len, 1);
    assert_int_equal((unsigned char)fri_list_at(l, 2)->buf[0], 0xff);
    assert_null(fri_list_at(l, 3));
    /* A push at the head shifts every index by one. */
    assert_int_equal(INT(f->c, "LPUSH acc first"), 4);
    l = list_obj(f, "acc")->ptr;
    assert_string_equal(fri_list_at(l, 0)->buf, "first");
    assert_int_equal(fri_list_at(l, 1)->len, 3);
    /* The dump reads lists through the same accessors. */
    size_t len;
    char *dump = fr_dump(f->srv, &len);
    assert_non_null(dump);
    assert_non_null(strstr(dump, "first"));
    free(dump);
}

/* Emptied lists leave the keyspace, whichever command emptied them. */
static void test_empty_lists_are_deleted(void **state)
{
    fixture *f = *state;
    const char *cmds[] = {"LPOP e", "RPOP e 5", "LREM e 0 x", "LTRIM e 1 0",
                          "BLPOP e 0", "BRPOP e 0", "LMOVE e other left left",
                          "RPOPLPUSH e other", "LMPOP 1 e left", "BLMPOP 0 1 e right COUNT 9"};
    for (size_t i = 0; i < sizeof(cmds) / sizeof(cmds[0]); i++) {
        assert_int_equal(INT(f->c, "RPUSH e x"), 1);
        const fr_reply *r = fake_run(f->c, "%s", cmds[i]);
        assert_int_not_equal(r->type, FR_REPLY_ERROR);
        assert_int_equal(INT(f->c, "EXISTS e"), 0);
        assert_null(list_obj(f, "e"));
        fake_run(f->c, "DEL other");
    }
}

/* Blocking commands answer at once: with an element when there is one, else with the
 * timeout reply, whatever the timeout (0 means "for ever" to Redis). */
static void test_blocking_answers_at_once(void **state)
{
    fixture *f = *state;
    assert_int_equal(fake_run(f->c, "BLPOP none 0")->type, FR_REPLY_NIL_ARRAY);
    assert_int_equal(fake_run(f->c, "BRPOP none none2 0")->type, FR_REPLY_NIL_ARRAY);
    assert_int_equal(fake_run(f->c, "BLPOP none 3600")->type, FR_REPLY_NIL_ARRAY);
    assert_int_equal(fake_run(f->c, "BLMPOP 0 2 none none2 LEFT")->type, FR_REPLY_NIL_ARRAY);
    /* Redis answers a timed-out BLMOVE/BRPOPLPUSH with a nil array too */
    assert_int_equal(fake_run(f->c, "BLMOVE none dst LEFT RIGHT 0")->type, FR_REPLY_NIL_ARRAY);
    assert_int_equal(fake_run(f->c, "BRPOPLPUSH none dst 0")->type, FR_REPLY_NIL_ARRAY);
    assert_int_equal(INT(f->c, "EXISTS dst"), 0);

    assert_int_equal(INT(f->c, "RPUSH src a b c"), 3);
    const fr_reply *r = fake_run(f->c, "BLPOP none src 0");
    assert_int_equal(r->type, FR_REPLY_ARRAY);
    assert_int_equal(r->count, 2);
    assert_bulk(&r->elements[0], "src");
    assert_bulk(&r->elements[1], "a");
    r = fake_run(f->c, "BRPOP src 0");
    assert_bulk(&r->elements[1], "c");
    assert_bulk(fake_run(f->c, "BLMOVE src dst LEFT RIGHT 0"), "b");
    assert_int_equal(INT(f->c, "EXISTS src"), 0);
    assert_bulk(fake_run(f->c, "BRPOPLPUSH dst src 0"), "b");
    r = fake_run(f->c, "BLMPOP 0 2 none src RIGHT COUNT 5");
    assert_int_equal(r->type, FR_REPLY_ARRAY);
    assert_bulk(&r->elements[0], "src");
    assert_int_equal(r->elements[1].count, 1);
    assert_bulk(&r->elements[1].elements[0], "b");

    /* The timeout is still validated */
    assert_error(fake_run(f->c, "BLPOP none -1"), "ERR timeout is negative");
    assert_error(fake_run(f->c, "BLPOP none inf"), "ERR timeout is negative");
    assert_error(fake_run(f->c, "BLPOP none nan"), "ERR timeout is not a float or out of range");
    assert_error(fake_run(f->c, "BLMOVE none dst LEFT RIGHT x"),
                 "ERR timeout is not a float or out of range");
    assert_int_equal(fake_run(f->c, "BLPOP none -0.0005")->type, FR_REPLY_NIL_ARRAY);
}

/* Inside MULTI Redis refuses to block and runs the non-blocking path: BLMOVE and
 * BRPOPLPUSH then answer a nil bulk, as LMOVE does. */
static void test_blocking_inside_multi(void **state)
{
    fixture *f = *state;
    assert_int_equal(fake_run(f->c, "MULTI")->type, FR_REPLY_STATUS);
    fake_run(f->c, "BLPOP none 0");
    fake_run(f->c, "BLMOVE none dst LEFT RIGHT 0");
    fake_run(f->c, "BRPOPLPUSH none dst 0");
    fake_run(f->c, "RPUSH l x");
    fake_run(f->c, "BRPOP l 0");
    const fr_reply *r = fake_run(f->c, "EXEC");
    assert_int_equal(r->type, FR_REPLY_ARRAY);
    assert_int_equal(r->count, 5);
    assert_int_equal(r->elements[0].type, FR_REPLY_NIL_ARRAY);
    assert_int_equal(r->elements[1].type, FR_REPLY_NIL);
    assert_int_equal(r->elements[2].type, FR_REPLY_NIL);
    assert_int_equal(r->elements[3].integer, 1);
    assert_bulk(&r->elements[4].elements[1], "x");
    /* and outside again, the timeout reply */
    assert_int_equal(fake_run(f->c, "BLMOVE none dst LEFT RIGHT 0")->type, FR_REPLY_NIL_ARRAY);
}

/* LREM works from the right end over a list whose ring has wrapped, and stops after
 * count matches from either end. */
static void test_lrem_on_wrapped_ring(void **state)
{
    fixture *f = *state;
    /* Push at the head so the elements straddle the end of the ring. */
    for (int i = 0; i < 6; i++) fake_run(f->c, "LPUSH w %s", i % 2 ? "x" : "y");
    fake_run(f->c, "RPUSH w x y x");
    /* w = x y x y x y x y x */
    assert_int_equal(INT(f->c, "LREM w 2 x"), 2);
    assert_int_equal(INT(f->c, "LREM w -2 x"), 2);
    const fr_reply *r = fake_run(f->c, "LRANGE w 0 -1");
    const char *want[] = {"y", "y", "x", "y", "y"};
    assert_int_equal(r->count, 5);
    for (size_t i = 0; i < 5; i++) assert_bulk(&r->elements[i], want[i]);
    assert_int_equal(INT(f->c, "LREM w 0 y"), 4);
    assert_int_equal(INT(f->c, "LREM w -9223372036854775808 x"), 1);
    assert_null(list_obj(f, "w"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        FAKE_TEST(test_deque_against_model),
        FAKE_TEST(test_growth_and_shrink),
        FAKE_TEST(test_accessors),
        FAKE_TEST(test_empty_lists_are_deleted),
        FAKE_TEST(test_blocking_answers_at_once),
        FAKE_TEST(test_blocking_inside_multi),
        FAKE_TEST(test_lrem_on_wrapped_ring),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
