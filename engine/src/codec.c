/* codec.c -- the engine's own encodings (docs/engine.md, "Encodings"):
 *
 *   delay-queue member   "wsim1" <id> <field> <value> ...     (retry_after, §2.1)
 *   list/channel frame   the payload alone when there are no headers, else
 *                        "wsim1" "_payload" <payload> "h:<name>" <value> ...
 *
 * where each string is written as <decimal length> ':' <bytes>.  Binary safe (lengths,
 * not separators), reversible, and readable in redis-cli for ASCII payloads. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sim_int.h"

static const char MAGIC[] = "wsim1";

static void put(wsi_text *t, const char *p, size_t len)
{
    wsi_text_size(t, len);
    wsi_text_add(t, ":", 1);
    wsi_text_add(t, p, len);
}

char *wsi_dq_encode(const char *id, size_t id_len, char *const *fields, const size_t *lens,
                    size_t n, size_t *len)
{
    wsi_text t = {0};
    wsi_text_add(&t, MAGIC, sizeof MAGIC - 1);
    put(&t, id, id_len);
    for (size_t i = 0; i < n; i++) put(&t, fields[i], lens[i]);
    *len = t.len;
    return t.p;
}

long wsi_dq_decode(const char *p, size_t len, char ***out, size_t **lens)
{
    *out = NULL;
    *lens = NULL;
    if (len < sizeof MAGIC - 1 || memcmp(p, MAGIC, sizeof MAGIC - 1) != 0) return -1;
    size_t pos = sizeof MAGIC - 1, n = 0, cap = 0;
    char **s = NULL;
    size_t *l = NULL;
    while (pos < len) {
        size_t v = 0, digits = 0;
        while (pos < len && p[pos] >= '0' && p[pos] <= '9' && digits < 19) {
            v = v * 10 + (size_t)(p[pos] - '0');
            pos++;
            digits++;
        }
        if (!digits || pos >= len || p[pos] != ':' || v > len - pos - 1) {
            wsi_strings_free(s, l, n);
            return -1;
        }
        pos++;
        if (n == cap) {
            cap = cap ? cap * 2 : 8;
            s = wsi_xrealloc(s, cap * sizeof *s);
            l = wsi_xrealloc(l, cap * sizeof *l);
        }
        s[n] = wsi_xmemdup(p + pos, v);
        l[n] = v;
        n++;
        pos += v;
    }
    if (n == 0) return -1;
    *out = s;
    *lens = l;
    return (long)n;
}

void wsi_strings_free(char **s, size_t *lens, size_t n)
{
    for (size_t i = 0; i < n; i++) free(s[i]);
    free(s);
    free(lens);
}

char *wsi_frame_encode(const char *payload, size_t plen, const ws_header *h, size_t nh,
                       size_t *len)
{
    if (nh == 0) {
        *len = plen;
        return wsi_xmemdup(payload, plen);
    }
    wsi_text t = {0};
    wsi_text_add(&t, MAGIC, sizeof MAGIC - 1);
    put(&t, "_payload", 8);
    put(&t, payload, plen);
    for (size_t i = 0; i < nh; i++) {
        size_t nl = strlen(h[i].name);
        wsi_text_size(&t, nl + 2); /* "h:<name>", as put would write it */
        wsi_text_add(&t, ":h:", 3);
        wsi_text_add(&t, h[i].name, nl);
        size_t vl = h[i].value_len ? h[i].value_len : (h[i].value ? strlen(h[i].value) : 0);
        put(&t, h[i].value ? h[i].value : "", vl);
    }
    *len = t.len;
    return t.p;
}

long ws_delay_member_decode(const char *member, size_t len, char ***strings, size_t **lens)
{
    return wsi_dq_decode(member, len, strings, lens); /* -1 leaves both NULL */
}

void ws_strings_free(char **strings, size_t *lens, size_t n) { wsi_strings_free(strings, lens, n); }

/* ----- Recovery members ------------------------------------------------------------------- */

#define SALT_LEN 16 /* hex digits of a recovery member's salt ("%016llx" of 64 bits) */

char *wsi_recovery_member(uint64_t bits, const char *value, size_t len, size_t *mlen)
{
    char *m = wsi_xmalloc(SALT_LEN + len + 1);
    for (int h = SALT_LEN - 1; h >= 0; h--, bits >>= 4) m[h] = "0123456789abcdef"[bits & 15];
    if (len) memcpy(m + SALT_LEN, value, len);
    m[SALT_LEN + len] = '\0';
    *mlen = SALT_LEN + len;
    return m;
}

const char *wsi_recovery_value(const char *member, size_t len, size_t *vlen)
{
    if (len < SALT_LEN) return NULL;
    *vlen = len - SALT_LEN;
    return member + SALT_LEN;
}
