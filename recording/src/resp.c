/* resp.c -- RESP2/RESP3 values: framing (wsr_resp_len) and trees (wsr_resp_parse).
 *
 * One recursive walk does both: with `out` NULL it only measures (and counts the nodes a
 * tree needs), with `out` it fills nodes from a block sized by the measuring walk.  An
 * aggregate's count is believed only as far as the bytes can hold it (every element takes
 * at least three bytes), so a claimed count never makes the walk loop or allocate beyond
 * the input. */
#include <stdlib.h>
#include <string.h>

#include "wsr_resp.h"

/* The walk's state: the input, and where nodes go when building. */
typedef struct walk {
    const char *p;       /* the bytes */
    size_t n;            /* how many */
    const char *why;     /* why the bytes are not RESP (static), when they are not */
    size_t nodes;        /* nodes counted (measuring) */
    wsr_value *next;     /* the next free node (building) */
} walk;

/* Results of the walk's steps. */
#define W_BAD (-1)       /* not RESP (w->why says why) */
#define W_MORE (-2)      /* a correct beginning, not ended yet */

static long long bad(walk *w, const char *why)
{
    w->why = why;
    return W_BAD;
}

/* The line starting at pos: its text [pos, *end) and the offset after its CRLF in *after.
 * 0, W_MORE, or W_BAD for a line that holds a lone CR or an LF. */
static long long line_at(walk *w, size_t pos, size_t *end, size_t *after)
{
    for (size_t i = pos; i < w->n; i++) {
        if (w->p[i] == '\n') return bad(w, "a line feed inside a line");
        if (w->p[i] != '\r') continue;
        if (i + 1 >= w->n) return W_MORE;
        if (w->p[i + 1] != '\n') return bad(w, "a carriage return not followed by a line feed");
        *end = i;
        *after = i + 2;
        return 0;
    }
    return W_MORE;
}

/* A decimal in p[0..len): optional '-', digits, no leading zero unless "0", in the long
 * long range.  1 if so. */
static int decimal(const char *p, size_t len, long long *out)
{
    size_t i = 0;
    int neg = 0;
    if (len && p[0] == '-') {
        neg = 1;
        i = 1;
    }
    if (i == len || len - i > 19) return 0;
    if (p[i] == '0' && len - i > 1) return 0;
    unsigned long long v = 0;
    for (; i < len; i++) {
        if (p[i] < '0' || p[i] > '9') return 0;
        unsigned long long d = (unsigned long long)(p[i] - '0');
        if (v > (9223372036854775808ull - d) / 10) return 0;
        v = v * 10 + d;
    }
    if (!neg && v > 9223372036854775807ull) return 0;
    if (neg && v == 0) return 0; /* "-0" */
    *out = neg ? (long long)(0 - v) : (long long)v;
    return 1;
}

static long long value_at(walk *w, size_t pos, int depth, wsr_value *out);

/* The elements of an aggregate: count values from pos into out->elements (building). */
static long long elements_at(walk *w, size_t pos, int depth, long long count, wsr_value *out)
{
    /* every element takes three bytes at least ("_\r\n"): a count the bytes cannot hold
     * has not ended yet */
    if ((unsigned long long)count > (w->n - pos) / 3) return W_MORE;
    wsr_value *els = NULL;
    if (out) {
        els = w->next;
        w->next += count;
        out->elements = count ? els : NULL;
        out->count = (size_t)count;
    } else {
        w->nodes += (size_t)count;
    }
    for (long long k = 0; k < count; k++) {
        long long r = value_at(w, pos, depth + 1, els ? &els[k] : NULL);
        if (r < 0) return r;
        pos = (size_t)r;
    }
    return (long long)pos;
}

/* One value starting at pos (depth: its nesting); the offset after it, W_MORE or W_BAD.
 * out: the node to fill, or NULL when measuring. */
