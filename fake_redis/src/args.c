/* args.c -- Redis's "...OrReply" argument parsers: on a bad argument they answer the exact
 * error Redis answers and return -1, so a handler simply returns. */
#include <limits.h>

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
    if (fri_string2d(a->ptr, a->len, out)) return 0;
    fri_reply_error(c, msg ? msg : FRI_ERR_NOTFLOAT);
    return -1;
}

int fri_get_long_double_or_reply(fr_client *c, const fri_arg *a, long double *out,
                                 const char *msg)
{
    if (fri_string2ld(a->ptr, a->len, out)) return 0;
    fri_reply_error(c, msg ? msg : FRI_ERR_NOTFLOAT);
    return -1;
}
