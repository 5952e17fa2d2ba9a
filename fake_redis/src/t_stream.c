/* t_stream.c -- the stream type: its entry store and XADD, XLEN, XRANGE, XREVRANGE, XDEL,
 * XTRIM, XSETID and XREAD (consumer groups live in t_stream_group.c; the contract both
 * files share is stream_int.h).
 *
 * The entry store mirrors Redis's on purpose.  Redis keeps a stream as a radix tree of
 * listpack nodes: a node takes entries until it holds 100 of them (live or deleted) or
 * until its listpack would reach 4096 bytes, and "MAXLEN ~" / "MINID ~" trimming removes
 * only whole nodes.  So the replies of approximate trimming depend on where nodes end, and
 * the fake's nodes end exactly where Redis's do: each node keeps the byte size its
 * listpack would have, computed with listpack's own encoding rules (integers stored
 * compactly, string and back-length headers), and applies Redis's "full" test before
 * every append.
 *
 * Inside a node the fake uses its own, smaller encoding: the field names of the node's
 * first entry once ("master fields"), then per entry a flags byte, the id as varint deltas
 * from the previous entry, and the values (and the field names, when they differ from the
 * master fields) as varint-length-prefixed bytes.  Nodes are indexed by a sorted array of
 * pointers (ids only grow, so XADD appends and trimming takes from the front), found by
 * binary search on their first ("master") id.  Deleted entries are flagged and skipped;
 * a node goes when its last live entry is deleted, as in Redis.
 */
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#ifdef __GLIBC__
#include <malloc.h>
/* What an allocation really holds, for fri_stream_memory; elsewhere the requested size. */
#define USABLE_SIZE(p, requested) fri_usable_size(p)
#else
#define USABLE_SIZE(p, requested) (requested)
#endif

#include "stream_int.h"

#define FLAG_DELETED 1    /* the entry was XDELed or trimmed */
#define FLAG_SAMEFIELDS 2 /* the entry's field names are the node's master fields */

/* Redis's STREAM_LISTPACK_MAX_SIZE: no entry may have more bytes of fields and values. */
#define LISTPACK_MAX_SIZE (1u << 30)
/* Redis's STREAM_LISTPACK_MAX_PRE_ALLOCATE: a new node's listpack gets this many bytes. */
#define LISTPACK_PREALLOC 4096

struct fri_stream_node {
    fri_sid master;          /* the first entry's id: Redis's rax key, the search key */
    fri_sid last;            /* the last entry's id, deleted or not (MINID trimming) */
    size_t used;             /* bytes of data in use */
    size_t cap;              /* bytes of data allocated */
    uint32_t lp_bytes;       /* bytes of the listpack Redis would have, but for its two
                                counters (node_lp_bytes adds them): decides "full" */
    uint32_t master_fields;  /* field names at the start of data */
    uint32_t first_off;      /* where the entries start, after the master fields */
    uint32_t live;           /* entries not deleted (Redis's master entry "count") */
    uint32_t deleted;        /* entries flagged deleted (the master entry's "deleted") */
    uint32_t prealloc;       /* bytes lpNew preallocated for its listpack (MEMORY USAGE);
                                0 once Redis shrank it to fit, or copied it exactly */
    uint64_t serial;         /* unique among its stream's nodes, ever: what the stream's
                                decoded copy of a node is kept under (iter_load) */
    unsigned char data[];    /* master fields, then the entries */
};

#define NODE(s, i) ((s)->nodes[(s)->node_off + (size_t)(i)])

/* lpBytes of the node's listpack: its "count" and "deleted" integers take more bytes as
 * they grow (past 127, 4095, ...), as lpReplaceInteger rewrites them. */
static uint64_t node_lp_bytes(const fri_stream_node *n)
{
    return (uint64_t)n->lp_bytes + fri_lp_int_size(n->live) + fri_lp_int_size(n->deleted);
}

/* ----- Ids ---------------------------------------------------------------------------- */

int fri_sid_incr(fri_sid *id)
{
    if (id->seq == UINT64_MAX) {
        if (id->ms == UINT64_MAX) {
            id->ms = id->seq = 0;
            return -1;
        }
        id->ms++;
        id->seq = 0;
    } else {
        id->seq++;
    }
    return 0;
}

int fri_sid_decr(fri_sid *id)
{
    if (id->seq == 0) {
        if (id->ms == 0) {
            id->ms = id->seq = UINT64_MAX;
            return -1;
        }
        id->ms--;
        id->seq = UINT64_MAX;
    } else {
        id->seq--;
    }
    return 0;
}

size_t fri_sid_format(char *dst, fri_sid id)
{
    /* 21 bytes hold either number and its NUL; the '-' overwrites the first NUL */
    size_t n = fri_ull2string(dst, 21, id.ms);
    dst[n++] = '-';
    return n + fri_ull2string(dst + n, 21, id.seq);
}

void fri_reply_sid(fr_client *c, fri_sid id)
{
    _Static_assert(FRI_SID_STRLEN <= FRI_REPLY_SMALL, "an id fits a small bulk");
    char buf[FRI_REPLY_SMALL];
    size_t n = fri_sid_format(buf, id);
    fri_reply_bulk_small(c, buf, n);
}

/* Redis's string2ull: a strict integer first (negative refused), else strtoull, which
 * also takes leading blanks, a sign ("-1" wraps) and leading zeros, but nothing after
 * the digits and nothing out of range.  strtoull's errno goes to srv's mirror of Redis's
 * (see fri_errno_load) unless srv is NULL. */
static int string2ull(fr_server *srv, const char *s, uint64_t *v)
{
    long long ll;
    if (fri_string2ll(s, strlen(s), &ll)) {
        if (ll < 0) return 0;
        *v = (uint64_t)ll;
        return 1;
    }
    char *end = NULL;
    errno = 0;
    unsigned long long u = strtoull(s, &end, 10);
    if (srv) fri_errno_save(srv);
    if (errno == EINVAL || errno == ERANGE || !(*s != '\0' && *end == '\0')) return 0;
    *v = u;
    return 1;
}

/* Reads 1 to 19 decimal digits from *p up to end or a '-' (19 digits cannot overflow):
 * 1 with *v set and *p past them, else 0.  *ll is cleared when string2ll would refuse
 * the digits (a leading zero, a value past LLONG_MAX). */
static inline int plain_u64(const char **p, const char *end, uint64_t *v, int *ll)
{
    const char *q = *p;
    uint64_t r = 0;
    /* eight digits at a time while they are all digits (a millisecond time has 13):
     * each byte checked to be '0'..'9', then the eight combined in three multiplications */
    while (end - q >= 8 && q - *p <= 11) {
        uint64_t w;
        memcpy(&w, q, 8);
        if (!fri_sid_all_digits8(w)) break;
        r = r * 100000000u + fri_sid_digits8(w);
        q += 8;
    }
    while (q < end && *q >= '0' && *q <= '9' && q - *p < 19) r = r * 10 + (uint64_t)(*q++ - '0');
    if (q == *p || (q < end && *q != '-')) return 0;
    if ((q - *p > 1 && **p == '0') || r > (uint64_t)LLONG_MAX) *ll = 0;
    *p = q;
    *v = r;
    return 1;
}

/* The usual id, "<ms>-<seq>" or "<ms>" in plain digits, parsed without copying: 1 and *id
 * set, or 0 when it takes the general path (which gives the same numbers for these,
 * leading zeros included).  *ll: whether string2ll takes each part. */
static inline int parse_plain_id(const fri_arg *a, fri_sid *id, uint64_t missing_seq, int *ll)
{
    const char *p = a->ptr, *end = a->ptr + a->len;
    uint64_t ms, seq = missing_seq;
    *ll = 1;
    if (!plain_u64(&p, end, &ms, ll)) return 0;
    if (p < end) {
        p++; /* the '-' */
        if (!plain_u64(&p, end, &seq, ll) || p != end) return 0;
    }
    id->ms = ms;
    id->seq = seq;
    return 1;
}

/* fri_sid_parse_or_reply's body: srv (may be NULL) gets what the parse does to Redis's
 * errno, c (may be NULL) the error reply. */
static int sid_parse(fr_server *srv, fr_client *c, const fri_arg *a, fri_sid *id,
                     uint64_t missing_seq, int strict, int *seq_given)
{
    int ll;
    if (fri_sid_parse_plain(a, id, missing_seq)) {
        if (seq_given) *seq_given = 1;
        return 0;
    }
    if (parse_plain_id(a, id, missing_seq, &ll)) {
        if (seq_given) *seq_given = 1;
        /* digits that string2ll refuses (a leading zero, past LLONG_MAX) go through
         * Redis's strtoull, which starts with errno = 0 and succeeds */
        if (srv && !ll) srv->redis_errno = 0;
        return 0;
    }
    char buf[128];
    uint64_t ms, seq;
    if (a->len > sizeof(buf) - 1) goto invalid;
    /* Redis reads the argument as a C string: an embedded NUL ends it. */
    memcpy(buf, a->ptr, a->len);
    buf[a->len] = '\0';
    if (strict && (buf[0] == '-' || buf[0] == '+') && buf[1] == '\0') goto invalid;
    if (seq_given) *seq_given = 1;
    if (buf[0] == '-' && buf[1] == '\0') {
        *id = FRI_SID_MIN;
        return 0;
    }
    if (buf[0] == '+' && buf[1] == '\0') {
        *id = FRI_SID_MAX;
        return 0;
    }
    char *dash = strchr(buf, '-');
    if (dash) *dash = '\0';
    if (!string2ull(srv, buf, &ms)) goto invalid;
    if (dash) {
        if (seq_given && dash[1] == '*' && dash[2] == '\0') {
            seq = 0;
            *seq_given = 0;
        } else if (!string2ull(srv, dash + 1, &seq)) {
            goto invalid;
        }
    } else {
        seq = missing_seq;
    }
    id->ms = ms;
    id->seq = seq;
    return 0;
invalid:
    if (c) fri_reply_error(c, FRI_ERR_INVALID_SID);
    return -1;
}

int fri_sid_parse_or_reply(fr_client *c, const fri_arg *a, fri_sid *id, uint64_t missing_seq,
                           int strict, int *seq_given)
{
    return sid_parse(c ? c->srv : NULL, c, a, id, missing_seq, strict, seq_given);
}

int fri_sid_parse_quiet(fr_server *srv, const fri_arg *a, fri_sid *id, uint64_t missing_seq,
                        int strict)
{
    return sid_parse(srv, NULL, a, id, missing_seq, strict, NULL);
}

int fri_sid_parse_interval_or_reply(fr_client *c, const fri_arg *a, fri_sid *id, int *exclude,
                                    uint64_t missing_seq)
{
    if (exclude) *exclude = a->len > 1 && a->ptr[0] == '(';
    if (exclude && *exclude) {
        fri_arg rest = {a->ptr + 1, a->len - 1};
        return fri_sid_parse_or_reply(c, &rest, id, missing_seq, 1, NULL);
    }
    return fri_sid_parse_or_reply(c, a, id, missing_seq, 0, NULL);
}

/* Redis compares option words with strcasecmp on the argument's C string: bytes after an
 * embedded NUL do not count.  So does this. */
static int arg_is(const fri_arg *a, const char *word)
{
    size_t len = strnlen(a->ptr, a->len);
    fri_arg head = {a->ptr, len};
    return fri_arg_is(&head, word);
}

/* ----- Varints --------------------------------------------------------------------------- */

static size_t varint_len(uint64_t v)
{
    size_t n = 1;
    while (v >= 0x80) {
        v >>= 7;
        n++;
    }
    return n;
}

