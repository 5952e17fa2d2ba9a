/* object.c -- what Redis keeps in each value's object header and shows through OBJECT and
 * MEMORY: the encoding a value would have, its LRU clock or LFU counter, whether it is a
 * shared integer, and an estimate of the memory it would take.
 *
 * The fake stores values its own way; what it records here is what Redis 7.0.15 would
 * have, decided by the same rules at the same moments:
 *
 *  - strings: "int" (a strict integer of at most 20 bytes), "embstr" (at most 44 bytes)
 *    or "raw", as tryObjectEncoding picks for SET and its friends, "raw" after APPEND,
 *    SETRANGE, SETBIT and BITFIELD writes (dbUnshareStringValue), "embstr"/"raw" for
 *    INCRBYFLOAT's result (createStringObject) and "int" for INCR's.  The integers 0..9999
 *    are Redis's shared objects (OBJECT REFCOUNT 2147483647) unless maxmemory is set with
 *    an LRU or LFU policy; all the keys holding one share its LRU field, as in Redis.
 *    Inside EXEC a string SET stored from its argument has two references until EXEC
 *    ends, the queued command's and the key's (fri_str_stored_arg);
 *  - the other types keep their encoding in their own structures (t_hash.c, t_set.c,
 *    t_zset.c); a list is always a quicklist in 7.0 (listpack lists came in 7.2), a
 *    stream always "stream";
 *  - the LRU field: the LRU clock (Unix seconds, 24 bits) when the value is created and
 *    every time a command looks the key up, except the lookups Redis makes with
 *    LOOKUP_NOTOUCH (TYPE, EXISTS, TTL and friends, OBJECT, MEMORY USAGE, DEL, SCAN).
 *    Under an LFU policy the same field holds minutes << 8 | a logarithmic counter that
 *    starts at 5, grows with probability 1 / ((counter - 5) * lfu-log-factor + 1) per
 *    access (drawn from the server's seeded generator) and decays by one every
 *    lfu-decay-time minutes.  Redis reads its LRU clock from a copy refreshed ten times a
 *    second; the fake reads the command's clock, so near a second boundary Redis may
 *    answer one second less.
 *
 * MEMORY USAGE follows objectComputeSize: sizes of Redis's structures (robj 16 bytes, a
 * dict entry 24, ...) and jemalloc's size classes for every allocation, the listpack
 * bytes computed with listpack's own encoding rules, and the same sampling of aggregate
 * values.  docs/fake_redis.md says where it is exact and where it is an estimate.
 */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>

#include "fr_int.h"
#include "rdb_int.h"
#include "stream_int.h"

#define LRU_CLOCK_MAX ((1u << 24) - 1) /* Redis's LRU_CLOCK_MAX */
#define LFU_INIT_VAL 5                 /* a new value's LFU counter */
#define EMBSTR_SIZE_LIMIT 44           /* OBJ_ENCODING_EMBSTR_SIZE_LIMIT */
#define ROBJ_SIZE 16                   /* sizeof(robj) */
#define DICT_ENTRY_SIZE 24             /* sizeof(dictEntry) without metadata */
#define CLUSTER_ENTRY_META 16          /* clusterDictEntryMetadata, in cluster mode */
#define SDS_MAX_PREALLOC (1024 * 1024) /* sdsMakeRoomFor's greedy limit */
#define SHARED_REFCOUNT 2147483647LL   /* OBJ_SHARED_REFCOUNT, as OBJECT REFCOUNT shows it */

/* ----- jemalloc's size classes ------------------------------------------------------------
 * zmalloc_size answers the class a request falls in: 8, 16, then steps of 16 up to 128,
 * then four classes per doubling (160, 192, 224, 256, 320, ...), the same pattern for
 * small, large and huge sizes (jemalloc 5.3 on x86-64, the Debian package's). */

/* The index of the class holding n bytes (0: 8 bytes, 1: 16, 2..8: 32..128, then four
 * per doubling). */
static unsigned je_class_index(size_t n)
{
    if (n <= 8) return 0;
    if (n <= 128) return (unsigned)((n + 15) / 16);
    unsigned k = 7; /* the group (2^k, 2^(k+1)] */
    while (k < 63 && ((size_t)1 << (k + 1)) < n) k++;
    size_t step = (size_t)1 << (k - 2);
    size_t i = (n - ((size_t)1 << k) + step - 1) / step; /* 1..4 */
    return 9 + (k - 7) * 4 + (unsigned)(i - 1);
}

static size_t je_class_size(unsigned idx)
{
    if (idx == 0) return 8;
    if (idx <= 8) return (size_t)idx * 16;
    unsigned g = (idx - 9) / 4, i = (idx - 9) % 4 + 1;
    return ((size_t)1 << (7 + g)) + (size_t)i * ((size_t)1 << (5 + g));
}

size_t fri_je_size(size_t n) { return je_class_size(je_class_index(n)); }

/* ----- sds strings ------------------------------------------------------------------------ */

enum { SDS5, SDS8, SDS16, SDS32, SDS64 };

