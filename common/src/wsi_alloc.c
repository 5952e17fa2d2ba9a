/* wsi_alloc.c -- the allocation family of wsi_alloc.h and its test hook. */
#include "wsi_alloc.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The test hook's state (wsi_alloc_fail_at). */
static unsigned long fail_in;  /* allocations until the one that fails; 0: the hook is off */
static int fail_once;          /* only that one fails */
static int failing;            /* every allocation fails (the n-th came, without once) */
static unsigned long failed;   /* allocations failed since wsi_alloc_fail_at */
static unsigned long reallocs; /* wsi_realloc calls (wsi_alloc_reallocs) */

void wsi_alloc_fail_at(unsigned long n, int once)
{
    fail_in = n;
    fail_once = once;
    failing = 0;
    failed = 0;
}

unsigned long wsi_alloc_failed(void) { return failed; }

unsigned long wsi_alloc_reallocs(void) { return reallocs; }

/* Whether the hook fails this allocation: one test and a branch while it is off. */
static int hook_fails(void)
{
    if (!fail_in && !failing) return 0;
    if (failing || --fail_in == 0) {
        if (!fail_once) failing = 1;
        failed++;
        return 1;
    }
    return 0;
}

const wsi_allocator *wsi_alloc_hooks;

void wsi_alloc_use(const wsi_allocator *a) { wsi_alloc_hooks = a; }

void *wsi_malloc(size_t n)
{
    if (hook_fails()) return NULL;
    return wsi_alloc_hooks ? wsi_alloc_hooks->malloc(n ? n : 1) : malloc(n ? n : 1);
}

void *wsi_calloc(size_t n, size_t size)
{
    if (size && n > SIZE_MAX / size) return NULL;
    if (hook_fails()) return NULL;
    n = n ? n : 1;
    size = size ? size : 1;
    return wsi_alloc_hooks ? wsi_alloc_hooks->calloc(n, size) : calloc(n, size);
}

void *wsi_realloc(void *p, size_t n)
{
    reallocs++;
    if (hook_fails()) return NULL;
    return wsi_alloc_hooks ? wsi_alloc_hooks->realloc(p, n ? n : 1) : realloc(p, n ? n : 1);
}

char *wsi_memdup(const void *p, size_t len)
{
    char *s = wsi_malloc(len + 1);
    if (!s) return NULL;
    if (len) memcpy(s, p, len);
    s[len] = '\0';
    return s;
}

char *wsi_strdup(const char *s) { return s ? wsi_memdup(s, strlen(s)) : NULL; }

_Noreturn void wsi_oom(const char *module)
{
    /* one write, so that the line is whole even when the process shares stderr */
    char line[128];
    int n = snprintf(line, sizeof line, "wsim: out of memory in %s\n", module);
    if (n > 0) fwrite(line, 1, (size_t)n < sizeof line ? (size_t)n : sizeof line - 1, stderr);
    fflush(stderr);
    abort();
}
