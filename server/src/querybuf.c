/* querybuf.c -- the sizes Redis's query buffer would have, for CLIENT LIST's qbuf-free.
 *
 * The server's own buffer (resp_request.c) grows and shrinks by its own rules; what
 * CLIENT LIST shows is Redis 7.0.15's: readQueryFromClient grows the sds non-greedily to
 * 16 KiB (PROTO_IOBUF_LEN) for a first read or a big argument, greedily (doubling below
 * 1 MiB) after that; a big argument that ends the buffer leaves a fresh buffer of its size
 * (processMultibulkBuffer); clientsCronResizeQueryBuffer, ten times a second, frees the
 * spare room of a client idle more than 2 s and trims a buffer over 32 KiB to its last
 * peak when that is under half of it, when more than 4 KiB are spare.  The model runs on
 * the server's clock (fr_clock_now), the cron's ticks at multiples of 100 ms of it, applied
 * lazily: before each read and when CLIENT LIST / INFO looks.  Only sizes: jemalloc's size
 * classes (which round Redis's figures up) are not modelled. */
#include "frs.h"

#define IOBUF_LEN (16 * 1024)          /* PROTO_IOBUF_LEN */
#define RESIZE_THRESHOLD (32 * 1024)   /* PROTO_RESIZE_THRESHOLD */
#define SDS_MAX_PREALLOC (1024 * 1024) /* SDS_MAX_PREALLOC */
#define CRON_MS 100                    /* clientsCron's period at hz 10 */

/* The bytes Redis's buffer holds: what is not parsed yet. */
static size_t qb_len(const frs_conn *c) { return rr_pending(&c->in); }

/* One clientsCronResizeQueryBuffer at t (ms). */
static void cron_step(frs_conn *c, int64_t t)
{
    size_t len = qb_len(c), have, remaining;
    if (c->qb_alloc < len) c->qb_alloc = len;
    int in_bulk = rr_big_arg(&c->in, &have, &remaining);
    size_t bulk = in_bulk ? have + remaining - 2 : 0;
    if (c->qb_alloc - len > 4 * 1024) {
        if (t / 1000 - c->qb_seen_s > 2) {
            c->qb_alloc = len; /* sdsRemoveFreeSpace */
        } else if (c->qb_alloc > RESIZE_THRESHOLD && c->qb_alloc / 2 > c->qb_peak) {
            size_t resize = len > c->qb_peak ? len : c->qb_peak;
            if (in_bulk && resize < bulk) resize = bulk;
            c->qb_alloc = resize;
        }
    }
    c->qb_peak = len;
    if (in_bulk && bulk > c->qb_peak) c->qb_peak = bulk;
}

void frs_qb_catch_up(frs_conn *c)
{
    int64_t now = fr_clock_now(c->srv->fake);
    int64_t tick = now - now % CRON_MS;
    if (c->qb_tick == 0 || tick < c->qb_tick) c->qb_tick = tick; /* new, or a clock set back */
    if (tick == c->qb_tick) return;
    /* after two ticks nothing changes but what idleness does: the last tick shows it */
    int64_t n = (tick - c->qb_tick) / CRON_MS;
    cron_step(c, c->qb_tick + CRON_MS);
    if (n >= 2) cron_step(c, c->qb_tick + 2 * CRON_MS);
    if (n >= 3) cron_step(c, tick);
    c->qb_tick = tick;
}

void frs_qb_read(frs_conn *c, size_t before, size_t n)
{
    size_t have, remaining;
    if (rr_big_arg(&c->in, &have, &remaining)) {
        /* the buffer holds only the argument (Redis trimmed it when the header came) */
        size_t want = remaining ? remaining : IOBUF_LEN;
        if (c->qb_alloc < have + want) c->qb_alloc = have + want;
        before = have;
    } else if (c->qb_alloc < IOBUF_LEN) {
        if (c->qb_alloc < before + IOBUF_LEN) c->qb_alloc = before + IOBUF_LEN;
    } else if (c->qb_alloc < before + IOBUF_LEN) { /* sdsMakeRoomFor, greedy */
        size_t grown = before + IOBUF_LEN;
        c->qb_alloc = grown < SDS_MAX_PREALLOC ? 2 * grown : grown + SDS_MAX_PREALLOC;
    }
    if (c->qb_peak < before + n) c->qb_peak = before + n;
    frs_qb_touched(c);
}

void frs_qb_touched(frs_conn *c) { c->qb_seen_s = fr_clock_now(c->srv->fake) / 1000; }

void frs_qb_processed(frs_conn *c)
{
    size_t big = rr_take_big_done(&c->in);
    if (big) c->qb_alloc = big + 2; /* sdsnewlen(bulklen + 2), then cleared */
}

size_t frs_qb_free(frs_conn *c, size_t len)
{
    frs_qb_catch_up(c);
    return c->qb_alloc > len ? c->qb_alloc - len : 0;
}
