/* record.c -- the recording: --record FILE and FAKE.RECORD START|STOP|STATUS
 * (docs/recording.md; the format is recording/include/wsr.h).
 *
 * What a client received is accounted for by an offset into its output buffer
 * (frs_obuf.mark): the bytes before it are in the recording.  A command's reply is what
 * its dispatch appended; a blocked command's reply is where frs_drain_fake_events put it
 * (woken_from .. woken_to), written as the command's completion once the command that
 * served it has its own line; every other byte (a message another client published, a
 * MONITOR line, an invalidation) is a push, written before the connection's next line and
 * before anything reaches its socket (frs_record_pushes). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "frs.h"
#include "wsr.h"

/* A copy of a command: the one a connection is blocked in. */
struct frs_saved_cmd {
    int argc;
    char **argv;
    size_t *argvlen;
    uint64_t batch;   /* the read it arrived in */
    int multi;        /* it arrived inside MULTI */
    int64_t since;    /* when it blocked (the fake's clock) */
};

static void saved_free(struct frs_saved_cmd *s)
{
    if (!s) return;
    for (int i = 0; i < s->argc; i++) free(s->argv[i]);
    free(s->argv);
    free(s->argvlen);
    free(s);
}

static struct frs_saved_cmd *saved_new(int argc, const char *const *argv, const size_t *argvlen)
{
    struct frs_saved_cmd *s = calloc(1, sizeof *s);
    if (!s) frs_oom_abort(__func__);
    s->argv = calloc((size_t)argc, sizeof *s->argv);
    s->argvlen = calloc((size_t)argc, sizeof *s->argvlen);
    if (!s->argv || !s->argvlen) frs_oom_abort(__func__);
    for (int i = 0; i < argc; i++) {
        s->argv[i] = frs_memdup(argv[i], argvlen[i]);
        s->argvlen[i] = argvlen[i];
    }
    s->argc = argc;
    return s;
}

/* The recording's state. */
struct frs_recorder {
    wsr_writer *w;            /* the file */
    frs_conn **woken;         /* connections whose woken reply waits for its line, in the
                                 order they were woken */
    size_t nwoken, cap;
};

/* The fake's clock, the recordings' t=. */
static int64_t now(const frs_server *srv) { return fr_clock_now(srv->fake); }

/* The writer, or NULL while nothing is recorded. */
static wsr_writer *writer(const frs_server *srv) { return srv->rec ? srv->rec->w : NULL; }

/* Frees the recorder (the writer is closed already). */
static void recorder_free(frs_server *srv)
{
    for (frs_conn *c = srv->conns; c; c = c->next) {
        saved_free(c->rec_wait);
        c->rec_wait = NULL;
        c->woken_pending = 0;
    }
    free(srv->rec->woken);
    free(srv->rec);
    srv->rec = NULL;
}

/* A failed writer stops the recording with one message; the server goes on. */
static void check_writer(frs_server *srv, int rc)
{
    if (rc == 0 || !srv->rec) return;
    fprintf(stderr, "fakeredis-server: the recording stopped: %s\n",
            wsr_writer_error(srv->rec->w));
    wsr_writer_close(srv->rec->w, now(srv), NULL, 0);
    recorder_free(srv);
}

/* The bytes of c's output at positions [from, to): a pointer into the buffer (the
 * positions are within what is still there: the recorder writes before anything is sent). */
static const char *at_pos(const frs_conn *c, uint64_t pos)
{
    uint64_t rel = pos - c->out.dropped;
    return c->out.p ? c->out.p + rel : "";
}

/* Clamps a position into the part of the buffer still there. */
static uint64_t clamp(const frs_conn *c, uint64_t pos)
{
    uint64_t lo = c->out.dropped + c->out.sent, hi = frs_obuf_pos(&c->out);
    return pos < lo ? lo : pos > hi ? hi : pos;
}

/* Writes [mark, to) of c as a push line and moves the mark there. */
static void push_upto(frs_conn *c, uint64_t to)
{
    frs_server *srv = c->srv;
    uint64_t from = clamp(c, c->out.mark);
    to = clamp(c, to);
    if (to > from)
        check_writer(srv, wsr_write_push(writer(srv), c->id, now(srv), at_pos(c, from),
                                         (size_t)(to - from)));
    if (to > c->out.mark) c->out.mark = to;
}

void frs_record_conn_open(frs_conn *c)
{
    frs_server *srv = c->srv;
    if (!srv->rec) return;
    c->out.mark = frs_obuf_pos(&c->out);
    const char *addr = c->addr;
    char unixaddr[sizeof c->addr + 8];
    if (c->is_unix) { /* "path:0" is CLIENT LIST's form; the recording says what it is */
        snprintf(unixaddr, sizeof unixaddr, "unix:%s", srv->unixsocket ? srv->unixsocket : "?");
        addr = unixaddr;
    }
    check_writer(srv, wsr_write_open(writer(srv), c->id, now(srv), addr, c->peer_pid, c->name,
                                     c->name ? strlen(c->name) : 0));
}

