/* resp3.c -- the fake answers in RESP2; a connection that said HELLO 3 gets what
 * redis-server 7.0.15 sends in RESP3 for the same command.
 *
 * Two rules cover every reply: a nil ($-1 or *-1) becomes RESP3's null "_", and the rest
 * keeps its RESP2 form -- except where Redis 7.0 builds the reply with a RESP3 type, which
 * a per-command table says as a *shape*, a small pattern applied to the parsed RESP2 reply
 * (checked against a real server with HELLO 3; tests/unit/test_server_diff.c):
 *
 *   .          as it is (nulls become "_" at every depth)
 *   d          a bulk holding a number becomes a double ",1.5"
 *   s          an array becomes a set "~"
 *   >          an array becomes a push ">" (the Pub/Sub confirmations and messages)
 *   m<v>       a flat array k1 v1 k2 v2 ... becomes a map "%", each value of shape v
 *   a<e>       an array whose elements each have shape e
 *   L<e>       an array whose last element has shape e (GEO's [member, ..., [lon, lat]])
 *   p          a flat member/score array becomes an array of [member, double] pairs
 *   P          a flat field/value array becomes an array of [field, value] pairs
 *   k<v>       an array of [key, value] arrays becomes a map key -> value (XREAD)
 *   t(<e>...)  an array whose i-th element has the i-th shape (the rest: '.')
 *   M{k=v;...} a map whose values for the keys named have their own shapes
 *
 * A shape applies only to the reply type it is written for: "d" leaves an integer alone
 * (ZADD without INCR), "m." leaves a bulk alone (LCS without IDX), errors pass through. */
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "frs.h"

/* ----- Parsing RESP2 replies ---------------------------------------------------------- */

/* Nodes come from chunks that live until frs_arena_free. */
struct frs_arena {
    struct frs_arena *next; /* the previous chunk */
    size_t used, cap;       /* nodes handed out, nodes in this chunk */
    frs_rnode nodes[];      /* the nodes */
};

static frs_rnode *arena_alloc(frs_arena **a, size_t n)
{
    if (!*a || (*a)->cap - (*a)->used < n) {
        size_t cap = n > 256 ? n : 256;
        frs_arena *na = malloc(sizeof(*na) + cap * sizeof(frs_rnode));
        if (!na) frs_oom_abort(__func__);
        na->next = *a;
        na->used = 0;
        na->cap = cap;
        *a = na;
    }
    frs_rnode *r = &(*a)->nodes[(*a)->used];
    (*a)->used += n;
    return r;
}

void frs_arena_free(frs_arena **a)
{
    while (*a) {
        frs_arena *next = (*a)->next;
        free(*a);
        *a = next;
    }
}

/* The number after the type byte at p (up to CRLF); the position after the CRLF in *end.
 * 0 on success. */
static int read_line_ll(const char *p, const char *lim, long long *v, const char **end)
{
    const char *q = p + 1;
    int neg = 0;
    long long x = 0;
    if (q < lim && *q == '-') {
        neg = 1;
        q++;
    }
    while (q < lim && *q >= '0' && *q <= '9') x = x * 10 + (*q++ - '0');
    if (lim - q < 2 || q[0] != '\r' || q[1] != '\n') return -1;
    *v = neg ? -x : x;
    *end = q + 2;
    return 0;
}

/* Parses the reply at *pp into node r; advances *pp.  0, or -1 on bytes that are not
 * one whole RESP2 reply (cannot happen with the fake's bytes). */
