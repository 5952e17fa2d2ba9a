/* wsr.h -- recordings of Redis traffic: every command of every client, in order, with its
 * reply (docs/recording.md).  fakeredis-server writes them (--record, FAKE.RECORD), so does
 * the recording proxy in front of a real server (wsr_proxy.h); `wsim trace` renders one and
 * `wsim check-trace` checks a consumer's invariants on one (scenario/include/wsc_traffic.h).
 *
 * The format is text, one event a line, versioned: the first line is
 *
 *     wsim-recording 1
 *
 * and a reader refuses any other first line ("not a recording") and any other version.
 * Then `meta` lines, then events, then the `end` line; a file without its `end` line was
 * cut short (the writer died or is still writing) and is refused as truncated unless the
 * caller allows an open recording.  The lines of version 1, their fields in this order
 * (`[...]` optional):
 *
 *   meta KEY VALUE                      after the first line, before any event
 *   open C t=MS addr=TOK [pid=N] [name=TOK]        connection C appeared
 *   cmd  C b=B t=MS m=0|1 [name=TOK] [since=MS] ARG... => REPLY
 *   wait C b=B t=MS m=0|1 [name=TOK] ARG...        C's command blocked (its cmd line
 *                                                   comes when it is served or times out)
 *   call C b=B t=MS ARG... => REPLY                 a command C's script ran (redis.call),
 *                                                   with what the script got; before the
 *                                                   line of the EVAL/FCALL (or EXEC) running it
 *   push C t=MS => BYTES                            bytes C got that answer no command
 *                                                   (Pub/Sub messages, MONITOR, ...)
 *   hold C t=MS what=WORD n=N ARG...                the hold hook (server/src/frs.h)
 *   clock t=MS from=MS why=WORD                     the server moved its clock itself
 *   note t=MS TEXT                                  anything else the writer says
 *   close C t=MS why=WORD                           connection C went
 *   end t=MS                                        the last line
 *
 * C is the connection's id (CLIENT ID on fakeredis-server), B the batch: the commands of
 * one read from the socket share it (a pipeline), numbered 1, 2, ... over the recording.
 * MS is the writer's clock in Unix milliseconds (the fake's, virtual or wall; the proxy's
 * wall clock).  m=1: the command arrived inside MULTI (queued, or EXEC/DISCARD).
 * since=MS: the command blocked at MS and this is when it was served.  A cmd line is
 * written when its reply is known, so lines are in the order commands completed.
 * REPLY and BYTES are the exact bytes the client received (RESP2 or RESP3; possibly
 * empty, with CLIENT REPLY OFF; possibly several values, SUBSCRIBE a b).
 *
 * Tokens: a bare token is bytes 0x21..0x7e without `"`, `\` or `=` (so a bare word with `=`
 * is a field, and `=>` separates the reply); anything else is written "quoted", with \\ \"
 * \n \r \t and \xHH (lower-case hex) for the other bytes outside 0x20..0x7e.  Words are
 * separated by one space; a line ends with LF.  Lines starting with `#`, and empty lines,
 * are ignored.
 *
 * Prefix wsr_.  No global state; out of memory is an error the caller sees (NULL or -1),
 * never an abort.  The library depends on the C library only. */
