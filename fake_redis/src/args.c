/* args.c -- Redis's "...OrReply" argument parsers: on a bad argument they answer the exact
 * error Redis answers and return -1, so a handler simply returns. */
#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "fr_int.h"

int fri_get_ll_or_reply(fr_client *c, const fri_arg *a, long long *out, const char *msg)
{
    if (fri_string2ll(a->ptr, a->len, out)) return 0;
    fri_reply_error(c, msg ? msg : FRI_ERR_NOTINT);
    return -1;
}

int fri_get_range_ll_or_reply(fr_client *c, const fri_arg *a, long long min, long long max,
                              long long *out, const char *msg)
{
    if (fri_get_ll_or_reply(c, a, out, msg) < 0) return -1;
    if (*out < min || *out > max) {
        if (msg) fri_reply_error(c, msg);
        else fri_reply_errorf(c, "ERR value is out of range, value must between %lld and %lld",
                              min, max);
        return -1;
    }
    return 0;
}

int fri_get_positive_ll_or_reply(fr_client *c, const fri_arg *a, long long *out,
                                 const char *msg)
{
    /* Redis passes its "must be positive" text for a non-number too */
    return fri_get_range_ll_or_reply(c, a, 0, LLONG_MAX, out, msg ? msg : FRI_ERR_POSITIVE);
}

/* The end of a float parse that ran with the server's errno loaded: keeps the errno the
 * parse left (Redis's strtod/strtold leave it behind), then 0, or msg (or "ERR value is
 * not a valid float") and -1. */
static int float_parsed_or_reply(fr_client *c, int ok, const char *msg)
{
    fri_errno_save(c->srv);
    if (ok) return 0;
    fri_reply_error(c, msg ? msg : FRI_ERR_NOTFLOAT);
    return -1;
}

int fri_get_double_or_reply(fr_client *c, const fri_arg *a, double *out, const char *msg)
{
    fri_errno_load(c->srv);
    return float_parsed_or_reply(c, fri_string2d(a->ptr, a->len, out), msg);
}

int fri_get_long_double_or_reply(fr_client *c, const fri_arg *a, long double *out,
                                 const char *msg)
{
    fri_errno_load(c->srv);
    return float_parsed_or_reply(c, fri_string2ld(a->ptr, a->len, out), msg);
}

int fri_get_scan_cursor_or_reply(fr_client *c, const fri_arg *a, uint64_t *out)
{
    size_t n = strnlen(a->ptr, a->len);
    char small[64];
    char *s = n < sizeof(small) ? small : fri_malloc(n + 1); /* leading zeros have no limit */
    if (!s) {
        fri_reply_error(c, FRI_ERR_OOM);
        return -1;
    }
    memcpy(s, a->ptr, n);
    s[n] = '\0';
    char *end;
    errno = 0;
    unsigned long long v = strtoull(s, &end, 10);
    int ok = !isspace((unsigned char)s[0]) && *end == '\0' && errno != ERANGE;
    fri_errno_save(c->srv);
    if (s != small) fri_free(s);
    if (!ok) {
        fri_reply_error(c, "ERR invalid cursor");
        return -1;
    }
    *out = (uint64_t)v;
    return 0;
}

int fri_get_scan_options_or_reply(fr_client *c, int first, long long *count,
                                  const fri_arg **pat)
{
    *count = 10;
    *pat = NULL;
    for (int j = first; j < c->argc; j += 2) {
        const fri_arg *a = &c->argv[j];
        int has_value = c->argc - j >= 2;
        if (has_value && fri_arg_is_cstr(a, "count")) {
            if (fri_get_ll_or_reply(c, &c->argv[j + 1], count, NULL) < 0) return -1;
            if (*count < 1) {
                fri_reply_error(c, FRI_ERR_SYNTAX);
                return -1;
            }
        } else if (has_value && fri_arg_is_cstr(a, "match")) {
            const fri_arg *p = &c->argv[j + 1];
            *pat = p->len == 1 && p->ptr[0] == '*' ? NULL : p;
        } else {
            fri_reply_error(c, FRI_ERR_SYNTAX);
            return -1;
        }
    }
    return 0;
}

void *fri_scan_key_or_reply(fr_client *c, fri_type t, fri_scan_args *a)
{
    if (fri_get_scan_cursor_or_reply(c, &c->argv[2], &a->cursor) < 0) return NULL;
    int wrongtype;
    fri_obj *o = fri_lookup_typed(c, &c->argv[1], t, 0, &wrongtype);
    if (wrongtype) return NULL;
    if (!o) {
        fri_reply_empty_scan(c);
        return NULL;
    }
    if (fri_get_scan_options_or_reply(c, 3, &a->count, &a->pat) < 0) return NULL;
    return o->ptr;
}

