/* wsi_region.c -- a region of memory the family allocates from for a while, then drops whole
 * (wsi_alloc.h, "A region").
 *
 * Why: fuzz_outcomes plays thousands of small runs a second, each building a simulation,
 * a model and their texts and dropping them again -- a few hundred allocations a run, a
 * fifth of a run's instructions in the C library's malloc and free (docs/benchmarks.md,
 * "Fuzzing").  In a region an allocation is a pointer bumped inside a chunk, a free
 * nothing (or a step back, for the last block), a growing buffer at the top grows in
 * place, and the end of the run rewinds the pointer: the next run reuses the same pages,
 * warm in the caches.  SQLite's lookaside and Postgres's memory contexts make the same
 * trade for the same kind of work.
 *
 * Every block has a 16-byte header holding its size (realloc needs it); blocks are
 * 16-aligned, as malloc's are.  Chunks come from the C library and are kept from one
 * region to the next (the largest run's memory stays with the process).  Off under a
 * sanitizer: its allocator must see every block. */
#include "wsi_alloc.h"

#include <stdint.h>
#include <string.h>

#if defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(memory_sanitizer)
#define WSI_REGION_OFF 1
#endif
#endif
#if defined(__SANITIZE_ADDRESS__)
#define WSI_REGION_OFF 1
#endif

#ifndef WSI_REGION_OFF

#define HEADER 16u              /* a block's header: its size, a multiple of 16 */
#define CHUNK ((size_t)1 << 20) /* a chunk's usual size */
#define MAX_CHUNKS 64           /* beyond them, the C library serves (no run comes near) */

typedef struct chunk {
    char *raw;  /* what malloc returned */
    char *base; /* its first 16-aligned byte */
    size_t size;
} chunk;

static chunk chunks[MAX_CHUNKS]; /* kept from one region to the next */
static size_t nchunks;           /* how many chunks exist */
static size_t cur;               /* the chunk being filled */
static char *base, *top, *end;   /* the chunk being filled: its start, its free part */
static char *last;               /* the last block handed out: what free may take back and
                                    realloc grow in place; NULL when there is none */
static const wsi_allocator *saved; /* what was installed before wsi_region_begin */
static int active;

static size_t round16(size_t n) { return (n + 15u) & ~(size_t)15u; }

/* Whether p is a block of the region (not the C library's). */
static int ours(const void *p)
{
    const char *q = p;
    if (q >= base && q < end) return 1; /* nearly always: a run fits one chunk */
    for (size_t i = 0; i < nchunks && i < cur; i++)
        if (q >= chunks[i].base && q < chunks[i].base + chunks[i].size) return 1;
    return 0;
}

static size_t size_of(const void *p)
{
    size_t n;
    memcpy(&n, (const char *)p - HEADER, sizeof n);
    return n;
}

/* Moves to the next chunk with room for need bytes (a kept one, or a new one); 0 or -1. */
static int next_chunk(size_t need)
{
    while (cur + 1 < nchunks) {
        cur++;
        if (chunks[cur].size >= need) {
            base = top = chunks[cur].base;
            end = top + chunks[cur].size;
            return 0;
        }
    }
    if (nchunks == MAX_CHUNKS) return -1;
    size_t size = need > CHUNK ? round16(need) : CHUNK;
    char *raw = malloc(size + 15u);
    if (!raw) return -1;
    char *start = (char *)(((uintptr_t)raw + 15u) & ~(uintptr_t)15u);
    chunks[nchunks] = (chunk){raw, start, size};
    cur = nchunks++;
    top = base = start;
    end = start + size;
    return 0;
}

/* n bytes of the region; NULL when out of memory. */
static void *region_malloc(size_t n)
{
    if (n > SIZE_MAX / 2) return NULL;
    size_t size = round16(n ? n : 1);
    if ((size_t)(end - top) < HEADER + size && next_chunk(HEADER + size) != 0) return NULL;
    memcpy(top, &size, sizeof size);
    last = top + HEADER;
    top = last + size;
    return last;
}

static void *region_calloc(size_t n, size_t size)
{
    if (size && n > SIZE_MAX / size) return NULL;
    void *p = region_malloc(n * size);
    if (p) memset(p, 0, n * size);
    return p;
}

/* A block of the region: the last one is taken back (a buffer freed right after its
 * growth, a scratch array), any other stays until the region ends.  A C library's block
 * (made before the region began) goes back to the C library. */
static void region_free(void *p)
{
    if (!p) return;
    if (!ours(p)) {
        free(p);
        return;
    }
    if (p == last) {
        top = (char *)p - HEADER;
        last = NULL;
    }
}

/* The last block grows in place while its chunk has room; any other moves.  A C
 * library's block stays the C library's (it may outlive the region). */
static void *region_realloc(void *p, size_t n)
{
    if (!p) return region_malloc(n);
    if (!ours(p)) return realloc(p, n);
    size_t old = size_of(p);
    size_t size = round16(n ? n : 1);
    if (size <= old) return p;
    if (p == last && (size_t)(end - (char *)p) >= size) {
        memcpy((char *)p - HEADER, &size, sizeof size);
        top = (char *)p + size;
        return p;
    }
    void *q = region_malloc(n);
    if (q) memcpy(q, p, old);
    return q;
}

static const wsi_allocator region = {region_malloc, region_calloc, region_realloc, region_free};

void wsi_region_begin(void)
{
    if (active) return;
    active = 1;
    saved = wsi_alloc_hooks;
    cur = 0;
    last = NULL;
    if (nchunks) {
        base = top = chunks[0].base;
        end = top + chunks[0].size;
    } else {
        base = top = end = NULL; /* the first allocation makes the first chunk */
        cur = (size_t)-1;
    }
    wsi_alloc_use(&region);
}

void wsi_region_end(void)
{
    if (!active) return;
    active = 0;
    wsi_alloc_use(saved);
    saved = NULL;
    last = NULL;
    base = top = end = NULL;
}

void wsi_region_release(void)
{
    if (active) return;
    for (size_t i = 0; i < nchunks; i++) free(chunks[i].raw);
    nchunks = 0;
}

int wsi_region_on(void) { return 1; }

#else

/* Under a sanitizer the C library serves every block, so that its checks see them. */
void wsi_region_begin(void) {}
void wsi_region_end(void) {}
void wsi_region_release(void) {}
int wsi_region_on(void) { return 0; }

#endif
