/* t_set.c -- the set type: SADD, SREM, SMEMBERS, SPOP, SRANDMEMBER and friends.
 *
 * Redis 7.0 keeps a set as an intset (a sorted array of 64-bit integers) while every
 * member is an integer in string2ll's strict form and there are at most 512 of them, and
 * as a hash table otherwise, for good: removing the offending member or shrinking never
 * converts back.  An intset answers SMEMBERS in ascending numeric order, which clients can
 * see and come to rely on, so the fake models the two encodings with the same rules:
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

/* Redis's set-max-intset-entries default. */
#define SET_MAX_INTSET_ENTRIES 512
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
};

/* ----- The data structure ---------------------------------------------------------------- */

/* A new empty set in the encoding Redis's setTypeCreate picks for its first member: an
 * intset if that member is an integer.  NULL when out of memory. */
static fri_set *set_new(const char *first, size_t len)
{
    fri_set *s = calloc(1, sizeof(*s));
    if (!s) return NULL;
    s->intset = fri_string2ll(first, len, NULL);
    if (!s->intset && !(s->table = fri_dict_new())) {
        free(s);
        return NULL;
    }
    return s;
}

void fri_set_free(fri_set *s)
{
    if (!s) return;
    free(s->ints);
    fri_dict_free(s->table, NULL);
    free(s);
}

size_t fri_set_size(const fri_set *s)
{
    return s->intset ? s->nints : fri_dict_size(s->table);
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
    free(s->ints);
    s->ints = NULL;
    s->nints = s->cap = 0;
    s->table = t;
    s->intset = 0;
    s->nonint = 0;
    return 0;
}

/* Redis's setTypeAdd: 1 if added, 0 if already a member, -1 when out of memory (the set
 * is then unchanged, though possibly converted).  A non-integer member or a 513th one
 * turns an intset into a table. */
