/* t_string.c -- the string commands: GET, SET and its variants, counters, ranges.
 *
 * Laid out like Redis's t_string.c: one handler per command, a shared SET core, and the
 * option parser that SET and GETEX share.  A string value is a fri_obj of type FRI_STRING
 * whose ptr is a fri_str.  Integers are stored as their decimal text; the encoding Redis
 * would have (int, embstr, raw: OBJECT ENCODING) is recorded beside it by object.c's
 * fri_str_* calls, at the places Redis decides it.
 *
 * Speed matters here: the benchmark runs SET, GET and INCR in loops, so SET over an
 * existing string and INCR rewrite the value in place whenever its buffer is big enough,
 * and only fall back to allocating when it is not.
 */
#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "fr_int.h"

/* Redis's default proto-max-bulk-len: no string may grow past it. */
#define STR_MAX_LEN FRI_PROTO_MAX_BULK_LEN

/* Room for INCRBYFLOAT's text: Redis's MAX_LONG_DOUBLE_CHARS. */
#define LD_STR_CAP (5 * 1024)

/* Room for the decimal text of any long long, sign included. */
#define LL_STR_CAP 21

/* SET / GETEX option bits, as Redis's OBJ_* flags. */
#define OPT_NX      (1u << 0)
#define OPT_XX      (1u << 1)
#define OPT_GET     (1u << 2)
#define OPT_KEEPTTL (1u << 3)
#define OPT_PERSIST (1u << 4)
#define OPT_EX      (1u << 5)
#define OPT_PX      (1u << 6)
#define OPT_EXAT    (1u << 7)
#define OPT_PXAT    (1u << 8)
#define OPT_ANY_EXPIRE (OPT_EX | OPT_PX | OPT_EXAT | OPT_PXAT)

/* Which command the shared option parser reads for. */
enum opt_cmd { OPT_FOR_SET, OPT_FOR_GETEX };

/* ----- Small helpers ------------------------------------------------------------------ */

/* Does option argument a spell word (upper case), case-insensitively?  Redis compares
 * options as C strings, so an argument is read only up to its first NUL byte: "NX\0junk"
 * is NX to Redis, and to us. */
static int opt_is(const fri_arg *a, const char *word)
{
    const char *nul = memchr(a->ptr, '\0', a->len);
    size_t len = nul ? (size_t)(nul - a->ptr) : a->len;
    size_t i;

    for (i = 0; i < len; i++) {
        char ch = a->ptr[i];
        if (word[i] == '\0') return 0;
        if (ch >= 'a' && ch <= 'z') ch = (char)(ch - 'a' + 'A');
        if (ch != word[i]) return 0;
    }
    return word[len] == '\0';
}

/* Redis's checkStringLength: would a string of len + extra bytes pass the 512MB limit?
 * Replies the error and returns -1 if not. */
static int check_string_length(fr_client *c, long long len, long long extra)
{
    if (len > STR_MAX_LEN || extra > STR_MAX_LEN - len) {
        fri_reply_error(c, "ERR string exceeds maximum allowed size (proto-max-bulk-len)");
        return -1;
    }
    return 0;
}

/* Stores the bytes p[0..len) as the value of string object o, reusing its buffer when
 * the length is unchanged (the common SET-over-SET case) or shorter (realloc shrinks in
 * place).  A longer value gets a fresh buffer: realloc would copy old bytes for nothing.
 * Returns -1, with o untouched, when out of memory. */
static int str_replace(fri_obj *o, const char *p, size_t len)
{
    fri_str *s = o->ptr;

    if (len <= s->len) {
        if (len < s->len) {
            s = fri_str_resize(s, len);
            if (s == NULL) return -1;
            o->ptr = s;
        }
        memcpy(s->buf, p, len);
        return 0;
    }
    s = fri_str_new(p, len);
    if (s == NULL) return -1;
    fri_str_free(o->ptr);
    o->ptr = s;
    return 0;
}

/* Stores the decimal text p[0..n) (n <= LL_STR_CAP) as the value of string object o.
 * The text is written over the old one when it fits (the length may shrink, never grow:
 * the buffer holds at least the old length, and fri_str_free does not care about len);
 * otherwise a new buffer sized for any long long is made, so the next INCRs fit again.
 * -1 when out of memory, with o untouched. */
static int str_set_digits(fri_obj *o, const char *p, size_t n)
{
    fri_str *s = o->ptr;

    if (n > s->len) {
        /* Allocate the widest text once, then cut the length down to what is used. */
        s = fri_str_resize(s, LL_STR_CAP);
        if (s == NULL) return -1;
        o->ptr = s;
    }
    memcpy(s->buf, p, n);
    s->len = n;
    s->buf[n] = '\0';
    return 0;
}

/* Drops whatever the current command replied since mark and answers the OOM error
 * instead, so that a command failing half-way still gives exactly one reply. */
static void reply_oom(fr_client *c, size_t mark)
{
    fri_reply_rewind(c, mark);
    fri_reply_error(c, FRI_ERR_OOM);
}

/* ----- SET and friends ----------------------------------------------------------------- */

/* Parses SET's options (from argv[3]) or GETEX's (from argv[2]) into *flags, leaving the
 * expire argument in *expire.  The rules are Redis's: NX and XX exclude each other, at
 * most one of EX/PX/EXAT/PXAT/KEEPTTL/PERSIST, a repeated option is accepted (the last
 * expire value wins, earlier ones are never parsed), an expire option with no value is a
 * syntax error.  Replies "ERR syntax error" and returns -1 on anything else. */
