/* db.c -- the keyspace: objects, lookups with lazy expiry on the virtual clock, adding,
 * replacing and deleting keys.  Expiry is lazy, as in Redis when the active cycle has not
 * run yet: a key whose deadline has passed is deleted when a command touches it, and is
 * invisible to every listing (KEYS, SCAN, DBSIZE, the dump) from the moment it expires. */
#include <stdlib.h>
#include <string.h>

#include "fr_int.h"

fri_obj *fri_obj_new(fri_type type, void *ptr)
{
    fri_obj *o = fri_malloc(sizeof(*o));
    if (!o) return NULL;
    o->type = (uint8_t)type;
    o->strenc = 0;
    o->shared = 0;
    o->argref = 0;
    o->sdstype = 0;
    o->sds = 0;
    o->lru = FRI_LRU_UNSET;
    o->expire_ms = -1;
    o->ptr = ptr;
    return o;
}

fri_obj *fri_obj_new_string(const char *p, size_t len)
{
    fri_str *s = fri_str_new(p, len);
    if (!s) return NULL;
    fri_obj *o = fri_obj_new(FRI_STRING, s);
    if (!o) fri_str_free(s);
    else fri_str_created(o);
    return o;
}

fri_obj *fri_obj_dup(const fri_obj *o)
{
    fri_obj *d = fri_obj_new(o->type, NULL);
    if (!d) return NULL;
    switch (o->type) {
    case FRI_STRING: {
        const fri_str *str = o->ptr;
        d->ptr = fri_str_new(str->buf, str->len);
        /* dupStringObject keeps the encoding; an int copy is a private object, a raw
         * copy an sds just big enough */
        d->strenc = o->strenc;
        break;
    }
    case FRI_LIST: d->ptr = fri_list_dup(o->ptr); break;
    case FRI_HASH: d->ptr = fri_hash_dup(o->ptr); break;
    case FRI_SET: d->ptr = fri_set_dup(o->ptr); break;
    case FRI_ZSET: d->ptr = fri_zset_dup(o->ptr); break;
    case FRI_STREAM: d->ptr = fri_stream_dup(o->ptr); break;
    }
    if (!d->ptr) {
        fri_free(d);
        return NULL;
    }
    return d;
}

void fri_obj_free(fri_obj *o)
{
    if (!o) return;
    switch (o->type) {
    case FRI_STRING: fri_str_free(o->ptr); break;
    case FRI_LIST: fri_list_free(o->ptr); break;
    case FRI_HASH: fri_hash_free(o->ptr); break;
    case FRI_SET: fri_set_free(o->ptr); break;
    case FRI_ZSET: fri_zset_free(o->ptr); break;
    case FRI_STREAM: fri_stream_free(o->ptr); break;
    }
    fri_free(o);
}

const char *fri_type_name(fri_type t)
{
    static const char *const names[] = {"string", "list", "hash", "set", "zset", "stream"};
    return (unsigned)t < sizeof(names) / sizeof(names[0]) ? names[t] : "none";
}

fri_obj *fri_db_lookup(fr_server *s, fri_db *db, const char *key, size_t len, int64_t now)
{
    fri_dent *e = fri_dict_find(db->keys, key, len);
    if (!e) return NULL;
    fri_obj *o = e->v.ptr;
    if (fri_obj_is_expired(o, now) && !s->loading) { /* nothing expires while an AOF loads */
        /* a client pause keeps the keyspace as it is: the key reads as gone, and goes
         * once the pause ends (Redis's expireIfNeeded) */
        if (s->pause_type != FR_PAUSE_OFF && fri_paused(s) != FR_PAUSE_OFF) return NULL;
        fri_db_delete(db, key, len);
        s->expired_keys++;
        fri_notify(s, FR_NOTIFY_EXPIRED, "expired", key, len, db->id);
        fri_signal_modified(NULL, db, key, len); /* an expiry touches WATCHers too */
        if (s->prop) fri_propagate_deletion(s, db->id, key, len); /* DEL into the AOF */
        return NULL;
    }
    return o;
}

fri_obj *fri_lookup_read(fr_client *c, const fri_arg *key)
{
    fri_obj *o = fri_db_lookup(c->srv, c->db, key->ptr, key->len, c->now_ms);
    if (o) fri_obj_touch(c->srv, o, c->now_ms);
    else fri_notify_key(c, FR_NOTIFY_KEY_MISS, "keymiss", key);
    return o;
}

