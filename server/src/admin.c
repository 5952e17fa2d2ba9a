/* admin.c -- the server's introspection and administration commands: MONITOR, SLOWLOG,
 * LATENCY, DEBUG (a subset), LOLWUT, MODULE, and the cluster and replication commands a
 * standalone redis-server 7.0.15 answers with errors or no-ops (ASKING, READONLY,
 * READWRITE, RESTORE-ASKING, BGREWRITEAOF, REPLICAOF/SLAVEOF, SYNC/PSYNC, REPLCONF,
 * FAILOVER, MIGRATE).
 *
 * MONITOR, the slow log and the latency monitor watch every command: the fake reports its
 * commands through its call hook (fr_server_set_call_hook: a client's commands, EXEC's
 * queue, a script's redis.call), the server its own (frs_admin_host_called), as Redis's
 * call() feeds them (server.c, replication.c replicationFeedMonitors, slowlog.c,
 * latency.c).  Durations: on the wall clock the measured microseconds; on the virtual
 * clock a command takes the time the virtual clock moved while it ran (DEBUG SLEEP moves
 * it), so nothing is slow unless slowlog-log-slower-than is 0. */
#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/time.h>
#include <time.h>

#include "frs.h"

#define SLOWLOG_MAX_ARGC 32    /* Redis's SLOWLOG_ENTRY_MAX_ARGC */
#define SLOWLOG_MAX_STRING 128 /* Redis's SLOWLOG_ENTRY_MAX_STRING */
#define LATENCY_TS_LEN 160     /* Redis's LATENCY_TS_LEN: samples kept per event */
#define LATENCY_MAX_EVENTS 16

/* One slow log entry, as slowlog.c's slowlogEntry. */
typedef struct slow_entry {
    long long id;       /* slowlog_entry_id when it was logged */
    long long time;     /* Unix seconds */
    long long usec;     /* its duration */
    int argc;           /* at most SLOWLOG_MAX_ARGC */
    char **argv;        /* the (trimmed) arguments */
    size_t *argvlen;
    char *peer;         /* "ip:port" */
    char *name;         /* CLIENT SETNAME, "" */
} slow_entry;

/* One latency event's time series (latency.c's latencyTimeSeries). */
typedef struct lat_event {
    char name[32];
    int idx;                       /* the next sample's slot */
    long long max;                 /* the all-time highest latency (ms) */
    struct { long long time, latency; } samples[LATENCY_TS_LEN];
} lat_event;

typedef struct frs_admin {
    frs_conn **mon;               /* MONITOR clients, in the order they asked */
    size_t nmon, capmon;
    slow_entry *slow;             /* the slow log, oldest first */
    size_t nslow, capslow;
    long long slow_next_id;       /* slowlog_entry_id */
    long long slower_than;        /* slowlog-log-slower-than (us; -1 off) */
    long long slow_max_len;       /* slowlog-max-len */
    long long latency_threshold;  /* latency-monitor-threshold (ms; 0 off) */
    lat_event events[LATENCY_MAX_EVENTS]; /* in the order they first happened */
    size_t nevents;
    frs_conn *current;            /* the connection whose request runs */
    char *self_lines;             /* MONITOR lines for current itself: they follow its reply */
    size_t self_len, self_cap;
    int script_argc;              /* the running EVAL/FCALL's arguments: a script's reads */
    char **script_argv;           /*   are tracked as its declared keys (Redis's call()) */
    size_t *script_argvlen;
    int active_expire_off;        /* DEBUG SET-ACTIVE-EXPIRE 0 */
    int skip_checksum;            /* DEBUG SET-SKIP-CHECKSUM-VALIDATION 1 */
    int deny_scripts_off;         /* DEBUG SET-DISABLE-DENY-SCRIPTS 1: scripts may call DEBUG */
    void *tracking;               /* tracking.c's tables, NULL until first used */
} frs_admin;

void **frs_admin_tracking_slot(frs_server *srv) { return srv->admin ? &srv->admin->tracking : NULL; }

frs_conn *frs_admin_current(frs_server *srv) { return srv->admin ? srv->admin->current : NULL; }

/* ----- Clocks ------------------------------------------------------------------------ */

/* Now as Unix seconds and microseconds: the real time on a wall-clock server, the fake's
 * clock on a virtual one (MONITOR's timestamps, the slow log's and latency's times). */
static void now_tv(frs_server *srv, long long *sec, long long *usec)
{
    if (srv->opt.wall_clock) {
        struct timeval tv;
        gettimeofday(&tv, NULL);
        *sec = tv.tv_sec;
        *usec = tv.tv_usec;
    } else {
        int64_t ms = fr_clock_now(srv->fake);
        *sec = ms / 1000;
        *usec = (ms % 1000) * 1000;
    }
}

static long long now_sec(frs_server *srv)
{
    long long s, us;
    now_tv(srv, &s, &us);
    return s;
}

/* ----- Parameters -------------------------------------------------------------------- */

static long long param_ll(frs_server *srv, const char *name, long long dflt)
{
    const char *v = frs_config_get(srv, name);
    if (!v) return dflt;
    char *end;
    errno = 0;
    long long x = strtoll(v, &end, 10);
    return errno || end == v ? dflt : x;
}

void frs_admin_config_changed(frs_server *srv)
{
    frs_admin *a = srv->admin;
    if (!a) return;
    a->slower_than = param_ll(srv, "slowlog-log-slower-than", 10000);
    a->slow_max_len = param_ll(srv, "slowlog-max-len", 128);
    a->latency_threshold = param_ll(srv, "latency-monitor-threshold", 0);
}

/* ----- MONITOR ------------------------------------------------------------------------ */

/* sdscatrepr: the argument in double quotes, escaped as Redis prints it. */
static void cat_repr(char **buf, size_t *len, size_t *cap, const char *p, size_t n)
{
    size_t need = *len + 4 * n + 3;
    if (need > *cap) {
        size_t nc = *cap ? *cap : 256;
        while (nc < need) nc *= 2;
        char *nb = realloc(*buf, nc);
        if (!nb) frs_oom_abort(__func__);
        *buf = nb;
        *cap = nc;
    }
    char *o = *buf + *len;
    *o++ = '"';
    for (size_t i = 0; i < n; i++) {
        unsigned char ch = (unsigned char)p[i];
        switch (ch) {
        case '\\': *o++ = '\\'; *o++ = '\\'; break;
        case '"': *o++ = '\\'; *o++ = '"'; break;
        case '\n': *o++ = '\\'; *o++ = 'n'; break;
        case '\r': *o++ = '\\'; *o++ = 'r'; break;
        case '\t': *o++ = '\\'; *o++ = 't'; break;
        case '\a': *o++ = '\\'; *o++ = 'a'; break;
        case '\b': *o++ = '\\'; *o++ = 'b'; break;
        default:
            if (ch >= 0x20 && ch <= 0x7e) {
                *o++ = (char)ch;
            } else {
                static const char hex[] = "0123456789abcdef";
                *o++ = '\\';
                *o++ = 'x';
                *o++ = hex[ch >> 4];
                *o++ = hex[ch & 15];
            }
        }
    }
    *o++ = '"';
    *len = (size_t)(o - *buf);
}

/* The peer as MONITOR shows it: "unix:PATH" for the unix socket, else "ip:port". */
static void peer_of(frs_conn *c, char *buf, size_t cap)
{
    if (c->is_unix) snprintf(buf, cap, "unix:%s", c->srv->unixsocket ? c->srv->unixsocket : "");
    else snprintf(buf, cap, "%s", c->addr);
}

/* Redis's replicationFeedMonitors: one status line to every MONITOR client. */
static void feed_monitors(frs_server *srv, frs_conn *from, int lua, int db, int argc,
                          const char *const *argv, const size_t *argvlen)
{
    frs_admin *a = srv->admin;
    if (!a || a->nmon == 0) return;
    long long sec, usec;
    now_tv(srv, &sec, &usec);
    char head[300], peer[200];
    if (lua) snprintf(head, sizeof(head), "+%lld.%06lld [%d lua] ", sec, usec, db);
    else {
        if (from) peer_of(from, peer, sizeof(peer));
        else snprintf(peer, sizeof(peer), "?:0");
        snprintf(head, sizeof(head), "+%lld.%06lld [%d %s] ", sec, usec, db, peer);
    }
    size_t len = strlen(head), cap = len + 64;
    char *buf = malloc(cap);
    if (!buf) frs_oom_abort(__func__);
    memcpy(buf, head, len);
    for (int i = 0; i < argc; i++) {
        cat_repr(&buf, &len, &cap, argv[i], argvlen[i]);
        if (i != argc - 1) buf[len++] = ' ';
    }
    if (len + 2 > cap) {
        char *nb = realloc(buf, len + 2);
        if (!nb) frs_oom_abort(__func__);
        buf = nb;
    }
    buf[len++] = '\r';
    buf[len++] = '\n';
    for (size_t i = 0; i < a->nmon; i++) {
        frs_conn *m = a->mon[i];
        if (m->close_asap) continue;
        if (m == a->current) {
            /* Redis appends the line after the command's reply: hold it until then */
            if (a->self_len + len > a->self_cap) {
                size_t nc = a->self_cap ? a->self_cap : 256;
                while (nc < a->self_len + len) nc *= 2;
                char *nb = realloc(a->self_lines, nc);
                if (!nb) frs_oom_abort(__func__);
                a->self_lines = nb;
                a->self_cap = nc;
            }
            memcpy(a->self_lines + a->self_len, buf, len);
            a->self_len += len;
            continue;
        }
        frs_reply_raw(m, buf, len);
        frs_conn_want_flush(m);
    }
    free(buf);
}

