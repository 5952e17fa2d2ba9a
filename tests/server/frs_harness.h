/* frs_harness.h -- what the fakeredis-server tests share: starting the server binary in
 * a temporary directory (a unix socket there, TCP on a free loopback port), connecting
 * to it, and reading replies back as their exact bytes, RESP2 or RESP3.
 *
 * Every wait is bounded (FRSH_TIMEOUT_MS unless said otherwise): a test fails, it never
 * hangs.  Servers still running when the test process exits are stopped (atexit), and a
 * server dies with its test process (PR_SET_PDEATHSIG).  Functions fail the running
 * cmocka test instead of returning errors, unless they say otherwise.
 */
#ifndef FRS_HARNESS_H
#define FRS_HARNESS_H

#include <stddef.h>
#include <sys/types.h>

#include "redis_harness.h" /* rh_buf */

#define FRSH_TIMEOUT_MS 10000

/* A running fakeredis-server. */
typedef struct frsh_server {
    pid_t pid;          /* the process */
    int port;           /* its TCP port on 127.0.0.1 (0 when started without TCP) */
    char dir[256];      /* the temporary directory, removed by frsh_stop */
    char sock[300];     /* the unix socket inside dir */
    char log[300];      /* its stderr, kept in dir */
} frsh_server;

/* Starts the binary (FRS_BINARY) with --port 0 --unixsocket DIR/s.sock --dir DIR followed by
 * extra (NULL-terminated, may be NULL) and waits for its "ready" line.  NULL after
 * printing the reason when it does not start (the test then fails). */
frsh_server *frsh_start(const char *const *extra);
/* Starts another program that announces itself as fakeredis-server does ("NAME listening
 * on ...", "NAME ready pid=N": wsim proxy), with args (NULL-terminated; "{sock}" stands
 * for the unix socket path in its temporary directory).  Stopped as frsh_stop stops. */
frsh_server *frsh_start_program(const char *binary, const char *name, const char *const *args);
/* SIGTERM, then SIGKILL after 5 s; reaps it, removes its directory.  Returns its exit
 * status as waitpid reports it (or -1).  NULL is accepted. */
int frsh_stop(frsh_server *s);

/* A connection with a read buffer. */
typedef struct frsh_conn {
    int fd;        /* the socket */
    rh_buf in;     /* bytes read and not yet returned as a reply */
} frsh_conn;

/* Connects to the unix socket / to the TCP port.  Fails the test on error. */
frsh_conn *frsh_connect(frsh_server *s);
frsh_conn *frsh_connect_tcp(int port);
/* Connects to a path (any server, e.g. a real redis-server's socket); NULL on failure. */
frsh_conn *frsh_connect_path(const char *path);
void frsh_close(frsh_conn *c);

/* Sends bytes as they are (the whole of them, within the timeout). */
void frsh_send_raw(frsh_conn *c, const void *p, size_t n);
/* Sends a command as a RESP multibulk: NULL-terminated C strings. */
void frsh_send(frsh_conn *c, const char *arg0, ...) __attribute__((sentinel));

/* Reads one complete reply (RESP2 or RESP3, nested to any depth, attributes and pushes
 * included) into *out as its exact bytes.  Returns 0; 1 on end of file (the server
 * closed); -1 on timeout (timeout_ms) or bytes that are not RESP. */
int frsh_read(frsh_conn *c, rh_buf *out, int timeout_ms);
/* frsh_read that fails the test unless a reply came. */
void frsh_expect_reply(frsh_conn *c, rh_buf *out);
/* frsh_send + frsh_expect_reply; the reply's bytes as a C string (valid until the next
 * call with the same out). */
const char *frsh_call(frsh_conn *c, rh_buf *out, const char *arg0, ...) __attribute__((sentinel));
/* Fails unless the server closes the connection within timeout_ms, after any bytes
 * (appended to *rest when it is not NULL). */
void frsh_expect_eof(frsh_conn *c, rh_buf *rest, int timeout_ms);
/* Length of the first complete RESP2/RESP3 reply in p[0..n): >0, 0 if incomplete, -1 if
 * not RESP. */
long frsh_reply_len(const char *p, size_t n);

/* The next reply on c must be exactly want (a C string): the test fails showing both. */
#define FRSH_EXPECT(c, buf, want)                                                         \
    do {                                                                                  \
        frsh_expect_reply((c), (buf));                                                    \
        if ((buf)->len != strlen(want) || memcmp((buf)->data, (want), (buf)->len) != 0)   \
            fail_msg("got %s, want %s", frsh_show((buf)->data, (buf)->len),               \
                     frsh_show((want), strlen(want)));                                    \
    } while (0)

/* Sends a command (C strings) and FRSH_EXPECTs its reply. */
#define FRSH_CALL(c, buf, want, ...)                                                      \
    do {                                                                                  \
        frsh_send((c), __VA_ARGS__, NULL);                                                \
        FRSH_EXPECT((c), (buf), (want));                                                  \
    } while (0)

/* frsh_start that fails the test when the server does not start. */
frsh_server *frsh_start_ok(const char *const *extra);
/* frsh_stop that fails the test unless the server exited with status 0 on SIGTERM. */
void frsh_stop_ok(frsh_server *s);

/* Fails the test unless got and want are the same text, naming the first line that
 * differs (both sides shown). */
void frsh_same_text(const char *got, const char *want);

/* The start of the recording tests' scripted session (server_record, proxy_test: one
 * session, two sources of the same format): on p, CLIENT SETNAME producer, XGROUP CREATE
 * orders g $ MKSTREAM, XADD orders XADD_ID _payload "o 1" (answering ID); on c, XREADGROUP
 * of it, a pipeline of INCR n and its XACK in one write, MULTI, INCR n, EXEC.  Each reply is
 * checked. */
void frsh_window_session(frsh_conn *p, frsh_conn *c, const char *xadd_id, const char *id);

/* Sleeps ms milliseconds. */
void frsh_sleep_ms(int ms);

/* Escapes bytes for a failure message (\r\n shown as such), into a static buffer. */
const char *frsh_show(const char *p, size_t n);

#endif /* FRS_HARNESS_H */
