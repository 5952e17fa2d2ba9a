/* outcomes.c -- `wsim outcomes`: outcome sequences and crash points drawn for a consumer
 * process that follows the handler convention (docs/consumer.md, "Drawn outcomes").
 *
 * The file is a process file whose entries are drawn: its own `produce` lines and the
 * expectations about them (`check`, `expect pending`, `expect delayed`, `expect
 * violation`) are left out, and in their place each run draws, from its seed, one to
 * max_entries entries for the file's first stream subscription, each with an outcome (ack
 * three times in four, else drop) and one or two writes (`INCRBY w:ALIAS:K AMOUNT`, a key
 * of its own, so that the effects check applies), as handler-convention payloads.  The
 * run is played once to learn the consumer's commands, a crash point is drawn among them
 * (a command; before it is applied, or after when its reply came), and the point is
 * played and checked as `wsim explore` checks one.  The first run that breaks what the
 * file forbids (every invariant, when it forbids nothing) is the finding: its seed
 * replays it alone (`--seed S --runs 1`), and it is shrunk -- entries taken out, writes
 * taken out, drops made acks, the crash moved to an earlier command of the same name --
 * while it still breaks the same invariant, to the scenario file that shows it: the
 * file's lines, the entries left, and the crash as a fault line before the consumer's
 * start. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "wsc_explore_proc.h"
#include "wsi_alloc.h"
#include "wsi_buf.h"
#include "wsi_splitmix.h"

/* One drawn entry. */
typedef struct dentry {
    int id;          /* its number: alias eID */
    int ack;         /* 1 ack, 0 drop */
    int nwrites;     /* 1 or 2 */
    int amount[2];   /* each write's amount */
} dentry;

/* A drawn run: the entries and the crash. */
typedef struct drawn {
    dentry e[16];
    int n;
    char name[64];       /* the crash's command name, its occurrence, before/after */
    size_t occurrence;
    int after;
} drawn;

/* ----- The file of a drawn run -------------------------------------------------------------- */

/* English's ending for the number n: st, nd, rd, th. */
static const char *ordinal(size_t n)
{
    return n % 10 == 1 && n % 100 != 11 ? "st" : n % 10 == 2 && n % 100 != 12 ? "nd"
           : n % 10 == 3 && n % 100 != 13 ? "rd" : "th";
}

/* The subscription the entries go to: the file's first stream subscription, or NULL. */
static const wsc_stmt *stream_sub(const wsc_scenario *sc)
{
    for (size_t i = 0; i < sc->nst; i++)
        if (sc->st[i].kind == K_SUBSCRIBE && sc->st[i].cfg.form == WS_FORM_STREAM) return &sc->st[i];
    return NULL;
}

/* The consumer's name: the first `start`'s. */
static const char *started(const wsc_scenario *sc)
{
    for (size_t i = 0; i < sc->nst; i++)
        if (sc->st[i].kind == K_START) return sc->st[i].proc;
    return NULL;
}

/* Appends d's entries as produce lines. */
static void produce_lines(wsi_buf *b, const wsc_stmt *sub, const drawn *d)
{
    for (int i = 0; i < d->n; i++) {
        const dentry *e = &d->e[i];
        wsi_buf_printf(b, "produce %s '{\"outcome\": \"%s\", \"writes\": [", sub->sub,
                       e->ack ? "ack" : "drop");
        for (int w = 0; w < e->nwrites; w++)
            wsi_buf_printf(b, "%s[\"INCRBY\", \"w:e%d:%d\", \"%d\"]", w ? ", " : "", e->id,
                           w + 1, e->amount[w]);
        wsi_buf_printf(b, "]}' as e%d\n", e->id);
    }
}