void frs_cmd_monitor(frs_conn *c, int argc, const char *const *argv, const size_t *argvlen)
{
    (void)argc, (void)argv, (void)argvlen;
    frs_admin *a = c->srv->admin;
    /* MULTI sets CLIENT_DENY_BLOCKING: MONITOR queued in a transaction is refused at EXEC */
    if (c->in_exec) {
        frs_reply_error(c, "ERR MONITOR isn't allowed for DENY BLOCKING client");
        return;
    }
    if (c->monitor) return; /* already one: Redis answers nothing */
    if (a->nmon == a->capmon) {
        size_t cap = a->capmon ? 2 * a->capmon : 4;
        frs_conn **n = realloc(a->mon, cap * sizeof(*n));
        if (!n) frs_oom_abort(__func__);
        a->mon = n;
        a->capmon = cap;
    }
    a->mon[a->nmon++] = c;
    c->monitor = 1;
    frs_reply_ok(c);
}

int frs_admin_refuse_replica(frs_conn *c, const frs_cmd *cmd)
{
    /* processCommand: a replica (MONITOR makes one) may not run what reads, writes or
     * may replicate */
    const char *f = cmd->fake_flags;
    int keyspace = f && (strstr(f, "readonly") || strstr(f, "write"));
    if (!keyspace && f)
        keyspace = !strncmp(cmd->name, "eval", 4) || !strncmp(cmd->name, "fcall", 5) ||
                   !strcmp(cmd->name, "publish") || !strcmp(cmd->name, "spublish") ||
                   !strcmp(cmd->name, "function|load") || !strcmp(cmd->name, "script|load");
    if (!keyspace) return 0;
    if (fr_client_in_multi(c->fc)) fr_client_flag_transaction(c->fc);
    fr_stats_record_rejected(c->srv->fake, cmd->name);
    frs_reply_error(c, "ERR Replica can't interact with the keyspace");
    return 1;
}

/* ----- The slow log ------------------------------------------------------------------ */

static void slow_free(slow_entry *e)
{
    for (int i = 0; i < e->argc; i++) free(e->argv[i]);
    free(e->argv);
    free(e->argvlen);
    free(e->peer);
    free(e->name);
}

/* slowlogPushEntryIfNeeded with slowlogCreateEntry's trimming: at most 32 arguments (the
 * last says how many more there were) and 128 bytes of each ("... (N more bytes)"). */
static void slowlog_push(frs_server *srv, frs_conn *from, int argc, const char *const *argv,
                         const size_t *argvlen, long long usec)
{
    frs_admin *a = srv->admin;
    if (a->slower_than < 0 || usec < a->slower_than) return;
    a->slow = frs_array_grow(a->slow, &a->capslow, a->nslow, sizeof(*a->slow), 16);
    slow_entry *e = &a->slow[a->nslow++];
    int n = argc > SLOWLOG_MAX_ARGC ? SLOWLOG_MAX_ARGC : argc;
    e->argc = n;
    e->argv = malloc(sizeof(char *) * (size_t)(n ? n : 1));
    e->argvlen = malloc(sizeof(size_t) * (size_t)(n ? n : 1));
    if (!e->argv || !e->argvlen) frs_oom_abort(__func__);
    for (int j = 0; j < n; j++) {
        char tmp[64];
        if (n != argc && j == n - 1) {
            int k = snprintf(tmp, sizeof(tmp), "... (%d more arguments)", argc - n + 1);
            e->argv[j] = frs_memdup(tmp, (size_t)k);
            e->argvlen[j] = (size_t)k;
        } else if (argvlen[j] > SLOWLOG_MAX_STRING) {
            int k = snprintf(tmp, sizeof(tmp), "... (%lu more bytes)",
                             (unsigned long)(argvlen[j] - SLOWLOG_MAX_STRING));
            char *d = malloc(SLOWLOG_MAX_STRING + (size_t)k + 1);
            if (!d) frs_oom_abort(__func__);
            memcpy(d, argv[j], SLOWLOG_MAX_STRING);
            memcpy(d + SLOWLOG_MAX_STRING, tmp, (size_t)k + 1);
            e->argv[j] = d;
            e->argvlen[j] = SLOWLOG_MAX_STRING + (size_t)k;
        } else {
            e->argv[j] = frs_memdup(argv[j], argvlen[j]);
            e->argvlen[j] = argvlen[j];
        }
    }
    e->time = now_sec(srv);
    e->usec = usec;
    e->id = a->slow_next_id++;
    e->peer = frs_memdup(from ? from->addr : "?:0", strlen(from ? from->addr : "?:0"));
    const char *nm = from && from->name ? from->name : "";
    e->name = frs_memdup(nm, strlen(nm));
    while ((long long)a->nslow > a->slow_max_len) {
        slow_free(&a->slow[0]);
        memmove(&a->slow[0], &a->slow[1], (a->nslow - 1) * sizeof(a->slow[0]));
        a->nslow--;
    }
}

void frs_cmd_slowlog_get(frs_conn *c, int argc, const char *const *argv, const size_t *argvlen)
{
    frs_admin *a = c->srv->admin;
    if (argc > 3) {
        frs_reply_errorf(c, "ERR unknown subcommand or wrong number of arguments for '%.*s'. "
                            "Try SLOWLOG HELP.", (int)(argvlen[1] > 128 ? 128 : argvlen[1]),
                         argv[1]);
        return;
    }
    long long count = 10;
    if (argc == 3) {
        /* getRangeLongFromObjectOrReply with a message: a non-number gets it too */
        if (!frs_string2ll(argv[2], argvlen[2], &count) || count < -1) {
            frs_reply_error(c, "ERR count should be greater than or equal to -1");
            return;
        }
        if (count == -1) count = (long long)a->nslow;
    }
    long long n = count < (long long)a->nslow ? count : (long long)a->nslow;
    frs_reply_array(c, (long)n);
    for (long long k = 0; k < n; k++) {
        slow_entry *e = &a->slow[a->nslow - 1 - (size_t)k];
        frs_reply_array(c, 6);
        frs_reply_ll(c, e->id);
        frs_reply_ll(c, e->time);
        frs_reply_ll(c, e->usec);
        frs_reply_array(c, e->argc);
        for (int j = 0; j < e->argc; j++) frs_reply_bulk(c, e->argv[j], e->argvlen[j]);
        frs_reply_bulk_cstr(c, e->peer);
        frs_reply_bulk_cstr(c, e->name);
    }
}

void frs_cmd_slowlog_len(frs_conn *c, int argc, const char *const *argv, const size_t *argvlen)
{
    (void)argc, (void)argv, (void)argvlen;
    frs_reply_ll(c, (long long)c->srv->admin->nslow);
}

void frs_cmd_slowlog_reset(frs_conn *c, int argc, const char *const *argv,
                           const size_t *argvlen)
{
    (void)argc, (void)argv, (void)argvlen;
    frs_admin *a = c->srv->admin;
    for (size_t i = 0; i < a->nslow; i++) slow_free(&a->slow[i]);
    a->nslow = 0;
    frs_reply_ok(c);
}

void frs_cmd_slowlog_help(frs_conn *c, int argc, const char *const *argv, const size_t *argvlen)
{
    (void)argc, (void)argv, (void)argvlen;
    static const char *const lines[] = {
        "GET [<count>]",
        "    Return top <count> entries from the slowlog (default: 10, -1 mean all).",
        "    Entries are made of:",
        "    id, timestamp, time in microseconds, arguments array, client IP and port,",
        "    client name",
        "LEN", "    Return the length of the slowlog.",
        "RESET", "    Reset the slowlog.",
        NULL,
    };
    frs_reply_help(c, "SLOWLOG", lines);
}

/* ----- The latency monitor ----------------------------------------------------------- */

static lat_event *event_find(frs_admin *a, const char *name, size_t n)
{
    for (size_t i = 0; i < a->nevents; i++)
        if (strlen(a->events[i].name) == n && strncasecmp(a->events[i].name, name, n) == 0)
            return &a->events[i];
    return NULL;
}

/* latencyAddSampleIfNeeded: a sample of ms milliseconds for event when over the threshold;
 * samples within one second keep the highest. */
