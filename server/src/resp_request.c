/* resp_request.c -- the RESP2 request parser (contract: resp_request.h).
 *
 * The parser keeps the bytes of the request being read in its own buffer and remembers
 * where each argument starts as an offset from the request's first byte, so the buffer
 * may grow or be compacted between reads without losing a half-read command.  A complete
 * multibulk command is handed out as views into that buffer: no copy. */
#include "resp_request.h"

#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fakeredis.h"

void rr_init(rr_parser *p)
{
    memset(p, 0, sizeof(*p));
    p->max_bulk_len = RR_DEFAULT_MAX_BULK;
    p->bulk_len = -1;
}

/* Frees the argument arrays (they grow again as needed). */
static void release_args(rr_parser *p)
{
    free(p->arg_off);
    free(p->arg_len);
    free(p->argv);
    p->arg_off = p->arg_len = NULL;
    p->argv = NULL;
    p->arg_cap = 0;
}

void rr_free(rr_parser *p)
{
    free(p->buf);
    release_args(p);
    free(p->scratch);
    rr_init(p);
}

size_t rr_read_size(const rr_parser *p)
{
    if (p->reqtype == '*' && p->mb_left && p->bulk_len >= RR_BIG_ARG) {
        size_t have = p->len - p->pos;
        size_t want = (size_t)p->bulk_len + 2;
        if (want > have) return want - have;
    }
    return RR_IOBUF_LEN;
}

char *rr_write_ptr(rr_parser *p, size_t n)
{
    if (p->start == p->len) p->start = p->pos = p->len = 0;
    if (p->cap - p->len >= n) return p->buf + p->len;
    if (p->start > 0) {
        /* Drop the consumed bytes; offsets are relative to start, so they survive. */
        memmove(p->buf, p->buf + p->start, p->len - p->start);
        p->len -= p->start;
        p->pos -= p->start;
        p->start = 0;
        if (p->cap - p->len >= n) return p->buf + p->len;
    }
    size_t cap = p->cap ? p->cap : RR_IOBUF_LEN;
    while (cap - p->len < n) {
        if (cap > SIZE_MAX / 2) return NULL;
        cap *= 2;
    }
    char *nb = realloc(p->buf, cap);
    if (!nb) return NULL;
    p->buf = nb;
    p->cap = cap;
    return p->buf + p->len;
}

void rr_commit(rr_parser *p, size_t n) { p->len += n; }

int rr_feed(rr_parser *p, const void *data, size_t n)
{
    char *w = rr_write_ptr(p, n);
    if (!w) return -1;
    if (n) memcpy(w, data, n);
    rr_commit(p, n);
    return 0;
}

int rr_argc(const rr_parser *p) { return (int)p->argc; }
const char *const *rr_argv(const rr_parser *p) { return p->argv; }
const size_t *rr_argvlen(const rr_parser *p) { return p->arg_len; }
const char *rr_error(const rr_parser *p) { return p->err; }
size_t rr_pending(const rr_parser *p) { return p->len - p->start; }

/* Makes room for at least n argument slots. */
static int reserve_args(rr_parser *p, size_t n)
{
    if (n <= p->arg_cap) return 0;
    size_t cap = p->arg_cap ? p->arg_cap : 16;
    while (cap < n) cap *= 2;
    size_t *off = realloc(p->arg_off, cap * sizeof(*off));
    if (off) p->arg_off = off;
    size_t *lens = realloc(p->arg_len, cap * sizeof(*lens));
    if (lens) p->arg_len = lens;
    const char **argv = realloc(p->argv, cap * sizeof(*argv));
    if (argv) p->argv = argv;
    if (!off || !lens || !argv) return -1;
    p->arg_cap = cap;
    return 0;
}

/* Records a protocol error and kills the parser. */
static rr_status fail(rr_parser *p, const char *what)
{
    snprintf(p->err, sizeof(p->err), "ERR Protocol error: %s", what);
    p->dead = 1;
    return RR_ERROR;
}

