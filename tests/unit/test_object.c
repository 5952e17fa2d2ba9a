/* test_object.c -- OBJECT, MEMORY USAGE and COPY (object.c, keys.c) where the differential
 * scripts cannot look: on the virtual clock, whose seconds the tests choose.
 *
 * - OBJECT IDLETIME on Redis's LRU clock: whole seconds of Unix time (a value made at
 *   x.999 s is 1 s idle a millisecond later), reset by the accesses Redis counts (GET,
 *   TOUCH, SET over it, COPY's source) and not by the others (TYPE, EXISTS, TTL, OBJECT,
 *   MEMORY USAGE, DEL of another key), wrapping after 2^24 s; the keys holding one shared
 *   integer share its field.
 * - OBJECT FREQ under an LFU policy: 5 for a new value, 6 after one access, one less per
 *   lfu-decay-time minute, growth that slows as lfu-log-factor says; the seed decides it.
 * - fr_server_set_param: names, aliases, values refused, parameters ignored; the encoding
 *   thresholds it moves, and encodings that never convert back.
 * - MEMORY USAGE: values measured on redis-server 7.0.15 (Debian, jemalloc 5.3), and the
 *   jemalloc size classes behind them.
 * - COPY of a stream with its groups: pending entries keep their delivery times and
 *   counts, consumers their seen times (fr_stream_pending / fr_stream_consumer read them
 *   to the millisecond), and the copy lives on its own; a TTL is copied to the
 *   millisecond; a COPY onto a key a client waits on serves it.
 */
#include <limits.h>
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

/* A fresh server on the default config and two clients (c2 for WATCH). */
typedef fake_fixture fixture;
#define TEST(fn) FAKE_TEST2(fn)

#define INT(c, ...) fake_int_reply(fake_run((c), __VA_ARGS__))
#define OK(c, ...) fake_ok_reply(fake_run((c), __VA_ARGS__))
#define RESP(c, ...) fake_resp(fake_run((c), __VA_ARGS__))

/* The start of a second on the virtual clock (the default start is one). */
#define T0 1700000000000LL

/* ----- IDLETIME ----------------------------------------------------------------------- */

static void idletime_counts_whole_seconds(void **state)
{
    fixture *f = *state;
    fr_clock_set(f->srv, T0 + 999);
    OK(f->c, "SET k v");
    assert_int_equal(INT(f->c, "OBJECT IDLETIME k"), 0);
    fr_clock_advance(f->srv, 1); /* the next second: 1 s idle by the LRU clock */
    assert_int_equal(INT(f->c, "OBJECT IDLETIME k"), 1);
    fr_clock_advance(f->srv, 998);
    assert_int_equal(INT(f->c, "OBJECT IDLETIME k"), 1);
    fr_clock_advance(f->srv, 5000);
    assert_int_equal(INT(f->c, "OBJECT IDLETIME k"), 6);
    /* the LRU clock has 24 bits of seconds: an idle time wraps after 194 days */
    fr_clock_advance(f->srv, (1LL << 24) * 1000 - 6000 + 3000);
    assert_int_equal(INT(f->c, "OBJECT IDLETIME k"), 3);
}

static void idletime_reset_by_accesses_only(void **state)
{
    fixture *f = *state;
    fr_clock_set(f->srv, T0);
    OK(f->c, "SET k v");
    OK(f->c, "SET other v");
    fr_clock_advance(f->srv, 10000);
    /* lookups Redis makes without touching (LOOKUP_NOTOUCH), and reads of other keys */
    fake_run(f->c, "TYPE k");
    fake_run(f->c, "EXISTS k");
    fake_run(f->c, "TTL k");
    fake_run(f->c, "PTTL k");
    fake_run(f->c, "EXPIRETIME k");
    fake_run(f->c, "OBJECT ENCODING k");
    fake_run(f->c, "OBJECT REFCOUNT k");
    fake_run(f->c, "MEMORY USAGE k");
    fake_run(f->c, "KEYS *");
    fake_run(f->c, "SCAN 0");
    fake_run(f->c, "DEL other");
    assert_int_equal(INT(f->c, "OBJECT IDLETIME k"), 10);
    fake_run(f->c, "TOUCH k");
    assert_int_equal(INT(f->c, "OBJECT IDLETIME k"), 0);
    fr_clock_advance(f->srv, 3000);
    fake_run(f->c, "GET k");
    assert_int_equal(INT(f->c, "OBJECT IDLETIME k"), 0);
    fr_clock_advance(f->srv, 3000);
    assert_int_equal(INT(f->c, "COPY k k2"), 1); /* reads the source, makes a new value */
    assert_int_equal(INT(f->c, "OBJECT IDLETIME k"), 0);
    assert_int_equal(INT(f->c, "OBJECT IDLETIME k2"), 0);
    fr_clock_advance(f->srv, 4000);
    fake_run(f->c, "RENAME k2 k3"); /* the value moves with its field, looked up once */
    assert_int_equal(INT(f->c, "OBJECT IDLETIME k3"), 0);
    fr_clock_advance(f->srv, 2000);
    fake_run(f->c, "APPEND k x");
    assert_int_equal(INT(f->c, "OBJECT IDLETIME k"), 0);
    assert_int_equal(INT(f->c, "OBJECT IDLETIME k3"), 2);
    assert_true(fake_run(f->c, "OBJECT IDLETIME nokey")->type == FR_REPLY_NIL);
}