/* sdsReqType: the smallest header that can hold len. */
static int sds_req_type(size_t len)
{
    if (len < 32) return SDS5;
    if (len < 256) return SDS8;
    if (len < 65536) return SDS16;
    if (len < 4294967296ull) return SDS32;
    return SDS64;
}

static size_t sds_hdr_size(int type)
{
    static const size_t hdr[] = {1, 3, 5, 9, 17};
    return hdr[type];
}

static size_t sds_type_max(int type)
{
    static const size_t max[] = {31, 255, 65535, 4294967295u, SIZE_MAX};
    return max[type];
}

size_t fri_sds_size(size_t len)
{
    int type = sds_req_type(len);
    if (type == SDS5 && len == 0) type = SDS8; /* sdsnewlen's rule for "" */
    return fri_je_size(sds_hdr_size(type) + len + 1);
}

/* ----- listpack sizes --------------------------------------------------------------------- */

uint64_t fri_lp_backlen_size(uint64_t l)
{
    if (l <= 127) return 1;
    if (l < 16383) return 2;
    if (l < 2097151) return 3;
    if (l < 268435455) return 4;
    return 5;
}

uint64_t fri_lp_int_size(int64_t v)
{
    uint64_t enc;
    if (v >= 0 && v <= 127) enc = 1;
    else if (v >= -4096 && v <= 4095) enc = 2;
    else if (v >= -32768 && v <= 32767) enc = 3;
    else if (v >= -8388608 && v <= 8388607) enc = 4;
    else if (v >= -2147483648LL && v <= 2147483647LL) enc = 5;
    else enc = 9;
    return enc + fri_lp_backlen_size(enc);
}

uint64_t fri_lp_str_size(const char *p, size_t len)
{
    long long v;
    if (len > 0 && len <= 20 && fri_string2ll(p, len, &v)) return fri_lp_int_size(v);
    uint64_t enc = len < 64 ? 1 + len : len < 4096 ? 2 + len : 5 + (uint64_t)len;
    return enc + fri_lp_backlen_size(enc);
}

size_t fri_sample_index(size_t k, size_t samples, size_t n)
{
    if (samples >= n) return k;
    return (size_t)((double)k * (double)n / (double)samples);
}

size_t fri_dict_mem(size_t n, size_t samples, size_t sampled_bytes)
{
    /* dict: type, two table pointers, two used counts, rehashidx, pauserehash and the two
     * size exponents: 56 bytes; then a pointer per bucket.  The buckets are the smallest
     * power of two >= n, at least 4 (the table grows when full, shrinks below 10%). */
    size_t slots = 4;
    while (slots < n) slots *= 2;
    size_t size = 56 + 8 * slots;
    if (samples) size += (size_t)((double)sampled_bytes / (double)samples * (double)n);
    return size;
}

/* ----- LRU and LFU ----------------------------------------------------------------------- */

uint32_t fri_lru_clock(int64_t ms)
{
    return (uint32_t)(((uint64_t)(ms < 0 ? 0 : ms) / 1000) & LRU_CLOCK_MAX);
}

/* LFUGetTimeInMinutes: Unix minutes, 16 bits. */
static uint32_t lfu_minutes(int64_t ms)
{
    return (uint32_t)(((uint64_t)(ms < 0 ? 0 : ms) / 60000) & 65535);
}

/* The shared integer a string value stands for, or -1. */
static long long shared_value(const fri_obj *o)
{
    long long v;
    const fri_str *s = o->ptr;
    if (o->type != FRI_STRING || !o->shared) return -1;
    /* a shared integer's text is 1 to 4 digits without a leading zero: read it directly
     * (every INCR of a counter asks); anything else goes through the strict parse */
    if (s->len >= 1 && s->len <= 4 && (s->len == 1 || s->buf[0] != '0')) {
        v = 0;
        size_t i = 0;
        for (; i < s->len && s->buf[i] >= '0' && s->buf[i] <= '9'; i++)
            v = v * 10 + (s->buf[i] - '0');
        if (i == s->len) return v < FRI_SHARED_INTEGERS ? v : -1;
    }
    if (!fri_string2ll(s->buf, s->len, &v) || v < 0 || v >= FRI_SHARED_INTEGERS) return -1;
    return v;
}

/* The LRU field of shared integer v, allocated (as Redis's objects are at start-up, with
 * the clock of then) the first time it is needed; NULL when out of memory. */
static uint32_t *shared_lru_slot(fr_server *s, long long v)
{
    if (!s->shared_lru) {
        s->shared_lru = fri_malloc(FRI_SHARED_INTEGERS * sizeof(*s->shared_lru));
        if (!s->shared_lru) return NULL;
        for (size_t i = 0; i < FRI_SHARED_INTEGERS; i++) s->shared_lru[i] = s->start_lru;
    }
    return &s->shared_lru[v];
}

uint32_t fri_obj_lru_get(fr_server *s, const fri_obj *o)
{
    long long v = shared_value(o);
    if (v < 0) return o->lru;
    uint32_t *slot = shared_lru_slot(s, v);
    return slot ? *slot : s->start_lru;
}

