/* t_sort.c -- SORT and SORT_RO: the elements of a list, a set or a sorted set, sorted as
 * numbers or as strings, by the element itself or by the value of other keys (BY), with
 * the values of other keys answered in their place (GET), cut by LIMIT, and stored as a
 * list (STORE).
 *
 * Everything a client can see follows Redis 7.0.15's sortCommandGeneric:
 *
 *  - Options are read left to right and the first bad one answers its error: a syntax
 *    error (STORE is no option of SORT_RO), a LIMIT that is not two integers, and, in
 *    cluster mode, any GET and any BY whose pattern has a '*'.  Only then is the key
 *    looked up (WRONGTYPE for a string, a hash or a stream; a missing key is an empty
 *    list).
 *  - BY with a pattern that has no '*' ("BY nosort") sorts nothing: a list answers in its
 *    order and a sorted set in rank order, both reversed by DESC; a set answers in its own
 *    order, which DESC does not change, except with STORE, where Redis sorts it as ALPHA
 *    so that replicas agree (scripts would too; the fake has none).
 *  - Numbers are read with strtod, as Redis reads them: leading spaces, hex, "inf" and ""
 *    (zero) are accepted; trailing bytes, nan and out-of-range values answer "One or more
 *    scores can't be converted into double".  A BY key that is missing counts as 0.
 *    Redis tests errno without resetting it first, so an ERANGE that an earlier command
 *    left fails the values it reads with strtod: the fake reads the mirror of Redis's
 *    errno (fr_int.h, fri_errno_load) and knows which values Redis holds as integers.
 *  - Ties.  Numbers that are equal compare their elements' bytes.  ALPHA compares with
 *    strcoll, except with STORE, where it compares bytes; the fake's strcoll is that of
 *    the C and C.UTF-8 locales (the one redis-server runs under when LANG is unset or
 *    C.UTF-8), i.e. bytes up to the first NUL, so "a" and "a\0b" tie.  With ALPHA and BY,
 *    elements whose BY key is missing come first and tie with each other.  Which order
 *    tied elements end in is decided by the algorithm: Redis runs the C library's qsort
 *    (glibc's is a stable merge sort) unless there is a BY pattern and a LIMIT that cuts
 *    the result, in which case it runs its own pqsort, a Bentley-McIlroy quicksort that
 *    skips partitions outside the range.  The fake runs the same two algorithms on the
 *    same input, so tied elements of a list come out as Redis's do.  A set kept as a hash
 *    table and a sorted set are loaded in Redis's hash order, which nobody can predict,
 *    so there the order of tied elements cannot match.
 *  - LIMIT offset count is clamped to the collection as Redis clamps it: a negative offset
 *    is 0, a negative count means "to the end", huge values stop at the end.
 *  - SORT on a sorted set converts it to a skiplist for good (Redis's zsetConvert), which
 *    later lex ranges and -0 scores show.
 *  - STORE replaces the destination, whatever it held, by a list without a TTL, or
 *    deletes it when the result is empty; the reply is the number of elements stored (a
 *    GET that finds nothing stores "").
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "fr_int.h"

#define SORT_ERR_SCORES "ERR One or more scores can't be converted into double"
#define SORT_ERR_BY_CLUSTER "ERR BY option of SORT denied in Cluster mode."
#define SORT_ERR_GET_CLUSTER "ERR GET option of SORT denied in Cluster mode."

/* pqsort sorts runs shorter than this by insertion, as Bentley and McIlroy's qsort. */
#define PQSORT_INSERTION 7
/* Above this many elements its pivot is the median of three medians of three. */
#define PQSORT_NINTHER 40

/* One element being sorted. */
typedef struct sort_item {
    fri_str *ele;       /* a copy of the element, owned */
    double score;       /* numeric order: the value of the element or of its BY key */
    const fri_str *by;  /* ALPHA with BY: the BY key's value (in the keyspace), or NULL */
} sort_item;

