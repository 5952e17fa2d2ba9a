/* explore.c -- the crash explorer: every crash point of a scenario, each classified.
 *
 * SQLite's crash tests kill the writer at every sync point; this kills the consumer at
 * every point where the server may have applied part of what it was sent: before each
 * command of each consumer round trip, and after each round trip applied with its
 * replies lost.  After the crash the consumer restarts and recovers the way the scenario
 * configured it (reclaim subscriptions, list orphan sweeps, delay-queue sweeps), handling
 * each redelivery as the scenario handles its entry; then the invariants of §8 say what
 * the crash did.  Only the first process's round trips are crash points: a scenario that
 * crashes by itself is explored up to its own crash.
 *
 * Two paths give the same verdicts in the same order.  The replay path (--replay) runs
 * the scenario from the start once per point, with the point's fault armed.  The
 * snapshot path runs it once and forks at each point: the fault layer calls a hook at
 * the start of every round trip of the first process's reader and window, and there
 * the parent forks one child per crash point of that round trip; the child arms the
 * point's fault (which fires at once), follows the scenario until the process is dead,
 * recovers, classifies, writes the verdict to a pipe and _exits.  A child holds
 * exactly what the replay would hold at that moment -- the fake's keyspace, the clock,
 * the engine, the runner's position and the trace -- because it is the same run; the
 * fault is armed later than the replay arms it, but a positional fault cannot fire
 * before its round trip, so nothing differs.  Why fork rather than a clone of the fake
 * or a restore from its dump: docs/wsim-explore.md, with the measurements.
 *
 * Out of memory in this process is WS_ENOMEM (wsc.h): each function that allocates says
 * so through its result or a `nomem` flag, and wsc_explore_with frees what it made.  A
 * child that runs out of memory dies (the engine aborts, or it exits non-zero), which
 * the parent reports as any dead worker: out->failure names its point. */
#include <errno.h>
#include <fcntl.h>
#ifdef __GLIBC__
#include <malloc.h>
#endif
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <strings.h>

#include "wsi_io.h"
#include "wsi_alloc.h"
#include "wsi_strmap.h"
#include "wsc_explore_proc.h"
#include "wsc_int.h"

/* How far the clock moves between recovery rounds: past every min-idle and delay the
 * scenario uses, so that whatever waits becomes due. */
static int64_t recovery_step(const wsc_scenario *sc)
{
    int64_t step = 1;
    for (size_t i = 0; i < sc->nst; i++) {
        const wsc_stmt *st = &sc->st[i];
        if (st->kind == K_SUBSCRIBE && st->cfg.min_idle_ms + 1 > step)
            step = st->cfg.min_idle_ms + 1;
        if (st->kind == K_SETTLE && st->outcome == WS_RETRY_AFTER && st->n + 1 > step)
            step = st->n + 1;
    }
    return step;
}

/* ----- The bounded recovery ---------------------------------------------------------------
 *
 * The full recovery reads every subscription until a whole round brings nothing, so every
 * entry still unread at the crash -- half the stream on average when a scenario produces
 * first -- is delivered and handled at every crash point.  The bounded recovery leaves a
 * fresh subscription's stream alone while everything a fresh read would deliver is a
 * produced entry no delivery of the group ever carried (ws_sub_fresh_only): it redelivers
 * what the crash left (the reclaimed, pending entries) and nothing else.  An entry after
 * the group's last-delivered id that was never delivered was never handed to a handler
 * (SEMANTICS.md §2.1: a `>` read hands out only entries after last-delivered, and moves
 * it), so none of its effects applied and it is still readable: §8's "unread" is "held",
 * so it is neither lost nor doubled.  The full recovery would have delivered it once and
 * handled it as the scenario does; the verdict is the same when that handling can neither
 * break an invariant for that entry nor change what another entry's recovery does or how
 * it is checked.  bounded_safe() says when the scenario guarantees that, from its text
 * alone; elsewhere the recovery is the full one.  docs/wsim-explore.md has the argument. */

typedef struct bset {
    wsi_strmap keys;   /* canonical key -> owner (1 + alias index), or 0 for a source's */
} bset;

/* Commands whose effect is not described by the keys they name (scripts, the whole
 * keyspace, the connection's state, blocking, transactions inside a segment), or that
 * read keys they do not name (SORT ... BY): a handler using one is not analysed. */
static int opaque_command(const char *name)
{
    static const char *const names[] = {
        "EVAL",   "EVALSHA", "EVAL_RO",  "EVALSHA_RO", "FCALL",      "FCALL_RO", "FUNCTION",
        "SCRIPT", "SORT",    "SORT_RO",  "MULTI",      "EXEC",       "DISCARD",  "WATCH",
        "UNWATCH", "SELECT", "SWAPDB",   "FLUSHALL",   "FLUSHDB",    "MOVE",     "MIGRATE",
        "DEBUG",  "CLIENT",  "CONFIG",   "RESET",      "SHUTDOWN",   "BLPOP",    "BRPOP",
        "BLMOVE", "BRPOPLPUSH", "BLMPOP", "BZPOPMIN",  "BZPOPMAX",   "BZMPOP",   "XREAD",
        "XREADGROUP", "WAIT", "OBJECT",  "RESTORE-ASKING"};
    for (size_t i = 0; i < sizeof names / sizeof *names; i++)
        if (strcasecmp(name, names[i]) == 0) return 1;
    return 0;
}

/* The alias (index into aliases) that the longest alias name at s starts with, or -1. */
static long longest_alias(const wsi_strmap *aliases, const char *s, size_t run)
{
    for (size_t l = run; l > 0; l--) {
        size_t v;
        if (wsi_strmap_get(aliases, s, l, &v)) return (long)v;
    }
    return -1;
}

/* Token t of a handler statement of alias `own`, with each $own replaced by a mark that
 * stands for the entry's id ("\001<alias>\001": two entries' marks expand to different
 * ids when the entries share a stream), $$ by $.  NULL when it names another entry
 * (whose id the handler may not know yet at a crash) or no entry, or (*nomem set) when
 * out of memory. */
