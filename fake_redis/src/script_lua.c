/* script_lua.c -- the Lua 5.1 interpreter scripts run in, as Redis 7.0 sets it up: the
 * libraries (base without dofile/loadfile/print, table, string, math with Redis's
 * deterministic random, cjson and bit from Debian's packages, cmsgpack and struct of our
 * own), the `redis` table, the read-only globals, the RESP <-> Lua conversions, the
 * count hook that measures a script's time, and redis.call's path into the fake.
 *
 * Redis patches its Lua with read-only tables; Debian's Lua has none, so the protection
 * is built from what stock Lua offers: the globals and every library table are empty
 * proxies whose metatable reads through to the real table and refuses every write
 * ("Attempt to modify a readonly table"), and rawset/setmetatable refuse a proxy.  What
 * differs is listed in docs/scripting.md. */
#include <lauxlib.h>
#include <lua.h>
#include <lualib.h>

#include <lua-bitop.h>
#include <lua-cjson.h>

#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include "command_int.h"
#include "fr_int.h"
#include "script_int.h"

#define REG_SCRIPTING "fri_scripting" /* registry: the fri_scripting (light userdata) */
#define REG_GLOBALS "fri_globals"     /* registry: the real globals behind the proxy */
#define REG_RO "fri_ro"               /* registry: weak set of read-only proxies */
#define REG_HANDLER "fri_err_handler" /* registry: the pcall error handler */
#define REG_LIBAPI "fri_libapi"       /* registry: what FUNCTION LOAD's code sees (real table) */

#define READONLY_ERR "Attempt to modify a readonly table"

/* ----- Memory ------------------------------------------------------------------------- */

/* lua_Alloc with a cap: past mem_limit an allocation fails, which Lua turns into its
 * "not enough memory" error instead of exhausting the process. */
static void *lua_alloc(void *ud, void *ptr, size_t osize, size_t nsize)
{
    fri_scripting *sc = ud;
    if (nsize == 0) {
        fri_free(ptr);
        sc->mem_used -= osize;
        return NULL;
    }
    if (nsize > osize && sc->mem_used + (nsize - osize) > sc->mem_limit) return NULL;
    void *n = fri_realloc(ptr, nsize);
    if (n) sc->mem_used = sc->mem_used - osize + nsize;
    return n;
}

static fri_scripting *scripting_of(lua_State *L)
{
    lua_getfield(L, LUA_REGISTRYINDEX, REG_SCRIPTING);
    fri_scripting *sc = lua_touserdata(L, -1);
    lua_pop(L, 1);
    return sc;
}

/* ----- Errors in Redis's shape ------------------------------------------------------ */

/* Pushes Redis's error table {err = "CODE msg"} for err[0..len): "-CODE msg" keeps its
 * code, anything else gets ERR; CR and LF at either end are trimmed (luaPushErrorBuff). */
static void push_error_buf(lua_State *L, const char *err, size_t len)
{
    const char *code = "ERR", *msg = err;
    size_t code_len = 3, msg_len = len;
    if (len > 0 && err[0] == '-') {
        const char *sp = memchr(err, ' ', len);
        if (!sp) {
            msg = err + 1;
            msg_len = len - 1;
        } else {
            code = err + 1;
            code_len = (size_t)(sp - err - 1);
            msg = sp + 1;
            msg_len = len - (size_t)(sp + 1 - err);
        }
    }
    while (msg_len && (msg[0] == '\r' || msg[0] == '\n')) msg++, msg_len--;
    while (msg_len && (msg[msg_len - 1] == '\r' || msg[msg_len - 1] == '\n')) msg_len--;
    lua_newtable(L);
    lua_pushstring(L, "err");
    luaL_Buffer b;
    luaL_buffinit(L, &b);
    luaL_addlstring(&b, code, code_len);
    luaL_addchar(&b, ' ');
    luaL_addlstring(&b, msg, msg_len);
    luaL_pushresult(&b);
    lua_settable(L, -3);
}

static void push_error(lua_State *L, const char *err) { push_error_buf(L, err, strlen(err)); }

/* Raises err as a Redis error table (push_error, then lua_error: does not return). */
static int raise_error(lua_State *L, const char *err)
{
    push_error(L, err);
    return lua_error(L);
}

/* The scripting state of a redis.* function that runs only inside a script: outside one,
 * raises "<fn> can only be called inside a script invocation", as Redis does. */
static fri_scripting *running_or_raise(lua_State *L, const char *fn)
{
    fri_scripting *sc = scripting_of(L);
    if (!sc->run) {
        char err[96];
        snprintf(err, sizeof(err), "%s can only be called inside a script invocation", fn);
        raise_error(L, err);
    }
    return sc;
}

/* Marks the error table on top as already counted (Redis's ignore_error_stats_update). */
static void mark_error_counted(lua_State *L)
{
    lua_pushstring(L, "ignore_error_stats_update");
    lua_pushboolean(L, 1);
    lua_settable(L, -3);
}

/* The pcall error handler of every run: a string error becomes {err = "ERR " .. msg},
 * and the table gets the source and line of the Lua code that raised it (the caller of a
 * C function such as redis.call), which the reply names. */
static int err_handler(lua_State *L)
{
    lua_Debug ar;
    int have = 0;
    if (lua_getstack(L, 1, &ar) && lua_getinfo(L, "nSl", &ar)) {
        have = 1;
        if (strcmp(ar.what, "C") == 0)
            have = lua_getstack(L, 2, &ar) && lua_getinfo(L, "nSl", &ar);
    }
    lua_settop(L, 1);
    if (!lua_istable(L, 1)) {
        lua_newtable(L);
        lua_pushstring(L, "err");
        lua_pushstring(L, "ERR ");
        lua_getfield(L, LUA_REGISTRYINDEX, REG_GLOBALS);
        lua_getfield(L, -1, "tostring");
        lua_remove(L, -2);
        lua_pushvalue(L, 1);
        lua_call(L, 1, 1);
        lua_concat(L, 2);
        lua_settable(L, -3);
        lua_replace(L, 1);
    }
    if (have) {
        lua_pushstring(L, "source");
        lua_pushstring(L, ar.source);
        lua_settable(L, 1);
        lua_pushstring(L, "line");
        lua_pushinteger(L, ar.currentline);
        lua_settable(L, 1);
    }
    return 1;
}

/* ----- Read-only tables --------------------------------------------------------------- */

static int is_readonly(lua_State *L, int idx)
{
    if (!lua_istable(L, idx)) return 0;
    lua_pushvalue(L, idx);
    lua_getfield(L, LUA_REGISTRYINDEX, REG_RO);
    lua_insert(L, -2);
    lua_rawget(L, -2);
    int ro = lua_toboolean(L, -1);
    lua_pop(L, 2);
    return ro;
}

/* __newindex of every protected table: the VM's error, with the position of the Lua code
 * that assigned. */
static int readonly_newindex(lua_State *L) { return luaL_error(L, READONLY_ERR); }

/* __index of the globals: the real globals, or Redis's error for a missing name. */
static int globals_index(lua_State *L)
{
    fri_scripting *sc = scripting_of(L);
    lua_pushvalue(L, 2);
    if (sc->loading && L == sc->flua) {
        /* FUNCTION LOAD runs the library's code with only its own API in sight */
        lua_getfield(L, LUA_REGISTRYINDEX, REG_LIBAPI);
        lua_insert(L, -2);
        lua_rawget(L, -2);
    } else {
        lua_rawget(L, lua_upvalueindex(1));
    }
    if (!lua_isnil(L, -1)) return 1;
    if (!lua_isstring(L, 2))
        return luaL_error(L, "Second argument to luaProtectedTableError must be a string or "
                             "number");
    return luaL_error(L, "Script attempted to access nonexistent global variable '%s'",
                      lua_tostring(L, 2));
}

/* __index of the load-time `redis` table: its fields, or the missing-global error. */
static int globals_index_strict(lua_State *L)
{
    lua_pushvalue(L, 2);
    lua_rawget(L, lua_upvalueindex(1));
    if (!lua_isnil(L, -1)) return 1;
    if (!lua_isstring(L, 2))
        return luaL_error(L, "Second argument to luaProtectedTableError must be a string or "
                             "number");
    return luaL_error(L, "Script attempted to access nonexistent global variable '%s'",
                      lua_tostring(L, 2));
}

/* Makes a protected proxy of the table at the top of the stack and replaces it with the
 * proxy.  index_fn: the __index (NULL: the table itself). */
