/* read.c -- reads: one function per read form (a stream's XREADGROUP, its XAUTOCLAIM,
 * a plain list's RPOP, a reliable list's LMOVE pipeline, the blocking pops, the buffered
 * Pub/Sub messages), the sweeps that precede them (delay queue, orphans) and the claims
 * that follow (recovery set), and the deliveries they hand out. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sim_int.h"

/* A delivery of the read, outstanding; a list value or channel message gets its fields
 * decoded at once (a stream entry's come from the reply). */
static ws_delivery *new_delivery(ws_sub *s, uint64_t read, const char *id, size_t id_len)
{
    ws_delivery *d = wsi_delivery_new(s->sim, s);
    d->read = read;
    d->index = s->nlast;
    d->id = wsi_rec_memdup(s->sim, id, id_len);
    d->id_len = id_len;
    d->shown = wsi_shown(d->id, id_len);
    if (s->nlast == s->caplast) {
        s->caplast = s->caplast ? s->caplast * 2 : 16;
        s->last = wsi_xrealloc(s->last, s->caplast * sizeof *s->last);
    }
    s->last[s->nlast++] = d;
    if (s->nflight == s->capflight) {
        s->capflight = s->capflight ? s->capflight * 2 : 16;
        s->flight = wsi_xrealloc(s->flight, s->capflight * sizeof *s->flight);
    }
    s->flight[s->nflight++] = d;
    s->outstanding++;
    if (s->cfg.form != WS_FORM_STREAM) wsi_delivery_message_fields(d);
    uint64_t ms, seq;
    if (s->cfg.form == WS_FORM_STREAM && wsi_stream_id_parse(id, id_len, &ms, &seq) == 0 &&
        (!s->top_set || ms > s->top_ms || (ms == s->top_ms && seq > s->top_seq))) {
        s->top_ms = ms;
        s->top_seq = seq;
        s->top_set = 1;
    }
    return d;
}

/* Sends one round trip of the reader for sub (all commands with one role). */
static int reader_send(ws_sub *s, const char *cause, size_t n, wsi_cmd **cmds, int role,
                       const fr_reply **replies)
{
    wsi_annot an = {.cause = cause, .sub = s, .role = role};
    return wsi_send(s->sim, s->sim->reader, n, cmds, &an, replies);
}

/* Frees n commands and the array. */
static void free_cmds(wsi_cmd **cmds, size_t n)
{
    for (size_t i = 0; i < n; i++) wsi_cmd_free(cmds[i]);
    wsi_free(cmds);
}

/* Ties the copy the delay-queue sweep re-added to s's key to the delivery it copies. */
static void lineage_from_id(ws_sub *s, const char *orig, size_t orig_len, const char *copy,
                            size_t copy_len)
{
    ws_sim *sim = s->sim;
    for (size_t i = 0; i < sim->ndl; i++) {
        ws_delivery *d = sim->dl[i];
        if (d->id_len == orig_len && memcmp(d->id, orig, orig_len) == 0 &&
            strcmp(d->sub->key, s->key) == 0) {
            wsi_lineage_add(sim, d, copy, copy_len);
            return;
        }
    }
}

/* One command through the pool (the window connection) for sub, awaited: the sweeps and
 * the claims' bookkeeping go through the framework's pool, not the reader. */
static int pool_one(ws_sub *s, const char *cause, wsi_cmd *c, const fr_reply **r)
{
    wsi_annot an = {.cause = cause, .sub = s, .role = WSI_ROLE_SWEEP};
    return wsi_send(s->sim, s->sim->window, 1, &c, &an, r);
}

/* The same for the command b holds (b is empty again after). */
static int pool_built(ws_sub *s, const char *cause, wsi_cmdb *b, const fr_reply **r)
{
    wsi_cmd *c = wsi_cmdb_done(b);
    int rc = pool_one(s, cause, c, r);
    wsi_cmd_free(c);
    return rc;
}

/* The framework's sweeps and claims await each command with `?` (delay.rs sweep_due,
 * recovery.rs sweep_orphans and record_claim): an error reply ends the fetch, and the read
 * fails with it (the runtime logs "subscriber stream error" and reads again: dispatch.rs
 * spawn_dispatch).  WS_EINVAL with "<cause> failed: <error>" when r is an error reply. */
static int step_failed(ws_sub *s, const char *cause, const fr_reply *r)
{
    if (r->type != FR_REPLY_ERROR) return 0;
    return wsi_fail(s->sim, WS_EINVAL, "%s failed: %s", cause, r->str);
}

