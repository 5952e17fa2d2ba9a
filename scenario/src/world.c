/* world.c -- the server and the processes of a scenario that drives consumer processes
 * (wsc_world.h): the fake served from this process (frs_core), the consumers started,
 * stopped and killed through the supervisor (proc.c), and the wait until they settle. */
#define _GNU_SOURCE /* mkdtemp */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "frs.h"
#include "wsc_proc.h"
#include "wsc_world.h"
#include "wsi_alloc.h"
#include "wsi_buf.h"
#include "wsr_proxy.h"

/* One `consumer` of the file and its process, if started. */
typedef struct consumer {
    const wsc_stmt *decl;     /* its `consumer` statement */
    char *log;                /* RUN_DIR/NAME.log */
    wsc_proc *proc;           /* the last process started, NULL before the first */
    int incarnation;          /* processes started so far */
    unsigned long long conns; /* the server's connections received when it started */
    long long started_ms;     /* when it was started (monotonic ms) */
} consumer;

struct wsc_world {
    const wsc_scenario *sc;
    ws_sim *sim;
    fr_server *fake;           /* the served fake, NULL on a real server */
    frs_server srv;            /* the server, when serving */
    int serving;               /* srv is initialised */
    ws_conn *probe;            /* the world's own connection: the settle checks */
    char dir[256];             /* the run's directory */
    char sock[300];            /* the unix socket (serving) */
    char url[512];             /* REDIS_URL */
    char host[256], port[16];  /* REDIS_HOST, REDIS_PORT ("" when not TCP) */
    char socket_path[300];     /* REDIS_SOCKET ("" when not a unix socket) */
    consumer *cons;            /* one per `consumer` statement of the file */
    size_t ncons;
    consumer *stopping;        /* being stopped (`stop`): a crash does not restart it */
    int crash_armed;           /* wsc_world_arm_crash armed the server's hold */
    int crashed;               /* ... and it held its command: the consumer was killed */
    char hit[512];             /* the command it held, as redis-cli shows it */
    char restart_why[512];     /* the restart after the crash failed: why ("" if not) */
    char rec[300];             /* RUN_DIR/traffic.rec, the recording ("" when none) */
    int held_ok;               /* after a crash a wait may end with entries held (explorer) */
    char held[1024];           /* what the last wait left held ("" when nothing) */
    unsigned long clock_moves; /* the times the served fake's clock moved itself */
    long long consumer_ms;     /* the consumers' own time: from each start to its crash, or
                                  to its last command before a wait found it settled */
    frs_clock_hooks hooks;     /* (counts them) */
    wsr_proxy *proxy;          /* on a real server: the recording proxy in front of it, the
                                  processes' way to it */
};

/* ----- Time -------------------------------------------------------------------------------- */

/* ----- Making and freeing ------------------------------------------------------------------- */

/* The server moved its clock itself (its auto-advance): counted, for the held rule. */
static void clock_moved_hook(void *ud, int64_t from, int64_t to)
{
    (void)from;
    (void)to;
    ((wsc_world *)ud)->clock_moves++;
}

/* The server would move its clock (its quiet interval passed): held while a process of a
 * consumer runs or is runnable -- one computing without a command, or waiting for a CPU
 * on a loaded machine, has not stopped moving, however long it has been silent.  Asked
 * at that moment only, so the /proc walk costs nothing while traffic flows. */
static int clock_held_hook(void *ud)
{
    wsc_world *w = ud;
    for (size_t i = 0; i < w->ncons; i++)
        if (w->cons[i].proc && wsc_proc_running(w->cons[i].proc) &&
            wsc_proc_busy(w->cons[i].proc))
            return 1;
    return 0;
}

void wsc_world_allow_held(wsc_world *w, int on) { w->held_ok = on; }
const char *wsc_world_held(const wsc_world *w) { return w->held; }