void fri_obj_lru_set(fr_server *s, fri_obj *o, uint32_t lru)
{
    long long v = shared_value(o);
    if (v < 0) {
        o->lru = lru;
        return;
    }
    uint32_t *slot = shared_lru_slot(s, v);
    if (slot) *slot = lru;
}

static int lfu_policy(const fr_server *s)
{
    return (s->tun.maxmemory_policy & FRI_MAXMEMORY_FLAG_LFU) != 0;
}

/* LFUDecrAndReturn: the counter less one per lfu-decay-time minutes since the field's
 * time (16-bit minutes, wrapping). */
static uint32_t lfu_decr_and_return(const fr_server *s, uint32_t lru, int64_t now)
{
    uint32_t ldt = lru >> 8, counter = lru & 255;
    uint32_t minutes = lfu_minutes(now);
    uint32_t elapsed = minutes >= ldt ? minutes - ldt : 65535 - ldt + minutes;
    uint64_t periods = s->tun.lfu_decay_time ? elapsed / (uint64_t)s->tun.lfu_decay_time : 0;
    if (periods) counter = periods > counter ? 0 : counter - (uint32_t)periods;
    return counter;
}

/* LFULogIncr: the counter grows with probability 1 / ((counter - 5) * factor + 1). */
static uint32_t lfu_log_incr(fr_server *s, uint32_t counter)
{
    if (counter == 255) return 255;
    double r = (double)(fri_random(s) >> 11) / 9007199254740992.0; /* [0, 1) */
    double baseval = (double)counter - LFU_INIT_VAL;
    if (baseval < 0) baseval = 0;
    double p = 1.0 / (baseval * (double)s->tun.lfu_log_factor + 1);
    return r < p ? counter + 1 : counter;
}

unsigned fri_obj_lfu_counter(fr_server *s, const fri_obj *o, int64_t now)
{
    return lfu_decr_and_return(s, fri_obj_lru_get(s, o), now);
}

void fri_obj_touch_slow(fr_server *s, fri_obj *o, int64_t now)
{
    if (!o->shared && !lfu_policy(s)) { /* the common case, on every lookup */
        o->lru = now == s->cmd_ms ? s->cmd_lru : fri_lru_clock(now);
        return;
    }
    if (lfu_policy(s)) {
        uint32_t counter = lfu_decr_and_return(s, fri_obj_lru_get(s, o), now);
        counter = lfu_log_incr(s, counter);
        fri_obj_lru_set(s, o, lfu_minutes(now) << 8 | counter);
    } else {
        fri_obj_lru_set(s, o, fri_lru_clock(now));
    }
}

void fri_obj_stamp(fr_server *s, fri_obj *o)
{
    if (o->lru != FRI_LRU_UNSET) return;
    if (shared_value(o) >= 0) o->lru = 0; /* the shared object keeps its own field */
    else if (lfu_policy(s)) o->lru = lfu_minutes(s->cmd_ms) << 8 | LFU_INIT_VAL;
    else o->lru = s->cmd_lru;
}

void fri_obj_overwrite_stamp(fr_server *s, fri_obj *o, uint32_t old_lru)
{
    /* dbOverwrite hands the old value's LFU data to the new object (a shared integer's
     * own field included); otherwise the new object was made now, and a shared integer
     * keeps its field as it was */
    if (shared_value(o) >= 0) {
        o->lru = 0;
        if (lfu_policy(s)) fri_obj_lru_set(s, o, old_lru);
    } else {
        o->lru = lfu_policy(s) ? old_lru : s->cmd_lru;
    }
}

/* A raw string's sds: its allocation, header type and capacity. */
typedef struct sds_shape {
    size_t size; /* bytes allocated (a jemalloc class) */
    int type;    /* SDS5 .. SDS64 */
    size_t alloc; /* capacity in bytes, not counting the header and NUL */
} sds_shape;

/* fri_obj.sds for a raw string: SDS_FRESH, made by sdsnewlen for its length (its
 * capacity is what the jemalloc class leaves); SDS_TRIMMED, the same allocation with its
 * capacity cut to its length (tryObjectEncoding's trim, when more than a tenth was
 * free); or SDS_CLASS + the jemalloc class index of an sds grown by sdsMakeRoomFor. */
#define SDS_FRESH 0
#define SDS_TRIMMED 1
#define SDS_CLASS 2

static sds_shape sds_shape_of(const fri_obj *o)
{
    sds_shape sh;
    size_t len = ((const fri_str *)o->ptr)->len;
    if (o->sds < SDS_CLASS) {
        sh.type = o->sdstype ? o->sdstype - 1 : sds_req_type(len);
        if (sh.type == SDS5 && len == 0) sh.type = SDS8;
        sh.size = fri_je_size(sds_hdr_size(sh.type) + len + 1);
    } else {
        /* the header type sdsMakeRoomFor picked for a request in this class */
        sh.size = je_class_size((unsigned)(o->sds - SDS_CLASS));
        sh.type = o->sdstype ? o->sdstype - 1 : sds_req_type(sh.size - 4);
        if (sh.type == SDS5) sh.type = SDS8;
    }
    if (sh.type == SDS5 || o->sds == SDS_TRIMMED) {
        sh.alloc = len; /* a type 5 header has no room to remember spare bytes */
    } else {
        sh.alloc = sh.size - sds_hdr_size(sh.type) - 1;
        if (sh.alloc > sds_type_max(sh.type)) sh.alloc = sds_type_max(sh.type);
    }
    return sh;
}

