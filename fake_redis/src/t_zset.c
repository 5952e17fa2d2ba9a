/* t_zset.c -- the sorted set type: ZADD, ZRANGE and the rest of Redis 7.0's sorted-set
 * group.
 *
 * A sorted set is a fri_obj of type FRI_ZSET whose ptr is a fri_zset: a fri_dict mapping
 * each member to its skiplist node (so ZSCORE is one hash lookup) and the skiplist of
 * zskiplist.c that keeps (score, member) order with spans (so ranks are O(log n)).  That
 * is Redis's own skiplist encoding.
 *
 * Redis keeps small sets (at most 128 members, none longer than 64 bytes, ever: the
 * server's zset-max-listpack-entries and -value, see fr_server_set_param) in a listpack
 * instead, and two things you can see depend on it, so the fake remembers
 * whether Redis would still hold the set as a listpack:
 *   - a listpack stores a score of -0 as 0, a skiplist keeps the sign;
 *   - lexicographic ranges over members whose scores differ (which Redis leaves
 *     unspecified) scan a listpack linearly but descend a skiplist's levels; the fake
 *     scans linearly too while the set is "listpack", so those replies match.  Past that
 *     the descent depends on Redis's random node heights, which nobody can reproduce.
 *
 * Like Redis's t_zset.c, every handler checks its arguments in the same order as Redis
 * does, so a command with two faults answers the error the real server gives.
 */
#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "fr_int.h"
#include "zskiplist.h"

#define ZSET_ERR_NAN "ERR resulting score is not a number (NaN)"
#define ZSET_ERR_NOT_FLOAT_RANGE "ERR min or max is not a float"
#define ZSET_ERR_NOT_LEX_RANGE "ERR min or max not valid string range item"
/* What the fake answers when malloc fails; Redis's own text for its memory limit. */

struct fri_zset {
    fri_dict *dict; /* member -> fri_zsl_node* (v.ptr): scores without a search */
    fri_zsl *zsl;   /* (score, member) order with spans, for ranks and ranges */
    int listpack;   /* Redis would still hold this set as a listpack (see the top) */
    const fri_tunables *tun; /* its server's listpack limits, read at every insert */
};

/* ----- The sorted set type ------------------------------------------------------------- */

/* An empty set that Redis would hold as a listpack when listpack is set, or NULL when
 * out of memory. */
static fri_zset *zset_new(int listpack, const fri_tunables *tun)
{
    fri_zset *z = fri_malloc(sizeof(*z));
    if (!z) return NULL;
    z->dict = fri_dict_new();
    z->zsl = fri_zsl_new();
    z->listpack = listpack;
    z->tun = tun;
    if (!z->dict || !z->zsl) {
        fri_dict_free(z->dict, NULL);
        fri_zsl_free(z->zsl);
        fri_free(z);
        return NULL;
    }
    return z;
}

void fri_zset_free(fri_zset *z)
{
    if (!z) return;
    fri_dict_free(z->dict, NULL); /* the values are nodes, which the skiplist owns */
    fri_zsl_free(z->zsl);
    fri_free(z);
}

size_t fri_zset_size(const fri_zset *z) { return z->zsl->length; }

/* The fake always keeps a skiplist: converting is forgetting that Redis would not. */
void fri_zset_convert_skiplist(fri_zset *z) { z->listpack = 0; }
int fri_zset_is_listpack(const fri_zset *z) { return z->listpack; }

/* zsetDup: the same members and scores in the same encoding. */
fri_zset *fri_zset_dup(const fri_zset *z)
{
    fri_zset *d = zset_new(z->listpack, z->tun);
    if (!d) return NULL;
    for (fri_zsl_node *n = fri_zsl_first(z->zsl); n; n = n->level[0].forward) {
        int created;
        fri_dent *e = fri_dict_add(d->dict, n->ele, n->len, &created);
        fri_zsl_node *dn = e ? fri_zsl_insert(d->zsl, n->score, n->ele, n->len) : NULL;
        if (!dn) {
            if (e) fri_dict_delete(d->dict, n->ele, n->len, NULL);
            fri_zset_free(d);
            return NULL;
        }
        e->v.ptr = dn;
    }
    return d;
}

size_t fri_zset_memory(const fri_zset *z, size_t samples)
{
    if (z->listpack) {
        /* robj and the listpack: member, score, member, ... with each score written as
         * d2string writes it (an integer stored as one) */
        uint64_t bytes = 7;
        for (fri_zsl_node *n = fri_zsl_first(z->zsl); n; n = n->level[0].forward) {
            char buf[64];
            size_t len = fri_d2string(buf, sizeof(buf), n->score);
            bytes += fri_lp_str_size(n->ele, n->len) + fri_lp_str_size(buf, len);
        }
        return 16 + fri_je_size((size_t)bytes);
    }
    /* robj, zset, zskiplist, the dict, the skiplist header (32 levels), then per sampled
     * node its member's sds, its dict entry and the node with its levels */
    size_t sampled = 0, bytes = 0;
    for (fri_zsl_node *n = fri_zsl_first(z->zsl); n && sampled < samples;
         n = n->level[0].forward) {
        bytes += fri_sds_size(n->len) + 24 + fri_je_size(24 + 16 * (size_t)n->height);
        sampled++;
    }
    return 16 + 16 + 32 + fri_je_size(24 + 16 * 32) +
           fri_dict_mem(fri_zset_size(z), sampled, bytes);
}

void fri_zset_foreach(fri_zset *z, void (*fn)(const char *p, size_t len, double score,
                                              void *ctx), void *ctx)
{
    for (fri_zsl_node *n = fri_zsl_first(z->zsl); n; n = n->level[0].forward)
        fn(n->ele, n->len, n->score, ctx);
}

static fri_zsl_node *zset_find(fri_zset *z, const char *ele, size_t len)
{
    fri_dent *e = fri_dict_find(z->dict, ele, len);
    return e ? e->v.ptr : NULL;
}

/* Links a member that is not in the set, whose dict entry e the caller has just created
 * (ZADD creates it while finding out whether the member exists, which saves a second
 * hash and probe).  Redis converts a listpack to a skiplist before an insert that would
 * make it too long or hold a too long member, and a listpack keeps no negative zero.
 * Returns the node, or NULL when out of memory (e deleted again, set unchanged). */
static fri_zsl_node *zset_insert_entry(fri_zset *z, fri_dent *e, double score,
                                       const char *ele, size_t len)
{
    int listpack = z->listpack &&
                   (long long)z->zsl->length + 1 <= z->tun->zset_max_listpack_entries &&
                   (long long)len <= z->tun->zset_max_listpack_value;
    if (listpack && score == 0) score = 0.0;
    fri_zsl_node *n = fri_zsl_insert(z->zsl, score, ele, len);
    if (!n) {
        fri_dict_delete(z->dict, ele, len, NULL);
        return NULL;
    }
    e->v.ptr = n;
    z->listpack = listpack;
    return n;
}

/* Adds a member that is not in the set (see zset_insert_entry).  Returns the node, or
 * NULL when out of memory (set unchanged). */
static fri_zsl_node *zset_insert(fri_zset *z, double score, const char *ele, size_t len)
{
    int created;
    fri_dent *e = fri_dict_add(z->dict, ele, len, &created);
    return e ? zset_insert_entry(z, e, score, ele, len) : NULL;
}

/* Gives an existing member a different score. */
static void zset_update(fri_zset *z, fri_zsl_node *n, double score)
{
    if (z->listpack && score == 0) score = 0.0;
    fri_zsl_update_score(z->zsl, n, score);
}

/* Removes a member; 1 if it was there. */
static int zset_del(fri_zset *z, const char *ele, size_t len)
{
    fri_val v;
    if (!fri_dict_delete(z->dict, ele, len, &v)) return 0;
    fri_zsl_node *n = v.ptr;
    fri_zsl_delete(z->zsl, n->score, n->ele, n->len);
    return 1;
}

/* fri_zsl_delete_range_by_rank's callback: the node is going, so is its dict entry. */
static void drop_from_dict(fri_zsl_node *n, void *ctx)
{
    fri_zset *z = ctx;
    fri_dict_delete(z->dict, n->ele, n->len, NULL);
}

/* Removes the nodes of 1-based ranks start..end; returns how many went. */
static size_t zset_delete_ranks(fri_zset *z, size_t start, size_t end)
{
    return fri_zsl_delete_range_by_rank(z->zsl, start, end, drop_from_dict, z);
}

/* Pops the lowest member (the highest when max) and replies it as ZPOPMIN does, member
 * then score, wrapped in a 2-element array when pair (ZMPOP's nesting). */
static void zset_pop_reply(fr_client *c, fri_zset *z, int max, int pair)
{
    fri_zsl_node *node = max ? fri_zsl_last(z->zsl) : fri_zsl_first(z->zsl);
    if (pair) fri_reply_array_len(c, 2);
    fri_reply_bulk(c, node->ele, node->len);
    fri_reply_double(c, node->score);
    size_t rank = max ? fri_zset_size(z) : 1;
    zset_delete_ranks(z, rank, rank);
}

/* 1-based rank of a node in the set. */
static size_t zset_rank_of(const fri_zset *z, const fri_zsl_node *n)
{
    return fri_zsl_rank(z->zsl, n->score, n->ele, n->len);
}

