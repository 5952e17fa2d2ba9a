/* evict.c -- maxmemory's eviction, as Redis 7.0.15's evict.c (performEvictions) chooses
 * its victims, on the fake's clock and its seeded generator.
 *
 * The fake does not measure memory itself: its embedder's OOM hook (fr_server_set_oom_hook)
 * says whether the limit is passed (fakeredis-server: the process's malloc total against
 * maxmemory).  Before each command, while the hook says so and the policy allows it, one
 * key at a time is evicted, as Redis's loop frees memory key by key:
 *
 *  - allkeys-random / volatile-random: a random key (any key / a key with a TTL) of the
 *    next non-empty database, round robin over the databases as Redis's next_db;
 *  - the LRU, LFU and TTL policies: every database with candidates gives
 *    maxmemory-samples sampled keys (Redis's dictGetSomeKeys: here random slots of the
 *    database's table, drawn from the server's generator) to a pool of 16 kept between
 *    evictions, ordered by how good a victim each is -- idle time on the LRU clock, 255
 *    less the decayed LFU counter, or the nearest deadline -- and the best one that still
 *    exists goes (evictionPoolPopulate, its insertion rules included);
 *  - each evicted key: deleted, its WATCHers and the key hook told (client-side caching
 *    invalidates it), an "evicted" keyspace event (class e), a DEL into the AOF, INFO's
 *    evicted_keys.
 *
 * When nothing is left to evict the command is refused as under noeviction (-OOM for a
 * deny-oom command, server.c).  Not done: Redis's time limit on one eviction round
 * (maxmemory-eviction-tenacity), lazyfree-lazy-eviction's background freeing. */
#include <stdint.h>
#include <string.h>

#include "fr_alloc.h"
#include "fr_int.h"

enum { POOL_SIZE = 16 }; /* Redis's EVPOOL_SIZE */

/* One candidate of the pool. */
typedef struct pool_entry {
    unsigned long long idle; /* larger: a better victim */
    fri_str *key;            /* NULL: an empty place */
    int db;                  /* its database */
} pool_entry;

struct fri_evict_pool {
    pool_entry e[POOL_SIZE]; /* ascending idle, empty places to the right */
    int next_db;             /* the random policies' round robin (Redis's next_db) */
};

static int policy(const fr_server *s) { return s->tun.maxmemory_policy; }

static int is_candidate(const fr_server *s, const fri_obj *o)
{
    return (policy(s) & FRI_MAXMEMORY_FLAG_ALLKEYS) || o->expire_ms >= 0;
}

/* How good a victim o is (Redis's idle score for the policy). */
static unsigned long long victim_score(fr_server *s, const fri_obj *o, int64_t now)
{
    if (policy(s) & FRI_MAXMEMORY_FLAG_LRU) return fri_obj_lru_idle(s, o, now) * 1000ULL;
    if (policy(s) & FRI_MAXMEMORY_FLAG_LFU) return 255 - fri_obj_lfu_counter(s, o, now);
    return UINT64_MAX - (unsigned long long)o->expire_ms; /* volatile-ttl */
}

/* A random candidate of db, or NULL: random slots first, then a walk from a random slot
 * (a table of holes or few keys with a TTL). */
static fri_dent *random_candidate(fr_server *s, fri_dict *d)
{
    size_t slots = fri_dict_slots(d);
    if (slots == 0) return NULL;
    for (int tries = 0; tries < 16; tries++) {
        fri_dent *e = fri_dict_slot(d, (size_t)(fri_random(s) % slots));
        if (e && e->key && is_candidate(s, e->v.ptr)) return e;
    }
    size_t start = (size_t)(fri_random(s) % slots);
    for (size_t k = 0; k < slots; k++) {
        fri_dent *e = fri_dict_slot(d, (start + k) % slots);
        if (e && e->key && is_candidate(s, e->v.ptr)) return e;
    }
    return NULL;
}

/* evictionPoolPopulate's insertion of one sampled key. */
static void pool_insert(pool_entry *pool, unsigned long long idle, const fri_str *key, int db)
{
    int k = 0;
    while (k < POOL_SIZE && pool[k].key && pool[k].idle < idle) k++;
    if (k == 0 && pool[POOL_SIZE - 1].key) return; /* worse than every entry of a full pool */
    if (k < POOL_SIZE && !pool[k].key) {
        /* an empty place: take it */
    } else if (!pool[POOL_SIZE - 1].key) {
        fri_str_free(pool[POOL_SIZE - 1].key);
        memmove(pool + k + 1, pool + k, sizeof(*pool) * (size_t)(POOL_SIZE - k - 1));
    } else {
        k--; /* full: drop the worst (leftmost) and insert before k */
        fri_str_free(pool[0].key);
        memmove(pool, pool + 1, sizeof(*pool) * (size_t)k);
    }
    pool[k].key = fri_str_new(key->buf, key->len); /* NULL when out of memory: an empty place */
    pool[k].idle = idle;
    pool[k].db = db;
}

