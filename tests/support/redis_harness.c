/* redis_harness.c -- start a throwaway redis-server and speak raw RESP to it.
 *
 * See redis_harness.h for the contract.  Everything here is test code: out of memory
 * aborts, and every wait is bounded so that a broken server fails a test instead of
 * hanging it.
 */
#include "redis_harness.h"
#include "wsi_alloc.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#ifdef __linux__
#include <sys/prctl.h>
#endif

#define RH_TIMEOUT_MS 10000      /* the longest any single wait may take */
#define RH_STOP_GRACE_MS 5000    /* SIGTERM -> SIGKILL delay in rh_stop */
#define RH_MAX_LINE (1u << 20)   /* a RESP header/status line longer than this is garbage */
#define RH_CLUSTER_ATTEMPTS 5    /* port races: how many times to retry a cluster start */

/* ----- Growable byte buffer ------------------------------------------------------ */

/* Makes room for extra more bytes plus the NUL terminator. */
static void buf_reserve(rh_buf *b, size_t extra) {
    if (b->len + extra + 1 <= b->cap) return;
    size_t cap = b->cap ? b->cap : 64;
    while (cap < b->len + extra + 1) cap *= 2;
    b->data = wsi_xrealloc(b->data, cap);
    b->cap = cap;
}

void rh_buf_append(rh_buf *b, const void *p, size_t len) {
    buf_reserve(b, len);
    if (len) memcpy(b->data + b->len, p, len);
    b->len += len;
    b->data[b->len] = '\0';
}

void rh_buf_printf(rh_buf *b, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    va_list ap2;
    va_copy(ap2, ap);
    int n = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    if (n < 0) {
        va_end(ap2);
        return;
    }
    buf_reserve(b, (size_t)n);
    vsnprintf(b->data + b->len, (size_t)n + 1, fmt, ap2);
    va_end(ap2);
    b->len += (size_t)n;
}

void rh_buf_reset(rh_buf *b) {
    b->len = 0;
    if (b->data) b->data[0] = '\0';
}

void rh_buf_free(rh_buf *b) {
    free(b->data);
    b->data = NULL;
    b->len = b->cap = 0;
}

/* ----- Time ---------------------------------------------------------------------- */

/* Monotonic milliseconds, for deadlines. */
static int64_t mono_ms(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static void sleep_ms(int ms) {
    struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000L};
    while (nanosleep(&ts, &ts) != 0 && errno == EINTR) {
    }
}

/* ----- Live servers, stopped at exit ------------------------------------------------ */

static rh_server *live_servers;  /* every started and not yet stopped server */
static pid_t live_owner;         /* the process that started them: forks must not stop them */

static void stop_all_at_exit(void) {
    if (getpid() != live_owner) return;
    while (live_servers) rh_stop(live_servers);
}

static void live_add(rh_server *srv) {
    static int registered;
    if (!registered) {
        atexit(stop_all_at_exit);
        registered = 1;
    }
    live_owner = getpid();
    srv->next = live_servers;
    live_servers = srv;
}

static void live_remove(rh_server *srv) {
    for (rh_server **pp = &live_servers; *pp; pp = &(*pp)->next) {
        if (*pp == srv) {
            *pp = srv->next;
            return;
        }
    }
}

/* ----- Finding and running redis-server ----------------------------------------------- */

/* Finds the redis-server binary: $WSIM_REDIS_SERVER, else a search of PATH.  Writes the
 * path into out and returns 0, or prints why not and returns -1. */
static int find_redis_server(char *out, size_t cap) {
    const char *env = getenv("WSIM_REDIS_SERVER");
    if (env && *env) {
        if (access(env, X_OK) != 0) {
            fprintf(stderr, "redis_harness: WSIM_REDIS_SERVER=%s is not an executable: %s\n",
                    env, strerror(errno));
            return -1;
        }
        snprintf(out, cap, "%s", env);
        return 0;
    }
    const char *path = getenv("PATH");
    if (!path || !*path) path = "/usr/local/bin:/usr/bin:/bin";
    const char *p = path;
    while (*p) {
        const char *end = strchr(p, ':');
        size_t n = end ? (size_t)(end - p) : strlen(p);
        if (n == 0) {
            snprintf(out, cap, "./redis-server");
        } else {
            snprintf(out, cap, "%.*s/redis-server", (int)n, p);
        }
        struct stat st;
        if (stat(out, &st) == 0 && S_ISREG(st.st_mode) && access(out, X_OK) == 0) return 0;
        if (!end) break;
        p = end + 1;
    }
    fprintf(stderr, "redis_harness: redis-server not found: install the Debian package "
                    "redis-server (or set WSIM_REDIS_SERVER to its path)\n");
    return -1;
}

