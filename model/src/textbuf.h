/* textbuf.h -- a growable text buffer for fuzz/'s generator and shrinker (header only).
 * The reference model keeps its own on purpose: it shares no code with what it checks.
 * Out of memory aborts. */
#ifndef WSM_TEXTBUF_H
#define WSM_TEXTBUF_H

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct tbuf {
    char *p;
    size_t len, cap;
} tbuf;

static inline void tb_add(tbuf *b, const void *p, size_t n)
{
    if (b->len + n + 1 > b->cap) {
        size_t cap = b->cap ? b->cap : 256;
        while (cap < b->len + n + 1) cap *= 2;
        char *q = realloc(b->p, cap);
        if (!q) {
            fputs("fuzz: out of memory\n", stderr);
            abort();
        }
        b->p = q;
        b->cap = cap;
    }
    if (n) memcpy(b->p + b->len, p, n);
    b->len += n;
    b->p[b->len] = '\0';
}

static inline void tb_puts(tbuf *b, const char *s) { tb_add(b, s, strlen(s)); }

static inline void tb_printf(tbuf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static inline void tb_printf(tbuf *b, const char *fmt, ...)
{
    char tmp[1024];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(tmp, sizeof tmp, fmt, ap);
    va_end(ap);
    if (n < 0) return;
    if ((size_t)n < sizeof tmp) {
        tb_add(b, tmp, (size_t)n);
        return;
    }
    char *big = malloc((size_t)n + 1);
    if (!big) {
        fputs("fuzz: out of memory\n", stderr);
        abort();
    }
    va_start(ap, fmt);
    vsnprintf(big, (size_t)n + 1, fmt, ap);
    va_end(ap);
    tb_add(b, big, (size_t)n);
    free(big);
}

/* The text (never NULL), handed over: b is empty again. */
static inline char *tb_take(tbuf *b)
{
    if (!b->p) tb_add(b, "", 0);
    char *p = b->p;
    memset(b, 0, sizeof *b);
    return p;
}

#endif /* WSM_TEXTBUF_H */
