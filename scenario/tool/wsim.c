/* wsim.c -- the command line tool: run scenario files on the in-process fake or a real
 * server, compare the two, and print traces and flush diagrams (docs/wsim.md and one
 * page per subcommand, docs/wsim-COMMAND.md).
 *
 * Exit status: 0 when everything passed (skips included), 1 when a scenario failed or
 * could not run, 2 for bad usage or a malformed scenario file (nothing runs then). */
#include <dirent.h>
#include <errno.h>
#include <signal.h>
#include <time.h>
#include <unistd.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "explore_cmd.h"
#include "wsc_traffic.h"
#include "wsr_proxy.h"
#include "wsi_alloc.h"
#include "wsi_buf.h"
#include "wsc.h"
#include "wsi_io.h"
#include "wsm.h" /* model/: the run generator, the model and the shrinker */

static const char *USAGE =
    "usage: wsim <command> [options] FILES|DIRS\n"
    "\n"
    "Runs scenario files (*.wsim) of a Redis consumer's settlement window.\n"
    "\n"
    "commands:\n"
    "  run       run scenarios; one line each and a summary; exit 0 only if all pass\n"
    "  diff      run each portable scenario on the fake and on a real server, compare\n"
    "  trace     run one scenario and print its trace (every round trip)\n"
    "  diagram   run one scenario and print its flush diagrams\n"
    "  explore   crash the consumer at every point of a scenario, recover, classify\n"
    "  check-trace  check a consumer's invariants on a recording of its traffic\n"
    "  proxy     record the traffic of a real redis-server through a proxy\n"
    "  consume   the engine as a live consumer process: a scenario's subscriptions and\n"
    "            handlers against REDIS_URL (docs/consumer.md)\n"
    "  outcomes  draw outcome sequences and crash points for a consumer process, shrink\n"
    "            what breaks to a scenario file\n"
    "  repro     turn a failing fuzz input or seed into the smallest failing scenario\n"
    "  grammar   print the scenario language's grammar (--update FILE, --check FILE)\n"
    "  help      this text, or `wsim help <command>`\n"
    "  --version the versions of wsim, its scenario library, its engine and the fake\n"
    "\n"
    "See `wsim <command> --help`, docs/wsim.md (one page per command) and docs/scenarios.md.\n";

static const char *RUN_HELP =
    "usage: wsim run [--backend fake|redis://HOST:PORT|unix:///PATH] [--seed N]\n"
    "                [--format text|tap|junit] [--verbose] [--fake-server] [--cluster]\n"
    "                [--redis-version V] FILES|DIRS\n"
    "\n"
    "Runs every scenario named (directories: every *.wsim file in them, recursively, in\n"
    "name order) on a fresh simulation each.  Prints one line per scenario (PASS, FAIL,\n"
    "SKIP, ERROR) and `N passed, M failed` (plus skipped); a failure shows file:line, the\n"
    "expectation, what was expected, what happened and the trace around it.  Scenarios\n"
    "that say `needs fake` are skipped on a real server, and those that say `needs real` on\n"
    "the fake, with the reason.  On a real server each scenario starts with FLUSHALL: give\n"
    "it a throwaway server.  A file that drives consumer processes (`consumer ... run\n"
    "COMMAND`) serves the fake to them over RESP (docs/consumer.md).\n"
    "\n"
    "  --backend B   where to run: fake (default, the in-process fake) or a real server\n"
    "  --seed N      override the scenarios' seeds\n"
    "  --format F    text (default), tap (TAP version 13) or junit (JUnit XML)\n"
    "  --verbose     text format: print the flush diagrams of passing scenarios too\n"
    "  --fake-server the backend is fakeredis-server: skip the `needs real` files too\n"
    "  --cluster     the backend is a one-node Redis Cluster: the files that say `cluster`\n"
    "                run there (without it they are skipped on a real server)\n"
    "  --redis-version V  the version the fake claims to consumer processes (INFO, HELLO)\n"
    "\n"
    "exit status: 0 all passed, 1 something failed, 2 bad usage, a malformed file, or a\n"
    "consumer process that misbehaved (did not start, settle or stop)\n"
    "the page: docs/wsim-run.md\n";

static const char *CONSUME_HELP =
    "usage: wsim consume [--url URL] FILE\n"
    "\n"
    "The engine (libwsim) as a live consumer process: FILE's subscriptions are what it\n"
    "reads, its produce lines name the entries (by payload), and each entry's handler\n"
    "lines say what every delivery of it does.  Against the server at URL (default:\n"
    "REDIS_URL), the first process (WSIM_INCARNATION unset or 1) plays the file's reads\n"
    "and handlers in file order; then, and from the start in a later incarnation, it reads\n"
    "every subscription in turn and handles what comes, until it is killed.  It is the\n"
    "consumer of a process file (consumer NAME run wsim consume FILE) whose exploration\n"
    "must give the verdicts `wsim explore FILE` gives.\n"
    "\n"
    "exit status: 1 when the run cannot go on (said on stderr), 2 bad usage\n"
    "the page: docs/consumer.md\n";

static const char *OUTCOMES_HELP =
    "usage: wsim outcomes [--seed N] [--runs N] [--entries N] [--no-shrink] [-o FILE] FILE\n"
    "\n"
    "FILE drives a consumer process that follows the handler convention (docs/consumer.md).\n"
    "Each run draws, from its seed, entries for the file's first stream subscription --\n"
    "outcomes (ack, drop) and writes (INCRBY of keys of their own) -- in place of the file's\n"
    "produce lines, plays the run once to learn the consumer's commands, draws a crash\n"
    "point among them, plays it and checks it as wsim explore does.  The first run that\n"
    "breaks what the file forbids (any invariant when it forbids nothing) is printed with\n"
    "the line that replays it, shrunk (entries and writes taken out, drops made acks, the\n"
    "crash moved earlier) and written as a scenario file that wsim run fails on.\n"
    "\n"
    "  --seed N      run r draws from seed N + r (default 1)\n"
    "  --runs N      runs to draw (default 20)\n"
    "  --entries N   at most N entries a run (default 4, at most 16)\n"
    "  --no-shrink   write the finding as drawn\n"
    "  -o FILE       write the scenario file there (default: standard output)\n"
    "\n"
    "exit status: 0 no run broke anything, 1 one did (the scenario is written), 2 bad usage,\n"
    "a file that cannot be drawn for, or a drawn run that fails without a crash\n"
    "the page: docs/consumer.md\n";

static const char *GRAMMAR_HELP =
    "usage: wsim grammar [--update FILE | --check FILE]\n"
    "\n"
    "Prints the scenario language's grammar, one line per statement form, generated from\n"
    "the parser's statement table.  --update FILE rewrites the block between the lines\n"
    "`<!-- grammar: BEGIN -->` and `<!-- grammar: END -->` of FILE (docs/scenarios.md);\n"
    "--check FILE exits 1 when that block is not what --update would write.\n"
    "\n"
    "exit status: 0 done (or up to date), 1 stale or FILE unreadable, 2 bad usage\n"
    "the page: docs/scenarios.md\n";