wsc_world *wsc_world_new(const wsc_scenario *sc, ws_sim *sim, const wsc_options *opt,
                         char *why, size_t cap)
{
    const char *backend = opt->backend;
    wsc_world *w = wsi_calloc(1, sizeof *w);
    if (!w) {
        snprintf(why, cap, "out of memory");
        return NULL;
    }
    w->sc = sc;
    w->sim = sim;
    for (size_t i = 0; i < sc->nst; i++) w->ncons += sc->st[i].kind == K_CONSUMER;
    w->cons = wsi_calloc(w->ncons ? w->ncons : 1, sizeof *w->cons);
    if (!w->cons) {
        wsi_free(w);
        snprintf(why, cap, "out of memory");
        return NULL;
    }
    /* the run's directory: sockets and logs, nothing of the user's */
    const char *tmp = getenv("TMPDIR");
    if (!tmp || !*tmp || strlen(tmp) > 80) tmp = "/tmp";
    snprintf(w->dir, sizeof w->dir, "%s/wsim-run.XXXXXX", tmp);
    if (!mkdtemp(w->dir)) {
        snprintf(why, cap, "cannot make a directory for the run in %s: %s", tmp, strerror(errno));
        wsi_free(w->cons);
        wsi_free(w);
        return NULL;
    }
    wsc_proc_watchdog();
    wsc_proc_watch_dir(w->dir, 0);
    for (size_t i = 0, k = 0; i < sc->nst; i++) {
        if (sc->st[i].kind != K_CONSUMER) continue;
        w->cons[k].decl = &sc->st[i];
        size_t n = strlen(w->dir) + strlen(sc->st[i].proc) + 8;
        w->cons[k].log = wsi_malloc(n);
        if (!w->cons[k].log) {
            snprintf(why, cap, "out of memory");
            wsc_world_free(w);
            return NULL;
        }
        snprintf(w->cons[k].log, n, "%s/%s.log", w->dir, sc->st[i].proc);
        k++;
    }
    w->fake = ws_sim_fake(sim);
    if (!w->fake) {
        /* a real server: the processes reach it through a recording proxy (wsr_proxy.h),
         * so that their traffic is recorded as the served fake records it; the world's
         * own reads go to the server itself */
        char perr[512], psock[300];
        snprintf(w->rec, sizeof w->rec, "%s/traffic.rec", w->dir);
        snprintf(psock, sizeof psock, "%s/proxy.sock", w->dir);
        wsr_proxy_options po = {.upstream = backend, .unixsocket = psock, .port = 0,
                                .record = w->rec};
        if (!(w->proxy = wsr_proxy_new(&po, perr, sizeof perr))) {
            snprintf(why, cap, "cannot start the recording proxy in front of %s: %s", backend,
                     perr);
            wsc_world_free(w);
            return NULL;
        }
        snprintf(w->host, sizeof w->host, "127.0.0.1");
        snprintf(w->port, sizeof w->port, "%d", wsr_proxy_port(w->proxy));
        snprintf(w->url, sizeof w->url, "redis://127.0.0.1:%d", wsr_proxy_port(w->proxy));
        snprintf(w->socket_path, sizeof w->socket_path, "%s", psock);
        w->probe = ws_conn_open(backend, 5000);
        return w;
    }
    /* the fake, served: a unix socket here and a loopback port of the kernel's choice */
    snprintf(w->sock, sizeof w->sock, "%s/redis.sock", w->dir);
    frs_options o = {.port = 0, .unixsocket = w->sock, .seed = sc->seed,
                     .cluster = sc->cluster, .busy_poll_us = 0, .fake = w->fake, .quiet = 1,
                     .no_signals = 1, .redis_version = opt->redis_version};
    if (frs_server_init(&w->srv, &o) != 0) {
        w->serving = 1; /* (what it made is freed by frs_server_free) */
        snprintf(why, cap, "cannot serve the fake (see above)");
        wsc_world_free(w);
        return NULL;
    }
    w->serving = 1;
    /* the virtual clock moves itself when every client has been quiet for a while: a
     * consumer that blocks 5 s on an empty read waits milliseconds (docs/server.md) */
    frs_server_set_auto_advance(&w->srv, WSC_AUTO_ADVANCE_MS);
    w->hooks = (frs_clock_hooks){.moved = clock_moved_hook, .held = clock_held_hook, .ud = w};
    frs_server_set_clock_hooks(&w->srv, &w->hooks);
    /* every consumer connection's traffic, for the traffic checker (expect invariants) and
     * the explorer (the commands a baseline sent) */
    char rerr[256];
    snprintf(w->rec, sizeof w->rec, "%s/traffic.rec", w->dir);
    if (frs_record_start(&w->srv, w->rec, rerr, sizeof rerr) != 0) {
        snprintf(why, cap, "cannot record the consumers' traffic: %s", rerr);
        wsc_world_free(w);
        return NULL;
    }
    snprintf(w->host, sizeof w->host, "127.0.0.1");
    snprintf(w->port, sizeof w->port, "%d", w->srv.tcp_port);
    snprintf(w->url, sizeof w->url, "redis://127.0.0.1:%d", w->srv.tcp_port);
    snprintf(w->socket_path, sizeof w->socket_path, "%s", w->sock);
    w->probe = ws_conn_fake(w->fake);
    return w;
}

void wsc_world_free(wsc_world *w)
{
    if (!w) return;
    for (size_t i = 0; i < w->ncons; i++) {
        wsc_proc_free(w->cons[i].proc);
        wsi_free(w->cons[i].log);
    }
    wsi_free(w->cons);
    wsc_proc_end_escaped();
    ws_conn_close(w->probe);
    if (w->serving) frs_server_free(&w->srv);
    if (w->proxy) {
        char perr[256];
        wsr_proxy_free(w->proxy, perr, sizeof perr);
    }
    if (w->dir[0]) {
        /* WSIM_KEEP_RUN=1 keeps the logs (and the recording) to look at */
        const char *keep = getenv("WSIM_KEEP_RUN");
        if (keep && *keep && strcmp(keep, "0") != 0)
            fprintf(stderr, "wsim: the run's directory is kept: %s\n", w->dir);
        else
            wsc_proc_remove_tree(w->dir);
        wsc_proc_watch_dir(w->dir, 1);
    }
    wsi_free(w);
}

