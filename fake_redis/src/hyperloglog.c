/* hyperloglog.c -- PFADD, PFCOUNT, PFMERGE, PFDEBUG and PFSELFTEST of Redis 7.0.15.
 *
 * An HLL is an ordinary string value holding Redis's own bytes (hll_int.h describes them),
 * so GET, SET, DUMP/RESTORE, APPEND ... treat it as the string it is, and a GET answers the
 * bytes a real server holds after the same commands: the sparse opcodes are split and
 * merged as Redis's hllSparseSet does, the promotion to dense happens at the same point
 * (a register above 32, or a sparse form longer than hll-sparse-max-bytes), and the cached
 * cardinality is written and invalidated where Redis writes it.  Elements are hashed with
 * MurmurHash64A and seed 0xadc83b19; the estimate is Ertl's estimator with Redis's sigma
 * and tau iterations, so PFCOUNT answers the same number.
 *
 * The reference is redis-server 7.0.15 as Debian 12 ships it, which carries the fix for
 * CVE-2025-32023: reading a sparse HLL (PFCOUNT, PFMERGE, the conversion to dense), an
 * opcode of any kind that runs past register 16384 makes the value corrupt (7.0.15's own
 * source only checked VAL opcodes).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fr_int.h"
#include "hll_int.h"

#define HLL_ERR_INVALID "INVALIDOBJ Corrupted HLL object detected"
#define HLL_ERR_WRONGTYPE "WRONGTYPE Key is not a valid HyperLogLog string value."
#define HLL_SEED 0xadc83b19ULL
#define HLL_Q (64 - FRI_HLL_P) /* hash bits left for the run of zeros */
#define HLL_ALPHA_INF 0.721347520444481703680 /* 0.5 / ln 2 */

#define CARD_BYTE 8       /* the cached cardinality: header bytes 8..15 */
#define ENCODING_BYTE 4

/* Sparse opcodes (see hll_int.h). */
#define SP_IS_ZERO(b) (((b) & 0xc0) == 0)
#define SP_IS_XZERO(b) (((b) & 0xc0) == 0x40)
#define SP_IS_VAL(b) (((b) & 0x80) != 0)
#define SP_ZERO_LEN(b) (((b) & 0x3f) + 1)
#define SP_XZERO_LEN(b0, b1) (((((b0) & 0x3f) << 8) | (b1)) + 1)
#define SP_VAL_VALUE(b) ((((b) >> 2) & 0x1f) + 1)
#define SP_VAL_LEN(b) (((b) & 0x3) + 1)
#define SP_VAL_MAX_VALUE 32
#define SP_VAL_MAX_LEN 4
#define SP_ZERO_MAX_LEN 64
#define SP_XZERO_MAX_LEN 16384

static uint8_t sp_val(int value, int len) { return (uint8_t)(((value - 1) << 2 | (len - 1)) | 0x80); }
static uint8_t sp_zero(int len) { return (uint8_t)(len - 1); }
static void sp_xzero(uint8_t *p, int len)
{
    p[0] = (uint8_t)(((len - 1) >> 8) | 0x40);
    p[1] = (uint8_t)((len - 1) & 0xff);
}
/* Writes a run of len zero registers at p as ZERO, or XZERO when longer than a ZERO
 * holds: the bytes written (1 or 2). */
static int sp_zeros(uint8_t *p, long len)
{
    if (len <= SP_ZERO_MAX_LEN) {
        p[0] = sp_zero((int)len);
        return 1;
    }
    sp_xzero(p, (int)len);
    return 2;
}

/* ----- Hashing ------------------------------------------------------------------------ */

uint64_t fri_murmur64a(const void *key, size_t len, uint64_t seed)
{
    const uint64_t m = 0xc6a4a7935bd1e995ULL;
    const int r = 47;
    /* Redis passes the length as an int */
    uint64_t h = seed ^ ((uint64_t)(int64_t)(int)len * m);
    const uint8_t *data = key;
    const uint8_t *end = data + (len - (len & 7));
    while (data != end) {
        uint64_t k = 0;
        for (int i = 7; i >= 0; i--) k = (k << 8) | data[i]; /* little endian */
        k *= m;
        k ^= k >> r;
        k *= m;
        h ^= k;
        h *= m;
        data += 8;
    }
    switch (len & 7) {
    case 7: h ^= (uint64_t)data[6] << 48; /* fall through */
    case 6: h ^= (uint64_t)data[5] << 40; /* fall through */
    case 5: h ^= (uint64_t)data[4] << 32; /* fall through */
    case 4: h ^= (uint64_t)data[3] << 24; /* fall through */
    case 3: h ^= (uint64_t)data[2] << 16; /* fall through */
    case 2: h ^= (uint64_t)data[1] << 8;  /* fall through */
    case 1:
        h ^= (uint64_t)data[0];
        h *= m;
        break;
    default: break;
    }
    h ^= h >> r;
    h *= m;
    h ^= h >> r;
    return h;
}