static const char *DIFF_HELP =
    "usage: wsim diff --backend redis://HOST:PORT|unix:///PATH [--seed N] FILES|DIRS\n"
    "\n"
    "Runs each portable scenario twice, on the in-process fake and on the real server\n"
    "given (which it FLUSHALLs), and compares the outcome, the final keyspace and the\n"
    "trace, with stream ids and millisecond clock values masked (they differ by nature).\n"
    "Prints the first difference of each scenario that differs.\n"
    "\n"
    "exit status: 0 no difference, 1 a difference or a failure, 2 bad usage or file\n"
    "the page: docs/wsim-diff.md\n";

static const char *TRACE_HELP =
    "usage: wsim trace [--backend B] [--seed N] FILE\n"
    "       wsim trace RECORDING\n"
    "\n"
    "Runs one scenario and prints its whole trace: every round trip of every connection\n"
    "with its cause, each command, its reply, its fate and the delivery it came from,\n"
    "and the engine's notes (settles, flushes, crashes).  Exit status as wsim run.\n"
    "Given a recording (fakeredis-server --record, wsim proxy), prints it the same way:\n"
    "the commands of each connection's batches with their replies, and `--` lines for the\n"
    "rest; exit 0, or 2 when it is not a recording this wsim reads.\n"
    "\n"
    "the page: docs/wsim-trace.md, docs/recording.md\n";

static const char *PROXY_HELP =
    "usage: wsim proxy --upstream redis://HOST:PORT|unix:///PATH --record FILE\n"
    "                  [--unixsocket PATH] [--port N]\n"
    "\n"
    "Listens on a unix socket and/or a loopback port, forwards every connection to the\n"
    "upstream server byte for byte, and records the traffic into FILE in the format of\n"
    "fakeredis-server --record (docs/recording.md): each command with its reply, pushes,\n"
    "connections opening and closing.  Prints `wsim proxy listening on 127.0.0.1:PORT`,\n"
    "`wsim proxy listening on unix:PATH`, then `wsim proxy ready pid=PID`; SIGTERM or\n"
    "SIGINT ends it (the recording gets its end line).  FILE is never a file of the user's\n"
    "that is not a recording.\n"
    "\n"
    "  --upstream URL     the real server\n"
    "  --record FILE      the recording\n"
    "  --unixsocket PATH  listen on this unix socket (its clients' process ids are recorded)\n"
    "  --port N           listen on 127.0.0.1:N (0: a free port); default none with\n"
    "                     --unixsocket, else 0\n"
    "\n"
    "exit status: 0 stopped by a signal, 1 the recording could not be written, 2 bad usage or\n"
    "it could not start\n"
    "the page: docs/recording.md\n";

static const char *CHECK_TRACE_HELP =
    "usage: wsim check-trace [--allow-unsettled] --subscriptions FILE RECORDING\n"
    "\n"
    "Checks a consumer's invariants on a recording of its traffic (fakeredis-server\n"
    "--record, wsim proxy): rebuilds the entries, their deliveries, settles and retries and\n"
    "the handlers' writes from the traffic alone, for the subscriptions FILE declares (the\n"
    "`subscribe` lines of a scenario file), and reports what is lost, doubled, stranded,\n"
    "still unsettled at the end, settled before its round's writes, or an atomic segment\n"
    "that is not MULTI, its writes, its settle, EXEC -- each with the recording's lines\n"
    "that prove it, and notes on how the writes were attributed to deliveries.\n"
    "\n"
    "  --subscriptions FILE  a scenario file: its subscribe lines say what the consumer reads\n"
    "  --allow-unsettled     an entry still unsettled at the end is a note, not a violation\n"
    "\n"
    "exit status: 0 no violation, 1 a violation, 2 bad usage, a bad subscriptions file, or a\n"
    "RECORDING that is not a recording this wsim reads (truncated, another version)\n"
    "the page: docs/recording.md\n";

static const char *DIAGRAM_HELP =
    "usage: wsim diagram [--backend B] [--seed N] [--format text|svg] FILE\n"
    "\n"
    "Runs one scenario and prints the diagram of every flush: the deliveries it settled\n"
    "with their outcomes and segments, and its round trips command by command with the\n"
    "delivery each command came from.  Exit status as wsim run.\n"
    "\n"
    "  --format F    text (default) or svg: the same as one self-contained picture, as\n"
    "                the seed page \"Window\" draws a flush (wsim diagram --format svg\n"
    "                FILE > flush.svg)\n"
    "\n"
    "the page: docs/wsim-diagram.md\n";

static const char *REPRO_HELP =
    "usage: wsim repro [--strict] [--attempts N] [-o FILE] INPUT\n"
    "\n"
    "INPUT is a file of fuzz_outcomes bytes (a crash file libFuzzer kept) or seed:N (the run\n"
    "the seeded generator draws for N).  The input is replayed as fuzz_outcomes replays it:\n"
    "the engine against the reference model and the invariants.  When it fails, its\n"
    "choices are shrunk (runs in child processes, so an engine crash is shrunk too) and the\n"
    "smallest run that still fails is written as a scenario file, with a comment saying what\n"
    "broke; keep it as a regression scenario (scenarios/regressions/).\n"
    "\n"
    "  --strict      compare with SEMANTICS.md to the letter (no known deviation mimicked)\n"
    "  --attempts N  candidate runs while shrinking (default 4000)\n"
    "  -o FILE       write the scenario there (default: standard output)\n"
    "\n"
    "exit status: 0 the input fails and a scenario was written, 1 it does not fail (nothing\n"
    "to reproduce) or it could not be read, 2 bad usage\n"
    "the page: docs/wsim-repro.md\n";

typedef struct opts {
    const char *backend;
    uint64_t seed;
    int seed_set;
    const char *format;
    int verbose;
    int fake_server;
    int cluster;
    const char *redis_version;
    char **paths;
    size_t npaths;
} opts;

