/* diff_runner.c -- run differential scripts on the fake and on a real redis-server.
 *
 *   diff_runner [--verbose] [--events] script.redis...
 *   diff_runner [--verbose] --transcript file.transcript...
 *   diff_runner [--verbose] --record out.transcript script
 *
 * A transcript is a script with each command's recorded reply on the line after it
 * ("= " and the escaped RESP bytes).  --transcript runs it on the fake alone, on the
 * virtual clock (!sleep MS moves it MS ms), and compares every reply with the recorded
 * one: a differential test against a server that need not be installed (the Redis 8.4
 * transcript of XREADGROUP ... CLAIM).  --record runs a script (or a transcript, whose
 * old replies are dropped) on the real server alone ($WSIM_REDIS_SERVER picks the
 * binary) and writes the transcript: the input's lines as they are, a reply line after
 * each command, and a first line naming the server's version.
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
    side_client listener;    /* !events: PSUBSCRIBEd to __key*__:* on both sides */
    rh_buf real_events;      /* the messages the real listener got for the last command */
    rh_buf fake_events;      /* the same on the fake */
    int over_maxmemory;      /* !config maxmemory under 1 MiB: the fake's OOM hook says so */
} run;

static void sleep_ms(long ms) {
    struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
    while (nanosleep(&ts, &ts) != 0 && errno == EINTR) {
    }
}

/* Prints "  label: <escaped reply>" (shortened past SHOW_MAX bytes). */
#define show(label, p, len) ds_show((label), (p), (len), SHOW_MAX)

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
    ds_close_pair(&r->clients[i].real, &r->clients[i].fake);
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

/* The fake's OOM hook (fr_server_set_oom_hook): a real server given a maxmemory under
 * a megabyte by !config is over it whatever it holds (its own use is more), so the fake
 * is told it is too; 0 otherwise.  ctx: the run's flag. */
static int small_maxmemory_hook(fr_server *srv, void *ctx) {
    (void)srv;
    return *(const int *)ctx;
}

/* Runs a !config line: CONFIG SET on the real server (client 1's connection), the same
 * parameter on the fake.  A refusal on either side is a failure; 0 to go on, -1 to
 * abandon the script. */
static int set_config(run *r, const ds_line *l) {
    const char *name = r->script->name;
    if (ensure_client(r, 1) != 0) {
        printf("%s:%d: %s\n  cannot connect client 1\n", name, l->lineno, l->text);
        r->failed++;
        return -1;
    }
    char *argv[4] = {"CONFIG", "SET", l->argv[0], l->argv[1]};
    size_t lens[4] = {6, 3, l->argvlen[0], l->argvlen[1]};
    int real_failed = run_real(r, 1, 4, argv, lens) != 0 ||
                      r->real_reply.len < 1 || r->real_reply.data[0] != '+';
    int fake_rc = fr_server_set_param(r->fake, l->argv[0], l->argv[1]);
    if (fake_rc == 0 && l->argvlen[0] == 9 && strncasecmp(l->argv[0], "maxmemory", 9) == 0) {
        /* a plain number of bytes under 1 MiB; any unit (1kb, 1gb ...) is taken as more */
        char *end;
        long long v = strtoll(l->argv[1], &end, 10);
        r->over_maxmemory = v > 0 && v < 1024 * 1024 && *end == '\0';
        fr_server_set_oom_hook(r->fake, small_maxmemory_hook, &r->over_maxmemory);
    }
    if (real_failed || fake_rc != 0) {
        printf("%s:%d: %s   <-- %s\n", name, l->lineno, l->text,
               real_failed ? "the real server refused it" : "the fake does not follow it");
        if (real_failed) show("real", r->real_reply.data, r->real_reply.len);
        r->failed++;
        return real_failed ? -1 : 0;
    }
    return 0;
}

/* The !events directive: a listener connection on each side PSUBSCRIBEs __key*__:*, and
 * the real server's active expiry is turned off (the fake has none in process), so a
 * key expires on both sides only when a command touches it.  0, or -1 (printed). */
