/* persist.c -- the server's RDB persistence, as redis-server 7.0.15 does it: SAVE, BGSAVE
 * [SCHEDULE] (a forked child writes the file, as Redis's does), LASTSAVE, the save points
 * ("save" seconds/changes pairs, checked ten times a second), the file written at SHUTDOWN
 * (and on SIGTERM with save points) and read at start from --dir/--dbfilename, DEBUG
 * RELOAD, and INFO's persistence figures.  The file format is the fake's (fr_rdb_save,
 * fr_rdb_load: Redis 7.0's).  aof.c keeps the append-only file and shares the child slot:
 * one child at a time, as in Redis.
 *
 * Times (LASTSAVE, the save points, the ctime of a file) are the fake's clock: the real
 * time on a wall-clock server, FAKE.TIME's on a virtual one. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "frs.h"

#define SAVE_RETRY_SECS 5 /* Redis's CONFIG_BGSAVE_RETRY_DELAY */
#define MAX_SAVE_POINTS 16

/* One "save" pair: after `seconds`, if at least `changes` writes happened. */
typedef struct save_point {
    long long seconds;
    long long changes;
} save_point;

struct frs_persist {
    long long lastsave;            /* LASTSAVE, rdb_last_save_time: the last good save */
    long long lastbgsave_try;      /* when the last BGSAVE was started (retry delay) */
    uint64_t dirty_at_save;        /* fr_server_dirty at the last good save */
    uint64_t dirty_before_bgsave;  /* fr_server_dirty when the running BGSAVE forked */
    int lastbgsave_ok;             /* rdb_last_bgsave_status */
    long long rdb_saves;           /* rdb_saves: SAVE and BGSAVE started */
    long long last_bgsave_secs;    /* rdb_last_bgsave_time_sec, -1 none */
    pid_t child;                   /* the running child, 0 none */
    int child_type;                /* FRS_CHILD_* of the running child */
    long long child_start;         /* when it forked (seconds of the fake's clock) */
    int bgsave_scheduled;          /* BGSAVE SCHEDULE waits for the child slot */
    long long keys_loaded;         /* rdb_last_load_keys_loaded */
    long long keys_expired;        /* rdb_last_load_keys_expired */
    save_point points[MAX_SAVE_POINTS]; /* the "save" parameter */
    int npoints;
    int64_t cron_ms;               /* turn_ms of the last cron run */
    frs_child_done *on_done;       /* who started the running child is told of its end */
};

/* ----- Small helpers ---------------------------------------------------------------- */

long long frs_persist_now(frs_server *srv) { return fr_clock_now(srv->fake) / 1000; }

/* The path of the RDB file: dbfilename in the working directory (Redis chdir()s to dir). */
static const char *rdb_path(frs_server *srv)
{
    const char *name = frs_config_get(srv, "dbfilename");
    return name && name[0] ? name : "dump.rdb";
}

void frs_persist_log(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fputs("fakeredis-server: ", stderr);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
}

/* Reads "save"'s pairs again (after CONFIG SET or at start). */
void frs_persist_config_changed(frs_server *srv)
{
    frs_persist *p = srv->persist;
    if (!p) return;
    p->npoints = 0;
    const char *v = frs_config_get(srv, "save");
    while (v && *v && p->npoints < MAX_SAVE_POINTS) {
        char *end;
        long long secs = strtoll(v, &end, 10);
        if (end == v) break;
        long long changes = strtoll(end, &end, 10);
        p->points[p->npoints++] = (save_point){secs, changes};
        v = end;
        while (*v == ' ') v++;
    }
}

uint64_t frs_persist_dirty(frs_server *srv)
{
    return srv->persist ? fr_server_dirty(srv->fake) - srv->persist->dirty_at_save : 0;
}

/* The options of a file the server writes: its AUX fields. */
static fr_rdb_options save_options(frs_server *srv, int aof_base)
{
    fr_rdb_options o = {frs_persist_now(srv), (long long)frs_used_memory(), aof_base};
    return o;
}

/* ----- Saving --------------------------------------------------------------------------- */

int frs_persist_rdb_save(frs_server *srv)
{
    frs_persist *p = srv->persist;
    fr_rdb_options o = save_options(srv, 0);
    if (fr_rdb_save_file(srv->fake, rdb_path(srv), &o) < 0) {
        char cwd[PATH_MAX];
        frs_persist_log("Failed saving the DB %s (in server root dir %s): %s", rdb_path(srv),
                        getcwd(cwd, sizeof(cwd)) ? cwd : "unknown", strerror(errno));
        return -1;
    }
    frs_persist_log("DB saved on disk");
    p->dirty_at_save = fr_server_dirty(srv->fake);
    p->lastsave = frs_persist_now(srv);
    p->lastbgsave_ok = 1;
    return 0;
}

