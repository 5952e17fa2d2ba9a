/* reader.c -- parsing a recording (wsr.h, docs/recording.md).
 *
 * The file is copied once and its tokens are unescaped in place (a token never grows when
 * unescaped, and the separator after it becomes its NUL), so every string of every event
 * points into that one copy.  Argument arrays come from a chunked arena.  The first error
 * stops the parse: a recording is used whole or not at all. */
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "wsr.h"
#include "wsr_int.h"
#include "wsr_resp.h"

/* ----- Memory ------------------------------------------------------------------------------ */

/* A chunk of the arena. */
typedef struct chunk {
    struct chunk *next;  /* the previous chunk */
    size_t used, cap;    /* bytes used, bytes after the header */
} chunk;

/* What a recording owns besides its public part. */
typedef struct rec {
    wsr_recording pub;   /* what the caller sees (first: the handle is its address) */
    char *text;          /* the copy every string points into */
    wsr_event *ev;       /* the events (pub.ev) */
    size_t cap;          /* room in ev */
    const char **meta;   /* pub.meta */
    size_t meta_cap;
    chunk *arena;        /* argument arrays */
    char *name;          /* pub.name */
} rec;

/* n bytes, 16-aligned, from r's arena; NULL when out of memory. */
static void *arena_alloc(rec *r, size_t n)
{
    n = (n + 15) & ~(size_t)15;
    if (!r->arena || r->arena->cap - r->arena->used < n) {
        size_t cap = n > 64 * 1024 ? n : 64 * 1024;
        chunk *c = malloc(sizeof(chunk) + 16 + cap);
        if (!c) return NULL;
        c->next = r->arena;
        c->used = 0;
        c->cap = cap;
        r->arena = c;
    }
    char *base = (char *)(r->arena + 1);
    base += (16 - ((uintptr_t)base & 15)) & 15;
    void *p = base + r->arena->used;
    r->arena->used += n;
    return p;
}

void wsr_free(wsr_recording *pub)
{
    rec *r = (rec *)pub;
    if (!r) return;
    while (r->arena) {
        chunk *c = r->arena;
        r->arena = c->next;
        free(c);
    }
    free(r->ev);
    free(r->meta);
    free(r->text);
    free(r->name);
    free(r);
}

/* ----- Connections seen (open, closed) ------------------------------------------------------- */

/* conn id -> 1 open, 2 closed; open addressing on a power-of-two table. */
typedef struct conns {
    uint64_t *ids;       /* 0 marks a free slot, so ids are stored + 1 */
    unsigned char *state;
    size_t cap, n;
} conns;

static unsigned char *conn_slot(conns *m, uint64_t id, int add)
{
    if (add && (m->n + 1) * 2 > m->cap) {
        size_t cap = m->cap ? m->cap * 2 : 64;
        uint64_t *ids = calloc(cap, sizeof *ids);
        unsigned char *st = calloc(cap, 1);
        if (!ids || !st) {
            free(ids);
            free(st);
            return NULL;
        }
        for (size_t i = 0; i < m->cap; i++) {
            if (!m->ids[i]) continue;
            size_t j = (size_t)(m->ids[i] * 0x9e3779b97f4a7c15ull) & (cap - 1);
            while (ids[j]) j = (j + 1) & (cap - 1);
            ids[j] = m->ids[i];
            st[j] = m->state[i];
        }
        free(m->ids);
        free(m->state);
        m->ids = ids;
        m->state = st;
        m->cap = cap;
    }
    if (!m->cap) return NULL;
    size_t j = (size_t)((id + 1) * 0x9e3779b97f4a7c15ull) & (m->cap - 1);
    while (m->ids[j] && m->ids[j] != id + 1) j = (j + 1) & (m->cap - 1);
    if (!m->ids[j]) {
        if (!add) return NULL;
        m->ids[j] = id + 1;
        m->n++;
    }
    return &m->state[j];
}