static char *canonical(const wsi_strmap *aliases, size_t own, const char *own_name,
                       const char *t, size_t len, int *marked, int *nomem)
{
    size_t cap = len * 2 + strlen(own_name) * 4 + 8, n = 0;
    char *out = wsi_malloc(cap);
    if (!out) {
        *nomem = 1;
        return NULL;
    }
    for (size_t i = 0; i < len; i++) {
        if (t[i] != '$') {
            out[n++] = t[i];
            continue;
        }
        if (i + 1 < len && t[i + 1] == '$') {
            out[n++] = '$';
            i++;
            continue;
        }
        char nx = i + 1 < len ? t[i + 1] : '\0';
        if (!((nx >= 'a' && nx <= 'z') || (nx >= 'A' && nx <= 'Z') || nx == '_')) {
            out[n++] = '$';
            continue;
        }
        size_t run = 0;
        while (i + 1 + run < len) {
            char c = t[i + 1 + run];
            if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                  c == '_' || c == '-' || c == '.'))
                break;
            run++;
        }
        long a = longest_alias(aliases, t + i + 1, run);
        if (a < 0 || (size_t)a != own) {
            wsi_free(out);
            return NULL;
        }
        size_t l = strlen(own_name);
        if (n + l + 2 >= cap) abort();
        out[n++] = '\001';
        memcpy(out + n, own_name, l);
        n += l;
        out[n++] = '\001';
        *marked = 1;
        i += l;
    }
    out[n] = '\0';
    return out;
}

/* A key a literal "<digits>-<digits>" inside could be some entry's id written out. */
static int id_like(const char *k)
{
    for (const char *p = k; *p; p++)
        if (*p == '-' && p > k && p[-1] >= '0' && p[-1] <= '9' && p[1] >= '0' && p[1] <= '9')
            return 1;
    return 0;
}

/* Claims key for owner (1 + alias index; 0: the subscriptions' own keys and the outputs'):
 * 0, or -1 when another owner has it, or when out of memory (*nomem set). */
static int claim_key(bset *b, const char *key, size_t owner, int *nomem)
{
    size_t have;
    if (wsi_strmap_get(&b->keys, key, strlen(key), &have)) return have == owner ? 0 : -1;
    if (wsi_strmap_put(&b->keys, key, strlen(key), owner)) return *nomem = 1, -1;
    return 0;
}

/* Whether handling a never-delivered entry in a recovery provably changes no verdict in
 * sc (see above): every subscription a stream; every outcome ack or drop (no copies, no
 * timers, nothing left pending); no fault statements and no cluster (nothing queued is
 * refused at queue time: every handler command is one the fake knows with a valid
 * arity, so an atomic segment never meets EXECABORT); each handler's commands name their
 * keys (no scripts, no keyspace-wide or connection commands) and only its own entry's id
 * ($alias); no key is named by the handlers of two entries, and none is a subscription's
 * stream, delay queue, lists, recovery set, dead letter, reply key or a publish target.
 * Then a fresh entry's handling touches only keys no other entry's handling touches and
 * only its own id in the stream: it cannot change what another entry's redelivery does,
 * nor what the checks read for it; and it ends acked or dropped, one delivery: fine.
 * 1 or 0; -1 when out of memory. */
static int bounded_safe(const wsc_scenario *sc, const fr_server *table)
{
    if (sc->cluster || !table) return 0;
    wsi_strmap aliases = {0};
    bset b = {{0}};
    int ok = 1, marked = 0, literal_id = 0, nomem = 0;
    const char *stream_key = NULL;
    size_t naliases = 0;
    const char **alias_names = NULL;
    for (size_t i = 0; i < sc->nst && ok; i++) {
        const wsc_stmt *st = &sc->st[i];
        if (st->kind == K_FAULT) ok = 0;
        if (st->kind == K_SUBSCRIBE) {
            if (st->cfg.form != WS_FORM_STREAM) ok = 0;
            const char *own[] = {st->s_key, st->s_dq, st->s_processing, st->s_recovery,
                                 st->s_dead_letter, st->s_reply};
            for (size_t k = 0; k < sizeof own / sizeof *own && ok; k++)
                if (own[k] && claim_key(&b, own[k], 0, &nomem)) ok = 0;
        }
        if (st->kind == K_PRODUCE) {
            const char *key = st->key;
            for (size_t k = 0; !key && k < i; k++)
                if (sc->st[k].kind == K_SUBSCRIBE && strcmp(sc->st[k].sub, st->sub) == 0)
                    key = sc->st[k].s_key;
            if (!key || (stream_key && strcmp(stream_key, key) != 0)) stream_key = "\001";
            else stream_key = key;
            if (st->alias) {
                const char **v = wsi_realloc(alias_names, (naliases + 1) * sizeof *v);
                if (!v || wsi_strmap_put(&aliases, st->alias, strlen(st->alias), naliases)) {
                    if (v) alias_names = v;
                    nomem = 1;
                    ok = 0;
                    break;
                }
                alias_names = v;
                alias_names[naliases++] = st->alias;
            }
        }
        if ((st->kind == K_PUBLISH || st->kind == K_BIND) && st->key &&
            claim_key(&b, st->key, 0, &nomem))
            ok = 0;
    }
    for (size_t i = 0; i < sc->nst && ok; i++) {
        const wsc_stmt *st = &sc->st[i];
        if (!st->alias || st->kind == K_PRODUCE || st->refused) continue;
        size_t own;
        int known = wsi_strmap_get(&aliases, st->alias, strlen(st->alias), &own);
        if (st->kind == K_SETTLE) {
            if (st->outcome != WS_ACK && st->outcome != WS_DROP) ok = 0;
            continue;
        }
        if (st->kind != K_QUEUE && st->kind != K_POOL) continue;
        if (!known || st->ncmd == 0 || opaque_command(st->cmd[0].s)) {
            ok = 0;
            break;
        }
        char **argv = wsi_calloc(st->ncmd, sizeof *argv);
        if (!argv) {
            nomem = 1;
            ok = 0;
            break;
        }
        for (size_t k = 0; k < st->ncmd && ok; k++) {
            argv[k] = canonical(&aliases, own, st->alias, st->cmd[k].s, st->cmd[k].len, &marked,
                                &nomem);
            if (!argv[k]) ok = 0;
        }
        int keys[64];
        int nk = ok ? fr_command_keys(table, (int)st->ncmd, (const char *const *)argv, NULL,
                                      keys, 64)
                    : -1;
        if (nk < 0 || nk >= 64) ok = 0;
        if (ok && nk == 0 && strcasecmp(argv[0], "PUBLISH") != 0 &&
            strcasecmp(argv[0], "PING") != 0 && strcasecmp(argv[0], "ECHO") != 0)
            ok = 0;
        for (int k = 0; ok && k < nk; k++) {
            const char *key = argv[keys[k]];
            if (!strchr(key, '\001') && id_like(key)) literal_id = 1;
            if (claim_key(&b, key, own + 1, &nomem)) ok = 0;
        }
        for (size_t k = 0; k < st->ncmd; k++) wsi_free(argv[k]);
        wsi_free(argv);
    }
    /* marks stand for distinct ids only within one stream, and a key written out with an
     * id in it could be one of them */
    if (marked && (literal_id || !stream_key || strcmp(stream_key, "\001") == 0)) ok = 0;
    wsi_strmap_free(&aliases);
    wsi_strmap_free(&b.keys);
    wsi_free(alias_names);
    return nomem ? -1 : ok;
}

