/* t_list.c -- the list type: LPUSH, LPOP, LRANGE, LMOVE, the blocking pops and the rest of
 * Redis 7.0's list group.
 *
 * A list is a fri_obj of type FRI_LIST whose ptr is a fri_list: a ring buffer of fri_str*
 * whose capacity is a power of two, so both ends push and pop in O(1) and any index is
 * one mask away.  Redis keeps a quicklist of listpacks instead; nothing a client can see
 * depends on that (a list answers in its one true order), so the fake keeps the simplest
 * structure that is fast at both ends.
 *
 * As in Redis, a list is never empty in the keyspace: every command that removes elements
 * deletes the key when the last one goes.  Handlers check their arguments in Redis's
 * order (some parse numbers before looking the key up, some after), so that a command
 * with two faults answers the error the real server gives.
 *
 * The blocking commands' handlers never wait.  They answer at once with an element if
 * there is one, and otherwise with what Redis answers when they cannot be served: outside
 * a transaction Redis blocks and, when the timeout fires, answers a nil array (*-1) for
 * every blocking list command, BLMOVE and BRPOPLPUSH included; inside MULTI/EXEC it
 * refuses to block and runs the non-blocking path, where BLMOVE and BRPOPLPUSH answer a
 * nil bulk ($-1) as LMOVE does.  In-process that timeout reply comes at once, so a
 * timeout of 0 ("for ever") does not hang a test.  For a client with blocking on (a
 * server's connection), blocked.c turns that *-1 into a real block and, when a key
 * becomes ready, runs the command again on that key alone (BLPOP a b 0 woken by b runs
 * BLPOP b 0), which pops and moves exactly as Redis serves a blocked client.  The timeout
 * argument is validated exactly as Redis validates it.
 */
#include <limits.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "fr_int.h"

#define LIST_HEAD 0 /* the left end: LPUSH, LPOP, LEFT */
#define LIST_TAIL 1 /* the right end: RPUSH, RPOP, RIGHT */

/* The smallest ring allocated; shrinking stops there. */
#define LIST_MIN_CAP 8

#define LIST_ERR_RANK_ZERO                                                                  \
    "ERR RANK can't be zero: use 1 to start from the first match, 2 from the second ... "  \
    "or use negative to start from the end of the list"
#define LIST_ERR_COUNT_NEGATIVE "ERR COUNT can't be negative"
#define LIST_ERR_MAXLEN_NEGATIVE "ERR MAXLEN can't be negative"

struct fri_list {
    fri_str **slot; /* ring of cap pointers: element i is slot[(head + i) & (cap - 1)] */
    size_t cap;     /* 0 (nothing allocated yet) or a power of two */
    size_t head;    /* slot of element 0 */
    size_t len;     /* elements stored */
};

/* ----- The deque ---------------------------------------------------------------------- */

/* A new empty list, or NULL when out of memory. */
static fri_list *list_new(void) { return fri_calloc(1, sizeof(fri_list)); }

/* The slot of element i (i may be len, the slot one past the tail, when cap > len). */
static inline size_t list_pos(const fri_list *l, size_t i)
{
    return (l->head + i) & (l->cap - 1);
}

void fri_list_free(fri_list *l)
{
    if (!l) return;
    for (size_t i = 0; i < l->len; i++) fri_str_free(l->slot[list_pos(l, i)]);
    fri_free(l->slot);
    fri_free(l);
}

size_t fri_list_len(const fri_list *l) { return l->len; }

const fri_str *fri_list_at(const fri_list *l, size_t i)
{
    return i < l->len ? l->slot[list_pos(l, i)] : NULL;
}


/* Moves the elements into a ring of cap slots (cap >= len, a power of two), element 0 at
 * slot 0.  -1 when out of memory, and the list is left as it was. */
static int list_resize(fri_list *l, size_t cap)
{
    fri_str **n = fri_malloc(cap * sizeof(*n));
    if (!n) return -1;
    if (l->len) {
        /* At most two runs: from head to the end of the ring, then from slot 0. */
        size_t first = l->cap - l->head < l->len ? l->cap - l->head : l->len;
        memcpy(n, l->slot + l->head, first * sizeof(*n));
        memcpy(n + first, l->slot, (l->len - first) * sizeof(*n));
    }
    fri_free(l->slot);
    l->slot = n;
    l->cap = cap;
    l->head = 0;
    return 0;
}

/* Makes room for extra more elements, so that the pushes that follow cannot fail: a
 * command reserves first and changes the list only once nothing can go wrong.  0, or -1
 * when out of memory (list unchanged). */
static int list_reserve(fri_list *l, size_t extra)
{
    if (extra <= l->cap - l->len) return 0;
    if (extra > SIZE_MAX / 2 / sizeof(fri_str *) - l->len) return -1;
    size_t need = l->len + extra, cap = l->cap ? l->cap : LIST_MIN_CAP;
    while (cap < need) cap *= 2;
    return list_resize(l, cap);
}

/* Gives memory back after many pops: halves the ring while it is less than a quarter
 * full, which keeps pushes and pops amortised O(1) (a ring just shrunk is half full).  A
 * failed reallocation is harmless, the old ring stays. */