/* The due members of a sorted set the sweeps read: `ZRANGEBYSCORE <zset> 0 <max> LIMIT 0
 * 128` through the pool, copied into *members / *lens (free with wsi_strings_free).
 * Returns the count (0: none), or < 0 on a failed round trip. */
static long due_members(ws_sub *s, const char *zset, int64_t max, const char *cause,
                        char ***members, size_t **lens)
{
    *members = NULL;
    *lens = NULL;
    wsi_cmdb b = {0};
    wsi_cmdb_adds(&b, "ZRANGEBYSCORE");
    wsi_cmdb_adds(&b, zset);
    wsi_cmdb_adds(&b, "0");
    wsi_cmdb_addll(&b, (long long)max);
    wsi_cmdb_adds(&b, "LIMIT");
    wsi_cmdb_adds(&b, "0");
    wsi_cmdb_adds(&b, "128");
    const fr_reply *r = NULL;
    int rc = pool_built(s, cause, &b, &r);
    if (rc || (rc = step_failed(s, cause, r))) return rc;
    if (r->type != FR_REPLY_ARRAY || r->count == 0) return 0;
    size_t n = r->count;
    *members = wsi_xcalloc(n, sizeof **members);
    *lens = wsi_xcalloc(n, sizeof **lens);
    for (size_t i = 0; i < n; i++) {
        (*members)[i] = wsi_xmemdup(r->elements[i].str, r->elements[i].len);
        (*lens)[i] = r->elements[i].len;
    }
    return (long)n;
}

/* One due member of the delay queue (delay.rs sweep_due): ZREM, and only if that removed
 * it, the copy XADDed back to the stream -- each awaited, so a crash between the two loses
 * this one copy, and so does an XADD that answers an error (the member is gone).  An error
 * of either ends the sweep and fails the read.  A member that does not decode is gone with
 * its ZREM. */
static int delay_sweep_one(ws_sub *s, const char *cause, const char *m, size_t mlen)
{
    ws_sim *sim = s->sim;
    wsi_cmdb b = {0};
    wsi_cmdb_adds(&b, "ZREM");
    wsi_cmdb_adds(&b, s->delay_queue);
    wsi_cmdb_add(&b, m, mlen);
    const fr_reply *r = NULL;
    int rc = pool_built(s, cause, &b, &r);
    if (rc || (rc = step_failed(s, cause, r))) return rc;
    if (r->type != FR_REPLY_INTEGER || r->integer != 1) return 0;
    char **parts;
    size_t *plens;
    long np = wsi_dq_decode(m, mlen, &parts, &plens);
    if (np < 1) {
        wsi_trace_note(sim, "-- delay queue %s: a member that does not decode is dropped\n",
                       s->delay_queue);
        return 0;
    }
    wsi_cmdb_adds(&b, "XADD");
    wsi_cmdb_adds(&b, s->key);
    wsi_cmdb_adds(&b, "*");
    for (long k = 1; k < np; k++) wsi_cmdb_add(&b, parts[k], plens[k]);
    rc = pool_built(s, cause, &b, &r);
    if (rc == 0 && r->type == FR_REPLY_BULK)
        lineage_from_id(s, parts[0], plens[0], r->str, r->len);
    if (rc == 0 && r->type == FR_REPLY_ERROR)
        wsi_trace_note(sim, "-- %s: the copy swept out of %s was not added back (%s): it is "
                       "lost\n", s->name, s->delay_queue, r->str);
    if (rc == 0) rc = step_failed(s, cause, r);
    wsi_strings_free(parts, plens, (size_t)np);
    return rc;
}

/* A sweep of a sorted set: its members due by max (due_members), each handed to one in
 * order until one fails -- the delay queue's and the orphans' sweeps alike. */
static int sweep(ws_sub *s, const char *zset, int64_t max, const char *cause,
                 int (*one)(ws_sub *s, const char *cause, const char *m, size_t mlen))
{
    char **members;
    size_t *mlens;
    long got = due_members(s, zset, max, cause, &members, &mlens);
    if (got <= 0) return (int)got;
    int rc = 0;
    for (size_t i = 0; rc == 0 && i < (size_t)got; i++) rc = one(s, cause, members[i], mlens[i]);
    wsi_strings_free(members, mlens, (size_t)got);
    return rc;
}

/* The delay-queue sweep before a stream read: the due members, one at a time. */
static int delay_sweep(ws_sub *s, const char *cause)
{
    return sweep(s, s->delay_queue, wsi_now(s->sim), cause, delay_sweep_one);
}

