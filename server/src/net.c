/* net.c -- the event loop: listening sockets, connections, reads, writes, limits.
 *
 * One thread and one epoll set, as redis-server's own loop: level-triggered readiness,
 * non-blocking sockets, at most RR_IOBUF_LEN bytes read per readable event (so the request
 * parser sees the stream in the pieces Redis sees it, and a client flooding the server
 * cannot starve the others), every complete request in the buffer run at once, and the
 * replies written before the loop sleeps again (Redis's beforeSleep), with EPOLLOUT armed
 * only for sockets that could not take everything.  Unlike Redis, after a turn that had work
 * the loop polls for a few microseconds before it sleeps (busy_poll).  Why epoll and no
 * library, and why the poll: docs/server.md, "Design".
 *
 * Connections are freed at two points only: in their own event handler (end of file, a
 * socket error) and before the loop sleeps (CLIENT KILL, output limits, QUIT once the reply
 * is out).  A command can therefore touch any other connection without freeing it. */
#define _GNU_SOURCE /* accept4 */
#include <arpa/inet.h>
#include <errno.h>
#include <limits.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/resource.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "frs.h"

#define MAX_EVENTS 1024         /* epoll events handled per wake */
#define MAX_ACCEPTS 1000        /* Redis's MAX_ACCEPTS_PER_CALL */
#define WRITE_CHUNK (1 << 20)   /* bytes per write() call */

/* epoll's data for a listening socket: tagged so events can be told apart. */
typedef struct listener {
    int fd;       /* the socket */
    int is_unix;  /* the unix socket */
} listener;

static listener listeners[FRS_MAX_LISTENERS + 1];
static int sig_tag;             /* its address tags the signal fd's events */

/* ----- fr_client -> frs_conn -------------------------------------------------------- */

/* Open addressing with linear probing, deletion by backward shift. */
struct frs_connmap {
    size_t cap;                 /* slots, a power of two */
    size_t n;                   /* entries */
    const fr_client **keys;     /* NULL for a free slot */
    frs_conn **vals;            /* the connection of keys[i] */
};

static size_t ptr_hash(const void *p)
{
    uint64_t x = (uint64_t)(uintptr_t)p;
    x ^= x >> 33;
    x *= 0xff51afd7ed558ccdull;
    x ^= x >> 33;
    return (size_t)x;
}

static void map_put(struct frs_connmap *m, const fr_client *k, frs_conn *v);

static void map_grow(struct frs_connmap *m)
{
    struct frs_connmap old = *m;
    m->cap = old.cap ? old.cap * 2 : 1024;
    m->n = 0;
    m->keys = calloc(m->cap, sizeof(*m->keys));
    m->vals = calloc(m->cap, sizeof(*m->vals));
    if (!m->keys || !m->vals) frs_oom_abort(__func__);
    for (size_t i = 0; i < old.cap; i++)
        if (old.keys[i]) map_put(m, old.keys[i], old.vals[i]);
    free(old.keys);
    free(old.vals);
}

static void map_put(struct frs_connmap *m, const fr_client *k, frs_conn *v)
{
    if ((m->n + 1) * 2 > m->cap) map_grow(m);
    size_t i = ptr_hash(k) & (m->cap - 1);
    while (m->keys[i] && m->keys[i] != k) i = (i + 1) & (m->cap - 1);
    if (!m->keys[i]) m->n++;
    m->keys[i] = k;
    m->vals[i] = v;
}

static frs_conn *map_get(const struct frs_connmap *m, const fr_client *k)
{
    if (!m->cap) return NULL;
    for (size_t i = ptr_hash(k) & (m->cap - 1); m->keys[i]; i = (i + 1) & (m->cap - 1))
        if (m->keys[i] == k) return m->vals[i];
    return NULL;
}

static void map_del(struct frs_connmap *m, const fr_client *k)
{
    if (!m->cap) return;
    size_t i = ptr_hash(k) & (m->cap - 1);
    while (m->keys[i] && m->keys[i] != k) i = (i + 1) & (m->cap - 1);
    if (!m->keys[i]) return;
    m->keys[i] = NULL;
    m->n--;
    /* shift back the entries that probed past the hole */
    for (size_t j = (i + 1) & (m->cap - 1); m->keys[j]; j = (j + 1) & (m->cap - 1)) {
        size_t home = ptr_hash(m->keys[j]) & (m->cap - 1);
        int between = i <= j ? (home > i && home <= j) : (home > i || home <= j);
        if (between) continue;
        m->keys[i] = m->keys[j];
        m->vals[i] = m->vals[j];
        m->keys[j] = NULL;
        i = j;
    }
}

frs_conn *frs_conn_of(frs_server *srv, const fr_client *fc) { return map_get(srv->bymap, fc); }

void frs_conn_rebind(frs_conn *c, const fr_client *old)
{
    map_del(c->srv->bymap, old);
    map_put(c->srv->bymap, c->fc, c);
}

/* ----- Small helpers ---------------------------------------------------------------- */

uint64_t frs_mono_us(void *arg)
{
    (void)arg;
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000 + (uint64_t)ts.tv_nsec / 1000;
}

int64_t frs_mono_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static int auth_needed(const frs_server *srv, const frs_conn *c)
{
    return fr_server_auth_required(srv->fake) && !c->authed;
}

void frs_apply_limits(frs_server *srv)
{
    for (frs_conn *c = srv->conns; c; c = c->next) {
        c->in.max_bulk_len = srv->max_bulk_len;
        c->in.auth_required = auth_needed(srv, c);
    }
}

static void epoll_set(frs_server *srv, frs_conn *c, int want_write)
{
    struct epoll_event ev = {.events = EPOLLIN | (want_write ? EPOLLOUT : 0), .data.ptr = c};
    if (c->close_after_reply) ev.events &= ~(uint32_t)EPOLLIN; /* read nothing more */
    epoll_ctl(srv->epfd, EPOLL_CTL_MOD, c->fd, &ev);
    c->want_write = want_write;
}

/* ----- Connection lifecycle ------------------------------------------------------------ */