static void list_maybe_shrink(fri_list *l)
{
    if (l->cap <= LIST_MIN_CAP || l->len >= l->cap / 4) return;
    size_t cap = l->cap;
    while (cap > LIST_MIN_CAP && l->len < cap / 4) cap /= 2;
    (void)list_resize(l, cap);
}

/* Pushes s (owned by the list afterwards) at one end; room must have been reserved. */
static void list_push(fri_list *l, fri_str *s, int where)
{
    if (where == LIST_HEAD) {
        l->head = (l->head - 1) & (l->cap - 1);
        l->slot[l->head] = s;
    } else {
        l->slot[list_pos(l, l->len)] = s;
    }
    l->len++;
}

/* Pops an element from one end of a non-empty list; the caller owns it afterwards. */
static fri_str *list_pop(fri_list *l, int where)
{
    fri_str *s;
    if (where == LIST_HEAD) {
        s = l->slot[l->head];
        l->head = (l->head + 1) & (l->cap - 1);
    } else {
        s = l->slot[list_pos(l, l->len - 1)];
    }
    l->len--;
    return s;
}

/* Room is reserved first, so the list is made whole or not at all. */
fri_list *fri_list_from_array(fri_str **items, size_t n)
{
    fri_list *l = list_new();
    if (!l || list_reserve(l, n) < 0) {
        if (l) fri_free(l->slot);
        fri_free(l);
        return NULL;
    }
    for (size_t i = 0; i < n; i++) list_push(l, items[i], LIST_TAIL);
    return l;
}

/* Inserts s so that it becomes element i (0 <= i <= len), moving whichever side of i is
 * shorter; room must have been reserved. */
static void list_insert(fri_list *l, size_t i, fri_str *s)
{
    if (i < l->len - i) {
        l->head = (l->head - 1) & (l->cap - 1);
        for (size_t k = 0; k < i; k++) l->slot[list_pos(l, k)] = l->slot[list_pos(l, k + 1)];
    } else {
        for (size_t k = l->len; k > i; k--)
            l->slot[list_pos(l, k)] = l->slot[list_pos(l, k - 1)];
    }
    l->len++;
    l->slot[list_pos(l, i)] = s;
}

/* Does an element hold exactly the argument's bytes? */
static inline int str_eq(const fri_str *s, const fri_arg *a)
{
    return s->len == a->len && memcmp(s->buf, a->ptr, a->len) == 0;
}

/* Removes (and frees) up to limit elements equal to v, the first ones from the head, or
 * from the tail when from_tail; returns how many.  The work is proportional to the part
 * of the list scanned, not to its length: the first pass finds where the limit-th match
 * is, the second closes the gaps within the scanned part only, moving its survivors
 * toward the unscanned rest and then moving the end of the list past them. */
static size_t list_remove(fri_list *l, const fri_arg *v, unsigned long long limit,
                          int from_tail)
{
    size_t n = l->len, found = 0, edge = 0;
    if (limit == 0) return 0;
    for (size_t k = 0; k < n && found < limit; k++) {
        size_t i = from_tail ? n - 1 - k : k;
        if (str_eq(l->slot[list_pos(l, i)], v)) {
            found++;
            edge = i;
        }
    }
    if (!found) return 0;
    if (!from_tail) {
        /* Elements 0..edge hold every match: compact them toward edge, the head follows. */
        size_t w = edge;
        for (size_t i = edge + 1; i-- > 0;) {
            fri_str *s = l->slot[list_pos(l, i)];
            if (str_eq(s, v)) fri_str_free(s);
            else l->slot[list_pos(l, w--)] = s;
        }
        l->head = (l->head + found) & (l->cap - 1);
    } else {
        /* Elements edge..n-1 hold every match: compact them toward edge. */
        size_t w = edge;
        for (size_t i = edge; i < n; i++) {
            fri_str *s = l->slot[list_pos(l, i)];
            if (str_eq(s, v)) fri_str_free(s);
            else l->slot[list_pos(l, w++)] = s;
        }
    }
    l->len -= found;
    return found;
}

/* ----- COPY and MEMORY USAGE -------------------------------------------------------------- */

fri_list *fri_list_dup(const fri_list *l)
{
    fri_list *d = list_new();
    if (!d) return NULL;
    if (l->len && list_reserve(d, l->len) < 0) {
        fri_free(d);
        return NULL;
    }
    for (size_t i = 0; i < l->len; i++) {
        const fri_str *e = l->slot[list_pos(l, i)];
        if (!(d->slot[i] = fri_str_new(e->buf, e->len))) {
            fri_list_free(d);
            return NULL;
        }
        d->len++;
    }
    return d;
}

/* Redis's quicklist nodes: sizeof(quicklistNode) and sizeof(quicklist). */
#define QL_NODE_SIZE 40
#define QL_SIZE 40

/* Would a quicklist node of node_sz listpack bytes and count elements take one more of sz
 * bytes (_quicklistNodeAllowInsert)?  A negative fill is a size limit (-1: 4 KB ... -5:
 * 64 KB), a positive one a count under the 8 KB safety limit. */
