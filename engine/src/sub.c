/* sub.c -- subscriptions: their configuration, reads in each form (with the sweeps that
 * precede them), the deliveries a read hands out, and the handler's actions on a
 * delivery (queue, pool, publish, bind).  Settling is window.c's. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sim_int.h"

/* ----- Configuration ------------------------------------------------------------------------- */

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
    if (cfg->block_ms < 0 || cfg->min_idle_ms < 0 || cfg->delay_ttl_ms < 0 ||
        cfg->recovery_ttl_ms < 0) {
        wsi_fail(sim, WS_EINVAL, "%s: negative block, min-idle or ttl", cfg->key);
        return NULL;
    }
    if (cfg->reply.key && (cfg->reply.form < WS_FORM_STREAM || cfg->reply.form > WS_FORM_CHANNEL)) {
        wsi_fail(sim, WS_EINVAL, "%s: the reply output has no form", cfg->key);
        return NULL;
    }
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
    snprintf(s->cursor, sizeof s->cursor, "0-0");
    sim->subs = wsi_xrealloc(sim->subs, (sim->nsubs + 1) * sizeof *sim->subs);
    sim->subs[sim->nsubs++] = s;
    /* what shapes its reads and flushes, so that a trace reads on its own */
    char extra[300] = "";
    size_t at = 0;
    if (s->cfg.batch)
        at += (size_t)snprintf(extra + at, sizeof extra - at, ", batch %zu", s->cfg.batch);
    if (s->cfg.reclaim && at < sizeof extra)
        at += (size_t)snprintf(extra + at, sizeof extra - at, ", reclaim after %lld ms idle",
                               (long long)s->cfg.min_idle_ms);
    if (s->cfg.claiming && at < sizeof extra)
        at += (size_t)snprintf(extra + at, sizeof extra - at, ", claiming after %lld ms idle",
                               (long long)s->cfg.min_idle_ms);
    if (s->cfg.max_attempts && at < sizeof extra)
        at += (size_t)snprintf(extra + at, sizeof extra - at, ", max-attempts %u",
                               s->cfg.max_attempts);
    if (s->dead_letter && at < sizeof extra)
        at += (size_t)snprintf(extra + at, sizeof extra - at, ", dead letter %s",
                               s->dead_letter);
    if (s->delay_queue && at < sizeof extra)
        at += (size_t)snprintf(extra + at, sizeof extra - at, ", delay queue %s",
                               s->delay_queue);
    if (s->recovery && at < sizeof extra)
        snprintf(extra + at, sizeof extra - at, ", recovery %s after %lld ms", s->recovery,
                 (long long)s->cfg.min_idle_ms);
    wsi_trace_note(sim, "-- subscription %s: %s %s%s%s, %s mode, COUNT %zu%s\n", s->name,
                   form_name(s->cfg.form), s->key, s->group ? " group " : "",
                   s->group ? s->group : "",
                   s->cfg.mode == WS_MODE_DIRECT ? "direct"
                   : s->cfg.mode == WS_MODE_WINDOW ? "window" : "atomic",
                   s->cfg.count, extra);
    if (!sim->dead && wsi_sub_start(s) == WS_EINVAL) {
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
    snprintf(cause, sizeof cause, "subscribe %s", s->name);
    const fr_reply *r = NULL;
    wsi_annot an = {.cause = cause, .sub = s, .role = WSI_ROLE_SUBSCRIBE};
    int rc = wsi_send(s->sim, s->sim->window, 1, &c, &an, &r);
    wsi_cmd_free(c);
    if (rc == 0 && r->type == FR_REPLY_ERROR && strncmp(r->str, "BUSYGROUP", 9) != 0)
        rc = wsi_fail(s->sim, WS_EINVAL, "%s: the group %s cannot be made: %s", s->name,
                      s->group, r->str);
    return rc;
}

int wsi_sub_start(ws_sub *s)
{
    ws_sim *sim = s->sim;
    /* a fresh process remembers nothing: the reclaim scan starts over, and the app mounts
     * its subscriptions again (a stop does not outlive the process) */
    if (sim->incarnation > 1 || s->reads == 0) {
        snprintf(s->cursor, sizeof s->cursor, "0-0");
        s->stopped = 0;
    }
    if (s->consumer_cfg) {
        snprintf(s->consumer, sizeof s->consumer, "%s", s->consumer_cfg);
    } else if (s->cfg.form == WS_FORM_STREAM) {
        /* stream.rs auto_consumer: a per-process counter, so a restarted process reads
         * under the names its predecessor had */
        snprintf(s->consumer, sizeof s->consumer, "ruststream-%u", sim->auto_consumers++);
    }
    s->capacity = s->cfg.batch ? s->cfg.batch : s->cfg.count;
    if (s->cfg.form == WS_FORM_STREAM && !sim->dead) return ensure_group(s);
    if (s->cfg.form != WS_FORM_CHANNEL || sim->dead) return 0;
    /* A subscribed connection can do nothing else (RESP2): each channel subscription
     * gets its own, as a Pub/Sub client does. */
    char label[64];
    if (sim->incarnation == 1) snprintf(label, sizeof label, "subscriber");
    else snprintf(label, sizeof label, "subscriber.%u", sim->incarnation);
    s->conn = sim->fake ? ws_conn_fake(sim->fake) : ws_conn_open(sim->backend, sim->cfg.timeout_ms);
    if (s->conn && !sim->cfg.no_faults) s->conn = ws_conn_faulty(s->conn);
    if (!s->conn) return wsi_fail(sim, WS_ENOMEM, "out of memory");
    ws_conn_set_label(s->conn, label);
    wsi_cmdb b = {0};
    wsi_cmdb_adds(&b, s->cfg.pattern ? "PSUBSCRIBE" : "SUBSCRIBE");
    wsi_cmdb_adds(&b, s->key);
    wsi_cmd *c = wsi_cmdb_done(&b);
    char cause[160];
    snprintf(cause, sizeof cause, "subscribe %s", s->name);
    const fr_reply *r = NULL;
    wsi_annot an = {.cause = cause, .sub = s, .role = WSI_ROLE_SUBSCRIBE};
    int rc = wsi_send(sim, s->conn, 1, &c, &an, &r);
    wsi_cmd_free(c);
    return rc;
}

