/* wsc_int.h -- the parsed form of a scenario, shared by parse.c and run.c.
 * Everything the runner reads has been validated by the parser: a scenario that parsed
 * runs without syntax surprises. */
#ifndef WSC_INT_H
#define WSC_INT_H

#include <stddef.h>
#include <stdint.h>

#include "wsc.h"

/* One token of a line: its bytes (NUL-terminated copy), its column, and whether it was
 * quoted (a quoted "?" is a literal, a bare ? a wildcard). */
typedef struct wsc_tok {
    char *s;
    size_t len;
    int col;
    int quoted;
} wsc_tok;

typedef enum wsc_kind {
    K_SETUP = 1,   /* setup <command>                              admin command */
    K_SUBSCRIBE,   /* subscribe <name> <form> <key> [options]     a subscription */
    K_PRODUCE,     /* produce <sub> <payload> [header n v]... [as alias] */
    K_READ,        /* read <sub> [expect aliases|nothing|report] */
    K_QUEUE,       /* <alias>: queue <command> */
    K_POOL,        /* [<alias>:] pool <command> [=> reply] */
    K_PUBLISH,     /* <alias>: publish <form> <key> <payload> [header n v]... */
    K_REPLY,       /* <alias>: reply <payload> */
    K_BIND,        /* <alias>: bind <form> <key> */
    K_SETTLE,      /* <alias>: ack|drop|retry|retry-after <ms>|abandon */
    K_ADVANCE,     /* advance <ms> */
    K_CRASH,       /* crash */
    K_RESTART,     /* restart */
    K_SHUTDOWN,    /* shutdown (graceful: windows drained, then the process ends) */
    K_STOP,        /* stop <sub> */
    K_FAULT,       /* fault <conn> <kind> <where> [error <text>], or on a consumer process
                      (proc_fault): fault <consumer> crash-before|crash-after <where> */
    K_CONSUMER,    /* consumer <name> [env NAME=VALUE]... [dir DIR] run <command>... */
    K_START,       /* start <consumer>: a fresh process (group) */
    K_STOP_PROC,   /* stop <consumer> [within <duration>]: SIGTERM, then its exit */
    K_KILL,        /* kill <consumer>: SIGKILL */
    K_WAIT,        /* wait <consumer> settled [within <duration>] */
    K_CHECK,       /* check <command> => <reply> */
    K_EXPECT_FLUSH,     /* expect flush <n> of <sub> + indented lines */
    K_EXPECT_READ,      /* expect read <n> of <sub> + indented lines (sweeps included) */
    K_EXPECT_RTS,       /* expect round-trips <n> [total|reads|flushes|pool] */
    K_EXPECT_FLUSHES,   /* expect flushes <n> [of <sub>] */
    K_EXPECT_REPORTS,   /* expect reports <n> */
    K_EXPECT_REPORT,    /* expect report <sub> [commands n] [settles n] [failed n] [error t] */
    K_EXPECT_PENDING,   /* expect pending <sub> <alias>...|none, or + indented entry lines */
    K_EXPECT_DELAYED,   /* expect delayed <sub> <alias>...|none, or + indented entry lines */
    K_EXPECT_INVARIANTS,/* expect invariants */
    K_EXPECT_VIOLATION, /* expect violation <one of WSC_INVARIANTS> <alias> */
    K_EXPECT_WARNING,   /* expect warning <text> */
    K_EXPECT_PUBLISHED, /* expect published <channel> <payload>...|none */
    K_EXPECT_DELIVERY,  /* expect delivery <alias> count <n> | retries <n> */
    K_EXPECT_NOTHING,   /* expect nothing: the scenario checks nothing, on purpose */
    K_EXPECT_SKIPPED,   /* expect skipped <n>: channel messages reads skipped */
} wsc_kind;

/* Boundary lines of an `expect flush` / `expect read` block. */
enum {
    WSC_SEP_ROUND_TRIP = 1, /* "--": the next commands start the next round trip */
    WSC_SEP_PIPELINE,       /* "..": the next commands start the next pipeline (flush only) */
};

/* One line of an `expect flush` block: an optional origin alias and the command's tokens,
 * or a boundary (WSC_SEP_*). */
typedef struct wsc_fline {
    int line;
    int separator;   /* 0, or the boundary this line marks (WSC_SEP_*) */
    char *from;      /* "alias>" prefix: the command came from that entry's delivery */
    int from_col;    /* its column */
    wsc_tok *t;
    size_t nt;
} wsc_fline;

/* One line of an `expect pending` or `expect delayed` block: an entry, and what is checked
 * of it (the fields written; the others are -1 / NULL). */
typedef struct wsc_eline {
    int line;
    wsc_tok item;         /* an alias, $alias or an id written out */
    char *consumer;       /* pending: the consumer holding it */
    long long deliveries; /* pending: its delivery count (XPENDING's) */
    long long retries;    /* delayed: the scheduled copy's retry counter */
    long long due_in;     /* delayed: ms from the clock's now to its due time */
    int opt_col;          /* the column of its first field (0: none written) */
} wsc_eline;