static int ql_node_allows(size_t node_sz, size_t count, long long fill, size_t sz)
{
    static const size_t levels[] = {4096, 8192, 16384, 32768, 65536};
    size_t new_sz = node_sz + sz + 8;
    if (fill < 0 && (unsigned long long)(-fill) - 1 < 5)
        return new_sz <= levels[(unsigned long long)(-fill) - 1];
    if (new_sz > 8192) return 0;
    return (long long)count < fill;
}

size_t fri_list_memory(const fri_list *l, const fri_tunables *t, size_t samples)
{
    /* The nodes a quicklist built by RPUSH of these elements has, each a listpack of
     * element sizes: objectComputeSize averages the first `samples` nodes over all. */
    size_t nodes = 0, sampled = 0, node_sz = 0, count = 0, bytes = 0;
    for (size_t i = 0; i <= l->len; i++) {
        const fri_str *e = i < l->len ? l->slot[list_pos(l, i)] : NULL;
        if (count &&
            (!e || !ql_node_allows(node_sz, count, t->list_max_listpack_size, e->len))) {
            if (nodes < samples) {
                bytes += QL_NODE_SIZE + fri_je_size(node_sz);
                sampled++;
            }
            nodes++;
            node_sz = count = 0;
        }
        if (!e) break;
        if (!count) node_sz = 7; /* lpNew: header and end byte */
        node_sz += fri_lp_str_size(e->buf, e->len);
        count++;
    }
    size_t size = 16 /* robj */ + QL_SIZE;
    if (sampled) size += (size_t)((double)bytes / (double)sampled * (double)nodes);
    return size;
}

/* ----- Shared command steps ----------------------------------------------------------- */

/* Redis's listElementsRemoved: after elements left the list at key, notifies event
 * ("lpop", "rpop", "lrem", "ltrim"), deletes the key when the list is empty (a list is
 * never stored empty; "del" follows), and tells WATCH about the change. */
static void list_elements_removed(fr_client *c, const fri_arg *key, fri_obj *o,
                                  const char *event)
{
    fri_list *l = o->ptr;
    fri_notify_key(c, FR_NOTIFY_LIST, event, key);
    if (l->len == 0) {
        fri_delete_if_empty(c, key, o);
        fri_notify_key(c, FR_NOTIFY_GENERIC, "del", key);
    } else {
        list_maybe_shrink(l);
    }
    fri_signal_modified(c, c->db, key->ptr, key->len);
}

/* The event of a pop from where. */
static const char *pop_event(int where) { return where == LIST_HEAD ? "lpop" : "rpop"; }

/* Pops up to count elements (count > 0) from where and replies them as an array, in pop
 * order; the caller then runs list_elements_removed. */
static void list_pop_reply_array(fr_client *c, fri_list *l, int where, long long count)
{
    size_t n = (unsigned long long)count < l->len ? (size_t)count : l->len;
    fri_reply_array_len(c, (long)n);
    for (size_t i = 0; i < n; i++) {
        fri_str *s = list_pop(l, where);
        fri_reply_bulk_str(c, s);
        fri_str_free(s);
    }
}

/* Redis's getListPositionFromObjectOrReply: LEFT or RIGHT in any case, else a syntax
 * error.  0 or -1 (replied). */
static int get_position_or_reply(fr_client *c, const fri_arg *a, int *where)
{
    if (fri_arg_is(a, "right")) *where = LIST_TAIL;
    else if (fri_arg_is(a, "left")) *where = LIST_HEAD;
    else {
        fri_reply_error(c, FRI_ERR_SYNTAX);
        return -1;
    }
    return 0;
}

/* The list at key for writing (or reading): NULL when missing (nothing replied) or of
 * another type (*wrongtype set, WRONGTYPE replied). */
static fri_obj *list_lookup(fr_client *c, const fri_arg *key, int write, int *wrongtype)
{
    return fri_lookup_typed(c, key, FRI_LIST, write, wrongtype);
}

/* ----- Push and pop ------------------------------------------------------------------- */

/* LPUSH/RPUSH key element [element ...], and with xx (LPUSHX/RPUSHX) only onto an existing
 * list (a missing key answers 0).  Answers the new length.  Every element is copied before
 * the list is changed for good, so running out of memory leaves the keyspace as it was. */
