/* redis_harness.h -- a throwaway real redis-server for tests, spoken to in raw RESP.
 *
 * rh_start() runs `redis-server` (from $WSIM_REDIS_SERVER, else the first one on PATH) in
 * a fresh temporary directory, listening on a unix socket in that directory, with no
 * persistence; rh_stop() terminates it and removes the directory.  Servers still running
 * when the process exits are stopped by an atexit handler, and on Linux the server also
 * gets SIGTERM when the test process dies any other way (a crash, SIGKILL).
 *
 * A connection (rh_conn) sends commands as RESP multibulk and reads replies back as their
 * exact bytes, without interpreting them, so a test can compare them byte for byte with
 * what the fake answers.  Every wait is bounded (about 10 s): a test never hangs.
 *
 * The tests must FAIL, not skip, when redis-server is missing: rh_start() then prints
 * "redis-server not found: install the Debian package redis-server" and returns NULL.
 */
#ifndef REDIS_HARNESS_H
#define REDIS_HARNESS_H

#include <stddef.h>
#include <sys/types.h>

#ifdef __cplusplus
extern "C" {
#endif

/* ----- Growable byte buffer ------------------------------------------------------ */

/* Bytes owned by the caller: zero-initialise it, reuse it, release it with rh_buf_free. */
typedef struct rh_buf {
    char *data; /* len bytes, followed by a NUL that is not counted (when data != NULL) */
    size_t len; /* bytes in use */
    size_t cap; /* bytes allocated */
} rh_buf;

/* Appends len bytes; aborts the process when out of memory (test code). */
void rh_buf_append(rh_buf *b, const void *p, size_t len);
/* Appends a printf-formatted string. */
void rh_buf_printf(rh_buf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Empties the buffer but keeps its memory. */
void rh_buf_reset(rh_buf *b);
/* Releases the memory and zeroes the buffer. */
void rh_buf_free(rh_buf *b);

/* ----- Server ------------------------------------------------------------------------ */

typedef struct rh_options {
    int cluster; /* start a one-node Redis Cluster owning all 16384 slots */
    int quiet;   /* do not print the "redis-server started" line (errors are always printed) */
    const char *const *extra_args; /* more options, NULL-terminated (a later one wins:
                                      "--appendonly", "yes"), or NULL */
    void (*prepare)(const char *dir, void *arg); /* called with the server's directory
                                                    before it starts (files it should read
                                                    at start), or NULL */
    void *prepare_arg;
} rh_options;

/* A running redis-server.  Read the fields; never write them. */
typedef struct rh_server {
    pid_t pid;           /* the redis-server process */
    int port;            /* TCP port on 127.0.0.1 (cluster mode), 0 when TCP is off */
    int cluster;         /* started as a one-node cluster */
    char dir[256];       /* the temporary directory, removed by rh_stop */
    char socket[300];    /* the unix socket path inside dir */
    char logfile[300];   /* redis.log inside dir */
    struct rh_server *next; /* the list of live servers that the atexit handler stops */
} rh_server;

/* Starts a server (opt may be NULL: standalone, not quiet) and waits, at most ~10 s,
 * until it answers PING (and, with opt->cluster, until CLUSTER INFO says
 * cluster_state:ok).  Returns NULL after printing the reason on stderr, with the tail of
 * the server's log when it got that far. */
rh_server *rh_start(const rh_options *opt);

/* Stops the server: SIGTERM, then SIGKILL if it has not exited after 5 s; reaps it and
 * removes its directory (kept when $WSIM_REDIS_KEEP is set, for post-mortems).  NULL is
 * accepted.  Connections to it must be closed separately. */
void rh_stop(rh_server *srv);

/* Prints the last max_lines lines of the server's log on stderr. */
void rh_print_log_tail(const rh_server *srv, int max_lines);

/* ----- Connections ------------------------------------------------------------------ */

typedef struct rh_conn rh_conn;

/* Connects to the server's unix socket.  NULL (with a message on stderr) on failure. */
rh_conn *rh_connect(rh_server *srv);
/* Closes the connection; NULL is accepted. */
void rh_close(rh_conn *c);

/* Sends one command as a RESP multibulk.  lens[i] is the byte length of argv[i]; lens may
 * be NULL for NUL-terminated arguments.  Returns 0, or -1 on a write error or timeout
 * (see rh_conn_error). */
int rh_send(rh_conn *c, int argc, char **argv, size_t *lens);

/* Reads exactly one complete RESP2 reply (+ - : $ *, nested to any depth, $-1 and *-1
 * included) and stores its raw bytes, unchanged, in *raw (replacing its contents).
 * Returns 0; or -1 on end of file, a read error, a timeout (~10 s) or bytes that are not
 * RESP2 (see rh_conn_error).  After -1 the connection is unusable. */
int rh_read_reply(rh_conn *c, rh_buf *raw);

/* rh_send then rh_read_reply, with the command given as NUL-terminated strings ending
 * with NULL: rh_call(c, &raw, "CONFIG", "GET", "maxmemory*", NULL). */
int rh_call(rh_conn *c, rh_buf *raw, const char *arg0, ...) __attribute__((sentinel));

/* The last error on this connection, "" if none. */
const char *rh_conn_error(const rh_conn *c);

#ifdef __cplusplus
}
#endif

#endif /* REDIS_HARNESS_H */
