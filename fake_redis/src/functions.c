/* functions.c -- Redis 7.0's functions: FUNCTION LOAD [REPLACE] / LIST / DELETE / FLUSH /
 * STATS / KILL / HELP, FCALL and FCALL_RO, as functions.c answers them.  Libraries run in
 * their own interpreter (script_lua.c's functions engine); a library's code may only call
 * redis.register_function (and redis.log) while it loads.  FUNCTION DUMP writes Redis's
 * RDB fragment (the code LZF-compressed as rdb.c compresses DUMP's strings); FUNCTION
 * RESTORE reads it. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "fr_int.h"
#include "rdb_int.h"
#include "script_int.h"

#define ERR_BAD_NAME "ERR Library names can only contain letters, numbers, or underscores(_) and must be at least one character long"

static void free_function_val(fri_val *v)
{
    fri_function *fn = v->ptr;
    if (!fn) return;
    fri_str_free(fn->name);
    fri_str_free(fn->desc);
    fri_free(fn);
}

/* Frees a library; its callbacks are released when sc is given (not at teardown). */
static void library_free(fri_scripting *sc, fri_library *lib)
{
    if (!lib) return;
    if (sc) {
        for (size_t i = 0; i < fri_dict_slots(lib->functions); i++) {
            fri_dent *e = fri_dict_slot(lib->functions, i);
            if (e) fri_lua_unref(sc, ((fri_function *)e->v.ptr)->ref);
        }
    }
    fri_dict_free(lib->functions, free_function_val);
    fri_str_free(lib->name);
    fri_str_free(lib->code);
    fri_free(lib);
}

/* The library in slot i of a name -> library table, NULL for an empty slot (or one whose
 * library was taken). */
static fri_library *library_at(fri_dict *libraries, size_t i)
{
    fri_dent *e = fri_dict_slot(libraries, i);
    return e ? e->v.ptr : NULL;
}

static void lower40(char *dst, const char *p, size_t len)
{
    for (size_t i = 0; i < len; i++) dst[i] = (p[i] >= 'A' && p[i] <= 'Z') ? (char)(p[i] + 32) : p[i];
}

/* A set of libraries and the index of their functions: the server's, or the one FUNCTION
 * RESTORE builds before joining it. */
typedef struct libctx {
    fri_dict *libraries; /* name -> fri_library* */
    fri_dict *functions; /* lower-cased name -> fri_function* */
} libctx;

/* The function named p (case-insensitive) in ctx, or NULL. */
static fri_function *find_in(const libctx *ctx, const char *p, size_t len)
{
    if (!ctx->functions) return NULL;
    char small[128] = {0};
    char *low = len <= sizeof(small) ? small : fri_malloc(len);
    if (!low) return NULL;
    lower40(low, p, len);
    fri_dent *e = fri_dict_find(ctx->functions, low, len);
    if (low != small) fri_free(low);
    return e ? e->v.ptr : NULL;
}

static libctx server_ctx(fri_scripting *sc)
{
    libctx ctx = {sc ? sc->libraries : NULL, sc ? sc->functions : NULL};
    return ctx;
}

static fri_function *find_function(fri_scripting *sc, const char *p, size_t len)
{
    libctx ctx = server_ctx(sc);
    return find_in(&ctx, p, len);
}

/* Adds (add != 0) or removes the library's functions in ctx's index. */
static int index_library(const libctx *ctx, fri_library *lib, int add)
{
    for (size_t i = 0; i < fri_dict_slots(lib->functions); i++) {
        fri_dent *e = fri_dict_slot(lib->functions, i);
        if (!e) continue;
        fri_function *fn = e->v.ptr;
        char *low = fri_malloc(fn->name->len ? fn->name->len : 1);
        if (!low) return -1;
        lower40(low, fn->name->buf, fn->name->len);
        if (add) {
            int created;
            fri_dent *d = fri_dict_add(ctx->functions, low, fn->name->len, &created);
            if (d) d->v.ptr = fn;
        } else {
            fri_dict_delete(ctx->functions, low, fn->name->len, NULL);
        }
        fri_free(low);
    }
    return 0;
}

void fri_functions_free(fri_scripting *sc)
{
    if (sc->libraries) {
        for (size_t i = 0; i < fri_dict_slots(sc->libraries); i++) {
            fri_dent *e = fri_dict_slot(sc->libraries, i);
            if (e) library_free(NULL, e->v.ptr);
        }
        fri_dict_free(sc->libraries, NULL);
        sc->libraries = NULL;
    }
    if (sc->functions) {
        fri_dict_free(sc->functions, NULL);
        sc->functions = NULL;
    }
}

