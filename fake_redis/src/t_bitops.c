/* t_bitops.c -- the bitmap commands: SETBIT, GETBIT, BITCOUNT, BITPOS, BITOP, BITFIELD and
 * BITFIELD_RO, as Redis 7.0.15 answers them.
 *
 * A bitmap is an ordinary string value (a fri_obj of type FRI_STRING): bit 0 is the most
 * significant bit of the first byte, and every bit past the end of the string reads as 0.
 * Commands that write past the end grow the string with zero bytes, so GET, STRLEN,
 * APPEND and the other string commands see exactly the bytes Redis would hold.  Integers
 * are stored as their decimal text (see t_string.c), which is what Redis's bit commands
 * read from an int-encoded string too.
 *
 * What 7.0.15 does that later versions changed, and that the fake therefore does:
 * - BITCOUNT and BITPOS look the key up before they parse their range: a missing key
 *   answers 0 (BITPOS: -1 for bit 1, 0 for bit 0) and another type WRONGTYPE even when
 *   the range or its count of arguments is wrong;
 * - BITOP knows AND, OR, XOR and NOT only.
 * And what it shares with them:
 * - SETBIT and BITFIELD touch WATCHed keys only when a bit changed or the string grew: a
 *   SETBIT that writes the bit already there changes nothing for WATCH, and a BITFIELD
 *   whose writes all failed (OVERFLOW FAIL) leaves the key unsignalled even though it may
 *   have created or grown it;
 * - a BITFIELD offset "#N" is N times the width, multiplied as 64-bit two's complement
 *   integers wrap, and only then checked.
 */
#include <limits.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "fr_int.h"

/* Error texts, word for word as Redis 7.0's. */
#define ERR_BIT_OFFSET "ERR bit offset is not an integer or out of range"
#define ERR_BIT_VALUE "ERR bit is not an integer or out of range"
#define ERR_BITPOS_BIT "ERR The bit argument must be 1 or 0."
#define ERR_BITOP_NOT "ERR BITOP NOT must be called with a single source key."
#define ERR_BITFIELD_TYPE                                                                  \
    "ERR Invalid bitfield type. Use something like i16 u8. Note that u64 is not supported " \
    "but i64 is."
#define ERR_OVERFLOW_TYPE "ERR Invalid OVERFLOW type specified"
#define ERR_BITFIELD_RO "ERR BITFIELD_RO only supports the GET subcommand"

/* ----- Arguments ----------------------------------------------------------------------- */

/* strcasecmp(arg, word) == 0: Redis compares option words as C strings, so the bytes
 * after an embedded NUL do not count ("bit\0x" is BIT). */
static int arg_cstr_is(const fri_arg *a, const char *word)
{
    fri_arg head = {a->ptr, strnlen(a->ptr, a->len)};
    return fri_arg_is(&head, word);
}

/* Redis's getBitOffsetFromArgument: a bit offset that is a strict integer, not negative,
 * whose byte is below proto-max-bulk-len (so at most 2^32 - 1).  With width > 0 (BITFIELD)
 * "#N" means N * width; the product wraps as 64-bit integers do in Redis, so a huge N may
 * land back on a small offset, which is then accepted.  Replies ERR_BIT_OFFSET and
 * returns -1 otherwise. */
static int get_bit_offset_or_reply(fr_client *c, const fri_arg *a, int width, uint64_t *out)
{
    size_t skip = (width > 0 && a->len > 0 && a->ptr[0] == '#') ? 1 : 0;
    long long v;

    if (!fri_string2ll(a->ptr + skip, a->len - skip, &v)) goto bad;
    if (skip) {
        uint64_t u = (uint64_t)v * (uint64_t)width;
        v = u <= (uint64_t)LLONG_MAX ? (long long)u : -(long long)(~u) - 1;
    }
    if (v < 0 || (v >> 3) >= FRI_PROTO_MAX_BULK_LEN) goto bad;
    *out = (uint64_t)v;
    return 0;

bad:
    fri_reply_error(c, ERR_BIT_OFFSET);
    return -1;
}

/* Redis's getBitfieldTypeFromArgument: 'i' (signed, 1..64 bits) or 'u' (unsigned, 1..63
 * bits: a u64 could not be answered as a RESP integer), lower case only, then a strict
 * integer read as a C string.  Replies ERR_BITFIELD_TYPE and returns -1 otherwise. */
