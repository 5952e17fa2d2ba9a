/* sub.c -- subscriptions: their configuration, their start in each process (the group,
 * the channel's connection), their names, stop and end.  Reads are read.c's, a handler's
 * actions action.c's, settling window.c's. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sim_int.h"

/* ----- Configuration ------------------------------------------------------------------------- */

/* A form as the trace names it. */
static const char *form_name(int form)
{
    switch (form) {
    case WS_FORM_STREAM: return "stream";
    case WS_FORM_RELIABLE_LIST: return "reliable list";
    case WS_FORM_PLAIN_LIST: return "plain list";
    case WS_FORM_CHANNEL: return "channel";
    default: return "?";
    }
}

/* The Redis type a form writes its names as (route.rs Route): a stream's XADD, a list's
 * LPUSH (reliable and plain alike), a channel's PUBLISH. */
static int family_of(int form)
{
    return form == WS_FORM_RELIABLE_LIST ? WS_FORM_PLAIN_LIST : form;
}

static const char *family_noun(int family)
{
    return family == WS_FORM_STREAM ? "stream" : family == WS_FORM_CHANNEL ? "Pub/Sub channel"
                                                                            : "list";
}

/* The framework records a subscription's own name and its dead letter when it opens, and
 * refuses one that writes a name already recorded another way (route.rs
 * Routes::record_subscription @ abc452f: "one of the two would receive writes it cannot
 * read"); a pattern subscription records nothing.  WS_EINVAL with the sentence, or 0. */
static int routes_conflict(ws_sim *sim, const ws_sub_config *cfg)
{
    if (cfg->form == WS_FORM_CHANNEL && cfg->pattern) return 0;
    const char *mine[2] = {cfg->key, cfg->dead_letter};
    for (size_t i = 0; i < sim->nsubs; i++) {
        const ws_sub *o = sim->subs[i];
        if (o->cfg.form == WS_FORM_CHANNEL && o->cfg.pattern) continue;
        if (family_of(o->cfg.form) == family_of(cfg->form)) continue;
        const char *theirs[2] = {o->key, o->dead_letter};
        for (int a = 0; a < 2; a++)
            for (int b = 0; b < 2; b++)
                if (mine[a] && theirs[b] && strcmp(mine[a], theirs[b]) == 0)
                    return wsi_fail(sim, WS_EINVAL,
                                    "the subscription on %s writes %s as a %s, but subscription "
                                    "%s already reads or dead-letters to %s as a %s: one of the "
                                    "two would receive writes it cannot read, so the framework "
                                    "refuses to start (give one of them another name)",
                                    cfg->key, mine[a], family_noun(family_of(cfg->form)),
                                    o->name, mine[a], family_noun(family_of(o->cfg.form)));
    }
    return 0;
}

/* The server's version as major * 10000 + minor * 100 + patch, or -1 when it reports none:
 * a real server's `INFO server` redis_version, read on the admin connection outside the
 * trace (fred reads it in its handshake: no round trip of the consumer).  The in-process
 * fake answers XREADGROUP ... CLAIM as Redis 8.4 does (docs/fake_redis.md), so it counts as
 * 8.4.0, as the framework's own in-process server reports the version it implements
 * (broker.rs server_version @ e9525ff). */
static long server_version(ws_sim *sim)
{
    if (sim->fake) return 80400;
    static const char *const info[] = {"INFO", "server"};
    wsi_cmd *c = wsi_cmd_copy(2, info, NULL);
    const fr_reply *r = NULL;
    int quiet = sim->quiet;
    sim->quiet = 1;
    int rc = wsi_send(sim, sim->admin, 1, &c, &(wsi_annot){.cause = "check", .role = WSI_ROLE_SETUP},
                      &r);
    sim->quiet = quiet;
    wsi_cmd_free(c);
    if (rc || !r || r->type != FR_REPLY_BULK) return -1;
    const char *v = strstr(r->str, "redis_version:");
    unsigned a = 0, b = 0, d = 0;
    if (!v || sscanf(v + 14, "%u.%u.%u", &a, &b, &d) != 3) return -1;
    return (long)a * 10000 + (long)b * 100 + (long)d;
}

