/* zskiplist.c -- the skiplist with spans that orders a sorted set (see zskiplist.h).
 *
 * The algorithms are the classic ones Redis uses for its zskiplist: every search walks
 * from the highest level down, remembering on each level the last node before the
 * target (update[]) and how many elements it passed (rank[]), which is all an insert or
 * a delete needs to fix the links and their spans.  This file depends on nothing else in
 * the fake so the unit tests can drive it alone.
 */
#include "fr_alloc.h"
#include "zskiplist.h"

#include <stdlib.h>
#include <string.h>

int fri_zsl_member_cmp(const char *a, size_t alen, const char *b, size_t blen)
{
    size_t min = alen < blen ? alen : blen;
    int cmp = min ? memcmp(a, b, min) : 0;
    if (cmp != 0) return cmp;
    return alen < blen ? -1 : (alen > blen ? 1 : 0);
}

/* Does node n sort strictly before (score, ele)? */
static inline int node_before(const fri_zsl_node *n, double score, const char *ele,
                              size_t len)
{
    return n->score < score ||
           (n->score == score && fri_zsl_member_cmp(n->ele, n->len, ele, len) < 0);
}

/* Allocates a node of the given height with room for the member right after its
 * levels, so one allocation holds everything. */
static fri_zsl_node *node_new(int height, double score, const char *ele, size_t len)
{
    size_t head = sizeof(fri_zsl_node) + (size_t)height * sizeof(struct fri_zsl_level);
    fri_zsl_node *n = fri_malloc(head + len + 1);
    if (n == NULL) return NULL;
    char *p = (char *)n + head;
    if (len) memcpy(p, ele, len);
    p[len] = '\0';
    n->score = score;
    n->ele = p;
    n->len = len;
    n->backward = NULL;
    n->height = height;
    for (int i = 0; i < height; i++) {
        n->level[i].forward = NULL;
        n->level[i].span = 0;
    }
    return n;
}

fri_zsl *fri_zsl_new(void)
{
    fri_zsl *zsl = fri_malloc(sizeof(*zsl));
    if (zsl == NULL) return NULL;
    zsl->header = node_new(FRI_ZSL_MAXLEVEL, 0, NULL, 0);
    if (zsl->header == NULL) {
        fri_free(zsl);
        return NULL;
    }
    zsl->tail = NULL;
    zsl->length = 0;
    zsl->level = 1;
    zsl->rng = 0x9E3779B97F4A7C15ull; /* any non-zero seed; fixed so shapes repeat */
    return zsl;
}

void fri_zsl_free(fri_zsl *zsl)
{
    if (zsl == NULL) return;
    fri_zsl_node *n = zsl->header->level[0].forward;
    while (n) {
        fri_zsl_node *next = n->level[0].forward;
        fri_free(n);
        n = next;
    }
    fri_free(zsl->header);
    fri_free(zsl);
}

/* A height with P(h >= k) = 4^-(k-1), as Redis's ZSKIPLIST_P = 0.25 gives. */
static int random_height(fri_zsl *zsl)
{
    uint64_t x = zsl->rng;
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    zsl->rng = x;
    int h = 1;
    while (h < FRI_ZSL_MAXLEVEL && (x & 3) == 0) {
        h++;
        x >>= 2;
    }
    return h;
}

/* Links node x (its height, score and member set, not in the list) at its place. */
static void zsl_link(fri_zsl *zsl, fri_zsl_node *x)
{
    fri_zsl_node *update[FRI_ZSL_MAXLEVEL];
    size_t rank[FRI_ZSL_MAXLEVEL];
    fri_zsl_node *n = zsl->header;

    for (int i = zsl->level - 1; i >= 0; i--) {
        rank[i] = i == zsl->level - 1 ? 0 : rank[i + 1];
        while (n->level[i].forward && node_before(n->level[i].forward, x->score, x->ele, x->len)) {
            rank[i] += n->level[i].span;
            n = n->level[i].forward;
        }
        update[i] = n;
    }
    if (x->height > zsl->level) {
        /* New levels start at the header, whose link there spans the whole list. */
        for (int i = zsl->level; i < x->height; i++) {
            rank[i] = 0;
            update[i] = zsl->header;
            update[i]->level[i].forward = NULL;
            update[i]->level[i].span = zsl->length;
        }
        zsl->level = x->height;
    }
    for (int i = 0; i < x->height; i++) {
        x->level[i].forward = update[i]->level[i].forward;
        update[i]->level[i].forward = x;
        /* update[i] is rank[i]; x lands at rank[0] + 1. */
        x->level[i].span = update[i]->level[i].span - (rank[0] - rank[i]);
        update[i]->level[i].span = (rank[0] - rank[i]) + 1;
    }
    /* Links above x's height now jump over one more element. */
    for (int i = x->height; i < zsl->level; i++) update[i]->level[i].span++;

    x->backward = update[0] == zsl->header ? NULL : update[0];
    if (x->level[0].forward)
        x->level[0].forward->backward = x;
    else
        zsl->tail = x;
    zsl->length++;
}