static int get_bitfield_type_or_reply(fr_client *c, const fri_arg *a, int *is_signed,
                                      int *width)
{
    long long bits;

    if (a->len == 0 || (a->ptr[0] != 'i' && a->ptr[0] != 'u')) goto bad;
    *is_signed = a->ptr[0] == 'i';
    if (!fri_string2ll(a->ptr + 1, strnlen(a->ptr + 1, a->len - 1), &bits) || bits < 1 ||
        bits > (*is_signed ? 64 : 63))
        goto bad;
    *width = (int)bits;
    return 0;

bad:
    fri_reply_error(c, ERR_BITFIELD_TYPE);
    return -1;
}

/* ----- Bits ---------------------------------------------------------------------------- */

/* The bytes of string object o (which may be NULL: no bytes). */
static const unsigned char *str_bytes(const fri_obj *o, size_t *len)
{
    if (o == NULL) {
        *len = 0;
        return NULL;
    }
    const fri_str *s = o->ptr;
    *len = s->len;
    return (const unsigned char *)s->buf;
}

/* The set bits of one byte. */
static unsigned popcount8(unsigned char b)
{
    unsigned n = 0;
    for (; b; b &= (unsigned char)(b - 1)) n++;
    return n;
}

/* The set bits of p[0..n): eight bytes at a time (a SWAR sum), the rest byte by byte. */
static long long popcount(const unsigned char *p, size_t n)
{
    long long bits = 0;
    size_t i = 0;

    for (; i + 8 <= n; i += 8) {
        uint64_t w;
        memcpy(&w, p + i, 8);
        w = w - ((w >> 1) & 0x5555555555555555ull);
        w = (w & 0x3333333333333333ull) + ((w >> 2) & 0x3333333333333333ull);
        w = (w + (w >> 4)) & 0x0f0f0f0f0f0f0f0full;
        bits += (long long)((w * 0x0101010101010101ull) >> 56);
    }
    for (; i < n; i++) bits += popcount8(p[i]);
    return bits;
}

/* Bit number pos (0 = the top bit of p[0]); a bit at or past len bytes is 0. */
static int bit_at(const unsigned char *p, size_t len, uint64_t pos)
{
    uint64_t byte = pos >> 3;
    return byte < len ? (p[byte] >> (7 - (pos & 7))) & 1 : 0;
}

/* The width-bit unsigned integer whose top bit is bit number offset, most significant bit
 * first; bits past len bytes read as 0. */
static uint64_t bits_get(const unsigned char *p, size_t len, uint64_t offset, int width)
{
    uint64_t v = 0;
    for (int i = 0; i < width; i++) v = (v << 1) | (uint64_t)bit_at(p, len, offset + (uint64_t)i);
    return v;
}

/* Writes the low width bits of v at bit number offset, most significant first (the
 * caller has grown the string to hold them). */
static void bits_set(unsigned char *p, uint64_t offset, int width, uint64_t v)
{
    for (int i = 0; i < width; i++) {
        uint64_t pos = offset + (uint64_t)i;
        unsigned char mask = (unsigned char)(1u << (7 - (pos & 7)));
        if ((v >> (width - 1 - i)) & 1)
            p[pos >> 3] |= mask;
        else
            p[pos >> 3] &= (unsigned char)~mask;
    }
}

/* u as a two's complement int64 (without relying on an out-of-range conversion). */
static int64_t as_signed(uint64_t u)
{
    return u <= (uint64_t)INT64_MAX ? (int64_t)u : -(int64_t)(~u) - 1;
}

/* The width-bit signed integer at offset (the top bit is the sign). */
static int64_t bits_get_signed(const unsigned char *p, size_t len, uint64_t offset, int width)
{
    uint64_t v = bits_get(p, len, offset, width);
    if (width < 64 && (v >> (width - 1)) & 1) v |= ~(uint64_t)0 << width;
    return as_signed(v);
}

/* ----- Growing a string for a write ------------------------------------------------------ */

/* Redis's lookupStringForBitCommand: the string at argv[1], created or zero-padded so that
 * bit number maxbit exists.  *grown gets the bytes added (all of them for a new key).  The
 * key is not signalled here: the callers signal it only when something really changed.
 * Returns NULL after replying WRONGTYPE, or OOM with the keyspace unchanged. */
