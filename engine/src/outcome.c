/* outcome.c -- what the framework's runtime makes of a handler's outcome, and the copies a
 * retry publishes (docs/engine.md, "Where each behaviour comes from").
 *
 * The runtime (ruststream's dispatch.rs, settle_outcome) hands ack and drop to the broker.
 * A retry goes to the broker's own requeue -- a stream re-adds the entry verbatim, a
 * reliable list pushes the value back, a plain list or channel cannot -- unless the
 * subscription declares max-attempts or a dead letter, or the broker has no delay of its
 * own for a retry_after: then the runtime settles the delivery as dropped and publishes a
 * copy itself, through the pool, outside the window, with the retry counter raised
 * (publish_copy): at once, after the delay, or to the dead letter at the cap.  The settle
 * comes first, so a crash between the two loses the entry. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sim_int.h"

#define RETRY_HEADER "h:" WS_RETRY_HEADER

/* ----- The decision --------------------------------------------------------------------- */

/* The attempt the runtime counts for d (dispatch.rs attempt_of, redelivery_of): the
 * server's delivery count where the read has one (a reclaim read: XPENDING's count; a
 * claiming read: the reported count + 1, kept in d->count), else the retry counter + 1. */
static long long attempt_of(const ws_delivery *d)
{
    const ws_sub *s = d->sub;
    if (s->cfg.form == WS_FORM_STREAM && (s->cfg.claiming || s->cfg.reclaim)) return d->count;
    return ws_delivery_retries(d) + 1;
}

/* The broker settles retries and delays natively: a stream's delay queue, a claiming
 * read (which leaves the entry pending). */
static int native_delay(const ws_sub *s)
{
    return s->cfg.form == WS_FORM_STREAM && (s->delay_queue || s->cfg.claiming);
}

/* The read carries the server's delivery count (then an undeclared retry, or one below
 * the cap, is the broker's own requeue). */
static int server_count(const ws_sub *s)
{
    return s->cfg.form == WS_FORM_STREAM && (s->cfg.reclaim || s->cfg.claiming);
}

/* What the runtime makes of outcome o on d: what the broker is told, and which copy (if
 * any) is published with which delay, as max-attempts, the dead letter and the native delay
 * say. */
wsi_plan wsi_plan_outcome(const ws_delivery *d, ws_outcome o, int64_t delay_ms)
{
    const ws_sub *s = d->sub;
    wsi_plan p = {.broker = o};
    if (o != WS_RETRY && o != WS_RETRY_AFTER) return p;
    unsigned cap = s->cfg.max_attempts;
    int dlq = s->dead_letter != NULL;
    int at_cap = cap && attempt_of(d) >= (long long)cap;
    if (o == WS_RETRY_AFTER && native_delay(s)) {
        /* the native delay wins unless max-attempts says the cap is reached */
        if (!at_cap) return p;
    } else if (!cap && !dlq) {
        if (o == WS_RETRY) return p; /* undeclared: the broker's requeue */
        /* a retry_after without a native delay: the runtime's delayed copy */
        p.broker = WS_DROP;
        p.copy = WSI_COPY_SUBSCRIPTION;
        p.delay_ms = delay_ms;
        return p;
    }
    if (at_cap || (!cap && dlq)) {
        p.broker = WS_DROP;
        p.copy = dlq ? WSI_COPY_DEAD_LETTER : WSI_COPY_NONE;
        p.rejected = !dlq;
        return p;
    }
    if (o == WS_RETRY && server_count(s)) return p; /* below the cap: the broker's requeue */
    p.broker = WS_DROP;
    p.copy = WSI_COPY_SUBSCRIPTION;
    p.delay_ms = o == WS_RETRY_AFTER ? delay_ms : 0;
    return p;
}

/* ----- Copies ---------------------------------------------------------------------------- */

/* Appends the fields of a copy of d: its payload and headers, the retry header raised by
 * one when raise is set. */
