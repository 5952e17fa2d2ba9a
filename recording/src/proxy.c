/* proxy.c -- the recording proxy (wsr_proxy.h; docs/recording.md, "The proxy").
 *
 * Each client connection has its upstream connection and four byte queues: what the client
 * sent and the server has not taken yet, what the server sent and the client has not taken
 * yet, and, for the recording, the client's requests (a Redis request parser) and the
 * server's values not yet framed.  Forwarding never waits for the recording: bytes go on as
 * they come, whatever the parsers make of them; a request stream that stops parsing (a
 * protocol error, which the server answers and closes on) is forwarded unrecorded from
 * there, with a note. */
#define _GNU_SOURCE /* accept4, struct ucred */
#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "resp_request.h"
#include "wsr.h"
#include "wsr_proxy.h"
#include "wsr_resp.h"

#define MAX_EVENTS 256
#define READ_CHUNK (64 * 1024)

/* A byte queue. */
typedef struct bytes {
    char *p;
    size_t len, off, cap; /* [off, len) is what is still there */
} bytes;

static int bytes_add(bytes *b, const void *p, size_t n)
{
    if (b->off && b->off == b->len) b->off = b->len = 0;
    if (b->cap - b->len < n) {
        if (b->off) { /* move what is left to the front first */
            memmove(b->p, b->p + b->off, b->len - b->off);
            b->len -= b->off;
            b->off = 0;
        }
        size_t cap = b->cap ? b->cap : 16384;
        while (cap - b->len < n) cap *= 2;
        if (cap != b->cap) {
            char *np = realloc(b->p, cap);
            if (!np) return -1;
            b->p = np;
            b->cap = cap;
        }
    }
    memcpy(b->p + b->len, p, n);
    b->len += n;
    return 0;
}

static size_t bytes_n(const bytes *b) { return b->len - b->off; }

/* A command waiting for its reply. */
typedef struct pending {
    int argc;
    char **argv;
    size_t *argvlen;
    uint64_t batch;
    int multi;            /* arrived inside MULTI */
    int noreply;          /* CLIENT REPLY OFF or SKIP: nothing answers it */
    int left;             /* values still owed (-1: not counted yet) */
    bytes reply;          /* the values so far */
} pending;

/* One client and its upstream. */
typedef struct pconn {
    struct pconn *prev, *next;
    struct wsr_proxy *px;
    int cfd, sfd;         /* client, upstream */
    uint64_t id;
    long long pid;
    char *name;
    rr_parser in;         /* the client's requests */
    int parse_dead;       /* the requests stopped parsing */
    bytes to_server, to_client;
    bytes values;         /* upstream bytes not framed yet */
    pending *q;           /* commands owed replies, oldest first: q[qhead .. qn) */
    size_t qhead, qn, qcap;
    int in_multi;         /* as the commands arrive: MULTI seen, not EXEC/DISCARD */
    int reply_mode;       /* CLIENT REPLY as the commands arrive: 0 on, 1 off, 2 skip next */
    int monitor;          /* MONITOR answered +OK */
    long subs, patterns;  /* subscriptions, from the confirmations */
    int resp3;            /* HELLO 3 answered */
    int client_gone, server_gone; /* a side closed: the other goes once its bytes are out */
    int want_c, want_s;   /* EPOLLOUT armed on the client / upstream */
    int values_dead;      /* the upstream's bytes stopped framing */
} pconn;

/* epoll tags for the listeners. */
typedef struct listener {
    int fd;
    int is_unix;
} listener;

struct wsr_proxy {
    int epfd;
    listener lis[2];
    int nlis;
    int port;
    char *unixsocket;
    char *upstream_path;  /* unix upstream, or NULL */
    char *upstream_host;  /* TCP upstream */
    int upstream_port;
    wsr_writer *rec;
    uint64_t next_id, next_batch;
    pconn *conns;
};

/* epoll data: a listener, or a connection's client (tag 0) / upstream (tag 1) side. */
typedef struct side {
    pconn *c;
    int upstream;
} side;

static int64_t wall_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* The recording stops on its first failure, with one message; the proxy goes on. */
static void rec_check(wsr_proxy *px, int rc)
{
    if (rc == 0 || !px->rec) return;
    fprintf(stderr, "wsim proxy: the recording stopped: %s\n", wsr_writer_error(px->rec));
    wsr_writer_close(px->rec, wall_ms(), NULL, 0);
    px->rec = NULL;
}