static fri_obj *lookup_bitmap_for_write(fr_client *c, uint64_t maxbit, size_t *grown)
{
    const fri_arg *key = &c->argv[1];
    size_t need = (size_t)(maxbit >> 3) + 1;
    int wrongtype;
    fri_obj *o = fri_lookup_typed(c, key, FRI_STRING, 1, &wrongtype);

    if (wrongtype) return NULL;
    if (o == NULL) {
        fri_str *s;
        o = fri_obj_new_string("", 0);
        s = o ? fri_str_resize(o->ptr, need) : NULL;
        if (s == NULL) {
            fri_obj_free(o);
            fri_reply_error(c, FRI_ERR_OOM);
            return NULL;
        }
        o->ptr = s;
        o->strenc = FRI_STRENC_RAW; /* createObject(OBJ_STRING, sdsnewlen(NULL, need)) */
        fri_db_add(c->db, key->ptr, key->len, o);
        *grown = need;
        return o;
    }

    fri_str *s = o->ptr;
    *grown = 0;
    fri_str_unshare(c->srv, o); /* Redis's dbUnshareStringValue, even for a read */
    if (s->len < need) {
        size_t old = s->len;
        fri_str_grow(o, need);
        s = fri_str_resize(s, need);
        if (s == NULL) {
            fri_reply_error(c, FRI_ERR_OOM);
            return NULL;
        }
        o->ptr = s;
        *grown = need - old;
    }
    return o;
}

/* ----- SETBIT / GETBIT ------------------------------------------------------------------ */

/* SETBIT key offset 0|1: the bit's old value.  Checks in Redis's order: the offset, the
 * value (only 0 and 1), then the key's type.  The string grows with zero bytes to reach
 * the bit; the key counts as modified only when it grew or the bit changed. */
static void setbit_command(fr_client *c)
{
    uint64_t offset;
    long long on;
    size_t grown;
    fri_obj *o;

    if (get_bit_offset_or_reply(c, &c->argv[2], 0, &offset) != 0) return;
    if (fri_get_ll_or_reply(c, &c->argv[3], &on, ERR_BIT_VALUE) != 0) return;
    if (on & ~1LL) {
        fri_reply_error(c, ERR_BIT_VALUE);
        return;
    }
    o = lookup_bitmap_for_write(c, offset, &grown);
    if (o == NULL) return;

    fri_str *s = o->ptr;
    unsigned char *byte = (unsigned char *)&s->buf[offset >> 3];
    unsigned char mask = (unsigned char)(1u << (7 - (offset & 7)));
    int old = (*byte & mask) != 0;
    if (grown || old != (int)on) {
        if (on)
            *byte |= mask;
        else
            *byte &= (unsigned char)~mask;
        fri_signal_modified(c, c->db, c->argv[1].ptr, c->argv[1].len);
        fri_notify_key(c, FR_NOTIFY_STRING, "setbit", &c->argv[1]);
    }
    fri_reply_ll(c, old);
}

/* GETBIT key offset: the bit, 0 past the end or for a missing key.  The offset is checked
 * before the key. */
static void getbit_command(fr_client *c)
{
    uint64_t offset;
    int wrongtype;
    size_t len;

    if (get_bit_offset_or_reply(c, &c->argv[2], 0, &offset) != 0) return;
    fri_obj *o = fri_lookup_typed(c, &c->argv[1], FRI_STRING, 0, &wrongtype);
    if (wrongtype) return;
    const unsigned char *p = str_bytes(o, &len);
    fri_reply_ll(c, bit_at(p, len, offset));
}

/* ----- BITCOUNT / BITPOS ----------------------------------------------------------------- */

/* The unit of a range's start and end: argv[i] is BYTE or BIT (as C strings, any case).
 * Returns 0 for BYTE, 1 for BIT, -1 after replying a syntax error. */
static int range_unit_or_reply(fr_client *c, int i)
{
    if (arg_cstr_is(&c->argv[i], "bit")) return 1;
    if (arg_cstr_is(&c->argv[i], "byte")) return 0;
    fri_reply_error(c, FRI_ERR_SYNTAX);
    return -1;
}

/* Turns start and end (in units of total, negative counting from the end) into the
 * inclusive range they mean, Redis's way: each negative one plus total, then clamped to
 * [0, total - 1] (an end before 0 stays 0, an end past the string is the last unit; for
 * an empty string end is -1).  The range is empty when *start > *end. */
