/* frs.h -- what fakeredis-server's modules share (internal; names start with frs_).
 *
 * One process, one thread, one fake (fr_server) and an epoll loop over its sockets.  Each
 * accepted socket is an frs_conn with its own request parser (resp_request.h), its own
 * fr_client in the fake, and an output buffer.  A command goes:
 *
 *   net.c      read -> rr_next -> frs_dispatch (then write what the buffer holds)
 *   dispatch.c look the name up in the server's command table (cmdtable.c): the server's
 *              own commands (HELLO, AUTH, CLIENT, CONFIG, INFO, COMMAND, FAKE.*, ...) run
 *              here, every other goes to the fake with fr_exec_resp; authentication,
 *              MULTI bookkeeping for the server's commands and the RESP3 conversion
 *              (resp3.c) wrap both
 *   obuf.c     the reply bytes, RESP2 or RESP3, appended to the connection's buffer
 *
 * Nothing in here is thread safe; nothing needs to be.
 */
#ifndef FRS_H
#define FRS_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "fakeredis.h"
#include "resp_request.h"

#define FRS_VERSION_LINE "fakeredis-server"     /* the prefix of every line on stdout */
#define FRS_DEFAULT_MAXCLIENTS 10000           /* Redis's maxclients default */
#define FRS_RESERVED_FDS 32                    /* Redis's CONFIG_MIN_RESERVED_FDS */
#define FRS_MAX_LISTENERS 4                    /* TCP addresses plus one unix socket */
#define FRS_DEFAULT_BUSY_POLL_US 30            /* --busy-poll-us (docs/server.md, "Design") */
#define FRS_MAX_BUSY_POLL_US 1000              /* its upper bound: a poll never outlasts 1 ms */

/* ----- Output buffer ------------------------------------------------------------- */

/* The bytes waiting to be written to a socket: [sent, len) of p. */
typedef struct frs_obuf {
    char *p;      /* the bytes */
    size_t len;   /* bytes appended */
    size_t sent;  /* bytes already written */
    size_t cap;   /* bytes allocated */
    int failed;   /* it could not grow (out of memory): its connection is closed, logged
                     (frs_conn_want_flush), and nothing more is appended */
    uint64_t dropped; /* bytes compaction removed from the front, ever: an offset plus
                         dropped is a position that compaction does not move (frs_obuf_pos) */
    uint64_t mark;    /* position: the bytes before it are in the recording (record.c) */
    uint64_t stop;    /* position: with `stopped`, bytes from here on are not written */
    int stopped;      /* the hold hook froze the output at `stop` (hold.c) */
} frs_obuf;

/* The position of the buffer's end: where the next appended byte goes, as a count of every
 * byte ever appended (compaction does not move it). */
static inline uint64_t frs_obuf_pos(const frs_obuf *b) { return b->dropped + b->len; }

/* Appends n bytes.  Out of memory, the bytes are dropped and the buffer marked failed:
 * the connection is closed and logged, the others go on (docs/server.md). */
void frs_obuf_append(frs_obuf *b, const void *p, size_t n);
/* An allocation of the server's own bookkeeping (MONITOR and SLOWLOG copies, tracking
 * tables, INFO and CLIENT LIST texts, CONFIG) failed: logs what and aborts, the server's
 * one residual (docs/server.md, "Running out of memory"). */
_Noreturn void frs_oom_abort(const char *what);
/* Bytes not yet written. */
size_t frs_obuf_pending(const frs_obuf *b);
/* Drops the written prefix when it is worth the copy. */
void frs_obuf_compact(frs_obuf *b);
void frs_obuf_free(frs_obuf *b);

/* ----- Connections ------------------------------------------------------------------ */

/* Output buffer limits of one client class, as Redis's client-output-buffer-limit. */
typedef struct frs_outlimit {
    unsigned long long hard;  /* bytes; 0 = none: over it the client is closed at once */
    unsigned long long soft;  /* bytes; 0 = none: over it for soft_secs closes it too */
    long long soft_secs;      /* seconds the soft limit may be exceeded */
} frs_outlimit;

/* CLIENT REPLY's states (Redis's CLIENT_REPLY_OFF, _SKIP, _SKIP_NEXT) */
#define FRS_REPLY_OFF 1       /* no replies until CLIENT REPLY ON */
#define FRS_REPLY_SKIP 2      /* this command's reply is dropped */
#define FRS_REPLY_SKIP_NEXT 3 /* the next command's reply will be dropped */

/* A command queued inside MULTI, as the server sees it (the fake keeps its own queue). */
typedef struct frs_queued {
    int host;           /* 1: one of the server's commands, run by the server at EXEC */
    int argc;           /* its arguments (host commands, and fake commands for RESP3) */
    char **argv;        /* copies, NUL-terminated */
    size_t *argvlen;    /* their lengths */
} frs_queued;

typedef struct frs_server frs_server;