int fri_scan_match(const fri_scan_args *a, const char *p, size_t len)
{
    return !a->pat || fri_glob_match(a->pat->ptr, a->pat->len, p, len, 0);
}

void fri_reply_scan_cursor(fr_client *c, uint64_t next)
{
    char buf[32];
    fri_reply_array_len(c, 2);
    fri_reply_bulk(c, buf, fri_ll2string(buf, sizeof(buf), (long long)next));
}

void fri_reply_scan_dict(fr_client *c, const fri_scan_args *a, fri_dict *d, size_t first,
                         size_t end, uint64_t next,
                         long (*emit)(fr_client *c, const fri_dent *e, const void *ctx),
                         const void *ctx)
{
    fri_reply_scan_cursor(c, next);
    size_t handle = fri_reply_deferred_len(c);
    long n = 0;
    for (size_t i = first; i < end; i++) {
        const fri_dent *e = fri_dict_slot(d, i);
        if (e && fri_scan_match(a, e->key->buf, e->key->len)) n += emit(c, e, ctx);
    }
    fri_reply_set_deferred_len(c, handle, n);
}

/* Redis 7.0's getTimeoutFromObjectOrReply in seconds: a long double times 1000, rounded
 * up to whole milliseconds, must not be negative.  The conversion to long long follows
 * what x86-64 does with an out-of-range value (the most negative integer), which is why
 * 7.0 answers "negative" for inf or 1e300; -0.0005 rounds up to 0 and is accepted (it
 * means "block for ever"). */
int fri_get_timeout_or_reply(fr_client *c, const fri_arg *a, long long *ms_out)
{
    long double ft;
    if (fri_get_long_double_or_reply(c, a, &ft, "ERR timeout is not a float or out of range") < 0)
        return -1;
    long double ms = ceill(ft * 1000.0L);
    long long t = ms >= -9223372036854775808.0L && ms < 9223372036854775808.0L ? (long long)ms
                                                                               : LLONG_MIN;
    if (t < 0) {
        fri_reply_error(c, "ERR timeout is negative");
        return -1;
    }
    if (ms_out) *ms_out = t;
    return 0;
}

int fri_random_count_or_reply(fr_client *c, long long l, unsigned long long *count, int *uniq)
{
    /* the callers have refused LLONG_MIN already, so -l is defined */
    *uniq = l >= 0;
    *count = l >= 0 ? (unsigned long long)l : (unsigned long long)-l;
    if (*count == 0) {
        fri_reply_empty_array(c);
        return -1;
    }
    if (!*uniq && *count > FRI_MAX_REPLY_ELEMENTS) {
        /* Redis would try to build the reply until memory runs out; the fake says so */
        fri_reply_error(c, FRI_ERR_OOM);
        return -1;
    }
    return 0;
}

int fri_add_ll_or_reply(fr_client *c, long long *value, long long incr)
{
    long long v = *value;
    if ((incr < 0 && v < 0 && incr < LLONG_MIN - v) ||
        (incr > 0 && v > 0 && incr > LLONG_MAX - v)) {
        fri_reply_error(c, FRI_ERR_OVERFLOW);
        return -1;
    }
    *value = v + incr;
    return 0;
}

int fri_mpop_numkeys_or_reply(fr_client *c, int idx, long long *numkeys)
{
    if (fri_get_range_ll_or_reply(c, &c->argv[idx], 1, LLONG_MAX, numkeys,
                                  "ERR numkeys should be greater than 0") < 0)
        return -1;
    /* compared before adding: numkeys may be as large as LLONG_MAX */
    if (*numkeys > c->argc - idx - 2) {
        fri_reply_error(c, FRI_ERR_SYNTAX);
        return -1;
    }
    return 0;
}

int fri_mpop_count_or_reply(fr_client *c, int from, int blocking, long long *count)
{
    *count = -1;
    for (int j = from; j < c->argc; j++) {
        int moreargs = c->argc - 1 - j;
        if (*count == -1 && fri_arg_is(&c->argv[j], "count") && moreargs) {
            j++;
            if (fri_get_range_ll_or_reply(c, &c->argv[j], 1, LLONG_MAX, count,
                                          "ERR count should be greater than 0") < 0)
                return -1;
        } else {
            fri_reply_error(c, FRI_ERR_SYNTAX);
            return -1;
        }
    }
    if (*count == -1) *count = 1;
    if (blocking && fri_get_timeout_or_reply(c, &c->argv[1], NULL) < 0) return -1;
    return 0;
}