static int parse_set_options(fr_client *c, enum opt_cmd cmd, unsigned *flags,
                             const fri_arg **expire)
{
    int j = cmd == OPT_FOR_GETEX ? 2 : 3;
    int is_set = cmd == OPT_FOR_SET;

    for (; j < c->argc; j++) {
        const fri_arg *opt = &c->argv[j];
        const fri_arg *next = j == c->argc - 1 ? NULL : &c->argv[j + 1];
        unsigned f = *flags;

        if (is_set && !(f & OPT_XX) && opt_is(opt, "NX")) {
            *flags |= OPT_NX;
        } else if (is_set && !(f & OPT_NX) && opt_is(opt, "XX")) {
            *flags |= OPT_XX;
        } else if (is_set && opt_is(opt, "GET")) {
            *flags |= OPT_GET;
        } else if (is_set && !(f & (OPT_PERSIST | OPT_ANY_EXPIRE)) &&
                   opt_is(opt, "KEEPTTL")) {
            *flags |= OPT_KEEPTTL;
        } else if (!is_set && !(f & (OPT_KEEPTTL | OPT_ANY_EXPIRE)) &&
                   opt_is(opt, "PERSIST")) {
            *flags |= OPT_PERSIST;
        } else if (next && !(f & (OPT_KEEPTTL | OPT_PERSIST | (OPT_ANY_EXPIRE & ~OPT_EX))) &&
                   opt_is(opt, "EX")) {
            *flags |= OPT_EX;
            *expire = next;
            j++;
        } else if (next && !(f & (OPT_KEEPTTL | OPT_PERSIST | (OPT_ANY_EXPIRE & ~OPT_PX))) &&
                   opt_is(opt, "PX")) {
            *flags |= OPT_PX;
            *expire = next;
            j++;
        } else if (next &&
                   !(f & (OPT_KEEPTTL | OPT_PERSIST | (OPT_ANY_EXPIRE & ~OPT_EXAT))) &&
                   opt_is(opt, "EXAT")) {
            *flags |= OPT_EXAT;
            *expire = next;
            j++;
        } else if (next &&
                   !(f & (OPT_KEEPTTL | OPT_PERSIST | (OPT_ANY_EXPIRE & ~OPT_PXAT))) &&
                   opt_is(opt, "PXAT")) {
            *flags |= OPT_PXAT;
            *expire = next;
            j++;
        } else {
            fri_reply_error(c, FRI_ERR_SYNTAX);
            return -1;
        }
    }
    return 0;
}

/* Turns an expire argument into an absolute Unix time in ms, as Redis's
 * getExpireMillisecondsOrReply: not an integer -> "not an integer"; <= 0, a seconds
 * value whose ms overflow, or a relative time whose deadline overflows -> "ERR invalid
 * expire time in '<command>' command".  Relative (EX/PX) times count from the command's
 * clock reading. */
static int get_expire_ms_or_reply(fr_client *c, const fri_arg *expire, unsigned flags,
                                  long long *out)
{
    long long ms;
    int seconds = (flags & (OPT_EX | OPT_EXAT)) != 0;

    if (fri_get_ll_or_reply(c, expire, &ms, NULL) != 0) return -1;
    if (ms <= 0 || (seconds && ms > LLONG_MAX / 1000)) goto invalid;
    if (seconds) ms *= 1000;
    if (flags & (OPT_EX | OPT_PX)) {
        long long now = c->now_ms;
        /* Redis lets the sum wrap and rejects the negative result; same outcome. */
        if (now > 0 && ms > LLONG_MAX - now) goto invalid;
        ms += now;
    }
    if (ms <= 0) goto invalid;
    *out = ms;
    return 0;

invalid:
    fri_reply_errorf(c, "ERR invalid expire time in '%s' command", c->cmd->name);
    return -1;
}

/* GET's body, shared with GETSET, GETDEL and SET ... GET: replies the value or nil.
 * Returns the object (NULL when missing), or sets *err and returns NULL after replying
 * WRONGTYPE. */
static fri_obj *get_generic(fr_client *c, int *err)
{
    fri_obj *o = fri_lookup_typed(c, &c->argv[1], FRI_STRING, 0, err);
    if (o == NULL) {
        if (!*err) fri_reply_nil(c);
        return NULL;
    }
    fri_reply_bulk_str(c, o->ptr);
    return o;
}

/* Sets key to the string val as Redis's setKey: replaces any value of any type, drops
 * the TTL unless keepttl (expire_ms is the new TTL then, -1 for none), and marks the key
 * modified.  o is the key's current value (fri_lookup_write's answer); an existing string
 * object is reused.  Returns -1, with nothing changed and nothing replied, when out of
 * memory. */
