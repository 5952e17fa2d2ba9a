/* t_set.c -- the set type: SADD, SREM, SMEMBERS, SPOP, SRANDMEMBER, SMOVE, the set
 * operations (SINTER, SINTERCARD, SUNION, SDIFF and their STORE forms) and SSCAN.
 *
 * Redis 7.0 keeps a set as an intset (a sorted array of 64-bit integers) while every
 * member is an integer in string2ll's strict form and there are at most 512 of them
 * (set-max-intset-entries, see fr_server_set_param), and as a hash table otherwise, for
 * good: removing the offending member or shrinking never converts back.  An intset
 * answers SMEMBERS in ascending numeric order, which clients can see and come to rely on,
 * so the fake models the two encodings with the same rules:
 *
 *  - intset: ints[] sorted ascending, exactly Redis's intset;
 *  - table:  a fri_dict of members in insertion order (where Redis answers in its hash
 *            order, which no one can predict; the differential tests compare such replies
 *            with @sorted).
 *
 * Random choices (SPOP, SRANDMEMBER) come from the server's seeded generator, so a seed
 * decides them all.  They are not Redis's choices, only equally distributed.
 */
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "fr_int.h"

/* SPOP with a count pops one by one while the set keeps more than count/5 members, and
 * otherwise keeps a random remainder in a new set (Redis's SPOP_MOVE_STRATEGY_MUL); the
 * new set's encoding follows the remainder, so the strategy is visible in SMEMBERS. */
#define SET_SPOP_MOVE_STRATEGY_MUL 5


struct fri_set {
    int intset;          /* the intset encoding: every member in ints[], none in table */
    long long *ints;     /* intset: the members, ascending */
    size_t nints;        /* intset: how many */
    size_t cap;          /* intset: allocated elements of ints[] */
    fri_dict *table;     /* table encoding: members (values unused), insertion order */
    size_t nonint;       /* table: members that are not integers, for SPOP's whole-set
                            reply, which Redis builds as a fresh intset when it can */
    unsigned width;      /* intset: bytes per member Redis's intset has, 2, 4 or 8, as
                            wide as its widest member ever (it never narrows); 0 is 2 */
};

/* ----- The data structure ---------------------------------------------------------------- */

/* A new empty set in the encoding Redis's setTypeCreate picks for its first member: an
 * intset if that member is an integer.  NULL when out of memory. */
static fri_set *set_new(const char *first, size_t len)
{
    fri_set *s = fri_calloc(1, sizeof(*s));
    if (!s) return NULL;
    s->intset = fri_string2ll(first, len, NULL);
    if (!s->intset && !(s->table = fri_dict_new())) {
        fri_free(s);
        return NULL;
    }
    return s;
}

void fri_set_free(fri_set *s)
{
    if (!s) return;
    fri_free(s->ints);
    fri_dict_free(s->table, NULL);
    fri_free(s);
}

size_t fri_set_size(const fri_set *s)
{
    return s->intset ? s->nints : fri_dict_size(s->table);
}

int fri_set_is_intset(const fri_set *s) { return s->intset; }

/* setTypeDup: the same members in the same encoding (a table's in the same order). */
fri_set *fri_set_dup(const fri_set *s)
{
    fri_set *d = fri_calloc(1, sizeof(*d));
    if (!d) return NULL;
    d->intset = s->intset;
    if (s->intset) {
        if (s->nints && !(d->ints = fri_malloc(s->nints * sizeof(*d->ints)))) {
            fri_free(d);
            return NULL;
        }
        if (s->nints) memcpy(d->ints, s->ints, s->nints * sizeof(*d->ints));
        d->nints = d->cap = s->nints;
        d->width = s->width;
        return d;
    }
    if (!(d->table = fri_dict_new())) {
        fri_free(d);
        return NULL;
    }
    size_t slots = fri_dict_slots(s->table);
    for (size_t i = 0; i < slots; i++) {
        fri_dent *e = fri_dict_slot(s->table, i);
        if (e && !fri_dict_add(d->table, e->key->buf, e->key->len, NULL)) {
            fri_set_free(d);
            return NULL;
        }
    }
    d->nonint = s->nonint;
    return d;
}

size_t fri_set_memory(const fri_set *s, size_t samples)
{
    if (s->intset) /* robj and the intset: its header, then width bytes per member */
        return 16 + fri_je_size(8 + (s->width ? s->width : 2) * s->nints);
    /* robj and the dict, `samples` members spread over the table (see fri_sample_index) */
    size_t slots = fri_dict_slots(s->table), n = fri_dict_size(s->table);
    size_t sampled = 0, bytes = 0, live = 0;
    for (size_t i = 0; i < slots && sampled < samples && sampled < n; i++) {
        fri_dent *e = fri_dict_slot(s->table, i);
        if (!e || live++ != fri_sample_index(sampled, samples, n)) continue;
        bytes += 24 + fri_sds_size(e->key->len);
        sampled++;
    }
    return 16 + fri_dict_mem(n, sampled, bytes);
}

/* Binary search: the index of v in ints[], or where it would go (*found says which). */
static size_t intset_search(const fri_set *s, long long v, int *found)
{
    size_t lo = 0, hi = s->nints;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (s->ints[mid] < v) lo = mid + 1;
        else hi = mid;
    }
    *found = lo < s->nints && s->ints[lo] == v;
    return lo;
}

/* Adds a member to the table encoding: 1 added, 0 present, -1 out of memory. */
static int table_add(fri_set *s, const char *p, size_t len)
{
    int created;
    if (!fri_dict_add(s->table, p, len, &created)) return -1;
    if (created && !fri_string2ll(p, len, NULL)) s->nonint++;
    return created;
}

/* Converts an intset to the table encoding, members entering in ascending order as
 * Redis's setTypeConvert moves them.  -1 when out of memory (set unchanged). */