/* The framework's refusals at a subscription's start that depend on the server
 * (broker.rs @ e9525ff): a claiming read on a server older than Redis 8.4.0, or one that
 * reports no version (require_claim_support); a reliable list on a cluster whose
 * processing list hashes to another slot than its key (require_one_slot: a claim's BLMOVE
 * spans both).  WS_EINVAL with the framework's sentence, or 0. */
static int server_refuses(ws_sim *sim, const ws_sub_config *cfg)
{
    if (cfg->form == WS_FORM_STREAM && cfg->claiming) {
        long v = server_version(sim);
        if (v < 0)
            return wsi_fail(sim, WS_EINVAL, "RedisStream::claiming on \"%s\" needs Redis 8.4.0 "
                            "or later (XREADGROUP CLAIM); the connected server reports no "
                            "version", cfg->key);
        if (v < 80400)
            return wsi_fail(sim, WS_EINVAL, "RedisStream::claiming on \"%s\" needs Redis 8.4.0 "
                            "or later (XREADGROUP CLAIM); the connected server is %ld.%ld.%ld",
                            cfg->key, v / 10000, v / 100 % 100, v % 100);
    }
    if (cfg->form == WS_FORM_RELIABLE_LIST && sim->cfg.cluster) {
        wsi_text t = {0};
        if (cfg->processing) wsi_text_printf(&t, "%s", cfg->processing);
        else wsi_text_printf(&t, "%s.processing", cfg->key);
        int apart = fr_key_slot(cfg->key, strlen(cfg->key)) != fr_key_slot(t.p, t.len);
        if (apart)
            wsi_fail(sim, WS_EINVAL, "a reliable list on `%s` cannot run on a cluster while its "
                     "processing list `%s` hashes to another slot: a claim moves the entry "
                     "between the two in one command. Put both on one slot with a hash tag, as "
                     "in RedisList::new(\"{%s}\"), which the default processing key follows",
                     cfg->key, t.p, cfg->key);
        wsi_free(t.p);
        if (apart) return WS_EINVAL;
    }
    return 0;
}

/* A new subscription (its configuration checked and copied), started in the running
 * process; NULL when refused. */