/* The state with its function tables, made on first use; NULL (OOM answered) if not. */
static fri_scripting *functions_get(fr_client *c)
{
    fri_scripting *sc = fri_scripting_get(c->srv);
    if (sc && !sc->libraries) sc->libraries = fri_dict_new();
    if (sc && !sc->functions) sc->functions = fri_dict_new();
    if (!sc || !sc->libraries || !sc->functions) {
        fri_reply_error(c, FRI_ERR_OOM);
        return NULL;
    }
    return sc;
}

/* ----- FUNCTION LOAD ---------------------------------------------------------------------- */

/* Redis's functionsCreateWithLibraryCtx: loads the library whose payload is p[0..len)
 * into ctx (replacing one of its name when replace).  The library, or NULL with the error
 * text (without its "ERR ") in err. */
static fri_library *create_library(fri_scripting *sc, fr_server *s, const libctx *ctx,
                                   const char *p, size_t len, int replace, fri_buf *err)
{
    size_t clen = strnlen(p, len);
    if (clen < 2 || p[0] != '#' || p[1] != '!') {
        fri_buf_printf(err, "Missing library metadata");
        return NULL;
    }
    const char *nl = memchr(p, '\n', clen);
    if (!nl) {
        fri_buf_printf(err, "Invalid library metadata");
        return NULL;
    }
    size_t shebang_len = (size_t)(nl - p);
    char **parts;
    size_t *plen;
    int n = fri_shebang_words(p, shebang_len, &parts, &plen);
    if (n <= 0) {
        fri_buf_printf(err, n < 0 ? "not enough memory" : "Invalid library metadata");
        return NULL;
    }
    const char *name = NULL;
    size_t name_len = 0;
    const char *bad = NULL;
    for (int i = 1; i < n && !bad; i++) {
        if (strncasecmp(parts[i], "name=", 5) == 0) {
            if (name) {
                fri_buf_printf(err, "Invalid metadata value, name argument was given multiple "
                                    "times");
                bad = "";
                break;
            }
            name = parts[i] + 5;
            name_len = plen[i] - 5;
            continue;
        }
        fri_buf_printf(err, "Invalid metadata value given: %s", parts[i]);
        bad = "";
    }
    if (!bad && !name) {
        fri_buf_printf(err, "Library name was not given");
        bad = "";
    }
    if (!bad && !fri_function_name_ok(name, name_len)) {
        fri_buf_printf(err, "%s", ERR_BAD_NAME + 4);
        bad = "";
    }
    if (!bad && strcasecmp(parts[0] + 2, "lua") != 0) {
        fri_buf_printf(err, "Engine '%s' not found", parts[0] + 2);
        bad = "";
    }
    fri_dent *old_e = bad ? NULL : fri_dict_find(ctx->libraries, name, name_len);
    fri_library *old = old_e ? old_e->v.ptr : NULL;
    if (!bad && old && !replace) {
        fri_buf_printf(err, "Library '%.*s' already exists", (int)name_len, name);
        bad = "";
    }
    fri_library *lib = bad ? NULL : fri_calloc(1, sizeof(*lib));
    if (lib) {
        lib->name = fri_str_new(name, name_len);
        lib->code = fri_str_new(p, len);
        lib->functions = fri_dict_new();
    }
    fr_split_free(n, parts, plen);
    if (bad) return NULL;
    if (!lib || !lib->name || !lib->code || !lib->functions) {
        library_free(NULL, lib);
        fri_buf_printf(err, "not enough memory");
        return NULL;
    }
    if (old) index_library(ctx, old, 0); /* its functions may be registered again */
    int rc = fri_lua_function_load(sc, s, lib, nl, len - shebang_len, err);
    if (rc == 0 && fri_dict_size(lib->functions) == 0) {
        fri_buf_printf(err, "No functions registered");
        rc = -1;
    }
    for (size_t i = 0; rc == 0 && i < fri_dict_slots(lib->functions); i++) {
        fri_dent *e = fri_dict_slot(lib->functions, i);
        if (!e) continue;
        fri_function *fn = e->v.ptr;
        if (find_in(ctx, fn->name->buf, fn->name->len)) {
            fri_buf_printf(err, "Function %s already exists", fn->name->buf);
            rc = -1;
        }
    }
    if (rc < 0) {
        if (old) index_library(ctx, old, 1);
        library_free(sc, lib);
        return NULL;
    }
    if (old) {
        fri_dict_delete(ctx->libraries, old->name->buf, old->name->len, NULL);
        library_free(sc, old);
    }
    int created;
    fri_dent *e = fri_dict_add(ctx->libraries, lib->name->buf, lib->name->len, &created);
    if (!e || index_library(ctx, lib, 1) < 0) {
        if (e) fri_dict_delete(ctx->libraries, lib->name->buf, lib->name->len, NULL);
        library_free(sc, lib);
        fri_buf_printf(err, "not enough memory");
        return NULL;
    }
    e->v.ptr = lib;
    return lib;
}

