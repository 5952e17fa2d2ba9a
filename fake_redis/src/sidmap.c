/* sidmap.c -- the ordered id -> pointer map of sidmap.h: sorted blocks of entries.
 *
 * The keys live in blocks of up to BLOCK entries each, sorted within a block and from
 * one block to the next (a B+ tree's leaf level, found by a binary search over the
 * blocks instead of inner nodes).  A pending-entry list is mostly appended to at its
 * high end (XREADGROUP delivers ids above every pending one) and removed from at its low
 * end (consumers acknowledge their oldest deliveries first), which here is a write at
 * the end of the last block and an increment of the first block's start: no search, no
 * rebalancing, and neighbouring ids in neighbouring bytes.  Range scans (XPENDING,
 * XAUTOCLAIM, XINFO) walk consecutive entries.  Until issue 24 this was a treap, whose
 * insertions at the maximum descended the right spine and rotated, and whose scans
 * followed a pointer per key (docs/performance.md).
 *
 * Invariants (fri_sidmap_check): every block of the map holds 1 to BLOCK entries, in
 * e[start, end); keys increase strictly across the whole sequence; no value is NULL. */
#include <string.h>

#include "fr_alloc.h"
#include "sidmap.h"

#define BLOCK 64 /* entries a block holds: 1.5 KB, a few cache lines of keys per search */

typedef struct sm_ent {
    fri_sid key;
    void *val;
} sm_ent;

typedef struct sm_block {
    uint32_t start, end; /* the live entries are e[start, end) */
    sm_ent e[BLOCK];
} sm_block;

struct fri_sidmap {
    sm_block **b;  /* the blocks in key order: b[off, off + n) */
    size_t off;    /* blocks removed from the front leave room here */
    size_t n;      /* blocks in use, none empty */
    size_t cap;    /* slots of b */
    size_t len;    /* keys */
    uint64_t mods; /* bumped by every insert and removal: tells iterators to search again */
};

static inline sm_block *blk(const fri_sidmap *m, size_t i) { return m->b[m->off + i]; }
static inline fri_sid first_key(const sm_block *b) { return b->e[b->start].key; }
static inline fri_sid last_key(const sm_block *b) { return b->e[b->end - 1].key; }

fri_sidmap *fri_sidmap_new(void) { return fri_calloc(1, sizeof(fri_sidmap)); }

void fri_sidmap_free_with(fri_sidmap *m, void (*free_val)(void *val, void *arg), void *arg)
{
    if (!m) return;
    for (size_t i = 0; i < m->n; i++) {
        sm_block *b = blk(m, i);
        if (free_val)
            for (uint32_t k = b->start; k < b->end; k++) free_val(b->e[k].val, arg);
        fri_free(b);
    }
    fri_free(m->b);
    fri_free(m);
}

static void call_plain(void *val, void *arg)
{
    void (*free_val)(void *) = *(void (**)(void *))arg;
    free_val(val);
}

void fri_sidmap_free(fri_sidmap *m, void (*free_val)(void *val))
{
    fri_sidmap_free_with(m, free_val ? call_plain : NULL, &free_val);
}

size_t fri_sidmap_len(const fri_sidmap *m) { return m ? m->len : 0; }

/* The block that would hold id: the last one whose first key is <= id (0 when id is below
 * every key).  The map has blocks.  The two ends are tried first: appends and the oldest
 * acknowledgements land there. */
static size_t find_block(const fri_sidmap *m, fri_sid id)
{
    size_t n = m->n;
    if (fri_sid_cmp(id, first_key(blk(m, n - 1))) >= 0) return n - 1;
    if (n == 1 || fri_sid_cmp(id, first_key(blk(m, 1))) < 0) return 0;
    size_t lo = 1, hi = n - 1; /* first_key(lo) <= id < first_key(hi) */
    while (hi - lo > 1) {
        size_t mid = lo + (hi - lo) / 2;
        if (fri_sid_cmp(id, first_key(blk(m, mid))) >= 0) lo = mid;
        else hi = mid;
    }
    return lo;
}

/* The position in b of the first key >= id (b->end when none). */
static uint32_t lower_bound(const sm_block *b, fri_sid id)
{
    uint32_t lo = b->start, hi = b->end;
    if (hi > lo && fri_sid_cmp(b->e[lo].key, id) >= 0) return lo; /* the oldest first */
    while (lo < hi) {
        uint32_t mid = lo + (hi - lo) / 2;
        if (fri_sid_cmp(b->e[mid].key, id) < 0) lo = mid + 1;
        else hi = mid;
    }
    return lo;
}

