/* convention.c -- the handler convention's payloads and the effects check
 * (wsc_convention.h). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "wsc_convention.h"
#include "wsi_alloc.h"
#include "wsi_buf.h"

/* ----- Payloads: just enough JSON ----------------------------------------------------------- */

typedef struct jin {
    const char *p, *end;
    int oom;
} jin;

static void ws(jin *j)
{
    while (j->p < j->end && (*j->p == ' ' || *j->p == '\t' || *j->p == '\n' || *j->p == '\r'))
        j->p++;
}

static int hexv(char c)
{
    return c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10
           : c >= 'A' && c <= 'F' ? c - 'A' + 10 : -1;
}

/* A JSON string (its UTF-8 bytes; \uXXXX below 0x800 only, enough for a payload), or a
 * number taken as its text.  NULL when it is neither (or out of memory: j->oom). */
static char *scalar(jin *j)
{
    ws(j);
    if (j->p >= j->end) return NULL;
    wsi_buf b = {0};
    wsi_buf_add(&b, "", 0);
    if (*j->p == '-' || (*j->p >= '0' && *j->p <= '9')) {
        const char *s = j->p;
        while (j->p < j->end && strchr("+-0123456789.eE", *j->p)) j->p++;
        wsi_buf_add(&b, s, (size_t)(j->p - s));
    } else if (*j->p == '"') {
        j->p++;
        while (j->p < j->end && *j->p != '"') {
            char c = *j->p++;
            if (c != '\\') {
                wsi_buf_add(&b, &c, 1);
                continue;
            }
            if (j->p >= j->end) break;
            char e = *j->p++;
            const char *plain = strchr("\"\\/bfnrt", e);
            if (plain) {
                static const char out[] = "\"\\/\b\f\n\r\t";
                wsi_buf_add(&b, &out[plain - "\"\\/bfnrt"], 1);
            } else if (e == 'u' && j->end - j->p >= 4) {
                int v = 0;
                for (int k = 0; k < 4; k++) {
                    int h = hexv(j->p[k]);
                    v = h < 0 || v < 0 ? -1 : v * 16 + h;
                }
                j->p += 4;
                if (v < 0 || v >= 0x800) {
                    wsi_buf_free(&b);
                    return NULL;
                }
                char u[2];
                if (v < 0x80) {
                    u[0] = (char)v;
                    wsi_buf_add(&b, u, 1);
                } else {
                    u[0] = (char)(0xc0 | (v >> 6));
                    u[1] = (char)(0x80 | (v & 0x3f));
                    wsi_buf_add(&b, u, 2);
                }
            } else {
                wsi_buf_free(&b);
                return NULL;
            }
        }
        if (j->p >= j->end) {
            wsi_buf_free(&b);
            return NULL;
        }
        j->p++;
    } else {
        wsi_buf_free(&b);
        return NULL;
    }
    if (b.oom) j->oom = 1;
    return wsi_buf_take(&b);
}

static int punct(jin *j, char c)
{
    ws(j);
    if (j->p < j->end && *j->p == c) {
        j->p++;
        return 1;
    }
    return 0;
}

void wsc_task_free(wsc_task *t)
{
    for (size_t i = 0; i < t->nwrites; i++) {
        for (int k = 0; k < t->argc[i]; k++) wsi_free(t->argv[i][k]);
        wsi_free(t->argv[i]);
    }
    wsi_free(t->argc);
    wsi_free(t->argv);
    memset(t, 0, sizeof *t);
}

/* One write: ["CMD", "ARG", ...] (at least the command); 0, 1 not the convention,
 * WS_ENOMEM. */
