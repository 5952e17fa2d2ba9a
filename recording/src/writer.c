/* writer.c -- writing a recording (wsr.h, docs/recording.md).
 *
 * Each event is built in one line buffer, then handed to stdio (a 64 KiB buffer): a
 * server records every command, so a line costs one formatting pass and a memcpy, and the
 * file is written in large pieces (wsr_writer_flush, once per loop turn). */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "wsr.h"
#include "wsr_int.h"

struct wsr_writer {
    FILE *f;              /* the file */
    char *path;           /* its name */
    char *line;           /* the line being built */
    size_t len, cap;      /* its bytes, room */
    int failed;           /* sticky: nothing more is written */
    char err[256];        /* why it failed */
    uint64_t events;      /* lines written after the header */
    uint64_t bytes;       /* bytes handed to the file */
    size_t limit;         /* wsr_event_text: the length past which the line is cut, so
                             what lies beyond it is not built (0: none) */
};

/* Marks w failed with a message (the first one stays). */
static int fail(wsr_writer *w, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int fail(wsr_writer *w, const char *fmt, ...)
{
    if (!w->failed) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(w->err, sizeof w->err, fmt, ap);
        va_end(ap);
        w->failed = 1;
    }
    return -1;
}

/* Room for n more bytes in the line; 0 or -1 (out of memory: the writer fails). */
static int room(wsr_writer *w, size_t n)
{
    if (w->cap - w->len > n) return 0;
    size_t cap = w->cap ? w->cap : 256;
    while (cap - w->len <= n) {
        if (cap > SIZE_MAX / 2) return fail(w, "out of memory");
        cap *= 2;
    }
    char *p = realloc(w->line, cap);
    if (!p) return fail(w, "out of memory");
    w->line = p;
    w->cap = cap;
    return 0;
}

static void put(wsr_writer *w, const char *p, size_t n)
{
    if (w->failed || room(w, n) < 0) return;
    memcpy(w->line + w->len, p, n);
    w->len += n;
}

static void puts_(wsr_writer *w, const char *s) { put(w, s, strlen(s)); }

static void putf(wsr_writer *w, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void putf(wsr_writer *w, const char *fmt, ...)
{
    char buf[96];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    if (n > 0) put(w, buf, (size_t)n < sizeof buf ? (size_t)n : sizeof buf - 1);
}

/* Appends a token (bare or quoted). */
static void token(wsr_writer *w, const char *p, size_t n)
{
    if (w->failed) return;
    int quoted = wsri_needs_quotes(p, n); /* (the whole token's choice) */
    if (w->limit) {
        /* a token's first `limit` bytes make at least `limit` characters: the line is cut
         * before the rest would show (a read's reply can be megabytes) */
        if (w->len > w->limit) return;
        if (n > w->limit) n = w->limit;
    }
    size_t need = wsri_token(NULL, 0, p, n, quoted);
    if (room(w, need + 1) < 0) return;
    wsri_token(w->line + w->len, need + 1, p, n, quoted);
    w->len += need;
}

/* " key=TOKEN" */
static void field(wsr_writer *w, const char *key, const char *p, size_t n)
{
    putf(w, " %s=", key);
    token(w, p, n);
}

/* Appends " CONN t=T KEY=WORD", the head of a close and of a hold line. */
static void conn_word(wsr_writer *w, const wsr_event *e, const char *key)
{
    putf(w, " %" PRIu64 " t=%" PRId64, e->conn, e->t);
    field(w, key, e->word, strlen(e->word));
}

static void args(wsr_writer *w, int argc, const char *const *argv, const size_t *argvlen)
{
    for (int i = 0; i < argc; i++) {
        put(w, " ", 1);
        token(w, argv[i], argvlen ? argvlen[i] : strlen(argv[i]));
    }
}

/* Ends the line and hands it to the file. */
static int emit(wsr_writer *w)
{
    put(w, "\n", 1);
    if (w->failed) {
        w->len = 0;
        return -1;
    }
    if (fwrite(w->line, 1, w->len, w->f) != w->len)
        return fail(w, "%s: %s", w->path, strerror(errno));
    w->bytes += w->len;
    w->events++;
    w->len = 0;
    return 0;
}


/* Whether an existing file at path may be replaced: missing, empty, or a recording. */
static int replaceable(const char *path, char *err, size_t errcap)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) return 1;
    struct stat st;
    char head[sizeof WSR_MAGIC] = {0};
    int ok = 0;
    if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode)) {
        ssize_t got = st.st_size == 0 ? 0 : read(fd, head, sizeof head);
        ok = got == 0 || wsr_looks_like_recording(head, got < 0 ? 0 : (size_t)got);
    }
    close(fd);
    if (!ok && err)
        snprintf(err, errcap, "%s exists and is not a recording: not overwritten", path);
    return ok;
}

