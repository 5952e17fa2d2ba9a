/* wsr_proxy.h -- a recording proxy in front of a real Redis server (`wsim proxy`,
 * docs/recording.md "The proxy").
 *
 * Clients connect to the proxy (a unix socket and/or a loopback TCP port); for each, the
 * proxy opens a connection to the upstream server and forwards the bytes both ways,
 * unchanged and in order.  It parses both directions to write the recording of wsr.h: the
 * client's requests as Redis reads them (resp_request.h), the server's replies as RESP2/RESP3
 * values, each value matched to the oldest command still owed a reply -- except what answers
 * no command: pushes (RESP3 `>` messages, RESP2 `message`/`pmessage`/`smessage` arrays in
 * subscribed mode, MONITOR's lines), which become push lines.  Several values answer one
 * command where Redis sends several (SUBSCRIBE a b: one confirmation per channel;
 * UNSUBSCRIBE with no channel: one per subscription, or one when there is none); none answer
 * a command under CLIENT REPLY OFF or SKIP.  A command's line is written when its reply is
 * complete, so a blocking command's line comes when it is served.
 *
 * What the proxy cannot know as the server knows it: the server's clock (t= is the proxy's
 * wall clock), which commands blocked (no wait lines, no since=), the order in which the
 * server ran two connections' commands (lines of different connections are in the order
 * their replies reached the proxy), and the batch a command arrived in at the server (b= is
 * the read from the client that completed it).  The peer's process id is known for unix
 * socket clients (SO_PEERCRED).
 *
 * One thread, one epoll set, non-blocking sockets; the caller turns the loop
 * (wsr_proxy_turn).  Linux only, as fakeredis-server. */
#ifndef WSR_PROXY_H
#define WSR_PROXY_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct wsr_proxy wsr_proxy;

typedef struct wsr_proxy_options {
    const char *upstream;    /* "unix:///path" or "redis://host[:port]" (port 6379) */
    const char *unixsocket;  /* listen on this unix socket (a stale file is replaced), or NULL */
    int port;                /* listen on 127.0.0.1:port; 0 any free port; -1 no TCP */
    const char *record;      /* the recording's path (wsr_writer_open's rules) */
} wsr_proxy_options;

/* Makes the proxy: its listening sockets and the recording.  The upstream is connected to
 * once per client, when it connects (and a client whose upstream cannot be reached is
 * closed, with a note in the recording).  NULL with a message in err when it cannot. */
wsr_proxy *wsr_proxy_new(const wsr_proxy_options *opt, char *err, size_t errcap);
/* The TCP port it listens on (0 when none). */
int wsr_proxy_port(const wsr_proxy *p);
/* One turn: waits up to max_wait_ms (-1: until something happens) for sockets and serves
 * them.  0, or -1 on a fatal error (said on stderr). */
int wsr_proxy_turn(wsr_proxy *p, int max_wait_ms);
/* Closes every connection, writes the recording's end line, removes the unix socket and
 * frees p.  0, or -1 when the recording could not be written completely (err says why). */
int wsr_proxy_free(wsr_proxy *p, char *err, size_t errcap);

#ifdef __cplusplus
}
#endif

#endif /* WSR_PROXY_H */
