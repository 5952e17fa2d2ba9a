/* lua_cmsgpack.c -- the `cmsgpack` library Redis gives scripts (MessagePack), written here
 * because Debian packages none for Lua 5.1: cmsgpack.pack(v, ...) concatenates the
 * encodings of its arguments; cmsgpack.unpack(s) decodes every value in s;
 * cmsgpack.unpack_one(s [, offset]) and cmsgpack.unpack_limit(s, n [, offset]) return the
 * next offset (-1 at the end) then one or n values.  Behaviour as Redis's bundled
 * lua_cmsgpack 0.4: integers in the smallest int/uint form, other numbers as float 32 when
 * exact else float 64, strings as fixstr/str8/16/32, a table as an array when its keys are
 * exactly 1..n else a map, tables nested 16 deep (cycles) as nil, errors "Missing bytes in
 * input." and "Bad data format in input.". */
#include <lauxlib.h>
#include <lua.h>

#include <limits.h>
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "script_int.h"

#define MAX_NESTING 16

static void put(fri_buf *b, const unsigned char *p, size_t n) { fri_buf_append(b, p, n); }

/* A header byte then n big-endian bytes of v. */
static void put_be(fri_buf *b, unsigned char code, uint64_t v, int n)
{
    unsigned char out[9];
    out[0] = code;
    for (int i = 0; i < n; i++) out[1 + i] = (unsigned char)(v >> (8 * (n - 1 - i)));
    put(b, out, (size_t)n + 1);
}

static void enc_int(fri_buf *b, int64_t n)
{
    if (n >= 0) {
        if (n <= 127) put_be(b, (unsigned char)n, 0, 0);
        else if (n <= 0xff) put_be(b, 0xcc, (uint64_t)n, 1);
        else if (n <= 0xffff) put_be(b, 0xcd, (uint64_t)n, 2);
        else if (n <= 0xffffffffLL) put_be(b, 0xce, (uint64_t)n, 4);
        else put_be(b, 0xcf, (uint64_t)n, 8);
    } else {
        if (n >= -32) put_be(b, (unsigned char)(int8_t)n, 0, 0);
        else if (n >= -128) put_be(b, 0xd0, (uint64_t)n, 1);
        else if (n >= -32768) put_be(b, 0xd1, (uint64_t)n, 2);
        else if (n >= -2147483648LL) put_be(b, 0xd2, (uint64_t)n, 4);
        else put_be(b, 0xd3, (uint64_t)n, 8);
    }
}

static void enc_number(lua_State *L, fri_buf *b)
{
    lua_Number n = lua_tonumber(L, -1);
    if (!isinf(n) && n == n && n >= -9223372036854775808.0 && n < 9223372036854775808.0 &&
        (lua_Number)(int64_t)n == n) {
        enc_int(b, (int64_t)lua_tointeger(L, -1));
        return;
    }
    float f = (float)n;
    if ((double)f == n) {
        uint32_t u;
        memcpy(&u, &f, 4);
        put_be(b, 0xca, u, 4);
    } else {
        uint64_t u;
        double d = n;
        memcpy(&u, &d, 8);
        put_be(b, 0xcb, u, 8);
    }
}

static void enc_len(fri_buf *b, size_t n, unsigned char fix, unsigned char fixmax,
                    unsigned char c16, unsigned char c32)
{
    if (n <= fixmax) put_be(b, (unsigned char)(fix | n), 0, 0);
    else if (n <= 0xffff) put_be(b, c16, n, 2);
    else put_be(b, c32, n, 4);
}

/* 1 when the table at the top has exactly the keys 1..n. */
static int is_array(lua_State *L)
{
    int top = lua_gettop(L);
    lua_Number max = 0, count = 0;
    lua_pushnil(L);
    while (lua_next(L, -2)) {
        lua_pop(L, 1);
        lua_Number n;
        if (lua_type(L, -1) != LUA_TNUMBER || (n = lua_tonumber(L, -1)) <= 0 || isinf(n) ||
            !(n < 2147483648.0 && (lua_Number)(int)n == n)) {
            lua_settop(L, top);
            return 0;
        }
        if (n > max) max = n;
        count++;
    }
    lua_settop(L, top);
    return max == count;
}

static void enc_value(lua_State *L, fri_buf *b, int level);

static void enc_table(lua_State *L, fri_buf *b, int level)
{
    luaL_checkstack(L, 3, "in function mp_encode_lua_table");
    if (is_array(L)) {
        size_t len = lua_objlen(L, -1);
        enc_len(b, len, 0x90, 15, 0xdc, 0xdd);
        for (size_t j = 1; j <= len; j++) {
            lua_pushnumber(L, (lua_Number)j);
            lua_gettable(L, -2);
            enc_value(L, b, level + 1);
        }
        return;
    }
    size_t len = 0;
    lua_pushnil(L);
    while (lua_next(L, -2)) {
        lua_pop(L, 1);
        len++;
    }
    enc_len(b, len, 0x80, 15, 0xde, 0xdf);
    lua_pushnil(L);
    while (lua_next(L, -2)) {
        lua_pushvalue(L, -2);
        enc_value(L, b, level + 1); /* the key */
        enc_value(L, b, level + 1); /* the value */
    }
}