static int parse_node(frs_arena **a, const char **pp, const char *lim, frs_rnode *r)
{
    const char *p = *pp, *q;
    if (p >= lim) return -1;
    memset(r, 0, sizeof(*r));
    r->type = *p;
    r->start = p;
    switch (*p) {
    case '+':
    case '-': {
        const char *cr = memchr(p, '\r', (size_t)(lim - p));
        if (!cr || lim - cr < 2) return -1;
        r->p = p + 1;
        r->len = (size_t)(cr - p - 1);
        q = cr + 2;
        break;
    }
    case ':':
        if (read_line_ll(p, lim, &r->n, &q) < 0) return -1;
        break;
    case '$':
        if (read_line_ll(p, lim, &r->n, &q) < 0) return -1;
        if (r->n >= 0) {
            if (lim - q < r->n + 2) return -1;
            r->p = q;
            r->len = (size_t)r->n;
            q += r->n + 2;
        }
        break;
    case '*':
        if (read_line_ll(p, lim, &r->n, &q) < 0) return -1;
        if (r->n > 0) {
            r->child = arena_alloc(a, (size_t)r->n);
            for (long long i = 0; i < r->n; i++)
                if (parse_node(a, &q, lim, &r->child[i]) < 0) return -1;
        }
        break;
    /* RESP3 already: a script's reply to a RESP3 client (the fake writes it in the
     * client's protocol); kept as it is */
    case '_':
    case '#':
    case ',':
    case '(': {
        const char *cr = memchr(p, '\r', (size_t)(lim - p));
        if (!cr || lim - cr < 2) return -1;
        q = cr + 2;
        break;
    }
    case '=':
        if (read_line_ll(p, lim, &r->n, &q) < 0 || r->n < 0 || lim - q < r->n + 2) return -1;
        q += r->n + 2;
        break;
    case '%':
    case '~': {
        long long n;
        if (read_line_ll(p, lim, &n, &q) < 0 || n < 0) return -1;
        if (*p == '%') n *= 2;
        for (long long i = 0; i < n; i++) {
            frs_rnode child;
            if (parse_node(a, &q, lim, &child) < 0) return -1;
        }
        break;
    }
    default:
        return -1;
    }
    r->raw_len = (size_t)(q - p);
    *pp = q;
    return 0;
}

frs_rnode *frs_rparse(frs_arena **a, const char *p, size_t n)
{
    frs_rnode *r = arena_alloc(a, 1);
    const char *q = p;
    if (parse_node(a, &q, p + n, r) < 0 || q != p + n) return NULL;
    return r;
}

/* ----- Shapes ----------------------------------------------------------------------- */

/* Skips one shape at *s. */
static void skip_shape(const char **s)
{
    char c = **s;
    if (!c) return;
    (*s)++;
    switch (c) {
    case 'm':
    case 'a':
    case 'k':
    case 'L':
        skip_shape(s);
        break;
    case 't':
        (*s)++; /* ( */
        while (**s && **s != ')') skip_shape(s);
        if (**s) (*s)++;
        break;
    case 'M':
        while (**s && **s != '}') (*s)++;
        if (**s) (*s)++;
        break;
    default:
        break;
    }
}

static void emit(frs_conn *c, const frs_rnode *r, const char *shape);

static void emit_header(frs_conn *c, char type, long long n)
{
    char buf[32];
    int len = 0;
    buf[len++] = type;
    char digits[24];
    int nd = 0;
    unsigned long long u = (unsigned long long)n;
    do {
        digits[nd++] = (char)('0' + u % 10);
        u /= 10;
    } while (u);
    while (nd) buf[len++] = digits[--nd];
    buf[len++] = '\r';
    buf[len++] = '\n';
    frs_reply_raw(c, buf, (size_t)len);
}

/* The default rule: the reply as it was, with nulls as "_" at every depth. */
static void emit_raw(frs_conn *c, const frs_rnode *r)
{
    if ((r->type == '$' || r->type == '*') && r->n < 0) {
        frs_reply_raw(c, "_\r\n", 3);
        return;
    }
    if (r->type != '*') {
        frs_reply_raw(c, r->start, r->raw_len);
        return;
    }
    emit_header(c, '*', r->n);
    for (long long i = 0; i < r->n; i++) emit_raw(c, &r->child[i]);
}