/* Unlinks x given the last node before it on every level (update[]); x is not freed. */
static void zsl_unlink(fri_zsl *zsl, fri_zsl_node *x, fri_zsl_node **update)
{
    for (int i = 0; i < zsl->level; i++) {
        if (update[i]->level[i].forward == x) {
            update[i]->level[i].span += x->level[i].span - 1;
            update[i]->level[i].forward = x->level[i].forward;
        } else {
            update[i]->level[i].span -= 1;
        }
    }
    if (x->level[0].forward)
        x->level[0].forward->backward = x->backward;
    else
        zsl->tail = x->backward;
    while (zsl->level > 1 && zsl->header->level[zsl->level - 1].forward == NULL) zsl->level--;
    zsl->length--;
}

/* Fills update[] with the last node before (score, ele) on every level and returns the
 * node after it at level 0 (the match, if the element is there). */
static fri_zsl_node *zsl_find(fri_zsl *zsl, double score, const char *ele, size_t len,
                              fri_zsl_node **update)
{
    fri_zsl_node *n = zsl->header;
    for (int i = zsl->level - 1; i >= 0; i--) {
        while (n->level[i].forward && node_before(n->level[i].forward, score, ele, len))
            n = n->level[i].forward;
        update[i] = n;
    }
    return n->level[0].forward;
}

fri_zsl_node *fri_zsl_insert(fri_zsl *zsl, double score, const char *ele, size_t len)
{
    fri_zsl_node *x = node_new(random_height(zsl), score, ele, len);
    if (x == NULL) return NULL;
    zsl_link(zsl, x);
    return x;
}

int fri_zsl_delete(fri_zsl *zsl, double score, const char *ele, size_t len)
{
    fri_zsl_node *update[FRI_ZSL_MAXLEVEL];
    fri_zsl_node *x = zsl_find(zsl, score, ele, len, update);
    if (x == NULL || x->score != score || fri_zsl_member_cmp(x->ele, x->len, ele, len) != 0)
        return 0;
    zsl_unlink(zsl, x, update);
    fri_free(x);
    return 1;
}

void fri_zsl_update_score(fri_zsl *zsl, fri_zsl_node *node, double newscore)
{
    /* Still between its neighbours: only the score changes (strict comparisons, so a
     * tie with a neighbour takes the slow path where the member decides). */
    if ((node->backward == NULL || node->backward->score < newscore) &&
        (node->level[0].forward == NULL || node->level[0].forward->score > newscore)) {
        node->score = newscore;
        return;
    }
    fri_zsl_node *update[FRI_ZSL_MAXLEVEL];
    fri_zsl_node *x = zsl_find(zsl, node->score, node->ele, node->len, update);
    (void)x; /* == node: the caller guarantees it is in the list */
    zsl_unlink(zsl, node, update);
    node->score = newscore;
    zsl_link(zsl, node);
}

size_t fri_zsl_rank(const fri_zsl *zsl, double score, const char *ele, size_t len)
{
    const fri_zsl_node *n = zsl->header;
    size_t rank = 0;
    for (int i = zsl->level - 1; i >= 0; i--) {
        while (n->level[i].forward &&
               (n->level[i].forward->score < score ||
                (n->level[i].forward->score == score &&
                 fri_zsl_member_cmp(n->level[i].forward->ele, n->level[i].forward->len, ele,
                                    len) <= 0))) {
            rank += n->level[i].span;
            n = n->level[i].forward;
        }
        if (n != zsl->header && n->score == score &&
            fri_zsl_member_cmp(n->ele, n->len, ele, len) == 0)
            return rank;
    }
    return 0;
}

fri_zsl_node *fri_zsl_by_rank(const fri_zsl *zsl, size_t rank)
{
    if (rank == 0 || rank > zsl->length) return NULL;
    fri_zsl_node *n = zsl->header;
    size_t traversed = 0;
    for (int i = zsl->level - 1; i >= 0; i--) {
        while (n->level[i].forward && traversed + n->level[i].span <= rank) {
            traversed += n->level[i].span;
            n = n->level[i].forward;
        }
        if (traversed == rank) return n;
    }
    return NULL;
}

