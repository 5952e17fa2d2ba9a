/* blocked.c -- blocking commands that really block, for clients that ask for it (a
 * server's connections), served the way Redis 7.0's blocked.c serves them.
 *
 * The handlers of BLPOP, BRPOP, BLMOVE, BRPOPLPUSH, BLMPOP, BZPOPMIN, BZPOPMAX, BZMPOP,
 * XREAD and XREADGROUP never wait: when nothing can be served they write the reply a
 * timeout gives, the nil array.  For a client with blocking on, fri_blocked_after_call
 * sees that reply (outside EXEC, and for XREAD/XREADGROUP only with BLOCK), withdraws it,
 * and blocks the client instead: it keeps its own copy of the command, the keys it waits
 * on (once each), for XREAD the id each stream must grow past ("$" resolved now), and a
 * deadline.  The server keeps, per key, the clients blocked on it in the order they
 * blocked.
 *
 * Redis queues a key as ready when a list, sorted set or stream is created under it, when
 * XADD adds to it, when its consumer group is destroyed or, for a stream, when the key is
 * deleted or overwritten.  The fake finds the same events without hooks in every module:
 * after each command it compares each key some client waits on with what it was (the
 * object, its type, a stream's last id and group count) and queues the keys that changed
 * that way, in the order of the commands (inside EXEC, command by command), which is the
 * order Redis signals them in (a single command makes at most one waited-on key ready,
 * except the whole-keyspace ones such as SWAPDB).
 *
 * After the top-level command, the ready keys are served in order (fri_blocked_serve_ready,
 * Redis's handleClientsBlockedOnKeys): on each key, the clients blocked on it, first
 * blocked first, as long as the key holds what they wait for.  A list or sorted-set client
 * is served by running its command again on that key alone (BLPOP a b 0 woken by b runs
 * BLPOP b 0), which pops, moves and answers exactly as Redis's serving code does; a list
 * emptied by the first clients leaves the rest blocked.  A stream client gets
 * [[key, entries after its id]] (XREADGROUP: after the group's last-delivered id), as
 * Redis's serveClientsBlockedOnStreamKey writes it.  What a served command writes (BLMOVE
 * creating its destination) may make more keys ready: they are served after the ones
 * already queued.  XREADGROUP clients on a key that is gone or no longer a stream get
 * "-UNBLOCKED the stream key no longer exists", as 7.0.15 answers.
 *
 * A woken client's reply goes to c->woken_out (its c->out keeps the replies of the call
 * that blocked), and the client joins the server's woken queue (fr_server_take_woken).
 * Timeouts are explicit: fr_server_expire_blocked answers the nil array to every client
 * whose deadline has come on the server's clock. */
#include <assert.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "fr_int.h"
#include "reply_int.h"
#include "stream_int.h"

/* ----- How each command blocks ------------------------------------------------------------ */

enum { WAIT_LIST = 1, WAIT_ZSET, WAIT_STREAM };

/* Where a command's waited-on keys are, and how it is run again on one of them. */
enum {
    LAYOUT_KEYS,     /* CMD key [key ...] timeout: run as CMD key timeout */
    LAYOUT_SOURCE,   /* BLMOVE / BRPOPLPUSH: one key, run as it is */
    LAYOUT_NUMKEYS,  /* CMD timeout numkeys key ... rest: run as CMD timeout 1 key rest */
    LAYOUT_STREAMS,  /* XREAD / XREADGROUP: the keys after STREAMS */
};

typedef struct blocking_cmd {
    const char *name;  /* the command table's name */
    int kind;          /* WAIT_LIST, WAIT_ZSET or WAIT_STREAM: the type that serves it */
    int layout;        /* LAYOUT_* */
    int timeout_arg;   /* argv index of the timeout in seconds (0: the last argument; the
                          streams' BLOCK is in ms and found by the option parser) */
} blocking_cmd;

