/* multi.c -- MULTI/EXEC/DISCARD and WATCH/UNWATCH, as Redis 7.0 runs them.
 *
 * A command rejected while queueing (unknown, wrong arity, CROSSSLOT) dooms the
 * transaction: EXEC answers EXECABORT and runs nothing.  Errors raised while EXEC runs a
 * command fail that command alone.  A WATCHed key modified by anyone (expiry included)
 * after WATCH makes EXEC answer a nil array; so does a WATCHed key that was alive at WATCH
 * and has logically expired by EXEC. */
#include <stdlib.h>
#include <string.h>

#include "command_int.h"
#include "fr_int.h"

/* The clients WATCHing one key of one db. */
typedef struct watchers {
    size_t n, cap;
    fr_client *clients[];
} watchers;

/* ----- The queue --------------------------------------------------------------------- */

static int grow_queue(fr_client *c)
{
    if (c->queue_len < c->queue_cap) return 0;
    size_t cap = c->queue_cap ? c->queue_cap * 2 : 8;
    fri_queued *n = fri_realloc(c->queue, cap * sizeof(*n));
    if (!n) return -1;
    c->queue = n;
    c->queue_cap = cap;
    return 0;
}

void fri_multi_queue(fr_client *c, const fri_command *cmd)
{
    /* A doomed transaction queues nothing more (EXEC will not run it), but still answers
     * QUEUED, as Redis does; EXEC's cluster check then sees only what came before. */
    if (c->dirty_exec || c->dirty_cas) {
        fri_reply_status_lit(c, "QUEUED");
        return;
    }
    size_t total = 0;
    for (int i = 0; i < c->argc; i++) total += c->argv[i].len + 1;
    fri_queued q = {.cmd = cmd, .argc = c->argc, .write = (uint8_t)fri_cmd_is_write(c, cmd),
                    .may_replicate = (uint8_t)fri_cmd_may_replicate(c, cmd)};
    q.argv = fri_malloc(sizeof(fri_arg) * (size_t)c->argc);
    q.mem = fri_malloc(total ? total : 1);
    if (!q.argv || !q.mem || grow_queue(c) < 0) {
        fri_free(q.argv);
        fri_free(q.mem);
        c->dirty_exec = 1;
        fri_reply_error(c, FRI_ERR_OOM);
        return;
    }
    char *w = q.mem;
    for (int i = 0; i < c->argc; i++) {
        memcpy(w, c->argv[i].ptr, c->argv[i].len);
        w[c->argv[i].len] = '\0';
        q.argv[i].ptr = w;
        q.argv[i].len = c->argv[i].len;
        w += c->argv[i].len + 1;
    }
    c->queue[c->queue_len++] = q;
    fri_reply_status_lit(c, "QUEUED");
}

/* Frees the queued commands and leaves MULTI (the WATCHes are the caller's business). */
void fr_client_flag_transaction(fr_client *c)
{
    if (c->in_multi) c->dirty_exec = 1;
}

void fri_multi_reset(fr_client *c)
{
    for (size_t i = 0; i < c->queue_len; i++) {
        fri_free(c->queue[i].argv);
        fri_free(c->queue[i].mem);
    }
    c->queue_len = 0;
    c->in_multi = 0;
    c->dirty_exec = 0;
    c->dirty_cas = 0;
}

static void discard_transaction(fr_client *c)
{
    fri_multi_reset(c);
    fri_unwatch_all(c);
}

/* ----- WATCH bookkeeping --------------------------------------------------------------- */

static fri_watched_key *find_watched(fr_client *c, int db, const char *key, size_t len)
{
    for (size_t i = 0; i < c->watched_len; i++) {
        fri_watched_key *wk = &c->watched[i];
        if (wk->db == db && wk->key->len == len && memcmp(wk->key->buf, key, len) == 0)
            return wk;
    }
    return NULL;
}

