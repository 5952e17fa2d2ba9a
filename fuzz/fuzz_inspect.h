/* fuzz_inspect.h -- consistency checks of the fake's streams and replies, shared by the
 * fuzz targets that build streams (fuzz_commands: by commands; fuzz_restore: from DUMP
 * payloads).
 *
 * The checks run read-only commands (XINFO, XPENDING, SELECT, KEYS) on an inspection
 * client the fuzzed input never drives, and read the fake's inspection API
 * (fr_stream_entries, fr_stream_meta_get, fr_stream_pending, fr_stream_consumer): two
 * independent paths that must agree.  A failed check calls the context's fail callback
 * with a message; the callback prints what the target knows (the commands run, the
 * payload) and aborts, which libFuzzer keeps as a crash and the replay driver reports.
 */
#ifndef FUZZ_INSPECT_H
#define FUZZ_INSPECT_H

#include <stddef.h>

#include "fakeredis.h"

/* What the checks need of a target's run. */
typedef struct fi_ctx {
    fr_server *srv;   /* the server the streams live in */
    fr_client *insp;  /* the inspection client: read-only commands of the checks */
    int insp_db;      /* the database the inspection client has selected */
    int pel_bound;    /* every pending id is <= its group's last-delivered-id (no XGROUP
                         SETID, XCLAIM FORCE or restored payload broke it: Redis allows
                         those) */
    int restored;     /* the streams may come from DUMP payloads: their counters
                         (entries-added, the recorded first id) are what the payload
                         said, which Redis takes as it is too, so the checks that only
                         commands keep are skipped */
    void (*fail)(void *ud, const char *msg); /* reports a failed check; must not return */
    void *ud;                                /* the target's own state, for fail */
} fi_ctx;

/* Fails the input: formats the message and calls r->fail. */
_Noreturn void fi_fail(fi_ctx *r, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Runs a read-only command on the inspection client; an error reply (or a block) fails
 * the input.  The reply lives until the next command on that client. */
const fr_reply *fi_exec(fi_ctx *r, int argc, const char *const *argv, const size_t *len);

/* Makes db the inspection client's selected database. */
void fi_select(fi_ctx *r, int db);

/* Checks the stream at key in db, if a live stream is there (nothing otherwise):
 * entries, metadata and XINFO STREAM agree; each group's pending list, its consumers'
 * lists, XINFO CONSUMERS and XPENDING (summary and extended) agree.  fuzz_inspect.c lists
 * every check. */
void fi_check_stream(fi_ctx *r, int db, const char *key, size_t klen);

/* A reply tree is well formed (known types, strings NUL-terminated at their length, no CR
 * in a status or error, elements for a non-empty array, depth bounded). */
void fi_check_reply(fi_ctx *r, const fr_reply *rep, int depth);

#endif