static int set_convert(fri_set *s)
{
    fri_dict *t = fri_dict_new();
    if (!t) return -1;
    for (size_t i = 0; i < s->nints; i++) {
        char tmp[32];
        size_t n = fri_ll2string(tmp, sizeof(tmp), s->ints[i]);
        if (!fri_dict_add(t, tmp, n, NULL)) {
            fri_dict_free(t, NULL);
            return -1;
        }
    }
    fri_free(s->ints);
    s->ints = NULL;
    s->nints = s->cap = 0;
    s->table = t;
    s->intset = 0;
    s->nonint = 0;
    return 0;
}

/* Redis's setTypeAdd: 1 if added, 0 if already a member, -1 when out of memory (the set
 * is then unchanged, though possibly converted).  A non-integer member, or one more than
 * max_intset (set-max-intset-entries), turns an intset into a table. */
static int set_add(fri_set *s, const char *p, size_t len, long long max_intset)
{
    if (s->intset) {
        long long v;
        if (fri_string2ll(p, len, &v)) {
            int found;
            size_t at = intset_search(s, v, &found);
            if (found) return 0;
            if (s->nints == s->cap) {
                size_t cap = s->cap ? s->cap * 2 : 8;
                long long *n = fri_realloc(s->ints, cap * sizeof(*n));
                if (!n) return -1;
                s->ints = n;
                s->cap = cap;
            }
            memmove(s->ints + at + 1, s->ints + at, (s->nints - at) * sizeof(*s->ints));
            s->ints[at] = v;
            s->nints++;
            /* _intsetValueEncoding: an intset upgrades to the width of its new member */
            unsigned w = (v < INT32_MIN || v > INT32_MAX)   ? 8
                         : (v < INT16_MIN || v > INT16_MAX) ? 4
                                                            : 2;
            if (w > s->width) s->width = w;
            if ((long long)s->nints > max_intset && set_convert(s) < 0) {
                memmove(s->ints + at, s->ints + at + 1, (s->nints - at - 1) * sizeof(*s->ints));
                s->nints--;
                return -1;
            }
            return 1;
        }
        if (set_convert(s) < 0) return -1;
    }
    return table_add(s, p, len);
}

/* Removes the table's member at slot i (a live slot). */
static void table_remove_slot(fri_set *s, size_t i);

/* Redis's setTypeRemove: 1 if removed, 0 if it was not a member. */
static int set_remove(fri_set *s, const char *p, size_t len)
{
    if (s->intset) {
        long long v;
        int found;
        if (!fri_string2ll(p, len, &v)) return 0;
        size_t at = intset_search(s, v, &found);
        if (!found) return 0;
        memmove(s->ints + at, s->ints + at + 1, (s->nints - at - 1) * sizeof(*s->ints));
        s->nints--;
        return 1;
    }
    fri_dent *e = fri_dict_find(s->table, p, len);
    if (!e) return 0;
    /* Find the slot through the entry's sequence number, which is ordered like slots. */
    table_remove_slot(s, fri_dict_slot_from_seq(s->table, e->seq));
    return 1;
}

/* Redis's setTypeIsMember. */
static int set_contains(fri_set *s, const char *p, size_t len)
{
    if (s->intset) {
        long long v;
        int found;
        if (!fri_string2ll(p, len, &v)) return 0;
        intset_search(s, v, &found);
        return found;
    }
    return fri_dict_find(s->table, p, len) != NULL;
}

/* Squeezes the holes out of the table when deletions have left it mostly holes, so that
 * picking a random live slot by trial stays cheap.  Keeps the order and the sequence
 * numbers, so an SSCAN cursor stays valid. */
static void table_maybe_compact(fri_set *s)
{
    size_t live = fri_dict_size(s->table), slots = fri_dict_slots(s->table);
    if (slots <= 2 * live + 32) return;
    (void)fri_dict_compact(s->table); /* out of memory: still correct, only slower */
}

static void table_remove_slot(fri_set *s, size_t i)
{
    fri_dent *e = fri_dict_slot(s->table, i);
    if (!fri_string2ll(e->key->buf, e->key->len, NULL)) s->nonint--;
    fri_dict_delete(s->table, e->key->buf, e->key->len, NULL);
    table_maybe_compact(s);
}

/* ----- Positions: a member by index (intset) or live slot (table) -------------------------- */

/* How many positions there are: members of an intset, slots (holes included) of a table. */
static size_t set_positions(const fri_set *s)
{
    return s->intset ? s->nints : fri_dict_slots(s->table);
}

/* Is there a member at position i? */
static int set_live(fri_set *s, size_t i)
{
    return s->intset ? i < s->nints : fri_dict_slot(s->table, i) != NULL;
}

/* The member at live position i as bytes; tmp (32 bytes) holds an intset's digits. */
static const char *set_member_at(fri_set *s, size_t i, char *tmp, size_t *len)
{
    if (s->intset) {
        *len = fri_ll2string(tmp, 32, s->ints[i]);
        return tmp;
    }
    fri_dent *e = fri_dict_slot(s->table, i);
    *len = e->key->len;
    return e->key->buf;
}

static void reply_member_at(fr_client *c, fri_set *s, size_t i)
{
    if (s->intset) {
        fri_reply_bulk_ll(c, s->ints[i]);
    } else {
        fri_reply_bulk_str(c, fri_dict_slot(s->table, i)->key);
    }
}

/* A uniformly chosen live position (the set must not be empty).  Tables are sampled by
 * trial over their slots, which compaction keeps at most half holes (plus a few). */
static size_t set_random_position(fr_server *srv, fri_set *s)
{
    size_t n = set_positions(s);
    for (;;) {
        size_t i = (size_t)(fri_random(srv) % n);
        if (set_live(s, i)) return i;
    }
}

/* SPOP's propagation of the member at live position i: SREM key member (an op of its own
 * with a count, the command's form without one). */
