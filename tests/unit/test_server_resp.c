/* test_server_resp.c -- the RESP2 request parser of fakeredis-server (resp_request.h).
 *
 * Every expectation here was read off redis-server 7.0.15 fed the same bytes (the server
 * test test_server_diff checks the protocol errors against a live one too).  Each input is
 * parsed three ways -- whole, one byte at a time, and in 7-byte pieces -- and must give
 * the same commands and the same verdict: frames split anywhere must not matter, except
 * for the size limits, which Redis checks after each read and which are tested with
 * RR_IOBUF_LEN-sized pieces as Redis reads them.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "redis_harness.h"
#include "resp_request.h"

/* What a parse produced: the commands as "arg|arg|..." lines (bytes < 0x20 as \xHH), then
 * "AGAIN" or "ERROR <text>" (an rh_buf: data is the text). */
typedef rh_buf transcript;

static void put_raw(transcript *t, const char *s)
{
    rh_buf_append(t, s, strlen(s));
}

/* Appends bytes, those outside printable ASCII as \xHH, at most 64 of them (a long
 * argument shows as its first 64 bytes and "..."). */
static void put(transcript *t, const char *s, size_t n)
{
    for (size_t i = 0; i < n && i < 64; i++) {
        unsigned char c = (unsigned char)s[i];
        if (c < 0x20 || c >= 0x7f)
            rh_buf_printf(t, "\\x%02x", c);
        else
            rh_buf_append(t, &s[i], 1);
    }
    if (n > 64) put_raw(t, "...");
}

/* Drains every command rr_next has; returns the last status. */
static rr_status drain(rr_parser *p, transcript *t)
{
    for (;;) {
        rr_status st = rr_next(p);
        if (st == RR_COMMAND) {
            for (int i = 0; i < rr_argc(p); i++) {
                if (i) put_raw(t, "|");
                put(t, rr_argv(p)[i], rr_argvlen(p)[i]);
            }
            put_raw(t, "\n");
            continue;
        }
        return st;
    }
}

/* Parses input fed in pieces of `step` bytes (0: whole) with the given limits into *t
 * (emptied first; rh_buf_free it after). */
static void parse_steps(const char *in, size_t n, size_t step, int auth, long long maxbulk,
                        transcript *t)
{
    rr_parser p;
    rr_init(&p);
    p.auth_required = auth;
    if (maxbulk) p.max_bulk_len = maxbulk;
    rh_buf_reset(t);
    rr_status st = RR_AGAIN;
    size_t at = 0;
    if (step == 0) step = n ? n : 1;
    while (at < n && st != RR_ERROR) {
        size_t k = n - at < step ? n - at : step;
        assert_int_equal(rr_feed(&p, in + at, k), 0);
        at += k;
        st = drain(&p, t);
    }
    if (n == 0) st = drain(&p, t);
    if (st == RR_ERROR) {
        put_raw(t, "ERROR ");
        put_raw(t, rr_error(&p));
        assert_int_equal(rr_next(&p), RR_ERROR); /* dead for good */
    } else {
        put_raw(t, "AGAIN");
    }
    rr_free(&p);
}

/* Checks that in (n bytes) parses to `want` whole, byte by byte and in 7-byte pieces. */
static void check_n(const char *in, size_t n, int auth, const char *want)
{
    static const size_t steps[] = {0, 1, 7};
    transcript t = {0};
    for (size_t i = 0; i < 3; i++) {
        parse_steps(in, n, steps[i], auth, 0, &t);
        if (strcmp(t.data, want) != 0)
            fail_msg("step %zu: got\n%s\nwant\n%s", steps[i], t.data, want);
    }
    rh_buf_free(&t);
}
#define CHECK(in, want) check_n((in), sizeof(in) - 1, 0, (want))
#define CHECK_AUTH(in, want) check_n((in), sizeof(in) - 1, 1, (want))

