/* dispatch.c -- running one request: the checks Redis makes before a command runs (in
 * processCommand's order: existence and arity, authentication, subscribed mode, MULTI),
 * then the server's handler or the fake, then the reply in the connection's protocol.
 *
 * The fake keeps its own MULTI queue.  The server mirrors it (c->queue) for two reasons:
 * its own commands queued inside MULTI run when EXEC does and their replies are spliced
 * into EXEC's array at their places, and a RESP3 connection needs each queued command's
 * name to convert EXEC's elements. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "frs.h"

/* Redis's authRequired(): the default user has a password (or is off) and this
 * connection has not authenticated (ACLs live in the fake: acl.c). */
static int auth_required(const frs_conn *c)
{
    return !c->authed && fr_server_auth_required(c->srv->fake);
}

/* Redis's arity rule: n exactly, -n at least n. */
static int arity_ok(const frs_cmd *cmd, int argc)
{
    return cmd->arity > 0 ? argc == cmd->arity : argc >= -cmd->arity;
}

/* Case-insensitive equality of an argument with a word. */
static int name_is(const char *p, size_t n, const char *word)
{
    return strlen(word) == n && strncasecmp(p, word, n) == 0;
}

/* Dooms the fake's transaction as a refusal by the fake would (EXEC answers EXECABORT). */
static void flag_transaction(frs_conn *c) { fr_client_flag_transaction(c->fc); }

/* A command refused before it ran: one rejected call on its row (Redis's rejectCommand). */
static void reject(frs_conn *c, const char *name) { fr_stats_record_rejected(c->srv->fake, name); }

/* Redis's maxmemory check in processCommand, with nothing to evict (the fake never evicts):
 * while the process uses more than maxmemory, a command that may grow memory (denyoom),
 * or any command queued inside MULTI, is refused.  EXEC, DISCARD, QUIT and RESET pass. */
static int out_of_memory(frs_conn *c, const frs_cmd *cmd)
{
    int deny = cmd->fake_flags && strstr(cmd->fake_flags, "denyoom") != NULL;
    if (fr_client_in_multi(c->fc) && strcmp(cmd->name, "exec") && strcmp(cmd->name, "discard") &&
        strcmp(cmd->name, "quit") && strcmp(cmd->name, "reset"))
        deny = 1;
    return deny && frs_used_memory() > c->srv->maxmemory;
}

/* Answers the OOM refusal (dooming a transaction) when out_of_memory says so: 1 if it did. */
static int refuse_oom(frs_conn *c, const frs_cmd *cmd)
{
    if (!out_of_memory(c, cmd)) return 0;
    flag_transaction(c);
    reject(c, cmd->name);
    frs_reply_error(c, "OOM command not allowed when used memory > 'maxmemory'.");
    return 1;
}

/* Forgets the mirrored MULTI queue. */
static void queue_clear(frs_conn *c)
{
    for (size_t i = 0; i < c->queue_len; i++) {
        frs_queued *q = &c->queue[i];
        for (int j = 0; j < q->argc; j++) free(q->argv[j]);
        free(q->argv);
        free(q->argvlen);
    }
    c->queue_len = 0;
    c->queue_host = 0;
}

/* Records a queued command; its arguments are copied when it will be needed later (a
 * server command always, a fake command on a RESP3 connection for the conversion). */
