/* keys.c -- the generic keyspace commands: what Redis keeps in db.c and expire.c.
 *
 * DEL, UNLINK, EXISTS, TOUCH, TYPE, KEYS, SCAN, RANDOMKEY, RENAME, RENAMENX, MOVE, COPY,
 * the EXPIRE family with NX/XX/GT/LT, TTL, PTTL, EXPIRETIME, PEXPIRETIME, PERSIST, and
 * the database-wide DBSIZE, FLUSHDB, FLUSHALL, SELECT and SWAPDB.
 *
 * Which lookups count as an access (OBJECT IDLETIME, OBJECT FREQ) is Redis's: TOUCH,
 * RENAME, MOVE, COPY and EXPIRE do; DEL, EXISTS, TYPE, TTL and friends, KEYS, SCAN and
 * RANDOMKEY do not.
 *
 * Replies and errors are redis-server 7.0's, byte for byte.  Where Redis's answer depends
 * on its hash table (the order of KEYS and SCAN, which key RANDOMKEY picks) the fake uses
 * the keyspace's insertion order and the server's seeded generator instead, so a run is
 * reproducible; callers that compare with a real server sort those replies.
 *
 * Expiry follows Redis's two rules, which differ at the boundary on purpose: a key whose
 * deadline equals the current time still exists (keyIsExpired: now > when), while an
 * EXPIRE whose computed deadline is <= now deletes the key at once (checkAlreadyExpired).
 * Every write signals the keys it modified, so WATCH sees what it sees in Redis.
 */
#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "fr_int.h"

/* ----- Small helpers ----------------------------------------------------------------- */

/* Byte-equality of two arguments (RENAME's same-name check is a binary compare). */
static int arg_eq(const fri_arg *a, const fri_arg *b)
{
    return a->len == b->len && (a->len == 0 || memcmp(a->ptr, b->ptr, a->len) == 0);
}

/* Redis's getIntFromObjectOrReply: a long long that must fit an int.  msg (a full error
 * text, may be NULL) replaces both the "not an integer" and the range error, as in Redis;
 * without it the range error names the int bounds.  0 on success, -1 after replying. */
static int get_int_or_reply(fr_client *c, const fri_arg *a, int *out, const char *msg)
{
    long long v;
    if (fri_get_range_ll_or_reply(c, a, INT_MIN, INT_MAX, &v, msg) != 0)
        return -1;
    *out = (int)v;
    return 0;
}

/* fri_dict_clear's value destructor for a database: values are fri_obj*. */
static void free_db_value(fri_val *v)
{
    fri_obj_free(v->ptr);
}

/* ----- DEL, UNLINK, EXISTS, TOUCH, TYPE ------------------------------------------------ */

/* DEL and UNLINK answer the same thing: UNLINK only frees lazily in Redis, and the fake
 * has nothing to free in the background.  A logically expired key counts as missing. */
static void del_generic_command(fr_client *c)
{
    long long deleted = 0;
    for (int j = 1; j < c->argc; j++) {
        const fri_arg *k = &c->argv[j];
        /* expireIfNeeded, then the delete: no keymiss event */
        if (fri_db_lookup(c->srv, c->db, k->ptr, k->len, c->now_ms) == NULL)
            continue;
        if (fri_db_delete(c->db, k->ptr, k->len)) {
            fri_signal_modified(c, c->db, k->ptr, k->len);
            fri_notify_key(c, FR_NOTIFY_GENERIC, "del", k);
            deleted++;
        }
    }
    fri_reply_ll(c, deleted);
}

/* Answers how many arguments from argv[1] on name a live key, repeats included, each
 * looked up by lookup. */
static void count_keys(fr_client *c, fri_obj *(*lookup)(fr_client *c, const fri_arg *key))
{
    long long count = 0;
    for (int j = 1; j < c->argc; j++)
        if (lookup(c, &c->argv[j]) != NULL)
            count++;
    fri_reply_ll(c, count);
}

/* EXISTS counts every argument that names a live key, repeats included (EXISTS a a = 2),
 * without touching them. */
static void exists_command(fr_client *c) { count_keys(c, fri_lookup_notouch); }

