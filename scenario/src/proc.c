/* proc.c -- the supervisor of consumer processes (wsc_proc.h): process groups, logs, the
 * signals a scenario sends, and the guarantee that nothing is left behind. */
#define _GNU_SOURCE /* execvpe, close_range, pipe2, nftw */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "wsc_proc.h"
#include "wsi_alloc.h"

extern char **environ;

struct wsc_proc {
    pid_t pid;      /* the leader, and the group's id */
    int status;     /* waitpid's status once reaped, else -1 */
    int reaped;     /* the leader was reaped */
    int ended;      /* wsc_proc_end ran: the group was killed */
};

/* The leaders that run now (children of this process that are not escaped orphans). */
static pid_t *live;
static size_t nlive, caplive;

/* The watchdog: its pid and the write end of its pipe (-1: none). */
static pid_t watchdog_pid = -1;
static int watchdog_fd = -1;
static pid_t watchdog_owner = -1; /* the process that made it (a fork of it shares it) */

/* 0, or -1 when out of memory. */
static int live_add(pid_t pid)
{
    if (nlive == caplive) {
        size_t cap = caplive ? caplive * 2 : 16;
        pid_t *v = wsi_realloc(live, cap * sizeof *v);
        if (!v) return -1;
        live = v;
        caplive = cap;
    }
    live[nlive++] = pid;
    return 0;
}

static void live_del(pid_t pid)
{
    for (size_t i = 0; i < nlive; i++)
        if (live[i] == pid) {
            live[i] = live[--nlive];
            return;
        }
}

/* One line to the watchdog (a write of less than PIPE_BUF bytes is atomic, so workers that
 * share the pipe never interleave their lines). */
static void tell_watchdog(char op, const char *what)
{
    if (watchdog_fd < 0) return;
    char line[4200];
    int n = snprintf(line, sizeof line, "%c%s\n", op, what);
    if (n <= 0 || (size_t)n >= sizeof line) return;
    ssize_t w;
    do w = write(watchdog_fd, line, (size_t)n);
    while (w < 0 && errno == EINTR);
}

static void tell_group(char op, pid_t pgid)
{
    char num[32];
    snprintf(num, sizeof num, "%ld", (long)pgid);
    tell_watchdog(op, num);
}

/* ----- Removing a directory ------------------------------------------------------------ */

static int remove_one(const char *path, const struct stat *st, int type, struct FTW *ftw)
{
    (void)st;
    (void)ftw;
    return (type == FTW_DP ? rmdir(path) : unlink(path)) == 0 || errno == ENOENT ? 0 : -1;
}

int wsc_proc_remove_tree(const char *path)
{
    /* FTW_PHYS: a symbolic link is removed, never followed */
    return nftw(path, remove_one, 16, FTW_DEPTH | FTW_PHYS) == 0 ? 0 : -1;
}

/* ----- The watchdog ---------------------------------------------------------------------- */

/* The watchdog's life: read lines until the pipe closes, then end what is left. */
static _Noreturn void watchdog_main(int rfd)
{
    pid_t *groups = NULL;
    char **dirs = NULL;
    size_t ng = 0, nd = 0;
    char buf[8192];
    size_t have = 0;
    for (;;) {
        ssize_t r = read(rfd, buf + have, sizeof buf - have);
        if (r < 0 && errno == EINTR) continue;
        if (r <= 0) break;
        have += (size_t)r;
        char *start = buf, *nl;
        while ((nl = memchr(start, '\n', have - (size_t)(start - buf)))) {
            *nl = '\0';
            char op = start[0];
            const char *arg = start + 1;
            if (op == '+' || op == '-') {
                pid_t g = (pid_t)strtol(arg, NULL, 10);
                size_t i = 0;
                while (i < ng && groups[i] != g) i++;
                if (op == '+' && i == ng) {
                    pid_t *v = realloc(groups, (ng + 1) * sizeof *v);
                    if (v) {
                        groups = v;
                        groups[ng++] = g;
                    }
                } else if (op == '-' && i < ng) {
                    groups[i] = groups[--ng];
                }
            } else if (op == 'D' || op == 'd') {
                size_t i = 0;
                while (i < nd && strcmp(dirs[i], arg) != 0) i++;
                if (op == 'D' && i == nd) {
                    char **v = realloc(dirs, (nd + 1) * sizeof *v);
                    char *d = strdup(arg);
                    if (v) dirs = v;
                    if (v && d) dirs[nd++] = d;
                    else wsi_free(d);
                } else if (op == 'd' && i < nd) {
                    wsi_free(dirs[i]);
                    dirs[i] = dirs[--nd];
                }
            }
            start = nl + 1;
        }
        have -= (size_t)(start - buf);
        memmove(buf, start, have);
        if (have == sizeof buf) have = 0; /* a line longer than any we write: drop it */
    }
    /* wsim went away without ending these: end them now */
    for (size_t i = 0; i < ng; i++) kill(-groups[i], SIGKILL);
    for (size_t i = 0; i < nd; i++) wsc_proc_remove_tree(dirs[i]);
    _exit(0);
}