int fri_hll_pattern(const char *ele, size_t len, long *reg)
{
    uint64_t hash = fri_murmur64a(ele, len, HLL_SEED);
    *reg = (long)(hash & (FRI_HLL_REGISTERS - 1));
    hash >>= FRI_HLL_P;
    hash |= (uint64_t)1 << HLL_Q; /* the run ends by bit Q at the latest */
    int count = 1;
    for (uint64_t bit = 1; (hash & bit) == 0; bit <<= 1) count++;
    return count;
}

/* ----- Dense registers ------------------------------------------------------------------- */

unsigned fri_hll_dense_get(const uint8_t *regs, long i)
{
    unsigned long byte = (unsigned long)i * FRI_HLL_BITS / 8;
    unsigned long fb = (unsigned long)i * FRI_HLL_BITS & 7;
    unsigned long v = regs[byte] >> fb;
    if (fb > 8 - FRI_HLL_BITS) v |= (unsigned long)regs[byte + 1] << (8 - fb);
    return (unsigned)(v & FRI_HLL_REGISTER_MAX);
}

void fri_hll_dense_set(uint8_t *regs, long i, unsigned v)
{
    unsigned long byte = (unsigned long)i * FRI_HLL_BITS / 8;
    unsigned long fb = (unsigned long)i * FRI_HLL_BITS & 7;
    regs[byte] = (uint8_t)((regs[byte] & ~(FRI_HLL_REGISTER_MAX << fb)) | (v << fb));
    /* the register spills into the next byte only past bit 2; Redis's masks leave that
     * byte as it is otherwise (even the one after the last register) */
    if (fb > 8 - FRI_HLL_BITS)
        regs[byte + 1] = (uint8_t)((regs[byte + 1] & ~(FRI_HLL_REGISTER_MAX >> (8 - fb))) |
                                   (v >> (8 - fb)));
}

/* Sets a dense register if count is larger: 1 when it changed. */
static int dense_set_max(uint8_t *regs, long i, uint8_t count)
{
    if (count <= fri_hll_dense_get(regs, i)) return 0;
    fri_hll_dense_set(regs, i, count);
    return 1;
}

static uint8_t *registers(fri_str *s) { return (uint8_t *)s->buf + FRI_HLL_HDR_SIZE; }
static int encoding_of(const fri_str *s) { return (uint8_t)s->buf[ENCODING_BYTE]; }
static void invalidate_cache(fri_str *s) { s->buf[CARD_BYTE + 7] = (char)((uint8_t)s->buf[CARD_BYTE + 7] | 0x80); }

/* ----- Representations ---------------------------------------------------------------- */

/* len zero bytes (sdsnewlen(NULL, len)); NULL when out of memory. */
static fri_str *zeroed(size_t len)
{
    fri_str *s = fri_str_new("", 0);
    fri_str *n = s ? fri_str_resize(s, len) : NULL;
    if (!n) fri_str_free(s);
    return n;
}

fri_str *fri_hll_new(void)
{
    /* XZERO runs of 16384 registers each: one, with Redis's constants */
    int nruns = (FRI_HLL_REGISTERS + SP_XZERO_MAX_LEN - 1) / SP_XZERO_MAX_LEN;
    fri_str *s = zeroed((size_t)(FRI_HLL_HDR_SIZE + nruns * 2));
    if (!s) return NULL;
    memcpy(s->buf, "HYLL", 4);
    s->buf[ENCODING_BYTE] = FRI_HLL_SPARSE;
    uint8_t *p = (uint8_t *)s->buf + FRI_HLL_HDR_SIZE;
    for (int left = FRI_HLL_REGISTERS; left > 0;) {
        int run = left < SP_XZERO_MAX_LEN ? left : SP_XZERO_MAX_LEN;
        sp_xzero(p, run);
        p += 2;
        left -= run;
    }
    return s;
}

int fri_hll_valid(const fri_str *s)
{
    if (s->len < FRI_HLL_HDR_SIZE || memcmp(s->buf, "HYLL", 4) != 0) return 0;
    if (encoding_of(s) > FRI_HLL_SPARSE) return 0;
    if (encoding_of(s) == FRI_HLL_DENSE && s->len != FRI_HLL_DENSE_SIZE) return 0;
    return 1;
}