void wsi_copy_fields(const ws_delivery *d, int raise, wsi_cmdb *b)
{
    long long next = ws_delivery_retries(d) + 1;
    int replaced = 0;
    size_t payload = d->nfields;
    for (size_t i = 0; i + 1 < d->nfields; i += 2)
        if (d->field_lens[i] == 8 && memcmp(d->fields[i], "_payload", 8) == 0) payload = i;
    wsi_cmdb_adds(b, "_payload");
    if (payload < d->nfields) wsi_cmdb_add(b, d->fields[payload + 1], d->field_lens[payload + 1]);
    else wsi_cmdb_add(b, "", 0);
    for (size_t i = 0; i + 1 < d->nfields; i += 2) {
        if (d->field_lens[i] <= 2 || memcmp(d->fields[i], "h:", 2) != 0) continue;
        wsi_cmdb_add(b, d->fields[i], d->field_lens[i]);
        if (raise && d->field_lens[i] == sizeof RETRY_HEADER - 1 &&
            memcmp(d->fields[i], RETRY_HEADER, sizeof RETRY_HEADER - 1) == 0) {
            wsi_cmdb_addll(b, next);
            replaced = 1;
        } else {
            wsi_cmdb_add(b, d->fields[i + 1], d->field_lens[i + 1]);
        }
    }
    if (raise && !replaced) {
        wsi_cmdb_adds(b, RETRY_HEADER);
        wsi_cmdb_addll(b, next);
    }
}

/* How the runtime's default publisher writes name (route.rs Routes::route, publisher.rs
 * RedisDefaultPublish @ abc452f): in the form of the first subscription that reads it or
 * dead-letters to it -- the route is recorded when a subscription opens, its own name and
 * its dead letter with its own form (a reliable list's is a list's LPUSH); a pattern
 * subscription records nothing -- and a name no subscription records is a stream.  Two
 * records of one name never disagree: ws_subscribe refuses the second (sub.c). */
static int route_form(const ws_sim *sim, const char *name)
{
    for (size_t i = 0; i < sim->nsubs; i++) {
        const ws_sub *s = sim->subs[i];
        if (s->cfg.form == WS_FORM_CHANNEL && s->cfg.pattern) continue;
        if (strcmp(s->key, name) != 0 && !(s->dead_letter && strcmp(s->dead_letter, name) == 0))
            continue;
        return s->cfg.form == WS_FORM_RELIABLE_LIST ? WS_FORM_PLAIN_LIST : (int)s->cfg.form;
    }
    return WS_FORM_STREAM;
}

/* A copy of d to key in form, its fields as delivered with the counter raised when
 * `raise`: a stream's XADD, a list's LPUSH or a channel's PUBLISH of the binary frame. */
static wsi_cmd *copy_to(const ws_delivery *d, const char *key, int form, int raise)
{
    wsi_cmdb f = {0};
    wsi_copy_fields(d, raise, &f);
    wsi_cmd *fields = wsi_cmdb_done(&f);
    wsi_cmdb b = {0};
    if (form == WS_FORM_STREAM) {
        wsi_cmdb_adds(&b, "XADD");
        wsi_cmdb_adds(&b, key);
        wsi_cmdb_adds(&b, "*");
        for (int i = 0; i < fields->argc; i++) wsi_cmdb_add(&b, fields->argv[i], fields->argvlen[i]);
    } else {
        size_t flen;
        char *frame = wsi_frame_fields(fields->argv, fields->argvlen, (size_t)fields->argc, &flen);
        wsi_cmdb_adds(&b, form == WS_FORM_CHANNEL ? "PUBLISH" : "LPUSH");
        wsi_cmdb_adds(&b, key);
        wsi_cmdb_add(&b, frame, flen);
        wsi_free(frame);
    }
    wsi_cmd_free(fields);
    return wsi_cmdb_done(&b);
}

/* The broker's requeue of d: the entry re-added verbatim to a stream, the value pushed back
 * on a reliable list. */
wsi_cmd *wsi_requeue_copy(const ws_delivery *d)
{
    const ws_sub *s = d->sub;
    if (s->cfg.form == WS_FORM_STREAM) return copy_to(d, s->key, WS_FORM_STREAM, 0);
    /* a reliable list pushes the value back as it was (list.rs nack: not re-framed) */
    wsi_cmdb b = {0};
    wsi_cmdb_adds(&b, "LPUSH");
    wsi_cmdb_adds(&b, s->key);
    wsi_cmdb_add(&b, d->id, d->id_len);
    return wsi_cmdb_done(&b);
}

