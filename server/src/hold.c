/* hold.c -- the hold hook: the server holds one command of a consumer, before it is
 * applied or after it is applied and before its reply leaves, so that an embedding program
 * can kill the consumer exactly there (a crash point of a real process; the contract is in
 * frs.h, "hold.c").
 *
 * Holding is the server's own mechanism for "the input waits" (a blocked client's): the
 * held connection's input is not processed (c->held stops process_input), and for a hold
 * after the command its output is frozen at the reply's first byte (frs_obuf.stopped: the
 * socket gets everything before it, nothing from it on).  What a held connection's death
 * leaves is what any closing connection leaves: the fake forgets its MULTI queue. */
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "frs.h"

struct frs_hold {
    frs_hold_spec spec;       /* as armed (name copied below) */
    char *name;               /* spec.name's copy, or NULL */
    frs_hold_state state;
    uint64_t counted;         /* matching commands since armed */
    frs_conn *conn;           /* the connection held (while HELD) */
    frs_conn *after_conn;     /* AFTER: the connection whose running command will be held */
    frs_hold_info info;       /* what frs_hold_get hands out */
    int replay;               /* BEFORE, released: the command waits to run on conn */
};

/* The held command's copy lives in info (argv, argvlen). */
static void forget_command(struct frs_hold *h)
{
    for (int i = 0; i < h->info.argc; i++) free(h->info.argv[i]);
    free(h->info.argv);
    free(h->info.argvlen);
    h->info.argc = 0;
    h->info.argv = NULL;
    h->info.argvlen = NULL;
}

static void keep_command(struct frs_hold *h, int argc, const char *const *argv,
                         const size_t *argvlen)
{
    forget_command(h);
    h->info.argv = calloc((size_t)argc, sizeof *h->info.argv);
    h->info.argvlen = calloc((size_t)argc, sizeof *h->info.argvlen);
    if (!h->info.argv || !h->info.argvlen) frs_oom_abort(__func__);
    for (int i = 0; i < argc; i++) {
        h->info.argv[i] = frs_memdup(argv[i], argvlen[i]);
        h->info.argvlen[i] = argvlen[i];
    }
    h->info.argc = argc;
}

/* Whether argv is the command `name` ("XACK", or "XGROUP|CREATE"). */
static int name_matches(const char *name, int argc, const char *const *argv,
                        const size_t *argvlen)
{
    const char *bar = strchr(name, '|');
    size_t n0 = bar ? (size_t)(bar - name) : strlen(name);
    if (argvlen[0] != n0 || strncasecmp(argv[0], name, n0) != 0) return 0;
    if (!bar) return 1;
    size_t n1 = strlen(bar + 1);
    return argc >= 2 && argvlen[1] == n1 && strncasecmp(argv[1], bar + 1, n1) == 0;
}

/* The hold takes effect on c (its command kept in info already). */
static void held(struct frs_hold *h, frs_conn *c, int when)
{
    h->state = FRS_HOLD_HELD;
    h->conn = c;
    h->info.state = FRS_HOLD_HELD;
    h->info.conn = c->id;
    h->info.when = when;
    h->info.t = fr_clock_now(c->srv->fake);
    c->held = when;
    frs_record_hold(c, when == FRS_HOLD_BEFORE ? "before" : "after", h->spec.nth, h->info.argc,
                    (const char *const *)h->info.argv, h->info.argvlen);
    if (h->spec.reached) h->spec.reached(h->spec.ud, &h->info);
}

int frs_hold_arm(frs_server *srv, const frs_hold_spec *spec)
{
    if (!spec || (spec->when != FRS_HOLD_BEFORE && spec->when != FRS_HOLD_AFTER)) return -1;
    frs_hold_disarm(srv);
    struct frs_hold *h = calloc(1, sizeof *h);
    if (!h) frs_oom_abort(__func__);
    h->spec = *spec;
    if (spec->name) h->name = frs_memdup(spec->name, strlen(spec->name));
    h->spec.name = h->name;
    h->state = FRS_HOLD_ARMED;
    h->info.state = FRS_HOLD_ARMED;
    srv->hold = h;
    return 0;
}

