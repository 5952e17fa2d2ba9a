/* pubsub.c -- Pub/Sub as Redis 7.0 runs it: SUBSCRIBE, PSUBSCRIBE, SSUBSCRIBE and their
 * UNSUBSCRIBEs, PUBLISH and SPUBLISH, the PUBSUB introspection commands, subscribed mode,
 * the per-client queue of pushed messages, and the server's log of published messages.
 *
 * The server maps each channel, pattern and shard channel to its subscribers in the order
 * they subscribed; each client keeps its own subscriptions in the order it made them.
 * Redis keeps several of these in hash tables seeded at startup, so where it lists them
 * in hash order (UNSUBSCRIBE without arguments, PUBSUB CHANNELS, the patterns a message
 * matches) the real order changes from run to run; the fake uses subscription order,
 * one of the orders Redis may give.
 *
 * A message for a subscriber is a push: Redis writes it into that connection's output
 * between replies.  The fake queues it on the receiving client (RESP2 bytes in c->push)
 * and lists the client in the server's pushed queue, for a server to write out or an
 * in-process caller to take as reply trees.  Only a client publishing to itself inside
 * EXEC gets the message in its own reply, at the point where Redis writes it. */
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "fr_int.h"
#include "reply_int.h"

/* ----- State ----------------------------------------------------------------------------- */

/* The three namespaces of subscriptions. */
enum { SUB_CHANNEL, SUB_PATTERN, SUB_SHARD, SUB_KINDS };

/* What each namespace answers: the confirmation words and the push's first word. */
static const struct sub_kind {
    const char *subscribe;   /* ["subscribe", name, count] */
    const char *unsubscribe; /* ["unsubscribe", name, count] */
} kinds[SUB_KINDS] = {
    {"subscribe", "unsubscribe"},
    {"psubscribe", "punsubscribe"},
    {"ssubscribe", "sunsubscribe"},
};

/* The clients subscribed to one name, in the order they subscribed (a publish delivers in
 * that order). */
typedef struct subscribers {
    size_t n, cap;
    fr_client **c;
} subscribers;

struct fri_pubsub {
    fri_dict *names[SUB_KINDS]; /* name -> subscribers* (v.ptr), only names with one */
    fri_client_queue pushed;    /* clients given pushes since a server last took them */
};

/* A client's subscriptions: names only (the values are unused), in subscription order. */
struct fri_client_subs {
    fri_dict *names[SUB_KINDS];
};

/* The server's tables, made on first use; NULL when out of memory. */
static struct fri_pubsub *server_state(fr_server *s)
{
    _Static_assert(offsetof(struct fri_pubsub, names) == 0, "the tables come first");
    if (!s->pubsub) s->pubsub = fri_calloc_with_dicts(sizeof(*s->pubsub), SUB_KINDS);
    return s->pubsub;
}

/* The client's tables, made on first use; NULL when out of memory. */
static struct fri_client_subs *client_state(fr_client *c)
{
    _Static_assert(offsetof(struct fri_client_subs, names) == 0, "the tables come first");
    if (!c->subs) c->subs = fri_calloc_with_dicts(sizeof(*c->subs), SUB_KINDS);
    return c->subs;
}

static size_t client_count(const fr_client *c, int kind)
{
    return c->subs ? fri_dict_size(c->subs->names[kind]) : 0;
}

/* The count a confirmation carries: shard subscriptions count apart, channels and
 * patterns together (Redis's clientSubscriptionsCount / clientShardSubscriptionsCount). */
static long long reply_count(const fr_client *c, int kind)
{
    if (kind == SUB_SHARD) return (long long)client_count(c, SUB_SHARD);
    return (long long)(client_count(c, SUB_CHANNEL) + client_count(c, SUB_PATTERN));
}

int fri_pubsub_subscribed(const fr_client *c)
{
    return c->subs && (client_count(c, SUB_CHANNEL) || client_count(c, SUB_PATTERN) ||
                       client_count(c, SUB_SHARD));
}

size_t fr_client_subscriptions(const fr_client *c)
{
    return client_count(c, SUB_CHANNEL) + client_count(c, SUB_PATTERN) +
           client_count(c, SUB_SHARD);
}