static void protect_top(lua_State *L, lua_CFunction index_fn)
{
    int real = lua_gettop(L);
    lua_newtable(L); /* proxy */
    lua_newtable(L); /* its metatable */
    if (index_fn) {
        lua_pushvalue(L, real);
        lua_pushcclosure(L, index_fn, 1);
    } else {
        lua_pushvalue(L, real);
    }
    lua_setfield(L, -2, "__index");
    lua_pushcfunction(L, readonly_newindex);
    lua_setfield(L, -2, "__newindex");
    /* what getmetatable answers: a read-only view of the metatable */
    lua_newtable(L);
    lua_newtable(L);
    lua_pushvalue(L, -3);
    lua_setfield(L, -2, "__index");
    lua_pushcfunction(L, readonly_newindex);
    lua_setfield(L, -2, "__newindex");
    lua_setmetatable(L, -2);
    lua_getfield(L, LUA_REGISTRYINDEX, REG_RO);
    lua_pushvalue(L, -2);
    lua_pushvalue(L, -4);
    lua_rawset(L, -3);
    lua_pop(L, 1);
    lua_setfield(L, -2, "__metatable");
    lua_setmetatable(L, -2);
    lua_getfield(L, LUA_REGISTRYINDEX, REG_RO);
    lua_pushvalue(L, -2);
    lua_pushvalue(L, real);
    lua_rawset(L, -3);
    lua_pop(L, 1);
    lua_replace(L, real);
}

/* Replaces the value at idx by the real table behind it when it is a protected proxy. */
static void unproxy(lua_State *L, int idx)
{
    if (!lua_istable(L, idx)) return;
    lua_getfield(L, LUA_REGISTRYINDEX, REG_RO);
    lua_pushvalue(L, idx);
    lua_rawget(L, -2);
    if (lua_istable(L, -1)) lua_replace(L, idx);
    else lua_pop(L, 1);
    lua_pop(L, 1);
}

/* rawget, next and pairs read through a proxy, so the protected tables list and read as
 * Redis's do. */
static int safe_rawget(lua_State *L)
{
    luaL_checktype(L, 1, LUA_TTABLE);
    luaL_checkany(L, 2);
    lua_settop(L, 2);
    unproxy(L, 1);
    lua_rawget(L, 1);
    return 1;
}

static int safe_next(lua_State *L)
{
    luaL_checktype(L, 1, LUA_TTABLE);
    lua_settop(L, 2);
    unproxy(L, 1);
    if (lua_next(L, 1)) return 2;
    lua_pushnil(L);
    return 1;
}

static int safe_pairs(lua_State *L)
{
    luaL_checktype(L, 1, LUA_TTABLE);
    lua_pushcfunction(L, safe_next);
    lua_pushvalue(L, 1);
    lua_pushnil(L);
    return 3;
}

/* loadstring that never loads a precompiled chunk (Redis's Lua has no undump): such text
 * is parsed as source, which fails. */
static int safe_loadstring(lua_State *L)
{
    size_t len;
    const char *s = luaL_checklstring(L, 1, &len);
    const char *name = luaL_optstring(L, 2, s);
    luaL_Buffer b;
    if (len > 0 && s[0] == LUA_SIGNATURE[0]) {
        luaL_buffinit(L, &b);
        luaL_addchar(&b, ' ');
        luaL_addlstring(&b, s, len);
        luaL_pushresult(&b);
        s = lua_tolstring(L, -1, &len);
    }
    if (luaL_loadbuffer(L, s, len, name) == 0) return 1;
    lua_pushnil(L);
    lua_insert(L, -2);
    return 2;
}

/* rawset and setmetatable that refuse a protected table, as Redis's patched VM does. */
static int safe_rawset(lua_State *L)
{
    if (is_readonly(L, 1)) {
        lua_pushstring(L, READONLY_ERR);
        return lua_error(L);
    }
    luaL_checktype(L, 1, LUA_TTABLE);
    luaL_checkany(L, 2);
    luaL_checkany(L, 3);
    lua_settop(L, 3);
    lua_rawset(L, 1);
    return 1;
}

static int safe_setmetatable(lua_State *L)
{
    if (is_readonly(L, 1)) {
        lua_pushstring(L, READONLY_ERR);
        return lua_error(L);
    }
    lua_getfield(L, LUA_REGISTRYINDEX, "fri_setmetatable");
    lua_insert(L, 1);
    lua_call(L, lua_gettop(L) - 1, LUA_MULTRET);
    return lua_gettop(L);
}

/* ----- Redis's rand48 (math.random) ----------------------------------------------------- */

/* Redis's redisLrand48: the 48-bit linear congruential generator of drand48, its state
 * in the server, never reseeded except by math.randomseed. */
#define RAND48_INIT 0x1234ABCD330EULL
static int32_t rand48_next(fri_scripting *sc)
{
    sc->rand48 = (sc->rand48 * 0x5DEECE66DULL + 0xB) & ((1ULL << 48) - 1);
    return (int32_t)(sc->rand48 >> 17);
}

static int math_random(lua_State *L)
{
    fri_scripting *sc = scripting_of(L);
    if (!sc->run) return luaL_error(L, "math.random can only be called inside a script invocation");
    lua_Number r = (lua_Number)(rand48_next(sc) % INT32_MAX) / (lua_Number)INT32_MAX;
    switch (lua_gettop(L)) {
    case 0:
        lua_pushnumber(L, r);
        break;
    case 1: {
        int u = luaL_checkint(L, 1);
        luaL_argcheck(L, 1 <= u, 1, "interval is empty");
        lua_pushnumber(L, floor(r * u) + 1);
        break;
    }
    case 2: {
        int l = luaL_checkint(L, 1);
        int u = luaL_checkint(L, 2);
        luaL_argcheck(L, l <= u, 2, "interval is empty");
        lua_pushnumber(L, floor(r * (u - l + 1)) + l);
        break;
    }
    default:
        return luaL_error(L, "wrong number of arguments");
    }
    return 1;
}

static int math_randomseed(lua_State *L)
{
    fri_scripting *sc = scripting_of(L);
    if (!sc->run)
        return luaL_error(L, "math.randomseed can only be called inside a script invocation");
    uint32_t seed = (uint32_t)luaL_checkint(L, 1);
    sc->rand48 = ((uint64_t)(seed >> 16) << 32) | ((uint64_t)(seed & 0xffff) << 16) | 0x330E;
    return 0;
}

/* ----- RESP bytes (a command's reply) to Lua ------------------------------------------- */

/* Pushes the RESP2 reply at *pp as Redis's redisProtocolToLuaType does and advances *pp.
 * resp3: the script asked for RESP3 (redis.setresp(3)): a null is nil instead of false. */
static void push_reply(lua_State *L, const char **pp, int resp3)
{
    const char *p = *pp;
    const char *crlf = strstr(p, "\r\n");
    const char *next = crlf + 2;
    luaL_checkstack(L, 4, "lua stack limit reach when parsing redis.call reply");
    switch (p[0]) {
    case ':':
        lua_pushnumber(L, (lua_Number)strtoll(p + 1, NULL, 10));
        break;
    case '$': {
        long long n = strtoll(p + 1, NULL, 10);
        if (n < 0) {
            if (resp3) lua_pushnil(L);
            else lua_pushboolean(L, 0);
        } else {
            lua_pushlstring(L, next, (size_t)n);
            next += n + 2;
        }
        break;
    }
    case '+':
        lua_newtable(L);
        lua_pushstring(L, "ok");
        lua_pushlstring(L, p + 1, (size_t)(crlf - p - 1));
        lua_settable(L, -3);
        break;
    case '-':
        push_error_buf(L, p, (size_t)(crlf - p));
        mark_error_counted(L);
        break;
    case '*': {
        long long n = strtoll(p + 1, NULL, 10);
        if (n < 0) {
            if (resp3) lua_pushnil(L);
            else lua_pushboolean(L, 0);
            break;
        }
        lua_newtable(L);
        for (long long j = 0; j < n; j++) {
            lua_pushnumber(L, (lua_Number)(j + 1));
            push_reply(L, &next, resp3);
            lua_settable(L, -3);
        }
        break;
    }
    /* RESP3 (a command's reply converted by the embedder's hook after redis.setresp(3)) */
    case '%':
    case '~': {
        long long n = strtoll(p + 1, NULL, 10);
        lua_newtable(L);
        lua_pushstring(L, p[0] == '%' ? "map" : "set");
        lua_newtable(L);
        for (long long j = 0; j < n; j++) {
            push_reply(L, &next, resp3);
            luaL_checkstack(L, 2, "lua stack limit reach when parsing redis.call reply");
            if (p[0] == '%') push_reply(L, &next, resp3);
            else lua_pushboolean(L, 1);
            lua_settable(L, -3);
        }
        lua_settable(L, -3);
        break;
    }
    case '|': {
        /* an attribute (DEBUG PROTOCOL attrib): read and dropped, the script gets the reply
         * that follows it, as Redis's parser does (attributes are not exposed to scripts) */
        long long n = strtoll(p + 1, NULL, 10);
        for (long long j = 0; j < 2 * n; j++) {
            push_reply(L, &next, resp3);
            lua_pop(L, 1);
        }
        *pp = next;
        push_reply(L, pp, resp3);
        return;
    }
    case '_':
        lua_pushnil(L);
        break;
    case '#':
        lua_pushboolean(L, p[1] == 't');
        break;
    case ',':
        lua_newtable(L);
        lua_pushstring(L, "double");
        lua_pushnumber(L, strtod(p + 1, NULL));
        lua_settable(L, -3);
        break;
    case '(':
        lua_newtable(L);
        lua_pushstring(L, "big_number");
        lua_pushlstring(L, p + 1, (size_t)(crlf - p - 1));
        lua_settable(L, -3);
        break;
    case '=': {
        long long n = strtoll(p + 1, NULL, 10);
        lua_newtable(L);
        lua_pushstring(L, "verbatim_string");
        lua_newtable(L);
        lua_pushstring(L, "string");
        lua_pushlstring(L, next + 4, n >= 4 ? (size_t)n - 4 : 0);
        lua_settable(L, -3);
        lua_pushstring(L, "format");
        lua_pushlstring(L, next, 3);
        lua_settable(L, -3);
        lua_settable(L, -3);
        next += n + 2;
        break;
    }
    default:
        lua_pushnil(L);
        break;
    }
    *pp = next;
}

