/* commands.c -- the server's own connection and server commands: HELLO, AUTH, QUIT,
 * RESET, CLIENT, COMMAND, FUNCTION and a few that clients send at start (ROLE, LASTSAVE,
 * WAIT, SAVE, SHUTDOWN).  Replies and errors are redis-server 7.0.15's. */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include "frs.h"

/* Case-insensitive equality of an argument with a word. */
static int arg_is(const char *p, size_t n, const char *word)
{
    return strlen(word) == n && strncasecmp(p, word, n) == 0;
}

/* A strict integer argument (Redis's string2ll): 1 when it is one. */
static int arg_ll(const char *p, size_t n, long long *out) { return frs_string2ll(p, n, out); }

/* Sends each line of help as a status reply, in an array (Redis's addReplyHelp). */
void frs_reply_help(frs_conn *c, const char *name, const char *const *lines)
{
    long n = 0;
    while (lines[n]) n++;
    frs_reply_array(c, n + 3);
    char head[128];
    snprintf(head, sizeof(head), "%s <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
             name);
    frs_reply_status(c, head);
    for (long i = 0; i < n; i++) frs_reply_status(c, lines[i]);
    frs_reply_status(c, "HELP");
    frs_reply_status(c, "    Prints this help.");
}

/* ----- Authentication and the connection -------------------------------------------- */

/* Redis's ACLAuthenticateUser against the fake's ACL users (acl.c): 1 when the pair is
 * right, and the connection's fake client is that user from now on; a failure is in
 * the ACL log under verb (AUTH or HELLO as typed). */
static int check_credentials(frs_conn *c, const char *verb, size_t vlen, const char *user,
                             size_t ulen, const char *pass, size_t plen)
{
    return fr_client_auth(c->fc, verb, vlen, user, ulen, pass, plen) == 0;
}

/* AUTH [user] pass: +OK, WRONGPASS, or the no-password error of 7.0. */
void frs_cmd_auth(frs_conn *c, int argc, const char *const *argv, const size_t *argvlen)
{
    if (argc > 3) {
        frs_reply_error(c, "ERR syntax error");
        return;
    }
    const char *user = "default", *pass = argv[1];
    size_t ulen = 7, plen = argvlen[1];
    if (argc == 2) {
        if (fr_server_default_nopass(c->srv->fake)) {
            frs_reply_error(c, "ERR AUTH <password> called without any password configured "
                               "for the default user. Are you sure your configuration is "
                               "correct?");
            return;
        }
    } else {
        user = argv[1];
        ulen = argvlen[1];
        pass = argv[2];
        plen = argvlen[2];
    }
    if (check_credentials(c, argv[0], argvlen[0], user, ulen, pass, plen)) {
        c->authed = 1;
        c->in.auth_required = 0;
        frs_reply_ok(c);
    } else {
        frs_reply_error(c, "WRONGPASS invalid username-password pair or user is disabled.");
    }
}

/* Redis's validateClientName: printable ASCII without spaces. */
static int valid_name(const char *p, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (p[i] < '!' || p[i] > '~') return 0;
    return 1;
}

/* Sets (n > 0) or clears the connection's name. */
static void set_name(frs_conn *c, const char *p, size_t n)
{
    free(c->name);
    c->name = NULL;
    if (n == 0) return;
    c->name = malloc(n + 1);
    if (!c->name) frs_oom_abort(__func__);
    memcpy(c->name, p, n);
    c->name[n] = '\0';
}