static void test_multibulk(void **state)
{
    (void)state;
    CHECK("*1\r\n$4\r\nPING\r\n", "PING\nAGAIN");
    CHECK("*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$0\r\n\r\n", "SET|k|\nAGAIN");
    CHECK("*2\r\n$4\r\nECHO\r\n$4\r\na\r\nb\r\n", "ECHO|a\\x0d\\x0ab\nAGAIN");
    /* the two bytes after a bulk are skipped unchecked; what follows is a new request */
    CHECK("*1\r\n$4\r\nPINGxxPING\r\n", "PING\nPING\nAGAIN");
    /* a half request waits */
    CHECK("*2\r\n$4\r\nECHO\r\n$5\r\nhel", "AGAIN");
    CHECK("*1\r\n$4\r\nPING\r", "AGAIN");
    CHECK("*1\r", "AGAIN");
    /* empty and negative counts are empty commands: skipped */
    CHECK("*0\r\n*-5\r\nPING\r\n", "PING\nAGAIN");
    CHECK("*2147483647\r\n", "AGAIN");
    /* a NUL before the '\r' hides it (Redis's strchr): the parser waits */
    CHECK("*1\0\r\n", "AGAIN");
    CHECK("*1\r\n\0\r\n", "AGAIN");
    /* binary arguments */
    CHECK("*2\r\n$4\r\nECHO\r\n$3\r\n\0\xff\n\r\n", "ECHO|\\x00\\xff\\x0a\nAGAIN");
}

static void test_multibulk_errors(void **state)
{
    (void)state;
    CHECK("*x\r\n", "ERROR ERR Protocol error: invalid multibulk length");
    CHECK("*\r\n", "ERROR ERR Protocol error: invalid multibulk length");
    CHECK("*01\r\n", "ERROR ERR Protocol error: invalid multibulk length");
    CHECK("*+1\r\n", "ERROR ERR Protocol error: invalid multibulk length");
    CHECK("*-0\r\n", "ERROR ERR Protocol error: invalid multibulk length");
    CHECK("* 1\r\n", "ERROR ERR Protocol error: invalid multibulk length");
    CHECK("*2147483648\r\n", "ERROR ERR Protocol error: invalid multibulk length");
    CHECK("*99999999999999999999\r\n", "ERROR ERR Protocol error: invalid multibulk length");
    CHECK("*1\r\n$-1\r\n", "ERROR ERR Protocol error: invalid bulk length");
    CHECK("*1\r\n$\r\n", "ERROR ERR Protocol error: invalid bulk length");
    CHECK("*1\r\n$04\r\nPING\r\n", "ERROR ERR Protocol error: invalid bulk length");
    CHECK("*1\r\n$536870913\r\n", "ERROR ERR Protocol error: invalid bulk length");
    CHECK("*1\r\n$536870912\r\n", "AGAIN");
    CHECK("*1\r\nx\r\n", "ERROR ERR Protocol error: expected '$', got 'x'");
    CHECK("*1\r\n\r\n", "ERROR ERR Protocol error: expected '$', got ' '");
    CHECK("*1\r\n\n\r\n", "ERROR ERR Protocol error: expected '$', got ' '");
    /* the commands before the error are returned first */
    CHECK("PING\r\n*1\r\n$4\r\nPING\r\n*1\r\n:1\r\n",
          "PING\nPING\nERROR ERR Protocol error: expected '$', got ':'");
}

static void test_unauthenticated(void **state)
{
    (void)state;
    CHECK_AUTH("*10\r\n", "AGAIN");
    CHECK_AUTH("*11\r\n", "ERROR ERR Protocol error: unauthenticated multibulk length");
    CHECK_AUTH("*1\r\n$16384\r\n", "AGAIN");
    CHECK_AUTH("*1\r\n$16385\r\n", "ERROR ERR Protocol error: unauthenticated bulk length");
    /* a bad length is reported as such even before AUTH */
    CHECK_AUTH("*1\r\n$-1\r\n", "ERROR ERR Protocol error: invalid bulk length");
}

