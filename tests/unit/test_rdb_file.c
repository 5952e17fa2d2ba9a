/* test_rdb_file.c -- RDB files (rdb_file.c, fr_rdb_save / fr_rdb_load): a whole keyspace
 * and the function libraries in Redis 7.0's file format.
 *
 * On the fake alone (test_rdb_file, label unit):
 * - the CRC64 table against the bitwise form;
 * - a keyspace with every type and encoding (streams with consumer groups, pending entries
 *   and consumers without any, TTLs, sixteen databases, binary keys, a library) saved and
 *   loaded into another fake: the same canonical dump, the same encodings, and the second
 *   save byte for byte the first;
 * - every truncation and every byte changed refused with Redis's log lines and the target
 *   unchanged; with the checksum skipped, changed bytes refused or loaded into a server
 *   that still answers (the sanitizer build runs this);
 * - what loading decides: expired keys dropped (kept for an AOF preamble), empty keys
 *   skipped, duplicates refused or merged, NOFLUSH, the LRU idle time and LFU counter,
 *   libraries, WATCH, the file calls.
 * With --real (test_rdb_file_real, label real-redis), against a throwaway redis-server: the
 * fake's file loaded by redis-server (DEBUG RELOAD NOSAVE) and redis-server's (SAVE) by the
 * fake, both read back key by key on both servers and compared; fake -> redis-server ->
 * fake gives the same canonical dump; corrupt files give the fake's refusal lines in the
 * log of a redis-server started on the same file.
 */
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "fake_fixture.h"
#include "fakeredis.h"
#include "keyspace_read.h"
#include "rdb_int.h"
#include "redis_harness.h"
#include "test_rng.h"

/* ----- The keyspace ---------------------------------------------------------------------- */

/* Runs the lines that build the test keyspace on a side (the same on the fake and on
 * redis-server): every type in each of its encodings, TTLs, streams with groups, pending
 * entries and consumers, other databases, a library. */
static void build_keyspace(kr_runner run, void *side)
{
    static const char *const lines[] = {
        "SET s:plain hello",
        "SET s:int 12345",
        "SET s:neg -2147483649",
        "SET s:empty \"\"",
        "SET \"\\x00bin\\xffkey\" \"\\x00\\x01\\x02\"",
        "SET s:ttl v PX 86400000",
        "RPUSH l:small a 1 b 2 -300 70000",
        "HSET h:small f v n 12 big 123456789012345",
        "HSET h:table f v long 0123456789012345678901234567890123456789012345678901234567890123456789",
        "SADD set:int 1 2 3 40000 -5",
        "SADD set:str a b c d e f 1 2 3",
        "ZADD z:small 1 a 2 b 3.75 c -inf d +inf e",
        "ZADD z:skip 1 a 2 b 0.1 c 4 0123456789012345678901234567890123456789012345678901234567890123456789",
        "XADD x:basic 1-1 a 1",
        "XADD x:basic 2-1 a 2 b 3",
        "XADD x:basic 3-5 a 4 b 5",
        "XDEL x:basic 1-1",
        "XGROUP CREATE x:basic g1 0",
        "XREADGROUP GROUP g1 c1 COUNT 1 STREAMS x:basic >",
        "XREADGROUP GROUP g1 c2 STREAMS x:basic >",
        "XGROUP CREATECONSUMER x:basic g1 c3",
        "XCLAIM x:basic g1 c3 0 2-1 TIME 1600000000000 RETRYCOUNT 9",
        "XGROUP CREATE x:basic g2 $ ENTRIESREAD 2",
        "XADD x:empty 5-1 f v",
        "XDEL x:empty 5-1",
        "XGROUP CREATE x:empty g 0",
        "XSETID x:empty 9-9 ENTRIESADDED 12 MAXDELETEDID 7-7",
        "PEXPIRE x:basic 7200000",
        "PEXPIRE l:small 3600000",
        "SELECT 3",
        "SET db3 three",
        "HSET h3 a 1",
        "SELECT 15",
        "ZADD z15 5 five",
        "SELECT 0",
        "FUNCTION LOAD \"#!lua name=lib1\\nredis.register_function('f1', function() return 1 end)\"",
        NULL,
    };
    for (size_t i = 0; lines[i]; i++) {
        char *r = kr_line(run, side, lines[i]);
        if (r[0] == '-') fail_msg("'%s' answered %s", lines[i], r);
        free(r);
    }
    /* lists cut into quicklist nodes, a big set, a stream over several nodes */
    char line[512];
    for (int i = 0; i < 300; i++) {
        snprintf(line, sizeof(line), "RPUSH l:big item-%d-%0*d", i, i % 40, 0);
        free(kr_line(run, side, line));
        snprintf(line, sizeof(line), "SADD set:big %d", i * 7);
        free(kr_line(run, side, line));
        snprintf(line, sizeof(line), "XADD x:long %d-0 f%d v%d common x", 1000 + i, i % 3, i);
        free(kr_line(run, side, line));
        if (i % 11 == 0) {
            snprintf(line, sizeof(line), "HSET h:big field%d %d", i, i);
            free(kr_line(run, side, line));
        }
    }
    for (int i = 0; i < 600; i++) {
        snprintf(line, sizeof(line), "SADD set:bigint %d", i);
        free(kr_line(run, side, line));
    }
    free(kr_line(run, side, "XGROUP CREATE x:long grp 0"));
    free(kr_line(run, side, "XREADGROUP GROUP grp alice COUNT 150 STREAMS x:long >"));
    free(kr_line(run, side, "XREADGROUP GROUP grp bob COUNT 20 STREAMS x:long >"));
    free(kr_line(run, side, "XACK x:long grp 1000-0 1001-0 1150-0"));
    free(kr_line(run, side, "XTRIM x:long MINID 1010-0"));
}

