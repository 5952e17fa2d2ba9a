/* notify.c -- keyspace notifications, as Redis 7.0's notify-keyspace-events sends them.
 *
 * The commands call fri_notify (fr_int.h) where Redis calls notifyKeyspaceEvent, with the
 * same class, event name and key, at the same point of their work, so that the messages
 * come out in Redis's order.  The config is a set of FR_NOTIFY_* classes; a notification
 * of an enabled class goes to the library's hook, then becomes up to two messages
 * published as PUBLISH publishes them: "__keyspace@<db>__:<key>" carrying the event (K),
 * then "__keyevent@<db>__:<event>" carrying the key (E).
 *
 * The active expiry is here too: Redis deletes expired keys in the background and
 * notifies each one; the fake does it all at once when asked (fr_server_active_expire).
 */
#include <stdio.h>
#include <string.h>

#include "fr_int.h"

/* The class letters CONFIG SET accepts, in the order CONFIG GET prints them. */
static const struct {
    char letter;
    unsigned flag;
} classes[] = {
    {'g', FR_NOTIFY_GENERIC}, {'$', FR_NOTIFY_STRING}, {'l', FR_NOTIFY_LIST},
    {'s', FR_NOTIFY_SET},     {'h', FR_NOTIFY_HASH},   {'z', FR_NOTIFY_ZSET},
    {'x', FR_NOTIFY_EXPIRED}, {'e', FR_NOTIFY_EVICTED}, {'t', FR_NOTIFY_STREAM},
    {'d', FR_NOTIFY_MODULE},  {'n', FR_NOTIFY_NEW},     {'K', FR_NOTIFY_KEYSPACE},
    {'E', FR_NOTIFY_KEYEVENT}, {'m', FR_NOTIFY_KEY_MISS}, {'A', FR_NOTIFY_ALL},
};
#define NCLASSES (sizeof(classes) / sizeof(classes[0]))

int fr_notify_flags_parse(const char *s)
{
    unsigned flags = 0;
    for (; s && *s; s++) {
        size_t i = 0;
        while (i < NCLASSES && classes[i].letter != *s) i++;
        if (i == NCLASSES) return -1;
        flags |= classes[i].flag;
    }
    return (int)flags;
}

size_t fr_notify_flags_string(unsigned flags, char *buf, size_t cap)
{
    char out[NCLASSES + 1];
    size_t n = 0;
    /* the classes (A standing for all of its own, n then left out as 7.0.15 does), then
     * K, E and m: the table's order */
    int all = (flags & FR_NOTIFY_ALL) == FR_NOTIFY_ALL;
    if (all) out[n++] = 'A';
    for (size_t i = 0; i < NCLASSES; i++) {
        unsigned f = classes[i].flag;
        int trailer = f == FR_NOTIFY_KEYSPACE || f == FR_NOTIFY_KEYEVENT ||
                      f == FR_NOTIFY_KEY_MISS;
        if (f == FR_NOTIFY_ALL || (all && !trailer)) continue;
        if (flags & f) out[n++] = classes[i].letter;
    }
    out[n] = '\0';
    if (cap) snprintf(buf, cap, "%s", out);
    return n;
}

unsigned fr_server_notify_flags(const fr_server *s) { return s->notify_flags; }

void fr_server_set_keyspace_hook(fr_server *s, fr_keyspace_hook *hook, void *userdata)
{
    s->notify_hook = hook;
    s->notify_hook_ud = userdata;
}

/* Publishes "<prefix>@<db>__:<name>" carrying payload. */
static void publish_on(fr_server *s, const char *prefix, int dbid, const char *name,
                       size_t nlen, const char *payload, size_t plen)
{
    char head[48];
    int h = snprintf(head, sizeof(head), "%s@%d__:", prefix, dbid);
    fri_buf ch = {0};
    fri_buf_append(&ch, head, (size_t)h);
    fri_buf_append(&ch, name, nlen);
    fri_pubsub_publish(s, s->running, ch.p, ch.len, payload, plen);
    fri_buf_free(&ch);
}

void fri_notify_publish(fr_server *s, unsigned type, const char *event, const char *key,
                        size_t len, int dbid)
{
    if (!(s->notify_flags & type)) return;
    if (s->notify_hook) s->notify_hook(s->notify_hook_ud, type, event, key, len, dbid);
    size_t elen = strlen(event);
    if (s->notify_flags & FR_NOTIFY_KEYSPACE)
        publish_on(s, "__keyspace", dbid, key, len, event, elen);
    if (s->notify_flags & FR_NOTIFY_KEYEVENT)
        publish_on(s, "__keyevent", dbid, event, elen, key, len);
}

static size_t server_active_expire_guarded(fr_server *s)
{
    int64_t now = fr_clock_now(s);
    size_t deleted = 0;
    if (fri_paused(s) != FR_PAUSE_OFF) return 0; /* activeExpireCycle waits out a pause */
    for (int d = 0; d < FRI_DBNUM; d++) {
        fri_db *db = &s->db[d];
        for (size_t i = 0; i < fri_dict_slots(db->keys); i++) {
            fri_dent *e = fri_dict_slot(db->keys, i);
            if (!e || !fri_obj_is_expired(e->v.ptr, now)) continue;
            /* the lookup deletes it and notifies, as a command touching it would; the
             * key's bytes die with the entry, so they are copied first */
            fri_str *key = fri_str_new(e->key->buf, e->key->len);
            if (!key) return deleted;
            fri_db_lookup(s, db, key->buf, key->len, now);
            fri_str_free(key);
            deleted++;
        }
    }
    return deleted;
}

int64_t fr_server_next_expiry(const fr_server *s)
{
    int64_t next = -1;
    for (int d = 0; d < FRI_DBNUM; d++) {
        fri_dict *keys = s->db[d].keys;
        for (size_t i = 0; i < fri_dict_slots(keys); i++) {
            const fri_dent *e = fri_dict_slot(keys, i);
            if (!e) continue;
            int64_t at = ((const fri_obj *)e->v.ptr)->expire_ms;
            if (at >= 0 && (next < 0 || at < next)) next = at;
        }
    }
    return next;
}

size_t fr_server_active_expire(fr_server *s)
{
    fr_server *guard = fri_mem_enter(s, "fr_server_active_expire");
    size_t r = server_active_expire_guarded(s);
    fri_mem_leave(guard);
    return r;
}
