/* reply_int.h -- the reply arena and parser, shared by reply.c, server.c, and the modules
 * that hand out reply trees of their own (pubsub.c: pushes; blocked.c: woken replies). */
#ifndef FR_REPLY_INT_H
#define FR_REPLY_INT_H

#include "fr_int.h"

/* Arena memory for reply trees, valid until fri_arena_reset. NULL when out of memory. */
void *fri_arena_alloc(fr_client *c, size_t size);
void fri_arena_reset(fr_client *c);
void fri_arena_free(fr_client *c);

/* Parses the n replies in c->out (written by the fake) into trees; out[i] gets reply i.
 * Returns -1 (with OOM error replies filled in) when the arena cannot grow. */
int fri_parse_replies(fr_client *c, size_t n, const fr_reply **out);
/* The one reply in c->out (fr_exec's case); the OOM error reply when the arena cannot grow. */
const fr_reply *fri_parse_reply(fr_client *c);

#endif