int fri_hll_to_dense(fri_str **sp)
{
    fri_str *s = *sp;
    if (encoding_of(s) == FRI_HLL_DENSE) return 0;
    fri_str *d = zeroed(FRI_HLL_DENSE_SIZE);
    if (!d) return -2;
    memcpy(d->buf, s->buf, FRI_HLL_HDR_SIZE); /* magic and cached cardinality */
    d->buf[ENCODING_BYTE] = FRI_HLL_DENSE;
    const uint8_t *p = (const uint8_t *)s->buf + FRI_HLL_HDR_SIZE;
    const uint8_t *end = (const uint8_t *)s->buf + s->len;
    long idx = 0;
    int valid = 1;
    while (p < end) {
        int run = SP_IS_ZERO(*p) ? SP_ZERO_LEN(*p)
                  : SP_IS_XZERO(*p) ? SP_XZERO_LEN(p[0], p[1]) /* p[1]: maybe past the end */
                                    : SP_VAL_LEN(*p);
        if (run + idx > FRI_HLL_REGISTERS) { /* any opcode past the last register */
            valid = 0;
            break;
        }
        if (SP_IS_VAL(*p)) {
            int val = SP_VAL_VALUE(*p);
            while (run--) fri_hll_dense_set(registers(d), idx++, (unsigned)val);
        } else {
            idx += run;
        }
        p += SP_IS_XZERO(*p) ? 2 : 1;
    }
    if (!valid || idx != FRI_HLL_REGISTERS) {
        fri_str_free(d);
        return -1;
    }
    fri_str_free(s);
    *sp = d;
    return 0;
}

/* s resized to len bytes, keeping the byte just past the end as it was in the buffer:
 * Redis reads that byte (its sds terminator) as the second byte of a corrupt XZERO that
 * ends a value, and hllSparseSet's splice can leave a non-zero byte there (it writes a
 * 2-byte XZERO where a 1-byte one was).  When even a smaller realloc fails, the block
 * stays as it is. */
static fri_str *set_len(fri_str *s, size_t len)
{
    char tail = len <= s->len ? s->buf[len] : '\0';
    fri_str *n = fri_str_resize(s, len);
    if (!n) {
        n = s;
        n->len = len;
    }
    n->buf[len] = tail;
    return n;
}

/* hllSparseSet on the bytes of *sp: the opcode covering index is found, replaced by the
 * sequence that gives the register its new value, and adjacent equal VAL opcodes (up to
 * five from the one before) are merged, exactly as Redis does it. */