static const blocking_cmd blocking_cmds[] = {
    {"blpop", WAIT_LIST, LAYOUT_KEYS, 0},       {"brpop", WAIT_LIST, LAYOUT_KEYS, 0},
    {"blmove", WAIT_LIST, LAYOUT_SOURCE, 5},    {"brpoplpush", WAIT_LIST, LAYOUT_SOURCE, 3},
    {"blmpop", WAIT_LIST, LAYOUT_NUMKEYS, 1},   {"bzpopmin", WAIT_ZSET, LAYOUT_KEYS, 0},
    {"bzpopmax", WAIT_ZSET, LAYOUT_KEYS, 0},    {"bzmpop", WAIT_ZSET, LAYOUT_NUMKEYS, 1},
    {"xread", WAIT_STREAM, LAYOUT_STREAMS, 0},  {"xreadgroup", WAIT_STREAM, LAYOUT_STREAMS, 0},
    {NULL, 0, 0, 0},
};

static const blocking_cmd *find_blocking_cmd(const fri_command *cmd)
{
    for (const blocking_cmd *b = blocking_cmds; b->name; b++)
        if (strcmp(b->name, cmd->name) == 0) return b;
    return NULL;
}

/* ----- State ---------------------------------------------------------------------------- */

/* What a waited-on key held after the last command, to tell which commands made it
 * ready (see the top of the file). */
typedef struct key_state {
    const fri_obj *obj; /* the value, NULL when missing or logically expired */
    int type;           /* obj's fri_type, -1 when missing */
    fri_sid last_id;    /* a stream's last id */
    size_t groups;      /* a stream's consumer groups */
} key_state;

/* One key of one db that clients are blocked on. */
typedef struct bkey {
    int db;                 /* the db index */
    fri_str *key;           /* owned copy of the key */
    fr_client **clients;    /* blocked on it, in the order they blocked */
    size_t n, cap;
    key_state seen;         /* the key after the last command */
    int ready;              /* queued in the ready list */
    int busy;               /* being served: not freed even when it has no client left */
    struct bkey *prev, *next; /* every bkey, in the order they were made (the scan order) */
} bkey;

/* One key a blocked client waits on. */
typedef struct wait_key {
    bkey *bk;
    fri_sid gt; /* XREAD: the stream must have an id past this one */
} wait_key;

/* A blocked client's state (c->bpop). */
struct fri_blocked {
    const blocking_cmd *how;
    const fri_command *cmd;
    int argc;
    fri_arg *argv;          /* the command, views into mem */
    char *mem;              /* one block holding every argument */
    wait_key *keys;         /* distinct keys, in argument order */
    size_t nkeys;
    fri_xread_opts xo;      /* XREAD / XREADGROUP options (COUNT, NOACK, GROUP position) */
    int64_t deadline;       /* server clock ms when the timeout fires, 0 for never */
    int64_t claim_at;       /* XREADGROUP ... CLAIM: run again once the clock is past this
                               (a pending entry becomes claimable); INT64_MAX otherwise */
    uint64_t seq;           /* blocking order, to break deadline ties */
    size_t slot;            /* index in the server's blocked array */
};

struct fri_blocking {
    fri_dict *keys[FRI_DBNUM];    /* key -> bkey* (v.ptr), per db */
    bkey *first, *last;           /* every bkey, oldest first */
    bkey **ready;                 /* keys made ready, to serve in this order */
    size_t ready_head, ready_len, ready_cap;
    fr_client **blocked;          /* every blocked client (unordered) */
    size_t nblocked, blocked_cap;
    fri_client_queue woken;       /* woken clients not yet taken */
    uint64_t seq;                 /* the next blocking order number */
    int serving;                  /* fri_blocked_serve_ready is running */
};

/* Appends p to a growable pointer array; aborts when out of memory, like fri_buf (the
 * state must not be left half-updated). */
static void push_ptr(void ***arr, size_t *len, size_t *cap, void *p)
{
    if (*len == *cap) {
        size_t ncap = *cap ? *cap * 2 : 8;
        void **n = fri_realloc(*arr, ncap * sizeof(*n));
        *arr = n;
        *cap = ncap;
    }
    (*arr)[(*len)++] = p;
}

/* The server's blocking state, made on first use; NULL when out of memory. */
static struct fri_blocking *blocking_state(fr_server *s)
{
    _Static_assert(offsetof(struct fri_blocking, keys) == 0, "the tables come first");
    if (!s->blocking) s->blocking = fri_calloc_with_dicts(sizeof(*s->blocking), FRI_DBNUM);
    return s->blocking;
}