static int usage_error(const char *help, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int usage_error(const char *help, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fputs("wsim: ", stderr);
    vfprintf(stderr, fmt, ap);
    fputs("\n\n", stderr);
    va_end(ap);
    fputs(help, stderr);
    return 2;
}

/* The scenario file at path, or NULL after its error is said on stderr. */
static wsc_scenario *parse_or_say(const char *path)
{
    char *err = NULL;
    wsc_scenario *sc = wsc_parse_file(path, &err);
    if (!sc) {
        if (err) fprintf(stderr, "%s\n", err);
        else fprintf(stderr, "%s:0:0: error: out of memory\n", path);
        free(err);
    }
    return sc;
}

/* Parses options; returns 0, 1 for --help (printed), or 2 after a usage error. */
static int parse_opts(int argc, char **argv, const char *help, opts *o)
{
    memset(o, 0, sizeof *o);
    o->format = "text";
    o->paths = wsi_xcalloc((size_t)argc + 1, sizeof *o->paths);
    for (int i = 0; i < argc; i++) {
        const char *a = argv[i];
        if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) {
            fputs(help, stdout);
            return 1;
        }
        if (strcmp(a, "--verbose") == 0) {
            o->verbose = 1;
            continue;
        }
        if (strcmp(a, "--fake-server") == 0 && help == RUN_HELP) {
            o->fake_server = 1;
            continue;
        }
        if (strcmp(a, "--cluster") == 0 && help == RUN_HELP) {
            o->cluster = 1;
            continue;
        }
        if (strcmp(a, "--redis-version") == 0 && help == RUN_HELP) {
            if (i + 1 >= argc) return usage_error(help, "%s needs a value", a);
            o->redis_version = argv[++i];
            if (!*o->redis_version || strspn(o->redis_version, "0123456789.") !=
                                          strlen(o->redis_version))
                return usage_error(help, "--redis-version needs a version such as 8.4.0, got "
                                   "'%s'", o->redis_version);
            continue;
        }
        if (strcmp(a, "--backend") == 0 || strcmp(a, "--seed") == 0 || strcmp(a, "--format") == 0) {
            if (i + 1 >= argc) return usage_error(help, "%s needs a value", a);
            const char *v = argv[++i];
            if (strcmp(a, "--backend") == 0) {
                if (strcmp(v, "fake") != 0 && strncmp(v, "redis://", 8) != 0 &&
                    strncmp(v, "unix://", 7) != 0)
                    return usage_error(help, "unknown backend '%s' (fake, redis://..., unix://...)", v);
                o->backend = v;
            } else if (strcmp(a, "--seed") == 0) {
                char *end;
                errno = 0;
                unsigned long long s = strtoull(v, &end, 10);
                if (errno || *end || !*v || v[0] == '-')
                    return usage_error(help, "--seed needs a non-negative number, got '%s'", v);
                o->seed = s;
                o->seed_set = 1;
            } else {
                if (help == DIAGRAM_HELP) {
                    if (strcmp(v, "text") && strcmp(v, "svg"))
                        return usage_error(help, "unknown format '%s' (text or svg)", v);
                } else if (strcmp(v, "text") && strcmp(v, "tap") && strcmp(v, "junit")) {
                    return usage_error(help, "unknown format '%s' (text, tap or junit)", v);
                }
                o->format = v;
            }
            continue;
        }
        if (a[0] == '-' && a[1]) return usage_error(help, "unknown option '%s'", a);
        o->paths[o->npaths++] = argv[i];
    }
    if (o->npaths == 0) return usage_error(help, "no scenario files or directories given");
    return 0;
}

/* parse_opts at a command's start: -1 when the options are good (free o->paths), else
 * the command's exit status, 0 after --help and 2 after a usage error, with nothing left
 * to free. */
static int command_opts(int argc, char **argv, const char *help, opts *o)
{
    int prc = parse_opts(argc, argv, help, o);
    if (!prc) return -1;
    free(o->paths);
    return prc == 1 ? 0 : 2;
}

/* ----- Collecting files ---------------------------------------------------------------------- */

typedef struct files {
    char **v;
    size_t n;
} files;

static void add_file(files *f, const char *path)
{
    f->v = wsi_xrealloc(f->v, (f->n + 1) * sizeof *f->v);
    f->v[f->n++] = wsi_xstrdup(path);
}

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Every *.wsim under dir, recursively; 0 or -1 with a message. */
static int walk(const char *dir, files *f)
{
    DIR *d = opendir(dir);
    if (!d) {
        fprintf(stderr, "wsim: %s: %s\n", dir, strerror(errno));
        return -1;
    }
    files here = {0};
    struct dirent *e;
    while ((e = readdir(d))) {
        if (e->d_name[0] == '.') continue;
        size_t n = strlen(dir) + strlen(e->d_name) + 2;
        char *p = wsi_xmalloc(n);
        snprintf(p, n, "%s/%s", dir, e->d_name);
        add_file(&here, p);
        free(p);
    }
    closedir(d);
    qsort(here.v, here.n, sizeof *here.v, cmp_str);
    int rc = 0;
    for (size_t i = 0; i < here.n; i++) {
        struct stat st;
        if (stat(here.v[i], &st) == 0 && S_ISDIR(st.st_mode)) {
            if (walk(here.v[i], f)) rc = -1;
        } else {
            size_t l = strlen(here.v[i]);
            if (l > 5 && strcmp(here.v[i] + l - 5, ".wsim") == 0) add_file(f, here.v[i]);
        }
        free(here.v[i]);
    }
    free(here.v);
    return rc;
}

static int collect(const opts *o, files *f)
{
    int rc = 0;
    for (size_t i = 0; i < o->npaths; i++) {
        struct stat st;
        if (stat(o->paths[i], &st) != 0) {
            fprintf(stderr, "wsim: %s: %s\n", o->paths[i], strerror(errno));
            rc = -1;
        } else if (S_ISDIR(st.st_mode)) {
            char *dir = wsi_xstrdup(o->paths[i]);
            size_t l = strlen(dir);
            while (l > 1 && dir[l - 1] == '/') dir[--l] = '\0';
            if (walk(dir, f)) rc = -1;
            free(dir);
        } else {
            add_file(f, o->paths[i]);
        }
    }
    if (rc == 0 && f->n == 0) {
        fprintf(stderr, "wsim: no *.wsim files found\n");
        rc = -1;
    }
    return rc;
}

/* Parses every file first: a malformed one means nothing runs. */
static int parse_all(const files *f, wsc_scenario ***out)
{
    wsc_scenario **sc = wsi_xcalloc(f->n ? f->n : 1, sizeof *sc);
    int bad = 0;
    for (size_t i = 0; i < f->n; i++) {
        char *err = NULL;
        sc[i] = wsc_parse_file(f->v[i], &err);
        if (!sc[i]) {
            if (err) fprintf(stderr, "%s\n", err);
            else fprintf(stderr, "%s:0:0: error: out of memory\n", f->v[i]);
            free(err);
            bad = 1;
        }
    }
    if (bad) {
        for (size_t i = 0; i < f->n; i++) wsc_free(sc[i]);
        free(sc);
        return -1;
    }
    *out = sc;
    return 0;
}

/* ----- Output ------------------------------------------------------------------------------- */

static const char *status_word(wsc_status s)
{
    switch (s) {
    case WSC_PASS: return "PASS";
    case WSC_FAIL: return "FAIL";
    case WSC_SKIP: return "SKIP";
    default: return "ERROR";
    }
}

