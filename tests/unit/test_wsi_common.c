/* test_wsi_common.c -- common/'s pieces that issue 24 added for fuzz_outcomes' speed:
 * wsi_snprintf (wsi_buf.h) must write exactly what the C library's snprintf writes, and a
 * region (wsi_alloc.h) must hand out usable, independent blocks, keep what a block held
 * when it grows, leave the C library's blocks to the C library, and drop everything at
 * its end. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "wsi_alloc.h"
#include "wsi_buf.h"

/* Both printers into buffers of every size up to 40 (truncation included): the same
 * bytes and the same return value. */
#define SAME(...)                                                                        \
    do {                                                                                 \
        char want[64], got[64];                                                          \
        for (size_t sz = 0; sz <= 40; sz++) {                                            \
            memset(want, 'x', sizeof want);                                              \
            memset(got, 'x', sizeof got);                                                \
            int a = snprintf(want, sz, __VA_ARGS__);                                     \
            int b = wsi_snprintf(got, sz, __VA_ARGS__);                                  \
            assert_int_equal(a, b);                                                      \
            assert_memory_equal(want, got, sizeof want);                                 \
        }                                                                                \
    } while (0)

static void snprintf_matches_the_c_library(void **state)
{
    (void)state;
    SAME("plain text, no conversion");
    SAME("%s", "");
    SAME("%s and %s", "one", "");
    SAME("%.*s|", 3, "abcdef");
    SAME("%.*s|", 10, "abc");
    SAME("%.*s|", 0, "abc");
    SAME("%c%c%%", 'a', 'z');
    SAME("%d %d %d %i", 0, -1, 2147483647, -2147483647 - 1);
    SAME("%u %lu %llu %zu", 0u, 4294967295ul, 18446744073709551615ull, (size_t)12345);
    volatile long long lowest = -9223372036854775807LL - 1; /* not constant: no warning */
    SAME("%ld %lld", (long)lowest, (long long)lowest);
    SAME("%lld.%03lld", 12LL, 7LL);
    SAME("%03lld|%02d|%05u|%09llu", -7LL, 123, 42u, 1234567890123ull);
    SAME("flush %llu of %s after read %llu", 3ull, "main", 17ull);
    /* what it leaves to the C library: flags, widths, other conversions, NULL */
    SAME("%5s|%-4d|%x|%g|%p", "ab", 3, 255u, 0.5, (void *)0);
    SAME("%12d|%+d|% d", 5, 5, 5);
    const char *volatile none = NULL; /* not a constant: the compiler would warn */
    SAME("[%s]", none);
}

static void buf_printf_uses_it(void **state)
{
    (void)state;
    wsi_buf b = {0};
    wsi_buf_xprintf(&b, "read %llu of %s", 9ull, "rescue");
    assert_string_equal(b.p, "read 9 of rescue");
    char big[700];
    memset(big, 'q', sizeof big - 1);
    big[sizeof big - 1] = '\0';
    wsi_buf_xprintf(&b, "|%s|", big); /* longer than the small buffer */
    assert_int_equal(b.len, 16 + 2 + sizeof big - 1);
    assert_int_equal(b.p[b.len - 1], '|');
    wsi_buf_free(&b);
}

static void region_blocks_are_usable_and_apart(void **state)
{
    (void)state;
    char *before = wsi_malloc(40); /* the C library's */
    strcpy(before, "made before the region");
    wsi_region_begin();
    enum { N = 2000 };
    static unsigned char *p[N];
    for (size_t i = 0; i < N; i++) {
        size_t n = 1 + (i * 37) % 600;
        p[i] = wsi_malloc(n);
        assert_non_null(p[i]);
        assert_int_equal((uintptr_t)p[i] % 16, 0);
        memset(p[i], (int)(i & 0xff), n);
    }
    for (size_t i = 0; i < N; i++) {
        size_t n = 1 + (i * 37) % 600;
        for (size_t k = 0; k < n; k++) assert_int_equal(p[i][k], (unsigned char)(i & 0xff));
    }
    unsigned char *z = wsi_calloc(100, 3);
    for (size_t k = 0; k < 300; k++) assert_int_equal(z[k], 0);
    /* growth keeps the bytes, at the top (in place) and elsewhere (moved) */
    char *g = wsi_malloc(8);
    memcpy(g, "grow me", 8);
    g = wsi_realloc(g, 5000);
    assert_string_equal(g, "grow me");
    char *h = wsi_realloc(p[7], 3000);
    assert_int_equal((unsigned char)h[0], 7);
    /* bigger than a chunk */
    char *huge = wsi_malloc((size_t)3 << 20);
    assert_non_null(huge);
    memset(huge, 1, (size_t)3 << 20);
    /* a C library's block stays the C library's: grown by it, freed by it */
    before = wsi_realloc(before, 4000);
    assert_string_equal(before, "made before the region");
    wsi_free(g);
    wsi_free(z);
    wsi_free(NULL);
    char *text = wsi_strdup("a copy");
    assert_string_equal(text, "a copy");
    wsi_region_begin(); /* not nested: nothing happens */
    wsi_region_end();
    assert_null(wsi_alloc_hooks);
    if (!wsi_region_on()) { /* the C library served (a sanitizer): give it all back */
        for (size_t i = 0; i < N; i++)
            if (i != 7) wsi_free(p[i]);
        wsi_free(h);
        wsi_free(huge);
        wsi_free(text);
    }
    /* after the end the C library serves again, and the block made before is whole */
    assert_string_equal(before, "made before the region");
    wsi_free(before);
    /* a second region reuses the pages */
    wsi_region_begin();
    char *again = wsi_malloc(64);
    assert_non_null(again);
    strcpy(again, "second region");
    assert_string_equal(again, "second region");
    if (!wsi_region_on()) wsi_free(again);
    wsi_region_end();
    wsi_region_release();
}

static void region_on_says_whether_it_serves(void **state)
{
    (void)state;
    wsi_region_begin();
    int served = wsi_alloc_hooks != NULL;
    wsi_region_end();
    assert_int_equal(served, wsi_region_on());
    wsi_region_release();
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(snprintf_matches_the_c_library),
        cmocka_unit_test(buf_printf_uses_it),
        cmocka_unit_test(region_blocks_are_usable_and_apart),
        cmocka_unit_test(region_on_says_whether_it_serves),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
