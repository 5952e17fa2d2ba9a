/* t_stream_group.c -- consumer groups of streams: XGROUP, XREADGROUP, XACK, XPENDING,
 * XCLAIM, XAUTOCLAIM and XINFO (STREAM, GROUPS, CONSUMERS), answering as Redis 7.0.15's t_stream.c does.
 *
 * A group (fri_stream_cg, stream_int.h) has a last-delivered id, the logical read
 * counter entries_read, a pending entries list (PEL) and consumers; each consumer has its
 * own PEL holding the same fri_stream_nack records as the group's.  Every change below
 * keeps the two in step: a record is in the group's PEL exactly when it is in its
 * consumer's.
 *
 * Redis lists groups and consumers in name order (they live in radix trees); the fake
 * keeps them in insertion-ordered dicts and sorts by name bytes whenever it lists them.
 * Delivery and seen times come from c->now_ms, the clock read once per command.
 *
 * The argument checks run in Redis's order, so a command with several faults answers the
 * error the real server gives.  Where Redis compares an argument as a C string (strcmp on
 * "$" or ">", strcasecmp on option names, "%s" in error texts) an embedded NUL ends the
 * argument here too.
 *
 * Allocation failures: a command answers the OOM error and changes nothing when memory
 * runs out before it has changed anything; past that point (a half-delivered XREADGROUP)
 * there is no way back, and it aborts, as fri_db_add does.
 */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "fr_int.h"
#include "stream_int.h"

/* XAUTOCLAIM examines at most COUNT times this many PEL entries per call. */
#define XAUTOCLAIM_ATTEMPTS_FACTOR 10
/* XAUTOCLAIM's COUNT limit: LONG_MAX / max(sizeof(streamID), attempts factor). */
#define XAUTOCLAIM_MAX_COUNT (LONG_MAX / 16)
/* Redis allocates COUNT ids for XAUTOCLAIM's deleted list up front and fails the command
 * when that allocation fails.  On a 64-bit Linux server that happens once the request
 * passes the user address space (2^47 bytes of 16-byte ids); the fake never allocates
 * it, and answers the same error past the same size. */
#define XAUTOCLAIM_ALLOC_LIMIT (1LL << 43)

#define ERR_XGROUP_NOKEY                                                                 \
    "ERR The XGROUP subcommand requires the key to exist. Note that for CREATE you may " \
    "want to use the MKSTREAM option to create an empty stream automatically."
#define ERR_BUSYGROUP "BUSYGROUP Consumer Group name already exists"
#define ERR_XREADGROUP_DOLLAR                                                            \
    "ERR The $ ID is meaningless in the context of XREADGROUP: you want to read the "    \
    "history of this consumer by specifying a proper ID, or use the > ID to get new "    \
    "messages. The $ ID would just return an empty result set."
/* Redis 8.4's (7.4's) refusal of "+", given to XREADGROUP ... CLAIM commands only. */
#define ERR_XREADGROUP_PLUS                                                              \
    "ERR The + ID is meaningless in the context of XREADGROUP: you want to read the "    \
    "history of this consumer by specifying a proper ID, or use the > ID to get new "    \
    "messages. The + ID would just return an empty result set."

/* ----- Arguments as C strings ---------------------------------------------------------- */

/* The length Redis sees when it treats the argument as a C string. */
static int cstr_len(const fri_arg *a) { return (int)strnlen(a->ptr, a->len); }

/* strcmp(arg, word) == 0 */
static int arg_cstr_eq(const fri_arg *a, const char *word)
{
    size_t n = strlen(word);
    return (size_t)cstr_len(a) == n && memcmp(a->ptr, word, n) == 0;
}

/* strcasecmp(arg, word) == 0 */
static int arg_cstr_is(const fri_arg *a, const char *word)
{
    size_t n = strlen(word);
    return (size_t)cstr_len(a) == n && strncasecmp(a->ptr, word, n) == 0;
}

/* The command name as typed (argv[0]), upper-cased as Redis's replies show it. */
static void upper_command_name(fr_client *c, char *out, size_t cap)
{
    size_t n = (size_t)cstr_len(&c->argv[0]);
    if (n > cap - 1) n = cap - 1;
    for (size_t i = 0; i < n; i++) {
        char ch = c->argv[0].ptr[i];
        out[i] = (ch >= 'a' && ch <= 'z') ? (char)(ch - 32) : ch;
    }
    out[n] = '\0';
}

/* Redis's addReplySubcommandSyntaxError: names argv[1] (at most 128 bytes) and the
 * command. */
static void reply_subcommand_syntax_error(fr_client *c)
{
    char cmd[64];
    upper_command_name(c, cmd, sizeof(cmd));
    int sub = cstr_len(&c->argv[1]);
    if (sub > 128) sub = 128;
    fri_reply_errorf(c, "ERR unknown subcommand or wrong number of arguments for '%.*s'. "
                        "Try %s HELP.", sub, c->argv[1].ptr, cmd);
}

/* "NOGROUP No such key '<key>' or consumer group '<group>'<tail>", the names cut at a NUL
 * as Redis's "%s" cuts them. */
static void reply_nogroup(fr_client *c, const fri_arg *key, const fri_arg *group,
                          const char *tail)
{
    fri_reply_errorf(c, "NOGROUP No such key '%.*s' or consumer group '%.*s'%s", cstr_len(key),
                     key->ptr, cstr_len(group), group->ptr, tail);
}

/* "NOGROUP No such consumer group '<group>' for key name '<key>'" (XGROUP, XINFO). */
static void reply_nogroup_for_key(fr_client *c, const fri_arg *group, const fri_arg *key)
{
    fri_reply_errorf(c, "NOGROUP No such consumer group '%.*s' for key name '%.*s'",
                     cstr_len(group), group->ptr, cstr_len(key), key->ptr);
}

/* Strict id parse (no "-" / "+"), Redis's streamParseStrictIDOrReply; c may be NULL. */
static int parse_strict_id(fr_client *c, const fri_arg *a, fri_sid *id)
{
    return fri_sid_parse_or_reply(c, a, id, 0, 1, NULL);
}

/* ----- Groups, consumers, pending records ------------------------------------------------ */

static fri_stream_cg *cg_lookup(fri_stream *s, const char *name, size_t len)
{
    if (!s->cgroups) return NULL;
    fri_dent *e = fri_dict_find(s->cgroups, name, len);
    return e ? e->v.ptr : NULL;
}

/* Redis's streamCreateCG: a new empty group, or NULL with *exists set when the name is
 * taken, or NULL with *exists clear when out of memory (the stream is unchanged). */
static fri_stream_cg *cg_create(fri_stream *s, const char *name, size_t len, fri_sid id,
                                long long entries_read, int *exists)
{
    *exists = 0;
    if (cg_lookup(s, name, len)) {
        *exists = 1;
        return NULL;
    }
    int made_dict = 0;
    if (!s->cgroups) {
        if (!(s->cgroups = fri_dict_new())) return NULL;
        made_dict = 1;
    }
    fri_stream_cg *cg = fri_calloc(1, sizeof(*cg));
    if (cg) {
        cg->pel = fri_sidmap_new();
        cg->consumers = fri_dict_new();
    }
    fri_dent *e = NULL;
    if (cg && cg->pel && cg->consumers) e = fri_dict_add(s->cgroups, name, len, NULL);
    if (!e) {
        if (cg) {
            fri_sidmap_free(cg->pel, NULL);
            fri_dict_free(cg->consumers, NULL);
            fri_free(cg);
        }
        if (made_dict) {
            fri_dict_free(s->cgroups, NULL);
            s->cgroups = NULL;
        }
        return NULL;
    }
    cg->last_id = id;
    cg->entries_read = entries_read;
    cg->stream = s;
    e->v.ptr = cg;
    return cg;
}

static fri_stream_consumer *consumer_find(fri_stream_cg *cg, const char *name, size_t len)
{
    fri_dent *e = fri_dict_find(cg->consumers, name, len);
    return e ? e->v.ptr : NULL;
}

/* ----- Propagation (propagate.c): what the group commands hand an AOF ----------------------- */

/* streamPropagateXCLAIM: XCLAIM key group consumer 0 id TIME ms RETRYCOUNT n FORCE JUSTID
 * LASTID last-delivered, the idempotent form that recreates (or, for an entry gone from
 * the stream, removes) one pending record. */
static void propagate_xclaim(fr_client *c, const fri_arg *key, const fri_arg *group,
                             const fri_stream_cg *cg, fri_sid id, const fri_stream_nack *nack)
{
    if (!fri_propagating(c->srv) || !nack->consumer) return;
    char idb[FRI_SID_STRLEN], tb[24], cb[24], lb[FRI_SID_STRLEN];
    const fri_str *name = nack->consumer->name;
    fri_arg v[14] = {{"XCLAIM", 6}, *key, *group, {name->buf, name->len}, {"0", 1},
                     {idb, fri_sid_format(idb, id)}, {"TIME", 4},
                     {tb, fri_ll2string(tb, sizeof(tb), nack->delivery_time)}, {"RETRYCOUNT", 10},
                     {cb, fri_ull2string(cb, sizeof(cb), nack->delivery_count)}, {"FORCE", 5},
                     {"JUSTID", 6}, {"LASTID", 6}, {lb, fri_sid_format(lb, cg->last_id)}};
    fri_propagate_also(c, 14, v);
}

/* streamPropagateGroupID: XGROUP SETID key group last-delivered ENTRIESREAD n. */
static void propagate_group_id(fr_client *c, const fri_arg *key, const fri_arg *group,
                               const fri_stream_cg *cg)
{
    if (!fri_propagating(c->srv)) return;
    char lb[FRI_SID_STRLEN], nb[24];
    fri_arg v[7] = {{"XGROUP", 6}, {"SETID", 5}, *key, *group, {lb, fri_sid_format(lb, cg->last_id)},
                    {"ENTRIESREAD", 11}, {nb, fri_ll2string(nb, sizeof(nb), cg->entries_read)}};
    fri_propagate_also(c, 7, v);
}

/* streamPropagateConsumerCreation: XGROUP CREATECONSUMER key group consumer. */
static void propagate_consumer_creation(fr_client *c, const fri_arg *key, const fri_arg *group,
                                        const fri_arg *consumer)
{
    fri_arg v[5] = {{"XGROUP", 6}, {"CREATECONSUMER", 14}, *key, *group, *consumer};
    fri_propagate_also(c, 5, v);
}

/* Redis's streamCreateConsumer for a name known to be new: seen now.  NULL when out of
 * memory (the group is unchanged). */
static fri_stream_consumer *consumer_create(fri_stream_cg *cg, const char *name, size_t len,
                                            int64_t now)
{
    fri_stream_consumer *consumer = fri_calloc(1, sizeof(*consumer));
    if (!consumer) return NULL;
    consumer->name = fri_str_new(name, len);
    consumer->pel = fri_sidmap_new();
    fri_dent *e = NULL;
    if (consumer->name && consumer->pel) e = fri_dict_add(cg->consumers, name, len, NULL);
    if (!e) {
        fri_str_free(consumer->name);
        fri_sidmap_free(consumer->pel, NULL);
        fri_free(consumer);
        return NULL;
    }
    consumer->seen_time = now;
    e->v.ptr = consumer;
    fri_free(cg->by_name);
    cg->by_name = NULL;
    return consumer;
}

/* Redis's streamLookupConsumer (refreshing the seen time, SLC_DEFAULT) falling back to
 * streamCreateConsumer, as the delivering commands do (a new consumer notifies
 * "xgroup-createconsumer" on key).  Aborts when out of memory: the callers have already
 * changed the group. */
static fri_stream_consumer *consumer_get(fr_client *c, const fri_arg *key, fri_stream_cg *cg,
                                         const fri_arg *name, int64_t now)
{
    fri_stream_consumer *consumer = consumer_find(cg, name->ptr, name->len);
    if (consumer) {
        consumer->seen_time = now;
        return consumer;
    }
    consumer = consumer_create(cg, name->ptr, name->len, now);
    c->srv->dirty++; /* SCC_DEFAULT */
    fri_notify_key(c, FR_NOTIFY_STREAM, "xgroup-createconsumer", key);
    return consumer;
}