/* How two items compare: Redis's sortCompare and the flags it reads. */
typedef struct sort_order {
    int desc;      /* DESC: every comparison reversed */
    int alpha;     /* ALPHA: strings, else numbers */
    int bypattern; /* a BY pattern with a '*': compare the BY values */
    int store;     /* STORE: strings compare as bytes, not with strcoll */
} sort_order;

/* The parsed options of one SORT / SORT_RO. */
typedef struct sort_opts {
    int desc;                   /* DESC (the last of ASC and DESC wins) */
    int alpha;                  /* ALPHA */
    int dontsort;               /* BY without a '*': nothing to sort */
    long long limit_start;      /* LIMIT's offset, 0 without LIMIT */
    long long limit_count;      /* LIMIT's count, -1 without LIMIT */
    const fri_arg *by;          /* the BY pattern (the last one), or NULL */
    const fri_arg *store;       /* the STORE key (the last one), or NULL */
    const fri_arg **gets;       /* the GET patterns, in order */
    int ngets;                  /* how many */
} sort_opts;

/* The items, as they are loaded and then sorted. */
typedef struct sort_vec {
    sort_item *v;  /* the items */
    size_t n, cap; /* items used, allocated */
    int oom;       /* an allocation failed while loading */
} sort_vec;

/* ----- Comparing ------------------------------------------------------------------------ */

/* strcoll in the C and C.UTF-8 locales: unsigned bytes up to the first NUL of either
 * string (strcmp), so bytes after a NUL never count. */
static int cstr_cmp(const fri_str *a, const fri_str *b)
{
    int r = strcmp(a->buf, b->buf);
    return (r > 0) - (r < 0);
}

static int bytes_cmp(const fri_str *a, const fri_str *b)
{
    return fri_bytes_cmp(a->buf, a->len, b->buf, b->len);
}

/* Redis's sortCompare: < 0 when a sorts before b, 0 for a tie. */
static int sort_cmp(const sort_item *a, const sort_item *b, const sort_order *o)
{
    int cmp;
    if (!o->alpha) {
        /* equal numbers compare their elements, so only equal elements tie */
        if (a->score > b->score) cmp = 1;
        else if (a->score < b->score) cmp = -1;
        else cmp = bytes_cmp(a->ele, b->ele);
    } else if (o->bypattern) {
        if (!a->by || !b->by) cmp = a->by == b->by ? 0 : !a->by ? -1 : 1;
        else cmp = o->store ? bytes_cmp(a->by, b->by) : cstr_cmp(a->by, b->by);
    } else {
        cmp = o->store ? bytes_cmp(a->ele, b->ele) : cstr_cmp(a->ele, b->ele);
    }
    return o->desc ? -cmp : cmp;
}

/* ----- The two sorting algorithms ------------------------------------------------------- */

/* A stable top-down merge sort of v[0..n) through tmp (n items): what glibc's qsort runs
 * (its msort), so ties keep their input order.  Any stable sort gives the same result;
 * this one splits as glibc does only to make that evident. */
static void merge_sort(sort_item *v, size_t n, sort_item *tmp, const sort_order *o)
{
    if (n <= 1) return;
    size_t n1 = n / 2, n2 = n - n1;
    merge_sort(v, n1, tmp, o);
    merge_sort(v + n1, n2, tmp, o);
    size_t i = 0, j = n1, k = 0;
    while (i < n1 && j < n) tmp[k++] = sort_cmp(&v[i], &v[j], o) <= 0 ? v[i++] : v[j++];
    while (i < n1) tmp[k++] = v[i++];
    /* the rest of the right run is already in place */
    memcpy(v, tmp, k * sizeof(*v));
}

static void item_swap(sort_item *v, size_t i, size_t j)
{
    sort_item t = v[i];
    v[i] = v[j];
    v[j] = t;
}