static int set_key(fr_client *c, const fri_arg *key, fri_obj *o, const fri_arg *val,
                   int keepttl, int64_t expire_ms)
{
    if (o != NULL && o->type == FRI_STRING) {
        /* Redis stores the argument object (tryObjectEncoding) over the old one */
        uint32_t old = fri_obj_lru_get(c->srv, o);
        if (str_replace(o, val->ptr, val->len) != 0) return -1;
        fri_str_encode_arg(c, o, val);
        fri_obj_overwrite_stamp(c->srv, o, old);
        if (!keepttl) o->expire_ms = expire_ms;
        fri_str_stored_arg(c, o, key);
    } else {
        fri_obj *n = fri_obj_new_string(val->ptr, val->len);
        if (n == NULL) return -1;
        fri_str_encode_arg(c, n, val);
        n->expire_ms = expire_ms;
        if (o == NULL)
            fri_db_add(c->db, key->ptr, key->len, n);
        else
            fri_db_set(c->db, key->ptr, key->len, n, keepttl);
        fri_str_stored_arg(c, n, key);
    }
    fri_signal_modified(c, c->db, key->ptr, key->len);
    fri_notify_key(c, FR_NOTIFY_STRING, "set", key);
    return 0;
}

/* What a key now holds and until when, as Redis propagates a SET with an expire: SET key
 * value PXAT ms (the deadline absolute, the other options gone). */
static void propagate_set_pxat(fr_client *c, const fri_arg *key, const fri_arg *val,
                               long long when)
{
    char ms[24];
    size_t n = fri_ll2string(ms, sizeof(ms), when);
    fri_arg v[5] = {{"SET", 3}, *key, *val, {"PXAT", 4}, {ms, n}};
    fri_propagate_rewrite(c, 5, v);
}

/* SET ... GET propagates without its GET words (replaceClientCommandVector). */
static void propagate_without_get(fr_client *c)
{
    fri_arg small[16] = {{0}};
    /* Zeroed either way: GCC -O1 cannot see that only the first n are read. */
    fri_arg *v = c->argc <= 16 ? small : fri_calloc((size_t)c->argc, sizeof(*v));
    int n = 0;
    for (int j = 0; j < c->argc; j++) {
        if (j >= 3 && fri_arg_is_cstr(&c->argv[j], "get")) continue;
        v[n++] = c->argv[j];
    }
    fri_propagate_rewrite(c, n, v);
    if (v != small) fri_free(v);
}

/* A key's one-word propagation: DEL key, PERSIST key. */
static void propagate_word_key(fr_client *c, const char *word, const fri_arg *key)
{
    fri_arg v[2] = {{word, strlen(word)}, *key};
    fri_propagate_rewrite(c, 2, v);
}

/* The core of SET, SETNX, SETEX and PSETEX (Redis's setGenericCommand).  Order of
 * checks: expire value, then GET's WRONGTYPE (nothing is set then), then NX/XX.
 * Replies +OK / nil for success / an NX-XX refusal, or ok_reply / abort_reply as
 * integers when integer_replies (SETNX); SET ... GET replies the old value instead. */
static void set_generic(fr_client *c, unsigned flags, const fri_arg *key, const fri_arg *val,
                        const fri_arg *expire, long long ok_reply, long long abort_reply,
                        int integer_replies)
{
    long long when = -1;
    size_t mark = fri_reply_mark(c);
    fri_obj *o;

    if (expire && get_expire_ms_or_reply(c, expire, flags, &when) != 0) return;

    if (flags & OPT_GET) {
        int err;
        get_generic(c, &err);
        if (err) return;
    }

    o = fri_lookup_write(c, key);
    if (((flags & OPT_NX) && o != NULL) || ((flags & OPT_XX) && o == NULL)) {
        if (!(flags & OPT_GET)) {
            if (integer_replies)
                fri_reply_ll(c, abort_reply);
            else
                fri_reply_nil(c);
        }
        return;
    }

    /* An EXAT/PXAT deadline already past is stored as is, as Redis 7.0 does: the key
     * then expires lazily like any other. */
    if (set_key(c, key, o, val, (flags & OPT_KEEPTTL) != 0, expire ? when : -1) != 0) {
        reply_oom(c, mark);
        return;
    }
    if (expire) fri_notify_key(c, FR_NOTIFY_GENERIC, "expire", key);
    if (fri_propagating(c->srv)) {
        if (expire) propagate_set_pxat(c, key, val, when);
        else if (flags & OPT_GET) propagate_without_get(c);
    }

    if (!(flags & OPT_GET)) {
        if (integer_replies)
            fri_reply_ll(c, ok_reply);
        else
            fri_reply_ok(c);
    }
}

/* SET key value [NX|XX] [GET] [EX s|PX ms|EXAT s|PXAT ms|KEEPTTL] */
static void set_command(fr_client *c)
{
    unsigned flags = 0;
    const fri_arg *expire = NULL;

    if (c->argc == 3) {
        /* The benchmark's path: no options to parse. */
        const fri_arg *key = &c->argv[1];
        if (set_key(c, key, fri_lookup_write(c, key), &c->argv[2], 0, -1) != 0)
            fri_reply_error(c, FRI_ERR_OOM);
        else
            fri_reply_ok(c);
        return;
    }
    if (parse_set_options(c, OPT_FOR_SET, &flags, &expire) != 0) return;
    set_generic(c, flags, &c->argv[1], &c->argv[2], expire, 0, 0, 0);
}

/* SETNX key value: 1 if set, 0 if the key existed. */
static void setnx_command(fr_client *c)
{
    set_generic(c, OPT_NX, &c->argv[1], &c->argv[2], NULL, 1, 0, 1);
}

/* SETEX key seconds value */
static void setex_command(fr_client *c)
{
    set_generic(c, OPT_EX, &c->argv[1], &c->argv[3], &c->argv[2], 0, 0, 0);
}