/* Redis keeps one object per integer 0..9999: the keys holding it share its LRU field. */
static void shared_integers_share_their_field(void **state)
{
    fixture *f = *state;
    fr_clock_set(f->srv, T0);
    OK(f->c, "SET a 42");
    OK(f->c, "SET p 70000");
    fr_clock_advance(f->srv, 30000);
    OK(f->c, "SET b 42");
    assert_int_equal(INT(f->c, "OBJECT IDLETIME a"), 30); /* storing it touches nothing */
    fake_run(f->c, "GET b");
    assert_int_equal(INT(f->c, "OBJECT IDLETIME a"), 0);
    assert_int_equal(INT(f->c, "OBJECT IDLETIME p"), 30);
    assert_int_equal(INT(f->c, "OBJECT REFCOUNT a"), 2147483647);
    assert_int_equal(INT(f->c, "OBJECT REFCOUNT p"), 1);
    /* a value leaving the shared object gets a field of its own; looking b up to write
     * it touched the shared 42 once more */
    fr_clock_advance(f->srv, 7000);
    OK(f->c, "SET b 42x");
    assert_int_equal(INT(f->c, "OBJECT IDLETIME b"), 0);
    assert_int_equal(INT(f->c, "OBJECT IDLETIME a"), 0);
    fr_clock_advance(f->srv, 2000);
    assert_int_equal(INT(f->c, "OBJECT IDLETIME a"), 2);
    assert_int_equal(INT(f->c, "OBJECT IDLETIME b"), 2);
    /* INCR moves between shared and private objects as createStringObjectFromLongLong */
    OK(f->c, "SET n 9999");
    assert_int_equal(INT(f->c, "OBJECT REFCOUNT n"), 2147483647);
    assert_int_equal(INT(f->c, "INCR n"), 10000);
    assert_int_equal(INT(f->c, "OBJECT REFCOUNT n"), 1);
    assert_int_equal(INT(f->c, "DECR n"), 9999);
    assert_int_equal(INT(f->c, "OBJECT REFCOUNT n"), 2147483647);
    /* a copy is always a private object */
    assert_int_equal(INT(f->c, "COPY n n2"), 1);
    assert_int_equal(INT(f->c, "OBJECT REFCOUNT n2"), 1);
    assert_string_equal(RESP(f->c, "OBJECT ENCODING n2"), "$3\r\nint\r\n");
    /* maxmemory with an LRU or LFU policy: every value keeps its own field */
    assert_int_equal(fr_server_set_param(f->srv, "maxmemory", "1gb"), 0);
    OK(f->c, "SET s 1");
    assert_int_equal(INT(f->c, "OBJECT REFCOUNT s"), 2147483647);
    assert_int_equal(fr_server_set_param(f->srv, "maxmemory-policy", "allkeys-lru"), 0);
    OK(f->c, "SET s 1");
    assert_int_equal(INT(f->c, "OBJECT REFCOUNT s"), 1);
    assert_int_equal(INT(f->c, "INCR s"), 2);
    assert_int_equal(INT(f->c, "OBJECT REFCOUNT s"), 1);
}

/* ----- FREQ --------------------------------------------------------------------------- */