static void latency_add(frs_server *srv, const char *event, long long ms)
{
    frs_admin *a = srv->admin;
    if (!a->latency_threshold || ms < a->latency_threshold) return;
    lat_event *e = event_find(a, event, strlen(event));
    if (!e) {
        if (a->nevents == LATENCY_MAX_EVENTS) return;
        e = &a->events[a->nevents++];
        memset(e, 0, sizeof(*e));
        snprintf(e->name, sizeof(e->name), "%s", event);
    }
    long long now = now_sec(srv);
    if (ms > e->max) e->max = ms;
    int prev = (e->idx + LATENCY_TS_LEN - 1) % LATENCY_TS_LEN;
    if (e->samples[prev].time == now) {
        if (ms > e->samples[prev].latency) e->samples[prev].latency = ms;
        return;
    }
    e->samples[e->idx].time = now;
    e->samples[e->idx].latency = ms;
    e->idx = (e->idx + 1) % LATENCY_TS_LEN;
}

void frs_cmd_latency_history(frs_conn *c, int argc, const char *const *argv,
                             const size_t *argvlen)
{
    (void)argc;
    lat_event *e = event_find(c->srv->admin, argv[2], argvlen[2]);
    if (!e) {
        frs_reply_array(c, 0);
        return;
    }
    long n = 0;
    for (int j = 0; j < LATENCY_TS_LEN; j++) n += e->samples[(e->idx + j) % LATENCY_TS_LEN].time != 0;
    frs_reply_array(c, n);
    for (int j = 0; j < LATENCY_TS_LEN; j++) {
        int i = (e->idx + j) % LATENCY_TS_LEN;
        if (!e->samples[i].time) continue;
        frs_reply_array(c, 2);
        frs_reply_ll(c, e->samples[i].time);
        frs_reply_ll(c, e->samples[i].latency);
    }
}

void frs_cmd_latency_latest(frs_conn *c, int argc, const char *const *argv,
                            const size_t *argvlen)
{
    (void)argc, (void)argv, (void)argvlen;
    frs_admin *a = c->srv->admin;
    frs_reply_array(c, (long)a->nevents);
    for (size_t i = 0; i < a->nevents; i++) {
        lat_event *e = &a->events[i];
        int last = (e->idx + LATENCY_TS_LEN - 1) % LATENCY_TS_LEN;
        frs_reply_array(c, 4);
        frs_reply_bulk_cstr(c, e->name);
        frs_reply_ll(c, e->samples[last].time);
        frs_reply_ll(c, e->samples[last].latency);
        frs_reply_ll(c, e->max);
    }
}

void frs_cmd_latency_reset(frs_conn *c, int argc, const char *const *argv,
                           const size_t *argvlen)
{
    frs_admin *a = c->srv->admin;
    long long resets = 0;
    if (argc == 2) {
        resets = (long long)a->nevents;
        a->nevents = 0;
    } else {
        for (int j = 2; j < argc; j++) {
            lat_event *e = event_find(a, argv[j], argvlen[j]);
            if (!e) continue;
            size_t i = (size_t)(e - a->events);
            memmove(&a->events[i], &a->events[i + 1], (a->nevents - i - 1) * sizeof(*e));
            a->nevents--;
            resets++;
        }
    }
    frs_reply_ll(c, resets);
}

/* The numbers of analyzeLatencyForEvent: samples, average, mean deviation, period. */
static void analyze(lat_event *e, long long now, int *samples, long long *avg, long long *mad,
                    long long *period)
{
    *samples = 0;
    long long sum = 0, oldest = 0;
    for (int j = 0; j < LATENCY_TS_LEN; j++) {
        if (!e->samples[j].time) continue;
        (*samples)++;
        sum += e->samples[j].latency;
        if (!oldest || e->samples[j].time < oldest) oldest = e->samples[j].time;
    }
    *avg = *samples ? sum / *samples : 0;
    *period = now - oldest;
    if (*period == 0) *period = 1;
    long long dev = 0;
    for (int j = 0; j < LATENCY_TS_LEN; j++) {
        if (!e->samples[j].time) continue;
        long long d = e->samples[j].latency - *avg;
        dev += d < 0 ? -d : d;
    }
    *mad = *samples ? dev / *samples : 0;
}

void frs_cmd_latency_doctor(frs_conn *c, int argc, const char *const *argv,
                            const size_t *argvlen)
{
    (void)argc, (void)argv, (void)argvlen;
    frs_admin *a = c->srv->admin;
    char *txt = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&txt, &len);
    if (!f) frs_oom_abort(__func__);
    if (a->nevents == 0 && a->latency_threshold == 0) {
        fputs("I'm sorry, Dave, I can't do that. Latency monitoring is disabled in this Redis "
              "instance. You may use \"CONFIG SET latency-monitor-threshold <milliseconds>.\" "
              "in order to enable it. If we weren't in a deep space mission I'd suggest to take "
              "a look at https://redis.io/topics/latency-monitor.\n", f);
    } else if (a->nevents == 0) {
        fputs("Dave, no latency spike was observed during the lifetime of this Redis instance, "
              "not in the slightest bit. I honestly think you ought to sit down calmly, take a "
              "stress pill, and think things over.\n", f);
    } else {
        /* the per-event lines of createLatencyReport; the advice that follows them in
         * Redis depends on the machine and is replaced by its no-advice closing line */
        long long now = now_sec(c->srv);
        for (size_t i = 0; i < a->nevents; i++) {
            lat_event *e = &a->events[i];
            int samples;
            long long avg, mad, period;
            analyze(e, now, &samples, &avg, &mad, &period);
            if (i == 0)
                fputs("Dave, I have observed latency spikes in this Redis instance. You don't "
                      "mind talking about it, do you Dave?\n\n", f);
            fprintf(f, "%zu. %s: %d latency spikes (average %lums, mean deviation %lums, period "
                       "%.2f sec). Worst all time event %lums.\n",
                    i + 1, e->name, samples, (unsigned long)avg, (unsigned long)mad,
                    (double)period / samples, (unsigned long)e->max);
        }
        fputs("\nWhile there are latency events logged, I'm not able to suggest any easy fix. "
              "Please use the Redis community to get some help, providing this report in your "
              "help request.\n", f);
    }
    fclose(f);
    frs_reply_verbatim(c, txt, len);
    free(txt);
}

void frs_cmd_latency_graph(frs_conn *c, int argc, const char *const *argv,
                           const size_t *argvlen)
{
    (void)argc;
    lat_event *e = event_find(c->srv->admin, argv[2], argvlen[2]);
    if (!e) {
        frs_reply_errorf(c, "ERR No samples available for event '%.*s'", (int)argvlen[2],
                         argv[2]);
        return;
    }
    /* latencyCommandGenSparkeline's header and rule; the sparkline below it is drawn
     * with one row of '#' per sample's share of the highest (a simplified rendering) */
    long long lo = -1, hi = 0;
    for (int j = 0; j < LATENCY_TS_LEN; j++) {
        if (!e->samples[j].time) continue;
        long long v = e->samples[j].latency;
        if (lo < 0 || v < lo) lo = v;
        if (v > hi) hi = v;
    }
    char *txt = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&txt, &len);
    if (!f) frs_oom_abort(__func__);
    fprintf(f, "%s - high %lu ms, low %lu ms (all time high %lu ms)\n", e->name,
            (unsigned long)hi, (unsigned long)(lo < 0 ? 0 : lo), (unsigned long)e->max);
    for (int j = 0; j < 80; j++) fputc('-', f);
    fputc('\n', f);
    for (int j = 0; j < LATENCY_TS_LEN; j++) {
        int i = (e->idx + j) % LATENCY_TS_LEN;
        if (e->samples[i].time) fputc(e->samples[i].latency == hi ? '#' : '_', f);
    }
    fputc('\n', f);
    fclose(f);
    frs_reply_verbatim(c, txt, len);
    free(txt);
}

/* fillCommandCDF for row i under its name. */
static void reply_cdf(frs_conn *c, size_t i, const char *name)
{
    uint64_t calls = 0, cum[64];
    int64_t usec[64];
    size_t n = 0;
    fr_stats_latency_cdf(c->srv->fake, i, &calls, usec, cum, 64, &n);
    frs_reply_bulk_cstr(c, name);
    frs_reply_map(c, 2);
    frs_reply_bulk_cstr(c, "calls");
    frs_reply_ll(c, (long long)calls);
    frs_reply_bulk_cstr(c, "histogram_usec");
    frs_reply_map(c, (long)n);
    for (size_t k = 0; k < n; k++) {
        frs_reply_ll(c, usec[k]);
        frs_reply_ll(c, (long long)cum[k]);
    }
}

