/* fakeredis.h -- an in-process Redis 7.0 fake on a virtual clock.
 *
 * A fr_server holds a keyspace of 16 databases, a virtual clock in milliseconds, a
 * seeded random generator, a log of published messages and the fault hooks.  A
 * fr_client is one connection's state: the selected database, the MULTI queue and the
 * WATCHed keys.  Commands are executed one at a time (or as a pipeline) and answer
 * exactly what redis-server 7.0 would answer over RESP2, byte for byte, errors included.
 *
 * Nothing here reads the wall clock, starts a thread or calls rand(): one seed and the
 * virtual clock decide everything, so two runs with the same inputs give the same
 * replies.  None of it is thread safe; use one server from one thread.
 *
 * Memory: replies live in an arena owned by the client and stay valid until the next
 * fr_exec*, fr_pipeline* or fr_client_free call on that client.  Functions that return
 * heap memory say so; free it with free().
 *
 * Running out of memory (docs/architecture.md, "Running out of memory"): a function that
 * makes something (fr_server_new, fr_client_new, fr_server_reset, fr_split_line,
 * fr_reply_to_resp, fr_dump's copy, fr_stream_entries ...) returns NULL or its error code,
 * as each says, and leaves nothing behind.  A command never stops half-way: each server
 * holds an emergency reserve (1 MiB, taken by fr_server_new), an allocation the C library
 * refuses while a command runs is served from it, and the command completes with its
 * normal reply.  The server is then short of memory: until the reserve is whole again
 * (its blocks freed, or a fresh one allocated, tried before each command) every command
 * the OOM hook path refuses (deny-oom commands, scripts that may write, anything queued
 * in MULTI: see fr_server_set_oom_hook) answers
 * "-OOM command not allowed when used memory > 'maxmemory'." before it runs and changes
 * nothing, while reads and deletions go on.  A single request larger than what is left
 * of the reserve aborts the process with a message naming the command: the one case
 * where the fake does not answer.
 */
#ifndef FAKEREDIS_H
#define FAKEREDIS_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define FR_VERSION "0.1.0"
#define FR_REDIS_VERSION "7.0.15" /* the redis-server whose replies the fake reproduces */

typedef struct fr_server fr_server;
typedef struct fr_client fr_client;

/* ----- Replies ------------------------------------------------------------------ */

typedef enum fr_reply_type {
    FR_REPLY_STATUS = 1, /* +OK */
    FR_REPLY_ERROR,      /* -ERR ... */
    FR_REPLY_INTEGER,    /* :42 */
    FR_REPLY_BULK,       /* $3 foo */
    FR_REPLY_NIL,        /* $-1 */
    FR_REPLY_ARRAY,      /* *2 ... */
    FR_REPLY_NIL_ARRAY,  /* *-1 */
} fr_reply_type;

typedef struct fr_reply {
    fr_reply_type type;
    long long integer;          /* FR_REPLY_INTEGER */
    const char *str;            /* STATUS, ERROR (no leading '-'), BULK; NUL-terminated */
    size_t len;                 /* bytes in str, binary safe for BULK */
    const struct fr_reply *elements; /* FR_REPLY_ARRAY: count replies in order */
    size_t count;
} fr_reply;

/* Encodes a reply as RESP2 into buf (at most cap bytes) and returns the full length the
 * encoding needs, like snprintf: a return value > cap means buf was too small. */
size_t fr_reply_encode(const fr_reply *reply, char *buf, size_t cap);

/* Encodes a reply as RESP2 into fresh heap memory (free() it); *len gets the length.
 * Returns NULL when out of memory. */
char *fr_reply_to_resp(const fr_reply *reply, size_t *len);

/* ----- Server and clock ---------------------------------------------------------- */

typedef struct fr_config {
    uint64_t seed;        /* drives SPOP, SRANDMEMBER and every other random choice */
    int64_t start_ms;     /* the virtual clock's first reading, in Unix milliseconds */
    int cluster_enabled;  /* answer as a one-node Redis Cluster owning every slot */
} fr_config;

/* The defaults: seed 1, clock at 1,700,000,000,000 ms, cluster emulation off. */
fr_config fr_config_default(void);

/* Makes a server; cfg may be NULL for the defaults.  Returns NULL when out of memory. */
fr_server *fr_server_new(const fr_config *cfg);
/* Frees the server and every client still connected to it (their pointers die too). */
void fr_server_free(fr_server *server);
/* Makes the server what fr_server_new(cfg) makes, in place: every client is freed (their
 * pointers die), and the keyspace, clock, seed, scripts, Pub/Sub, blocked clients, fault
 * hooks, statistics, settings, ACL users and declared commands
 * (fr_server_declare_command) start again; the server pointer stays valid.  For a
 * program that makes many short worlds in a row (a fuzzer), it saves the server's
 * allocation and lets the C library's heap serve the next world from what this one
 * used.  0, or -1 when out of memory (the server is then empty: fr_server_free it). */
int fr_server_reset(fr_server *server, const fr_config *cfg);

/* The virtual clock, in Unix milliseconds.  A command reads it once when it starts, as
 * Redis caches its clock per command; the commands EXEC runs all see EXEC's reading. */
int64_t fr_clock_now(const fr_server *server);
/* Sets the clock.  It may go backwards, which Redis's own clock can too; stream ids
 * generated afterwards still never go backwards. */
void fr_clock_set(fr_server *server, int64_t unix_ms);
void fr_clock_advance(fr_server *server, int64_t ms);
/* Makes the server read the real wall clock (CLOCK_REALTIME) from now on (on != 0), or
 * go back to the virtual clock at the last reading (on == 0).  Only for callers that
 * must agree with a real server's clock, such as the differential tests. */
void fr_clock_use_wall(fr_server *server, int on);

/* Sets one of the redis.conf parameters the fake follows, as CONFIG SET would (the value
 * as CONFIG SET takes it; names case-insensitive, the *-ziplist-* aliases included):
 *   hash-max-listpack-entries, hash-max-listpack-value, set-max-intset-entries,
 *   zset-max-listpack-entries, zset-max-listpack-value -- the encoding thresholds
 *     (OBJECT ENCODING, and the orders and SCAN pages that follow from an encoding);
 *   list-max-listpack-size -- the quicklist node size MEMORY USAGE assumes;
 *   maxmemory-policy, maxmemory -- an LFU policy makes OBJECT FREQ answer and OBJECT
 *     IDLETIME refuse; maxmemory with an LRU or LFU policy stops integers from being
 *     shared (OBJECT REFCOUNT); with an evicting policy, keys are evicted before a
 *     command while the OOM hook says the limit is passed (fr_server_evicted_keys);
 *   maxmemory-samples -- the keys sampled per database for the LRU, LFU and TTL policies;
 *   lfu-log-factor, lfu-decay-time -- the LFU counter's growth and decay;
 *   notify-keyspace-events -- the keyspace notification classes (see below);
 *   busy-reply-threshold (alias lua-time-limit) -- when a running script turns busy
 *     (see "Scripts"; 5000 ms by default, 0 never);
 *   min-replicas-to-write, min-replicas-max-lag -- both above 0: writes answer NOREPLICAS
 *     (the fake has no replicas).
 * Returns 0 when set, 1 for a parameter the fake does not follow (nothing changes), -1
 * for a value Redis would refuse (nothing changes).  fakeredis-server passes every
 * CONFIG SET and --NAME VALUE here. */
int fr_server_set_param(fr_server *server, const char *name, const char *value);

