/* eval.c -- EVAL, EVALSHA, EVAL_RO, EVALSHA_RO and SCRIPT, as Redis 7.0.15's eval.c
 * answers them: the script cache named by SHA-1, shebang flags (#!lua flags=...), the
 * numkeys checks, NOSCRIPT, SCRIPT LOAD / EXISTS / FLUSH / KILL / HELP.  The interpreter
 * and the conversions are script_lua.c's. */
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "fr_int.h"
#include "script_int.h"

#define ERR_NOSCRIPT "NOSCRIPT No matching script. Please use EVAL."
#define ERR_BUSY_EVAL "BUSY Redis is busy running a script. You can only call SCRIPT KILL or SHUTDOWN NOSAVE."
#define ERR_BUSY_FUNCTION "BUSY Redis is busy running a script. You can only call FUNCTION KILL or SHUTDOWN NOSAVE."

static const struct {
    unsigned flag;
    const char *name;
} shebang_flags[] = {
    {FRI_SFLAG_NO_WRITES, "no-writes"},
    {FRI_SFLAG_ALLOW_OOM, "allow-oom"},
    {FRI_SFLAG_ALLOW_STALE, "allow-stale"},
    {FRI_SFLAG_NO_CLUSTER, "no-cluster"},
    {FRI_SFLAG_ALLOW_CROSS_SLOT, "allow-cross-slot-keys"},
};

int fri_shebang_words(const char *p, size_t len, char ***parts, size_t **plen)
{
    char *line = fri_malloc(len + 1);
    if (!line) return -1;
    memcpy(line, p, len);
    line[len] = '\0';
    int n = fr_split_line(line, parts, plen);
    fri_free(line);
    if (n == 0) fr_split_free(n, *parts, *plen);
    return n < 0 ? 0 : n;
}

/* Redis's evalExtractShebangFlags: the flags of a "#!lua flags=a,b" first line and its
 * length (the line feed stays, so line numbers hold).  0; or -1 with Redis's error text
 * (with its ERR) in err. */
static int shebang_flags_parse(const char *body, size_t len, unsigned *flags,
                               size_t *shebang_len, fri_buf *err)
{
    *flags = FRI_SFLAG_EVAL_COMPAT;
    *shebang_len = 0;
    if (len < 2 || body[0] != '#' || body[1] != '!') return 0;
    const char *end = memchr(body, '\n', strnlen(body, len));
    if (!end) {
        fri_buf_printf(err, "%s", "ERR Invalid script shebang");
        return -1;
    }
    *shebang_len = (size_t)(end - body);
    char **parts;
    size_t *plen;
    int n = fri_shebang_words(body, *shebang_len, &parts, &plen);
    if (n <= 0) {
        fri_buf_printf(err, "%s", n < 0 ? FRI_ERR_OOM : "ERR Invalid engine in script shebang");
        return -1;
    }
    int rc = 0;
    if (strcmp(parts[0], "#!lua") != 0) {
        fri_buf_printf(err, "ERR Unexpected engine in script shebang: %s", parts[0]);
        rc = -1;
    }
    *flags &= ~FRI_SFLAG_EVAL_COMPAT;
    for (int j = 1; j < n && rc == 0; j++) {
        if (strncmp(parts[j], "flags=", 6) != 0) {
            fri_buf_printf(err, "ERR Unknown lua shebang option: %s", parts[j]);
            rc = -1;
            break;
        }
        const char *p = parts[j] + 6, *stop = parts[j] + plen[j];
        while (p < stop) { /* comma-separated, empty names included (sdssplitlen) */
            const char *comma = memchr(p, ',', (size_t)(stop - p));
            size_t flen = comma ? (size_t)(comma - p) : (size_t)(stop - p);
            size_t k;
            for (k = 0; k < sizeof(shebang_flags) / sizeof(shebang_flags[0]); k++)
                if (strlen(shebang_flags[k].name) == flen &&
                    memcmp(shebang_flags[k].name, p, flen) == 0)
                    break;
            if (k == sizeof(shebang_flags) / sizeof(shebang_flags[0])) {
                fri_buf_printf(err, "ERR Unexpected flag in script shebang: %.*s", (int)flen, p);
                rc = -1;
                break;
            }
            *flags |= shebang_flags[k].flag;
            if (!comma) break;
            p = comma + 1;
            if (p == stop) { /* a trailing comma: one more, empty, name */
                fri_buf_printf(err, "%s", "ERR Unexpected flag in script shebang: ");
                rc = -1;
            }
        }
    }
    fr_split_free(n, parts, plen);
    return rc;
}

