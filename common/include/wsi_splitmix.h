/* wsi_splitmix.h -- splitmix64 (Steele, Lea and Flood, "Fast splittable pseudorandom
 * number generators", 2014), header only.  The one generator step every module seeds its
 * own randomness from: the fake's server seed (fake_redis/src/server.c), the model's
 * choice source (wsm_choice.h, CH_PRNG) and the benchmarks' workloads.  Our own function,
 * never rand(), so a seed gives the same sequence on every machine and libc. */
#ifndef WSI_SPLITMIX_H
#define WSI_SPLITMIX_H

#include <stdint.h>

/* Advances *state and returns the next 64 random bits. */
static inline uint64_t wsi_splitmix64(uint64_t *state)
{
    uint64_t z = (*state += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

#endif /* WSI_SPLITMIX_H */