static void propagate_srem_at(fr_client *c, fri_set *s, size_t i, int also)
{
    if (!fri_propagating(c->srv)) return;
    char tmp[32];
    size_t len;
    const char *p = set_member_at(s, i, tmp, &len);
    fri_arg v[3] = {{"SREM", 4}, c->argv[1], {p, len}};
    if (also) fri_propagate_also(c, 3, v);
    else fri_propagate_rewrite(c, 3, v);
}

/* Removes the member at live position i. */
static void set_remove_at(fri_set *s, size_t i)
{
    if (s->intset) {
        memmove(s->ints + i, s->ints + i + 1, (s->nints - i - 1) * sizeof(*s->ints));
        s->nints--;
    } else {
        table_remove_slot(s, i);
    }
}

void fri_set_foreach(fri_set *s, void (*fn)(const char *p, size_t len, void *ctx), void *ctx)
{
    size_t n = set_positions(s);
    for (size_t i = 0; i < n; i++) {
        if (!set_live(s, i)) continue;
        char tmp[32];
        size_t len;
        const char *p = set_member_at(s, i, tmp, &len);
        fn(p, len, ctx);
    }
}

/* Replies every member in the set's own order (SMEMBERS, SRANDMEMBER's whole set). */
static void reply_all(fr_client *c, fri_set *s)
{
    fri_reply_set_len(c, (long)fri_set_size(s));
    size_t n = set_positions(s);
    for (size_t i = 0; i < n; i++)
        if (set_live(s, i)) reply_member_at(c, s, i);
}

static int cmp_ll(const void *a, const void *b)
{
    long long x = *(const long long *)a, y = *(const long long *)b;
    return (x > y) - (x < y);
}

/* Replies every member the way Redis's SUNION of this one set answers (SPOP with a count
 * covering the whole set is that): the union is built as a fresh intset while members
 * are integers and at most set-max-intset-entries, so a table of integers comes back
 * sorted as well. */
static void reply_all_as_union(fr_client *c, fri_set *s)
{
    size_t size = fri_set_size(s);
    long long *sorted = NULL;
    if (s->intset || s->nonint > 0 || (long long)size > c->srv->tun.set_max_intset_entries ||
        !(sorted = fri_malloc(size * sizeof(*sorted)))) {
        reply_all(c, s); /* out of memory: the members, in another order */
        return;
    }
    size_t k = 0, n = set_positions(s);
    for (size_t i = 0; i < n; i++) {
        fri_dent *e = fri_dict_slot(s->table, i);
        if (e) fri_string2ll(e->key->buf, e->key->len, &sorted[k++]);
    }
    qsort(sorted, k, sizeof(*sorted), cmp_ll);
    fri_reply_set_len(c, (long)k);
    for (size_t i = 0; i < k; i++) fri_reply_bulk_ll(c, sorted[i]);
    fri_free(sorted);
}

/* ----- Lookups ------------------------------------------------------------------------- */

/* The set object at argv[1]: NULL when missing (nothing replied) or of another type
 * (*wrongtype set, WRONGTYPE replied). */
static fri_obj *set_lookup(fr_client *c, int write, int *wrongtype)
{
    return fri_lookup_typed(c, &c->argv[1], FRI_SET, write, wrongtype);
}

static void signal_key(fr_client *c)
{
    fri_signal_modified(c, c->db, c->argv[1].ptr, c->argv[1].len);
}

/* ----- Commands --------------------------------------------------------------------------- */

/* SADD key member [member ...]: how many members were new.  A new key takes the encoding
 * its first member calls for; the key is touched only when something was added. */
static void sadd_command(fr_client *c)
{
    int wrongtype;
    fri_obj *o = set_lookup(c, 1, &wrongtype);
    if (wrongtype) return;
    if (!o) {
        fri_set *s = set_new(c->argv[2].ptr, c->argv[2].len);
        if (!s || !(o = fri_obj_new(FRI_SET, s))) {
            fri_set_free(s);
            fri_reply_error(c, FRI_ERR_OOM);
            return;
        }
        fri_db_add(c->db, c->argv[1].ptr, c->argv[1].len, o);
    }
    long long added = 0;
    for (int i = 2; i < c->argc; i++) {
        int r = set_add(o->ptr, c->argv[i].ptr, c->argv[i].len,
                        c->srv->tun.set_max_intset_entries);
        if (r < 0) {
            /* Members added before this one stay, as they would on a real server that
             * hit its memory limit between two commands; a new empty key does not. */
            fri_delete_if_empty(c, &c->argv[1], o);
            if (added) signal_key(c);
            fri_reply_error(c, FRI_ERR_OOM);
            return;
        }
        added += r;
    }
    if (added) {
        signal_key(c);
        fri_notify_key(c, FR_NOTIFY_SET, "sadd", &c->argv[1]);
    }
    fri_reply_ll(c, added);
}

/* SREM key member [member ...]: how many were removed; the key goes with its last member. */
static void srem_command(fr_client *c)
{
    int wrongtype;
    fri_obj *o = set_lookup(c, 1, &wrongtype);
    if (!o) {
        if (!wrongtype) fri_reply_ll(c, 0);
        return;
    }
    fri_set *s = o->ptr;
    long long removed = 0;
    for (int i = 2; i < c->argc && fri_set_size(s) > 0; i++)
        removed += set_remove(s, c->argv[i].ptr, c->argv[i].len);
    if (removed) {
        int emptied = fri_set_size(s) == 0;
        fri_delete_if_empty(c, &c->argv[1], o);
        signal_key(c);
        fri_notify_key(c, FR_NOTIFY_SET, "srem", &c->argv[1]);
        if (emptied) fri_notify_key(c, FR_NOTIFY_GENERIC, "del", &c->argv[1]);
    }
    fri_reply_ll(c, removed);
}

/* SMEMBERS key: every member, an intset in ascending order; *0 for a missing key. */
static void smembers_command(fr_client *c)
{
    int wrongtype;
    fri_obj *o = set_lookup(c, 0, &wrongtype);
    if (wrongtype) return;
    if (!o) fri_reply_empty_array(c);
    else reply_all(c, o->ptr);
}

