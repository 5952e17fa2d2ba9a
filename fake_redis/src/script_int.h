/* script_int.h -- the scripting core shared by EVAL (eval.c) and, later, FUNCTION/FCALL:
 * one Lua 5.1 interpreter per server with Redis's sandbox and `redis` table
 * (script_lua.c), the run context of the script being executed, and the libraries
 * Redis bundles that Debian does not package for Lua 5.1 (lua_cmsgpack.c, lua_struct.c).
 *
 * The shape follows Redis 7.0's script.c / script_lua.c split: script_lua.c knows Lua and
 * the conversions; the engine-independent rules of a run (read-only scripts, the busy
 * state, SCRIPT KILL) live in the run context.  Nothing here is exported from the
 * library. */
#ifndef FR_SCRIPT_INT_H
#define FR_SCRIPT_INT_H

#include <stddef.h>
#include <stdint.h>

#include "fr_int.h"

typedef struct lua_State lua_State;

/* Shebang flags of a script (#!lua flags=...), Redis's SCRIPT_FLAG_*. */
#define FRI_SFLAG_NO_WRITES        (1u << 0)
#define FRI_SFLAG_ALLOW_OOM        (1u << 1)
#define FRI_SFLAG_ALLOW_STALE      (1u << 2)
#define FRI_SFLAG_NO_CLUSTER       (1u << 3)
#define FRI_SFLAG_ALLOW_CROSS_SLOT (1u << 4)
#define FRI_SFLAG_EVAL_COMPAT      (1u << 5) /* no shebang: EVAL's historic behaviour */

/* Run flags, Redis's SCRIPT_* run-context flags. */
#define FRI_RUN_EVAL_MODE   (1u << 0) /* EVAL family (else FCALL): names the kill command */
#define FRI_RUN_READ_ONLY   (1u << 1) /* *_RO or no-writes: write commands refused */
#define FRI_RUN_WRITE_DIRTY (1u << 2) /* a write command ran: SCRIPT KILL refuses */
#define FRI_RUN_TIMEDOUT    (1u << 3) /* past busy-reply-threshold: others get -BUSY */
#define FRI_RUN_KILLED      (1u << 4) /* SCRIPT KILL asked for the end */
#define FRI_RUN_CROSS_SLOT  (1u << 5) /* undeclared keys may span slots (cluster) */
#define FRI_RUN_ALLOW_OOM   (1u << 6) /* allow-oom shebang: deny-oom commands run on OOM */
/* scriptPrepareForRun's refusal of a script without allow-oom (or no-writes) on OOM */
#define FRI_ERR_SCRIPT_OOM                                                                 \
    "OOM allow-oom flag is not set on the script, can not run it when used memory > "      \
    "'maxmemory'"

/* The script being executed. */
typedef struct fri_script_run {
    fr_client *caller;      /* the client that sent EVAL/FCALL */
    char funcname[64];      /* the sha (EVAL) or function name (FCALL), for errors */
    unsigned flags;         /* FRI_RUN_* */
    int resp;               /* redis.setresp: the protocol of redis.call replies */
    int slot;               /* cluster: the slot of the keys accessed so far, -1 none */
    uint64_t steps;         /* Lua count-hook ticks since the start (virtual time) */
    int64_t start_mono_ms;  /* wall-clock servers: when the run started (monotonic) */
    int host_reply;         /* the last redis.call was answered by the embedder's host
                               hook, already in the script's protocol */
} fri_script_run;

/* A function of a library (FUNCTION LOAD). */
typedef struct fri_function {
    fri_str *name;           /* as registered */
    fri_str *desc;           /* its description, NULL when none */
    unsigned flags;          /* FRI_SFLAG_* */
    int ref;                 /* the callback in the functions interpreter's registry */
    struct fri_library *lib; /* the library it belongs to */
} fri_function;

/* A library: its name, its code as loaded, its functions. */
typedef struct fri_library {
    fri_str *name;
    fri_str *code;           /* the whole payload, shebang included (FUNCTION LIST WITHCODE) */
    fri_dict *functions;     /* name (case-sensitive) -> fri_function* */
} fri_library;

/* A server's scripting state (fr_server.scripting), made at the first script. */
typedef struct fri_scripting {
    lua_State *lua;          /* EVAL's interpreter, sandboxed (script_lua.c) */
    lua_State *flua;         /* the functions engine's interpreter (FUNCTION, FCALL) */
    fri_dict *libraries;     /* library name -> fri_library*, load order */
    fri_dict *functions;     /* lower-cased function name -> fri_function* */
    fri_library *loading;    /* the library FUNCTION LOAD is running, else NULL */
    uint64_t load_steps;     /* its count-hook ticks (FUNCTION LOAD's time limit) */
    int load_wall;           /* its time is the wall clock's */
    int64_t load_start_ms;   /* when it started (monotonic, wall-clock servers) */
    fr_client *lua_client;   /* the client a script's redis.call commands run on */
    fri_dict *scripts;       /* sha (40 lower-case hex) -> fri_lua_script* */
    fri_script_run *run;     /* the running script, NULL when none */
    uint64_t rand48;         /* math.random's 48-bit state (Redis's redisLrand48) */
    size_t mem_used;         /* bytes the interpreter holds */
    size_t mem_limit;        /* its cap: past it an allocation fails (Lua's "not enough
                                memory") rather than the process */
} fri_scripting;

/* A cached EVAL script. */
typedef struct fri_lua_script {
    fri_str *body;   /* the source as sent */
    unsigned flags;  /* FRI_SFLAG_* from its shebang */
} fri_lua_script;

