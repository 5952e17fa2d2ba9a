/* test_hll.c -- the HyperLogLog representation (hyperloglog.c) against models written here.
 *
 * - Dense registers: random 6-bit values written to all 16384 registers read back, and a
 *   write never changes a neighbour (nor the byte after the last register).
 * - Hashing: the register and run of an element are the low 14 bits of MurmurHash64A and
 *   one more than the trailing zeros of the rest (computed here independently), always 1..51.
 * - Sparse against dense: thousands of seeded register updates applied to a sparse HLL
 *   (with a limit that keeps it sparse) and to a plain array; after each, the sparse form
 *   decodes to the array, its runs cover exactly 16384 registers, PFADD's answer (changed
 *   or not) is the model's, and both estimates agree.  A value above 32, or a sparse form
 *   that would pass hll-sparse-max-bytes, promotes it to dense.
 * - Corruption: runs that stop short of or pass register 16384 make the conversion, the
 *   count and the merge fail, and PFADD/PFCOUNT answer INVALIDOBJ.
 * - The estimate: within six standard errors for 1 .. 100,000 distinct elements, 0 for
 *   none, the same for one key, a merge of it, and PFCOUNT of several keys.
 * - The commands: the header PFCOUNT caches (and PFADD invalidates), PFSELFTEST.
 */
#include <math.h>
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
#include "hll_int.h"
#include "test_rng.h"

#define TEST(fn) FAKE_TEST(fn)

/* ----- Dense registers ---------------------------------------------------------------------- */

/* Register i read bit by bit: bits 6i .. 6i+5, least significant first. */
static unsigned ref_get(const uint8_t *regs, long i)
{
    unsigned v = 0;
    for (int b = 0; b < 6; b++) {
        long bit = i * 6 + b;
        v |= (unsigned)((regs[bit / 8] >> (bit % 8)) & 1) << b;
    }
    return v;
}

static void test_dense_registers(void **state)
{
    (void)state;
    uint8_t *regs = calloc(12288 + 1, 1);
    uint8_t *model = malloc(FRI_HLL_REGISTERS);
    uint64_t s = 1;
    for (int round = 0; round < 20; round++) {
        for (long i = 0; i < FRI_HLL_REGISTERS; i++) {
            model[i] = (uint8_t)splitmix64_below(&s, 64);
            fri_hll_dense_set(regs, i, model[i]);
        }
        for (long i = 0; i < FRI_HLL_REGISTERS; i++) {
            assert_int_equal(fri_hll_dense_get(regs, i), model[i]);
            assert_int_equal(ref_get(regs, i), model[i]);
        }
        assert_int_equal(regs[12288], 0); /* the terminator stays */
        for (int k = 0; k < 2000; k++) {
            long i = (long)splitmix64_below(&s, FRI_HLL_REGISTERS);
            model[i] = (uint8_t)splitmix64_below(&s, 64);
            fri_hll_dense_set(regs, i, model[i]);
            for (long j = i > 0 ? i - 1 : 0; j <= i + 1 && j < FRI_HLL_REGISTERS; j++)
                assert_int_equal(fri_hll_dense_get(regs, j), model[j]);
        }
    }
    free(regs);
    free(model);
}

/* ----- Hashing ------------------------------------------------------------------------------ */

static void test_pattern(void **state)
{
    (void)state;
    uint64_t s = 2;
    int seen_high = 0;
    for (int i = 0; i < 200000; i++) {
        char ele[24];
        int n = snprintf(ele, sizeof(ele), "e%llu", (unsigned long long)splitmix64_next(&s));
        long reg;
        int run = fri_hll_pattern(ele, (size_t)n, &reg);
        uint64_t h = fri_murmur64a(ele, (size_t)n, 0xadc83b19ULL);
        assert_int_equal(reg, (long)(h & 16383));
        uint64_t rest = h >> 14;
        int zeros = 0;
        while (zeros < 50 && !((rest >> zeros) & 1)) zeros++;
        assert_int_equal(run, zeros + 1);
        assert_true(run >= 1 && run <= 51);
        if (run > 12) seen_high = 1;
    }
    assert_true(seen_high);
    /* the hash of the tail bytes depends on every one of them */
    assert_true(fri_murmur64a("abcdefghi", 9, 1) != fri_murmur64a("abcdefghj", 9, 1));
    assert_true(fri_murmur64a("", 0, 1) != fri_murmur64a("", 0, 2));
}

