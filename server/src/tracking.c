/* tracking.c -- client-side caching as redis-server 7.0.15 does it (tracking.c,
 * networking.c's CLIENT TRACKING/CACHING/TRACKINGINFO/GETREDIR):
 *
 *  - default mode: the keys a tracking client's readonly commands read are remembered
 *    (one table for every database, as Redis's); when one is written, deleted, expired or
 *    the databases flushed, each client that read it gets one invalidation: a RESP3 push
 *    ">2 invalidate [key]", or through REDIRECT to another client (a RESP2 one must be
 *    subscribed: "message __redis__:invalidate [key]"); the key is forgotten until read
 *    again.  OPTIN/OPTOUT with CLIENT CACHING choose which reads count; NOLOOP spares the
 *    client its own writes; invalidations owed to the client running the command are sent
 *    after its reply;
 *  - BCAST: no table; every written key under one of the client's prefixes is collected
 *    and sent, sorted, once per event-loop turn (beforeSleep);
 *  - FLUSHDB/FLUSHALL send every tracking client a null invalidation;
 *  - past tracking-table-max-keys, keys are invalidated before the loop sleeps until the
 *    table is back under it, at most 100 a turn more for each turn it stayed over
 *    (trackingLimitUsedSlots).  Redis picks them by a random walk of its radix tree; here
 *    they come in the table's bucket order from where the last turn stopped. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "frs.h"

typedef struct tkey {
    struct tkey *next;   /* the bucket's chain */
    uint64_t *ids;       /* the clients that read it */
    size_t n, cap;
    size_t len;          /* key bytes */
    char key[];
} tkey;

typedef struct bkey {
    char *key;
    size_t len;
    frs_conn *by;        /* the client whose command wrote it (NOLOOP) */
} bkey;

typedef struct bprefix {
    char *p;             /* the prefix */
    size_t len;
    frs_conn **clients;  /* BCAST clients of this prefix */
    size_t n, cap;
    bkey *keys;          /* keys written under it this loop turn */
    size_t nkeys, capkeys;
} bprefix;

typedef struct pending {
    uint64_t id;         /* the client owed it */
    char *key;           /* NULL: a flush */
    size_t len;
} pending;

typedef struct frs_tracking {
    tkey **buckets;
    size_t nbuckets;
    bprefix *prefixes;   /* byte order */
    size_t nprefixes;
    pending *pend;       /* invalidations for the client running its command */
    size_t npend, cappend;
    size_t nkeys;        /* keys in the table */
    size_t evict_at;     /* the bucket tracking-table-max-keys evicts from next */
    unsigned evict_turns;/* turns the table stayed over the limit (Redis's timeout_counter) */
} frs_tracking;

static frs_tracking *trk_of(frs_server *srv, int create);
static void forget_key(frs_server *srv, frs_tracking *t, tkey **pp, frs_conn *current);

/* ----- Helpers ----------------------------------------------------------------------- */

static void *xrealloc(void *p, size_t n)
{
    void *q = realloc(p, n ? n : 1);
    if (!q) frs_oom_abort(__func__);
    return q;
}

static uint64_t hash_bytes(const char *p, size_t n)
{
    uint64_t h = 1469598103934665603ull;
    for (size_t i = 0; i < n; i++) h = (h ^ (unsigned char)p[i]) * 1099511628211ull;
    return h;
}

static int bytes_cmp(const char *a, size_t al, const char *b, size_t bl)
{
    int r = memcmp(a, b, al < bl ? al : bl);
    if (r) return r;
    return al < bl ? -1 : al > bl;
}

frs_conn *frs_conn_by_id(frs_server *srv, uint64_t id)
{
    for (frs_conn *c = srv->conns; c; c = c->next)
        if (c->id == id && !c->close_asap) return c;
    return NULL;
}

static void put_bulk(frs_conn *c, const char *p, size_t n)
{
    char head[32];
    int k = snprintf(head, sizeof(head), "$%zu\r\n", n);
    frs_reply_raw(c, head, (size_t)k);
    frs_reply_raw(c, p, n);
    frs_reply_raw(c, "\r\n", 2);
}

