/* explore_proc.c -- `wsim explore` on a file that drives consumer processes
 * (docs/consumer.md, "Crashing it at every command").
 *
 * A baseline run of the file, recorded, gives the consumer's commands in the order they
 * reached the server; a second one says whether the consumer sends the same commands
 * each time (if not, the report says so: a point's verdict is then one run's).  Each
 * command k gives two points: the server holds it before applying it, or applies it and
 * holds its reply; the consumer is killed there and started again.  A point is named as
 * the fault statement that replays it names it -- `crash-before 2nd XACK`, counted by the
 * command's name among the consumer's commands -- and is run from scratch: a fresh
 * keyspace, a fresh server, the consumer started as the file says, the hold armed from
 * the first statement, every step of the file (its expectations left out), and then the
 * invariants checked on what the run left: the effects check of the handler convention
 * (wsc_convention.h).  Points run one after another in this process (--jobs 1) or spread
 * over worker processes, each running its share from scratch (--jobs N); the results are
 * put in their place, so the report is the same whatever N. */
#define _GNU_SOURCE /* mkdtemp */
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "wsc_explore_proc.h"
#include "wsc_pcheck.h"
#include "wsc_proc.h"
#include "wsc_world.h"
#include "wsi_alloc.h"
#include "wsi_buf.h"
#include "wsi_io.h"
#include "wsr.h"


/* What one run of the file did. */
typedef struct run_out {
    long long consumer_ms;  /* the consumers' own time in the run (wsc_world.h) */
    wsc_pcmd *cmds;         /* (asked for) the commands the consumer sent, in arrival order */
    size_t ncmds;
    int failed;         /* the run could not go on (a step failed) */
    char *report;       /* then why (the runner's report) */
    int crashed;        /* the armed crash held its command */
    char hit[512];      /* that command */
    const char *verdict;
    char *detail;
    int forbidden;
} run_out;


static void run_out_free(run_out *o)
{
    wsc_process_commands_free(o->cmds, o->ncmds);
    wsi_free(o->report);
    wsi_free(o->detail);
    memset(o, 0, sizeof *o);
}

/* The commands of a recording in the order they reached the server: a blocked command
 * when its wait line is written, every other one at its cmd line.  NULL with *err set. */
static wsc_pcmd *commands_of(const wsr_recording *rec, size_t *n, char **err)
{
    wsc_pcmd *v = NULL;
    size_t k = 0;
    for (size_t i = 0; i < rec->n; i++) {
        const wsr_event *e = &rec->ev[i];
        if (!((e->kind == WSR_CMD && e->since < 0) || e->kind == WSR_WAIT) || e->argc < 1) continue;
        wsc_pcmd *g = wsi_realloc(v, (k + 1) * sizeof *g);
        if (!g) goto oom;
        v = g;
        wsc_pcmd *c = &v[k];
        memset(c, 0, sizeof *c);
        snprintf(c->name, sizeof c->name, "%.*s", (int)e->argvlen[0], e->argv[0]);
        for (char *p = c->name; *p; p++)
            if (*p >= 'a' && *p <= 'z') *p = (char)(*p - 'a' + 'A');
        for (size_t j = 0; j < k; j++) c->occurrence += !strcmp(v[j].name, c->name);
        c->occurrence++;
        wsi_buf b = {0};
        for (int a = 0; a < e->argc; a++) {
            fr_reply r = {.type = FR_REPLY_BULK, .str = e->argv[a], .len = e->argvlen[a]};
            int plain = e->argvlen[a] && !strpbrk(e->argv[a], " \"'\\") &&
                        strlen(e->argv[a]) == e->argvlen[a];
            for (size_t q = 0; plain && q < e->argvlen[a]; q++)
                plain = (unsigned char)e->argv[a][q] > ' ' && (unsigned char)e->argv[a][q] < 127;
            char *t = plain ? NULL : ws_reply_text(&r, NULL);
            wsi_buf_printf(&b, "%s%s", a ? " " : "", plain ? e->argv[a] : t ? t : "?");
            wsi_free(t);
        }
        if (!(c->text = wsi_buf_take(&b))) goto oom;
        /* a blocked command is answered when a later cmd line of its connection says
         * since= (it was served or timed out) */
        c->answered = e->kind == WSR_CMD;
        for (size_t j = i + 1; j < rec->n && !c->answered; j++)
            c->answered = rec->ev[j].kind == WSR_CMD && rec->ev[j].conn == e->conn &&
                          rec->ev[j].since >= 0;
        k++;
    }
    *n = k;
    if (!v) v = wsi_calloc(1, sizeof *v);
    if (!v) *err = wsi_strdup("out of memory");
    return v;
oom:
    for (size_t j = 0; j < k; j++) wsi_free(v[j].text);
    wsi_free(v);
    *err = wsi_strdup("out of memory");
    return NULL;
}