static int sparse_set(fri_str **sp, long index, uint8_t count, long long sparse_max)
{
    fri_str *s = *sp;
    size_t len = s->len;
    if (count > SP_VAL_MAX_VALUE) goto promote;

    /* room for the worst case, XZERO -> XZERO VAL XZERO (zero-filled, like the NUL a
     * corrupt XZERO at the very end reads in Redis) */
    char tail = s->buf[len];
    fri_str *g = fri_str_resize(s, len + 3);
    if (!g) return -2;
    s = *sp = g;
    uint8_t *b = (uint8_t *)s->buf;
    b[len] = (uint8_t)tail;
    size_t p = FRI_HLL_HDR_SIZE, end = len, prev = 0, next;
    int has_prev = 0;
    long first = 0, span = 0;
    while (p < end) {
        size_t oplen = 1;
        if (SP_IS_ZERO(b[p])) {
            span = SP_ZERO_LEN(b[p]);
        } else if (SP_IS_VAL(b[p])) {
            span = SP_VAL_LEN(b[p]);
        } else {
            span = SP_XZERO_LEN(b[p], b[p + 1]);
            oplen = 2;
        }
        if (index <= first + span - 1) break;
        prev = p;
        has_prev = 1;
        p += oplen;
        first += span;
    }
    if (span == 0 || p >= end) {
        *sp = set_len(s, len);
        return -1;
    }
    next = SP_IS_XZERO(b[p]) ? p + 2 : p + 1;
    int has_next = next < end;

    int is_zero = 0, is_xzero = 0, is_val = 0;
    long runlen;
    if (SP_IS_ZERO(b[p])) {
        is_zero = 1;
        runlen = SP_ZERO_LEN(b[p]);
    } else if (SP_IS_XZERO(b[p])) {
        is_xzero = 1;
        runlen = SP_XZERO_LEN(b[p], b[p + 1]);
    } else {
        is_val = 1;
        runlen = SP_VAL_LEN(b[p]);
    }

    if (is_val) {
        int old = SP_VAL_VALUE(b[p]);
        if (old >= count) { /* nothing to raise */
            *sp = set_len(s, len);
            return 0;
        }
        if (runlen == 1) { /* a VAL of our register alone */
            b[p] = sp_val(count, 1);
            goto updated;
        }
    }
    if (is_zero && runlen == 1) {
        b[p] = sp_val(count, 1);
        goto updated;
    }

    /* the general case: the opcode is split into up to three */
    uint8_t seq[5];
    int n = 0;
    long last = first + span - 1;
    if (is_zero || is_xzero) {
        if (index != first) n += sp_zeros(seq + n, index - first);
        seq[n++] = sp_val(count, 1);
        if (index != last) n += sp_zeros(seq + n, last - index);
    } else {
        int cur = SP_VAL_VALUE(b[p]);
        if (index != first) seq[n++] = sp_val(cur, (int)(index - first));
        seq[n++] = sp_val(count, 1);
        if (index != last) seq[n++] = sp_val(cur, (int)(last - index));
    }
    {
        int oldlen = is_xzero ? 2 : 1;
        long delta = n - oldlen;
        if (delta > 0 && (long long)(len + (size_t)delta) > sparse_max) goto promote;
        if (delta && has_next) memmove(b + next + delta, b + next, end - next);
        len = (size_t)((long)len + delta);
        b[len] = 0; /* sdsIncrLen's terminator, which the copy below may overwrite */
        memcpy(b + p, seq, (size_t)n);
        end = (size_t)((long)end + delta);
    }

updated:
    p = has_prev ? prev : FRI_HLL_HDR_SIZE;
    int scanlen = 5;
    while (p < end && scanlen--) {
        if (SP_IS_XZERO(b[p])) {
            p += 2;
            continue;
        } else if (SP_IS_ZERO(b[p])) {
            p++;
            continue;
        }
        if (p + 1 < end && SP_IS_VAL(b[p + 1])) {
            int v1 = SP_VAL_VALUE(b[p]), v2 = SP_VAL_VALUE(b[p + 1]);
            if (v1 == v2) {
                int l = SP_VAL_LEN(b[p]) + SP_VAL_LEN(b[p + 1]);
                if (l <= SP_VAL_MAX_LEN) {
                    b[p + 1] = sp_val(v1, l);
                    memmove(b + p, b + p + 1, end - p);
                    len--;
                    end--;
                    b[len] = 0;
                    continue; /* the merged one may merge again with its right */
                }
            }
        }
        p++;
    }
    *sp = s = set_len(s, len);
    invalidate_cache(s);
    return 1;

promote:
    if (s->len != len) *sp = s = set_len(s, len);
    {
        int r = fri_hll_to_dense(sp);
        if (r < 0) return r;
    }
    dense_set_max(registers(*sp), index, count); /* a change, since it needed promoting */
    return 1;
}

int fri_hll_set(fri_str **sp, long index, uint8_t count, long long sparse_max)
{
    switch (encoding_of(*sp)) {
    case FRI_HLL_DENSE: return dense_set_max(registers(*sp), index, count);
    case FRI_HLL_SPARSE: return sparse_set(sp, index, count, sparse_max);
    default: return -1;
    }
}

int fri_hll_add(fri_str **sp, const char *ele, size_t len, long long sparse_max)
{
    long index;
    int count = fri_hll_pattern(ele, len, &index);
    return fri_hll_set(sp, index, (uint8_t)count, sparse_max);
}

/* ----- Counting -------------------------------------------------------------------------- */

/* Ertl's sigma and tau, iterated until the sum stops changing, as Redis does. */
static double hll_sigma(double x)
{
    if (x == 1.) return INFINITY;
    double z_prev, y = 1, z = x;
    do {
        x *= x;
        z_prev = z;
        z += x * y;
        y += y;
    } while (z_prev != z);
    return z;
}

static double hll_tau(double x)
{
    if (x == 0. || x == 1.) return 0.;
    double z_prev, y = 1.0, z = 1 - x;
    do {
        x = sqrt(x);
        z_prev = z;
        y *= 0.5;
        z -= pow(1 - x, 2) * y;
    } while (z_prev != z);
    return z / 3;
}

static uint64_t estimate(const int *histo)
{
    double m = FRI_HLL_REGISTERS;
    double z = m * hll_tau((m - histo[HLL_Q + 1]) / (double)m);
    for (int j = HLL_Q; j >= 1; --j) {
        z += histo[j];
        z *= 0.5;
    }
    z += m * hll_sigma(histo[0] / (double)m);
    double e = (double)llroundl(HLL_ALPHA_INF * m * m / z);
    return (uint64_t)e;
}

