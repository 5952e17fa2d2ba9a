/* ws_conn.h -- libwsim's backends: one connection interface, three implementations.
 *
 * A ws_conn sends a pipeline (n commands) in one round trip and hands back n replies as
 * fr_reply trees, the reply type of fakeredis.h, so the whole engine reads one reply type
 * whatever answered.  Three implementations:
 *
 *   ws_conn_fake    the in-process fake (libfakeredis): one fr_client, fr_pipeline, no
 *                   sockets, no RESP bytes copied; no threads, no wall clock.
 *   ws_conn_open    a real server through hiredis ("redis://host:port", "unix:///path"),
 *                   with a timeout on every wait.
 *   ws_conn_faulty  a fault layer around either: crashes of the consumer after k of a
 *                   pipeline's commands, replies lost, injected error replies, refused
 *                   sends -- each armed for "round trip i, command k" or "the 3rd XACK".
 *
 * Errors are libuv/hiredis style: functions return 0 or a negative WS_E* code, and a
 * connection keeps the last failure in err/errstr (sticky: a later success does not clear
 * it).  Some failures kill the connection (ws_conn_dead); every later call then returns
 * WS_EDEAD without sending anything, as a dead consumer sends nothing.
 *
 * Out of memory aborts the process with one line on stderr, "wsim: out of memory in
 * libwsim": a connection that lost a reply to it would look like a consumer that
 * crashed, and a simulator of crashes must never report one that did not happen
 * (docs/architecture.md, "Running out of memory").  So no function here returns NULL or
 * WS_ENOMEM for its own memory; WS_ENOMEM stays for hiredis, which runs out of its own.
 *
 * Replies are valid until the next ws_pipeline or ws_conn_close on the same connection.
 * Nothing here is thread safe: one connection, one thread.
 */
#ifndef WS_CONN_H
#define WS_CONN_H

#include <stddef.h>
#include <stdint.h>

#include "fakeredis.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ----- Error codes ------------------------------------------------------------------
 * One table gives the codes, their names and their messages (ws_err_name, ws_strerror). */
#define WS_ERRNO_MAP(X)                                                                    \
    X(ENOMEM, -1, "out of memory")                                                         \
    X(EINVAL, -2, "invalid argument")                                                      \
    X(ECONNECT, -3, "cannot connect to the server")                                        \
    X(EIO, -4, "I/O error talking to the server")                                          \
    X(ETIMEDOUT, -5, "timed out waiting for the server")                                   \
    X(EPROTO, -6, "the server sent something that is not RESP2")                           \
    X(ECRASHED, -7, "the consumer crashed (injected)")                                     \
    X(ELOST, -8, "the connection dropped and the replies were lost (injected)")            \
    X(EREFUSED, -9, "the connection refused to send (injected)")                           \
    X(EDEAD, -10, "the connection is dead")                                               \
    X(ESTALE, -11, "the delivery settled already: its handle is stale")                   \
    X(ESTATE, -12, "not allowed in the subscription's present state")

typedef enum ws_errno {
    WS_OK = 0,
#define WS_ERRNO_ENUM_(name, code, msg) WS_##name = code,
    WS_ERRNO_MAP(WS_ERRNO_ENUM_)
#undef WS_ERRNO_ENUM_
} ws_errno;

/* "WS_ECRASHED" for WS_ECRASHED, "WS_OK" for 0, "WS_E?" for an unknown code. */
const char *ws_err_name(int code);
/* The table's message for code ("ok" for 0, "unknown error" otherwise). */
const char *ws_strerror(int code);

/* ----- Connections ------------------------------------------------------------------- */

typedef struct ws_conn ws_conn;

/* What a connection counted over its life. */
typedef struct ws_conn_stats {
    uint64_t round_trips;      /* ws_pipeline calls made on a live connection with n > 0,
                                  failed ones included: the unit "round trip i" counts in */
    uint64_t commands_sent;    /* commands sent to the server (on a real server: handed
                                  to the socket, so after WS_EIO some may not have
                                  arrived) */
    uint64_t replies_received; /* server replies handed to the caller (not synthesised
                                  ones, not lost ones) */
} ws_conn_stats;

/* The in-process fake: a new fr_client of server (server must outlive the connection).
 * Labelled "fake".  NULL when server is NULL or the fake cannot make a client (its own
 * out of memory, fakeredis.h). */
ws_conn *ws_conn_fake(fr_server *server);