/* ----- The parse ----------------------------------------------------------------------------- */

/* The parser's position and first error. */
typedef struct parser {
    rec *r;
    const char *name;    /* the file name */
    char *p;             /* the text (the copy) */
    size_t len;
    size_t line;         /* the current line (1-based) */
    char *ls;            /* its first byte */
    char *le;            /* its end (the LF) */
    char *at;            /* the next unread byte of the line */
    char *err;           /* the message, heap */
    int oom;
    conns seen;
} parser;

static int perr(parser *ps, const char *where, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* Records the first error, at where (a byte of the current line, or NULL for column 1). */
static int perr(parser *ps, const char *where, const char *fmt, ...)
{
    if (ps->err || ps->oom) return -1;
    char what[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(what, sizeof what, fmt, ap);
    va_end(ap);
    size_t col = where && where >= ps->ls ? (size_t)(where - ps->ls) + 1 : 1;
    size_t need = strlen(ps->name) + strlen(what) + 64;
    ps->err = malloc(need);
    if (!ps->err) {
        ps->oom = 1;
        return -1;
    }
    snprintf(ps->err, need, "%s:%zu:%zu: error: %s", ps->name, ps->line, col, what);
    return -1;
}

static int oom(parser *ps)
{
    ps->oom = 1;
    return -1;
}

/* Whether the line has more words. */
static int more(const parser *ps) { return ps->at < ps->le; }

/* A token as a message shows it: its token form (quoted when it holds anything but bare
 * bytes, so a message stays one line), cut to 40 bytes. */
static const char *shown(const char *p, size_t n, char *buf, size_t cap)
{
    size_t need = wsr_token(buf, cap, p, n);
    if (need >= cap && cap > 4) memcpy(buf + cap - 4, "...", 4);
    return buf;
}

/* Reads one token at ps->at into out (unescaped in place, NUL-terminated): 0 or -1.
 * `what` names it in messages. */
static int token(parser *ps, const char *what, char **out, size_t *outlen)
{
    char *s = ps->at;
    if (s >= ps->le) return perr(ps, s, "%s expected, the line ends", what);
    char *w = s, *p = s;
    if (*p == '"') {
        p++;
        for (;;) {
            if (p >= ps->le) return perr(ps, s, "a quoted string that never closes");
            unsigned char c = (unsigned char)*p;
            if (c == '"') break;
            if (c < 0x20 || c > 0x7e) return perr(ps, p, "byte 0x%02x inside quotes (write \\x%02x)", c, c);
            if (c != '\\') {
                *w++ = *p++;
                continue;
            }
            if (p + 1 >= ps->le) return perr(ps, p, "a backslash at the end of the line");
            char e = p[1], *esc = p;
            p += 2;
            switch (e) {
            case '\\': *w++ = '\\'; break;
            case '"': *w++ = '"'; break;
            case 'n': *w++ = '\n'; break;
            case 'r': *w++ = '\r'; break;
            case 't': *w++ = '\t'; break;
            case 'x': {
                int v = 0;
                for (int k = 0; k < 2; k++) {
                    char h = p < ps->le ? *p : 0;
                    int d = h >= '0' && h <= '9' ? h - '0' : h >= 'a' && h <= 'f' ? h - 'a' + 10
                                                   : h >= 'A' && h <= 'F' ? h - 'A' + 10 : -1;
                    if (d < 0) return perr(ps, esc, "\\x needs two hex digits");
                    v = v * 16 + d;
                    p++;
                }
                *w++ = (char)v;
                break;
            }
            default:
                return perr(ps, esc, "unknown escape \\%c", e);
            }
        }
        p++; /* the closing quote */
        if (p < ps->le && *p != ' ') return perr(ps, p, "a closing quote must be followed by a space or the line end");
    } else {
        while (p < ps->le && *p != ' ') {
            if (!wsri_bare_byte((unsigned char)*p))
                return perr(ps, p, "byte 0x%02x in a bare word (quote the word)", (unsigned char)*p);
            p++;
        }
        if (p == s) return perr(ps, s, "%s expected (one space between words)", what);
        w = p;
    }
    *outlen = (size_t)(w - s);
    /* the separator after it becomes the NUL, unless the line end is there: the LF */
    char *next = p < ps->le ? p + 1 : p;
    *w = '\0';
    if (p < ps->le && next >= ps->le) return perr(ps, p, "a space at the end of the line");
    ps->at = next;
    *out = s;
    return 0;
}

/* Reads the bare word at ps->at without consuming it: its length (0 when it is not bare). */
static size_t peek_bare(const parser *ps)
{
    const char *p = ps->at;
    while (p < ps->le && *p != ' ' && wsri_bare_byte((unsigned char)*p)) p++;
    return (size_t)(p - ps->at);
}

/* Whether the next word is the field `key=` (a bare key followed by '='). */
static int at_field(const parser *ps, const char *key)
{
    size_t k = strlen(key);
    return (size_t)(ps->le - ps->at) > k && memcmp(ps->at, key, k) == 0 && ps->at[k] == '=';
}

/* Reads the field `key=TOKEN`: 0 or -1. */
static int field(parser *ps, const char *key, char **out, size_t *len)
{
    if (!at_field(ps, key)) {
        size_t b = peek_bare(ps);
        if (!more(ps)) return perr(ps, ps->at, "field %s= expected, the line ends", key);
        char sb[48];
        return perr(ps, ps->at, "field %s= expected, got %s", key,
                    shown(ps->at, b ? b : 1, sb, sizeof sb));
    }
    ps->at += strlen(key) + 1;
    return token(ps, key, out, len);
}

/* A decimal field: key=N within [lo, hi]. */
static int num_field(parser *ps, const char *key, long long lo, long long hi, long long *out)
{
    char *where = ps->at + strlen(key) + 1, *s;
    size_t len;
    if (field(ps, key, &s, &len) < 0) return -1;
    errno = 0;
    char *end;
    long long v = strtoll(s, &end, 10);
    if (!len || end != s + len || errno || (s[0] == '0' && len > 1) || s[0] == '+' ||
        (s[0] == '-' && (len == 1 || s[1] == '0'))) {
        char b[48];
        return perr(ps, where, "%s= needs a decimal number, got %s", key, shown(s, len, b, sizeof b));
    }
    if (v < lo || v > hi) return perr(ps, where, "%s=%s is out of range", key, s);
    *out = v;
    return 0;
}

/* The connection id at ps->at (a plain decimal word). */
static int conn_id(parser *ps, uint64_t *out)
{
    char *where = ps->at, *s;
    size_t len;
    if (token(ps, "a connection id", &s, &len) < 0) return -1;
    char *end;
    errno = 0;
    unsigned long long v = strtoull(s, &end, 10);
    if (!len || end != s + len || errno || s[0] < '0' || s[0] > '9' || (s[0] == '0' && len > 1)) {
        char b[48];
        return perr(ps, where, "a connection id (a decimal number) expected, got %s",
                    shown(s, len, b, sizeof b));
    }
    *out = v;
    return 0;
}

/* The connection named by event e must be open (1) or, for an open line, new. */
static int conn_check(parser *ps, wsr_event *e, const char *where)
{
    unsigned char *st = conn_slot(&ps->seen, e->conn, 1);
    if (!st) return oom(ps);
    if (e->kind == WSR_OPEN) {
        if (*st) return perr(ps, where, "connection %" PRIu64 " is opened twice", e->conn);
        *st = 1;
        return 0;
    }
    if (*st == 0)
        return perr(ps, where, "connection %" PRIu64 " has no open line above", e->conn);
    if (*st == 2) return perr(ps, where, "connection %" PRIu64 " was closed above", e->conn);
    if (e->kind == WSR_CLOSE) *st = 2;
    return 0;
}

/* The command words up to `=>` or the line end: at least `min` of them. */
static int command_words(parser *ps, wsr_event *e, int min)
{
    char *start = ps->at;
    /* count first: words are separated by single spaces outside quotes */
    size_t cap = 8, n = 0;
    char **argv = malloc(cap * sizeof *argv);
    size_t *lens = malloc(cap * sizeof *lens);
    if (!argv || !lens) {
        free(argv);
        free(lens);
        return oom(ps);
    }
    int rc = 0;
    while (more(ps)) {
        if (ps->le - ps->at >= 2 && ps->at[0] == '=' && ps->at[1] == '>' &&
            (ps->at + 2 == ps->le || ps->at[2] == ' '))
            break;
        if (n == cap) {
            cap *= 2;
            char **na = realloc(argv, cap * sizeof *argv);
            if (na) argv = na;
            size_t *nl = na ? realloc(lens, cap * sizeof *lens) : NULL;
            if (nl) lens = nl;
            if (!na || !nl) {
                rc = oom(ps);
                break;
            }
        }
        if (token(ps, "an argument", &argv[n], &lens[n]) < 0) {
            rc = -1;
            break;
        }
        n++;
    }
    if (rc == 0 && (int)n < min) rc = perr(ps, start, "the command has no words");
    if (rc == 0 && n > (size_t)0x7fffffff) rc = perr(ps, start, "too many arguments");
    if (rc == 0) {
        const char **av = arena_alloc(ps->r, (n + 1) * sizeof *av);
        size_t *al = av ? arena_alloc(ps->r, (n + 1) * sizeof *al) : NULL;
        if (!av || !al) {
            rc = oom(ps);
        } else {
            memcpy(av, argv, n * sizeof *av);
            memcpy(al, lens, n * sizeof *al);
            av[n] = NULL;
            e->argc = (int)n;
            e->argv = av;
            e->argvlen = al;
        }
    }
    free(argv);
    free(lens);
    return rc;
}

/* `=> BYTES` to the line end: whole RESP values. */
static int reply_bytes(parser *ps, wsr_event *e)
{
    char *where = ps->at;
    if (!(ps->le - ps->at >= 2 && ps->at[0] == '=' && ps->at[1] == '>'))
        return perr(ps, where, "'=>' and the reply expected");
    if (ps->at + 2 >= ps->le || ps->at[2] != ' ') return perr(ps, where + 2, "the reply expected after '=>'");
    ps->at += 3;
    char *s;
    size_t len;
    where = ps->at;
    if (token(ps, "the reply", &s, &len) < 0) return -1;
    if (more(ps)) return perr(ps, ps->at, "nothing may follow the reply");
    const char *why = NULL;
    size_t bad = 0;
    if (!wsr_resp_whole(s, len, &why, &bad))
        return perr(ps, where, "the reply bytes are not RESP: %s (at byte %zu)", why, bad);
    e->reply = s;
    e->reply_len = len;
    return 0;
}

/* The optional name= field. */
static int opt_name(parser *ps, wsr_event *e)
{
    if (!at_field(ps, "name")) return 0;
    char *s;
    if (field(ps, "name", &s, &e->name_len) < 0) return -1;
    e->name = s;
    return 0;
}

static int end_of_line(parser *ps)
{
    if (!more(ps)) return 0;
    size_t b = peek_bare(ps);
    char sb[48];
    return perr(ps, ps->at, "unexpected %s at the end of the line",
                shown(ps->at, b ? b : 1, sb, sizeof sb));
}

/* One event line: its kind word was read into kind. */
static int event_line(parser *ps, const char *kind, size_t kl, const char *kind_at, wsr_event *e)
{
    long long v;
    char *s, *where;
    size_t len;
    static const struct { const char *word; wsr_kind kind; } kinds[] = {
        {"open", WSR_OPEN}, {"close", WSR_CLOSE}, {"cmd", WSR_CMD}, {"wait", WSR_WAIT},
        {"push", WSR_PUSH}, {"hold", WSR_HOLD}, {"clock", WSR_CLOCK}, {"note", WSR_NOTE},
        {"end", WSR_END}, {"call", WSR_CALL},
    };
    e->kind = 0;
    for (size_t i = 0; i < sizeof kinds / sizeof kinds[0]; i++)
        if (kl == strlen(kinds[i].word) && memcmp(kind, kinds[i].word, kl) == 0)
            e->kind = kinds[i].kind;
    if (!e->kind) {
        char b[48];
        return perr(ps, kind_at, "unknown line kind %s (open, close, cmd, wait, call, push, "
                                 "hold, clock, note, end, meta)", shown(kind, kl, b, sizeof b));
    }
    e->since = -1;
    e->pid = -1;
    int has_conn = e->kind != WSR_CLOCK && e->kind != WSR_NOTE && e->kind != WSR_END;
    where = ps->at;
    if (has_conn && conn_id(ps, &e->conn) < 0) return -1;
    int cmdlike = e->kind == WSR_CMD || e->kind == WSR_WAIT || e->kind == WSR_CALL;
    if (cmdlike) {
        if (num_field(ps, "b", 1, INT64_MAX, &v) < 0) return -1;
        e->batch = (uint64_t)v;
    }
    if (num_field(ps, "t", INT64_MIN, INT64_MAX, &v) < 0) return -1;
    e->t = v;
    switch (e->kind) {
    case WSR_OPEN:
        if (field(ps, "addr", &s, &len) < 0) return -1;
        e->addr = s;
        if (at_field(ps, "pid")) {
            if (num_field(ps, "pid", 0, INT64_MAX, &v) < 0) return -1;
            e->pid = v;
        }
        if (opt_name(ps, e) < 0 || end_of_line(ps) < 0) return -1;
        break;
    case WSR_CLOSE:
        if (field(ps, "why", &s, &len) < 0 || end_of_line(ps) < 0) return -1;
        e->word = s;
        break;
    case WSR_CMD:
    case WSR_WAIT:
        if (num_field(ps, "m", 0, 1, &v) < 0) return -1;
        e->multi = (int)v;
        if (opt_name(ps, e) < 0) return -1;
        if (e->kind == WSR_CMD && at_field(ps, "since")) {
            if (num_field(ps, "since", INT64_MIN, INT64_MAX, &v) < 0) return -1;
            e->since = v;
        }
        if (command_words(ps, e, 1) < 0) return -1;
        if (e->kind == WSR_CMD ? reply_bytes(ps, e) < 0 : end_of_line(ps) < 0) return -1;
        break;
    case WSR_CALL:
        if (command_words(ps, e, 1) < 0 || reply_bytes(ps, e) < 0) return -1;
        break;
    case WSR_PUSH:
        if (reply_bytes(ps, e) < 0) return -1;
        if (e->reply_len == 0) return perr(ps, ps->at, "a push with no bytes");
        break;
    case WSR_HOLD:
        if (field(ps, "what", &s, &len) < 0) return -1;
        e->word = s;
        if (num_field(ps, "n", 0, INT64_MAX, &v) < 0) return -1;
        e->n = (uint64_t)v;
        if (command_words(ps, e, 0) < 0 || end_of_line(ps) < 0) return -1;
        break;
    case WSR_CLOCK:
        if (num_field(ps, "from", INT64_MIN, INT64_MAX, &v) < 0) return -1;
        e->from = v;
        if (field(ps, "why", &s, &len) < 0 || end_of_line(ps) < 0) return -1;
        e->word = s;
        break;
    case WSR_NOTE:
        if (token(ps, "the note's text", &s, &len) < 0 || end_of_line(ps) < 0) return -1;
        e->word = s;
        break;
    case WSR_END:
        if (end_of_line(ps) < 0) return -1;
        break;
    }
    return has_conn ? conn_check(ps, e, where) : 0;
}

/* Appends an event slot; NULL when out of memory. */
static wsr_event *new_event(parser *ps)
{
    rec *r = ps->r;
    if (r->pub.n == r->cap) {
        size_t cap = r->cap ? r->cap * 2 : 256;
        wsr_event *ev = realloc(r->ev, cap * sizeof *ev);
        if (!ev) return NULL;
        r->ev = ev;
        r->cap = cap;
    }
    wsr_event *e = &r->ev[r->pub.n++];
    memset(e, 0, sizeof *e);
    e->line = ps->line;
    return e;
}

/* A `meta KEY VALUE` line. */
static int meta_line(parser *ps, const char *kind_at)
{
    rec *r = ps->r;
    if (r->pub.n) return perr(ps, kind_at, "a meta line after the first event");
    char *k, *v;
    size_t kl, vl;
    if (token(ps, "the meta key", &k, &kl) < 0 || token(ps, "the meta value", &v, &vl) < 0 ||
        end_of_line(ps) < 0)
        return -1;
    if (r->pub.nmeta * 2 + 2 > r->meta_cap) {
        size_t cap = r->meta_cap ? r->meta_cap * 2 : 16;
        const char **m = realloc(r->meta, cap * sizeof *m);
        if (!m) return oom(ps);
        r->meta = m;
        r->meta_cap = cap;
    }
    r->meta[r->pub.nmeta * 2] = k;
    r->meta[r->pub.nmeta * 2 + 1] = v;
    r->pub.nmeta++;
    return 0;
}

/* The first line: "wsim-recording N". */
static int header(parser *ps)
{
    static const char magic[] = WSR_MAGIC " ";
    size_t ml = sizeof magic - 1;
    if ((size_t)(ps->le - ps->ls) < ml || memcmp(ps->ls, magic, ml) != 0)
        return perr(ps, NULL, "not a recording: the first line is not '%s <version>'", WSR_MAGIC);
    char *v = ps->ls + ml;
    size_t vl = (size_t)(ps->le - v);
    long long version = 0;
    int ok = vl > 0 && vl <= 9;
    for (size_t i = 0; ok && i < vl; i++) {
        if (v[i] < '0' || v[i] > '9') ok = 0;
        else version = version * 10 + (v[i] - '0');
    }
    if (!ok) return perr(ps, v, "not a recording: '%s' needs a version number", WSR_MAGIC);
    if (version != WSR_VERSION)
        return perr(ps, v, "the recording is version %lld; this wsim reads version %d", version,
                    WSR_VERSION);
    ps->r->pub.version = (int)version;
    return 0;
}

int wsr_looks_like_recording(const char *text, size_t len)
{
    static const char magic[] = WSR_MAGIC " ";
    return len >= sizeof magic - 1 && memcmp(text, magic, sizeof magic - 1) == 0;
}

wsr_recording *wsr_parse(const char *name, const char *text, size_t len,
                         const wsr_read_options *opt, char **error)
{
    if (error) *error = NULL;
    rec *r = calloc(1, sizeof *r);
    parser ps = {.r = r, .name = name, .line = 1};
    if (!r || !(r->name = strdup(name)) || !(r->text = malloc(len + 1))) goto out_of_memory;
    memcpy(r->text, text, len);
    r->text[len] = '\0';
    r->pub.name = r->name;
    ps.p = r->text;
    ps.len = len;
    char *p = r->text, *stop = r->text + len;
    int ended = 0;
    while (p < stop || ps.line == 1) {
        ps.ls = p;
        size_t left = p < stop ? (size_t)(stop - p) : 0;
        char *lf = left ? memchr(p, '\n', left) : NULL;
        ps.le = lf ? lf : stop;
        ps.at = p;
        if (ps.line == 1) {
            if (header(&ps) < 0) break;
            if (!lf) {
                perr(&ps, ps.le, "truncated: the recording ends in its first line");
                break;
            }
        } else if (!lf) {
            perr(&ps, ps.le, "truncated: the last line has no line end (the recording was cut "
                             "short)");
            break;
        } else if (ps.le == ps.ls || ps.ls[0] == '#') {
            /* an empty line or a comment */
        } else if (ended) {
            perr(&ps, NULL, "a line after the end line");
            break;
        } else {
            char *kind, *kind_at = ps.at;
            size_t kl;
            if (token(&ps, "the line's kind", &kind, &kl) < 0) break;
            if (kl == 4 && memcmp(kind, "meta", 4) == 0) {
                if (meta_line(&ps, kind_at) < 0) break;
            } else {
                wsr_event *e = new_event(&ps);
                if (!e) {
                    oom(&ps);
                    break;
                }
                if (event_line(&ps, kind, kl, kind_at, e) < 0) break;
                if (e->kind == WSR_END) ended = 1;
            }
        }
        p = lf ? lf + 1 : stop;
        ps.line++;
    }
    if (!ps.err && !ps.oom && len == 0) {
        ps.line = 1;
        ps.ls = ps.le = r->text;
        perr(&ps, NULL, "not a recording: the file is empty");
    }
    if (!ps.err && !ps.oom && !ended && !(opt && opt->allow_open)) {
        ps.ls = ps.le = stop;
        perr(&ps, NULL, "truncated: the recording has no end line (the recorder was stopped "
                        "before it closed the file, or is still writing it)");
    }
    free(ps.seen.ids);
    free(ps.seen.state);
    if (ps.oom) goto out_of_memory;
    if (ps.err) {
        if (error) *error = ps.err;
        else free(ps.err);
        wsr_free(&r->pub);
        return NULL;
    }
    r->pub.ev = r->ev;
    r->pub.meta = r->meta;
    r->pub.ended = ended;
    r->pub.lines = ps.line - 1;
    return &r->pub;

out_of_memory:
    free(ps.err);
    free(ps.seen.ids);
    free(ps.seen.state);
    if (r) wsr_free(&r->pub);
    if (error) {
        size_t need = strlen(name) + 40;
        *error = malloc(need);
        if (*error) snprintf(*error, need, "%s:0:0: error: out of memory", name);
    }
    return NULL;
}

wsr_recording *wsr_read_file(const char *path, const wsr_read_options *opt, char **error)
{
    if (error) *error = NULL;
    FILE *f = fopen(path, "rb");
    char *buf = NULL;
    size_t len = 0, cap = 0;
    int err = 0;
    if (!f) {
        err = errno;
    } else {
        for (;;) {
            if (cap - len < 65536) {
                size_t ncap = cap ? cap * 2 : 65536;
                char *nb = realloc(buf, ncap);
                if (!nb) {
                    err = ENOMEM;
                    break;
                }
                buf = nb;
                cap = ncap;
            }
            size_t got = fread(buf + len, 1, cap - len, f);
            len += got;
            if (got == 0) {
                if (ferror(f)) err = errno ? errno : EIO;
                break;
            }
        }
        fclose(f);
    }
    if (err) {
        free(buf);
        if (error) {
            const char *why = strerror(err);
            size_t need = strlen(path) + strlen(why) + 32;
            *error = malloc(need);
            if (*error) snprintf(*error, need, "%s:0:0: error: %s", path, why);
        }
        return NULL;
    }
    wsr_recording *r = wsr_parse(path, buf ? buf : "", len, opt, error);
    free(buf);
    return r;
}

const char *wsr_meta(const wsr_recording *r, const char *key)
{
    for (size_t i = 0; r && i < r->nmeta; i++)
        if (strcmp(r->meta[2 * i], key) == 0) return r->meta[2 * i + 1];
    return NULL;
}