void frs_cmd_latency_histogram(frs_conn *c, int argc, const char *const *argv,
                               const size_t *argvlen)
{
    fr_server *fake = c->srv->fake;
    size_t rows = fr_stats_command_rows(fake);
    /* which rows: all with samples, or those the arguments name (a container brings its
     * subcommands; an unknown name is skipped) */
    char *want = calloc(rows ? rows : 1, 1);
    if (!want) frs_oom_abort(__func__);
    long n = 0;
    for (size_t i = 0; i < rows; i++) {
        fr_command_stats st;
        if (fr_stats_command_at(fake, i, &st) != 0 || !st.has_latency) continue;
        int pick = argc == 2;
        for (int j = 2; j < argc && !pick; j++) {
            size_t nl = strlen(st.name);
            if (nl == argvlen[j] && strncasecmp(st.name, argv[j], nl) == 0) pick = 1;
            const char *bar = strchr(st.name, '|');
            if (bar && (size_t)(bar - st.name) == argvlen[j] &&
                strncasecmp(st.name, argv[j], argvlen[j]) == 0) {
                /* the container must be a known command */
                const frs_cmd *cont;
                const char *one[1] = {argv[j]};
                size_t onel[1] = {argvlen[j]};
                if (frs_cmd_lookup(1, one, onel, &cont) || cont) pick = 1;
            }
        }
        if (pick) {
            want[i] = 1;
            n++;
        }
    }
    frs_reply_map(c, n);
    for (size_t i = 0; i < rows; i++) {
        if (!want[i]) continue;
        fr_command_stats st;
        fr_stats_command_at(fake, i, &st);
        reply_cdf(c, i, st.name);
    }
    free(want);
}

void frs_cmd_latency_help(frs_conn *c, int argc, const char *const *argv, const size_t *argvlen)
{
    (void)argc, (void)argv, (void)argvlen;
    static const char *const lines[] = {
        "DOCTOR", "    Return a human readable latency analysis report.",
        "GRAPH <event>", "    Return an ASCII latency graph for the <event> class.",
        "HISTORY <event>", "    Return time-latency samples for the <event> class.",
        "LATEST", "    Return the latest latency samples for all events.",
        "RESET [<event> ...]", "    Reset latency data of one or more <event> classes.",
        "    (default: reset all data for all event classes)",
        "HISTOGRAM [COMMAND ...]",
        "    Return a cumulative distribution of latencies in the format of a histogram for "
        "the specified command names.",
        "    If no commands are specified then all histograms are replied.",
        NULL,
    };
    frs_reply_help(c, "LATENCY", lines);
}

/* ----- Observing commands ------------------------------------------------------------- */

/* Arguments Redis redacts (redactClientCommandArgument) before MONITOR and the slow log see
 * them: AUTH's, HELLO's AUTH pair, MIGRATE's AUTH/AUTH2 credentials, CONFIG SET's values of
 * sensitive parameters.  Marks redact[i]. */
static void redactions(int argc, const char *const *argv, const size_t *argvlen, char *redact)
{
    const char *name = argv[0];
    size_t nl = argvlen[0];
#define IS(i, w) (argvlen[i] == strlen(w) && strncasecmp(argv[i], w, argvlen[i]) == 0)
    if (nl == 4 && !strncasecmp(name, "auth", 4)) {
        for (int i = 1; i < argc; i++) redact[i] = 1;
    } else if (nl == 5 && !strncasecmp(name, "hello", 5)) {
        for (int j = 2; j < argc; j++) {
            if (IS(j, "auth") && argc - 1 - j >= 2) {
                redact[j + 1] = redact[j + 2] = 1;
                j += 2;
            } else if (IS(j, "setname") && argc - 1 - j >= 1) {
                j++;
            } else {
                break;
            }
        }
    } else if (nl == 7 && !strncasecmp(name, "migrate", 7)) {
        for (int j = 6; j < argc; j++) {
            if (IS(j, "auth") && j + 1 < argc) {
                redact[++j] = 1;
            } else if (IS(j, "auth2") && j + 2 < argc) {
                redact[j + 1] = redact[j + 2] = 1;
                j += 2;
            } else if (IS(j, "keys")) {
                break;
            }
        }
    } else if (nl == 6 && !strncasecmp(name, "config", 6) && argc >= 4 && IS(1, "set")) {
        for (int j = 2; j + 1 < argc; j += 2)
            if (IS(j, "masterauth") || IS(j, "masteruser") || IS(j, "requirepass"))
                redact[j + 1] = 1;
    }
#undef IS
}

/* The server's rows Redis flags admin (kept from MONITOR). */
static int host_is_admin(const char *name)
{
    static const char *const names[] = {
        "monitor", "debug", "config|get", "config|set", "config|resetstat", "config|rewrite",
        "client|kill", "client|list", "client|no-evict", "client|pause", "client|unblock",
        "client|unpause", "slowlog|get", "slowlog|len", "slowlog|reset", "latency|doctor",
        "latency|graph", "latency|histogram", "latency|history", "latency|latest",
        "latency|reset", "module|list", "module|load", "module|loadex", "module|unload",
        "bgsave", "save", "shutdown", "lastsave", "role", "bgrewriteaof", "replicaof",
        "slaveof", "sync", "psync", "replconf", "failover", NULL};
    for (size_t i = 0; names[i]; i++)
        if (!strcmp(names[i], name)) return 1;
    return 0;
}

/* The duration a command is charged with: measured on the wall clock, 0 on the virtual
 * one for the fake's commands (the virtual clock stands still while they run). */
static long long charged(frs_server *srv, uint64_t usec)
{
    return srv->opt.wall_clock ? (long long)usec : 0;
}

/* Frees a saved copy of a command's arguments (a blocked command's, a script's caller's)
 * and leaves it empty. */
static void saved_argv_clear(int *argc, char ***argv, size_t **argvlen)
{
    for (int i = 0; i < *argc; i++) free((*argv)[i]);
    free(*argv);
    free(*argvlen);
    *argv = NULL;
    *argvlen = NULL;
    *argc = 0;
}

/* Replaces a saved copy of a command's arguments with a copy of ev's. */
static void saved_argv_set(int *argc, char ***argv, size_t **argvlen, const fr_call_event *ev)
{
    saved_argv_clear(argc, argv, argvlen);
    *argv = malloc(sizeof(char *) * (size_t)ev->argc);
    *argvlen = malloc(sizeof(size_t) * (size_t)ev->argc);
    if (!*argv || !*argvlen) frs_oom_abort(__func__);
    for (int i = 0; i < ev->argc; i++) {
        (*argv)[i] = frs_memdup(ev->argv[i], ev->argvlen[i]);
        (*argvlen)[i] = ev->argvlen[i];
    }
    *argc = ev->argc;
}

/* The fake's call hook. */
static void on_call(void *ctx, const fr_call_event *ev)
{
    frs_server *srv = ctx;
    frs_admin *a = srv->admin;
    long long usec = charged(srv, ev->usec);
    /* FLUSHALL with save points writes the emptied keyspace (flushAllDataAndResetRDB) */
    if (!ev->before && ev->name[0] == 'f' && !strcmp(ev->name, "flushall"))
        frs_persist_flushall(srv);
    if (ev->from_script && !ev->before && srv->rec) frs_record_script_call(srv, ev);
    /* the common case first: nobody watches, nothing slow, nothing tracked */
    if (!ev->before && !a->nmon && !(ev->flags & FR_CALL_BLOCKED) &&
        (a->slower_than < 0 || usec < a->slower_than) &&
        (!a->latency_threshold || usec / 1000 < a->latency_threshold) &&
        (!(ev->flags & FR_CALL_READONLY) || !a->tracking))
        return;
    frs_conn *from = frs_conn_of(srv, ev->client);
    int script_cmd = !strncmp(ev->name, "eval", 4) || !strncmp(ev->name, "fcall", 5);
    if (ev->before) {
        feed_monitors(srv, from, 0, ev->db, ev->argc, ev->argv, ev->argvlen);
        saved_argv_set(&a->script_argc, &a->script_argv, &a->script_argvlen, ev);
        return;
    }
    if (a->nmon && !script_cmd && !(ev->flags & FR_CALL_ADMIN))
        feed_monitors(srv, from, ev->from_script, ev->db, ev->argc, ev->argv, ev->argvlen);
    if (ev->flags & FR_CALL_BLOCKED) {
        /* logged when it is served (updateStatsOnUnblock) */
        if (from && !ev->from_script)
            saved_argv_set(&from->blocked_argc, &from->blocked_argv, &from->blocked_argvlen, ev);
    } else if (strcmp(ev->name, "exec") != 0) {
        if (ev->from_script) slowlog_push(srv, NULL, ev->argc, ev->argv, ev->argvlen, usec);
        else slowlog_push(srv, from, ev->argc, ev->argv, ev->argvlen, usec);
    }
    latency_add(srv, (ev->flags & FR_CALL_FAST) ? "fast-command" : "command", usec / 1000);
    /* client-side caching: the keys a readonly command read (a script's: its declared
     * keys, read from its caller's command) */
    if ((ev->flags & FR_CALL_READONLY) && !(ev->flags & FR_CALL_PUBSUB) && from &&
        (from->tracking & FRS_TRACK_ON) && !(from->tracking & FRS_TRACK_BCAST) &&
        strcmp(ev->name, "eval_ro") && strcmp(ev->name, "evalsha_ro") &&
        strcmp(ev->name, "fcall_ro")) {
        if (!ev->from_script) frs_tracking_remember(from, ev->argc, ev->argv, ev->argvlen);
        else if (a->script_argc)
            frs_tracking_remember(from, a->script_argc, (const char *const *)a->script_argv,
                                  a->script_argvlen);
    }
}