static void xml_escaped(FILE *out, const char *s)
{
    for (; s && *s; s++) {
        unsigned char c = (unsigned char)*s;
        switch (c) {
        case '<': fputs("&lt;", out); break;
        case '>': fputs("&gt;", out); break;
        case '&': fputs("&amp;", out); break;
        case '"': fputs("&quot;", out); break;
        default:
            if (c < 0x20 && c != '\n' && c != '\t') fprintf(out, "&#x%x;", c);
            else fputc(c, out);
        }
    }
}

static void indented(FILE *out, const char *text, const char *prefix)
{
    const char *p = text;
    while (p && *p) {
        const char *e = strchr(p, '\n');
        size_t n = e ? (size_t)(e - p) : strlen(p);
        fprintf(out, "%s%.*s\n", prefix, (int)n, p);
        p = e ? e + 1 : NULL;
    }
}

static int cmd_run(int argc, char **argv)
{
    opts o;
    int done = command_opts(argc, argv, RUN_HELP, &o);
    if (done >= 0) return done;
    files f = {0};
    wsc_scenario **sc = NULL;
    if (collect(&o, &f) || parse_all(&f, &sc)) {
        for (size_t i = 0; i < f.n; i++) free(f.v[i]);
        free(f.v);
        free(o.paths);
        return 2;
    }
    wsc_options wo = {.backend = o.backend, .seed = o.seed, .seed_set = o.seed_set, .flushall = 1,
                      .fake_server = o.fake_server, .cluster = o.cluster,
                      .redis_version = o.redis_version};
    wsc_result *res = wsi_xcalloc(f.n, sizeof *res);
    size_t passed = 0, failed = 0, skipped = 0;
    int bad_input = 0; /* a consumer process misbehaved: exit 2 (docs/consumer.md) */
    int tap = strcmp(o.format, "tap") == 0, junit = strcmp(o.format, "junit") == 0;
    if (tap) printf("TAP version 13\n1..%zu\n", f.n);
    for (size_t i = 0; i < f.n; i++) {
        if (wsc_run(sc[i], &wo, &res[i]) != 0) {
            /* the scenario library ran out of memory (wsc.h): one line, and stop */
            fprintf(stderr, "wsim: %s: out of memory\n", f.v[i]);
            for (size_t k = 0; k < f.n; k++) {
                wsc_result_free(&res[k]); /* (res[i] is empty) */
                wsc_free(sc[k]);
                free(f.v[k]);
            }
            free(res);
            free(sc);
            free(f.v);
            free(o.paths);
            return 1;
        }
        wsc_result *r = &res[i];
        const char *needs = "";
        wsc_skips(sc[i], &wo, &needs);
        if (r->status == WSC_PASS) passed++;
        else if (r->status == WSC_SKIP) skipped++;
        else failed++;
        bad_input |= r->bad_input;
        if (tap) {
            if (r->status == WSC_SKIP)
                printf("ok %zu - %s # SKIP needs %s: %s\n", i + 1, f.v[i], needs, r->report);
            else
                printf("%s %zu - %s: %s\n", r->status == WSC_PASS ? "ok" : "not ok", i + 1,
                       f.v[i], wsc_title(sc[i]));
            if (r->status == WSC_FAIL || r->status == WSC_ERROR) {
                printf("  ---\n  message: |\n");
                indented(stdout, r->report, "    ");
                printf("  ...\n");
            }
        } else if (!junit) {
            if (r->status == WSC_SKIP)
                printf("SKIP  %s: %s (needs %s: %s)\n", f.v[i], wsc_title(sc[i]), needs,
                       r->report);
            else
                printf("%-5s %s: %s (%zu checks)\n", status_word(r->status), f.v[i],
                       wsc_title(sc[i]), r->checks);
            if (r->status == WSC_FAIL || r->status == WSC_ERROR) indented(stdout, r->report, "  ");
            if (o.verbose && r->status == WSC_PASS && r->diagram && *r->diagram)
                indented(stdout, r->diagram, "    ");
        }
        fflush(stdout);
    }
    if (junit) {
        printf("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n");
        printf("<testsuites tests=\"%zu\" failures=\"%zu\" skipped=\"%zu\">\n", f.n, failed, skipped);
        printf("  <testsuite name=\"wsim\" tests=\"%zu\" failures=\"%zu\" skipped=\"%zu\">\n",
               f.n, failed, skipped);
        for (size_t i = 0; i < f.n; i++) {
            printf("    <testcase classname=\"");
            xml_escaped(stdout, f.v[i]);
            printf("\" name=\"");
            xml_escaped(stdout, wsc_title(sc[i]));
            printf("\"");
            if (res[i].status == WSC_PASS) {
                printf("/>\n");
                continue;
            }
            printf(">\n");
            if (res[i].status == WSC_SKIP) {
                printf("      <skipped message=\"");
                xml_escaped(stdout, res[i].report);
                printf("\"/>\n");
            } else {
                printf("      <failure message=\"%s\">", status_word(res[i].status));
                xml_escaped(stdout, res[i].report);
                printf("</failure>\n");
            }
            printf("    </testcase>\n");
        }
        printf("  </testsuite>\n</testsuites>\n");
    } else if (!tap) {
        printf("%zu passed, %zu failed", passed, failed);
        if (skipped) printf(", %zu skipped", skipped);
        printf("\n");
    } else {
        printf("# %zu passed, %zu failed, %zu skipped\n", passed, failed, skipped);
    }
    for (size_t i = 0; i < f.n; i++) {
        wsc_result_free(&res[i]);
        wsc_free(sc[i]);
        free(f.v[i]);
    }
    free(res);
    free(sc);
    free(f.v);
    free(o.paths);
    return bad_input ? 2 : failed ? 1 : 0;
}

/* ----- diff ---------------------------------------------------------------------------------- */

/* Masks what differs by nature between two servers: stream ids (<id>) and 13-digit
 * millisecond clock readings (<ms>). */
static char *mask(const char *s)
{
    size_t n = strlen(s);
    wsi_buf out = {0};
    wsi_buf_xadd(&out, "", 0);
    for (size_t i = 0; i < n;) {
        size_t d = 0;
        while (i + d < n && s[i + d] >= '0' && s[i + d] <= '9') d++;
        int boundary = i == 0 || !(s[i - 1] >= '0' && s[i - 1] <= '9');
        if (d >= 12 && boundary) {
            size_t e = i + d;
            if (e < n && s[e] == '-' && e + 1 < n && s[e + 1] >= '0' && s[e + 1] <= '9') {
                e++;
                while (e < n && s[e] >= '0' && s[e] <= '9') e++;
                /* not numbered: the fake gives two streams the same ids where a real
                 * server's clock moves between them */
                wsi_buf_xputs(&out, "<id>");
                i = e;
                continue;
            }
            wsi_buf_xputs(&out, "<ms>");
            i += d;
            continue;
        }
        if (d == 0) d = 1;
        wsi_buf_xadd(&out, s + i, d);
        i += d;
    }
    return wsi_buf_xtake(&out);
}