/* ----- Subscribing ------------------------------------------------------------------------- */

/* Writes a confirmation ["subscribe", name, count]; name NULL writes a nil name (an
 * UNSUBSCRIBE without arguments by a client with nothing to leave). */
static void reply_confirmation(fr_client *c, const char *word, const char *name, size_t len,
                               long long count)
{
    fri_reply_array_len(c, 3);
    fri_reply_bulk_cstr(c, word);
    if (name) fri_reply_bulk(c, name, len);
    else fri_reply_nil(c);
    fri_reply_ll(c, count);
}

/* Subscribes c to name (nothing changes if it already is) and confirms.  Out of memory
 * answers the OOM error for this name and changes nothing. */
static void subscribe_one(fr_client *c, int kind, const char *name, size_t len)
{
    struct fri_pubsub *ps = server_state(c->srv);
    struct fri_client_subs *cs = client_state(c);
    int created;
    fri_dent *mine = (ps && cs) ? fri_dict_add(cs->names[kind], name, len, &created) : NULL;
    if (!mine) goto oom;
    if (created) {
        int fresh;
        fri_dent *e = fri_dict_add(ps->names[kind], name, len, &fresh);
        subscribers *sl = e ? e->v.ptr : NULL;
        if (e && fresh) {
            sl = fri_calloc(1, sizeof(*sl));
            if (!sl) fri_dict_delete(ps->names[kind], name, len, NULL);
            else e->v.ptr = sl;
        }
        if (sl && sl->n == sl->cap) {
            size_t cap = sl->cap ? sl->cap * 2 : 4;
            fr_client **n = fri_realloc(sl->c, cap * sizeof(*n));
            if (n) {
                sl->c = n;
                sl->cap = cap;
            }
        }
        if (!sl || sl->n == sl->cap) {
            if (sl && sl->n == 0) { /* made for this client: nobody else listens */
                fri_dict_delete(ps->names[kind], name, len, NULL);
                fri_free(sl->c);
                fri_free(sl);
            }
            fri_dict_delete(cs->names[kind], name, len, NULL);
            goto oom;
        }
        sl->c[sl->n++] = c;
    }
    reply_confirmation(c, kinds[kind].subscribe, name, len, reply_count(c, kind));
    return;
oom:
    fri_reply_error(c, FRI_ERR_OOM);
}

/* Removes c from the subscribers of name, dropping the name when nobody is left. */
static void remove_subscriber(fr_server *s, int kind, const char *name, size_t len,
                              fr_client *c)
{
    fri_dent *e = s->pubsub ? fri_dict_find(s->pubsub->names[kind], name, len) : NULL;
    if (!e) return;
    subscribers *sl = e->v.ptr;
    for (size_t i = 0; i < sl->n; i++) {
        if (sl->c[i] != c) continue;
        memmove(&sl->c[i], &sl->c[i + 1], (sl->n - i - 1) * sizeof(sl->c[0]));
        sl->n--;
        break;
    }
    if (sl->n == 0) {
        fri_dict_delete(s->pubsub->names[kind], name, len, NULL);
        fri_free(sl->c);
        fri_free(sl);
    }
}

/* Unsubscribes c from name and, when notify, confirms (also when c was not subscribed,
 * as Redis does). */
static void unsubscribe_one(fr_client *c, int kind, const char *name, size_t len, int notify)
{
    if (c->subs && fri_dict_delete(c->subs->names[kind], name, len, NULL))
        remove_subscriber(c->srv, kind, name, len, c);
    if (notify) reply_confirmation(c, kinds[kind].unsubscribe, name, len, reply_count(c, kind));
}

/* Unsubscribes c from every name of a kind, in the order it subscribed, confirming each
 * when notify; with nothing to leave, notify confirms a nil name. */
