/* conn_fake.c -- the in-process backend: a round trip is one fr_pipeline call on the
 * connection's own fr_client.  The replies are the fake's own trees, handed out as they
 * are (parsed in place, no copies); they live until the client's next call, which is this
 * connection's next round trip.  Nothing here can fail once the client exists: the fake
 * answers out of memory with an error reply, as a server would. */
#include <stdlib.h>

#include "ws_int.h"

typedef struct fake_conn {
    ws_conn base;       /* the common head */
    fr_client *client;  /* this connection's client: its database, MULTI queue, WATCHes */
    const fr_reply *pushed; /* pushes taken from the client and not yet handed out */
    size_t npushed, pushpos;
} fake_conn;

/* One round trip on the fake: every command answered, in order, by the connection's own
 * client; never fails. */
static int fake_pipeline(ws_conn *c, size_t n, const fr_command *commands,
                         const fr_reply **replies, unsigned char *fates)
{
    fake_conn *fc = (fake_conn *)c;
    fc->npushed = fc->pushpos = 0; /* the client's next call invalidates taken pushes */
    fr_pipeline(fc->client, n, commands, replies);
    for (size_t i = 0; i < n; i++) fates[i] = WS_FATE_REPLIED;
    c->stats.commands_sent += n;
    c->stats.replies_received += n;
    return 0;
}

/* Frees the connection and its client (the fake drops the client's MULTI and WATCHes, as on
 * a disconnect). */
static void fake_close(ws_conn *c)
{
    fake_conn *fc = (fake_conn *)c;
    /* As a disconnect: an open MULTI and every WATCH go with the client. */
    fr_client_free(fc->client);
    wsi_free(fc);
}

/* In process nothing arrives while we wait: the pushes are there already, or not. */
static int fake_pushes(ws_conn *c, int timeout_ms, size_t max, const fr_reply **out,
                       size_t *n)
{
    (void)timeout_ms;
    fake_conn *fc = (fake_conn *)c;
    if (fc->pushpos == fc->npushed) {
        fc->pushpos = 0;
        fc->npushed = fr_client_take_pushes(fc->client, &fc->pushed);
    }
    size_t k = 0;
    while (k < max && fc->pushpos < fc->npushed) out[k++] = &fc->pushed[fc->pushpos++];
    *n = k;
    return 0;
}

static const wsi_conn_ops fake_ops = {fake_pipeline, fake_close, fake_pushes};

/* A connection of its own to server, labelled "fake"; NULL when server is NULL or out of
 * memory. */
ws_conn *ws_conn_fake(fr_server *server)
{
    if (!server) return NULL;
    fake_conn *fc = wsi_xmalloc(sizeof *fc);
    wsi_conn_init(&fc->base, &fake_ops, "fake");
    fc->client = fr_client_new(server);
    if (!fc->client) {
        wsi_free(fc);
        return NULL;
    }
    return &fc->base;
}
