/* alloc.c -- the fake's one allocation family: what happens when memory runs out.
 *
 * The rule (docs/architecture.md, "Running out of memory"): outside a guarded call the
 * family behaves as malloc & co. do, NULL when out of memory, and the public function
 * that asked returns its error.  Inside a guarded call (a command, and the public calls
 * that work on an existing server: fri_mem_enter .. fri_mem_leave) an allocation never
 * fails: when the C library refuses, the guarding server's emergency reserve, one block
 * taken when the server was made, serves the request by bumping a pointer, and the
 * server is "short of memory" until the reserve is whole again (server.c's gate then
 * answers deny-oom commands Redis's -OOM error before they run).  A command therefore
 * always completes with its normal reply; SQLite reaches the same promise by undoing,
 * the fake by never failing half-way.
 *
 * The reserve's blocks are recognised by address: fri_free and fri_realloc look the
 * pointer up among the areas that have blocks in use (a list that is empty on the normal
 * path, so the check is one load).  An area the server has replaced is freed when its
 * last block is.
 *
 * The one residual: a request the reserve cannot hold either (the reserve spent, or a
 * single request larger than what is left) aborts the process with a message naming the
 * command.  FRI_RESERVE_SIZE is chosen so the failure test's command mix never gets there
 * (tests/unit/test_oom.c measures what it uses).
 */
#include <assert.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#ifdef __GLIBC__
#include <malloc.h>
#endif
#include <pthread.h>

#include "fr_int.h"

_Atomic unsigned fri_alloc_slow;
FRI_TLS fr_server *fri_mem_guard;
FRI_TLS const char *fri_mem_what;

/* The allocator fr_set_allocator installed, or NULL (the C library's). */
static const fr_allocator *hooks;

static void slow_bit(unsigned bit, int on)
{
    if (on) atomic_fetch_or_explicit(&fri_alloc_slow, bit, memory_order_relaxed);
    else atomic_fetch_and_explicit(&fri_alloc_slow, ~bit, memory_order_relaxed);
}

void fr_set_allocator(const fr_allocator *a)
{
    hooks = a;
    slow_bit(FRI_ALLOC_HOOKED, a != NULL);
}

/* The allocator under the family: the installed one, or the C library's. */
static void *base_malloc(size_t n) { return hooks ? hooks->malloc(n) : malloc(n); }
static void *base_calloc(size_t n, size_t size)
{
    return hooks ? hooks->calloc(n, size) : calloc(n, size);
}
static void *base_realloc(void *p, size_t n) { return hooks ? hooks->realloc(p, n) : realloc(p, n); }
static void base_free(void *p)
{
    if (hooks) hooks->free(p);
    else free(p);
}

/* One reserve area: a bump allocator over one block. */
struct fri_reserve {
    char *base;                 /* the block (FRI_RESERVE_SIZE bytes) */
    size_t size;                /* its bytes */
    size_t used;                /* bytes handed out (headers included), never given back
                                   until every block is free again */
    size_t live;                /* blocks handed out and not yet freed */
    int retired;                /* the server took a fresh area: free this one when live
                                   drops to 0 */
    const fr_server *owner;     /* the server whose reserve it is (fri_reserve_release
                                   checks none of its blocks outlives it) */
    struct fri_reserve *next;   /* the list of areas with live blocks */
};

/* Each block starts with this header: the bytes the caller may use (realloc copies them). */
typedef struct {
    size_t size;
    size_t pad; /* keeps the block 16-byte aligned, as malloc's are */
} chunk_head;

/* Areas with live blocks, from any server and thread (a server may be freed by another
 * thread than the one that ran its commands).  FRI_ALLOC_RESERVE says the list is not
 * empty, so the normal path never takes the lock. */
static pthread_mutex_t areas_lock = PTHREAD_MUTEX_INITIALIZER;
static fri_reserve *areas;

/* ----- The test hook: fail the n-th allocation ------------------------------------------ */

/* Process-wide, as the hook is test-only and its tests run one thread. */
static int armed;                   /* the hook counts */
static long fail_countdown;         /* allocations to go until the first failure */
static int fail_persistent;         /* keep failing after the first */
static int failing;                 /* the persistent failure has begun */
static unsigned long failures;      /* allocations failed by the hook, ever */

long fr_debug_fail_allocations(long first, int persistent)
{
    long before = !armed ? -1 : failing ? 0 : fail_countdown;
    failing = 0;
    fail_persistent = persistent != 0;
    fail_countdown = first;
    armed = first > 0;
    slow_bit(FRI_ALLOC_ARMED, armed);
    return before;
}

unsigned long fr_debug_allocation_failures(void) { return failures; }