static int64_t wall_ms(void)
{
    struct timeval tv;
    gettimeofday(&tv, NULL);
    return (int64_t)tv.tv_sec * 1000 + tv.tv_usec / 1000;
}

static fr_server *new_fake(int64_t clock)
{
    fr_config cfg = fr_config_default();
    cfg.start_ms = clock;
    fr_server *s = fr_server_new(&cfg);
    assert_non_null(s);
    return s;
}

static char *save(fr_server *s, size_t *len)
{
    char *p = fr_rdb_save(s, NULL, len);
    assert_non_null(p);
    return p;
}

/* A fake at clock holding the test keyspace (*srv, freed by the caller), and its file. */
static char *built_file(int64_t clock, fr_server **srv, size_t *n)
{
    *srv = new_fake(clock);
    fr_client *c = fr_client_new(*srv);
    build_keyspace(kr_fake, c);
    return save(*srv, n);
}

static char *dump_of(fr_server *s)
{
    char *d = fr_dump(s, NULL);
    assert_non_null(d);
    return d;
}

/* ----- On the fake alone ----------------------------------------------------------------- */

static void test_crc_table(void **state)
{
    (void)state;
    assert_true(fri_crc64(0, "123456789", 9) == 0xe9c6d914c4b8d9caULL);
    uint64_t seed = 7;
    unsigned char buf[1024];
    for (int round = 0; round < 200; round++) {
        size_t n = (size_t)(splitmix64_next(&seed) % sizeof(buf));
        for (size_t i = 0; i < n; i++) buf[i] = (unsigned char)splitmix64_next(&seed);
        uint64_t start = splitmix64_next(&seed);
        assert_true(fri_crc64(start, buf, n) == fri_crc64_bitwise(start, buf, n));
    }
}

static void test_roundtrip(void **state)
{
    (void)state;
    fr_server *a = new_fake(FAKE_START_MS);
    fr_client *ca = fr_client_new(a);
    build_keyspace(kr_fake, ca);
    size_t n1;
    char *bytes = save(a, &n1);
    fr_server *b = new_fake(FAKE_START_MS);
    fr_client *cb = fr_client_new(b);
    fr_load_report rep;
    if (fr_rdb_load(b, bytes, n1, 0, &rep) != 0) fail_msg("refused: %s", rep.error);
    assert_int_equal(rep.consumed, n1);
    assert_true(rep.keys_loaded > 20);
    assert_int_equal(rep.keys_expired, 0);
    char *da = dump_of(a), *db = dump_of(b);
    assert_string_equal(da, db);
    char *ka = kr_keyspace(kr_fake, ca), *kb = kr_keyspace(kr_fake, cb);
    assert_string_equal(ka, kb);
    /* the library runs */
    assert_string_equal(fake_resp(fr_exec_line(cb, "FCALL f1 0")), ":1\r\n");
    /* saved again: the same bytes (same clock, same order, same encodings) */
    size_t n2;
    char *again = save(b, &n2);
    assert_int_equal(n1, n2);
    assert_memory_equal(bytes, again, n1);
    free(again);
    free(ka);
    free(kb);
    free(da);
    free(db);
    free(bytes);
    fr_server_free(a);
    fr_server_free(b);
}

/* A target server with a key and a library of its own, and its dump. */
static fr_server *target(char **dump_out)
{
    fr_server *t = new_fake(FAKE_START_MS);
    fr_client *c = fr_client_new(t);
    fake_ok_reply(fr_exec_line(c, "SET mine 1"));
    fr_exec_line(c, "FUNCTION LOAD \"#!lua name=tlib\\nredis.register_function('tf', function() return 2 end)\"");
    *dump_out = dump_of(t);
    return t;
}