static void unsubscribe_all(fr_client *c, int kind, int notify)
{
    size_t n = client_count(c, kind);
    if (n == 0) {
        if (notify) reply_confirmation(c, kinds[kind].unsubscribe, NULL, 0, reply_count(c, kind));
        return;
    }
    /* Deleting leaves the table's order alone, but the names die with their entries:
     * take copies first. */
    fri_dict *d = c->subs->names[kind];
    fri_str **names = fri_malloc(n * sizeof(*names));
    size_t got = 0;
    for (size_t i = 0; names && i < fri_dict_slots(d) && got < n; i++) {
        fri_dent *e = fri_dict_slot(d, i);
        if (e && !(names[got] = fri_str_new(e->key->buf, e->key->len))) break;
        if (e) got++;
    }
    if (!names || got < n) {
        for (size_t i = 0; names && i < got; i++) fri_str_free(names[i]);
        fri_free(names);
        if (notify) fri_reply_error(c, FRI_ERR_OOM);
        return;
    }
    for (size_t i = 0; i < n; i++) {
        unsubscribe_one(c, kind, names[i]->buf, names[i]->len, notify);
        fri_str_free(names[i]);
    }
    fri_free(names);
}

int fri_pubsub_each(fr_client *c, int (*fn)(void *ctx, int kind, const char *p, size_t n),
                    void *ctx)
{
    if (!c->subs) return 0;
    for (int k = 0; k < SUB_KINDS; k++) {
        fri_dict *d = c->subs->names[k];
        for (size_t i = 0; i < fri_dict_slots(d); i++) {
            fri_dent *e = fri_dict_slot(d, i);
            if (!e || !e->key) continue;
            int r = fn(ctx, k, e->key->buf, e->key->len);
            if (r) return r;
        }
    }
    return 0;
}

int fr_client_set_protocol(fr_client *c, int proto)
{
    if (proto != 2 && proto != 3) return -1;
    c->proto = proto;
    return 0;
}

static void client_pubsub_reset_guarded(fr_client *c)
{
    if (!c->subs) return;
    for (int k = 0; k < SUB_KINDS; k++) unsubscribe_all(c, k, 0);
}

void fr_client_pubsub_reset(fr_client *c)
{
    fr_server *guard = fri_mem_enter(c->srv, "fr_client_pubsub_reset");
    client_pubsub_reset_guarded(c);
    fri_mem_leave(guard);
}

void fri_pubsub_client_free(fr_client *c)
{
    fr_client_pubsub_reset(c);
    if (c->subs) {
        for (int k = 0; k < SUB_KINDS; k++) fri_dict_free(c->subs->names[k], NULL);
        fri_free(c->subs);
        c->subs = NULL;
    }
    struct fri_pubsub *ps = c->srv->pubsub;
    if (ps && c->push_listed) fri_cq_forget(&ps->pushed, c);
    fri_buf_free(&c->push);
    fri_buf_free(&c->push_taken);
}

static void free_subscribers(fri_val *v)
{
    subscribers *sl = v->ptr;
    fri_free(sl->c);
    fri_free(sl);
}

void fri_pubsub_server_free(fr_server *s)
{
    struct fri_pubsub *ps = s->pubsub;
    if (!ps) return;
    for (int k = 0; k < SUB_KINDS; k++) fri_dict_free(ps->names[k], free_subscribers);
    fri_cq_free(&ps->pushed);
    fri_free(ps);
    s->pubsub = NULL;
}

/* SUBSCRIBE channel [channel ...] (allowed inside MULTI: EXEC then subscribes). */
static void subscribe_command(fr_client *c)
{
    for (int j = 1; j < c->argc; j++)
        subscribe_one(c, SUB_CHANNEL, c->argv[j].ptr, c->argv[j].len);
}

static void psubscribe_command(fr_client *c)
{
    for (int j = 1; j < c->argc; j++)
        subscribe_one(c, SUB_PATTERN, c->argv[j].ptr, c->argv[j].len);
}

/* SSUBSCRIBE shardchannel [...]: unlike SUBSCRIBE, refused when EXEC runs it, as Redis
 * refuses it to a client that may not block. */
static void ssubscribe_command(fr_client *c)
{
    if (c->in_exec) {
        fri_reply_error(c, "ERR SSUBSCRIBE isn't allowed for a DENY BLOCKING client");
        return;
    }
    for (int j = 1; j < c->argc; j++)
        subscribe_one(c, SUB_SHARD, c->argv[j].ptr, c->argv[j].len);
}

