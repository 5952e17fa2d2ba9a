/* test_bitops.c -- the bitmap commands (t_bitops.c) where the differential scripts cannot
 * look, or cannot look often enough.
 *
 * - Models: BITCOUNT, BITPOS, GETBIT and BITFIELD against a bit-by-bit reference written
 *   here from the commands' definitions, over thousands of seeded random strings and
 *   ranges, so the fake's word-at-a-time paths (byte skipping, eight-byte popcounts, the
 *   masked first and last bytes of a BIT range) are checked on every length and alignment.
 * - The virtual clock: SETBIT and BITFIELD keep a TTL to the millisecond, write over an
 *   expired key as over a missing one; BITOP drops the destination's TTL and reads an
 *   expired source as missing.
 * - WATCH: a write that changes no bit touches no watcher; a growth or a change does.
 * - Offsets at the 512 MB limit are read without allocating anything, and refused past it
 *   with the keyspace unchanged.
 * - The bytes: zero padding as the dump and the string commands show it.
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
#include "test_rng.h"

/* A fresh server on the default config and two clients (c2 for WATCH). */
typedef fake_fixture fixture;
#define TEST(fn) FAKE_TEST2(fn)

/* The integer a command answers, and +OK (fail the test for any other reply). */
#define INT(c, ...) fake_int_reply(fake_run((c), __VA_ARGS__))
#define OK(c, ...) fake_ok_reply(fake_run((c), __VA_ARGS__))
/* The raw RESP2 reply of a command line, as a C string. */
#define RESP(c, ...) fake_resp(fake_run((c), __VA_ARGS__))

/* Asserts that the string at key holds exactly the n bytes at want. */
static void expect_bytes(fr_client *c, const char *key, const void *want, size_t n)
{
    const char *argv[] = {"GET", key};
    const fr_reply *r = fr_exec(c, 2, argv, NULL);
    assert_int_equal(r->type, FR_REPLY_BULK);
    assert_int_equal(r->len, n);
    assert_memory_equal(r->str, want, n);
}

/* SET key to the n bytes at p (binary safe). */
static void set_bytes(fr_client *c, const char *key, const unsigned char *p, size_t n)
{
    const char *argv[] = {"SET", key, (const char *)p};
    size_t lens[] = {3, strlen(key), n};
    fake_ok_reply(fr_exec(c, 3, argv, lens));
}

/* ----- The reference: one bit at a time --------------------------------------------------- */

/* Bit pos of p (len bytes), 0 past the end; bit 0 is the top bit of p[0]. */
static int ref_bit(const unsigned char *p, size_t len, long long pos)
{
    return (size_t)(pos / 8) < len ? (p[pos / 8] >> (7 - pos % 8)) & 1 : 0;
}

/* start and end (units of total) as the inclusive range they mean: negatives count from
 * the end, then both are clamped into the string (end to total - 1). */
static void ref_clamp(long long *start, long long *end, long long total)
{
    if (*start < 0) *start += total;
    if (*end < 0) *end += total;
    if (*start < 0) *start = 0;
    if (*end < 0) *end = 0;
    if (*end >= total) *end = total - 1;
}

/* BITCOUNT over bits [from, to], counted one by one. */
static long long ref_count(const unsigned char *p, size_t len, long long from, long long to)
{
    long long n = 0;
    for (long long i = from; i <= to; i++) n += ref_bit(p, len, i);
    return n;
}

/* ----- Models ----------------------------------------------------------------------------- */

/* A random string of up to 80 bytes: runs of 0x00 and 0xff (so whole words are skipped)
 * and random bytes, in random proportions. */
static size_t random_string(uint64_t *rng, unsigned char *buf)
{
    size_t n = splitmix64_below(rng, 81);
    unsigned style = splitmix64_below(rng, 4);
    for (size_t i = 0; i < n; i++) {
        unsigned r = splitmix64_below(rng, 10);
        if (style == 0 || (style == 3 && r < 3)) buf[i] = (unsigned char)splitmix64_next(rng);
        else if (style == 1 || r < 6) buf[i] = 0xff;
        else buf[i] = 0x00;
    }
    /* Now and then one odd bit in a run, where a skipped word must stop. */
    if (n && splitmix64_below(rng, 2)) buf[splitmix64_below(rng, (unsigned)n)] ^=
        (unsigned char)(1u << splitmix64_below(rng, 8));
    return n;
}