/* The name as the recording shows it. */
static size_t name_len(const frs_conn *c) { return c->name ? strlen(c->name) : 0; }

/* Writes c's woken reply as its command's completion (pushes before and after it too) and
 * takes c off the queue. */
static void record_woken(frs_conn *c)
{
    frs_server *srv = c->srv;
    struct frs_recorder *r = srv->rec;
    for (size_t i = 0; i < r->nwoken; i++)
        if (r->woken[i] == c) {
            memmove(&r->woken[i], &r->woken[i + 1], (r->nwoken - i - 1) * sizeof *r->woken);
            r->nwoken--;
            break;
        }
    c->woken_pending = 0;
    struct frs_saved_cmd *w = c->rec_wait;
    c->rec_wait = NULL;
    uint64_t from = clamp(c, c->woken_from), to = clamp(c, c->woken_to);
    push_upto(c, from);
    if (w && srv->rec)
        check_writer(srv, wsr_write_cmd(writer(srv), c->id, w->batch, now(srv), w->multi,
                                        c->name, name_len(c), w->since, w->argc,
                                        (const char *const *)w->argv, w->argvlen,
                                        at_pos(c, from), (size_t)(to - from)));
    else if (srv->rec) /* it blocked before the recording started: its reply is all we have */
        push_upto(c, to);
    saved_free(w);
    if (srv->rec) {
        c->out.mark = to;
        push_upto(c, frs_obuf_pos(&c->out));
    }
}

void frs_record_pushes(frs_conn *c)
{
    frs_server *srv = c->srv;
    if (!srv->rec || c->out.failed) return;
    if (c->woken_pending) record_woken(c);
    else push_upto(c, frs_obuf_pos(&c->out));
}

void frs_record_woken(frs_conn *c, uint64_t from, uint64_t to)
{
    struct frs_recorder *r = c->srv->rec;
    if (!r) return;
    if (c->woken_pending) record_woken(c); /* cannot happen: it would have blocked twice */
    c->woken_from = from;
    c->woken_to = to;
    c->woken_pending = 1;
    r->woken = frs_array_grow(r->woken, &r->cap, r->nwoken, sizeof *r->woken, 8);
    r->woken[r->nwoken++] = c;
}

void frs_record_conn_close(frs_conn *c, const char *why)
{
    frs_server *srv = c->srv;
    if (srv->rec) {
        frs_record_pushes(c);
        if (srv->rec) check_writer(srv, wsr_write_close(writer(srv), c->id, now(srv), why));
    }
    saved_free(c->rec_wait);
    c->rec_wait = NULL;
    c->woken_pending = 0;
}

void frs_record_command(frs_conn *c, int multi, uint64_t from, int argc,
                        const char *const *argv, const size_t *argvlen)
{
    frs_server *srv = c->srv;
    if (!srv->rec) return;
    if (c->blocked) {
        saved_free(c->rec_wait);
        c->rec_wait = saved_new(argc, argv, argvlen);
        c->rec_wait->batch = c->batch;
        c->rec_wait->multi = multi;
        c->rec_wait->since = now(srv);
        check_writer(srv, wsr_write_wait(writer(srv), c->id, c->batch, now(srv), multi, c->name,
                                         name_len(c), argc, argv, argvlen));
        return;
    }
    /* CLIENT REPLY OFF may have cut what the command appended */
    from = clamp(c, from);
    push_upto(c, from);
    uint64_t to = frs_obuf_pos(&c->out);
    check_writer(srv, wsr_write_cmd(writer(srv), c->id, c->batch, now(srv), multi, c->name,
                                    name_len(c), -1, argc, argv, argvlen, at_pos(c, from),
                                    (size_t)(to - from)));
    if (srv->rec) c->out.mark = to;
}

void frs_record_sweep(frs_server *srv)
{
    if (!srv->rec) return;
    while (srv->rec && srv->rec->nwoken) record_woken(srv->rec->woken[0]);
    /* a connection that was sent anything is on the list of those with output to write
     * (frs_conn_want_flush): only those can hold unrecorded bytes */
    for (frs_conn *c = srv->pending; c && srv->rec; c = c->pend_next)
        if (frs_obuf_pos(&c->out) > c->out.mark) frs_record_pushes(c);
}

void frs_record_flush(frs_server *srv)
{
    if (srv->rec) check_writer(srv, wsr_writer_flush(writer(srv)));
}

void frs_record_clock(frs_server *srv, int64_t from, const char *why)
{
    if (srv->rec) check_writer(srv, wsr_write_clock(writer(srv), now(srv), from, why));
}

void frs_record_hold(frs_conn *c, const char *what, uint64_t n, int argc,
                     const char *const *argv, const size_t *argvlen)
{
    frs_server *srv = c->srv;
    if (srv->rec)
        check_writer(srv, wsr_write_hold(writer(srv), c->id, now(srv), what, n, argc, argv,
                                         argvlen));
}

