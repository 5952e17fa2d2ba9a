/* aof.c -- the append-only file as redis-server 7.0.15 keeps it: a directory
 * (appenddirname) with a manifest (appendonly.aof.manifest: "file NAME seq N type b|h|i"
 * lines) naming one base file (an RDB file with aof-use-rdb-preamble yes, else commands)
 * and the incremental files the writes go to since the last rewrite.
 *
 *   - every write the fake propagates (fr_server_set_propagate_hook: Redis 7.0's forms,
 *     SELECT when the database changes) is buffered, written before the replies go out
 *     (beforeSleep's flushAppendOnlyFile) and fsynced as appendfsync says: always (each
 *     write), everysec (once the fake's clock shows a new second: the virtual clock's
 *     seconds on a virtual server), no (never: the kernel decides);
 *   - BGREWRITEAOF (and CONFIG SET appendonly yes, and auto-aof-rewrite-*) forks a child
 *     that writes a new base from the keyspace while new writes go to a new incremental
 *     file; when it is done the manifest names the new base and the files it replaces
 *     become history, removed unless aof-disable-auto-gc;
 *   - at start (appendonly yes) the manifest's files are read, checked whole first (the
 *     fake's fr_aof_load), a last file cut short truncated and loaded when
 *     aof-load-truncated is yes, an old single appendonly.aof moved into the directory;
 *     DEBUG LOADAOF does the same on a running server.
 * persist.c's child slot is shared: one child at a time. */
#include <dirent.h>
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
#include <unistd.h>

#include "frs.h"

#define AOF_OFF 0
#define AOF_ON 1
#define AOF_WAIT_REWRITE 2 /* turned on at run time: the first rewrite makes the files */

/* One file of the manifest. */
typedef struct aof_info {
    char *name;
    long long seq;
    char type; /* 'b', 'h', 'i' */
} aof_info;

struct frs_aof {
    int state;                /* AOF_OFF, AOF_ON, AOF_WAIT_REWRITE */
    aof_info base;            /* name NULL when there is none */
    aof_info *hist, *incr;    /* history and incremental files, in manifest order */
    size_t nhist, nincr, caphist, capincr;
    long long base_seq, incr_seq; /* the last numbers used */
    int fd;                   /* the incremental file written to, -1 none */
    char *buf;                /* propagated writes not yet written (aof_buf) */
    size_t len, cap;
    int selected_db;          /* the database the file is at (-1: next write SELECTs) */
    long long current_size;   /* aof_current_size */
    long long base_size;      /* aof_base_size: the size at the last rewrite */
    long long last_incr_size; /* the incremental file's size */
    long long fsync_offset;   /* of it, what was fsynced */
    long long last_fsync;     /* the second of the last fsync (the fake's clock) */
    long long delayed_fsync;  /* aof_delayed_fsync (never: fsync is synchronous here) */
    int last_write_ok;        /* aof_last_write_status */
    int last_bgrewrite_ok;    /* aof_last_bgrewrite_status */
    long long rewrites;       /* aof_rewrites */
    long long consecutive_failures; /* aof_rewrites_consecutive_failures */
    long long last_rewrite_secs;    /* aof_last_rewrite_time_sec */
    int rewrite_scheduled;    /* aof_rewrite_scheduled */
    int temp_incr;            /* AOF_WAIT_REWRITE: writes go to temp-<name>.incr */
    long long rewrite_base_seq; /* the base the running child writes */
};

/* ----- Small helpers ---------------------------------------------------------------- */

static const char *cfg(frs_server *srv, const char *name, const char *dflt)
{
    const char *v = frs_config_get(srv, name);
    return v && v[0] ? v : dflt;
}

static const char *dirname_(frs_server *srv) { return cfg(srv, "appenddirname", "appendonlydir"); }
static const char *filename_(frs_server *srv) { return cfg(srv, "appendfilename", "appendonly.aof"); }

/* DIR/name into out. */
static void path_in(frs_server *srv, const char *name, char *out, size_t cap)
{
    int n = snprintf(out, cap, "%s/%s", dirname_(srv), name);
    if (n < 0 || (size_t)n >= cap) out[0] = '\0'; /* too long: no such file */
}

static char *xstrdup(const char *s)
{
    char *d = strdup(s);
    if (!d) frs_oom_abort(__func__);
    return d;
}

static void list_push(aof_info **v, size_t *n, size_t *cap, aof_info ai)
{
    *v = frs_array_grow(*v, cap, *n, sizeof(**v), 4);
    (*v)[(*n)++] = ai;
}

static void manifest_clear(frs_aof *a)
{
    free(a->base.name);
    a->base.name = NULL;
    for (size_t i = 0; i < a->nhist; i++) free(a->hist[i].name);
    for (size_t i = 0; i < a->nincr; i++) free(a->incr[i].name);
    a->nhist = a->nincr = 0;
    a->base_seq = a->incr_seq = 0;
}