static void clamp_range(long long *start, long long *end, long long total)
{
    if (*start < 0) *start += total;
    if (*end < 0) *end += total;
    if (*start < 0) *start = 0;
    if (*end < 0) *end = 0;
    if (*end >= total) *end = total - 1;
}

/* BITCOUNT key [start end [BYTE|BIT]]: the set bits of the string or of the range.
 * Redis 7.0's order: the key first (missing: 0, another type: WRONGTYPE, whatever the
 * arguments), then start and end, then the unit, and any other count of arguments is a
 * syntax error. */
static void bitcount_command(fr_client *c)
{
    int wrongtype, isbit = 0;
    long long start, end;
    size_t len;
    fri_obj *o = fri_lookup_typed(c, &c->argv[1], FRI_STRING, 0, &wrongtype);

    if (wrongtype) return;
    if (o == NULL) {
        fri_reply_ll(c, 0);
        return;
    }
    const unsigned char *p = str_bytes(o, &len);

    if (c->argc == 4 || c->argc == 5) {
        if (fri_get_ll_or_reply(c, &c->argv[2], &start, NULL) != 0) return;
        if (fri_get_ll_or_reply(c, &c->argv[3], &end, NULL) != 0) return;
        /* Two negative indexes the wrong way round answer 0 before the unit is read, so
         * "BITCOUNT k -1 -2 junk" is 0, not a syntax error. */
        if (start < 0 && end < 0 && start > end) {
            fri_reply_ll(c, 0);
            return;
        }
        if (c->argc == 5 && (isbit = range_unit_or_reply(c, 4)) < 0) return;
        clamp_range(&start, &end, isbit ? (long long)len * 8 : (long long)len);
    } else if (c->argc == 2) {
        start = 0;
        end = (long long)len - 1;
    } else {
        fri_reply_error(c, FRI_ERR_SYNTAX);
        return;
    }
    if (start > end) {
        fri_reply_ll(c, 0);
        return;
    }
    if (!isbit) {
        fri_reply_ll(c, popcount(p + start, (size_t)(end - start + 1)));
        return;
    }
    /* A bit range: count its whole bytes, then take off the bits of the first byte before
     * start and those of the last byte after end. */
    size_t first = (size_t)(start >> 3), last = (size_t)(end >> 3);
    long long n = popcount(p + first, last - first + 1);
    n -= popcount8((unsigned char)(p[first] & ~(0xffu >> (start & 7))));
    n -= popcount8((unsigned char)(p[last] & (0xffu >> ((end & 7) + 1))));
    fri_reply_ll(c, n);
}

/* The first bit equal to bit among bit numbers [from, to] of p, or -1. */
static long long find_bit(const unsigned char *p, size_t len, int bit, uint64_t from,
                          uint64_t to)
{
    unsigned char skip = bit ? 0x00 : 0xff; /* a byte with nothing to find */
    uint64_t pos = from;

    while (pos <= to) {
        /* Whole bytes that cannot hold the bit are skipped at once. */
        if ((pos & 7) == 0 && pos + 7 <= to && (pos >> 3) < len && p[pos >> 3] == skip) {
            pos += 8;
            continue;
        }
        if (bit_at(p, len, pos) == bit) return (long long)pos;
        pos++;
    }
    return -1;
}

/* BITPOS key bit [start [end [BYTE|BIT]]]: the first bit set to bit in the string or the
 * range.  Redis 7.0's order: the bit (an integer, then 0 or 1), the key (missing: -1 for
 * 1 and 0 for 0, as an endless run of clear bits; another type: WRONGTYPE), then start,
 * the unit, end, and any other count of arguments is a syntax error.  An empty range
 * answers -1.  Looking for a 0 in a string of ones answers the first bit past the range
 * when no end was given (the string is as if padded with zeros), -1 when one was. */