/* Swaps the n items from i with the n items from j, pair by pair in order. */
static void item_vecswap(sort_item *v, size_t i, size_t j, size_t n)
{
    for (size_t k = 0; k < n; k++) item_swap(v, i + k, j + k);
}

/* The index of the median of v[a], v[b], v[c], chosen by the same comparisons as
 * Bentley and McIlroy's med3 (which matters when some of them tie). */
static size_t med3(const sort_item *v, size_t a, size_t b, size_t c, const sort_order *o)
{
    if (sort_cmp(&v[a], &v[b], o) < 0) {
        if (sort_cmp(&v[b], &v[c], o) < 0) return b;
        return sort_cmp(&v[a], &v[c], o) < 0 ? c : a;
    }
    if (sort_cmp(&v[b], &v[c], o) > 0) return b;
    return sort_cmp(&v[a], &v[c], o) < 0 ? a : c;
}

/* Redis's pqsort, on v[lo..lo+n): Bentley and McIlroy's quicksort ("Engineering a Sort
 * Function", 1993: the pivot a median of three, or of three medians above 40 elements; a
 * three-way partition that gathers the pivot's equals at both ends and swaps them into
 * the middle; insertion sort below 7 elements), except that a partition holding no index
 * of [first, last] is left unsorted.  Only v[first..last] is guaranteed sorted; the
 * order of ties there is that of Redis's own run on the same input, step for step. */
static void pqsort_range(sort_item *v, size_t lo, size_t n, size_t first, size_t last,
                         const sort_order *o)
{
    for (;;) {
        sort_item *a = v + lo;
        if (n < PQSORT_INSERTION) {
            for (size_t m = 1; m < n; m++)
                for (size_t l = m; l > 0 && sort_cmp(&a[l - 1], &a[l], o) > 0; l--)
                    item_swap(a, l, l - 1);
            return;
        }
        size_t pm = n / 2;
        if (n > PQSORT_INSERTION) {
            size_t pl = 0, pn = n - 1;
            if (n > PQSORT_NINTHER) {
                size_t d = n / 8;
                pl = med3(a, pl, pl + d, pl + 2 * d, o);
                pm = med3(a, pm - d, pm, pm + d, o);
                pn = med3(a, pn - 2 * d, pn - d, pn, o);
            }
            pm = med3(a, pl, pm, pn, o);
        }
        item_swap(a, 0, pm);
        /* a[0] is the pivot; a[1..pa) and a(pd..n-1] gather its equals, a[pa..pb) the
         * smaller, a(pc..pd] the larger */
        size_t pa = 1, pb = 1, pc = n - 1, pd = n - 1;
        for (;;) {
            int r;
            while (pb <= pc && (r = sort_cmp(&a[pb], &a[0], o)) <= 0) {
                if (r == 0) item_swap(a, pa++, pb);
                pb++;
            }
            while (pb <= pc && (r = sort_cmp(&a[pc], &a[0], o)) >= 0) {
                if (r == 0) item_swap(a, pc, pd--);
                pc--;
            }
            if (pb > pc) break;
            item_swap(a, pb++, pc--);
        }
        size_t r = pa < pb - pa ? pa : pb - pa;
        item_vecswap(a, 0, pb - r, r);
        r = pd - pc < n - pd - 1 ? pd - pc : n - pd - 1;
        item_vecswap(a, pb, n - r, r);
        /* the smaller ones are now a[0..pb-pa), the larger ones the last pd-pc */
        size_t left = pb - pa, right = pd - pc;
        if (left > 1 && !(last < lo || first >= lo + left))
            pqsort_range(v, lo, left, first, last, o);
        if (right <= 1) return;
        lo = lo + n - right;
        n = right;
        if (last < lo || first >= lo + n) return;
    }
}

/* ----- Patterns ------------------------------------------------------------------------- */