static void emit_double(frs_conn *c, const frs_rnode *r)
{
    if (r->type != '$') {
        emit_raw(c, r);
        return;
    }
    if (r->n < 0) {
        frs_reply_raw(c, "_\r\n", 3);
        return;
    }
    frs_reply_raw(c, ",", 1);
    frs_reply_raw(c, r->p, r->len);
    frs_reply_raw(c, "\r\n", 2);
}

/* The shape of the value under key k in an M{k=v;...} shape (NULL: '.'). */
static const char *keyed_shape(const char *shape, const char *k, size_t klen)
{
    const char *s = shape + 2; /* past "M{" */
    while (*s && *s != '}') {
        const char *eq = strchr(s, '=');
        if (!eq) return NULL;
        const char *v = eq + 1;
        const char *e = v;
        skip_shape(&e);
        if ((size_t)(eq - s) == klen && memcmp(s, k, klen) == 0) return v;
        s = e;
        if (*s == ';') s++;
    }
    return NULL;
}

static void emit(frs_conn *c, const frs_rnode *r, const char *shape)
{
    char kind = shape ? shape[0] : '.';
    if (r->type == '-' || ((r->type == '$' || r->type == '*') && r->n < 0)) {
        emit_raw(c, r);
        return;
    }
    switch (kind) {
    case 'd':
        emit_double(c, r);
        return;
    case 's':
    case '>':
        if (r->type != '*') break;
        emit_header(c, kind == 's' ? '~' : '>', r->n);
        for (long long i = 0; i < r->n; i++) emit_raw(c, &r->child[i]);
        return;
    case 'm':
        if (r->type != '*' || r->n % 2) break;
        emit_header(c, '%', r->n / 2);
        for (long long i = 0; i < r->n; i += 2) {
            emit_raw(c, &r->child[i]);
            emit(c, &r->child[i + 1], shape + 1);
        }
        return;
    case 'M':
        if (r->type != '*' || r->n % 2) break;
        emit_header(c, '%', r->n / 2);
        for (long long i = 0; i < r->n; i += 2) {
            const frs_rnode *k = &r->child[i];
            emit_raw(c, k);
            const char *vs = k->type == '$' || k->type == '+'
                                 ? keyed_shape(shape, k->p, k->len) : NULL;
            emit(c, &r->child[i + 1], vs);
        }
        return;
    case 'k':
        if (r->type != '*') break;
        for (long long i = 0; i < r->n; i++)
            if (r->child[i].type != '*' || r->child[i].n != 2) goto plain;
        emit_header(c, '%', r->n);
        for (long long i = 0; i < r->n; i++) {
            emit_raw(c, &r->child[i].child[0]);
            emit(c, &r->child[i].child[1], shape + 1);
        }
        return;
    case 'a':
        if (r->type != '*') break;
        emit_header(c, '*', r->n);
        for (long long i = 0; i < r->n; i++) emit(c, &r->child[i], shape + 1);
        return;
    case 'L':
        if (r->type != '*' || r->n < 1) break;
        emit_header(c, '*', r->n);
        for (long long i = 0; i < r->n - 1; i++) emit_raw(c, &r->child[i]);
        emit(c, &r->child[r->n - 1], shape + 1);
        return;
    case 'p':
    case 'P':
        if (r->type != '*' || r->n % 2) break;
        emit_header(c, '*', r->n / 2);
        for (long long i = 0; i < r->n; i += 2) {
            frs_reply_raw(c, "*2\r\n", 4);
            emit_raw(c, &r->child[i]);
            if (*shape == 'p') emit_double(c, &r->child[i + 1]);
            else emit_raw(c, &r->child[i + 1]);
        }
        return;
    case 't': {
        if (r->type != '*') break;
        emit_header(c, '*', r->n);
        const char *s = shape + 2; /* past "t(" */
        for (long long i = 0; i < r->n; i++) {
            if (*s && *s != ')') {
                emit(c, &r->child[i], s);
                skip_shape(&s);
            } else {
                emit_raw(c, &r->child[i]);
            }
        }
        return;
    }
    default:
        break;
    }
plain:
    emit_raw(c, r);
}