const char *wsc_world_dir(const wsc_world *w) { return w->dir; }
const char *wsc_world_url(const wsc_world *w) { return w->url; }

static consumer *find(wsc_world *w, const char *name)
{
    for (size_t i = 0; i < w->ncons; i++)
        if (strcmp(w->cons[i].decl->proc, name) == 0) return &w->cons[i];
    return NULL;
}

/* ----- Serving -------------------------------------------------------------------------------- */

/* One turn of the server (at most ms of waiting), or a nap on a real server. */
static void serve(wsc_world *w, int ms)
{
    if (w->serving) {
        frs_drain_fake_events(&w->srv, NULL); /* what the scenario's own commands woke */
        frs_server_turn(&w->srv, ms);
    } else if (w->proxy) {
        wsr_proxy_turn(w->proxy, ms);
    } else if (ms > 0) {
        wsc_nap_ms(ms);
    }
}

void wsc_world_pump(wsc_world *w)
{
    if (w->serving || w->proxy) serve(w, 0);
}

void wsc_world_clock_moved(wsc_world *w)
{
    if (!w->serving) return;
    fr_server_expire_blocked(w->fake);
    serve(w, 0);
}

/* Whether every connection to the served fake is blocked in a read or has been idle (no
 * command, nothing to read or write) for quiet_ms. */
static int quiet(wsc_world *w, long long quiet_ms)
{
    long long now = frs_mono_ms();
    if (w->srv.pending || w->srv.resume_head) return 0;
    for (frs_conn *c = w->srv.conns; c; c = c->next) {
        if (rr_pending(&c->in) || frs_obuf_pending(&c->out)) return 0;
        if (!c->blocked && now - c->last_ms < quiet_ms) return 0;
    }
    return 1;
}

/* Says how long the connections have been silent, when the last command is a while ago
 * (a consumer that hangs): its name and age, or the read a connection is blocked in. */
static void idle_note(wsc_world *w, wsi_buf *b)
{
    long long now = frs_mono_ms(), last = -1;
    const char *cmd = NULL;
    int blocked = 0;
    for (frs_conn *c = w->srv.conns; c; c = c->next) {
        if (c->last_ms > last) last = c->last_ms, cmd = c->last_cmd;
        blocked |= c->blocked;
    }
    if (last < 0) {
        wsi_buf_puts(b, "; it has no connection open");
        return;
    }
    if (now - last < 500) return;
    wsi_buf_printf(b, "; its last command (%s) came %lld ms ago%s", cmd ? cmd : "?", now - last,
                   blocked ? " and it is blocked in it" : "");
}

/* ----- What is outstanding ------------------------------------------------------------------ */

/* Sends one command on the probe; its reply, or NULL (the probe failed: why in out). */
static const fr_reply *ask(wsc_world *w, wsi_buf *out, int argc, const char *const *argv)
{
    fr_command c = {argc, argv, NULL};
    const fr_reply *r = NULL;
    if (ws_pipeline(w->probe, "wait", 1, &c, &r) != 0) {
        wsi_buf_printf(out, "cannot read the server: %s", ws_conn_errstr(w->probe));
        return NULL;
    }
    return r;
}

/* The field of a flat [name, value, ...] reply, or NULL. */
static const fr_reply *field(const fr_reply *r, const char *name)
{
    if (!r || r->type != FR_REPLY_ARRAY) return NULL;
    for (size_t i = 0; i + 1 < r->count; i += 2)
        if (r->elements[i].str && strcmp(r->elements[i].str, name) == 0) return &r->elements[i + 1];
    return NULL;
}

/* Appends ", " before every part but the first of a subscription's line. */
static void part(wsi_buf *b, int *first, const char *sub)
{
    if (*first) wsi_buf_printf(b, "%s%s: ", b->len ? "; " : "", sub);
    else wsi_buf_puts(b, ", ");
    *first = 0;
}

/* What a stream subscription (key, group) has outstanding, appended to b; *moving
 * counts what is not merely held (unread entries, a delay queue's members: pending
 * entries are held). */