/* Where id is (1, *bi and *pos set) or 0. */
static int locate(const fri_sidmap *m, fri_sid id, size_t *bi, uint32_t *pos)
{
    if (!m || !m->n) return 0;
    size_t i = find_block(m, id);
    const sm_block *b = blk(m, i);
    uint32_t p = lower_bound(b, id);
    if (p == b->end || fri_sid_cmp(b->e[p].key, id) != 0) return 0;
    *bi = i;
    *pos = p;
    return 1;
}

void *fri_sidmap_get(const fri_sidmap *m, fri_sid id)
{
    size_t bi;
    uint32_t p;
    return locate(m, id, &bi, &p) ? blk(m, bi)->e[p].val : NULL;
}

/* Room for a block at index at (0 .. n) of the sequence: the slot is made and holds
 * nb.  0, or -1 when out of memory. */
static int add_block(fri_sidmap *m, size_t at, sm_block *nb)
{
    if (m->off + m->n == m->cap) {
        if (m->off) {
            /* the front's room (blocks acknowledged away) is used first */
            memmove(m->b, m->b + m->off, m->n * sizeof(*m->b));
            m->off = 0;
        } else {
            size_t cap = m->cap ? m->cap * 2 : 4;
            sm_block **v = fri_realloc(m->b, cap * sizeof(*v));
            if (!v) return -1;
            m->b = v;
            m->cap = cap;
        }
    }
    sm_block **base = m->b + m->off;
    if (at < m->n) memmove(base + at + 1, base + at, (m->n - at) * sizeof(*base));
    base[at] = nb;
    m->n++;
    return 0;
}

static sm_block *new_block(void)
{
    sm_block *b = fri_malloc(sizeof(*b));
    if (b) b->start = b->end = 0;
    return b;
}

/* fri_sidmap_insert's general case: a search, a block split when full. */
__attribute__((noinline)) static int insert_search(fri_sidmap *m, fri_sid id, void *val)
{
    if (!m->n) {
        sm_block *b = new_block();
        if (!b || add_block(m, 0, b) < 0) {
            fri_free(b);
            return -1;
        }
        b->e[0] = (sm_ent){id, val};
        b->end = 1;
        m->len++;
        m->mods++;
        return 1;
    }
    size_t bi = find_block(m, id);
    sm_block *b = blk(m, bi);
    uint32_t p = lower_bound(b, id);
    if (p < b->end && fri_sid_cmp(b->e[p].key, id) == 0) return 0;
    if (b->end - b->start == BLOCK) {
        sm_block *nb = new_block();
        if (!nb || add_block(m, bi + 1, nb) < 0) {
            fri_free(nb);
            return -1;
        }
        if (p == b->end) {
            /* past the block's last key (an append, as deliveries are): a block of its own,
             * so that a list that only grows fills its blocks */
            nb->e[0] = (sm_ent){id, val};
            nb->end = 1;
            m->len++;
            m->mods++;
            return 1;
        }
        /* the upper half moves to the new block */
        uint32_t half = b->start + BLOCK / 2;
        memcpy(nb->e, b->e + half, (b->end - half) * sizeof(sm_ent));
        nb->end = b->end - half;
        b->end = half;
        if (p > half) {
            p -= half;
            b = nb;
        }
    }
    if (b->end < BLOCK) {
        if (p < b->end) memmove(b->e + p + 1, b->e + p, (b->end - p) * sizeof(sm_ent));
        b->end++;
    } else {
        /* full at the top, room at the bottom: the lower keys move down one */
        memmove(b->e + b->start - 1, b->e + b->start, (p - b->start) * sizeof(sm_ent));
        b->start--;
        p--;
    }
    b->e[p] = (sm_ent){id, val};
    m->len++;
    m->mods++;
    return 1;
}

int fri_sidmap_insert(fri_sidmap *m, fri_sid id, void *val)
{
    if (m->n) {
        /* above every key with room behind the last: a delivery's usual case */
        sm_block *b = blk(m, m->n - 1);
        if (b->end < BLOCK && fri_sid_cmp(id, last_key(b)) > 0) {
            b->e[b->end++] = (sm_ent){id, val};
            m->len++;
            m->mods++;
            return 1;
        }
    }
    return insert_search(m, id, val);
}