static void freq_under_lfu(void **state)
{
    fixture *f = *state;
    fr_clock_set(f->srv, T0);
    OK(f->c, "SET k v");
    assert_string_equal(RESP(f->c, "OBJECT FREQ k"),
                        "-ERR An LFU maxmemory policy is not selected, access frequency not "
                        "tracked. Please note that when switching between policies at "
                        "runtime LRU and LFU data will take some time to adjust.\r\n");
    assert_int_equal(fr_server_set_param(f->srv, "maxmemory-policy", "allkeys-lfu"), 0);
    assert_string_equal(RESP(f->c, "OBJECT IDLETIME k"),
                        "-ERR An LFU maxmemory policy is selected, idle time not tracked. "
                        "Please note that when switching between policies at runtime LRU "
                        "and LFU data will take some time to adjust.\r\n");
    OK(f->c, "SET n v");
    assert_int_equal(INT(f->c, "OBJECT FREQ n"), 5);
    fake_run(f->c, "GET n");
    assert_int_equal(INT(f->c, "OBJECT FREQ n"), 6); /* certain from 5 */
    fake_run(f->c, "TYPE n");
    fake_run(f->c, "EXISTS n");
    assert_int_equal(INT(f->c, "OBJECT FREQ n"), 6);
    /* one less per minute (lfu-decay-time 1), read without changing the field */
    fr_clock_advance(f->srv, 3 * 60000);
    assert_int_equal(INT(f->c, "OBJECT FREQ n"), 3);
    assert_int_equal(fr_server_set_param(f->srv, "lfu-decay-time", "0"), 0);
    assert_int_equal(INT(f->c, "OBJECT FREQ n"), 6);
    /* overwriting keeps the counter (dbOverwrite); a copy starts afresh */
    OK(f->c, "SET n w");
    long long after_set = INT(f->c, "OBJECT FREQ n");
    assert_true(after_set >= 6 && after_set <= 7);
    assert_int_equal(INT(f->c, "COPY n n2"), 1);
    assert_int_equal(INT(f->c, "OBJECT FREQ n2"), 5);
    /* growth is logarithmic: 1 / ((counter - 5) * lfu-log-factor + 1) per access */
    for (int i = 0; i < 1000; i++) fake_run(f->c, "GET n");
    long long slow = INT(f->c, "OBJECT FREQ n");
    assert_true(slow > 10 && slow < 40);
    assert_int_equal(fr_server_set_param(f->srv, "lfu-log-factor", "0"), 0);
    OK(f->c, "SET q v");
    for (int i = 0; i < 300; i++) fake_run(f->c, "GET q");
    assert_int_equal(INT(f->c, "OBJECT FREQ q"), 255); /* every access counts, up to 255 */
}

/* The LFU draws come from the server's seed: two servers of one seed agree. */
static void freq_is_seeded(void **state)
{
    (void)state;
    long long freq[2];
    for (int run = 0; run < 2; run++) {
        fake_fixture *g = fake_fixture_new(NULL, 1);
        assert_int_equal(fr_server_set_param(g->srv, "maxmemory-policy", "volatile-lfu"), 0);
        OK(g->c, "SET k v");
        for (int i = 0; i < 200; i++) fake_run(g->c, "GET k");
        freq[run] = INT(g->c, "OBJECT FREQ k");
        fake_fixture_free(g);
    }
    assert_int_equal(freq[0], freq[1]);
}

/* ----- fr_server_set_param and the encodings ------------------------------------------ */

static void set_param_contract(void **state)
{
    fixture *f = *state;
    assert_int_equal(fr_server_set_param(f->srv, "hash-max-listpack-entries", "4"), 0);
    assert_int_equal(fr_server_set_param(f->srv, "HASH-MAX-ZIPLIST-ENTRIES", "4"), 0);
    assert_int_equal(fr_server_set_param(f->srv, "hash-max-listpack-value", "1kb"), 0);
    assert_int_equal(fr_server_set_param(f->srv, "hash-max-listpack-value", "-1"), -1);
    assert_int_equal(fr_server_set_param(f->srv, "set-max-intset-entries", "x"), -1);
    assert_int_equal(fr_server_set_param(f->srv, "list-max-listpack-size", "-3"), 0);
    assert_int_equal(fr_server_set_param(f->srv, "lfu-log-factor", "-1"), -1);
    assert_int_equal(fr_server_set_param(f->srv, "maxmemory-policy", "lru"), -1);
    assert_int_equal(fr_server_set_param(f->srv, "maxmemory", "100mb"), 0);
    assert_int_equal(fr_server_set_param(f->srv, "maxmemory", "lots"), -1);
    assert_int_equal(fr_server_set_param(f->srv, "hz", "100"), 1);
    assert_int_equal(fr_server_set_param(f->srv, "nonsense", "1"), 1);
    assert_int_equal(fr_server_set_param(f->srv, NULL, "1"), -1);
    /* a refused value changes nothing: a 1 KB value still fits the listpack */
    assert_int_equal(INT(f->c, "HSET h f %0900d", 7), 1);
    assert_string_equal(RESP(f->c, "OBJECT ENCODING h"), "$8\r\nlistpack\r\n");
}

