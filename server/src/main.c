/* main.c -- fakeredis-server's command line (docs/server.md, "Options"). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "frs.h"

static void usage(FILE *f)
{
    fprintf(f,
            "usage: fakeredis-server [--port N] [--bind ADDR]... [--unixsocket PATH]\n"
            "                        [--maxclients N] [--requirepass PASS] [--seed N]\n"
            "                        [--clock wall|virtual] [--start-ms MS] [--cluster]\n"
            "                        [--busy-poll-us N] [--published-max N]\n"
            "                        [--published-max-bytes N]\n"
            "                        [--busy-poll-us N] [--quiet-ms N] [--record FILE]\n"
            "                        [--redis-version X.Y.Z]\n"
            "                        [--CONFIG-PARAMETER VALUE]...\n"
            "\n"
            "Serves libfakeredis (Redis " FR_REDIS_VERSION " semantics) over RESP.\n"
            "  --port N            TCP port (default 6379; 0 picks a free one; -1: no TCP;\n"
            "                      with --unixsocket and no --port, TCP is off)\n"
            "  --bind ADDR         address to listen on (default 127.0.0.1; repeatable)\n"
            "  --unixsocket PATH   also listen on this unix socket\n"
            "  --maxclients N      refuse clients beyond N (default 10000)\n"
            "  --requirepass PASS  the default user's password (AUTH / HELLO AUTH)\n"
            "  --seed N            the fake's random seed (default 1)\n"
            "  --clock wall        the fake reads the real clock, as redis-server does:\n"
            "                      TTLs and blocking timeouts pass in real time (default)\n"
            "  --clock virtual     the fake's clock starts at --start-ms and moves only by\n"
            "                      FAKE.TIME (tests that must not depend on the machine)\n"
            "  --clock auto        the virtual clock, moved by the server itself to the next\n"
            "                      deadline once every client has been quiet --quiet-ms\n"
            "  --quiet-ms N        --clock auto's quiet interval, real ms (default 20)\n"
            "  --start-ms MS       the virtual clock's first reading (Unix ms)\n"
            "  --cluster           answer as a one-node Redis Cluster\n"
            "  --busy-poll-us N    after a busy wake, poll this long before sleeping\n"
            "                      (default 30; 0: sleep at once; at most 1000)\n"
            "  --published-max N   FAKE.PUBLISHED keeps the last N messages (default 10000)\n"
            "  --published-max-bytes N\n"
            "                      ... holding at most N bytes (default 16777216); older\n"
            "                      messages are dropped and counted (FAKE.PUBLISHED INFO)\n"
            "  --record FILE       record every command and reply into FILE (FAKE.RECORD\n"
            "                      START/STOP/STATUS at run time); never replaces a file\n"
            "                      that is not a recording\n"
            "  --redis-version V   the version INFO and HELLO claim (default " FR_REDIS_VERSION ")\n"
            "  --NAME VALUE        any redis.conf parameter, as CONFIG SET NAME VALUE\n"
            "\n"
            "On start it prints, flushed, one line per listener and then a ready line:\n"
            "  fakeredis-server listening on 127.0.0.1:PORT\n"
            "  fakeredis-server listening on unix:PATH\n"
            "  fakeredis-server ready pid=PID\n"
            "SIGTERM or SIGINT (or SHUTDOWN) stops it.\n");
}

/* A decimal option value, or exit with a message. */
static long long number(const char *opt, const char *v)
{
    long long n;
    if (!v || !frs_string2ll(v, strlen(v), &n)) {
        fprintf(stderr, "fakeredis-server: %s needs an integer, got '%s'\n", opt, v ? v : "");
        exit(2);
    }
    return n;
}

/* Whether v is a version as Redis writes one: 2 or 3 dot-separated numbers of at most 5
 * digits ("7.0.15", "8.4.0", "8.4"). */
static int version_ok(const char *v)
{
    int parts = 0;
    while (*v) {
        int digits = 0;
        while (*v >= '0' && *v <= '9' && digits <= 5) {
            v++;
            digits++;
        }
        if (digits == 0 || digits > 5) return 0;
        parts++;
        if (*v == '.') {
            v++;
            if (!*v) return 0;
        } else if (*v) {
            return 0;
        }
    }
    return parts == 2 || parts == 3;
}

/* Reads the command line into *opt (whose config array has room for every argument).
 * Returns -1 to go on and serve, or the exit status: 0 after --help / --version, 2 after a
 * bad argument (its message printed). */