/* Picks a TCP port on 127.0.0.1 that is free right now (bind to port 0 and ask). The
 * socket is returned open in *fd so that two picks never return the same port; the
 * caller closes it just before starting the server. */
static int pick_free_port(int *fd) {
    int s = socket(AF_INET, SOCK_STREAM, 0);
    if (s < 0) return -1;
    struct sockaddr_in a;
    memset(&a, 0, sizeof a);
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    a.sin_port = 0;
    socklen_t alen = sizeof a;
    if (bind(s, (struct sockaddr *)&a, sizeof a) != 0 ||
        getsockname(s, (struct sockaddr *)&a, &alen) != 0) {
        close(s);
        return -1;
    }
    *fd = s;
    return ntohs(a.sin_port);
}

/* Prints the last max_lines lines of a file on stderr, each indented. */
static void print_file_tail(const char *path, int max_lines) {
    FILE *f = fopen(path, "rb");
    if (!f) return;
    rh_buf b = {0};
    char chunk[4096];
    size_t n;
    while ((n = fread(chunk, 1, sizeof chunk, f)) > 0) rh_buf_append(&b, chunk, n);
    fclose(f);
    if (b.len == 0) {
        rh_buf_free(&b);
        return;
    }
    size_t start = b.len;
    if (start > 0 && b.data[start - 1] == '\n') start--;
    int lines = 0;
    while (start > 0) {
        if (b.data[start - 1] == '\n' && ++lines >= max_lines) break;
        start--;
    }
    fprintf(stderr, "---- last lines of %s ----\n", path);
    const char *p = b.data + start;
    while (*p) {
        const char *nl = strchr(p, '\n');
        int len = nl ? (int)(nl - p) : (int)strlen(p);
        fprintf(stderr, "    %.*s\n", len, p);
        if (!nl) break;
        p = nl + 1;
    }
    rh_buf_free(&b);
}

void rh_print_log_tail(const rh_server *srv, int max_lines) {
    if (!srv) return;
    print_file_tail(srv->logfile, max_lines);
    char out[320];
    snprintf(out, sizeof out, "%s/redis.stdout", srv->dir);
    print_file_tail(out, max_lines);
}

/* Removes the server's directory and the files in it (it has no subdirectories). */
static void remove_dir(const char *dir) {
    DIR *d = opendir(dir);
    if (d) {
        struct dirent *e;
        char path[600];
        while ((e = readdir(d)) != NULL) {
            if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, "..")) continue;
            snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
            unlink(path);
        }
        closedir(d);
    }
    rmdir(dir);
}

/* Removes the directories that earlier test processes left under tmp when they died
 * without stopping their server (their server died with them, see spawn): owner.pid
 * names the test process, and it no longer exists. */
static void sweep_stale(const char *tmp) {
    DIR *d = opendir(tmp);
    if (!d) return;
    struct dirent *e;
    char path[600];
    while ((e = readdir(d)) != NULL) {
        if (strncmp(e->d_name, "wsim-redis-", 11) != 0) continue;
        snprintf(path, sizeof path, "%s/%s/owner.pid", tmp, e->d_name);
        FILE *f = fopen(path, "r");
        if (!f) continue;
        long pid = 0;
        int got = fscanf(f, "%ld", &pid);
        fclose(f);
        if (got == 1 && pid > 0 && kill((pid_t)pid, 0) != 0 && errno == ESRCH) {
            snprintf(path, sizeof path, "%s/%s", tmp, e->d_name);
            remove_dir(path);
        }
    }
    closedir(d);
}

/* Forks and execs redis-server with the arguments for srv (port and cluster_port are
 * used only in cluster mode).  Returns the child's pid, or -1. */