static int shebang_flags_or_reply(fr_client *c, const char *body, size_t len, unsigned *flags,
                                  size_t *shebang_len)
{
    fri_buf err = {0};
    int rc = shebang_flags_parse(body, len, flags, shebang_len, &err);
    if (rc < 0) fri_reply_errorf(c, "%.*s", (int)err.len, err.p ? err.p : "ERR");
    fri_buf_free(&err);
    return rc;
}

/* Redis's luaCreateFunction: the script's sha, the body compiled and cached when new.
 * The cached script, or NULL with the error answered. */
static fri_lua_script *create_script(fr_client *c, fri_scripting *sc, const char *body,
                                     size_t len, char sha[41])
{
    fri_sha1hex(sha, body, len);
    fri_dent *e = fri_dict_find(sc->scripts, sha, 40);
    if (e) return e->v.ptr;
    unsigned flags;
    size_t shebang_len;
    if (shebang_flags_or_reply(c, body, len, &flags, &shebang_len) < 0) return NULL;
    char name[43] = "f_";
    memcpy(name + 2, sha, 41);
    char err[1024];
    if (fri_lua_compile(sc, name, body + shebang_len, len - shebang_len, err, sizeof(err)) < 0) {
        fri_reply_errorf(c, "ERR Error compiling script (new function): %s", err);
        return NULL;
    }
    fri_lua_script *ls = fri_calloc(1, sizeof(*ls));
    fri_str *b = fri_str_new(body, len);
    int created;
    e = ls && b ? fri_dict_add(sc->scripts, sha, 40, &created) : NULL;
    if (!e) {
        fri_free(ls);
        fri_str_free(b);
        fri_reply_error(c, FRI_ERR_OOM);
        return NULL;
    }
    ls->body = b;
    ls->flags = flags;
    e->v.ptr = ls;
    return ls;
}

static void eval_generic(fr_client *c, int evalsha, int ro)
{
    fr_server *s = c->srv;
    if (evalsha && c->argv[1].len != 40) {
        fri_reply_error(c, ERR_NOSCRIPT);
        return;
    }
    long long numkeys;
    if (fri_get_ll_or_reply(c, &c->argv[2], &numkeys, NULL) < 0) return;
    if (fri_script_numkeys_check(c, numkeys) < 0) return;
    fri_scripting *sc = fri_scripting_get(s);
    if (!sc) {
        fri_reply_error(c, FRI_ERR_OOM);
        return;
    }
    char sha[41];
    fri_lua_script *ls;
    if (evalsha) {
        for (int i = 0; i < 40; i++) {
            char ch = c->argv[1].ptr[i];
            sha[i] = (ch >= 'A' && ch <= 'Z') ? (char)(ch + 32) : ch;
        }
        sha[40] = '\0';
        fri_dent *e = fri_dict_find(sc->scripts, sha, 40);
        if (!e) {
            fri_reply_error(c, ERR_NOSCRIPT);
            return;
        }
        ls = e->v.ptr;
    } else {
        ls = create_script(c, sc, c->argv[1].ptr, c->argv[1].len, sha);
        if (!ls) return;
    }
    if (!(ls->flags & FRI_SFLAG_EVAL_COMPAT) && fri_script_flags_check(c, ls->flags, ro) < 0)
        return;
    char name[43] = "f_";
    memcpy(name + 2, sha, 41);
    fri_script_run run;
    fri_script_run_begin(s, &run, c, sha, ls->flags, ro);
    const fri_arg *keys = c->argv + 3;
    /* the declared keys' slot (the cluster check made sure they share one) */
    if (s->cluster_enabled && numkeys > 0) run.slot = (int)fri_key_slot(keys[0].ptr, keys[0].len);
    fri_lua_run_eval(sc, &run, name, keys, (int)numkeys, keys + numkeys,
                     c->argc - 3 - (int)numkeys);
    fri_script_run_end(s, &run);
}

static void eval_command(fr_client *c) { eval_generic(c, 0, 0); }
static void evalsha_command(fr_client *c) { eval_generic(c, 1, 0); }
static void eval_ro_command(fr_client *c) { eval_generic(c, 0, 1); }
static void evalsha_ro_command(fr_client *c) { eval_generic(c, 1, 1); }

