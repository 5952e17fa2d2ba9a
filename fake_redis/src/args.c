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

int fri_get_double_or_reply(fr_client *c, const fri_arg *a, double *out, const char *msg)
{
    fri_errno_load(c->srv);
    int ok = fri_string2d(a->ptr, a->len, out);
    fri_errno_save(c->srv);
    if (ok) return 0;
    fri_reply_error(c, msg ? msg : FRI_ERR_NOTFLOAT);
    return -1;
}

int fri_get_long_double_or_reply(fr_client *c, const fri_arg *a, long double *out,
                                 const char *msg)
{
    fri_errno_load(c->srv);
    int ok = fri_string2ld(a->ptr, a->len, out);
    fri_errno_save(c->srv);
    if (ok) return 0;
    fri_reply_error(c, msg ? msg : FRI_ERR_NOTFLOAT);
    return -1;
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

fri_obj *fri_scan_key_or_reply(fr_client *c, fri_type t, uint64_t *cursor, long long *count,
                               const fri_arg **pat)
{
    if (fri_get_scan_cursor_or_reply(c, &c->argv[2], cursor) < 0) return NULL;
    int wrongtype;
    fri_obj *o = fri_lookup_typed(c, &c->argv[1], t, 0, &wrongtype);
    if (wrongtype) return NULL;
    if (!o) {
        fri_reply_empty_scan(c);
        return NULL;
    }
    if (fri_get_scan_options_or_reply(c, 3, count, pat) < 0) return NULL;
    return o;
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
