/* fuzz_inspect.c -- the fuzz targets' consistency checks of the fake's streams and
 * replies (fuzz_inspect.h): moved out of fuzz_commands.c so that fuzz_restore checks what
 * RESTORE builds with the same checks as what commands build. */
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fakeredis.h"
#include "fuzz_inspect.h"
#include "wsi_alloc.h"

/* A failed check: the message goes to the target's callback, which does not return. */
_Noreturn void fi_fail(fi_ctx *r, const char *fmt, ...)
{
    char msg[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof(msg), fmt, ap);
    va_end(ap);
    r->fail(r->ud, msg);
    abort(); /* the callback must not return; if it does, the input still fails */
}

/* ----- Running inspection commands ---------------------------------------------------------------- */

/* Runs a read-only command on the inspection client; it must not fail. */
const fr_reply *fi_exec(fi_ctx *r, int argc, const char *const *argv, const size_t *len)
{
    const fr_reply *rep = fr_exec(r->insp, argc, argv, len);
    if (rep == NULL || rep->type == FR_REPLY_ERROR) {
        char what[256];
        snprintf(what, sizeof(what), "%s", rep ? rep->str : "(blocked)");
        fi_fail(r, "inspection command %.*s failed: %s", (int)len[0], argv[0], what);
    }
    return rep;
}

/* Makes the inspection client's selected database db. */
void fi_select(fi_ctx *r, int db)
{
    if (r->insp_db == db)
        return;
    char num[8];
    snprintf(num, sizeof(num), "%d", db);
    const char *argv[2] = {"SELECT", num};
    size_t len[2] = {6, strlen(num)};
    fi_exec(r, 2, argv, len);
    r->insp_db = db;
}

/* The value after the field named name in a flat [name, value, ...] array; NULL when
 * it is missing. */
static const fr_reply *field(const fr_reply *flat, const char *name)
{
    if (flat == NULL || flat->type != FR_REPLY_ARRAY)
        return NULL;
    size_t nl = strlen(name);
    for (size_t i = 0; i + 1 < flat->count; i += 2) {
        const fr_reply *k = &flat->elements[i];
        if (k->type == FR_REPLY_BULK && k->len == nl && memcmp(k->str, name, nl) == 0)
            return &flat->elements[i + 1];
    }
    return NULL;
}

/* An integer field; fails the check when it is missing or not an integer. */
static long long int_field(fi_ctx *r, const fr_reply *flat, const char *name, const char *ctx)
{
    const fr_reply *v = field(flat, name);
    if (v == NULL || v->type != FR_REPLY_INTEGER)
        fi_fail(r, "%s: field %s is missing or not an integer", ctx, name);
    return v->integer;
}

/* Formats an id as Redis prints it. */
static void fmt_id(char *buf, size_t cap, uint64_t ms, uint64_t seq)
{
    snprintf(buf, cap, "%llu-%llu", (unsigned long long)ms, (unsigned long long)seq);
}

/* Non-zero when a bulk reply is exactly the id ms-seq. */
static int bulk_is_id(const fr_reply *v, uint64_t ms, uint64_t seq)
{
    char id[48];
    fmt_id(id, sizeof(id), ms, seq);
    return v && v->type == FR_REPLY_BULK && v->len == strlen(id) && memcmp(v->str, id, v->len) == 0;
}

/* Non-zero when a bulk reply equals the bytes s[0..n). */
static int bulk_is(const fr_reply *v, const char *s, size_t n)
{
    return v && v->type == FR_REPLY_BULK && v->len == n && memcmp(v->str, s, n) == 0;
}

/* -1, 0, 1 as id a compares with id b. */
static int id_cmp(uint64_t ams, uint64_t aseq, uint64_t bms, uint64_t bseq)
{
    if (ams != bms)
        return ams < bms ? -1 : 1;
    if (aseq != bseq)
        return aseq < bseq ? -1 : 1;
    return 0;
}

/* Parses "ms-seq" from a bulk reply; 0 on success. */
static int parse_id(const fr_reply *v, uint64_t *ms, uint64_t *seq)
{
    char buf[48];
    if (v == NULL || v->type != FR_REPLY_BULK || v->len == 0 || v->len >= sizeof(buf))
        return -1;
    memcpy(buf, v->str, v->len);
    buf[v->len] = '\0';
    unsigned long long a, b;
    char tail;
    if (sscanf(buf, "%llu-%llu%c", &a, &b, &tail) != 2)
        return -1;
    *ms = a;
    *seq = b;
    return 0;
}