/* PSETEX key milliseconds value */
static void psetex_command(fr_client *c)
{
    set_generic(c, OPT_PX, &c->argv[1], &c->argv[3], &c->argv[2], 0, 0, 0);
}

/* GET key: the value, nil when missing, WRONGTYPE for other types. */
static void get_command(fr_client *c)
{
    int err;
    (void)get_generic(c, &err);
}

/* GETEX key [EX s|PX ms|EXAT s|PXAT ms|PERSIST]: the value, and sets or clears the TTL.
 * Redis's order: options' syntax, then the key (nil / WRONGTYPE), then the expire value.
 * An EXAT/PXAT deadline at or before now deletes the key (Redis's checkAlreadyExpired
 * uses <=, unlike lazy expiry's >). */
static void getex_command(fr_client *c)
{
    unsigned flags = 0;
    const fri_arg *expire = NULL;
    long long when = -1;
    fri_obj *o;
    const fri_arg *key = &c->argv[1];

    if (parse_set_options(c, OPT_FOR_GETEX, &flags, &expire) != 0) return;

    o = fri_lookup_read(c, key);
    if (o == NULL) {
        fri_reply_nil(c);
        return;
    }
    if (o->type != FRI_STRING) {
        fri_reply_error(c, FRI_ERR_WRONGTYPE);
        return;
    }
    if (expire && get_expire_ms_or_reply(c, expire, flags, &when) != 0) return;

    fri_reply_bulk_str(c, o->ptr);

    /* propagated as DEL, PEXPIREAT or PERSIST: never as itself */
    if ((flags & (OPT_EXAT | OPT_PXAT)) && when <= c->now_ms && !c->srv->loading) {
        fri_db_delete(c->db, key->ptr, key->len);
        fri_signal_modified(c, c->db, key->ptr, key->len);
        fri_notify_key(c, FR_NOTIFY_GENERIC, "del", key);
        propagate_word_key(c, "DEL", key);
    } else if (expire) {
        o->expire_ms = when;
        fri_signal_modified(c, c->db, key->ptr, key->len);
        fri_notify_key(c, FR_NOTIFY_GENERIC, "expire", key);
        if (fri_propagating(c->srv)) {
            char ms[24];
            size_t n = fri_ll2string(ms, sizeof(ms), when);
            fri_arg v[3] = {{"PEXPIREAT", 9}, *key, {ms, n}};
            fri_propagate_rewrite(c, 3, v);
        }
    } else if ((flags & OPT_PERSIST) && o->expire_ms != -1) {
        o->expire_ms = -1;
        fri_signal_modified(c, c->db, key->ptr, key->len);
        fri_notify_key(c, FR_NOTIFY_GENERIC, "persist", key);
        propagate_word_key(c, "PERSIST", key);
    }
}

/* GETDEL key: the value, then the key is gone. */
static void getdel_command(fr_client *c)
{
    int err;
    const fri_arg *key = &c->argv[1];

    if (get_generic(c, &err) == NULL) return;
    fri_db_delete(c->db, key->ptr, key->len);
    fri_signal_modified(c, c->db, key->ptr, key->len);
    fri_notify_key(c, FR_NOTIFY_GENERIC, "del", key);
    propagate_word_key(c, "DEL", key);
}

/* GETSET key value: the old value (or nil), then SET without options (TTL dropped). */
static void getset_command(fr_client *c)
{
    int err;
    size_t mark = fri_reply_mark(c);
    const fri_arg *key = &c->argv[1];

    get_generic(c, &err);
    if (err) return;
    if (set_key(c, key, fri_lookup_write(c, key), &c->argv[2], 0, -1) != 0) {
        reply_oom(c, mark);
        return;
    }
    fri_arg v[3] = {{"SET", 3}, *key, c->argv[2]}; /* propagated as SET */
    fri_propagate_rewrite(c, 3, v);
}

/* ----- Ranges ---------------------------------------------------------------------------- */

/* SETRANGE key offset value: overwrites from offset, zero-padding, and answers the new
 * length.  An empty value writes nothing: 0 for a missing key (not created), the length
 * otherwise, and no size check is made then. */
static void setrange_command(fr_client *c)
{
    long long offset;
    const fri_arg *key = &c->argv[1];
    const fri_arg *val = &c->argv[3];
    fri_obj *o;

    if (fri_get_ll_or_reply(c, &c->argv[2], &offset, NULL) != 0) return;
    if (offset < 0) {
        fri_reply_error(c, "ERR offset is out of range");
        return;
    }

    o = fri_lookup_write(c, key);
    if (o == NULL) {
        fri_str *s;
        if (val->len == 0) {
            fri_reply_ll(c, 0);
            return;
        }
        if (check_string_length(c, offset, (long long)val->len) != 0) return;
        o = fri_obj_new_string("", 0);
        if (o == NULL) {
            fri_reply_error(c, FRI_ERR_OOM);
            return;
        }
        s = fri_str_resize(o->ptr, (size_t)offset + val->len);
        if (s == NULL) {
            fri_obj_free(o);
            fri_reply_error(c, FRI_ERR_OOM);
            return;
        }
        o->ptr = s;
        o->strenc = FRI_STRENC_RAW; /* createObject(OBJ_STRING, sdsnewlen(NULL, len)) */
        memcpy(s->buf + offset, val->ptr, val->len);
        fri_db_add(c->db, key->ptr, key->len, o);
    } else {
        fri_str *s;
        if (o->type != FRI_STRING) {
            fri_reply_error(c, FRI_ERR_WRONGTYPE);
            return;
        }
        s = o->ptr;
        if (val->len == 0) {
            fri_reply_ll(c, (long long)s->len);
            return;
        }
        if (check_string_length(c, offset, (long long)val->len) != 0) return;
        fri_str_unshare(c->srv, o);
        if ((size_t)offset + val->len > s->len) {
            fri_str_grow(o, (size_t)offset + val->len);
            s = fri_str_resize(s, (size_t)offset + val->len);
            if (s == NULL) {
                fri_reply_error(c, FRI_ERR_OOM);
                return;
            }
            o->ptr = s;
        }
        memcpy(s->buf + offset, val->ptr, val->len);
    }
    fri_signal_modified(c, c->db, key->ptr, key->len);
    fri_notify_key(c, FR_NOTIFY_STRING, "setrange", key);
    fri_reply_ll(c, (long long)((fri_str *)o->ptr)->len);
}

