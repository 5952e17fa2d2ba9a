/* token.c -- the recording's tokens: which bytes go bare, and the quoted form
 * (docs/recording.md, "Tokens").  The writer and the reader share these rules. */
#include <string.h>

#include "wsr.h"
#include "wsr_int.h"

int wsri_bare_byte(unsigned char c)
{
    return c >= 0x21 && c <= 0x7e && c != '"' && c != '\\' && c != '=';
}

int wsri_needs_quotes(const char *p, size_t n)
{
    if (n == 0) return 1;
    for (size_t i = 0; i < n; i++)
        if (!wsri_bare_byte((unsigned char)p[i])) return 1;
    return 0;
}

size_t wsr_token(char *buf, size_t cap, const char *p, size_t n)
{
    return wsri_token(buf, cap, p, n, wsri_needs_quotes(p, n));
}

size_t wsri_token(char *buf, size_t cap, const char *p, size_t n, int quoted)
{
    static const char hex[] = "0123456789abcdef";
    size_t k = 0;
#define PUT(ch)                            \
    do {                                   \
        if (k + 1 < cap) buf[k] = (ch);    \
        k++;                               \
    } while (0)
    if (!quoted) {
        for (size_t i = 0; i < n; i++) PUT(p[i]);
    } else {
        PUT('"');
        for (size_t i = 0; i < n; i++) {
            unsigned char c = (unsigned char)p[i];
            switch (c) {
            case '\\': PUT('\\'); PUT('\\'); break;
            case '"': PUT('\\'); PUT('"'); break;
            case '\n': PUT('\\'); PUT('n'); break;
            case '\r': PUT('\\'); PUT('r'); break;
            case '\t': PUT('\\'); PUT('t'); break;
            default:
                if (c >= 0x20 && c <= 0x7e) {
                    PUT((char)c);
                } else {
                    PUT('\\');
                    PUT('x');
                    PUT(hex[c >> 4]);
                    PUT(hex[c & 15]);
                }
            }
        }
        PUT('"');
    }
#undef PUT
    if (cap) buf[k < cap ? k : cap - 1] = '\0';
    return k;
}