static void queue_add(frs_conn *c, int host, int argc, const char *const *argv,
                      const size_t *argvlen)
{
    if (c->queue_len == c->queue_cap) {
        size_t cap = c->queue_cap ? 2 * c->queue_cap : 8;
        frs_queued *nq = realloc(c->queue, cap * sizeof(*nq));
        if (!nq) {
            c->out.failed = 1; /* the connection closes (frs_conn_want_flush) */
            return;
        }
        c->queue = nq;
        c->queue_cap = cap;
    }
    frs_queued *q = &c->queue[c->queue_len++];
    memset(q, 0, sizeof(*q));
    q->host = host;
    if (host) c->queue_host++;
    if (!host && c->resp != 3) return;
    q->argv = malloc(sizeof(char *) * (size_t)argc);
    q->argvlen = malloc(sizeof(size_t) * (size_t)argc);
    if (!q->argv || !q->argvlen) {
        c->out.failed = 1; /* the connection closes; what was copied is freed with it */
        return;
    }
    for (int i = 0; i < argc; i++) {
        q->argv[i] = malloc(argvlen[i] + 1);
        if (!q->argv[i]) {
            c->out.failed = 1;
            return;
        }
        q->argc = i + 1;
        memcpy(q->argv[i], argv[i], argvlen[i]);
        q->argv[i][argvlen[i]] = '\0';
        q->argvlen[i] = argvlen[i];
    }
}

/* Appends the fake's reply bytes for argv in the connection's protocol. */
static void put_fake_reply(frs_conn *c, int argc, const char *const *argv,
                           const size_t *argvlen, const char *p, size_t n)
{
    if (c->resp == 3) frs_resp3_convert(c, argc, argv, argvlen, p, n);
    else frs_reply_raw(c, p, n);
}

/* Redis's call() for the server's own commands: runs cmd and records the call, its
 * duration and a failure when it answered an error.  FAKE.* commands are not Redis's:
 * they stay out of commandstats (their errors still count, as replies a client read). */
static void run_host(frs_conn *c, const frs_cmd *cmd, int argc, const char *const *argv,
                     const size_t *argvlen)
{
    fr_server *fake = c->srv->fake;
    if (!strcmp(cmd->group, "fake")) {
        cmd->proc(c, argc, argv, argvlen);
        return;
    }
    uint64_t errors = fr_stats_total_error_replies(fake);
    uint64_t start = frs_mono_us(NULL);
    int64_t vstart = fr_clock_now(fake);
    cmd->proc(c, argc, argv, argvlen);
    uint64_t usec = frs_mono_us(NULL) - start;
    /* MONITOR, the slow log, latency: on the virtual clock a command lasts what the clock
     * moved while it ran (DEBUG SLEEP) */
    frs_admin_host_called(c, cmd, argc, argv, argvlen,
                          c->srv->opt.wall_clock ? usec
                                                 : (uint64_t)(fr_clock_now(fake) - vstart) * 1000);
    /* CONFIG RESETSTAT zeroes the counter: only a rise is a failure, as in Redis */
    int failed = (int64_t)(fr_stats_total_error_replies(fake) - errors) > 0;
    fr_stats_record_call(fake, cmd->name, usec, failed);
}

/* EXEC's reply when the server must rework it: the fake's array has one element per fake
 * command of the queue; the server's commands run now, in their places. */
static void put_exec_reply(frs_conn *c, const char *p, size_t n)
{
    frs_queued *queue = c->queue;
    size_t qlen = c->queue_len;
    /* Detach the queue first: the server's commands run below outside MULTI. */
    c->queue = NULL;
    c->queue_len = c->queue_cap = 0;
    c->queue_host = 0;

    frs_arena *arena = NULL;
    frs_rnode *r = frs_rparse(&arena, p, n);
    size_t nfake = 0;
    for (size_t i = 0; i < qlen; i++) nfake += !queue[i].host;
    if (!r || r->type != '*' || r->n < 0 || (size_t)r->n != nfake) {
        /* EXECABORT, a WATCH that failed (nil): nothing of the queue runs */
        put_fake_reply(c, 1, (const char *const[]){"exec"}, (const size_t[]){4}, p, n);
    } else {
        frs_reply_array(c, (long)qlen);
        size_t k = 0;
        c->in_exec = 1; /* MULTI's CLIENT_DENY_BLOCKING holds while EXEC runs */
        for (size_t i = 0; i < qlen; i++) {
            frs_queued *q = &queue[i];
            if (q->host) {
                /* checked when queued: EXEC runs it as call() does, with no check */
                const frs_cmd *container;
                const frs_cmd *cmd = frs_cmd_lookup(q->argc, (const char *const *)q->argv,
                                                    q->argvlen, &container);
                if (cmd && cmd->proc)
                    run_host(c, cmd, q->argc, (const char *const *)q->argv, q->argvlen);
                continue;
            }
            frs_rnode *e = &r->child[k++];
            if (c->resp == 3)
                frs_resp3_convert(c, q->argc, (const char *const *)q->argv, q->argvlen,
                                  e->start, e->raw_len);
            else
                frs_reply_raw(c, e->start, e->raw_len);
        }
        c->in_exec = 0;
    }
    frs_arena_free(&arena);
    frs_conn tmp = *c;
    tmp.queue = queue;
    tmp.queue_len = qlen;
    queue_clear(&tmp);
    free(queue);
}