/* The writes scheduling d's copy in the delay queue delay_ms from now (ZADD, then PEXPIRE
 * with a delay TTL) into out; returns how many. */
size_t wsi_delay_writes(const ws_delivery *d, int64_t delay_ms, wsi_cmd **out)
{
    ws_sub *s = d->sub;
    wsi_cmdb f = {0};
    wsi_copy_fields(d, 1, &f);
    wsi_cmd *fields = wsi_cmdb_done(&f);
    size_t mlen;
    char *member = wsi_dq_encode(d->id, d->id_len, fields->argv, fields->argvlen,
                                 (size_t)fields->argc, &mlen);
    wsi_cmd_free(fields);
    wsi_cmdb b = {0};
    wsi_cmdb_adds(&b, "ZADD");
    wsi_cmdb_adds(&b, s->delay_queue);
    wsi_cmdb_addll(&b, (long long)(wsi_now(s->sim) + delay_ms));
    wsi_cmdb_add(&b, member, mlen);
    wsi_free(member);
    out[0] = wsi_cmdb_done(&b);
    if (!s->cfg.delay_ttl_ms) return 1;
    wsi_cmdb_adds(&b, "PEXPIRE");
    wsi_cmdb_adds(&b, s->delay_queue);
    wsi_cmdb_addll(&b, (long long)s->cfg.delay_ttl_ms);
    out[1] = wsi_cmdb_done(&b);
    return 2;
}

/* Publishes the copy plan p asks for (to the subscription's key or the dead letter, now or
 * delayed); 0, or the error of the round trip that failed. */
int wsi_publish_copy(ws_delivery *d, const wsi_plan *p)
{
    ws_sub *s = d->sub;
    ws_sim *sim = s->sim;
    if (p->rejected)
        wsi_trace_note(sim, "-- %s: %s is at the cap of max-attempts %u with no dead letter: "
                       "rejected (settled as dropped)\n", s->name, d->shown, s->cfg.max_attempts);
    if (p->copy == WSI_COPY_NONE || sim->dead) return 0;
    int dlq = p->copy == WSI_COPY_DEAD_LETTER;
    if (!dlq && s->cfg.form == WS_FORM_CHANNEL && s->cfg.pattern) {
        /* a pattern names no channel to publish to (the framework's pattern descriptors
         * report no redelivery address) */
        wsi_trace_note(sim, "-- %s: a pattern names no channel: no copy of %s\n", s->name,
                       d->shown);
        return 0;
    }
    const char *key = dlq ? s->dead_letter : s->key;
    int form = route_form(sim, key); /* the subscription's own key: its own form */
    wsi_cmd *c = copy_to(d, key, form, 1);
    if (!dlq && form != WS_FORM_STREAM) wsi_lineage_add(sim, d, c->argv[2], c->argvlen[2]);
    if (p->delay_ms > 0) {
        wsi_timer_add(sim, s, d, wsi_now(sim) + p->delay_ms, c);
        wsi_trace_note(sim, "-- timer: the copy of %s is due at %lld ms\n", d->shown,
                       (long long)(wsi_now(sim) + p->delay_ms));
        return 0;
    }
    char cause[192];
    wsi_snprintf(cause, sizeof cause, "%s of %s", dlq ? "dead letter" : "retry copy", d->shown);
    const fr_reply *r = NULL;
    wsi_annot an = {.cause = cause, .sub = s, .role = WSI_ROLE_COPY, .dl = d};
    int rc = wsi_send(sim, sim->window, 1, &c, &an, &r);
    if (rc == 0 && r->type != FR_REPLY_ERROR) {
        d->copy_sent = 1;
        if (!dlq && r->type == FR_REPLY_BULK && form == WS_FORM_STREAM)
            wsi_lineage_add(sim, d, r->str, r->len);
    }
    wsi_cmd_free(c);
    return rc;
}
