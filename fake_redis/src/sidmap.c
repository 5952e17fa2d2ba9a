/* sidmap.c -- the ordered id -> pointer map of sidmap.h: a treap.
 *
 * Each node's priority is a hash of its key, and the tree is a binary search tree on the
 * keys and a max-heap on the priorities.  With hashed priorities the shape is that of a
 * random binary search tree (expected depth about 2 ln n) for any set of keys, including
 * the ever-growing ids that pending-entry lists receive, and it needs no random state. */
#include <stdlib.h>

#include "fr_alloc.h"
#include "sidmap.h"

typedef fri_sidmap_node sm_node;

/* Links remembered down the left spine (root, root->left, ...): the expected length is
 * about ln n (13 for a million keys), so a deeper spine simply goes without. */
#define SPINE_MAX 40

struct fri_sidmap {
    sm_node *root;
    size_t len;
    uint64_t mods; /* bumped by every insert and removal: tells iterators their path is stale */
    /* The left spine, to remove the smallest key without a search: consumers acknowledge
     * their oldest deliveries first, so XACK mostly removes the minimum of both PELs.
     * spine[i] is the link holding the i-th node of the spine (spine[0] = &root); the
     * last is the minimum.  Valid while spine_mods == mods (+ 1 so that a new map's
     * zeroed fields mean "not built"). */
    uint64_t spine_mods;       /* mods + 1 when the spine was last made valid, 0 never */
    int spine_len;             /* links in spine */
    sm_node **spine[SPINE_MAX];
};

/* A mix of both halves of the id (splitmix64's finaliser), cut to 32 bits: ties are rare
 * enough not to matter to the shape, and the node stays 48 bytes. */
