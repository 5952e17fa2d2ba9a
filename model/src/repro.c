/* repro.c -- shrinking a failing fuzz_outcomes input to the smallest failing scenario
 * (repro.h).
 *
 * The input becomes a vector of recorded choices (wsm_choice.h); every candidate is that
 * vector edited and replayed (CH_REPLAY) through the same generator and check as the fuzz
 * target.  A candidate runs in a child process (fork) that reports its failure kind and
 * the choices it really used through a pipe; a child that dies by a signal, or exits
 * without reporting, crashed.  The last, smallest failing run is replayed once more in a
 * child that streams its scenario lines as it plays them, so that a run crashing the
 * engine still comes out as a scenario up to and including the step that crashed.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include "wsm_repro.h"
#include "wsi_alloc.h"
#include "wsi_buf.h"
#include "wsi_io.h"




/* The limits of the run being reproduced (gen_target_limits: seeded runs have a minimum
 * length, fuzz bytes none), set by wsf_repro; children inherit them. */
static gen_limits target_limits;

/* ----- One candidate ------------------------------------------------------------------- */

typedef struct outcome {
    char kind[32];     /* "" passed; a gen_failure kind; "crash" */
    uint64_t *used;    /* the choices the run really made (offsets), trailing 0s cut */
    size_t nused;
    size_t *bounds;    /* where each step's choices start, in used */
    size_t nbounds;
} outcome;

static void outcome_free(outcome *o)
{
    wsi_free(o->used);
    wsi_free(o->bounds);
    memset(o, 0, sizeof *o);
}

/* Runs the choices v[0..n) in this process. */
static void run_here(const uint64_t *v, size_t n, unsigned quirks, outcome *out)
{
    memset(out, 0, sizeof *out);
    ch c;
    ch_init_replay(&c, v, n, 1);
    gen_failure f;
    gen_run run;
    if (gen_check_choices(&c, &target_limits, quirks, &f, &run))
        snprintf(out->kind, sizeof out->kind, "%s", f.kind);
    gen_failure_free(&f);
    size_t nrec;
    const ch_rec *rec = ch_recorded(&c, &nrec);
    while (nrec > 0 && rec[nrec - 1].value == 0) nrec--;
    out->used = wsi_xrealloc(NULL, (nrec ? nrec : 1) * sizeof *out->used);
    for (size_t i = 0; i < nrec; i++) out->used[i] = rec[i].value;
    out->nused = nrec;
    out->bounds = wsi_xrealloc(NULL, (run.nsteps ? run.nsteps : 1) * sizeof *out->bounds);
    for (size_t i = 0; i < run.nsteps; i++)
        if (run.steps[i].choice_at <= nrec) out->bounds[out->nbounds++] = run.steps[i].choice_at;
    gen_free(&run);
    ch_free(&c);
}

static size_t read_all(int fd, wsi_buf *b)
{
    char tmp[4096];
    for (;;) {
        ssize_t r = read(fd, tmp, sizeof tmp);
        if (r < 0 && errno == EINTR) continue;
        if (r <= 0) break;
        wsi_buf_xadd(b, tmp, (size_t)r);
    }
    return b->len;
}

/* A child's report, streamed as the run goes so that a crash keeps what came before:
 * records of a tag byte and a 64-bit value -- 'c' a choice (its offset), 'b' the first
 * choice of the next step, 'k' the end (the value is the kind's length, the kind follows). */
typedef struct child_stream {
    int fd;
    ch *c;
} child_stream;

static void put_rec(int fd, char tag, uint64_t v)
{
    char rec[1 + sizeof v];
    rec[0] = tag;
    memcpy(rec + 1, &v, sizeof v);
    wsi_write_all(fd, rec, sizeof rec);
}

static void on_choice_rec(void *ud, uint64_t value, uint64_t range)
{
    (void)range;
    put_rec(((child_stream *)ud)->fd, 'c', value);
}

static void on_step_rec(void *ud, const gen_run *run, size_t i)
{
    if (i != (size_t)-1) put_rec(((child_stream *)ud)->fd, 'b', run->steps[i].choice_at);
}

