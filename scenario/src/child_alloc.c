/* child_alloc.c -- memory for the crash explorer's forked children, on fresh pages.
 *
 * A child shares every page with its parent until it writes one, and then the kernel
 * copies the page.  glibc's allocator writes all over the heap the child inherited: a
 * malloc takes a chunk freed long ago wherever it lies, and a free writes the freed chunk's
 * header and its neighbour's -- on the 1,000- and 10,000-delivery bench_explore scenarios
 * half of a child's page copies came from malloc and free themselves.  After
 * wsc_child_alloc_start (called by the child right after fork) the two allocation
 * families of the code a child runs -- the fake's (fr_set_allocator) and wsim's
 * (wsi_alloc_use) -- take their memory from pages of the child's own, one allocation after
 * the other, and never free their parent's: the child lives for one crash point and then
 * _exits, so nothing needs to be given back, and the pages it shares with its parent are
 * written only where the simulation itself writes.
 *
 * No C library symbol is defined here (a library changes only what it owns: ctest
 * no_libc_allocator checks every library of the project with nm).  What the C library
 * allocates for itself in a child (stdio, qsort's buffer) still comes from glibc.  Off
 * with a sanitizer, whose allocator must see every block; elsewhere than glibc on Linux
 * wsc_child_alloc_start does nothing. */
#define _DEFAULT_SOURCE 1 /* MAP_ANONYMOUS */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "fakeredis.h"
#include "wsi_alloc.h"
#include "wsc_int.h"

#if defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(memory_sanitizer) || \
    __has_feature(thread_sanitizer)
#define WSC_CHILD_ALLOC_OFF 1
#endif
#endif
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define WSC_CHILD_ALLOC_OFF 1
#endif

#if defined(__GLIBC__) && defined(__linux__) && !defined(WSC_CHILD_ALLOC_OFF)

#include <malloc.h>
#include <sys/mman.h>

static char *next, *end;        /* the current block: its free part */
static char *blocks[4096];      /* the blocks this child made (realloc and free tell ours
                                   by them) */
static size_t block_size[4096];
static size_t nblocks;
static void *free_list[48];     /* per size class: freed allocations of that class */

/* Every allocation is a 16-byte header holding its size class k (room for 16 << k
 * bytes), then the bytes (16-aligned, as malloc's are).  A freed one goes on its class's
 * list, and the next allocation of the class takes it: the child's own pages are reused,
 * the parent's are never written for the allocator's sake. */
#define HEADER 16u
#define BLOCK ((size_t)1 << 20)

/* The smallest size class k whose room (16 << k bytes) holds n bytes. */
static unsigned class_of(size_t n)
{
    unsigned k = 0;
    while (((size_t)16 << k) < n) k++;
    return k;
}

/* n bytes from the child's own pages: a freed allocation of the class, or the next free
 * bytes of a block (a new mmap'd one when needed); NULL when out of memory. */
static void *take(size_t n)
{
    if (n > ((size_t)1 << 46)) return NULL;
    unsigned k = class_of(n ? n : 1);
    if (free_list[k]) {
        void *p = free_list[k];
        memcpy(&free_list[k], p, sizeof(void *));
        return p;
    }
    size_t need = HEADER + ((size_t)16 << k);
    if ((size_t)(end - next) < need) {
        if (nblocks == sizeof blocks / sizeof *blocks) return NULL;
        size_t size = need > BLOCK ? need : BLOCK;
        void *b = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        if (b == MAP_FAILED) return NULL;
        next = b;
        end = next + size;
        blocks[nblocks] = b;
        block_size[nblocks++] = size;
    }
    char *p = next;
    next += need;
    size_t kk = k;
    memcpy(p, &kk, sizeof kk);
    return p + HEADER;
}

/* Whether p lies in one of the child's own blocks (not the parent's heap). */
static int ours(const void *p)
{
    for (size_t i = nblocks; i-- > 0;)
        if ((const char *)p >= blocks[i] && (const char *)p < blocks[i] + block_size[i]) return 1;
    return 0;
}

/* The size class of p, one of the child's allocations. */
static size_t our_class(const void *p)
{
    size_t k;
    memcpy(&k, (const char *)p - HEADER, sizeof k);
    return k;
}

static void *child_malloc(size_t n) { return take(n); }

static void *child_calloc(size_t n, size_t size)
{
    if (size && n > SIZE_MAX / size) return NULL;
    void *p = take(n * size);
    if (p) memset(p, 0, n * size); /* a reused allocation is not zero */
    return p;
}

/* Its own allocations go back to their class; the parent's stay untouched (freeing one
 * would write its page). */
static void child_free(void *p)
{
    if (!p || !ours(p)) return;
    size_t k = our_class(p);
    memcpy(p, &free_list[k], sizeof(void *));
    free_list[k] = p;
}

/* The bytes of a block: its class's room, or glibc's count for a parent's block (read,
 * not written). */
static size_t child_usable_size(void *p)
{
    return ours(p) ? ((size_t)16 << our_class(p)) : malloc_usable_size(p);
}

/* Kept in place when its class holds n, else moved to the child's own pages. */
static void *child_realloc(void *p, size_t n)
{
    if (!p) return take(n);
    size_t old = child_usable_size(p);
    if (ours(p) && n <= old) return p;
    void *q = take(n);
    if (q) {
        memcpy(q, p, old < n ? old : n);
        child_free(p);
    }
    return q;
}

void wsc_child_alloc_start(void)
{
    static const fr_allocator fake = {child_malloc, child_calloc, child_realloc, child_free,
                                      child_usable_size};
    static const wsi_allocator wsim = {child_malloc, child_calloc, child_realloc, child_free};
    fr_set_allocator(&fake);
    wsi_alloc_use(&wsim);
}

#else

void wsc_child_alloc_start(void) {}

#endif