fri_zsl_node *fri_zsl_first(const fri_zsl *zsl) { return zsl->header->level[0].forward; }
fri_zsl_node *fri_zsl_last(const fri_zsl *zsl) { return zsl->tail; }

size_t fri_zsl_delete_range_by_rank(fri_zsl *zsl, size_t start, size_t end,
                                    void (*on_delete)(fri_zsl_node *n, void *ctx), void *ctx)
{
    if (start == 0) start = 1;
    if (end > zsl->length) end = zsl->length;
    if (start > end) return 0;

    fri_zsl_node *update[FRI_ZSL_MAXLEVEL];
    fri_zsl_node *n = zsl->header;
    size_t traversed = 0;
    for (int i = zsl->level - 1; i >= 0; i--) {
        while (n->level[i].forward && traversed + n->level[i].span < start) {
            traversed += n->level[i].span;
            n = n->level[i].forward;
        }
        update[i] = n;
    }
    traversed++;
    n = n->level[0].forward;
    size_t removed = 0;
    while (n && traversed <= end) {
        fri_zsl_node *next = n->level[0].forward;
        zsl_unlink(zsl, n, update);
        if (on_delete) on_delete(n, ctx);
        fri_free(n);
        removed++;
        traversed++;
        n = next;
    }
    return removed;
}

/* ----- Score intervals ---------------------------------------------------------------- */

int fri_zsl_value_gte_min(double value, const fri_zrangespec *spec)
{
    return spec->minex ? value > spec->min : value >= spec->min;
}

int fri_zsl_value_lte_max(double value, const fri_zrangespec *spec)
{
    return spec->maxex ? value < spec->max : value <= spec->max;
}

int fri_zsl_is_in_range(const fri_zsl *zsl, const fri_zrangespec *range)
{
    if (range->min > range->max ||
        (range->min == range->max && (range->minex || range->maxex)))
        return 0;
    const fri_zsl_node *x = zsl->tail;
    if (x == NULL || !fri_zsl_value_gte_min(x->score, range)) return 0;
    x = zsl->header->level[0].forward;
    if (x == NULL || !fri_zsl_value_lte_max(x->score, range)) return 0;
    return 1;
}

fri_zsl_node *fri_zsl_first_in_range(const fri_zsl *zsl, const fri_zrangespec *range)
{
    if (!fri_zsl_is_in_range(zsl, range)) return NULL;
    fri_zsl_node *n = zsl->header;
    for (int i = zsl->level - 1; i >= 0; i--) {
        while (n->level[i].forward && !fri_zsl_value_gte_min(n->level[i].forward->score, range))
            n = n->level[i].forward;
    }
    /* The list reaches past min (checked above), so there is a next node. */
    n = n->level[0].forward;
    if (!fri_zsl_value_lte_max(n->score, range)) return NULL;
    return n;
}

fri_zsl_node *fri_zsl_last_in_range(const fri_zsl *zsl, const fri_zrangespec *range)
{
    if (!fri_zsl_is_in_range(zsl, range)) return NULL;
    fri_zsl_node *n = zsl->header;
    for (int i = zsl->level - 1; i >= 0; i--) {
        while (n->level[i].forward && fri_zsl_value_lte_max(n->level[i].forward->score, range))
            n = n->level[i].forward;
    }
    /* The first node is below max (checked above), so n is not the header. */
    if (!fri_zsl_value_gte_min(n->score, range)) return NULL;
    return n;
}

/* ----- Lexicographic intervals --------------------------------------------------------- */

/* Compares a member with a bound: "-" is below and "+" above every member. */
static int lex_cmp_bound(const char *ele, size_t len, fri_zlex_kind kind, const char *b,
                         size_t blen)
{
    if (kind == FRI_ZLEX_MIN) return 1;
    if (kind == FRI_ZLEX_MAX) return -1;
    return fri_zsl_member_cmp(ele, len, b, blen);
}

int fri_zsl_lex_gte_min(const char *ele, size_t len, const fri_zlexspec *spec)
{
    int cmp = lex_cmp_bound(ele, len, spec->minkind, spec->min, spec->minlen);
    return spec->minex ? cmp > 0 : cmp >= 0;
}

int fri_zsl_lex_lte_max(const char *ele, size_t len, const fri_zlexspec *spec)
{
    int cmp = lex_cmp_bound(ele, len, spec->maxkind, spec->max, spec->maxlen);
    return spec->maxex ? cmp < 0 : cmp <= 0;
}

