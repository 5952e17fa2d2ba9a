/* wsm_int.h -- what libwsm's sources share and its users do not see: building a gen_str
 * and writing a number without printf (the generator and the model write names, payloads
 * and reply texts at every step of every run). */
#ifndef WSM_INT_H
#define WSM_INT_H

#include <stdint.h>
#include <string.h>

#include "wsm_gen.h"

/* The n bytes at p and a NUL copied into mem (n + 1 bytes, from whichever allocator the
 * caller keeps its strings in: the heap in gen.c, the model's arena in model.c). */
static inline gen_str wsm_str_in(char *mem, const char *p, size_t n)
{
    if (n) memcpy(mem, p, n);
    mem[n] = '\0';
    return (gen_str){mem, n};
}

/* Decimal digits of v at out (NUL-terminated, at most 20 digits); returns their count. */
static inline size_t wsm_u64_text(char *out, uint64_t v)
{
    char t[20];
    size_t n = 0;
    do {
        t[n++] = (char)('0' + v % 10);
        v /= 10;
    } while (v);
    for (size_t i = 0; i < n; i++) out[i] = t[n - 1 - i];
    out[n] = '\0';
    return n;
}

#endif /* WSM_INT_H */