/* The entry of a pending list (sorted by id) with the given id; NULL if none. */
static const fr_pending *pel_find(const fr_pending *p, size_t n, uint64_t ms, uint64_t seq)
{
    size_t lo = 0, hi = n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        int c = id_cmp(p[mid].id_ms, p[mid].id_seq, ms, seq);
        if (c == 0)
            return &p[mid];
        if (c < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    return NULL;
}

/* ----- The consistency checks ------------------------------------------------------------------ */

/* One consumer group's checks.  gi is its XINFO GROUPS entry; the stream is live in db,
 * which the inspection client has selected.
 *
 * - the group's pending list (fr_stream_pending) is in strictly increasing id order, its
 *   size is XINFO GROUPS' pending count, and (until XGROUP SETID or XCLAIM FORCE ran)
 *   no id is above the group's last-delivered-id;
 * - XINFO CONSUMERS lists as many consumers as XINFO GROUPS counts, each with the pending
 *   count and idle time of fr_stream_consumer and of its own pending list, whose entries
 *   all name it;
 * - the group's pending list is exactly the union of its consumers' lists (the same ids
 *   with the same delivery counts and idle times, none left over);
 * - XPENDING's summary agrees with the lists (count, smallest and greatest id, the
 *   consumers with something pending in XINFO CONSUMERS' order), and XPENDING's extended
 *   form lists the group's pending list entry by entry. */
static void check_group(fi_ctx *r, int db, const char *key, size_t klen, const fr_reply *gi)
{
    char ctx[160];
    const fr_reply *name = field(gi, "name");
    if (name == NULL || name->type != FR_REPLY_BULK)
        fi_fail(r, "XINFO GROUPS %.*s: a group without a name", (int)klen, key);
    snprintf(ctx, sizeof(ctx), "db %d stream %.*s group %.*s", db, (int)klen, key,
             (int)name->len, name->str);
    /* The reply tree dies with the next inspection command: keep what is needed. */
    size_t glen = name->len;
    char *gname = wsi_xmalloc(glen + 1);
    memcpy(gname, name->str, glen);
    long long npending = int_field(r, gi, "pending", ctx);
    long long nconsumers = int_field(r, gi, "consumers", ctx);
    uint64_t ld_ms = 0, ld_seq = 0;
    if (parse_id(field(gi, "last-delivered-id"), &ld_ms, &ld_seq) != 0)
        fi_fail(r, "%s: bad last-delivered-id", ctx);
    const fr_reply *lag = field(gi, "lag"), *er = field(gi, "entries-read");
    if (lag == NULL || (lag->type != FR_REPLY_INTEGER && lag->type != FR_REPLY_NIL) ||
        er == NULL || (er->type != FR_REPLY_INTEGER && er->type != FR_REPLY_NIL))
        fi_fail(r, "%s: entries-read or lag is neither an integer nor nil", ctx);

    fr_pending *pel = NULL;
    size_t n = 0;
    if (fr_stream_pending(r->srv, db, key, klen, gname, glen, NULL, 0, &pel, &n) != 0)
        fi_fail(r, "%s: fr_stream_pending fails on a group XINFO lists", ctx);
    if ((long long)n != npending)
        fi_fail(r, "%s: XINFO GROUPS pending %lld, fr_stream_pending has %zu", ctx,
                   npending, n);
    for (size_t i = 0; i < n; i++) {
        if (i > 0 && id_cmp(pel[i - 1].id_ms, pel[i - 1].id_seq, pel[i].id_ms,
                            pel[i].id_seq) >= 0)
            fi_fail(r, "%s: pending list out of order at %zu", ctx, i);
        if (pel[i].idle_ms < 0)
            fi_fail(r, "%s: negative idle time", ctx);
        if (r->pel_bound && id_cmp(pel[i].id_ms, pel[i].id_seq, ld_ms, ld_seq) > 0)
            fi_fail(r, "%s: pending id %llu-%llu is above last-delivered-id %llu-%llu", ctx,
                       (unsigned long long)pel[i].id_ms, (unsigned long long)pel[i].id_seq,
                       (unsigned long long)ld_ms, (unsigned long long)ld_seq);
    }

    /* The consumers, as XINFO CONSUMERS lists them. */
    const char *cargv[4] = {"XINFO", "CONSUMERS", key, gname};
    size_t clen[4] = {5, 9, klen, glen};
    const fr_reply *cons = fi_exec(r, 4, cargv, clen);
    if (cons->type != FR_REPLY_ARRAY || (long long)cons->count != nconsumers)
        fi_fail(r, "%s: XINFO CONSUMERS lists %zu consumers, XINFO GROUPS counts %lld", ctx,
                   cons->type == FR_REPLY_ARRAY ? cons->count : 0, nconsumers);
    /* Copy the names and counts out: the next command reuses the reply's memory. */
    size_t ncons = cons->count;
    char **cname = wsi_xcalloc(ncons, sizeof(*cname));
    size_t *cnlen = wsi_xcalloc(ncons, sizeof(*cnlen));
    long long *cpend = wsi_xcalloc(ncons, sizeof(*cpend));
    size_t sum = 0;
    for (size_t i = 0; i < ncons; i++) {
        const fr_reply *ce = &cons->elements[i];
        const fr_reply *cn = field(ce, "name");
        if (cn == NULL || cn->type != FR_REPLY_BULK)
            fi_fail(r, "%s: XINFO CONSUMERS entry %zu has no name", ctx, i);
        cname[i] = wsi_xmalloc(cn->len + 1);
        memcpy(cname[i], cn->str, cn->len);
        cnlen[i] = cn->len;
        cpend[i] = int_field(r, ce, "pending", ctx);
        long long idle = int_field(r, ce, "idle", ctx);
        if (i > 0 && (cnlen[i - 1] == cnlen[i] && memcmp(cname[i - 1], cname[i], cnlen[i]) == 0))
            fi_fail(r, "%s: consumer %.*s listed twice", ctx, (int)cnlen[i], cname[i]);
        fr_consumer_state st;
        if (fr_stream_consumer(r->srv, db, key, klen, gname, glen, cname[i], cnlen[i], &st) != 0)
            fi_fail(r, "%s: fr_stream_consumer does not know consumer %.*s", ctx,
                       (int)cnlen[i], cname[i]);
        if ((long long)st.pending != cpend[i] || st.idle_ms != idle)
            fi_fail(r, "%s consumer %.*s: XINFO says pending %lld idle %lld, the API %zu %lld",
                       ctx, (int)cnlen[i], cname[i], cpend[i], idle, st.pending,
                       (long long)st.idle_ms);
        fr_pending *cp = NULL;
        size_t cn_n = 0;
        if (fr_stream_pending(r->srv, db, key, klen, gname, glen, cname[i], cnlen[i], &cp,
                              &cn_n) != 0)
            fi_fail(r, "%s: fr_stream_pending fails for consumer %.*s", ctx, (int)cnlen[i],
                       cname[i]);
        if ((long long)cn_n != cpend[i])
            fi_fail(r, "%s consumer %.*s: pending list of %zu, XINFO says %lld", ctx,
                       (int)cnlen[i], cname[i], cn_n, cpend[i]);
        for (size_t k = 0; k < cn_n; k++) {
            if (k > 0 && id_cmp(cp[k - 1].id_ms, cp[k - 1].id_seq, cp[k].id_ms, cp[k].id_seq) >= 0)
                fi_fail(r, "%s consumer %.*s: pending list out of order", ctx,
                           (int)cnlen[i], cname[i]);
            if (cp[k].consumer_len != cnlen[i] || memcmp(cp[k].consumer, cname[i], cnlen[i]) != 0)
                fi_fail(r, "%s consumer %.*s: its pending entry names consumer %.*s", ctx,
                           (int)cnlen[i], cname[i], (int)cp[k].consumer_len, cp[k].consumer);
            const fr_pending *g = pel_find(pel, n, cp[k].id_ms, cp[k].id_seq);
            if (g == NULL)
                fi_fail(r, "%s consumer %.*s: pending %llu-%llu is not in the group's list",
                           ctx, (int)cnlen[i], cname[i], (unsigned long long)cp[k].id_ms,
                           (unsigned long long)cp[k].id_seq);
            if (g->consumer_len != cnlen[i] || memcmp(g->consumer, cname[i], cnlen[i]) != 0 ||
                g->delivery_count != cp[k].delivery_count || g->idle_ms != cp[k].idle_ms)
                fi_fail(r, "%s: %llu-%llu differs between the group's list (%.*s, %llu, "
                           "%lld) and consumer %.*s's (%llu, %lld)", ctx,
                           (unsigned long long)cp[k].id_ms, (unsigned long long)cp[k].id_seq,
                           (int)g->consumer_len, g->consumer,
                           (unsigned long long)g->delivery_count, (long long)g->idle_ms,
                           (int)cnlen[i], cname[i], (unsigned long long)cp[k].delivery_count,
                           (long long)cp[k].idle_ms);
        }
        free(cp);
        sum += cn_n;
    }
    if (sum != n)
        fi_fail(r, "%s: the consumers hold %zu pending entries, the group %zu", ctx, sum, n);

    /* XPENDING key group: [count, smallest, greatest, [[consumer, count]...]]. */
    const char *pargv[3] = {"XPENDING", key, gname};
    size_t plen[3] = {8, klen, glen};
    const fr_reply *sm = fi_exec(r, 3, pargv, plen);
    if (sm->type != FR_REPLY_ARRAY || sm->count != 4 ||
        sm->elements[0].type != FR_REPLY_INTEGER || sm->elements[0].integer != (long long)n)
        fi_fail(r, "%s: XPENDING's summary does not count %zu entries", ctx, n);
    if (n == 0) {
        if (sm->elements[1].type != FR_REPLY_NIL || sm->elements[2].type != FR_REPLY_NIL ||
            sm->elements[3].type != FR_REPLY_NIL_ARRAY)
            fi_fail(r, "%s: XPENDING's summary of an empty list is not [0, nil, nil, nil]",
                       ctx);
    } else {
        if (!bulk_is_id(&sm->elements[1], pel[0].id_ms, pel[0].id_seq) ||
            !bulk_is_id(&sm->elements[2], pel[n - 1].id_ms, pel[n - 1].id_seq))
            fi_fail(r, "%s: XPENDING's smallest/greatest ids differ from the list's", ctx);
        const fr_reply *per = &sm->elements[3];
        size_t k = 0;
        for (size_t i = 0; i < ncons; i++) {
            if (cpend[i] == 0)
                continue;
            char cnt[24];
            snprintf(cnt, sizeof(cnt), "%lld", cpend[i]);
            if (per->type != FR_REPLY_ARRAY || k >= per->count ||
                per->elements[k].type != FR_REPLY_ARRAY || per->elements[k].count != 2 ||
                !bulk_is(&per->elements[k].elements[0], cname[i], cnlen[i]) ||
                !bulk_is(&per->elements[k].elements[1], cnt, strlen(cnt)))
                fi_fail(r, "%s: XPENDING's summary entry %zu is not [%.*s, %s]", ctx, k,
                           (int)cnlen[i], cname[i], cnt);
            k++;
        }
        if (per->type != FR_REPLY_ARRAY || k != per->count)
            fi_fail(r, "%s: XPENDING's summary lists %zu consumers, XINFO %zu with pending",
                       ctx, per->type == FR_REPLY_ARRAY ? per->count : 0, k);
    }

    /* XPENDING key group - + n+1: every entry [id, consumer, idle, deliveries]. */
    char cnt[24];
    snprintf(cnt, sizeof(cnt), "%zu", n + 1);
    const char *xargv[6] = {"XPENDING", key, gname, "-", "+", cnt};
    size_t xlen[6] = {8, klen, glen, 1, 1, strlen(cnt)};
    const fr_reply *ex = fi_exec(r, 6, xargv, xlen);
    if (ex->type != FR_REPLY_ARRAY || ex->count != n)
        fi_fail(r, "%s: XPENDING - + lists %zu entries, not %zu", ctx,
                   ex->type == FR_REPLY_ARRAY ? ex->count : 0, n);
    for (size_t i = 0; i < n; i++) {
        const fr_reply *e = &ex->elements[i];
        if (e->type != FR_REPLY_ARRAY || e->count != 4 ||
            !bulk_is_id(&e->elements[0], pel[i].id_ms, pel[i].id_seq) ||
            !bulk_is(&e->elements[1], pel[i].consumer, pel[i].consumer_len) ||
            e->elements[2].type != FR_REPLY_INTEGER ||
            e->elements[2].integer != (long long)pel[i].idle_ms ||
            e->elements[3].type != FR_REPLY_INTEGER ||
            e->elements[3].integer != (long long)pel[i].delivery_count)
            fi_fail(r, "%s: XPENDING's entry %zu differs from fr_stream_pending's", ctx, i);
    }
    for (size_t i = 0; i < ncons; i++)
        free(cname[i]);
    free(cname);
    free(cnlen);
    free(gname);
    free(cpend);
    free(pel);
}

/* Checks the stream at key in db, if there is a live one:
 *
 * - fr_stream_entries: ids strictly increasing, as many as the length, none above the
 *   last generated id; the recorded first id is the first entry's (not for a restored
 *   stream: a payload says what it is);
 * - fr_stream_meta_get: entries-added >= length (not for a restored stream either;
 *   max-deleted-entry-id may be above the last id: Redis 7.0's XSETID lets the last id
 *   go below it);
 * - XINFO STREAM agrees with both (length, radix-tree-keys, last-generated-id,
 *   max-deleted-entry-id, entries-added, recorded-first-entry-id, groups, first-entry and
 *   last-entry with their fields);
 * - XINFO GROUPS lists as many groups as the metadata counts, each checked by
 *   check_group(). */
void fi_check_stream(fi_ctx *r, int db, const char *key, size_t klen)
{
    fr_stream_meta m;
    if (fr_stream_meta_get(r->srv, db, key, klen, &m) != 0)
        return; /* missing, expired or not a stream */
    char ctx[96];
    snprintf(ctx, sizeof(ctx), "db %d stream %.*s", db, (int)klen, key);
    fr_stream_entry *e = NULL;
    size_t n = 0;
    int rc = fr_stream_entries(r->srv, db, key, klen, &e, &n);
    if (rc != 0)
        fi_fail(r, "%s: fr_stream_entries answers %d where fr_stream_meta_get found it",
                   ctx, rc);
    if (n != m.length)
        fi_fail(r, "%s: %zu entries, length %llu", ctx, n, (unsigned long long)m.length);
    for (size_t i = 0; i < n; i++) {
        if (i > 0 && id_cmp(e[i - 1].id_ms, e[i - 1].id_seq, e[i].id_ms, e[i].id_seq) >= 0)
            fi_fail(r, "%s: entries out of order at %zu", ctx, i);
        if (id_cmp(e[i].id_ms, e[i].id_seq, m.last_id_ms, m.last_id_seq) > 0)
            fi_fail(r, "%s: entry %llu-%llu is above the last id %llu-%llu", ctx,
                       (unsigned long long)e[i].id_ms, (unsigned long long)e[i].id_seq,
                       (unsigned long long)m.last_id_ms, (unsigned long long)m.last_id_seq);
    }
    if (!r->restored && n > 0 &&
        id_cmp(m.first_id_ms, m.first_id_seq, e[0].id_ms, e[0].id_seq) != 0)
        fi_fail(r, "%s: recorded first id %llu-%llu, first entry %llu-%llu", ctx,
                   (unsigned long long)m.first_id_ms, (unsigned long long)m.first_id_seq,
                   (unsigned long long)e[0].id_ms, (unsigned long long)e[0].id_seq);
    if (!r->restored && m.entries_added < m.length)
        fi_fail(r, "%s: entries-added %llu below the length %llu", ctx,
                   (unsigned long long)m.entries_added, (unsigned long long)m.length);

    fi_select(r, db);
    const char *sargv[3] = {"XINFO", "STREAM", key};
    size_t slen[3] = {5, 6, klen};
    const fr_reply *xs = fi_exec(r, 3, sargv, slen);
    if (int_field(r, xs, "length", ctx) != (long long)m.length ||
        int_field(r, xs, "radix-tree-keys", ctx) != (long long)m.nodes ||
        int_field(r, xs, "entries-added", ctx) != (long long)m.entries_added ||
        int_field(r, xs, "groups", ctx) != (long long)m.groups ||
        !bulk_is_id(field(xs, "last-generated-id"), m.last_id_ms, m.last_id_seq) ||
        !bulk_is_id(field(xs, "max-deleted-entry-id"), m.max_deleted_ms, m.max_deleted_seq) ||
        !bulk_is_id(field(xs, "recorded-first-entry-id"), m.first_id_ms, m.first_id_seq))
        fi_fail(r, "%s: XINFO STREAM disagrees with fr_stream_meta_get", ctx);
    for (int last = 0; last <= 1; last++) {
        const fr_reply *fe = field(xs, last ? "last-entry" : "first-entry");
        if (n == 0) {
            if (fe == NULL || fe->type != FR_REPLY_NIL)
                fi_fail(r, "%s: XINFO STREAM of an empty stream has a %s", ctx,
                           last ? "last-entry" : "first-entry");
            continue;
        }
        const fr_stream_entry *want = &e[last ? n - 1 : 0];
        if (fe == NULL || fe->type != FR_REPLY_ARRAY || fe->count != 2 ||
            !bulk_is_id(&fe->elements[0], want->id_ms, want->id_seq) ||
            fe->elements[1].type != FR_REPLY_ARRAY ||
            fe->elements[1].count != 2 * want->nfields)
            fi_fail(r, "%s: XINFO STREAM's %s is not the entries' %s", ctx,
                       last ? "last-entry" : "first-entry", last ? "last" : "first");
        for (size_t k = 0; k < 2 * want->nfields; k++)
            if (!bulk_is(&fe->elements[1].elements[k], want->fv[k], want->fv_len[k]))
                fi_fail(r, "%s: XINFO STREAM's %s field %zu differs", ctx,
                           last ? "last-entry" : "first-entry", k);
    }
    free(e);

    const char *gargv[3] = {"XINFO", "GROUPS", key};
    size_t glen[3] = {5, 6, klen};
    const fr_reply *gr = fi_exec(r, 3, gargv, glen);
    if (gr->type != FR_REPLY_ARRAY || gr->count != m.groups)
        fi_fail(r, "%s: XINFO GROUPS lists %zu groups, the metadata counts %zu", ctx,
                   gr->type == FR_REPLY_ARRAY ? gr->count : 0, m.groups);
    /* check_group runs more commands, which reuse the reply's memory: copy the list. */
    size_t ng = gr->count;
    char *enc = NULL;
    size_t enclen = 0;
    if (ng > 0) {
        enc = fr_reply_to_resp(gr, &enclen);
        if (!enc)
            abort();
    }
    for (size_t g = 0; g < ng; g++) {
        /* Re-run XINFO GROUPS for each group: cheap, and the tree is fresh. */
        gr = fi_exec(r, 3, gargv, glen);
        size_t again;
        char *enc2 = fr_reply_to_resp(gr, &again);
        if (!enc2)
            abort();
        if (again != enclen || memcmp(enc, enc2, enclen) != 0)
            fi_fail(r, "%s: XINFO GROUPS changed between two inspection commands", ctx);
        free(enc2);
        check_group(r, db, key, klen, &gr->elements[g]);
    }
    free(enc);
}


/* A reply tree is well formed: a known type, strings present and NUL-terminated at their
 * length, elements present for a non-empty array; a script's conversions (RESP3 types
 * seen as RESP2 forms included) must keep to that. */
void fi_check_reply(fi_ctx *r, const fr_reply *rep, int depth)
{
    switch (rep->type) {
    case FR_REPLY_STATUS:
    case FR_REPLY_ERROR:
    case FR_REPLY_BULK:
        if (!rep->str || rep->str[rep->len] != '\0')
            fi_fail(r, "reply string of type %d malformed", (int)rep->type);
        if (rep->type != FR_REPLY_BULK && memchr(rep->str, '\r', rep->len))
            fi_fail(r, "status or error holds a CR");
        return;
    case FR_REPLY_INTEGER:
    case FR_REPLY_NIL:
    case FR_REPLY_NIL_ARRAY:
        return;
    case FR_REPLY_ARRAY:
        if (rep->count && !rep->elements)
            fi_fail(r, "array of %zu without elements", rep->count);
        if (depth > 10000)
            fi_fail(r, "reply nested deeper than 10000");
        for (size_t i = 0; i < rep->count; i++)
            fi_check_reply(r, &rep->elements[i], depth + 1);
        return;
    default:
        fi_fail(r, "reply of unknown type %d", (int)rep->type);
    }
}