/* How many commands the server has executed (see the fault hooks for what counts). */
uint64_t fr_server_commands_executed(const fr_server *server);

/* ----- Clients and commands -------------------------------------------------------- */

/* Makes a client connected to server, on database 0.  NULL when out of memory. */
fr_client *fr_client_new(fr_server *server);
/* Frees a client: its MULTI queue, WATCHes and subscriptions go with it, as on a
 * disconnect; a blocked client stops waiting. */
void fr_client_free(fr_client *client);

/* Executes one command: argv[0] is the name, argvlen[i] the byte length of argv[i]
 * (argvlen may be NULL for NUL-terminated arguments).  Returns the reply, valid until the
 * next call on this client.  Never returns NULL, except for a client that turned blocking
 * on and whose command blocked (see "Blocking"): out of memory is answered with an error
 * reply and the keyspace is left as it was. */
const fr_reply *fr_exec(fr_client *client, int argc, const char *const *argv,
                        const size_t *argvlen);

/* Like fr_exec, with the command written as one line split the way redis-cli splits it
 * (spaces separate, "double quotes" with \n \r \t \b \a \\ \" \xHH escapes, 'single
 * quotes').  A line that does not split (unbalanced quotes) answers
 * "ERR Protocol error: unbalanced quotes in request", as Redis does for inline commands. */
const fr_reply *fr_exec_line(fr_client *client, const char *line);

/* Executes one command and returns its raw RESP2 reply bytes (the same bytes fr_exec's
 * reply encodes to), valid until the next call on this client; *len gets the length.
 * The fastest way in: no reply tree is built. */
const char *fr_exec_resp(fr_client *client, int argc, const char *const *argv,
                         const size_t *argvlen, size_t *len);

/* Splits a line the way redis-cli splits what you type (see fr_exec_line) into heap
 * arrays *argv (NUL-terminated copies) and *argvlen.  Returns the number of arguments
 * (0 for a blank line), or -1 for unbalanced quotes or out of memory (nothing to free
 * then).  Free with fr_split_free. */
int fr_split_line(const char *line, char ***argv, size_t **argvlen);
void fr_split_free(int argc, char **argv, size_t *argvlen);
/* The splitting itself, allocating nothing (fr_split_line and the server's inline
 * requests both use it): splits the len bytes at line (a NUL byte ends the line earlier;
 * no byte at or past line + len is read) as redis-cli and Redis's sdssplitargs split --
 * "double quotes" with \n \r \t \b \a \xHH and backslash-anything escapes, 'single
 * quotes' with \' only, a closing quote followed by a blank or the end.  The unescaped
 * arguments go to out (room for len bytes), their offsets in out and lengths to off and
 * lens (room for max entries; max >= len/2+1 always suffices).  Returns the argument
 * count (0 for a blank line), or -1 for unbalanced quotes or more than max arguments. */
int fr_split_args(const char *line, size_t len, char *out, size_t *off, size_t *lens,
                  size_t max);

/* One command of a pipeline. */
typedef struct fr_command {
    int argc;
    const char *const *argv;
    const size_t *argvlen; /* may be NULL for NUL-terminated arguments */
} fr_command;

/* Executes n commands in order, as one pipeline, and stores their replies in replies[0..n)
 * (valid until the next call on this client).  Returns 0.  With blocking on, a command
 * that blocks ends the pipeline: its reply and those after it are NULL. */
int fr_pipeline(fr_client *client, size_t n, const fr_command *commands,
                const fr_reply **replies);

/* The client's selected database (0..15). */
int fr_client_db(const fr_client *client);
/* Non-zero while the client is inside MULTI. */
int fr_client_in_multi(const fr_client *client);

/* Like fr_exec, but returns every top-level reply the command wrote, as an array of *n
 * replies (NULL when *n is 0), valid until the next call on this client.  Most commands
 * write one; SUBSCRIBE a b c, PSUBSCRIBE, UNSUBSCRIBE and their kind write one per
 * channel, as Redis does (fr_exec returns the first of them); a command that blocked
 * (see "Blocking") writes none. */
const fr_reply *fr_exec_all(fr_client *client, int argc, const char *const *argv,
                            const size_t *argvlen, size_t *n);

/* ----- Pub/Sub --------------------------------------------------------------------------
 * SUBSCRIBE, PSUBSCRIBE, SSUBSCRIBE and their UNSUBSCRIBEs answer their confirmations as
 * their own reply, one array per channel (["subscribe", channel, count] ...).  The
 * "message", "pmessage" and "smessage" arrays a client receives because a client
 * published are *pushes*: they are queued on the receiving client, in the order Redis
 * writes them (channel subscribers first, then each matching pattern), as RESP2 bytes,
 * until taken.  A client that publishes to itself inside MULTI/EXEC gets the message
 * inside EXEC's reply, where Redis writes it.  A client with any subscription is in
 * subscribed mode: it may only run (P|S)SUBSCRIBE, (P|S)UNSUBSCRIBE, PING, QUIT and RESET
 * (RESP2).  Subscriptions end with fr_client_free. */

/* How many pushes are queued on the client. */
size_t fr_client_push_count(const fr_client *client);
/* The queued pushes as raw RESP2 bytes, in delivery order (what a server writes to the
 * connection); *len gets the length (0 when none).  Valid until the queue changes: until
 * fr_client_push_clear or fr_client_take_pushes on this client, or the next command
 * executed by any client of the server.  The queue is left as it is. */
const char *fr_client_push_resp(const fr_client *client, size_t *len);
/* Empties the client's push queue (after a server wrote the bytes out). */
void fr_client_push_clear(fr_client *client);
/* Takes the queued pushes as reply trees (each an FR_REPLY_ARRAY such as ["message",
 * channel, payload]): *pushes gets an array of the returned number of replies (NULL when
 * none), and the queue is emptied.  The trees stay valid until the next fr_exec*,
 * fr_pipeline or fr_client_take_pushes call on this client, or its fr_client_free. */
size_t fr_client_take_pushes(fr_client *client, const fr_reply **pushes);
/* The next client whose push queue became non-empty since it was last returned here, in
 * the order they got their first push; NULL when there is none.  A server calls it after
 * each command until NULL and writes each client's pushes out; each client comes back
 * once per batch, however many pushes it got. */
fr_client *fr_server_take_pushed(fr_server *server);
/* The client's subscriptions: channels + patterns + shard channels.  Non-zero means
 * subscribed mode. */
size_t fr_client_subscriptions(const fr_client *client);
/* Ends every subscription of the client without a reply and leaves subscribed mode, as
 * RESET does. */
void fr_client_pubsub_reset(fr_client *client);
/* Tells the fake which protocol the client's connection speaks (2, the default, or 3
 * after HELLO 3).  Redis's subscribed-mode rules depend on it (in RESP3 a subscribed
 * client may run any command and PING answers +PONG), and a script's own reply (EVAL*,
 * FCALL*) is written in it: RESP3 maps, sets, doubles, big numbers, verbatim strings,
 * booleans and nulls (fr_reply sees their RESP2 forms), and so are COMMAND's and ACL's maps
 * and sets (command.c, acl.c).  Every other reply, pushes
 * included, is written as RESP2 bytes (a server converts them).  Returns 0, or -1 for
 * another number. */
int fr_client_set_protocol(fr_client *client, int proto);