typedef struct frs_conn {
    frs_server *srv;          /* the server it belongs to */
    int fd;                   /* the socket */
    uint64_t id;              /* CLIENT ID: 1, 2, ... in connection order */
    fr_client *fc;            /* its client in the fake */
    rr_parser in;             /* the request parser and query buffer */
    frs_obuf out;             /* replies not yet written */
    int resp;                 /* 2 or 3 (HELLO) */
    int authed;               /* AUTH passed, or no password needed when it connected */
    int close_after_reply;    /* write what is buffered, then close (QUIT, protocol error) */
    int close_asap;           /* close at the next chance, dropping the output (KILL) */
    int blocked;              /* the fake has it blocked: its input waits */
    int want_write;           /* EPOLLOUT is armed */
    int in_pending;           /* on the server's list of connections with output */
    int in_resume;            /* on the server's list of connections to read on */
    int is_unix;              /* connected through the unix socket */
    char addr[128];           /* "ip:port" or "path:0", as CLIENT LIST's addr= */
    char laddr[128];          /* the local end, as laddr= */
    char *name;               /* CLIENT SETNAME, NULL when none */
    int64_t ctime_ms;         /* when it connected (wall clock, monotonic ms) */
    int64_t last_ms;          /* last command (wall clock, monotonic ms) */
    int64_t soft_since_ms;    /* when the output first went over the soft limit, 0 if not */
    const char *last_cmd;     /* the last command's full name (cmd= in CLIENT LIST): a
                                 command table string, or "NULL" */
    int reply_mode;           /* CLIENT REPLY: 0 on, or FRS_REPLY_OFF/_SKIP/_SKIP_NEXT */
    size_t reply_keep;        /* while a silenced command runs: the unsent output bytes
                                 that stay (its Pub/Sub pushes, which Redis writes even
                                 with replies off) */
    char blocked_cmd[32];     /* the command it is blocked in, for its reply's RESP3 shape */
    frs_queued *queue;        /* MULTI: what was queued, in order */
    size_t queue_len, queue_cap; /* entries in queue, room */
    int queue_host;           /* host commands in queue (0: EXEC needs no splicing) */
    int in_multi_shadow;      /* MULTI was answered OK (mirrors fr_client_in_multi) */
    int in_script;            /* the fake runs a script of this connection: while it is
                                 busy the loop neither reads nor frees it */
    int monitor;              /* MONITOR: every command is streamed to it (admin.c) */
    int in_exec;              /* EXEC is running its queued server commands */
    unsigned tracking;        /* CLIENT TRACKING: FRS_TRACK_* bits, 0 off (tracking.c) */
    uint64_t track_redir;     /* its REDIRECT client id, 0 none */
    char **track_prefixes;    /* BCAST prefixes, byte order (track_nprefixes of them) */
    size_t *track_prefix_len; /* their lengths */
    size_t track_nprefixes;
    char **blocked_argv;      /* the arguments of the command it is blocked in (slow log) */
    size_t *blocked_argvlen;
    int blocked_argc;
    uint64_t batch;           /* the read its latest bytes came in (recordings' b=) */
    long long peer_pid;       /* the peer's process (unix socket, SO_PEERCRED), or -1 */
    struct frs_saved_cmd *rec_wait; /* recording: the command it is blocked in (record.c) */
    uint64_t woken_from, woken_to; /* recording: where the reply that woke it sits in out
                                 (positions, frs_obuf_pos) */
    int woken_pending;        /* recording: that reply is not recorded yet */
    int paused;               /* CLIENT PAUSE holds its next command (pause.c): its input
                                 waits, the command still unread in `in` */
    uint64_t pause_seq;       /* the order it was held in: resumed in that order */
    size_t qb_alloc;          /* the room Redis's query buffer would have (querybuf.c) */
    size_t qb_peak;           /* its peak since the cron last ran (querybuf_peak) */
    int64_t qb_seen_s;        /* its last read or write, Unix s (lastinteraction) */
    int64_t qb_tick;          /* the cron's last tick applied, ms on the fake's clock */
    int held;                 /* the hold hook holds its input (FRS_HOLD_BEFORE/_AFTER) */
    int hold_on_wake;         /* hold after: its command blocked; hold when it is woken */
    struct frs_conn *prev, *next;      /* the server's list of connections */
    struct frs_conn *pend_next;        /* the list of connections with output to write */
    struct frs_conn *resume_next;      /* the list of connections whose input may go on */
} frs_conn;

/* ----- The server ------------------------------------------------------------------- */

/* A stored configuration parameter (config.c). */
typedef struct frs_param frs_param;

/* The command line, before the server starts. */
typedef struct frs_options {
    int port;                 /* TCP port; 0: any free port; -1: no TCP */
    char *bind[FRS_MAX_LISTENERS]; /* addresses to listen on (default 127.0.0.1) */
    int nbind;                /* entries in bind */
    char *unixsocket;         /* unix socket path, NULL for none */
    long long maxclients;     /* at most this many clients at once */
    char *requirepass;        /* password of the default user, NULL for none */
    uint64_t seed;            /* the fake's seed */
    int wall_clock;           /* the fake reads the real clock (the default; --clock
                                 virtual turns it off) */
    int64_t start_ms;         /* --start-ms: the virtual clock's first reading (0: default) */
    int cluster;              /* --cluster: answer as a one-node cluster */
    int busy_poll_us;         /* --busy-poll-us: after a wake with work, poll this long
                                 before sleeping (0: sleep at once) */
    int published_set;        /* --published-max or --published-max-bytes was given */
    size_t published_max;     /* FAKE.PUBLISHED keeps at most this many messages ... */
    size_t published_max_bytes; /* ... holding at most this many bytes (fr_published) */
    char **config;            /* --NAME VALUE pairs given for CONFIG parameters */
    int nconfig;              /* entries in config (pairs * 2) */
    const char *record;       /* --record FILE: record every command from the start */
    const char *redis_version;/* --redis-version: what INFO and HELLO claim (NULL: the fake's
                                 own FR_REDIS_VERSION) */
    int auto_advance_ms;      /* --clock auto: the quiet interval (real ms) after which the
                                 virtual clock moves to the next deadline; 0: never */
    /* For a program that embeds the server (wsim run serves the fake itself): */
    fr_server *fake;          /* serve this fake of the caller's instead of making one (it
                                 is the caller's: seed, start_ms and cluster are its own,
                                 frs_server_free leaves it); NULL: make one */
    int quiet;                /* print nothing on stdout (no "listening on", "ready") */
    int no_signals;           /* take no signals (no signalfd, no sigprocmask): the embedder
                                 keeps its own, and the processes it starts inherit no
                                 blocked SIGTERM */
} frs_options;

/* Counters reported by INFO stats, reset by CONFIG RESETSTAT. */
typedef struct frs_stats {
    unsigned long long connections;    /* total_connections_received */
    unsigned long long rejected;       /* rejected_connections (maxclients) */
    unsigned long long net_in;         /* total_net_input_bytes */
    unsigned long long net_out;        /* total_net_output_bytes */
    unsigned long long outlimit_kills; /* clients closed for their output buffer */
} frs_stats;