static pid_t spawn(const char *exe, rh_server *srv, int cluster_port,
                   const char *const *extra) {
    char port[16], cport[16], pidfile[320], nodes[320], out[320];
    snprintf(port, sizeof port, "%d", srv->port);
    snprintf(cport, sizeof cport, "%d", cluster_port);
    snprintf(pidfile, sizeof pidfile, "%s/redis.pid", srv->dir);
    snprintf(nodes, sizeof nodes, "%s/nodes.conf", srv->dir);
    snprintf(out, sizeof out, "%s/redis.stdout", srv->dir);

    const char *argv[48];
    int n = 0;
    argv[n++] = exe;
    argv[n++] = "--port";
    argv[n++] = port;
    argv[n++] = "--unixsocket";
    argv[n++] = srv->socket;
    argv[n++] = "--unixsocketperm";
    argv[n++] = "700";
    argv[n++] = "--save";
    argv[n++] = "";
    argv[n++] = "--appendonly";
    argv[n++] = "no";
    argv[n++] = "--dir";
    argv[n++] = srv->dir;
    argv[n++] = "--logfile";
    argv[n++] = srv->logfile;
    argv[n++] = "--pidfile";
    argv[n++] = pidfile;
    argv[n++] = "--daemonize";
    argv[n++] = "no";
    argv[n++] = "--enable-debug-command";
    argv[n++] = "yes";
    if (srv->cluster) {
        argv[n++] = "--bind";
        argv[n++] = "127.0.0.1";
        argv[n++] = "--cluster-enabled";
        argv[n++] = "yes";
        argv[n++] = "--cluster-config-file";
        argv[n++] = nodes;
        argv[n++] = "--cluster-port";
        argv[n++] = cport;
    }
    for (int i = 0; extra && extra[i] && n < 46; i++) argv[n++] = extra[i];
    argv[n] = NULL;

    pid_t parent = getpid();
    fflush(NULL);
    pid_t pid = fork();
    if (pid < 0) {
        fprintf(stderr, "redis_harness: fork: %s\n", strerror(errno));
        return -1;
    }
    if (pid == 0) {
#ifdef __linux__
        /* Take the server down with the test process, however that one dies. */
        prctl(PR_SET_PDEATHSIG, SIGTERM);
        if (getppid() != parent) _exit(126);
#else
        (void)parent;
#endif
        int in = open("/dev/null", O_RDONLY);
        int o = open(out, O_WRONLY | O_CREAT | O_APPEND, 0600);
        if (in >= 0) dup2(in, 0);
        if (o >= 0) {
            dup2(o, 1);
            dup2(o, 2);
        }
        execv(exe, (char *const *)argv);
        dprintf(2, "exec %s: %s\n", exe, strerror(errno));
        _exit(127);
    }
    return pid;
}

/* Describes how the child ended, after waitpid. */
static void describe_exit(int status, char *out, size_t cap) {
    if (WIFEXITED(status)) {
        snprintf(out, cap, "exited with status %d%s", WEXITSTATUS(status),
                 WEXITSTATUS(status) == 127 ? " (could not execute it)" : "");
    } else if (WIFSIGNALED(status)) {
        snprintf(out, cap, "was killed by signal %d", WTERMSIG(status));
    } else {
        snprintf(out, cap, "ended (status 0x%x)", status);
    }
}

/* Connects to the unix socket without printing anything; -1 if it is not there yet. */
static int try_connect_fd(const char *path) {
    int fd = socket(AF_UNIX, SOCK_STREAM, 0);
    if (fd < 0) return -1;
    struct sockaddr_un a;
    memset(&a, 0, sizeof a);
    a.sun_family = AF_UNIX;
    snprintf(a.sun_path, sizeof a.sun_path, "%s", path);
    if (connect(fd, (struct sockaddr *)&a, sizeof a) != 0) {
        close(fd);
        return -1;
    }
    fcntl(fd, F_SETFD, FD_CLOEXEC);
    /* Non-blocking, so that every wait goes through poll() with a deadline. */
    fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK);
    return fd;
}

struct rh_conn {
    int fd;          /* the unix socket */
    int timeout_ms;  /* the longest one send or one reply may take */
    char *rbuf;      /* bytes read and not yet returned, from rpos to rlen */
    size_t rpos;     /* start of the unconsumed bytes in rbuf */
    size_t rlen;     /* end of the valid bytes in rbuf */
    size_t rcap;     /* bytes allocated for rbuf */
    char err[256];   /* the last error, "" if none */
};

