/* t_hash.c -- the hash type: HSET, HGET, HINCRBY, HRANDFIELD, HSCAN and the rest of Redis
 * 7.0's hash group.
 *
 * A hash is a fri_obj of type FRI_HASH whose ptr is a fri_hash: a fri_dict mapping each
 * field to a fri_str* value, and whether Redis would still hold it as a listpack.  The
 * dict answers in insertion order, which is the order Redis 7.0's small (listpack) hashes
 * answer HGETALL, HKEYS and HVALS in: a new field goes at the end, an updated field keeps
 * its place, and deleting one leaves the others in order.  Redis switches a hash to a real
 * hash table, for good, past 512 fields or on a field or value longer than 64 bytes; the
 * fake keeps insertion order for ever, so replies of such big hashes match only as sets
 * (the differential tests compare them with @sorted), but it remembers the switch because
 * HSCAN shows it: a listpack is answered whole with cursor 0, a table page by page.
 *
 * When Redis converts, exactly (7.0.15's hashTypeTryConversion and hashTypeSet): HSET and
 * HMSET look at every field and value of the command before storing any, even those that
 * only overwrite; HSETNX at its field and value when the field is new; HINCRBY and
 * HINCRBYFLOAT at the field and the new value; then any store that makes the hash longer
 * than hash-max-listpack-entries fields.  The limits are the server's parameters
 * (fr_server_set_param): 512 fields of at most 64 bytes unless set (512 is 7.0's
 * compiled-in default; the sample redis.conf says 128, but a server started without it,
 * as the tests start one, uses 512).
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
struct fri_hash {
    fri_dict *fields; /* field -> fri_str* value, in insertion order */
    int listpack;     /* Redis would still hold it as a listpack (see the top) */
};

static void free_value(fri_val *v) { fri_str_free(v->ptr); }

/* A new empty hash, a listpack as Redis creates it; NULL when out of memory. */
static fri_hash *hash_new(void)
{
    fri_hash *h = fri_malloc(sizeof(*h));
    if (!h) return NULL;
    if (!(h->fields = fri_dict_new())) {
        fri_free(h);
        return NULL;
    }
    h->listpack = 1;
    return h;
}

/* Frees a hash's fields and values; NULL is accepted. */
void fri_hash_free(fri_hash *h)
{
    if (!h) return;
    fri_dict_free(h->fields, free_value);
    fri_free(h);
}

size_t fri_hash_size(const fri_hash *h) { return fri_dict_size(h->fields); }

fri_dict *fri_hash_fields(fri_hash *h) { return h->fields; }
int fri_hash_is_listpack(const fri_hash *h) { return h->listpack; }

/* hashTypeDup: the same fields in the same order, the same encoding. */
fri_hash *fri_hash_dup(const fri_hash *h)
{
    fri_hash *d = hash_new();
    if (!d) return NULL;
    d->listpack = h->listpack;
    size_t slots = fri_dict_slots(h->fields);
    for (size_t i = 0; i < slots; i++) {
        fri_dent *e = fri_dict_slot(h->fields, i);
        if (!e) continue;
        const fri_str *v = e->v.ptr;
        fri_dent *ne = fri_dict_add(d->fields, e->key->buf, e->key->len, NULL);
        if (!ne || !(ne->v.ptr = fri_str_new(v->buf, v->len))) {
            if (ne) fri_dict_delete(d->fields, e->key->buf, e->key->len, NULL);
            fri_hash_free(d);
            return NULL;
        }
    }
    return d;
}