/* Sends the read command b holds (one round trip on the reader) and hands its reply
 * back in *r; an error reply fails the read, with the server's text. */
static int read_one(ws_sub *s, uint64_t read, const char *cause, wsi_cmdb *b,
                    const fr_reply **r)
{
    wsi_cmd *c = wsi_cmdb_done(b);
    int rc = reader_send(s, cause, 1, &c, WSI_ROLE_READ, r);
    wsi_cmd_free(c);
    if (rc) return rc;
    if ((*r)->type == FR_REPLY_ERROR)
        return wsi_fail(s->sim, WS_EINVAL, "read %llu of %s failed: %s",
                        (unsigned long long)read, s->name, (*r)->str);
    return 0;
}

/* A reply's integer, or the number a bulk string holds (Redis answers CLAIM's counters
 * as integers; the framework accepts numeric strings too). */
static long long reply_number(const fr_reply *r)
{
    if (r->type == FR_REPLY_INTEGER) return r->integer;
    if (r->type == FR_REPLY_BULK && r->str) return strtoll(r->str, NULL, 10);
    return 0;
}

/* A stream's fresh read: XREADGROUP ... STREAMS <key> > (with CLAIM <min-idle> for a
 * claiming read), a delivery per entry. */
static int read_fresh(ws_sub *s, uint64_t read, const char *cause)
{
    wsi_cmdb b = {0};
    wsi_cmdb_adds(&b, "XREADGROUP");
    wsi_cmdb_adds(&b, "GROUP");
    wsi_cmdb_adds(&b, s->group);
    wsi_cmdb_adds(&b, s->consumer);
    wsi_cmdb_adds(&b, "COUNT");
    wsi_cmdb_addll(&b, (long long)s->cfg.count);
    wsi_cmdb_adds(&b, "BLOCK");
    wsi_cmdb_addll(&b, (long long)s->cfg.block_ms);
    if (s->cfg.claiming) {
        /* RedisStream::claiming (subscriber.rs fetch_claiming): idle pending entries
         * come back with the fresh ones, Redis 8.4 */
        wsi_cmdb_adds(&b, "CLAIM");
        wsi_cmdb_addll(&b, (long long)s->cfg.min_idle_ms);
    }
    wsi_cmdb_adds(&b, "STREAMS");
    wsi_cmdb_adds(&b, s->key);
    wsi_cmdb_adds(&b, ">");
    const fr_reply *r = NULL;
    int rc = read_one(s, read, cause, &b, &r);
    if (rc) return rc;
    if (r->type != FR_REPLY_ARRAY || r->count == 0) return 0;
    const fr_reply *entries = &r->elements[0].elements[1];
    for (size_t i = 0; i < entries->count; i++) {
        const fr_reply *e = &entries->elements[i];
        if (e->type != FR_REPLY_ARRAY || e->count < 2) continue;
        ws_delivery *d = new_delivery(s, read, e->elements[0].str, e->elements[0].len);
        wsi_delivery_set_fields(d, &e->elements[1]);
        if (!s->cfg.claiming) continue;
        /* each entry is [id, fields, idle, count]: the count and idle time as of the
         * previous delivery, both 0 for a fresh one; the framework puts them in the
         * headers (subscriber.rs annotate_claimed) and counts this delivery as the
         * next one (redelivery_count = count + 1) */
        long long idle = e->count >= 4 ? reply_number(&e->elements[2]) : 0;
        long long count = e->count >= 4 ? reply_number(&e->elements[3]) : 0;
        wsi_delivery_set_field(d, "h:redis-delivery-count", count);
        wsi_delivery_set_field(d, "h:redis-idle-ms", idle);
        d->count = count + 1;
    }
    return 0;
}

/* A stream's reclaim read (subscriber.rs fetch_reclaim @ 72ad959): XAUTOCLAIM from the
 * cursor, then XPENDING for the reclaimed entries' delivery counts and idle times, which
 * become their headers; nothing to reclaim makes the reader wait its block time.  The cursor
 * moves with the XAUTOCLAIM's answer, before the XPENDING: an XPENDING that fails fails the
 * whole read (enrich_reclaimed's `?`), and the entries XAUTOCLAIM took are pending under
 * this consumer, handed to no handler, the scan past them. */