/* TOUCH answers the same count as EXISTS, and counts as an access to each key. */
static void touch_command(fr_client *c) { count_keys(c, fri_lookup_read); }

/* TYPE answers a status, "none" for a missing key. */
static void type_command(fr_client *c)
{
    fri_obj *o = fri_lookup_notouch(c, &c->argv[1]);
    fri_reply_status(c, o ? fri_type_name(o->type) : "none");
}

/* ----- KEYS, SCAN, RANDOMKEY ------------------------------------------------------------ */

/* KEYS pattern: every live key matching the glob, in insertion order.  Like Redis it
 * skips logically expired keys without deleting them. */
static void keys_command(fr_client *c)
{
    const fri_arg *pat = &c->argv[1];
    int all = pat->len == 1 && pat->ptr[0] == '*';
    fri_dict *d = c->db->keys;
    size_t slots = fri_dict_slots(d);
    size_t handle = fri_reply_deferred_len(c);
    long n = 0;

    for (size_t i = 0; i < slots; i++) {
        fri_dent *e = fri_dict_slot(d, i);
        if (e == NULL)
            continue;
        if (!all && !fri_glob_match(pat->ptr, pat->len, e->key->buf, e->key->len, 0))
            continue;
        if (fri_obj_is_expired(e->v.ptr, c->now_ms))
            continue;
        fri_reply_bulk_str(c, e->key);
        n++;
    }
    fri_reply_set_deferred_len(c, handle, n);
}

/* SCAN cursor [MATCH pattern] [COUNT count] [TYPE type]
 *
 * The cursor is the insertion sequence number (fri_dent.seq) of the first key not yet
 * visited; 0 starts a scan and, in a reply, says the scan is complete.  Because keys are
 * kept in insertion order and a key's seq never changes, resuming at the first entry with
 * seq >= cursor visits exactly the keys not visited yet: a key present for the whole scan
 * is returned exactly once, keys added meanwhile (higher seqs, at the end) may or may not
 * be returned, and deleted keys simply leave no entry to visit.
 *
 * Each call visits up to COUNT keys (default 10), matching or not, then filters them by
 * pattern, type and expiry, as Redis filters after collecting a batch.  When no key is
 * left after the batch the reply's cursor is 0, so a keyspace of at most COUNT keys is
 * scanned in one call, as a real server's SCAN does on a small table (Redis visits up to
 * COUNT*10 buckets per call; with exactly COUNT keys it may still answer a non-zero
 * cursor and an empty last page, which the fake does not reproduce). */