struct frs_server {
    fr_server *fake;          /* the keyspace and everything else Redis-like */
    int epfd;                 /* the epoll instance */
    int listen_fd[FRS_MAX_LISTENERS + 1]; /* listening sockets (-1 unused) */
    int nlisten;              /* entries in listen_fd */
    int tcp_port;             /* the TCP port actually bound, 0 when none */
    char *unixsocket;         /* the unix socket path (unlinked at exit), or NULL */
    int sig_fd;               /* a signalfd for SIGTERM/SIGINT */
    int stop;                 /* leave the loop */
    int in_busy_hook;         /* serving events from inside a busy script (net.c) */
    frs_conn *conns;          /* every connection */
    size_t nconns;            /* connections open */
    struct frs_connmap *bymap;/* fr_client* -> frs_conn*, for woken and pushed clients */
    frs_conn *pending;        /* connections with output to write before sleeping */
    size_t nsoft;             /* connections over their soft output limit (soft_since_ms) */
    int64_t expired_ms;       /* turn_ms of the last active expiry (net.c's timers) */
    frs_conn *resume_head, *resume_tail; /* connections whose input processing may go on */
    size_t npaused;           /* connections CLIENT PAUSE holds (INFO's blocked_clients) */
    uint64_t pause_seq;       /* the last frs_conn.pause_seq handed out */
    int pause_seen;           /* the pause type when last looked at (fr_pause): a laxer
                                 one lets the held connections go (pause.c) */
    uint64_t next_id;         /* the next CLIENT ID */
    int64_t start_ms;         /* when the server started (monotonic ms) */
    int64_t turn_ms;          /* the monotonic clock read once per loop turn, when epoll_wait
                                 returned: a command's last_ms without a clock read per
                                 command (Redis caches its clock per turn the same way) */
    time_t start_time;        /* when the server started (Unix seconds), for INFO */
    char run_id[41];          /* INFO's run_id, random per start as Redis's */
    frs_stats stats;          /* INFO stats */
    frs_options opt;          /* the command line */
    /* What CONFIG SET may change and the server acts on: */
    long long maxclients;     /* maxclients */
    long long max_bulk_len;   /* proto-max-bulk-len */
    unsigned long long querybuf_limit; /* client-query-buffer-limit */
    frs_outlimit limit_normal;/* client-output-buffer-limit normal */
    frs_outlimit limit_pubsub;/* client-output-buffer-limit pubsub */
    char *requirepass;        /* requirepass; NULL or "" for none */
    unsigned long long maxmemory; /* maxmemory: 0 none, else commands that may grow memory
                                     are refused while the process uses more (dispatch.c) */
    frs_param *params;        /* every CONFIG parameter's value (config.c) */
    size_t nparams;           /* entries in params */
    struct frs_admin *admin;  /* MONITOR, SLOWLOG, LATENCY, tracking state (admin.c) */
    struct frs_persist *persist; /* RDB saves, the child, the save points (persist.c) */
    struct frs_aof *aof;      /* the append-only file (aof.c), NULL while it is off */

    struct frs_recorder *rec; /* the recording, or NULL (record.c) */
    uint64_t next_batch;      /* the last batch number handed out (recordings' b=) */
    int stopping;             /* frs_server_free is closing every connection */
    struct frs_hold *hold;    /* the hold hook's state, or NULL (hold.c) */
    int64_t active_ms;        /* the monotonic ms of the last byte read or written, or the
                                 last accept: the quiet interval of --clock auto counts
                                 from it */
    struct frs_clock_hooks *clock_hooks; /* an embedder's deadlines (frs_server_set_clock_hooks) */
};

/* ----- querybuf.c: Redis's query buffer sizes, for CLIENT LIST ---------------------- */

/* Applies the cron ticks (clientsCronResizeQueryBuffer) due by the fake's clock. */
void frs_qb_catch_up(frs_conn *c);
/* A read of n bytes into a buffer that held `before` unparsed ones (readQueryFromClient);
 * called after the read, before the commands run. */
void frs_qb_read(frs_conn *c, size_t before, size_t n);
/* The commands of a read ran (a big argument that ended the buffer leaves a fresh one). */
void frs_qb_processed(frs_conn *c);
/* Bytes were written to c (lastinteraction). */
void frs_qb_touched(frs_conn *c);
/* qbuf-free for a buffer holding len bytes, the cron caught up first. */
size_t frs_qb_free(frs_conn *c, size_t len);

/* ----- pause.c: CLIENT PAUSE -------------------------------------------------------- */

/* Whether the pause in force holds c's command (Redis's processCommand: after the
 * unknown-command, arity and NOAUTH answers, which go out at once); when it does, c is
 * marked paused and its input waits.  The caller leaves the command unread. */
int frs_pause_hold(frs_conn *c, int argc, const char *const *argv, const size_t *argvlen);
/* Looks at the pause (after a command, at each turn's timers): when it ended or became
 * laxer, the held connections go on, in the order they were held, each command checked
 * again (Redis's unblockPostponedClients). */
void frs_pause_check(frs_server *srv);
/* A held connection closes. */
void frs_pause_forget(frs_conn *c);
/* The pause's end (Unix ms, the fake's clock) while connections are held, else -1: the
 * loop wakes up then. */
int64_t frs_pause_deadline(frs_server *srv);

/* ----- net.c: the event loop -------------------------------------------------------- */

/* Makes the server: the fake, the listening sockets, the epoll set and the signal fd.
 * Prints the "listening on" lines on stdout.  0, or -1 with a message on stderr. */
int frs_server_init(frs_server *srv, const frs_options *opt);
/* CONFIG SET bind / port (Redis's changeBindAddr, changeListenPort): listens on TCP at
 * the bind words (Redis's: "*", "::*", a '-' prefix for an address that may fail, "" for
 * "* -::*") and port (0: no TCP) instead, the unix socket kept.  0; or -1 when a socket
 * could not be opened, listening again at old_bind and old_port. */
int frs_listen_tcp_again(frs_server *srv, const char *bind, int port, const char *old_bind,
                         int old_port);
/* Runs the loop until SIGTERM/SIGINT (or srv->stop).  Returns 0. */
int frs_server_run(frs_server *srv);
/* One turn of the loop, what frs_server_run repeats: the work before sleeping (woken
 * input, writes, closes), a wait of at most max_wait_ms (0: none; also bounded by the
 * server's own timers) for events, the events, the timers.  For a program that embeds the
 * server and steps it between its own work, in one thread.  0, or -1 when epoll failed
 * (said on stderr). */
int frs_server_turn(frs_server *srv, int max_wait_ms);
/* Closes every connection and socket, removes the unix socket, frees the fake. */
void frs_server_free(frs_server *srv);

/* Marks c to be written before the loop sleeps (called when output was appended). */
void frs_conn_want_flush(frs_conn *c);
/* Closes c after its buffered output has been written (no more commands are read). */
void frs_conn_close_after_reply(frs_conn *c);
/* Closes c as soon as the current command is done, dropping its output (CLIENT KILL). */
void frs_conn_kill(frs_conn *c);
/* Queues c to have its buffered input processed before the loop sleeps (after a wake). */
void frs_conn_resume(frs_conn *c);
/* The connection of a fake client, or NULL. */
frs_conn *frs_conn_of(frs_server *srv, const fr_client *fc);
/* Milliseconds of a monotonic clock, for ages and idle times (never the fake's clock). */
int64_t frs_mono_ms(void);
/* Microseconds of the same clock: the durations of INFO commandstats (arg unused). */
uint64_t frs_mono_us(void *arg);
/* Re-keys c in the fr_client map after its fake client was replaced by c->fc (RESET). */
void frs_conn_rebind(frs_conn *c, const fr_client *old);
/* Re-applies proto-max-bulk-len and the auth requirement to every parser. */
void frs_apply_limits(frs_server *srv);

