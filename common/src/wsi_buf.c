/* wsi_buf.c -- the growable text buffer of wsi_buf.h. */
#include "wsi_buf.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void wsi_buf_room(wsi_buf *b, char *room, size_t size)
{
    b->p = room;
    b->len = 0;
    b->cap = size;
    b->oom = 0;
    b->room = 1;
    room[0] = '\0';
}

char *wsi_buf_reserve(wsi_buf *b, size_t n)
{
    if (b->oom) return NULL;
    if (n > SIZE_MAX / 2 - b->len) goto oom;
    if (b->len + n + 1 > b->cap) {
        size_t cap = b->cap ? b->cap * 2 : 256;
        while (cap < b->len + n + 1) cap *= 2;
        char *q;
        if (b->room) {
            q = wsi_malloc(cap);
            if (q) memcpy(q, b->p, b->len + 1);
        } else {
            q = wsi_realloc(b->p, cap);
        }
        if (!q) goto oom;
        if (!b->p) q[0] = '\0';
        b->p = q;
        b->cap = cap;
        b->room = 0;
    }
    return b->p + b->len;
oom:
    b->oom = 1;
    return NULL;
}

void wsi_buf_grew(wsi_buf *b, size_t n)
{
    b->len += n;
    b->p[b->len] = '\0';
}

int wsi_buf_add_grow(wsi_buf *b, const void *p, size_t len)
{
    char *q = wsi_buf_reserve(b, len);
    if (!q) return -1;
    if (len) memcpy(q, p, len);
    wsi_buf_grew(b, len);
    return 0;
}

int wsi_buf_puts(wsi_buf *b, const char *s) { return wsi_buf_add(b, s, strlen(s)); }

int wsi_buf_printf(wsi_buf *b, const char *fmt, ...)
{
    char small[512];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(small, sizeof small, fmt, ap);
    va_end(ap);
    if (n < 0) return 0; /* nothing printable: nothing added */
    if ((size_t)n < sizeof small) return wsi_buf_add(b, small, (size_t)n);
    char *q = wsi_buf_reserve(b, (size_t)n);
    if (!q) return -1;
    va_start(ap, fmt);
    vsnprintf(q, (size_t)n + 1, fmt, ap);
    va_end(ap);
    wsi_buf_grew(b, (size_t)n);
    return 0;
}

int wsi_buf_u64(wsi_buf *b, uint64_t v)
{
    char t[20];
    size_t n = sizeof t;
    do t[--n] = (char)('0' + v % 10);
    while ((v /= 10) != 0);
    return wsi_buf_add(b, t + n, sizeof t - n);
}

int wsi_buf_ll(wsi_buf *b, long long v)
{
    if (v >= 0) return wsi_buf_u64(b, (uint64_t)v);
    if (wsi_buf_add(b, "-", 1)) return -1;
    return wsi_buf_u64(b, (uint64_t)0 - (uint64_t)v);
}

void wsi_buf_clear(wsi_buf *b)
{
    b->len = 0;
    if (b->p) b->p[0] = '\0';
}

char *wsi_buf_take(wsi_buf *b)
{
    char *p;
    if (b->oom) p = NULL;
    else if (b->room || !b->p) p = wsi_memdup(b->p ? b->p : "", b->len);
    else p = b->p, b->p = NULL;
    wsi_buf_free(b);
    return p;
}

void wsi_buf_free(wsi_buf *b)
{
    if (!b->room) wsi_free(b->p);
    memset(b, 0, sizeof *b);
}