static size_t varint_put(unsigned char *p, uint64_t v)
{
    size_t n = 0;
    while (v >= 0x80) {
        p[n++] = (unsigned char)(v | 0x80);
        v >>= 7;
    }
    p[n++] = (unsigned char)v;
    return n;
}

/* Writes a length-prefixed string at p (a field or value in the node's encoding): the
 * position after it. */
static unsigned char *blob_put(unsigned char *p, const fri_arg *a)
{
    p += varint_put(p, a->len);
    memcpy(p, a->ptr, a->len);
    return p + a->len;
}

/* Fills an empty node with its master field names, every stride-th argument of fields. */
static void node_put_master(fri_stream_node *n, long nfields, const fri_arg *fields, long stride)
{
    unsigned char *p = n->data;
    for (long i = 0; i < nfields; i++) p = blob_put(p, &fields[i * stride]);
    n->used = (size_t)(p - n->data);
    n->first_off = (uint32_t)n->used;
}

/* Appends an entry to node n, which has room for it: the flags byte, the id as deltas from
 * the node's last one, the field count and names unless FLAG_SAMEFIELDS, the values. */
static void node_put_entry(fri_stream_node *n, int flags, uint64_t dms, uint64_t dseq,
                           long nfields, const fri_arg *fv)
{
    int same = (flags & FLAG_SAMEFIELDS) != 0;
    unsigned char *p = n->data + n->used;
    *p++ = (unsigned char)flags;
    p += varint_put(p, dms);
    p += varint_put(p, dseq);
    if (!same) p += varint_put(p, (uint64_t)nfields);
    for (long i = 0; i < nfields; i++) {
        if (!same) p = blob_put(p, &fv[2 * i]);
        p = blob_put(p, &fv[2 * i + 1]);
    }
    n->used = (size_t)(p - n->data);
}

/* Node i with room for need more bytes (grown by half, or to fit): NULL when out of memory
 * (the node is unchanged then). */
static fri_stream_node *node_grow(fri_stream *s, size_t i, size_t need)
{
    fri_stream_node *n = NODE(s, i);
    if (n->cap - n->used >= need) return n;
    size_t cap = n->cap + n->cap / 2;
    if (cap < n->used + need) cap = n->used + need;
    fri_stream_node *grown = fri_realloc(n, sizeof(*n) + cap);
    if (!grown) return NULL;
    grown->cap = cap;
    NODE(s, i) = grown;
    return grown;
}

static const unsigned char *varint_get(const unsigned char *p, uint64_t *v)
{
    uint64_t r = 0;
    unsigned shift = 0;
    while (*p & 0x80) {
        r |= (uint64_t)(*p++ & 0x7f) << shift;
        shift += 7;
    }
    *v = r | (uint64_t)*p++ << shift;
    return p;
}

/* Skips one length-prefixed string. */
static const unsigned char *skip_str(const unsigned char *p)
{
    uint64_t len;
    p = varint_get(p, &len);
    return p + len;
}

/* ----- Nodes ------------------------------------------------------------------------------- */

/* The id of the entry before a node's first: the base of the first entry's delta, so
 * that the first entry encodes as deltas 0, 0 (arithmetic is modulo 2^64). */
static fri_sid node_base(const fri_stream_node *n)
{
    fri_sid b = {n->master.ms, n->master.seq - 1};
    return b;
}

/* Decodes the id at p (after the flags byte) given the previous entry's id. */
static const unsigned char *decode_id(const unsigned char *p, fri_sid prev, fri_sid *id)
{
    uint64_t dms, dseq;
    p = varint_get(p, &dms);
    p = varint_get(p, &dseq);
    id->ms = prev.ms + dms;
    id->seq = dms ? dseq : prev.seq + 1 + dseq;
    return p;
}

/* Skips an entry's fields and values, p just past its id. */
static const unsigned char *skip_fields(const fri_stream_node *n, const unsigned char *p,
                                        int flags)
{
    if (flags & FLAG_SAMEFIELDS) {
        for (uint32_t i = 0; i < n->master_fields; i++) p = skip_str(p);
        return p;
    }
    uint64_t nf;
    p = varint_get(p, &nf);
    for (uint64_t i = 0; i < 2 * nf; i++) p = skip_str(p);
    return p;
}

/* Fills ids[] and offs[] with the entries of the node (only the live ones when
 * live_only); returns how many.  Live entries are always in id order; deleted ones may
 * not be: after XDEL of the top entry, XSETID can move the last id back below it and the
 * next XADD appends a smaller id after the deleted one, as in Redis's listpack. */
static int node_scan(const fri_stream_node *n, fri_sid *ids, uint32_t *offs, int live_only)
{
    const unsigned char *p = n->data + n->first_off, *end = n->data + n->used;
    fri_sid prev = node_base(n), cur;
    int k = 0;
    while (p < end) {
        uint32_t off = (uint32_t)(p - n->data);
        int flags = *p++;
        p = decode_id(p, prev, &cur);
        prev = cur;
        p = skip_fields(n, p, flags);
        if (live_only && (flags & FLAG_DELETED)) continue;
        offs[k] = off;
        ids[k++] = cur;
    }
    return k;
}

/* Where the live entry id is in node n: its byte offset (>= 0); -1 when a live entry
 * past id shows it is nowhere (Redis's iterator stops there too); -2 when every live
 * entry of the node is below id, so it may be in a later node.  Deleted entries are passed
 * over entirely, as Redis's iterator skips them before comparing ids (see node_scan on why
 * they may be out of order, and why the node's first id may exceed its live ones). */
static long node_find_entry(const fri_stream_node *n, fri_sid id)
{
    if (fri_sid_cmp(id, n->last) > 0) return -2; /* live ids never pass the last appended */
    const unsigned char *p = n->data + n->first_off, *end = n->data + n->used;
    fri_sid prev = node_base(n), cur;
    while (p < end) {
        const unsigned char *e = p;
        int flags = *p++;
        p = decode_id(p, prev, &cur);
        prev = cur;
        p = skip_fields(n, p, flags);
        if (flags & FLAG_DELETED) continue;
        int c = fri_sid_cmp(cur, id);
        if (c == 0) return (long)(e - n->data);
        if (c > 0) return -1;
    }
    return -2;
}

/* Index (from node_off) of the last node whose master id is <= id, or -1. */
static long node_lookup(const fri_stream *s, fri_sid id)
{
    size_t lo = 0, hi = s->nnodes;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (fri_sid_cmp(NODE(s, mid)->master, id) <= 0) lo = mid + 1;
        else hi = mid;
    }
    return (long)lo - 1;
}

/* Puts a new node into the index at its key's place, as raxInsert does: after the last
 * node whose key is smaller.  That is the end, unless XSETID moved the last id below the
 * key of an emptied node (then XADD appends to that node, the greatest key, and when it
 * is full the next node's key sorts before it).  A node with the same key is replaced
 * (it has no live entry then: raxInsert overwrites it).  Room was reserved. */
static void node_insert(fri_stream *s, fri_stream_node *n)
{
    long at = node_lookup(s, n->master) + 1;
    if (at > 0 && fri_sid_cmp(NODE(s, at - 1)->master, n->master) == 0) {
        fri_free(NODE(s, at - 1));
        NODE(s, at - 1) = n;
        return;
    }
    memmove(&s->nodes[s->node_off + (size_t)at + 1], &s->nodes[s->node_off + (size_t)at],
            (s->nnodes - (size_t)at) * sizeof(*s->nodes));
    NODE(s, at) = n;
    s->nnodes++;
}

/* Removes node i (from node_off) from the index and frees it. */
static void node_remove(fri_stream *s, size_t i)
{
    fri_free(NODE(s, i));
    if (i == 0) {
        s->node_off++;
    } else {
        memmove(&s->nodes[s->node_off + i], &s->nodes[s->node_off + i + 1],
                (s->nnodes - i - 1) * sizeof(*s->nodes));
    }
    s->nnodes--;
    if (s->nnodes == 0) s->node_off = 0;
    if (s->nodes_cap > 64 && s->nnodes < s->nodes_cap / 8) {
        /* a long stream trimmed short: give the index back */
        memmove(s->nodes, s->nodes + s->node_off, s->nnodes * sizeof(*s->nodes));
        s->node_off = 0;
        fri_stream_node **nn = fri_realloc(s->nodes, s->nodes_cap / 4 * sizeof(*nn));
        if (nn) {
            s->nodes = nn;
            s->nodes_cap /= 4;
        }
    }
}

/* Makes room for one more node pointer at the end of the index; -1 when out of memory. */
static int nodes_reserve(fri_stream *s)
{
    if (s->node_off + s->nnodes < s->nodes_cap) return 0;
    if (s->node_off >= s->nodes_cap / 2 && s->node_off > 0) {
        /* trimming from the front freed half the slots: slide down instead of growing */
        memmove(s->nodes, s->nodes + s->node_off, s->nnodes * sizeof(*s->nodes));
        s->node_off = 0;
        return 0;
    }
    size_t ncap = s->nodes_cap ? s->nodes_cap * 2 : 4;
    fri_stream_node **nn = fri_realloc(s->nodes, ncap * sizeof(*nn));
    if (!nn) return -1;
    s->nodes = nn;
    s->nodes_cap = ncap;
    return 0;
}

/* ----- The stream ---------------------------------------------------------------------------- */

fri_stream *fri_stream_new(void) { return fri_calloc(1, sizeof(fri_stream)); }

/* A block of pending records (fri_stream_nack_alloc). */
typedef struct fri_nack_chunk {
    struct fri_nack_chunk *next;
    fri_stream_nack recs[];
} fri_nack_chunk;

#define NACK_CHUNK_MIN 16    /* records in a stream's first chunk */
#define NACK_CHUNK_MAX 4096  /* the most in one chunk (about 480 KB) */

fri_stream_nack *fri_stream_nack_alloc(fri_stream *s)
{
    fri_stream_nack *n = s->nack_free;
    if (n) {
        memcpy(&s->nack_free, n, sizeof(s->nack_free));
        return n;
    }
    /* a new chunk, each twice the last: a stream with few pending entries stays small */
    size_t count = s->nack_chunk_next ? s->nack_chunk_next : NACK_CHUNK_MIN;
    fri_nack_chunk *ch = fri_malloc(sizeof(*ch) + count * sizeof(fri_stream_nack));
    if (!ch) return NULL;
    ch->next = s->nack_chunks;
    s->nack_chunks = ch;
    s->nack_chunk_next = count < NACK_CHUNK_MAX ? count * 2 : NACK_CHUNK_MAX;
    for (size_t i = count - 1; i >= 1; i--) fri_stream_nack_release(s, &ch->recs[i]);
    return &ch->recs[0];
}

void fri_stream_nack_release(fri_stream *s, fri_stream_nack *nack)
{
    memcpy(nack, &s->nack_free, sizeof(s->nack_free));
    s->nack_free = nack;
}

static void free_nack(void *p, void *stream) { fri_stream_nack_release(stream, p); }

static void free_consumer(fri_val *v)
{
    fri_stream_consumer *cons = v->ptr;
    if (!cons) return;
    fri_sidmap_free(cons->pel, NULL);
    fri_str_free(cons->name);
    fri_free(cons);
}

void fri_stream_cg_free(fri_stream_cg *cg)
{
    if (!cg) return;
    fri_dict_free(cg->consumers, free_consumer);
    fri_sidmap_free_with(cg->pel, free_nack, cg->stream);
    fri_free(cg->by_name);
    fri_free(cg);
}

static void free_cg_val(fri_val *v) { fri_stream_cg_free(v->ptr); }

