/* action.c -- what a handler does with a delivery (SEMANTICS.md §2-§4, §6): queue a
 * command into its segment (in direct mode: send it at once), a pool command, publish or
 * reply (into the round when bound, else at once), bind an output, and settle it (the
 * window's, window.c).  Every public call here ends with wsi_api_end: a crash one of its
 * round trips caused frees the process's state before it returns. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sim_int.h"

/* An outcome as a refusal names it. */
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

/* 0 when d may still act; else records why not (its process is gone, it settled already,
 * its subscription stopped) and returns the code.  what names the action ("queue"). */
static int check_live(ws_delivery *d, const char *what)
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

/* Queues cmd (ownership taken) into d's segment, or runs it at once in direct mode. */
static int queue_cmd(ws_delivery *d, wsi_cmd *cmd, const char *what, int kind)
{
    ws_sub *s = d->sub;
    ws_sim *sim = s->sim;
    if (s->cfg.mode == WS_MODE_DIRECT) {
        size_t e = wsi_effect_add(d, cmd, WSI_EFFECT_DIRECT);
        char cause[160];
        size_t at = 0;
        wsi_cause_put(cause, sizeof cause, &at, what);
        wsi_cause_put(cause, sizeof cause, &at, " of ");
        wsi_cause_put(cause, sizeof cause, &at, d->shown);
        const fr_reply *r = NULL;
        wsi_annot an = {.cause = cause, .sub = s, .role = WSI_ROLE_DIRECT, .dl = d,
                        .effects = &e};
        return wsi_send(sim, sim->window, 1, &d->effects[e].cmd, &an, &r);
    }
    wsi_segment_queue(d, cmd, kind);
    return 0;
}

/* Queues a command into d's segment (direct mode: sends it at once). */
int ws_queue(ws_delivery *d, int argc, const char *const *argv, const size_t *argvlen)
{
    if (!d) return WS_EINVAL;
    int rc = check_live(d, "queue");
    if (rc) return rc;
    if (argc < 1 || !argv) return wsi_fail(d->sub->sim, WS_EINVAL, "queue: no command");
    rc = queue_cmd(d, wsi_cmd_copy(argc, argv, argvlen), "direct write", WSI_EFFECT_QUEUED);
    return wsi_api_end(d->sub->sim, rc);
}

/* ws_queue of a redis-cli style line. */
int ws_queue_line(ws_delivery *d, const char *line)
{
    if (!d) return WS_EINVAL;
    int rc = check_live(d, "queue");
    if (rc) return rc;
    wsi_cmd *c = wsi_cmd_line(line);
    if (!c) return wsi_fail(d->sub->sim, WS_EINVAL, "queue: cannot split \"%s\"", line);
    return wsi_api_end(d->sub->sim, queue_cmd(d, c, "direct write", WSI_EFFECT_QUEUED));
}

/* One command through the pool at once, on d's behalf (or none); *reply its answer. */
int ws_pool(ws_sim *sim, ws_delivery *d, int argc, const char *const *argv,
            const size_t *argvlen, const fr_reply **reply)
{
    if (reply) *reply = NULL;
    if (d) {
        int rc = check_live(d, "pool");
        if (rc) return rc;
    }
    if (sim->dead) return wsi_fail(sim, WS_EDEAD, "pool: the consumer process is dead");
    if (argc < 1 || !argv) return wsi_fail(sim, WS_EINVAL, "pool: no command");
    wsi_cmd *c = wsi_cmd_copy(argc, argv, argvlen);
    char cause[160];
    if (d) wsi_snprintf(cause, sizeof cause, "pool of %s", d->shown);
    else wsi_snprintf(cause, sizeof cause, "pool");
    const fr_reply *r = NULL;
    wsi_annot an = {.cause = cause, .sub = d ? d->sub : NULL, .role = WSI_ROLE_POOL, .dl = d};
    int rc = wsi_send(sim, sim->window, 1, &c, &an, &r);
    wsi_cmd_free(c);
    if (reply) *reply = r;
    return wsi_api_end(sim, rc);
}

