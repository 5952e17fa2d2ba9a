/* lua_struct.c -- the `struct` library Redis gives scripts (Roberto Ierusalimschy's
 * binary packing library, 0.2), written here because Debian packages none for Lua 5.1:
 * struct.pack(fmt, ...), struct.unpack(fmt, s [, pos]) -> values..., next pos,
 * struct.size(fmt).  Format: '>' big endian, '<' little endian, '!n' alignment (power of
 * 2, default the native maximum), 'x' a zero byte, 'b'/'B' char, 'h'/'H' short, 'l'/'L'
 * long, 'T' size_t, 'i'/'I' int with an optional size in bytes (at most 32), 'f' float,
 * 'd' double, 'cN' N bytes (c0: the length comes from the value before it when
 * unpacking, the whole string when packing), 's' a zero-terminated string, ' ' ignored;
 * lower case signed, upper case unsigned.  Error texts as that library's. */
#include <lauxlib.h>
#include <lua.h>

#include <ctype.h>
#include <limits.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "script_int.h"

#define MAXINTSIZE 32
#define MAXALIGN 8 /* offsetof a double after a char on x86-64 */

typedef struct header {
    int big;   /* big endian */
    int align; /* current alignment */
} header;

static int is_digit(int c) { return c >= '0' && c <= '9'; }

static int getnum(lua_State *L, const char **fmt, int df)
{
    if (!is_digit(**fmt)) return df;
    int a = 0;
    do {
        if (a > (INT_MAX / 10) || a * 10 > (INT_MAX - (**fmt - '0')))
            luaL_error(L, "integral size overflow");
        a = a * 10 + *((*fmt)++) - '0';
    } while (is_digit(**fmt));
    return a;
}

static size_t optsize(lua_State *L, char opt, const char **fmt)
{
    switch (opt) {
    case 'B': case 'b': return 1;
    case 'H': case 'h': return sizeof(short);
    case 'L': case 'l': return sizeof(long);
    case 'T': return sizeof(size_t);
    case 'f': return sizeof(float);
    case 'd': return sizeof(double);
    case 'x': return 1;
    case 'c': return (size_t)getnum(L, fmt, 1);
    case 'i': case 'I': {
        int sz = getnum(L, fmt, sizeof(int));
        if (sz > MAXINTSIZE)
            luaL_error(L, "integral size %d is larger than limit of %d", sz, MAXINTSIZE);
        return (size_t)sz;
    }
    default: return 0;
    }
}

static int gettoalign(size_t len, header *h, int opt, size_t size)
{
    if (size == 0 || opt == 'c') return 0;
    if (size > (size_t)h->align) size = (size_t)h->align;
    return (int)((size - (len & (size - 1))) & (size - 1));
}

static void controloptions(lua_State *L, int opt, const char **fmt, header *h)
{
    switch (opt) {
    case ' ': return;
    case '>': h->big = 1; return;
    case '<': h->big = 0; return;
    case '!': {
        int a = getnum(L, fmt, MAXALIGN);
        if (a <= 0 || (a & (a - 1)) != 0) luaL_error(L, "alignment %d is not a power of 2", a);
        h->align = a;
        return;
    }
    default:
        lua_pushfstring(L, "invalid format option '%c'", opt);
        luaL_argerror(L, 1, lua_tostring(L, -1));
    }
}

static void putinteger(lua_State *L, fri_buf *b, int arg, int big, size_t size)
{
    lua_Number n = luaL_checknumber(L, arg);
    uint64_t value = n < 0 ? (uint64_t)(int64_t)n : (uint64_t)n;
    unsigned char buff[MAXINTSIZE];
    for (size_t i = 0; i < size; i++) {
        size_t pos = big ? size - 1 - i : i;
        buff[pos] = (unsigned char)(i < 8 ? (value >> (8 * i)) & 0xff : 0);
    }
    fri_buf_append(b, buff, size);
}

static void putbytes(fri_buf *b, const void *p, size_t size, int big)
{
    unsigned char tmp[8];
    memcpy(tmp, p, size);
    if (big) /* the machine is little endian */
        for (size_t i = 0; i < size / 2; i++) {
            unsigned char t = tmp[i];
            tmp[i] = tmp[size - 1 - i];
            tmp[size - 1 - i] = t;
        }
    fri_buf_append(b, tmp, size);
}