int wsc_proc_watchdog(void)
{
    if (watchdog_fd >= 0) return 0;
    int fds[2];
    if (pipe2(fds, O_CLOEXEC) != 0) return -1;
    fflush(NULL); /* nothing buffered is written twice */
    pid_t pid = fork();
    if (pid < 0) {
        close(fds[0]);
        close(fds[1]);
        return -1;
    }
    if (pid == 0) {
        /* a group of its own (a kill of wsim's group spares it), no signal of a terminal
         * ends it, and it holds nothing of wsim's but the pipe's read end */
        setpgid(0, 0);
        signal(SIGINT, SIG_IGN);
        signal(SIGTERM, SIG_IGN);
        signal(SIGHUP, SIG_IGN);
        signal(SIGQUIT, SIG_IGN);
        int rfd = fds[0] == 3 ? 3 : dup2(fds[0], 3);
        if (rfd < 0) _exit(1);
        int devnull = open("/dev/null", O_RDWR);
        if (devnull >= 0) {
            dup2(devnull, 0);
            dup2(devnull, 1);
            dup2(devnull, 2);
        }
        close_range(4, ~0U, 0); /* fds[1] included */
        fcntl(3, F_SETFD, 0);
        watchdog_main(3);
    }
    close(fds[0]);
    watchdog_pid = pid;
    watchdog_fd = fds[1];
    watchdog_owner = getpid();
    return 0;
}

void wsc_proc_watch_dir(const char *path, int removed)
{
    tell_watchdog(removed ? 'd' : 'D', path);
}

/* ----- Starting ------------------------------------------------------------------------- */

/* Whether env entry e sets the variable named by the NAME= prefix of o. */
static int same_name(const char *e, const char *o)
{
    const char *eq = strchr(o, '=');
    size_t n = eq ? (size_t)(eq - o) : strlen(o);
    return strncmp(e, o, n) == 0 && e[n] == '=';
}

/* environ with the spec's entries added or replacing: a NULL-terminated array of
 * pointers (the strings are environ's and the spec's; free only the array); NULL when
 * out of memory. */
static char **make_env(const char *const *extra)
{
    size_t n = 0, k = 0;
    while (environ && environ[n]) n++;
    while (extra && extra[k]) k++;
    char **env = wsi_calloc(n + k + 1, sizeof *env);
    if (!env) return NULL;
    size_t m = 0;
    for (size_t i = 0; i < n; i++) {
        int replaced = 0;
        for (size_t j = 0; j < k && !replaced; j++) replaced = same_name(environ[i], extra[j]);
        if (!replaced) env[m++] = environ[i];
    }
    for (size_t j = 0; j < k; j++) env[m++] = (char *)extra[j];
    env[m] = NULL;
    return env;
}