/* Moves the messages that arrived on a channel subscription into its buffer, waiting at
 * most wait_ms for the first; waiting = what is buffered. */
int wsi_channel_poll(ws_sub *s, int wait_ms)
{
    ws_sim *sim = s->sim;
    if (!s->conn || sim->dead) return 0;
    for (;;) {
        const fr_reply *got[64];
        size_t n = 0;
        int rc = ws_conn_pushes(s->conn, wait_ms, 64, got, &n);
        if (rc) return wsi_fail(sim, rc, "%s: %s", s->name, ws_conn_errstr(s->conn));
        for (size_t i = 0; i < n; i++) {
            const fr_reply *m = got[i];
            if (m->type != FR_REPLY_ARRAY || m->count < 3) continue;
            const fr_reply *payload = &m->elements[m->count - 1];
            if (payload->type != FR_REPLY_BULK) continue;
            if (s->nbuffered == s->capbuffered) {
                s->capbuffered = s->capbuffered ? s->capbuffered * 2 : 16;
                s->buffered = wsi_xrealloc(s->buffered, s->capbuffered * sizeof *s->buffered);
                s->buffered_len =
                    wsi_xrealloc(s->buffered_len, s->capbuffered * sizeof *s->buffered_len);
            }
            s->buffered[s->nbuffered] = wsi_xmemdup(payload->str, payload->len);
            s->buffered_len[s->nbuffered++] = payload->len;
            wsi_text t = {0};
            wsi_text_printf(&t, "-- %s receives a message: ", s->name);
            wsi_text_arg(&t, payload->str, payload->len);
            wsi_text_add(&t, "\n", 1);
            wsi_trace_note(sim, "%s", t.p);
            free(t.p);
        }
        if (n < 64) break;
        wait_ms = 0;
    }
    s->waiting = s->nbuffered;
    return 0;
}

const char *ws_sub_name(const ws_sub *s) { return s->name; }
ws_conn *ws_sub_connection(ws_sub *s) { return s->conn; }
const char *ws_sub_consumer(const ws_sub *s) { return s->consumer; }

void wsi_segment_free(wsi_segment *seg)
{
    if (!seg) return;
    free(seg->effect);
    free(seg->from);
    free(seg);
}

void wsi_sub_reset(ws_sub *s)
{
    /* Outstanding deliveries die with the process; their segments go unsent. */
    for (size_t i = 0; i < s->nflight; i++) {
        ws_delivery *d = s->flight[i];
        d->dead = 1;
        if (d->seg_state == WSI_SEG_OPEN) d->seg_state = WSI_SEG_DROPPED;
        if (d->batch && d->batch->seg) {
            for (size_t j = 0; j < d->batch->n; j++)
                if (d->batch->members[j]->seg_state == WSI_SEG_OPEN)
                    d->batch->members[j]->seg_state = WSI_SEG_DROPPED;
        }
    }
    /* Batches are reachable from every member: collect each once (from its first
     * member), unlink them all, then free them. */
    wsi_batch **batches = NULL;
    size_t nbatches = 0;
    /* Without batches only an outstanding delivery holds a segment (settling commits or
     * drops it), so the deliveries in flight are all there is to look at: a restart then
     * costs what the process left, not the whole ledger (the crash explorer restarts
     * once per crash point). */
    size_t nscan = s->cfg.batch ? s->sim->ndl : s->nflight;
    for (size_t i = 0; i < nscan; i++) {
        ws_delivery *d = s->cfg.batch ? s->sim->dl[i] : s->flight[i];
        if (d->sub != s) continue;
        if (d->seg) {
            wsi_segment_free(d->seg);
            d->seg = NULL;
        }
        if (d->batch && d->batch->members[0] == d) {
            batches = wsi_xrealloc(batches, (nbatches + 1) * sizeof *batches);
            batches[nbatches++] = d->batch;
        }
    }
    /* written only where set: the crash explorer's children share these pages with
     * their parent, and a write copies the page */
    for (size_t i = 0; s->cfg.batch && i < s->sim->ndl; i++)
        if (s->sim->dl[i]->sub == s && s->sim->dl[i]->batch) s->sim->dl[i]->batch = NULL;
    for (size_t i = 0; i < nbatches; i++) {
        wsi_segment_free(batches[i]->seg);
        free(batches[i]->members);
        free(batches[i]);
    }
    free(batches);
    /* committed segments belong to the window once their delivery settled */
    for (size_t i = 0; i < s->ncommitted; i++) wsi_segment_free(s->committed[i].seg);
    for (size_t i = 0; i < s->nowed; i++)
        for (size_t j = 0; j < s->owed[i].nwrites; j++) wsi_cmd_free(s->owed[i].writes[j]);
    free(s->committed);
    free(s->owed);
    free(s->slot_gen);
    free(s->slot_busy);
    free(s->flight);
    free(s->since);
    free(s->last);
    for (size_t i = 0; i < s->nbuffered; i++) free(s->buffered[i]);
    free(s->buffered);
    free(s->buffered_len);
    s->buffered = NULL;
    s->buffered_len = NULL;
    s->nbuffered = s->capbuffered = 0;
    ws_conn_close(s->conn);
    s->conn = NULL;
    s->committed = NULL;
    s->owed = NULL;
    s->slot_gen = NULL;
    s->slot_busy = NULL;
    s->flight = NULL;
    s->since = NULL;
    s->last = NULL;
    s->ncommitted = s->capcommitted = s->nowed = s->capowed = s->nslots = 0;
    s->nflight = s->capflight = s->nsince = s->capsince = s->nlast = s->caplast = 0;
    s->outstanding = s->settled = s->waiting = 0;
    s->report_waiting = 0;
}