static int stream_outstanding(wsc_world *w, const wsc_stmt *s, wsi_buf *b, wsi_buf *err,
                              size_t *moving)
{
    int first = 1;
    const char *xg[] = {"XINFO", "GROUPS", s->s_key};
    const fr_reply *r = ask(w, err, 3, xg);
    if (!r) return -1;
    if (r->type == FR_REPLY_ERROR) return 0; /* no such stream: nothing was produced */
    const fr_reply *g = NULL;
    for (size_t i = 0; r->type == FR_REPLY_ARRAY && i < r->count && !g; i++) {
        const fr_reply *nm = field(&r->elements[i], "name");
        if (nm && nm->str && strcmp(nm->str, s->s_group) == 0) g = &r->elements[i];
    }
    char last[64] = "0-0";
    long long pending = 0;
    if (g) {
        const fr_reply *ld = field(g, "last-delivered-id"), *pd = field(g, "pending");
        if (ld && ld->str) snprintf(last, sizeof last, "%s", ld->str);
        if (pd) pending = pd->integer;
    }
    /* the unread entries: after the group's last-delivered id (all, without a group) */
    char from[70];
    snprintf(from, sizeof from, "(%s", last);
    const char *xr[] = {"XRANGE", s->s_key, g ? from : "-", "+"};
    if (!(r = ask(w, err, 4, xr))) return -1;
    size_t unread = r->type == FR_REPLY_ARRAY ? r->count : 0;
    *moving += unread;
    if (unread) {
        part(b, &first, s->sub);
        wsi_buf_printf(b, "%zu unread%s (", unread, g ? "" : ", no group yet");
        for (size_t i = 0; i < unread && i < 3; i++) {
            const fr_reply *e = &r->elements[i];
            wsi_buf_printf(b, "%s%s", i ? ", " : "",
                           e->type == FR_REPLY_ARRAY && e->count && e->elements[0].str
                               ? e->elements[0].str : "?");
        }
        wsi_buf_puts(b, unread > 3 ? ", ...)" : ")");
    }
    if (pending > 0) {
        const char *xp[] = {"XPENDING", s->s_key, s->s_group, "-", "+", "3"};
        if (!(r = ask(w, err, 6, xp))) return -1;
        part(b, &first, s->sub);
        wsi_buf_printf(b, "%lld pending (", pending);
        for (size_t i = 0; r->type == FR_REPLY_ARRAY && i < r->count; i++) {
            const fr_reply *e = &r->elements[i];
            if (e->type != FR_REPLY_ARRAY || e->count < 4) continue;
            wsi_buf_printf(b, "%s%s held by %s, %lld deliver%s", i ? ", " : "",
                           e->elements[0].str, e->elements[1].str, e->elements[3].integer,
                           e->elements[3].integer == 1 ? "y" : "ies");
        }
        wsi_buf_puts(b, pending > 3 ? ", ...)" : ")");
    }
    if (s->s_dq) {
        const char *zc[] = {"ZCARD", s->s_dq};
        if (!(r = ask(w, err, 2, zc))) return -1;
        if (r->type == FR_REPLY_INTEGER && r->integer > 0) {
            part(b, &first, s->sub);
            wsi_buf_printf(b, "%lld in the delay queue %s", r->integer, s->s_dq);
            *moving += (size_t)r->integer;
        }
    }
    return !first;
}

/* What a list subscription has outstanding: values waiting (*moving counts them), and
 * (reliable) values on its processing list, held. */
static int list_outstanding(wsc_world *w, const wsc_stmt *s, wsi_buf *b, wsi_buf *err,
                            size_t *moving)
{
    int first = 1;
    const char *ll[] = {"LLEN", s->s_key};
    const fr_reply *r = ask(w, err, 2, ll);
    if (!r) return -1;
    if (r->type == FR_REPLY_INTEGER && r->integer > 0) {
        part(b, &first, s->sub);
        wsi_buf_printf(b, "%lld unread", r->integer);
        *moving += (size_t)r->integer;
    }
    if (s->cfg.form != WS_FORM_RELIABLE_LIST) return !first;
    char proc[300];
    snprintf(proc, sizeof proc, "%s%s", s->s_processing ? s->s_processing : s->s_key,
             s->s_processing ? "" : ".processing");
    const char *lp[] = {"LLEN", proc};
    if (!(r = ask(w, err, 2, lp))) return -1;
    if (r->type == FR_REPLY_INTEGER && r->integer > 0) {
        part(b, &first, s->sub);
        wsi_buf_printf(b, "%lld on the processing list %s", r->integer, proc);
    }
    return !first;
}

/* What the subscriptions the file declares above statement `at` have outstanding: 0
 * (nothing: settled), 1 (said in b; *moving: how much of it is not merely held), -1 (the
 * server could not be read: err). */
static int outstanding(wsc_world *w, size_t at, wsi_buf *b, wsi_buf *err, size_t *moving)
{
    *moving = 0;
    const wsc_scenario *sc = w->sc;
    int any = 0;
    for (size_t i = 0; i < at && i < sc->nst; i++) {
        const wsc_stmt *s = &sc->st[i];
        if (s->kind != K_SUBSCRIBE) continue;
        /* one look per stream and group, or per list (a reclaim subscription shares the
         * group it recovers for) */
        int seen = 0;
        for (size_t k = 0; k < i && !seen; k++) {
            const wsc_stmt *o = &sc->st[k];
            seen = o->kind == K_SUBSCRIBE && o->cfg.form == s->cfg.form &&
                   strcmp(o->s_key, s->s_key) == 0 &&
                   (!s->s_group || (o->s_group && strcmp(o->s_group, s->s_group) == 0));
        }
        if (seen || s->cfg.form == WS_FORM_CHANNEL) continue;
        int rc = s->cfg.form == WS_FORM_STREAM ? stream_outstanding(w, s, b, err, moving)
                                               : list_outstanding(w, s, b, err, moving);
        if (rc < 0) return -1;
        any |= rc;
    }
    return any;
}