/* The value a BY or GET pattern gives for an element (Redis's lookupKeyByPattern): "#"
 * is the element itself; otherwise the first '*' is replaced by the element to name a
 * key, and if "->" and a field follow the '*', that field of the hash at that key.  No
 * value (NULL) for a pattern without '*', a missing key, a key of another type (a string
 * is wanted without "->", a hash with it) or a missing field.  The pattern is read as
 * Redis reads it, as a C string up to its first NUL to find "#", '*' and "->", though the
 * field and the key take every byte after them.  key is scratch space for the key name.
 * A value from the keyspace lives until the keyspace changes. */
static const fri_str *pattern_value(fr_client *c, const fri_arg *pat, const fri_str *ele,
                                    fri_buf *key, int *as_int)
{
    const char *sp = pat->ptr;
    *as_int = 0;
    size_t splen = strnlen(sp, pat->len); /* where C string functions stop */
    if (splen == 1 && sp[0] == '#') return ele;
    const char *star = memchr(sp, '*', splen);
    if (!star) return NULL;
    const char *arrow = NULL;
    for (const char *q = star + 1; q + 1 < sp + splen; q++) {
        if (q[0] == '-' && q[1] == '>') {
            arrow = q;
            break;
        }
    }
    /* "->" that ends the (C string) pattern names no field: it stays in the key name */
    if (arrow && arrow + 2 == sp + splen) arrow = NULL;
    size_t prefix = (size_t)(star - sp);
    size_t postlen = (arrow ? (size_t)(arrow - sp) : pat->len) - prefix - 1;
    key->len = 0;
    fri_buf_reserve(key, 1);
    fri_buf_append(key, sp, prefix);
    fri_buf_append(key, ele->buf, ele->len);
    fri_buf_append(key, star + 1, postlen);
    fri_obj *o = fri_db_lookup(c->srv, c->db, key->p, key->len, c->now_ms);
    if (!o) {
        fri_notify(c->srv, FR_NOTIFY_KEY_MISS, "keymiss", key->p, key->len, c->db->id);
        return NULL;
    }
    fri_obj_touch(c->srv, o, c->now_ms); /* lookupKeyRead: an access, whatever its type */
    if (!arrow) {
        if (o->type != FRI_STRING) return NULL;
        *as_int = o->strenc == FRI_STRENC_INT;
        return o->ptr;
    }
    if (o->type != FRI_HASH) return NULL;
    const char *field = arrow + 2;
    fri_dent *e = fri_dict_find(fri_hash_fields(o->ptr), field, pat->len - (size_t)(field - sp));
    if (!e) return NULL;
    const fri_str *v = e->v.ptr;
    /* a listpack keeps integers as integers, a hash table keeps strings */
    *as_int = fri_hash_is_listpack(o->ptr) && fri_string2ll(v->buf, v->len, NULL);
    return v;
}

/* ----- Options -------------------------------------------------------------------------- */

/* Does the argument, read as a C string (up to a NUL, as Redis's strchr reads it), hold
 * a '*'? */
static int has_star(const fri_arg *a)
{
    return memchr(a->ptr, '*', strnlen(a->ptr, a->len)) != NULL;
}

/* Reads the options from argv[2] on, as Redis does: left to right, each word compared
 * case-insensitively as a C string, the last BY and STORE winning, every GET kept.  On
 * the first bad option answers its error and returns -1 (o->gets is then freed). */