static int one_write(jin *j, wsc_task *t)
{
    if (!punct(j, '[')) return 1;
    char **argv = NULL;
    int argc = 0;
    for (;;) {
        char *w = scalar(j);
        if (!w) {
            for (int k = 0; k < argc; k++) wsi_free(argv[k]);
            wsi_free(argv);
            return j->oom ? WS_ENOMEM : 1;
        }
        char **v = wsi_realloc(argv, (size_t)(argc + 1) * sizeof *v);
        if (!v) {
            wsi_free(w);
            for (int k = 0; k < argc; k++) wsi_free(argv[k]);
            wsi_free(argv);
            return WS_ENOMEM;
        }
        argv = v;
        argv[argc++] = w;
        if (punct(j, ']')) break;
        if (!punct(j, ',')) {
            for (int k = 0; k < argc; k++) wsi_free(argv[k]);
            wsi_free(argv);
            return 1;
        }
    }
    int *ac = wsi_realloc(t->argc, (t->nwrites + 1) * sizeof *ac);
    if (ac) t->argc = ac;
    char ***av = ac ? wsi_realloc(t->argv, (t->nwrites + 1) * sizeof *av) : NULL;
    if (!av) {
        for (int k = 0; k < argc; k++) wsi_free(argv[k]);
        wsi_free(argv);
        return WS_ENOMEM;
    }
    t->argv = av;
    t->argc[t->nwrites] = argc;
    t->argv[t->nwrites++] = argv;
    return 0;
}

int wsc_task_parse(const char *payload, size_t len, wsc_task *t)
{
    memset(t, 0, sizeof *t);
    jin j = {payload, payload + len, 0};
    int have_outcome = 0, rc = 0;
    if (!punct(&j, '{')) return 1;
    if (!punct(&j, '}')) {
        for (;;) {
            char *key = scalar(&j);
            if (!key || !punct(&j, ':')) {
                wsi_free(key);
                rc = j.oom ? WS_ENOMEM : 1;
                break;
            }
            if (!strcmp(key, "outcome")) {
                char *o = scalar(&j);
                have_outcome = o && (!strcmp(o, "ack") || !strcmp(o, "drop"));
                t->ack = o && !strcmp(o, "ack");
                wsi_free(o);
                if (!have_outcome) rc = j.oom ? WS_ENOMEM : 1;
            } else if (!strcmp(key, "writes")) {
                if (!punct(&j, '[')) rc = 1;
                else if (!punct(&j, ']'))
                    for (;;) {
                        if ((rc = one_write(&j, t)) != 0) break;
                        if (punct(&j, ']')) break;
                        if (!punct(&j, ',')) {
                            rc = 1;
                            break;
                        }
                    }
            } else {
                rc = 1; /* nothing else belongs in a task */
            }
            wsi_free(key);
            if (rc || punct(&j, '}')) break;
            if (!punct(&j, ',')) {
                rc = 1;
                break;
            }
        }
    }
    ws(&j);
    if (!rc && (!have_outcome || j.p != j.end)) rc = 1;
    if (rc) wsc_task_free(t);
    return rc;
}

/* ----- The effects check --------------------------------------------------------------------- */

/* The write's key and amount when it is an INCR or INCRBY (1), else 0. */
static int counter_write(const wsc_task *t, size_t i, const char **key, long long *amount)
{
    int argc = t->argc[i];
    char **argv = t->argv[i];
    char *end;
    if (argc == 2 && !strcasecmp(argv[0], "INCR")) {
        *key = argv[1];
        *amount = 1;
        return 1;
    }
    if (argc == 3 && !strcasecmp(argv[0], "INCRBY")) {
        *key = argv[1];
        *amount = strtoll(argv[2], &end, 10);
        return *end == '\0' && *amount != 0;
    }
    return 0;
}

/* Compares two stream ids ("ms-seq"): <0, 0, >0. */
static int id_cmp(const char *a, const char *b)
{
    unsigned long long am = strtoull(a, NULL, 10), bm = strtoull(b, NULL, 10);
    if (am != bm) return am < bm ? -1 : 1;
    const char *ad = strchr(a, '-'), *bd = strchr(b, '-');
    unsigned long long as = ad ? strtoull(ad + 1, NULL, 10) : 0,
                       bs = bd ? strtoull(bd + 1, NULL, 10) : 0;
    return as < bs ? -1 : as > bs;
}

void wsc_effects_free(wsc_effect *v, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        wsi_free(v[i].id);
        wsi_free(v[i].sentence);
    }
    wsi_free(v);
}

/* Adds a violation; 0 or WS_ENOMEM. */
static int add(wsc_effect **out, size_t *n, const char *alias, const char *id, const char *kind,
               wsi_buf *sentence)
{
    wsc_effect *v = wsi_realloc(*out, (*n + 1) * sizeof *v);
    if (!v) return WS_ENOMEM;
    *out = v;
    v[*n] = (wsc_effect){alias, wsi_strdup(id), kind, wsi_buf_take(sentence)};
    if (!v[*n].id || !v[*n].sentence) {
        wsi_free(v[*n].id);
        wsi_free(v[*n].sentence);
        return WS_ENOMEM;
    }
    (*n)++;
    return 0;
}