/* GETRANGE key start end (and its old name SUBSTR): inclusive byte range, negative
 * indexes from the end.  Redis 7.0's exact clamping: both negative and start > end is
 * empty; otherwise negatives are counted from the end and clamped to 0, and end is
 * clamped to the last byte -- so "GETRANGE k 0 -100" on "hello" answers "h". */
static void getrange_command(fr_client *c)
{
    long long start, end, len;
    fri_obj *o;
    const fri_str *s;

    if (fri_get_ll_or_reply(c, &c->argv[2], &start, NULL) != 0) return;
    if (fri_get_ll_or_reply(c, &c->argv[3], &end, NULL) != 0) return;

    int wrongtype;
    o = fri_lookup_typed(c, &c->argv[1], FRI_STRING, 0, &wrongtype);
    if (o == NULL) {
        if (!wrongtype) fri_reply_bulk(c, "", 0);
        return;
    }
    s = o->ptr;
    len = (long long)s->len;

    if ((start < 0 && end < 0 && start > end) || len == 0) {
        fri_reply_bulk(c, "", 0);
        return;
    }
    if (start < 0) start += len;
    if (end < 0) end += len;
    if (start < 0) start = 0;
    if (end < 0) end = 0;
    if (end >= len) end = len - 1;
    if (start > end)
        fri_reply_bulk(c, "", 0);
    else
        fri_reply_bulk(c, s->buf + start, (size_t)(end - start + 1));
}

/* ----- Many keys ------------------------------------------------------------------------ */

/* MGET key [key ...]: nil for a missing key and for a key of another type. */
static void mget_command(fr_client *c)
{
    int j;

    fri_reply_array_len(c, c->argc - 1);
    for (j = 1; j < c->argc; j++) {
        fri_obj *o = fri_lookup_read(c, &c->argv[j]);
        if (o == NULL || o->type != FRI_STRING)
            fri_reply_nil(c);
        else
            fri_reply_bulk_str(c, o->ptr);
    }
}

/* MSET and MSETNX: pairs set left to right (a repeated key ends with its last value),
 * TTLs dropped.  An odd pair count is an arity error found at run time, as in Redis.
 * MSETNX sets nothing and answers 0 if any key exists.  Every new value is allocated
 * before the first key changes, so out of memory leaves the keyspace as it was. */
static void mset_generic(fr_client *c, int nx)
{
    int j, pairs = (c->argc - 1) / 2;
    fri_obj **vals;

    if ((c->argc % 2) == 0) {
        fri_reply_arity_error(c);
        return;
    }
    if (nx) {
        for (j = 1; j < c->argc; j += 2) {
            if (fri_lookup_write(c, &c->argv[j]) != NULL) {
                fri_reply_ll(c, 0);
                return;
            }
        }
    }

    vals = fri_malloc(sizeof(*vals) * (size_t)pairs);
    if (vals == NULL) {
        fri_reply_error(c, FRI_ERR_OOM);
        return;
    }
    for (j = 0; j < pairs; j++) {
        const fri_arg *v = &c->argv[2 + 2 * j];
        vals[j] = fri_obj_new_string(v->ptr, v->len);
        if (vals[j] != NULL) fri_str_encode_arg(c, vals[j], v);
        if (vals[j] == NULL) {
            while (j-- > 0) fri_obj_free(vals[j]);
            fri_free(vals);
            fri_reply_error(c, FRI_ERR_OOM);
            return;
        }
    }
    for (j = 0; j < pairs; j++) {
        const fri_arg *key = &c->argv[1 + 2 * j];
        if (fri_lookup_write(c, key) == NULL)
            fri_db_add(c->db, key->ptr, key->len, vals[j]);
        else
            fri_db_set(c->db, key->ptr, key->len, vals[j], 0);
        fri_str_stored_arg(c, vals[j], key);
        fri_signal_modified(c, c->db, key->ptr, key->len);
        fri_notify_key(c, FR_NOTIFY_STRING, "set", key);
    }
    fri_free(vals);

    if (nx)
        fri_reply_ll(c, 1);
    else
        fri_reply_ok(c);
}

static void mset_command(fr_client *c)
{
    mset_generic(c, 0);
}

static void msetnx_command(fr_client *c)
{
    mset_generic(c, 1);
}

/* ----- Counters --------------------------------------------------------------------------- */

/* Adds incr to the integer at argv[1] (0 when missing) and answers the result.  The value
 * must parse as Redis's strict integer; a sum outside long long is refused.  The TTL
 * stays. */
