/* diff_runner.c -- run differential scripts on the fake and on a real redis-server.
 *
 *   diff_runner [--verbose] script.redis...
 *
 * For each script: start a fresh redis-server (a one-node cluster if the script says
 * !cluster) and a fresh fake server on the wall clock, FLUSHALL both, then run every line
 * on both and compare the raw RESP2 replies byte for byte (or as the line's modifiers
 * say).  Each mismatch is printed with the command that caused it and both replies,
 * escaped; the run goes on.  The last line is "N passed, M failed", counting commands.
 *
 * Exit status: 0 when nothing failed, 1 when a command failed (or a server could not be
 * started), 2 for a bad command line or a malformed script (nothing is run then).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>
#include <errno.h>

#include "diff_script.h"
#include "fakeredis.h"
#include "redis_harness.h"

#define SHOW_MAX 4096 /* bytes of a reply shown in a mismatch report */

/* One script client: a connection to each side, made when the script first uses it. */
typedef struct side_client {
    rh_conn *real;   /* connection to redis-server, NULL until first use */
    fr_client *fake; /* client of the fake, NULL until first use */
} side_client;

/* Everything one script run needs. */
typedef struct run {
    const ds_script *script; /* the script being run */
    int verbose;             /* print every command and its replies */
    rh_server *real;         /* the real server */
    fr_server *fake;         /* the fake server */
    side_client clients[DS_MAX_CLIENTS + 1]; /* indexed by client number, 1-based */
    long compared;           /* commands compared so far */
    long failed;             /* of which failed */
    rh_buf real_reply;       /* the last reply of the real server */
    rh_buf fake_reply;       /* the last reply of the fake */
} run;

static void sleep_ms(long ms) {
    struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
    while (nanosleep(&ts, &ts) != 0 && errno == EINTR) {
    }
}

/* Prints "  label: <escaped reply>" (shortened past SHOW_MAX bytes). */
static void show(const char *label, const char *p, size_t len) {
    rh_buf e = {0};
    size_t n = len > SHOW_MAX ? SHOW_MAX : len;
    ds_escape(p, n, &e);
    printf("  %s: %s", label, e.data ? e.data : "");
    if (n < len) printf("... (%zu bytes in all)", len);
    printf("\n");
    rh_buf_free(&e);
}

/* Connects client i on both sides if it is not connected yet.  0, or -1. */
static int ensure_client(run *r, int i) {
    side_client *sc = &r->clients[i];
    if (!sc->real) {
        sc->real = rh_connect(r->real);
        if (!sc->real) return -1;
    }
    if (!sc->fake) {
        sc->fake = fr_client_new(r->fake);
        if (!sc->fake) {
            fprintf(stderr, "diff_runner: fr_client_new failed\n");
            return -1;
        }
    }
    return 0;
}

/* Drops client i on both sides, as a disconnect; the next use reconnects it. */
static void drop_client(run *r, int i) {
    side_client *sc = &r->clients[i];
    rh_close(sc->real);
    sc->real = NULL;
    if (sc->fake) fr_client_free(sc->fake);
    sc->fake = NULL;
}

/* Runs a command on the real side; 0, or -1 (message printed) on a connection failure. */
static int run_real(run *r, int client, int argc, char **argv, size_t *lens) {
    rh_conn *c = r->clients[client].real;
    if (rh_send(c, argc, argv, lens) != 0 || rh_read_reply(c, &r->real_reply) != 0) {
        rh_buf_reset(&r->real_reply);
        rh_buf_printf(&r->real_reply, "<no reply: %s>", rh_conn_error(c));
        return -1;
    }
    return 0;
}

static void run_fake(run *r, int client, int argc, char **argv, size_t *lens) {
    size_t len = 0;
    const char *p = fr_exec_resp(r->clients[client].fake, argc, (const char *const *)argv,
                                 lens, &len);
    rh_buf_reset(&r->fake_reply);
    rh_buf_append(&r->fake_reply, p, len);
}

/* Whether the command is QUIT, after which both sides drop the connection. */
static int is_quit(const ds_line *l) {
    return l->argc >= 1 && l->argvlen[0] == 4 && strcasecmp(l->argv[0], "quit") == 0;
}

/* Runs one command line; returns 0 to go on, -1 to abandon the script. */
static int run_command(run *r, const ds_line *l) {
    const char *name = r->script->name;
    if (ensure_client(r, l->client) != 0) {
        printf("%s:%d: %s\n  cannot connect client %d\n", name, l->lineno, l->text, l->client);
        r->compared++;
        r->failed++;
        return -1;
    }
    if (l->flags & DS_FAKE) {
        run_fake(r, l->client, l->argc, l->argv, l->argvlen);
        if (r->verbose) {
            printf("%s:%d: %s\n", name, l->lineno, l->text);
            show("fake", r->fake_reply.data, r->fake_reply.len);
        }
        if (is_quit(l)) drop_client(r, l->client);
        return 0;
    }

    int real_ok = run_real(r, l->client, l->argc, l->argv, l->argvlen) == 0;
    run_fake(r, l->client, l->argc, l->argv, l->argvlen);
    r->compared++;
    int same = real_ok && ds_replies_equal(l->flags, r->real_reply.data, r->real_reply.len,
                                           r->fake_reply.data, r->fake_reply.len);
    if (!same || r->verbose) {
        printf("%s:%d: %s%s\n", name, l->lineno, l->text, same ? "" : "   <-- MISMATCH");
        if (!same && (l->flags & DS_SORTED)) printf("  (compared as multisets)\n");
        if (!same && (l->flags & DS_TYPE)) printf("  (compared by type only)\n");
        show("real", r->real_reply.data, r->real_reply.len);
        show("fake", r->fake_reply.data, r->fake_reply.len);
        if (!same && real_ok && !(l->flags & (DS_SORTED | DS_TYPE))) {
            size_t n = r->real_reply.len < r->fake_reply.len ? r->real_reply.len
                                                              : r->fake_reply.len;
            size_t i = 0;
            while (i < n && r->real_reply.data[i] == r->fake_reply.data[i]) i++;
            printf("  (first difference at byte %zu)\n", i);
        }
    }
    if (!same) r->failed++;

    if (!real_ok) {
        /* The real connection is unusable now: reconnect this client on both sides, or
         * give up on the script if the server itself is gone. */
        drop_client(r, l->client);
        if (ensure_client(r, l->client) != 0) {
            printf("%s:%d: the real server is not reachable any more; abandoning the script\n",
                   name, l->lineno);
            rh_print_log_tail(r->real, 20);
            return -1;
        }
    } else if (is_quit(l)) {
        drop_client(r, l->client);
    }
    return 0;
}