/* How every point of a scenario recovers, worked out once (a child would otherwise read
 * every statement's page again). */
typedef struct recovery_plan {
    int64_t step;   /* recovery_step */
    int bounded;    /* bounded_safe */
    int touched;    /* check only what the crash and the recovery touched
                       (ws_sim_check_prepare) */
} recovery_plan;

/* Restarts the consumer and lets every subscription read and handle until a whole round
 * brings nothing (at most `rounds` rounds).  Bounded: a fresh subscription whose stream
 * holds nothing for it but never-delivered produced entries does not read that round.
 * Returns the deliveries it read. */
static size_t recover(wsc_runner *r, const recovery_plan *plan, int rounds)
{
    size_t total = 0;
    ws_sim *sim = wsc_runner_sim(r);
    ws_sim_restart(sim);
    int64_t step = plan->step;
    int bounded = plan->bounded;
    for (int round = 0; round < rounds; round++) {
        ws_sim_advance(sim, step);
        size_t got = 0;
        for (size_t i = 0; i < wsc_runner_subs(r) && !ws_sim_dead(sim); i++) {
            ws_sub *s = wsc_runner_sub(r, i);
            int fresh_only = 0;
            if (bounded && ws_sub_fresh_only(s, &fresh_only) == 0 && fresh_only) continue;
            for (int reads = 0; reads < 64 && !ws_sim_dead(sim); reads++) {
                ws_read_result res;
                if (wsc_runner_read(r, s, &res) != 0) break;
                if (res.is_report) continue;
                if (res.n == 0) break;
                got += res.n;
                for (size_t k = 0; k < res.n && !ws_sim_dead(sim); k++) {
                    ws_delivery *d = ws_read_delivery(s, k);
                    if (d && !ws_delivery_done(d)) wsc_runner_handle(r, d);
                }
            }
        }
        total += got;
        if (got == 0 || ws_sim_dead(sim)) break;
    }
    return total;
}


/* A copy of s ("" for NULL); NULL when out of memory. */
static char *strdup0(const char *s) { return wsi_strdup(s ? s : ""); }

/* After the crash (or the end of the scenario): recovers and classifies p.  The runner
 * stays the caller's.  0, or -1 when out of memory (in the runner or for p->detail). */
static int classify(wsc_runner *r, const wsc_scenario *sc, wsc_crash_point *p,
                    const recovery_plan *plan)
{
    ws_sim *sim = wsc_runner_sim(r);
    if (!ws_sim_dead(sim)) {
        p->verdict = wsc_runner_failed(r) ? "error" : "not reached";
        p->detail = strdup0(wsc_runner_oom(r)          ? ""
                            : wsc_runner_failed(r) ? "the scenario failed before the crash point"
                                                   : "the crash point was never reached");
        return p->detail && !wsc_runner_oom(r) ? 0 : -1;
    }
    p->recovered = recover(r, plan, 16);
    if (wsc_runner_oom(r)) return -1;
    const ws_violation *v;
    size_t n;
    if (plan->touched) ws_sim_check_prepare(sim);
    if (ws_sim_check(sim, &v, &n) != 0) {
        p->verdict = "error";
        p->detail = strdup0(ws_sim_errstr(sim));
    } else if (n == 0) {
        p->verdict = "fine";
        p->detail = strdup0("");
    } else {
        /* the first violation names the point; every sentence goes into the detail */
        p->verdict = "error";
        for (int k = 0; k < WSC_NINVARIANTS; k++)
            if (strcmp(v[0].invariant, WSC_INVARIANTS[k]) == 0) p->verdict = WSC_INVARIANTS[k];
        size_t len = 1;
        for (size_t i = 0; i < n; i++) len += strlen(v[i].sentence) + 2;
        p->detail = wsi_calloc(len, 1);
        for (size_t i = 0; i < n && p->detail; i++) {
            if (i) strcat(p->detail, "; ");
            strcat(p->detail, v[i].sentence);
            for (int k = 0; k < WSC_NINVARIANTS; k++)
                if ((sc->forbid & (1u << k)) && strcmp(v[i].invariant, WSC_INVARIANTS[k]) == 0)
                    p->forbidden = 1;
        }
    }
    return p->detail && !wsc_runner_oom(r) ? 0 : -1;
}

/* The replay path: runs the scenario with p's fault armed, recovers, classifies.  0, or
 * -1 when out of memory. */
static int explore_point(const wsc_scenario *sc, const wsc_options *opt, wsc_crash_point *p,
                         const recovery_plan *plan)
{
    wsc_runner *r = wsc_runner_new(sc, opt);
    if (!r) return -1;
    ws_sim *sim = wsc_runner_sim(r);
    ws_fault f = {0};
    f.kind = p->command ? WS_FAULT_CRASH_BEFORE : WS_FAULT_LOSE_REPLIES;
    f.round_trip = p->round_trip;
    f.command = p->command;
    int armed = 0;
    for (size_t i = 0; i < sc->nst && !ws_sim_dead(sim) && !wsc_runner_failed(r); i++) {
        if (!armed) {
            ws_conn *c = NULL;
            if (strcmp(p->conn, "reader") == 0) c = ws_sim_reader(sim);
            else if (strcmp(p->conn, "window") == 0) c = ws_sim_window(sim);
            else
                for (size_t k = 0; k < wsc_runner_subs(r) && !c; k++)
                    if (ws_sub_connection(wsc_runner_sub(r, k)) &&
                        strcmp(ws_conn_label(ws_sub_connection(wsc_runner_sub(r, k))), p->conn) == 0)
                        c = ws_sub_connection(wsc_runner_sub(r, k));
            if (c) armed = ws_fault_arm(c, &f) == 0;
        }
        wsc_runner_exec(r, i);
    }
    int rc = classify(r, sc, p, plan);
    wsc_runner_free(r);
    return rc;
}