/* ----- Lua to the caller's reply ------------------------------------------------------ */

/* Redis's (long long) cast of a Lua number as x86-64 performs it: out of range or NaN is
 * LLONG_MIN. */
static long long number_to_ll(lua_Number d)
{
    if (!(d >= -9223372036854775808.0 && d < 9223372036854775808.0)) return LLONG_MIN;
    return (long long)d;
}

/* A table's field `name` (raw) of Lua type t pushed, or nothing pushed and 0. */
static int raw_field(lua_State *L, const char *name, int t)
{
    lua_pushstring(L, name);
    lua_rawget(L, -2);
    if (lua_type(L, -1) == t) return 1;
    lua_pop(L, 1);
    return 0;
}

/* Writes the error reply of an error table {err=..., source=..., line=...} at the top:
 * "-<err>", and with run != NULL and a known position " script: <name>, on <src>:<line>." */
static void reply_error_table(fr_client *c, lua_State *L, const fri_script_run *run)
{
    fri_buf b = {0};
    lua_getfield(L, -1, "err");
    size_t len = 0;
    const char *msg = lua_isstring(L, -1) ? lua_tolstring(L, -1, &len) : NULL;
    if (msg) fri_buf_append(&b, msg, len);
    lua_pop(L, 1);
    if (run) {
        lua_getfield(L, -1, "source");
        lua_getfield(L, -2, "line");
        if (lua_isstring(L, -1) && lua_isstring(L, -2)) {
            fri_buf_printf(&b, " script: %s, on %s:%s.", run->funcname, lua_tostring(L, -2),
                           lua_tostring(L, -1));
        }
        lua_pop(L, 2);
    }
    lua_pushstring(L, "ignore_error_stats_update");
    lua_rawget(L, -2);
    int counted = lua_toboolean(L, -1);
    lua_pop(L, 1);
    if (counted) {
        /* counted where redis.call met it: one failed call of the script's command */
        fri_reply_error_uncounted(c, b.p ? b.p : "", b.len);
        fri_stats_failed(c->srv, c->cmd);
    } else {
        fri_reply_error_raw(c, b.p ? b.p : "", b.len);
    }
    fri_buf_free(&b);
}

/* Inserts an aggregate header (type '*', '%' or '~') of n where handle was taken; as
 * fri_reply_set_deferred_len, inner ones first. */
static void set_deferred_header(fr_client *c, size_t handle, char type, long n)
{
    char tmp[32];
    int len = snprintf(tmp, sizeof(tmp), "%c%ld\r\n", type, n);
    fri_buf *b = &c->out;
    fri_buf_reserve(b, (size_t)len);
    memmove(b->p + handle + len, b->p + handle, b->len - handle);
    memcpy(b->p + handle, tmp, (size_t)len);
    b->len += (size_t)len;
}

/* A null in the caller's protocol (Redis's addReplyNull). */
static void reply_null(fr_client *c)
{
    if (c->proto == 3) fri_reply_raw(c, "_\r\n", 3);
    else fri_reply_nil(c);
}

/* Writes the value at the top of the stack as the caller's reply and pops it (Redis's
 * luaReplyToRedisReply): in the caller's protocol (c->proto), so a RESP3 connection gets
 * maps, sets, doubles, big numbers, verbatim strings, booleans and nulls as RESP3 types.
 * script_resp is the script's redis.setresp. */
static void reply_from_lua(fr_client *c, lua_State *L, int script_resp)
{
    int t = lua_type(L, -1);
    int r3 = c->proto == 3;
    if (!lua_checkstack(L, 4)) {
        fri_reply_error(c, "ERR reached lua stack limit");
        lua_pop(L, 1);
        return;
    }
    switch (t) {
    case LUA_TSTRING: {
        size_t len;
        const char *s = lua_tolstring(L, -1, &len);
        fri_reply_bulk(c, s, len);
        break;
    }
    case LUA_TBOOLEAN:
        if (script_resp == 2) {
            if (lua_toboolean(L, -1)) fri_reply_ll(c, 1);
            else reply_null(c);
        } else if (r3) {
            fri_reply_raw(c, lua_toboolean(L, -1) ? "#t\r\n" : "#f\r\n", 4);
        } else {
            fri_reply_ll(c, lua_toboolean(L, -1) ? 1 : 0); /* RESP2 form of a boolean */
        }
        break;
    case LUA_TNUMBER:
        fri_reply_ll(c, number_to_ll(lua_tonumber(L, -1)));
        break;
    case LUA_TTABLE: {
        if (raw_field(L, "err", LUA_TSTRING)) {
            lua_pop(L, 1);
            reply_error_table(c, L, NULL);
            break;
        }
        if (raw_field(L, "ok", LUA_TSTRING)) {
            size_t len;
            const char *s = lua_tolstring(L, -1, &len);
            fri_buf b = {0};
            fri_buf_append(&b, "+", 1);
            fri_buf_append(&b, s, len);
            for (size_t i = 1; i < b.len; i++)
                if (b.p[i] == '\r' || b.p[i] == '\n') b.p[i] = ' ';
            fri_buf_append(&b, "\r\n", 2);
            fri_reply_raw(c, b.p, b.len);
            fri_buf_free(&b);
            lua_pop(L, 1);
            break;
        }
        if (raw_field(L, "double", LUA_TNUMBER)) {
            double d = lua_tonumber(L, -1);
            if (!r3) {
                fri_reply_double(c, d);
            } else if (isinf(d)) {
                fri_reply_raw(c, d > 0 ? ",inf\r\n" : ",-inf\r\n", d > 0 ? 6 : 7);
            } else {
                char dbuf[64];
                int dl = snprintf(dbuf, sizeof(dbuf), ",%.17g\r\n", d);
                fri_reply_raw(c, dbuf, (size_t)dl);
            }
            lua_pop(L, 1);
            break;
        }
        if (raw_field(L, "big_number", LUA_TSTRING)) {
            size_t len;
            const char *s = lua_tolstring(L, -1, &len);
            char *copy = fri_malloc(len ? len : 1);
            if (copy) {
                memcpy(copy, s, len);
                for (size_t i = 0; i < len; i++)
                    if (copy[i] == '\r' || copy[i] == '\n') copy[i] = ' ';
                if (r3) {
                    fri_reply_raw(c, "(", 1);
                    fri_reply_raw(c, copy, len);
                    fri_reply_raw(c, "\r\n", 2);
                } else {
                    fri_reply_bulk(c, copy, len);
                }
                fri_free(copy);
            } else {
                fri_reply_error(c, FRI_ERR_OOM);
            }
            lua_pop(L, 1);
            break;
        }
        if (raw_field(L, "verbatim_string", LUA_TTABLE)) {
            int done = 0;
            if (raw_field(L, "format", LUA_TSTRING)) {
                lua_pushstring(L, "string");
                lua_rawget(L, -3);
                if (lua_type(L, -1) == LUA_TSTRING) {
                    size_t len;
                    const char *s = lua_tolstring(L, -1, &len);
                    if (r3) { /* Redis's addReplyVerbatim: 3 bytes of format, space-padded */
                        const char *fmt = lua_tostring(L, -2);
                        char head[48];
                        int hl = snprintf(head, sizeof(head), "=%zu\r\n", len + 4);
                        for (int i = 0; i < 3; i++) head[hl++] = *fmt ? *fmt++ : ' ';
                        head[hl++] = ':';
                        fri_reply_raw(c, head, (size_t)hl);
                        fri_reply_raw(c, s, len);
                        fri_reply_raw(c, "\r\n", 2);
                    } else {
                        fri_reply_bulk(c, s, len);
                    }
                    done = 1;
                }
                lua_pop(L, 2);
            }
            lua_pop(L, 1);
            if (done) break;
        }
        if (raw_field(L, "map", LUA_TTABLE)) {
            size_t h = fri_reply_deferred_len(c);
            long n = 0;
            lua_pushnil(L);
            while (lua_next(L, -2)) {
                lua_pushvalue(L, -2);
                reply_from_lua(c, L, script_resp); /* the key */
                reply_from_lua(c, L, script_resp); /* the value */
                n++;
            }
            if (r3) set_deferred_header(c, h, '%', n);
            else fri_reply_set_deferred_map_len(c, h, n);
            lua_pop(L, 1);
            break;
        }
        if (raw_field(L, "set", LUA_TTABLE)) {
            size_t h = fri_reply_deferred_len(c);
            long n = 0;
            lua_pushnil(L);
            while (lua_next(L, -2)) {
                lua_pop(L, 1);
                lua_pushvalue(L, -1);
                reply_from_lua(c, L, script_resp);
                n++;
            }
            if (r3) set_deferred_header(c, h, '~', n);
            else fri_reply_set_deferred_len(c, h, n);
            lua_pop(L, 1);
            break;
        }
        size_t h = fri_reply_deferred_len(c);
        long n = 0;
        for (int j = 1;; j++) {
            lua_pushnumber(L, j);
            lua_rawget(L, -2);
            if (lua_isnil(L, -1)) {
                lua_pop(L, 1);
                break;
            }
            reply_from_lua(c, L, script_resp);
            n++;
        }
        fri_reply_set_deferred_len(c, h, n);
        break;
    }
    default:
        reply_null(c);
    }
    lua_pop(L, 1);
}