/* In a child: runs the source c through the target's check, streaming as it goes. */
static void child_check(ch *c, unsigned quirks, int fd)
{
    child_stream cs = {fd, c};
    c->on_choice = on_choice_rec;
    c->on_ud = &cs;
    gen_limits lim = target_limits;
    lim.before_step = on_step_rec;
    lim.ud = &cs;
    gen_failure f;
    char kind[32] = "";
    if (gen_check_choices(c, &lim, quirks, &f, NULL)) snprintf(kind, sizeof kind, "%s", f.kind);
    gen_failure_free(&f);
    put_rec(fd, 'k', strlen(kind));
    wsi_write_all(fd, kind, strlen(kind));
}

/* Reads a child's stream into out; a stream without its end record means it crashed. */
static void parse_stream(const wsi_buf *b, outcome *out)
{
    memset(out, 0, sizeof *out);
    size_t at = 0, capu = 0, capb = 0;
    int ended = 0;
    while (at + 9 <= b->len) {
        char tag = b->p[at];
        uint64_t v;
        memcpy(&v, b->p + at + 1, sizeof v);
        at += 9;
        if (tag == 'c') {
            if (out->nused == capu) {
                capu = capu ? capu * 2 : 64;
                out->used = wsi_xrealloc(out->used, capu * sizeof *out->used);
            }
            out->used[out->nused++] = v;
        } else if (tag == 'b') {
            if (out->nbounds == capb) {
                capb = capb ? capb * 2 : 32;
                out->bounds = wsi_xrealloc(out->bounds, capb * sizeof *out->bounds);
            }
            out->bounds[out->nbounds++] = (size_t)v;
        } else if (tag == 'k') {
            size_t n = v < sizeof out->kind - 1 ? (size_t)v : sizeof out->kind - 1;
            if (at + n <= b->len) memcpy(out->kind, b->p + at, n);
            out->kind[n] = '\0';
            ended = 1;
            break;
        }
    }
    if (!ended) snprintf(out->kind, sizeof out->kind, "crash");
    while (out->nused > 0 && out->used[out->nused - 1] == 0) out->nused--;
    size_t keep = 0;
    for (size_t i = 0; i < out->nbounds; i++)
        if (out->bounds[i] <= out->nused) out->bounds[keep++] = out->bounds[i];
    out->nbounds = keep;
    if (!out->used) out->used = wsi_xrealloc(NULL, sizeof *out->used);
}

/* Forks; the child runs fn(arg, fd) with stderr to a temporary file (kept in err when
 * asked) and exits; the parent gets the child's stream.  Returns the child's wait status
 * (-1 when it could not be run). */
static int in_child(void (*fn)(void *arg, int fd), void *arg, wsi_buf *stream, wsi_buf *err)
{
    int fds[2];
    if (pipe(fds) != 0) return -1;
    char path[] = "/tmp/wsim-repro-XXXXXX";
    int efd = mkstemp(path);
    if (efd >= 0) unlink(path);
    fflush(NULL);
    pid_t pid = fork();
    if (pid < 0) {
        close(fds[0]);
        close(fds[1]);
        if (efd >= 0) close(efd);
        return -1;
    }
    if (pid == 0) {
        close(fds[0]);
        if (efd >= 0) {
            dup2(efd, 2);
        } else {
            int devnull = open("/dev/null", O_WRONLY);
            if (devnull >= 0) dup2(devnull, 2);
        }
        fn(arg, fds[1]);
        _exit(0);
    }
    close(fds[1]);
    read_all(fds[0], stream);
    close(fds[0]);
    int status;
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }
    if (efd >= 0) {
        if (err && lseek(efd, 0, SEEK_SET) == 0) {
            char tmp[4096];
            ssize_t k;
            while (err->len < 16384 && (k = read(efd, tmp, sizeof tmp)) > 0)
                wsi_buf_xadd(err, tmp, (size_t)k);
        }
        close(efd);
    }
    return status;
}

/* What a child process replays: the recorded choices and the quirks to compare with. */
typedef struct replay_job {
    const uint64_t *v;
    size_t n;
    unsigned quirks;
} replay_job;