static void unlink_lists(frs_server *srv, frs_conn *c)
{
    if (c->in_pending) {
        for (frs_conn **pp = &srv->pending; *pp; pp = &(*pp)->pend_next)
            if (*pp == c) {
                *pp = c->pend_next;
                break;
            }
        c->in_pending = 0;
    }
    if (c->in_resume) {
        frs_conn *prev = NULL;
        for (frs_conn *p = srv->resume_head; p; prev = p, p = p->resume_next) {
            if (p != c) continue;
            if (prev) prev->resume_next = p->resume_next;
            else srv->resume_head = p->resume_next;
            if (srv->resume_tail == c) srv->resume_tail = prev;
            break;
        }
        c->in_resume = 0;
    }
}

/* Closes and frees c; why says it in the recording ("peer", "killed", "quit", ...). */
static void free_conn(frs_conn *c, const char *why)
{
    frs_server *srv = c->srv;
    frs_hold_conn_closed(c);
    frs_record_conn_close(c, srv->stopping ? "shutdown" : why);
    unlink_lists(srv, c);
    if (c->soft_since_ms) srv->nsoft--;
    frs_pause_forget(c);
    epoll_ctl(srv->epfd, EPOLL_CTL_DEL, c->fd, NULL);
    close(c->fd);
    if (c->prev) c->prev->next = c->next;
    else srv->conns = c->next;
    if (c->next) c->next->prev = c->prev;
    srv->nconns--;
    map_del(srv->bymap, c->fc);
    frs_admin_conn_closed(c); /* MONITOR and tracking forget it */
    fr_client_free(c->fc); /* MULTI, WATCH, subscriptions and a blocked wait go with it */
    rr_free(&c->in);
    frs_obuf_free(&c->out);
    for (size_t i = 0; i < c->queue_len; i++) {
        for (int j = 0; j < c->queue[i].argc; j++) free(c->queue[i].argv[j]);
        free(c->queue[i].argv);
        free(c->queue[i].argvlen);
    }
    free(c->queue);
    free(c->name);
    free(c);
}

void frs_conn_want_flush(frs_conn *c)
{
    frs_server *srv = c->srv;
    if (c->out.failed) { /* a reply it was owed is lost: close it, the others go on */
        if (!c->close_asap) {
            fprintf(stderr, "fakeredis-server: client id=%llu addr=%s closed: out of memory "
                            "for its output buffer\n", (unsigned long long)c->id, c->addr);
            frs_conn_kill(c);
        }
        return;
    }
    if (!c->in_pending && frs_obuf_pending(&c->out)) {
        c->in_pending = 1;
        c->pend_next = srv->pending;
        srv->pending = c;
    }
    /* Output limits, checked as Redis checks them: whenever replies were added. */
    int pubsub = 0;
    pubsub = fr_client_subscriptions(c->fc) != 0;
    const frs_outlimit *lim = pubsub ? &srv->limit_pubsub : &srv->limit_normal;
    unsigned long long used = frs_obuf_pending(&c->out);
    int over = 0;
    if (lim->hard && used >= lim->hard) over = 1;
    if (lim->soft && used >= lim->soft) {
        int64_t now = frs_mono_ms();
        if (!c->soft_since_ms) {
            c->soft_since_ms = now;
            srv->nsoft++;
        } else if (now - c->soft_since_ms >= lim->soft_secs * 1000) {
            over = 1;
        }
    } else if (c->soft_since_ms) {
        c->soft_since_ms = 0;
        srv->nsoft--;
    }
    if (over && !c->close_asap) {
        fprintf(stderr, "fakeredis-server: client id=%llu addr=%s closed for overcoming of "
                        "output buffer limits (%llu bytes pending)\n",
                (unsigned long long)c->id, c->addr, used);
        srv->stats.outlimit_kills++;
        frs_conn_kill(c);
    }
}

void frs_conn_close_after_reply(frs_conn *c)
{
    if (c->close_after_reply) return;
    c->close_after_reply = 1;
    epoll_set(c->srv, c, c->want_write);
    frs_conn_want_flush(c);
    if (!c->in_pending) { /* nothing to write: close it before sleeping */
        c->in_pending = 1;
        c->pend_next = c->srv->pending;
        c->srv->pending = c;
    }
}

void frs_conn_kill(frs_conn *c)
{
    if (c->close_asap) return;
    c->close_asap = 1;
    if (!c->in_pending) {
        c->in_pending = 1;
        c->pend_next = c->srv->pending;
        c->srv->pending = c;
    }
}

void frs_conn_resume(frs_conn *c)
{
    frs_server *srv = c->srv;
    if (c->in_resume) return;
    c->in_resume = 1;
    c->resume_next = NULL;
    if (srv->resume_tail) srv->resume_tail->resume_next = c;
    else srv->resume_head = c;
    srv->resume_tail = c;
}

/* Runs every complete request in c's buffer, until it blocks or must close. */
static void process_input(frs_conn *c)
{
    frs_server *srv = c->srv;
    if (srv->hold) frs_hold_replay(c); /* a held command that was let go runs first */
    while (!c->blocked && !c->held && !c->paused && !c->close_after_reply && !c->close_asap &&
           !srv->stop) {
        rr_status st = rr_next(&c->in);
        if (st == RR_COMMAND) {
            if (frs_pause_hold(c, rr_argc(&c->in), rr_argv(&c->in), rr_argvlen(&c->in))) {
                rr_unread(&c->in); /* read again when the pause ends */
                break;
            }
            if (srv->hold && frs_hold_before_command(c, rr_argc(&c->in), rr_argv(&c->in),
                                                     rr_argvlen(&c->in)))
                break; /* held before it runs: the hold keeps a copy */
            frs_dispatch(c, rr_argc(&c->in), rr_argv(&c->in), rr_argvlen(&c->in));
            if (frs_obuf_pending(&c->out) || c->out.failed) frs_conn_want_flush(c);
        } else if (st == RR_ERROR) {
            /* Redis answers the protocol error, then closes once it is written. */
            frs_reply_error(c, rr_error(&c->in));
            frs_conn_close_after_reply(c);
            break;
        } else {
            break;
        }
    }
    if (frs_obuf_pending(&c->out)) frs_conn_want_flush(c);
}