/* SISMEMBER key member: 1 or 0. */
static void sismember_command(fr_client *c)
{
    int wrongtype;
    fri_obj *o = set_lookup(c, 0, &wrongtype);
    if (wrongtype) return;
    fri_reply_ll(c, o && set_contains(o->ptr, c->argv[2].ptr, c->argv[2].len));
}

/* SMISMEMBER key member [member ...]: 1 or 0 per member (all 0 for a missing key). */
static void smismember_command(fr_client *c)
{
    int wrongtype;
    fri_obj *o = set_lookup(c, 0, &wrongtype);
    if (wrongtype) return;
    fri_reply_array_len(c, c->argc - 2);
    for (int i = 2; i < c->argc; i++)
        fri_reply_ll(c, o && set_contains(o->ptr, c->argv[i].ptr, c->argv[i].len));
}

/* SCARD key: the number of members, 0 for a missing key. */
static void scard_command(fr_client *c)
{
    int wrongtype;
    fri_obj *o = set_lookup(c, 0, &wrongtype);
    if (wrongtype) return;
    fri_reply_ll(c, o ? (long long)fri_set_size(o->ptr) : 0);
}

/* A small open-addressing set of positions, for choosing distinct members. */
typedef struct pos_set {
    size_t *slots; /* position + 1, 0 = empty */
    size_t mask;
} pos_set;

/* An empty set with room for n positions; slots NULL when out of memory. */
static pos_set pos_set_new(size_t n)
{
    size_t cap = 16;
    while (cap < n * 2) cap *= 2;
    pos_set p = {fri_calloc(cap, sizeof(size_t)), cap - 1};
    return p;
}

/* Adds i; 1 if it was new, 0 if already there. */
static int pos_set_add(pos_set *p, size_t i)
{
    size_t j = (size_t)(((uint64_t)i * 0x9e3779b97f4a7c15ull) >> 17) & p->mask;
    while (p->slots[j]) {
        if (p->slots[j] == i + 1) return 0;
        j = (j + 1) & p->mask;
    }
    p->slots[j] = i + 1;
    return 1;
}

static int pos_set_has(const pos_set *p, size_t i)
{
    size_t j = (size_t)(((uint64_t)i * 0x9e3779b97f4a7c15ull) >> 17) & p->mask;
    while (p->slots[j]) {
        if (p->slots[j] == i + 1) return 1;
        j = (j + 1) & p->mask;
    }
    return 0;
}

/* SPOP key count, count < size: Redis's two strategies.  While the set keeps many members
 * compared to count, pop random members one at a time (answered in the order popped).
 * Otherwise choose the members that stay, copy them to a new set in the order chosen
 * (its encoding follows them, as setTypeCreate picks it for the first one and setTypeAdd
 * converts later), and answer the rest of the old set in its own order, an intset
 * ascending.  -1 when out of memory, before anything changed or was replied. */
static int spop_some(fr_client *c, fri_obj *o, size_t count)
{
    fri_set *s = o->ptr;
    size_t remaining = fri_set_size(s) - count;
    if (remaining * SET_SPOP_MOVE_STRATEGY_MUL > count) {
        fri_reply_set_len(c, (long)count);
        while (count--) {
            size_t i = set_random_position(c->srv, s);
            reply_member_at(c, s, i);
            propagate_srem_at(c, s, i, 1);
            set_remove_at(s, i);
        }
        return 0;
    }
    pos_set stay = pos_set_new(remaining);
    fri_set *keep = NULL;
    if (!stay.slots) return -1;
    for (size_t k = 0; k < remaining;) {
        size_t i = set_random_position(c->srv, s);
        if (!pos_set_add(&stay, i)) continue;
        k++;
        char tmp[32];
        size_t len;
        const char *p = set_member_at(s, i, tmp, &len);
        if ((!keep && !(keep = set_new(p, len))) ||
            set_add(keep, p, len, c->srv->tun.set_max_intset_entries) < 0) {
            fri_set_free(keep);
            fri_free(stay.slots);
            return -1;
        }
    }
    fri_reply_set_len(c, (long)count);
    size_t n = set_positions(s);
    for (size_t i = 0; i < n; i++) {
        if (set_live(s, i) && !pos_set_has(&stay, i)) {
            reply_member_at(c, s, i);
            propagate_srem_at(c, s, i, 1);
        }
    }
    fri_free(stay.slots);
    fri_set_free(s);
    o->ptr = keep;
    return 0;
}

/* SPOP key [count].  Without a count: one random member or nil.  With one: the count is
 * checked first ("must be positive"), then the key; a missing key or a count of 0 answers
 * an empty array, a count covering the set answers all of it (ordered as SUNION would
 * order it) and deletes the key. */
static void spop_command(fr_client *c)
{
    if (c->argc > 3) {
        fri_reply_error(c, FRI_ERR_SYNTAX);
        return;
    }
    int wrongtype;
    if (c->argc == 2) {
        fri_obj *o = set_lookup(c, 1, &wrongtype);
        if (!o) {
            if (!wrongtype) fri_reply_nil(c);
            return;
        }
        fri_set *s = o->ptr;
        size_t i = set_random_position(c->srv, s);
        reply_member_at(c, s, i);
        propagate_srem_at(c, s, i, 0); /* propagated as SREM key member */
        set_remove_at(s, i);
        fri_notify_key(c, FR_NOTIFY_SET, "spop", &c->argv[1]);
        int emptied = fri_set_size(s) == 0;
        fri_delete_if_empty(c, &c->argv[1], o);
        if (emptied) fri_notify_key(c, FR_NOTIFY_GENERIC, "del", &c->argv[1]);
        signal_key(c);
        return;
    }
    long long count;
    if (fri_get_positive_ll_or_reply(c, &c->argv[2], &count, NULL) < 0) return;
    fri_obj *o = set_lookup(c, 1, &wrongtype);
    if (!o) {
        if (!wrongtype) fri_reply_empty_array(c);
        return;
    }
    if (count == 0) {
        fri_reply_empty_array(c);
        return;
    }
    fri_set *s = o->ptr;
    /* Redis notifies before it pops (and replies) */
    fri_notify_key(c, FR_NOTIFY_SET, "spop", &c->argv[1]);
    if ((unsigned long long)count >= fri_set_size(s)) {
        reply_all_as_union(c, s);
        fri_db_delete(c->db, c->argv[1].ptr, c->argv[1].len);
        fri_notify_key(c, FR_NOTIFY_GENERIC, "del", &c->argv[1]);
        fri_arg v[2] = {{"DEL", 3}, c->argv[1]}; /* propagated as DEL */
        fri_propagate_rewrite(c, 2, v);
    } else if (spop_some(c, o, (size_t)count) < 0) {
        fri_reply_error(c, FRI_ERR_OOM);
        return;
    } else {
        fri_propagate_prevent(c); /* its SREMs were propagated one by one */
    }
    signal_key(c);
}