static void replay_child(void *arg, int fd)
{
    replay_job *j = arg;
    ch c;
    ch_init_replay(&c, j->v, j->n, 0);
    child_check(&c, j->quirks, fd);
    ch_free(&c);
}

/* Runs the choices in a child process. */
static void run_forked(const uint64_t *v, size_t n, unsigned quirks, outcome *out)
{
    replay_job j = {v, n, quirks};
    wsi_buf b = {0};
    in_child(replay_child, &j, &b, NULL);
    parse_stream(&b, out);
    wsi_free(b.p);
}

/* ----- The final run, streamed ------------------------------------------------------------ */

typedef struct stream_ctx {
    int fd;
} stream_ctx;

static void stream_step(void *ud, const gen_run *run, size_t i)
{
    stream_ctx *s = ud;
    char *text = i == (size_t)-1 ? gen_scenario_head(run, NULL, NULL) : gen_scenario_step(run, i);
    /* each piece framed by its length: the parent keeps whole pieces only */
    uint64_t n = strlen(text);
    char tag = i == (size_t)-1 ? 'H' : 'L';
    wsi_write_all(s->fd, &tag, 1);
    wsi_write_all(s->fd, &n, sizeof n);
    wsi_write_all(s->fd, text, n);
    wsi_free(text);
}

/* The child of stream_forked: plays the choices, each scenario piece streamed first. */
static void stream_child(void *arg, int fd)
{
    replay_job *j = arg;
    stream_ctx sc = {fd};
    gen_limits lim = target_limits;
    lim.before_step = stream_step;
    lim.ud = &sc;
    ch c;
    ch_init_replay(&c, j->v, j->n, 0);
    gen_failure f;
    gen_check_choices(&c, &lim, j->quirks, &f, NULL);
    gen_failure_free(&f);
    ch_free(&c);
}

/* Plays the choices in a child streaming the scenario (head, then each step's line before
 * the step runs) and its stderr: the lines of a run that crashed the process, and what it
 * said when it died. */
static int stream_forked(const uint64_t *v, size_t n, unsigned quirks, wsi_buf *head, wsi_buf *lines,
                         wsi_buf *err)
{
    replay_job j = {v, n, quirks};
    wsi_buf b = {0};
    int status = in_child(stream_child, &j, &b, err);
    size_t at = 0;
    while (at + 1 + sizeof(uint64_t) <= b.len) {
        char tag = b.p[at];
        uint64_t len;
        memcpy(&len, b.p + at + 1, sizeof len);
        if (at + 1 + sizeof len + len > b.len) break;
        wsi_buf_xadd(tag == 'H' ? head : lines, b.p + at + 1 + sizeof len, (size_t)len);
        at += 1 + sizeof len + (size_t)len;
    }
    wsi_free(b.p);
    return status;
}

/* ----- Input ----------------------------------------------------------------------------- */

int wsf_parse_seed(const char *text, uint64_t *seed)
{
    uint64_t v = 0;
    if (!*text) return -1;
    for (const char *c = text; *c; c++) {
        if (*c < '0' || *c > '9') return -1; /* no sign, no space: strtoull takes "-1" */
        unsigned d = (unsigned)(*c - '0');
        if (v > (UINT64_MAX - d) / 10) return -1;
        v = v * 10 + d;
    }
    *seed = v;
    return 0;
}

typedef struct source_job {
    ch *c;
    unsigned quirks;
} source_job;

static void source_child(void *arg, int fd)
{
    source_job *j = arg;
    child_check(j->c, j->quirks, fd);
}

/* The input's run, in a child: its choices, steps and failure kind ("crash" when the
 * process died).  0, or -1 with err when the input cannot be read. */