/* HELLO [proto [AUTH user pass] [SETNAME name]]: switches protocol, answers the map. */
void frs_cmd_hello(frs_conn *c, int argc, const char *const *argv, const size_t *argvlen)
{
    long long ver = 0;
    int next = 1;
    if (argc >= 2) {
        next = 2;
        if (!arg_ll(argv[1], argvlen[1], &ver)) {
            frs_reply_error(c, "ERR Protocol version is not an integer or out of range");
            return;
        }
        if (ver < 2 || ver > 3) {
            frs_reply_error(c, "NOPROTO unsupported protocol version");
            return;
        }
    }
    int auth_at = 0, name_at = 0;
    for (int j = next; j < argc; j++) {
        int more = argc - 1 - j;
        if (arg_is(argv[j], argvlen[j], "AUTH") && more >= 2) {
            auth_at = j + 1;
            j += 2;
        } else if (arg_is(argv[j], argvlen[j], "SETNAME") && more) {
            if (!valid_name(argv[j + 1], argvlen[j + 1])) {
                frs_reply_error(c, "ERR Client names cannot contain spaces, newlines or "
                                   "special characters.");
                return;
            }
            name_at = j + 1;
            j++;
        } else {
            frs_reply_errorf(c, "ERR Syntax error in HELLO option '%.*s'", (int)argvlen[j],
                             argv[j]);
            return;
        }
    }
    if (auth_at) {
        if (!check_credentials(c, argv[0], argvlen[0], argv[auth_at], argvlen[auth_at],
                               argv[auth_at + 1], argvlen[auth_at + 1])) {
            frs_reply_error(c, "WRONGPASS invalid username-password pair or user is disabled.");
            return;
        }
        c->authed = 1;
        c->in.auth_required = 0;
    }
    if (!c->authed && fr_server_auth_required(c->srv->fake)) {
        frs_reply_error(c, "NOAUTH HELLO must be called with the client already authenticated, "
                           "otherwise the HELLO AUTH <user> <pass> option can be used "
                           "to authenticate the client and select the RESP protocol version "
                           "at the same time");
        return;
    }
    if (name_at) set_name(c, argv[name_at], argvlen[name_at]);
    if (ver) {
        c->resp = (int)ver;
        fr_client_set_protocol(c->fc, c->resp); /* RESP3's subscribed-mode rules */
    }
    frs_reply_map(c, 7);
    frs_reply_bulk_cstr(c, "server");
    frs_reply_bulk_cstr(c, "redis");
    frs_reply_bulk_cstr(c, "version");
    frs_reply_bulk_cstr(c, frs_redis_version(c->srv));
    frs_reply_bulk_cstr(c, "proto");
    frs_reply_ll(c, c->resp);
    frs_reply_bulk_cstr(c, "id");
    frs_reply_ll(c, (long long)c->id);
    frs_reply_bulk_cstr(c, "mode");
    frs_reply_bulk_cstr(c, c->srv->opt.cluster ? "cluster" : "standalone");
    frs_reply_bulk_cstr(c, "role");
    frs_reply_bulk_cstr(c, "master");
    frs_reply_bulk_cstr(c, "modules");
    frs_reply_array(c, 0);
}

const char *frs_redis_version(const frs_server *srv)
{
    return srv->opt.redis_version ? srv->opt.redis_version : FR_REDIS_VERSION;
}

/* QUIT: +OK, then the connection closes once the reply is out. */
void frs_cmd_quit(frs_conn *c, int argc, const char *const *argv, const size_t *argvlen)
{
    frs_reply_ok(c);
    frs_conn_close_after_reply(c);
}

/* RESET: a fresh fake client (no MULTI, WATCH, db, subscriptions), RESP2, no
 * name, authenticated again only if no password is set; +RESET. */
void frs_cmd_reset(frs_conn *c, int argc, const char *const *argv, const size_t *argvlen)
{
    /* A fresh client in the fake drops MULTI, WATCH, the selected db and subscriptions
     * at once; the connection's own state is reset here. */
    fr_client *fresh = fr_client_new(c->srv->fake);
    if (!fresh) {
        frs_reply_error(c, "OOM command not allowed when used memory > 'maxmemory'.");
        return;
    }
    frs_server *srv = c->srv;
    fr_client *old = c->fc;
    fr_client_set_blocking(fresh, 1);
    c->fc = fresh;
    frs_conn_rebind(c, old);
    fr_client_free(old);
    for (size_t i = 0; i < c->queue_len; i++) {
        for (int j = 0; j < c->queue[i].argc; j++) free(c->queue[i].argv[j]);
        free(c->queue[i].argv);
        free(c->queue[i].argvlen);
    }
    c->queue_len = 0;
    c->queue_host = 0;
    c->resp = 2;
    frs_admin_conn_closed(c); /* out of MONITOR, tracking off (clearClientConnectionState) */
    c->monitor = 0;
    set_name(c, NULL, 0);
    c->reply_mode = 0;
    c->authed = !fr_server_auth_required(srv->fake);
    c->in.auth_required = !c->authed;
    frs_reply_status(c, "RESET");
}

/* ROLE: a master without replicas. */
void frs_cmd_role(frs_conn *c, int argc, const char *const *argv, const size_t *argvlen)
{
    frs_reply_array(c, 3);
    frs_reply_bulk_cstr(c, "master");
    frs_reply_ll(c, 0);
    frs_reply_array(c, 0);
}