void frs_record_script_call(frs_server *srv, const fr_call_event *ev)
{
    frs_conn *c = frs_conn_of(srv, ev->client);
    if (!c || !srv->rec) return;
    check_writer(srv, wsr_write_call(writer(srv), c->id, c->batch, now(srv), ev->argc, ev->argv,
                                     ev->argvlen, ev->reply, ev->reply_len));
}

uint64_t frs_record_embedded_open(frs_server *srv, const char *name)
{
    if (!srv->rec) return 0;
    uint64_t id = srv->next_id++;
    check_writer(srv, wsr_write_open(writer(srv), id, now(srv), "embedded", -1, name,
                                     name ? strlen(name) : 0));
    return srv->rec ? id : 0;
}

uint64_t frs_record_new_batch(frs_server *srv) { return ++srv->next_batch; }

void frs_record_embedded_command(frs_server *srv, uint64_t id, const char *name, uint64_t batch,
                                 int multi, int argc, const char *const *argv,
                                 const size_t *argvlen, const char *reply, size_t reply_len)
{
    if (!srv->rec || !id) return;
    frs_record_sweep(srv); /* what earlier commands caused comes first */
    if (!batch) batch = frs_record_new_batch(srv);
    check_writer(srv, wsr_write_cmd(writer(srv), id, batch, now(srv), multi, name,
                                    name ? strlen(name) : 0, -1, argc, argv, argvlen, reply,
                                    reply_len));
    frs_record_sweep(srv); /* the clients it woke, the messages it published */
}

void frs_record_embedded_close(frs_server *srv, uint64_t id)
{
    if (srv->rec && id) check_writer(srv, wsr_write_close(writer(srv), id, now(srv), "embedded"));
}

int frs_record_start(frs_server *srv, const char *path, char *err, size_t errcap)
{
    if (srv->rec) {
        snprintf(err, errcap, "already recording to %s (FAKE.RECORD STOP first)",
                 wsr_writer_path(srv->rec->w));
        return -1;
    }
    char seed[32];
    snprintf(seed, sizeof seed, "%llu", (unsigned long long)srv->opt.seed);
    const char *meta[] = {
        "source", "fakeredis-server " FR_VERSION,
        "redis-version", frs_redis_version(srv),
        "clock", srv->opt.wall_clock ? "wall" : srv->opt.auto_advance_ms ? "auto" : "virtual",
        "seed", seed,
    };
    wsr_writer *w = wsr_writer_open(path, meta, 4, err, errcap);
    if (!w) return -1;
    srv->rec = calloc(1, sizeof *srv->rec);
    if (!srv->rec) frs_oom_abort(__func__);
    srv->rec->w = w;
    /* the connections already there, oldest first (the list is newest first) */
    frs_conn *last = srv->conns;
    while (last && last->next) last = last->next;
    for (frs_conn *c = last; c && srv->rec; c = c->prev) frs_record_conn_open(c);
    return srv->rec ? 0 : -1;
}

int frs_record_stop(frs_server *srv, char *err, size_t errcap)
{
    if (!srv->rec) {
        snprintf(err, errcap, "not recording");
        return -1;
    }
    frs_record_sweep(srv);
    if (!srv->rec) {
        snprintf(err, errcap, "the recording had stopped on an error");
        return -1;
    }
    wsr_writer *w = srv->rec->w;
    recorder_free(srv);
    return wsr_writer_close(w, now(srv), err, errcap);
}

/* ----- FAKE.RECORD ------------------------------------------------------------------------ */

/* FAKE.RECORD START file: +OK, or -ERR with the reason (the file is the user's: a file
 * that is not a recording is never overwritten). */
void frs_cmd_fake_record_start(frs_conn *c, int argc, const char *const *argv,
                               const size_t *argvlen)
{
    char err[512], *path = frs_memdup(argv[2], argvlen[2]);
    if (frs_record_start(c->srv, path, err, sizeof err) < 0) frs_reply_errorf(c, "ERR %s", err);
    else frs_reply_ok(c);
    free(path);
}

/* FAKE.RECORD STOP: +OK once the end line is written and the file closed. */
void frs_cmd_fake_record_stop(frs_conn *c, int argc, const char *const *argv,
                              const size_t *argvlen)
{
    char err[512];
    if (frs_record_stop(c->srv, err, sizeof err) < 0) frs_reply_errorf(c, "ERR %s", err);
    else frs_reply_ok(c);
}

/* FAKE.RECORD STATUS: [file, path, events, n, bytes, n] (a map in RESP3), or an empty
 * array when nothing is recorded. */
void frs_cmd_fake_record_status(frs_conn *c, int argc, const char *const *argv,
                                const size_t *argvlen)
{
    wsr_writer *w = writer(c->srv);
    if (!w) {
        frs_reply_map(c, 0);
        return;
    }
    frs_reply_map(c, 3);
    frs_reply_bulk_cstr(c, "file");
    frs_reply_bulk_cstr(c, wsr_writer_path(w));
    frs_reply_bulk_cstr(c, "events");
    frs_reply_ll(c, (long long)wsr_writer_events(w));
    frs_reply_bulk_cstr(c, "bytes");
    frs_reply_ll(c, (long long)wsr_writer_bytes(w));
}