/* A real server: url is "redis://host[:port]" (port 6379 by default) or "unix:///path".
 * timeout_ms bounds the connect and every later read or write (<= 0: 10 s).  Returns a
 * connection even when connecting failed -- it is then dead, with err WS_EINVAL (bad url)
 * or WS_ECONNECT and errstr saying why, as hiredis does.  Labelled "redis". */
ws_conn *ws_conn_open(const char *url, int timeout_ms);

/* The fault layer around inner, which it owns from now on (closed with it, or as soon as
 * a fault kills the connection, since the consumer's socket dies with it).  With no
 * fault armed it behaves exactly as inner, with its own counters.  Labelled as inner.
 * NULL only when inner is NULL.  inner may be dead already. */
ws_conn *ws_conn_faulty(ws_conn *inner);

/* Closes the connection and frees it; NULL is accepted.  A real server sees a
 * disconnect (an open MULTI is discarded there, as in the fake). */
void ws_conn_close(ws_conn *c);

/* Sends commands[0..n) as one pipeline and waits for every reply.  cause says why, for
 * the trace ("read", "pool", "flush of read 3"; NULL for none).  On 0, replies[i] is the
 * reply to commands[i] (an error reply is still a success of the call), valid until the
 * next call on c.  On failure every replies[i] is NULL and the code says what happened:
 *   WS_EINVAL    n > 0 with a NULL array, or a command with argc < 1 (nothing sent);
 *   WS_EDEAD     the connection died earlier (nothing sent; err keeps the first cause);
 *   WS_EREFUSED  an injected refusal: nothing sent; the connection stays usable;
 *   WS_ECRASHED  an injected consumer crash: some prefix was applied (see ws_fault_arm);
 *   WS_ELOST     injected: all applied, the replies were lost;
 *   WS_EIO, WS_ETIMEDOUT, WS_EPROTO, WS_ENOMEM  a real failure; what the server applied
 *                is unknown.
 * Every failure except WS_EINVAL and WS_EREFUSED kills the connection.  n == 0 returns 0
 * and counts nothing. */
int ws_pipeline(ws_conn *c, const char *cause, size_t n, const fr_command *commands,
                const fr_reply **replies);

/* Pub/Sub messages (and any other push) the server sent on c on its own, without a
 * command: after SUBSCRIBE, ["message", channel, payload] and ["pmessage", pattern,
 * channel, payload] arrays.  Not a round trip, not traced.  Waits at most timeout_ms
 * for the first one when none is there yet (0: only what already arrived; the fake never
 * waits).  timeout_ms < 0 is a barrier instead: on a real server a PING goes out and
 * every push before its pong is taken, so that everything published before the call is
 * in (the fake needs none: its pushes are there at once).  Hands out at most max in
 * out[0..*n) -- the rest stays for the next call -- valid until the next call on c;
 * pushes not yet handed out are dropped by the next ws_pipeline.  Returns 0 (with *n
 * possibly 0), WS_EDEAD, or a real failure (which kills c). */
int ws_conn_pushes(ws_conn *c, int timeout_ms, size_t max, const fr_reply **out, size_t *n);

/* The last failure's code (0 if none yet) and message ("" if none). */
int ws_conn_err(const ws_conn *c);
const char *ws_conn_errstr(const ws_conn *c);
/* Non-zero once the connection is dead: every later ws_pipeline returns WS_EDEAD. */
int ws_conn_dead(const ws_conn *c);
/* The counters so far. */
ws_conn_stats ws_conn_get_stats(const ws_conn *c);
/* The connection's name in traces (copied, at most 63 bytes kept).  Returns 0 or
 * WS_EINVAL for NULL. */
int ws_conn_set_label(ws_conn *c, const char *label);
const char *ws_conn_label(const ws_conn *c);

/* ----- Faults (connections made by ws_conn_faulty only) ------------------------------ */