/* WAIT numreplicas timeout: 0 at once, there are no replicas. */
void frs_cmd_wait(frs_conn *c, int argc, const char *const *argv, const size_t *argvlen)
{
    long long v;
    if (!arg_ll(argv[1], argvlen[1], &v) || !arg_ll(argv[2], argvlen[2], &v)) {
        frs_reply_error(c, "ERR value is not an integer or out of range");
        return;
    }
    frs_reply_ll(c, 0); /* no replicas to wait for */
}

/* SHUTDOWN [NOSAVE|SAVE] [NOW] [FORCE] [ABORT], as 7.0.15's shutdownCommand: an unknown
 * word, ABORT with anything else, or SAVE with NOSAVE is a syntax error; ABORT answers
 * that no shutdown is in progress (a shutdown here never waits for replicas); anything
 * else stops the server with no reply, after prepareForShutdown's work (persist.c: the
 * RDB file written with save points or SAVE, not with NOSAVE; the AOF flushed), or
 * answers "Errors trying to SHUTDOWN. Check logs." when that failed (without FORCE).
 * Inside MULTI it never gets here: it is refused as a no-multi command. */
void frs_cmd_shutdown(frs_conn *c, int argc, const char *const *argv, const size_t *argvlen)
{
    int save = 0, nosave = 0, other = 0, abort_ = 0, force = 0;
    for (int i = 1; i < argc; i++) {
        if (arg_is(argv[i], argvlen[i], "nosave")) nosave = 1;
        else if (arg_is(argv[i], argvlen[i], "save")) save = 1;
        else if (arg_is(argv[i], argvlen[i], "now")) other = 1;
        else if (arg_is(argv[i], argvlen[i], "force")) other = force = 1;
        else if (arg_is(argv[i], argvlen[i], "abort")) abort_ = 1;
        else {
            frs_reply_error(c, "ERR syntax error");
            return;
        }
    }
    if ((abort_ && (save || nosave || other)) || (save && nosave)) {
        frs_reply_error(c, "ERR syntax error");
        return;
    }
    if (abort_) {
        frs_reply_error(c, "ERR No shutdown in progress.");
        return;
    }
    /* While a script is busy only SHUTDOWN NOSAVE may end it. */
    if (fr_server_script_busy(c->srv->fake) && !nosave) {
        frs_reply_error(c, FRS_ERR_BUSY);
        return;
    }
    if (frs_persist_shutdown(c->srv, nosave ? -1 : save, force) < 0) {
        frs_reply_error(c, "ERR Errors trying to SHUTDOWN. Check logs.");
        return;
    }
    /* As redis-server: no reply, the server exits (the connection closes with it). */
    c->srv->stop = 1;
}

/* ----- CLIENT ---------------------------------------------------------------------- */

void frs_cmd_client_setname(frs_conn *c, int argc, const char *const *argv,
                            const size_t *argvlen)
{
    if (!valid_name(argv[2], argvlen[2])) {
        frs_reply_error(c, "ERR Client names cannot contain spaces, newlines or special "
                           "characters.");
        return;
    }
    set_name(c, argv[2], argvlen[2]);
    frs_reply_ok(c);
}

/* CLIENT GETNAME: the name, or a null. */
void frs_cmd_client_getname(frs_conn *c, int argc, const char *const *argv,
                            const size_t *argvlen)
{
    frs_reply_bulk_cstr(c, c->name);
}

/* CLIENT ID: the connection's id. */
void frs_cmd_client_id(frs_conn *c, int argc, const char *const *argv, const size_t *argvlen)
{
    frs_reply_ll(c, (long long)c->id);
}

/* CLIENT INFO: this connection's CLIENT LIST line (verbatim in RESP3). */
void frs_cmd_client_info(frs_conn *c, int argc, const char *const *argv, const size_t *argvlen)
{
    char line[1024];
    frs_client_line(c, line, sizeof(line) - 1);
    strcat(line, "\n");
    frs_reply_verbatim(c, line, strlen(line));
}

/* The type CLIENT LIST/KILL TYPE names: 0 normal, 1 pubsub, 2 master, 3 replica; -1 if
 * unknown. */
static int client_type(const char *p, size_t n)
{
    if (arg_is(p, n, "normal")) return 0;
    if (arg_is(p, n, "pubsub")) return 1;
    if (arg_is(p, n, "master")) return 2;
    if (arg_is(p, n, "replica") || arg_is(p, n, "slave")) return 3;
    return -1;
}