void wsi_sub_free(ws_sub *s)
{
    wsi_sub_reset(s);
    free(s->key);
    free(s->group);
    free(s->consumer_cfg);
    free(s->delay_queue);
    free(s->processing);
    free(s->recovery);
    free(s->dead_letter);
    free(s->group_start);
    free(s->name);
    free(s->subject);
    free(s->reply_key);
    free(s);
}

/* ----- Slots ------------------------------------------------------------------------------------ */

/* Appends text to buf (size bytes, NUL-terminated, cut when full) from *at: the causes
 * of reads and writes are written at every step, without the printf machinery. */
static void cause_put(char *buf, size_t size, size_t *at, const char *text)
{
    size_t n = strlen(text);
    if (*at + n >= size) n = size - 1 - *at;
    memcpy(buf + *at, text, n);
    *at += n;
    buf[*at] = '\0';
}

/* "<a><n><b><name>", e.g. "read 3 of main". */
static void cause_numbered(char *buf, size_t size, const char *a, uint64_t n, const char *b,
                           const char *name)
{
    char digits[25];
    digits[24] = '\0';
    size_t at = 0;
    buf[0] = '\0';
    cause_put(buf, size, &at, a);
    cause_put(buf, size, &at, wsi_decimal(digits, (long long)n));
    cause_put(buf, size, &at, b);
    cause_put(buf, size, &at, name);
}

static void take_slot(ws_sub *s, unsigned *slot, unsigned *gen)
{
    size_t i = 0;
    while (i < s->nslots && s->slot_busy[i]) i++;
    if (i == s->nslots) {
        s->slot_gen = wsi_xrealloc(s->slot_gen, (s->nslots + 1) * sizeof *s->slot_gen);
        s->slot_busy = wsi_xrealloc(s->slot_busy, s->nslots + 1);
        s->slot_gen[i] = 0;
        s->nslots++;
    }
    s->slot_busy[i] = 1;
    *slot = (unsigned)i;
    *gen = ++s->slot_gen[i];
}

void wsi_slot_release(ws_sub *s, unsigned slot)
{
    if (slot < s->nslots) s->slot_busy[slot] = 0;
}

/* ----- Reads ---------------------------------------------------------------------------------------- */

static void set_message_fields(ws_delivery *d);

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
    if (s->cfg.form != WS_FORM_STREAM) set_message_fields(d);
    uint64_t ms, seq;
    if (s->cfg.form == WS_FORM_STREAM && wsi_stream_id_parse(id, id_len, &ms, &seq) == 0 &&
        (!s->top_set || ms > s->top_ms || (ms == s->top_ms && seq > s->top_seq))) {
        s->top_ms = ms;
        s->top_seq = seq;
        s->top_set = 1;
    }
    return d;
}

/* Sets the delivery's fields (stream form) from n strings, copied into one block of the
 * records arena: the pointers, the lengths, then the bytes, each NUL-terminated. */
static void set_field_strings(ws_delivery *d, const char *const *str, const size_t *lens,
                              size_t n)
{
    size_t bytes = 0;
    for (size_t i = 0; i < n; i++) bytes += lens[i] + 1;
    char *block = wsi_rec_alloc(d->sub->sim, n * (sizeof(char *) + sizeof(size_t)) + bytes);
    d->nfields = n;
    d->fields = (char **)(void *)block;
    d->field_lens = (size_t *)(void *)(block + n * sizeof(char *));
    char *text = block + n * (sizeof(char *) + sizeof(size_t));
    for (size_t i = 0; i < n; i++) {
        if (lens[i]) memcpy(text, str[i], lens[i]);
        text[lens[i]] = '\0';
        d->fields[i] = text;
        d->field_lens[i] = lens[i];
        text += lens[i] + 1;
    }
}

/* A stream entry's field-value list as delivered. */
static void set_fields(ws_delivery *d, const fr_reply *arr)
{
    if (!arr || arr->type != FR_REPLY_ARRAY) return;
    size_t n = arr->count;
    const char **str = wsi_xmalloc((n ? n : 1) * sizeof *str);
    size_t *lens = wsi_xmalloc((n ? n : 1) * sizeof *lens);
    for (size_t i = 0; i < n; i++) {
        str[i] = arr->elements[i].str ? arr->elements[i].str : "";
        lens[i] = arr->elements[i].len;
    }
    set_field_strings(d, str, lens, n);
    free(str);
    free(lens);
}

/* Sets (adds or replaces) one field of a delivery, as the framework inserts its headers
 * into the fields it read (subscriber.rs insert_meta_header). */
static void set_field(ws_delivery *d, const char *name, long long value)
{
    char digits[25];
    digits[24] = '\0';
    const char *v = wsi_decimal(digits, value);
    size_t n = d->nfields, nl = strlen(name);
    const char **str = wsi_xmalloc((n + 2) * sizeof *str);
    size_t *lens = wsi_xmalloc((n + 2) * sizeof *lens);
    int replaced = 0;
    for (size_t i = 0; i < n; i++) {
        str[i] = d->fields[i];
        lens[i] = d->field_lens[i];
        if (i % 2 == 1 && lens[i - 1] == nl && memcmp(str[i - 1], name, nl) == 0) {
            str[i] = v;
            lens[i] = strlen(v);
            replaced = 1;
        }
    }
    if (!replaced) {
        str[n] = name;
        lens[n] = nl;
        str[n + 1] = v;
        lens[n + 1] = strlen(v);
        n += 2;
    }
    /* the block is replaced (the old one stays in the arena: str points into it) */
    set_field_strings(d, str, lens, n);
    free(str);
    free(lens);
}