/* BITCOUNT and BITPOS (with and without a range, BYTE and BIT) and GETBIT on random
 * strings and ranges, against the reference. */
static void test_count_pos_model(void **state)
{
    fixture *f = *state;
    uint64_t rng = 20240611;
    unsigned char buf[96];

    for (int round = 0; round < 400; round++) {
        size_t len = random_string(&rng, buf);
        set_bytes(f->c, "k", buf, len);
        long long bits = (long long)len * 8;

        assert_int_equal(INT(f->c, "BITCOUNT k"), ref_count(buf, len, 0, bits - 1));
        for (int t = 0; t < 20; t++) {
            long long pos = splitmix64_below(&rng, (unsigned)bits + 16);
            assert_int_equal(INT(f->c, "GETBIT k %lld", pos), ref_bit(buf, len, pos));

            int isbit = (int)splitmix64_below(&rng, 2);
            int span = isbit ? (int)bits + 20 : (int)len + 4;
            long long start = (long long)splitmix64_below(&rng, 2 * (unsigned)span + 1) - span;
            long long end = (long long)splitmix64_below(&rng, 2 * (unsigned)span + 1) - span;
            const char *unit = isbit ? "BIT" : "BYTE";
            long long total = isbit ? bits : (long long)len;
            long long s = start, e = end, want;

            /* BITCOUNT k start end unit */
            ref_clamp(&s, &e, total);
            if ((start < 0 && end < 0 && start > end) || s > e)
                want = 0;
            else if (isbit)
                want = ref_count(buf, len, s, e);
            else
                want = ref_count(buf, len, s * 8, e * 8 + 7);
            assert_int_equal(INT(f->c, "BITCOUNT k %lld %lld %s", start, end, unit), want);

            /* BITPOS k bit start end unit: a range with an end never pads. */
            for (int bit = 0; bit <= 1; bit++) {
                s = start;
                e = end;
                ref_clamp(&s, &e, total);
                want = -1;
                if (s <= e) {
                    long long from = isbit ? s : s * 8, to = isbit ? e : e * 8 + 7;
                    for (long long i = from; i <= to && want < 0; i++)
                        if (ref_bit(buf, len, i) == bit) want = i;
                }
                assert_int_equal(INT(f->c, "BITPOS k %d %lld %lld %s", bit, start, end, unit),
                                 want);
            }

            /* BITPOS k bit start (in bytes, to the end): no clear bit means the first bit
             * past the string, as if it were padded with zeros. */
            long long bstart = (long long)splitmix64_below(&rng, 2 * (unsigned)len + 9) -
                               (long long)len - 4;
            for (int bit = 0; bit <= 1; bit++) {
                s = bstart;
                e = (long long)len - 1;
                ref_clamp(&s, &e, (long long)len);
                want = -1;
                if (s <= e) {
                    for (long long i = s * 8; i <= e * 8 + 7 && want < 0; i++)
                        if (ref_bit(buf, len, i) == bit) want = i;
                    if (want < 0 && bit == 0) want = bits;
                }
                assert_int_equal(INT(f->c, "BITPOS k %d %lld", bit, bstart), want);
            }
        }
        /* The whole string without a range. */
        long long first1 = -1, first0 = -1;
        for (long long i = 0; i < bits; i++) {
            if (first1 < 0 && ref_bit(buf, len, i)) first1 = i;
            if (first0 < 0 && !ref_bit(buf, len, i)) first0 = i;
        }
        assert_int_equal(INT(f->c, "BITPOS k 1"), first1);
        assert_int_equal(INT(f->c, "BITPOS k 0"), len == 0 ? -1 : first0 < 0 ? bits : first0);
    }
}

/* BITFIELD's reference value of a width-bit field in the model buffer. */
static uint64_t ref_get(const unsigned char *p, size_t len, long long off, int width)
{
    uint64_t v = 0;
    for (int i = 0; i < width; i++) v = (v << 1) | (uint64_t)ref_bit(p, len, off + i);
    return v;
}