int frs_persist_child_active(frs_server *srv)
{
    return srv->persist && srv->persist->child ? srv->persist->child_type : 0;
}

long long frs_persist_child_seconds(frs_server *srv)
{
    frs_persist *p = srv->persist;
    return p && p->child ? frs_persist_now(srv) - p->child_start : -1;
}

/* rdb-key-save-delay: microseconds a child waits per key (tests keep a save running with
 * it); the child waits them all before it writes. */
static void key_save_delay(frs_server *srv)
{
    const char *v = frs_config_get(srv, "rdb-key-save-delay");
    long long us = v ? strtoll(v, NULL, 10) : 0;
    if (us <= 0) return;
    unsigned long long keys = 0;
    for (int db = 0; db < 16; db++) {
        size_t n = 0, e = 0;
        if (fr_db_counts(srv->fake, db, &n, &e) == 0) keys += n;
    }
    unsigned long long total = keys * (unsigned long long)us;
    struct timespec ts = {(time_t)(total / 1000000), (long)(total % 1000000) * 1000};
    while (nanosleep(&ts, &ts) < 0 && errno == EINTR) {
    }
}

pid_t frs_persist_fork(frs_server *srv, int type, frs_child_done *on_done)
{
    frs_persist *p = srv->persist;
    fflush(stdout);
    fflush(stderr);
    pid_t pid = fork();
    if (pid < 0) {
        frs_persist_log("Can't save in background: fork: %s", strerror(errno));
        return -1;
    }
    if (pid == 0) {
        /* the child: nothing of the parent's loop runs here; it leaves with _exit so
         * that no exit handler of the parent (the unix socket's unlink) runs */
        signal(SIGTERM, SIG_DFL);
        signal(SIGINT, SIG_DFL);
        sigset_t mask;
        sigemptyset(&mask);
        sigaddset(&mask, SIGTERM);
        sigaddset(&mask, SIGINT);
        sigprocmask(SIG_UNBLOCK, &mask, NULL);
        return 0;
    }
    p->child = pid;
    p->child_type = type;
    p->child_start = frs_persist_now(srv);
    p->on_done = on_done;
    return pid;
}

/* The end of a BGSAVE child (backgroundSaveDoneHandlerDisk). */
static void bgsave_done(frs_server *srv, pid_t pid, int ok, int bysignal)
{
    frs_persist *p = srv->persist;
    if (ok) {
        frs_persist_log("Background saving terminated with success");
        p->dirty_at_save = p->dirty_before_bgsave; /* what came after is still unsaved */
        p->lastsave = frs_persist_now(srv);
        p->lastbgsave_ok = 1;
    } else if (!bysignal) {
        frs_persist_log("Background saving error");
        p->lastbgsave_ok = 0;
    } else {
        frs_persist_log("Background saving terminated by signal %d", bysignal);
        char tmp[64];
        snprintf(tmp, sizeof(tmp), "temp-%d.rdb", (int)pid);
        unlink(tmp);
        if (bysignal != SIGUSR1) p->lastbgsave_ok = 0;
    }
}

/* rdbSaveBackground: forks a child that writes the file.  0, or -1. */
static int bgsave_start(frs_server *srv)
{
    frs_persist *p = srv->persist;
    if (p->child) return -1;
    p->dirty_before_bgsave = fr_server_dirty(srv->fake);
    p->lastbgsave_try = frs_persist_now(srv);
    p->rdb_saves++;
    fr_rdb_options o = save_options(srv, 0);
    pid_t pid = frs_persist_fork(srv, FRS_CHILD_RDB, bgsave_done);
    if (pid < 0) {
        p->lastbgsave_ok = 0;
        return -1;
    }
    if (pid == 0) {
        key_save_delay(srv);
        _exit(fr_rdb_save_file(srv->fake, rdb_path(srv), &o) == 0 ? 0 : 1);
    }
    frs_persist_log("Background saving started by pid %ld", (long)pid);
    return 0;
}

void frs_persist_kill_child(frs_server *srv)
{
    frs_persist *p = srv->persist;
    if (!p || !p->child) return;
    /* SIGUSR1: a kill the done handler does not count as a failure (Redis's rule) */
    kill(p->child, SIGUSR1);
    int status;
    waitpid(p->child, &status, 0);
    frs_child_done *done = p->on_done;
    pid_t pid = p->child;
    p->child = 0;
    p->child_type = 0;
    p->on_done = NULL;
    if (done) done(srv, pid, 0, SIGUSR1);
}

/* ----- The commands ------------------------------------------------------------------ */