void wsc_process_commands_free(wsc_pcmd *v, size_t n)
{
    for (size_t i = 0; i < n && v; i++) wsi_free(v[i].text);
    wsi_free(v);
}

/* The first line of a runner's report (why a run stopped), for a point's detail. */
static char *first_lines(const char *report)
{
    if (!report) return wsi_strdup("the run stopped");
    const char *e = strstr(report, "\n  trace around it:");
    const char *o = strstr(report, "\n  the end of");
    size_t n = e ? (size_t)(e - report) : strlen(report);
    if (o && (size_t)(o - report) < n) n = (size_t)(o - report);
    char *s = wsi_memdup(report, n);
    for (char *p = s; p && *p; p++)
        if (*p == '\n') *p = ' ';
    return s;
}

/* Classifies what a point's run left (wsc_pcheck.h): the verdict is the effects check's
 * when it applies -- it knows what each entry asked for -- else the traffic checker's
 * first violation that a crash can cause (lost, doubled, stranded, unsettled); a settle
 * sent before its writes or an atomic segment out of shape is the consumer's design,
 * there with or without a crash, and goes in the detail only.  0, or -1 when out of
 * memory. */
static int classify(ws_sim *sim, wsc_world *w, const wsc_scenario *sc, run_out *o)
{
    wsc_pcheck c;
    char why[1024];
    const char *held = wsc_world_held(w);
    int rc = wsc_pcheck_run(sim, w, sc, held[0] != '\0', &c, why, sizeof why);
    if (rc == WS_ENOMEM) return -1;
    wsi_buf b = {0};
    wsi_buf_add(&b, "", 0);
    if (held[0]) wsi_buf_puts(&b, held);
    if (rc) {
        o->verdict = "error";
        wsi_buf_printf(&b, "cannot check the invariants: %s", why);
        o->detail = wsi_buf_take(&b);
        return o->detail ? 0 : -1;
    }
    static const char *const crashy[] = {"lost", "doubled", "stranded", "unsettled", "leaked"};
    o->verdict = "fine";
    for (size_t i = 0; i < c.n; i++) {
        const wsc_pviolation *v = &c.v[i];
        int counts = 0;
        for (size_t k = 0; k < sizeof crashy / sizeof *crashy; k++) counts |= !strcmp(v->kind, crashy[k]);
        int decides = counts && (!c.effects || !strcmp(v->source, "effects"));
        if (decides && !strcmp(o->verdict, "fine"))
            o->verdict = !strcmp(v->kind, "unsettled") ? "error" : v->kind;
        wsi_buf_printf(&b, "%s%s (%s): %s", b.len ? "; " : "", v->kind, v->source, v->sentence);
        for (int k = 0; k < WSC_NINVARIANTS; k++)
            if (decides && (sc->forbid & (1u << k)) && !strcmp(v->kind, WSC_INVARIANTS[k]))
                o->forbidden = 1;
    }
    wsc_pcheck_free(&c);
    o->detail = wsi_buf_take(&b);
    return o->detail ? 0 : -1;
}

/* Runs sc once: the crash armed (name, nth, after; nth 0: counting only), the
 * expectations run (checks) or left out; then, for a crash, classified, and when cmds the
 * consumer's commands read from the run's recording (a failure to read them fails the
 * run).  0, or -1 when out of memory. */