/* Redis's streamDelConsumer: drops the consumer's pending entries from the group too. */
static void consumer_delete(fri_stream_cg *cg, fri_stream_consumer *consumer)
{
    fri_sid id;
    void *val;
    while (fri_sidmap_first(consumer->pel, &id, &val)) {
        fri_sidmap_remove(consumer->pel, id);
        fri_sidmap_remove(cg->pel, id);
        fri_stream_nack_release(cg->stream, val);
    }
    fri_dict_delete(cg->consumers, consumer->name->buf, consumer->name->len, NULL);
    fri_free(cg->by_name);
    cg->by_name = NULL;
    fri_sidmap_free(consumer->pel, NULL);
    fri_str_free(consumer->name);
    fri_free(consumer);
}

/* A pending record delivered now to consumer (Redis's streamCreateNACK). */
static fri_stream_nack *nack_new(fri_stream_cg *cg, fri_stream_consumer *consumer, int64_t now)
{
    fri_stream_nack *nack = fri_stream_nack_alloc(cg->stream);
    if (!nack) return NULL;
    nack->delivery_time = now;
    nack->delivery_count = 1;
    nack->consumer = consumer;
    return nack;
}

/* Removes the record of id from the group's and its consumer's PEL and frees it. */
static void nack_delete(fri_stream_cg *cg, fri_sid id, fri_stream_nack *nack)
{
    fri_sidmap_remove(cg->pel, id);
    if (nack->consumer) fri_sidmap_remove(nack->consumer->pel, id);
    fri_stream_nack_release(cg->stream, nack);
}

/* Moves a record to consumer's PEL (a no-op when it is there already). */
static void nack_assign(fri_sid id, fri_stream_nack *nack, fri_stream_consumer *consumer)
{
    if (nack->consumer == consumer) return;
    if (nack->consumer) fri_sidmap_remove(nack->consumer->pel, id);
    fri_sidmap_insert(consumer->pel, id, nack);
    nack->consumer = consumer;
}

/* A dict's entries sorted by key bytes, the order of Redis's radix trees. */
typedef struct named_ref {
    const fri_str *name; /* the dict's key */
    void *val;           /* its value */
} named_ref;

static int cmp_named(const void *a, const void *b)
{
    const named_ref *x = a, *y = b;
    return fri_bytes_cmp(x->name->buf, x->name->len, y->name->buf, y->name->len);
}

/* Fills *out (heap, free() it; NULL when empty) with d's entries in name order and returns
 * how many, or -1 when out of memory.  d may be NULL (no entries). */
static long sorted_entries(fri_dict *d, named_ref **out)
{
    *out = NULL;
    size_t n = d ? fri_dict_size(d) : 0;
    if (n == 0) return 0;
    named_ref *v = fri_malloc(n * sizeof(*v));
    if (!v) return -1;
    size_t k = 0;
    for (size_t i = 0; i < fri_dict_slots(d); i++) {
        fri_dent *e = fri_dict_slot(d, i);
        if (e) v[k++] = (named_ref){e->key, e->v.ptr};
    }
    qsort(v, k, sizeof(*v), cmp_named);
    *out = v;
    return (long)k;
}

/* sorted_entries, replying the out-of-memory error when it fails (then -1). */
static long sorted_entries_or_reply(fr_client *c, fri_dict *d, named_ref **out)
{
    long n = sorted_entries(d, out);
    if (n < 0) fri_reply_error(c, FRI_ERR_OOM);
    return n;
}

/* The group's consumers in name order (fri_dict_size(cg->consumers) of them), sorted
 * once and kept until a consumer comes or goes: XPENDING's summary lists them on every
 * call.  NULL when out of memory or when there are none. */
static fri_stream_consumer **consumers_by_name(fri_stream_cg *cg)
{
    if (cg->by_name) return cg->by_name;
    named_ref *sorted;
    long n = sorted_entries(cg->consumers, &sorted);
    if (n <= 0) return NULL;
    cg->by_name = fri_malloc((size_t)n * sizeof(*cg->by_name));
    for (long i = 0; cg->by_name && i < n; i++) cg->by_name[i] = sorted[i].val;
    fri_free(sorted);
    return cg->by_name;
}

/* ----- Read counters and lag (Redis 7.0's entries_read bookkeeping) --------------------- */

/* Redis's streamRangeHasTombstones: may an entry deleted by XDEL lie in [start, end]?
 * Only the latest deletion is known, and one before the first live entry cannot. */
static int range_has_tombstones(const fri_stream *s, fri_sid start, fri_sid end)
{
    if (s->length == 0 || fri_sid_is_zero(s->max_deleted_entry_id)) return 0;
    if (fri_sid_cmp(s->first_id, s->max_deleted_entry_id) > 0) return 0;
    return fri_sid_cmp(start, s->max_deleted_entry_id) <= 0 &&
           fri_sid_cmp(s->max_deleted_entry_id, end) <= 0;
}

/* Redis's streamEstimateDistanceFromFirstEverEntry: the read counter of id, i.e. how many
 * entries ever added come up to it, when that can be known for sure; else
 * FRI_CG_INVALID_ENTRIES_READ. */
static long long estimate_entries_read(const fri_stream *s, fri_sid id)
{
    if (s->entries_added == 0) return 0;
    if (s->length == 0 && fri_sid_cmp(id, s->last_id) < 1) return (long long)s->entries_added;
    int cmp_last = fri_sid_cmp(id, s->last_id);
    if (cmp_last == 0) return (long long)s->entries_added;
    if (cmp_last > 0) return FRI_CG_INVALID_ENTRIES_READ;
    int cmp_first = fri_sid_cmp(id, s->first_id);
    if (fri_sid_is_zero(s->max_deleted_entry_id) ||
        fri_sid_cmp(s->max_deleted_entry_id, s->first_id) < 0) {
        /* no deletion after the first live entry: everything before it was removed */
        if (cmp_first < 0) return (long long)(s->entries_added - s->length);
        if (cmp_first == 0) return (long long)(s->entries_added - s->length + 1);
    }
    return FRI_CG_INVALID_ENTRIES_READ;
}

/* Redis's streamReplyWithCGLag: entries not yet delivered to the group, or nil when the
 * deletions make it unknowable.  Like Redis, a group whose counter was set past the
 * stream's (ENTRIESREAD) gets a negative lag. */
static void reply_cg_lag(fr_client *c, const fri_stream *s, const fri_stream_cg *cg)
{
    long long lag;
    if (s->entries_added == 0) {
        lag = 0;
    } else if (cg->entries_read != FRI_CG_INVALID_ENTRIES_READ &&
               !range_has_tombstones(s, cg->last_id, FRI_SID_MAX)) {
        lag = (long long)((uint64_t)s->entries_added - (uint64_t)cg->entries_read);
    } else {
        long long read = estimate_entries_read(s, cg->last_id);
        if (read == FRI_CG_INVALID_ENTRIES_READ) {
            fri_reply_nil(c);
            return;
        }
        /* unsigned: Redis's counters wrap (XSETID ENTRIESADDED can set them to the
         * top), and so must ours without undefined behaviour */
        lag = (long long)((uint64_t)s->entries_added - (uint64_t)read);
    }
    fri_reply_ll(c, lag);
}

/* The group's counter after delivering id, a new entry past last_id. */
static void cg_advance(fri_stream *s, fri_stream_cg *cg, fri_sid id)
{
    if (cg->entries_read != FRI_CG_INVALID_ENTRIES_READ &&
        !range_has_tombstones(s, id, FRI_SID_MAX))
        cg->entries_read = (long long)((uint64_t)cg->entries_read + 1); /* wraps as Redis's */
    else if (s->entries_added)
        cg->entries_read = estimate_entries_read(s, id);
    cg->last_id = id;
}

/* ----- Key lookups ------------------------------------------------------------------------ */

/* The stream at key (write as for fri_lookup_typed): NULL when missing (*wrongtype clear,
 * nothing replied) or of another type (*wrongtype set, WRONGTYPE replied). */
static fri_stream *stream_lookup(fr_client *c, const fri_arg *key, int write, int *wrongtype)
{
    fri_obj *o = fri_lookup_typed(c, key, FRI_STREAM, write, wrongtype);
    return o ? o->ptr : NULL;
}

/* The group argv[2] of the stream at argv[1], as XPENDING, XCLAIM and XAUTOCLAIM start;
 * *s is set to the stream (write as for stream_lookup).  NULL after replying: WRONGTYPE,
 * or NOGROUP when the key or the group is missing. */
static fri_stream_cg *cg_lookup_or_reply(fr_client *c, int write, fri_stream **s)
{
    int wrongtype;
    *s = stream_lookup(c, &c->argv[1], write, &wrongtype);
    if (wrongtype) return NULL;
    fri_stream_cg *cg = *s ? cg_lookup(*s, c->argv[2].ptr, c->argv[2].len) : NULL;
    if (!cg) reply_nogroup(c, &c->argv[1], &c->argv[2], "");
    return cg;
}

/* ----- XGROUP ---------------------------------------------------------------------------- */

/* What every XGROUP subcommand but HELP checks first, in Redis's order: CREATE's and
 * SETID's options (MKSTREAM for CREATE, ENTRIESREAD), the key's type, the key's existence
 * (unless MKSTREAM) and, for SETID / CREATECONSUMER / DELCONSUMER, the group's.  Fills
 * the out parameters; returns -1 after replying an error. */
static int xgroup_prelude(fr_client *c, fri_stream **s, fri_stream_cg **cg, int *mkstream,
                          long long *entries_read)
{
    const char *sub = c->cmd->name + sizeof("xgroup|") - 1;
    int is_create = strcmp(sub, "create") == 0;
    int is_setid = strcmp(sub, "setid") == 0;
    *mkstream = 0;
    *entries_read = FRI_CG_INVALID_ENTRIES_READ;
    *s = NULL;
    *cg = NULL;
    if (c->argc > 4 && (is_create || is_setid)) {
        for (int i = 5; i < c->argc;) {
            if (is_create && arg_cstr_is(&c->argv[i], "mkstream")) {
                *mkstream = 1;
                i++;
            } else if (arg_cstr_is(&c->argv[i], "entriesread") && i + 1 < c->argc) {
                if (fri_get_ll_or_reply(c, &c->argv[i + 1], entries_read, NULL) < 0) return -1;
                if (*entries_read < 0 && *entries_read != FRI_CG_INVALID_ENTRIES_READ) {
                    fri_reply_error(c, "ERR value for ENTRIESREAD must be positive or -1");
                    return -1;
                }
                i += 2;
            } else {
                reply_subcommand_syntax_error(c);
                return -1;
            }
        }
    }
    int wrongtype;
    *s = stream_lookup(c, &c->argv[2], 1, &wrongtype);
    if (wrongtype) return -1;
    if (*mkstream) return 0;
    if (!*s) {
        fri_reply_error(c, ERR_XGROUP_NOKEY);
        return -1;
    }
    *cg = cg_lookup(*s, c->argv[3].ptr, c->argv[3].len);
    if (!*cg && !is_create && strcmp(sub, "destroy") != 0) {
        reply_nogroup_for_key(c, &c->argv[3], &c->argv[2]);
        return -1;
    }
    return 0;
}

/* XGROUP CREATE key group id|$ [MKSTREAM] [ENTRIESREAD n]: a group whose last-delivered
 * id is id (the stream's last id for "$"); MKSTREAM creates a missing key as an empty
 * stream, which is the only case that touches WATCHers. */
static void xgroup_create_command(fr_client *c)
{
    fri_stream *s;
    fri_stream_cg *cg;
    int mkstream;
    long long entries_read;
    if (xgroup_prelude(c, &s, &cg, &mkstream, &entries_read) < 0) return;
    if (c->argc > 8) {
        reply_subcommand_syntax_error(c);
        return;
    }
    fri_sid id;
    if (arg_cstr_eq(&c->argv[4], "$")) id = s ? s->last_id : FRI_SID_MIN;
    else if (parse_strict_id(c, &c->argv[4], &id) < 0) return;

    fri_obj *created = NULL;
    if (!s) {
        s = fri_stream_new();
        created = s ? fri_obj_new(FRI_STREAM, s) : NULL;
        if (!created) {
            if (s) fri_stream_free(s);
            fri_reply_error(c, FRI_ERR_OOM);
            return;
        }
    }
    int exists;
    if (!cg_create(s, c->argv[3].ptr, c->argv[3].len, id, entries_read, &exists)) {
        if (created) fri_obj_free(created);
        fri_reply_error(c, exists ? ERR_BUSYGROUP : FRI_ERR_OOM);
        return;
    }
    if (created) {
        fri_db_add(c->db, c->argv[2].ptr, c->argv[2].len, created);
        fri_signal_modified(c, c->db, c->argv[2].ptr, c->argv[2].len);
    }
    fri_reply_ok(c);
    c->srv->dirty++; /* a change the AOF and the save points count */
    fri_notify_key(c, FR_NOTIFY_STREAM, "xgroup-create", &c->argv[2]);
}