/* ----- String encodings ------------------------------------------------------------------ */

/* May Redis return a shared integer here (createStringObjectFromLongLongWithOptions and
 * tryObjectEncoding's test)? */
static int sharing_allowed(const fr_server *s)
{
    return s->tun.maxmemory == 0 ||
           !(s->tun.maxmemory_policy & FRI_MAXMEMORY_FLAG_NO_SHARED_INTEGERS);
}

void fri_str_created(fri_obj *o)
{
    const fri_str *str = o->ptr;
    o->strenc = str->len <= EMBSTR_SIZE_LIMIT ? FRI_STRENC_EMBSTR : FRI_STRENC_RAW;
    o->shared = 0;
    o->argref = 0;
    o->sds = 0;
    o->sdstype = 0;
}

void fri_str_encode(fr_server *s, fri_obj *o)
{
    const fri_str *str = o->ptr;
    long long v;
    o->sds = 0;
    o->sdstype = 0;
    o->shared = 0;
    o->argref = 0;
    if (str->len <= 20 && fri_string2ll(str->buf, str->len, &v)) {
        o->strenc = FRI_STRENC_INT;
        o->shared = v >= 0 && v < FRI_SHARED_INTEGERS && sharing_allowed(s);
    } else if (str->len <= EMBSTR_SIZE_LIMIT) {
        o->strenc = FRI_STRENC_EMBSTR;
    } else {
        o->strenc = FRI_STRENC_RAW;
        /* trimStringObjectIfNeeded: more than a tenth of the sds free is given back */
        sds_shape sh = sds_shape_of(o);
        if (sh.alloc - str->len > str->len / 10) o->sds = SDS_TRIMMED;
    }
}

/* ----- Big arguments: the query buffer as the value ---------------------------------------
 * processMultibulkBuffer hands an argument of PROTO_MBULK_BIG_ARG bytes or more that fills
 * the query buffer exactly to the command as the query buffer's own sds, whose capacity
 * came from the reads before (readQueryFromClient), and starts a new buffer
 * sdsnewlen(len + 2) for what follows.  The fake replays those reads for the command's
 * bytes as a client sends them: all at once, on a connection whose query buffer is new
 * (sdsempty).  A connection whose buffer grew for an earlier command, before
 * clientsCron shrank it again, can give Redis another capacity. */

#define PROTO_MBULK_BIG_ARG (1024 * 32) /* Redis's threshold for zero-copy arguments */
#define PROTO_IOBUF_LEN (1024 * 16)     /* readQueryFromClient's usual read */

/* The simulated query buffer: an sds's header type, allocation and capacity, and its
 * length and read position. */
typedef struct qbuf {
    int type;
    size_t size;
    size_t alloc;
    size_t len;
    size_t pos;
} qbuf;

/* _sdsMakeRoomFor on the query buffer. */
static void qbuf_make_room(qbuf *q, size_t addlen, int greedy)
{
    if (q->alloc - q->len >= addlen) return;
    size_t newlen = q->len + addlen;
    if (greedy) newlen = newlen < SDS_MAX_PREALLOC ? newlen * 2 : newlen + SDS_MAX_PREALLOC;
    int type = sds_req_type(newlen);
    if (type == SDS5) type = SDS8;
    q->type = type;
    q->size = fri_je_size(sds_hdr_size(type) + newlen + 1);
    q->alloc = q->size - sds_hdr_size(type) - 1;
    if (q->alloc > sds_type_max(type)) q->alloc = sds_type_max(type);
}

/* sdsnewlen(n) then sdsclear: the buffer after a zero-copy argument. */
static void qbuf_new(qbuf *q, size_t n)
{
    q->type = sds_req_type(n);
    if (q->type == SDS5 && n == 0) q->type = SDS8;
    q->size = fri_je_size(sds_hdr_size(q->type) + n + 1);
    q->alloc = q->size - sds_hdr_size(q->type) - 1;
    if (q->alloc > sds_type_max(q->type)) q->alloc = sds_type_max(q->type);
    q->len = q->pos = 0;
}

static size_t decimal_len(size_t v)
{
    size_t n = 1;
    while (v >= 10) v /= 10, n++;
    return n;
}

/* Replays the reads and parsing of c's command (a multibulk request) up to argument
 * argi.  Returns 1 with *q the buffer that became argument argi, or 0 when Redis
 * copied it out of the buffer (createStringObject). */
