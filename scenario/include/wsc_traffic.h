/* wsc_traffic.h -- a consumer's invariants checked on its real traffic (`wsim check-trace`,
 * docs/recording.md "Checking traffic"), and a recording rendered as a trace (`wsim trace
 * RECORDING`).
 *
 * The checker reads a recording (recording/include/wsr.h) and the subscriptions of a
 * scenario file (its `subscribe` statements), rebuilds from the traffic alone the entries
 * produced, their deliveries (XREADGROUP `>` and re-reads of the pending list, XAUTOCLAIM,
 * XCLAIM, XREADGROUP ... CLAIM, LMOVE/BLMOVE/RPOPLPUSH into a processing list, RPOP/BRPOP),
 * the settles (XACK, LREM from the processing list, with a recovery set's ZREM), the
 * retries (a copy XADDed or LPUSHed back, a delay-queue ZADD, its sweep's ZREM and XADD),
 * the rounds (a pipeline of writes then settles, a MULTI/EXEC) and the handlers' writes,
 * and says what breaks the window's invariants:
 *
 *   lost                  an entry neither settled nor held at the end: a delay-queue
 *                         member taken by its sweep whose copy never reached the stream, a
 *                         value an orphan sweep took off the processing list and never
 *                         pushed back, an entry deleted or trimmed unsettled;
 *   doubled               two deliveries of one entry whose writes both took effect (a
 *                         redelivery after writes of its round took effect);
 *   stranded              a reliable list's value on the processing list that no recovery
 *                         member names and no live delivery holds: no sweep will return it;
 *   unsettled             at the end an entry is still unread, pending, on a list or
 *                         scheduled (not a violation with allow_unsettled);
 *   settle-before-writes  a write of a delivery's round sent after its settle (in the same
 *                         pipeline, or when nothing else was in handling);
 *   atomic-shape          an atomic subscription's delivery whose writes and own settle are
 *                         not one MULTI, its writes, its settle, EXEC.
 *
 * Each violation quotes the recording's lines that prove it.  Writes are attributed to
 * deliveries by rules that say how sure they are (docs/recording.md, "Attribution"):
 * exactly inside a MULTI/EXEC holding one delivery's settle; to the round (the set) in a
 * pipeline of writes then settles; by connection and order (the next settle on the same
 * connection, direct mode); to the one delivery in handling; otherwise to the set in
 * handling, and said so in a note.  What the traffic cannot show (an ack from a drop, a
 * runtime copy that never came after its settle, which segment a plain window's write
 * belongs to) is not guessed: the notes say what was attributed how.
 *
 * Prefix wsc_traffic_.  Out of memory is WS_ENOMEM, never an abort of the library's. */
#ifndef WSC_TRAFFIC_H
#define WSC_TRAFFIC_H

#include <stddef.h>
#include <stdint.h>

#include "wsc.h"
#include "wsr.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The kinds, in the order reports list them. */
#define WSC_TRAFFIC_NKINDS 6
extern const char *const WSC_TRAFFIC_KINDS[WSC_TRAFFIC_NKINDS];

typedef struct wsc_traffic_options {
    int allow_unsettled;     /* an entry still unsettled at the end is a note, not a
                                violation (a recording stopped on purpose mid-run) */
} wsc_traffic_options;

/* One broken invariant. */
typedef struct wsc_traffic_violation {
    const char *kind;        /* one of WSC_TRAFFIC_KINDS */
    const char *entry;       /* the entry (its first id: a stream id, a list value) */
    size_t entry_len;        /* its bytes (a list value may hold NULs) */
    const char *sentence;    /* what happened, naming the commands and their lines */
    const char *quote;       /* the recording's lines that prove it, one a line:
                                "NAME:LINE: TEXT" (long lines cut) */
} wsc_traffic_violation;

typedef struct wsc_traffic_result {
    const wsc_traffic_violation *violations;
    size_t nviolations;
    const char *const *notes; /* what was attributed how, what the model could not follow */
    size_t nnotes;
    size_t entries;          /* entries seen (produced, or first seen when delivered) */
    size_t deliveries;       /* deliveries rebuilt */
    size_t settles;          /* settles that took effect */
    size_t rounds;           /* pipelines and transactions that settled something */
    size_t writes;           /* handler writes that took effect */
    char *report;            /* what `wsim check-trace` prints: a summary line, each
                                violation with its quote, the notes */
    void *priv;              /* the result's memory */
} wsc_traffic_result;

/* Checks the recording against the subscriptions of sc (its `subscribe` statements; the
 * rest of the file is not read).  0 and *out filled (free with wsc_traffic_result_free);
 * WS_EINVAL when sc subscribes nothing the checker reads (a stream, reliable list or
 * plain list); WS_ENOMEM. */
int wsc_traffic_check(const wsr_recording *rec, const wsc_scenario *sc,
                      const wsc_traffic_options *opt, wsc_traffic_result *out);
void wsc_traffic_result_free(wsc_traffic_result *res);

/* The recording as a trace, in the engine trace's form (docs/engine.md, "The trace"): a
 * block per run of commands one connection sent in one batch, "#N LABEL (conn C, batch B,
 * T ms): ok" ("#N conn C (batch B, T ms): ok" for a connection without a name) and each
 * command "  ARGS -> REPLY" as redis-cli types and the trace prints them, and `--` lines
 * for the rest (a connection opening and closing, a blocked command waiting, pushes, the
 * server's clock moves, holds, notes).  Heap (free() it); NULL when out of memory. */
char *wsc_traffic_trace(const wsr_recording *rec);

#ifdef __cplusplus
}
#endif

#endif /* WSC_TRAFFIC_H */