static void encodings_follow_the_parameters(void **state)
{
    fixture *f = *state;
    assert_int_equal(fr_server_set_param(f->srv, "hash-max-ziplist-entries", "2"), 0);
    assert_int_equal(INT(f->c, "HSET h a 1 b 2"), 2);
    assert_string_equal(RESP(f->c, "OBJECT ENCODING h"), "$8\r\nlistpack\r\n");
    assert_int_equal(INT(f->c, "HSET h c 3"), 1);
    assert_string_equal(RESP(f->c, "OBJECT ENCODING h"), "$9\r\nhashtable\r\n");
    assert_int_equal(INT(f->c, "HDEL h a b"), 2); /* small again, never converted back */
    assert_string_equal(RESP(f->c, "OBJECT ENCODING h"), "$9\r\nhashtable\r\n");
    assert_int_equal(INT(f->c, "HDEL h c"), 1); /* the last field takes the key along */
    assert_int_equal(INT(f->c, "HSET h a 1"), 1);
    assert_string_equal(RESP(f->c, "OBJECT ENCODING h"), "$8\r\nlistpack\r\n");

    assert_int_equal(fr_server_set_param(f->srv, "set-max-intset-entries", "2"), 0);
    assert_int_equal(INT(f->c, "SADD s 1 2"), 2);
    assert_string_equal(RESP(f->c, "OBJECT ENCODING s"), "$6\r\nintset\r\n");
    assert_int_equal(INT(f->c, "SADD s 3"), 1);
    assert_string_equal(RESP(f->c, "OBJECT ENCODING s"), "$9\r\nhashtable\r\n");
    /* the set operations build their results with the same limit */
    assert_int_equal(fr_server_set_param(f->srv, "set-max-intset-entries", "512"), 0);
    assert_int_equal(INT(f->c, "SUNIONSTORE u s"), 3);
    assert_string_equal(RESP(f->c, "OBJECT ENCODING u"), "$6\r\nintset\r\n");
    assert_string_equal(RESP(f->c, "SMEMBERS u"), "*3\r\n$1\r\n1\r\n$1\r\n2\r\n$1\r\n3\r\n");

    assert_int_equal(fr_server_set_param(f->srv, "zset-max-listpack-value", "2"), 0);
    assert_int_equal(INT(f->c, "ZADD z 1 ab"), 1);
    assert_string_equal(RESP(f->c, "OBJECT ENCODING z"), "$8\r\nlistpack\r\n");
    assert_int_equal(INT(f->c, "ZADD z 2 abc"), 1);
    assert_string_equal(RESP(f->c, "OBJECT ENCODING z"), "$8\r\nskiplist\r\n");
    assert_int_equal(INT(f->c, "ZREM z abc"), 1);
    assert_string_equal(RESP(f->c, "OBJECT ENCODING z"), "$8\r\nskiplist\r\n");
    assert_int_equal(INT(f->c, "ZUNIONSTORE z2 1 z"), 1); /* a stored result is settled */
    assert_string_equal(RESP(f->c, "OBJECT ENCODING z2"), "$8\r\nlistpack\r\n");
    assert_int_equal(INT(f->c, "COPY z z3"), 1); /* a copy keeps the encoding */
    assert_string_equal(RESP(f->c, "OBJECT ENCODING z3"), "$8\r\nskiplist\r\n");

    /* lists are always quicklists in 7.0, whatever their size */
    assert_int_equal(fr_server_set_param(f->srv, "list-max-listpack-size", "1"), 0);
    assert_int_equal(INT(f->c, "RPUSH l a"), 1);
    assert_string_equal(RESP(f->c, "OBJECT ENCODING l"), "$9\r\nquicklist\r\n");
}