uint64_t fri_hll_count(const fri_str *s, int *invalid)
{
    int histo[64] = {0};
    const uint8_t *regs = (const uint8_t *)s->buf + FRI_HLL_HDR_SIZE;
    if (encoding_of(s) == FRI_HLL_DENSE) {
        for (long i = 0; i < FRI_HLL_REGISTERS; i++) histo[fri_hll_dense_get(regs, i)]++;
    } else {
        const uint8_t *p = regs, *end = (const uint8_t *)s->buf + s->len;
        long idx = 0;
        int valid = 1;
        while (p < end) {
            int run = SP_IS_ZERO(*p) ? SP_ZERO_LEN(*p)
                      : SP_IS_XZERO(*p) ? SP_XZERO_LEN(p[0], p[1])
                                        : SP_VAL_LEN(*p);
            if (run + idx > FRI_HLL_REGISTERS) {
                valid = 0;
                break;
            }
            idx += run;
            histo[SP_IS_VAL(*p) ? SP_VAL_VALUE(*p) : 0] += run;
            p += SP_IS_XZERO(*p) ? 2 : 1;
        }
        if ((!valid || idx != FRI_HLL_REGISTERS) && invalid) *invalid = 1;
    }
    return estimate(histo);
}

uint64_t fri_hll_count_registers(const uint8_t *max)
{
    int histo[64] = {0};
    for (long i = 0; i < FRI_HLL_REGISTERS; i++) histo[max[i] & 63]++;
    return estimate(histo);
}

int fri_hll_merge(uint8_t *max, const fri_str *s)
{
    const uint8_t *regs = (const uint8_t *)s->buf + FRI_HLL_HDR_SIZE;
    if (encoding_of(s) == FRI_HLL_DENSE) {
        for (long i = 0; i < FRI_HLL_REGISTERS; i++) {
            uint8_t v = (uint8_t)fri_hll_dense_get(regs, i);
            if (v > max[i]) max[i] = v;
        }
        return 0;
    }
    const uint8_t *p = regs, *end = (const uint8_t *)s->buf + s->len;
    long i = 0;
    while (p < end) {
        long run = SP_IS_ZERO(*p) ? SP_ZERO_LEN(*p)
                   : SP_IS_XZERO(*p) ? SP_XZERO_LEN(p[0], p[1])
                                     : SP_VAL_LEN(*p);
        if (run + i > FRI_HLL_REGISTERS) return -1;
        if (SP_IS_VAL(*p)) {
            uint8_t val = (uint8_t)SP_VAL_VALUE(*p);
            for (; run > 0; run--, i++)
                if (val > max[i]) max[i] = val;
        } else {
            i += run;
        }
        p += SP_IS_XZERO(*p) ? 2 : 1;
    }
    return i == FRI_HLL_REGISTERS ? 0 : -1;
}

/* ----- The value in the keyspace -------------------------------------------------------- */

/* An HLL value or an error answered (isHLLObjectOrReply): WRONGTYPE for another type, the
 * HLL WRONGTYPE text for a string that is not one. */
static int hll_or_reply(fr_client *c, const fri_obj *o)
{
    if (o->type != FRI_STRING) {
        fri_reply_error(c, FRI_ERR_WRONGTYPE);
        return -1;
    }
    if (!fri_hll_valid(o->ptr)) {
        fri_reply_error(c, HLL_ERR_WRONGTYPE);
        return -1;
    }
    return 0;
}

/* A new HLL object (createHLLObject: a raw string of its own, sized for its bytes). */
static fri_obj *hll_object_new(void)
{
    fri_str *s = fri_hll_new();
    fri_obj *o = s ? fri_obj_new(FRI_STRING, s) : NULL;
    if (!o) fri_str_free(s);
    return o; /* strenc raw, sds as made for its length: fri_obj_new's zeros */
}

/* After a representation change to dense: a new sds made for 12304 bytes. */
static void obj_now_dense(fri_obj *o)
{
    o->sds = 0;
    o->sdstype = 0;
}

/* fri_hll_set on a keyspace value, keeping its sds allocation as Redis's would be
 * (sdsMakeRoomFor 3 bytes before a sparse update) for MEMORY USAGE. */
static int obj_set(fr_client *c, fri_obj *o, long index, uint8_t count)
{
    fri_str *s = o->ptr;
    int sparse = encoding_of(s) == FRI_HLL_SPARSE;
    if (sparse && count <= SP_VAL_MAX_VALUE) fri_str_grow(o, s->len + 3);
    int r = fri_hll_set(&s, index, count, c->srv->tun.hll_sparse_max_bytes);
    o->ptr = s;
    if (sparse && encoding_of(s) == FRI_HLL_DENSE) obj_now_dense(o);
    return r;
}