/* ----- redis.call and redis.pcall ----------------------------------------------------- */

/* Commands a script may not run (Redis's CMD_NOSCRIPT), by name, for the fake's rows that
 * do not carry FRI_CMD_NOSCRIPT themselves. */
static const char *const noscript_names[] = {
    "blmove", "blpop", "brpop", "brpoplpush", "bzpopmax", "bzpopmin", "psubscribe",
    "punsubscribe", "ssubscribe", "subscribe", "sunsubscribe", "unsubscribe", "discard",
    "exec", "multi", "unwatch", "watch", "quit", "cluster|reset", NULL,
};

/* Commands Redis flags may-replicate: a read-only script may not run them either. */
static const char *const may_replicate_names[] = {"publish", "spublish", "pfcount", NULL};

static int name_in(const char *name, const char *const *list)
{
    for (; *list; list++)
        if (strcmp(*list, name) == 0) return 1;
    return 0;
}

/* The scripting client's arguments as the hooks take them (argv/argvlen point into av/al
 * when there are at most 64, else into fri_malloc'd arrays: free with hook_args_free).
 * 0, or -1 when out of memory. */
static int hook_args(const fr_client *lc, const char *av[64], size_t al[64],
                     const char ***argv, size_t **argvlen)
{
    *argv = lc->argc <= 64 ? av : fri_malloc(sizeof(**argv) * (size_t)lc->argc);
    *argvlen = lc->argc <= 64 ? al : fri_malloc(sizeof(**argvlen) * (size_t)lc->argc);
    if (!*argv || !*argvlen) return -1;
    for (int j = 0; j < lc->argc; j++) {
        (*argv)[j] = lc->argv[j].ptr;
        (*argvlen)[j] = lc->argv[j].len;
    }
    return 0;
}

static void hook_args_free(const char **argv, size_t *argvlen, const char *av[64],
                           size_t al[64])
{
    if (argv != av) fri_free((void *)argv);
    if (argvlen != al) fri_free(argvlen);
}

/* The embedder's command (fr_server_set_script_host_hook) run for the script: 1 when the
 * hook answered (its reply in lc->out, in the script's protocol), 0 when it refused. */
static int host_command(fr_server *s, fr_client *lc, fri_script_run *run)
{
    if (!s->script_host_hook) return 0;
    const char *av[64];
    size_t al[64];
    const char **argv;
    size_t *argvlen;
    char *reply = NULL;
    size_t len = 0;
    if (hook_args(lc, av, al, &argv, &argvlen) == 0)
        reply = s->script_host_hook(s, s->script_host_hook_ctx, lc->argc, argv, argvlen,
                                    run->resp, &len);
    hook_args_free(argv, argvlen, av, al);
    if (!reply) return 0;
    fri_buf_append(&lc->out, reply, len);
    fri_free(reply);
    run->host_reply = 1;
    return 1;
}

/* Redis's scriptCall: the checks a script's command goes through, then the command on the
 * scripting client.  NULL when it ran (its reply is in lc->out from out_mark), else the
 * refusal's text. */
static const char *script_command_checked(fr_server *s, fri_scripting *sc,
                                          fri_script_run *run, const fri_command **found)
{
    fr_client *lc = sc->lua_client;
    const fri_command *cmd = fri_lookup_command(s, lc->argv[0].ptr, lc->argv[0].len);
    if (cmd && cmd->subcommands && lc->argc >= 2) {
        cmd = fri_lookup_subcommand(cmd, &lc->argv[1]);
        if (!cmd) return "Unknown Redis command called from script";
    }
    *found = cmd;
    if (!cmd) {
        /* fakeredis-server's own commands that Redis keeps out of scripts */
        static const char *const host_noscript[] = {
            "client", "config", "acl", "hello", "auth", "save", "bgsave", "shutdown", "wait",
            "monitor", "debug", "replicaof", "slaveof", "sync", "psync", "failover",
            "bgrewriteaof", "reset", "latency", "module", "replconf", NULL,
        };
        char low[16];
        size_t n = lc->argv[0].len;
        if (n < sizeof(low)) {
            for (size_t i = 0; i < n; i++) {
                char ch = lc->argv[0].ptr[i];
                low[i] = (ch >= 'A' && ch <= 'Z') ? (char)(ch + 32) : ch;
            }
            low[n] = '\0';
            if (name_in(low, host_noscript))
                return host_command(s, lc, run) ? NULL
                                                : "This Redis command is not allowed from script";
        }
        return "Unknown Redis command called from script";
    }
    if ((cmd->arity > 0 && cmd->arity != lc->argc) || lc->argc < -cmd->arity)
        return "Wrong number of args calling Redis command from script";
    if ((cmd->flags & FRI_CMD_NOSCRIPT) || name_in(cmd->name, noscript_names))
        return "This Redis command is not allowed from script";
    if (!cmd->proc) return "Wrong number of args calling Redis command from script";
    const char *acl_err = fri_acl_script_check(run->caller, lc, cmd); /* acl.c */
    if (acl_err) return acl_err;
    int write = (cmd->flags & FRI_CMD_WRITE) != 0;
    if ((run->flags & FRI_RUN_READ_ONLY) && (write || name_in(cmd->name, may_replicate_names)))
        return "Write commands are not allowed from read-only scripts.";
    if (write && !(run->flags & FRI_RUN_WRITE_DIRTY) && fri_noreplicas(s))
        return "-" FRI_ERR_NOREPLICAS;
    /* Redis's scriptVerifyOOM: over maxmemory when the script started, no write yet */
    if (!(run->flags & (FRI_RUN_ALLOW_OOM | FRI_RUN_WRITE_DIRTY)) && s->pre_command_oom &&
        (cmd->flags & FRI_CMD_DENYOOM))
        return "-" FRI_ERR_OOM;
    if (write) run->flags |= FRI_RUN_WRITE_DIRTY;
    if (s->cluster_enabled) {
        int keys[64];
        int n = fri_command_keys(cmd, lc->argc, lc->argv, keys, 64);
        int slot = -1;
        for (int i = 0; i < n; i++) {
            int ks = (int)fri_key_slot(lc->argv[keys[i]].ptr, lc->argv[keys[i]].len);
            if (slot == -1) slot = ks;
            else if (slot != ks) return "Script attempted to access a non local key in a cluster node";
        }
        if (slot != -1 && !(run->flags & FRI_RUN_CROSS_SLOT)) {
            if (run->slot == -1) run->slot = slot;
            else if (run->slot != slot)
                return "Script attempted to access keys that do not hash to the same slot";
        }
    }
    lc->now_ms = run->caller->now_ms;
    /* Every command of a script passes here and through fri_call, which counts it as
     * executed like any other: the place INFO commandstats hooks in (Redis counts a
     * script's commands under their own names, and a refusal above as a rejected call). */
    fri_call(lc, cmd);
    return NULL;
}

/* script_command_checked, and a refusal of a command Redis knows counted as its rejected
 * call (scriptCall's incrCommandStatsOnError(cmd, ERROR_COMMAND_REJECTED)). */
static const char *script_command(fr_server *s, fri_scripting *sc, fri_script_run *run)
{
    const fri_command *cmd = NULL;
    const char *err = script_command_checked(s, sc, run, &cmd);
    if (err) {
        /* afterErrorReply: counted now ("-CODE ..." by its code, else ERR), so the error
         * table carries ignore_error_stats_update; the baseline moves past it */
        if (err[0] == '-') fri_stats_error(s, err + 1, strlen(err + 1));
        else fri_stats_error(s, "ERR", 3);
        fri_stats_rejected(s, cmd);
        (void)fri_stats_call_failed(s);
    }
    return err;
}

/* Redis's luaArgsToRedisArgv into the scripting client's argument vector: strings as they
 * are, numbers as "%.17g".  0, or -1 with the error table pushed. */