static rh_conn *conn_from_fd(int fd) {
    rh_conn *c = wsi_xcalloc(1, sizeof *c);
    c->fd = fd;
    c->timeout_ms = RH_TIMEOUT_MS;
    return c;
}

/* Waits until the server answers PING with +PONG or the deadline passes.  Returns 0, or
 * -1 with a reason in why (the child exited, or time ran out). */
static int wait_ready(rh_server *srv, int64_t deadline, char *why, size_t cap) {
    rh_buf raw = {0};
    for (;;) {
        int status;
        pid_t w = waitpid(srv->pid, &status, WNOHANG);
        if (w == srv->pid) {
            char how[96];
            describe_exit(status, how, sizeof how);
            snprintf(why, cap, "redis-server %s during startup", how);
            srv->pid = 0;
            rh_buf_free(&raw);
            return -1;
        }
        int fd = try_connect_fd(srv->socket);
        if (fd >= 0) {
            rh_conn *c = conn_from_fd(fd);
            c->timeout_ms = 2000;
            int ok = rh_call(c, &raw, "PING", NULL) == 0 && raw.len == 7 &&
                     memcmp(raw.data, "+PONG\r\n", 7) == 0;
            rh_close(c);
            if (ok) {
                rh_buf_free(&raw);
                return 0;
            }
        }
        if (mono_ms() > deadline) {
            snprintf(why, cap, "redis-server did not answer PING on %s within %d s",
                     srv->socket, RH_TIMEOUT_MS / 1000);
            rh_buf_free(&raw);
            return -1;
        }
        sleep_ms(20);
    }
}

/* Gives a fresh cluster node every slot and waits for cluster_state:ok.  Returns 0, or
 * -1 with the reason in why. */
static int setup_cluster(rh_server *srv, int64_t deadline, char *why, size_t cap) {
    int fd = try_connect_fd(srv->socket);
    if (fd < 0) {
        snprintf(why, cap, "cannot connect to %s: %s", srv->socket, strerror(errno));
        return -1;
    }
    rh_conn *c = conn_from_fd(fd);
    rh_buf raw = {0};
    int rc = -1;
    if (rh_call(c, &raw, "CLUSTER", "ADDSLOTSRANGE", "0", "16383", NULL) != 0) {
        snprintf(why, cap, "CLUSTER ADDSLOTSRANGE: %s", rh_conn_error(c));
        goto done;
    }
    if (raw.len != 5 || memcmp(raw.data, "+OK\r\n", 5) != 0) {
        snprintf(why, cap, "CLUSTER ADDSLOTSRANGE 0 16383 answered %.*s", (int)raw.len,
                 raw.data);
        goto done;
    }
    for (;;) {
        if (rh_call(c, &raw, "CLUSTER", "INFO", NULL) != 0) {
            snprintf(why, cap, "CLUSTER INFO: %s", rh_conn_error(c));
            goto done;
        }
        if (strstr(raw.data, "cluster_state:ok")) {
            rc = 0;
            goto done;
        }
        if (mono_ms() > deadline) {
            snprintf(why, cap, "CLUSTER INFO did not say cluster_state:ok within %d s",
                     RH_TIMEOUT_MS / 1000);
            goto done;
        }
        sleep_ms(50);
    }
done:
    rh_buf_free(&raw);
    rh_close(c);
    return rc;
}

/* Kills and reaps the child (if still there) and removes its directory, after a failed
 * start. */
static void discard(rh_server *srv) {
    if (srv->pid > 0) {
        kill(srv->pid, SIGKILL);
        waitpid(srv->pid, NULL, 0);
        srv->pid = 0;
    }
    if (!getenv("WSIM_REDIS_KEEP")) remove_dir(srv->dir);
}

