/* keyspace_read.c -- see keyspace_read.h. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "keyspace_read.h"

char *kr_fake(void *side, int argc, const char *const *argv, const size_t *lens)
{
    size_t n = 0;
    const char *p = fr_exec_resp(side, argc, argv, lens, &n);
    assert_non_null(p);
    char *copy = malloc(n + 1);
    assert_non_null(copy);
    memcpy(copy, p, n);
    copy[n] = '\0';
    return copy;
}

char *kr_real(void *side, int argc, const char *const *argv, const size_t *lens)
{
    rh_buf raw = {0};
    assert_int_equal(rh_send(side, argc, (char **)argv, (size_t *)lens), 0);
    assert_int_equal(rh_read_reply(side, &raw), 0);
    return raw.data ? raw.data : strdup("");
}

char *kr_line(kr_runner run, void *side, const char *line)
{
    char **argv;
    size_t *lens;
    int argc = fr_split_line(line, &argv, &lens);
    assert_true(argc > 0);
    char *r = run(side, argc, (const char *const *)argv, lens);
    fr_split_free(argc, argv, lens);
    return r;
}

static int cmp_bytes(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The bulk strings of a flat array reply, each a heap string (NUL-terminated; pairs joined
 * as "a=b" when pairs); *n set. */
static char **array_items(const char *raw, int pairs, long *n)
{
    assert_int_equal(raw[0], '*');
    long count = strtol(raw + 1, NULL, 10), k = 0;
    const char *p = strstr(raw, "\r\n") + 2;
    char **items = calloc((size_t)(count > 0 ? count : 0) + 1, sizeof(*items));
    assert_non_null(items);
    for (long i = 0; i < count; i++) {
        assert_int_equal(*p, '$');
        long len = strtol(p + 1, NULL, 10);
        p = strstr(p, "\r\n") + 2;
        if (pairs && i % 2 == 1) {
            size_t old = strlen(items[k - 1]);
            items[k - 1] = realloc(items[k - 1], old + (size_t)len + 2);
            assert_non_null(items[k - 1]);
            items[k - 1][old] = '=';
            memcpy(items[k - 1] + old + 1, p, (size_t)len);
            items[k - 1][old + 1 + (size_t)len] = 0;
        } else {
            items[k] = malloc((size_t)len + 1);
            assert_non_null(items[k]);
            memcpy(items[k], p, (size_t)len);
            items[k++][len] = 0;
        }
        p += len + 2;
    }
    *n = k;
    return items;
}

char *kr_canonical_array(const char *raw, int pairs)
{
    long k;
    char **items = array_items(raw, pairs, &k);
    qsort(items, (size_t)k, sizeof(*items), cmp_bytes);
    rh_buf out = {0};
    for (long i = 0; i < k; i++) {
        rh_buf_printf(&out, "%s\n", items[i]);
        free(items[i]);
    }
    free(items);
    return out.data ? out.data : strdup("");
}

/* run(side, word..., key, word...): a command whose one binary argument is the key. */
static char *key_cmd(kr_runner run, void *side, const char *w1, const char *w2,
                     const char *key, size_t klen, const char *const *tail, int ntail)
{
    const char *argv[8];
    size_t lens[8];
    int argc = 0;
    argv[argc] = w1, lens[argc++] = strlen(w1);
    if (w2) argv[argc] = w2, lens[argc++] = strlen(w2);
    argv[argc] = key, lens[argc++] = klen;
    for (int i = 0; i < ntail; i++) argv[argc] = tail[i], lens[argc++] = strlen(tail[i]);
    return run(side, argc, argv, lens);
}

