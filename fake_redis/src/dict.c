/* dict.c -- the ordered hash table behind the keyspace, hashes, sets and sorted sets.
 *
 * Entries live in a dense array in insertion order; an open-addressing index (linear
 * probing, load <= 1/2) maps a hash to a position in that array.  Deleting leaves a hole
 * in the array and a tombstone in the index; holes are squeezed out only when the array
 * must grow, which keeps the order and the sequence numbers.  Insertion order is what
 * Redis's small (listpack) hashes answer in, and the sequence numbers give SCAN a cursor
 * that survives compaction. */
#include <stdlib.h>
#include <string.h>

#include "fr_int.h"

/* An index slot holds a dense position (plus 2) in its low 32 bits and the top 32 bits
 * of the entry's hash in its high bits: a probe rejects almost every other key by that
 * tag alone, without loading the entry (and then its key) from memory. */
#define IDX_EMPTY 0u
#define IDX_TOMB 1u /* low halves >= 2 are dense positions + 2 */
#define IDX_POS(v) ((uint32_t)(v))
#define IDX_TAG(h) ((h) >> 32)
#define IDX_MAKE(pos, h) ((uint64_t)(uint32_t)((pos) + 2) | (IDX_TAG(h) << 32))

struct fri_dict {
    fri_dent *ents;   /* dense array, insertion order, holes have key == NULL */
    size_t nents;     /* used positions, holes included */
    size_t cap;       /* allocated positions */
    size_t live;      /* entries that are not holes */
    uint64_t *index;  /* open-addressing table, size mask+1 (a power of two) */
    size_t mask;
    size_t tombs;     /* tombstones in the index: they count towards its load */
    uint64_t next_seq;
};

/* A fast, fixed-seed 64-bit hash (wyhash-style mixing): determinism matters more to us
 * than resistance to hash flooding, which an in-process test fake does not face. */
static uint64_t mix64(uint64_t a, uint64_t b)
{
    __uint128_t r = (__uint128_t)a * b;
    return (uint64_t)(r >> 64) ^ (uint64_t)r;
}

/* The n < 8 bytes at p as a little-endian word, zero-padded, reading no byte past them
 * (what memcpy into a zeroed word gives, without the call): two overlapping loads cover
 * 4..7 bytes, three single bytes cover 1..3. */
static inline uint64_t load_tail(const char *p, size_t n)
{
    if (n >= 4) {
        uint32_t lo, hi;
        memcpy(&lo, p, 4);
        memcpy(&hi, p + n - 4, 4);
        return (uint64_t)lo | ((uint64_t)hi << (8 * (n - 4)));
    }
    if (n == 0) return 0;
    return (uint64_t)(uint8_t)p[0] | ((uint64_t)(uint8_t)p[n / 2] << (8 * (n / 2))) |
           ((uint64_t)(uint8_t)p[n - 1] << (8 * (n - 1)));
}

/* key[0..len) equal to the len bytes at s: inline for the short keys most lookups have. */
static inline int same_bytes(const char *s, const char *key, size_t len)
{
    if (len <= 16) {
        if (len < 8) return load_tail(s, len) == load_tail(key, len);
        uint64_t a0, b0, a1, b1;
        memcpy(&a0, s, 8);
        memcpy(&b0, key, 8);
        memcpy(&a1, s + len - 8, 8);
        memcpy(&b1, key + len - 8, 8);
        return a0 == b0 && a1 == b1;
    }
    return memcmp(s, key, len) == 0;
}

static uint64_t hash_bytes(const char *p, size_t len)
{
    const uint64_t k0 = 0xa0761d6478bd642full, k1 = 0xe7037ed1a0b428dbull;
    uint64_t h = k0 ^ (len * k1);
    size_t i = 0;
    for (; i + 8 <= len; i += 8) {
        uint64_t w;
        memcpy(&w, p + i, 8);
        h = mix64(h ^ w, k1);
    }
    size_t rest = len - i;
    uint64_t tail = load_tail(p + i, rest);
    h = mix64(h ^ tail ^ ((uint64_t)rest << 56), k0);
    return mix64(h, k1 ^ 0x8ebc6af09c88c6e3ull);
}

fri_dict *fri_dict_new(void)
{
    return fri_calloc(1, sizeof(fri_dict));
}