static void incr_decr(fr_client *c, long long incr)
{
    const fri_arg *key = &c->argv[1];
    int wrongtype;
    fri_obj *o = fri_lookup_typed(c, key, FRI_STRING, 1, &wrongtype);
    long long value = 0;
    char reply[1 + LL_STR_CAP + 2];
    size_t n;

    if (wrongtype) return;
    if (o != NULL) {
        const fri_str *s = o->ptr;
        if (!fri_string2ll(s->buf, s->len, &value)) {
            fri_reply_error(c, FRI_ERR_NOTINT);
            return;
        }
    }
    if (fri_add_ll_or_reply(c, &value, incr) < 0) return;

    /* Format once: the same digits are stored and answered as ":<digits>\r\n". */
    reply[0] = ':';
    n = fri_ll2string(reply + 1, LL_STR_CAP, value);
    if (o != NULL) {
        uint32_t old = fri_obj_lru_get(c->srv, o);
        if (str_set_digits(o, reply + 1, n) != 0) {
            fri_reply_error(c, FRI_ERR_OOM);
            return;
        }
        fri_str_set_ll(c->srv, o, value, old);
    } else {
        o = fri_obj_new_string(reply + 1, n);
        if (o == NULL) {
            fri_reply_error(c, FRI_ERR_OOM);
            return;
        }
        fri_str_new_ll(c->srv, o, value);
        fri_db_add(c->db, key->ptr, key->len, o);
    }
    fri_signal_modified(c, c->db, key->ptr, key->len);
    fri_notify_key(c, FR_NOTIFY_STRING, "incrby", key);
    fri_reply_ll_digits(c, value, reply + 1, n);
}

static void incr_command(fr_client *c)
{
    incr_decr(c, 1);
}

static void decr_command(fr_client *c)
{
    incr_decr(c, -1);
}

static void incrby_command(fr_client *c)
{
    long long incr;

    if (fri_get_ll_or_reply(c, &c->argv[2], &incr, NULL) != 0) return;
    incr_decr(c, incr);
}

/* DECRBY key n: n = LLONG_MIN cannot be negated, refused before the key is read. */
static void decrby_command(fr_client *c)
{
    long long incr;

    if (fri_get_ll_or_reply(c, &c->argv[2], &incr, NULL) != 0) return;
    if (incr == LLONG_MIN) {
        fri_reply_error(c, "ERR decrement would overflow");
        return;
    }
    incr_decr(c, -incr);
}

/* INCRBYFLOAT key incr: long double arithmetic, stored and answered in Redis's human
 * form ("%.17Lf", trailing zeros cut).  Checks in Redis's order: WRONGTYPE, the stored
 * value, the increment, then NaN/Infinity.  The TTL stays. */
static void incrbyfloat_command(fr_client *c)
{
    const fri_arg *key = &c->argv[1];
    int wrongtype;
    fri_obj *o = fri_lookup_typed(c, key, FRI_STRING, 1, &wrongtype);
    long double value = 0, incr;
    char buf[LD_STR_CAP];
    size_t n;

    if (wrongtype) return;
    if (o != NULL) {
        const fri_str *s = o->ptr;
        /* strtold runs unless Redis holds the value as an integer, which it does for
         * what SET and INCR write (see fri_errno_load) */
        int as_int = s->len <= 20 && fri_string2ll(s->buf, s->len, NULL);
        if (!as_int) fri_errno_load(c->srv);
        int ok = fri_string2ld(s->buf, s->len, &value);
        if (!as_int) fri_errno_save(c->srv);
        if (!ok) {
            fri_reply_error(c, FRI_ERR_NOTFLOAT);
            return;
        }
    }
    if (fri_get_long_double_or_reply(c, &c->argv[2], &incr, NULL) != 0) return;

    value += incr;
    if (isnan(value) || isinf(value)) {
        fri_reply_error(c, "ERR increment would produce NaN or Infinity");
        return;
    }
    n = fri_ld2string(buf, sizeof(buf), value);

    if (o != NULL) {
        /* a new object (createStringObject) over the old one */
        uint32_t old = fri_obj_lru_get(c->srv, o);
        if (str_replace(o, buf, n) != 0) {
            fri_reply_error(c, FRI_ERR_OOM);
            return;
        }
        fri_str_created(o);
        fri_obj_overwrite_stamp(c->srv, o, old);
    } else {
        o = fri_obj_new_string(buf, n);
        if (o == NULL) {
            fri_reply_error(c, FRI_ERR_OOM);
            return;
        }
        fri_db_add(c->db, key->ptr, key->len, o);
    }
    /* Redis puts the new value in the command's arguments (propagated as SET ...
     * KEEPTTL), where a transaction's queue holds it too */
    fri_str_stored_arg(c, o, key);
    fri_signal_modified(c, c->db, key->ptr, key->len);
    fri_notify_key(c, FR_NOTIFY_STRING, "incrbyfloat", key);
    fri_reply_bulk(c, buf, n);
    /* propagated as SET key value KEEPTTL: no float formatting on the other side */
    fri_arg v[4] = {{"SET", 3}, *key, {buf, n}, {"KEEPTTL", 7}};
    fri_propagate_rewrite(c, 4, v);
}

/* ----- Appending and lengths ------------------------------------------------------------ */