typedef struct wsc_stmt {
    wsc_kind kind;
    int line, col;
    char *src;          /* the statement's line as written (messages) */
    char *alias;        /* <alias>: prefix, or produce's `as`, or the subject alias */
    int alias_col;      /* its column (messages) */
    char *sub;          /* the subscription name the statement names */
    int sub_col;        /* its column (messages) */
    wsc_tok *cmd;       /* a command's tokens (setup, queue, pool, check) */
    size_t ncmd;
    wsc_tok *expect;    /* => tokens (pool, check), read's aliases, pending's aliases */
    size_t nexpect;
    int has_expect;     /* an expectation was written */
    int refused;        /* "=> refused [text]": the step must be refused */
    char *refused_text; /* the text the refusal must contain, or NULL */
    /* K_SUBSCRIBE */
    ws_sub_config cfg;
    int mode_given;     /* `mode` was written (else a reclaim subscription inherits it) */
    char *s_key, *s_group, *s_consumer, *s_dq, *s_processing, *s_recovery, *s_reply;
    char *s_dead_letter, *s_group_start;
    /* K_PRODUCE, K_PUBLISH, K_REPLY */
    char *payload;
    size_t payload_len;
    ws_header *headers;
    size_t nheaders;
    int raw;                   /* produce ... raw: the bare payload, not a frame */
    int form;           /* K_PRODUCE/K_PUBLISH/K_BIND: the output's form */
    char *key;          /* K_PUBLISH/K_BIND: the output's key */
    /* K_SETTLE */
    ws_outcome outcome;
    /* numbers: advance ms, retry-after ms, flush n, counts */
    long long n;
    long long n2, n3, n4; /* report: commands, settles, failed (-1: not checked) */
    int which;          /* round-trips: 0 total, 1 reads, 2 flushes, 3 pool */
    char *text;         /* report error, warning text, violation kind */
    int read_nothing, read_report; /* read ... expect nothing | report */
    /* K_FAULT */
    char *conn;         /* reader, window, subscriber; or a consumer's name (proc_fault) */
    ws_fault fault;     /* (on a consumer: kind, nth and command -- the nth command of any
                           name when fault_name is NULL) */
    char *fault_name, *fault_error;
    int proc_fault;     /* the fault is on a consumer process, held at the server */
    /* K_CONSUMER, K_START, K_STOP_PROC, K_KILL, K_WAIT: the consumer's name; K_WAIT and
     * K_STOP_PROC: the bound in ms in n (0: the default) */
    char *proc;
    int proc_col;       /* its column (messages) */
    /* K_CONSUMER */
    wsc_tok *argv;      /* the command line, as written (no $alias in it) */
    size_t nargv;
    char **env;         /* NAME=VALUE entries for its environment */
    size_t nenv;
    char *dir;          /* its working directory, or NULL */
    /* K_EXPECT_PENDING, K_EXPECT_DELAYED: the block form (entry lines below) */
    int entry_block;    /* written as a block: the entries are elines, not expect */
    wsc_eline *elines;
    size_t nelines;
    int block_lines;    /* indented lines read below it (a wrong one too: no "empty block" then) */
    /* K_EXPECT_FLUSH */
    wsc_fline *flines;
    size_t nflines;
} wsc_stmt;

/* A link of the ring of blocks a scenario owns (parse.c's ledger). */
typedef struct wsc_mem {
    struct wsc_mem *prev, *next;
} wsc_mem;

struct wsc_scenario {
    wsc_mem mem;        /* every block the parser allocated for it: wsc_free frees them */
    char *name;         /* the file name for messages */
    char *title;
    int title_line;     /* the line of the `scenario` statement */
    char *needs_fake;   /* the reason, or NULL */
    char *needs_real;   /* the reason it needs a real server (the fake lacks it), or NULL */
    uint64_t seed;
    int cluster;
    int64_t start_ms;
    unsigned forbid;    /* `forbid` kinds for the explorer: bit k is WSC_INVARIANTS[k] */
    int consumer_line;  /* the line of the first `consumer` statement: the file drives a
                           process (0: wsim's own consumer) */
    wsc_stmt *st;
    size_t nst;
};

/* ----- The runner, step by step (run.c; wsc_run and the explorer use it) ------------------ */

typedef struct runner wsc_runner;

/* A runner on a fresh simulation (a real server is FLUSHALLed first when opt->flushall);
 * NULL when out of memory.  An unreachable server makes a runner that failed already. */
wsc_runner *wsc_runner_new(const wsc_scenario *sc, const wsc_options *opt);
/* Runs statement i; 0, or -1 once the run failed (wsc_runner_failed). */
int wsc_runner_exec(wsc_runner *r, size_t i);
int wsc_runner_failed(const wsc_runner *r);
/* Whether the run stopped because memory ran out (it has failed too): the caller answers
 * WS_ENOMEM. */
int wsc_runner_oom(const wsc_runner *r);
ws_sim *wsc_runner_sim(wsc_runner *r);
/* The consumer processes' world of a file that drives them (wsc_world.h), else NULL. */
struct wsc_world *wsc_runner_world(wsc_runner *r);
size_t wsc_runner_subs(const wsc_runner *r);
ws_sub *wsc_runner_sub(wsc_runner *r, size_t i);
/* ws_read, remembering the deliveries (so aliases reach them). */
int wsc_runner_read(wsc_runner *r, ws_sub *s, ws_read_result *res);
/* Handles d as the scenario handles its entry: the entry's actions in file order up to
 * its first outcome (ack when it has none).  Returns ws_settle's code. */
int wsc_runner_handle(wsc_runner *r, ws_delivery *d);
/* Builds what wsc_runner_handle looks up (each alias's handler statements) now, once: the
 * crash explorer does it before forking, so that no child builds it again. */
void wsc_runner_prepare_handlers(wsc_runner *r);

/* From now on the fake's and wsim's allocation families take this process's memory from
 * fresh pages and never free the parent's blocks (child_alloc.c): for a crash explorer's
 * child right after fork, so that it copies no page of its parent's heap for the
 * allocator's sake.  Does nothing with a sanitizer or without glibc. */
void wsc_child_alloc_start(void);
/* Fills res from the runner (which keeps nothing it handed over). */
void wsc_runner_finish(wsc_runner *r, wsc_result *res);
void wsc_runner_free(wsc_runner *r);

#endif /* WSC_INT_H */