/* Reads once.  Returns -1 when c was freed. */
static int conn_read(frs_conn *c)
{
    frs_server *srv = c->srv;
    if (c->close_after_reply) return 0;
    frs_qb_catch_up(c); /* the cron's ticks before this read */
    size_t before = rr_pending(&c->in);
    size_t want = rr_read_size(&c->in);
    char *w = rr_write_ptr(&c->in, want);
    if (!w) { /* its query buffer cannot grow: this connection goes, the others stay */
        fprintf(stderr, "fakeredis-server: client id=%llu addr=%s closed: out of memory for "
                        "its query buffer\n", (unsigned long long)c->id, c->addr);
        free_conn(c, "oom");
        return -1;
    }
    ssize_t n = read(c->fd, w, want);
    if (n == 0) {
        free_conn(c, "peer");
        return -1;
    }
    if (n < 0) {
        if (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR) return 0;
        free_conn(c, "error");
        return -1;
    }
    frs_qb_read(c, before, (size_t)n); /* the state before rr_commit: a big argument's */
    rr_commit(&c->in, (size_t)n);
    c->batch = ++srv->next_batch; /* the commands this read completes are one batch */
    srv->active_ms = srv->turn_ms;
    srv->stats.net_in += (unsigned long long)n;
    if (srv->querybuf_limit && rr_pending(&c->in) > srv->querybuf_limit) {
        fprintf(stderr, "fakeredis-server: closing client id=%llu addr=%s that reached max "
                        "query buffer length\n", (unsigned long long)c->id, c->addr);
        free_conn(c, "limit");
        return -1;
    }
    process_input(c);
    frs_qb_processed(c);
    return 0;
}

/* Writes what c has pending.  Returns -1 when c was freed. */
static int conn_write(frs_conn *c)
{
    frs_server *srv = c->srv;
    if (srv->rec) frs_record_pushes(c); /* nothing reaches the socket unrecorded */
    while (frs_obuf_pending(&c->out)) {
        size_t left = frs_obuf_pending(&c->out);
        if (c->out.stopped) { /* a held reply: only what comes before it */
            uint64_t upto = c->out.stop - c->out.dropped;
            if (upto <= c->out.sent) break;
            if (upto - c->out.sent < left) left = (size_t)(upto - c->out.sent);
        }
        ssize_t n = write(c->fd, c->out.p + c->out.sent, left < WRITE_CHUNK ? left : WRITE_CHUNK);
        if (n > 0) {
            c->out.sent += (size_t)n;
            srv->stats.net_out += (unsigned long long)n;
            frs_qb_touched(c);
            if (srv->opt.auto_advance_ms) srv->active_ms = frs_mono_ms();
            continue;
        }
        if (n < 0 && errno == EINTR) continue;
        if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) break;
        free_conn(c, "peer"); /* the peer is gone */
        return -1;
    }
    frs_obuf_compact(&c->out);
    if (!frs_obuf_pending(&c->out)) {
        if (c->soft_since_ms) {
            c->soft_since_ms = 0;
            srv->nsoft--;
        }
        if (c->close_after_reply) {
            free_conn(c, "quit");
            return -1;
        }
        if (c->want_write) epoll_set(srv, c, 0);
    } else if (c->out.stopped && c->out.stop - c->out.dropped <= c->out.sent) {
        if (c->want_write) epoll_set(srv, c, 0); /* held: nothing to write until released */
    } else if (!c->want_write) {
        epoll_set(srv, c, 1);
    }
    return 0;
}

/* ----- Accepting --------------------------------------------------------------------- */

static void format_addr(const struct sockaddr_storage *sa, char *buf, size_t cap)
{
    char ip[INET6_ADDRSTRLEN] = "?";
    int port = 0;
    if (sa->ss_family == AF_INET) {
        const struct sockaddr_in *s4 = (const struct sockaddr_in *)sa;
        inet_ntop(AF_INET, &s4->sin_addr, ip, sizeof(ip));
        port = ntohs(s4->sin_port);
        snprintf(buf, cap, "%s:%d", ip, port);
    } else if (sa->ss_family == AF_INET6) {
        const struct sockaddr_in6 *s6 = (const struct sockaddr_in6 *)sa;
        inet_ntop(AF_INET6, &s6->sin6_addr, ip, sizeof(ip));
        port = ntohs(s6->sin6_port);
        snprintf(buf, cap, "[%s]:%d", ip, port);
    } else {
        snprintf(buf, cap, "?:0");
    }
}

static void accept_on(frs_server *srv, listener *l)
{
    for (int k = 0; k < MAX_ACCEPTS; k++) {
        struct sockaddr_storage peer;
        socklen_t plen = sizeof(peer);
        int fd = accept4(l->fd, (struct sockaddr *)&peer, &plen, SOCK_NONBLOCK | SOCK_CLOEXEC);
        if (fd < 0) {
            if (errno == EINTR || errno == ECONNABORTED) continue;
            if (errno == EMFILE || errno == ENFILE)
                fprintf(stderr, "fakeredis-server: accept: %s\n", strerror(errno));
            return;
        }
        if ((long long)srv->nconns >= srv->maxclients) {
            static const char err[] = "-ERR max number of clients reached\r\n";
            ssize_t w = write(fd, err, sizeof(err) - 1); /* best effort, as Redis */
            (void)w;
            close(fd);
            srv->stats.rejected++;
            continue;
        }
        frs_conn *c = calloc(1, sizeof(*c));
        fr_client *fc = c ? fr_client_new(srv->fake) : NULL;
        if (!fc) {
            free(c);
            close(fd);
            continue;
        }
        c->srv = srv;
        c->fd = fd;
        c->fc = fc;
        fr_client_set_blocking(fc, 1); /* BLPOP and friends wait, as on redis-server */
        c->id = srv->next_id++;
        c->resp = 2;
        c->is_unix = l->is_unix;
        c->peer_pid = -1;
        if (l->is_unix) { /* who is on the other end: the recording says (docs/recording.md) */
            struct ucred cred;
            socklen_t clen = sizeof cred;
            if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &clen) == 0) c->peer_pid = cred.pid;
        }
        c->authed = !fr_server_auth_required(srv->fake); /* the default user's ACL */
        c->ctime_ms = c->last_ms = frs_mono_ms();
        c->last_cmd = "NULL";
        rr_init(&c->in);
        c->in.max_bulk_len = srv->max_bulk_len;
        c->in.auth_required = !c->authed;
        if (l->is_unix) {
            snprintf(c->addr, sizeof(c->addr), "%s:0", srv->unixsocket);
            snprintf(c->laddr, sizeof(c->laddr), "%s:0", srv->unixsocket);
        } else {
            int one = 1;
            setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
            setsockopt(fd, SOL_SOCKET, SO_KEEPALIVE, &one, sizeof(one));
            format_addr(&peer, c->addr, sizeof(c->addr));
            struct sockaddr_storage local;
            socklen_t llen = sizeof(local);
            if (getsockname(fd, (struct sockaddr *)&local, &llen) == 0)
                format_addr(&local, c->laddr, sizeof(c->laddr));
        }
        struct epoll_event ev = {.events = EPOLLIN, .data.ptr = c};
        if (epoll_ctl(srv->epfd, EPOLL_CTL_ADD, fd, &ev) < 0) {
            fr_client_free(fc);
            close(fd);
            free(c);
            continue;
        }
        c->next = srv->conns;
        if (srv->conns) srv->conns->prev = c;
        srv->conns = c;
        srv->nconns++;
        map_put(srv->bymap, fc, c);
        srv->stats.connections++;
        srv->active_ms = srv->turn_ms;
        frs_record_conn_open(c);
    }
}