/* The UNSUBSCRIBEs: the named ones, or every one of the kind without arguments. */
static void unsubscribe_generic(fr_client *c, int kind)
{
    if (c->argc == 1) {
        unsubscribe_all(c, kind, 1);
        return;
    }
    for (int j = 1; j < c->argc; j++) unsubscribe_one(c, kind, c->argv[j].ptr, c->argv[j].len, 1);
}

static void unsubscribe_command(fr_client *c) { unsubscribe_generic(c, SUB_CHANNEL); }
static void punsubscribe_command(fr_client *c) { unsubscribe_generic(c, SUB_PATTERN); }
static void sunsubscribe_command(fr_client *c) { unsubscribe_generic(c, SUB_SHARD); }

/* ----- Subscribed mode --------------------------------------------------------------------- */

int fri_pubsub_gate(fr_client *c, const fri_command *cmd)
{
    static const char *const allowed[] = {
        "subscribe", "ssubscribe", "unsubscribe", "sunsubscribe", "psubscribe",
        "punsubscribe", "ping", "quit", "reset", NULL,
    };
    if (c->proto == 3 || !fri_pubsub_subscribed(c)) return 0;
    for (const char *const *a = allowed; *a; a++)
        if (strcmp(cmd->name, *a) == 0) return 0;
    if (c->in_multi) c->dirty_exec = 1;
    fri_reply_errorf(c, "ERR Can't execute '%s': only (P|S)SUBSCRIBE / (P|S)UNSUBSCRIBE / "
                        "PING / QUIT / RESET are allowed in this context", cmd->name);
    return -1;
}

int fri_pubsub_ping(fr_client *c)
{
    if (c->proto == 3 || !fri_pubsub_subscribed(c)) return 0;
    fri_reply_array_len(c, 2);
    fri_reply_bulk(c, "pong", 4);
    if (c->argc == 1) fri_reply_bulk(c, "", 0);
    else fri_reply_bulk(c, c->argv[1].ptr, c->argv[1].len);
    return 1;
}

/* ----- Pushes ----------------------------------------------------------------------------- */

/* Appends a RESP2 header (`$5\r\n`, `*3\r\n`) to b, without printf's machinery: a
 * message to a subscriber is one array header and a few bulk headers. */
static void buf_header(fri_buf *b, char type, size_t n)
{
    char t[32];
    t[0] = type;
    size_t k = 1 + fri_ull2string(t + 1, sizeof t - 3, n);
    t[k++] = '\r';
    t[k++] = '\n';
    fri_buf_append(b, t, k);
}

/* Appends a bulk string's RESP2 bytes to b. */
static void buf_bulk(fri_buf *b, const char *p, size_t len)
{
    buf_header(b, '$', len);
    fri_buf_append(b, p, len);
    fri_buf_append(b, "\r\n", 2);
}

/* Delivers the array parts[0..n) to the subscriber to, on behalf of the publishing
 * client from: into from's own reply when it is the receiver inside EXEC (where Redis
 * writes it, inside EXEC's array), otherwise onto to's push queue (a RESP3 client
 * receiving its own message or notification outside EXEC: a server writes the queue
 * before the command's reply, where Redis writes it). */
static void deliver(fr_server *s, fr_client *from, fr_client *to, int n,
                    const fri_arg *parts)
{
    if (to == from && from->in_exec) {
        fri_reply_array_len(from, n);
        for (int i = 0; i < n; i++) fri_reply_bulk(from, parts[i].ptr, parts[i].len);
        return;
    }
    buf_header(&to->push, '*', (size_t)n);
    for (int i = 0; i < n; i++) buf_bulk(&to->push, parts[i].ptr, parts[i].len);
    to->push_count++;
    struct fri_pubsub *ps = s->pubsub;
    if (to->push_listed) return;
    fri_cq_push(&ps->pushed, to); /* aborts when out of memory: the bytes are queued */
    to->push_listed = 1;
}

size_t fr_client_push_count(const fr_client *c) { return c->push_count; }

const char *fr_client_push_resp(const fr_client *c, size_t *len)
{
    if (len) *len = c->push.len;
    return c->push.p ? c->push.p : "";
}

void fr_client_push_clear(fr_client *c)
{
    c->push.len = 0;
    c->push_count = 0;
}

