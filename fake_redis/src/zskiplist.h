/* zskiplist.h -- the ordered index of a sorted set: a skiplist with spans.
 *
 * Elements are ordered by score, then by member bytes (memcmp, shorter first on a common
 * prefix), exactly as Redis orders a sorted set.  Every forward link records how many
 * level-0 steps it skips (its span), so the rank of an element and the element at a rank
 * are found in O(log n), as in Redis's zskiplist.
 *
 * Node heights come from a generator private to each list with a fixed seed, so the shape
 * of a list (and therefore every operation's cost) is the same on every run; no reply
 * depends on the shape.
 *
 * The list owns its nodes, and each node owns a copy of its member.  Nothing here touches
 * the server or a client: the sorted set type (t_zset.c) pairs a list with a member ->
 * node dictionary, and the unit tests drive the list alone.
 */
#ifndef ZSKIPLIST_H
#define ZSKIPLIST_H

#include <stddef.h>
#include <stdint.h>

#define FRI_ZSL_MAXLEVEL 32 /* enough for 4^32 elements at p = 1/4 */

typedef struct fri_zsl_node fri_zsl_node;

struct fri_zsl_node {
    double score;
    const char *ele;         /* the member, stored right after the levels, NUL-terminated */
    size_t len;              /* member bytes, not counting the NUL */
    fri_zsl_node *backward;  /* previous node at level 0, NULL for the first */
    int height;              /* levels this node has; kept so a move can relink it */
    struct fri_zsl_level {
        fri_zsl_node *forward; /* next node at this level, NULL at the end */
        size_t span;           /* level-0 steps that forward skips (0 when forward is NULL
                                  past the tail, as Redis keeps it) */
    } level[];
};

typedef struct fri_zsl {
    fri_zsl_node *header; /* sentinel with FRI_ZSL_MAXLEVEL levels; holds no element */
    fri_zsl_node *tail;   /* last node, NULL when empty: reverse scans start here */
    size_t length;        /* number of elements */
    int level;            /* highest level in use (>= 1) */
    uint64_t rng;         /* xorshift64 state for node heights, fixed seed per list */
} fri_zsl;

/* A score interval; minex/maxex make the bound exclusive, as "(" does in commands. */
typedef struct fri_zrangespec {
    double min, max;
    int minex, maxex;
} fri_zrangespec;

/* A bound of a lexicographic interval: "-" (below every member), "+" (above every
 * member), or bytes. */
typedef enum fri_zlex_kind {
    FRI_ZLEX_MIN = -1,
    FRI_ZLEX_BYTES = 0,
    FRI_ZLEX_MAX = 1,
} fri_zlex_kind;

typedef struct fri_zlexspec {
    fri_zlex_kind minkind, maxkind;
    const char *min, *max;  /* the bound bytes when the kind is FRI_ZLEX_BYTES */
    size_t minlen, maxlen;
    int minex, maxex;       /* "(" bounds; "-" and "+" count as exclusive, as in Redis */
} fri_zlexspec;

/* An empty list, or NULL when out of memory. */
fri_zsl *fri_zsl_new(void);
/* Frees the list, its nodes and their members.  NULL is allowed. */
void fri_zsl_free(fri_zsl *zsl);

/* Inserts (score, member); the caller guarantees the member is not in the list and the
 * score is not NaN.  Returns the new node, or NULL when out of memory (list unchanged). */
fri_zsl_node *fri_zsl_insert(fri_zsl *zsl, double score, const char *ele, size_t len);
/* Removes and frees the node holding exactly (score, member).  1 if it was there. */
int fri_zsl_delete(fri_zsl *zsl, double score, const char *ele, size_t len);
/* Gives node (which must be in zsl) a new score, moving it if its place changes.  The
 * node is reused, so pointers to it stay valid; nothing is allocated. */
void fri_zsl_update_score(fri_zsl *zsl, fri_zsl_node *node, double newscore);

/* 1-based rank of (score, member), or 0 when it is not in the list. */
size_t fri_zsl_rank(const fri_zsl *zsl, double score, const char *ele, size_t len);
/* The node at 1-based rank, or NULL when rank is 0 or past the end. */
fri_zsl_node *fri_zsl_by_rank(const fri_zsl *zsl, size_t rank);
/* The first node, the last node (NULL when empty). */
fri_zsl_node *fri_zsl_first(const fri_zsl *zsl);
fri_zsl_node *fri_zsl_last(const fri_zsl *zsl);

/* Removes the nodes of 1-based ranks start..end (inclusive, clamped to the list) and
 * returns how many went.  on_delete (may be NULL) sees each node just before it is
 * freed, so the caller can drop its own references. */
size_t fri_zsl_delete_range_by_rank(fri_zsl *zsl, size_t start, size_t end,
                                    void (*on_delete)(fri_zsl_node *n, void *ctx), void *ctx);

/* Score intervals.  The predicates say whether a score is past the lower / before the
 * upper bound; "in range" checks that the interval is not empty and meets the list. */
int fri_zsl_value_gte_min(double value, const fri_zrangespec *spec);
int fri_zsl_value_lte_max(double value, const fri_zrangespec *spec);
int fri_zsl_is_in_range(const fri_zsl *zsl, const fri_zrangespec *range);
/* The first / last node whose score lies in range, or NULL. */
fri_zsl_node *fri_zsl_first_in_range(const fri_zsl *zsl, const fri_zrangespec *range);
fri_zsl_node *fri_zsl_last_in_range(const fri_zsl *zsl, const fri_zrangespec *range);

/* Lexicographic intervals, meaningful when every score is equal (as in Redis, they only
 * look at members).  The "first / last" searches descend the levels the way Redis's
 * skiplist does; with unequal scores the answer is whatever that descent finds. */
int fri_zsl_lex_gte_min(const char *ele, size_t len, const fri_zlexspec *spec);
int fri_zsl_lex_lte_max(const char *ele, size_t len, const fri_zlexspec *spec);
/* Is the interval itself empty ("(a (a", "+ -", "[b [a", ...)? */
int fri_zsl_lex_range_empty(const fri_zlexspec *spec);
int fri_zsl_is_in_lex_range(const fri_zsl *zsl, const fri_zlexspec *range);
fri_zsl_node *fri_zsl_first_in_lex_range(const fri_zsl *zsl, const fri_zlexspec *range);
fri_zsl_node *fri_zsl_last_in_lex_range(const fri_zsl *zsl, const fri_zlexspec *range);

/* Member order: memcmp, then the shorter first. */
int fri_zsl_member_cmp(const char *a, size_t alen, const char *b, size_t blen);

/* Checks every invariant (order, spans, backward links, length, tail); returns 0 when
 * the list is sound, else a negative number naming the first broken one.  For tests. */
int fri_zsl_check(const fri_zsl *zsl);

#endif /* ZSKIPLIST_H */