static int read_reclaim(ws_sub *s, uint64_t read, const char *cause)
{
    wsi_cmdb b = {0};
    wsi_cmdb_adds(&b, "XAUTOCLAIM");
    wsi_cmdb_adds(&b, s->key);
    wsi_cmdb_adds(&b, s->group);
    wsi_cmdb_adds(&b, s->consumer);
    wsi_cmdb_addll(&b, (long long)s->cfg.min_idle_ms);
    wsi_cmdb_adds(&b, s->cursor);
    wsi_cmdb_adds(&b, "COUNT");
    wsi_cmdb_addll(&b, (long long)s->cfg.count);
    const fr_reply *r = NULL;
    int rc = read_one(s, read, cause, &b, &r);
    if (rc) return rc;
    if (r->type != FR_REPLY_ARRAY || r->count < 2) return 0;
    wsi_snprintf(s->cursor, sizeof s->cursor, "%.*s", (int)r->elements[0].len, r->elements[0].str);
    /* the claimed entries, kept as [id, field, value, ...] until XPENDING answers */
    const fr_reply *entries = &r->elements[1];
    size_t n = 0;
    wsi_cmd **got = wsi_xcalloc(entries->count ? entries->count : 1, sizeof *got);
    for (size_t i = 0; i < entries->count; i++) {
        const fr_reply *e = &entries->elements[i];
        if (e->type != FR_REPLY_ARRAY || e->count < 2) continue;
        wsi_cmdb_add(&b, e->elements[0].str, e->elements[0].len);
        const fr_reply *f = &e->elements[1];
        for (size_t k = 0; f->type == FR_REPLY_ARRAY && k < f->count; k++)
            wsi_cmdb_add(&b, f->elements[k].str ? f->elements[k].str : "", f->elements[k].len);
        got[n++] = wsi_cmdb_done(&b);
    }
    if (n == 0) {
        wsi_free(got);
        /* nothing to reclaim: the framework's reclaim loop sleeps `block` before its next
         * read (subscriber.rs fetch_reclaim), and the clock goes on meanwhile */
        wsi_trace_note(s->sim, "-- %s: nothing to reclaim: the reader waits %lld ms\n",
                       s->name, (long long)s->cfg.block_ms);
        return wsi_advance(s->sim, s->cfg.block_ms);
    }
    wsi_cmdb_adds(&b, "XPENDING");
    wsi_cmdb_adds(&b, s->key);
    wsi_cmdb_adds(&b, s->group);
    wsi_cmdb_adds(&b, "IDLE");
    wsi_cmdb_adds(&b, "0");
    wsi_cmdb_adds(&b, "-");
    wsi_cmdb_adds(&b, "+");
    wsi_cmdb_addll(&b, (long long)s->cfg.count);
    wsi_cmdb_adds(&b, s->consumer);
    rc = read_one(s, read, cause, &b, &r);
    if (rc) {
        if (!s->sim->dead)
            wsi_trace_note(s->sim, "-- %s: XPENDING failed: the %zu entr%s XAUTOCLAIM took stay "
                           "pending under %s, handed out to no handler, and the scan goes on "
                           "past them\n", s->name, n, n == 1 ? "y" : "ies", s->consumer);
        for (size_t i = 0; i < n; i++) wsi_cmd_free(got[i]);
        wsi_free(got);
        return rc;
    }
    for (size_t k = 0; k < n; k++) {
        ws_delivery *d = new_delivery(s, read, got[k]->argv[0], got[k]->argvlen[0]);
        wsi_delivery_set_fields_from(d, got[k], 1);
        wsi_cmd_free(got[k]);
        int listed = 0;
        long long idle = 0;
        d->count = 0;
        for (size_t i = 0; r->type == FR_REPLY_ARRAY && i < r->count && !listed; i++) {
            const fr_reply *p = &r->elements[i];
            if (p->type != FR_REPLY_ARRAY || p->count < 4) continue;
            if (d->id_len == p->elements[0].len &&
                memcmp(d->id, p->elements[0].str, d->id_len) == 0) {
                idle = p->elements[2].integer;
                d->count = p->elements[3].integer;
                listed = 1;
            }
        }
        /* XPENDING lists the consumer's first COUNT pending entries, oldest first: one
         * that already held COUNT older ones does not learn the claimed entry's count,
         * and the framework takes 0 for both (subscriber.rs enrich_reclaimed). */
        if (!listed)
            wsi_trace_note(s->sim, "-- %s: XPENDING did not list %s (the consumer holds "
                           "older pending entries): its delivery count and idle time are "
                           "taken as 0\n", s->name, d->shown);
        wsi_delivery_set_field(d, "h:redis-delivery-count", d->count);
        wsi_delivery_set_field(d, "h:redis-idle-ms", idle);
    }
    wsi_free(got);
    return 0;
}