static int parse_options(fr_client *c, int readonly, sort_opts *o)
{
    memset(o, 0, sizeof(*o));
    o->limit_count = -1;
    o->gets = fri_malloc(sizeof(*o->gets) * (size_t)c->argc);
    if (!o->gets) {
        fri_reply_error(c, FRI_ERR_OOM);
        return -1;
    }
    for (int j = 2; j < c->argc; j++) {
        const fri_arg *a = &c->argv[j];
        int left = c->argc - j - 1;
        if (fri_arg_is_cstr(a, "asc")) {
            o->desc = 0;
        } else if (fri_arg_is_cstr(a, "desc")) {
            o->desc = 1;
        } else if (fri_arg_is_cstr(a, "alpha")) {
            o->alpha = 1;
        } else if (fri_arg_is_cstr(a, "limit") && left >= 2) {
            if (fri_get_ll_or_reply(c, &c->argv[j + 1], &o->limit_start, NULL) < 0 ||
                fri_get_ll_or_reply(c, &c->argv[j + 2], &o->limit_count, NULL) < 0)
                goto fail;
            j += 2;
        } else if (!readonly && fri_arg_is_cstr(a, "store") && left >= 1) {
            o->store = &c->argv[++j];
        } else if (fri_arg_is_cstr(a, "by") && left >= 1) {
            o->by = &c->argv[++j];
            if (!has_star(o->by)) {
                o->dontsort = 1;
            } else if (c->srv->cluster_enabled) {
                fri_reply_error(c, SORT_ERR_BY_CLUSTER);
                goto fail;
            }
        } else if (fri_arg_is_cstr(a, "get") && left >= 1) {
            if (c->srv->cluster_enabled) {
                fri_reply_error(c, SORT_ERR_GET_CLUSTER);
                goto fail;
            }
            o->gets[o->ngets++] = &c->argv[++j];
        } else {
            fri_reply_error(c, FRI_ERR_SYNTAX);
            goto fail;
        }
    }
    return 0;
fail:
    fri_free(o->gets);
    o->gets = NULL;
    return -1;
}

/* ----- Loading the elements ------------------------------------------------------------- */

/* Appends a copy of an element. */
static void vec_push(sort_vec *v, const char *p, size_t len)
{
    if (v->oom) return;
    if (v->n == v->cap) {
        size_t cap = v->cap ? v->cap * 2 : 16;
        sort_item *nv = fri_realloc(v->v, cap * sizeof(*nv));
        if (!nv) {
            v->oom = 1;
            return;
        }
        v->v = nv;
        v->cap = cap;
    }
    fri_str *s = fri_str_new(p, len);
    if (!s) {
        v->oom = 1;
        return;
    }
    v->v[v->n++] = (sort_item){.ele = s, .score = 0, .by = NULL};
}

static void vec_free(sort_vec *v)
{
    for (size_t i = 0; i < v->n; i++) fri_str_free(v->v[i].ele);
    fri_free(v->v);
}

static void load_set_member(const char *p, size_t len, void *ctx) { vec_push(ctx, p, len); }

/* Loads a sorted set's members in rank order, keeping ranks [from, to]. */
typedef struct zset_loader {
    sort_vec *v;
    size_t rank, from, to;
} zset_loader;

static void load_zset_member(const char *p, size_t len, double score, void *ctx)
{
    (void)score;
    zset_loader *z = ctx;
    if (z->rank >= z->from && z->rank <= z->to) vec_push(z->v, p, len);
    z->rank++;
}

/* Reverses v[0..n). */
static void vec_reverse(sort_vec *v)
{
    for (size_t i = 0, j = v->n; i + 1 < j; i++, j--) item_swap(v->v, i, j - 1);
}

/* Loads what SORT sorts (or, with nothing to sort, answers) and sets [*start, *end], the
 * slice of it to answer, from LIMIT as Redis clamps it.  A list or a sorted set with
 * nothing to sort is loaded as the slice alone, in its order or reversed (DESC), and the
 * slice is then all of it, as in Redis. */