wsr_writer *wsr_writer_open(const char *path, const char *const *meta, size_t nmeta,
                            char *err, size_t errcap)
{
    if (err && errcap) err[0] = '\0';
    if (!replaceable(path, err, errcap)) return NULL;
    wsr_writer *w = calloc(1, sizeof *w);
    char *copy = w ? strdup(path) : NULL;
    if (!copy) {
        free(w);
        if (err) snprintf(err, errcap, "out of memory");
        return NULL;
    }
    w->path = copy;
    w->f = fopen(path, "w");
    if (!w->f) {
        if (err) snprintf(err, errcap, "%s: %s", path, strerror(errno));
        free(w->path);
        free(w);
        return NULL;
    }
    setvbuf(w->f, NULL, _IOFBF, 64 * 1024);
    w->len = 0;
    putf(w, "%s %d", WSR_MAGIC, WSR_VERSION);
    emit(w);
    for (size_t i = 0; i < nmeta; i++) {
        puts_(w, "meta ");
        token(w, meta[2 * i], strlen(meta[2 * i]));
        put(w, " ", 1);
        token(w, meta[2 * i + 1], strlen(meta[2 * i + 1]));
        emit(w);
    }
    w->events = 0;
    if (w->failed) {
        if (err) snprintf(err, errcap, "%s", w->err);
        fclose(w->f);
        free(w->line);
        free(w->path);
        free(w);
        return NULL;
    }
    return w;
}

/* ----- One event as its line (the writer's lines and wsr_event_text are the same) -------- */

/* Builds e's line (without its LF) into w's line buffer. */
static void build(wsr_writer *w, const wsr_event *e)
{
    static const char *const kinds[] = {"", "open", "close", "cmd", "wait", "push", "hold",
                                        "clock", "note", "end", "call"};
    w->len = 0;
    puts_(w, e->kind >= WSR_OPEN && e->kind <= WSR_CALL ? kinds[e->kind] : "?");
    switch (e->kind) {
    case WSR_OPEN:
        putf(w, " %" PRIu64 " t=%" PRId64, e->conn, e->t);
        field(w, "addr", e->addr ? e->addr : "?", e->addr ? strlen(e->addr) : 1);
        if (e->pid >= 0) putf(w, " pid=%lld", e->pid);
        if (e->name) field(w, "name", e->name, e->name_len);
        break;
    case WSR_CLOSE:
        conn_word(w, e, "why");
        break;
    case WSR_CMD:
    case WSR_WAIT:
        putf(w, " %" PRIu64 " b=%" PRIu64 " t=%" PRId64 " m=%d", e->conn, e->batch, e->t,
             e->multi ? 1 : 0);
        if (e->name) field(w, "name", e->name, e->name_len);
        if (e->kind == WSR_CMD && e->since >= 0) putf(w, " since=%" PRId64, e->since);
        args(w, e->argc, e->argv, e->argvlen);
        if (e->kind == WSR_CMD) {
            puts_(w, " => ");
            token(w, e->reply ? e->reply : "", e->reply ? e->reply_len : 0);
        }
        break;
    case WSR_CALL:
        putf(w, " %" PRIu64 " b=%" PRIu64 " t=%" PRId64, e->conn, e->batch, e->t);
        args(w, e->argc, e->argv, e->argvlen);
        puts_(w, " => ");
        token(w, e->reply ? e->reply : "", e->reply ? e->reply_len : 0);
        break;
    case WSR_PUSH:
        putf(w, " %" PRIu64 " t=%" PRId64 " => ", e->conn, e->t);
        token(w, e->reply, e->reply_len);
        break;
    case WSR_HOLD:
        conn_word(w, e, "what");
        putf(w, " n=%" PRIu64, e->n);
        args(w, e->argc, e->argv, e->argvlen);
        break;
    case WSR_CLOCK:
        putf(w, " t=%" PRId64 " from=%" PRId64, e->t, e->from);
        field(w, "why", e->word, strlen(e->word));
        break;
    case WSR_NOTE:
        putf(w, " t=%" PRId64 " ", e->t);
        token(w, e->word, strlen(e->word));
        break;
    case WSR_END:
        putf(w, " t=%" PRId64, e->t);
        break;
    }
}

int wsr_write_event(wsr_writer *w, const wsr_event *e)
{
    if (!w || w->failed) return -1;
    build(w, e);
    return emit(w);
}

char *wsr_event_text(const wsr_event *e, size_t max)
{
    wsr_writer w = {.limit = max >= 4 ? max : 0};
    build(&w, e);
    if (w.failed) {
        free(w.line);
        return NULL;
    }
    if (max >= 4 && w.len > max) {
        memcpy(w.line + max - 3, "...", 3);
        w.len = max;
    }
    put(&w, "", 1); /* the NUL */
    if (w.failed) {
        free(w.line);
        return NULL;
    }
    return w.line;
}