static void rec_note(pconn *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void rec_note(pconn *c, const char *fmt, ...)
{
    char buf[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    if (c->px->rec) rec_check(c->px, wsr_write_note(c->px->rec, wall_ms(), buf));
}

/* ----- Sockets ---------------------------------------------------------------------------- */

static int nonblock(int fd)
{
    int fl = fcntl(fd, F_GETFL);
    return fl < 0 ? -1 : fcntl(fd, F_SETFL, fl | O_NONBLOCK);
}

/* A connection to the upstream, non-blocking once connected; -1 on failure. */
static int connect_upstream(const wsr_proxy *px)
{
    int fd = -1;
    if (px->upstream_path) {
        struct sockaddr_un sa = {.sun_family = AF_UNIX};
        snprintf(sa.sun_path, sizeof sa.sun_path, "%s", px->upstream_path);
        fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
        if (fd >= 0 && connect(fd, (struct sockaddr *)&sa, sizeof sa) < 0) {
            close(fd);
            return -1;
        }
    } else {
        struct addrinfo hints = {.ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM}, *res;
        char port[16];
        snprintf(port, sizeof port, "%d", px->upstream_port);
        if (getaddrinfo(px->upstream_host, port, &hints, &res) != 0) return -1;
        fd = socket(res->ai_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
        if (fd >= 0 && connect(fd, res->ai_addr, res->ai_addrlen) < 0) {
            close(fd);
            fd = -1;
        }
        freeaddrinfo(res);
        if (fd >= 0) {
            int one = 1;
            setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
        }
    }
    if (fd >= 0) nonblock(fd);
    return fd;
}

static void arm(pconn *c, int upstream, int want_out)
{
    int *want = upstream ? &c->want_s : &c->want_c;
    if (*want == want_out) return;
    *want = want_out;
    struct epoll_event ev = {.events = EPOLLIN | (want_out ? EPOLLOUT : 0),
                             .data.ptr = upstream ? (void *)((char *)c + 1) : (void *)c};
    epoll_ctl(c->px->epfd, EPOLL_CTL_MOD, upstream ? c->sfd : c->cfd, &ev);
}

/* Which side an epoll tag names: a connection pointer, +1 for its upstream side. */
static pconn *tag_conn(void *tag, int *upstream)
{
    uintptr_t v = (uintptr_t)tag;
    *upstream = (int)(v & 1);
    return (pconn *)(v & ~(uintptr_t)1);
}

static void pending_free(pending *p)
{
    for (int i = 0; i < p->argc; i++) free(p->argv[i]);
    free(p->argv);
    free(p->argvlen);
    free(p->reply.p);
    memset(p, 0, sizeof *p);
}

static void conn_free(pconn *c, const char *why)
{
    wsr_proxy *px = c->px;
    /* commands still owed replies never got them: say so */
    if (px->rec && c->qhead < c->qn)
        rec_note(c, "conn %llu closed with %zu commands still owed a reply",
                 (unsigned long long)c->id, c->qn - c->qhead);
    if (px->rec) rec_check(px, wsr_write_close(px->rec, c->id, wall_ms(), why));
    for (size_t i = c->qhead; i < c->qn; i++) pending_free(&c->q[i]);
    free(c->q);
    epoll_ctl(px->epfd, EPOLL_CTL_DEL, c->cfd, NULL);
    close(c->cfd);
    if (c->sfd >= 0) {
        epoll_ctl(px->epfd, EPOLL_CTL_DEL, c->sfd, NULL);
        close(c->sfd);
    }
    rr_free(&c->in);
    free(c->to_server.p);
    free(c->to_client.p);
    free(c->values.p);
    free(c->name);
    if (c->prev) c->prev->next = c->next;
    else px->conns = c->next;
    if (c->next) c->next->prev = c->prev;
    free(c);
}

/* ----- The recording ------------------------------------------------------------------------ */

static int word_is(const char *p, size_t n, const char *w)
{
    return n == strlen(w) && strncasecmp(p, w, n) == 0;
}

/* Queues the command the parser holds for its reply. */
static void enqueue(pconn *c, uint64_t batch)
{
    int argc = rr_argc(&c->in);
    const char *const *argv = rr_argv(&c->in);
    const size_t *lens = rr_argvlen(&c->in);
    if (c->qn == c->qcap) {
        if (c->qhead) { /* slide the queue down before growing it */
            memmove(c->q, c->q + c->qhead, (c->qn - c->qhead) * sizeof *c->q);
            c->qn -= c->qhead;
            c->qhead = 0;
        }
        if (c->qn == c->qcap) {
            size_t cap = c->qcap ? c->qcap * 2 : 16;
            pending *nq = realloc(c->q, cap * sizeof *nq);
            if (!nq) {
                c->parse_dead = 1;
                return;
            }
            c->q = nq;
            c->qcap = cap;
        }
    }
    pending *p = &c->q[c->qn++];
    memset(p, 0, sizeof *p);
    p->argv = calloc((size_t)argc, sizeof *p->argv);
    p->argvlen = calloc((size_t)argc, sizeof *p->argvlen);
    if (!p->argv || !p->argvlen) {
        c->qn--;
        free(p->argv);
        free(p->argvlen);
        c->parse_dead = 1;
        return;
    }
    for (int i = 0; i < argc; i++) {
        p->argv[i] = malloc(lens[i] + 1);
        if (!p->argv[i]) {
            p->argc = i;
            pending_free(p);
            c->qn--;
            c->parse_dead = 1;
            return;
        }
        memcpy(p->argv[i], argv[i], lens[i]);
        p->argv[i][lens[i]] = '\0';
        p->argvlen[i] = lens[i];
    }
    p->argc = argc;
    p->batch = batch;
    p->left = -1;
    p->multi = c->in_multi;
    /* MULTI state and CLIENT REPLY as the server will see them */
    if (word_is(argv[0], lens[0], "MULTI")) c->in_multi = 1;
    else if (word_is(argv[0], lens[0], "EXEC") || word_is(argv[0], lens[0], "DISCARD") ||
             word_is(argv[0], lens[0], "RESET"))
        c->in_multi = 0;
    int reply_cmd = argc >= 3 && word_is(argv[0], lens[0], "CLIENT") &&
                    word_is(argv[1], lens[1], "REPLY");
    if (reply_cmd && word_is(argv[2], lens[2], "ON")) {
        c->reply_mode = 0;
    } else if (reply_cmd && word_is(argv[2], lens[2], "OFF")) {
        c->reply_mode = 1;
        p->noreply = 1;
    } else if (reply_cmd && word_is(argv[2], lens[2], "SKIP")) {
        p->noreply = 1;
        if (c->reply_mode != 1) c->reply_mode = 2;
    } else if (c->reply_mode == 1) {
        p->noreply = 1;
    } else if (c->reply_mode == 2) {
        p->noreply = 1;
        c->reply_mode = 0;
    }
    if (word_is(argv[0], lens[0], "RESET")) c->reply_mode = 0;
}

/* Writes the head command's line and drops it. */
static void complete_head(pconn *c)
{
    pending *p = &c->q[c->qhead];
    wsr_proxy *px = c->px;
    if (px->rec)
        rec_check(px, wsr_write_cmd(px->rec, c->id, p->batch, wall_ms(), p->multi, c->name,
                                    c->name ? strlen(c->name) : 0, -1, p->argc,
                                    (const char *const *)p->argv, p->argvlen, p->reply.p,
                                    bytes_n(&p->reply)));
    pending_free(p);
    c->qhead++;
    if (c->qhead == c->qn) c->qhead = c->qn = 0;
}

/* Commands CLIENT REPLY silenced at the head are complete with no reply. */
static void drop_silenced(pconn *c)
{
    while (c->qhead < c->qn && c->q[c->qhead].noreply) complete_head(c);
}

/* How many values the head command is owed (counted when it becomes the head, with the
 * subscriptions as they are then). */
static int values_owed(const pconn *c, const pending *p)
{
    const char *n = p->argv[0];
    size_t l = p->argvlen[0];
    if (word_is(n, l, "SUBSCRIBE") || word_is(n, l, "PSUBSCRIBE") || word_is(n, l, "SSUBSCRIBE"))
        return p->argc > 1 ? p->argc - 1 : 1;
    if (word_is(n, l, "UNSUBSCRIBE") || word_is(n, l, "SUNSUBSCRIBE"))
        return p->argc > 1 ? p->argc - 1 : (c->subs - c->patterns > 0 ? (int)(c->subs - c->patterns) : 1);
    if (word_is(n, l, "PUNSUBSCRIBE"))
        return p->argc > 1 ? p->argc - 1 : (c->patterns > 0 ? (int)c->patterns : 1);
    return 1;
}

/* The first string of an aggregate value, lower-cased into buf ("" when none). */
static void first_word(const char *p, size_t n, char *buf, size_t cap)
{
    buf[0] = '\0';
    wsr_value *v = wsr_resp_parse(p, n, NULL, NULL);
    if (!v) return;
    if ((v->type == '*' || v->type == '>') && v->count >= 1 && v->elements[0].str) {
        size_t k = v->elements[0].len < cap - 1 ? v->elements[0].len : cap - 1;
        for (size_t i = 0; i < k; i++) {
            char ch = v->elements[0].str[i];
            buf[i] = (char)(ch >= 'A' && ch <= 'Z' ? ch + 32 : ch);
        }
        buf[k] = '\0';
        /* a subscription confirmation: its count is the subscriptions after it */
    }
    free(v);
}

/* Follows the subscription counts from a confirmation ([kind, channel, count]). */
static void count_subscriptions(pconn *c, const char *p, size_t n, const char *kind)
{
    wsr_value *v = wsr_resp_parse(p, n, NULL, NULL);
    if (!v) return;
    if (v->count >= 3 && v->elements[2].type == ':') {
        long total = (long)v->elements[2].integer;
        int pattern = kind[0] == 'p';
        if (total > c->subs && pattern) c->patterns++;
        if (total < c->subs && pattern && c->patterns > 0) c->patterns--;
        c->subs = total;
    }
    free(v);
}

/* Whether a value is a push (answers no command). */
static int is_push(const pconn *c, const char *p, size_t n, const char *word)
{
    if (c->monitor && p[0] == '+' && n > 2 && p[1] >= '0' && p[1] <= '9') return 1; /* a MONITOR line */
    int msg = !strcmp(word, "message") || !strcmp(word, "pmessage") || !strcmp(word, "smessage");
    if (p[0] == '>') {
        /* RESP3: a subscription confirmation answers the (UN)SUBSCRIBE at the head */
        if (c->qhead < c->qn && !msg) {
            const pending *h = &c->q[c->qhead];
            char head[16];
            size_t l = h->argvlen[0] < sizeof head - 1 ? h->argvlen[0] : sizeof head - 1;
            for (size_t i = 0; i < l; i++) {
                char ch = h->argv[0][i];
                head[i] = (char)(ch >= 'A' && ch <= 'Z' ? ch + 32 : ch);
            }
            head[l] = '\0';
            if (strstr(head, "subscribe") && !strcmp(head, word)) return 0;
        }
        return 1;
    }
    return p[0] == '*' && c->subs > 0 && msg;
}

/* Frames what the upstream sent and records each value. */
static void take_values(pconn *c)
{
    wsr_proxy *px = c->px;
    while (!c->values_dead && bytes_n(&c->values)) {
        const char *p = c->values.p + c->values.off;
        size_t avail = bytes_n(&c->values);
        const char *why = NULL;
        long long n = wsr_resp_len(p, avail, &why);
        if (n == 0) break;
        if (n < 0) {
            c->values_dead = 1;
            rec_note(c, "the replies of conn %llu stopped framing (%s): not recorded from here",
                     (unsigned long long)c->id, why ? why : "?");
            break;
        }
        drop_silenced(c);
        char word[32];
        first_word(p, (size_t)n, word, sizeof word);
        if (is_push(c, p, (size_t)n, word)) {
            if (px->rec) rec_check(px, wsr_write_push(px->rec, c->id, wall_ms(), p, (size_t)n));
        } else if (c->qhead < c->qn) {
            pending *h = &c->q[c->qhead];
            if (h->left < 0) h->left = values_owed(c, h);
            if (bytes_add(&h->reply, p, (size_t)n) < 0) {
                c->values_dead = 1;
                break;
            }
            if (strstr(word, "subscribe")) count_subscriptions(c, p, (size_t)n, word);
            /* an error answers the whole command, however many values it was owed */
            if (--h->left <= 0 || p[0] == '-' || p[0] == '!') {
                if (word_is(h->argv[0], h->argvlen[0], "MONITOR") && p[0] == '+') c->monitor = 1;
                if (word_is(h->argv[0], h->argvlen[0], "RESET")) {
                    c->monitor = 0;
                    c->subs = c->patterns = 0;
                    c->resp3 = 0;
                }
                if (word_is(h->argv[0], h->argvlen[0], "HELLO") && p[0] != '-' && h->argc >= 2)
                    c->resp3 = h->argvlen[1] == 1 && h->argv[1][0] == '3';
                /* the connection's name, once the server took it */
                int setname = h->argc >= 3 && word_is(h->argv[0], h->argvlen[0], "CLIENT") &&
                              word_is(h->argv[1], h->argvlen[1], "SETNAME");
                int hello_name = -1;
                for (int i = 1; i + 1 < h->argc; i++)
                    if (word_is(h->argv[0], h->argvlen[0], "HELLO") &&
                        word_is(h->argv[i], h->argvlen[i], "SETNAME"))
                        hello_name = i + 1;
                if ((setname || hello_name > 0) && p[0] != '-' && p[0] != '!') {
                    int at = setname ? 2 : hello_name;
                    free(c->name);
                    c->name = h->argvlen[at] ? strndup(h->argv[at], h->argvlen[at]) : NULL;
                }
                complete_head(c);
            }
        } else if (px->rec) {
            rec_note(c, "conn %llu got a value no command was owed", (unsigned long long)c->id);
            rec_check(px, wsr_write_push(px->rec, c->id, wall_ms(), p, (size_t)n));
        }
        c->values.off += (size_t)n;
    }
    drop_silenced(c);
}

/* Parses the client's new requests: a batch of the commands they complete. */
static void take_requests(pconn *c, const char *p, size_t n)
{
    if (c->parse_dead) return;
    if (rr_feed(&c->in, p, n) < 0) {
        c->parse_dead = 1;
        rec_note(c, "conn %llu: out of memory parsing its requests: not recorded from here",
                 (unsigned long long)c->id);
        return;
    }
    uint64_t batch = 0;
    for (;;) {
        rr_status st = rr_next(&c->in);
        if (st == RR_AGAIN) break;
        if (st == RR_ERROR) {
            c->parse_dead = 1;
            rec_note(c, "conn %llu: %s: its requests are not recorded from here",
                     (unsigned long long)c->id, rr_error(&c->in));
            break;
        }
        if (!batch) batch = ++c->px->next_batch;
        enqueue(c, batch);
        if (c->parse_dead) break;
    }
    drop_silenced(c);
}

/* ----- The loop --------------------------------------------------------------------------- */

/* Writes what side `upstream` is owed; -1 when that side is gone. */
static int flush_side(pconn *c, int upstream)
{
    bytes *b = upstream ? &c->to_server : &c->to_client;
    int fd = upstream ? c->sfd : c->cfd;
    while (bytes_n(b)) {
        ssize_t w = write(fd, b->p + b->off, bytes_n(b));
        if (w > 0) {
            b->off += (size_t)w;
            continue;
        }
        if (w < 0 && errno == EINTR) continue;
        if (w < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) break;
        return -1;
    }
    arm(c, upstream, bytes_n(b) > 0);
    return 0;
}

/* Reads from one side: 0, or -1 when the connection was freed. */
static int read_side(pconn *c, int upstream)
{
    char buf[READ_CHUNK];
    int fd = upstream ? c->sfd : c->cfd;
    ssize_t n = read(fd, buf, sizeof buf);
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR)) return 0;
    if (n <= 0) {
        /* one side went: the other gets what it is owed, then goes too */
        if (upstream) {
            flush_side(c, 0);
            conn_free(c, "upstream");
        } else {
            flush_side(c, 1);
            conn_free(c, "peer");
        }
        return -1;
    }
    if (upstream) {
        if (bytes_add(&c->to_client, buf, (size_t)n) < 0 ||
            (!c->values_dead && bytes_add(&c->values, buf, (size_t)n) < 0)) {
            conn_free(c, "oom");
            return -1;
        }
        take_values(c);
        if (flush_side(c, 0) < 0) {
            conn_free(c, "peer");
            return -1;
        }
    } else {
        if (bytes_add(&c->to_server, buf, (size_t)n) < 0) {
            conn_free(c, "oom");
            return -1;
        }
        take_requests(c, buf, (size_t)n);
        if (flush_side(c, 1) < 0) {
            conn_free(c, "upstream");
            return -1;
        }
    }
    return 0;
}

static void accept_on(wsr_proxy *px, listener *l)
{
    for (;;) {
        int fd = accept4(l->fd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
        if (fd < 0) return;
        pconn *c = calloc(1, sizeof *c);
        if (!c) {
            close(fd);
            continue;
        }
        c->px = px;
        c->cfd = fd;
        c->id = ++px->next_id;
        c->pid = -1;
        rr_init(&c->in);
        char addr[160] = "?";
        if (l->is_unix) {
            struct ucred cred;
            socklen_t cl = sizeof cred;
            if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &cl) == 0) c->pid = cred.pid;
            snprintf(addr, sizeof addr, "unix:%s", px->unixsocket);
        } else {
            struct sockaddr_storage ss;
            socklen_t sl = sizeof ss;
            char host[64] = "?", serv[16] = "0";
            if (getpeername(fd, (struct sockaddr *)&ss, &sl) == 0)
                getnameinfo((struct sockaddr *)&ss, sl, host, sizeof host, serv, sizeof serv,
                            NI_NUMERICHOST | NI_NUMERICSERV);
            snprintf(addr, sizeof addr, "%s:%s", host, serv);
            int one = 1;
            setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
        }
        c->next = px->conns;
        if (px->conns) px->conns->prev = c;
        px->conns = c;
        if (px->rec) rec_check(px, wsr_write_open(px->rec, c->id, wall_ms(), addr, c->pid, NULL, 0));
        c->sfd = connect_upstream(px);
        struct epoll_event ev = {.events = EPOLLIN, .data.ptr = c};
        epoll_ctl(px->epfd, EPOLL_CTL_ADD, fd, &ev);
        if (c->sfd < 0) {
            rec_note(c, "conn %llu: the upstream cannot be reached: %s",
                     (unsigned long long)c->id, strerror(errno));
            conn_free(c, "upstream");
            continue;
        }
        struct epoll_event sev = {.events = EPOLLIN, .data.ptr = (char *)c + 1};
        epoll_ctl(px->epfd, EPOLL_CTL_ADD, c->sfd, &sev);
    }
}