/* Encodes the value at the top and pops it. */
static void enc_value(lua_State *L, fri_buf *b, int level)
{
    int t = lua_type(L, -1);
    if (t == LUA_TTABLE && level == MAX_NESTING) t = LUA_TNIL;
    switch (t) {
    case LUA_TSTRING: {
        size_t len;
        const char *s = lua_tolstring(L, -1, &len);
        if (len < 32) put_be(b, (unsigned char)(0xa0 | len), 0, 0);
        else if (len <= 0xff) put_be(b, 0xd9, len, 1);
        else if (len <= 0xffff) put_be(b, 0xda, len, 2);
        else put_be(b, 0xdb, len, 4);
        fri_buf_append(b, s, len);
        break;
    }
    case LUA_TBOOLEAN:
        put_be(b, lua_toboolean(L, -1) ? 0xc3 : 0xc2, 0, 0);
        break;
    case LUA_TNUMBER:
        enc_number(L, b);
        break;
    case LUA_TTABLE:
        enc_table(L, b, level);
        break;
    default:
        put_be(b, 0xc0, 0, 0);
    }
    lua_pop(L, 1);
}

/* cmsgpack.pack(...): each argument encoded, concatenated.  The bytes gather in a C
 * buffer (the encoder pushes and pops on the Lua stack as it walks tables). */
static int mp_pack(lua_State *L)
{
    int nargs = lua_gettop(L);
    if (nargs == 0) return luaL_argerror(L, 0, "MessagePack pack needs input.");
    if (!lua_checkstack(L, nargs)) return luaL_argerror(L, 0, "Too many arguments for MessagePack pack.");
    fri_buf b = {0};
    for (int i = 1; i <= nargs; i++) {
        lua_pushvalue(L, i);
        enc_value(L, &b, 0);
    }
    lua_pushlstring(L, b.p ? b.p : "", b.len);
    fri_buf_free(&b);
    return 1;
}

/* ----- Decoding ------------------------------------------------------------------------ */

typedef struct cur {
    const unsigned char *p;
    size_t left;
    int err; /* 0, 1: missing bytes, 2: bad format */
} cur;

static int need(cur *c, size_t n)
{
    if (c->left < n) {
        c->err = 1;
        return 0;
    }
    return 1;
}

static uint64_t be(const unsigned char *p, int n)
{
    uint64_t v = 0;
    for (int i = 0; i < n; i++) v = (v << 8) | p[i];
    return v;
}

static void dec_value(lua_State *L, cur *c);

static void dec_array(lua_State *L, cur *c, size_t len)
{
    lua_newtable(L);
    luaL_checkstack(L, 1, "in function mp_decode_to_lua_array");
    for (size_t i = 1; i <= len; i++) {
        lua_pushnumber(L, (lua_Number)i);
        dec_value(L, c);
        if (c->err) return;
        lua_settable(L, -3);
    }
}

static void dec_map(lua_State *L, cur *c, size_t len)
{
    lua_newtable(L);
    while (len--) {
        dec_value(L, c);
        if (c->err) return;
        dec_value(L, c);
        if (c->err) return;
        lua_settable(L, -3);
    }
}