typedef enum ws_fault_kind {
    /* The consumer dies after the server applied every command before the addressed one
     * and the addressed one itself; later ones are never sent.  WS_ECRASHED, dead. */
    WS_FAULT_CRASH_AFTER = 1,
    /* The same, but the addressed command is not applied either. */
    WS_FAULT_CRASH_BEFORE,
    /* The server applies the whole round trip holding the addressed command; the
     * connection drops before the replies are read.  WS_ELOST, dead. */
    WS_FAULT_LOSE_REPLIES,
    /* The addressed command is not sent and answers `error` instead; see ws_fault_arm
     * for MULTI.  The call itself succeeds. */
    WS_FAULT_ERROR,
    /* The round trip holding the addressed command is not sent at all.  WS_EREFUSED;
     * the connection stays usable. */
    WS_FAULT_REFUSE,
    /* The connection is lost, and the consumer lives on: the server applies the whole
     * round trip holding the addressed command (as with LOSE_REPLIES), its replies never
     * come back, and from then on nothing is sent on this connection.  Every command of
     * that round trip and of every later one answers the error WS_DISCONNECT_ERROR (the
     * call itself succeeds; fates: lost for the applied ones, injected for the rest), and
     * no push arrives any more.  What a client of a pool without a reconnect policy is
     * left with (broker.rs: Pool::new(config, None, None, None, 4)). */
    WS_FAULT_DISCONNECT,
} ws_fault_kind;

/* The error every command of a lost connection answers (WS_FAULT_DISCONNECT). */
#define WS_DISCONNECT_ERROR "ERR connection lost (wsim: the client has no reconnect policy)"

/* Where a fault fires: either by position (name == NULL) -- round trip `round_trip` of
 * this connection (1-based, as ws_conn_stats.round_trips counts) and its command
 * `command` (1-based; 0 means "the round trip, before its first command": with
 * CRASH_AFTER the consumer dies before sending anything, with LOSE_REPLIES and REFUSE it
 * picks the round trip; ERROR and CRASH_BEFORE need command >= 1) -- or by name: the
 * `nth` (1-based) command whose name (argv[0]) equals `name`, case-insensitively,
 * counting every command passed to ws_pipeline on this connection since it was made,
 * in order, including those of refused round trips.  A position past the end of its
 * round trip, or an occurrence in a part of a round trip that a crash cut off, never
 * fires (the fault stays armed). */
typedef struct ws_fault {
    ws_fault_kind kind;
    uint64_t round_trip; /* by position: the round trip (1-based) */
    size_t command;      /* by position: the command in it (1-based; 0 = the round trip) */
    const char *name;    /* by name: the command name (copied), or NULL for by position */
    uint64_t nth;        /* by name: which occurrence (1-based) */
    const char *error;   /* WS_FAULT_ERROR: the reply's text without '-' (copied);
                            NULL for "ERR injected by wsim" */
    int *fired_flag;     /* NULL, or where the layer writes 1 when this fault fires (the
                            caller's memory, which must outlive the connection) */
} ws_fault;

/* Arms a one-shot fault on c, a ws_conn_faulty connection.  Faults fire at most once;
 * several may be armed.  When several hit one round trip: a refusal wins (nothing is
 * sent); else the earliest crash point wins over lost replies; injected errors before
 * the crash point still answer (nobody reads them: the consumer is dead).
 *
 * Injected errors: the fault layer never sends the command, so it changes nothing on
 * either backend.  Outside MULTI its reply is the error.  Inside MULTI (MULTI answered
 * +OK earlier on this connection, in this round trip or an earlier one) Redis would have
 * queued the command and failed it at run time, so the layer answers +QUEUED in its
 * place and, when EXEC answers an array, inserts the error at the command's place in
 * that array: exactly the bytes a real run-time error gives.  If EXEC answers otherwise
 * (EXECABORT, or nil after a WATCH), nothing ran, as in Redis.  Where it differs from a
 * real server: a command Redis would refuse at queue time (unknown, wrong arity,
 * CROSSSLOT) answers +QUEUED here and the transaction is not aborted for it; DISCARD
 * forgets the injected error, as Redis forgets the queue.
 *
 * MULTI, EXEC and DISCARD themselves (bare, without arguments):
 *   - an injected error on EXEC or DISCARD inside MULTI ends the transaction, as a server
 *     that answers EXEC an error has ended it: the layer sends DISCARD in its place (the
 *     server drops the queue, nothing of it ran, WATCHes go), answers the injected error
 *     and forgets the transaction.  The command's fate is WS_FATE_INJECTED; the DISCARD
 *     counts in commands_sent, its reply not in replies_received.  Outside MULTI an
 *     injected EXEC or DISCARD is an ordinary injected error (nothing sent);
 *   - an injected error on MULTI: MULTI is not sent, so the server never opens the
 *     transaction -- the commands after it run at once, each answering its own reply
 *     (not +QUEUED), and the EXEC after them answers "ERR EXEC without MULTI" (DISCARD:
 *     "ERR DISCARD without MULTI"), exactly what a server that refused MULTI does.
 *
 * Returns 0; WS_EINVAL when c is not a fault layer or f is malformed (no kind, position
 * 0, nth 0, command 0 with ERROR or CRASH_BEFORE); WS_ENOMEM. */