/* Seconds for BLMOVE / BRPOP, from the configured milliseconds ("0.010"). */
static void add_seconds(wsi_cmdb *b, int64_t ms)
{
    char buf[48];
    int n = wsi_snprintf(buf, sizeof buf, "%lld.%03lld", (long long)(ms / 1000),
                     (long long)(ms % 1000));
    wsi_cmdb_add(b, buf, (size_t)n);
}

/* One orphan of the recovery set (recovery.rs sweep_orphans): LREM of its value from the
 * processing list, LPUSH back to the main list only if that removed it, then ZREM of the
 * member whatever LREM said -- each awaited: a crash between LREM and LPUSH loses it, and so
 * does an LPUSH that answers an error.  An error of any ends the sweep and fails the read.
 * A member too short to hold a value (recovery.rs value_from_member: fewer than 12 bytes)
 * is only removed. */
static int orphan_one(ws_sub *s, const char *cause, const char *m, size_t mlen)
{
    size_t vlen = 0;
    const char *value = wsi_recovery_value(m, mlen, &vlen);
    wsi_cmdb b = {0};
    const fr_reply *r = NULL;
    int rc = 0;
    if (value) {
        wsi_cmdb_adds(&b, "LREM");
        wsi_cmdb_adds(&b, s->processing);
        wsi_cmdb_adds(&b, "1");
        wsi_cmdb_add(&b, value, vlen);
        rc = pool_built(s, cause, &b, &r);
        if (rc || (rc = step_failed(s, cause, r))) return rc;
    }
    if (value && r->type == FR_REPLY_INTEGER && r->integer == 1) {
        wsi_cmdb_adds(&b, "LPUSH");
        wsi_cmdb_adds(&b, s->key);
        wsi_cmdb_add(&b, value, vlen);
        rc = pool_built(s, cause, &b, &r);
        if (rc == 0 && r->type == FR_REPLY_ERROR)
            wsi_trace_note(s->sim, "-- %s: an orphan taken off %s was not pushed back (%s): it "
                           "is lost\n", s->name, s->processing, r->str);
        if (rc || (rc = step_failed(s, cause, r))) return rc;
    }
    wsi_cmdb_adds(&b, "ZREM");
    wsi_cmdb_adds(&b, s->recovery);
    wsi_cmdb_add(&b, m, mlen);
    rc = pool_built(s, cause, &b, &r);
    return rc ? rc : step_failed(s, cause, r);
}

/* The orphan sweep of a reliable list with recovery: values claimed longer than min-idle
 * ago by a consumer that never settled them go back to the main list, one at a time. */
static int orphan_sweep(ws_sub *s, const char *cause)
{
    return sweep(s, s->recovery, wsi_now(s->sim) - s->cfg.min_idle_ms, cause, orphan_one);
}

/* The claims of a window read's new deliveries (first .. nlast) in the recovery set: a
 * member each, ZADD at the claim time, then PEXPIRE when a recovery ttl is set, in one
 * pipeline through the pool (list.rs track @ e9525ff).  Its error replies do not stop the
 * deliveries: the framework's read answers the error once and hands the entries it had
 * claimed out at the next poll, their handles made (a direct read claims one value before it
 * delivers it: claim_then_deliver). */
static int record_claims(ws_sub *s, size_t first, const char *cause)
{
    ws_sim *sim = s->sim;
    size_t k = s->nlast - first, n = 0;
    wsi_cmd **cmds = wsi_xcalloc(k + 1, sizeof *cmds);
    wsi_cmdb b = {0};
    for (size_t i = 0; i < k; i++) {
        ws_delivery *d = s->last[first + i];
        d->member = wsi_recovery_member(sim->pid, sim->claims++, d->id, d->id_len,
                                        &d->member_len);
        wsi_cmdb_adds(&b, "ZADD");
        wsi_cmdb_adds(&b, s->recovery);
        wsi_cmdb_addll(&b, (long long)wsi_now(sim));
        wsi_cmdb_add(&b, d->member, d->member_len);
        cmds[n++] = wsi_cmdb_done(&b);
    }
    if (s->cfg.recovery_ttl_ms) {
        wsi_cmdb_adds(&b, "PEXPIRE");
        wsi_cmdb_adds(&b, s->recovery);
        wsi_cmdb_addll(&b, (long long)s->cfg.recovery_ttl_ms);
        cmds[n++] = wsi_cmdb_done(&b);
    }
    const fr_reply **rr = wsi_xcalloc(n, sizeof *rr);
    wsi_annot an = {.cause = cause, .sub = s, .role = WSI_ROLE_SWEEP};
    int rc = wsi_send(sim, sim->window, n, cmds, &an, rr);
    wsi_free(rr);
    free_cmds(cmds, n);
    return rc;
}