/* The key's state now, without deleting anything (an expired key counts as missing). */
static key_state read_state(fr_server *s, const bkey *bk, int64_t now)
{
    key_state st = {.obj = NULL, .type = -1};
    fri_dent *e = fri_dict_find(s->db[bk->db].keys, bk->key->buf, bk->key->len);
    fri_obj *o = e ? e->v.ptr : NULL;
    if (!o || fri_obj_is_expired(o, now)) return st;
    st.obj = o;
    st.type = (int)o->type;
    if (o->type == FRI_STREAM) {
        fri_stream *sm = o->ptr;
        st.last_id = sm->last_id;
        st.groups = sm->cgroups ? fri_dict_size(sm->cgroups) : 0;
    }
    return st;
}

static int blockable_type(int type)
{
    return type == FRI_LIST || type == FRI_ZSET || type == FRI_STREAM;
}

/* Whether going from was to now is an event Redis signals the key ready for. */
static int signalled(const key_state *was, const key_state *now)
{
    int was_stream = was->obj && was->type == FRI_STREAM;
    if (!now->obj || !blockable_type(now->type)) return was_stream; /* a stream went away */
    if (now->obj != was->obj || now->type != was->type) return 1;   /* created, replaced */
    if (now->type != FRI_STREAM) return 0;
    return fri_sid_cmp(now->last_id, was->last_id) != 0 || now->groups < was->groups;
}

/* Notes every waited-on key that the last command made ready, in the order the keys were
 * first waited on. */
static void scan_keys(fr_server *s, int64_t now)
{
    struct fri_blocking *b = s->blocking;
    for (bkey *bk = b->first; bk; bk = bk->next) {
        if (bk->n == 0) continue;
        key_state st = read_state(s, bk, now);
        if (!bk->ready && signalled(&bk->seen, &st)) {
            bk->ready = 1;
            push_ptr((void ***)&b->ready, &b->ready_len, &b->ready_cap, bk);
        }
        bk->seen = st;
    }
}

static void free_bkey(fr_server *s, bkey *bk)
{
    struct fri_blocking *b = s->blocking;
    fri_dict_delete(b->keys[bk->db], bk->key->buf, bk->key->len, NULL);
    if (bk->prev) bk->prev->next = bk->next;
    else b->first = bk->next;
    if (bk->next) bk->next->prev = bk->prev;
    else b->last = bk->prev;
    fri_str_free(bk->key);
    fri_free(bk->clients);
    fri_free(bk);
}

/* The bkey for key in db, made (with the key's current state) if missing. */
static bkey *get_bkey(fr_server *s, int db, const fri_arg *key, int64_t now)
{
    struct fri_blocking *b = s->blocking;
    int created;
    fri_dent *e = fri_dict_add(b->keys[db], key->ptr, key->len, &created);
    if (!created) return e->v.ptr;
    bkey *bk = fri_calloc(1, sizeof(*bk));
    bk->key = fri_str_new(key->ptr, key->len);
    bk->db = db;
    bk->seen = read_state(s, bk, now);
    bk->prev = b->last;
    if (b->last) b->last->next = bk;
    else b->first = bk;
    b->last = bk;
    e->v.ptr = bk;
    return bk;
}

/* ----- Blocking and unblocking ---------------------------------------------------------- */

/* Whether the command's reply, from mark on, is the nil array of an unserved read. */
static int wrote_timeout_reply(const fr_client *c, size_t mark)
{
    return c->out.len - mark == 5 && memcmp(c->out.p + mark, "*-1\r\n", 5) == 0;
}

/* The argv indexes of the keys the command waits on into idx (room for c->argc); returns
 * how many, repeated keys included. */
static int waited_keys(const fr_client *c, const struct fri_blocked *bp, int *idx)
{
    int n = 0;
    switch (bp->how->layout) {
    case LAYOUT_KEYS:
        for (int j = 1; j < c->argc - 1; j++) idx[n++] = j;
        break;
    case LAYOUT_SOURCE:
        idx[n++] = 1;
        break;
    case LAYOUT_NUMKEYS: {
        long long numkeys = 0;
        fri_string2ll(c->argv[2].ptr, c->argv[2].len, &numkeys);
        for (long long j = 0; j < numkeys; j++) idx[n++] = 3 + (int)j;
        break;
    }
    case LAYOUT_STREAMS:
        for (int j = 0; j < bp->xo.nstreams; j++) idx[n++] = bp->xo.streams_arg + j;
        break;
    }
    return n;
}