static int run_once(const wsc_scenario *sc, const wsc_options *base, const char *name,
                    uint64_t nth, int after, int cmds, int checks, run_out *o)
{
    memset(o, 0, sizeof *o);
    wsc_options opt = *base;
    opt.no_checks = !checks;
    opt.no_crash_faults = 1; /* each point is the one crash of its run */
    opt.no_trace_text = 1;
    wsc_runner *r = wsc_runner_new(sc, &opt);
    if (!r) return -1;
    wsc_world *w = wsc_runner_world(r);
    char why[512];
    if (w && nth) wsc_world_allow_held(w, 1);
    if (!wsc_runner_failed(r) && w && wsc_world_arm_crash(w, name, nth, after, why, sizeof why)) {
        o->failed = 1;
        o->report = wsi_strdup(why);
    }
    for (size_t i = 0; i < sc->nst && !o->failed && !wsc_runner_failed(r); i++)
        wsc_runner_exec(r, i);
    int rc = 0;
    if (wsc_runner_oom(r)) rc = -1;
    if (!rc && w) o->crashed = wsc_world_crashed(w, o->hit, sizeof o->hit, NULL);
    if (w) o->consumer_ms = wsc_world_consumer_ms(w);
    if (!rc && w && cmds && !o->failed && !wsc_runner_failed(r)) {
        char *err = NULL;
        wsr_recording *rec = wsc_world_recording(w, &err);
        if (rec) o->cmds = commands_of(rec, &o->ncmds, &err);
        wsr_free(rec);
        if (!o->cmds) {
            wsi_buf e = {0};
            wsi_buf_printf(&e, "the consumer's traffic cannot be read: %s", err ? err : "?");
            o->failed = 1;
            if (!(o->report = wsi_buf_take(&e))) rc = -1;
        }
        wsi_free(err);
    }
    if (!rc && !o->failed && wsc_runner_failed(r)) {
        wsc_result res;
        wsc_runner_finish(r, &res);
        o->failed = 1;
        o->report = res.report;
        res.report = NULL;
        wsc_result_free(&res);
    }
    if (!rc && !o->failed && nth && o->crashed) rc = classify(wsc_runner_sim(r), w, sc, o);
    wsc_runner_free(r);
    return rc;
}

int wsc_process_commands(const wsc_scenario *sc, const wsc_options *opt, wsc_pcmd **cmds,
                         size_t *n, char **error)
{
    *cmds = NULL;
    *n = 0;
    *error = NULL;
    run_out o;
    if (run_once(sc, opt, NULL, 0, 0, 1, 0, &o)) {
        run_out_free(&o);
        return WS_ENOMEM;
    }
    if (o.failed) {
        *error = o.report;
        o.report = NULL;
        run_out_free(&o);
        return *error ? 1 : WS_ENOMEM;
    }
    *cmds = o.cmds;
    *n = o.ncmds;
    o.cmds = NULL;
    o.ncmds = 0;
    run_out_free(&o);
    return 0;
}

/* ----- Points --------------------------------------------------------------------------- */

/* WSIM_EXPLORE_TIMES=FILE: each point appends "POINT_MS CONSUMER_MS" there (a line, one
 * write: workers share the file), for bench/bench_process.c. */
static void note_times(long long point_ms, long long consumer_ms)
{
    const char *path = getenv("WSIM_EXPLORE_TIMES");
    if (!path || !*path) return;
    FILE *f = fopen(path, "a");
    if (!f) return;
    fprintf(f, "%lld %lld\n", point_ms, consumer_ms);
    fclose(f);
}