/* ----- The snapshot path ------------------------------------------------------------------ */

/* The verdicts a child can send, by number (the pipe carries the number). */
static const char *const VERDICTS[] = {"fine",  "lost",  "leaked",     "split",
                                       "doubled", "stranded", "error", "not reached"};
#define NVERDICTS (sizeof VERDICTS / sizeof *VERDICTS)

/* What a child writes: this header, then detail_len bytes of detail. */
typedef struct answer {
    uint32_t magic;      /* ANSWER_MAGIC: a whole answer, not garbage */
    uint32_t verdict;    /* index in VERDICTS */
    uint32_t forbidden;  /* the point's forbidden flag */
    uint32_t detail_len; /* bytes of detail that follow */
    uint32_t recovered;  /* the point's recovered deliveries */
} answer;
#define ANSWER_MAGIC 0x77736531u

/* One child at work. */
typedef struct worker {
    pid_t pid;    /* the child */
    int fd;       /* the read end of its pipe */
    size_t point; /* the point it explores (index in out->points) */
    char *buf;    /* what it sent so far */
    size_t len, cap;
} worker;

/* A replica: a copy of the whole explorer, forked once after the baseline, that runs the
 * scenario itself and explores every jobs-th wanted point (its share), forking a child per
 * point as the parent does.  It streams its answers back (a record per point, then an
 * end record), so that the parent is one explorer among equals instead of the one
 * process that forks for everybody. */
typedef struct replica {
    pid_t pid;    /* the replica process */
    int fd;       /* the read end of its pipe */
    size_t share; /* it explores the wanted points of rank share, share + jobs, ... */
    char *buf;    /* what it sent so far */
    size_t len, cap;
} replica;

typedef struct snap {
    const wsc_scenario *sc;
    wsc_exploration *out;
    wsc_runner *r;           /* the one run (the parent's; a child's copy after fork) */
    ws_conn *conn[2];        /* the first process's reader and window */
    size_t *order[2];        /* per connection: its points, in round-trip order */
    size_t norder[2], cursor[2];
    unsigned char *started;  /* per point: a child took it */
    unsigned char *wanted;   /* per point: in the shard */
    unsigned char *mine;     /* per point: this process explores it (its share of wanted;
                                wanted itself when there are no replicas) */
    size_t max_children;     /* children of this process at once: jobs without replicas,
                                else 1 (each replica is one more explorer) */
    worker *w;               /* children at work */
    size_t nw;
    size_t jobs;
    int oom;                 /* a fork or pipe failed: the rest is replayed */
    int nomem;               /* this process ran out of memory: wsc_explore_with answers
                                WS_ENOMEM */
    recovery_plan plan;      /* how each point recovers */
    int kill_point;          /* test hook (WSIM_EXPLORE_TEST_KILL): 1-based point whose
                                child kills itself, 0: none */
    int kill_replica_point;  /* test hook (WSIM_EXPLORE_TEST_KILL_REPLICA): the replica
                                whose share holds this 1-based point kills itself before
                                exploring it, 0: none */
    replica *rep;            /* in the parent: the replicas still sending */
    size_t nrep;
    int replica_fd;          /* in a replica: the write end of its pipe to the parent, else -1 */
    size_t replica_replayed; /* in the parent: points the replicas had to replay */
    /* in a child */
    int child;               /* this process is a child */
    size_t child_point;      /* the point it explores */
    int child_fd;            /* the write end of its pipe */
} snap;

/* "window #3, before 1/2" or "window #3, replies lost". */
static void point_where(const wsc_crash_point *p, char *buf, size_t size)
{
    if (p->command)
        snprintf(buf, size, "%s #%llu, before %zu/%zu", p->conn,
                 (unsigned long long)p->round_trip, p->command, p->commands);
    else
        snprintf(buf, size, "%s #%llu, replies lost", p->conn,
                 (unsigned long long)p->round_trip);
}

/* The child's end: classify its point, send the answer, exit without returning (nor
 * running the parent's atexit handlers or flushing its stdio buffers). */
static void child_finish(snap *s) __attribute__((noreturn));
static void child_finish(snap *s)
{
    wsc_crash_point p = s->out->points[s->child_point];
    p.detail = NULL;
    if (classify(s->r, s->sc, &p, &s->plan)) _exit(5); /* out of memory: a dead worker */
    answer a = {ANSWER_MAGIC, 0, (uint32_t)p.forbidden, (uint32_t)strlen(p.detail),
                (uint32_t)p.recovered};
    for (uint32_t k = 0; k < NVERDICTS; k++)
        if (strcmp(p.verdict, VERDICTS[k]) == 0) a.verdict = k;
    int bad = wsi_write_all(s->child_fd, &a, sizeof a) ||
              wsi_write_all(s->child_fd, p.detail, a.detail_len);
    _exit(bad ? 3 : 0);
}

/* What a replica sends: a point record (REC_POINT, the point's index, then its answer
 * and detail) for every point of its share as it is classified, then one end record
 * (REC_END, the points it replayed, the length of its failure text, then the text). */
#define REC_POINT 0x50u
#define REC_END 0x45u

/* In a replica: sends point i's classification to the parent.  A write that fails means
 * the parent is gone: nothing is left to do. */
static void send_point(snap *s, size_t i)
{
    const wsc_crash_point *p = &s->out->points[i];
    uint32_t head[2] = {REC_POINT, (uint32_t)i};
    answer a = {ANSWER_MAGIC, 0, (uint32_t)p->forbidden, (uint32_t)strlen(p->detail),
                (uint32_t)p->recovered};
    for (uint32_t k = 0; k < NVERDICTS; k++)
        if (strcmp(p->verdict, VERDICTS[k]) == 0) a.verdict = k;
    if (wsi_write_all(s->replica_fd, head, sizeof head) ||
        wsi_write_all(s->replica_fd, &a, sizeof a) ||
        wsi_write_all(s->replica_fd, p->detail, a.detail_len))
        _exit(5);
}

/* Sets out->failure (unless set) to how the worker of point i died (its wait status):
 * killed, a non-zero exit, or an answer cut short.  i == npoints: a replica that died
 * after its last point.  Out of memory for the text sets nomem. */