/* Parses the n replies held in b into one array of trees from c's arena (b's bytes are
 * rewritten in place, as fr_exec's are).  NULL when out of memory. */
static const fr_reply *parse_buffer(fr_client *c, fri_buf *b, size_t n)
{
    const fr_reply **ptrs = fri_arena_alloc(c, n * sizeof(*ptrs));
    fr_reply *arr = fri_arena_alloc(c, n * sizeof(*arr));
    if (!ptrs || !arr) return NULL;
    fri_buf saved = c->out;
    c->out = *b;
    int rc = fri_parse_replies(c, n, ptrs);
    *b = c->out;
    c->out = saved;
    if (rc < 0) return NULL;
    for (size_t i = 0; i < n; i++) arr[i] = *ptrs[i];
    return arr;
}

static size_t client_take_pushes_guarded(fr_client *c, const fr_reply **pushes)
{
    size_t n = c->push_count;
    *pushes = NULL;
    if (n == 0) return 0;
    fri_buf t = c->push_taken;
    c->push_taken = c->push;
    c->push = t;
    fr_client_push_clear(c);
    *pushes = parse_buffer(c, &c->push_taken, n);
    return *pushes ? n : 0;
}

size_t fr_client_take_pushes(fr_client *c, const fr_reply **pushes)
{
    fr_server *guard = fri_mem_enter(c->srv, "fr_client_take_pushes");
    size_t r = client_take_pushes_guarded(c, pushes);
    fri_mem_leave(guard);
    return r;
}

fr_client *fr_server_take_pushed(fr_server *s)
{
    fr_client *c;
    while (s->pubsub && (c = fri_cq_take(&s->pubsub->pushed))) {
        c->push_listed = 0;
        if (c->push_count) return c;
    }
    return NULL;
}

/* ----- Publishing ---------------------------------------------------------------------------- */

/* The bytes a logged message counts against the log's bound. */
static size_t message_bytes(const fr_message *m) { return m->channel_len + m->payload_len; }

/* Drops the oldest logged message, counting it. */
static void drop_oldest(fr_server *s)
{
    fr_message *m = &s->published[s->published_head];
    s->published_bytes -= message_bytes(m);
    fri_free((void *)m->channel);
    s->published_head = (s->published_head + 1) % s->published_cap;
    s->published_len--;
    s->published_dropped++;
}

/* Makes room in the ring for one more message, growing it (geometrically, up to the
 * message bound) when it is full.  -1 when out of memory. */
static int ring_room(fr_server *s)
{
    if (s->published_len < s->published_cap) return 0;
    size_t cap = s->published_cap ? 2 * s->published_cap : 16;
    if (cap > s->published_max) cap = s->published_max;
    fr_message *n = fri_malloc(cap * sizeof(*n));
    if (!n) return -1;
    /* unrolled oldest first, so the head is slot 0 again */
    for (size_t i = 0; i < s->published_len; i++)
        n[i] = s->published[(s->published_head + i) % s->published_cap];
    fri_free(s->published);
    s->published = n;
    s->published_cap = cap;
    s->published_head = 0;
    return 0;
}

/* Appends a message to the server's log (fr_published), dropping the oldest as the
 * bounds require.  -1 when out of memory. */
static int log_message(fr_server *s, int64_t at_ms, const fri_arg *ch, const fri_arg *msg)
{
    size_t bytes = ch->len + msg->len;
    if (s->published_max == 0 || bytes > s->published_max_bytes) {
        s->published_dropped++; /* it could never fit: nothing older is dropped for it */
        return 0;
    }
    while (s->published_len > 0 && (s->published_len == s->published_max ||
                                     s->published_bytes + bytes > s->published_max_bytes))
        drop_oldest(s);
    if (ring_room(s) < 0) return -1;
    /* channel and payload share one block, each NUL-terminated */
    char *mem = fri_malloc(bytes + 2);
    if (!mem) return -1;
    memcpy(mem, ch->ptr, ch->len);
    mem[ch->len] = '\0';
    memcpy(mem + ch->len + 1, msg->ptr, msg->len);
    mem[ch->len + 1 + msg->len] = '\0';
    s->published[(s->published_head + s->published_len) % s->published_cap] = (fr_message){
        .channel = mem,
        .channel_len = ch->len,
        .payload = mem + ch->len + 1,
        .payload_len = msg->len,
        .at_ms = at_ms,
    };
    s->published_len++;
    s->published_bytes += bytes;
    return 0;
}