static int qbuf_arg(const fr_client *c, int argi, qbuf *q)
{
    size_t total = 3 + decimal_len((size_t)c->argc), got = 0, line;
    for (int i = 0; i < c->argc; i++)
        total += 5 + decimal_len(c->argv[i].len) + c->argv[i].len;
    *q = (qbuf){SDS8, 8, 4, 0, 0}; /* sdsempty() */
    int header = 0, i = 0;
    long long bulklen = -1;
    while (got < total) {
        /* readQueryFromClient */
        size_t readlen = PROTO_IOBUF_LEN;
        int big = header && bulklen >= PROTO_MBULK_BIG_ARG;
        if (big && (size_t)bulklen + 2 > q->len - q->pos)
            readlen = (size_t)bulklen + 2 - (q->len - q->pos);
        if (big || q->alloc < PROTO_IOBUF_LEN) {
            qbuf_make_room(q, readlen, 0);
        } else {
            qbuf_make_room(q, readlen, 1);
            readlen = q->alloc - q->len;
        }
        size_t n = readlen < total - got ? readlen : total - got;
        q->len += n;
        got += n;
        /* processMultibulkBuffer */
        line = 3 + decimal_len((size_t)c->argc);
        if (!header && q->len - q->pos >= line) {
            q->pos += line;
            header = 1;
        }
        while (header && i < c->argc) {
            size_t ll = c->argv[i].len;
            if (bulklen == -1) {
                line = 3 + decimal_len(ll);
                if (q->len - q->pos < line) break;
                q->pos += line;
                if (ll >= PROTO_MBULK_BIG_ARG && q->len - q->pos <= ll + 2) {
                    q->len -= q->pos; /* sdsrange */
                    q->pos = 0;
                    qbuf_make_room(q, ll + 2 - q->len, 0);
                }
                bulklen = (long long)ll;
            }
            if (q->len - q->pos < ll + 2) break;
            if (q->pos == 0 && ll >= PROTO_MBULK_BIG_ARG && q->len == ll + 2) {
                if (i == argi) return 1;
                qbuf_new(q, ll + 2);
            } else {
                if (i == argi) return 0;
                q->pos += ll + 2;
            }
            bulklen = -1;
            i++;
        }
        if (q->pos) { /* processInputBuffer's trim */
            q->len -= q->pos;
            q->pos = 0;
        }
    }
    return 0;
}

void fri_str_encode_arg(fr_client *c, fri_obj *o, const fri_arg *arg)
{
    fri_str_encode(c->srv, o);
    if (o->strenc != FRI_STRENC_RAW || arg->len < PROTO_MBULK_BIG_ARG) return;
    if (arg < c->argv || arg >= c->argv + c->argc) return;
    qbuf q;
    if (!qbuf_arg(c, (int)(arg - c->argv), &q)) return;
    /* the buffer's sds, its CRLF cut off, then trimStringObjectIfNeeded: sdsResize
     * reallocs in place keeping the header (a type 16 or 32 never changes for another) */
    o->sdstype = (uint8_t)(q.type + 1);
    if (q.alloc - arg->len > arg->len / 10) {
        o->sds = SDS_TRIMMED;
    } else {
        o->sds = (uint8_t)(SDS_CLASS + je_class_index(q.size));
    }
}

/* One key whose value the running EXEC stored from a command's argument. */
struct fri_exec_arg {
    int db;       /* its database */
    fri_str *key; /* its name */
};

static void exec_arg_note(fr_client *c, const fri_arg *key)
{
    fr_server *s = c->srv;
    if (s->exec_args_len == s->exec_args_cap) {
        size_t cap = s->exec_args_cap ? s->exec_args_cap * 2 : 8;
        struct fri_exec_arg *n = fri_realloc(s->exec_args, cap * sizeof(*n));
        if (!n) return; /* out of memory: the count reads 1, nothing worse */
        s->exec_args = n;
        s->exec_args_cap = cap;
    }
    fri_str *name = fri_str_new(key->ptr, key->len);
    if (!name) return;
    s->exec_args[s->exec_args_len++] = (struct fri_exec_arg){c->db->id, name};
}

void fri_str_stored_arg(fr_client *c, fri_obj *o, const fri_arg *key)
{
    if (!c->in_exec || o->shared) return;
    o->argref = 1;
    exec_arg_note(c, key);
}

void fri_exec_arg_moved(fr_client *c, fri_obj *o, const fri_arg *key)
{
    if (o->argref) exec_arg_note(c, key);
}

void fri_exec_args_release(fr_server *s)
{
    /* the keys' values, in every database (MOVE and SWAPDB carry them across) */
    for (size_t i = 0; i < s->exec_args_len; i++) {
        fri_str *key = s->exec_args[i].key;
        for (int db = 0; db < FRI_DBNUM; db++) {
            fri_dent *e = fri_dict_find(s->db[db].keys, key->buf, key->len);
            if (e) ((fri_obj *)e->v.ptr)->argref = 0;
        }
        fri_str_free(key);
    }
    s->exec_args_len = 0;
}