static void bitpos_command(fr_client *c)
{
    long long bit, start, end = 0;
    int wrongtype, isbit = 0, end_given = 0;
    size_t len;

    if (fri_get_ll_or_reply(c, &c->argv[2], &bit, NULL) != 0) return;
    if (bit != 0 && bit != 1) {
        fri_reply_error(c, ERR_BITPOS_BIT);
        return;
    }
    fri_obj *o = fri_lookup_typed(c, &c->argv[1], FRI_STRING, 0, &wrongtype);
    if (wrongtype) return;
    if (o == NULL) {
        fri_reply_ll(c, bit ? -1 : 0);
        return;
    }
    const unsigned char *p = str_bytes(o, &len);

    if (c->argc >= 4 && c->argc <= 6) {
        if (fri_get_ll_or_reply(c, &c->argv[3], &start, NULL) != 0) return;
        if (c->argc == 6 && (isbit = range_unit_or_reply(c, 5)) < 0) return;
        if (c->argc >= 5) {
            if (fri_get_ll_or_reply(c, &c->argv[4], &end, NULL) != 0) return;
            end_given = 1;
        } else {
            end = isbit ? (long long)len * 8 + 7 : (long long)len - 1;
        }
        clamp_range(&start, &end, isbit ? (long long)len * 8 : (long long)len);
    } else if (c->argc == 3) {
        start = 0;
        end = (long long)len - 1;
    } else {
        fri_reply_error(c, FRI_ERR_SYNTAX);
        return;
    }
    if (start > end) {
        fri_reply_ll(c, -1);
        return;
    }

    uint64_t from = isbit ? (uint64_t)start : (uint64_t)start * 8;
    uint64_t to = isbit ? (uint64_t)end : (uint64_t)end * 8 + 7;
    long long pos = find_bit(p, len, (int)bit, from, to);
    if (pos < 0 && bit == 0 && !end_given) pos = (long long)((to >> 3) + 1) * 8;
    fri_reply_ll(c, pos);
}

/* ----- BITOP ------------------------------------------------------------------------------ */

enum bitop_kind { BITOP_AND, BITOP_OR, BITOP_XOR, BITOP_NOT };

/* BITOP AND|OR|XOR|NOT destkey key [key ...]: the length of the result, which is as long
 * as the longest source (shorter and missing ones read as zero bytes).  Checks in Redis's
 * order: the operation, NOT's single source, then each source's type.  The result
 * replaces destkey whatever it held, TTL dropped (as SET does); an empty result deletes
 * destkey.  The sources are read before destkey is written, so destkey may be one. */
static void bitop_command(fr_client *c)
{
    enum bitop_kind op;
    const fri_arg *dest = &c->argv[2];
    int nsrc = c->argc - 3;
    size_t maxlen = 0;
    fri_obj *res;

    if (arg_cstr_is(&c->argv[1], "and")) op = BITOP_AND;
    else if (arg_cstr_is(&c->argv[1], "or")) op = BITOP_OR;
    else if (arg_cstr_is(&c->argv[1], "xor")) op = BITOP_XOR;
    else if (arg_cstr_is(&c->argv[1], "not")) op = BITOP_NOT;
    else {
        fri_reply_error(c, FRI_ERR_SYNTAX);
        return;
    }
    if (op == BITOP_NOT && nsrc != 1) {
        fri_reply_error(c, ERR_BITOP_NOT);
        return;
    }

    /* Every source is type-checked (and its length known) before anything is computed. */
    for (int j = 0; j < nsrc; j++) {
        int wrongtype;
        size_t len;
        fri_obj *o = fri_lookup_typed(c, &c->argv[3 + j], FRI_STRING, 0, &wrongtype);
        if (wrongtype) return;
        str_bytes(o, &len);
        if (len > maxlen) maxlen = len;
    }

    if (maxlen == 0) {
        if (fri_lookup_write(c, dest) != NULL) {
            fri_db_delete(c->db, dest->ptr, dest->len);
            fri_signal_modified(c, c->db, dest->ptr, dest->len);
            fri_notify_key(c, FR_NOTIFY_GENERIC, "del", dest);
        }
        fri_reply_ll(c, 0);
        return;
    }

    fri_str *rs = NULL;
    res = fri_obj_new_string("", 0);
    if (res) rs = fri_str_resize(res->ptr, maxlen);
    if (rs == NULL) {
        fri_obj_free(res);
        fri_reply_error(c, FRI_ERR_OOM);
        return;
    }
    res->ptr = rs;
    res->strenc = FRI_STRENC_RAW; /* createObject(OBJ_STRING, sdsnewlen(NULL, maxlen)) */
    unsigned char *out = (unsigned char *)rs->buf;

    /* The first source (zero-padded) into out, then each other one folded in. */
    for (int j = 0; j < nsrc; j++) {
        size_t len;
        /* looked up (and touched) once already, as Redis does */
        const unsigned char *p = str_bytes(fri_db_lookup(c->srv, c->db, c->argv[3 + j].ptr,
                                                             c->argv[3 + j].len, c->now_ms),
                                               &len);
        if (j == 0) {
            if (len) memcpy(out, p, len); /* the rest is already zero */
            if (op == BITOP_NOT)
                for (size_t i = 0; i < maxlen; i++) out[i] = (unsigned char)~out[i];
            continue;
        }
        switch (op) {
        case BITOP_AND:
            for (size_t i = 0; i < maxlen; i++) out[i] &= i < len ? p[i] : 0;
            break;
        case BITOP_OR:
            for (size_t i = 0; i < len; i++) out[i] |= p[i];
            break;
        case BITOP_XOR:
            for (size_t i = 0; i < len; i++) out[i] ^= p[i];
            break;
        case BITOP_NOT:
            break; /* one source only */
        }
    }

    if (fri_lookup_write(c, dest) == NULL)
        fri_db_add(c->db, dest->ptr, dest->len, res);
    else
        fri_db_set(c->db, dest->ptr, dest->len, res, 0);
    fri_signal_modified(c, c->db, dest->ptr, dest->len);
    fri_notify_key(c, FR_NOTIFY_STRING, "set", dest);
    fri_reply_ll(c, (long long)maxlen);
}

