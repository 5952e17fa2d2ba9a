/* reply.c -- replies: RESP2 bytes written the way Redis's networking.c writes them, the
 * parse of those bytes into the public reply tree, and the tree's encoding.
 *
 * Handlers append bytes to c->out.  The public API then either hands the bytes out as
 * they are (fr_exec_resp) or parses them in place into fr_reply nodes allocated from the
 * client's arena: strings point into c->out, whose '\r' terminators become '\0', so a
 * reply tree costs no copy of its strings. */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fr_int.h"
#include "reply_int.h"

/* ----- Writing --------------------------------------------------------------------- */

void fri_reply_raw(fr_client *c, const char *p, size_t len) { fri_buf_append(&c->out, p, len); }

void fri_reply_ok(fr_client *c) { fri_buf_append(&c->out, "+OK\r\n", 5); }

void fri_reply_status(fr_client *c, const char *status)
{
    size_t len = strlen(status);
    fri_buf *b = &c->out;
    fri_buf_reserve(b, len + 3);
    char *w = b->p + b->len;
    *w++ = '+';
    memcpy(w, status, len);
    w[len] = '\r';
    w[len + 1] = '\n';
    b->len += len + 3;
}

/* The error codes Redis puts first; any other text gets "ERR " in front, as Redis's
 * addReplyError does for a message without its own code. */
static const char *const error_codes[] = {
    "ERR", "WRONGTYPE", "EXECABORT", "CROSSSLOT", "BUSYGROUP", "NOGROUP", "OOM", "LOADING",
    "READONLY", "NOAUTH", "WRONGPASS", "NOPROTO", "MOVED", "ASK", "TRYAGAIN", "CLUSTERDOWN",
    "BUSY", "NOPERM", "BUSYKEY", "UNBLOCKED", "MASTERDOWN", "MISCONF", "NOREPLICAS",
    "NOSCRIPT", "UNKILLABLE", "NOTBUSY", "INVALIDOBJ", NULL,
};

static int starts_with_code(const char *err, size_t len)
{
    for (const char *const *code = error_codes; *code; code++) {
        size_t n = strlen(*code);
        if (len > n && memcmp(err, *code, n) == 0 && err[n] == ' ') return 1;
        if (len == n && memcmp(err, *code, n) == 0) return 1;
    }
    return 0;
}

/* Writes "-<text>\r\n"; CR and LF inside an error would break the protocol, so they become
 * spaces, as Redis does. */
void fri_reply_error_raw(fr_client *c, const char *err, size_t len)
{
    fri_buf *b = &c->out;
    fri_buf_append(b, "-", 1);
    size_t start = b->len;
    fri_buf_append(b, err, len);
    for (size_t i = start; i < b->len; i++)
        if (b->p[i] == '\r' || b->p[i] == '\n') b->p[i] = ' ';
    if (b->p) fri_stats_error(c->srv, b->p + start, b->len - start);
    fri_buf_append(b, "\r\n", 2);
}

static void reply_error_len(fr_client *c, const char *err, size_t len)
{
    if (!starts_with_code(err, len)) {
        fri_buf_append(&c->out, "-ERR ", 5);
        size_t start = c->out.len;
        fri_buf_append(&c->out, err, len);
        for (size_t i = start; i < c->out.len; i++)
            if (c->out.p[i] == '\r' || c->out.p[i] == '\n') c->out.p[i] = ' ';
        fri_stats_error(c->srv, "ERR", 3);
        fri_buf_append(&c->out, "\r\n", 2);
        return;
    }
    fri_reply_error_raw(c, err, len);
}

void fri_reply_error(fr_client *c, const char *err) { reply_error_len(c, err, strlen(err)); }

void fri_reply_errorf(fr_client *c, const char *fmt, ...)
{
    char small[512];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(small, sizeof(small), fmt, ap);
    va_end(ap);
    if (n < 0) return;
    if ((size_t)n < sizeof(small)) {
        reply_error_len(c, small, (size_t)n);
        return;
    }
    char *big = fri_malloc((size_t)n + 1);
    if (!big) {
        reply_error_len(c, small, sizeof(small) - 1);
        return;
    }
    va_start(ap, fmt);
    vsnprintf(big, (size_t)n + 1, fmt, ap);
    va_end(ap);
    reply_error_len(c, big, (size_t)n);
    fri_free(big);
}