size_t fri_hash_memory(const fri_hash *h, size_t samples)
{
    size_t slots = fri_dict_slots(h->fields), n = fri_dict_size(h->fields);
    if (h->listpack) {
        /* robj and the listpack: header and end byte, then field, value, field, ... */
        uint64_t bytes = 7;
        for (size_t i = 0; i < slots; i++) {
            fri_dent *e = fri_dict_slot(h->fields, i);
            if (!e) continue;
            const fri_str *v = e->v.ptr;
            bytes += fri_lp_str_size(e->key->buf, e->key->len) +
                     fri_lp_str_size(v->buf, v->len);
        }
        return 16 + fri_je_size((size_t)bytes);
    }
    /* robj and the dict, `samples` entries with their field and value sds: Redis takes
     * the first ones in its hash order, a random pick; the fake takes them spread evenly
     * over its insertion order */
    size_t sampled = 0, bytes = 0, live = 0;
    for (size_t i = 0; i < slots && sampled < samples && sampled < n; i++) {
        fri_dent *e = fri_dict_slot(h->fields, i);
        if (!e || live++ != fri_sample_index(sampled, samples, n)) continue;
        const fri_str *v = e->v.ptr;
        bytes += fri_sds_size(e->key->len) + fri_sds_size(v->len) + 24;
        sampled++;
    }
    return 16 + fri_dict_mem(n, sampled, bytes);
}

/* Redis's hashTypeTryConversion: a listpack becomes a table when any of the arguments
 * argv[first..last] is longer than hash-max-listpack-value. */
static void hash_try_conversion(fri_hash *h, const fr_client *c, int first, int last)
{
    long long max = c->srv->tun.hash_max_listpack_value;
    for (int i = first; h->listpack && i <= last; i++)
        if ((long long)c->argv[i].len > max) h->listpack = 0;
}

/* ----- Access helpers ----------------------------------------------------------------- */

/* Redis's hashTypeLookupWriteOrCreate: the hash at argv[1], created empty (and added to
 * the keyspace) when missing.  NULL after replying WRONGTYPE or out of memory.  Callers
 * only come here once every argument has been validated, and then always store at least
 * one field, so an empty hash is never left behind. */
static fri_hash *hash_lookup_write_or_create(fr_client *c)
{
    int wrongtype;
    fri_obj *o = fri_lookup_typed(c, &c->argv[1], FRI_HASH, 1, &wrongtype);
    if (o) return o->ptr;
    if (wrongtype) return NULL;
    fri_hash *h = hash_new();
    fri_obj *no = h ? fri_obj_new(FRI_HASH, h) : NULL;
    if (!no) {
        fri_hash_free(h);
        fri_reply_error(c, FRI_ERR_OOM);
        return NULL;
    }
    fri_db_add(c->db, c->argv[1].ptr, c->argv[1].len, no);
    return h;
}

/* The hash at argv[1] for reading: NULL when missing (nothing replied) or of another type
 * (*wrongtype set, WRONGTYPE replied). */
static fri_hash *hash_lookup_read(fr_client *c, int *wrongtype)
{
    fri_obj *o = fri_lookup_typed(c, &c->argv[1], FRI_HASH, 0, wrongtype);
    return o ? o->ptr : NULL;
}

/* The value of a field, or NULL. */
static fri_str *hash_get(fri_hash *h, const fri_arg *field)
{
    fri_dent *e = fri_dict_find(h->fields, field->ptr, field->len);
    return e ? e->v.ptr : NULL;
}

/* Stores value (owned by the hash afterwards) under field, replacing any old value in
 * place so the field keeps its position, and converts the hash as Redis's hashTypeSet
 * does (a long field or value, more than 512 fields).  Returns 1 if the field is new, 0
 * if it was updated, -1 when out of memory (value freed, hash unchanged), value NULL
 * included, so a failed copy can be passed straight in. */