static long long file_size(frs_server *srv, const char *name)
{
    char p[PATH_MAX];
    path_in(srv, name, p, sizeof(p));
    struct stat st;
    return stat(p, &st) == 0 ? (long long)st.st_size : 0;
}

/* ----- The manifest ---------------------------------------------------------------- */

/* getAofManifestAsString: base, history, incremental files. */
static void manifest_text(frs_aof *a, char **out, size_t *len)
{
    size_t cap = 256, n = 0;
    char *t = malloc(cap);
    if (!t) frs_oom_abort(__func__);
    aof_info *all[3] = {a->base.name ? &a->base : NULL, a->hist, a->incr};
    size_t counts[3] = {a->base.name ? 1 : 0, a->nhist, a->nincr};
    for (int k = 0; k < 3; k++) {
        for (size_t i = 0; i < counts[k]; i++) {
            aof_info *ai = &all[k][i];
            size_t need = strlen(ai->name) + 64;
            if (n + need > cap) {
                while (n + need > cap) cap *= 2;
                t = realloc(t, cap);
                if (!t) frs_oom_abort(__func__);
            }
            n += (size_t)snprintf(t + n, cap - n, "file %s seq %lld type %c\n", ai->name, ai->seq,
                                  ai->type);
        }
    }
    *out = t;
    *len = n;
}

/* persistAofManifest: temp-<name>.manifest, fsync, rename, fsync of the directory.  0, -1. */
static int manifest_write(frs_server *srv)
{
    char *text;
    size_t len;
    manifest_text(srv->aof, &text, &len);
    char tmp[PATH_MAX], final[PATH_MAX], name[PATH_MAX];
    snprintf(name, sizeof(name), "temp-%s.manifest", filename_(srv));
    path_in(srv, name, tmp, sizeof(tmp));
    snprintf(name, sizeof(name), "%s.manifest", filename_(srv));
    path_in(srv, name, final, sizeof(final));
    int fd = open(tmp, O_WRONLY | O_TRUNC | O_CREAT | O_CLOEXEC, 0644);
    int rc = -1;
    if (fd < 0) {
        frs_persist_log("Can't open the AOF manifest file %s: %s", name, strerror(errno));
    } else {
        size_t off = 0;
        while (off < len) {
            ssize_t w = write(fd, text + off, len - off);
            if (w < 0 && errno == EINTR) continue;
            if (w < 0) break;
            off += (size_t)w;
        }
        if (off == len && fsync(fd) == 0 && rename(tmp, final) == 0) rc = 0;
        else frs_persist_log("Error trying to write the AOF manifest file %s: %s", name,
                             strerror(errno));
        close(fd);
        int dfd = open(dirname_(srv), O_RDONLY | O_CLOEXEC);
        if (dfd >= 0) {
            fsync(dfd);
            close(dfd);
        }
    }
    free(text);
    return rc;
}

/* aofLoadManifestFromFile: 1 read, 0 none there, -1 refused (its lines logged). */
static int manifest_read(frs_server *srv)
{
    frs_aof *a = srv->aof;
    manifest_clear(a);
    char path[PATH_MAX], name[PATH_MAX];
    snprintf(name, sizeof(name), "%s.manifest", filename_(srv));
    path_in(srv, name, path, sizeof(path));
    FILE *f = fopen(path, "r");
    if (!f) {
        if (errno == ENOENT) return 0;
        frs_persist_log("Fatal error: can't open the AOF manifest file %s for reading: %s", path,
                        strerror(errno));
        return -1;
    }
    char line[1026];
    int linenum = 0;
    const char *err = NULL;
    long long maxseq = 0;
    while (!err) {
        if (!fgets(line, sizeof(line), f)) {
            if (linenum == 0) err = "Found an empty AOF manifest";
            break;
        }
        linenum++;
        if (line[0] == '#') continue;
        if (!strchr(line, '\n')) {
            err = "The AOF manifest file contains too long line";
            break;
        }
        char *argv[64];
        size_t lens[64], off[64], total = strlen(line);
        char words[1100], cstr[2200];
        int argc = fr_split_args(line, total, words, off, lens, 64);
        if (argc < 6 || argc % 2) {
            err = "Invalid AOF manifest file format";
            break;
        }
        size_t at = 0; /* each word NUL-terminated */
        for (int i = 0; i < argc; i++) {
            memcpy(cstr + at, words + off[i], lens[i]);
            cstr[at + lens[i]] = '\0';
            argv[i] = cstr + at;
            at += lens[i] + 1;
        }
        aof_info ai = {NULL, 0, 0};
        for (int i = 0; i < argc; i += 2) {
            if (!strcasecmp(argv[i], "file")) {
                if (strchr(argv[i + 1], '/')) {
                    err = "File can't be a path, just a filename";
                    break;
                }
                free(ai.name);
                ai.name = xstrdup(argv[i + 1]);
            } else if (!strcasecmp(argv[i], "seq")) {
                ai.seq = atoll(argv[i + 1]);
            } else if (!strcasecmp(argv[i], "type")) {
                ai.type = argv[i + 1][0];
            }
        }
        if (!err && (!ai.name || !ai.seq || !ai.type)) err = "Invalid AOF manifest file format";
        if (!err && ai.type == 'b' && a->base.name) err = "Found duplicate base file information";
        if (!err && ai.type == 'i' && ai.seq <= maxseq) err = "Found a non-monotonic sequence number";
        if (!err && ai.type != 'b' && ai.type != 'h' && ai.type != 'i') err = "Unknown AOF file type";
        if (err) {
            free(ai.name);
            break;
        }
        if (ai.type == 'b') {
            a->base = ai;
            a->base_seq = ai.seq;
        } else if (ai.type == 'h') {
            list_push(&a->hist, &a->nhist, &a->caphist, ai);
        } else {
            list_push(&a->incr, &a->nincr, &a->capincr, ai);
            a->incr_seq = maxseq = ai.seq;
        }
    }
    fclose(f);
    if (err) {
        frs_persist_log("*** FATAL AOF MANIFEST FILE ERROR ***");
        if (linenum) frs_persist_log("Reading the manifest file, at line %d", linenum);
        frs_persist_log("%s", err);
        return -1;
    }
    return 1;
}