/* Redis's sendTrackingMessage: payload is the keys' array (or a null) in RESP. */
static void send_message(frs_server *srv, frs_conn *c, const char *payload, size_t n)
{
    frs_conn *to = c;
    int redirected = 0;
    if (c->track_redir) {
        frs_conn *r = frs_conn_by_id(srv, c->track_redir);
        if (!r) {
            c->tracking |= FRS_TRACK_BROKEN;
            if (c->resp == 3) {
                char buf[64];
                int k = snprintf(buf, sizeof(buf), ">2\r\n$21\r\ntracking-redir-broken\r\n:%llu\r\n",
                                 (unsigned long long)c->track_redir);
                frs_reply_raw(c, buf, (size_t)k);
                frs_conn_want_flush(c);
            }
            return;
        }
        to = r;
        redirected = 1;
    }
    if (to->resp == 3) {
        frs_reply_raw(to, ">2\r\n$10\r\ninvalidate\r\n", 21);
    } else if (redirected && fr_client_subscriptions(to->fc)) {
        static const char msg[] = "*3\r\n$7\r\nmessage\r\n$20\r\n__redis__:invalidate\r\n";
        frs_reply_raw(to, msg, sizeof(msg) - 1);
    } else {
        return;
    }
    frs_reply_raw(to, payload, n);
    frs_conn_want_flush(to);
}

static void send_key(frs_server *srv, frs_conn *c, const char *key, size_t len)
{
    char *buf = malloc(len + 40);
    if (!buf) frs_oom_abort(__func__);
    int k = snprintf(buf, 40, "*1\r\n$%zu\r\n", len);
    memcpy(buf + k, key, len);
    memcpy(buf + k + len, "\r\n", 2);
    send_message(srv, c, buf, (size_t)k + len + 2);
    free(buf);
}

/* The null a flush sends, in the protocol of the tracking client (Redis's
 * shared.null[c->resp], even when redirected). */
static void send_null(frs_server *srv, frs_conn *c)
{
    if (c->resp == 3) send_message(srv, c, "_\r\n", 3);
    else send_message(srv, c, "$-1\r\n", 5);
}

static void add_pending(frs_tracking *t, uint64_t id, const char *key, size_t len)
{
    if (t->npend == t->cappend) {
        t->cappend = t->cappend ? 2 * t->cappend : 8;
        t->pend = xrealloc(t->pend, t->cappend * sizeof(*t->pend));
    }
    pending *p = &t->pend[t->npend++];
    p->id = id;
    p->len = len;
    p->key = NULL;
    if (key) {
        p->key = malloc(len + 1);
        if (!p->key) frs_oom_abort(__func__);
        memcpy(p->key, key, len);
    }
}

/* Forgets every tracked key (their buckets stay). */
static void drop_keys(frs_tracking *t)
{
    for (size_t b = 0; b < t->nbuckets; b++) {
        while (t->buckets[b]) {
            tkey *k = t->buckets[b];
            t->buckets[b] = k->next;
            free(k->ids);
            free(k);
        }
    }
    t->nkeys = 0;
}

/* ----- The table ---------------------------------------------------------------------- */

static tkey **find_slot(frs_tracking *t, const char *key, size_t len)
{
    if (!t->nbuckets) return NULL;
    tkey **pp = &t->buckets[hash_bytes(key, len) & (t->nbuckets - 1)];
    while (*pp && !((*pp)->len == len && memcmp((*pp)->key, key, len) == 0)) pp = &(*pp)->next;
    return pp;
}

void frs_tracking_remember(frs_conn *c, int argc, const char *const *argv,
                           const size_t *argvlen)
{
    unsigned f = c->tracking;
    int given = (f & FRS_TRACK_CACHING) != 0;
    if (((f & FRS_TRACK_OPTIN) && !given) || ((f & FRS_TRACK_OPTOUT) && given)) return;
    int keys[256];
    int n = fr_command_keys(c->srv->fake, argc, argv, argvlen, keys, 256);
    if (n <= 0) return;
    frs_tracking *t = trk_of(c->srv, 1);
    if (!t->nbuckets) {
        t->nbuckets = 1024;
        t->buckets = calloc(t->nbuckets, sizeof(*t->buckets));
        if (!t->buckets) frs_oom_abort(__func__);
    }
    for (int i = 0; i < n; i++) {
        const char *key = argv[keys[i]];
        size_t len = argvlen[keys[i]];
        tkey **pp = find_slot(t, key, len);
        if (!*pp) {
            tkey *k = calloc(1, sizeof(*k) + len);
            if (!k) frs_oom_abort(__func__);
            memcpy(k->key, key, len);
            k->len = len;
            *pp = k;
            t->nkeys++;
        }
        tkey *k = *pp;
        size_t j;
        for (j = 0; j < k->n && k->ids[j] != c->id; j++) {}
        if (j < k->n) continue;
        if (k->n == k->cap) {
            k->cap = k->cap ? 2 * k->cap : 2;
            k->ids = xrealloc(k->ids, k->cap * sizeof(*k->ids));
        }
        k->ids[k->n++] = c->id;
    }
}