/* Copies the current command into bp's own memory.  -1 when out of memory. */
static int copy_command(const fr_client *c, struct fri_blocked *bp)
{
    size_t total = 0;
    for (int i = 0; i < c->argc; i++) total += c->argv[i].len + 1;
    bp->argv = fri_malloc(sizeof(fri_arg) * (size_t)c->argc);
    bp->mem = fri_malloc(total);
    if (!bp->argv || !bp->mem) return -1;
    char *w = bp->mem;
    for (int i = 0; i < c->argc; i++) {
        memcpy(w, c->argv[i].ptr, c->argv[i].len);
        w[c->argv[i].len] = '\0';
        bp->argv[i] = (fri_arg){w, c->argv[i].len};
        w += c->argv[i].len + 1;
    }
    bp->argc = c->argc;
    return 0;
}

static void free_blocked(struct fri_blocked *bp)
{
    if (!bp) return;
    fri_free(bp->argv);
    fri_free(bp->mem);
    fri_free(bp->keys);
    fri_free(bp);
}

/* Blocks c on its current command, which wrote the timeout reply at out[mark..]; leaves
 * the reply in place (the command then answers as if it had timed out at once) when the
 * command does not block (XREAD without BLOCK) or memory runs out. */
static void block_client(fr_client *c, const fri_command *cmd, size_t mark)
{
    fr_server *s = c->srv;
    const blocking_cmd *how = find_blocking_cmd(cmd);
    struct fri_blocked *bp = how ? fri_calloc(1, sizeof(*bp)) : NULL;
    if (!bp) return;
    bp->how = how;
    bp->cmd = cmd;
    long long timeout_ms = 0;
    if (how->layout == LAYOUT_STREAMS) {
        /* the handler parsed the same options without error, so this writes nothing */
        if (fri_xread_parse_opts_or_reply(c, strcmp(cmd->name, "xreadgroup") == 0,
                                          &bp->xo) < 0 || bp->xo.timeout < 0) {
            fri_free(bp);
            return;
        }
        timeout_ms = bp->xo.timeout;
    } else {
        const fri_arg *t = &c->argv[how->timeout_arg ? how->timeout_arg : c->argc - 1];
        if (fri_get_timeout_or_reply(c, t, &timeout_ms) < 0) {
            fri_free(bp);
            return;
        }
    }
    int *idx = fri_malloc(sizeof(int) * (size_t)c->argc);
    bp->keys = fri_malloc(sizeof(wait_key) * (size_t)c->argc);
    struct fri_blocking *b = blocking_state(s);
    if (!idx || !bp->keys || !b || copy_command(c, bp) < 0) {
        fri_free(idx);
        free_blocked(bp);
        return;
    }
    int nidx = waited_keys(c, bp, idx);
    int db = c->db->id;
    for (int i = 0; i < nidx; i++) {
        const fri_arg *key = &c->argv[idx[i]];
        bkey *bk = get_bkey(s, db, key, c->now_ms);
        int dup = 0;
        for (size_t j = 0; j < bp->nkeys; j++) dup |= bp->keys[j].bk == bk;
        if (dup) continue; /* Redis waits on a key once, with its first id */
        wait_key wk = {.bk = bk};
        if (how->layout == LAYOUT_STREAMS && !bp->xo.group_arg) {
            const fri_arg *ida = &c->argv[idx[i] + bp->xo.nstreams];
            if (ida->len == 1 && ida->ptr[0] == '$')
                wk.gt = bk->seen.type == FRI_STREAM ? bk->seen.last_id : FRI_SID_MIN;
            else
                fri_sid_parse_or_reply(NULL, ida, &wk.gt, 0, 1, NULL);
        }
        push_ptr((void ***)&bk->clients, &bk->n, &bk->cap, c);
        bp->keys[bp->nkeys++] = wk;
    }
    fri_free(idx);
    bp->deadline = timeout_ms > 0 ? c->now_ms + timeout_ms : 0;
    bp->claim_at = how->layout == LAYOUT_STREAMS
                       ? fri_xreadgroup_claim_at(c, c->argc, c->argv, &bp->xo)
                       : INT64_MAX;
    bp->seq = b->seq++;
    bp->slot = b->nblocked;
    push_ptr((void ***)&b->blocked, &b->nblocked, &b->blocked_cap, c);
    c->bpop = bp;
    c->out.len = mark; /* the command answers nothing until it is woken */
    c->woken_out.len = 0;
}