/* ----- Blocking -------------------------------------------------------------------------
 * By default BLPOP, BRPOP, BLMOVE, BRPOPLPUSH, BLMPOP, BZPOPMIN, BZPOPMAX, BZMPOP and
 * XREAD/XREADGROUP with BLOCK never wait: when they cannot be served they answer at once
 * what their timeout would answer (a nil array), since an in-process caller has nobody to
 * wait for.  A client with blocking on (a server's connection) blocks instead, as
 * redis-server does, when such a command cannot be served outside MULTI/EXEC: nothing is
 * answered (fr_exec returns NULL, fr_exec_resp an empty reply, fr_exec_all *n == 0;
 * fr_pipeline stops there, leaving that reply and the following ones NULL: run them again
 * after the wake), and fr_client_is_blocked becomes non-zero.  No command may be run on a
 * blocked client (an assertion): a server stops reading its input until it is woken.
 *
 * After each command, the clients blocked on the keys it made ready are served as Redis
 * 7.0 serves them: key by key in the order they became ready, on each key the first
 * blocked first (a list emptied by the first ones leaves the rest blocked; an element
 * BLMOVE pushes wakes the clients blocked on its destination next).  XREADGROUP blocked
 * on a key that is deleted (or stops being a stream) or whose group is destroyed answers
 * Redis's UNBLOCKED / NOGROUP error.  A woken client is queued for fr_server_take_woken
 * with its reply.  A deadline passes only through fr_server_expire_blocked. */

/* Turns real blocking on (on != 0) or off for the client.  Off by default. */
void fr_client_set_blocking(fr_client *client, int on);
/* Non-zero while the client is blocked. */
int fr_client_is_blocked(const fr_client *client);
/* The next client woken (served, timed out, or unblocked by fr_client_unblock), in the
 * order they were woken; NULL when none.  Each woken client is returned once; its reply
 * is fr_client_woken_resp / fr_client_woken_reply, and it can run commands again. */
fr_client *fr_server_take_woken(fr_server *server);
/* The raw RESP2 reply that woke the client (*len bytes, 0 when it was never woken),
 * valid until it blocks again or is freed. */
const char *fr_client_woken_resp(const fr_client *client, size_t *len);
/* The same reply as a tree, valid until the next fr_exec*, fr_pipeline or
 * fr_client_woken_reply call on this client; NULL when it was never woken. */
const fr_reply *fr_client_woken_reply(fr_client *client);
/* The earliest deadline of a blocked client, in the server's clock (Unix ms); -1 when no
 * blocked client has one (none blocked, or all with timeout 0 = for ever).  A client
 * blocked at time t with a timeout of d ms has the deadline t + d.  A client blocked in
 * XREADGROUP ... CLAIM (Redis 8.4) also has the first ms past its claim time (its groups'
 * oldest pending delivery plus min-idle-time, or the time it blocked plus min-idle-time
 * when nothing is pending), when fr_server_expire_blocked runs its command again. */
int64_t fr_server_next_deadline(const fr_server *server);
/* Answers every blocked client whose deadline is <= fr_clock_now(server) the timeout
 * reply (the nil array *-1, for every blocking command), earliest deadline first (ties in
 * the order they blocked), and queues them as woken.  Then, as Redis 8.4 does after its
 * timeouts, runs again each XREADGROUP ... CLAIM whose claim time is < the clock, in the
 * order they blocked: one that now finds entries is answered and queued as woken, the
 * others stay blocked with their next claim time.  Returns how many were woken. */
size_t fr_server_expire_blocked(fr_server *server);
/* CLIENT UNBLOCK: wakes a blocked client with the timeout reply, or with error != 0 with
 * "-UNBLOCKED client unblocked via CLIENT UNBLOCK".  Returns 1 if it was blocked, 0 if
 * not (nothing happens then). */
int fr_client_unblock(fr_client *client, int error);
/* How many clients are blocked (INFO's blocked_clients). */
size_t fr_server_blocked_count(const fr_server *server);

/* ----- Scripts ---------------------------------------------------------------------------
 * EVAL, EVALSHA, EVAL_RO, EVALSHA_RO and SCRIPT run Lua 5.1 scripts as Redis 7.0 does
 * (docs/scripting.md).  A script is atomic: nothing else runs while it does, except what
 * a busy hook runs.  Once a script has run longer than busy-reply-threshold (5000 ms by
 * default, fr_server_set_param; measured on the virtual clock as FRI_LUA_STEPS_PER_MS =
 * 10,000 Lua instructions per millisecond, or in real time on a server that reads the
 * wall clock) it is busy: the hook is called every 100,000 instructions, and commands of
 * other clients executed from inside it answer -BUSY, except SCRIPT KILL (which stops a
 * script that has not written), MULTI, DISCARD, WATCH and UNWATCH.  A server uses the
 * hook to keep serving its connections, as redis-server's processEventsWhileBlocked. */
typedef void fr_busy_hook(fr_server *server, void *ctx);
/* Sets (hook != NULL) or removes the busy hook. */
void fr_server_set_busy_hook(fr_server *server, fr_busy_hook *hook, void *ctx);
/* From a busy hook: ends the running script at its next hook tick even if it has
 * written (what SCRIPT KILL refuses; redis-server's only way out is SHUTDOWN NOSAVE).  Its
 * caller gets SCRIPT KILL's error.  For embedders that must never hang (tests, fuzzers);
 * no effect when no script runs. */
void fr_server_script_abort(fr_server *server);
/* Non-zero while a script that has passed busy-reply-threshold is running. */
int fr_server_script_busy(const fr_server *server);
/* Memory: the fake counts none, so the embedder says whether the process is over
 * maxmemory (non-zero) when a command starts; NULL (the default) is never.  With a hook
 * that says so, the fake refuses as Redis's processCommand does (-OOM for a deny-oom
 * command, a script whose shebang lacks no-writes and allow-oom, or anything queued in
 * MULTI) and a script started then gets the OOM error from redis.call of a deny-oom
 * command until it has written (Redis's scriptVerifyOOM).  A server short of memory (its
 * emergency reserve in use: "Running out of memory" at the top) refuses on this same
 * path, with a hook or without. */
typedef int fr_oom_hook(fr_server *server, void *ctx);
void fr_server_set_oom_hook(fr_server *server, fr_oom_hook *hook, void *ctx);
/* RESP3 inside scripts: the fake's commands write RESP2; after redis.setresp(3) a
 * script's redis.call gets a command's reply in RESP3 when the embedder converts it (a
 * server that speaks RESP3 knows how): the hook gets the command (argv) and its RESP2
 * reply, and returns the RESP3 bytes of that one reply in malloc'd memory (*out_len
 * bytes; the fake free()s it), or NULL to keep the RESP2 bytes.  Without a hook a
 * script under setresp(3) sees RESP2 replies with nulls as nil. */
typedef char *fr_resp3_hook(fr_server *server, void *ctx, int argc, const char *const *argv,
                            const size_t *argvlen, const char *resp2, size_t len,
                            size_t *out_len);
void fr_server_set_resp3_hook(fr_server *server, fr_resp3_hook *hook, void *ctx);
/* The embedder's own commands inside scripts: a script's redis.call of a command the fake
 * does not have but the embedder does (fakeredis-server's DEBUG, which Redis lets scripts
 * run after DEBUG SET-DISABLE-DENY-SCRIPTS 1) goes to this hook with the protocol the
 * script reads (2, or 3 after redis.setresp(3)).  It returns that one reply's bytes in
 * that protocol in malloc'd memory (*out_len bytes; the fake free()s it), or NULL when it
 * does not let scripts run the command: the script then gets Redis's "This Redis command
 * is not allowed from script".  The hook may move the fake's clock (DEBUG SLEEP) but must
 * not run commands on it.  Without a hook every such command is refused so. */