/* A connection's class for TYPE filters (0 normal, 1 pubsub). */
static int conn_type(frs_conn *c)
{
    if (fr_client_subscriptions(c->fc)) return 1;
    (void)c;
    return 0;
}

/* CLIENT LIST [TYPE type | ID id ...]: one line per connection. */
void frs_cmd_client_list(frs_conn *c, int argc, const char *const *argv, const size_t *argvlen)
{
    int type = -1;
    long long *ids = NULL;
    size_t nids = 0;
    if (argc == 4 && arg_is(argv[2], argvlen[2], "type")) {
        type = client_type(argv[3], argvlen[3]);
        if (type < 0) {
            frs_reply_errorf(c, "ERR Unknown client type '%.*s'", (int)argvlen[3], argv[3]);
            return;
        }
    } else if (argc > 3 && arg_is(argv[2], argvlen[2], "id")) {
        ids = malloc(sizeof(*ids) * (size_t)argc);
        if (!ids) frs_oom_abort(__func__);
        for (int j = 3; j < argc; j++) {
            long long id;
            if (!arg_ll(argv[j], argvlen[j], &id) || id < 1) {
                free(ids);
                frs_reply_error(c, "ERR Invalid client ID");
                return;
            }
            ids[nids++] = id;
        }
    } else if (argc != 2) {
        frs_reply_error(c, "ERR syntax error");
        return;
    }
    size_t cap = 4096, len = 0;
    char *text = malloc(cap);
    if (!text) frs_oom_abort(__func__);
    text[0] = '\0';
    for (frs_conn *o = c->srv->conns; o; o = o->next) {
        if (type >= 0 && conn_type(o) != type) continue;
        if (ids) {
            int found = 0;
            for (size_t k = 0; k < nids; k++) found |= (unsigned long long)ids[k] == o->id;
            if (!found) continue;
        }
        char line[1024];
        frs_client_line(o, line, sizeof(line));
        size_t ll = strlen(line);
        if (len + ll + 2 > cap) {
            while (len + ll + 2 > cap) cap *= 2;
            char *nt = realloc(text, cap);
            if (!nt) frs_oom_abort(__func__);
            text = nt;
        }
        memcpy(text + len, line, ll);
        len += ll;
        text[len++] = '\n';
    }
    frs_reply_verbatim(c, text, len);
    free(text);
    free(ids);
}

/* CLIENT KILL addr (the old form, +OK) or CLIENT KILL filter value ... (how many). */
void frs_cmd_client_kill(frs_conn *c, int argc, const char *const *argv, const size_t *argvlen)
{
    frs_server *srv = c->srv;
    if (argc == 3) {
        /* The old form: CLIENT KILL addr:port. */
        for (frs_conn *o = srv->conns; o; o = o->next) {
            if (strlen(o->addr) == argvlen[2] && memcmp(o->addr, argv[2], argvlen[2]) == 0) {
                frs_reply_ok(c);
                if (o == c) frs_conn_close_after_reply(c);
                else frs_conn_kill(o);
                return;
            }
        }
        frs_reply_error(c, "ERR No such client");
        return;
    }
    long long id = 0;
    int type = -1, skipme = 1;
    const char *addr = NULL, *laddr = NULL, *user = NULL;
    size_t addrlen = 0, laddrlen = 0, userlen = 0;
    for (int i = 2; i < argc; i += 2) {
        if (i + 1 >= argc) {
            frs_reply_error(c, "ERR syntax error");
            return;
        }
        const char *v = argv[i + 1];
        size_t vl = argvlen[i + 1];
        if (arg_is(argv[i], argvlen[i], "id")) {
            if (!arg_ll(v, vl, &id) || id <= 0) {
                frs_reply_error(c, "ERR client-id should be greater than 0");
                return;
            }
        } else if (arg_is(argv[i], argvlen[i], "type")) {
            type = client_type(v, vl);
            if (type < 0) {
                frs_reply_errorf(c, "ERR Unknown client type '%.*s'", (int)vl, v);
                return;
            }
        } else if (arg_is(argv[i], argvlen[i], "addr")) {
            addr = v;
            addrlen = vl;
        } else if (arg_is(argv[i], argvlen[i], "laddr")) {
            laddr = v;
            laddrlen = vl;
        } else if (arg_is(argv[i], argvlen[i], "user")) {
            user = v;
            userlen = vl;
        } else if (arg_is(argv[i], argvlen[i], "skipme")) {
            if (arg_is(v, vl, "yes")) skipme = 1;
            else if (arg_is(v, vl, "no")) skipme = 0;
            else {
                frs_reply_error(c, "ERR syntax error");
                return;
            }
        } else {
            frs_reply_error(c, "ERR syntax error");
            return;
        }
    }
    if (user && !fr_server_has_user(srv->fake, user, userlen)) {
        frs_reply_errorf(c, "ERR No such user '%.*s'", (int)userlen, user);
        return;
    }
    long long killed = 0;
    int self = 0;
    for (frs_conn *o = srv->conns; o; o = o->next) {
        if (id && o->id != (unsigned long long)id) continue;
        if (type >= 0 && conn_type(o) != type) continue;
        if (addr && !(strlen(o->addr) == addrlen && memcmp(o->addr, addr, addrlen) == 0))
            continue;
        if (laddr && !(strlen(o->laddr) == laddrlen && memcmp(o->laddr, laddr, laddrlen) == 0))
            continue;
        if (user) {
            size_t ol;
            const char *on = fr_client_user(o->fc, &ol);
            if (ol != userlen || memcmp(on, user, ol) != 0) continue;
        }
        if (o == c && skipme) continue;
        if (o->close_asap) continue;
        killed++;
        if (o == c) self = 1;
        else frs_conn_kill(o);
    }
    frs_reply_ll(c, killed);
    if (self) frs_conn_close_after_reply(c);
}

