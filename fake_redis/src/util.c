/* util.c -- strings, buffers, number conversions and glob matching, each behaving the way
 * Redis's own util.c does, because replies and errors depend on their exact rules. */
#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fr_int.h"

/* ----- Binary strings ----------------------------------------------------------------- */

fri_str *fri_str_new(const char *p, size_t len)
{
    fri_str *s = fri_malloc(sizeof(*s) + len + 1);
    if (!s) return NULL;
    s->len = len;
    if (len) memcpy(s->buf, p, len);
    s->buf[len] = '\0';
    return s;
}

fri_str *fri_str_from_ll(long long v)
{
    char tmp[32];
    size_t n = fri_ll2string(tmp, sizeof(tmp), v);
    return fri_str_new(tmp, n);
}

void fri_str_free(fri_str *s) { fri_free(s); }

fri_str *fri_str_resize(fri_str *s, size_t newlen)
{
    fri_str *n = fri_realloc(s, sizeof(*n) + newlen + 1);
    if (!n) return NULL;
    if (newlen > n->len) memset(n->buf + n->len, 0, newlen - n->len);
    n->len = newlen;
    n->buf[newlen] = '\0';
    return n;
}

int fri_bytes_cmp(const char *a, size_t alen, const char *b, size_t blen)
{
    size_t min = alen < blen ? alen : blen;
    int cmp = min ? memcmp(a, b, min) : 0;
    if (cmp) return cmp;
    return alen < blen ? -1 : (alen > blen ? 1 : 0);
}

int fri_arg_is_cstr(const fri_arg *a, const char *word)
{
    size_t n = strnlen(a->ptr, a->len);
    fri_arg head = {a->ptr, n};
    return fri_arg_is(&head, word);
}

/* ----- Growable buffer ------------------------------------------------------------------ */

void fri_buf_grow(fri_buf *b, size_t extra)
{
    if (b->cap - b->len >= extra) return;
    size_t cap = b->cap ? b->cap : 256;
    while (cap - b->len < extra) cap *= 2;
    char *p = fri_realloc(b->p, cap);
    if (!p) fri_mem_unguarded("a growing buffer");
    b->p = p;
    b->cap = cap;
}

void fri_buf_printf(fri_buf *b, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    char small[256];
    int n = vsnprintf(small, sizeof(small), fmt, ap);
    va_end(ap);
    if (n < 0) return;
    if ((size_t)n < sizeof(small)) {
        fri_buf_append(b, small, (size_t)n);
        return;
    }
    fri_buf_reserve(b, (size_t)n + 1);
    va_start(ap, fmt);
    vsnprintf(b->p + b->len, (size_t)n + 1, fmt, ap);
    va_end(ap);
    b->len += (size_t)n;
}

void fri_buf_free(fri_buf *b)
{
    fri_free(b->p);
    b->p = NULL;
    b->len = b->cap = 0;
}

/* ----- Numbers ------------------------------------------------------------------------ */

/* Redis's string2ll: the canonical decimal form only, so "01", "+1", " 1" and "-0" are
 * not integers (which is why INCR on "01" fails while GET shows it). */
int fri_string2ll(const char *s, size_t len, long long *out)
{
    const char *p = s;
    size_t plen = 0;
    int negative = 0;
    unsigned long long v;

    if (len == 0 || len > 20) return 0;
    if (len == 1 && p[0] == '0') {
        if (out) *out = 0;
        return 1;
    }
    if (p[0] == '-') {
        negative = 1;
        p++;
        plen++;
        if (plen == len) return 0;
    }
    if (p[0] >= '1' && p[0] <= '9') {
        v = (unsigned long long)(p[0] - '0');
        p++;
        plen++;
    } else {
        return 0;
    }
    while (plen < len && p[0] >= '0' && p[0] <= '9') {
        if (v > (ULLONG_MAX / 10)) return 0;
        v *= 10;
        if (v > (ULLONG_MAX - (unsigned long long)(p[0] - '0'))) return 0;
        v += (unsigned long long)(p[0] - '0');
        p++;
        plen++;
    }
    if (plen < len) return 0;
    if (negative) {
        if (v > ((unsigned long long)(-(LLONG_MIN + 1)) + 1)) return 0;
        if (out) *out = v == ((unsigned long long)(-(LLONG_MIN + 1)) + 1)
                            ? LLONG_MIN : -(long long)v;
    } else {
        if (v > LLONG_MAX) return 0;
        if (out) *out = (long long)v;
    }
    return 1;
}

#define FRI_MAX_LONG_DOUBLE_CHARS (5 * 1024)