typedef char *fr_script_host_hook(fr_server *server, void *ctx, int argc,
                                  const char *const *argv, const size_t *argvlen, int resp,
                                  size_t *out_len);
void fr_server_set_script_host_hook(fr_server *server, fr_script_host_hook *hook, void *ctx);
/* ----- Observers ---------------------------------------------------------------------
 * What a server in front of the fake needs for MONITOR, SLOWLOG, LATENCY and client-side
 * caching (fakeredis-server: docs/server.md).  Hooks run while the command runs; they must
 * not call back into the fake. */

/* One command as Redis's call() runs it: a client's command, one of EXEC's queue, or a
 * script's redis.call. */
typedef struct fr_call_event {
    fr_client *client;        /* the client that sent it; for a script's command the
                                 script's caller (EVAL's or FCALL's client) */
    int from_script;          /* 1: a script's redis.call (Redis's lua client) */
    int before;               /* 1: EVAL, EVALSHA, FCALL (and _RO forms) about to run
                                 their script (Redis feeds MONITOR then); 0: it ran */
    int db;                   /* the database it ran on */
    int argc;                 /* its arguments, argv[0] the name as sent */
    const char *const *argv;
    const size_t *argvlen;
    const char *name;         /* its row's full lower-case name ("config|get") */
    unsigned flags;           /* FR_CALL_* */
    uint64_t usec;            /* after: its duration by fr_stats_set_clock's clock */
    const char *reply;        /* after: the bytes it appended to its client's reply (a
                                 script's command: what redis.call got, RESP2 or RESP3 as
                                 the script asked), NULL when none (blocked, REPLY OFF) */
    size_t reply_len;
} fr_call_event;
#define FR_CALL_READONLY (1u << 0) /* the row is readonly (tracking remembers its keys) */
#define FR_CALL_ADMIN    (1u << 1) /* admin: kept from MONITOR */
#define FR_CALL_FAST     (1u << 2) /* fast (LATENCY's fast-command event) */
#define FR_CALL_BLOCKED  (1u << 3) /* the client blocked in it */
#define FR_CALL_PUBSUB   (1u << 4) /* a pubsub row (no keys for tracking) */
typedef void fr_call_hook(void *ctx, const fr_call_event *ev);
void fr_server_set_call_hook(fr_server *server, fr_call_hook *hook, void *ctx);
/* Keys: a key written or deleted (expiry included; Redis's signalModifiedKey), key set,
 * or a flush (key NULL; db -1 for FLUSHALL; Redis's signalFlushedDb).  client is the
 * client whose command wrote it (a served blocked client for its own command), NULL when
 * unknown (an expiry). */
typedef void fr_key_hook(void *ctx, fr_client *client, int db, const char *key, size_t len);
void fr_server_set_key_hook(fr_server *server, fr_key_hook *hook, void *ctx);
/* DEBUG RELOAD: the keyspace and the libraries saved as an RDB file and loaded back
 * (fr_rdb_save, fr_rdb_load: expired keys dropped, encodings as loading decides, fresh LRU
 * stamps or the idle time / counter an LRU / LFU policy saves; WATCHers touched, the key
 * hook sees a flush).  0, or -1 when out of memory (nothing changed). */
int fr_server_reload(fr_server *server);
/* DEBUG OBJECT's text for a key of database db (Redis's "Value at:... refcount:...
 * encoding:... serializedlength:... lru:... lru_seconds_idle:..."), without expiring it;
 * -1 when there is no such key.  Lists lack Redis's ql_* fields. */
int fr_debug_object(fr_server *server, int db, const char *key, size_t len, char *buf,
                    size_t cap);
/* DEBUG DIGEST: the keyspace's signature as redis-server 7.0.15 computes it (xor and
 * mix of SHA-1s over every key, value and time-to-live flag of every database; digest.c
 * says how) as 40 lower-case hex digits and a NUL, all zeros for an empty keyspace.  Keys
 * past their TTL that nothing expired yet count, as in Redis; nothing is expired or
 * touched. */
void fr_debug_digest(fr_server *server, char hex[41]);
/* DEBUG DIGEST-VALUE: one key's value signature in database db (Redis's xorObjectDigest
 * from zero) in hex as fr_debug_digest, all zeros when there is no such key; no expiry,
 * no touch. */
void fr_debug_digest_value(fr_server *server, int db, const char *key, size_t len,
                           char hex[41]);
/* Whether key lives in database db now (no lazy expiry, nothing counted; MIGRATE's NOKEY). */
int fr_key_exists(fr_server *server, int db, const char *key, size_t len);

/* How many scripts EVAL and SCRIPT LOAD have cached (INFO's number_of_cached_scripts). */
size_t fr_server_script_count(const fr_server *server);

/* ----- Memory --------------------------------------------------------------------------
 * Where the fake's own memory comes from, as sqlite3_config(SQLITE_CONFIG_MALLOC) says it
 * for SQLite: by default the C library's malloc family.  fr_set_allocator routes every
 * allocation of the fake (Lua's included) through a instead, process-wide; NULL goes back
 * to the C library's.  For a process that allocates from memory of its own from some
 * moment on -- a crash explorer's forked child, which must not write the pages it shares
 * with its parent -- so a's free, realloc and usable_size also receive blocks the C
 * library allocated before the switch (free may leave them alone; realloc must copy them:
 * usable_size may be NULL, then the C library's malloc_usable_size reads their size).
 * Memory the fake hands to the embedder to free() (fr_dump's text, fr_reply_to_resp, ...)
 * still comes from the C library.  Not thread-safe: call it while no other thread uses
 * the fake.  The emergency reserve's rule ("Running out of memory") holds on top of a: an
 * allocation a refuses inside a command is served from the reserve. */
typedef struct fr_allocator {
    void *(*malloc)(size_t n);
    void *(*calloc)(size_t n, size_t size);
    void *(*realloc)(void *p, size_t n);
    void (*free)(void *p);
    size_t (*usable_size)(void *p); /* the bytes of a block, or NULL */
} fr_allocator;
void fr_set_allocator(const fr_allocator *a);

/* ----- Persistence: RDB files (docs/fake_redis.md, "Persistence") --------------------
 * The keyspace and the function libraries as an RDB file in Redis 7.0's format (version
 * 10): what redis-server 7.0.15 writes with SAVE and reads at start, so files go both
 * ways.  Loading is all or nothing: a file that is corrupt, truncated or that would break
 * the fake's invariants is refused with the lines Redis logs for it, and the server is
 * left as it was. */

/* The AUX fields a saved file carries. */
typedef struct fr_rdb_options {
    long long ctime;    /* "ctime", Unix seconds; -1: the fake's clock */
    long long used_mem; /* "used-mem" (0 in process: the fake does not measure memory) */
    int aof_base;       /* "aof-base": 1 when the file is the base of an AOF */
} fr_rdb_options;

/* The file's bytes (heap memory: free() it; *len set), NULL when out of memory.  opts may
 * be NULL (ctime from the clock, used-mem 0, aof-base 0).  Keys past their deadline are
 * not saved (the fake's listings never show them either). */
char *fr_rdb_save(fr_server *server, const fr_rdb_options *opts, size_t *len);
/* The same written to path as Redis writes it: a temporary file "temp-PID.rdb" in path's
 * directory, fsync, rename over path, fsync of the directory.  0, or -1 with errno set
 * (ENOMEM when out of memory) and nothing at path changed. */
int fr_rdb_save_file(fr_server *server, const char *path, const fr_rdb_options *opts);

