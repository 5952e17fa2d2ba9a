/* frs_harness.c -- starting fakeredis-server and talking raw RESP to it (frs_harness.h). */
#include "frs_harness.h"

#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#ifndef FRS_BINARY
#error "FRS_BINARY must name the fakeredis-server binary"
#endif

static frsh_server *live[64]; /* servers to stop at exit */

/* At exit (a failed test skips its frsh_stop): kill what is left, remove its files. */
static void stop_all(void)
{
    for (int i = 0; i < 64; i++)
        if (live[i]) {
            kill(live[i]->pid, SIGKILL);
            waitpid(live[i]->pid, NULL, 0);
            if (!getenv("FRS_KEEP")) {
                unlink(live[i]->log);
                unlink(live[i]->sock);
                rmdir(live[i]->dir);
            }
        }
}

/* Milliseconds of the monotonic clock. */
static int64_t now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* Starts binary with argv[] (after its name; "{sock}" stands for the unix socket path in
 * the server's temporary directory, "{dir}" for that directory) and waits for a stdout line starting "<name> ready pid=". */
static frsh_server *spawn(const char *binary, const char *name, const char *const *args)
{
    static int registered;
    if (!registered) {
        atexit(stop_all);
        registered = 1;
    }
    frsh_server *s = calloc(1, sizeof(*s));
    assert_non_null(s);
    snprintf(s->dir, sizeof(s->dir), "/tmp/frs-test.XXXXXX");
    if (!mkdtemp(s->dir)) {
        print_error("mkdtemp: %s\n", strerror(errno));
        free(s);
        return NULL;
    }
    snprintf(s->sock, sizeof(s->sock), "%s/s.sock", s->dir);
    snprintf(s->log, sizeof(s->log), "%s/stderr.log", s->dir);
    int out[2];
    assert_int_equal(pipe(out), 0);
    const char *argv[64] = {binary};
    int argc = 1;
    for (int i = 0; args && args[i] && argc < 62; i++)
        argv[argc++] = strcmp(args[i], "{sock}") == 0 ? s->sock
                       : strcmp(args[i], "{dir}") == 0 ? s->dir : args[i];
    argv[argc] = NULL;
    pid_t parent = getpid();
    s->pid = fork();
    assert_true(s->pid >= 0);
    if (s->pid == 0) {
        prctl(PR_SET_PDEATHSIG, SIGTERM);
        if (getppid() != parent) _exit(1);
        dup2(out[1], 1);
        int err = open(s->log, O_WRONLY | O_CREAT | O_TRUNC, 0644);
        if (err >= 0) dup2(err, 2);
        close(out[0]);
        execv(binary, (char *const *)argv);
        _exit(127);
    }
    close(out[1]);
    /* Read stdout lines until "ready", within the timeout. */
    char lines[4096], marker[128];
    snprintf(marker, sizeof marker, "%s ready pid=", name);
    size_t len = 0;
    int64_t deadline = now_ms() + FRSH_TIMEOUT_MS;
    int ready = 0;
    while (!ready && now_ms() < deadline && len < sizeof(lines) - 1) {
        struct pollfd p = {.fd = out[0], .events = POLLIN};
        if (poll(&p, 1, 100) <= 0) continue;
        ssize_t n = read(out[0], lines + len, sizeof(lines) - 1 - len);
        if (n <= 0) break;
        len += (size_t)n;
        lines[len] = '\0';
        ready = strstr(lines, marker) != NULL;
    }
    close(out[0]);
    lines[len] = '\0';
    if (!ready) {
        print_error("%s did not start; stdout:\n%s\n", name, lines);
        kill(s->pid, SIGKILL);
        waitpid(s->pid, NULL, 0);
        free(s);
        return NULL;
    }
    const char *at = strstr(lines, "listening on 127.0.0.1:");
    if (at) s->port = atoi(at + strlen("listening on 127.0.0.1:"));
    for (int i = 0; i < 64; i++)
        if (!live[i]) {
            live[i] = s;
            break;
        }
    return s;
}

frsh_server *frsh_start(const char *const *extra)
{
    /* --dir: its files (SAVE, a FLUSHALL with save points, the file read at start) stay in
     * its own directory, never in the test's */
    const char *args[64] = {"--port", "0", "--unixsocket", "{sock}", "--dir", "{dir}"};
    int argc = 6;
    for (int i = 0; extra && extra[i] && argc < 62; i++) args[argc++] = extra[i];
    args[argc] = NULL;
    return spawn(FRS_BINARY, "fakeredis-server", args);
}

frsh_server *frsh_start_program(const char *binary, const char *name, const char *const *args)
{
    return spawn(binary, name, args);
}

int frsh_stop(frsh_server *s)
{
    if (!s) return -1;
    int status = -1;
    kill(s->pid, SIGTERM);
    int64_t deadline = now_ms() + 5000;
    pid_t r = 0;
    while ((r = waitpid(s->pid, &status, WNOHANG)) == 0 && now_ms() < deadline) frsh_sleep_ms(10);
    if (r == 0) {
        kill(s->pid, SIGKILL);
        waitpid(s->pid, &status, 0);
        status = -1;
    }
    for (int i = 0; i < 64; i++)
        if (live[i] == s) live[i] = NULL;
    if (!getenv("FRS_KEEP")) {
        unlink(s->log);
        unlink(s->sock);
        rmdir(s->dir);
    }
    free(s);
    return status;
}

/* A connection around a connected socket. */
static frsh_conn *wrap(int fd)
{
    frsh_conn *c = calloc(1, sizeof(*c));
    assert_non_null(c);
    c->fd = fd;
    return c;
}

frsh_conn *frsh_connect_path(const char *path)
{
    struct sockaddr_un sa = {.sun_family = AF_UNIX};
    snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", path);
    int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0) return NULL;
    if (connect(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0) {
        close(fd);
        return NULL;
    }
    return wrap(fd);
}

frsh_conn *frsh_connect(frsh_server *s)
{
    frsh_conn *c = frsh_connect_path(s->sock);
    if (!c) fail_msg("connect %s: %s", s->sock, strerror(errno));
    return c;
}

frsh_conn *frsh_connect_tcp(int port)
{
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    assert_true(fd >= 0);
    struct sockaddr_in sa = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
    sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (connect(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0)
        fail_msg("connect 127.0.0.1:%d: %s", port, strerror(errno));
    int one = 1;
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
    return wrap(fd);
}

void frsh_close(frsh_conn *c)
{
    if (!c) return;
    close(c->fd);
    rh_buf_free(&c->in);
    free(c);
}

void frsh_send_raw(frsh_conn *c, const void *p, size_t n)
{
    const char *b = p;
    int64_t deadline = now_ms() + FRSH_TIMEOUT_MS;
    while (n) {
        ssize_t w = send(c->fd, b, n, MSG_NOSIGNAL | MSG_DONTWAIT);
        if (w > 0) {
            b += w;
            n -= (size_t)w;
            continue;
        }
        if (w < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR)) {
            if (now_ms() > deadline) fail_msg("send: timed out");
            struct pollfd pf = {.fd = c->fd, .events = POLLOUT};
            poll(&pf, 1, 100);
            continue;
        }
        fail_msg("send: %s", strerror(errno));
    }
}

/* Sends args[0..n) as one RESP multibulk command. */
static void send_args(frsh_conn *c, int n, const char *const *args)
{
    rh_buf b = {0};
    rh_buf_printf(&b, "*%d\r\n", n);
    for (int i = 0; i < n; i++) {
        rh_buf_printf(&b, "$%zu\r\n", strlen(args[i]));
        rh_buf_append(&b, args[i], strlen(args[i]));
        rh_buf_append(&b, "\r\n", 2);
    }
    frsh_send_raw(c, b.data, b.len);
    rh_buf_free(&b);
}

/* Sends arg0 and the arguments after it, up to the NULL that ends them (at most 256). */
static void send_list(frsh_conn *c, const char *arg0, va_list ap)
{
    const char *args[256];
    int n = 0;
    for (const char *a = arg0; a && n < 256; a = va_arg(ap, const char *)) args[n++] = a;
    send_args(c, n, args);
}

void frsh_send(frsh_conn *c, const char *arg0, ...)
{
    va_list ap;
    va_start(ap, arg0);
    send_list(c, arg0, ap);
    va_end(ap);
}

/* The end of the CRLF-terminated line at p, or NULL if incomplete. */
static const char *line_end(const char *p, const char *lim)
{
    for (const char *q = p; q + 1 < lim; q++)
        if (q[0] == '\r' && q[1] == '\n') return q + 2;
    return NULL;
}

/* Length of the reply at p (see frsh_reply_len), nested depth levels deep. */
static long reply_len(const char *p, const char *lim, int depth)
{
    if (p >= lim) return 0;
    if (depth > 64) return -1;
    const char *e = line_end(p, lim);
    if (!e) return 0;
    long long n = strtoll(p + 1, NULL, 10);
    switch (*p) {
    case '+': case '-': case ':': case '_': case ',': case '#': case '(':
        return e - p;
    case '$': case '=': case '!':
        if (n < 0) return e - p;
        if (lim - e < n + 2) return 0;
        return (e - p) + n + 2;
    case '*': case '~': case '>': case '%': case '|': {
        if (n < 0) return e - p;
        long long items = (*p == '%' || *p == '|') ? 2 * n : n;
        const char *q = e;
        for (long long i = 0; i < items; i++) {
            long l = reply_len(q, lim, depth + 1);
            if (l <= 0) return l;
            q += l;
        }
        if (*p == '|') { /* an attribute precedes the real reply */
            long l = reply_len(q, lim, depth + 1);
            if (l <= 0) return l;
            q += l;
        }
        return q - p;
    }
    default:
        return -1;
    }
}

long frsh_reply_len(const char *p, size_t n) { return reply_len(p, p + n, 0); }

int frsh_read(frsh_conn *c, rh_buf *out, int timeout_ms)
{
    int64_t deadline = now_ms() + timeout_ms;
    for (;;) {
        long l = c->in.len ? frsh_reply_len(c->in.data, c->in.len) : 0;
        if (l < 0) return -1;
        if (l > 0) {
            rh_buf_reset(out);
            rh_buf_append(out, c->in.data, (size_t)l);
            memmove(c->in.data, c->in.data + l, c->in.len - (size_t)l);
            c->in.len -= (size_t)l;
            return 0;
        }
        int64_t left = deadline - now_ms();
        if (left <= 0) return -1;
        struct pollfd pf = {.fd = c->fd, .events = POLLIN};
        if (poll(&pf, 1, (int)(left < 100 ? left : 100)) <= 0) continue;
        char buf[65536];
        ssize_t n = recv(c->fd, buf, sizeof(buf), 0);
        if (n == 0 || (n < 0 && errno == ECONNRESET)) return 1;
        if (n < 0) {
            if (errno == EINTR || errno == EAGAIN) continue;
            return -1;
        }
        rh_buf_append(&c->in, buf, (size_t)n);
    }
}

void frsh_expect_reply(frsh_conn *c, rh_buf *out)
{
    int rc = frsh_read(c, out, FRSH_TIMEOUT_MS);
    if (rc != 0)
        fail_msg("no reply (%s); unread: %s", rc > 0 ? "connection closed" : "timeout",
                 frsh_show(c->in.data, c->in.len));
}

const char *frsh_call(frsh_conn *c, rh_buf *out, const char *arg0, ...)
{
    va_list ap;
    va_start(ap, arg0);
    send_list(c, arg0, ap);
    va_end(ap);
    frsh_expect_reply(c, out);
    return out->data;
}

void frsh_expect_eof(frsh_conn *c, rh_buf *rest, int timeout_ms)
{
    int64_t deadline = now_ms() + timeout_ms;
    if (rest && c->in.len) rh_buf_append(rest, c->in.data, c->in.len);
    c->in.len = 0;
    for (;;) {
        int64_t left = deadline - now_ms();
        if (left <= 0) fail_msg("the server did not close the connection");
        struct pollfd pf = {.fd = c->fd, .events = POLLIN};
        if (poll(&pf, 1, (int)(left < 100 ? left : 100)) <= 0) continue;
        char buf[65536];
        ssize_t n = recv(c->fd, buf, sizeof(buf), 0);
        if (n == 0 || (n < 0 && errno == ECONNRESET)) return;
        if (n < 0) continue;
        if (rest) rh_buf_append(rest, buf, (size_t)n);
    }
}

void frsh_sleep_ms(int ms)
{
    struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000L};
    while (nanosleep(&ts, &ts) < 0 && errno == EINTR) {
    }
}