static void load_library(fr_client *c, fri_scripting *sc, const fri_arg *code, int replace)
{
    fri_buf err = {0};
    libctx ctx = server_ctx(sc);
    fri_library *lib = create_library(sc, c->srv, &ctx, code->ptr, code->len, replace, &err);
    if (lib) c->srv->dirty++; /* functionLoadCommand: server.dirty++ */
    if (lib) fri_reply_bulk(c, lib->name->buf, lib->name->len);
    else fri_reply_errorf(c, "ERR %.*s", (int)err.len, err.p ? err.p : "");
    fri_buf_free(&err);
}

static void function_load_command(fr_client *c)
{
    int replace = 0, pos = 2;
    while (pos < c->argc - 1) {
        const fri_arg *a = &c->argv[pos++];
        if (fri_arg_is_cstr(a, "replace")) {
            replace = 1;
            continue;
        }
        fri_reply_errorf(c, "ERR Unknown option given: %.*s", (int)strnlen(a->ptr, a->len), a->ptr);
        return;
    }
    if (pos >= c->argc) {
        fri_reply_error(c, "ERR Function code is missing");
        return;
    }
    fri_scripting *sc = functions_get(c);
    if (sc) load_library(c, sc, &c->argv[pos], replace);
}

/* ----- FUNCTION LIST / DELETE / FLUSH / STATS / KILL / HELP ---------------------------------- */

static const struct {
    unsigned flag;
    const char *name;
} flag_names[] = {
    {FRI_SFLAG_NO_WRITES, "no-writes"},     {FRI_SFLAG_ALLOW_OOM, "allow-oom"},
    {FRI_SFLAG_ALLOW_STALE, "allow-stale"}, {FRI_SFLAG_NO_CLUSTER, "no-cluster"},
    {FRI_SFLAG_ALLOW_CROSS_SLOT, "allow-cross-slot-keys"},
};

static void reply_library(fr_client *c, const fri_library *lib, int with_code)
{
    fri_reply_map_len(c, with_code ? 4 : 3);
    fri_reply_bulk_cstr(c, "library_name");
    fri_reply_bulk(c, lib->name->buf, lib->name->len);
    fri_reply_bulk_cstr(c, "engine");
    fri_reply_bulk_cstr(c, "LUA");
    fri_reply_bulk_cstr(c, "functions");
    fri_reply_array_len(c, (long)fri_dict_size(lib->functions));
    for (size_t i = 0; i < fri_dict_slots(lib->functions); i++) {
        fri_dent *e = fri_dict_slot(lib->functions, i);
        if (!e) continue;
        fri_function *fn = e->v.ptr;
        fri_reply_map_len(c, 3);
        fri_reply_bulk_cstr(c, "name");
        fri_reply_bulk(c, fn->name->buf, fn->name->len);
        fri_reply_bulk_cstr(c, "description");
        if (fn->desc) fri_reply_bulk(c, fn->desc->buf, fn->desc->len);
        else fri_reply_nil(c);
        fri_reply_bulk_cstr(c, "flags");
        long n = 0;
        for (size_t k = 0; k < sizeof(flag_names) / sizeof(flag_names[0]); k++)
            n += (fn->flags & flag_names[k].flag) != 0;
        fri_reply_set_len(c, n);
        for (size_t k = 0; k < sizeof(flag_names) / sizeof(flag_names[0]); k++)
            if (fn->flags & flag_names[k].flag) fri_reply_status(c, flag_names[k].name);
    }
    if (with_code) {
        fri_reply_bulk_cstr(c, "library_code");
        fri_reply_bulk(c, lib->code->buf, lib->code->len);
    }
}

static void function_list_command(fr_client *c)
{
    int with_code = 0;
    const fri_arg *pattern = NULL;
    for (int i = 2; i < c->argc; i++) {
        const fri_arg *a = &c->argv[i];
        if (!with_code && fri_arg_is_cstr(a, "withcode")) {
            with_code = 1;
            continue;
        }
        if (!pattern && fri_arg_is_cstr(a, "libraryname")) {
            if (i >= c->argc - 1) {
                fri_reply_error(c, "ERR library name argument was not given");
                return;
            }
            pattern = &c->argv[++i];
            continue;
        }
        fri_reply_errorf(c, "ERR Unknown argument %.*s", (int)strnlen(a->ptr, a->len), a->ptr);
        return;
    }
    fri_scripting *sc = c->srv->scripting;
    fri_dict *libs = sc ? sc->libraries : NULL;
    size_t h = fri_reply_deferred_len(c);
    long n = 0;
    for (size_t i = 0; libs && i < fri_dict_slots(libs); i++) {
        fri_dent *e = fri_dict_slot(libs, i);
        if (!e) continue;
        fri_library *lib = e->v.ptr;
        if (pattern && !fri_glob_match(pattern->ptr, pattern->len, lib->name->buf,
                                       lib->name->len, 1))
            continue;
        reply_library(c, lib, with_code);
        n++;
    }
    fri_reply_set_deferred_len(c, h, n);
}