static void push_generic_command(fr_client *c, int where, int xx)
{
    int wrongtype;
    fri_obj *o = list_lookup(c, &c->argv[1], 1, &wrongtype);
    if (!o && wrongtype) return;
    if (!o && xx) {
        fri_reply_ll(c, 0);
        return;
    }
    size_t n = (size_t)(c->argc - 2), pushed = 0;
    fri_list *l = o ? o->ptr : list_new();
    if (!l || list_reserve(l, n) < 0) goto oom;
    for (int j = 2; j < c->argc; j++) {
        fri_str *s = fri_str_new(c->argv[j].ptr, c->argv[j].len);
        if (!s) goto undo;
        list_push(l, s, where);
        pushed++;
    }
    if (!o) {
        fri_obj *no = fri_obj_new(FRI_LIST, l);
        if (!no) goto undo;
        fri_db_add(c->db, c->argv[1].ptr, c->argv[1].len, no);
    }
    fri_reply_ll(c, (long long)l->len);
    fri_signal_modified(c, c->db, c->argv[1].ptr, c->argv[1].len);
    fri_notify_key(c, FR_NOTIFY_LIST, where == LIST_HEAD ? "lpush" : "rpush", &c->argv[1]);
    return;

undo:
    while (pushed--) fri_str_free(list_pop(l, where));
oom:
    if (!o) fri_list_free(l);
    fri_reply_error(c, FRI_ERR_OOM);
}

static void lpush_command(fr_client *c) { push_generic_command(c, LIST_HEAD, 0); }
static void rpush_command(fr_client *c) { push_generic_command(c, LIST_TAIL, 0); }
static void lpushx_command(fr_client *c) { push_generic_command(c, LIST_HEAD, 1); }
static void rpushx_command(fr_client *c) { push_generic_command(c, LIST_TAIL, 1); }

/* LPOP/RPOP key [count].  Without a count: one element as a bulk, nil for a missing key.
 * With one: an array of up to count elements in pop order, *-1 (a nil array) for a
 * missing key, an empty array for count 0 on an existing key.  More than one extra
 * argument is an arity error, checked here because the table's arity is -2. */
static void pop_generic_command(fr_client *c, int where)
{
    long long count = 0;
    int hascount = c->argc == 3, wrongtype;
    if (c->argc > 3) {
        fri_reply_arity_error(c);
        return;
    }
    /* A non-number gets the "must be positive" text too, as in Redis. */
    if (hascount && fri_get_positive_ll_or_reply(c, &c->argv[2], &count, FRI_ERR_POSITIVE) < 0)
        return;
    fri_obj *o = list_lookup(c, &c->argv[1], 1, &wrongtype);
    if (!o) {
        if (wrongtype) return;
        if (hascount) fri_reply_null_array(c);
        else fri_reply_nil(c);
        return;
    }
    if (hascount && count == 0) {
        fri_reply_empty_array(c);
        return;
    }
    fri_list *l = o->ptr;
    if (!hascount) {
        fri_str *s = list_pop(l, where);
        fri_reply_bulk_str(c, s);
        fri_str_free(s);
    } else {
        list_pop_reply_array(c, l, where, count);
    }
    list_elements_removed(c, &c->argv[1], o, pop_event(where));
}

static void lpop_command(fr_client *c) { pop_generic_command(c, LIST_HEAD); }
static void rpop_command(fr_client *c) { pop_generic_command(c, LIST_TAIL); }

/* ----- Reading ------------------------------------------------------------------------ */

/* LLEN key: 0 for a missing key. */
static void llen_command(fr_client *c)
{
    int wrongtype;
    fri_obj *o = list_lookup(c, &c->argv[1], 0, &wrongtype);
    if (wrongtype) return;
    fri_reply_ll(c, o ? (long long)fri_list_len(o->ptr) : 0);
}

/* Turns a Redis index (negative counts from the tail) into a position; -1 when it is out
 * of range.  LLONG_MIN and other huge values simply land outside. */
static long long list_index(const fri_list *l, long long index)
{
    long long len = (long long)l->len;
    if (index < 0) index += len;
    return index < 0 || index >= len ? -1 : index;
}

/* LINDEX key index: the key is looked up before the index is parsed, so a missing key
 * answers nil whatever the index says. */
static void lindex_command(fr_client *c)
{
    int wrongtype;
    long long index;
    fri_obj *o = list_lookup(c, &c->argv[1], 0, &wrongtype);
    if (!o) {
        if (!wrongtype) fri_reply_nil(c);
        return;
    }
    if (fri_get_ll_or_reply(c, &c->argv[2], &index, NULL) < 0) return;
    long long i = list_index(o->ptr, index);
    if (i < 0) fri_reply_nil(c);
    else fri_reply_bulk_str(c, fri_list_at(o->ptr, (size_t)i));
}

/* Redis's range rule shared by LRANGE and LTRIM: negative ends count from the tail, the
 * start is clamped to 0 and the end to the last element.  Returns 0 for an empty range,
 * else 1 with *first and *last inside the list. */
static int list_range(size_t len, long long start, long long end, size_t *first, size_t *last)
{
    long long llen = (long long)len;
    if (start < 0) start += llen;
    if (end < 0) end += llen;
    if (start < 0) start = 0;
    if (start > end || start >= llen) return 0;
    if (end >= llen) end = llen - 1;
    *first = (size_t)start;
    *last = (size_t)end;
    return 1;
}

/* The start of LRANGE and LTRIM key start stop: both numbers, parsed before the key is
 * looked up (for writing when write), then the list, a missing key answered by missing(c);
 * then the elements [*from, *to) in range by Redis's rule (*from == *to == the length when
 * none is).  The list's object, or NULL when the command was answered. */