/* XGROUP SETID key group id|$ [ENTRIESREAD n]: moves the last-delivered id (any id, "-"
 * and "+" included) and sets the read counter (unknown unless ENTRIESREAD says). */
static void xgroup_setid_command(fr_client *c)
{
    fri_stream *s;
    fri_stream_cg *cg;
    int mkstream;
    long long entries_read;
    if (xgroup_prelude(c, &s, &cg, &mkstream, &entries_read) < 0) return;
    if (c->argc != 5 && c->argc != 7) {
        reply_subcommand_syntax_error(c);
        return;
    }
    fri_sid id;
    if (arg_cstr_eq(&c->argv[4], "$")) id = s->last_id;
    else if (fri_sid_parse_or_reply(c, &c->argv[4], &id, 0, 0, NULL) < 0) return;
    cg->last_id = id;
    cg->entries_read = entries_read;
    fri_reply_ok(c);
    c->srv->dirty++; /* a change the AOF and the save points count */
    fri_notify_key(c, FR_NOTIFY_STREAM, "xgroup-setid", &c->argv[2]);
}

/* XGROUP DESTROY key group: 1 when the group existed (its PEL and consumers go too). */
static void xgroup_destroy_command(fr_client *c)
{
    fri_stream *s;
    fri_stream_cg *cg;
    int mkstream;
    long long entries_read;
    if (xgroup_prelude(c, &s, &cg, &mkstream, &entries_read) < 0) return;
    if (!cg) {
        fri_reply_ll(c, 0);
        return;
    }
    fri_dict_delete(s->cgroups, c->argv[3].ptr, c->argv[3].len, NULL);
    fri_stream_cg_free(cg);
    fri_reply_ll(c, 1);
    c->srv->dirty++; /* a change the AOF and the save points count */
    fri_notify_key(c, FR_NOTIFY_STREAM, "xgroup-destroy", &c->argv[2]);
}

/* XGROUP CREATECONSUMER key group consumer: 1 when created, 0 when it existed (its seen
 * time is left alone then). */
static void xgroup_createconsumer_command(fr_client *c)
{
    fri_stream *s;
    fri_stream_cg *cg;
    int mkstream;
    long long entries_read;
    if (xgroup_prelude(c, &s, &cg, &mkstream, &entries_read) < 0) return;
    const fri_arg *name = &c->argv[4];
    if (consumer_find(cg, name->ptr, name->len)) {
        c->srv->redis_errno = 0; /* raxTryInsert of a key that is there (fri_errno_load) */
        fri_reply_ll(c, 0);
        return;
    }
    if (!consumer_create(cg, name->ptr, name->len, c->now_ms)) {
        fri_reply_error(c, FRI_ERR_OOM);
        return;
    }
    c->srv->dirty++;
    fri_notify_key(c, FR_NOTIFY_STREAM, "xgroup-createconsumer", &c->argv[2]);
    fri_reply_ll(c, 1);
}

/* XGROUP DELCONSUMER key group consumer: how many entries were pending for it (they
 * leave the group's PEL with it), 0 when there was no such consumer. */
static void xgroup_delconsumer_command(fr_client *c)
{
    fri_stream *s;
    fri_stream_cg *cg;
    int mkstream;
    long long entries_read;
    if (xgroup_prelude(c, &s, &cg, &mkstream, &entries_read) < 0) return;
    fri_stream_consumer *consumer = consumer_find(cg, c->argv[4].ptr, c->argv[4].len);
    long long pending = 0;
    if (consumer) {
        pending = (long long)fri_sidmap_len(consumer->pel);
        consumer_delete(cg, consumer);
        c->srv->redis_errno = 0; /* its PEL walked to the end with raxNext */
        c->srv->dirty++;
        fri_notify_key(c, FR_NOTIFY_STREAM, "xgroup-delconsumer", &c->argv[2]);
    }
    fri_reply_ll(c, pending);
}

static void xgroup_help_command(fr_client *c)
{
    static const char *const help[] = {
        "CREATE <key> <groupname> <id|$> [option]",
        "    Create a new consumer group. Options are:",
        "    * MKSTREAM",
        "      Create the empty stream if it does not exist.",
        "    * ENTRIESREAD entries_read",
        "      Set the group's entries_read counter (internal use).",
        "CREATECONSUMER <key> <groupname> <consumer>",
        "    Create a new consumer in the specified group.",
        "DELCONSUMER <key> <groupname> <consumer>",
        "    Remove the specified consumer.",
        "DESTROY <key> <groupname>",
        "    Remove the specified group.",
        "SETID <key> <groupname> <id|$> [ENTRIESREAD entries_read]",
        "    Set the current group ID and entries_read counter.",
        NULL,
    };
    fri_reply_help(c, help);
}

/* ----- XREADGROUP ------------------------------------------------------------------------ */

/* Delivers the entries after start (new to the group) to consumer: Redis's
 * streamReplyWithRange with a group.  Each advances the group's last-delivered id and
 * read counter; without NOACK it becomes pending for consumer, taken from whichever
 * consumer held it before (SETID can make the group deliver an entry twice), with a fresh
 * delivery count of 1.  The entries are replied one after the other, without the array
 * header (the caller writes it): emitted entries are already in that array, and count
 * (0: no limit) bounds the total.  meta: the CLAIM form, [id, fields, 0, 0].  Returns the
 * new total. */
static long deliver_new(fr_client *c, fri_stream *s, fri_stream_cg *cg,
                        fri_stream_consumer *consumer, fri_sid start, long long count,
                        int noack, long emitted, int meta, const fri_arg *key,
                        const fri_arg *group)
{
    fri_stream_iter it;
    fri_sid id;
    long nfields;
    int moved = 0; /* NOACK moved the group on: propagated as XGROUP SETID */
    fri_stream_iter_start(&it, s, start, FRI_SID_MAX, 0);
    fri_stream_iter_errno(&it, c->srv);
    while (fri_stream_iter_next(&it, &id, &nfields)) {
        if (fri_sid_cmp(id, cg->last_id) > 0) {
            cg_advance(s, cg, id);
            moved |= noack;
        }
        fri_stream_reply_current_meta(c, &it, id, nfields, meta, 0, 0);
        if (!noack) {
            /* Usually new to the PEL: try the insertion first, which searches anyway;
             * only an entry redelivered after SETID finds its record there. */
            fri_stream_nack *nack = nack_new(cg, consumer, c->now_ms);
            if (fri_sidmap_insert(cg->pel, id, nack) > 0) {
                fri_sidmap_insert(consumer->pel, id, nack);
            } else {
                fri_stream_nack_release(cg->stream, nack);
                nack = fri_sidmap_get(cg->pel, id);
                nack_assign(id, nack, consumer);
                c->srv->redis_errno = 0; /* raxTryInsert found it there (fri_errno_load) */
            }
            nack->delivery_time = c->now_ms;
            nack->delivery_count = 1;
            propagate_xclaim(c, key, group, cg, id, nack);
        }
        emitted++;
        if (count && count == emitted) break;
    }
    if (moved) propagate_group_id(c, key, group, cg);
    return emitted;
}

/* deliver_new as a whole reply: the array of the entries delivered. */
static void reply_new(fr_client *c, fri_stream *s, fri_stream_cg *cg,
                      fri_stream_consumer *consumer, fri_sid start, long long count, int noack,
                      const fri_arg *key, const fri_arg *group)
{
    size_t handle = fri_reply_deferred_len(c);
    long emitted = deliver_new(c, s, cg, consumer, start, count, noack, 0, 0, key, group);
    fri_reply_set_deferred_len(c, handle, emitted);
}

/* Replies consumer's own pending entries after start (Redis's
 * streamReplyWithRangeFromConsumerPEL): each is delivered again (count + 1, delivered
 * now), except one deleted from the stream meanwhile, which comes back as [id, nil] and
 * keeps its counters. */
static void deliver_history(fr_client *c, fri_stream *s, fri_stream_consumer *consumer,
                            fri_sid start, long long count)
{
    size_t handle = fri_reply_deferred_len(c);
    long emitted = 0;
    fri_sidmap_iter it;
    fri_sid id;
    void *val;
    fri_stream_iter lookup; /* the PEL ascends: lookups reuse its decoded nodes */
    long nfields;
    fri_stream_iter_start(&lookup, s, FRI_SID_MIN, FRI_SID_MAX, 0);
    fri_stream_iter_errno(&lookup, c->srv);
    fri_sidmap_iter_init(&it, consumer->pel, start, FRI_SID_MAX, 0);
    /* Redis's loop is while (raxNext(PEL) && (!count || emitted < count)): its raxNext
     * runs off the PEL (errno = 0, see fri_errno_load) unless count stops it first with
     * an entry left */
    int more = 1;
    while ((!count || emitted < count) && (more = fri_sidmap_iter_next(&it, &id, &val))) {
        if (fri_stream_iter_seek(&lookup, id, &nfields)) {
            fri_stream_reply_current(c, &lookup, id, nfields);
            fri_stream_nack *nack = val;
            nack->delivery_time = c->now_ms;
            nack->delivery_count++;
        } else {
            fri_reply_array_len(c, 2);
            fri_reply_sid(c, id);
            fri_reply_null_array(c);
        }
        emitted++;
    }
    if (more && count && emitted == count) more = fri_sidmap_iter_next(&it, &id, &val);
    if (!more) c->srv->redis_errno = 0;
    fri_reply_set_deferred_len(c, handle, emitted);
}

/* ----- XREADGROUP ... CLAIM (Redis 8.4) ---------------------------------------------------- */

/* A pending record in Redis 8.4's delivery-time order (its pel_by_time index): the
 * delivery time as an unsigned number, then the id. */
typedef struct pel_by_time {
    int64_t time;          /* the record's delivery time when the list was made */
    fri_sid id;            /* its id */
    fri_stream_nack *nack; /* the record */
} pel_by_time;

static int cmp_pel_by_time(const void *a, const void *b)
{
    const pel_by_time *x = a, *y = b;
    uint64_t tx = (uint64_t)x->time, ty = (uint64_t)y->time;
    if (tx != ty) return tx < ty ? -1 : 1;
    return fri_sid_cmp(x->id, y->id);
}

/* The group's pending records, oldest delivery first, into *out (heap, free() it; NULL
 * when the PEL is empty).  Returns how many, or -1 when out of memory.  The fake keeps no
 * second index: a CLAIM read sorts the PEL, O(n log n) in its size. */
static long pel_sorted_by_time(fri_stream_cg *cg, pel_by_time **out)
{
    *out = NULL;
    size_t n = fri_sidmap_len(cg->pel);
    if (n == 0) return 0;
    pel_by_time *v = fri_malloc(n * sizeof(*v));
    if (!v) return -1;
    fri_sidmap_iter it;
    fri_sid id;
    void *val;
    size_t k = 0;
    fri_sidmap_iter_init(&it, cg->pel, FRI_SID_MIN, FRI_SID_MAX, 0);
    while (k < n && fri_sidmap_iter_next(&it, &id, &val)) {
        fri_stream_nack *nack = val;
        v[k++] = (pel_by_time){nack->delivery_time, id, nack};
    }
    qsort(v, k, sizeof(*v), cmp_pel_by_time);
    *out = v;
    return (long)k;
}

/* The delivery time of the oldest pending record (in v, sorted) whose entry is still in
 * the stream: 1 and *time, or 0 when there is none.  Redis 8.4 looks at this one entry
 * to decide whether a read can be served by claiming. */
static int oldest_live_pending(fri_stream *s, const pel_by_time *v, long n, int64_t *time)
{
    for (long i = 0; i < n; i++) {
        if (!fri_stream_entry_exists(s, v[i].id)) continue;
        *time = v[i].time;
        return 1;
    }
    return 0;
}

/* Idle since t, as Redis 8.4 computes it for CLAIM: unsigned, so a delivery time ahead of
 * the clock (a clock set back) counts as idle for ever. */
static uint64_t claim_idle(int64_t now, int64_t t) { return (uint64_t)now - (uint64_t)t; }

