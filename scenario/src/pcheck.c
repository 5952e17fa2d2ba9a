/* pcheck.c -- a process run's invariants by the traffic checker and the effects check
 * (wsc_pcheck.h). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "wsc_convention.h"
#include "wsc_pcheck.h"
#include "wsc_traffic.h"
#include "wsi_alloc.h"
#include "wsi_buf.h"

void wsc_pcheck_free(wsc_pcheck *c)
{
    for (size_t i = 0; i < c->n; i++) {
        wsi_free(c->v[i].entry);
        wsi_free(c->v[i].sentence);
    }
    wsi_free(c->v);
    memset(c, 0, sizeof *c);
}

/* The alias of the produced entry with this id (the k-th `produce` made the k-th
 * produced entry), or NULL. */
static const char *alias_of(ws_sim *sim, const wsc_scenario *sc, const char *id, size_t len)
{
    size_t k = 0;
    for (size_t i = 0; i < sc->nst; i++) {
        if (sc->st[i].kind != K_PRODUCE) continue;
        k++;
        const char *pid = ws_sim_produced_id(sim, k);
        if (pid && ws_sim_produced_id_size(sim, k) == len && !memcmp(pid, id, len))
            return sc->st[i].alias;
    }
    return NULL;
}

/* Adds a violation (entry: len bytes, shown as the reply text of a string when it does
 * not print); 0 or WS_ENOMEM. */
static int add(wsc_pcheck *c, const char *kind, const char *alias, const char *entry, size_t len,
               const char *sentence, const char *source)
{
    wsc_pviolation *v = wsi_realloc(c->v, (c->n + 1) * sizeof *v);
    if (!v) return WS_ENOMEM;
    c->v = v;
    int plain = 1;
    for (size_t i = 0; i < len && plain; i++)
        plain = (unsigned char)entry[i] >= ' ' && (unsigned char)entry[i] < 127;
    fr_reply r = {.type = FR_REPLY_BULK, .str = entry, .len = len};
    char *shown = plain ? wsi_memdup(entry, len) : ws_reply_text(&r, NULL);
    v[c->n] = (wsc_pviolation){kind, alias, shown, wsi_strdup(sentence), source};
    if (!v[c->n].entry || !v[c->n].sentence) {
        wsi_free(v[c->n].entry);
        wsi_free(v[c->n].sentence);
        return WS_ENOMEM;
    }
    c->n++;
    return 0;
}

int wsc_pcheck_run(ws_sim *sim, wsc_world *w, const wsc_scenario *sc, int allow_unsettled,
                   wsc_pcheck *out, char *why, size_t cap)
{
    memset(out, 0, sizeof *out);
    int rc = 0;
    /* the traffic, on the fake wsim serves */
    char *err = NULL;
    wsr_recording *rec = w ? wsc_world_recording(w, &err) : NULL;
    char twhy[512] = "";
    if (rec) {
        wsc_traffic_result tr;
        wsc_traffic_options to = {.allow_unsettled = allow_unsettled};
        int t = wsc_traffic_check(rec, sc, &to, &tr);
        if (t == WS_ENOMEM) rc = WS_ENOMEM;
        else if (t == 0) {
            out->traffic = 1;
            for (size_t i = 0; i < tr.nviolations && !rc; i++) {
                const wsc_traffic_violation *v = &tr.violations[i];
                rc = add(out, v->kind, alias_of(sim, sc, v->entry, v->entry_len), v->entry,
                         v->entry_len, v->sentence, "traffic");
            }
            wsc_traffic_result_free(&tr);
        } else {
            snprintf(twhy, sizeof twhy, "the file subscribes nothing the traffic checker "
                     "follows (a stream, a reliable or plain list)");
        }
        wsr_free(rec);
    } else {
        snprintf(twhy, sizeof twhy, "%s", err ? err : "no recording");
    }
    wsi_free(err);
    /* the effects the entries' payloads ask for */
    char ewhy[512] = "";
    if (!rc) {
        wsc_effect *e;
        size_t n;
        int f = wsc_effects_check(sim, sc, &e, &n, ewhy, sizeof ewhy);
        if (f == WS_ENOMEM) rc = WS_ENOMEM;
        else if (f == 0) {
            out->effects = 1;
            for (size_t i = 0; i < n && !rc; i++)
                rc = add(out, e[i].kind, e[i].alias, e[i].id, strlen(e[i].id), e[i].sentence,
                         "effects");
            wsc_effects_free(e, n);
        }
    }
    if (rc) {
        wsc_pcheck_free(out);
        return rc;
    }
    if (!out->traffic && !out->effects) {
        snprintf(why, cap, "neither account of the invariants applies: the traffic checker "
                 "(%s), the effects check of the handler convention, docs/consumer.md (%s)",
                 twhy, ewhy);
        return 1;
    }
    return 0;
}