/* The subscribe statement named name, or NULL. */
static const wsc_stmt *sub_def(const wsc_scenario *sc, const char *name)
{
    for (size_t i = 0; i < sc->nst; i++)
        if (sc->st[i].kind == K_SUBSCRIBE && !strcmp(sc->st[i].sub, name)) return &sc->st[i];
    return NULL;
}

/* The group's state: its pending ids (a sorted copy) and last-delivered id; 0, or 1 when
 * it cannot be read. */
static int group_state(ws_sim *sim, const wsc_stmt *s, char ***pending, size_t *np,
                       char *last, size_t lastcap)
{
    const fr_reply *r;
    const char *xp[] = {"XPENDING", s->s_key, s->s_group, "-", "+", "1000000"};
    *pending = NULL;
    *np = 0;
    snprintf(last, lastcap, "0-0");
    if (ws_sim_command_as(sim, "expect", 6, xp, NULL, &r) || r->type != FR_REPLY_ARRAY)
        return 1;
    char **v = wsi_calloc(r->count ? r->count : 1, sizeof *v);
    if (!v) return 1;
    for (size_t i = 0; i < r->count; i++) {
        const fr_reply *e = &r->elements[i];
        v[i] = wsi_strdup(e->type == FR_REPLY_ARRAY && e->count ? e->elements[0].str : "");
        if (!v[i]) {
            for (size_t k = 0; k < i; k++) wsi_free(v[k]);
            wsi_free(v);
            return 1;
        }
    }
    *pending = v;
    *np = r->count;
    const char *xg[] = {"XINFO", "GROUPS", s->s_key};
    if (ws_sim_command_as(sim, "expect", 3, xg, NULL, &r) || r->type != FR_REPLY_ARRAY) return 0;
    for (size_t i = 0; i < r->count; i++) {
        const fr_reply *g = &r->elements[i];
        const char *name = NULL, *ld = NULL;
        for (size_t k = 0; g->type == FR_REPLY_ARRAY && k + 1 < g->count; k += 2) {
            if (!strcmp(g->elements[k].str, "name")) name = g->elements[k + 1].str;
            if (!strcmp(g->elements[k].str, "last-delivered-id")) ld = g->elements[k + 1].str;
        }
        if (name && ld && !strcmp(name, s->s_group)) snprintf(last, lastcap, "%s", ld);
    }
    return 0;
}