/* ZADD's input and output flags, as Redis's zsetAdd takes and reports them. */
#define ZADD_IN_INCR (1 << 0) /* add the score to the current one */
#define ZADD_IN_NX (1 << 1)   /* only add new members */
#define ZADD_IN_XX (1 << 2)   /* only update existing members */
#define ZADD_IN_GT (1 << 3)   /* only update to a greater score */
#define ZADD_IN_LT (1 << 4)   /* only update to a lower score */

#define ZADD_OUT_NOP (1 << 0)     /* nothing done because of the conditions */
#define ZADD_OUT_NAN (1 << 1)     /* the increment made a NaN: nothing done */
#define ZADD_OUT_ADDED (1 << 2)   /* a new member */
#define ZADD_OUT_UPDATED (1 << 3) /* an existing member's score changed */
#define ZADD_OUT_OOM (1 << 4)     /* out of memory: nothing done */

/* Adds or updates one member under the ZADD flags.  Returns 1 with *out saying what
 * happened (and *newscore the member's score when it was added or considered for an
 * update), or 0 when nothing could be done (NaN or out of memory, see *out). */
static int zset_add(fri_zset *z, double score, const char *ele, size_t len, int in, int *out,
                    double *newscore)
{
    *out = 0;
    /* Without XX a missing member gets added: find and create its entry in one probe. */
    fri_dent *e = NULL;
    int created = 0;
    fri_zsl_node *n;
    if (in & ZADD_IN_XX) {
        n = zset_find(z, ele, len);
    } else {
        e = fri_dict_add(z->dict, ele, len, &created);
        if (!e) {
            *out |= ZADD_OUT_OOM;
            return 0;
        }
        n = created ? NULL : e->v.ptr;
    }
    if (n) {
        if (in & ZADD_IN_NX) {
            *out |= ZADD_OUT_NOP;
            return 1;
        }
        double cur = n->score;
        if (in & ZADD_IN_INCR) {
            score += cur;
            if (isnan(score)) {
                *out |= ZADD_OUT_NAN;
                return 0;
            }
        }
        if (((in & ZADD_IN_LT) && score >= cur) || ((in & ZADD_IN_GT) && score <= cur)) {
            *out |= ZADD_OUT_NOP;
            return 1;
        }
        *newscore = score;
        /* 0 and -0 compare equal, so -0 never replaces 0 (nor 0 replace -0). */
        if (score != cur) {
            zset_update(z, n, score);
            *out |= ZADD_OUT_UPDATED;
        }
        return 1;
    }
    if (in & ZADD_IN_XX) {
        *out |= ZADD_OUT_NOP;
        return 1;
    }
    if (!zset_insert_entry(z, e, score, ele, len)) {
        *out |= ZADD_OUT_OOM;
        return 0;
    }
    *newscore = score; /* the reply shows the score as given, even a -0 stored as 0 */
    *out |= ZADD_OUT_ADDED;
    return 1;
}

/* ----- Range arguments ------------------------------------------------------------------ */

/* Redis's rank range rule (ZRANGE, ZREMRANGEBYRANK) on a set of llen members: negative
 * ends count from the top, the start is clamped to 0 and the end to the last rank.
 * Returns 0 for an empty range, else 1 with *start..*end 0-based ranks inside the set. */
static int rank_range(long long llen, long long *start, long long *end)
{
    if (*start < 0) *start = llen + *start;
    if (*end < 0) *end = llen + *end;
    if (*start < 0) *start = 0;
    if (*start > *end || *start >= llen) return 0;
    if (*end >= llen) *end = llen - 1;
    return 1;
}

/* strtod over an argument the way Redis runs it over the sds: up to the first NUL, which
 * must end the number.  1 when it parses and is not NaN.  Redis does not reset errno
 * first, and an ERANGE stays in srv's mirror of it (see fri_errno_load). */
static int arg_strtod(fr_server *srv, const char *p, size_t len, double *out)
{
    char small[128];
    char *buf = small, *end;
    long long iv;
    /* Fast path: a canonical integer that a double holds exactly is what strtod would
     * return for it, without strtod's general machinery. */
    if (len <= 16 && fri_string2ll(p, len, &iv) && iv <= (1LL << 53) && iv >= -(1LL << 53)) {
        *out = (double)iv;
        return 1;
    }
    if (len >= sizeof(small)) {
        buf = fri_malloc(len + 1);
        if (!buf) return 0;
    }
    memcpy(buf, p, len);
    buf[len] = '\0';
    fri_errno_load(srv);
    double v = strtod(buf, &end);
    fri_errno_save(srv);
    int ok = end[0] == '\0' && !isnan(v);
    if (buf != small) fri_free(buf);
    if (ok) *out = v;
    return ok;
}

/* Parses one bound of a score interval: "(" makes it exclusive.  Redis uses a bare
 * strtod here, so "" means 0, leading spaces and "0x10" are fine, and an out of range
 * value saturates to +-inf.  0 on success, -1 when it is not a float. */
static int parse_score_bound(fr_server *srv, const fri_arg *a, double *v, int *ex)
{
    *ex = 0;
    if (a->len > 0 && a->ptr[0] == '(') {
        *ex = 1;
        return arg_strtod(srv, a->ptr + 1, a->len - 1, v) ? 0 : -1;
    }
    return arg_strtod(srv, a->ptr, a->len, v) ? 0 : -1;
}

static int parse_range(fr_server *srv, const fri_arg *min, const fri_arg *max,
                       fri_zrangespec *spec)
{
    if (parse_score_bound(srv, min, &spec->min, &spec->minex) < 0) return -1;
    if (parse_score_bound(srv, max, &spec->max, &spec->maxex) < 0) return -1;
    return 0;
}

/* Parses one bound of a lexicographic interval: "-", "+", "(bytes" or "[bytes".  Like
 * Redis, "-" and "+" need only be followed by a NUL, not be the whole argument. */
static int parse_lex_bound(const fri_arg *a, fri_zlex_kind *kind, const char **p, size_t *len,
                           int *ex)
{
    if (a->len == 0) return -1;
    *p = NULL;
    *len = 0;
    switch (a->ptr[0]) {
    case '+':
    case '-':
        if (a->len > 1 && a->ptr[1] != '\0') return -1;
        *kind = a->ptr[0] == '+' ? FRI_ZLEX_MAX : FRI_ZLEX_MIN;
        *ex = 1;
        return 0;
    case '(':
    case '[':
        *kind = FRI_ZLEX_BYTES;
        *ex = a->ptr[0] == '(';
        *p = a->ptr + 1;
        *len = a->len - 1;
        return 0;
    default:
        return -1;
    }
}

static int parse_lex_range(const fri_arg *min, const fri_arg *max, fri_zlexspec *spec)
{
    if (parse_lex_bound(min, &spec->minkind, &spec->min, &spec->minlen, &spec->minex) < 0)
        return -1;
    if (parse_lex_bound(max, &spec->maxkind, &spec->max, &spec->maxlen, &spec->maxex) < 0)
        return -1;
    return 0;
}

/* ----- Lexicographic searches that follow the encoding ----------------------------------- */

/* The first member in the interval, found as Redis finds it: a listpack is scanned from
 * the head for the first member past min (which must then be before max), a skiplist
 * descends its levels.  The two agree whenever every score is equal. */
static fri_zsl_node *lex_first(const fri_zset *z, const fri_zlexspec *range)
{
    if (!z->listpack) return fri_zsl_first_in_lex_range(z->zsl, range);
    if (!fri_zsl_is_in_lex_range(z->zsl, range)) return NULL;
    for (fri_zsl_node *n = fri_zsl_first(z->zsl); n; n = n->level[0].forward) {
        if (fri_zsl_lex_gte_min(n->ele, n->len, range))
            return fri_zsl_lex_lte_max(n->ele, n->len, range) ? n : NULL;
    }
    return NULL;
}

/* The last member in the interval (a listpack is scanned from the tail). */
static fri_zsl_node *lex_last(const fri_zset *z, const fri_zlexspec *range)
{
    if (!z->listpack) return fri_zsl_last_in_lex_range(z->zsl, range);
    if (!fri_zsl_is_in_lex_range(z->zsl, range)) return NULL;
    for (fri_zsl_node *n = fri_zsl_last(z->zsl); n; n = n->backward) {
        if (fri_zsl_lex_lte_max(n->ele, n->len, range))
            return fri_zsl_lex_gte_min(n->ele, n->len, range) ? n : NULL;
    }
    return NULL;
}

/* ----- Range results: a reply, or a set for ZRANGESTORE ------------------------------------ */

typedef struct zrange_result {
    fr_client *c;
    int withscores;     /* reply member, score pairs */
    const fri_arg *dst; /* ZRANGESTORE's destination key, NULL for a reply */
    fri_zset *set;      /* ZRANGESTORE: the set being built */
    size_t deferred;    /* reply: where the length goes when it was not known up front */
    int deferring;      /* reply: the length comes at the end */
    long count;         /* members emitted */
    int oom;            /* ZRANGESTORE ran out of memory: store nothing */
} zrange_result;