frs_hold_state frs_hold_get(frs_server *srv, frs_hold_info *info)
{
    struct frs_hold *h = srv->hold;
    if (!h) {
        if (info) memset(info, 0, sizeof *info);
        return FRS_HOLD_OFF;
    }
    h->info.state = h->state;
    h->info.counted = h->counted;
    if (info) *info = h->info;
    return h->state;
}

void frs_hold_release(frs_server *srv)
{
    struct frs_hold *h = srv->hold;
    if (!h || h->state != FRS_HOLD_HELD) return;
    frs_conn *c = h->conn;
    h->state = FRS_HOLD_RELEASED;
    h->info.state = FRS_HOLD_RELEASED;
    frs_record_hold(c, "released", h->spec.nth, 0, NULL, NULL);
    if (c->held == FRS_HOLD_BEFORE) {
        h->replay = 1; /* process_input runs it first (frs_hold_replay) */
    } else {
        c->out.stopped = 0;
        h->conn = NULL;
        frs_conn_want_flush(c);
    }
    c->held = 0;
    frs_conn_resume(c);
}

void frs_hold_disarm(frs_server *srv)
{
    struct frs_hold *h = srv->hold;
    if (!h) return;
    frs_hold_release(srv);
    if (h->replay && h->conn) frs_hold_replay(h->conn);
    if (h->after_conn) h->after_conn->hold_on_wake = 0;
    for (frs_conn *c = srv->conns; c; c = c->next) c->hold_on_wake = 0;
    forget_command(h);
    free(h->name);
    free(h);
    srv->hold = NULL;
}

void frs_hold_free(frs_server *srv)
{
    struct frs_hold *h = srv->hold;
    if (!h) return;
    forget_command(h);
    free(h->name);
    free(h);
    srv->hold = NULL;
}

int frs_hold_before_command(frs_conn *c, int argc, const char *const *argv,
                            const size_t *argvlen)
{
    struct frs_hold *h = c->srv->hold;
    if (!h || h->state != FRS_HOLD_ARMED) return 0;
    if (h->spec.match && !h->spec.match(h->spec.ud, c)) return 0;
    if (h->name && !name_matches(h->name, argc, argv, argvlen)) return 0;
    h->counted++;
    if (h->spec.nth == 0 || h->counted != h->spec.nth) return 0;
    keep_command(h, argc, argv, argvlen);
    if (h->spec.when == FRS_HOLD_AFTER) {
        h->after_conn = c; /* frs_hold_after_command freezes its reply */
        return 0;
    }
    held(h, c, FRS_HOLD_BEFORE);
    return 1;
}

/* Freezes c's output at position from and holds it. */
static void freeze(struct frs_hold *h, frs_conn *c, uint64_t from)
{
    c->out.stopped = 1;
    c->out.stop = from;
    held(h, c, FRS_HOLD_AFTER);
}

void frs_hold_after_command(frs_conn *c, uint64_t from)
{
    struct frs_hold *h = c->srv->hold;
    if (!h || h->after_conn != c) return;
    h->after_conn = NULL;
    if (c->blocked) c->hold_on_wake = 1; /* held once it is served */
    else freeze(h, c, from);
}

void frs_hold_woken(frs_conn *c, uint64_t from)
{
    struct frs_hold *h = c->srv->hold;
    if (!c->hold_on_wake) return;
    c->hold_on_wake = 0;
    if (h && h->state == FRS_HOLD_ARMED) freeze(h, c, from);
}

void frs_hold_replay(frs_conn *c)
{
    struct frs_hold *h = c->srv->hold;
    if (!h || !h->replay || h->conn != c) return;
    h->replay = 0;
    h->conn = NULL;
    frs_dispatch(c, h->info.argc, (const char *const *)h->info.argv, h->info.argvlen);
    frs_conn_want_flush(c);
}

void frs_hold_conn_closed(frs_conn *c)
{
    struct frs_hold *h = c->srv->hold;
    if (!h) return;
    if (h->after_conn == c) h->after_conn = NULL;
    if (h->conn != c) return;
    if (h->state == FRS_HOLD_HELD) {
        h->state = FRS_HOLD_DROPPED;
        h->info.state = FRS_HOLD_DROPPED;
        frs_record_hold(c, "dropped", h->spec.nth, 0, NULL, NULL);
    }
    h->replay = 0;
    h->conn = NULL;
}