/* Idle times and lag-like figures depend on the real clock: XPENDING's and XINFO's
 * integers are masked too, in lines of those commands. */
static void mask_clocky_lines(char *s)
{
    for (char *line = s; line && *line;) {
        char *e = strchr(line, '\n');
        if (strncmp(line, "  XPENDING", 10) == 0 || strncmp(line, "  XINFO", 7) == 0) {
            char *arrow = strstr(line, " -> ");
            for (char *p = arrow; p && p < (e ? e : line + strlen(line)); p++)
                if (p[-1] == ':' && *p >= '0' && *p <= '9') {
                    /* one '#' whatever the digits: 12 ms and 0 ms idle are the same */
                    char *q = p;
                    while (*q >= '0' && *q <= '9') q++;
                    *p = '#';
                    memmove(p + 1, q, strlen(q) + 1);
                }
        }
        line = e ? e + 1 : NULL;
    }
}

static void first_difference(const char *what, const char *a, const char *b)
{
    size_t line = 1;
    const char *pa = a, *pb = b;
    while (*pa && *pb) {
        const char *ea = strchr(pa, '\n'), *eb = strchr(pb, '\n');
        size_t la = ea ? (size_t)(ea - pa) : strlen(pa), lb = eb ? (size_t)(eb - pb) : strlen(pb);
        if (la != lb || memcmp(pa, pb, la) != 0) {
            printf("  first difference in the %s, line %zu:\n    fake:  %.*s\n    redis: %.*s\n",
                   what, line, (int)la, pa, (int)lb, pb);
            return;
        }
        pa = ea ? ea + 1 : pa + la;
        pb = eb ? eb + 1 : pb + lb;
        line++;
    }
    printf("  first difference in the %s, line %zu: one side ends there\n", what, line);
}

static int cmd_diff(int argc, char **argv)
{
    opts o;
    int done = command_opts(argc, argv, DIFF_HELP, &o);
    if (done >= 0) return done;
    if (!o.backend || strcmp(o.backend, "fake") == 0) {
        free(o.paths);
        return usage_error(DIFF_HELP, "diff needs --backend with a real server");
    }
    files f = {0};
    wsc_scenario **sc = NULL;
    if (collect(&o, &f) || parse_all(&f, &sc)) {
        free(o.paths);
        return 2;
    }
    size_t same = 0, differ = 0, skipped = 0, failing = 0;
    for (size_t i = 0; i < f.n; i++) {
        wsc_options fo = {.backend = "fake", .seed = o.seed, .seed_set = o.seed_set};
        wsc_options ro = {.backend = o.backend, .seed = o.seed, .seed_set = o.seed_set, .flushall = 1};
        const char *needs, *why = wsc_skips(sc[i], &fo, &needs);
        if (!why) why = wsc_skips(sc[i], &ro, &needs);
        if (why) { /* only the portable ones are compared */
            printf("SKIP  %s (needs %s: %s)\n", f.v[i], needs, why);
            skipped++;
            continue;
        }
        wsc_result a, b;
        int rca = wsc_run(sc[i], &fo, &a), rcb = rca ? 0 : wsc_run(sc[i], &ro, &b);
        if (rca || rcb) {
            /* the scenario library ran out of memory (wsc.h): one line, and stop */
            fprintf(stderr, "wsim: %s: out of memory\n", f.v[i]);
            if (!rca) wsc_result_free(&a);
            for (size_t k = 0; k < f.n; k++) {
                wsc_free(sc[k]);
                free(f.v[k]);
            }
            free(sc);
            free(f.v);
            free(o.paths);
            return 1;
        }
        char *ta = mask(a.trace ? a.trace : ""), *tb = mask(b.trace ? b.trace : "");
        char *sa = mask(a.state ? a.state : ""), *sb = mask(b.state ? b.state : "");
        mask_clocky_lines(ta);
        mask_clocky_lines(tb);
        int diff = a.status != b.status || strcmp(sa, sb) != 0 || strcmp(ta, tb) != 0;
        /* the same failure on both sides is no difference, but still a failure */
        if (a.status == WSC_FAIL || a.status == WSC_ERROR || b.status == WSC_FAIL ||
            b.status == WSC_ERROR)
            failing++;
        if (!diff) {
            printf("SAME  %s\n", f.v[i]);
            same++;
        } else {
            printf("DIFF  %s\n", f.v[i]);
            differ++;
            if (a.status != b.status)
                printf("  outcome: %s on the fake, %s on %s\n", status_word(a.status),
                       status_word(b.status), o.backend);
            else if (strcmp(sa, sb) != 0) first_difference("final keyspace", sa, sb);
            else first_difference("trace", ta, tb);
        }
        free(ta);
        free(tb);
        free(sa);
        free(sb);
        wsc_result_free(&a);
        wsc_result_free(&b);
    }
    printf("%zu same, %zu different", same, differ);
    if (skipped) printf(", %zu skipped", skipped);
    if (failing) printf(", %zu failing", failing);
    printf("\n");
    for (size_t i = 0; i < f.n; i++) {
        wsc_free(sc[i]);
        free(f.v[i]);
    }
    free(sc);
    free(f.v);
    free(o.paths);
    return differ || failing ? 1 : 0;
}

/* ----- trace, diagram ---------------------------------------------------------------------------- */

/* Reads path as a recording: NULL after printing the reader's error (exit 2). */
static wsr_recording *read_recording(const char *path)
{
    char *err = NULL;
    wsr_recording *rec = wsr_read_file(path, NULL, &err);
    if (!rec) fprintf(stderr, "%s\n", err ? err : "wsim: out of memory");
    free(err);
    return rec;
}

/* Whether the file at path starts like a recording (the first bytes only). */
static int is_recording(const char *path)
{
    char head[32];
    FILE *f = fopen(path, "rb");
    if (!f) return 0;
    size_t n = fread(head, 1, sizeof head, f);
    fclose(f);
    return wsr_looks_like_recording(head, n);
}

/* wsim trace RECORDING */
static int trace_recording(const char *path)
{
    wsr_recording *rec = read_recording(path);
    if (!rec) return 2;
    char *text = wsc_traffic_trace(rec);
    wsr_free(rec);
    if (!text) {
        fprintf(stderr, "wsim: %s: out of memory\n", path);
        return 1;
    }
    fputs(text, stdout);
    free(text);
    return 0;
}