static fri_obj *range_or_reply(fr_client *c, int write, void (*missing)(fr_client *c),
                               size_t *from, size_t *to)
{
    long long start, end;
    int wrongtype;
    if (fri_get_ll_or_reply(c, &c->argv[2], &start, NULL) < 0 ||
        fri_get_ll_or_reply(c, &c->argv[3], &end, NULL) < 0)
        return NULL;
    fri_obj *o = list_lookup(c, &c->argv[1], write, &wrongtype);
    if (!o) {
        if (!wrongtype) missing(c);
        return NULL;
    }
    size_t len = ((fri_list *)o->ptr)->len, last;
    if (list_range(len, start, end, from, &last)) {
        *to = last + 1;
    } else {
        *from = *to = len;
    }
    return o;
}

/* LRANGE key start stop: both numbers are parsed before the key is looked up. */
static void lrange_command(fr_client *c)
{
    size_t from, to;
    fri_obj *o = range_or_reply(c, 0, fri_reply_empty_array, &from, &to);
    if (!o) return;
    fri_list *l = o->ptr;
    fri_reply_array_len(c, (long)(to - from));
    size_t mask = l->cap - 1;
    for (size_t i = from; i < to; i++) fri_reply_bulk_str(c, l->slot[(l->head + i) & mask]);
}

/* LPOS key element [RANK rank] [COUNT num-matches] [MAXLEN len].  Options are parsed (and
 * rejected) in order before the key is looked up.  RANK n > 0 skips the first n-1 matches
 * from the head, n < 0 counts from the tail; COUNT 0 means every match; MAXLEN bounds how
 * many elements are compared.  Positions are always counted from the head.  Without
 * COUNT the reply is one integer or nil, with it an array.
 *
 * RANK -9223372036854775808 passes Redis 7.0's parser (RANK is only refused when zero)
 * and its negation overflows back to itself, so Redis then takes every match from the
 * tail and its COUNT test never fires: the fake answers the same, on purpose. */
static void lpos_command(fr_client *c)
{
    long long rank = 1, count = -1, maxlen = 0;
    int wrongtype;
    for (int j = 3; j < c->argc; j++) {
        const fri_arg *opt = &c->argv[j];
        int moreargs = c->argc - 1 - j;
        if (fri_arg_is(opt, "rank") && moreargs) {
            j++;
            if (fri_get_ll_or_reply(c, &c->argv[j], &rank, NULL) < 0) return;
            if (rank == 0) {
                fri_reply_error(c, LIST_ERR_RANK_ZERO);
                return;
            }
        } else if (fri_arg_is(opt, "count") && moreargs) {
            j++;
            if (fri_get_positive_ll_or_reply(c, &c->argv[j], &count,
                                             LIST_ERR_COUNT_NEGATIVE) < 0)
                return;
        } else if (fri_arg_is(opt, "maxlen") && moreargs) {
            j++;
            if (fri_get_positive_ll_or_reply(c, &c->argv[j], &maxlen,
                                             LIST_ERR_MAXLEN_NEGATIVE) < 0)
                return;
        } else {
            fri_reply_error(c, FRI_ERR_SYNTAX);
            return;
        }
    }
    fri_obj *o = list_lookup(c, &c->argv[1], 0, &wrongtype);
    if (!o) {
        if (wrongtype) return;
        if (count != -1) fri_reply_empty_array(c);
        else fri_reply_nil(c);
        return;
    }

    fri_list *l = o->ptr;
    const fri_arg *ele = &c->argv[2];
    int from_tail = rank < 0;
    unsigned long long skip; /* matches to pass over before answering */
    if (rank == LLONG_MIN) {
        skip = 0;
        if (count > 0) count = 0;
    } else {
        skip = (unsigned long long)(rank < 0 ? -rank : rank) - 1;
    }
    size_t len = l->len;
    size_t scan = maxlen == 0 || (unsigned long long)maxlen > len ? len : (size_t)maxlen;
    size_t handle = 0;
    unsigned long long matches = 0;
    long long replied = 0;
    if (count != -1) handle = fri_reply_deferred_len(c);
    for (size_t k = 0; k < scan; k++) {
        size_t i = from_tail ? len - 1 - k : k;
        if (!str_eq(l->slot[list_pos(l, i)], ele)) continue;
        if (matches++ < skip) continue;
        fri_reply_ll(c, (long long)i);
        if (count == -1) return;
        replied++;
        if (count && replied >= count) break;
    }
    if (count == -1) fri_reply_nil(c);
    else fri_reply_set_deferred_len(c, handle, (long)replied);
}

/* ----- Changing elements in place ----------------------------------------------------- */

/* LSET key index element: the key is looked up first ("no such key"), then the index is
 * parsed, then checked ("index out of range"). */