int fri_string2ld(const char *s, size_t len, long double *out)
{
    char buf[FRI_MAX_LONG_DOUBLE_CHARS];
    char *end;
    if (len == 0 || len >= sizeof(buf)) return 0;
    memcpy(buf, s, len);
    buf[len] = '\0';
    errno = 0;
    long double v = strtold(buf, &end);
    if (isspace((unsigned char)buf[0]) || end[0] != '\0' || (size_t)(end - buf) != len ||
        (errno == ERANGE && (v == HUGE_VAL || v == -HUGE_VAL || fpclassify(v) == FP_ZERO)) ||
        errno == EINVAL || isnan(v))
        return 0;
    if (out) *out = v;
    return 1;
}

/* An argument in canonical integer form (fri_string2ll's rules) whose value a double
 * holds exactly: strtod would give the very same double, so the common "ZADD key 12 m"
 * skips strtod's general machinery.  1 with *out set, else 0 and the caller parses. */
static int small_int_to_double(const char *s, size_t len, double *out)
{
    long long v;
    if (len > 16 || !fri_string2ll(s, len, &v)) return 0;
    if (v > (1LL << 53) || v < -(1LL << 53)) return 0;
    *out = (double)v;
    return 1;
}

int fri_string2d(const char *s, size_t len, double *out)
{
    char small[128];
    double fast;
    errno = 0; /* Redis's string2d starts so, whatever the string: see fri_errno_load */
    if (small_int_to_double(s, len, &fast)) {
        if (out) *out = fast;
        return 1;
    }
    char *heap = NULL, *buf = small, *end;
    if (len == 0) return 0;
    if (len >= sizeof(small)) {
        heap = fri_malloc(len + 1);
        if (!heap) return 0;
        buf = heap;
    }
    memcpy(buf, s, len);
    buf[len] = '\0';
    errno = 0;
    double v = strtod(buf, &end);
    int ok = !(isspace((unsigned char)buf[0]) || (size_t)(end - buf) != len ||
               (errno == ERANGE && (v == HUGE_VAL || v == -HUGE_VAL || v == 0)) || isnan(v));
    fri_free(heap);
    if (ok && out) *out = v;
    return ok;
}

/* Number of decimal digits of u, by comparisons: the divisions a counting loop makes
 * cost more than the writing itself (13 for a millisecond timestamp). */
static size_t u64_digits10(unsigned long long u)
{
    if (u < 10) return 1;
    if (u < 100) return 2;
    if (u < 1000) return 3;
    if (u < 1000000000000ULL) {
        if (u < 100000000ULL) {
            if (u < 1000000) return u < 10000 ? 4 : 5 + (u >= 100000);
            return 7 + (u >= 10000000ULL);
        }
        if (u < 10000000000ULL) return 9 + (u >= 1000000000ULL);
        return 11 + (u >= 100000000000ULL);
    }
    return 12 + u64_digits10(u / 1000000000000ULL);
}

/* The eight decimal digits of x < 10^8 (with leading zeros) as the bytes of a word, the
 * most significant first in memory on a little-endian machine: the two halves of four
 * digits, each split into two pairs, each pair into two digits, all lanes at once (every
 * lane's product stays inside its lane, and the masks drop what the shifts bring over from
 * the next).  A stream id's 13-digit time is mostly these eight. */
static inline uint64_t digits8_ascii(uint32_t x)
{
    uint64_t v = x / 10000 | (uint64_t)(x % 10000) << 32;
    uint64_t q = (v * 10486) >> 20 & 0x0000007F0000007Full; /* v / 100 for v < 10^4 */
    v = q | (v - q * 100) << 16;
    q = (v * 103) >> 10 & 0x000F000F000F000Full; /* v / 10 for v < 100 */
    v = q | (v - q * 10) << 8;
    return v | 0x3030303030303030ull;
}

/* Decimal digits of u, written by hand: replies, stream ids and INCR print integers
 * constantly, and snprintf costs several times more.  The digits are counted first and
 * then written from the end, eight at a time while more than eight are left (on a
 * little-endian machine), then two at a time, as Redis's ull2string does.  Writes at most
 * cap-1 digits and a NUL; 0 (nothing written) when they do not fit. */
size_t fri_ull2string(char *dst, size_t cap, unsigned long long u)
{
    static const char pairs[201] = "0001020304050607080910111213141516171819"
                                   "2021222324252627282930313233343536373839"
                                   "4041424344454647484950515253545556575859"
                                   "6061626364656667686970717273747576777879"
                                   "8081828384858687888990919293949596979899";
    size_t n = u64_digits10(u);
    if (n + 1 > cap) return 0;
    char *p = dst + n;
    *p = '\0';
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
    while (u >= 100000000) {
        uint64_t w = digits8_ascii((uint32_t)(u % 100000000));
        u /= 100000000;
        p -= 8;
        memcpy(p, &w, 8);
    }
#endif
    while (u >= 100) {
        unsigned i = (unsigned)(u % 100) * 2;
        u /= 100;
        *--p = pairs[i + 1];
        *--p = pairs[i];
    }
    if (u >= 10) {
        *--p = pairs[u * 2 + 1];
        *--p = pairs[u * 2];
    } else {
        *--p = (char)('0' + u);
    }
    return n;
}

