/* digest.c -- DEBUG DIGEST and DEBUG DIGEST-VALUE: a SHA-1 based signature of the keyspace
 * (or of single values) that equals redis-server 7.0.15's for the same data, so that a
 * test can compare the fake's dataset with a real server's, or with itself before and
 * after a reload, by one line.
 *
 * The construction is Redis's (src/debug.c, computeDatasetDigest and xorObjectDigest at
 * 7.0.15), written again from reading it:
 *
 *  - xor(d, data):  d ^= SHA1(data) -- order-free, for the members of sets and hashes;
 *  - mix(d, data):  d = SHA1(d ^ SHA1(data)) -- order-sensitive, for lists, streams and
 *    the fields of one element;
 *  - a value: mix its type as Redis numbers it (a 4-byte big-endian integer: string 0,
 *    list 1, set 2, zset 3, hash 4, stream 6), then
 *      string: mix the bytes;  list: mix each element from the head;
 *      set: xor each member;
 *      zset: xor, per member, the digest (from zero) of mix(member), mix("%.17g" score);
 *      hash: xor, per field, the digest (from zero) of mix(field), mix(value);
 *      stream: per live entry in id order, mix "MS.SEQ", then mix each field and value
 *      (consumer groups, the last id and the counters are not part of it);
 *    and, when the key has a time to live, xor "!!expire!!" (the time itself is not);
 *  - the dataset: from zero, for each non-empty database, mix its number (4 bytes big
 *    endian), then for each key xor in the digest (from zero) of mix(key) and the value.
 *
 * Keys are read as they are stored: a key past its time to live that nothing expired yet
 * still counts, as in Redis (dictFind, no lookupKey).  Integers held as integers by Redis
 * (int strings, intset members, listpack integers) are digested as their decimal text,
 * which is how the fake holds them. */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "fr_int.h"
#include "stream_int.h"

enum { DIGEST_LEN = 20 };

/* Redis's own type numbers (server.h OBJ_*), which the digest mixes in. */
static uint32_t redis_type(const fri_obj *o)
{
    switch ((fri_type)o->type) {
    case FRI_STRING: return 0;
    case FRI_LIST: return 1;
    case FRI_SET: return 2;
    case FRI_ZSET: return 3;
    case FRI_HASH: return 4;
    case FRI_STREAM: return 6;
    }
    return 0;
}

static void digest_xor(unsigned char *d, const void *p, size_t len)
{
    unsigned char h[DIGEST_LEN];
    fri_sha1(h, p, len);
    for (int i = 0; i < DIGEST_LEN; i++) d[i] ^= h[i];
}

static void digest_mix(unsigned char *d, const void *p, size_t len)
{
    digest_xor(d, p, len);
    fri_sha1(d, d, DIGEST_LEN);
}

static void digest_mix_u32(unsigned char *d, uint32_t v)
{
    unsigned char be[4] = {(unsigned char)(v >> 24), (unsigned char)(v >> 16),
                           (unsigned char)(v >> 8), (unsigned char)v};
    digest_mix(d, be, sizeof(be));
}

static void set_member(const char *p, size_t len, void *ctx) { digest_xor(ctx, p, len); }

static void zset_member(const char *p, size_t len, double score, void *ctx)
{
    unsigned char ele[DIGEST_LEN] = {0};
    char buf[128];
    digest_mix(ele, p, len);
    int n = snprintf(buf, sizeof(buf), "%.17g", score); /* as Redis: not d2string */
    digest_mix(ele, buf, (size_t)n);
    digest_xor(ctx, ele, DIGEST_LEN);
}

static void hash_digest(unsigned char *d, fri_hash *h)
{
    fri_dict *fields = fri_hash_fields(h);
    size_t slots = fri_dict_slots(fields);
    for (size_t i = 0; i < slots; i++) {
        fri_dent *e = fri_dict_slot(fields, i);
        if (!e || !e->key) continue;
        const fri_str *v = e->v.ptr;
        unsigned char ele[DIGEST_LEN] = {0};
        digest_mix(ele, e->key->buf, e->key->len);
        digest_mix(ele, v->buf, v->len);
        digest_xor(d, ele, DIGEST_LEN);
    }
}

static void stream_digest(unsigned char *d, fri_stream *s)
{
    fri_stream_iter it;
    fri_sid id;
    long nfields;
    fri_stream_iter_start(&it, s, FRI_SID_MIN, FRI_SID_MAX, 0);
    while (fri_stream_iter_next(&it, &id, &nfields)) {
        char buf[48];
        int n = snprintf(buf, sizeof(buf), "%llu.%llu", (unsigned long long)id.ms,
                         (unsigned long long)id.seq);
        digest_mix(d, buf, (size_t)n);
        for (long f = 0; f < nfields; f++) {
            const char *field, *value;
            size_t flen, vlen;
            fri_stream_iter_field(&it, &field, &flen, &value, &vlen);
            digest_mix(d, field, flen);
            digest_mix(d, value, vlen);
        }
    }
}

/* xorObjectDigest: the value's digest mixed into d (which the caller zeroed or not). */
static void value_digest(unsigned char *d, const fri_obj *o)
{
    digest_mix_u32(d, redis_type(o));
    switch ((fri_type)o->type) {
    case FRI_STRING: {
        const fri_str *s = o->ptr;
        digest_mix(d, s->buf, s->len);
        break;
    }
    case FRI_LIST: {
        const fri_list *l = o->ptr;
        size_t n = fri_list_len(l);
        for (size_t i = 0; i < n; i++) {
            const fri_str *e = fri_list_at(l, i);
            digest_mix(d, e->buf, e->len);
        }
        break;
    }
    case FRI_SET: fri_set_foreach(o->ptr, set_member, d); break;
    case FRI_ZSET: fri_zset_foreach(o->ptr, zset_member, d); break;
    case FRI_HASH: hash_digest(d, o->ptr); break;
    case FRI_STREAM: stream_digest(d, o->ptr); break;
    }
    if (o->expire_ms != -1) digest_xor(d, "!!expire!!", 10);
}

void fr_debug_digest(fr_server *s, char hex[41])
{
    unsigned char out[DIGEST_LEN] = {0};
    for (int j = 0; j < FRI_DBNUM; j++) {
        fri_dict *keys = s->db[j].keys;
        if (fri_dict_size(keys) == 0) continue;
        digest_mix_u32(out, (uint32_t)j);
        size_t slots = fri_dict_slots(keys);
        for (size_t i = 0; i < slots; i++) {
            fri_dent *e = fri_dict_slot(keys, i);
            if (!e || !e->key) continue;
            unsigned char kv[DIGEST_LEN] = {0};
            digest_mix(kv, e->key->buf, e->key->len);
            value_digest(kv, e->v.ptr);
            digest_xor(out, kv, DIGEST_LEN);
        }
    }
    fri_hex(hex, out, DIGEST_LEN);
}

void fr_debug_digest_value(fr_server *s, int db, const char *key, size_t len,
                           char hex[41])
{
    unsigned char out[DIGEST_LEN] = {0};
    fri_dent *e = db >= 0 && db < FRI_DBNUM ? fri_dict_find(s->db[db].keys, key, len) : NULL;
    if (e) value_digest(out, e->v.ptr);
    fri_hex(hex, out, DIGEST_LEN);
}
