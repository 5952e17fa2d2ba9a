/* conn.c -- what every backend shares: error codes, the arena, the common half of a
 * round trip (argument checks, counting, the trace hook) and the trace's text form. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ws_int.h"

/* ----- Error codes ---------------------------------------------------------------------- */

/* The name of an error code ("WS_ECRASHED"), from WS_ERRNO_MAP; "WS_E?" for an unknown
 * one. */
const char *ws_err_name(int code)
{
    switch (code) {
    case 0: return "WS_OK";
#define WS_ERR_NAME_(name, num, msg) case num: return "WS_" #name;
        WS_ERRNO_MAP(WS_ERR_NAME_)
#undef WS_ERR_NAME_
    default: return "WS_E?";
    }
}

/* The message of an error code, from WS_ERRNO_MAP; "ok" for 0. */
const char *ws_strerror(int code)
{
    switch (code) {
    case 0: return "ok";
#define WS_ERR_MSG_(name, num, msg) case num: return msg;
        WS_ERRNO_MAP(WS_ERR_MSG_)
#undef WS_ERR_MSG_
    default: return "unknown error";
    }
}

/* ----- Arena ---------------------------------------------------------------------------- */

struct wsi_arena_block {
    wsi_arena_block *next; /* the previously filled block */
    size_t used, cap;      /* bytes handed out, bytes in data */
    max_align_t data[];    /* the storage, aligned for anything */
};

/* A round trip's replies usually take a few hundred bytes: a small first block keeps the
 * many short-lived connections of a fuzzing run from touching fresh pages each time. */
#define WSI_ARENA_BLOCK 1024

/* size bytes aligned for any type, valid until the next reset; NULL when out of memory. */
void *wsi_arena_alloc(wsi_arena *a, size_t size)
{
    size_t al = _Alignof(max_align_t);
    size = (size + al - 1) / al * al;
    if (size == 0) size = al;
    wsi_arena_block *b = a->head;
    if (!b || b->cap - b->used < size) {
        /* each block twice the last: the arena settles on what a round trip needs */
        size_t cap = b && b->cap < ((size_t)1 << 24) ? b->cap * 2 : WSI_ARENA_BLOCK;
        if (cap < size) cap = size;
        b = wsi_xmalloc(sizeof *b + cap);
        b->used = 0;
        b->cap = cap;
        b->next = a->head;
        a->head = b;
    }
    void *p = (char *)b->data + b->used;
    b->used += size;
    return p;
}

/* A NUL-terminated copy of len bytes in the arena, or NULL when out of memory. */
char *wsi_arena_strdup(wsi_arena *a, const char *s, size_t len)
{
    char *p = wsi_arena_alloc(a, len + 1);
    if (!p) return NULL;
    if (len) memcpy(p, s, len);
    p[len] = '\0';
    return p;
}

/* Frees every allocation at once, keeping one block so a steady round trip allocates
 * nothing. */
void wsi_arena_reset(wsi_arena *a)
{
    /* Keep the newest block (the largest), free the rest: the next round trip's replies
     * usually fit in it, so steady state allocates nothing. */
    wsi_arena_block *keep = a->head;
    if (!keep) return;
    wsi_arena_block *b = keep->next;
    while (b) {
        wsi_arena_block *next = b->next;
        wsi_free(b);
        b = next;
    }
    keep->next = NULL;
    keep->used = 0;
}

/* Frees the arena's blocks; it may be used again afterwards. */
void wsi_arena_free(wsi_arena *a)
{
    wsi_arena_reset(a);
    wsi_free(a->head);
    a->head = NULL;
}

/* ----- The common connection --------------------------------------------------------- */

/* Copies src into dst, truncated to size - 1 bytes and always terminated. */
void wsi_copy_str(char *dst, size_t size, const char *src)
{
    size_t n = strlen(src);
    if (n >= size) n = size - 1;
    memcpy(dst, src, n);
    dst[n] = '\0';
}

/* Sets up the common head of a backend connection: its operations and its label. */
void wsi_conn_init(ws_conn *c, const wsi_conn_ops *ops, const char *label)
{
    memset(c, 0, sizeof *c);
    c->ops = ops;
    wsi_copy_str(c->label, sizeof c->label, label);
}

/* Makes code the connection's sticky error, with fmt's text (or the code's message), dead
 * when dead is set; returns code. */
