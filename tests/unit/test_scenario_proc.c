/* test_scenario_proc.c -- the supervisor of consumer processes (scenario/src/proc.c,
 * wsc_proc.h): output into the log, the environment, a clean signal state, a command
 * that cannot start, signals to the whole group, a process that ignores SIGTERM, an
 * escaped grandchild (setsid) ended too, and the watchdog ending what a killed wsim left
 * (this binary re-run as `--orphan-maker`). */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "wsc_proc.h"

static char dir[64];

static void nap(long ms)
{
    struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
    nanosleep(&ts, NULL);
}

/* The whole file at path ("" when it cannot be read; heap). */
static char *slurp(const char *path)
{
    FILE *f = fopen(path, "rb");
    char *buf = calloc(1, 65536);
    if (f) {
        size_t n = fread(buf, 1, 65535, f);
        buf[n] = '\0';
        fclose(f);
    }
    return buf;
}

/* Whether pid is gone (or a zombie, which is reaped here when it is a child of ours). */
static int gone(pid_t pid)
{
    waitpid(pid, NULL, WNOHANG);
    if (kill(pid, 0) != 0) return errno == ESRCH;
    char path[64];
    snprintf(path, sizeof path, "/proc/%ld/stat", (long)pid);
    char *st = slurp(path);
    const char *rp = strrchr(st, ')');
    int zombie = rp && rp[1] == ' ' && rp[2] == 'Z';
    free(st);
    return zombie;
}

/* Waits up to ms for pid to be gone. */
static int gone_within(pid_t pid, long ms)
{
    for (long t = 0; t < ms; t += 5) {
        if (gone(pid)) return 1;
        nap(5);
    }
    return gone(pid);
}

/* Starts sh -c script with the log dir/name; returns the process. */
static wsc_proc *sh(const char *script, const char *const *env, const char *log)
{
    char path[128];
    snprintf(path, sizeof path, "%s/%s", dir, log);
    const char *argv[] = {"sh", "-c", script, NULL};
    wsc_proc_spec spec = {argv, env, path, NULL};
    wsc_proc *p = NULL;
    char why[256];
    if (wsc_proc_start(&spec, &p, why, sizeof why) != 0) fail_msg("start: %s", why);
    return p;
}

/* Waits until p exits (at most 5 s). */
static void wait_exit(wsc_proc *p)
{
    for (int i = 0; i < 1000 && wsc_proc_running(p); i++) nap(5);
    assert_false(wsc_proc_running(p));
}

static void test_output_goes_to_the_log(void **state)
{
    (void)state;
    const char *env[] = {"WSIM_TEST_VAR=forty two", NULL};
    wsc_proc *p = sh("echo out; echo err >&2; echo \"$WSIM_TEST_VAR\"; exit 3", env, "a.log");
    wait_exit(p);
    char text[128];
    wsc_proc_status_text(p, text, sizeof text);
    assert_string_equal(text, "exited with status 3");
    char path[128];
    snprintf(path, sizeof path, "%s/a.log", dir);
    char *log = slurp(path);
    assert_string_equal(log, "out\nerr\nforty two\n");
    free(log);
    struct stat st;
    assert_int_equal(stat(path, &st), 0);
    assert_int_equal(st.st_mode & 0777, 0600);
    wsc_proc_free(p);
}

/* A process that cannot be started says why, naming the program. */
static void test_a_command_that_cannot_start(void **state)
{
    (void)state;
    const char *argv[] = {"wsim-no-such-program", "x", NULL};
    char log[128], why[256];
    snprintf(log, sizeof log, "%s/b.log", dir);
    wsc_proc_spec spec = {argv, NULL, log, NULL};
    wsc_proc *p = (wsc_proc *)1;
    assert_int_equal(wsc_proc_start(&spec, &p, why, sizeof why), -1);
    assert_null(p);
    assert_string_equal(why, "cannot start 'wsim-no-such-program': No such file or directory");
    const char *none[] = {NULL};
    spec.argv = none;
    assert_int_equal(wsc_proc_start(&spec, &p, why, sizeof why), -1);
    assert_string_equal(why, "no command to start");
}