/* Called for each allocation while armed: 1 when this one must fail. */
static int debug_fails(void)
{
    if (!armed) return 0;
    if (failing) {
        failures++;
        return 1;
    }
    if (--fail_countdown > 0) return 0;
    failures++;
    if (fail_persistent) {
        failing = 1;
    } else {
        armed = 0;
        slow_bit(FRI_ALLOC_ARMED, 0);
    }
    return 1;
}

/* ----- Reserve areas ------------------------------------------------------------------- */

fri_reserve *fri_reserve_new(void)
{
    fri_reserve *r = fri_malloc_plain(sizeof(*r));
    if (!r) return NULL;
    /* not touched: the limits that make malloc fail (RLIMIT_AS, strict overcommit)
     * count address space, which the block holds from here on */
    r->base = fri_malloc_plain(FRI_RESERVE_SIZE);
    if (!r->base) {
        free(r);
        return NULL;
    }
    r->size = FRI_RESERVE_SIZE;
    r->used = r->live = 0;
    r->retired = 0;
    r->owner = NULL;
    r->next = NULL;
    return r;
}

static void area_unlink(fri_reserve *r)
{
    for (fri_reserve **p = &areas; *p; p = &(*p)->next) {
        if (*p == r) {
            *p = r->next;
            if (!areas) slow_bit(FRI_ALLOC_RESERVE, 0);
            return;
        }
    }
}

static void area_destroy(fri_reserve *r)
{
    free(r->base);
    free(r);
}

void fri_reserve_release(fri_reserve *r)
{
    if (!r) return;
    pthread_mutex_lock(&areas_lock);
    int keep = r->live > 0;
    if (keep) r->retired = 1;
    pthread_mutex_unlock(&areas_lock);
    if (!keep) area_destroy(r);
}

void fri_reserve_check_gone(const fr_server *s)
{
    size_t leaked = 0;
    pthread_mutex_lock(&areas_lock);
    for (fri_reserve *r = areas; r; r = r->next)
        if (r->owner == s) leaked += r->live;
    pthread_mutex_unlock(&areas_lock);
    /* LSan cannot see these (the list still points at their area): say so */
    if (leaked)
        fprintf(stderr, "fakeredis: %zu block(s) of a freed server's emergency reserve were "
                        "never freed (a leak)\n", leaked);
    assert(leaked == 0);
}

/* The area holding p, or NULL; with the lock held. */
static fri_reserve *area_of(const void *p)
{
    for (fri_reserve *r = areas; r; r = r->next)
        if ((const char *)p >= r->base && (const char *)p < r->base + r->size) return r;
    return NULL;
}

size_t fri_reserve_used(const fri_reserve *r) { return r ? r->used : 0; }

size_t fr_debug_reserve_used(const fr_server *s) { return fri_reserve_used(s->reserve); }

int fri_mem_reacquire(fr_server *s)
{
    fri_reserve *r = s->reserve;
    pthread_mutex_lock(&areas_lock);
    int whole = r->live == 0;
    if (whole) r->used = 0; /* every block came back: the reserve is whole again */
    pthread_mutex_unlock(&areas_lock);
    if (!whole) {
        fri_reserve *n = fri_reserve_new();
        if (!n) return -1;
        fri_reserve_release(r);
        s->reserve = n;
    }
    s->mem_short = 0;
    return 0;
}

/* The process cannot go on: the reserve cannot serve n bytes.  Names the command. */
static _Noreturn void reserve_spent(fr_server *s, size_t n)
{
    const char *what = fri_mem_what ? fri_mem_what : "a call";
    if (s->running && s->running->cmd) what = s->running->cmd->name;
    fprintf(stderr,
            "fakeredis: out of memory in '%s': the emergency reserve has %zu of %zu bytes "
            "left and cannot serve %zu more; aborting (docs/architecture.md, \"Running out "
            "of memory\")\n",
            what, s->reserve->size - s->reserve->used, s->reserve->size, n);
    abort();
}

/* Serves n bytes from the guarding server's reserve; NULL outside a guarded call. */
static void *reserve_alloc(size_t n)
{
    fr_server *s = fri_mem_guard;
    if (!s) return NULL;
    fri_reserve *r = s->reserve;
    size_t need = sizeof(chunk_head) + ((n + 15) & ~(size_t)15);
    if (n > r->size || need > r->size - r->used) reserve_spent(s, n);
    pthread_mutex_lock(&areas_lock);
    chunk_head *h = (chunk_head *)(r->base + r->used);
    r->used += need;
    r->owner = s;
    if (r->live++ == 0) {
        r->next = areas;
        areas = r;
        slow_bit(FRI_ALLOC_RESERVE, 1);
    }
    pthread_mutex_unlock(&areas_lock);
    h->size = need - sizeof(chunk_head);
    s->mem_short = 1;
    return h + 1;
}