int ws_fault_arm(ws_conn *c, const ws_fault *f);
/* Shorthands: crash after the server applied the first k commands of round trip i
 * (k == 0: nothing sent), and the nth command named name answers error (NULL: the
 * default text). */
int ws_fault_crash_after(ws_conn *c, uint64_t round_trip, size_t k);
int ws_fault_error_nth(ws_conn *c, const char *name, uint64_t nth, const char *error);
/* Disarms every fault not yet fired. */
void ws_fault_clear(ws_conn *c);
/* How many faults fired on c so far (0 for a connection without a fault layer). */
uint64_t ws_fault_fired(const ws_conn *c);
/* Called by a fault layer at the start of each of its round trips, before any armed
 * fault is matched against it: round_trip is its number (1-based, as ws_fault counts)
 * and n its command count.  A fault armed from inside the hook applies to this round
 * trip.  The crash explorer forks there, one child per crash point of the round trip,
 * each arming its own fault (docs/wsim-explore.md); it must not send on c. */
typedef void (*ws_fault_hook)(void *arg, ws_conn *c, uint64_t round_trip, size_t n);
/* Sets c's hook (fn NULL: none).  WS_EINVAL when c is not a fault layer. */
int ws_fault_set_hook(ws_conn *c, ws_fault_hook fn, void *arg);

/* ----- The trace --------------------------------------------------------------------- */

/* What became of one command of a round trip. */
typedef enum ws_fate {
    WS_FATE_REPLIED = 1, /* sent; its reply reached the caller */
    WS_FATE_INJECTED,    /* not sent; the fault layer answered in its place */
    WS_FATE_LOST,        /* sent and applied; the reply never reached the caller */
    WS_FATE_UNSENT,      /* never reached the server */
    WS_FATE_UNKNOWN,     /* sent, then the connection failed: applied or not, unknown */
} ws_fate;

/* One round trip as the trace hook sees it; everything is valid during the hook only. */
typedef struct ws_round_trip {
    const char *conn;           /* the connection's label */
    const char *cause;          /* the cause given to ws_pipeline, "" for none */
    uint64_t index;             /* its round trip number on this connection (1-based) */
    int status;                 /* what ws_pipeline returns: 0 or a WS_E* code */
    const char *note;           /* what a fault did ("crash after 2 of 3 commands"), or
                                   "" */
    size_t n;                   /* commands */
    const fr_command *commands; /* as the caller gave them */
    const fr_reply *const *replies; /* what the server (or the fault layer) answered, even
                                       when lost; NULL where there was none */
    const unsigned char *fates; /* a ws_fate per command */
} ws_round_trip;

typedef void (*ws_trace_fn)(void *ud, const ws_round_trip *rt);

/* Calls fn(ud, rt) after every round trip of c (refused and failed ones included), or
 * stops with fn == NULL.  Only c's own round trips: a fault layer's inner connection
 * has its own hook. */
void ws_conn_set_trace(ws_conn *c, ws_trace_fn fn, void *ud);

/* The text of one round trip, deterministic (no times, no addresses), e.g.
 *
 *   #2 window (flush of read 1): WS_ECRASHED, crash after 1 of 2 commands
 *     XADD out * _payload "a b" -> "1700000000000-0" (lost)
 *     XACK s g 1700000000000-0 -> (not sent)
 *
 * one line per command: the command as typed into redis-cli (arguments quoted with
 * redis-cli's escapes when they need it), then the reply on one line: +status,
 * -error, :integer, "bulk" (escaped), $-1 (nil), *-1 (nil array), [a, b] for arrays,
 * and the fate when it is not "replied".  Heap memory (wsi_free() it), *len its length
 * (len may be NULL). */
char *ws_round_trip_text(const ws_round_trip *rt, size_t *len);

/* One reply on one line, as ws_round_trip_text writes it.  Heap memory. */
char *ws_reply_text(const fr_reply *r, size_t *len);

#ifdef __cplusplus
}
#endif

#endif /* WS_CONN_H */
