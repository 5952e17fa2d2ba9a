/* two_roads.c -- two roads to one answer (issue 22, item 9): for every scenario of the
 * library that has a process form, `wsim explore` on the simulated scenario and on its
 * process form -- the engine run as a live process (`wsim consume`) against the fake wsim
 * serves, crashed at the server, its invariants judged from its recorded traffic -- must
 * give the same verdicts, point by point.
 *
 *   two_roads WSIM FILE|DIR...
 *
 * A file has a process form when its consumer's steps need nothing the simulation alone
 * can give (every entry produced before the first read; no crash, restart, shutdown,
 * fault or clock move of its own; no cluster, delay queue, reliable-list recovery set,
 * retry, abandoned delivery, batch or channel; payloads that tell the entries apart).  The form is the
 * file's world lines, setup, subscriptions and entries, then
 *
 *     consumer live run WSIM consume FILE
 *     start live
 *     wait live settled within 20s
 *
 * The points are matched by command: the simulation's "before k/n" of a command with the
 * process's crash-before of the same command (the consumer's commands in the order they
 * reached the server, aligned by their text), its "replies lost" of a round trip with the
 * process's crash-after of the round trip's last command.  Points of the process that
 * have no counterpart (its reads after the file's steps, its idle waits) must be fine.
 * Prints a line per file (agreement, or each point that disagrees) and a summary; exits 1
 * when a file disagrees. */
#define _GNU_SOURCE
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>

#include "wsc.h"
#include "wsc_int.h"

/* ----- Which files have a process form ----------------------------------------------------- */

/* Why sc has no process form, or NULL when it has one. */
static const char *no_process_form(const wsc_scenario *sc)
{
    if (sc->consumer_line) return "it drives a process already";
    if (sc->cluster) return "cluster";
    if (sc->needs_real) return "needs a real server";
    int read_seen = 0;
    for (size_t i = 0; i < sc->nst; i++) {
        const wsc_stmt *st = &sc->st[i];
        switch (st->kind) {
        case K_READ: read_seen = 1; break;
        case K_PRODUCE:
            if (read_seen) return "an entry is produced after a read";
            for (size_t k = 0; k < i; k++)
                if (sc->st[k].kind == K_PRODUCE && sc->st[k].payload_len == st->payload_len &&
                    !memcmp(sc->st[k].payload, st->payload, st->payload_len))
                    return "two entries share a payload";
            if (st->key) return "an entry goes to another key";
            break;
        case K_CRASH: case K_RESTART: case K_SHUTDOWN: return "it crashes, restarts or shuts down";
        case K_FAULT: return "a fault";
        case K_ADVANCE: return "it moves the clock";
        case K_STOP: return "it stops a subscription";
        case K_SETTLE:
            /* a retry's copy or an abandoned entry comes back to the live consumer's
             * serving reads, which the simulated run never makes */
            if (st->outcome == WS_RETRY_AFTER || st->outcome == WS_RETRY) return "a retry";
            if (st->outcome == WS_ABANDON) return "an abandoned delivery";
            break;
        case K_SUBSCRIBE:
            if (st->cfg.form == WS_FORM_CHANNEL) return "a channel";
            if (st->cfg.form == WS_FORM_RELIABLE_LIST && st->s_recovery)
                return "a reliable list's recovery set (the consumer's clock)";
            if (st->s_dq) return "a delay queue (the consumer's clock)";
            if (st->cfg.batch) return "a batch";
            if (st->cfg.claiming) return "a claiming read";
            break;
        case K_POOL:
            if (!st->alias) return "a pool command outside a handler";
            /* fall through */
        case K_QUEUE:
            /* a script settles inside itself, where the traffic shows one EVAL */
            if (st->ncmd && (!strcasecmp(st->cmd[0].s, "EVAL") ||
                             !strcasecmp(st->cmd[0].s, "EVALSHA") ||
                             !strcasecmp(st->cmd[0].s, "FCALL")))
                return "a script in a handler (the traffic checker does not read into scripts)";
            break;
        case K_EXPECT_PENDING:
            if (st->nexpect || st->nelines)
                return "it leaves entries pending (a wait for it would not settle)";
            break;
        default: break;
        }
    }
    if (!read_seen) return "it reads nothing";
    return NULL;
}

/* The process form of sc (file path), as text (heap); with check, it ends with `expect
 * invariants` (else `expect nothing`: its explorer's baseline must pass). */