static int b_pack(lua_State *L)
{
    fri_buf b = {0};
    const char *fmt = luaL_checkstring(L, 1);
    header h = {0, 1};
    int arg = 2;
    size_t totalsize = 0;
    lua_pushnil(L); /* mark: the stack top must stay free of what luaL errors leave */
    while (*fmt != '\0') {
        int opt = *fmt++;
        size_t size = optsize(L, (char)opt, &fmt);
        int toalign = gettoalign(totalsize, &h, opt, size);
        totalsize += (size_t)toalign;
        while (toalign-- > 0) fri_buf_append(&b, "", 1);
        switch (opt) {
        case 'b': case 'B': case 'h': case 'H': case 'l': case 'L': case 'T': case 'i':
        case 'I':
            if (lua_type(L, arg) != LUA_TNUMBER && !lua_isnumber(L, arg)) fri_buf_free(&b);
            putinteger(L, &b, arg++, h.big, size);
            break;
        case 'x':
            fri_buf_append(&b, "", 1);
            break;
        case 'f': {
            if (!lua_isnumber(L, arg)) fri_buf_free(&b);
            float f = (float)luaL_checknumber(L, arg++);
            putbytes(&b, &f, size, h.big);
            break;
        }
        case 'd': {
            if (!lua_isnumber(L, arg)) fri_buf_free(&b);
            double d = luaL_checknumber(L, arg++);
            putbytes(&b, &d, size, h.big);
            break;
        }
        case 'c':
        case 's': {
            size_t l;
            if (!lua_isstring(L, arg)) fri_buf_free(&b);
            const char *s = luaL_checklstring(L, arg++, &l);
            if (size == 0) size = l;
            if (l < size) fri_buf_free(&b);
            luaL_argcheck(L, l >= size, arg, "string too short");
            fri_buf_append(&b, s, size);
            if (opt == 's') {
                fri_buf_append(&b, "", 1);
                size++;
            }
            break;
        }
        default:
            if (opt != ' ' && opt != '>' && opt != '<' && opt != '!') fri_buf_free(&b);
            controloptions(L, opt, &fmt, &h);
        }
        totalsize += size;
    }
    lua_pushlstring(L, b.p ? b.p : "", b.len);
    fri_buf_free(&b);
    return 1;
}

static lua_Number getinteger(const unsigned char *buff, int big, int issigned, size_t size)
{
    uint64_t l = 0;
    for (size_t i = 0; i < size; i++) {
        size_t pos = big ? i : size - 1 - i;
        l = (l << 8) | buff[pos];
    }
    if (!issigned || size == 0 || size > 8) return (lua_Number)l;
    uint64_t mask = ~(uint64_t)0 << (size * 8 - 1);
    if (l & mask) l |= mask;
    return (lua_Number)(int64_t)l;
}

static int b_unpack(lua_State *L)
{
    header h = {0, 1};
    const char *fmt = luaL_checkstring(L, 1);
    size_t ld;
    const char *data = luaL_checklstring(L, 2, &ld);
    lua_Integer ipos = luaL_optinteger(L, 3, 1);
    luaL_argcheck(L, ipos > 0, 3, "offset must be 1 or greater");
    size_t pos = (size_t)ipos - 1;
    int n = 0;
    while (*fmt) {
        int opt = *fmt++;
        size_t size = optsize(L, (char)opt, &fmt);
        pos += (size_t)gettoalign(pos, &h, opt, size);
        luaL_argcheck(L, size <= ld && pos <= ld - size, 2, "data string too short");
        luaL_checkstack(L, 2, "too many results");
        switch (opt) {
        case 'b': case 'B': case 'h': case 'H': case 'l': case 'L': case 'T': case 'i':
        case 'I': {
            int issigned = islower(opt);
            lua_pushnumber(L, getinteger((const unsigned char *)data + pos, h.big, issigned, size));
            n++;
            break;
        }
        case 'x':
            break;
        case 'f':
        case 'd': {
            /* the bytes in the machine's (little-endian) order, reversed for '>' */
            unsigned char tmp[sizeof(double)];
            for (size_t i = 0; i < size; i++)
                tmp[i] = (unsigned char)data[pos + (h.big ? size - 1 - i : i)];
            double d;
            if (opt == 'f') {
                float f;
                memcpy(&f, tmp, sizeof(f));
                d = f;
            } else {
                memcpy(&d, tmp, sizeof(d));
            }
            lua_pushnumber(L, d);
            n++;
            break;
        }
        case 'c':
            if (size == 0) {
                if (n == 0 || !lua_isnumber(L, -1))
                    luaL_error(L, "format 'c0' needs a previous size");
                size = (size_t)lua_tonumber(L, -1);
                lua_pop(L, 1);
                n--;
                luaL_argcheck(L, size <= ld && pos <= ld - size, 2, "data string too short");
            }
            lua_pushlstring(L, data + pos, size);
            n++;
            break;
        case 's': {
            const char *e = memchr(data + pos, '\0', ld - pos);
            if (e == NULL) luaL_error(L, "unfinished string in data");
            size = (size_t)(e - (data + pos)) + 1;
            lua_pushlstring(L, data + pos, size - 1);
            n++;
            break;
        }
        default:
            controloptions(L, opt, &fmt, &h);
        }
        pos += size;
    }
    lua_pushinteger(L, (lua_Integer)pos + 1);
    return n + 1;
}

static int b_size(lua_State *L)
{
    header h = {0, 1};
    const char *fmt = luaL_checkstring(L, 1);
    size_t pos = 0;
    while (*fmt) {
        int opt = *fmt++;
        size_t size = optsize(L, (char)opt, &fmt);
        pos += (size_t)gettoalign(pos, &h, opt, size);
        if (opt == 's') luaL_argerror(L, 1, "option 's' has no fixed size");
        else if (opt == 'c' && size == 0) luaL_argerror(L, 1, "option 'c0' has no fixed size");
        if (!isalnum(opt)) controloptions(L, opt, &fmt, &h);
        pos += size;
    }
    lua_pushinteger(L, (lua_Integer)pos);
    return 1;
}

int fri_luaopen_struct(lua_State *L)
{
    static const luaL_Reg fns[] = {
        {"pack", b_pack},
        {"unpack", b_unpack},
        {"size", b_size},
        {NULL, NULL},
    };
    lua_newtable(L);
    luaL_register(L, NULL, fns); /* into the new table, in this order */
    return 1;
}