/* Writes a width-bit field into the model buffer (grown by the caller). */
static void ref_put(unsigned char *p, long long off, int width, uint64_t v)
{
    for (int i = 0; i < width; i++) {
        long long pos = off + i;
        unsigned char m = (unsigned char)(1u << (7 - pos % 8));
        if ((v >> (width - 1 - i)) & 1) p[pos / 8] |= m;
        else p[pos / 8] &= (unsigned char)~m;
    }
}

/* BITFIELD SET / INCRBY / GET with WRAP, SAT and FAIL, i1..i62 and u1..u62, on a random
 * walk over one key, against a model buffer: values and increments stay below 2^61 in
 * size, so the reference computes in plain int64 (the 63- and 64-bit edges are the
 * differential script's: they need Redis's own 64-bit arithmetic). */
static void test_bitfield_model(void **state)
{
    fixture *f = *state;
    uint64_t rng = 7;
    unsigned char model[64] = {0};
    size_t mlen = 0;
    static const char *const ow_names[] = {"WRAP", "SAT", "FAIL"};

    for (int step = 0; step < 3000; step++) {
        int width = 1 + (int)splitmix64_below(&rng, 62);
        int is_signed = (int)splitmix64_below(&rng, 2);
        long long off = splitmix64_below(&rng, 300);
        int op = (int)splitmix64_below(&rng, 3); /* 0 GET, 1 SET, 2 INCRBY */
        int ow = (int)splitmix64_below(&rng, 3);
        long long arg = (long long)(splitmix64_next(&rng) >> 3) - (1LL << 60);
        if (splitmix64_below(&rng, 2)) arg = (long long)splitmix64_below(&rng, 601) - 300;
        char type[16];
        snprintf(type, sizeof(type), "%c%d", is_signed ? 'i' : 'u', width);

        long long max = is_signed ? (1LL << (width - 1)) - 1 : (1LL << width) - 1;
        long long min = is_signed ? -max - 1 : 0;
        const fr_reply *r;
        if (op == 0) {
            r = fake_run(f->c, "BITFIELD k GET %s %lld", type, off);
        } else {
            r = fake_run(f->c, "BITFIELD k OVERFLOW %s %s %s %lld %lld", ow_names[ow],
                         op == 1 ? "SET" : "INCRBY", type, off, arg);
            size_t need = (size_t)((off + width - 1) / 8 + 1);
            if (need > mlen) mlen = need; /* grown even when FAIL refuses the write */
        }
        assert_int_equal(r->type, FR_REPLY_ARRAY);
        assert_int_equal(r->count, 1);

        uint64_t raw = ref_get(model, mlen, off, width);
        long long old = (long long)raw;
        if (is_signed && width < 64 && (raw >> (width - 1)) & 1) old = (long long)raw - (1LL << width);
        if (op == 0) {
            assert_int_equal(r->elements[0].integer, old);
            continue;
        }
        /* SET of an out-of-range value, or INCRBY past a limit. */
        long long want = op == 1 ? arg : old + arg;
        int over = want > max ? 1 : want < min ? -1 : 0;
        if (over && !is_signed && op == 1 && arg < 0) over = 1; /* a negative SET is huge */
        if (over && ow == 2) {
            assert_int_equal(r->elements[0].type, FR_REPLY_NIL);
        } else {
            long long stored = want;
            if (over && ow == 1) {
                stored = over > 0 ? max : min;
            } else if (over) {
                uint64_t m = ((uint64_t)1 << width) - 1, u = (uint64_t)want & m;
                stored = is_signed && (u >> (width - 1)) & 1 ? (long long)u - (1LL << width)
                                                             : (long long)u;
            }
            assert_int_equal(r->elements[0].integer, op == 1 ? old : stored);
            ref_put(model, off, width, (uint64_t)stored);
        }
    }
    expect_bytes(f->c, "k", model, mlen);
}

/* ----- Bytes, TTLs, WATCH, limits ------------------------------------------------------------ */

/* The bytes SETBIT grows, as GET, STRLEN, APPEND, SETRANGE and the dump see them; an
 * integer-valued string is its decimal text. */