static void scan_command(fr_client *c)
{
    uint64_t cursor, next = 0;
    long long count = 10;
    const fri_arg *pat = NULL, *type = NULL;
    fri_dict *d = c->db->keys;
    fri_str **batch = NULL;
    size_t batch_len = 0, batch_cap = 0;
    size_t slots, i, handle;
    long n = 0;

    if (fri_get_scan_cursor_or_reply(c, &c->argv[1], &cursor) != 0)
        return;
    for (int j = 2; j < c->argc; j += 2) {
        const fri_arg *opt = &c->argv[j];
        int has_value = c->argc - j >= 2;
        if (has_value && fri_arg_is_cstr(opt, "count")) {
            if (fri_get_ll_or_reply(c, &c->argv[j + 1], &count, NULL) != 0)
                return;
            if (count < 1) {
                fri_reply_error(c, FRI_ERR_SYNTAX);
                return;
            }
        } else if (has_value && fri_arg_is_cstr(opt, "match")) {
            pat = &c->argv[j + 1];
            if (pat->len == 1 && pat->ptr[0] == '*')
                pat = NULL; /* matches everything: skip the glob */
        } else if (has_value && fri_arg_is_cstr(opt, "type")) {
            type = &c->argv[j + 1];
        } else {
            fri_reply_error(c, FRI_ERR_SYNTAX);
            return;
        }
    }

    /* Copy the batch's names first: filtering may delete expired keys, which moves the
     * table's entries. */
    slots = fri_dict_slots(d);
    for (i = fri_dict_slot_from_seq(d, cursor); i < slots; i++) {
        fri_dent *e = fri_dict_slot(d, i);
        if (e == NULL)
            continue;
        if ((long long)batch_len == count)
            break;
        if (batch_len == batch_cap) {
            size_t cap = batch_cap ? batch_cap * 2 : 16;
            fri_str **nb = fri_realloc(batch, cap * sizeof(*nb));
            if (nb == NULL)
                goto oom;
            batch = nb;
            batch_cap = cap;
        }
        batch[batch_len] = fri_str_new(e->key->buf, e->key->len);
        if (batch[batch_len] == NULL)
            goto oom;
        batch_len++;
    }
    for (; i < slots; i++) {
        fri_dent *e = fri_dict_slot(d, i);
        if (e != NULL) {
            next = e->seq;
            break;
        }
    }

    fri_reply_scan_cursor(c, next);
    handle = fri_reply_deferred_len(c);
    for (i = 0; i < batch_len; i++) {
        fri_str *k = batch[i];
        fri_obj *o;
        if (pat && !fri_glob_match(pat->ptr, pat->len, k->buf, k->len, 0))
            continue;
        /* The lookup deletes the key if it expired, as Redis's SCAN does. */
        o = fri_db_lookup(c->srv, c->db, k->buf, k->len, c->now_ms);
        if (type && !fri_arg_is_cstr(type, o ? fri_type_name(o->type) : "none"))
            continue;
        if (o == NULL)
            continue;
        fri_reply_bulk_str(c, k);
        n++;
    }
    fri_reply_set_deferred_len(c, handle, n);
    for (i = 0; i < batch_len; i++)
        fri_str_free(batch[i]);
    fri_free(batch);
    return;

oom:
    for (i = 0; i < batch_len; i++)
        fri_str_free(batch[i]);
    fri_free(batch);
    fri_reply_error(c, "ERR out of memory");
}

/* RANDOMKEY: a live key chosen with the server's seeded generator, nil when there is
 * none.  Expired keys are skipped, not deleted (Redis deletes them as it meets them; the
 * keyspace answers the same either way). */
static void randomkey_command(fr_client *c)
{
    fri_dict *d = c->db->keys;
    size_t slots = fri_dict_slots(d);
    size_t live = fri_db_size(c->srv, c->db, c->now_ms);
    size_t pick;

    if (live == 0) {
        fri_reply_nil(c);
        return;
    }
    pick = (size_t)(fri_random(c->srv) % live);
    for (size_t i = 0; i < slots; i++) {
        fri_dent *e = fri_dict_slot(d, i);
        if (e == NULL || fri_obj_is_expired(e->v.ptr, c->now_ms))
            continue;
        if (pick-- == 0) {
            fri_reply_bulk_str(c, e->key);
            return;
        }
    }
    fri_reply_nil(c); /* not reached while fri_db_size counts as this loop does */
}

/* ----- RENAME, RENAMENX, MOVE ------------------------------------------------------------- */

/* RENAME src dst / RENAMENX src dst.  The value keeps its TTL; an existing dst (and its
 * TTL) is replaced.  Renaming a key onto itself changes nothing and touches nothing, but
 * a missing source is an error even then.  Both names are signalled. */
static void rename_generic(fr_client *c, int nx)
{
    const fri_arg *src = &c->argv[1], *dst = &c->argv[2];
    fri_obj *o;

    if (fri_lookup_write(c, src) == NULL) {
        fri_reply_error(c, FRI_ERR_NOKEY);
        return;
    }
    if (arg_eq(src, dst)) {
        if (nx)
            fri_reply_ll(c, 0);
        else
            fri_reply_ok(c);
        return;
    }
    if (fri_lookup_write(c, dst) != NULL) {
        if (nx) {
            fri_reply_ll(c, 0);
            return;
        }
        fri_db_delete(c->db, dst->ptr, dst->len);
    }
    o = fri_db_unlink(c->db, src->ptr, src->len);
    fri_db_add(c->db, dst->ptr, dst->len, o);
    fri_exec_arg_moved(c, o, dst);
    fri_signal_modified(c, c->db, src->ptr, src->len);
    fri_signal_modified(c, c->db, dst->ptr, dst->len);
    fri_notify_key(c, FR_NOTIFY_GENERIC, "rename_from", src);
    fri_notify_key(c, FR_NOTIFY_GENERIC, "rename_to", dst);
    if (nx)
        fri_reply_ll(c, 1);
    else
        fri_reply_ok(c);
}