static int obj_to_dense(fri_obj *o)
{
    fri_str *s = o->ptr;
    if (encoding_of(s) == FRI_HLL_DENSE) return 0;
    int r = fri_hll_to_dense(&s);
    o->ptr = s;
    if (r == 0) obj_now_dense(o);
    return r;
}

/* ----- Commands ----------------------------------------------------------------------------- */

/* PFADD key [element ...]: 1 when a register changed or the key was created. */
static void pfadd_command(fr_client *c)
{
    const fri_arg *key = &c->argv[1];
    fri_obj *o = fri_lookup_write(c, key);
    int updated = 0;
    if (!o) {
        o = hll_object_new();
        if (!o) {
            fri_reply_error(c, FRI_ERR_OOM);
            return;
        }
        fri_db_add(c->db, key->ptr, key->len, o);
        updated++;
    } else {
        if (hll_or_reply(c, o) < 0) return;
        fri_str_unshare(c->srv, o);
    }
    for (int j = 2; j < c->argc; j++) {
        long index;
        int count = fri_hll_pattern(c->argv[j].ptr, c->argv[j].len, &index);
        int r = obj_set(c, o, index, (uint8_t)count);
        if (r == 1) updated++;
        if (r < 0) {
            fri_reply_error(c, r == -1 ? HLL_ERR_INVALID : FRI_ERR_OOM);
            return;
        }
    }
    if (updated) {
        fri_signal_modified(c, c->db, key->ptr, key->len);
        fri_notify_key(c, FR_NOTIFY_STRING, "pfadd", key);
        invalidate_cache(o->ptr);
    }
    fri_reply_ll(c, updated ? 1 : 0);
}

/* PFCOUNT key [key ...]: one key answers (and caches) its own estimate; several answer the
 * estimate of their union, computed on byte registers and cached nowhere. */
static void pfcount_command(fr_client *c)
{
    if (c->argc > 2) {
        uint8_t *max = fri_calloc(FRI_HLL_REGISTERS, 1);
        if (!max) {
            fri_reply_error(c, FRI_ERR_OOM);
            return;
        }
        for (int j = 1; j < c->argc; j++) {
            fri_obj *o = fri_lookup_read(c, &c->argv[j]);
            if (!o) continue; /* a missing key is an empty HLL */
            if (hll_or_reply(c, o) < 0) {
                fri_free(max);
                return;
            }
            if (fri_hll_merge(max, o->ptr) < 0) {
                fri_reply_error(c, HLL_ERR_INVALID);
                fri_free(max);
                return;
            }
        }
        fri_reply_ll(c, (long long)fri_hll_count_registers(max));
        fri_free(max);
        return;
    }
    const fri_arg *key = &c->argv[1];
    fri_obj *o = fri_lookup_read(c, key);
    if (!o) {
        fri_reply_ll(c, 0);
        return;
    }
    if (hll_or_reply(c, o) < 0) return;
    fri_str_unshare(c->srv, o);
    uint8_t *card = (uint8_t *)((fri_str *)o->ptr)->buf + CARD_BYTE;
    uint64_t n = 0;
    if ((card[7] & 0x80) == 0) {
        for (int i = 7; i >= 0; i--) n = (n << 8) | card[i];
    } else {
        int invalid = 0;
        n = fri_hll_count(o->ptr, &invalid);
        if (invalid) {
            fri_reply_error(c, HLL_ERR_INVALID);
            return;
        }
        for (int i = 0; i < 8; i++) card[i] = (uint8_t)(n >> (8 * i));
        /* a read-only command that changed the value: WATCH sees it (no event) */
        fri_signal_modified(c, c->db, key->ptr, key->len);
    }
    fri_reply_ll(c, (long long)n);
}

/* PFMERGE dest [source ...]: dest (a source too) becomes the union; dense as soon as one
 * input is dense, else built register by register in the sparse form. */