static char *process_form(const char *wsim, const char *path, const wsc_scenario *sc, int check)
{
    size_t cap = 1 << 16, len = 0;
    char *t = malloc(cap);
    len += (size_t)snprintf(t + len, cap - len, "scenario the process form of %s\n", path);
    if (sc->seed != 1) len += (size_t)snprintf(t + len, cap - len, "seed %llu\n",
                                                (unsigned long long)sc->seed);
    if (sc->start_ms) len += (size_t)snprintf(t + len, cap - len, "start %lld\n",
                                               (long long)sc->start_ms);
    len += (size_t)snprintf(t + len, cap - len, "consumer live run %s consume %s\n", wsim, path);
    for (size_t i = 0; i < sc->nst; i++) {
        const wsc_stmt *st = &sc->st[i];
        if (st->kind != K_SETUP && st->kind != K_SUBSCRIBE && st->kind != K_PRODUCE) continue;
        if (st->refused) continue;
        if (len + strlen(st->src) + 2 >= cap) t = realloc(t, cap *= 2);
        len += (size_t)snprintf(t + len, cap - len, "%s\n", st->src);
    }
    snprintf(t + len, cap - len, "start live\nwait live settled within 20s\n%s\n",
             check ? "expect invariants" : "expect nothing");
    return t;
}

/* ----- Comparing the points -------------------------------------------------------------- */

static int same(const char *a, const char *b) { return a && b && !strcmp(a, b); }

/* The one way the roads may word one finding differently: the simulation calls a point
 * lost where a crash falls between a settle and the write of its round that should have
 * come before it; the traffic shows that order in a run without any crash
 * (settle-before-writes: `expect invariants` of the process form fails so), and cannot
 * see at the crash point that the write never came (the traffic checker does not guess a
 * write the traffic lacks).  Set per file. */
static int sbw_file;

static int settle_before_writes(const wsc_crash_point *s, const wsc_crash_point *p)
{
    return sbw_file && same(s->verdict, "lost") && same(p->verdict, "fine");
}

/* Compares the two explorations; prints each disagreement; returns how many. */
static int compare(const char *path, const wsc_exploration *sim, const wsc_exploration *proc)
{
    int bad = 0;
    /* the process's crash-before points, in order, and their crash-after partners */
    size_t np = proc->npoints, j = 0;
    unsigned char *used = calloc(np ? np : 1, 1);
    for (size_t i = 0; i < sim->npoints; i++) {
        const wsc_crash_point *s = &sim->points[i];
        if (!s->command) continue; /* replies lost: with its round trip's last command */
        size_t k = j;
        while (k < np && !(proc->points[k].command == 1 &&
                           same(proc->points[k].command_text, s->command_text)))
            k++;
        if (k == np) {
            printf("  %s: %s #%llu, before %zu/%zu (%s): the process never sent it\n", path,
                   s->conn, (unsigned long long)s->round_trip, s->command, s->commands,
                   s->command_text);
            bad++;
            continue;
        }
        j = k + 1;
        used[k] = 1;
        const wsc_crash_point *p = &proc->points[k];
        if (!same(s->verdict, p->verdict) && !settle_before_writes(s, p)) {
            printf("  %s: %s #%llu, before %zu/%zu is %s; %s is %s%s%s\n", path, s->conn,
                   (unsigned long long)s->round_trip, s->command, s->commands, s->verdict,
                   p->fault, p->verdict, p->detail && *p->detail ? ": " : "",
                   p->detail ? p->detail : "");
            bad++;
        }
        /* the round trip's last command: its replies lost are the process's crash-after */
        if (s->command != s->commands) continue;
        const wsc_crash_point *lost = NULL;
        for (size_t q = 0; q < sim->npoints && !lost; q++)
            if (!sim->points[q].command && !strcmp(sim->points[q].conn, s->conn) &&
                sim->points[q].round_trip == s->round_trip)
                lost = &sim->points[q];
        const wsc_crash_point *after = k + 1 < np && proc->points[k + 1].command == 0 &&
                                               proc->points[k + 1].round_trip == p->round_trip
                                           ? &proc->points[k + 1] : NULL;
        if (after) used[k + 1] = 1;
        if (lost && after && !same(lost->verdict, after->verdict) &&
            !settle_before_writes(lost, after)) {
            printf("  %s: %s #%llu, replies lost is %s; %s is %s%s%s\n", path, s->conn,
                   (unsigned long long)s->round_trip, lost->verdict, after->fault,
                   after->verdict, after->detail && *after->detail ? ": " : "",
                   after->detail ? after->detail : "");
            bad++;
        }
    }
    for (size_t k = 0; k < np; k++) {
        const wsc_crash_point *p = &proc->points[k];
        if (used[k] || same(p->verdict, "fine") || same(p->verdict, "not reached")) continue;
        /* a crash-after inside a pipeline is the simulation's "before" of the next one */
        if (p->command == 0 && k + 1 < np && used[k + 1] &&
            same(p->verdict, proc->points[k + 1].verdict))
            continue;
        printf("  %s: %s (no point of the simulation) is %s%s%s\n", path, p->fault, p->verdict,
               p->detail && *p->detail ? ": " : "", p->detail ? p->detail : "");
        bad++;
    }
    free(used);
    return bad;
}