static void string_encodings(void **state)
{
    fixture *f = *state;
    static const struct {
        const char *value, *encoding;
    } cases[] = {
        {"0", "int"},
        {"-9223372036854775808", "int"},
        {"9223372036854775807", "int"},
        {"9223372036854775808", "embstr"},
        {"007", "embstr"},
        {"1.5", "embstr"},
        {"12345678901234567890123456789012345678901234", "embstr"}, /* 44 bytes */
        {"123456789012345678901234567890123456789012345", "raw"},   /* 45 */
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        OK(f->c, "SET k %s", cases[i].value);
        const fr_reply *r = fake_run(f->c, "OBJECT ENCODING k");
        assert_string_equal(r->str, cases[i].encoding);
    }
    OK(f->c, "SET k 12");
    assert_int_equal(INT(f->c, "SETRANGE k 0 \"\""), 2); /* writes nothing: stays int */
    assert_string_equal(fake_run(f->c, "OBJECT ENCODING k")->str, "int");
    assert_int_equal(INT(f->c, "GETBIT k 0"), 0); /* a read */
    assert_string_equal(fake_run(f->c, "OBJECT ENCODING k")->str, "int");
    assert_int_equal(INT(f->c, "SETBIT k 0 0"), 0); /* a write, even of the same bit */
    assert_string_equal(fake_run(f->c, "OBJECT ENCODING k")->str, "raw");
    assert_int_equal(INT(f->c, "INCR k"), 13);
    assert_string_equal(fake_run(f->c, "OBJECT ENCODING k")->str, "int");
    assert_string_equal(RESP(f->c, "INCRBYFLOAT k 1"), "$2\r\n14\r\n");
    assert_string_equal(fake_run(f->c, "OBJECT ENCODING k")->str, "embstr");
}

/* ----- MEMORY USAGE ------------------------------------------------------------------- */

static void jemalloc_size_classes(void **state)
{
    (void)state;
    static const size_t want[][2] = {
        {0, 8},         {1, 8},         {8, 8},         {9, 16},        {17, 32},
        {33, 48},       {128, 128},     {129, 160},     {257, 320},     {1025, 1280},
        {4096, 4096},   {4097, 5120},   {16385, 20480}, {33006, 40960}, {1048577, 1310720},
    };
    for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++)
        assert_int_equal(fri_je_size(want[i][0]), want[i][1]);
    assert_int_equal(fri_sds_size(5), 8);    /* type 5: 1 + 5 + 1 */
    assert_int_equal(fri_sds_size(0), 8);    /* "" takes a type 8 header */
    assert_int_equal(fri_sds_size(100), 112); /* type 8: 3 + 100 + 1 */
    assert_int_equal(fri_lp_str_size("127", 3), 2);   /* 7-bit integer and back-length */
    assert_int_equal(fri_lp_str_size("128", 3), 3);   /* 13-bit integer */
    assert_int_equal(fri_lp_str_size("abc", 3), 5);   /* 6-bit string */
    assert_int_equal(fri_lp_int_size(-2147483649LL), 10);
}

/* Values redis-server 7.0.15 answers for the same commands (Debian's, jemalloc 5.3). */
static void memory_usage_as_measured(void **state)
{
    fixture *f = *state;
    OK(f->c, "SET key hello");
    OK(f->c, "SET num 12345");
    OK(f->c, "SET big %0100d", 0);
    assert_int_equal(INT(f->c, "RPUSH list a b c"), 3);
    assert_int_equal(INT(f->c, "HSET hash f1 v1 f2 v2"), 2);
    assert_int_equal(INT(f->c, "SADD set 1 2 3"), 3);
    assert_int_equal(INT(f->c, "ZADD zset 1 a 2 b"), 2);
    fake_run(f->c, "XADD st 1-1 f v");
    static const struct {
        const char *key;
        long long usage;
    } want[] = {{"key", 64},  {"num", 48},  {"big", 160}, {"list", 144},
                {"hash", 80}, {"set", 64},  {"zset", 80}, {"st", 4728}};
    for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++)
        assert_int_equal(INT(f->c, "MEMORY USAGE %s", want[i].key), want[i].usage);
    assert_int_equal(INT(f->c, "APPEND big x"), 101); /* room left in its sds */
    assert_int_equal(INT(f->c, "MEMORY USAGE big"), 160);
    assert_true(fake_run(f->c, "MEMORY USAGE nokey")->type == FR_REPLY_NIL);
    assert_string_equal(RESP(f->c, "MEMORY USAGE key SAMPLES -1"), "-ERR syntax error\r\n");
    assert_string_equal(RESP(f->c, "MEMORY STATS"),
                        "-ERR MEMORY STATS is not emulated by the fake (only MEMORY USAGE, "
                        "PURGE and HELP are)\r\n");
}

