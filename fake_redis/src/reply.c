/* reply.c -- replies: RESP2 bytes written the way Redis's networking.c writes them, the
 * same replies built directly as the public reply tree, the parse of bytes into trees,
 * and the tree's encoding.
 *
 * Handlers write every reply through the fri_reply_* writers.  A call that hands out
 * bytes (fr_exec_resp, a server's connection) has them append RESP2 to c->out.  A call
 * that hands out a tree (fr_exec, fr_pipeline: c->tree) has them append fr_reply nodes
 * from the client's arena instead -- the nodes those bytes would parse to, strings copied
 * into the arena -- so no byte is written and none parsed back (docs/performance.md).
 * Arrays are frames on a stack: an array of known length is closed when its last element
 * comes, a deferred one when its length is set.  What cannot be written as nodes falls
 * back to bytes parsed in place: fri_reply_raw's chunks, a command that may block a
 * client that blocks, and a RESP3 client's whole call (its replies hold RESP3 types).
 *
 * With FAKEREDIS_CHECK_REPLIES set in the environment (the tests set it), every call
 * writes both, and its end checks that the tree encodes to exactly the bytes: the
 * writers' two forms cannot drift apart unseen. */
#include <assert.h>
#include <ctype.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fr_int.h"
#include "reply_int.h"

/* ----- The arena -------------------------------------------------------------------- */

typedef fri_arena_chunk arena_chunk;

/* Every fr_exec allocates its reply nodes here, so the common case (room in the current
 * chunk) is kept small enough to inline into the writers; growing is out of line.  A
 * chunk is filled from both ends: nodes (and other 8-byte multiples) from the top down,
 * so they stay aligned without arithmetic, and the strings of a tree packed from the
 * bottom up, so that a string may be copied with a fixed-size move past its end into the
 * free middle (arena_bytes_room). */
static void *arena_grow(fr_client *c, size_t size, int bytes);

static inline void *arena_alloc(fr_client *c, size_t size)
{
    arena_chunk *ch = c->arena;
    if (__builtin_expect(ch && ch->top - ch->used >= size, 1)) {
        ch->top -= size;
        return ch->data + ch->top;
    }
    return arena_grow(c, size, 0);
}

/* Room for size bytes of string at the bottom, not taken yet: the caller writes up to
 * size bytes and takes what it keeps (arena_bytes_take). */
static inline char *arena_bytes_room(fr_client *c, size_t size)
{
    arena_chunk *ch = c->arena;
    if (__builtin_expect(!ch || ch->top - ch->used < size, 0)) {
        if (!arena_grow(c, size, 1)) return NULL;
        ch = c->arena;
    }
    return (char *)ch->data + ch->used;
}

static inline void arena_bytes_take(fr_client *c, size_t size)
{
    ((arena_chunk *)c->arena)->used += size;
}

void *fri_arena_alloc(fr_client *c, size_t size)
{
    return arena_alloc(c, (size + 7) & ~(size_t)7); /* what follows stays aligned */
}

/* Starts a new chunk with room for size bytes, taken at its top (bytes: left free at its
 * bottom, for arena_bytes_room).  The first chunk is small and each next one twice the
 * last, so a client settles on what its replies need: most clients (a consumer's
 * connections, a test's) never need more than a kilobyte, and thousands of them made and
 * dropped must not touch fresh pages each time. */
static void *arena_grow(fr_client *c, size_t size, int bytes)
{
    arena_chunk *ch = c->arena;
    size_t cap = size > 1024 ? size : 1024;
    if (ch && ch->cap * 2 > cap && ch->cap < (1u << 24)) cap = ch->cap * 2;
    if (cap < size) cap = size;
    cap = (cap + 7) & ~(size_t)7;
    arena_chunk *n = fri_malloc(sizeof(*n) + cap);
    if (!n) return NULL;
    n->next = ch;
    n->cap = cap;
    n->used = 0;
    n->top = bytes ? cap : cap - size;
    c->arena = n;
    return n->data + n->top;
}