/* aofDelHistoryFiles (unless aof-disable-auto-gc) */
static void delete_history(frs_server *srv)
{
    frs_aof *a = srv->aof;
    if (!a->nhist || !strcmp(cfg(srv, "aof-disable-auto-gc", "no"), "yes")) return;
    for (size_t i = 0; i < a->nhist; i++) {
        char p[PATH_MAX];
        path_in(srv, a->hist[i].name, p, sizeof(p));
        frs_persist_log("Removing the history file %s in the background", a->hist[i].name);
        unlink(p);
        free(a->hist[i].name);
    }
    a->nhist = 0;
    manifest_write(srv);
}

/* ----- Writing ----------------------------------------------------------------------- */

static void buf_append(frs_aof *a, const void *p, size_t n)
{
    if (a->len + n > a->cap) {
        size_t cap = a->cap ? a->cap : 4096;
        while (a->len + n > cap) cap *= 2;
        char *nb = realloc(a->buf, cap);
        if (!nb) frs_oom_abort(__func__);
        a->buf = nb;
        a->cap = cap;
    }
    memcpy(a->buf + a->len, p, n);
    a->len += n;
}

/* feedAppendOnlyFile: the fake's propagation hook. */
static void feed(void *ctx, int db, int argc, const char *const *argv, const size_t *lens)
{
    frs_server *srv = ctx;
    frs_aof *a = srv->aof;
    if (!a || a->state == AOF_OFF) return;
    char head[64];
    if (db != a->selected_db) {
        char d[16];
        int dl = snprintf(d, sizeof(d), "%d", db);
        int n = snprintf(head, sizeof(head), "*2\r\n$6\r\nSELECT\r\n$%d\r\n%s\r\n", dl, d);
        buf_append(a, head, (size_t)n);
        a->selected_db = db;
    }
    int n = snprintf(head, sizeof(head), "*%d\r\n", argc);
    buf_append(a, head, (size_t)n);
    for (int i = 0; i < argc; i++) {
        n = snprintf(head, sizeof(head), "$%zu\r\n", lens[i]);
        buf_append(a, head, (size_t)n);
        buf_append(a, argv[i], lens[i]);
        buf_append(a, "\r\n", 2);
    }
}

static int fsync_policy(frs_server *srv)
{
    const char *p = cfg(srv, "appendfsync", "everysec");
    return !strcmp(p, "always") ? 2 : !strcmp(p, "no") ? 0 : 1;
}

