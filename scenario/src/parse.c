/* parse.c -- the scenario parser.  Line oriented (docs/scenarios.md):
 *
 *   file       := { line }
 *   line       := [ statement ] [ "#" comment ]      blank lines and comments are free
 *   token      := word | "double quoted" (\n \r \t \\ \" \xHH) | 'single quoted'
 *
 * The statements are the rows of STMTS (below), Redis's command table the scenario way:
 * each row is a keyword (one or two words; "ALIAS:" for a handler action), its kind (a
 * line about the file, the world, a step, an action, an expectation), its arguments as
 * the grammar writes them, and its parse function.  The grammar docs/scenarios.md shows
 * (wsim grammar), the usage in messages and the list in "unknown statement" come from
 * it.  `scenario` and `needs fake|real` take the rest of their line as written; the
 * others are tokenized.  Indented lines belong to the block statement above them.
 *
 * Every error of a file is said (one per line, WSC_MAX_ERRORS at most), in line order;
 * names and references are checked once every line reads.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "wsi_alloc.h"
#include "wsc_int.h"
#include "wsi_strmap.h"
#include "wsi_io.h"

/* ----- Memory: a ledger, and out of memory as one jump ------------------------------------ */

/* Every block the parser allocates -- the scenario's and its own scratch (tokens, the
 * error list, the name lists) -- starts with this header, linking it into the scenario's
 * ledger (wsc_scenario.mem, a ring).  wsc_free frees the ledger.  Out of memory anywhere
 * in a parse jumps back to wsc_parse, which frees the ledger and answers "name:0:0:
 * error: out of memory": nothing half-built leaks, and no call site has a failure path
 * to get wrong.  The parse under way is per thread. */
typedef union phdr {
    wsc_mem l;
    max_align_t align;
} phdr;

static _Thread_local struct parse_cur {
    wsc_mem *ledger;      /* the scenario being parsed: its ring */
    jmp_buf *oom;         /* where out of memory jumps */
    wsi_strmap names[2];  /* validate's name sets (outside the ledger), here rather than on
                             validate's stack so that the jump's landing can free them */
} cur;

static _Noreturn void out_of_memory(void) { longjmp(*cur.oom, 1); }

static void ledger_link(phdr *h)
{
    h->l.prev = cur.ledger;
    h->l.next = cur.ledger->next;
    cur.ledger->next->prev = &h->l;
    cur.ledger->next = &h->l;
}

static void ledger_unlink(phdr *h)
{
    h->l.prev->next = h->l.next;
    h->l.next->prev = h->l.prev;
}

/* n bytes in the ledger. */
static void *pmalloc(size_t n)
{
    if (n > SIZE_MAX - sizeof(phdr)) out_of_memory();
    phdr *h = wsi_malloc(sizeof *h + n);
    if (!h) out_of_memory();
    ledger_link(h);
    return h + 1;
}

static void *xcalloc(size_t n, size_t size)
{
    if (!n) n = 1;
    if (!size) size = 1;
    if (n > SIZE_MAX / size) out_of_memory();
    void *q = pmalloc(n * size);
    memset(q, 0, n * size);
    return q;
}

static void *xrealloc(void *q, size_t n)
{
    if (!q) return pmalloc(n ? n : 1);
    if (n > SIZE_MAX - sizeof(phdr)) out_of_memory();
    phdr *h = (phdr *)q - 1;
    ledger_unlink(h);
    phdr *g = wsi_realloc(h, sizeof *h + (n ? n : 1));
    if (!g) {
        ledger_link(h);
        out_of_memory();
    }
    ledger_link(g);
    return g + 1;
}

/* Room for element n (0-based) of an array that only ever grows one element at a time
 * from empty: its capacity is implied by its count (the next power of two), so it is
 * reallocated only when n is 0 or a power of two, and n appends cost O(log n)
 * reallocations and O(n) bytes copied, however long the file (issue 26: growing by one
 * made a 100,000-line scenario quadratic). */
static void *xgrow(void *q, size_t n, size_t size)
{
    if (n != 0 && (n & (n - 1)) != 0) return q;
    size_t cap = n ? 2 * n : 1;
    if (cap > SIZE_MAX / size) out_of_memory();
    return xrealloc(q, cap * size);
}

/* Frees a block of the ledger (NULL is accepted). */
static void pfree(void *q)
{
    if (!q) return;
    phdr *h = (phdr *)q - 1;
    ledger_unlink(h);
    wsi_free(h);
}

static char *xmemdup(const char *s, size_t len)
{
    char *d = pmalloc(len + 1);
    memcpy(d, s, len);
    d[len] = '\0';
    return d;
}

static char *xstrdup(const char *s) { return s ? xmemdup(s, strlen(s)) : NULL; }

/* ----- Errors ------------------------------------------------------------------------------ */

/* One error of the file, for the list wsc_parse gives back. */
typedef struct perror_ent {
    int line, col;
    char *msg; /* "name:line:col: error: what" */
} perror_ent;

struct stmt_def;

typedef struct parser {
    const char *name;
    perror_ent *errs;  /* the errors so far, at most one per line, WSC_MAX_ERRORS at most */
    size_t nerrs;
    int full;          /* WSC_MAX_ERRORS were said: the rest of the file is not read */
    int line;
    const char *raw;   /* the line being parsed, as written */
    size_t rawlen;
    const struct stmt_def *def; /* the statement table's row being parsed */
    char usage[256];   /* its usage line, for messages */
    int steps_seen;    /* a step came already: seed, start and cluster are too late */
    wsc_tok *tok;      /* the line's tokens (tokenize): one array for every line, grown
                          geometrically, so a file costs O(log) reallocations for them */
    size_t tok_cap;    /* tokens tok has room for */
    char *scratch;     /* a token being unescaped; room for the longest line so far */
    size_t scratch_cap;
} parser;

/* Where a comment starts in p[0..len): a '#' after whitespace, outside double quotes
 * (reply texts quote their strings: "a #b" keeps its '#'); len if none. */
static size_t comment_start(const char *p, size_t len)
{
    int inq = 0;
    for (size_t i = 0; i < len; i++) {
        if (inq && p[i] == '\\') {
            i++;
            continue;
        }
        if (p[i] == '"') inq = !inq;
        else if (!inq && p[i] == '#' && i > 0 && (p[i - 1] == ' ' || p[i - 1] == '\t'))
            return i;
    }
    return len;
}