static long long value_at(walk *w, size_t pos, int depth, wsr_value *out)
{
    if (depth > WSR_RESP_MAX_DEPTH) return bad(w, "nested too deep");
    if (pos >= w->n) return W_MORE;
    char type = w->p[pos];
    size_t end, after;
    long long r = line_at(w, pos + 1, &end, &after);
    if (r < 0) return r;
    const char *text = w->p + pos + 1;
    size_t tlen = end - pos - 1;
    if (out) {
        memset(out, 0, sizeof *out);
        out->type = type;
    }
    long long num = 0;
    switch (type) {
    case '+': case '-': case ',':
        if (out) {
            out->str = text;
            out->len = tlen;
        }
        return (long long)after;
    case ':':
        if (!decimal(text, tlen, &num)) return bad(w, "an integer that is not a decimal");
        if (out) {
            out->integer = num;
            out->str = text;
            out->len = tlen;
        }
        return (long long)after;
    case '(': {
        size_t i = tlen && text[0] == '-' ? 1 : 0;
        if (i == tlen) return bad(w, "a big number that is not a decimal");
        for (; i < tlen; i++)
            if (text[i] < '0' || text[i] > '9') return bad(w, "a big number that is not a decimal");
        if (out) {
            out->str = text;
            out->len = tlen;
        }
        return (long long)after;
    }
    case '_':
        if (tlen) return bad(w, "a null with text after '_'");
        return (long long)after;
    case '#':
        if (tlen != 1 || (text[0] != 't' && text[0] != 'f')) return bad(w, "a boolean that is not t or f");
        if (out) out->integer = text[0] == 't';
        return (long long)after;
    case '$': case '!': case '=': {
        if (!decimal(text, tlen, &num) || num < -1 || (num == -1 && type != '$'))
            return bad(w, "a bulk length that is not a length");
        if (num == -1) {
            if (out) out->nil = 1;
            return (long long)after;
        }
        if ((unsigned long long)num > w->n - after || w->n - after - (size_t)num < 2)
            return W_MORE;
        size_t stop = after + (size_t)num;
        if (w->p[stop] != '\r' || w->p[stop + 1] != '\n')
            return bad(w, "a bulk string not followed by CRLF");
        if (type == '=' && (num < 4 || w->p[after + 3] != ':'))
            return bad(w, "a verbatim string without its 3-letter format and ':'");
        if (out) {
            out->str = w->p + after;
            out->len = (size_t)num;
        }
        return (long long)stop + 2;
    }
    case '*': case '~': case '>': case '%': case '|': {
        if (!decimal(text, tlen, &num) || num < -1 || (num == -1 && type != '*'))
            return bad(w, "an aggregate count that is not a count");
        if (num == -1) {
            if (out) out->nil = 1;
            return (long long)after;
        }
        int pairs = type == '%' || type == '|';
        if (pairs && (unsigned long long)num > (w->n - after) / 6) return W_MORE;
        long long count = pairs ? num * 2 : num;
        if (type != '|') return elements_at(w, after, depth, count, out);
        /* an attribute: a map, then the value it describes, framed as one; the tree keeps
         * the value, with the attribute hung on it */
        wsr_value *attr = NULL;
        if (out) {
            attr = w->next++;
            memset(attr, 0, sizeof *attr);
            attr->type = '|';
        } else {
            w->nodes++;
        }
        r = elements_at(w, after, depth, count, attr);
        if (r < 0) return r;
        r = value_at(w, (size_t)r, depth + 1, out);
        if (r >= 0 && out) out->attribute = attr;
        return r;
    }
    default:
        return bad(w, "an unknown type byte");
    }
}

long long wsr_resp_len(const char *p, size_t n, const char **why)
{
    walk w = {p, n, NULL, 1, NULL};
    long long r = value_at(&w, 0, 0, NULL);
    if (r == W_MORE) return 0;
    if (r == W_BAD && why) *why = w.why;
    return r < 0 ? -1 : r;
}

int wsr_resp_whole(const char *p, size_t n, const char **why, size_t *at)
{
    size_t pos = 0;
    while (pos < n) {
        walk w = {p + pos, n - pos, NULL, 1, NULL};
        long long r = value_at(&w, 0, 0, NULL);
        if (r < 0) {
            if (why) *why = r == W_MORE ? "a value that does not end" : w.why;
            if (at) *at = pos;
            return 0;
        }
        pos += (size_t)r;
    }
    return 1;
}

wsr_value *wsr_resp_parse(const char *p, size_t n, size_t *used, int *oom)
{
    if (oom) *oom = 0;
    walk w = {p, n, NULL, 1, NULL};
    long long r = value_at(&w, 0, 0, NULL);
    if (r < 0) return NULL;
    wsr_value *nodes = calloc(w.nodes, sizeof *nodes);
    if (!nodes) {
        if (oom) *oom = 1;
        return NULL;
    }
    walk b = {p, n, NULL, 0, nodes + 1};
    value_at(&b, 0, 0, nodes);
    if (used) *used = (size_t)r;
    return nodes;
}
