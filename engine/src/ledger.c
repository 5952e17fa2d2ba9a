/* ledger.c -- the delivery ledger: what became of every command a delivery caused, of its
 * settle, its atomic segment's EXEC and the runtime's copy of it, and which messages were
 * published.  wsi_send feeds it every round trip it makes, whatever the trace does: the
 * checks (check.c) read it, so nothing an observer does or leaves undone changes what
 * they report.
 *
 * Each command's effective outcome is worked out once (wsi_effective): applied alone, by
 * its own reply; queued in a transaction, by what its EXEC answered; discarded with a
 * transaction whose EXEC never reached the server.  The ledger and the trace both read
 * that one answer. */
#include <stdio.h>
#include <string.h>

#include "sim_int.h"

/* The server applied the command (a reply lost to a crash counts: it ran). */
static int applied(int fate) { return fate == WS_FATE_REPLIED || fate == WS_FATE_LOST; }

static int is_error(const fr_reply *r) { return r && r->type == FR_REPLY_ERROR; }

/* Whether the MULTI at index multi opened a transaction: it reached the server and did
 * not answer an error.  One that never left (an injected error) or was refused did not,
 * and the commands after it ran one by one, each with its own reply. */
static int multi_opened(const ws_round_trip *rt, size_t multi)
{
    if (rt->fates[multi] == WS_FATE_LOST) return 1;
    return rt->fates[multi] == WS_FATE_REPLIED && !is_error(rt->replies[multi]) &&
           rt->replies[multi];
}

/* Every command alone first; then each transaction (an opened MULTI up to its EXEC, or
 * to the end of the round trip when it has none) is decided by its EXEC. */
void wsi_effective(const ws_round_trip *rt, const wsi_annot *an, wsi_eff *eff)
{
    for (size_t i = 0; i < rt->n; i++) {
        int ran = applied(rt->fates[i]);
        const fr_reply *r = rt->replies[i];
        eff[i] = (wsi_eff){.fate = rt->fates[i], .reply = r, .ran = (unsigned char)ran,
                           .took = (unsigned char)(ran && r && !is_error(r))};
    }
    for (size_t m = 0; m < rt->n; m++) {
        if (wsi_annot_role(an, m) != WSI_ROLE_MULTI || !multi_opened(rt, m)) continue;
        size_t e = m + 1;
        while (e < rt->n && wsi_annot_role(an, e) != WSI_ROLE_EXEC) e++;
        const fr_reply *er = e < rt->n ? rt->replies[e] : NULL;
        int reached = e < rt->n && applied(rt->fates[e]);
        int ran = reached && er && er->type == FR_REPLY_ARRAY;
        for (size_t i = m + 1, k = 0; i < e; i++, k++) {
            const fr_reply *el = ran && k < er->count ? &er->elements[k] : NULL;
            eff[i] = (wsi_eff){.fate = ran ? rt->fates[e] : WS_FATE_UNSENT,
                               .reply = el,
                               .tx = 1,
                               .ran = (unsigned char)ran,
                               .discarded = (unsigned char)!reached,
                               .took = (unsigned char)(ran && el && !is_error(el))};
        }
        if (e < rt->n) {
            eff[e].tx = 1;
            eff[e].ran = (unsigned char)ran;
            eff[e].discarded = (unsigned char)!reached;
        }
        m = e;
    }
}

/* Where command i of rt was applied. */
static void set_where(wsi_where *where, const ws_round_trip *rt, size_t i)
{
    wsi_copy_str(where->conn, sizeof where->conn, rt->conn);
    where->rt = rt->index;
    where->cmd = i + 1;
}

/* "conn round trip N, command K", or "?" when nowhere. */
const char *wsi_where_text(const wsi_where *w, char *buf, size_t size)
{
    if (!w->conn[0]) return "?";
    wsi_snprintf(buf, size, "%s round trip %llu, command %zu", w->conn, (unsigned long long)w->rt,
             w->cmd);
    return buf;
}