/* Whether the command is one of the (P|S)(UN)SUBSCRIBEs, whose confirmations Redis
 * pushes even with CLIENT REPLY OFF or SKIP in force. */
static int is_subscription_command(const char *p, size_t n)
{
    static const char *const names[] = {"subscribe", "psubscribe", "ssubscribe",
                                        "unsubscribe", "punsubscribe", "sunsubscribe"};
    for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
        if (name_is(p, n, names[i])) return 1;
    return 0;
}

/* Whether this command's replies are being dropped (CLIENT REPLY OFF, or SKIP for it). */
static int silenced(const frs_conn *c)
{
    return c->reply_mode == FRS_REPLY_OFF || c->reply_mode == FRS_REPLY_SKIP;
}

/* The request goes to the fake. */
static void run_fake(frs_conn *c, int argc, const char *const *argv, const size_t *argvlen)
{
    int was_multi = fr_client_in_multi(c->fc);
    int is_exec = was_multi && name_is(argv[0], argvlen[0], "exec");
    size_t n;
    c->in_script = 1; /* if this runs a script that turns busy, the loop leaves c alone */
    const char *p = fr_exec_resp(c->fc, argc, argv, argvlen, &n);
    c->in_script = 0;
    if (n == 0 && fr_client_is_blocked(c->fc)) {
        c->blocked = 1;
        snprintf(c->blocked_cmd, sizeof(c->blocked_cmd), "%.*s",
                 (int)(argvlen[0] < 31 ? argvlen[0] : 31), argv[0]);
        frs_drain_fake_events(c->srv, c);
        return;
    }
    /* Pushes to this very client (a RESP3 client publishing to its own channel) go
     * before the reply, as Redis writes them while the command runs. */
    if (fr_client_push_count(c->fc)) {
        size_t pl;
        const char *pp = fr_client_push_resp(c->fc, &pl);
        if (c->resp == 3) frs_resp3_pushes(c, pp, pl);
        else frs_reply_raw(c, pp, pl);
        fr_client_push_clear(c->fc);
    }
    /* Redis pushes messages (CLIENT_PUSHING) past CLIENT REPLY OFF|SKIP */
    if (silenced(c)) c->reply_keep = c->out.len - c->out.sent;
    if (is_exec && (c->queue_host || c->resp == 3)) {
        put_exec_reply(c, p, n);
    } else {
        if (was_multi && n == 9 && memcmp(p, "+QUEUED\r\n", 9) == 0)
            queue_add(c, 0, argc, argv, argvlen);
        put_fake_reply(c, argc, argv, argvlen, p, n);
        /* ... and the confirmations of a subscription command (not an error it got) */
        if (silenced(c) && !was_multi && n > 0 && p[0] == '*' &&
            is_subscription_command(argv[0], argvlen[0]))
            c->reply_keep = c->out.len - c->out.sent;
    }
    if (!fr_client_in_multi(c->fc) && c->queue_len) queue_clear(c);
    /* ACL DELUSER closes the connections of the users it deleted, this one after its
     * reply (Redis's ACLFreeUserAndKillClients) */
    if (argvlen[0] == 3 && strncasecmp(argv[0], "acl", 3) == 0)
        for (frs_conn *o = c->srv->conns; o; o = o->next)
            if (fr_client_closing(o->fc)) {
                if (o == c) frs_conn_close_after_reply(o);
                else frs_conn_kill(o);
            }
    frs_drain_fake_events(c->srv, c);
}