static void pfmerge_command(fr_client *c)
{
    uint8_t *max = fri_calloc(FRI_HLL_REGISTERS, 1);
    if (!max) {
        fri_reply_error(c, FRI_ERR_OOM);
        return;
    }
    int use_dense = 0;
    for (int j = 1; j < c->argc; j++) {
        fri_obj *o = fri_lookup_read(c, &c->argv[j]);
        if (!o) continue;
        if (hll_or_reply(c, o) < 0) goto done;
        if (encoding_of(o->ptr) == FRI_HLL_DENSE) use_dense = 1;
        if (fri_hll_merge(max, o->ptr) < 0) {
            fri_reply_error(c, HLL_ERR_INVALID);
            goto done;
        }
    }
    const fri_arg *key = &c->argv[1];
    fri_obj *o = fri_lookup_write(c, key);
    if (!o) {
        o = hll_object_new();
        if (!o) {
            fri_reply_error(c, FRI_ERR_OOM);
            goto done;
        }
        fri_db_add(c->db, key->ptr, key->len, o);
    } else {
        fri_str_unshare(c->srv, o); /* checked above, as one of the sources */
    }
    if (use_dense) {
        int r = obj_to_dense(o);
        if (r < 0) {
            fri_reply_error(c, r == -1 ? HLL_ERR_INVALID : FRI_ERR_OOM);
            goto done;
        }
    }
    for (long j = 0; j < FRI_HLL_REGISTERS; j++) {
        if (max[j] == 0) continue;
        if (obj_set(c, o, j, max[j]) == -2) {
            fri_reply_error(c, FRI_ERR_OOM);
            goto done;
        }
    }
    invalidate_cache(o->ptr);
    fri_signal_modified(c, c->db, key->ptr, key->len);
    fri_notify_key(c, FR_NOTIFY_STRING, "pfadd", key); /* Redis's event for a merge too */
    fri_reply_ok(c);
done:
    fri_free(max);
}

/* PFDEBUG GETREG|DECODE|ENCODING|TODENSE key. */
static void pfdebug_command(fr_client *c)
{
    const fri_arg *sub = &c->argv[1];
    const fri_arg *key = &c->argv[2];
    fri_obj *o = fri_lookup_write(c, key);
    if (!o) {
        fri_reply_error(c, "ERR The specified key does not exist");
        return;
    }
    if (hll_or_reply(c, o) < 0) return;
    fri_str_unshare(c->srv, o);
    fri_str *s = o->ptr;
    int sublen = (int)strnlen(sub->ptr, sub->len); /* Redis prints it with %s */

    if (fri_arg_is_cstr(sub, "getreg")) {
        /* converted to dense without a signal: only the propagation sees it in Redis */
        int r = obj_to_dense(o);
        if (r < 0) {
            fri_reply_error(c, r == -1 ? HLL_ERR_INVALID : FRI_ERR_OOM);
            return;
        }
        s = o->ptr;
        fri_reply_array_len(c, FRI_HLL_REGISTERS);
        for (long j = 0; j < FRI_HLL_REGISTERS; j++)
            fri_reply_ll(c, fri_hll_dense_get(registers(s), j));
    } else if (fri_arg_is_cstr(sub, "decode")) {
        if (encoding_of(s) != FRI_HLL_SPARSE) {
            fri_reply_error(c, "ERR HLL encoding is not sparse");
            return;
        }
        fri_buf out = {0};
        const uint8_t *p = (const uint8_t *)s->buf + FRI_HLL_HDR_SIZE;
        const uint8_t *end = (const uint8_t *)s->buf + s->len;
        while (p < end) {
            if (SP_IS_ZERO(*p)) {
                fri_buf_printf(&out, "z:%d ", SP_ZERO_LEN(*p));
                p++;
            } else if (SP_IS_XZERO(*p)) {
                fri_buf_printf(&out, "Z:%d ", SP_XZERO_LEN(p[0], p[1]));
                p += 2;
            } else {
                fri_buf_printf(&out, "v:%d,%d ", SP_VAL_VALUE(*p), SP_VAL_LEN(*p));
                p++;
            }
        }
        size_t n = out.len;
        while (n && out.p[n - 1] == ' ') n--;
        fri_reply_bulk(c, n ? out.p : "", n);
        fri_buf_free(&out);
    } else if (fri_arg_is_cstr(sub, "encoding")) {
        fri_reply_status(c, encoding_of(s) == FRI_HLL_DENSE ? "dense" : "sparse");
    } else if (fri_arg_is_cstr(sub, "todense")) {
        int conv = encoding_of(s) == FRI_HLL_SPARSE;
        int r = obj_to_dense(o);
        if (r < 0) {
            fri_reply_error(c, r == -1 ? HLL_ERR_INVALID : FRI_ERR_OOM);
            return;
        }
        fri_reply_ll(c, conv);
    } else {
        fri_reply_errorf(c, "ERR Unknown PFDEBUG subcommand '%.*s'", sublen, sub->ptr);
    }
}

/* A small generator for the self-test (the server's own stays untouched). */
static uint64_t selftest_next(uint64_t *x)
{
    *x ^= *x << 13;
    *x ^= *x >> 7;
    *x ^= *x << 17;
    return *x;
}

/* PFSELFTEST: checks this implementation as Redis checks its own -- every register
 * written and read back with random values without disturbing its neighbours, then
 * distinct elements added to a dense and a sparse HLL side by side, which must stay
 * sparse while small, agree with each other and be within six standard errors at
 * 1, 10, 100 ... 100000 elements.  OK, or Redis's TESTFAILED texts. */