int wsc_process_point(const wsc_scenario *sc, const wsc_options *opt, const wsc_pcmd *c,
                      wsc_crash_point *p)
{
    run_out o;
    long long t0 = wsc_mono_ms();
    int failed = run_once(sc, opt, c->name, c->occurrence, p->command == 0, 0, 0, &o);
    note_times(wsc_mono_ms() - t0, o.consumer_ms);
    if (failed) {
        run_out_free(&o);
        return -1;
    }
    wsi_buf d = {0};
    wsi_buf_add(&d, "", 0);
    if (o.failed) {
        p->verdict = "error";
        char *why = first_lines(o.report);
        wsi_buf_puts(&d, why ? why : "");
        wsi_free(why);
    } else if (!o.crashed) {
        p->verdict = "not reached";
        wsi_buf_printf(&d, "the consumer sent no %zu%s %s this time", c->occurrence,
                       c->occurrence % 10 == 1 && c->occurrence % 100 != 11 ? "st"
                       : c->occurrence % 10 == 2 && c->occurrence % 100 != 12 ? "nd"
                       : c->occurrence % 10 == 3 && c->occurrence % 100 != 13 ? "rd" : "th",
                       c->name);
    } else {
        p->verdict = o.verdict;
        p->forbidden = o.forbidden;
        wsi_buf_puts(&d, o.detail ? o.detail : "");
    }
    if (o.crashed && strcmp(o.hit, c->text) != 0)
        wsi_buf_printf(&d, "%sit held `%s`, where the baseline's was `%s`", d.len ? "; " : "",
                       o.hit, c->text);
    wsi_free(p->command_text);
    p->command_text = wsi_strdup(o.crashed ? o.hit : c->text);
    wsi_free(p->detail);
    p->detail = wsi_buf_take(&d);
    run_out_free(&o);
    return p->command_text && p->detail ? 0 : -1;
}

/* The verdicts a worker sends, by number. */
static const char *const VERDICTS[] = {"fine", "doubled", "lost", "split", "leaked",
                                       "stranded", "not reached", "error"};
#define NVERDICTS (sizeof VERDICTS / sizeof *VERDICTS)

/* A worker's answer for one point: this header, then the command text and the detail. */
typedef struct answer {
    uint32_t point, verdict, forbidden, text_len, detail_len;
} answer;

static int send_point(int fd, size_t i, const wsc_crash_point *p)
{
    answer a = {(uint32_t)i, NVERDICTS, (uint32_t)p->forbidden, (uint32_t)strlen(p->command_text),
                (uint32_t)strlen(p->detail)};
    for (uint32_t k = 0; k < NVERDICTS; k++)
        if (!strcmp(p->verdict, VERDICTS[k])) a.verdict = k;
    return wsi_write_all(fd, &a, sizeof a) || wsi_write_all(fd, p->command_text, a.text_len) ||
                   wsi_write_all(fd, p->detail, a.detail_len)
               ? -1 : 0;
}

/* Reads exactly n bytes; 0, or -1 at the end or an error. */
static int read_all(int fd, void *buf, size_t n)
{
    char *b = buf;
    while (n) {
        ssize_t r = read(fd, b, n);
        if (r < 0 && errno == EINTR) continue;
        if (r <= 0) return -1;
        b += r;
        n -= (size_t)r;
    }
    return 0;
}

/* Reads one answer into the points; 1 when the pipe ended, -1 on a bad answer or out of
 * memory, 0 done. */
static int take_answer(int fd, wsc_exploration *out)
{
    answer a;
    ssize_t r;
    do r = read(fd, &a, 1);
    while (r < 0 && errno == EINTR);
    if (r == 0) return 1;
    if (r < 0 || read_all(fd, (char *)&a + 1, sizeof a - 1)) return -1;
    if (a.point >= out->npoints || a.verdict >= NVERDICTS || a.text_len > (1u << 20) ||
        a.detail_len > (1u << 24))
        return -1;
    wsc_crash_point *p = &out->points[a.point];
    char *text = wsi_malloc((size_t)a.text_len + 1), *detail = wsi_malloc((size_t)a.detail_len + 1);
    if (!text || !detail || read_all(fd, text, a.text_len) || read_all(fd, detail, a.detail_len)) {
        wsi_free(text);
        wsi_free(detail);
        return -1;
    }
    text[a.text_len] = detail[a.detail_len] = '\0';
    wsi_free(p->command_text);
    wsi_free(p->detail);
    p->command_text = text;
    p->detail = detail;
    p->verdict = VERDICTS[a.verdict];
    p->forbidden = (int)a.forbidden;
    p->explored = 2; /* (answered) */
    return 0;
}

/* The points of the baseline's commands: two each, before and after -- but no "after"
 * for a command whose reply never came in the baseline (a read that blocked until the
 * consumer was stopped): holding a reply that never comes is the stop itself. */