rh_server *rh_start(const rh_options *opt) {
    rh_options defaults = {0};
    if (!opt) opt = &defaults;
    char exe[1024];
    if (find_redis_server(exe, sizeof exe) != 0) return NULL;

    int attempts = opt->cluster ? RH_CLUSTER_ATTEMPTS : 1;
    for (int attempt = 1; attempt <= attempts; attempt++) {
        rh_server *srv = wsi_xcalloc(1, sizeof *srv);
        srv->cluster = opt->cluster;

        const char *tmp = getenv("TMPDIR");
        if (!tmp || !*tmp) tmp = "/tmp";
        if (attempt == 1) sweep_stale(tmp);
        snprintf(srv->dir, sizeof srv->dir, "%s/wsim-redis-XXXXXX", tmp);
        if (!mkdtemp(srv->dir)) {
            fprintf(stderr, "redis_harness: mkdtemp %s: %s\n", srv->dir, strerror(errno));
            free(srv);
            return NULL;
        }
        snprintf(srv->socket, sizeof srv->socket, "%s/redis.sock", srv->dir);
        char owner[320];
        snprintf(owner, sizeof owner, "%s/owner.pid", srv->dir);
        FILE *of = fopen(owner, "w");
        if (of) {
            fprintf(of, "%ld\n", (long)getpid());
            fclose(of);
        }
        snprintf(srv->logfile, sizeof srv->logfile, "%s/redis.log", srv->dir);
        if (strlen(srv->socket) >= sizeof(((struct sockaddr_un *)0)->sun_path)) {
            fprintf(stderr, "redis_harness: socket path %s is too long for a unix socket; "
                            "set TMPDIR to a shorter directory\n", srv->socket);
            remove_dir(srv->dir);
            free(srv);
            return NULL;
        }

        int cport = 0, pfd = -1, cfd = -1;
        if (opt->cluster) {
            /* The cluster bus needs TCP: a client port and a bus port, both free now. */
            srv->port = pick_free_port(&pfd);
            cport = pick_free_port(&cfd);
            if (pfd >= 0) close(pfd);
            if (cfd >= 0) close(cfd);
            if (srv->port <= 0 || cport <= 0) {
                fprintf(stderr, "redis_harness: cannot find a free TCP port on 127.0.0.1\n");
                remove_dir(srv->dir);
                free(srv);
                return NULL;
            }
        }

        int64_t deadline = mono_ms() + RH_TIMEOUT_MS;
        if (opt->prepare) opt->prepare(srv->dir, opt->prepare_arg);
        srv->pid = spawn(exe, srv, cport, opt->extra_args);
        if (srv->pid < 0) {
            srv->pid = 0;
            remove_dir(srv->dir);
            free(srv);
            return NULL;
        }
        live_add(srv);

        char why[512];
        int rc = wait_ready(srv, deadline, why, sizeof why);
        if (rc == 0 && opt->cluster) {
            rc = setup_cluster(srv, mono_ms() + RH_TIMEOUT_MS, why, sizeof why);
        }
        if (rc == 0) {
            if (!opt->quiet) {
                fprintf(stderr, "redis_harness: started %s (pid %d%s) on %s\n", exe,
                        (int)srv->pid, srv->cluster ? ", one-node cluster" : "",
                        srv->socket);
            }
            return srv;
        }
        live_remove(srv);
        /* A cluster start can lose a race for its ports: try again with new ones. */
        if (attempt < attempts && srv->pid == 0) {
            discard(srv);
            free(srv);
            continue;
        }
        fprintf(stderr, "redis_harness: cannot start %s: %s\n", exe, why);
        rh_print_log_tail(srv, 20);
        discard(srv);
        free(srv);
        return NULL;
    }
    return NULL;
}

void rh_stop(rh_server *srv) {
    if (!srv) return;
    live_remove(srv);
    if (srv->pid > 0) {
        kill(srv->pid, SIGTERM);
        int64_t deadline = mono_ms() + RH_STOP_GRACE_MS;
        for (;;) {
            pid_t w = waitpid(srv->pid, NULL, WNOHANG);
            if (w == srv->pid || (w < 0 && errno != EINTR)) break;
            if (mono_ms() > deadline) {
                fprintf(stderr, "redis_harness: redis-server pid %d ignored SIGTERM for %d s; "
                                "killing it\n", (int)srv->pid, RH_STOP_GRACE_MS / 1000);
                kill(srv->pid, SIGKILL);
                waitpid(srv->pid, NULL, 0);
                break;
            }
            sleep_ms(5);
        }
        srv->pid = 0;
    }
    if (getenv("WSIM_REDIS_KEEP")) {
        fprintf(stderr, "redis_harness: keeping %s (WSIM_REDIS_KEEP is set)\n", srv->dir);
    } else {
        remove_dir(srv->dir);
    }
    free(srv);
}

