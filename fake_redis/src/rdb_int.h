/* rdb_int.h -- DUMP payloads (rdb.c): Redis 7.0's serialization of one value, as DUMP
 * writes it and RESTORE reads it.
 *
 * A payload is one RDB object (a type byte, then the value in RDB encoding), then the RDB
 * version (FRI_RDB_VERSION) as 2 bytes little-endian, then the CRC64 (Jones polynomial,
 * reflected, as Redis's crc64.c computes it) of everything before it, 8 bytes
 * little-endian.  docs/fake_redis.md ("DUMP and RESTORE") says what is byte for byte
 * Redis's and why the rest is not.
 */
#ifndef RDB_INT_H
#define RDB_INT_H

#include <stddef.h>
#include <stdint.h>

#include "fr_int.h"

#define FRI_RDB_VERSION 10 /* Redis 7.0's RDB_VERSION */

/* The RDB object types this module reads (Redis's RDB_TYPE_*; zipmaps and modules are
 * refused); DUMP writes 0, 2, 4, 5, 11, 16, 17, 18 and 19, as 7.0 does. */
enum {
    FRI_RDB_TYPE_STRING = 0,
    FRI_RDB_TYPE_LIST = 1,
    FRI_RDB_TYPE_SET = 2,
    FRI_RDB_TYPE_ZSET = 3,
    FRI_RDB_TYPE_HASH = 4,
    FRI_RDB_TYPE_ZSET_2 = 5,
    FRI_RDB_TYPE_LIST_ZIPLIST = 10,     /* Redis 6 and older: ziplists */
    FRI_RDB_TYPE_SET_INTSET = 11,
    FRI_RDB_TYPE_ZSET_ZIPLIST = 12,
    FRI_RDB_TYPE_HASH_ZIPLIST = 13,
    FRI_RDB_TYPE_LIST_QUICKLIST = 14,   /* quicklist nodes of ziplists */
    FRI_RDB_TYPE_STREAM_LISTPACKS = 15, /* before 7.0: no first id, tombstone, counters */
    FRI_RDB_TYPE_HASH_LISTPACK = 16,
    FRI_RDB_TYPE_ZSET_LISTPACK = 17,
    FRI_RDB_TYPE_LIST_QUICKLIST_2 = 18,
    FRI_RDB_TYPE_STREAM_LISTPACKS_2 = 19,
};

/* Redis's crc64 (Jones, reflected, no final xor): crc64(0, "123456789", 9) is
 * 0xe9c6d914c4b8d9ca.  Pass the previous result as crc to continue. */
uint64_t fri_crc64(uint64_t crc, const void *p, size_t len);
/* The same one bit at a time, from the polynomial alone: what the table is checked against. */
uint64_t fri_crc64_bitwise(uint64_t crc, const void *p, size_t len);

/* LZF compression with the output Redis's lzf_compress (HLOG 16, VERY_FAST, pointers in
 * a fresh hash table) gives: the compressed length, or 0 when it does not fit in out_len
 * bytes (out must have room for out_len + 1).  in_len must be at least 3. */
size_t fri_lzf_compress(const void *in, size_t in_len, void *out, size_t out_len);
/* LZF decompression: the decompressed length, or 0 when the data is malformed or does
 * not fit in out_len bytes. */
size_t fri_lzf_decompress(const void *in, size_t in_len, void *out, size_t out_len);

/* rdbSaveRawString: appends a string as Redis stores it (an integer form for short numbers,
 * LZF when that saves 4 bytes or more on more than 20 bytes, else length and bytes).  0, or
 * -1 when out of memory. */
int fri_rdb_save_string(fri_buf *b, const void *p, size_t len);

/* rdbSaveLen: 6, 14, 32 or 64 bits, as Redis writes lengths. */
void fri_rdb_save_len(fri_buf *b, uint64_t len);

/* rdbSaveObjectType, the key (when key is not NULL: rdbSaveStringObject) and
 * rdbSaveObject: what an RDB file holds for a key (without a key, a DUMP payload without
 * its footer).  0, or -1 when out of memory (out is then as it was). */
int fri_rdb_save_value(fr_server *s, const fri_obj *o, const char *key, size_t key_len,
                       fri_buf *out);

/* Appends the DUMP payload of o (with the server's parameters: list-max-listpack-size
 * decides list nodes) to out.  0, or -1 when out of memory. */
int fri_rdb_dump(fr_server *s, const fri_obj *o, fri_buf *out);

/* verifyDumpPayload: 0 when the footer's version is at most FRI_RDB_VERSION and the
 * checksum matches, -1 otherwise (and for fewer than 10 bytes). */
int fri_rdb_verify(const unsigned char *p, size_t len);

/* rdbLoadObjectType + rdbLoadObject over a verified payload (footer included, as Redis
 * reads it): the new value (not stamped, no TTL, encodings decided as Redis's loading
 * decides them with s's parameters), or NULL for "Bad data format" (also when out of
 * memory). */