/* RENAME src dst: OK, or "ERR no such key". */
static void rename_command(fr_client *c)
{
    rename_generic(c, 0);
}

/* RENAMENX src dst: 1 if renamed, 0 when dst exists (or dst is src). */
static void renamenx_command(fr_client *c)
{
    rename_generic(c, 1);
}

/* MOVE key db: moves the key with its TTL to another database of this server; 0 when the
 * key is missing or already exists there.  Errors in Redis's order: cluster mode, the db
 * argument, its range, then the same-db check. */
static void move_command(fr_client *c)
{
    const fri_arg *key = &c->argv[1];
    fri_db *src = c->db, *dst;
    fri_obj *o;
    int id;

    if (c->srv->cluster_enabled) {
        fri_reply_error(c, "ERR MOVE is not allowed in cluster mode");
        return;
    }
    if (get_int_or_reply(c, &c->argv[2], &id, NULL) != 0)
        return;
    if (id < 0 || id >= FRI_DBNUM) {
        fri_reply_error(c, "ERR DB index is out of range");
        return;
    }
    dst = &c->srv->db[id];
    if (dst == src) {
        fri_reply_error(c, "ERR source and destination objects are the same");
        return;
    }
    if (fri_lookup_write(c, key) == NULL) {
        fri_reply_ll(c, 0);
        return;
    }
    if ((o = fri_db_lookup(c->srv, dst, key->ptr, key->len, c->now_ms)) != NULL) {
        fri_obj_touch(c->srv, o, c->now_ms); /* Redis looks it up for writing */
        fri_reply_ll(c, 0);
        return;
    }
    o = fri_db_unlink(src, key->ptr, key->len);
    fri_db_add(dst, key->ptr, key->len, o);
    fri_signal_modified(c, src, key->ptr, key->len);
    fri_signal_modified(c, dst, key->ptr, key->len);
    fri_notify(c->srv, FR_NOTIFY_GENERIC, "move_from", key->ptr, key->len, src->id);
    fri_notify(c->srv, FR_NOTIFY_GENERIC, "move_to", key->ptr, key->len, dst->id);
    fri_reply_ll(c, 1);
}

/* COPY source destination [DB destination-db] [REPLACE]: copies the value (any type, a
 * stream with its groups, consumers and pending entries) and its TTL; 1 when copied, 0
 * when the source is missing or the destination exists without REPLACE.  Options in any
 * order, the last DB winning; errors in Redis's order: a bad DB value or an unknown
 * option, another database in cluster mode, then the same key in the same database
 * (even when missing).  The copy is a new object: its idle time starts at 0. */
static void copy_command(fr_client *c)
{
    const fri_arg *key = &c->argv[1], *newkey = &c->argv[2];
    fri_db *src = c->db, *dst = c->db;
    int replace = 0;

    for (int j = 3; j < c->argc; j++) {
        int additional = c->argc - j - 1;
        if (fri_arg_is_cstr(&c->argv[j], "replace")) {
            replace = 1;
        } else if (fri_arg_is_cstr(&c->argv[j], "db") && additional >= 1) {
            int id;
            if (get_int_or_reply(c, &c->argv[j + 1], &id, NULL) != 0)
                return;
            if (id < 0 || id >= FRI_DBNUM) {
                fri_reply_error(c, "ERR DB index is out of range");
                return;
            }
            dst = &c->srv->db[id];
            j++;
        } else {
            fri_reply_error(c, FRI_ERR_SYNTAX);
            return;
        }
    }
    if (c->srv->cluster_enabled && (src->id != 0 || dst->id != 0)) {
        fri_reply_error(c, "ERR Copying to another database is not allowed in cluster mode");
        return;
    }
    if (src == dst && arg_eq(key, newkey)) {
        fri_reply_error(c, "ERR source and destination objects are the same");
        return;
    }

    fri_obj *o = fri_lookup_read(c, key);
    if (o == NULL) {
        fri_reply_ll(c, 0);
        return;
    }
    fri_obj *old = fri_db_lookup(c->srv, dst, newkey->ptr, newkey->len, c->now_ms);
    if (old != NULL) {
        fri_obj_touch(c->srv, old, c->now_ms); /* Redis looks it up for writing */
        if (!replace) {
            fri_reply_ll(c, 0);
            return;
        }
    }
    fri_obj *copy = fri_obj_dup(o);
    if (copy == NULL) {
        fri_reply_error(c, FRI_ERR_OOM);
        return;
    }
    copy->expire_ms = o->expire_ms;
    /* streamDup walks the stream's radix tree to its end, and raxNext then sets errno = 0
     * (the redis_errno mirror, fr_int.h) */
    if (o->type == FRI_STREAM) c->srv->redis_errno = 0;
    if (old != NULL)
        fri_db_delete(dst, newkey->ptr, newkey->len);
    fri_db_add(dst, newkey->ptr, newkey->len, copy);
    fri_signal_modified(c, dst, newkey->ptr, newkey->len);
    fri_notify(c->srv, FR_NOTIFY_GENERIC, "copy_to", newkey->ptr, newkey->len, dst->id);
    fri_reply_ll(c, 1);
}