ws_sub *ws_subscribe(ws_sim *sim, const ws_sub_config *cfg)
{
    if (!cfg || !cfg->key || !*cfg->key) {
        wsi_fail(sim, WS_EINVAL, "a subscription needs a key");
        return NULL;
    }
    if (cfg->form < WS_FORM_STREAM || cfg->form > WS_FORM_CHANNEL) {
        wsi_fail(sim, WS_EINVAL, "unknown form %d", (int)cfg->form);
        return NULL;
    }
    if (cfg->mode < WS_MODE_DIRECT || cfg->mode > WS_MODE_ATOMIC) {
        wsi_fail(sim, WS_EINVAL, "unknown mode %d", (int)cfg->mode);
        return NULL;
    }
    if (cfg->form == WS_FORM_STREAM && (!cfg->group || !*cfg->group)) {
        wsi_fail(sim, WS_EINVAL, "the stream subscription on %s needs a group", cfg->key);
        return NULL;
    }
    if (cfg->form != WS_FORM_STREAM && (cfg->reclaim || cfg->delay_queue || cfg->claiming)) {
        wsi_fail(sim, WS_EINVAL, "%s: reclaim and claiming reads and delay queues are for "
                 "streams", cfg->key);
        return NULL;
    }
    if (cfg->reclaim && cfg->claiming) {
        wsi_fail(sim, WS_EINVAL, "%s: a subscription reads fresh, reclaims or claims: one "
                 "of them", cfg->key);
        return NULL;
    }
    if (cfg->dead_letter && !*cfg->dead_letter) {
        wsi_fail(sim, WS_EINVAL, "%s: a dead letter needs a key", cfg->key);
        return NULL;
    }
    if (cfg->batch && cfg->count && cfg->count != cfg->batch) {
        wsi_fail(sim, WS_EINVAL, "%s: a batch subscription reads COUNT = its batch size "
                 "(%zu), not %zu", cfg->key, cfg->batch, cfg->count);
        return NULL;
    }
    if (cfg->form != WS_FORM_RELIABLE_LIST &&
        (cfg->recovery || cfg->processing || cfg->recovery_ttl_ms)) {
        wsi_fail(sim, WS_EINVAL, "%s: processing lists and recovery are for reliable lists",
                 cfg->key);
        return NULL;
    }
    if (cfg->batch && cfg->mode == WS_MODE_DIRECT) {
        wsi_fail(sim, WS_EINVAL, "%s: batch handlers take their round from a window", cfg->key);
        return NULL;
    }
    if (cfg->buffer && (cfg->form != WS_FORM_CHANNEL || (cfg->buffer & (cfg->buffer - 1)))) {
        wsi_fail(sim, WS_EINVAL, "%s: a buffer is a channel subscription's, and a power of two",
                 cfg->key);
        return NULL;
    }
    if (cfg->block_ms < 0 || cfg->min_idle_ms < 0 || cfg->delay_ttl_ms < 0 ||
        cfg->recovery_ttl_ms < 0) {
        wsi_fail(sim, WS_EINVAL, "%s: negative block, min-idle or ttl", cfg->key);
        return NULL;
    }
    if (cfg->reply.key && (cfg->reply.form < WS_FORM_STREAM || cfg->reply.form > WS_FORM_CHANNEL)) {
        wsi_fail(sim, WS_EINVAL, "%s: the reply output has no form", cfg->key);
        return NULL;
    }
    if (routes_conflict(sim, cfg) || server_refuses(sim, cfg)) return NULL;
    ws_sub *s = wsi_xcalloc(1, sizeof *s);
    s->sim = sim;
    s->cfg = *cfg;
    s->key = wsi_xstrdup(cfg->key);
    s->group = wsi_xstrdup(cfg->group);
    s->consumer_cfg = wsi_xstrdup(cfg->consumer);
    s->delay_queue = wsi_xstrdup(cfg->delay_queue);
    s->recovery = wsi_xstrdup(cfg->recovery);
    s->dead_letter = wsi_xstrdup(cfg->dead_letter);
    s->group_start = wsi_xstrdup(cfg->group_start ? cfg->group_start : "$");
    s->reply_key = wsi_xstrdup(cfg->reply.key);
    if (cfg->processing) {
        s->processing = wsi_xstrdup(cfg->processing);
    } else if (cfg->form == WS_FORM_RELIABLE_LIST) {
        wsi_text t = {0};
        wsi_text_printf(&t, "%s.processing", cfg->key);
        s->processing = t.p;
    }
    s->subject = wsi_xstrdup(cfg->name ? cfg->name : cfg->key);
    {
        wsi_text t = {0};
        if (cfg->label) wsi_text_printf(&t, "%s", cfg->label);
        else if (cfg->reclaim && !cfg->name) wsi_text_printf(&t, "%s (reclaim)", cfg->key);
        else wsi_text_printf(&t, "%s", s->subject);
        size_t base = t.len;
        for (int n = 2;; n++) {
            int taken = 0;
            for (size_t i = 0; i < sim->nsubs; i++) taken |= strcmp(sim->subs[i]->name, t.p) == 0;
            if (!taken) break;
            t.len = base;
            wsi_text_printf(&t, "#%d", n);
        }
        s->name = t.p;
    }
    s->cfg.key = s->key;
    s->cfg.group = s->group;
    s->cfg.consumer = s->consumer_cfg;
    s->cfg.delay_queue = s->delay_queue;
    s->cfg.processing = s->processing;
    s->cfg.recovery = s->recovery;
    s->cfg.dead_letter = s->dead_letter;
    s->cfg.group_start = s->group_start;
    s->cfg.name = s->subject;
    s->cfg.label = s->name;
    s->cfg.reply.key = s->reply_key;
    /* a batch handler's subscription reads one batch per read (source.rs round_batches) */
    if (!s->cfg.count) s->cfg.count = s->cfg.batch ? s->cfg.batch : 64;
    if (!s->cfg.block_ms) s->cfg.block_ms = 10;
    wsi_snprintf(s->cursor, sizeof s->cursor, "0-0");
    sim->subs = wsi_xrealloc(sim->subs, (sim->nsubs + 1) * sizeof *sim->subs);
    sim->subs[sim->nsubs++] = s;
    /* what shapes its reads and flushes, so that a trace reads on its own */
    char extra[300] = "";
    size_t at = 0;
    if (s->cfg.batch)
        at += (size_t)wsi_snprintf(extra + at, sizeof extra - at, ", batch %zu", s->cfg.batch);
    if (s->cfg.reclaim && at < sizeof extra)
        at += (size_t)wsi_snprintf(extra + at, sizeof extra - at, ", reclaim after %lld ms idle",
                               (long long)s->cfg.min_idle_ms);
    if (s->cfg.claiming && at < sizeof extra)
        at += (size_t)wsi_snprintf(extra + at, sizeof extra - at, ", claiming after %lld ms idle",
                               (long long)s->cfg.min_idle_ms);
    if (s->cfg.max_attempts && at < sizeof extra)
        at += (size_t)wsi_snprintf(extra + at, sizeof extra - at, ", max-attempts %u",
                               s->cfg.max_attempts);
    if (s->dead_letter && at < sizeof extra)
        at += (size_t)wsi_snprintf(extra + at, sizeof extra - at, ", dead letter %s",
                               s->dead_letter);
    if (s->delay_queue && at < sizeof extra)
        at += (size_t)wsi_snprintf(extra + at, sizeof extra - at, ", delay queue %s",
                               s->delay_queue);
    if (s->recovery && at < sizeof extra)
        wsi_snprintf(extra + at, sizeof extra - at, ", recovery %s after %lld ms", s->recovery,
                 (long long)s->cfg.min_idle_ms);
    wsi_trace_note(sim, "-- subscription %s: %s %s%s%s, %s mode, COUNT %zu%s\n", s->name,
                   form_name(s->cfg.form), s->key, s->group ? " group " : "",
                   s->group ? s->group : "",
                   s->cfg.mode == WS_MODE_DIRECT ? "direct"
                   : s->cfg.mode == WS_MODE_WINDOW ? "window" : "atomic",
                   s->cfg.count, extra);
    if (!sim->dead && wsi_api_end(sim, wsi_sub_start(s)) == WS_EINVAL) {
        /* the server refused its group: no subscription (ws_sim_errstr says why) */
        sim->nsubs--;
        wsi_sub_free(s);
        return NULL;
    }
    return s;
}