/* ----- The per-command table -------------------------------------------------------- */

#define IF_WITHSCORES 1 /* the shape applies only with a WITHSCORES argument */
#define IF_COUNT3 2     /* only with a third argument (a COUNT) */
#define IF_NOCOUNT 3    /* only without it */
#define IF_FULL 4       /* only with FULL (XINFO STREAM) */
#define IF_NOFULL 5     /* only without it */
#define IF_WITHVALUES 6 /* only with a WITHVALUES argument */
#define IF_WITHCOORD 7  /* only with a WITHCOORD argument (the GEO searches) */

/* One command's RESP3 shape.  Sorted by name for the binary search. */
typedef struct shape_row {
    const char *name; /* lower case; "xinfo|stream" for a subcommand */
    int cond;         /* IF_*, 0 for always */
    const char *shape;
} shape_row;

static const shape_row shape_rows[] = {
    {"bzmpop", 0, "t(.at(.d))"},
    {"bzpopmax", 0, "t(..d)"},
    {"bzpopmin", 0, "t(..d)"},
    {"geopos", 0, "aad"},
    {"georadius", IF_WITHCOORD, "aLad"},
    {"georadius_ro", IF_WITHCOORD, "aLad"},
    {"georadiusbymember", IF_WITHCOORD, "aLad"},
    {"georadiusbymember_ro", IF_WITHCOORD, "aLad"},
    {"geosearch", IF_WITHCOORD, "aLad"},
    {"hgetall", 0, "m."},
    {"hrandfield", IF_WITHVALUES, "P"},
    {"lcs", 0, "m."},
    {"psubscribe", 0, ">"},
    {"punsubscribe", 0, ">"},
    {"sdiff", 0, "s"},
    {"sinter", 0, "s"},
    {"smembers", 0, "s"},
    {"spop", IF_COUNT3, "s"},
    {"ssubscribe", 0, ">"},
    {"subscribe", 0, ">"},
    {"sunion", 0, "s"},
    {"sunsubscribe", 0, ">"},
    {"unsubscribe", 0, ">"},
    {"xinfo|consumers", 0, "am."},
    {"xinfo|groups", 0, "am."},
    {"xinfo|stream", IF_FULL, "M{groups=aM{consumers=am.}}"},
    {"xinfo|stream", IF_NOFULL, "m."},
    {"xread", 0, "k."},
    {"xreadgroup", 0, "k."},
    {"zadd", 0, "d"},
    {"zdiff", IF_WITHSCORES, "p"},
    {"zincrby", 0, "d"},
    {"zinter", IF_WITHSCORES, "p"},
    {"zmpop", 0, "t(.at(.d))"},
    {"zmscore", 0, "ad"},
    {"zpopmax", IF_COUNT3, "p"},
    {"zpopmax", IF_NOCOUNT, "t(.d)"},
    {"zpopmin", IF_COUNT3, "p"},
    {"zpopmin", IF_NOCOUNT, "t(.d)"},
    {"zrandmember", IF_WITHSCORES, "p"},
    {"zrange", IF_WITHSCORES, "p"},
    {"zrangebyscore", IF_WITHSCORES, "p"},
    {"zrevrange", IF_WITHSCORES, "p"},
    {"zrevrangebyscore", IF_WITHSCORES, "p"},
    {"zscore", 0, "d"},
    {"zunion", IF_WITHSCORES, "p"},
};

static int has_arg(int argc, const char *const *argv, const size_t *argvlen, int from,
                   const char *word)
{
    size_t wl = strlen(word);
    for (int i = from; i < argc; i++)
        if (argvlen[i] == wl && strncasecmp(argv[i], word, wl) == 0) return 1;
    return 0;
}

