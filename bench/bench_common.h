/* bench_common.h -- what the fake-against-redis-server benchmarks share.
 *
 * A benchmark builds its commands up front into a bench_cmds list (so generating them is
 * never timed), runs a list on the fake through fr_exec or fr_exec_resp, and on a real
 * redis-server through hiredis, fully pipelined in batches; it can first run a list on
 * both in lockstep and compare every reply.  The server is started for the run with the
 * test harness (tests/support/redis_harness.h) and spoken to on its unix socket.
 *
 * Everything here is for benchmark programs: failures that leave nothing to measure (a lost
 * connection) print "<bench_name>: ..." and exit with status 2; out of memory aborts
 * (wsi_alloc.h).
 */
#ifndef BENCH_COMMON_H
#define BENCH_COMMON_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include <hiredis/hiredis.h>

#include "fakeredis.h"
#include "wsi_alloc.h"
#include "redis_harness.h"

/* The program's name, prefixed to every message; main sets it first. */
extern const char *bench_name;

/* Memory comes from common/'s family (wsi_alloc.h): out of memory aborts with "wsim: out
 * of memory in bench". */

/* Parses option opt's value s as an unsigned decimal in [min, max]; prints why and exits
 * with status 2 when it is missing, malformed or out of range. */
unsigned long long bench_parse_num(const char *opt, const char *s, unsigned long long min,
                                   unsigned long long max);

/* ----- Options ------------------------------------------------------------------------ */

/* What an option sets. */
typedef enum bench_opt_kind {
    BENCH_OPT_SIZE,  /* a number in [min, max] into a size_t */
    BENCH_OPT_INT,   /* a number in [min, max] into an int */
    BENCH_OPT_UINT,  /* a number in [min, max] into an unsigned */
    BENCH_OPT_U64,   /* a number in [min, max] into a uint64_t */
    BENCH_OPT_OFF,   /* no value: sets an int to 0 (--fake-only, --no-verify ...) */
    BENCH_OPT_ON,    /* no value: sets an int to 1 */
    BENCH_OPT_FN,    /* a value the program reads itself: fn(dst, value) */
} bench_opt_kind;

/* One row of a program's option table. */
typedef struct bench_opt {
    const char *short_name;             /* "-n", or NULL when there is none */
    const char *long_name;              /* "--ops" */
    bench_opt_kind kind;                /* what it sets */
    void *dst;                          /* where: a field of the program's options */
    unsigned long long min, max;        /* numbers: the accepted range */
    void (*fn)(void *dst, const char *value); /* BENCH_OPT_FN: reads the value */
} bench_opt;

/* Reads the command line argv[1..argc) against the table opts[0..n): a number option
 * takes the next argument and exits through bench_parse_num when it is missing or out of
 * range; -h or --help prints usage(stdout) and exits 0; an unknown option, or an
 * BENCH_OPT_FN option with no value after it, prints usage(stderr) and exits 2. */
void bench_parse_options(int argc, char **argv, const bench_opt *opts, size_t n,
                         void (*usage)(FILE *f));

/* ----- Command lists ------------------------------------------------------------------ */

/* Commands stored flat: command i has argc[i] arguments starting at argv[first[i]].
 * Zero-initialise, add commands with bench_cmd_begin + bench_cmd_arg (or bench_cmd_line),
 * then call bench_cmds_finish before reading argv: the arguments' text moves while the
 * list grows, so until then only their offsets are kept. */
typedef struct bench_cmds {
    size_t n;           /* commands */
    int *argc;          /* per command: its arguments */
    size_t *first;      /* per command: the index of its first argument */
    const char **argv;  /* every argument, NUL-terminated, into text (after finish) */
    size_t *argvlen;    /* every argument's length */
    size_t nargs;       /* arguments in all */
    char *text;         /* the arguments' bytes */
    size_t cap_cmds;    /* allocated slots in argc and first */
    size_t cap_args;    /* allocated slots in argvlen and offs */
    size_t text_len;    /* bytes used in text */
    size_t text_cap;    /* bytes allocated for text */
    size_t *offs;       /* per argument: its offset into text, until finish */
} bench_cmds;