static void load_elements(fri_obj *src, const sort_opts *o, sort_vec *v, long long *start,
                          long long *end)
{
    long long len = 0;
    if (src) {
        switch (src->type) {
        case FRI_LIST: len = (long long)fri_list_len(src->ptr); break;
        case FRI_SET: len = (long long)fri_set_size(src->ptr); break;
        default: len = (long long)fri_zset_size(src->ptr); break;
        }
    }
    long long s = o->limit_start < 0 ? 0 : o->limit_start;
    if (s > len) s = len;
    long long count = o->limit_count < -1 ? -1 : o->limit_count;
    if (count > len) count = len;
    long long e = count < 0 ? len - 1 : s + count - 1;
    if (s >= len) {
        s = len - 1;
        e = len - 2;
    }
    if (e >= len) e = len - 1;

    if (o->dontsort && (!src || src->type != FRI_SET)) {
        /* the slice alone, counted from the head, or from the tail for DESC */
        if (e >= s && src && src->type == FRI_LIST) {
            for (long long i = s; i <= e; i++) {
                const fri_str *x = fri_list_at(src->ptr, (size_t)(o->desc ? len - 1 - i : i));
                vec_push(v, x->buf, x->len);
            }
        } else if (e >= s && src) {
            zset_loader z = {v, 0, (size_t)(o->desc ? len - 1 - e : s),
                             (size_t)(o->desc ? len - 1 - s : e)};
            fri_zset_foreach(src->ptr, load_zset_member, &z);
            if (o->desc) vec_reverse(v);
        }
        *start = 0;
        *end = e >= s ? e - s : -1;
        return;
    }
    *start = s;
    *end = e;
    if (!src) return;
    switch (src->type) {
    case FRI_LIST:
        for (size_t i = 0; i < (size_t)len; i++) {
            const fri_str *x = fri_list_at(src->ptr, i);
            vec_push(v, x->buf, x->len);
        }
        break;
    case FRI_SET: fri_set_foreach(src->ptr, load_set_member, v); break;
    default: {
        zset_loader z = {v, 0, 0, (size_t)len};
        fri_zset_foreach(src->ptr, load_zset_member, &z);
        break;
    }
    }
}

/* ----- Sorting -------------------------------------------------------------------------- */

/* Gives every item its sort key (the element or its BY value, as a number unless ALPHA)
 * and sorts v, by pqsort over [start, end] when a BY pattern and a LIMIT that cuts meet,
 * by the stable sort otherwise.  list: the elements come from a list.  Returns 0, 1 when
 * a number could not be read (the sort is skipped: the reply is the error), or -1 when
 * out of memory.
 *
 * Redis reads a number it holds as an integer (a list element, a string SET wrote, a
 * listpack hash's value, when they are integers) as it is, and any other with strtod,
 * then tests errno == ERANGE without having reset errno: so after an ERANGE left by an
 * earlier command (fri_errno_load) every strtod read fails, and one that sets ERANGE
 * fails those after it too.  The mirror keeps what the strtods leave. */
static int sort_items(fr_client *c, const sort_opts *o, sort_vec *v, int list,
                      long long start, long long end, fri_buf *key)
{
    int bad = 0, e = c->srv->redis_errno;
    for (size_t i = 0; i < v->n; i++) {
        sort_item *it = &v->v[i];
        const fri_str *val = it->ele;
        int as_int = list && fri_string2ll(val->buf, val->len, NULL);
        if (o->by) {
            val = pattern_value(c, o->by, it->ele, key, &as_int);
            if (!val) continue; /* no value: score 0, or first for ALPHA */
        }
        if (o->alpha) {
            if (o->by) it->by = val;
        } else if (as_int) {
            it->score = strtod(val->buf, NULL); /* exact for these: no errno test */
        } else {
            char *eptr;
            errno = e;
            it->score = strtod(val->buf, &eptr);
            e = errno;
            if (eptr[0] != '\0' || e == ERANGE || isnan(it->score)) bad = 1;
        }
    }
    c->srv->redis_errno = e;
    if (bad) return 1;
    if (end < start) return 0; /* nothing to answer: how it would be sorted is moot */
    sort_order ord = {o->desc, o->alpha, o->by != NULL, o->store != NULL};
    if (o->by && (start != 0 || end != (long long)v->n - 1)) {
        pqsort_range(v->v, 0, v->n, (size_t)start, (size_t)end, &ord);
        return 0;
    }
    sort_item *tmp = fri_malloc(sizeof(*tmp) * (v->n ? v->n : 1));
    if (!tmp) return -1;
    merge_sort(v->v, v->n, tmp, &ord);
    fri_free(tmp);
    return 0;
}

