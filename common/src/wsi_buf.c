/* wsi_buf.c -- the growable text buffer of wsi_buf.h. */
#include "wsi_buf.h"

#include <limits.h>
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

/* ----- wsi_snprintf ------------------------------------------------------------------------ */

/* Where the formatted text goes: buf[0..size) keeps what fits, n counts all of it. */
typedef struct fmt_out {
    char *buf;
    size_t size;
    size_t n;
} fmt_out;

static void fmt_put(fmt_out *o, const char *p, size_t len)
{
    if (o->n + 1 < o->size) {
        size_t room = o->size - 1 - o->n;
        memcpy(o->buf + o->n, p, len < room ? len : room);
    }
    o->n += len;
}

/* v in decimal, zero-padded to width digits (width < 21). */
static void fmt_u64(fmt_out *o, uint64_t v, int negative, int width)
{
    char t[22];
    size_t k = sizeof t;
    do t[--k] = (char)('0' + v % 10);
    while ((v /= 10) != 0);
    while (k > 1 && (int)(sizeof t - k) < width - negative) t[--k] = '0';
    if (negative) t[--k] = '-';
    fmt_put(o, t + k, sizeof t - k);
}

static void fmt_signed(fmt_out *o, long long v, int width)
{
    fmt_u64(o, v < 0 ? (uint64_t)0 - (uint64_t)v : (uint64_t)v, v < 0, width);
}

int wsi_vsnprintf(char *buf, size_t size, const char *fmt, va_list ap)
{
    va_list whole;
    va_copy(whole, ap); /* for the C library, should fmt ask for more than this does */
    fmt_out o = {buf, size, 0};
    const char *f = fmt;
    while (*f) {
        if (*f != '%') {
            const char *pct = strchr(f, '%');
            size_t run = pct ? (size_t)(pct - f) : strlen(f);
            fmt_put(&o, f, run);
            f += run;
            continue;
        }
        f++;
        long prec = -1;
        int zeros = 0; /* %0Nd: the digits padded with zeros to N */
        if (f[0] == '0' && f[1] >= '1' && f[1] <= '9' && (f[2] < '0' || f[2] > '9')) {
            zeros = f[1] - '0';
            f += 2;
            if (*f == 's' || *f == 'c' || *f == '%') goto general;
        }
        if (f[0] == '.' && f[1] == '*') {
            prec = va_arg(ap, int);
            f += 2;
            if (*f != 's') goto general;
        }
        int longs = 0, size_t_arg = 0;
        while (*f == 'l') longs++, f++;
        if (*f == 'z') size_t_arg = 1, f++;
        switch (*f) {
        case '%':
            if (longs || size_t_arg) goto general;
            fmt_put(&o, "%", 1);
            break;
        case 's': {
            if (longs || size_t_arg) goto general;
            const char *s = va_arg(ap, const char *);
            if (!s) goto general; /* the C library's "(null)" */
            size_t len = prec >= 0 ? strnlen(s, (size_t)prec) : strlen(s);
            fmt_put(&o, s, len);
            break;
        }
        case 'c': {
            if (longs || size_t_arg) goto general;
            char ch = (char)va_arg(ap, int);
            fmt_put(&o, &ch, 1);
            break;
        }
        case 'd':
        case 'i':
            if (size_t_arg) goto general;
            if (longs == 0) fmt_signed(&o, va_arg(ap, int), zeros);
            else if (longs == 1) fmt_signed(&o, va_arg(ap, long), zeros);
            else fmt_signed(&o, va_arg(ap, long long), zeros);
            break;
        case 'u':
            if (size_t_arg) fmt_u64(&o, va_arg(ap, size_t), 0, zeros);
            else if (longs == 0) fmt_u64(&o, va_arg(ap, unsigned), 0, zeros);
            else if (longs == 1) fmt_u64(&o, va_arg(ap, unsigned long), 0, zeros);
            else fmt_u64(&o, va_arg(ap, unsigned long long), 0, zeros);
            break;
        default:
            goto general;
        }
        f++;
    }
    va_end(whole);
    if (size) buf[o.n < size ? o.n : size - 1] = '\0';
    return o.n > INT_MAX ? -1 : (int)o.n;
general: {
    int n = vsnprintf(buf, size, fmt, whole);
    va_end(whole);
    return n;
}
}

int wsi_snprintf(char *buf, size_t size, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int n = wsi_vsnprintf(buf, size, fmt, ap);
    va_end(ap);
    return n;
}

int wsi_buf_printf(wsi_buf *b, const char *fmt, ...)
{
    char small[512];
    va_list ap;
    va_start(ap, fmt);
    int n = wsi_vsnprintf(small, sizeof small, fmt, ap);
    va_end(ap);
    if (n < 0) return 0; /* nothing printable: nothing added */
    if ((size_t)n < sizeof small) return wsi_buf_add(b, small, (size_t)n);
    char *q = wsi_buf_reserve(b, (size_t)n);
    if (!q) return -1;
    va_start(ap, fmt);
    wsi_vsnprintf(q, (size_t)n + 1, fmt, ap);
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