/* CLIENT REPLY ON|OFF|SKIP (frs_dispatch drops the replies). */
void frs_cmd_client_reply(frs_conn *c, int argc, const char *const *argv, const size_t *argvlen)
{
    if (arg_is(argv[2], argvlen[2], "on")) {
        c->reply_mode = 0;
        frs_reply_ok(c);
    } else if (arg_is(argv[2], argvlen[2], "off")) {
        c->reply_mode = FRS_REPLY_OFF;
    } else if (arg_is(argv[2], argvlen[2], "skip")) {
        if (c->reply_mode != FRS_REPLY_OFF) c->reply_mode = FRS_REPLY_SKIP_NEXT;
    } else {
        frs_reply_error(c, "ERR syntax error");
    }
}

/* CLIENT NO-EVICT on|off: accepted (nothing is evicted here). */
void frs_cmd_client_noevict(frs_conn *c, int argc, const char *const *argv,
                            const size_t *argvlen)
{
    if (arg_is(argv[2], argvlen[2], "on") || arg_is(argv[2], argvlen[2], "off"))
        frs_reply_ok(c);
    else
        frs_reply_error(c, "ERR syntax error");
}

/* CLIENT UNBLOCK id [TIMEOUT|ERROR]: 1 if that client was blocked. */
void frs_cmd_client_unblock(frs_conn *c, int argc, const char *const *argv,
                            const size_t *argvlen)
{
    long long id;
    if (!arg_ll(argv[2], argvlen[2], &id)) {
        frs_reply_error(c, "ERR value is not an integer or out of range");
        return;
    }
    int error = 0;
    if (argc == 4) {
        if (arg_is(argv[3], argvlen[3], "error")) error = 1;
        else if (!arg_is(argv[3], argvlen[3], "timeout")) {
            frs_reply_error(c, "ERR CLIENT UNBLOCK reason should be TIMEOUT or ERROR");
            return;
        }
    } else if (argc > 4) {
        frs_reply_error(c, "ERR syntax error");
        return;
    }
    long long done = 0;
    for (frs_conn *o = c->srv->conns; o; o = o->next) {
        if (o->id != (unsigned long long)id || !o->blocked) continue;
        done = fr_client_unblock(o->fc, error) > 0;
        break;
    }
    (void)error;
    frs_reply_ll(c, done);
    frs_drain_fake_events(c->srv, c);
}

/* CLIENT GETREDIR: the tracking redirect (0 none), -1 when not tracking. */
void frs_cmd_client_getredir(frs_conn *c, int argc, const char *const *argv,
                             const size_t *argvlen)
{
    frs_reply_ll(c, (c->tracking & FRS_TRACK_ON) ? (long long)c->track_redir : -1);
}