/* The best victim by the pool (LRU, LFU, TTL policies): its db and key copied to *db,
 * *key (the caller frees it), or 0 when no database has a candidate. */
static int pool_victim(fr_server *s, struct fri_evict_pool *p, int64_t now, int *db,
                       fri_str **key)
{
    long long samples = s->tun.maxmemory_samples > 0 ? s->tun.maxmemory_samples : 5;
    for (;;) {
        int any = 0;
        for (int j = 0; j < FRI_DBNUM; j++) {
            fri_dict *d = s->db[j].keys;
            if (fri_dict_size(d) == 0) continue;
            for (long long n = 0; n < samples; n++) {
                fri_dent *e = random_candidate(s, d);
                if (!e) break;
                any = 1;
                pool_insert(p->e, victim_score(s, e->v.ptr, now), e->key, j);
            }
        }
        if (!any) return 0;
        /* from the best end: the first entry whose key still exists (as a candidate) */
        for (int k = POOL_SIZE - 1; k >= 0; k--) {
            pool_entry *pe = &p->e[k];
            if (!pe->key) continue;
            fri_str *name = pe->key;
            int dbid = pe->db;
            memmove(pe, pe + 1, sizeof(*pe) * (size_t)(POOL_SIZE - k - 1));
            p->e[POOL_SIZE - 1].key = NULL;
            fri_dent *e = fri_dict_find(s->db[dbid].keys, name->buf, name->len);
            if (e && is_candidate(s, e->v.ptr)) {
                *db = dbid;
                *key = name;
                return 1;
            }
            fri_str_free(name); /* a ghost: gone since it was sampled */
        }
    }
}

/* Evicts one key by the policy: 1, or 0 when there is none to evict. */
static int evict_one(fr_server *s, int64_t now)
{
    struct fri_evict_pool *p = s->evict_pool;
    if (!p && !(p = s->evict_pool = fri_calloc(1, sizeof(*p)))) return 0;
    int db = -1;
    fri_str *key = NULL;
    if (policy(s) & (FRI_MAXMEMORY_FLAG_LRU | FRI_MAXMEMORY_FLAG_LFU) ||
        policy(s) == FRI_MAXMEMORY_VOLATILE_TTL) {
        if (!pool_victim(s, p, now, &db, &key)) return 0;
    } else {
        for (int i = 0; i < FRI_DBNUM && !key; i++) {
            int j = p->next_db = (p->next_db + 1) % FRI_DBNUM;
            fri_dent *e = random_candidate(s, s->db[j].keys);
            if (e && !(key = fri_str_new(e->key->buf, e->key->len))) return 0;
            db = j;
        }
        if (!key) return 0;
    }
    fri_db *d = &s->db[db];
    fri_db_delete(d, key->buf, key->len);
    s->stat_evicted_keys++;
    fri_signal_modified(NULL, d, key->buf, key->len);
    fri_notify(s, FR_NOTIFY_EVICTED, "evicted", key->buf, key->len, db);
    if (s->prop) fri_propagate_deletion(s, db, key->buf, key->len);
    fri_str_free(key);
    return 1;
}

/* Evicts while over the limit. */
static void evict_while_over(fr_server *s, int64_t now)
{
    if (!s->tun.maxmemory || !s->oom_hook || policy(s) == FRI_MAXMEMORY_NO_EVICTION) return;
    while (s->oom_hook(s, s->oom_hook_ctx) && evict_one(s, now)) {
    }
}

void fri_evict_before_command(fr_server *s, int64_t now)
{
    s->evicting = 1;
    evict_while_over(s, now);
    s->evicting = 0;
}

size_t fr_server_evict(fr_server *s)
{
    fr_server *guard = fri_mem_enter(s, "fr_server_evict");
    unsigned long long before = s->stat_evicted_keys;
    evict_while_over(s, fr_clock_now(s)); /* inside the embedder's command: not "before" */
    fri_mem_leave(guard);
    return (size_t)(s->stat_evicted_keys - before);
}

int fr_server_evicting(const fr_server *s) { return s->evicting; }

void fri_evict_pool_free(fr_server *s)
{
    if (!s->evict_pool) return;
    for (int k = 0; k < POOL_SIZE; k++) fri_str_free(s->evict_pool->e[k].key);
    fri_free(s->evict_pool);
    s->evict_pool = NULL;
}

unsigned long long fr_server_evicted_keys(const fr_server *s) { return s->stat_evicted_keys; }
