/* obuf.c -- output buffers and the reply writers: RESP2 or RESP3 by the connection's
 * protocol, in redis-server 7.0's exact forms. */
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "frs.h"
#include "resp_request.h"

void frs_obuf_append(frs_obuf *b, const void *p, size_t n)
{
    if (b->cap - b->len < n) {
        frs_obuf_compact(b);
        if (b->cap - b->len < n) {
            size_t cap = b->cap ? b->cap : 16 * 1024;
            while (cap - b->len < n) cap *= 2;
            char *np = b->failed ? NULL : realloc(b->p, cap);
            if (!np) { /* this connection closes (frs_conn_want_flush); the others go on */
                b->failed = 1;
                return;
            }
            b->p = np;
            b->cap = cap;
        }
    }
    memcpy(b->p + b->len, p, n);
    b->len += n;
}

size_t frs_obuf_pending(const frs_obuf *b) { return b->len - b->sent; }

void frs_obuf_compact(frs_obuf *b)
{
    if (b->sent == 0) return;
    if (b->sent == b->len) {
        b->dropped += b->len;
        b->sent = b->len = 0;
        if (b->cap > 1024 * 1024) { /* give back what a big reply made it grow to */
            free(b->p);
            b->p = NULL;
            b->cap = 0;
        }
        return;
    }
    /* Copy only when the written part is large against what is left. */
    if (b->sent >= b->len - b->sent) {
        memmove(b->p, b->p + b->sent, b->len - b->sent);
        b->dropped += b->sent;
        b->len -= b->sent;
        b->sent = 0;
    }
}

void frs_oom_abort(const char *what)
{
    fprintf(stderr, "fakeredis-server: out of memory in %s; aborting\n", what);
    abort();
}

void frs_obuf_free(frs_obuf *b)
{
    free(b->p);
    memset(b, 0, sizeof(*b));
}

int frs_string2ll(const char *s, size_t n, long long *out) { return rr_string2ll(s, n, out); }

void *frs_array_grow(void *arr, size_t *cap, size_t len, size_t size, size_t first_cap)
{
    if (len < *cap) return arr;
    size_t ncap = *cap ? 2 * *cap : first_cap;
    void *n = realloc(arr, ncap * size);
    if (!n) frs_oom_abort(__func__);
    *cap = ncap;
    return n;
}

char *frs_memdup(const char *p, size_t n)
{
    char *d = malloc(n + 1);
    if (!d) frs_oom_abort(__func__);
    memcpy(d, p, n);
    d[n] = '\0';
    return d;
}

/* ----- Reply writers --------------------------------------------------------------- */

void frs_reply_raw(frs_conn *c, const char *p, size_t n)
{
    if (c->close_after_reply || c->close_asap) return; /* as Redis: nothing after that */
    frs_obuf_append(&c->out, p, n);
}

/* <prefix><v>\r\n */
static void reply_prefixed(frs_conn *c, char prefix, long long v)
{
    char buf[32];
    int n = snprintf(buf, sizeof(buf), "%c%lld\r\n", prefix, v);
    frs_reply_raw(c, buf, (size_t)n);
}

void frs_reply_status(frs_conn *c, const char *s)
{
    frs_reply_raw(c, "+", 1);
    frs_reply_raw(c, s, strlen(s));
    frs_reply_raw(c, "\r\n", 2);
}

void frs_reply_ok(frs_conn *c) { frs_reply_raw(c, "+OK\r\n", 5); }

void frs_reply_error(frs_conn *c, const char *err)
{
    size_t n = strlen(err);
    char *copy = malloc(n + 3);
    if (!copy) {
        c->out.failed = 1; /* the connection closes, as when its buffer cannot grow */
        return;
    }
    copy[0] = '-';
    for (size_t i = 0; i < n; i++) copy[i + 1] = (err[i] == '\r' || err[i] == '\n') ? ' ' : err[i];
    memcpy(copy + n + 1, "\r\n", 2);
    frs_reply_raw(c, copy, n + 3);
    /* total_error_replies and errorstats count the server's errors with the fake's */
    if (c->srv->fake) fr_stats_record_error(c->srv->fake, copy + 1, n);
    free(copy);
}

void frs_reply_errorf(frs_conn *c, const char *fmt, ...)
{
    char buf[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof(buf), fmt, ap);
    va_end(ap);
    frs_reply_error(c, buf);
}

void frs_reply_ll(frs_conn *c, long long v) { reply_prefixed(c, ':', v); }

void frs_reply_bulk(frs_conn *c, const char *p, size_t n)
{
    reply_prefixed(c, '$', (long long)n);
    frs_reply_raw(c, p, n);
    frs_reply_raw(c, "\r\n", 2);
}

void frs_reply_bulk_cstr(frs_conn *c, const char *s)
{
    if (!s) frs_reply_null(c);
    else frs_reply_bulk(c, s, strlen(s));
}

void frs_reply_null(frs_conn *c)
{
    if (c->resp == 3) frs_reply_raw(c, "_\r\n", 3);
    else frs_reply_raw(c, "$-1\r\n", 5);
}

void frs_reply_array(frs_conn *c, long n) { reply_prefixed(c, '*', n); }

void frs_reply_map(frs_conn *c, long n)
{
    if (c->resp == 3) reply_prefixed(c, '%', n);
    else reply_prefixed(c, '*', 2 * n);
}

void frs_reply_set(frs_conn *c, long n) { reply_prefixed(c, c->resp == 3 ? '~' : '*', n); }

void frs_reply_double(frs_conn *c, double d)
{
    char num[64];
    if (isinf(d)) snprintf(num, sizeof(num), "%s", d > 0 ? "inf" : "-inf");
    else snprintf(num, sizeof(num), "%.17g", d);
    if (c->resp == 3) {
        frs_reply_raw(c, ",", 1);
        frs_reply_raw(c, num, strlen(num));
        frs_reply_raw(c, "\r\n", 2);
    } else {
        frs_reply_bulk(c, num, strlen(num));
    }
}

void frs_reply_verbatim(frs_conn *c, const char *p, size_t n)
{
    if (c->resp != 3) {
        frs_reply_bulk(c, p, n);
        return;
    }
    reply_prefixed(c, '=', (long long)n + 4);
    frs_reply_raw(c, "txt:", 4);
    frs_reply_raw(c, p, n);
    frs_reply_raw(c, "\r\n", 2);
}

void frs_reply_arity(frs_conn *c, const char *fullname)
{
    frs_reply_errorf(c, "ERR wrong number of arguments for '%s' command", fullname);
}