/* Starts a result of length members, or of a length known only at the end (-1). */
static void result_begin(zrange_result *r, long length)
{
    r->count = 0;
    if (r->dst) {
        /* Redis makes the destination a skiplist at once when it will be too long. */
        r->set = zset_new(length <= r->c->srv->tun.zset_max_listpack_entries,
                          &r->c->srv->tun);
        if (!r->set) r->oom = 1;
        return;
    }
    if (length >= 0) {
        r->deferring = 0;
        fri_reply_array_len(r->c, r->withscores ? length * 2 : length);
    } else {
        r->deferring = 1;
        r->deferred = fri_reply_deferred_len(r->c);
    }
}

static void result_emit(zrange_result *r, const fri_zsl_node *n)
{
    r->count++;
    if (r->dst) {
        if (!r->oom && !zset_insert(r->set, n->score, n->ele, n->len)) r->oom = 1;
        return;
    }
    fri_reply_bulk(r->c, n->ele, n->len);
    if (r->withscores) fri_reply_double(r->c, n->score);
}

/* Ends the result: fills in a deferred length, or stores the set (an empty result
 * deletes the destination, as Redis does). */
static void result_end(zrange_result *r)
{
    fr_client *c = r->c;
    if (!r->dst) {
        if (r->deferring)
            fri_reply_set_deferred_len(c, r->deferred, r->withscores ? r->count * 2 : r->count);
        return;
    }
    if (r->oom) {
        fri_zset_free(r->set);
        fri_reply_error(c, FRI_ERR_OOM);
        return;
    }
    if (r->count) {
        fri_obj *o = fri_obj_new(FRI_ZSET, r->set);
        if (!o) {
            fri_zset_free(r->set);
            fri_reply_error(c, FRI_ERR_OOM);
            return;
        }
        fri_lookup_write(c, r->dst); /* an expired destination goes first, as in setKey */
        fri_db_set(c->db, r->dst->ptr, r->dst->len, o, 0);
        fri_signal_modified(c, c->db, r->dst->ptr, r->dst->len);
        fri_reply_ll(c, r->count);
        fri_notify_key(c, FR_NOTIFY_ZSET, "zrangestore", r->dst);
    } else {
        fri_zset_free(r->set);
        fri_reply_ll(c, 0);
        if (fri_lookup_write(c, r->dst) && fri_db_delete(c->db, r->dst->ptr, r->dst->len)) {
            fri_signal_modified(c, c->db, r->dst->ptr, r->dst->len);
            fri_notify_key(c, FR_NOTIFY_GENERIC, "del", r->dst);
        }
    }
}

/* An empty result (nothing in range). */
static void result_empty(zrange_result *r)
{
    result_begin(r, 0);
    result_end(r);
}

/* Members of 0-based ranks start..end (negative counts from the end), in order or
 * reversed (then rank 0 is the highest). */
static void range_by_rank(zrange_result *r, fri_zset *z, long long start, long long end,
                          int reverse)
{
    long long llen = (long long)fri_zset_size(z);
    if (!rank_range(llen, &start, &end)) {
        result_empty(r);
        return;
    }
    long long rangelen = end - start + 1;
    result_begin(r, (long)rangelen);
    fri_zsl_node *n = fri_zsl_by_rank(z->zsl, reverse ? (size_t)(llen - start)
                                                      : (size_t)(start + 1));
    while (rangelen-- && n) {
        result_emit(r, n);
        n = reverse ? n->backward : n->level[0].forward;
    }
    result_end(r);
}

/* Members with scores in range, from the low end (or the high end when reversed),
 * skipping offset of them and emitting at most limit (negative: no limit).  A negative
 * offset skips everything, as Redis's "while (offset--)" walks off the end. */
static void range_by_score(zrange_result *r, fri_zset *z, const fri_zrangespec *range,
                           int reverse, long long offset, long long limit)
{
    if (offset > 0 && offset >= (long long)fri_zset_size(z)) {
        result_empty(r);
        return;
    }
    result_begin(r, -1);
    fri_zsl_node *n = reverse ? fri_zsl_last_in_range(z->zsl, range)
                              : fri_zsl_first_in_range(z->zsl, range);
    if (offset < 0) n = NULL;
    while (n && offset-- > 0) n = reverse ? n->backward : n->level[0].forward;
    while (n && limit != 0) {
        if (reverse ? !fri_zsl_value_gte_min(n->score, range)
                    : !fri_zsl_value_lte_max(n->score, range))
            break;
        result_emit(r, n);
        if (limit > 0) limit--;
        n = reverse ? n->backward : n->level[0].forward;
    }
    result_end(r);
}

/* The same over a lexicographic interval. */
static void range_by_lex(zrange_result *r, fri_zset *z, const fri_zlexspec *range, int reverse,
                         long long offset, long long limit)
{
    if (offset > 0 && offset >= (long long)fri_zset_size(z)) {
        result_empty(r);
        return;
    }
    result_begin(r, -1);
    fri_zsl_node *n = reverse ? lex_last(z, range) : lex_first(z, range);
    if (offset < 0) n = NULL;
    while (n && offset-- > 0) n = reverse ? n->backward : n->level[0].forward;
    while (n && limit != 0) {
        if (reverse ? !fri_zsl_lex_gte_min(n->ele, n->len, range)
                    : !fri_zsl_lex_lte_max(n->ele, n->len, range))
            break;
        result_emit(r, n);
        if (limit > 0) limit--;
        n = reverse ? n->backward : n->level[0].forward;
    }
    result_end(r);
}

/* ----- ZADD, ZINCRBY ------------------------------------------------------------------------ */

/* ZADD key [NX|XX] [GT|LT] [CH] [INCR] score member [score member ...], and ZINCRBY
 * (which is ZADD INCR underneath, options parsing included, as in Redis).  Every score
 * is parsed before the key is touched, so a bad one changes nothing. */
static void zadd_generic(fr_client *c, int in)
{
    const fri_arg *key = &c->argv[1];
    int ch = 0;
    int scoreidx = 2;
    while (scoreidx < c->argc) {
        const fri_arg *opt = &c->argv[scoreidx];
        if (fri_arg_is(opt, "nx")) in |= ZADD_IN_NX;
        else if (fri_arg_is(opt, "xx")) in |= ZADD_IN_XX;
        else if (fri_arg_is(opt, "ch")) ch = 1;
        else if (fri_arg_is(opt, "incr")) in |= ZADD_IN_INCR;
        else if (fri_arg_is(opt, "gt")) in |= ZADD_IN_GT;
        else if (fri_arg_is(opt, "lt")) in |= ZADD_IN_LT;
        else break;
        scoreidx++;
    }
    int incr = (in & ZADD_IN_INCR) != 0, nx = (in & ZADD_IN_NX) != 0;
    int xx = (in & ZADD_IN_XX) != 0, gt = (in & ZADD_IN_GT) != 0, lt = (in & ZADD_IN_LT) != 0;

    int elements = c->argc - scoreidx;
    if (elements % 2 || elements == 0) {
        fri_reply_error(c, FRI_ERR_SYNTAX);
        return;
    }
    elements /= 2;
    if (nx && xx) {
        fri_reply_error(c, "ERR XX and NX options at the same time are not compatible");
        return;
    }
    if ((gt && nx) || (lt && nx) || (gt && lt)) {
        fri_reply_error(c, "ERR GT, LT, and/or NX options at the same time are not compatible");
        return;
    }
    if (incr && elements > 1) {
        fri_reply_error(c, "ERR INCR option supports a single increment-element pair");
        return;
    }

    double small[16];
    double *scores = small;
    if ((size_t)elements > sizeof(small) / sizeof(small[0])) {
        scores = fri_malloc(sizeof(double) * (size_t)elements);
        if (!scores) {
            fri_reply_error(c, FRI_ERR_OOM);
            return;
        }
    }
    for (int j = 0; j < elements; j++) {
        if (fri_get_double_or_reply(c, &c->argv[scoreidx + j * 2], &scores[j], NULL) < 0)
            goto cleanup;
    }

    int wrongtype;
    fri_obj *o = fri_lookup_typed(c, key, FRI_ZSET, 1, &wrongtype);
    if (wrongtype) goto cleanup;

    long long added = 0, updated = 0, processed = 0;
    double score = 0;
    if (!o) {
        if (xx) goto reply; /* no key and XX: nothing to do */
        /* Redis picks the encoding from the first member only. */
        const fri_tunables *t = &c->srv->tun;
        fri_zset *z = zset_new(t->zset_max_listpack_entries != 0 &&
                                   (long long)c->argv[scoreidx + 1].len <=
                                       t->zset_max_listpack_value,
                               t);
        o = z ? fri_obj_new(FRI_ZSET, z) : NULL;
        if (!o) {
            fri_zset_free(z);
            fri_reply_error(c, FRI_ERR_OOM);
            goto cleanup;
        }
        fri_db_add(c->db, key->ptr, key->len, o);
    }
    fri_zset *z = o->ptr;
    for (int j = 0; j < elements; j++) {
        const fri_arg *ele = &c->argv[scoreidx + 1 + j * 2];
        double newscore = 0;
        int out;
        if (!zset_add(z, scores[j], ele->ptr, ele->len, in, &out, &newscore)) {
            fri_reply_error(c, (out & ZADD_OUT_NAN) ? ZSET_ERR_NAN : FRI_ERR_OOM);
            goto modified;
        }
        if (out & ZADD_OUT_ADDED) added++;
        if (out & ZADD_OUT_UPDATED) updated++;
        if (!(out & ZADD_OUT_NOP)) processed++;
        score = newscore;
    }

reply:
    if (incr) {
        if (processed)
            fri_reply_double(c, score);
        else
            fri_reply_nil(c);
    } else {
        fri_reply_ll(c, ch ? added + updated : added);
    }

modified:
    if (o) fri_delete_if_empty(c, key, o); /* only after an out-of-memory on a new key */
    if (added || updated) {
        fri_signal_modified(c, c->db, key->ptr, key->len);
        fri_notify_key(c, FR_NOTIFY_ZSET, incr ? "zincr" : "zadd", key);
    }
cleanup:
    if (scores != small) fri_free(scores);
}

