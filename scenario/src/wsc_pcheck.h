/* wsc_pcheck.h -- the invariants of a run that drove consumer processes, by both accounts
 * wsim has of them (docs/consumer.md, "The checks"):
 *
 *   - the traffic checker (wsc_traffic.h) on the run's recording: what the consumer's
 *     commands did to each entry -- lost, doubled, stranded, unsettled, a settle before
 *     its round's writes, an atomic segment out of shape -- for any consumer, on the fake
 *     wsim serves (a real server has no recording);
 *   - the effects check of the handler convention (wsc_convention.h) on the keyspace: what
 *     each entry's writes did against what its payload asked -- doubled, lost, leaked --
 *     when the file's entries follow the convention.
 *
 * `expect invariants` and `expect violation` in a file that drives a process, and the
 * explorer's verdict on each of its crash points, read them through here. */
#ifndef WSC_PCHECK_H
#define WSC_PCHECK_H

#include <stddef.h>

#include "wsc_int.h"
#include "wsc_world.h"

/* One broken invariant. */
typedef struct wsc_pviolation {
    const char *kind;     /* lost, doubled, leaked, stranded, unsettled,
                             settle-before-writes, atomic-shape */
    const char *alias;    /* the entry's alias in the file, or NULL */
    char *entry;          /* the entry's id (shown) */
    char *sentence;       /* what happened */
    const char *source;   /* "traffic" or "effects" */
} wsc_pviolation;

typedef struct wsc_pcheck {
    wsc_pviolation *v;
    size_t n;
    int traffic;          /* the traffic checker ran */
    int effects;          /* the effects check ran */
} wsc_pcheck;

/* Checks what the run of sc on sim (and its world w) left: 0 with *out filled (free with
 * wsc_pcheck_free) by every account that applies; 1 when none does (why[0..cap) says
 * why); WS_ENOMEM.  allow_unsettled: entries still pending at the end are held, not a
 * violation (the explorer, after a crash whose recovery the consumer does not make). */
int wsc_pcheck_run(ws_sim *sim, wsc_world *w, const wsc_scenario *sc, int allow_unsettled,
                   wsc_pcheck *out, char *why, size_t cap);
void wsc_pcheck_free(wsc_pcheck *c);

#endif /* WSC_PCHECK_H */