static void assert_unchanged(fr_server *t, const char *before)
{
    char *now = dump_of(t);
    assert_string_equal(before, now);
    free(now);
    fr_client *c = fr_client_new(t);
    assert_string_equal(fake_resp(fr_exec_line(c, "FCALL tf 0")), ":2\r\n");
    fr_client_free(c);
}

static void test_truncated(void **state)
{
    (void)state;
    size_t n;
    fr_server *a;
    char *bytes = built_file(FAKE_START_MS, &a, &n);
    char *before;
    fr_server *t = target(&before);
    /* every prefix: refused, the target as it was (every 7th past the first 600 bytes:
     * the big values' middles are all alike) */
    for (size_t len = 0; len < n; len += len < 600 ? 1 : 7) {
        fr_load_report rep;
        assert_int_equal(fr_rdb_load(t, bytes, len, 0, &rep), -1);
        /* the reason is the field Redis's loader was reading (test_rdb_file_real compares
         * them with redis-server's log) */
        if (len >= 9 && !strstr(rep.error, "Internal error in RDB reading offset 0, function at rdb.c:"))
            fail_msg("prefix %zu: %s", len, rep.error);
        assert_unchanged(t, before);
    }
    fr_load_report rep;
    assert_int_equal(fr_rdb_load(t, bytes, 20, 0, &rep), -1);
    assert_string_equal(rep.error,
                        "Short read or OOM loading DB. Unrecoverable error, aborting now.\n"
                        "Internal error in RDB reading offset 0, function at rdb.c:3249 -> "
                        "Unexpected EOF reading RDB file");
    free(before);
    free(bytes);
    fr_server_free(a);
    fr_server_free(t);
}

static void test_changed_bytes(void **state)
{
    (void)state;
    size_t n;
    fr_server *a;
    char *bytes = built_file(FAKE_START_MS, &a, &n);
    char *before;
    fr_server *t = target(&before);
    uint64_t seed = 11;
    long refused = 0, loaded = 0;
    for (size_t i = 9; i < n; i += 1 + (size_t)(splitmix64_next(&seed) % 5)) {
        unsigned char old = (unsigned char)bytes[i];
        bytes[i] = (char)(old ^ (1u << (splitmix64_next(&seed) % 8)));
        fr_load_report rep;
        /* with the checksum: always refused */
        assert_int_equal(fr_rdb_load(t, bytes, n, 0, &rep), -1);
        assert_unchanged(t, before);
        /* without: refused and unchanged, or loaded into a server that still answers */
        fr_server *u = new_fake(FAKE_START_MS);
        fr_client *cu = fr_client_new(u);
        char *ubefore = dump_of(u);
        if (fr_rdb_load(u, bytes, n, FR_LOAD_SKIP_CHECKSUM, &rep) == 0) {
            loaded++;
            free(dump_of(u));
            free(kr_keyspace(kr_fake, cu));
            fr_exec_line(cu, "XADD x:basic * a b");
            fr_exec_line(cu, "XREADGROUP GROUP g1 c9 STREAMS x:basic >");
            fr_exec_line(cu, "XAUTOCLAIM x:long grp carol 0 0-0 COUNT 1000");
        } else {
            refused++;
            char *uafter = dump_of(u);
            assert_string_equal(ubefore, uafter);
            free(uafter);
        }
        free(ubefore);
        fr_server_free(u);
        bytes[i] = (char)old;
    }
    printf("changed bytes without the checksum: %ld refused, %ld loaded\n", refused, loaded);
    assert_true(refused > 0);
    free(before);
    free(bytes);
    fr_server_free(a);
    fr_server_free(t);
}

/* Hand-made files: the header, then body bytes, then EOF and the checksum. */
static size_t handmade(unsigned char *out, const void *body, size_t blen)
{
    memcpy(out, "REDIS0010", 9);
    memcpy(out + 9, body, blen);
    size_t n = 9 + blen;
    out[n++] = 0xFF;
    uint64_t crc = fri_crc64(0, out, n);
    for (int i = 0; i < 8; i++) out[n++] = (unsigned char)(crc >> (8 * i));
    return n;
}