/* FLUSHALL on both sides through client 1, before the first line. */
static int flush_both(run *r) {
    char *argv[] = {"FLUSHALL"};
    if (ensure_client(r, 1) != 0) return -1;
    if (run_real(r, 1, 1, argv, NULL) != 0 ||
        r->real_reply.len != 5 || memcmp(r->real_reply.data, "+OK\r\n", 5) != 0) {
        fprintf(stderr, "%s: FLUSHALL on the real server failed: %s\n", r->script->name,
                r->real_reply.data ? r->real_reply.data : "");
        return -1;
    }
    run_fake(r, 1, 1, argv, NULL);
    return 0;
}

/* Runs one script; adds its counts to *passed and *failed. */
static void run_script(const ds_script *s, int verbose, long *passed, long *failed) {
    run r;
    memset(&r, 0, sizeof r);
    r.script = s;
    r.verbose = verbose;

    rh_options opt = {0};
    opt.cluster = s->cluster;
    opt.quiet = !verbose;
    r.real = rh_start(&opt);
    if (!r.real) {
        printf("%s: cannot start redis-server (see above)\n", s->name);
        (*failed)++;
        return;
    }
    fr_config cfg = fr_config_default();
    cfg.cluster_enabled = s->cluster;
    r.fake = fr_server_new(&cfg);
    if (!r.fake) {
        printf("%s: fr_server_new failed\n", s->name);
        rh_stop(r.real);
        (*failed)++;
        return;
    }
    fr_clock_use_wall(r.fake, 1);

    if (flush_both(&r) != 0) {
        r.failed++;
    } else {
        for (size_t i = 0; i < s->count; i++) {
            const ds_line *l = &s->lines[i];
            if (l->kind == DS_SLEEP) {
                sleep_ms(l->sleep_ms);
                continue;
            }
            if (run_command(&r, l) != 0) break;
        }
    }

    printf("%s: %ld commands compared, %ld failed\n", s->name, r.compared, r.failed);
    *passed += r.compared - r.failed;
    *failed += r.failed;

    for (int i = 1; i <= DS_MAX_CLIENTS; i++) drop_client(&r, i);
    fr_server_free(r.fake);
    rh_stop(r.real);
    rh_buf_free(&r.real_reply);
    rh_buf_free(&r.fake_reply);
}

static void usage(FILE *f) {
    fprintf(f, "usage: diff_runner [--verbose] script.redis...\n"
               "Runs each script on the fake and on a fresh real redis-server and compares\n"
               "the raw RESP replies.  Script format: tests/diff/README.md.\n");
}

int main(int argc, char **argv) {
    int verbose = 0;
    int first = 1;
    for (; first < argc && argv[first][0] == '-'; first++) {
        if (!strcmp(argv[first], "--verbose") || !strcmp(argv[first], "-v")) {
            verbose = 1;
        } else if (!strcmp(argv[first], "--help") || !strcmp(argv[first], "-h")) {
            usage(stdout);
            return 0;
        } else if (!strcmp(argv[first], "--")) {
            first++;
            break;
        } else {
            fprintf(stderr, "diff_runner: unknown option %s\n", argv[first]);
            usage(stderr);
            return 2;
        }
    }
    if (first >= argc) {
        usage(stderr);
        return 2;
    }

    /* Parse everything first: a typo in any script runs nothing. */
    int nscripts = argc - first;
    ds_script **scripts = calloc((size_t)nscripts, sizeof *scripts);
    if (!scripts) return 2;
    int bad = 0;
    for (int i = 0; i < nscripts; i++) {
        scripts[i] = ds_parse_file(argv[first + i], stderr);
        if (!scripts[i]) bad = 1;
    }
    if (bad) {
        for (int i = 0; i < nscripts; i++) ds_script_free(scripts[i]);
        free(scripts);
        return 2;
    }

    setvbuf(stdout, NULL, _IOLBF, 0);
    long passed = 0, failed = 0;
    for (int i = 0; i < nscripts; i++) run_script(scripts[i], verbose, &passed, &failed);
    printf("%ld passed, %ld failed\n", passed, failed);

    for (int i = 0; i < nscripts; i++) ds_script_free(scripts[i]);
    free(scripts);
    return failed ? 1 : 0;
}
