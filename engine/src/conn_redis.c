/* conn_redis.c -- a real server through hiredis.  A round trip appends every command
 * (redisAppendCommandArgv), then reads the replies one by one (redisGetReply, whose first
 * call writes the whole buffer): one write, n replies, one round trip.
 *
 * The reader builds fr_reply nodes directly in the connection's arena through hiredis's
 * reply-object hooks instead of building redisReply trees and converting them: one
 * allocation pass instead of two, and the hooks see whether a nil came as $-1 or *-1,
 * which a redisReply tree of hiredis 0.14 no longer tells (both are REDIS_REPLY_NIL).
 * hiredis 0.14's reader nests at most 7 levels deep; deeper replies fail with WS_EPROTO.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <poll.h>
#include <sys/time.h>

#include <hiredis/hiredis.h>

#include "ws_int.h"

typedef struct redis_conn {
    ws_conn base;       /* the common head */
    redisContext *ctx;  /* hiredis's connection; NULL when connecting failed */
    wsi_arena arena;    /* this round trip's reply trees */
    const fr_reply **queue; /* pushes read and not yet handed out (ws_conn_pushes) */
    size_t nqueue, qpos, capqueue;
} redis_conn;

/* ----- Reply hooks: hiredis parses, we build fr_reply nodes --------------------------- */

/* The node for a task: an array's slot when it has a parent, else a fresh root. */
static fr_reply *task_node(const redisReadTask *task)
{
    if (task->parent) {
        fr_reply *parent = task->parent->obj;
        return (fr_reply *)&parent->elements[task->idx];
    }
    fr_reply *r = wsi_arena_alloc(task->privdata, sizeof *r);
    if (r) memset(r, 0, sizeof *r);
    return r;
}

/* hiredis's string hook: a status, error or bulk node holding a copy of the text; NULL when
 * out of memory. */
static void *hook_string(const redisReadTask *task, char *str, size_t len)
{
    fr_reply *r = task_node(task);
    if (!r) return NULL;
    char *copy = wsi_arena_strdup(task->privdata, str, len);
    if (!copy) return NULL;
    r->type = task->type == REDIS_REPLY_ERROR    ? FR_REPLY_ERROR
              : task->type == REDIS_REPLY_STATUS ? FR_REPLY_STATUS
                                                 : FR_REPLY_BULK;
    r->str = copy;
    r->len = len;
    return r;
}

/* hiredis's array hook: an array node with zeroed room for its elements; NULL when out of
 * memory. */
static void *hook_array(const redisReadTask *task, int elements)
{
    fr_reply *r = task_node(task);
    if (!r) return NULL;
    r->type = FR_REPLY_ARRAY;
    r->count = (size_t)elements;
    r->elements = NULL;
    if (elements > 0) {
        fr_reply *el = wsi_arena_alloc(task->privdata, (size_t)elements * sizeof *el);
        if (!el) return NULL;
        memset(el, 0, (size_t)elements * sizeof *el);
        r->elements = el;
    }
    return r;
}

/* hiredis's integer hook: an integer node; NULL when out of memory. */
static void *hook_integer(const redisReadTask *task, long long value)
{
    fr_reply *r = task_node(task);
    if (!r) return NULL;
    r->type = FR_REPLY_INTEGER;
    r->integer = value;
    return r;
}

/* hiredis's nil hook: a nil bulk or a nil array node, as the type byte read says. */
static void *hook_nil(const redisReadTask *task)
{
    fr_reply *r = task_node(task);
    if (!r) return NULL;
    /* hiredis passes the type byte it read: '*' gives ARRAY, '$' gives STRING. */
    r->type = task->type == REDIS_REPLY_ARRAY ? FR_REPLY_NIL_ARRAY : FR_REPLY_NIL;
    return r;
}

/* Nodes live in the arena, reset at the next round trip: nothing to free one by one. */
static void hook_free(void *reply) { (void)reply; }

static redisReplyObjectFunctions reply_hooks = {hook_string, hook_array, hook_integer,
                                                hook_nil, hook_free};

/* ----- Round trips ----------------------------------------------------------------------- */