/* The group a stream subscription reads in, made if missing (broker.rs ensure_group):
 * `XGROUP CREATE <key> <group> <start> MKSTREAM` through the pool; BUSYGROUP means it is
 * there (and keeps its cursor); any other error refuses the subscription. */
static int ensure_group(ws_sub *s)
{
    wsi_cmdb b = {0};
    wsi_cmdb_adds(&b, "XGROUP");
    wsi_cmdb_adds(&b, "CREATE");
    wsi_cmdb_adds(&b, s->key);
    wsi_cmdb_adds(&b, s->group);
    wsi_cmdb_adds(&b, s->group_start);
    wsi_cmdb_adds(&b, "MKSTREAM");
    wsi_cmd *c = wsi_cmdb_done(&b);
    char cause[160];
    wsi_snprintf(cause, sizeof cause, "subscribe %s", s->name);
    const fr_reply *r = NULL;
    wsi_annot an = {.cause = cause, .sub = s, .role = WSI_ROLE_SUBSCRIBE};
    int rc = wsi_send(s->sim, s->sim->window, 1, &c, &an, &r);
    wsi_cmd_free(c);
    if (rc == 0 && r->type == FR_REPLY_ERROR && strncmp(r->str, "BUSYGROUP", 9) != 0)
        rc = wsi_fail(s->sim, WS_EINVAL, "%s: the group %s cannot be made: %s", s->name,
                      s->group, r->str);
    return rc;
}