/* Redis's trackingInvalidateKey: the clients that read the key are told (and, for a
 * write -- bcast set -- the BCAST prefixes note it). */
static void invalidate(frs_server *srv, frs_tracking *t, const char *key, size_t len, int bcast)
{
    frs_conn *current = frs_admin_current(srv);
    /* BCAST: note it under every prefix it starts with */
    for (size_t i = 0; i < t->nprefixes && bcast; i++) {
        bprefix *b = &t->prefixes[i];
        if (b->len > len || memcmp(b->p, key, b->len) != 0) continue;
        if (b->nkeys == b->capkeys) {
            b->capkeys = b->capkeys ? 2 * b->capkeys : 8;
            b->keys = xrealloc(b->keys, b->capkeys * sizeof(*b->keys));
        }
        bkey *k = &b->keys[b->nkeys++];
        k->key = malloc(len + 1);
        if (!k->key) frs_oom_abort(__func__);
        memcpy(k->key, key, len);
        k->len = len;
        k->by = current;
    }
    tkey **pp = find_slot(t, key, len);
    if (!pp || !*pp) return;
    forget_key(srv, t, pp, current);
}

/* Drops the tracked key at *pp, sending each client that read it its invalidation (the
 * current client's after its reply). */
static void forget_key(frs_server *srv, frs_tracking *t, tkey **pp, frs_conn *current)
{
    tkey *k = *pp;
    *pp = k->next;
    t->nkeys--;
    for (size_t i = 0; i < k->n; i++) {
        frs_conn *to = frs_conn_by_id(srv, k->ids[i]);
        if (!to || !(to->tracking & FRS_TRACK_ON) || (to->tracking & FRS_TRACK_BCAST)) continue;
        if ((to->tracking & FRS_TRACK_NOLOOP) && to == current) continue;
        /* owed after its reply: the running client (or a blocked one being served) */
        if (to == current) add_pending(t, to->id, k->key, k->len);
        else send_key(srv, to, k->key, k->len);
    }
    free(k->ids);
    free(k);
}

void frs_tracking_invalidate(frs_server *srv, const char *key, size_t len)
{
    frs_tracking *t = trk_of(srv, 0);
    if (t) invalidate(srv, t, key, len, 1);
}

void frs_tracking_limit(frs_server *srv)
{
    frs_tracking *t = trk_of(srv, 0);
    if (!t || !t->nkeys) return;
    const char *v = frs_config_get(srv, "tracking-table-max-keys");
    size_t max = v ? (size_t)strtoull(v, NULL, 10) : 0;
    if (max == 0 || t->nkeys <= max) {
        t->evict_turns = 0;
        return;
    }
    unsigned long effort = 100ul * (t->evict_turns + 1);
    while (effort-- > 0 && t->nkeys > 0) {
        while (!t->buckets[t->evict_at]) t->evict_at = (t->evict_at + 1) & (t->nbuckets - 1);
        tkey *k = t->buckets[t->evict_at];
        char key[256], *heap = NULL, *copy = key; /* the entry goes with the invalidation */
        if (k->len > sizeof(key) && !(copy = heap = malloc(k->len))) frs_oom_abort(__func__);
        memcpy(copy, k->key, k->len);
        invalidate(srv, t, copy, k->len, 0);
        free(heap);
        if (t->nkeys <= max) {
            t->evict_turns = 0;
            return;
        }
    }
    t->evict_turns++; /* still over: more effort next turn */
}

void frs_tracking_stats_get(frs_server *srv, frs_tracking_stats *out)
{
    memset(out, 0, sizeof(*out));
    for (frs_conn *c = srv->conns; c; c = c->next) out->clients += !!(c->tracking & FRS_TRACK_ON);
    frs_tracking *t = trk_of(srv, 0);
    if (!t) return;
    out->keys = t->nkeys;
    out->prefixes = t->nprefixes;
    for (size_t b = 0; b < t->nbuckets; b++)
        for (const tkey *k = t->buckets[b]; k; k = k->next) out->items += k->n;
}