/* ----- Sparse against a model -------------------------------------------------------------- */

/* Decodes a sparse HLL into regs; the registers its runs cover (16384 when sound). */
static long decode_sparse(const fri_str *s, uint8_t *regs)
{
    const uint8_t *p = (const uint8_t *)s->buf + FRI_HLL_HDR_SIZE, *end = (const uint8_t *)s->buf + s->len;
    long idx = 0;
    while (p < end) {
        if ((*p & 0xc0) == 0) {
            for (int k = 0; k < (*p & 0x3f) + 1; k++, idx++)
                if (idx < FRI_HLL_REGISTERS) regs[idx] = 0;
            p++;
        } else if ((*p & 0xc0) == 0x40) {
            long run = (((long)(*p & 0x3f) << 8) | p[1]) + 1;
            for (long k = 0; k < run; k++, idx++)
                if (idx < FRI_HLL_REGISTERS) regs[idx] = 0;
            p += 2;
        } else {
            for (int k = 0; k < (*p & 3) + 1; k++, idx++)
                if (idx < FRI_HLL_REGISTERS) regs[idx] = (uint8_t)(((*p >> 2) & 0x1f) + 1);
            p++;
        }
    }
    return idx;
}

static void test_sparse_model(void **state)
{
    (void)state;
    uint64_t s = 3;
    uint8_t *model = malloc(FRI_HLL_REGISTERS), *got = malloc(FRI_HLL_REGISTERS);
    for (int round = 0; round < 30; round++) {
        fri_str *h = fri_hll_new();
        assert_non_null(h);
        assert_int_equal(h->len, 18);
        assert_memory_equal(h->buf, "HYLL\x01", 5);
        memset(model, 0, FRI_HLL_REGISTERS);
        /* clustered registers so runs of VAL, ZERO and XZERO all appear */
        long base = (long)splitmix64_below(&s, FRI_HLL_REGISTERS);
        for (int k = 0; k < 600; k++) {
            long i = (base + (long)splitmix64_below(&s, 900)) % FRI_HLL_REGISTERS;
            uint8_t v = (uint8_t)(1 + splitmix64_below(&s, 6));
            int want = v > model[i];
            if (want) model[i] = v;
            assert_int_equal(fri_hll_set(&h, i, v, 1 << 20), want);
            assert_int_equal((uint8_t)h->buf[4], FRI_HLL_SPARSE);
            assert_int_equal(decode_sparse(h, got), FRI_HLL_REGISTERS);
            assert_memory_equal(got, model, FRI_HLL_REGISTERS);
            if (want) assert_true((uint8_t)h->buf[15] & 0x80); /* the cache is stale */
        }
        int invalid = 0;
        uint64_t sparse_est = fri_hll_count(h, &invalid);
        assert_int_equal(invalid, 0);
        uint8_t max[FRI_HLL_REGISTERS];
        memset(max, 0, sizeof(max));
        assert_int_equal(fri_hll_merge(max, h), 0);
        assert_memory_equal(max, model, FRI_HLL_REGISTERS);
        assert_int_equal(fri_hll_count_registers(max), sparse_est);
        assert_int_equal(fri_hll_to_dense(&h), 0);
        assert_int_equal((uint8_t)h->buf[4], FRI_HLL_DENSE);
        assert_int_equal(h->len, FRI_HLL_DENSE_SIZE);
        for (long i = 0; i < FRI_HLL_REGISTERS; i++)
            assert_int_equal(fri_hll_dense_get((uint8_t *)h->buf + 16, i), model[i]);
        assert_int_equal(fri_hll_count(h, NULL), sparse_est);
        fri_str_free(h);
    }
    free(model);
    free(got);
}