/* ----- EXPIRE and friends ------------------------------------------------------------- */

#define EXPIRE_NX (1 << 0) /* only when the key has no TTL */
#define EXPIRE_XX (1 << 1) /* only when the key has a TTL */
#define EXPIRE_GT (1 << 2) /* only when the new deadline is later (no TTL = infinite) */
#define EXPIRE_LT (1 << 3) /* only when the new deadline is earlier */

/* The NX/XX/GT/LT words after the time (Redis 7.0).  They are checked before the time
 * itself, so "EXPIRE k abc foo" is an option error.  Repeats are allowed; NX with any
 * other, or GT with LT, is an error.  0 on success, -1 after replying. */
static int parse_expire_flags_or_reply(fr_client *c, int *flags)
{
    *flags = 0;
    for (int j = 3; j < c->argc; j++) {
        const fri_arg *opt = &c->argv[j];
        if (fri_arg_is_cstr(opt, "nx")) {
            *flags |= EXPIRE_NX;
        } else if (fri_arg_is_cstr(opt, "xx")) {
            *flags |= EXPIRE_XX;
        } else if (fri_arg_is_cstr(opt, "gt")) {
            *flags |= EXPIRE_GT;
        } else if (fri_arg_is_cstr(opt, "lt")) {
            *flags |= EXPIRE_LT;
        } else {
            /* Redis prints the option with %s: it stops at a NUL byte. */
            fri_reply_errorf(c, "ERR Unsupported option %.*s",
                             (int)strnlen(opt->ptr, opt->len), opt->ptr);
            return -1;
        }
    }
    if ((*flags & EXPIRE_NX) && (*flags & (EXPIRE_XX | EXPIRE_GT | EXPIRE_LT))) {
        fri_reply_error(c, "ERR NX and XX, GT or LT options at the same time are not "
                           "compatible");
        return -1;
    }
    if ((*flags & EXPIRE_GT) && (*flags & EXPIRE_LT)) {
        fri_reply_error(c, "ERR GT and LT options at the same time are not compatible");
        return -1;
    }
    return 0;
}

/* EXPIRE/PEXPIRE (basetime = now) and EXPIREAT/PEXPIREAT (basetime = 0) key time
 * [NX|XX|GT|LT].  A time whose conversion to ms or addition to basetime overflows is
 * "invalid expire time" even for a missing key (Redis checks only the upper bound of the
 * addition, so large negative times are accepted).  Answers 0 for a missing key or a
 * failed condition, else 1; a deadline <= now deletes the key instead of setting it. */