size_t fr_published_count(const fr_server *s) { return s->published_len; }

const fr_message *fr_published(const fr_server *s, size_t index)
{
    if (index >= s->published_len) return NULL;
    return &s->published[(s->published_head + index) % s->published_cap];
}

void fr_published_clear(fr_server *s)
{
    while (s->published_len > 0) drop_oldest(s);
    s->published_head = 0;
    s->published_dropped = 0;
}

uint64_t fr_published_dropped(const fr_server *s) { return s->published_dropped; }

void fr_published_set_limit(fr_server *s, size_t max_messages, size_t max_bytes)
{
    s->published_max = max_messages;
    s->published_max_bytes = max_bytes;
    while (s->published_len > 0 &&
           (s->published_len > max_messages || s->published_bytes > max_bytes))
        drop_oldest(s);
}

void fr_published_limit(const fr_server *s, size_t *max_messages, size_t *max_bytes,
                        size_t *bytes)
{
    if (max_messages) *max_messages = s->published_max;
    if (max_bytes) *max_bytes = s->published_max_bytes;
    if (bytes) *bytes = s->published_bytes;
}

/* Sends a message to the subscribers of ch in namespace kind (channel or shard) and, for
 * channels, to every client whose pattern matches ch, in Redis's order: the channel's
 * subscribers first, then pattern by pattern.  Returns the receivers. */
static long long publish_message(fr_server *s, fr_client *c, int kind, const fri_arg *ch,
                                 const fri_arg *msg)
{
    struct fri_pubsub *ps = s->pubsub;
    long long receivers = 0;
    if (!ps) return 0;
    fri_dent *e = fri_dict_find(ps->names[kind], ch->ptr, ch->len);
    if (e) {
        subscribers *sl = e->v.ptr;
        fri_arg parts[3] = {{kind == SUB_SHARD ? "smessage" : "message", 0}, *ch, *msg};
        parts[0].len = strlen(parts[0].ptr);
        for (size_t i = 0; i < sl->n; i++) deliver(s, c, sl->c[i], 3, parts);
        receivers += (long long)sl->n;
    }
    if (kind != SUB_CHANNEL) return receivers;
    fri_dict *pats = ps->names[SUB_PATTERN];
    for (size_t i = 0; i < fri_dict_slots(pats); i++) {
        fri_dent *p = fri_dict_slot(pats, i);
        if (!p || !fri_glob_match(p->key->buf, p->key->len, ch->ptr, ch->len, 0)) continue;
        subscribers *sl = p->v.ptr;
        fri_arg parts[4] = {{"pmessage", 8}, {p->key->buf, p->key->len}, *ch, *msg};
        for (size_t j = 0; j < sl->n; j++) deliver(s, c, sl->c[j], 4, parts);
        receivers += (long long)sl->n;
    }
    return receivers;
}

/* PUBLISH channel message: the receivers; the message also goes into the server's log. */
static void publish_command(fr_client *c)
{
    if (log_message(c->srv, c->now_ms, &c->argv[1], &c->argv[2]) < 0) {
        fri_reply_error(c, FRI_ERR_OOM);
        return;
    }
    fri_reply_ll(c, publish_message(c->srv, c, SUB_CHANNEL, &c->argv[1], &c->argv[2]));
}

long long fri_pubsub_publish(fr_server *s, fr_client *from, const char *ch, size_t chlen,
                             const char *msg, size_t msglen)
{
    fri_arg a = {ch, chlen}, m = {msg, msglen};
    /* a log entry lost to out of memory loses no delivery */
    (void)log_message(s, from ? from->now_ms : fr_clock_now(s), &a, &m);
    return publish_message(s, from, SUB_CHANNEL, &a, &m);
}

/* SPUBLISH shardchannel message: shard subscribers only (patterns never match). */
static void spublish_command(fr_client *c)
{
    fri_reply_ll(c, publish_message(c->srv, c, SUB_SHARD, &c->argv[1], &c->argv[2]));
}