static int cmd_show(int argc, char **argv, int diagram)
{
    const char *help = diagram ? DIAGRAM_HELP : TRACE_HELP;
    opts o;
    int done = command_opts(argc, argv, help, &o);
    if (done >= 0) return done;
    if (o.npaths != 1) {
        free(o.paths);
        return usage_error(help, "give exactly one scenario file");
    }
    if (!diagram && is_recording(o.paths[0])) {
        int rc = trace_recording(o.paths[0]);
        free(o.paths);
        return rc;
    }
    wsc_scenario *sc = parse_or_say(o.paths[0]);
    if (!sc) {
        free(o.paths);
        return 2;
    }
    free(o.paths);
    int svg = diagram && strcmp(o.format, "svg") == 0;
    wsc_options wo = {.backend = o.backend, .seed = o.seed, .seed_set = o.seed_set, .flushall = 1,
                      .picture = svg};
    wsc_result r;
    if (wsc_run(sc, &wo, &r)) {
        fprintf(stderr, "wsim: %s: out of memory\n", wsc_name(sc));
        wsc_free(sc);
        return 1;
    }
    if (r.status == WSC_SKIP) {
        const char *needs = "";
        wsc_skips(sc, &wo, &needs);
        printf("SKIP: needs %s: %s\n", needs, r.report);
    } else {
        const char *out = svg ? r.picture : diagram ? r.diagram : r.trace;
        if (svg && !out) {
            fprintf(stderr, "wsim: out of memory\n");
            wsc_result_free(&r);
            wsc_free(sc);
            return 1;
        }
        fputs(out ? out : "", stdout);
        fflush(stdout);
        if (r.status != WSC_PASS) {
            fprintf(stderr, "%s %s\n", status_word(r.status), wsc_name(sc));
            if (r.report) fputs(r.report, stderr);
        }
    }
    int rc = r.status == WSC_PASS || r.status == WSC_SKIP ? 0 : 1;
    wsc_result_free(&r);
    wsc_free(sc);
    return rc;
}

/* wsim proxy --upstream URL --record FILE [--unixsocket PATH] [--port N] */
static int cmd_proxy(int argc, char **argv)
{
    wsr_proxy_options po = {.port = -2};
    for (int i = 0; i < argc; i++) {
        const char *a = argv[i];
        if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
            fputs(PROXY_HELP, stdout);
            return 0;
        }
        if (strcmp(a, "--upstream") && strcmp(a, "--record") && strcmp(a, "--unixsocket") &&
            strcmp(a, "--port"))
            return usage_error(PROXY_HELP, "unknown argument '%s'", a);
        if (i + 1 >= argc) return usage_error(PROXY_HELP, "%s needs a value", a);
        const char *v = argv[++i];
        if (!strcmp(a, "--upstream")) po.upstream = v;
        else if (!strcmp(a, "--record")) po.record = v;
        else if (!strcmp(a, "--unixsocket")) po.unixsocket = v;
        else {
            char *end;
            long p = strtol(v, &end, 10);
            if (*end || !*v || p < 0 || p > 65535)
                return usage_error(PROXY_HELP, "--port needs a port number (0..65535), got '%s'", v);
            po.port = (int)p;
        }
    }
    if (!po.upstream) return usage_error(PROXY_HELP, "give the server (--upstream URL)");
    if (!po.record) return usage_error(PROXY_HELP, "give the recording (--record FILE)");
    if (po.port == -2) po.port = po.unixsocket ? -1 : 0;
    sigset_t mask;
    sigemptyset(&mask);
    sigaddset(&mask, SIGTERM);
    sigaddset(&mask, SIGINT);
    sigprocmask(SIG_BLOCK, &mask, NULL);
    signal(SIGPIPE, SIG_IGN);
    char err[512];
    wsr_proxy *px = wsr_proxy_new(&po, err, sizeof err);
    if (!px) {
        fprintf(stderr, "wsim proxy: %s\n", err);
        return 2;
    }
    if (wsr_proxy_port(px)) printf("wsim proxy listening on 127.0.0.1:%d\n", wsr_proxy_port(px));
    if (po.unixsocket) printf("wsim proxy listening on unix:%s\n", po.unixsocket);
    printf("wsim proxy ready pid=%ld\n", (long)getpid());
    fflush(stdout);
    struct timespec zero = {0, 0};
    int rc = 0;
    while (rc == 0 && sigtimedwait(&mask, NULL, &zero) < 0)
        rc = wsr_proxy_turn(px, 50);
    if (wsr_proxy_free(px, err, sizeof err) < 0) {
        fprintf(stderr, "wsim proxy: the recording: %s\n", err);
        return 1;
    }
    return rc ? 1 : 0;
}

/* wsim check-trace [--allow-unsettled] --subscriptions FILE RECORDING */
static int cmd_check_trace(int argc, char **argv)
{
    const char *subs = NULL, *path = NULL;
    wsc_traffic_options to = {0};
    for (int i = 0; i < argc; i++) {
        const char *a = argv[i];
        if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
            fputs(CHECK_TRACE_HELP, stdout);
            return 0;
        } else if (!strcmp(a, "--allow-unsettled")) {
            to.allow_unsettled = 1;
        } else if (!strcmp(a, "--subscriptions")) {
            if (i + 1 >= argc) return usage_error(CHECK_TRACE_HELP, "--subscriptions needs a file");
            subs = argv[++i];
        } else if (a[0] == '-' && a[1]) {
            return usage_error(CHECK_TRACE_HELP, "unknown option '%s'", a);
        } else if (path) {
            return usage_error(CHECK_TRACE_HELP, "give exactly one recording");
        } else {
            path = a;
        }
    }
    if (!path) return usage_error(CHECK_TRACE_HELP, "give a recording");
    if (!subs) return usage_error(CHECK_TRACE_HELP, "give the subscriptions (--subscriptions FILE)");
    wsc_scenario *sc = parse_or_say(subs);
    if (!sc) return 2;
    wsr_recording *rec = read_recording(path);
    if (!rec) {
        wsc_free(sc);
        return 2;
    }
    wsc_traffic_result res;
    int rc = wsc_traffic_check(rec, sc, &to, &res);
    if (rc == WS_EINVAL) {
        fprintf(stderr, "%s:0:0: error: the file subscribes nothing (the checker reads the "
                        "`subscribe` lines of a scenario file)\n", subs);
        rc = 2;
    } else if (rc) {
        fprintf(stderr, "wsim: %s: out of memory\n", path);
        rc = 1;
    } else {
        fputs(res.report, stdout);
        rc = res.nviolations ? 1 : 0;
        wsc_traffic_result_free(&res);
    }
    wsr_free(rec);
    wsc_free(sc);
    return rc;
}

