/* stream_int.h -- the stream type's internal contract, shared by t_stream.c (the entries
 * and XADD, XRANGE, XREAD ...) and t_stream_group.c (consumer groups, XREADGROUP, XACK,
 * XPENDING, XCLAIM, XINFO ...).
 *
 * The shapes are Redis's (t_stream.c / stream.h): a stream is its entries in id order plus
 * last_id, first_id, max_deleted_entry_id and entries_added; a consumer group has a
 * last-delivered id, entries_read, a pending entries list (PEL) ordered by id and its
 * consumers, each with its own PEL sharing the group's pending-entry records.
 *
 * The entries are kept the way Redis keeps them, in nodes that fill exactly when Redis's
 * listpack nodes fill (100 entries, or 4096 listpack bytes computed with Redis's own
 * encoding sizes), so that MAXLEN ~ / MINID ~ trimming, which removes only whole nodes,
 * removes what Redis removes.  Deleted entries stay in their node flagged, as in Redis,
 * and a node goes when its last live entry does.  The node layout is private to
 * t_stream.c; use the iterator and the lookups below.
 *
 * Ownership: a stream owns its nodes and its groups (fri_stream_free frees both); a group
 * owns its PEL's fri_stream_nack records and its consumers; a consumer's PEL points to the
 * same records as the group's PEL.
 */
#ifndef STREAM_INT_H
#define STREAM_INT_H

#include <stdint.h>
#include <string.h>

#include "fr_int.h"
#include "sidmap.h"

/* ----- Ids ---------------------------------------------------------------------------- */

/* Room for "18446744073709551615-18446744073709551615" and its NUL. */
#define FRI_SID_STRLEN 48

/* Redis's exact error for an id argument that does not parse. */
#define FRI_ERR_INVALID_SID "ERR Invalid stream ID specified as stream command argument"

static inline int fri_sid_is_zero(fri_sid id) { return id.ms == 0 && id.seq == 0; }

/* The next / previous id (Redis's streamIncrID / streamDecrID).  0 on success; -1 when
 * there is none (max-max incremented, 0-0 decremented), and then *id wraps to 0-0 /
 * max-max exactly as Redis leaves it. */
int fri_sid_incr(fri_sid *id);
int fri_sid_decr(fri_sid *id);

/* Writes "ms-seq" and its NUL into dst (FRI_SID_STRLEN bytes); returns the length. */
size_t fri_sid_format(char *dst, fri_sid id);
/* The id as a bulk string reply. */
void fri_reply_sid(fr_client *c, fri_sid id);

/* Whether each of the eight bytes of w is '0'..'9'. */
static inline int fri_sid_all_digits8(uint64_t w)
{
    return ((w & 0xF0F0F0F0F0F0F0F0ull) |
            (((w + 0x0606060606060606ull) & 0xF0F0F0F0F0F0F0F0ull) >> 4)) ==
           0x3333333333333333ull;
}

/* The value of the eight digits in w (its first byte the most significant digit). */
static inline uint64_t fri_sid_digits8(uint64_t w)
{
    w = (w & 0x0F0F0F0F0F0F0F0Full) * 2561 >> 8;
    w = (w & 0x00FF00FF00FF00FFull) * 6553601 >> 16;
    return (w & 0x0000FFFF0000FFFFull) * 42949672960001ull >> 32;
}

/* Up to 18 decimal digits from q (so the value cannot pass LLONG_MAX): the end of the
 * digits, and their value in *v.  Eight at a time while there are eight (each byte
 * checked to be '0'..'9'), then one by one (a word for the last few of a 13-digit time,
 * shifted into place, cost more instructions than this loop). */
static inline const char *fri_sid_digits(const char *q, const char *end, uint64_t *v)
{
    const char *lim = end - q > 18 ? q + 18 : end;
    uint64_t r = 0;
    while (lim - q >= 8) {
        uint64_t w;
        memcpy(&w, q, 8);
        if (!fri_sid_all_digits8(w)) break;
        r = r * 100000000u + fri_sid_digits8(w);
        q += 8;
    }
    for (; q < lim; q++) {
        unsigned d = (unsigned)(unsigned char)*q - '0';
        if (d > 9) break;
        r = r * 10 + d;
    }
    *v = r;
    return q;
}