/* Maps hiredis's error on the context to our code and kills the connection. */
static int redis_fail(redis_conn *rc, const char *when)
{
    int code = WS_EIO;
    if (rc->ctx->err == REDIS_ERR_PROTOCOL) code = WS_EPROTO;
    else if (rc->ctx->err == REDIS_ERR_OOM) code = WS_ENOMEM;
    else if (rc->ctx->err == REDIS_ERR_IO && (errno == EAGAIN || errno == EWOULDBLOCK))
        code = WS_ETIMEDOUT;
    return wsi_conn_fail(&rc->base, code, 1, "%s: %s", when, rc->ctx->errstr);
}

/* One round trip on the socket: every command written at once, then one reply read per
 * command (pushes met on the way are queued); a failure kills the connection. */
static int redis_pipeline(ws_conn *c, size_t n, const fr_command *commands,
                          const fr_reply **replies, unsigned char *fates)
{
    redis_conn *rc = (redis_conn *)c;
    wsi_arena_reset(&rc->arena);
    rc->nqueue = rc->qpos = 0; /* undelivered pushes die with the arena (see ws_conn.h) */
    for (size_t i = 0; i < n; i++) {
        /* argvlen NULL means NUL-terminated arguments to hiredis too (it strlen()s). */
        int ok = redisAppendCommandArgv(rc->ctx, commands[i].argc,
                                        (const char **)commands[i].argv, commands[i].argvlen);
        /* Appending only fills hiredis's output buffer: on failure nothing was sent yet,
         * but the buffer holds a partial pipeline, so the connection cannot be reused. */
        if (ok != REDIS_OK) return redis_fail(rc, "append");
    }
    for (size_t i = 0; i < n; i++) fates[i] = WS_FATE_UNKNOWN;
    c->stats.commands_sent += n;
    for (size_t i = 0; i < n; i++) {
        void *reply = NULL;
        if (redisGetReply(rc->ctx, &reply) != REDIS_OK || !reply) {
            if (rc->ctx->err == 0)
                return wsi_conn_fail(c, WS_ENOMEM, 1, "out of memory reading a reply");
            return redis_fail(rc, "read");
        }
        replies[i] = reply;
        fates[i] = WS_FATE_REPLIED;
        c->stats.replies_received++;
    }
    return 0;
}

/* Frees the hiredis context, the replies and the queued pushes. */
static void redis_close(ws_conn *c)
{
    redis_conn *rc = (redis_conn *)c;
    if (rc->ctx) redisFree(rc->ctx);
    wsi_arena_free(&rc->arena);
    wsi_free(rc->queue);
    wsi_free(rc);
}

/* Keeps a push for later hand-out (the arena is not reset while any is queued). */
static void queue_push(redis_conn *rc, const fr_reply *r)
{
    if (rc->nqueue == rc->capqueue) {
        size_t cap = rc->capqueue ? rc->capqueue * 2 : 16;
        rc->queue = wsi_xrealloc(rc->queue, cap * sizeof *rc->queue);
        rc->capqueue = cap;
    }
    rc->queue[rc->nqueue++] = r;
}

/* Whether r is a subscribed connection's answer to PING (["pong", ...]). */
static int is_pong(const fr_reply *r)
{
    return r->type == FR_REPLY_ARRAY && r->count == 2 && r->elements[0].type == FR_REPLY_BULK &&
           r->elements[0].len == 4 && memcmp(r->elements[0].str, "pong", 4) == 0;
}

/* Pushes queued first; then, with timeout_ms < 0, a barrier: PING, and every push up to
 * its pong (a subscribed connection answers ["pong", ""]), so everything published before
 * the call is in; otherwise what the socket has, waiting at most timeout_ms for the
 * first (poll: a quiet connection is not a failure, as a hiredis read timeout would be). */