static int cmd_repro(int argc, char **argv)
{
    const char *input = NULL, *outpath = NULL;
    wsf_repro_options ro = {.quirks = GEN_QUIRKS_KNOWN, .log = stderr};
    for (int i = 0; i < argc; i++) {
        const char *a = argv[i];
        if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
            fputs(REPRO_HELP, stdout);
            return 0;
        } else if (!strcmp(a, "--strict")) {
            ro.quirks = 0;
        } else if (!strcmp(a, "-o") || !strcmp(a, "--attempts")) {
            if (i + 1 >= argc) return usage_error(REPRO_HELP, "%s needs a value", a);
            if (!strcmp(a, "-o")) {
                outpath = argv[++i];
            } else {
                char *end;
                unsigned long long v = strtoull(argv[++i], &end, 10);
                if (*end || !*argv[i] || v == 0)
                    return usage_error(REPRO_HELP, "--attempts needs a positive number");
                ro.max_attempts = (size_t)v;
            }
        } else if (a[0] == '-' && a[1]) {
            return usage_error(REPRO_HELP, "unknown option '%s'", a);
        } else if (input) {
            return usage_error(REPRO_HELP, "give exactly one input");
        } else {
            input = a;
        }
    }
    if (!input) return usage_error(REPRO_HELP, "give a fuzz input file or seed:N");
    uint64_t seed;
    if (strncmp(input, "seed:", 5) == 0 && wsf_parse_seed(input + 5, &seed) != 0)
        return usage_error(REPRO_HELP, "bad seed '%s': seed:N takes a decimal number from 0 "
                           "to 18446744073709551615", input + 5);
    wsf_repro_result res;
    if (wsf_repro(input, &ro, &res) != 0) {
        fprintf(stderr, "wsim repro: %s\n", res.what ? res.what : "failed");
        wsf_repro_result_free(&res);
        return 1;
    }
    int rc = 0;
    if (!res.failed) {
        fprintf(stderr, "wsim repro: %s passes: nothing to reproduce\n", input);
        rc = 1;
    } else {
        FILE *out = outpath ? fopen(outpath, "w") : stdout;
        if (!out) {
            fprintf(stderr, "wsim repro: %s: %s\n", outpath, strerror(errno));
            rc = 1;
        } else {
            fputs(res.scenario, out);
            if (out != stdout) fclose(out);
            fprintf(stderr, "wsim repro: %s (%zu choices -> %zu, %zu steps -> %zu, %zu runs)%s%s\n",
                    res.kind, res.choices_before, res.choices_after, res.steps_before,
                    res.steps_after, res.attempts, outpath ? ", written to " : "",
                    outpath ? outpath : "");
        }
    }
    wsf_repro_result_free(&res);
    return rc;
}

/* ----- grammar ---------------------------------------------------------------------------- */

#define GRAMMAR_BEGIN "<!-- grammar: BEGIN (wsim grammar --update docs/scenarios.md) -->"
#define GRAMMAR_END "<!-- grammar: END -->"

/* Reads a whole file (NULL with errno set). */
/* wsim grammar [--update FILE | --check FILE] */
static int cmd_grammar(int argc, char **argv)
{
    if (argc == 1 && (!strcmp(argv[0], "--help") || !strcmp(argv[0], "-h"))) {
        fputs(GRAMMAR_HELP, stdout);
        return 0;
    }
    char *g = wsc_grammar();
    if (!g) {
        fputs("wsim: out of memory\n", stderr);
        return 1;
    }
    if (argc == 0) {
        fputs(g, stdout);
        free(g);
        return 0;
    }
    if (argc != 2 || (strcmp(argv[0], "--update") && strcmp(argv[0], "--check"))) {
        free(g);
        return usage_error(GRAMMAR_HELP, "grammar takes nothing, --update FILE or --check FILE");
    }
    const char *path = argv[1];
    int check = !strcmp(argv[0], "--check");
    size_t len;
    char *doc = wsi_read_file(path, WSI_INPUT_MAX, &len);
    if (!doc) {
        fprintf(stderr, "wsim: %s: %s\n", path, wsi_read_error(errno));
        free(g);
        return 1;
    }
    char *b = strstr(doc, GRAMMAR_BEGIN "\n"), *e = b ? strstr(b, GRAMMAR_END) : NULL;
    if (!b || !e) {
        fprintf(stderr, "wsim: %s: no lines \"%s\" and \"%s\" to put the grammar between\n",
                path, GRAMMAR_BEGIN, GRAMMAR_END);
        free(doc);
        free(g);
        return 1;
    }
    b += strlen(GRAMMAR_BEGIN) + 1;
    size_t glen = strlen(g);
    char *block = wsi_xmalloc(glen + 32);
    int blen = snprintf(block, glen + 32, "```text\n%s```\n", g);
    int same = (size_t)(e - b) == (size_t)blen && memcmp(b, block, (size_t)blen) == 0;
    int rc = 0;
    if (check) {
        if (!same) {
            fprintf(stderr, "wsim: %s: the grammar is stale: run wsim grammar --update %s\n",
                    path, path);
            rc = 1;
        }
    } else if (!same) {
        FILE *f = fopen(path, "wb");
        if (!f || fwrite(doc, 1, (size_t)(b - doc), f) != (size_t)(b - doc) ||
            fwrite(block, 1, (size_t)blen, f) != (size_t)blen ||
            fwrite(e, 1, len - (size_t)(e - doc), f) != len - (size_t)(e - doc)) {
            fprintf(stderr, "wsim: %s: cannot write: %s\n", path, strerror(errno));
            rc = 1;
        }
        if (f && fclose(f) != 0) rc = 1;
        if (!rc) printf("%s: grammar updated\n", path);
    }
    free(block);
    free(doc);
    free(g);
    return rc;
}

/* wsim consume [--url URL] FILE: wsc_consume (scenario/src/consume.c). */
static int cmd_consume(int argc, char **argv)
{
    const char *url = getenv("REDIS_URL"), *path = NULL;
    for (int i = 0; i < argc; i++) {
        if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
            fputs(CONSUME_HELP, stdout);
            return 0;
        }
        if (!strcmp(argv[i], "--url") && i + 1 < argc) url = argv[++i];
        else if (argv[i][0] == '-' && argv[i][1])
            return usage_error(CONSUME_HELP, "unknown option '%s'", argv[i]);
        else if (path) return usage_error(CONSUME_HELP, "give exactly one scenario file");
        else path = argv[i];
    }
    if (!path) return usage_error(CONSUME_HELP, "give exactly one scenario file");
    if (!url || !*url) return usage_error(CONSUME_HELP, "no server: set REDIS_URL or --url");
    wsc_scenario *sc = parse_or_say(path);
    if (!sc) return 2;
    const char *inc = getenv("WSIM_INCARNATION");
    int rc = wsc_consume_file(sc, url, inc ? atoi(inc) : 1);
    wsc_free(sc);
    return rc;
}

/* A non-negative decimal that fits, or -1. */
static long long count_arg(const char *s)
{
    if (!s || !*s || *s == '-' || *s == '+') return -1;
    char *end;
    errno = 0;
    unsigned long long v = strtoull(s, &end, 10);
    return errno || *end || v > (1ull << 62) ? -1 : (long long)v;
}