int wsr_write_open(wsr_writer *w, uint64_t conn, int64_t t, const char *addr, long long pid,
                   const char *name, size_t name_len)
{
    wsr_event e = {.kind = WSR_OPEN, .conn = conn, .t = t, .addr = addr, .pid = pid,
                   .name = name, .name_len = name_len};
    return wsr_write_event(w, &e);
}

int wsr_write_close(wsr_writer *w, uint64_t conn, int64_t t, const char *why)
{
    wsr_event e = {.kind = WSR_CLOSE, .conn = conn, .t = t, .word = why};
    return wsr_write_event(w, &e);
}

int wsr_write_cmd(wsr_writer *w, uint64_t conn, uint64_t batch, int64_t t, int multi,
                  const char *name, size_t name_len, int64_t since, int argc,
                  const char *const *argv, const size_t *argvlen, const char *reply,
                  size_t reply_len)
{
    wsr_event e = {.kind = WSR_CMD, .conn = conn, .batch = batch, .t = t, .multi = multi,
                   .name = name, .name_len = name_len, .since = since, .argc = argc,
                   .argv = argv, .argvlen = argvlen, .reply = reply, .reply_len = reply_len};
    return wsr_write_event(w, &e);
}

int wsr_write_call(wsr_writer *w, uint64_t conn, uint64_t batch, int64_t t, int argc,
                   const char *const *argv, const size_t *argvlen, const char *reply,
                   size_t reply_len)
{
    wsr_event e = {.kind = WSR_CALL, .conn = conn, .batch = batch, .t = t, .argc = argc,
                   .argv = argv, .argvlen = argvlen, .reply = reply, .reply_len = reply_len};
    return wsr_write_event(w, &e);
}

int wsr_write_wait(wsr_writer *w, uint64_t conn, uint64_t batch, int64_t t, int multi,
                   const char *name, size_t name_len, int argc, const char *const *argv,
                   const size_t *argvlen)
{
    wsr_event e = {.kind = WSR_WAIT, .conn = conn, .batch = batch, .t = t, .multi = multi,
                   .name = name, .name_len = name_len, .since = -1, .argc = argc, .argv = argv,
                   .argvlen = argvlen};
    return wsr_write_event(w, &e);
}

int wsr_write_push(wsr_writer *w, uint64_t conn, int64_t t, const char *bytes, size_t len)
{
    wsr_event e = {.kind = WSR_PUSH, .conn = conn, .t = t, .reply = bytes, .reply_len = len};
    return wsr_write_event(w, &e);
}

int wsr_write_hold(wsr_writer *w, uint64_t conn, int64_t t, const char *what, uint64_t n,
                   int argc, const char *const *argv, const size_t *argvlen)
{
    wsr_event e = {.kind = WSR_HOLD, .conn = conn, .t = t, .word = what, .n = n, .argc = argc,
                   .argv = argv, .argvlen = argvlen};
    return wsr_write_event(w, &e);
}

int wsr_write_clock(wsr_writer *w, int64_t t, int64_t from, const char *why)
{
    wsr_event e = {.kind = WSR_CLOCK, .t = t, .from = from, .word = why};
    return wsr_write_event(w, &e);
}

int wsr_write_note(wsr_writer *w, int64_t t, const char *text)
{
    wsr_event e = {.kind = WSR_NOTE, .t = t, .word = text};
    return wsr_write_event(w, &e);
}

int wsr_writer_flush(wsr_writer *w)
{
    if (!w || w->failed) return -1;
    if (fflush(w->f) != 0) return fail(w, "%s: %s", w->path, strerror(errno));
    return 0;
}

uint64_t wsr_writer_events(const wsr_writer *w) { return w ? w->events : 0; }
uint64_t wsr_writer_bytes(const wsr_writer *w) { return w ? w->bytes : 0; }
const char *wsr_writer_path(const wsr_writer *w) { return w ? w->path : ""; }
const char *wsr_writer_error(const wsr_writer *w) { return w ? w->err : ""; }

int wsr_writer_close(wsr_writer *w, int64_t t, char *err, size_t errcap)
{
    if (!w) return 0;
    wsr_event e = {.kind = WSR_END, .t = t};
    wsr_write_event(w, &e);
    wsr_writer_flush(w);
    if (fclose(w->f) != 0 && !w->failed) fail(w, "%s: %s", w->path, strerror(errno));
    int rc = w->failed ? -1 : 0;
    if (rc && err) snprintf(err, errcap, "%s", w->err);
    free(w->line);
    free(w->path);
    free(w);
    return rc;
}