/* The usable bytes of a block from the C library, for the copy of a failed realloc. */
static size_t heap_usable(void *p)
{
#ifdef __GLIBC__
    return malloc_usable_size(p);
#else
    (void)p;
    return 0;
#endif
}

/* ----- The family's slow paths ------------------------------------------------------------ */

void *fri_malloc_plain(size_t n)
{
    if (debug_fails()) return NULL;
    return malloc(n);
}

void *fri_malloc_slow(size_t n)
{
    if (!debug_fails()) {
        void *p = base_malloc(n);
        if (p) return p;
    }
    return reserve_alloc(n);
}

void *fri_malloc_failed(size_t n) { return reserve_alloc(n); }

void *fri_calloc_slow(size_t n, size_t size)
{
    if (!debug_fails()) {
        void *p = base_calloc(n, size);
        if (p) return p;
    }
    return fri_calloc_failed(n, size);
}

void *fri_calloc_failed(size_t n, size_t size)
{
    if (size && n > SIZE_MAX / size) return NULL; /* calloc's own refusal, not memory */
    void *p = reserve_alloc(n * size);
    if (p) memset(p, 0, n * size);
    return p;
}

/* p (a block of the C library's, or NULL) could not grow to n bytes: the reserve takes
 * over; outside a guarded call NULL, p untouched. */
void *fri_realloc_failed(void *p, size_t n)
{
#ifndef __GLIBC__
    if (p) return NULL; /* the old block's size is unknown: no copy to vouch for */
#endif
    void *q = reserve_alloc(n);
    if (!q) return NULL;
    if (p) {
        size_t old = hooks && hooks->usable_size ? hooks->usable_size(p) : heap_usable(p);
        memcpy(q, p, old < n ? old : n);
        base_free(p);
    }
    return q;
}

void *fri_realloc_slow(void *p, size_t n)
{
    if (n == 0) n = 1; /* never realloc's free-and-NULL, which reads as a failure */
    fri_reserve *r = NULL;
    size_t old = 0;
    if (p && (fri_alloc_slow_now() & FRI_ALLOC_RESERVE)) {
        pthread_mutex_lock(&areas_lock);
        r = area_of(p);
        if (r) old = ((chunk_head *)p - 1)->size;
        pthread_mutex_unlock(&areas_lock);
    }
    if (r) {
        if (n <= old) return p; /* a block that shrinks stays where it is */
        void *q = fri_malloc(n);
        if (!q) return NULL;
        memcpy(q, p, old);
        fri_free(p);
        return q;
    }
    if (!debug_fails()) {
        void *q = base_realloc(p, n);
        if (q) return q;
    }
    return fri_realloc_failed(p, n);
}

void fri_free_slow(void *p)
{
    if (!p) return;
    if (!(fri_alloc_slow_now() & FRI_ALLOC_RESERVE)) {
        base_free(p);
        return;
    }
    pthread_mutex_lock(&areas_lock);
    fri_reserve *r = area_of(p);
    int destroy = 0;
    if (r && --r->live == 0) {
        area_unlink(r);
        destroy = r->retired;
        if (!destroy) r->used = 0; /* the server's own reserve: whole again */
    }
    pthread_mutex_unlock(&areas_lock);
    if (destroy) area_destroy(r);
    if (!r) base_free(p);
}

int fri_mem_is_reserve(const void *p)
{
    if (!(fri_alloc_slow_now() & FRI_ALLOC_RESERVE)) return 0;
    pthread_mutex_lock(&areas_lock);
    int in = area_of(p) != NULL;
    pthread_mutex_unlock(&areas_lock);
    return in;
}

void fri_mem_unguarded(const char *what)
{
    fprintf(stderr, "fakeredis: out of memory in %s outside a guarded call (a bug of the "
                    "fake: its public function must enter the server's guard); aborting\n",
            what);
    abort();
}

size_t fri_usable_size(void *p)
{
    if (fri_alloc_slow_now() & FRI_ALLOC_RESERVE) {
        pthread_mutex_lock(&areas_lock);
        fri_reserve *r = area_of(p);
        size_t n = r ? ((chunk_head *)p - 1)->size : 0;
        pthread_mutex_unlock(&areas_lock);
        if (r) return n;
    }
    if (hooks && hooks->usable_size) return hooks->usable_size(p);
    return heap_usable(p);
}

char *fri_strdup(const char *s)
{
    size_t n = strlen(s) + 1;
    char *d = fri_malloc(n);
    if (d) memcpy(d, s, n);
    return d;
}

char *fri_strndup(const char *s, size_t max)
{
    size_t n = strnlen(s, max);
    char *d = fri_malloc(n + 1);
    if (!d) return NULL;
    memcpy(d, s, n);
    d[n] = '\0';
    return d;
}
