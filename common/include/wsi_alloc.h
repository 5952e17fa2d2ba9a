/* wsi_alloc.h -- the one allocation family of wsim's own code: the engine (libwsim), the
 * scenario library and the wsim tool, the model (libwsm), the benchmarks, the fuzz
 * targets and the tests' support code.  (libfakeredis and fakeredis-server keep their
 * fri_ family.)  docs/architecture.md, "Running out of memory", says which module does
 * what when memory runs out; this header gives the means:
 *
 *   - wsi_malloc, wsi_calloc, wsi_realloc, wsi_memdup, wsi_strdup return NULL when out of
 *     memory (wsi_realloc leaves p as it was).  For code that reports it as an error
 *     (the scenario library: WS_ENOMEM, "name:0:0: error: out of memory").
 *   - wsi_xmalloc, wsi_xcalloc, wsi_xrealloc, wsi_xmemdup, wsi_xstrdup never return NULL:
 *     out of memory prints one line "wsim: out of memory in MODULE" on stderr and aborts.
 *     MODULE is WSI_MODULE, a string each target defines (libwsim, libwsm, wsim, bench,
 *     fuzz, tests); a target that does not define it (libwscenario, which must report
 *     instead) has no x forms, so it cannot abort by mistake.
 *
 * A size of 0 still gives a block (never NULL on success).  Free with wsi_free (the
 * libraries that run in a crash explorer's child: the engine, the scenario library and
 * common/'s own code must), or with free() where no child runs (the tool, the model, the
 * benchmarks, the tests): they are the same thing until wsi_alloc_use installs another
 * allocator.
 *
 * Every allocation of the family passes one test-only hook, wsi_alloc_fail_at: it makes
 * the n-th allocation from now fail, once or from then on -- SQLite's fault loops fail
 * allocation n = 1, 2, ... until a run completes (tests/unit/test_oom.c does that to a
 * scenario).  The hook is process-wide state, as the family is: no threads allocate on
 * a simulation path. */
#ifndef WSI_ALLOC_H
#define WSI_ALLOC_H

#include <stddef.h>
#include <stdlib.h>

/* n bytes, or NULL when out of memory. */
void *wsi_malloc(size_t n);
/* n * size zeroed bytes, or NULL when out of memory (or when n * size overflows). */
void *wsi_calloc(size_t n, size_t size);
/* p resized to n bytes, or NULL when out of memory (p is then untouched). */
void *wsi_realloc(void *p, size_t n);
/* A NUL-terminated copy of p[0..len), or NULL when out of memory. */
char *wsi_memdup(const void *p, size_t len);
/* A copy of s; NULL when s is NULL or out of memory. */
char *wsi_strdup(const char *s);

/* What an explorer's child allocates with (wsi_alloc_use): the family's functions go to
 * these instead of the C library's.  free and realloc also receive blocks the C library
 * allocated before the switch (free may leave them alone; realloc must copy them). */
typedef struct wsi_allocator {
    void *(*malloc)(size_t n);
    void *(*calloc)(size_t n, size_t size);
    void *(*realloc)(void *p, size_t n);
    void (*free)(void *p);
} wsi_allocator;
/* Routes the family through a from now on (process-wide; NULL: the C library's again). */
void wsi_alloc_use(const wsi_allocator *a);
extern const wsi_allocator *wsi_alloc_hooks; /* wsi_alloc_use's, or NULL */

/* Frees p (NULL: nothing), a block of the family's or of the C library's. */
static inline void wsi_free(void *p)
{
    if (__builtin_expect(wsi_alloc_hooks != NULL, 0)) wsi_alloc_hooks->free(p);
    else free(p);
}

/* ----- A region ----------------------------------------------------------------------------- */

/* From wsi_region_begin to wsi_region_end the family allocates from one region of memory
 * instead of the C library: an allocation bumps a pointer, wsi_free of one of its blocks
 * frees nothing until the end (the last block handed out is taken back at once), and
 * wsi_region_end drops every block of the region at once, keeping its pages for the next
 * one (common/src/wsi_region.c).  For work that builds much and keeps nothing: one
 * fuzz_outcomes run (fuzz/fuzz_outcomes.c, bench/bench_fuzz.c).  The contract:
 *   - no block allocated inside may be used after wsi_region_end;
 *   - a block the C library made before the region stays the C library's (wsi_free and
 *     wsi_realloc hand it to free and realloc);
 *   - not nested (a second begin does nothing); the allocator wsi_alloc_use installed is
 *     set aside for the region's time and put back at its end;
 *   - under a sanitizer, whose allocator must see every block, the functions do nothing
 *     and the C library serves as always (wsi_region_on says which). */
void wsi_region_begin(void);
void wsi_region_end(void);
/* Gives the region's kept pages back to the C library (outside a region). */
void wsi_region_release(void);
/* 1 when regions are built in, 0 under a sanitizer. */
int wsi_region_on(void);

/* Prints "wsim: out of memory in <module>" and a newline on stderr, and aborts. */
_Noreturn void wsi_oom(const char *module);

/* ----- The test hook ---------------------------------------------------------------------- */

/* The n-th allocation of the family from now fails (n >= 1); unless once, every
 * allocation after it fails too.  n == 0 turns the hook off.  Test code only. */
void wsi_alloc_fail_at(unsigned long n, int once);
/* How many allocations the hook has failed since the last wsi_alloc_fail_at. */
unsigned long wsi_alloc_failed(void);
/* How many times wsi_realloc has been called since the process started: a test bounds a
 * growth by it (an array grown one element at a time costs one call per element; grown
 * geometrically, a logarithm of them). */
unsigned long wsi_alloc_reallocs(void);

/* ----- The aborting forms (targets that define WSI_MODULE) -------------------------------- */

#ifdef WSI_MODULE
static inline void *wsi_xmalloc(size_t n)
{
    void *p = wsi_malloc(n);
    if (!p) wsi_oom(WSI_MODULE);
    return p;
}

static inline void *wsi_xcalloc(size_t n, size_t size)
{
    void *p = wsi_calloc(n, size);
    if (!p) wsi_oom(WSI_MODULE);
    return p;
}

static inline void *wsi_xrealloc(void *p, size_t n)
{
    void *q = wsi_realloc(p, n);
    if (!q) wsi_oom(WSI_MODULE);
    return q;
}

static inline char *wsi_xmemdup(const void *p, size_t len)
{
    char *s = wsi_memdup(p, len);
    if (!s) wsi_oom(WSI_MODULE);
    return s;
}

/* NULL only for a NULL s. */
static inline char *wsi_xstrdup(const char *s)
{
    char *d = wsi_strdup(s);
    if (s && !d) wsi_oom(WSI_MODULE);
    return d;
}
#endif

#endif /* WSI_ALLOC_H */
