/* t_hash.c -- the hash type: HSET, HGET, HINCRBY and the rest of Redis 7.0's hash group.
 *
 * A hash is a fri_obj of type FRI_HASH whose ptr is a fri_dict mapping each field to a
 * fri_str* value.  The dict answers in insertion order, which is the order Redis 7.0's
 * small (listpack) hashes answer HGETALL, HKEYS and HVALS in: a new field goes at the end,
 * an updated field keeps its place, and deleting one leaves the others in order.  Redis
 * switches a hash to a real hash table past 128 fields or a 64-byte field or value; the
 * fake keeps insertion order for ever, so replies of such big hashes match only as sets
 * (the differential tests compare them with @sorted).
 *
 * Like Redis's t_hash.c, every handler checks its arguments in the same order as Redis
 * does, so that a command with two faults answers the same error the real server gives.
 */
#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "fr_int.h"

#define HASH_ERR_NOT_INT "ERR hash value is not an integer"
#define HASH_ERR_NOT_FLOAT "ERR hash value is not a float"
#define HASH_ERR_INCR_NAN "ERR value is NaN or Infinity"
#define HASH_ERR_RESULT_NAN "ERR increment would produce NaN or Infinity"
/* What the fake answers when malloc fails; Redis's own text for its memory limit. */

/* Room for any long double Redis prints in human form ("%.17Lf" of LDBL_MAX). */
#define HASH_LD_CHARS (5 * 1024)

static void free_value(fri_val *v) { fri_str_free(v->ptr); }

/* Frees a hash's fields and values; NULL is accepted. */
void fri_hash_free(fri_dict *h) { fri_dict_free(h, free_value); }

/* ----- Access helpers ----------------------------------------------------------------- */

/* Redis's hashTypeLookupWriteOrCreate: the hash at argv[1], created empty (and added to
 * the keyspace) when missing.  NULL after replying WRONGTYPE or out of memory.  Callers
 * only come here once every argument has been validated, and then always store at least
 * one field, so an empty hash is never left behind. */
static fri_dict *hash_lookup_write_or_create(fr_client *c)
{
    int wrongtype;
    fri_obj *o = fri_lookup_typed(c, &c->argv[1], FRI_HASH, 1, &wrongtype);
    if (o) return o->ptr;
    if (wrongtype) return NULL;
    fri_dict *h = fri_dict_new();
    fri_obj *no = h ? fri_obj_new(FRI_HASH, h) : NULL;
    if (!no) {
        fri_dict_free(h, NULL);
        fri_reply_error(c, FRI_ERR_OOM);
        return NULL;
    }
    fri_db_add(c->db, c->argv[1].ptr, c->argv[1].len, no);
    return h;
}

/* The hash at argv[1] for reading: NULL when missing (nothing replied) or of another type
 * (*wrongtype set, WRONGTYPE replied). */
static fri_dict *hash_lookup_read(fr_client *c, int *wrongtype)
{
    fri_obj *o = fri_lookup_typed(c, &c->argv[1], FRI_HASH, 0, wrongtype);
    return o ? o->ptr : NULL;
}

/* The value of a field, or NULL. */
static fri_str *hash_get(fri_dict *h, const fri_arg *field)
{
    fri_dent *e = fri_dict_find(h, field->ptr, field->len);
    return e ? e->v.ptr : NULL;
}

/* Stores value (owned by the hash afterwards) under field, replacing any old value in
 * place so the field keeps its position.  Returns 1 if the field is new, 0 if it was
 * updated, -1 when out of memory (value freed, hash unchanged), value NULL included, so
 * a failed copy can be passed straight in. */
static int hash_set(fri_dict *h, const char *field, size_t flen, fri_str *value)
{
    int created;
    if (!value) return -1;
    fri_dent *e = fri_dict_add(h, field, flen, &created);
    if (!e) {
        fri_str_free(value);
        return -1;
    }
    if (!created) fri_str_free(e->v.ptr);
    e->v.ptr = value;
    return created;
}

/* Writes v in decimal (no NUL) and returns the length: HINCRBY's hot path, where
 * snprintf would cost more than the rest of the command. */
static size_t ll_to_digits(char *dst, long long v)
{
    char tmp[24];
    unsigned long long u = v < 0 ? 0ull - (unsigned long long)v : (unsigned long long)v;
    size_t n = 0;
    do {
        tmp[n++] = (char)('0' + u % 10);
        u /= 10;
    } while (u);
    size_t len = 0;
    if (v < 0) dst[len++] = '-';
    while (n) dst[len++] = tmp[--n];
    return len;
}