static void function_delete_command(fr_client *c)
{
    fri_scripting *sc = c->srv->scripting;
    fri_dent *e = sc && sc->libraries
                      ? fri_dict_find(sc->libraries, c->argv[2].ptr, c->argv[2].len)
                      : NULL;
    if (!e) {
        fri_reply_error(c, "ERR Library not found");
        return;
    }
    fri_library *lib = e->v.ptr;
    libctx ctx = server_ctx(sc);
    index_library(&ctx, lib, 0);
    fri_dict_delete(sc->libraries, c->argv[2].ptr, c->argv[2].len, NULL);
    library_free(sc, lib);
    c->srv->dirty++;
    fri_reply_ok(c);
}

/* Redis's addReplySubcommandSyntaxError. */
static void reply_subcommand_syntax(fr_client *c)
{
    size_t n = strnlen(c->argv[1].ptr, c->argv[1].len);
    fri_reply_errorf(c, "ERR unknown subcommand or wrong number of arguments for '%.*s'. "
                        "Try FUNCTION HELP.",
                     (int)(n > 128 ? 128 : n), c->argv[1].ptr);
}

static void function_flush_command(fr_client *c)
{
    if (c->argc > 3) {
        reply_subcommand_syntax(c);
        return;
    }
    if (c->argc == 3 && !fri_arg_is_cstr(&c->argv[2], "sync") &&
        !fri_arg_is_cstr(&c->argv[2], "async")) {
        fri_reply_error(c, "ERR FUNCTION FLUSH only supports SYNC|ASYNC option");
        return;
    }
    fri_scripting *sc = c->srv->scripting;
    if (sc && sc->libraries) {
        for (size_t i = 0; i < fri_dict_slots(sc->libraries); i++) {
            fri_dent *e = fri_dict_slot(sc->libraries, i);
            if (e) library_free(sc, e->v.ptr);
        }
        fri_dict_clear(sc->libraries, NULL);
        fri_dict_clear(sc->functions, NULL);
    }
    c->srv->dirty++;
    fri_reply_ok(c);
}

static void function_stats_command(fr_client *c)
{
    fri_scripting *sc = c->srv->scripting;
    fri_script_run *run = sc ? sc->run : NULL;
    if (run && (run->flags & FRI_RUN_EVAL_MODE)) {
        fri_reply_error(c, "BUSY Redis is busy running a script. You can only call SCRIPT KILL "
                           "or SHUTDOWN NOSAVE.");
        return;
    }
    fri_reply_map_len(c, 2);
    fri_reply_bulk_cstr(c, "running_script");
    if (!run) {
        fri_reply_nil(c);
    } else {
        fr_client *caller = run->caller;
        fri_reply_map_len(c, 3);
        fri_reply_bulk_cstr(c, "name");
        fri_reply_bulk_cstr(c, run->funcname);
        fri_reply_bulk_cstr(c, "command");
        fri_reply_array_len(c, caller->argc);
        for (int i = 0; i < caller->argc; i++)
            fri_reply_bulk(c, caller->argv[i].ptr, caller->argv[i].len);
        fri_reply_bulk_cstr(c, "duration_ms");
        fri_reply_ll(c, fri_script_run_duration_ms(c->srv, run));
    }
    fri_reply_bulk_cstr(c, "engines");
    fri_reply_map_len(c, 1);
    fri_reply_bulk_cstr(c, "LUA");
    fri_reply_map_len(c, 2);
    fri_reply_bulk_cstr(c, "libraries_count");
    fri_reply_ll(c, sc && sc->libraries ? (long long)fri_dict_size(sc->libraries) : 0);
    fri_reply_bulk_cstr(c, "functions_count");
    fri_reply_ll(c, sc && sc->functions ? (long long)fri_dict_size(sc->functions) : 0);
}

static void function_kill_command(fr_client *c) { fri_script_kill(c, 0); }

/* ----- FUNCTION DUMP / RESTORE: the RDB fragment ------------------------------------------ */

#define RDB_VERSION 10           /* redis-server 7.0's */
#define RDB_OPCODE_FUNCTION2 245 /* a library's payload */
#define RDB_OPCODE_FUNCTION 246  /* 7.0-rc's form: name, engine, description, code */