static void test_padding_and_strings(void **state)
{
    fixture *f = *state;

    assert_int_equal(INT(f->c, "SETBIT k 17 1"), 0);
    expect_bytes(f->c, "k", "\x00\x00\x40", 3);
    assert_int_equal(INT(f->c, "APPEND k ab"), 5);
    assert_int_equal(INT(f->c, "SETBIT k 47 1"), 0);
    expect_bytes(f->c, "k", "\x00\x00\x40" "ab\x01", 6);
    assert_int_equal(INT(f->c, "SETRANGE k 1 \"\\xff\""), 6);
    assert_int_equal(INT(f->c, "BITCOUNT k"), 8 + 1 + 3 + 3 + 1); /* 'a', 'b': 3 bits each */

    char *dump = fr_dump(f->srv, NULL);
    assert_non_null(strstr(dump, "\"k\" string\n  \"\\x00\\xff@ab\\x01\"\n"));
    free(dump);

    OK(f->c, "SET n 10");
    /* "10" is 0x31 0x30; bit 6 set makes the '1' a '3'. */
    assert_int_equal(INT(f->c, "SETBIT n 6 1"), 0);
    expect_bytes(f->c, "n", "30", 2);
    assert_int_equal(INT(f->c, "INCR n"), 31);
    assert_int_equal(INT(f->c, "GETBIT n 7"), 1);
    assert_string_equal(RESP(f->c, "BITFIELD n GET u8 0 SET u8 8 57"), "*2\r\n:51\r\n:49\r\n");
    assert_int_equal(INT(f->c, "INCRBY n 1"), 40);
}

/* SETBIT and BITFIELD keep a TTL to the millisecond; over an expired key they write as
 * over a missing one; BITOP drops its destination's TTL and sees an expired source as
 * missing. */
static void test_ttls_on_the_virtual_clock(void **state)
{
    fixture *f = *state;

    OK(f->c, "SET k \"\\xff\" PX 1000");
    fr_clock_advance(f->srv, 400);
    assert_int_equal(INT(f->c, "SETBIT k 20 1"), 0);
    assert_string_equal(RESP(f->c, "BITFIELD k INCRBY u8 8 5"), "*1\r\n:5\r\n");
    assert_int_equal(INT(f->c, "PTTL k"), 600);
    fr_clock_advance(f->srv, 600);
    assert_int_equal(INT(f->c, "GETBIT k 0"), 1); /* alive through its deadline ms */
    fr_clock_advance(f->srv, 1);
    assert_int_equal(INT(f->c, "GETBIT k 0"), 0);
    assert_int_equal(INT(f->c, "SETBIT k 3 1"), 0);
    expect_bytes(f->c, "k", "\x10", 1);
    assert_int_equal(INT(f->c, "PTTL k"), -1);

    OK(f->c, "SET src \"\\x0f\" PX 10");
    OK(f->c, "SET dst x PX 5000");
    assert_int_equal(INT(f->c, "BITOP OR dst src k"), 1);
    expect_bytes(f->c, "dst", "\x1f", 1);
    assert_int_equal(INT(f->c, "PTTL dst"), -1);
    fr_clock_advance(f->srv, 11);
    assert_int_equal(INT(f->c, "BITOP AND dst src"), 0); /* src expired: dst deleted */
    assert_int_equal(INT(f->c, "EXISTS dst"), 0);
    assert_int_equal(INT(f->c, "BITCOUNT src"), 0);
    assert_int_equal(INT(f->c, "BITPOS src 0"), 0);
}