static void pfselftest_command(fr_client *c)
{
    uint8_t *dense = fri_calloc(FRI_HLL_DENSE_SIZE + 1, 1);
    uint8_t *bytes = fri_malloc(FRI_HLL_REGISTERS);
    fri_str *sparse = fri_hll_new();
    uint64_t rng = 0x2545f4914f6cdd1dULL;
    if (!dense || !bytes || !sparse) {
        fri_reply_error(c, FRI_ERR_OOM);
        goto done;
    }
    uint8_t *regs = dense + FRI_HLL_HDR_SIZE;
    for (int cycle = 0; cycle < 100; cycle++) {
        for (long i = 0; i < FRI_HLL_REGISTERS; i++) {
            unsigned r = (unsigned)(selftest_next(&rng) & FRI_HLL_REGISTER_MAX);
            bytes[i] = (uint8_t)r;
            fri_hll_dense_set(regs, i, r);
        }
        for (long i = 0; i < FRI_HLL_REGISTERS; i++) {
            unsigned v = fri_hll_dense_get(regs, i);
            if (v != bytes[i]) {
                fri_reply_errorf(c, "TESTFAILED Register %ld should be %d but is %u", i,
                                 (int)bytes[i], v);
                goto done;
            }
        }
    }
    memset(regs, 0, FRI_HLL_DENSE_SIZE - FRI_HLL_HDR_SIZE);
    fri_str *dstr = fri_str_new((const char *)dense, FRI_HLL_DENSE_SIZE);
    if (!dstr) {
        fri_reply_error(c, FRI_ERR_OOM);
        goto done;
    }
    memcpy(dstr->buf, "HYLL", 4);
    double relerr = 1.04 / sqrt(FRI_HLL_REGISTERS);
    long long checkpoint = 1;
    uint64_t seed = selftest_next(&rng);
    for (long long j = 1; j <= 100000; j++) {
        uint8_t ele[8];
        uint64_t v = (uint64_t)j ^ seed;
        memcpy(ele, &v, 8);
        fri_hll_add(&dstr, (const char *)ele, 8, c->srv->tun.hll_sparse_max_bytes);
        if (fri_hll_add(&sparse, (const char *)ele, 8, c->srv->tun.hll_sparse_max_bytes) == -2) {
            fri_reply_error(c, FRI_ERR_OOM);
            fri_str_free(dstr);
            goto done;
        }
        if (j != checkpoint) continue;
        if (j < c->srv->tun.hll_sparse_max_bytes / 2 && encoding_of(sparse) != FRI_HLL_SPARSE) {
            fri_reply_error(c, "TESTFAILED sparse encoding not used");
            fri_str_free(dstr);
            goto done;
        }
        uint64_t card = fri_hll_count(dstr, NULL);
        if (card != fri_hll_count(sparse, NULL)) {
            fri_reply_error(c, "TESTFAILED dense/sparse disagree");
            fri_str_free(dstr);
            goto done;
        }
        long long abserr = checkpoint - (long long)card;
        unsigned long long maxerr = (unsigned long long)ceil(relerr * 6 * (double)checkpoint);
        if (j == 10) maxerr = 1;
        if (abserr < 0) abserr = -abserr;
        if (abserr > (long long)maxerr) {
            fri_reply_errorf(c, "TESTFAILED Too big error. card:%llu abserr:%llu",
                             (unsigned long long)checkpoint, (unsigned long long)abserr);
            fri_str_free(dstr);
            goto done;
        }
        checkpoint *= 10;
    }
    fri_str_free(dstr);
    fri_reply_ok(c);
done:
    fri_free(dense);
    fri_free(bytes);
    fri_str_free(sparse);
}

/* ----- The command table ------------------------------------------------------------------ */

#include "cmd_flags.h"

/* PFMERGE's keys are the destination and every source: one range from argument 1. */
const fri_command fri_hll_commands[] = {
    {"pfadd", pfadd_command, -2, W | M | F, "hyperloglog", 1, 1, 1, NULL, NULL},
    {"pfcount", pfcount_command, -2, R, "hyperloglog", 1, -1, 1, NULL, NULL},
    {"pfmerge", pfmerge_command, -2, W | M, "hyperloglog", 1, -1, 1, NULL, NULL},
    {"pfdebug", pfdebug_command, 3, W | M | A, "hyperloglog", 2, 2, 1, NULL, NULL},
    {"pfselftest", pfselftest_command, 1, A, "hyperloglog", 0, 0, 0, NULL, NULL},
    {NULL, NULL, 0, 0, NULL, 0, 0, 0, NULL, NULL},
};