static void reply_prefixed_ll(fr_client *c, char prefix, long long v)
{
    if (v >= 0 && v < 10) { /* array headers and small integers: no call, no copy */
        fri_buf *b = &c->out;
        fri_buf_reserve(b, 4);
        char *w = b->p + b->len;
        w[0] = prefix;
        w[1] = (char)('0' + v);
        w[2] = '\r';
        w[3] = '\n';
        b->len += 4;
        return;
    }
    /* the digits straight into the buffer: 20 digits, a sign and the NUL fit in 24 */
    fri_buf *b = &c->out;
    fri_buf_reserve(b, 28);
    char *w = b->p + b->len;
    *w++ = prefix;
    w += fri_ll2string(w, 24, v);
    *w++ = '\r';
    *w++ = '\n';
    b->len = (size_t)(w - b->p);
}

void fri_reply_ll(fr_client *c, long long v) { reply_prefixed_ll(c, ':', v); }

void fri_reply_bulk(fr_client *c, const char *p, size_t len)
{
    fri_buf *b = &c->out;
    if (b->cap - b->len < len + 32) fri_buf_reserve(b, len + 32); /* the call is rarely needed */
    char *w = b->p + b->len;
    *w++ = '$';
    if (len < 10) { /* most bulk strings are short: their length takes no call */
        *w++ = (char)('0' + len);
    } else if (len < 100) {
        *w++ = (char)('0' + len / 10);
        *w++ = (char)('0' + len % 10);
    } else {
        w += fri_ll2string(w, 24, (long long)len);
    }
    *w++ = '\r';
    *w++ = '\n';
    if (len) memcpy(w, p, len);
    w += len;
    *w++ = '\r';
    *w++ = '\n';
    b->len = (size_t)(w - b->p);
}

void fri_reply_bulk_str(fr_client *c, const fri_str *s) { fri_reply_bulk(c, s->buf, s->len); }
void fri_reply_bulk_cstr(fr_client *c, const char *s) { fri_reply_bulk(c, s, strlen(s)); }

void fri_reply_bulk_small(fr_client *c, const char tmp[FRI_REPLY_SMALL], size_t len)
{
    fri_buf *b = &c->out;
    fri_buf_reserve(b, FRI_REPLY_SMALL + 8);
    char *w = b->p + b->len;
    *w++ = '$';
    if (len >= 10) *w++ = (char)('0' + len / 10);
    *w++ = (char)('0' + len % 10);
    *w++ = '\r';
    *w++ = '\n';
    memcpy(w, tmp, FRI_REPLY_SMALL); /* a fixed size: a few moves instead of a call */
    w += len;
    *w++ = '\r';
    *w++ = '\n';
    b->len = (size_t)(w - b->p);
}

void fri_reply_bulk_ll(fr_client *c, long long v)
{
    if (v >= 0 && v < 10000) { /* counts mostly: "$<n>\r\n<digits>\r\n" without a call */
        fri_buf *b = &c->out;
        fri_buf_reserve(b, 10);
        char *w = b->p + b->len;
        int n = v < 10 ? 1 : v < 100 ? 2 : v < 1000 ? 3 : 4;
        w[0] = '$';
        w[1] = (char)('0' + n);
        w[2] = '\r';
        w[3] = '\n';
        for (int i = n - 1; i >= 0; i--) {
            w[4 + i] = (char)('0' + v % 10);
            v /= 10;
        }
        w[4 + n] = '\r';
        w[5 + n] = '\n';
        b->len += (size_t)n + 6;
        return;
    }
    char tmp[FRI_REPLY_SMALL];
    fri_reply_bulk_small(c, tmp, fri_ll2string(tmp, sizeof(tmp), v));
}

void fri_reply_double(fr_client *c, double d)
{
    char tmp[64];
    fri_reply_bulk(c, tmp, fri_d2string(tmp, sizeof(tmp), d));
}

void fri_reply_nil(fr_client *c) { fri_buf_append(&c->out, "$-1\r\n", 5); }
void fri_reply_null_array(fr_client *c) { fri_buf_append(&c->out, "*-1\r\n", 5); }
void fri_reply_empty_array(fr_client *c) { fri_buf_append(&c->out, "*0\r\n", 4); }
void fri_reply_empty_scan(fr_client *c)
{
    fri_buf_append(&c->out, "*2\r\n$1\r\n0\r\n*0\r\n", 15);
}
void fri_reply_help(fr_client *c, const char *const *lines)
{
    /* the command as typed, upper-cased, up to a NUL (Redis's sdsnew of argv[0]) */
    char name[64], head[128];
    size_t n = strnlen(c->argv[0].ptr, c->argv[0].len);
    if (n > sizeof(name) - 1) n = sizeof(name) - 1;
    for (size_t i = 0; i < n; i++) {
        char ch = c->argv[0].ptr[i];
        name[i] = (ch >= 'a' && ch <= 'z') ? (char)(ch - 32) : ch;
    }
    name[n] = '\0';
    snprintf(head, sizeof(head), "%s <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
             name);
    long count = 0;
    while (lines[count]) count++;
    fri_reply_array_len(c, count + 3);
    fri_reply_status(c, head);
    for (long i = 0; i < count; i++) fri_reply_status(c, lines[i]);
    fri_reply_status(c, "HELP");
    fri_reply_status(c, "    Prints this help.");
}