/* ----- SCRIPT ---------------------------------------------------------------------------- */

static void script_help_command(fr_client *c)
{
    static const char *const help[] = {
        "DEBUG (YES|SYNC|NO)",
        "    Set the debug mode for subsequent scripts executed.",
        "EXISTS <sha1> [<sha1> ...]",
        "    Return information about the existence of the scripts in the script cache.",
        "FLUSH [ASYNC|SYNC]",
        "    Flush the Lua scripts cache. Very dangerous on replicas.",
        "    When called without the optional mode argument, the behavior is determined by the",
        "    lazyfree-lazy-user-flush configuration directive. Valid modes are:",
        "    * ASYNC: Asynchronously flush the scripts cache.",
        "    * SYNC: Synchronously flush the scripts cache.",
        "KILL",
        "    Kill the currently executing Lua script.",
        "LOAD <script>",
        "    Load a script into the scripts cache without executing it.",
        NULL,
    };
    fri_reply_help(c, help);
}

static void script_flush_command(fr_client *c)
{
    if (c->argc == 3 && !fri_arg_is_cstr(&c->argv[2], "sync") &&
        !fri_arg_is_cstr(&c->argv[2], "async")) {
        fri_reply_error(c, "ERR SCRIPT FLUSH only support SYNC|ASYNC option");
        return;
    }
    if (c->argc > 3) {
        fri_reply_error(c, "ERR SCRIPT FLUSH only support SYNC|ASYNC option");
        return;
    }
    if (fri_scripting_reset(c->srv) < 0) {
        fri_reply_error(c, FRI_ERR_OOM);
        return;
    }
    fri_reply_ok(c);
}

static void script_exists_command(fr_client *c)
{
    fri_scripting *sc = c->srv->scripting;
    fri_reply_array_len(c, c->argc - 2);
    for (int j = 2; j < c->argc; j++) {
        /* Redis's script dictionary compares its keys case-insensitively */
        char sha[40];
        int found = 0;
        if (sc && c->argv[j].len == 40) {
            for (int i = 0; i < 40; i++) {
                char ch = c->argv[j].ptr[i];
                sha[i] = (ch >= 'A' && ch <= 'Z') ? (char)(ch + 32) : ch;
            }
            found = fri_dict_find(sc->scripts, sha, 40) != NULL;
        }
        fri_reply_ll(c, found);
    }
}

static void script_load_command(fr_client *c)
{
    fri_scripting *sc = fri_scripting_get(c->srv);
    if (!sc) {
        fri_reply_error(c, FRI_ERR_OOM);
        return;
    }
    char sha[41];
    if (!create_script(c, sc, c->argv[2].ptr, c->argv[2].len, sha)) return;
    fri_reply_bulk(c, sha, 40);
}

/* Redis's scriptKill for SCRIPT KILL (is_eval) and FUNCTION KILL. */
void fri_script_kill(fr_client *c, int is_eval)
{
    fri_scripting *sc = c->srv->scripting;
    fri_script_run *run = sc ? sc->run : NULL;
    if (!run) {
        fri_reply_error(c, "NOTBUSY No scripts in execution right now.");
        return;
    }
    if (run->flags & FRI_RUN_WRITE_DIRTY) {
        fri_reply_error(c, "UNKILLABLE Sorry the script already executed write commands "
                           "against the dataset. You can either wait the script termination "
                           "or kill the server in a hard way using the SHUTDOWN NOSAVE command.");
        return;
    }
    if (is_eval && !(run->flags & FRI_RUN_EVAL_MODE)) {
        fri_reply_error(c, ERR_BUSY_FUNCTION);
        return;
    }
    if (!is_eval && (run->flags & FRI_RUN_EVAL_MODE)) {
        fri_reply_error(c, ERR_BUSY_EVAL);
        return;
    }
    run->flags |= FRI_RUN_KILLED;
    fri_reply_ok(c);
}

static void script_kill_command(fr_client *c) { fri_script_kill(c, 1); }

static void script_debug_command(fr_client *c)
{
    if (fri_arg_is_cstr(&c->argv[2], "no")) {
        fri_reply_ok(c);
    } else if (fri_arg_is_cstr(&c->argv[2], "yes") || fri_arg_is_cstr(&c->argv[2], "sync")) {
        fri_reply_error(c, "ERR SCRIPT DEBUG is not emulated by the fake (the Lua debugger "
                           "needs redis-cli --ldb)");
    } else {
        fri_reply_error(c, "ERR Use SCRIPT DEBUG YES/SYNC/NO");
    }
}