/* ----- Commands ----------------------------------------------------------------------- */

/* HSET key field value [field value ...] and the deprecated HMSET, one handler as in Redis:
 * an odd argument count is an arity error naming the command, checked before the key's
 * type.  HSET answers how many fields are new, HMSET answers OK.  Every value is copied
 * before the hash is touched, so running out of memory changes nothing. */
static void hsetCommand(fr_client *c)
{
    if (c->argc % 2 == 1) {
        fri_reply_arity_error(c);
        return;
    }
    int pairs = (c->argc - 2) / 2;
    fri_str *small[8];
    fri_str **values = pairs <= 8 ? small : malloc(sizeof(*values) * (size_t)pairs);
    int made = 0;
    if (values) {
        for (; made < pairs; made++) {
            const fri_arg *v = &c->argv[3 + 2 * made];
            if (!(values[made] = fri_str_new(v->ptr, v->len))) break;
        }
    }
    if (made < pairs) {
        for (int i = 0; i < made; i++) fri_str_free(values[i]);
        if (values != small) free(values);
        fri_reply_error(c, FRI_ERR_OOM);
        return;
    }
    fri_dict *h = hash_lookup_write_or_create(c);
    if (!h) {
        for (int i = 0; i < pairs; i++) fri_str_free(values[i]);
        if (values != small) free(values);
        return;
    }
    long long created = 0;
    int oom = 0;
    for (int i = 0; i < pairs; i++) {
        const fri_arg *f = &c->argv[2 + 2 * i];
        if (oom) {
            fri_str_free(values[i]);
            continue;
        }
        int r = hash_set(h, f->ptr, f->len, values[i]);
        if (r < 0) oom = 1;
        else created += r;
    }
    if (values != small) free(values);
    if (oom) {
        /* Only a brand new hash can be empty here; drop it rather than leave it behind. */
        fri_obj *o = fri_lookup_write(c, &c->argv[1]);
        if (o) fri_delete_if_empty(c, &c->argv[1], o);
        fri_reply_error(c, FRI_ERR_OOM);
    } else if (c->cmd->name[1] == 's') {
        fri_reply_ll(c, created);
    } else {
        fri_reply_ok(c);
    }
    fri_signal_modified(c, c->db, c->argv[1].ptr, c->argv[1].len);
}

/* HSETNX key field value: 1 if the field was set, 0 if it existed (nothing changes). */
static void hsetnxCommand(fr_client *c)
{
    fri_dict *h = hash_lookup_write_or_create(c);
    if (!h) return;
    if (hash_get(h, &c->argv[2])) {
        fri_reply_ll(c, 0);
        return;
    }
    fri_str *v = fri_str_new(c->argv[3].ptr, c->argv[3].len);
    if (!v || hash_set(h, c->argv[2].ptr, c->argv[2].len, v) < 0) {
        fri_obj *o = fri_lookup_write(c, &c->argv[1]);
        if (o) fri_delete_if_empty(c, &c->argv[1], o);
        fri_reply_error(c, FRI_ERR_OOM);
        return;
    }
    fri_reply_ll(c, 1);
    fri_signal_modified(c, c->db, c->argv[1].ptr, c->argv[1].len);
}

/* HGET key field: the value, or nil for a missing key or field. */
static void hgetCommand(fr_client *c)
{
    int wrongtype;
    fri_dict *h = hash_lookup_read(c, &wrongtype);
    if (wrongtype) return;
    fri_str *v = h ? hash_get(h, &c->argv[2]) : NULL;
    if (v) fri_reply_bulk_str(c, v);
    else fri_reply_nil(c);
}

/* HMGET key field [field ...]: one value or nil per field; a missing key answers nils and
 * a key of another type WRONGTYPE. */
static void hmgetCommand(fr_client *c)
{
    int wrongtype;
    fri_dict *h = hash_lookup_read(c, &wrongtype);
    if (wrongtype) return;
    fri_reply_array_len(c, c->argc - 2);
    for (int i = 2; i < c->argc; i++) {
        fri_str *v = h ? hash_get(h, &c->argv[i]) : NULL;
        if (v) fri_reply_bulk_str(c, v);
        else fri_reply_nil(c);
    }
}

/* HDEL key field [field ...]: how many fields were removed.  The key goes when its last
 * field does; the remaining fields keep their order. */