void frs_admin_unblocked(frs_conn *c, uint64_t usec)
{
    if (!c->blocked_argc) return;
    slowlog_push(c->srv, c, c->blocked_argc, (const char *const *)c->blocked_argv,
                 c->blocked_argvlen, charged(c->srv, usec));
    saved_argv_clear(&c->blocked_argc, &c->blocked_argv, &c->blocked_argvlen);
}

void frs_admin_host_called(frs_conn *c, const frs_cmd *cmd, int argc, const char *const *argv,
                           const size_t *argvlen, uint64_t usec)
{
    frs_server *srv = c->srv;
    frs_admin *a = srv->admin;
    if (!strcmp(cmd->group, "fake")) return; /* FAKE.* are not Redis's commands */
    char small[16];
    char *redact = argc <= 16 ? small : calloc((size_t)argc, 1);
    if (!redact) frs_oom_abort(__func__);
    memset(redact, 0, (size_t)(argc <= 16 ? 16 : argc));
    redactions(argc, argv, argvlen, redact);
    const char *av_small[16];
    size_t al_small[16];
    const char **av = argc <= 16 ? av_small : malloc(sizeof(*av) * (size_t)argc);
    size_t *al = argc <= 16 ? al_small : malloc(sizeof(*al) * (size_t)argc);
    if (!av || !al) frs_oom_abort(__func__);
    for (int i = 0; i < argc; i++) {
        av[i] = redact[i] ? "(redacted)" : argv[i];
        al[i] = redact[i] ? 10 : argvlen[i];
    }
    if (a->nmon && !host_is_admin(cmd->name))
        feed_monitors(srv, c, 0, fr_client_db(c->fc), argc, av, al);
    slowlog_push(srv, c, argc, av, al, (long long)usec);
    latency_add(srv, "command", (long long)usec / 1000);
    if (redact != small) free(redact);
    if (av != av_small) free(av);
    if (al != al_small) free(al);
}

/* The fake's key hook: tracking's invalidations. */
static void on_key(void *ctx, fr_client *client, int db, const char *key, size_t len)
{
    frs_server *srv = ctx;
    (void)db;
    /* a blocked client served by another's command is the current one while served */
    frs_conn *by = client ? frs_conn_of(srv, client) : NULL;
    frs_admin *a = srv->admin;
    frs_conn *was = a->current;
    if (by && by->blocked) a->current = by;
    if (fr_server_evicting(srv->fake)) a->current = NULL; /* before the command: sent now */
    if (key) frs_tracking_invalidate(srv, key, len);
    else frs_tracking_flush(srv);
    a->current = was;
}

frs_conn *frs_admin_before_command(frs_conn *c)
{
    frs_conn *prev = c->srv->admin->current;
    c->srv->admin->current = c;
    return prev;
}

void frs_admin_after_command(frs_conn *c, frs_conn *prev, int argc, const char *const *argv,
                             const size_t *argvlen)
{
    frs_admin *a = c->srv->admin;
    (void)argc;
    if (a->self_len) {
        frs_reply_raw(c, a->self_lines, a->self_len);
        frs_conn_want_flush(c);
        a->self_len = 0;
    }
    if (c->tracking || a->tracking) {
        char name[64];
        size_t n = argvlen[0] < 40 ? argvlen[0] : 40;
        for (size_t i = 0; i < n; i++) name[i] = (char)tolower((unsigned char)argv[0][i]);
        name[n] = '\0';
        frs_tracking_after_command(c, name);
    }
    a->current = prev;
}

void frs_admin_conn_closed(frs_conn *c)
{
    frs_admin *a = c->srv->admin;
    if (!a) return;
    for (size_t i = 0; i < a->nmon; i++) {
        if (a->mon[i] != c) continue;
        memmove(&a->mon[i], &a->mon[i + 1], (a->nmon - i - 1) * sizeof(a->mon[0]));
        a->nmon--;
        break;
    }
    if (a->current == c && c->close_asap) a->current = NULL;
    frs_tracking_disable(c);
    saved_argv_clear(&c->blocked_argc, &c->blocked_argv, &c->blocked_argvlen);
}

void frs_admin_before_sleep(frs_server *srv)
{
    if (!srv->admin) return;
    frs_tracking_broadcast(srv);
    frs_tracking_limit(srv); /* tracking-table-max-keys, as Redis's beforeSleep */
}

void frs_admin_init(frs_server *srv)
{
    frs_admin *a = calloc(1, sizeof(*a));
    if (!a) frs_oom_abort(__func__);
    srv->admin = a;
    frs_admin_config_changed(srv);
    fr_server_set_call_hook(srv->fake, on_call, srv);
    fr_server_set_key_hook(srv->fake, on_key, srv);
}

void frs_admin_free(frs_server *srv)
{
    frs_admin *a = srv->admin;
    if (!a) return;
    for (size_t i = 0; i < a->nslow; i++) slow_free(&a->slow[i]);
    free(a->slow);
    free(a->mon);
    free(a->self_lines);
    saved_argv_clear(&a->script_argc, &a->script_argv, &a->script_argvlen);
    frs_tracking_free(srv);
    free(a);
    srv->admin = NULL;
}

/* ----- LOLWUT ------------------------------------------------------------------------ */

/* LOLWUT [VERSION v]: lolwut.c's version dispatch; versions other than 5 and 6 (and the
 * default, 7.0.15) answer "Redis ver. 7.0.15".  Versions 5 and 6 draw with rand()
 * (different art every call) and are answered the same way here (docs/server.md). */
void frs_cmd_lolwut(frs_conn *c, int argc, const char *const *argv, const size_t *argvlen)
{
    if (argc >= 3 && argvlen[1] == 7 && !strncasecmp(argv[1], "version", 7)) {
        long long v;
        if (!frs_string2ll(argv[2], argvlen[2], &v)) {
            frs_reply_error(c, "ERR value is not an integer or out of range");
            return;
        }
    }
    static const char txt[] = "Redis ver. 7.0.15\n";
    frs_reply_verbatim(c, txt, sizeof(txt) - 1);
}

/* ----- MODULE (no modules) -------------------------------------------------------------- */

/* MODULE LOAD/LOADEX/UNLOAD need enable-module-command (immutable, default no), as
 * processCommand checks; with it, loading fails (nothing can be loaded) and unloading
 * finds no module. */
static int module_allowed(frs_conn *c)
{
    const char *v = frs_config_get(c->srv, "enable-module-command");
    int ok = v && (!strcmp(v, "yes") ||
                   (!strcmp(v, "local") && (c->is_unix || !strncmp(c->addr, "127.", 4) ||
                                            !strncmp(c->addr, "[::1]", 5))));
    if (!ok)
        frs_reply_error(c, "ERR MODULE command not allowed. If the enable-module-command option "
                           "is set to \"local\", you can run it from a local connection, "
                           "otherwise you need to set this option in the configuration file, "
                           "and then restart the server.");
    return ok;
}

void frs_cmd_module_list(frs_conn *c, int argc, const char *const *argv, const size_t *argvlen)
{
    (void)argc, (void)argv, (void)argvlen;
    frs_reply_array(c, 0);
}

void frs_cmd_module_load(frs_conn *c, int argc, const char *const *argv, const size_t *argvlen)
{
    (void)argc, (void)argv, (void)argvlen;
    if (!module_allowed(c)) return;
    frs_reply_error(c, "ERR Error loading the extension. Please check the server logs.");
}

void frs_cmd_module_unload(frs_conn *c, int argc, const char *const *argv,
                           const size_t *argvlen)
{
    (void)argc, (void)argv, (void)argvlen;
    if (!module_allowed(c)) return;
    frs_reply_error(c, "ERR Error unloading module: no such module with that name");
}

void frs_cmd_module_help(frs_conn *c, int argc, const char *const *argv, const size_t *argvlen)
{
    (void)argc, (void)argv, (void)argvlen;
    static const char *const lines[] = {
        "LIST", "    Return a list of loaded modules.",
        "LOAD <path> [<arg> ...]",
        "    Load a module library from <path>, passing to it any optional arguments.",
        "LOADEX <path> [[CONFIG NAME VALUE] [CONFIG NAME VALUE]] [ARGS ...]",
        "    Load a module library from <path>, while passing it module configurations and "
        "optional arguments.",
        "UNLOAD <name>", "    Unload a module.",
        NULL,
    };
    frs_reply_help(c, "MODULE", lines);
}

/* ----- Cluster and replication, standalone ------------------------------------------ */