char *kr_value(kr_runner run, void *side, const char *key, size_t klen, int with_encoding,
               int with_ttl)
{
    char *type = key_cmd(run, side, "TYPE", NULL, key, klen, NULL, 0);
    char *enc = with_encoding ? key_cmd(run, side, "OBJECT", "ENCODING", key, klen, NULL, 0)
                              : strdup("");
    char *ttl = with_ttl ? key_cmd(run, side, "PEXPIRETIME", NULL, key, klen, NULL, 0)
                         : strdup("");
    static const char *const all[] = {"0", "-1"};
    static const char *const withscores[] = {"0", "-1", "WITHSCORES"};
    static const char *const full[] = {"FULL"};
    char *val;
    if (!strcmp(type, "+string\r\n")) val = key_cmd(run, side, "GET", NULL, key, klen, NULL, 0);
    else if (!strcmp(type, "+list\r\n")) val = key_cmd(run, side, "LRANGE", NULL, key, klen, all, 2);
    else if (!strcmp(type, "+hash\r\n")) val = key_cmd(run, side, "HGETALL", NULL, key, klen, NULL, 0);
    else if (!strcmp(type, "+set\r\n")) val = key_cmd(run, side, "SMEMBERS", NULL, key, klen, NULL, 0);
    else if (!strcmp(type, "+zset\r\n"))
        val = key_cmd(run, side, "ZRANGE", NULL, key, klen, withscores, 3);
    else if (!strcmp(type, "+stream\r\n"))
        val = key_cmd(run, side, "XINFO", "STREAM", key, klen, full, 1);
    else val = strdup("");
    if (!strcmp(type, "+hash\r\n") || !strcmp(type, "+set\r\n")) {
        char *sorted = kr_canonical_array(val, !strcmp(type, "+hash\r\n"));
        free(val);
        val = sorted;
    }
    rh_buf out = {0};
    rh_buf_printf(&out, "%s%s%s%s", type, enc, ttl, val);
    free(type);
    free(enc);
    free(ttl);
    free(val);
    return out.data;
}

char *kr_keyspace(kr_runner run, void *side)
{
    rh_buf out = {0};
    for (int db = 0; db < 16; db++) {
        char sel[32];
        snprintf(sel, sizeof(sel), "SELECT %d", db);
        free(kr_line(run, side, sel));
        /* the keys, binary safe: the raw reply's lengths */
        char *keys = kr_line(run, side, "KEYS *");
        long count = strtol(keys + 1, NULL, 10);
        const char *p = strstr(keys, "\r\n") + 2;
        typedef struct { const char *p; size_t len; } kv;
        kv *v = calloc((size_t)(count > 0 ? count : 0) + 1, sizeof(*v));
        assert_non_null(v);
        for (long i = 0; i < count; i++) {
            long len = strtol(p + 1, NULL, 10);
            p = strstr(p, "\r\n") + 2;
            v[i].p = p;
            v[i].len = (size_t)len;
            p += len + 2;
        }
        /* byte order */
        for (long i = 1; i < count; i++)
            for (long j = i; j > 0; j--) {
                size_t m = v[j - 1].len < v[j].len ? v[j - 1].len : v[j].len;
                int c = memcmp(v[j - 1].p, v[j].p, m);
                if (c < 0 || (c == 0 && v[j - 1].len <= v[j].len)) break;
                kv t = v[j - 1];
                v[j - 1] = v[j];
                v[j] = t;
            }
        if (count) rh_buf_printf(&out, "db %d keys %ld\n", db, count);
        for (long i = 0; i < count; i++) {
            char *val = kr_value(run, side, v[i].p, v[i].len, 1, 1);
            rh_buf_append(&out, "key ", 4);
            rh_buf_append(&out, v[i].p, v[i].len);
            rh_buf_printf(&out, "\n%s\n", val);
            free(val);
        }
        free(v);
        free(keys);
    }
    free(kr_line(run, side, "SELECT 0"));
    char *libs = kr_line(run, side, "FUNCTION LIST WITHCODE");
    rh_buf_printf(&out, "functions %s\n", libs);
    free(libs);
    return out.data ? out.data : strdup("");
}
