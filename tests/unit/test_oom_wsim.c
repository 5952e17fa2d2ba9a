/* test_oom_wsim.c -- wsim's libraries running out of memory, the SQLite way
 * (docs/architecture.md, "Running out of memory", "wsim's libraries"; the fake's own
 * test is test_oom.c).
 *
 * SQLite's fault loops fail the n-th allocation for n = 1, 2, ... until a run completes
 * without reaching it (STYLE.md, "Determinism and tests").  Here the run is a small
 * scenario, tests/unit/oom.wsim -- two subscriptions, a window flush, a crash of the
 * consumer and a recovery through the reclaim subscription -- read and parsed
 * (wsc_parse_file) and run (wsc_run) on the in-process fake, and the allocation failed is the n-th of common/'s family
 * (wsi_alloc_fail_at), once or from then on.  Each n runs in a forked child, so that an
 * abort the rules allow can be watched from outside.  The promise checked for every n:
 *
 *   - the scenario library answers with the error wsc.h promises: wsc_parse_file returns
 *     NULL and "<path>:0:0: error: out of memory" (or no text, when every allocation fails
 *     from then on and even that one cannot be had); wsc_run returns WS_ENOMEM; or
 *   - the engine aborts (SIGABRT) having written exactly one line on stderr,
 *     "wsim: out of memory in libwsim" (ws_sim.h, ws_conn.h);
 *   - never anything else: no other signal, no other exit, no other text on stderr, no
 *     leak (the sanitize build: LeakSanitizer checks the child at its exit), and no
 *     verdict -- a run that returned 0 although an allocation failed would have
 *     swallowed it, which is the wrong-verdict bug this hunts.
 *
 * The loop ends at the first n the run completes without reaching (it then passes, as
 * it does without the hook).  libfakeredis allocates through its own fri_ family, which
 * this hook does not reach: its rule is the fake's own (docs/architecture.md). */
#include <errno.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "wsc.h"
#include "wsi_alloc.h"

/* The scenario (tests/unit/oom.wsim: two subscriptions in window mode, a flush, a crash
 * before o3's flush, the reclaim subscription's recovery), by its path. */
#define NAME WSIM_OOM_SCENARIO

/* What the child says through its exit status. */
enum {
    OUT_PARSE_OOM = 10, /* wsc_parse answered out of memory, as wsc.h says */
    OUT_RUN_OOM,        /* wsc_run answered WS_ENOMEM */
    OUT_DONE,           /* the run completed without reaching the failing allocation */
    OUT_WRONG,          /* anything else: the child wrote why on stderr */
};

/* The run without the hook: what every completed run must give again. */
static wsc_result baseline;

/* In the child: parses and runs the scenario with allocation n failing (once or from then
 * on), and exits with one of OUT_*; it does not return. */
static void child(unsigned long n, int once)
{
    wsi_alloc_fail_at(n, once);
    char *err = NULL;
    wsc_scenario *sc = wsc_parse_file(NAME, &err);
    if (!sc) {
        /* (from then on, even the message cannot be had: wsc.h says *error is NULL then) */
        int ok = wsi_alloc_failed() > 0 &&
                 (err ? strcmp(err, NAME ":0:0: error: out of memory") == 0 : !once);
        if (!ok) fprintf(stderr, "wsc_parse_file failed otherwise: %s\n", err ? err : "(no text)");
        free(err);
        exit(ok ? OUT_PARSE_OOM : OUT_WRONG);
    }
    wsc_result res;
    int rc = wsc_run(sc, NULL, &res);
    unsigned long failed = wsi_alloc_failed();
    wsi_alloc_fail_at(0, 0); /* what follows (checks, messages) allocates freely */
    wsc_free(sc);
    if (rc == WS_ENOMEM && failed > 0) exit(OUT_RUN_OOM);
    if (rc != 0) {
        fprintf(stderr, "wsc_run returned %d (%s) with %lu allocations failed\n", rc,
                ws_err_name(rc), failed);
        exit(OUT_WRONG);
    }
    int same = res.status == baseline.status && res.checks == baseline.checks &&
               res.trace_hash == baseline.trace_hash && res.state && baseline.state &&
               strcmp(res.state, baseline.state) == 0;
    if (failed > 0 || !same) {
        fprintf(stderr, "a run that %s gave status %d, %zu checks%s%s\n",
                failed ? "hit the failing allocation" : "completed", (int)res.status,
                res.checks, res.report ? ":\n" : "", res.report ? res.report : "");
        wsc_result_free(&res);
        exit(OUT_WRONG);
    }
    wsc_result_free(&res);
    exit(OUT_DONE);
}

/* Everything fd gives until its end, NUL-terminated (at most size - 1 bytes kept). */
static void read_all(int fd, char *buf, size_t size)
{
    size_t len = 0;
    for (;;) {
        char chunk[512];
        ssize_t got = read(fd, chunk, sizeof chunk);
        if (got < 0 && errno == EINTR) continue;
        if (got <= 0) break;
        size_t keep = (size_t)got < size - 1 - len ? (size_t)got : size - 1 - len;
        memcpy(buf + len, chunk, keep);
        len += keep;
    }
    buf[len] = '\0';
}