/* Pushes the next value (on error c->err is set and what was pushed is left). */
static void dec_value(lua_State *L, cur *c)
{
    if (!need(c, 1)) return;
    luaL_checkstack(L, 1, "too many return values at once; use unpack_one or unpack_limit "
                          "instead.");
    unsigned char t = c->p[0];
    static const struct { unsigned char code; int n; int kind; } fixed[] = {
        /* kind: 0 unsigned, 1 signed, 2 float, 3 double, 4 str, 5 array, 6 map */
        {0xcc, 1, 0}, {0xcd, 2, 0}, {0xce, 4, 0}, {0xcf, 8, 0}, {0xd0, 1, 1}, {0xd1, 2, 1},
        {0xd2, 4, 1}, {0xd3, 8, 1}, {0xca, 4, 2}, {0xcb, 8, 3}, {0xd9, 1, 4}, {0xda, 2, 4},
        {0xdb, 4, 4}, {0xdc, 2, 5}, {0xdd, 4, 5}, {0xde, 2, 6}, {0xdf, 4, 6},
    };
    for (size_t i = 0; i < sizeof(fixed) / sizeof(fixed[0]); i++) {
        if (fixed[i].code != t) continue;
        int n = fixed[i].n;
        if (!need(c, 1 + (size_t)n)) return;
        uint64_t v = be(c->p + 1, n);
        c->p += 1 + n;
        c->left -= 1 + (size_t)n;
        switch (fixed[i].kind) {
        case 0:
            lua_pushnumber(L, (lua_Number)v);
            break;
        case 1: {
            int64_t sv = n == 1 ? (int8_t)v : n == 2 ? (int16_t)v : n == 4 ? (int32_t)v : (int64_t)v;
            lua_pushnumber(L, (lua_Number)sv);
            break;
        }
        case 2: {
            uint32_t u = (uint32_t)v;
            float f;
            memcpy(&f, &u, 4);
            lua_pushnumber(L, f);
            break;
        }
        case 3: {
            double d;
            memcpy(&d, &v, 8);
            lua_pushnumber(L, d);
            break;
        }
        case 4:
            if (!need(c, v)) return;
            lua_pushlstring(L, (const char *)c->p, v);
            c->p += v;
            c->left -= v;
            break;
        case 5:
            dec_array(L, c, v);
            break;
        default:
            dec_map(L, c, v);
        }
        return;
    }
    switch (t) {
    case 0xc0:
        lua_pushnil(L);
        break;
    case 0xc2:
    case 0xc3:
        lua_pushboolean(L, t == 0xc3);
        break;
    default:
        if ((t & 0x80) == 0) {
            lua_pushnumber(L, t);
        } else if ((t & 0xe0) == 0xe0) {
            lua_pushnumber(L, (int8_t)t);
        } else if ((t & 0xe0) == 0xa0) {
            size_t l = t & 0x1f;
            if (!need(c, 1 + l)) return;
            lua_pushlstring(L, (const char *)c->p + 1, l);
            c->p += 1 + l;
            c->left -= 1 + l;
            return;
        } else if ((t & 0xf0) == 0x90 || (t & 0xf0) == 0x80) {
            c->p++;
            c->left--;
            if ((t & 0xf0) == 0x90) dec_array(L, c, t & 0xf);
            else dec_map(L, c, t & 0xf);
            return;
        } else {
            c->err = 2;
            return;
        }
    }
    c->p++;
    c->left--;
}

static int unpack_full(lua_State *L, lua_Integer limit, lua_Integer offset)
{
    size_t len;
    const char *s = luaL_checklstring(L, 1, &len);
    int all = !limit && !offset;
    if (offset < 0 || limit < 0)
        return luaL_error(L, "Invalid request to unpack with offset of %d and limit of %d.",
                          (int)offset, (int)len);
    if ((size_t)offset > len)
        return luaL_error(L, "Start offset %d greater than input length %d.", (int)offset,
                          (int)len);
    if (all) limit = INT_MAX;
    cur c = {(const unsigned char *)s + offset, len - (size_t)offset, 0};
    int cnt;
    for (cnt = 0; c.left > 0 && cnt < limit; cnt++) {
        dec_value(L, &c);
        if (c.err == 1) return luaL_error(L, "Missing bytes in input.");
        if (c.err == 2) return luaL_error(L, "Bad data format in input.");
    }
    if (!all) {
        luaL_checkstack(L, 1, "in function mp_unpack_full");
        lua_pushinteger(L, c.left == 0 ? -1 : (lua_Integer)(len - c.left));
        lua_insert(L, 2);
        cnt++;
    }
    return cnt;
}

static int mp_unpack(lua_State *L) { return unpack_full(L, 0, 0); }

static int mp_unpack_one(lua_State *L)
{
    lua_Integer offset = luaL_optinteger(L, 2, 0);
    lua_pop(L, lua_gettop(L) - 1);
    return unpack_full(L, 1, offset);
}

static int mp_unpack_limit(lua_State *L)
{
    lua_Integer limit = luaL_checkinteger(L, 2);
    lua_Integer offset = luaL_optinteger(L, 3, 0);
    lua_pop(L, lua_gettop(L) - 1);
    return unpack_full(L, limit, offset);
}

int fri_luaopen_cmsgpack(lua_State *L)
{
    static const luaL_Reg fns[] = {
        {"pack", mp_pack},
        {"unpack", mp_unpack},
        {"unpack_one", mp_unpack_one},
        {"unpack_limit", mp_unpack_limit},
        {NULL, NULL},
    };
    lua_newtable(L);
    luaL_register(L, NULL, fns); /* into the new table, in this order */
    lua_pushliteral(L, "cmsgpack");
    lua_setfield(L, -2, "_NAME");
    lua_pushliteral(L, "lua-cmsgpack 0.4.0");
    lua_setfield(L, -2, "_VERSION");
    lua_pushliteral(L, "Copyright (C) 2012, Salvatore Sanfilippo");
    lua_setfield(L, -2, "_COPYRIGHT");
    lua_pushliteral(L, "MessagePack C implementation for Lua");
    lua_setfield(L, -2, "_DESCRIPTION");
    return 1;
}