void frs_tracking_flush(frs_server *srv)
{
    frs_tracking *t = trk_of(srv, 0);
    if (!t) return;
    frs_conn *current = frs_admin_current(srv);
    for (frs_conn *c = srv->conns; c; c = c->next) {
        if (!(c->tracking & FRS_TRACK_ON)) continue;
        if (c == current) add_pending(t, c->id, NULL, 0);
        else send_null(srv, c);
    }
    drop_keys(t);
}

int frs_tracking_active(frs_server *srv)
{
    frs_tracking *t = trk_of(srv, 0);
    return t && (t->nkeys || t->nprefixes);
}

void frs_tracking_after_command(frs_conn *c, const char *name)
{
    /* CLIENT CACHING lasts for the next command (or transaction) only */
    if (!fr_client_in_multi(c->fc) && strcmp(name, "client") != 0)
        c->tracking &= ~FRS_TRACK_CACHING;
    frs_tracking_flush_pending(c);
}

void frs_tracking_flush_pending(frs_conn *c)
{
    frs_tracking *t = trk_of(c->srv, 0);
    if (!t || !t->npend) return;
    size_t keep = 0;
    for (size_t i = 0; i < t->npend; i++) {
        pending *p = &t->pend[i];
        if (p->id != c->id) {
            t->pend[keep++] = *p; /* another client's, still owed */
            continue;
        }
        if (p->key) send_key(c->srv, c, p->key, p->len);
        else send_null(c->srv, c);
        free(p->key);
    }
    t->npend = keep;
}

static int bkey_cmp(const void *a, const void *b)
{
    const bkey *x = a, *y = b;
    int r = bytes_cmp(x->key, x->len, y->key, y->len);
    if (r) return r;
    return x < y ? -1 : x > y; /* stable: the later write wins below */
}

void frs_tracking_broadcast(frs_server *srv)
{
    frs_tracking *t = trk_of(srv, 0);
    if (!t) return;
    for (size_t i = 0; i < t->nprefixes; i++) {
        bprefix *b = &t->prefixes[i];
        if (!b->nkeys) continue;
        qsort(b->keys, b->nkeys, sizeof(*b->keys), bkey_cmp);
        /* one entry per key, its last writer */
        size_t m = 0;
        for (size_t j = 0; j < b->nkeys; j++) {
            if (m && b->keys[m - 1].len == b->keys[j].len &&
                memcmp(b->keys[m - 1].key, b->keys[j].key, b->keys[j].len) == 0) {
                free(b->keys[m - 1].key);
                b->keys[m - 1] = b->keys[j];
            } else {
                b->keys[m++] = b->keys[j];
            }
        }
        b->nkeys = m;
        for (size_t ci = 0; ci < b->n; ci++) {
            frs_conn *c = b->clients[ci];
            size_t count = 0;
            for (size_t j = 0; j < m; j++)
                count += !((c->tracking & FRS_TRACK_NOLOOP) && b->keys[j].by == c);
            if (!count) continue;
            size_t cap = 32;
            for (size_t j = 0; j < m; j++) cap += b->keys[j].len + 32;
            char *buf = malloc(cap);
            if (!buf) frs_oom_abort(__func__);
            size_t len = (size_t)snprintf(buf, 32, "*%zu\r\n", count);
            for (size_t j = 0; j < m; j++) {
                if ((c->tracking & FRS_TRACK_NOLOOP) && b->keys[j].by == c) continue;
                len += (size_t)snprintf(buf + len, 32, "$%zu\r\n", b->keys[j].len);
                memcpy(buf + len, b->keys[j].key, b->keys[j].len);
                len += b->keys[j].len;
                memcpy(buf + len, "\r\n", 2);
                len += 2;
            }
            send_message(srv, c, buf, len);
            free(buf);
        }
        for (size_t j = 0; j < m; j++) free(b->keys[j].key);
        b->nkeys = 0;
    }
}

/* ----- Enabling and disabling --------------------------------------------------------- */