/* The consumer (grep, reading its own status) gets no blocked or ignored signal from wsim
 * (which ignores SIGPIPE). */
static void test_a_clean_signal_state(void **state)
{
    (void)state;
    sigset_t block, old;
    sigemptyset(&block);
    sigaddset(&block, SIGTERM);
    sigprocmask(SIG_BLOCK, &block, &old);
    void (*prev)(int) = signal(SIGPIPE, SIG_IGN);
    char log[128], why[256];
    snprintf(log, sizeof log, "%s/c.log", dir);
    const char *argv[] = {"grep", "-E", "^Sig(Blk|Ign)", "/proc/self/status", NULL};
    wsc_proc_spec spec = {argv, NULL, log, NULL};
    wsc_proc *p = NULL;
    if (wsc_proc_start(&spec, &p, why, sizeof why) != 0) fail_msg("start: %s", why);
    sigprocmask(SIG_SETMASK, &old, NULL);
    signal(SIGPIPE, prev);
    wait_exit(p);
    char *text = slurp(log);
    assert_string_equal(text, "SigBlk:\t0000000000000000\nSigIgn:\t0000000000000000\n");
    free(text);
    wsc_proc_free(p);
}

/* Signals reach the whole group: the shell and both of its children. */
static void test_signals_reach_the_group(void **state)
{
    (void)state;
    char pids[128];
    snprintf(pids, sizeof pids, "%s/pids", dir);
    char script[512];
    snprintf(script, sizeof script, "sleep 100 & echo $! > %s.1; sleep 100 & echo $! > %s.2; "
             "wait", pids, pids);
    wsc_proc *p = sh(script, NULL, "d.log");
    pid_t kids[2] = {0, 0};
    for (int k = 0; k < 2; k++) {
        char f[160];
        snprintf(f, sizeof f, "%s.%d", pids, k + 1);
        for (int i = 0; i < 1000 && !kids[k]; i++) {
            char *t = slurp(f);
            kids[k] = (pid_t)atol(t);
            free(t);
            if (!kids[k]) nap(5);
        }
        assert_true(kids[k] > 0);
        assert_int_equal(getpgid(kids[k]), wsc_proc_pid(p));
    }
    assert_int_equal(wsc_proc_signal(p, SIGTERM), 0);
    wait_exit(p);
    assert_true(gone_within(kids[0], 2000));
    assert_true(gone_within(kids[1], 2000));
    char text[128];
    wsc_proc_status_text(p, text, sizeof text);
    assert_string_equal(text, "was killed by signal 15 (Terminated)");
    wsc_proc_free(p);
}

/* A process that ignores SIGTERM runs on; wsc_proc_end ends it. */
static void test_sigterm_ignored_then_ended(void **state)
{
    (void)state;
    wsc_proc *p = sh("trap '' TERM; while :; do sleep 0.02; done", NULL, "e.log");
    nap(50);
    assert_int_equal(wsc_proc_signal(p, SIGTERM), 0);
    nap(200);
    assert_true(wsc_proc_running(p));
    wsc_proc_end(p);
    assert_false(wsc_proc_running(p));
    char text[128];
    wsc_proc_status_text(p, text, sizeof text);
    assert_string_equal(text, "was killed by signal 9 (Killed)");
    assert_int_equal(wsc_proc_signal(p, SIGTERM), -1);
    wsc_proc_free(p);
}