fri_obj *fri_lookup_write(fr_client *c, const fri_arg *key)
{
    fri_obj *o = fri_db_lookup(c->srv, c->db, key->ptr, key->len, c->now_ms);
    if (o) fri_obj_touch(c->srv, o, c->now_ms);
    return o;
}

fri_obj *fri_lookup_notouch(fr_client *c, const fri_arg *key)
{
    fri_obj *o = fri_db_lookup(c->srv, c->db, key->ptr, key->len, c->now_ms);
    if (!o) fri_notify_key(c, FR_NOTIFY_KEY_MISS, "keymiss", key);
    return o;
}

fri_obj *fri_lookup_typed(fr_client *c, const fri_arg *key, fri_type t, int write,
                          int *wrongtype)
{
    fri_obj *o = write ? fri_lookup_write(c, key) : fri_lookup_read(c, key);
    *wrongtype = 0;
    if (o && o->type != t) {
        *wrongtype = 1;
        fri_reply_error(c, FRI_ERR_WRONGTYPE);
        return NULL;
    }
    return o;
}

void fri_db_add(fri_db *db, const char *key, size_t len, fri_obj *obj)
{
    int created;
    fri_dent *e = fri_dict_add(db->keys, key, len, &created);
    /* only an expired key a client pause keeps can be there (lookups call it missing) */
    if (!created) fri_obj_free(e->v.ptr);
    fri_obj_stamp(db->srv, obj);
    e->v.ptr = obj;
    fri_notify(db->srv, FR_NOTIFY_NEW, "new", key, len, db->id);
}

void fri_db_set(fri_db *db, const char *key, size_t len, fri_obj *obj, int keepttl)
{
    int created;
    fri_dent *e = fri_dict_add(db->keys, key, len, &created);
    if (!created) {
        fri_obj *old = e->v.ptr;
        if (keepttl) obj->expire_ms = old->expire_ms;
        if (obj->lru == FRI_LRU_UNSET) fri_obj_overwrite_stamp(db->srv, obj,
                                                               fri_obj_lru_get(db->srv, old));
        fri_obj_free(old);
    } else {
        fri_obj_stamp(db->srv, obj);
    }
    e->v.ptr = obj;
    if (created) fri_notify(db->srv, FR_NOTIFY_NEW, "new", key, len, db->id);
}

int fri_db_delete(fri_db *db, const char *key, size_t len)
{
    fri_val old;
    if (!fri_dict_delete(db->keys, key, len, &old)) return 0;
    fri_obj_free(old.ptr);
    return 1;
}

fri_obj *fri_db_unlink(fri_db *db, const char *key, size_t len)
{
    fri_val old;
    if (!fri_dict_delete(db->keys, key, len, &old)) return NULL;
    return old.ptr;
}

size_t fri_db_size(fr_server *s, fri_db *db, int64_t now)
{
    size_t n = 0, slots = fri_dict_slots(db->keys);
    for (size_t i = 0; i < slots; i++) {
        fri_dent *e = fri_dict_slot(db->keys, i);
        if (e && (s->active_expiry_off || !fri_obj_is_expired(e->v.ptr, now))) n++;
    }
    return n;
}

void fr_server_set_active_expiry(fr_server *s, int on) { s->active_expiry_off = !on; }

int fr_db_counts(const fr_server *s, int db, size_t *keys, size_t *expires)
{
    if (db < 0 || db >= FRI_DBNUM) return -1;
    const fri_db *d = &s->db[db];
    int64_t now = fr_clock_now(s);
    size_t n = 0, e = 0, slots = fri_dict_slots(d->keys);
    for (size_t i = 0; i < slots; i++) {
        fri_dent *ent = fri_dict_slot(d->keys, i);
        if (!ent || (!s->active_expiry_off && fri_obj_is_expired(ent->v.ptr, now))) continue;
        n++;
        if (((const fri_obj *)ent->v.ptr)->expire_ms >= 0) e++;
    }
    if (keys) *keys = n;
    if (expires) *expires = e;
    return 0;
}

static size_t container_size(const fri_obj *o)
{
    switch (o->type) {
    case FRI_LIST: return fri_list_len(o->ptr);
    case FRI_HASH: return fri_hash_size(o->ptr);
    case FRI_SET: return fri_set_size(o->ptr);
    case FRI_ZSET: return fri_zset_size(o->ptr);
    default: return 1;
    }
}

void fri_delete_if_empty(fr_client *c, const fri_arg *key, fri_obj *o)
{
    if (o && container_size(o) == 0) fri_db_delete(c->db, key->ptr, key->len);
}