fri_dict *fri_dict_new_n(size_t n) { return fri_calloc(n ? n : 1, sizeof(fri_dict)); }

fri_dict *fri_dict_nth(fri_dict *first, size_t i) { return first + i; }

size_t fri_dict_size(const fri_dict *d) { return d->live; }

static void free_entries(fri_dict *d, void (*free_val)(fri_val *v))
{
    for (size_t i = 0; i < d->nents; i++) {
        if (!d->ents[i].key) continue;
        if (free_val) free_val(&d->ents[i].v);
        fri_str_free(d->ents[i].key);
    }
}

void fri_dict_free(fri_dict *d, void (*free_val)(fri_val *v))
{
    if (!d) return;
    free_entries(d, free_val);
    fri_free(d->ents);
    fri_free(d->index);
    fri_free(d);
}

void *fri_calloc_with_dicts(size_t size, size_t n)
{
    fri_dict **d = fri_calloc(1, size);
    if (!d) return NULL;
    for (size_t i = 0; i < n; i++) {
        if (!(d[i] = fri_dict_new())) {
            while (i--) fri_dict_free(d[i], NULL);
            fri_free(d);
            return NULL;
        }
    }
    return d;
}

void fri_dict_free_n(fri_dict *first, size_t n, void (*free_val)(fri_val *v))
{
    if (!first) return;
    for (size_t i = 0; i < n; i++) {
        free_entries(&first[i], free_val);
        fri_free(first[i].ents);
        fri_free(first[i].index);
    }
    fri_free(first);
}

void fri_dict_clear(fri_dict *d, void (*free_val)(fri_val *v))
{
    free_entries(d, free_val);
    fri_free(d->ents);
    fri_free(d->index);
    uint64_t seq = d->next_seq; /* keep sequence numbers increasing across a clear */
    memset(d, 0, sizeof(*d));
    d->next_seq = seq;
}

/* The index size for the array's capacity: a power of two, at least twice the capacity. */
static size_t index_size(const fri_dict *d)
{
    size_t size = 8;
    while (size < d->cap * 2) size *= 2;
    return size;
}

/* Makes idx (size entries, zeroed) the index of the current entries. */
static void install_index(fri_dict *d, uint64_t *idx, size_t size)
{
    fri_free(d->index);
    d->index = idx;
    d->mask = size - 1;
    d->tombs = 0;
    for (size_t i = 0; i < d->nents; i++) {
        if (!d->ents[i].key) continue;
        size_t j = d->ents[i].hash & d->mask;
        while (idx[j] != IDX_EMPTY) j = (j + 1) & d->mask;
        idx[j] = IDX_MAKE(i, d->ents[i].hash);
    }
}

/* Rebuilds the index for the current entries with room for the array's capacity. */
static int rebuild_index(fri_dict *d)
{
    size_t size = index_size(d);
    uint64_t *idx = fri_calloc(size, sizeof(*idx));
    if (!idx) return -1;
    install_index(d, idx, size);
    return 0;
}

/* Moves the live entries down over the holes, keeping their order and sequence numbers. */
static void squeeze(fri_dict *d)
{
    size_t w = 0;
    for (size_t r = 0; r < d->nents; r++)
        if (d->ents[r].key) d->ents[w++] = d->ents[r];
    d->nents = w;
}

/* Makes room for one more entry: squeezes holes out when they are many, else grows. */
static int make_room(fri_dict *d)
{
    if (d->nents < d->cap) {
        /* trailing holes are reused in place, so tombstones can outgrow the holes */
        if ((d->live + d->tombs + 1) * 2 > d->mask + 1) return rebuild_index(d);
        return 0;
    }
    size_t holes = d->nents - d->live;
    size_t newcap = d->cap;
    if (holes == 0 || holes < d->live / 2) newcap = d->cap ? d->cap * 2 : 4;
    if (newcap > UINT32_MAX / 4) return -1;
    if (newcap != d->cap) {
        /* growing keeps every position, so the old index stays right if what follows fails */
        fri_dent *n = fri_realloc(d->ents, newcap * sizeof(*n));
        if (!n) return -1;
        d->ents = n;
        d->cap = newcap;
    }
    size_t size = index_size(d);
    uint64_t *idx = fri_calloc(size, sizeof(*idx)); /* before anything moves */
    if (!idx) return -1;
    if (holes) squeeze(d);
    install_index(d, idx, size);
    return 0;
}