/* ----- BITFIELD ---------------------------------------------------------------------------- */

enum bf_kind { BF_GET, BF_SET, BF_INCRBY };
enum bf_overflow { BF_WRAP, BF_SAT, BF_FAIL };

/* One parsed BITFIELD operation. */
typedef struct bf_op {
    enum bf_kind kind;
    enum bf_overflow overflow; /* the OVERFLOW in force where the operation was written */
    uint64_t offset;           /* its first bit */
    int width;                 /* 1..64 bits (unsigned: 1..63) */
    int is_signed;             /* an i type, else u */
    int64_t value;             /* SET's value or INCRBY's increment */
} bf_op;

/* Whether value + incr fits an unsigned width-bit integer: 0 if it does, 1 if it is too
 * big, -1 if below 0.  *res gets what OVERFLOW stores then: WRAP the sum modulo 2^width,
 * SAT the nearest limit (FAIL stores nothing).  For SET, value is the argument read as
 * unsigned (a negative one is huge) and incr is 0: Redis's checkUnsignedBitfieldOverflow. */
static int overflow_unsigned(uint64_t value, int64_t incr, int width, enum bf_overflow ow,
                             uint64_t *res)
{
    uint64_t max = ((uint64_t)1 << width) - 1; /* width <= 63 */
    int dir = 0;

    if (value > max || (incr > 0 && (uint64_t)incr > max - value))
        dir = 1;
    else if (incr < 0 && incr < -(int64_t)value)
        dir = -1;
    if (dir == 0) return 0;
    if (ow == BF_WRAP)
        *res = (value + (uint64_t)incr) & max;
    else if (ow == BF_SAT)
        *res = dir > 0 ? max : 0;
    return dir;
}

/* The same for a signed width-bit integer: Redis's checkSignedBitfieldOverflow, whose
 * room left to the limits (max - value, min - value) is computed in 64 bits and wraps.
 * That wrap is visible: a SET of a value far below the minimum of a wide type (SET i63 0
 * -9223372036854775808) counts as too big, so SAT stores the maximum; 7.0 does that. */
static int overflow_signed(int64_t value, int64_t incr, int width, enum bf_overflow ow,
                           int64_t *res)
{
    int64_t max = width == 64 ? INT64_MAX : (int64_t)(((uint64_t)1 << (width - 1)) - 1);
    int64_t min = -max - 1;
    int64_t room_up = as_signed((uint64_t)max - (uint64_t)value);
    int64_t room_down = as_signed((uint64_t)min - (uint64_t)value);
    int dir = 0;

    if (value > max || (width != 64 && incr > room_up) ||
        (value >= 0 && incr > 0 && incr > room_up))
        dir = 1;
    else if (value < min || (width != 64 && incr < room_down) ||
             (value < 0 && incr < 0 && incr < room_down))
        dir = -1;
    if (dir == 0) return 0;
    if (ow == BF_WRAP) {
        uint64_t sum = (uint64_t)value + (uint64_t)incr;
        if (width < 64) {
            uint64_t high = ~(uint64_t)0 << width;
            sum = (sum >> (width - 1)) & 1 ? sum | high : sum & ~high;
        }
        *res = as_signed(sum);
    } else if (ow == BF_SAT) {
        *res = dir > 0 ? max : min;
    }
    return dir;
}