/* ----- Propagation: what an append-only file records ----------------------------------
 * The commands the server would write to its AOF (and send a replica), as Redis 7.0
 * propagates them: a write command as sent, or the deterministic form Redis rewrites it
 * to (SET ... EX 10 as SET ... PXAT <ms>, EXPIRE as PEXPIREAT or DEL, INCRBYFLOAT as SET
 * ... KEEPTTL, XADD * with its id, XREADGROUP as XCLAIMs, BLPOP as LPOP, a script as its
 * commands, a key found expired as DEL ...), several of one command wrapped in MULTI ...
 * EXEC.  The hook gets each, in order, with the database it applies to, when the
 * top-level command that caused it ends (before its reply is read by the caller); it must
 * not call back into the server. */
typedef void fr_propagate_hook(void *ctx, int db, int argc, const char *const *argv,
                               const size_t *argvlen);
/* Sets the hook (NULL: none; nothing is then recorded, at no cost). */
void fr_server_set_propagate_hook(fr_server *server, fr_propagate_hook *hook, void *ctx);

/* ----- Append-only files (docs/fake_redis.md, "Append-only files") ----------------------- */

/* fr_aof_load's flags. */
#define FR_AOF_LOAD_TRUNCATED 1u /* aof-load-truncated yes: a file cut short loads up to its
                                    last whole command */
#define FR_AOF_CHECK_ONLY 2u     /* check it, run nothing */

/* What loading one AOF file did, or why it refused. */
typedef struct fr_aof_report {
    char error[1024];     /* a refusal: the lines redis-server logs for it */
    char log[512];        /* a truncated file loaded anyway: Redis's warning lines */
    int truncated;        /* it was cut short (loaded up to valid_up_to) */
    size_t valid_up_to;   /* bytes of whole commands: where Redis truncates the file */
    long long commands;   /* commands run */
    int rdb_preamble;     /* it started with an RDB file (a base or an old preamble) */
} fr_aof_report;

/* Loads one AOF file's bytes into the server, as loadSingleAppendOnlyFile does: an RDB
 * part first when it starts with "REDIS" (its keys kept even past their deadline), then
 * its commands on a client of their own (nothing expires while they run; nothing is
 * propagated).  The whole file is checked first: a file Redis refuses (a bad format, an
 * unknown command, a cut without FR_AOF_LOAD_TRUNCATED, a bad RDB part) is refused with
 * its lines in report->error and nothing runs.  name is the file's name in those lines
 * ("appendonly.aof" means an old-style single file).  0 when loaded (or empty). */
int fr_aof_load(fr_server *server, const void *data, size_t len, const char *name,
                unsigned flags, fr_aof_report *report);
/* The keyspace and the libraries as the commands that rebuild them (Redis's AOF rewrite
 * with aof-use-rdb-preamble no): heap bytes, *len set; NULL when out of memory. */
char *fr_aof_rewrite(fr_server *server, size_t *len);

/* Changes made since the server was made: one per key a command wrote (expiries and
 * deletions included), the keys a flush removed, one per library change and SWAPDB --
 * Redis's server.dirty, which counts some commands' elements instead (SADD a b c: 3).
 * Never reset: a server keeps its own mark at its last save (rdb_changes_since_last_save,
 * the save points). */
uint64_t fr_server_dirty(const fr_server *server);

/* fr_rdb_load's flags (DEBUG RELOAD's options, rdbLoad's flags). */
#define FR_LOAD_NOFLUSH 1u       /* keep the server's keys and libraries: the file's join
                                    them (a key or library both have refuses the load) */
#define FR_LOAD_MERGE 2u         /* a key or library met again replaces the first */
#define FR_LOAD_KEEP_EXPIRED 4u  /* load keys past their deadline (an AOF preamble) */
#define FR_LOAD_SKIP_CHECKSUM 8u /* do not check the CRC64 (DEBUG
                                    SET-SKIP-CHECKSUM-VALIDATION 1) */

/* What a load did, or why it refused. */
typedef struct fr_load_report {
    char error[1024];       /* a refusal: the lines redis-server logs for it, one per line
                               ("Short read or OOM loading DB. ...", "Internal error in RDB
                               reading offset 0, function at rdb.c:3249 -> Unexpected EOF
                               reading RDB file", "Wrong RDB checksum expected: ...") */
    long long keys_loaded;  /* keys now in the keyspace from the file */
    long long keys_expired; /* keys past their deadline, dropped */
    size_t consumed;        /* bytes read: the checksum's end */
} fr_load_report;

/* Loads the bytes of an RDB file: by default the keyspace and the libraries become the
 * file's (what was there is dropped, WATCHers of its keys touched, the key hook told of a
 * flush, as Redis's emptyData).  Keys past their deadline are dropped.  0, or -1 with
 * report->error (report may be NULL) and nothing changed. */
int fr_rdb_load(fr_server *server, const void *data, size_t len, unsigned flags,
                fr_load_report *report);
/* The same from a file; one that cannot be read is refused with
 * "Fatal error loading the DB: <strerror>. Exiting." (errno set). */
int fr_rdb_load_file(fr_server *server, const char *path, unsigned flags,
                     fr_load_report *report);

/* ----- Testing the out-of-memory paths -----------------------------------------------
 * For tests only (SQLite's fault loops): make the fake's allocations fail (process-wide:
 * the tests that use it run one thread).  From this call on the first-th allocation (1 = the next one) fails, and with
 * persistent != 0 every one after it too, until the next call; first <= 0 stops failing.
 * Every allocation of the fake counts (Lua's included, not those of the C library or of
 * lua-cjson).  Returns the setting it replaces: how many allocations it still had to go
 * before its first failure (>= 1), 0 when it was failing already, -1 when it was off;
 * passing that back as first (1 for 0, persistent as before) resumes it after a pause. */
long fr_debug_fail_allocations(long first, int persistent);
/* How many allocations the hook has failed in this thread, ever. */
unsigned long fr_debug_allocation_failures(void);
/* Bytes of server's emergency reserve in use (0 when it is whole: not short of memory). */
size_t fr_debug_reserve_used(const fr_server *server);

/* ----- Inspection ---------------------------------------------------------------- */

/* A canonical text dump of every non-empty database: every live key in byte order with
 * its type, TTL and value (see docs/fake_redis.md for the format).  Two servers with the
 * same keyspace give the same text.  Heap memory (free() it); *len gets the length
 * (len may be NULL).  NULL when out of memory. */
char *fr_dump(fr_server *server, size_t *len);

/* One message that PUBLISH sent (whether or not anybody was subscribed). */
typedef struct fr_message {
    const char *channel;
    size_t channel_len;
    const char *payload;
    size_t payload_len;
    int64_t at_ms;        /* the clock when it was published */
} fr_message;

/* The log of the messages PUBLISH sent, in order, since the server started or the log
 * was last cleared; keyspace notifications are logged too, as they are published the
 * same way (SPUBLISH's messages are not).
 *
 * The log is bounded: it keeps at most max_messages messages holding at most max_bytes
 * bytes of channel and payload (defaults FR_PUBLISHED_DEFAULT_MAX and
 * FR_PUBLISHED_DEFAULT_MAX_BYTES).  A new message that does not fit drops the oldest
 * until it does; one larger than max_bytes by itself is not kept.  Each message not kept
 * is counted (fr_published_dropped), so a reader knows the log is not whole.
 *
 * fr_published_count is the messages kept; fr_published(i) the i-th of them, oldest
 * first (NULL past the end), valid until the next command that publishes or the next
 * clear.  fr_published_clear empties the log and zeroes the dropped count. */