static void expire_generic(fr_client *c, long long basetime, int seconds, const char *name)
{
    const fri_arg *key = &c->argv[1];
    long long when;
    int flags;
    fri_obj *o;

    if (parse_expire_flags_or_reply(c, &flags) != 0)
        return;
    if (fri_get_ll_or_reply(c, &c->argv[2], &when, NULL) != 0)
        return;
    if (seconds) {
        if (when > LLONG_MAX / 1000 || when < LLONG_MIN / 1000) {
            fri_reply_errorf(c, "ERR invalid expire time in '%s' command", name);
            return;
        }
        when *= 1000;
    }
    if (when > LLONG_MAX - basetime) {
        fri_reply_errorf(c, "ERR invalid expire time in '%s' command", name);
        return;
    }
    when += basetime;

    o = fri_lookup_write(c, key);
    if (o == NULL) {
        fri_reply_ll(c, 0);
        return;
    }
    if (flags) {
        long long cur = o->expire_ms; /* -1: no TTL, which GT/LT treat as infinite */
        if ((flags & EXPIRE_NX) && cur != -1) {
            fri_reply_ll(c, 0);
            return;
        }
        if ((flags & EXPIRE_XX) && cur == -1) {
            fri_reply_ll(c, 0);
            return;
        }
        if ((flags & EXPIRE_GT) && (cur == -1 || when <= cur)) {
            fri_reply_ll(c, 0);
            return;
        }
        if ((flags & EXPIRE_LT) && cur != -1 && when >= cur) {
            fri_reply_ll(c, 0);
            return;
        }
    }

    int gone = when <= c->now_ms && !c->srv->loading; /* checkAlreadyExpired */
    if (gone)
        fri_db_delete(c->db, key->ptr, key->len);
    else
        o->expire_ms = when;
    fri_signal_modified(c, c->db, key->ptr, key->len);
    fri_notify_key(c, FR_NOTIFY_GENERIC, gone ? "del" : "expire", key);
    fri_reply_ll(c, 1);
    /* propagated as DEL key, or as PEXPIREAT key <ms> with the options kept */
    if (fri_propagating(c->srv)) {
        if (gone) {
            fri_arg v[2] = {{"DEL", 3}, *key};
            fri_propagate_rewrite(c, 2, v);
        } else if (basetime != 0 || seconds) {
            char ms[24];
            fri_arg small[8] = {{0}};
            fri_arg *v = c->argc <= 8 ? small : fri_malloc(sizeof(*v) * (size_t)c->argc);
            memcpy(v, c->argv, sizeof(*v) * (size_t)c->argc);
            v[0] = (fri_arg){"PEXPIREAT", 9};
            v[2] = (fri_arg){ms, fri_ll2string(ms, sizeof(ms), when)};
            fri_propagate_rewrite(c, c->argc, v);
            if (v != small) fri_free(v);
        }
    }
}

/* The four entry points differ in the unit of the time and what it is relative to. */
static void expire_command(fr_client *c)
{
    expire_generic(c, c->now_ms, 1, "expire");
}

static void pexpire_command(fr_client *c)
{
    expire_generic(c, c->now_ms, 0, "pexpire");
}

static void expireat_command(fr_client *c)
{
    expire_generic(c, 0, 1, "expireat");
}

static void pexpireat_command(fr_client *c)
{
    expire_generic(c, 0, 0, "pexpireat");
}

/* TTL, PTTL, EXPIRETIME, PEXPIRETIME: -2 for a missing key, -1 without a TTL.  A TTL is
 * never negative (0 at the deadline itself, when the key still exists).  Seconds are
 * rounded as Redis rounds them, (ms + 500) / 1000; Redis's sum wraps past LLONG_MAX
 * and the division then acts as unsigned, which the unsigned arithmetic reproduces. */
static void ttl_generic(fr_client *c, int output_ms, int output_abs)
{
    fri_obj *o = fri_lookup_notouch(c, &c->argv[1]);
    long long ttl;

    if (o == NULL) {
        fri_reply_ll(c, -2);
        return;
    }
    if (o->expire_ms == -1) {
        fri_reply_ll(c, -1);
        return;
    }
    ttl = output_abs ? o->expire_ms : o->expire_ms - c->now_ms;
    if (ttl < 0)
        ttl = 0;
    if (output_ms)
        fri_reply_ll(c, ttl);
    else
        fri_reply_ll(c, (long long)(((unsigned long long)ttl + 500) / 1000));
}

/* The four entry points differ in unit (s or ms) and form (relative or absolute). */
static void ttl_command(fr_client *c)
{
    ttl_generic(c, 0, 0);
}

static void pttl_command(fr_client *c)
{
    ttl_generic(c, 1, 0);
}

