/* rdb_file.c -- the RDB file: a whole keyspace and the function libraries in Redis 7.0's
 * format (version 10), as rdbSaveRio writes it and rdbLoadRioWithLoadingCtx reads it.
 *
 *   "REDIS0010"
 *   AUX redis-ver, redis-bits, ctime, used-mem, aof-base      (0xFA, two strings each)
 *   FUNCTION2 code ...                                        (0xF5, one per library)
 *   per non-empty database: SELECTDB n, RESIZEDB keys expires (0xFE, 0xFB)
 *     per key: [EXPIRETIME_MS t] [IDLE s | FREQ f] type key value
 *   EOF (0xFF), CRC64 of everything before it (8 bytes, little endian)
 *
 * Values are rdb.c's (the DUMP codec: byte for byte what redis-server writes wherever
 * Redis is deterministic).  Loading is all or nothing: the file is parsed whole into
 * staging tables (every value decoded and checked as RESTORE checks it), the functions
 * joined, and only then does the keyspace change; a refusal carries the lines Redis logs
 * for the same file.  docs/fake_redis.md ("RDB files") is the user's page. */
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "fr_int.h"
#include "rdb_int.h"
#include "script_int.h"

#define RDB_OPCODE_FUNCTION2 245
#define RDB_OPCODE_FUNCTION 246 /* 7.0-rc's library form */
#define RDB_OPCODE_MODULE_AUX 247
#define RDB_OPCODE_IDLE 248
#define RDB_OPCODE_FREQ 249
#define RDB_OPCODE_AUX 250
#define RDB_OPCODE_RESIZEDB 251
#define RDB_OPCODE_EXPIRETIME_MS 252
#define RDB_OPCODE_EXPIRETIME 253
#define RDB_OPCODE_SELECTDB 254
#define RDB_OPCODE_EOF 255
#define RDB_TYPE_MODULE 6
#define RDB_TYPE_MODULE_2 7
#define REDIS_VERSION "7.0.15"

/* The line numbers redis-server 7.0.15 (Debian's build, the one the tests run) names in
 * "Internal error in RDB reading offset N, function at rdb.c:LINE -> ...". */
#define LINE_EOF 3249          /* rdbLoadRioWithLoadingCtx's eoferr */
#define LINE_CRC 3225          /* RDB CRC error */
#define LINE_UNKNOWN_TYPE 2681 /* Unknown RDB encoding type */
#define LINE_STRING_ENC 529    /* Unknown RDB string encoding type */
#define LINE_MODULE 2636       /* module data I can't load */

/* ----- Writing ------------------------------------------------------------------------- */

static void put_byte(fri_buf *b, unsigned v)
{
    unsigned char c = (unsigned char)v;
    fri_buf_append(b, &c, 1);
}

static void put_le64(fri_buf *b, uint64_t v)
{
    unsigned char raw[8];
    for (int i = 0; i < 8; i++) raw[i] = (unsigned char)(v >> (8 * i));
    fri_buf_append(b, raw, 8);
}

/* rdbSaveAuxFieldStrStr / StrInt */
static void aux_str(fri_buf *b, const char *key, const char *val)
{
    put_byte(b, RDB_OPCODE_AUX);
    fri_rdb_save_string(b, key, strlen(key));
    fri_rdb_save_string(b, val, strlen(val));
}

static void aux_ll(fri_buf *b, const char *key, long long v)
{
    char digits[32];
    fri_ll2string(digits, sizeof(digits), v);
    aux_str(b, key, digits);
}

/* LRU_CLOCK differences wrap at 24 bits, as estimateObjectIdleTime unwraps them. */
static uint64_t idle_seconds(fr_server *s, const fri_obj *o, int64_t now)
{
    uint32_t clock = fri_lru_clock(now), lru = fri_obj_lru_get(s, o);
    return clock >= lru ? clock - lru : clock + ((1u << 24) - 1 - lru);
}

