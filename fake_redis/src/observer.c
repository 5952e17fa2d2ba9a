/* observer.c -- the hooks a server in front of the fake watches commands and keys through
 * (fr_server_set_call_hook, fr_server_set_key_hook): what fakeredis-server needs for
 * MONITOR, SLOWLOG, LATENCY and client-side caching, which live in the server because they
 * write to other connections.
 *
 * Redis's call() feeds MONITOR, the slow log and the latency monitor after a command ran
 * and remembers a tracking client's keys for a readonly command; EVAL, EVALSHA and FCALL
 * feed MONITOR themselves before their scripts run (eval.c, functions.c), so that the
 * script's commands follow them.  signalModifiedKey and signalFlushedDb tell tracking. */
#include <stdlib.h>
#include <string.h>

#include "fr_int.h"
#include "script_int.h"

void fr_server_set_call_hook(fr_server *s, fr_call_hook *hook, void *ctx)
{
    s->call_hook = hook;
    s->call_hook_ctx = ctx;
}

void fr_server_set_key_hook(fr_server *s, fr_key_hook *hook, void *ctx)
{
    s->key_hook = hook;
    s->key_hook_ctx = ctx;
}

/* Whether cmd runs a script and feeds MONITOR itself before it (Redis's SKIP_MONITOR rows). */
static int feeds_before(const fri_command *cmd)
{
    return strncmp(cmd->name, "eval", 4) == 0 || strncmp(cmd->name, "fcall", 5) == 0;
}

void fri_call_report(fr_client *c, const fri_command *cmd, int before, uint64_t usec,
                     size_t out_mark)
{
    fr_server *s = c->srv;
    if (!s->call_hook) return;
    int script_cmd = feeds_before(cmd);
    if (before && !script_cmd) return;
    fr_call_event ev = {0};
    ev.client = c;
    if (s->scripting && c == s->scripting->lua_client && s->scripting->run) {
        ev.from_script = 1;
        ev.client = s->scripting->run->caller;
    }
    ev.before = before;
    ev.db = c->db->id;
    ev.name = cmd->name;
    ev.usec = usec;
    if (!before && c->out.len > out_mark) { /* what it appended to its client's reply */
        ev.reply = c->out.p + out_mark;
        ev.reply_len = c->out.len - out_mark;
    }
    if (cmd->flags & FRI_CMD_READONLY) ev.flags |= FR_CALL_READONLY;
    if (cmd->flags & FRI_CMD_ADMIN) ev.flags |= FR_CALL_ADMIN;
    if (cmd->flags & FRI_CMD_FAST) ev.flags |= FR_CALL_FAST;
    if (cmd->flags & FRI_CMD_PUBSUB) ev.flags |= FR_CALL_PUBSUB;
    if (c->bpop) ev.flags |= FR_CALL_BLOCKED;
    /* the arguments as the hook's plain arrays (small commands need no allocation) */
    const char *argv_small[16];
    size_t len_small[16];
    const char **argv = argv_small;
    size_t *lens = len_small;
    if (c->argc > 16) {
        argv = fri_malloc(sizeof(*argv) * (size_t)c->argc);
        lens = fri_malloc(sizeof(*lens) * (size_t)c->argc);
        if (!argv || !lens) {
            fri_free(argv);
            fri_free(lens);
            return; /* an observer misses a command rather than the command failing */
        }
    }
    for (int i = 0; i < c->argc; i++) {
        argv[i] = c->argv[i].ptr;
        lens[i] = c->argv[i].len;
    }
    ev.argc = c->argc;
    ev.argv = argv;
    ev.argvlen = lens;
    s->call_hook(s->call_hook_ctx, &ev);
    if (argv != argv_small) {
        fri_free(argv);
        fri_free(lens);
    }
}

void fri_key_report_modified(fr_server *s, fr_client *c, int db, const char *key, size_t len)
{
    if (s->key_hook) s->key_hook(s->key_hook_ctx, c, db, key, len);
}

void fri_key_report_flushed(fr_server *s, fr_client *c, int db)
{
    if (s->key_hook) s->key_hook(s->key_hook_ctx, c, db, NULL, 0);
}

int fr_key_exists(fr_server *s, int db, const char *key, size_t len)
{
    if (db < 0 || db >= FRI_DBNUM) return 0;
    fri_dent *e = fri_dict_find(s->db[db].keys, key, len);
    return e && !fri_obj_is_expired(e->v.ptr, fr_clock_now(s));
}