int wsi_conn_fail(ws_conn *c, int code, int dead, const char *fmt, ...)
{
    c->err = code;
    if (fmt) {
        va_list ap;
        va_start(ap, fmt);
        wsi_vsnprintf(c->errstr, sizeof c->errstr, fmt, ap);
        va_end(ap);
    } else {
        wsi_snprintf(c->errstr, sizeof c->errstr, "%s", ws_strerror(code));
    }
    if (dead) c->dead = 1;
    return code;
}

/* Whether the len bytes at arg equal the NUL-terminated name, ignoring ASCII case. */
int wsi_name_eq(const char *arg, size_t len, const char *name)
{
    size_t i = 0;
    for (; i < len && name[i]; i++) {
        unsigned char x = (unsigned char)arg[i], y = (unsigned char)name[i];
        if (x >= 'A' && x <= 'Z') x = (unsigned char)(x - 'A' + 'a');
        if (y >= 'A' && y <= 'Z') y = (unsigned char)(y - 'A' + 'a');
        if (x != y) return 0;
    }
    return i == len && name[i] == '\0';
}

/* Closes c (NULL allowed) and frees everything it owns, whatever its kind. */
void ws_conn_close(ws_conn *c)
{
    if (!c) return;
    wsi_free(c->rbuf);
    wsi_free(c->fbuf);
    c->ops->close(c);
}

/* Up to max out-of-band messages already received, after waiting at most timeout_ms
 * (ws_conn.h). */
int ws_conn_pushes(ws_conn *c, int timeout_ms, size_t max, const fr_reply **out, size_t *n)
{
    *n = 0;
    if (!c || (max && !out)) return WS_EINVAL;
    if (c->dead) return WS_EDEAD;
    if (!c->ops->pushes) return 0;
    return c->ops->pushes(c, timeout_ms, max, out, n);
}

int ws_conn_err(const ws_conn *c) { return c->err; }
const char *ws_conn_errstr(const ws_conn *c) { return c->errstr; }
int ws_conn_dead(const ws_conn *c) { return c->dead; }
ws_conn_stats ws_conn_get_stats(const ws_conn *c) { return c->stats; }
const char *ws_conn_label(const ws_conn *c) { return c->label; }

/* Renames the connection in the trace; 0, or WS_EINVAL for a NULL connection or label. */
int ws_conn_set_label(ws_conn *c, const char *label)
{
    if (!c || !label) return WS_EINVAL;
    wsi_copy_str(c->label, sizeof c->label, label);
    return 0;
}

/* Calls fn with ud after every round trip of c (NULL stops it). */
void ws_conn_set_trace(ws_conn *c, ws_trace_fn fn, void *ud)
{
    c->trace = fn;
    c->trace_ud = ud;
}

/* One round trip of n commands: n replies and fates, counted and traced, or an error code
 * with the fates of what was sent (ws_conn.h). */
int ws_pipeline(ws_conn *c, const char *cause, size_t n, const fr_command *commands,
                const fr_reply **replies)
{
    if (!c) return WS_EINVAL;
    if (n == 0) return 0;
    if (replies)
        for (size_t i = 0; i < n; i++) replies[i] = NULL;
    /* A dead consumer sends nothing; err keeps the cause of death. */
    if (c->dead) return WS_EDEAD;
    if (!commands || !replies)
        return wsi_conn_fail(c, WS_EINVAL, 0, "ws_pipeline: NULL commands or replies");
    for (size_t i = 0; i < n; i++) {
        if (commands[i].argc < 1 || !commands[i].argv)
            return wsi_conn_fail(c, WS_EINVAL, 0, "ws_pipeline: command %zu has no name",
                                 i + 1);
    }
    if (n > c->bufcap) {
        c->rbuf = wsi_xrealloc(c->rbuf, n * sizeof *c->rbuf);
        c->fbuf = wsi_xrealloc(c->fbuf, n);
        c->bufcap = n;
    }
    for (size_t i = 0; i < n; i++) {
        c->rbuf[i] = NULL;
        c->fbuf[i] = WS_FATE_UNSENT;
    }
    c->note[0] = '\0';
    c->stats.round_trips++;
    int rc = c->ops->pipeline(c, n, commands, c->rbuf, c->fbuf);
    if (rc == 0) memcpy(replies, c->rbuf, n * sizeof *replies);
    if (c->trace) {
        ws_round_trip rt = {
            .conn = c->label,
            .cause = cause ? cause : "",
            .index = c->stats.round_trips,
            .status = rc,
            .note = c->note,
            .n = n,
            .commands = commands,
            .replies = c->rbuf,
            .fates = c->fbuf,
        };
        c->trace(c->trace_ud, &rt);
    }
    return rc;
}