void fri_stream_free(void *stream)
{
    fri_stream *s = stream;
    if (!s) return;
    for (size_t i = 0; i < s->nnodes; i++) fri_free(NODE(s, i));
    fri_free(s->nodes);
    fri_free(s->scan_ids);
    fri_free(s->scan_offs);
    fri_free(s->dec_ids);
    fri_free(s->dec_offs);
    if (s->cgroups) fri_dict_free(s->cgroups, free_cg_val);
    while (s->nack_chunks) {
        fri_nack_chunk *next = s->nack_chunks->next;
        fri_free(s->nack_chunks);
        s->nack_chunks = next;
    }
    fri_free(s);
}

size_t fri_stream_node_count(const fri_stream *s) { return s->nnodes; }

size_t fri_stream_node_alloc_bytes(const fri_stream *s, size_t i)
{
    size_t bytes = (size_t)node_lp_bytes(NODE(s, i));
    return bytes < NODE(s, i)->prealloc ? NODE(s, i)->prealloc : bytes;
}

void *fri_stream_dup(const void *stream)
{
    const fri_stream *s = stream;
    fri_stream *d = fri_stream_new();
    if (!d) return NULL;
    if (s->nnodes) {
        if (!(d->nodes = fri_malloc(s->nnodes * sizeof(*d->nodes)))) goto oom;
        d->nodes_cap = s->nnodes;
        for (size_t i = 0; i < s->nnodes; i++) {
            const fri_stream_node *n = NODE(s, i);
            fri_stream_node *copy = fri_malloc(sizeof(*copy) + n->used);
            if (!copy) goto oom;
            memcpy(copy, n, sizeof(*copy) + n->used);
            copy->cap = n->used; /* serial copied: unique in d as it was in s */
            copy->prealloc = 0; /* streamDup allocates every listpack at its exact size */
            d->nodes[d->nnodes++] = copy;
        }
    }
    d->node_serial = s->node_serial;
    d->length = s->length;
    d->last_id = s->last_id;
    d->first_id = s->first_id;
    d->max_deleted_entry_id = s->max_deleted_entry_id;
    d->entries_added = s->entries_added;
    if (s->cgroups && fri_stream_cgroups_dup(d, s) < 0) goto oom;
    return d;
oom:
    fri_stream_free(d);
    return NULL;
}

fri_sid fri_stream_node_key(const fri_stream *s, size_t i) { return NODE(s, i)->master; }

size_t fri_stream_memory(const fri_stream *s)
{
    size_t total = USABLE_SIZE((void *)s, sizeof(*s));
    if (s->nodes) total += USABLE_SIZE(s->nodes, s->nodes_cap * sizeof(*s->nodes));
    for (size_t i = 0; i < s->nnodes; i++)
        total += USABLE_SIZE(NODE(s, i), sizeof(fri_stream_node) + NODE(s, i)->cap);
    return total;
}

/* Appends an entry with id (greater than every id in the stream) and the nfields
 * field/value pairs at fv, applying Redis's node-full rules (streamAppendItem) with the
 * server's stream-node-max-entries and stream-node-max-bytes.  Updates length, last_id,
 * entries_added and first_id.  0, or -1 when out of memory (nothing changed). */
static int stream_append(fri_stream *s, const fri_tunables *tun, fri_sid id,
                         const fri_arg *fv, long nfields)
{
    size_t totelelen = 0;
    for (long i = 0; i < 2 * nfields; i++) totelelen += fv[i].len;

    fri_stream_node *tail = s->nnodes ? NODE(s, s->nnodes - 1) : NULL;
    uint64_t max_bytes = (uint64_t)tun->stream_node_max_bytes;
    if (max_bytes == 0 || max_bytes > LISTPACK_MAX_SIZE) max_bytes = LISTPACK_MAX_SIZE;
    if (tail && (node_lp_bytes(tail) + totelelen >= max_bytes ||
                 (tun->stream_node_max_entries &&
                  (long long)tail->live + tail->deleted >= tun->stream_node_max_entries)))
        tail = NULL;

    /* Same field names as the node's first entry? */
    int same = 0;
    if (tail && tail->master_fields == (uint64_t)nfields) {
        const unsigned char *m = tail->data;
        same = 1;
        for (long i = 0; i < nfields && same; i++) {
            uint64_t flen;
            m = varint_get(m, &flen);
            if (flen != fv[2 * i].len || memcmp(m, fv[2 * i].ptr, flen) != 0) same = 0;
            m += flen;
        }
    }
    if (!tail) same = 1;

    /* Bytes this entry takes in the fake's encoding and in Redis's listpack. */
    fri_sid master = tail ? tail->master : id;
    fri_sid prev = tail ? tail->last : (fri_sid){id.ms, id.seq - 1};
    uint64_t dms = id.ms - prev.ms;
    uint64_t dseq = dms ? id.seq : id.seq - prev.seq - 1;
    size_t need = 1 + varint_len(dms) + varint_len(dseq);
    uint64_t lp = fri_lp_int_size(same ? FLAG_SAMEFIELDS : 0) +
                  fri_lp_int_size((int64_t)(id.ms - master.ms)) +
                  fri_lp_int_size((int64_t)(id.seq - master.seq));
    if (!same) {
        need += varint_len((uint64_t)nfields);
        lp += fri_lp_int_size(nfields);
    }
    for (long i = 0; i < nfields; i++) {
        if (!same) {
            need += varint_len(fv[2 * i].len) + fv[2 * i].len;
            lp += fri_lp_str_size(fv[2 * i].ptr, fv[2 * i].len);
        }
        need += varint_len(fv[2 * i + 1].len) + fv[2 * i + 1].len;
        lp += fri_lp_str_size(fv[2 * i + 1].ptr, fv[2 * i + 1].len);
    }
    lp += fri_lp_int_size(nfields + 3 + (same ? 0 : nfields + 1)); /* lp-count */

    fri_stream_node *n;
    if (!tail) {
        /* A new node whose master fields are this entry's field names. */
        size_t mbytes = 0;
        /* header, num-fields, terminator (count and deleted: node_lp_bytes) */
        uint64_t mlp = 7 + fri_lp_int_size(nfields) + fri_lp_int_size(0);
        for (long i = 0; i < nfields; i++) {
            mbytes += varint_len(fv[2 * i].len) + fv[2 * i].len;
            mlp += fri_lp_str_size(fv[2 * i].ptr, fv[2 * i].len);
        }
        if (nodes_reserve(s) < 0) return -1;
        size_t cap = mbytes + need;
        if (cap < 256) cap = 256;
        n = fri_malloc(sizeof(*n) + cap);
        if (!n) return -1;
        /* The previous tail is complete: give back its spare bytes (Redis shrinks its
         * listpack to fit at the same moment). */
        if (s->nnodes) {
            fri_stream_node *old = NODE(s, s->nnodes - 1);
            old->prealloc = 0;
            if (old->cap > old->used) {
                fri_stream_node *shrunk = fri_realloc(old, sizeof(*old) + old->used);
                if (shrunk) {
                    shrunk->cap = shrunk->used;
                    NODE(s, s->nnodes - 1) = shrunk;
                }
            }
        }
        n->master = id;
        n->serial = ++s->node_serial;
        n->last = (fri_sid){id.ms, id.seq - 1};
        n->cap = cap;
        n->lp_bytes = (uint32_t)mlp;
        n->master_fields = (uint32_t)nfields;
        n->live = n->deleted = 0;
        node_put_master(n, nfields, fv, 2);
        /* lpNew(4096), or stream-node-max-bytes when smaller */
        n->prealloc = LISTPACK_PREALLOC;
        if (tun->stream_node_max_bytes > 0 && tun->stream_node_max_bytes < LISTPACK_PREALLOC)
            n->prealloc = (uint32_t)tun->stream_node_max_bytes;
        node_insert(s, n);
    } else if (!(n = node_grow(s, s->nnodes - 1, need))) {
        return -1;
    }

    node_put_entry(n, same ? FLAG_SAMEFIELDS : 0, dms, dseq, nfields, fv);
    n->lp_bytes = (uint32_t)(n->lp_bytes + lp > UINT32_MAX ? UINT32_MAX : n->lp_bytes + lp);
    n->live++;
    n->last = id;

    s->length++;
    s->entries_added++;
    s->last_id = id;
    if (s->length == 1) s->first_id = id;
    return 0;
}

/* Flags the entry at byte offset off of node i as deleted, and removes the node when it
 * was its last live entry (Redis's streamIteratorRemoveEntry). */
static void node_delete_at(fri_stream *s, size_t i, long off)
{
    fri_stream_node *n = NODE(s, i);
    n->data[off] |= FLAG_DELETED;
    s->length--;
    if (n->live == 1) {
        node_remove(s, i);
    } else {
        n->live--;
        n->deleted++;
    }
}

/* The node holding the live entry id (with its byte offset in *off), or -1.  As Redis
 * does, it starts at the last node whose first id is <= id (the first node if none) and
 * scans on until a live id passes the one sought. */
static long node_of_live(const fri_stream *s, fri_sid id, long *off)
{
    long i = node_lookup(s, id);
    for (i = i < 0 ? 0 : i; i < (long)s->nnodes; i++) {
        long at = node_find_entry(NODE(s, i), id);
        if (at == -1) return -1;
        if (at >= 0) {
            if (off) *off = at;
            return i;
        }
    }
    return -1;
}

/* Deletes the live entry id: 1 if it was there (Redis's streamDeleteItem). */
static int stream_delete(fri_stream *s, fri_sid id)
{
    long off;
    long i = node_of_live(s, id, &off);
    if (i < 0) return 0;
    node_delete_at(s, (size_t)i, off);
    return 1;
}

int fri_stream_entry_exists(fri_stream *s, fri_sid id) { return node_of_live(s, id, NULL) >= 0; }

#define CHECK_FAIL(code) \
    do {                 \
        rc = (code);     \
        goto done;       \
    } while (0)

int fri_stream_check(fri_stream *s)
{
    uint64_t live_total = 0;
    fri_sid *ids = NULL;
    uint32_t *offs = NULL;
    size_t cap = 0;
    int rc = 0;
    int have_prev = 0, have_first = 0;
    fri_sid prev = FRI_SID_MIN, first = FRI_SID_MIN;
    if (s->node_off + s->nnodes > s->nodes_cap) return -1;
    for (size_t i = 0; i < s->nnodes; i++) {
        fri_stream_node *n = NODE(s, i);
        size_t want = (size_t)n->live + n->deleted + 1;
        if (want > cap) {
            fri_free(ids);
            fri_free(offs);
            ids = fri_malloc(want * sizeof(*ids));
            offs = fri_malloc(want * sizeof(*offs));
            cap = want;
            if (!ids || !offs) CHECK_FAIL(-2); /* out of memory: not sound as far as known */
        }
        if (n->used > n->cap) CHECK_FAIL(-3);
        int k = node_scan(n, ids, offs, 0);
        if ((uint64_t)k != (uint64_t)n->live + n->deleted || k == 0) CHECK_FAIL(-4);
        if (fri_sid_cmp(ids[0], n->master) != 0) CHECK_FAIL(-5);
        if (fri_sid_cmp(ids[k - 1], n->last) != 0) CHECK_FAIL(-6);
        uint32_t live = 0;
        for (int j = 0; j < k; j++) {
            if (!(n->data[offs[j]] & FLAG_DELETED)) {
                /* live entries ascend across the whole stream (deleted ones need not) */
                if (have_prev && fri_sid_cmp(ids[j], prev) <= 0) CHECK_FAIL(-7);
                prev = ids[j];
                have_prev = 1;
                live++;
                if (!have_first) {
                    first = ids[j];
                    have_first = 1;
                }
            }
        }
        if (live != n->live) CHECK_FAIL(-8);
        live_total += (uint64_t)live;
    }
    if (live_total != s->length) CHECK_FAIL(-9);
    if (s->length && fri_sid_cmp(first, s->first_id) != 0) CHECK_FAIL(-10);
    if (!s->length && !fri_sid_is_zero(s->first_id)) CHECK_FAIL(-11);
    if (have_prev && fri_sid_cmp(prev, s->last_id) > 0) CHECK_FAIL(-12);
done:
    fri_free(ids);
    fri_free(offs);
    return rc;
}
#undef CHECK_FAIL