/* flushAppendOnlyFile: the buffer written, then fsynced as appendfsync says. */
static void flush(frs_server *srv, int force)
{
    (void)force;
    frs_aof *a = srv->aof;
    if (!a || a->fd < 0) return;
    long long now = frs_persist_now(srv);
    int policy = fsync_policy(srv);
    if (a->len) {
        size_t off = 0;
        while (off < a->len) {
            ssize_t w = write(a->fd, a->buf + off, a->len - off);
            if (w < 0 && errno == EINTR) continue;
            if (w < 0) break;
            off += (size_t)w;
        }
        if (off != a->len) {
            frs_persist_log("Error writing to the AOF file: %s", strerror(errno));
            if (policy == 2) {
                frs_persist_log("Can't recover from AOF write error when the AOF fsync policy is "
                                "'always'. Exiting...");
                exit(1);
            }
            a->last_write_ok = 0;
            memmove(a->buf, a->buf + off, a->len - off);
            a->len -= off;
            a->current_size += (long long)off;
            a->last_incr_size += (long long)off;
            return;
        }
        if (!a->last_write_ok)
            frs_persist_log("AOF write error looks solved, Redis can write again.");
        a->last_write_ok = 1;
        a->current_size += (long long)a->len;
        a->last_incr_size += (long long)a->len;
        a->len = 0;
    }
    if (a->fsync_offset == a->last_incr_size) return;
    if (!strcmp(cfg(srv, "no-appendfsync-on-rewrite", "no"), "yes") && frs_persist_child_active(srv))
        return;
    if (policy == 2 || (policy == 1 && now > a->last_fsync)) {
        if (fdatasync(a->fd) < 0 && policy == 2) {
            frs_persist_log("Can't persist AOF for fsync error when the AOF fsync policy is 'always': "
                            "%s. Exiting...", strerror(errno));
            exit(1);
        }
        a->fsync_offset = a->last_incr_size;
        a->last_fsync = now;
    }
}

void frs_aof_before_sleep(frs_server *srv)
{
    if (srv->aof && srv->aof->state != AOF_OFF) flush(srv, 0);
}

/* openNewIncrAofForAppend: the next incremental file (a temporary one while the AOF waits
 * for its first rewrite), the manifest persisted with it.  0, or -1 logged. */
static int open_new_incr(frs_server *srv)
{
    frs_aof *a = srv->aof;
    char name[PATH_MAX], p[PATH_MAX];
    if (a->state == AOF_WAIT_REWRITE) {
        snprintf(name, sizeof(name), "temp-%s.incr", filename_(srv));
    } else {
        snprintf(name, sizeof(name), "%s.%lld.incr.aof", filename_(srv), a->incr_seq + 1);
    }
    path_in(srv, name, p, sizeof(p));
    int fd = open(p, O_WRONLY | O_TRUNC | O_CREAT | O_CLOEXEC, 0644);
    if (fd < 0) {
        frs_persist_log("Can't open the append-only file %s: %s", name, strerror(errno));
        return -1;
    }
    if (a->state != AOF_WAIT_REWRITE) {
        list_push(&a->incr, &a->nincr, &a->capincr, (aof_info){xstrdup(name), ++a->incr_seq, 'i'});
        if (manifest_write(srv) < 0) {
            close(fd);
            free(a->incr[--a->nincr].name);
            a->incr_seq--;
            return -1;
        }
    }
    frs_persist_log("Creating AOF incr file %s on background rewrite", name);
    flush(srv, 1);
    if (a->fd >= 0) {
        fsync(a->fd);
        close(a->fd);
    }
    a->fd = fd;
    a->temp_incr = a->state == AOF_WAIT_REWRITE;
    a->last_incr_size = a->fsync_offset = 0;
    a->selected_db = -1;
    return 0;
}

/* The base's bytes: an RDB file (aof-use-rdb-preamble yes) or commands. */
static char *base_bytes(frs_server *srv, size_t *len, int *rdb)
{
    *rdb = !strcmp(cfg(srv, "aof-use-rdb-preamble", "yes"), "yes");
    if (*rdb) {
        fr_rdb_options o = {frs_persist_now(srv), (long long)frs_used_memory(), 1};
        return fr_rdb_save(srv->fake, &o, len);
    }
    return fr_aof_rewrite(srv->fake, len);
}

static void rewrite_done(frs_server *srv, pid_t pid, int ok, int bysignal);

/* rewriteAppendOnlyFileBackground.  0, or -1 logged. */
static int rewrite_start(frs_server *srv)
{
    frs_aof *a = srv->aof;
    if (frs_persist_child_active(srv)) return -1;
    mkdir(dirname_(srv), 0755);
    if (open_new_incr(srv) < 0) return -1;
    a->rewrite_scheduled = 0;
    a->rewrite_base_seq = a->base_seq + 1;
    pid_t pid = frs_persist_fork(srv, FRS_CHILD_AOF, rewrite_done);
    if (pid < 0) return -1;
    if (pid == 0) {
        size_t len;
        int rdb;
        char *bytes = base_bytes(srv, &len, &rdb);
        char tmp[PATH_MAX], name[64];
        snprintf(name, sizeof(name), "temp-rewriteaof-bg-%d.aof", (int)getpid());
        path_in(srv, name, tmp, sizeof(tmp));
        int fd = bytes ? open(tmp, O_WRONLY | O_TRUNC | O_CREAT | O_CLOEXEC, 0644) : -1;
        size_t off = 0;
        while (fd >= 0 && off < len) {
            ssize_t w = write(fd, bytes + off, len - off);
            if (w < 0 && errno == EINTR) continue;
            if (w < 0) break;
            off += (size_t)w;
        }
        int ok = fd >= 0 && off == len && fsync(fd) == 0;
        if (fd >= 0) close(fd);
        _exit(ok ? 0 : 1);
    }
    frs_persist_log("Background append only file rewriting started by pid %ld", (long)pid);
    return 0;
}

