/* fuzz_rdb.c -- RDB files (fr_rdb_load, fake_redis/src/rdb_file.c) on arbitrary bytes
 * (libFuzzer target).
 *
 * Input: one byte of settings, then the file.  Settings bit 0: check the CRC64 (random
 * bytes almost never carry a right one, so most inputs skip it and reach the decoders);
 * bit 1: load with NOFLUSH; bit 2: with MERGE; bit 3: keep expired keys.
 *
 * The file is loaded into a server that already holds a few keys and a library.
 * Checked:
 * - a refusal leaves the server as it was (the same canonical dump) and says why;
 * - a load leaves a server that answers: its dump, and commands that walk every structure
 *   a file can build (every key read back whole, streams' groups, pending entries and
 *   consumers inspected, claimed and acknowledged; AddressSanitizer and UBSan watch);
 * - what loaded saves and loads again into a fresh server to the same dump.
 */
#define _POSIX_C_SOURCE 200809L /* strndup */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fakeredis.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void fail(const char *what, const char *detail)
{
    fprintf(stderr, "fuzz_rdb: %s%s%s\n", what, detail ? ": " : "", detail ? detail : "");
    abort();
}

#define CLOCK_MS 1700000000000LL

static fr_server *with_keys(void)
{
    fr_config cfg = fr_config_default();
    cfg.start_ms = CLOCK_MS;
    fr_server *s = fr_server_new(&cfg);
    if (!s) fail("out of memory", NULL);
    fr_client *c = fr_client_new(s);
    fr_exec_line(c, "SET k v");
    fr_exec_line(c, "XADD x 1-1 f v");
    fr_exec_line(c, "XGROUP CREATE x g 0");
    fr_exec_line(c, "FUNCTION LOAD \"#!lua name=lib\\nredis.register_function('f', function() return 1 end)\"");
    fr_client_free(c);
    return s;
}

/* Reads every key back and works the streams (the commands' own replies do not matter:
 * only that the server survives them). */