int fri_rdb_file_save(fr_server *s, fri_buf *out, const fri_rdb_save_info *info)
{
    size_t start = out->len;
    int64_t now = fr_clock_now(s);
    fri_buf_append(out, "REDIS0010", 9);
    aux_str(out, "redis-ver", REDIS_VERSION);
    aux_ll(out, "redis-bits", 64);
    aux_ll(out, "ctime", info->ctime);
    aux_ll(out, "used-mem", info->used_mem);
    aux_ll(out, "aof-base", info->aof_base ? 1 : 0);
    if (fri_functions_save(s, out) < 0) goto oom;
    int savelru = (s->tun.maxmemory_policy & FRI_MAXMEMORY_FLAG_LRU) != 0;
    int savelfu = (s->tun.maxmemory_policy & FRI_MAXMEMORY_FLAG_LFU) != 0;
    for (int d = 0; d < FRI_DBNUM; d++) {
        fri_dict *keys = s->db[d].keys;
        /* the fake's listings never show a key past its deadline (as if the active expiry
         * had run at once): neither does its file */
        uint64_t live = 0, expires = 0;
        for (size_t i = 0; i < fri_dict_slots(keys); i++) {
            fri_dent *e = fri_dict_slot(keys, i);
            if (!e || fri_obj_is_expired(e->v.ptr, now)) continue;
            live++;
            expires += ((fri_obj *)e->v.ptr)->expire_ms != -1;
        }
        if (!live) continue;
        put_byte(out, RDB_OPCODE_SELECTDB);
        fri_rdb_save_len(out, (uint64_t)d);
        put_byte(out, RDB_OPCODE_RESIZEDB);
        fri_rdb_save_len(out, live);
        fri_rdb_save_len(out, expires);
        for (size_t i = 0; i < fri_dict_slots(keys); i++) {
            fri_dent *e = fri_dict_slot(keys, i);
            if (!e) continue;
            const fri_obj *o = e->v.ptr;
            if (fri_obj_is_expired(o, now)) continue;
            if (o->expire_ms != -1) {
                put_byte(out, RDB_OPCODE_EXPIRETIME_MS);
                put_le64(out, (uint64_t)o->expire_ms);
            }
            if (savelru) {
                put_byte(out, RDB_OPCODE_IDLE);
                fri_rdb_save_len(out, idle_seconds(s, o, now));
            }
            if (savelfu) {
                put_byte(out, RDB_OPCODE_FREQ);
                put_byte(out, fri_obj_lfu_counter(s, o, now));
            }
            if (fri_rdb_save_value(s, o, e->key->buf, e->key->len, out) < 0) goto oom;
        }
    }
    put_byte(out, RDB_OPCODE_EOF);
    put_le64(out, fri_crc64(0, out->p + start, out->len - start));
    return 0;
oom:
    out->len = start;
    return -1;
}

/* ----- Loading ------------------------------------------------------------------------- */

/* A key waiting for the commit: its database, and the LRU/LFU data read before it. */
typedef struct staged_key {
    int db;             /* its database */
    fri_obj *o;         /* the value, owned by the staging table until the commit */
    long long lfu_freq; /* RDB_OPCODE_FREQ, -1 none */
    long long lru_idle; /* RDB_OPCODE_IDLE (seconds), -1 none */
} staged_key;

typedef struct loader {
    fr_server *srv;
    fri_rdb_reader r;         /* the file's bytes */
    const fri_rdb_load_opts *opts;
    fri_rdb_load_result *res;
    fri_dict *staged;         /* FRI_DBNUM tables: key -> staged_key index + 1 */
    staged_key *keys;         /* every staged key, in file order */
    size_t nkeys, capkeys;
    fri_buf functions;        /* the libraries, as FUNCTION RESTORE's body */
    int have_functions;       /* the file held at least one library */
} loader;

