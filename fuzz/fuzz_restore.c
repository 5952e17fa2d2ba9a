/* fuzz_restore.c -- RESTORE on arbitrary DUMP payloads, then the commands that read and
 * change what was restored (libFuzzer target).
 *
 * Input: one byte of options, then a DUMP payload without its last 8 bytes (the type
 * byte, the value, the 2-byte RDB version).  The target appends the CRC64 Redis would
 * compute, so a mutation reaches the decoder instead of stopping at the checksum: the
 * seeds (fuzz/corpus/fuzz_restore/, recorded from redis-server 7.0.15 by
 * tools/record_restore_seeds.py) are real payloads of every type and encoding, older
 * formats (ziplists, the first stream format) included.
 *
 * Options: bits 0-1 the RESTORE form (plain; REPLACE over a key of another type; ABSTTL
 * with a time in the future and IDLETIME; FREQ), bit 2 a second pass of the changing
 * commands.
 *
 * Checked:
 * - RESTORE answers +OK, "-ERR Bad data format" or "-ERR DUMP payload version or checksum
 *   are wrong" (a version above 7.0's) and nothing else; after an error the keyspace is
 *   what it was (fr_dump, before and after);
 * - after +OK, the value holds what every command relies on: every reply of the reading
 *   and changing commands of its type is a well-formed tree (fi_check_reply), a stream
 *   passes the consistency checks of fuzz_inspect.h (entries, metadata, every group's
 *   pending lists and consumers, XINFO and XPENDING agreeing) before and after the
 *   changes, and its DUMP restores again, to a payload that is a fixed point (DUMP of the
 *   restored copy is the same bytes);
 * - no crash, no sanitizer report, no leak.
 * On a failed check the target prints the check, the payload in hex and the commands run,
 * and aborts.
 */
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fakeredis.h"
#include "fuzz_inspect.h"
#include "rdb_int.h"
#include "wsi_alloc.h"
#include "wsi_buf.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define MAX_PAYLOAD (1u << 20) /* longer inputs are not payloads worth decoding here */
#define MAX_NAMES 4            /* groups, consumers and pending ids the stream commands use */

/* One input's run. */
typedef struct run {
    fr_server *srv;
    fr_client *c;            /* the client that restores and changes the value */
    fi_ctx fi;               /* the inspection client and the stream checks */
    const uint8_t *payload;  /* the payload as restored (checksum appended) */
    size_t plen;
    wsi_buf log;             /* the commands run, for the failure report */
} run;

/* A failed check: the check, the payload and the commands, then abort. */
static _Noreturn void run_failed(void *ud, const char *msg)
{
    run *r = ud;
    fprintf(stderr, "fuzz_restore: check failed: %s\npayload (%zu bytes): ", msg, r->plen);
    for (size_t i = 0; i < r->plen; i++)
        fprintf(stderr, "%02x", r->payload[i]);
    fprintf(stderr, "\nafter these commands:\n%s", r->log.p ? r->log.p : "");
    abort();
}

/* Logs one command, its arguments printed as far as they are text. */
static void log_command(run *r, int argc, const char *const *argv, const size_t *len)
{
    for (int i = 0; i < argc; i++) {
        if (i) wsi_buf_xadd(&r->log, " ", 1);
        int text = len[i] < 64;
        for (size_t k = 0; text && k < len[i]; k++)
            text = argv[i][k] > ' ' && argv[i][k] < 0x7f;
        if (text)
            wsi_buf_xadd(&r->log, argv[i], len[i]);
        else
            wsi_buf_xadd(&r->log, "<bytes>", 7);
    }
    wsi_buf_xadd(&r->log, "\n", 1);
}

/* Runs a command on the restoring client; its reply must be well formed. */
static const fr_reply *run_cmd(run *r, int argc, const char *const *argv, const size_t *len)
{
    log_command(r, argc, argv, len);
    const fr_reply *rep = fr_exec(r->c, argc, argv, len);
    if (rep == NULL) fi_fail(&r->fi, "%s blocked", argv[0]);
    fi_check_reply(&r->fi, rep, 0);
    return rep;
}