/* ----- Text ---------------------------------------------------------------------------- */

/* The escape of byte ch in a quoted argument (\n, \xHH, \a and \b when letters_ab) into
 * out, and its length; 0 when ch stands for itself. */
size_t wsi_escape(unsigned char ch, int letters_ab, char out[4])
{
    static const char hex[] = "0123456789abcdef";
    char e = 0;
    switch (ch) {
    case '\\': e = '\\'; break;
    case '"': e = '"'; break;
    case '\n': e = 'n'; break;
    case '\r': e = 'r'; break;
    case '\t': e = 't'; break;
    case '\a': e = letters_ab ? 'a' : 0; break;
    case '\b': e = letters_ab ? 'b' : 0; break;
    default:
        if (ch >= 32 && ch < 127) return 0;
    }
    out[0] = '\\';
    if (e) {
        out[1] = e;
        return 2;
    }
    out[1] = 'x';
    out[2] = hex[ch >> 4];
    out[3] = hex[ch & 15];
    return 4;
}

/* Whether ch stands for itself inside "...". */
static inline int quote_plain(unsigned char ch) { return ch >= 32 && ch < 127 && ch != '"' && ch != '\\'; }

/* Hands put the quoted form of n bytes ("..." with redis-cli's escapes), in pieces. */
void wsi_quote(const char *p, size_t n, int letters_ab,
               void (*put)(void *ud, const char *bytes, size_t len), void *ud)
{
    /* The quoted text is gathered in a small buffer and handed over in pieces: binary
     * values (frames, recovery members) escape nearly every byte, and two calls of put
     * per byte were most of what quoting them cost.  Runs of plain bytes (ids, payloads:
     * most of what is quoted) are copied whole. */
    char buf[256];
    size_t at = 0;
    buf[at++] = '"';
    for (size_t i = 0; i < n;) {
        size_t j = i;
        while (j < n && quote_plain((unsigned char)p[j])) j++;
        if (j - i > sizeof buf - at) {
            put(ud, buf, at);
            at = 0;
            if (j - i > sizeof buf) {
                put(ud, p + i, j - i);
                i = j;
            }
        }
        if (j > i) {
            memcpy(buf + at, p + i, j - i);
            at += j - i;
            i = j;
        }
        if (i == n) break;
        if (at > sizeof buf - 4) {
            put(ud, buf, at);
            at = 0;
        }
        at += wsi_escape((unsigned char)p[i++], letters_ab, buf + at);
    }
    if (at > sizeof buf - 1) {
        put(ud, buf, at);
        at = 0;
    }
    buf[at++] = '"';
    put(ud, buf, at);
}

static void tb_sink(void *ud, const char *bytes, size_t len) { wsi_buf_xadd(ud, bytes, len); }

/* "..." with redis-cli's escapes (\n \r \t \a \b \" \\ \xHH), the form fr_split_line
 * reads back. */
static void tb_quoted(wsi_buf *b, const char *s, size_t n) { wsi_quote(s, n, 1, tb_sink, b); }

/* v in decimal, written backwards from the end of buf; returns where it starts. */
char *wsi_decimal(char buf[24], long long v)
{
    char *p = buf + 24;
    unsigned long long u = v < 0 ? 0ULL - (unsigned long long)v : (unsigned long long)v;
    do {
        *--p = (char)('0' + u % 10);
        u /= 10;
    } while (u);
    if (v < 0) *--p = '-';
    return p;
}

/* Appends v in decimal. */
static void tb_ll(wsi_buf *b, long long v)
{
    char tmp[24];
    char *p = wsi_decimal(tmp, v);
    wsi_buf_xadd(b, p, (size_t)(tmp + sizeof tmp - p));
}

/* An argument as typed into redis-cli: bare when that splits back to the same bytes. */
static void tb_arg(wsi_buf *b, const char *s, size_t n)
{
    int bare = n > 0;
    for (size_t i = 0; i < n && bare; i++) {
        unsigned char ch = (unsigned char)s[i];
        if (ch <= 32 || ch >= 127 || ch == '"' || ch == '\'' || ch == '\\') bare = 0;
    }
    if (bare) wsi_buf_xadd(b, s, n);
    else tb_quoted(b, s, n);
}