#define FR_PUBLISHED_DEFAULT_MAX 10000                  /* messages */
#define FR_PUBLISHED_DEFAULT_MAX_BYTES (16u << 20)      /* 16 MiB */
size_t fr_published_count(const fr_server *server);
const fr_message *fr_published(const fr_server *server, size_t index);
void fr_published_clear(fr_server *server);
/* Messages not kept (dropped as the oldest, or too large) since the last clear. */
uint64_t fr_published_dropped(const fr_server *server);
/* Sets the bounds (0 messages or 0 bytes: keep nothing, count everything as dropped);
 * messages over the new bounds are dropped at once, oldest first. */
void fr_published_set_limit(fr_server *server, size_t max_messages, size_t max_bytes);
/* The bounds in force, and the bytes the kept messages hold. */
void fr_published_limit(const fr_server *server, size_t *max_messages, size_t *max_bytes,
                        size_t *bytes);

/* ----- Keyspace notifications ------------------------------------------------------
 * Redis 7.0's notify-keyspace-events: set the classes with
 * fr_server_set_param(srv, "notify-keyspace-events", "KEA") (CONFIG SET's letters; ""
 * turns them off, the default).  Every command that notifies in redis-server 7.0.15
 * notifies here, with the same events, keys and order; a notification is published as
 * PUBLISH would publish it (subscribers, pattern subscribers, the fr_published log): on
 * "__keyspace@<db>__:<key>" with the event as payload when K is set, and on
 * "__keyevent@<db>__:<event>" with the key as payload when E is set. */

/* The classes, Redis's NOTIFY_* values: the letters K E g $ l s h z x e t m d n. */
#define FR_NOTIFY_KEYSPACE (1u << 0)  /* K: publish on __keyspace@<db>__:<key> */
#define FR_NOTIFY_KEYEVENT (1u << 1)  /* E: publish on __keyevent@<db>__:<event> */
#define FR_NOTIFY_GENERIC (1u << 2)   /* g: del, expire, rename_from, copy_to, ... */
#define FR_NOTIFY_STRING (1u << 3)    /* $ */
#define FR_NOTIFY_LIST (1u << 4)      /* l */
#define FR_NOTIFY_SET (1u << 5)       /* s */
#define FR_NOTIFY_HASH (1u << 6)      /* h */
#define FR_NOTIFY_ZSET (1u << 7)      /* z */
#define FR_NOTIFY_EXPIRED (1u << 8)   /* x: a key deleted because its TTL passed */
#define FR_NOTIFY_EVICTED (1u << 9)   /* e: a key evicted under maxmemory */
#define FR_NOTIFY_STREAM (1u << 10)   /* t */
#define FR_NOTIFY_KEY_MISS (1u << 11) /* m: a read found no key ("keymiss"), not in A */
#define FR_NOTIFY_MODULE (1u << 13)   /* d: accepted, never sent (no modules) */
#define FR_NOTIFY_NEW (1u << 14)      /* n: a key was created ("new"), not in A */
/* A: g$lshzxetd */
#define FR_NOTIFY_ALL                                                                     \
    (FR_NOTIFY_GENERIC | FR_NOTIFY_STRING | FR_NOTIFY_LIST | FR_NOTIFY_SET | FR_NOTIFY_HASH | \
     FR_NOTIFY_ZSET | FR_NOTIFY_EXPIRED | FR_NOTIFY_EVICTED | FR_NOTIFY_STREAM |           \
     FR_NOTIFY_MODULE)

/* Redis's keyspaceEventsStringToFlags: the classes of a CONFIG SET value, or -1 when it
 * holds a character that is not a class letter. */
int fr_notify_flags_parse(const char *classes);
/* Redis's keyspaceEventsFlagsToString: the text CONFIG GET shows for flags (classes in
 * the order g$lshzxetdn, or A for all of A's, then K E m; "n" is not shown next to A,
 * as 7.0.15 does not).  Writes at most cap bytes with the NUL; returns the length. */
size_t fr_notify_flags_string(unsigned flags, char *buf, size_t cap);
/* The classes in force. */
unsigned fr_server_notify_flags(const fr_server *server);

/* Called for every notification whose class is enabled (the config decides, as it does
 * for the pub/sub messages; K and E only choose the channels, so with "g$" and neither K
 * nor E the hook still sees generic and string events while nothing is published).  It
 * runs while the command runs, before the messages are published: it must not call back
 * into the server.  type is the event's class (one FR_NOTIFY_* bit), event its name
 * ("set", "expired", ...), key its bytes (not NUL-terminated), db its database. */
typedef void fr_keyspace_hook(void *userdata, unsigned type, const char *event,
                              const char *key, size_t key_len, int db);
/* Installs the hook (NULL removes it). */
void fr_server_set_keyspace_hook(fr_server *server, fr_keyspace_hook *hook, void *userdata);

/* Redis's active expiry, all of it at once: deletes every key of every database whose
 * TTL has passed, notifying "expired" for each (databases in order, keys in the order
 * they were added).  Listings never show expired keys anyway, so only the notifications
 * (and memory) tell whether it ran; fakeredis-server runs it every 100 ms while the x
 * class is enabled.  Returns how many keys it deleted. */
size_t fr_server_active_expire(fr_server *server);
/* Whether the embedder runs an active expiry (on, the default) or not (DEBUG
 * SET-ACTIVE-EXPIRE 0).  The fake's counts assume that the active expiry has just run:
 * DBSIZE and fr_db_counts leave expired keys out.  Off, they count every key nothing has
 * deleted yet, expired or not, as Redis's dictSize does when no cycle removes them. */
void fr_server_set_active_expiry(fr_server *server, int on);
/* Keys evicted under maxmemory so far (INFO's evicted_keys): the fake evicts before a
 * command while maxmemory is set with an evicting maxmemory-policy and the OOM hook
 * (fr_server_set_oom_hook) says the limit is passed (fake_redis/src/evict.c). */
unsigned long long fr_server_evicted_keys(const fr_server *server);
/* 1 while that eviction runs: before the command, not inside it (Redis's processCommand,
 * before call()), so a key hook may treat what it sees as no command's doing (client-side
 * caching sends the invalidation at once, before the command's reply). */
int fr_server_evicting(const fr_server *server);
/* The same eviction now, outside the fake's commands (Redis runs it when CONFIG SET
 * maxmemory lowers the limit, inside that command: fr_server_evicting stays 0, so an
 * invalidation owed to the client running it follows its reply): how many keys went. */
size_t fr_server_evict(fr_server *server);
/* The earliest expiry time (Unix ms, the server's clock) of any key with a TTL, in any
 * database, or -1 when no key has one (a key lives through that millisecond: it is gone
 * once the clock is past it).  For a server that moves a virtual clock by itself
 * (fakeredis-server --clock auto) to the next moment the active expiry would delete
 * something.  A walk over every key. */
int64_t fr_server_next_expiry(const fr_server *server);

/* ----- CLIENT PAUSE ----------------------------------------------------------------------
 * Redis's client pause (networking.c's pauseClients), as the fake's state: the embedder (a
 * server) holds the commands a pause holds, and asks the fake which those are.  While a
 * pause is in force the keyspace stays as it is: an expired key reads as missing but is
 * not deleted (no "expired" event, no expired_keys), fr_server_active_expire deletes
 * nothing.  The pause ends when CLIENT UNPAUSE (fr_server_unpause) says so, or once the
 * fake's clock is past its end. */