size_t fri_ll2string(char *dst, size_t cap, long long v)
{
    if (v >= 0) return fri_ull2string(dst, cap, (unsigned long long)v);
    if (cap < 2) return 0;
    size_t n = fri_ull2string(dst + 1, cap - 1, 0ULL - (unsigned long long)v);
    if (n == 0) return 0;
    dst[0] = '-';
    return n + 1;
}

size_t fri_d2string(char *dst, size_t cap, double d)
{
    int n;
    if (isinf(d)) n = snprintf(dst, cap, "%s", d > 0 ? "inf" : "-inf");
    else n = snprintf(dst, cap, "%.17g", d);
    return n < 0 ? 0 : (size_t)n;
}

size_t fri_ld2string(char *dst, size_t cap, long double ld)
{
    if (isinf(ld)) return (size_t)snprintf(dst, cap, "%s", ld > 0 ? "inf" : "-inf");
    int n = snprintf(dst, cap, "%.17Lf", ld);
    if (n < 0 || (size_t)n + 1 > cap) return 0;
    size_t l = (size_t)n;
    if (memchr(dst, '.', l)) {
        while (l > 0 && dst[l - 1] == '0') l--;
        if (l > 0 && dst[l - 1] == '.') l--;
    }
    if (l == 2 && dst[0] == '-' && dst[1] == '0') {
        dst[0] = '0';
        l = 1;
    }
    dst[l] = '\0';
    return l;
}

/* ----- Glob matching ---------------------------------------------------------------- */

static int glob_lower(int ch, int nocase) { return nocase ? tolower(ch) : ch; }

/* Redis's stringmatchlen: '*' any run, '?' one byte, '[...]' a class with '^' negation,
 * 'a-z' ranges (either order) and '\' escapes; '\' escapes anything outside a class. */
static int glob_impl(const char *p, size_t plen, const char *s, size_t slen, int nocase,
                     int *skip_longer)
{
    while (plen && slen) {
        switch (p[0]) {
        case '*':
            while (plen > 1 && p[1] == '*') {
                p++;
                plen--;
            }
            if (plen == 1) return 1; /* a trailing star matches the rest */
            while (slen) {
                if (glob_impl(p + 1, plen - 1, s, slen, nocase, skip_longer)) return 1;
                if (*skip_longer) return 0;
                s++;
                slen--;
            }
            *skip_longer = 1; /* no later start can match a suffix this one could not */
            return 0;
        case '?':
            s++;
            slen--;
            break;
        case '[': {
            int not_ = 0, match = 0;
            p++;
            plen--;
            not_ = plen && p[0] == '^';
            if (not_) {
                p++;
                plen--;
            }
            for (;;) {
                if (plen && p[0] == '\\' && plen >= 2) {
                    p++;
                    plen--;
                    if (p[0] == s[0]) match = 1;
                } else if (plen && p[0] == ']') {
                    break;
                } else if (plen == 0) {
                    p--;
                    plen++;
                    break;
                } else if (plen >= 3 && p[1] == '-') {
                    int start = (unsigned char)p[0], end = (unsigned char)p[2];
                    int c = (unsigned char)s[0];
                    if (start > end) {
                        int t = start;
                        start = end;
                        end = t;
                    }
                    if (nocase) {
                        start = tolower(start);
                        end = tolower(end);
                        c = tolower(c);
                    }
                    p += 2;
                    plen -= 2;
                    if (c >= start && c <= end) match = 1;
                } else {
                    if (glob_lower((unsigned char)p[0], nocase) ==
                        glob_lower((unsigned char)s[0], nocase))
                        match = 1;
                }
                p++;
                plen--;
            }
            if (not_) match = !match;
            if (!match) return 0;
            s++;
            slen--;
            break;
        }
        case '\\':
            if (plen >= 2) {
                p++;
                plen--;
            }
            /* fall through */
        default:
            if (glob_lower((unsigned char)p[0], nocase) != glob_lower((unsigned char)s[0], nocase))
                return 0;
            s++;
            slen--;
            break;
        }
        p++;
        plen--;
        if (slen == 0) {
            while (plen && *p == '*') {
                p++;
                plen--;
            }
            break;
        }
    }
    return plen == 0 && slen == 0;
}

int fri_glob_match(const char *pattern, size_t plen, const char *s, size_t slen, int nocase)
{
    int skip_longer = 0;
    return glob_impl(pattern, plen, s, slen, nocase, &skip_longer);
}

