/* wsi_buf.h -- the one growable text buffer of wsim's own code (the engine, the scenario
 * library and tool, the model, the benchmarks, the fuzz targets, the tests' support).
 *
 * A zeroed wsi_buf is empty and owns nothing; wsi_buf_room starts one on the caller's
 * storage instead, so that short texts never touch the heap.  Appends keep the text
 * NUL-terminated.  Memory comes from wsi_alloc.h's family, so the test hook reaches it.
 *
 * Out of memory is sticky: the append that runs out returns -1, sets b->oom, and leaves
 * the text as it was; every later append does nothing and returns -1, and wsi_buf_take
 * gives NULL.  A caller that reports out of memory (the scenario library) checks once, at
 * the end.  A target that defines WSI_MODULE also has the x forms (wsi_buf_xadd ...),
 * which abort as wsi_xmalloc does instead. */
#ifndef WSI_BUF_H
#define WSI_BUF_H

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "wsi_alloc.h"

typedef struct wsi_buf {
    char *p;            /* the text, NUL-terminated; NULL until the first append */
    size_t len;         /* its bytes, the NUL not counted */
    size_t cap;         /* bytes at p */
    unsigned char oom;  /* an append ran out of memory: the text stops there */
    unsigned char room; /* p is the caller's storage (wsi_buf_room), not the heap */
} wsi_buf;

/* Starts b empty on room[0..size) (size >= 1); it moves to the heap when the text
 * outgrows it.  Such a buffer is never copied by value (p may point into the caller). */
void wsi_buf_room(wsi_buf *b, char *room, size_t size);
/* wsi_buf_add's path when the text does not fit (or out of memory came already). */
int wsi_buf_add_grow(wsi_buf *b, const void *p, size_t len);

/* Appends p[0..len).  0, or -1 when out of memory.  Inline while it fits: the engine and
 * the model append to texts at every step. */
static inline int wsi_buf_add(wsi_buf *b, const void *p, size_t len)
{
    if (b->oom || len >= b->cap - b->len) return wsi_buf_add_grow(b, p, len);
    if (len) memcpy(b->p + b->len, p, len);
    b->len += len;
    b->p[b->len] = '\0';
    return 0;
}
/* Appends s. */
int wsi_buf_puts(wsi_buf *b, const char *s);
/* Appends what printf would write. */
int wsi_buf_printf(wsi_buf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Appends v in decimal ("%llu", "%lld" without printf's machinery). */
int wsi_buf_u64(wsi_buf *b, uint64_t v);
int wsi_buf_ll(wsi_buf *b, long long v);
/* Room for n more bytes (and the NUL): where they go, or NULL when out of memory.  The
 * caller writes them and then calls wsi_buf_grew(b, n). */
char *wsi_buf_reserve(wsi_buf *b, size_t n);
/* Counts n bytes written at wsi_buf_reserve's pointer as text (and NUL-terminates). */
void wsi_buf_grew(wsi_buf *b, size_t n);
/* Empties the text, keeping the memory (and the out-of-memory mark). */
void wsi_buf_clear(wsi_buf *b);
/* The text, on the heap ("" when nothing was added), handed over (wsi_free() it): b is empty
 * again.  NULL when an append ran out of memory or the copy does (b is freed then). */
char *wsi_buf_take(wsi_buf *b);
/* Frees what b owns; b is empty again (and off the caller's room). */
void wsi_buf_free(wsi_buf *b);

/* snprintf, without the C library's machinery for what wsim's texts ask of it: %s, %.*s,
 * %c, %d, %i, %u with l, ll or z (zero-padded to one digit's width: %03lld), and %%.
 * Any other conversion, flag or width, or a NULL string, hands the whole format to
 * vsnprintf, so the result is always the C library's.  The engine and the model format a
 * few texts a step; snprintf's set-up was a twentieth of a fuzz_outcomes run
 * (docs/benchmarks.md, "Fuzzing"). */
int wsi_snprintf(char *buf, size_t size, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
int wsi_vsnprintf(char *buf, size_t size, const char *fmt, va_list ap)
    __attribute__((format(printf, 3, 0)));

#ifdef WSI_MODULE
/* The aborting forms: out of memory is "wsim: out of memory in WSI_MODULE" and abort(). */
static inline void wsi_buf_xadd(wsi_buf *b, const void *p, size_t len)
{
    if (wsi_buf_add(b, p, len)) wsi_oom(WSI_MODULE);
}

static inline void wsi_buf_xputs(wsi_buf *b, const char *s)
{
    if (wsi_buf_puts(b, s)) wsi_oom(WSI_MODULE);
}

#define wsi_buf_xprintf(b, ...) \
    ((void)(wsi_buf_printf((b), __VA_ARGS__) ? (wsi_oom(WSI_MODULE), 0) : 0))

static inline void wsi_buf_xu64(wsi_buf *b, uint64_t v)
{
    if (wsi_buf_u64(b, v)) wsi_oom(WSI_MODULE);
}

static inline void wsi_buf_xll(wsi_buf *b, long long v)
{
    if (wsi_buf_ll(b, v)) wsi_oom(WSI_MODULE);
}

static inline char *wsi_buf_xreserve(wsi_buf *b, size_t n)
{
    char *p = wsi_buf_reserve(b, n);
    if (!p) wsi_oom(WSI_MODULE);
    return p;
}

static inline char *wsi_buf_xtake(wsi_buf *b)
{
    char *p = wsi_buf_take(b);
    if (!p) wsi_oom(WSI_MODULE);
    return p;
}
#endif

#endif /* WSI_BUF_H */