static int perr(parser *p, int col, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static int perr(parser *p, int col, const char *fmt, ...)
{
    /* one error a line: the first is the one to fix (what follows on it may be noise) */
    for (size_t i = 0; i < p->nerrs; i++)
        if (p->errs[i].line == p->line) return -1;
    if (p->nerrs == WSC_MAX_ERRORS) {
        p->full = 1;
        return -1;
    }
    char raw[512], msg[2048];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(raw, sizeof raw, fmt, ap);
    va_end(ap);
    /* one line whatever the input held: control bytes are written as escapes */
    size_t k = 0;
    for (const unsigned char *c = (const unsigned char *)raw; *c && k + 5 < sizeof msg; c++) {
        if (*c == '\n') k += (size_t)snprintf(msg + k, sizeof msg - k, "\\n");
        else if (*c == '\r') k += (size_t)snprintf(msg + k, sizeof msg - k, "\\r");
        else if (*c == '\t') k += (size_t)snprintf(msg + k, sizeof msg - k, "\\t");
        else if (*c < 0x20 || *c == 0x7f) k += (size_t)snprintf(msg + k, sizeof msg - k, "\\x%02x", *c);
        else msg[k++] = (char)*c;
    }
    msg[k] = '\0';
    size_t n = strlen(p->name) + strlen(msg) + 64;
    char *e = pmalloc(n);
    snprintf(e, n, "%s:%d:%d: error: %s", p->name, p->line, col, msg);
    p->errs = xgrow(p->errs, p->nerrs, sizeof *p->errs);
    p->errs[p->nerrs++] = (perror_ent){p->line, col, e};
    return -1;
}

static int name_char(char c);

/* ----- Tokens ------------------------------------------------------------------------------- */

/* The value of hex digit c, or -1. */
static int hexval(char c)
{
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
}

/* Frees n tokens and their array. */
static void toks_free(wsc_tok *t, size_t n)
{
    for (size_t i = 0; i < n; i++) pfree(t[i].s);
    pfree(t);
}

/* Frees the strings of a line's n tokens; the array is the parser's, kept for the next
 * line (tokenize). */
static void toks_release(wsc_tok *t, size_t n)
{
    for (size_t i = 0; i < n; i++) pfree(t[i].s);
}

/* Room for one more token in the parser's array. */
static void tok_room(parser *p, size_t n)
{
    if (n < p->tok_cap) return;
    size_t cap = p->tok_cap ? 2 * p->tok_cap : 16;
    if (cap > SIZE_MAX / sizeof *p->tok) out_of_memory();
    p->tok = xrealloc(p->tok, cap * sizeof *p->tok);
    p->tok_cap = cap;
}

/* Splits one line (without its newline) into tokens; a '#' that starts a token starts a
 * comment.  Returns the count, or -1 after perr. */
static long tokenize(parser *p, const char *s, size_t len, wsc_tok **out)
{
    wsc_tok *t = p->tok;
    size_t n = 0;
    size_t i = 0;
    *out = NULL;
    /* a token unescapes into the scratch buffer, never longer than the line; it is
     * copied out at its length (a buffer the size of the rest of the line for each
     * token made a long line quadratic) */
    if (len + 1 > p->scratch_cap) {
        size_t cap = p->scratch_cap ? p->scratch_cap : 256;
        while (cap < len + 1) {
            if (cap > SIZE_MAX / 2) out_of_memory();
            cap *= 2;
        }
        pfree(p->scratch);
        p->scratch = pmalloc(cap);
        p->scratch_cap = cap;
    }
    char *buf = p->scratch;
    while (i < len) {
        while (i < len && (s[i] == ' ' || s[i] == '\t' || s[i] == '\r')) i++;
        if (i >= len || s[i] == '#') break;
        int col = (int)i + 1;
        size_t bl = 0;
        int quoted = 0;
        if (s[i] == '"') {
            quoted = 1;
            i++;
            int closed = 0;
            while (i < len) {
                char c = s[i];
                if (c == '"') {
                    closed = 1;
                    i++;
                    break;
                }
                if (c == '\\' && i + 1 < len) {
                    char e = s[i + 1];
                    i += 2;
                    switch (e) {
                    case 'n': buf[bl++] = '\n'; break;
                    case 'r': buf[bl++] = '\r'; break;
                    case 't': buf[bl++] = '\t'; break;
                    case '\\': buf[bl++] = '\\'; break;
                    case '"': buf[bl++] = '"'; break;
                    case 'x':
                        if (i + 1 < len && hexval(s[i]) >= 0 && hexval(s[i + 1]) >= 0) {
                            buf[bl++] = (char)(hexval(s[i]) * 16 + hexval(s[i + 1]));
                            i += 2;
                            break;
                        }
                        toks_release(t, n);
                        return perr(p, (int)i - 1, "bad \\x escape: two hex digits expected");
                    default:
                        toks_release(t, n);
                        return perr(p, (int)i - 1, "unknown escape \\%c in a quoted string", e);
                    }
                    continue;
                }
                buf[bl++] = c;
                i++;
            }
            if (!closed) {
                toks_release(t, n);
                return perr(p, col, "unbalanced quotes: the string opened here never closes");
            }
        } else if (s[i] == '\'') {
            quoted = 1;
            i++;
            int closed = 0;
            while (i < len) {
                if (s[i] == '\'') {
                    closed = 1;
                    i++;
                    break;
                }
                buf[bl++] = s[i++];
            }
            if (!closed) {
                toks_release(t, n);
                return perr(p, col, "unbalanced quotes: the string opened here never closes");
            }
        } else {
            while (i < len && s[i] != ' ' && s[i] != '\t' && s[i] != '\r') buf[bl++] = s[i++];
        }
        if (quoted && i < len && s[i] != ' ' && s[i] != '\t' && s[i] != '\r') {
            toks_release(t, n);
            return perr(p, (int)i + 1, "a quoted string must be followed by a space");
        }
        tok_room(p, n);
        t = p->tok;
        t[n++] = (wsc_tok){xmemdup(buf, bl), bl, col, quoted};
        if (!quoted && bl == 2 && memcmp(buf, "=>", 2) == 0) {
            /* What follows "=>" is an expected reply as the trace prints it (brackets,
             * quotes, '#' and all): the rest of the line, raw, as one token. */
            while (i < len && (s[i] == ' ' || s[i] == '\t')) i++;
            size_t e = i + comment_start(s + i, len - i);
            while (e > i && (s[e - 1] == ' ' || s[e - 1] == '\t' || s[e - 1] == '\r')) e--;
            if (e > i) {
                tok_room(p, n);
                t = p->tok;
                t[n++] = (wsc_tok){xmemdup(s + i, e - i), e - i, (int)i + 1, 0};
            }
            break;
        }
    }
    *out = t;
    return (long)n;
}

static int is(const wsc_tok *t, const char *w) { return !t->quoted && strcmp(t->s, w) == 0; }

/* A non-negative decimal number that fits in long long. */
static int number(parser *p, const wsc_tok *t, const char *what, long long *out)
{
    if (t->len == 0 || t->len > 18) return perr(p, t->col, "%s: a number expected, got '%s'", what, t->s);
    long long v = 0;
    for (size_t i = 0; i < t->len; i++) {
        if (t->s[i] < '0' || t->s[i] > '9')
            return perr(p, t->col, "%s: a number expected, got '%s'", what, t->s);
        v = v * 10 + (t->s[i] - '0');
    }
    *out = v;
    return 0;
}

/* ----- Statements ------------------------------------------------------------------------------ */

/* The form token t names (stream, reliable-list, list, channel) into *form; 0, or -1
 * after perr. */
static int form_of(parser *p, const wsc_tok *t, int *form)
{
    if (is(t, "stream")) *form = WS_FORM_STREAM;
    else if (is(t, "reliable-list")) *form = WS_FORM_RELIABLE_LIST;
    else if (is(t, "list")) *form = WS_FORM_PLAIN_LIST;
    else if (is(t, "channel")) *form = WS_FORM_CHANNEL;
    else
        return perr(p, t->col, "unknown form '%s' (stream, reliable-list, list or channel)",
                    t->s);
    return 0;
}

/* The free text that starts at token t and runs to the end of the line: the token's own
 * value when it is the last one and quoted ("ERR unknown command 'X'"), else the line as
 * written from there (quotes and all), without a trailing comment. */
static char *rest_text(const parser *p, const wsc_tok *t, size_t i, size_t n)
{
    if (i + 1 == n && t[i].quoted) return xmemdup(t[i].s, t[i].len);
    size_t b = (size_t)t[i].col - 1;
    if (b > p->rawlen) b = p->rawlen;
    size_t e = b + comment_start(p->raw + b, p->rawlen - b);
    while (e > b && (p->raw[e - 1] == ' ' || p->raw[e - 1] == '\t' || p->raw[e - 1] == '\r')) e--;
    return xmemdup(p->raw + b, e - b);
}

/* Copies tokens [from, to) into *out. */
static size_t copy_toks(const wsc_tok *t, size_t from, size_t to, wsc_tok **out)
{
    size_t n = to > from ? to - from : 0;
    *out = xcalloc(n ? n : 1, sizeof **out);
    for (size_t i = 0; i < n; i++) {
        (*out)[i] = t[from + i];
        (*out)[i].s = xmemdup(t[from + i].s, t[from + i].len);
    }
    return n;
}

/* Finds an unquoted "=>" in [from, n); returns its index or n. */
static size_t arrow(const wsc_tok *t, size_t from, size_t n)
{
    for (size_t i = from; i < n; i++)
        if (is(&t[i], "=>")) return i;
    return n;
}

/* How the trace writes byte v inside a quoted reply string (ws_reply_text, redis-cli's
 * notation): the byte itself when printable, \\ \" \n \r \t \a \b, else \x and two
 * lowercase hex digits.  out: NUL-terminated, at most 4 bytes. */
static void canonical_escape(int v, char out[5])
{
    static const char hex[] = "0123456789abcdef";
    const char *named = v == '\\' ? "\\\\" : v == '"' ? "\\\"" : v == '\n' ? "\\n"
                        : v == '\r' ? "\\r" : v == '\t' ? "\\t" : v == '\a' ? "\\a"
                        : v == '\b' ? "\\b" : NULL;
    if (named) {
        strcpy(out, named);
    } else if (v >= 32 && v < 127) {
        out[0] = (char)v;
        out[1] = '\0';
    } else {
        out[0] = '\\';
        out[1] = 'x';
        out[2] = hex[v >> 4];
        out[3] = hex[v & 15];
        out[4] = '\0';
    }
}

/* A word of s starting at i, for messages: up to a space, ',' or ']' (at least one byte,
 * at most 24). */
static int word_len(const char *s, size_t len, size_t i)
{
    size_t e = i + 1;
    while (e < len && e - i < 24 && s[e] != ' ' && s[e] != ',' && s[e] != ']') e++;
    return (int)(e - i);
}

/* Checks an expected reply -- the text after "=>", written as the trace prints replies
 * (ws_reply_text) -- and says where it is malformed, so that a reply that can never match
 * is a parse error, not a failed run.  col is the column of its first byte.
 *
 *   reply := ("+" | "-") TEXT            a status or an error: the rest is its text
 *          | item
 *   item  := '"' chars '"'               escapes \\ \" \n \r \t \a \b \xHH
 *          | ":" ["-"] digits | "$-1" | "*-1" | "<*>"
 *          | "[" [ item { ", " item } ] "]"
 *          | ("+" | "-") WORDS           inside an array: up to the next ',' or ']'
 *
 * Iterative (a stack of open brackets), so no input nests it deep. */
static int check_reply(parser *p, const char *s, size_t len, int col)
{
    if (len == 0 || s[0] == '+' || s[0] == '-') return 0; /* (empty: never, refusal() says) */
    size_t *open = NULL, depth = 0, cap = 0; /* offsets of the '[' not yet closed */
    size_t i = 0;
    int rc = 0, just_opened = 0;
    for (;;) {
        /* an item (or, right after '[', the ']' of an empty array) */
        if (i >= len) { /* only inside an array: the text is not empty, and a complete
                           top-level item ends the loop */
            rc = perr(p, col + (int)(depth ? open[depth - 1] : 0),
                      "unbalanced brackets in the expected reply: this '[' never closes");
            break;
        }
        char c = s[i];
        if (just_opened && c == ']') {
            just_opened = 0;
            depth--;
            i++;
        } else if (c == '[') {
            if (depth == cap) {
                cap = cap ? cap * 2 : 8;
                open = xrealloc(open, cap * sizeof *open);
            }
            open[depth++] = i++;
            just_opened = 1;
            continue;
        } else if (c == '"') {
            size_t q = i++;
            int closed = 0;
            while (i < len && !closed) {
                if (s[i] == '"') {
                    closed = 1;
                } else if (s[i] == '\\') {
                    if (i + 1 >= len) { /* a '\' last: the string never closes */
                        i = len;
                        break;
                    }
                    char e = s[i + 1];
                    if (e == 'x') {
                        if (i + 3 >= len || hexval(s[i + 2]) < 0 || hexval(s[i + 3]) < 0) {
                            rc = perr(p, col + (int)i, "bad \\x escape: two hex digits expected");
                            break;
                        }
                        /* the trace writes each byte one way only: a \xHH it never
                         * writes could never match */
                        char canon[5];
                        canonical_escape(hexval(s[i + 2]) * 16 + hexval(s[i + 3]), canon);
                        if (strlen(canon) != 4 || memcmp(canon, s + i, 4) != 0) {
                            rc = perr(p, col + (int)i, "'%.4s' in the expected reply: the "
                                      "trace writes this byte as '%s'", s + i, canon);
                            break;
                        }
                        i += 2;
                    } else if (!strchr("\\\"nrtab", e)) {
                        rc = perr(p, col + (int)i,
                                  "unknown escape \\%c in a string of the expected reply "
                                  "(\\\\ \\\" \\n \\r \\t \\a \\b \\xHH)",
                                  e);
                        break;
                    }
                    i++;
                }
                i++;
            }
            if (rc) break;
            if (!closed) {
                rc = perr(p, col + (int)q,
                          "unterminated string in the expected reply: this '\"' never closes");
                break;
            }
        } else if (c == ':') {
            size_t d = i + 1;
            if (d < len && s[d] == '-') d++;
            size_t digits = d;
            while (d < len && s[d] >= '0' && s[d] <= '9') d++;
            if (d == digits) {
                rc = perr(p, col + (int)i, "an integer expected after ':' in the expected reply");
                break;
            }
            i = d;
        } else if (c == '$' || c == '*' || c == '<') {
            const char *want = c == '$' ? "$-1" : c == '*' ? "*-1" : "<*>";
            if (len - i < 3 || memcmp(s + i, want, 3) != 0) {
                const char *why = c == '$' ? "a string is written in double quotes (\"...\"), "
                                             "a nil as $-1"
                                  : c == '*' ? "a nil array is *-1, an array [...]"
                                             : "the wildcard is <*>";
                rc = perr(p, col + (int)i, "'%.*s' in the expected reply: %s",
                          word_len(s, len, i), s + i, why);
                break;
            }
            i += 3;
        } else if ((c == '+' || c == '-') && depth) {
            while (i < len && s[i] != ',' && s[i] != ']') i++;
        } else {
            rc = perr(p, col + (int)i,
                      "expected a reply item (+status, -error, :integer, \"string\", $-1, *-1, "
                      "[array] or <*>), got '%.*s'",
                      word_len(s, len, i), s + i);
            break;
        }
        just_opened = 0;
        /* after an item: the end, or ", " and the next item, or ']' closing arrays */
        while (depth && i < len && s[i] == ']') {
            depth--;
            i++;
        }
        if (!depth) {
            while (i < len && (s[i] == ' ' || s[i] == '\t')) i++;
            if (i < len)
                rc = perr(p, col + (int)i, "unexpected '%.*s' after the complete expected reply",
                          word_len(s, len, i), s + i);
            break;
        }
        if (i >= len) continue; /* reported as an unclosed '[' */
        if (s[i] != ',') {
            rc = perr(p, col + (int)i, "expected ', ' or ']' after an array item, got '%.*s'",
                      word_len(s, len, i), s + i);
            break;
        }
        if (i + 1 >= len || s[i + 1] != ' ') {
            if (i + 1 >= len) {
                i++;
                continue; /* reported as an unclosed '[' */
            }
            rc = perr(p, col + (int)i, "array items are separated by ', ' (a comma and a space)");
            break;
        }
        i += 2;
    }
    pfree(open);
    return rc;
}

/* Handles a trailing "=> refused [text]" of a step; returns the end of the step's own
 * tokens, or (size_t)-1 after perr. */
static size_t refusal(parser *p, wsc_stmt *st, const wsc_tok *t, size_t from, size_t n,
                      int allow_reply)
{
    size_t a = arrow(t, from, n);
    if (a == n) return n;
    if (a + 1 < n && strncmp(t[a + 1].s, "refused", 7) == 0 &&
        (t[a + 1].s[7] == '\0' || t[a + 1].s[7] == ' ')) {
        st->refused = 1;
        const char *r = t[a + 1].s + 7;
        while (*r == ' ') r++;
        if (*r) st->refused_text = xstrdup(r);
        return a;
    }
    if (!allow_reply) {
        perr(p, t[a].col, "'=>' here can only say 'refused [text]'");
        return (size_t)-1;
    }
    if (a + 1 >= n) {
        perr(p, t[a].col, "'=>' must be followed by the expected reply");
        return (size_t)-1;
    }
    if (check_reply(p, t[a + 1].s, t[a + 1].len, t[a + 1].col)) return (size_t)-1;
    st->has_expect = 1;
    st->nexpect = copy_toks(t, a + 1, n, &st->expect);
    return a;
}

/* ----- The statement table ----------------------------------------------------------------- */

/* What a statement is: where it may stand and what it does. */
enum {
    SK_HEADER = 1, /* about the file (title, needs, forbid): no step; anywhere after the title */
    SK_WORLD,      /* the world's settings: before the first step */
    SK_STEP,       /* a step of the run */
    SK_ACTION,     /* ALIAS: VERB ...: a step of an entry's handler */
    SK_EXPECT,     /* an expectation: checks something, changes nothing */
};
#define SF_TEXT 1  /* the rest of the line is free text, as written (not tokenized) */
#define SF_BLOCK 2 /* takes indented lines below it */

typedef int (*stmt_fn)(parser *p, wsc_scenario *sc, wsc_stmt *st, const wsc_tok *t, size_t n);

/* One row: a statement form.  Redis's command table the scenario way: the parser finds
 * the row by its words, the grammar of docs/scenarios.md (wsim grammar) and the list of
 * statements in "unknown statement" come from here. */
typedef struct stmt_def {
    const char *word;  /* its first word; "ALIAS:" for a handler action */
    const char *word2; /* its second word ("fake", "flush", "ack|drop|...": alternatives), or
                          NULL */
    int kind;          /* SK_* */
    int flags;         /* SF_* */
    stmt_fn parse;     /* fills the statement: 0, 1 (a line that makes no statement) or -1
                          after perr; NULL: one more grammar line of the form above */
    const char *args;  /* its arguments as the grammar writes them ("" for none) */
    const char *note;  /* the grammar's note on the right, or NULL */
} stmt_def;

static const stmt_def STMTS[];
static const size_t NSTMTS;

/* The usage line of row d: its words and arguments ("expect flush N of SUB"). */
static const char *usage_of(const stmt_def *d, char *buf, size_t size)
{
    size_t k = (size_t)snprintf(buf, size, "%s", d->word);
    if (d->word2 && k < size) {
        k += (size_t)snprintf(buf + k, size - k, " ");
        for (const char *c = d->word2; *c && k + 4 < size; c++) {
            if (*c == '|') k += (size_t)snprintf(buf + k, size - k, " | ");
            else buf[k++] = *c;
        }
        buf[k < size ? k : size - 1] = '\0';
    }
    if (d->args[0] && k < size) snprintf(buf + k, size - k, " %s", d->args);
    return buf;
}

/* The usage of the row being parsed (p->def), for messages. */
static const char *usage(parser *p)
{
    /* on one line: the grammar's continuation lines ("\n      ") join with a space */
    char *u = (char *)usage_of(p->def, p->usage, sizeof p->usage), *w = u;
    for (const char *r = u; *r; r++) {
        if (*r == '\n') {
            *w++ = ' ';
            while (r[1] == ' ') r++;
        } else {
            *w++ = *r;
        }
    }
    *w = '\0';
    return u;
}

/* Is w one of the '|'-separated alternatives of alts? */
static int one_of(const char *alts, const char *w, size_t wl)
{
    for (const char *a = alts; *a;) {
        const char *e = strchr(a, '|');
        size_t al = e ? (size_t)(e - a) : strlen(a);
        if (al == wl && memcmp(a, w, wl) == 0) return 1;
        if (!e) break;
        a = e + 1;
    }
    return 0;
}

/* The row for a statement whose first word is w[0..wl) and second w2[0..w2l) (w2 NULL:
 * none), or NULL.  *word_known: some row starts with w. */
static const stmt_def *find_def(const char *w, size_t wl, const char *w2, size_t w2l,
                                int *word_known)
{
    *word_known = 0;
    for (size_t i = 0; i < NSTMTS; i++) {
        const stmt_def *d = &STMTS[i];
        if (!d->parse || strlen(d->word) != wl || memcmp(d->word, w, wl) != 0) continue;
        *word_known = 1;
        if (!d->word2) return d;
        if (w2 && one_of(d->word2, w2, w2l)) return d;
    }
    return NULL;
}

/* The second words of the rows starting with `word`, ", "-separated, for messages. */
static void second_words(const char *word, char *buf, size_t size)
{
    size_t k = 0;
    buf[0] = '\0';
    for (size_t i = 0; i < NSTMTS; i++) {
        const stmt_def *d = &STMTS[i];
        if (!d->parse || !d->word2 || strcmp(d->word, word) != 0) continue;
        for (const char *a = d->word2; k < size;) {
            const char *e = strchr(a, '|');
            int al = e ? (int)(e - a) : (int)strlen(a);
            k += (size_t)snprintf(buf + k, size - k, "%s%.*s", k ? ", " : "", al, a);
            if (!e) break;
            a = e + 1;
        }
    }
}

/* The statements that take indented lines, for messages: "'expect flush', ... or
 * 'expect delayed'" (the SF_BLOCK rows, in table order). */
static void block_words(char *buf, size_t size)
{
    size_t n = 0, k = 0;
    for (size_t i = 0; i < NSTMTS; i++) n += STMTS[i].parse && (STMTS[i].flags & SF_BLOCK);
    buf[0] = '\0';
    for (size_t i = 0, j = 0; i < NSTMTS && k < size; i++) {
        const stmt_def *d = &STMTS[i];
        if (!d->parse || !(d->flags & SF_BLOCK)) continue;
        j++;
        k += (size_t)snprintf(buf + k, size - k, "%s'%s%s%s'", j == 1 ? "" : j == n ? " or " : ", ",
                              d->word, d->word2 ? " " : "", d->word2 ? d->word2 : "");
    }
}

/* The statements' first words, ", "-separated (each once, in table order). */
static void first_words(char *buf, size_t size)
{
    size_t k = 0;
    buf[0] = '\0';
    for (size_t i = 0; i < NSTMTS; i++) {
        int seen = 0;
        for (size_t j = 0; j < i && !seen; j++) seen = strcmp(STMTS[j].word, STMTS[i].word) == 0;
        if (!seen && k < size)
            k += (size_t)snprintf(buf + k, size - k, "%s%s", k ? ", " : "", STMTS[i].word);
    }
}

/* The language's grammar, one line per row of the statement table, grouped as
 * docs/scenarios.md shows it (heap). */
char *wsc_grammar(void)
{
    size_t cap = 8192, len = 0;
    char *out = wsi_malloc(cap);
    if (!out) return NULL;
    out[0] = '\0';
    int kind = 0;
    for (size_t i = 0; i < NSTMTS; i++) {
        const stmt_def *d = &STMTS[i];
        char use[256], line[1024];
        /* a blank line between the file's lines, the steps and the expectations */
        int group = d->kind == SK_WORLD ? SK_HEADER : d->kind == SK_ACTION ? SK_STEP : d->kind;
        int sep = kind && group != kind;
        kind = group;
        usage_of(d, use, sizeof use);
        int k;
        if (d->note) {
            const char *nl = strchr(use, '\n');
            size_t last = nl ? strlen(strrchr(use, '\n') + 1) : strlen(use);
            k = snprintf(line, sizeof line, "%s%s%*s%s\n", sep ? "\n" : "", use,
                         last < 45 ? (int)(46 - last) : 2, "", d->note);
        } else {
            k = snprintf(line, sizeof line, "%s%s\n", sep ? "\n" : "", use);
        }
        if (len + (size_t)k + 1 > cap) {
            char *q = wsi_realloc(out, cap *= 2);
            if (!q) {
                wsi_free(out);
                return NULL;
            }
            out = q;
        }
        memcpy(out + len, line, (size_t)k + 1);
        len += (size_t)k;
    }
    return out;
}

/* ----- Statements, one function per row ---------------------------------------------------- */

/* Makes token t the statement's subscription name. */
static void set_sub(wsc_stmt *st, const wsc_tok *t)
{
    pfree(st->sub);
    st->sub = xstrdup(t->s);
    st->sub_col = t->col;
}

/* Makes the first len bytes of token t the statement's alias. */
static void set_alias(wsc_stmt *st, const wsc_tok *t, size_t len)
{
    pfree(st->alias);
    st->alias = xmemdup(t->s, len);
    st->alias_col = t->col;
}

/* 0 when the statement has at least want tokens, else -1 after an "incomplete statement"
 * error at its end. */
static int need(parser *p, const wsc_tok *t, size_t n, size_t want)
{
    if (n >= want) return 0;
    int col = n ? t[n - 1].col + (int)t[n - 1].len : 1;
    return perr(p, col, "incomplete statement: %s", usage(p));
}

static int usage_error(parser *p, int col) { return perr(p, col, "usage: %s", usage(p)); }

/* Reads `header NAME VALUE` groups from t[*i] on, moving *i past them; 0, or -1 after
 * perr. */
static int parse_headers(parser *p, wsc_stmt *st, const wsc_tok *t, size_t *i, size_t n)
{
    while (*i < n && is(&t[*i], "header")) {
        if (*i + 2 >= n) return perr(p, t[*i].col, "header needs a name and a value");
        st->headers = xgrow(st->headers, st->nheaders, sizeof *st->headers);
        st->headers[st->nheaders].name = xmemdup(t[*i + 1].s, t[*i + 1].len);
        st->headers[st->nheaders].value = xmemdup(t[*i + 2].s, t[*i + 2].len);
        st->headers[st->nheaders].value_len = t[*i + 2].len;
        st->nheaders++;
        *i += 3;
    }
    return 0;
}

/* The invariants in their bit order (wsc.h): here, at the bottom of the library's calls,
 * since the parser (forbid, expect violation), the explorers and the runner all name them. */
const char *const WSC_INVARIANTS[WSC_NINVARIANTS] = {"lost", "leaked", "split", "doubled",
                                                     "stranded"};

/* The bit of an invariant's name (WSC_INVARIANTS), or -1 with the error said. */
static int invariant_bit(parser *p, const wsc_tok *t)
{
    for (int k = 0; k < WSC_NINVARIANTS; k++)
        if (is(t, WSC_INVARIANTS[k])) return k;
    perr(p, t->col, "unknown invariant '%s' (lost, leaked, split, doubled or stranded)", t->s);
    return -1;
}

/* A channel subscription's `buffer N` at t[i]: how many unread messages its client holds
 * (a power of two, as a broadcast channel's capacity is); 0, or -1 after perr. */
static int parse_sub_buffer(parser *p, ws_sub_config *c, const wsc_tok *t, size_t n, size_t i)
{
    long long v = 0;
    if (i + 1 >= n) return perr(p, t[i].col, "buffer needs a number (a power of two)");
    if (number(p, &t[i + 1], "buffer", &v)) return -1;
    if (v < 1 || v > 65536 || (v & (v - 1)))
        return perr(p, t[i + 1].col, "buffer must be a power of two from 1 to 65536 (the "
                    "client's broadcast channel holds that many unread messages)");
    if (c->form != WS_FORM_CHANNEL)
        return perr(p, t[i].col, "buffer is for channels (the Pub/Sub client's broadcast "
                    "buffer)");
    c->buffer = (size_t)v;
    return 0;
}

/* `subscribe NAME FORM KEY [OPTION...]`: the subscription's configuration, each option
 * checked; 0, or -1 after perr. */
static int parse_subscribe(parser *p, wsc_stmt *st, const wsc_tok *t, size_t n)
{
    if (need(p, t, n, 4)) return -1;
    set_sub(st, &t[1]);
    int form;
    if (form_of(p, &t[2], &form)) return -1;
    ws_sub_config *c = &st->cfg;
    c->form = (ws_form)form;
    c->mode = WS_MODE_WINDOW;
    st->s_key = xstrdup(t[3].s);
    for (size_t i = 4; i < n;) {
        const wsc_tok *o = &t[i];
        long long v = 0;
        if (is(o, "pattern")) {
            c->pattern = 1;
            i++;
        } else if (is(o, "warn-crossslot")) {
            c->warn_crossslot = 1;
            i++;
        } else if (is(o, "group") || is(o, "consumer") || is(o, "processing") ||
                   is(o, "dead-letter")) {
            if (i + 1 >= n)
                return perr(p, o->col, "%s needs a %s", o->s,
                            is(o, "dead-letter") ? "key (dead-letter KEY)" : "value");
            char **dst = is(o, "group")      ? &st->s_group
                         : is(o, "consumer") ? &st->s_consumer
                         : is(o, "dead-letter") ? &st->s_dead_letter : &st->s_processing;
            pfree(*dst);
            *dst = xstrdup(t[i + 1].s);
            i += 2;
            if (dst == &st->s_group && i < n && is(&t[i], "start")) {
                if (i + 1 >= n)
                    return perr(p, t[i].col, "start needs where the group starts: $, 0 or "
                                "an id");
                pfree(st->s_group_start);
                st->s_group_start = xstrdup(t[i + 1].s);
                i += 2;
            }
        } else if (is(o, "max-attempts")) {
            if (i + 1 >= n) return perr(p, o->col, "max-attempts needs a number (1 or more)");
            if (number(p, &t[i + 1], o->s, &v)) return -1;
            if (v < 1 || v > 1000000)
                return perr(p, t[i + 1].col, "max-attempts must be between 1 and 1000000 (a "
                            "handler runs at most that many times)");
            c->max_attempts = (unsigned)v;
            i += 2;
        } else if (is(o, "read")) {
            if (i + 1 >= n || !is(&t[i + 1], "claiming"))
                return perr(p, i + 1 < n ? t[i + 1].col : o->col,
                            "read takes one mode: read claiming MIN_IDLE_MS");
            if (i + 2 >= n) return perr(p, t[i + 1].col, "claiming needs a min-idle in ms");
            if (number(p, &t[i + 2], "claiming min-idle", &v)) return -1;
            c->claiming = 1;
            c->min_idle_ms = v;
            i += 3;
        } else if (is(o, "mode")) {
            if (i + 1 >= n) return perr(p, o->col, "mode needs direct, window or atomic");
            const wsc_tok *m = &t[i + 1];
            if (is(m, "direct")) c->mode = WS_MODE_DIRECT;
            else if (is(m, "window")) c->mode = WS_MODE_WINDOW;
            else if (is(m, "atomic")) c->mode = WS_MODE_ATOMIC;
            else return perr(p, m->col, "unknown mode '%s' (direct, window or atomic)", m->s);
            st->mode_given = 1;
            i += 2;
        } else if (is(o, "count") || is(o, "batch") || is(o, "block") || is(o, "reclaim") ||
                   is(o, "ttl")) {
            if (i + 1 >= n) return perr(p, o->col, "%s needs a number", o->s);
            if (number(p, &t[i + 1], o->s, &v)) return -1;
            if ((is(o, "count") || is(o, "batch")) && (v < 1 || v > 100000))
                return perr(p, t[i + 1].col, "%s must be between 1 and 100000", o->s);
            if (is(o, "count")) c->count = (size_t)v;
            else if (is(o, "batch")) c->batch = (size_t)v;
            else if (is(o, "block")) c->block_ms = v;
            else if (is(o, "ttl")) c->delay_ttl_ms = v;
            else {
                c->reclaim = 1;
                c->min_idle_ms = v;
            }
            i += 2;
        } else if (is(o, "buffer")) {
            if (parse_sub_buffer(p, c, t, n, i)) return -1;
            i += 2;
        } else if (is(o, "delay-queue")) {
            if (i + 1 >= n) return perr(p, o->col, "delay-queue needs a sorted set key");
            pfree(st->s_dq);
            st->s_dq = xstrdup(t[i + 1].s);
            i += 2;
        } else if (is(o, "recovery")) {
            if (i + 2 >= n) return perr(p, o->col, "recovery needs a sorted set and a min-idle in ms");
            pfree(st->s_recovery);
            st->s_recovery = xstrdup(t[i + 1].s);
            if (number(p, &t[i + 2], "recovery min-idle", &v)) return -1;
            c->min_idle_ms = v;
            i += 3;
            if (i + 1 < n && is(&t[i], "ttl")) {
                if (number(p, &t[i + 1], "recovery ttl", &v)) return -1;
                if (v < 1) return perr(p, t[i + 1].col, "the recovery ttl must be 1 ms or more");
                c->recovery_ttl_ms = v;
                i += 2;
            }
        } else if (is(o, "reply")) {
            if (i + 2 >= n) return perr(p, o->col, "reply needs a form and a key");
            int rf;
            if (form_of(p, &t[i + 1], &rf)) return -1;
            c->reply.form = (ws_form)rf;
            pfree(st->s_reply);
            st->s_reply = xstrdup(t[i + 2].s);
            i += 3;
            if (i < n && is(&t[i], "in-round")) {
                c->reply_in_round = 1;
                i++;
            }
        } else {
            return perr(p, o->col,
                        "unknown option '%s' (group, consumer, mode, count, batch, block, "
                        "reclaim, read claiming, delay-queue, ttl, processing, recovery, "
                        "pattern, reply, warn-crossslot, max-attempts, dead-letter, buffer)",
                        o->s);
        }
    }
    if (form == WS_FORM_STREAM && !st->s_group)
        return perr(p, t[3].col, "a stream subscription needs 'group <name>'");
    if (form != WS_FORM_STREAM && (c->reclaim || st->s_dq || st->s_group || c->claiming))
        return perr(p, t[2].col, "group, reclaim, read claiming and delay-queue are for "
                    "streams (RedisStream::claiming reads XREADGROUP ... CLAIM)");
    if (c->reclaim && c->claiming)
        return perr(p, t[2].col, "reclaim and read claiming are two read modes: choose one");
    if (c->batch && c->count && c->count != c->batch)
        return perr(p, t[2].col, "a batch subscription reads COUNT = its batch size: drop "
                    "'count %zu' (or make it %zu)", c->count, c->batch);
    if (form != WS_FORM_RELIABLE_LIST && (st->s_recovery || st->s_processing))
        return perr(p, t[2].col, "processing and recovery are for reliable lists");
    if (c->batch && c->mode == WS_MODE_DIRECT)
        return perr(p, t[2].col, "batch handlers need a window (mode window or atomic)");
    return 0;
}

/* The number an ordinal token says ("1st", "2nd", "3rd", "12th": 1, 2, 3, 12; "0th": 0),
 * or -1 when it is not one (a suffix other than st, nd, rd, th; more than 9 digits). */
static long long ordinal(const wsc_tok *o)
{
    size_t d = 0;
    while (d < o->len && o->s[d] >= '0' && o->s[d] <= '9') d++;
    int suffix_ok = d > 0 && d < o->len &&
                    (strcmp(o->s + d, "st") == 0 || strcmp(o->s + d, "nd") == 0 ||
                     strcmp(o->s + d, "rd") == 0 || strcmp(o->s + d, "th") == 0);
    if (!suffix_ok || d > 9) return -1;
    long long v = 0;
    for (size_t j = 0; j < d; j++) v = v * 10 + (o->s[j] - '0');
    return v;
}

/* `fault CONN KIND (Nth COMMAND | round-trip I [command K]) [error TEXT]`: the fault to
 * arm; 0, or -1 after perr. */
static int parse_fault(parser *p, wsc_stmt *st, const wsc_tok *t, size_t n)
{
    if (need(p, t, n, 4)) return -1;
    if (!is(&t[1], "reader") && !is(&t[1], "window") && !is(&t[1], "subscriber"))
        return perr(p, t[1].col, "unknown connection '%s' (reader, window or subscriber)", t[1].s);
    st->conn = xstrdup(t[1].s);
    const wsc_tok *k = &t[2];
    if (is(k, "crash-after")) st->fault.kind = WS_FAULT_CRASH_AFTER;
    else if (is(k, "crash-before")) st->fault.kind = WS_FAULT_CRASH_BEFORE;
    else if (is(k, "lose-replies")) st->fault.kind = WS_FAULT_LOSE_REPLIES;
    else if (is(k, "error")) st->fault.kind = WS_FAULT_ERROR;
    else if (is(k, "refuse")) st->fault.kind = WS_FAULT_REFUSE;
    else if (is(k, "disconnect")) st->fault.kind = WS_FAULT_DISCONNECT;
    else
        return perr(p, k->col, "unknown fault '%s' (crash-after, crash-before, lose-replies, "
                    "error, refuse or disconnect)", k->s);
    size_t i = 3;
    long long v = 0;
    if (is(&t[i], "round-trip")) {
        if (i + 1 >= n) return perr(p, t[i].col, "round-trip needs a number");
        if (number(p, &t[i + 1], "round-trip", &v)) return -1;
        if (v < 1) return perr(p, t[i + 1].col, "round trips count from 1");
        st->fault.round_trip = (uint64_t)v;
        i += 2;
        if (i < n && is(&t[i], "command")) {
            if (i + 1 >= n) return perr(p, t[i].col, "command needs a number");
            if (number(p, &t[i + 1], "command", &v)) return -1;
            st->fault.command = (size_t)v;
            i += 2;
        }
        if (st->fault.command == 0 &&
            (st->fault.kind == WS_FAULT_ERROR || st->fault.kind == WS_FAULT_CRASH_BEFORE))
            return perr(p, t[3].col, "%s needs 'command <k>' (k >= 1)", k->s);
    } else {
        /* <n>th NAME: 1st 2nd 3rd 4th ... */
        const wsc_tok *o = &t[i];
        v = ordinal(o);
        if (v < 0)
            return perr(p, o->col, "expected '<n>th COMMAND' (e.g. 3rd XACK) or 'round-trip <i>', got '%s'", o->s);
        if (v < 1) return perr(p, o->col, "occurrences count from 1");
        if (i + 1 >= n) return perr(p, o->col, "'%s' needs a command name", o->s);
        st->fault.nth = (uint64_t)v;
        st->fault_name = xstrdup(t[i + 1].s);
        i += 2;
    }
    if (i < n && is(&t[i], "error")) {
        if (st->fault.kind != WS_FAULT_ERROR)
            return perr(p, t[i].col, "only an 'error' fault takes an error text");
        if (i + 1 >= n) return perr(p, t[i].col, "error needs the text of the error reply");
        st->fault_error = rest_text(p, t, i + 1, n);
        i = n;
    }
    if (i < n) return perr(p, t[i].col, "unexpected '%s' after the fault's place", t[i].s);
    return 0;
}

/* `fault CONSUMER crash-before|crash-after (Nth COMMAND | command N)`: the consumer's Nth
 * command (of that name, or of any) is held at the server, before it is applied or after
 * it is applied and before its reply leaves, and the consumer killed there; 0, or -1
 * after perr. */
static int parse_proc_fault(parser *p, wsc_stmt *st, const wsc_tok *t, size_t n)
{
    st->proc_fault = 1;
    st->conn = xstrdup(t[1].s);
    const wsc_tok *k = &t[2];
    if (is(k, "crash-after")) st->fault.kind = WS_FAULT_CRASH_AFTER;
    else if (is(k, "crash-before")) st->fault.kind = WS_FAULT_CRASH_BEFORE;
    else
        return perr(p, k->col, "a consumer process crashes before or after a command: "
                    "crash-before or crash-after, got '%s'", k->s);
    long long v = 0;
    if (is(&t[3], "command")) {
        if (n != 5) return perr(p, t[3].col, "usage: fault CONSUMER %s command N", k->s);
        if (number(p, &t[4], "command", &v)) return -1;
        if (v < 1) return perr(p, t[4].col, "commands count from 1");
        st->fault.nth = (uint64_t)v;
        return 0;
    }
    const wsc_tok *o = &t[3];
    v = ordinal(o);
    if (v < 0)
        return perr(p, o->col, "expected '<n>th COMMAND' (e.g. 2nd XACK) or 'command <n>', "
                    "got '%s'", o->s);
    if (v < 1) return perr(p, o->col, "occurrences count from 1");
    if (n < 5) return perr(p, o->col, "'%s' needs a command name", o->s);
    if (n > 5) return perr(p, t[5].col, "unexpected '%s' after the fault's place", t[5].s);
    st->fault.nth = (uint64_t)v;
    st->fault_name = xstrdup(t[4].s);
    return 0;
}

/* ----- The file's lines: title, needs, forbid, the world -------------------------------- */

/* scenario TITLE (t[0]: the rest of the line as written, maybe empty). */
static int parse_title(parser *p, wsc_scenario *sc, wsc_stmt *st, const wsc_tok *t, size_t n)
{
    (void)st;
    (void)n;
    if (sc->title) return perr(p, 1, "a second 'scenario' line (one scenario per file)");
    if (!t[0].len) return perr(p, t[0].col, "scenario needs a title");
    sc->title = xmemdup(t[0].s, t[0].len);
    sc->title_line = p->line;
    return 1;
}

/* needs fake|real REASON (t[0]: the reason as written, maybe empty). */
static int parse_needs(parser *p, wsc_scenario *sc, wsc_stmt *st, const wsc_tok *t, size_t n)
{
    (void)st;
    (void)n;
    int fake = strcmp(p->def->word2, "fake") == 0;
    if (!t[0].len)
        return perr(p, t[0].col, fake ? "say why it needs the fake: needs fake <reason>"
                                      : "say why it needs a real server: needs real <reason>");
    char **dst = fake ? &sc->needs_fake : &sc->needs_real;
    pfree(*dst);
    *dst = xmemdup(t[0].s, t[0].len);
    return 1;
}

/* `forbid INVARIANT...`: the invariants `wsim explore` must not find (a line that makes
 * no statement: 1). */
static int parse_forbid(parser *p, wsc_scenario *sc, wsc_stmt *st, const wsc_tok *t, size_t n)
{
    (void)st;
    if (n < 2) return perr(p, t[0].col + 6, "usage: %s", usage(p));
    for (size_t i = 1; i < n; i++) {
        int k = invariant_bit(p, &t[i]);
        if (k < 0) return -1;
        sc->forbid |= 1u << k;
    }
    return 1;
}

/* seed N, start UNIX_MS */
static int parse_number_setting(parser *p, wsc_scenario *sc, wsc_stmt *st, const wsc_tok *t,
                                size_t n)
{
    (void)st;
    long long v = 0;
    if (n != 2) return usage_error(p, t[0].col);
    if (number(p, &t[1], t[0].s, &v)) return -1;
    if (is(&t[0], "seed")) sc->seed = (uint64_t)v;
    else sc->start_ms = v;
    return 1;
}

/* `cluster`: the world is a one-node Redis Cluster (a line that makes no statement: 1). */
static int parse_cluster(parser *p, wsc_scenario *sc, wsc_stmt *st, const wsc_tok *t, size_t n)
{
    (void)st;
    if (n != 1) return perr(p, t[1].col, "cluster takes no argument");
    sc->cluster = 1;
    return 1;
}

/* ----- Steps ---------------------------------------------------------------------------- */

/* setup, check and a bare pool: a command, maybe "=> reply" (not setup) or "=> refused". */
static int parse_command(parser *p, wsc_scenario *sc, wsc_stmt *st, const wsc_tok *t, size_t n)
{
    (void)sc;
    const wsc_tok *w = &t[0];
    int check = is(w, "check");
    st->kind = is(w, "setup") ? K_SETUP : check ? K_CHECK : K_POOL;
    size_t end = refusal(p, st, t, 1, n, st->kind != K_SETUP);
    if (end == (size_t)-1) return -1;
    if (end <= 1) return perr(p, w->col + (int)w->len, "%s needs a command", w->s);
    if (check && !st->has_expect)
        return perr(p, t[n - 1].col + (int)t[n - 1].len, "check needs '=> <expected reply>'");
    st->ncmd = copy_toks(t, 1, end, &st->cmd);
    return 0;
}

/* The statement row of `subscribe` (see parse_subscribe). */
static int parse_subscribe_row(parser *p, wsc_scenario *sc, wsc_stmt *st, const wsc_tok *t,
                               size_t n)
{
    (void)sc;
    st->kind = K_SUBSCRIBE;
    /* `=> refused [TEXT]`: a subscription the framework refuses to start (an older server,
     * a cluster's slots); the configuration before it is parsed as any */
    size_t end = refusal(p, st, t, 1, n, 0);
    if (end == (size_t)-1) return -1;
    return parse_subscribe(p, st, t, end);
}

/* `produce SUB PAYLOAD [header NAME VALUE]... [to KEY] [raw] [as ALIAS]`; 0, or -1 after
 * perr.  `raw`: a list or channel value written as the bare payload, as a producer outside
 * the framework writes it (the framework's publishers frame every value). */
static int parse_produce(parser *p, wsc_scenario *sc, wsc_stmt *st, const wsc_tok *t, size_t n)
{
    (void)sc;
    if (need(p, t, n, 3)) return -1;
    st->kind = K_PRODUCE;
    set_sub(st, &t[1]);
    st->payload = xmemdup(t[2].s, t[2].len);
    st->payload_len = t[2].len;
    size_t i = 3;
    if (parse_headers(p, st, t, &i, n)) return -1;
    if (i < n && is(&t[i], "to")) {
        if (i + 1 >= n) return perr(p, t[i].col, "to needs a key (the channel a pattern hears)");
        st->key = xstrdup(t[i + 1].s);
        i += 2;
    }
    if (i < n && is(&t[i], "raw")) {
        if (st->nheaders)
            return perr(p, t[i].col, "raw writes the bare payload: it carries no headers");
        st->raw = 1;
        i++;
    }
    if (i < n && is(&t[i], "as")) {
        if (i + 1 >= n) return perr(p, t[i].col, "as needs an alias");
        const wsc_tok *a = &t[i + 1];
        int ok = a->len > 0 && ((a->s[0] >= 'a' && a->s[0] <= 'z') ||
                                (a->s[0] >= 'A' && a->s[0] <= 'Z') || a->s[0] == '_');
        for (size_t k = 1; ok && k < a->len; k++) ok = name_char(a->s[k]);
        if (!ok)
            return perr(p, a->col, "an alias is a name: a letter or '_', then letters, "
                        "digits, '_', '-' or '.' (got '%s')", a->s);
        set_alias(st, a, a->len);
        i += 2;
    }
    if (i < n)
        return perr(p, t[i].col, "unexpected '%s' (header NAME VALUE, to KEY, raw or as ALIAS)",
                    t[i].s);
    return 0;
}

/* `read SUB [expect ALIAS... | expect nothing | expect report]`, or a read the scenario
 * says is refused; 0, or -1 after perr. */
static int parse_read(parser *p, wsc_scenario *sc, wsc_stmt *st, const wsc_tok *t, size_t n)
{
    (void)sc;
    st->kind = K_READ;
    size_t end = refusal(p, st, t, 1, n, 0);
    if (end == (size_t)-1) return -1;
    if (end < 2) return perr(p, t[0].col + 4, "read needs a subscription");
    set_sub(st, &t[1]);
    if (end > 2) {
        if (!is(&t[2], "expect"))
            return perr(p, t[2].col, "expected 'expect' after read <sub>, got '%s'", t[2].s);
        if (end == 3) return perr(p, t[2].col + 6, "expect what: aliases, 'nothing' or 'report'");
        st->has_expect = 1;
        if (end == 4 && is(&t[3], "nothing")) st->read_nothing = 1;
        else if (end == 4 && is(&t[3], "report")) st->read_report = 1;
        else st->nexpect = copy_toks(t, 3, end, &st->expect);
    }
    return 0;
}

/* `advance MS`: the clock moves; 0, or -1 after perr. */
static int parse_advance(parser *p, wsc_scenario *sc, wsc_stmt *st, const wsc_tok *t, size_t n)
{
    (void)sc;
    if (n != 2) return usage_error(p, t[0].col);
    st->kind = K_ADVANCE;
    return number(p, &t[1], "advance", &st->n);
}

/* crash, shutdown, restart */
static int parse_bare(parser *p, wsc_scenario *sc, wsc_stmt *st, const wsc_tok *t, size_t n)
{
    (void)sc;
    if (n != 1) return perr(p, t[1].col, "%s takes no argument", t[0].s);
    st->kind = is(&t[0], "crash") ? K_CRASH : is(&t[0], "shutdown") ? K_SHUTDOWN : K_RESTART;
    return 0;
}

/* `shutdown [drains-lost]`: the graceful stop; drains-lost (n = 1) when the windows' drains
 * lose their race with the pool's QUIT.  0, or -1 after perr. */
static int parse_shutdown(parser *p, wsc_scenario *sc, wsc_stmt *st, const wsc_tok *t,
                          size_t n)
{
    (void)sc;
    st->kind = K_SHUTDOWN;
    if (n == 2 && is(&t[1], "drains-lost")) st->n = 1;
    else if (n != 1) return perr(p, t[1].col, "shutdown takes no argument but drains-lost");
    return 0;
}

static const wsc_stmt *consumer_above(const wsc_scenario *sc, const char *name);
static int duration(parser *p, const wsc_tok *t, long long *ms);

/* `stop SUB`, or a stop the scenario says is refused; `stop CONSUMER [within DURATION]`
 * when a consumer of that name is declared above; 0, or -1 after perr. */
static int parse_stop(parser *p, wsc_scenario *sc, wsc_stmt *st, const wsc_tok *t, size_t n)
{
    if (n >= 2 && !t[1].quoted && consumer_above(sc, t[1].s)) {
        st->kind = K_STOP_PROC;
        st->proc = xstrdup(t[1].s);
        st->proc_col = t[1].col;
        if (n == 2) return 0;
        if (n != 4 || !is(&t[2], "within"))
            return perr(p, t[2].col, "usage: stop CONSUMER [within DURATION]");
        return duration(p, &t[3], &st->n);
    }
    size_t end = refusal(p, st, t, 1, n, 0);
    if (end == (size_t)-1) return -1;
    if (end != 2) return usage_error(p, t[0].col);
    st->kind = K_STOP;
    set_sub(st, &t[1]);
    return 0;
}

/* ----- Consumer processes ----------------------------------------------------------------- */

/* The `consumer` statement above that declares name, or NULL. */
static const wsc_stmt *consumer_above(const wsc_scenario *sc, const char *name)
{
    for (size_t i = 0; i < sc->nst; i++)
        if (sc->st[i].kind == K_CONSUMER && strcmp(sc->st[i].proc, name) == 0) return &sc->st[i];
    return NULL;
}

/* A duration: N or Nms (milliseconds), Ns (seconds), Nm (minutes), at most one hour, into
 * *ms; 0, or -1 after perr. */
static int duration(parser *p, const wsc_tok *t, long long *ms)
{
    size_t d = 0;
    while (d < t->len && t->s[d] >= '0' && t->s[d] <= '9') d++;
    const char *unit = t->s + d;
    long long scale = !*unit || !strcmp(unit, "ms") ? 1 : !strcmp(unit, "s") ? 1000
                      : !strcmp(unit, "m") ? 60000 : 0;
    if (!d || d > 9 || !scale || t->quoted)
        return perr(p, t->col, "a duration expected (500ms, 10s, 2m; a bare number is ms), "
                    "got '%s'", t->s);
    long long v = 0;
    for (size_t i = 0; i < d; i++) v = v * 10 + (t->s[i] - '0');
    v *= scale;
    if (v < 1 || v > 3600000)
        return perr(p, t->col, "a duration between 1 ms and 1 hour expected, got '%s'", t->s);
    *ms = v;
    return 0;
}

/* Whether t is a name (a letter or '_', then letters, digits, '_', '-' or '.'). */
static int is_name(const wsc_tok *t)
{
    int ok = !t->quoted && t->len > 0 && ((t->s[0] >= 'a' && t->s[0] <= 'z') ||
                                          (t->s[0] >= 'A' && t->s[0] <= 'Z') || t->s[0] == '_');
    for (size_t k = 1; ok && k < t->len; k++) ok = name_char(t->s[k]);
    return ok;
}

/* `consumer NAME [env NAME=VALUE]... [dir DIR] run COMMAND...`: a consumer process, not
 * started yet; 0, or -1 after perr. */
static int parse_consumer(parser *p, wsc_scenario *sc, wsc_stmt *st, const wsc_tok *t,
                          size_t n)
{
    if (need(p, t, n, 4)) return -1;
    if (!is_name(&t[1]))
        return perr(p, t[1].col, "a consumer's name is a name: a letter or '_', then "
                    "letters, digits, '_', '-' or '.' (got '%s')", t[1].s);
    if (consumer_above(sc, t[1].s)) return perr(p, t[1].col, "a second consumer named '%s'", t[1].s);
    st->kind = K_CONSUMER;
    st->proc = xstrdup(t[1].s);
    st->proc_col = t[1].col;
    size_t i = 2;
    while (i < n && !is(&t[i], "run")) {
        if (is(&t[i], "env")) {
            const char *eq = i + 1 < n ? strchr(t[i + 1].s, '=') : NULL;
            if (!eq || eq == t[i + 1].s)
                return perr(p, i + 1 < n ? t[i + 1].col : t[i].col,
                            "env needs NAME=VALUE (env RUST_LOG=info)");
            st->env = xrealloc(st->env, (st->nenv + 1) * sizeof *st->env);
            st->env[st->nenv++] = xmemdup(t[i + 1].s, t[i + 1].len);
            i += 2;
        } else if (is(&t[i], "dir")) {
            if (i + 1 >= n) return perr(p, t[i].col, "dir needs a directory");
            pfree(st->dir);
            st->dir = xstrdup(t[i + 1].s);
            i += 2;
        } else {
            return perr(p, t[i].col, "expected 'run COMMAND...' (or env NAME=VALUE, dir DIR "
                        "before it), got '%s'", t[i].s);
        }
    }
    if (i >= n) return perr(p, t[n - 1].col + (int)t[n - 1].len,
                            "incomplete statement: %s", usage(p));
    if (i + 1 >= n) return perr(p, t[i].col + 3, "run needs the command line to start");
    st->nargv = copy_toks(t, i + 1, n, &st->argv);
    if (!sc->consumer_line) sc->consumer_line = p->line;
    return 0;
}

/* The consumer t names, declared above; 0 with st->proc set, or -1 after perr. */
static int proc_name(parser *p, wsc_scenario *sc, wsc_stmt *st, const wsc_tok *t)
{
    if (!consumer_above(sc, t->s))
        return perr(p, t->col, "no consumer named '%s' above (consumer %s run COMMAND...)",
                    t->s, t->s);
    st->proc = xstrdup(t->s);
    st->proc_col = t->col;
    return 0;
}

/* `start CONSUMER` (the consumer row: `start UNIX_MS` is the clock's) and `kill CONSUMER`;
 * 0, or -1 after perr. */
static int parse_proc_verb(parser *p, wsc_scenario *sc, wsc_stmt *st, const wsc_tok *t,
                           size_t n)
{
    if (n != 2) return usage_error(p, t[0].col);
    st->kind = is(&t[0], "kill") ? K_KILL : K_START;
    return proc_name(p, sc, st, &t[1]);
}

/* `wait CONSUMER settled [within DURATION]`; 0, or -1 after perr. */
static int parse_wait(parser *p, wsc_scenario *sc, wsc_stmt *st, const wsc_tok *t, size_t n)
{
    if (n < 3 || !is(&t[2], "settled") || (n != 3 && n != 5))
        return usage_error(p, t[0].col);
    st->kind = K_WAIT;
    if (proc_name(p, sc, st, &t[1])) return -1;
    if (n == 3) return 0;
    if (!is(&t[3], "within")) return perr(p, t[3].col, "expected 'within DURATION', got '%s'", t[3].s);
    return duration(p, &t[4], &st->n);
}

/* The statement row of `fault` (see parse_fault). */
static int parse_fault_row(parser *p, wsc_scenario *sc, wsc_stmt *st, const wsc_tok *t,
                           size_t n)
{
    st->kind = K_FAULT;
    if (n >= 4 && !t[1].quoted && consumer_above(sc, t[1].s)) return parse_proc_fault(p, st, t, n);
    return parse_fault(p, st, t, n);
}

/* ----- Handler actions: "ALIAS: VERB ..." (t[0] is "ALIAS:") ----------------------------- */

/* ALIAS: queue|pool COMMAND... */
static int parse_act_command(parser *p, wsc_scenario *sc, wsc_stmt *st, const wsc_tok *t,
                             size_t n)
{
    (void)sc;
    const wsc_tok *v = &t[1];
    int pool = is(v, "pool");
    st->kind = pool ? K_POOL : K_QUEUE;
    size_t end = refusal(p, st, t, 2, n, pool);
    if (end == (size_t)-1) return -1;
    if (end <= 2) return perr(p, v->col + (int)v->len, "%s needs a command", v->s);
    st->ncmd = copy_toks(t, 2, end, &st->cmd);
    return 0;
}

/* `ALIAS: publish FORM KEY PAYLOAD [header NAME VALUE]...`; 0, or -1 after perr. */
static int parse_act_publish(parser *p, wsc_scenario *sc, wsc_stmt *st, const wsc_tok *t,
                             size_t n)
{
    (void)sc;
    if (need(p, t, n, 5)) return -1;
    st->kind = K_PUBLISH;
    if (form_of(p, &t[2], &st->form)) return -1;
    st->key = xstrdup(t[3].s);
    st->payload = xmemdup(t[4].s, t[4].len);
    st->payload_len = t[4].len;
    size_t i = 5;
    if (parse_headers(p, st, t, &i, n)) return -1;
    if (i < n)
        return perr(p, t[i].col, "unexpected '%s' (only 'header NAME VALUE' may follow)", t[i].s);
    return 0;
}

/* `ALIAS: reply PAYLOAD`; 0, or -1 after perr. */
static int parse_act_reply(parser *p, wsc_scenario *sc, wsc_stmt *st, const wsc_tok *t,
                           size_t n)
{
    (void)sc;
    if (n != 3) return usage_error(p, t[1].col);
    st->kind = K_REPLY;
    st->payload = xmemdup(t[2].s, t[2].len);
    st->payload_len = t[2].len;
    return 0;
}

/* `ALIAS: bind FORM KEY`; 0, or -1 after perr. */
static int parse_act_bind(parser *p, wsc_scenario *sc, wsc_stmt *st, const wsc_tok *t,
                          size_t n)
{
    (void)sc;
    if (n != 4) return usage_error(p, t[1].col);
    st->kind = K_BIND;
    if (form_of(p, &t[2], &st->form)) return -1;
    st->key = xstrdup(t[3].s);
    return 0;
}

/* ALIAS: ack | drop | retry | abandon | retry-after MS */
static int parse_act_settle(parser *p, wsc_scenario *sc, wsc_stmt *st, const wsc_tok *t,
                            size_t n)
{
    (void)sc;
    const wsc_tok *v = &t[1];
    st->kind = K_SETTLE;
    if (is(v, "retry-after")) {
        if (n != 3) return usage_error(p, v->col);
        st->outcome = WS_RETRY_AFTER;
        return number(p, &t[2], "retry-after", &st->n);
    }
    if (n != 2) return perr(p, t[2].col, "unexpected '%s' after %s", t[2].s, v->s);
    st->outcome = is(v, "ack") ? WS_ACK : is(v, "drop") ? WS_DROP
                  : is(v, "retry") ? WS_RETRY : WS_ABANDON;
    return 0;
}

/* ----- Expectations ("expect WHAT ..."; check is parse_command's) ------------------------- */

/* expect flush|read N of SUB (the block follows) */
static int parse_exp_block(parser *p, wsc_scenario *sc, wsc_stmt *st, const wsc_tok *t,
                           size_t n)
{
    (void)sc;
    const wsc_tok *w = &t[1];
    long long v = 0;
    if (n != 5 || !is(&t[3], "of")) return usage_error(p, w->col);
    if (number(p, &t[2], w->s, &v)) return -1;
    if (v < 1) return perr(p, t[2].col, "%s count from 1", is(w, "flush") ? "flushes" : "reads");
    st->kind = is(w, "flush") ? K_EXPECT_FLUSH : K_EXPECT_READ;
    st->n = v;
    set_sub(st, &t[4]);
    return 0;
}

/* `expect round-trips N [total|reads|flushes|pool]`; 0, or -1 after perr. */
static int parse_exp_rts(parser *p, wsc_scenario *sc, wsc_stmt *st, const wsc_tok *t, size_t n)
{
    (void)sc;
    if (n < 3 || n > 4) return usage_error(p, t[1].col);
    if (number(p, &t[2], "round-trips", &st->n)) return -1;
    st->kind = K_EXPECT_RTS;
    if (n == 4) {
        if (is(&t[3], "total")) st->which = 0;
        else if (is(&t[3], "reads")) st->which = 1;
        else if (is(&t[3], "flushes")) st->which = 2;
        else if (is(&t[3], "pool")) st->which = 3;
        else return perr(p, t[3].col, "unknown kind '%s' (total, reads, flushes or pool)", t[3].s);
    }
    return 0;
}

/* `expect flushes N [of SUB]`; 0, or -1 after perr. */
static int parse_exp_flushes(parser *p, wsc_scenario *sc, wsc_stmt *st, const wsc_tok *t,
                             size_t n)
{
    (void)sc;
    if (n != 3 && !(n == 5 && is(&t[3], "of"))) return usage_error(p, t[1].col);
    if (number(p, &t[2], "flushes", &st->n)) return -1;
    st->kind = K_EXPECT_FLUSHES;
    if (n == 5) set_sub(st, &t[4]);
    return 0;
}

/* `expect skipped N`: the channel messages reads skipped so far; 0, or -1 after perr. */
static int parse_exp_skipped(parser *p, wsc_scenario *sc, wsc_stmt *st, const wsc_tok *t,
                             size_t n)
{
    (void)sc;
    if (n != 3) return usage_error(p, t[1].col);
    st->kind = K_EXPECT_SKIPPED;
    return number(p, &t[2], "skipped", &st->n);
}

/* `expect reports N`; 0, or -1 after perr. */
static int parse_exp_reports(parser *p, wsc_scenario *sc, wsc_stmt *st, const wsc_tok *t,
                             size_t n)
{
    (void)sc;
    if (n != 3) return usage_error(p, t[1].col);
    st->kind = K_EXPECT_REPORTS;
    return number(p, &t[2], "reports", &st->n);
}

/* `expect report SUB [commands N] [settles N] [failed N] [error TEXT]` (an option left
 * out is not checked); 0, or -1 after perr. */
static int parse_exp_report(parser *p, wsc_scenario *sc, wsc_stmt *st, const wsc_tok *t,
                            size_t n)
{
    (void)sc;
    if (n < 3) return usage_error(p, t[1].col);
    st->kind = K_EXPECT_REPORT;
    set_sub(st, &t[2]);
    st->n2 = st->n3 = st->n4 = -1;
    for (size_t i = 3; i < n;) {
        if (is(&t[i], "error")) {
            if (i + 1 >= n) return perr(p, t[i].col, "error needs a text");
            st->text = rest_text(p, t, i + 1, n);
            break;
        }
        long long *dst = is(&t[i], "commands") ? &st->n2
                         : is(&t[i], "settles") ? &st->n3
                         : is(&t[i], "failed")  ? &st->n4 : NULL;
        if (!dst)
            return perr(p, t[i].col, "unknown field '%s' (commands, settles, failed, error)", t[i].s);
        if (i + 1 >= n) return perr(p, t[i].col, "%s needs a number", t[i].s);
        if (number(p, &t[i + 1], t[i].s, dst)) return -1;
        i += 2;
    }
    return 0;
}

/* expect pending|delayed SUB (ITEM... | none), or the entries on indented lines below */
static int parse_exp_entries(parser *p, wsc_scenario *sc, wsc_stmt *st, const wsc_tok *t,
                             size_t n)
{
    (void)sc;
    const wsc_tok *w = &t[1];
    if (n < 3)
        return perr(p, w->col, "usage: expect %s <sub> (<alias>... | none), or the entries "
                    "on indented lines below it", w->s);
    st->kind = is(w, "pending") ? K_EXPECT_PENDING : K_EXPECT_DELAYED;
    set_sub(st, &t[2]);
    if (n == 3) {
        st->entry_block = 1; /* the entries follow on indented lines */
    } else if (n == 4 && is(&t[3], "none")) {
        st->nexpect = 0;
        st->expect = xcalloc(1, sizeof *st->expect);
    } else {
        st->nexpect = copy_toks(t, 3, n, &st->expect);
    }
    return 0;
}

/* `expect invariants`: no invariant is violated; 0, or -1 after perr. */
static int parse_exp_invariants(parser *p, wsc_scenario *sc, wsc_stmt *st, const wsc_tok *t,
                                size_t n)
{
    (void)sc;
    if (n != 2) return perr(p, t[2].col, "usage: %s", usage(p));
    st->kind = K_EXPECT_INVARIANTS;
    return 0;
}

/* expect nothing: the scenario checks nothing, on purpose (it runs for its trace) */
static int parse_exp_nothing(parser *p, wsc_scenario *sc, wsc_stmt *st, const wsc_tok *t,
                             size_t n)
{
    (void)sc;
    if (n != 2) return perr(p, t[2].col, "usage: %s", usage(p));
    st->kind = K_EXPECT_NOTHING;
    return 0;
}

/* `expect violation INVARIANT ALIAS`; 0, or -1 after perr. */
static int parse_exp_violation(parser *p, wsc_scenario *sc, wsc_stmt *st, const wsc_tok *t,
                               size_t n)
{
    (void)sc;
    if (n != 4) return usage_error(p, t[1].col);
    /* what the traffic checker also says of a consumer process (check_process refuses
     * them elsewhere) */
    static const char *const traffic_only[] = {"unsettled", "settle-before-writes",
                                               "atomic-shape"};
    int traffic = 0;
    for (size_t k = 0; k < 3; k++) traffic |= is(&t[2], traffic_only[k]);
    if (!traffic && invariant_bit(p, &t[2]) < 0) return -1;
    st->kind = K_EXPECT_VIOLATION;
    st->text = xstrdup(t[2].s);
    set_alias(st, &t[3], t[3].len);
    return 0;
}

/* `expect published CHANNEL (PAYLOAD... | none)`; 0, or -1 after perr. */
static int parse_exp_published(parser *p, wsc_scenario *sc, wsc_stmt *st, const wsc_tok *t,
                               size_t n)
{
    (void)sc;
    if (n < 4) return usage_error(p, t[1].col);
    st->kind = K_EXPECT_PUBLISHED;
    st->key = xstrdup(t[2].s);
    if (n == 4 && is(&t[3], "none")) {
        st->nexpect = 0;
        st->expect = xcalloc(1, sizeof *st->expect);
    } else {
        st->nexpect = copy_toks(t, 3, n, &st->expect);
    }
    return 0;
}

/* `expect warning TEXT`; 0, or -1 after perr. */
static int parse_exp_warning(parser *p, wsc_scenario *sc, wsc_stmt *st, const wsc_tok *t,
                             size_t n)
{
    (void)sc;
    if (n < 3) return usage_error(p, t[1].col);
    st->kind = K_EXPECT_WARNING;
    st->text = rest_text(p, t, 2, n);
    return 0;
}

/* `expect delivery ALIAS (count N | retries N)`; 0, or -1 after perr. */
static int parse_exp_delivery(parser *p, wsc_scenario *sc, wsc_stmt *st, const wsc_tok *t,
                              size_t n)
{
    (void)sc;
    if (n != 5 || (!is(&t[3], "count") && !is(&t[3], "retries"))) return usage_error(p, t[1].col);
    st->kind = K_EXPECT_DELIVERY;
    set_alias(st, &t[2], t[2].len);
    st->which = is(&t[3], "count") ? 0 : 1;
    return number(p, &t[4], t[3].s, &st->n);
}

/* ----- The table -------------------------------------------------------------------------- */

static const stmt_def STMTS[] = {
    {"scenario", NULL, SK_HEADER, SF_TEXT, parse_title, "TITLE...", "first line, once"},
    {"needs", "fake", SK_HEADER, SF_TEXT, parse_needs, "REASON...",
     "skipped on a real server, with the reason"},
    {"needs", "real", SK_HEADER, SF_TEXT, parse_needs, "REASON...",
     "skipped on the fake (what it lacks), likewise"},
    {"forbid", NULL, SK_HEADER, 0, parse_forbid, "lost|leaked|split|doubled|stranded...",
     "what `wsim explore` must not find"},
    {"seed", NULL, SK_WORLD, 0, parse_number_setting, "N",
     "the consumer processes' ids, the fake's randomness"},
    {"start", NULL, SK_WORLD, 0, parse_number_setting, "UNIX_MS",
     "the fake's clock at the start"},
    {"cluster", NULL, SK_WORLD, 0, parse_cluster, "",
     "a one-node Redis Cluster (the fake's, or a server's)"},

    {"setup", NULL, SK_STEP, 0, parse_command, "COMMAND...",
     "a raw command on the admin connection"},
    {"subscribe", NULL, SK_STEP, 0, parse_subscribe_row, "NAME FORM KEY [OPTION...]",
     "FORM: stream | reliable-list | list | channel"},
    {"produce", NULL, SK_STEP, 0, parse_produce,
     "SUB PAYLOAD [header NAME VALUE]... [to KEY] [raw] [as ALIAS]", NULL},
    {"read", NULL, SK_STEP, 0, parse_read,
     "SUB [expect ALIAS... | expect nothing | expect report]", NULL},
    {"ALIAS:", "queue", SK_ACTION, 0, parse_act_command, "COMMAND...",
     "a command of the delivery's segment"},
    {"ALIAS:", "pool", SK_ACTION, 0, parse_act_command, "COMMAND... [=> REPLY]",
     "a command on the pool, at once"},
    {"pool", NULL, SK_STEP, 0, parse_command, "COMMAND... [=> REPLY]",
     "the same, outside any handler"},
    {"ALIAS:", "publish", SK_ACTION, 0, parse_act_publish,
     "FORM KEY PAYLOAD [header NAME VALUE]...", NULL},
    {"ALIAS:", "reply", SK_ACTION, 0, parse_act_reply, "PAYLOAD", NULL},
    {"ALIAS:", "bind", SK_ACTION, 0, parse_act_bind, "FORM KEY", NULL},
    {"ALIAS:", "ack|drop|retry|abandon", SK_ACTION, 0, parse_act_settle, "",
     "the delivery's outcome"},
    {"ALIAS:", "retry-after", SK_ACTION, 0, parse_act_settle, "MS", NULL},
    {"advance", NULL, SK_STEP, 0, parse_advance, "MS", "the clock"},
    {"crash", NULL, SK_STEP, 0, parse_bare, "", "the consumer process dies"},
    {"shutdown", NULL, SK_STEP, 0, parse_shutdown, "[drains-lost]",
     "the graceful stop of the whole process"},
    {"restart", NULL, SK_STEP, 0, parse_bare, "", "a fresh consumer process"},
    {"stop", NULL, SK_STEP, 0, parse_stop, "SUB", NULL},
    {"fault", NULL, SK_STEP, 0, parse_fault_row,
     "reader|window|subscriber crash-after|crash-before|lose-replies|error|refuse|disconnect\n"
     "      (Nth COMMAND | round-trip I [command K]) [error TEXT]",
     NULL},

    {"consumer", NULL, SK_STEP, 0, parse_consumer,
     "NAME [env NAME=VALUE]... [dir DIR] run COMMAND...", "a consumer process to drive"},
    {"start", NULL, SK_STEP, 0, parse_proc_verb, "CONSUMER",
     "a fresh process, in a process group of its own"},
    {"wait", NULL, SK_STEP, 0, parse_wait, "CONSUMER settled [within DURATION]",
     "serves it until nothing is unread or pending"},
    {"stop", NULL, SK_STEP, 0, NULL, "CONSUMER [within DURATION]",
     "SIGTERM to its group, then its exit"},
    {"kill", NULL, SK_STEP, 0, parse_proc_verb, "CONSUMER", "SIGKILL to its group"},
    {"fault", NULL, SK_STEP, 0, NULL,
     "CONSUMER crash-before|crash-after (Nth COMMAND | command N)",
     "held at the server, then killed"},

    {"check", NULL, SK_EXPECT, 0, parse_command, "COMMAND... => REPLY", NULL},
    {"expect", "flush", SK_EXPECT, SF_BLOCK, parse_exp_block, "N of SUB",
     "+ indented lines: [ALIAS>] COMMAND... | -- | .."},
    {"expect", "read", SK_EXPECT, SF_BLOCK, parse_exp_block, "N of SUB",
     "+ indented lines: COMMAND... | --"},
    {"expect", "round-trips", SK_EXPECT, 0, parse_exp_rts, "N [total|reads|flushes|pool]",
     NULL},
    {"expect", "flushes", SK_EXPECT, 0, parse_exp_flushes, "N [of SUB]", NULL},
    {"expect", "reports", SK_EXPECT, 0, parse_exp_reports, "N", NULL},
    {"expect", "skipped", SK_EXPECT, 0, parse_exp_skipped, "N",
     "channel messages reads skipped"},
    {"expect", "report", SK_EXPECT, 0, parse_exp_report,
     "SUB [commands N] [settles N] [failed N] [error TEXT]", NULL},
    {"expect", "pending", SK_EXPECT, SF_BLOCK, parse_exp_entries, "SUB (ITEM... | none)",
     "ITEM: ALIAS, $ALIAS or an id written out"},
    {"expect", "pending", SK_EXPECT, SF_BLOCK, NULL, "SUB",
     "+ indented lines: ITEM [consumer NAME] [deliveries N]"},
    {"expect", "delayed", SK_EXPECT, SF_BLOCK, parse_exp_entries, "SUB (ITEM... | none)", NULL},
    {"expect", "delayed", SK_EXPECT, SF_BLOCK, NULL, "SUB",
     "+ indented lines: ITEM [retries N] [due-in MS]"},
    {"expect", "invariants", SK_EXPECT, 0, parse_exp_invariants, "", NULL},
    {"expect", "violation", SK_EXPECT, 0, parse_exp_violation,
     "lost|leaked|split|doubled|stranded ALIAS", NULL},
    {"expect", "violation", SK_EXPECT, 0, NULL,
     "unsettled|settle-before-writes|atomic-shape ALIAS", "a consumer process's traffic"},
    {"expect", "warning", SK_EXPECT, 0, parse_exp_warning, "TEXT", NULL},
    {"expect", "published", SK_EXPECT, 0, parse_exp_published, "CHANNEL (PAYLOAD... | none)",
     NULL},
    {"expect", "delivery", SK_EXPECT, 0, parse_exp_delivery, "ALIAS (count N | retries N)",
     NULL},
    {"expect", "nothing", SK_EXPECT, 0, parse_exp_nothing, "",
     "checks nothing, on purpose (else a FAIL)"},
};
static const size_t NSTMTS = sizeof STMTS / sizeof *STMTS;

/* ----- Dispatch ------------------------------------------------------------------------------ */

/* The message for a first word no row has: the statements there are, and a hint when
 * the line looks like a handler action written without its space ("e1:ack"). */
static int unknown_statement(parser *p, const wsc_tok *w)
{
    const char *colon = w->quoted ? NULL : strchr(w->s, ':');
    if (colon && colon[1]) {
        int k;
        if (find_def("ALIAS:", 6, colon + 1, strlen(colon + 1), &k))
            return perr(p, w->col + (int)(colon - w->s) + 1,
                        "unknown statement '%s': write a space after the colon ('%.*s: %s')",
                        w->s, (int)(colon - w->s), w->s, colon + 1);
    }
    char words[512];
    first_words(words, sizeof words);
    return perr(p, w->col, "unknown statement '%s' (%s)", w->s, words);
}

/* Parses one tokenized statement line into st: 0 a statement, 1 a line that makes none
 * (forbid, seed, ...), -1 after perr. */
static int parse_line(parser *p, wsc_scenario *sc, wsc_stmt *st, const wsc_tok *t, size_t n)
{
    const wsc_tok *w = &t[0];
    st->col = w->col;
    if (!sc->title)
        return perr(p, w->col, "the file must start with 'scenario <title>' (got '%s')", w->s);
    int action = !w->quoted && w->len >= 1 && w->s[w->len - 1] == ':';
    int known;
    const stmt_def *d;
    if (action) {
        if (w->len == 1)
            return perr(p, w->col, "an entry's name expected before ':' (ALIAS: ACTION, e.g. "
                        "e1: ack)");
        if (n < 2)
            return perr(p, w->col + (int)w->len, "an action expected after '%s'", w->s);
        d = find_def("ALIAS:", 6, t[1].quoted ? "" : t[1].s, t[1].quoted ? 0 : t[1].len, &known);
    } else {
        d = w->quoted ? NULL
                      : find_def(w->s, w->len, n > 1 && !t[1].quoted ? t[1].s : NULL,
                                 n > 1 ? t[1].len : 0, &known);
        if (w->quoted) known = 0;
    }
    if (d && d->parse == parse_number_setting && !strcmp(w->s, "start") && n >= 2 &&
        !t[1].quoted && (t[1].s[0] < '0' || t[1].s[0] > '9')) {
        /* `start UNIX_MS` sets the clock; `start NAME` starts a consumer */
        for (size_t i = 0; i < NSTMTS; i++)
            if (STMTS[i].parse == parse_proc_verb && !strcmp(STMTS[i].word, "start")) d = &STMTS[i];
    }
    if (!d) {
        char words[512];
        if (action) {
            second_words("ALIAS:", words, sizeof words);
            return perr(p, t[1].col, "unknown action '%s' (%s)", t[1].s, words);
        }
        if (!known) return unknown_statement(p, w);
        if (n < 2 && !strcmp(w->s, "expect"))
            return perr(p, w->col + (int)w->len, "incomplete statement: expect WHAT ...");
        second_words(w->s, words, sizeof words);
        if (!strcmp(w->s, "expect"))
            return perr(p, t[1].col, "unknown expectation '%s' (%s)", t[1].s, words);
        return perr(p, w->col, "usage: %s %s ...", w->s, words);
    }
    p->def = d;
    if (d->kind == SK_WORLD && p->steps_seen)
        return perr(p, w->col, "'%s' must come before the first step", w->s);
    if (d->kind != SK_HEADER && d->kind != SK_WORLD) p->steps_seen = 1;
    if (action) {
        set_alias(st, w, w->len - 1);
        if (d->parse != parse_act_command) { /* queue and pool take "=> reply" themselves */
            size_t end = refusal(p, st, t, 1, n, 0);
            if (end == (size_t)-1) return -1;
            n = end;
        }
    }
    return d->parse(p, sc, st, t, n);
}

/* A free-text line (scenario, needs fake, needs real): when s[0..len) starts with one of
 * their words (any blanks after them), parses it -- the text is the rest of the line as
 * written, trimmed -- and returns 1 (done: ok or error said) or -1 after an error; 0
 * when it is no such line. */
static int text_line(parser *p, wsc_scenario *sc, const char *s, size_t len)
{
    size_t a = 0;
    while (a < len && s[a] != ' ' && s[a] != '\t' && s[a] != '\r') a++;
    size_t b = a;
    while (b < len && (s[b] == ' ' || s[b] == '\t')) b++;
    size_t c = b;
    while (c < len && s[c] != ' ' && s[c] != '\t' && s[c] != '\r') c++;
    const stmt_def *d = NULL;
    int two = 0;
    for (size_t i = 0; i < NSTMTS && !d; i++) {
        const stmt_def *r = &STMTS[i];
        if (!(r->flags & SF_TEXT) || strlen(r->word) != a || memcmp(r->word, s, a) != 0) continue;
        if (!r->word2) d = r;
        else if (one_of(r->word2, s + b, c - b)) d = r, two = 1;
    }
    if (!d) {
        int known = 0;
        for (size_t i = 0; i < NSTMTS; i++)
            known |= (STMTS[i].flags & SF_TEXT) && strlen(STMTS[i].word) == a &&
                     memcmp(STMTS[i].word, s, a) == 0;
        if (!known) return 0;
        /* needs, but neither fake nor real: the forms there are */
        char use[512], one[128];
        size_t k = 0;
        use[0] = '\0';
        for (size_t i = 0; i < NSTMTS && k < sizeof use; i++)
            if (STMTS[i].parse && strlen(STMTS[i].word) == a && memcmp(STMTS[i].word, s, a) == 0)
                k += (size_t)snprintf(use + k, sizeof use - k, "%s%s", k ? " | " : "",
                                      usage_of(&STMTS[i], one, sizeof one));
        perr(p, 1, "usage: %s", use);
        return -1;
    }
    if (d->parse != parse_title && !sc->title)
        return perr(p, 1, "the file must start with 'scenario <title>' (got '%.*s')", (int)a, s);
    size_t from = two ? c : a, e = len;
    while (from < e && (s[from] == ' ' || s[from] == '\t')) from++;
    while (e > from && (s[e - 1] == ' ' || s[e - 1] == '\t' || s[e - 1] == '\r')) e--;
    wsc_tok text = {(char *)s + from, e - from, (int)from + 1, 0};
    p->def = d;
    return d->parse(p, sc, NULL, &text, 1) < 0 ? -1 : 1;
}

/* ----- The file ---------------------------------------------------------------------------------- */

/* Frees everything a statement owns (not the statement itself). */
static void stmt_free(wsc_stmt *st)
{
    pfree(st->src);
    pfree(st->alias);
    pfree(st->sub);
    toks_free(st->cmd, st->ncmd);
    toks_free(st->expect, st->nexpect);
    pfree(st->refused_text);
    pfree(st->s_key);
    pfree(st->s_group);
    pfree(st->s_consumer);
    pfree(st->s_dq);
    pfree(st->s_processing);
    pfree(st->s_recovery);
    pfree(st->s_reply);
    pfree(st->s_dead_letter);
    pfree(st->s_group_start);
    pfree(st->payload);
    for (size_t i = 0; i < st->nheaders; i++) {
        pfree((char *)st->headers[i].name);
        pfree((char *)st->headers[i].value);
    }
    pfree(st->headers);
    pfree(st->key);
    pfree(st->text);
    pfree(st->conn);
    pfree(st->fault_name);
    pfree(st->fault_error);
    pfree(st->proc);
    toks_free(st->argv, st->nargv);
    for (size_t i = 0; i < st->nenv; i++) pfree(st->env[i]);
    pfree(st->env);
    pfree(st->dir);
    for (size_t i = 0; i < st->nelines; i++) {
        pfree(st->elines[i].item.s);
        pfree(st->elines[i].consumer);
    }
    pfree(st->elines);
    for (size_t i = 0; i < st->nflines; i++) {
        pfree(st->flines[i].from);
        toks_free(st->flines[i].t, st->flines[i].nt);
    }
    pfree(st->flines);
}

/* Frees a scenario and its statements (NULL allowed). */
void wsc_free(wsc_scenario *sc)
{
    if (!sc) return;
    /* every block of the scenario is in its ledger (the statements' strings, the arrays,
     * and whatever a parse that failed left) */
    for (wsc_mem *m = sc->mem.next, *next; m != &sc->mem; m = next) {
        next = m->next;
        wsi_free(m);
    }
    wsi_free(sc);
}

/* ----- References: every alias and subscription a statement names is defined above it -- */

/* The names defined so far (aliases, or subscriptions): a hash set, so that checking a
 * file of n statements stays linear (a list made a 10,000-delivery file take seconds). */
typedef struct names {
    wsi_strmap *set; /* one of cur.names */
} names;

/* Whether ns holds the name of len bytes at s. */
static int has_name(const names *ns, const char *s, size_t len)
{
    size_t unused;
    return wsi_strmap_get(ns->set, s, len, &unused);
}

/* Whether c may follow the first character of an alias (letters, digits, _ - .). */
static int name_char(char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
           c == '_' || c == '-' || c == '.';
}

/* Checks the $references of one token: each $name must be a prefix-free alias. */
static int check_refs(parser *p, const names *aliases, const wsc_tok *t)
{
    for (size_t i = 0; i < t->len; i++) {
        if (t->s[i] != '$') continue;
        if (i + 1 < t->len && t->s[i + 1] == '$') {
            i++;
            continue;
        }
        char nx = i + 1 < t->len ? t->s[i + 1] : '\0';
        if (!((nx >= 'a' && nx <= 'z') || (nx >= 'A' && nx <= 'Z') || nx == '_')) continue;
        /* the longest alias the name after '$' starts with (aliases are made of name
           characters), as the runner substitutes it */
        size_t run = 0, best = 0;
        while (i + 1 + run < t->len && name_char(t->s[i + 1 + run])) run++;
        for (size_t al = run; al > 0 && !best; al--)
            if (has_name(aliases, t->s + i + 1, al)) best = al;
        if (!best) {
            size_t e = i + 1;
            while (e < t->len && name_char(t->s[e])) e++;
            return perr(p, t->col + (int)i + (t->quoted ? 1 : 0),
                        "$%.*s names no entry produced above (produce ... as NAME; $$ for a $)",
                        (int)(e - i - 1), t->s + i + 1);
        }
        i += best;
    }
    return 0;
}

/* Checks the $references of n tokens; 0, or -1 after perr. */
static int check_toks(parser *p, const names *aliases, const wsc_tok *t, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (check_refs(p, aliases, &t[i])) return -1;
    return 0;
}

/* Adds a copy of s to ns. */
static void add_name(names *ns, const char *s)
{
    if (wsi_strmap_put(ns->set, s, strlen(s), 0) != 0) out_of_memory();
}

/* The subscription an `expect pending` / `expect delayed` (statement i) names must keep
 * what it asks about: a delay queue for `expect delayed`; a consumer and a delivery count
 * (a stream's pending list) for the fields of a pending block. */
static int check_entry_sub(parser *p, const wsc_scenario *sc, size_t i)
{
    const wsc_stmt *st = &sc->st[i];
    const wsc_stmt *def = NULL;
    for (size_t k = 0; k < i; k++)
        if (sc->st[k].kind == K_SUBSCRIBE && strcmp(sc->st[k].sub, st->sub) == 0) def = &sc->st[k];
    if (!def) return 0; /* said already: no subscription named so above */
    if (st->kind == K_EXPECT_DELAYED && !def->s_dq)
        return perr(p, st->col, "'%s' has no delay queue (subscribe %s stream ... "
                    "delay-queue ZSET)", st->sub, st->sub);
    if (st->kind == K_EXPECT_PENDING && def->cfg.form == WS_FORM_RELIABLE_LIST)
        for (size_t k = 0; k < st->nelines; k++)
            if (st->elines[k].opt_col) {
                p->line = st->elines[k].line;
                return perr(p, st->elines[k].opt_col,
                            "'%s' is a reliable list: its pending entries (the processing "
                            "list) have no consumer or delivery count; write the entry alone",
                            st->sub);
            }
    return 0;
}

/* Is statement st an expectation (something the run checks)? */
static int checks_something(const wsc_stmt *st)
{
    return st->has_expect || st->refused || st->kind == K_CHECK ||
           (st->kind >= K_EXPECT_FLUSH && st->kind != K_EXPECT_NOTHING);
}

/* The mode a reclaim subscription recovers in when it does not say: the mode of the
 * subscription above it on the same stream and group (the one it recovers for), else
 * window. */
static void inherit_mode(wsc_scenario *sc, size_t i)
{
    wsc_stmt *st = &sc->st[i];
    if (st->kind != K_SUBSCRIBE || st->mode_given || st->cfg.form != WS_FORM_STREAM ||
        !(st->cfg.reclaim || st->cfg.claiming))
        return;
    for (size_t k = i; k-- > 0;) {
        const wsc_stmt *o = &sc->st[k];
        if (o->kind == K_SUBSCRIBE && o->cfg.form == WS_FORM_STREAM && o->s_group &&
            strcmp(o->s_key, st->s_key) == 0 && strcmp(o->s_group, st->s_group) == 0) {
            st->cfg.mode = o->cfg.mode;
            return;
        }
    }
}

/* A subscribe line that writes a name -- its key or its dead letter -- as another Redis type
 * than a subscribe line above it does: the framework refuses the second subscription at
 * start (route.rs Routes::record_subscription), so the file is refused as it is read.  A
 * pattern records nothing; reliable and plain lists are both LPUSHed.  0, or -1 after perr. */
static int check_routes(parser *p, const wsc_scenario *sc, size_t i)
{
    const wsc_stmt *st = &sc->st[i];
    if (st->cfg.form == WS_FORM_CHANNEL && st->cfg.pattern) return 0;
    static const char *const noun[] = {"", "stream", "list", "list", "Pub/Sub channel"};
    const char *mine[2] = {st->s_key, st->s_dead_letter};
    for (size_t k = 0; k < i; k++) {
        const wsc_stmt *o = &sc->st[k];
        if (o->kind != K_SUBSCRIBE || o->refused ||
            (o->cfg.form == WS_FORM_CHANNEL && o->cfg.pattern))
            continue;
        if (strcmp(noun[o->cfg.form], noun[st->cfg.form]) == 0) continue;
        const char *theirs[2] = {o->s_key, o->s_dead_letter};
        for (int a = 0; a < 2; a++)
            for (int b = 0; b < 2; b++)
                if (mine[a] && theirs[b] && strcmp(mine[a], theirs[b]) == 0)
                    return perr(p, st->sub_col,
                                "'%s' writes %s as a %s, but '%s' (line %d) reads or "
                                "dead-letters to it as a %s: the framework refuses to start "
                                "such a pair (give one of them another name)",
                                st->sub, mine[a], noun[st->cfg.form], o->sub, o->line,
                                noun[o->cfg.form]);
    }
    return 0;
}

/* Every check that needs the whole file: names defined above their uses, once; the
 * expectations; inherited modes.  Says every error (perr keeps one a line). */
static void validate(parser *p, wsc_scenario *sc)
{
    names aliases = {&cur.names[0]}, subs = {&cur.names[1]};
    const wsc_stmt *nothing = NULL, *checker = NULL;
    for (size_t i = 0; i < sc->nst && !p->full; i++) {
        wsc_stmt *st = &sc->st[i];
        p->line = st->line;
        int rc = 0;
        if (st->sub && st->kind != K_SUBSCRIBE && !has_name(&subs, st->sub, strlen(st->sub)))
            rc = perr(p, st->sub_col ? st->sub_col : st->col,
                      "no subscription named '%s' above (subscribe %s ...)", st->sub, st->sub);
        else if (st->kind == K_SUBSCRIBE && has_name(&subs, st->sub, strlen(st->sub)))
            rc = perr(p, st->sub_col, "a second subscription named '%s'", st->sub);
        else if (st->kind == K_PRODUCE && st->alias && has_name(&aliases, st->alias, strlen(st->alias)))
            rc = perr(p, st->alias_col, "a second entry named '%s'", st->alias);
        else if (st->kind != K_PRODUCE && st->alias &&
                 !has_name(&aliases, st->alias, strlen(st->alias)))
            rc = perr(p, st->alias_col ? st->alias_col : st->col,
                      "no entry named '%s' above (produce ... as %s)", st->alias, st->alias);
        else if (check_toks(p, &aliases, st->cmd, st->ncmd) ||
                 check_toks(p, &aliases, st->expect, st->nexpect))
            rc = -1;
        /* free texts that are expected texts too: a warning, a refusal's text */
        const char *texts[2] = {st->kind == K_EXPECT_WARNING ? st->text : NULL, st->refused_text};
        for (int k = 0; rc == 0 && k < 2; k++) {
            if (!texts[k]) continue;
            wsc_tok tk = {(char *)texts[k], strlen(texts[k]), st->col, 0};
            rc = check_refs(p, &aliases, &tk);
        }
        for (size_t k = 0; rc == 0 && k < st->nelines; k++) {
            p->line = st->elines[k].line;
            check_refs(p, &aliases, &st->elines[k].item);
        }
        p->line = st->line;
        if (rc == 0 && (st->kind == K_EXPECT_PENDING || st->kind == K_EXPECT_DELAYED))
            check_entry_sub(p, sc, i);
        if (rc == 0 && st->kind == K_SUBSCRIBE && !st->refused) check_routes(p, sc, i);
        for (size_t k = 0; rc == 0 && k < st->nflines; k++) {
            p->line = st->flines[k].line;
            const char *from = st->flines[k].from;
            if (from && !has_name(&aliases, from, strlen(from)))
                perr(p, st->flines[k].from_col, "no entry named '%s' above", from);
            else check_toks(p, &aliases, st->flines[k].t, st->flines[k].nt);
        }
        if (st->kind == K_SUBSCRIBE && !st->refused) add_name(&subs, st->sub);
        if (st->kind == K_PRODUCE && st->alias) add_name(&aliases, st->alias);
        if (st->kind == K_EXPECT_NOTHING && !nothing) nothing = st;
        if (checks_something(st) && !checker) checker = st;
        inherit_mode(sc, i);
    }
    if (nothing && checker) {
        p->line = nothing->line;
        perr(p, nothing->col, "'expect nothing' says the scenario checks nothing, but line %d "
             "checks something", checker->line);
    }
    wsi_strmap_free(aliases.set);
    wsi_strmap_free(subs.set);
}

/* Whether statement kind k drives or inspects wsim's own consumer (the engine): what a
 * file that drives a consumer process cannot say. */
static int engine_only(const wsc_stmt *st)
{
    switch (st->kind) {
    case K_READ: case K_QUEUE: case K_PUBLISH: case K_REPLY: case K_BIND: case K_SETTLE:
    case K_CRASH: case K_RESTART: case K_SHUTDOWN: case K_STOP: case K_EXPECT_FLUSH:
    case K_EXPECT_READ: case K_EXPECT_RTS: case K_EXPECT_FLUSHES: case K_EXPECT_REPORTS:
    case K_EXPECT_REPORT: case K_EXPECT_DELIVERY: case K_EXPECT_WARNING:
    case K_EXPECT_PUBLISHED:
        return 1;
    case K_POOL: return 1; /* the pool is the engine consumer's connection */
    case K_FAULT: return !st->proc_fault;
    default: return 0;
    }
}

/* A file with a `consumer` line drives a process, which reads, handles and settles by
 * itself: the statements that drive or inspect wsim's own consumer have nothing to act
 * on there, and say so. */
static void check_process(parser *p, wsc_scenario *sc)
{
    for (size_t i = 0; !sc->consumer_line && i < sc->nst && !p->full; i++) {
        const wsc_stmt *st = &sc->st[i];
        if (st->kind != K_EXPECT_VIOLATION) continue;
        int known = 0;
        for (int k = 0; k < WSC_NINVARIANTS; k++) known |= !strcmp(st->text, WSC_INVARIANTS[k]);
        if (known) continue;
        p->line = st->line;
        perr(p, st->col, "'%s' is what the traffic checker says of a consumer process's "
             "traffic: this file drives wsim's own consumer (lost, leaked, split, doubled or "
             "stranded)", st->text);
    }
    if (!sc->consumer_line) return;
    for (size_t i = 0; i < sc->nst && !p->full; i++) {
        const wsc_stmt *st = &sc->st[i];
        if (!engine_only(st)) continue;
        p->line = st->line;
        size_t w = 0;
        while (st->src[w] && st->src[w] != ' ' && st->src[w] != '\t') w++;
        const char *what = st->kind == K_STOP ? "a subscription's stop" : NULL;
        perr(p, st->col, "'%.*s' drives or inspects wsim's own consumer%s%s, but this file "
             "drives a consumer process (line %d), which reads, handles and settles by itself",
             (int)w, st->src, what ? ": " : "", what ? what : "", sc->consumer_line);
    }
}

/* Adds an indented line to the `expect pending` / `expect delayed` block st:
 * ITEM [consumer NAME] [deliveries N] (pending), ITEM [retries N] [due-in MS] (delayed),
 * the fields in any order. */
static int entry_line(parser *p, wsc_stmt *st, const wsc_tok *t, size_t n)
{
    int pending = st->kind == K_EXPECT_PENDING;
    if (is(&t[0], "none"))
        return perr(p, t[0].col, "'none' in a block: write 'expect %s %s none' instead",
                    pending ? "pending" : "delayed", st->sub);
    st->elines = xgrow(st->elines, st->nelines, sizeof *st->elines);
    wsc_eline *e = &st->elines[st->nelines++];
    memset(e, 0, sizeof *e);
    e->line = p->line;
    e->item = t[0];
    e->item.s = xmemdup(t[0].s, t[0].len);
    e->deliveries = e->retries = e->due_in = -1;
    for (size_t i = 1; i < n; i += 2) {
        const wsc_tok *o = &t[i];
        long long *num = NULL;
        if (pending && is(o, "deliveries")) num = &e->deliveries;
        else if (!pending && is(o, "retries")) num = &e->retries;
        else if (!pending && is(o, "due-in")) num = &e->due_in;
        else if (!(pending && is(o, "consumer")))
            return perr(p, o->col, "unknown field '%s' (%s)", o->s,
                        pending ? "consumer NAME, deliveries N" : "retries N, due-in MS");
        if (!e->opt_col) e->opt_col = o->col;
        if (i + 1 >= n)
            return perr(p, o->col, "%s needs %s", o->s, num ? "a number" : "a name");
        if (num) {
            if (number(p, &t[i + 1], o->s, num)) return -1;
        } else {
            pfree(e->consumer);
            e->consumer = xstrdup(t[i + 1].s);
        }
    }
    return 0;
}

/* Adds an indented line to the `expect flush` block st. */
static int block_line(parser *p, wsc_stmt *st, wsc_tok *t, size_t n)
{
    st->flines = xgrow(st->flines, st->nflines, sizeof *st->flines);
    wsc_fline *f = &st->flines[st->nflines++];
    memset(f, 0, sizeof *f);
    f->line = p->line;
    if (n == 1 && (is(&t[0], "--") || is(&t[0], ".."))) {
        f->separator = is(&t[0], "--") ? WSC_SEP_ROUND_TRIP : WSC_SEP_PIPELINE;
        f->from_col = t[0].col;
        toks_release(t, n);
        if (f->separator == WSC_SEP_PIPELINE && st->kind == K_EXPECT_READ)
            return perr(p, f->from_col, "'..' marks a pipeline boundary of a flush; a read's "
                        "round trip is one pipeline ('--' between round trips)");
        return 0;
    }
    size_t from = 0;
    if (!t[0].quoted && t[0].len > 1 && t[0].s[t[0].len - 1] == '>') {
        f->from = xmemdup(t[0].s, t[0].len - 1);
        f->from_col = t[0].col;
        from = 1;
        if (n == 1) {
            int col = t[0].col + (int)t[0].len;
            toks_release(t, n);
            return perr(p, col, "a command expected after '%s>'", f->from);
        }
    }
    f->nt = copy_toks(t, from, n, &f->t);
    toks_release(t, n);
    return 0;
}

/* The name of block statement st, for messages ("expect flush 1 of s"). */
static const char *block_name(const wsc_stmt *st) { return st->src; }

/* Checks of the blocks once the file is read: none is empty, boundaries sit between
 * commands, a read's block names no delivery. */
static void check_blocks(parser *p, wsc_scenario *sc)
{
    for (size_t i = 0; i < sc->nst && !p->full; i++) {
        wsc_stmt *st = &sc->st[i];
        p->line = st->line;
        if ((st->kind == K_EXPECT_FLUSH || st->kind == K_EXPECT_READ) && st->block_lines == 0)
            perr(p, st->col, "'expect %s' needs its commands on indented lines below it",
                 st->kind == K_EXPECT_FLUSH ? "flush" : "read");
        if (st->entry_block && st->block_lines == 0)
            perr(p, st->col, "'expect %s %s' needs its entries on indented lines below it "
                 "(or 'none')", st->kind == K_EXPECT_PENDING ? "pending" : "delayed", st->sub);
        for (size_t k = 0; k < st->nflines; k++) {
            const wsc_fline *f = &st->flines[k];
            p->line = f->line;
            /* (of two boundaries in a row, the first is the one said) */
            if (f->separator && !(k > 0 && f[-1].separator) &&
                (k == 0 || k + 1 == st->nflines || f[1].separator))
                perr(p, f->from_col, f->separator == WSC_SEP_PIPELINE
                                         ? "'..' (a pipeline boundary) must sit between two "
                                           "commands"
                                         : "'--' (a round-trip boundary) must sit between two "
                                           "commands");
            else if (st->kind == K_EXPECT_READ && f->from)
                perr(p, f->from_col, "'%s>': a read's commands come from no delivery", f->from);
        }
    }
}

/* Orders errors by line (then column); equal ones keep their order. */
static int err_cmp(const void *a, const void *b)
{
    const perror_ent *x = a, *y = b;
    if (x->line != y->line) return x->line < y->line ? -1 : 1;
    if (x->col != y->col) return x->col < y->col ? -1 : 1;
    return x->msg < y->msg ? -1 : x->msg > y->msg;
}

/* The errors as one text, a line each in file order (and a last line when there were
 * more than WSC_MAX_ERRORS); frees them. */
static char *error_text(parser *p)
{
    /* stable: the same line keeps one error, so (line, col) ties cannot happen; the
     * pointer tie-break only keeps qsort's comparison total */
    qsort(p->errs, p->nerrs, sizeof *p->errs, err_cmp);
    size_t len = 1;
    for (size_t i = 0; i < p->nerrs; i++) len += strlen(p->errs[i].msg) + 1;
    len += strlen(p->name) + 96;
    char *out = wsi_malloc(len); /* the caller's: not in the ledger */
    if (!out) out_of_memory();
    out[0] = '\0';
    size_t k = 0;
    for (size_t i = 0; i < p->nerrs; i++) {
        k += (size_t)snprintf(out + k, len - k, "%s%s", i ? "\n" : "", p->errs[i].msg);
        pfree(p->errs[i].msg);
    }
    if (p->full)
        snprintf(out + k, len - k, "\n%s: note: stopped after %d errors", p->name,
                 WSC_MAX_ERRORS);
    pfree(p->errs);
    p->errs = NULL;
    return out;
}

/* wsc_parse's work, on sc (empty, its ledger current): the scenario, or NULL with
 * *error set (sc freed). */
static wsc_scenario *parse_text(wsc_scenario *sc, const char *name, const char *text,
                                size_t len, char **error)
{
    parser p = {.name = name};
    sc->name = xstrdup(p.name);
    sc->seed = 1;
    wsc_stmt *block = NULL; /* the statement that takes indented lines */
    int skip_block = 0;     /* the statement above failed: its indented lines are not read */
    size_t pos = 0;
    while (pos < len && !p.full) {
        size_t eol = pos;
        while (eol < len && text[eol] != '\n') eol++;
        p.line++;
        const char *s = text + pos;
        size_t sl = eol - pos;
        pos = eol + 1;
        if (memchr(s, '\0', sl)) {
            perr(&p, (int)((const char *)memchr(s, '\0', sl) - s) + 1, "a NUL byte in the file");
            continue;
        }
        int indented = sl && (s[0] == ' ' || s[0] == '\t');
        /* Free text lines: the title and the reasons are taken as written. */
        int tl = indented ? 0 : text_line(&p, sc, s, sl);
        if (tl) {
            block = NULL;
            skip_block = tl < 0;
            continue;
        }
        wsc_tok *t;
        long n = tokenize(&p, s, sl, &t);
        if (n < 0) {
            if (!indented) block = NULL, skip_block = 1;
            continue;
        }
        if (n == 0) continue;
        if (!indented && block && !t[0].quoted) {
            /* an unindented line right under a block: a block line written at column 1?
             * When its first word starts no statement, say so, and read it as one. */
            int known = t[0].len > 1 && t[0].s[t[0].len - 1] == ':';
            for (size_t i = 0; i < NSTMTS && !known; i++)
                known = strcmp(STMTS[i].word, t[0].s) == 0;
            if (!known) {
                perr(&p, 1, "unknown statement '%s': a line of the block above ('%s', line %d) "
                     "must be indented", t[0].s, block_name(block), block->line);
                indented = 1;
            }
        }
        if (indented) {
            if (skip_block) {
                toks_release(t, (size_t)n);
                continue;
            }
            if (!block) {
                toks_release(t, (size_t)n);
                char words[256];
                block_words(words, sizeof words);
                perr(&p, 1, "an indented line outside a block (%s)", words);
                continue;
            }
            block->block_lines++;
            if (block->kind == K_EXPECT_PENDING || block->kind == K_EXPECT_DELAYED) {
                entry_line(&p, block, t, (size_t)n);
                toks_release(t, (size_t)n);
            } else {
                block_line(&p, block, t, (size_t)n);
            }
            continue;
        }
        block = NULL;
        skip_block = 0;
        sc->st = xgrow(sc->st, sc->nst, sizeof *sc->st);
        wsc_stmt *st = &sc->st[sc->nst];
        memset(st, 0, sizeof *st);
        st->line = p.line;
        {
            size_t b = 0, e = sl;
            while (b < e && (s[b] == ' ' || s[b] == '\t')) b++;
            while (e > b && (s[e - 1] == ' ' || s[e - 1] == '\t' || s[e - 1] == '\r')) e--;
            st->src = xmemdup(s + b, e - b);
        }
        p.raw = s;
        p.rawlen = sl;
        int rc = parse_line(&p, sc, st, t, (size_t)n);
        toks_release(t, (size_t)n);
        if (rc < 0) {
            stmt_free(st);
            skip_block = 1;
            continue;
        }
        if (rc == 1) { /* a header line, no statement */
            stmt_free(st);
            continue;
        }
        sc->nst++;
        if (st->kind == K_EXPECT_FLUSH || st->kind == K_EXPECT_READ || st->entry_block)
            block = st;
    }
    if (!p.nerrs && !sc->title) {
        p.line = p.line ? p.line : 1;
        perr(&p, 1, "empty scenario: the file must start with 'scenario <title>'");
    }
    pfree(p.tok);
    pfree(p.scratch);
    check_blocks(&p, sc);
    /* names and expectations are checked once every line reads: a line that did not
     * would make them say what the error above says again */
    if (!p.nerrs) validate(&p, sc);
    if (!p.nerrs) check_process(&p, sc);
    if (p.nerrs) {
        *error = error_text(&p);
        wsc_free(sc);
        return NULL;
    }
    return sc;
}

/* "name:0:0: error: out of memory" on the heap, or NULL when even that cannot be had. */
static char *oom_error(const char *name)
{
    size_t n = strlen(name) + 32;
    char *e = wsi_malloc(n);
    if (e) snprintf(e, n, "%s:0:0: error: out of memory", name);
    return e;
}

wsc_scenario *wsc_parse(const char *name, const char *text, size_t len, char **error)
{
    *error = NULL;
    /* volatile: what the jump's landing reads must not live in a register setjmp saved */
    const char *volatile nm = name ? name : "<scenario>";
    wsc_scenario *volatile sc = wsi_calloc(1, sizeof *sc);
    char **volatile errp = error;
    if (!sc) {
        *error = oom_error(nm);
        return NULL;
    }
    sc->mem.prev = sc->mem.next = &sc->mem;
    jmp_buf oom;
    struct parse_cur outer = cur; /* (a parse inside a parse never happens; kept anyway) */
    cur.ledger = &sc->mem;
    cur.oom = &oom;
    if (setjmp(oom)) {
        /* out of memory somewhere below: free all the scenario's ledger holds */
        for (int k = 0; k < 2; k++) wsi_strmap_free(&cur.names[k]);
        cur = outer;
        wsc_free(sc);
        *errp = oom_error(nm);
        return NULL;
    }
    wsc_scenario *out = parse_text(sc, nm, text, len, error);
    cur = outer;
    return out;
}

/* The scenario in the file at path, or NULL with *error set, as wsc_parse (a file that
 * cannot be read is an error too). */
wsc_scenario *wsc_parse_file(const char *path, char **error)
{
    *error = NULL;
    size_t len;
    /* a file of 64 MB or more is refused: no scenario is that long */
    char *buf = wsi_read_file(path, WSI_INPUT_MAX, &len);
    if (!buf) {
        int e = errno;
        if (e == ENOMEM) {
            *error = oom_error(path);
            return NULL;
        }
        char why[160];
        snprintf(why, sizeof why, "%s%s", e == EFBIG || e == EIO ? "" : "cannot open: ",
                 wsi_read_error(e));
        size_t n = strlen(path) + sizeof why + 16;
        *error = wsi_malloc(n);
        if (*error) snprintf(*error, n, "%s:0:0: error: %s", path, why);
        return NULL;
    }
    wsc_scenario *sc = wsc_parse(path, buf, len, error);
    wsi_free(buf);
    return sc;
}

const char *wsc_title(const wsc_scenario *sc) { return sc->title; }
unsigned wsc_forbidden(const wsc_scenario *sc) { return sc->forbid; }
const char *wsc_name(const wsc_scenario *sc) { return sc->name; }
const char *wsc_needs_fake(const wsc_scenario *sc) { return sc->needs_fake; }
const char *wsc_needs_real(const wsc_scenario *sc) { return sc->needs_real; }
size_t wsc_statements(const wsc_scenario *sc) { return sc->nst; }
