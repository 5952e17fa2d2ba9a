/* hll_int.h -- the HyperLogLog representation of hyperloglog.c, for its unit test.
 *
 * An HLL is a string value whose bytes are exactly redis-server 7.0.15's: a 16-byte header
 * ("HYLL", the encoding byte, three zero bytes, the cached cardinality as 8 little-endian
 * bytes whose top bit set means "stale"), then 16384 6-bit registers either packed (dense,
 * 12288 bytes, register i at bit 6*i, least significant bits first) or run-length coded
 * (sparse: ZERO 00xxxxxx runs of 1-64 zeros, XZERO 01xxxxxx yyyyyyyy runs of 1-16384 zeros,
 * VAL 1vvvvvxx runs of 1-4 registers of value 1-32).  Redis's opcode choices, merges and
 * sparse-to-dense promotion are reproduced step for step, so a GET of the key gives the
 * same bytes as on a real server after the same commands.
 */
#ifndef FRI_HLL_INT_H
#define FRI_HLL_INT_H

#include <stddef.h>
#include <stdint.h>

#include "fr_int.h"

#define FRI_HLL_P 14
#define FRI_HLL_REGISTERS (1 << FRI_HLL_P)
#define FRI_HLL_BITS 6
#define FRI_HLL_REGISTER_MAX ((1 << FRI_HLL_BITS) - 1)
#define FRI_HLL_HDR_SIZE 16
#define FRI_HLL_DENSE_SIZE (FRI_HLL_HDR_SIZE + (FRI_HLL_REGISTERS * FRI_HLL_BITS + 7) / 8)
#define FRI_HLL_DENSE 0
#define FRI_HLL_SPARSE 1

/* MurmurHash2, 64-bit version (MurmurHash64A), as Redis hashes elements. */
uint64_t fri_murmur64a(const void *key, size_t len, uint64_t seed);
/* The register an element goes to (*reg) and its run length "000..1" (1..51). */
int fri_hll_pattern(const char *ele, size_t len, long *reg);

/* A dense register of regs (the bytes after the header; one byte past the end must be
 * readable, as Redis's sds terminator is). */
unsigned fri_hll_dense_get(const uint8_t *regs, long i);
void fri_hll_dense_set(uint8_t *regs, long i, unsigned v);

/* A new empty HLL: sparse, XZERO runs covering every register (18 bytes). NULL: OOM. */
fri_str *fri_hll_new(void);
/* Whether the bytes are an HLL Redis accepts (magic, encoding, dense length). */
int fri_hll_valid(const fri_str *s);
/* Register index to count if larger (hllSparseSet / hllDenseSet): 1 changed, 0 not, -1
 * a corrupt sparse HLL.  A sparse HLL may be promoted to dense (a value above 32, or a
 * result longer than sparse_max bytes); *sp may be reallocated.  -2: out of memory. */
int fri_hll_set(fri_str **sp, long index, uint8_t count, long long sparse_max);
/* Adds an element: fri_hll_set of its register and run. */
int fri_hll_add(fri_str **sp, const char *ele, size_t len, long long sparse_max);
/* Sparse to dense (a dense HLL is left alone): 0, -1 corrupt, -2 out of memory. */
int fri_hll_to_dense(fri_str **sp);
/* The estimate (Ertl's improved estimator with Redis's sigma and tau); *invalid set (if
 * not NULL) for a sparse HLL whose runs do not cover exactly 16384 registers. */
uint64_t fri_hll_count(const fri_str *s, int *invalid);
/* max[i] = MAX(max[i], register i): 0, or -1 for a corrupt sparse HLL. */
int fri_hll_merge(uint8_t *max, const fri_str *s);
/* The estimate of 16384 byte registers (PFCOUNT of several keys). */
uint64_t fri_hll_count_registers(const uint8_t *max);

#endif /* FRI_HLL_INT_H */