/* FUNCTION DUMP: each library as RDB_OPCODE_FUNCTION2 and its code as rdbSaveRawString
 * stores it (LZF when that saves 4 bytes or more, as rdb.c writes DUMP's strings), the RDB
 * version, the CRC64: byte for byte what redis-server 7.0.15 writes. */
int fri_functions_save(fr_server *s, fri_buf *b)
{
    fri_scripting *sc = s->scripting;
    for (size_t i = 0; sc && sc->libraries && i < fri_dict_slots(sc->libraries); i++) {
        fri_dent *e = fri_dict_slot(sc->libraries, i);
        if (!e) continue;
        fri_library *lib = e->v.ptr;
        unsigned char op = RDB_OPCODE_FUNCTION2;
        fri_buf_append(b, &op, 1);
        if (fri_rdb_save_string(b, lib->code->buf, lib->code->len) < 0) return -1;
    }
    return 0;
}

static void function_dump_command(fr_client *c)
{
    fri_buf b = {0};
    if (fri_functions_save(c->srv, &b) < 0) {
        fri_buf_free(&b);
        fri_reply_error(c, "OOM command not allowed when used memory > 'maxmemory'.");
        return;
    }
    unsigned char ver[2] = {RDB_VERSION & 0xff, (RDB_VERSION >> 8) & 0xff};
    fri_buf_append(&b, ver, 2);
    uint64_t crc = fri_crc64(0, b.p, b.len);
    unsigned char cb[8];
    for (int i = 0; i < 8; i++) cb[i] = (unsigned char)(crc >> (8 * i));
    fri_buf_append(&b, cb, 8);
    fri_reply_bulk(c, b.p, b.len);
    fri_buf_free(&b);
}

/* A reader over a payload's body. */
typedef struct rdb_in {
    const unsigned char *p;
    size_t left;
} rdb_in;

/* rdbLoadLen: the length, or *enc set with the encoding type for 0xC0 forms; -1 short. */
static int rdb_get_len(rdb_in *in, uint64_t *len, int *enc)
{
    *enc = -1;
    if (in->left < 1) return -1;
    unsigned char t = in->p[0];
    int kind = t >> 6;
    if (kind == 3) {
        *enc = t & 0x3f;
        in->p++, in->left--;
        return 0;
    }
    size_t need = kind == 0 ? 1 : kind == 1 ? 2 : t == 0x80 ? 5 : t == 0x81 ? 9 : 0;
    if (!need || in->left < need) return -1;
    if (kind == 0) *len = t & 0x3f;
    else if (kind == 1) *len = ((uint64_t)(t & 0x3f) << 8) | in->p[1];
    else {
        *len = 0;
        for (size_t i = 1; i < need; i++) *len = (*len << 8) | in->p[i];
    }
    in->p += need, in->left -= need;
    return 0;
}

/* rdbGenericLoadStringObject into *out (malloc'ed); -1 when it cannot be read. */
static int rdb_get_string(rdb_in *in, char **out, size_t *outlen)
{
    uint64_t len;
    int enc;
    if (rdb_get_len(in, &len, &enc) < 0) return -1;
    if (enc == -1) {
        if (in->left < len) return -1;
        *out = malloc(len + 1);
        if (!*out) return -1;
        memcpy(*out, in->p, len);
        (*out)[len] = '\0';
        *outlen = len;
        in->p += len, in->left -= len;
        return 0;
    }
    if (enc <= 2) { /* an integer, 1, 2 or 4 bytes little endian */
        size_t n = (size_t)1 << enc;
        if (in->left < n) return -1;
        long long v = 0;
        for (size_t i = 0; i < n; i++) v |= (long long)in->p[i] << (8 * i);
        if (n == 1) v = (int8_t)v;
        else if (n == 2) v = (int16_t)v;
        else v = (int32_t)v;
        in->p += n, in->left -= n;
        *out = malloc(24);
        if (!*out) return -1;
        *outlen = (size_t)snprintf(*out, 24, "%lld", v);
        return 0;
    }
    if (enc != 3) return -1;
    uint64_t clen, ulen;
    int e2;
    if (rdb_get_len(in, &clen, &e2) < 0 || e2 != -1) return -1;
    if (rdb_get_len(in, &ulen, &e2) < 0 || e2 != -1) return -1;
    if (in->left < clen || ulen > ((uint64_t)1 << 32)) return -1;
    *out = malloc(ulen + 1);
    if (!*out) return -1;
    if (fri_lzf_decompress(in->p, clen, *out, ulen) != ulen) {
        fri_free(*out);
        return -1;
    }
    (*out)[ulen] = '\0';
    *outlen = ulen;
    in->p += clen, in->left -= clen;
    return 0;
}