/* The usual id, "<ms>-<seq>" or "<ms>" (seq = missing_seq), each part 1 to 18 digits
 * without a leading zero: 1 and *id set.  0 for anything else, which the parsers below
 * take (they give the same id for these: this is their fast path, inline where ids come
 * in bulk, and such digits leave Redis's errno alone, as string2ll does). */
static inline int fri_sid_parse_plain(const fri_arg *a, fri_sid *id, uint64_t missing_seq)
{
    const char *p = a->ptr, *end = p + a->len;
    uint64_t ms, seq = missing_seq;
    const char *q = fri_sid_digits(p, end, &ms);
    if (q == p || (*p == '0' && q - p > 1)) return 0;
    if (q != end) {
        if (*q != '-') return 0;
        p = q + 1;
        q = fri_sid_digits(p, end, &seq);
        if (q == p || q != end || (*p == '0' && q - p > 1)) return 0;
    }
    id->ms = ms;
    id->seq = seq;
    return 1;
}

/* Redis's streamGenericParseIDOrReply.  Accepts "-" (0-0), "+" (max-max), "<ms>" (seq =
 * missing_seq), "<ms>-<seq>", and, when seq_given is not NULL, "<ms>-*" (seq 0 and
 * *seq_given = 0; otherwise *seq_given = 1).  Numbers follow Redis's string2ull (so
 * " 12", "+12", "012" parse; an embedded NUL ends the argument, as Redis's C-string
 * handling does).  strict refuses "-" and "+".  Returns 0, or -1 after replying
 * FRI_ERR_INVALID_SID (c may be NULL: no reply). */
int fri_sid_parse_or_reply(fr_client *c, const fri_arg *a, fri_sid *id, uint64_t missing_seq,
                           int strict, int *seq_given);
/* The same without a reply, where Redis parses with no client (XCLAIM's scan for where
 * its ids end): srv (may be NULL) gets what the parse does to Redis's errno
 * (fri_errno_load). */
int fri_sid_parse_quiet(fr_server *srv, const fri_arg *a, fri_sid *id, uint64_t missing_seq,
                        int strict);
/* Redis's streamParseIntervalIDOrReply: like the non-strict parse, but a leading "(" of
 * an argument longer than one byte makes the bound exclusive (*exclude = 1) and the rest
 * is parsed strictly.  exclude may be NULL (then "(" is not special).  0 or -1 (replied). */
int fri_sid_parse_interval_or_reply(fr_client *c, const fri_arg *a, fri_sid *id, int *exclude,
                                    uint64_t missing_seq);

/* ----- Consumer groups (contents owned by t_stream_group.c) ---------------------------- */

typedef struct fri_stream_consumer fri_stream_consumer;

/* A pending entry: delivered to a consumer of the group and not yet acknowledged
 * (Redis's streamNACK).  One record per (group, id), in both the group's and the owning
 * consumer's PEL. */
typedef struct fri_stream_nack {
    int64_t delivery_time;          /* ms of the last delivery (XREADGROUP, XCLAIM ...) */
    uint64_t delivery_count;        /* times delivered */
    fri_stream_consumer *consumer;  /* the consumer whose PEL holds it too */
} fri_stream_nack;

/* A consumer of a group (Redis's streamConsumer). */
struct fri_stream_consumer {
    int64_t seen_time; /* ms of the consumer's last interaction (XREADGROUP, XCLAIM ...) */
    fri_str *name;     /* owned; the same bytes as its key in the group's consumers dict */
    fri_sidmap *pel;   /* id -> fri_stream_nack*: this consumer's share of the group's PEL
                          (the records belong to the group's PEL) */
};

/* A consumer group (Redis's streamCG). */
typedef struct fri_stream_cg {
    fri_sid last_id;          /* last-delivered-id: entries after it are "new" for ">" */
    long long entries_read;   /* logical read counter, FRI_CG_INVALID_ENTRIES_READ when
                                 it cannot be known (Redis's SCG_INVALID_ENTRIES_READ) */
    fri_sidmap *pel;          /* id -> fri_stream_nack*, owns the records */
    fri_dict *consumers;      /* name -> fri_stream_consumer* (v.ptr).  Insertion order:
                                 Redis lists consumers by name (a rax), so replies that
                                 list them sort by name bytes first */
    fri_stream_consumer **by_name; /* owned: the consumers sorted by name for XPENDING's
                                      summary, NULL until needed and after a consumer is
                                      created or deleted */
    struct fri_stream *stream; /* the stream it belongs to: its records' pool */
} fri_stream_cg;

