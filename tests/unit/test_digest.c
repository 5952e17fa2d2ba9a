/* test_digest.c -- fr_debug_digest and fr_debug_digest_value (digest.c), the signatures
 * behind DEBUG DIGEST and DEBUG DIGEST-VALUE, by the properties Redis's construction has:
 * an empty keyspace is all zeros; the order in which a set's, a hash's or a sorted set's
 * members or a database's keys were added does not matter, a list's order does; a TTL
 * counts, its value does not; the database a key lives in counts; nothing a digest reads
 * is expired or touched.  That the bytes are redis-server's own is tested differentially:
 * server_diff's "debug digest" case and random_diff --roundtrip rdb (every seed's
 * keyspace against redis-server's DEBUG DIGEST of the same file). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "fake_fixture.h"
#include "fakeredis.h"

typedef fake_fixture fixture;
#define TEST(fn) FAKE_TEST(fn)
#define OK(c, ...) FAKE_OK((c), __VA_ARGS__)
#define INT(c, ...) FAKE_INT((c), __VA_ARGS__)

static const char ZEROS[] = "0000000000000000000000000000000000000000";

/* The dataset digest after running lines on a fresh fake (into out). */
static void digest_of(const char *const *lines, char out[41])
{
    fake_fixture *f = fake_fixture_new(NULL, 1);
    assert_non_null(f);
    fake_setup(f->c, lines);
    fr_debug_digest(f->srv, out);
    fake_fixture_free(f);
}

static void empty_keyspace_is_zeros(void **state)
{
    fixture *f = *state;
    char d[41];
    fr_debug_digest(f->srv, d);
    assert_string_equal(d, ZEROS);
    fr_debug_digest_value(f->srv, 0, "nokey", 5, d);
    assert_string_equal(d, ZEROS);
    fr_debug_digest_value(f->srv, 99, "nokey", 5, d); /* no such database */
    assert_string_equal(d, ZEROS);
    OK(f->c, "SET k v");
    fr_debug_digest(f->srv, d);
    assert_string_not_equal(d, ZEROS);
    assert_int_equal(INT(f->c, "DEL k"), 1);
    fr_debug_digest(f->srv, d);
    assert_string_equal(d, ZEROS);
}

static void unordered_types_ignore_order(void **state)
{
    (void)state;
    char a[41], b[41];
    const char *const set_ab[] = {"SADD s a b c", "HSET h f 1 g 2", "ZADD z 1 x 2 y",
                                  "SET k1 v", "SET k2 w", NULL};
    const char *const set_ba[] = {"SET k2 w", "SET k1 v", "ZADD z 2 y 1 x", "HSET h g 2 f 1",
                                  "SADD s c b a", NULL};
    digest_of(set_ab, a);
    digest_of(set_ba, b);
    assert_string_equal(a, b);
    /* an intset and a hashtable holding the same members: the same digest */
    const char *const ints[] = {"SADD s 1 2 3", NULL};
    digest_of(ints, a);
    fake_fixture *f = fake_fixture_new(NULL, 1);
    assert_non_null(f);
    assert_int_equal(fr_server_set_param(f->srv, "set-max-intset-entries", "1"), 0);
    assert_int_equal(INT(f->c, "SADD s 1"), 1);
    assert_int_equal(INT(f->c, "SADD s 3 2"), 2);
    assert_string_equal(fake_resp(fake_run(f->c, "OBJECT ENCODING s")), "$9\r\nhashtable\r\n");
    fr_debug_digest(f->srv, b);
    fake_fixture_free(f);
    assert_string_equal(a, b);
}

static void lists_and_streams_keep_order(void **state)
{
    (void)state;
    char a[41], b[41];
    const char *const ab[] = {"RPUSH l a b", NULL};
    const char *const ba[] = {"RPUSH l b a", NULL};
    digest_of(ab, a);
    digest_of(ba, b);
    assert_string_not_equal(a, b);
    /* a field's bytes belong to it: "ab"+"c" is not "a"+"bc" */
    const char *const x1[] = {"XADD x 1-1 ab c", NULL};
    const char *const x2[] = {"XADD x 1-1 a bc", NULL};
    digest_of(x1, a);
    digest_of(x2, b);
    assert_string_not_equal(a, b);
    /* a stream's groups are not part of it */
    const char *const plain[] = {"XADD x 1-1 f v", NULL};
    const char *const grouped[] = {"XADD x 1-1 f v", "XGROUP CREATE x g 0",
                                   "XREADGROUP GROUP g c STREAMS x >", NULL};
    digest_of(plain, a);
    digest_of(grouped, b);
    assert_string_equal(a, b);
}

static void ttl_counts_not_its_value(void **state)
{
    (void)state;
    char plain[41], ttl1[41], ttl2[41];
    const char *const p[] = {"SET k v", NULL};
    const char *const t1[] = {"SET k v EX 100", NULL};
    const char *const t2[] = {"SET k v EX 5000", NULL};
    digest_of(p, plain);
    digest_of(t1, ttl1);
    digest_of(t2, ttl2);
    assert_string_not_equal(plain, ttl1);
    assert_string_equal(ttl1, ttl2);
}

static void database_counts(void **state)
{
    (void)state;
    char a[41], b[41];
    const char *const db0[] = {"SET k v", NULL};
    const char *const db1[] = {"SELECT 1", "SET k v", NULL};
    digest_of(db0, a);
    digest_of(db1, b);
    assert_string_not_equal(a, b);
}

static void value_digest_reads_without_expiring(void **state)
{
    fixture *f = *state;
    char before[41], d[41];
    OK(f->c, "SET k v PX 10");
    fr_debug_digest_value(f->srv, 0, "k", 1, before);
    assert_string_not_equal(before, ZEROS);
    fr_clock_advance(f->srv, 50); /* past its TTL, nothing deleted it yet */
    fr_debug_digest_value(f->srv, 0, "k", 1, d);
    assert_string_equal(d, before);
    fr_debug_digest(f->srv, d);
    assert_string_not_equal(d, ZEROS);
    assert_int_equal(INT(f->c, "EXISTS k"), 0); /* a lookup expires it */
    fr_debug_digest(f->srv, d);
    assert_string_equal(d, ZEROS);
    /* the key's value digest is the dataset's ingredient: one key alone differs from the
     * value's digest (the key and the database are mixed in too) */
    OK(f->c, "SET k v");
    fr_debug_digest_value(f->srv, 0, "k", 1, before);
    fr_debug_digest(f->srv, d);
    assert_string_not_equal(d, before);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        TEST(empty_keyspace_is_zeros),
        TEST(unordered_types_ignore_order),
        TEST(lists_and_streams_keep_order),
        TEST(ttl_counts_not_its_value),
        TEST(database_counts),
        TEST(value_digest_reads_without_expiring),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