static void test_inline(void **state)
{
    (void)state;
    CHECK("PING\r\n", "PING\nAGAIN");
    CHECK("PING\n", "PING\nAGAIN");
    CHECK("PING", "AGAIN");
    CHECK("\r\n\n  \t\r\n", "AGAIN"); /* blank lines are skipped */
    CHECK("SET k \"a b\"\r\nGET k\r\n", "SET|k|a b\nGET|k\nAGAIN");
    CHECK("ECHO \"\\x41\\x4g\\n\\t\\r\\b\\a\\\\\\\"\\q\"\r\n",
          "ECHO|Ax4g\\x0a\\x09\\x0d\\x08\\x07\\\"q\nAGAIN");
    CHECK("ECHO '\\'a'\r\n", "ECHO|'a\nAGAIN");
    CHECK("ECHO 'a\\nb'\r\n", "ECHO|a\\nb\nAGAIN");
    CHECK("PI\"NG\"\r\n", "PING\nAGAIN"); /* a quote opens in the middle of a word */
    CHECK("ECHO a\rb\r\n", "ECHO|a|b\nAGAIN");
    CHECK("  \t ECHO \x0b a\x0c" "b\r\n", "ECHO|a\\x0cb\nAGAIN");
    /* a NUL hides the newline after it (Redis's strchr): the request waits */
    CHECK("PING\0 x\r\n", "AGAIN");
    CHECK("PING\r\nPING\0\r\nPING\r\n", "PING\nAGAIN");
    CHECK("ECHO \"\" ''\r\n", "ECHO||\nAGAIN");
    CHECK("PING \"a\r\n", "ERROR ERR Protocol error: unbalanced quotes in request");
    CHECK("PING \"a\"b\r\n", "ERROR ERR Protocol error: unbalanced quotes in request");
    CHECK("PING 'a'b\r\n", "ERROR ERR Protocol error: unbalanced quotes in request");
    CHECK("PING 'a\r\n", "ERROR ERR Protocol error: unbalanced quotes in request");
    /* inline and multibulk mix freely */
    CHECK("PING\r\n*1\r\n$4\r\nPING\r\nPING\r\n", "PING\nPING\nPING\nAGAIN");
}

/* The 64 KiB limits, with the stream read in RR_IOBUF_LEN pieces as Redis reads it. */
static void check_big(const char *prefix, size_t fill, char fill_byte, const char *suffix,
                      const char *want)
{
    size_t pl = strlen(prefix), sl = strlen(suffix), n = pl + fill + sl;
    char *in = malloc(n);
    assert_non_null(in);
    memcpy(in, prefix, pl);
    memset(in + pl, fill_byte, fill);
    memcpy(in + pl + fill, suffix, sl);
    transcript t = {0};
    parse_steps(in, n, RR_IOBUF_LEN, 0, 0, &t);
    free(in);
    const char *got = strrchr(t.data, '\n') ? strrchr(t.data, '\n') + 1 : t.data;
    if (strcmp(got, want) != 0) fail_msg("got %s, want %s", got, want);
    rh_buf_free(&t);
}

static void test_limits(void **state)
{
    (void)state;
    const size_t K = 1024;
    check_big("", 64 * K, 'A', "", "AGAIN");
    check_big("", 64 * K + 1, 'A', "", "ERROR ERR Protocol error: too big inline request");
    /* a 70 KiB line arriving in 16 KiB reads: its newline comes in the 5th read, before
     * the check; a 100 KiB one is refused at the 5th read */
    check_big("ECHO ", 70 * K, 'A', "\r\n", "AGAIN");
    check_big("ECHO ", 100 * K, 'A', "\r\n", "ERROR ERR Protocol error: too big inline request");
    check_big("*", 64 * K, '1', "", "ERROR ERR Protocol error: too big mbulk count string");
    check_big("*1\r\n$", 64 * K, '1', "", "ERROR ERR Protocol error: too big bulk count string");
    check_big("*1\r\n$", 64 * K - 3, '1', "", "AGAIN");

    /* proto-max-bulk-len is read when each bulk header arrives */
    transcript t = {0};
    const char in[] = "*2\r\n$4\r\nECHO\r\n$11\r\nhello world\r\n";
    parse_steps(in, sizeof(in) - 1, 0, 0, 10, &t);
    assert_string_equal(t.data, "ERROR ERR Protocol error: invalid bulk length");
    parse_steps(in, sizeof(in) - 1, 0, 0, 11, &t);
    assert_string_equal(t.data, "ECHO|hello world\nAGAIN");
    rh_buf_free(&t);
}