/* The claim phase (Redis 8.4's streamReplyWithRange with a min-idle-time): the pending
 * records of v (the group's, by delivery time) idle for at least min_idle are taken in
 * that order, at most count of them (0: no limit).  One whose entry is still in the
 * stream is answered [id, fields, idle, deliveries so far], moves to consumer and counts
 * one more delivery, now.  One whose entry was deleted meanwhile takes its place in the
 * count but is neither answered nor touched: it stays pending where it was (XAUTOCLAIM
 * or XACK clears it).  Returns how many entries were answered. */
static long claim_pending(fr_client *c, fri_stream *s, fri_stream_consumer *consumer,
                          const pel_by_time *v, long n, long long min_idle, long long count)
{
    long taken = 0, emitted = 0;
    fri_stream_iter lookup;
    fri_stream_iter_start(&lookup, s, FRI_SID_MIN, FRI_SID_MAX, 0);
    for (long i = 0; i < n; i++) {
        uint64_t idle = claim_idle(c->now_ms, v[i].time);
        if (idle < (uint64_t)min_idle) break; /* the rest were delivered later */
        taken++;
        long nfields;
        if (fri_stream_iter_seek(&lookup, v[i].id, &nfields)) {
            fri_stream_nack *nack = v[i].nack;
            fri_stream_reply_current_meta(c, &lookup, v[i].id, nfields, 1, (long long)idle,
                                          (long long)nack->delivery_count);
            nack_assign(v[i].id, nack, consumer);
            nack->delivery_time = c->now_ms;
            nack->delivery_count++;
            emitted++;
        }
        if (count && taken >= count) break;
    }
    return emitted;
}

/* XREADGROUP ... CLAIM min-idle-time STREAMS key... id... (Redis 8.4), after every key,
 * group and id was checked.  Per stream, in order:
 *   - the consumer is created if needed and seen now, whether the stream serves or not;
 *   - ">" serves when the stream has entries past the group's last-delivered id, or else
 *     when the oldest pending entry still in the stream has been idle min-idle-time;
 *     it answers first the claimed entries (claim_pending), then, while COUNT allows and
 *     only if there were new entries, the new ones as [id, fields, 0, 0];
 *   - another id reads the consumer's history exactly as without CLAIM (entries of two
 *     elements), and from then on CLAIM is ignored for the streams after it too, as
 *     Redis 8.4 forgets the option once a history read has served.
 * NOACK applies to the new entries only: a claimed entry stays pending.  Nothing to serve
 * answers the nil array (a blocking client blocks: blocked.c). */
static void xreadgroup_claim(fr_client *c, const fri_xread_opts *o, fri_stream **streams,
                             fri_stream_cg **groups, const fri_sid *ids)
{
    long long min_idle = o->claim;
    const fri_arg *cname = &c->argv[o->group_arg + 1];
    size_t handle = 0;
    long served = 0;
    for (int i = 0; i < o->nstreams; i++) {
        fri_stream *s = streams[i];
        fri_stream_cg *cg = groups[i];
        pel_by_time *pel = NULL;
        long npel = 0;
        int serve_claimed = 0;
        if (min_idle >= 0) {
            npel = pel_sorted_by_time(cg, &pel); /* a command: never out of memory */
            int64_t t;
            if (oldest_live_pending(s, pel, npel, &t))
                serve_claimed = claim_idle(c->now_ms, t) >= (uint64_t)min_idle;
        }
        fri_sid gt = ids[i];
        int history = fri_sid_cmp(gt, FRI_SID_MAX) != 0;
        int serve = history, claimed_only = 0;
        fri_sid maxid;
        if (!history && s->length > 0 && fri_stream_last_valid_id(s, &maxid) &&
            fri_sid_cmp(maxid, cg->last_id) > 0) {
            serve = 1;
            gt = cg->last_id;
        }
        fri_stream_consumer *consumer =
            consumer_get(c, &c->argv[o->streams_arg + i], cg, cname, c->now_ms);
        if (history) {
            min_idle = -1;
        } else if (!serve && serve_claimed) {
            serve = 1;
            claimed_only = 1;
        }
        if (serve) {
            if (++served == 1) handle = fri_reply_deferred_len(c);
            fri_sid start = gt;
            fri_sid_incr(&start);
            const fri_arg *key = &c->argv[o->streams_arg + i];
            fri_reply_array_len(c, 2);
            fri_reply_bulk(c, key->ptr, key->len);
            if (history) {
                deliver_history(c, s, consumer, start, o->count);
            } else {
                size_t h = fri_reply_deferred_len(c);
                long emitted = 0;
                if (min_idle >= 0)
                    emitted = claim_pending(c, s, consumer, pel, npel, min_idle, o->count);
                if (!claimed_only && !(o->count && o->count == emitted))
                    emitted = deliver_new(c, s, cg, consumer, start, o->count, o->noack,
                                          emitted, min_idle >= 0, key, &c->argv[o->group_arg]);
                fri_reply_set_deferred_len(c, h, emitted);
            }
        }
        fri_free(pel);
    }
    if (served) fri_reply_set_deferred_len(c, handle, served);
    else fri_reply_null_array(c);
}

int64_t fri_xreadgroup_claim_at(fr_client *c, int argc, const fri_arg *argv,
                                const fri_xread_opts *o)
{
    (void)argc;
    if (o->claim < 0 || !o->group_arg) return INT64_MAX;
    const fri_arg *group = &argv[o->group_arg];
    int found = 0;
    int64_t oldest = 0;
    for (int i = 0; i < o->nstreams; i++) {
        fri_obj *obj = fri_lookup_read(c, &argv[o->streams_arg + i]);
        if (!obj || obj->type != FRI_STREAM) continue;
        fri_stream *s = obj->ptr;
        fri_stream_cg *cg = cg_lookup(s, group->ptr, group->len);
        if (!cg) continue;
        pel_by_time *pel;
        long npel = pel_sorted_by_time(cg, &pel);
        int64_t t;
        if (npel > 0 && oldest_live_pending(s, pel, npel, &t) &&
            (!found || (uint64_t)t < (uint64_t)oldest)) {
            oldest = t;
            found = 1;
        }
        fri_free(pel);
    }
    uint64_t base = found ? (uint64_t)oldest : (uint64_t)c->now_ms;
    uint64_t at = base + (uint64_t)o->claim;
    if (at < base || at > (uint64_t)INT64_MAX - 1) return INT64_MAX; /* never */
    return (int64_t)at;
}

/* XREADGROUP GROUP group consumer [COUNT n] [BLOCK ms] [NOACK] STREAMS key... id...
 * ">" reads entries never delivered to the group; any other id reads the consumer's own
 * pending history after it.  Every key and group is checked (and every id parsed) before
 * anything is read.  A stream with nothing to serve is left out of the reply, and the
 * consumer is only created (or seen) on the streams that serve something; with nothing at
 * all the reply is the nil array, which is also what BLOCK's timeout answers: a client
 * with blocking on (blocked.c) blocks there instead, and fri_xreadgroup_serve_blocked
 * serves it when its stream grows. */
static void xreadgroup_command(fr_client *c)
{
    fri_propagate_prevent(c); /* what it does goes out as XCLAIMs and XGROUPs */
    fri_xread_opts o;
    if (fri_xread_parse_opts_or_reply(c, 1, &o) < 0) return;
    const fri_arg *group = &c->argv[o.group_arg];
    const fri_arg *cname = &c->argv[o.group_arg + 1];
    int n = o.nstreams;

    fri_sid small_ids[8];
    fri_stream_cg *small_groups[8];
    fri_stream *small_streams[8];
    fri_sid *ids = n <= 8 ? small_ids : fri_malloc(sizeof(*ids) * (size_t)n);
    fri_stream_cg **groups = n <= 8 ? small_groups : fri_malloc(sizeof(*groups) * (size_t)n);
    fri_stream **streams = n <= 8 ? small_streams : fri_malloc(sizeof(*streams) * (size_t)n);
    if (!ids || !groups || !streams) {
        fri_reply_error(c, FRI_ERR_OOM);
        goto cleanup;
    }

    for (int i = 0; i < n; i++) {
        const fri_arg *key = &c->argv[o.streams_arg + i];
        const fri_arg *idarg = &c->argv[o.streams_arg + n + i];
        int wrongtype;
        fri_stream *s = stream_lookup(c, key, 0, &wrongtype);
        if (wrongtype) goto cleanup;
        fri_stream_cg *cg = s ? cg_lookup(s, group->ptr, group->len) : NULL;
        if (!cg) {
            reply_nogroup(c, key, group, " in XREADGROUP with GROUP option");
            goto cleanup;
        }
        streams[i] = s;
        groups[i] = cg;
        if (arg_cstr_eq(idarg, "$")) {
            fri_reply_error(c, ERR_XREADGROUP_DOLLAR);
            goto cleanup;
        }
        if (o.claim >= 0 && arg_cstr_eq(idarg, "+")) {
            /* an 8.4 command gets 8.4's word for "+" (7.0: an invalid id) */
            fri_reply_error(c, ERR_XREADGROUP_PLUS);
            goto cleanup;
        }
        if (arg_cstr_eq(idarg, ">")) {
            ids[i] = FRI_SID_MAX; /* Redis's marker for ">" */
            continue;
        }
        if (parse_strict_id(c, idarg, &ids[i]) < 0) goto cleanup;
    }

    if (o.claim >= 0) {
        xreadgroup_claim(c, &o, streams, groups, ids);
        goto cleanup;
    }
    size_t handle = 0;
    long served = 0;
    for (int i = 0; i < n; i++) {
        fri_stream *s = streams[i];
        fri_stream_cg *cg = groups[i];
        fri_sid gt = ids[i];
        int history = fri_sid_cmp(gt, FRI_SID_MAX) != 0;
        if (!history) {
            fri_sid maxid;
            if (s->length == 0 || !fri_stream_last_valid_id(s, &maxid) ||
                fri_sid_cmp(maxid, cg->last_id) <= 0)
                continue;
            gt = cg->last_id;
        }
        if (++served == 1) handle = fri_reply_deferred_len(c);
        fri_sid start = gt;
        fri_sid_incr(&start);
        fri_reply_array_len(c, 2);
        const fri_arg *key = &c->argv[o.streams_arg + i];
        fri_reply_bulk(c, key->ptr, key->len);
        int existed = consumer_find(cg, cname->ptr, cname->len) != NULL;
        fri_stream_consumer *consumer = consumer_get(c, key, cg, cname, c->now_ms);
        /* the consumer reaches the AOF through the XCLAIMs, or made alone with NOACK */
        if (!existed && o.noack) propagate_consumer_creation(c, key, group, cname);
        if (history) deliver_history(c, s, consumer, start, o.count);
        else reply_new(c, s, cg, consumer, start, o.count, o.noack, key, group);
        c->srv->dirty++;
    }

    if (served) fri_reply_set_deferred_len(c, handle, served);
    else fri_reply_null_array(c);

cleanup:
    if (ids != small_ids) fri_free(ids);
    if (groups != small_groups) fri_free(groups);
    if (streams != small_streams) fri_free(streams);
}

int fri_xreadgroup_serve_blocked(fr_client *c, const fri_arg *key, const fri_arg *group,
                                 const fri_arg *consumer, long long count, int noack)
{
    fri_obj *o = fri_lookup_read(c, key);
    if (!o || o->type != FRI_STREAM) {
        fri_reply_error(c, "UNBLOCKED the stream key no longer exists");
        return 1;
    }
    fri_stream *s = o->ptr;
    fri_stream_cg *cg = cg_lookup(s, group->ptr, group->len);
    if (!cg) {
        fri_reply_error(c, "NOGROUP the consumer group this client was blocked on no longer "
                           "exists");
        return 1;
    }
    /* the stream's last id, not its last live entry: entries added and deleted since the
     * client blocked still wake it, with an empty list */
    if (fri_sid_cmp(s->last_id, cg->last_id) <= 0) return 0;
    fri_sid start = cg->last_id;
    fri_sid_incr(&start);
    int existed = consumer_find(cg, consumer->ptr, consumer->len) != NULL;
    fri_stream_consumer *cons = consumer_get(c, key, cg, consumer, c->now_ms);
    if (!existed && noack) propagate_consumer_creation(c, key, group, consumer);
    fri_reply_array_len(c, 1);
    fri_reply_array_len(c, 2);
    fri_reply_bulk(c, key->ptr, key->len);
    reply_new(c, s, cg, cons, start, count, noack, key, group);
    c->srv->dirty++;
    return 1;
}