/* ----- Trimming ---------------------------------------------------------------------------- */

enum { TRIM_NONE, TRIM_MAXLEN, TRIM_MINID };

/* XADD / XTRIM trimming options (Redis's streamAddTrimArgs). */
typedef struct trim_args {
    int strategy;      /* TRIM_NONE, TRIM_MAXLEN, TRIM_MINID */
    int approx;        /* "~": only whole nodes */
    long long maxlen;  /* MAXLEN threshold */
    fri_sid minid;     /* MINID threshold */
    long long limit;   /* at most this many entries (in whole nodes) for "~"; 0 = no limit */
    int threshold_idx; /* the argv index of the MAXLEN/MINID threshold ("~" before it) */
    /* XADD only */
    int id_given;      /* an explicit id (not "*") */
    int seq_given;     /* ... with its sequence ("<ms>-*" clears it) */
    fri_sid id;        /* that id */
    int no_mkstream;   /* NOMKSTREAM */
} trim_args;

/* The first live entry's id into s->first_id (0-0 when the stream is empty). */
static void update_first_id(fri_stream *s)
{
    if (!s->length || !fri_stream_first_valid_id(s, &s->first_id)) s->first_id = FRI_SID_MIN;
}

/* Redis's streamTrim: removes entries from the head of the stream, whole nodes first;
 * with "~" it stops at the first node it cannot remove whole, without "~" it flags the
 * entries of that node that must go.  Returns the number of entries removed.  What it
 * does to Redis's errno goes to srv's mirror (fri_errno_load): its raxNext walk runs
 * off the tree when no node is left, and flagging entries ends with a raxInsert of the
 * node's key, which is there: both set errno = 0. */
static long long stream_trim(fri_stream *s, const trim_args *a, fr_server *srv)
{
    if (a->strategy == TRIM_NONE) return 0;
    long long deleted = 0;
    for (;;) {
        if (!s->nnodes) {
            srv->redis_errno = 0; /* raxNext ran off the tree */
            break;
        }
        if (a->strategy == TRIM_MAXLEN && s->length <= (uint64_t)a->maxlen) break;
        fri_stream_node *n = NODE(s, 0);
        long long entries = n->live;
        if (a->limit && deleted + entries > a->limit) break;
        int remove_node;
        if (a->strategy == TRIM_MAXLEN)
            remove_node = s->length - (uint64_t)entries >= (uint64_t)a->maxlen;
        else
            remove_node = fri_sid_cmp(n->last, a->minid) < 0;
        if (remove_node) {
            s->length -= (uint64_t)entries;
            deleted += entries;
            node_remove(s, 0);
            continue;
        }
        if (a->approx) break;

        /* Flag entries of this node one by one. */
        const unsigned char *p = n->data + n->first_off, *end = n->data + n->used;
        fri_sid prev = node_base(n), cur;
        long long from_node = 0;
        while (p < end) {
            unsigned char *e = n->data + (p - n->data);
            int flags = *p++;
            p = decode_id(p, prev, &cur);
            prev = cur;
            int stop = a->strategy == TRIM_MAXLEN ? s->length <= (uint64_t)a->maxlen
                                                  : fri_sid_cmp(cur, a->minid) >= 0;
            if (stop) break;
            p = skip_fields(n, p, flags);
            if (!(flags & FLAG_DELETED)) {
                *e |= FLAG_DELETED;
                from_node++;
                s->length--;
            }
        }
        /* Redis keeps the node even when no live entry is left in it (possible with
         * MINID when its last entry was already deleted). */
        srv->redis_errno = 0;
        n->live = (uint32_t)(n->live - from_node);
        n->deleted = (uint32_t)(n->deleted + from_node);
        deleted += from_node;
        break;
    }
    update_first_id(s);
    return deleted;
}

/* Redis's streamParseAddOrTrimArgsOrReply, for XADD (xadd = 1: the options end at the id,
 * whose argv index is returned) and XTRIM (xadd = 0).  -1 after replying an error. */
static int parse_add_trim_args_or_reply(fr_client *c, trim_args *a, int xadd)
{
    memset(a, 0, sizeof(*a));
    a->maxlen = -1;
    int limit_given = 0;
    int i = 2;
    for (; i < c->argc; i++) {
        int moreargs = c->argc - 1 - i;
        const fri_arg *opt = &c->argv[i];
        if (xadd && arg_is(opt, "*")) {
            break;
        } else if ((arg_is(opt, "maxlen") || arg_is(opt, "minid")) && moreargs) {
            int maxlen = arg_is(opt, "maxlen");
            if (a->strategy != TRIM_NONE) {
                fri_reply_error(c, "ERR syntax error, MAXLEN and MINID options at the same "
                                   "time are not compatible");
                return -1;
            }
            a->approx = 0;
            const fri_arg *next = &c->argv[i + 1];
            if (moreargs >= 2 && arg_is(next, "~")) {
                a->approx = 1;
                i++;
            } else if (moreargs >= 2 && arg_is(next, "=")) {
                i++;
            }
            a->threshold_idx = i + 1;
            if (maxlen) {
                if (fri_get_ll_or_reply(c, &c->argv[i + 1], &a->maxlen, NULL) < 0) return -1;
                if (a->maxlen < 0) {
                    fri_reply_error(c, "ERR The MAXLEN argument must be >= 0.");
                    return -1;
                }
                a->strategy = TRIM_MAXLEN;
            } else {
                if (fri_sid_parse_or_reply(c, &c->argv[i + 1], &a->minid, 0, 1, NULL) < 0)
                    return -1;
                a->strategy = TRIM_MINID;
            }
            i++;
        } else if (arg_is(opt, "limit") && moreargs) {
            if (fri_get_ll_or_reply(c, &c->argv[i + 1], &a->limit, NULL) < 0) return -1;
            if (a->limit < 0) {
                fri_reply_error(c, "ERR The LIMIT argument must be >= 0.");
                return -1;
            }
            limit_given = 1;
            i++;
        } else if (xadd && arg_is(opt, "nomkstream")) {
            a->no_mkstream = 1;
        } else if (xadd) {
            /* Not an option: the id (or a syntax error reported as a bad id). */
            if (fri_sid_parse_or_reply(c, opt, &a->id, 0, 1, &a->seq_given) < 0) return -1;
            a->id_given = 1;
            break;
        } else {
            fri_reply_error(c, FRI_ERR_SYNTAX);
            return -1;
        }
    }
    if (a->limit && a->strategy == TRIM_NONE) {
        fri_reply_error(c, "ERR syntax error, LIMIT cannot be used without specifying a "
                           "trimming strategy");
        return -1;
    }
    if (!xadd && a->strategy == TRIM_NONE) {
        fri_reply_error(c, "ERR syntax error, XTRIM must be called with a trimming strategy");
        return -1;
    }
    if (c->obey) {
        /* the AOF's commands: "=" with LIMIT as Redis propagates an approximate trim,
         * exact (mustObeyClient) */
        a->limit = 0;
    } else if (limit_given) {
        if (!a->approx) {
            fri_reply_error(c, "ERR syntax error, LIMIT cannot be used without the special ~ "
                               "option");
            return -1;
        }
    } else if (a->approx) {
        /* 100 nodes' worth, kept within [1, 1000000] (10000 when 100 times
         * stream-node-max-entries is 0 or wraps negative, as Redis computes it) */
        a->limit = (long long)((unsigned long long)c->srv->tun.stream_node_max_entries * 100u);
        if (a->limit <= 0) a->limit = 10000;
        if (a->limit > 1000000) a->limit = 1000000;
    } else {
        a->limit = 0;
    }
    return i;
}

/* The id of the stream's first entry, deleted or not (streamGetEdgeID without skipping
 * tombstones): max-max when it has none. */
static fri_sid first_entry_id(const fri_stream *s)
{
    if (!s->nnodes) return (fri_sid){UINT64_MAX, UINT64_MAX};
    const fri_stream_node *n = NODE(s, 0);
    fri_sid id;
    decode_id(n->data + n->first_off + 1, node_base(n), &id);
    return id;
}

/* XADD and XTRIM propagate an approximate trim as the exact one it turned out to be
 * (MAXLEN = <length left>, MINID = <first id left>: streamRewriteTrimArgument) and XADD an
 * id it made up as that id. */
static void propagate_trim_and_id(fr_client *c, const fri_stream *s, const trim_args *a,
                                  int idpos, fri_sid id)
{
    int trim = a->strategy != TRIM_NONE && a->approx;
    int newid = idpos > 0 && (!a->id_given || !a->seq_given);
    if (!fri_propagating(c->srv) || (!trim && !newid)) return;
    char thr[48], idbuf[48];
    fri_arg *v = fri_malloc(sizeof(*v) * (size_t)c->argc);
    memcpy(v, c->argv, sizeof(*v) * (size_t)c->argc);
    if (trim) {
        v[a->threshold_idx - 1] = (fri_arg){"=", 1};
        if (a->strategy == TRIM_MAXLEN) {
            v[a->threshold_idx] =
                (fri_arg){thr, fri_ull2string(thr, sizeof(thr), (unsigned long long)s->length)};
        } else {
            fri_sid first = first_entry_id(s);
            v[a->threshold_idx] = (fri_arg){thr, fri_sid_format(thr, first)};
        }
    }
    if (newid) v[idpos] = (fri_arg){idbuf, fri_sid_format(idbuf, id)};
    fri_propagate_rewrite(c, c->argc, v);
    fri_free(v);
}

/* ----- Iteration -------------------------------------------------------------------------- */

void fri_stream_iter_start(fri_stream_iter *it, fri_stream *s, fri_sid start, fri_sid end,
                           int rev)
{
    it->s = s;
    it->start = start;
    it->end = end;
    it->rev = rev;
    it->node_loaded = 0;
    it->nents = it->at = 0;
    it->big = 0;
    it->gen = 0;
    it->fp = it->master = NULL;
    it->same_fields = 0;
    it->stopped = 0;
    it->eof_errno = NULL;
    /* Redis seeks the last node whose first id is <= the bound, else the first node
     * (forward) or the last one (backward), and skips what is out of range from there:
     * with start > end the first entry in reach ends the walk, or the nodes run out. */
    long i = node_lookup(s, rev ? end : start);
    if (i < 0) i = rev ? (long)s->nnodes - 1 : 0;
    it->node = i;
}

/* Keeps a copy of node n's decoded live entries in the stream, for the next iterator
 * that loads n: consecutive reads of a group (XREADGROUP COUNT 64 on nodes of 100) mostly
 * start in the node the previous read ended in.  Without memory for it, nothing is kept. */
static void remember_decode(fri_stream *s, const fri_stream_node *n, const fri_sid *ids,
                            const uint32_t *offs, int count)
{
    if (!s->dec_ids) {
        s->dec_ids = fri_malloc(FRI_STREAM_NODE_MAX_ENTRIES * sizeof(*s->dec_ids));
        s->dec_offs = fri_malloc(FRI_STREAM_NODE_MAX_ENTRIES * sizeof(*s->dec_offs));
        if (!s->dec_ids || !s->dec_offs) {
            fri_free(s->dec_ids);
            fri_free(s->dec_offs);
            s->dec_ids = NULL;
            s->dec_offs = NULL;
            return;
        }
    }
    memcpy(s->dec_ids, ids, (size_t)count * sizeof(*ids));
    memcpy(s->dec_offs, offs, (size_t)count * sizeof(*offs));
    s->dec_n = count;
    s->dec_serial = n->serial;
    s->dec_used = n->used;
    s->dec_live = n->live;
}