static int watch_key(fr_client *c, const fri_arg *key)
{
    if (find_watched(c, c->db->id, key->ptr, key->len)) return 0;
    fri_watched_key *n =
        fri_array_grow(c->watched, &c->watched_cap, c->watched_len, sizeof(*n), 4);
    if (!n) return -1;
    c->watched = n;
    fri_dent *e = fri_dict_add(c->db->watched, key->ptr, key->len, NULL);
    if (!e) return -1;
    watchers *w = e->v.ptr;
    if (!w || w->n == w->cap) {
        size_t cap = w ? w->cap * 2 : 2;
        watchers *nw = fri_realloc(w, sizeof(*nw) + cap * sizeof(fr_client *));
        if (!nw) return -1;
        if (!w) nw->n = 0;
        nw->cap = cap;
        e->v.ptr = w = nw;
    }
    fri_str *k = fri_str_new(key->ptr, key->len);
    if (!k) return -1;
    w->clients[w->n++] = c;
    fri_dent *ke = fri_dict_find(c->db->keys, key->ptr, key->len);
    c->watched[c->watched_len++] = (fri_watched_key){
        .db = c->db->id,
        .key = k,
        .expired = ke && fri_obj_is_expired(ke->v.ptr, c->now_ms),
    };
    return 0;
}

void fri_unwatch_all(fr_client *c)
{
    for (size_t i = 0; i < c->watched_len; i++) {
        fri_watched_key *wk = &c->watched[i];
        fri_db *db = &c->srv->db[wk->db];
        fri_dent *e = fri_dict_find(db->watched, wk->key->buf, wk->key->len);
        if (e) {
            watchers *w = e->v.ptr;
            for (size_t j = 0; j < w->n; j++) {
                if (w->clients[j] != c) continue;
                w->clients[j] = w->clients[--w->n];
                break;
            }
            if (w->n == 0) {
                fri_free(w);
                fri_dict_delete(db->watched, wk->key->buf, wk->key->len, NULL);
            }
        }
        fri_str_free(wk->key);
    }
    c->watched_len = 0;
}

void fri_signal_modified(fr_client *c, fri_db *db, const char *key, size_t len)
{
    (void)c;
    db->srv->dirty++; /* one change per key written (fr_server_dirty) */
    if (db->srv->key_hook) fri_key_report_modified(db->srv, c, db->id, key, len);
    if (fri_dict_size(db->watched) == 0) return;
    fri_dent *e = fri_dict_find(db->watched, key, len);
    if (!e) return;
    watchers *w = e->v.ptr;
    int exists = fri_dict_find(db->keys, key, len) != NULL;
    for (size_t i = 0; i < w->n; i++) {
        fr_client *cl = w->clients[i];
        fri_watched_key *wk = find_watched(cl, db->id, key, len);
        if (wk && wk->expired && !exists) {
            /* it was already expired at WATCH and is now gone: logically no change */
            wk->expired = 0;
            continue;
        }
        cl->dirty_cas = 1;
    }
}

void fri_touch_all_watched(fr_server *s, int dbid)
{
    for (fr_client *cl = s->clients; cl; cl = cl->next) {
        for (size_t i = 0; i < cl->watched_len; i++) {
            fri_watched_key *wk = &cl->watched[i];
            if (dbid != -1 && wk->db != dbid) continue;
            if (!fri_dict_find(s->db[wk->db].keys, wk->key->buf, wk->key->len)) continue;
            if (wk->expired) {
                wk->expired = 0; /* an expired key flushed away: no logical change */
                continue;
            }
            cl->dirty_cas = 1;
        }
    }
}

void fri_touch_watched_swapped(fr_server *s, int emptied, int replaced_with, int64_t now)
{
    fri_dict *from = s->db[emptied].keys, *to = s->db[replaced_with].keys;
    for (fr_client *cl = s->clients; cl; cl = cl->next) {
        for (size_t i = 0; i < cl->watched_len; i++) {
            fri_watched_key *wk = &cl->watched[i];
            if (wk->db != emptied) continue;
            fri_dent *was = fri_dict_find(from, wk->key->buf, wk->key->len);
            fri_dent *will = fri_dict_find(to, wk->key->buf, wk->key->len);
            if (!was && !will) continue;
            if (wk->expired) {
                if (!will) {
                    wk->expired = 0; /* the expired key is gone: no logical change */
                    continue;
                }
                if (fri_obj_is_expired(will->v.ptr, now)) continue; /* still expired */
            } else if (!was && fri_obj_is_expired(will->v.ptr, now)) {
                wk->expired = 1; /* nothing replaced with an expired key */
                continue;
            }
            cl->dirty_cas = 1;
        }
    }
}

/* Redis's isWatchedKeyExpired: alive at WATCH, expired by EXEC. */
static int watched_key_expired(fr_client *c)
{
    for (size_t i = 0; i < c->watched_len; i++) {
        fri_watched_key *wk = &c->watched[i];
        if (wk->expired) continue;
        fri_dent *e = fri_dict_find(c->srv->db[wk->db].keys, wk->key->buf, wk->key->len);
        if (e && fri_obj_is_expired(e->v.ptr, c->now_ms)) return 1;
    }
    return 0;
}