/* CLIENT PAUSE timeout [WRITE|ALL] (Redis's clientCommand): the mode is checked before
 * the timeout; the pause runs to the fake's clock now + timeout ms (pause.c). */
void frs_cmd_client_pause(frs_conn *c, int argc, const char *const *argv,
                          const size_t *argvlen)
{
    if (argc > 4) { /* addReplySubcommandSyntaxError: the name as typed */
        size_t n = strnlen(argv[1], argvlen[1]);
        frs_reply_errorf(c, "ERR unknown subcommand or wrong number of arguments for '%.*s'. "
                            "Try CLIENT HELP.", (int)(n > 128 ? 128 : n), argv[1]);
        return;
    }
    fr_pause type = FR_PAUSE_ALL;
    if (argc == 4) {
        if (arg_is(argv[3], argvlen[3], "write")) {
            type = FR_PAUSE_WRITE;
        } else if (!arg_is(argv[3], argvlen[3], "all")) {
            frs_reply_error(c, "ERR CLIENT PAUSE mode must be WRITE or ALL");
            return;
        }
    }
    long long ms;
    if (!arg_ll(argv[2], argvlen[2], &ms)) {
        frs_reply_error(c, "ERR timeout is not an integer or out of range");
        return;
    }
    if (ms < 0) {
        frs_reply_error(c, "ERR timeout is negative");
        return;
    }
    /* 0 is an end of 0, already past (getTimeoutFromObjectOrReply adds the time only to a
     * positive timeout) */
    int64_t now = fr_clock_now(c->srv->fake), end = 0;
    if (ms > 0) end = ms > INT64_MAX - now ? INT64_MAX : now + ms;
    fr_server_pause(c->srv->fake, type, end);
    frs_reply_ok(c);
}

/* CLIENT UNPAUSE: the held connections go on. */
void frs_cmd_client_unpause(frs_conn *c, int argc, const char *const *argv,
                            const size_t *argvlen)
{
    (void)argc, (void)argv, (void)argvlen;
    fr_server_unpause(c->srv->fake);
    frs_pause_check(c->srv);
    frs_reply_ok(c);
}

/* CLIENT HELP. */
void frs_cmd_client_help(frs_conn *c, int argc, const char *const *argv, const size_t *argvlen)
{
    static const char *const lines[] = {
        "CACHING (YES|NO)",
        "    Enable/disable tracking of the keys for next command in OPTIN/OPTOUT modes.",
        "GETREDIR", "    Return the client ID we are redirecting to when tracking is enabled.",
        "GETNAME", "    Return the name of the current connection.",
        "ID", "    Return the ID of the current connection.",
        "INFO", "    Return information about the current client connection.",
        "KILL <ip:port>", "    Kill connection made from <ip:port>.",
        "KILL <option> <value> [<option> <value> [...]]",
        "    Kill connections. Options are:",
        "    * ADDR (<ip:port>|<unixsocket>:0)",
        "      Kill connections made from the specified address",
        "    * LADDR (<ip:port>|<unixsocket>:0)",
        "      Kill connections made to specified local address",
        "    * TYPE (NORMAL|MASTER|REPLICA|PUBSUB)", "      Kill connections by type.",
        "    * USER <username>", "      Kill connections authenticated by <username>.",
        "    * SKIPME (YES|NO)", "      Skip killing current connection (default: yes).",
        "LIST [options ...]", "    Return information about client connections. Options:",
        "    * TYPE (NORMAL|MASTER|REPLICA|PUBSUB)", "      Return clients of specified type.",
        "UNPAUSE", "    Stop the current client pause, resuming traffic.",
        "PAUSE <timeout> [WRITE|ALL]",
        "    Suspend all, or just write, clients for <timeout> milliseconds.",
        "REPLY (ON|OFF|SKIP)", "    Control the replies sent to the current connection.",
        "SETNAME <name>", "    Assign the name <name> to the current connection.",
        "UNBLOCK <clientid> [TIMEOUT|ERROR]",
        "    Unblock the specified blocked client.",
        "TRACKING (ON|OFF) [REDIRECT <id>] [BCAST] [PREFIX <prefix> [...]]",
        "         [OPTIN] [OPTOUT] [NOLOOP]", "    Control server assisted client side caching.",
        "TRACKINGINFO", "    Report tracking status for the current connection.",
        "NO-EVICT (ON|OFF)", "    Protect current client connection from eviction.",
        NULL,
    };
    frs_reply_help(c, "CLIENT", lines);
}