static int start_events(run *r, const ds_line *l) {
    const char *name = r->script->name;
    rh_buf raw = {0};
    char *argv[2] = {"PSUBSCRIBE", "__key*__:*"};
    int rc = 0;
    if (!r->listener.real && !(r->listener.real = rh_connect(r->real))) rc = -1;
    if (!rc && !r->listener.fake && !(r->listener.fake = fr_client_new(r->fake))) rc = -1;
    if (!rc && (rh_send(r->listener.real, 2, argv, NULL) != 0 ||
                rh_read_reply(r->listener.real, &raw) != 0))
        rc = -1;
    if (!rc) {
        size_t n;
        const char *p = fr_exec_resp(r->listener.fake, 2, (const char *const *)argv, NULL, &n);
        if (n != raw.len || memcmp(p, raw.data, n) != 0) rc = -1;
    }
    if (!rc && (ensure_client(r, 1) != 0 ||
                rh_call(r->clients[1].real, &raw, "DEBUG", "SET-ACTIVE-EXPIRE", "0", NULL) != 0))
        rc = -1;
    if (rc) printf("%s:%d: %s   <-- cannot start the listeners\n", name, l->lineno, l->text);
    rh_buf_free(&raw);
    return rc;
}

/* Collects what the listeners received since the last call: on the real side every
 * message before the answer to a PING sent now (Redis published them before it answered
 * the command, so they precede the PING's answer), on the fake side its push queue.
 * 0, or -1 when the real listener failed. */
static int take_events(run *r) {
    rh_buf_reset(&r->real_events);
    rh_buf_reset(&r->fake_events);
    if (!r->listener.real) return 0;
    size_t n;
    const char *p = fr_client_push_resp(r->listener.fake, &n);
    rh_buf_append(&r->fake_events, p, n);
    fr_client_push_clear(r->listener.fake);
    char *ping[1] = {"PING"};
    static const char pong[] = "*2\r\n$4\r\npong\r\n$0\r\n\r\n";
    rh_buf raw = {0};
    int rc = rh_send(r->listener.real, 1, ping, NULL);
    while (rc == 0 && (rc = rh_read_reply(r->listener.real, &raw)) == 0) {
        if (raw.len == sizeof(pong) - 1 && memcmp(raw.data, pong, raw.len) == 0) break;
        rh_buf_append(&r->real_events, raw.data, raw.len);
    }
    rh_buf_free(&raw);
    return rc;
}

/* The payload in a bulk reply ("$N\r\n...\r\n"): 0 with *p, *len set, -1 otherwise. */
static int bulk_payload(const rh_buf *reply, const char **p, size_t *len) {
    if (reply->len < 4 || reply->data[0] != '$' || reply->data[1] == '-') return -1;
    char *end;
    unsigned long n = strtoul(reply->data + 1, &end, 10);
    if (end[0] != '\r' || (size_t)(end + 2 - reply->data) + n + 2 != reply->len) return -1;
    *p = end + 2;
    *len = n;
    return 0;
}

/* !dumprestore SRC DST TTL [OPTION...] on client 1: each side restores its own payload;
 * the DUMP replies must both be nil or both payloads, the RESTORE replies equal. */