void fri_reply_array_len(fr_client *c, long n) { reply_prefixed_ll(c, '*', n); }
void fri_reply_map_len(fr_client *c, long n) { reply_prefixed_ll(c, '*', n * 2); }
void fri_reply_set_len(fr_client *c, long n) { reply_prefixed_ll(c, '*', n); }

size_t fri_reply_deferred_len(fr_client *c) { return c->out.len; }

/* Inserts the header where the deferred length was reserved.  Set inner deferred lengths
 * before outer ones (the natural order), since an insertion moves what follows it. */
void fri_reply_set_deferred_len(fr_client *c, size_t handle, long n)
{
    char tmp[32];
    tmp[0] = '*';
    size_t len = 1 + fri_ll2string(tmp + 1, sizeof(tmp) - 3, n);
    tmp[len++] = '\r';
    tmp[len++] = '\n';
    fri_buf *b = &c->out;
    fri_buf_reserve(b, len);
    memmove(b->p + handle + len, b->p + handle, b->len - handle);
    memcpy(b->p + handle, tmp, len);
    b->len += len;
}

void fri_reply_set_deferred_map_len(fr_client *c, size_t handle, long n)
{
    fri_reply_set_deferred_len(c, handle, n * 2);
}

void fri_reply_arity_error(fr_client *c)
{
    fri_reply_errorf(c, "ERR wrong number of arguments for '%s' command", c->cmd->name);
}

/* ----- The arena -------------------------------------------------------------------- */

typedef struct arena_chunk {
    struct arena_chunk *next;
    size_t used, cap;
    _Alignas(16) unsigned char data[];
} arena_chunk;

/* Every fr_exec allocates its reply nodes here, so the common case (room in the current
 * chunk) is kept small enough to inline into the parser; growing is out of line. */
static void *arena_grow(fr_client *c, size_t size);

static inline void *arena_alloc(fr_client *c, size_t size)
{
    size = (size + 15) & ~(size_t)15;
    arena_chunk *ch = c->arena;
    if (!ch || ch->cap - ch->used < size) return arena_grow(c, size);
    void *p = ch->data + ch->used;
    ch->used += size;
    return p;
}

void *fri_arena_alloc(fr_client *c, size_t size) { return arena_alloc(c, size); }

/* Starts a new chunk big enough for size (already rounded) and allocates from it.  The
 * first chunk is small and each next one twice the last, so a client settles on what its
 * replies need: most clients (a consumer's connections, a test's) never need more than a
 * kilobyte, and thousands of them made and dropped must not touch fresh pages each time. */
static void *arena_grow(fr_client *c, size_t size)
{
    arena_chunk *ch = c->arena;
    size_t cap = size > 1024 ? size : 1024;
    if (ch && ch->cap * 2 > cap && ch->cap < (1u << 24)) cap = ch->cap * 2;
    if (cap < size) cap = size;
    arena_chunk *n = fri_malloc(sizeof(*n) + cap);
    if (!n) return NULL;
    n->next = ch;
    n->used = size;
    n->cap = cap;
    c->arena = n;
    return n->data;
}

/* Keeps the newest (largest) chunk for reuse and frees the rest. */
void fri_arena_reset(fr_client *c)
{
    arena_chunk *ch = c->arena;
    if (!ch) return;
    arena_chunk *rest = ch->next;
    ch->next = NULL;
    ch->used = 0;
    while (rest) {
        arena_chunk *n = rest->next;
        fri_free(rest);
        rest = n;
    }
}

void fri_arena_free(fr_client *c)
{
    fri_arena_reset(c);
    fri_free(c->arena);
    c->arena = NULL;
}

/* ----- Parsing c->out into a tree ------------------------------------------------------ */