/* Decodes the live entries of node i into the iterator (in place), or into the stream's
 * scratch arrays for a node of more than FRI_STREAM_NODE_MAX_ENTRIES live entries.  0, or
 * -1 when out of memory. */
static int iter_load(fri_stream_iter *it, long i)
{
    fri_stream *s = it->s;
    const fri_stream_node *n = NODE(s, i);
    it->node = i;
    it->node_loaded = 1;
    if (n->live <= FRI_STREAM_NODE_MAX_ENTRIES) {
        it->big = 0;
        if (s->dec_ids && s->dec_serial == n->serial && s->dec_used == n->used &&
            s->dec_live == n->live) {
            /* decoded before and unchanged since (an entry added grows used, one deleted
             * lowers live): a copy instead of a walk over every entry and field */
            it->nents = s->dec_n;
            memcpy(it->ids, s->dec_ids, (size_t)s->dec_n * sizeof(*it->ids));
            memcpy(it->offs, s->dec_offs, (size_t)s->dec_n * sizeof(*it->offs));
            return 0;
        }
        it->nents = node_scan(n, it->ids, it->offs, 1);
        remember_decode(s, n, it->ids, it->offs, it->nents);
        return 0;
    }
    if (s->scan_cap < n->live) {
        fri_sid *ids = fri_realloc(s->scan_ids, n->live * sizeof(*ids));
        if (ids) s->scan_ids = ids;
        uint32_t *offs = fri_realloc(s->scan_offs, n->live * sizeof(*offs));
        if (offs) s->scan_offs = offs;
        if (!ids || !offs) {
            it->node_loaded = 0;
            return -1;
        }
        s->scan_cap = n->live;
    }
    it->big = 1;
    it->gen = ++s->scan_gen;
    it->nents = node_scan(n, s->scan_ids, s->scan_offs, 1);
    return 0;
}

/* The loaded node's ids and offsets, decoded again when another iterator has used the
 * scratch arrays since (the stream has not changed: the same entries come back). */
static void iter_arrays(fri_stream_iter *it, const fri_sid **ids, const uint32_t **offs)
{
    fri_stream *s = it->s;
    if (!it->big) {
        *ids = it->ids;
        *offs = it->offs;
        return;
    }
    if (it->gen != s->scan_gen) {
        it->gen = ++s->scan_gen;
        node_scan(NODE(s, it->node), s->scan_ids, s->scan_offs, 1);
    }
    *ids = s->scan_ids;
    *offs = s->scan_offs;
}

/* Makes the entry at byte offset off of the loaded node n the current one, ready for
 * fri_stream_iter_field: 1 with *nfields set (nfields may be NULL), or 0 when the entry
 * is deleted. */
static int enter_entry(fri_stream_iter *it, const fri_stream_node *n, uint32_t off,
                       long *nfields)
{
    const unsigned char *p = n->data + off;
    int flags = *p++;
    if (flags & FLAG_DELETED) return 0;
    fri_sid skip;
    p = decode_id(p, (fri_sid){0, 0}, &skip); /* only to step over the id */
    long nf;
    if (flags & FLAG_SAMEFIELDS) {
        nf = (long)n->master_fields;
        it->master = n->data;
        it->same_fields = 1;
    } else {
        uint64_t v;
        p = varint_get(p, &v);
        nf = (long)v;
        it->master = NULL;
        it->same_fields = 0;
    }
    it->fp = p;
    if (nfields) *nfields = nf;
    return 1;
}

int fri_stream_iter_seek(fri_stream_iter *it, fri_sid id, long *nfields)
{
    fri_stream *s = it->s;
    /* Claims and history reads look up ids in ascending order, mostly several per node:
     * a node's live ids are decoded once, then binary-searched.  As in node_of_live, the
     * search moves on to later nodes while every live id of a node is below id. */
    long i = node_lookup(s, id);
    for (i = i < 0 ? 0 : i; i < (long)s->nnodes; i++) {
        fri_stream_node *n = NODE(s, i);
        if ((!it->node_loaded || it->node != i) && iter_load(it, i) < 0) return 0;
        const fri_sid *ids;
        const uint32_t *offs;
        iter_arrays(it, &ids, &offs);
        int lo = 0, hi = it->nents;
        while (lo < hi) {
            int mid = lo + (hi - lo) / 2;
            if (fri_sid_cmp(ids[mid], id) < 0) lo = mid + 1;
            else hi = mid;
        }
        if (lo < it->nents) {
            if (fri_sid_cmp(ids[lo], id) != 0) return 0; /* a live id passed it */
            it->at = lo + 1;
            return enter_entry(it, n, offs[lo], nfields);
        }
    }
    if (it->eof_errno) *it->eof_errno = 0; /* no live id at or after it: off the tree */
    return 0;
}

int fri_stream_iter_next(fri_stream_iter *it, fri_sid *id, long *nfields)
{
    fri_stream *s = it->s;
    if (it->stopped) return 0;
    for (;;) {
        if (it->node < 0 || it->node >= (long)s->nnodes) {
            if (it->eof_errno) *it->eof_errno = 0; /* raxNext / raxPrev ran off the tree */
            it->stopped = 1;
            return 0;
        }
        fri_stream_node *n = NODE(s, it->node);
        if (!it->node_loaded) {
            if (iter_load(it, it->node) < 0) goto finished; /* out of memory */
            it->at = it->rev ? it->nents - 1 : 0;
        }
        const fri_sid *ids;
        const uint32_t *offs;
        iter_arrays(it, &ids, &offs);
        while (it->rev ? it->at >= 0 : it->at < it->nents) {
            int k = it->at;
            it->at += it->rev ? -1 : 1;
            fri_sid cur = ids[k];
            if (!it->rev) {
                if (fri_sid_cmp(cur, it->start) < 0) continue;
                if (fri_sid_cmp(cur, it->end) > 0) goto finished;
            } else {
                if (fri_sid_cmp(cur, it->end) > 0) continue;
                if (fri_sid_cmp(cur, it->start) < 0) goto finished;
            }
            if (!enter_entry(it, n, offs[k], nfields)) continue;
            if (id) *id = cur;
            return 1;
        }
        it->node += it->rev ? -1 : 1;
        it->node_loaded = 0;
    }
finished:
    it->stopped = 1;
    return 0;
}

void fri_stream_iter_field(fri_stream_iter *it, const char **field, size_t *flen,
                           const char **value, size_t *vlen)
{
    uint64_t len;
    if (it->same_fields) {
        it->master = varint_get(it->master, &len);
        *field = (const char *)it->master;
        *flen = (size_t)len;
        it->master += len;
    } else {
        it->fp = varint_get(it->fp, &len);
        *field = (const char *)it->fp;
        *flen = (size_t)len;
        it->fp += len;
    }
    it->fp = varint_get(it->fp, &len);
    *value = (const char *)it->fp;
    *vlen = (size_t)len;
    it->fp += len;
}

int fri_stream_last_valid_id(fri_stream *s, fri_sid *id)
{
    if (s->nnodes) {
        /* a last node with nothing deleted ends with a live entry, its last one: no walk
         * (XREADGROUP asks at every read) */
        const fri_stream_node *n = NODE(s, s->nnodes - 1);
        if (n->deleted == 0 && n->live > 0) {
            *id = n->last;
            return 1;
        }
    }
    fri_stream_iter it;
    fri_stream_iter_start(&it, s, FRI_SID_MIN, FRI_SID_MAX, 1);
    return fri_stream_iter_next(&it, id, NULL);
}

int fri_stream_first_valid_id(fri_stream *s, fri_sid *id)
{
    if (s->nnodes) {
        /* the same at the front: a first node with nothing deleted starts with a live
         * entry, whose id is decoded from the node's base */
        const fri_stream_node *n = NODE(s, 0);
        if (n->deleted == 0 && n->live > 0) {
            decode_id(n->data + n->first_off + 1, node_base(n), id);
            return 1;
        }
    }
    fri_stream_iter it;
    fri_stream_iter_start(&it, s, FRI_SID_MIN, FRI_SID_MAX, 0);
    return fri_stream_iter_next(&it, id, NULL);
}

/* ----- Replies ------------------------------------------------------------------------------ */

void fri_stream_reply_current(fr_client *c, fri_stream_iter *it, fri_sid id, long nfields)
{
    fri_stream_reply_current_meta(c, it, id, nfields, 0, 0, 0);
}

/* An entry written as nodes directly (fri_tree_node): [id, [field, value, ...]] (and its
 * idle time and delivery count with meta) as one block of nodes, no array frame; in the
 * check the same bytes as the writers below, written in the same pass. */
static void reply_entry_tree(fr_client *c, fri_stream_iter *it, fri_sid id, long nfields,
                             int meta, long long idle, long long count)
{
    int both = c->tree == FRI_TREE_AND_BYTES;
    size_t head = meta ? 4 : 2, n = head + 2 * (size_t)nfields;
    fr_reply *r = fri_tree_node(c);
    fr_reply *el = fri_tree_nodes(c, n);
    fri_tree_array_at(r, el, head);
    char buf[FRI_REPLY_SMALL];
    size_t idlen = fri_sid_format(buf, id);
    fri_tree_bulk_at(c, &el[0], buf, idlen);
    fri_tree_array_at(&el[1], el + head, 2 * (size_t)nfields);
    if (both) {
        c->tree = 0;
        fri_reply_array_len(c, (long)head);
        fri_reply_bulk_small(c, buf, idlen);
        fri_reply_array_len(c, nfields * 2);
    }
    for (long i = 0; i < nfields; i++) {
        const char *f, *v;
        size_t fl, vl;
        fri_stream_iter_field(it, &f, &fl, &v, &vl);
        fri_tree_bulk_at(c, &el[head + 2 * (size_t)i], f, fl);
        fri_tree_bulk_at(c, &el[head + 2 * (size_t)i + 1], v, vl);
        if (both) {
            fri_reply_bulk(c, f, fl);
            fri_reply_bulk(c, v, vl);
        }
    }
    if (meta) {
        fri_tree_int_at(&el[2], idle);
        fri_tree_int_at(&el[3], count);
        if (both) {
            fri_reply_ll(c, idle);
            fri_reply_ll(c, count);
        }
    }
    if (both) c->tree = FRI_TREE_AND_BYTES;
}

void fri_stream_reply_current_meta(fr_client *c, fri_stream_iter *it, fri_sid id, long nfields,
                                   int meta, long long idle, long long count)
{
    if (c->tree) {
        reply_entry_tree(c, it, id, nfields, meta, idle, count);
        return;
    }
    fri_reply_array_len(c, meta ? 4 : 2);
    fri_reply_sid(c, id);
    fri_reply_array_len(c, nfields * 2);
    for (long i = 0; i < nfields; i++) {
        const char *f, *v;
        size_t fl, vl;
        fri_stream_iter_field(it, &f, &fl, &v, &vl);
        fri_reply_bulk(c, f, fl);
        fri_reply_bulk(c, v, vl);
    }
    if (meta) {
        fri_reply_ll(c, idle);
        fri_reply_ll(c, count);
    }
}

size_t fri_stream_reply_range(fr_client *c, fri_stream *s, fri_sid start, fri_sid end,
                              size_t count, int rev)
{
    size_t h = fri_reply_deferred_len(c), n = 0;
    fri_stream_iter it;
    fri_sid id;
    long nf;
    fri_stream_iter_start(&it, s, start, end, rev);
    fri_stream_iter_errno(&it, c->srv);
    while ((count == 0 || n < count) && fri_stream_iter_next(&it, &id, &nf)) {
        fri_stream_reply_current(c, &it, id, nf);
        n++;
    }
    fri_reply_set_deferred_len(c, h, (long)n);
    return n;
}