#define FRI_CG_INVALID_ENTRIES_READ (-1LL)

/* Frees a group with its consumers and pending records (used by fri_stream_free, so a
 * deleted key takes its groups along).  NULL is accepted. */
void fri_stream_cg_free(fri_stream_cg *cg);
/* A pending record from s's pool (uninitialised), or NULL when out of memory. */
fri_stream_nack *fri_stream_nack_alloc(struct fri_stream *s);
/* Gives a record back to s's pool. */
void fri_stream_nack_release(struct fri_stream *s, fri_stream_nack *nack);

/* ----- The stream -------------------------------------------------------------------- */

typedef struct fri_stream_node fri_stream_node; /* private to t_stream.c */

/* Redis's stream-node-max-entries default: the entries an iterator decodes in place (a
 * node with more live entries is decoded into the stream's scratch arrays).  When a node
 * is full is the server's stream-node-max-entries and stream-node-max-bytes (fri_tunables)
 * at the time of each XADD, as in Redis. */
#define FRI_STREAM_NODE_MAX_ENTRIES 100

typedef struct fri_stream {
    fri_stream_node **nodes;      /* nodes[node_off .. node_off + nnodes) in id order */
    size_t node_off;              /* nodes trimmed off the front leave room here */
    size_t nnodes;                /* nodes in use (Redis's rax size: XINFO radix-tree-keys) */
    size_t nodes_cap;             /* allocated slots of nodes */
    uint64_t length;              /* live (not deleted) entries: XLEN */
    fri_sid last_id;              /* the largest id ever added (or set by XSETID) */
    fri_sid first_id;             /* the first live entry's id, 0-0 when empty */
    fri_sid max_deleted_entry_id; /* the largest id XDEL removed (XSETID may set it) */
    uint64_t entries_added;       /* entries ever added (XSETID ENTRIESADDED may set it) */
    fri_dict *cgroups;            /* name -> fri_stream_cg* (v.ptr); NULL until the first
                                     group.  Insertion order: sort by name when listing */
    /* Scratch arrays for iterators walking a node of more than FRI_STREAM_NODE_MAX_ENTRIES
     * live entries; scan_gen tells an iterator whether another one decoded since. */
    fri_sid *scan_ids;            /* live ids of the node decoded last */
    uint32_t *scan_offs;          /* their byte offsets */
    size_t scan_cap;              /* slots allocated in both */
    uint64_t scan_gen;            /* bumped at every decode into them */
    /* The last small node an iterator decoded (iter_load): its live ids and offsets,
     * valid while the node of that serial has the same used bytes and live count. */
    uint64_t node_serial;         /* the last serial given to a node of this stream */
    fri_sid *dec_ids;             /* FRI_STREAM_NODE_MAX_ENTRIES slots, NULL until needed */
    uint32_t *dec_offs;
    int dec_n;                    /* entries in them */
    uint64_t dec_serial;          /* the node's serial (0: none) */
    size_t dec_used;              /* its used bytes and live entries then */
    uint32_t dec_live;
    /* Its groups' pending records come from chunks the stream keeps until it is freed
     * (fri_stream_nack_alloc): a delivery takes no malloc, and a group destroyed and
     * made again (or a PEL emptied and filled) reuses the same memory instead of giving
     * pages back to the system and faulting them in again, as jemalloc keeps Redis's. */
    struct fri_nack_chunk *nack_chunks; /* owned, newest first */
    struct fri_stream_nack *nack_free;  /* released records, linked through their first
                                           bytes */
    size_t nack_chunk_next;             /* records in the next chunk */
} fri_stream;

/* An empty stream (no nodes, no groups), or NULL when out of memory.  Wrap it with
 * fri_obj_new(FRI_STREAM, s) to store it under a key. */
fri_stream *fri_stream_new(void);
/* fri_stream_free(void *) is declared in fr_int.h: frees nodes, groups, the struct. */

/* Number of nodes (XINFO STREAM's radix-tree-keys: they match Redis's node for node). */
size_t fri_stream_node_count(const fri_stream *s);
/* The master id of node i (0 <= i < fri_stream_node_count(s)): the id of the first entry
 * ever added to it, which stays its key after that entry is deleted (Redis's rax key of
 * the listpack). */
fri_sid fri_stream_node_key(const fri_stream *s, size_t i);