/* ASKING, READONLY, READWRITE: +OK with --cluster, else cluster.c's refusal. */
static void cluster_only(frs_conn *c)
{
    if (!c->srv->opt.cluster) frs_reply_error(c, "ERR This instance has cluster support disabled");
    else frs_reply_ok(c);
}

void frs_cmd_asking(frs_conn *c, int argc, const char *const *argv, const size_t *argvlen)
{
    (void)argc, (void)argv, (void)argvlen;
    cluster_only(c);
}

void frs_cmd_readonly(frs_conn *c, int argc, const char *const *argv, const size_t *argvlen)
{
    (void)argc, (void)argv, (void)argvlen;
    cluster_only(c);
}

void frs_cmd_readwrite(frs_conn *c, int argc, const char *const *argv, const size_t *argvlen)
{
    (void)argc, (void)argv, (void)argvlen;
    cluster_only(c);
}

/* RESTORE-ASKING: RESTORE under another name (cluster.c runs restoreCommand for both). */
void frs_cmd_restore_asking(frs_conn *c, int argc, const char *const *argv,
                            const size_t *argvlen)
{
    const char **av = malloc(sizeof(*av) * (size_t)argc);
    size_t *al = malloc(sizeof(*al) * (size_t)argc);
    if (!av || !al) frs_oom_abort(__func__);
    memcpy(av, argv, sizeof(*av) * (size_t)argc);
    memcpy(al, argvlen, sizeof(*al) * (size_t)argc);
    av[0] = "RESTORE";
    al[0] = 7;
    size_t n;
    const char *p = fr_exec_resp(c->fc, argc, av, al, &n);
    frs_reply_raw(c, p, n);
    free(av);
    free(al);
}

/* REPLICAOF/SLAVEOF host port: NO ONE is +OK (already a master); a master to follow is
 * refused -- the fake does not replicate (docs/server.md). */
void frs_cmd_replicaof(frs_conn *c, int argc, const char *const *argv, const size_t *argvlen)
{
    (void)argc;
    if (c->srv->opt.cluster) {
        frs_reply_error(c, "ERR REPLICAOF not allowed in cluster mode.");
        return;
    }
    if (argvlen[1] == 2 && !strncasecmp(argv[1], "no", 2) && argvlen[2] == 3 &&
        !strncasecmp(argv[2], "one", 3)) {
        frs_reply_ok(c);
        return;
    }
    if (c->monitor) {
        frs_reply_error(c, "ERR Command is not valid when client is a replica.");
        return;
    }
    long long port;
    if (!frs_string2ll(argv[2], argvlen[2], &port)) {
        frs_reply_error(c, "ERR value is not an integer or out of range");
        return;
    }
    frs_reply_error(c, "ERR fakeredis-server does not replicate: only REPLICAOF NO ONE is "
                       "supported");
}

/* SYNC, PSYNC: the fake has no replication stream to give (docs/server.md). */
void frs_cmd_sync(frs_conn *c, int argc, const char *const *argv, const size_t *argvlen)
{
    (void)argc, (void)argv, (void)argvlen;
    if (c->monitor) return; /* a replica already: syncCommand ignores it */
    frs_reply_error(c, "ERR fakeredis-server does not replicate: SYNC and PSYNC are not "
                       "supported");
}

/* REPLCONF option value ...: replconfCommand's checks; a normal client's ACK and GETACK
 * get no reply. */
void frs_cmd_replconf(frs_conn *c, int argc, const char *const *argv, const size_t *argvlen)
{
    if (argc % 2 == 0) {
        frs_reply_error(c, "ERR syntax error");
        return;
    }
    for (int j = 1; j < argc; j += 2) {
        const char *o = argv[j];
        size_t ol = argvlen[j];
#define OPT(w) (ol == strlen(w) && !strncasecmp(o, w, ol))
        long long v;
        if (OPT("listening-port")) {
            if (!frs_string2ll(argv[j + 1], argvlen[j + 1], &v)) {
                frs_reply_error(c, "ERR value is not an integer or out of range");
                return;
            }
        } else if (OPT("ip-address")) {
            if (argvlen[j + 1] >= 46) {
                frs_reply_errorf(c, "ERR REPLCONF ip-address provided by replica instance is "
                                    "too long: %zd bytes", (ssize_t)argvlen[j + 1]);
                return;
            }
        } else if (OPT("capa")) {
        } else if (OPT("ack") || OPT("getack")) {
            return;
        } else if (OPT("rdb-only")) {
            if (!frs_string2ll(argv[j + 1], argvlen[j + 1], &v)) {
                frs_reply_error(c, "ERR value is not an integer or out of range");
                return;
            }
            if (v < 0 || v > 1) {
                frs_reply_error(c, "ERR value is out of range, value must between 0 and 1");
                return;
            }
        } else if (OPT("rdb-filter-only")) {
        } else {
            frs_reply_errorf(c, "ERR Unrecognized REPLCONF option: %.*s", (int)ol, o);
            return;
        }
#undef OPT
    }
    frs_reply_ok(c);
}

/* FAILOVER [TO host port [FORCE]] [ABORT] [TIMEOUT ms]: a standalone master has no
 * replicas, so after failoverCommand's checks it is refused. */
void frs_cmd_failover(frs_conn *c, int argc, const char *const *argv, const size_t *argvlen)
{
    if (c->srv->opt.cluster) {
        frs_reply_error(c, "ERR FAILOVER not allowed in cluster mode. Use CLUSTER FAILOVER "
                           "command instead.");
        return;
    }
    if (argc == 2 && argvlen[1] == 5 && !strncasecmp(argv[1], "abort", 5)) {
        frs_reply_error(c, "ERR No failover in progress.");
        return;
    }
    long long timeout = 0, port = 0;
    int force = 0, host = 0;
    for (int j = 1; j < argc; j++) {
        if (argvlen[j] == 7 && !strncasecmp(argv[j], "timeout", 7) && j + 1 < argc &&
            timeout == 0) {
            if (!frs_string2ll(argv[j + 1], argvlen[j + 1], &timeout)) {
                frs_reply_error(c, "ERR value is not an integer or out of range");
                return;
            }
            if (timeout <= 0) {
                frs_reply_error(c, "ERR FAILOVER timeout must be greater than 0");
                return;
            }
            j++;
        } else if (argvlen[j] == 2 && !strncasecmp(argv[j], "to", 2) && j + 2 < argc && !host) {
            if (!frs_string2ll(argv[j + 2], argvlen[j + 2], &port)) {
                frs_reply_error(c, "ERR value is not an integer or out of range");
                return;
            }
            host = 1;
            j += 2;
        } else if (argvlen[j] == 5 && !strncasecmp(argv[j], "force", 5) && !force) {
            force = 1;
        } else {
            frs_reply_error(c, "ERR syntax error");
            return;
        }
    }
    frs_reply_error(c, "ERR FAILOVER requires connected replicas.");
}

/* MIGRATE host port key|"" db timeout [COPY] [REPLACE] [AUTH pw] [AUTH2 user pw]
 * [KEYS key ...]: migrateCommand's parsing and its NOKEY when no key is there; with a key
 * to move the fake does not migrate (docs/server.md) and answers the IOERR Redis gives
 * when it cannot reach the target. */
void frs_cmd_migrate(frs_conn *c, int argc, const char *const *argv, const size_t *argvlen)
{
    int first = 3, nkeys = 1;
    for (int j = 6; j < argc; j++) {
        int more = argc - 1 - j;
#define W(w) (argvlen[j] == strlen(w) && !strncasecmp(argv[j], w, argvlen[j]))
        if (W("copy") || W("replace")) {
        } else if (W("auth")) {
            if (!more) {
                frs_reply_error(c, "ERR syntax error");
                return;
            }
            j++;
        } else if (W("auth2")) {
            if (more < 2) {
                frs_reply_error(c, "ERR syntax error");
                return;
            }
            j += 2;
        } else if (W("keys")) {
            if (argvlen[3] != 0) {
                frs_reply_error(c, "ERR When using MIGRATE KEYS option, the key argument "
                                   "must be set to the empty string");
                return;
            }
            first = j + 1;
            nkeys = argc - j - 1;
            break;
        } else {
            frs_reply_error(c, "ERR syntax error");
            return;
        }
#undef W
    }
    long long timeout, dbid;
    if (!frs_string2ll(argv[5], argvlen[5], &timeout) ||
        !frs_string2ll(argv[4], argvlen[4], &dbid)) {
        frs_reply_error(c, "ERR value is not an integer or out of range");
        return;
    }
    int found = 0;
    for (int k = 0; k < nkeys && !found; k++)
        found = fr_key_exists(c->srv->fake, fr_client_db(c->fc), argv[first + k],
                              argvlen[first + k]);
    if (!found) {
        frs_reply_status(c, "NOKEY");
        return;
    }
    frs_reply_error(c, "IOERR error or timeout connecting to the client");
}

/* ----- DEBUG ------------------------------------------------------------------------ */