/* A direct-mode reliable list with recovery records its claim before it delivers. */
static int direct_claims(const ws_sub *s)
{
    return s->cfg.mode == WS_MODE_DIRECT && s->recovery;
}

/* Direct mode (list.rs next_entry @ e9525ff): the value BLMOVE moved is delivered only once
 * its claim is recorded -- recovery.rs record_claim: ZADD, then PEXPIRE with a recovery ttl,
 * each awaited with `?`.  One that answers an error fails the read: the value stays on the
 * processing list, and no member names it unless the ZADD took (stranded, as after a crash
 * between the move and the claim). */
static int claim_then_deliver(ws_sub *s, uint64_t read, const fr_reply *moved)
{
    ws_sim *sim = s->sim;
    size_t vlen = moved->len;
    char *value = wsi_xmemdup(moved->str, vlen);
    size_t mlen;
    char *member = wsi_recovery_member(sim->pid, sim->claims++, value, vlen, &mlen);
    char cause[192];
    wsi_cause_numbered(cause, sizeof cause, "claims of read ", read, " of ", s->name);
    wsi_cmdb b = {0};
    wsi_cmdb_adds(&b, "ZADD");
    wsi_cmdb_adds(&b, s->recovery);
    wsi_cmdb_addll(&b, (long long)wsi_now(sim));
    wsi_cmdb_add(&b, member, mlen);
    const fr_reply *r = NULL;
    int rc = pool_built(s, cause, &b, &r);
    if (rc == 0 && r->type != FR_REPLY_ERROR && s->cfg.recovery_ttl_ms) {
        wsi_cmdb_adds(&b, "PEXPIRE");
        wsi_cmdb_adds(&b, s->recovery);
        wsi_cmdb_addll(&b, (long long)s->cfg.recovery_ttl_ms);
        rc = pool_built(s, cause, &b, &r);
    }
    if (rc == 0 && r->type == FR_REPLY_ERROR) {
        char *shown = (char *)wsi_shown(value, vlen);
        wsi_trace_note(sim, "-- %s: the claim of %s was not recorded: it stays on %s, "
                       "delivered to no handler\n", s->name, shown, s->processing);
        if (shown != value) wsi_free(shown);
        rc = step_failed(s, cause, r);
    }
    if (rc == 0) {
        ws_delivery *d = new_delivery(s, read, value, vlen);
        d->member = member;
        d->member_len = mlen;
        member = NULL;
    }
    wsi_free(member);
    wsi_free(value);
    return rc;
}

/* A blocking pop: BLMOVE <key> <processing> RIGHT LEFT <s> or BRPOP <key> <s> (one
 * delivery at most). */
static int blocking_pop(ws_sub *s, uint64_t read, const char *cause)
{
    wsi_cmdb b = {0};
    int reliable = s->cfg.form == WS_FORM_RELIABLE_LIST;
    wsi_cmdb_adds(&b, reliable ? "BLMOVE" : "BRPOP");
    wsi_cmdb_adds(&b, s->key);
    if (reliable) {
        wsi_cmdb_adds(&b, s->processing);
        wsi_cmdb_adds(&b, "RIGHT");
        wsi_cmdb_adds(&b, "LEFT");
    }
    add_seconds(&b, s->cfg.block_ms);
    wsi_cmd *c = wsi_cmdb_done(&b);
    const fr_reply *r = NULL;
    int rc = reader_send(s, cause, 1, &c, WSI_ROLE_READ, &r);
    wsi_cmd_free(c);
    if (rc || (rc = step_failed(s, cause, r))) return rc; /* list.rs empty_on_timeout */
    if (reliable && r->type == FR_REPLY_BULK && direct_claims(s)) return claim_then_deliver(s, read, r);
    if (reliable && r->type == FR_REPLY_BULK) new_delivery(s, read, r->str, r->len);
    if (!reliable && r->type == FR_REPLY_ARRAY && r->count == 2)
        new_delivery(s, read, r->elements[1].str, r->elements[1].len);
    return 0;
}