static long long parse_line_ll(char **pp)
{
    char *p = *pp;
    int neg = 0;
    unsigned long long v = 0; /* unsigned: LLONG_MIN's digits do not fit a long long */
    if (*p == '-') {
        neg = 1;
        p++;
    }
    while (*p != '\r') v = v * 10 + (unsigned long long)(*p++ - '0');
    *pp = p + 2;
    return neg ? (long long)(0ULL - v) : (long long)v;
}

/* A reply of a scalar kind, every field set (no memset: this runs once per node). */
static inline void set_node(fr_reply *r, fr_reply_type type, long long integer, const char *str,
                            size_t len)
{
    r->type = type;
    r->integer = integer;
    r->str = str;
    r->len = len;
    r->elements = NULL;
    r->count = 0;
}

static int parse_one(fr_client *c, char **pp, fr_reply *r);

/* Parses one reply at *pp (bytes the fake itself wrote, so well formed) into r when it is
 * a bulk string, an integer or a status, the common nodes: 1 if it was, 0 if not (then
 * nothing was read).  Inline in every loop, so that most nodes take no call. */
static inline int parse_common(char **pp, fr_reply *r)
{
    char *p = *pp;
    char kind = *p++;
    if (kind == '$' && *p != '-') {
        size_t n = 0;
        while (*p != '\r') n = n * 10 + (size_t)(*p++ - '0');
        p += 2;
        set_node(r, FR_REPLY_BULK, 0, p, n);
        p[n] = '\0';
        *pp = p + n + 2;
        return 1;
    }
    if (kind == ':') {
        set_node(r, FR_REPLY_INTEGER, parse_line_ll(&p), NULL, 0);
        *pp = p;
        return 1;
    }
    if (kind == '+') {
        char *e = p;
        while (*e != '\r') e++; /* status texts never hold a CR (see above) */
        set_node(r, FR_REPLY_STATUS, 0, p, (size_t)(e - p));
        *e = '\0';
        *pp = e + 2;
        return 1;
    }
    return 0;
}

/* An array at *pp whose count is one digit (a pair in a reply that lists pairs:
 * XPENDING's consumers, an entry and its fields in XREADGROUP's), parsed here without a
 * call for itself: 1 if it was one, 0 if not (nothing read), -1 when the arena cannot
 * grow. */
static inline int parse_small_array(fr_client *c, char **pp, fr_reply *r)
{
    char *p = *pp;
    if (p[0] != '*' || p[1] < '1' || p[1] > '9' || p[2] != '\r') return 0;
    size_t n = (size_t)(p[1] - '0');
    fr_reply *el = arena_alloc(c, sizeof(fr_reply) * n);
    if (!el) return -1;
    set_node(r, FR_REPLY_ARRAY, 0, NULL, 0);
    r->count = n;
    r->elements = el;
    *pp = p + 4;
    for (size_t i = 0; i < n; i++)
        if (!parse_common(pp, &el[i]) && parse_one(c, pp, &el[i]) < 0) return -1;
    return 1;
}

/* Parses any one reply at *pp into r: -1 when the arena cannot grow. */
static int parse_one(fr_client *c, char **pp, fr_reply *r)
{
    if (parse_common(pp, r)) return 0;
    char *p = *pp;
    char kind = *p++;
    switch (kind) {
    case '-': {
        char *e = p;
        while (*e != '\r') e++; /* error texts never hold a CR (see above) */
        set_node(r, FR_REPLY_ERROR, 0, p, (size_t)(e - p));
        *e = '\0';
        *pp = e + 2;
        return 0;
    }
    case '$': /* "$-1": a nil */
        set_node(r, FR_REPLY_NIL, 0, NULL, 0);
        *pp = p + 4;
        return 0;
    /* RESP3, which only a script's reply to a RESP3 client holds: seen as its RESP2 form
     * (a null bulk, :1/:0, a bulk of the number or text, a flat array) */
    case '_':
        set_node(r, FR_REPLY_NIL, 0, NULL, 0);
        *pp = p + 2;
        return 0;
    case '#':
        set_node(r, FR_REPLY_INTEGER, *p == 't', NULL, 0);
        *pp = p + 3;
        return 0;
    case ',':
    case '(': {
        char *e = p;
        while (*e != '\r') e++;
        set_node(r, FR_REPLY_BULK, 0, p, (size_t)(e - p));
        *e = '\0';
        *pp = e + 2;
        return 0;
    }
    case '=': {
        long long n = parse_line_ll(&p);
        set_node(r, FR_REPLY_BULK, 0, p + 4, (size_t)n - 4); /* past "txt:" */
        p[n] = '\0';
        *pp = p + n + 2;
        return 0;
    }
    case '%':
    case '~':
    case '*': {
        long long n = parse_line_ll(&p);
        *pp = p;
        if (n < 0) {
            set_node(r, FR_REPLY_NIL_ARRAY, 0, NULL, 0);
            return 0;
        }
        if (kind == '%') n *= 2;
        set_node(r, FR_REPLY_ARRAY, 0, NULL, 0);
        r->count = (size_t)n;
        if (n == 0) return 0;
        fr_reply *el = arena_alloc(c, sizeof(fr_reply) * (size_t)n);
        if (!el) return -1;
        for (long long i = 0; i < n; i++) {
            if (parse_common(pp, &el[i])) continue;
            int small = parse_small_array(c, pp, &el[i]);
            if (small < 0 || (!small && parse_one(c, pp, &el[i]) < 0)) return -1;
        }
        r->elements = el;
        return 0;
    }
    default:
        return -1;
    }
}