/* SRANDMEMBER key count with 1 < count < size: count distinct random members.  A large
 * share is chosen by shuffling every position, a small one by drawing until count
 * distinct positions came up.  -1 when out of memory (nothing replied). */
static int srandmember_distinct(fr_client *c, fri_set *s, size_t count)
{
    size_t size = fri_set_size(s), n = set_positions(s);
    if (count * 3 > size) {
        size_t *pos = fri_malloc(size * sizeof(*pos));
        if (!pos) return -1;
        size_t k = 0;
        for (size_t i = 0; i < n; i++)
            if (set_live(s, i)) pos[k++] = i;
        fri_reply_array_len(c, (long)count);
        for (size_t i = 0; i < count; i++) {
            size_t j = i + (size_t)(fri_random(c->srv) % (size - i));
            size_t t = pos[i];
            pos[i] = pos[j];
            pos[j] = t;
            reply_member_at(c, s, pos[i]);
        }
        fri_free(pos);
        return 0;
    }
    pos_set seen = pos_set_new(count);
    if (!seen.slots) return -1;
    fri_reply_array_len(c, (long)count);
    for (size_t k = 0; k < count;) {
        size_t i = set_random_position(c->srv, s);
        if (pos_set_add(&seen, i)) {
            reply_member_at(c, s, i);
            k++;
        }
    }
    fri_free(seen.slots);
    return 0;
}

/* SRANDMEMBER key [count].  Without a count: one random member or nil.  With one: the
 * count is checked first (any long but LONG_MIN); a negative count draws -count members
 * with repetition, a positive one distinct members, all of them (in the set's own order)
 * when count covers the set; a missing key or a count of 0 answers an empty array. */
static void srandmember_command(fr_client *c)
{
    if (c->argc > 3) {
        fri_reply_error(c, FRI_ERR_SYNTAX);
        return;
    }
    int wrongtype;
    if (c->argc == 2) {
        fri_obj *o = set_lookup(c, 0, &wrongtype);
        if (!o) {
            if (!wrongtype) fri_reply_nil(c);
            return;
        }
        reply_member_at(c, o->ptr, set_random_position(c->srv, o->ptr));
        return;
    }
    long long l;
    if (fri_get_range_ll_or_reply(c, &c->argv[2], -LLONG_MAX, LLONG_MAX, &l, NULL) < 0) return;
    fri_obj *o = set_lookup(c, 0, &wrongtype);
    if (!o) {
        if (!wrongtype) fri_reply_empty_array(c);
        return;
    }
    fri_set *s = o->ptr;
    int uniq;
    unsigned long long count;
    if (fri_random_count_or_reply(c, l, &count, &uniq) < 0) return;
    if (!uniq || count == 1) {
        fri_reply_array_len(c, (long)count);
        while (count--) reply_member_at(c, s, set_random_position(c->srv, s));
        return;
    }
    if (count >= fri_set_size(s)) {
        reply_all(c, s);
        return;
    }
    if (srandmember_distinct(c, s, (size_t)count) < 0) fri_reply_error(c, FRI_ERR_OOM);
}

/* ----- SMOVE ----------------------------------------------------------------------------- */

/* SMOVE source destination member, in Redis's order: both keys are looked up (expired ones
 * go), a missing source answers 0 whatever the destination holds, then the source's type
 * and the destination's are checked.  Within one set nothing moves: the answer says
 * whether the member is there.  Otherwise the member leaves the source (the key goes with
 * its last member) and joins the destination, created in the encoding the member calls
 * for: 1.  The source is signalled, the destination only when the member was new there.
 * The destination takes the member before the source gives it up, so running out of
 * memory changes nothing. */
static void smove_command(fr_client *c)
{
    const fri_arg *srckey = &c->argv[1], *dstkey = &c->argv[2], *ele = &c->argv[3];
    fri_obj *src = fri_lookup_write(c, srckey);
    fri_obj *dst = fri_lookup_write(c, dstkey);
    if (!src) {
        fri_reply_ll(c, 0);
        return;
    }
    if (src->type != FRI_SET || (dst && dst->type != FRI_SET)) {
        fri_reply_error(c, FRI_ERR_WRONGTYPE);
        return;
    }
    if (src == dst) {
        fri_reply_ll(c, set_contains(src->ptr, ele->ptr, ele->len));
        return;
    }
    if (!set_contains(src->ptr, ele->ptr, ele->len)) {
        fri_reply_ll(c, 0);
        return;
    }
    fri_obj *made = NULL;
    if (!dst) {
        fri_set *ns = set_new(ele->ptr, ele->len);
        if (!ns || !(made = fri_obj_new(FRI_SET, ns))) {
            fri_set_free(ns);
            fri_reply_error(c, FRI_ERR_OOM);
            return;
        }
        dst = made;
    }
    int added = set_add(dst->ptr, ele->ptr, ele->len, c->srv->tun.set_max_intset_entries);
    if (added < 0) {
        fri_obj_free(made);
        fri_reply_error(c, FRI_ERR_OOM);
        return;
    }
    set_remove(src->ptr, ele->ptr, ele->len);
    fri_notify_key(c, FR_NOTIFY_SET, "srem", srckey);
    int emptied = fri_set_size(src->ptr) == 0;
    fri_delete_if_empty(c, srckey, src);
    if (emptied) fri_notify_key(c, FR_NOTIFY_GENERIC, "del", srckey);
    if (made) fri_db_add(c->db, dstkey->ptr, dstkey->len, made);
    fri_signal_modified(c, c->db, srckey->ptr, srckey->len);
    if (added) {
        fri_signal_modified(c, c->db, dstkey->ptr, dstkey->len);
        fri_notify_key(c, FR_NOTIFY_SET, "sadd", dstkey);
    }
    fri_reply_ll(c, 1);
}