#ifndef WSR_H
#define WSR_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#ifdef __cplusplus
extern "C" {
#endif

#define WSR_MAGIC "wsim-recording"
#define WSR_VERSION 1

/* ----- Writing ----------------------------------------------------------------------------- */

typedef struct wsr_writer wsr_writer;

/* Opens path for a new recording and writes its first line and the meta pairs
 * (meta[0..2*nmeta), key then value).  A file already there is replaced only when it is
 * empty or itself a recording (its first line starts "wsim-recording "): anything else of
 * the user's is never overwritten.  NULL with a message in err (at most errcap bytes) when
 * it cannot: "FILE exists and is not a recording: not overwritten", the system's error,
 * or out of memory. */
wsr_writer *wsr_writer_open(const char *path, const char *const *meta, size_t nmeta,
                            char *err, size_t errcap);

/* The events.  Each returns 0, or -1 once the writer has failed (a write error or out of
 * memory: sticky, wsr_writer_error says what; nothing more is written).  Strings are
 * argv[i] of argvlen[i] bytes; name NULL for a connection without a name; addr NULL for
 * "?"; pid < 0 for unknown. */
int wsr_write_open(wsr_writer *w, uint64_t conn, int64_t t, const char *addr, long long pid,
                   const char *name, size_t name_len);
int wsr_write_close(wsr_writer *w, uint64_t conn, int64_t t, const char *why);
/* since < 0: the command did not block. */
int wsr_write_cmd(wsr_writer *w, uint64_t conn, uint64_t batch, int64_t t, int multi,
                  const char *name, size_t name_len, int64_t since, int argc,
                  const char *const *argv, const size_t *argvlen, const char *reply,
                  size_t reply_len);
int wsr_write_wait(wsr_writer *w, uint64_t conn, uint64_t batch, int64_t t, int multi,
                   const char *name, size_t name_len, int argc, const char *const *argv,
                   const size_t *argvlen);
int wsr_write_push(wsr_writer *w, uint64_t conn, int64_t t, const char *bytes, size_t len);
/* A command a script of conn ran (its EVAL, EVALSHA, FCALL; batch: that command's), with the
 * reply the script got. */
int wsr_write_call(wsr_writer *w, uint64_t conn, uint64_t batch, int64_t t, int argc,
                   const char *const *argv, const size_t *argvlen, const char *reply,
                   size_t reply_len);
int wsr_write_hold(wsr_writer *w, uint64_t conn, int64_t t, const char *what, uint64_t n,
                   int argc, const char *const *argv, const size_t *argvlen);
int wsr_write_clock(wsr_writer *w, int64_t t, int64_t from, const char *why);
int wsr_write_note(wsr_writer *w, int64_t t, const char *text);
/* Writes buffered lines to the file (the writer buffers; a server flushes once per loop
 * turn, so that a recording read while it runs is at most one turn behind). */
int wsr_writer_flush(wsr_writer *w);
/* Events written so far, and bytes. */
uint64_t wsr_writer_events(const wsr_writer *w);
uint64_t wsr_writer_bytes(const wsr_writer *w);
/* The path it writes, and why it failed ("" while it has not). */
const char *wsr_writer_path(const wsr_writer *w);
const char *wsr_writer_error(const wsr_writer *w);
/* Writes the end line (at t), flushes and closes; frees w.  0, or -1 when something could
 * not be written (the message is printed nowhere: err gets it when given). */
int wsr_writer_close(wsr_writer *w, int64_t t, char *err, size_t errcap);

/* ----- Reading ----------------------------------------------------------------------------- */

typedef enum wsr_kind {
    WSR_OPEN = 1,
    WSR_CLOSE,
    WSR_CMD,
    WSR_WAIT,
    WSR_PUSH,
    WSR_HOLD,
    WSR_CLOCK,
    WSR_NOTE,
    WSR_END,
    WSR_CALL,                /* a script's command (after END: the values above are kept) */
} wsr_kind;

/* One event; its strings live as long as the recording. */
typedef struct wsr_event {
    wsr_kind kind;
    size_t line;             /* its line in the file (1-based) */
    uint64_t conn;           /* OPEN CLOSE CMD WAIT PUSH HOLD CALL */
    uint64_t batch;          /* CMD WAIT CALL */
    int64_t t;               /* every kind */
    int multi;               /* CMD WAIT: arrived inside MULTI */
    const char *name;        /* CMD WAIT OPEN: the connection's name, or NULL */
    size_t name_len;
    int64_t since;           /* CMD: when it blocked, or -1 */
    int64_t from;            /* CLOCK: the reading before */
    const char *addr;        /* OPEN (NUL-terminated) */
    long long pid;           /* OPEN: the peer's process, or -1 */
    const char *word;        /* CLOSE why, HOLD what, CLOCK why, NOTE text (NUL-terminated) */
    uint64_t n;              /* HOLD: the count it held at */
    int argc;                /* CMD WAIT HOLD CALL: the command */
    const char *const *argv; /* NUL-terminated too */
    const size_t *argvlen;
    const char *reply;       /* CMD PUSH CALL: the bytes (whole RESP values, or nothing) */
    size_t reply_len;
} wsr_event;

typedef struct wsr_recording {
    int version;             /* WSR_VERSION */
    const char *name;        /* the file name, for messages */
    size_t nmeta;
    const char *const *meta; /* key, value, key, value ... */
    size_t n;                /* events */
    const wsr_event *ev;     /* in file order */
    int ended;               /* its end line was there */
    size_t lines;            /* lines in the file */
} wsr_recording;

typedef struct wsr_read_options {
    int allow_open;          /* accept a recording without its end line (still being written) */
} wsr_read_options;

/* Parses text[0..len) read from `name` (messages).  Returns the recording (free with
 * wsr_free), or NULL with *error (heap, free() it) set to one line
 * "name:line:col: error: what" -- the first error; a recording is refused whole:
 *   - not a recording (the first line is not "wsim-recording N"; an empty file),
 *   - another version ("... is version 2; this wsim reads version 1"),
 *   - truncated (the last line has no line end; no end line, unless opt->allow_open),
 *   - a malformed line (a field missing or out of order, a bad token or number, reply
 *     bytes that are not RESP), an event after the end line, a connection used before its
 *     open line or after its close line.
 * Out of memory: NULL and "name:0:0: error: out of memory" (*error NULL if even that
 * cannot be had).  opt may be NULL. */
wsr_recording *wsr_parse(const char *name, const char *text, size_t len,
                         const wsr_read_options *opt, char **error);
/* Reads and parses a file (an unreadable file is "name:0:0: error: <the system's text>"). */
wsr_recording *wsr_read_file(const char *path, const wsr_read_options *opt, char **error);
void wsr_free(wsr_recording *r);
/* A meta value, or NULL. */
const char *wsr_meta(const wsr_recording *r, const char *key);

/* Whether the text starts like a recording (its first bytes are "wsim-recording "): how
 * `wsim trace` tells a recording from a scenario file. */
int wsr_looks_like_recording(const char *text, size_t len);

/* ----- One event, as a line --------------------------------------------------------------- */

/* Writes any event (what the wsr_write_* forms do; the proxy writes the events it makes). */
int wsr_write_event(wsr_writer *w, const wsr_event *e);
/* e's line as a writer writes it, without the LF, cut to at most max bytes ("..." at the
 * end) when max >= 4 (0: whole).  Heap (free() it); NULL when out of memory.  What a
 * checker quotes: the same bytes a recording holds for a line this library wrote. */
char *wsr_event_text(const wsr_event *e, size_t max);

/* ----- Tokens ------------------------------------------------------------------------------ */

/* Appends the token form of p[0..n) to buf (bare or quoted, as above) when it fits in cap
 * bytes with a NUL: returns the length the token needs (like snprintf). */
size_t wsr_token(char *buf, size_t cap, const char *p, size_t n);

#ifdef __cplusplus
}
#endif

#endif /* WSR_H */