size_t fr_server_script_count(const fr_server *s)
{
    return s->scripting ? fri_dict_size(s->scripting->scripts) : 0;
}

int fri_noreplicas(const fr_server *s)
{
    return s->tun.min_replicas_to_write > 0 && s->tun.min_replicas_max_lag > 0;
}

/* The flags of the script c's EVAL*, EVALSHA* or FCALL* would run, as Redis's
 * evalGetCommandFlags and fcallGetCommandFlags find them: 1 with *flags set, 0 for another
 * command, or a script or function not known (the command's own flags apply). */
static int script_flags_of(fr_client *c, const fri_command *cmd, unsigned *flags)
{
    if (strcmp(cmd->name, "eval") == 0 || strcmp(cmd->name, "eval_ro") == 0) {
        /* a script seen before has its flags cached; a new one is read for its shebang */
        char sha[41];
        fri_sha1hex(sha, c->argv[1].ptr, c->argv[1].len);
        fri_scripting *sc = c->srv->scripting;
        fri_dent *e = sc ? fri_dict_find(sc->scripts, sha, 40) : NULL;
        if (e) {
            *flags = ((fri_lua_script *)e->v.ptr)->flags;
        } else {
            size_t shebang_len;
            fri_buf scratch = {0};
            if (shebang_flags_parse(c->argv[1].ptr, c->argv[1].len, flags, &shebang_len,
                                    &scratch) < 0)
                *flags = FRI_SFLAG_EVAL_COMPAT;
            fri_buf_free(&scratch);
        }
        return 1;
    }
    if (strcmp(cmd->name, "evalsha") == 0 || strcmp(cmd->name, "evalsha_ro") == 0) {
        fri_scripting *sc = c->srv->scripting;
        if (c->argv[1].len != 40 || !sc) return 0;
        char sha[41];
        for (int i = 0; i < 40; i++) {
            char ch = c->argv[1].ptr[i];
            sha[i] = (ch >= 'A' && ch <= 'Z') ? (char)(ch + 32) : ch;
        }
        fri_dent *e = fri_dict_find(sc->scripts, sha, 40);
        if (!e) return 0;
        *flags = ((fri_lua_script *)e->v.ptr)->flags;
        return 1;
    }
    if (strcmp(cmd->name, "fcall") == 0 || strcmp(cmd->name, "fcall_ro") == 0)
        return fri_function_flags(c->srv, &c->argv[1], flags) != 0;
    return 0;
}

int fri_cmd_is_write(fr_client *c, const fri_command *cmd)
{
    if (cmd->flags & FRI_CMD_WRITE) return 1;
    if (strcmp(cmd->name, "exec") == 0) {
        /* judged when each was queued, with its own arguments (mstate.cmd_flags) */
        for (size_t i = 0; i < c->queue_len; i++)
            if (c->queue[i].write) return 1;
        return 0;
    }
    unsigned flags;
    if (!script_flags_of(c, cmd, &flags)) return 0;
    return !(flags & FRI_SFLAG_EVAL_COMPAT) && !(flags & FRI_SFLAG_NO_WRITES);
}

int fri_cmd_may_replicate(fr_client *c, const fri_command *cmd)
{
    /* the commands whose row has CMD_MAY_REPLICATE in 7.0.15's commands.c */
    static const char *const may_replicate[] = {"pfcount", "publish", "spublish", "eval",
                                                "evalsha", "fcall"};
    unsigned flags;
    /* declared flags replace the row's (scriptFlagsToCmdFlags clears MAY_REPLICATE and
     * sets WRITE unless no-writes) */
    if (script_flags_of(c, cmd, &flags) && !(flags & FRI_SFLAG_EVAL_COMPAT))
        return !(flags & FRI_SFLAG_NO_WRITES);
    if (cmd->flags & FRI_CMD_WRITE) return 1;
    if (strcmp(cmd->name, "exec") == 0) {
        for (size_t i = 0; i < c->queue_len; i++)
            if (c->queue[i].may_replicate) return 1;
        return 0;
    }
    for (size_t i = 0; i < sizeof(may_replicate) / sizeof(may_replicate[0]); i++)
        if (strcmp(cmd->name, may_replicate[i]) == 0) return 1;
    return 0;
}

