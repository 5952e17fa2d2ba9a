/* command_table_md.c -- renders fr_command_at()'s rows as a Markdown table and finds or
 * replaces the generated section of a document.  See command_table_md.h. */
#include "command_table_md.h"

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fakeredis.h"

/* A growable string; on out of memory it drops everything and stays failed, so callers
 * check once at the end. */
typedef struct mdbuf {
    char *p;    /* NUL-terminated contents, NULL once failed */
    size_t len; /* bytes used, NUL excluded */
    size_t cap; /* bytes allocated */
    int failed; /* an allocation failed: p is NULL */
} mdbuf;

static void md_append(mdbuf *b, const char *s, size_t n)
{
    if (b->failed)
        return;
    if (b->len + n + 1 > b->cap) {
        size_t cap = b->cap ? b->cap : 1024;
        while (cap < b->len + n + 1)
            cap *= 2;
        char *p = realloc(b->p, cap);
        if (!p) {
            free(b->p);
            b->p = NULL;
            b->failed = 1;
            return;
        }
        b->p = p;
        b->cap = cap;
    }
    memcpy(b->p + b->len, s, n);
    b->len += n;
    b->p[b->len] = '\0';
}

static void md_puts(mdbuf *b, const char *s) { md_append(b, s, strlen(s)); }

/* One row, copied: fr_command_at() may hand back the same buffer on every call, with
 * strings that a later call overwrites, so nothing it returns is kept. */
typedef struct row {
    char *name;  /* lower case, "container|sub" for subcommands */
    char *group; /* "" when the library gives none */
    char *flags; /* space separated, "" when none */
    int arity;   /* as Redis: negative = at least */
} row;

/* Copies s ("" for NULL) into heap memory; NULL when out of memory. */
static char *copy_str(const char *s)
{
    s = s ? s : "";
    size_t n = strlen(s) + 1;
    char *p = malloc(n);
    return p ? memcpy(p, s, n) : NULL;
}

static void free_rows(row *rows, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        free(rows[i].name);
        free(rows[i].group);
        free(rows[i].flags);
    }
    free(rows);
}

/* Orders rows by group, then name (byte order, names are lower case). */
static int row_cmp(const void *pa, const void *pb)
{
    const row *a = pa, *b = pb;
    int c = strcmp(a->group, b->group);
    return c ? c : strcmp(a->name, b->name);
}

/* Appends a command name as Redis's docs write it: upper case, and a '|' between a
 * container and its subcommand shown as a space (a bare '|' would split the table cell). */
static void md_command_name(mdbuf *b, const char *name)
{
    for (const char *p = name; *p; p++) {
        char ch = *p == '|' ? ' ' : (char)toupper((unsigned char)*p);
        md_append(b, &ch, 1);
    }
}

char *cmdtable_markdown(size_t *len)
{
    size_t n = fr_command_count();
    row *rows = calloc(n ? n : 1, sizeof *rows);
    if (!rows)
        return NULL;
    for (size_t i = 0; i < n; i++) {
        const fr_command_info *info = fr_command_at(i);
        rows[i].name = copy_str(info ? info->name : NULL);
        rows[i].group = copy_str(info ? info->group : NULL);
        rows[i].flags = copy_str(info ? info->flags : NULL);
        rows[i].arity = info ? info->arity : 0;
        if (!rows[i].name || !rows[i].group || !rows[i].flags) {
            free_rows(rows, i + 1);
            return NULL;
        }
    }
    qsort(rows, n, sizeof *rows, row_cmp);

    mdbuf b = {0};
    md_puts(&b, "| Command | Group | Arity | Flags |\n");
    md_puts(&b, "|---|---|--:|---|\n");
    for (size_t i = 0; i < n; i++) {
        char arity[32];
        snprintf(arity, sizeof arity, "%d", rows[i].arity);
        md_puts(&b, "| `");
        md_command_name(&b, rows[i].name);
        md_puts(&b, "` | ");
        md_puts(&b, rows[i].group);
        md_puts(&b, " | ");
        md_puts(&b, arity);
        md_puts(&b, " | ");
        md_puts(&b, rows[i].flags);
        md_puts(&b, " |\n");
    }
    char count[64];
    snprintf(count, sizeof count, "\n%zu commands.\n", n);
    md_puts(&b, count);
    free_rows(rows, n);
    if (b.failed)
        return NULL;
    if (len)
        *len = b.len;
    return b.p;
}

/* Finds the line that is exactly marker (no other text; a trailing '\r' is tolerated)
 * starting at or after from.  Returns its start offset and sets *next to the offset after
 * its '\n' (or len); (size_t)-1 when absent. */
static size_t find_marker_line(const char *doc, size_t len, size_t from, const char *marker,
                               size_t *next)
{
    size_t mlen = strlen(marker);
    size_t pos = from;
    while (pos < len) {
        const char *nl = memchr(doc + pos, '\n', len - pos);
        size_t eol = nl ? (size_t)(nl - doc) : len;
        size_t linelen = eol - pos;
        if (linelen && doc[eol - 1] == '\r')
            linelen--;
        if (linelen == mlen && memcmp(doc + pos, marker, mlen) == 0) {
            *next = nl ? eol + 1 : len;
            return pos;
        }
        pos = nl ? eol + 1 : len;
    }
    return (size_t)-1;
}

int cmdtable_find_section(const char *doc, size_t len, size_t *begin, size_t *end)
{
    size_t after_begin, after_end, dummy;
    size_t b = find_marker_line(doc, len, 0, CMDTABLE_BEGIN, &after_begin);
    if (b == (size_t)-1)
        return -1;
    size_t e = find_marker_line(doc, len, after_begin, CMDTABLE_END, &after_end);
    if (e == (size_t)-1)
        return -1;
    /* A second pair would leave it unclear which one to rewrite. */
    if (find_marker_line(doc, len, after_end, CMDTABLE_BEGIN, &dummy) != (size_t)-1 ||
        find_marker_line(doc, len, after_end, CMDTABLE_END, &dummy) != (size_t)-1 ||
        find_marker_line(doc, len, 0, CMDTABLE_END, &dummy) != e)
        return -1;
    *begin = after_begin;
    *end = e;
    return 0;
}

char *cmdtable_replace_section(const char *doc, size_t len, const char *text, size_t tlen,
                               size_t *outlen)
{
    size_t begin, end;
    if (cmdtable_find_section(doc, len, &begin, &end) != 0)
        return NULL;
    size_t n = begin + tlen + (len - end);
    char *out = malloc(n + 1);
    if (!out)
        return NULL;
    memcpy(out, doc, begin);
    memcpy(out + begin, text, tlen);
    memcpy(out + begin + tlen, doc + end, len - end);
    out[n] = '\0';
    *outlen = n;
    return out;
}

char *cmdtable_read_file(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    mdbuf b = {0};
    char chunk[8192];
    size_t got;
    while ((got = fread(chunk, 1, sizeof chunk, f)) > 0)
        md_append(&b, chunk, got);
    int err = ferror(f);
    fclose(f);
    if (err || b.failed) {
        free(b.p);
        errno = err ? EIO : ENOMEM;
        return NULL;
    }
    if (!b.p)
        md_append(&b, "", 0); /* an empty file: still hand back a NUL-terminated buffer */
    if (b.failed)
        return NULL;
    *len = b.len;
    return b.p;
}
