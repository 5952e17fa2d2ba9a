/* fuzz_resp.c -- the server's RESP request parser (server/src/resp_request.h) on arbitrary
 * bytes (libFuzzer target).
 *
 * Input: one byte of settings, four bytes seeding the chunk sizes, then the byte stream a
 * client sends.  Settings bit 0: the connection must still AUTH (the tighter limits);
 * bits 1-2: proto-max-bulk-len (Redis's default, 0, 5 or 100).
 *
 * The stream is parsed three times with the same settings -- all at once, one byte at a
 * time, and in chunks of sizes drawn from the seed -- calling rr_next after every piece
 * until it answers RR_AGAIN or RR_ERROR, as a server does.  Checked:
 * - the same commands come out, byte for byte, and the run ends the same way (the same
 *   error text, or the same number of bytes held for an unfinished request) whatever the
 *   split (for streams shorter than RR_INLINE_MAX: past it the "too big" verdicts
 *   depend on read sizes, as in Redis);
 * - every argument view lies inside the bytes received (multibulk) or the parser's own
 *   unescape buffer (inline); with AddressSanitizer the unused tail of the receive buffer
 *   is poisoned while rr_next runs, so a read past the received bytes is reported;
 * - limits: before AUTH no multibulk command has more than RR_UNAUTH_MAX_ARGS arguments;
 *   no multibulk argument is longer than proto-max-bulk-len (or RR_UNAUTH_MAX_BULK
 *   before AUTH); rr_pending never exceeds the bytes fed; an error is "ERR Protocol
 *   error: ..." or "ERR out of memory" and stays (every later rr_next answers RR_ERROR).
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "resp_request.h"
#include "wsi_alloc.h"
#include "wsi_buf.h"

#if defined(__has_feature)
#if __has_feature(address_sanitizer)
#define FUZZ_ASAN 1
#endif
#endif
#if defined(__SANITIZE_ADDRESS__)
#define FUZZ_ASAN 1
#endif
#ifdef FUZZ_ASAN
#include <sanitizer/asan_interface.h>
#endif

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Fails the input: libFuzzer keeps it as a crash, the replay driver dies. */
static void fail(const char *what, const char *detail)
{
    fprintf(stderr, "fuzz_resp: %s%s%s\n", what, detail ? ": " : "", detail ? detail : "");
    abort();
}

/* What one parse produced: the commands serialised ("argc\0" then "len:bytes" per
 * argument) and how it ended. */
typedef struct outcome {
    wsi_buf b;        /* the serialised commands (b.p, b.len) */
    size_t commands;  /* commands returned */
    int error;        /* the parse ended in RR_ERROR */
    char err[96];     /* its text */
    size_t pending;   /* bytes held at the end when it did not end in an error */
} outcome;

/* Appends n bytes to the outcome's serialised commands (aborts when out of memory:
 * "wsim: out of memory in fuzz"). */
static void out_add(outcome *o, const void *p, size_t n) { wsi_buf_xadd(&o->b, p, n); }

/* The settings every parse of one input uses. */
typedef struct settings {
    int auth_required;
    long long max_bulk;
} settings;

/* rr_next with the receive buffer's unused tail poisoned (under ASan), so reading past
 * the received bytes is caught even where the allocation goes on. */
static rr_status next_guarded(rr_parser *p)
{
#ifdef FUZZ_ASAN
    char *buf = p->buf;
    size_t len = p->len, cap = p->cap;
    if (buf && cap > len)
        ASAN_POISON_MEMORY_REGION(buf + len, cap - len);
    rr_status st = rr_next(p);
    /* rr_next may free an idle, grown buffer: never touch the shadow of freed memory. */
    if (buf && cap > len && p->buf == buf)
        ASAN_UNPOISON_MEMORY_REGION(buf + len, cap - len);
    return st;
#else
    return rr_next(p);
#endif
}

/* Non-zero when the n bytes at a lie inside [base, base + size). */
static int inside(const char *a, size_t n, const char *base, size_t size)
{
    return base && a >= base && n <= size && (size_t)(a - base) <= size - n;
}

/* Checks one returned command against the limits and the buffers, and records it.  A
 * multibulk command's arguments are views into the receive buffer, an inline command's
 * into the unescape buffer: which one it is follows from where the first view lies (the
 * two are separate allocations), and every other view must lie in the same one. */
