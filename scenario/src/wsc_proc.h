/* wsc_proc.h -- the supervisor: starting, signalling and ending the consumer processes a
 * scenario drives (docs/consumer.md, "What wsim does to your process").
 *
 * Each process is started in a process group of its own (it leads it), with the caller's
 * environment plus the variables given, its standard input /dev/null and its standard
 * output and error appended to a log file, the signal mask empty and every signal at its
 * default action (wsim ignores SIGPIPE; a consumer must not inherit that), and no file
 * descriptor of wsim's but those three.  Signals go to the whole group, so a launcher
 * (`cargo run`, `npm start`, a shell script) and what it started get them alike.
 *
 * Nothing is left behind, whatever happens:
 *   - wsc_proc_end kills the group (SIGKILL), reaps the leader, and kills and reaps every
 *     process that escaped the group (setsid, a double fork) and was handed to this
 *     process: the first call makes it a child subreaper (PR_SET_CHILD_SUBREAPER), so
 *     orphans of its consumers become its children, and then every child of it in a
 *     process group other than its own is one of them;
 *   - a watchdog process, forked at the first start (wsc_proc_watchdog), knows every live
 *     group and every temporary directory registered with it; when wsim goes away without
 *     ending them (a crash, SIGKILL, an exit that skipped the cleanup) the watchdog's pipe
 *     closes and it kills those groups and removes those directories.
 *
 * Not thread safe; no function blocks for longer than the time it is given. */
#ifndef WSC_PROC_H
#define WSC_PROC_H

#include <stddef.h>
#include <sys/types.h>

typedef struct wsc_proc wsc_proc;

/* How to start one process. */
typedef struct wsc_proc_spec {
    const char *const *argv; /* the command line, NULL-terminated; argv[0] is looked up in
                                PATH when it holds no '/' */
    const char *const *env;  /* NAME=VALUE entries added to the environment (replacing a
                                variable of the same name); NULL-terminated or NULL */
    const char *log_path;    /* standard output and error are appended here (created 0600
                                if missing) */
    const char *dir;         /* the working directory, or NULL for the caller's */
} wsc_proc_spec;

/* Starts a process as spec says.  0 with *out set, or -1 with why[0..cap) saying why in
 * one sentence naming the program ("cannot start 'nosuch': No such file or directory"). */
int wsc_proc_start(const wsc_proc_spec *spec, wsc_proc **out, char *why, size_t cap);
/* The process id (its group's id too). */
pid_t wsc_proc_pid(const wsc_proc *p);
/* Whether it still runs: 1, or 0 once it exited (reaped here; its status is kept). */
int wsc_proc_running(wsc_proc *p);
/* Its wait status once it exited (waitpid's), -1 while it runs. */
int wsc_proc_status(const wsc_proc *p);
/* The status in words: "exited with status 3", "was killed by signal 9 (Killed)",
 * "is running". */
void wsc_proc_status_text(const wsc_proc *p, char *buf, size_t cap);
/* Whether a process of its group is running or runnable now, or in an uninterruptible
 * wait (state R or D in /proc): it is thinking, not waiting for the server.  0 when every
 * one sleeps (or none is left). */
int wsc_proc_busy(const wsc_proc *p);
/* Sends sig to the whole group (even after the leader exited: members may remain).
 * 0, or -1 when no process of the group is left. */
int wsc_proc_signal(wsc_proc *p, int sig);
/* Kills the group (SIGKILL), reaps the leader (waiting at most 5 s, which SIGKILL never
 * needs unless the kernel is stuck), and ends every escaped descendant (above).  Safe to
 * call again; the process record stays until wsc_proc_free. */
void wsc_proc_end(wsc_proc *p);
/* Ends the process (wsc_proc_end) and frees the record; NULL is accepted. */
void wsc_proc_free(wsc_proc *p);

/* Ends every child of this process that lives in a process group other than its own:
 * the orphans of its consumers that escaped their groups (this process is their
 * subreaper).  Returns how many it ended. */
size_t wsc_proc_end_escaped(void);

/* Starts the watchdog if it is not running (wsc_proc_start does it too): 0, or -1 when it
 * cannot be forked (then nothing ends the processes if wsim is killed: said on stderr by
 * the caller if it matters).  A caller that forks workers calls it first, so that they
 * share one watchdog. */
int wsc_proc_watchdog(void);
/* Registers a temporary directory with the watchdog (removed with what it holds if wsim
 * goes away), or unregisters it (removed = 1: wsim removed it itself). */
void wsc_proc_watch_dir(const char *path, int removed);

/* Removes a directory and everything in it (the temporary directories of runs); 0 or
 * -1.  Never follows a symbolic link out of it. */
int wsc_proc_remove_tree(const char *path);

/* Milliseconds of the monotonic clock. */
long long wsc_mono_ms(void);
/* Sleeps ms milliseconds (a signal does not cut it short). */
void wsc_nap_ms(long ms);

#endif /* WSC_PROC_H */