/* Redis's xreadGetKeys: the keys are the first half of what follows the STREAMS option,
 * found by skipping the options before it; none when the line is malformed. */
static int xreadgroup_keys(int argc, const fri_arg *argv, int *keys, int max)
{
    int streams_pos = -1;
    for (int i = 1; i < argc; i++) {
        /* CLAIM (8.4) takes a value: 8.4 finds the keys past it (see xread_getkeys) */
        if (arg_cstr_is(&argv[i], "block") || arg_cstr_is(&argv[i], "count") ||
            arg_cstr_is(&argv[i], "claim")) {
            i++;
        } else if (arg_cstr_is(&argv[i], "group")) {
            i += 2;
        } else if (arg_cstr_is(&argv[i], "noack")) {
            continue;
        } else if (arg_cstr_is(&argv[i], "streams")) {
            streams_pos = i;
            break;
        } else {
            break;
        }
    }
    if (streams_pos < 0) return 0;
    int num = argc - streams_pos - 1;
    if (num == 0 || num % 2 != 0) return 0;
    num /= 2;
    int k = 0;
    for (int i = streams_pos + 1; i < argc - num && k < max; i++) keys[k++] = i;
    return k;
}

/* ----- XACK ------------------------------------------------------------------------------- */

/* XACK key group id...: how many of the ids were pending (they stop being).  A missing
 * key or group acknowledges nothing (0, without looking at the ids); otherwise every id
 * is parsed before any is acknowledged, so a bad one changes nothing. */
static void xack_command(fr_client *c)
{
    int wrongtype;
    fri_stream *s = stream_lookup(c, &c->argv[1], 0, &wrongtype); /* lookupKeyRead */
    if (wrongtype) return;
    fri_stream_cg *cg = s ? cg_lookup(s, c->argv[2].ptr, c->argv[2].len) : NULL;
    if (!cg) {
        fri_reply_ll(c, 0);
        return;
    }
    int n = c->argc - 3;
    fri_sid small[64]; /* a read's worth of ids (COUNT 64) without an allocation */
    fri_sid *ids = n <= 64 ? small : fri_malloc(sizeof(*ids) * (size_t)n);
    if (!ids) {
        fri_reply_error(c, FRI_ERR_OOM);
        return;
    }
    for (int i = 0; i < n; i++) {
        if (!fri_sid_parse_plain(&c->argv[3 + i], &ids[i], 0) &&
            parse_strict_id(c, &c->argv[3 + i], &ids[i]) < 0)
            goto cleanup;
    }
    long long acked = 0;
    for (int i = 0; i < n; i++) {
        /* removing finds the record: no separate lookup */
        fri_stream_nack *nack = fri_sidmap_remove(cg->pel, ids[i]);
        if (!nack) continue;
        if (nack->consumer) fri_sidmap_remove(nack->consumer->pel, ids[i]);
        fri_stream_nack_release(cg->stream, nack);
        acked++;
    }
    c->srv->dirty += (uint64_t)acked;
    fri_reply_ll(c, acked);
cleanup:
    if (ids != small) fri_free(ids);
}

/* ----- XPENDING ----------------------------------------------------------------------------- */

/* A stream id as a bulk string node (fri_tree_node). */
static void sid_at(fr_client *c, fr_reply *r, fri_sid id)
{
    char buf[FRI_REPLY_SMALL];
    fri_tree_bulk_at(c, r, buf, fri_sid_format(buf, id));
}

/* XPENDING's summary as nodes directly: [total, first, last, [[consumer, count]...]]. */
static void pending_summary_tree(fr_client *c, size_t total, fri_sid first, fri_sid last,
                                 fri_stream_consumer **consumers, long nc, long listed)
{
    fr_reply *r = fri_tree_node(c);
    fr_reply *el = fri_tree_nodes(c, 4 + 3 * (size_t)listed); /* the pairs' too */
    fri_tree_array_at(r, el, 4);
    fri_tree_int_at(&el[0], (long long)total);
    sid_at(c, &el[1], first);
    sid_at(c, &el[2], last);
    fr_reply *pairs = el + 4, *pair = pairs + listed;
    fri_tree_array_at(&el[3], pairs, (size_t)listed);
    for (long i = 0, k = 0; i < nc; i++) {
        size_t pending = fri_sidmap_len(consumers[i]->pel);
        if (pending == 0) continue;
        fri_tree_array_at(&pairs[k++], pair, 2);
        fri_tree_bulk_at(c, &pair[0], consumers[i]->name->buf, consumers[i]->name->len);
        char digits[24];
        size_t n = pending < 10 ? 1 : pending < 100 ? 2 : pending < 1000 ? 3 : pending < 10000 ? 4 : 0;
        if (n) /* counts mostly: their digits without a call */
            for (size_t d = n, x = pending; d > 0; d--, x /= 10) digits[d - 1] = (char)('0' + x % 10);
        else
            n = fri_ll2string(digits, sizeof(digits), (long long)pending);
        fri_tree_bulk_at(c, &pair[1], digits, n);
        pair += 2;
    }
}

/* One entry of XPENDING's extended form as nodes directly: [id, consumer, idle, count]. */
static void pending_entry_tree(fr_client *c, fri_sid id, const fri_stream_nack *nack,
                               long long idle)
{
    fr_reply *r = fri_tree_node(c);
    fr_reply *el = fri_tree_nodes(c, 4);
    fri_tree_array_at(r, el, 4);
    sid_at(c, &el[0], id);
    fri_tree_bulk_at(c, &el[1], nack->consumer->name->buf, nack->consumer->name->len);
    fri_tree_int_at(&el[2], idle);
    fri_tree_int_at(&el[3], (long long)nack->delivery_count);
}

/* XPENDING key group: [count, first id, last id, [[consumer, count]...]] (nils when
 * nothing is pending).  XPENDING key group [IDLE ms] start end count [consumer]: the
 * pending entries of [start, end] ("(" excludes), at most count, idle at least ms, of one
 * consumer if named, each as [id, consumer, ms since delivery, deliveries].  The range
 * and count are parsed before the key is looked at. */
static void xpending_command(fr_client *c)
{
    int justinfo = c->argc == 3;
    const fri_arg *consumer_arg = NULL;
    fri_sid start = FRI_SID_MIN, end = FRI_SID_MAX;
    long long count = 0, minidle = 0;
    if (c->argc != 3 && (c->argc < 6 || c->argc > 9)) {
        fri_reply_error(c, FRI_ERR_SYNTAX);
        return;
    }
    if (c->argc >= 6) {
        int at = 3;
        if (arg_cstr_is(&c->argv[3], "idle")) {
            if (fri_get_ll_or_reply(c, &c->argv[4], &minidle, NULL) < 0) return;
            if (c->argc < 8) {
                fri_reply_error(c, FRI_ERR_SYNTAX);
                return;
            }
            at += 2;
        }
        if (fri_get_ll_or_reply(c, &c->argv[at + 2], &count, NULL) < 0) return;
        if (count < 0) count = 0;
        int startex, endex;
        if (fri_sid_parse_interval_or_reply(c, &c->argv[at], &start, &startex, 0) < 0) return;
        if (startex && fri_sid_incr(&start) < 0) {
            fri_reply_error(c, "ERR invalid start ID for the interval");
            return;
        }
        if (fri_sid_parse_interval_or_reply(c, &c->argv[at + 1], &end, &endex, UINT64_MAX) < 0)
            return;
        if (endex && fri_sid_decr(&end) < 0) {
            fri_reply_error(c, "ERR invalid end ID for the interval");
            return;
        }
        if (at + 3 < c->argc) consumer_arg = &c->argv[at + 3];
    }

    fri_stream *s;
    fri_stream_cg *cg = cg_lookup_or_reply(c, 0, &s);
    if (!cg) return;

    if (justinfo) {
        fri_sid first, last;
        size_t total = fri_sidmap_len(cg->pel);
        if (total == 0) {
            fri_reply_array_len(c, 4);
            fri_reply_ll(c, 0);
            fri_reply_nil(c);
            fri_reply_nil(c);
            fri_reply_null_array(c);
            return;
        }
        long nc = (long)fri_dict_size(cg->consumers);
        fri_stream_consumer **consumers = nc ? consumers_by_name(cg) : NULL;
        if (nc && !consumers) {
            fri_reply_error(c, FRI_ERR_OOM);
            return;
        }
        fri_sidmap_first(cg->pel, &first, NULL);
        fri_sidmap_last(cg->pel, &last, NULL);
        c->srv->redis_errno = 0; /* Redis walks its consumers with raxNext to the end */
        long listed = 0; /* counted first: a header written in place costs no move */
        for (long i = 0; i < nc; i++) listed += fri_sidmap_len(consumers[i]->pel) != 0;
        int paused = 0;
        if (c->tree) {
            pending_summary_tree(c, total, first, last, consumers, nc, listed);
            if (!(paused = fri_tree_bytes_begin(c))) return;
        }
        fri_reply_array_len(c, 4);
        fri_reply_ll(c, (long long)total);
        fri_reply_sid(c, first);
        fri_reply_sid(c, last);
        fri_reply_array_len(c, listed);
        for (long i = 0; i < nc; i++) {
            fri_stream_consumer *consumer = consumers[i];
            size_t pending = fri_sidmap_len(consumer->pel);
            if (pending == 0) continue;
            fri_reply_array_len(c, 2);
            fri_reply_bulk_str(c, consumer->name);
            fri_reply_bulk_ll(c, (long long)pending);
        }
        if (paused) fri_tree_bytes_end(c);
        return;
    }

    fri_sidmap *pel = cg->pel;
    if (consumer_arg) {
        fri_stream_consumer *consumer = consumer_find(cg, consumer_arg->ptr, consumer_arg->len);
        if (!consumer) {
            fri_reply_empty_array(c);
            return;
        }
        pel = consumer->pel;
    }
    size_t handle = fri_reply_deferred_len(c);
    long listed = 0;
    fri_sidmap_iter it;
    fri_sid id;
    void *val;
    fri_sidmap_iter_init(&it, pel, start, FRI_SID_MAX, 0);
    int more = 1; /* Redis's raxNext in the same place: at the end, errno = 0 */
    while (count && (more = fri_sidmap_iter_next(&it, &id, &val)) && fri_sid_cmp(id, end) <= 0) {
        fri_stream_nack *nack = val;
        int64_t idle = c->now_ms - nack->delivery_time;
        if (minidle && idle < minidle) continue;
        listed++;
        count--;
        int paused = 0;
        if (c->tree) {
            pending_entry_tree(c, id, nack, idle < 0 ? 0 : idle);
            if (!(paused = fri_tree_bytes_begin(c))) continue;
        }
        fri_reply_array_len(c, 4);
        fri_reply_sid(c, id);
        fri_reply_bulk_str(c, nack->consumer->name);
        fri_reply_ll(c, idle < 0 ? 0 : idle);
        fri_reply_ll(c, (long long)nack->delivery_count);
        if (paused) fri_tree_bytes_end(c);
    }
    if (!more) c->srv->redis_errno = 0;
    fri_reply_set_deferred_len(c, handle, listed);
}

/* ----- XCLAIM and XAUTOCLAIM ----------------------------------------------------------------- */

/* Gives the pending entry id to consumer as XCLAIM / XAUTOCLAIM do: delivered at
 * delivery_time, its count set to retrycount when that is >= 0, else bumped unless
 * justid; then replies the id (justid) or the entry, which fri_stream_iter_seek has just
 * made entries' current one (nfields pairs). */
static void claim_one(fr_client *c, fri_stream_iter *entries, long nfields, fri_sid id,
                      fri_stream_nack *nack, fri_stream_consumer *consumer,
                      int64_t delivery_time, long long retrycount, int justid)
{
    nack->delivery_time = delivery_time;
    if (retrycount >= 0) nack->delivery_count = (uint64_t)retrycount;
    else if (!justid) nack->delivery_count++;
    nack_assign(id, nack, consumer);
    if (justid) fri_reply_sid(c, id);
    else fri_stream_reply_current(c, entries, id, nfields);
}

/* XCLAIM key group consumer min-idle-time id... [IDLE ms] [TIME ms] [RETRYCOUNT n]
 * [FORCE] [JUSTID] [LASTID id]: takes the listed pending entries idle at least
 * min-idle-time for consumer.  The ids end at the first argument that is not one; the
 * options follow.  An id whose entry was deleted from the stream leaves the PEL without
 * being reported; FORCE makes an existing entry pending even when it was not; JUSTID
 * answers ids and leaves the delivery count alone.  The consumer is created (or seen)
 * only when something is claimed. */