static int make_points(const wsc_scenario *sc, const wsc_pcmd *base, size_t n, wsc_exploration *out)
{
    size_t np = 0;
    for (size_t k = 0; k < n; k++) np += base[k].answered ? 2 : 1;
    out->npoints = np;
    out->points = wsi_calloc(out->npoints ? out->npoints : 1, sizeof *out->points);
    if (!out->points) return -1;
    const char *who = "consumer";
    for (size_t i = 0; i < sc->nst; i++)
        if (sc->st[i].kind == K_CONSUMER) {
            who = sc->st[i].proc;
            break;
        }
    size_t at = 0;
    for (size_t k = 0; k < n; k++)
        for (int after = 0; after < 1 + base[k].answered; after++) {
            wsc_crash_point *p = &out->points[at++];
            snprintf(p->conn, sizeof p->conn, "%s", who);
            p->round_trip = k + 1;
            p->command = after ? 0 : 1;
            p->commands = n;
            wsi_buf b = {0};
            size_t o = base[k].occurrence;
            wsi_buf_printf(&b, "crash-%s %zu%s %s", after ? "after" : "before", o,
                           o % 10 == 1 && o % 100 != 11 ? "st" : o % 10 == 2 && o % 100 != 12 ? "nd"
                           : o % 10 == 3 && o % 100 != 13 ? "rd" : "th", base[k].name);
            p->fault = wsi_buf_take(&b);
            p->command_text = wsi_strdup(base[k].text);
            if (!p->fault || !p->command_text) return -1;
        }
    return 0;
}