static int parse_args(int argc, char **argv, frs_options *opt)
{
    int port_given = 0, quiet_ms = 0;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        const char *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
            usage(stdout);
            return 0;
        } else if (!strcmp(a, "--version") || !strcmp(a, "-v")) {
            printf("fakeredis-server %s (Redis %s semantics)\n", FR_VERSION, FR_REDIS_VERSION);
            return 0;
        } else if (!strcmp(a, "--cluster")) {
            opt->cluster = 1;
            continue;
        }
        if (strncmp(a, "--", 2) != 0 || !v) {
            fprintf(stderr, "fakeredis-server: bad argument '%s'\n\n", a);
            usage(stderr);
            return 2;
        }
        i++;
        if (!strcmp(a, "--port")) {
            opt->port = (int)number(a, v);
            port_given = 1;
            if (opt->port < -1 || opt->port > 65535) {
                fprintf(stderr, "fakeredis-server: --port must be -1..65535\n");
                return 2;
            }
        } else if (!strcmp(a, "--bind")) {
            if (opt->nbind == FRS_MAX_LISTENERS) {
                fprintf(stderr, "fakeredis-server: at most %d --bind addresses\n",
                        FRS_MAX_LISTENERS);
                return 2;
            }
            opt->bind[opt->nbind++] = (char *)v;
        } else if (!strcmp(a, "--unixsocket")) {
            opt->unixsocket = (char *)v;
        } else if (!strcmp(a, "--maxclients")) {
            opt->maxclients = number(a, v);
            if (opt->maxclients < 1) {
                fprintf(stderr, "fakeredis-server: --maxclients must be at least 1\n");
                return 2;
            }
        } else if (!strcmp(a, "--requirepass")) {
            opt->requirepass = (char *)v;
        } else if (!strcmp(a, "--seed")) {
            opt->seed = (uint64_t)number(a, v);
        } else if (!strcmp(a, "--start-ms")) {
            opt->start_ms = number(a, v);
        } else if (!strcmp(a, "--busy-poll-us")) {
            long long us = number(a, v);
            if (us < 0 || us > FRS_MAX_BUSY_POLL_US) {
                fprintf(stderr, "fakeredis-server: --busy-poll-us must be 0..%d\n",
                        FRS_MAX_BUSY_POLL_US);
                return 2;
            }
            opt->busy_poll_us = (int)us;
        } else if (!strcmp(a, "--published-max") || !strcmp(a, "--published-max-bytes")) {
            long long n = number(a, v);
            if (n < 0) {
                fprintf(stderr, "fakeredis-server: %s must be 0 or more\n", a);
                return 2;
            }
            if (!opt->published_set) {
                opt->published_max = FR_PUBLISHED_DEFAULT_MAX;
                opt->published_max_bytes = FR_PUBLISHED_DEFAULT_MAX_BYTES;
                opt->published_set = 1;
            }
            if (!strcmp(a, "--published-max")) opt->published_max = (size_t)n;
            else opt->published_max_bytes = (size_t)n;
        } else if (!strcmp(a, "--clock")) {
            if (!strcmp(v, "wall")) {
                opt->wall_clock = 1;
                opt->auto_advance_ms = 0;
            } else if (!strcmp(v, "virtual") || !strcmp(v, "auto")) {
                opt->wall_clock = 0;
                opt->auto_advance_ms = !strcmp(v, "auto") ? (quiet_ms ? quiet_ms : 20) : 0;
            } else {
                fprintf(stderr, "fakeredis-server: --clock is wall, virtual or auto\n");
                return 2;
            }
        } else if (!strcmp(a, "--quiet-ms")) {
            long long ms = number(a, v);
            if (ms < 1 || ms > 60000) {
                fprintf(stderr, "fakeredis-server: --quiet-ms must be 1..60000\n");
                return 2;
            }
            quiet_ms = (int)ms;
            if (opt->auto_advance_ms) opt->auto_advance_ms = quiet_ms;
        } else if (!strcmp(a, "--record")) {
            opt->record = v;
        } else if (!strcmp(a, "--redis-version")) {
            if (!version_ok(v)) {
                fprintf(stderr, "fakeredis-server: --redis-version needs a version such as "
                                "8.4.0 (digits and dots, 2 or 3 numbers), got '%s'\n", v);
                return 2;
            }
            opt->redis_version = v;
        } else {
            opt->config[opt->nconfig++] = (char *)(a + 2);
            opt->config[opt->nconfig++] = (char *)v;
        }
    }
    if (opt->unixsocket && !port_given) opt->port = -1;
    if (quiet_ms && !opt->auto_advance_ms) {
        fprintf(stderr, "fakeredis-server: --quiet-ms needs --clock auto\n");
        return 2;
    }
    return -1;
}

int main(int argc, char **argv)
{
    /* the wall clock by default: a client's own timeouts (BLPOP q 0.2) must line up */
    frs_options opt = {.port = 6379, .seed = 1, .busy_poll_us = FRS_DEFAULT_BUSY_POLL_US,
                       .wall_clock = 1};
    opt.config = calloc((size_t)argc + 1, sizeof(char *));
    if (!opt.config) return 1;
    int status = parse_args(argc, argv, &opt);
    if (status >= 0) {
        free(opt.config); /* every way out frees what main made */
        return status;
    }

    frs_server srv;
    int rc = frs_server_init(&srv, &opt);
    if (rc == 0) rc = frs_server_run(&srv);
    frs_server_free(&srv);
    free(opt.config);
    return rc == 0 ? 0 : 1;
}