static void dispatch(frs_conn *c, int argc, const char *const *argv, const size_t *argvlen);

void frs_dispatch(frs_conn *c, int argc, const char *const *argv, const size_t *argvlen)
{
    /* the recording: what the connection got before this command, then the command
     * (each hook is called only while it has something to do: this is every command's
     * path) */
    frs_server *srv = c->srv;
    if (srv->rec) frs_record_pushes(c);
    int multi = fr_client_in_multi(c->fc);
    uint64_t from = frs_obuf_pos(&c->out);
    /* CLIENT REPLY OFF/SKIP: the command runs, its reply is dropped (Redis refuses to
     * buffer it; nothing is written between the two points here, so cutting is the same). */
    int was = c->reply_mode;
    size_t outer_keep = c->reply_keep; /* EXEC runs the server's queued commands here */
    c->reply_keep = c->out.len - c->out.sent;
    frs_conn *outer = frs_admin_before_command(c);
    dispatch(c, argc, argv, argvlen);
    frs_admin_after_command(c, outer, argc, argv, argvlen);
    /* the mode as the command left it: CLIENT REPLY ON under SKIP has its +OK sent */
    if (silenced(c)) {
        size_t keep = c->reply_keep;
        if (c->out.len - c->out.sent > keep) c->out.len = c->out.sent + keep;
    }
    c->reply_keep = outer_keep;
    if (was == FRS_REPLY_SKIP && c->reply_mode == FRS_REPLY_SKIP) c->reply_mode = 0;
    if (c->reply_mode == FRS_REPLY_SKIP_NEXT) c->reply_mode = FRS_REPLY_SKIP;
    if (srv->rec) {
        frs_record_command(c, multi, from, argc, argv, argvlen);
        frs_record_sweep(srv); /* the clients it woke, the messages it sent */
    }
    if (srv->hold) frs_hold_after_command(c, from);
}