static void take_command(const rr_parser *p, const settings *s, outcome *o)
{
    int argc = rr_argc(p);
    const char *const *argv = rr_argv(p);
    const size_t *lens = rr_argvlen(p);
    if (argc < 1)
        fail("RR_COMMAND with no arguments", NULL);
    int multibulk = inside(argv[0], lens[0], p->buf, p->len);
    if (multibulk && s->auth_required && argc > RR_UNAUTH_MAX_ARGS)
        fail("more arguments than allowed before AUTH", NULL);
    for (int i = 0; i < argc; i++) {
        if (multibulk ? !inside(argv[i], lens[i], p->buf, p->len)
                      : !inside(argv[i], lens[i], p->scratch, p->scratch_cap))
            fail("an argument view lies outside the parser's bytes", NULL);
        if (multibulk && (long long)lens[i] > s->max_bulk)
            fail("a bulk argument longer than proto-max-bulk-len", NULL);
        if (multibulk && s->auth_required && lens[i] > RR_UNAUTH_MAX_BULK)
            fail("a bulk argument longer than allowed before AUTH", NULL);
    }
    uint32_t c = (uint32_t)argc;
    out_add(o, &c, sizeof(c));
    for (int i = 0; i < argc; i++) {
        uint64_t n = lens[i];
        out_add(o, &n, sizeof(n));
        out_add(o, argv[i], lens[i]);
    }
    o->commands++;
}

/* Calls rr_next until it has nothing more to give; returns 0 to go on feeding, -1 once
 * the parser is dead. */
static int drain(rr_parser *p, const settings *s, outcome *o, size_t fed)
{
    for (;;) {
        rr_status st = next_guarded(p);
        if (rr_pending(p) > fed)
            fail("rr_pending counts more bytes than were fed", NULL);
        if (st == RR_AGAIN)
            return 0;
        if (st == RR_ERROR) {
            const char *e = rr_error(p);
            if (strncmp(e, "ERR Protocol error: ", 20) != 0 && strcmp(e, "ERR out of memory") != 0)
                fail("unexpected error text", e);
            if (rr_next(p) != RR_ERROR)
                fail("a dead parser answered something else than RR_ERROR", NULL);
            o->error = 1;
            snprintf(o->err, sizeof(o->err), "%s", e);
            return -1;
        }
        if (st != RR_COMMAND)
            fail("rr_next answered an unknown status", NULL);
        take_command(p, s, o);
    }
}

/* Parses stream[0..n) fed in pieces: sizes[] gives each piece's size (cycled), or all at
 * once when nsizes is 0. */
static void parse(const settings *s, const uint8_t *stream, size_t n, const size_t *sizes,
                  size_t nsizes, outcome *o)
{
    rr_parser p;
    rr_init(&p);
    p.auth_required = s->auth_required;
    p.max_bulk_len = s->max_bulk;
    memset(o, 0, sizeof(*o));
    size_t at = 0, k = 0;
    int dead = 0;
    while (at < n && !dead) {
        size_t piece = nsizes ? sizes[k++ % nsizes] : n - at;
        if (piece > n - at)
            piece = n - at;
        if (rr_feed(&p, stream + at, piece) != 0)
            fail("rr_feed: out of memory", NULL);
        at += piece;
        dead = drain(&p, s, o, at) < 0;
    }
    if (!dead)
        o->pending = rr_pending(&p);
    rr_free(&p);
}

/* Fails when two parses of the same stream disagree. */
static void same(const outcome *a, const outcome *b, const char *how)
{
    if (a->commands != b->commands || a->b.len != b->b.len ||
        (a->b.len > 0 && memcmp(a->b.p, b->b.p, a->b.len) != 0))
        fail("different commands for a different split", how);
    if (a->error != b->error || strcmp(a->err, b->err) != 0)
        fail("a different ending for a different split", how);
    if (!a->error && a->pending != b->pending)
        fail("a different number of bytes left pending for a different split", how);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 5)
        return 0;
    static const long long max_bulk[4] = {RR_DEFAULT_MAX_BULK, 0, 5, 100};
    settings s = {data[0] & 1, max_bulk[(data[0] >> 1) & 3]};
    uint32_t seed = (uint32_t)data[1] | (uint32_t)data[2] << 8 | (uint32_t)data[3] << 16 |
                    (uint32_t)data[4] << 24;
    const uint8_t *stream = data + 5;
    size_t n = size - 5;

    outcome whole, bytes, chunks;
    parse(&s, stream, n, NULL, 0, &whole);

    /* Chunk sizes from a xorshift of the seed: mostly small, now and then a big one. */
    size_t sizes[32];
    uint32_t x = seed | 1;
    for (size_t i = 0; i < 32; i++) {
        x ^= x << 13;
        x ^= x >> 17;
        x ^= x << 5;
        sizes[i] = (x & 0x300) == 0x300 ? 1 + (x >> 16) % 4096 : 1 + (x >> 16) % 16;
    }
    parse(&s, stream, n, sizes, 32, &chunks);

    /* The "too big" verdicts hold only up to RR_INLINE_MAX buffered bytes; byte by byte
     * costs a scan per byte, so only for streams of reasonable size. */
    if (n <= RR_INLINE_MAX)
        same(&whole, &chunks, "chunks");
    if (n <= 16384) {
        static const size_t one = 1;
        parse(&s, stream, n, &one, 1, &bytes);
        same(&whole, &bytes, "byte by byte");
        wsi_buf_free(&bytes.b);
    }
    wsi_buf_free(&whole.b);
    wsi_buf_free(&chunks.b);
    return 0;
}
