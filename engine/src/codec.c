/* codec.c -- the framework's encodings (docs/engine.md, "Encodings"), byte for byte as
 * ruststream-fred writes them, so that a trace from wsim reads like the framework's traffic:
 *
 *   binary frame         [u32 header count] then per header [u32 name length][name]
 *                        [u32 value length][value], then the payload to the end
 *                        (envelope.rs binary_encode; all u32 big-endian; no magic)
 *   delay-queue member   [u32 id length][the entry id][binary frame of the copy]
 *                        (delay.rs encode_member)
 *   recovery member      [u32 process id][u64 per-process counter][the list value]
 *                        (recovery.rs claim_member)
 *
 * Inside the engine a message's parts travel as a stream entry's fields: "_payload", the
 * payload, then "h:<name>", value, ... -- the form XADD writes and the sweep re-adds.  A
 * value that does not parse as a frame is a raw payload without headers, as the framework
 * decodes it. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sim_int.h"

/* Appends v as four big-endian bytes. */
static void put_u32(wsi_text *t, uint32_t v)
{
    char b[4] = {(char)(v >> 24), (char)(v >> 16), (char)(v >> 8), (char)v};
    wsi_text_add(t, b, 4);
}

/* The big-endian u32 at p (four bytes there). */
static uint32_t get_u32(const char *p)
{
    const unsigned char *u = (const unsigned char *)p;
    return (uint32_t)u[0] << 24 | (uint32_t)u[1] << 16 | (uint32_t)u[2] << 8 | u[3];
}

/* Appends the binary frame of fields (stream form: "_payload" p "h:<name>" v ...; other
 * fields are not the message's and are left out, as convert.rs parts_from_fields does). */
static void frame_of_fields(wsi_text *t, char *const *fields, const size_t *lens, size_t n)
{
    uint32_t nh = 0;
    const char *payload = "";
    size_t plen = 0;
    for (size_t i = 0; i + 1 < n; i += 2) {
        if (lens[i] == 8 && memcmp(fields[i], "_payload", 8) == 0) {
            payload = fields[i + 1];
            plen = lens[i + 1];
        } else if (lens[i] > 2 && memcmp(fields[i], "h:", 2) == 0) {
            nh++;
        }
    }
    put_u32(t, nh);
    for (size_t i = 0; i + 1 < n; i += 2) {
        if (lens[i] <= 2 || memcmp(fields[i], "h:", 2) != 0) continue;
        put_u32(t, (uint32_t)(lens[i] - 2));
        wsi_text_add(t, fields[i] + 2, lens[i] - 2);
        put_u32(t, (uint32_t)lens[i + 1]);
        wsi_text_add(t, fields[i + 1], lens[i + 1]);
    }
    wsi_text_add(t, payload, plen);
}

/* The binary frame of a stream entry's fields (heap, *len bytes). */
char *wsi_frame_fields(char *const *fields, const size_t *lens, size_t n, size_t *len)
{
    wsi_text t = {0};
    frame_of_fields(&t, fields, lens, n);
    *len = t.len;
    return t.p;
}

/* The value a framework publisher writes for payload with headers h (heap, *len bytes):
 * the binary frame, with no headers too (envelope.rs frame; pubsub.rs, list.rs publishers
 * frame every value). */
char *wsi_frame_encode(const char *payload, size_t plen, const ws_header *h, size_t nh,
                       size_t *len)
{
    wsi_text t = {0};
    put_u32(&t, (uint32_t)nh);
    for (size_t i = 0; i < nh; i++) {
        size_t nl = strlen(h[i].name);
        size_t vl = h[i].value_len ? h[i].value_len : (h[i].value ? strlen(h[i].value) : 0);
        put_u32(&t, (uint32_t)nl);
        wsi_text_add(&t, h[i].name, nl);
        put_u32(&t, (uint32_t)vl);
        wsi_text_add(&t, h[i].value ? h[i].value : "", vl);
    }
    wsi_text_add(&t, payload, plen);
    *len = t.len;
    return t.p;
}

/* A list of strings under construction. */
typedef struct strs {
    char **s;
    size_t *l;
    size_t n, cap;
} strs;

/* Appends a NUL-terminated copy of len bytes. */
static void strs_add(strs *v, const char *p, size_t len)
{
    if (v->n == v->cap) {
        v->cap = v->cap ? v->cap * 2 : 8;
        v->s = wsi_xrealloc(v->s, v->cap * sizeof *v->s);
        v->l = wsi_xrealloc(v->l, v->cap * sizeof *v->l);
    }
    v->s[v->n] = wsi_xmemdup(p, len);
    v->l[v->n++] = len;
}

/* Appends prefix followed by the len bytes at p, as one string. */
static void strs_add_prefixed(strs *v, const char *prefix, const char *p, size_t len)
{
    size_t pl = strlen(prefix);
    char *buf = wsi_xmalloc(pl + len + 1);
    memcpy(buf, prefix, pl);
    memcpy(buf + pl, p, len);
    strs_add(v, buf, pl + len);
    wsi_free(buf);
}

/* Well-formed UTF-8 by its lead and continuation bytes (the framework refuses a header
 * name that is not UTF-8; overlong forms are not looked for). */