/* A list value or channel message: its fields as the framework decodes it (a binary
 * frame's payload and headers, or the whole value as the payload). */
static void set_message_fields(ws_delivery *d)
{
    char **parts;
    size_t *lens;
    long n = wsi_frame_decode(d->id, d->id_len, &parts, &lens);
    set_field_strings(d, (const char *const *)parts, lens, (size_t)n);
    wsi_strings_free(parts, lens, (size_t)n);
}

/* Sends one round trip of the reader for sub (all commands with one role). */
static int reader_send(ws_sub *s, const char *cause, size_t n, wsi_cmd **cmds, int role,
                       const fr_reply **replies)
{
    wsi_annot an = {.cause = cause, .sub = s, .role = role};
    return wsi_send(s->sim, s->sim->reader, n, cmds, &an, replies);
}

static void free_cmds(wsi_cmd **cmds, size_t n)
{
    for (size_t i = 0; i < n; i++) wsi_cmd_free(cmds[i]);
    free(cmds);
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
    if (rc) return rc;
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
 * this one copy.  A member that does not decode is gone with its ZREM. */
static int delay_sweep_one(ws_sub *s, const char *cause, const char *m, size_t mlen)
{
    ws_sim *sim = s->sim;
    wsi_cmdb b = {0};
    wsi_cmdb_adds(&b, "ZREM");
    wsi_cmdb_adds(&b, s->delay_queue);
    wsi_cmdb_add(&b, m, mlen);
    const fr_reply *r = NULL;
    int rc = pool_built(s, cause, &b, &r);
    if (rc || r->type != FR_REPLY_INTEGER || r->integer != 1) return rc;
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
    wsi_strings_free(parts, plens, (size_t)np);
    return rc;
}

/* The delay-queue sweep before a stream read: the due members, one at a time. */
static int delay_sweep(ws_sub *s, const char *cause)
{
    char **members;
    size_t *mlens;
    long got = due_members(s, s->delay_queue, wsi_now(s->sim), cause, &members, &mlens);
    if (got <= 0) return (int)got;
    int rc = 0;
    for (size_t i = 0; rc == 0 && i < (size_t)got; i++)
        rc = delay_sweep_one(s, cause, members[i], mlens[i]);
    wsi_strings_free(members, mlens, (size_t)got);
    return rc;
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

static int read_stream(ws_sub *s, uint64_t read, const char *cause)
{
    wsi_cmdb b = {0};
    if (!s->cfg.reclaim) {
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
            set_fields(d, &e->elements[1]);
            if (!s->cfg.claiming) continue;
            /* each entry is [id, fields, idle, count]: the count and idle time as of the
             * previous delivery, both 0 for a fresh one; the framework puts them in the
             * headers (subscriber.rs annotate_claimed) and counts this delivery as the
             * next one (redelivery_count = count + 1) */
            long long idle = e->count >= 4 ? reply_number(&e->elements[2]) : 0;
            long long count = e->count >= 4 ? reply_number(&e->elements[3]) : 0;
            set_field(d, "h:redis-delivery-count", count);
            set_field(d, "h:redis-idle-ms", idle);
            d->count = count + 1;
        }
        return 0;
    }
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
    snprintf(s->cursor, sizeof s->cursor, "%.*s", (int)r->elements[0].len, r->elements[0].str);
    const fr_reply *entries = &r->elements[1];
    size_t first = s->nlast;
    for (size_t i = 0; i < entries->count; i++) {
        const fr_reply *e = &entries->elements[i];
        if (e->type != FR_REPLY_ARRAY || e->count < 2) continue;
        ws_delivery *d = new_delivery(s, read, e->elements[0].str, e->elements[0].len);
        set_fields(d, &e->elements[1]);
    }
    if (s->nlast == first) {
        /* nothing to reclaim: the framework's reclaim loop sleeps `block` before its next
         * read (subscriber.rs fetch_reclaim), and the clock goes on meanwhile */
        wsi_trace_note(s->sim, "-- %s: nothing to reclaim: the reader waits %lld ms\n",
                       s->name, (long long)s->cfg.block_ms);
        return ws_sim_advance(s->sim, s->cfg.block_ms);
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
    wsi_cmd *c = wsi_cmdb_done(&b);
    rc = reader_send(s, cause, 1, &c, WSI_ROLE_READ, &r); /* an error: no counts */
    wsi_cmd_free(c);
    if (rc) return rc;
    for (size_t k = first; k < s->nlast; k++) {
        ws_delivery *d = s->last[k];
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
        set_field(d, "h:redis-delivery-count", d->count);
        set_field(d, "h:redis-idle-ms", idle);
    }
    return 0;
}

/* Seconds for BLMOVE / BRPOP, from the configured milliseconds ("0.010"). */
static void add_seconds(wsi_cmdb *b, int64_t ms)
{
    char buf[48];
    int n = snprintf(buf, sizeof buf, "%lld.%03lld", (long long)(ms / 1000),
                     (long long)(ms % 1000));
    wsi_cmdb_add(b, buf, (size_t)n);
}

/* One orphan of the recovery set (recovery.rs sweep_orphans): LREM of its value from the
 * processing list, LPUSH back to the main list only if that removed it, then ZREM of the
 * member whatever LREM said -- each awaited: a crash between LREM and LPUSH loses it. */
static int orphan_one(ws_sub *s, const char *cause, const char *m, size_t mlen)
{
    size_t vlen = 0;
    const char *value = wsi_recovery_value(m, mlen, &vlen);
    if (!value) value = "";
    wsi_cmdb b = {0};
    wsi_cmdb_adds(&b, "LREM");
    wsi_cmdb_adds(&b, s->processing);
    wsi_cmdb_adds(&b, "1");
    wsi_cmdb_add(&b, value, vlen);
    const fr_reply *r = NULL;
    int rc = pool_built(s, cause, &b, &r);
    if (rc) return rc;
    if (r->type == FR_REPLY_INTEGER && r->integer == 1) {
        wsi_cmdb_adds(&b, "LPUSH");
        wsi_cmdb_adds(&b, s->key);
        wsi_cmdb_add(&b, value, vlen);
        rc = pool_built(s, cause, &b, &r);
        if (rc) return rc;
    }
    wsi_cmdb_adds(&b, "ZREM");
    wsi_cmdb_adds(&b, s->recovery);
    wsi_cmdb_add(&b, m, mlen);
    return pool_built(s, cause, &b, &r);
}

/* The orphan sweep of a reliable list with recovery: values claimed longer than min-idle
 * ago by a consumer that never settled them go back to the main list, one at a time. */
static int orphan_sweep(ws_sub *s, const char *cause)
{
    char **members;
    size_t *mlens;
    long got = due_members(s, s->recovery, wsi_now(s->sim) - s->cfg.min_idle_ms, cause,
                           &members, &mlens);
    if (got <= 0) return (int)got;
    int rc = 0;
    for (size_t i = 0; rc == 0 && i < (size_t)got; i++)
        rc = orphan_one(s, cause, members[i], mlens[i]);
    wsi_strings_free(members, mlens, (size_t)got);
    return rc;
}

/* The claims of the read's new deliveries (first .. nlast) in the recovery set: a member
 * each, ZADD at the claim time, then PEXPIRE when a recovery ttl is set (recovery.rs
 * record_claim) -- one pipeline through the pool for a window's read, each its own awaited
 * round trip for a direct read. */
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
    int rc = 0;
    if (s->cfg.mode == WS_MODE_DIRECT) {
        for (size_t i = 0; rc == 0 && i < n; i++) {
            const fr_reply *r = NULL;
            rc = pool_one(s, cause, cmds[i], &r);
        }
    } else {
        const fr_reply **rr = wsi_xcalloc(n, sizeof *rr);
        wsi_annot an = {.cause = cause, .sub = s, .role = WSI_ROLE_SWEEP};
        rc = wsi_send(sim, sim->window, n, cmds, &an, rr);
        free(rr);
    }
    free_cmds(cmds, n);
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
    if (rc) return rc;
    if (reliable && r->type == FR_REPLY_BULK) new_delivery(s, read, r->str, r->len);
    if (!reliable && r->type == FR_REPLY_ARRAY && r->count == 2)
        new_delivery(s, read, r->elements[1].str, r->elements[1].len);
    return 0;
}

/* A list read.  Direct mode (list.rs next_entry): one blocking pop per read, one delivery.
 * A window (ListReader::round_batches): a plain list's `RPOP <key> <count>`, a reliable
 * list's COUNT LMOVEs in one pipeline, either falling back to the blocking pop when it
 * gave nothing.  A reliable list with recovery sweeps its orphans first and records its
 * claims after. */
static int read_list(ws_sub *s, uint64_t read, const char *cause)
{
    wsi_cmdb b = {0};
    size_t first = s->nlast;
    int reliable = s->cfg.form == WS_FORM_RELIABLE_LIST;
    int rc = 0;
    if (reliable && s->recovery) {
        char sc[192];
        cause_numbered(sc, sizeof sc, "recovery sweep before read ", read, " of ", s->name);
        rc = orphan_sweep(s, sc);
        if (rc) return rc;
    }
    if (s->cfg.mode != WS_MODE_DIRECT && !reliable) {
        wsi_cmdb_adds(&b, "RPOP");
        wsi_cmdb_adds(&b, s->key);
        wsi_cmdb_addll(&b, (long long)s->cfg.count);
        const fr_reply *r = NULL;
        rc = read_one(s, read, cause, &b, &r);
        if (rc) return rc;
        if (r->type == FR_REPLY_ARRAY)
            for (size_t i = 0; i < r->count; i++)
                new_delivery(s, read, r->elements[i].str, r->elements[i].len);
    } else if (s->cfg.mode != WS_MODE_DIRECT) {
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
        rc = reader_send(s, cause, n, moves, WSI_ROLE_READ, rr);
        free_cmds(moves, n);
        for (size_t i = 0; rc == 0 && i < n; i++)
            if (rr[i]->type == FR_REPLY_BULK) new_delivery(s, read, rr[i]->str, rr[i]->len);
        free(rr);
        if (rc) return rc;
    }
    if (s->nlast == first) rc = blocking_pop(s, read, cause);
    if (rc == 0 && reliable && s->recovery && s->nlast > first) {
        char cc[192];
        cause_numbered(cc, sizeof cc, "claims of read ", read, " of ", s->name);
        rc = record_claims(s, first, cc);
    }
    return rc;
}

/* Groups the read's deliveries into batches of cfg.batch, each with one slot. */
static void assign_slots(ws_sub *s, size_t first)
{
    if (!s->cfg.batch) {
        for (size_t i = first; i < s->nlast; i++)
            take_slot(s, &s->last[i]->slot, &s->last[i]->gen);
        return;
    }
    for (size_t i = first; i < s->nlast; i += s->cfg.batch) {
        size_t n = s->nlast - i < s->cfg.batch ? s->nlast - i : s->cfg.batch;
        wsi_batch *bt = wsi_xcalloc(1, sizeof *bt);
        bt->members = wsi_xcalloc(n, sizeof *bt->members);
        bt->n = n;
        bt->all_acked = 1;
        take_slot(s, &bt->slot, &bt->gen);
        for (size_t k = 0; k < n; k++) {
            ws_delivery *d = s->last[i + k];
            bt->members[k] = d;
            d->batch = bt;
            d->in_batch = 1;
            d->slot = bt->slot;
            d->gen = bt->gen;
        }
    }
}

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
    cause_numbered(cause, sizeof cause, "read ", read, " of ", s->name);
    int rc = 0;
    if (s->cfg.form == WS_FORM_STREAM) {
        if (s->delay_queue) {
            char sc[192];
            cause_numbered(sc, sizeof sc, "delay-queue sweep before read ", read, " of ",
                           s->name);
            rc = delay_sweep(s, sc);
        }
        if (rc == 0) rc = read_stream(s, read, cause);
    } else if (s->cfg.form == WS_FORM_CHANNEL) {
        /* first what was published before the read (a barrier), then, if nothing was,
         * what arrives within BLOCK */
        rc = wsi_channel_poll(s, -1);
        if (rc == 0 && s->nbuffered == 0) rc = wsi_channel_poll(s, (int)s->cfg.block_ms);
        size_t take = s->nbuffered < s->cfg.count ? s->nbuffered : s->cfg.count;
        for (size_t i = 0; rc == 0 && i < take; i++)
            new_delivery(s, read, s->buffered[i], s->buffered_len[i]);
        if (rc == 0 && take > 0) {
            for (size_t i = 0; i < take; i++) free(s->buffered[i]);
            memmove(s->buffered, s->buffered + take, (s->nbuffered - take) * sizeof *s->buffered);
            memmove(s->buffered_len, s->buffered_len + take,
                    (s->nbuffered - take) * sizeof *s->buffered_len);
            s->nbuffered -= take;
        }
        if (rc == 0) s->waiting = s->nbuffered;
    } else {
        rc = read_list(s, read, cause);
    }
    if (rc) {
        if (sim->dead) {
            s->nlast = 0;
            return WS_ECRASHED;
        }
        return rc;
    }
    assign_slots(s, 0);
    out->read = read;
    out->n = s->nlast;
    return 0;
}