/* A plain list's read in a window (ListReader::round_batches): `RPOP <key> <count>`. */
static int read_rpop(ws_sub *s, uint64_t read, const char *cause)
{
    wsi_cmdb b = {0};
    wsi_cmdb_adds(&b, "RPOP");
    wsi_cmdb_adds(&b, s->key);
    wsi_cmdb_addll(&b, (long long)s->cfg.count);
    const fr_reply *r = NULL;
    int rc = read_one(s, read, cause, &b, &r);
    if (rc) return rc;
    if (r->type == FR_REPLY_ARRAY)
        for (size_t i = 0; i < r->count; i++)
            new_delivery(s, read, r->elements[i].str, r->elements[i].len);
    return 0;
}

/* A reliable list's read in a window (ListReader::round_batches): COUNT LMOVEs to the
 * processing list in one pipeline, a delivery per value moved. */
static int read_lmoves(ws_sub *s, uint64_t read, const char *cause)
{
    wsi_cmdb b = {0};
    size_t n = s->cfg.count;
    wsi_cmd **moves = wsi_xcalloc(n, sizeof *moves);
    for (size_t i = 0; i < n; i++) {
        wsi_cmdb_adds(&b, "LMOVE");
        wsi_cmdb_adds(&b, s->key);
        wsi_cmdb_adds(&b, s->processing);
        wsi_cmdb_adds(&b, "RIGHT");
        wsi_cmdb_adds(&b, "LEFT");
        moves[i] = wsi_cmdb_done(&b);
    }
    const fr_reply **rr = wsi_xcalloc(n, sizeof *rr);
    int rc = reader_send(s, cause, n, moves, WSI_ROLE_READ, rr);
    free_cmds(moves, n);
    for (size_t i = 0; rc == 0 && i < n; i++)
        if (rr[i]->type == FR_REPLY_BULK) new_delivery(s, read, rr[i]->str, rr[i]->len);
    wsi_free(rr);
    return rc;
}

/* A list read.  Direct mode (list.rs next_entry): one blocking pop per read, one delivery.
 * A window: read_rpop or read_lmoves, either falling back to the blocking pop when it
 * gave nothing.  A reliable list with recovery sweeps its orphans first and records its
 * claims after. */
static int read_list(ws_sub *s, uint64_t read, const char *cause)
{
    size_t first = s->nlast;
    int reliable = s->cfg.form == WS_FORM_RELIABLE_LIST;
    int rc = 0;
    if (reliable && s->recovery) {
        char sc[192];
        wsi_cause_numbered(sc, sizeof sc, "recovery sweep before read ", read, " of ", s->name);
        rc = orphan_sweep(s, sc);
        if (rc) return rc;
    }
    if (s->cfg.mode != WS_MODE_DIRECT) rc = reliable ? read_lmoves(s, read, cause)
                                                     : read_rpop(s, read, cause);
    if (rc) return rc;
    if (s->nlast == first) rc = blocking_pop(s, read, cause);
    if (rc == 0 && reliable && s->recovery && s->nlast > first && !direct_claims(s)) {
        char cc[192];
        wsi_cause_numbered(cc, sizeof cc, "claims of read ", read, " of ", s->name);
        rc = record_claims(s, first, cc);
    }
    return rc;
}

/* A stream read: the delay queue's sweep first when there is one, then the fresh or the
 * reclaim read. */
static int read_stream(ws_sub *s, uint64_t read, const char *cause)
{
    int rc = 0;
    if (s->delay_queue) {
        char sc[192];
        wsi_cause_numbered(sc, sizeof sc, "delay-queue sweep before read ", read, " of ",
                           s->name);
        rc = delay_sweep(s, sc);
    }
    if (rc == 0) rc = s->cfg.reclaim ? read_reclaim(s, read, cause) : read_fresh(s, read, cause);
    return rc;
}

/* The client's broadcast buffer holds the newest `buffer` messages a subscriber has not
 * received (ws_sub_config.buffer, 32 by default): one that fell further behind skips the
 * oldest, never to see them (pubsub.rs round_stream @ 0010e47: RecvError::Lagged -- "skip
 * the gap and keep reading").  Pub/Sub is at most once: a skip is no violation; it is
 * counted (ws_sim_counts.skipped) and warned, naming what was skipped. */