/* APPEND key value: the new length.  A missing key is created, even by an empty value. */
static void append_command(fr_client *c)
{
    const fri_arg *key = &c->argv[1];
    const fri_arg *val = &c->argv[2];
    fri_obj *o = fri_lookup_write(c, key);
    size_t total;

    if (o == NULL) {
        o = fri_obj_new_string(val->ptr, val->len);
        if (o == NULL) {
            fri_reply_error(c, FRI_ERR_OOM);
            return;
        }
        fri_str_encode_arg(c, o, val); /* the argument itself, tryObjectEncoding'd */
        fri_db_add(c->db, key->ptr, key->len, o);
        fri_str_stored_arg(c, o, key);
        total = val->len;
    } else {
        fri_str *s;
        size_t old;
        if (o->type != FRI_STRING) {
            fri_reply_error(c, FRI_ERR_WRONGTYPE);
            return;
        }
        s = o->ptr;
        old = s->len;
        if (check_string_length(c, (long long)old, (long long)val->len) != 0) return;
        fri_str_unshare(c->srv, o);
        if (val->len > 0) {
            fri_str_grow(o, old + val->len);
            s = fri_str_resize(s, old + val->len);
            if (s == NULL) {
                fri_reply_error(c, FRI_ERR_OOM);
                return;
            }
            memcpy(s->buf + old, val->ptr, val->len);
            o->ptr = s;
        }
        total = s->len;
    }
    fri_signal_modified(c, c->db, key->ptr, key->len);
    fri_notify_key(c, FR_NOTIFY_STRING, "append", key);
    fri_reply_ll(c, (long long)total);
}

/* STRLEN key: 0 when missing. */
static void strlen_command(fr_client *c)
{
    int wrongtype;
    fri_obj *o = fri_lookup_typed(c, &c->argv[1], FRI_STRING, 0, &wrongtype);

    if (o != NULL)
        fri_reply_ll(c, (long long)((const fri_str *)o->ptr)->len);
    else if (!wrongtype)
        fri_reply_ll(c, 0);
}

/* ----- LCS ----------------------------------------------------------------------------- */

/* LCS key1 key2 [LEN] [IDX] [MINMATCHLEN n] [WITHMATCHLEN]: the longest common
 * subsequence by Redis's dynamic-programming table, walked back from the end so the
 * IDX matches come last-first, exactly as Redis lists them.  Checks in Redis's order:
 * key types (a missing key is ""), options, LEN with IDX, then the table's size against
 * proto-max-bulk-len (so two 12,000-byte strings are refused). */
static void lcs_command(fr_client *c)
{
    fri_obj *oa = fri_lookup_read(c, &c->argv[1]);
    fri_obj *ob = fri_lookup_read(c, &c->argv[2]);
    const char *a = "", *b = "";
    size_t alen = 0, blen = 0;
    long long minmatchlen = 0;
    int getlen = 0, getidx = 0, withmatchlen = 0;
    int j;

    if ((oa && oa->type != FRI_STRING) || (ob && ob->type != FRI_STRING)) {
        fri_reply_error(c, "ERR The specified keys must contain string values");
        return;
    }
    if (oa) {
        a = ((const fri_str *)oa->ptr)->buf;
        alen = ((const fri_str *)oa->ptr)->len;
    }
    if (ob) {
        b = ((const fri_str *)ob->ptr)->buf;
        blen = ((const fri_str *)ob->ptr)->len;
    }

    for (j = 3; j < c->argc; j++) {
        const fri_arg *opt = &c->argv[j];
        int moreargs = c->argc - 1 - j;
        if (opt_is(opt, "IDX")) {
            getidx = 1;
        } else if (opt_is(opt, "LEN")) {
            getlen = 1;
        } else if (opt_is(opt, "WITHMATCHLEN")) {
            withmatchlen = 1;
        } else if (moreargs && opt_is(opt, "MINMATCHLEN")) {
            if (fri_get_ll_or_reply(c, &c->argv[j + 1], &minmatchlen, NULL) != 0) return;
            if (minmatchlen < 0) minmatchlen = 0;
            j++;
        } else {
            fri_reply_error(c, FRI_ERR_SYNTAX);
            return;
        }
    }
    if (getidx && getlen) {
        fri_reply_error(c, "ERR If you want both the length and indexes, please just use IDX.");
        return;
    }
    if (alen >= UINT32_MAX - 1 || blen >= UINT32_MAX - 1) {
        fri_reply_error(c, "ERR String too long for LCS");
        return;
    }

    /* table[i*(blen+1)+jj] = LCS length of a[0..i) and b[0..jj). */
    unsigned long long cells = (unsigned long long)(alen + 1) * (blen + 1);
    if (cells * sizeof(uint32_t) > (unsigned long long)STR_MAX_LEN) {
        fri_reply_error(c, "ERR Insufficient memory, transient memory for LCS exceeds "
                           "proto-max-bulk-len");
        return;
    }
    uint32_t *t = fri_malloc((size_t)cells * sizeof(uint32_t));
    if (t == NULL) {
        fri_reply_error(c, "ERR Insufficient memory, failed allocating transient memory "
                           "for LCS");
        return;
    }
#define CELL(i, jj) t[(size_t)(jj) + (size_t)(i) * (blen + 1)]
    for (size_t i = 0; i <= alen; i++) {
        for (size_t jj = 0; jj <= blen; jj++) {
            if (i == 0 || jj == 0) {
                CELL(i, jj) = 0;
            } else if (a[i - 1] == b[jj - 1]) {
                CELL(i, jj) = CELL(i - 1, jj - 1) + 1;
            } else {
                uint32_t l1 = CELL(i - 1, jj), l2 = CELL(i, jj - 1);
                CELL(i, jj) = l1 > l2 ? l1 : l2;
            }
        }
    }

    uint32_t total = CELL(alen, blen), idx = total;
    int compute = getidx || !getlen;
    char *result = NULL;
    size_t handle = 0;
    long ranges = 0;
    /* The range being grown backwards; as_ == alen means "no range yet". */
    size_t as_ = alen, ae = 0, bs = 0, be = 0;

    if (compute) {
        result = fri_malloc((size_t)total + 1);
        if (result == NULL) {
            fri_free(t);
            fri_reply_error(c, FRI_ERR_OOM);
            return;
        }
    }
    if (getidx) {
        fri_reply_map_len(c, 2);
        fri_reply_bulk_cstr(c, "matches");
        handle = fri_reply_deferred_len(c);
    }

    size_t i = alen, jj = blen;
    while (compute && i > 0 && jj > 0) {
        int emit = 0;
        if (a[i - 1] == b[jj - 1]) {
            result[idx - 1] = a[i - 1];
            if (as_ == alen) {
                as_ = ae = i - 1;
                bs = be = jj - 1;
            } else if (as_ == i && bs == jj) {
                as_--;
                bs--;
            } else {
                emit = 1;
            }
            if (as_ == 0 || bs == 0) emit = 1;
            idx--;
            i--;
            jj--;
        } else {
            if (CELL(i - 1, jj) > CELL(i, jj - 1))
                i--;
            else
                jj--;
            if (as_ != alen) emit = 1;
        }
        if (emit) {
            long long matchlen = (long long)(ae - as_ + 1);
            if (getidx && (minmatchlen == 0 || matchlen >= minmatchlen)) {
                fri_reply_array_len(c, 2 + withmatchlen);
                fri_reply_array_len(c, 2);
                fri_reply_ll(c, (long long)as_);
                fri_reply_ll(c, (long long)ae);
                fri_reply_array_len(c, 2);
                fri_reply_ll(c, (long long)bs);
                fri_reply_ll(c, (long long)be);
                if (withmatchlen) fri_reply_ll(c, matchlen);
                ranges++;
            }
            as_ = alen;
        }
    }
#undef CELL

    if (getidx) {
        fri_reply_set_deferred_len(c, handle, ranges);
        fri_reply_bulk_cstr(c, "len");
        fri_reply_ll(c, total);
    } else if (getlen) {
        fri_reply_ll(c, total);
    } else {
        fri_reply_bulk(c, result, total);
    }
    fri_free(result);
    fri_free(t);
}