int wsc_proc_start(const wsc_proc_spec *spec, wsc_proc **out, char *why, size_t cap)
{
    *out = NULL;
    if (!spec->argv || !spec->argv[0] || !spec->argv[0][0]) {
        snprintf(why, cap, "no command to start");
        return -1;
    }
    /* orphans of the consumers become this process's children, so that they can be
     * ended (wsc_proc_end_escaped) */
    prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0);
    if (watchdog_fd < 0 || watchdog_owner < 0) wsc_proc_watchdog();
    wsc_proc *p = wsi_calloc(1, sizeof *p);
    char **env = make_env(spec->env);
    if (!p || !env || live_add(0) != 0) {
        wsi_free(p);
        wsi_free(env);
        snprintf(why, cap, "out of memory");
        return -1;
    }
    nlive--; /* (the room is made: adding the pid below cannot fail) */
    int logfd = open(spec->log_path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0600);
    if (logfd < 0) {
        wsi_free(p);
        wsi_free(env);
        snprintf(why, cap, "cannot open the log %s: %s", spec->log_path, strerror(errno));
        return -1;
    }
    /* fork and exec rather than posix_spawn: glibc's posix_spawn leaves its two internal
     * signals (32 and 33) ignored in the child, and an ignored signal stays ignored
     * across exec -- a consumer must get every signal at its default action.  The child
     * runs async-signal-safe calls only, and tells an exec failure through a pipe that
     * the exec closes. */
    int errp[2];
    if (pipe2(errp, O_CLOEXEC) != 0) {
        snprintf(why, cap, "cannot start '%s': %s", spec->argv[0], strerror(errno));
        close(logfd);
        wsi_free(p);
        wsi_free(env);
        return -1;
    }
    fflush(NULL);
    pid_t pid = fork();
    if (pid == 0) {
        int e = 0;
        setpgid(0, 0); /* its own group, which it leads */
        struct sigaction dfl;
        memset(&dfl, 0, sizeof dfl);
        dfl.sa_handler = SIG_DFL;
        for (int sig = 1; sig < 32; sig++)
            if (sig != SIGKILL && sig != SIGSTOP) sigaction(sig, &dfl, NULL);
        for (int sig = SIGRTMIN; sig <= SIGRTMAX; sig++) sigaction(sig, &dfl, NULL);
        sigset_t none;
        sigemptyset(&none);
        sigprocmask(SIG_SETMASK, &none, NULL);
        int in = open("/dev/null", O_RDONLY);
        if (in < 0 || dup2(in, 0) < 0 || dup2(logfd, 1) < 0 || dup2(logfd, 2) < 0) e = errno;
        /* nothing of wsim's: every descriptor above 2 but the error pipe closes */
        int keep = errp[1] > 2 ? errp[1] : 3;
        if (keep > 3) close_range(3, (unsigned)keep - 1, 0);
        close_range((unsigned)keep + 1, ~0U, 0);
        if (!e && spec->dir && chdir(spec->dir) != 0) e = errno;
        if (!e) {
            execvpe(spec->argv[0], (char *const *)spec->argv, env);
            e = errno;
        }
        ssize_t w = write(errp[1], &e, sizeof e);
        (void)w;
        _exit(127);
    }
    int fork_errno = errno;
    close(errp[1]);
    close(logfd);
    wsi_free(env);
    if (pid < 0) {
        close(errp[0]);
        wsi_free(p);
        snprintf(why, cap, "cannot start '%s': %s", spec->argv[0], strerror(fork_errno));
        return -1;
    }
    setpgid(pid, pid); /* (also here: no window where a signal to the group misses it) */
    int child_errno = 0;
    ssize_t r;
    do r = read(errp[0], &child_errno, sizeof child_errno);
    while (r < 0 && errno == EINTR);
    close(errp[0]);
    if (r == (ssize_t)sizeof child_errno) {
        waitpid(pid, NULL, 0);
        wsi_free(p);
        snprintf(why, cap, "cannot start '%s'%s%s: %s", spec->argv[0],
                 spec->dir ? " in " : "", spec->dir ? spec->dir : "", strerror(child_errno));
        return -1;
    }
    p->pid = pid;
    p->status = -1;
    live_add(pid);
    tell_group('+', pid);
    *out = p;
    return 0;
}

pid_t wsc_proc_pid(const wsc_proc *p) { return p->pid; }

/* Reaps the leader if it exited (hang: wait for it).  1 when reaped. */
static int reap(wsc_proc *p, int hang)
{
    if (p->reaped) return 1;
    int st;
    pid_t r;
    do r = waitpid(p->pid, &st, hang ? 0 : WNOHANG);
    while (r < 0 && errno == EINTR);
    if (r == p->pid || (r < 0 && errno == ECHILD)) {
        p->reaped = 1;
        p->status = r == p->pid ? st : -1;
        live_del(p->pid);
        return 1;
    }
    return 0;
}