static int input_run(const char *input, unsigned quirks, outcome *out, char *err, size_t errn)
{
    ch c;
    uint8_t *data = NULL;
    size_t size = 0;
    if (strncmp(input, "seed:", 5) == 0) {
        uint64_t seed;
        if (wsf_parse_seed(input + 5, &seed) != 0) {
            snprintf(err, errn, "bad seed '%s' (seed:N, N a decimal number from 0 to "
                     "18446744073709551615)", input + 5);
            return -1;
        }
        ch_init_prng(&c, seed, 0);
    } else {
        data = (uint8_t *)wsi_read_file(input, WSI_INPUT_MAX, &size);
        if (!data) {
            snprintf(err, errn, "cannot read %s: %s", input, wsi_read_error(errno));
            return -1;
        }
        ch_init_fdp(&c, data, size, 0);
    }
    source_job j = {&c, quirks};
    wsi_buf b = {0};
    in_child(source_child, &j, &b, NULL);
    parse_stream(&b, out);
    wsi_free(b.p);
    wsi_free(data);
    ch_free(&c);
    return 0;
}

/* ----- Shrinking ---------------------------------------------------------------------------- */

typedef struct shrinker {
    const wsf_repro_options *opt;
    int fork;          /* candidates in child processes (the failure is a crash) */
    size_t max;
    size_t attempts;
    char kind[32];
    uint64_t *v;       /* the smallest failing vector so far */
    size_t n;
    size_t *bounds;    /* its steps' first choices (unknown for crashes: none) */
    size_t nbounds;
} shrinker;

/* Tries candidate c[0..n): keeps it (as the choices it really used) when it fails the
 * same way and is strictly smaller -- shorter, or as long and lower at the first
 * difference -- so shrinking always ends.  1 kept, 0 not. */
static int try_candidate(shrinker *s, const uint64_t *c, size_t n)
{
    if (s->attempts >= s->max) return 0;
    s->attempts++;
    outcome o;
    if (s->fork) run_forked(c, n, s->opt->quirks, &o);
    else run_here(c, n, s->opt->quirks, &o);
    int keep = o.kind[0] && strcmp(o.kind, s->kind) == 0;
    if (keep) {
        int smaller = o.nused < s->n;
        if (o.nused == s->n)
            for (size_t i = 0; i < o.nused; i++)
                if (o.used[i] != s->v[i]) {
                    smaller = o.used[i] < s->v[i];
                    break;
                }
        keep = smaller;
    }
    if (keep) {
        wsi_free(s->v);
        wsi_free(s->bounds);
        s->v = o.used;
        s->n = o.nused;
        s->bounds = o.bounds;
        s->nbounds = o.nbounds;
        o.used = NULL;
        o.bounds = NULL;
    }
    outcome_free(&o);
    return keep;
}

/* The vector without choices [from, to). */
static int try_without(shrinker *s, size_t from, size_t to)
{
    if (from >= to || to > s->n) return 0;
    uint64_t *c = wsi_xrealloc(NULL, (s->n ? s->n : 1) * sizeof *c);
    memcpy(c, s->v, from * sizeof *c);
    memcpy(c + from, s->v + to, (s->n - to) * sizeof *c);
    int kept = try_candidate(s, c, s->n - (to - from));
    wsi_free(c);
    return kept;
}

/* The first steps only: the run ends where the vector does. */
static int pass_truncate(shrinker *s)
{
    /* the shortest failing prefix of whole steps, by bisection over the step bounds */
    int any = 0;
    size_t lo = 0, hi = s->nbounds;
    while (lo < hi && s->attempts < s->max) {
        size_t mid = lo + (hi - lo) / 2;
        size_t cut = s->bounds[mid];
        size_t before = s->nbounds;
        if (cut < s->n && try_without(s, cut, s->n)) {
            any = 1;
            hi = mid < s->nbounds ? mid : s->nbounds;
            if (s->nbounds < before && hi > s->nbounds) hi = s->nbounds;
        } else {
            lo = mid + 1;
        }
    }
    return any;
}

/* Whole steps deleted, k at a time, k halving. */
static int pass_steps(shrinker *s)
{
    int any = 0;
    for (size_t k = s->nbounds / 2 ? s->nbounds / 2 : 1; k >= 1 && s->attempts < s->max; k /= 2) {
        size_t i = 0;
        while (i + k <= s->nbounds && s->attempts < s->max) {
            size_t from = s->bounds[i];
            size_t to = i + k < s->nbounds ? s->bounds[i + k] : s->n;
            if (try_without(s, from, to)) any = 1;
            else i++;
        }
        if (k == 1) break;
    }
    return any;
}