static void expiretime_command(fr_client *c)
{
    ttl_generic(c, 0, 1);
}

static void pexpiretime_command(fr_client *c)
{
    ttl_generic(c, 1, 1);
}

/* PERSIST: 1 if a TTL was removed, 0 for a missing key or one without a TTL. */
static void persist_command(fr_client *c)
{
    const fri_arg *key = &c->argv[1];
    fri_obj *o = fri_lookup_write(c, key);

    if (o == NULL || o->expire_ms == -1) {
        fri_reply_ll(c, 0);
        return;
    }
    o->expire_ms = -1;
    fri_signal_modified(c, c->db, key->ptr, key->len);
    fri_notify_key(c, FR_NOTIFY_GENERIC, "persist", key);
    fri_reply_ll(c, 1);
}

/* ----- DBSIZE, FLUSHDB, FLUSHALL, SELECT, SWAPDB --------------------------------------- */

/* DBSIZE counts live keys only.  Redis counts keys whose TTL passed until its active
 * expiry cycle removes them; the fake behaves as if that cycle had just run, so the
 * answer does not depend on timing -- unless the embedder said there is no such cycle
 * (fr_server_set_active_expiry, DEBUG SET-ACTIVE-EXPIRE 0): then every key counts. */
static void dbsize_command(fr_client *c)
{
    fri_reply_ll(c, (long long)fri_db_size(c->srv, c->db, c->now_ms));
}

/* The optional SYNC/ASYNC word of FLUSHDB/FLUSHALL (the fake frees synchronously either
 * way).  Anything else, or more than one word, is a syntax error.  0 or -1 after
 * replying. */
static int parse_flush_flags_or_reply(fr_client *c)
{
    if (c->argc == 1)
        return 0;
    if (c->argc == 2 &&
        (fri_arg_is_cstr(&c->argv[1], "sync") || fri_arg_is_cstr(&c->argv[1], "async")))
        return 0;
    fri_reply_error(c, FRI_ERR_SYNTAX);
    return -1;
}

/* FLUSHDB [ASYNC|SYNC]: WATCHed keys that exist are touched before the keys go. */
static void flushdb_command(fr_client *c)
{
    if (parse_flush_flags_or_reply(c) != 0)
        return;
    fri_touch_all_watched(c->srv, c->db->id);
    c->srv->dirty += fri_dict_size(c->db->keys); /* emptyData's count */
    fri_dict_clear(c->db->keys, free_db_value);
    fri_key_report_flushed(c->srv, c, c->db->id);
    fri_reply_ok(c);
}

/* FLUSHALL [ASYNC|SYNC]: every database, WATCHed keys touched first. */
static void flushall_command(fr_client *c)
{
    if (parse_flush_flags_or_reply(c) != 0)
        return;
    fri_touch_all_watched(c->srv, -1);
    for (int i = 0; i < FRI_DBNUM; i++) {
        c->srv->dirty += fri_dict_size(c->srv->db[i].keys); /* emptyData's count */
        fri_dict_clear(c->srv->db[i].keys, free_db_value);
    }
    fri_key_report_flushed(c->srv, c, -1);
    fri_reply_ok(c);
}

/* SELECT index.  In cluster mode only database 0 may be selected (SELECT 0 is OK). */
static void select_command(fr_client *c)
{
    int id;

    if (get_int_or_reply(c, &c->argv[1], &id, NULL) != 0)
        return;
    if (c->srv->cluster_enabled && id != 0) {
        fri_reply_error(c, "ERR SELECT is not allowed in cluster mode");
        return;
    }
    if (id < 0 || id >= FRI_DBNUM) {
        fri_reply_error(c, "ERR DB index is out of range");
        return;
    }
    c->db = &c->srv->db[id];
    fri_reply_ok(c);
}

/* SWAPDB index1 index2: the two databases exchange their keys; clients stay on their
 * database number, and WATCHes stay with the number too.  WATCHed keys are touched as
 * Redis's dbSwapDatabases does, before the exchange (fri_touch_watched_swapped: a key
 * that exists in either database, unless only expired keys are involved). */