static void test_refusal_messages(void **state)
{
    (void)state;
    char *before;
    fr_server *t = target(&before);
    fr_load_report rep;
    unsigned char f[256];
    assert_int_equal(fr_rdb_load(t, "REDIX0010\xff", 10, 0, &rep), -1);
    assert_string_equal(rep.error, "Wrong signature trying to load DB from file");
    assert_int_equal(fr_rdb_load(t, "REDIS0011\xff", 10, 0, &rep), -1);
    assert_string_equal(rep.error, "Can't handle RDB format version 11");
    /* an unknown value type (9 is a zipmap, which the fake does not read) */
    size_t n = handmade(f, "\xfe\x00\x42\x01k\x00", 6);
    assert_int_equal(fr_rdb_load(t, f, n, 0, &rep), -1);
    assert_string_equal(rep.error, "Internal error in RDB reading offset 0, function at "
                                   "rdb.c:2681 -> Unknown RDB encoding type 66");
    /* a wrong checksum */
    n = handmade(f, "\xfe\x00\x00\x01k\x01v", 7);
    f[n - 1] ^= 0x80;
    assert_int_equal(fr_rdb_load(t, f, n, 0, &rep), -1);
    assert_non_null(strstr(rep.error, "Wrong RDB checksum expected: ("));
    assert_non_null(strstr(rep.error, "). Aborting now.\nInternal error in RDB reading offset 0, "
                                      "function at rdb.c:3225 -> RDB CRC error"));
    /* ... accepted when skipped, or when the stored checksum is 0 (saved without one) */
    assert_int_equal(fr_rdb_load(t, f, n, FR_LOAD_SKIP_CHECKSUM, &rep), 0);
    memset(f + n - 8, 0, 8);
    assert_int_equal(fr_rdb_load(t, f, n, 0, &rep), 0);
    free(before);
    before = dump_of(t);
    /* a database past the sixteenth */
    n = handmade(f, "\xfe\x10", 2);
    assert_int_equal(fr_rdb_load(t, f, n, 0, &rep), -1);
    assert_non_null(strstr(rep.error, "configured to handle more than 16 databases"));
    /* a module's value */
    n = handmade(f, "\xfe\x00\x07\x01k\x81\x00\x00\x00\x00\x00\x00\x04\x00", 14);
    assert_int_equal(fr_rdb_load(t, f, n, 0, &rep), -1);
    assert_non_null(strstr(rep.error, "module data I can't load: no matching module type"));
    /* a key twice */
    n = handmade(f, "\xfe\x00\x00\x01k\x01v\x00\x01k\x01w", 12);
    assert_int_equal(fr_rdb_load(t, f, n, 0, &rep), -1);
    assert_string_equal(rep.error, "RDB has duplicated key 'k' in DB 0\n"
                                   "Duplicated key found in RDB file");
    char *still = dump_of(t);
    assert_string_equal(before, still);
    free(still);
    /* MERGE: the second wins */
    assert_int_equal(fr_rdb_load(t, f, n, FR_LOAD_MERGE, &rep), 0);
    fr_client *c = fr_client_new(t);
    assert_string_equal(fake_resp(fr_exec_line(c, "GET k")), "$1\r\nw\r\n");
    free(before);
    fr_server_free(t);
}

static void test_expired_and_empty(void **state)
{
    (void)state;
    fr_server *a = new_fake(FAKE_START_MS);
    fr_client *ca = fr_client_new(a);
    fake_ok_reply(fr_exec_line(ca, "SET soon v PX 1000"));
    fake_ok_reply(fr_exec_line(ca, "SET later v PX 5000"));
    fake_ok_reply(fr_exec_line(ca, "SET never v"));
    size_t n;
    char *bytes = save(a, &n);
    /* loaded 2 s later: "soon" expired while the server was down */
    fr_server *b = new_fake(FAKE_START_MS + 2000);
    fr_load_report rep;
    assert_int_equal(fr_rdb_load(b, bytes, n, 0, &rep), 0);
    assert_int_equal(rep.keys_loaded, 2);
    assert_int_equal(rep.keys_expired, 1);
    fr_client *cb = fr_client_new(b);
    assert_string_equal(fake_resp(fr_exec_line(cb, "PTTL later")), ":3000\r\n");
    assert_string_equal(fake_resp(fr_exec_line(cb, "EXISTS soon")), ":0\r\n");
    /* an AOF's preamble keeps them (the log after it decides) */
    assert_int_equal(fr_rdb_load(b, bytes, n, FR_LOAD_KEEP_EXPIRED, &rep), 0);
    assert_int_equal(rep.keys_loaded, 3);
    /* keys past their deadline are not saved */
    fr_clock_advance(a, 1500);
    free(bytes);
    bytes = save(a, &n);
    assert_int_equal(fr_rdb_load(b, bytes, n, 0, &rep), 0);
    assert_int_equal(rep.keys_loaded, 2);
    /* empty collections (old Redis bugs wrote them) are skipped */
    unsigned char f[64];
    n = handmade(f, "\xfe\x00\x02\x01" "e\x00\x00\x01k\x01v\x04\x01h\x00", 15);
    assert_int_equal(fr_rdb_load(b, f, n, 0, &rep), 0);
    assert_int_equal(rep.keys_loaded, 1);
    assert_string_equal(fake_resp(fr_exec_line(cb, "DBSIZE")), ":1\r\n");
    free(bytes);
    fr_server_free(a);
    fr_server_free(b);
}