/* ----- Commands ----------------------------------------------------------------------------- */

/* The stream at argv[1] for reading: NULL when missing (nothing replied) or of another
 * type (*wrongtype set, WRONGTYPE replied). */
static fri_stream *stream_lookup(fr_client *c, int write, int *wrongtype)
{
    fri_obj *o = fri_lookup_typed(c, &c->argv[1], FRI_STREAM, write, wrongtype);
    return o ? o->ptr : NULL;
}

/* The stream at argv[1] for a command that answers missing(c) when there is none: NULL
 * when the command was answered (WRONGTYPE, or a missing key). */
static fri_stream *stream_or_reply(fr_client *c, int write, void (*missing)(fr_client *c))
{
    int wrongtype;
    fri_stream *s = stream_lookup(c, write, &wrongtype);
    if (!s && !wrongtype) missing(c);
    return s;
}

static void reply_zero(fr_client *c) { fri_reply_ll(c, 0); }
static void reply_nokey(fr_client *c) { fri_reply_error(c, FRI_ERR_NOKEY); }

/* XADD key [NOMKSTREAM] [MAXLEN|MINID [=|~] threshold [LIMIT count]] *|id field value ...
 * Options and the id are checked first, then the field/value count (an arity error),
 * then 0-0, then the key.  The stream is created only once the entry is in it, so
 * running out of memory leaves no empty key behind. */
static void xadd_command(fr_client *c)
{
    trim_args a;
    int idpos = parse_add_trim_args_or_reply(c, &a, 1);
    if (idpos < 0) return;
    int field_pos = idpos + 1;
    if (c->argc - field_pos < 2 || (c->argc - field_pos) % 2 == 1) {
        fri_reply_arity_error(c);
        return;
    }
    if (a.id_given && a.seq_given && fri_sid_is_zero(a.id)) {
        fri_reply_error(c, "ERR The ID specified in XADD must be greater than 0-0");
        return;
    }
    int wrongtype;
    fri_stream *s = stream_lookup(c, 1, &wrongtype);
    if (wrongtype) return;
    fri_stream *created = NULL;
    if (!s) {
        if (a.no_mkstream) {
            fri_reply_nil(c);
            return;
        }
        s = created = fri_stream_new();
        if (!s) {
            fri_reply_error(c, FRI_ERR_OOM);
            return;
        }
    }
    if (s->last_id.ms == UINT64_MAX && s->last_id.seq == UINT64_MAX) {
        fri_reply_error(c, "ERR The stream has exhausted the last possible ID, unable to add "
                           "more items");
        fri_stream_free(created);
        return;
    }

    long nfields = (c->argc - field_pos) / 2;
    size_t totelelen = 0;
    for (int j = field_pos; j < c->argc; j++) totelelen += c->argv[j].len;
    fri_sid id;
    int bad_id = 0;
    if (a.id_given) {
        if (a.seq_given) {
            id = a.id;
        } else if (s->last_id.ms == a.id.ms) {
            /* "<ms>-*" on the last id's ms: the next sequence, if there is one */
            if (s->last_id.seq == UINT64_MAX) bad_id = 1;
            id = (fri_sid){s->last_id.ms, s->last_id.seq + 1};
        } else {
            id = a.id;
        }
    } else {
        /* Redis's streamNextID: the clock, but never behind the last id */
        uint64_t now = c->now_ms < 0 ? 0 : (uint64_t)c->now_ms;
        if (now > s->last_id.ms) {
            id = (fri_sid){now, 0};
        } else {
            id = s->last_id;
            fri_sid_incr(&id);
        }
    }
    /* Redis's streamAppendItem sets errno to EDOM or ERANGE as it fails, and XADD words
     * its error by errno == EDOM.  7.0.15 fails a bad "<ms>-*" without setting errno, so
     * the text depends on what an earlier command left there (see fri_errno_load). */
    static const char *const id_err =
        "ERR The ID specified in XADD is equal or smaller than the target stream top item";
    static const char *const size_err = "ERR Elements are too large to be stored";
    const char *err = NULL;
    if (bad_id) {
        err = c->srv->redis_errno == EDOM ? id_err : size_err;
    } else if (fri_sid_cmp(id, s->last_id) <= 0) {
        err = id_err;
        c->srv->redis_errno = EDOM;
    } else if (totelelen > LISTPACK_MAX_SIZE) {
        err = size_err;
        c->srv->redis_errno = ERANGE;
    }
    if (err) {
        /* Redis has created the key by then: an empty stream stays behind */
        fri_obj *o = created ? fri_obj_new(FRI_STREAM, created) : NULL;
        if (o) fri_db_add(c->db, c->argv[1].ptr, c->argv[1].len, o);
        else fri_stream_free(created);
        fri_reply_error(c, err);
        return;
    }
    size_t nodes_before = s->nnodes;
    if (stream_append(s, &c->srv->tun, id, &c->argv[field_pos], nfields) < 0) {
        fri_reply_error(c, FRI_ERR_OOM);
        fri_stream_free(created);
        return;
    }
    /* streamAppendItem inserts a new node's listpack in the tree twice (the second time
     * to "update the pointer"), and raxInsert of a key already there sets errno = 0
     * (fri_errno_load).  It does that for an old node too when appending moved its
     * listpack in memory, which only Redis's allocator knows: not mirrored. */
    if (s->nnodes > nodes_before) c->srv->redis_errno = 0;
    if (created) {
        fri_obj *o = fri_obj_new(FRI_STREAM, created);
        if (!o) {
            fri_reply_error(c, FRI_ERR_OOM);
            fri_stream_free(created);
            return;
        }
        fri_db_add(c->db, c->argv[1].ptr, c->argv[1].len, o);
    }
    fri_reply_sid(c, id);
    fri_signal_modified(c, c->db, c->argv[1].ptr, c->argv[1].len);
    fri_notify_key(c, FR_NOTIFY_STREAM, "xadd", &c->argv[1]);
    if (stream_trim(s, &a, c->srv)) fri_notify_key(c, FR_NOTIFY_STREAM, "xtrim", &c->argv[1]);
    if (c->srv->prop) propagate_trim_and_id(c, s, &a, idpos, id);
}

/* XLEN key */
static void xlen_command(fr_client *c)
{
    int wrongtype;
    fri_stream *s = stream_lookup(c, 0, &wrongtype);
    if (wrongtype) return;
    fri_reply_ll(c, s ? (long long)s->length : 0);
}

/* XRANGE key start end [COUNT n] and XREVRANGE key end start [COUNT n]: both ids are
 * parsed (the start first, whatever its position), then COUNT, then the key; COUNT 0 or
 * negative answers a null array on an existing stream. */
static void xrange_generic(fr_client *c, int rev)
{
    const fri_arg *startarg = rev ? &c->argv[3] : &c->argv[2];
    const fri_arg *endarg = rev ? &c->argv[2] : &c->argv[3];
    fri_sid start, end;
    int startex, endex;
    long long count = -1;

    if (fri_sid_parse_interval_or_reply(c, startarg, &start, &startex, 0) < 0) return;
    if (startex && fri_sid_incr(&start) < 0) {
        fri_reply_error(c, "ERR invalid start ID for the interval");
        return;
    }
    if (fri_sid_parse_interval_or_reply(c, endarg, &end, &endex, UINT64_MAX) < 0) return;
    if (endex && fri_sid_decr(&end) < 0) {
        fri_reply_error(c, "ERR invalid end ID for the interval");
        return;
    }
    for (int j = 4; j < c->argc; j++) {
        int additional = c->argc - j - 1;
        if (arg_is(&c->argv[j], "count") && additional >= 1) {
            if (fri_get_ll_or_reply(c, &c->argv[j + 1], &count, NULL) < 0) return;
            if (count < 0) count = 0;
            j++;
        } else {
            fri_reply_error(c, FRI_ERR_SYNTAX);
            return;
        }
    }
    fri_stream *s = stream_or_reply(c, 0, fri_reply_empty_array);
    if (!s) return;
    if (count == 0) {
        fri_reply_null_array(c);
        return;
    }
    fri_stream_reply_range(c, s, start, end, count < 0 ? 0 : (size_t)count, rev);
}

static void xrange_command(fr_client *c) { xrange_generic(c, 0); }
static void xrevrange_command(fr_client *c) { xrange_generic(c, 1); }

/* XDEL key id [id ...]: the key first (missing answers 0), then every id is parsed before
 * anything is deleted, so a bad id changes nothing. */
static void xdel_command(fr_client *c)
{
    fri_stream *s = stream_or_reply(c, 1, reply_zero);
    if (!s) return;
    int n = c->argc - 2;
    fri_sid small[16];
    fri_sid *ids = n <= 16 ? small : fri_malloc(sizeof(*ids) * (size_t)n);
    if (!ids) {
        fri_reply_error(c, FRI_ERR_OOM);
        return;
    }
    for (int j = 0; j < n; j++) {
        if (fri_sid_parse_or_reply(c, &c->argv[j + 2], &ids[j], 0, 1, NULL) < 0) goto done;
    }
    long long deleted = 0;
    int first_entry = 0;
    for (int j = 0; j < n; j++) {
        /* Redis finds the entry with an iterator, which runs off the tree (errno = 0,
         * see fri_errno_load) when no live entry is at or after the id */
        fri_sid last;
        if (!s->length || !fri_stream_last_valid_id(s, &last) || fri_sid_cmp(ids[j], last) > 0)
            c->srv->redis_errno = 0;
        if (!stream_delete(s, ids[j])) continue;
        if (fri_sid_cmp(ids[j], s->first_id) == 0) first_entry = 1;
        if (fri_sid_cmp(ids[j], s->max_deleted_entry_id) > 0) s->max_deleted_entry_id = ids[j];
        deleted++;
    }
    if (deleted) {
        if (s->length == 0) s->first_id = FRI_SID_MIN;
        else if (first_entry) update_first_id(s);
        fri_signal_modified(c, c->db, c->argv[1].ptr, c->argv[1].len);
        fri_notify_key(c, FR_NOTIFY_STREAM, "xdel", &c->argv[1]);
    }
    fri_reply_ll(c, deleted);
done:
    if (ids != small) fri_free(ids);
}

/* XTRIM key MAXLEN|MINID [=|~] threshold [LIMIT count]: options first, then the key
 * (missing answers 0). */
static void xtrim_command(fr_client *c)
{
    trim_args a;
    if (parse_add_trim_args_or_reply(c, &a, 0) < 0) return;
    fri_stream *s = stream_or_reply(c, 1, reply_zero);
    if (!s) return;
    long long deleted = stream_trim(s, &a, c->srv);
    if (deleted) {
        fri_notify_key(c, FR_NOTIFY_STREAM, "xtrim", &c->argv[1]);
        fri_signal_modified(c, c->db, c->argv[1].ptr, c->argv[1].len);
        if (c->srv->prop) propagate_trim_and_id(c, s, &a, 0, FRI_SID_MIN);
    }
    fri_reply_ll(c, deleted);
}

/* XSETID key last-id [ENTRIESADDED n] [MAXDELETEDID id]: arguments first, then the key
 * ("no such key" when missing), then the checks against the stream's live entries.  As in
 * 7.0.15, the id is not checked against the current max_deleted_entry_id, and on an empty
 * stream it may go backwards. */
