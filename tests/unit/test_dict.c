/* test_dict.c -- the ordered hash table: against a plain model over many seeded random
 * operations, insertion order, stable sequence numbers and tombstone churn. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "fr_int.h"

static uint64_t rng = 88172645463325252ull;
static uint64_t next_rand(void)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return rng;
}

#define KEYS 512

/* The model: for each possible key, whether it is present, its value and its order. */
typedef struct model {
    int present[KEYS];
    long long value[KEYS];
    uint64_t order[KEYS]; /* insertion counter at the time it was added */
} model;

static void key_name(int k, char *buf, size_t *len)
{
    /* some keys are binary and some share prefixes, to exercise the comparisons */
    *len = (size_t)snprintf(buf, 32, "key:%d", k);
    if (k % 7 == 0) buf[1] = '\0';
}

static void check_against_model(fri_dict *d, const model *m)
{
    size_t live = 0;
    for (int k = 0; k < KEYS; k++) live += m->present[k] != 0;
    assert_int_equal(fri_dict_size(d), live);

    /* iteration visits exactly the present keys, in insertion order, seq increasing */
    uint64_t last_order = 0, last_seq = 0;
    size_t seen = 0;
    for (size_t i = 0; i < fri_dict_slots(d); i++) {
        fri_dent *e = fri_dict_slot(d, i);
        if (!e) continue;
        int k = (int)e->v.ll >> 20;
        assert_true(k >= 0 && k < KEYS);
        assert_true(m->present[k]);
        assert_int_equal(e->v.ll, m->value[k]);
        assert_true(m->order[k] > last_order);
        assert_true(e->seq > last_seq);
        last_order = m->order[k];
        last_seq = e->seq;
        seen++;
    }
    assert_int_equal(seen, live);
}

static void test_against_model(void **state)
{
    (void)state;
    fri_dict *d = fri_dict_new();
    model m = {0};
    uint64_t counter = 0;
    char name[32];
    size_t len;
    for (int step = 0; step < 200000; step++) {
        int k = (int)(next_rand() % KEYS);
        key_name(k, name, &len);
        int op = (int)(next_rand() % 10);
        if (op < 5) {
            int created;
            fri_dent *e = fri_dict_add(d, name, len, &created);
            assert_non_null(e);
            assert_int_equal(created, !m.present[k] ? 1 : 0);
            if (!m.present[k]) {
                m.present[k] = 1;
                m.order[k] = ++counter;
            }
            m.value[k] = ((long long)k << 20) | (step & 0xfffff);
            e->v.ll = m.value[k];
        } else if (op < 9) {
            fri_val old;
            int removed = fri_dict_delete(d, name, len, &old);
            assert_int_equal(removed, m.present[k]);
            if (removed) assert_int_equal(old.ll, m.value[k]);
            m.present[k] = 0;
        } else {
            fri_dent *e = fri_dict_find(d, name, len);
            if (m.present[k]) {
                assert_non_null(e);
                assert_int_equal(e->v.ll, m.value[k]);
            } else {
                assert_null(e);
            }
        }
        if (step % 5000 == 0) check_against_model(d, &m);
    }
    check_against_model(d, &m);
    fri_dict_free(d, NULL);
}

/* Adding and deleting distinct keys for ever on a tiny table must not fill the index
 * with tombstones (a lookup would then never find an empty slot and spin). */
static void test_tombstone_churn(void **state)
{
    (void)state;
    fri_dict *d = fri_dict_new();
    char name[32];
    fri_dict_add(d, "anchor", 6, NULL);
    for (int i = 0; i < 100000; i++) {
        size_t len = (size_t)snprintf(name, sizeof(name), "churn:%d", i);
        assert_non_null(fri_dict_add(d, name, len, NULL));
        assert_int_equal(fri_dict_delete(d, name, len, NULL), 1);
        assert_null(fri_dict_find(d, "missing", 7));
    }
    assert_int_equal(fri_dict_size(d), 1);
    fri_dict_free(d, NULL);
}

static void test_seq_cursor(void **state)
{
    (void)state;
    fri_dict *d = fri_dict_new();
    char name[32];
    for (int i = 0; i < 100; i++) {
        size_t len = (size_t)snprintf(name, sizeof(name), "k%d", i);
        fri_dict_add(d, name, len, NULL);
    }
    /* remember the seq of k50, delete half the keys, force a compaction by growing */
    fri_dent *e = fri_dict_find(d, "k50", 3);
    uint64_t seq50 = e->seq;
    for (int i = 0; i < 100; i += 2) {
        size_t len = (size_t)snprintf(name, sizeof(name), "k%d", i + 1);
        fri_dict_delete(d, name, len, NULL);
    }
    for (int i = 100; i < 400; i++) {
        size_t len = (size_t)snprintf(name, sizeof(name), "k%d", i);
        fri_dict_add(d, name, len, NULL);
    }
    size_t slot = fri_dict_slot_from_seq(d, seq50);
    e = fri_dict_slot(d, slot);
    assert_non_null(e);
    assert_int_equal(e->key->len, 3);
    assert_memory_equal(e->key->buf, "k50", 3);
    assert_int_equal(e->seq, seq50);
    assert_int_equal(fri_dict_slot_from_seq(d, UINT64_MAX), fri_dict_slots(d));

    /* clearing keeps sequence numbers increasing */
    uint64_t before = 0;
    for (size_t i = 0; i < fri_dict_slots(d); i++)
        if (fri_dict_slot(d, i)) before = fri_dict_slot(d, i)->seq;
    fri_dict_clear(d, NULL);
    assert_int_equal(fri_dict_size(d), 0);
    e = fri_dict_add(d, "again", 5, NULL);
    assert_true(e->seq > before);
    fri_dict_free(d, NULL);
}

static void test_empty_and_binary_keys(void **state)
{
    (void)state;
    fri_dict *d = fri_dict_new();
    assert_null(fri_dict_find(d, "", 0));
    int created;
    fri_dent *e = fri_dict_add(d, "", 0, &created);
    assert_true(created);
    e->v.ll = 7;
    assert_non_null(fri_dict_add(d, "\0", 1, &created));
    assert_true(created);
    assert_non_null(fri_dict_add(d, "\0\0", 2, &created));
    assert_true(created);
    assert_int_equal(fri_dict_find(d, "", 0)->v.ll, 7);
    assert_int_equal(fri_dict_size(d), 3);
    fri_dict_free(d, NULL);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_against_model),
        cmocka_unit_test(test_tombstone_churn),
        cmocka_unit_test(test_seq_cursor),
        cmocka_unit_test(test_empty_and_binary_keys),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