/* Redis touches WATCHed keys only when a bitmap write changed a bit or grew the string. */
static void test_watch_touches(void **state)
{
    fixture *f = *state;

    OK(f->c, "SET k \"\\x80\"");
    assert_true(fake_exec_survives(f, "SETBIT k 0 1"));
    assert_true(fake_exec_survives(f, "SETBIT k 7 0"));
    assert_false(fake_exec_survives(f, "SETBIT k 0 0"));
    assert_false(fake_exec_survives(f, "SETBIT k 8 0"));          /* grows */
    assert_true(fake_exec_survives(f, "BITFIELD k SET u8 0 0 INCRBY u4 4 0"));
    assert_true(fake_exec_survives(f, "BITFIELD k GET u8 0"));
    assert_true(fake_exec_survives(f, "BITFIELD k OVERFLOW FAIL INCRBY u8 40 -1")); /* grows */
    expect_bytes(f->c, "k", "\x00\x00\x00\x00\x00\x00", 6);
    assert_false(fake_exec_survives(f, "BITFIELD k INCRBY u8 0 1"));
    assert_false(fake_exec_survives(f, "BITOP OR k k"));
    assert_false(fake_exec_survives(f, "BITOP AND k nokey"));    /* deletes it */
    assert_true(fake_exec_survives(f, "BITFIELD k OVERFLOW FAIL SET u8 0 256")); /* creates it */
    expect_bytes(f->c, "k", "\x00", 1);
    assert_true(fake_exec_survives(f, "BITCOUNT k"));
    assert_true(fake_exec_survives(f, "SETBIT k x 1"));
}

/* Offsets up to the last bit of a 512 MB string are read without allocating it; one past
 * is refused before the key is looked at, with the keyspace unchanged. */
static void test_offset_limits(void **state)
{
    fixture *f = *state;

    assert_int_equal(INT(f->c, "GETBIT k 4294967295"), 0);
    assert_string_equal(RESP(f->c, "BITFIELD_RO k GET u8 4294967288 GET i64 #67108863"),
                        "*2\r\n:0\r\n:0\r\n");
    assert_string_equal(RESP(f->c, "BITFIELD k GET u63 4294967295"), "*1\r\n:0\r\n");
    assert_int_equal(INT(f->c, "DBSIZE"), 0);

    const char *err = "-ERR bit offset is not an integer or out of range\r\n";
    assert_string_equal(RESP(f->c, "SETBIT k 4294967296 1"), err);
    assert_string_equal(RESP(f->c, "GETBIT k 4294967296"), err);
    assert_string_equal(RESP(f->c, "BITFIELD k SET u8 0 1 GET u8 #536870912"), err);
    assert_string_equal(RESP(f->c, "BITFIELD k SET u8 #-1 1"), err);
    assert_string_equal(RESP(f->c, "SETBIT k 4294967295 2"),
                        "-ERR bit is not an integer or out of range\r\n");
    assert_int_equal(INT(f->c, "DBSIZE"), 0);

    /* #N wraps as 64-bit products do: (2^58 + 1) * 64 is bit 64. */
    OK(f->c, "SET k 012345678");
    const fr_reply *r = fake_run(f->c, "BITFIELD k GET i64 #288230376151711745 GET i64 64");
    assert_int_equal(r->type, FR_REPLY_ARRAY);
    assert_int_equal(r->elements[0].integer, 0x3800000000000000LL); /* '8', then padding */
    assert_int_equal(r->elements[1].integer, 0x3800000000000000LL);
}

/* The rows of the command table, as COMMAND INFO reports them in 7.0.15. */
static void test_command_table(void **state)
{
    (void)state;
    static const struct {
        const char *name, *flags;
        int arity, first, last;
    } want[] = {
        {"setbit", "write denyoom", 4, 1, 1},    {"getbit", "readonly fast", 3, 1, 1},
        {"bitcount", "readonly", -2, 1, 1},      {"bitpos", "readonly", -3, 1, 1},
        {"bitop", "write denyoom", -4, 2, -1},   {"bitfield", "write denyoom", -2, 1, 1},
        {"bitfield_ro", "readonly fast", -2, 1, 1},
    };
    for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++) {
        const fr_command_info *ci = fake_command_info(want[i].name);
        assert_string_equal(ci->group, "bitmap");
        assert_string_equal(ci->flags, want[i].flags);
        assert_int_equal(ci->arity, want[i].arity);
        assert_int_equal(ci->first_key, want[i].first);
        assert_int_equal(ci->last_key, want[i].last);
        assert_int_equal(ci->key_step, 1);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        TEST(test_count_pos_model),
        TEST(test_bitfield_model),
        TEST(test_padding_and_strings),
        TEST(test_ttls_on_the_virtual_clock),
        TEST(test_watch_touches),
        TEST(test_offset_limits),
        cmocka_unit_test(test_command_table),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