void fri_str_set_ll(fr_server *s, fri_obj *o, long long v, uint32_t old)
{
    /* INCR keeps a private int object when the result is no shared integer, else it
     * makes a new one (createStringObjectFromLongLongForValue) over the old */
    if (o->strenc == FRI_STRENC_INT && !o->shared && !o->argref &&
        (v < 0 || v >= FRI_SHARED_INTEGERS))
        return;
    o->argref = 0;
    o->strenc = FRI_STRENC_INT;
    o->sds = 0;
    o->sdstype = 0;
    o->shared = v >= 0 && v < FRI_SHARED_INTEGERS && sharing_allowed(s);
    fri_obj_overwrite_stamp(s, o, old);
}

void fri_str_new_ll(fr_server *s, fri_obj *o, long long v)
{
    o->strenc = FRI_STRENC_INT;
    o->sds = 0;
    o->sdstype = 0;
    o->shared = v >= 0 && v < FRI_SHARED_INTEGERS && sharing_allowed(s);
}

void fri_str_unshare(fr_server *s, fri_obj *o)
{
    if (o->strenc == FRI_STRENC_RAW && !o->shared && !o->argref) return;
    uint32_t old = fri_obj_lru_get(s, o);
    o->strenc = FRI_STRENC_RAW;
    o->shared = 0;
    o->argref = 0;
    o->sds = 0; /* createRawStringObject: an sds just big enough */
    o->sdstype = 0;
    fri_obj_overwrite_stamp(s, o, old);
}

void fri_str_grow(fri_obj *o, size_t newlen)
{
    sds_shape sh = sds_shape_of(o);
    if (sh.alloc >= newlen) {
        /* room enough: the allocation and the header stay as they are (an sds made for
         * "" has a type 8 header with 4 bytes of room, which a longer length would not
         * give it: the shape is pinned) */
        if (o->sds < SDS_CLASS) {
            o->sds = (uint8_t)(SDS_CLASS + je_class_index(sh.size));
            o->sdstype = (uint8_t)(sh.type + 1);
        }
        return;
    }
    /* sdsMakeRoomFor, greedy: double below 1 MB, else 1 MB more; never type 5 */
    size_t want = newlen < SDS_MAX_PREALLOC ? newlen * 2 : newlen + SDS_MAX_PREALLOC;
    int type = sds_req_type(want);
    if (type == SDS5) type = SDS8;
    size_t size = fri_je_size(sds_hdr_size(type) + want + 1);
    o->sds = (uint8_t)(SDS_CLASS + je_class_index(size));
    o->sdstype = (uint8_t)(type + 1);
}

/* The bytes Redis would count for a string value (objectComputeSize). */
static size_t string_memory(const fri_obj *o)
{
    const fri_str *str = o->ptr;
    switch (o->strenc) {
    case FRI_STRENC_INT: return ROBJ_SIZE;
    case FRI_STRENC_EMBSTR: return fri_je_size(ROBJ_SIZE + 3 + str->len + 1);
    default: return ROBJ_SIZE + sds_shape_of(o).size;
    }
}

/* ----- OBJECT ----------------------------------------------------------------------------- */

static const char *encoding_name(const fri_obj *o)
{
    switch (o->type) {
    case FRI_STRING:
        return o->strenc == FRI_STRENC_INT      ? "int"
               : o->strenc == FRI_STRENC_EMBSTR ? "embstr"
                                                : "raw";
    case FRI_LIST: return "quicklist";
    case FRI_HASH: return fri_hash_is_listpack(o->ptr) ? "listpack" : "hashtable";
    case FRI_SET: return fri_set_is_intset(o->ptr) ? "intset" : "hashtable";
    case FRI_ZSET: return fri_zset_is_listpack(o->ptr) ? "listpack" : "skiplist";
    default: return "stream";
    }
}

/* objectCommandLookupOrReply: the key without touching it, or nil replied. */
static fri_obj *object_lookup_or_reply(fr_client *c)
{
    /* LOOKUP_NONOTIFY too: no keymiss event */
    fri_obj *o = fri_db_lookup(c->srv, c->db, c->argv[2].ptr, c->argv[2].len, c->now_ms);
    if (!o) fri_reply_nil(c);
    return o;
}

/* OBJECT ENCODING key: how Redis 7.0 would hold the value. */
static void object_encoding_command(fr_client *c)
{
    fri_obj *o = object_lookup_or_reply(c);
    if (o) fri_reply_bulk_cstr(c, encoding_name(o));
}

/* OBJECT REFCOUNT key: 2147483647 for a shared integer, 2 for an argument the running
 * EXEC stored (its queue holds it too), else 1. */
static void object_refcount_command(fr_client *c)
{
    fri_obj *o = object_lookup_or_reply(c);
    if (!o) return;
    if (o->type != FRI_STRING) fri_reply_ll(c, 1);
    else fri_reply_ll(c, o->shared ? SHARED_REFCOUNT : o->argref ? 2 : 1);
}

/* OBJECT IDLETIME key: seconds since the last access, on the LRU clock (which wraps
 * every 194 days, as Redis's does); an error under an LFU policy. */