/* ----- Answering ------------------------------------------------------------------------ */

/* Replies v[start..end] (each element, or each GET's value for it, nil when none). */
static void reply_items(fr_client *c, const sort_opts *o, const sort_vec *v, long long start,
                        long long end, fri_buf *key)
{
    long long n = end - start + 1;
    fri_reply_array_len(c, (long)(o->ngets ? n * o->ngets : n));
    for (long long j = start; j <= end; j++) {
        const fri_str *ele = v->v[j].ele;
        if (!o->ngets) fri_reply_bulk_str(c, ele);
        for (int g = 0; g < o->ngets; g++) {
            int as_int;
            const fri_str *val = pattern_value(c, o->gets[g], ele, key, &as_int);
            if (val) fri_reply_bulk_str(c, val);
            else fri_reply_nil(c);
        }
    }
}

/* An AOF records SORT ... STORE as the list it stored: DEL destination, then RPUSHes of
 * at most 64 elements (Redis records the command, whose replay can order ties another
 * way: a set's hash table order is not the one the replay builds).  Not a byte more
 * than Redis's replay gives where the order is determined. */
static void propagate_stored(fr_client *c, const fri_arg *dst, fri_str *const *items,
                             size_t n)
{
    fri_arg args[2 + 64];
    args[0] = (fri_arg){"DEL", 3};
    args[1] = *dst;
    fri_propagate_also(c, 2, args);
    args[0] = (fri_arg){"RPUSH", 5};
    for (size_t i = 0; i < n;) {
        int k = 0;
        for (; k < 64 && i < n; k++, i++) args[2 + k] = (fri_arg){items[i]->buf, items[i]->len};
        fri_propagate_also(c, 2 + k, args);
    }
    fri_propagate_prevent(c);
}

/* STORE: the list v[start..end] (or the GET values, "" for none) replaces the
 * destination, or the destination is deleted when that is empty; answers the length.
 * Every string is copied before the keyspace changes, so running out of memory changes
 * nothing. */
static void store_items(fr_client *c, const sort_opts *o, sort_vec *v, long long start,
                        long long end, fri_buf *key)
{
    size_t n = (size_t)(end - start + 1) * (size_t)(o->ngets ? o->ngets : 1), k = 0;
    const fri_arg *dst = o->store;
    if (n == 0) {
        if (fri_db_delete(c->db, dst->ptr, dst->len)) {
            fri_signal_modified(c, c->db, dst->ptr, dst->len);
            fri_notify_key(c, FR_NOTIFY_GENERIC, "del", dst);
        }
        fri_reply_ll(c, 0);
        return;
    }
    fri_str **items = fri_malloc(sizeof(*items) * n);
    if (!items) goto oom;
    for (long long j = start; j <= end; j++) {
        if (!o->ngets) {
            items[k++] = v->v[j].ele; /* moved: the vector no longer owns it */
            v->v[j].ele = NULL;
            continue;
        }
        for (int g = 0; g < o->ngets; g++) {
            int as_int;
            const fri_str *val = pattern_value(c, o->gets[g], v->v[j].ele, key, &as_int);
            if (!(items[k] = fri_str_new(val ? val->buf : "", val ? val->len : 0)))
                goto oom_items;
            k++;
        }
    }
    fri_list *l = fri_list_from_array(items, n);
    fri_obj *obj = l ? fri_obj_new(FRI_LIST, l) : NULL;
    if (!obj) {
        if (l) fri_list_free(l); /* it owns the items now */
        else goto oom_items;
        fri_free(items);
        goto oom;
    }
    if (fri_propagating(c->srv)) propagate_stored(c, dst, items, n);
    fri_free(items);
    fri_lookup_write(c, dst); /* setKey's lookup: an expired destination goes first */
    fri_db_set(c->db, dst->ptr, dst->len, obj, 0);
    fri_signal_modified(c, c->db, dst->ptr, dst->len);
    fri_notify_key(c, FR_NOTIFY_LIST, "sortstore", dst);
    fri_reply_ll(c, (long long)n);
    return;
oom_items:
    while (k--) fri_str_free(items[k]);
    fri_free(items);
oom:
    fri_reply_error(c, FRI_ERR_OOM);
}