static int set_add(fri_set *s, const char *p, size_t len)
{
    if (s->intset) {
        long long v;
        if (fri_string2ll(p, len, &v)) {
            int found;
            size_t at = intset_search(s, v, &found);
            if (found) return 0;
            if (s->nints == s->cap) {
                size_t cap = s->cap ? s->cap * 2 : 8;
                long long *n = realloc(s->ints, cap * sizeof(*n));
                if (!n) return -1;
                s->ints = n;
                s->cap = cap;
            }
            memmove(s->ints + at + 1, s->ints + at, (s->nints - at) * sizeof(*s->ints));
            s->ints[at] = v;
            s->nints++;
            if (s->nints > SET_MAX_INTSET_ENTRIES && set_convert(s) < 0) {
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

/* Rebuilds the table without holes when deletions have left it mostly holes, so that
 * picking a random live slot by trial stays cheap.  Keeps the insertion order. */
static void table_maybe_compact(fri_set *s)
{
    size_t live = fri_dict_size(s->table), slots = fri_dict_slots(s->table);
    if (slots <= 2 * live + 32) return;
    fri_dict *t = fri_dict_new();
    if (!t) return; /* still correct, only slower */
    for (size_t i = 0; i < slots; i++) {
        fri_dent *e = fri_dict_slot(s->table, i);
        if (e && !fri_dict_add(t, e->key->buf, e->key->len, NULL)) {
            fri_dict_free(t, NULL);
            return;
        }
    }
    fri_dict_free(s->table, NULL);
    s->table = t;
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
 * are integers and at most 512, so a table of integers comes back sorted as well. */
static void reply_all_as_union(fr_client *c, fri_set *s)
{
    size_t size = fri_set_size(s);
    if (s->intset || s->nonint > 0 || size > SET_MAX_INTSET_ENTRIES) {
        reply_all(c, s);
        return;
    }
    long long sorted[SET_MAX_INTSET_ENTRIES];
    size_t k = 0, n = set_positions(s);
    for (size_t i = 0; i < n; i++) {
        fri_dent *e = fri_dict_slot(s->table, i);
        if (e) fri_string2ll(e->key->buf, e->key->len, &sorted[k++]);
    }
    qsort(sorted, k, sizeof(*sorted), cmp_ll);
    fri_reply_set_len(c, (long)k);
    for (size_t i = 0; i < k; i++) fri_reply_bulk_ll(c, sorted[i]);
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
static void saddCommand(fr_client *c)
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
        int r = set_add(o->ptr, c->argv[i].ptr, c->argv[i].len);
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
    if (added) signal_key(c);
    fri_reply_ll(c, added);
}

/* SREM key member [member ...]: how many were removed; the key goes with its last member. */
static void sremCommand(fr_client *c)
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
        fri_delete_if_empty(c, &c->argv[1], o);
        signal_key(c);
    }
    fri_reply_ll(c, removed);
}

/* SMEMBERS key: every member, an intset in ascending order; *0 for a missing key. */
static void smembersCommand(fr_client *c)
{
    int wrongtype;
    fri_obj *o = set_lookup(c, 0, &wrongtype);
    if (wrongtype) return;
    if (!o) fri_reply_empty_array(c);
    else reply_all(c, o->ptr);
}

/* SISMEMBER key member: 1 or 0. */
static void sismemberCommand(fr_client *c)
{
    int wrongtype;
    fri_obj *o = set_lookup(c, 0, &wrongtype);
    if (wrongtype) return;
    fri_reply_ll(c, o && set_contains(o->ptr, c->argv[2].ptr, c->argv[2].len));
}

/* SMISMEMBER key member [member ...]: 1 or 0 per member (all 0 for a missing key). */
static void smismemberCommand(fr_client *c)
{
    int wrongtype;
    fri_obj *o = set_lookup(c, 0, &wrongtype);
    if (wrongtype) return;
    fri_reply_array_len(c, c->argc - 2);
    for (int i = 2; i < c->argc; i++)
        fri_reply_ll(c, o && set_contains(o->ptr, c->argv[i].ptr, c->argv[i].len));
}

/* SCARD key: the number of members, 0 for a missing key. */
static void scardCommand(fr_client *c)
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
    pos_set p = {calloc(cap, sizeof(size_t)), cap - 1};
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
        if ((!keep && !(keep = set_new(p, len))) || set_add(keep, p, len) < 0) {
            fri_set_free(keep);
            free(stay.slots);
            return -1;
        }
    }
    fri_reply_set_len(c, (long)count);
    size_t n = set_positions(s);
    for (size_t i = 0; i < n; i++)
        if (set_live(s, i) && !pos_set_has(&stay, i)) reply_member_at(c, s, i);
    free(stay.slots);
    fri_set_free(s);
    o->ptr = keep;
    return 0;
}

/* SPOP key [count].  Without a count: one random member or nil.  With one: the count is
 * checked first ("must be positive"), then the key; a missing key or a count of 0 answers
 * an empty array, a count covering the set answers all of it (ordered as SUNION would
 * order it) and deletes the key. */
static void spopCommand(fr_client *c)
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
        set_remove_at(s, i);
        fri_delete_if_empty(c, &c->argv[1], o);
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
    if ((unsigned long long)count >= fri_set_size(s)) {
        reply_all_as_union(c, s);
        fri_db_delete(c->db, c->argv[1].ptr, c->argv[1].len);
    } else if (spop_some(c, o, (size_t)count) < 0) {
        fri_reply_error(c, FRI_ERR_OOM);
        return;
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
        size_t *pos = malloc(size * sizeof(*pos));
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
        free(pos);
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
    free(seen.slots);
    return 0;
}

/* SRANDMEMBER key [count].  Without a count: one random member or nil.  With one: the
 * count is checked first (any long but LONG_MIN); a negative count draws -count members
 * with repetition, a positive one distinct members, all of them (in the set's own order)
 * when count covers the set; a missing key or a count of 0 answers an empty array. */
static void srandmemberCommand(fr_client *c)
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
    int uniq = l >= 0;
    unsigned long long count = (unsigned long long)(l >= 0 ? l : -l);
    fri_obj *o = set_lookup(c, 0, &wrongtype);
    if (!o) {
        if (!wrongtype) fri_reply_empty_array(c);
        return;
    }
    fri_set *s = o->ptr;
    if (count == 0) {
        fri_reply_empty_array(c);
        return;
    }
    if (!uniq && count > FRI_MAX_REPLY_ELEMENTS) {
        /* Redis would try to build the reply until memory runs out; the fake says so */
        fri_reply_error(c, FRI_ERR_OOM);
        return;
    }
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

/* ----- The command table --------------------------------------------------------------- */

#define W FRI_CMD_WRITE
#define R FRI_CMD_READONLY
#define F FRI_CMD_FAST
#define M FRI_CMD_DENYOOM

/* Arity, flags and key positions as COMMAND INFO reports them on Redis 7.0.15. */
const fri_command fri_set_commands[] = {
    {"sadd", saddCommand, -3, W | M | F, "set", 1, 1, 1, NULL, NULL},
    {"srem", sremCommand, -3, W | F, "set", 1, 1, 1, NULL, NULL},
    {"smembers", smembersCommand, 2, R, "set", 1, 1, 1, NULL, NULL},
    {"sismember", sismemberCommand, 3, R | F, "set", 1, 1, 1, NULL, NULL},
    {"smismember", smismemberCommand, -3, R | F, "set", 1, 1, 1, NULL, NULL},
    {"scard", scardCommand, 2, R | F, "set", 1, 1, 1, NULL, NULL},
    {"spop", spopCommand, -2, W | F, "set", 1, 1, 1, NULL, NULL},
    {"srandmember", srandmemberCommand, -2, R, "set", 1, 1, 1, NULL, NULL},
    {0},
};