static bprefix *prefix_get(frs_tracking *t, const char *p, size_t len, int create)
{
    size_t i;
    for (i = 0; i < t->nprefixes; i++) {
        int r = bytes_cmp(t->prefixes[i].p, t->prefixes[i].len, p, len);
        if (r == 0) return &t->prefixes[i];
        if (r > 0) break;
    }
    if (!create) return NULL;
    t->prefixes = xrealloc(t->prefixes, (t->nprefixes + 1) * sizeof(*t->prefixes));
    memmove(&t->prefixes[i + 1], &t->prefixes[i], (t->nprefixes - i) * sizeof(*t->prefixes));
    t->nprefixes++;
    bprefix *b = &t->prefixes[i];
    memset(b, 0, sizeof(*b));
    b->p = malloc(len + 1);
    if (!b->p) frs_oom_abort(__func__);
    memcpy(b->p, p, len);
    b->len = len;
    return b;
}

static void add_client_prefix(frs_conn *c, const char *p, size_t len)
{
    frs_tracking *t = trk_of(c->srv, 1);
    bprefix *b = prefix_get(t, p, len, 1);
    for (size_t i = 0; i < b->n; i++)
        if (b->clients[i] == c) return;
    if (b->n == b->cap) {
        b->cap = b->cap ? 2 * b->cap : 4;
        b->clients = xrealloc(b->clients, b->cap * sizeof(*b->clients));
    }
    b->clients[b->n++] = c;
    /* the client's own list, byte order */
    size_t i;
    for (i = 0; i < c->track_nprefixes; i++)
        if (bytes_cmp(c->track_prefixes[i], c->track_prefix_len[i], p, len) > 0) break;
    c->track_prefixes = xrealloc(c->track_prefixes, (c->track_nprefixes + 1) * sizeof(char *));
    c->track_prefix_len = xrealloc(c->track_prefix_len, (c->track_nprefixes + 1) * sizeof(size_t));
    memmove(&c->track_prefixes[i + 1], &c->track_prefixes[i],
            (c->track_nprefixes - i) * sizeof(char *));
    memmove(&c->track_prefix_len[i + 1], &c->track_prefix_len[i],
            (c->track_nprefixes - i) * sizeof(size_t));
    c->track_prefixes[i] = malloc(len + 1);
    if (!c->track_prefixes[i]) frs_oom_abort(__func__);
    memcpy(c->track_prefixes[i], p, len);
    c->track_prefixes[i][len] = '\0';
    c->track_prefix_len[i] = len;
    c->track_nprefixes++;
}

void frs_tracking_disable(frs_conn *c)
{
    frs_tracking *t = trk_of(c->srv, 0);
    if (t) {
        for (size_t i = 0; i < c->track_nprefixes; i++) {
            bprefix *b = prefix_get(t, c->track_prefixes[i], c->track_prefix_len[i], 0);
            if (!b) continue;
            for (size_t j = 0; j < b->n; j++) {
                if (b->clients[j] != c) continue;
                b->clients[j] = b->clients[--b->n];
                break;
            }
            if (b->n == 0) {
                for (size_t j = 0; j < b->nkeys; j++) free(b->keys[j].key);
                free(b->keys);
                free(b->clients);
                free(b->p);
                size_t at = (size_t)(b - t->prefixes);
                memmove(b, b + 1, (t->nprefixes - at - 1) * sizeof(*b));
                t->nprefixes--;
            }
        }
        for (size_t j = 0; j < t->nprefixes; j++) /* pending BCAST keys it wrote stay */
            for (size_t k = 0; k < t->prefixes[j].nkeys; k++)
                if (t->prefixes[j].keys[k].by == c) t->prefixes[j].keys[k].by = NULL;
    }
    for (size_t i = 0; i < c->track_nprefixes; i++) free(c->track_prefixes[i]);
    free(c->track_prefixes);
    free(c->track_prefix_len);
    c->track_prefixes = NULL;
    c->track_prefix_len = NULL;
    c->track_nprefixes = 0;
    c->tracking = 0;
}

void frs_tracking_free(frs_server *srv)
{
    frs_tracking *t = trk_of(srv, 0);
    if (!t) return;
    drop_keys(t);
    free(t->buckets);
    for (size_t i = 0; i < t->nprefixes; i++) {
        for (size_t j = 0; j < t->prefixes[i].nkeys; j++) free(t->prefixes[i].keys[j].key);
        free(t->prefixes[i].keys);
        free(t->prefixes[i].clients);
        free(t->prefixes[i].p);
    }
    free(t->prefixes);
    for (size_t i = 0; i < t->npend; i++) free(t->pend[i].key);
    free(t->pend);
    free(t);
    *frs_admin_tracking_slot(srv) = NULL;
}

