/* cmd.c -- owned commands and text for the consumer model: building commands argument by
 * argument, copying a caller's, splitting a redis-cli line, and printing them the way
 * redis-cli shows them (the trace's notation).  Out of memory aborts (wsi_xmalloc: the
 * engine would otherwise lose a step silently, which a simulator of lost steps must never
 * do). */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sim_int.h"

/* ----- Commands ------------------------------------------------------------------------ */

/* Grows one of the builder's arrays from its inline room to the heap, or on the heap. */
static void *grow_room(void *cur, const void *inline_room, size_t used, size_t cap_bytes)
{
    if (cur != inline_room) return wsi_xrealloc(cur, cap_bytes);
    void *p = wsi_xmalloc(cap_bytes);
    memcpy(p, cur, used);
    return p;
}

/* Appends the len bytes at p as the builder's next argument. */
void wsi_cmdb_add(wsi_cmdb *b, const char *p, size_t len)
{
    if (!b->data) {
        b->off = b->off0;
        b->lens = b->lens0;
        b->cap = WSI_CMDB_ARGS;
        b->data = b->data0;
        b->capbytes = sizeof b->data0;
    }
    if (b->argc == b->cap) {
        size_t used = (size_t)b->cap;
        b->cap *= 2;
        b->off = grow_room(b->off, b->off0, used * sizeof *b->off, (size_t)b->cap * sizeof *b->off);
        b->lens = grow_room(b->lens, b->lens0, used * sizeof *b->lens,
                            (size_t)b->cap * sizeof *b->lens);
    }
    if (b->len + len + 1 > b->capbytes) {
        size_t cap = b->capbytes * 2;
        while (cap < b->len + len + 1) cap *= 2;
        b->data = grow_room(b->data, b->data0, b->len, cap);
        b->capbytes = cap;
    }
    if (len) memcpy(b->data + b->len, p, len);
    b->data[b->len + len] = '\0';
    b->off[b->argc] = b->len;
    b->lens[b->argc] = len;
    b->argc++;
    b->len += len + 1;
}

void wsi_cmdb_adds(wsi_cmdb *b, const char *s) { wsi_cmdb_add(b, s, strlen(s)); }

/* Appends v in decimal as the next argument. */
void wsi_cmdb_addll(wsi_cmdb *b, long long v)
{
    char buf[24];
    char *p = wsi_decimal(buf, v);
    wsi_cmdb_add(b, p, (size_t)(buf + sizeof buf - p));
}

/* A command of argc arguments and `bytes` bytes of argument text (NULs included) in one
 * block; its argv still to be pointed at the text, which starts at *text. */
static wsi_cmd *cmd_block(int argc, size_t bytes, char **text)
{
    size_t n = (size_t)argc;
    size_t head = sizeof(wsi_cmd) + n * sizeof(char *) + n * sizeof(size_t);
    char *block = wsi_xmalloc(head + bytes);
    wsi_cmd *c = (wsi_cmd *)(void *)block;
    c->argc = argc;
    c->argv = (char **)(void *)(block + sizeof(wsi_cmd));
    c->argvlen = (size_t *)(void *)(block + sizeof(wsi_cmd) + n * sizeof(char *));
    *text = block + head;
    return c;
}

/* The built command as one owned block (wsi_cmd_free); the builder is empty and reusable
 * afterwards. */
wsi_cmd *wsi_cmdb_done(wsi_cmdb *b)
{
    char *text;
    wsi_cmd *c = cmd_block(b->argc, b->len, &text);
    if (b->len) memcpy(text, b->data, b->len);
    for (int i = 0; i < b->argc; i++) {
        c->argv[i] = text + b->off[i];
        c->argvlen[i] = b->lens[i];
    }
    if (b->off != b->off0) wsi_free(b->off);
    if (b->lens != b->lens0) wsi_free(b->lens);
    if (b->data != b->data0) wsi_free(b->data);
    b->argc = b->cap = 0;
    b->len = b->capbytes = 0;
    b->off = b->lens = NULL;
    b->data = NULL;
    return c;
}

/* An owned copy of a caller's command (argvlen NULL: NUL-terminated arguments). */
wsi_cmd *wsi_cmd_copy(int argc, const char *const *argv, const size_t *argvlen)
{
    size_t bytes = 0;
    for (int i = 0; i < argc; i++) bytes += (argvlen ? argvlen[i] : strlen(argv[i])) + 1;
    char *text;
    wsi_cmd *c = cmd_block(argc, bytes, &text);
    for (int i = 0; i < argc; i++) {
        size_t len = argvlen ? argvlen[i] : strlen(argv[i]);
        if (len) memcpy(text, argv[i], len);
        text[len] = '\0';
        c->argv[i] = text;
        c->argvlen[i] = len;
        text += len + 1;
    }
    return c;
}

/* The command a redis-cli line types, owned; NULL for a blank line or unbalanced quotes. */
wsi_cmd *wsi_cmd_line(const char *line)
{
    char **argv;
    size_t *lens;
    int argc = fr_split_line(line, &argv, &lens);
    if (argc <= 0) return NULL;
    wsi_cmd *c = wsi_cmd_copy(argc, (const char *const *)argv, lens);
    fr_split_free(argc, argv, lens);
    return c;
}

void wsi_cmd_free(wsi_cmd *c) { wsi_free(c); }

/* Whether c's name is name, ignoring case. */
int wsi_cmd_is(const wsi_cmd *c, const char *name)
{
    return c->argc > 0 && wsi_name_eq(c->argv[0], c->argvlen[0], name);
}

/* ----- Text ------------------------------------------------------------------------------ */

static void text_sink(void *ud, const char *bytes, size_t len) { wsi_text_add(ud, bytes, len); }

/* Appends an argument as redis-cli takes it back: bare when it can be, else quoted with
 * escapes. */
void wsi_text_arg(wsi_text *t, const char *p, size_t len)
{
    int plain = len > 0;
    for (size_t i = 0; i < len && plain; i++) {
        unsigned char ch = (unsigned char)p[i];
        if (ch <= ' ' || ch >= 127 || ch == '"' || ch == '\'' || ch == '\\') plain = 0;
    }
    if (plain) {
        wsi_text_add(t, p, len);
        return;
    }
    wsi_quote(p, len, 0, text_sink, t);
}

/* p itself when its len bytes are printable, else a heap copy quoted with escapes (the
 * caller frees what is not p). */
const char *wsi_shown(const char *p, size_t len)
{
    for (size_t i = 0; i < len; i++) {
        unsigned char ch = (unsigned char)p[i];
        if (ch < ' ' || ch >= 127) {
            wsi_text t = {0};
            wsi_quote(p, len, 0, text_sink, &t);
            return t.p;
        }
    }
    return p;
}

/* Appends c as a redis-cli line (the trace's notation). */
void wsi_text_cmd(wsi_text *t, const wsi_cmd *c)
{
    for (int i = 0; i < c->argc; i++) {
        if (i) wsi_text_add(t, " ", 1);
        wsi_text_arg(t, c->argv[i], c->argvlen[i]);
    }
}