int wsc_proc_running(wsc_proc *p) { return !reap(p, 0); }

int wsc_proc_status(const wsc_proc *p) { return p->reaped ? p->status : -1; }

void wsc_proc_status_text(const wsc_proc *p, char *buf, size_t cap)
{
    if (!p->reaped) snprintf(buf, cap, "is running");
    else if (p->status < 0) snprintf(buf, cap, "is gone (its status is unknown)");
    else if (WIFEXITED(p->status)) snprintf(buf, cap, "exited with status %d", WEXITSTATUS(p->status));
    else if (WIFSIGNALED(p->status))
        snprintf(buf, cap, "was killed by signal %d (%s)", WTERMSIG(p->status),
                 strsignal(WTERMSIG(p->status)));
    else snprintf(buf, cap, "ended (status 0x%x)", (unsigned)p->status);
}

int wsc_proc_signal(wsc_proc *p, int sig)
{
    if (p->ended) return -1;
    return kill(-p->pid, sig) == 0 ? 0 : -1;
}

long long wsc_mono_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

void wsc_nap_ms(long ms)
{
    struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
    while (nanosleep(&ts, &ts) != 0 && errno == EINTR) {
    }
}

static int stat_at(const char *path, char *state, long *ppid, long *pgrp);

/* Calls fn(pid, state, ppid, pgrp, arg) for every process in /proc, until fn returns
 * non-zero (which is returned). */
static int each_process(int (*fn)(pid_t, char, long, long, void *), void *arg)
{
    DIR *d = opendir("/proc");
    if (!d) return 0;
    struct dirent *e;
    int rc = 0;
    while (!rc && (e = readdir(d))) {
        if (e->d_name[0] < '1' || e->d_name[0] > '9') continue;
        char path[300], state;
        long ppid, pgrp;
        snprintf(path, sizeof path, "/proc/%s/stat", e->d_name);
        if (stat_at(path, &state, &ppid, &pgrp) != 0) continue;
        rc = fn((pid_t)strtol(e->d_name, NULL, 10), state, ppid, pgrp, arg);
    }
    closedir(d);
    return rc;
}

/* The state, parent and group of process (or thread) path's stat ("/proc/P/stat",
 * "/proc/P/task/T/stat"); 0, or -1 when it is gone. */
static int stat_at(const char *path, char *state, long *ppid, long *pgrp)
{
    char stat[512];
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) return -1;
    ssize_t n = read(fd, stat, sizeof stat - 1);
    close(fd);
    if (n <= 0) return -1;
    stat[n] = '\0';
    const char *rp = strrchr(stat, ')'); /* comm may hold anything: parse after it */
    return rp && sscanf(rp + 1, " %c %ld %ld", state, ppid, pgrp) == 3 ? 0 : -1;
}

/* The children of process pid, every thread's (/proc/P/task/T/children), into v[0..cap);
 * how many, or -1 when the kernel does not list children. */
static long children_of(pid_t pid, pid_t *v, size_t cap)
{
    char path[128];
    snprintf(path, sizeof path, "/proc/%ld/task", (long)pid);
    DIR *d = opendir(path);
    if (!d) return -1;
    long n = 0, listed = 0;
    struct dirent *e;
    while ((e = readdir(d))) {
        if (e->d_name[0] < '1' || e->d_name[0] > '9') continue;
        char cp[300], buf[4096];
        snprintf(cp, sizeof cp, "/proc/%ld/task/%s/children", (long)pid, e->d_name);
        int fd = open(cp, O_RDONLY | O_CLOEXEC);
        if (fd < 0) continue;
        listed = 1;
        ssize_t r = read(fd, buf, sizeof buf - 1);
        close(fd);
        if (r <= 0) continue;
        buf[r] = '\0';
        for (char *q = buf; *q && (size_t)n < cap;) {
            char *end;
            long c = strtol(q, &end, 10);
            if (end == q) break;
            v[n++] = (pid_t)c;
            q = end;
        }
    }
    closedir(d);
    return listed ? n : -1;
}