static void worker_failed(snap *s, size_t i, int status)
{
    if (s->out->failure || s->nomem) return;
    char where[160] = "", how[96];
    if (i < s->out->npoints) point_where(&s->out->points[i], where, sizeof where);
    if (WIFSIGNALED(status))
        snprintf(how, sizeof how, "was killed by signal %d (%s)", WTERMSIG(status),
                 strsignal(WTERMSIG(status)));
    else if (WIFEXITED(status) && WEXITSTATUS(status) != 0)
        snprintf(how, sizeof how, "exited with status %d", WEXITSTATUS(status));
    else
        snprintf(how, sizeof how, "ended without a whole answer");
    size_t len = strlen(where) + strlen(how) + 160;
    s->out->failure = wsi_malloc(len);
    if (!s->out->failure)
        s->nomem = 1;
    else if (i < s->out->npoints)
        snprintf(s->out->failure, len,
                 "the worker exploring crash point %zu (%s) %s; the exploration is incomplete",
                 i + 1, where, how);
    else
        snprintf(s->out->failure, len, "a worker %s after its last crash point; the "
                 "exploration is incomplete", how);
}

/* In the parent: the failure of replica rp, which died or ended without its end record:
 * named by the first point of its share it had not answered. */
static void replica_died(snap *s, const replica *rp, int status, const unsigned char *answered)
{
    size_t rank = 0, first = s->out->npoints;
    for (size_t i = 0; i < s->out->npoints && first == s->out->npoints; i++) {
        if (!s->wanted[i]) continue;
        if (rank++ % s->jobs == rp->share && !answered[i]) first = i;
    }
    worker_failed(s, first, status);
}

/* In the parent: replica k's stream is at its end: its records go into their points
 * (which count as started), its end record's failure into out->failure; it is reaped. */
static void replica_done(snap *s, size_t k)
{
    replica *rp = &s->rep[k];
    close(rp->fd);
    int status = 0;
    while (waitpid(rp->pid, &status, 0) < 0 && errno == EINTR) {}
    unsigned char *answered = wsi_calloc(s->out->npoints ? s->out->npoints : 1, 1);
    if (!answered) {
        s->nomem = 1; /* the replica's answers are lost; so is the exploration */
        wsi_free(rp->buf);
        s->rep[k] = s->rep[--s->nrep];
        return;
    }
    int ended = 0;
    size_t at = 0;
    while (!ended && rp->len - at >= 2 * sizeof(uint32_t)) {
        uint32_t head[2];
        memcpy(head, rp->buf + at, sizeof head);
        size_t body = at + sizeof head;
        if (head[0] == REC_POINT && head[1] < s->out->npoints && rp->len - body >= sizeof(answer)) {
            answer a;
            memcpy(&a, rp->buf + body, sizeof a);
            if (a.magic != ANSWER_MAGIC || a.verdict >= NVERDICTS ||
                rp->len - body - sizeof a < a.detail_len)
                break;
            wsc_crash_point *p = &s->out->points[head[1]];
            p->verdict = VERDICTS[a.verdict];
            p->forbidden = (int)a.forbidden;
            p->recovered = a.recovered;
            wsi_free(p->detail);
            p->detail = wsi_memdup(rp->buf + body + sizeof a, a.detail_len);
            if (!p->detail) s->nomem = 1;
            answered[head[1]] = 1;
            s->started[head[1]] = 1;
            at = body + sizeof a + a.detail_len;
        } else if (head[0] == REC_END && rp->len - body >= sizeof(uint32_t)) {
            uint32_t flen;
            memcpy(&flen, rp->buf + body, sizeof flen);
            if (rp->len - body - sizeof flen != flen) break;
            s->replica_replayed += head[1];
            if (flen && !s->out->failure) {
                s->out->failure = wsi_memdup(rp->buf + body + sizeof flen, flen);
                if (!s->out->failure) s->nomem = 1;
            }
            ended = 1;
        } else {
            break;
        }
    }
    if (!ended || !WIFEXITED(status) || WEXITSTATUS(status) != 0)
        replica_died(s, rp, status, answered);
    wsi_free(answered);
    wsi_free(rp->buf);
    s->rep[k] = s->rep[--s->nrep];
}

/* Reads what fd holds now onto the end of *buf, grown from first bytes by doubling: 1 at
 * its end of file (or an error: the writer is gone either way), 0 when nothing more is
 * there yet, -1 when out of memory. */
static int read_some(int fd, char **buf, size_t *len, size_t *cap, size_t first)
{
    for (;;) {
        if (*len + 4096 > *cap) {
            size_t ncap = *cap ? *cap * 2 : first;
            char *b = wsi_realloc(*buf, ncap);
            if (!b) return -1;
            *buf = b;
            *cap = ncap;
        }
        ssize_t got = read(fd, *buf + *len, *cap - *len);
        if (got < 0 && errno == EINTR) continue;
        if (got < 0 && errno == EAGAIN) return 0;
        if (got <= 0) return 1;
        *len += (size_t)got;
    }
}

/* In the parent: reads what replica k sent so far; at its end, replica_done. */
static void drain_replica(snap *s, size_t k)
{
    replica *rp = &s->rep[k];
    int end = read_some(rp->fd, &rp->buf, &rp->len, &rp->cap, 16384);
    if (end < 0) s->nomem = 1; /* stop_workers ends the replica */
    if (end == 1) replica_done(s, k);
}

/* Reads what worker k sent, and once it is done (end of file), reaps it: its answer goes
 * into its point, or its death into out->failure.  Returns 1 when it was reaped. */
static int drain(snap *s, size_t k)
{
    worker *w = &s->w[k];
    int end = read_some(w->fd, &w->buf, &w->len, &w->cap, 8192);
    if (end == 0) return 0;
    if (end < 0) s->nomem = 1; /* the answer is lost; so is the exploration (WS_ENOMEM) */
    close(w->fd);
    int status = 0;
    while (waitpid(w->pid, &status, 0) < 0 && errno == EINTR) {}
    wsc_crash_point *p = &s->out->points[w->point];
    answer a;
    int whole = w->len >= sizeof a;
    if (whole) memcpy(&a, w->buf, sizeof a);
    whole = whole && a.magic == ANSWER_MAGIC && a.verdict < NVERDICTS &&
            w->len == sizeof a + a.detail_len;
    if (WIFEXITED(status) && WEXITSTATUS(status) == 0 && whole) {
        p->verdict = VERDICTS[a.verdict];
        p->forbidden = (int)a.forbidden;
        p->recovered = a.recovered;
        p->detail = wsi_memdup(w->buf + sizeof a, a.detail_len);
        if (!p->detail) s->nomem = 1;
        else if (s->replica_fd >= 0) send_point(s, w->point);
    } else {
        worker_failed(s, w->point, status);
    }
    wsi_free(w->buf);
    s->w[k] = s->w[--s->nw];
    return 1;
}