/* Spans of raw choices deleted (a step's parameters), small ones. */
static int pass_spans(shrinker *s)
{
    int any = 0;
    for (size_t k = 2; k >= 1; k--) {
        size_t i = 0;
        while (i + k <= s->n && s->attempts < s->max) {
            if (try_without(s, i, i + k)) any = 1;
            else i++;
        }
    }
    return any;
}

/* Single choices lowered: to 0, to half, by one. */
static int pass_lower(shrinker *s)
{
    int any = 0;
    for (size_t i = 0; i < s->n && s->attempts < s->max; i++) {
        if (s->v[i] == 0) continue;
        uint64_t tries[3] = {0, s->v[i] / 2, s->v[i] - 1};
        for (int t = 0; t < 3 && i < s->n && s->attempts < s->max; t++) {
            if (t > 0 && tries[t] == tries[t - 1]) continue;
            if (tries[t] >= s->v[i]) continue;
            uint64_t *c = wsi_xrealloc(NULL, s->n * sizeof *c);
            memcpy(c, s->v, s->n * sizeof *c);
            c[i] = tries[t];
            int kept = try_candidate(s, c, s->n);
            wsi_free(c);
            if (kept) {
                any = 1;
                break;
            }
        }
    }
    return any;
}

static void shrink(shrinker *s)
{
    int changed = 1;
    while (changed && s->attempts < s->max) {
        changed = 0;
        changed |= pass_truncate(s);
        changed |= pass_steps(s);
        changed |= pass_lower(s);
        if (!changed) changed |= pass_spans(s);
        if (s->opt->log)
            fprintf(s->opt->log, "repro: %zu choices, %zu steps after %zu runs\n", s->n,
                    s->nbounds, s->attempts);
    }
}

/* ----- The entry point -------------------------------------------------------------------------- */

static size_t count_lines(const char *p)
{
    size_t n = 0;
    for (; p && *p; p++) n += *p == '\n';
    return n;
}