static void ctx_free(fri_scripting *sc, libctx *ctx)
{
    if (ctx->libraries) {
        for (size_t i = 0; i < fri_dict_slots(ctx->libraries); i++) {
            fri_dent *e = fri_dict_slot(ctx->libraries, i);
            if (e) library_free(sc, e->v.ptr);
        }
        fri_dict_free(ctx->libraries, NULL);
    }
    if (ctx->functions) fri_dict_free(ctx->functions, NULL);
}

/* FUNCTION RESTORE payload [FLUSH|APPEND|REPLACE]. */
static void function_restore_command(fr_client *c)
{
    if (c->argc > 4) {
        reply_subcommand_syntax(c);
        return;
    }
    int policy = 0; /* 0 append, 1 replace, 2 flush */
    if (c->argc == 4) {
        if (fri_arg_is_cstr(&c->argv[3], "append")) policy = 0;
        else if (fri_arg_is_cstr(&c->argv[3], "replace")) policy = 1;
        else if (fri_arg_is_cstr(&c->argv[3], "flush")) policy = 2;
        else {
            fri_reply_error(c, "ERR Wrong restore policy given, value should be either FLUSH, "
                               "APPEND or REPLACE.");
            return;
        }
    }
    const unsigned char *p = (const unsigned char *)c->argv[2].ptr;
    size_t len = c->argv[2].len;
    if (len < 10 || ((unsigned)p[len - 9] << 8 | p[len - 10]) > RDB_VERSION) {
        fri_reply_error(c, "ERR DUMP payload version or checksum are wrong");
        return;
    }
    uint64_t crc = fri_crc64(0, p, len - 8);
    for (int i = 0; i < 8; i++) {
        if (p[len - 8 + i] != (unsigned char)(crc >> (8 * i))) {
            fri_reply_error(c, "ERR DUMP payload version or checksum are wrong");
            return;
        }
    }
    fri_scripting *sc = functions_get(c);
    if (!sc) return;
    fri_buf err = {0};
    fri_functions_restore(c->srv, p, len - 10, policy, 0, &err);
    if (err.len) {
        fri_reply_errorf(c, "ERR %.*s", (int)err.len, err.p);
    } else {
        c->srv->dirty++;
        fri_reply_ok(c);
    }
    fri_buf_free(&err);
}