/* Runs a command given as one line of words (split at spaces; no word holds one). */
static const fr_reply *run_words(run *r, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static const fr_reply *run_words(run *r, const char *fmt, ...)
{
    char line[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(line, sizeof(line), fmt, ap);
    va_end(ap);
    const char *argv[16];
    size_t len[16];
    int argc = 0;
    for (char *p = line; *p && argc < 16;) {
        char *sp = strchr(p, ' ');
        argv[argc] = p;
        len[argc] = sp ? (size_t)(sp - p) : strlen(p);
        argc++;
        if (!sp) break;
        *sp = '\0';
        p = sp + 1;
    }
    return run_cmd(r, argc, argv, len);
}

/* The fake's canonical dump of the whole keyspace (to compare before and after). */
static char *keyspace(run *r, size_t *n)
{
    char *d = fr_dump(r->srv, n);
    if (!d) fi_fail(&r->fi, "fr_dump failed");
    return d;
}

/* ----- Per type: what reads and changes the value at k ----------------------------------- */

static const char *const STRING_CMDS[] = {
    "GET k", "STRLEN k", "GETRANGE k 0 -1", "GETRANGE k -3 -1", "BITCOUNT k", "BITPOS k 1",
    "PFCOUNT k", "OBJECT ENCODING k", NULL};
static const char *const STRING_CHANGES[] = {
    "APPEND k x", "SETRANGE k 3 zz", "INCR k", "PFADD k a b c", "SETBIT k 7 1", NULL};
static const char *const LIST_CMDS[] = {
    "LLEN k", "LRANGE k 0 -1", "LINDEX k 0", "LINDEX k -1", "LPOS k a", "LPOS k 1 RANK -1",
    "OBJECT ENCODING k", "SORT k ALPHA", NULL};
static const char *const LIST_CHANGES[] = {
    "LINSERT k BEFORE a b", "LSET k 0 x", "LSET k -1 y", "LREM k 0 a", "LTRIM k 1 -2",
    "LPOP k", "RPOP k 2", "RPUSH k a 1 zzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzz",
    "LMOVE k k2 LEFT RIGHT", NULL};
static const char *const SET_CMDS[] = {
    "SCARD k", "SMEMBERS k", "SISMEMBER k 1", "SMISMEMBER k a 1", "SRANDMEMBER k -5",
    "SRANDMEMBER k 3", "SSCAN k 0 COUNT 100", "SINTER k k", "SINTERCARD 1 k",
    "OBJECT ENCODING k", "SORT k", NULL};
static const char *const SET_CHANGES[] = {
    "SADD k 1 a 70000", "SREM k 1", "SPOP k", "SPOP k 3", "SMOVE k k2 a",
    "SUNIONSTORE k3 k k", "SDIFFSTORE k3 k k2", NULL};
static const char *const HASH_CMDS[] = {
    "HLEN k", "HGETALL k", "HGET k f", "HKEYS k", "HVALS k", "HSCAN k 0 COUNT 100",
    "HRANDFIELD k -5 WITHVALUES", "HRANDFIELD k 3", "HSTRLEN k f", "HEXISTS k a",
    "OBJECT ENCODING k", NULL};
static const char *const HASH_CHANGES[] = {
    "HSET k f v", "HINCRBY k n 1", "HINCRBYFLOAT k x 1.5", "HDEL k f a", "HSETNX k g w", NULL};
static const char *const ZSET_CMDS[] = {
    "ZCARD k", "ZRANGE k 0 -1 WITHSCORES", "ZRANGE k +inf -inf BYSCORE REV LIMIT 0 5",
    "ZRANGEBYLEX k - +", "ZRANK k a", "ZSCORE k a", "ZMSCORE k a b", "ZSCAN k 0 COUNT 100",
    "ZRANDMEMBER k -5 WITHSCORES", "ZCOUNT k -inf +inf", "ZLEXCOUNT k - +",
    "OBJECT ENCODING k", NULL};
static const char *const ZSET_CHANGES[] = {
    "ZADD k 1 a 2.5 b", "ZINCRBY k 1 a", "ZREM k a", "ZPOPMIN k", "ZPOPMAX k 2",
    "ZREMRANGEBYRANK k 0 0", "ZUNIONSTORE k3 2 k k", "ZRANGESTORE k3 k 0 -1", NULL};
static const char *const STREAM_CMDS[] = {
    "XLEN k", "XRANGE k - +", "XREVRANGE k + - COUNT 3", "XINFO STREAM k",
    "XINFO STREAM k FULL", "XINFO STREAM k FULL COUNT 1", "XINFO GROUPS k",
    "XREAD COUNT 10 STREAMS k 0", "OBJECT ENCODING k", NULL};
static const char *const STREAM_CHANGES[] = {
    "XADD k * f v", "XADD k MAXLEN 3 * g w", "XTRIM k MINID 0-2", "XSETID k 18446744073709551615-0",
    NULL};
static const char *const ANY_CMDS[] = {
    "TYPE k", "MEMORY USAGE k", "OBJECT FREQ k", "OBJECT IDLETIME k", "TTL k", "EXISTS k",
    "COPY k kc", "RENAME kc kr", "DUMP kr", "SCAN 0 COUNT 100", NULL};

static void run_table(run *r, const char *const *t)
{
    for (; *t; t++)
        run_words(r, "%s", *t);
}

/* The names in a flat XINFO-style array's field: up to MAX_NAMES bulk values of field
 * name in the entries of list (groups, consumers), copied into names. */
static size_t collect(const fr_reply *list, const char *name, char names[][128])
{
    size_t n = 0, nl = strlen(name);
    if (list->type != FR_REPLY_ARRAY) return 0;
    for (size_t i = 0; i < list->count && n < MAX_NAMES; i++) {
        const fr_reply *e = &list->elements[i];
        if (e->type != FR_REPLY_ARRAY) continue;
        for (size_t k = 0; k + 1 < e->count; k += 2) {
            const fr_reply *f = &e->elements[k], *v = &e->elements[k + 1];
            if (f->type == FR_REPLY_BULK && f->len == nl && memcmp(f->str, name, nl) == 0 &&
                v->type == FR_REPLY_BULK && v->len > 0 && v->len < 128 &&
                !memchr(v->str, ' ', v->len)) {
                memcpy(names[n], v->str, v->len);
                names[n][v->len] = '\0';
                n++;
            }
        }
    }
    return n;
}

/* The stream's groups: each one's consumers and pending entries read, claimed, acked,
 * its consumers deleted and its id moved (names without spaces only, which run_words
 * can pass; the payload's others are still read by XINFO). */
static void stream_groups(run *r)
{
    char groups[MAX_NAMES][128], cons[MAX_NAMES][128], ids[MAX_NAMES][128];
    size_t ng = collect(run_words(r, "XINFO GROUPS k"), "name", groups);
    for (size_t g = 0; g < ng; g++) {
        const char *gn = groups[g];
        size_t nc = collect(run_words(r, "XINFO CONSUMERS k %s", gn), "name", cons);
        run_words(r, "XPENDING k %s", gn);
        const fr_reply *ext = run_words(r, "XPENDING k %s - + 10", gn);
        size_t ni = 0;
        for (size_t i = 0; ext->type == FR_REPLY_ARRAY && i < ext->count && ni < MAX_NAMES; i++) {
            const fr_reply *e = &ext->elements[i];
            if (e->type == FR_REPLY_ARRAY && e->count == 4 && e->elements[0].type == FR_REPLY_BULK &&
                e->elements[0].len < 128) {
                memcpy(ids[ni], e->elements[0].str, e->elements[0].len);
                ids[ni][e->elements[0].len] = '\0';
                ni++;
            }
        }
        for (size_t c = 0; c < nc; c++)
            run_words(r, "XPENDING k %s IDLE 0 - + 10 %s", gn, cons[c]);
        run_words(r, "XREADGROUP GROUP %s fz COUNT 3 STREAMS k 0", gn);
        run_words(r, "XREADGROUP GROUP %s fz COUNT 3 STREAMS k >", gn);
        run_words(r, "XAUTOCLAIM k %s fz 0 0-0 COUNT 5", gn);
        for (size_t i = 0; i < ni; i++)
            run_words(r, "XCLAIM k %s %s 0 %s RETRYCOUNT 7", gn, i % 2 ? "fz" : "fy", ids[i]);
        if (ni > 0) run_words(r, "XACK k %s %s", gn, ids[0]);
        if (ni > 1) run_words(r, "XDEL k %s", ids[1]);
        run_words(r, "XAUTOCLAIM k %s fx 0 0-0 COUNT 5 JUSTID", gn);
        if (nc > 0) run_words(r, "XGROUP DELCONSUMER k %s %s", gn, cons[0]);
        run_words(r, "XGROUP SETID k %s $ ENTRIESREAD 1", gn);
    }
    run_words(r, "XGROUP CREATE k fzgroup 0");
    run_words(r, "XREADGROUP GROUP fzgroup c STREAMS k >");
    if (ng > 0) run_words(r, "XGROUP DESTROY k %s", groups[0]);
}

/* The checks of a restored stream, after the reads and again after the changes. */
static void check_restored_stream(run *r)
{
    r->fi.pel_bound = 0; /* a payload may hold pending ids past last-delivered (SETID can) */
    r->fi.restored = 1;
    fi_check_stream(&r->fi, 0, "k", 1);
}

/* DUMP of key restored into dest (REPLACE) must be accepted: what the fake holds it can
 * write in a form it reads.  The payload's bytes are returned (the caller frees them). */
static char *dump_restore(run *r, const char *key, const char *dest, size_t *n)
{
    const fr_reply *d = run_words(r, "DUMP %s", key);
    if (d->type == FR_REPLY_NIL) return NULL; /* emptied by the changes */
    if (d->type != FR_REPLY_BULK) fi_fail(&r->fi, "DUMP %s is not a bulk string", key);
    *n = d->len;
    char *p = wsi_xmalloc(*n);
    memcpy(p, d->str, *n);
    const char *argv[5] = {"RESTORE", dest, "0", p, "REPLACE"};
    size_t len[5] = {7, strlen(dest), 1, *n, 7};
    const fr_reply *ok = run_cmd(r, 5, argv, len);
    if (ok->type != FR_REPLY_STATUS)
        fi_fail(&r->fi, "the fake's DUMP of %s does not restore: %s", key,
                ok->type == FR_REPLY_ERROR ? ok->str : "(not an error)");
    return p;
}

/* k's DUMP restores (k2), and the copy's DUMP restores (k3) to the same bytes: one load
 * may change an encoding, as Redis's does (a hashtable set of integers loads as an
 * intset), but the second round is a fixed point. */
static void check_dump_fixed_point(run *r)
{
    size_t n1 = 0, n2 = 0;
    char *first = dump_restore(r, "k", "k2", &n1);
    if (!first) return;
    char *second = dump_restore(r, "k2", "k3", &n2);
    const fr_reply *third = run_words(r, "DUMP k3");
    if (third->type != FR_REPLY_BULK || third->len != n2 || memcmp(third->str, second, n2) != 0)
        fi_fail(&r->fi, "DUMP, RESTORE, DUMP, RESTORE, DUMP: the last two payloads differ");
    free(first);
    free(second);
}

/* Everything a restored value goes through: reads, checks, changes, checks. */
static void exercise(run *r, int second_pass)
{
    const fr_reply *t = run_words(r, "TYPE k");
    char type[16] = "";
    if (t->type == FR_REPLY_STATUS && t->len < sizeof(type)) memcpy(type, t->str, t->len);
    const char *const *reads = NULL, *const *changes = NULL;
    int stream = 0;
    if (!strcmp(type, "string")) reads = STRING_CMDS, changes = STRING_CHANGES;
    else if (!strcmp(type, "list")) reads = LIST_CMDS, changes = LIST_CHANGES;
    else if (!strcmp(type, "set")) reads = SET_CMDS, changes = SET_CHANGES;
    else if (!strcmp(type, "hash")) reads = HASH_CMDS, changes = HASH_CHANGES;
    else if (!strcmp(type, "zset")) reads = ZSET_CMDS, changes = ZSET_CHANGES;
    else if (!strcmp(type, "stream")) reads = STREAM_CMDS, changes = STREAM_CHANGES, stream = 1;
    else fi_fail(&r->fi, "RESTORE answered OK but TYPE k is '%s'", type);

    run_table(r, ANY_CMDS);
    run_table(r, reads);
    if (stream) check_restored_stream(r);
    check_dump_fixed_point(r);
    for (int pass = 0; pass <= second_pass; pass++) {
        run_table(r, changes);
        if (stream) stream_groups(r);
        run_table(r, reads);
        if (stream) check_restored_stream(r);
    }
    check_dump_fixed_point(r);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1 || size - 1 > MAX_PAYLOAD) return 0;
    unsigned opts = data[0];
    size_t body = size - 1;
    run r;
    memset(&r, 0, sizeof(r));
    uint8_t *payload = wsi_xmalloc(body + 8);
    memcpy(payload, data + 1, body);
    uint64_t crc = fri_crc64(0, payload, body);
    for (int i = 0; i < 8; i++) payload[body + i] = (uint8_t)(crc >> (8 * i));
    r.payload = payload;
    r.plen = body + 8;
    r.srv = fr_server_new(NULL);
    if (!r.srv) {
        free(payload);
        return 0;
    }
    r.c = fr_client_new(r.srv);
    r.fi.srv = r.srv;
    r.fi.insp = fr_client_new(r.srv);
    r.fi.fail = run_failed;
    r.fi.ud = &r;
    if (!r.c || !r.fi.insp) {
        fr_server_free(r.srv);
        free(payload);
        return 0;
    }

    /* The RESTORE form. */
    const char *argv[8] = {"RESTORE", "k", "0", (const char *)payload};
    size_t len[8] = {7, 1, 1, r.plen};
    int argc = 4;
    switch (opts & 3) {
    case 1: /* over an existing key of another type */
        run_words(&r, "SET k old");
        argv[argc] = "REPLACE", len[argc++] = 7;
        break;
    case 2: /* an absolute expiry in the future, and an idle time */
        argv[2] = "1800000000000", len[2] = 13;
        argv[argc] = "ABSTTL", len[argc++] = 6;
        argv[argc] = "IDLETIME", len[argc++] = 8;
        argv[argc] = "1000", len[argc++] = 4;
        break;
    case 3:
        argv[argc] = "FREQ", len[argc++] = 4;
        argv[argc] = "100", len[argc++] = 3;
        break;
    default:
        break;
    }
    size_t before_len = 0;
    char *before = keyspace(&r, &before_len);
    const fr_reply *rep = run_cmd(&r, argc, argv, len);
    if (rep->type == FR_REPLY_ERROR) {
        if (strcmp(rep->str, "ERR Bad data format") != 0 &&
            strcmp(rep->str, "ERR DUMP payload version or checksum are wrong") != 0)
            fi_fail(&r.fi, "RESTORE answered an unexpected error: %s", rep->str);
        size_t after_len = 0;
        char *after = keyspace(&r, &after_len);
        if (after_len != before_len || memcmp(before, after, after_len) != 0)
            fi_fail(&r.fi, "a refused RESTORE changed the keyspace");
        free(after);
    } else if (rep->type == FR_REPLY_STATUS) {
        exercise(&r, (opts >> 2) & 1);
    } else {
        fi_fail(&r.fi, "RESTORE answered neither OK nor an error");
    }
    free(before);
    fr_server_free(r.srv);
    wsi_buf_free(&r.log);
    free(payload);
    return 0;
}