/* A value of 32 kB or more stored from its argument is Redis's query buffer itself: its
 * allocation follows the reads that filled it (values measured on redis-server 7.0.15,
 * each SET sent at once on a new connection, as the fake assumes). */
static void memory_usage_of_big_arguments(void **state)
{
    fixture *f = *state;
    static const struct {
        size_t len;
        long long usage;
    } want[] = {{32768, 41016}, {32769, 41016}, {40950, 41016}, {65528, 65592},
                {65529, 81976}, {65530, 81976}, {65535, 81976}, {98295, 114744},
                {100000, 114744}};
    char *val = malloc(100000);
    assert_non_null(val);
    memset(val, 'A', 100000);
    for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++) {
        char key[32];
        snprintf(key, sizeof(key), "key%zu", want[i].len);
        const char *argv[] = {"SET", key, val};
        size_t lens[] = {3, strlen(key), want[i].len};
        assert_int_equal(fr_exec(f->c, 3, argv, lens)->type, FR_REPLY_STATUS);
        assert_int_equal(INT(f->c, "MEMORY USAGE %s", key), want[i].usage);
    }
    /* MSET: the second big argument arrives in the buffer the first one left */
    const char *argv[] = {"MSET", "m1_0", val, "m1_1", val};
    size_t lens[] = {4, 4, 40000, 4, 65530};
    assert_int_equal(fr_exec(f->c, 5, argv, lens)->type, FR_REPLY_STATUS);
    assert_int_equal(INT(f->c, "MEMORY USAGE m1_0"), 41008);
    assert_int_equal(INT(f->c, "MEMORY USAGE m1_1"), 81968);
    /* 65529 bytes in a 16-bit header: 6 bytes of room for APPEND before it grows */
    assert_int_equal(INT(f->c, "APPEND key65529 xxxxxx"), 65535);
    assert_int_equal(INT(f->c, "MEMORY USAGE key65529"), 81976);
    assert_int_equal(INT(f->c, "APPEND key65529 x"), 65536);
    assert_true(INT(f->c, "MEMORY USAGE key65529") > 81976);
    free(val);
}

/* ----- COPY --------------------------------------------------------------------------- */

static void copy_keeps_a_streams_groups(void **state)
{
    fixture *f = *state;
    fr_clock_set(f->srv, T0);
    fake_run(f->c, "XADD s 1-0 f a");
    fake_run(f->c, "XADD s 2-0 f b");
    fake_run(f->c, "XADD s 3-0 f c");
    OK(f->c, "XGROUP CREATE s g 0");
    fake_run(f->c, "XREADGROUP GROUP g alice COUNT 2 STREAMS s >");
    fr_clock_advance(f->srv, 1500);
    fake_run(f->c, "XREADGROUP GROUP g bob STREAMS s >");
    fr_clock_advance(f->srv, 500);
    fake_run(f->c, "XREADGROUP GROUP g alice STREAMS s 0"); /* 1-0, 2-0 delivered twice */
    fr_clock_advance(f->srv, 4000);
    assert_int_equal(INT(f->c, "COPY s s2"), 1);

    fr_pending *p1, *p2;
    size_t n1, n2;
    assert_int_equal(fr_stream_pending(f->srv, 0, "s", 1, "g", 1, NULL, 0, &p1, &n1), 0);
    assert_int_equal(fr_stream_pending(f->srv, 0, "s2", 2, "g", 1, NULL, 0, &p2, &n2), 0);
    assert_int_equal(n1, 3);
    assert_int_equal(n2, 3);
    for (size_t i = 0; i < n1; i++) {
        assert_int_equal(p2[i].id_ms, p1[i].id_ms);
        assert_string_equal(p2[i].consumer, p1[i].consumer);
        assert_int_equal(p2[i].idle_ms, p1[i].idle_ms);
        assert_int_equal(p2[i].delivery_count, p1[i].delivery_count);
    }
    assert_int_equal(p2[0].idle_ms, 4000);
    assert_int_equal(p2[0].delivery_count, 2);
    assert_int_equal(p2[2].idle_ms, 4500);
    free(p1);
    free(p2);
    fr_consumer_state st;
    assert_int_equal(fr_stream_consumer(f->srv, 0, "s2", 2, "g", 1, "bob", 3, &st), 0);
    assert_int_equal(st.pending, 1);
    assert_int_equal(st.idle_ms, 4500);

    /* the copy lives on its own */
    assert_int_equal(INT(f->c, "XACK s2 g 1-0 2-0 3-0"), 3);
    assert_int_equal(fr_stream_pending(f->srv, 0, "s", 1, "g", 1, NULL, 0, &p1, &n1), 0);
    assert_int_equal(n1, 3);
    free(p1);
    fake_run(f->c, "XADD s2 4-0 f d");
    fr_stream_meta m1, m2;
    assert_int_equal(fr_stream_meta_get(f->srv, 0, "s", 1, &m1), 0);
    assert_int_equal(fr_stream_meta_get(f->srv, 0, "s2", 2, &m2), 0);
    assert_int_equal(m1.length, 3);
    assert_int_equal(m2.length, 4);
    assert_int_equal(m2.entries_added, 4);
    char *d = fr_dump(f->srv, NULL);
    assert_non_null(strstr(d, "\"s2\" stream\n"));
    free(d);
}