/* Takes block bi out of the sequence and frees it. */
static void drop_block(fri_sidmap *m, size_t bi)
{
    fri_free(blk(m, bi));
    if (bi == 0) {
        m->off++; /* the oldest block: no move */
    } else {
        sm_block **base = m->b + m->off;
        memmove(base + bi, base + bi + 1, (m->n - bi - 1) * sizeof(*base));
    }
    m->n--;
    if (!m->n) m->off = 0;
}

/* After a removal left block bi small, moves its entries into a neighbour that has room,
 * so that scattered removals (XCLAIM moving entries between consumers) do not leave a
 * long list of nearly empty blocks. */
static void maybe_merge(fri_sidmap *m, size_t bi)
{
    sm_block *b = blk(m, bi);
    uint32_t cnt = b->end - b->start;
    if (cnt > BLOCK / 4) return;
    if (bi + 1 < m->n) {
        sm_block *nx = blk(m, bi + 1);
        uint32_t ncnt = nx->end - nx->start;
        if (cnt + ncnt <= BLOCK) {
            /* b's entries go in front of nx's, all of them packed at nx's bottom */
            memmove(nx->e + cnt, nx->e + nx->start, ncnt * sizeof(sm_ent));
            memcpy(nx->e, b->e + b->start, cnt * sizeof(sm_ent));
            nx->start = 0;
            nx->end = cnt + ncnt;
            drop_block(m, bi);
            return;
        }
    }
    if (bi > 0) {
        sm_block *pv = blk(m, bi - 1);
        uint32_t pcnt = pv->end - pv->start;
        if (cnt + pcnt <= BLOCK) {
            if (pv->end + cnt > BLOCK) {
                memmove(pv->e, pv->e + pv->start, pcnt * sizeof(sm_ent));
                pv->start = 0;
                pv->end = pcnt;
            }
            memcpy(pv->e + pv->end, b->e + b->start, cnt * sizeof(sm_ent));
            pv->end += cnt;
            drop_block(m, bi);
        }
    }
}

/* After a removal left block bi with a quarter of its room or less: the block goes when
 * empty, else maybe into a neighbour.  Out of line: the removals that call it keep no
 * registers for it. */
__attribute__((noinline)) static void after_removal(fri_sidmap *m, size_t bi)
{
    sm_block *b = blk(m, bi);
    if (b->start == b->end) drop_block(m, bi);
    else if (m->n > 1) maybe_merge(m, bi);
}

/* fri_sidmap_remove's general case: a search, then the entry taken out of its block. */
__attribute__((noinline)) static void *remove_search(fri_sidmap *m, fri_sid id)
{
    size_t bi;
    uint32_t p;
    if (!locate(m, id, &bi, &p)) return NULL;
    sm_block *b = blk(m, bi);
    void *val = b->e[p].val;
    if (p == b->start) {
        b->start++;
    } else if (p + 1 == b->end) {
        b->end--;
    } else if (p - b->start < b->end - p) {
        memmove(b->e + b->start + 1, b->e + b->start, (p - b->start) * sizeof(sm_ent));
        b->start++;
    } else {
        memmove(b->e + p, b->e + p + 1, (b->end - p - 1) * sizeof(sm_ent));
        b->end--;
    }
    m->len--;
    m->mods++;
    if (b->end - b->start <= BLOCK / 4) after_removal(m, bi);
    return val;
}

void *fri_sidmap_remove(fri_sidmap *m, fri_sid id)
{
    if (!m || !m->n) return NULL;
    /* the oldest key (XACK of the oldest deliveries, in both PELs): its block's start
     * moves on */
    sm_block *b = blk(m, 0);
    if (fri_sid_cmp(id, first_key(b)) != 0) return remove_search(m, id);
    void *val = b->e[b->start++].val;
    m->len--;
    m->mods++;
    if (b->end - b->start <= BLOCK / 4) after_removal(m, 0);
    return val;
}

/* The first key >= id (gt: > id), as a block and position; 0 when there is none. */
static int seek_up(const fri_sidmap *m, fri_sid id, int gt, size_t *bi, uint32_t *pos)
{
    if (!m || !m->n) return 0;
    size_t i = find_block(m, id);
    const sm_block *b = blk(m, i);
    uint32_t p = lower_bound(b, id);
    if (gt && p < b->end && fri_sid_cmp(b->e[p].key, id) == 0) p++;
    if (p == b->end) {
        if (++i == m->n) return 0;
        p = blk(m, i)->start;
    }
    *bi = i;
    *pos = p;
    return 1;
}