static void xsetid_command(fr_client *c)
{
    fri_sid id, max_xdel_id = FRI_SID_MIN;
    long long entries_added = -1;
    if (fri_sid_parse_or_reply(c, &c->argv[2], &id, 0, 1, NULL) < 0) return;
    for (int i = 3; i < c->argc;) {
        int moreargs = c->argc - 1 - i;
        if (arg_is(&c->argv[i], "entriesadded") && moreargs) {
            if (fri_get_ll_or_reply(c, &c->argv[i + 1], &entries_added, NULL) < 0) return;
            if (entries_added < 0) {
                fri_reply_error(c, "ERR entries_added must be positive");
                return;
            }
            i += 2;
        } else if (arg_is(&c->argv[i], "maxdeletedid") && moreargs) {
            if (fri_sid_parse_or_reply(c, &c->argv[i + 1], &max_xdel_id, 0, 1, NULL) < 0)
                return;
            if (fri_sid_cmp(id, max_xdel_id) < 0) {
                fri_reply_error(c, "ERR The ID specified in XSETID is smaller than the "
                                   "provided max_deleted_entry_id");
                return;
            }
            i += 2;
        } else {
            fri_reply_error(c, FRI_ERR_SYNTAX);
            return;
        }
    }
    fri_stream *s = stream_or_reply(c, 1, reply_nokey);
    if (!s) return;
    if (s->length > 0) {
        fri_sid maxid;
        fri_stream_last_valid_id(s, &maxid);
        if (fri_sid_cmp(id, maxid) < 0) {
            fri_reply_error(c, "ERR The ID specified in XSETID is smaller than the target "
                               "stream top item");
            return;
        }
        if (entries_added != -1 && s->length > (uint64_t)entries_added) {
            fri_reply_error(c, "ERR The entries_added specified in XSETID is smaller than the "
                               "target stream length");
            return;
        }
    }
    s->last_id = id;
    if (entries_added != -1) s->entries_added = (uint64_t)entries_added;
    if (!fri_sid_is_zero(max_xdel_id)) s->max_deleted_entry_id = max_xdel_id;
    /* 7.0.15 does not signal the key as modified here: a WATCH on it survives */
    fri_reply_ok(c);
    fri_notify_key(c, FR_NOTIFY_STREAM, "xsetid", &c->argv[1]);
}

int fri_xread_parse_opts_or_reply(fr_client *c, int xreadgroup, fri_xread_opts *o)
{
    memset(o, 0, sizeof(*o));
    o->timeout = -1;
    o->claim = -1;
    for (int i = 1; i < c->argc; i++) {
        int moreargs = c->argc - i - 1;
        const fri_arg *a = &c->argv[i];
        if (arg_is(a, "claim") && moreargs) {
            /* Redis 8.4: checked first, and XREAD is refused before the value is read */
            if (!xreadgroup) {
                fri_reply_error(c, "ERR The CLAIM option is only supported by XREADGROUP. "
                                   "You called XREAD instead.");
                return -1;
            }
            i++;
            if (fri_get_ll_or_reply(c, &c->argv[i], &o->claim,
                                    "ERR min-idle-time is not an integer or out of range") < 0)
                return -1;
            if (o->claim < 0) {
                fri_reply_error(c, "ERR min-idle-time must be a positive integer");
                return -1;
            }
        } else if (arg_is(a, "block") && moreargs) {
            if (c->is_script) { /* a script may not block: refused as the option is read */
                fri_reply_errorf(c, "ERR %.*s command is not allowed with BLOCK option from "
                                    "scripts", (int)c->argv[0].len, c->argv[0].ptr);
                return -1;
            }
            long long t;
            i++;
            if (fri_get_ll_or_reply(c, &c->argv[i], &t,
                                    "ERR timeout is not an integer or out of range") < 0)
                return -1;
            if (t < 0) {
                fri_reply_error(c, "ERR timeout is negative");
                return -1;
            }
            o->timeout = t;
        } else if (arg_is(a, "count") && moreargs) {
            i++;
            if (fri_get_ll_or_reply(c, &c->argv[i], &o->count, NULL) < 0) return -1;
            if (o->count < 0) o->count = 0;
        } else if (arg_is(a, "streams") && moreargs) {
            o->streams_arg = i + 1;
            int n = c->argc - o->streams_arg;
            if (n % 2 != 0) {
                if (o->claim >= 0) /* an 8.4 command: 8.4's wording */
                    fri_reply_error(c, "ERR Unbalanced 'xreadgroup' list of streams: for "
                                       "each stream key an ID or '>' must be specified.");
                else /* 7.0 words it this way for XREADGROUP too */
                    fri_reply_error(c, "ERR Unbalanced XREAD list of streams: for each "
                                       "stream key an ID or '$' must be specified.");
                return -1;
            }
            o->nstreams = n / 2;
            break;
        } else if (arg_is(a, "group") && moreargs >= 2) {
            if (!xreadgroup) {
                fri_reply_error(c, "ERR The GROUP option is only supported by XREADGROUP. You "
                                   "called XREAD instead.");
                return -1;
            }
            o->group_arg = i + 1;
            i += 2;
        } else if (arg_is(a, "noack")) {
            if (!xreadgroup) {
                fri_reply_error(c, "ERR The NOACK option is only supported by XREADGROUP. "
                                   "You called XREAD instead.");
                return -1;
            }
            o->noack = 1;
        } else {
            fri_reply_error(c, FRI_ERR_SYNTAX);
            return -1;
        }
    }
    if (o->streams_arg == 0) {
        fri_reply_error(c, FRI_ERR_SYNTAX);
        return -1;
    }
    if (xreadgroup && o->group_arg == 0) {
        fri_reply_error(c, "ERR Missing GROUP option for XREADGROUP");
        return -1;
    }
    return 0;
}

/* XREAD [COUNT n] [BLOCK ms] STREAMS key ... id ...: every key is looked up and every id
 * parsed ("$" = the stream's last id) before anything is answered; then each stream with
 * a live entry after its id contributes [key, entries].  Nothing to serve answers the
 * null array, which is what a blocked read answers when its timeout fires: by default
 * BLOCK answers so at once (in process nobody else could add meanwhile); a client that
 * opted into blocking (fr_client_set_blocking) waits instead, served by blocked.c. */
static void xread_command(fr_client *c)
{
    fri_xread_opts o;
    if (fri_xread_parse_opts_or_reply(c, 0, &o) < 0) return;
    fri_sid small[8];
    fri_sid *ids = o.nstreams <= 8 ? small : fri_malloc(sizeof(*ids) * (size_t)o.nstreams);
    if (!ids) {
        fri_reply_error(c, FRI_ERR_OOM);
        return;
    }
    for (int i = 0; i < o.nstreams; i++) {
        const fri_arg *key = &c->argv[o.streams_arg + i];
        const fri_arg *ida = &c->argv[o.streams_arg + o.nstreams + i];
        int wrongtype;
        fri_obj *obj = fri_lookup_typed(c, key, FRI_STREAM, 0, &wrongtype);
        if (wrongtype) goto done;
        if (arg_is(ida, "$")) {
            ids[i] = obj ? ((fri_stream *)obj->ptr)->last_id : FRI_SID_MIN;
            continue;
        }
        if (arg_is(ida, ">")) {
            fri_reply_error(c, "ERR The > ID can be specified only when calling XREADGROUP "
                               "using the GROUP <group> <consumer> option.");
            goto done;
        }
        if (fri_sid_parse_or_reply(c, ida, &ids[i], 0, 1, NULL) < 0) goto done;
    }

    size_t h = 0;
    long served = 0;
    for (int i = 0; i < o.nstreams; i++) {
        const fri_arg *key = &c->argv[o.streams_arg + i];
        int wrongtype;
        fri_obj *obj = fri_lookup_typed(c, key, FRI_STREAM, 0, &wrongtype);
        if (!obj) continue;
        fri_stream *s = obj->ptr;
        fri_sid maxid;
        if (!s->length || !fri_stream_last_valid_id(s, &maxid) ||
            fri_sid_cmp(maxid, ids[i]) <= 0)
            continue;
        if (served++ == 0) h = fri_reply_deferred_len(c);
        fri_sid start = ids[i];
        fri_sid_incr(&start);
        /* RESP2: [key, entries] pairs; RESP3: a map from key to entries */
        if (c->resp == 2) fri_reply_array_len(c, 2);
        fri_reply_bulk(c, key->ptr, key->len);
        fri_stream_reply_range(c, s, start, FRI_SID_MAX, (size_t)o.count, 0);
    }
    if (!served) fri_reply_null_array(c);
    else if (c->resp == 2) fri_reply_set_deferred_len(c, h, served);
    else fri_reply_set_deferred_map_len(c, h, served);
done:
    if (ids != small) fri_free(ids);
}

/* XREAD's keys, found as Redis's xreadGetKeys finds them for the cluster check: skip the
 * options (BLOCK and COUNT take a value, GROUP two, NOACK none) up to STREAMS; the first
 * half of what follows are the keys.  Anything else, or an odd or empty list, gives no
 * keys (the command itself then answers the error). */
static int xread_getkeys(int argc, const fri_arg *argv, int *keys, int max)
{
    int pos = -1;
    for (int i = 1; i < argc; i++) {
        /* CLAIM (8.4) takes a value too: 8.4 finds the keys after STREAMS past it (its key
         * specs search for STREAMS), so a command carrying it is checked for CROSSSLOT */
        if (arg_is(&argv[i], "block") || arg_is(&argv[i], "count") ||
            arg_is(&argv[i], "claim")) {
            i++;
        } else if (arg_is(&argv[i], "group")) {
            i += 2;
        } else if (arg_is(&argv[i], "noack")) {
            continue;
        } else if (arg_is(&argv[i], "streams")) {
            pos = i;
            break;
        } else {
            break;
        }
    }
    int num = argc - pos - 1;
    if (pos < 0 || num == 0 || num % 2 != 0) return 0;
    int k = 0;
    for (int i = 0; i < num / 2 && k < max; i++) keys[k++] = pos + 1 + i;
    return k;
}

/* ----- Dump ------------------------------------------------------------------------------- */

/* The live entries of a fri_dict in key byte order. */
static int cmp_dent_keys(const void *a, const void *b)
{
    const fri_dent *x = *(fri_dent *const *)a, *y = *(fri_dent *const *)b;
    return fri_bytes_cmp(x->key->buf, x->key->len, y->key->buf, y->key->len);
}

static fri_dent **sorted_dents(fri_dict *d, size_t *n)
{
    *n = 0;
    if (!d || fri_dict_size(d) == 0) return NULL;
    fri_dent **v = fri_malloc(sizeof(*v) * fri_dict_size(d));
    for (size_t i = 0; i < fri_dict_slots(d); i++) {
        fri_dent *e = fri_dict_slot(d, i);
        if (e) v[(*n)++] = e;
    }
    qsort(v, *n, sizeof(*v), cmp_dent_keys);
    return v;
}

