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
    size_t need = wsr_token(NULL, 0, p, n);
    if (room(w, need + 1) < 0) return;
    wsr_token(w->line + w->len, need + 1, p, n);
    w->len += need;
}

/* " key=TOKEN" */
static void field(wsr_writer *w, const char *key, const char *p, size_t n)
{
    putf(w, " %s=", key);
    token(w, p, n);
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

/* Starts a line "kind" (failed writers start nothing). */
static int begin(wsr_writer *w, const char *kind)
{
    if (!w || w->failed) return -1;
    w->len = 0;
    puts_(w, kind);
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

int wsr_write_open(wsr_writer *w, uint64_t conn, int64_t t, const char *addr, long long pid,
                   const char *name, size_t name_len)
{
    if (begin(w, "open") < 0) return -1;
    putf(w, " %" PRIu64 " t=%" PRId64, conn, t);
    field(w, "addr", addr ? addr : "?", addr ? strlen(addr) : 1);
    if (pid >= 0) putf(w, " pid=%lld", pid);
    if (name) field(w, "name", name, name_len);
    return emit(w);
}

int wsr_write_close(wsr_writer *w, uint64_t conn, int64_t t, const char *why)
{
    if (begin(w, "close") < 0) return -1;
    putf(w, " %" PRIu64 " t=%" PRId64, conn, t);
    field(w, "why", why, strlen(why));
    return emit(w);
}

/* "C b=B t=MS m=M [name=N]" of cmd and wait lines. */
static void command_head(wsr_writer *w, uint64_t conn, uint64_t batch, int64_t t, int multi,
                         const char *name, size_t name_len)
{
    putf(w, " %" PRIu64 " b=%" PRIu64 " t=%" PRId64 " m=%d", conn, batch, t, multi ? 1 : 0);
    if (name) field(w, "name", name, name_len);
}

int wsr_write_cmd(wsr_writer *w, uint64_t conn, uint64_t batch, int64_t t, int multi,
                  const char *name, size_t name_len, int64_t since, int argc,
                  const char *const *argv, const size_t *argvlen, const char *reply,
                  size_t reply_len)
{
    if (begin(w, "cmd") < 0) return -1;
    command_head(w, conn, batch, t, multi, name, name_len);
    if (since >= 0) putf(w, " since=%" PRId64, since);
    args(w, argc, argv, argvlen);
    puts_(w, " => ");
    token(w, reply ? reply : "", reply ? reply_len : 0);
    return emit(w);
}

int wsr_write_wait(wsr_writer *w, uint64_t conn, uint64_t batch, int64_t t, int multi,
                   const char *name, size_t name_len, int argc, const char *const *argv,
                   const size_t *argvlen)
{
    if (begin(w, "wait") < 0) return -1;
    command_head(w, conn, batch, t, multi, name, name_len);
    args(w, argc, argv, argvlen);
    return emit(w);
}

int wsr_write_push(wsr_writer *w, uint64_t conn, int64_t t, const char *bytes, size_t len)
{
    if (begin(w, "push") < 0) return -1;
    putf(w, " %" PRIu64 " t=%" PRId64 " => ", conn, t);
    token(w, bytes, len);
    return emit(w);
}

int wsr_write_hold(wsr_writer *w, uint64_t conn, int64_t t, const char *what, uint64_t n,
                   int argc, const char *const *argv, const size_t *argvlen)
{
    if (begin(w, "hold") < 0) return -1;
    putf(w, " %" PRIu64 " t=%" PRId64, conn, t);
    field(w, "what", what, strlen(what));
    putf(w, " n=%" PRIu64, n);
    args(w, argc, argv, argvlen);
    return emit(w);
}

int wsr_write_clock(wsr_writer *w, int64_t t, int64_t from, const char *why)
{
    if (begin(w, "clock") < 0) return -1;
    putf(w, " t=%" PRId64 " from=%" PRId64, t, from);
    field(w, "why", why, strlen(why));
    return emit(w);
}

int wsr_write_note(wsr_writer *w, int64_t t, const char *text)
{
    if (begin(w, "note") < 0) return -1;
    putf(w, " t=%" PRId64 " ", t);
    token(w, text, strlen(text));
    return emit(w);
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
    if (begin(w, "end") == 0) {
        putf(w, " t=%" PRId64, t);
        emit(w);
    }
    wsr_writer_flush(w);
    if (fclose(w->f) != 0 && !w->failed) fail(w, "%s: %s", w->path, strerror(errno));
    int rc = w->failed ? -1 : 0;
    if (rc && err) snprintf(err, errcap, "%s", w->err);
    free(w->line);
    free(w->path);
    free(w);
    return rc;
}