/* The last key <= id (lt: < id), as a block and position; 0 when there is none. */
static int seek_down(const fri_sidmap *m, fri_sid id, int lt, size_t *bi, uint32_t *pos)
{
    if (!m || !m->n) return 0;
    size_t i = find_block(m, id);
    const sm_block *b = blk(m, i);
    uint32_t p = lower_bound(b, id); /* the first >= id: the one before it is < id */
    if (!lt && p < b->end && fri_sid_cmp(b->e[p].key, id) == 0) p++;
    if (p == b->start) {
        if (i == 0) return 0;
        b = blk(m, --i);
        p = b->end;
    }
    *bi = i;
    *pos = p - 1;
    return 1;
}

int fri_sidmap_seek(const fri_sidmap *m, fri_sid id, int op, fri_sid *out_id, void **out_val)
{
    size_t bi;
    uint32_t p;
    int found = op == FRI_SIDMAP_GE || op == FRI_SIDMAP_GT
                    ? seek_up(m, id, op == FRI_SIDMAP_GT, &bi, &p)
                    : seek_down(m, id, op == FRI_SIDMAP_LT, &bi, &p);
    if (!found) return 0;
    const sm_ent *e = &blk(m, bi)->e[p];
    if (out_id) *out_id = e->key;
    if (out_val) *out_val = e->val;
    return 1;
}

int fri_sidmap_first(const fri_sidmap *m, fri_sid *out_id, void **out_val)
{
    if (!m || !m->n) return 0;
    const sm_block *b = blk(m, 0);
    if (out_id) *out_id = first_key(b);
    if (out_val) *out_val = b->e[b->start].val;
    return 1;
}

int fri_sidmap_last(const fri_sidmap *m, fri_sid *out_id, void **out_val)
{
    if (!m || !m->n) return 0;
    const sm_block *b = blk(m, m->n - 1);
    if (out_id) *out_id = last_key(b);
    if (out_val) *out_val = b->e[b->end - 1].val;
    return 1;
}

void fri_sidmap_iter_init(fri_sidmap_iter *it, const fri_sidmap *m, fri_sid start, fri_sid end,
                          int rev)
{
    it->m = m;
    it->next = start;
    it->end = end;
    it->rev = rev;
    it->started = 0;
    it->done = rev ? fri_sid_cmp(start, end) < 0 : fri_sid_cmp(start, end) > 0;
    it->placed = 0;
    it->mods = 0;
}

int fri_sidmap_iter_next(fri_sidmap_iter *it, fri_sid *id, void **val)
{
    if (it->done) return 0;
    const fri_sidmap *m = it->m;
    size_t bi = it->block;
    uint32_t p = it->pos;
    int found;
    if (!it->placed || !m || it->mods != m->mods) {
        /* first step, or the map changed: search from the last key returned */
        found = it->rev ? seek_down(m, it->next, it->started, &bi, &p)
                        : seek_up(m, it->next, it->started, &bi, &p);
    } else {
        found = bi < m->n; /* the position the last step left */
    }
    if (!found) {
        it->done = 1;
        return 0;
    }
    const sm_block *b = blk(m, bi);
    const sm_ent *e = &b->e[p];
    if (it->rev ? fri_sid_cmp(e->key, it->end) < 0 : fri_sid_cmp(e->key, it->end) > 0) {
        it->done = 1;
        return 0;
    }
    it->next = e->key;
    it->started = 1;
    if (id) *id = e->key;
    if (val) *val = e->val;
    /* the position of the following key, for a next step on an unchanged map */
    if (!it->rev) {
        if (++p == b->end) {
            bi++;
            p = bi < m->n ? blk(m, bi)->start : 0;
        }
    } else if (p == b->start) {
        bi = bi == 0 ? m->n : bi - 1; /* m->n: nothing before */
        p = bi < m->n ? blk(m, bi)->end - 1 : 0;
    } else {
        p--;
    }
    it->block = bi;
    it->pos = p;
    it->placed = 1;
    it->mods = m->mods;
    return 1;
}

int fri_sidmap_check(const fri_sidmap *m)
{
    size_t count = 0;
    const fri_sid *prev = NULL;
    if (m->off + m->n > m->cap && m->n) return -1;
    for (size_t i = 0; i < m->n; i++) {
        const sm_block *b = blk(m, i);
        if (b->start >= b->end || b->end > BLOCK) return -1;
        for (uint32_t k = b->start; k < b->end; k++) {
            if (!b->e[k].val) return -1;
            if (prev && fri_sid_cmp(*prev, b->e[k].key) >= 0) return -1;
            prev = &b->e[k].key;
            count++;
        }
    }
    return count == m->len ? 0 : -2;
}
