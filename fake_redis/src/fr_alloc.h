/* fr_alloc.h -- the fake's one allocation family (alloc.c), for every file of
 * fake_redis/src, the self-contained data structures (dict, sidmap, zskiplist) included.
 */
#ifndef FR_ALLOC_H
#define FR_ALLOC_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include "fakeredis.h"

/* ----- Memory: the one allocation family (alloc.c) -------------------------------------
 * Every allocation of the fake goes through these (docs/architecture.md, "Running out of
 * memory").  Outside a guarded call they behave as malloc, calloc, realloc and strdup:
 * NULL when out of memory, and the public function returns its error.  Inside a guarded
 * call (fri_mem_enter .. fri_mem_leave: every command, and the public calls that work on
 * an existing server) they never return NULL: what the C library refuses, the guarding
 * server's emergency reserve serves (the server is then short of memory: server.c's gate
 * refuses deny-oom commands with -OOM until the reserve is whole again), and a request
 * the reserve cannot serve either aborts naming the command (the documented residual).
 * So code that only runs inside a guarded call needs no NULL checks.  fri_free,
 * fri_realloc and fri_usable_size recognise the reserve's blocks by address.  Memory
 * handed to the embedder to free() comes from fri_malloc_plain (never the reserve, never
 * the embedder's allocator).
 *
 * The normal path costs one load and one branch more than malloc (free, realloc: the
 * same): fri_alloc_slow, one word, is non-zero whenever anything else must happen -- the
 * failure test's hook counting, a reserve with blocks in use, an allocator installed by
 * fr_set_allocator (a crash explorer's child) -- and the slow paths in alloc.c sort it
 * out. */
#define FRI_TLS _Thread_local __attribute__((tls_model("initial-exec")))
/* 1 MiB: the failure test's command mix (every type, streams with groups, a script's
 * interpreter built from it) uses at most ~100 KB of it at once (tests/unit/test_oom.c
 * prints the peak); a single value larger than what is left is the residual. */
#define FRI_RESERVE_SIZE ((size_t)1 << 20)
typedef struct fri_reserve fri_reserve;
#define FRI_ALLOC_ARMED 1u    /* fr_debug_fail_allocations counts (process-wide) */
#define FRI_ALLOC_RESERVE 2u  /* a reserve area has blocks in use (any thread) */
#define FRI_ALLOC_HOOKED 4u   /* fr_set_allocator's allocator serves */
extern _Atomic unsigned fri_alloc_slow;    /* the reasons above, or 0: the C library's */
extern FRI_TLS fr_server *fri_mem_guard;   /* the server whose reserve serves, or NULL */
extern FRI_TLS const char *fri_mem_what;   /* the guarded call's name, for the abort message */
void *fri_malloc_slow(size_t n);
void *fri_malloc_failed(size_t n);
void *fri_calloc_slow(size_t n, size_t size);
void *fri_calloc_failed(size_t n, size_t size);
void *fri_realloc_slow(void *p, size_t n);
void *fri_realloc_failed(void *p, size_t n);
void fri_free_slow(void *p);
void *fri_malloc_plain(size_t n);          /* never the reserve: memory for the embedder */
char *fri_strdup(const char *s);
char *fri_strndup(const char *s, size_t max);
size_t fri_usable_size(void *p);           /* malloc_usable_size, reserve blocks too */

static inline unsigned fri_alloc_slow_now(void)
{
    return atomic_load_explicit(&fri_alloc_slow, memory_order_relaxed);
}
static inline void *fri_malloc(size_t n)
{
    if (__builtin_expect(fri_alloc_slow_now(), 0)) return fri_malloc_slow(n);
    void *p = malloc(n);
    return __builtin_expect(p != NULL, 1) ? p : fri_malloc_failed(n);
}
static inline void *fri_calloc(size_t n, size_t size)
{
    if (__builtin_expect(fri_alloc_slow_now(), 0)) return fri_calloc_slow(n, size);
    void *p = calloc(n, size);
    return __builtin_expect(p != NULL, 1) ? p : fri_calloc_failed(n, size);
}
static inline void *fri_realloc(void *p, size_t n)
{
    if (__builtin_expect(fri_alloc_slow_now() != 0 || n == 0, 0)) return fri_realloc_slow(p, n);
    uintptr_t old = (uintptr_t)p; /* still p's block when realloc fails */
    void *q = realloc(p, n);
    return __builtin_expect(q != NULL, 1) ? q : fri_realloc_failed((void *)old, n);
}
static inline void fri_free(void *p)
{
    if (__builtin_expect(fri_alloc_slow_now(), 0)) fri_free_slow(p);
    else free(p);
}

/* Guarded calls: enter returns the previous guard for leave (guards nest: EXEC, scripts,
 * a busy hook running other clients' commands).  what names the call in the abort
 * message when no command is running. */
static inline fr_server *fri_mem_enter(fr_server *s, const char *what)
{
    fr_server *prev = fri_mem_guard;
    fri_mem_guard = s;
    if (!prev) fri_mem_what = what;
    return prev;
}
static inline void fri_mem_leave(fr_server *prev) { fri_mem_guard = prev; }
/* A fresh reserve area (NULL when out of memory), and letting one go (freed now, or when
 * its last block is freed). */
fri_reserve *fri_reserve_new(void);
void fri_reserve_release(fri_reserve *r);
/* After a server is freed: none of its reserves' blocks may be left (a leak the leak
 * checkers cannot see, as the list of areas still points at them): says so and asserts. */
void fri_reserve_check_gone(const fr_server *s);
size_t fri_reserve_used(const fri_reserve *r);
/* At the gate of a command of a server short of memory: makes the reserve whole again
 * (every block came back) or takes a fresh one.  0 and the server is no longer short, or
 * -1 (still short). */
int fri_mem_reacquire(fr_server *s);
/* Whether p is a block of a reserve (the embedder cannot free() it). */
int fri_mem_is_reserve(const void *p);
/* An allocation that cannot fail failed outside a guarded call: a bug of the fake (a
 * public function that should enter a guard); says so and aborts. */
_Noreturn void fri_mem_unguarded(const char *what);

#endif /* FR_ALLOC_H */