static rr_status fail_oom(rr_parser *p)
{
    snprintf(p->err, sizeof(p->err), "ERR out of memory");
    p->dead = 1;
    return RR_ERROR;
}

/* Redis's string2ll: an optional '-', then digits without a leading zero ("0" alone is
 * fine), nothing else, within the long long range.  1 on success. */
int rr_string2ll(const char *s, size_t n, long long *out)
{
    size_t i = 0;
    int neg = 0;
    unsigned long long v = 0;
    if (n == 0 || n > 20) return 0;
    if (n == 1 && s[0] == '0') {
        *out = 0;
        return 1;
    }
    if (s[0] == '-') {
        neg = 1;
        i = 1;
        if (n == 1) return 0;
    }
    if (s[i] < '1' || s[i] > '9') return 0;
    for (; i < n; i++) {
        if (s[i] < '0' || s[i] > '9') return 0;
        unsigned d = (unsigned)(s[i] - '0');
        if (v > (ULLONG_MAX - d) / 10) return 0;
        v = v * 10 + d;
    }
    if (neg) {
        if (v > (unsigned long long)LLONG_MAX + 1) return 0;
        *out = v == (unsigned long long)LLONG_MAX + 1 ? LLONG_MIN : -(long long)v;
    } else {
        if (v > (unsigned long long)LLONG_MAX) return 0;
        *out = (long long)v;
    }
    return 1;
}

/* The first '\r' in [from, len), or -1 when there is none before the end or a NUL byte
 * (Redis finds it with strchr on its NUL-terminated buffer, which stops at a NUL). */
static long find_cr(const rr_parser *p, size_t from)
{
    for (size_t i = from; i < p->len; i++) {
        if (p->buf[i] == '\r') return (long)i;
        if (p->buf[i] == '\0') return -1;
    }
    return -1;
}

static rr_status parse_multibulk(rr_parser *p)
{
    if (p->mb_left == 0) {
        long cr = find_cr(p, p->pos);
        if (cr < 0) {
            if (p->len - p->pos > RR_INLINE_MAX) return fail(p, "too big mbulk count string");
            return RR_AGAIN;
        }
        if ((size_t)cr + 1 >= p->len) return RR_AGAIN; /* the byte after '\r' */
        long long n;
        if (!rr_string2ll(p->buf + p->pos + 1, (size_t)cr - p->pos - 1, &n) || n > INT_MAX)
            return fail(p, "invalid multibulk length");
        if (n > RR_UNAUTH_MAX_ARGS && p->auth_required)
            return fail(p, "unauthenticated multibulk length");
        p->pos = (size_t)cr + 2;
        if (n <= 0) return RR_COMMAND; /* an empty command: argc stays 0 */
        p->mb_left = n;
        p->bulk_len = -1;
    }
    while (p->mb_left) {
        if (p->bulk_len == -1) {
            long cr = find_cr(p, p->pos);
            if (cr < 0) {
                if (p->len - p->pos > RR_INLINE_MAX)
                    return fail(p, "too big bulk count string");
                return RR_AGAIN;
            }
            if ((size_t)cr + 1 >= p->len) return RR_AGAIN;
            char c = p->buf[p->pos];
            if (c != '$') {
                char what[32];
                if (c == '\r' || c == '\n') c = ' '; /* Redis maps CR/LF in errors */
                snprintf(what, sizeof(what), "expected '$', got '%c'", c);
                return fail(p, what);
            }
            long long n;
            if (!rr_string2ll(p->buf + p->pos + 1, (size_t)cr - p->pos - 1, &n) || n < 0 ||
                n > p->max_bulk_len)
                return fail(p, "invalid bulk length");
            if (n > RR_UNAUTH_MAX_BULK && p->auth_required)
                return fail(p, "unauthenticated bulk length");
            p->pos = (size_t)cr + 2;
            p->bulk_len = n;
        }
        if (p->len - p->pos < (size_t)p->bulk_len + 2) return RR_AGAIN;
        if (reserve_args(p, p->argc + 1) < 0) return fail_oom(p);
        p->arg_off[p->argc] = p->pos - p->start;
        p->arg_len[p->argc] = (size_t)p->bulk_len;
        p->argc++;
        p->pos += (size_t)p->bulk_len + 2; /* the two bytes after it are not checked */
        /* a big argument that ended the buffer: Redis made it the object and gave the
         * client a fresh query buffer of its size (processMultibulkBuffer) */
        if (p->bulk_len >= RR_BIG_ARG && p->pos == p->len) p->big_done = (size_t)p->bulk_len;
        p->bulk_len = -1;
        p->mb_left--;
    }
    return RR_COMMAND;
}