/* backgroundRewriteDoneHandler: the child's file becomes the base. */
static void rewrite_done(frs_server *srv, pid_t pid, int ok, int bysignal)
{
    frs_aof *a = srv->aof;
    char tmp[PATH_MAX], name[PATH_MAX], p[PATH_MAX];
    snprintf(name, sizeof(name), "temp-rewriteaof-bg-%d.aof", (int)pid);
    path_in(srv, name, tmp, sizeof(tmp));
    if (!ok) {
        unlink(tmp);
        if (bysignal && bysignal != SIGUSR1)
            frs_persist_log("Background AOF rewrite terminated by signal %d", bysignal);
        else if (!bysignal) frs_persist_log("Background AOF rewrite signal handler took too long.");
        if (bysignal != SIGUSR1) {
            a->last_bgrewrite_ok = 0;
            a->consecutive_failures++;
        }
        if (a->state == AOF_WAIT_REWRITE) { /* the temp incr file is dropped */
            snprintf(name, sizeof(name), "temp-%s.incr", filename_(srv));
            path_in(srv, name, p, sizeof(p));
            unlink(p);
            if (a->fd >= 0) close(a->fd);
            a->fd = -1;
            a->len = 0;
            a->rewrite_scheduled = 1; /* tried again */
        }
        return;
    }
    int rdb = !strcmp(cfg(srv, "aof-use-rdb-preamble", "yes"), "yes");
    char base[PATH_MAX];
    snprintf(base, sizeof(base), "%s.%lld.base.%s", filename_(srv), a->rewrite_base_seq,
             rdb ? "rdb" : "aof");
    path_in(srv, base, p, sizeof(p));
    if (rename(tmp, p) < 0) {
        frs_persist_log("Error trying to rename the temporary AOF file %s into %s: %s", name, base,
                        strerror(errno));
        a->last_bgrewrite_ok = 0;
        a->consecutive_failures++;
        return;
    }
    /* the old base and every incremental file but the one being written become history */
    if (a->base.name) {
        a->base.type = 'h';
        list_push(&a->hist, &a->nhist, &a->caphist, a->base);
    }
    a->base = (aof_info){xstrdup(base), a->rewrite_base_seq, 'b'};
    a->base_seq = a->rewrite_base_seq;
    if (a->state == AOF_WAIT_REWRITE) {
        /* the writes made during the rewrite: the temp incr file becomes the first one */
        for (size_t i = 0; i < a->nincr; i++) {
            a->incr[i].type = 'h';
            list_push(&a->hist, &a->nhist, &a->caphist, a->incr[i]);
        }
        a->nincr = 0;
        snprintf(name, sizeof(name), "temp-%s.incr", filename_(srv));
        path_in(srv, name, tmp, sizeof(tmp));
        char incr[PATH_MAX];
        snprintf(incr, sizeof(incr), "%s.%lld.incr.aof", filename_(srv), a->incr_seq + 1);
        path_in(srv, incr, p, sizeof(p));
        rename(tmp, p);
        list_push(&a->incr, &a->nincr, &a->capincr, (aof_info){xstrdup(incr), ++a->incr_seq, 'i'});
        a->state = AOF_ON;
        a->temp_incr = 0;
    } else {
        while (a->nincr > 1) {
            aof_info old = a->incr[0];
            memmove(a->incr, a->incr + 1, (a->nincr - 1) * sizeof(*a->incr));
            a->nincr--;
            old.type = 'h';
            list_push(&a->hist, &a->nhist, &a->caphist, old);
        }
    }
    manifest_write(srv);
    a->base_size = file_size(srv, base);
    a->current_size = a->base_size + a->last_incr_size;
    a->last_bgrewrite_ok = 1;
    a->consecutive_failures = 0;
    a->rewrites++;
    a->last_rewrite_secs = 0;
    frs_persist_log("Background AOF rewrite terminated with success");
    frs_persist_log("Background AOF rewrite finished successfully");
    delete_history(srv);
}

/* ----- Loading -------------------------------------------------------------------------- */