static void swapdb_command(fr_client *c)
{
    int id1, id2;
    fri_dict *tmp;

    if (c->srv->cluster_enabled) {
        fri_reply_error(c, "ERR SWAPDB is not allowed in cluster mode");
        return;
    }
    if (get_int_or_reply(c, &c->argv[1], &id1, "ERR invalid first DB index") != 0)
        return;
    if (get_int_or_reply(c, &c->argv[2], &id2, "ERR invalid second DB index") != 0)
        return;
    if (id1 < 0 || id1 >= FRI_DBNUM || id2 < 0 || id2 >= FRI_DBNUM) {
        fri_reply_error(c, "ERR DB index is out of range");
        return;
    }
    if (id1 != id2) {
        fri_touch_watched_swapped(c->srv, id1, id2, c->now_ms);
        fri_touch_watched_swapped(c->srv, id2, id1, c->now_ms);
        c->srv->dirty++;
        tmp = c->srv->db[id1].keys;
        c->srv->db[id1].keys = c->srv->db[id2].keys;
        c->srv->db[id2].keys = tmp;
    }
    fri_reply_ok(c);
}

/* ----- The table ------------------------------------------------------------------------ */

#include "cmd_flags.h"

/* Arity, flags and key positions as Redis 7.0's COMMAND INFO reports them. */
const fri_command fri_keyspace_commands[] = {
    {"del", del_generic_command, -2, W, "generic", 1, -1, 1, NULL, NULL},
    {"unlink", del_generic_command, -2, W | F, "generic", 1, -1, 1, NULL, NULL},
    {"exists", exists_command, -2, R | F, "generic", 1, -1, 1, NULL, NULL},
    {"touch", touch_command, -2, R | F, "generic", 1, -1, 1, NULL, NULL},
    {"type", type_command, 2, R | F, "generic", 1, 1, 1, NULL, NULL},
    {"keys", keys_command, 2, R, "generic", 0, 0, 0, NULL, NULL},
    {"scan", scan_command, -2, R, "generic", 0, 0, 0, NULL, NULL},
    {"randomkey", randomkey_command, 1, R, "generic", 0, 0, 0, NULL, NULL},
    {"rename", rename_command, 3, W, "generic", 1, 2, 1, NULL, NULL},
    {"renamenx", renamenx_command, 3, W | F, "generic", 1, 2, 1, NULL, NULL},
    {"move", move_command, 3, W | F, "generic", 1, 1, 1, NULL, NULL},
    {"copy", copy_command, -3, W | FRI_CMD_DENYOOM, "generic", 1, 2, 1, NULL, NULL},
    {"expire", expire_command, -3, W | F, "generic", 1, 1, 1, NULL, NULL},
    {"pexpire", pexpire_command, -3, W | F, "generic", 1, 1, 1, NULL, NULL},
    {"expireat", expireat_command, -3, W | F, "generic", 1, 1, 1, NULL, NULL},
    {"pexpireat", pexpireat_command, -3, W | F, "generic", 1, 1, 1, NULL, NULL},
    {"ttl", ttl_command, 2, R | F, "generic", 1, 1, 1, NULL, NULL},
    {"pttl", pttl_command, 2, R | F, "generic", 1, 1, 1, NULL, NULL},
    {"expiretime", expiretime_command, 2, R | F, "generic", 1, 1, 1, NULL, NULL},
    {"pexpiretime", pexpiretime_command, 2, R | F, "generic", 1, 1, 1, NULL, NULL},
    {"persist", persist_command, 2, W | F, "generic", 1, 1, 1, NULL, NULL},
    {"dbsize", dbsize_command, 1, R | F, "server", 0, 0, 0, NULL, NULL},
    {"flushdb", flushdb_command, -1, W, "server", 0, 0, 0, NULL, NULL},
    {"flushall", flushall_command, -1, W, "server", 0, 0, 0, NULL, NULL},
    {"swapdb", swapdb_command, 3, W | F, "server", 0, 0, 0, NULL, NULL},
    {"select", select_command, 2, FRI_CMD_LOADING | FRI_CMD_STALE | F, "connection", 0, 0, 0,
     NULL, NULL},
    {NULL, NULL, 0, 0, NULL, 0, 0, 0, NULL, NULL},
};