/* Counts per outcome over one loop. */
typedef struct tally {
    unsigned long parse_oom, run_oom, engine_abort, last_n;
} tally;

/* Runs n in a child and checks its outcome; returns 1 when the run completed without
 * reaching allocation n (the loop's end). */
static int one(unsigned long n, int once, tally *t)
{
    int err[2];
    assert_int_equal(pipe(err), 0);
    fflush(NULL);
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        close(err[0]);
        dup2(err[1], 2);
        close(err[1]);
        child(n, once);
    }
    close(err[1]);
    char text[8192];
    read_all(err[0], text, sizeof text);
    close(err[0]);
    int status;
    while (waitpid(pid, &status, 0) < 0) assert_int_equal(errno, EINTR);
    if (WIFSIGNALED(status) && WTERMSIG(status) == SIGABRT &&
        strcmp(text, "wsim: out of memory in libwsim\n") == 0) {
        t->engine_abort++;
        return 0;
    }
    if (WIFEXITED(status) && WEXITSTATUS(status) == OUT_PARSE_OOM && !text[0]) {
        t->parse_oom++;
        return 0;
    }
    if (WIFEXITED(status) && WEXITSTATUS(status) == OUT_RUN_OOM && !text[0]) {
        t->run_oom++;
        return 0;
    }
    if (WIFEXITED(status) && WEXITSTATUS(status) == OUT_DONE && !text[0]) return 1;
    fail_msg("allocation %lu failing %s: %s %d; stderr:\n%s", n, once ? "once" : "from then on",
             WIFSIGNALED(status) ? "signal" : "exit status",
             WIFSIGNALED(status) ? WTERMSIG(status) : WEXITSTATUS(status), text);
    return 1;
}

static void loop(int once)
{
    tally t = {0};
    unsigned long n = 1;
    while (!one(n, once, &t)) {
        n++;
        assert_true(n < 1000000); /* a run makes a few thousand allocations */
    }
    /* every n before the last hit an allocation, and each outcome was one of the rules' */
    assert_int_equal(t.parse_oom + t.run_oom + t.engine_abort, n - 1);
    assert_true(t.parse_oom > 0); /* the parse allocates first */
    assert_true(t.run_oom > 0);   /* the runner's own allocations come between the engine's */
    printf("failing allocation n once=%d: n = 1..%lu: parse out of memory %lu, run "
           "WS_ENOMEM %lu, engine abort %lu; n = %lu completes\n",
           once, n - 1, t.parse_oom, t.run_oom, t.engine_abort, n);
}

/* From then on: every allocation after the n-th fails too (the error paths themselves
 * must not need memory). */
static void test_fail_from_then_on(void **state)
{
    (void)state;
    loop(0);
}

/* Once: only the n-th fails, and everything after it succeeds (no out of memory may be
 * swallowed by a later success). */
static void test_fail_once(void **state)
{
    (void)state;
    loop(1);
}

/* The baseline: the scenario passes without the hook, and the hook counts nothing. */
static int setup(void **state)
{
    (void)state;
    char *err = NULL;
    wsc_scenario *sc = wsc_parse_file(NAME, &err);
    if (!sc) {
        fprintf(stderr, "%s\n", err);
        free(err);
        return -1;
    }
    int rc = wsc_run(sc, NULL, &baseline);
    wsc_free(sc);
    if (rc || baseline.status != WSC_PASS || wsi_alloc_failed()) {
        fprintf(stderr, "the baseline run: rc %d, status %d\n%s\n", rc, (int)baseline.status,
                baseline.report ? baseline.report : "");
        return -1;
    }
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    wsc_result_free(&baseline);
    return 0;
}

/* The hook itself: the n-th allocation fails, once or from then on, and 0 turns it off. */
static void test_hook(void **state)
{
    (void)state;
    wsi_alloc_fail_at(3, 1);
    void *a = wsi_malloc(8), *b = wsi_calloc(2, 4), *c = wsi_strdup("x"), *d = wsi_malloc(1);
    assert_non_null(a);
    assert_non_null(b);
    assert_null(c);
    assert_non_null(d);
    assert_int_equal(wsi_alloc_failed(), 1);
    free(a);
    free(b);
    free(d);
    wsi_alloc_fail_at(2, 0);
    a = wsi_malloc(8);
    assert_non_null(a);
    void *e = wsi_realloc(a, 64);
    assert_null(e); /* a is untouched */
    assert_null(wsi_memdup("abc", 3));
    assert_int_equal(wsi_alloc_failed(), 2);
    wsi_alloc_fail_at(0, 0);
    e = wsi_realloc(a, 64);
    assert_non_null(e);
    free(e);
    assert_int_equal(wsi_alloc_failed(), 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_hook),
        cmocka_unit_test(test_fail_from_then_on),
        cmocka_unit_test(test_fail_once),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