static void test_noflush(void **state)
{
    (void)state;
    fr_server *t = new_fake(FAKE_START_MS);
    fr_client *c = fr_client_new(t);
    fake_ok_reply(fr_exec_line(c, "SET a 1"));
    unsigned char f[64];
    fr_load_report rep;
    size_t n = handmade(f, "\xfe\x00\x00\x01" "b\x01" "2", 7);
    assert_int_equal(fr_rdb_load(t, f, n, FR_LOAD_NOFLUSH, &rep), 0);
    assert_string_equal(fake_resp(fr_exec_line(c, "MGET a b")), "*2\r\n$1\r\n1\r\n$1\r\n2\r\n");
    n = handmade(f, "\xfe\x00\x00\x01" "a\x01" "3", 7);
    assert_int_equal(fr_rdb_load(t, f, n, FR_LOAD_NOFLUSH, &rep), -1);
    assert_string_equal(rep.error, "RDB has duplicated key 'a' in DB 0\n"
                                   "Duplicated key found in RDB file");
    assert_int_equal(fr_rdb_load(t, f, n, FR_LOAD_NOFLUSH | FR_LOAD_MERGE, &rep), 0);
    assert_string_equal(fake_resp(fr_exec_line(c, "MGET a b")), "*2\r\n$1\r\n3\r\n$1\r\n2\r\n");
    /* a plain load drops what was there */
    assert_int_equal(fr_rdb_load(t, f, n, 0, &rep), 0);
    assert_string_equal(fake_resp(fr_exec_line(c, "MGET a b")), "*2\r\n$1\r\n3\r\n$-1\r\n");
    fr_server_free(t);
}

static void test_lru_lfu(void **state)
{
    (void)state;
    fr_server *a = new_fake(FAKE_START_MS);
    fr_client *ca = fr_client_new(a);
    assert_int_equal(fr_server_set_param(a, "maxmemory-policy", "allkeys-lru"), 0);
    fake_ok_reply(fr_exec_line(ca, "SET k hello"));
    fr_clock_advance(a, 100000);
    size_t n;
    char *bytes = save(a, &n);
    fr_server *b = new_fake(FAKE_START_MS + 100000);
    fr_client *cb = fr_client_new(b);
    fr_load_report rep;
    /* the idle time is set from the file under any policy but an LFU one (objectSetLRUOrLFU) */
    assert_int_equal(fr_rdb_load(b, bytes, n, 0, &rep), 0);
    assert_string_equal(fake_resp(fr_exec_line(cb, "OBJECT IDLETIME k")), ":100\r\n");
    assert_int_equal(fr_server_set_param(b, "maxmemory-policy", "allkeys-lru"), 0);
    assert_int_equal(fr_rdb_load(b, bytes, n, 0, &rep), 0);
    assert_string_equal(fake_resp(fr_exec_line(cb, "OBJECT IDLETIME k")), ":100\r\n");
    free(bytes);
    /* LFU: the counter travels */
    assert_int_equal(fr_server_set_param(a, "maxmemory-policy", "allkeys-lfu"), 0);
    assert_int_equal(fr_server_set_param(b, "maxmemory-policy", "allkeys-lfu"), 0);
    fake_ok_reply(fr_exec_line(ca, "SET f x"));
    for (int i = 0; i < 200; i++) fr_exec_line(ca, "GET f");
    const fr_reply *freq = fr_exec_line(ca, "OBJECT FREQ f");
    long long counter = freq->integer;
    assert_true(counter > 5);
    bytes = save(a, &n);
    assert_int_equal(fr_rdb_load(b, bytes, n, 0, &rep), 0);
    assert_int_equal(fr_exec_line(cb, "OBJECT FREQ f")->integer, counter);
    free(bytes);
    fr_server_free(a);
    fr_server_free(b);
}