static void object_idletime_command(fr_client *c)
{
    fri_obj *o = object_lookup_or_reply(c);
    if (!o) return;
    if (lfu_policy(c->srv)) {
        fri_reply_error(c, "ERR An LFU maxmemory policy is selected, idle time not tracked. "
                           "Please note that when switching between policies at runtime "
                           "LRU and LFU data will take some time to adjust.");
        return;
    }
    fri_reply_ll(c, (long long)fri_obj_lru_idle(c->srv, o, c->now_ms));
}

unsigned long long fri_obj_lru_idle(fr_server *s, const fri_obj *o, int64_t now)
{
    uint32_t nowc = fri_lru_clock(now), lru = fri_obj_lru_get(s, o);
    return nowc >= lru ? nowc - lru : nowc + (LRU_CLOCK_MAX - lru);
}

/* OBJECT FREQ key: the LFU counter, decayed to now; an error unless an LFU policy. */
static void object_freq_command(fr_client *c)
{
    fri_obj *o = object_lookup_or_reply(c);
    if (!o) return;
    if (!lfu_policy(c->srv)) {
        fri_reply_error(c, "ERR An LFU maxmemory policy is not selected, access frequency "
                           "not tracked. Please note that when switching between policies at "
                           "runtime LRU and LFU data will take some time to adjust.");
        return;
    }
    fri_reply_ll(c, lfu_decr_and_return(c->srv, fri_obj_lru_get(c->srv, o), c->now_ms));
}

static void object_help_command(fr_client *c)
{
    static const char *const help[] = {
        "ENCODING <key>",
        "    Return the kind of internal representation used in order to store the value",
        "    associated with a <key>.",
        "FREQ <key>",
        "    Return the access frequency index of the <key>. The returned integer is",
        "    proportional to the logarithm of the recent access frequency of the key.",
        "IDLETIME <key>",
        "    Return the idle time of the <key>, that is the approximated number of",
        "    seconds elapsed since the last access to the key.",
        "REFCOUNT <key>",
        "    Return the number of references of the value associated with the specified",
        "    <key>.",
        NULL,
    };
    fri_reply_help(c, help);
}

/* ----- MEMORY ----------------------------------------------------------------------------- */

size_t fri_obj_memory(fr_server *s, const fri_obj *o, size_t samples)
{
    switch (o->type) {
    case FRI_STRING: return string_memory(o);
    case FRI_LIST: return fri_list_memory(o->ptr, &s->tun, samples);
    case FRI_HASH: return fri_hash_memory(o->ptr, samples);
    case FRI_SET: return fri_set_memory(o->ptr, samples);
    case FRI_ZSET: return fri_zset_memory(o->ptr, samples);
    default: return fri_stream_memory_usage(o->ptr, samples);
    }
}

/* MEMORY USAGE key [SAMPLES count]: the bytes Redis would count for the key, its value
 * and its dict entry.  Options are read before the key: SAMPLES needs a value, an
 * integer >= 0 (0: every element), anything else is a syntax error. */
static void memory_usage_command(fr_client *c)
{
    long long samples = 5;
    for (int j = 3; j < c->argc; j++) {
        if (fri_arg_is_cstr(&c->argv[j], "samples") && j + 1 < c->argc) {
            if (fri_get_ll_or_reply(c, &c->argv[j + 1], &samples, NULL) != 0) return;
            if (samples < 0) {
                fri_reply_error(c, FRI_ERR_SYNTAX);
                return;
            }
            if (samples == 0) samples = LLONG_MAX;
            j++;
        } else {
            fri_reply_error(c, FRI_ERR_SYNTAX);
            return;
        }
    }
    const fri_arg *key = &c->argv[2];
    fri_obj *o = fri_db_lookup(c->srv, c->db, key->ptr, key->len, c->now_ms); /* NONOTIFY */
    if (!o) {
        fri_reply_nil(c);
        return;
    }
    size_t usage = fri_obj_memory(c->srv, o, (size_t)samples);
    if (o->type == FRI_STREAM) {
        /* Redis sizes a stream with radix tree iterators, whose raxNext sets errno = 0
         * when it runs off the tree: the nodes' walk when it ends before `samples`
         * nodes, and the groups' walk whenever the stream has had a group (the
         * redis_errno mirror, fr_int.h) */
        const fri_stream *st = o->ptr;
        if (fri_stream_node_count(st) < (size_t)samples || st->cgroups) c->srv->redis_errno = 0;
    }
    usage += fri_sds_size(key->len) + DICT_ENTRY_SIZE;
    if (c->srv->cluster_enabled) usage += CLUSTER_ENTRY_META;
    fri_reply_ll(c, (long long)usage);
}

/* MEMORY PURGE: jemalloc's purge; nothing to do in-process. */
static void memory_purge_command(fr_client *c) { fri_reply_ok(c); }

/* MEMORY DOCTOR, STATS, MALLOC-STATS describe a redis-server process, which the fake is
 * not: refused after the arity check, as the cluster administration commands are. */