static frs_tracking *trk_of(frs_server *srv, int create)
{
    void **slot = frs_admin_tracking_slot(srv);
    if (!slot) return NULL;
    if (!*slot && create) {
        *slot = calloc(1, sizeof(frs_tracking));
        if (!*slot) frs_oom_abort(__func__);
    }
    return *slot;
}

/* ----- The commands -------------------------------------------------------------------- */

#define WORD(i, w) (argvlen[i] == strlen(w) && !strncasecmp(argv[i], w, argvlen[i]))

/* Redis's stringCheckPrefix: one is a prefix of the other. */
static int overlap(const char *a, size_t al, const char *b, size_t bl)
{
    return memcmp(a, b, al < bl ? al : bl) == 0;
}

void frs_cmd_client_tracking(frs_conn *c, int argc, const char *const *argv,
                             const size_t *argvlen)
{
    long long redir = 0;
    unsigned opts = 0;
    int *pfx = calloc((size_t)argc, sizeof(int));
    if (!pfx) frs_oom_abort(__func__);
    int npfx = 0;
    for (int j = 3; j < argc; j++) {
        int more = argc - 1 - j;
        if (WORD(j, "redirect") && more) {
            j++;
            if (redir != 0) {
                frs_reply_error(c, "ERR A client can only redirect to a single other client");
                goto done;
            }
            if (!frs_string2ll(argv[j], argvlen[j], &redir)) {
                frs_reply_error(c, "ERR value is not an integer or out of range");
                goto done;
            }
            if (!frs_conn_by_id(c->srv, (uint64_t)redir)) {
                frs_reply_error(c, "ERR The client ID you want redirect to does not exist");
                goto done;
            }
        } else if (WORD(j, "bcast")) {
            opts |= FRS_TRACK_BCAST;
        } else if (WORD(j, "optin")) {
            opts |= FRS_TRACK_OPTIN;
        } else if (WORD(j, "optout")) {
            opts |= FRS_TRACK_OPTOUT;
        } else if (WORD(j, "noloop")) {
            opts |= FRS_TRACK_NOLOOP;
        } else if (WORD(j, "prefix") && more) {
            pfx[npfx++] = ++j;
        } else {
            frs_reply_error(c, "ERR syntax error");
            goto done;
        }
    }
    if (WORD(2, "on")) {
        if (!(opts & FRS_TRACK_BCAST) && npfx) {
            frs_reply_error(c, "ERR PREFIX option requires BCAST mode to be enabled");
            goto done;
        }
        if ((c->tracking & FRS_TRACK_ON) &&
            !!(c->tracking & FRS_TRACK_BCAST) != !!(opts & FRS_TRACK_BCAST)) {
            frs_reply_error(c, "ERR You can't switch BCAST mode on/off before disabling "
                               "tracking for this client, and then re-enabling it with a "
                               "different mode.");
            goto done;
        }
        if ((opts & FRS_TRACK_BCAST) && (opts & (FRS_TRACK_OPTIN | FRS_TRACK_OPTOUT))) {
            frs_reply_error(c, "ERR OPTIN and OPTOUT are not compatible with BCAST");
            goto done;
        }
        if ((opts & FRS_TRACK_OPTIN) && (opts & FRS_TRACK_OPTOUT)) {
            frs_reply_error(c, "ERR You can't specify both OPTIN mode and OPTOUT mode");
            goto done;
        }
        if (((opts & FRS_TRACK_OPTIN) && (c->tracking & FRS_TRACK_OPTOUT)) ||
            ((opts & FRS_TRACK_OPTOUT) && (c->tracking & FRS_TRACK_OPTIN))) {
            frs_reply_error(c, "ERR You can't switch OPTIN/OPTOUT mode before disabling "
                               "tracking for this client, and then re-enabling it with a "
                               "different mode.");
            goto done;
        }
        if (opts & FRS_TRACK_BCAST) {
            for (int i = 0; i < npfx; i++) {
                const char *p = argv[pfx[i]];
                size_t pl = argvlen[pfx[i]];
                for (size_t k = 0; k < c->track_nprefixes; k++) {
                    if (overlap(c->track_prefixes[k], c->track_prefix_len[k], p, pl)) {
                        frs_reply_errorf(c, "ERR Prefix '%.*s' overlaps with an existing "
                                            "prefix '%s'. Prefixes for a single client must "
                                            "not overlap.", (int)pl, p, c->track_prefixes[k]);
                        goto done;
                    }
                }
                for (int k = i + 1; k < npfx; k++) {
                    if (overlap(p, pl, argv[pfx[k]], argvlen[pfx[k]])) {
                        frs_reply_errorf(c, "ERR Prefix '%.*s' overlaps with another provided "
                                            "prefix '%.*s'. Prefixes for a single client must "
                                            "not overlap.", (int)pl, p, (int)argvlen[pfx[k]],
                                         argv[pfx[k]]);
                        goto done;
                    }
                }
            }
        }
        /* enableTracking */
        c->tracking &= ~(FRS_TRACK_BROKEN | FRS_TRACK_BCAST | FRS_TRACK_OPTIN |
                         FRS_TRACK_OPTOUT | FRS_TRACK_NOLOOP);
        c->tracking |= FRS_TRACK_ON;
        c->track_redir = (uint64_t)redir;
        if (opts & FRS_TRACK_BCAST) {
            c->tracking |= FRS_TRACK_BCAST;
            if (npfx == 0) add_client_prefix(c, "", 0);
            for (int i = 0; i < npfx; i++) add_client_prefix(c, argv[pfx[i]], argvlen[pfx[i]]);
        }
        c->tracking |= opts & (FRS_TRACK_OPTIN | FRS_TRACK_OPTOUT | FRS_TRACK_NOLOOP);
        trk_of(c->srv, 1);
    } else if (WORD(2, "off")) {
        frs_tracking_disable(c);
    } else {
        frs_reply_error(c, "ERR syntax error");
        goto done;
    }
    frs_reply_ok(c);
done:
    free(pfx);
}