/* The bytes Redis asked the allocator for that listpack: its size, or more while it keeps
 * what XADD preallocated (lpNew: 4096, or stream-node-max-bytes when smaller), until the
 * node was shrunk to fit when the next node started (or copied exactly). */
size_t fri_stream_node_alloc_bytes(const fri_stream *s, size_t i);

/* Copies src's consumer groups into dst (which has none): names, last-delivered ids,
 * entries-read, pending entries with their times and counts, consumers with their seen
 * times and pending entries.  0, or -1 when out of memory (dst keeps what was copied:
 * free it). */
int fri_stream_cgroups_dup(fri_stream *dst, const fri_stream *src);

/* Heap bytes the stream's entries take (malloc_usable_size of its nodes, their index
 * and the stream itself; groups not counted).  For the memory benchmark. */
size_t fri_stream_memory(const fri_stream *s);

/* The id of the last live entry (Redis's streamLastValidID) / the first one: 1 and *id
 * set, or 0 when the stream has no live entry. */
int fri_stream_last_valid_id(fri_stream *s, fri_sid *id);
int fri_stream_first_valid_id(fri_stream *s, fri_sid *id);

/* Is there a live entry with exactly this id?  (0 for never added and for deleted.) */
int fri_stream_entry_exists(fri_stream *s, fri_sid id);

/* Checks the store's invariants: nodes in id order, each
 * node's live/deleted counts and last id as its entries say, length, first_id, last_id
 * not below the last entry.  0 when sound, a negative number naming the first broken one
 * otherwise.  For tests. */
int fri_stream_check(fri_stream *s);

/* ----- Reading entries ---------------------------------------------------------------- */

/* Walks the live entries of [start, end] (inclusive) in id order, or in reverse when rev.
 * The stream must not change while an iterator is in use.  Plain data on the stack, no
 * release needed; the fields are private. */
typedef struct fri_stream_iter {
    fri_stream *s;
    fri_sid start, end;                       /* the range, inclusive */
    int rev;                                  /* walking backwards */
    long node;                                /* index (from node_off) of the node walked */
    int node_loaded;                          /* ids/offs/nents describe that node */
    int nents;                                /* live entries in the node */
    int at;                                   /* index of the next entry to look at */
    int big;                                  /* the node's entries are in the stream's
                                                 scratch arrays, not in ids/offs */
    uint64_t gen;                             /* the scratch generation they were put in */
    fri_sid ids[FRI_STREAM_NODE_MAX_ENTRIES]; /* each entry's id (a node of at most
                                                 FRI_STREAM_NODE_MAX_ENTRIES live ones) */
    uint32_t offs[FRI_STREAM_NODE_MAX_ENTRIES]; /* each entry's byte offset in the node */
    /* the current entry (after fri_stream_iter_next returned 1) */
    const unsigned char *fp;                  /* the next field/value to read */
    const unsigned char *master;              /* next master field name (same-fields) */
    int same_fields;                          /* the entry reuses the node's field names */
    int stopped;                              /* a bound ended the walk (not the nodes) */
    int *eof_errno;                           /* see fri_stream_iter_errno, or NULL */
} fri_stream_iter;

/* Redis walks a stream with a radix tree iterator whose raxNext/raxPrev set errno = 0
 * when they run off the tree (redis-server's errno matters to SORT: fri_errno_load).
 * After this call, a walk that asks for an entry past the last node (or before the first,
 * backwards), or a seek that finds no live entry at or after its id, clears srv's mirror,
 * as Redis's iterator would for the same walk.  Only walks that Redis makes with its
 * iterator opt in. */
static inline void fri_stream_iter_errno(fri_stream_iter *it, fr_server *srv)
{
    it->eof_errno = &srv->redis_errno;
}

void fri_stream_iter_start(fri_stream_iter *it, fri_stream *s, fri_sid start, fri_sid end,
                           int rev);
/* Moves to the next live entry: 1 with *id and *nfields (field/value pairs) set, 0 at
 * the end.  nfields may be NULL. */
int fri_stream_iter_next(fri_stream_iter *it, fri_sid *id, long *nfields);
/* Makes the live entry id the current one, whatever the iterator's range and direction:
 * 1 with *nfields set (may be NULL), ready for fri_stream_iter_field / _reply_current, or
 * 0 when there is no such live entry.  Repeated lookups in one node decode it once, so a
 * run of ids (claims, history reads) costs a binary search each.  Do not mix with
 * fri_stream_iter_next on the same iterator. */