int wsr_proxy_turn(wsr_proxy *px, int max_wait_ms)
{
    struct epoll_event evs[MAX_EVENTS];
    if (px->rec) rec_check(px, wsr_writer_flush(px->rec));
    int n = epoll_wait(px->epfd, evs, MAX_EVENTS, max_wait_ms);
    if (n < 0) {
        if (errno == EINTR) return 0;
        perror("wsim proxy: epoll_wait");
        return -1;
    }
    for (int i = 0; i < n; i++) {
        void *tag = evs[i].data.ptr;
        if (tag == &px->lis[0] || tag == &px->lis[1]) {
            accept_on(px, tag);
            continue;
        }
        int upstream;
        pconn *c = tag_conn(tag, &upstream);
        /* a connection freed earlier in this batch of events is not looked at again */
        int live = 0;
        for (pconn *x = px->conns; x && !live; x = x->next) live = x == c;
        if (!live) continue;
        if (evs[i].events & EPOLLOUT) {
            if (flush_side(c, upstream) < 0) {
                conn_free(c, upstream ? "upstream" : "peer");
                continue;
            }
        }
        if (evs[i].events & (EPOLLIN | EPOLLHUP | EPOLLERR)) read_side(c, upstream);
    }
    return 0;
}

/* ----- Making and freeing ------------------------------------------------------------------ */