/* Waits until at least one worker is done or a replica has sent something, reaps every
 * worker that is done and reads every replica that sent. */
static void reap_some(snap *s)
{
    struct pollfd fds[128];
    size_t n = s->nw < 64 ? s->nw : 64, m = s->nrep < 64 ? s->nrep : 64;
    for (size_t k = 0; k < n; k++) fds[k] = (struct pollfd){.fd = s->w[k].fd, .events = POLLIN};
    for (size_t k = 0; k < m; k++)
        fds[n + k] = (struct pollfd){.fd = s->rep[k].fd, .events = POLLIN};
    int rc = poll(fds, (nfds_t)(n + m), -1);
    if (rc < 0) return; /* EINTR: the caller loops */
    int done[128] = {0};
    for (size_t k = 0; k < n + m; k++) done[k] = fds[k].revents != 0;
    /* drain from the end so that the swap-remove keeps lower indexes valid */
    for (size_t k = m; k-- > 0;)
        if (done[n + k]) drain_replica(s, k);
    for (size_t k = n; k-- > 0;)
        if (done[k]) drain(s, k);
}

/* Stops every worker (after a failure): they are this process's children. */
static void stop_workers(snap *s)
{
    for (size_t k = 0; k < s->nw; k++) kill(s->w[k].pid, SIGKILL);
    while (s->nw) {
        size_t k = s->nw - 1;
        close(s->w[k].fd);
        while (waitpid(s->w[k].pid, NULL, 0) < 0 && errno == EINTR) {}
        wsi_free(s->w[k].buf);
        s->nw--;
    }
    /* a replica's own children finish their point and die writing to its closed pipe */
    for (size_t k = 0; k < s->nrep; k++) kill(s->rep[k].pid, SIGKILL);
    while (s->nrep) {
        size_t k = s->nrep - 1;
        close(s->rep[k].fd);
        while (waitpid(s->rep[k].pid, NULL, 0) < 0 && errno == EINTR) {}
        wsi_free(s->rep[k].buf);
        s->nrep--;
    }
}

/* Forks the child for point i at the start of its round trip on c.  Returns in both
 * processes; s->child says which one this is. */
static void spawn(snap *s, ws_conn *c, size_t i)
{
    while (s->nw >= s->max_children && !s->out->failure && !s->nomem) reap_some(s);
    if (s->out->failure || s->nomem) return;
    if (s->replica_fd >= 0 && s->kill_replica_point && (size_t)s->kill_replica_point == i + 1)
        raise(SIGKILL);
    /* room for the worker first: after the fork, a parent without it could not reap it */
    worker *v = wsi_realloc(s->w, (s->nw + 1) * sizeof *v);
    if (!v) {
        s->nomem = 1;
        return;
    }
    s->w = v;
    int fds[2];
    if (pipe(fds) != 0) {
        s->oom = 1;
        return;
    }
    pid_t pid = fork();
    if (pid < 0) {
        close(fds[0]);
        close(fds[1]);
        s->oom = 1;
        return;
    }
    if (pid == 0) {
        wsc_child_alloc_start();
        close(fds[0]);
        for (size_t k = 0; k < s->nw; k++) close(s->w[k].fd);
        s->nw = 0;
        for (size_t k = 0; k < s->nrep; k++) close(s->rep[k].fd);
        s->nrep = 0;
        if (s->replica_fd >= 0) close(s->replica_fd); /* the replica's end is its own */
        s->replica_fd = -1;
        s->child = 1;
        s->child_point = i;
        s->child_fd = fds[1];
        if (s->kill_point && (size_t)s->kill_point == i + 1) raise(SIGKILL);
        const wsc_crash_point *p = &s->out->points[i];
        ws_fault f = {0};
        f.kind = p->command ? WS_FAULT_CRASH_BEFORE : WS_FAULT_LOSE_REPLIES;
        f.round_trip = p->round_trip;
        f.command = p->command;
        if (ws_fault_arm(c, &f) != 0) _exit(4);
        return;
    }
    close(fds[1]);
    fcntl(fds[0], F_SETFL, fcntl(fds[0], F_GETFL) | O_NONBLOCK);
    s->w[s->nw++] = (worker){pid, fds[0], i, NULL, 0, 0};
    s->started[i] = 1;
}

/* The fault layer's hook: at the start of round trip rt on c, fork the points that
 * crash in it. */
static void at_round_trip(void *arg, ws_conn *c, uint64_t rt, size_t n)
{
    (void)n;
    snap *s = arg;
    if (s->child || s->out->failure || s->oom || s->nomem) return;
    int ci = c == s->conn[0] ? 0 : c == s->conn[1] ? 1 : -1;
    if (ci < 0) return;
    /* points of earlier round trips not taken by now are left to the replay */
    while (s->cursor[ci] < s->norder[ci] &&
           s->out->points[s->order[ci][s->cursor[ci]]].round_trip < rt)
        s->cursor[ci]++;
    /* the checks' incremental state, brought up to date here once for every child */
    if (s->plan.touched && s->cursor[ci] < s->norder[ci] &&
        s->out->points[s->order[ci][s->cursor[ci]]].round_trip == rt)
        ws_sim_check_prepare(wsc_runner_sim(s->r));
    while (s->cursor[ci] < s->norder[ci] &&
           s->out->points[s->order[ci][s->cursor[ci]]].round_trip == rt) {
        size_t i = s->order[ci][s->cursor[ci]++];
        if (!s->mine[i]) continue;
        spawn(s, c, i);
        if (s->child || s->out->failure || s->oom || s->nomem) return;
    }
}

/* Forks jobs - 1 replicas (share k = 1 .. jobs-1: the wanted points whose rank among the
 * wanted is k modulo jobs); the parent keeps share 0 and every share whose replica could
 * not be forked.  Returns in every process: in a replica, s->replica_fd is its pipe. */