/* The shape for the command argv, or NULL for the default rule. */
static const char *shape_for(int argc, const char *const *argv, const size_t *argvlen)
{
    if (argc < 1) return NULL;
    char name[48];
    size_t n = argvlen[0];
    if (n >= 24) return NULL; /* the longest name, georadiusbymember_ro, has 20 */
    for (size_t i = 0; i < n; i++)
        name[i] = (char)(argv[0][i] >= 'A' && argv[0][i] <= 'Z' ? argv[0][i] + 32 : argv[0][i]);
    name[n] = '\0';
    if (strcmp(name, "xinfo") == 0 && argc >= 2 && argvlen[1] < 16) {
        name[n++] = '|';
        for (size_t i = 0; i < argvlen[1]; i++)
            name[n++] = (char)(argv[1][i] >= 'A' && argv[1][i] <= 'Z' ? argv[1][i] + 32
                                                                      : argv[1][i]);
        name[n] = '\0';
    }
    size_t lo = 0, hi = sizeof(shape_rows) / sizeof(shape_rows[0]);
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (strcmp(shape_rows[mid].name, name) < 0) lo = mid + 1;
        else hi = mid;
    }
    for (size_t i = lo; i < sizeof(shape_rows) / sizeof(shape_rows[0]) &&
                        strcmp(shape_rows[i].name, name) == 0; i++) {
        const shape_row *r = &shape_rows[i];
        int ok = 1;
        switch (r->cond) {
        case IF_WITHSCORES: ok = has_arg(argc, argv, argvlen, 1, "withscores"); break;
        case IF_WITHVALUES: ok = has_arg(argc, argv, argvlen, 2, "withvalues"); break;
        case IF_WITHCOORD: ok = has_arg(argc, argv, argvlen, 2, "withcoord"); break;
        case IF_COUNT3: ok = argc >= 3; break;
        case IF_NOCOUNT: ok = argc < 3; break;
        case IF_FULL: ok = has_arg(argc, argv, argvlen, 3, "full"); break;
        case IF_NOFULL: ok = !has_arg(argc, argv, argvlen, 3, "full"); break;
        default: break;
        }
        if (ok) return r->shape;
    }
    return NULL;
}

void frs_resp3_convert(frs_conn *c, int argc, const char *const *argv, const size_t *argvlen,
                       const char *p, size_t n)
{
    const char *shape = shape_for(argc, argv, argvlen);
    /* Fast path: simple replies of types RESP3 keeps, when no shape applies. */
    if (!shape && n > 0 && (p[0] == '+' || p[0] == '-' || p[0] == ':' ||
                            (p[0] == '$' && p[1] != '-'))) {
        frs_reply_raw(c, p, n);
        return;
    }
    /* Several top-level replies: a (P|S)SUBSCRIBE's confirmations (shape ">"), or
     * messages a client published to itself, which the fake writes before the command's
     * own reply, where Redis writes them: pushes too. */
    frs_arena *arena = NULL;
    const char *q = p, *lim = p + n;
    while (q < lim) {
        frs_rnode r;
        const char *start = q;
        if (parse_node(&arena, &q, lim, &r) < 0) {
            frs_reply_raw(c, start, (size_t)(lim - start)); /* not RESP2: as it is */
            break;
        }
        emit(c, &r, q < lim ? ">" : shape);
    }
    frs_arena_free(&arena);
}

void frs_resp3_pushes(frs_conn *c, const char *p, size_t n)
{
    frs_arena *arena = NULL;
    const char *q = p, *lim = p + n;
    while (q < lim) {
        frs_rnode r;
        const char *start = q;
        if (parse_node(&arena, &q, lim, &r) < 0) {
            frs_reply_raw(c, start, (size_t)(lim - start));
            break;
        }
        emit(c, &r, ">");
    }
    frs_arena_free(&arena);
}