/* Takes c out of every key's queue and the blocked array, frees its state. */
static void unblock_client(fr_client *c)
{
    fr_server *s = c->srv;
    struct fri_blocking *b = s->blocking;
    struct fri_blocked *bp = c->bpop;
    if (!bp) return;
    for (size_t i = 0; i < bp->nkeys; i++) {
        bkey *bk = bp->keys[i].bk;
        for (size_t j = 0; j < bk->n; j++) {
            if (bk->clients[j] != c) continue;
            memmove(&bk->clients[j], &bk->clients[j + 1], (bk->n - j - 1) * sizeof(c));
            bk->n--;
            break;
        }
        if (bk->n == 0 && !bk->ready && !bk->busy) free_bkey(s, bk);
    }
    fr_client *last = b->blocked[--b->nblocked];
    b->blocked[bp->slot] = last;
    last->bpop->slot = bp->slot;
    c->bpop = NULL;
    free_blocked(bp);
}

/* Unblocks c, whose reply is in c->woken_out, and queues it as woken. */
static void wake(fr_client *c)
{
    struct fri_blocking *b = c->srv->blocking;
    unblock_client(c);
    fri_cq_push(&b->woken, c);
    c->woken_listed = 1;
}

/* Runs fn with c's replies going into c->woken_out (emptied first), so that c->out keeps
 * the replies of the call that blocked. */
static int into_woken(fr_client *c, int (*fn)(fr_client *, void *), void *arg)
{
    fri_buf saved = c->out;
    c->out = c->woken_out;
    c->out.len = 0;
    int r = fn(c, arg);
    c->woken_out = c->out;
    c->out = saved;
    return r;
}

/* into_woken for a serve, not a timeout: counted as 7.0.15's updateStatsOnUnblock counts
 * it (stats.c), failed when the serve wrote an error (or always, forced_error). */
static int serve_counted(fr_client *c, int (*fn)(fr_client *, void *), void *arg,
                         int forced_error)
{
    const fri_command *cmd = c->bpop->cmd;
    uint64_t start = fri_stats_now(c->srv), errors = fri_stats_errors(c->srv);
    fri_prop_frame frame; /* a served client's writes are a batch of their own */
    if (c->srv->prop) fri_propagate_served(c, &frame, 1);
    int served = into_woken(c, fn, arg);
    if (c->srv->prop) fri_propagate_served(c, &frame, 0);
    if (!served) return 0;
    fri_stats_unblocked(c, cmd, start, forced_error || fri_stats_errors(c->srv) != errors);
    return 1;
}

void fri_blocked_after_call(fr_client *c, const fri_command *cmd, size_t out_mark)
{
    fr_server *s = c->srv;
    if ((cmd->flags & FRI_CMD_BLOCKING) && c->blocking && !c->in_exec && !c->bpop &&
        wrote_timeout_reply(c, out_mark))
        block_client(c, cmd, out_mark);
    if (s->blocking && s->blocking->nblocked) scan_keys(s, c->now_ms);
}

/* ----- Serving ----------------------------------------------------------------------------- */

/* What serving one client on one key needs. */
typedef struct serve_ctx {
    bkey *bk;
    const wait_key *wk;
    int served; /* the client got its reply */
} serve_ctx;

/* Runs a list or sorted-set client's command again on the ready key alone. */
static int rerun_on_key(fr_client *c, void *arg)
{
    serve_ctx *sc = arg;
    struct fri_blocked *bp = c->bpop;
    const fri_arg key = {sc->bk->key->buf, sc->bk->key->len};
    fri_arg small[16];
    fri_arg *argv = bp->argv;
    int argc = bp->argc;
    if (bp->how->layout == LAYOUT_KEYS) {
        small[0] = bp->argv[0];
        small[1] = key;
        small[2] = bp->argv[bp->argc - 1];
        argv = small;
        argc = 3;
    } else if (bp->how->layout == LAYOUT_NUMKEYS) {
        long long numkeys = 0;
        fri_string2ll(bp->argv[2].ptr, bp->argv[2].len, &numkeys);
        int rest = bp->argc - 3 - (int)numkeys; /* direction and options */
        argv = rest + 4 <= 16 ? small : fri_malloc(sizeof(fri_arg) * (size_t)(rest + 4));
        argv[0] = bp->argv[0];
        argv[1] = bp->argv[1];
        argv[2] = (fri_arg){"1", 1};
        argv[3] = key;
        memcpy(&argv[4], &bp->argv[3 + numkeys], sizeof(fri_arg) * (size_t)rest);
        argc = rest + 4;
    }
    c->argc = argc;
    c->argv = argv;
    c->cmd = bp->cmd;
    bp->cmd->proc(c);
    if (argv != small && argv != bp->argv) fri_free(argv);
    c->argc = 0;
    c->argv = NULL;
    return 1;
}

