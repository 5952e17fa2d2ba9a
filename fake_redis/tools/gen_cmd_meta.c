/* gen_cmd_meta.c -- fakeredis-gen-cmd-meta: the build's generator of cmd_meta_table.c.
 *
 *   fakeredis-gen-cmd-meta IN.txt OUT.c
 *
 * Reads Redis 7.0.15's command metadata as tools/record_command_table.py records it
 * (fake_redis/data/cmd_meta.txt; its header describes the format) and writes the C table
 * that fake_redis/src/cmd_meta.h declares: the key spec arrays, one fri_cmd_meta row per
 * command and subcommand in the file's order, the row count and COMMAND COUNT.  Names
 * become the header's constants by their spelling ("skip_monitor" is FRI_MF_SKIP_MONITOR,
 * "@sortedset"'s "sortedset" FRI_ACL_SORTEDSET), so a name the header lacks fails the
 * compilation of the output.  The rows' links (parent, first subcommand, count) come from
 * the names, which must be sorted (strcmp) and unique.  The recorded bytes are copied as
 * the C string pieces they are written as, their lengths counted here.
 *
 * Bad input is reported as "IN:line:col: error: ..." and exits 1; nothing is written then.
 * A host tool of the build, written in C so that building needs no python.
 */
#include <ctype.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A string field: its pieces as written (quotes included) and the bytes they stand for. */
typedef struct text {
    char *src;   /* the pieces, separated by "\n    " for the output */
    size_t len;  /* bytes once the escapes are read */
} text;

/* One command or subcommand, as read. */
typedef struct row {
    char *name;
    int line;                 /* of its "command" line, for messages */
    long arity;
    char *flags, *acl;        /* the constants' expressions, "0" for none */
    long first, last, step;
    char *getkeys;            /* FRI_GK_* */
    long docs_fields;
    char **specs;             /* each a C initializer of fri_keyspec */
    int nspecs;
    text info, docs;
    unsigned seen;            /* which fields were given (bits of FIELDS) */
    long parent, first_sub, nsubs; /* the links cmd_meta.h describes */
} row;

static const char *const FIELDS[] = {"arity", "flags", "acl", "keys", "getkeys",
                                     "docs-fields", "keyspec", "info", "docs"};
enum { F_ARITY, F_FLAGS, F_ACL, F_KEYS, F_GETKEYS, F_DOCS_FIELDS, F_KEYSPEC, F_INFO, F_DOCS,
       F_COUNT };
#define F_REQUIRED (((1u << F_COUNT) - 1) & ~(1u << F_KEYSPEC))

static const char *in_path;
static int lineno;

static void fail_at(int col, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "%s:%d:%d: error: ", in_path, lineno, col);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
    exit(1);
}

static void *xrealloc(void *p, size_t n)
{
    p = realloc(p, n);
    if (!p) {
        fprintf(stderr, "fakeredis-gen-cmd-meta: out of memory\n");
        exit(1);
    }
    return p;
}

static char *xstrdup(const char *s)
{
    size_t n = strlen(s) + 1;
    return memcpy(xrealloc(NULL, n), s, n);
}

/* Appends s to the growing string *dst. */
static void append(char **dst, const char *s, size_t n)
{
    size_t have = *dst ? strlen(*dst) : 0;
    *dst = xrealloc(*dst, have + n + 1);
    memcpy(*dst + have, s, n);
    (*dst)[have + n] = '\0';
}

/* The next space-separated word of *p (NULL at the end), NUL-terminated in place. */
static char *word(char **p)
{
    char *s = *p;
    while (*s == ' ') s++;
    if (!*s) return NULL;
    char *e = s;
    while (*e && *e != ' ') e++;
    if (*e) *e++ = '\0';
    *p = e;
    return s;
}

/* A whole decimal integer word, else an error at col. */
static long number(const char *w, const char *line)
{
    if (!w) fail_at((int)strlen(line) + 1, "a number is missing");
    char *end;
    errno = 0;
    long v = strtol(w, &end, 10);
    if (end == w || *end || errno) fail_at((int)(w - line) + 1, "'%s' is not a number", w);
    return v;
}

/* The constants of prefix for the names in rest ("0" for none): "a b" becomes
 * "PREFIX_A | PREFIX_B".  A name is letters, digits and '_'. */