static int run_dumprestore(run *r, const ds_line *l) {
    const char *name = r->script->name;
    if (ensure_client(r, 1) != 0) return -1;
    char *dump[2] = {"DUMP", l->argv[0]};
    size_t dumplen[2] = {4, l->argvlen[0]};
    int real_ok = run_real(r, 1, 2, dump, dumplen) == 0;
    run_fake(r, 1, 2, dump, dumplen);
    const char *rp = NULL, *fp = NULL;
    size_t rn = 0, fn = 0;
    int real_has = real_ok && bulk_payload(&r->real_reply, &rp, &rn) == 0;
    int fake_has = bulk_payload(&r->fake_reply, &fp, &fn) == 0;
    r->compared++;
    if (!real_ok || real_has != fake_has) {
        printf("%s:%d: %s   <-- MISMATCH (DUMP)\n", name, l->lineno, l->text);
        show("real", r->real_reply.data, r->real_reply.len);
        show("fake", r->fake_reply.data, r->fake_reply.len);
        r->failed++;
        return real_ok ? 0 : -1;
    }
    if (!real_has) return 0;
    int argc = l->argc + 1;
    char **argv = calloc((size_t)argc, sizeof(*argv));
    size_t *lens = calloc((size_t)argc, sizeof(*lens));
    char *real_payload = malloc(rn + 1), *fake_payload = malloc(fn + 1);
    if (!argv || !lens || !real_payload || !fake_payload) abort();
    memcpy(real_payload, rp, rn);
    memcpy(fake_payload, fp, fn);
    argv[0] = "RESTORE";
    lens[0] = 7;
    argv[1] = l->argv[1];
    lens[1] = l->argvlen[1];
    argv[2] = l->argv[2];
    lens[2] = l->argvlen[2];
    for (int i = 3; i < l->argc; i++) {
        argv[i + 1] = l->argv[i];
        lens[i + 1] = l->argvlen[i];
    }
    argv[3] = real_payload;
    lens[3] = rn;
    real_ok = run_real(r, 1, argc, argv, lens) == 0;
    argv[3] = fake_payload;
    lens[3] = fn;
    run_fake(r, 1, argc, argv, lens);
    int same = real_ok && r->real_reply.len == r->fake_reply.len &&
               memcmp(r->real_reply.data, r->fake_reply.data, r->real_reply.len) == 0;
    if (!same || r->verbose) {
        printf("%s:%d: %s%s\n", name, l->lineno, l->text, same ? "" : "   <-- MISMATCH");
        show("real", r->real_reply.data, r->real_reply.len);
        show("fake", r->fake_reply.data, r->fake_reply.len);
    }
    if (!same) r->failed++;
    free(argv);
    free(lens);
    free(real_payload);
    free(fake_payload);
    return real_ok ? 0 : -1;
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
        if (r->listener.fake) fr_client_push_clear(r->listener.fake);
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
    if (r->listener.real) {
        /* the notifications are part of what the command did */
        int events_ok = real_ok && take_events(r) == 0;
        int events_same = events_ok && r->real_events.len == r->fake_events.len &&
                          (r->fake_events.len == 0 ||
                           memcmp(r->real_events.data, r->fake_events.data,
                                  r->fake_events.len) == 0);
        if (!events_same || (r->verbose && r->real_events.len)) {
            printf("%s:%d: %s%s\n", name, l->lineno, l->text,
                   events_same ? "" : "   <-- EVENTS MISMATCH");
            show("real events", r->real_events.data, r->real_events.len);
            show("fake events", r->fake_events.data, r->fake_events.len);
        }
        if (!events_same && same) {
            same = 0;
            if (!r->verbose) goto counted; /* the reply matched: no need to show it */
        }
    }
    if (!same || r->verbose) {
        printf("%s:%d: %s%s\n", name, l->lineno, l->text, same ? "" : "   <-- MISMATCH");
        if (!same && (l->flags & DS_SORTED)) printf("  (compared as multisets)\n");
        if (!same && (l->flags & DS_TYPE)) printf("  (compared by type only)\n");
        if (!same && (l->flags & DS_LEN)) printf("  (compared by first line only)\n");
        show("real", r->real_reply.data, r->real_reply.len);
        show("fake", r->fake_reply.data, r->fake_reply.len);
        if (!same && real_ok && !(l->flags & (DS_SORTED | DS_TYPE | DS_LEN))) {
            size_t n = r->real_reply.len < r->fake_reply.len ? r->real_reply.len
                                                              : r->fake_reply.len;
            size_t i = 0;
            while (i < n && r->real_reply.data[i] == r->fake_reply.data[i]) i++;
            printf("  (first difference at byte %zu)\n", i);
        }
    }
counted:
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

/* ----- Transcripts -------------------------------------------------------------------- */

/* Replays a transcript on a fresh fake server (virtual clock, default config): each
 * command with a recorded reply is compared under its modifiers; adds the counts to
 * *passed and *failed. */
static void run_transcript(const ds_script *s, int verbose, long *passed, long *failed) {
    fr_config cfg = fr_config_default();
    cfg.cluster_enabled = s->cluster;
    fr_server *fake = fr_server_new(&cfg);
    if (!fake) {
        printf("%s: fr_server_new failed\n", s->name);
        (*failed)++;
        return;
    }
    fr_client *clients[DS_MAX_CLIENTS + 1] = {0};
    long compared = 0, bad = 0;
    for (size_t i = 0; i < s->count; i++) {
        const ds_line *l = &s->lines[i];
        if (l->kind == DS_SLEEP) {
            fr_clock_advance(fake, l->sleep_ms);
            continue;
        }
        if (l->kind == DS_EVENTS) continue; /* no listener here */
        if (l->kind == DS_DUMPRESTORE) {
            printf("%s:%d: %s   <-- !dumprestore needs both servers: not in transcripts\n",
                   s->name, l->lineno, l->text);
            bad++;
            continue;
        }
        if (l->kind == DS_CONFIG) {
            if (fr_server_set_param(fake, l->argv[0], l->argv[1]) != 0) {
                printf("%s:%d: %s   <-- the fake does not follow this parameter\n", s->name,
                       l->lineno, l->text);
                bad++;
            }
            continue;
        }
        if (!clients[l->client] && !(clients[l->client] = fr_client_new(fake))) {
            printf("%s: fr_client_new failed\n", s->name);
            bad++;
            break;
        }
        size_t len = 0;
        const char *p = fr_exec_resp(clients[l->client], l->argc, (const char *const *)l->argv,
                                     l->argvlen, &len);
        if (is_quit(l)) {
            fr_client_free(clients[l->client]);
            clients[l->client] = NULL;
        }
        if (!l->has_expected || (l->flags & DS_FAKE)) {
            if (verbose) {
                printf("%s:%d: %s\n", s->name, l->lineno, l->text);
                show("fake", p, len);
            }
            continue;
        }
        compared++;
        int same = ds_replies_equal(l->flags, l->expected, l->expected_len, p, len);
        if (!same || verbose) {
            printf("%s:%d: %s%s\n", s->name, l->lineno, l->text, same ? "" : "   <-- MISMATCH");
            show("recorded", l->expected, l->expected_len);
            show("fake", p, len);
        }
        if (!same) bad++;
    }
    printf("%s: %ld commands compared, %ld failed\n", s->name, compared, bad);
    *passed += compared - bad;
    *failed += bad;
    for (int i = 1; i <= DS_MAX_CLIENTS; i++)
        if (clients[i]) fr_client_free(clients[i]);
    fr_server_free(fake);
}

/* Reads a whole file into b; 0, or -1 (reported). */
static int read_file(const char *path, rh_buf *b) {
    FILE *f = fopen(path, "rb");
    if (!f) {
        fprintf(stderr, "diff_runner: cannot open %s: %s\n", path, strerror(errno));
        return -1;
    }
    char chunk[8192];
    size_t n;
    while ((n = fread(chunk, 1, sizeof chunk, f)) > 0) rh_buf_append(b, chunk, n);
    int err = ferror(f);
    fclose(f);
    if (err) fprintf(stderr, "diff_runner: cannot read %s\n", path);
    return err ? -1 : 0;
}

#define RECORDED_BY "# recorded by diff_runner --record from "

/* The real server's "redis_version" (and git sha1 when not zero) for the header. */
static void server_version(rh_conn *c, rh_buf *out) {
    rh_buf raw = {0};
    if (rh_call(c, &raw, "INFO", "server", NULL) == 0 && raw.data) {
        const char *keys[] = {"redis_version:", "redis_git_sha1:", "redis_build_id:"};
        for (size_t k = 0; k < 3; k++) {
            const char *at = strstr(raw.data, keys[k]);
            if (!at) continue;
            size_t n = strcspn(at, "\r\n");
            rh_buf_printf(out, "%s%.*s", out->len ? " " : "", (int)n, at);
        }
    }
    if (!out->len) rh_buf_printf(out, "an unknown redis-server");
    rh_buf_free(&raw);
}

/* Runs script (its text in src) on a fresh real server and writes the transcript to
 * out_path.  Returns the exit status. */
static int record(const char *script_path, const char *out_path, int verbose) {
    rh_buf src = {0};
    if (read_file(script_path, &src) != 0) return 2;
    ds_script *s = ds_parse_text(script_path, src.data ? src.data : "", src.len, stderr);
    if (!s) {
        rh_buf_free(&src);
        return 2;
    }
    rh_options opt = {0};
    opt.cluster = s->cluster;
    opt.quiet = !verbose;
    rh_server *real = rh_start(&opt);
    if (!real) {
        ds_script_free(s);
        rh_buf_free(&src);
        return 1;
    }
    rh_conn *conns[DS_MAX_CLIENTS + 1] = {0};
    rh_buf out = {0}, reply = {0}, version = {0};
    int status = 0;
    conns[1] = rh_connect(real);
    if (!conns[1] || rh_call(conns[1], &reply, "FLUSHALL", NULL) != 0) {
        fprintf(stderr, "diff_runner: cannot talk to the real server\n");
        status = 1;
        goto done;
    }
    server_version(conns[1], &version);
    rh_buf_printf(&out, RECORDED_BY "%s\n", version.data);

    /* the input's lines as they are, minus old replies and the old header; after each
     * command line, its reply */
    size_t next = 0; /* the next script line to run */
    const char *p = src.data ? src.data : "";
    const char *end = p + src.len;
    for (int lineno = 1; p < end; lineno++) {
        const char *nl = memchr(p, '\n', (size_t)(end - p));
        size_t n = nl ? (size_t)(nl - p) : (size_t)(end - p);
        const char *q = p;
        while (q < p + n && (*q == ' ' || *q == '\t')) q++;
        int drop = (q < p + n && *q == '=') ||
                   (n >= strlen(RECORDED_BY) && !memcmp(p, RECORDED_BY, strlen(RECORDED_BY)));
        if (!drop) {
            rh_buf_append(&out, p, n);
            rh_buf_append(&out, "\n", 1);
        }
        p = nl ? nl + 1 : end;
        if (next >= s->count || s->lines[next].lineno != lineno) continue;
        const ds_line *l = &s->lines[next++];
        if (l->kind == DS_SLEEP) {
            sleep_ms(l->sleep_ms);
            continue;
        }
        if (l->kind == DS_EVENTS) continue; /* no listener here */
        if (l->kind == DS_DUMPRESTORE) {
            fprintf(stderr, "%s:%d: !dumprestore cannot be recorded\n", script_path, l->lineno);
            status = 1;
            goto done;
        }
        if (l->kind == DS_CONFIG) {
            if (rh_call(conns[1], &reply, "CONFIG", "SET", l->argv[0], l->argv[1], NULL) != 0) {
                fprintf(stderr, "%s:%d: %s: refused\n", script_path, l->lineno, l->text);
                status = 1;
                goto done;
            }
            continue;
        }
        if (l->flags & DS_FAKE) continue;
        if (!conns[l->client] && !(conns[l->client] = rh_connect(real))) {
            status = 1;
            goto done;
        }
        if (rh_send(conns[l->client], l->argc, l->argv, l->argvlen) != 0 ||
            rh_read_reply(conns[l->client], &reply) != 0) {
            fprintf(stderr, "%s:%d: no reply: %s\n", script_path, l->lineno,
                    rh_conn_error(conns[l->client]));
            status = 1;
            goto done;
        }
        if (verbose) {
            printf("%s:%d: %s\n", script_path, l->lineno, l->text);
            show("real", reply.data, reply.len);
        }
        rh_buf_append(&out, "= ", 2);
        ds_escape(reply.data, reply.len, &out);
        rh_buf_append(&out, "\n", 1);
        if (is_quit(l)) {
            rh_close(conns[l->client]);
            conns[l->client] = NULL;
        }
    }
    FILE *f = fopen(out_path, "wb");
    if (!f || fwrite(out.data, 1, out.len, f) != out.len || fclose(f) != 0) {
        fprintf(stderr, "diff_runner: cannot write %s\n", out_path);
        status = 1;
    } else {
        printf("%s: %zu lines recorded from %s\n", out_path, next, version.data);
    }
done:
    for (int i = 1; i <= DS_MAX_CLIENTS; i++) rh_close(conns[i]);
    rh_stop(real);
    ds_script_free(s);
    rh_buf_free(&src);
    rh_buf_free(&out);
    rh_buf_free(&reply);
    rh_buf_free(&version);
    return status;
}

/* Runs one script; adds its counts to *passed and *failed. */
/* --events: every script runs as if it began (after a !cluster) with
 * "!config notify-keyspace-events KEAnm" and "!events". */
static int events_all;

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

    int ready = flush_both(&r) == 0;
    if (ready && events_all) {
        static char *const cfg_argv[2] = {"notify-keyspace-events", "KEAnm"};
        static size_t cfg_lens[2] = {22, 5};
        ds_line pre = {.kind = DS_CONFIG, .lineno = 0, .text = (char *)"--events", .argc = 2,
                       .argv = (char **)cfg_argv, .argvlen = cfg_lens};
        ready = set_config(&r, &pre) == 0 && r.failed == 0 && start_events(&r, &pre) == 0;
    }
    if (!ready) {
        r.failed++;
    } else {
        for (size_t i = 0; i < s->count; i++) {
            const ds_line *l = &s->lines[i];
            if (l->kind == DS_SLEEP) {
                sleep_ms(l->sleep_ms);
                continue;
            }
            if (l->kind == DS_CONFIG) {
                if (set_config(&r, l) != 0) break;
                continue;
            }
            if (l->kind == DS_EVENTS) {
                if (start_events(&r, l) != 0) {
                    r.failed++;
                    break;
                }
                continue;
            }
            if (l->kind == DS_DUMPRESTORE) {
                if (run_dumprestore(&r, l) != 0) break;
                continue;
            }
            if (run_command(&r, l) != 0) break;
        }
    }

    printf("%s: %ld commands compared, %ld failed\n", s->name, r.compared, r.failed);
    *passed += r.compared - r.failed;
    *failed += r.failed;

    for (int i = 1; i <= DS_MAX_CLIENTS; i++) drop_client(&r, i);
    rh_close(r.listener.real);
    rh_buf_free(&r.real_events);
    rh_buf_free(&r.fake_events);
    fr_server_free(r.fake);
    rh_stop(r.real);
    rh_buf_free(&r.real_reply);
    rh_buf_free(&r.fake_reply);
}