static void hdelCommand(fr_client *c)
{
    int wrongtype;
    fri_obj *o = fri_lookup_typed(c, &c->argv[1], FRI_HASH, 1, &wrongtype);
    if (!o) {
        if (!wrongtype) fri_reply_ll(c, 0);
        return;
    }
    fri_dict *h = o->ptr;
    long long deleted = 0;
    for (int i = 2; i < c->argc && fri_dict_size(h) > 0; i++) {
        fri_val old;
        if (fri_dict_delete(h, c->argv[i].ptr, c->argv[i].len, &old)) {
            fri_str_free(old.ptr);
            deleted++;
        }
    }
    if (deleted) {
        fri_delete_if_empty(c, &c->argv[1], o);
        fri_signal_modified(c, c->db, c->argv[1].ptr, c->argv[1].len);
    }
    fri_reply_ll(c, deleted);
}

/* HLEN key: the number of fields, 0 for a missing key. */
static void hlenCommand(fr_client *c)
{
    int wrongtype;
    fri_dict *h = hash_lookup_read(c, &wrongtype);
    if (wrongtype) return;
    fri_reply_ll(c, h ? (long long)fri_dict_size(h) : 0);
}

/* HSTRLEN key field: the value's length in bytes, 0 for a missing key or field. */
static void hstrlenCommand(fr_client *c)
{
    int wrongtype;
    fri_dict *h = hash_lookup_read(c, &wrongtype);
    if (wrongtype) return;
    fri_str *v = h ? hash_get(h, &c->argv[2]) : NULL;
    fri_reply_ll(c, v ? (long long)v->len : 0);
}

/* HEXISTS key field: 1 or 0. */
static void hexistsCommand(fr_client *c)
{
    int wrongtype;
    fri_dict *h = hash_lookup_read(c, &wrongtype);
    if (wrongtype) return;
    fri_reply_ll(c, h && hash_get(h, &c->argv[2]) ? 1 : 0);
}

#define HASH_KEYS 1u
#define HASH_VALS 2u

/* HGETALL, HKEYS and HVALS: the fields and/or values in the hash's order; an empty array
 * (RESP2's empty map is *0 too) for a missing key. */
static void hash_getall(fr_client *c, unsigned what)
{
    int wrongtype;
    fri_dict *h = hash_lookup_read(c, &wrongtype);
    if (wrongtype) return;
    if (!h) {
        fri_reply_empty_array(c);
        return;
    }
    long n = (long)fri_dict_size(h);
    if (what == (HASH_KEYS | HASH_VALS)) fri_reply_map_len(c, n);
    else fri_reply_array_len(c, n);
    size_t slots = fri_dict_slots(h);
    for (size_t i = 0; i < slots; i++) {
        fri_dent *e = fri_dict_slot(h, i);
        if (!e) continue;
        if (what & HASH_KEYS) fri_reply_bulk_str(c, e->key);
        if (what & HASH_VALS) fri_reply_bulk_str(c, e->v.ptr);
    }
}

static void hgetallCommand(fr_client *c) { hash_getall(c, HASH_KEYS | HASH_VALS); }
static void hkeysCommand(fr_client *c) { hash_getall(c, HASH_KEYS); }
static void hvalsCommand(fr_client *c) { hash_getall(c, HASH_VALS); }

/* HINCRBY key field increment.  Order of checks as in Redis: the increment must be an
 * integer, then the key a hash (created if missing), then the old value an integer in
 * string2ll's strict form, then the sum must not overflow.  Answers the new value. */
static void hincrbyCommand(fr_client *c)
{
    long long incr, value = 0;
    if (fri_get_ll_or_reply(c, &c->argv[3], &incr, NULL) < 0) return;
    fri_dict *h = hash_lookup_write_or_create(c);
    if (!h) return;
    fri_dent *e = fri_dict_find(h, c->argv[2].ptr, c->argv[2].len);
    if (e) {
        fri_str *old = e->v.ptr;
        if (!fri_string2ll(old->buf, old->len, &value)) {
            fri_reply_error(c, HASH_ERR_NOT_INT);
            return;
        }
    }
    if ((incr < 0 && value < 0 && incr < LLONG_MIN - value) ||
        (incr > 0 && value > 0 && incr > LLONG_MAX - value)) {
        fri_reply_error(c, FRI_ERR_OVERFLOW);
        return;
    }
    value += incr;
    char digits[24];
    size_t len = ll_to_digits(digits, value);
    if (e) {
        /* The entry pointer is still valid: nothing was added or deleted since the find.
         * The hash owns its values, so a counter is rewritten in place when it fits. */
        fri_str *old = e->v.ptr;
        if (len > old->len) {
            fri_str *nv = realloc(old, sizeof(*old) + len + 1);
            if (!nv) {
                fri_reply_error(c, FRI_ERR_OOM);
                return;
            }
            e->v.ptr = old = nv;
        }
        memcpy(old->buf, digits, len);
        old->buf[len] = '\0';
        old->len = len;
    } else if (hash_set(h, c->argv[2].ptr, c->argv[2].len, fri_str_new(digits, len)) < 0) {
        fri_obj *o = fri_lookup_write(c, &c->argv[1]);
        if (o) fri_delete_if_empty(c, &c->argv[1], o);
        fri_reply_error(c, FRI_ERR_OOM);
        return;
    }
    fri_reply_ll(c, value);
    fri_signal_modified(c, c->db, c->argv[1].ptr, c->argv[1].len);
}