fri_obj *fri_rdb_load(fr_server *s, const unsigned char *p, size_t len);

/* A reader over RDB bytes: a DUMP payload or an RDB file (rdb_file.c). */
typedef struct fri_rdb_reader {
    const unsigned char *p; /* the bytes */
    size_t len, pos;        /* their length, the next byte to read */
    int err;                /* sticky: a read ran past the end or met a bad encoding */
    int lzf_errno;          /* the errno a failed lzf_decompress left (E2BIG, EINVAL), or 0 */
    int empty;              /* the last value was an empty collection: Redis's
                               RDB_LOAD_ERR_EMPTY_KEY, skipped when a file is loaded, "Bad
                               data format" for RESTORE */
    int short_read;         /* the error was a read past the end (or a count that cannot
                               fit in what is left): a truncated file */
    const char *why;        /* the error was one rdbGenericLoadStringObject reports itself
                               ("Invalid LZF compressed string", "Unknown RDB string
                               encoding type %llu" with why_arg), or NULL */
    unsigned long long why_arg; /* the number why's text names */
} fri_rdb_reader;

/* n raw bytes into dst (NULL: skipped): 0, or -1 with r->err set. */
int fri_rdb_read_bytes(fri_rdb_reader *r, void *dst, size_t n);
/* rdbLoadLen (no special string forms): the length, or UINT64_MAX with r->err set. */
uint64_t fri_rdb_read_len(fri_rdb_reader *r);
/* rdbGenericLoadStringObject: a new string (integer forms as digits, LZF decompressed), or
 * NULL with r->err set. */
fri_str *fri_rdb_read_string(fri_rdb_reader *r);
/* Whether type is an RDB value type this module reads (not an opcode, a zipmap, a module
 * type). */
int fri_rdb_is_value_type(int type);
/* rdbLoadObject for a type already read: the value (not stamped, no TTL), or NULL (then
 * r->empty says whether it was only empty). */
fri_obj *fri_rdb_read_value(fr_server *s, fri_rdb_reader *r, int type);

/* objectSetLRUOrLFU: under an LFU policy a frequency >= 0 becomes the LFU field (now's
 * minute); otherwise an idle time >= 0 (seconds) is taken from lru_clock. */
void fri_rdb_set_lru_or_lfu(fr_server *s, fri_obj *o, long long lfu_freq, long long lru_idle,
                            int64_t now_ms, uint32_t lru_clock);

/* ----- RDB files (rdb_file.c) ------------------------------------------------------- */

/* What the AUX fields of a saved file say. */
typedef struct fri_rdb_save_info {
    long long ctime;    /* "ctime": Unix seconds of the save */
    long long used_mem; /* "used-mem" */
    int aof_base;       /* "aof-base" 1: the file is the base of an AOF */
} fri_rdb_save_info;

/* Appends the whole keyspace (every live key of every database, with its TTL and, under an
 * LRU or LFU maxmemory-policy, its idle time or counter) and the function libraries as an
 * RDB file.  0, or -1 when out of memory (out is then as it was). */
int fri_rdb_file_save(fr_server *s, fri_buf *out, const fri_rdb_save_info *info);

/* How a file is loaded (rdbLoad's RDBFLAGS and DEBUG RELOAD's options). */
typedef struct fri_rdb_load_opts {
    int noflush;       /* keep the keys and libraries there (DEBUG RELOAD NOFLUSH) */
    int allow_dup;     /* a key or library met again replaces the first (MERGE); without
                          it the load is refused, where Redis panics */
    int keep_expired;  /* load keys past their deadline (an AOF's RDB preamble) */
    int skip_checksum; /* DEBUG SET-SKIP-CHECKSUM-VALIDATION 1 */
    int dry_run;       /* check everything, change nothing (an AOF checked before it loads) */
} fri_rdb_load_opts;

/* What a load found or why it refused. */
typedef struct fri_rdb_load_result {
    char error[1024];            /* a refusal: the lines Redis logs for it, '\n' between */
    long long keys_loaded;       /* rdb_last_load_keys_loaded */
    long long keys_expired;      /* rdb_last_load_keys_expired */
    long long empty_keys_skipped;/* empty collections (written by Redis's old bugs) */
    size_t consumed;             /* bytes of the file read, checksum included: where an
                                    AOF's commands start after its RDB preamble */
    int rdb_version;             /* the signature's version */
    int aof_base;                /* the AUX field aof-base */
    char redis_ver[32];          /* the AUX field redis-ver, "" when absent */
    long long ctime, used_mem;   /* the AUX fields of those names, 0 when absent */
} fri_rdb_load_result;

/* Loads an RDB file's bytes (a file longer than its checksum is read up to it): parsed and
 * checked whole before the server changes, so a refusal (-1, res->error said) leaves the
 * keyspace and the libraries as they were.  0 when loaded. */
int fri_rdb_file_load(fr_server *s, const unsigned char *p, size_t len,
                      const fri_rdb_load_opts *opts, fri_rdb_load_result *res);

#endif /* RDB_INT_H */