/* ----- Connections ------------------------------------------------------------------ */

rh_conn *rh_connect(rh_server *srv) {
    int fd = try_connect_fd(srv->socket);
    if (fd < 0) {
        fprintf(stderr, "redis_harness: cannot connect to %s: %s\n", srv->socket,
                strerror(errno));
        return NULL;
    }
    return conn_from_fd(fd);
}

void rh_close(rh_conn *c) {
    if (!c) return;
    if (c->fd >= 0) close(c->fd);
    free(c->rbuf);
    free(c);
}

const char *rh_conn_error(const rh_conn *c) {
    return c->err;
}

static int conn_fail(rh_conn *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int conn_fail(rh_conn *c, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(c->err, sizeof c->err, fmt, ap);
    va_end(ap);
    return -1;
}

/* Waits until fd is ready for events or the deadline passes: 0 ready, -1 timeout/error. */
static int wait_fd(rh_conn *c, short events, int64_t deadline) {
    for (;;) {
        int64_t left = deadline - mono_ms();
        if (left < 0) left = 0;
        struct pollfd p = {c->fd, events, 0};
        int n = poll(&p, 1, (int)left);
        if (n > 0) return 0;
        if (n == 0) return conn_fail(c, "timed out after %d ms", c->timeout_ms);
        if (errno != EINTR) return conn_fail(c, "poll: %s", strerror(errno));
    }
}

int rh_send(rh_conn *c, int argc, char **argv, size_t *lens) {
    rh_buf out = {0};
    rh_buf_printf(&out, "*%d\r\n", argc);
    for (int i = 0; i < argc; i++) {
        size_t len = lens ? lens[i] : strlen(argv[i]);
        rh_buf_printf(&out, "$%zu\r\n", len);
        rh_buf_append(&out, argv[i], len);
        rh_buf_append(&out, "\r\n", 2);
    }
    int64_t deadline = mono_ms() + c->timeout_ms;
    size_t off = 0;
    int rc = 0;
    while (off < out.len) {
        ssize_t n = send(c->fd, out.data + off, out.len - off, MSG_NOSIGNAL);
        if (n > 0) {
            off += (size_t)n;
        } else if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
            if ((rc = wait_fd(c, POLLOUT, deadline)) != 0) break;
        } else if (n < 0 && errno == EINTR) {
            continue;
        } else {
            rc = conn_fail(c, "send: %s", strerror(errno));
            break;
        }
    }
    rh_buf_free(&out);
    return rc;
}

/* Reads more bytes into rbuf (compacting it first).  0, or -1 on EOF/error/timeout. */
static int conn_fill(rh_conn *c, int64_t deadline) {
    if (c->rpos > 0 && c->rpos == c->rlen) c->rpos = c->rlen = 0;
    if (c->rcap - c->rlen < 16384) {
        if (c->rpos > 0) {
            memmove(c->rbuf, c->rbuf + c->rpos, c->rlen - c->rpos);
            c->rlen -= c->rpos;
            c->rpos = 0;
        }
        if (c->rcap - c->rlen < 16384) {
            size_t cap = c->rcap ? c->rcap * 2 : 65536;
            char *p = wsi_xrealloc(c->rbuf, cap);
            c->rbuf = p;
            c->rcap = cap;
        }
    }
    for (;;) {
        if (wait_fd(c, POLLIN, deadline) != 0) return -1;
        ssize_t n = recv(c->fd, c->rbuf + c->rlen, c->rcap - c->rlen, 0);
        if (n > 0) {
            c->rlen += (size_t)n;
            return 0;
        }
        if (n == 0) return conn_fail(c, "the server closed the connection");
        if (errno != EINTR && errno != EAGAIN) return conn_fail(c, "recv: %s", strerror(errno));
    }
}

/* Makes sure at least n unconsumed bytes are buffered. */
static int conn_need(rh_conn *c, size_t n, int64_t deadline) {
    while (c->rlen - c->rpos < n) {
        if (conn_fill(c, deadline) != 0) return -1;
    }
    return 0;
}

/* Finds the "\r\n" ending the line that starts at offset off (relative to rpos); stores
 * the offset of its '\r' in *cr. */