/* ----- SINTER, SINTERCARD, SUNION, SDIFF and the STORE forms ------------------------------- */

/* An empty set in the intset encoding, as Redis's createIntsetObject starts the result of
 * a set operation: set_add turns it into a table on the first non-integer or the 513th
 * member, so a result ends in the encoding Redis's ends in (which SMEMBERS shows).  NULL
 * when out of memory. */
static fri_set *set_new_result(void)
{
    fri_set *s = fri_calloc(1, sizeof(*s));
    if (s) s->intset = 1;
    return s;
}

/* Looks the keys argv[first .. first+n) up for reading, in order (expired keys go), into
 * sets[] (NULL for a missing key, an empty set to every operation).  Every key is checked
 * before anything is computed: -1 after replying WRONGTYPE for the first of another type,
 * even past a missing key. */
static int lookup_sets(fr_client *c, int first, int n, fri_set **sets)
{
    for (int j = 0; j < n; j++) {
        fri_obj *o = fri_lookup_read(c, &c->argv[first + j]);
        if (o && o->type != FRI_SET) {
            fri_reply_error(c, FRI_ERR_WRONGTYPE);
            return -1;
        }
        sets[j] = o ? o->ptr : NULL;
    }
    return 0;
}

/* Ends a STORE form with result (taken; NULL is an empty result): a non-empty result
 * replaces whatever dst held, whatever its type, and its TTL (Redis's setKey), answering
 * its size; an empty one deletes dst and answers 0.  dst is signalled when it changed. */
static void store_result(fr_client *c, const fri_arg *dst, fri_set *result, const char *event)
{
    size_t n = result ? fri_set_size(result) : 0;
    if (n == 0) {
        fri_set_free(result);
        if (fri_lookup_write(c, dst) && fri_db_delete(c->db, dst->ptr, dst->len)) {
            fri_signal_modified(c, c->db, dst->ptr, dst->len);
            fri_notify_key(c, FR_NOTIFY_GENERIC, "del", dst);
        }
        fri_reply_ll(c, 0);
        return;
    }
    fri_obj *o = fri_obj_new(FRI_SET, result);
    if (!o) {
        fri_set_free(result);
        fri_reply_error(c, FRI_ERR_OOM);
        return;
    }
    fri_lookup_write(c, dst); /* an expired destination goes first, as in setKey */
    fri_db_set(c->db, dst->ptr, dst->len, o, 0);
    fri_signal_modified(c, c->db, dst->ptr, dst->len);
    fri_reply_ll(c, (long long)n);
    fri_notify_key(c, FR_NOTIFY_SET, event, dst);
}

/* Sorts the inputs by size, smallest first, keeping the order of equals: Redis's qsort is
 * glibc's merge sort there, a stable one, and the first set decides the reply's order. */
static void sort_by_size(fri_set **sets, int n)
{
    for (int i = 1; i < n; i++) {
        fri_set *t = sets[i];
        int j = i - 1;
        for (; j >= 0 && fri_set_size(sets[j]) > fri_set_size(t); j--) sets[j + 1] = sets[j];
        sets[j + 1] = t;
    }
}

/* Redis's sinterGenericCommand for SINTER, SINTERSTORE (dst set) and SINTERCARD
 * (cardinality_only, stopping at limit unless it is 0) over the keys argv[first ..
 * first+n).  After the type checks, a missing key makes the result empty at once.  The
 * members of the smallest set (the first of the smallest) that every other set has are
 * the result, in that set's order: an intset's ascending order is exact, a table's is
 * insertion order where Redis's is its hash order. */
static void sinter_generic(fr_client *c, int first, int n, const fri_arg *dst,
                           int cardinality_only, long long limit)
{
    fri_set *small[8] = {0}; /* zeroed: GCC -O2 cannot see lookup_sets fill it */
    fri_set **sets = n <= 8 ? small : fri_malloc((size_t)n * sizeof(*sets));
    if (!sets) {
        fri_reply_error(c, FRI_ERR_OOM);
        return;
    }
    if (lookup_sets(c, first, n, sets) < 0) goto out;
    for (int j = 0; j < n; j++) {
        if (sets[j]) continue;
        if (dst) store_result(c, dst, NULL, "sinterstore");
        else if (cardinality_only) fri_reply_ll(c, 0);
        else fri_reply_empty_array(c);
        goto out;
    }
    sort_by_size(sets, n);

    fri_set *s0 = sets[0], *result = NULL;
    size_t handle = 0;
    long long card = 0;
    if (dst && !(result = set_new_result())) {
        fri_reply_error(c, FRI_ERR_OOM);
        goto out;
    }
    if (!dst && !cardinality_only) handle = fri_reply_deferred_len(c);
    size_t npos = set_positions(s0);
    for (size_t i = 0; i < npos; i++) {
        if (!set_live(s0, i)) continue;
        char tmp[32];
        size_t len;
        const char *p = set_member_at(s0, i, tmp, &len);
        int j = 1;
        while (j < n && (sets[j] == s0 || set_contains(sets[j], p, len))) j++;
        if (j < n) continue;
        if (cardinality_only) {
            if (++card == limit) break;
        } else if (!dst) {
            reply_member_at(c, s0, i);
            card++;
        } else if (set_add(result, p, len, c->srv->tun.set_max_intset_entries) < 0) {
            fri_set_free(result);
            fri_reply_error(c, FRI_ERR_OOM);
            goto out;
        }
    }
    if (dst) store_result(c, dst, result, "sinterstore");
    else if (cardinality_only) fri_reply_ll(c, card);
    else fri_reply_set_deferred_len(c, handle, (long)card);
out:
    if (sets != small) fri_free(sets);
}