/* Starts s in a (new) process: its consumer name, its group, its channel connection. */
int wsi_sub_start(ws_sub *s)
{
    ws_sim *sim = s->sim;
    /* a fresh process remembers nothing: the reclaim scan starts over, and the app mounts
     * its subscriptions again (a stop does not outlive the process) */
    if (sim->incarnation > 1 || s->reads == 0) {
        wsi_snprintf(s->cursor, sizeof s->cursor, "0-0");
        s->stopped = 0;
    }
    if (s->consumer_cfg) {
        wsi_snprintf(s->consumer, sizeof s->consumer, "%s", s->consumer_cfg);
    } else if (s->cfg.form == WS_FORM_STREAM) {
        /* stream.rs auto_consumer: a per-process counter, so a restarted process reads
         * under the names its predecessor had */
        wsi_snprintf(s->consumer, sizeof s->consumer, "ruststream-%u", sim->auto_consumers++);
    }
    s->capacity = s->cfg.batch ? s->cfg.batch : s->cfg.count;
    if (s->cfg.form == WS_FORM_STREAM && !sim->dead) return ensure_group(s);
    if (s->cfg.form != WS_FORM_CHANNEL || sim->dead) return 0;
    /* A subscribed connection can do nothing else (RESP2): each channel subscription
     * gets its own, as a Pub/Sub client does. */
    char label[64];
    if (sim->incarnation == 1) wsi_snprintf(label, sizeof label, "subscriber");
    else wsi_snprintf(label, sizeof label, "subscriber.%u", sim->incarnation);
    s->conn = sim->fake ? ws_conn_fake(sim->fake) : ws_conn_open(sim->backend, sim->cfg.timeout_ms);
    if (s->conn && !sim->cfg.no_faults) s->conn = ws_conn_faulty(s->conn);
    if (!s->conn) return wsi_fail(sim, WS_ENOMEM, "out of memory");
    ws_conn_set_label(s->conn, label);
    wsi_cmdb b = {0};
    wsi_cmdb_adds(&b, s->cfg.pattern ? "PSUBSCRIBE" : "SUBSCRIBE");
    wsi_cmdb_adds(&b, s->key);
    wsi_cmd *c = wsi_cmdb_done(&b);
    char cause[160];
    wsi_snprintf(cause, sizeof cause, "subscribe %s", s->name);
    const fr_reply *r = NULL;
    wsi_annot an = {.cause = cause, .sub = s, .role = WSI_ROLE_SUBSCRIBE};
    int rc = wsi_send(sim, s->conn, 1, &c, &an, &r);
    wsi_cmd_free(c);
    return rc;
}

const char *ws_sub_name(const ws_sub *s) { return s->name; }
ws_conn *ws_sub_connection(ws_sub *s) { return s->conn; }
const char *ws_sub_consumer(const ws_sub *s) { return s->consumer; }

/* Frees s and everything it holds. */
void wsi_sub_free(ws_sub *s)
{
    wsi_window_reset(s);
    wsi_free(s->key);
    wsi_free(s->group);
    wsi_free(s->consumer_cfg);
    wsi_free(s->delay_queue);
    wsi_free(s->processing);
    wsi_free(s->recovery);
    wsi_free(s->dead_letter);
    wsi_free(s->group_start);
    wsi_free(s->name);
    wsi_free(s->subject);
    wsi_free(s->reply_key);
    wsi_free(s);
}

/* Stops s: its window flushes, and it reads no more in this process. */
int ws_stop(ws_sub *s)
{
    ws_sim *sim = s->sim;
    if (sim->dead) return wsi_fail(sim, WS_EDEAD, "%s: the consumer process is dead", s->name);
    if (s->stopped) return wsi_fail(sim, WS_ESTATE, "%s: the subscription stopped already",
                                    s->name);
    int rc = wsi_flush(s, "stop");
    s->stopped = 1;
    wsi_trace_note(sim, "-- %s stops\n", s->name);
    return wsi_api_end(sim, rc);
}

uint64_t ws_sub_flushes(const ws_sub *s) { return s->flushes; }