static uint32_t prio_of(fri_sid id)
{
    uint64_t z = id.ms * 0x9e3779b97f4a7c15ull ^ (id.seq + 0x632be59bd9b4e019ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return (uint32_t)((z ^ (z >> 31)) >> 32);
}

fri_sidmap *fri_sidmap_new(void) { return fri_calloc(1, sizeof(fri_sidmap)); }

static void free_nodes(sm_node *n, void (*free_val)(void *val, void *arg), void *arg)
{
    while (n) {
        free_nodes(n->left, free_val, arg);
        /* read the node before free_val: an embedded node goes with its value */
        sm_node *right = n->right;
        void *val = n->val;
        if (n->owned) fri_free(n);
        if (free_val) free_val(val, arg);
        n = right; /* the right spine iteratively: no deep recursion on a degenerate side */
    }
}

static void call_plain(void *val, void *arg)
{
    void (*free_val)(void *) = *(void (**)(void *))arg;
    free_val(val);
}

void fri_sidmap_free(fri_sidmap *m, void (*free_val)(void *val))
{
    if (!m) return;
    free_nodes(m->root, free_val ? call_plain : NULL, &free_val);
    fri_free(m);
}

void fri_sidmap_free_with(fri_sidmap *m, void (*free_val)(void *val, void *arg), void *arg)
{
    if (!m) return;
    free_nodes(m->root, free_val, arg);
    fri_free(m);
}

size_t fri_sidmap_len(const fri_sidmap *m) { return m ? m->len : 0; }

void *fri_sidmap_get(const fri_sidmap *m, fri_sid id)
{
    const sm_node *n = m ? m->root : NULL;
    while (n) {
        int c = fri_sid_cmp(id, n->key);
        if (c == 0) return n->val;
        n = c < 0 ? n->left : n->right;
    }
    return NULL;
}

/* Splits t into the keys below key (*l) and above it (*r); key itself is not in t. */
static void split(sm_node *t, fri_sid key, sm_node **l, sm_node **r)
{
    while (t) {
        if (fri_sid_cmp(t->key, key) < 0) {
            *l = t;
            l = &t->right;
            t = t->right;
        } else {
            *r = t;
            r = &t->left;
            t = t->left;
        }
    }
    *l = NULL;
    *r = NULL;
}

/* Joins two treaps where every key of a is below every key of b. */
static sm_node *merge(sm_node *a, sm_node *b)
{
    sm_node *root = NULL, **link = &root;
    while (a && b) {
        if (a->prio >= b->prio) {
            *link = a;
            link = &a->right;
            a = a->right;
        } else {
            *link = b;
            link = &b->left;
            b = b->left;
        }
    }
    *link = a ? a : b;
    return root;
}

/* Links n (owned set by the caller) as id -> val: 1, or 0 when id is already a key (the
 * map unchanged).  One walk: down while the nodes outrank n, then a search of the
 * subtree below for id, then the split of that subtree around it. */
static int link_node(fri_sidmap *m, sm_node *n, fri_sid id, void *val)
{
    uint32_t prio = prio_of(id);
    sm_node **link = &m->root;
    while (*link && (*link)->prio >= prio) {
        int c = fri_sid_cmp(id, (*link)->key);
        if (c == 0) return 0;
        link = c < 0 ? &(*link)->left : &(*link)->right;
    }
    for (const sm_node *t = *link; t;) {
        int c = fri_sid_cmp(id, t->key);
        if (c == 0) return 0;
        t = c < 0 ? t->left : t->right;
    }
    n->key = id;
    n->val = val;
    n->prio = prio;
    split(*link, id, &n->left, &n->right);
    *link = n;
    m->len++;
    m->mods++;
    return 1;
}

int fri_sidmap_insert(fri_sidmap *m, fri_sid id, void *val)
{
    sm_node *n = fri_malloc(sizeof(*n));
    if (!n) return -1;
    n->owned = 1;
    if (!link_node(m, n, id, val)) {
        fri_free(n);
        return 0;
    }
    return 1;
}

int fri_sidmap_insert_node(fri_sidmap *m, fri_sidmap_node *node, fri_sid id, void *val)
{
    node->owned = 0;
    return link_node(m, node, id, val);
}

/* Frees a node the map allocated and returns val; out of line (and called last, so the
 * removal that calls it saves no registers), as PEL records embed their nodes. */
__attribute__((noinline)) static void *free_owned(sm_node *n, void *val)
{
    fri_free(n);
    return val;
}

/* Removes the minimum (the last node of the valid spine, which has no left child) and
 * keeps the spine valid: its right subtree takes its place, and that subtree's left
 * spine extends the map's.  Returns the minimum's value. */
static void *remove_min(fri_sidmap *m)
{
    int d = m->spine_len;
    sm_node **link = m->spine[d - 1];
    sm_node *n = *link;
    void *val = n->val;
    *link = n->right;
    if (!*link) d--;
    else
        for (sm_node **l = &(*link)->left; *l; l = &(*l)->left) {
            if (d == SPINE_MAX) {
                d = -1; /* too deep to remember: the next removal searches */
                break;
            }
            m->spine[d++] = l;
        }
    m->len--;
    m->mods++;
    if (d >= 0) {
        m->spine_len = d;
        m->spine_mods = m->mods + 1;
    }
    if (n->owned) return free_owned(n, val);
    return val;
}

static void *remove_search(fri_sidmap *m, fri_sid id, int record);

void *fri_sidmap_remove(fri_sidmap *m, fri_sid id)
{
    if (!m) return NULL;
    int record = m->spine_mods != m->mods + 1; /* the spine is to be (re)built */
    if (!record) {
        if (m->spine_len == 0) return NULL; /* empty */
        int c = fri_sid_cmp(id, (*m->spine[m->spine_len - 1])->key);
        if (c < 0) return NULL; /* below the smallest key */
        if (c == 0) return remove_min(m);
    }
    return remove_search(m, id, record);
}

/* A search; while it only turns left it walks the left spine, and when it ends there on
 * the minimum (record set: the spine was not valid), that spine is remembered for the
 * next removals.  Out of line: the common removal above needs none of its registers. */
__attribute__((noinline)) static void *remove_search(fri_sidmap *m, fri_sid id, int record)
{
    int d = 0;
    sm_node **link = &m->root;
    while (*link) {
        int c = fri_sid_cmp(id, (*link)->key);
        if (record) {
            if (d < SPINE_MAX) m->spine[d++] = link;
            else record = 0;
        }
        if (c == 0 && record && !(*link)->left) {
            m->spine_len = d;
            return remove_min(m);
        }
        if (c == 0) {
            sm_node *n = *link;
            void *val = n->val;
            *link = merge(n->left, n->right);
            if (n->owned) fri_free(n);
            m->len--;
            m->mods++;
            return val;
        }
        if (c > 0) record = 0;
        link = c < 0 ? &(*link)->left : &(*link)->right;
    }
    return NULL;
}

int fri_sidmap_seek(const fri_sidmap *m, fri_sid id, int op, fri_sid *out_id, void **out_val)
{
    const sm_node *n = m ? m->root : NULL, *best = NULL;
    while (n) {
        int c = fri_sid_cmp(n->key, id);
        int ok;
        switch (op) {
        case FRI_SIDMAP_GE: ok = c >= 0; break;
        case FRI_SIDMAP_GT: ok = c > 0; break;
        case FRI_SIDMAP_LE: ok = c <= 0; break;
        default: ok = c < 0; break;
        }
        if (op == FRI_SIDMAP_GE || op == FRI_SIDMAP_GT) {
            /* a candidate: look for a smaller one on the left */
            if (ok) {
                best = n;
                n = n->left;
            } else {
                n = n->right;
            }
        } else {
            if (ok) {
                best = n;
                n = n->right;
            } else {
                n = n->left;
            }
        }
    }
    if (!best) return 0;
    if (out_id) *out_id = best->key;
    if (out_val) *out_val = best->val;
    return 1;
}

int fri_sidmap_first(const fri_sidmap *m, fri_sid *out_id, void **out_val)
{
    return fri_sidmap_seek(m, FRI_SID_MIN, FRI_SIDMAP_GE, out_id, out_val);
}

int fri_sidmap_last(const fri_sidmap *m, fri_sid *out_id, void **out_val)
{
    return fri_sidmap_seek(m, FRI_SID_MAX, FRI_SIDMAP_LE, out_id, out_val);
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
    it->depth = -1;
    it->mods = 0;
}

/* Pushes n and its descendants toward the near side (left ones ascending, right ones
 * descending): the next keys in scan order.  0, or -1 when the path overflows. */
static int push_spine(fri_sidmap_iter *it, const sm_node *n)
{
    for (; n; n = it->rev ? n->right : n->left) {
        if (it->depth == FRI_SIDMAP_ITER_DEPTH) return -1;
        it->path[it->depth++] = n;
    }
    return 0;
}

/* Builds the path to the first key past it->next (at it->next itself before the first
 * step): every node on the way down whose key is in the scan's direction, where the
 * search turns toward the near side.  0, or -1 when the path overflows. */
static int build_path(fri_sidmap_iter *it)
{
    it->depth = 0;
    it->mods = it->m ? it->m->mods : 0;
    const sm_node *n = it->m ? it->m->root : NULL;
    while (n) {
        int c = fri_sid_cmp(n->key, it->next);
        int ahead = it->rev ? (it->started ? c < 0 : c <= 0) : (it->started ? c > 0 : c >= 0);
        if (ahead) {
            if (it->depth == FRI_SIDMAP_ITER_DEPTH) return -1;
            it->path[it->depth++] = n;
            n = it->rev ? n->right : n->left;
        } else {
            n = it->rev ? n->left : n->right;
        }
    }
    return 0;
}

/* The next key by a fresh search: the fallback for paths too deep to remember. */
static int seek_next(fri_sidmap_iter *it, fri_sid *k, void **v)
{
    int op = it->rev ? (it->started ? FRI_SIDMAP_LT : FRI_SIDMAP_LE)
                     : (it->started ? FRI_SIDMAP_GT : FRI_SIDMAP_GE);
    return fri_sidmap_seek(it->m, it->next, op, k, v);
}

int fri_sidmap_iter_next(fri_sidmap_iter *it, fri_sid *id, void **val)
{
    if (it->done) return 0;
    fri_sid k;
    void *v;
    int found;
    if (it->depth < 0 || !it->m || it->mods != it->m->mods) {
        if (build_path(it) < 0) it->depth = -1;
    }
    if (it->depth >= 0) {
        found = it->depth > 0;
        if (found) {
            const sm_node *n = it->path[--it->depth];
            k = n->key;
            v = n->val;
            /* what follows n: the near spine of its far subtree */
            if (push_spine(it, it->rev ? n->left : n->right) < 0) it->depth = -1;
        }
    } else {
        found = seek_next(it, &k, &v);
    }
    if (!found || (it->rev ? fri_sid_cmp(k, it->end) < 0 : fri_sid_cmp(k, it->end) > 0)) {
        it->done = 1;
        return 0;
    }
    it->next = k;
    it->started = 1;
    if (id) *id = k;
    if (val) *val = v;
    return 1;
}

/* Counts the nodes of a subtree after checking that its keys lie strictly between lo and
 * hi (when given) and that no child outranks its parent; -1 on a broken invariant. */
static long check_node(const sm_node *n, const fri_sid *lo, const fri_sid *hi)
{
    if (!n) return 0;
    if (lo && fri_sid_cmp(n->key, *lo) <= 0) return -1;
    if (hi && fri_sid_cmp(n->key, *hi) >= 0) return -1;
    if (n->prio != prio_of(n->key) || !n->val) return -1;
    if ((n->left && n->left->prio > n->prio) || (n->right && n->right->prio > n->prio)) return -1;
    long l = check_node(n->left, lo, &n->key);
    long r = check_node(n->right, &n->key, hi);
    if (l < 0 || r < 0) return -1;
    return l + r + 1;
}

int fri_sidmap_check(const fri_sidmap *m)
{
    long n = check_node(m->root, NULL, NULL);
    if (n < 0) return -1;
    if ((size_t)n != m->len) return -2;
    return 0;
}