static void xclaim_command(fr_client *c)
{
    fri_stream *s;
    fri_stream_cg *cg = cg_lookup_or_reply(c, 0, &s);
    if (!cg) return;
    long long minidle;
    if (fri_get_ll_or_reply(c, &c->argv[4], &minidle,
                            "ERR Invalid min-idle-time argument for XCLAIM") < 0)
        return;
    if (minidle < 0) minidle = 0;

    int j;
    for (j = 5; j < c->argc; j++) {
        fri_sid id;
        if (fri_sid_parse_quiet(c->srv, &c->argv[j], &id, 0, 1) < 0) break;
    }
    int last_id_arg = j - 1;

    int64_t now = c->now_ms;
    long long retrycount = -1;
    long long deliverytime = -1;
    int force = 0, justid = 0, set_last_id = 0;
    fri_sid last_id = FRI_SID_MIN;
    for (; j < c->argc; j++) {
        int moreargs = c->argc - 1 - j;
        const fri_arg *opt = &c->argv[j];
        if (arg_cstr_is(opt, "force")) {
            force = 1;
        } else if (arg_cstr_is(opt, "justid")) {
            justid = 1;
        } else if (arg_cstr_is(opt, "idle") && moreargs) {
            long long idle;
            j++;
            if (fri_get_ll_or_reply(c, &c->argv[j], &idle,
                                    "ERR Invalid IDLE option argument for XCLAIM") < 0)
                return;
            /* an overflow lands outside [0, now], where the clamp below puts it to now */
            if (__builtin_sub_overflow((long long)now, idle, &deliverytime)) deliverytime = -2;
        } else if (arg_cstr_is(opt, "time") && moreargs) {
            j++;
            if (fri_get_ll_or_reply(c, &c->argv[j], &deliverytime,
                                    "ERR Invalid TIME option argument for XCLAIM") < 0)
                return;
        } else if (arg_cstr_is(opt, "retrycount") && moreargs) {
            j++;
            if (fri_get_ll_or_reply(c, &c->argv[j], &retrycount,
                                    "ERR Invalid RETRYCOUNT option argument for XCLAIM") < 0)
                return;
        } else if (arg_cstr_is(opt, "lastid") && moreargs) {
            fri_sid id;
            j++;
            if (parse_strict_id(c, &c->argv[j], &id) < 0) return;
            /* the last LASTID given wins, and only if it moves the group forward */
            last_id = id;
            set_last_id = fri_sid_cmp(id, cg->last_id) > 0;
        } else {
            fri_reply_errorf(c, "ERR Unrecognized XCLAIM option '%.*s'", cstr_len(opt),
                             opt->ptr);
            return;
        }
    }
    if (set_last_id) cg->last_id = last_id;
    int propagate_last_id = set_last_id; /* unless an XCLAIM carries it */
    /* A bogus delivery time (negative, or in the future) means now: clients compute it
     * from their own clocks, which may run ahead of the server's. */
    if (deliverytime != -1) {
        if (deliverytime < 0 || deliverytime > now) deliverytime = now;
    } else {
        deliverytime = now;
    }

    fri_stream_consumer *consumer = NULL;
    size_t handle = fri_reply_deferred_len(c);
    long claimed = 0;
    fri_stream_iter lookup; /* finds each id's entry (nodes decoded once) */
    long nfields;
    fri_stream_iter_start(&lookup, s, FRI_SID_MIN, FRI_SID_MAX, 0);
    fri_stream_iter_errno(&lookup, c->srv); /* Redis's streamEntryExists */
    for (j = 5; j <= last_id_arg; j++) {
        fri_sid id;
        parse_strict_id(NULL, &c->argv[j], &id);
        fri_stream_nack *nack = fri_sidmap_get(cg->pel, id);
        if (!fri_stream_iter_seek(&lookup, id, &nfields)) {
            if (nack) {
                /* propagated as the XCLAIM that removes it there too */
                propagate_xclaim(c, &c->argv[1], &c->argv[2], cg, id, nack);
                propagate_last_id = 0;
                c->srv->dirty++;
                nack_delete(cg, id, nack);
            }
            continue;
        }
        if (force && !nack) {
            nack = nack_new(cg, NULL, now);
            fri_sidmap_insert(cg->pel, id, nack);
        }
        if (!nack) continue;
        if (nack->consumer && minidle && now - nack->delivery_time < minidle) continue;
        if (!consumer) consumer = consumer_get(c, &c->argv[1], cg, &c->argv[3], now);
        claim_one(c, &lookup, nfields, id, nack, consumer, deliverytime, retrycount, justid);
        propagate_xclaim(c, &c->argv[1], &c->argv[2], cg, id, nack);
        propagate_last_id = 0;
        c->srv->dirty++;
        claimed++;
    }
    if (propagate_last_id) {
        propagate_group_id(c, &c->argv[1], &c->argv[2], cg);
        c->srv->dirty++;
    }
    fri_reply_set_deferred_len(c, handle, claimed);
    fri_propagate_prevent(c); /* what it did went out as XCLAIMs */
}

/* XAUTOCLAIM key group consumer min-idle-time start [COUNT n] [JUSTID]: claims up to n
 * (default 100) pending entries from start on that are idle at least min-idle-time,
 * looking at no more than 10 n of them.  Replies [cursor, claimed, deleted]: the cursor
 * is the next pending id to look at (0-0 when the scan reached the end), and deleted
 * lists the pending entries found deleted from the stream, which leave the PEL and count
 * against n. */
static void xautoclaim_command(fr_client *c)
{
    /* Redis looks the key up before it parses anything (the keymiss event comes first);
     * its type and the group are checked after the arguments */
    fri_obj *obj = fri_lookup_read(c, &c->argv[1]);
    long long minidle;
    if (fri_get_ll_or_reply(c, &c->argv[4], &minidle,
                            "ERR Invalid min-idle-time argument for XAUTOCLAIM") < 0)
        return;
    if (minidle < 0) minidle = 0;
    fri_sid start;
    int startex;
    if (fri_sid_parse_interval_or_reply(c, &c->argv[5], &start, &startex, 0) < 0) return;
    if (startex && fri_sid_incr(&start) < 0) {
        fri_reply_error(c, "ERR invalid start ID for the interval");
        return;
    }
    long long count = 100;
    int justid = 0;
    for (int j = 6; j < c->argc; j++) {
        int moreargs = c->argc - 1 - j;
        if (arg_cstr_is(&c->argv[j], "count") && moreargs) {
            if (fri_get_range_ll_or_reply(c, &c->argv[j + 1], 1, XAUTOCLAIM_MAX_COUNT, &count,
                                          "ERR COUNT must be > 0") < 0)
                return;
            j++;
        } else if (arg_cstr_is(&c->argv[j], "justid")) {
            justid = 1;
        } else {
            fri_reply_error(c, FRI_ERR_SYNTAX);
            return;
        }
    }

    if (obj && obj->type != FRI_STREAM) {
        fri_reply_error(c, FRI_ERR_WRONGTYPE);
        return;
    }
    fri_stream *s = obj ? obj->ptr : NULL;
    fri_stream_cg *cg = s ? cg_lookup(s, c->argv[2].ptr, c->argv[2].len) : NULL;
    if (!cg) {
        reply_nogroup(c, &c->argv[1], &c->argv[2], "");
        return;
    }
    if (count >= XAUTOCLAIM_ALLOC_LIMIT) {
        fri_reply_error(c, "ERR Insufficient memory, failed allocating transient memory, "
                           "COUNT too high.");
        return;
    }

    int64_t now = c->now_ms;
    long long attempts = count * XAUTOCLAIM_ATTEMPTS_FACTOR;
    fri_sid *deleted = NULL;
    size_t ndeleted = 0, deleted_cap = 0;
    fri_stream_consumer *consumer = NULL;
    long claimed = 0;
    int at_end = 0;

    /* The reply is [cursor, claimed, deleted]; the cursor and the claimed count are
     * known last: both are filled in after the claimed entries */
    fri_reply_array_len(c, 3);
    size_t cursor_at = fri_reply_deferred_bulk(c);
    size_t claimed_at = fri_reply_deferred_len(c);

    fri_sidmap_iter it;
    fri_sid id;
    void *val;
    fri_stream_iter lookup; /* finds each id's entry (the PEL ascends: nodes decoded once) */
    long nfields;
    fri_stream_iter_start(&lookup, s, FRI_SID_MIN, FRI_SID_MAX, 0);
    fri_stream_iter_errno(&lookup, c->srv); /* Redis's streamEntryExists */
    fri_sidmap_iter_init(&it, cg->pel, start, FRI_SID_MAX, 0);
    while (attempts-- && count) {
        if (!fri_sidmap_iter_next(&it, &id, &val)) {
            at_end = 1;
            break;
        }
        fri_stream_nack *nack = val;
        if (!fri_stream_iter_seek(&lookup, id, &nfields)) {
            propagate_xclaim(c, &c->argv[1], &c->argv[2], cg, id, nack);
            c->srv->dirty++;
            nack_delete(cg, id, nack);
            if (ndeleted == deleted_cap) {
                deleted_cap = deleted_cap ? deleted_cap * 2 : 8;
                fri_sid *grown = fri_realloc(deleted, deleted_cap * sizeof(*grown));
                deleted = grown;
            }
            deleted[ndeleted++] = id;
            count--;
            continue;
        }
        if (minidle && now - nack->delivery_time < minidle) continue;
        if (!consumer) consumer = consumer_get(c, &c->argv[1], cg, &c->argv[3], now);
        claim_one(c, &lookup, nfields, id, nack, consumer, now, -1, justid);
        propagate_xclaim(c, &c->argv[1], &c->argv[2], cg, id, nack);
        c->srv->dirty++;
        claimed++;
        count--;
    }
    fri_propagate_prevent(c); /* what it did went out as XCLAIMs */
    fri_sid cursor = FRI_SID_MIN;
    if (!at_end && fri_sidmap_iter_next(&it, &id, NULL)) cursor = id;
    /* Redis finds the cursor with one more raxNext: past the end, errno = 0 */
    if (fri_sid_cmp(cursor, FRI_SID_MIN) == 0) c->srv->redis_errno = 0;

    fri_reply_set_deferred_len(c, claimed_at, claimed);
    char buf[FRI_REPLY_SMALL];
    fri_reply_set_deferred_bulk(c, cursor_at, buf, fri_sid_format(buf, cursor));
    fri_reply_array_len(c, (long)ndeleted);
    for (size_t i = 0; i < ndeleted; i++) fri_reply_sid(c, deleted[i]);
    fri_free(deleted);
}

/* ----- XINFO -------------------------------------------------------------------------------- */

/* XINFO's common start: the stream at argv[2], else "no such key" / WRONGTYPE. */
static fri_stream *xinfo_stream(fr_client *c)
{
    int wrongtype;
    fri_stream *s = stream_lookup(c, &c->argv[2], 0, &wrongtype);
    if (!s && !wrongtype) fri_reply_error(c, FRI_ERR_NOKEY);
    return s;
}

/* XINFO CONSUMERS key group: per consumer in name order, its name, pending count and ms
 * since it was last seen. */
static void xinfo_consumers_command(fr_client *c)
{
    fri_stream *s = xinfo_stream(c);
    if (!s) return;
    fri_stream_cg *cg = cg_lookup(s, c->argv[3].ptr, c->argv[3].len);
    if (!cg) {
        reply_nogroup_for_key(c, &c->argv[3], &c->argv[2]);
        return;
    }
    named_ref *consumers;
    long n = sorted_entries_or_reply(c, cg->consumers, &consumers);
    if (n < 0) return;
    c->srv->redis_errno = 0; /* Redis walks them with raxNext to the end (fri_errno_load) */
    fri_reply_array_len(c, n);
    for (long i = 0; i < n; i++) {
        fri_stream_consumer *consumer = consumers[i].val;
        int64_t idle = c->now_ms - consumer->seen_time;
        fri_reply_map_len(c, 3);
        fri_reply_bulk_cstr(c, "name");
        fri_reply_bulk_str(c, consumer->name);
        fri_reply_bulk_cstr(c, "pending");
        fri_reply_ll(c, (long long)fri_sidmap_len(consumer->pel));
        fri_reply_bulk_cstr(c, "idle");
        fri_reply_ll(c, idle < 0 ? 0 : idle);
    }
    fri_free(consumers);
}