/* HINCRBYFLOAT key field increment.  The increment must parse as a long double and be
 * finite; the old value (0 if missing) must parse too; the sum must be finite.  The new
 * value is stored and answered in Redis's human long double form ("%.17Lf" without
 * trailing zeros), so 10.50 + 0 answers "10.5". */
static void hincrbyfloatCommand(fr_client *c)
{
    long double incr, value = 0;
    if (fri_get_long_double_or_reply(c, &c->argv[3], &incr, NULL) < 0) return;
    if (isnan(incr) || isinf(incr)) {
        fri_reply_error(c, HASH_ERR_INCR_NAN);
        return;
    }
    fri_dict *h = hash_lookup_write_or_create(c);
    if (!h) return;
    fri_str *old = hash_get(h, &c->argv[2]);
    if (old && !fri_string2ld(old->buf, old->len, &value)) {
        fri_reply_error(c, HASH_ERR_NOT_FLOAT);
        return;
    }
    value += incr;
    if (isnan(value) || isinf(value)) {
        fri_reply_error(c, HASH_ERR_RESULT_NAN);
        return;
    }
    char buf[HASH_LD_CHARS];
    size_t len = fri_ld2string(buf, sizeof(buf), value);
    fri_str *nv = fri_str_new(buf, len);
    if (!nv || hash_set(h, c->argv[2].ptr, c->argv[2].len, nv) < 0) {
        fri_obj *o = fri_lookup_write(c, &c->argv[1]);
        if (o) fri_delete_if_empty(c, &c->argv[1], o);
        fri_reply_error(c, FRI_ERR_OOM);
        return;
    }
    fri_reply_bulk(c, buf, len);
    fri_signal_modified(c, c->db, c->argv[1].ptr, c->argv[1].len);
}

/* ----- The command table --------------------------------------------------------------- */

#define W FRI_CMD_WRITE
#define R FRI_CMD_READONLY
#define F FRI_CMD_FAST
#define M FRI_CMD_DENYOOM

/* Arity, flags and key positions as COMMAND INFO reports them on Redis 7.0.15. */
const fri_command fri_hash_commands[] = {
    {"hset", hsetCommand, -4, W | M | F, "hash", 1, 1, 1, NULL, NULL},
    {"hsetnx", hsetnxCommand, 4, W | M | F, "hash", 1, 1, 1, NULL, NULL},
    {"hmset", hsetCommand, -4, W | M | F, "hash", 1, 1, 1, NULL, NULL},
    {"hget", hgetCommand, 3, R | F, "hash", 1, 1, 1, NULL, NULL},
    {"hmget", hmgetCommand, -3, R | F, "hash", 1, 1, 1, NULL, NULL},
    {"hgetall", hgetallCommand, 2, R, "hash", 1, 1, 1, NULL, NULL},
    {"hdel", hdelCommand, -3, W | F, "hash", 1, 1, 1, NULL, NULL},
    {"hexists", hexistsCommand, 3, R | F, "hash", 1, 1, 1, NULL, NULL},
    {"hlen", hlenCommand, 2, R | F, "hash", 1, 1, 1, NULL, NULL},
    {"hkeys", hkeysCommand, 2, R, "hash", 1, 1, 1, NULL, NULL},
    {"hvals", hvalsCommand, 2, R, "hash", 1, 1, 1, NULL, NULL},
    {"hincrby", hincrbyCommand, 4, W | M | F, "hash", 1, 1, 1, NULL, NULL},
    {"hincrbyfloat", hincrbyfloatCommand, 4, W | M | F, "hash", 1, 1, 1, NULL, NULL},
    {"hstrlen", hstrlenCommand, 3, R | F, "hash", 1, 1, 1, NULL, NULL},
    {0},
};
