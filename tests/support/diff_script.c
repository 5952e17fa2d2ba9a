/* diff_script.c -- parse differential test scripts and compare raw replies.
 *
 * The command part of a line is split by fr_split_line (redis-cli's rules), so a script
 * line means exactly what it would mean typed into redis-cli.  Before splitting, the line
 * is scanned once with the same rules to find where a quoting error is, because
 * fr_split_line only says that the line does not split.
 */
#include "diff_script.h"
#include "wsi_alloc.h"

#include <ctype.h>
#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "fakeredis.h"

/* ----- Parsing ------------------------------------------------------------------------ */

static int set_error(ds_error *err, int col, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static int set_error(ds_error *err, int col, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    err->col = col;
    vsnprintf(err->msg, sizeof err->msg, fmt, ap);
    va_end(ap);
    return -1;
}

static int is_hex(int c) {
    return isxdigit((unsigned char)c) != 0;
}

/* Scans a command the way redis-cli's splitter reads it and reports the first quoting
 * error: an unterminated quote (at the opening quote) or a closing quote glued to the
 * next token.  base is the column of cmd[0].  Returns 0 when the command splits. */
static int check_quotes(const char *cmd, int base, ds_error *err) {
    const char *p = cmd;
    for (;;) {
        while (*p && isspace((unsigned char)*p)) p++;
        if (!*p) return 0;
        int done = 0;
        char q = 0;              /* the quote the current quoted part opened with, or 0 */
        const char *open = NULL; /* where it opened */
        while (!done) {
            if (q) {
                /* In "...": \xHH and any \c escape; in '...': only \' does. */
                if (q == '"' && p[0] == '\\' && p[1] == 'x' && is_hex(p[2]) && is_hex(p[3])) {
                    p += 3;
                } else if (p[0] == '\\' && (q == '"' ? p[1] != '\0' : p[1] == '\'')) {
                    p++;
                } else if (*p == q) {
                    if (p[1] && !isspace((unsigned char)p[1])) {
                        return set_error(err, base + (int)(p - cmd) + 1,
                                         "closing quote must be followed by a space");
                    }
                    done = 1;
                } else if (!*p) {
                    return set_error(err, base + (int)(open - cmd),
                                     "unbalanced quotes: this %c is never closed", q);
                }
            } else {
                switch (*p) {
                case ' ': case '\n': case '\r': case '\t': case '\0':
                    done = 1;
                    break;
                case '"':
                case '\'':
                    q = *p;
                    open = p;
                    break;
                default:
                    break;
                }
            }
            if (*p) p++;
        }
    }
}

/* Length of the token at p (up to white space or the end). */
static size_t token_len(const char *p) {
    size_t n = 0;
    while (p[n] && !isspace((unsigned char)p[n])) n++;
    return n;
}

/* Parses a directive ("!sleep 10", "!cluster") starting at p (column col). */
static int parse_directive(const char *p, int col, const char *line, ds_line *out,
                           ds_error *err) {
    size_t n = token_len(p);
    const char *q = p + n;
    while (*q && isspace((unsigned char)*q)) q++;
    int argcol = (int)(q - line) + 1;
    if (n == 6 && !memcmp(p, "!sleep", 6)) {
        if (!*q) return set_error(err, argcol, "!sleep needs a number of milliseconds");
        size_t an = token_len(q);
        char *end;
        errno = 0;
        long ms = strtol(q, &end, 10);
        if (!isdigit((unsigned char)*q) || end != q + an || errno || ms > DS_MAX_SLEEP_MS) {
            return set_error(err, argcol,
                             "!sleep wants milliseconds, an integer from 0 to %d",
                             DS_MAX_SLEEP_MS);
        }
        q += an;
        while (*q && isspace((unsigned char)*q)) q++;
        if (*q) return set_error(err, (int)(q - line) + 1, "!sleep takes one argument");
        out->kind = DS_SLEEP;
        out->sleep_ms = ms;
        return 1;
    }
    if (n == 8 && !memcmp(p, "!cluster", 8)) {
        if (*q) return set_error(err, argcol, "!cluster takes no argument");
        out->kind = DS_CLUSTER;
        return 1;
    }
    if (n == 7 && !memcmp(p, "!events", 7)) {
        if (*q) return set_error(err, argcol, "!events takes no argument");
        out->kind = DS_EVENTS;
        return 1;
    }
    if (n == 7 && !memcmp(p, "!config", 7)) {
        /* two plain words: a parameter name and its value */
        const char *w[2];
        size_t wl[2];
        for (int i = 0; i < 2; i++) {
            if (!*q) return set_error(err, (int)(q - line) + 1,
                                      "!config needs a parameter name and a value");
            w[i] = q;
            wl[i] = token_len(q);
            q += wl[i];
            while (*q && isspace((unsigned char)*q)) q++;
        }
        if (*q) return set_error(err, (int)(q - line) + 1, "!config takes two arguments");
        out->argv = wsi_calloc(2, sizeof(*out->argv));
        out->argvlen = wsi_calloc(2, sizeof(*out->argvlen));
        if (!out->argv || !out->argvlen) return set_error(err, col, "out of memory");
        out->argc = 2;
        for (int i = 0; i < 2; i++) {
            if (!(out->argv[i] = wsi_memdup(w[i], wl[i])))
                return set_error(err, col, "out of memory");
            out->argvlen[i] = wl[i];
        }
        out->kind = DS_CONFIG;
        return 1;
    }
    if (n == 12 && !memcmp(p, "!dumprestore", 12)) {
        /* plain words: the source key, the destination key, the TTL, RESTORE's options */
        const char *w[16];
        size_t wl[16];
        int nw = 0;
        while (*q) {
            if (nw == 16) return set_error(err, (int)(q - line) + 1, "!dumprestore: too many words");
            w[nw] = q;
            wl[nw] = token_len(q);
            q += wl[nw++];
            while (*q && isspace((unsigned char)*q)) q++;
        }
        if (nw < 3) return set_error(err, argcol, "!dumprestore needs SRC DST TTL [OPTION...]");
        out->argv = wsi_calloc((size_t)nw, sizeof(*out->argv));
        out->argvlen = wsi_calloc((size_t)nw, sizeof(*out->argvlen));
        if (!out->argv || !out->argvlen) return set_error(err, col, "out of memory");
        out->argc = nw;
        for (int i = 0; i < nw; i++) {
            if (!(out->argv[i] = wsi_memdup(w[i], wl[i])))
                return set_error(err, col, "out of memory");
            out->argvlen[i] = wl[i];
        }
        out->kind = DS_DUMPRESTORE;
        return 1;
    }
    return set_error(err, col,
                     "unknown directive '%.*s' (expected !sleep, !config, !events, "
                     "!dumprestore or !cluster)",
                     (int)n, p);
}

int ds_parse_line(const char *line_in, int lineno, ds_line *out, ds_error *err) {
    memset(out, 0, sizeof *out);
    err->col = 0;
    err->msg[0] = '\0';

    /* Work on a copy without the trailing white space (and \r of a CRLF file). */
    size_t len = strlen(line_in);
    while (len > 0 && isspace((unsigned char)line_in[len - 1])) len--;
    char *line = wsi_xmalloc(len + 1);
    memcpy(line, line_in, len);
    line[len] = '\0';

    const char *p = line;
    while (*p && isspace((unsigned char)*p)) p++;
    if (!*p || *p == '#') {
        free(line);
        return 0;
    }
    out->lineno = lineno;
    out->client = 1;
    out->text = wsi_xstrdup(p);

    int rc;
    if (*p == '!') {
        rc = parse_directive(p, (int)(p - line) + 1, line, out, err);
        goto done;
    }

    /* Modifiers, in any order, before the command. */
    int seen_client = 0;
    for (;;) {
        while (*p && isspace((unsigned char)*p)) p++;
        int col = (int)(p - line) + 1;
        size_t n = token_len(p);
        if (*p == '<') {
            if (n < 3 || p[n - 1] != '>') {
                rc = set_error(err, col, "a client modifier looks like <N>, N from 1 to %d",
                               DS_MAX_CLIENTS);
                goto done;
            }
            long v = 0;
            size_t i;
            for (i = 1; i < n - 1 && isdigit((unsigned char)p[i]) && v <= DS_MAX_CLIENTS; i++) {
                v = v * 10 + (p[i] - '0');
            }
            if (i != n - 1 || v < 1 || v > DS_MAX_CLIENTS) {
                rc = set_error(err, col, "bad client '%.*s': use <1> to <%d>", (int)n, p,
                               DS_MAX_CLIENTS);
                goto done;
            }
            if (seen_client) {
                rc = set_error(err, col, "more than one client modifier");
                goto done;
            }
            seen_client = 1;
            out->client = (int)v;
        } else if (*p == '@') {
            if (n == 7 && !memcmp(p, "@sorted", 7)) {
                out->flags |= DS_SORTED;
            } else if (n == 5 && !memcmp(p, "@type", 5)) {
                out->flags |= DS_TYPE;
            } else if (n == 5 && !memcmp(p, "@fake", 5)) {
                out->flags |= DS_FAKE;
            } else if (n == 5 && !memcmp(p, "@near", 5)) {
                out->flags |= DS_NEAR;
            } else if (n == 5 && !memcmp(p, "@idle", 5)) {
                out->flags |= DS_IDLE;
            } else if (n == 4 && !memcmp(p, "@len", 4)) {
                out->flags |= DS_LEN;
            } else {
                rc = set_error(err, col,
                               "unknown modifier '%.*s' (expected @sorted, @type, @len, @near, "
                               "@idle or @fake)",
                               (int)n, p);
                goto done;
            }
        } else if (*p == '!') {
            rc = set_error(err, col, "a directive cannot have modifiers");
            goto done;
        } else if (!*p) {
            rc = set_error(err, col, "modifiers without a command");
            goto done;
        } else {
            break;
        }
        p += n;
    }

    int base = (int)(p - line) + 1;
    if (check_quotes(p, base, err) != 0) {
        rc = -1;
        goto done;
    }
    int argc = fr_split_line(p, &out->argv, &out->argvlen);
    if (argc <= 0) {
        out->argv = NULL;
        out->argvlen = NULL;
        rc = set_error(err, base, "the command does not split (fr_split_line failed)");
        goto done;
    }
    out->argc = argc;
    out->kind = DS_COMMAND;
    rc = 1;

done:
    free(line);
    if (rc != 1) ds_line_free(out);
    return rc;
}

void ds_line_free(ds_line *l) {
    if (l->argv) fr_split_free(l->argc, l->argv, l->argvlen);
    free(l->text);
    free(l->expected);
    memset(l, 0, sizeof *l);
}

ds_script *ds_parse_text(const char *name, const char *text, size_t len, FILE *errout) {
    ds_script *s = wsi_xcalloc(1, sizeof *s);
    s->name = wsi_xstrdup(name);
    s->nclients = 1;
    size_t cap = 0;
    int errors = 0;
    int seen_any = 0; /* a command or directive came before: !cluster is too late */

    size_t pos = 0;
    rh_buf line = {0};
    for (int lineno = 1; pos < len; lineno++) {
        const char *nl = memchr(text + pos, '\n', len - pos);
        size_t end = nl ? (size_t)(nl - text) : len;
        rh_buf_reset(&line);
        rh_buf_append(&line, text + pos, end - pos);
        pos = nl ? end + 1 : len;

        ds_line l;
        ds_error err;
        int rc;
        const char *first = line.data;
        while (first < line.data + line.len && isspace((unsigned char)*first)) first++;
        if (first < line.data + line.len && *first == '=') {
            /* a recorded reply: "= <escaped bytes>", for the command line just before */
            ds_line *prev = s->count ? &s->lines[s->count - 1] : NULL;
            const char *q = first + 1;
            if (q < line.data + line.len && *q == ' ') q++;
            size_t qlen = line.len - (size_t)(q - line.data);
            while (qlen > 0 && (q[qlen - 1] == '\r' || q[qlen - 1] == ' ')) qlen--;
            rh_buf raw = {0};
            size_t bad = 0;
            int col = (int)(first - line.data) + 1;
            const char *why = NULL;
            if (!prev || prev->kind != DS_COMMAND || prev->lineno != lineno - 1) {
                why = "a reply line ('=') must come right after the command it answers";
            } else if (prev->has_expected) {
                why = "a second reply line for one command";
            } else if (ds_unescape(q, qlen, &raw, &bad) != 0) {
                why = "bad escape in the reply: write \\\\, \\r, \\n, \\t or \\xHH";
                col = (int)(q - line.data) + (int)bad + 1;
            }
            if (why) {
                if (errout) fprintf(errout, "%s:%d:%d: error: %s\n", name, lineno, col, why);
                errors++;
            } else {
                prev->has_expected = 1;
                prev->expected = raw.data ? raw.data : wsi_xstrdup("");
                prev->expected_len = raw.len;
                raw.data = NULL;
            }
            rh_buf_free(&raw);
            seen_any = 1;
            continue;
        }
        if (memchr(line.data, '\0', line.len)) {
            rc = set_error(&err, (int)strlen(line.data) + 1,
                           "NUL byte in the script (write \"\\x00\" inside double quotes)");
        } else {
            rc = ds_parse_line(line.data, lineno, &l, &err);
        }
        if (rc == 0) continue;
        if (rc < 0) {
            if (errout) fprintf(errout, "%s:%d:%d: error: %s\n", name, lineno, err.col, err.msg);
            errors++;
            seen_any = 1;
            continue;
        }
        if (l.kind == DS_CLUSTER) {
            if (seen_any) {
                if (errout) {
                    fprintf(errout, "%s:%d:1: error: !cluster must come before every command "
                                    "and directive\n", name, lineno);
                }
                errors++;
            }
            s->cluster = 1;
            seen_any = 1;
            ds_line_free(&l);
            continue;
        }
        seen_any = 1;
        if (l.kind == DS_COMMAND && l.client > s->nclients) s->nclients = l.client;
        if (s->count == cap) {
            cap = cap ? cap * 2 : 64;
            ds_line *nl2 = wsi_xrealloc(s->lines, cap * sizeof *nl2);
            s->lines = nl2;
        }
        s->lines[s->count++] = l;
    }
    rh_buf_free(&line);
    if (errors) {
        ds_script_free(s);
        return NULL;
    }
    return s;
}

ds_script *ds_parse_file(const char *path, FILE *errout) {
    FILE *f = fopen(path, "rb");
    if (!f) {
        if (errout) fprintf(errout, "%s: error: cannot open: %s\n", path, strerror(errno));
        return NULL;
    }
    rh_buf b = {0};
    char chunk[8192];
    size_t n;
    while ((n = fread(chunk, 1, sizeof chunk, f)) > 0) rh_buf_append(&b, chunk, n);
    int bad = ferror(f);
    fclose(f);
    if (bad) {
        if (errout) fprintf(errout, "%s: error: read failed\n", path);
        rh_buf_free(&b);
        return NULL;
    }
    ds_script *s = ds_parse_text(path, b.data ? b.data : "", b.len, errout);
    rh_buf_free(&b);
    return s;
}

void ds_script_free(ds_script *s) {
    if (!s) return;
    for (size_t i = 0; i < s->count; i++) ds_line_free(&s->lines[i]);
    free(s->lines);
    free(s->name);
    free(s);
}

/* ----- Comparing replies -------------------------------------------------------------- */

/* Finds the "\r\n" ending the header line at p (within len bytes); returns the offset of
 * the '\r', or -1. */
static long header_end(const char *p, size_t len) {
    for (size_t i = 1; i + 1 < len; i++) {
        if (p[i] == '\r' && p[i + 1] == '\n') return (long)i;
    }
    return -1;
}

static int cmp_bufs(const void *a, const void *b) {
    const rh_buf *x = a, *y = b;
    size_t n = x->len < y->len ? x->len : y->len;
    int c = n ? memcmp(x->data, y->data, n) : 0;
    if (c) return c;
    return x->len < y->len ? -1 : x->len > y->len;
}

/* Writes the sorted form of the one reply at raw to out; *used gets its length. */
static int sort_one(const char *raw, size_t len, size_t *used, rh_buf *out, int depth) {
    if (depth > 256) return -1;
    long cr = header_end(raw, len);
    if (cr < 0) return -1;
    size_t hdr = (size_t)cr + 2;
    char type = raw[0];
    if (type == '+' || type == '-' || type == ':') {
        rh_buf_append(out, raw, hdr);
        *used = hdr;
        return 0;
    }
    if (type != '$' && type != '*') return -1;
    char num[32];
    if ((size_t)cr - 1 >= sizeof num) return -1;
    memcpy(num, raw + 1, (size_t)cr - 1);
    num[cr - 1] = '\0';
    char *end;
    long long n = strtoll(num, &end, 10);
    if (end == num || *end) return -1;
    if (type == '$') {
        size_t total = hdr + (n >= 0 ? (size_t)n + 2 : 0);
        if (total > len) return -1;
        rh_buf_append(out, raw, total);
        *used = total;
        return 0;
    }
    if (n <= 0) {
        rh_buf_append(out, raw, hdr);
        *used = hdr;
        return 0;
    }
    if ((unsigned long long)n > len) return -1; /* every element takes at least 3 bytes */
    rh_buf *elems = wsi_xcalloc((size_t)n, sizeof *elems);
    size_t off = hdr;
    int rc = 0;
    for (long long i = 0; i < n && rc == 0; i++) {
        size_t u = 0;
        rc = sort_one(raw + off, len - off, &u, &elems[i], depth + 1);
        off += u;
    }
    if (rc == 0) {
        qsort(elems, (size_t)n, sizeof *elems, cmp_bufs);
        rh_buf_append(out, raw, hdr);
        for (long long i = 0; i < n; i++) rh_buf_append(out, elems[i].data, elems[i].len);
        *used = off;
    }
    for (long long i = 0; i < n; i++) rh_buf_free(&elems[i]);
    free(elems);
    return rc;
}

int ds_sort_reply(const char *raw, size_t len, rh_buf *out) {
    size_t used = 0;
    size_t start = out->len;
    if (sort_one(raw, len, &used, out, 0) != 0 || used != len) {
        out->len = start;
        if (out->data) out->data[start] = '\0';
        return -1;
    }
    return 0;
}

/* Reads a RESP header line's number at *p (after the type byte) and moves past "\r\n". */
static int near_number(const char **p, const char *end, long long *v) {
    const char *q = *p;
    int neg = 0;
    unsigned long long u = 0;
    if (q < end && *q == '-') {
        neg = 1;
        q++;
    }
    while (q < end && *q >= '0' && *q <= '9') u = u * 10 + (unsigned long long)(*q++ - '0');
    if (end - q < 2 || q[0] != '\r' || q[1] != '\n') return -1;
    *v = neg ? -(long long)u : (long long)u;
    *p = q + 2;
    return 0;
}

/* Whether the reply at p is an integer reply (its type byte). */
static int is_int_at(const char *p, const char *e) { return p < e && *p == ':'; }

/* Skips one complete reply at *p; 0, or -1 when it is cut short. */
static int skip_reply(const char **p, const char *e) {
    const char *q = *p;
    if (q >= e) return -1;
    char type = *q++;
    long long v;
    switch (type) {
    case '$':
        if (near_number(&q, e, &v)) return -1;
        if (v >= 0) {
            if (e - q < v + 2) return -1;
            q += v + 2;
        }
        break;
    case '*':
        if (near_number(&q, e, &v)) return -1;
        for (long long i = 0; i < v; i++)
            if (skip_reply(&q, e)) return -1;
        break;
    default: {
        const char *l = memchr(q, '\n', (size_t)(e - q));
        if (!l) return -1;
        q = l + 1;
    }
    }
    *p = q;
    return 0;
}

/* Walks two replies in step: the same shape and bytes everywhere, except that integer
 * replies may differ by up to DS_NEAR_MS (idle times and delivery times, read from two
 * clocks a few microseconds apart).  loose: this reply's integers may differ so (@near
 * passes 1 everywhere).  idle_only (@idle): only the third element of a four-element
 * array whose last two elements are integers on both sides is loose (an entry's idle
 * time); every other integer must be equal. */
static int near_equal_mode(const char **pa, const char *ea, const char **pb, const char *eb,
                           int idle_only, int loose) {
    if (*pa >= ea || *pb >= eb || **pa != **pb) return 0;
    char type = **pa;
    (*pa)++;
    (*pb)++;
    long long va, vb;
    switch (type) {
    case ':':
        if (near_number(pa, ea, &va) || near_number(pb, eb, &vb)) return 0;
        return loose ? llabs(va - vb) <= DS_NEAR_MS : va == vb;
    case '$':
        if (near_number(pa, ea, &va) || near_number(pb, eb, &vb) || va != vb) return 0;
        if (va < 0) return 1;
        if (ea - *pa < va + 2 || eb - *pb < va + 2 || memcmp(*pa, *pb, (size_t)va)) return 0;
        *pa += va + 2;
        *pb += va + 2;
        return 1;
    case '*': {
        if (near_number(pa, ea, &va) || near_number(pb, eb, &vb) || va != vb) return 0;
        int entry = 0; /* @idle: a four-element entry ending with two integers */
        if (idle_only && va == 4) {
            const char *qa = *pa, *qb = *pb;
            entry = !skip_reply(&qa, ea) && !skip_reply(&qa, ea) && !skip_reply(&qb, eb) &&
                    !skip_reply(&qb, eb) && is_int_at(qa, ea) && is_int_at(qb, eb) &&
                    !skip_reply(&qa, ea) && !skip_reply(&qb, eb) && is_int_at(qa, ea) &&
                    is_int_at(qb, eb);
        }
        for (long long i = 0; i < va; i++) {
            int l = idle_only ? entry && i == 2 : loose;
            if (!near_equal_mode(pa, ea, pb, eb, idle_only, l)) return 0;
        }
        return 1;
    }
    default: { /* + and -: the whole line */
        const char *la = memchr(*pa, '\n', (size_t)(ea - *pa));
        const char *lb = memchr(*pb, '\n', (size_t)(eb - *pb));
        if (!la || !lb || la - *pa != lb - *pb || memcmp(*pa, *pb, (size_t)(la - *pa))) return 0;
        *pa = la + 1;
        *pb = lb + 1;
        return 1;
    }
    }
}

int ds_replies_equal(unsigned flags, const char *a, size_t alen, const char *b, size_t blen) {
    if (flags & DS_TYPE) return alen > 0 && blen > 0 && a[0] == b[0];
    if (flags & DS_LEN) {
        /* The first line, up to and including its \r\n. */
        const char *ea = memchr(a, '\n', alen), *eb = memchr(b, '\n', blen);
        return ea && eb && ea - a == eb - b && !memcmp(a, b, (size_t)(ea - a));
    }
    if (flags & (DS_NEAR | DS_IDLE)) {
        const char *pa = a, *pb = b;
        int idle_only = !(flags & DS_NEAR);
        return near_equal_mode(&pa, a + alen, &pb, b + blen, idle_only, !idle_only) &&
               pa == a + alen && pb == b + blen;
    }
    if (flags & DS_SORTED) {
        rh_buf sa = {0}, sb = {0};
        if (ds_sort_reply(a, alen, &sa) == 0 && ds_sort_reply(b, blen, &sb) == 0) {
            int eq = sa.len == sb.len && (sa.len == 0 || !memcmp(sa.data, sb.data, sa.len));
            rh_buf_free(&sa);
            rh_buf_free(&sb);
            return eq;
        }
        rh_buf_free(&sa);
        rh_buf_free(&sb);
        /* Not parseable: fall back to the bytes. */
    }
    return alen == blen && (alen == 0 || !memcmp(a, b, alen));
}

void ds_escape(const char *p, size_t len, rh_buf *out) {
    for (size_t i = 0; i < len; i++) {
        unsigned char ch = (unsigned char)p[i];
        switch (ch) {
        case '\\': rh_buf_append(out, "\\\\", 2); break;
        case '\r': rh_buf_append(out, "\\r", 2); break;
        case '\n': rh_buf_append(out, "\\n", 2); break;
        case '\t': rh_buf_append(out, "\\t", 2); break;
        default:
            if (ch >= 0x20 && ch < 0x7f) {
                rh_buf_append(out, &p[i], 1);
            } else {
                rh_buf_printf(out, "\\x%02x", ch);
            }
        }
    }
}

int ds_unescape(const char *p, size_t len, rh_buf *out, size_t *bad) {
    for (size_t i = 0; i < len; i++) {
        if (p[i] != '\\') {
            rh_buf_append(out, &p[i], 1);
            continue;
        }
        char ch = i + 1 < len ? p[i + 1] : '\0';
        const char *lit = ch == '\\' ? "\\" : ch == 'r' ? "\r" : ch == 'n' ? "\n"
                        : ch == 't' ? "\t" : NULL;
        if (lit) {
            rh_buf_append(out, lit, 1);
            i++;
        } else if (ch == 'x' && i + 3 < len && is_hex(p[i + 2]) && is_hex(p[i + 3])) {
            char hex[3] = {p[i + 2], p[i + 3], '\0'};
            char byte = (char)strtol(hex, NULL, 16);
            rh_buf_append(out, &byte, 1);
            i += 3;
        } else {
            if (bad) *bad = i;
            return -1;
        }
    }
    return 0;
}

void ds_show(const char *label, const char *p, size_t len, size_t max) {
    rh_buf e = {0};
    size_t n = len > max ? max : len;
    ds_escape(p, n, &e);
    printf("  %s: %s", label, e.data ? e.data : "");
    if (n < len) printf("... (%zu bytes in all)", len);
    printf("\n");
    rh_buf_free(&e);
}

void ds_close_pair(rh_conn **real, fr_client **fake) {
    rh_close(*real);
    *real = NULL;
    if (*fake) fr_client_free(*fake);
    *fake = NULL;
}