static void debug_protocol(frs_conn *c, const char *name, size_t n)
{
#define IS(w) (n == strlen(w) && !strncasecmp(name, w, n))
    if (IS("string")) frs_reply_bulk_cstr(c, "Hello World");
    else if (IS("integer")) frs_reply_ll(c, 12345);
    else if (IS("double")) frs_reply_double(c, 3.141);
    else if (IS("bignum")) {
        if (c->resp == 3) frs_reply_raw(c, "(1234567999999999999999999999999999999\r\n", 40);
        else frs_reply_bulk_cstr(c, "1234567999999999999999999999999999999");
    } else if (IS("null")) frs_reply_null(c);
    else if (IS("array")) {
        frs_reply_array(c, 3);
        for (int j = 0; j < 3; j++) frs_reply_ll(c, j);
    } else if (IS("set")) {
        frs_reply_set(c, 3);
        for (int j = 0; j < 3; j++) frs_reply_ll(c, j);
    } else if (IS("map")) {
        frs_reply_map(c, 3);
        for (int j = 0; j < 3; j++) {
            frs_reply_ll(c, j);
            if (c->resp == 3) frs_reply_raw(c, j == 1 ? "#t\r\n" : "#f\r\n", 4);
            else frs_reply_ll(c, j == 1);
        }
    } else if (IS("attrib")) {
        if (c->resp == 3) {
            frs_reply_raw(c, "|1\r\n", 4);
            frs_reply_bulk_cstr(c, "key-popularity");
            frs_reply_array(c, 2);
            frs_reply_bulk_cstr(c, "key:123");
            frs_reply_ll(c, 90);
        }
        frs_reply_bulk_cstr(c, "Some real reply following the attribute");
    } else if (IS("push")) {
        if (c->resp < 3) {
            frs_reply_error(c, "ERR RESP2 is not supported by this command");
            return;
        }
        frs_reply_raw(c, ">2\r\n", 4);
        frs_reply_bulk_cstr(c, "server-cpu-usage");
        frs_reply_ll(c, 42);
        frs_reply_bulk_cstr(c, "Some real reply following the push reply");
    } else if (IS("true") || IS("false")) {
        if (c->resp == 3) frs_reply_raw(c, IS("true") ? "#t\r\n" : "#f\r\n", 4);
        else frs_reply_ll(c, IS("true"));
    } else if (IS("verbatim")) {
        frs_reply_verbatim(c, "This is a verbatim\nstring", 25);
    } else {
        frs_reply_error(c, "ERR Wrong protocol type name. Please use one of the following: "
                           "string|integer|double|bignum|null|array|set|map|attrib|push|"
                           "verbatim|true|false");
    }
#undef IS
}

static const char *const debug_help[] = {
    "AOF-FLUSH-SLEEP <microsec>",
    "    Server will sleep before flushing the AOF, this is used for testing.",
    "ASSERT", "    Crash by assertion failed.",
    "CHANGE-REPL-ID", "    Change the replication IDs of the instance.",
    "    Dangerous: should be used only for testing the replication subsystem.",
    "CONFIG-REWRITE-FORCE-ALL",
    "    Like CONFIG REWRITE but writes all configuration options, including",
    "    keywords not listed in original configuration file or default values.",
    "CRASH-AND-RECOVER [<milliseconds>]",
    "    Hard crash and restart after a <milliseconds> delay (default 0).",
    "DIGEST", "    Output a hex signature representing the current DB content.",
    "DIGEST-VALUE <key> [<key> ...]",
    "    Output a hex signature of the values of all the specified keys.",
    "ERROR <string>",
    "    Return a Redis protocol error with <string> as message. Useful for clients",
    "    unit tests to simulate Redis errors.",
    "LEAK <string>", "    Create a memory leak of the input string.",
    "LOG <message>", "    Write <message> to the server log.",
    "HTSTATS <dbid>", "    Return hash table statistics of the specified Redis database.",
    "HTSTATS-KEY <key>", "    Like HTSTATS but for the hash table stored at <key>'s value.",
    "LOADAOF", "    Flush the AOF buffers on disk and reload the AOF in memory.",
    "REPLICATE <string>",
    "    Replicates the provided string to replicas, allowing data divergence.",
    "MALLCTL <key> [<val>]", "    Get or set a malloc tuning integer.",
    "MALLCTL-STR <key> [<val>]", "    Get or set a malloc tuning string.",
    "OBJECT <key>", "    Show low level info about `key` and associated value.",
    "DROP-CLUSTER-PACKET-FILTER <packet-type>",
    "    Drop all packets that match the filtered type. Set to -1 allow all packets.",
    "OOM", "    Crash the server simulating an out-of-memory error.",
    "PANIC", "    Crash the server simulating a panic.",
    "POPULATE <count> [<prefix>] [<size>]",
    "    Create <count> string keys named key:<num>. If <prefix> is specified then",
    "    it is used instead of the 'key' prefix. These are not propagated to",
    "    replicas. Cluster slots are not respected so keys not belonging to the",
    "    current node can be created in cluster mode.",
    "PROTOCOL <type>",
    "    Reply with a test value of the specified type. <type> can be: string,",
    "    integer, double, bignum, null, array, set, map, attrib, push, verbatim,",
    "    true, false.",
    "RELOAD [option ...]",
    "    Save the RDB on disk and reload it back to memory. Valid <option> values:",
    "    * MERGE: conflicting keys will be loaded from RDB.",
    "    * NOFLUSH: the existing database will not be removed before load, but",
    "      conflicting keys will generate an exception and kill the server.",
    "    * NOSAVE: the database will be loaded from an existing RDB file.",
    "    Examples:",
    "    * DEBUG RELOAD: verify that the server is able to persist, flush and reload",
    "      the database.",
    "    * DEBUG RELOAD NOSAVE: replace the current database with the contents of an",
    "      existing RDB file.",
    "    * DEBUG RELOAD NOSAVE NOFLUSH MERGE: add the contents of an existing RDB",
    "      file to the database.",
    "RESTART [<milliseconds>]",
    "    Graceful restart: save config, db, restart after a <milliseconds> delay (default 0).",
    "SDSLEN <key>", "    Show low level SDS string info representing `key` and value.",
    "SEGFAULT", "    Crash the server with sigsegv.",
    "SET-ACTIVE-EXPIRE <0|1>",
    "    Setting it to 0 disables expiring keys in background when they are not",
    "    accessed (otherwise the Redis behavior). Setting it to 1 reenables back the",
    "    default.",
    "QUICKLIST-PACKED-THRESHOLD <size>",
    "    Sets the threshold for elements to be inserted as plain vs packed nodes",
    "    Default value is 1GB, allows values up to 4GB. Setting to 0 restores to default.",
    "SET-SKIP-CHECKSUM-VALIDATION <0|1>",
    "    Enables or disables checksum checks for RDB files and RESTORE's payload.",
    "SLEEP <seconds>", "    Stop the server for <seconds>. Decimals allowed.",
    "STRINGMATCH-TEST", "    Run a fuzz tester against the stringmatchlen() function.",
    "STRUCTSIZE", "    Return the size of different Redis core C structures.",
    "LISTPACK <key>", "    Show low level info about the listpack encoding of <key>.",
    "QUICKLIST <key> [<0|1>]", "    Show low level info about the quicklist encoding of <key>.",
    "    The optional argument (0 by default) sets the level of detail",
    "CLIENT-EVICTION", "    Show low level client eviction pools info (maxmemory-clients).",
    "PAUSE-CRON <0|1>", "    Stop periodic cron job processing.",
    "REPLYBUFFER PEAK-RESET-TIME <NEVER||RESET|time>",
    "    Sets the time (in milliseconds) to wait between client reply buffer peak resets.",
    "    In case NEVER is provided the last observed peak will never be reset",
    "    In case RESET is provided the peak reset time will be restored to the default value",
    "REPLYBUFFER RESIZING <0|1>", "    Enable or disable the reply buffer resize cron job",
    "CLUSTERLINK KILL <to|from|all> <node-id>",
    "    Kills the link based on the direction to/from (both) with the provided node.",
    NULL,
};

/* The memtoull of QUICKLIST-PACKED-THRESHOLD: digits and an optional unit; -1 if bad. */
static long long mem_value(const char *p, size_t n)
{
    char buf[64];
    if (n == 0 || n >= sizeof(buf)) return -1;
    memcpy(buf, p, n);
    buf[n] = '\0';
    char *end;
    errno = 0;
    unsigned long long v = strtoull(buf, &end, 10);
    if (errno || end == buf) return -1;
    unsigned long long mul = frs_memory_unit(end);
    if (!mul) return -1;
    return (long long)(v * mul);
}

static void debug_run(frs_conn *c, int argc, const char *const *argv, const size_t *argvlen,
                      int in_script);

/* DEBUG subcommand ...: needs enable-debug-command (immutable, default no).  The subset
 * docs/server.md lists; any other subcommand gets the unknown-subcommand error. */
