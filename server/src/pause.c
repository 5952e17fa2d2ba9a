/* pause.c -- CLIENT PAUSE in the server: which commands wait, and letting them go.
 *
 * The pause itself (its type, its end on the fake's clock, what it does to expiry) is the
 * fake's (fr_server_pause, fakeredis.h).  Here, as Redis 7.0.15's processCommand and
 * unblockPostponedClients do: a held connection's command stays unread in its query buffer
 * and the connection reads and runs nothing more (Redis blocks it with BLOCKED_POSTPONE,
 * and INFO counts it among blocked_clients); when the pause ends or becomes laxer every
 * held connection goes on, in the order it was held, its command checked again from the
 * start (it may be held again). */
#include <stdlib.h>
#include <string.h>

#include "frs.h"

/* Redis's write commands among the server's own (the others never write keys). */
static int host_writes(const frs_cmd *cmd)
{
    return strcmp(cmd->name, "restore-asking") == 0 || strcmp(cmd->name, "migrate") == 0;
}

int frs_pause_hold(frs_conn *c, int argc, const char *const *argv, const size_t *argvlen)
{
    frs_server *srv = c->srv;
    fr_pause type = fr_server_paused(srv->fake, NULL);
    if (type == FR_PAUSE_OFF) return 0;
    const frs_cmd *container;
    const frs_cmd *cmd = frs_cmd_lookup(argc, argv, argvlen, &container);
    if (!cmd || (cmd->arity > 0 ? argc != cmd->arity : argc < -cmd->arity))
        return 0; /* answered at once */
    if (!c->authed && fr_server_auth_required(srv->fake) && !(cmd->flags & FRS_CMD_NOAUTH))
        return 0; /* NOAUTH at once */
    int hold;
    if (cmd->fake_flags) hold = fr_client_pause_holds(c->fc, argc, argv, argvlen);
    else if (!strcmp(cmd->group, "fake")) hold = 0; /* FAKE.*: the control plane, never held */
    else hold = type == FR_PAUSE_ALL || host_writes(cmd);
    if (!hold) return 0;
    c->paused = 1;
    c->pause_seq = ++srv->pause_seq;
    srv->npaused++;
    srv->pause_seen = (int)type;
    return 1;
}

void frs_pause_forget(frs_conn *c)
{
    if (!c->paused) return;
    c->paused = 0;
    c->srv->npaused--;
}

static int by_seq(const void *a, const void *b)
{
    uint64_t x = (*(frs_conn *const *)a)->pause_seq, y = (*(frs_conn *const *)b)->pause_seq;
    return x < y ? -1 : x > y;
}

void frs_pause_check(frs_server *srv)
{
    if (!srv->npaused) return;
    int type = (int)fr_server_paused(srv->fake, NULL);
    int was = srv->pause_seen;
    srv->pause_seen = type;
    if (type >= was) return;
    /* laxer than when they were held: every held connection goes on, in order */
    frs_conn **held = malloc(srv->npaused * sizeof(*held));
    size_t n = 0;
    for (frs_conn *c = srv->conns; c; c = c->next)
        if (c->paused) {
            if (held) held[n++] = c;
            frs_pause_forget(c);
        }
    if (held) {
        qsort(held, n, sizeof(*held), by_seq);
        for (size_t i = 0; i < n; i++) frs_conn_resume(held[i]);
        free(held);
    } else {
        for (frs_conn *c = srv->conns; c; c = c->next) frs_conn_resume(c);
    }
}

int64_t frs_pause_deadline(frs_server *srv)
{
    int64_t end;
    if (!srv->npaused || fr_server_paused(srv->fake, &end) == FR_PAUSE_OFF) return -1;
    return end;
}