int wsc_effects_check(ws_sim *sim, const wsc_scenario *sc, wsc_effect **out, size_t *n,
                      char *why, size_t cap)
{
    *out = NULL;
    *n = 0;
    /* the conditions: every produced entry a convention task on a stream subscription,
     * every write a counter of its own */
    size_t nprod = 0;
    for (size_t i = 0; i < sc->nst; i++) nprod += sc->st[i].kind == K_PRODUCE;
    wsc_task *tasks = wsi_calloc(nprod ? nprod : 1, sizeof *tasks);
    const wsc_stmt **defs = wsi_calloc(nprod ? nprod : 1, sizeof *defs);
    const wsc_stmt **prods = wsi_calloc(nprod ? nprod : 1, sizeof *prods);
    int rc = !tasks || !defs || !prods ? WS_ENOMEM : 0;
    size_t k = 0;
    for (size_t i = 0; i < sc->nst && !rc; i++) {
        const wsc_stmt *st = &sc->st[i];
        if (st->kind != K_PRODUCE) continue;
        prods[k] = st;
        defs[k] = sub_def(sc, st->sub);
        if (!defs[k] || defs[k]->cfg.form != WS_FORM_STREAM || st->key) {
            snprintf(why, cap, "line %d: the effects check follows stream subscriptions' own "
                     "keys only", st->line);
            rc = 1;
        } else if ((rc = wsc_task_parse(st->payload, st->payload_len, &tasks[k])) == 1) {
            snprintf(why, cap, "line %d: the payload is not the handler convention's "
                     "{\"outcome\": ..., \"writes\": [...]}", st->line);
        }
        for (size_t w = 0; !rc && w < tasks[k].nwrites; w++) {
            const char *key;
            long long amount;
            if (!counter_write(&tasks[k], w, &key, &amount)) {
                snprintf(why, cap, "line %d: write %zu is not an INCR or INCRBY: the effects "
                         "check counts counters", st->line, w + 1);
                rc = 1;
            }
            /* a key of its own: no other entry's write, no setup line */
            for (size_t o = 0; !rc && o <= k; o++)
                for (size_t ow = 0; ow < (o == k ? w : tasks[o].nwrites) && !rc; ow++) {
                    const char *okey;
                    long long oa;
                    if (counter_write(&tasks[o], ow, &okey, &oa) && !strcmp(okey, key)) {
                        snprintf(why, cap, "lines %d and %d write the same key %s: the "
                                 "effects check needs a key per write", prods[o]->line,
                                 st->line, key);
                        rc = 1;
                    }
                }
            for (size_t s = 0; !rc && s < sc->nst; s++) {
                const wsc_stmt *su = &sc->st[s];
                for (size_t a = 1; su->kind == K_SETUP && a < su->ncmd && !rc; a++)
                    if (!strcmp(su->cmd[a].s, key)) {
                        snprintf(why, cap, "line %d names %s, which line %d's entry counts "
                                 "in", su->line, key, st->line);
                        rc = 1;
                    }
            }
        }
        k++;
    }
    for (size_t e = 0; e < nprod && !rc; e++) {
        const wsc_stmt *st = prods[e], *def = defs[e];
        const char *id = ws_sim_produced_id(sim, e + 1);
        if (!id) {
            snprintf(why, cap, "line %d: its entry was never produced", st->line);
            rc = 1;
            break;
        }
        char **pending, last[64];
        size_t np;
        if (group_state(sim, def, &pending, &np, last, sizeof last)) {
            snprintf(why, cap, "cannot read the group %s of %s", def->s_group, def->s_key);
            rc = 1;
            break;
        }
        int held = id_cmp(id, last) > 0; /* unread */
        for (size_t p = 0; p < np; p++) {
            held |= !strcmp(pending[p], id);
            wsi_free(pending[p]);
        }
        wsi_free(pending);
        const wsc_task *t = &tasks[e];
        const char *kind = NULL;
        wsi_buf b = {0};
        for (size_t w = 0; w < t->nwrites && !rc; w++) {
            const char *key;
            long long amount;
            counter_write(t, w, &key, &amount);
            const fr_reply *r;
            const char *get[] = {"GET", key};
            long long v = 0;
            if (ws_sim_command_as(sim, "expect", 2, get, NULL, &r) == 0 && r->type == FR_REPLY_BULK)
                v = strtoll(r->str, NULL, 10);
            long long times = v / amount;
            const char *what = NULL;
            if (v % amount) what = "lost"; /* (a part of it: no whole count) */
            else if (t->ack && times > 1) what = "doubled";
            else if (t->ack && times == 0 && !held) what = "lost";
            else if (!t->ack && times > 0) what = "leaked";
            if (!what) continue;
            if (!kind || !strcmp(what, "doubled")) kind = what;
            wsi_buf_printf(&b, "%sentry %s (%s, %s): its write %s %s%s%s took effect %lld "
                           "time%s", b.len ? "; " : "", st->alias ? st->alias : "?", id,
                           t->ack ? "ack" : "drop", t->argv[w][0], key,
                           t->argc[w] == 3 ? " " : "", t->argc[w] == 3 ? t->argv[w][2] : "",
                           times, times == 1 ? "" : "s");
        }
        if (kind && !rc) {
            if (!strcmp(kind, "lost"))
                wsi_buf_puts(&b, ", and the entry is settled: nothing will deliver it again");
            if (b.oom || add(out, n, st->alias, id, kind, &b)) rc = WS_ENOMEM;
        }
        wsi_buf_free(&b);
    }
    for (size_t e = 0; e < nprod && tasks; e++) wsc_task_free(&tasks[e]);
    wsi_free(tasks);
    wsi_free(defs);
    wsi_free(prods);
    if (rc) {
        wsc_effects_free(*out, *n);
        *out = NULL;
        *n = 0;
    }
    return rc;
}