/* Runs one SET or INCRBY on the (grown) string p and replies its result: the old value for
 * SET, the new one for INCRBY, nil when OVERFLOW FAIL refused it (nothing written then).
 * Returns 1 when the key changed (grown: the string had to grow for this command). */
static int bitfield_write(fr_client *c, unsigned char *p, size_t len, const bf_op *op,
                          size_t grown)
{
    if (op->is_signed) {
        int64_t old = bits_get_signed(p, len, op->offset, op->width), nv, fixed = 0;
        int over;
        if (op->kind == BF_INCRBY) {
            over = overflow_signed(old, op->value, op->width, op->overflow, &fixed);
            nv = over ? fixed : (int64_t)((uint64_t)old + (uint64_t)op->value);
        } else {
            over = overflow_signed(op->value, 0, op->width, op->overflow, &fixed);
            nv = over ? fixed : op->value;
        }
        if (over && op->overflow == BF_FAIL) {
            fri_reply_nil(c);
            return 0;
        }
        fri_reply_ll(c, op->kind == BF_INCRBY ? nv : old);
        bits_set(p, op->offset, op->width, (uint64_t)nv);
        return grown || old != nv;
    }

    uint64_t old = bits_get(p, len, op->offset, op->width), nv, fixed = 0;
    int over;
    if (op->kind == BF_INCRBY) {
        over = overflow_unsigned(old, op->value, op->width, op->overflow, &fixed);
        nv = over ? fixed : old + (uint64_t)op->value;
    } else {
        over = overflow_unsigned((uint64_t)op->value, 0, op->width, op->overflow, &fixed);
        nv = over ? fixed : (uint64_t)op->value;
    }
    if (over && op->overflow == BF_FAIL) {
        fri_reply_nil(c);
        return 0;
    }
    fri_reply_ll(c, (long long)(op->kind == BF_INCRBY ? nv : old));
    bits_set(p, op->offset, op->width, nv);
    return grown || old != nv;
}

/* Parses BITFIELD's operations from argv[2] into ops (room for (argc - 2) / 3 of them):
 * GET type offset, SET type offset value, INCRBY type offset increment, OVERFLOW
 * WRAP|SAT|FAIL (applying to the operations after it).  A word without enough arguments
 * after it, or an unknown one, is a syntax error; then come the type, the offset and the
 * value of each operation in turn.  Sets *n and *writes (a SET or INCRBY was seen) and
 * *maxbit (the last bit written); replies the error and returns -1 on a bad argument. */
static int bitfield_parse(fr_client *c, bf_op *ops, int *n, int *writes, uint64_t *maxbit)
{
    enum bf_overflow ow = BF_WRAP;

    *n = 0;
    *writes = 0;
    *maxbit = 0;
    for (int j = 2; j < c->argc; j++) {
        int left = c->argc - j - 1;
        const fri_arg *w = &c->argv[j];
        bf_op op = {0};

        if (arg_cstr_is(w, "get") && left >= 2) {
            op.kind = BF_GET;
        } else if (arg_cstr_is(w, "set") && left >= 3) {
            op.kind = BF_SET;
        } else if (arg_cstr_is(w, "incrby") && left >= 3) {
            op.kind = BF_INCRBY;
        } else if (arg_cstr_is(w, "overflow") && left >= 1) {
            const fri_arg *t = &c->argv[++j];
            if (arg_cstr_is(t, "wrap")) ow = BF_WRAP;
            else if (arg_cstr_is(t, "sat")) ow = BF_SAT;
            else if (arg_cstr_is(t, "fail")) ow = BF_FAIL;
            else {
                fri_reply_error(c, ERR_OVERFLOW_TYPE);
                return -1;
            }
            continue;
        } else {
            fri_reply_error(c, FRI_ERR_SYNTAX);
            return -1;
        }

        if (get_bitfield_type_or_reply(c, &c->argv[j + 1], &op.is_signed, &op.width) != 0)
            return -1;
        if (get_bit_offset_or_reply(c, &c->argv[j + 2], op.width, &op.offset) != 0) return -1;
        if (op.kind != BF_GET) {
            long long v;
            uint64_t last = op.offset + (uint64_t)op.width - 1;
            *writes = 1;
            if (last > *maxbit) *maxbit = last;
            if (fri_get_ll_or_reply(c, &c->argv[j + 3], &v, NULL) != 0) return -1;
            op.value = v;
        }
        op.overflow = ow;
        ops[(*n)++] = op;
        j += op.kind == BF_GET ? 2 : 3;
    }
    return 0;
}