/* ws_pool of a redis-cli style line. */
int ws_pool_line(ws_sim *sim, ws_delivery *d, const char *line, const fr_reply **reply)
{
    wsi_cmd *c = wsi_cmd_line(line);
    if (!c) return wsi_fail(sim, WS_EINVAL, "pool: cannot split \"%s\"", line);
    int rc = ws_pool(sim, d, c->argc, (const char *const *)c->argv, c->argvlen, reply);
    wsi_cmd_free(c);
    return rc;
}

/* Same outputs: one form, one key. */
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
    wsi_snprintf(cause, sizeof cause, "publish of %s", d->shown);
    const fr_reply *r = NULL;
    wsi_annot an = {.cause = cause, .sub = d->sub, .role = WSI_ROLE_PUBLISH, .dl = d};
    int rc = wsi_send(sim, sim->window, 1, &c, &an, &r);
    wsi_cmd_free(c);
    if (error_reply) *error_reply = rc == 0 && r && r->type == FR_REPLY_ERROR;
    return rc;
}

/* Publishes to out: into d's round when d bound out, else at once through the pool. */
int ws_publish(ws_delivery *d, const ws_out *out, const char *payload, size_t len,
               const ws_header *headers, size_t nheaders)
{
    if (!d) return WS_EINVAL;
    int rc = check_live(d, "publish");
    if (rc) return rc;
    int bound = 0;
    for (size_t i = 0; out && i < d->nbound; i++)
        if (same_out(&d->bound[i], out)) bound = 1;
    return wsi_api_end(d->sub->sim,
                       do_publish(d, out, bound, 0, payload, len, headers, nheaders, NULL));
}

/* The handler's reply: in the round (in-round or bound), else held until the handler's
 * Ok. */
int ws_reply(ws_delivery *d, const char *payload, size_t len)
{
    if (!d) return WS_EINVAL;
    int rc = check_live(d, "reply");
    if (rc) return rc;
    if (!d->sub->cfg.reply.key)
        return wsi_fail(d->sub->sim, WS_EINVAL, "reply: %s has no reply output", d->sub->name);
    int bound = 0;
    for (size_t i = 0; i < d->nbound; i++)
        if (same_out(&d->bound[i], &d->sub->cfg.reply)) bound = 1;
    if ((d->sub->cfg.reply_in_round || bound) && d->sub->cfg.mode != WS_MODE_DIRECT)
        return wsi_api_end(d->sub->sim,
                           do_publish(d, &d->sub->cfg.reply, 1, 1, payload, len, NULL, 0, NULL));
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
    wsi_free(p);
    return rc;
}

/* Binds out to d: its publishes to out join d's round. */
int ws_bind(ws_delivery *d, const ws_out *out)
{
    if (!d) return WS_EINVAL;
    int rc = check_live(d, "bind");
    if (rc) return rc;
    if (!out || !out->key) return wsi_fail(d->sub->sim, WS_EINVAL, "bind: no output");
    d->bound = wsi_xrealloc(d->bound, (d->nbound + 1) * sizeof *d->bound);
    d->bound[d->nbound].form = out->form;
    d->bound[d->nbound].key = wsi_xstrdup(out->key);
    d->nbound++;
    return 0;
}

/* Ends d with outcome (a held reply published or dropped first), through the window. */
int ws_settle(ws_delivery *d, ws_outcome outcome, int64_t delay_ms)
{
    if (!d) return WS_EINVAL;
    int rc = check_live(d, "settle");
    if (rc) return rc;
    if (outcome < WS_ACK || outcome > WS_ABANDON)
        return wsi_fail(d->sub->sim, WS_EINVAL, "settle: unknown outcome %d", (int)outcome);
    if (outcome == WS_RETRY_AFTER && delay_ms < 0)
        return wsi_fail(d->sub->sim, WS_EINVAL, "settle: negative delay");
    if (d->reply) {
        rc = settle_reply(d, &outcome);
        if (rc) return wsi_api_end(d->sub->sim, d->sub->sim->dead ? WS_ECRASHED : rc);
    }
    return wsi_api_end(d->sub->sim, wsi_settle(d, outcome, delay_ms));
}

int ws_abandon(ws_delivery *d) { return ws_settle(d, WS_ABANDON, 0); }