/* SAVE: the file written now; an error while a BGSAVE runs. */
void frs_cmd_save(frs_conn *c, int argc, const char *const *argv, const size_t *argvlen)
{
    (void)argc, (void)argv, (void)argvlen;
    frs_persist *p = c->srv->persist;
    if (p->child && p->child_type == FRS_CHILD_RDB) {
        frs_reply_error(c, "ERR Background save already in progress");
        return;
    }
    p->rdb_saves++;
    if (frs_persist_rdb_save(c->srv) == 0) frs_reply_ok(c);
    else frs_reply_error(c, "ERR");
}

/* BGSAVE [SCHEDULE] */
void frs_cmd_bgsave(frs_conn *c, int argc, const char *const *argv, const size_t *argvlen)
{
    frs_persist *p = c->srv->persist;
    int schedule = 0;
    if (argc > 1) {
        if (argc == 2 && argvlen[1] == 8 && !strncasecmp(argv[1], "schedule", 8)) {
            schedule = 1;
        } else {
            frs_reply_error(c, "ERR syntax error");
            return;
        }
    }
    if (p->child && p->child_type == FRS_CHILD_RDB) {
        frs_reply_error(c, "ERR Background save already in progress");
    } else if (p->child || c->in_exec) {
        if (schedule || c->in_exec) {
            p->bgsave_scheduled = 1;
            frs_reply_status(c, "Background saving scheduled");
        } else {
            frs_reply_error(c, "ERR Another child process is active (AOF?): can't BGSAVE right "
                               "now. Use BGSAVE SCHEDULE in order to schedule a BGSAVE whenever "
                               "possible.");
        }
    } else if (bgsave_start(c->srv) == 0) {
        frs_reply_status(c, "Background saving started");
    } else {
        frs_reply_error(c, "ERR");
    }
}

/* LASTSAVE: when the file was last written (the start when never). */
void frs_cmd_lastsave(frs_conn *c, int argc, const char *const *argv, const size_t *argvlen)
{
    (void)argc, (void)argv, (void)argvlen;
    frs_reply_ll(c, c->srv->persist->lastsave);
}

int frs_persist_shutdown(frs_server *srv, int save_mode, int force)
{
    frs_persist *p = srv->persist;
    if (!p) return 0;
    if (p->child) {
        frs_persist_log(p->child_type == FRS_CHILD_RDB
                            ? "There is a child saving an .rdb. Killing it!"
                            : "There is a child rewriting the AOF. Killing it!");
        frs_persist_kill_child(srv);
    }
    if (frs_aof_shutdown(srv) < 0 && !force) return -1;
    if ((p->npoints > 0 && save_mode >= 0) || save_mode > 0) {
        frs_persist_log("Saving the final RDB snapshot before exiting.");
        if (frs_persist_rdb_save(srv) < 0) {
            if (force) {
                frs_persist_log("Error trying to save the DB. Exit anyway.");
            } else {
                frs_persist_log("Error trying to save the DB, can't exit.");
                return -1;
            }
        }
    }
    return 0;
}

/* DEBUG RELOAD [MERGE] [NOFLUSH] [NOSAVE]: the file written (unless NOSAVE), then read
 * back (into what is there with NOFLUSH; a key met again replaces with MERGE).  A file
 * that is refused answers the error and changes nothing (Redis has emptied its keyspace
 * by then, and keeps what it loaded before the error). */
void frs_persist_debug_reload(frs_conn *c, int merge, int noflush, int nosave)
{
    frs_server *srv = c->srv;
    if (!nosave && frs_persist_rdb_save(srv) < 0) {
        frs_reply_error(c, "ERR");
        return;
    }
    fr_load_report rep;
    unsigned flags = (noflush ? FR_LOAD_NOFLUSH : 0) | (merge ? FR_LOAD_MERGE : 0) |
                     (frs_admin_skip_checksum(srv) ? FR_LOAD_SKIP_CHECKSUM : 0);
    if (fr_rdb_load_file(srv->fake, rdb_path(srv), flags, &rep) < 0) {
        frs_persist_log("%s", rep.error);
        frs_reply_error(c, "ERR Error trying to load the RDB dump");
        return;
    }
    srv->persist->keys_loaded = rep.keys_loaded;
    srv->persist->keys_expired = rep.keys_expired;
    frs_drain_fake_events(srv, c); /* tracking's flush, as emptyData sends it */
    frs_persist_log("DB reloaded by DEBUG RELOAD");
    frs_reply_ok(c);
}

/* ----- Start, cron, INFO ---------------------------------------------------------------- */

