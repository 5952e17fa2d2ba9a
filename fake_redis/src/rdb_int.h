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

#endif /* RDB_INT_H */