ws_delivery *ws_read_delivery(ws_sub *s, size_t i) { return i < s->nlast ? s->last[i] : NULL; }

ws_delivery *ws_find(ws_sub *s, const char *id)
{
    size_t len = strlen(id);
    for (size_t i = s->nflight; i-- > 0;) {
        ws_delivery *d = s->flight[i];
        if (d->id_len == len && memcmp(d->id, id, len) == 0) return d;
    }
    return NULL;
}

/* ----- Delivery accessors ------------------------------------------------------------------------- */

const char *ws_delivery_id(const ws_delivery *d) { return d->id; }
size_t ws_delivery_id_size(const ws_delivery *d) { return d->id_len; }
long long ws_delivery_count(const ws_delivery *d) { return d->count; }
unsigned ws_delivery_slot(const ws_delivery *d) { return d->slot; }
unsigned ws_delivery_generation(const ws_delivery *d) { return d->gen; }
int ws_delivery_done(const ws_delivery *d) { return d->done || d->dead; }

static const char *field_of(const ws_delivery *d, const char *name, size_t *len)
{
    size_t dummy;
    if (!len) len = &dummy;
    size_t nl = strlen(name);
    for (size_t i = 0; i + 1 < d->nfields; i += 2)
        if (d->field_lens[i] == nl && memcmp(d->fields[i], name, nl) == 0) {
            *len = d->field_lens[i + 1];
            return d->fields[i + 1];
        }
    return NULL;
}