static void test_promotion(void **state)
{
    (void)state;
    /* a value above 32 */
    fri_str *h = fri_hll_new();
    assert_int_equal(fri_hll_set(&h, 100, 32, 3000), 1);
    assert_int_equal((uint8_t)h->buf[4], FRI_HLL_SPARSE);
    assert_int_equal(fri_hll_set(&h, 100, 33, 3000), 1);
    assert_int_equal((uint8_t)h->buf[4], FRI_HLL_DENSE);
    assert_int_equal(fri_hll_dense_get((uint8_t *)h->buf + 16, 100), 33);
    fri_str_free(h);
    /* the size limit: the update that would pass it promotes, not the one before */
    h = fri_hll_new();
    long i = 0;
    for (;;) {
        size_t before = h->len;
        assert_int_equal(fri_hll_set(&h, i, 1, 40), 1);
        if ((uint8_t)h->buf[4] == FRI_HLL_DENSE) {
            assert_true(before + 3 > 40); /* a split (3 bytes at most) passed 40 */
            break;
        }
        assert_true(h->len <= 40);
        i += 7;
    }
    for (long j = 0; j <= i; j += 7) assert_int_equal(fri_hll_dense_get((uint8_t *)h->buf + 16, j), 1);
    fri_str_free(h);
}

/* A sparse HLL of the given opcodes after an empty header. */
static fri_str *sparse_of(const char *ops, size_t n)
{
    char buf[64] = "HYLL\x01";
    memcpy(buf + 16, ops, n);
    return fri_str_new(buf, 16 + n);
}

static void test_corrupt(void **state)
{
    (void)state;
    static const struct { const char *ops; size_t n; } bad[] = {
        {"\x7f\xfe", 2},             /* 16383 registers */
        {"\x7f\xff\x80", 3},         /* one VAL past the end */
        {"\x7f\xff\x00", 3},         /* a ZERO past the end (the CVE-2025-32023 check) */
        {"\x7f\xfb\x8f\x8f", 4},     /* VAL runs to 16384, then one more */
        {"", 0},                     /* no runs at all */
    };
    uint8_t max[FRI_HLL_REGISTERS];
    for (size_t k = 0; k < sizeof(bad) / sizeof(bad[0]); k++) {
        fri_str *h = sparse_of(bad[k].ops, bad[k].n);
        int invalid = 0;
        fri_hll_count(h, &invalid);
        assert_int_equal(invalid, 1);
        memset(max, 0, sizeof(max));
        assert_int_equal(fri_hll_merge(max, h), -1);
        assert_int_equal(fri_hll_to_dense(&h), -1);
        fri_str_free(h);
    }
    fri_str *ok = sparse_of("\x7f\xfb\x8f", 3);
    int invalid = 0;
    fri_hll_count(ok, &invalid);
    assert_int_equal(invalid, 0);
    assert_int_equal(fri_hll_to_dense(&ok), 0);
    assert_int_equal(fri_hll_dense_get((uint8_t *)ok->buf + 16, 16383), 4);
    fri_str_free(ok);
}

/* ----- The estimate and the commands --------------------------------------------------------- */