static int args_from_lua(lua_State *L, fr_client *lc, fri_buf *mem)
{
    int argc = lua_gettop(L);
    if (argc == 0) {
        push_error(L, "Please specify at least one argument for this redis lib call");
        return -1;
    }
    size_t *offs = fri_malloc(sizeof(size_t) * 2 * (size_t)argc);
    if (!offs) {
        push_error(L, "not enough memory");
        return -1;
    }
    int j;
    for (j = 0; j < argc; j++) {
        char dbuf[64];
        const char *p;
        size_t len;
        if (lua_type(L, j + 1) == LUA_TNUMBER) {
            int n = snprintf(dbuf, sizeof(dbuf), "%.17g", (double)lua_tonumber(L, j + 1));
            p = dbuf;
            len = (size_t)n;
        } else {
            p = lua_tolstring(L, j + 1, &len);
            if (!p) break;
        }
        offs[2 * j] = mem->len;
        offs[2 * j + 1] = len;
        fri_buf_append(mem, p, len);
        fri_buf_append(mem, "", 1);
    }
    lua_pop(L, argc);
    if (j != argc) {
        fri_free(offs);
        push_error(L, "Lua redis lib command arguments must be strings or integers");
        return -1;
    }
    if (argc > lc->argv_cap) {
        fri_arg *n = fri_realloc(lc->argv_buf, sizeof(*n) * (size_t)argc);
        if (!n) {
            fri_free(offs);
            push_error(L, "not enough memory");
            return -1;
        }
        lc->argv_buf = n;
        lc->argv_cap = argc;
    }
    for (j = 0; j < argc; j++) {
        lc->argv_buf[j].ptr = mem->p + offs[2 * j];
        lc->argv_buf[j].len = offs[2 * j + 1];
    }
    lc->argv = lc->argv_buf;
    lc->argc = argc;
    fri_free(offs);
    return 0;
}

static int redis_generic_call(lua_State *L, int raise)
{
    fri_scripting *sc = running_or_raise(L, "redis.call/pcall");
    fri_script_run *run = sc->run;
    fr_client *lc = sc->lua_client;
    fri_buf mem = {0};
    if (args_from_lua(L, lc, &mem) < 0) {
        fri_buf_free(&mem);
        if (raise) return lua_error(L);
        return 1;
    }
    fr_server *s = lc->srv;
    lc->out.len = 0;
    const char *err = script_command(s, sc, run);
    if (err) {
        fri_buf_free(&mem);
        lc->argc = 0;
        push_error(L, err);
        mark_error_counted(L);
        if (raise) return lua_error(L);
        return 1;
    }
    char *r3 = NULL;
    size_t r3len = 0;
    if (run->resp == 3 && s->resp3_hook && lc->out.len > 0 && !run->host_reply) {
        const char *av[64];
        size_t al[64];
        const char **argv;
        size_t *argvlen;
        if (hook_args(lc, av, al, &argv, &argvlen) == 0)
            r3 = s->resp3_hook(s, s->resp3_hook_ctx, lc->argc, argv, argvlen, lc->out.p,
                               lc->out.len, &r3len);
        hook_args_free(argv, argvlen, av, al);
    }
    run->host_reply = 0;
    fri_buf_free(&mem);
    lc->argc = 0;
    if (r3) { /* the RESP3 bytes in place of the RESP2 ones */
        lc->out.len = 0;
        fri_buf_append(&lc->out, r3, r3len);
        fri_free(r3);
    }
    fri_buf_append(&lc->out, "", 1); /* a NUL after the bytes for the parser's strstr */
    const char *p = lc->out.p;
    int is_err = p[0] == '-';
    push_reply(L, &p, run->resp == 3);
    lc->out.len = 0;
    if (raise && is_err) return lua_error(L);
    return 1;
}

static int redis_call(lua_State *L) { return redis_generic_call(L, 1); }
static int redis_pcall(lua_State *L) { return redis_generic_call(L, 0); }

/* The global pcall: a Redis error table caught is given back as its err string, as older
 * Redis versions gave a string. */
static int compat_pcall(lua_State *L)
{
    int argc = lua_gettop(L);
    lua_pushboolean(L, 1);
    lua_insert(L, 1);
    if (lua_pcall(L, argc - 1, LUA_MULTRET, 0)) {
        lua_remove(L, 1);
        if (lua_istable(L, -1)) {
            lua_getfield(L, -1, "err");
            if (lua_isstring(L, -1)) lua_replace(L, -2);
            else lua_pop(L, 1);
        }
        lua_pushboolean(L, 0);
        lua_insert(L, 1);
    }
    return lua_gettop(L);
}

/* ----- The rest of the redis table ----------------------------------------------------- */

static int redis_sha1hex(lua_State *L)
{
    if (lua_gettop(L) != 1) return raise_error(L, "wrong number of arguments");
    size_t len = 0;
    const char *s = lua_tolstring(L, 1, &len);
    char digest[41];
    fri_sha1hex(digest, s ? s : "", s ? len : 0);
    lua_pushstring(L, digest);
    return 1;
}

static int redis_error_reply(lua_State *L)
{
    if (lua_gettop(L) != 1 || lua_type(L, -1) != LUA_TSTRING) {
        push_error(L, "wrong number or type of arguments");
        return 1;
    }
    size_t len;
    const char *e = lua_tolstring(L, -1, &len);
    if (len > 0 && e[0] == '-') {
        push_error_buf(L, e, strlen(e));
    } else {
        luaL_Buffer b;
        luaL_buffinit(L, &b);
        luaL_addchar(&b, '-');
        luaL_addstring(&b, e);
        luaL_pushresult(&b);
        size_t blen;
        const char *be = lua_tolstring(L, -1, &blen);
        push_error_buf(L, be, blen);
        lua_remove(L, -2);
    }
    return 1;
}

static int redis_status_reply(lua_State *L)
{
    if (lua_gettop(L) != 1 || lua_type(L, -1) != LUA_TSTRING) {
        push_error(L, "wrong number or type of arguments");
        return 1;
    }
    lua_newtable(L);
    lua_pushstring(L, "ok");
    lua_pushvalue(L, -3);
    lua_settable(L, -3);
    return 1;
}

static int redis_set_repl(lua_State *L)
{
    running_or_raise(L, "redis.set_repl");
    if (lua_gettop(L) != 1) return raise_error(L, "redis.set_repl() requires two arguments.");
    int flags = (int)lua_tonumber(L, -1);
    if ((flags & ~3) != 0)
        return raise_error(L, "Invalid replication flags. Use REPL_AOF, REPL_REPLICA, "
                              "REPL_ALL or REPL_NONE.");
    return 0;
}

static int redis_acl_check_cmd(lua_State *L)
{
    fri_scripting *sc = running_or_raise(L, "redis.acl_check_cmd");
    int argc = lua_gettop(L);
    if (argc == 0)
        return raise_error(L, "Please specify at least one argument for this redis lib call");
    for (int j = 1; j <= argc; j++) {
        if (lua_type(L, j) != LUA_TNUMBER && !lua_isstring(L, j)) {
            lua_settop(L, 0);
            return raise_error(L, "Lua redis lib command arguments must be strings or integers");
        }
    }
    /* the caller's ACL user, over every Redis command (acl.c) */
    fri_arg small[8], *av = argc <= 8 ? small : fri_malloc(sizeof(*av) * (size_t)argc);
    for (int j = 1; j <= argc; j++) av[j - 1].ptr = lua_tolstring(L, j, &av[j - 1].len);
    int may = fri_acl_user_may(sc->run->caller, argc, av);
    if (av != small) fri_free(av);
    lua_settop(L, 0);
    if (may < 0) return raise_error(L, "Invalid command passed to redis.acl_check_cmd()");
    lua_pushboolean(L, may);
    return 1;
}

static int redis_log(lua_State *L)
{
    int argc = lua_gettop(L);
    if (argc < 2) return raise_error(L, "redis.log() requires two arguments or more.");
    if (!lua_isnumber(L, -argc))
        return raise_error(L, "First argument must be a number (log level).");
    int level = (int)lua_tonumber(L, -argc);
    if (level < 0 || level > 3) return raise_error(L, "Invalid debug level.");
    return 0; /* the fake keeps no log */
}

static int redis_setresp(lua_State *L)
{
    fri_scripting *sc = running_or_raise(L, "redis.setresp");
    if (lua_gettop(L) != 1) return raise_error(L, "redis.setresp() requires one argument.");
    int resp = (int)lua_tonumber(L, -1);
    if (resp != 2 && resp != 3) return raise_error(L, "RESP version must be 2 or 3.");
    sc->run->resp = resp;
    return 0;
}

static int redis_breakpoint(lua_State *L)
{
    lua_pushboolean(L, 0); /* no debugging session: never stops */
    return 1;
}

static int redis_debug(lua_State *L)
{
    (void)L;
    return 0;
}

static int redis_replicate_commands(lua_State *L)
{
    lua_pushboolean(L, 1);
    return 1;
}

/* ----- The interpreter ------------------------------------------------------------------ */

static void set_fn(lua_State *L, const char *name, lua_CFunction f)
{
    lua_pushcfunction(L, f);
    lua_setfield(L, -2, name);
}

static void set_num(lua_State *L, const char *name, lua_Number n)
{
    lua_pushnumber(L, n);
    lua_setfield(L, -2, name);
}

static void open_lib(lua_State *L, const char *name, lua_CFunction f)
{
    lua_pushcfunction(L, f);
    lua_pushstring(L, name);
    lua_call(L, 1, 1);
    if (name[0] && lua_istable(L, -1)) lua_setglobal(L, name);
    else lua_pop(L, 1);
}