/* XINFO GROUPS key: per group in name order, its name, consumers, pending count,
 * last-delivered id, read counter (nil when unknown) and lag (nil when unknowable). */
static void xinfo_groups_command(fr_client *c)
{
    fri_stream *s = xinfo_stream(c);
    if (!s) return;
    named_ref *groups;
    long n = sorted_entries_or_reply(c, s->cgroups, &groups);
    if (n < 0) return;
    /* Redis walks its groups' tree with raxNext to the end (fri_errno_load); a stream
     * that never had a group has no tree */
    if (s->cgroups) c->srv->redis_errno = 0;
    fri_reply_array_len(c, n);
    for (long i = 0; i < n; i++) {
        fri_stream_cg *cg = groups[i].val;
        fri_reply_map_len(c, 6);
        fri_reply_bulk_cstr(c, "name");
        fri_reply_bulk_str(c, groups[i].name);
        fri_reply_bulk_cstr(c, "consumers");
        fri_reply_ll(c, (long long)fri_dict_size(cg->consumers));
        fri_reply_bulk_cstr(c, "pending");
        fri_reply_ll(c, (long long)fri_sidmap_len(cg->pel));
        fri_reply_bulk_cstr(c, "last-delivered-id");
        fri_reply_sid(c, cg->last_id);
        fri_reply_bulk_cstr(c, "entries-read");
        if (cg->entries_read != FRI_CG_INVALID_ENTRIES_READ) fri_reply_ll(c, cg->entries_read);
        else fri_reply_nil(c);
        fri_reply_bulk_cstr(c, "lag");
        reply_cg_lag(c, s, cg);
    }
    fri_free(groups);
}

/* Byte d (0..15) of id as Redis's radix tree keys it: ms then seq, big-endian. */
static unsigned sid_byte(fri_sid id, int d)
{
    uint64_t half = d < 8 ? id.ms : id.seq;
    return (unsigned)(half >> (56 - 8 * (d % 8))) & 0xffu;
}

/* Nodes of the radix tree holding keys[lo, hi) (sorted, distinct, sharing their first
 * depth bytes) below the node that stands for those depth bytes, that node included.
 * Redis's rax keeps itself compressed: a run of bytes with a single way on is one node,
 * a byte where keys part is a node with one child per way, each key ends in a leaf. */
static size_t rax_subtree_nodes(const fri_sid *keys, size_t lo, size_t hi, int depth)
{
    if (depth == 16) return 1;
    int d = depth;
    while (d < 16 && sid_byte(keys[lo], d) == sid_byte(keys[hi - 1], d)) d++;
    if (d > depth) return 1 + rax_subtree_nodes(keys, lo, hi, d);
    size_t nodes = 1;
    for (size_t i = lo; i < hi;) {
        size_t j = i + 1;
        while (j < hi && sid_byte(keys[j], depth) == sid_byte(keys[i], depth)) j++;
        nodes += rax_subtree_nodes(keys, i, j, depth + 1);
        i = j;
    }
    return nodes;
}

/* XINFO STREAM's radix-tree-nodes: the node count of a rax keyed by the stream's node
 * keys.  It depends only on the set of keys (checked against 7.0.15 over random inserts
 * and deletions).  (size_t)-1 when out of memory. */
static size_t rax_node_count(const fri_stream *s)
{
    size_t n = fri_stream_node_count(s);
    if (n == 0) return 1; /* the empty root */
    fri_sid *keys = fri_malloc(n * sizeof(*keys));
    if (!keys) return (size_t)-1;
    for (size_t i = 0; i < n; i++) keys[i] = fri_stream_node_key(s, i);
    size_t nodes = rax_subtree_nodes(keys, 0, n, 0);
    fri_free(keys);
    return nodes;
}

/* ----- COPY and MEMORY USAGE ------------------------------------------------------------- */

int fri_stream_cgroups_dup(fri_stream *dst, const fri_stream *src)
{
    size_t gslots = fri_dict_slots(src->cgroups);
    for (size_t g = 0; g < gslots; g++) {
        fri_dent *ge = fri_dict_slot(src->cgroups, g);
        if (!ge) continue;
        fri_stream_cg *cg = ge->v.ptr, *ncg;
        int exists;
        if (!(ncg = cg_create(dst, ge->key->buf, ge->key->len, cg->last_id, cg->entries_read,
                              &exists)))
            return -1;
        /* the group's pending entries first, then each consumer claims its own */
        fri_sidmap_iter it;
        fri_sid id;
        void *val;
        fri_sidmap_iter_init(&it, cg->pel, FRI_SID_MIN, FRI_SID_MAX, 0);
        while (fri_sidmap_iter_next(&it, &id, &val)) {
            const fri_stream_nack *nack = val;
            fri_stream_nack *copy = nack_new(ncg, NULL, nack->delivery_time);
            if (!copy) return -1;
            copy->delivery_count = nack->delivery_count;
            if (fri_sidmap_insert(ncg->pel, id, copy) < 0) {
                fri_stream_nack_release(ncg->stream, copy);
                return -1;
            }
        }
        size_t cslots = fri_dict_slots(cg->consumers);
        for (size_t k = 0; k < cslots; k++) {
            fri_dent *ce = fri_dict_slot(cg->consumers, k);
            if (!ce) continue;
            const fri_stream_consumer *cons = ce->v.ptr;
            fri_stream_consumer *ncons =
                consumer_create(ncg, cons->name->buf, cons->name->len, cons->seen_time);
            if (!ncons) return -1;
            fri_sidmap_iter_init(&it, cons->pel, FRI_SID_MIN, FRI_SID_MAX, 0);
            while (fri_sidmap_iter_next(&it, &id, NULL)) {
                fri_stream_nack *copy = fri_sidmap_get(ncg->pel, id);
                copy->consumer = ncons;
                if (fri_sidmap_insert(ncons->pel, id, copy) < 0) return -1;
            }
        }
    }
    return 0;
}

/* streamRadixTreeMemoryUsage of a rax of `keys` ids whose node count is nodes: 16 bytes
 * per key and 4 + 240 per node (Redis's own recipe, which drops the rax struct). */
static size_t rax_memory(size_t keys, size_t nodes) { return keys * 16 + nodes * (4 + 240); }

/* The node count of a rax holding a PEL's ids (1 for an empty one, its root). */
static size_t pel_rax_nodes(const fri_sidmap *pel)
{
    size_t n = fri_sidmap_len(pel), k = 0;
    if (n == 0) return 1;
    fri_sid *keys = fri_malloc(n * sizeof(*keys));
    if (!keys) return n; /* out of memory: an estimate, one node per key */
    fri_sidmap_iter it;
    fri_sidmap_iter_init(&it, pel, FRI_SID_MIN, FRI_SID_MAX, 0);
    while (k < n && fri_sidmap_iter_next(&it, &keys[k], NULL)) k++;
    size_t nodes = rax_subtree_nodes(keys, 0, k, 0);
    fri_free(keys);
    return nodes;
}

size_t fri_stream_memory_usage(const void *stream, size_t samples)
{
    const fri_stream *s = stream;
    size_t nnodes = fri_stream_node_count(s), rax_nodes = rax_node_count(s);
    if (rax_nodes == (size_t)-1) rax_nodes = nnodes;
    /* robj and the stream struct, its rax, then the listpacks: the first `samples` ones
     * measured, their mean for all but the last, which is measured too */
    size_t size = 16 + 80 + rax_memory(nnodes, rax_nodes);
    size_t lpsize = 0, sampled = 0;
    for (size_t i = 0; i < nnodes && sampled < samples; i++, sampled++) {
        size_t bytes = fri_stream_node_alloc_bytes(s, i);
        lpsize += fri_je_size(bytes);
    }
    if (nnodes <= sampled) {
        size += lpsize;
    } else {
        if (sampled) lpsize /= sampled;
        size += lpsize * (nnodes - 1);
        size_t last = fri_stream_node_alloc_bytes(s, nnodes - 1);
        size += fri_je_size(last);
    }
    /* each group: its struct, its PEL (a rax and a 24-byte record per entry); each
     * consumer: its struct, its name's bytes and its PEL's rax */
    size_t gslots = s->cgroups ? fri_dict_slots(s->cgroups) : 0;
    for (size_t g = 0; g < gslots; g++) {
        fri_dent *ge = fri_dict_slot(s->cgroups, g);
        if (!ge) continue;
        const fri_stream_cg *cg = ge->v.ptr;
        size_t pel = fri_sidmap_len(cg->pel);
        size += 40 + rax_memory(pel, pel_rax_nodes(cg->pel)) + 24 * pel;
        size_t cslots = fri_dict_slots(cg->consumers);
        for (size_t k = 0; k < cslots; k++) {
            fri_dent *ce = fri_dict_slot(cg->consumers, k);
            if (!ce) continue;
            const fri_stream_consumer *cons = ce->v.ptr;
            size += 24 + cons->name->len +
                    rax_memory(fri_sidmap_len(cons->pel), pel_rax_nodes(cons->pel));
        }
    }
    return size;
}

/* XINFO STREAM FULL's group part: per group its counters, its PEL and its consumers with
 * their PELs, each PEL cut at count entries (0 = all). */
static void reply_full_groups(fr_client *c, fri_stream *s, named_ref *groups, long ngroups,
                              long long count)
{
    fri_reply_array_len(c, ngroups);
    for (long i = 0; i < ngroups; i++) {
        fri_stream_cg *cg = groups[i].val;
        named_ref *consumers;
        long nc = sorted_entries(cg->consumers, &consumers); /* a command: no failure */
        fri_reply_map_len(c, 7);
        fri_reply_bulk_cstr(c, "name");
        fri_reply_bulk_str(c, groups[i].name);
        fri_reply_bulk_cstr(c, "last-delivered-id");
        fri_reply_sid(c, cg->last_id);
        fri_reply_bulk_cstr(c, "entries-read");
        if (cg->entries_read != FRI_CG_INVALID_ENTRIES_READ) fri_reply_ll(c, cg->entries_read);
        else fri_reply_nil(c);
        fri_reply_bulk_cstr(c, "lag");
        reply_cg_lag(c, s, cg);
        fri_reply_bulk_cstr(c, "pel-count");
        fri_reply_ll(c, (long long)fri_sidmap_len(cg->pel));
        fri_reply_bulk_cstr(c, "pending");
        size_t handle = fri_reply_deferred_len(c);
        long listed = 0;
        fri_sidmap_iter it;
        fri_sid id;
        void *val;
        fri_sidmap_iter_init(&it, cg->pel, FRI_SID_MIN, FRI_SID_MAX, 0);
        while ((!count || listed < count) && fri_sidmap_iter_next(&it, &id, &val)) {
            fri_stream_nack *nack = val;
            fri_reply_array_len(c, 4);
            fri_reply_sid(c, id);
            fri_reply_bulk_str(c, nack->consumer->name);
            fri_reply_ll(c, nack->delivery_time);
            fri_reply_ll(c, (long long)nack->delivery_count);
            listed++;
        }
        fri_reply_set_deferred_len(c, handle, listed);
        fri_reply_bulk_cstr(c, "consumers");
        fri_reply_array_len(c, nc);
        for (long k = 0; k < nc; k++) {
            fri_stream_consumer *consumer = consumers[k].val;
            fri_reply_map_len(c, 4);
            fri_reply_bulk_cstr(c, "name");
            fri_reply_bulk_str(c, consumer->name);
            fri_reply_bulk_cstr(c, "seen-time");
            fri_reply_ll(c, consumer->seen_time);
            fri_reply_bulk_cstr(c, "pel-count");
            fri_reply_ll(c, (long long)fri_sidmap_len(consumer->pel));
            fri_reply_bulk_cstr(c, "pending");
            handle = fri_reply_deferred_len(c);
            listed = 0;
            fri_sidmap_iter_init(&it, consumer->pel, FRI_SID_MIN, FRI_SID_MAX, 0);
            while ((!count || listed < count) && fri_sidmap_iter_next(&it, &id, &val)) {
                fri_stream_nack *nack = val;
                fri_reply_array_len(c, 3);
                fri_reply_sid(c, id);
                fri_reply_ll(c, nack->delivery_time);
                fri_reply_ll(c, (long long)nack->delivery_count);
                listed++;
            }
            fri_reply_set_deferred_len(c, handle, listed);
        }
        fri_free(consumers);
    }
}