/* The bytes of a file of the directory; NULL (logged) when it cannot be read. */
static char *read_aof(frs_server *srv, const char *name, size_t *len, int *missing)
{
    char p[PATH_MAX];
    path_in(srv, name, p, sizeof(p));
    FILE *f = fopen(p, "rb");
    *missing = 0;
    if (!f) {
        *missing = errno == ENOENT;
        frs_persist_log(*missing ? "The append log file %s doesn't exist: %s"
                          : "Fatal error: can't open the append log file %s for reading: %s",
                        name, strerror(errno));
        return NULL;
    }
    size_t cap = 4096, n = 0;
    char *b = malloc(cap);
    for (;;) {
        if (!b) frs_oom_abort(__func__);
        size_t r = fread(b + n, 1, cap - n, f);
        n += r;
        if (n < cap) break;
        cap *= 2;
        b = realloc(b, cap);
    }
    fclose(f);
    *len = n;
    return b;
}

/* loadAppendOnlyFiles: every file checked, then loaded.  0 (loaded, or nothing there), -1
 * refused (logged; nothing loaded). */
static int load_files(frs_server *srv)
{
    frs_aof *a = srv->aof;
    size_t nfiles = (a->base.name ? 1 : 0) + a->nincr;
    if (!nfiles) return 0;
    char **bytes = calloc(nfiles, sizeof(*bytes));
    size_t *lens = calloc(nfiles, sizeof(*lens));
    const char **names = calloc(nfiles, sizeof(*names));
    if (!bytes || !lens || !names) frs_oom_abort(__func__);
    size_t k = 0;
    if (a->base.name) names[k++] = a->base.name;
    for (size_t i = 0; i < a->nincr; i++) names[k++] = a->incr[i].name;
    int rc = 0;
    unsigned trunc_ok = !strcmp(cfg(srv, "aof-load-truncated", "yes"), "yes") ? FR_AOF_LOAD_TRUNCATED : 0;
    fr_aof_report rep;
    for (size_t i = 0; i < nfiles && rc == 0; i++) {
        int missing;
        if (!(bytes[i] = read_aof(srv, names[i], &lens[i], &missing))) {
            rc = -1;
            break;
        }
        int last = i + 1 == nfiles;
        if (fr_aof_load(srv->fake, bytes[i], lens[i], names[i], FR_AOF_CHECK_ONLY | (last ? trunc_ok : 0),
                        &rep) < 0) {
            fprintf(stderr, "%s\n", rep.error);
            rc = -1;
        }
    }
    long long keys_before = 0;
    for (size_t i = 0; i < nfiles && rc == 0; i++) {
        int last = i + 1 == nfiles;
        fr_aof_load(srv->fake, bytes[i], lens[i], names[i], last ? trunc_ok : 0, &rep);
        if (rep.truncated) {
            fprintf(stderr, "%s\n", rep.log);
            char p[PATH_MAX];
            path_in(srv, names[i], p, sizeof(p));
            if (truncate(p, (off_t)rep.valid_up_to) < 0)
                frs_persist_log("Error truncating the AOF file %s: %s", names[i], strerror(errno));
        }
        frs_persist_log("DB loaded from %s file %s", i == 0 && a->base.name ? "base" : "incr",
                        names[i]);
    }
    for (size_t i = 0; i < nfiles; i++) free(bytes[i]);
    free(bytes);
    free(lens);
    free(names);
    if (rc == 0) {
        for (int db = 0; db < 16; db++) {
            size_t n = 0, e = 0;
            if (fr_db_counts(srv->fake, db, &n, &e) == 0) keys_before += (long long)n;
        }
        frs_persist_loaded(srv, keys_before, 0);
    }
    return rc;
}

/* The manifest read (an old-style appendonly.aof in the working directory moved into the
 * directory first, aofUpgradePrepare).  0, or -1 logged. */
static int read_manifest_upgrading(frs_server *srv)
{
    int r = manifest_read(srv);
    if (r < 0) return -1;
    frs_aof *a = srv->aof;
    struct stat st;
    if (stat(filename_(srv), &st) == 0 && !a->base.name && !a->nincr) {
        mkdir(dirname_(srv), 0755);
        a->base = (aof_info){xstrdup(filename_(srv)), 1, 'b'};
        a->base_seq = 1;
        if (manifest_write(srv) < 0) return -1;
        char p[PATH_MAX];
        path_in(srv, filename_(srv), p, sizeof(p));
        if (rename(filename_(srv), p) < 0) {
            frs_persist_log("Error trying to move the old AOF file %s into dir %s: %s",
                            filename_(srv), dirname_(srv), strerror(errno));
            return -1;
        }
        frs_persist_log("Successfully migrated an old-style AOF file (%s) into the AOF directory (%s).",
                        filename_(srv), dirname_(srv));
    }
    return 0;
}

/* aofOpenIfNeededOnServerStart: a base made for an empty start, the last incremental file
 * opened (or made), the manifest written.  0, or -1 logged. */