static int register_function(lua_State *L);

/* The table FUNCTION LOAD's code runs against: `redis` with register_function, log and
 * the version, nothing else (a missing name is the usual error). */
static void setup_library_api(lua_State *L)
{
    lua_newtable(L); /* the api's globals */
    lua_newtable(L); /* its redis */
    set_fn(L, "register_function", register_function);
    set_fn(L, "log", redis_log);
    set_num(L, "LOG_DEBUG", 0);
    set_num(L, "LOG_VERBOSE", 1);
    set_num(L, "LOG_NOTICE", 2);
    set_num(L, "LOG_WARNING", 3);
    set_num(L, "REDIS_VERSION_NUM", 0x0007000f);
    lua_pushstring(L, FR_REDIS_VERSION);
    lua_setfield(L, -2, "REDIS_VERSION");
    protect_top(L, globals_index_strict);
    lua_setfield(L, -2, "redis");
    lua_setfield(L, LUA_REGISTRYINDEX, REG_LIBAPI);
}

/* Builds a sandboxed interpreter: EVAL's (functions == 0) or the functions engine's, which
 * has no redis.breakpoint/debug/replicate_commands and no global error handler, and a
 * load-time API.  NULL when out of memory. */
static lua_State *lua_setup(fri_scripting *sc, int functions)
{
    lua_State *L = lua_newstate(lua_alloc, sc);
    if (!L) return NULL;
    lua_pushlightuserdata(L, sc);
    lua_setfield(L, LUA_REGISTRYINDEX, REG_SCRIPTING);
    lua_newtable(L); /* the set of read-only tables, weak keys */
    lua_newtable(L);
    lua_pushstring(L, "k");
    lua_setfield(L, -2, "__mode");
    lua_setmetatable(L, -2);
    lua_setfield(L, LUA_REGISTRYINDEX, REG_RO);

    open_lib(L, "", luaopen_base);
    open_lib(L, LUA_TABLIBNAME, luaopen_table);
    open_lib(L, LUA_STRLIBNAME, luaopen_string);
    open_lib(L, LUA_MATHLIBNAME, luaopen_math);
    open_lib(L, "cjson", luaopen_cjson);
    open_lib(L, "struct", fri_luaopen_struct);
    open_lib(L, "cmsgpack", fri_luaopen_cmsgpack);
    open_lib(L, "bit", luaopen_bit);
    /* what Redis's allow list keeps out of the globals */
    static const char *const removed[] = {"dofile", "loadfile", "print", "module", "require",
                                          "package", "getfenv", "setfenv", "newproxy", NULL};
    for (const char *const *r = removed; *r; r++) {
        lua_pushnil(L);
        lua_setglobal(L, *r);
    }
    lua_getglobal(L, "setmetatable");
    lua_setglobal(L, "fri_setmetatable"); /* moved to the registry below */
    lua_pushcfunction(L, safe_setmetatable);
    lua_setglobal(L, "setmetatable");
    lua_pushcfunction(L, safe_rawset);
    lua_setglobal(L, "rawset");
    lua_pushcfunction(L, safe_rawget);
    lua_setglobal(L, "rawget");
    lua_pushcfunction(L, safe_next);
    lua_setglobal(L, "next");
    lua_pushcfunction(L, safe_pairs);
    lua_setglobal(L, "pairs");
    lua_pushcfunction(L, compat_pcall);
    lua_setglobal(L, "pcall");
    lua_pushcfunction(L, safe_loadstring);
    lua_setglobal(L, "loadstring");

    lua_newtable(L); /* redis */
    set_fn(L, "call", redis_call);
    set_fn(L, "pcall", redis_pcall);
    set_fn(L, "log", redis_log);
    set_num(L, "LOG_DEBUG", 0);
    set_num(L, "LOG_VERBOSE", 1);
    set_num(L, "LOG_NOTICE", 2);
    set_num(L, "LOG_WARNING", 3);
    set_num(L, "REDIS_VERSION_NUM", 0x0007000f);
    lua_pushstring(L, FR_REDIS_VERSION);
    lua_setfield(L, -2, "REDIS_VERSION");
    set_fn(L, "setresp", redis_setresp);
    set_fn(L, "sha1hex", redis_sha1hex);
    set_fn(L, "error_reply", redis_error_reply);
    set_fn(L, "status_reply", redis_status_reply);
    set_fn(L, "set_repl", redis_set_repl);
    set_num(L, "REPL_NONE", 0);
    set_num(L, "REPL_AOF", 1);
    set_num(L, "REPL_SLAVE", 2);
    set_num(L, "REPL_REPLICA", 2);
    set_num(L, "REPL_ALL", 3);
    set_fn(L, "acl_check_cmd", redis_acl_check_cmd);
    if (!functions) {
        set_fn(L, "breakpoint", redis_breakpoint);
        set_fn(L, "debug", redis_debug);
        set_fn(L, "replicate_commands", redis_replicate_commands);
    }
    lua_setglobal(L, "redis");

    lua_getglobal(L, "math");
    set_fn(L, "random", math_random);
    set_fn(L, "randomseed", math_randomseed);
    lua_pop(L, 1);

    lua_pushcfunction(L, err_handler);
    lua_pushvalue(L, -1);
    lua_setfield(L, LUA_REGISTRYINDEX, REG_HANDLER);
    if (!functions) lua_setglobal(L, "__redis__err__handler");
    else lua_pop(L, 1);
    if (functions) setup_library_api(L);

    /* The real globals go behind a read-only proxy, each library table too. */
    lua_pushvalue(L, LUA_GLOBALSINDEX);
    lua_getfield(L, -1, "fri_setmetatable");
    lua_setfield(L, LUA_REGISTRYINDEX, "fri_setmetatable");
    lua_pushnil(L);
    lua_setfield(L, -2, "fri_setmetatable");
    static const char *const libs[] = {"redis", "string", "table", "math", "cjson", "struct",
                                       "cmsgpack", "bit", "coroutine", NULL};
    for (const char *const *lib = libs; *lib; lib++) {
        lua_getfield(L, -1, *lib);
        if (!lua_istable(L, -1)) {
            lua_pop(L, 1);
            continue;
        }
        protect_top(L, NULL);
        lua_setfield(L, -2, *lib);
    }
    /* methods of strings ("x"):len() read the string library through its proxy */
    lua_pushliteral(L, "");
    if (lua_getmetatable(L, -1)) {
        lua_getfield(L, -3, "string");
        lua_setfield(L, -2, "__index");
        lua_pop(L, 1);
    }
    lua_pop(L, 1);
    lua_pushvalue(L, -1);
    lua_setfield(L, LUA_REGISTRYINDEX, REG_GLOBALS);
    lua_pushvalue(L, -1);
    protect_top(L, globals_index);
    lua_pushvalue(L, -1);
    lua_setfield(L, -3, "_G");
    lua_replace(L, LUA_GLOBALSINDEX);
    lua_pop(L, 1);
    return L;
}

fri_scripting *fri_scripting_get(fr_server *s)
{
    if (s->scripting) return s->scripting;
    fri_scripting *sc = fri_calloc(1, sizeof(*sc));
    if (!sc) return NULL;
    sc->mem_limit = (size_t)1 << 30;
    sc->rand48 = RAND48_INIT;
    sc->scripts = fri_dict_new();
    int saved_errno = s->redis_errno;
    sc->lua_client = fr_client_new(s);
    s->redis_errno = saved_errno; /* Redis makes its scripting client at start-up */
    if (sc->lua_client) sc->lua_client->is_script = 1;
    if (sc->scripts && sc->lua_client) sc->lua = lua_setup(sc, 0);
    if (sc->lua) sc->flua = lua_setup(sc, 1);
    if (!sc->scripts || !sc->lua_client || !sc->lua || !sc->flua) {
        if (sc->lua) lua_close(sc->lua);
        if (sc->flua) lua_close(sc->flua);
        if (sc->lua_client) fr_client_free(sc->lua_client);
        if (sc->scripts) fri_dict_free(sc->scripts, NULL);
        fri_free(sc);
        return NULL;
    }
    s->scripting = sc;
    return sc;
}

static void free_script_val(fri_val *v)
{
    fri_lua_script *ls = v->ptr;
    if (!ls) return;
    fri_str_free(ls->body);
    fri_free(ls);
}

void fri_scripting_free(fr_server *s)
{
    fri_scripting *sc = s->scripting;
    if (!sc) return;
    fri_functions_free(sc);
    lua_close(sc->lua);
    lua_close(sc->flua);
    fri_dict_free(sc->scripts, free_script_val);
    /* the scripting client is freed with the server's other clients */
    fri_free(sc);
    s->scripting = NULL;
}

int fri_scripting_reset(fr_server *s)
{
    fri_scripting *sc = s->scripting;
    if (!sc) return 0;
    lua_close(sc->lua);
    sc->lua = NULL;
    fri_dict_clear(sc->scripts, free_script_val);
    sc->lua = lua_setup(sc, 0);
    if (!sc->lua) {
        /* no interpreter: drop the whole state, the next script makes a new one */
        fri_functions_free(sc);
        lua_close(sc->flua);
        fri_dict_free(sc->scripts, NULL);
        fr_client_free(sc->lua_client);
        fri_free(sc);
        s->scripting = NULL;
        return -1;
    }
    return 0;
}