static int listen_on(wsr_proxy *px, int fd, int is_unix)
{
    listener *l = &px->lis[px->nlis++];
    l->fd = fd;
    l->is_unix = is_unix;
    struct epoll_event ev = {.events = EPOLLIN, .data.ptr = l};
    return epoll_ctl(px->epfd, EPOLL_CTL_ADD, fd, &ev);
}

/* Reads the upstream URL into px; -1 when it is not one. */
static int parse_upstream(wsr_proxy *px, const char *url)
{
    if (!strncmp(url, "unix://", 7)) {
        px->upstream_path = strdup(url + 7);
        return px->upstream_path && px->upstream_path[0] == '/' ? 0 : -1;
    }
    if (!strncmp(url, "redis://", 8)) url += 8;
    const char *colon = strrchr(url, ':');
    px->upstream_port = colon ? atoi(colon + 1) : 6379;
    px->upstream_host = colon ? strndup(url, (size_t)(colon - url)) : strdup(url);
    return px->upstream_host && px->upstream_host[0] && px->upstream_port > 0 &&
                   px->upstream_port < 65536
               ? 0
               : -1;
}

wsr_proxy *wsr_proxy_new(const wsr_proxy_options *opt, char *err, size_t errcap)
{
    wsr_proxy *px = calloc(1, sizeof *px);
    if (!px) {
        snprintf(err, errcap, "out of memory");
        return NULL;
    }
    px->epfd = epoll_create1(EPOLL_CLOEXEC);
    if (!opt->upstream || parse_upstream(px, opt->upstream) < 0) {
        snprintf(err, errcap, "bad upstream '%s' (redis://HOST:PORT or unix:///PATH)",
                 opt->upstream ? opt->upstream : "");
        goto fail;
    }
    if (opt->port >= 0) {
        int fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0), one = 1;
        struct sockaddr_in sa = {.sin_family = AF_INET, .sin_port = htons((uint16_t)opt->port),
                                 .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
        setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
        if (fd < 0 || bind(fd, (struct sockaddr *)&sa, sizeof sa) < 0 || listen(fd, 511) < 0) {
            snprintf(err, errcap, "cannot listen on 127.0.0.1:%d: %s", opt->port, strerror(errno));
            if (fd >= 0) close(fd);
            goto fail;
        }
        socklen_t sl = sizeof sa;
        getsockname(fd, (struct sockaddr *)&sa, &sl);
        px->port = ntohs(sa.sin_port);
        listen_on(px, fd, 0);
    }
    if (opt->unixsocket) {
        struct sockaddr_un sa = {.sun_family = AF_UNIX};
        if (strlen(opt->unixsocket) >= sizeof sa.sun_path) {
            snprintf(err, errcap, "unix socket path too long: %s", opt->unixsocket);
            goto fail;
        }
        strcpy(sa.sun_path, opt->unixsocket);
        unlink(opt->unixsocket);
        int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
        if (fd < 0 || bind(fd, (struct sockaddr *)&sa, sizeof sa) < 0 || listen(fd, 511) < 0) {
            snprintf(err, errcap, "cannot listen on %s: %s", opt->unixsocket, strerror(errno));
            if (fd >= 0) close(fd);
            goto fail;
        }
        px->unixsocket = strdup(opt->unixsocket);
        listen_on(px, fd, 1);
    }
    if (!px->nlis) {
        snprintf(err, errcap, "nothing to listen on (no port, no unix socket)");
        goto fail;
    }
    const char *meta[] = {"source", "wsim proxy", "upstream", opt->upstream, "clock", "wall"};
    px->rec = wsr_writer_open(opt->record, meta, 3, err, errcap);
    if (!px->rec) goto fail;
    return px;
fail:
    wsr_proxy_free(px, NULL, 0);
    return NULL;
}

int wsr_proxy_port(const wsr_proxy *px) { return px->port; }

int wsr_proxy_free(wsr_proxy *px, char *err, size_t errcap)
{
    if (!px) return 0;
    while (px->conns) conn_free(px->conns, "shutdown");
    for (int i = 0; i < px->nlis; i++) close(px->lis[i].fd);
    if (px->unixsocket) unlink(px->unixsocket);
    int rc = 0;
    if (px->rec) rc = wsr_writer_close(px->rec, wall_ms(), err, errcap);
    if (px->epfd >= 0) close(px->epfd);
    free(px->unixsocket);
    free(px->upstream_path);
    free(px->upstream_host);
    free(px);
    return rc;
}