static const fr_reply oom_reply = {
    .type = FR_REPLY_ERROR,
    .str = FRI_ERR_OOM,
    .len = sizeof(FRI_ERR_OOM) - 1,
};

int fri_parse_replies(fr_client *c, size_t n, const fr_reply **out)
{
    char *p = c->out.p;
    fr_reply *r = n ? arena_alloc(c, sizeof(fr_reply) * n) : NULL;
    for (size_t i = 0; i < n; i++) {
        if (!r || parse_one(c, &p, &r[i]) < 0) {
            for (; i < n; i++) out[i] = &oom_reply;
            return -1;
        }
        out[i] = &r[i];
    }
    return 0;
}

const fr_reply *fri_parse_reply(fr_client *c)
{
    char *p = c->out.p;
    fr_reply *r = arena_alloc(c, sizeof(fr_reply));
    if (!r) return &oom_reply;
    if (!parse_common(&p, r) && parse_one(c, &p, r) < 0) return &oom_reply;
    return r;
}

/* ----- Encoding a tree ------------------------------------------------------------------ */

static void put(char *buf, size_t cap, size_t *pos, const char *p, size_t len)
{
    if (*pos < cap) memcpy(buf + *pos, p, len <= cap - *pos ? len : cap - *pos);
    *pos += len;
}

static void put_header(char *buf, size_t cap, size_t *pos, char kind, long long v)
{
    char tmp[40];
    tmp[0] = kind;
    size_t n = 1 + fri_ll2string(tmp + 1, sizeof(tmp) - 3, v);
    tmp[n++] = '\r';
    tmp[n++] = '\n';
    put(buf, cap, pos, tmp, n);
}

static void encode(const fr_reply *r, char *buf, size_t cap, size_t *pos)
{
    switch (r->type) {
    case FR_REPLY_STATUS:
    case FR_REPLY_ERROR:
        put(buf, cap, pos, r->type == FR_REPLY_STATUS ? "+" : "-", 1);
        put(buf, cap, pos, r->str, r->len);
        put(buf, cap, pos, "\r\n", 2);
        break;
    case FR_REPLY_INTEGER: put_header(buf, cap, pos, ':', r->integer); break;
    case FR_REPLY_BULK:
        put_header(buf, cap, pos, '$', (long long)r->len);
        put(buf, cap, pos, r->str, r->len);
        put(buf, cap, pos, "\r\n", 2);
        break;
    case FR_REPLY_NIL: put(buf, cap, pos, "$-1\r\n", 5); break;
    case FR_REPLY_NIL_ARRAY: put(buf, cap, pos, "*-1\r\n", 5); break;
    case FR_REPLY_ARRAY:
        put_header(buf, cap, pos, '*', (long long)r->count);
        for (size_t i = 0; i < r->count; i++) encode(&r->elements[i], buf, cap, pos);
        break;
    }
}

size_t fr_reply_encode(const fr_reply *reply, char *buf, size_t cap)
{
    size_t pos = 0;
    encode(reply, buf, cap, &pos);
    return pos;
}

char *fr_reply_to_resp(const fr_reply *reply, size_t *len)
{
    size_t n = fr_reply_encode(reply, NULL, 0);
    char *buf = fri_malloc_plain(n + 1); /* the caller free()s it */
    if (!buf) return NULL;
    fr_reply_encode(reply, buf, n);
    buf[n] = '\0';
    if (len) *len = n;
    return buf;
}