static int utf8_ok(const unsigned char *p, size_t len)
{
    size_t i = 0;
    while (i < len) {
        unsigned c = p[i];
        size_t extra;
        if (c < 0x80) extra = 0;
        else if ((c & 0xE0) == 0xC0) extra = 1;
        else if ((c & 0xF0) == 0xE0) extra = 2;
        else if ((c & 0xF8) == 0xF0) extra = 3;
        else return 0;
        if (extra > len - i - 1) return 0;
        for (size_t k = 1; k <= extra; k++)
            if ((p[i + k] & 0xC0) != 0x80) return 0;
        i += extra + 1;
    }
    return 1;
}

/* Parses a frame at p into v (stream form, "_payload" first); 0, or -1 when it is not one
 * (v then holds what it held before). */
static int frame_parse(const char *p, size_t len, strs *v)
{
    if (len < 4) return -1;
    uint32_t nh = get_u32(p);
    size_t pos = 4;
    /* each header takes at least 8 bytes: a count past that cannot be one */
    if (nh > (len - 4) / 8) return -1;
    strs h = {0};
    for (uint32_t i = 0; i < nh; i++) {
        if (len - pos < 4) goto bad;
        uint32_t nl = get_u32(p + pos);
        pos += 4;
        if (nl > len - pos || !utf8_ok((const unsigned char *)p + pos, nl)) goto bad;
        strs_add_prefixed(&h, "h:", p + pos, nl);
        pos += nl;
        if (len - pos < 4) goto bad;
        uint32_t vl = get_u32(p + pos);
        pos += 4;
        if (vl > len - pos) goto bad;
        strs_add(&h, p + pos, vl);
        pos += vl;
    }
    strs_add(v, "_payload", 8);
    strs_add(v, p + pos, len - pos);
    for (size_t i = 0; i < h.n; i++) strs_add(v, h.s[i], h.l[i]);
    wsi_strings_free(h.s, h.l, h.n);
    return 0;
bad:
    wsi_strings_free(h.s, h.l, h.n);
    return -1;
}

/* A list value as the framework reads it, as stream-like fields ("_payload" p "h:name" v
 * ...): the frame's, or the whole value as the payload when it is no frame; returns the
 * count. */
long wsi_frame_decode(const char *p, size_t len, char ***out, size_t **lens)
{
    strs v = {0};
    if (frame_parse(p, len, &v) != 0) {
        strs_add(&v, "_payload", 8);
        strs_add(&v, p, len); /* not a frame: the whole value is the payload */
    }
    *out = v.s;
    *lens = v.l;
    return (long)v.n;
}

/* The delay-queue member of the entry id with fields (heap, *len bytes): [u32 id
 * length][id] then the fields' frame. */
char *wsi_dq_encode(const char *id, size_t id_len, char *const *fields, const size_t *lens,
                    size_t n, size_t *len)
{
    wsi_text t = {0};
    put_u32(&t, (uint32_t)id_len);
    wsi_text_add(&t, id, id_len);
    frame_of_fields(&t, fields, lens, n);
    *len = t.len;
    return t.p;
}

/* A delay-queue member back into its id then its fields (heap strings, freed by
 * wsi_strings_free); the count, or -1 when it is not a member. */
long wsi_dq_decode(const char *p, size_t len, char ***out, size_t **lens)
{
    *out = NULL;
    *lens = NULL;
    if (len < 4) return -1;
    uint32_t idl = get_u32(p);
    if (idl > len - 4) return -1;
    strs v = {0};
    strs_add(&v, p + 4, idl);
    if (frame_parse(p + 4 + idl, len - 4 - idl, &v) != 0) {
        wsi_strings_free(v.s, v.l, v.n);
        return -1;
    }
    *out = v.s;
    *lens = v.l;
    return (long)v.n;
}

/* Frees n heap strings and both arrays. */
void wsi_strings_free(char **s, size_t *lens, size_t n)
{
    for (size_t i = 0; i < n; i++) wsi_free(s[i]);
    wsi_free(s);
    wsi_free(lens);
}

/* A delay-queue member into its original id and fields (ws_sim.h); -1 for anything else. */
long ws_delay_member_decode(const char *member, size_t len, char ***strings, size_t **lens)
{
    return wsi_dq_decode(member, len, strings, lens); /* -1 leaves both NULL */
}

void ws_strings_free(char **strings, size_t *lens, size_t n) { wsi_strings_free(strings, lens, n); }

/* ----- Recovery members ------------------------------------------------------------------- */

#define SALT_LEN 12 /* u32 process id, u64 counter */

/* A recovery-set member for value: the process's salt (pid, counter) then the value itself
 * (heap, *mlen bytes). */
char *wsi_recovery_member(uint32_t pid, uint64_t counter, const char *value, size_t len,
                          size_t *mlen)
{
    wsi_text t = {0};
    put_u32(&t, pid);
    put_u32(&t, (uint32_t)(counter >> 32));
    put_u32(&t, (uint32_t)counter);
    wsi_text_add(&t, value, len);
    *mlen = t.len;
    if (!t.p) t.p = wsi_xmemdup("", 0);
    return t.p;
}

/* The value a recovery member names (inside member, *vlen bytes), or NULL when it is too
 * short to be one. */
const char *wsi_recovery_value(const char *member, size_t len, size_t *vlen)
{
    if (len < SALT_LEN) return NULL;
    *vlen = len - SALT_LEN;
    return member + SALT_LEN;
}