static void zadd_command(fr_client *c) { zadd_generic(c, 0); }
void fri_zadd_command(fr_client *c) { zadd_generic(c, 0); }
static void zincrby_command(fr_client *c) { zadd_generic(c, ZADD_IN_INCR); }

/* ----- ZREM, ZREMRANGEBY* ---------------------------------------------------------------- */

/* The sorted set at key for a command that removes members and answers how many (ZREM,
 * ZREMRANGEBY*): its object, or NULL when the command was answered (WRONGTYPE, or 0 for
 * a missing key). */
static fri_obj *zset_for_removal(fr_client *c, const fri_arg *key)
{
    int wrongtype;
    fri_obj *o = fri_lookup_typed(c, key, FRI_ZSET, 1, &wrongtype);
    if (!o && !wrongtype) fri_reply_ll(c, 0);
    return o;
}

/* ZREM key member [member ...]: how many were removed; an emptied key goes. */
static void zrem_command(fr_client *c)
{
    const fri_arg *key = &c->argv[1];
    fri_obj *o = zset_for_removal(c, key);
    if (!o) return;
    fri_zset *z = o->ptr;
    long long deleted = 0;
    for (int j = 2; j < c->argc; j++) {
        if (zset_del(z, c->argv[j].ptr, c->argv[j].len)) deleted++;
        if (fri_zset_size(z) == 0) break;
    }
    if (deleted) {
        int emptied = fri_zset_size(z) == 0;
        fri_delete_if_empty(c, key, o);
        fri_notify_key(c, FR_NOTIFY_ZSET, "zrem", key);
        if (emptied) fri_notify_key(c, FR_NOTIFY_GENERIC, "del", key);
        fri_signal_modified(c, c->db, key->ptr, key->len);
    }
    fri_reply_ll(c, deleted);
}

typedef enum zrange_type { ZRANGE_AUTO, ZRANGE_RANK, ZRANGE_SCORE, ZRANGE_LEX } zrange_type;

/* ZREMRANGEBYRANK / BYSCORE / BYLEX key min max: the range is parsed before the key is
 * looked up, so a bad range beats WRONGTYPE. */
static void zremrange_generic(fr_client *c, zrange_type type)
{
    const fri_arg *key = &c->argv[1];
    long long start = 0, end = 0;
    fri_zrangespec range;
    fri_zlexspec lex;

    if (type == ZRANGE_RANK) {
        if (fri_get_ll_or_reply(c, &c->argv[2], &start, NULL) < 0 ||
            fri_get_ll_or_reply(c, &c->argv[3], &end, NULL) < 0)
            return;
    } else if (type == ZRANGE_SCORE) {
        if (parse_range(c->srv, &c->argv[2], &c->argv[3], &range) < 0) {
            fri_reply_error(c, ZSET_ERR_NOT_FLOAT_RANGE);
            return;
        }
    } else {
        if (parse_lex_range(&c->argv[2], &c->argv[3], &lex) < 0) {
            fri_reply_error(c, ZSET_ERR_NOT_LEX_RANGE);
            return;
        }
    }

    fri_obj *o = zset_for_removal(c, key);
    if (!o) return;
    fri_zset *z = o->ptr;
    size_t deleted = 0;

    if (type == ZRANGE_RANK) {
        if (!rank_range((long long)fri_zset_size(z), &start, &end)) {
            fri_reply_ll(c, 0);
            return;
        }
        deleted = zset_delete_ranks(z, (size_t)start + 1, (size_t)end + 1);
    } else {
        /* From the first member in range, every following one while it is in range. */
        fri_zsl_node *n = type == ZRANGE_SCORE ? fri_zsl_first_in_range(z->zsl, &range)
                                               : lex_first(z, &lex);
        if (n) {
            size_t first = zset_rank_of(z, n), count = 0;
            while (n && (type == ZRANGE_SCORE ? fri_zsl_value_lte_max(n->score, &range)
                                              : fri_zsl_lex_lte_max(n->ele, n->len, &lex))) {
                count++;
                n = n->level[0].forward;
            }
            deleted = zset_delete_ranks(z, first, first + count - 1);
        }
    }

    if (deleted) {
        static const char *const events[] = {
            [ZRANGE_RANK] = "zremrangebyrank",
            [ZRANGE_SCORE] = "zremrangebyscore",
            [ZRANGE_LEX] = "zremrangebylex",
        };
        int emptied = fri_zset_size(z) == 0;
        fri_delete_if_empty(c, key, o);
        fri_signal_modified(c, c->db, key->ptr, key->len);
        fri_notify_key(c, FR_NOTIFY_ZSET, events[type], key);
        if (emptied) fri_notify_key(c, FR_NOTIFY_GENERIC, "del", key);
    }
    fri_reply_ll(c, (long long)deleted);
}

static void zremrangebyrank_command(fr_client *c) { zremrange_generic(c, ZRANGE_RANK); }
static void zremrangebyscore_command(fr_client *c) { zremrange_generic(c, ZRANGE_SCORE); }
static void zremrangebylex_command(fr_client *c) { zremrange_generic(c, ZRANGE_LEX); }

/* ----- ZRANGE and its older forms ------------------------------------------------------- */

/* The common engine of ZRANGE, ZRANGESTORE, ZREVRANGE, Z[REV]RANGEBYSCORE and
 * Z[REV]RANGEBYLEX, as Redis 7.0 shares it: argv[argc_start] is the source key, then min
 * and max, then options.  type and reverse say what the command name fixed already
 * (ZRANGE_AUTO / reverse < 0: the options may choose).  Options are all parsed and
 * checked before the key is looked up. */
static void zrange_generic(fr_client *c, int argc_start, int store, zrange_type type,
                           int reverse)
{
    const fri_arg *key = &c->argv[argc_start];
    int minidx = argc_start + 1, maxidx = argc_start + 2;
    int withscores = 0;
    long long offset = 0, limit = -1;

    for (int j = argc_start + 3; j < c->argc; j++) {
        int leftargs = c->argc - j - 1;
        const fri_arg *a = &c->argv[j];
        if (!store && fri_arg_is(a, "withscores")) {
            withscores = 1;
        } else if (fri_arg_is(a, "limit") && leftargs >= 2) {
            if (fri_get_ll_or_reply(c, &c->argv[j + 1], &offset, NULL) < 0 ||
                fri_get_ll_or_reply(c, &c->argv[j + 2], &limit, NULL) < 0)
                return;
            j += 2;
        } else if (reverse < 0 && fri_arg_is(a, "rev")) {
            reverse = 1;
        } else if (type == ZRANGE_AUTO && fri_arg_is(a, "bylex")) {
            type = ZRANGE_LEX;
        } else if (type == ZRANGE_AUTO && fri_arg_is(a, "byscore")) {
            type = ZRANGE_SCORE;
        } else {
            fri_reply_error(c, FRI_ERR_SYNTAX);
            return;
        }
    }
    if (reverse < 0) reverse = 0;
    if (type == ZRANGE_AUTO) type = ZRANGE_RANK;

    if (limit != -1 && type == ZRANGE_RANK) {
        fri_reply_error(c, "ERR syntax error, LIMIT is only supported in combination with "
                           "either BYSCORE or BYLEX");
        return;
    }
    if (withscores && type == ZRANGE_LEX) {
        fri_reply_error(c, "ERR syntax error, WITHSCORES not supported in combination with "
                           "BYLEX");
        return;
    }
    /* A reversed score or lex range is written max first. */
    if (reverse && type != ZRANGE_RANK) {
        int tmp = minidx;
        minidx = maxidx;
        maxidx = tmp;
    }

    long long start = 0, end = 0;
    fri_zrangespec range;
    fri_zlexspec lex;
    switch (type) {
    case ZRANGE_AUTO:
    case ZRANGE_RANK:
        if (fri_get_ll_or_reply(c, &c->argv[minidx], &start, NULL) < 0 ||
            fri_get_ll_or_reply(c, &c->argv[maxidx], &end, NULL) < 0)
            return;
        break;
    case ZRANGE_SCORE:
        if (parse_range(c->srv, &c->argv[minidx], &c->argv[maxidx], &range) < 0) {
            fri_reply_error(c, ZSET_ERR_NOT_FLOAT_RANGE);
            return;
        }
        break;
    case ZRANGE_LEX:
        if (parse_lex_range(&c->argv[minidx], &c->argv[maxidx], &lex) < 0) {
            fri_reply_error(c, ZSET_ERR_NOT_LEX_RANGE);
            return;
        }
        break;
    }

    zrange_result r;
    memset(&r, 0, sizeof(r));
    r.c = c;
    r.withscores = withscores;
    r.dst = store ? &c->argv[1] : NULL;

    int wrongtype;
    fri_obj *o = fri_lookup_typed(c, key, FRI_ZSET, 0, &wrongtype);
    if (wrongtype) return;
    if (!o) {
        if (store) {
            result_begin(&r, -1);
            result_end(&r);
        } else {
            fri_reply_empty_array(c);
        }
        return;
    }
    fri_zset *z = o->ptr;
    switch (type) {
    case ZRANGE_AUTO:
    case ZRANGE_RANK: range_by_rank(&r, z, start, end, reverse); break;
    case ZRANGE_SCORE: range_by_score(&r, z, &range, reverse, offset, limit); break;
    case ZRANGE_LEX: range_by_lex(&r, z, &lex, reverse, offset, limit); break;
    }
}