/* A settle that ran: it failed (failed != 0), or it settled d where it was applied. */
static void settled(ws_delivery *d, const ws_round_trip *rt, size_t i, int failed)
{
    if (failed) {
        d->settle_failed = 1;
    } else {
        d->settle_sent = 1;
        set_where(&d->settle_where, rt, i);
    }
}

/* The messages a round trip published: each PUBLISH that took effect. */
static void published(ws_sim *sim, wsi_cmd *const *cmds, size_t n, const wsi_eff *eff)
{
    for (size_t i = 0; i < n; i++) {
        const wsi_cmd *c = cmds[i];
        if (c->argc != 3 || !eff[i].took || !wsi_cmd_is(c, "PUBLISH")) continue;
        sim->pubs = wsi_xrealloc(sim->pubs, (sim->npubs + 1) * sizeof *sim->pubs);
        sim->pubs[sim->npubs].channel = wsi_rec_memdup(sim, c->argv[1], c->argvlen[1]);
        sim->pubs[sim->npubs].payload = wsi_rec_memdup(sim, c->argv[2], c->argvlen[2]);
        sim->pubs[sim->npubs].len = c->argvlen[2];
        sim->npubs++;
    }
}

/* See sim_int.h: the deliveries' ledger and the published messages from one round trip. */
void wsi_ledger(ws_sim *sim, const ws_round_trip *rt, wsi_cmd *const *cmds,
                const wsi_annot *an, const wsi_eff *eff)
{
    for (size_t i = 0; i < rt->n; i++) {
        int role = wsi_annot_role(an, i);
        ws_delivery *d = wsi_annot_dl(an, i);
        const wsi_eff *e = &eff[i];
        size_t ei = wsi_annot_effect(an, i);
        if ((role == WSI_ROLE_SEGMENT || role == WSI_ROLE_DIRECT) && d && ei != (size_t)-1) {
            wsi_effect *ef = &d->effects[ei];
            ef->fate = e->fate;
            ef->error = is_error(e->reply);
            set_where(&ef->where, rt, i);
        } else if (role == WSI_ROLE_EXEC) {
            /* its owner's transaction ran only if the MULTI opened it and EXEC said so */
            if (d) d->exec_ok = e->tx && e->ran;
        } else if (role == WSI_ROLE_INSETTLE && d) {
            /* the delivery's own settle inside its transaction; after a refused MULTI it
             * ran alone, and only an XACK or an LREM settles (a ZREM is bookkeeping) */
            d->exec_ok = e->tx && e->ran;
            int failed = is_error(e->reply);
            if (e->ran && (e->tx || failed || wsi_cmd_is(cmds[i], "XACK") ||
                           wsi_cmd_is(cmds[i], "LREM")))
                settled(d, rt, i, failed);
        } else if ((role == WSI_ROLE_COPY || role == WSI_ROLE_TIMER) && d) {
            /* the runtime's copy of a retried delivery (outcome.c) */
            if (e->took) d->copy_sent = 1;
        } else if (role == WSI_ROLE_SETTLE && e->ran) {
            /* a settle with no reply, or an error, failed */
            if (d) {
                /* LREM answered how many it removed; ZREM is bookkeeping */
                if (!e->took || wsi_cmd_is(cmds[i], "LREM")) settled(d, rt, i, !e->took);
            } else {
                for (size_t k = 0; k < an->nxack; k++) settled(an->xack[k], rt, i, !e->took);
            }
        }
    }
    published(sim, cmds, rt->n, eff);
}

size_t ws_sim_published_count(const ws_sim *sim) { return sim->npubs; }

/* The i-th message published that took effect; -1 past the end. */
int ws_sim_published(const ws_sim *sim, size_t i, const char **channel, const char **payload,
                     size_t *payload_len)
{
    if (i >= sim->npubs) return -1;
    if (channel) *channel = sim->pubs[i].channel;
    if (payload) *payload = sim->pubs[i].payload;
    if (payload_len) *payload_len = sim->pubs[i].len;
    return 0;
}