/* ----- Start and stop ---------------------------------------------------------------- */

/* Raises the open-files limit for maxclients, or lowers maxclients to what it allows. */
static void adjust_fd_limit(frs_server *srv)
{
    rlim_t want = (rlim_t)srv->maxclients + FRS_RESERVED_FDS;
    struct rlimit rl;
    if (getrlimit(RLIMIT_NOFILE, &rl) != 0 || rl.rlim_cur >= want) return;
    struct rlimit nrl = {want, rl.rlim_max > want ? rl.rlim_max : want};
    if (setrlimit(RLIMIT_NOFILE, &nrl) == 0) return;
    nrl.rlim_cur = rl.rlim_max < want ? rl.rlim_max : want;
    nrl.rlim_max = rl.rlim_max;
    if (setrlimit(RLIMIT_NOFILE, &nrl) != 0) nrl.rlim_cur = rl.rlim_cur;
    long long allowed = (long long)nrl.rlim_cur - FRS_RESERVED_FDS;
    if (allowed < 1) allowed = 1;
    if (allowed < srv->maxclients) {
        fprintf(stderr, "fakeredis-server: open files limit %llu: maxclients lowered from %lld "
                        "to %lld\n", (unsigned long long)nrl.rlim_cur, srv->maxclients, allowed);
        srv->maxclients = allowed;
    }
}

static int listen_tcp(frs_server *srv, const char *addr, int port)
{
    struct addrinfo hints = {.ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM,
                             .ai_flags = AI_PASSIVE | AI_NUMERICHOST | AI_NUMERICSERV};
    struct addrinfo *res;
    char portstr[16];
    snprintf(portstr, sizeof(portstr), "%d", port);
    int rc = getaddrinfo(addr, portstr, &hints, &res);
    if (rc != 0) {
        fprintf(stderr, "fakeredis-server: bad bind address %s: %s\n", addr, gai_strerror(rc));
        return -1;
    }
    int fd = socket(res->ai_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    int one = 1;
    if (fd >= 0) {
        setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
        if (res->ai_family == AF_INET6) setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &one, sizeof(one));
    }
    if (fd < 0 || bind(fd, res->ai_addr, res->ai_addrlen) < 0 || listen(fd, 511) < 0) {
        fprintf(stderr, "fakeredis-server: cannot listen on %s:%d: %s\n", addr, port,
                strerror(errno));
        if (fd >= 0) close(fd);
        freeaddrinfo(res);
        return -1;
    }
    freeaddrinfo(res);
    struct sockaddr_storage sa;
    socklen_t sl = sizeof(sa);
    getsockname(fd, (struct sockaddr *)&sa, &sl);
    srv->tcp_port = ntohs(sa.ss_family == AF_INET ? ((struct sockaddr_in *)&sa)->sin_port
                                                  : ((struct sockaddr_in6 *)&sa)->sin6_port);
    return fd;
}