static void test_libraries_and_watch(void **state)
{
    (void)state;
    fr_server *a = new_fake(FAKE_START_MS);
    fr_client *ca = fr_client_new(a);
    fr_exec_line(ca, "FUNCTION LOAD \"#!lua name=mylib\\nredis.register_function('hi', function() return 'hi' end)\"");
    fake_ok_reply(fr_exec_line(ca, "SET w 1"));
    size_t n;
    char *bytes = save(a, &n);
    /* a reload touches WATCHers and replaces the libraries */
    fr_server *b = new_fake(FAKE_START_MS);
    fr_client *cb = fr_client_new(b);
    fake_ok_reply(fr_exec_line(cb, "SET w 0"));
    fr_exec_line(cb, "FUNCTION LOAD \"#!lua name=other\\nredis.register_function('o', function() return 'o' end)\"");
    fake_ok_reply(fr_exec_line(cb, "WATCH w"));
    fr_load_report rep;
    assert_int_equal(fr_rdb_load(b, bytes, n, 0, &rep), 0);
    fake_ok_reply(fr_exec_line(cb, "MULTI"));
    fr_exec_line(cb, "GET w");
    assert_string_equal(fake_resp(fr_exec_line(cb, "EXEC")), "*-1\r\n");
    assert_string_equal(fake_resp(fr_exec_line(cb, "FCALL hi 0")), "$2\r\nhi\r\n");
    assert_string_equal(fake_resp(fr_exec_line(cb, "FCALL o 0")),
                        "-ERR Function not found\r\n");
    /* NOFLUSH with the library already there: refused, nothing changed */
    char *before = dump_of(b);
    assert_int_equal(fr_rdb_load(b, bytes, n, FR_LOAD_NOFLUSH, &rep), -1);
    assert_non_null(strstr(rep.error, "Failed loading library, Library 'mylib' already exists"));
    char *after = dump_of(b);
    assert_string_equal(before, after);
    free(before);
    free(after);
    /* a library that does not load refuses the file */
    unsigned char f[256];
    const char *code = "#!lua name=bad\nerror('no')";
    unsigned char body[128];
    body[0] = 0xF5;
    body[1] = (unsigned char)strlen(code);
    memcpy(body + 2, code, strlen(code));
    size_t blen = 2 + strlen(code);
    memcpy(body + blen, "\xfe\x00\x00\x01z\x01z", 7);
    n = handmade(f, body, blen + 7);
    assert_int_equal(fr_rdb_load(b, f, n, 0, &rep), -1);
    assert_non_null(strstr(rep.error, "Failed loading library, "));
    assert_string_equal(fake_resp(fr_exec_line(cb, "EXISTS z")), ":0\r\n");
    assert_string_equal(fake_resp(fr_exec_line(cb, "FCALL hi 0")), "$2\r\nhi\r\n");
    free(bytes);
    fr_server_free(a);
    fr_server_free(b);
}

static char g_tmpdir[256];

static void test_file_calls(void **state)
{
    (void)state;
    fr_server *a = new_fake(FAKE_START_MS);
    fr_client *ca = fr_client_new(a);
    build_keyspace(kr_fake, ca);
    char path[400];
    snprintf(path, sizeof(path), "%s/dump.rdb", g_tmpdir);
    assert_int_equal(fr_rdb_save_file(a, path, NULL), 0);
    char temp[400];
    snprintf(temp, sizeof(temp), "%s/temp-%d.rdb", g_tmpdir, (int)getpid());
    assert_int_equal(access(temp, F_OK), -1); /* renamed away */
    fr_server *b = new_fake(FAKE_START_MS);
    fr_load_report rep;
    assert_int_equal(fr_rdb_load_file(b, path, 0, &rep), 0);
    char *da = dump_of(a), *db = dump_of(b);
    assert_string_equal(da, db);
    snprintf(path, sizeof(path), "%s/missing.rdb", g_tmpdir);
    assert_int_equal(fr_rdb_load_file(b, path, 0, &rep), -1);
    assert_string_equal(rep.error, "Fatal error loading the DB: No such file or directory. Exiting.");
    snprintf(path, sizeof(path), "%s/no/such/dir/dump.rdb", g_tmpdir);
    assert_int_equal(fr_rdb_save_file(a, path, NULL), -1);
    assert_int_equal(errno, ENOENT);
    free(da);
    free(db);
    fr_server_free(a);
    fr_server_free(b);
}

/* ----- Against a real server --------------------------------------------------------- */

static rh_server *g_redis;

static char *file_in_redis_dir(const char *name)
{
    static char path[512];
    snprintf(path, sizeof(path), "%s/%s", g_redis->dir, name);
    return path;
}

static void real_ok(rh_conn *rc, const char *line)
{
    char *r = kr_line(kr_real, rc, line);
    if (strcmp(r, "+OK\r\n")) fail_msg("'%s' answered %s", line, r);
    free(r);
}

static void test_fake_to_real(void **state)
{
    (void)state;
    fr_server *a = new_fake(wall_ms());
    fr_client *ca = fr_client_new(a);
    build_keyspace(kr_fake, ca);
    rh_conn *rc = rh_connect(g_redis);
    assert_non_null(rc);
    assert_int_equal(fr_rdb_save_file(a, file_in_redis_dir("dump.rdb"), NULL), 0);
    real_ok(rc, "DEBUG RELOAD NOSAVE");
    char *kf = kr_keyspace(kr_fake, ca), *kreal = kr_keyspace(kr_real, rc);
    if (strcmp(kf, kreal)) {
        fprintf(stderr, "fake:\n%s\nredis-server:\n%s\n", kf, kreal);
        fail_msg("redis-server read the fake's file differently");
    }
    free(kf);
    free(kreal);
    rh_close(rc);
    fr_server_free(a);
}