/* A 1 MiB argument arrives in pieces while the buffer compacts and grows: the command
 * comes out whole, and rr_read_size asks for the rest of it at once. */
static void test_big_argument(void **state)
{
    (void)state;
    const size_t big = 1 << 20;
    rr_parser p;
    rr_init(&p);
    /* something consumed first, so the buffer has a dead prefix to drop */
    const char *head = "PING\r\n*2\r\n$3\r\nSET\r\n$1048576\r\n";
    assert_int_equal(rr_feed(&p, head, strlen(head)), 0);
    assert_int_equal(rr_next(&p), RR_COMMAND);
    assert_int_equal(rr_next(&p), RR_AGAIN);
    assert_int_equal(rr_read_size(&p), big + 2);
    char chunk[4096];
    size_t sent = 0;
    while (sent < big) {
        size_t k = sizeof(chunk);
        memset(chunk, 'a' + (int)(sent / k % 26), k);
        char *w = rr_write_ptr(&p, k);
        assert_non_null(w);
        memcpy(w, chunk, k);
        rr_commit(&p, k);
        sent += k;
        assert_int_equal(rr_next(&p), RR_AGAIN);
        assert_int_equal(rr_read_size(&p), big + 2 - sent);
    }
    assert_int_equal(rr_feed(&p, "\r\n", 2), 0);
    assert_int_equal(rr_next(&p), RR_COMMAND);
    assert_int_equal(rr_argc(&p), 2);
    assert_int_equal(rr_argvlen(&p)[1], big);
    for (size_t i = 0; i < big; i += 4096) assert_int_equal(rr_argv(&p)[1][i], 'a' + (int)(i / 4096 % 26));
    assert_int_equal(rr_next(&p), RR_AGAIN);
    assert_int_equal(rr_pending(&p), 0);
    assert_int_equal(rr_read_size(&p), RR_IOBUF_LEN);
    rr_free(&p);
}

/* A long pipeline in odd-sized pieces: every command once, in order. */
static void test_pipeline_pieces(void **state)
{
    (void)state;
    char *in = malloc(1 << 20);
    assert_non_null(in);
    size_t n = 0;
    for (int i = 0; i < 20000; i++) {
        if (i % 3 == 0)
            n += (size_t)sprintf(in + n, "*3\r\n$3\r\nSET\r\n$%d\r\nk%d\r\n$1\r\nv\r\n",
                                 i >= 10000 ? 6 : i >= 1000 ? 5 : i >= 100 ? 4 : i >= 10 ? 3 : 2, i);
        else
            n += (size_t)sprintf(in + n, "GET k%d\r\n", i);
    }
    rr_parser p;
    rr_init(&p);
    int seen = 0;
    size_t at = 0, step = 1;
    while (at < n) {
        size_t k = n - at < step ? n - at : step;
        assert_int_equal(rr_feed(&p, in + at, k), 0);
        at += k;
        step = step * 7 % 1013 + 1;
        rr_status st;
        while ((st = rr_next(&p)) == RR_COMMAND) {
            char want[32];
            int wl = sprintf(want, "k%d", seen);
            int argc = rr_argc(&p);
            assert_int_equal(argc, seen % 3 == 0 ? 3 : 2);
            assert_int_equal(rr_argvlen(&p)[1], (size_t)wl);
            assert_memory_equal(rr_argv(&p)[1], want, (size_t)wl);
            seen++;
        }
        assert_int_equal(st, RR_AGAIN);
    }
    assert_int_equal(seen, 20000);
    rr_free(&p);
    free(in);
}

static void test_split_inline(void **state)
{
    (void)state;
    char out[64];
    size_t off[16], lens[16];
    assert_int_equal(rr_split_inline("", 0, out, off, lens, 16), 0);
    assert_int_equal(rr_split_inline("   ", 3, out, off, lens, 16), 0);
    assert_int_equal(rr_split_inline("a  bc", 5, out, off, lens, 16), 2);
    assert_memory_equal(out + off[1], "bc", 2);
    assert_int_equal(lens[1], 2);
    assert_int_equal(rr_split_inline("\"a", 2, out, off, lens, 16), -1);
    assert_int_equal(rr_split_inline("'a' 'b'", 7, out, off, lens, 16), 2);
    /* "\x" at the very end: a backslash escape of 'x' */
    assert_int_equal(rr_split_inline("\"\\x\"", 4, out, off, lens, 16), 1);
    assert_int_equal(lens[0], 1);
    assert_int_equal(out[off[0]], 'x');
}