static void memory_other_command(fr_client *c)
{
    char upper[32];
    size_t n = c->argv[1].len < sizeof(upper) - 1 ? c->argv[1].len : sizeof(upper) - 1;
    for (size_t i = 0; i < n; i++) {
        char ch = c->argv[1].ptr[i];
        upper[i] = ch >= 'a' && ch <= 'z' ? (char)(ch - 32) : ch;
    }
    upper[n] = '\0';
    fri_reply_errorf(c, "ERR MEMORY %s is not emulated by the fake (only MEMORY USAGE, PURGE "
                        "and HELP are)", upper);
}

static void memory_help_command(fr_client *c)
{
    static const char *const help[] = {
        "DOCTOR",
        "    Return memory problems reports.",
        "MALLOC-STATS",
        "    Return internal statistics report from the memory allocator.",
        "PURGE",
        "    Attempt to purge dirty pages for reclamation by the allocator.",
        "STATS",
        "    Return information about the memory usage of the server.",
        "USAGE <key> [SAMPLES <count>]",
        "    Return memory in bytes used by <key> and its value. Nested values are",
        "    sampled up to <count> times (default: 5, 0 means sample all).",
        NULL,
    };
    fri_reply_help(c, help);
}

/* ----- The table -------------------------------------------------------------------------- */

#define R FRI_CMD_READONLY
#define LS (FRI_CMD_LOADING | FRI_CMD_STALE)

static const fri_command object_subcommands[] = {
    {"object|encoding", object_encoding_command, 3, R, "generic", 2, 2, 1, NULL, NULL},
    {"object|freq", object_freq_command, 3, R, "generic", 2, 2, 1, NULL, NULL},
    {"object|help", object_help_command, 2, LS, "generic", 0, 0, 0, NULL, NULL},
    {"object|idletime", object_idletime_command, 3, R, "generic", 2, 2, 1, NULL, NULL},
    {"object|refcount", object_refcount_command, 3, R, "generic", 2, 2, 1, NULL, NULL},
    {NULL, NULL, 0, 0, NULL, 0, 0, 0, NULL, NULL},
};

static const fri_command memory_subcommands[] = {
    {"memory|doctor", memory_other_command, 2, 0, "server", 0, 0, 0, NULL, NULL},
    {"memory|help", memory_help_command, 2, LS, "server", 0, 0, 0, NULL, NULL},
    {"memory|malloc-stats", memory_other_command, 2, 0, "server", 0, 0, 0, NULL, NULL},
    {"memory|purge", memory_purge_command, 2, 0, "server", 0, 0, 0, NULL, NULL},
    {"memory|stats", memory_other_command, 2, 0, "server", 0, 0, 0, NULL, NULL},
    {"memory|usage", memory_usage_command, -3, R, "server", 2, 2, 1, NULL, NULL},
    {NULL, NULL, 0, 0, NULL, 0, 0, 0, NULL, NULL},
};

/* Arity, flags and key positions as Redis 7.0's COMMAND INFO reports them. */
const fri_command fri_object_commands[] = {
    {"object", NULL, -2, FRI_CMD_CONTAINER, "generic", 0, 0, 0, NULL, object_subcommands},
    {"memory", NULL, -2, FRI_CMD_CONTAINER, "server", 0, 0, 0, NULL, memory_subcommands},
    {NULL, NULL, 0, 0, NULL, 0, 0, 0, NULL, NULL},
};

#undef R
#undef LS

/* DEBUG OBJECT's status text (debug.c): the value's address, refcount, encoding, the
 * length rdbSaveObject writes (DUMP's payload without its type byte and footer), the LRU
 * field and the idle seconds.  The key is found without expiring it (dictFind).  -1 when
 * there is no such key. */
int fr_debug_object(fr_server *s, int db, const char *key, size_t len, char *buf, size_t cap)
{
    if (db < 0 || db >= FRI_DBNUM) return -1;
    fri_dent *e = fri_dict_find(s->db[db].keys, key, len);
    if (!e) return -1;
    fri_obj *o = e->v.ptr;
    fri_buf b = {0};
    size_t slen = 0;
    if (fri_rdb_dump(s, o, &b) == 0 && b.len >= 11) slen = b.len - 11;
    fri_buf_free(&b);
    int refcount = o->type != FRI_STRING ? 1 : o->shared ? (int)SHARED_REFCOUNT : o->argref ? 2 : 1;
    int64_t now = fr_clock_now(s);
    uint32_t lru = fri_obj_lru_get(s, o);
    unsigned long long idle;
    if (lfu_policy(s)) {
        idle = 0; /* estimateObjectIdleTime reads the LFU bits as a clock: meaningless */
    } else {
        idle = fri_obj_lru_idle(s, o, now);
    }
    snprintf(buf, cap, "Value at:%p refcount:%d encoding:%s serializedlength:%zu lru:%d "
                       "lru_seconds_idle:%llu",
             (void *)o, refcount, encoding_name(o), slen, (int)lru, idle);
    return 0;
}