int fri_cmd_is_denyoom(fr_client *c, const fri_command *cmd)
{
    unsigned flags;
    if (!script_flags_of(c, cmd, &flags) || (flags & FRI_SFLAG_EVAL_COMPAT))
        return (cmd->flags & FRI_CMD_DENYOOM) != 0;
    return !(flags & (FRI_SFLAG_ALLOW_OOM | FRI_SFLAG_NO_WRITES));
}

int fri_script_running_for(const fr_client *c)
{
    const fri_scripting *sc = c->srv->scripting;
    return sc && sc->run && sc->run->caller == c;
}

void fr_server_script_abort(fr_server *s)
{
    if (s->scripting && s->scripting->run) s->scripting->run->flags |= FRI_RUN_KILLED;
}

int fr_server_script_busy(const fr_server *s)
{
    return s->scripting && s->scripting->run && (s->scripting->run->flags & FRI_RUN_TIMEDOUT);
}

void fr_server_set_resp3_hook(fr_server *s, fr_resp3_hook *hook, void *ctx)
{
    s->resp3_hook = hook;
    s->resp3_hook_ctx = ctx;
}

void fr_server_set_script_host_hook(fr_server *s, fr_script_host_hook *hook, void *ctx)
{
    s->script_host_hook = hook;
    s->script_host_hook_ctx = ctx;
}

void fr_server_set_oom_hook(fr_server *s, fr_oom_hook *hook, void *ctx)
{
    s->oom_hook = hook;
    s->oom_hook_ctx = ctx;
    s->pre_command_oom = 0;
}

void fr_server_set_busy_hook(fr_server *s, fr_busy_hook *hook, void *ctx)
{
    s->busy_hook = hook;
    s->busy_hook_ctx = ctx;
}

const char *fri_script_busy_error(const fr_server *s)
{
    return (s->scripting->run->flags & FRI_RUN_EVAL_MODE) ? ERR_BUSY_EVAL : ERR_BUSY_FUNCTION;
}

/* EVAL's keys: numkeys at argv[2], then that many. */
static int eval_getkeys(int argc, const fri_arg *argv, int *keys, int max)
{
    return fri_numkeys_keys(argc, argv, 2, 0, keys, max);
}

#define SCRIPTING_FLAGS (FRI_CMD_NOSCRIPT | FRI_CMD_STALE)

static const fri_command script_subcommands[] = {
    {"script|debug", script_debug_command, 3, FRI_CMD_NOSCRIPT, "scripting", 0, 0, 0, NULL,
     NULL},
    {"script|exists", script_exists_command, -3, FRI_CMD_NOSCRIPT, "scripting", 0, 0, 0, NULL,
     NULL},
    {"script|flush", script_flush_command, -2, FRI_CMD_NOSCRIPT, "scripting", 0, 0, 0, NULL,
     NULL},
    {"script|help", script_help_command, 2, FRI_CMD_LOADING | FRI_CMD_STALE, "scripting", 0, 0,
     0, NULL, NULL},
    {"script|kill", script_kill_command, 2, FRI_CMD_NOSCRIPT | FRI_CMD_ALLOW_BUSY, "scripting",
     0, 0, 0, NULL, NULL},
    {"script|load", script_load_command, 3, FRI_CMD_NOSCRIPT | FRI_CMD_STALE, "scripting", 0, 0,
     0, NULL, NULL},
    {0},
};

const fri_command fri_eval_commands[] = {
    {"eval", eval_command, -3, SCRIPTING_FLAGS, "scripting", 0, 0, 0, eval_getkeys, NULL},
    {"evalsha", evalsha_command, -3, SCRIPTING_FLAGS, "scripting", 0, 0, 0, eval_getkeys, NULL},
    {"eval_ro", eval_ro_command, -3, SCRIPTING_FLAGS | FRI_CMD_READONLY, "scripting", 0, 0, 0,
     eval_getkeys, NULL},
    {"evalsha_ro", evalsha_ro_command, -3, SCRIPTING_FLAGS | FRI_CMD_READONLY, "scripting", 0,
     0, 0, eval_getkeys, NULL},
    {"script", NULL, -2, FRI_CMD_CONTAINER, "scripting", 0, 0, 0, NULL, script_subcommands},
    {0},
};