static void start_replicas(snap *s)
{
    size_t n = s->out->npoints;
    unsigned char *held = wsi_calloc(s->jobs, 1); /* a live replica holds the share */
    unsigned char *mine = wsi_calloc(n ? n : 1, 1);
    replica *rep = wsi_calloc(s->jobs, sizeof *rep); /* room for all, before any fork */
    if (!held || !mine || !rep) {
        wsi_free(held);
        wsi_free(mine);
        wsi_free(rep);
        s->nomem = 1;
        return;
    }
    s->mine = mine;
    s->rep = rep;
    for (size_t k = 1; k < s->jobs; k++) {
        int fds[2];
        if (pipe(fds) != 0) continue;
        pid_t pid = fork();
        if (pid < 0) {
            close(fds[0]);
            close(fds[1]);
            continue;
        }
        if (pid == 0) {
            close(fds[0]);
            for (size_t j = 0; j < s->nrep; j++) close(s->rep[j].fd);
            s->nrep = 0;
            s->replica_fd = fds[1];
            for (size_t i = 0, rank = 0; i < n; i++)
                s->mine[i] = s->wanted[i] && rank++ % s->jobs == k;
            s->max_children = 1;
            wsi_free(held);
            return;
        }
        close(fds[1]);
        fcntl(fds[0], F_SETFL, fcntl(fds[0], F_GETFL) | O_NONBLOCK);
        s->rep[s->nrep++] = (replica){pid, fds[0], k, NULL, 0, 0};
        held[k] = 1;
    }
    for (size_t i = 0, rank = 0; i < n; i++)
        s->mine[i] = s->wanted[i] && !held[rank++ % s->jobs];
    s->max_children = s->nrep ? 1 : s->jobs;
    wsi_free(held);
}

/* In a replica, after its run: replays the points of its share it could not fork, sends
 * them, then the end record, and exits. */
static void replica_finish(snap *s, const wsc_options *o) __attribute__((noreturn));
static void replica_finish(snap *s, const wsc_options *o)
{
    if (s->nomem) _exit(5); /* out of memory: the parent reports a dead worker */
    uint32_t replayed = 0;
    for (size_t i = 0; i < s->out->npoints && !s->out->failure; i++) {
        if (!s->mine[i] || s->started[i]) continue;
        explore_point(s->sc, o, &s->out->points[i], &s->plan);
        replayed++;
        send_point(s, i);
    }
    const char *f = s->out->failure ? s->out->failure : "";
    uint32_t end[3] = {REC_END, replayed, (uint32_t)strlen(f)};
    int bad = wsi_write_all(s->replica_fd, end, sizeof end) || wsi_write_all(s->replica_fd, f, end[2]);
    _exit(bad ? 5 : 0);
}

/* Runs the scenario once, forking at every wanted point.  Points it could not fork (none
 * on the scenarios we know) are left with started[i] == 0 for the caller to replay. */
static void explore_snapshots(const wsc_scenario *sc, const wsc_options *opt, snap *s)
{
    wsc_exploration *out = s->out;
    for (size_t i = 0; i < out->npoints; i++) {
        const char *conn = out->points[i].conn;
        int ci = strcmp(conn, "reader") == 0 ? 0 : strcmp(conn, "window") == 0 ? 1 : -1;
        if (ci < 0) continue;
        size_t *v = wsi_realloc(s->order[ci], (s->norder[ci] + 1) * sizeof *v);
        if (!v) {
            s->nomem = 1;
            return;
        }
        s->order[ci] = v;
        s->order[ci][s->norder[ci]++] = i;
    }
    s->r = wsc_runner_new(sc, opt);
    if (!s->r) {
        s->nomem = 1;
        return;
    }
    wsc_runner_prepare_handlers(s->r);
    ws_sim *sim = wsc_runner_sim(s->r);
    s->conn[0] = ws_sim_reader(sim);
    s->conn[1] = ws_sim_window(sim);
    for (int k = 0; k < 2; k++) ws_fault_set_hook(s->conn[k], at_round_trip, s);
    /* the replay path's loop: a child leaves it once its process is dead */
    for (size_t i = 0; i < sc->nst && !wsc_runner_failed(s->r) && !s->nomem; i++) {
        if (s->child && ws_sim_dead(sim)) break;
        wsc_runner_exec(s->r, i);
    }
    if (s->child && wsc_runner_oom(s->r)) _exit(5); /* out of memory: a dead worker */
    if (s->child) child_finish(s);
    if (wsc_runner_oom(s->r)) s->nomem = 1;
    while ((s->nw || (s->nrep && s->replica_fd < 0)) && !out->failure && !s->nomem) reap_some(s);
    if (out->failure || s->nomem) stop_workers(s);
    wsc_runner_free(s->r);
    s->r = NULL;
}

/* Explores every crash point of sc from snapshots (forked children, xo->jobs at once),
 * with the replay path's verdicts and order (wsc.h); 0, WS_ENOMEM or WS_EINVAL. */