static void test_real_to_fake(void **state)
{
    (void)state;
    rh_conn *rc = rh_connect(g_redis);
    assert_non_null(rc);
    real_ok(rc, "FLUSHALL");
    real_ok(rc, "FUNCTION FLUSH");
    build_keyspace(kr_real, rc);
    real_ok(rc, "SAVE");
    fr_server *b = new_fake(wall_ms());
    fr_client *cb = fr_client_new(b);
    fr_load_report rep;
    if (fr_rdb_load_file(b, file_in_redis_dir("dump.rdb"), 0, &rep) != 0)
        fail_msg("the fake refused redis-server's file: %s", rep.error);
    char *kf = kr_keyspace(kr_fake, cb), *kreal = kr_keyspace(kr_real, rc);
    if (strcmp(kf, kreal)) {
        fprintf(stderr, "fake:\n%s\nredis-server:\n%s\n", kf, kreal);
        fail_msg("the fake read redis-server's file differently");
    }
    free(kf);
    free(kreal);
    rh_close(rc);
    fr_server_free(b);
}

static void test_round_trip_dump(void **state)
{
    (void)state;
    int64_t clock = wall_ms() + 86400000; /* a day ahead: nothing expires on the way */
    fr_server *a = new_fake(clock);
    fr_client *ca = fr_client_new(a);
    build_keyspace(kr_fake, ca);
    fr_clock_advance(a, 12345);
    rh_conn *rc = rh_connect(g_redis);
    assert_non_null(rc);
    assert_int_equal(fr_rdb_save_file(a, file_in_redis_dir("dump.rdb"), NULL), 0);
    real_ok(rc, "DEBUG RELOAD NOSAVE");
    real_ok(rc, "SAVE");
    fr_server *b = new_fake(fr_clock_now(a));
    fr_load_report rep;
    assert_int_equal(fr_rdb_load_file(b, file_in_redis_dir("dump.rdb"), 0, &rep), 0);
    char *da = dump_of(a), *db = dump_of(b);
    assert_string_equal(da, db);
    free(da);
    free(db);
    rh_close(rc);
    fr_server_free(a);
    fr_server_free(b);
}

/* The warning lines ("... # text") a redis-server started on file logged before it exited,
 * text only, '\n' between. */
static char *redis_refusal(const char *file)
{
    char dir[300];
    snprintf(dir, sizeof(dir), "%s/start", g_tmpdir);
    mkdir(dir, 0700);
    char dst[400], log[400];
    snprintf(dst, sizeof(dst), "%s/dump.rdb", dir);
    snprintf(log, sizeof(log), "%s/log", dir);
    size_t len;
    char *bytes = fri_read_file(file, &len);
    assert_non_null(bytes);
    int fd = open(dst, O_WRONLY | O_CREAT | O_TRUNC, 0600);
    assert_true(fd >= 0);
    assert_int_equal(write(fd, bytes, len), (ssize_t)len);
    close(fd);
    free(bytes);
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        const char *exe = getenv("WSIM_REDIS_SERVER") ? getenv("WSIM_REDIS_SERVER") : "redis-server";
        char sock[400];
        snprintf(sock, sizeof(sock), "%s/s.sock", dir);
        int null = open("/dev/null", O_WRONLY);
        if (null >= 0) { /* redis-check-rdb's report goes to stdout */
            dup2(null, 1);
            dup2(null, 2);
        }
        execlp(exe, exe, "--port", "0", "--unixsocket", sock, "--dir", dir, "--save", "",
               "--appendonly", "no", "--logfile", log, (char *)NULL);
        _exit(127);
    }
    int status = 0;
    for (int i = 0; i < 200; i++) {
        if (waitpid(pid, &status, WNOHANG) == pid) break;
        nanosleep(&(struct timespec){0, 25000000}, NULL);
        if (i == 199) {
            kill(pid, SIGKILL);
            waitpid(pid, &status, 0);
            fail_msg("redis-server did not stop on a corrupt file");
        }
    }
    size_t ln;
    char *text = fri_read_file(log, &ln);
    assert_non_null(text);
    rh_buf out = {0};
    for (char *line = strtok(text, "\n"); line; line = strtok(NULL, "\n")) {
        char *mark = strstr(line, " # ");
        if (mark && strstr(line, ":M ")) rh_buf_printf(&out, "%s\n", mark + 3);
    }
    free(text);
    unlink(log);
    return out.data ? out.data : strdup("");
}