/* The scenario text of d on the file's lines (crash: put d's crash in as a fault line). */
static char *text_of(const wsc_scenario *sc, const drawn *d, int crash, uint64_t seed)
{
    wsi_buf b = {0};
    const wsc_stmt *sub = stream_sub(sc);
    wsi_buf_printf(&b, "scenario %s (wsim outcomes --seed %llu)\n", sc->title,
                   (unsigned long long)seed);
    if (sc->forbid) {
        wsi_buf_puts(&b, "forbid");
        for (int k = 0; k < WSC_NINVARIANTS; k++)
            if (sc->forbid & (1u << k)) wsi_buf_printf(&b, " %s", WSC_INVARIANTS[k]);
        wsi_buf_puts(&b, "\n");
    }
    if (sc->needs_fake) wsi_buf_printf(&b, "needs fake %s\n", sc->needs_fake);
    if (sc->seed != 1) wsi_buf_printf(&b, "seed %llu\n", (unsigned long long)sc->seed);
    if (sc->start_ms) wsi_buf_printf(&b, "start %lld\n", (long long)sc->start_ms);
    int produced = 0;
    for (size_t i = 0; i < sc->nst; i++) {
        const wsc_stmt *st = &sc->st[i];
        switch (st->kind) {
        case K_CHECK: case K_EXPECT_PENDING: case K_EXPECT_DELAYED: case K_EXPECT_VIOLATION:
        case K_EXPECT_NOTHING: case K_FAULT:
            continue;
        case K_PRODUCE:
            if (!produced) produce_lines(&b, sub, d);
            produced = 1;
            continue;
        case K_START:
            if (!produced) produce_lines(&b, sub, d);
            produced = 1;
            if (crash && !strcmp(st->proc, started(sc)))
                wsi_buf_printf(&b, "fault %s crash-%s %zu%s %s\n", st->proc,
                               d->after ? "after" : "before", d->occurrence,
                               ordinal(d->occurrence), d->name);
            break;
        default: break;
        }
        if (st->kind == K_EXPECT_FLUSH || st->kind == K_EXPECT_READ) continue; /* (blocks) */
        wsi_buf_printf(&b, "%s\n", st->src);
        /* the invariants, after the first wait, when the file does not check them */
        if (st->kind == K_WAIT) {
            int has = 0;
            for (size_t k = 0; k < sc->nst; k++) has |= sc->st[k].kind == K_EXPECT_INVARIANTS;
            if (!has && !strstr(b.p, "expect invariants\n")) wsi_buf_puts(&b, "expect invariants\n");
        }
    }
    return wsi_buf_take(&b);
}

/* ----- Runs ---------------------------------------------------------------------------------- */

/* The verdict of d with its crash: 0 with *verdict (a string of the explorer's) and
 * *detail (heap), 1 when its run fails without a crash (*detail: why), 2 when its crash
 * point is not among the consumer's commands, -1 out of memory. */
static int verdict_of(const wsc_scenario *tmpl, const wsc_options *opt, const drawn *d,
                      uint64_t seed, const char **verdict, int *forbidden, char **detail)
{
    *detail = NULL;
    char *text = text_of(tmpl, d, 0, seed), *err = NULL;
    if (!text) return -1;
    wsc_scenario *sc = wsc_parse("drawn", text, strlen(text), &err);
    wsi_free(text);
    if (!sc) {
        *detail = err;
        return 1;
    }
    wsc_pcmd *cmds;
    size_t n;
    int rc = wsc_process_commands(sc, opt, &cmds, &n, detail);
    if (rc) {
        wsc_free(sc);
        return rc == 1 ? 1 : -1;
    }
    const wsc_pcmd *c = NULL;
    for (size_t i = 0; i < n && !c; i++)
        if (!strcmp(cmds[i].name, d->name) && cmds[i].occurrence == d->occurrence &&
            (!d->after || cmds[i].answered))
            c = &cmds[i];
    if (!c) {
        wsc_process_commands_free(cmds, n);
        wsc_free(sc);
        return 2;
    }
    wsc_crash_point p = {.command = d->after ? 0 : 1};
    rc = wsc_process_point(sc, opt, c, &p);
    wsc_process_commands_free(cmds, n);
    wsc_free(sc);
    wsi_free(p.command_text);
    wsi_free(p.fault);
    if (rc) {
        wsi_free(p.detail);
        return -1;
    }
    *verdict = p.verdict;
    *forbidden = p.forbidden;
    *detail = p.detail;
    return 0;
}