/* Whether a thread of process pid is running or in an uninterruptible wait. */
static int threads_busy(pid_t pid)
{
    char path[128];
    snprintf(path, sizeof path, "/proc/%ld/task", (long)pid);
    DIR *d = opendir(path);
    if (!d) return 0;
    struct dirent *e;
    int busy = 0;
    while (!busy && (e = readdir(d))) {
        if (e->d_name[0] < '1' || e->d_name[0] > '9') continue;
        char sp[300], state;
        long ppid, pgrp;
        snprintf(sp, sizeof sp, "/proc/%ld/task/%s/stat", (long)pid, e->d_name);
        busy = stat_at(sp, &state, &ppid, &pgrp) == 0 && (state == 'R' || state == 'D');
    }
    closedir(d);
    return busy;
}

static int busy_one(pid_t pid, char state, long ppid, long pgrp, void *arg)
{
    (void)ppid;
    return pgrp == *(const pid_t *)arg && (state == 'R' || state == 'D' || threads_busy(pid));
}

int wsc_proc_busy(const wsc_proc *p)
{
    if (p->ended) return 0;
    /* the group's processes are the leader and its descendants (one that left the group
     * is not this consumer's any more): walk them, every thread's state; without the
     * kernel's children lists, every process of the system is looked at */
    pid_t todo[256];
    size_t n = 0;
    todo[n++] = p->pid;
    while (n) {
        pid_t pid = todo[--n];
        char sp[64], state;
        long ppid, pgrp;
        snprintf(sp, sizeof sp, "/proc/%ld/stat", (long)pid);
        if (stat_at(sp, &state, &ppid, &pgrp) != 0 || pgrp != p->pid) continue;
        if (state == 'R' || state == 'D' || threads_busy(pid)) return 1;
        long k = children_of(pid, todo + n, sizeof todo / sizeof *todo - n);
        if (k < 0) {
            pid_t g = p->pid;
            return each_process(busy_one, &g);
        }
        n += (size_t)k;
    }
    return 0;
}

static int end_one(pid_t pid, char state, long ppid, long pgrp, void *arg)
{
    (void)state;
    size_t *ended = arg;
    if (ppid != getpid() || pgrp == getpgrp() || pid == watchdog_pid) return 0;
    for (size_t i = 0; i < nlive; i++)
        if (live[i] == pid) return 0;
    kill(pid, SIGKILL);
    waitpid(pid, NULL, 0);
    (*ended)++;
    return 0;
}

size_t wsc_proc_end_escaped(void)
{
    size_t ended = 0;
    /* this process's children (the kernel lists them): the consumers, the watchdog, the
     * workers, and the orphans it became the subreaper of; without the list, every
     * process of the system is looked at */
    pid_t kids[1024];
    long n = children_of(getpid(), kids, sizeof kids / sizeof *kids);
    if (n < 0) {
        each_process(end_one, &ended);
        return ended;
    }
    for (long i = 0; i < n; i++) {
        char sp[64], state;
        long ppid, pgrp;
        snprintf(sp, sizeof sp, "/proc/%ld/stat", (long)kids[i]);
        if (stat_at(sp, &state, &ppid, &pgrp) == 0) end_one(kids[i], state, ppid, pgrp, &ended);
    }
    return ended;
}

void wsc_proc_end(wsc_proc *p)
{
    if (!p->ended) {
        kill(-p->pid, SIGKILL);
        p->ended = 1;
    }
    /* SIGKILL cannot be caught: the leader is gone at once, unless the kernel holds it in
     * an uninterruptible wait; give that 5 s */
    long long until = wsc_mono_ms() + 5000;
    while (!reap(p, 0) && wsc_mono_ms() < until) wsc_nap_ms(1);
    /* the group's other members die with it; those that escaped it and were orphaned
     * are this process's children now: end them (a few rounds: an orphan appears only
     * once its parent is gone) */
    for (int round = 0; round < 3; round++) {
        kill(-p->pid, SIGKILL);
        if (!wsc_proc_end_escaped()) break; /* (one found: its own orphans may follow) */
        wsc_nap_ms(2);
    }
    tell_group('-', p->pid);
}

void wsc_proc_free(wsc_proc *p)
{
    if (!p) return;
    wsc_proc_end(p);
    if (!p->reaped) live_del(p->pid);
    wsi_free(p);
}