static int open_on_start(frs_server *srv)
{
    frs_aof *a = srv->aof;
    if (mkdir(dirname_(srv), 0755) < 0 && errno != EEXIST) {
        frs_persist_log("Can't open or create append-only dir %s: %s", dirname_(srv),
                        strerror(errno));
        return -1;
    }
    if (!a->base.name && !a->nincr) {
        size_t len;
        int rdb;
        char *bytes = base_bytes(srv, &len, &rdb);
        char base[PATH_MAX], p[PATH_MAX];
        snprintf(base, sizeof(base), "%s.%lld.base.%s", filename_(srv), ++a->base_seq,
                 rdb ? "rdb" : "aof");
        path_in(srv, base, p, sizeof(p));
        FILE *f = fopen(p, "wb");
        int ok = f && bytes && fwrite(bytes, 1, len, f) == len && fflush(f) == 0 &&
                 fsync(fileno(f)) == 0;
        if (f) fclose(f);
        free(bytes);
        if (!ok) {
            frs_persist_log("Can't write the AOF base file %s: %s", base, strerror(errno));
            return -1;
        }
        a->base = (aof_info){xstrdup(base), a->base_seq, 'b'};
        a->base_size = (long long)len;
        frs_persist_log("Creating AOF base file %s on server start", base);
    }
    char name[PATH_MAX];
    int created = !a->nincr;
    if (created) {
        snprintf(name, sizeof(name), "%s.%lld.incr.aof", filename_(srv), ++a->incr_seq);
        list_push(&a->incr, &a->nincr, &a->capincr, (aof_info){xstrdup(name), a->incr_seq, 'i'});
    }
    const char *last = a->incr[a->nincr - 1].name;
    char p[PATH_MAX];
    path_in(srv, last, p, sizeof(p));
    a->fd = open(p, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644);
    if (a->fd < 0) {
        frs_persist_log("Can't open the append-only file %s: %s", last, strerror(errno));
        return -1;
    }
    if (manifest_write(srv) < 0) return -1;
    a->last_incr_size = a->fsync_offset = file_size(srv, last);
    if (a->base.name) a->base_size = file_size(srv, a->base.name);
    a->current_size = a->base_size;
    for (size_t i = 0; i < a->nincr; i++) a->current_size += file_size(srv, a->incr[i].name);
    frs_persist_log("%s AOF incr file %s on server start", created ? "Creating" : "Opening", last);
    return 0;
}

static frs_aof *aof_new(frs_server *srv)
{
    frs_aof *a = calloc(1, sizeof(*a));
    if (!a) frs_oom_abort(__func__);
    a->fd = -1;
    a->selected_db = -1;
    a->last_write_ok = a->last_bgrewrite_ok = 1;
    a->last_rewrite_secs = -1;
    a->last_fsync = frs_persist_now(srv);
    srv->aof = a;
    fr_server_set_propagate_hook(srv->fake, feed, srv);
    return a;
}

int frs_aof_load_at_start(frs_server *srv)
{
    frs_aof *a = aof_new(srv);
    a->state = AOF_ON;
    if (read_manifest_upgrading(srv) < 0 || load_files(srv) < 0) return -1;
    return open_on_start(srv);
}

/* ----- Commands, configuration, cron ------------------------------------------------------ */

/* BGREWRITEAOF */
void frs_cmd_bgrewriteaof(frs_conn *c, int argc, const char *const *argv, const size_t *argvlen)
{
    (void)argc, (void)argv, (void)argvlen;
    frs_server *srv = c->srv;
    if (!srv->aof) aof_new(srv); /* off: the rewrite still writes a base (Redis's too) */
    frs_aof *a = srv->aof;
    int child = frs_persist_child_active(srv);
    if (child == FRS_CHILD_AOF) {
        frs_reply_error(c, "ERR Background append only file rewriting already in progress");
    } else if (child || c->in_exec) {
        a->rewrite_scheduled = 1;
        frs_reply_status(c, "Background append only file rewriting scheduled");
    } else if (rewrite_start(srv) == 0) {
        frs_reply_status(c, "Background append only file rewriting started");
    } else {
        frs_reply_error(c, "ERR Can't execute an AOF background rewriting. Please check the "
                           "server logs for more information.");
    }
}

/* appendonly yes / no at run time (startAppendOnly / stopAppendOnly). */
static void set_state(frs_server *srv, int on)
{
    frs_aof *a = srv->aof;
    if (on && (!a || a->state == AOF_OFF)) {
        if (!a) a = aof_new(srv);
        a->state = AOF_WAIT_REWRITE;
        manifest_read(srv);
        if (frs_persist_child_active(srv)) {
            a->rewrite_scheduled = 1;
            frs_persist_log("AOF was enabled but there is already another background operation. An "
                            "AOF background was scheduled to start when possible.");
        } else if (rewrite_start(srv) < 0) {
            a->state = AOF_OFF;
        }
    } else if (!on && a && a->state != AOF_OFF) {
        flush(srv, 1);
        if (a->fd >= 0) {
            fsync(a->fd);
            close(a->fd);
        }
        a->fd = -1;
        a->selected_db = -1;
        a->state = AOF_OFF;
        a->rewrite_scheduled = 0;
        a->len = 0;
        if (frs_persist_child_active(srv) == FRS_CHILD_AOF) frs_persist_kill_child(srv);
    }
}

