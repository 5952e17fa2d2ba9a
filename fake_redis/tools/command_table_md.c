/* command_table_md.c -- renders fr_command_at()'s rows as a Markdown table and finds or
 * replaces the generated section of a document.  See command_table_md.h. */
#include "command_table_md.h"

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fakeredis.h"

/* The text is written to a memory stream (open_memstream: the C library grows it); a write
 * that ran out of memory leaves the stream in error, so callers check once at the end. */

/* Closes the memory stream m whose buffer is *text (*len bytes): returns *text, or NULL
 * (and frees it) when a write or the close failed -- out of memory. */
static char *md_finish(FILE *m, char **text, size_t *len)
{
    int bad = ferror(m);
    if (fclose(m) != 0 || bad) {
        free(*text);
        *text = NULL;
        *len = 0;
    }
    return *text;
}

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
static void md_command_name(FILE *m, const char *name)
{
    for (const char *p = name; *p; p++)
        fputc(*p == '|' ? ' ' : toupper((unsigned char)*p), m);
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

    char *text = NULL;
    size_t tlen = 0;
    FILE *m = open_memstream(&text, &tlen);
    if (!m) {
        free_rows(rows, n);
        return NULL;
    }
    fputs("| Command | Group | Arity | Flags |\n", m);
    fputs("|---|---|--:|---|\n", m);
    for (size_t i = 0; i < n; i++) {
        fputs("| `", m);
        md_command_name(m, rows[i].name);
        fprintf(m, "` | %s | %d | %s |\n", rows[i].group, rows[i].arity, rows[i].flags);
    }
    fprintf(m, "\n%zu commands.\n", n);
    free_rows(rows, n);
    if (!md_finish(m, &text, &tlen))
        return NULL;
    if (len)
        *len = tlen;
    return text;
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
    char *text = NULL;
    size_t tlen = 0;
    FILE *m = open_memstream(&text, &tlen);
    if (!m) {
        fclose(f);
        errno = ENOMEM;
        return NULL;
    }
    char chunk[8192];
    size_t got;
    while ((got = fread(chunk, 1, sizeof chunk, f)) > 0)
        fwrite(chunk, 1, got, m);
    int err = ferror(f);
    fclose(f);
    if (!md_finish(m, &text, &tlen) || err) {
        free(text);
        errno = err ? EIO : ENOMEM;
        return NULL;
    }
    *len = tlen; /* the stream keeps a NUL after the bytes, an empty file included */
    return text;
}