int fri_functions_restore(fr_server *s, const unsigned char *p, size_t len, int policy,
                          unsigned flags, fri_buf *err_out)
{
    fri_scripting *sc = fri_scripting_get(s);
    if (sc && !sc->libraries) sc->libraries = fri_dict_new();
    if (sc && !sc->functions) sc->functions = fri_dict_new();
    fri_buf err = {0};
    if (!sc || !sc->libraries || !sc->functions) {
        fri_buf_printf(err_out, "not enough memory");
        return -1;
    }
    libctx tmp = {fri_dict_new(), fri_dict_new()};
    if (!tmp.libraries || !tmp.functions) fri_buf_printf(&err, "not enough memory");
    rdb_in in = {p, len};
    while (!err.len && in.left > 0) {
        unsigned char type = in.p[0];
        in.p++, in.left--;
        if (type != RDB_OPCODE_FUNCTION && type != RDB_OPCODE_FUNCTION2) {
            fri_buf_printf(&err, "given type is not a function");
            break;
        }
        char *code = NULL;
        size_t clen = 0;
        if (type == RDB_OPCODE_FUNCTION) {
            char *name = NULL, *engine = NULL, *desc = NULL, *blob = NULL;
            size_t nl, el, dl, bl;
            uint64_t has_desc;
            int enc;
            if (rdb_get_string(&in, &name, &nl) < 0) fri_buf_printf(&err, "Failed loading library name");
            else if (rdb_get_string(&in, &engine, &el) < 0) fri_buf_printf(&err, "Failed loading engine name");
            else if (rdb_get_len(&in, &has_desc, &enc) < 0 || enc != -1)
                fri_buf_printf(&err, "Failed loading library description indicator");
            else if (has_desc && rdb_get_string(&in, &desc, &dl) < 0)
                fri_buf_printf(&err, "Failed loading library description");
            else if (rdb_get_string(&in, &blob, &bl) < 0) fri_buf_printf(&err, "Failed loading library blob");
            if (!err.len) {
                fri_buf f = {0};
                fri_buf_printf(&f, "#!%s name=%s\n", engine, name);
                fri_buf_append(&f, blob, bl);
                code = f.p;
                clen = f.len;
            }
            fri_free(name), fri_free(engine), fri_free(desc), fri_free(blob);
        } else if (rdb_get_string(&in, &code, &clen) < 0) {
            fri_buf_printf(&err, "Failed loading library payload");
        }
        if (!err.len && !create_library(sc, s, &tmp, code, clen, 0, &err) && !err.len)
            fri_buf_printf(&err, "failed loading the given functions payload");
        fri_free(code);
    }
    libctx cur = server_ctx(sc);
    int commit = !(flags & FRI_FN_CHECK_ONLY);
    if (!err.len && policy == 2 && commit) {
        /* FLUSH: the restored set becomes the server's */
        ctx_free(sc, &cur);
        sc->libraries = tmp.libraries;
        sc->functions = tmp.functions;
        tmp.libraries = tmp.functions = NULL;
    } else if (!err.len && policy != 2) {
        /* libraryJoin: same names abort (APPEND) or replace (REPLACE); then no function
         * may collide; only then is anything linked */
        for (size_t i = 0; i < fri_dict_slots(tmp.libraries) && !err.len; i++) {
            fri_library *lib = library_at(tmp.libraries, i);
            if (!lib) continue;
            if (fri_dict_find(cur.libraries, lib->name->buf, lib->name->len) && policy == 0)
                /* rdbFunctionLoad creates it in the server's set, whose error quotes */
                fri_buf_printf(&err, (flags & FRI_FN_FROM_FILE) ? "Library '%s' already exists"
                                               : "Library %s already exists",
                               lib->name->buf);
        }
        for (size_t i = 0; i < fri_dict_slots(tmp.libraries) && !err.len; i++) {
            fri_library *lib = library_at(tmp.libraries, i);
            if (!lib) continue;
            fri_dent *old = fri_dict_find(cur.libraries, lib->name->buf, lib->name->len);
            for (size_t k = 0; k < fri_dict_slots(lib->functions) && !err.len; k++) {
                fri_dent *fe = fri_dict_slot(lib->functions, k);
                if (!fe) continue;
                fri_function *fn = fe->v.ptr;
                fri_function *clash = find_in(&cur, fn->name->buf, fn->name->len);
                if (clash && (!old || clash->lib != old->v.ptr))
                    fri_buf_printf(&err, "Function %s already exists", fn->name->buf);
            }
        }
        for (size_t i = 0; i < fri_dict_slots(tmp.libraries) && !err.len && commit; i++) {
            fri_library *lib = library_at(tmp.libraries, i);
            if (!lib) continue;
            fri_dent *old = fri_dict_find(cur.libraries, lib->name->buf, lib->name->len);
            if (old) {
                fri_library *ol = old->v.ptr;
                index_library(&cur, ol, 0);
                fri_dict_delete(cur.libraries, ol->name->buf, ol->name->len, NULL);
                library_free(sc, ol);
            }
            int created;
            fri_dent *ne = fri_dict_add(cur.libraries, lib->name->buf, lib->name->len, &created);
            if (ne) {
                ne->v.ptr = lib;
                index_library(&cur, lib, 1);
                fri_dict_slot(tmp.libraries, i)->v.ptr = NULL; /* now the server's */
            }
        }
    }
    if (tmp.libraries) {
        for (size_t i = 0; i < fri_dict_slots(tmp.libraries); i++) {
            fri_library *lib = library_at(tmp.libraries, i);
            if (lib) library_free(sc, lib);
        }
        fri_dict_free(tmp.libraries, NULL);
    }
    if (tmp.functions) fri_dict_free(tmp.functions, NULL);
    int rc = err.len ? -1 : 0;
    if (err.len) fri_buf_append(err_out, err.p, err.len);
    fri_buf_free(&err);
    return rc;
}

static void function_help_command(fr_client *c)
{
    static const char *const help[] = {
        "LOAD [REPLACE] <FUNCTION CODE>",
        "    Create a new library with the given library name and code.",
        "DELETE <LIBRARY NAME>",
        "    Delete the given library.",
        "LIST [LIBRARYNAME PATTERN] [WITHCODE]",
        "    Return general information on all the libraries:",
        "    * Library name",
        "    * The engine used to run the Library",
        "    * Library description",
        "    * Functions list",
        "    * Library code (if WITHCODE is given)",
        "    It also possible to get only function that matches a pattern using LIBRARYNAME argument.",
        "STATS",
        "    Return information about the current function running:",
        "    * Function name",
        "    * Command used to run the function",
        "    * Duration in MS that the function is running",
        "    If no function is running, return nil",
        "    In addition, returns a list of available engines.",
        "KILL",
        "    Kill the current running function.",
        "FLUSH [ASYNC|SYNC]",
        "    Delete all the libraries.",
        "    When called without the optional mode argument, the behavior is determined by the",
        "    lazyfree-lazy-user-flush configuration directive. Valid modes are:",
        "    * ASYNC: Asynchronously flush the libraries.",
        "    * SYNC: Synchronously flush the libraries.",
        "DUMP",
        "    Return a serialized payload representing the current libraries, can be restored using FUNCTION RESTORE command",
        "RESTORE <PAYLOAD> [FLUSH|APPEND|REPLACE]",
        "    Restore the libraries represented by the given payload, it is possible to give a restore policy to",
        "    control how to handle existing libraries (default APPEND):",
        "    * FLUSH: delete all existing libraries.",
        "    * APPEND: appends the restored libraries to the existing libraries. On collision, abort.",
        "    * REPLACE: appends the restored libraries to the existing libraries, On collision, replace the old",
        "      libraries with the new libraries (notice that even on this option there is a chance of failure",
        "      in case of functions name collision with another library).",
        NULL,
    };
    fri_reply_help(c, help);
}