const char *ws_delivery_payload(const ws_delivery *d, size_t *len)
{
    return field_of(d, "_payload", len);
}

const char *ws_delivery_header(const ws_delivery *d, const char *name, size_t *len)
{
    char key[256];
    snprintf(key, sizeof key, "h:%s", name);
    return field_of(d, key, len);
}

long long ws_delivery_retries(const ws_delivery *d)
{
    size_t len;
    const char *v = ws_delivery_header(d, WS_RETRY_HEADER, &len);
    if (!v || len == 0 || len > 18) return 0;
    long long n = 0;
    for (size_t i = 0; i < len; i++) {
        if (v[i] < '0' || v[i] > '9') return 0;
        n = n * 10 + (v[i] - '0');
    }
    return n;
}

/* ----- Actions ------------------------------------------------------------------------------------- */

static const char *outcome_name(ws_outcome o)
{
    switch (o) {
    case WS_ACK: return "ack";
    case WS_DROP: return "drop";
    case WS_RETRY: return "retry";
    case WS_RETRY_AFTER: return "retry_after";
    case WS_ABANDON: return "abandoned";
    default: return "?";
    }
}

int wsi_check_live(ws_delivery *d, const char *what)
{
    ws_sim *sim = d->sub->sim;
    if (d->dead || d->incarnation != sim->incarnation) {
        /* how its process ended: ws_sim_shutdown records "graceful shutdown ..." */
        unsigned inc = d->incarnation;
        int graceful = inc >= 1 && inc <= sim->ncrashes && sim->crashes[inc - 1] &&
                       strncmp(sim->crashes[inc - 1], "graceful shutdown", 17) == 0;
        return wsi_fail(sim, sim->dead ? WS_EDEAD : WS_ESTALE,
                        "%s: delivery %s belongs to consumer process %u, which %s", what,
                        d->shown, d->incarnation, graceful ? "stopped" : "crashed");
    }
    if (d->done)
        return wsi_fail(sim, WS_ESTALE,
                        "%s: delivery %s (slot %u, generation %u) settled already (%s): a "
                        "stale handle joins no later delivery",
                        what, d->shown, d->slot, d->gen, outcome_name(d->outcome));
    if (d->sub->stopped)
        return wsi_fail(sim, WS_ESTATE, "%s: the subscription %s stopped", what, d->sub->name);
    return 0;
}