/* wsim outcomes [--seed N] [--runs N] [--entries N] [--no-shrink] [-o FILE] FILE */
static int cmd_outcomes(int argc, char **argv)
{
    wsc_outcomes_options oo = {.seed = 1, .runs = 20, .max_entries = 4, .shrink = 1};
    const char *path = NULL, *outp = NULL;
    for (int i = 0; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
            fputs(OUTCOMES_HELP, stdout);
            return 0;
        }
        if (!strcmp(a, "--no-shrink")) {
            oo.shrink = 0;
        } else if (!strcmp(a, "--seed") || !strcmp(a, "--runs") || !strcmp(a, "--entries") ||
                   !strcmp(a, "-o")) {
            if (!v) return usage_error(OUTCOMES_HELP, "%s needs a value", a);
            i++;
            if (!strcmp(a, "-o")) {
                outp = v;
                continue;
            }
            long long n = count_arg(v);
            if (n < 0 || (n == 0 && strcmp(a, "--seed")) || (!strcmp(a, "--entries") && n > 16))
                return usage_error(OUTCOMES_HELP, "%s needs a number%s, got '%s'", a,
                                   !strcmp(a, "--entries") ? " from 1 to 16" : "", v);
            if (!strcmp(a, "--seed")) oo.seed = (uint64_t)n;
            else if (!strcmp(a, "--runs")) oo.runs = (size_t)n;
            else oo.max_entries = (size_t)n;
        } else if (a[0] == '-' && a[1]) {
            return usage_error(OUTCOMES_HELP, "unknown option '%s'", a);
        } else if (path) {
            return usage_error(OUTCOMES_HELP, "give exactly one scenario file");
        } else {
            path = a;
        }
    }
    if (!path) return usage_error(OUTCOMES_HELP, "give exactly one scenario file");
    wsc_scenario *sc = parse_or_say(path);
    if (!sc) return 2;
    wsc_options wo = {0};
    wsc_outcomes_result r;
    if (wsc_outcomes(sc, &wo, &oo, &r)) {
        fprintf(stderr, "wsim: %s: out of memory\n", path);
        wsc_free(sc);
        return 1;
    }
    int rc = 0;
    if (r.error) {
        fprintf(stderr, "wsim: %s: %s\n", path, r.error);
        rc = 2;
    } else if (!r.failed) {
        printf("%s: %zu runs drawn from seed %llu: none breaks %s\n", path, r.runs,
               (unsigned long long)oo.seed, wsc_forbidden(sc) ? "what the file forbids" : "an invariant");
    } else {
        printf("%s: run %zu of seed %llu: %s\n", path, r.runs, (unsigned long long)r.seed,
               r.drawn);
        if (r.detail && *r.detail) printf("  %s\n", r.detail);
        printf("replay it: wsim outcomes --seed %llu --runs 1 %s\n", (unsigned long long)r.seed,
               path);
        if (oo.shrink) printf("shrunk in %zu runs to %s\n", r.tries, r.shrunk);
        FILE *f = outp ? fopen(outp, "w") : stdout;
        if (!f) {
            fprintf(stderr, "wsim: %s: %s\n", outp, strerror(errno));
        } else {
            if (outp) printf("the scenario: %s (wsim run %s fails so)\n", outp, outp);
            else printf("the scenario:\n");
            fputs(r.scenario, f);
            if (outp) fclose(f);
        }
        rc = 1;
    }
    wsc_outcomes_result_free(&r);
    wsc_free(sc);
    return rc;
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fputs(USAGE, stderr);
        return 2;
    }
    /* test only (scenario/tests/oom_tool.sh): every allocation of common/'s family from
     * the N-th on fails, so that each out-of-memory path of the tool can be watched */
    const char *fail_at = getenv("WSIM_TEST_ALLOC_FAIL");
    if (fail_at) wsi_alloc_fail_at(strtoul(fail_at, NULL, 10), 0);
    const char *cmd = argv[1];
    if (strcmp(cmd, "run") == 0) return cmd_run(argc - 2, argv + 2);
    if (strcmp(cmd, "diff") == 0) return cmd_diff(argc - 2, argv + 2);
    if (strcmp(cmd, "trace") == 0) return cmd_show(argc - 2, argv + 2, 0);
    if (strcmp(cmd, "diagram") == 0) return cmd_show(argc - 2, argv + 2, 1);
    if (strcmp(cmd, "explore") == 0) return wsim_cmd_explore(argc - 2, argv + 2);
    if (strcmp(cmd, "repro") == 0) return cmd_repro(argc - 2, argv + 2);
    if (strcmp(cmd, "check-trace") == 0) return cmd_check_trace(argc - 2, argv + 2);
    if (strcmp(cmd, "proxy") == 0) return cmd_proxy(argc - 2, argv + 2);
    if (strcmp(cmd, "grammar") == 0) return cmd_grammar(argc - 2, argv + 2);
    if (strcmp(cmd, "consume") == 0) return cmd_consume(argc - 2, argv + 2);
    if (strcmp(cmd, "outcomes") == 0) return cmd_outcomes(argc - 2, argv + 2);
    if (strcmp(cmd, "--version") == 0) {
        printf("wsim %s (scenarios %s, engine libwsim %s, fake libfakeredis %s answering as "
               "redis-server %s)\n", WSIM_VERSION, WSC_VERSION, WS_VERSION, FR_VERSION,
               FR_REDIS_VERSION);
        /* the framework revisions the engine follows (engine/framework.pins) */
        printf("follows the RustStream framework's files at these revisions:\n");
        for (size_t i = 0; i < ws_framework_pin_count(); i++) {
            const ws_framework_pin *p = ws_framework_pin_at(i);
            printf("  %s %s @ %s\n", p->repo, p->path, p->commit);
        }
        return 0;
    }
    if (strcmp(cmd, "help") == 0 || strcmp(cmd, "--help") == 0 || strcmp(cmd, "-h") == 0) {
        const char *what = argc > 2 ? argv[2] : "";
        fputs(!strcmp(what, "run")       ? RUN_HELP
              : !strcmp(what, "diff")    ? DIFF_HELP
              : !strcmp(what, "trace")   ? TRACE_HELP
              : !strcmp(what, "diagram") ? DIAGRAM_HELP
              : !strcmp(what, "explore") ? WSIM_EXPLORE_HELP
              : !strcmp(what, "repro")   ? REPRO_HELP
              : !strcmp(what, "check-trace") ? CHECK_TRACE_HELP
              : !strcmp(what, "proxy")   ? PROXY_HELP
              : !strcmp(what, "grammar") ? GRAMMAR_HELP
              : !strcmp(what, "consume") ? CONSUME_HELP
              : !strcmp(what, "outcomes") ? OUTCOMES_HELP : USAGE,
              stdout);
        return 0;
    }
    fprintf(stderr, "wsim: unknown command '%s'\n\n%s", cmd, USAGE);
    return 2;
}
