/* reply_int.h -- the reply arena and parser, shared by reply.c, server.c, and the modules
 * that hand out reply trees of their own (pubsub.c: pushes; blocked.c: woken replies). */
#ifndef FR_REPLY_INT_H
#define FR_REPLY_INT_H

#include <assert.h>

#include "fr_int.h"

/* The client's arena (c->arena): chunks, the newest first, each twice the last. */
typedef struct fri_arena_chunk {
    struct fri_arena_chunk *next; /* the older chunks */
    size_t used;                  /* bytes handed out from the bottom (a tree's strings) */
    size_t top;                   /* where those handed out from the top begin (nodes) */
    size_t cap;                   /* bytes in data */
    _Alignas(16) unsigned char data[];
} fri_arena_chunk;
/* Frees the chunks older than ch. */
void fri_arena_free_older(fri_arena_chunk *ch);

/* Arena memory for reply trees, valid until fri_arena_reset. NULL when out of memory. */
void *fri_arena_alloc(fr_client *c, size_t size);
/* Keeps the newest (largest) chunk for reuse and frees the rest (inline: every call). */
static inline void fri_arena_reset(fr_client *c)
{
    fri_arena_chunk *ch = c->arena;
    if (!ch) return;
    if (ch->next) fri_arena_free_older(ch);
    ch->used = 0;
    ch->top = ch->cap;
}
void fri_arena_free(fr_client *c);

/* Replies as a tree (the writers build the nodes; reply.c). */

/* An open array of the tree being built (c->tframes[0]: the call's top level). */
typedef struct fri_tframe {
    fr_reply *next;   /* where its next element goes */
    fr_reply *end;    /* the end of the room for its elements */
    fr_reply *base;   /* a growing frame's first element (the top level's, a deferred
                         array's: the room is moved when it fills); NULL for an array of
                         known length, closed when its last element comes */
    fr_reply *node;   /* a deferred array's node, given its elements when it closes */
} fri_tframe;

/* Whether FAKEREDIS_CHECK_REPLIES asks for the check (read once per process). */
int fri_reply_check_wanted(void);
/* A new client's frame stack (fr_client_new): 0, or -1 when out of memory. */
int fri_tree_init(fr_client *c);
void fri_tree_start(fr_client *c, size_t n);
void fri_tree_checked(fr_client *c, const fr_reply *roots, size_t n);

/* Starts a call's tree with room for n top-level replies when the caller wants a tree
 * (want) -- or, in the check (FAKEREDIS_CHECK_REPLIES), whatever the caller wants, the
 * bytes written too -- and the client speaks RESP2; c->tree says whether it did. */
static inline void fri_tree_begin(fr_client *c, size_t n, int want)
{
    if ((want || c->srv->check_replies) && c->proto != 3) fri_tree_start(c, n);
}

/* fr_exec's common case, a tree of one reply kept in the client itself without the
 * check: 1 when it began one (end it with fri_tree_end_one), 0 when fri_tree_begin must. */
static inline int fri_tree_begin_one(fr_client *c)
{
    if (!c->tree_fast || c->proto == 3) return 0;
    fri_tframe *f = c->ttop = c->tframes;
    f->base = f->next = c->tone;
    f->end = c->tone + 2;
    c->tree = FRI_TREE;
    return 1;
}

/* The first reply of a tree begun by fri_tree_begin_one; NULL when there is none (the
 * command blocked). */
static inline const fr_reply *fri_tree_end_one(fr_client *c)
{
    assert(c->ttop == c->tframes && !c->thole); /* every array closed, every hole filled */
    fri_tframe *f = c->tframes;
    c->tree = 0;
    return f->next != f->base ? f->base : NULL;
}

/* Ends the call's tree: the number of top-level replies and *roots, after checking the
 * tree against the bytes in the check; (size_t)-1 when no tree was built (then the bytes
 * in c->out are the replies). */
static inline size_t fri_tree_end(fr_client *c, const fr_reply **roots)
{
    if (!c->tree) return (size_t)-1;
    assert(c->ttop == c->tframes && !c->thole); /* every array closed, every hole filled */
    fri_tframe *f = c->tframes;
    size_t n = (size_t)(f->next - f->base);
    if (c->tree == FRI_TREE_AND_BYTES) fri_tree_checked(c, f->base, n);
    c->tree = 0;
    *roots = f->base;
    return n;
}

/* A call that must write bytes (a command that may block a client that blocks: its
 * reply is inspected and dropped as bytes): pause returns whether a tree was being
 * built, resume parses what was written from mark on into it. */
int fri_tree_pause(fr_client *c);
void fri_tree_resume(fr_client *c, int was, size_t mark);

/* Parses the n replies in c->out (written by the fake) into trees; out[i] gets reply i.
 * Returns -1 (with OOM error replies filled in) when the arena cannot grow. */
int fri_parse_replies(fr_client *c, size_t n, const fr_reply **out);
/* The one reply in c->out (fr_exec's case); the OOM error reply when the arena cannot grow. */
const fr_reply *fri_parse_reply(fr_client *c);

#endif