/* Appends one line of Redis's log for the refusal. */
static void say(loader *l, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void say(loader *l, const char *fmt, ...)
{
    size_t used = strlen(l->res->error);
    if (used >= sizeof(l->res->error) - 1) return;
    if (used) l->res->error[used++] = '\n';
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(l->res->error + used, sizeof(l->res->error) - used, fmt, ap);
    va_end(ap);
}

/* rdbReportError: the reader's offset as Redis reports it (loading_loaded_bytes, which
 * moves only every loading-process-events-interval-bytes: 0 for files under 2 MB). */
static void report(loader *l, int line, const char *reason)
{
    const size_t interval = 2 * 1024 * 1024;
    unsigned long long off = (unsigned long long)(l->r.pos / interval * interval);
    say(l, "Internal error in RDB reading offset %llu, function at rdb.c:%d -> %s", off, line,
        reason);
}

static int eof_error(loader *l)
{
    say(l, "Short read or OOM loading DB. Unrecoverable error, aborting now.");
    report(l, LINE_EOF, "Unexpected EOF reading RDB file");
    return -1;
}

/* moduleTypeNameByID: the nine characters packed in a module id's upper 54 bits. */
static void module_name(char name[10], uint64_t id)
{
    static const char cset[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
    id >>= 10;
    name[9] = '\0';
    for (int j = 8; j >= 0; j--) {
        name[j] = cset[id & 63];
        id >>= 6;
    }
}

/* Where redis-server (Debian's 7.0.15) reports a value of a type that does not decode, and
 * how: the integrity check of its encoding, or for the plain encodings the duplicate its
 * loader finds.  The fake's decoder checks more than Redis's shallow checks and cannot
 * always say which of Redis's checks would have fired first: this is the likeliest. */
static const struct value_check {
    int type, line;
    const char *text;
} value_checks[] = {
    {FRI_RDB_TYPE_SET, 1809, "Duplicate set members detected"},
    {FRI_RDB_TYPE_ZSET, 1894, "Duplicate zset fields detected"},
    {FRI_RDB_TYPE_ZSET_2, 1894, "Duplicate zset fields detected"},
    {FRI_RDB_TYPE_HASH, 2019, "Duplicate hash fields detected"},
    {FRI_RDB_TYPE_LIST_QUICKLIST_2, 2071, "Listpack integrity check failed."},
    {FRI_RDB_TYPE_LIST_QUICKLIST, 2081, "Ziplist integrity check failed."},
    {FRI_RDB_TYPE_LIST_ZIPLIST, 2189, "List ziplist integrity check failed."},
    {FRI_RDB_TYPE_SET_INTSET, 2214, "Intset integrity check failed."},
    {FRI_RDB_TYPE_ZSET_ZIPLIST, 2229, "Zset ziplist integrity check failed."},
    {FRI_RDB_TYPE_ZSET_LISTPACK, 2255, "Zset listpack integrity check failed."},
    {FRI_RDB_TYPE_HASH_ZIPLIST, 2275, "Hash ziplist integrity check failed."},
    {FRI_RDB_TYPE_HASH_LISTPACK, 2301, "Hash listpack integrity check failed."},
};

/* A refusal's reason: Redis's line and text. */
typedef struct refusal {
    int line;
    char text[192];
} refusal;

#define REFUSE(out, l, ...)                                                                   \
    do {                                                                                      \
        (out)->line = (l);                                                                    \
        snprintf((out)->text, sizeof((out)->text), __VA_ARGS__);                              \
        goto done;                                                                            \
    } while (0)

/* A set of byte strings met so far (node keys, group and consumer names, PEL ids): 1 when
 * p was already in it. */
static int seen_before(fri_dict *set, const void *p, size_t len)
{
    int created;
    fri_dict_add(set, p, len, &created);
    return !created;
}

/* Why redis-server refuses the stream value at `at` (rdbLoadObject's stream branch, field
 * by field: the read that runs short or the check that fails first).  Its listpacks are
 * checked as Redis's shallow check does (sizes, end byte, not empty); a stream the fake
 * refused for what is inside them is worded as that check's failure. */
static void stream_refusal(const fri_rdb_reader *file, int type, size_t at, refusal *out)
{
    fri_rdb_reader r = {file->p, file->len, at, 0, 0, 0, 0, NULL, 0};
    fri_dict *nodes = fri_dict_new(), *groups = fri_dict_new(), *pel = NULL, *names = NULL;
    fri_str *str = NULL, *lp = NULL;
    unsigned char raw[16];
    *out = (refusal){2362, "Stream listpack integrity check failed."};
    uint64_t n = fri_rdb_read_len(&r);
    if (r.err) REFUSE(out, 2327, "Stream listpacks len loading failed.");
    for (uint64_t k = 0; k < n; k++) {
        if (!(str = fri_rdb_read_string(&r))) {
            if (r.why) REFUSE(out, r.why[0] == 'I' ? 413 : 529, r.why, r.why_arg);
            REFUSE(out, 2338, "Stream master ID loading failed: invalid encoding or I/O error.");
        }
        if (str->len != 16) REFUSE(out, 2343, "Stream node key entry is not the size of a stream ID");
        if (!(lp = fri_rdb_read_string(&r))) {
            if (r.why) REFUSE(out, r.why[0] == 'I' ? 413 : 529, r.why, r.why_arg);
            REFUSE(out, 2355, "Stream listpacks loading failed.");
        }
        const unsigned char *b = (const unsigned char *)lp->buf;
        if (lp->len < 7 || ((uint32_t)b[0] | (uint32_t)b[1] << 8 | (uint32_t)b[2] << 16 |
                            (uint32_t)b[3] << 24) != lp->len || b[lp->len - 1] != 0xFF)
            REFUSE(out, 2362, "Stream listpack integrity check failed.");
        if (b[6] == 0xFF) REFUSE(out, 2374, "Empty listpack inside stream");
        if (seen_before(nodes, str->buf, 16)) REFUSE(out, 2386, "Listpack re-added with existing key");
        fri_str_free(str);
        fri_str_free(lp);
        str = lp = NULL;
    }
    uint64_t length = fri_rdb_read_len(&r);
    for (int i = 0; i < (type == FRI_RDB_TYPE_STREAM_LISTPACKS_2 ? 7 : 2); i++)
        fri_rdb_read_len(&r);
    if (r.err) REFUSE(out, 2424, "Stream object metadata loading failed.");
    if (length && n == 0) REFUSE(out, 2430, "Stream length inconsistent with rax entries");
    uint64_t ngroups = fri_rdb_read_len(&r);
    if (r.err) REFUSE(out, 2438, "Stream cgroup count loading failed.");
    for (uint64_t g = 0; g < ngroups; g++) {
        if (!(str = fri_rdb_read_string(&r)))
            REFUSE(out, 2449, "Error reading the consumer group name from Stream");
        fri_rdb_read_len(&r);
        fri_rdb_read_len(&r);
        if (r.err) REFUSE(out, 2458, "Stream cgroup ID loading failed.");
        if (type == FRI_RDB_TYPE_STREAM_LISTPACKS_2) {
            fri_rdb_read_len(&r);
            if (r.err) REFUSE(out, 2469, "Stream cgroup offset loading failed.");
        }
        if (seen_before(groups, str->buf, str->len))
            REFUSE(out, 2480, "Duplicated consumer group name %s", str->buf);
        fri_str_free(str);
        str = NULL;
        fri_dict_free(pel, NULL);
        fri_dict_free(names, NULL);
        pel = fri_dict_new();
        names = fri_dict_new();
        uint64_t npel = fri_rdb_read_len(&r);
        if (r.err) REFUSE(out, 2495, "Stream PEL size loading failed.");
        for (uint64_t i = 0; i < npel; i++) {
            if (fri_rdb_read_bytes(&r, raw, 16) < 0) REFUSE(out, 2502, "Stream PEL ID loading failed.");
            fri_rdb_read_bytes(&r, NULL, 8);
            fri_rdb_read_len(&r);
            if (r.err) REFUSE(out, 2510, "Stream PEL NACK loading failed.");
            if (seen_before(pel, raw, 16))
                REFUSE(out, 2516, "Duplicated global PEL entry loading stream consumer group");
        }
        uint64_t ncons = fri_rdb_read_len(&r);
        if (r.err) REFUSE(out, 2527, "Stream consumers num loading failed.");
        for (uint64_t c = 0; c < ncons; c++) {
            if (!(str = fri_rdb_read_string(&r)))
                REFUSE(out, 2534, "Error reading the consumer name from Stream group.");
            if (seen_before(names, str->buf, str->len))
                REFUSE(out, 2543, "Duplicate stream consumer detected.");
            fri_str_free(str);
            str = NULL;
            if (fri_rdb_read_bytes(&r, NULL, 8) < 0)
                REFUSE(out, 2549, "Stream short read reading seen time.");
            uint64_t owned = fri_rdb_read_len(&r);
            if (r.err) REFUSE(out, 2558, "Stream consumer PEL num loading failed.");
            for (uint64_t i = 0; i < owned; i++) {
                if (fri_rdb_read_bytes(&r, raw, 16) < 0)
                    REFUSE(out, 2566, "Stream short read reading PEL streamID.");
                fri_dent *e = fri_dict_find(pel, (const char *)raw, 16);
                if (!e) REFUSE(out, 2573, "Consumer entry not found in group global PEL");
                if (e->v.ll) REFUSE(out, 2583, "Stream consumer PEL entry already has a consumer assigned");
                e->v.ll = 1;
            }
        }
        /* a pending entry no consumer owns: Redis checks it only with sanitize-dump-payload */
        for (size_t i = 0; i < fri_dict_slots(pel); i++) {
            fri_dent *e = fri_dict_slot(pel, i);
            if (e && !e->v.ll) REFUSE(out, 2611, "Stream CG PEL entry without consumer");
        }
    }
done:
    fri_str_free(str);
    fri_str_free(lp);
    fri_dict_free(nodes, NULL);
    fri_dict_free(groups, NULL);
    fri_dict_free(pel, NULL);
    fri_dict_free(names, NULL);
}

/* The refusal of a value of this type that did not decode, said as Redis logs it. */
static void value_refusal(loader *l, int type, size_t at)
{
    refusal why = {0, ""};
    if (type == FRI_RDB_TYPE_STREAM_LISTPACKS || type == FRI_RDB_TYPE_STREAM_LISTPACKS_2) {
        stream_refusal(&l->r, type, at, &why);
    } else if (l->r.why) {
        why.line = l->r.why[0] == 'I' ? 413 : 529;
        snprintf(why.text, sizeof(why.text), l->r.why, l->r.why_arg);
    } else if (l->r.short_read) { /* a string or a length cut short: rdbLoadObject's NULL */
        eof_error(l);
        return;
    } else {
        for (size_t i = 0; i < sizeof(value_checks) / sizeof(value_checks[0]); i++)
            if (value_checks[i].type == type) {
                why.line = value_checks[i].line;
                snprintf(why.text, sizeof(why.text), "%s", value_checks[i].text);
            }
        if (!why.line) { /* a string value, or a plain list */
            eof_error(l);
            return;
        }
    }
    report(l, why.line, why.text);
}

static void free_obj_val(fri_val *v) { fri_obj_free(v->ptr); }

static void loader_free(loader *l)
{
    if (l->staged) fri_dict_free_n(l->staged, FRI_DBNUM, free_obj_val);
    fri_free(l->keys);
    fri_buf_free(&l->functions);
}

/* Stages one key (the key's bytes, its value): a key already staged is replaced when the
 * load allows duplicates (DEBUG RELOAD MERGE), else the load is refused as Redis panics
 * on it.  0, or -1. */
static int stage(loader *l, int db, fri_str *key, fri_obj *o, long long freq, long long idle)
{
    int created;
    fri_dent *e = fri_dict_add(fri_dict_nth(l->staged, (size_t)db), key->buf, key->len, &created);
    if (!created) {
        if (!l->opts->allow_dup) {
            say(l, "RDB has duplicated key '%.*s' in DB %d", (int)key->len, key->buf, db);
            say(l, "Duplicated key found in RDB file");
            fri_obj_free(o);
            return -1;
        }
        fri_obj *old = e->v.ptr;
        for (size_t i = 0; i < l->nkeys; i++)
            if (l->keys[i].o == old) l->keys[i].o = NULL; /* replaced: skipped at commit */
        fri_obj_free(old);
    }
    e->v.ptr = o;
    l->keys = fri_array_grow(l->keys, &l->capkeys, l->nkeys, sizeof(*l->keys), 64);
    l->keys[l->nkeys++] = (staged_key){db, o, freq, idle};
    return 0;
}

/* A library (RDB_OPCODE_FUNCTION2: its code; 7.0-rc's RDB_OPCODE_FUNCTION: name, engine,
 * description, code) kept as FUNCTION RESTORE reads it: the opcode and the raw bytes. */
static int read_function(loader *l, int type)
{
    size_t start = l->r.pos;
    int nstrings = type == RDB_OPCODE_FUNCTION2 ? 1 : 2;
    for (int i = 0; i < nstrings; i++) fri_str_free(fri_rdb_read_string(&l->r));
    if (type == RDB_OPCODE_FUNCTION) {
        uint64_t has_desc = fri_rdb_read_len(&l->r);
        if (!l->r.err && has_desc) fri_str_free(fri_rdb_read_string(&l->r));
        fri_str_free(fri_rdb_read_string(&l->r));
    }
    if (l->r.err) {
        say(l, "Failed loading library, %s", type == RDB_OPCODE_FUNCTION2
                                                 ? "Failed loading library payload"
                                                 : "Failed loading library blob");
        return eof_error(l);
    }
    put_byte(&l->functions, (unsigned)type);
    fri_buf_append(&l->functions, l->r.p + start, l->r.pos - start);
    l->have_functions = 1;
    return 0;
}

/* Parses the whole file into the loader.  0, or -1 with the refusal said. */
static int parse(loader *l)
{
    fri_rdb_reader *r = &l->r;
    fri_rdb_load_result *res = l->res;
    char magic[10];
    if (fri_rdb_read_bytes(r, magic, 9) < 0) return eof_error(l);
    magic[9] = '\0';
    if (memcmp(magic, "REDIS", 5) != 0) {
        say(l, "Wrong signature trying to load DB from file");
        return -1;
    }
    int rdbver = atoi(magic + 5);
    if (rdbver < 1 || rdbver > FRI_RDB_VERSION) {
        say(l, "Can't handle RDB format version %d", rdbver);
        return -1;
    }
    res->rdb_version = rdbver;
    int64_t now = fr_clock_now(l->srv);
    int db = 0;
    long long expiretime = -1, lfu_freq = -1, lru_idle = -1;
    for (;;) {
        unsigned char type;
        if (fri_rdb_read_bytes(r, &type, 1) < 0) return eof_error(l);
        if (type == RDB_OPCODE_EXPIRETIME) {
            unsigned char raw[4];
            if (fri_rdb_read_bytes(r, raw, 4) < 0) return eof_error(l);
            int32_t t = (int32_t)((uint32_t)raw[0] | (uint32_t)raw[1] << 8 |
                                  (uint32_t)raw[2] << 16 | (uint32_t)raw[3] << 24);
            expiretime = (long long)t * 1000;
            continue;
        }
        if (type == RDB_OPCODE_EXPIRETIME_MS) {
            unsigned char raw[8];
            uint64_t t = 0;
            if (fri_rdb_read_bytes(r, raw, 8) < 0) return eof_error(l);
            for (int i = 0; i < 8; i++) t |= (uint64_t)raw[i] << (8 * i);
            expiretime = (long long)t;
            continue;
        }
        if (type == RDB_OPCODE_FREQ) {
            unsigned char f;
            if (fri_rdb_read_bytes(r, &f, 1) < 0) return eof_error(l);
            lfu_freq = f;
            continue;
        }
        if (type == RDB_OPCODE_IDLE) {
            uint64_t idle = fri_rdb_read_len(r);
            if (r->err) return eof_error(l);
            lru_idle = (long long)(idle > (uint64_t)LLONG_MAX ? (uint64_t)LLONG_MAX : idle);
            continue;
        }
        if (type == RDB_OPCODE_EOF) break;
        if (type == RDB_OPCODE_SELECTDB) {
            uint64_t id = fri_rdb_read_len(r);
            if (r->err) return eof_error(l);
            if (id >= FRI_DBNUM) {
                say(l, "FATAL: Data file was created with a Redis server configured to handle "
                       "more than %d databases. Exiting\n", FRI_DBNUM);
                return -1;
            }
            db = (int)id;
            continue;
        }
        if (type == RDB_OPCODE_RESIZEDB) {
            fri_rdb_read_len(r);
            fri_rdb_read_len(r);
            if (r->err) return eof_error(l);
            continue;
        }
        if (type == RDB_OPCODE_AUX) {
            fri_str *k = fri_rdb_read_string(r);
            fri_str *v = k ? fri_rdb_read_string(r) : NULL;
            if (k && v) {
                if (!strcasecmp(k->buf, "redis-ver"))
                    snprintf(res->redis_ver, sizeof(res->redis_ver), "%s", v->buf);
                else if (!strcasecmp(k->buf, "ctime")) res->ctime = strtoll(v->buf, NULL, 10);
                else if (!strcasecmp(k->buf, "used-mem"))
                    res->used_mem = strtoll(v->buf, NULL, 10);
                else if (!strcasecmp(k->buf, "aof-base"))
                    res->aof_base = strtoll(v->buf, NULL, 10) != 0;
                /* the rest (repl-*, lua, aof-preamble, fields of later versions) are
                 * skipped, as the AUX contract says */
            }
            fri_str_free(k);
            fri_str_free(v);
            if (!k || !v) return eof_error(l);
            continue;
        }
        if (type == RDB_OPCODE_MODULE_AUX) {
            uint64_t id = fri_rdb_read_len(r);
            if (r->err) return eof_error(l);
            char name[10];
            module_name(name, id);
            say(l, "The RDB file contains AUX module data I can't load: no matching module "
                   "'%s'", name);
            return -1;
        }
        if (type == RDB_OPCODE_FUNCTION || type == RDB_OPCODE_FUNCTION2) {
            if (read_function(l, type) < 0) return -1;
            continue;
        }
        /* a key and its value */
        fri_str *key = fri_rdb_read_string(r);
        if (!key) return eof_error(l);
        if (type == RDB_TYPE_MODULE || type == RDB_TYPE_MODULE_2) {
            uint64_t id = fri_rdb_read_len(r);
            fri_str_free(key);
            if (r->err) return eof_error(l);
            char name[10], reason[160];
            module_name(name, id);
            snprintf(reason, sizeof(reason),
                     "The RDB file contains module data I can't load: no matching module type "
                     "'%s'", name);
            report(l, LINE_MODULE, reason);
            return -1;
        }
        if (!fri_rdb_is_value_type(type)) {
            fri_str_free(key);
            char reason[64];
            snprintf(reason, sizeof(reason), "Unknown RDB encoding type %d", type);
            report(l, LINE_UNKNOWN_TYPE, reason);
            return -1;
        }
        size_t at = r->pos;
        fri_obj *o = fri_rdb_read_value(l->srv, r, type);
        if (!o) {
            if (r->empty) { /* RDB_LOAD_ERR_EMPTY_KEY: skipped, not an error */
                if (res->empty_keys_skipped++ < 10)
                    say(l, "rdbLoadObject skipping empty key: %.*s", (int)key->len, key->buf);
                fri_str_free(key);
                expiretime = lfu_freq = lru_idle = -1;
                continue;
            }
            fri_str_free(key);
            value_refusal(l, type, at);
            return -1;
        }
        if (!l->opts->keep_expired && expiretime != -1 && expiretime < now) {
            fri_obj_free(o); /* a master drops what expired while it was down */
            res->keys_expired++;
        } else {
            o->expire_ms = expiretime;
            if (stage(l, db, key, o, lfu_freq, lru_idle) < 0) {
                fri_str_free(key);
                return -1;
            }
            res->keys_loaded++;
        }
        fri_str_free(key);
        expiretime = lfu_freq = lru_idle = -1;
    }
    if (rdbver >= 5) {
        size_t body = r->pos;
        unsigned char raw[8];
        if (fri_rdb_read_bytes(r, raw, 8) < 0) return eof_error(l);
        uint64_t stored = 0;
        for (int i = 0; i < 8; i++) stored |= (uint64_t)raw[i] << (8 * i);
        uint64_t expected = fri_crc64(0, r->p, body);
        if (stored != 0 && stored != expected && !l->opts->skip_checksum) {
            say(l, "Wrong RDB checksum expected: (%llx) but got (%llx). Aborting now.",
                (unsigned long long)expected, (unsigned long long)stored);
            report(l, LINE_CRC, "RDB CRC error");
            return -1;
        }
    }
    res->consumed = r->pos;
    return 0;
}

/* Makes the staged keyspace the server's: emptyData first (WATCHers touched, tracking
 * told, every key freed) unless the load keeps what is there, then every staged key in,
 * stamped as loaded now with the LRU/LFU data of the file. */
static void commit(loader *l)
{
    fr_server *s = l->srv;
    int64_t now = fr_clock_now(s);
    if (!l->opts->noflush) {
        fri_touch_all_watched(s, -1);
        fri_key_report_flushed(s, NULL, -1);
        for (int d = 0; d < FRI_DBNUM; d++) fri_dict_clear(s->db[d].keys, free_obj_val);
    }
    s->cmd_ms = now;
    s->cmd_lru = fri_lru_clock(now);
    for (int d = 0; d < FRI_DBNUM; d++) {
        fri_dict *staged = fri_dict_nth(l->staged, (size_t)d);
        fri_db *db = &s->db[d];
        for (size_t i = 0; i < fri_dict_slots(staged); i++) {
            fri_dent *e = fri_dict_slot(staged, i);
            if (!e) continue;
            fri_obj *o = e->v.ptr;
            int created;
            fri_dent *dst = fri_dict_add(db->keys, e->key->buf, e->key->len, &created);
            /* NOFLUSH MERGE: the file's value replaces the key's (dbSyncDelete and
             * dbAddRDBLoad: nobody is told, as in Redis) */
            if (!created) fri_obj_free(dst->v.ptr);
            fri_obj_stamp(s, o);
            dst->v.ptr = o;
            e->v.ptr = NULL; /* the server's now */
        }
    }
    for (size_t i = 0; i < l->nkeys; i++) {
        staged_key *k = &l->keys[i];
        if (k->o && (k->lfu_freq >= 0 || k->lru_idle >= 0))
            fri_rdb_set_lru_or_lfu(s, k->o, k->lfu_freq, k->lru_idle, now, s->cmd_lru);
    }
}

/* The file's libraries joined to the server's (policy as FUNCTION RESTORE's), or only
 * checked.  0, or -1 with the refusal said. */
static int functions_join(loader *l, int policy, unsigned flags)
{
    fri_buf err = {0};
    int rc = fri_functions_restore(l->srv, (const unsigned char *)l->functions.p,
                                   l->functions.len, policy, flags | FRI_FN_FROM_FILE, &err);
    if (rc < 0) {
        say(l, "Failed loading library, %.*s", (int)err.len, err.p ? err.p : "");
        eof_error(l);
    }
    fri_buf_free(&err);
    return rc;
}

int fri_rdb_file_load(fr_server *s, const unsigned char *p, size_t len,
                      const fri_rdb_load_opts *opts, fri_rdb_load_result *res)
{
    memset(res, 0, sizeof(*res));
    loader l = {s, {p, len, 0, 0, 0, 0, 0, NULL, 0}, opts, res, NULL, NULL, 0, 0, {0}, 0};
    l.staged = fri_dict_new_n(FRI_DBNUM);
    if (!l.staged) {
        say(&l, "Short read or OOM loading DB. Unrecoverable error, aborting now.");
        return -1;
    }
    if (parse(&l) < 0) goto refused;
    /* the libraries come first in a file: they join first (checked before anything
     * changes: a library that does not load, or one already there); emptyData clears them
     * with the keys */
    int had_libraries = s->scripting && s->scripting->libraries &&
                        fri_dict_size(s->scripting->libraries) > 0;
    int join = l.have_functions || (!opts->noflush && had_libraries);
    int policy = opts->noflush ? (opts->allow_dup ? 1 : 0) : 2;
    if (join && functions_join(&l, policy, FRI_FN_CHECK_ONLY) < 0) goto refused;
    if (opts->dry_run) {
        loader_free(&l);
        return 0;
    }
    /* a NOFLUSH load without MERGE meets the server's keys as Redis's dbAddRDBLoad does:
     * a key already there is the same panic */
    if (opts->noflush && !opts->allow_dup) {
        for (int d = 0; d < FRI_DBNUM; d++) {
            fri_dict *staged = fri_dict_nth(l.staged, (size_t)d);
            for (size_t i = 0; i < fri_dict_slots(staged); i++) {
                fri_dent *e = fri_dict_slot(staged, i);
                if (!e || !fri_dict_find(s->db[d].keys, e->key->buf, e->key->len)) continue;
                say(&l, "RDB has duplicated key '%.*s' in DB %d", (int)e->key->len, e->key->buf,
                    d);
                say(&l, "Duplicated key found in RDB file");
                goto refused;
            }
        }
    }
    if (join && functions_join(&l, policy, 0) < 0) goto refused;
    commit(&l);
    loader_free(&l);
    return 0;
refused:
    res->keys_loaded = res->keys_expired = 0;
    loader_free(&l);
    return -1;
}

/* ----- The public calls ---------------------------------------------------------------- */

uint64_t fr_server_dirty(const fr_server *s) { return s->dirty; }

static fri_rdb_save_info save_info(fr_server *s, const fr_rdb_options *opts)
{
    fri_rdb_save_info info = {fr_clock_now(s) / 1000, 0, 0};
    if (opts) {
        if (opts->ctime >= 0) info.ctime = opts->ctime;
        info.used_mem = opts->used_mem;
        info.aof_base = opts->aof_base;
    }
    return info;
}

char *fr_rdb_save(fr_server *s, const fr_rdb_options *opts, size_t *len)
{
    fr_server *guard = fri_mem_enter(s, "fr_rdb_save");
    fri_buf b = {0};
    fri_rdb_save_info info = save_info(s, opts);
    char *out = NULL;
    if (fri_rdb_file_save(s, &b, &info) == 0) {
        out = fri_malloc_plain(b.len); /* the caller free()s it: never the reserve */
        if (out) {
            memcpy(out, b.p, b.len);
            if (len) *len = b.len;
        }
    }
    fri_buf_free(&b);
    fri_mem_leave(guard);
    return out;
}

int fr_rdb_save_file(fr_server *s, const char *path, const fr_rdb_options *opts)
{
    size_t len = 0;
    char *bytes = fr_rdb_save(s, opts, &len);
    if (!bytes) {
        errno = ENOMEM;
        return -1;
    }
    int rc = fri_write_file_atomic(path, "rdb", bytes, len);
    int saved = errno;
    free(bytes);
    errno = saved;
    return rc;
}

static unsigned opts_flags_ok(unsigned flags)
{
    return flags & ~(FR_LOAD_NOFLUSH | FR_LOAD_MERGE | FR_LOAD_KEEP_EXPIRED | FR_LOAD_SKIP_CHECKSUM);
}

int fr_rdb_load(fr_server *s, const void *data, size_t len, unsigned flags,
                fr_load_report *report)
{
    fri_rdb_load_opts opts = {(flags & FR_LOAD_NOFLUSH) != 0, (flags & FR_LOAD_MERGE) != 0,
                              (flags & FR_LOAD_KEEP_EXPIRED) != 0,
                              (flags & FR_LOAD_SKIP_CHECKSUM) != 0, 0};
    fr_server *guard = fri_mem_enter(s, "fr_rdb_load");
    fri_rdb_load_result *res = fri_malloc(sizeof(*res));
    int rc = -1;
    if (report) memset(report, 0, sizeof(*report));
    if (res && !opts_flags_ok(flags)) {
        rc = fri_rdb_file_load(s, data, len, &opts, res);
        if (report) {
            memcpy(report->error, res->error, sizeof(report->error));
            report->keys_loaded = res->keys_loaded;
            report->keys_expired = res->keys_expired;
            report->consumed = res->consumed;
        }
    } else if (report) {
        snprintf(report->error, sizeof(report->error), "%s",
                 res ? "unknown load flags" : "Short read or OOM loading DB.");
    }
    fri_free(res);
    fri_mem_leave(guard);
    return rc;
}

int fr_rdb_load_file(fr_server *s, const char *path, unsigned flags, fr_load_report *report)
{
    size_t len;
    char *bytes = fri_read_file(path, &len);
    if (!bytes) {
        if (report) {
            memset(report, 0, sizeof(*report));
            snprintf(report->error, sizeof(report->error),
                     "Fatal error loading the DB: %s. Exiting.", strerror(errno));
        }
        return -1;
    }
    int rc = fr_rdb_load(s, bytes, len, flags, report);
    free(bytes);
    return rc;
}