/* The commands a real server has processed (INFO's total_commands_processed; an INFO is
 * counted once it has answered), or -1 with err said. */
static long long total_commands(wsc_world *w, wsi_buf *err)
{
    const char *info[] = {"INFO", "stats"};
    const fr_reply *r = ask(w, err, 2, info);
    const char *at = r && r->str ? strstr(r->str, "total_commands_processed:") : NULL;
    if (!at) {
        if (r) wsi_buf_puts(err, "the server's INFO has no total_commands_processed");
        return -1;
    }
    return strtoll(at + strlen("total_commands_processed:"), NULL, 10);
}

/* On a real server, which the world cannot watch from inside: settled (1) when nothing
 * is outstanding now and, WSC_QUIET_MS later, still nothing is and the server processed
 * no command but the world's own in between; 0 when not; -1 with err said. */
static int real_quiet(wsc_world *w, size_t at, wsi_buf *b, wsi_buf *err)
{
    long long n1 = total_commands(w, err);
    if (n1 < 0) return -1;
    uint64_t sent1 = ws_conn_get_stats(w->probe).commands_sent;
    /* (the proxy forwards meanwhile: a consumer waiting on it would look quiet) */
    for (long long until = wsc_mono_ms() + WSC_QUIET_MS; wsc_mono_ms() < until;) serve(w, 2);
    size_t moving;
    int o = outstanding(w, at, b, err, &moving);
    if (o != 0) return o < 0 ? -1 : 0;
    long long n2 = total_commands(w, err);
    if (n2 < 0) return -1;
    /* between the two INFOs the server counted the first one and what the world sent
     * before the second: as many commands as the world sent since the first */
    uint64_t sent2 = ws_conn_get_stats(w->probe).commands_sent;
    return n2 - n1 == (long long)(sent2 - sent1) ? 1 : 0;
}

/* ----- The consumers -------------------------------------------------------------------------- */