static size_t add_effect(ws_delivery *d, wsi_cmd *cmd, int kind)
{
    if (d->neffects == d->capeffects) { /* doubling in the records arena */
        d->capeffects = d->capeffects ? d->capeffects * 2 : 4;
        wsi_effect *e = wsi_rec_alloc(d->sub->sim, d->capeffects * sizeof *e);
        if (d->neffects) memcpy(e, d->effects, d->neffects * sizeof *e);
        d->effects = e;
    }
    d->effects[d->neffects] = (wsi_effect){.cmd = cmd, .kind = kind};
    return d->neffects++;
}

/* Queues cmd (ownership taken) into d's segment, or runs it at once in direct mode. */
static int queue_cmd(ws_delivery *d, wsi_cmd *cmd, const char *what, int kind)
{
    ws_sub *s = d->sub;
    ws_sim *sim = s->sim;
    if (s->cfg.mode == WS_MODE_DIRECT) {
        size_t e = add_effect(d, cmd, WSI_EFFECT_DIRECT);
        char cause[160];
        size_t at = 0;
        cause_put(cause, sizeof cause, &at, what);
        cause_put(cause, sizeof cause, &at, " of ");
        cause_put(cause, sizeof cause, &at, d->shown);
        const fr_reply *r = NULL;
        wsi_annot an = {.cause = cause, .sub = s, .role = WSI_ROLE_DIRECT, .dl = d,
                        .effects = &e};
        return wsi_send(sim, sim->window, 1, &d->effects[e].cmd, &an, &r);
    }
    wsi_segment **slot = d->batch ? &d->batch->seg : &d->seg;
    if (!*slot) {
        *slot = wsi_xcalloc(1, sizeof **slot);
        (*slot)->owner = d->batch ? d->batch->members[0] : d;
        (*slot)->batch = d->batch;
    }
    wsi_segment *seg = *slot;
    size_t e = add_effect(d, cmd, kind);
    if (seg->n == seg->cap) {
        seg->cap = seg->cap ? seg->cap * 2 : 4;
        seg->effect = wsi_xrealloc(seg->effect, seg->cap * sizeof *seg->effect);
        seg->from = wsi_xrealloc(seg->from, seg->cap * sizeof *seg->from);
    }
    seg->effect[seg->n] = e;
    seg->from[seg->n] = d;
    seg->n++;
    if (d->batch) {
        for (size_t i = 0; i < d->batch->n; i++)
            if (d->batch->members[i]->seg_state == WSI_SEG_NONE)
                d->batch->members[i]->seg_state = WSI_SEG_OPEN;
    } else {
        d->seg_state = WSI_SEG_OPEN;
    }
    return 0;
}

int ws_queue(ws_delivery *d, int argc, const char *const *argv, const size_t *argvlen)
{
    if (!d) return WS_EINVAL;
    int rc = wsi_check_live(d, "queue");
    if (rc) return rc;
    if (argc < 1 || !argv) return wsi_fail(d->sub->sim, WS_EINVAL, "queue: no command");
    return queue_cmd(d, wsi_cmd_copy(argc, argv, argvlen), "direct write", WSI_EFFECT_QUEUED);
}

int ws_queue_line(ws_delivery *d, const char *line)
{
    if (!d) return WS_EINVAL;
    int rc = wsi_check_live(d, "queue");
    if (rc) return rc;
    wsi_cmd *c = wsi_cmd_line(line);
    if (!c) return wsi_fail(d->sub->sim, WS_EINVAL, "queue: cannot split \"%s\"", line);
    return queue_cmd(d, c, "direct write", WSI_EFFECT_QUEUED);
}

int ws_pool(ws_sim *sim, ws_delivery *d, int argc, const char *const *argv,
            const size_t *argvlen, const fr_reply **reply)
{
    if (reply) *reply = NULL;
    if (d) {
        int rc = wsi_check_live(d, "pool");
        if (rc) return rc;
    }
    if (sim->dead) return wsi_fail(sim, WS_EDEAD, "pool: the consumer process is dead");
    if (argc < 1 || !argv) return wsi_fail(sim, WS_EINVAL, "pool: no command");
    wsi_cmd *c = wsi_cmd_copy(argc, argv, argvlen);
    char cause[160];
    if (d) snprintf(cause, sizeof cause, "pool of %s", d->shown);
    else snprintf(cause, sizeof cause, "pool");
    const fr_reply *r = NULL;
    wsi_annot an = {.cause = cause, .sub = d ? d->sub : NULL, .role = WSI_ROLE_POOL, .dl = d};
    int rc = wsi_send(sim, sim->window, 1, &c, &an, &r);
    wsi_cmd_free(c);
    if (reply) *reply = r;
    return rc;
}

int ws_pool_line(ws_sim *sim, ws_delivery *d, const char *line, const fr_reply **reply)
{
    wsi_cmd *c = wsi_cmd_line(line);
    if (!c) return wsi_fail(sim, WS_EINVAL, "pool: cannot split \"%s\"", line);
    int rc = ws_pool(sim, d, c->argc, (const char *const *)c->argv, c->argvlen, reply);
    wsi_cmd_free(c);
    return rc;
}

static int same_out(const ws_out *a, const ws_out *b)
{
    return a->form == b->form && a->key && b->key && strcmp(a->key, b->key) == 0;
}