static void lset_command(fr_client *c)
{
    int wrongtype;
    long long index;
    fri_obj *o = list_lookup(c, &c->argv[1], 1, &wrongtype);
    if (!o) {
        if (!wrongtype) fri_reply_error(c, FRI_ERR_NOKEY);
        return;
    }
    if (fri_get_ll_or_reply(c, &c->argv[2], &index, NULL) < 0) return;
    fri_list *l = o->ptr;
    long long i = list_index(l, index);
    if (i < 0) {
        fri_reply_error(c, FRI_ERR_OUTOFRANGE);
        return;
    }
    fri_str *s = fri_str_new(c->argv[3].ptr, c->argv[3].len);
    if (!s) {
        fri_reply_error(c, FRI_ERR_OOM);
        return;
    }
    size_t p = list_pos(l, (size_t)i);
    fri_str_free(l->slot[p]);
    l->slot[p] = s;
    fri_reply_ok(c);
    fri_signal_modified(c, c->db, c->argv[1].ptr, c->argv[1].len);
    fri_notify_key(c, FR_NOTIFY_LIST, "lset", &c->argv[1]);
}

/* LINSERT key BEFORE|AFTER pivot element: the direction is checked before the key is
 * looked up.  Answers the new length, -1 when the pivot is not in the list (nothing is
 * written then), 0 for a missing key.  The pivot is the first match from the head. */
static void linsert_command(fr_client *c)
{
    int where, wrongtype;
    if (fri_arg_is(&c->argv[2], "after")) where = LIST_TAIL;
    else if (fri_arg_is(&c->argv[2], "before")) where = LIST_HEAD;
    else {
        fri_reply_error(c, FRI_ERR_SYNTAX);
        return;
    }
    fri_obj *o = list_lookup(c, &c->argv[1], 1, &wrongtype);
    if (!o) {
        if (!wrongtype) fri_reply_ll(c, 0);
        return;
    }
    fri_list *l = o->ptr;
    size_t i = 0;
    while (i < l->len && !str_eq(l->slot[list_pos(l, i)], &c->argv[3])) i++;
    if (i == l->len) {
        fri_reply_ll(c, -1);
        return;
    }
    fri_str *s = fri_str_new(c->argv[4].ptr, c->argv[4].len);
    if (!s || list_reserve(l, 1) < 0) {
        fri_str_free(s);
        fri_reply_error(c, FRI_ERR_OOM);
        return;
    }
    list_insert(l, where == LIST_TAIL ? i + 1 : i, s);
    fri_reply_ll(c, (long long)l->len);
    fri_signal_modified(c, c->db, c->argv[1].ptr, c->argv[1].len);
    fri_notify_key(c, FR_NOTIFY_LIST, "linsert", &c->argv[1]);
}

/* LREM key count element: count > 0 removes the first count matches from the head,
 * count < 0 the first -count from the tail, 0 every match.  The count is parsed before
 * the key is looked up.  Answers how many were removed; the key goes when it empties. */
static void lrem_command(fr_client *c)
{
    long long count;
    int wrongtype;
    if (fri_get_ll_or_reply(c, &c->argv[2], &count, NULL) < 0) return;
    fri_obj *o = list_lookup(c, &c->argv[1], 1, &wrongtype);
    if (!o) {
        if (!wrongtype) fri_reply_ll(c, 0);
        return;
    }
    /* LLONG_MIN negates to itself in Redis and so never stops it early: the same as
     * "every match from the tail", which 0 - (unsigned) gives here. */
    unsigned long long limit = count == 0   ? ULLONG_MAX
                               : count < 0 ? 0ull - (unsigned long long)count
                                           : (unsigned long long)count;
    size_t removed = list_remove(o->ptr, &c->argv[3], limit, count < 0);
    if (removed) list_elements_removed(c, &c->argv[1], o, "lrem");
    fri_reply_ll(c, (long long)removed);
}

/* LTRIM key start stop: keeps only the range (Redis's range rule), deleting the key when
 * nothing is left.  The numbers are parsed before the key is looked up; a missing key
 * answers OK.  WATCH sees the key touched even when nothing was trimmed, as in Redis. */
static void ltrim_command(fr_client *c)
{
    size_t from, to;
    fri_obj *o = range_or_reply(c, 1, fri_reply_ok, &from, &to);
    if (!o) return;
    fri_list *l = o->ptr;
    size_t ltrim = from, rtrim = l->len - to;
    while (ltrim--) fri_str_free(list_pop(l, LIST_HEAD));
    while (rtrim--) fri_str_free(list_pop(l, LIST_TAIL));
    list_elements_removed(c, &c->argv[1], o, "ltrim");
    fri_reply_ok(c);
}

/* ----- Moving between lists ----------------------------------------------------------- */

/* Redis's lmoveGenericCommand: pops from argv[1]'s wherefrom end and pushes onto argv[2]'s
 * whereto end, answering the element.  A missing source answers nil without looking at
 * the destination (a nil array instead when blocking, for BLMOVE and BRPOPLPUSH outside
 * EXEC: see the top of the file); a destination of another type answers WRONGTYPE before
 * anything is popped.  Source and destination may be the same list (a rotation).  Room in
 * the destination is made before the pop, so running out of memory changes nothing. */