const char *frsh_show(const char *p, size_t n)
{
    static char out[4096];
    size_t w = 0;
    for (size_t i = 0; i < n && w + 8 < sizeof(out); i++) {
        unsigned char ch = (unsigned char)p[i];
        if (ch == '\r') w += (size_t)snprintf(out + w, sizeof(out) - w, "\\r");
        else if (ch == '\n') w += (size_t)snprintf(out + w, sizeof(out) - w, "\\n");
        else if (ch < 0x20 || ch >= 0x7f) w += (size_t)snprintf(out + w, sizeof(out) - w, "\\x%02x", ch);
        else out[w++] = (char)ch;
    }
    if (n && w + 8 >= sizeof(out)) w += (size_t)snprintf(out + w, sizeof(out) - w, "...");
    out[w] = '\0';
    return out;
}

frsh_server *frsh_start_ok(const char *const *extra)
{
    frsh_server *s = frsh_start(extra);
    if (!s) fail_msg("fakeredis-server did not start");
    return s;
}

void frsh_stop_ok(frsh_server *s)
{
    int st = frsh_stop(s);
    if (!(st != -1 && WIFEXITED(st) && WEXITSTATUS(st) == 0))
        fail_msg("fakeredis-server did not exit cleanly on SIGTERM (status %d)", st);
}