static void zrange_command(fr_client *c) { zrange_generic(c, 1, 0, ZRANGE_AUTO, -1); }
static void zrangestore_command(fr_client *c) { zrange_generic(c, 2, 1, ZRANGE_AUTO, -1); }
static void zrevrange_command(fr_client *c) { zrange_generic(c, 1, 0, ZRANGE_RANK, 1); }
static void zrangebyscore_command(fr_client *c) { zrange_generic(c, 1, 0, ZRANGE_SCORE, 0); }
static void zrevrangebyscore_command(fr_client *c) { zrange_generic(c, 1, 0, ZRANGE_SCORE, 1); }
static void zrangebylex_command(fr_client *c) { zrange_generic(c, 1, 0, ZRANGE_LEX, 0); }
static void zrevrangebylex_command(fr_client *c) { zrange_generic(c, 1, 0, ZRANGE_LEX, 1); }

/* ----- Reading single members and counts ------------------------------------------------ */

/* Looks up a sorted set for reading; replies WRONGTYPE, or missing_reply (if not NULL)
 * when the key does not exist.  NULL when there is nothing more to do. */
static fri_zset *read_zset(fr_client *c, const fri_arg *key, void (*missing_reply)(fr_client *))
{
    int wrongtype;
    fri_obj *o = fri_lookup_typed(c, key, FRI_ZSET, 0, &wrongtype);
    if (wrongtype) return NULL;
    if (!o) {
        if (missing_reply) missing_reply(c);
        return NULL;
    }
    return o->ptr;
}

static void reply_zero(fr_client *c) { fri_reply_ll(c, 0); }

static void zcard_command(fr_client *c)
{
    fri_zset *z = read_zset(c, &c->argv[1], reply_zero);
    if (z) fri_reply_ll(c, (long long)fri_zset_size(z));
}

static void zscore_command(fr_client *c)
{
    fri_zset *z = read_zset(c, &c->argv[1], fri_reply_nil);
    if (!z) return;
    fri_zsl_node *n = zset_find(z, c->argv[2].ptr, c->argv[2].len);
    if (n)
        fri_reply_double(c, n->score);
    else
        fri_reply_nil(c);
}

/* ZMSCORE key member [member ...]: a missing key answers a nil per member. */
static void zmscore_command(fr_client *c)
{
    int wrongtype;
    fri_obj *o = fri_lookup_typed(c, &c->argv[1], FRI_ZSET, 0, &wrongtype);
    if (wrongtype) return;
    fri_zset *z = o ? o->ptr : NULL;
    fri_reply_array_len(c, c->argc - 2);
    for (int j = 2; j < c->argc; j++) {
        fri_zsl_node *n = z ? zset_find(z, c->argv[j].ptr, c->argv[j].len) : NULL;
        if (n)
            fri_reply_double(c, n->score);
        else
            fri_reply_nil(c);
    }
}

/* ZRANK / ZREVRANK key member: the 0-based rank, or nil. */
static void zrank_generic(fr_client *c, int reverse)
{
    fri_zset *z = read_zset(c, &c->argv[1], fri_reply_nil);
    if (!z) return;
    fri_zsl_node *n = zset_find(z, c->argv[2].ptr, c->argv[2].len);
    if (!n) {
        fri_reply_nil(c);
        return;
    }
    size_t rank = zset_rank_of(z, n);
    fri_reply_ll(c, reverse ? (long long)(fri_zset_size(z) - rank) : (long long)rank - 1);
}

static void zrank_command(fr_client *c) { zrank_generic(c, 0); }
static void zrevrank_command(fr_client *c) { zrank_generic(c, 1); }

/* ZCOUNT key min max: the range is parsed first, so a bad one beats WRONGTYPE. */
static void zcount_command(fr_client *c)
{
    fri_zrangespec range;
    if (parse_range(c->srv, &c->argv[2], &c->argv[3], &range) < 0) {
        fri_reply_error(c, ZSET_ERR_NOT_FLOAT_RANGE);
        return;
    }
    fri_zset *z = read_zset(c, &c->argv[1], reply_zero);
    if (!z) return;
    long long count = 0;
    fri_zsl_node *first = fri_zsl_first_in_range(z->zsl, &range);
    if (first) {
        fri_zsl_node *last = fri_zsl_last_in_range(z->zsl, &range);
        count = (long long)zset_rank_of(z, last) - (long long)zset_rank_of(z, first) + 1;
    }
    fri_reply_ll(c, count);
}

/* ZLEXCOUNT key min max: a listpack counts on from the first member while members stay
 * before max; a skiplist subtracts the ranks of the first and last in range. */
static void zlexcount_command(fr_client *c)
{
    fri_zlexspec lex;
    if (parse_lex_range(&c->argv[2], &c->argv[3], &lex) < 0) {
        fri_reply_error(c, ZSET_ERR_NOT_LEX_RANGE);
        return;
    }
    fri_zset *z = read_zset(c, &c->argv[1], reply_zero);
    if (!z) return;
    long long count = 0;
    fri_zsl_node *n = lex_first(z, &lex);
    if (n && z->listpack) {
        for (; n && fri_zsl_lex_lte_max(n->ele, n->len, &lex); n = n->level[0].forward)
            count++;
    } else if (n) {
        long long len = (long long)fri_zset_size(z);
        count = len - ((long long)zset_rank_of(z, n) - 1);
        fri_zsl_node *last = lex_last(z, &lex);
        if (last) count -= len - (long long)zset_rank_of(z, last);
    }
    fri_reply_ll(c, count);
}

/* ----- ZPOPMIN, ZPOPMAX ----------------------------------------------------------------- */

/* After a pop of at least one member from key: the zpopmin/zpopmax event, the key gone
 * with its last member ("del"), WATCH told (genericZpopCommand's order). */
static void zpop_done(fr_client *c, const fri_arg *key, fri_obj *o, int max)
{
    fri_notify_key(c, FR_NOTIFY_ZSET, max ? "zpopmax" : "zpopmin", key);
    int emptied = fri_zset_size(o->ptr) == 0;
    fri_delete_if_empty(c, key, o);
    if (emptied) fri_notify_key(c, FR_NOTIFY_GENERIC, "del", key);
    fri_signal_modified(c, c->db, key->ptr, key->len);
}

/* ZPOPMIN / ZPOPMAX key [count]: member, score pairs from the low (high) end.  The count
 * is checked first, then the key's type, then a count of 0 answers an empty array. */
static void zpop_generic(fr_client *c, int max)
{
    const fri_arg *key = &c->argv[1];
    if (c->argc > 3) {
        fri_reply_error(c, FRI_ERR_SYNTAX);
        return;
    }
    long long count = 1;
    if (c->argc == 3 &&
        fri_get_positive_ll_or_reply(c, &c->argv[2], &count,
                                     "ERR value is out of range, must be positive") < 0)
        return;

    int wrongtype;
    fri_obj *o = fri_lookup_typed(c, key, FRI_ZSET, 1, &wrongtype);
    if (wrongtype) return;
    if (!o || count == 0) {
        fri_reply_empty_array(c);
        return;
    }
    fri_zset *z = o->ptr;
    long long size = (long long)fri_zset_size(z);
    long long n = count > size ? size : count;
    fri_reply_array_len(c, (long)(n * 2));
    for (long long i = 0; i < n; i++) zset_pop_reply(c, z, max, 0);
    zpop_done(c, key, o, max);
}

static void zpopmin_command(fr_client *c) { zpop_generic(c, 0); }
static void zpopmax_command(fr_client *c) { zpop_generic(c, 1); }

/* ----- ZUNION, ZINTER, ZDIFF and their STORE forms, ZINTERCARD ---------------------------- */

typedef enum zsetop { ZSETOP_UNION, ZSETOP_INTER, ZSETOP_DIFF } zsetop;

typedef enum zaggr { ZAGGR_SUM, ZAGGR_MIN, ZAGGR_MAX } zaggr;

/* One input of a set operation. */
typedef struct zsetop_src {
    fri_obj *obj;   /* the key's value (a sorted set or a set), NULL when missing */
    fri_zset *z;    /* the members and scores to use: obj's set, or a copy of a plain set */
    int owned;      /* z is that copy, freed at the end */
    double weight;  /* WEIGHTS, 1 by default */
    size_t card;    /* members, for ordering the inputs smallest first */
} zsetop_src;

/* Folds val into *target as AGGREGATE says; a SUM that makes NaN (inf + -inf) gives 0,
 * and MIN/MAX keep the target when val is NaN, as Redis's comparisons do. */