static int conn_line(rh_conn *c, size_t off, size_t *cr, int64_t deadline) {
    size_t scan = off;
    for (;;) {
        size_t avail = c->rlen - c->rpos;
        while (scan < avail) {
            if (c->rbuf[c->rpos + scan] == '\n') {
                if (scan == off || c->rbuf[c->rpos + scan - 1] != '\r') {
                    return conn_fail(c, "protocol error: bare \\n in a RESP line");
                }
                *cr = scan - 1;
                return 0;
            }
            scan++;
        }
        if (scan - off > RH_MAX_LINE) return conn_fail(c, "protocol error: line too long");
        if (conn_fill(c, deadline) != 0) return -1;
    }
}

/* Parses the signed decimal between p and p+len; 0 on success. */
static int parse_ll(const char *p, size_t len, long long *out) {
    if (len == 0 || len > 20) return -1;
    size_t i = 0;
    int neg = 0;
    if (p[0] == '-') {
        neg = 1;
        i = 1;
        if (len == 1) return -1;
    }
    unsigned long long v = 0;
    for (; i < len; i++) {
        if (p[i] < '0' || p[i] > '9') return -1;
        unsigned long long d = (unsigned long long)(p[i] - '0');
        if (v > (ULLONG_MAX - d) / 10) return -1;
        v = v * 10 + d;
    }
    if (neg) {
        if (v > (unsigned long long)INT64_MAX + 1) return -1;
        *out = v == (unsigned long long)INT64_MAX + 1 ? INT64_MIN : -(long long)v;
    } else {
        if (v > (unsigned long long)INT64_MAX) return -1;
        *out = (long long)v;
    }
    return 0;
}

int rh_read_reply(rh_conn *c, rh_buf *raw) {
    int64_t deadline = mono_ms() + c->timeout_ms;
    size_t cur = 0;            /* bytes of this reply parsed so far, from rpos */
    unsigned long long pending = 1; /* replies still to read, counting nested elements */
    c->err[0] = '\0';
    while (pending > 0) {
        size_t cr = 0;
        if (conn_line(c, cur, &cr, deadline) != 0) return -1;
        const char *line = c->rbuf + c->rpos + cur;
        size_t hlen = cr - cur - 1; /* bytes after the type byte, before \r\n */
        char type = line[0];
        long long n = 0;
        switch (type) {
        case '+':
        case '-':
            cur = cr + 2;
            pending--;
            break;
        case ':':
            if (parse_ll(line + 1, hlen, &n) != 0) {
                return conn_fail(c, "protocol error: bad integer reply");
            }
            cur = cr + 2;
            pending--;
            break;
        case '$':
            if (parse_ll(line + 1, hlen, &n) != 0 || n < -1) {
                return conn_fail(c, "protocol error: bad bulk length");
            }
            cur = cr + 2;
            if (n >= 0) {
                if (conn_need(c, cur + (size_t)n + 2, deadline) != 0) return -1;
                const char *end = c->rbuf + c->rpos + cur + n;
                if (end[0] != '\r' || end[1] != '\n') {
                    return conn_fail(c, "protocol error: bulk string not followed by \\r\\n");
                }
                cur += (size_t)n + 2;
            }
            pending--;
            break;
        case '*':
            if (parse_ll(line + 1, hlen, &n) != 0 || n < -1) {
                return conn_fail(c, "protocol error: bad array length");
            }
            cur = cr + 2;
            pending--;
            if (n > 0) pending += (unsigned long long)n;
            break;
        default:
            return conn_fail(c, "protocol error: unexpected type byte 0x%02x",
                             (unsigned char)type);
        }
    }
    rh_buf_reset(raw);
    rh_buf_append(raw, c->rbuf + c->rpos, cur);
    c->rpos += cur;
    return 0;
}

int rh_call(rh_conn *c, rh_buf *raw, const char *arg0, ...) {
    char *argv[64];
    int argc = 0;
    va_list ap;
    va_start(ap, arg0);
    for (const char *a = arg0; a && argc < 64; a = va_arg(ap, const char *)) {
        argv[argc++] = (char *)a;
    }
    va_end(ap);
    if (rh_send(c, argc, argv, NULL) != 0) return -1;
    return rh_read_reply(c, raw);
}