static char *constants(const char *prefix, char *rest, const char *line)
{
    char *out = NULL, *w;
    while ((w = word(&rest))) {
        if (out) append(&out, " | ", 3);
        append(&out, prefix, strlen(prefix));
        for (const char *c = w; *c; c++) {
            if (!isalnum((unsigned char)*c) && *c != '_')
                fail_at((int)(c - line) + 1, "'%c' cannot be in a name", *c);
            char u = (char)toupper((unsigned char)*c);
            append(&out, &u, 1);
        }
    }
    return out ? out : xstrdup("0");
}

/* Reads the quoted pieces at p into t: checks the escapes and counts the bytes. */
static void add_pieces(text *t, char *p, const char *line)
{
    while (*p == ' ') p++;
    if (*p != '"') fail_at((int)(p - line) + 1, "a quoted string is expected");
    char *start = p++;
    size_t len = 0;
    while (*p != '"') {
        if (!*p) fail_at((int)(p - line) + 1, "the string is not closed");
        if (*p == '\\') {
            p++;
            if (*p == '\\' || *p == '"' || *p == 'r' || *p == 'n') {
                p++;
            } else if (p[0] >= '0' && p[0] <= '3' && p[1] >= '0' && p[1] <= '7' &&
                       p[2] >= '0' && p[2] <= '7') {
                p += 3;
            } else {
                fail_at((int)(p - line), "only \\\\ \\\" \\r \\n and \\ooo escapes are read");
            }
        } else if ((unsigned char)*p < 32 || (unsigned char)*p > 126 || *p == '?') {
            fail_at((int)(p - line) + 1, "byte 0x%02x must be escaped", (unsigned char)*p);
        } else {
            p++;
        }
        len++;
    }
    p++;
    while (*p == ' ') p++;
    if (*p) fail_at((int)(p - line) + 1, "one quoted piece a line");
    if (t->src) append(&t->src, "\n    ", 5);
    append(&t->src, start, (size_t)(p - start));
    t->len += len;
}

/* A key spec line's rest, "FLAGS | BEGIN | FIND", as a fri_keyspec initializer. */
static char *keyspec(char *rest, const char *line)
{
    char *part[3];
    for (int i = 0; i < 3; i++) {
        part[i] = rest;
        char *bar = strchr(rest, '|');
        if ((i < 2) != (bar != NULL))
            fail_at((int)(rest - line) + 1, "a key spec is FLAGS | BEGIN | FIND");
        if (bar) {
            *bar = '\0';
            rest = bar + 1;
        }
    }
    char *flags = constants("FRI_KS_", part[0], line);
    char bs[160], fk[96];
    const char *w = word(&part[1]);
    if (w && !strcmp(w, "index")) {
        snprintf(bs, sizeof(bs), "FRI_BS_INDEX, %ld, NULL", number(word(&part[1]), line));
    } else if (w && !strcmp(w, "keyword")) {
        const char *kw = word(&part[1]);
        if (!kw || strlen(kw) > 64 || strpbrk(kw, "\"\\"))
            fail_at((int)(part[1] - line) + 1, "a keyword of at most 64 plain bytes is expected");
        long from = number(word(&part[1]), line);
        snprintf(bs, sizeof(bs), "FRI_BS_KEYWORD, %ld, \"%s\"", from, kw);
    } else if (w && !strcmp(w, "unknown")) {
        snprintf(bs, sizeof(bs), "FRI_BS_UNKNOWN, 0, NULL");
    } else {
        fail_at((int)(part[1] - line) + 1, "begin_search is index, keyword or unknown");
    }
    w = word(&part[2]);
    if (w && (!strcmp(w, "range") || !strcmp(w, "keynum"))) {
        long a = number(word(&part[2]), line), b = number(word(&part[2]), line);
        long c = number(word(&part[2]), line);
        snprintf(fk, sizeof(fk), "%s, %ld, %ld, %ld",
                 w[0] == 'r' ? "FRI_FK_RANGE" : "FRI_FK_KEYNUM", a, b, c);
    } else if (w && !strcmp(w, "unknown")) {
        snprintf(fk, sizeof(fk), "FRI_FK_UNKNOWN, 0, 0, 0");
    } else {
        fail_at((int)(part[2] - line) + 1, "find_keys is range, keynum or unknown");
    }
    char *out = NULL;
    append(&out, "{", 1);
    append(&out, flags, strlen(flags));
    append(&out, ", ", 2);
    append(&out, bs, strlen(bs));
    append(&out, ", ", 2);
    append(&out, fk, strlen(fk));
    append(&out, "}", 1);
    free(flags);
    return out;
}