/* A grandchild that left the group (setsid) and was orphaned is ended too. */
static void test_an_escaped_grandchild_is_ended(void **state)
{
    (void)state;
    char pidfile[128];
    snprintf(pidfile, sizeof pidfile, "%s/escaped", dir);
    char script[512];
    snprintf(script, sizeof script,
             "(setsid sh -c 'echo $$ > %s; exec sleep 100' &); sleep 100", pidfile);
    wsc_proc *p = sh(script, NULL, "f.log");
    pid_t esc = 0;
    for (int i = 0; i < 1000 && !esc; i++) {
        char *t = slurp(pidfile);
        esc = (pid_t)atol(t);
        free(t);
        if (!esc) nap(5);
    }
    assert_true(esc > 0);
    assert_int_not_equal(getpgid(esc), wsc_proc_pid(p));
    nap(20); /* its parent, the subshell, is gone by now: it is an orphan of ours */
    wsc_proc_free(p);
    assert_true(gone_within(esc, 2000));
}

/* wsim killed without ending its consumers: the watchdog ends them and removes the
 * directories registered with it.  The killed "wsim" is this binary, re-run. */
static void test_the_watchdog_ends_what_a_killed_wsim_left(void **state)
{
    (void)state;
    char sub[128];
    snprintf(sub, sizeof sub, "%s/left-behind", dir);
    int fds[2];
    assert_int_equal(pipe(fds), 0);
    pid_t child = fork();
    assert_true(child >= 0);
    if (child == 0) {
        dup2(fds[1], 1);
        execl("/proc/self/exe", "test_scenario_proc", "--orphan-maker", dir, sub, (char *)NULL);
        _exit(127);
    }
    close(fds[1]);
    char buf[64] = "";
    ssize_t n = 0, r;
    while ((r = read(fds[0], buf + n, sizeof buf - 1 - (size_t)n)) > 0) n += r;
    close(fds[0]);
    buf[n > 0 ? n : 0] = '\0';
    int st;
    waitpid(child, &st, 0);
    assert_true(WIFSIGNALED(st) && WTERMSIG(st) == SIGKILL);
    pid_t left = (pid_t)atol(buf);
    assert_true(left > 0);
    assert_true(gone_within(left, 3000));
    struct stat sb;
    for (int i = 0; i < 600 && stat(sub, &sb) == 0; i++) nap(5);
    assert_int_not_equal(stat(sub, &sb), 0);
}

/* --orphan-maker DIR SUB: starts `sleep 100` (printing its pid), registers SUB (made
 * here, with a file in it) and dies by SIGKILL, ending nothing. */
static int orphan_maker(const char *d, const char *sub)
{
    mkdir(sub, 0700);
    char f[160];
    snprintf(f, sizeof f, "%s/file", sub);
    FILE *fp = fopen(f, "w");
    if (fp) fclose(fp);
    wsc_proc_watch_dir(sub, 0); /* (no watchdog yet: ignored) */
    char log[160];
    snprintf(log, sizeof log, "%s/orphan.log", d);
    const char *argv[] = {"sleep", "100", NULL};
    wsc_proc_spec spec = {argv, NULL, log, NULL};
    wsc_proc *p;
    char why[256];
    if (wsc_proc_start(&spec, &p, why, sizeof why)) return 1;
    wsc_proc_watch_dir(sub, 0);
    printf("%ld\n", (long)wsc_proc_pid(p));
    fflush(stdout);
    raise(SIGKILL);
    return 1;
}

int main(int argc, char **argv)
{
    if (argc == 4 && strcmp(argv[1], "--orphan-maker") == 0) return orphan_maker(argv[2], argv[3]);
    snprintf(dir, sizeof dir, "/tmp/wsim-proc-test.XXXXXX");
    if (!mkdtemp(dir)) return 1;
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_output_goes_to_the_log),
        cmocka_unit_test(test_a_command_that_cannot_start),
        cmocka_unit_test(test_a_clean_signal_state),
        cmocka_unit_test(test_signals_reach_the_group),
        cmocka_unit_test(test_sigterm_ignored_then_ended),
        cmocka_unit_test(test_an_escaped_grandchild_is_ended),
        cmocka_unit_test(test_the_watchdog_ends_what_a_killed_wsim_left),
    };
    int rc = cmocka_run_group_tests_name("supervisor", tests, NULL, NULL);
    wsc_proc_remove_tree(dir);
    return rc;
}