static void zaggregate(double *target, double val, zaggr aggr)
{
    if (aggr == ZAGGR_SUM) {
        *target = *target + val;
        if (isnan(*target)) *target = 0.0;
    } else if (aggr == ZAGGR_MIN) {
        *target = val < *target ? val : *target;
    } else {
        *target = val > *target ? val : *target;
    }
}

/* fri_set_foreach's callback: a plain set's member enters with score 1, as Redis's set
 * operations read sets. */
static void copy_set_member(const char *p, size_t len, void *ctx)
{
    zsetop_src *src = ctx;
    if (src->z && !zset_insert(src->z, 1.0, p, len)) {
        fri_zset_free(src->z);
        src->z = NULL;
    }
}

/* Sorts the inputs by cardinality, smallest first, keeping the order of equals (Redis's
 * qsort is glibc's merge sort there, a stable one: the order decides how a SUM rounds). */
static void sort_sources(zsetop_src *src, long n)
{
    for (long i = 1; i < n; i++) {
        zsetop_src tmp = src[i];
        long j = i - 1;
        while (j >= 0 && src[j].card > tmp.card) {
            src[j + 1] = src[j];
            j--;
        }
        src[j + 1] = tmp;
    }
}

/* Converts a finished result the way Redis stores it: a set small enough for a listpack
 * becomes one (and loses its negative zeros). */
static void zset_settle_encoding(fri_zset *z)
{
    if ((long long)fri_zset_size(z) > z->tun->zset_max_listpack_entries) return;
    for (fri_zsl_node *n = fri_zsl_first(z->zsl); n; n = n->level[0].forward)
        if ((long long)n->len > z->tun->zset_max_listpack_value) return;
    for (fri_zsl_node *n = fri_zsl_first(z->zsl); n; n = n->level[0].forward)
        if (n->score == 0) n->score = 0.0;
    z->listpack = 1;
}

/* Replies every member of z (with scores when asked) in order. */
static void reply_zset(fr_client *c, fri_zset *z, int withscores)
{
    size_t n = fri_zset_size(z);
    fri_reply_array_len(c, (long)(withscores ? n * 2 : n));
    for (fri_zsl_node *node = fri_zsl_first(z->zsl); node; node = node->level[0].forward) {
        fri_reply_bulk(c, node->ele, node->len);
        if (withscores) fri_reply_double(c, node->score);
    }
}

/* The engine of ZUNION[STORE], ZINTER[STORE], ZDIFF[STORE] and ZINTERCARD, in Redis's
 * order of checks: numkeys, that many keys present, every key's type (sets count as
 * sorted sets with scores of 1), then WEIGHTS / AGGREGATE / WITHSCORES / LIMIT as the
 * command allows them.  dst is the STORE destination or NULL. */
static void zsetop_generic(fr_client *c, const fri_arg *dst, int numkeys_idx, zsetop op,
                           int cardinality_only)
{
    long long setnum;
    if (fri_get_ll_or_reply(c, &c->argv[numkeys_idx], &setnum, NULL) < 0) return;
    if (setnum < 1) {
        fri_reply_errorf(c, "ERR at least 1 input key is needed for '%s' command", c->cmd->name);
        return;
    }
    if (setnum > c->argc - (numkeys_idx + 1)) {
        fri_reply_error(c, FRI_ERR_SYNTAX);
        return;
    }

    zsetop_src *src = fri_calloc((size_t)setnum, sizeof(*src));
    if (!src) {
        fri_reply_error(c, FRI_ERR_OOM);
        return;
    }
    fri_zset *result = NULL;
    fri_dict *acc = NULL;
    int i, j;
    for (i = 0, j = numkeys_idx + 1; i < setnum; i++, j++) {
        fri_obj *o = fri_lookup_read(c, &c->argv[j]);
        if (o && o->type != FRI_ZSET && o->type != FRI_SET) {
            fri_reply_error(c, FRI_ERR_WRONGTYPE);
            goto cleanup;
        }
        src[i].obj = o;
        src[i].weight = 1.0;
    }

    zaggr aggr = ZAGGR_SUM;
    int withscores = 0;
    long long limit = 0; /* ZINTERCARD: stop counting there, 0 for no limit */
    int remaining = c->argc - j;
    while (remaining) {
        const fri_arg *a = &c->argv[j];
        if (op != ZSETOP_DIFF && !cardinality_only && remaining >= setnum + 1 &&
            fri_arg_is(a, "weights")) {
            j++;
            remaining--;
            for (i = 0; i < setnum; i++, j++, remaining--) {
                if (fri_get_double_or_reply(c, &c->argv[j], &src[i].weight,
                                            "ERR weight value is not a float") < 0)
                    goto cleanup;
            }
        } else if (op != ZSETOP_DIFF && !cardinality_only && remaining >= 2 &&
                   fri_arg_is(a, "aggregate")) {
            const fri_arg *v = &c->argv[j + 1];
            if (fri_arg_is(v, "sum")) aggr = ZAGGR_SUM;
            else if (fri_arg_is(v, "min")) aggr = ZAGGR_MIN;
            else if (fri_arg_is(v, "max")) aggr = ZAGGR_MAX;
            else {
                fri_reply_error(c, FRI_ERR_SYNTAX);
                goto cleanup;
            }
            j += 2;
            remaining -= 2;
        } else if (!dst && !cardinality_only && fri_arg_is(a, "withscores")) {
            withscores = 1;
            j++;
            remaining--;
        } else if (cardinality_only && remaining >= 2 && fri_arg_is(a, "limit")) {
            if (fri_get_positive_ll_or_reply(c, &c->argv[j + 1], &limit,
                                             "ERR LIMIT can't be negative") < 0)
                goto cleanup;
            j += 2;
            remaining -= 2;
        } else {
            fri_reply_error(c, FRI_ERR_SYNTAX);
            goto cleanup;
        }
    }

    /* Plain sets become sorted sets of score 1 for the computation. */
    for (i = 0; i < setnum; i++) {
        fri_obj *o = src[i].obj;
        if (!o) continue;
        if (o->type == FRI_ZSET) {
            src[i].z = o->ptr;
        } else {
            src[i].z = zset_new(0, &c->srv->tun);
            src[i].owned = 1;
            fri_set_foreach(o->ptr, copy_set_member, &src[i]);
            if (!src[i].z) {
                fri_reply_error(c, FRI_ERR_OOM);
                goto cleanup;
            }
        }
        src[i].card = fri_zset_size(src[i].z);
    }
    if (op != ZSETOP_DIFF) sort_sources(src, (long)setnum);

    result = zset_new(0, &c->srv->tun);
    if (!result) {
        fri_reply_error(c, FRI_ERR_OOM);
        goto cleanup;
    }
    long long cardinality = 0;
    int oom = 0;

    if (op == ZSETOP_INTER) {
        /* Every member of the smallest input that all the others have too. */
        if (src[0].z) {
            for (fri_zsl_node *n = fri_zsl_first(src[0].z->zsl); n && !oom;
                 n = n->level[0].forward) {
                double score = src[0].weight * n->score;
                if (isnan(score)) score = 0;
                for (i = 1; i < setnum; i++) {
                    fri_zsl_node *m = zset_find(src[i].z, n->ele, n->len);
                    if (!m) break;
                    zaggregate(&score, m->score * src[i].weight, aggr);
                }
                if (i < setnum) continue;
                if (cardinality_only) {
                    cardinality++;
                    if (limit && cardinality >= limit) break;
                } else if (!zset_insert(result, score, n->ele, n->len)) {
                    oom = 1;
                }
            }
        }
    } else if (op == ZSETOP_UNION) {
        /* Accumulate member -> score over the inputs in order, then sort once. */
        acc = fri_dict_new();
        if (!acc) oom = 1;
        for (i = 0; i < setnum && !oom; i++) {
            if (!src[i].z) continue;
            for (fri_zsl_node *n = fri_zsl_first(src[i].z->zsl); n; n = n->level[0].forward) {
                double score = src[i].weight * n->score;
                if (isnan(score)) score = 0;
                int created;
                fri_dent *e = fri_dict_add(acc, n->ele, n->len, &created);
                if (!e) {
                    oom = 1;
                    break;
                }
                if (created)
                    e->v.d = score;
                else
                    zaggregate(&e->v.d, score, aggr);
            }
        }
        size_t slots = oom ? 0 : fri_dict_slots(acc);
        for (size_t k = 0; k < slots && !oom; k++) {
            fri_dent *e = fri_dict_slot(acc, k);
            if (e && !zset_insert(result, e->v.d, e->key->buf, e->key->len)) oom = 1;
        }
    } else {
        /* The first input's members that no other input has, with their scores. */
        if (src[0].z) {
            for (fri_zsl_node *n = fri_zsl_first(src[0].z->zsl); n && !oom;
                 n = n->level[0].forward) {
                for (i = 1; i < setnum; i++)
                    if (src[i].z && zset_find(src[i].z, n->ele, n->len)) break;
                if (i < setnum) continue;
                if (!zset_insert(result, n->score, n->ele, n->len)) oom = 1;
            }
        }
    }
    if (oom) {
        fri_reply_error(c, FRI_ERR_OOM);
        goto cleanup;
    }

    if (dst) {
        if (fri_zset_size(result)) {
            zset_settle_encoding(result);
            fri_obj *o = fri_obj_new(FRI_ZSET, result);
            if (!o) {
                fri_reply_error(c, FRI_ERR_OOM);
                goto cleanup;
            }
            long long n = (long long)fri_zset_size(result);
            result = NULL; /* the keyspace owns it now */
            fri_lookup_write(c, dst); /* an expired destination goes first, as in setKey */
            fri_db_set(c->db, dst->ptr, dst->len, o, 0);
            fri_signal_modified(c, c->db, dst->ptr, dst->len);
            fri_reply_ll(c, n);
            fri_notify_key(c, FR_NOTIFY_ZSET,
                           op == ZSETOP_UNION   ? "zunionstore"
                           : op == ZSETOP_INTER ? "zinterstore"
                                                : "zdiffstore",
                           dst);
        } else {
            fri_reply_ll(c, 0);
            if (fri_lookup_write(c, dst) && fri_db_delete(c->db, dst->ptr, dst->len)) {
                fri_signal_modified(c, c->db, dst->ptr, dst->len);
                fri_notify_key(c, FR_NOTIFY_GENERIC, "del", dst);
            }
        }
    } else if (cardinality_only) {
        fri_reply_ll(c, cardinality);
    } else {
        reply_zset(c, result, withscores);
    }

cleanup:
    for (i = 0; i < setnum; i++)
        if (src[i].owned) fri_zset_free(src[i].z);
    fri_free(src);
    fri_zset_free(result);
    fri_dict_free(acc, NULL);
}