void frs_cmd_client_caching(frs_conn *c, int argc, const char *const *argv,
                            const size_t *argvlen)
{
    (void)argc;
    if (!(c->tracking & FRS_TRACK_ON)) {
        frs_reply_error(c, "ERR CLIENT CACHING can be called only when the client is in "
                           "tracking mode with OPTIN or OPTOUT mode enabled");
        return;
    }
    if (WORD(2, "yes")) {
        if (!(c->tracking & FRS_TRACK_OPTIN)) {
            frs_reply_error(c, "ERR CLIENT CACHING YES is only valid when tracking is enabled "
                               "in OPTIN mode.");
            return;
        }
    } else if (WORD(2, "no")) {
        if (!(c->tracking & FRS_TRACK_OPTOUT)) {
            frs_reply_error(c, "ERR CLIENT CACHING NO is only valid when tracking is enabled "
                               "in OPTOUT mode.");
            return;
        }
    } else {
        frs_reply_error(c, "ERR syntax error");
        return;
    }
    c->tracking |= FRS_TRACK_CACHING;
    frs_reply_ok(c);
}

void frs_cmd_client_trackinginfo(frs_conn *c, int argc, const char *const *argv,
                                 const size_t *argvlen)
{
    (void)argc, (void)argv, (void)argvlen;
    unsigned f = c->tracking;
    const char *flags[8];
    int n = 0;
    flags[n++] = (f & FRS_TRACK_ON) ? "on" : "off";
    if (f & FRS_TRACK_BCAST) flags[n++] = "bcast";
    if (f & FRS_TRACK_OPTIN) {
        flags[n++] = "optin";
        if (f & FRS_TRACK_CACHING) flags[n++] = "caching-yes";
    }
    if (f & FRS_TRACK_OPTOUT) {
        flags[n++] = "optout";
        if (f & FRS_TRACK_CACHING) flags[n++] = "caching-no";
    }
    if (f & FRS_TRACK_NOLOOP) flags[n++] = "noloop";
    if (f & FRS_TRACK_BROKEN) flags[n++] = "broken_redirect";
    frs_reply_map(c, 3);
    frs_reply_bulk_cstr(c, "flags");
    frs_reply_set(c, n);
    for (int i = 0; i < n; i++) frs_reply_bulk_cstr(c, flags[i]);
    frs_reply_bulk_cstr(c, "redirect");
    frs_reply_ll(c, (f & FRS_TRACK_ON) ? (long long)c->track_redir : -1);
    frs_reply_bulk_cstr(c, "prefixes");
    frs_reply_array(c, (long)c->track_nprefixes);
    for (size_t i = 0; i < c->track_nprefixes; i++)
        put_bulk(c, c->track_prefixes[i], c->track_prefix_len[i]);
}