static rr_status parse_inline(rr_parser *p)
{
    const char *from = p->buf + p->start;
    /* Redis finds the newline with strchr: a NUL byte before it hides it, and the
     * request waits (until the size limit below). */
    const char *nl = NULL;
    for (const char *q = from; q < p->buf + p->len && *q; q++)
        if (*q == '\n') {
            nl = q;
            break;
        }
    if (!nl) {
        if (p->len - p->start > RR_INLINE_MAX) return fail(p, "too big inline request");
        return RR_AGAIN;
    }
    size_t linelen = (size_t)(nl - from);
    p->pos = p->start + linelen + 1;
    if (linelen > 0 && nl[-1] == '\r') linelen--;
    if (linelen == 0) return RR_COMMAND;
    if (linelen > p->scratch_cap) {
        char *s = realloc(p->scratch, linelen);
        if (!s) return fail_oom(p);
        p->scratch = s;
        p->scratch_cap = linelen;
    }
    size_t max = linelen / 2 + 1;
    if (reserve_args(p, max) < 0) return fail_oom(p);
    int argc = rr_split_inline(from, linelen, p->scratch, p->arg_off, p->arg_len, max);
    if (argc < 0) return fail(p, "unbalanced quotes in request");
    p->argc = (size_t)argc;
    return RR_COMMAND;
}

rr_status rr_next(rr_parser *p)
{
    if (p->dead) return RR_ERROR;
    for (;;) {
        if (p->reqtype == 0) {
            if (p->start == p->len) {
                p->argc = 0;
                if (p->cap > 4 * RR_INLINE_MAX) {
                    /* An idle connection gives back what a big request made it grow to. */
                    free(p->buf);
                    p->buf = NULL;
                    p->cap = 0;
                }
                if (p->arg_cap > RR_KEEP_ARGS) release_args(p); /* and what a long one did */
                p->start = p->pos = p->len = 0;
                return RR_AGAIN;
            }
            p->reqtype = p->buf[p->start] == '*' ? '*' : 'i';
            p->pos = p->start;
            p->argc = 0;
            p->mb_left = 0;
            p->bulk_len = -1;
        }
        rr_status st = p->reqtype == '*' ? parse_multibulk(p) : parse_inline(p);
        if (st != RR_COMMAND) return st;
        size_t req = p->start;
        const char *base = p->reqtype == '*' ? p->buf + req : p->scratch;
        p->reqtype = 0;
        p->last_start = req;
        p->start = p->pos;
        if (p->argc == 0) continue;
        for (size_t i = 0; i < p->argc; i++) p->argv[i] = base + p->arg_off[i];
        return RR_COMMAND;
    }
}

int rr_big_arg(const rr_parser *p, size_t *have, size_t *remaining)
{
    if (p->reqtype != '*' || p->mb_left == 0 || p->bulk_len < RR_BIG_ARG) return 0;
    size_t got = p->len - p->pos, want = (size_t)p->bulk_len + 2;
    *have = got;
    *remaining = want > got ? want - got : 0;
    return 1;
}

size_t rr_take_big_done(rr_parser *p)
{
    size_t n = p->big_done;
    p->big_done = 0;
    return n;
}

void rr_unread(rr_parser *p)
{
    /* nothing was written since rr_next, so the request's bytes are where they were */
    p->start = p->pos = p->last_start;
    p->reqtype = 0;
}

int rr_split_inline(const char *line, size_t len, char *out, size_t *off, size_t *lens,
                    size_t max)
{
    return fr_split_args(line, len, out, off, lens, max);
}