int wsf_repro(const char *input, const wsf_repro_options *opt_in, wsf_repro_result *out)
{
    static const wsf_repro_options defaults = {.quirks = GEN_QUIRKS_KNOWN};
    const wsf_repro_options *opt = opt_in ? opt_in : &defaults;
    memset(out, 0, sizeof *out);
    char err[512];
    target_limits = gen_target_limits();
    outcome first;
    if (input_run(input, opt->quirks, &first, err, sizeof err) != 0) {
        out->what = wsi_xstrdup(err);
        return -1;
    }
    if (!first.kind[0]) {
        outcome_free(&first);
        out->failed = 0;
        out->what = wsi_xstrdup("the input passes: nothing to reproduce");
        return 0;
    }
    /* candidates run here unless the failure is a crash of the process */
    shrinker s = {.opt = opt, .max = opt->max_attempts ? opt->max_attempts : 4000};
    s.fork = !opt->no_fork && strcmp(first.kind, "crash") == 0;
    snprintf(s.kind, sizeof s.kind, "%s", first.kind);
    s.v = first.used;
    s.n = first.nused;
    s.bounds = first.bounds;
    s.nbounds = first.nbounds;
    first.used = NULL;
    first.bounds = NULL;
    out->choices_before = s.n;
    if (opt->log) fprintf(opt->log, "repro: %s fails (%s), %zu choices; shrinking\n", input, s.kind, s.n);
    shrink(&s);
    out->failed = 1;
    out->attempts = s.attempts;
    out->choices_after = s.n;
    snprintf(out->kind, sizeof out->kind, "%s", s.kind);

    wsi_buf what = {0}, text = {0};
    char origin[256];
    snprintf(origin, sizeof origin,
             "found by fuzz_outcomes, shrunk by wsim repro %s (%zu choices to %zu, %zu runs)",
             input, out->choices_before, out->choices_after, s.attempts);
    if (strcmp(s.kind, "crash") != 0 && !opt->no_fork) {
        /* it does not crash: play it here once more for its message and expectations */
    }
    if (strcmp(s.kind, "crash") == 0) {
        wsi_buf head = {0}, lines = {0}, serr = {0};
        int status = stream_forked(s.v, s.n, opt->quirks, &head, &lines, &serr);
        wsi_buf_xputs(&what, "the run crashed the process");
        if (status != -1 && WIFSIGNALED(status)) {
            char sig[96];
            snprintf(sig, sizeof sig, " (signal %d, %s)", WTERMSIG(status), strsignal(WTERMSIG(status)));
            wsi_buf_xputs(&what, sig);
        } else if (status != -1 && WIFEXITED(status)) {
            char ex[64];
            snprintf(ex, sizeof ex, " (exit status %d)", WEXITSTATUS(status));
            wsi_buf_xputs(&what, ex);
        }
        if (serr.len) {
            /* the first lines the process said when it died */
            size_t k = 0, at = 0;
            while (at < serr.len && k < 12) {
                if (serr.p[at] == '\n') k++;
                at++;
            }
            wsi_buf_xputs(&what, ":\n");
            wsi_buf_xadd(&what, serr.p, at);
        }
        /* the head again, now with the comment (the streamed one has none) */
        wsi_buf_xputs(&text, "scenario a run that crashed fuzz_outcomes\n");
        const char *h = head.p ? strchr(head.p, '\n') : NULL;
        const char *needs = h ? h + 1 : NULL;
        const char *needs_end = needs ? strchr(needs, '\n') : NULL;
        if (needs && needs_end) wsi_buf_xadd(&text, needs, (size_t)(needs_end + 1 - needs));
        wsi_buf_xputs(&text, "# ");
        wsi_buf_xputs(&text, origin);
        wsi_buf_xputs(&text, "\n");
        for (const char *p = what.p; p && *p;) {
            const char *e = strchr(p, '\n');
            size_t len = e ? (size_t)(e - p) : strlen(p);
            wsi_buf_xputs(&text, "# ");
            wsi_buf_xadd(&text, p, len);
            wsi_buf_xputs(&text, "\n");
            p += len;
            if (*p == '\n') p++;
        }
        wsi_buf_xputs(&text, "# the last step is the one that crashed\n");
        if (needs_end) wsi_buf_xputs(&text, needs_end + 1);
        if (lines.p) wsi_buf_xputs(&text, lines.p);
        out->steps_after = count_lines(lines.p);
        wsi_free(head.p);
        wsi_free(lines.p);
        wsi_free(serr.p);
    } else {
        ch c;
        ch_init_replay(&c, s.v, s.n, 0);
        gen_failure f;
        gen_run run;
        int failed = gen_check_choices(&c, &target_limits, opt->quirks, &f, &run);
        ch_free(&c);
        if (!failed) {
            wsi_buf_xputs(&what, "the shrunk run passed when replayed in this process (a failure "
                           "that depends on the process?)");
        } else {
            wsi_buf_xputs(&what, f.message);
        }
        wsi_buf comment = {0};
        wsi_buf_xputs(&comment, origin);
        wsi_buf_xputs(&comment, "\n");
        wsi_buf_xputs(&comment, what.p);
        char *sc = gen_scenario(&run, "a run fuzz_outcomes found failing", comment.p, f.expect, NULL);
        wsi_buf_xputs(&text, sc);
        wsi_free(sc);
        wsi_free(comment.p);
        out->steps_after = run.nsteps;
        gen_failure_free(&f);
        gen_free(&run);
    }
    out->what = what.p ? what.p : wsi_xstrdup("");
    out->scenario = text.p ? text.p : wsi_xstrdup("");
    wsi_free(s.v);
    wsi_free(s.bounds);
    return 0;
}

void wsf_repro_result_free(wsf_repro_result *r)
{
    if (!r) return;
    wsi_free(r->scenario);
    wsi_free(r->what);
    memset(r, 0, sizeof *r);
}