/* Whether a verdict is a finding: what the file forbids, or (it forbids nothing) any
 * broken invariant. */
static int finding(const wsc_scenario *sc, const char *verdict, int forbidden)
{
    if (sc->forbid) return forbidden;
    return strcmp(verdict, "fine") && strcmp(verdict, "not reached") && strcmp(verdict, "error");
}

/* Draws run seed's entries and its crash point (among the commands its baseline sent). */
static int draw(const wsc_scenario *tmpl, const wsc_options *opt, uint64_t seed,
                size_t max_entries, drawn *d, char **err)
{
    uint64_t s = seed;
    memset(d, 0, sizeof *d);
    d->n = 1 + (int)(wsi_splitmix64(&s) % (max_entries ? max_entries : 1));
    if (d->n > 16) d->n = 16;
    for (int i = 0; i < d->n; i++) {
        dentry *e = &d->e[i];
        e->id = i + 1;
        e->ack = wsi_splitmix64(&s) % 4 != 0;
        e->nwrites = 1 + (int)(wsi_splitmix64(&s) % 2);
        for (int w = 0; w < e->nwrites; w++) e->amount[w] = 1 + (int)(wsi_splitmix64(&s) % 100);
    }
    char *text = text_of(tmpl, d, 0, seed);
    if (!text) return -1;
    wsc_scenario *sc = wsc_parse("drawn", text, strlen(text), err);
    wsi_free(text);
    if (!sc) return 1;
    wsc_pcmd *cmds;
    size_t n;
    int rc = wsc_process_commands(sc, opt, &cmds, &n, err);
    wsc_free(sc);
    if (rc) return rc == 1 ? 1 : -1;
    if (!n) {
        wsc_process_commands_free(cmds, n);
        *err = wsi_strdup("the consumer sent no command");
        return *err ? 1 : -1;
    }
    const wsc_pcmd *c = &cmds[wsi_splitmix64(&s) % n];
    snprintf(d->name, sizeof d->name, "%s", c->name);
    d->occurrence = c->occurrence;
    d->after = c->answered && wsi_splitmix64(&s) % 2;
    wsc_process_commands_free(cmds, n);
    return 0;
}

/* Shrinks d (which finds `kind`) while a smaller run still finds it; counts the runs. */
static int shrink(const wsc_scenario *tmpl, const wsc_options *opt, uint64_t seed, drawn *d,
                  const char *kind, size_t *tries)
{
    for (int changed = 1; changed && *tries < 200;) {
        changed = 0;
        for (int step = 0; step < 4 && !changed; step++) {
            for (int i = 0; i < d->n && !changed; i++) {
                drawn c = *d;
                if (step == 0) { /* an entry out */
                    if (c.n == 1) continue;
                    memmove(&c.e[i], &c.e[i + 1], (size_t)(c.n - i - 1) * sizeof c.e[0]);
                    c.n--;
                } else if (step == 1) { /* a write out */
                    if (c.e[i].nwrites == 1) continue;
                    c.e[i].nwrites = 1;
                } else if (step == 2) { /* a drop made an ack */
                    if (c.e[i].ack) continue;
                    c.e[i].ack = 1;
                } else { /* the crash at an earlier command of its name */
                    if (i || c.occurrence == 1) continue;
                    c.occurrence--;
                }
                /* the candidate, and, when it does not show it, the same with the crash
                 * at an earlier command of the name (an entry out takes commands out) */
                size_t first = c.occurrence;
                for (size_t occ = first; occ >= 1 && !changed && *tries < 200; occ--) {
                    if (occ != first && step == 3) break;
                    c.occurrence = occ;
                    const char *v;
                    int forbidden;
                    char *detail;
                    (*tries)++;
                    int rc = verdict_of(tmpl, opt, &c, seed, &v, &forbidden, &detail);
                    wsi_free(detail);
                    if (rc < 0) return -1;
                    if (rc == 0 && !strcmp(v, kind)) {
                        *d = c;
                        changed = 1;
                    }
                }
            }
        }
    }
    return 0;
}