static int redis_pushes(ws_conn *c, int timeout_ms, size_t max, const fr_reply **out,
                        size_t *n)
{
    redis_conn *rc = (redis_conn *)c;
    if (rc->qpos == rc->nqueue) {
        rc->qpos = rc->nqueue = 0;
        wsi_arena_reset(&rc->arena);
    }
    if (timeout_ms < 0) {
        if (redisAppendCommand(rc->ctx, "PING") != REDIS_OK) return redis_fail(rc, "append");
        for (;;) {
            void *reply = NULL;
            if (redisGetReply(rc->ctx, &reply) != REDIS_OK || !reply) return redis_fail(rc, "read");
            if (is_pong(reply)) break;
            queue_push(rc, reply);
            c->stats.replies_received++;
        }
        timeout_ms = 0;
    }
    int waited = 0;
    while (rc->nqueue - rc->qpos < max) {
        void *reply = NULL;
        if (redisGetReplyFromReader(rc->ctx, &reply) != REDIS_OK) return redis_fail(rc, "read");
        if (reply) {
            queue_push(rc, reply);
            c->stats.replies_received++;
            continue;
        }
        struct pollfd p = {.fd = rc->ctx->fd, .events = POLLIN};
        int r = poll(&p, 1, rc->nqueue > rc->qpos || waited ? 0 : timeout_ms);
        waited = 1;
        if (r < 0 && errno == EINTR) continue;
        if (r <= 0) break;
        if (redisBufferRead(rc->ctx) != REDIS_OK) return redis_fail(rc, "read");
    }
    size_t k = 0;
    while (k < max && rc->qpos < rc->nqueue) out[k++] = rc->queue[rc->qpos++];
    *n = k;
    return 0;
}

static const wsi_conn_ops redis_ops = {redis_pipeline, redis_close, redis_pushes};

/* Parses url into a host and port or a unix path (in buf).  0, or -1 when malformed. */
static int parse_url(const char *url, char *buf, size_t cap, int *port, int *is_unix)
{
    if (strncmp(url, "unix://", 7) == 0) {
        const char *path = url + 7;
        if (path[0] != '/' || strlen(path) >= cap) return -1;
        strcpy(buf, path);
        *is_unix = 1;
        return 0;
    }
    if (strncmp(url, "redis://", 8) != 0) return -1;
    const char *host = url + 8;
    const char *colon = strrchr(host, ':');
    size_t hlen = colon ? (size_t)(colon - host) : strlen(host);
    if (hlen == 0 || hlen >= cap || memchr(host, '@', hlen) || memchr(host, '/', hlen))
        return -1;
    memcpy(buf, host, hlen);
    buf[hlen] = '\0';
    *port = 6379;
    if (colon) {
        char *end;
        long p = strtol(colon + 1, &end, 10);
        if (end == colon + 1 || (*end && strcmp(end, "/") != 0) || p < 1 || p > 65535)
            return -1;
        *port = (int)p;
    }
    *is_unix = 0;
    return 0;
}

/* A connection to the server at url (redis://host:port or unix:///path), every read and
 * write bounded by timeout_ms; a failed one comes back dead with its error, NULL only when
 * out of memory. */
ws_conn *ws_conn_open(const char *url, int timeout_ms)
{
    redis_conn *rc = wsi_xcalloc(1, sizeof *rc);
    wsi_conn_init(&rc->base, &redis_ops, "redis");
    rc->ctx = NULL;
    rc->arena.head = NULL;
    char where[512];
    int port = 0, is_unix = 0;
    if (!url || parse_url(url, where, sizeof where, &port, &is_unix) != 0) {
        wsi_conn_fail(&rc->base, WS_EINVAL, 1,
                      "bad url '%.60s': want redis://host:port or unix:///path",
                      url ? url : "(null)");
        return &rc->base;
    }
    if (timeout_ms <= 0) timeout_ms = 10000;
    struct timeval tv = {timeout_ms / 1000, (timeout_ms % 1000) * 1000};
    rc->ctx = is_unix ? redisConnectUnixWithTimeout(where, tv)
                      : redisConnectWithTimeout(where, port, tv);
    if (!rc->ctx) {
        wsi_free(rc);
        return NULL;
    }
    if (rc->ctx->err) {
        wsi_conn_fail(&rc->base, WS_ECONNECT, 1, "%s: %s", url, rc->ctx->errstr);
        return &rc->base;
    }
    /* The connect timeout bounds the connect only: bound every read and write too. */
    if (redisSetTimeout(rc->ctx, tv) != REDIS_OK) {
        wsi_conn_fail(&rc->base, WS_ECONNECT, 1, "%s: cannot set the timeout: %s", url,
                      rc->ctx->errstr);
        return &rc->base;
    }
    rc->ctx->reader->fn = &reply_hooks;
    rc->ctx->reader->privdata = &rc->arena;
    return &rc->base;
}