/* ----- PUBSUB ---------------------------------------------------------------------------- */

/* Redis's addReplySubcommandSyntaxError, for a subcommand given too many arguments. */
static void reply_subcommand_syntax(fr_client *c)
{
    size_t n = strnlen(c->argv[1].ptr, c->argv[1].len);
    fri_reply_errorf(c, "ERR unknown subcommand or wrong number of arguments for '%.*s'. "
                        "Try PUBSUB HELP.", (int)(n > 128 ? 128 : n), c->argv[1].ptr);
}

/* PUBSUB CHANNELS / SHARDCHANNELS [pattern]: the names with a subscriber. */
static void channels_generic(fr_client *c, int kind)
{
    if (c->argc > 3) {
        reply_subcommand_syntax(c);
        return;
    }
    const fri_arg *pat = c->argc == 3 ? &c->argv[2] : NULL;
    size_t h = fri_reply_deferred_len(c);
    long n = 0;
    fri_dict *d = c->srv->pubsub ? c->srv->pubsub->names[kind] : NULL;
    for (size_t i = 0; d && i < fri_dict_slots(d); i++) {
        fri_dent *e = fri_dict_slot(d, i);
        if (!e || (pat && !fri_glob_match(pat->ptr, pat->len, e->key->buf, e->key->len, 0)))
            continue;
        fri_reply_bulk(c, e->key->buf, e->key->len);
        n++;
    }
    fri_reply_set_deferred_len(c, h, n);
}

/* PUBSUB NUMSUB / SHARDNUMSUB [name ...]: name, subscriber count, for each. */
static void numsub_generic(fr_client *c, int kind)
{
    fri_dict *d = c->srv->pubsub ? c->srv->pubsub->names[kind] : NULL;
    fri_reply_map_len(c, c->argc - 2);
    for (int j = 2; j < c->argc; j++) {
        fri_dent *e = d ? fri_dict_find(d, c->argv[j].ptr, c->argv[j].len) : NULL;
        fri_reply_bulk(c, c->argv[j].ptr, c->argv[j].len);
        fri_reply_ll(c, e ? (long long)((subscribers *)e->v.ptr)->n : 0);
    }
}

static void pubsub_channels_command(fr_client *c) { channels_generic(c, SUB_CHANNEL); }
static void pubsub_shardchannels_command(fr_client *c) { channels_generic(c, SUB_SHARD); }
static void pubsub_numsub_command(fr_client *c) { numsub_generic(c, SUB_CHANNEL); }
static void pubsub_shardnumsub_command(fr_client *c) { numsub_generic(c, SUB_SHARD); }

/* PUBSUB NUMPAT: distinct patterns with a subscriber. */
static void pubsub_numpat_command(fr_client *c)
{
    fri_dict *d = c->srv->pubsub ? c->srv->pubsub->names[SUB_PATTERN] : NULL;
    fri_reply_ll(c, d ? (long long)fri_dict_size(d) : 0);
}

static void pubsub_help_command(fr_client *c)
{
    static const char *const help[] = {
        "PUBSUB <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
        "CHANNELS [<pattern>]",
        "    Return the currently active channels matching a <pattern> (default: '*').",
        "NUMPAT",
        "    Return number of subscriptions to patterns.",
        "NUMSUB [<channel> ...]",
        "    Return the number of subscribers for the specified channels, excluding",
        "    pattern subscriptions(default: no channels).",
        "SHARDCHANNELS [<pattern>]",
        "    Return the currently active shard level channels matching a <pattern> "
        "(default: '*').",
        "SHARDNUMSUB [<shardchannel> ...]",
        "    Return the number of subscribers for the specified shard level channel(s)",
        "HELP",
        "    Prints this help.",
        NULL,
    };
    long n = 0;
    while (help[n]) n++;
    fri_reply_array_len(c, n);
    for (long i = 0; i < n; i++) fri_reply_status(c, help[i]);
}

/* ----- Every top-level reply of one command -------------------------------------------------- */

/* The end of the RESP2 reply starting at p, before end (bytes the fake wrote, so well
 * formed: every header line ends with CR LF, a bulk's bytes are skipped by length). */