static void copy_ttl_and_databases(void **state)
{
    fixture *f = *state;
    fr_clock_set(f->srv, T0);
    OK(f->c, "SET k v PX 1500");
    fr_clock_advance(f->srv, 200);
    assert_int_equal(INT(f->c, "COPY k k2 DB 3"), 1);
    assert_int_equal(INT(f->c, "COPY k k2 DB 3"), 0);
    fake_assert_expires_in_db(f, 3, "k2", 1300);
    assert_int_equal(INT(f->c, "COPY k k3"), 0); /* the source expired too */
    assert_string_equal(RESP(f->c, "COPY k k"),
                        "-ERR source and destination objects are the same\r\n");
    fake_fixture *cl = fake_fixture_new(&(fr_config){.seed = 1, .start_ms = T0,
                                                     .cluster_enabled = 1}, 1);
    OK(cl->c, "SET {a}x 1");
    assert_string_equal(RESP(cl->c, "COPY {a}x {a}y DB 1"),
                        "-ERR Copying to another database is not allowed in cluster mode\r\n");
    assert_int_equal(INT(cl->c, "COPY {a}x {a}y DB 0"), 1);
    fake_fixture_free(cl);
}

/* A COPY that creates a list serves a client blocked on it, as Redis's dbAdd signals. */
static void copy_serves_a_blocked_client(void **state)
{
    fixture *f = *state;
    fr_client_set_blocking(f->c2, 1);
    assert_null(fr_exec_line(f->c2, "BLPOP q 0"));
    assert_int_equal(INT(f->c, "RPUSH src a b"), 2);
    assert_int_equal(INT(f->c, "COPY src q"), 1);
    fr_client *w = fr_server_take_woken(f->srv);
    assert_ptr_equal(w, f->c2);
    assert_string_equal(fake_resp(fr_client_woken_reply(w)), "*2\r\n$1\r\nq\r\n$1\r\na\r\n");
    assert_string_equal(RESP(f->c, "LRANGE q 0 -1"), "*1\r\n$1\r\nb\r\n");
    assert_string_equal(RESP(f->c, "LRANGE src 0 -1"), "*2\r\n$1\r\na\r\n$1\r\nb\r\n");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        TEST(idletime_counts_whole_seconds),
        TEST(idletime_reset_by_accesses_only),
        TEST(shared_integers_share_their_field),
        TEST(freq_under_lfu),
        TEST(freq_is_seeded),
        TEST(set_param_contract),
        TEST(encodings_follow_the_parameters),
        TEST(string_encodings),
        TEST(jemalloc_size_classes),
        TEST(memory_usage_as_measured),
        TEST(memory_usage_of_big_arguments),
        TEST(copy_keeps_a_streams_groups),
        TEST(copy_ttl_and_databases),
        TEST(copy_serves_a_blocked_client),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