int fri_lua_compile(fri_scripting *sc, const char *name, const char *body, size_t len,
                    char *err, size_t cap)
{
    lua_State *L = sc->lua;
    /* Redis's Lua never loads precompiled chunks: text that starts with their signature
     * byte is parsed as source (a leading space changes no line number) */
    char *copy = NULL;
    if (len > 0 && body[0] == LUA_SIGNATURE[0]) {
        copy = fri_malloc(len + 1);
        if (!copy) {
            snprintf(err, cap, "not enough memory");
            return -1;
        }
        copy[0] = ' ';
        memcpy(copy + 1, body, len);
        body = copy;
        len++;
    }
    int failed = luaL_loadbuffer(L, body, len, "@user_script");
    fri_free(copy);
    if (failed) {
        snprintf(err, cap, "%s", lua_tostring(L, -1) ? lua_tostring(L, -1) : "?");
        lua_pop(L, 1);
        return -1;
    }
    lua_setfield(L, LUA_REGISTRYINDEX, name);
    return 0;
}

/* ----- Running ---------------------------------------------------------------------- */

static int64_t mono_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* How long the run has lasted: the wall clock on a server that reads it, else its
 * instruction count (FRI_LUA_STEPS_PER_MS instructions per virtual millisecond). */
static int64_t run_elapsed_ms(const fr_server *s, const fri_script_run *run)
{
    if (s->wall_clock) return mono_ms() - run->start_mono_ms;
    return (int64_t)(run->steps * FRI_LUA_HOOK_STEPS / FRI_LUA_STEPS_PER_MS);
}

int64_t fri_script_run_duration_ms(const fr_server *s, const fri_script_run *run)
{
    return run_elapsed_ms(s, run);
}

static void kill_hook(lua_State *L, lua_Debug *ar);

/* Every FRI_LUA_HOOK_STEPS instructions (Redis's luaMaskCountHook + scriptInterrupt):
 * past busy-reply-threshold the run is timed out and the server's busy hook runs (a
 * server serves its other clients there, which get -BUSY); SCRIPT KILL ends it. */
static void count_hook(lua_State *L, lua_Debug *ar)
{
    (void)ar;
    fri_scripting *sc = scripting_of(L);
    fri_script_run *run = sc->run;
    if (!run) return;
    fr_server *s = run->caller->srv;
    run->steps++;
    if (!(run->flags & FRI_RUN_TIMEDOUT)) {
        if (run_elapsed_ms(s, run) < s->tun.busy_reply_threshold) return;
        run->flags |= FRI_RUN_TIMEDOUT;
    }
    if (s->busy_hook) {
        int64_t cmd_ms = s->cmd_ms;
        uint32_t cmd_lru = s->cmd_lru;
        s->busy_hook(s, s->busy_hook_ctx);
        s->cmd_ms = cmd_ms;
        s->cmd_lru = cmd_lru;
    }
    if (run->flags & FRI_RUN_KILLED) {
        /* every line from now on fails too, so a pcall cannot catch the kill for good */
        lua_sethook(L, kill_hook, LUA_MASKLINE, 0);
        raise_error(L, "Script killed by user with SCRIPT KILL...");
    }
}

static void kill_hook(lua_State *L, lua_Debug *ar)
{
    (void)ar;
    raise_error(L, "Script killed by user with SCRIPT KILL...");
}

int fri_script_numkeys_check(fr_client *c, long long numkeys)
{
    if (numkeys > c->argc - 3) {
        fri_reply_error(c, "ERR Number of keys can't be greater than number of args");
        return -1;
    }
    if (numkeys < 0) {
        fri_reply_error(c, "ERR Number of keys can't be negative");
        return -1;
    }
    return 0;
}

int fri_script_flags_check(fr_client *c, unsigned flags, int ro)
{
    fr_server *s = c->srv;
    const char *err = NULL;
    if ((flags & FRI_SFLAG_NO_CLUSTER) && s->cluster_enabled)
        err = "ERR Can not run script on cluster, 'no-cluster' flag is set.";
    else if (!(flags & FRI_SFLAG_NO_WRITES) && ro)
        err = "ERR Can not execute a script with write flag using *_ro command.";
    else if (!(flags & FRI_SFLAG_NO_WRITES) && fri_noreplicas(s))
        err = FRI_ERR_NOREPLICAS;
    else if (s->pre_command_oom && !(flags & (FRI_SFLAG_ALLOW_OOM | FRI_SFLAG_NO_WRITES)))
        err = FRI_ERR_SCRIPT_OOM;
    if (!err) return 0;
    fri_reply_error(c, err);
    return -1;
}

/* Sets global `name` (in the real globals) to an array of the arguments. */
static void set_array_global(lua_State *L, const char *name, const fri_arg *a, int n)
{
    lua_getfield(L, LUA_REGISTRYINDEX, REG_GLOBALS);
    lua_createtable(L, n, 0);
    for (int j = 0; j < n; j++) {
        lua_pushlstring(L, a[j].ptr, a[j].len);
        lua_rawseti(L, -2, j + 1);
    }
    lua_setfield(L, -2, name);
    lua_pop(L, 1);
}

void fri_script_run_begin(fr_server *s, fri_script_run *run, fr_client *caller,
                          const char *funcname, unsigned script_flags, int ro)
{
    fri_scripting *sc = s->scripting;
    memset(run, 0, sizeof(*run));
    run->caller = caller;
    snprintf(run->funcname, sizeof(run->funcname), "%s", funcname);
    run->resp = 2;
    run->slot = -1;
    if (ro || (!(script_flags & FRI_SFLAG_EVAL_COMPAT) && (script_flags & FRI_SFLAG_NO_WRITES)))
        run->flags |= FRI_RUN_READ_ONLY;
    if ((script_flags & FRI_SFLAG_EVAL_COMPAT) || (script_flags & FRI_SFLAG_ALLOW_CROSS_SLOT))
        run->flags |= FRI_RUN_CROSS_SLOT;
    if (!(script_flags & FRI_SFLAG_EVAL_COMPAT) && (script_flags & FRI_SFLAG_ALLOW_OOM))
        run->flags |= FRI_RUN_ALLOW_OOM;
    if (s->wall_clock) run->start_mono_ms = mono_ms();
    sc->lua_client->db = caller->db; /* the caller's database, SELECT in the script apart */
    sc->run = run;
}

void fri_script_run_end(fr_server *s, fri_script_run *run)
{
    (void)run;
    s->scripting->run = NULL;
}

/* Calls the function below its nargs arguments (the handler below it) and answers the
 * caller (Redis's luaCallFunction). */
static void run_call(fri_scripting *sc, lua_State *L, fri_script_run *run, int nargs)
{
    fr_client *c = run->caller;
    fr_server *s = c->srv;
    int hook = s->tun.busy_reply_threshold > 0;
    if (hook) lua_sethook(L, count_hook, LUA_MASKCOUNT, FRI_LUA_HOOK_STEPS);
    int err = lua_pcall(L, nargs, 1, -(nargs + 2));
    if (++s->script_gc_count == 50) { /* Redis's LUA_GC_CYCLE_PERIOD */
        lua_gc(L, LUA_GCSTEP, 50);
        s->script_gc_count = 0;
    }
    if (err) {
        if (!lua_istable(L, -1)) {
            const char *msg = lua_isstring(L, -1) ? lua_tostring(L, -1) : "execution failure";
            fri_reply_errorf(c, "Error running script %s, %.100s\n", run->funcname, msg);
        } else {
            reply_error_table(c, L, run);
        }
        lua_pop(L, 1);
    } else {
        reply_from_lua(c, L, run->resp);
    }
    if (hook) lua_sethook(L, NULL, 0, 0);
    lua_pop(L, 1); /* the handler */
    (void)sc;
}

void fri_lua_run_eval(fri_scripting *sc, fri_script_run *run, const char *name,
                      const fri_arg *keys, int nkeys, const fri_arg *args, int nargs)
{
    lua_State *L = sc->lua;
    lua_getfield(L, LUA_REGISTRYINDEX, REG_HANDLER);
    lua_getfield(L, LUA_REGISTRYINDEX, name);
    run->flags |= FRI_RUN_EVAL_MODE;
    set_array_global(L, "KEYS", keys, nkeys);
    set_array_global(L, "ARGV", args, nargs);
    run_call(sc, L, run, 0);
}

static void push_array(lua_State *L, const fri_arg *a, int n)
{
    lua_createtable(L, n, 0);
    for (int j = 0; j < n; j++) {
        lua_pushlstring(L, a[j].ptr, a[j].len);
        lua_rawseti(L, -2, j + 1);
    }
}