/* Whether c is blocked in XREADGROUP ... CLAIM (served the way Redis 8.4 serves it). */
static int is_claim_read(const fr_client *c)
{
    return c->bpop->xo.group_arg && c->bpop->xo.claim >= 0;
}

/* Serves an XREADGROUP ... CLAIM client the way Redis 8.4 serves every blocked client:
 * by running its whole command again (all its streams: claims and new entries, or the
 * error a deleted key or group now gives).  When that finds nothing either, the client
 * stays blocked (with its first deadline and place in line) and its claim time is
 * computed again.  Returns 1 when it replied. */
static int rerun_claim(fr_client *c, void *arg)
{
    (void)arg;
    struct fri_blocked *bp = c->bpop;
    size_t mark = c->out.len;
    c->argc = bp->argc;
    c->argv = bp->argv;
    c->cmd = bp->cmd;
    bp->cmd->proc(c);
    int served = !wrote_timeout_reply(c, mark);
    if (!served) {
        c->out.len = mark;
        bp->claim_at = fri_xreadgroup_claim_at(c, bp->argc, bp->argv, &bp->xo);
    }
    c->argc = 0;
    c->argv = NULL;
    return served;
}

/* Serves an XREAD client when the stream grew past its id: [[key, entries]]. */
static int serve_xread(fr_client *c, void *arg)
{
    serve_ctx *sc = arg;
    const fri_arg key = {sc->bk->key->buf, sc->bk->key->len};
    fri_obj *o = fri_lookup_read(c, &key);
    if (!o || o->type != FRI_STREAM) return 0;
    fri_stream *s = o->ptr;
    if (fri_sid_cmp(s->last_id, sc->wk->gt) <= 0) return 0;
    fri_sid start = sc->wk->gt;
    fri_sid_incr(&start);
    fri_reply_array_len(c, 1);
    fri_reply_array_len(c, 2);
    fri_reply_bulk(c, key.ptr, key.len);
    fri_stream_reply_range(c, s, start, FRI_SID_MAX, (size_t)c->bpop->xo.count, 0);
    return 1;
}

/* Serves an XREADGROUP client (t_stream_group.c knows the group's rules). */
static int serve_xreadgroup(fr_client *c, void *arg)
{
    serve_ctx *sc = arg;
    struct fri_blocked *bp = c->bpop;
    const fri_arg key = {sc->bk->key->buf, sc->bk->key->len};
    return fri_xreadgroup_serve_blocked(c, &key, &bp->argv[bp->xo.group_arg],
                                        &bp->argv[bp->xo.group_arg + 1], bp->xo.count,
                                        bp->xo.noack);
}

static int reply_key_gone(fr_client *c, void *arg)
{
    (void)arg;
    fri_reply_error(c, "UNBLOCKED the stream key no longer exists");
    return 1;
}

static int wait_kind(const fr_client *c) { return c->bpop->how->kind; }

static const wait_key *find_wait(const fr_client *c, const bkey *bk)
{
    for (size_t i = 0; c->bpop && i < c->bpop->nkeys; i++)
        if (c->bpop->keys[i].bk == bk) return &c->bpop->keys[i];
    return NULL;
}