/* ----- Commands ---------------------------------------------------------------------- */

static void multi_command(fr_client *c)
{
    if (c->in_multi) {
        fri_reply_error(c, "ERR MULTI calls can not be nested");
        return;
    }
    c->in_multi = 1;
    fri_reply_ok(c);
}

static void discard_command(fr_client *c)
{
    if (!c->in_multi) {
        fri_reply_error(c, "ERR DISCARD without MULTI");
        return;
    }
    discard_transaction(c);
    fri_reply_ok(c);
}

static void exec_command(fr_client *c)
{
    if (!c->in_multi) {
        fri_reply_error(c, "ERR EXEC without MULTI");
        return;
    }
    if (watched_key_expired(c)) c->dirty_cas = 1;
    if (c->dirty_exec) {
        fri_reply_error(c, "EXECABORT Transaction discarded because of previous errors.");
        discard_transaction(c);
        return;
    }
    if (c->dirty_cas) {
        fri_reply_null_array(c);
        discard_transaction(c);
        return;
    }
    fri_unwatch_all(c);

    /* Detach the queue: the commands run with EXEC's clock reading and argument views. */
    fri_queued *queue = c->queue;
    size_t n = c->queue_len;
    c->queue = NULL;
    c->queue_len = c->queue_cap = 0;
    int argc = c->argc;
    fri_arg *argv = c->argv;
    const fri_command *exec_cmd = c->cmd;

    c->in_exec = 1;
    fri_reply_array_len(c, (long)n);
    for (size_t i = 0; i < n; i++) {
        c->argc = queue[i].argc;
        c->argv = queue[i].argv;
        /* ACL rules may have changed since the command was queued (acl.c) */
        if (c->srv->acl && fri_acl_exec_check(c, queue[i].cmd, queue[i].argc, queue[i].argv) < 0)
            continue;
        fri_call(c, queue[i].cmd);
    }
    c->in_exec = 0;
    fri_exec_args_release(c->srv); /* the queue lets its arguments go */
    c->argc = argc;
    c->argv = argv;
    c->cmd = exec_cmd;

    for (size_t i = 0; i < n; i++) {
        fri_free(queue[i].argv);
        fri_free(queue[i].mem);
    }
    fri_free(queue);
    fri_multi_reset(c);
}

static void watch_command(fr_client *c)
{
    if (c->in_multi) {
        fri_reply_error(c, "ERR WATCH inside MULTI is not allowed");
        return;
    }
    if (!c->dirty_cas) { /* no point in watching once EXEC is bound to fail */
        for (int i = 1; i < c->argc; i++) {
            if (watch_key(c, &c->argv[i]) < 0) {
                fri_reply_error(c, FRI_ERR_OOM);
                return;
            }
        }
    }
    fri_reply_ok(c);
}

static void unwatch_command(fr_client *c)
{
    fri_unwatch_all(c);
    c->dirty_cas = 0;
    fri_reply_ok(c);
}

const fri_command fri_multi_commands[] = {
    {"multi", multi_command, 1, FRI_CMD_MULTI_CTL | FRI_CMD_ALLOW_BUSY | FRI_CMD_FAST | FRI_CMD_LOADING |
     FRI_CMD_STALE, "transactions", 0, 0, 0, NULL, NULL},
    {"exec", exec_command, 1, FRI_CMD_MULTI_CTL | FRI_CMD_LOADING | FRI_CMD_STALE,
     "transactions", 0, 0, 0, NULL, NULL},
    {"discard", discard_command, 1, FRI_CMD_MULTI_CTL | FRI_CMD_ALLOW_BUSY | FRI_CMD_FAST | FRI_CMD_LOADING |
     FRI_CMD_STALE, "transactions", 0, 0, 0, NULL, NULL},
    {"watch", watch_command, -2, FRI_CMD_MULTI_CTL | FRI_CMD_ALLOW_BUSY | FRI_CMD_FAST | FRI_CMD_LOADING |
     FRI_CMD_STALE, "transactions", 1, -1, 1, NULL, NULL},
    {"unwatch", unwatch_command, 1, FRI_CMD_FAST | FRI_CMD_ALLOW_BUSY | FRI_CMD_LOADING | FRI_CMD_STALE,
     "transactions", 0, 0, 0, NULL, NULL},
    {0},
};