void fri_lua_run_function(fri_scripting *sc, fri_script_run *run, const fri_function *fn,
                          const fri_arg *keys, int nkeys, const fri_arg *args, int nargs)
{
    lua_State *L = sc->flua;
    lua_getfield(L, LUA_REGISTRYINDEX, REG_HANDLER);
    lua_rawgeti(L, LUA_REGISTRYINDEX, fn->ref);
    push_array(L, keys, nkeys);
    push_array(L, args, nargs);
    run_call(sc, L, run, 2);
}

/* ----- Functions: FUNCTION LOAD's registration ----------------------------------------- */

/* Redis's functionsVerifyName: [A-Za-z0-9_]+. */
int fri_function_name_ok(const char *p, size_t len)
{
    if (len == 0) return 0;
    for (size_t i = 0; i < len; i++) {
        char ch = p[i];
        if (!((ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9') ||
              ch == '_'))
            return 0;
    }
    return 1;
}

/* The flags of a register_function flags table: 0, or -1 for a value that is not a known
 * flag name (case-insensitive). */
static int read_flags(lua_State *L, unsigned *flags)
{
    static const struct { unsigned flag; const char *name; } names[] = {
        {FRI_SFLAG_NO_WRITES, "no-writes"},     {FRI_SFLAG_ALLOW_OOM, "allow-oom"},
        {FRI_SFLAG_ALLOW_STALE, "allow-stale"}, {FRI_SFLAG_NO_CLUSTER, "no-cluster"},
        {FRI_SFLAG_ALLOW_CROSS_SLOT, "allow-cross-slot-keys"},
    };
    unsigned f = 0;
    for (int j = 1;; j++) {
        lua_pushnumber(L, j);
        lua_gettable(L, -2);
        if (lua_isnil(L, -1)) {
            lua_pop(L, 1);
            break;
        }
        if (!lua_isstring(L, -1)) {
            lua_pop(L, 1);
            return -1;
        }
        const char *v = lua_tostring(L, -1);
        size_t k;
        for (k = 0; k < sizeof(names) / sizeof(names[0]); k++)
            if (strcasecmp(names[k].name, v) == 0) break;
        lua_pop(L, 1);
        if (k == sizeof(names) / sizeof(names[0])) return -1;
        f |= names[k].flag;
    }
    *flags = f;
    return 0;
}

/* A named string argument of redis.register_function (the value on top of the stack):
 * copied into dst, *have set; err_if_not when it is not a string. */
static const char *take_string_arg(lua_State *L, fri_buf *dst, int *have, const char *err_if_not)
{
    if (!lua_isstring(L, -1)) return err_if_not;
    size_t n;
    const char *v = lua_tolstring(L, -1, &n);
    dst->len = 0;
    fri_buf_append(dst, v, n);
    *have = 1;
    return NULL;
}

/* redis.register_function(name, callback) or ({function_name=, callback=, flags=,
 * description=}) during FUNCTION LOAD: the function joins the library being loaded. */
static int register_function(lua_State *L)
{
    fri_scripting *sc = scripting_of(L);
    fri_library *lib = sc->loading;
    if (!lib)
        return raise_error(L,
                           "redis.register_function can only be called on FUNCTION LOAD command");
    const char *err = NULL;
    fri_buf name = {0}, desc = {0};
    int have_name = 0, have_desc = 0, ref = LUA_NOREF;
    unsigned flags = 0;
    int argc = lua_gettop(L);
    if (argc < 1 || argc > 2) {
        err = "wrong number of arguments to redis.register_function";
    } else if (argc == 1) {
        if (!lua_istable(L, 1)) {
            err = "calling redis.register_function with a single argument is only applicable "
                  "to Lua table (representing named arguments).";
        } else {
            lua_pushnil(L);
            while (!err && lua_next(L, 1)) {
                if (!lua_isstring(L, -2)) {
                    err = "named argument key given to redis.register_function is not a string";
                    break;
                }
                lua_pushvalue(L, -2);
                const char *key = lua_tostring(L, -1);
                lua_pop(L, 1);
                if (strcasecmp(key, "function_name") == 0) {
                    err = take_string_arg(L, &name, &have_name,
                                          "function_name argument given to "
                                          "redis.register_function must be a string");
                    if (err) break;
                } else if (strcasecmp(key, "description") == 0) {
                    err = take_string_arg(L, &desc, &have_desc,
                                          "description argument given to "
                                          "redis.register_function must be a string");
                    if (err) break;
                } else if (strcasecmp(key, "callback") == 0) {
                    if (!lua_isfunction(L, -1)) {
                        err = "callback argument given to redis.register_function must be a "
                              "function";
                        break;
                    }
                    if (ref != LUA_NOREF) luaL_unref(L, LUA_REGISTRYINDEX, ref);
                    ref = luaL_ref(L, LUA_REGISTRYINDEX);
                    continue; /* luaL_ref popped the value */
                } else if (strcasecmp(key, "flags") == 0) {
                    if (!lua_istable(L, -1)) {
                        err = "flags argument to redis.register_function must be a table "
                              "representing function flags";
                        break;
                    }
                    if (read_flags(L, &flags) < 0) {
                        err = "unknown flag given";
                        break;
                    }
                } else {
                    err = "unknown argument given to redis.register_function";
                    break;
                }
                lua_pop(L, 1);
            }
            if (!err && !have_name) err = "redis.register_function must get a function name argument";
            if (!err && ref == LUA_NOREF) err = "redis.register_function must get a callback argument";
        }
    } else {
        if (!lua_isstring(L, 1)) {
            err = "first argument to redis.register_function must be a string";
        } else if (!lua_isfunction(L, 2)) {
            err = "second argument to redis.register_function must be a function";
        } else {
            size_t n;
            const char *v = lua_tolstring(L, 1, &n);
            fri_buf_append(&name, v, n);
            have_name = 1;
            lua_settop(L, 2);
            ref = luaL_ref(L, LUA_REGISTRYINDEX);
        }
    }
    if (!err && !fri_function_name_ok(name.p, name.len))
        err = "Library names can only contain letters, numbers, or underscores(_) and must be at "
              "least one character long";
    if (!err && fri_dict_find(lib->functions, name.p, name.len))
        err = "Function already exists in the library";
    fri_function *fn = NULL;
    if (!err) {
        fn = fri_calloc(1, sizeof(*fn));
        int created;
        fri_dent *e = fn ? fri_dict_add(lib->functions, name.p, name.len, &created) : NULL;
        if (!e) {
            fri_free(fn);
            err = "not enough memory";
        } else {
            fn->name = fri_str_new(name.p, name.len);
            fn->desc = have_desc ? fri_str_new(desc.p ? desc.p : "", desc.len) : NULL;
            fn->flags = flags;
            fn->ref = ref;
            fn->lib = lib;
            e->v.ptr = fn;
        }
    }
    fri_buf_free(&name);
    fri_buf_free(&desc);
    if (err) {
        if (ref != LUA_NOREF) luaL_unref(L, LUA_REGISTRYINDEX, ref);
        lua_settop(L, 0);
        return raise_error(L, err);
    }
    return 0;
}

/* FUNCTION LOAD's time limit (Redis's LOAD_TIMEOUT_MS), measured as a script's time. */
#define LOAD_TIMEOUT_MS 500

static void load_hook(lua_State *L, lua_Debug *ar)
{
    (void)ar;
    fri_scripting *sc = scripting_of(L);
    sc->load_steps++;
    int64_t elapsed = sc->load_wall ? mono_ms() - sc->load_start_ms
                                    : (int64_t)(sc->load_steps * FRI_LUA_HOOK_STEPS /
                                                FRI_LUA_STEPS_PER_MS);
    if (elapsed > LOAD_TIMEOUT_MS) {
        lua_sethook(L, load_hook, LUA_MASKLINE, 0);
        raise_error(L, "FUNCTION LOAD timeout");
    }
}

int fri_lua_function_load(fri_scripting *sc, fr_server *s, fri_library *lib, const char *code,
                          size_t len, fri_buf *err)
{
    lua_State *L = sc->flua;
    if (luaL_loadbuffer(L, code, len, "@user_function")) {
        fri_buf_printf(err, "Error compiling function: %s", lua_tostring(L, -1));
        lua_pop(L, 1);
        return -1;
    }
    sc->loading = lib;
    sc->load_steps = 0;
    sc->load_wall = s->wall_clock;
    if (sc->load_wall) sc->load_start_ms = mono_ms();
    lua_sethook(L, load_hook, LUA_MASKCOUNT, FRI_LUA_HOOK_STEPS);
    int rc = 0;
    if (lua_pcall(L, 0, 0, 0)) {
        fri_buf_printf(err, "Error registering functions: ");
        if (lua_isstring(L, -1)) {
            fri_buf_printf(err, "ERR %s", lua_tostring(L, -1));
        } else if (lua_istable(L, -1)) {
            lua_getfield(L, -1, "err");
            if (lua_isstring(L, -1)) fri_buf_printf(err, "%s", lua_tostring(L, -1));
            lua_pop(L, 1);
        }
        lua_pop(L, 1);
        rc = -1;
    }
    lua_sethook(L, NULL, 0, 0);
    sc->loading = NULL;
    return rc;
}

void fri_lua_unref(fri_scripting *sc, int ref) { luaL_unref(sc->flua, LUA_REGISTRYINDEX, ref); }