/* Adds every member of s to result: 0, or -1 when out of memory. */
static int add_all(fri_set *result, fri_set *s, long long max_intset)
{
    size_t npos = set_positions(s);
    for (size_t i = 0; i < npos; i++) {
        if (!set_live(s, i)) continue;
        char tmp[32];
        size_t len;
        const char *p = set_member_at(s, i, tmp, &len);
        if (set_add(result, p, len, max_intset) < 0) return -1;
    }
    return 0;
}

typedef enum setop { SETOP_UNION, SETOP_DIFF } setop;

/* Redis's sunionDiffGenericCommand for SUNION, SDIFF and their STORE forms (dst set) over
 * the keys argv[first .. first+n), built the way Redis builds it, because the way shows:
 * the result starts as an empty intset and members enter it in the inputs' order, so it
 * is an intset (answered in ascending order, stored as one) exactly when Redis's is.
 *  - SUNION adds every member of every set.
 *  - SDIFF is empty when the first key is missing or named again later.  Otherwise Redis
 *    picks the cheaper of two ways, and the fake picks the same one: (1) add each member
 *    of the first set that no other set has; (2) add all of the first set, then remove
 *    every member of the others, which leaves a table when the first set was one (more
 *    than 512 members, or one not an integer) even if all that is left would fit an
 *    intset.  Redis sorts the other sets for way (1), which changes its work, not the
 *    result. */
static void sunion_diff_generic(fr_client *c, int first, int n, const fri_arg *dst, setop op)
{
    fri_set *small[8] = {0}; /* zeroed: GCC -O2 cannot see lookup_sets fill it */
    fri_set **sets = n <= 8 ? small : fri_malloc((size_t)n * sizeof(*sets));
    fri_set *result = NULL;
    if (!sets) {
        fri_reply_error(c, FRI_ERR_OOM);
        return;
    }
    if (lookup_sets(c, first, n, sets) < 0) goto out;
    int sameset = 0;
    for (int j = 1; j < n; j++)
        if (sets[j] && sets[j] == sets[0]) sameset = 1;
    int algo = 1;
    if (op == SETOP_DIFF && sets[0] && !sameset) {
        unsigned long long one = 0, two = 0;
        for (int j = 0; j < n; j++) {
            if (!sets[j]) continue;
            one += fri_set_size(sets[0]);
            two += fri_set_size(sets[j]);
        }
        algo = one / 2 <= two ? 1 : 2;
    }
    if (!(result = set_new_result())) goto oom;

    if (op == SETOP_UNION) {
        for (int j = 0; j < n; j++)
            if (sets[j] && add_all(result, sets[j], c->srv->tun.set_max_intset_entries) < 0)
                goto oom;
    } else if (sets[0] && !sameset && algo == 1) {
        fri_set *s0 = sets[0];
        size_t npos = set_positions(s0);
        for (size_t i = 0; i < npos; i++) {
            if (!set_live(s0, i)) continue;
            char tmp[32];
            size_t len;
            const char *p = set_member_at(s0, i, tmp, &len);
            int j = 1;
            while (j < n && (!sets[j] || !set_contains(sets[j], p, len))) j++;
            if (j == n && set_add(result, p, len, c->srv->tun.set_max_intset_entries) < 0)
                goto oom;
        }
    } else if (sets[0] && !sameset) {
        if (add_all(result, sets[0], c->srv->tun.set_max_intset_entries) < 0) goto oom;
        for (int j = 1; j < n && fri_set_size(result) > 0; j++) {
            if (!sets[j]) continue;
            size_t npos = set_positions(sets[j]);
            for (size_t i = 0; i < npos; i++) {
                if (!set_live(sets[j], i)) continue;
                char tmp[32];
                size_t len;
                const char *p = set_member_at(sets[j], i, tmp, &len);
                set_remove(result, p, len);
            }
        }
    }

    if (dst) {
        store_result(c, dst, result, op == SETOP_UNION ? "sunionstore" : "sdiffstore");
    } else {
        reply_all(c, result);
        fri_set_free(result);
    }
    result = NULL;
    goto out;
oom:
    fri_set_free(result);
    fri_reply_error(c, FRI_ERR_OOM);
out:
    if (sets != small) fri_free(sets);
}

/* SINTER key [key ...] */
static void sinter_command(fr_client *c) { sinter_generic(c, 1, c->argc - 1, NULL, 0, 0); }

/* SINTERSTORE destination key [key ...] */
static void sinterstore_command(fr_client *c)
{
    sinter_generic(c, 2, c->argc - 2, &c->argv[1], 0, 0);
}

/* SINTERCARD numkeys key [key ...] [LIMIT limit], checked in Redis's order: numkeys (an
 * integer from 1 to LONG_MAX, else "numkeys should be greater than 0", even for a
 * non-number), that many keys present, the options (LIMIT, an integer >= 0, the last one
 * winning; 0 means none), then the keys' types.  Answers the size of the intersection,
 * counting stopped at the limit. */