void fri_stream_dump(fri_buf *b, void *stream, int64_t now)
{
    fri_stream *s = stream;
    fri_stream_iter it;
    fri_sid id;
    long nf;
    char idbuf[FRI_SID_STRLEN];
    fri_stream_iter_start(&it, s, FRI_SID_MIN, FRI_SID_MAX, 0);
    while (fri_stream_iter_next(&it, &id, &nf)) {
        fri_sid_format(idbuf, id);
        fri_buf_printf(b, "  %s", idbuf);
        for (long i = 0; i < nf; i++) {
            const char *f, *v;
            size_t fl, vl;
            fri_stream_iter_field(&it, &f, &fl, &v, &vl);
            fri_buf_append(b, " ", 1);
            fri_buf_put_quoted(b, f, fl);
            fri_buf_append(b, " ", 1);
            fri_buf_put_quoted(b, v, vl);
        }
        fri_buf_append(b, "\n", 1);
    }
    size_t ng;
    fri_dent **groups = sorted_dents(s->cgroups, &ng);
    for (size_t g = 0; g < ng; g++) {
        fri_stream_cg *cg = groups[g]->v.ptr;
        fri_buf_append(b, "  group ", 8);
        fri_buf_put_quoted(b, groups[g]->key->buf, groups[g]->key->len);
        fri_sid_format(idbuf, cg->last_id);
        fri_buf_printf(b, " last-delivered=%s entries-read=%lld\n", idbuf, cg->entries_read);
        size_t nc;
        fri_dent **cons = sorted_dents(cg->consumers, &nc);
        for (size_t k = 0; k < nc; k++) {
            fri_stream_consumer *co = cons[k]->v.ptr;
            fri_buf_append(b, "    consumer ", 13);
            fri_buf_put_quoted(b, cons[k]->key->buf, cons[k]->key->len);
            fri_buf_printf(b, " seen-ms-ago=%lld pending=%zu\n",
                           (long long)((uint64_t)now - (uint64_t)co->seen_time),
                           fri_sidmap_len(co->pel));
        }
        fri_free(cons);
        fri_sidmap_iter pi;
        void *val;
        fri_sidmap_iter_init(&pi, cg->pel, FRI_SID_MIN, FRI_SID_MAX, 0);
        while (fri_sidmap_iter_next(&pi, &id, &val)) {
            fri_stream_nack *nack = val;
            fri_sid_format(idbuf, id);
            fri_buf_printf(b, "    pending %s consumer=", idbuf);
            if (nack->consumer && nack->consumer->name)
                fri_buf_put_quoted(b, nack->consumer->name->buf, nack->consumer->name->len);
            else
                fri_buf_append(b, "\"\"", 2);
            fri_buf_printf(b, " delivered-ms-ago=%lld count=%llu\n",
                           (long long)((uint64_t)now - (uint64_t)nack->delivery_time),
                           (unsigned long long)nack->delivery_count);
        }
    }
    fri_free(groups);
}

/* ----- Public inspection ------------------------------------------------------------ */

/* The stream at key without touching anything (no lazy expiry): NULL when missing,
 * logically expired or not a stream. */
static fri_stream *inspect_lookup(fr_server *server, int db, const char *key, size_t key_len)
{
    if (!server || db < 0 || db >= FRI_DBNUM || (!key && key_len)) return NULL;
    fri_dent *e = fri_dict_find(server->db[db].keys, key ? key : "", key_len);
    if (!e) return NULL;
    fri_obj *o = e->v.ptr;
    if (o->type != FRI_STREAM || fri_obj_is_expired(o, fr_clock_now(server))) return NULL;
    return o->ptr;
}

int fr_stream_entries(fr_server *server, int db, const char *key, size_t key_len,
                      fr_stream_entry **out, size_t *n)
{
    fri_stream *s = inspect_lookup(server, db, key, key_len);
    *out = NULL;
    *n = 0;
    if (!s) return -1;
    if (!s->length) return 0;
    /* One block: the entries, every pointer array, every length array, then the bytes. */
    size_t nent = 0, nstr = 0, nbytes = 0;
    fri_stream_iter it;
    fri_sid id;
    long nf;
    fri_stream_iter_start(&it, s, FRI_SID_MIN, FRI_SID_MAX, 0);
    while (fri_stream_iter_next(&it, &id, &nf)) {
        nent++;
        nstr += 2 * (size_t)nf;
        for (long i = 0; i < nf; i++) {
            const char *f, *v;
            size_t fl, vl;
            fri_stream_iter_field(&it, &f, &fl, &v, &vl);
            nbytes += fl + vl + 2;
        }
    }
    size_t total = nent * sizeof(fr_stream_entry) + nstr * (sizeof(char *) + sizeof(size_t)) +
                   nbytes;
    char *mem = fri_malloc_plain(total ? total : 1); /* the caller free()s it */
    if (!mem) return -2;
    fr_stream_entry *ents = (fr_stream_entry *)mem;
    const char **ptrs = (const char **)(mem + nent * sizeof(fr_stream_entry));
    size_t *lens = (size_t *)(ptrs + nstr);
    char *bytes = (char *)(lens + nstr);
    size_t k = 0, sidx = 0;
    fri_stream_iter_start(&it, s, FRI_SID_MIN, FRI_SID_MAX, 0);
    while (fri_stream_iter_next(&it, &id, &nf)) {
        fr_stream_entry *e = &ents[k++];
        e->id_ms = id.ms;
        e->id_seq = id.seq;
        e->nfields = (size_t)nf;
        e->fv = &ptrs[sidx];
        e->fv_len = &lens[sidx];
        for (long i = 0; i < nf; i++) {
            const char *f, *v;
            size_t fl, vl;
            fri_stream_iter_field(&it, &f, &fl, &v, &vl);
            memcpy(bytes, f, fl);
            bytes[fl] = '\0';
            ptrs[sidx] = bytes;
            lens[sidx++] = fl;
            bytes += fl + 1;
            memcpy(bytes, v, vl);
            bytes[vl] = '\0';
            ptrs[sidx] = bytes;
            lens[sidx++] = vl;
            bytes += vl + 1;
        }
    }
    *out = ents;
    *n = nent;
    return 0;
}

int fr_stream_meta_get(fr_server *server, int db, const char *key, size_t key_len,
                       fr_stream_meta *out)
{
    fri_stream *s = inspect_lookup(server, db, key, key_len);
    if (!s) return -1;
    out->length = s->length;
    out->last_id_ms = s->last_id.ms;
    out->last_id_seq = s->last_id.seq;
    out->first_id_ms = s->first_id.ms;
    out->first_id_seq = s->first_id.seq;
    out->max_deleted_ms = s->max_deleted_entry_id.ms;
    out->max_deleted_seq = s->max_deleted_entry_id.seq;
    out->entries_added = s->entries_added;
    out->groups = s->cgroups ? fri_dict_size(s->cgroups) : 0;
    out->nodes = s->nnodes;
    return 0;
}

/* ----- The command table ------------------------------------------------------------------- */

#include "cmd_flags.h"

const fri_command fri_stream_commands[] = {
    {"xadd", xadd_command, -5, W | M | F, "stream", 1, 1, 1, NULL, NULL},
    {"xlen", xlen_command, 2, R | F, "stream", 1, 1, 1, NULL, NULL},
    {"xrange", xrange_command, -4, R, "stream", 1, 1, 1, NULL, NULL},
    {"xrevrange", xrevrange_command, -4, R, "stream", 1, 1, 1, NULL, NULL},
    {"xdel", xdel_command, -3, W | F, "stream", 1, 1, 1, NULL, NULL},
    {"xtrim", xtrim_command, -4, W, "stream", 1, 1, 1, NULL, NULL},
    {"xsetid", xsetid_command, -3, W | M | F, "stream", 1, 1, 1, NULL, NULL},
    {"xread", xread_command, -4, R | B, "stream", 0, 0, 0, xread_getkeys, NULL},
    {0},
};

/* ----- DUMP and RESTORE (rdb.c) -------------------------------------------------------------- */

int fri_stream_node_walk(const fri_stream *s, size_t i, const fri_stream_node_visitor *v,
                         void *ctx)
{
    const fri_stream_node *n = NODE(s, i);
    size_t cap = n->master_fields > 8 ? n->master_fields : 8;
    fri_arg *master = fri_malloc(n->master_fields * sizeof(*master) + 1);
    fri_arg *fv = fri_malloc(2 * cap * sizeof(*fv));
    if (!master || !fv) {
        fri_free(master);
        fri_free(fv);
        return -1;
    }
    const unsigned char *p = n->data;
    for (uint32_t k = 0; k < n->master_fields; k++) {
        uint64_t len;
        p = varint_get(p, &len);
        master[k] = (fri_arg){(const char *)p, (size_t)len};
        p += len;
    }
    v->master(ctx, n->master, n->live, n->deleted, n->master_fields, master);
    p = n->data + n->first_off;
    const unsigned char *end = n->data + n->used;
    fri_sid prev = node_base(n), id;
    int rc = 0;
    while (p < end) {
        int flags = *p++;
        p = decode_id(p, prev, &id);
        prev = id;
        uint64_t nf = n->master_fields;
        if (!(flags & FLAG_SAMEFIELDS)) p = varint_get(p, &nf);
        if (nf > cap) {
            fri_arg *grown = fri_realloc(fv, 2 * nf * sizeof(*fv));
            if (!grown) {
                rc = -1;
                break;
            }
            fv = grown;
            cap = nf;
        }
        for (uint64_t k = 0; k < nf; k++) {
            uint64_t len;
            if (flags & FLAG_SAMEFIELDS) {
                fv[2 * k] = master[k];
            } else {
                p = varint_get(p, &len);
                fv[2 * k] = (fri_arg){(const char *)p, (size_t)len};
                p += len;
            }
            p = varint_get(p, &len);
            fv[2 * k + 1] = (fri_arg){(const char *)p, (size_t)len};
            p += len;
        }
        v->entry(ctx, flags, id, (long)nf, fv);
    }
    fri_free(master);
    fri_free(fv);
    return rc;
}

/* Grows node i (the last) so that `need` more bytes fit; the node, or NULL. */
int fri_stream_restore_node(fri_stream *s, fri_sid master, long nmaster, const fri_arg *fields,
                            uint32_t lp_bytes)
{
    size_t bytes = 0;
    for (long k = 0; k < nmaster; k++) bytes += varint_len(fields[k].len) + fields[k].len;
    if (nodes_reserve(s) < 0) return -1;
    size_t cap = bytes < 256 ? 256 : bytes;
    fri_stream_node *n = fri_malloc(sizeof(*n) + cap);
    if (!n) return -1;
    n->master = master;
    n->serial = ++s->node_serial;
    n->last = node_base(n);
    n->cap = cap;
    n->lp_bytes = lp_bytes;
    n->master_fields = (uint32_t)nmaster;
    n->live = n->deleted = 0;
    n->prealloc = 0; /* a restored listpack has its exact size */
    node_put_master(n, nmaster, fields, 1);
    s->nodes[s->node_off + s->nnodes++] = n;
    return 0;
}

int fri_stream_restore_entry(fri_stream *s, int flags, fri_sid id, long nfields,
                             const fri_arg *fv)
{
    size_t i = s->nnodes - 1;
    fri_stream_node *n = NODE(s, i);
    if (n->live + n->deleted >= UINT32_MAX) return -1;
    fri_sid prev = n->last;
    uint64_t dms = id.ms - prev.ms;
    uint64_t dseq = dms ? id.seq : id.seq - prev.seq - 1;
    size_t need = 1 + varint_len(dms) + varint_len(dseq) + varint_len((uint64_t)nfields);
    for (long k = 0; k < 2 * nfields; k++) need += varint_len(fv[k].len) + fv[k].len;
    if (!(n = node_grow(s, i, need))) return -1;
    node_put_entry(n, flags & (FLAG_DELETED | FLAG_SAMEFIELDS), dms, dseq, nfields, fv);
    n->last = id;
    if (flags & FLAG_DELETED) n->deleted++;
    else n->live++;
    return 0;
}

void fri_stream_restore_node_end(fri_stream *s)
{
    fri_stream_node *n = NODE(s, s->nnodes - 1);
    uint32_t counters = (uint32_t)(fri_lp_int_size(n->live) + fri_lp_int_size(n->deleted));
    n->lp_bytes = n->lp_bytes > counters ? n->lp_bytes - counters : 0;
}

/* The live entries of the last node (0 when it has only deleted ones). */
size_t fri_stream_restore_last_live(const fri_stream *s)
{
    return s->nnodes ? NODE(s, s->nnodes - 1)->live : 0;
}