/* Appends a run's entries and crash, in words. */
static void describe(wsi_buf *b, const drawn *d)
{
    wsi_buf_printf(b, "%d entr%s (", d->n, d->n == 1 ? "y" : "ies");
    for (int i = 0; i < d->n; i++) {
        wsi_buf_printf(b, "%se%d %s", i ? ", " : "", d->e[i].id, d->e[i].ack ? "ack" : "drop");
        for (int w = 0; w < d->e[i].nwrites; w++)
            wsi_buf_printf(b, "%sINCRBY w:e%d:%d %d", w ? " + " : " [", d->e[i].id, w + 1,
                           d->e[i].amount[w]);
        wsi_buf_puts(b, "]");
    }
    wsi_buf_printf(b, "), crash-%s %zu%s %s", d->after ? "after" : "before", d->occurrence,
                   ordinal(d->occurrence), d->name);
}

int wsc_outcomes(const wsc_scenario *tmpl, const wsc_options *opt,
                 const wsc_outcomes_options *oo, wsc_outcomes_result *out)
{
    memset(out, 0, sizeof *out);
    if (!tmpl->consumer_line || !started(tmpl) || !stream_sub(tmpl)) {
        out->error = wsi_strdup("outcomes are drawn for a file that drives a consumer process "
                                "(consumer, start) reading a stream (subscribe ... stream)");
        return out->error ? 0 : WS_ENOMEM;
    }
    size_t runs = oo->runs ? oo->runs : 20;
    for (size_t r = 0; r < runs; r++) {
        uint64_t seed = oo->seed + r;
        drawn d;
        char *err = NULL;
        int rc = draw(tmpl, opt, seed, oo->max_entries ? oo->max_entries : 4, &d, &err);
        out->runs++;
        if (rc < 0) return WS_ENOMEM;
        if (rc) {
            wsi_buf b = {0};
            wsi_buf_printf(&b, "the drawn run of seed %llu fails without a crash: %s",
                           (unsigned long long)seed, err ? err : "?");
            wsi_free(err);
            out->error = wsi_buf_take(&b);
            return out->error ? 0 : WS_ENOMEM;
        }
        const char *v;
        int forbidden;
        char *detail;
        rc = verdict_of(tmpl, opt, &d, seed, &v, &forbidden, &detail);
        if (rc < 0) return WS_ENOMEM;
        if (rc != 0 || !finding(tmpl, v, forbidden)) {
            wsi_free(detail);
            continue;
        }
        /* the finding: said as drawn, then shrunk */
        out->failed = 1;
        out->seed = seed;
        wsi_buf b = {0};
        describe(&b, &d);
        wsi_buf_printf(&b, ": %s%s", v, forbidden ? " (forbidden)" : "");
        out->drawn = wsi_buf_take(&b);
        out->detail = detail;
        out->verdict = v;
        if (oo->shrink && shrink(tmpl, opt, seed, &d, v, &out->tries)) return WS_ENOMEM;
        wsi_buf s = {0};
        describe(&s, &d);
        out->shrunk = wsi_buf_take(&s);
        out->scenario = text_of(tmpl, &d, 1, seed);
        if (!out->drawn || !out->shrunk || !out->scenario) return WS_ENOMEM;
        return 0;
    }
    return 0;
}

void wsc_outcomes_result_free(wsc_outcomes_result *r)
{
    wsi_free(r->drawn);
    wsi_free(r->detail);
    wsi_free(r->shrunk);
    wsi_free(r->scenario);
    wsi_free(r->error);
    memset(r, 0, sizeof *r);
}