static void dispatch(frs_conn *c, int argc, const char *const *argv, const size_t *argvlen)
{
    frs_server *srv = c->srv;
    c->last_ms = srv->turn_ms;

    const frs_cmd *container;
    const frs_cmd *cmd = frs_cmd_lookup(argc, argv, argvlen, &container);
    c->last_cmd = cmd ? cmd->name : container ? container->name : "NULL";

    /* Existence and arity come first (the fake words them for its own commands), then
     * authentication. */
    int refused_early = !cmd || !arity_ok(cmd, argc);
    if (!refused_early && auth_required(c) && !(cmd->flags & FRS_CMD_NOAUTH)) {
        reject(c, cmd->name);
        frs_reply_error(c, "NOAUTH Authentication required.");
        return;
    }

    int host = cmd ? cmd->fake_flags == NULL : container && container->fake_flags == NULL;
    if (c->monitor && !refused_early && frs_admin_refuse_replica(c, cmd)) return;
    if (!host) {
        if (!refused_early && srv->maxmemory && refuse_oom(c, cmd)) return;
        run_fake(c, argc, argv, argvlen);
        return;
    }

    /* The server's own commands, refused (rejected_calls) in processCommand's order. */
    int in_multi = fr_client_in_multi(c->fc);
    if (!cmd) {
        if (in_multi) flag_transaction(c);
        if (argc < 2) {
            reject(c, container->name);
            frs_reply_arity(c, container->name);
            return;
        }
        char upper[64];
        size_t i;
        for (i = 0; container->name[i] && i < sizeof(upper) - 1; i++)
            upper[i] = (char)(container->name[i] >= 'a' && container->name[i] <= 'z'
                                  ? container->name[i] - 32 : container->name[i]);
        upper[i] = '\0';
        size_t alen = strnlen(argv[1], argvlen[1]);
        frs_reply_errorf(c, "ERR unknown subcommand '%.*s'. Try %s HELP.",
                         (int)(alen > 128 ? 128 : alen), argv[1], upper);
        return;
    }
    if (!arity_ok(cmd, argc)) {
        if (in_multi) flag_transaction(c);
        reject(c, cmd->name);
        frs_reply_arity(c, cmd->name);
        return;
    }
    if (in_multi && (cmd->flags & FRS_CMD_NOMULTI)) {
        flag_transaction(c);
        reject(c, cmd->name);
        frs_reply_error(c, "ERR Command not allowed inside a transaction");
        return;
    }
    /* the ACLs live in the fake (acl.c); it checks the server's commands too */
    char acl_err[256];
    if (fr_client_acl_check(c->fc, argc, argv, argvlen, acl_err, sizeof(acl_err)) < 0) {
        if (in_multi) flag_transaction(c);
        reject(c, cmd->name);
        frs_reply_error(c, acl_err);
        return;
    }
    if (srv->maxmemory && refuse_oom(c, cmd)) return;
    if (c->resp == 2 && !(cmd->flags & FRS_CMD_PUBSUBOK) && fr_client_subscriptions(c->fc)) {
        if (in_multi) flag_transaction(c);
        reject(c, cmd->name);
        frs_reply_errorf(c, "ERR Can't execute '%s': only (P|S)SUBSCRIBE / "
                            "(P|S)UNSUBSCRIBE / PING / QUIT / RESET are allowed in this "
                            "context", cmd->name);
        return;
    }
    if (fr_server_script_busy(srv->fake) && !(cmd->flags & FRS_CMD_ALLOW_BUSY)) {
        if (in_multi) flag_transaction(c);
        reject(c, cmd->name);
        frs_reply_error(c, FRS_ERR_BUSY);
        return;
    }
    if (in_multi && !(cmd->flags & FRS_CMD_MULTICTL)) {
        queue_add(c, 1, argc, argv, argvlen);
        frs_reply_raw(c, "+QUEUED\r\n", 9);
        return;
    }
    run_host(c, cmd, argc, argv, argvlen);
}

void frs_drain_fake_events(frs_server *srv, frs_conn *current)
{
    fr_client *fc;
    while ((fc = fr_server_take_woken(srv->fake))) {
        frs_conn *w = frs_conn_of(srv, fc);
        if (!w) continue;
        size_t n;
        const char *p = fr_client_woken_resp(fc, &n);
        w->blocked = 0;
        if (srv->rec) frs_record_pushes(w); /* what it got while blocked comes first */
        uint64_t from = frs_obuf_pos(&w->out);
        frs_admin_unblocked(w, 0); /* its slow log entry (updateStatsOnUnblock) */
        /* The reply of a blocking command: its RESP3 shape depends on its name only. */
        if (w->resp == 3) {
            const char *name = w->blocked_cmd;
            size_t nlen = strlen(name);
            frs_resp3_convert(w, 1, &name, &nlen, p, n);
        }
        else frs_reply_raw(w, p, n);
        if (srv->rec) frs_record_woken(w, from, frs_obuf_pos(&w->out));
        if (srv->hold) frs_hold_woken(w, from);
        frs_tracking_flush_pending(w); /* its invalidations follow its reply */
        frs_conn_want_flush(w);
        frs_conn_resume(w);
    }
    while ((fc = fr_server_take_pushed(srv->fake))) {
        frs_conn *w = frs_conn_of(srv, fc);
        if (!w) continue;
        size_t n;
        const char *p = fr_client_push_resp(fc, &n);
        if (w->resp == 3) frs_resp3_pushes(w, p, n);
        else frs_reply_raw(w, p, n);
        fr_client_push_clear(fc);
        frs_conn_want_flush(w);
    }
    (void)current;
}