int fri_stream_iter_seek(fri_stream_iter *it, fri_sid id, long *nfields);
/* The next field/value pair of the current entry (call at most nfields times).  The
 * pointers are into the stream and stay valid until it changes. */
void fri_stream_iter_field(fri_stream_iter *it, const char **field, size_t *flen,
                           const char **value, size_t *vlen);

/* Replies [id, [f1, v1, ...]] for the current entry (whose id is id and which has
 * nfields pairs, as fri_stream_iter_next gave them; no field may have been read yet). */
void fri_stream_reply_current(fr_client *c, fri_stream_iter *it, fri_sid id, long nfields);
/* The same, and with meta != 0 the form XREADGROUP ... CLAIM answers (Redis 8.4):
 * [id, [f1, v1, ...], idle, count], the last two as integers (0 and 0 for an entry
 * delivered for the first time). */
void fri_stream_reply_current_meta(fr_client *c, fri_stream_iter *it, fri_sid id, long nfields,
                                   int meta, long long idle, long long count);
/* XRANGE's reply: an array of at most count (0 = no limit) live entries of [start, end],
 * descending when rev.  Returns how many were emitted. */
size_t fri_stream_reply_range(fr_client *c, fri_stream *s, fri_sid start, fri_sid end,
                              size_t count, int rev);

/* ----- XREAD / XREADGROUP options, parsed as Redis's xreadCommand parses them ---------- */

typedef struct fri_xread_opts {
    long long count;   /* COUNT (negative counts as 0); 0 = no limit */
    long long timeout; /* BLOCK in ms, -1 when absent (by default a read that finds
                          nothing answers the timeout reply at once; a blocking client
                          waits: blocked.c) */
    int noack;         /* NOACK given (XREADGROUP only) */
    int group_arg;     /* argv index of the group name (consumer at +1); 0 without GROUP */
    int streams_arg;   /* argv index of the first key */
    int nstreams;      /* keys (and ids) after STREAMS */
    long long claim;   /* CLAIM min-idle-time in ms (XREADGROUP, a Redis 8.4 option the
                          fake accepts although it is 7.0 otherwise), -1 when absent */
} fri_xread_opts;

/* Parses the options of XREAD (xreadgroup = 0) or XREADGROUP (1) from argv[1] up to
 * STREAMS, with Redis's errors in Redis's order: BLOCK timeout errors, COUNT not an
 * integer, "Unbalanced XREAD list of streams ..." (worded so for XREADGROUP too), GROUP or
 * NOACK given to XREAD, syntax error, STREAMS missing (syntax error), "Missing GROUP option
 * for XREADGROUP".  The ids are left to the caller (they differ: "$" vs ">").
 *
 * CLAIM min-idle-time is Redis 8.4's, with 8.4's errors: given to XREAD, "The CLAIM option
 * is only supported by XREADGROUP ..." (before its value is read); not an integer,
 * "min-idle-time is not an integer or out of range"; negative, "min-idle-time must be a
 * positive integer" (0 is accepted); given twice, the last one counts.  A command that
 * carries CLAIM is an 8.4 command, so its unbalanced list of streams gets 8.4's wording
 * ("Unbalanced 'xreadgroup' list of streams: ... an ID or '>' must be specified.").  A
 * CLAIM that is the last argument is a syntax error, as in 8.4.  0, or -1 (replied). */
int fri_xread_parse_opts_or_reply(fr_client *c, int xreadgroup, fri_xread_opts *o);

/* For a blocked XREADGROUP ... CLAIM (argv, parsed into o; c gives the db and the clock):
 * the clock reading after which one of its pending entries becomes claimable, Redis 8.4's
 * "pel_expire_time": the earliest delivery time among the groups' oldest pending entries
 * still in their streams, plus min-idle-time, or now plus min-idle-time when there is
 * none.  Redis wakes the client (runs its command again) once its clock is past that
 * reading.  INT64_MAX without CLAIM, or when it lies beyond the clock's range. */
int64_t fri_xreadgroup_claim_at(fr_client *c, int argc, const fri_arg *argv,
                                const fri_xread_opts *o);

/* ----- Dump ---------------------------------------------------------------------------- */