/* ----- The table ------------------------------------------------------------------------- */

#include "cmd_flags.h"
/* This table's rows spell "denyoom" D (cmd_flags.h's M). */
#define D M

/* Arity, flags and key positions as Redis 7.0.15's COMMAND INFO reports them. */
const fri_command fri_string_commands[] = {
    {"get", get_command, 2, R | F, "string", 1, 1, 1, NULL, NULL},
    {"set", set_command, -3, W | D, "string", 1, 1, 1, NULL, NULL},
    {"setnx", setnx_command, 3, W | D | F, "string", 1, 1, 1, NULL, NULL},
    {"setex", setex_command, 4, W | D, "string", 1, 1, 1, NULL, NULL},
    {"psetex", psetex_command, 4, W | D, "string", 1, 1, 1, NULL, NULL},
    {"getset", getset_command, 3, W | D | F, "string", 1, 1, 1, NULL, NULL},
    {"getdel", getdel_command, 2, W | F, "string", 1, 1, 1, NULL, NULL},
    {"getex", getex_command, -2, W | F, "string", 1, 1, 1, NULL, NULL},
    {"mget", mget_command, -2, R | F, "string", 1, -1, 1, NULL, NULL},
    {"mset", mset_command, -3, W | D, "string", 1, -1, 2, NULL, NULL},
    {"msetnx", msetnx_command, -3, W | D, "string", 1, -1, 2, NULL, NULL},
    {"incr", incr_command, 2, W | D | F, "string", 1, 1, 1, NULL, NULL},
    {"decr", decr_command, 2, W | D | F, "string", 1, 1, 1, NULL, NULL},
    {"incrby", incrby_command, 3, W | D | F, "string", 1, 1, 1, NULL, NULL},
    {"decrby", decrby_command, 3, W | D | F, "string", 1, 1, 1, NULL, NULL},
    {"incrbyfloat", incrbyfloat_command, 3, W | D | F, "string", 1, 1, 1, NULL, NULL},
    {"append", append_command, 3, W | D | F, "string", 1, 1, 1, NULL, NULL},
    {"strlen", strlen_command, 2, R | F, "string", 1, 1, 1, NULL, NULL},
    {"getrange", getrange_command, 4, R, "string", 1, 1, 1, NULL, NULL},
    {"substr", getrange_command, 4, R, "string", 1, 1, 1, NULL, NULL},
    {"setrange", setrange_command, 4, W | D, "string", 1, 1, 1, NULL, NULL},
    {"lcs", lcs_command, -3, R, "string", 1, 2, 1, NULL, NULL},
    {NULL, NULL, 0, 0, NULL, 0, 0, 0, NULL, NULL},
};