static void usage(FILE *f) {
    fprintf(f, "usage: diff_runner [--verbose] [--events] script.redis...\n"
               "       diff_runner [--verbose] --transcript file.transcript...\n"
               "       diff_runner [--verbose] --record out.transcript script\n"
               "Runs each script on the fake and on a fresh real redis-server and compares\n"
               "the raw RESP replies; or replays recorded transcripts on the fake alone; or\n"
               "records a transcript from the real server.  --events also compares the\n"
               "keyspace notifications of every command (all classes on, as !events).\n"
               "Format: tests/diff/README.md.\n");
}

int main(int argc, char **argv) {
    int verbose = 0, transcript = 0;
    const char *record_to = NULL;
    int first = 1;
    for (; first < argc && argv[first][0] == '-'; first++) {
        if (!strcmp(argv[first], "--verbose") || !strcmp(argv[first], "-v")) {
            verbose = 1;
        } else if (!strcmp(argv[first], "--events")) {
            events_all = 1;
        } else if (!strcmp(argv[first], "--transcript")) {
            transcript = 1;
        } else if (!strcmp(argv[first], "--record") && first + 1 < argc) {
            record_to = argv[++first];
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
    if (first >= argc || (record_to && (transcript || argc - first != 1))) {
        usage(stderr);
        return 2;
    }
    if (record_to) {
        setvbuf(stdout, NULL, _IOLBF, 0);
        return record(argv[first], record_to, verbose);
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
    for (int i = 0; i < nscripts; i++) {
        if (transcript) run_transcript(scripts[i], verbose, &passed, &failed);
        else run_script(scripts[i], verbose, &passed, &failed);
    }
    printf("%ld passed, %ld failed\n", passed, failed);

    for (int i = 0; i < nscripts; i++) ds_script_free(scripts[i]);
    free(scripts);
    return failed ? 1 : 0;
}