void fri_arena_free_older(fri_arena_chunk *ch)
{
    arena_chunk *rest = ch->next;
    ch->next = NULL;
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

/* ----- Trees ------------------------------------------------------------------------- */

/* Writing nodes happens inside a guarded call, where the family never fails (alloc.c):
 * an arena that cannot grow there is a bug of the fake. */
static void *tree_mem(void *p)
{
    if (__builtin_expect(!p, 0)) fri_mem_unguarded("a reply tree");
    return p;
}

/* A growing frame is full: twice the room (8 at first), what it holds moved along. */
static void tree_grow(fr_client *c, fri_tframe *f)
{
    size_t used = (size_t)(f->next - f->base), cap = (size_t)(f->end - f->base);
    cap = cap ? cap * 2 : 8;
    fr_reply *room = tree_mem(arena_alloc(c, cap * sizeof(*room)));
    if (used) memcpy(room, f->base, used * sizeof(*room));
    f->base = room;
    f->next = room + used;
    f->end = room + cap;
}

/* The node the next reply goes into: the innermost open array's next element (that array
 * is closed when it was its last).  Every open fixed frame has room: one that fills is
 * closed at once, before anything is nested in its last element. */
static inline fr_reply *tree_slot(fr_client *c)
{
    fri_tframe *f = c->ttop;
    if (__builtin_expect(f->next == f->end, 0)) tree_grow(c, f);
    fr_reply *r = f->next++;
    if (f->next == f->end && !f->base) c->ttop = f - 1;
    return r;
}

/* The frame stack is full: twice as deep. */
static fri_tframe *tree_deeper(fr_client *c)
{
    size_t depth = (size_t)(c->ttop - c->tframes), cap = c->tframes_cap * 2;
    fri_tframe *f = tree_mem(fri_realloc(c->tframes, cap * sizeof(*f)));
    c->tframes = f;
    c->tframes_cap = cap;
    c->tframes_end = f + cap;
    c->ttop = f + depth;
    return c->ttop + 1;
}

/* Opens a frame: over room for an array's n elements (base NULL: closed when full), or,
 * with base set, a deferred array's that grows (node: its node). */
static inline void tree_push(fr_client *c, fr_reply *el, size_t n, fr_reply *base,
                             fr_reply *node)
{
    fri_tframe *f = c->ttop + 1;
    if (__builtin_expect(f == c->tframes_end, 0)) f = tree_deeper(c);
    c->ttop = f;
    f->next = el;
    f->end = el + n;
    f->base = base;
    f->node = node;
}

static inline void tree_scalar(fr_reply *r, fr_reply_type type, long long integer,
                               const char *str, size_t len)
{
    *r = (fr_reply){type, integer, str, len, NULL, 0}; /* whole: wide stores */
}

/* A NUL-terminated copy of p[0..len) in the arena. */
static inline const char *tree_str(fr_client *c, const char *p, size_t len)
{
    char *s = tree_mem(arena_bytes_room(c, len + 1));
    if (len) memcpy(s, p, len);
    s[len] = '\0';
    arena_bytes_take(c, len + 1);
    return s;
}

static inline void tree_bulk(fr_client *c, const char *p, size_t len)
{
    fr_reply *r = tree_slot(c);
    tree_scalar(r, FR_REPLY_BULK, 0, tree_str(c, p, len), len);
}

/* An array header of n elements (n < 0: the nil array). */
static inline void tree_array(fr_client *c, long long n)
{
    fr_reply *r = tree_slot(c);
    if (n <= 0) {
        tree_scalar(r, n < 0 ? FR_REPLY_NIL_ARRAY : FR_REPLY_ARRAY, 0, NULL, 0);
        return;
    }
    fr_reply *el = tree_mem(arena_alloc(c, (size_t)n * sizeof(*el)));
    tree_scalar(r, FR_REPLY_ARRAY, 0, NULL, 0);
    r->elements = el;
    r->count = (size_t)n;
    tree_push(c, el, (size_t)n, NULL, NULL);
}

/* Parses bytes of replies into the tree: whole replies, or the headers of arrays whose
 * elements come after (fri_reply_raw's chunks, a fallback call's bytes).  The bytes are
 * copied into the arena, where the strings stay. */
static void tree_parse(fr_client *c, const char *bytes, size_t len);

static int check_env; /* FAKEREDIS_CHECK_REPLIES, read once */
static pthread_once_t check_once = PTHREAD_ONCE_INIT;
static void read_check_env(void)
{
    const char *v = getenv("FAKEREDIS_CHECK_REPLIES");
    check_env = v && *v && strcmp(v, "0") != 0;
}

int fri_reply_check_wanted(void)
{
    pthread_once(&check_once, read_check_env);
    return check_env;
}

int fri_tree_init(fr_client *c)
{
    c->tframes = fri_malloc(16 * sizeof(*c->tframes));
    if (!c->tframes) return -1;
    c->tframes_cap = 16;
    c->tframes_end = c->tframes + 16;
    c->tframes->node = NULL;
    c->tree_fast = !c->srv->check_replies;
    return 0;
}

void fri_tree_start(fr_client *c, size_t n)
{
    fri_tframe *f = c->ttop = c->tframes;
    fr_reply *room = n <= 2 ? c->tone : tree_mem(arena_alloc(c, n * sizeof(*room)));
    f->base = f->next = room;
    f->end = room + (n <= 2 ? 2 : n);
    c->tree = c->srv->check_replies ? FRI_TREE_AND_BYTES : FRI_TREE;
}

/* The tree's encoding is the bytes, or the process stops naming the command. */
static void tree_check(fr_client *c, const fr_reply *roots, size_t n)
{
    fri_buf enc = {0};
    for (size_t i = 0; i < n; i++) {
        size_t need = fr_reply_encode(&roots[i], NULL, 0);
        fri_buf_reserve(&enc, need + 1);
        fr_reply_encode(&roots[i], enc.p + enc.len, need);
        enc.len += need;
    }
    if (enc.len == c->out.len && (!enc.len || memcmp(enc.p, c->out.p, enc.len) == 0)) {
        fri_buf_free(&enc);
        return;
    }
    fprintf(stderr, "fakeredis: the reply tree of '%s' differs from its RESP2 bytes "
                    "(reply.c): the bytes\n%.*s\nthe tree\n%.*s\n",
            c->cmd ? c->cmd->name : "?", (int)c->out.len, c->out.p ? c->out.p : "",
            (int)enc.len, enc.p ? enc.p : "");
    abort();
}

void fri_tree_checked(fr_client *c, const fr_reply *roots, size_t n) { tree_check(c, roots, n); }

int fri_tree_pause(fr_client *c)
{
    int was = c->tree;
    c->tree = 0;
    return was;
}

void fri_tree_resume(fr_client *c, int was, size_t mark)
{
    if (!was) return;
    c->tree = was;
    tree_parse(c, c->out.p + mark, c->out.len - mark);
    if (c->tree != FRI_TREE_AND_BYTES) c->out.len = mark;
}

/* ----- Writing --------------------------------------------------------------------- */

void fri_reply_raw(fr_client *c, const char *p, size_t len)
{
    if (c->tree) {
        tree_parse(c, p, len);
        if (c->tree != FRI_TREE_AND_BYTES) return;
    }
    fri_buf_append(&c->out, p, len);
}

__attribute__((noinline)) static void reply_ok_any(fr_client *c)
{
    if (c->tree) {
        tree_scalar(tree_slot(c), FR_REPLY_STATUS, 0, "OK", 2);
        if (c->tree != FRI_TREE_AND_BYTES) return;
    }
    fri_buf_append(&c->out, "+OK\r\n", 5);
}

static void status_bytes(fr_client *c, const char *status, size_t len)
{
    fri_buf *b = &c->out;
    fri_buf_reserve(b, len + 3);
    char *w = b->p + b->len;
    *w++ = '+';
    memcpy(w, status, len);
    w[len] = '\r';
    w[len + 1] = '\n';
    b->len += len + 3;
}

void fri_reply_status(fr_client *c, const char *status)
{
    size_t len = strlen(status);
    if (c->tree) {
        fr_reply *r = tree_slot(c);
        tree_scalar(r, FR_REPLY_STATUS, 0, tree_str(c, status, len), len);
        if (c->tree != FRI_TREE_AND_BYTES) return;
    }
    status_bytes(c, status, len);
}

__attribute__((noinline)) static void reply_status_shared_any(fr_client *c, const char *status, size_t len)
{
    if (c->tree) {
        tree_scalar(tree_slot(c), FR_REPLY_STATUS, 0, status, len); /* no copy: it stays */
        if (c->tree != FRI_TREE_AND_BYTES) return;
    }
    status_bytes(c, status, len);
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

/* Writes "-<prefix><text>\r\n"; CR and LF inside an error would break the protocol, so
 * they become spaces, as Redis does.  Returns the text as written (prefix included), for
 * the statistics: in the arena when building a tree, else in c->out (valid until the
 * next write). */
static const char *write_error(fr_client *c, const char *prefix, size_t plen, const char *err,
                               size_t len)
{
    const char *text = NULL;
    if (c->tree) {
        char *t = tree_mem(arena_bytes_room(c, plen + len + 1));
        arena_bytes_take(c, plen + len + 1);
        memcpy(t, prefix, plen);
        if (len) memcpy(t + plen, err, len);
        t[plen + len] = '\0';
        for (size_t i = plen; i < plen + len; i++)
            if (t[i] == '\r' || t[i] == '\n') t[i] = ' ';
        tree_scalar(tree_slot(c), FR_REPLY_ERROR, 0, t, plen + len);
        text = t;
        if (c->tree != FRI_TREE_AND_BYTES) return text;
    }
    fri_buf *b = &c->out;
    fri_buf_reserve(b, 1 + plen + len + 2);
    b->p[b->len++] = '-';
    size_t start = b->len;
    memcpy(b->p + b->len, prefix, plen);
    if (len) memcpy(b->p + b->len + plen, err, len);
    b->len += plen + len;
    for (size_t i = start + plen; i < b->len; i++)
        if (b->p[i] == '\r' || b->p[i] == '\n') b->p[i] = ' ';
    if (!text) text = b->p + start;
    b->p[b->len++] = '\r';
    b->p[b->len++] = '\n';
    return text;
}

void fri_reply_error_raw(fr_client *c, const char *err, size_t len)
{
    const char *text = write_error(c, "", 0, err, len);
    fri_stats_error(c->srv, text, len);
}

void fri_reply_error_uncounted(fr_client *c, const char *err, size_t len)
{
    write_error(c, "", 0, err, len);
}

static void reply_error_len(fr_client *c, const char *err, size_t len)
{
    if (!starts_with_code(err, len)) {
        write_error(c, "ERR ", 4, err, len);
        fri_stats_error(c->srv, "ERR", 3);
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

__attribute__((noinline)) static void reply_ll_any(fr_client *c, long long v)
{
    if (c->tree) {
        tree_scalar(tree_slot(c), FR_REPLY_INTEGER, v, NULL, 0);
        if (c->tree != FRI_TREE_AND_BYTES) return;
    }
    reply_prefixed_ll(c, ':', v);
}

__attribute__((noinline)) static void reply_ll_digits_any(fr_client *c, long long v, const char *digits, size_t n)
{
    if (c->tree) {
        tree_scalar(tree_slot(c), FR_REPLY_INTEGER, v, NULL, 0);
        if (c->tree != FRI_TREE_AND_BYTES) return;
    }
    fri_buf *b = &c->out;
    fri_buf_reserve(b, n + 3);
    char *w = b->p + b->len;
    w[0] = ':';
    memcpy(w + 1, digits, n);
    w[n + 1] = '\r';
    w[n + 2] = '\n';
    b->len += n + 3;
}

__attribute__((noinline)) static void reply_bulk_any(fr_client *c, const char *p, size_t len)
{
    if (c->tree) {
        tree_bulk(c, p, len);
        if (c->tree != FRI_TREE_AND_BYTES) return;
    }
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

__attribute__((noinline)) static void reply_bulk_small_any(fr_client *c, const char tmp[FRI_REPLY_SMALL], size_t len)
{
    if (c->tree) {
        fr_reply *r = tree_slot(c);
        char *s = tree_mem(arena_bytes_room(c, FRI_REPLY_SMALL));
        memcpy(s, tmp, FRI_REPLY_SMALL); /* a fixed size: a few moves, no call */
        s[len] = '\0';
        arena_bytes_take(c, len + 1);
        tree_scalar(r, FR_REPLY_BULK, 0, s, len);
        if (c->tree != FRI_TREE_AND_BYTES) return;
    }
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


void fri_reply_double(fr_client *c, double d)
{
    char tmp[64];
    fri_reply_bulk(c, tmp, fri_d2string(tmp, sizeof(tmp), d));
}

/* A fixed reply: node for a tree, these bytes otherwise. */
__attribute__((noinline)) static void reply_fixed_any(fr_client *c, fr_reply_type type, const char *bytes, size_t n)
{
    if (c->tree) {
        tree_scalar(tree_slot(c), type, 0, NULL, 0);
        if (c->tree != FRI_TREE_AND_BYTES) return;
    }
    fri_buf_append(&c->out, bytes, n);
}

void fri_reply_empty_scan(fr_client *c)
{
    fri_reply_array_len(c, 2);
    fri_reply_bulk(c, "0", 1);
    fri_reply_empty_array(c);
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
    fri_reply_status_lit(c, "HELP");
    fri_reply_status_lit(c, "    Prints this help.");
}

__attribute__((noinline)) static void reply_array_len_any(fr_client *c, long n)
{
    if (c->tree) {
        tree_array(c, n);
        if (c->tree != FRI_TREE_AND_BYTES) return;
    }
    reply_prefixed_ll(c, '*', n);
}

/* ----- The writers' fast paths ---------------------------------------------------------
 * Bytes (no tree) are written in place when the buffer has room, a tree's node (FRI_TREE)
 * when everything is at hand -- the innermost frame has room, the arena has room, the
 * frame stack has room -- with no call but a last one (memcpy), so the function needs no
 * frame of its own; anything else (growing, long numbers, the check) goes to the general
 * form above, as a tail call. */

/* Room for n more bytes in c->out without growing it (NULL: none). */
static inline char *bytes_room(fr_client *c, size_t n)
{
    fri_buf *b = &c->out;
    return __builtin_expect(b->cap - b->len >= n, 1) ? b->p + b->len : NULL;
}

/* The next node into *r when the innermost frame has room for it: 1, or 0 (it must grow). */
static inline int tree_take(fr_client *c, fr_reply **r)
{
    fri_tframe *f = c->ttop;
    fr_reply *n = f->next;
    if (__builtin_expect(n == f->end, 0)) return 0;
    f->next = n + 1;
    if (n + 1 == f->end && !f->base) c->ttop = f - 1;
    *r = n;
    return 1;
}

/* Room for size bytes of string in the arena without growing it (NULL: none). */
static inline char *tree_room(fr_client *c, size_t size)
{
    arena_chunk *ch = c->arena;
    if (__builtin_expect(!ch || ch->top - ch->used < size, 0)) return NULL;
    return (char *)ch->data + ch->used;
}

void fri_reply_ok(fr_client *c)
{
    fr_reply *r;
    char *w;
    if (!c->tree && (w = bytes_room(c, 5))) {
        memcpy(w, "+OK\r\n", 5);
        c->out.len += 5;
        return;
    }
    if (c->tree == FRI_TREE && tree_take(c, &r)) {
        tree_scalar(r, FR_REPLY_STATUS, 0, "OK", 2);
        return;
    }
    reply_ok_any(c);
}

void fri_reply_status_shared(fr_client *c, const char *status, size_t len)
{
    fr_reply *r;
    char *w;
    if (!c->tree && (w = bytes_room(c, len + 3))) {
        w[0] = '+';
        w[len + 1] = '\r';
        w[len + 2] = '\n';
        c->out.len += len + 3;
        memcpy(w + 1, status, len); /* last: a tail call */
        return;
    }
    if (c->tree == FRI_TREE && tree_take(c, &r)) {
        tree_scalar(r, FR_REPLY_STATUS, 0, status, len);
        return;
    }
    reply_status_shared_any(c, status, len);
}

void fri_reply_ll(fr_client *c, long long v)
{
    fr_reply *r;
    char *w;
    if (!c->tree && v >= 0 && v < 10 && (w = bytes_room(c, 4))) {
        w[0] = ':';
        w[1] = (char)('0' + v);
        w[2] = '\r';
        w[3] = '\n';
        c->out.len += 4;
        return;
    }
    if (c->tree == FRI_TREE && tree_take(c, &r)) {
        tree_scalar(r, FR_REPLY_INTEGER, v, NULL, 0);
        return;
    }
    reply_ll_any(c, v);
}

void fri_reply_ll_digits(fr_client *c, long long v, const char *digits, size_t n)
{
    fr_reply *r;
    char *w;
    if (!c->tree && (w = bytes_room(c, n + 3))) {
        w[0] = ':';
        w[n + 1] = '\r';
        w[n + 2] = '\n';
        c->out.len += n + 3;
        memcpy(w + 1, digits, n); /* last: a tail call */
        return;
    }
    if (c->tree == FRI_TREE && tree_take(c, &r)) {
        tree_scalar(r, FR_REPLY_INTEGER, v, NULL, 0);
        return;
    }
    reply_ll_digits_any(c, v, digits, n);
}

void fri_reply_bulk(fr_client *c, const char *p, size_t len)
{
    char *s;
    fr_reply *r;
    if (!c->tree && len < 100 && (s = bytes_room(c, len + 7))) {
        size_t h = 2; /* "$" and the length's digits */
        s[0] = '$';
        if (len < 10) {
            s[1] = (char)('0' + len);
        } else {
            s[1] = (char)('0' + len / 10);
            s[2] = (char)('0' + len % 10);
            h = 3;
        }
        s[h] = '\r';
        s[h + 1] = '\n';
        char *d = s + h + 2;
        d[len] = '\r';
        d[len + 1] = '\n';
        c->out.len += h + 4 + len;
        memcpy(d, p, len); /* last: a tail call */
        return;
    }
    if (c->tree == FRI_TREE && (s = tree_room(c, len + 1)) && tree_take(c, &r)) {
        ((arena_chunk *)c->arena)->used += len + 1;
        s[len] = '\0';
        tree_scalar(r, FR_REPLY_BULK, 0, s, len);
        memcpy(s, p, len); /* last: a tail call */
        return;
    }
    reply_bulk_any(c, p, len);
}

void fri_reply_bulk_small(fr_client *c, const char tmp[FRI_REPLY_SMALL], size_t len)
{
    char *s;
    fr_reply *r;
    if (!c->tree && (s = bytes_room(c, FRI_REPLY_SMALL + 8))) {
        char *w = s;
        *w++ = '$';
        if (len >= 10) *w++ = (char)('0' + len / 10);
        *w++ = (char)('0' + len % 10);
        *w++ = '\r';
        *w++ = '\n';
        memcpy(w, tmp, FRI_REPLY_SMALL); /* a fixed size: a few moves instead of a call */
        w += len;
        *w++ = '\r';
        *w++ = '\n';
        c->out.len += (size_t)(w - s);
        return;
    }
    if (c->tree == FRI_TREE && (s = tree_room(c, FRI_REPLY_SMALL)) && tree_take(c, &r)) {
        memcpy(s, tmp, FRI_REPLY_SMALL); /* a fixed size: a few moves, no call */
        s[len] = '\0';
        ((arena_chunk *)c->arena)->used += len + 1;
        tree_scalar(r, FR_REPLY_BULK, 0, s, len);
        return;
    }
    reply_bulk_small_any(c, tmp, len);
}

static inline void reply_fixed(fr_client *c, fr_reply_type type, const char *bytes, size_t n)
{
    fr_reply *r;
    char *w;
    if (!c->tree && (w = bytes_room(c, 8))) {
        memcpy(w, bytes, n); /* n is each caller's constant: a few moves */
        c->out.len += n;
        return;
    }
    if (c->tree == FRI_TREE && tree_take(c, &r)) {
        tree_scalar(r, type, 0, NULL, 0);
        return;
    }
    reply_fixed_any(c, type, bytes, n);
}

__attribute__((noinline)) static void reply_bulk_ll_any(fr_client *c, long long v)
{
    if (v >= 0 && v < 10000) { /* counts mostly: "$<n>\r\n<digits>\r\n" without a call */
        int n = v < 10 ? 1 : v < 100 ? 2 : v < 1000 ? 3 : 4;
        char d[4];
        for (int i = n - 1, x = (int)v; i >= 0; i--, x /= 10) d[i] = (char)('0' + x % 10);
        if (c->tree) {
            char *s;
            fr_reply *r;
            s = tree_mem(arena_bytes_room(c, 8));
            r = tree_slot(c);
            memcpy(s, d, 4);
            s[n] = '\0';
            arena_bytes_take(c, (size_t)n + 1);
            tree_scalar(r, FR_REPLY_BULK, 0, s, (size_t)n);
            if (c->tree != FRI_TREE_AND_BYTES) return;
        }
        fri_buf *b = &c->out;
        fri_buf_reserve(b, 10);
        char *w = b->p + b->len;
        w[0] = '$';
        w[1] = (char)('0' + n);
        w[2] = '\r';
        w[3] = '\n';
        memcpy(w + 4, d, 4);
        w[4 + n] = '\r';
        w[5 + n] = '\n';
        b->len += (size_t)n + 6;
        return;
    }
    char tmp[FRI_REPLY_SMALL];
    fri_reply_bulk_small(c, tmp, fri_ll2string(tmp, sizeof(tmp), v));
}

void fri_reply_bulk_ll(fr_client *c, long long v)
{
    char *s;
    fr_reply *r;
    if (!c->tree && v >= 0 && v < 10000 && (s = bytes_room(c, 10))) {
        size_t n = v < 10 ? 1 : v < 100 ? 2 : v < 1000 ? 3 : 4;
        s[0] = '$';
        s[1] = (char)('0' + n);
        s[2] = '\r';
        s[3] = '\n';
        for (size_t i = n, x = (size_t)v; i > 0; i--, x /= 10) s[3 + i] = (char)('0' + x % 10);
        s[4 + n] = '\r';
        s[5 + n] = '\n';
        c->out.len += n + 6;
        return;
    }
    if (c->tree == FRI_TREE && v >= 0 && v < 10000 && (s = tree_room(c, 8)) &&
        tree_take(c, &r)) {
        size_t n = v < 10 ? 1 : v < 100 ? 2 : v < 1000 ? 3 : 4;
        for (size_t i = n, x = (size_t)v; i > 0; i--, x /= 10) s[i - 1] = (char)('0' + x % 10);
        s[n] = '\0';
        ((arena_chunk *)c->arena)->used += n + 1;
        tree_scalar(r, FR_REPLY_BULK, 0, s, n);
        return;
    }
    reply_bulk_ll_any(c, v);
}

void fri_reply_nil(fr_client *c) { reply_fixed(c, FR_REPLY_NIL, "$-1\r\n", 5); }
void fri_reply_null_array(fr_client *c) { reply_fixed(c, FR_REPLY_NIL_ARRAY, "*-1\r\n", 5); }
void fri_reply_empty_array(fr_client *c) { reply_fixed(c, FR_REPLY_ARRAY, "*0\r\n", 4); }

void fri_reply_array_len(fr_client *c, long n)
{
    char *w;
    if (!c->tree && n >= 0 && n < 10 && (w = bytes_room(c, 4))) {
        w[0] = '*';
        w[1] = (char)('0' + n);
        w[2] = '\r';
        w[3] = '\n';
        c->out.len += 4;
        return;
    }
    arena_chunk *ch = c->arena;
    size_t size = (size_t)n * sizeof(fr_reply);
    fr_reply *r;
    /* room for the elements and a frame (the stack's last slot is left free: no check
     * whether the array's node closes the frame it goes into) */
    if (c->tree == FRI_TREE && n > 0 && ch && ch->top - ch->used >= size &&
        c->ttop + 2 < c->tframes_end && tree_take(c, &r)) {
        ch->top -= size;
        fr_reply *el = (fr_reply *)(ch->data + ch->top);
        tree_scalar(r, FR_REPLY_ARRAY, 0, NULL, 0);
        r->elements = el;
        r->count = (size_t)n;
        fri_tframe *f = ++c->ttop;
        f->next = el;
        f->end = el + n;
        f->base = NULL;
        f->node = NULL;
        return;
    }
    reply_array_len_any(c, n);
}

fr_reply *fri_tree_node(fr_client *c)
{
    fr_reply *r;
    return tree_take(c, &r) ? r : tree_slot(c);
}

fr_reply *fri_tree_nodes(fr_client *c, size_t n)
{
    return tree_mem(arena_alloc(c, n * sizeof(fr_reply)));
}

__attribute__((noinline)) static void tree_bulk_at_grow(fr_client *c, fr_reply *r,
                                                         const char *p, size_t len)
{
    tree_mem(arena_bytes_room(c, len + 1));
    fri_tree_bulk_at(c, r, p, len);
}

void fri_tree_bulk_at(fr_client *c, fr_reply *r, const char *p, size_t len)
{
    char *s = tree_room(c, len + 1);
    if (__builtin_expect(!s, 0)) {
        tree_bulk_at_grow(c, r, p, len); /* a tail call: no frame here */
        return;
    }
    ((arena_chunk *)c->arena)->used += len + 1;
    s[len] = '\0';
    tree_scalar(r, FR_REPLY_BULK, 0, s, len);
    memcpy(s, p, len); /* last: a tail call */
}

void fri_reply_map_len(fr_client *c, long n) { fri_reply_array_len(c, n * 2); }
void fri_reply_set_len(fr_client *c, long n) { fri_reply_array_len(c, n); }

size_t fri_reply_deferred_len(fr_client *c)
{
    if (c->tree) {
        fr_reply *r;
        if (!tree_take(c, &r)) r = tree_slot(c);
        /* room for 16 elements at first (most such arrays are short), doubled as needed */
        fr_reply *room = tree_mem(arena_alloc(c, 16 * sizeof(*room)));
        tree_scalar(r, FR_REPLY_ARRAY, 0, NULL, 0);
        tree_push(c, room, 16, room, r);
    }
    return c->out.len;
}

/* Bytes: inserts the header where the deferred length was reserved (an insertion moves
 * what follows it: inner ones first).  A tree: closes the innermost open array, which is
 * the deferred one. */
/* The bytes of fri_reply_set_deferred_len. */
__attribute__((noinline)) static void set_deferred_len_bytes(fr_client *c, size_t handle, long n)
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

void fri_reply_set_deferred_len(fr_client *c, size_t handle, long n)
{
    if (c->tree) {
        fri_tframe *f = c->ttop;
        assert(f > c->tframes && f->base && f->next - f->base == n);
        size_t count = (size_t)(f->next - f->base);
        f->node->elements = count ? f->base : NULL;
        f->node->count = count;
        c->ttop = f - 1;
        if (c->tree != FRI_TREE_AND_BYTES) return;
    }
    set_deferred_len_bytes(c, handle, n);
}

void fri_reply_set_deferred_map_len(fr_client *c, size_t handle, long n)
{
    fri_reply_set_deferred_len(c, handle, n * 2);
}

size_t fri_reply_deferred_bulk(fr_client *c)
{
    if (c->tree) {
        assert(!c->thole);
        c->thole = tree_slot(c);
        tree_scalar(c->thole, FR_REPLY_NIL, 0, NULL, 0);
    }
    return c->out.len;
}

void fri_reply_set_deferred_bulk(fr_client *c, size_t handle, const char *p, size_t len)
{
    if (c->tree) {
        tree_scalar(c->thole, FR_REPLY_BULK, 0, tree_str(c, p, len), len);
        c->thole = NULL;
        if (c->tree != FRI_TREE_AND_BYTES) return;
    }
    char head[32];
    size_t hl = 1 + fri_ll2string(head + 1, sizeof(head) - 3, (long long)len);
    head[0] = '$';
    head[hl++] = '\r';
    head[hl++] = '\n';
    fri_buf *b = &c->out;
    fri_buf_reserve(b, hl + len + 2);
    memmove(b->p + handle + hl + len + 2, b->p + handle, b->len - handle);
    memcpy(b->p + handle, head, hl);
    if (len) memcpy(b->p + handle + hl, p, len);
    memcpy(b->p + handle + hl + len, "\r\n", 2);
    b->len += hl + len + 2;
}

size_t fri_reply_mark(const fr_client *c)
{
    if (c->tree) return (size_t)(c->tframes->next - c->tframes->base);
    return c->out.len;
}

void fri_reply_rewind(fr_client *c, size_t mark)
{
    if (c->tree) {
        assert(c->ttop == c->tframes); /* between top-level replies only */
        c->tframes->next = c->tframes->base + mark;
        if (c->tree != FRI_TREE_AND_BYTES) return;
        /* the check writes bytes too: as many as the kept replies encode to */
        size_t len = 0;
        for (size_t i = 0; i < mark; i++) len += fr_reply_encode(&c->tframes->base[i], NULL, 0);
        c->out.len = len;
        return;
    }
    c->out.len = mark;
}

void fri_reply_arity_error(fr_client *c)
{
    fri_reply_errorf(c, "ERR wrong number of arguments for '%s' command", c->cmd->name);
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

/* Parses the scalar reply at *pp into r, the common ones and the rarer (errors, nils,
 * RESP3's scalars seen as their RESP2 forms -- only a script's reply to a RESP3 client
 * holds them: a null bulk, :1/:0, a bulk of the number or text): 1, or 0 when *pp is an
 * aggregate (then nothing was read). */
static int parse_scalar(char **pp, fr_reply *r)
{
    if (parse_common(pp, r)) return 1;
    char *p = *pp;
    char kind = *p++;
    switch (kind) {
    case '-': {
        char *e = p;
        while (*e != '\r') e++; /* error texts never hold a CR (see above) */
        set_node(r, FR_REPLY_ERROR, 0, p, (size_t)(e - p));
        *e = '\0';
        *pp = e + 2;
        return 1;
    }
    case '$': /* "$-1": a nil */
        set_node(r, FR_REPLY_NIL, 0, NULL, 0);
        *pp = p + 4;
        return 1;
    case '_':
        set_node(r, FR_REPLY_NIL, 0, NULL, 0);
        *pp = p + 2;
        return 1;
    case '#':
        set_node(r, FR_REPLY_INTEGER, *p == 't', NULL, 0);
        *pp = p + 3;
        return 1;
    case ',':
    case '(': {
        char *e = p;
        while (*e != '\r') e++;
        set_node(r, FR_REPLY_BULK, 0, p, (size_t)(e - p));
        *e = '\0';
        *pp = e + 2;
        return 1;
    }
    case '=': {
        long long n = parse_line_ll(&p);
        set_node(r, FR_REPLY_BULK, 0, p + 4, (size_t)n - 4); /* past "txt:" */
        p[n] = '\0';
        *pp = p + n + 2;
        return 1;
    }
    default:
        return 0;
    }
}

/* Parses any one reply at *pp into r: -1 when the arena cannot grow. */
static int parse_one(fr_client *c, char **pp, fr_reply *r)
{
    if (parse_scalar(pp, r)) return 0;
    char *p = *pp;
    char kind = *p++;
    switch (kind) {
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

static void tree_parse(fr_client *c, const char *bytes, size_t len)
{
    if (!len) return;
    char *p = tree_mem(arena_bytes_room(c, len + 1));
    arena_bytes_take(c, len + 1);
    memcpy(p, bytes, len);
    p[len] = '\0';
    char *end = p + len;
    while (p < end) {
        if (*p == '*' || *p == '%' || *p == '~') { /* its elements follow, here or later */
            char kind = *p++;
            long long n = parse_line_ll(&p);
            tree_array(c, kind == '%' && n > 0 ? n * 2 : n);
            continue;
        }
        if (!parse_scalar(&p, tree_slot(c))) abort(); /* not RESP: a bug of the fake */
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