/* Appends the stream's canonical dump lines for fr_dump (docs/fake_redis.md):
 *   one line per live entry:  `  1-0 "f1" "v1" "f2" "v2"`
 *   then per group, in name order:
 *     `  group "name" last-delivered=1-0 entries-read=N` (N is -1 when unknown)
 *     per consumer, in name order: `    consumer "name" seen-ms-ago=N pending=N`
 *     per pending entry, in id order: `    pending 1-0 consumer="name" delivered-ms-ago=N
 *     count=N`
 * Times are printed relative to now, as the key's pttl is. */
void fri_stream_dump(fri_buf *b, void *stream, int64_t now);

/* ----- DUMP and RESTORE (rdb.c) ---------------------------------------------------------- */

/* The flags of an entry in a node, Redis's STREAM_ITEM_FLAG_* (the same bits). */
#define FRI_STREAM_ENTRY_DELETED 1
#define FRI_STREAM_ENTRY_SAMEFIELDS 2

/* What fri_stream_node_walk shows of a node: its master entry first (the master id, the
 * live and deleted counts, the master field names), then every entry as stored, deleted
 * ones included, with its flags and its fields and values (fv: 2 * nfields, names
 * first; a SAMEFIELDS entry shows the master's names).  The pointers are valid during the
 * call only. */
typedef struct fri_stream_node_visitor {
    void (*master)(void *ctx, fri_sid master, unsigned live, unsigned deleted, long nfields,
                   const fri_arg *fields);
    void (*entry)(void *ctx, int flags, fri_sid id, long nfields, const fri_arg *fv);
} fri_stream_node_visitor;

/* Walks node i (0 <= i < fri_stream_node_count(s)).  0, or -1 when out of memory. */
int fri_stream_node_walk(const fri_stream *s, size_t i, const fri_stream_node_visitor *v,
                         void *ctx);

/* Building a stream from a DUMP payload, node by node in id order: a new last node with
 * its master id, master field names and the byte size of its listpack in the payload;
 * then its entries as stored (flags FRI_STREAM_ENTRY_*, fv as in the visitor; a
 * SAMEFIELDS entry's names are not read).  Counters (length, ids) are the caller's to
 * set; fri_stream_restore_node_end closes the node (lp_bytes then counts its master
 * entry's "count" and "deleted" as the node's own counters, which grow with it).  0, or -1
 * when out of memory (or a node past 2^32 - 1 entries). */
int fri_stream_restore_node(fri_stream *s, fri_sid master, long nmaster, const fri_arg *fields,
                            uint32_t lp_bytes);
int fri_stream_restore_entry(fri_stream *s, int flags, fri_sid id, long nfields,
                             const fri_arg *fv);
void fri_stream_restore_node_end(fri_stream *s);
/* Live entries of the last node. */
size_t fri_stream_restore_last_live(const fri_stream *s);

/* Consumer groups from a DUMP payload (t_stream_group.c): a group (NULL with *exists set
 * when the name is taken, NULL alone when out of memory); a pending entry of the group
 * with no consumer yet (1, 0 when already there, -1 out of memory); a consumer (as for
 * the group); a pending entry handed to a consumer (1, 0 when the group has no such
 * entry or a consumer -- this one or another -- has it already: Redis refuses a payload
 * that gives one entry to two consumers, whatever sanitize-dump-payload says).  Once a
 * group's consumers are read, fri_stream_cg_restore_complete says whether every pending
 * entry has its consumer (1) or not (0): the commands read an entry's consumer without
 * checking it, as Redis's do. */
fri_stream_cg *fri_stream_cg_restore(fri_stream *s, const char *name, size_t len, fri_sid last_id,
                                     long long entries_read, int *exists);
int fri_stream_pel_restore(fri_stream_cg *cg, fri_sid id, int64_t delivery_time,
                           uint64_t delivery_count);
fri_stream_consumer *fri_stream_consumer_restore(fri_stream_cg *cg, const char *name, size_t len,
                                                 int64_t seen_time, int *exists);
int fri_stream_consumer_pel_restore(fri_stream_cg *cg, fri_stream_consumer *consumer, fri_sid id);
int fri_stream_cg_restore_complete(const fri_stream_cg *cg);
/* Redis's streamEstimateDistanceFromFirstEverEntry: a group's entries-read for a
 * last-delivered id, where it can be known (FRI_CG_INVALID_ENTRIES_READ otherwise); what
 * a payload of RDB version 9 or older, which has no counter, restores. */
long long fri_stream_estimate_entries_read(const fri_stream *s, fri_sid id);

#endif /* STREAM_INT_H */