/* Serves the clients blocked on one ready key, in the order they blocked. */
static void serve_key(fr_server *s, bkey *bk)
{
    fri_db *db = &s->db[bk->db];
    int64_t now = fr_clock_now(s);
    fri_obj *o = fri_db_lookup(s, db, bk->key->buf, bk->key->len, now);
    int type = o ? (int)o->type : -1;
    /* the queue changes as clients are served: walk a copy, skipping those gone */
    size_t n = bk->n;
    fr_client **order = fri_malloc((n ? n : 1) * sizeof(*order));
    memcpy(order, bk->clients, n * sizeof(*order));
    int want = type == FRI_LIST ? WAIT_LIST : type == FRI_ZSET ? WAIT_ZSET
             : type == FRI_STREAM ? WAIT_STREAM : 0;
    for (size_t i = 0; want && i < n; i++) {
        fr_client *c = order[i];
        const wait_key *wk = find_wait(c, bk);
        if (!wk || wait_kind(c) != want) continue;
        if (want != WAIT_STREAM) {
            /* an earlier client may have emptied it: the rest wait on */
            fri_obj *cur = fri_db_lookup(s, db, bk->key->buf, bk->key->len, now);
            if (!cur || (int)cur->type != type) break;
        }
        serve_ctx sc = {.bk = bk, .wk = wk};
        c->now_ms = now;
        int (*fn)(fr_client *, void *) = want != WAIT_STREAM ? rerun_on_key
                                       : is_claim_read(c)      ? rerun_claim
                                       : c->bpop->xo.group_arg ? serve_xreadgroup
                                                               : serve_xread;
        if (!serve_counted(c, fn, &sc, 0)) continue;
        wake(c);
        scan_keys(s, now); /* BLMOVE may have made its destination ready */
    }
    if (type != FRI_STREAM) {
        /* XREADGROUP cannot wait on a key that is gone or no longer a stream */
        for (size_t i = 0; i < n; i++) {
            fr_client *c = order[i];
            if (!find_wait(c, bk) || wait_kind(c) != WAIT_STREAM || !c->bpop->xo.group_arg)
                continue;
            c->now_ms = now;
            /* 8.4 runs a CLAIM read again: NOGROUP for a key gone, WRONGTYPE ... */
            if (!serve_counted(c, is_claim_read(c) ? rerun_claim : reply_key_gone, NULL, 0))
                continue;
            wake(c);
        }
    }
    fri_free(order);
}

void fri_blocked_serve_ready(fr_server *s)
{
    struct fri_blocking *b = s->blocking;
    if (!b || b->serving || b->ready_head == b->ready_len) return;
    b->serving = 1;
    while (b->ready_head < b->ready_len) {
        bkey *bk = b->ready[b->ready_head++];
        bk->ready = 0;
        bk->busy = 1;
        if (bk->n) serve_key(s, bk);
        bk->busy = 0;
        if (bk->n == 0 && !bk->ready) free_bkey(s, bk);
    }
    b->ready_head = b->ready_len = 0;
    b->serving = 0;
}

/* ----- Timeouts, CLIENT UNBLOCK, the woken queue --------------------------------------- */

static int reply_timeout(fr_client *c, void *arg)
{
    (void)arg;
    fri_reply_null_array(c);
    return 1;
}

static int reply_unblocked(fr_client *c, void *arg)
{
    (void)arg;
    fri_reply_error(c, "UNBLOCKED client unblocked via CLIENT UNBLOCK");
    return 1;
}

int64_t fr_server_next_deadline(const fr_server *s)
{
    const struct fri_blocking *b = s->blocking;
    int64_t best = -1;
    for (size_t i = 0; b && i < b->nblocked; i++) {
        const struct fri_blocked *bp = b->blocked[i]->bpop;
        int64_t d = bp->deadline;
        if (d && (best < 0 || d < best)) best = d;
        /* a CLAIM read is run again at the first ms past its claim time */
        if (bp->claim_at != INT64_MAX && (best < 0 || bp->claim_at + 1 < best))
            best = bp->claim_at + 1;
    }
    return best;
}

static int by_seq(const void *pa, const void *pb)
{
    const struct fri_blocked *a = (*(fr_client *const *)pa)->bpop;
    const struct fri_blocked *b = (*(fr_client *const *)pb)->bpop;
    return a->seq < b->seq ? -1 : a->seq > b->seq;
}

static int by_deadline(const void *pa, const void *pb)
{
    const struct fri_blocked *a = (*(fr_client *const *)pa)->bpop;
    const struct fri_blocked *b = (*(fr_client *const *)pb)->bpop;
    if (a->deadline != b->deadline) return a->deadline < b->deadline ? -1 : 1;
    return a->seq < b->seq ? -1 : a->seq > b->seq;
}