int fri_zsl_lex_range_empty(const fri_zlexspec *spec)
{
    int cmp;
    if (spec->minkind != FRI_ZLEX_BYTES && spec->minkind == spec->maxkind)
        cmp = 0; /* "- -" or "+ +": the same bound */
    else if (spec->minkind == FRI_ZLEX_MIN || spec->maxkind == FRI_ZLEX_MAX)
        cmp = -1;
    else if (spec->minkind == FRI_ZLEX_MAX || spec->maxkind == FRI_ZLEX_MIN)
        cmp = 1;
    else
        cmp = fri_zsl_member_cmp(spec->min, spec->minlen, spec->max, spec->maxlen);
    return cmp > 0 || (cmp == 0 && (spec->minex || spec->maxex));
}

int fri_zsl_is_in_lex_range(const fri_zsl *zsl, const fri_zlexspec *range)
{
    if (fri_zsl_lex_range_empty(range)) return 0;
    const fri_zsl_node *x = zsl->tail;
    if (x == NULL || !fri_zsl_lex_gte_min(x->ele, x->len, range)) return 0;
    x = zsl->header->level[0].forward;
    if (x == NULL || !fri_zsl_lex_lte_max(x->ele, x->len, range)) return 0;
    return 1;
}

fri_zsl_node *fri_zsl_first_in_lex_range(const fri_zsl *zsl, const fri_zlexspec *range)
{
    if (!fri_zsl_is_in_lex_range(zsl, range)) return NULL;
    fri_zsl_node *n = zsl->header;
    for (int i = zsl->level - 1; i >= 0; i--) {
        while (n->level[i].forward &&
               !fri_zsl_lex_gte_min(n->level[i].forward->ele, n->level[i].forward->len, range))
            n = n->level[i].forward;
    }
    n = n->level[0].forward;
    if (n == NULL || !fri_zsl_lex_lte_max(n->ele, n->len, range)) return NULL;
    return n;
}

fri_zsl_node *fri_zsl_last_in_lex_range(const fri_zsl *zsl, const fri_zlexspec *range)
{
    if (!fri_zsl_is_in_lex_range(zsl, range)) return NULL;
    fri_zsl_node *n = zsl->header;
    for (int i = zsl->level - 1; i >= 0; i--) {
        while (n->level[i].forward &&
               fri_zsl_lex_lte_max(n->level[i].forward->ele, n->level[i].forward->len, range))
            n = n->level[i].forward;
    }
    if (n == zsl->header || !fri_zsl_lex_gte_min(n->ele, n->len, range)) return NULL;
    return n;
}

/* ----- Self check ---------------------------------------------------------------------- */

int fri_zsl_check(const fri_zsl *zsl)
{
    if (zsl->level < 1 || zsl->level > FRI_ZSL_MAXLEVEL) return -1;
    /* Level 0: order, backward links, length, tail. */
    size_t count = 0;
    const fri_zsl_node *prev = NULL;
    for (const fri_zsl_node *n = zsl->header->level[0].forward; n; n = n->level[0].forward) {
        if (n->backward != prev) return -2;
        if (n->height < 1 || n->height > zsl->level) return -3;
        if (n->score != n->score) return -4; /* NaN */
        if (prev && !node_before(prev, n->score, n->ele, n->len)) return -5;
        if (n->ele[n->len] != '\0') return -6;
        if (n->level[0].span != (n->level[0].forward ? 1u : 0u)) return -7;
        prev = n;
        count++;
    }
    if (count != zsl->length) return -8;
    if (zsl->tail != prev) return -9;
    if (zsl->header->level[0].span != (zsl->length ? 1u : 0u)) return -7;
    /* Every level: its links visit a subsequence of level 0 with spans that add up. */
    for (int i = 1; i < zsl->level; i++) {
        const fri_zsl_node *n = zsl->header;
        const fri_zsl_node *walk = zsl->header; /* level-0 walker, rank pos */
        while (n->level[i].forward) {
            const fri_zsl_node *f = n->level[i].forward;
            if (f->height <= i) return -10;
            size_t steps = 0;
            while (walk != f && walk) {
                walk = walk->level[0].forward;
                steps++;
            }
            if (walk != f) return -11;
            if (n->level[i].span != steps) return -12;
            n = f;
        }
    }
    if (zsl->level > 1 && zsl->header->level[zsl->level - 1].forward == NULL) return -13;
    return 0;
}