/* Appends a reply tree in the trace's notation (+status, -error, :n, "bulk", [a, b]). */
static void tb_reply(wsi_buf *b, const fr_reply *r)
{
    switch (r->type) {
    case FR_REPLY_STATUS: wsi_buf_xputs(b, "+"); wsi_buf_xadd(b, r->str, r->len); break;
    case FR_REPLY_ERROR: wsi_buf_xputs(b, "-"); wsi_buf_xadd(b, r->str, r->len); break;
    case FR_REPLY_INTEGER:
        wsi_buf_xadd(b, ":", 1);
        tb_ll(b, r->integer);
        break;
    case FR_REPLY_BULK: tb_quoted(b, r->str, r->len); break;
    case FR_REPLY_NIL: wsi_buf_xputs(b, "$-1"); break;
    case FR_REPLY_NIL_ARRAY: wsi_buf_xputs(b, "*-1"); break;
    case FR_REPLY_ARRAY:
        wsi_buf_xputs(b, "[");
        for (size_t i = 0; i < r->count; i++) {
            if (i) wsi_buf_xputs(b, ", ");
            tb_reply(b, &r->elements[i]);
        }
        wsi_buf_xputs(b, "]");
        break;
    default: wsi_buf_xprintf(b, "(reply type %d)", (int)r->type); break;
    }
}

/* The text, handed over ("" when nothing was added); *len its length when len is set. */
static char *tb_finish(wsi_buf *b, size_t *len)
{
    if (len) *len = b->len;
    return wsi_buf_xtake(b);
}

/* A reply as the trace shows it ("(none)" for NULL); the caller frees it; NULL when out of
 * memory. */
char *ws_reply_text(const fr_reply *r, size_t *len)
{
    wsi_buf b = {0};
    if (r) tb_reply(&b, r);
    else wsi_buf_xputs(&b, "(none)");
    return tb_finish(&b, len);
}

/* A round trip as the trace shows it: its header line, then one line per command with its
 * reply and fate; the caller frees it. */
char *ws_round_trip_text(const ws_round_trip *rt, size_t *len)
{
    wsi_buf b = {0};
    wsi_buf_xprintf(&b, "#%llu %s", (unsigned long long)rt->index, rt->conn);
    if (rt->cause && rt->cause[0]) {
        wsi_buf_xputs(&b, " (");
        wsi_buf_xputs(&b, rt->cause);
        wsi_buf_xputs(&b, ")");
    }
    wsi_buf_xputs(&b, ": ");
    wsi_buf_xputs(&b, rt->status == 0 ? "ok" : ws_err_name(rt->status));
    if (rt->note && rt->note[0]) {
        wsi_buf_xputs(&b, ", ");
        wsi_buf_xputs(&b, rt->note);
    }
    wsi_buf_xputs(&b, "\n");
    for (size_t i = 0; i < rt->n; i++) {
        const fr_command *cmd = &rt->commands[i];
        wsi_buf_xputs(&b, "  ");
        for (int k = 0; k < cmd->argc; k++) {
            if (k) wsi_buf_xputs(&b, " ");
            const char *a = cmd->argv[k];
            tb_arg(&b, a, cmd->argvlen ? cmd->argvlen[k] : strlen(a));
        }
        wsi_buf_xputs(&b, " -> ");
        const fr_reply *r = rt->replies ? rt->replies[i] : NULL;
        if (r) tb_reply(&b, r);
        switch (rt->fates ? rt->fates[i] : WS_FATE_REPLIED) {
        case WS_FATE_REPLIED: break;
        case WS_FATE_INJECTED: wsi_buf_xputs(&b, " (injected)"); break;
        case WS_FATE_LOST: wsi_buf_xputs(&b, r ? " (lost)" : "(applied, reply lost)"); break;
        case WS_FATE_UNSENT: wsi_buf_xputs(&b, "(not sent)"); break;
        case WS_FATE_UNKNOWN: wsi_buf_xputs(&b, "(sent, outcome unknown)"); break;
        default: break;
        }
        wsi_buf_xputs(&b, "\n");
    }
    return tb_finish(&b, len);
}