void frsh_same_text(const char *got, const char *want)
{
    if (strcmp(got, want) == 0) return;
    int line = 1;
    const char *g = got, *w = want;
    while (*g && *w) {
        const char *ge = strchr(g, '\n'), *we = strchr(w, '\n');
        size_t gl = ge ? (size_t)(ge - g) : strlen(g), wl = we ? (size_t)(we - w) : strlen(w);
        if (gl != wl || memcmp(g, w, gl) != 0)
            fail_msg("line %d differs:\n  got:  %.*s\n  want: %.*s", line, (int)gl, g, (int)wl, w);
        g += gl + (ge ? 1 : 0);
        w += wl + (we ? 1 : 0);
        line++;
    }
    fail_msg("line %d: got %s, want %s", line, *g ? g : "(end)", *w ? w : "(end)");
}

void frsh_window_session(frsh_conn *p, frsh_conn *c, const char *xadd_id, const char *id)
{
    rh_buf r = {0};
    char want[512], flush[256];
    FRSH_CALL(p, &r, "+OK\r\n", "CLIENT", "SETNAME", "producer");
    FRSH_CALL(p, &r, "+OK\r\n", "XGROUP", "CREATE", "orders", "g", "$", "MKSTREAM");
    snprintf(want, sizeof want, "$%zu\r\n%s\r\n", strlen(id), id);
    FRSH_CALL(p, &r, want, "XADD", "orders", xadd_id, "_payload", "o 1");
    snprintf(want, sizeof want, "*1\r\n*2\r\n$6\r\norders\r\n*1\r\n*2\r\n$%zu\r\n%s\r\n*2\r\n"
                                "$8\r\n_payload\r\n$3\r\no 1\r\n", strlen(id), id);
    FRSH_CALL(c, &r, want, "XREADGROUP", "GROUP", "g", "c", "COUNT", "10", "STREAMS", "orders", ">");
    /* a window flush: the write and the settle in one pipeline */
    int n = snprintf(flush, sizeof flush, "*2\r\n$4\r\nINCR\r\n$1\r\nn\r\n"
                                          "*4\r\n$4\r\nXACK\r\n$6\r\norders\r\n$1\r\ng\r\n$%zu\r\n%s\r\n",
                     strlen(id), id);
    frsh_send_raw(c, flush, (size_t)n);
    FRSH_EXPECT(c, &r, ":1\r\n");
    FRSH_EXPECT(c, &r, ":1\r\n");
    FRSH_CALL(c, &r, "+OK\r\n", "MULTI");
    FRSH_CALL(c, &r, "+QUEUED\r\n", "INCR", "n");
    FRSH_CALL(c, &r, "*1\r\n:2\r\n", "EXEC");
    rh_buf_free(&r);
}