static int listen_unix(const char *path)
{
    struct sockaddr_un sa = {.sun_family = AF_UNIX};
    if (strlen(path) >= sizeof(sa.sun_path)) {
        fprintf(stderr, "fakeredis-server: unix socket path too long: %s\n", path);
        return -1;
    }
    strcpy(sa.sun_path, path);
    unlink(path); /* a stale socket from an earlier run, as Redis removes it */
    int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (fd < 0 || bind(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0 || listen(fd, 511) < 0) {
        fprintf(stderr, "fakeredis-server: cannot listen on %s: %s\n", path, strerror(errno));
        if (fd >= 0) close(fd);
        return -1;
    }
    return fd;
}

static int add_listener(frs_server *srv, int fd, int is_unix)
{
    listener *l = &listeners[srv->nlisten];
    l->fd = fd;
    l->is_unix = is_unix;
    srv->listen_fd[srv->nlisten++] = fd;
    struct epoll_event ev = {.events = EPOLLIN, .data.ptr = l};
    return epoll_ctl(srv->epfd, EPOLL_CTL_ADD, fd, &ev);
}

/* Opens TCP sockets at Redis's bind words ("*" every IPv4 address, "::*" every IPv6 one, a
 * leading '-' an address that may fail; "" is Redis's default, "* -::*") and port (0:
 * none) into fds.  Their count, or -1 with none left open. */
static int open_tcp(frs_server *srv, const char *bind, int port, int fds[FRS_MAX_LISTENERS])
{
    char words[512];
    snprintf(words, sizeof(words), "%s", *bind ? bind : "* -::*");
    int n = 0;
    char *save = NULL;
    for (char *w = strtok_r(words, " ", &save); w && port > 0; w = strtok_r(NULL, " ", &save)) {
        int optional = *w == '-';
        if (optional) w++;
        const char *addr = !strcmp(w, "*") ? "0.0.0.0" : !strcmp(w, "::*") ? "::" : w;
        /* with port 0 never here; the first address's port is the others' */
        int fd = n < FRS_MAX_LISTENERS ? listen_tcp(srv, addr, n ? srv->tcp_port : port) : -1;
        if (fd < 0 && optional) continue;
        if (fd < 0) {
            while (n > 0) close(fds[--n]);
            return -1;
        }
        fds[n++] = fd;
    }
    return n;
}

int frs_listen_tcp_again(frs_server *srv, const char *bind, int port, const char *old_bind,
                         int old_port)
{
    /* as Redis's changeBindAddr and changeListenPort: the old sockets close first (the new
     * ones may want their addresses), and come back when the new ones cannot be opened.
     * The listeners are epoll's tags, so every one is registered again at its place. */
    int unix_fd = -1;
    for (int i = 0; i < srv->nlisten; i++) {
        epoll_ctl(srv->epfd, EPOLL_CTL_DEL, listeners[i].fd, NULL);
        if (listeners[i].is_unix) unix_fd = listeners[i].fd;
        else close(listeners[i].fd);
    }
    srv->nlisten = 0;
    int fds[FRS_MAX_LISTENERS], rc = 0;
    int n = open_tcp(srv, bind, port, fds);
    if (n < 0) {
        rc = -1;
        n = open_tcp(srv, old_bind, old_port, fds);
        if (n < 0) {
            fprintf(stderr, "fakeredis-server: the old TCP addresses cannot be opened again\n");
            n = 0;
        }
    }
    for (int i = 0; i < n; i++) add_listener(srv, fds[i], 0);
    if (unix_fd >= 0) add_listener(srv, unix_fd, 1);
    if (n == 0) srv->tcp_port = 0;
    return rc;
}

static void busy_hook(fr_server *fake, void *ctx);
static int oom_hook(fr_server *fake, void *ctx);
static char *resp3_hook(fr_server *fake, void *ctx, int argc, const char *const *argv,
                        const size_t *argvlen, const char *p, size_t n, size_t *out_len);
static char *script_host_hook(fr_server *fake, void *ctx, int argc, const char *const *argv,
                              const size_t *argvlen, int resp, size_t *out_len);

int frs_server_init(frs_server *srv, const frs_options *opt)
{
    memset(srv, 0, sizeof(*srv));
    srv->opt = *opt;
    srv->epfd = srv->sig_fd = -1;
    srv->next_id = 1;
    srv->start_ms = srv->turn_ms = frs_mono_ms();
    srv->start_time = time(NULL);
    srv->maxclients = opt->maxclients > 0 ? opt->maxclients : FRS_DEFAULT_MAXCLIENTS;
    srv->max_bulk_len = RR_DEFAULT_MAX_BULK;
    srv->querybuf_limit = 1024ull * 1024 * 1024;              /* Redis's 1gb */
    srv->limit_normal = (frs_outlimit){256ull * 1024 * 1024, 0, 0}; /* see docs/server.md */
    srv->limit_pubsub = (frs_outlimit){32ull * 1024 * 1024, 8ull * 1024 * 1024, 60};
    srv->requirepass = opt->requirepass && opt->requirepass[0] ? strdup(opt->requirepass) : NULL;
    srv->bymap = calloc(1, sizeof(*srv->bymap));
    if (!srv->bymap) return -1;
    /* run_id: random per start, as Redis's (it is not part of any reply the tests pin) */
    {
        unsigned char rnd[20];
        int rfd = open("/dev/urandom", O_RDONLY | O_CLOEXEC);
        ssize_t got = rfd >= 0 ? read(rfd, rnd, sizeof(rnd)) : -1;
        if (rfd >= 0) close(rfd);
        for (int i = 0; i < 20; i++)
            snprintf(srv->run_id + 2 * i, 3, "%02x", got == 20 ? rnd[i] : (unsigned)i);
    }
    frs_cmdtable_init();
    adjust_fd_limit(srv);

    if (opt->fake) {
        srv->fake = opt->fake; /* the embedder's: its seed, clock and cluster setting */
    } else {
        fr_config cfg = fr_config_default();
        cfg.seed = opt->seed;
        if (opt->start_ms) cfg.start_ms = opt->start_ms;
        cfg.cluster_enabled = opt->cluster;
        srv->fake = fr_server_new(&cfg);
        if (!srv->fake) {
            fprintf(stderr, "fakeredis-server: out of memory\n");
            return -1;
        }
    }
    if (opt->wall_clock) fr_clock_use_wall(srv->fake, 1);
    if (opt->published_set)
        fr_published_set_limit(srv->fake, opt->published_max, opt->published_max_bytes);
    frs_cmdtable_declare(srv->fake);
    if (srv->requirepass)
        fr_server_set_requirepass(srv->fake, srv->requirepass, strlen(srv->requirepass));
    /* commandstats' usec and latencystats are measured, as redis-server measures them */
    fr_stats_set_clock(srv->fake, frs_mono_us, NULL);

    srv->epfd = epoll_create1(EPOLL_CLOEXEC);
    if (srv->epfd < 0) {
        perror("fakeredis-server: epoll_create1");
        return -1;
    }
    if (opt->port >= 0) {
        int nb = opt->nbind ? opt->nbind : 1;
        for (int i = 0; i < nb; i++) {
            const char *addr = opt->nbind ? opt->bind[i] : "127.0.0.1";
            /* with port 0, the first address picks the port and the others share it */
            int fd = listen_tcp(srv, addr, i == 0 ? opt->port : srv->tcp_port);
            if (fd < 0 || add_listener(srv, fd, 0) < 0) return -1;
        }
    }
    if (opt->unixsocket) {
        int fd = listen_unix(opt->unixsocket);
        if (fd < 0 || add_listener(srv, fd, 1) < 0) return -1;
        /* kept whole: --dir moves the working directory before the file is removed */
        char cwd[PATH_MAX];
        if (opt->unixsocket[0] != '/' && getcwd(cwd, sizeof(cwd))) {
            size_t n = strlen(cwd) + strlen(opt->unixsocket) + 2;
            srv->unixsocket = malloc(n);
            if (srv->unixsocket) snprintf(srv->unixsocket, n, "%s/%s", cwd, opt->unixsocket);
        } else {
            srv->unixsocket = strdup(opt->unixsocket);
        }
    }
    if (srv->nlisten == 0) {
        fprintf(stderr, "fakeredis-server: nothing to listen on (--port -1 and no --unixsocket)\n");
        return -1;
    }

    signal(SIGPIPE, SIG_IGN);
    if (!opt->no_signals) {
        sigset_t mask;
        sigemptyset(&mask);
        sigaddset(&mask, SIGTERM);
        sigaddset(&mask, SIGINT);
        sigprocmask(SIG_BLOCK, &mask, NULL);
        srv->sig_fd = signalfd(-1, &mask, SFD_NONBLOCK | SFD_CLOEXEC);
        struct epoll_event ev = {.events = EPOLLIN, .data.ptr = &sig_tag};
        if (srv->sig_fd < 0 || epoll_ctl(srv->epfd, EPOLL_CTL_ADD, srv->sig_fd, &ev) < 0) {
            perror("fakeredis-server: signalfd");
            return -1;
        }
    }
    if (frs_config_init(srv) < 0) return -1;
    frs_apply_limits(srv);
    frs_admin_init(srv); /* MONITOR, SLOWLOG, LATENCY, tracking watch the fake */
    if (frs_persist_init(srv) < 0) return -1; /* the RDB file or the AOF, read at start */
    if (opt->record) {
        char err[512];
        if (frs_record_start(srv, opt->record, err, sizeof err) < 0) {
            fprintf(stderr, "fakeredis-server: --record: %s\n", err);
            return -1;
        }
    }

    fr_server_set_busy_hook(srv->fake, busy_hook, srv);
    fr_server_set_oom_hook(srv->fake, oom_hook, srv);
    fr_server_set_resp3_hook(srv->fake, resp3_hook, srv);
    fr_server_set_script_host_hook(srv->fake, script_host_hook, srv);
    if (opt->quiet) return 0;
    if (opt->port >= 0) {
        int nb = opt->nbind ? opt->nbind : 1;
        for (int i = 0; i < nb; i++) {
            const char *addr = opt->nbind ? opt->bind[i] : "127.0.0.1";
            if (strchr(addr, ':')) printf("fakeredis-server listening on [%s]:%d\n", addr, srv->tcp_port);
            else printf("fakeredis-server listening on %s:%d\n", addr, srv->tcp_port);
        }
    }
    if (srv->unixsocket) printf("fakeredis-server listening on unix:%s\n", srv->unixsocket);
    printf("fakeredis-server ready pid=%ld\n", (long)getpid());
    fflush(stdout);
    return 0;
}

/* Work done before the loop sleeps: input that may go on (woken clients), then every
 * pending write and close. */
static void before_sleep(frs_server *srv)
{
    while (srv->resume_head) {
        frs_conn *c = srv->resume_head;
        srv->resume_head = c->resume_next;
        if (!srv->resume_head) srv->resume_tail = NULL;
        c->in_resume = 0;
        process_input(c);
    }
    frs_admin_before_sleep(srv); /* BCAST invalidations, as Redis's beforeSleep */
    frs_aof_before_sleep(srv);   /* the AOF written before the replies go out */
    if (srv->rec) frs_record_sweep(srv);
    while (srv->pending) {
        frs_conn *c = srv->pending;
        srv->pending = c->pend_next;
        c->in_pending = 0;
        if (c->close_asap) {
            free_conn(c, "killed");
            continue;
        }
        conn_write(c);
    }
    if (srv->rec) frs_record_flush(srv); /* the recording is at most one turn behind */
}

/* Whether Redis's active expiry runs (ten times a second): only while something can see
 * that it ran -- "expired" notifications, tracking's invalidations, the latency monitor's
 * expire-cycle event -- and DEBUG SET-ACTIVE-EXPIRE has not stopped it. */
static int active_expire_wanted(frs_server *srv)
{
    return ((fr_server_notify_flags(srv->fake) & FR_NOTIFY_EXPIRED) || frs_tracking_active(srv) ||
            frs_admin_latency_on(srv)) &&
           !frs_admin_active_expire_off(srv);
}

/* One active expiry cycle: its latency sample (expire-cycle, measured as a command is:
 * wall time, or what the virtual clock moved), what it woke and published. */
static void active_expire(frs_server *srv)
{
    uint64_t start = frs_mono_us(NULL);
    int64_t vstart = fr_clock_now(srv->fake);
    size_t n = fr_server_active_expire(srv->fake);
    uint64_t usec = srv->opt.wall_clock ? frs_mono_us(NULL) - start
                                        : (uint64_t)(fr_clock_now(srv->fake) - vstart) * 1000;
    frs_admin_expire_cycle(srv, usec);
    if (n) frs_drain_fake_events(srv, NULL);
}

/* Milliseconds epoll may sleep: until the nearest blocking deadline (wall clock), a
 * soft output limit to re-check, or for ever. */
static int sleep_ms(frs_server *srv)
{
    long long t = -1;
    if (srv->opt.wall_clock) {
        int64_t d = fr_server_next_deadline(srv->fake);
        if (d >= 0) {
            long long left = (long long)(d - fr_clock_now(srv->fake));
            t = left < 0 ? 0 : left;
        }
    }
    if (srv->nsoft && (t < 0 || t > 100)) t = 100; /* re-check soft output limits */
    if (active_expire_wanted(srv) && (t < 0 || t > 100))
        t = 100; /* the active expiry's next run */
    if (frs_persist_wants_cron(srv) && (t < 0 || t > 100)) t = 100; /* a child, save points */
    int64_t pause_end = srv->opt.wall_clock ? frs_pause_deadline(srv) : -1;
    if (pause_end >= 0) { /* held connections go on once the clock is past the end */
        long long left = (long long)(pause_end + 1 - fr_clock_now(srv->fake));
        if (left < 0) left = 0;
        if (t < 0 || left < t) t = left;
    }
    if (t > 1000000) t = 1000000;
    return (int)t;
}

static void timers(frs_server *srv)
{
    if (srv->opt.wall_clock) {
        int64_t d = fr_server_next_deadline(srv->fake);
        if (d >= 0 && d <= fr_clock_now(srv->fake)) {
            fr_server_expire_blocked(srv->fake);
            frs_drain_fake_events(srv, NULL);
            frs_record_sweep(srv);
        }
    }
    if (srv->nsoft)
        for (frs_conn *c = srv->conns; c; c = c->next)
            if (c->soft_since_ms) frs_conn_want_flush(c);
    /* Redis's active expiry, ten times a second (hz 10), all at once: only the "expired"
     * notifications and tracking's invalidations show that it ran, so it runs only while
     * they are wanted */
    if (active_expire_wanted(srv) &&
        srv->turn_ms - srv->expired_ms >= 100) {
        srv->expired_ms = srv->turn_ms;
        active_expire(srv);
        frs_record_sweep(srv);
    }
    frs_persist_cron(srv);
    frs_pause_check(srv); /* a pause that ended lets its held connections go on */
}

/* Microseconds of a monotonic clock, for the busy poll's deadline. */
static int64_t mono_us(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
}

/* Polls the epoll set without sleeping for up to --busy-poll-us microseconds, yielding the
 * CPU between polls.  Returns what epoll_wait returned (0: nothing came, sleep now).
 *
 * Why: a client that waits for each reply before sending its next request (no pipeline)
 * sends it a few microseconds after the reply; a server asleep by then must be woken, a
 * context switch on both sides and, on a virtual machine, an inter-processor interrupt
 * through the hypervisor (tens of microseconds): the largest single cost of an unpipelined
 * request.  A server still runnable needs no wake-up.  The caller polls only after a turn
 * that had work (an idle server sleeps after one poll), the yield hands the polling time to
 * anything else runnable on this CPU, and the caller skips the poll when a deadline is due
 * and recomputes the timeout after it (a --clock wall deadline fires at most one poll
 * late). */
static int busy_poll(frs_server *srv, struct epoll_event *evs)
{
    if (srv->opt.busy_poll_us <= 0) return 0;
    int64_t until = 0;
    for (;;) {
        int n = epoll_wait(srv->epfd, evs, MAX_EVENTS, 0);
        if (n != 0) return n;
        int64_t now = mono_us();
        if (!until) until = now + srv->opt.busy_poll_us;
        else if (now >= until) return 0;
        sched_yield();
    }
}

/* One epoll event.  A connection whose script is running (in_script) is left alone: its
 * input waits and it is never freed, as Redis protects the client of a busy script. */
static void handle_event(frs_server *srv, void *tag, uint32_t e)
{
    if (tag == &sig_tag) {
        struct signalfd_siginfo si;
        if (read(srv->sig_fd, &si, sizeof(si)) == (ssize_t)sizeof(si)) {
            fprintf(stderr, "fakeredis-server: received %s, exiting\n",
                    si.ssi_signo == SIGINT ? "SIGINT" : "SIGTERM");
            /* prepareForShutdown: a save that fails keeps the server running */
            if (frs_persist_shutdown(srv, 0, 0) == 0) srv->stop = 1;
        }
        return;
    }
    if (tag >= (void *)&listeners[0] && tag <= (void *)&listeners[FRS_MAX_LISTENERS]) {
        accept_on(srv, tag);
        return;
    }
    frs_conn *c = tag;
    if (c->in_script) return;
    if (e & (EPOLLIN | EPOLLHUP | EPOLLERR)) {
        if (c->close_after_reply && !(e & EPOLLIN)) {
            free_conn(c, "peer"); /* the peer hung up before taking its last reply */
            return;
        }
        if (conn_read(c) < 0) return;
    }
    if (e & EPOLLOUT) conn_write(c);
}

/* Writes (and closes) what is pending, except for a connection whose script runs. */
static void flush_pending_busy(frs_server *srv)
{
    frs_conn *keep = NULL;
    while (srv->pending) {
        frs_conn *c = srv->pending;
        srv->pending = c->pend_next;
        if (c->in_script) {
            c->pend_next = keep;
            keep = c;
            continue;
        }
        c->in_pending = 0;
        if (c->close_asap) {
            free_conn(c, "killed");
            continue;
        }
        conn_write(c);
    }
    while (keep) {
        frs_conn *c = keep;
        keep = c->pend_next;
        c->pend_next = srv->pending;
        srv->pending = c;
    }
}

/* The fake's busy hook (fr_server_set_busy_hook): while a script runs past
 * busy-reply-threshold, the other connections are served as redis-server's
 * processEventsWhileBlocked serves them -- a few rounds of events without sleeping; the
 * fake answers their commands -BUSY, except SCRIPT KILL and the few Redis lets through.
 * SHUTDOWN NOSAVE (or a signal) ends the process from here: the script never returns. */
static void busy_hook(fr_server *fake, void *ctx)
{
    frs_server *srv = ctx;
    (void)fake;
    if (srv->in_busy_hook) return;
    srv->in_busy_hook = 1;
    struct epoll_event evs[MAX_EVENTS];
    for (int round = 0; round < 4 && !srv->stop; round++) {
        flush_pending_busy(srv);
        int n = epoll_wait(srv->epfd, evs, MAX_EVENTS, 0);
        if (n <= 0) break;
        srv->turn_ms = frs_mono_ms();
        for (int i = 0; i < n && !srv->stop; i++) handle_event(srv, evs[i].data.ptr, evs[i].events);
    }
    flush_pending_busy(srv);
    srv->in_busy_hook = 0;
    if (srv->stop) {
        fprintf(stderr, "fakeredis-server: shutting down while a script runs\n");
        if (srv->unixsocket) unlink(srv->unixsocket);
        exit(0);
    }
}

/* The fake's OOM hook (fr_server_set_oom_hook): over maxmemory as INFO's used_memory
 * measures it (the check refuse_oom makes for the server's own commands). */
static int oom_hook(fr_server *fake, void *ctx)
{
    const frs_server *srv = ctx;
    (void)fake;
    return srv->maxmemory && frs_used_memory() > srv->maxmemory;
}

/* The fake's RESP3 hook (fr_server_set_resp3_hook): a command's reply to a script under
 * redis.setresp(3) converted as for a RESP3 connection. */
static char *resp3_hook(fr_server *fake, void *ctx, int argc, const char *const *argv,
                        const size_t *argvlen, const char *p, size_t n, size_t *out_len)
{
    (void)fake;
    frs_conn tmp;
    memset(&tmp, 0, sizeof(tmp));
    tmp.srv = ctx;
    frs_resp3_convert(&tmp, argc, argv, argvlen, p, n);
    *out_len = tmp.out.len;
    return tmp.out.p;
}

/* The fake's script host hook (fr_server_set_script_host_hook): DEBUG from a script. */
static char *script_host_hook(fr_server *fake, void *ctx, int argc, const char *const *argv,
                              const size_t *argvlen, int resp, size_t *out_len)
{
    (void)fake;
    return frs_admin_script_debug(ctx, argc, argv, argvlen, resp, out_len);
}

/* ----- --clock auto: the virtual clock moves itself when everyone waits ------------------ */

/* The next deadline the virtual clock may move to (Unix ms on the fake's clock), or -1: a
 * blocked client's timeout, a key's expiry where something observes it (the active expiry
 * runs), the embedder's next `advance`. */
static int64_t next_deadline(frs_server *srv)
{
    int64_t d = fr_server_next_deadline(srv->fake);
    if (active_expire_wanted(srv)) {
        int64_t e = fr_server_next_expiry(srv->fake);
        if (e >= 0 && (d < 0 || e + 1 < d)) d = e + 1; /* gone once the clock is past it */
    }
    int64_t pause_end = frs_pause_deadline(srv);
    if (pause_end >= 0 && (d < 0 || pause_end + 1 < d)) d = pause_end + 1;
    if (srv->clock_hooks && srv->clock_hooks->next) {
        int64_t h = srv->clock_hooks->next(srv->clock_hooks->ud);
        if (h >= 0 && (d < 0 || h < d)) d = h;
    }
    return d;
}

/* Milliseconds until the quiet interval has passed (0: it has), or -1 when the clock has
 * nowhere to go (auto-advance off, or no deadline ahead). */
static int quiet_left(frs_server *srv)
{
    if (!srv->opt.auto_advance_ms || srv->opt.wall_clock) return -1;
    int64_t d = next_deadline(srv);
    if (d < 0 || d <= fr_clock_now(srv->fake)) return -1;
    int64_t left = srv->active_ms + srv->opt.auto_advance_ms - frs_mono_ms();
    return left < 0 ? 0 : (int)left;
}

/* The rule of --clock auto (docs/server.md, "The virtual clock that moves itself"): when no
 * client has sent or been sent a byte for the quiet interval -- every client is blocked or
 * idle -- the clock moves to the next deadline, and what falls due there happens (blocked
 * clients time out, keys expire, the embedder is told). */
static void auto_advance(frs_server *srv)
{
    if (quiet_left(srv) != 0) return;
    const frs_clock_hooks *h = srv->clock_hooks;
    if (h && h->held && h->held(h->ud)) { /* the embedder holds it: the quiet starts anew */
        srv->active_ms = frs_mono_ms();
        return;
    }
    /* Not quiet after all when a client wrote since the turn's wait ended (the embedder's
     * look at its processes takes a while, and a consumer that has just sent its command
     * sleeps waiting for the reply): the next turn reads it at the clock it was sent at.
     * The events are level-triggered, so looking leaves them for that turn. */
    struct epoll_event ev;
    if (epoll_wait(srv->epfd, &ev, 1, 0) > 0) return;
    int64_t from = fr_clock_now(srv->fake), to = next_deadline(srv);
    fr_clock_set(srv->fake, to);
    frs_record_clock(srv, from, "auto");
    srv->active_ms = frs_mono_ms();
    fr_server_expire_blocked(srv->fake);
    frs_drain_fake_events(srv, NULL);
    if (active_expire_wanted(srv)) active_expire(srv);
    frs_record_sweep(srv);
    if (srv->clock_hooks && srv->clock_hooks->moved)
        srv->clock_hooks->moved(srv->clock_hooks->ud, from, to);
}

void frs_server_set_clock_hooks(frs_server *srv, frs_clock_hooks *hooks)
{
    srv->clock_hooks = hooks;
}

int frs_server_set_auto_advance(frs_server *srv, int quiet_ms)
{
    if (srv->opt.wall_clock) return -1;
    srv->opt.auto_advance_ms = quiet_ms > 0 ? quiet_ms : 0;
    srv->active_ms = frs_mono_ms();
    return 0;
}

/* One turn: before sleeping, wait (at most max_wait_ms when >= 0; -1: as long as the
 * server's timers allow), events, timers.  *busy: the last turn had events (poll before
 * sleeping), updated. */
static int turn(frs_server *srv, int max_wait_ms, int *busy)
{
    struct epoll_event evs[MAX_EVENTS];
    before_sleep(srv);
    if (srv->stop) return 0;
    int wait = sleep_ms(srv), q = quiet_left(srv);
    if (q >= 0 && (wait < 0 || q < wait)) wait = q; /* --clock auto's quiet interval */
    if (max_wait_ms >= 0 && (wait < 0 || wait > max_wait_ms)) wait = max_wait_ms;
    int n = *busy && wait != 0 ? busy_poll(srv, evs) : 0;
    if (n == 0) n = epoll_wait(srv->epfd, evs, MAX_EVENTS, wait);
    *busy = n > 0;
    srv->turn_ms = frs_mono_ms();
    if (n < 0) {
        if (errno == EINTR) return 0;
        perror("fakeredis-server: epoll_wait");
        return -1;
    }
    for (int i = 0; i < n && !srv->stop; i++) handle_event(srv, evs[i].data.ptr, evs[i].events);
    timers(srv);
    if (n == 0) auto_advance(srv);
    return 0;
}

int frs_server_turn(frs_server *srv, int max_wait_ms)
{
    int busy = 0; /* an embedder's turn sleeps at once: it has its own work to do */
    return turn(srv, max_wait_ms < 0 ? 0 : max_wait_ms, &busy);
}

int frs_server_run(frs_server *srv)
{
    int busy = 0; /* the last wake found events: poll before sleeping */
    while (!srv->stop)
        if (turn(srv, -1, &busy) < 0) return -1;
    return 0;
}

void frs_server_free(frs_server *srv)
{
    /* Flush what can be flushed without waiting (e.g. SHUTDOWN's peers get EOF). */
    srv->stopping = 1;
    while (srv->conns) free_conn(srv->conns, "shutdown");
    if (srv->rec) {
        char err[512];
        if (frs_record_stop(srv, err, sizeof err) < 0)
            fprintf(stderr, "fakeredis-server: the recording: %s\n", err);
    }
    frs_hold_free(srv);
    frs_admin_free(srv);
    frs_persist_free(srv);
    for (int i = 0; i < srv->nlisten; i++) close(srv->listen_fd[i]);
    if (srv->unixsocket) unlink(srv->unixsocket);
    free(srv->unixsocket);
    if (srv->sig_fd >= 0) close(srv->sig_fd);
    if (srv->epfd >= 0) close(srv->epfd);
    if (srv->fake && srv->fake == srv->opt.fake) {
        /* an embedder's fake is its own: it outlives this server, its hooks must not */
        fr_server_set_busy_hook(srv->fake, NULL, NULL);
        fr_server_set_oom_hook(srv->fake, NULL, NULL);
        fr_server_set_resp3_hook(srv->fake, NULL, NULL);
        fr_server_set_script_host_hook(srv->fake, NULL, NULL);
        fr_stats_set_clock(srv->fake, NULL, NULL);
        fr_server_set_call_hook(srv->fake, NULL, NULL); /* admin.c's */
        fr_server_set_key_hook(srv->fake, NULL, NULL);
    } else {
        fr_server_free(srv->fake);
    }
    frs_config_free(srv);
    free(srv->requirepass);
    if (srv->bymap) {
        free(srv->bymap->keys);
        free(srv->bymap->vals);
        free(srv->bymap);
    }
}