int frs_persist_init(frs_server *srv)
{
    frs_persist *p = calloc(1, sizeof(*p));
    if (!p) return -1;
    srv->persist = p;
    p->lastsave = frs_persist_now(srv);
    p->lastbgsave_ok = 1;
    p->last_bgsave_secs = -1;
    p->dirty_at_save = fr_server_dirty(srv->fake);
    frs_persist_config_changed(srv);
    /* loadDataFromDisk: the AOF when it is on, else the RDB file when there is one */
    const char *aof = frs_config_get(srv, "appendonly");
    if (aof && !strcmp(aof, "yes")) return frs_aof_load_at_start(srv);
    fr_load_report rep;
    if (fr_rdb_load_file(srv->fake, rdb_path(srv), 0, &rep) < 0) {
        if (errno == ENOENT) return 0;
        fprintf(stderr, "%s\n", rep.error);
        if (!strstr(rep.error, "Fatal error loading the DB"))
            frs_persist_log("Fatal error loading the DB: %s. Exiting.", strerror(EINVAL));
        return -1;
    }
    p->keys_loaded = rep.keys_loaded;
    p->keys_expired = rep.keys_expired;
    p->dirty_at_save = fr_server_dirty(srv->fake);
    frs_persist_log("Done loading RDB, keys loaded: %lld, keys expired: %lld.", rep.keys_loaded,
                    rep.keys_expired);
    frs_persist_log("DB loaded from disk");
    return 0;
}

void frs_persist_free(frs_server *srv)
{
    if (!srv->persist) return;
    frs_persist_kill_child(srv);
    frs_aof_free(srv);
    free(srv->persist);
    srv->persist = NULL;
}

int frs_persist_wants_cron(frs_server *srv)
{
    frs_persist *p = srv->persist;
    return p && (p->child || p->npoints || p->bgsave_scheduled || frs_aof_wants_cron(srv));
}

void frs_persist_cron(frs_server *srv)
{
    frs_persist *p = srv->persist;
    if (!p || srv->turn_ms - p->cron_ms < 100) return;
    p->cron_ms = srv->turn_ms;
    if (p->child) { /* checkChildrenDone */
        int status;
        pid_t got = waitpid(p->child, &status, WNOHANG);
        if (got == p->child) {
            int bysignal = WIFSIGNALED(status) ? WTERMSIG(status) : 0;
            int ok = !bysignal && WIFEXITED(status) && WEXITSTATUS(status) == 0;
            frs_child_done *done = p->on_done;
            long long secs = frs_persist_now(srv) - p->child_start;
            int type = p->child_type;
            p->child = 0;
            p->child_type = 0;
            p->on_done = NULL;
            if (type == FRS_CHILD_RDB) p->last_bgsave_secs = secs;
            if (done) done(srv, got, ok, bysignal);
        }
    }
    long long now = frs_persist_now(srv);
    if (!p->child && p->bgsave_scheduled) {
        if (bgsave_start(srv) == 0) p->bgsave_scheduled = 0;
    }
    /* the save points: enough changes and enough time, and not right after a failure */
    if (!p->child) {
        uint64_t dirty = frs_persist_dirty(srv);
        for (int i = 0; i < p->npoints; i++) {
            const save_point *sp = &p->points[i];
            if ((long long)dirty >= sp->changes && now - p->lastsave > sp->seconds &&
                (now - p->lastbgsave_try > SAVE_RETRY_SECS || p->lastbgsave_ok)) {
                frs_persist_log("%lld changes in %lld seconds. Saving...", sp->changes,
                                sp->seconds);
                bgsave_start(srv);
                break;
            }
        }
    }
    frs_aof_cron(srv);
}

void frs_persist_info(frs_server *srv, frs_persist_figures *f)
{
    frs_persist *p = srv->persist;
    memset(f, 0, sizeof(*f));
    f->changes = (long long)frs_persist_dirty(srv);
    f->bgsave_in_progress = p->child && p->child_type == FRS_CHILD_RDB;
    f->last_save_time = p->lastsave;
    f->last_bgsave_ok = p->lastbgsave_ok;
    f->last_bgsave_secs = p->last_bgsave_secs;
    f->current_bgsave_secs = f->bgsave_in_progress ? frs_persist_now(srv) - p->child_start : -1;
    f->saves = p->rdb_saves;
    f->keys_loaded = p->keys_loaded;
    f->keys_expired = p->keys_expired;
}

void frs_persist_flushall(frs_server *srv)
{
    frs_persist *p = srv->persist;
    if (!p) return;
    /* flushAllDataAndResetRDB: a BGSAVE child is killed, and with save points the empty
     * keyspace is saved at once */
    if (p->child && p->child_type == FRS_CHILD_RDB) frs_persist_kill_child(srv);
    if (p->npoints > 0) {
        p->rdb_saves++;
        frs_persist_rdb_save(srv);
    }
}

void frs_persist_loaded(frs_server *srv, long long keys_loaded, long long keys_expired)
{
    srv->persist->keys_loaded = keys_loaded;
    srv->persist->keys_expired = keys_expired;
    srv->persist->dirty_at_save = fr_server_dirty(srv->fake);
}