/* A publish joins the round when in_round; else it leaves at once through the pool. */
static int do_publish(ws_delivery *d, const ws_out *out, int in_round, int is_reply,
                      const char *payload, size_t len, const ws_header *h, size_t nh,
                      int *error_reply)
{
    ws_sim *sim = d->sub->sim;
    if (!out || !out->key || out->form < WS_FORM_STREAM || out->form > WS_FORM_CHANNEL)
        return wsi_fail(sim, WS_EINVAL, "publish: no output");
    if (!payload && len) return wsi_fail(sim, WS_EINVAL, "publish: no payload");
    wsi_cmd *c = wsi_publish_cmd(out->form, out->key, payload ? payload : "", len, h, nh);
    if (in_round && d->sub->cfg.mode != WS_MODE_DIRECT)
        return queue_cmd(d, c, "publish",
                         is_reply && d->sub->cfg.reply_in_round ? WSI_EFFECT_REPLY
                                                                : WSI_EFFECT_QUEUED);
    char cause[160];
    snprintf(cause, sizeof cause, "publish of %s", d->shown);
    const fr_reply *r = NULL;
    wsi_annot an = {.cause = cause, .sub = d->sub, .role = WSI_ROLE_PUBLISH, .dl = d};
    int rc = wsi_send(sim, sim->window, 1, &c, &an, &r);
    wsi_cmd_free(c);
    if (error_reply) *error_reply = rc == 0 && r && r->type == FR_REPLY_ERROR;
    return rc;
}

int ws_publish(ws_delivery *d, const ws_out *out, const char *payload, size_t len,
               const ws_header *headers, size_t nheaders)
{
    if (!d) return WS_EINVAL;
    int rc = wsi_check_live(d, "publish");
    if (rc) return rc;
    int bound = 0;
    for (size_t i = 0; out && i < d->nbound; i++)
        if (same_out(&d->bound[i], out)) bound = 1;
    return do_publish(d, out, bound, 0, payload, len, headers, nheaders, NULL);
}

int ws_reply(ws_delivery *d, const char *payload, size_t len)
{
    if (!d) return WS_EINVAL;
    int rc = wsi_check_live(d, "reply");
    if (rc) return rc;
    if (!d->sub->cfg.reply.key)
        return wsi_fail(d->sub->sim, WS_EINVAL, "reply: %s has no reply output", d->sub->name);
    int bound = 0;
    for (size_t i = 0; i < d->nbound; i++)
        if (same_out(&d->bound[i], &d->sub->cfg.reply)) bound = 1;
    if ((d->sub->cfg.reply_in_round || bound) && d->sub->cfg.mode != WS_MODE_DIRECT)
        return do_publish(d, &d->sub->cfg.reply, 1, 1, payload, len, NULL, 0, NULL);
    /* The reply is the handler's return value: published when the handler returns Ok,
     * after whatever it did (publishing.rs PublishingHandler::handle) -- at the ack. */
    if (d->reply)
        return wsi_fail(d->sub->sim, WS_EINVAL, "reply: %s has a reply already", d->shown);
    d->reply = wsi_xmemdup(payload ? payload : "", len);
    d->reply_len = len;
    wsi_trace_note(d->sub->sim, "-- %s: the reply of %s waits for the handler's Ok\n",
                   d->sub->name, d->shown);
    return 0;
}

/* The reply waiting for the handler's Ok: published at an ack (an error reply turns the
 * outcome into a retry, as publishing.rs does), dropped otherwise.  *o may change. */
static int settle_reply(ws_delivery *d, ws_outcome *o)
{
    char *p = d->reply;
    size_t n = d->reply_len;
    d->reply = NULL;
    int rc = 0, error = 0;
    if (*o == WS_ACK) {
        rc = do_publish(d, &d->sub->cfg.reply, 0, 1, p, n, NULL, 0, &error);
        if (rc == 0 && error) {
            wsi_trace_note(d->sub->sim, "-- %s: the reply of %s failed: the outcome becomes "
                           "retry\n", d->sub->name, d->shown);
            *o = WS_RETRY;
        }
    } else {
        wsi_trace_note(d->sub->sim, "-- %s: the reply of %s is not published: the handler "
                       "did not return Ok\n", d->sub->name, d->shown);
    }
    free(p);
    return rc;
}

int ws_bind(ws_delivery *d, const ws_out *out)
{
    if (!d) return WS_EINVAL;
    int rc = wsi_check_live(d, "bind");
    if (rc) return rc;
    if (!out || !out->key) return wsi_fail(d->sub->sim, WS_EINVAL, "bind: no output");
    d->bound = wsi_xrealloc(d->bound, (d->nbound + 1) * sizeof *d->bound);
    d->bound[d->nbound].form = out->form;
    d->bound[d->nbound].key = wsi_xstrdup(out->key);
    d->nbound++;
    return 0;
}

int ws_settle(ws_delivery *d, ws_outcome outcome, int64_t delay_ms)
{
    if (!d) return WS_EINVAL;
    int rc = wsi_check_live(d, "settle");
    if (rc) return rc;
    if (outcome < WS_ACK || outcome > WS_ABANDON)
        return wsi_fail(d->sub->sim, WS_EINVAL, "settle: unknown outcome %d", (int)outcome);
    if (outcome == WS_RETRY_AFTER && delay_ms < 0)
        return wsi_fail(d->sub->sim, WS_EINVAL, "settle: negative delay");
    if (d->reply) {
        rc = settle_reply(d, &outcome);
        if (rc) return d->sub->sim->dead ? WS_ECRASHED : rc;
    }
    return wsi_settle(d, outcome, delay_ms);
}

int ws_abandon(ws_delivery *d) { return ws_settle(d, WS_ABANDON, 0); }

int ws_stop(ws_sub *s)
{
    ws_sim *sim = s->sim;
    if (sim->dead) return wsi_fail(sim, WS_EDEAD, "%s: the consumer process is dead", s->name);
    if (s->stopped) return wsi_fail(sim, WS_ESTATE, "%s: the subscription stopped already",
                                    s->name);
    int rc = wsi_flush(s, "stop");
    s->stopped = 1;
    wsi_trace_note(sim, "-- %s stops\n", s->name);
    return rc;
}