/* XINFO STREAM key [FULL [COUNT n]]: the stream's counters and ids, then either the
 * number of groups and the first and last entries, or (FULL) up to n entries (default 10,
 * 0 for all) and every group in detail.  The key is looked up before the options are
 * read, so a missing key wins over a bad option. */
static void xinfo_stream_command(fr_client *c)
{
    fri_stream *s = xinfo_stream(c);
    if (!s) return;
    int full = c->argc > 3;
    long long count = 10;
    if (full) {
        if (!arg_cstr_is(&c->argv[3], "full")) {
            reply_subcommand_syntax_error(c);
            return;
        }
        if (c->argc > 4) {
            if (c->argc != 6 || !arg_cstr_is(&c->argv[4], "count")) {
                reply_subcommand_syntax_error(c);
                return;
            }
            if (fri_get_ll_or_reply(c, &c->argv[5], &count, NULL) < 0) return;
            if (count < 0) count = 10;
        }
    }
    size_t nodes = rax_node_count(s);
    named_ref *groups = NULL;
    long ngroups = full ? sorted_entries(s->cgroups, &groups) : 0;
    if (nodes == (size_t)-1 || ngroups < 0) {
        fri_reply_error(c, FRI_ERR_OOM);
        return;
    }
    fri_reply_map_len(c, full ? 9 : 10);
    fri_reply_bulk_cstr(c, "length");
    fri_reply_ll(c, (long long)s->length);
    fri_reply_bulk_cstr(c, "radix-tree-keys");
    fri_reply_ll(c, (long long)fri_stream_node_count(s));
    fri_reply_bulk_cstr(c, "radix-tree-nodes");
    fri_reply_ll(c, (long long)nodes);
    fri_reply_bulk_cstr(c, "last-generated-id");
    fri_reply_sid(c, s->last_id);
    fri_reply_bulk_cstr(c, "max-deleted-entry-id");
    fri_reply_sid(c, s->max_deleted_entry_id);
    fri_reply_bulk_cstr(c, "entries-added");
    fri_reply_ll(c, (long long)s->entries_added);
    fri_reply_bulk_cstr(c, "recorded-first-entry-id");
    fri_reply_sid(c, s->first_id);
    if (!full) {
        fri_sid id;
        fri_reply_bulk_cstr(c, "groups");
        fri_reply_ll(c, s->cgroups ? (long long)fri_dict_size(s->cgroups) : 0);
        fri_reply_bulk_cstr(c, "first-entry");
        /* Redis reads both with an iterator, which runs off an empty tree (errno = 0) */
        if (!s->length) c->srv->redis_errno = 0;
        /* the first entry of a walk each way (streamReplyWithRange, count 1): after
         * XSETID went below an emptied node, the last one may have the smaller id */
        for (int rev = 0; rev <= 1; rev++) {
            if (rev) fri_reply_bulk_cstr(c, "last-entry");
            fri_stream_iter it;
            long nfields;
            fri_stream_iter_start(&it, s, FRI_SID_MIN, FRI_SID_MAX, rev);
            if (fri_stream_iter_next(&it, &id, &nfields))
                fri_stream_reply_current(c, &it, id, nfields);
            else
                fri_reply_nil(c);
        }
        return;
    }
    fri_reply_bulk_cstr(c, "entries");
    fri_stream_reply_range(c, s, FRI_SID_MIN, FRI_SID_MAX, (size_t)count, 0);
    fri_reply_bulk_cstr(c, "groups");
    reply_full_groups(c, s, groups, ngroups, count);
    fri_free(groups);
    if (s->cgroups) c->srv->redis_errno = 0; /* the groups' tree walked to its end */
}

static void xinfo_help_command(fr_client *c)
{
    static const char *const help[] = {
        "CONSUMERS <key> <groupname>",
        "    Show consumers of <groupname>.",
        "GROUPS <key>",
        "    Show the stream consumer groups.",
        "STREAM <key> [FULL [COUNT <count>]",
        "    Show information about the stream.",
        NULL,
    };
    fri_reply_help(c, help);
}

/* ----- Inspection for tests (fakeredis.h) ------------------------------------------------- */

/* The group of the live stream at key in db, without lazy expiry; NULL when missing. */
static fri_stream_cg *inspect_group(fr_server *server, int db, const char *key, size_t key_len,
                                    const char *group, size_t group_len)
{
    if (!server || db < 0 || db >= FRI_DBNUM || !key || !group) return NULL;
    fri_dent *e = fri_dict_find(server->db[db].keys, key, key_len);
    if (!e) return NULL;
    fri_obj *o = e->v.ptr;
    if (o->type != FRI_STREAM || fri_obj_is_expired(o, fr_clock_now(server))) return NULL;
    return cg_lookup(o->ptr, group, group_len);
}

int fr_stream_pending(fr_server *server, int db, const char *key, size_t key_len,
                      const char *group, size_t group_len, const char *consumer,
                      size_t consumer_len, fr_pending **out, size_t *n)
{
    *out = NULL;
    *n = 0;
    fri_stream_cg *cg = inspect_group(server, db, key, key_len, group, group_len);
    if (!cg) return -1;
    fri_sidmap *pel = cg->pel;
    if (consumer) {
        fri_stream_consumer *owner = consumer_find(cg, consumer, consumer_len);
        if (!owner) return -1;
        pel = owner->pel;
    }
    size_t count = fri_sidmap_len(pel);
    if (count == 0) return 0;
    /* one block: the records, then every consumer name with its NUL */
    size_t bytes = count * sizeof(fr_pending);
    fri_sidmap_iter it;
    fri_sid id;
    void *val;
    fri_sidmap_iter_init(&it, pel, FRI_SID_MIN, FRI_SID_MAX, 0);
    while (fri_sidmap_iter_next(&it, &id, &val))
        bytes += ((fri_stream_nack *)val)->consumer->name->len + 1;
    fr_pending *v = fri_malloc_plain(bytes); /* the caller free()s it */
    if (!v) return -2;
    char *names = (char *)(v + count);
    int64_t now = fr_clock_now(server);
    size_t i = 0;
    fri_sidmap_iter_init(&it, pel, FRI_SID_MIN, FRI_SID_MAX, 0);
    while (fri_sidmap_iter_next(&it, &id, &val)) {
        fri_stream_nack *nack = val;
        const fri_str *name = nack->consumer->name;
        memcpy(names, name->buf, name->len);
        names[name->len] = '\0';
        int64_t idle = now - nack->delivery_time;
        v[i++] = (fr_pending){id.ms, id.seq, names, name->len, idle < 0 ? 0 : idle,
                              nack->delivery_count};
        names += name->len + 1;
    }
    *out = v;
    *n = count;
    return 0;
}

int fr_stream_consumer(fr_server *server, int db, const char *key, size_t key_len,
                       const char *group, size_t group_len, const char *consumer,
                       size_t consumer_len, fr_consumer_state *out)
{
    fri_stream_cg *cg = inspect_group(server, db, key, key_len, group, group_len);
    fri_stream_consumer *found = cg && consumer ? consumer_find(cg, consumer, consumer_len)
                                                : NULL;
    if (!found) return -1;
    int64_t idle = fr_clock_now(server) - found->seen_time;
    out->pending = fri_sidmap_len(found->pel);
    out->idle_ms = idle < 0 ? 0 : idle;
    return 0;
}

/* ----- The command table -------------------------------------------------------------------- */

static const fri_command xgroup_subcommands[] = {
    {"xgroup|create", xgroup_create_command, -5, FRI_CMD_WRITE | FRI_CMD_DENYOOM, "stream", 2, 2,
     1, NULL, NULL},
    {"xgroup|setid", xgroup_setid_command, -5, FRI_CMD_WRITE, "stream", 2, 2, 1, NULL, NULL},
    {"xgroup|destroy", xgroup_destroy_command, 4, FRI_CMD_WRITE, "stream", 2, 2, 1, NULL, NULL},
    {"xgroup|createconsumer", xgroup_createconsumer_command, 5, FRI_CMD_WRITE | FRI_CMD_DENYOOM,
     "stream", 2, 2, 1, NULL, NULL},
    {"xgroup|delconsumer", xgroup_delconsumer_command, 5, FRI_CMD_WRITE, "stream", 2, 2, 1, NULL,
     NULL},
    {"xgroup|help", xgroup_help_command, 2, FRI_CMD_LOADING | FRI_CMD_STALE, "stream", 0, 0, 0,
     NULL, NULL},
    {0},
};

static const fri_command xinfo_subcommands[] = {
    {"xinfo|consumers", xinfo_consumers_command, 4, FRI_CMD_READONLY, "stream", 2, 2, 1, NULL,
     NULL},
    {"xinfo|groups", xinfo_groups_command, 3, FRI_CMD_READONLY, "stream", 2, 2, 1, NULL, NULL},
    {"xinfo|stream", xinfo_stream_command, -3, FRI_CMD_READONLY, "stream", 2, 2, 1, NULL, NULL},
    {"xinfo|help", xinfo_help_command, 2, FRI_CMD_LOADING | FRI_CMD_STALE, "stream", 0, 0, 0,
     NULL, NULL},
    {0},
};

const fri_command fri_stream_group_commands[] = {
    {"xgroup", NULL, -2, FRI_CMD_CONTAINER, "stream", 0, 0, 0, NULL, xgroup_subcommands},
    {"xreadgroup", xreadgroup_command, -7, FRI_CMD_WRITE | FRI_CMD_BLOCKING, "stream", 0, 0, 0,
     xreadgroup_keys, NULL},
    {"xack", xack_command, -4, FRI_CMD_WRITE | FRI_CMD_FAST, "stream", 1, 1, 1, NULL, NULL},
    {"xpending", xpending_command, -3, FRI_CMD_READONLY, "stream", 1, 1, 1, NULL, NULL},
    {"xclaim", xclaim_command, -6, FRI_CMD_WRITE | FRI_CMD_FAST, "stream", 1, 1, 1, NULL, NULL},
    {"xautoclaim", xautoclaim_command, -6, FRI_CMD_WRITE | FRI_CMD_FAST, "stream", 1, 1, 1, NULL,
     NULL},
    {"xinfo", NULL, -2, FRI_CMD_CONTAINER, "stream", 0, 0, 0, NULL, xinfo_subcommands},
    {0},
};

/* ----- RESTORE (rdb.c) ------------------------------------------------------------------- */

fri_stream_cg *fri_stream_cg_restore(fri_stream *s, const char *name, size_t len, fri_sid last_id,
                                     long long entries_read, int *exists)
{
    return cg_create(s, name, len, last_id, entries_read, exists);
}

long long fri_stream_estimate_entries_read(const fri_stream *s, fri_sid id)
{
    return estimate_entries_read(s, id);
}

int fri_stream_pel_restore(fri_stream_cg *cg, fri_sid id, int64_t delivery_time,
                           uint64_t delivery_count)
{
    if (fri_sidmap_get(cg->pel, id)) return 0;
    fri_stream_nack *nack = nack_new(cg, NULL, delivery_time);
    if (!nack) return -1;
    nack->delivery_count = delivery_count;
    if (fri_sidmap_insert(cg->pel, id, nack) < 0) {
        fri_stream_nack_release(cg->stream, nack);
        return -1;
    }
    return 1;
}

fri_stream_consumer *fri_stream_consumer_restore(fri_stream_cg *cg, const char *name, size_t len,
                                                 int64_t seen_time, int *exists)
{
    *exists = consumer_find(cg, name, len) != NULL;
    return *exists ? NULL : consumer_create(cg, name, len, seen_time);
}

int fri_stream_consumer_pel_restore(fri_stream_cg *cg, fri_stream_consumer *consumer, fri_sid id)
{
    fri_stream_nack *nack = fri_sidmap_get(cg->pel, id);
    if (!nack || nack->consumer) return 0;
    nack_assign(id, nack, consumer);
    return 1;
}

int fri_stream_cg_restore_complete(const fri_stream_cg *cg)
{
    fri_sidmap_iter it;
    fri_sid id;
    void *val;
    fri_sidmap_iter_init(&it, cg->pel, FRI_SID_MIN, FRI_SID_MAX, 0);
    while (fri_sidmap_iter_next(&it, &id, &val))
        if (((const fri_stream_nack *)val)->consumer == NULL) return 0;
    return 1;
}