typedef enum fr_pause {
    FR_PAUSE_OFF = 0,   /* no pause */
    FR_PAUSE_WRITE = 1, /* commands that may replicate are held (CLIENT PAUSE ... WRITE) */
    FR_PAUSE_ALL = 2,   /* every command is held (CLIENT PAUSE ... [ALL]) */
} fr_pause;

/* Pauses until end_ms (Unix ms on the fake's clock).  A pause already in force keeps the
 * more restrictive type and the later end, as Redis's pauseClients does. */
void fr_server_pause(fr_server *server, fr_pause type, int64_t end_ms);
/* Ends the pause (CLIENT UNPAUSE); no-op without one. */
void fr_server_unpause(fr_server *server);
/* The pause in force now (ended first if the clock has passed its end: Redis's
 * checkClientPauseTimeoutAndReturnIfPaused); *end_ms, when not NULL, gets its end. */
fr_pause fr_server_paused(fr_server *server, int64_t *end_ms);
/* Whether the pause in force holds c's command argv (Redis's processCommand check):
 * 0 when nothing is paused, for an unknown command or a wrong arity (answered at once, as
 * in Redis), 1 under FR_PAUSE_ALL, and under FR_PAUSE_WRITE when the command may
 * replicate -- a write, PUBLISH, SPUBLISH, PFCOUNT, EVAL/EVALSHA/FCALL unless their script
 * declares no-writes (a script with a shebang but no no-writes flag counts as a write),
 * EXEC when its queue holds such a command (judged when queued).  Runs nothing.  The other
 * checks Redis makes before this one (authentication, ACLs, OOM...) are the embedder's:
 * fakeredis-server answers NOAUTH first. */
int fr_client_pause_holds(fr_client *c, int argc, const char *const *argv,
                          const size_t *argvlen);
/* Keys deleted because their deadline passed (INFO's expired_keys); fr_stats_reset
 * zeroes it. */
uint64_t fr_server_expired_keys(const fr_server *server);

/* ----- Streams (inspection for tests) -------------------------------------------------
 * These read the fake's state directly, without running a command: no lazy expiry, no
 * seen-time refresh, nothing changes.  db is 0..15. */

/* One entry of a stream: its id and its field/value pairs. */
typedef struct fr_stream_entry {
    uint64_t id_ms, id_seq;    /* the entry id */
    size_t nfields;            /* field/value pairs */
    const char *const *fv;     /* fv[2*i] is field i, fv[2*i+1] its value; NUL-terminated */
    const size_t *fv_len;      /* their byte lengths (binary safe), same indexes */
} fr_stream_entry;

/* A stream's bookkeeping, as XINFO STREAM reports it. */
typedef struct fr_stream_meta {
    uint64_t length;                          /* live entries (XLEN) */
    uint64_t last_id_ms, last_id_seq;         /* last-generated-id */
    uint64_t first_id_ms, first_id_seq;       /* recorded-first-entry-id (0-0 when empty) */
    uint64_t max_deleted_ms, max_deleted_seq; /* max-deleted-entry-id */
    uint64_t entries_added;                   /* entries-added */
    size_t groups;                            /* consumer groups */
    size_t nodes;                             /* radix-tree-keys: Redis's node count */
} fr_stream_meta;

/* The live entries of the stream at key, in id order: 0 with *out (one heap block holding
 * every string too: free() it; NULL when *n is 0) and *n; -1 when the key is missing,
 * expired or not a stream; -2 when out of memory. */
int fr_stream_entries(fr_server *server, int db, const char *key, size_t key_len,
                      fr_stream_entry **out, size_t *n);
/* The stream's bookkeeping into *out: 0, or -1 as for fr_stream_entries. */
int fr_stream_meta_get(fr_server *server, int db, const char *key, size_t key_len,
                       fr_stream_meta *out);

/* One pending entry of a consumer group (what XPENDING's extended form reports). */
typedef struct fr_pending {
    uint64_t id_ms, id_seq;   /* the entry id */
    const char *consumer;     /* the consumer it was delivered to; NUL-terminated copy */
    size_t consumer_len;      /* bytes in consumer (binary safe) */
    int64_t idle_ms;          /* ms since the last delivery on the server's clock (>= 0) */
    uint64_t delivery_count;  /* times delivered */
} fr_pending;

/* The pending entries of consumer group `group` of the stream at `key`, in id order, or
 * only those of one consumer when consumer is not NULL.  Returns 0 with *out (one heap
 * block holding the names too: free() it; NULL when *n is 0) and *n; -1 when the key is
 * missing, expired or not a stream, or the group (or the given consumer) does not exist;
 * -2 when out of memory. */
int fr_stream_pending(fr_server *server, int db, const char *key, size_t key_len,
                      const char *group, size_t group_len, const char *consumer,
                      size_t consumer_len, fr_pending **out, size_t *n);

/* A consumer's state (what XINFO CONSUMERS reports). */
typedef struct fr_consumer_state {
    size_t pending;           /* entries in its PEL */
    int64_t idle_ms;          /* ms since it was last seen (>= 0) */
} fr_consumer_state;

/* 0 and *out filled, or -1 when the stream, group or consumer does not exist. */
int fr_stream_consumer(fr_server *server, int db, const char *key, size_t key_len,
                       const char *group, size_t group_len, const char *consumer,
                       size_t consumer_len, fr_consumer_state *out);

/* ----- Fault hooks ------------------------------------------------------------------ */

/* Faults replace a command's execution with an error reply.  A command is "executed"
 * when it would run: at once outside MULTI, or when EXEC runs it; queueing one inside
 * MULTI does not count (so a faulted command inside MULTI comes back as a run-time error
 * in EXEC's array, and the rest of the transaction runs).  Counting starts at the call.
 * error is the error text without the leading '-', e.g. "ERR injected" or
 * "READONLY You can't write against a read only replica.".  A faulted command changes
 * nothing.  Returns 0, or -1 on a bad argument or out of memory. */

/* The n-th command executed from now on (n >= 1) answers error. */
int fr_fault_nth(fr_server *server, uint64_t n, const char *error);
/* Every command named name (case-insensitive, e.g. "XACK") answers error, for the next
 * times executions of it (times < 0: for ever). */
int fr_fault_command(fr_server *server, const char *name, const char *error, int times);
/* Removes every fault. */
void fr_fault_clear(fr_server *server);
/* How many faults have fired since the server started. */
uint64_t fr_fault_fired(const fr_server *server);

/* ----- Statistics: INFO commandstats, errorstats, latencystats ---------------------- */

/* The server counts as redis-server 7.0.15 counts (docs/fake_redis.md, "Statistics"):
 * every error reply (total_error_replies, and per prefix: the error's first word), and per
 * command row ("set", "config|get") its calls, the microseconds they took, the calls
 * refused before running (rejected_calls: wrong arity, CROSSSLOT, a command not allowed
 * inside MULTI or in subscribed mode) and those that ran and answered an error
 * (failed_calls), with a latency histogram.  Durations come from the clock given to
 * fr_stats_set_clock; without one they are all 0 (the in-process default: deterministic). */

/* One command row's counters. */
typedef struct fr_command_stats {
    const char *name;         /* full lower-case name, "config|get" */
    uint64_t calls;           /* ran (a blocked call counts when it blocks) */
    uint64_t usec;            /* microseconds spent, by the clock of fr_stats_set_clock */
    uint64_t rejected_calls;  /* refused before running */
    uint64_t failed_calls;    /* ran and answered an error */
    int has_latency;          /* it has latency samples (fr_stats_latency_at answers) */
} fr_command_stats;