static int hash_set(const fr_client *c, fri_hash *h, const char *field, size_t flen,
                    fri_str *value)
{
    const fri_tunables *t = &c->srv->tun;
    int created;
    if (!value) return -1;
    fri_dent *e = fri_dict_add(h->fields, field, flen, &created);
    if (!e) {
        fri_str_free(value);
        return -1;
    }
    if (!created) fri_str_free(e->v.ptr);
    e->v.ptr = value;
    if ((long long)flen > t->hash_max_listpack_value ||
        (long long)value->len > t->hash_max_listpack_value ||
        (long long)fri_dict_size(h->fields) > t->hash_max_listpack_entries)
        h->listpack = 0;
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
static void hset_command(fr_client *c)
{
    if (c->argc % 2 == 1) {
        fri_reply_arity_error(c);
        return;
    }
    int pairs = (c->argc - 2) / 2;
    fri_str *small[8];
    fri_str **values = pairs <= 8 ? small : fri_malloc(sizeof(*values) * (size_t)pairs);
    int made = 0;
    if (values) {
        for (; made < pairs; made++) {
            const fri_arg *v = &c->argv[3 + 2 * made];
            if (!(values[made] = fri_str_new(v->ptr, v->len))) break;
        }
    }
    if (made < pairs) {
        for (int i = 0; i < made; i++) fri_str_free(values[i]);
        if (values != small) fri_free(values);
        fri_reply_error(c, FRI_ERR_OOM);
        return;
    }
    fri_hash *h = hash_lookup_write_or_create(c);
    if (!h) {
        for (int i = 0; i < pairs; i++) fri_str_free(values[i]);
        if (values != small) fri_free(values);
        return;
    }
    hash_try_conversion(h, c, 2, c->argc - 1);
    long long created = 0;
    int oom = 0;
    for (int i = 0; i < pairs; i++) {
        const fri_arg *f = &c->argv[2 + 2 * i];
        if (oom) {
            fri_str_free(values[i]);
            continue;
        }
        int r = hash_set(c, h, f->ptr, f->len, values[i]);
        if (r < 0) oom = 1;
        else created += r;
    }
    if (values != small) fri_free(values);
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
    if (!oom) fri_notify_key(c, FR_NOTIFY_HASH, "hset", &c->argv[1]);
}

/* HSETNX key field value: 1 if the field was set, 0 if it existed (nothing changes). */
static void hsetnx_command(fr_client *c)
{
    fri_hash *h = hash_lookup_write_or_create(c);
    if (!h) return;
    if (hash_get(h, &c->argv[2])) {
        fri_reply_ll(c, 0);
        return;
    }
    hash_try_conversion(h, c, 2, 3);
    fri_str *v = fri_str_new(c->argv[3].ptr, c->argv[3].len);
    if (!v || hash_set(c, h, c->argv[2].ptr, c->argv[2].len, v) < 0) {
        fri_obj *o = fri_lookup_write(c, &c->argv[1]);
        if (o) fri_delete_if_empty(c, &c->argv[1], o);
        fri_reply_error(c, FRI_ERR_OOM);
        return;
    }
    fri_reply_ll(c, 1);
    fri_signal_modified(c, c->db, c->argv[1].ptr, c->argv[1].len);
    fri_notify_key(c, FR_NOTIFY_HASH, "hset", &c->argv[1]);
}

/* HGET key field: the value, or nil for a missing key or field. */
static void hget_command(fr_client *c)
{
    int wrongtype;
    fri_hash *h = hash_lookup_read(c, &wrongtype);
    if (wrongtype) return;
    fri_str *v = h ? hash_get(h, &c->argv[2]) : NULL;
    if (v) fri_reply_bulk_str(c, v);
    else fri_reply_nil(c);
}

/* HMGET key field [field ...]: one value or nil per field; a missing key answers nils and
 * a key of another type WRONGTYPE. */
static void hmget_command(fr_client *c)
{
    int wrongtype;
    fri_hash *h = hash_lookup_read(c, &wrongtype);
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
static void hdel_command(fr_client *c)
{
    int wrongtype;
    fri_obj *o = fri_lookup_typed(c, &c->argv[1], FRI_HASH, 1, &wrongtype);
    if (!o) {
        if (!wrongtype) fri_reply_ll(c, 0);
        return;
    }
    fri_dict *h = ((fri_hash *)o->ptr)->fields;
    long long deleted = 0;
    for (int i = 2; i < c->argc && fri_dict_size(h) > 0; i++) {
        fri_val old;
        if (fri_dict_delete(h, c->argv[i].ptr, c->argv[i].len, &old)) {
            fri_str_free(old.ptr);
            deleted++;
        }
    }
    if (deleted) {
        int emptied = fri_dict_size(h) == 0;
        fri_delete_if_empty(c, &c->argv[1], o);
        fri_signal_modified(c, c->db, c->argv[1].ptr, c->argv[1].len);
        fri_notify_key(c, FR_NOTIFY_HASH, "hdel", &c->argv[1]);
        if (emptied) fri_notify_key(c, FR_NOTIFY_GENERIC, "del", &c->argv[1]);
    }
    fri_reply_ll(c, deleted);
}

/* HLEN key: the number of fields, 0 for a missing key. */
static void hlen_command(fr_client *c)
{
    int wrongtype;
    fri_hash *h = hash_lookup_read(c, &wrongtype);
    if (wrongtype) return;
    fri_reply_ll(c, h ? (long long)fri_hash_size(h) : 0);
}

/* HSTRLEN key field: the value's length in bytes, 0 for a missing key or field. */
static void hstrlen_command(fr_client *c)
{
    int wrongtype;
    fri_hash *h = hash_lookup_read(c, &wrongtype);
    if (wrongtype) return;
    fri_str *v = h ? hash_get(h, &c->argv[2]) : NULL;
    fri_reply_ll(c, v ? (long long)v->len : 0);
}

/* HEXISTS key field: 1 or 0. */
static void hexists_command(fr_client *c)
{
    int wrongtype;
    fri_hash *h = hash_lookup_read(c, &wrongtype);
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
    fri_hash *h = hash_lookup_read(c, &wrongtype);
    if (wrongtype) return;
    if (!h) {
        fri_reply_empty_array(c);
        return;
    }
    long n = (long)fri_hash_size(h);
    if (what == (HASH_KEYS | HASH_VALS)) fri_reply_map_len(c, n);
    else fri_reply_array_len(c, n);
    size_t slots = fri_dict_slots(h->fields);
    for (size_t i = 0; i < slots; i++) {
        fri_dent *e = fri_dict_slot(h->fields, i);
        if (!e) continue;
        if (what & HASH_KEYS) fri_reply_bulk_str(c, e->key);
        if (what & HASH_VALS) fri_reply_bulk_str(c, e->v.ptr);
    }
}

static void hgetall_command(fr_client *c) { hash_getall(c, HASH_KEYS | HASH_VALS); }
static void hkeys_command(fr_client *c) { hash_getall(c, HASH_KEYS); }
static void hvals_command(fr_client *c) { hash_getall(c, HASH_VALS); }

/* HINCRBY key field increment.  Order of checks as in Redis: the increment must be an
 * integer, then the key a hash (created if missing), then the old value an integer in
 * string2ll's strict form, then the sum must not overflow.  Answers the new value. */
static void hincrby_command(fr_client *c)
{
    long long incr, value = 0;
    if (fri_get_ll_or_reply(c, &c->argv[3], &incr, NULL) < 0) return;
    fri_hash *h = hash_lookup_write_or_create(c);
    if (!h) return;
    fri_dent *e = fri_dict_find(h->fields, c->argv[2].ptr, c->argv[2].len);
    if (e) {
        fri_str *old = e->v.ptr;
        if (!fri_string2ll(old->buf, old->len, &value)) {
            fri_reply_error(c, HASH_ERR_NOT_INT);
            return;
        }
    }
    if (fri_add_ll_or_reply(c, &value, incr) < 0) return;
    char digits[24];
    size_t len = ll_to_digits(digits, value);
    if (e) {
        /* The entry pointer is still valid: nothing was added or deleted since the find.
         * The hash owns its values, so a counter is rewritten in place when it fits. */
        fri_str *old = e->v.ptr;
        if (len > old->len) {
            fri_str *nv = fri_realloc(old, sizeof(*old) + len + 1);
            if (!nv) {
                fri_reply_error(c, FRI_ERR_OOM);
                return;
            }
            e->v.ptr = old = nv;
        }
        memcpy(old->buf, digits, len);
        old->buf[len] = '\0';
        old->len = len;
        /* hashTypeSet's check, which a long field or a short limit can trip */
        long long max = c->srv->tun.hash_max_listpack_value;
        if ((long long)len > max || (long long)c->argv[2].len > max) h->listpack = 0;
    } else if (hash_set(c, h, c->argv[2].ptr, c->argv[2].len, fri_str_new(digits, len)) < 0) {
        fri_obj *o = fri_lookup_write(c, &c->argv[1]);
        if (o) fri_delete_if_empty(c, &c->argv[1], o);
        fri_reply_error(c, FRI_ERR_OOM);
        return;
    }
    fri_reply_ll(c, value);
    fri_signal_modified(c, c->db, c->argv[1].ptr, c->argv[1].len);
    fri_notify_key(c, FR_NOTIFY_HASH, "hincrby", &c->argv[1]);
}

/* HINCRBYFLOAT key field increment.  The increment must parse as a long double and be
 * finite; the old value (0 if missing) must parse too; the sum must be finite.  The new
 * value is stored and answered in Redis's human long double form ("%.17Lf" without
 * trailing zeros), so 10.50 + 0 answers "10.5". */
static void hincrbyfloat_command(fr_client *c)
{
    long double incr, value = 0;
    if (fri_get_long_double_or_reply(c, &c->argv[3], &incr, NULL) < 0) return;
    if (isnan(incr) || isinf(incr)) {
        fri_reply_error(c, HASH_ERR_INCR_NAN);
        return;
    }
    fri_hash *h = hash_lookup_write_or_create(c);
    if (!h) return;
    fri_str *old = hash_get(h, &c->argv[2]);
    long long ll;
    if (old && h->listpack && fri_string2ll(old->buf, old->len, &ll)) {
        value = (long double)ll; /* a listpack integer: Redis runs no strtold */
    } else if (old) {
        fri_errno_load(c->srv);
        int ok = fri_string2ld(old->buf, old->len, &value);
        fri_errno_save(c->srv);
        if (!ok) {
            fri_reply_error(c, HASH_ERR_NOT_FLOAT);
            return;
        }
    }
    value += incr;
    if (isnan(value) || isinf(value)) {
        fri_reply_error(c, HASH_ERR_RESULT_NAN);
        return;
    }
    char buf[HASH_LD_CHARS];
    size_t len = fri_ld2string(buf, sizeof(buf), value);
    fri_str *nv = fri_str_new(buf, len);
    if (!nv || hash_set(c, h, c->argv[2].ptr, c->argv[2].len, nv) < 0) {
        fri_obj *o = fri_lookup_write(c, &c->argv[1]);
        if (o) fri_delete_if_empty(c, &c->argv[1], o);
        fri_reply_error(c, FRI_ERR_OOM);
        return;
    }
    fri_reply_bulk(c, buf, len);
    fri_signal_modified(c, c->db, c->argv[1].ptr, c->argv[1].len);
    fri_notify_key(c, FR_NOTIFY_HASH, "hincrbyfloat", &c->argv[1]);
    fri_arg v[4] = {{"HSET", 4}, c->argv[1], c->argv[2], {buf, len}}; /* propagated as HSET */
    fri_propagate_rewrite(c, 4, v);
}

/* ----- HRANDFIELD ------------------------------------------------------------------------- */

/* The live entries of h in its order, in a malloc'ed array of fri_hash_size(h) (NULL when
 * out of memory). */
static fri_dent **hash_entries(fri_hash *h)
{
    size_t n = fri_hash_size(h), k = 0, slots = fri_dict_slots(h->fields);
    fri_dent **v = fri_malloc((n ? n : 1) * sizeof(*v));
    if (!v) return NULL;
    for (size_t i = 0; i < slots; i++) {
        fri_dent *e = fri_dict_slot(h->fields, i);
        if (e) v[k++] = e;
    }
    return v;
}

static void reply_entry(fr_client *c, const fri_dent *e, int withvalues)
{
    fri_reply_bulk_str(c, e->key);
    if (withvalues) fri_reply_bulk_str(c, e->v.ptr);
}

/* HRANDFIELD key count [WITHVALUES], the count already checked: Redis's cases, in its
 * order.  The key is looked up after the count (a missing one answers an empty array, a
 * count of 0 too, but only once the type is checked); a negative count answers -count
 * fields that may repeat; a count at least the size answers the whole hash in its order;
 * a smaller one count distinct fields (here in the hash's order: Redis's order there is
 * random too).  Every choice comes from the server's seeded generator. */
static void hrandfield_with_count(fr_client *c, long long l, int withvalues)
{
    int wrongtype;
    fri_hash *h = hash_lookup_read(c, &wrongtype);
    if (!h) {
        if (!wrongtype) fri_reply_empty_array(c);
        return;
    }
    int uniq;
    unsigned long long count;
    if (fri_random_count_or_reply(c, l, &count, &uniq) < 0) return;
    size_t size = fri_hash_size(h);
    if (uniq && count >= size) {
        fri_reply_array_len(c, (long)(withvalues ? size * 2 : size));
        size_t slots = fri_dict_slots(h->fields);
        for (size_t i = 0; i < slots; i++) {
            fri_dent *e = fri_dict_slot(h->fields, i);
            if (e) reply_entry(c, e, withvalues);
        }
        return;
    }
    fri_dent **ents = hash_entries(h);
    if (!ents) {
        fri_reply_error(c, FRI_ERR_OOM);
        return;
    }
    if (!uniq || count == 1) {
        fri_reply_array_len(c, (long)(withvalues ? count * 2 : count));
        while (count--) reply_entry(c, ents[fri_random(c->srv) % size], withvalues);
        fri_free(ents);
        return;
    }
    /* count distinct fields, 1 < count < size: mark them (or, past half the hash, the
     * ones left out) by drawing until there are enough. */
    unsigned char *chosen = fri_calloc(size, 1);
    if (!chosen) {
        fri_free(ents);
        fri_reply_error(c, FRI_ERR_OOM);
        return;
    }
    int invert = count * 2 > size;
    size_t want = invert ? size - (size_t)count : (size_t)count, have = 0;
    while (have < want) {
        size_t r = (size_t)(fri_random(c->srv) % size);
        if (!chosen[r]) {
            chosen[r] = 1;
            have++;
        }
    }
    fri_reply_array_len(c, (long)(withvalues ? count * 2 : count));
    for (size_t i = 0; i < size; i++)
        if (chosen[i] != invert) reply_entry(c, ents[i], withvalues);
    fri_free(chosen);
    fri_free(ents);
}

/* HRANDFIELD key [count [WITHVALUES]].  The count is checked first (any long but LONG_MIN),
 * then the syntax, then, with WITHVALUES, that the count stays within half a long either
 * way ("ERR value is out of range"); only then the key.  Without a count: one random
 * field, nil for a missing key. */
static void hrandfield_command(fr_client *c)
{
    if (c->argc >= 3) {
        long long l;
        if (fri_get_range_ll_or_reply(c, &c->argv[2], -LLONG_MAX, LLONG_MAX, &l, NULL) < 0)
            return;
        if (c->argc > 4 || (c->argc == 4 && !fri_arg_is_cstr(&c->argv[3], "withvalues"))) {
            fri_reply_error(c, FRI_ERR_SYNTAX);
            return;
        }
        if (c->argc == 4 && (l < -(LLONG_MAX / 2) || l > LLONG_MAX / 2)) {
            fri_reply_error(c, "ERR value is out of range");
            return;
        }
        hrandfield_with_count(c, l, c->argc == 4);
        return;
    }
    int wrongtype;
    fri_hash *h = hash_lookup_read(c, &wrongtype);
    if (!h) {
        if (!wrongtype) fri_reply_nil(c);
        return;
    }
    /* The k-th live field: one walk, no allocation. */
    uint64_t k = fri_random(c->srv) % fri_hash_size(h);
    size_t slots = fri_dict_slots(h->fields);
    for (size_t i = 0; i < slots; i++) {
        fri_dent *e = fri_dict_slot(h->fields, i);
        if (e && k-- == 0) {
            fri_reply_bulk_str(c, e->key);
            return;
        }
    }
}

/* ----- HSCAN ------------------------------------------------------------------------------- */

/* An HSCAN page's field and its value. */
static long hscan_entry(fr_client *c, const fri_dent *e, const void *ctx)
{
    reply_entry(c, e, 1);
    return 2;
}

/* HSCAN key cursor [MATCH pattern] [COUNT count], checked in Redis's order: the cursor,
 * the key (a missing one answers ["0", []] whatever the options), its type, then the
 * options.  A hash Redis holds as a listpack answers whole, in order, with cursor 0,
 * whatever the cursor and COUNT, as Redis does.  A table is walked COUNT fields at a time
 * in insertion order with the field's sequence number as the cursor (see keys.c's SCAN):
 * every field present for the whole walk comes exactly once, but pages and cursors differ
 * from Redis's.  MATCH filters the fields of the page; a value goes with its field. */
static void hscan_command(fr_client *c)
{
    fri_scan_args a;
    fri_hash *h = fri_scan_key_or_reply(c, FRI_HASH, &a);
    if (!h) return;
    fri_dict *d = h->fields;
    size_t first = 0, end = fri_dict_slots(d);
    uint64_t next = 0;
    if (!h->listpack) end = fri_dict_page(d, a.cursor, a.count, &first, &next);
    fri_reply_scan_dict(c, &a, d, first, end, next, hscan_entry, NULL);
}

/* ----- The command table --------------------------------------------------------------- */

#include "cmd_flags.h"

/* Arity, flags and key positions as COMMAND INFO reports them on Redis 7.0.15. */
const fri_command fri_hash_commands[] = {
    {"hset", hset_command, -4, W | M | F, "hash", 1, 1, 1, NULL, NULL},
    {"hsetnx", hsetnx_command, 4, W | M | F, "hash", 1, 1, 1, NULL, NULL},
    {"hmset", hset_command, -4, W | M | F, "hash", 1, 1, 1, NULL, NULL},
    {"hget", hget_command, 3, R | F, "hash", 1, 1, 1, NULL, NULL},
    {"hmget", hmget_command, -3, R | F, "hash", 1, 1, 1, NULL, NULL},
    {"hgetall", hgetall_command, 2, R, "hash", 1, 1, 1, NULL, NULL},
    {"hdel", hdel_command, -3, W | F, "hash", 1, 1, 1, NULL, NULL},
    {"hexists", hexists_command, 3, R | F, "hash", 1, 1, 1, NULL, NULL},
    {"hlen", hlen_command, 2, R | F, "hash", 1, 1, 1, NULL, NULL},
    {"hkeys", hkeys_command, 2, R, "hash", 1, 1, 1, NULL, NULL},
    {"hvals", hvals_command, 2, R, "hash", 1, 1, 1, NULL, NULL},
    {"hincrby", hincrby_command, 4, W | M | F, "hash", 1, 1, 1, NULL, NULL},
    {"hincrbyfloat", hincrbyfloat_command, 4, W | M | F, "hash", 1, 1, 1, NULL, NULL},
    {"hstrlen", hstrlen_command, 3, R | F, "hash", 1, 1, 1, NULL, NULL},
    {"hrandfield", hrandfield_command, -2, R, "hash", 1, 1, 1, NULL, NULL},
    {"hscan", hscan_command, -3, R, "hash", 1, 1, 1, NULL, NULL},
    {0},
};

/* ----- RESTORE (rdb.c) ------------------------------------------------------------------- */

fri_hash *fri_hash_restore_new(int listpack)
{
    fri_hash *h = hash_new();
    if (h) h->listpack = listpack;
    return h;
}