/* BITFIELD and BITFIELD_RO (readonly): every operation is parsed before the key is read,
 * so a bad argument anywhere changes nothing.  Only GETs: the key is read (missing: all
 * zeros).  Any write: BITFIELD_RO refuses it (before the key's type is looked at);
 * BITFIELD creates or grows the string up to the last bit any write reaches, even when
 * OVERFLOW FAIL then refuses every write, and runs the operations in order, so a GET sees
 * the writes before it.  The key counts as modified when a write changed a value or the
 * string grew and at least one write was done. */
static void bitfield_generic(fr_client *c, int readonly)
{
    int nops, writes, changes = 0;
    uint64_t maxbit;
    size_t grown = 0, len;
    fri_obj *o;
    bf_op *ops = fri_malloc(sizeof(*ops) * (size_t)((c->argc - 2) / 3 + 1));

    if (ops == NULL) {
        fri_reply_error(c, FRI_ERR_OOM);
        return;
    }
    if (bitfield_parse(c, ops, &nops, &writes, &maxbit) != 0) goto done;

    if (!writes) {
        int wrongtype;
        o = fri_lookup_typed(c, &c->argv[1], FRI_STRING, 0, &wrongtype);
        if (wrongtype) goto done;
    } else {
        if (readonly) {
            fri_reply_error(c, ERR_BITFIELD_RO);
            goto done;
        }
        o = lookup_bitmap_for_write(c, maxbit, &grown);
        if (o == NULL) goto done;
    }

    fri_reply_array_len(c, nops);
    for (int i = 0; i < nops; i++) {
        const bf_op *op = &ops[i];
        const unsigned char *p = str_bytes(o, &len);
        if (op->kind != BF_GET) {
            changes += bitfield_write(c, (unsigned char *)((fri_str *)o->ptr)->buf, len, op,
                                      grown);
        } else if (op->is_signed) {
            fri_reply_ll(c, bits_get_signed(p, len, op->offset, op->width));
        } else {
            fri_reply_ll(c, (long long)bits_get(p, len, op->offset, op->width));
        }
    }
    if (changes) {
        fri_signal_modified(c, c->db, c->argv[1].ptr, c->argv[1].len);
        fri_notify_key(c, FR_NOTIFY_STRING, "setbit", &c->argv[1]);
    }

done:
    fri_free(ops);
}

/* BITFIELD key [GET type offset] [SET type offset value] [INCRBY type offset increment]
 * [OVERFLOW WRAP|SAT|FAIL] ...: one reply per GET, SET and INCRBY, in order. */
static void bitfield_command(fr_client *c)
{
    bitfield_generic(c, 0);
}

/* BITFIELD_RO key [GET type offset] ...: BITFIELD that may only read. */
static void bitfieldro_command(fr_client *c)
{
    bitfield_generic(c, 1);
}

/* ----- The table ------------------------------------------------------------------------- */

#include "cmd_flags.h"
/* This table's rows spell "denyoom" D (cmd_flags.h's M). */
#define D M

/* Arity, flags and key positions as Redis 7.0.15's COMMAND INFO reports them; the group
 * is its ACL category, @bitmap. */
const fri_command fri_bitops_commands[] = {
    {"setbit", setbit_command, 4, W | D, "bitmap", 1, 1, 1, NULL, NULL},
    {"getbit", getbit_command, 3, R | F, "bitmap", 1, 1, 1, NULL, NULL},
    {"bitcount", bitcount_command, -2, R, "bitmap", 1, 1, 1, NULL, NULL},
    {"bitpos", bitpos_command, -3, R, "bitmap", 1, 1, 1, NULL, NULL},
    {"bitop", bitop_command, -4, W | D, "bitmap", 2, -1, 1, NULL, NULL},
    {"bitfield", bitfield_command, -2, W | D, "bitmap", 1, 1, 1, NULL, NULL},
    {"bitfield_ro", bitfieldro_command, -2, R | F, "bitmap", 1, 1, 1, NULL, NULL},
    {NULL, NULL, 0, 0, NULL, 0, 0, 0, NULL, NULL},
};