/* Each of the fake's refusal lines must be among redis-server's, in order. */
static void assert_same_refusal(const char *what, const unsigned char *p, size_t n)
{
    char path[400];
    snprintf(path, sizeof(path), "%s/corrupt.rdb", g_tmpdir);
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
    assert_true(fd >= 0);
    assert_int_equal(write(fd, p, n), (ssize_t)n);
    close(fd);
    fr_server *f = new_fake(wall_ms());
    fr_load_report rep;
    assert_int_equal(fr_rdb_load(f, p, n, 0, &rep), -1);
    char *real = redis_refusal(path);
    const char *at = real;
    char *copy = strdup(rep.error);
    for (char *line = strtok(copy, "\n"); line; line = strtok(NULL, "\n")) {
        const char *found = strstr(at, line);
        if (!found) fail_msg("%s: the fake says '%s'; redis-server logged:\n%s", what, line, real);
        at = found + strlen(line);
    }
    free(copy);
    free(real);
    fr_server_free(f);
}

static void test_refusals_as_redis(void **state)
{
    (void)state;
    fr_server *a = new_fake(wall_ms());
    fr_client *ca = fr_client_new(a);
    build_keyspace(kr_fake, ca);
    size_t n;
    unsigned char *bytes = (unsigned char *)save(a, &n);
    /* cut at 48 places: the header, every type's value, a stream's nodes, groups, PEL and
     * consumers, the checksum */
    for (int k = 1; k <= 48; k++) {
        size_t cut = k == 48 ? n - 3 : n * (size_t)k / 48;
        char what[64];
        snprintf(what, sizeof(what), "truncated at %zu of %zu", cut, n);
        assert_same_refusal(what, bytes, cut);
    }
    bytes[n - 1] ^= 1;
    assert_same_refusal("a wrong checksum", bytes, n);
    bytes[n - 1] ^= 1;
    assert_same_refusal("a wrong signature", (const unsigned char *)"REDIX0010\xff", 10);
    assert_same_refusal("a later version", (const unsigned char *)"REDIS0011\xff", 10);
    unsigned char f[64];
    size_t fl = handmade(f, "\xfe\x00\x42\x01k\x00", 6);
    assert_same_refusal("an unknown type", f, fl);
    fl = handmade(f, "\xfe\x00\x00\x01k\x01v\x00\x01k\x01w", 12);
    (void)fl; /* redis-server panics on a duplicated key: its log has no such line */
    /* a list's listpack whose header says 12 bytes of 13, under a good checksum */
    fl = handmade(f, "\xfe\x00\x12\x01l\x01\x02\x0d\x0c\x00\x00\x00\x02\x00\x81" "a\x02\x81" "b\x02\xff", 21);
    assert_same_refusal("a bad listpack", f, fl);
    free(bytes);
    fr_server_free(a);
}

int main(int argc, char **argv)
{
    snprintf(g_tmpdir, sizeof(g_tmpdir), "/tmp/test_rdb_file.XXXXXX");
    if (!mkdtemp(g_tmpdir)) return 1;
    const struct CMUnitTest fake_only[] = {
        cmocka_unit_test(test_crc_table),
        cmocka_unit_test(test_roundtrip),
        cmocka_unit_test(test_truncated),
        cmocka_unit_test(test_changed_bytes),
        cmocka_unit_test(test_refusal_messages),
        cmocka_unit_test(test_expired_and_empty),
        cmocka_unit_test(test_noflush),
        cmocka_unit_test(test_lru_lfu),
        cmocka_unit_test(test_libraries_and_watch),
        cmocka_unit_test(test_file_calls),
    };
    const struct CMUnitTest real_only[] = {
        cmocka_unit_test(test_fake_to_real),
        cmocka_unit_test(test_real_to_fake),
        cmocka_unit_test(test_round_trip_dump),
        cmocka_unit_test(test_refusals_as_redis),
    };
    int rc;
    if (argc > 1 && strcmp(argv[1], "--real") == 0) {
        rh_options opt = {0};
        opt.quiet = 1;
        if (!(g_redis = rh_start(&opt))) return 1;
        rc = cmocka_run_group_tests_name("rdb files: redis-server and the fake", real_only, NULL,
                                         NULL);
        rh_stop(g_redis);
    } else {
        rc = cmocka_run_group_tests_name("rdb files on the fake", fake_only, NULL, NULL);
    }
    char cmd[300];
    snprintf(cmd, sizeof(cmd), "rm -rf '%s'", g_tmpdir);
    if (system(cmd) != 0) rc = rc ? rc : 1;
    return rc;
}