static void lmoveGeneric(fr_client *c, int wherefrom, int whereto, int blocking)
{
    int wrongtype;
    fri_obj *src = list_lookup(c, &c->argv[1], 1, &wrongtype);
    if (!src) {
        if (wrongtype) return;
        if (blocking && !c->in_exec) fri_reply_null_array(c);
        else fri_reply_nil(c);
        return;
    }
    fri_obj *dst = list_lookup(c, &c->argv[2], 1, &wrongtype);
    if (wrongtype) return;
    fri_list *dl = dst ? dst->ptr : list_new();
    fri_obj *created = NULL;
    if (!dl || list_reserve(dl, 1) < 0 || (!dst && !(created = fri_obj_new(FRI_LIST, dl)))) {
        if (!dst) fri_list_free(dl);
        fri_reply_error(c, FRI_ERR_OOM);
        return;
    }
    fri_str *v = list_pop(src->ptr, wherefrom);
    list_push(dl, v, whereto);
    /* BLMOVE and BRPOPLPUSH are propagated as LMOVE and RPOPLPUSH */
    if (blocking && c->cmd->name[1] == 'l') {
        fri_arg pv[5] = {{"LMOVE", 5}, c->argv[1], c->argv[2], c->argv[3], c->argv[4]};
        fri_propagate_rewrite(c, 5, pv);
    } else if (blocking) {
        fri_arg pv[3] = {{"RPOPLPUSH", 9}, c->argv[1], c->argv[2]};
        fri_propagate_rewrite(c, 3, pv);
    }
    if (created) fri_db_add(c->db, c->argv[2].ptr, c->argv[2].len, created);
    fri_signal_modified(c, c->db, c->argv[2].ptr, c->argv[2].len);
    fri_notify_key(c, FR_NOTIFY_LIST, whereto == LIST_HEAD ? "lpush" : "rpush", &c->argv[2]);
    fri_reply_bulk_str(c, v);
    list_elements_removed(c, &c->argv[1], src, pop_event(wherefrom));
}

/* LMOVE source destination LEFT|RIGHT LEFT|RIGHT: both directions are checked first. */
static void lmove_command(fr_client *c)
{
    int wherefrom, whereto;
    if (get_position_or_reply(c, &c->argv[3], &wherefrom) < 0 ||
        get_position_or_reply(c, &c->argv[4], &whereto) < 0)
        return;
    lmoveGeneric(c, wherefrom, whereto, 0);
}

/* RPOPLPUSH source destination: LMOVE source destination RIGHT LEFT. */
static void rpoplpush_command(fr_client *c) { lmoveGeneric(c, LIST_TAIL, LIST_HEAD, 0); }

/* BLMOVE source destination LEFT|RIGHT LEFT|RIGHT timeout: directions, then the timeout,
 * then LMOVE's work; a missing source gets the timeout reply (*-1), or $-1 inside EXEC. */
static void blmove_command(fr_client *c)
{
    int wherefrom, whereto;
    if (get_position_or_reply(c, &c->argv[3], &wherefrom) < 0 ||
        get_position_or_reply(c, &c->argv[4], &whereto) < 0 ||
        fri_get_timeout_or_reply(c, &c->argv[5], NULL) < 0)
        return;
    lmoveGeneric(c, wherefrom, whereto, 1);
}

/* BRPOPLPUSH source destination timeout: BLMOVE source destination RIGHT LEFT timeout. */
static void brpoplpush_command(fr_client *c)
{
    if (fri_get_timeout_or_reply(c, &c->argv[3], NULL) < 0) return;
    lmoveGeneric(c, LIST_TAIL, LIST_HEAD, 1);
}

/* ----- Blocking and multi-key pops ---------------------------------------------------- */

/* BLPOP/BRPOP key [key ...] timeout: the timeout is validated first, then the keys are
 * tried in order; the first non-empty list gives one element, answered as [key, element].
 * A key of another type met before that answers WRONGTYPE.  No list: *-1, the timeout
 * reply. */
static void blocking_pop_generic_command(fr_client *c, int where)
{
    int wrongtype;
    if (fri_get_timeout_or_reply(c, &c->argv[c->argc - 1], NULL) < 0) return;
    for (int j = 1; j < c->argc - 1; j++) {
        fri_obj *o = list_lookup(c, &c->argv[j], 1, &wrongtype);
        if (wrongtype) return;
        if (!o) continue;
        fri_str *s = list_pop(o->ptr, where);
        fri_reply_array_len(c, 2);
        fri_reply_bulk(c, c->argv[j].ptr, c->argv[j].len);
        fri_reply_bulk_str(c, s);
        fri_str_free(s);
        /* propagated as LPOP/RPOP key */
        fri_arg pv[2] = {{where == LIST_HEAD ? "LPOP" : "RPOP", 4}, c->argv[j]};
        fri_propagate_rewrite(c, 2, pv);
        list_elements_removed(c, &c->argv[j], o, pop_event(where));
        return;
    }
    fri_reply_null_array(c);
}

static void blpop_command(fr_client *c) { blocking_pop_generic_command(c, LIST_HEAD); }
static void brpop_command(fr_client *c) { blocking_pop_generic_command(c, LIST_TAIL); }