/* ----- Splitting a command line (redis-cli's rules) ----------------------------------- */

/* isspace() in the C locale, for the blanks between arguments. */
static int is_blank(char c)
{
    return c == ' ' || c == '\t' || c == '\n' || c == '\v' || c == '\f' || c == '\r';
}

static int hex_value(char c)
{
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
}

int fr_split_args(const char *line, size_t len, char *out, size_t *off, size_t *lens,
                  size_t max)
{
    /* The line is read as a C string: a NUL byte ends it, as it ends Redis's copy. */
    const char *end = memchr(line, '\0', len);
    if (!end) end = line + len;
    const char *p = line;
    size_t w = 0;
    int argc = 0;
    /* no byte at or past the end is read (the server's receive buffer ends there) */
#define AT(q) ((q) < end ? *(q) : '\0')
    for (;;) {
        while (p < end && is_blank(*p)) p++;
        if (p >= end) return argc;
        if ((size_t)argc >= max) return -1; /* cannot happen with max >= len/2+1 */
        int in_dq = 0, in_sq = 0, done = 0;
        off[argc] = w;
        while (!done) {
            char c = AT(p);
            if (in_dq) {
                if (c == '\\' && AT(p + 1) == 'x' && hex_value(AT(p + 2)) >= 0 &&
                    hex_value(AT(p + 3)) >= 0) {
                    out[w++] = (char)(hex_value(AT(p + 2)) * 16 + hex_value(AT(p + 3)));
                    p += 3;
                } else if (c == '\\' && AT(p + 1)) {
                    p++;
                    switch (*p) {
                    case 'n': out[w++] = '\n'; break;
                    case 'r': out[w++] = '\r'; break;
                    case 't': out[w++] = '\t'; break;
                    case 'b': out[w++] = '\b'; break;
                    case 'a': out[w++] = '\a'; break;
                    default: out[w++] = *p; break;
                    }
                } else if (c == '"') {
                    /* a closing quote must be followed by a blank or the end */
                    if (AT(p + 1) && !is_blank(AT(p + 1))) return -1;
                    done = 1;
                } else if (!c) {
                    return -1; /* no closing quote */
                } else {
                    out[w++] = c;
                }
            } else if (in_sq) {
                if (c == '\\' && AT(p + 1) == '\'') {
                    p++;
                    out[w++] = '\'';
                } else if (c == '\'') {
                    if (AT(p + 1) && !is_blank(AT(p + 1))) return -1;
                    done = 1;
                } else if (!c) {
                    return -1;
                } else {
                    out[w++] = c;
                }
            } else {
                switch (c) {
                case ' ': case '\n': case '\r': case '\t': case '\0': done = 1; break;
                case '"': in_dq = 1; break;
                case '\'': in_sq = 1; break;
                default: {
                    /* a run of ordinary bytes at once: lines are split at every check */
                    const char *q = p + 1;
                    while (q < end && *q != ' ' && *q != '\n' && *q != '\r' && *q != '\t' &&
                           *q != '"' && *q != '\'')
                        q++;
                    memcpy(out + w, p, (size_t)(q - p));
                    w += (size_t)(q - p);
                    p = q - 1;
                    break;
                }
                }
            }
            if (p < end) p++;
        }
        lens[argc] = w - off[argc];
        argc++;
    }
#undef AT
}

void fr_split_free(int argc, char **argv, size_t *argvlen)
{
    for (int i = 0; i < argc; i++) fri_free(argv[i]);
    fri_free(argv);
    fri_free(argvlen);
}

int fr_split_line(const char *line, char ***argv_out, size_t **len_out)
{
    size_t len = strlen(line), max = len / 2 + 1;
    char *out = fri_malloc(len ? len : 1);
    size_t *off = fri_malloc(max * sizeof *off);
    size_t *lens = fri_malloc(max * sizeof *lens);
    char **argv = NULL;
    int argc = out && off && lens ? fr_split_args(line, len, out, off, lens, max) : -1;
    *argv_out = NULL;
    *len_out = NULL;
    if (argc > 0 && !(argv = fri_calloc((size_t)argc, sizeof *argv))) argc = -1;
    for (int i = 0; i < argc; i++) {
        argv[i] = fri_malloc(lens[i] + 1);
        if (!argv[i]) {
            fr_split_free(i, argv, NULL);
            argv = NULL;
            argc = -1;
            break;
        }
        if (lens[i]) memcpy(argv[i], out + off[i], lens[i]);
        argv[i][lens[i]] = '\0';
    }
    fri_free(out);
    fri_free(off);
    if (argc <= 0) {
        fri_free(lens);
        return argc;
    }
    *argv_out = argv;
    *len_out = lens;
    return argc;
}