int wsc_explore_with(const wsc_scenario *sc, const wsc_options *opt,
                     const wsc_explore_options *xo, wsc_exploration *out)
{
    memset(out, 0, sizeof *out);
    static const wsc_explore_options defaults = {0};
    if (!xo) xo = &defaults;
    if (xo->nshards && (xo->shard < 1 || xo->shard > xo->nshards)) return WS_EINVAL;
    wsc_options o = opt ? *opt : (wsc_options){0};
    if (sc->consumer_line) { /* a file that drives consumer processes: explore_proc.c */
        int rc = wsc_explore_process(sc, &o, xo, out);
        if (rc == WS_ENOMEM) wsc_exploration_free(out);
        return rc;
    }
    if (o.backend && strcmp(o.backend, "fake") != 0) {
        out->error = strdup0("the explorer runs on the in-process fake only (it replays the "
                             "scenario once per crash point)");
        return out->error ? 0 : WS_ENOMEM;
    }
    o.backend = NULL;
    /* each point is the one crash of its run: the file's own crash faults are left out
     * (they would mix the file's crash with the explored one); error, refuse and
     * disconnect (the consumer lives on) stay */
    o.no_crash_faults = 1;
    char faults[128] = ""; /* the lines of the crash faults left out, for the message */
    for (size_t i = 0, k = 0; i < sc->nst; i++)
        if (sc->st[i].kind == K_FAULT && sc->st[i].fault.kind != WS_FAULT_ERROR &&
            sc->st[i].fault.kind != WS_FAULT_REFUSE &&
            sc->st[i].fault.kind != WS_FAULT_DISCONNECT && k + 16 < sizeof faults)
            k += (size_t)snprintf(faults + k, sizeof faults - k, "%s%d", k ? ", " : "",
                                  sc->st[i].line);
    /* the baseline: which round trips the first process makes */
    wsc_runner *r = wsc_runner_new(sc, &o);
    if (!r) return WS_ENOMEM;
    for (size_t i = 0; i < sc->nst && !wsc_runner_failed(r); i++) wsc_runner_exec(r, i);
    if (wsc_runner_oom(r)) {
        wsc_runner_free(r);
        return WS_ENOMEM;
    }
    if (wsc_runner_failed(r)) {
        wsc_result res;
        wsc_runner_finish(r, &res);
        size_t len = strlen(res.report ? res.report : "") + 160;
        out->error = wsc_runner_oom(r) ? NULL : wsi_malloc(len);
        if (!out->error) {
            wsc_result_free(&res);
            wsc_runner_free(r);
            return WS_ENOMEM;
        }
        snprintf(out->error, len, "the scenario fails without a crash%s%s%s:\n%s",
                 faults[0] ? " (explore leaves out its crash faults, line " : "", faults,
                 faults[0] ? ": each crash point is the one crash of its run)" : "",
                 res.report ? res.report : "");
        wsc_result_free(&res);
        wsc_runner_free(r);
        return 0;
    }
    ws_sim *sim = wsc_runner_sim(r);
    const char *recovery_env = getenv("WSIM_EXPLORE_RECOVERY");
    int full = xo->full_recovery || (recovery_env && strcmp(recovery_env, "full") == 0);
    int bounded = full ? 0 : bounded_safe(sc, ws_sim_fake(sim));
    if (bounded < 0) {
        wsc_runner_free(r);
        return WS_ENOMEM;
    }
    out->bounded = bounded;
    recovery_plan plan = {recovery_step(sc), out->bounded, !full};
    size_t nrt = ws_sim_round_trip_count(sim);
    for (size_t i = 0; i < nrt; i++) {
        ws_rt_info rt;
        ws_sim_round_trip(sim, i, &rt);
        /* the first process only; a subscriber connection only ever sends SUBSCRIBE,
         * inside the subscribe step, before any fault could be armed on it */
        if (rt.incarnation != 1 || strncmp(rt.conn, "subscriber", 10) == 0) continue;
        for (size_t k = 0; k <= rt.n; k++) {
            wsc_crash_point *v = wsi_realloc(out->points, (out->npoints + 1) * sizeof *v);
            if (!v) {
                wsc_runner_free(r);
                wsc_exploration_free(out);
                return WS_ENOMEM;
            }
            out->points = v;
            wsc_crash_point *p = &out->points[out->npoints++];
            memset(p, 0, sizeof *p);
            snprintf(p->conn, sizeof p->conn, "%s", rt.conn);
            p->round_trip = rt.index;
            /* k = 0 .. n-1: before command k+1; k = n: all applied, replies lost */
            p->command = k < rt.n ? k + 1 : 0;
            p->commands = rt.n;
            p->command_text = strdup0(rt.commands[k < rt.n ? k : rt.n - 1]);
            if (!p->command_text) {
                wsc_runner_free(r);
                wsc_exploration_free(out);
                return WS_ENOMEM;
            }
            size_t no = out->npoints;
            p->explored = !xo->nshards || (no + xo->nshards - xo->shard) % xo->nshards == 0;
        }
    }
    wsc_runner_free(r);
#ifdef __GLIBC__
    /* give the baseline's memory back: every page still mapped is a page-table entry each
     * fork copies (at 10,000 deliveries that copy was the largest cost of a point) */
    if (!xo->replay) malloc_trim(0);
#endif
    o.no_trace_text = 1; /* the points' runs are classified, never printed */
    snap s = {0};
    if (!xo->replay && out->npoints) {
        s.sc = sc;
        s.out = out;
        s.plan = plan;
        s.jobs = xo->jobs > 0 ? (size_t)xo->jobs : 1;
        s.started = wsi_calloc(out->npoints, 1);
        s.wanted = wsi_calloc(out->npoints, 1);
        s.replica_fd = -1;
        s.mine = s.wanted;
        if (!s.started || !s.wanted) {
            s.nomem = 1;
        } else {
            for (size_t i = 0; i < out->npoints; i++)
                s.wanted[i] = (unsigned char)out->points[i].explored;
            const char *kill_env = getenv("WSIM_EXPLORE_TEST_KILL");
            s.kill_point = kill_env ? atoi(kill_env) : 0;
            const char *kill_replica_env = getenv("WSIM_EXPLORE_TEST_KILL_REPLICA");
            s.kill_replica_point = kill_replica_env ? atoi(kill_replica_env) : 0;
            fflush(NULL); /* a child never flushes, but stdio buffers are copied by fork */
            s.max_children = s.jobs;
            if (s.jobs > 1) start_replicas(&s);
            explore_snapshots(sc, &o, &s);
            if (s.replica_fd >= 0) replica_finish(&s, &o);
            out->replayed += s.replica_replayed;
        }
        if (s.r) wsc_runner_free(s.r); /* (left by a run that ran out of memory) */
        s.r = NULL;
    }
    for (size_t i = 0; i < out->npoints && !out->failure && !s.nomem; i++) {
        wsc_crash_point *p = &out->points[i];
        if (!p->explored) continue;
        if (!s.started || !s.started[i]) {
            if (explore_point(sc, &o, p, &plan)) {
                s.nomem = 1;
                break;
            }
            if (s.started) out->replayed++;
        }
        wsc_exploration_count(out, p);
    }
    if (s.mine != s.wanted) wsi_free(s.mine);
    wsi_free(s.started);
    wsi_free(s.wanted);
    wsi_free(s.rep);
    wsi_free(s.order[0]);
    wsi_free(s.order[1]);
    wsi_free(s.w);
    if (s.nomem) {
        wsc_exploration_free(out);
        return WS_ENOMEM;
    }
    return 0;
}

/* Explores every crash point of sc in this process, replaying the scenario from the
 * start for each (wsc.h). */
int wsc_explore(const wsc_scenario *sc, const wsc_options *opt, wsc_exploration *out)
{
    static const wsc_explore_options replay = {.replay = 1};
    return wsc_explore_with(sc, opt, &replay, out);
}