/* The row whose name is name, -1 when there is none (rows are sorted). */
static long find_row(const row *rows, long n, const char *name, size_t len)
{
    long lo = 0, hi = n - 1;
    while (lo <= hi) {
        long mid = (lo + hi) / 2;
        int cmp = strncmp(rows[mid].name, name, len);
        if (cmp == 0 && rows[mid].name[len]) cmp = 1;
        if (cmp == 0) return mid;
        if (cmp < 0) lo = mid + 1;
        else hi = mid - 1;
    }
    return -1;
}

int main(int argc, char **argv)
{
    if (argc != 3) {
        fprintf(stderr, "usage: fakeredis-gen-cmd-meta IN.txt OUT.c\n");
        return 2;
    }
    in_path = argv[1];
    FILE *in = fopen(in_path, "r");
    if (!in) {
        fprintf(stderr, "%s: %s\n", in_path, strerror(errno));
        return 1;
    }
    row *rows = NULL;
    long nrows = 0, toplevel = -1;
    text *last_text = NULL; /* the string a continuation line extends */
    char *buf = NULL;
    size_t cap = 0;
    ssize_t got;
    while ((got = getline(&buf, &cap, in)) >= 0) {
        lineno++;
        if (got > 0 && buf[got - 1] == '\n') buf[--got] = '\0';
        char *line = buf, *rest = buf;
        if (!*line || *line == '#') continue;
        if (*line == ' ') {
            if (!last_text) fail_at(1, "an indented line continues an info or docs string");
            add_pieces(last_text, line, line);
            continue;
        }
        last_text = NULL;
        const char *key = word(&rest);
        if (!strcmp(key, "toplevel")) {
            toplevel = number(word(&rest), line);
            continue;
        }
        if (!strcmp(key, "command")) {
            const char *name = word(&rest);
            if (!name || word(&rest)) fail_at(9, "\"command\" takes one name");
            if (nrows && strcmp(rows[nrows - 1].name, name) >= 0)
                fail_at(9, "'%s' is out of order (the rows are sorted by name)", name);
            rows = xrealloc(rows, sizeof(*rows) * (size_t)(nrows + 1));
            memset(&rows[nrows], 0, sizeof(*rows));
            rows[nrows].name = xstrdup(name);
            rows[nrows].line = lineno;
            nrows++;
            continue;
        }
        if (!nrows) fail_at(1, "'%s' before the first \"command\"", key);
        row *r = &rows[nrows - 1];
        int f = 0;
        while (f < F_COUNT && strcmp(FIELDS[f], key)) f++;
        if (f == F_COUNT) fail_at(1, "unknown field '%s'", key);
        if (f != F_KEYSPEC && (r->seen & (1u << f))) fail_at(1, "'%s' given twice", key);
        r->seen |= 1u << f;
        switch (f) {
        case F_ARITY: r->arity = number(word(&rest), line); break;
        case F_FLAGS: r->flags = constants("FRI_MF_", rest, line); break;
        case F_ACL: r->acl = constants("FRI_ACL_", rest, line); break;
        case F_KEYS:
            r->first = number(word(&rest), line);
            r->last = number(word(&rest), line);
            r->step = number(word(&rest), line);
            break;
        case F_GETKEYS: {
            char *g = word(&rest);
            if (!g) fail_at(9, "getkeys takes a name (none for none)");
            r->getkeys = constants("FRI_GK_", g, line);
            break;
        }
        case F_DOCS_FIELDS: r->docs_fields = number(word(&rest), line); break;
        case F_KEYSPEC:
            r->specs = xrealloc(r->specs, sizeof(char *) * (size_t)(r->nspecs + 1));
            r->specs[r->nspecs++] = keyspec(rest, line);
            break;
        case F_INFO:
        case F_DOCS:
            last_text = f == F_INFO ? &r->info : &r->docs;
            add_pieces(last_text, rest, line);
            break;
        }
        if (f != F_FLAGS && f != F_ACL && f != F_KEYSPEC && f != F_INFO && f != F_DOCS &&
            word(&rest))
            fail_at(1, "too many values for '%s'", key);
    }
    free(buf);
    fclose(in);
    lineno++;
    if (toplevel < 0) fail_at(1, "no \"toplevel N\" line");
    for (long i = 0; i < nrows; i++) rows[i].parent = rows[i].first_sub = -1;
    for (long i = 0; i < nrows; i++) {
        row *r = &rows[i];
        lineno = r->line;
        for (int f = 0; f < F_COUNT; f++)
            if ((F_REQUIRED & (1u << f)) && !(r->seen & (1u << f)))
                fail_at(1, "'%s' has no '%s'", r->name, FIELDS[f]);
        const char *bar = strchr(r->name, '|');
        if (!bar) continue;
        /* a container's subcommands are contiguous rows (command.c walks them so) */
        r->parent = find_row(rows, nrows, r->name, (size_t)(bar - r->name));
        if (r->parent < 0) fail_at(9, "'%s' has no container row", r->name);
        row *p = &rows[r->parent];
        if (p->first_sub < 0) p->first_sub = i;
        else if (i != p->first_sub + p->nsubs)
            fail_at(9, "'%s' is not next to the other subcommands of '%s'", r->name, p->name);
        p->nsubs++;
    }

    FILE *out = fopen(argv[2], "w");
    if (!out) {
        fprintf(stderr, "%s: %s\n", argv[2], strerror(errno));
        return 1;
    }
    const char *base = strrchr(in_path, '/');
    fprintf(out, "/* cmd_meta_table.c -- GENERATED at build time by fakeredis-gen-cmd-meta "
                 "(fake_redis/tools/gen_cmd_meta.c)\n * from %s: do not edit.  %ld "
                 "top-level commands, %ld rows. */\n#include \"cmd_meta.h\"\n\n",
            base ? base + 1 : in_path, toplevel, nrows);
    for (long i = 0; i < nrows; i++) {
        if (!rows[i].nspecs) continue;
        fprintf(out, "static const fri_keyspec ks_%ld[] = {\n", i);
        for (int k = 0; k < rows[i].nspecs; k++) fprintf(out, "    %s,\n", rows[i].specs[k]);
        fprintf(out, "};\n");
    }
    fprintf(out, "\nconst fri_cmd_meta fri_cmd_meta_table[] = {\n");
    for (long i = 0; i < nrows; i++) {
        const row *r = &rows[i];
        fprintf(out, "    {\"%s\", %ld, %ld, %ld, %ld,\n     %s,\n     %s,\n", r->name,
                r->parent, r->first_sub, r->nsubs, r->arity, r->flags, r->acl);
        fprintf(out, "     %ld, %ld, %ld, %d, ", r->first, r->last, r->step, r->nspecs);
        if (r->nspecs) fprintf(out, "ks_%ld", i);
        else fprintf(out, "NULL");
        fprintf(out, ", %s, %ld,\n", r->getkeys, r->docs_fields);
        fprintf(out, "     %zu, %s,\n", r->info.len, r->info.src);
        fprintf(out, "     %zu, %s},\n", r->docs.len, r->docs.src);
    }
    fprintf(out, "};\n\nconst size_t fri_cmd_meta_count = %ld;\n", nrows);
    fprintf(out, "const size_t fri_cmd_meta_toplevel = %ld;\n", toplevel);
    int rc = 0;
    if (fclose(out) != 0) {
        fprintf(stderr, "%s: %s\n", argv[2], strerror(errno));
        remove(argv[2]);
        rc = 1;
    }
    for (long i = 0; i < nrows; i++) {
        row *r = &rows[i];
        for (int k = 0; k < r->nspecs; k++) free(r->specs[k]);
        free(r->specs);
        free(r->name);
        free(r->flags);
        free(r->acl);
        free(r->getkeys);
        free(r->info.src);
        free(r->docs.src);
    }
    free(rows);
    return rc;
}