/* Appends a line to the consumer's log (wsim's own notes between its incarnations). */
static void log_note(const consumer *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void log_note(const consumer *c, const char *fmt, ...)
{
    int fd = open(c->log, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0600);
    if (fd < 0) return;
    char line[512];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(line, sizeof line, fmt, ap);
    va_end(ap);
    if (n > 0) {
        ssize_t wr = write(fd, line, (size_t)n < sizeof line ? (size_t)n : sizeof line - 1);
        (void)wr;
    }
    close(fd);
}

int wsc_world_start(wsc_world *w, const wsc_stmt *decl, char *why, size_t cap)
{
    consumer *c = find(w, decl->proc);
    if (!c) {
        snprintf(why, cap, "no consumer named '%s'", decl->proc);
        return 1;
    }
    if (c->proc && wsc_proc_running(c->proc)) {
        snprintf(why, cap, "%s is running already (pid %ld): stop or kill it first",
                 decl->proc, (long)wsc_proc_pid(c->proc));
        return 1;
    }
    wsc_proc_free(c->proc); /* (ends what its last incarnation left) */
    c->proc = NULL;
    const char **argv = wsi_calloc(decl->nargv + 1, sizeof *argv);
    const char **env = wsi_calloc(decl->nenv + 7, sizeof *env);
    char vars[6][700];
    if (!argv || !env) {
        wsi_free(argv);
        wsi_free(env);
        return WS_ENOMEM;
    }
    for (size_t i = 0; i < decl->nargv; i++) argv[i] = decl->argv[i].s;
    size_t k = 0;
    snprintf(vars[0], sizeof vars[0], "REDIS_URL=%s", w->url);
    env[k++] = vars[0];
    if (w->host[0]) {
        snprintf(vars[1], sizeof vars[1], "REDIS_HOST=%s", w->host);
        snprintf(vars[2], sizeof vars[2], "REDIS_PORT=%s", w->port);
        env[k++] = vars[1];
        env[k++] = vars[2];
    }
    if (w->socket_path[0]) {
        snprintf(vars[3], sizeof vars[3], "REDIS_SOCKET=%s", w->socket_path);
        env[k++] = vars[3];
    }
    snprintf(vars[4], sizeof vars[4], "WSIM_CONSUMER=%s", decl->proc);
    snprintf(vars[5], sizeof vars[5], "WSIM_INCARNATION=%d", c->incarnation + 1);
    env[k++] = vars[4];
    env[k++] = vars[5];
    for (size_t i = 0; i < decl->nenv; i++) env[k++] = decl->env[i];
    if (c->incarnation) log_note(c, "--- wsim: %s starts again (incarnation %d) ---\n",
                                 decl->proc, c->incarnation + 1);
    wsc_proc_spec spec = {argv, env, c->log, decl->dir};
    long long t0 = wsc_mono_ms(); /* (its start, exec and loading included, is its time) */
    int rc = wsc_proc_start(&spec, &c->proc, why, cap);
    wsi_free(argv);
    wsi_free(env);
    if (rc) return 1;
    c->incarnation++;
    c->conns = w->serving ? w->srv.stats.connections : 0;
    c->started_ms = t0;
    return 0;
}

/* The consumer called name, which must have been started; NULL with why set. */
static consumer *started(wsc_world *w, const char *name, char *why, size_t cap)
{
    consumer *c = find(w, name);
    if (!c || !c->proc) {
        snprintf(why, cap, "%s was never started (start %s)", name, name);
        return NULL;
    }
    return c;
}

int wsc_world_kill(wsc_world *w, const char *name, char *why, size_t cap)
{
    consumer *c = started(w, name, why, cap);
    if (!c) return 1;
    if (!wsc_proc_running(c->proc)) {
        char st[128];
        wsc_proc_status_text(c->proc, st, sizeof st);
        snprintf(why, cap, "%s is not running: it %s", name, st);
        wsc_proc_end(c->proc); /* (its group may still hold processes) */
        return 1;
    }
    wsc_proc_end(c->proc);
    serve(w, 0); /* its connections close */
    return 0;
}

int wsc_world_stop(wsc_world *w, const char *name, long long within_ms, char *why, size_t cap)
{
    consumer *c = started(w, name, why, cap);
    if (!c) return 1;
    if (!within_ms) within_ms = WSC_STOP_MS;
    if (!wsc_proc_running(c->proc)) {
        char st[128];
        wsc_proc_status_text(c->proc, st, sizeof st);
        snprintf(why, cap, "%s is not running: it %s", name, st);
        wsc_proc_end(c->proc);
        return 1;
    }
    wsc_proc_signal(c->proc, SIGTERM);
    /* a graceful stop flushes what it owes: the server serves it meanwhile.  The clock
     * still moves itself (a consumer that notices the stop only when its blocked read
     * returns needs that), after a longer quiet: one that closes at once is not
     * overtaken by its reads timing out first */
    long long until = wsc_mono_ms() + within_ms;
    w->stopping = c;
    if (w->serving) frs_server_set_auto_advance(&w->srv, WSC_STOP_AUTO_ADVANCE_MS);
    while (wsc_proc_running(c->proc) && wsc_mono_ms() < until) serve(w, 2);
    if (w->serving) frs_server_set_auto_advance(&w->srv, WSC_AUTO_ADVANCE_MS);
    w->stopping = NULL;
    int stopped = !wsc_proc_running(c->proc);
    wsc_proc_end(c->proc); /* what else its group holds, and escaped orphans */
    serve(w, 0);
    if (!stopped) {
        snprintf(why, cap, "%s ignored SIGTERM: still running %lld ms after it, so it was "
                 "killed (SIGKILL)", name, within_ms);
        return 1;
    }
    return 0;
}

/* A wait found c settled: its time is from its start to its last command (the quiet
 * that confirmed it is wsim's). */
static void settled_at(wsc_world *w, const consumer *c)
{
    long long last = c->started_ms;
    for (frs_conn *k = w->serving ? w->srv.conns : NULL; k; k = k->next)
        if (k->last_ms > last) last = k->last_ms;
    if (!w->serving) last = wsc_mono_ms();
    w->consumer_ms += last - c->started_ms;
}

long long wsc_world_consumer_ms(const wsc_world *w) { return w->consumer_ms; }

int wsc_world_wait(wsc_world *w, const char *name, size_t at, long long within_ms, char *why,
                   size_t cap)
{
    consumer *c = started(w, name, why, cap);
    if (!c) return 1;
    if (!within_ms) within_ms = WSC_WAIT_MS;
    long long start = wsc_mono_ms(), deadline = start + within_ms;
    uint64_t probe_at = ws_conn_get_stats(w->probe).commands_sent;
    uint64_t last_second = 0; /* the consumer's commands in the last second of the wait */
    int flooding_seen = 0;
    wsi_buf what = {0}, err = {0};
    int rc = 0;
    int crashes = w->crashed;
    char *last_what = NULL;     /* what was outstanding and held, to see it change */
    unsigned long moves_at = 0; /* the clock's moves then */
    int64_t clock_at = 0;       /* the clock then */
    /* ... and how far the clock must have gone since: past every min-idle and block the
     * file declares (a reclaim waits its min-idle, a read its block) */
    int64_t horizon = 0;
    for (size_t i = 0; w->fake && i < at && i < w->sc->nst; i++) {
        const wsc_stmt *s = &w->sc->st[i];
        if (s->kind != K_SUBSCRIBE) continue;
        int64_t h = s->cfg.min_idle_ms + (s->cfg.block_ms ? s->cfg.block_ms : 10);
        if (h > horizon) horizon = h;
    }
    w->held[0] = '\0';
    for (;;) {
        serve(w, 2);
        long long now = wsc_mono_ms();
        if (w->restart_why[0]) {
            snprintf(why, cap, "%s", w->restart_why);
            rc = 1;
            break;
        }
        if (w->crashed != crashes) { /* killed and started again: it recovers from now */
            crashes = w->crashed;
            deadline = now + within_ms;
        }
        if (!wsc_proc_running(c->proc)) {
            char st[128];
            wsc_proc_status_text(c->proc, st, sizeof st);
            wsi_buf_clear(&what);
            size_t moving;
            int o = outstanding(w, at, &what, &err, &moving);
            snprintf(why, cap, "%s %s before it settled%s%s", name, st,
                     o > 0 ? ": " : "", o > 0 ? what.p : "");
            rc = 1;
            break;
        }
        if (w->serving && w->srv.stop) {
            snprintf(why, cap, "a client shut the server down (SHUTDOWN) while %s was being "
                     "waited for", name);
            rc = 1;
            break;
        }
        /* settled needs it to have connected since it started (a process that has not
         * yet is not done, it is starting), the outstanding work done, and quiet */
        int connected = !w->serving || w->srv.stats.connections > c->conns;
        wsi_buf_clear(&what);
        size_t moving;
        int o = outstanding(w, at, &what, &err, &moving);
        if (o < 0) {
            snprintf(why, cap, "%s", err.p ? err.p : "cannot read the server");
            rc = 1;
            break;
        }
        /* the clock moves itself while work is outstanding (a recovery may wait for
         * time); once it is done, only the quiet is waited for, and a blocked read timing
         * out then would only make the consumer read again */
        int want = o ? WSC_AUTO_ADVANCE_MS : 0; /* (setting it starts its quiet anew) */
        if (w->serving && w->srv.opt.auto_advance_ms != want)
            frs_server_set_auto_advance(&w->srv, want);
        if (o == 0 && connected && (!w->serving || quiet(w, WSC_QUIET_MS)) &&
            !wsc_proc_busy(c->proc)) {
            if (w->serving || real_quiet(w, at, &what, &err) == 1) {
                settled_at(w, c);
                break;
            }
        }
        /* after a crash, for the explorer: what is left only pending, held for a recovery
         * this consumer does not make, ends the wait once the consumer has stayed quiet
         * while the clock moved past its deadlines WSC_HELD_MOVES times (a recovery that
         * waits for time got it) -- the entries are held, not lost, as the simulation
         * counts them */
        if (o > 0 && !moving && w->held_ok && w->crashed && connected) {
            if (!last_what || strcmp(last_what, what.p)) {
                wsi_free(last_what);
                last_what = wsi_strdup(what.p);
                moves_at = w->clock_moves;
                clock_at = fr_clock_now(w->fake);
            } else if (w->clock_moves - moves_at >= WSC_HELD_MOVES &&
                       fr_clock_now(w->fake) - clock_at >= horizon && quiet(w, WSC_QUIET_MS) &&
                       !wsc_proc_busy(c->proc)) {
                snprintf(w->held, sizeof w->held, "held after the crash, read back by nothing "
                         "of %s: %s", name, what.p);
                settled_at(w, c);
                break;
            }
        }
        if (w->fake && !flooding_seen && now >= deadline - 1000) {
            flooding_seen = 1;
            last_second = fr_server_commands_executed(w->fake);
            probe_at = ws_conn_get_stats(w->probe).commands_sent;
        }
        if (now >= deadline) { /* (what says what is outstanding, as of this turn) */
            wsi_buf b = {0};
            wsi_buf_printf(&b, "%s did not settle within %lld ms", name, within_ms);
            if (o > 0) wsi_buf_printf(&b, ": %s", what.p);
            else if (o == 0) wsi_buf_puts(&b, ": nothing is outstanding, but it never went quiet");
            if (w->serving && w->srv.stats.connections == c->conns)
                wsi_buf_printf(&b, "; it never connected to the server (REDIS_URL=%s)", w->url);
            else if (w->serving)
                idle_note(w, &b);
            if (w->fake) {
                uint64_t probes = ws_conn_get_stats(w->probe).commands_sent - probe_at;
                uint64_t cmds = fr_server_commands_executed(w->fake) - last_second;
                cmds = cmds > probes ? cmds - probes : 0;
                if (!quiet(w, WSC_QUIET_MS) && cmds > 1000)
                    wsi_buf_printf(&b, "; it floods the server: %llu commands in the last "
                                   "second", (unsigned long long)cmds);
            }
            snprintf(why, cap, "%s", b.p ? b.p : "did not settle");
            wsi_buf_free(&b);
            rc = 1;
            break;
        }
    }
    if (w->serving && w->srv.opt.auto_advance_ms != WSC_AUTO_ADVANCE_MS)
        frs_server_set_auto_advance(&w->srv, WSC_AUTO_ADVANCE_MS);
    wsi_free(last_what);
    int oom = what.oom || err.oom;
    wsi_buf_free(&what);
    wsi_buf_free(&err);
    return oom ? WS_ENOMEM : rc;
}

/* ----- Crashes ----------------------------------------------------------------------------- */

/* The consumer whose process (group) sent on connection conn: by the peer's pid on the
 * unix socket; on TCP, the only consumer running (NULL when it cannot be told). */
static consumer *sender(wsc_world *w, uint64_t conn)
{
    frs_conn *c = frs_conn_by_id(&w->srv, conn);
    consumer *only = NULL;
    size_t running = 0;
    for (size_t i = 0; i < w->ncons; i++) {
        consumer *k = &w->cons[i];
        if (!k->proc || !wsc_proc_running(k->proc)) continue;
        running++;
        only = k;
        if (c && c->peer_pid > 0 && getpgid((pid_t)c->peer_pid) == wsc_proc_pid(k->proc))
            return k;
    }
    return running == 1 ? only : NULL;
}

/* The hold reached its command (called from inside the server's loop): the consumer that
 * sent it is killed and started again. */
static void crash_reached(void *ud, const frs_hold_info *info)
{
    wsc_world *w = ud;
    w->crashed = 1;
    size_t k = 0;
    for (int i = 0; i < info->argc && k + 4 < sizeof w->hit; i++) {
        char tok[256];
        size_t n = info->argvlen[i] < 200 ? info->argvlen[i] : 200;
        fr_reply r = {.type = FR_REPLY_BULK, .str = info->argv[i], .len = n};
        char *t = ws_reply_text(&r, NULL);
        int plain = t && strlen(t) == n + 2 && !strpbrk(info->argv[i], " \"'") && n;
        snprintf(tok, sizeof tok, "%s", plain ? info->argv[i] : t ? t : "?");
        if (plain) tok[n] = '\0';
        wsi_free(t);
        k += (size_t)snprintf(w->hit + k, sizeof w->hit - k, "%s%s", i ? " " : "", tok);
    }
    consumer *c = sender(w, info->conn);
    for (size_t i = 0; i < w->ncons; i++) {
        consumer *v = &w->cons[i];
        if ((c && v != c) || !v->proc || !wsc_proc_running(v->proc)) continue;
        w->consumer_ms += wsc_mono_ms() - v->started_ms; /* its time: start to crash */
        wsc_proc_end(v->proc);
        if (v == w->stopping) continue; /* it was going anyway */
        char why[400];
        if (wsc_world_start(w, v->decl, why, sizeof why) != 0)
            snprintf(w->restart_why, sizeof w->restart_why, "the restart of %s after the crash "
                     "failed: %s", v->decl->proc, why);
    }
}

int wsc_world_arm_crash(wsc_world *w, const char *name, uint64_t nth, int after, char *why,
                        size_t cap)
{
    if (!w->serving) {
        snprintf(why, cap, "a crash of a consumer process is held at the server wsim serves: "
                 "it cannot be made on a real server (--backend)");
        return 1;
    }
    frs_hold_spec spec = {.match = NULL, .name = name, .nth = nth,
                          .when = after ? FRS_HOLD_AFTER : FRS_HOLD_BEFORE,
                          .reached = crash_reached, .ud = w};
    if (frs_hold_arm(&w->srv, &spec) != 0) {
        snprintf(why, cap, "the server refused the hold");
        return 1;
    }
    w->crash_armed = 1;
    return 0;
}

int wsc_world_crashed(const wsc_world *w, char *hit, size_t cap, uint64_t *counted)
{
    frs_hold_info info;
    if (counted) *counted = w->crash_armed ? (frs_hold_get((frs_server *)&w->srv, &info), info.counted) : 0;
    if (hit && cap) snprintf(hit, cap, "%s", w->crashed ? w->hit : "");
    return w->crashed;
}

wsr_recording *wsc_world_recording(wsc_world *w, char **err)
{
    *err = NULL;
    if (!w->rec[0]) {
        *err = wsi_strdup("no recording of the consumers' traffic");
        return NULL;
    }
    if (w->serving) frs_record_flush(&w->srv);
    else serve(w, 0); /* (the proxy writes its lines as it turns) */
    wsr_read_options ro = {.allow_open = 1};
    return wsr_read_file(w->rec, &ro, err);
}

char *wsc_world_log_tail(const wsc_world *w, const char *name, int lines)
{
    consumer *c = find((wsc_world *)w, name);
    if (!c) return NULL;
    int fd = open(c->log, O_RDONLY | O_CLOEXEC);
    if (fd < 0) return NULL;
    char buf[16384];
    off_t size = lseek(fd, 0, SEEK_END);
    off_t from = size > (off_t)sizeof buf - 1 ? size - (off_t)sizeof buf + 1 : 0;
    ssize_t n = pread(fd, buf, sizeof buf - 1, from);
    close(fd);
    if (n <= 0) return NULL;
    size_t len = (size_t)n;
    if (buf[len - 1] == '\n') len--;
    size_t start = len;
    int seen = 0;
    while (start > 0 && !(buf[start - 1] == '\n' && ++seen >= lines)) start--;
    wsi_buf b = {0};
    for (size_t i = start; i < len;) {
        size_t e = i;
        while (e < len && buf[e] != '\n') e++;
        wsi_buf_puts(&b, "    ");
        wsi_buf_add(&b, buf + i, e - i);
        wsi_buf_puts(&b, "\n");
        i = e + 1;
    }
    return wsi_buf_take(&b);
}