/* ----- The commands --------------------------------------------------------------------- */

/* SORT key [BY pattern] [LIMIT offset count] [GET pattern ...] [ASC|DESC] [ALPHA]
 * [STORE destination], and SORT_RO (readonly) without STORE.  The order of the steps is
 * Redis's: options (first error wins), the key (WRONGTYPE), a sorted set made a skiplist,
 * the numbers read (their error comes after that), the sort, the reply. */
static void sort_generic_command(fr_client *c, int readonly)
{
    sort_opts o;
    if (parse_options(c, readonly, &o) < 0) return;
    fri_obj *src = fri_lookup_read(c, &c->argv[1]);
    if (src && src->type != FRI_LIST && src->type != FRI_SET && src->type != FRI_ZSET) {
        fri_free(o.gets);
        fri_reply_error(c, FRI_ERR_WRONGTYPE);
        return;
    }
    if (o.dontsort && src && src->type == FRI_SET && (o.store || c->is_script)) {
        /* Redis sorts a set it stores, or gives a script, so that a replica gets the same
         * list */
        o.dontsort = 0;
        o.alpha = 1;
        o.by = NULL;
    }
    if (src && src->type == FRI_ZSET) fri_zset_convert_skiplist(src->ptr);

    sort_vec v = {0};
    fri_buf key = {0};
    long long start, end;
    load_elements(src, &o, &v, &start, &end);
    int list = src && src->type == FRI_LIST;
    int rc = v.oom ? -1 : o.dontsort ? 0 : sort_items(c, &o, &v, list, start, end, &key);
    if (rc < 0) fri_reply_error(c, FRI_ERR_OOM);
    else if (rc > 0) fri_reply_error(c, SORT_ERR_SCORES);
    else if (o.store) store_items(c, &o, &v, start, end, &key);
    else reply_items(c, &o, &v, start, end, &key);
    fri_buf_free(&key);
    vec_free(&v);
    fri_free(o.gets);
}

static void sort_command(fr_client *c) { sort_generic_command(c, 0); }
static void sortro_command(fr_client *c) { sort_generic_command(c, 1); }

/* SORT's keys as Redis's sortGetKeys finds them: the sorted key, and the key after the
 * last STORE, skipping the arguments of LIMIT (two), GET and BY (one) without checking
 * that they are there. */
static int sortKeys(int argc, const fri_arg *argv, int *keys, int max)
{
    int n = 0, store = 0;
    if (max < 1 || argc < 2) return 0;
    keys[n++] = 1;
    for (int i = 2; i < argc; i++) {
        if (fri_arg_is_cstr(&argv[i], "limit")) i += 2;
        else if (fri_arg_is_cstr(&argv[i], "get") || fri_arg_is_cstr(&argv[i], "by")) i += 1;
        else if (fri_arg_is_cstr(&argv[i], "store") && i + 1 < argc) store = i + 1;
    }
    if (store && n < max) keys[n++] = store;
    return n;
}

/* ----- The command table ---------------------------------------------------------------- */

/* Arity, flags and key positions as COMMAND INFO of Redis 7.0.15 gives them. */
const fri_command fri_sort_commands[] = {
    {"sort", sort_command, -2, FRI_CMD_WRITE | FRI_CMD_DENYOOM, "generic", 1, 1, 1, sortKeys,
     NULL},
    {"sort_ro", sortro_command, -2, FRI_CMD_READONLY, "generic", 1, 1, 1, NULL, NULL},
    {0},
};