static const char *skip_reply(const char *p, const char *end)
{
    char kind = *p;
    const char *eol = memchr(p, '\r', (size_t)(end - p));
    long long n = 0;
    if (!eol) return end;
    if (kind == '$' || kind == '*') fri_string2ll(p + 1, (size_t)(eol - p - 1), &n);
    p = eol + 2;
    if (kind == '$' && n >= 0) return p + n + 2;
    if (kind == '*')
        for (long long i = 0; i < n && p < end; i++) p = skip_reply(p, end);
    return p;
}

static const fr_reply *exec_all_guarded(fr_client *c, int argc, const char *const *argv,
                            const size_t *argvlen, size_t *n)
{
    size_t len, count = 0;
    fr_exec_resp(c, argc, argv, argvlen, &len);
    for (const char *p = c->out.p, *end = p + len; p && p < end; p = skip_reply(p, end))
        count++;
    *n = count;
    if (count == 0) return NULL;
    const fr_reply *r = parse_buffer(c, &c->out, count);
    if (!r) {
        static const fr_reply oom = {.type = FR_REPLY_ERROR, .str = FRI_ERR_OOM,
                                     .len = sizeof(FRI_ERR_OOM) - 1};
        *n = 1;
        return &oom;
    }
    return r;
}

const fr_reply *fr_exec_all(fr_client *c, int argc, const char *const *argv,
                            const size_t *argvlen, size_t *n)
{
    fr_server *guard = fri_mem_enter(c->srv, "fr_exec_all");
    const fr_reply *r = exec_all_guarded(c, argc, argv, argvlen, n);
    fri_mem_leave(guard);
    return r;
}

/* ----- The command table ------------------------------------------------------------------ */

#define PS (FRI_CMD_PUBSUB | FRI_CMD_LOADING | FRI_CMD_STALE)

static const fri_command pubsub_subcommands[] = {
    {"pubsub|channels", pubsub_channels_command, -2, PS, "pubsub", 0, 0, 0, NULL, NULL},
    {"pubsub|help", pubsub_help_command, 2, FRI_CMD_LOADING | FRI_CMD_STALE, "pubsub", 0, 0, 0,
     NULL, NULL},
    {"pubsub|numpat", pubsub_numpat_command, 2, PS, "pubsub", 0, 0, 0, NULL, NULL},
    {"pubsub|numsub", pubsub_numsub_command, -2, PS, "pubsub", 0, 0, 0, NULL, NULL},
    {"pubsub|shardchannels", pubsub_shardchannels_command, -2, PS, "pubsub", 0, 0, 0, NULL,
     NULL},
    {"pubsub|shardnumsub", pubsub_shardnumsub_command, -2, PS, "pubsub", 0, 0, 0, NULL, NULL},
    {0},
};

/* Arity, flags and key positions as COMMAND INFO of Redis 7.0.15 gives them (the shard
 * channels are keys, for the cluster slot check). */
const fri_command fri_pubsub_commands[] = {
    {"publish", publish_command, 3, PS | FRI_CMD_FAST, "pubsub", 0, 0, 0, NULL, NULL},
    {"subscribe", subscribe_command, -2, PS, "pubsub", 0, 0, 0, NULL, NULL},
    {"unsubscribe", unsubscribe_command, -1, PS, "pubsub", 0, 0, 0, NULL, NULL},
    {"psubscribe", psubscribe_command, -2, PS, "pubsub", 0, 0, 0, NULL, NULL},
    {"punsubscribe", punsubscribe_command, -1, PS, "pubsub", 0, 0, 0, NULL, NULL},
    {"spublish", spublish_command, 3, PS | FRI_CMD_FAST, "pubsub", 1, 1, 1, NULL, NULL},
    {"ssubscribe", ssubscribe_command, -2, PS, "pubsub", 1, -1, 1, NULL, NULL},
    {"sunsubscribe", sunsubscribe_command, -1, PS, "pubsub", 1, -1, 1, NULL, NULL},
    {"pubsub", NULL, -2, FRI_CMD_CONTAINER, "pubsub", 0, 0, 0, NULL, pubsub_subcommands},
    {0},
};