void frs_aof_config_changed(frs_server *srv)
{
    const char *v = frs_config_get(srv, "appendonly");
    if (srv->persist) set_state(srv, v && !strcmp(v, "yes"));
}

int frs_aof_shutdown(frs_server *srv)
{
    frs_aof *a = srv->aof;
    if (!a || a->state == AOF_OFF || a->fd < 0) return 0;
    flush(srv, 1);
    if (fsync(a->fd) < 0) {
        frs_persist_log("Fail to fsync the AOF file: %s", strerror(errno));
        return -1;
    }
    return a->len ? -1 : 0;
}

int frs_aof_wants_cron(frs_server *srv)
{
    return srv->aof && (srv->aof->state != AOF_OFF || srv->aof->rewrite_scheduled);
}

void frs_aof_cron(frs_server *srv)
{
    frs_aof *a = srv->aof;
    if (!a) return;
    if (a->state != AOF_OFF) flush(srv, 0); /* everysec: a new second fsyncs */
    if (a->rewrite_scheduled && !frs_persist_child_active(srv)) rewrite_start(srv);
    /* auto-aof-rewrite-percentage / -min-size */
    long long perc = strtoll(cfg(srv, "auto-aof-rewrite-percentage", "100"), NULL, 10);
    long long min = strtoll(cfg(srv, "auto-aof-rewrite-min-size", "67108864"), NULL, 10);
    if (a->state == AOF_ON && perc && a->current_size > min && !frs_persist_child_active(srv)) {
        long long base = a->base_size ? a->base_size : 1;
        if ((a->current_size * 100 / base) - 100 >= perc) {
            frs_persist_log("Starting automatic rewriting of AOF on %lld%% growth",
                            (a->current_size * 100 / base) - 100);
            rewrite_start(srv);
        }
    }
}

void frs_aof_debug_loadaof(frs_conn *c)
{
    frs_server *srv = c->srv;
    if (!srv->aof) aof_new(srv);
    frs_aof *a = srv->aof;
    if (a->state != AOF_OFF) flush(srv, 1);
    /* as Redis: the keyspace emptied, the manifest read again, the files loaded (a file
     * that does not load ends the process) */
    if (manifest_read(srv) < 0) exit(1);
    delete_history(srv);
    /* emptyData: an RDB file of nothing loaded over everything (keys and libraries) */
    fr_rdb_load(srv->fake, "REDIS0010\xff\x00\x00\x00\x00\x00\x00\x00\x00", 18, 0, NULL);
    if (load_files(srv) < 0) { /* as Redis: a file that does not load ends the process */
        frs_persist_log("Fatal error: the append only file could not be loaded by DEBUG LOADAOF");
        exit(1);
    }
    frs_persist_loaded(srv, 0, 0);
    frs_drain_fake_events(srv, c);
    frs_persist_log("Append Only File loaded by DEBUG LOADAOF");
    frs_reply_ok(c);
}

void frs_aof_info(frs_server *srv, frs_aof_figures *f)
{
    frs_aof *a = srv->aof;
    memset(f, 0, sizeof(*f));
    f->last_rewrite_secs = -1;
    f->current_rewrite_secs = -1;
    f->last_bgrewrite_ok = f->last_write_ok = 1;
    if (!a) return;
    f->enabled = a->state != AOF_OFF;
    f->rewrite_in_progress = frs_persist_child_active(srv) == FRS_CHILD_AOF;
    f->rewrite_scheduled = a->rewrite_scheduled;
    f->last_rewrite_secs = a->last_rewrite_secs;
    f->current_rewrite_secs = f->rewrite_in_progress ? frs_persist_child_seconds(srv) : -1;
    f->last_bgrewrite_ok = a->last_bgrewrite_ok;
    f->rewrites = a->rewrites;
    f->consecutive_failures = a->consecutive_failures;
    f->last_write_ok = a->last_write_ok;
    f->current_size = a->current_size + (long long)0;
    f->base_size = a->base_size;
    f->buffer_length = (long long)a->len;
    f->delayed_fsync = a->delayed_fsync;
}

void frs_aof_free(frs_server *srv)
{
    frs_aof *a = srv->aof;
    if (!a) return;
    if (a->fd >= 0) close(a->fd);
    manifest_clear(a);
    free(a->hist);
    free(a->incr);
    free(a->buf);
    free(a);
    srv->aof = NULL;
}