static void test_estimate(void **state)
{
    fake_fixture *f = *state;
    assert_int_equal(fake_int_reply(fake_run(f->c, "PFCOUNT none")), 0);
    assert_int_equal(fake_int_reply(fake_run(f->c, "PFADD h")), 1);
    assert_int_equal(fake_int_reply(fake_run(f->c, "PFCOUNT h")), 0);
    long long n = 0;
    char line[8192];
    for (long long checkpoint = 1; checkpoint <= 100000; checkpoint *= 10) {
        while (n < checkpoint) {
            int len = snprintf(line, sizeof(line), "PFADD h");
            for (int k = 0; k < 500 && n < checkpoint; k++, n++)
                len += snprintf(line + len, sizeof(line) - (size_t)len, " el:%lld", n);
            fake_int_reply(fr_exec_line(f->c, line));
        }
        long long est = fake_int_reply(fake_run(f->c, "PFCOUNT h"));
        double err = fabs((double)est - (double)checkpoint);
        assert_true(err <= ceil(1.04 / sqrt(16384.0) * 6 * (double)checkpoint) + 1);
        /* the same through a merge and through PFCOUNT of several keys */
        fake_ok_reply(fake_run(f->c, "PFMERGE copy h"));
        assert_int_equal(fake_int_reply(fake_run(f->c, "PFCOUNT copy")), est);
        assert_int_equal(fake_int_reply(fake_run(f->c, "PFCOUNT h copy none")), est);
        fake_run(f->c, "DEL copy");
    }
    /* 100,000 elements: long past the promotion */
    assert_string_equal(fake_resp(fake_run(f->c, "PFDEBUG ENCODING h")), "+dense\r\n");
    assert_int_equal(fake_int_reply(fake_run(f->c, "STRLEN h")), FRI_HLL_DENSE_SIZE);
}

static void test_cache_and_commands(void **state)
{
    fake_fixture *f = *state;
    fake_int_reply(fake_run(f->c, "PFADD h a b c"));
    const fr_reply *r = fake_run(f->c, "GET h");
    assert_int_equal(r->type, FR_REPLY_BULK);
    assert_true((uint8_t)r->str[15] & 0x80); /* stale after PFADD */
    long long n = fake_int_reply(fake_run(f->c, "PFCOUNT h"));
    assert_int_equal(n, 3);
    r = fake_run(f->c, "GET h");
    assert_int_equal((uint8_t)r->str[8], 3); /* cached, little endian, top bit clear */
    for (int i = 9; i < 16; i++) assert_int_equal(r->str[i], 0);
    /* a cache written by hand is believed */
    fake_run(f->c, "SETRANGE h 8 \"\\x07\"");
    assert_int_equal(fake_int_reply(fake_run(f->c, "PFCOUNT h")), 7);
    assert_int_equal(fake_int_reply(fake_run(f->c, "PFADD h a")), 0);
    assert_int_equal(fake_int_reply(fake_run(f->c, "PFCOUNT h")), 7);
    assert_int_equal(fake_int_reply(fake_run(f->c, "PFADD h d")), 1);
    assert_int_equal(fake_int_reply(fake_run(f->c, "PFCOUNT h")), 4);
    /* the limit follows the parameter */
    assert_int_equal(fr_server_set_param(f->srv, "hll-sparse-max-bytes", "20"), 0);
    fake_int_reply(fake_run(f->c, "PFADD small x y z w"));
    assert_string_equal(fake_resp(fake_run(f->c, "PFDEBUG ENCODING small")), "+dense\r\n");
    /* PFSELFTEST checks this code: too small a limit fails its "stays sparse" step, as
     * on Redis */
    assert_string_equal(fake_resp(fake_run(f->c, "PFSELFTEST")),
                        "-ERR TESTFAILED sparse encoding not used\r\n");
    assert_int_equal(fr_server_set_param(f->srv, "hll-sparse-max-bytes", "3000"), 0);
    assert_string_equal(fake_resp(fake_run(f->c, "PFSELFTEST")), "+OK\r\n");
    fake_run(f->c, "SET bad \"HYLL\\x01\\x00\\x00\\x00\\x00\\x00\\x00\\x00\\x00\\x00\\x00\\x80\\x7f\\xfe\"");
    assert_string_equal(fake_resp(fake_run(f->c, "PFCOUNT bad")),
                        "-INVALIDOBJ Corrupted HLL object detected\r\n");
    fake_run(f->c, "SET notone foo");
    assert_string_equal(fake_resp(fake_run(f->c, "PFADD notone a")),
                        "-WRONGTYPE Key is not a valid HyperLogLog string value.\r\n");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_dense_registers),
        cmocka_unit_test(test_pattern),
        cmocka_unit_test(test_sparse_model),
        cmocka_unit_test(test_promotion),
        cmocka_unit_test(test_corrupt),
        TEST(test_estimate),
        TEST(test_cache_and_commands),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