static size_t server_expire_blocked_guarded(fr_server *s)
{
    struct fri_blocking *b = s->blocking;
    if (!b || !b->nblocked) return 0;
    int64_t now = fr_clock_now(s);
    fr_client **due = fri_malloc(b->nblocked * sizeof(*due));
    if (!due) return 0;
    size_t n = 0;
    for (size_t i = 0; i < b->nblocked; i++) {
        int64_t d = b->blocked[i]->bpop->deadline;
        if (d && d <= now) due[n++] = b->blocked[i];
    }
    qsort(due, n, sizeof(*due), by_deadline);
    for (size_t i = 0; i < n; i++) {
        into_woken(due[i], reply_timeout, NULL);
        wake(due[i]);
    }
    /* then, as Redis 8.4's blockedBeforeSleep does after the timeouts, the CLAIM reads
     * whose claim time has passed run again, in the order they blocked */
    size_t woken = n;
    n = 0;
    for (size_t i = 0; i < b->nblocked; i++)
        if (b->blocked[i]->bpop->claim_at < now) due[n++] = b->blocked[i];
    qsort(due, n, sizeof(*due), by_seq);
    for (size_t i = 0; i < n; i++) {
        due[i]->now_ms = now;
        if (!serve_counted(due[i], rerun_claim, NULL, 0)) continue;
        wake(due[i]);
        woken++;
    }
    if (n) scan_keys(s, now);
    fri_free(due);
    return woken;
}

size_t fr_server_expire_blocked(fr_server *s)
{
    fr_server *guard = fri_mem_enter(s, "fr_server_expire_blocked");
    size_t r = server_expire_blocked_guarded(s);
    fri_mem_leave(guard);
    return r;
}

static int client_unblock_guarded(fr_client *c, int error)
{
    if (!c->bpop) return 0;
    serve_counted(c, error ? reply_unblocked : reply_timeout, NULL, 1);
    wake(c);
    return 1;
}

int fr_client_unblock(fr_client *c, int error)
{
    fr_server *guard = fri_mem_enter(c->srv, "fr_client_unblock");
    int r = client_unblock_guarded(c, error);
    fri_mem_leave(guard);
    return r;
}

fr_client *fr_server_take_woken(fr_server *s)
{
    fr_client *c = s->blocking ? fri_cq_take(&s->blocking->woken) : NULL;
    if (c) c->woken_listed = 0;
    return c;
}

const char *fr_client_woken_resp(const fr_client *c, size_t *len)
{
    if (len) *len = c->woken_out.len;
    return c->woken_out.p ? c->woken_out.p : "";
}

static const fr_reply *client_woken_reply_guarded(fr_client *c)
{
    if (!c->woken_out.len) return NULL;
    /* parse a copy in place, so that the raw bytes stay as they are */
    c->woken_parsed.len = 0;
    fri_buf_append(&c->woken_parsed, c->woken_out.p, c->woken_out.len);
    const fr_reply *r;
    fri_buf saved = c->out;
    c->out = c->woken_parsed;
    fri_parse_replies(c, 1, &r);
    c->woken_parsed = c->out;
    c->out = saved;
    return r;
}

const fr_reply *fr_client_woken_reply(fr_client *c)
{
    fr_server *guard = fri_mem_enter(c->srv, "fr_client_woken_reply");
    const fr_reply *r = client_woken_reply_guarded(c);
    fri_mem_leave(guard);
    return r;
}

void fr_client_set_blocking(fr_client *c, int on) { c->blocking = on != 0; }
int fr_client_is_blocked(const fr_client *c) { return c->bpop != NULL; }

size_t fr_server_blocked_count(const fr_server *s)
{
    return s->blocking ? s->blocking->nblocked : 0;
}

void fri_blocked_client_free(fr_client *c)
{
    struct fri_blocking *b = c->srv->blocking;
    if (c->bpop) unblock_client(c);
    if (b && c->woken_listed) fri_cq_forget(&b->woken, c);
    fri_buf_free(&c->woken_out);
    fri_buf_free(&c->woken_parsed);
}

void fri_blocked_server_free(fr_server *s)
{
    struct fri_blocking *b = s->blocking;
    if (!b) return;
    while (b->first) free_bkey(s, b->first);
    for (int i = 0; i < FRI_DBNUM; i++) fri_dict_free(b->keys[i], NULL);
    fri_free(b->ready);
    fri_free(b->blocked);
    fri_cq_free(&b->woken);
    fri_free(b);
    s->blocking = NULL;
}