static void skip_lagged(ws_sub *s, uint64_t read)
{
    size_t cap = s->cfg.buffer ? s->cfg.buffer : WSI_PUBSUB_BUFFER;
    if (s->nbuffered <= cap) return;
    size_t skip = s->nbuffered - cap;
    wsi_text t = {0};
    wsi_text_printf(&t, "read %llu of %s skips %zu message%s: its subscriber fell behind its "
                    "buffer of %zu (the client's broadcast channel), so ", (unsigned long long)read,
                    s->name, skip, skip == 1 ? "" : "s", cap);
    for (size_t i = 0; i < skip; i++) {
        if (i == 3) {
            wsi_text_printf(&t, ", ... (%zu more)", skip - 3);
            break;
        }
        if (i) wsi_text_add(&t, ", ", 2);
        wsi_text_arg(&t, s->buffered[i], s->buffered_len[i]);
    }
    wsi_text_printf(&t, " %s never delivered", skip == 1 ? "is" : "are");
    wsi_warn(s->sim, t.p);
    wsi_free(t.p);
    for (size_t i = 0; i < skip; i++) wsi_free(s->buffered[i]);
    memmove(s->buffered, s->buffered + skip, cap * sizeof *s->buffered);
    memmove(s->buffered_len, s->buffered_len + skip, cap * sizeof *s->buffered_len);
    s->nbuffered = cap;
    s->sim->counts.skipped += skip;
}

/* A channel read (Pub/Sub): what was published before the read (a barrier), then, if
 * nothing was, what arrives within BLOCK; what the buffer could not hold is skipped; up
 * to COUNT buffered messages become deliveries, the rest wait. */
static int read_channel(ws_sub *s, uint64_t read)
{
    int rc = wsi_channel_poll(s, -1);
    if (rc == 0 && s->nbuffered == 0) rc = wsi_channel_poll(s, (int)s->cfg.block_ms);
    if (rc) return rc;
    skip_lagged(s, read);
    size_t take = s->nbuffered < s->cfg.count ? s->nbuffered : s->cfg.count;
    for (size_t i = 0; i < take; i++) new_delivery(s, read, s->buffered[i], s->buffered_len[i]);
    if (take > 0) {
        for (size_t i = 0; i < take; i++) wsi_free(s->buffered[i]);
        memmove(s->buffered, s->buffered + take, (s->nbuffered - take) * sizeof *s->buffered);
        memmove(s->buffered_len, s->buffered_len + take,
                (s->nbuffered - take) * sizeof *s->buffered_len);
        s->nbuffered -= take;
        /* what is buffered behind the last message handed out: the window's `waiting`, set
         * as a message is yielded (pubsub.rs round_stream: window.yielded(rx.len())) */
        s->waiting = s->nbuffered;
    }
    return 0;
}

/* The subscription's next read: a waiting failure report first, else one read of its
 * form; the deliveries get their slots.  Ends as a public call (wsi_api_end). */
int ws_read(ws_sub *s, ws_read_result *out)
{
    ws_sim *sim = s->sim;
    memset(out, 0, sizeof *out);
    if (sim->dead) return wsi_fail(sim, WS_EDEAD, "%s: the consumer process is dead", s->name);
    if (s->stopped) return wsi_fail(sim, WS_ESTATE, "%s: the subscription stopped", s->name);
    if (s->report_waiting) {
        s->report_waiting = 0;
        out->is_report = 1;
        out->report = s->report;
        out->read = s->reads;
        wsi_trace_note(sim, "-- %s hands out the failure report of flush %llu\n", s->name,
                       (unsigned long long)s->report.flush);
        return 0;
    }
    uint64_t read = ++s->reads;
    sim->counts.reads++;
    s->nlast = 0;
    char cause[160];
    wsi_cause_numbered(cause, sizeof cause, "read ", read, " of ", s->name);
    int rc = s->cfg.form == WS_FORM_STREAM    ? read_stream(s, read, cause)
             : s->cfg.form == WS_FORM_CHANNEL ? read_channel(s, read)
                                              : read_list(s, read, cause);
    if (rc) {
        if (sim->dead) {
            s->nlast = 0;
            return wsi_api_end(sim, WS_ECRASHED);
        }
        return rc;
    }
    wsi_assign_slots(s, 0);
    out->read = read;
    out->n = s->nlast;
    return 0;
}

ws_delivery *ws_read_delivery(ws_sub *s, size_t i) { return i < s->nlast ? s->last[i] : NULL; }

/* The outstanding delivery with this id, the latest read first; NULL if none. */
ws_delivery *ws_find(ws_sub *s, const char *id)
{
    size_t len = strlen(id);
    for (size_t i = s->nflight; i-- > 0;) {
        ws_delivery *d = s->flight[i];
        if (d->id_len == len && memcmp(d->id, id, len) == 0) return d;
    }
    return NULL;
}