/* Rows i = 0 .. fr_stats_command_rows() - 1: the fake's table (containers and
 * subcommands included), then the names the embedder recorded.  0 with *out filled (zero
 * counters included), -1 past the end. */
size_t fr_stats_command_rows(const fr_server *server);
int fr_stats_command_at(const fr_server *server, size_t i, fr_command_stats *out);
/* The counters of one full name; -1 (and zeros) when no row has that name. */
int fr_stats_command(fr_server *server, const char *name, fr_command_stats *out);
/* Row i's latency at percentile (0..100), in microseconds as Redis's hdr_histogram gives
 * it (the highest value of the sample's bucket, 2 significant digits); -1 when the row has
 * no sample. */
int fr_stats_latency_at(const fr_server *server, size_t i, double percentile, double *usec);

/* Row i's latency histogram as LATENCY HISTOGRAM reports it (Redis's fillCommandCDF: the
 * hdr log iteration from 1024 ns, doubling): *calls samples, and *n pairs of a bucket's
 * highest value in microseconds and the samples counted up to it.  -1 with no sample. */
int fr_stats_latency_cdf(const fr_server *server, size_t i, uint64_t *calls, int64_t *usec,
                         uint64_t *cum, size_t max, size_t *n);

/* total_error_replies, and the distinct error prefixes in byte order (Redis's order):
 * 0 with the prefix (not NUL-terminated), its length and its count, -1 past the end. */
uint64_t fr_stats_total_error_replies(const fr_server *server);
size_t fr_stats_error_count(const fr_server *server);
int fr_stats_error_at(const fr_server *server, size_t i, const char **prefix, size_t *len,
                      uint64_t *count);

/* For a server answering commands of its own in front of the fake: an error reply it
 * wrote (err without the leading '-'), a call of its command name (failed when it
 * answered an error), a command it refused before running it (NOAUTH ...).  A name of
 * the fake's table counts on that row. */
void fr_stats_record_error(fr_server *server, const char *err, size_t len);
void fr_stats_record_call(fr_server *server, const char *name, uint64_t usec, int failed);
void fr_stats_record_rejected(fr_server *server, const char *name);

/* CONFIG RESETSTAT: every counter, histogram and error prefix back to nothing. */
void fr_stats_reset(fr_server *server);
/* latency-tracking yes|no: whether calls add latency samples (default yes). */
void fr_stats_set_latency_tracking(fr_server *server, int on);
/* The clock durations are measured with (microseconds, any origin), or NULL for none. */
void fr_stats_set_clock(fr_server *server, uint64_t (*now_us)(void *arg), void *arg);

/* ----- The command table -------------------------------------------------------- */

/* One row of the fake's command table, for documentation and tooling. */
typedef struct fr_command_info {
    const char *name;     /* lower case, e.g. "set", or "xgroup|create" */
    int arity;            /* as Redis: n = exactly n arguments, -n = at least n */
    const char *group;    /* "string", "bitmap", "list", "hash", "set", ... */
    const char *flags;    /* space separated: write readonly fast noscript ... */
    int first_key, last_key, key_step; /* Redis's legacy key spec (COMMAND INFO's 4th-6th
                                          fields): 0 0 0 for none; last -1 = the last
                                          argument */
    int movable_keys;     /* 1 when the keys are found by a procedure (numkeys, ...) */
} fr_command_info;

/* The number of rows, and row i (0 <= i < count), in the table's order; NULL past the
 * end.  Rows and their strings are static: they stay valid for the life of the process. */
size_t fr_command_count(void);
const fr_command_info *fr_command_at(size_t i);

/* ----- COMMAND metadata and ACL users --------------------------------------------------- */

/* Declares a command the embedder answers itself (fakeredis-server's HELLO, CLIENT LIST,
 * CONFIG GET ...): COMMAND, COUNT, LIST, INFO and DOCS then show it with Redis 7.0.15's
 * metadata.  name is Redis's full name ("hello", "client|list"); 0, or -1 when Redis
 * 7.0.15 has no such command. */
int fr_server_declare_command(fr_server *server, const char *name);
/* Declares a command of the embedder's that Redis does not have (fakeredis-server's
 * FAKE.*; a subcommand as "fake.time|get"): COMMAND INFO and DOCS describe it when named
 * (arity, summary), COMMAND, COUNT and LIST leave it out so they show Redis's set.
 * 0, or -1 for a name Redis has or that is already declared. */
int fr_server_declare_extension(fr_server *server, const char *name, int arity,
                                const char *summary);
/* AUTH [user] password as Redis checks it: 0 and the client is that user from now on,
 * or -1 (unknown user, wrong password, user off), logged in the ACL log as an "auth"
 * entry whose object is verb (the command's name as typed: "AUTH", "hello"; NULL:
 * "AUTH").  user NULL means "default". */
int fr_client_auth(fr_client *client, const char *verb, size_t vlen, const char *user,
                   size_t ulen, const char *pass, size_t plen);
/* The ACL check Redis makes before a command runs, for an embedder's own commands
 * (fakeredis-server's CLIENT, CONFIG ...; the fake checks its own): 0 when client's user
 * may run argv; else -1, the refusal is in the ACL log and err (cap bytes) holds the
 * NOPERM error text without its '-'. */
int fr_client_acl_check(fr_client *client, int argc, const char *const *argv,
                        const size_t *argvlen, char *err, size_t cap);
/* Whether an ACL user of that name exists ("default" always does). */
int fr_server_has_user(fr_server *server, const char *name, size_t len);
/* Whether the fake wants client's connection closed: its ACL user was deleted (ACL
 * DELUSER closes the connections authenticated as it) or it ran QUIT. */
int fr_client_closing(const fr_client *client);
/* Whether the default user takes any password (nopass: AUTH <password> is refused). */
int fr_server_default_nopass(fr_server *server);
/* The name of the user client is authenticated as ("default" until AUTH). */
const char *fr_client_user(fr_client *client, size_t *len);
/* Redis's requirepass: sets the default user's only password, len bytes, binary safe
 * (NULL or 0 bytes: nopass). */
int fr_server_set_requirepass(fr_server *server, const char *pass, size_t len);
/* Whether a new connection must authenticate first (Redis's authRequired): the default
 * user has a password or is off. */
int fr_server_auth_required(fr_server *server);

/* Live keys of database db (0..15) and how many of them have a TTL, at the server's clock
 * (every key not deleted yet when the active expiry is off), without expiring anything or counting a command (INFO keyspace).  0, or -1 for a bad db.
 * keys and expires may be NULL. */
int fr_db_counts(const fr_server *server, int db, size_t *keys, size_t *expires);
/* Marks client's transaction as failed, as Redis's flagTransaction does when it refuses a
 * command at queue time: EXEC will answer EXECABORT.  No-op outside MULTI.  For a server
 * that refuses commands of its own inside MULTI. */
void fr_client_flag_transaction(fr_client *client);

/* The hash slot Redis Cluster gives key (CRC16 of the key, or of its non-empty {hash
 * tag}), 0..16383. */
unsigned fr_key_slot(const char *key, size_t len);
/* The argument positions of the keys of a command (argv[0] its name; argvlen may be NULL),
 * as the command table of server says (subcommands and numkeys included): how many were
 * stored in keys[0..max), or -1 for a command the fake does not know or a wrong number of
 * arguments (Redis would refuse it before looking at keys). */
int fr_command_keys(const fr_server *server, int argc, const char *const *argv,
                    const size_t *argvlen, int *keys, int max);

#ifdef __cplusplus
}
#endif

#endif /* FAKEREDIS_H */