/* ----- dispatch.c: running a command ------------------------------------------------ */

/* Runs one parsed command for c and appends its reply (and any push or wake it causes
 * to its own or other clients' buffers). */
void frs_dispatch(frs_conn *c, int argc, const char *const *argv, const size_t *argvlen);
/* After a command or a clock change: moves the replies of clients the fake woke and the
 * pushes it queued into their connections' buffers. */
void frs_drain_fake_events(frs_server *srv, frs_conn *current);

/* ----- obuf.c: writing replies ------------------------------------------------------ */

/* Redis's string2ll: an optional '-', digits without a leading zero, in range.  1 if so. */
int frs_string2ll(const char *s, size_t n, long long *out);
/* A NUL-terminated heap copy of the n bytes at p (free it); aborts when out of memory. */
char *frs_memdup(const char *p, size_t n);
/* arr (an array of *cap elements of size bytes, len of them used) with room for one more:
 * arr itself, or a copy twice as large (first_cap elements when it had none; *cap is
 * updated); aborts when out of memory. */
void *frs_array_grow(void *arr, size_t *cap, size_t len, size_t size, size_t first_cap);

void frs_reply_raw(frs_conn *c, const char *p, size_t n);
void frs_reply_status(frs_conn *c, const char *s);
/* err without the leading '-', e.g. "ERR syntax error"; CR and LF become spaces. */
void frs_reply_error(frs_conn *c, const char *err);
void frs_reply_errorf(frs_conn *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void frs_reply_ok(frs_conn *c);
void frs_reply_ll(frs_conn *c, long long v);
void frs_reply_bulk(frs_conn *c, const char *p, size_t n);
void frs_reply_bulk_cstr(frs_conn *c, const char *s);
void frs_reply_null(frs_conn *c);               /* $-1 or _ */
void frs_reply_array(frs_conn *c, long n);       /* *n */
void frs_reply_map(frs_conn *c, long n);         /* *2n or %n */
void frs_reply_set(frs_conn *c, long n);         /* *n or ~n */
void frs_reply_double(frs_conn *c, double d);    /* $ text or ,text */
/* Text that RESP3 sends as a verbatim string ("=N\r\ntxt:..."), RESP2 as a bulk. */
void frs_reply_verbatim(frs_conn *c, const char *p, size_t n);
/* The wrong-number-of-arguments error for a command's full name ("config|set"). */
void frs_reply_arity(frs_conn *c, const char *fullname);

/* ----- resp3.c: RESP2 bytes to RESP3 ------------------------------------------------- */

/* Appends to c's buffer the RESP3 form of the RESP2 reply bytes p[0..n) that the fake
 * gave for the command argv (the shape comes from the per-command table).  The bytes may
 * hold several top-level replies (SUBSCRIBE a b). */
void frs_resp3_convert(frs_conn *c, int argc, const char *const *argv, const size_t *argvlen,
                       const char *p, size_t n);
/* Appends pushes (RESP2 arrays from the fake) as RESP3 push messages (">"). */
void frs_resp3_pushes(frs_conn *c, const char *p, size_t n);

/* A parsed RESP2 reply: views into the bytes it was read from. */
typedef struct frs_rnode {
    char type;                 /* '+', '-', ':', '$', '*' */
    long long n;               /* ':' value; '$' length (-1 nil); '*' count (-1 nil) */
    const char *start;         /* the reply's first byte (its type byte) */
    size_t raw_len;            /* bytes of the whole reply, type byte to last CRLF */
    const char *p;             /* '+', '-', '$': the text (without header and CRLF) */
    size_t len;                /* '+', '-', '$': text length */
    struct frs_rnode *child;   /* '*': the elements, n of them */
} frs_rnode;

/* Parses one complete RESP2 reply from p[0..n) into nodes from a scratch arena (valid
 * until the next call with the same arena).  Returns the node, or NULL if the bytes are
 * not one complete reply. */
typedef struct frs_arena frs_arena;
frs_rnode *frs_rparse(frs_arena **arena, const char *p, size_t n);
void frs_arena_free(frs_arena **arena);

/* ----- cmdtable.c: the server's command table --------------------------------------- */

typedef void frs_cmd_proc(frs_conn *c, int argc, const char *const *argv,
                          const size_t *argvlen);

#define FRS_CMD_NOAUTH   (1u << 0) /* runs before AUTH */
#define FRS_CMD_MULTICTL (1u << 1) /* runs at once even inside MULTI (QUIT, RESET) */
#define FRS_CMD_NOMULTI  (1u << 3) /* refused inside MULTI (Redis's no-multi: SAVE, SHUTDOWN) */
#define FRS_CMD_PUBSUBOK (1u << 2) /* allowed in RESP2 subscribed mode */
#define FRS_CMD_ALLOW_BUSY (1u << 4) /* runs while a script is busy (Redis's allow-busy) */

/* What a command gets while a script is busy (the fake words its own the same way). */
#define FRS_ERR_BUSY "BUSY Redis is busy running a script. You can only call SCRIPT KILL or SHUTDOWN NOSAVE."

/* One row: a command of the fake (proc NULL) or of the server. */
typedef struct frs_cmd {
    const char *name;          /* lower case, "config|get" for a subcommand */
    int arity;                 /* Redis's arity: n exactly, -n at least */
    unsigned flags;            /* FRS_CMD_* */
    frs_cmd_proc *proc;        /* the server's handler, NULL: the fake runs it */
    const char *group;         /* "server", "connection", "string", ... (COMMAND DOCS) */
    const char *fake_flags;    /* the fake's flag words; NULL marks the server's rows */
    int is_container;          /* has subcommands: the row is only a name */
    int first_key, last_key, key_step; /* Redis's legacy key spec, 0 0 0 for none */
    int movable_keys;          /* the keys are found by a procedure (numkeys, STREAMS) */
} frs_cmd;

/* Builds the table (the fake's rows and the server's); idempotent. */
void frs_cmdtable_init(void);
/* Tells the fake which commands the server answers itself, so COMMAND shows them. */
void frs_cmdtable_declare(fr_server *fake);
/* The row for argv (a container's subcommand when argv[1] names one), or NULL when the
 * name is unknown; *container is set to the container row when argv[0] is one whose
 * subcommand argv[1] is unknown or missing. */
const frs_cmd *frs_cmd_lookup(int argc, const char *const *argv, const size_t *argvlen,
                              const frs_cmd **container);

/* ----- commands.c, info.c, config.c, fakecmd.c: the server's commands --------------- */

/* The handlers (see each for its reply); the table in cmdtable.c names them. */
frs_cmd_proc frs_cmd_hello, frs_cmd_auth, frs_cmd_quit, frs_cmd_reset, frs_cmd_info,
    frs_cmd_role, frs_cmd_wait, frs_cmd_shutdown;
frs_cmd_proc frs_cmd_client_setname, frs_cmd_client_getname, frs_cmd_client_id,
    frs_cmd_client_info, frs_cmd_client_list, frs_cmd_client_kill, frs_cmd_client_help,
    frs_cmd_client_reply, frs_cmd_client_noevict, frs_cmd_client_unblock,
    frs_cmd_client_getredir, frs_cmd_client_pause, frs_cmd_client_unpause;
frs_cmd_proc frs_cmd_config_get, frs_cmd_config_set, frs_cmd_config_resetstat,
    frs_cmd_config_rewrite, frs_cmd_config_help;

frs_cmd_proc frs_cmd_fake_time_get, frs_cmd_fake_time_set, frs_cmd_fake_time_advance,
    frs_cmd_fake_fail_nth, frs_cmd_fake_fail_command, frs_cmd_fake_fail_clear,
    frs_cmd_fake_fail_fired, frs_cmd_fake_dump, frs_cmd_fake_seed,
    frs_cmd_fake_published, frs_cmd_fake_help;

/* ----- admin.c, tracking.c: MONITOR, SLOWLOG, LATENCY, DEBUG, client-side caching ---- */

frs_cmd_proc frs_cmd_monitor, frs_cmd_slowlog_get, frs_cmd_slowlog_len, frs_cmd_slowlog_reset,
    frs_cmd_slowlog_help, frs_cmd_latency_doctor, frs_cmd_latency_graph,
    frs_cmd_latency_histogram, frs_cmd_latency_history, frs_cmd_latency_latest,
    frs_cmd_latency_reset, frs_cmd_latency_help, frs_cmd_lolwut, frs_cmd_module_list,
    frs_cmd_module_load, frs_cmd_module_unload, frs_cmd_module_help, frs_cmd_asking,
    frs_cmd_readonly, frs_cmd_readwrite, frs_cmd_restore_asking, frs_cmd_bgrewriteaof,
    frs_cmd_replicaof, frs_cmd_sync, frs_cmd_replconf, frs_cmd_failover, frs_cmd_migrate,
    frs_cmd_debug;
frs_cmd_proc frs_cmd_client_tracking, frs_cmd_client_caching, frs_cmd_client_trackinginfo;

/* Installs the fake's call and key hooks and reads the parameters they use. */
void frs_admin_init(frs_server *srv);
void frs_admin_free(frs_server *srv);
/* After CONFIG SET: re-reads slowlog-*, latency-monitor-threshold. */
void frs_admin_config_changed(frs_server *srv);
/* Around every request: c is the client being served (tracking's NOLOOP, the invalidations
 * owed to it, CLIENT CACHING's one-command life). */
frs_conn *frs_admin_before_command(frs_conn *c); /* returns the one it replaces */
void frs_admin_after_command(frs_conn *c, frs_conn *prev, int argc, const char *const *argv,
                             const size_t *argvlen);
/* A server command ran for usec microseconds: MONITOR, slow log, latency. */
void frs_admin_host_called(frs_conn *c, const frs_cmd *cmd, int argc, const char *const *argv,
                           const size_t *argvlen, uint64_t usec);
/* Whether c (a MONITOR client) may not run cmd: answers Redis's refusal.  1 if refused. */
int frs_admin_refuse_replica(frs_conn *c, const frs_cmd *cmd);
/* A blocked client was served: its slow log entry. */
void frs_admin_unblocked(frs_conn *c, uint64_t usec);
/* A connection goes: MONITOR and tracking forget it. */
void frs_admin_conn_closed(frs_conn *c);
/* Before the loop sleeps: BCAST invalidations (Redis's beforeSleep). */
void frs_admin_before_sleep(frs_server *srv);
/* The connection whose request runs, or NULL between requests. */
frs_conn *frs_admin_current(frs_server *srv);
/* Where tracking.c keeps its tables. */
void **frs_admin_tracking_slot(frs_server *srv);
/* DEBUG SET-ACTIVE-EXPIRE 0 is in force. */
int frs_admin_active_expire_off(frs_server *srv);
/* latency-monitor-threshold is set: the latency monitor samples events. */
int frs_admin_latency_on(frs_server *srv);
/* An active expiry cycle took usec: its expire-cycle sample when over the threshold
 * (activeExpireCycle's latencyAddSampleIfNeeded). */
void frs_admin_expire_cycle(frs_server *srv, uint64_t usec);
/* DEBUG called from a script (fr_server_set_script_host_hook): the reply's bytes in the
 * script's protocol resp, malloc'd (*out_len bytes), or NULL when scripts may not run it
 * (DEBUG SET-DISABLE-DENY-SCRIPTS 1 not given, or a subcommand that reads a client's
 * database or replaces the keyspace: only PROTOCOL, SLEEP, LOG, ERROR, SET-ACTIVE-EXPIRE,
 * SET-DISABLE-DENY-SCRIPTS and HELP). */
char *frs_admin_script_debug(frs_server *srv, int argc, const char *const *argv,
                             const size_t *argvlen, int resp, size_t *out_len);
/* The help reply of a container (commands.c): "NAME <subcommand> ..." and lines. */
void frs_reply_help(frs_conn *c, const char *name, const char *const *lines);

/* tracking.c */
#define FRS_TRACK_ON      (1u << 0)
#define FRS_TRACK_BCAST   (1u << 1)
#define FRS_TRACK_OPTIN   (1u << 2)
#define FRS_TRACK_OPTOUT  (1u << 3)
#define FRS_TRACK_NOLOOP  (1u << 4)
#define FRS_TRACK_CACHING (1u << 5) /* CLIENT CACHING given for the next command */
#define FRS_TRACK_BROKEN  (1u << 6) /* its redirect client is gone */
void frs_tracking_remember(frs_conn *c, int argc, const char *const *argv,
                           const size_t *argvlen);
void frs_tracking_invalidate(frs_server *srv, const char *key, size_t len);
/* Past tracking-table-max-keys: invalidates tracked keys until the table is back under
 * it, with Redis's effort per turn (before the loop sleeps). */
void frs_tracking_limit(frs_server *srv);
/* INFO's tracking figures (Redis's tracking_clients, trackingGetTotalKeys/Items/Prefixes). */
typedef struct frs_tracking_stats {
    size_t clients;  /* connections with tracking on */
    size_t keys;     /* keys in the table */
    size_t items;    /* (key, client) pairs in it */
    size_t prefixes; /* BCAST prefixes */
} frs_tracking_stats;
void frs_tracking_stats_get(frs_server *srv, frs_tracking_stats *out);
void frs_tracking_flush(frs_server *srv);
void frs_tracking_after_command(frs_conn *c, const char *name);
/* Sends the invalidations owed to c after its reply (a served blocked client). */
void frs_tracking_flush_pending(frs_conn *c);
void frs_tracking_broadcast(frs_server *srv);
void frs_tracking_disable(frs_conn *c);
void frs_tracking_free(frs_server *srv);
/* Keys are tracked or BCAST prefixes exist: expiries must be found (active expiry). */
int frs_tracking_active(frs_server *srv);
/* The connection with that CLIENT ID, or NULL. */
frs_conn *frs_conn_by_id(frs_server *srv, uint64_t id);

/* The INFO text of the given sections (NULL: the default ones), in Redis's format. */
char *frs_info_text(frs_server *srv, int argc, const char *const *argv, size_t *len);
/* The process's allocated bytes (INFO used_memory, the maxmemory check). */
unsigned long long frs_used_memory(void);
/* One CLIENT LIST line for c (without the newline) into buf. */
void frs_client_line(frs_conn *c, char *buf, size_t cap);

/* Loads the parameter table with Redis 7.0.15's defaults, then the server's own values
 * (port, unixsocket, maxclients, requirepass, ...) and the --NAME VALUE options.  0, or
 * -1 with a message on stderr (an unknown or invalid option). */
int frs_config_init(frs_server *srv);
void frs_config_free(frs_server *srv);
/* A parameter's current value, or NULL for an unknown name. */
const char *frs_config_get(frs_server *srv, const char *name);
/* The multiplier of a memory value's unit as Redis's memtoull reads it: "" and b 1, k
 * 1000, kb 1024, m, mb, g, gb likewise (any case).  0 for anything else. */
unsigned long long frs_memory_unit(const char *unit);

/* latency-tracking-info-percentiles: the numbers of value (space separated, each in
 * [0, 100]) into out[0..max) and, when norm is given, the text CONFIG GET shows ("%f"
 * without trailing zeros).  How many there are, or -1 with *err (Redis's text). */
int frs_parse_percentiles(const char *value, double *out, int max, char *norm, size_t cap,
                          const char **err);

/* ----- persist.c, aof.c: persistence ------------------------------------------------ */
/* A line of Redis's log (its warning level) on stderr, as persistence writes it. */
void frs_persist_log(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

typedef struct frs_persist frs_persist;
typedef struct frs_aof frs_aof;

#define FRS_CHILD_RDB 1 /* a BGSAVE */
#define FRS_CHILD_AOF 2 /* a BGREWRITEAOF */

/* What a child's end means to the one that started it: the child pid, ok (exit status 0)
 * or the signal that ended it (0 for none). */
typedef void frs_child_done(frs_server *srv, pid_t pid, int ok, int bysignal);

frs_cmd_proc frs_cmd_save, frs_cmd_bgsave, frs_cmd_lastsave;

/* Makes the persistence state and loads the data at start (the AOF when appendonly is
 * yes, else the RDB file when there is one).  0, or -1 after the refusal's lines on
 * stderr (the server does not start, as Redis exits). */
int frs_persist_init(frs_server *srv);
void frs_persist_free(frs_server *srv);
/* After CONFIG SET: the save points again. */
void frs_persist_config_changed(frs_server *srv);
/* The fake's clock in seconds (LASTSAVE, the save points). */
long long frs_persist_now(frs_server *srv);
/* Writes the RDB file now (SAVE, SHUTDOWN, FLUSHALL with save points).  0, or -1 logged. */
int frs_persist_rdb_save(frs_server *srv);
/* Forks the child of type FRS_CHILD_*: 0 in the child, its pid in the parent (on_done is
 * told of its end by the cron), -1 logged. */
pid_t frs_persist_fork(frs_server *srv, int type, frs_child_done *on_done);
/* The type of the running child, 0 none; its age in seconds (-1 none). */
int frs_persist_child_active(frs_server *srv);
long long frs_persist_child_seconds(frs_server *srv);
/* Kills the running child (SIGUSR1, as killRDBChild) and waits for it. */
void frs_persist_kill_child(frs_server *srv);
/* prepareForShutdown: kills a child, flushes the AOF, saves when save points are set
 * (save_mode 0) or SAVE was given (1), not with NOSAVE (-1).  0 when the server may exit;
 * -1 when a save failed and force was not given. */
int frs_persist_shutdown(frs_server *srv, int save_mode, int force);
/* DEBUG RELOAD's work (admin.c parsed its options), with its reply. */
void frs_persist_debug_reload(frs_conn *c, int merge, int noflush, int nosave);
/* Every loop turn: children's ends, the save points, a scheduled BGSAVE, the AOF's
 * fsync and rewrite (at most every 100 ms); whether it must run (the loop then wakes). */
void frs_persist_cron(frs_server *srv);
int frs_persist_wants_cron(frs_server *srv);
/* FLUSHALL ran: flushAllDataAndResetRDB's save. */
void frs_persist_flushall(frs_server *srv);
/* Changes since the last save (rdb_changes_since_last_save). */
uint64_t frs_persist_dirty(frs_server *srv);
/* A load of the whole keyspace finished (the AOF at start, DEBUG LOADAOF). */
void frs_persist_loaded(frs_server *srv, long long keys_loaded, long long keys_expired);

/* INFO persistence's RDB figures. */
typedef struct frs_persist_figures {
    long long changes;            /* rdb_changes_since_last_save */
    int bgsave_in_progress;       /* rdb_bgsave_in_progress */
    long long last_save_time;     /* rdb_last_save_time */
    int last_bgsave_ok;           /* rdb_last_bgsave_status */
    long long last_bgsave_secs;   /* rdb_last_bgsave_time_sec */
    long long current_bgsave_secs;/* rdb_current_bgsave_time_sec */
    long long saves;              /* rdb_saves */
    long long keys_loaded;        /* rdb_last_load_keys_loaded */
    long long keys_expired;       /* rdb_last_load_keys_expired */
} frs_persist_figures;
void frs_persist_info(frs_server *srv, frs_persist_figures *f);

/* aof.c: the append-only file */
/* appendonly yes at start: the AOF loaded (or made from nothing).  0, or -1 after the
 * refusal's lines on stderr. */
int frs_aof_load_at_start(frs_server *srv);
/* SHUTDOWN: the buffer written and fsynced.  0, or -1 when that failed. */
int frs_aof_shutdown(frs_server *srv);
int frs_aof_wants_cron(frs_server *srv);
/* The fsync policy's timed work and a scheduled rewrite. */
void frs_aof_cron(frs_server *srv);

/* INFO persistence's AOF figures. */
typedef struct frs_aof_figures {
    int enabled;                  /* aof_enabled (the state is not off) */
    int rewrite_in_progress;      /* aof_rewrite_in_progress */
    int rewrite_scheduled;        /* aof_rewrite_scheduled */
    long long last_rewrite_secs;  /* aof_last_rewrite_time_sec */
    long long current_rewrite_secs; /* aof_current_rewrite_time_sec */
    int last_bgrewrite_ok;        /* aof_last_bgrewrite_status */
    long long rewrites;           /* aof_rewrites */
    long long consecutive_failures; /* aof_rewrites_consecutive_failures */
    int last_write_ok;            /* aof_last_write_status */
    long long current_size;       /* aof_current_size */
    long long base_size;          /* aof_base_size */
    long long buffer_length;      /* aof_buffer_length */
    long long delayed_fsync;      /* aof_delayed_fsync */
} frs_aof_figures;
void frs_aof_info(frs_server *srv, frs_aof_figures *f);
void frs_aof_free(frs_server *srv);
/* Before the loop sleeps (and before replies are written): the buffered writes go to the
 * file, fsynced as appendfsync says (beforeSleep's flushAppendOnlyFile). */
void frs_aof_before_sleep(frs_server *srv);
/* CONFIG SET appendonly (and appendfsync): the AOF turned on (a rewrite makes its files)
 * or off. */
void frs_aof_config_changed(frs_server *srv);
/* DEBUG LOADAOF's work, with its reply (the process ends when the files do not load). */
void frs_aof_debug_loadaof(frs_conn *c);

/* DEBUG SET-SKIP-CHECKSUM-VALIDATION 1 is in force (admin.c). */
int frs_admin_skip_checksum(frs_server *srv);

/* ----- record.c: the recording (--record FILE, FAKE.RECORD; docs/recording.md) ------------ *
 *
 * While a recording runs, every command of every connection is written with its reply, in
 * the order the commands complete, by the format of recording/include/wsr.h: a connection's
 * open and close, each command (its batch -- the read it arrived in --, the fake's clock,
 * whether it arrived inside MULTI, the connection's name, its arguments and the exact bytes
 * the client got), a blocked command's wait and, when it is served, its completion, the
 * bytes a connection got that answer no command of its own (Pub/Sub messages, MONITOR
 * lines, invalidations), the clock moves of --clock auto, and the hold hook's events.
 * Lines are buffered and written to the file once per loop turn. */

/* Starts recording into path (the writer refuses to replace a file that is not a
 * recording).  Connections already open get their open lines first.  0, or -1 with a
 * message in err: already recording, or the writer's refusal. */
int frs_record_start(frs_server *srv, const char *path, char *err, size_t errcap);
/* Writes the end line and closes the file.  0; -1 with a message when not recording or
 * when the file could not be written completely. */
int frs_record_stop(frs_server *srv, char *err, size_t errcap);
/* The hooks the server calls (each does nothing while no recording runs). */
void frs_record_conn_open(frs_conn *c);
void frs_record_conn_close(frs_conn *c, const char *why);
/* c's command argv ran (multi: it arrived inside MULTI) and its reply is c->out from
 * position `from` (frs_obuf_pos) on; or it blocked (c->blocked: its wait line). */
void frs_record_command(frs_conn *c, int multi, uint64_t from, int argc,
                        const char *const *argv, const size_t *argvlen);
/* The reply that woke c is at positions [from, to) of its output: it is written as its
 * command's completion at the next sweep, after the line of the command that woke it. */
void frs_record_woken(frs_conn *c, uint64_t from, uint64_t to);
/* Writes what connections got since their last line: the replies that woke blocked
 * clients (their completion lines) and every other unrecorded byte (push lines).  Called
 * after each command, after the timers and before any byte is written to a socket. */
void frs_record_sweep(frs_server *srv);
/* The connection's unrecorded bytes (its woken reply's completion line first, if one
 * waits) as a push line: before they are written. */
void frs_record_pushes(frs_conn *c);
/* Hands the buffered lines to the file (once per loop turn). */
void frs_record_flush(frs_server *srv);
/* The server moved the fake's clock itself (--clock auto) from `from` to now. */
void frs_record_clock(frs_server *srv, int64_t from, const char *why);
void frs_record_hold(frs_conn *c, const char *what, uint64_t n, int argc,
                     const char *const *argv, const size_t *argvlen);
/* A command a script ran (the fake's call hook, ev->from_script, after it ran): a call line
 * of the connection whose EVAL/EVALSHA/FCALL runs the script, before that command's own
 * line.  A script of the embedder's own client is not written (it has no connection). */
void frs_record_script_call(frs_server *srv, const fr_call_event *ev);

/* An embedder's own client -- one that runs commands on the fake in process (fr_exec*,
 * fr_pipeline), not over a socket: wsim run's setup, produce and check -- in the recording.
 * frs_record_embedded_open gives it a connection id from the server's CLIENT ID sequence
 * and writes its open line (addr "embedded", the name given); each command is then written
 * with the reply the fake gave (RESP2 bytes) -- batch 0 starts a batch of its own, or pass
 * frs_record_new_batch's number to several commands sent as one pipeline.  0 (and nothing
 * written) while no recording runs; the id stays valid across FAKE.RECORD STOP/START only
 * for the connections' sequence, not for the lines (open it again). */
uint64_t frs_record_embedded_open(frs_server *srv, const char *name);
uint64_t frs_record_new_batch(frs_server *srv);
void frs_record_embedded_command(frs_server *srv, uint64_t id, const char *name, uint64_t batch,
                                 int multi, int argc, const char *const *argv,
                                 const size_t *argvlen, const char *reply, size_t reply_len);
void frs_record_embedded_close(frs_server *srv, uint64_t id);

frs_cmd_proc frs_cmd_fake_record_start, frs_cmd_fake_record_stop, frs_cmd_fake_record_status;

/* ----- hold.c: the hold hook, crash points in a consumer process ----------------------------- *
 *
 * A program that embeds frs_core (wsim, crash-exploring a consumer process) arms one hold:
 * among the commands of the connections `match` accepts, counted in arrival order (as the
 * explorer counts: every command, or only those named `name`), the nth is held
 *
 *   - before it is applied (FRS_HOLD_BEFORE): it is not run; the connection reads and runs
 *     nothing more;
 *   - or after it is applied, before its reply is written (FRS_HOLD_AFTER): it runs (its
 *     effects and its recording line are there), but no byte from its reply on is written
 *     to the socket and the connection runs nothing more.  A blocking command is held once
 *     it is served.
 *
 * `reached` is called once, the moment it holds (from inside the loop: it may kill the
 * consumer, e.g. SIGKILL to its process group); frs_hold_get polls the same.  A held
 * connection that closes (the consumer was killed) drops the command it held: BEFORE, it
 * never ran; AFTER, its reply never left -- and, as a closing connection does, the server
 * discards its open MULTI, so a command held inside MULTI leaves nothing of the
 * transaction.  frs_hold_release lets it go on as if nothing happened.
 *
 * Counting: a command counts when it is read, before anything runs it, on a connection that
 * `match` accepts at that moment (c->name, c->peer_pid, c->id, c->addr are there to decide
 * by); `name` compares case-insensitively with the command's name, or with
 * "container|subcommand" ("XGROUP|CREATE") when it holds a '|'.  The recording shows the
 * hold as `hold` lines (what=before|after, then released or dropped). */
#define FRS_HOLD_BEFORE 1
#define FRS_HOLD_AFTER 2

typedef enum frs_hold_state {
    FRS_HOLD_OFF = 0,     /* nothing armed */
    FRS_HOLD_ARMED,       /* armed, the nth command has not come */
    FRS_HOLD_HELD,        /* holding it now */
    FRS_HOLD_RELEASED,    /* it was held, then released */
    FRS_HOLD_DROPPED,     /* it was held and its connection closed */
} frs_hold_state;

/* What the hold reached (valid until the next frs_hold_* call). */
typedef struct frs_hold_info {
    frs_hold_state state;
    uint64_t counted;         /* matching commands counted since it was armed */
    uint64_t conn;            /* the held command's connection id (0 before) */
    int when;                 /* FRS_HOLD_BEFORE or FRS_HOLD_AFTER */
    int argc;                 /* the held command */
    char **argv;
    size_t *argvlen;
    int64_t t;                /* the fake's clock when it was held */
} frs_hold_info;

typedef struct frs_hold_spec {
    int (*match)(void *ud, const frs_conn *c); /* connections whose commands count; NULL: all */
    const char *name;         /* count only these commands; NULL: every command */
    uint64_t nth;             /* hold the nth counted (1-based); 0: count only, never hold */
    int when;                 /* FRS_HOLD_BEFORE or FRS_HOLD_AFTER */
    void (*reached)(void *ud, const frs_hold_info *info); /* or NULL */
    void *ud;                 /* for match and reached */
} frs_hold_spec;

/* Arms the hold (replacing one armed before; one that holds now is released first).
 * 0, or -1 for a bad spec (when not BEFORE or AFTER). */
int frs_hold_arm(frs_server *srv, const frs_hold_spec *spec);
/* The state, and the details in *info when given. */
frs_hold_state frs_hold_get(frs_server *srv, frs_hold_info *info);
/* Lets a held command go on (BEFORE: it runs now; AFTER: its reply is written); the
 * connection reads again.  No effect unless HELD. */
void frs_hold_release(frs_server *srv);
/* Releases what is held and forgets the hold. */
void frs_hold_disarm(frs_server *srv);
/* net.c: whether the command just read on c is held before it runs (1: do not run it; the
 * hold keeps a copy), and, for AFTER, marks c so that frs_hold_after_command freezes its
 * reply. */
int frs_hold_before_command(frs_conn *c, int argc, const char *const *argv,
                            const size_t *argvlen);
/* dispatch.c: after c's command ran whose reply starts at position from (or it blocked). */
void frs_hold_after_command(frs_conn *c, uint64_t from);
/* dispatch.c: c was woken, its reply starts at position from. */
void frs_hold_woken(frs_conn *c, uint64_t from);
/* net.c: before c reads on, runs the command a released BEFORE hold kept, if c is its
 * connection. */
void frs_hold_replay(frs_conn *c);
/* net.c: c closes. */
void frs_hold_conn_closed(frs_conn *c);
void frs_hold_free(frs_server *srv);

/* ----- net.c: the clock's embedder (--clock auto) ----------------------------------------- */


/* With --clock auto, the deadlines the server moves the clock to are the blocked clients'
 * (fr_server_next_deadline), the keys' expiry when something observes it (keyspace
 * notifications of expired keys, client tracking), and what an embedder says: next() is
 * its next deadline on the fake's clock (Unix ms; -1 none), moved() is told after each move
 * (from, to) -- a scenario's `advance` waiting for its time.  held(), when set, is asked at
 * the moment the quiet interval has passed and the clock would move: non-zero keeps it
 * where it is and starts the quiet interval anew (wsim: a consumer process still computing
 * has not stopped moving, however long it has been silent). */
typedef struct frs_clock_hooks {
    int64_t (*next)(void *ud);
    void (*moved)(void *ud, int64_t from, int64_t to);
    int (*held)(void *ud);
    void *ud;
} frs_clock_hooks;
/* Sets (or with NULL removes) the embedder's hooks; the struct is the caller's. */
void frs_server_set_clock_hooks(frs_server *srv, frs_clock_hooks *hooks);
/* Turns the virtual clock's auto-advance on (quiet_ms > 0: the quiet interval) or off (0).
 * -1 on a wall-clock server. */
int frs_server_set_auto_advance(frs_server *srv, int quiet_ms);

/* The Redis version the server claims (INFO redis_version, HELLO version). */
const char *frs_redis_version(const frs_server *srv);

#endif /* FRS_H */