void frs_cmd_debug(frs_conn *c, int argc, const char *const *argv, const size_t *argvlen)
{
    const char *v = frs_config_get(c->srv, "enable-debug-command");
    int ok = v && (!strcmp(v, "yes") ||
                   (!strcmp(v, "local") && (c->is_unix || !strncmp(c->addr, "127.", 4) ||
                                            !strncmp(c->addr, "[::1]", 5))));
    if (!ok) {
        frs_reply_error(c, "ERR DEBUG command not allowed. If the enable-debug-command option "
                           "is set to \"local\", you can run it from a local connection, "
                           "otherwise you need to set this option in the configuration file, "
                           "and then restart the server.");
        return;
    }
    debug_run(c, argc, argv, argvlen, 0);
}

/* The DEBUG subcommands a script may run once DEBUG SET-DISABLE-DENY-SCRIPTS 1 lets it
 * (Redis's script_disable_deny_script): those that neither read a client's database nor
 * replace the keyspace under the running script. */
static int script_may_debug(const char *s, size_t n)
{
    static const char *const allowed[] = {"protocol", "sleep", "log", "error",
                                          "set-active-expire", "set-disable-deny-scripts",
                                          "help", NULL};
    for (int i = 0; allowed[i]; i++)
        if (n == strlen(allowed[i]) && !strncasecmp(s, allowed[i], n)) return 1;
    return 0;
}

char *frs_admin_script_debug(frs_server *srv, int argc, const char *const *argv,
                             const size_t *argvlen, int resp, size_t *out_len)
{
    if (!srv->admin || !srv->admin->deny_scripts_off || argc < 2 ||
        argvlen[0] != 5 || strncasecmp(argv[0], "debug", 5) ||
        !script_may_debug(argv[1], argvlen[1]))
        return NULL;
    frs_conn tmp;
    memset(&tmp, 0, sizeof(tmp));
    tmp.srv = srv;
    tmp.resp = resp;
    debug_run(&tmp, argc, argv, argvlen, 1);
    *out_len = tmp.out.len;
    return tmp.out.p;
}

/* DEBUG's subcommands on c; in_script: called from a script (frs_admin_script_debug), whose
 * time stands still: a sleep only moves the virtual clock. */
static void debug_run(frs_conn *c, int argc, const char *const *argv, const size_t *argvlen,
                      int in_script)
{
    const char *s = argv[1];
    size_t sl = argvlen[1];
#define SUB(w) (sl == strlen(w) && !strncasecmp(s, w, sl))
    if (argc == 2 && SUB("help")) {
        frs_reply_help(c, "DEBUG", debug_help);
    } else if (SUB("log") && argc == 3) {
        frs_reply_ok(c);
    } else if (SUB("leak") && argc == 3) {
        frs_reply_ok(c);
    } else if (SUB("protocol") && argc == 3) {
        debug_protocol(c, argv[2], argvlen[2]);
    } else if (SUB("sleep") && argc == 3) {
        char buf[64];
        size_t n = argvlen[2] < sizeof(buf) - 1 ? argvlen[2] : sizeof(buf) - 1;
        memcpy(buf, argv[2], n);
        buf[n] = '\0';
        double d = strtod(buf, NULL);
        long long us = (long long)(d * 1000000);
        if (us > 0) {
            if (c->srv->opt.wall_clock) {
                struct timespec ts = {us / 1000000, (us % 1000000) * 1000};
                nanosleep(&ts, NULL);
            } else if (in_script) {
                fr_clock_advance(c->srv->fake, us / 1000); /* woken after the script */
            } else {
                /* the virtual clock: the sleep moves it, waking what waited that long */
                fr_clock_advance(c->srv->fake, us / 1000);
                fr_server_expire_blocked(c->srv->fake);
                frs_drain_fake_events(c->srv, c);
            }
        }
        frs_reply_ok(c);
    } else if ((SUB("set-active-expire") || SUB("set-skip-checksum-validation") ||
                SUB("aof-flush-sleep") || SUB("set-disable-deny-scripts") ||
                SUB("pause-cron")) && argc == 3) {
        if (SUB("set-active-expire")) {
            c->srv->admin->active_expire_off = argvlen[2] == 0 || argv[2][0] == '0';
            fr_server_set_active_expiry(c->srv->fake, !c->srv->admin->active_expire_off);
        }
        if (SUB("set-skip-checksum-validation")) /* atoi, as Redis reads it */
            c->srv->admin->skip_checksum = atoi(argv[2]) != 0;
        if (SUB("set-disable-deny-scripts"))
            c->srv->admin->deny_scripts_off = atoi(argv[2]) != 0;
        frs_reply_ok(c);
    } else if (SUB("quicklist-packed-threshold") && argc == 3) {
        long long sz = mem_value(argv[2], argvlen[2]);
        if (sz < 0 || sz >= (1LL << 32)) {
            frs_reply_error(c, "ERR argument must be a memory value bigger than 1 and smaller "
                               "than 4gb");
            return;
        }
        frs_reply_ok(c);
    } else if (SUB("error") && argc == 3) {
        frs_reply_errorf(c, "%.*s", (int)argvlen[2], argv[2]);
    } else if (SUB("reload")) {
        int merge = 0, noflush = 0, nosave = 0;
        for (int j = 2; j < argc; j++) {
            if (argvlen[j] == 5 && !strncasecmp(argv[j], "merge", 5)) {
                merge = 1;
            } else if (argvlen[j] == 7 && !strncasecmp(argv[j], "noflush", 7)) {
                noflush = 1;
            } else if (argvlen[j] == 6 && !strncasecmp(argv[j], "nosave", 6)) {
                nosave = 1;
            } else {
                frs_reply_error(c, "ERR DEBUG RELOAD only supports the MERGE, NOFLUSH and "
                                   "NOSAVE options.");
                return;
            }
        }
        frs_persist_debug_reload(c, merge, noflush, nosave);
    } else if (SUB("loadaof") && argc == 2) {
        frs_aof_debug_loadaof(c);
    } else if (SUB("object") && argc == 3) {
        char text[512];
        if (fr_debug_object(c->srv->fake, fr_client_db(c->fc), argv[2], argvlen[2], text,
                            sizeof(text)) < 0) {
            frs_reply_error(c, "ERR no such key");
            return;
        }
        frs_reply_status(c, text);
    } else if (SUB("digest") && argc == 2) {
        char hex[41];
        fr_debug_digest(c->srv->fake, hex);
        frs_reply_status(c, hex);
    } else if (SUB("digest-value")) {
        /* one status line per key, all zeros for a missing one (no lazy expiry) */
        frs_reply_array(c, argc - 2);
        for (int j = 2; j < argc; j++) {
            char hex[41];
            fr_debug_digest_value(c->srv->fake, fr_client_db(c->fc), argv[j], argvlen[j], hex);
            frs_reply_status(c, hex);
        }
    } else if (SUB("replybuffer") && argc == 4) {
        /* the reply buffer's peak-reset time and resizing: checked as Redis checks them;
         * fakeredis-server does not resize reply buffers as Redis does (no effect) */
        const char *o = argv[2], *a = argv[3];
        size_t on = argvlen[2], an = argvlen[3];
        long long v;
        if (on == 15 && !strncasecmp(o, "peak-reset-time", 15)) {
            if (!(an == 5 && !strncasecmp(a, "never", 5)) &&
                !(an == 5 && !strncasecmp(a, "reset", 5)) && !frs_string2ll(a, an, &v)) {
                frs_reply_error(c, "ERR value is not an integer or out of range");
                return;
            }
        } else if (!(on == 8 && !strncasecmp(o, "resizing", 8))) {
            frs_reply_errorf(c, "ERR unknown subcommand or wrong number of arguments for "
                                "'%.*s'. Try DEBUG HELP.", (int)(sl > 128 ? 128 : sl), s);
            return;
        }
        frs_reply_ok(c);
    } else if (SUB("change-repl-id") && argc == 2) {
        frs_reply_ok(c);
    } else if (SUB("stringmatch-test") && argc == 2) {
        frs_reply_status(c, "Apparently Redis did not crash: test passed");
    } else if (SUB("replicate") && argc >= 3) {
        frs_reply_ok(c);
    } else {
        char upper[8] = "DEBUG";
        size_t n = strnlen(s, sl);
        frs_reply_errorf(c, "ERR unknown subcommand or wrong number of arguments for '%.*s'. "
                            "Try %s HELP.", (int)(n > 128 ? 128 : n), s, upper);
    }
#undef SUB
}

int frs_admin_latency_on(frs_server *srv) { return srv->admin && srv->admin->latency_threshold; }

void frs_admin_expire_cycle(frs_server *srv, uint64_t usec)
{
    if (srv->admin) latency_add(srv, "expire-cycle", (long long)(usec / 1000));
}

int frs_admin_active_expire_off(frs_server *srv)
{
    return srv->admin && srv->admin->active_expire_off;
}

int frs_admin_skip_checksum(frs_server *srv) { return srv->admin && srv->admin->skip_checksum; }
