/* test_rng.h -- the seeded generators the unit tests' random walks draw from.  No rand():
 * a failing seed must replay the same steps on any machine.  Header-only. */
#ifndef TEST_RNG_H
#define TEST_RNG_H

#include <stdint.h>

#include "wsi_splitmix.h"

/* splitmix64: the next value of the sequence seeded by *s (any seed, 0 included). */
static inline uint64_t splitmix64_next(uint64_t *s) { return wsi_splitmix64(s); }

/* A splitmix64 draw in [0, n) (n > 0; the modulo bias does not matter here). */
static inline unsigned splitmix64_below(uint64_t *s, unsigned n)
{
    return (unsigned)(splitmix64_next(s) % n);
}

/* xorshift64 (13, 7, 17): the next state, which is also the value.  *s must not be 0. */
static inline uint64_t xorshift64_next(uint64_t *s)
{
    *s ^= *s << 13;
    *s ^= *s >> 7;
    *s ^= *s << 17;
    return *s;
}

#endif