/* One Lua instruction count-hook tick is FRI_LUA_HOOK_STEPS instructions; on the virtual
 * clock a script's running time is FRI_LUA_STEPS_PER_MS instructions per millisecond
 * (docs/scripting.md, "Time"). */
#define FRI_LUA_HOOK_STEPS 100000
#define FRI_LUA_STEPS_PER_MS 10000

/* SHA-1 of data as 40 lower-case hex digits and a NUL (sha1.c). */
void fri_sha1hex(char out[41], const char *data, size_t len);

/* The server's scripting state, made on first use; NULL when out of memory. */
fri_scripting *fri_scripting_get(fr_server *s);
/* Frees the interpreter and the cache (server teardown); SCRIPT FLUSH uses
 * fri_scripting_reset, which keeps the client. */
void fri_scripting_free(fr_server *s);
/* SCRIPT FLUSH: a fresh interpreter and an empty cache.  0, or -1 when out of memory. */
int fri_scripting_reset(fr_server *s);

/* Compiles body[0..len) as the function registered under `name` (Redis's "f_<sha>")
 * with chunk name "@user_script".  0; or -1 with the Lua message in err (cap bytes). */
int fri_lua_compile(fri_scripting *sc, const char *name, const char *body, size_t len,
                    char *err, size_t cap);

/* Runs the function registered under name as EVAL does: KEYS and ARGV set from
 * keys[0..nkeys) and args[0..nargs), the caller's reply written from its return value or
 * its error ("-ERR ... script: <sha>, on @user_script:N.").  run must be prepared by the
 * caller (fri_script_run_begin). */
void fri_lua_run_eval(fri_scripting *sc, fri_script_run *run, const char *name,
                      const fri_arg *keys, int nkeys, const fri_arg *args, int nargs);

/* scriptPrepareForRun's checks of a script's flags (a shebang script or a function; not
 * for EVAL-compatible scripts): no-cluster on a cluster, a write script through *_RO,
 * min-replicas, OOM before the command.  0 when it may run, else -1 with the error
 * replied to c. */
int fri_script_flags_check(fr_client *c, unsigned flags, int ro);
/* EVAL's and FCALL's numkeys against the arguments after it (argv[3..]).  0, or -1 with
 * the error replied to c. */
int fri_script_numkeys_check(fr_client *c, long long numkeys);
/* The words of a script's or library's "#!..." first line, the len bytes at p, split as
 * fr_split_line splits a line: their count (> 0; free them with fr_split_free), 0 when
 * there are none or the quotes do not balance (nothing to free then), -1 when out of
 * memory. */
int fri_shebang_words(const char *p, size_t len, char ***parts, size_t **plen);

/* Begins and ends a run (Redis's scriptPrepareForRun / scriptResetRun, without the
 * flag checks the commands make first). */
void fri_script_run_begin(fr_server *s, fri_script_run *run, fr_client *caller,
                          const char *funcname, unsigned script_flags, int ro);
void fri_script_run_end(fr_server *s, fri_script_run *run);
/* How long the run has lasted (FUNCTION STATS): virtual or wall milliseconds. */
int64_t fri_script_run_duration_ms(const fr_server *s, const fri_script_run *run);

/* FCALL: runs fn with the keys and arguments as its two table arguments. */
void fri_lua_run_function(fri_scripting *sc, fri_script_run *run, const fri_function *fn,
                          const fri_arg *keys, int nkeys, const fri_arg *args, int nargs);
/* Runs a library's code (after its shebang line) in the functions interpreter so that its
 * redis.register_function calls fill lib.  0; or -1 with Redis's error text in err. */
int fri_lua_function_load(fri_scripting *sc, fr_server *s, fri_library *lib, const char *code,
                          size_t len, fri_buf *err);
/* Releases a function's callback. */
void fri_lua_unref(fri_scripting *sc, int ref);
/* [A-Za-z0-9_]+, the rule for library and function names. */
int fri_function_name_ok(const char *p, size_t len);
/* The flags of the function named name (FCALL's argument): 1, or 0 when there is none. */
int fri_function_flags(fr_server *s, const fri_arg *name, unsigned *flags);
/* Frees every library (functions.c). */
void fri_functions_free(fri_scripting *sc);
/* Every library as an RDB file holds it: RDB_OPCODE_FUNCTION2 and the code, appended to b
 * (FUNCTION DUMP's body, rdb_file.c's functions).  0, or -1 when out of memory. */
int fri_functions_save(fr_server *s, fri_buf *b);
/* FUNCTION RESTORE's body (libraries as fri_functions_save writes them, or 7.0-rc's
 * RDB_OPCODE_FUNCTION form) with policy 0 APPEND, 1 REPLACE, 2 FLUSH: all or nothing.
 * flags: FRI_FN_FROM_FILE, the libraries come from an RDB file (a library already there
 * is worded as rdbFunctionLoad words it); FRI_FN_CHECK_ONLY, everything is checked and
 * nothing joined.  0, or -1 with the error (without "ERR ") appended to err. */
#define FRI_FN_FROM_FILE 1u
#define FRI_FN_CHECK_ONLY 2u
int fri_functions_restore(fr_server *s, const unsigned char *p, size_t len, int policy,
                          unsigned flags, fri_buf *err);

/* The libraries Redis bundles, our own code (lua_cmsgpack.c, lua_struct.c). */
int fri_luaopen_cmsgpack(lua_State *L);
int fri_luaopen_struct(lua_State *L);

#endif