/* A command unread (rr_unread: held by CLIENT PAUSE) comes back whole from the next
 * rr_next, inline or multibulk, after more bytes came; a long command's argument arrays
 * go back once the buffer is empty; a big argument that ended the buffer is reported once
 * (rr_take_big_done), and rr_big_arg tells what of one has come. */
static void test_unread_and_sizes(void **state)
{
    (void)state;
    rr_parser p;
    rr_init(&p);
    const char *two = "*2\r\n$3\r\nGET\r\n$1\r\nk\r\nPING x\r\n";
    assert_int_equal(rr_feed(&p, two, strlen(two)), 0);
    assert_int_equal(rr_next(&p), RR_COMMAND);
    rr_unread(&p);
    assert_int_equal(rr_feed(&p, "ECHO y\r\n", 8), 0);
    assert_int_equal(rr_next(&p), RR_COMMAND);
    assert_int_equal(rr_argc(&p), 2);
    assert_memory_equal(rr_argv(&p)[1], "k", 1);
    assert_int_equal(rr_next(&p), RR_COMMAND);
    rr_unread(&p);
    assert_int_equal(rr_next(&p), RR_COMMAND);
    assert_memory_equal(rr_argv(&p)[0], "PING", 4);
    assert_memory_equal(rr_argv(&p)[1], "x", 1);
    assert_int_equal(rr_next(&p), RR_COMMAND);
    assert_memory_equal(rr_argv(&p)[0], "ECHO", 4);
    assert_int_equal(rr_next(&p), RR_AGAIN);

    /* 5,000 arguments, then nothing: the arrays go */
    char head[32];
    snprintf(head, sizeof(head), "*%d\r\n", 5000);
    assert_int_equal(rr_feed(&p, head, strlen(head)), 0);
    for (int i = 0; i < 5000; i++) assert_int_equal(rr_feed(&p, "$1\r\na\r\n", 7), 0);
    assert_int_equal(rr_next(&p), RR_COMMAND);
    assert_int_equal(rr_argc(&p), 5000);
    assert_true(p.arg_cap >= 5000);
    assert_int_equal(rr_next(&p), RR_AGAIN);
    assert_int_equal(p.arg_cap, 0);

    /* a big argument, arriving */
    size_t have = 0, remaining = 0;
    const char *bighead = "*2\r\n$3\r\nSET\r\n$40000\r\n";
    assert_int_equal(rr_feed(&p, bighead, strlen(bighead)), 0);
    assert_int_equal(rr_next(&p), RR_AGAIN);
    assert_int_equal(rr_big_arg(&p, &have, &remaining), 1);
    assert_int_equal(have, 0);
    assert_int_equal(remaining, 40002);
    char *body = calloc(1, 40002);
    assert_non_null(body);
    memcpy(body + 40000, "\r\n", 2);
    assert_int_equal(rr_feed(&p, body, 100), 0);
    assert_int_equal(rr_big_arg(&p, &have, &remaining), 1);
    assert_int_equal(have, 100);
    assert_int_equal(remaining, 39902);
    assert_int_equal(rr_feed(&p, body + 100, 39902), 0);
    free(body);
    assert_int_equal(rr_next(&p), RR_COMMAND);
    assert_int_equal(rr_big_arg(&p, &have, &remaining), 0);
    assert_int_equal(rr_take_big_done(&p), 40000);
    assert_int_equal(rr_take_big_done(&p), 0);
    rr_free(&p);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_multibulk),       cmocka_unit_test(test_multibulk_errors),
        cmocka_unit_test(test_unauthenticated), cmocka_unit_test(test_inline),
        cmocka_unit_test(test_limits),          cmocka_unit_test(test_big_argument),
        cmocka_unit_test(test_pipeline_pieces), cmocka_unit_test(test_split_inline),
        cmocka_unit_test(test_unread_and_sizes),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
