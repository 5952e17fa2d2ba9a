/* wsc_convention.h -- the handler convention (docs/consumer.md, "The handler
 * convention"): a consumer that follows it takes each entry's outcome and writes from
 * the entry's payload, a JSON object
 *
 *     {"outcome": "ack", "writes": [["INCRBY", "balance:alice", "100"], ...]}
 *
 * ("outcome": "ack" or "drop"; "writes": commands, each an array of strings -- numbers
 * are taken as their text -- sent in order on "ack" and never on "drop"; "writes" may be
 * left out).  wsim reads the same payloads back to know, entry by entry, what the consumer
 * should have done (the effects check below), and writes them when it draws outcome
 * sequences for a process (wsim explore --outcomes).
 *
 * The effects check.  When every entry produced for a stream subscription of the file
 * follows the convention and each of its writes is an INCR or INCRBY of a key no other
 * entry and no `setup` line writes, the keyspace says how many times each write took
 * effect: the key's value divided by the amount.  Then, per entry:
 *   - ack, every write once: fine;
 *   - a write more than once: doubled (it was handled twice: a crash between its writes
 *     and its settle, and a redelivery);
 *   - a write never, and the entry no longer pending nor unread: lost (settled without
 *     its effect, and nothing will deliver it again);
 *   - drop, a write at all: leaked.
 * It is an independent account of the same invariants the traffic checker rebuilds from
 * the recording, for consumers that follow the convention. */
#ifndef WSC_CONVENTION_H
#define WSC_CONVENTION_H

#include <stddef.h>

#include "wsc_int.h"

/* One entry's task, as its payload says. */
typedef struct wsc_task {
    int ack;            /* 1: ack, 0: drop */
    size_t nwrites;
    int *argc;          /* per write: its words */
    char ***argv;       /* per write: the words, NUL-terminated */
} wsc_task;

/* Parses a payload.  0 with *t filled (free with wsc_task_free), 1 when it does not
 * follow the convention (*t empty), WS_ENOMEM. */
int wsc_task_parse(const char *payload, size_t len, wsc_task *t);
void wsc_task_free(wsc_task *t);

/* What the effects check found about one entry. */
typedef struct wsc_effect {
    const char *alias;  /* the entry's alias (the file's), or NULL */
    char *id;           /* its stream id */
    const char *kind;   /* "doubled", "lost" or "leaked" (WSC_INVARIANTS' names) */
    char *sentence;     /* what happened, in a sentence naming the entry and the write */
} wsc_effect;

/* Runs the effects check on sim, the simulation a run of sc made (its admin connection
 * reads the keyspace; the k-th `produce` statement of sc made its k-th produced entry):
 * 0 with *out / *n the violations (none: fine; free with wsc_effects_free), 1 when the
 * file is not one the check can judge (why[0..cap) says which condition it breaks),
 * WS_ENOMEM. */
int wsc_effects_check(ws_sim *sim, const wsc_scenario *sc, wsc_effect **out, size_t *n,
                      char *why, size_t cap);
void wsc_effects_free(wsc_effect *v, size_t n);

#endif /* WSC_CONVENTION_H */