static void sintercard_command(fr_client *c)
{
    long long numkeys, limit = 0;
    if (fri_get_range_ll_or_reply(c, &c->argv[1], 1, LONG_MAX, &numkeys,
                                  "ERR numkeys should be greater than 0") < 0)
        return;
    if (numkeys > c->argc - 2) {
        fri_reply_error(c, "ERR Number of keys can't be greater than number of args");
        return;
    }
    for (int j = 2 + (int)numkeys; j < c->argc; j++) {
        if (fri_arg_is_cstr(&c->argv[j], "limit") && j + 1 < c->argc) {
            j++;
            if (fri_get_positive_ll_or_reply(c, &c->argv[j], &limit,
                                             "ERR LIMIT can't be negative") < 0)
                return;
        } else {
            fri_reply_error(c, FRI_ERR_SYNTAX);
            return;
        }
    }
    sinter_generic(c, 2, (int)numkeys, NULL, 1, limit);
}

/* SUNION key [key ...], SUNIONSTORE destination key [key ...], SDIFF and SDIFFSTORE. */
static void sunion_command(fr_client *c) { sunion_diff_generic(c, 1, c->argc - 1, NULL, SETOP_UNION); }
static void sunionstore_command(fr_client *c)
{
    sunion_diff_generic(c, 2, c->argc - 2, &c->argv[1], SETOP_UNION);
}
static void sdiff_command(fr_client *c) { sunion_diff_generic(c, 1, c->argc - 1, NULL, SETOP_DIFF); }
static void sdiffstore_command(fr_client *c)
{
    sunion_diff_generic(c, 2, c->argc - 2, &c->argv[1], SETOP_DIFF);
}

/* SINTERCARD's keys follow its numkeys. */
static int sintercardKeys(int argc, const fri_arg *argv, int *keys, int max)
{
    return fri_numkeys_keys(argc, argv, 1, 0, keys, max);
}

/* ----- SSCAN ------------------------------------------------------------------------------- */

/* SSCAN key cursor [MATCH pattern] [COUNT count], checked in Redis's order: the cursor,
 * the key (a missing one answers ["0", []] whatever the options), its type, then the
 * options.  An intset answers whole, ascending, with cursor 0, whatever the cursor and
 * COUNT, as Redis does.  A table is walked COUNT members at a time in insertion order with
 * the member's sequence number as the cursor (see keys.c's SCAN): every member present for
 * the whole walk comes exactly once (SREM's compaction keeps the numbers), but pages and
 * cursors differ from Redis's.  An SPOP that rebuilds the set (a count leaving few
 * members) starts new numbers, so a walk across it may miss or repeat members, where
 * Redis's bucket cursor would not. */
static void sscan_command(fr_client *c)
{
    fri_scan_args a;
    fri_set *s = fri_scan_key_or_reply(c, FRI_SET, &a);
    if (!s) return;
    size_t first = 0, end = set_positions(s);
    uint64_t next = 0;
    if (!s->intset) end = fri_dict_page(s->table, a.cursor, a.count, &first, &next);
    fri_reply_scan_cursor(c, next);
    size_t handle = fri_reply_deferred_len(c);
    long n = 0;
    for (size_t i = first; i < end; i++) {
        if (!set_live(s, i)) continue;
        char tmp[32];
        size_t len;
        const char *p = set_member_at(s, i, tmp, &len);
        if (!fri_scan_match(&a, p, len)) continue;
        fri_reply_bulk(c, p, len);
        n++;
    }
    fri_reply_set_deferred_len(c, handle, n);
}

/* ----- The command table --------------------------------------------------------------- */

#include "cmd_flags.h"

/* Arity, flags and key positions as COMMAND INFO reports them on Redis 7.0.15. */
const fri_command fri_set_commands[] = {
    {"sadd", sadd_command, -3, W | M | F, "set", 1, 1, 1, NULL, NULL},
    {"srem", srem_command, -3, W | F, "set", 1, 1, 1, NULL, NULL},
    {"smembers", smembers_command, 2, R, "set", 1, 1, 1, NULL, NULL},
    {"sismember", sismember_command, 3, R | F, "set", 1, 1, 1, NULL, NULL},
    {"smismember", smismember_command, -3, R | F, "set", 1, 1, 1, NULL, NULL},
    {"scard", scard_command, 2, R | F, "set", 1, 1, 1, NULL, NULL},
    {"spop", spop_command, -2, W | F, "set", 1, 1, 1, NULL, NULL},
    {"srandmember", srandmember_command, -2, R, "set", 1, 1, 1, NULL, NULL},
    {"smove", smove_command, 4, W | F, "set", 1, 2, 1, NULL, NULL},
    {"sinter", sinter_command, -2, R, "set", 1, -1, 1, NULL, NULL},
    {"sintercard", sintercard_command, -3, R, "set", 0, 0, 0, sintercardKeys, NULL},
    {"sinterstore", sinterstore_command, -3, W | M, "set", 1, -1, 1, NULL, NULL},
    {"sunion", sunion_command, -2, R, "set", 1, -1, 1, NULL, NULL},
    {"sunionstore", sunionstore_command, -3, W | M, "set", 1, -1, 1, NULL, NULL},
    {"sdiff", sdiff_command, -2, R, "set", 1, -1, 1, NULL, NULL},
    {"sdiffstore", sdiffstore_command, -3, W | M, "set", 1, -1, 1, NULL, NULL},
    {"sscan", sscan_command, -3, R, "set", 1, 1, 1, NULL, NULL},
    {0},
};

/* ----- DUMP and RESTORE (rdb.c) ------------------------------------------------------------ */

unsigned fri_set_intset_width(const fri_set *s) { return s->width ? s->width : 2; }

fri_set *fri_set_restore_new(int intset, unsigned width)
{
    fri_set *s = fri_calloc(1, sizeof(*s));
    if (!s) return NULL;
    s->intset = intset;
    s->width = width;
    if (!intset && !(s->table = fri_dict_new())) {
        fri_free(s);
        return NULL;
    }
    return s;
}

int fri_set_restore_add(fri_set *s, const char *p, size_t len)
{
    return set_add(s, p, len, LLONG_MAX);
}

int fri_set_restore_convert(fri_set *s) { return s->intset ? set_convert(s) : 0; }