/* LMPOP numkeys key [key ...] LEFT|RIGHT [COUNT count], and BLMPOP with a timeout before
 * numkeys (numkeys_idx 2).  Checked in Redis's order: numkeys, that the keys and the
 * direction fit, the direction, COUNT (once), then BLMPOP's timeout.  The first non-empty
 * list gives up to count elements, answered as [key, [elements...]]; none: *-1. */
static void lmpop_generic_command(fr_client *c, int numkeys_idx, int blocking)
{
    long long numkeys, count;
    int where, wrongtype;
    if (fri_mpop_numkeys_or_reply(c, numkeys_idx, &numkeys) < 0) return;
    int where_idx = numkeys_idx + (int)numkeys + 1;
    if (get_position_or_reply(c, &c->argv[where_idx], &where) < 0) return;
    if (fri_mpop_count_or_reply(c, where_idx + 1, blocking, &count) < 0) return;

    for (int j = numkeys_idx + 1; j < where_idx; j++) {
        fri_obj *o = list_lookup(c, &c->argv[j], 1, &wrongtype);
        if (wrongtype) return;
        if (!o) continue;
        /* propagated as LPOP/RPOP key count, count no more than the list held */
        if (fri_propagating(c->srv)) {
            size_t llen = fri_list_len(o->ptr);
            long long n = count > (long long)llen ? (long long)llen : count;
            char digits[24];
            fri_arg pv[3] = {{where == LIST_HEAD ? "LPOP" : "RPOP", 4}, c->argv[j],
                             {digits, fri_ll2string(digits, sizeof(digits), n)}};
            fri_propagate_rewrite(c, 3, pv);
        }
        fri_reply_array_len(c, 2);
        fri_reply_bulk(c, c->argv[j].ptr, c->argv[j].len);
        list_pop_reply_array(c, o->ptr, where, count);
        list_elements_removed(c, &c->argv[j], o, pop_event(where));
        return;
    }
    fri_reply_null_array(c);
}

static void lmpop_command(fr_client *c) { lmpop_generic_command(c, 1, 0); }
static void blmpop_command(fr_client *c) { lmpop_generic_command(c, 2, 1); }

static int lmpopKeys(int argc, const fri_arg *argv, int *keys, int max)
{
    return fri_numkeys_keys(argc, argv, 1, 0, keys, max);
}

static int blmpopKeys(int argc, const fri_arg *argv, int *keys, int max)
{
    return fri_numkeys_keys(argc, argv, 2, 0, keys, max);
}

/* ----- The command table -------------------------------------------------------------- */

#include "cmd_flags.h"

/* Arity, flags and key positions as COMMAND INFO of Redis 7.0.15 gives them. */
const fri_command fri_list_commands[] = {
    {"lpush", lpush_command, -3, W | M | F, "list", 1, 1, 1, NULL, NULL},
    {"rpush", rpush_command, -3, W | M | F, "list", 1, 1, 1, NULL, NULL},
    {"lpushx", lpushx_command, -3, W | M | F, "list", 1, 1, 1, NULL, NULL},
    {"rpushx", rpushx_command, -3, W | M | F, "list", 1, 1, 1, NULL, NULL},
    {"lpop", lpop_command, -2, W | F, "list", 1, 1, 1, NULL, NULL},
    {"rpop", rpop_command, -2, W | F, "list", 1, 1, 1, NULL, NULL},
    {"llen", llen_command, 2, R | F, "list", 1, 1, 1, NULL, NULL},
    {"lrange", lrange_command, 4, R, "list", 1, 1, 1, NULL, NULL},
    {"lindex", lindex_command, 3, R, "list", 1, 1, 1, NULL, NULL},
    {"lset", lset_command, 4, W | M, "list", 1, 1, 1, NULL, NULL},
    {"linsert", linsert_command, 5, W | M, "list", 1, 1, 1, NULL, NULL},
    {"lrem", lrem_command, 4, W, "list", 1, 1, 1, NULL, NULL},
    {"ltrim", ltrim_command, 4, W, "list", 1, 1, 1, NULL, NULL},
    {"lpos", lpos_command, -3, R, "list", 1, 1, 1, NULL, NULL},
    {"lmove", lmove_command, 5, W | M, "list", 1, 2, 1, NULL, NULL},
    {"rpoplpush", rpoplpush_command, 3, W | M, "list", 1, 2, 1, NULL, NULL},
    {"lmpop", lmpop_command, -4, W, "list", 0, 0, 0, lmpopKeys, NULL},
    {"blpop", blpop_command, -3, W | B, "list", 1, -2, 1, NULL, NULL},
    {"brpop", brpop_command, -3, W | B, "list", 1, -2, 1, NULL, NULL},
    {"blmove", blmove_command, 6, W | M | B, "list", 1, 2, 1, NULL, NULL},
    {"brpoplpush", brpoplpush_command, 4, W | M | B, "list", 1, 2, 1, NULL, NULL},
    {"blmpop", blmpop_command, -5, W | B, "list", 0, 0, 0, blmpopKeys, NULL},
    {0},
};