/* ----- FCALL ------------------------------------------------------------------------------ */

static void fcall_generic(fr_client *c, int ro)
{
    fr_server *s = c->srv;
    fri_scripting *sc = s->scripting;
    fri_function *fn = find_function(sc, c->argv[1].ptr, c->argv[1].len);
    if (!fn) {
        fri_reply_error(c, "ERR Function not found");
        return;
    }
    long long numkeys;
    if (!fri_string2ll(c->argv[2].ptr, c->argv[2].len, &numkeys)) {
        fri_reply_error(c, "ERR Bad number of keys provided");
        return;
    }
    if (fri_script_numkeys_check(c, numkeys) < 0) return;
    if (fri_script_flags_check(c, fn->flags, ro) < 0) return;
    fri_script_run run;
    fri_script_run_begin(s, &run, c, fn->name->buf, fn->flags, ro);
    const fri_arg *keys = c->argv + 3;
    if (s->cluster_enabled && numkeys > 0) run.slot = (int)fri_key_slot(keys[0].ptr, keys[0].len);
    fri_lua_run_function(sc, &run, fn, keys, (int)numkeys, keys + numkeys,
                         c->argc - 3 - (int)numkeys);
    fri_script_run_end(s, &run);
}

int fri_function_flags(fr_server *s, const fri_arg *name, unsigned *flags)
{
    fri_function *fn = find_function(s->scripting, name->ptr, name->len);
    if (!fn) return 0;
    *flags = fn->flags;
    return 1;
}

static void fcall_command(fr_client *c) { fcall_generic(c, 0); }
static void fcall_ro_command(fr_client *c) { fcall_generic(c, 1); }

static int fcall_getkeys(int argc, const fri_arg *argv, int *keys, int max)
{
    return fri_numkeys_keys(argc, argv, 2, 0, keys, max);
}

static const fri_command function_subcommands[] = {
    {"function|delete", function_delete_command, 3, FRI_CMD_NOSCRIPT | FRI_CMD_WRITE,
     "scripting", 0, 0, 0, NULL, NULL},
    {"function|dump", function_dump_command, 2, FRI_CMD_NOSCRIPT, "scripting", 0, 0, 0, NULL,
     NULL},
    {"function|flush", function_flush_command, -2, FRI_CMD_NOSCRIPT | FRI_CMD_WRITE,
     "scripting", 0, 0, 0, NULL, NULL},
    {"function|help", function_help_command, 2, FRI_CMD_LOADING | FRI_CMD_STALE, "scripting", 0,
     0, 0, NULL, NULL},
    {"function|kill", function_kill_command, 2, FRI_CMD_NOSCRIPT | FRI_CMD_ALLOW_BUSY,
     "scripting", 0, 0, 0, NULL, NULL},
    {"function|list", function_list_command, -2, FRI_CMD_NOSCRIPT, "scripting", 0, 0, 0, NULL,
     NULL},
    {"function|load", function_load_command, -3,
     FRI_CMD_NOSCRIPT | FRI_CMD_WRITE | FRI_CMD_DENYOOM, "scripting", 0, 0, 0, NULL, NULL},
    {"function|restore", function_restore_command, -3,
     FRI_CMD_NOSCRIPT | FRI_CMD_WRITE | FRI_CMD_DENYOOM, "scripting", 0, 0, 0, NULL, NULL},
    {"function|stats", function_stats_command, 2, FRI_CMD_NOSCRIPT | FRI_CMD_ALLOW_BUSY,
     "scripting", 0, 0, 0, NULL, NULL},
    {0},
};

const fri_command fri_function_commands[] = {
    {"fcall", fcall_command, -3, FRI_CMD_NOSCRIPT | FRI_CMD_STALE, "scripting", 0, 0, 0,
     fcall_getkeys, NULL},
    {"fcall_ro", fcall_ro_command, -3, FRI_CMD_NOSCRIPT | FRI_CMD_STALE | FRI_CMD_READONLY,
     "scripting", 0, 0, 0, fcall_getkeys, NULL},
    {"function", NULL, -2, FRI_CMD_CONTAINER, "scripting", 0, 0, 0, NULL,
     function_subcommands},
    {0},
};