/* Finds key: returns its index slot (for deletion) in *slot, or the dense position. */
static fri_dent *lookup(const fri_dict *d, const char *key, size_t len, uint64_t h,
                        size_t *slot)
{
    if (!d->index) return NULL;
    size_t j = h & d->mask;
    uint64_t tag = IDX_TAG(h);
    for (;;) {
        uint64_t v = d->index[j];
        if (v == IDX_EMPTY) return NULL;
        if ((v >> 32) == tag && IDX_POS(v) != IDX_TOMB) {
            fri_dent *e = &d->ents[IDX_POS(v) - 2];
            if (e->hash == h && e->key->len == len && same_bytes(e->key->buf, key, len)) {
                if (slot) *slot = j;
                return e;
            }
        }
        j = (j + 1) & d->mask;
    }
}

fri_dent *fri_dict_find(fri_dict *d, const char *key, size_t len)
{
    if (d->live == 0) return NULL;
    return lookup(d, key, len, hash_bytes(key, len), NULL);
}

fri_dent *fri_dict_add(fri_dict *d, const char *key, size_t len, int *created)
{
    uint64_t h = hash_bytes(key, len);
    fri_dent *e = lookup(d, key, len, h, NULL);
    if (e) {
        if (created) *created = 0;
        return e;
    }
    if (make_room(d) < 0) return NULL;
    fri_str *k = fri_str_new(key, len);
    if (!k) return NULL;
    size_t pos = d->nents++;
    e = &d->ents[pos];
    e->key = k;
    e->hash = h;
    e->seq = ++d->next_seq;
    memset(&e->v, 0, sizeof(e->v));
    size_t j = h & d->mask;
    while (IDX_POS(d->index[j]) != IDX_EMPTY && IDX_POS(d->index[j]) != IDX_TOMB)
        j = (j + 1) & d->mask;
    if (IDX_POS(d->index[j]) == IDX_TOMB) d->tombs--;
    d->index[j] = IDX_MAKE(pos, h);
    d->live++;
    if (created) *created = 1;
    return e;
}

int fri_dict_delete(fri_dict *d, const char *key, size_t len, fri_val *old)
{
    size_t slot;
    if (d->live == 0) return 0;
    fri_dent *e = lookup(d, key, len, hash_bytes(key, len), &slot);
    if (!e) return 0;
    if (old) *old = e->v;
    fri_str_free(e->key);
    e->key = NULL;
    d->index[slot] = IDX_TOMB;
    d->tombs++;
    d->live--;
    if (d->live == 0) {
        /* empty: start over with a clean index, so tombstones never pile up */
        d->nents = 0;
        d->tombs = 0;
        memset(d->index, 0, (d->mask + 1) * sizeof(*d->index));
    } else {
        while (d->nents && !d->ents[d->nents - 1].key) d->nents--;
    }
    return 1;
}

size_t fri_dict_slots(const fri_dict *d) { return d->nents; }

fri_dent *fri_dict_slot(fri_dict *d, size_t i)
{
    if (i >= d->nents || !d->ents[i].key) return NULL;
    return &d->ents[i];
}

size_t fri_dict_slot_from_seq(const fri_dict *d, uint64_t seq)
{
    size_t lo = 0, hi = d->nents;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (d->ents[mid].seq < seq) lo = mid + 1;
        else hi = mid;
    }
    return lo;
}

size_t fri_dict_page(const fri_dict *d, uint64_t cursor, long long count, size_t *first,
                     uint64_t *next)
{
    size_t i = fri_dict_slot_from_seq(d, cursor);
    long long seen = 0;
    *first = i;
    *next = 0;
    for (; i < d->nents; i++) {
        if (!d->ents[i].key) continue;
        if (seen == count) {
            *next = d->ents[i].seq;
            break;
        }
        seen++;
    }
    return i;
}

int fri_dict_compact(fri_dict *d)
{
    if (d->nents == d->live) return 0;
    size_t size = index_size(d);
    uint64_t *idx = fri_calloc(size, sizeof(*idx)); /* before anything moves */
    if (!idx) return -1;
    squeeze(d);
    install_index(d, idx, size);
    return 0;
}