static void zunionstore_command(fr_client *c) { zsetop_generic(c, &c->argv[1], 2, ZSETOP_UNION, 0); }
static void zinterstore_command(fr_client *c) { zsetop_generic(c, &c->argv[1], 2, ZSETOP_INTER, 0); }
static void zdiffstore_command(fr_client *c) { zsetop_generic(c, &c->argv[1], 2, ZSETOP_DIFF, 0); }
static void zunion_command(fr_client *c) { zsetop_generic(c, NULL, 1, ZSETOP_UNION, 0); }
static void zinter_command(fr_client *c) { zsetop_generic(c, NULL, 1, ZSETOP_INTER, 0); }
static void zdiff_command(fr_client *c) { zsetop_generic(c, NULL, 1, ZSETOP_DIFF, 0); }
static void zintercard_command(fr_client *c) { zsetop_generic(c, NULL, 1, ZSETOP_INTER, 1); }

static int zstoreKeys(int argc, const fri_arg *argv, int *keys, int max)
{
    return fri_numkeys_keys(argc, argv, 2, 1, keys, max);
}

static int znumkeysKeys(int argc, const fri_arg *argv, int *keys, int max)
{
    return fri_numkeys_keys(argc, argv, 1, 0, keys, max);
}

static int bzmpopKeys(int argc, const fri_arg *argv, int *keys, int max)
{
    return fri_numkeys_keys(argc, argv, 2, 0, keys, max);
}

/* ----- ZMPOP and the blocking pops ------------------------------------------------------- */

/* How a pop answers: ZPOPMIN's flat pairs, BZPOPMIN's [key, member, score], or ZMPOP's
 * [key, [[member, score], ...]]. */
typedef enum zpop_form { ZPOP_FLAT, ZPOP_WITH_KEY, ZPOP_NESTED } zpop_form;

/* Pops up to count members from the first of keys[0..numkeys) that exists (a key of
 * another type met first answers WRONGTYPE).  Nothing to pop: *-1, the timeout reply a
 * blocking pop gives when it cannot block (the fake never blocks, as inside MULTI). */
static void zpop_from_keys(fr_client *c, const fri_arg *keys, long long numkeys, int max,
                           long long count, zpop_form form)
{
    for (long long k = 0; k < numkeys; k++) {
        const fri_arg *key = &keys[k];
        int wrongtype;
        fri_obj *o = fri_lookup_typed(c, key, FRI_ZSET, 1, &wrongtype);
        if (wrongtype) return;
        if (!o) continue;
        fri_zset *z = o->ptr;
        long long size = (long long)fri_zset_size(z);
        long long n = count > size ? size : count;
        if (form == ZPOP_NESTED) {
            fri_reply_array_len(c, 2);
            fri_reply_bulk(c, key->ptr, key->len);
            fri_reply_array_len(c, (long)n);
        } else {
            fri_reply_array_len(c, 3);
            fri_reply_bulk(c, key->ptr, key->len);
        }
        for (long long i = 0; i < n; i++) zset_pop_reply(c, z, max, form == ZPOP_NESTED);
        zpop_done(c, key, o, max);
        /* propagated as ZPOPMIN/ZPOPMAX key (BZPOP*) or key count (ZMPOP, BZMPOP) */
        char digits[24];
        fri_arg pv[3] = {{max ? "ZPOPMAX" : "ZPOPMIN", 7}, *key,
                         {digits, fri_ll2string(digits, sizeof(digits), n)}};
        fri_propagate_rewrite(c, form == ZPOP_NESTED ? 3 : 2, pv);
        return;
    }
    fri_reply_null_array(c);
}

/* BZPOPMIN / BZPOPMAX key [key ...] timeout. */
static void bzpop_generic(fr_client *c, int max)
{
    if (fri_get_timeout_or_reply(c, &c->argv[c->argc - 1], NULL) < 0) return;
    zpop_from_keys(c, &c->argv[1], c->argc - 2, max, 1, ZPOP_WITH_KEY);
}

static void bzpopmin_command(fr_client *c) { bzpop_generic(c, 0); }
static void bzpopmax_command(fr_client *c) { bzpop_generic(c, 1); }

/* ZMPOP numkeys key [key ...] MIN|MAX [COUNT count], and BZMPOP with a timeout before
 * numkeys: numkeys, MIN/MAX, COUNT (once), then the timeout. */
static void zmpop_generic(fr_client *c, int numkeys_idx, int blocking)
{
    long long numkeys, count;
    if (fri_mpop_numkeys_or_reply(c, numkeys_idx, &numkeys) < 0) return;
    int where_idx = numkeys_idx + (int)numkeys + 1;
    int max;
    if (fri_arg_is(&c->argv[where_idx], "min")) max = 0;
    else if (fri_arg_is(&c->argv[where_idx], "max")) max = 1;
    else {
        fri_reply_error(c, FRI_ERR_SYNTAX);
        return;
    }
    if (fri_mpop_count_or_reply(c, where_idx + 1, blocking, &count) < 0) return;
    zpop_from_keys(c, &c->argv[numkeys_idx + 1], numkeys, max, count, ZPOP_NESTED);
}

static void zmpop_command(fr_client *c) { zmpop_generic(c, 1, 0); }
static void bzmpop_command(fr_client *c) { zmpop_generic(c, 2, 1); }

/* ----- ZRANDMEMBER ------------------------------------------------------------------------ */

/* A uniformly random 1-based rank in a set of size members. */
static size_t random_rank(fr_client *c, size_t size)
{
    return (size_t)(fri_random(c->srv) % size) + 1;
}

/* ZRANDMEMBER key [count [WITHSCORES]], with Redis's cases: no count answers one member
 * (nil when missing); a negative count answers -count members that may repeat; a count
 * at least the size answers the whole set from the highest; a smaller one, count distinct
 * members (here in rank order).  The choices come from the server's seeded generator, so
 * they differ from a real server's but repeat from one run to the next. */
static void zrandmember_command(fr_client *c)
{
    long long l = 0;
    int withscores = 0;
    if (c->argc >= 3) {
        if (fri_get_range_ll_or_reply(c, &c->argv[2], -LLONG_MAX, LLONG_MAX, &l, NULL) < 0)
            return;
        if (c->argc > 4 || (c->argc == 4 && !fri_arg_is(&c->argv[3], "withscores"))) {
            fri_reply_error(c, FRI_ERR_SYNTAX);
            return;
        }
        if (c->argc == 4) {
            withscores = 1;
            if (l < -LLONG_MAX / 2 || l > LLONG_MAX / 2) {
                fri_reply_error(c, "ERR value is out of range");
                return;
            }
        }
    } else {
        fri_zset *z = read_zset(c, &c->argv[1], fri_reply_nil);
        if (!z) return;
        fri_zsl_node *n = fri_zsl_by_rank(z->zsl, random_rank(c, fri_zset_size(z)));
        fri_reply_bulk(c, n->ele, n->len);
        return;
    }

    fri_zset *z = read_zset(c, &c->argv[1], fri_reply_empty_array);
    if (!z) return;
    size_t size = fri_zset_size(z);
    int uniq;
    unsigned long long count;
    if (fri_random_count_or_reply(c, l, &count, &uniq) < 0) return;
    if (!uniq || count == 1) {
        fri_reply_array_len(c, (long)(withscores ? count * 2 : count));
        while (count--) {
            fri_zsl_node *n = fri_zsl_by_rank(z->zsl, random_rank(c, size));
            fri_reply_bulk(c, n->ele, n->len);
            if (withscores) fri_reply_double(c, n->score);
        }
        return;
    }
    if (count >= size) {
        /* The whole set, from the highest: Redis's set-operation iterator runs backwards. */
        fri_reply_array_len(c, (long)(withscores ? size * 2 : size));
        for (fri_zsl_node *n = fri_zsl_last(z->zsl); n; n = n->backward) {
            fri_reply_bulk(c, n->ele, n->len);
            if (withscores) fri_reply_double(c, n->score);
        }
        return;
    }
    /* count distinct ranks: mark them in a bitmap, drawing until there are enough
     * (count < size, and when count is over half the size the unchosen are drawn
     * instead). */
    unsigned char *chosen = fri_calloc(size, 1);
    if (!chosen) {
        fri_reply_error(c, FRI_ERR_OOM);
        return;
    }
    int invert = count * 2 > size;
    size_t want = invert ? size - (size_t)count : (size_t)count, have = 0;
    while (have < want) {
        size_t r = random_rank(c, size) - 1;
        if (!chosen[r]) {
            chosen[r] = 1;
            have++;
        }
    }
    fri_reply_array_len(c, (long)(withscores ? count * 2 : count));
    size_t r = 0;
    for (fri_zsl_node *n = fri_zsl_first(z->zsl); n; n = n->level[0].forward, r++) {
        if (chosen[r] == invert) continue;
        fri_reply_bulk(c, n->ele, n->len);
        if (withscores) fri_reply_double(c, n->score);
    }
    fri_free(chosen);
}

