/* wsi_strmap.h -- a small string-to-index hash map (open addressing, FNV-1a), header
 * only.  It lives in common/ (the wsim_common target, never installed) because two
 * modules use it: libwsim's internals and the scenario runner.  The simulation's lookups
 * (an entry by its id, a scenario's alias by its name) must stay O(1) for 1,000-delivery
 * scenarios explored once per crash point.  Keys are copied (into blocks the map owns:
 * there is no removal); values are size_t.
 * Memory comes from wsi_alloc.h's family: out of memory makes wsi_strmap_put return -1
 * with the map unchanged (the scenario library reports it); wsi_strmap_xput, for targets
 * that define WSI_MODULE (the engine), aborts instead. */
#ifndef WSI_STRMAP_H
#define WSI_STRMAP_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "wsi_alloc.h"

typedef struct wsi_strmap_slot {
    char *key;      /* NULL: empty */
    size_t len;
    uint64_t hash;
    size_t value;
} wsi_strmap_slot;

/* A block of key copies: keys are never removed, so they live in a few blocks freed with
 * the map, not one allocation each (a fuzzing run makes and drops thousands of maps). */
typedef struct wsi_strmap_keys {
    struct wsi_strmap_keys *next; /* the previous (full) block */
    size_t used, cap;             /* bytes taken, bytes in data */
    char data[];
} wsi_strmap_keys;

typedef struct wsi_strmap {
    wsi_strmap_slot *slots;
    size_t cap;     /* a power of two, or 0 */
    size_t n;
    wsi_strmap_keys *keys; /* the key copies' blocks, newest first */
} wsi_strmap;

static inline uint64_t wsi_strmap_hash(const char *k, size_t len)
{
    uint64_t h = 0xcbf29ce484222325ULL;
    for (size_t i = 0; i < len; i++) {
        h ^= (unsigned char)k[i];
        h *= 0x100000001b3ULL;
    }
    return h;
}

/* A copy of k (len bytes and a NUL) in the map's key blocks, or NULL when out of memory. */
static inline char *wsi_strmap_key_copy(wsi_strmap *m, const char *k, size_t len)
{
    wsi_strmap_keys *b = m->keys;
    if (!b || b->cap - b->used < len + 1) {
        size_t cap = b ? b->cap * 2 : 512;
        if (cap < len + 1) cap = len + 1;
        wsi_strmap_keys *nb = (wsi_strmap_keys *)wsi_malloc(sizeof *nb + cap);
        if (!nb) return NULL;
        nb->next = b;
        nb->used = 0;
        nb->cap = cap;
        m->keys = b = nb;
    }
    char *p = b->data + b->used;
    if (len) memcpy(p, k, len);
    p[len] = '\0';
    b->used += len + 1;
    return p;
}

/* The slot holding key, or the empty slot where it would go. */
static inline wsi_strmap_slot *wsi_strmap_find(const wsi_strmap *m, const char *k, size_t len,
                                               uint64_t h)
{
    size_t mask = m->cap - 1;
    for (size_t i = (size_t)h & mask;; i = (i + 1) & mask) {
        wsi_strmap_slot *s = &m->slots[i];
        if (!s->key || (s->hash == h && s->len == len && memcmp(s->key, k, len) == 0)) return s;
    }
}

/* Sets key -> value (replacing an older value).  0, or -1 when out of memory (the map is
 * then as it was). */
static inline int wsi_strmap_put(wsi_strmap *m, const char *k, size_t len, size_t value)
{
    if ((m->n + 1) * 2 > m->cap) {
        wsi_strmap old = *m;
        size_t cap = old.cap ? old.cap * 2 : 16;
        wsi_strmap_slot *slots = (wsi_strmap_slot *)wsi_calloc(cap, sizeof *slots);
        if (!slots) return -1;
        m->slots = slots;
        m->cap = cap;
        m->n = 0;
        for (size_t i = 0; i < old.cap; i++)
            if (old.slots[i].key) {
                *wsi_strmap_find(m, old.slots[i].key, old.slots[i].len, old.slots[i].hash) =
                    old.slots[i];
                m->n++;
            }
        wsi_free(old.slots);
    }
    uint64_t h = wsi_strmap_hash(k, len);
    wsi_strmap_slot *s = wsi_strmap_find(m, k, len, h);
    if (!s->key) {
        char *copy = wsi_strmap_key_copy(m, k, len);
        if (!copy) return -1;
        s->key = copy;
        s->len = len;
        s->hash = h;
        m->n++;
    }
    s->value = value;
    return 0;
}

#ifdef WSI_MODULE
/* wsi_strmap_put that aborts when out of memory ("wsim: out of memory in WSI_MODULE"). */
static inline void wsi_strmap_xput(wsi_strmap *m, const char *k, size_t len, size_t value)
{
    if (wsi_strmap_put(m, k, len, value)) wsi_oom(WSI_MODULE);
}
#endif

/* 1 and *value when key is there, else 0. */
static inline int wsi_strmap_get(const wsi_strmap *m, const char *k, size_t len, size_t *value)
{
    if (!m->cap) return 0;
    const wsi_strmap_slot *s = wsi_strmap_find(m, k, len, wsi_strmap_hash(k, len));
    if (!s->key) return 0;
    *value = s->value;
    return 1;
}

static inline void wsi_strmap_free(wsi_strmap *m)
{
    for (wsi_strmap_keys *b = m->keys, *next; b; b = next) {
        next = b->next;
        wsi_free(b);
    }
    wsi_free(m->slots);
    memset(m, 0, sizeof *m);
}

#endif /* WSI_STRMAP_H */