/* Starts a new, empty command at the end of the list. */
void bench_cmd_begin(bench_cmds *l);
/* Appends one printf-formatted argument (at most 127 bytes) to the last command. */
void bench_cmd_arg(bench_cmds *l, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Appends one whole command: the printf-formatted line split at single spaces (so no
 * argument may contain a space or be empty), e.g. bench_cmd_line(l, "XACK %s g %s", k, id). */
void bench_cmd_line(bench_cmds *l, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Makes argv valid.  Adding commands afterwards needs another finish. */
void bench_cmds_finish(bench_cmds *l);
/* Releases the list and zeroes it. */
void bench_cmds_free(bench_cmds *l);
/* Prints command i as redis-cli would show it (the arguments hold no spaces). */
void bench_cmd_print(FILE *f, const bench_cmds *l, size_t i);

/* ----- Timing ------------------------------------------------------------------------ */

/* CLOCK_MONOTONIC, in seconds. */
double bench_now(void);
/* The median of v[0..n), n >= 1 (sorts v). */
double bench_median(double *v, int n);

/* ----- Running a list ------------------------------------------------------------------ */

/* Runs the whole list on client c through fr_exec (raw == 0) or fr_exec_resp (raw != 0)
 * and returns the seconds it took; *sink accumulates something from every reply so the
 * work cannot be optimised away. */
double bench_fake_run(fr_client *c, const bench_cmds *l, int raw, uint64_t *sink);

/* A redis-server started for the run, and one hiredis connection to its unix socket. */
typedef struct bench_real {
    rh_server *rs;       /* the server (the harness stops it) */
    redisContext *ctx;   /* the connection */
    char version[64];    /* its redis_version, from INFO server */
} bench_real;

/* Starts a quiet standalone server and connects; 0, or -1 after printing why (nothing is
 * left running then). */
int bench_real_start(bench_real *r);
/* bench_real_start for a program's main, saying what happened on stdout: "real:
 * redis-server VERSION on a unix socket, pipelined in batches of BATCH (hiredis)", or
 * "... in a temporary directory" when batch is 0 (the program does not pipeline).  On
 * failure it prints "<bench_name>: cannot start redis-server" on stderr, with a pointer to
 * --fake-only when the program has that option, and returns -1. */
int bench_real_announce(bench_real *r, int has_fake_only, size_t batch);
/* Closes the connection and stops the server; a zeroed bench_real is accepted. */
void bench_real_stop(bench_real *r);
/* Sends one fixed command synchronously and discards its reply; exits on a lost
 * connection. */
void bench_real_simple(redisContext *ctx, const char *cmd);
/* Runs the whole list pipelined: batch commands appended with redisAppendCommandArgv,
 * then one redisGetReply per command, batch after batch.  Returns the seconds it took,
 * replies read and freed included; *errors (when not NULL) gets how many were error
 * replies. */
double bench_real_run(redisContext *ctx, const bench_cmds *l, size_t batch, size_t *errors);

/* ----- Comparing replies --------------------------------------------------------------- */

/* Is the fake's reply the same as hiredis' parse of the real one, as far as RESP2 through
 * hiredis can tell ($-1 and *-1 both parse as nil)? */
int bench_same_reply(const fr_reply *fake, const redisReply *real);
/* Print a reply on one line, RESP-like (+status, -error, :int, "bulk", [a, b], (nil)). */
void bench_show_fake(FILE *f, const fr_reply *r);
void bench_show_real(FILE *f, const redisReply *r);

/* Decides whether command i's replies agree: 1 they do, 0 they differ, -1 they are wrong
 * in a way the function has reported itself (counted, not printed again).  arg is the
 * caller's. */
typedef int (*bench_same_fn)(size_t i, const fr_reply *fake, const redisReply *real,
                             void *arg);

/* Runs the first n commands of the list on the fake client and on the server in lockstep
 * (the server pipelined per batch) and compares each pair of replies with same, or with
 * bench_same_reply when same is NULL.  Prints the first few mismatches on stderr, each
 * with its command and both replies (clipped); returns how many commands answered
 * differently or were rejected. */
size_t bench_verify(fr_client *c, redisContext *ctx, const bench_cmds *l, size_t n,
                    size_t batch, bench_same_fn same, void *arg);

#endif /* BENCH_COMMON_H */