/* ----- ZSCAN ------------------------------------------------------------------------------- */

/* A score as ZSCAN shows it: a listpack stores an integral score within +-2^62 as an
 * integer and ZSCAN prints that integer (1e18 shows as 1000000000000000000, where ZSCORE
 * says 1e+18); everything else prints as in any reply. */
static void reply_scan_score(fr_client *c, const fri_zset *z, double score)
{
    if (z->listpack && score >= -(double)(LLONG_MAX / 2) && score <= (double)(LLONG_MAX / 2) &&
        score == (double)(long long)score) {
        fri_reply_bulk_ll(c, (long long)score);
        return;
    }
    fri_reply_double(c, score);
}

/* A ZSCAN page's member (ctx: its sorted set) and its score. */
static long zscan_entry(fr_client *c, const fri_dent *e, const void *ctx)
{
    const fri_zsl_node *node = e->v.ptr;
    fri_reply_bulk(c, node->ele, node->len);
    reply_scan_score(c, ctx, node->score);
    return 2;
}

/* ZSCAN key cursor [MATCH pattern] [COUNT count].  A set Redis would hold as a listpack
 * answers whole, in order, with cursor 0, whatever the cursor and COUNT, as Redis does.
 * A bigger one is scanned COUNT members at a time in the dict's insertion order with the
 * member's sequence number as the cursor (see keys.c's SCAN): every member present for
 * the whole scan comes exactly once, but pages and cursors differ from Redis's. */
static void zscan_command(fr_client *c)
{
    fri_scan_args a;
    fri_zset *z = fri_scan_key_or_reply(c, FRI_ZSET, &a);
    if (!z) return;
    if (z->listpack) {
        fri_reply_scan_cursor(c, 0);
        size_t handle = fri_reply_deferred_len(c);
        long n = 0;
        for (fri_zsl_node *node = fri_zsl_first(z->zsl); node; node = node->level[0].forward) {
            if (!fri_scan_match(&a, node->ele, node->len)) continue;
            fri_reply_bulk(c, node->ele, node->len);
            reply_scan_score(c, z, node->score);
            n += 2;
        }
        fri_reply_set_deferred_len(c, handle, n);
        return;
    }

    /* The page's cursor comes before its members. */
    fri_dict *d = z->dict;
    size_t first;
    uint64_t next;
    size_t end = fri_dict_page(d, a.cursor, a.count, &first, &next);
    fri_reply_scan_dict(c, &a, d, first, end, next, zscan_entry, z);
}

/* ----- The command table ------------------------------------------------------------------ */

#include "cmd_flags.h"

/* Arity, flags and key positions as Redis 7.0's COMMAND INFO gives them. */
const fri_command fri_zset_commands[] = {
    {"zadd", zadd_command, -4, W | M | F, "sorted-set", 1, 1, 1, NULL, NULL},
    {"zincrby", zincrby_command, 4, W | M | F, "sorted-set", 1, 1, 1, NULL, NULL},
    {"zrem", zrem_command, -3, W | F, "sorted-set", 1, 1, 1, NULL, NULL},
    {"zremrangebyscore", zremrangebyscore_command, 4, W, "sorted-set", 1, 1, 1, NULL, NULL},
    {"zremrangebyrank", zremrangebyrank_command, 4, W, "sorted-set", 1, 1, 1, NULL, NULL},
    {"zremrangebylex", zremrangebylex_command, 4, W, "sorted-set", 1, 1, 1, NULL, NULL},
    {"zrange", zrange_command, -4, R, "sorted-set", 1, 1, 1, NULL, NULL},
    {"zrangestore", zrangestore_command, -5, W | M, "sorted-set", 1, 2, 1, NULL, NULL},
    {"zrangebyscore", zrangebyscore_command, -4, R, "sorted-set", 1, 1, 1, NULL, NULL},
    {"zrevrangebyscore", zrevrangebyscore_command, -4, R, "sorted-set", 1, 1, 1, NULL, NULL},
    {"zrangebylex", zrangebylex_command, -4, R, "sorted-set", 1, 1, 1, NULL, NULL},
    {"zrevrangebylex", zrevrangebylex_command, -4, R, "sorted-set", 1, 1, 1, NULL, NULL},
    {"zcount", zcount_command, 4, R | F, "sorted-set", 1, 1, 1, NULL, NULL},
    {"zlexcount", zlexcount_command, 4, R | F, "sorted-set", 1, 1, 1, NULL, NULL},
    {"zrevrange", zrevrange_command, -4, R, "sorted-set", 1, 1, 1, NULL, NULL},
    {"zcard", zcard_command, 2, R | F, "sorted-set", 1, 1, 1, NULL, NULL},
    {"zscore", zscore_command, 3, R | F, "sorted-set", 1, 1, 1, NULL, NULL},
    {"zmscore", zmscore_command, -3, R | F, "sorted-set", 1, 1, 1, NULL, NULL},
    {"zrank", zrank_command, 3, R | F, "sorted-set", 1, 1, 1, NULL, NULL},
    {"zrevrank", zrevrank_command, 3, R | F, "sorted-set", 1, 1, 1, NULL, NULL},
    {"zpopmin", zpopmin_command, -2, W | F, "sorted-set", 1, 1, 1, NULL, NULL},
    {"zpopmax", zpopmax_command, -2, W | F, "sorted-set", 1, 1, 1, NULL, NULL},
    {"bzpopmin", bzpopmin_command, -3, W | B | F, "sorted-set", 1, -2, 1, NULL, NULL},
    {"bzpopmax", bzpopmax_command, -3, W | B | F, "sorted-set", 1, -2, 1, NULL, NULL},
    {"zmpop", zmpop_command, -4, W, "sorted-set", 0, 0, 0, znumkeysKeys, NULL},
    {"bzmpop", bzmpop_command, -5, W | B, "sorted-set", 0, 0, 0, bzmpopKeys, NULL},
    {"zunionstore", zunionstore_command, -4, W | M, "sorted-set", 1, 1, 1, zstoreKeys, NULL},
    {"zinterstore", zinterstore_command, -4, W | M, "sorted-set", 1, 1, 1, zstoreKeys, NULL},
    {"zdiffstore", zdiffstore_command, -4, W | M, "sorted-set", 1, 1, 1, zstoreKeys, NULL},
    {"zunion", zunion_command, -3, R, "sorted-set", 0, 0, 0, znumkeysKeys, NULL},
    {"zinter", zinter_command, -3, R, "sorted-set", 0, 0, 0, znumkeysKeys, NULL},
    {"zdiff", zdiff_command, -3, R, "sorted-set", 0, 0, 0, znumkeysKeys, NULL},
    {"zintercard", zintercard_command, -3, R, "sorted-set", 0, 0, 0, znumkeysKeys, NULL},
    {"zrandmember", zrandmember_command, -2, R, "sorted-set", 1, 1, 1, NULL, NULL},
    {"zscan", zscan_command, -3, R, "sorted-set", 1, 1, 1, NULL, NULL},
    {0},
};

/* ----- RESTORE (rdb.c) ------------------------------------------------------------------- */

fri_zset *fri_zset_restore_new(int listpack, const fri_tunables *tun)
{
    return zset_new(listpack, tun);
}

int fri_zset_restore_add(fri_zset *z, double score, const char *p, size_t len)
{
    int created;
    fri_dent *e = fri_dict_add(z->dict, p, len, &created);
    if (!e) return -1;
    if (!created) return 0;
    if (z->listpack && score == 0) score = 0.0; /* a listpack keeps no negative zero */
    fri_zsl_node *n = fri_zsl_insert(z->zsl, score, p, len);
    if (!n) {
        fri_dict_delete(z->dict, p, len, NULL);
        return -1;
    }
    e->v.ptr = n;
    return 1;
}

/* ----- GEO (t_geo.c) ---------------------------------------------------------------------- */

int fri_zset_score(fri_zset *z, const char *p, size_t len, double *score)
{
    fri_zsl_node *n = zset_find(z, p, len);
    if (!n) return 0;
    *score = n->score;
    return 1;
}

fri_zsl *fri_zset_zsl(fri_zset *z) { return z->zsl; }
