/* dump.c -- the canonical text dump of the keyspace (format: docs/fake_redis.md).
 *
 * Canonical means two keyspaces with the same content print the same text whatever the
 * order they were built in: keys, hash fields and set members are sorted by bytes, lists
 * keep their order and sorted sets print in rank order.  TTLs print as the remaining
 * milliseconds on the server's clock, as PTTL would answer. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fr_int.h"

/* Quotes bytes the way redis-cli shows them, so any value prints on one line (also used
 * by t_stream.c's part of the dump). */
void fri_buf_put_quoted(fri_buf *b, const char *p, size_t len)
{
    fri_buf_append(b, "\"", 1);
    for (size_t i = 0; i < len; i++) {
        unsigned char ch = (unsigned char)p[i];
        switch (ch) {
        case '\\': fri_buf_append(b, "\\\\", 2); break;
        case '"': fri_buf_append(b, "\\\"", 2); break;
        case '\n': fri_buf_append(b, "\\n", 2); break;
        case '\r': fri_buf_append(b, "\\r", 2); break;
        case '\t': fri_buf_append(b, "\\t", 2); break;
        case '\a': fri_buf_append(b, "\\a", 2); break;
        case '\b': fri_buf_append(b, "\\b", 2); break;
        default:
            if (ch >= 0x20 && ch < 0x7f) fri_buf_append(b, &p[i], 1);
            else fri_buf_printf(b, "\\x%02x", ch);
        }
    }
    fri_buf_append(b, "\"", 1);
}

typedef struct bytes_ref {
    const char *p;
    size_t len;
    const void *extra; /* the value that goes with it (hash value, key object) */
} bytes_ref;

static int cmp_refs(const void *a, const void *b)
{
    const bytes_ref *x = a, *y = b;
    return fri_bytes_cmp(x->p, x->len, y->p, y->len);
}

typedef struct ref_list {
    bytes_ref *v;
    size_t n, cap;
} ref_list;

static void ref_push(ref_list *l, const char *p, size_t len, const void *extra)
{
    if (l->n == l->cap) {
        l->cap = l->cap ? l->cap * 2 : 16;
        l->v = fri_realloc(l->v, l->cap * sizeof(*l->v)); /* guarded: never NULL */
    }
    l->v[l->n++] = (bytes_ref){p, len, extra};
}

/* Set members are only valid during the callback (an integer set formats them on the
 * fly), so they are copied; the copy rides in extra and is freed after printing. */
static void collect_member(const char *p, size_t len, void *ctx)
{
    fri_str *copy = fri_str_new(p, len); /* guarded: never NULL */
    ref_push(ctx, copy->buf, copy->len, copy);
}

static void dump_zmember(const char *p, size_t len, double score, void *ctx)
{
    fri_buf *b = ctx;
    char num[64];
    fri_d2string(num, sizeof(num), score);
    fri_buf_append(b, "  ", 2);
    fri_buf_put_quoted(b, p, len);
    fri_buf_printf(b, " %s\n", num);
}

static void dump_value(fri_buf *b, fri_obj *o, int64_t now)
{
    switch (o->type) {
    case FRI_STRING: {
        fri_str *s = o->ptr;
        fri_buf_append(b, "  ", 2);
        fri_buf_put_quoted(b, s->buf, s->len);
        fri_buf_append(b, "\n", 1);
        break;
    }
    case FRI_LIST: {
        size_t n = fri_list_len(o->ptr);
        for (size_t i = 0; i < n; i++) {
            const fri_str *s = fri_list_at(o->ptr, i);
            fri_buf_append(b, "  ", 2);
            fri_buf_put_quoted(b, s->buf, s->len);
            fri_buf_append(b, "\n", 1);
        }
        break;
    }
    case FRI_HASH: {
        ref_list fields = {0};
        fri_dict *h = fri_hash_fields(o->ptr);
        for (size_t i = 0; i < fri_dict_slots(h); i++) {
            fri_dent *e = fri_dict_slot(h, i);
            if (e) ref_push(&fields, e->key->buf, e->key->len, e->v.ptr);
        }
        if (fields.n) qsort(fields.v, fields.n, sizeof(*fields.v), cmp_refs);
        for (size_t i = 0; i < fields.n; i++) {
            const fri_str *v = fields.v[i].extra;
            fri_buf_append(b, "  ", 2);
            fri_buf_put_quoted(b, fields.v[i].p, fields.v[i].len);
            fri_buf_append(b, " ", 1);
            fri_buf_put_quoted(b, v->buf, v->len);
            fri_buf_append(b, "\n", 1);
        }
        fri_free(fields.v);
        break;
    }
    case FRI_SET: {
        ref_list members = {0};
        fri_set_foreach(o->ptr, collect_member, &members);
        if (members.n) qsort(members.v, members.n, sizeof(*members.v), cmp_refs);
        for (size_t i = 0; i < members.n; i++) {
            fri_buf_append(b, "  ", 2);
            fri_buf_put_quoted(b, members.v[i].p, members.v[i].len);
            fri_buf_append(b, "\n", 1);
            fri_str_free((fri_str *)members.v[i].extra);
        }
        fri_free(members.v);
        break;
    }
    case FRI_ZSET: fri_zset_foreach(o->ptr, dump_zmember, b); break;
    case FRI_STREAM: fri_stream_dump(b, o->ptr, now); break;
    }
}

/* The dump in a buffer that may hold reserve blocks (fr_dump runs guarded). */
static char *dump_text(fr_server *s, size_t *len)
{
    fri_buf b = {0};
    int64_t now = fr_clock_now(s);
    fri_buf_append(&b, "# fakeredis dump v1\n", 20);
    for (int d = 0; d < FRI_DBNUM; d++) {
        fri_dict *keys = s->db[d].keys;
        ref_list live = {0};
        for (size_t i = 0; i < fri_dict_slots(keys); i++) {
            fri_dent *e = fri_dict_slot(keys, i);
            if (e && !fri_obj_is_expired(e->v.ptr, now))
                ref_push(&live, e->key->buf, e->key->len, e->v.ptr);
        }
        if (live.n == 0) continue;
        qsort(live.v, live.n, sizeof(*live.v), cmp_refs);
        fri_buf_printf(&b, "db %d keys %zu\n", d, live.n);
        for (size_t i = 0; i < live.n; i++) {
            fri_obj *o = (fri_obj *)live.v[i].extra;
            fri_buf_put_quoted(&b, live.v[i].p, live.v[i].len);
            fri_buf_printf(&b, " %s", fri_type_name(o->type));
            if (o->expire_ms >= 0) fri_buf_printf(&b, " pttl=%lld", (long long)(o->expire_ms - now));
            fri_buf_append(&b, "\n", 1);
            dump_value(&b, o, now);
        }
        fri_free(live.v);
    }
    fri_buf_append(&b, "", 0);
    fri_buf_reserve(&b, 1);
    b.p[b.len] = '\0';
    *len = b.len;
    return b.p;
}

char *fr_dump(fr_server *s, size_t *len)
{
    fr_server *guard = fri_mem_enter(s, "fr_dump");
    size_t n;
    char *text = dump_text(s, &n);
    if (fri_mem_is_reserve(text)) { /* the caller free()s it: a copy of the C library's */
        char *copy = fri_malloc_plain(n + 1);
        if (copy) memcpy(copy, text, n + 1);
        fri_free(text);
        text = copy;
    }
    fri_mem_leave(guard);
    if (len && text) *len = n;
    return text;
}