/* ----- Files --------------------------------------------------------------------------------- */

typedef struct tally {
    size_t files, compared, agreed, points;
    const char *why[32];   /* why files have no process form ... */
    size_t nwhy[32];       /* ... and how many */
    size_t kinds;
} tally;

static int one_file(const char *wsim, const char *path, tally *t)
{
    char *err = NULL;
    wsc_scenario *sc = wsc_parse_file(path, &err);
    if (!sc) {
        printf("%s: does not parse: %s\n", path, err ? err : "?");
        free(err);
        return 1;
    }
    t->files++;
    const char *why = no_process_form(sc);
    if (why) {
        size_t k = 0;
        while (k < t->kinds && strcmp(t->why[k], why)) k++;
        if (k == t->kinds && k < 32) t->why[t->kinds++] = why;
        if (k < 32) t->nwhy[k]++;
        wsc_free(sc);
        return 0;
    }
    wsc_exploration sim, proc;
    wsc_options o = {0};
    wsc_explore_options xo = {.jobs = 2};
    int rc = 0;
    if (wsc_explore_with(sc, &o, &xo, &sim) != 0) {
        printf("%s: out of memory\n", path);
        wsc_free(sc);
        return 1;
    }
    /* does the traffic of a run without a crash show a settle before its writes? */
    char *checked = process_form(wsim, path, sc, 1);
    wsc_scenario *cf = wsc_parse("process form", checked, strlen(checked), &err);
    wsc_result cr = {0};
    sbw_file = cf && wsc_run(cf, &o, &cr) == 0 && cr.report &&
               strstr(cr.report, "settle-before-writes (traffic)");
    if (sbw_file) printf("%s: its traffic shows a settle before its writes, without a crash\n", path);
    wsc_result_free(&cr);
    wsc_free(cf);
    free(checked);
    char *text = process_form(wsim, path, sc, 0);
    wsc_scenario *pf = wsc_parse("process form", text, strlen(text), &err);
    if (!pf) {
        printf("%s: its process form does not parse: %s\n%s", path, err ? err : "?", text);
        free(err);
        rc = 1;
    } else if (wsc_explore_with(pf, &o, &xo, &proc) != 0) {
        printf("%s: out of memory\n", path);
        rc = 1;
    } else {
        t->compared++;
        if (sim.error || proc.error || proc.failure) {
            printf("%s: %s\n", path, sim.error ? sim.error : proc.error ? proc.error
                                                                     : proc.failure);
            rc = !sim.error; /* a file that fails without a crash has no points to compare */
        } else {
            int bad = compare(path, &sim, &proc);
            t->points += sim.npoints;
            if (bad) printf("%s: %d point%s disagree\n", path, bad, bad == 1 ? "" : "s");
            else {
                printf("%s: the same verdicts at all %zu points (%zu fine, %zu doubled, %zu "
                       "lost, %zu stranded)\n", path, sim.npoints, sim.fine, sim.doubled,
                       sim.lost, sim.stranded);
                t->agreed++;
            }
            rc = bad != 0;
        }
        wsc_exploration_free(&proc);
    }
    wsc_free(pf);
    free(text);
    wsc_exploration_free(&sim);
    wsc_free(sc);
    return rc;
}

static int walk(const char *wsim, const char *path, tally *t)
{
    struct stat st;
    if (stat(path, &st) != 0) {
        printf("%s: no such file\n", path);
        return 1;
    }
    if (!S_ISDIR(st.st_mode)) {
        size_t n = strlen(path);
        return n > 5 && !strcmp(path + n - 5, ".wsim") ? one_file(wsim, path, t) : 0;
    }
    struct dirent **ents;
    int n = scandir(path, &ents, NULL, alphasort), rc = 0;
    for (int i = 0; i < n; i++) {
        if (ents[i]->d_name[0] != '.') {
            char sub[4096];
            snprintf(sub, sizeof sub, "%s/%s", path, ents[i]->d_name);
            rc |= walk(wsim, sub, t);
        }
        free(ents[i]);
    }
    free(ents);
    return rc;
}

int main(int argc, char **argv)
{
    if (argc < 3) {
        fprintf(stderr, "usage: two_roads WSIM FILE|DIR...\n");
        return 2;
    }
    tally t = {0};
    int rc = 0;
    for (int i = 2; i < argc; i++) rc |= walk(argv[1], argv[i], &t);
    printf("%zu files, %zu with a process form, %zu of them with the same verdicts at every "
           "point (%zu points)\n", t.files, t.compared, t.agreed, t.points);
    for (size_t k = 0; k < t.kinds; k++)
        printf("  no process form: %zu file%s: %s\n", t.nwhy[k], t.nwhy[k] == 1 ? "" : "s",
               t.why[k]);
    return rc;
}