static void exercise(fr_server *s)
{
    fr_client *c = fr_client_new(s);
    if (!c) fail("out of memory", NULL);
    for (int db = 0; db < 16; db++) {
        char sel[16];
        snprintf(sel, sizeof(sel), "SELECT %d", db);
        fr_exec_line(c, sel);
        const fr_reply *keys = fr_exec_line(c, "KEYS *");
        if (!keys || keys->type != FR_REPLY_ARRAY) continue;
        size_t n = keys->count < 64 ? keys->count : 64;
        char **names = calloc(n + 1, sizeof(*names));
        size_t *lens = calloc(n + 1, sizeof(*lens));
        if (!names || !lens) fail("out of memory", NULL);
        for (size_t i = 0; i < n; i++) {
            lens[i] = keys->elements[i].len;
            names[i] = malloc(lens[i] + 1);
            if (!names[i]) fail("out of memory", NULL);
            memcpy(names[i], keys->elements[i].str, lens[i]);
        }
        static const char *const reads[][6] = {
            {"TYPE", NULL},          {"OBJECT", "ENCODING", NULL}, {"DUMP", NULL},
            {"LRANGE", "0", "-1"},   {"HGETALL", NULL},            {"SMEMBERS", NULL},
            {"ZRANGE", "0", "-1"},   {"XINFO", "STREAM", "FULL"},  {"XINFO", "GROUPS", NULL},
            {"XRANGE", "-", "+"},    {"XREVRANGE", "+", "-"},      {"MEMORY", "USAGE", NULL},
        };
        for (size_t i = 0; i < n; i++) {
            for (size_t r = 0; r < sizeof(reads) / sizeof(reads[0]); r++) {
                /* the command's words, the key after its first word (or its subcommand) */
                const char *argv[6];
                size_t alen[6];
                int argc = 0, key_after = !strcmp(reads[r][0], "OBJECT") ||
                                          !strcmp(reads[r][0], "MEMORY") ||
                                          !strcmp(reads[r][0], "XINFO");
                argv[argc] = reads[r][0], alen[argc] = strlen(reads[r][0]), argc++;
                if (key_after) argv[argc] = reads[r][1], alen[argc] = strlen(reads[r][1]), argc++;
                argv[argc] = names[i], alen[argc] = lens[i], argc++;
                for (int w = key_after ? 2 : 1; w < 3 && reads[r][w]; w++)
                    argv[argc] = reads[r][w], alen[argc] = strlen(reads[r][w]), argc++;
                size_t out;
                fr_exec_resp(c, argc, argv, alen, &out);
            }
            /* a stream's groups: read new entries, claim everything idle, acknowledge */
            const char *groups[] = {"XINFO", "GROUPS", names[i]};
            size_t glens[] = {5, 6, lens[i]};
            const fr_reply *g = fr_exec(c, 3, groups, glens);
            if (!g || g->type != FR_REPLY_ARRAY || g->count == 0) continue;
            const fr_reply *first = &g->elements[0];
            if (first->type != FR_REPLY_ARRAY || first->count < 2) continue;
            char *gname = strndup(first->elements[1].str, first->elements[1].len);
            if (!gname) fail("out of memory", NULL);
            const char *rg[] = {"XREADGROUP", "GROUP", gname, "fz", "COUNT", "5", "STREAMS",
                                names[i], ">"};
            size_t rgl[] = {10, 5, strlen(gname), 2, 5, 1, 7, lens[i], 1};
            size_t out;
            fr_exec_resp(c, 9, rg, rgl, &out);
            const char *ac[] = {"XAUTOCLAIM", names[i], gname, "fz2", "0", "0-0", "COUNT", "50"};
            size_t acl[] = {10, lens[i], strlen(gname), 3, 1, 3, 5, 2};
            fr_exec_resp(c, 8, ac, acl, &out);
            const char *pe[] = {"XPENDING", names[i], gname, "-", "+", "50"};
            size_t pel[] = {8, lens[i], strlen(gname), 1, 1, 2};
            fr_exec_resp(c, 6, pe, pel, &out);
            const char *ack[] = {"XACK", names[i], gname, "0-1", "1-1", "2-1"};
            size_t ackl[] = {4, lens[i], strlen(gname), 3, 3, 3};
            fr_exec_resp(c, 6, ack, ackl, &out);
            const char *dc[] = {"XGROUP", "DELCONSUMER", names[i], gname, "fz"};
            size_t dcl[] = {6, 11, lens[i], strlen(gname), 2};
            fr_exec_resp(c, 5, dc, dcl, &out);
            free(gname);
        }
        for (size_t i = 0; i < n; i++) free(names[i]);
        free(names);
        free(lens);
    }
    fr_exec_line(c, "FUNCTION LIST WITHCODE");
    fr_client_free(c);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1) return 0;
    unsigned settings = data[0];
    unsigned flags = ((settings & 1) ? 0 : FR_LOAD_SKIP_CHECKSUM) |
                     ((settings & 2) ? FR_LOAD_NOFLUSH : 0) | ((settings & 4) ? FR_LOAD_MERGE : 0) |
                     ((settings & 8) ? FR_LOAD_KEEP_EXPIRED : 0);
    fr_server *s = with_keys();
    char *before = fr_dump(s, NULL);
    if (!before) fail("out of memory", NULL);
    fr_load_report rep;
    if (fr_rdb_load(s, data + 1, size - 1, flags, &rep) != 0) {
        if (!rep.error[0]) fail("a refusal without a reason", NULL);
        char *after = fr_dump(s, NULL);
        if (!after || strcmp(before, after)) fail("a refused file changed the keyspace", rep.error);
        free(after);
    } else {
        exercise(s);
        /* what is there now saves and loads again to the same dump */
        size_t n;
        char *bytes = fr_rdb_save(s, NULL, &n);
        char *d1 = fr_dump(s, NULL);
        fr_config cfg = fr_config_default();
        cfg.start_ms = CLOCK_MS;
        fr_server *t = fr_server_new(&cfg);
        if (!bytes || !d1 || !t) fail("out of memory", NULL);
        if (fr_rdb_load(t, bytes, n, 0, &rep) != 0) fail("its own file refused", rep.error);
        char *d2 = fr_dump(t, NULL);
        if (!d2 || strcmp(d1, d2)) fail("saved and loaded again, the dump changed", NULL);
        free(d2);
        free(d1);
        free(bytes);
        fr_server_free(t);
    }
    free(before);
    fr_server_free(s);
    return 0;
}