int wsc_explore_process(const wsc_scenario *sc, const wsc_options *opt,
                        const wsc_explore_options *xo, wsc_exploration *out)
{
    memset(out, 0, sizeof *out);
    if (xo->nshards && (xo->shard < 1 || xo->shard > xo->nshards)) return WS_EINVAL;
    if (opt->backend && strcmp(opt->backend, "fake") != 0) {
        out->error = wsi_strdup("a consumer process is crashed at the server wsim serves: "
                                "explore runs on the fake only");
        return out->error ? 0 : WS_ENOMEM;
    }
    int rc = 0;
    wsc_pcmd *base[2] = {NULL, NULL};
    size_t nbase[2] = {0, 0};
    /* the baselines: the file as it is (it must pass), then once more to compare */
    for (int b = 0; b < 2 && !rc && !out->error; b++) {
        run_out o;
        if (run_once(sc, opt, NULL, 0, 0, 1, b == 0, &o)) rc = WS_ENOMEM;
        else if (o.failed) {
            wsi_buf e = {0};
            wsi_buf_printf(&e, "the scenario fails without a crash:\n%s", o.report ? o.report : "");
            if (!(out->error = wsi_buf_take(&e))) rc = WS_ENOMEM;
        } else {
            base[b] = o.cmds;
            nbase[b] = o.ncmds;
            o.cmds = NULL;
            o.ncmds = 0;
        }
        run_out_free(&o);
    }
    if (!rc && !out->error && make_points(sc, base[0], nbase[0], out)) rc = WS_ENOMEM;
    if (!rc && !out->error) {
        /* the same commands twice?  If not, the verdicts are one run's each */
        size_t k = 0;
        while (k < nbase[0] && k < nbase[1] && !strcmp(base[0][k].name, base[1][k].name)) k++;
        if (k < nbase[0] || k < nbase[1]) {
            wsi_buf b = {0};
            wsi_buf_printf(&b, "the consumer is not deterministic: two runs without a crash sent "
                           "different commands (command %zu: %s in one, %s in the other); each "
                           "point names its command by name and number, says what it held, "
                           "and its verdict is that run's", k + 1,
                           k < nbase[0] ? base[0][k].name : "nothing",
                           k < nbase[1] ? base[1][k].name : "nothing");
            if (!(out->note = wsi_buf_take(&b))) rc = WS_ENOMEM;
        }
    }
    /* which points this exploration runs: every one, or a shard's */
    size_t mine = 0;
    for (size_t i = 0; !rc && i < out->npoints; i++) {
        out->points[i].explored = !xo->nshards || i % xo->nshards == xo->shard - 1;
        mine += out->points[i].explored;
    }
    int jobs = xo->jobs > 1 ? xo->jobs : 1;
    if ((size_t)jobs > mine) jobs = mine ? (int)mine : 1;
    if (!rc && !out->error && jobs == 1) {
        for (size_t i = 0; i < out->npoints && !rc; i++)
            if (out->points[i].explored &&
                wsc_process_point(sc, opt, &base[0][out->points[i].round_trip - 1],
                                  &out->points[i]))
                rc = WS_ENOMEM;
    } else if (!rc && !out->error) {
        /* workers: each runs every jobs-th of this exploration's points, from scratch */
        int fds[64];
        pid_t pids[64];
        if (jobs > 64) jobs = 64;
        int started = 0;
        fflush(NULL);
        for (int j = 0; j < jobs; j++) {
            int pf[2];
            if (pipe(pf)) break;
            pid_t pid = fork();
            if (pid < 0) {
                close(pf[0]);
                close(pf[1]);
                break;
            }
            if (pid == 0) {
                close(pf[0]);
                for (int q = 0; q < started; q++) close(fds[q]);
                size_t rank = 0;
                int bad = 0;
                for (size_t i = 0; i < out->npoints && !bad; i++) {
                    if (!out->points[i].explored) continue;
                    if (rank++ % (size_t)jobs != (size_t)j) continue;
                    wsc_crash_point *p = &out->points[i];
                    bad = wsc_process_point(sc, opt, &base[0][p->round_trip - 1], p) ||
                          send_point(pf[1], i, p);
                }
                _exit(bad ? 5 : 0);
            }
            close(pf[1]);
            fds[started] = pf[0];
            pids[started++] = pid;
        }
        /* answers as they come, from every worker: a worker whose answers fill its pipe
         * (a verbose verdict is kilobytes) must not wait for the workers before it to end
         * -- read one pipe to its end first and the others stall behind it */
        struct pollfd pf[64];
        int open = started;
        for (int j = 0; j < started; j++) pf[j] = (struct pollfd){.fd = fds[j], .events = POLLIN};
        while (open > 0) {
            if (poll(pf, (nfds_t)started, -1) < 0) {
                if (errno == EINTR) continue;
                break;
            }
            for (int j = 0; j < started; j++) {
                if (pf[j].fd < 0 || !pf[j].revents) continue;
                int t = take_answer(fds[j], out);
                if (t == 0) continue;
                close(fds[j]);
                pf[j].fd = -1;
                open--;
                int st;
                waitpid(pids[j], &st, 0);
                if ((t < 0 || !WIFEXITED(st) || WEXITSTATUS(st) != 0) && !out->failure) {
                    wsi_buf b = {0};
                    wsi_buf_printf(&b, "worker %d of %d died (%s %d): the exploration is "
                                   "incomplete", j + 1, jobs,
                                   WIFSIGNALED(st) ? "signal" : "status",
                                   WIFSIGNALED(st) ? WTERMSIG(st) : WEXITSTATUS(st));
                    out->failure = wsi_buf_take(&b);
                }
            }
        }
        for (int j = 0; j < started; j++) /* (poll failed: end what is left) */
            if (pf[j].fd >= 0) {
                close(fds[j]);
                waitpid(pids[j], NULL, 0);
                if (!out->failure) out->failure = wsi_strdup("cannot wait for the workers (poll)");
            }
        wsc_proc_end_escaped(); /* (what a dead worker's consumers left) */
        if (started < jobs && !out->failure)
            out->failure = wsi_strdup("cannot start the workers (fork)");
        for (size_t i = 0; i < out->npoints && !out->failure; i++)
            if (out->points[i].explored && out->points[i].explored != 2 && !out->failure)
                out->failure = wsi_strdup("a worker did not answer every point");
    }
    for (size_t i = 0; !rc && !out->error && i < out->npoints; i++) {
        wsc_crash_point *p = &out->points[i];
        if (!p->explored || !p->verdict) continue;
        p->explored = 1;
        wsc_exploration_count(out, p);
    }
    wsc_process_commands_free(base[0], nbase[0]);
    wsc_process_commands_free(base[1], nbase[1]);
    return rc; /* (out is freed by the caller when out of memory) */
}
