/* fuzz_aof.c -- AOF files (fr_aof_load, fake_redis/src/aof_file.c) on arbitrary bytes
 * (libFuzzer target).
 *
 * Input: one byte of settings, then the file.  Settings bit 0: aof-load-truncated
 * (FR_AOF_LOAD_TRUNCATED); bit 1: the file is named as an old single file
 * ("appendonly.aof") rather than an incremental one; bit 2: only check it
 * (FR_AOF_CHECK_ONLY).
 *
 * The file is loaded into a server that already holds a few keys.  Checked:
 * - a refusal, or a check alone, leaves the server as it was (the same canonical dump)
 *   and a refusal says why;
 * - a load leaves a server that answers (its dump; AddressSanitizer and UBSan watch), whose
 *   own rewrite (fr_aof_rewrite) loads into a fresh server without a refusal.
 *
 * Scripts and functions would let a file loop for ever (a script runs to its end while a
 * file loads, as in Redis): inputs that name them are skipped.
 */
#include <ctype.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fakeredis.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void fail(const char *what, const char *detail)
{
    fprintf(stderr, "fuzz_aof: %s%s%s\n", what, detail ? ": " : "", detail ? detail : "");
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
    fr_exec_line(c, "RPUSH l a b c");
    fr_exec_line(c, "XADD x 1-1 f v");
    fr_exec_line(c, "XGROUP CREATE x g 0");
    fr_exec_line(c, "XREADGROUP GROUP g c COUNT 1 STREAMS x >");
    fr_client_free(c);
    return s;
}

/* Whether the bytes name a script or a function (case-insensitively). */
static int names_scripts(const uint8_t *p, size_t n)
{
    static const char *const words[] = {"eval", "fcall", "function", "script"};
    for (size_t i = 0; i < n; i++)
        for (size_t w = 0; w < sizeof(words) / sizeof(words[0]); w++) {
            size_t k = 0, len = strlen(words[w]);
            while (k < len && i + k < n && tolower(p[i + k]) == words[w][k]) k++;
            if (k == len) return 1;
        }
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1 || names_scripts(data + 1, size - 1)) return 0;
    unsigned settings = data[0];
    unsigned flags = ((settings & 1) ? FR_AOF_LOAD_TRUNCATED : 0) |
                     ((settings & 4) ? FR_AOF_CHECK_ONLY : 0);
    const char *name = (settings & 2) ? "appendonly.aof" : "appendonly.aof.1.incr.aof";
    fr_server *s = with_keys();
    char *before = fr_dump(s, NULL);
    if (!before) fail("out of memory", NULL);
    fr_aof_report rep;
    int rc = fr_aof_load(s, data + 1, size - 1, name, flags, &rep);
    if (rc != 0 && !rep.error[0]) fail("a refusal without a reason", NULL);
    if (rc != 0 || (flags & FR_AOF_CHECK_ONLY)) {
        char *after = fr_dump(s, NULL);
        if (!after || strcmp(before, after))
            fail(rc ? "a refused file changed the keyspace" : "a check changed the keyspace",
                 rep.error);
        free(after);
    } else {
        char *d = fr_dump(s, NULL);
        size_t n;
        char *rw = fr_aof_rewrite(s, &n);
        fr_config cfg = fr_config_default();
        cfg.start_ms = CLOCK_MS;
        fr_server *t = fr_server_new(&cfg);
        if (!d || !rw || !t) fail("out of memory", NULL);
        if (fr_aof_load(t, rw, n, "appendonly.aof.2.base.aof", 0, &rep) != 0)
            fail("its own rewrite refused", rep.error);
        free(rw);
        free(d);
        fr_server_free(t);
    }
    free(before);
    fr_server_free(s);
    return 0;
}
