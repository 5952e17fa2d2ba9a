/* run.c -- running a parsed scenario on a fresh ws_sim, statement by statement.
 *
 * Aliases name produced entries; an action on an alias acts on that entry's latest
 * delivery (a retry copy counts as the same entry), and $alias stands for that delivery's
 * id (the produced id before the first delivery).  The run stops at the first
 * expectation that does not hold or the first step that fails unexpectedly, and says
 * "file:line: <the line>", what was expected, what happened, and the trace around it. */
#include <limits.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "wsi_alloc.h"
#include "wsi_buf.h"
#include "wsi_strmap.h"
#include "wsc_int.h"
#include "wsc_pcheck.h"
#include "wsc_picture.h"
#include "wsc_world.h"

/* The framework's retry counter, as a field of a stream entry (SEMANTICS.md §2). */
#define RETRY_FIELD "h:" WS_RETRY_HEADER

typedef struct alias {
    char *name;
    size_t root;      /* 1-based produced index */
    char *sub;        /* the subscription it was produced for */
} alias;

/* One subscription of the run. */
typedef struct subrec {
    char *name;             /* the scenario's name for it */
    ws_sub *sub;
    const wsc_stmt *def;    /* its subscribe statement */
    ws_report report;       /* the last failure report a read of it handed out */
    char *report_error;     /* that report's first_error (owned) */
    int has_report;         /* a read handed one out */
} subrec;

struct runner {
    const wsc_scenario *sc;
    const wsc_options *opt;
    ws_sim *sim;
    subrec *subs;            /* in subscribe order */
    size_t nsubs;
    alias *aliases;
    size_t naliases;
    wsi_strmap alias_index;  /* name -> index in aliases */
    size_t *alias_of_root;   /* per root (1-based): 1 + its alias's index, 0 if none */
    size_t nalias_of_root;
    ws_delivery **latest_of; /* per root (1-based): the latest delivery handed out */
    size_t nlatest;
    wsi_strmap stmts_of;     /* alias name -> index in stmt_lists: its handler statements */
    size_t **stmt_lists;     /* per alias name: statement indexes, ended by (size_t)-1 */
    size_t nstmt_lists;
    wsi_strmap by_payload;   /* consume mode: a produce statement's payload -> its 1-based
                                number (the root its deliveries are filed under) */
    ws_delivery **seen;   /* every delivery handed out, in order */
    size_t nseen, capseen; /* grown by doubling: an explorer's child appends to the
                              parent's array in place, never copying all of it */
    wsc_world *world;     /* the file drives consumer processes: their server and them
                             (wsc_world.h); NULL for wsim's own consumer */
    int bad_input;        /* the run failed for its input's sake (a process misbehaved) */
    int consuming;        /* consume mode: run_stmt runs the statement consume_stmt chose */
    int *fault_fired;     /* per statement: its fault fired (the fault layer writes it) */
    unsigned char *fault_armed; /* per statement: its fault was armed */
    /* the outcome */
    int oom;              /* out of memory: the run stopped, wsc_run answers WS_ENOMEM */
    int failed;
    wsc_status status;
    char *report;
    size_t checks;
};
typedef struct runner runner;

/* ----- Text helpers ------------------------------------------------------------------------------ */

/* Text is built in wsi_buf (wsi_buf.h): out of memory sticks in the buffer, and the
 * runner looks once, where the text is used (runner_buf_ok). */

/* Out of memory: the run stops here, and wsc_run answers WS_ENOMEM.  Returns -1. */
static int oom(runner *r)
{
    r->oom = 1;
    r->failed = 1;
    if (!r->status) r->status = WSC_ERROR;
    return -1;
}

/* Whether text b is whole; when an append ran out of memory, the run stops (oom). */
static int runner_buf_ok(runner *r, const wsi_buf *b)
{
    if (!b->oom) return 1;
    oom(r);
    return 0;
}

/* The last `lines` lines of the simulation's trace, indented. */
static void trace_tail(runner *r, wsi_buf *b, int lines)
{
    size_t len;
    char *t = ws_sim_trace_text(r->sim, &len);
    if (!t || !len) {
        wsi_free(t);
        return;
    }
    size_t start = len;
    int seen = 0;
    while (start > 0) {
        if (t[start - 1] == '\n' && start != len && ++seen >= lines) break;
        start--;
    }
    wsi_buf_add(b, "  trace around it:\n", 19);
    for (size_t i = start; i < len;) {
        size_t e = i;
        while (e < len && t[e] != '\n') e++;
        wsi_buf_add(b, "    ", 4);
        wsi_buf_add(b, t + i, e - i);
        wsi_buf_add(b, "\n", 1);
        i = e + 1;
    }
    wsi_free(t);
}

/* Records the first failure: where, what was expected, what happened. */
static int fail(runner *r, const wsc_stmt *st, wsc_status status, const char *expected,
                const char *fmt, ...) __attribute__((format(printf, 5, 6)));
static int fail(runner *r, const wsc_stmt *st, wsc_status status, const char *expected,
                const char *fmt, ...)
{
    if (r->failed) return -1;
    r->failed = 1;
    r->status = status;
    char got[2048];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(got, sizeof got, fmt, ap);
    va_end(ap);
    wsi_buf b = {0};
    wsi_buf_printf(&b, "%s:%d: %s\n", r->sc->name, st->line, st->src ? st->src : "");
    /* a block (flush, read) starts on the next line: no space before it */
    if (expected) wsi_buf_printf(&b, "  expected:%s%s\n", expected[0] == '\n' ? "" : " ", expected);
    const char *pad = got[0] == '\n' ? "" : expected ? "      " : " ";
    wsi_buf_printf(&b, "  %s%s%s\n", expected ? "got:" : "error:", pad, got);
    trace_tail(r, &b, 16);
    if (!runner_buf_ok(r, &b)) {
        wsi_buf_free(&b);
        return -1;
    }
    r->report = b.p;
    return -1;
}

/* ----- Names ------------------------------------------------------------------------------------- */

/* The index of the subscription called name, or -1. */
static int sub_index(runner *r, const char *name)
{
    for (size_t i = 0; i < r->nsubs; i++)
        if (strcmp(r->subs[i].name, name) == 0) return (int)i;
    return -1;
}

/* The subscription called name, or NULL after failing statement st. */
static ws_sub *find_sub(runner *r, const wsc_stmt *st, const char *name)
{
    int i = sub_index(r, name);
    if (i < 0) {
        fail(r, st, WSC_ERROR, NULL, "no subscription named '%s' (subscribe it first)", name);
        return NULL;
    }
    return r->subs[i].sub;
}

/* The alias named by the len bytes at name, or NULL. */
static alias *find_alias_n(runner *r, const char *name, size_t len)
{
    size_t i;
    return wsi_strmap_get(&r->alias_index, name, len, &i) ? &r->aliases[i] : NULL;
}

static alias *find_alias(runner *r, const char *name)
{
    return find_alias_n(r, name, strlen(name));
}

/* Names root (the 1-based count of the entry produced) with st's alias (and its
 * subject).  0, or -1 (oom). */
static int add_alias(runner *r, const wsc_stmt *st, size_t root)
{
    alias *va = wsi_realloc(r->aliases, (r->naliases + 1) * sizeof *r->aliases);
    if (!va) return oom(r);
    r->aliases = va;
    alias a = {wsi_strdup(st->alias), root, wsi_strdup(st->sub)};
    if (!a.name || !a.sub || root >= (size_t)-2) goto fail;
    if (root >= r->nalias_of_root) {
        size_t n = root + 64;
        size_t *v = wsi_realloc(r->alias_of_root, n * sizeof *v);
        if (!v) goto fail;
        memset(v + r->nalias_of_root, 0, (n - r->nalias_of_root) * sizeof *v);
        r->alias_of_root = v;
        r->nalias_of_root = n;
    }
    if (wsi_strmap_put(&r->alias_index, st->alias, strlen(st->alias), r->naliases)) goto fail;
    r->alias_of_root[root] = r->naliases + 1;
    r->aliases[r->naliases++] = a;
    return 0;
fail:
    wsi_free(a.name);
    wsi_free(a.sub);
    return oom(r);
}

/* The latest delivery of alias a, or NULL. */
static ws_delivery *latest(runner *r, const alias *a)
{
    return a->root < r->nlatest ? r->latest_of[a->root] : NULL;
}

/* The produced entry d descends from (1-based), 0 for none: the engine's, or in consume
 * mode (the file's entries were produced by someone else) the produce statement whose
 * payload d carries. */
static size_t delivery_root(runner *r, ws_delivery *d)
{
    size_t root = ws_delivery_root(d);
    if (root || !r->opt->consume) return root;
    size_t len, k;
    const char *p = ws_delivery_payload(d, &len);
    return p && wsi_strmap_get(&r->by_payload, p, len, &k) ? k : 0;
}

/* Remembers a delivery handed out by a read (aliases reach their latest one).  0, or -1
 * when out of memory (oom). */
static int seen(runner *r, ws_delivery *d)
{
    if (r->nseen == r->capseen) {
        size_t cap = r->capseen ? r->capseen * 2 : 64;
        ws_delivery **v = wsi_realloc(r->seen, cap * sizeof *v);
        if (!v) return oom(r);
        r->seen = v;
        r->capseen = cap;
    }
    r->seen[r->nseen++] = d;
    size_t root = delivery_root(r, d);
    if (!root) return 0;
    if (root >= r->nlatest) {
        size_t n = root + 64;
        ws_delivery **l = wsi_realloc(r->latest_of, n * sizeof *l);
        if (!l) return oom(r);
        memset(l + r->nlatest, 0, (n - r->nlatest) * sizeof *l);
        r->latest_of = l;
        r->nlatest = n;
    }
    r->latest_of[root] = d;
    return 0;
}

/* The latest delivery of the entry called name, or NULL after failing statement st. */
static ws_delivery *delivery_of(runner *r, const wsc_stmt *st, const char *name)
{
    alias *a = find_alias(r, name);
    if (!a) {
        fail(r, st, WSC_ERROR, NULL, "no entry named '%s' (produce ... as %s)", name, name);
        return NULL;
    }
    ws_delivery *d = latest(r, a);
    if (!d) fail(r, st, WSC_ERROR, NULL, "entry '%s' was not delivered yet", name);
    return d;
}

/* The id $name stands for: the latest delivery's id, or the produced one. */
static int alias_id(runner *r, const char *name, size_t len, wsi_buf *out)
{
    alias *a = find_alias_n(r, name, len);
    if (!a) return -1;
    ws_delivery *d = latest(r, a);
    const char *id = d ? ws_delivery_id(d) : ws_sim_produced_id(r->sim, a->root);
    size_t idlen = d ? ws_delivery_id_size(d) : ws_sim_produced_id_size(r->sim, a->root);
    if (id) wsi_buf_add(out, id, idlen);
    return 0;
}

/* Whether c may follow the first character of an alias (letters, digits, _ - .). */
static int alias_char(char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
           c == '_' || c == '-' || c == '.';
}

/* Replaces $alias (the longest alias name that matches) and $$ in s.  NULL after fail(),
 * or when out of memory (oom). */
static char *subst(runner *r, const wsc_stmt *st, const char *s, size_t len, size_t *outlen)
{
    wsi_buf b = {0};
    wsi_buf_add(&b, "", 0);
    for (size_t i = 0; i < len; i++) {
        if (s[i] != '$') {
            wsi_buf_add(&b, s + i, 1);
            continue;
        }
        if (i + 1 < len && s[i + 1] == '$') {
            wsi_buf_add(&b, "$", 1);
            i++;
            continue;
        }
        /* a $ not followed by a name is a literal (XGROUP CREATE s g $) */
        char nx = i + 1 < len ? s[i + 1] : '\0';
        if (!((nx >= 'a' && nx <= 'z') || (nx >= 'A' && nx <= 'Z') || nx == '_')) {
            wsi_buf_add(&b, "$", 1);
            continue;
        }
        /* the longest alias that the name after '$' starts with */
        size_t run = 0, best = 0;
        while (i + 1 + run < len && alias_char(s[i + 1 + run])) run++;
        for (size_t l = run; l > 0 && !best; l--)
            if (find_alias_n(r, s + i + 1, l)) best = l;
        if (!best) {
            wsi_free(b.p);
            fail(r, st, WSC_ERROR, NULL, "'$' at \"%.*s\" names no entry (write $$ for a $)",
                 (int)(len - i > 20 ? 20 : len - i), s + i);
            return NULL;
        }
        alias_id(r, s + i + 1, best, &b);
        i += best;
    }
    if (!runner_buf_ok(r, &b)) {
        wsi_buf_free(&b);
        return NULL;
    }
    if (outlen) *outlen = b.len;
    return b.p;
}

/* A command from tokens, with $aliases replaced: argv/lens heap (free with free_argv). */
static int make_argv(runner *r, const wsc_stmt *st, const wsc_tok *t, size_t n, char ***argv,
                     size_t **lens)
{
    *argv = wsi_calloc(n, sizeof **argv);
    *lens = wsi_calloc(n, sizeof **lens);
    if (!*argv || !*lens) {
        wsi_free(*argv);
        wsi_free(*lens);
        return oom(r);
    }
    for (size_t i = 0; i < n; i++) {
        (*argv)[i] = subst(r, st, t[i].s, t[i].len, &(*lens)[i]);
        if (!(*argv)[i]) {
            for (size_t k = 0; k < i; k++) wsi_free((*argv)[k]);
            wsi_free(*argv);
            wsi_free(*lens);
            return -1;
        }
    }
    return 0;
}

/* Frees n arguments and both arrays. */
static void free_argv(char **argv, size_t *lens, size_t n)
{
    for (size_t i = 0; i < n; i++) wsi_free(argv[i]);
    wsi_free(argv);
    wsi_free(lens);
}

/* ----- Steps -------------------------------------------------------------------------------------- */

/* The result of a step that may be refused: rc 0 = done.  WS_ECRASHED is a fault the
 * scenario armed doing its work, not a failure. */
static int step_result(runner *r, const wsc_stmt *st, int rc)
{
    if (st->refused) {
        if (rc == 0 || rc == WS_ECRASHED)
            return fail(r, st, WSC_FAIL, "the step to be refused", "it was not refused");
        const char *msg = ws_sim_errstr(r->sim);
        if (st->refused_text) {
            char *want = subst(r, st, st->refused_text, strlen(st->refused_text), NULL);
            if (!want) return -1;
            int ok = strstr(msg, want) != NULL;
            if (!ok) {
                fail(r, st, WSC_FAIL, want, "refused with: %s", msg);
                wsi_free(want);
                return -1;
            }
            wsi_free(want);
        }
        r->checks++;
        return 0;
    }
    if (rc == 0 || rc == WS_ECRASHED) return 0;
    return fail(r, st, WSC_ERROR, NULL, "the step failed: %s (%s)", ws_sim_errstr(r->sim),
                ws_err_name(rc));
}

/* The end of the reply item that starts at s: a "string" (escapes included), a [nested,
 * array], or a bare word up to ',' or ']' -- or to the end at the top level (an error's
 * text has commas of its own). */
static const char *item_end(const char *s, int top)
{
    if (*s == '"') {
        for (s++; *s && *s != '"'; s++)
            if (*s == '\\' && s[1]) s++;
        return *s ? s + 1 : s;
    }
    if (*s == '[') {
        int depth = 0;
        for (; *s; s++) {
            if (*s == '"') {
                s = item_end(s, 0) - 1;
                continue;
            }
            if (*s == '[') depth++;
            if (*s == ']' && --depth == 0) return s + 1;
        }
        return s;
    }
    if (top) return s + strlen(s);
    while (*s && *s != ',' && *s != ']') s++;
    return s;
}

/* Reply text matching: want equals got, where each <*> in want stands for one item. */
static int reply_matches(const char *want, const char *got)
{
    int depth = 0, inq = 0;
    while (*want) {
        if (!inq && strncmp(want, "<*>", 3) == 0) {
            if (!*got) return 0;
            got = item_end(got, depth == 0);
            want += 3;
            continue;
        }
        if (*want != *got) return 0;
        if (*got == '"') inq = !inq;
        if (inq && *got == '\\' && want[1] && want[1] == got[1]) {
            want += 2;
            got += 2;
            continue;
        }
        if (!inq && *got == '[') depth++;
        if (!inq && *got == ']') depth--;
        want++;
        got++;
    }
    return *got == '\0';
}

/* Checks a reply against the statement's `=> REPLY` (aliases substituted); 0, or -1
 * after failing the run. */
static int compare_reply(runner *r, const wsc_stmt *st, const fr_reply *reply)
{
    char *got = ws_reply_text(reply, NULL); /* "(none)" for NULL */
    char *want = subst(r, st, st->expect[0].s, st->expect[0].len, NULL);
    int rc = 0;
    if (!want) rc = -1;
    else if (!reply_matches(want, got)) rc = fail(r, st, WSC_FAIL, want, "%s", got);
    else r->checks++;
    wsi_free(got);
    wsi_free(want);
    return rc;
}

/* Runs a setup, check, queue or pool command (on the admin connection, the delivery's
 * segment or the pool) and checks its reply when one is expected; 0, or -1 after failing
 * the run. */
static int do_command(runner *r, const wsc_stmt *st)
{
    char **argv;
    size_t *lens;
    if (make_argv(r, st, st->cmd, st->ncmd, &argv, &lens)) return -1;
    const fr_reply *reply = NULL;
    int rc = 0;
    ws_delivery *d = NULL;
    if (st->alias && !(d = delivery_of(r, st, st->alias))) {
        free_argv(argv, lens, st->ncmd);
        return -1;
    }
    switch (st->kind) {
    case K_SETUP:
    case K_CHECK: /* the trace tells a check from the setup */
        rc = ws_sim_command_as(r->sim, st->kind == K_CHECK ? "check" : "setup", (int)st->ncmd,
                               (const char *const *)argv, lens, &reply);
        break;
    case K_QUEUE:
        rc = ws_queue(d, (int)st->ncmd, (const char *const *)argv, lens);
        break;
    default: /* K_POOL */
        rc = ws_pool(r->sim, d, (int)st->ncmd, (const char *const *)argv, lens, &reply);
        break;
    }
    free_argv(argv, lens, st->ncmd);
    if (st->kind == K_SETUP && rc == 0 && !st->refused && reply && reply->type == FR_REPLY_ERROR)
        return fail(r, st, WSC_ERROR, NULL, "the setup command answered -%s", reply->str);
    if (st->kind == K_SETUP && st->refused && rc == 0 && reply && reply->type == FR_REPLY_ERROR) {
        if (st->refused_text && !strstr(reply->str, st->refused_text))
            return fail(r, st, WSC_FAIL, st->refused_text, "-%s", reply->str);
        r->checks++;
        return 0;
    }
    if (step_result(r, st, rc)) return -1;
    if (rc == 0 && st->has_expect && !st->refused) return compare_reply(r, st, reply);
    return 0;
}

/* Keeps a copy of the failure report a read of s handed out, for `expect report`. */
static void keep_report(runner *r, ws_sub *s, const ws_report *rep)
{
    for (size_t i = 0; i < r->nsubs; i++) {
        subrec *sr = &r->subs[i];
        if (sr->sub != s) continue;
        char *e = wsi_strdup(rep->first_error ? rep->first_error : "");
        if (!e) {
            oom(r);
            return;
        }
        sr->report = *rep;
        wsi_free(sr->report_error);
        sr->report_error = e;
        sr->report.first_error = sr->report_error;
        sr->has_report = 1;
    }
}

/* Runs `read SUB` and checks what it handed out (aliases, nothing or a report) when the
 * statement says; 0, or -1 after failing the run. */
static int do_read(runner *r, const wsc_stmt *st)
{
    ws_sub *s = find_sub(r, st, st->sub);
    if (!s) return -1;
    ws_read_result res;
    int rc = wsc_runner_read(r, s, &res);
    if (step_result(r, st, rc)) return -1;
    if (rc) return 0;
    if (!st->has_expect) return 0;
    /* what the read gave, in alias names */
    wsi_buf got = {0};
    wsi_buf_add(&got, "", 0);
    if (res.is_report) {
        wsi_buf_printf(&got, "the failure report of flush %llu (%zu failed: %s)",
                (unsigned long long)res.report.flush, res.report.failed, res.report.first_error);
    } else if (res.n == 0) {
        wsi_buf_add(&got, "nothing", 7);
    } else {
        for (size_t i = 0; i < res.n; i++) {
            ws_delivery *d = ws_read_delivery(s, i);
            size_t root = delivery_root(r, d);
            const char *name = NULL;
            if (root && root < r->nalias_of_root && r->alias_of_root[root])
                name = r->aliases[r->alias_of_root[root] - 1].name;
            if (name) {
                wsi_buf_printf(&got, "%s%s", i ? " " : "", name);
                continue;
            }
            /* an id with bytes that do not print (a framed list value): as a reply shows it */
            const char *id = ws_delivery_id(d);
            size_t idlen = ws_delivery_id_size(d), k = 0;
            while (k < idlen && (unsigned char)id[k] >= ' ' && (unsigned char)id[k] < 127) k++;
            fr_reply shown = {.type = FR_REPLY_BULK, .str = id, .len = idlen};
            char *text = k < idlen ? ws_reply_text(&shown, NULL) : NULL;
            wsi_buf_printf(&got, "%s%s", i ? " " : "", text ? text : id);
            wsi_free(text);
        }
    }
    wsi_buf want = {0};
    wsi_buf_add(&want, "", 0);
    if (st->read_report) wsi_buf_add(&want, "report", 6);
    else if (st->read_nothing) wsi_buf_add(&want, "nothing", 7);
    else
        for (size_t i = 0; i < st->nexpect; i++)
            wsi_buf_printf(&want, "%s%s", i ? " " : "", st->expect[i].s);
    int out = 0;
    if (!runner_buf_ok(r, &got) || !runner_buf_ok(r, &want)) {
        wsi_buf_free(&got);
        wsi_buf_free(&want);
        return -1;
    }
    int ok = st->read_report ? res.is_report : strcmp(got.p, want.p) == 0;
    if (!ok) out = fail(r, st, WSC_FAIL, want.p, "%s", got.p);
    else r->checks++;
    wsi_free(got.p);
    wsi_free(want.p);
    return out;
}

/* Runs a handler action (publish, reply, bind, an outcome) on the entry's latest
 * delivery; 0, or -1 after failing the run. */
static int do_action(runner *r, const wsc_stmt *st)
{
    ws_delivery *d = delivery_of(r, st, st->alias);
    if (!d) return -1;
    int rc = 0;
    ws_out out = {(ws_form)st->form, st->key};
    switch (st->kind) {
    case K_PUBLISH:
        rc = ws_publish(d, &out, st->payload, st->payload_len, st->headers, st->nheaders);
        break;
    case K_REPLY: rc = ws_reply(d, st->payload, st->payload_len); break;
    case K_BIND: rc = ws_bind(d, &out); break;
    default: rc = ws_settle(d, st->outcome, st->n); break;
    }
    return step_result(r, st, rc);
}

/* Does fault statement st kill the consumer (the kinds wsim explore leaves out)? */
static int crash_fault(const wsc_stmt *st)
{
    return st->fault.kind == WS_FAULT_CRASH_AFTER || st->fault.kind == WS_FAULT_CRASH_BEFORE ||
           st->fault.kind == WS_FAULT_LOSE_REPLIES;
}

/* Arms the statement's fault on the connection it names; 0, or -1 after failing the run. */
static int do_fault(runner *r, const wsc_stmt *st)
{
    ws_conn *c = NULL;
    if (strcmp(st->conn, "reader") == 0) c = ws_sim_reader(r->sim);
    else if (strcmp(st->conn, "window") == 0) c = ws_sim_window(r->sim);
    else
        for (size_t i = 0; i < r->nsubs && !c; i++) c = ws_sub_connection(r->subs[i].sub);
    if (!c) return fail(r, st, WSC_ERROR, NULL, "no %s connection to arm (is the consumer "
                        "dead, or is there no channel subscription?)", st->conn);
    ws_fault f = st->fault;
    f.name = st->fault_name;
    f.error = st->fault_error;
    /* the statement's place in the file (a copy, which has none, is told nothing) */
    uintptr_t at = (uintptr_t)st, first = (uintptr_t)r->sc->st;
    size_t i = at >= first ? (at - first) / sizeof *st : (size_t)-1;
    if (i < r->sc->nst && &r->sc->st[i] == st) f.fired_flag = &r->fault_fired[i];
    else i = (size_t)-1;
    int rc = ws_fault_arm(c, &f);
    if (rc) return fail(r, st, WSC_ERROR, NULL, "cannot arm the fault: %s", ws_conn_errstr(c));
    if (i != (size_t)-1) r->fault_armed[i] = 1;
    return 0;
}

/* ----- Expectations ----------------------------------------------------------------------------------- */

/* The alias of the produced entry d descends from, or NULL. */
static const char *root_alias(runner *r, const ws_delivery *d)
{
    if (!d) return NULL;
    size_t root = delivery_root(r, (ws_delivery *)d);
    return root && root < r->nalias_of_root && r->alias_of_root[root]
               ? r->aliases[r->alias_of_root[root] - 1].name
               : NULL;
}

/* Compares an actual command text (as the trace prints it) with expected tokens. */
static int same_command(runner *r, const wsc_stmt *st, const char *actual, const wsc_fline *f,
                        int *bad)
{
    char **av;
    size_t *al;
    int ac = fr_split_line(actual, &av, &al);
    int same = ac == (int)f->nt;
    for (int i = 0; same && i < ac; i++) {
        const wsc_tok *t = &f->t[i];
        if (!t->quoted && t->len == 1 && t->s[0] == '?') continue;
        size_t wl;
        char *w = subst(r, st, t->s, t->len, &wl);
        if (!w) {
            *bad = 1;
            same = 0;
            break;
        }
        same = wl == al[i] && memcmp(w, av[i], wl) == 0;
        wsi_free(w);
    }
    if (ac > 0) fr_split_free(ac, av, al);
    return same;
}

/* Appends an expected flush line as the scenario writes it, aliases substituted. */
static void fline_text(runner *r, const wsc_stmt *st, const wsc_fline *f, wsi_buf *b)
{
    if (f->from) wsi_buf_printf(b, "%s> ", f->from);
    for (size_t i = 0; i < f->nt; i++) {
        char *w = subst(r, st, f->t[i].s, f->t[i].len, NULL);
        wsi_buf_printf(b, "%s%s", i ? " " : "", w ? w : f->t[i].s);
        wsi_free(w);
    }
}

/* One command an `expect flush` / `expect read` block is compared with. */
typedef struct actual {
    size_t rt;        /* its round trip, 1-based within the flush or the read */
    size_t pipe;      /* its pipeline, 1-based within the flush (a read: its round trip) */
    const char *text; /* as the trace prints it */
    const char *from; /* the alias of the entry it came from, or NULL */
} actual;

/* Compares a block with what was sent: the commands in order, their round trips ("--"
 * lines), where each came from (alias> lines), and -- only when the block marks one
 * pipeline boundary ("..") -- every pipeline boundary ("--" is one too).  none: what was
 * got when act is empty.  When all else agrees but a pipeline boundary does not, the
 * report says which line expected one, or before which command one was found. */
static int expect_block(runner *r, const wsc_stmt *st, const actual *act, size_t n,
                        const char *none)
{
    wsi_buf want = {0}, got = {0};
    wsi_buf_add(&want, "", 0);
    wsi_buf_add(&got, "", 0);
    int pipes = 0; /* the block marks pipeline boundaries: check them */
    for (size_t i = 0; i < st->nflines; i++)
        if (st->flines[i].separator == WSC_SEP_PIPELINE) pipes = 1;
    size_t rt = 1, k = 0;
    int ok = 1, bad = 0;
    int marked_line = 0;   /* the line of the last boundary written before command k */
    char pipe_note[512] = ""; /* the first pipeline difference, when that is the only one */
    for (size_t i = 0; i < st->nflines; i++) {
        const wsc_fline *f = &st->flines[i];
        if (f->separator) {
            wsi_buf_add(&want, f->separator == WSC_SEP_PIPELINE ? "\n      .." : "\n      --", 9);
            if (f->separator == WSC_SEP_ROUND_TRIP) rt++;
            marked_line = f->line;
            continue;
        }
        wsi_buf_add(&want, "\n      ", 7);
        fline_text(r, st, f, &want);
        if (k >= n || act[k].rt != rt || !same_command(r, st, act[k].text, f, &bad) ||
            (f->from && (!act[k].from || strcmp(act[k].from, f->from) != 0)))
            ok = 0;
        else if (pipes && k > 0 && !pipe_note[0] &&
                 (act[k].pipe != act[k - 1].pipe) != (marked_line != 0)) {
            if (marked_line)
                snprintf(pipe_note, sizeof pipe_note,
                         "line %d marks a pipeline boundary before `%s`, but it left in the "
                         "same pipeline as the command before it", marked_line, act[k].text);
            else
                snprintf(pipe_note, sizeof pipe_note,
                         "a pipeline boundary before `%s` (line %d), which the block does "
                         "not mark", act[k].text, f->line);
        }
        marked_line = 0;
        k++;
    }
    if (k != n) ok = 0;
    for (size_t i = 0; i < n; i++) {
        if (i && act[i].rt != act[i - 1].rt) wsi_buf_add(&got, "\n      --", 9);
        else if (i && pipes && act[i].pipe != act[i - 1].pipe) wsi_buf_add(&got, "\n      ..", 9);
        wsi_buf_add(&got, "\n      ", 7);
        if (act[i].from) wsi_buf_printf(&got, "%s> ", act[i].from);
        wsi_buf_printf(&got, "%s", act[i].text);
    }
    if (ok && pipe_note[0]) {
        ok = 0;
        wsi_buf_printf(&got, "\n    %s", pipe_note);
    }
    if (!runner_buf_ok(r, &want) || !runner_buf_ok(r, &got)) bad = 1, ok = 0;
    if (bad) ok = 0; /* subst() has said why (or memory ran out) */
    else if (!ok) fail(r, st, WSC_FAIL, want.p, "%s", n ? got.p : none);
    else r->checks++;
    wsi_free(want.p);
    wsi_free(got.p);
    return ok ? 0 : -1;
}

/* Checks `expect flush N of SUB` / `expect read`: the commands the flush sent, line by
 * line; 0, or -1 after failing the run. */
static int expect_flush(runner *r, const wsc_stmt *st)
{
    ws_sub *s = find_sub(r, st, st->sub);
    if (!s) return -1;
    actual *act = NULL;
    size_t n = 0;
    ws_flush_command fc;
    size_t sent_rts = 0, last_rt = 0; /* round trips renumbered over what was sent */
    for (size_t i = 0; ws_sub_flush_command(s, (uint64_t)st->n, i, &fc) == 0; i++) {
        /* the block is what the flush sent: a command a crash stopped before it left is
         * not in it (the trace shows it, "not sent") */
        if (fc.fate_code == WS_FATE_UNSENT) continue;
        if (fc.round_trip != last_rt) sent_rts++, last_rt = fc.round_trip;
        actual *v = wsi_realloc(act, (n + 1) * sizeof *act);
        if (!v) {
            wsi_free(act);
            return oom(r);
        }
        act = v;
        act[n++] = (actual){sent_rts, fc.pipeline, fc.text, root_alias(r, fc.from)};
    }
    char none[128];
    snprintf(none, sizeof none, "%s made %llu flush%s", ws_sub_name(s),
             (unsigned long long)ws_sub_flushes(s), ws_sub_flushes(s) == 1 ? "" : "es");
    int rc = expect_block(r, st, act, n, none);
    wsi_free(act);
    return rc;
}

/* A read's round trips: the ones whose cause is "read N of NAME", a sweep "... before
 * read N of NAME" or its claims "claims of read N of NAME", in order. */
static int expect_read(runner *r, const wsc_stmt *st)
{
    ws_sub *s = find_sub(r, st, st->sub);
    if (!s) return -1;
    char tail[256];
    snprintf(tail, sizeof tail, "read %lld of %s", st->n, ws_sub_name(s));
    size_t tl = strlen(tail);
    size_t nrt = ws_sim_round_trip_count(r->sim), rtn = 0, n = 0;
    actual *act = NULL;
    for (size_t i = 0; i < nrt; i++) {
        ws_rt_info rt;
        ws_sim_round_trip(r->sim, i, &rt);
        size_t cl = strlen(rt.cause);
        if (cl < tl || strcmp(rt.cause + cl - tl, tail) != 0 ||
            (cl > tl && rt.cause[cl - tl - 1] != ' '))
            continue;
        /* "read 1 of orders" must not match "read 11 of orders" */
        if (cl > tl && (cl - tl < 7 || strncmp(rt.cause + cl - tl - 7, "before ", 7) != 0) &&
            (cl - tl != 10 || strncmp(rt.cause, "claims of ", 10) != 0))
            continue;
        rtn++;
        for (size_t k = 0; k < rt.n; k++) {
            actual *v = wsi_realloc(act, (n + 1) * sizeof *act);
            if (!v) {
                wsi_free(act);
                return oom(r);
            }
            act = v;
            act[n++] = (actual){rtn, rtn, rt.commands[k], NULL};
        }
    }
    int rc = expect_block(r, st, act, n, "no such read");
    wsi_free(act);
    return rc;
}

/* Checks that got, a count of what, is the statement's number; 0, or -1 after failing
 * the run. */
static int expect_number(runner *r, const wsc_stmt *st, unsigned long long got,
                         const char *what)
{
    if ((unsigned long long)st->n == got) {
        r->checks++;
        return 0;
    }
    char want[64];
    snprintf(want, sizeof want, "%lld %s", st->n, what);
    return fail(r, st, WSC_FAIL, want, "%llu %s", got, what);
}

/* Checks `expect report SUB ...` against the last report a read of SUB handed out; 0, or
 * -1 after failing the run. */
static int expect_report(runner *r, const wsc_stmt *st)
{
    int i = sub_index(r, st->sub);
    if (i < 0) return fail(r, st, WSC_ERROR, NULL, "no subscription named '%s'", st->sub);
    if (!r->subs[i].has_report)
        return fail(r, st, WSC_FAIL, "a failure report handed out by a read",
                    "no read of %s handed out a report", st->sub);
    const ws_report *rep = &r->subs[i].report;
    wsi_buf got = {0};
    wsi_buf_printf(&got, "report of %s: commands %zu settles %zu failed %zu error %s",
            rep->subscription, rep->commands, rep->settles, rep->failed, rep->first_error);
    int ok = (st->n2 < 0 || (size_t)st->n2 == rep->commands) &&
             (st->n3 < 0 || (size_t)st->n3 == rep->settles) &&
             (st->n4 < 0 || (size_t)st->n4 == rep->failed) &&
             (!st->text || strstr(rep->first_error, st->text));
    int out = 0;
    if (!runner_buf_ok(r, &got)) out = -1;
    else if (!ok) out = fail(r, st, WSC_FAIL, st->src, "%s", got.p);
    else r->checks++;
    wsi_free(got.p);
    return out;
}

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* One entry of a pending list or a delay queue, as read from the server, or as expected
 * (then the fields not written are -1 / NULL). */
typedef struct entry {
    char *id;             /* the entry id (stream), the value (reliable list) */
    char *consumer;       /* pending (stream): the consumer holding it */
    long long deliveries; /* pending (stream): its delivery count */
    long long retries;    /* delayed: the copy's retry counter */
    long long due_in;     /* delayed: its due time minus the clock's now, in ms
                             (LLONG_MIN: not known / not written) */
} entry;

/* Orders entries by id (both sides are sorted before they are compared). */
static int entry_cmp(const void *a, const void *b)
{
    return strcmp(((const entry *)a)->id, ((const entry *)b)->id);
}

/* Frees n entries and the array. */
static void entries_free(entry *v, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        wsi_free(v[i].id);
        wsi_free(v[i].consumer);
    }
    wsi_free(v);
}

/* One entry as a block line: its id and the fields known (-1 / NULL are left out). */
static void entry_text(wsi_buf *b, const entry *e)
{
    wsi_buf_printf(b, "%s", e->id);
    if (e->consumer) wsi_buf_printf(b, " consumer %s", e->consumer);
    if (e->deliveries >= 0) wsi_buf_printf(b, " deliveries %lld", e->deliveries);
    if (e->retries >= 0) wsi_buf_printf(b, " retries %lld", e->retries);
    if (e->due_in != LLONG_MIN) wsi_buf_printf(b, " due-in %lld", e->due_in);
}

/* Entries for a report: "none", the ids on one line, or (block) one entry a line with
 * its fields. */
static void entries_text(wsi_buf *b, const entry *v, size_t n, int block)
{
    if (!n) wsi_buf_add(b, "none", 4);
    for (size_t i = 0; i < n; i++) {
        if (block) {
            wsi_buf_add(b, "\n      ", 7);
            entry_text(b, &v[i]);
        } else {
            wsi_buf_printf(b, "%s%s", i ? " " : "", v[i].id);
        }
    }
}

/* The id an expected item names: an alias or $alias (its latest delivery's id, the
 * produced one before), else the item as written.  NULL when out of memory (oom). */
static char *item_id(runner *r, const wsc_tok *t)
{
    wsi_buf b = {0};
    wsi_buf_add(&b, "", 0);
    const char *nm = t->s[0] == '$' ? t->s + 1 : t->s;
    if (alias_id(r, nm, strlen(nm), &b) != 0) wsi_buf_add(&b, t->s, t->len);
    if (!runner_buf_ok(r, &b)) {
        wsi_buf_free(&b);
        return NULL;
    }
    return b.p;
}

/* Compares the entries read (got, any order) with the statement's: its inline items, or
 * its block lines with the fields they write.  Exactly the same entries, by id; a field
 * written must agree.  Inline forms print ids on one line, blocks one entry a line. */
static int expect_entries(runner *r, const wsc_stmt *st, entry *got, size_t n)
{
    size_t nw = st->entry_block ? st->nelines : st->nexpect;
    entry *want = wsi_calloc(nw, sizeof *want);
    if (!want) return oom(r);
    for (size_t i = 0; i < nw; i++) {
        want[i].deliveries = want[i].retries = -1;
        want[i].due_in = LLONG_MIN;
        if (!st->entry_block) {
            want[i].id = item_id(r, &st->expect[i]);
            continue;
        }
        const wsc_eline *e = &st->elines[i];
        want[i].id = item_id(r, &e->item);
        want[i].consumer = e->consumer ? wsi_strdup(e->consumer) : NULL;
        if (e->consumer && !want[i].consumer) oom(r);
        want[i].deliveries = e->deliveries;
        want[i].retries = e->retries;
        want[i].due_in = e->due_in < 0 ? LLONG_MIN : e->due_in;
    }
    int whole = !r->oom;
    for (size_t i = 0; i < n && whole; i++) whole = got[i].id != NULL;
    for (size_t i = 0; i < nw && whole; i++) whole = want[i].id != NULL;
    if (!whole) {
        entries_free(want, nw);
        return oom(r);
    }
    qsort(got, n, sizeof *got, entry_cmp);
    qsort(want, nw, sizeof *want, entry_cmp);
    int ok = n == nw;
    for (size_t i = 0; ok && i < n; i++) {
        const entry *g = &got[i], *w = &want[i];
        ok = strcmp(g->id, w->id) == 0 &&
             (!w->consumer || (g->consumer && strcmp(g->consumer, w->consumer) == 0)) &&
             (w->deliveries < 0 || w->deliveries == g->deliveries) &&
             (w->retries < 0 || w->retries == g->retries) &&
             (w->due_in == LLONG_MIN || w->due_in == g->due_in);
    }
    int out = 0;
    if (!ok) {
        wsi_buf gt = {0}, wt = {0};
        wsi_buf_add(&gt, "", 0);
        wsi_buf_add(&wt, "", 0);
        entries_text(&wt, want, nw, st->entry_block);
        entries_text(&gt, got, n, st->entry_block);
        if (!runner_buf_ok(r, &wt) || !runner_buf_ok(r, &gt)) out = -1;
        else out = fail(r, st, WSC_FAIL, wt.p, "%s", gt.p);
        wsi_free(gt.p);
        wsi_free(wt.p);
    } else {
        r->checks++;
    }
    entries_free(want, nw);
    return out;
}

/* expect pending: the group's pending list (XPENDING's extended form: id, consumer, idle,
 * delivery count) or the reliable list's processing list, read on the admin connection. */
static int expect_pending(runner *r, const wsc_stmt *st)
{
    if (sub_index(r, st->sub) < 0) return find_sub(r, st, st->sub) ? 0 : -1;
    const wsc_stmt *def = r->subs[sub_index(r, st->sub)].def;
    const char *argv[6];
    int argc;
    char *proc = NULL;
    int stream = def->cfg.form == WS_FORM_STREAM;
    if (stream) {
        argv[0] = "XPENDING";
        argv[1] = def->s_key;
        argv[2] = def->s_group;
        argv[3] = "-";
        argv[4] = "+";
        argv[5] = "1000000";
        argc = 6;
    } else if (def->cfg.form == WS_FORM_RELIABLE_LIST) {
        if (def->s_processing) {
            proc = wsi_strdup(def->s_processing);
        } else {
            proc = wsi_malloc(strlen(def->s_key) + 12);
            if (proc) sprintf(proc, "%s.processing", def->s_key);
        }
        if (!proc) return oom(r);
        argv[0] = "LRANGE";
        argv[1] = proc;
        argv[2] = "0";
        argv[3] = "-1";
        argc = 4;
    } else {
        return fail(r, st, WSC_ERROR, NULL, "%s settles nothing: it has no pending entries",
                    st->sub);
    }
    const fr_reply *rep = NULL;
    int rc = ws_sim_command_as(r->sim, "expect", argc, argv, NULL, &rep);
    wsi_free(proc);
    if (rc) return fail(r, st, WSC_ERROR, NULL, "reading the pending entries failed: %s",
                        ws_sim_errstr(r->sim));
    size_t n = rep->type == FR_REPLY_ARRAY ? rep->count : 0;
    entry *got = wsi_calloc(n, sizeof *got);
    if (!got) return oom(r);
    for (size_t i = 0; i < n; i++) {
        const fr_reply *e = &rep->elements[i];
        got[i].deliveries = got[i].retries = -1;
        got[i].due_in = LLONG_MIN;
        if (stream && e->type == FR_REPLY_ARRAY && e->count == 4) {
            got[i].id = wsi_strdup(e->elements[0].str ? e->elements[0].str : "");
            got[i].consumer = wsi_strdup(e->elements[1].str ? e->elements[1].str : "");
            got[i].deliveries = e->elements[3].integer;
            if (!got[i].consumer) oom(r);
        } else {
            got[i].id = wsi_strdup(e->str ? e->str : "");
        }
    }
    int out = expect_entries(r, st, got, n);
    entries_free(got, n);
    return out;
}

/* expect delayed: the members of the subscription's delay queue (ZRANGE ... WITHSCORES on
 * the admin connection), each decoded to the original entry id and its copy's retry
 * counter, with its score minus the clock's now.  A member that is not the engine's
 * encoding shows as written, with retries -1. */
static int expect_delayed(runner *r, const wsc_stmt *st)
{
    if (sub_index(r, st->sub) < 0) return find_sub(r, st, st->sub) ? 0 : -1;
    const wsc_stmt *def = r->subs[sub_index(r, st->sub)].def;
    const char *argv[] = {"ZRANGE", def->s_dq, "0", "-1", "WITHSCORES"};
    const fr_reply *rep = NULL;
    if (ws_sim_command_as(r->sim, "expect", 5, argv, NULL, &rep))
        return fail(r, st, WSC_ERROR, NULL, "reading the delay queue failed: %s",
                    ws_sim_errstr(r->sim));
    if (rep->type != FR_REPLY_ARRAY) {
        char *t = ws_reply_text(rep, NULL);
        fail(r, st, WSC_ERROR, NULL, "reading the delay queue %s answered %s", def->s_dq,
             t ? t : "?");
        wsi_free(t);
        return -1;
    }
    size_t n = rep->count / 2;
    entry *got = wsi_calloc(n, sizeof *got);
    if (!got) return oom(r);
    int64_t now = ws_sim_now(r->sim);
    for (size_t i = 0; i < n; i++) {
        const fr_reply *m = &rep->elements[2 * i], *score = &rep->elements[2 * i + 1];
        got[i].deliveries = -1;
        got[i].retries = -1;
        got[i].due_in = strtoll(score->str ? score->str : "0", NULL, 10) - now;
        char **parts;
        size_t *lens;
        long np = ws_delay_member_decode(m->str, m->len, &parts, &lens);
        if (np < 1) {
            got[i].id = ws_reply_text(m, NULL);
            continue;
        }
        got[i].id = wsi_memdup(parts[0], lens[0]);
        got[i].retries = 0; /* a missing counter is 0 */
        for (long k = 1; k + 1 < np; k += 2)
            if (lens[k] == sizeof RETRY_FIELD - 1 &&
                memcmp(parts[k], RETRY_FIELD, sizeof RETRY_FIELD - 1) == 0)
                got[i].retries = strtoll(parts[k + 1], NULL, 10);
        ws_strings_free(parts, lens, (size_t)np);
    }
    int out = expect_entries(r, st, got, n);
    entries_free(got, n);
    return out;
}

/* Checks `expect invariants` or `expect violation INVARIANT ALIAS` against ws_sim_check;
 * 0, or -1 after failing the run. */
static int expect_check(runner *r, const wsc_stmt *st)
{
    const ws_violation *v;
    size_t n;
    int rc = ws_sim_check(r->sim, &v, &n);
    if (rc) return fail(r, st, WSC_ERROR, NULL, "the check could not read the server: %s",
                        ws_sim_errstr(r->sim));
    if (st->kind == K_EXPECT_INVARIANTS) {
        if (n == 0) {
            r->checks++;
            return 0;
        }
        wsi_buf b = {0};
        for (size_t i = 0; i < n; i++) wsi_buf_printf(&b, "%s%s: %s", i ? "; " : "", v[i].invariant,
                                               v[i].sentence);
        if (runner_buf_ok(r, &b)) fail(r, st, WSC_FAIL, "no invariant broken", "%s", b.p);
        wsi_buf_free(&b);
        return -1;
    }
    alias *a = find_alias(r, st->alias);
    if (!a) return fail(r, st, WSC_ERROR, NULL, "no entry named '%s'", st->alias);
    for (size_t i = 0; i < n; i++)
        if (strcmp(v[i].invariant, st->text) == 0 && v[i].root == a->root) {
            r->checks++;
            return 0;
        }
    wsi_buf b = {0};
    wsi_buf_add(&b, n ? "" : "no violation", n ? 0 : 12);
    for (size_t i = 0; i < n; i++) wsi_buf_printf(&b, "%s%s: %s", i ? "; " : "", v[i].invariant,
                                           v[i].sentence);
    char want[256];
    snprintf(want, sizeof want, "a '%s' violation for entry %s", st->text, st->alias);
    if (runner_buf_ok(r, &b)) fail(r, st, WSC_FAIL, want, "%s", b.p);
    wsi_buf_free(&b);
    return -1;
}

/* `expect invariants` / `expect violation` in a file that drives a process: the traffic
 * checker on its recording and the effects check of the handler convention, each where it
 * applies (wsc_pcheck.h); 0, or -1 after failing the run. */
static int expect_process_check(runner *r, const wsc_stmt *st)
{
    wsc_pcheck c;
    char why[1024];
    int rc = wsc_pcheck_run(r->sim, r->world, r->sc, 0, &c, why, sizeof why);
    if (rc == WS_ENOMEM) return oom(r);
    if (rc) return fail(r, st, WSC_ERROR, NULL, "%s", why);
    int found = 0;
    for (size_t i = 0; i < c.n && !found; i++)
        found = st->kind == K_EXPECT_VIOLATION && c.v[i].alias &&
                !strcmp(c.v[i].alias, st->alias) && !strcmp(c.v[i].kind, st->text);
    int ok = st->kind == K_EXPECT_INVARIANTS ? c.n == 0 : found;
    if (ok) {
        r->checks++;
        wsc_pcheck_free(&c);
        return 0;
    }
    wsi_buf b = {0};
    wsi_buf_add(&b, c.n ? "" : "no violation", c.n ? 0 : 12);
    for (size_t i = 0; i < c.n; i++)
        wsi_buf_printf(&b, "%s%s (%s): %s", i ? "; " : "", c.v[i].kind, c.v[i].source,
                       c.v[i].sentence);
    char want[256];
    if (st->kind == K_EXPECT_INVARIANTS) snprintf(want, sizeof want, "no invariant broken");
    else snprintf(want, sizeof want, "a '%s' violation for entry %s", st->text, st->alias);
    if (runner_buf_ok(r, &b)) fail(r, st, WSC_FAIL, want, "%s", b.p);
    wsi_buf_free(&b);
    wsc_pcheck_free(&c);
    return -1;
}

/* Checks that some warning of the simulation contains the statement's text; 0, or -1
 * after failing the run. */
static int expect_warning(runner *r, const wsc_stmt *st)
{
    char *want = subst(r, st, st->text, strlen(st->text), NULL);
    if (!want) return -1;
    for (size_t i = 0; i < ws_sim_warning_count(r->sim); i++)
        if (strstr(ws_sim_warning(r->sim, i), want)) {
            wsi_free(want);
            r->checks++;
            return 0;
        }
    fail(r, st, WSC_FAIL, want, "%zu warning%s%s%s", ws_sim_warning_count(r->sim),
         ws_sim_warning_count(r->sim) == 1 ? "" : "s",
         ws_sim_warning_count(r->sim) ? ", the last: " : "",
         ws_sim_warning_count(r->sim)
             ? ws_sim_warning(r->sim, ws_sim_warning_count(r->sim) - 1) : "");
    wsi_free(want);
    return -1;
}

/* Appends a message to a failure's text as a scenario writes it: a bare word when every
 * byte prints and none would split it, else "quoted" with \" \\ and \xHH (a framed value
 * starts with NULs). */
static void put_message(wsi_buf *b, const char *p, size_t len)
{
    int bare = len > 0;
    for (size_t i = 0; bare && i < len; i++)
        bare = p[i] > ' ' && p[i] < 127 && p[i] != '"' && p[i] != '\'' && p[i] != '#';
    if (bare) {
        wsi_buf_add(b, p, len);
        return;
    }
    wsi_buf_add(b, "\"", 1);
    for (size_t i = 0; i < len; i++) {
        unsigned char c = (unsigned char)p[i];
        if (c == '"' || c == '\\') wsi_buf_printf(b, "\\%c", c);
        else if (c < ' ' || c >= 127) wsi_buf_printf(b, "\\x%02x", c);
        else wsi_buf_add(b, (const char *)&c, 1);
    }
    wsi_buf_add(b, "\"", 1);
}

/* Checks `expect published CHANNEL ...`: the payloads published on the channel, message
 * by message, in order; 0, or -1 after failing the run. */
static int expect_published(runner *r, const wsc_stmt *st)
{
    wsi_buf want = {0}, got = {0};
    wsi_buf_add(&want, st->nexpect ? "" : "none", st->nexpect ? 0 : 4);
    for (size_t i = 0; i < st->nexpect; i++) {
        size_t wl;
        char *w = subst(r, st, st->expect[i].s, st->expect[i].len, &wl);
        if (!w) {
            wsi_free(want.p);
            return -1;
        }
        wsi_buf_add(&want, i ? " " : "", i ? 1 : 0);
        put_message(&want, w, wl);
        wsi_free(w);
    }
    size_t n = 0;
    for (size_t i = 0; i < ws_sim_published_count(r->sim); i++) {
        const char *ch, *payload;
        size_t len;
        ws_sim_published(r->sim, i, &ch, &payload, &len);
        if (strcmp(ch, st->key) != 0) continue;
        if (n++) wsi_buf_add(&got, " ", 1);
        put_message(&got, payload, len);
    }
    if (!n) wsi_buf_add(&got, "none", 4);
    /* compared message by message, not as joined text ("a b" is not a and b) */
    int ok = n == st->nexpect;
    for (size_t i = 0, k = 0; ok && i < ws_sim_published_count(r->sim); i++) {
        const char *ch, *payload;
        size_t len;
        ws_sim_published(r->sim, i, &ch, &payload, &len);
        if (strcmp(ch, st->key) != 0) continue;
        size_t wl;
        char *w = subst(r, st, st->expect[k].s, st->expect[k].len, &wl);
        ok = w && wl == len && memcmp(w, payload, len) == 0;
        wsi_free(w);
        k++;
    }
    if (!runner_buf_ok(r, &want) || !runner_buf_ok(r, &got)) ok = 0;
    else if (!ok) fail(r, st, WSC_FAIL, want.p, "%s", got.p);
    else r->checks++;
    wsi_free(want.p);
    wsi_free(got.p);
    return ok ? 0 : -1;
}

/* ----- Consumer processes --------------------------------------------------------------------------- */

/* A process statement failed (why): an ERROR that is the input's fault (wsim exits 2),
 * reported with the tail of the consumer's log instead of the trace. */
static int proc_fail(runner *r, const wsc_stmt *st, const char *name, const char *why)
{
    if (r->failed) return -1;
    r->failed = 1;
    r->status = WSC_ERROR;
    r->bad_input = 1;
    wsi_buf b = {0};
    wsi_buf_printf(&b, "%s:%d: %s\n  error: %s\n", r->sc->name, st->line, st->src, why);
    char *tail = name && r->world ? wsc_world_log_tail(r->world, name, 20) : NULL;
    if (tail) wsi_buf_printf(&b, "  the end of %s's output:\n%s", name, tail);
    else if (name && r->world) wsi_buf_printf(&b, "  %s wrote nothing\n", name);
    wsi_free(tail);
    if (!runner_buf_ok(r, &b)) {
        wsi_buf_free(&b);
        return -1;
    }
    r->report = b.p;
    return -1;
}

/* A `subscribe` line of a file that drives a process: what the process subscribes to,
 * for `produce`, `expect pending`, the waits and the checks; nothing is sent. */
static int declare_sub(runner *r, const wsc_stmt *st)
{
    if (sub_index(r, st->sub) >= 0)
        return fail(r, st, WSC_ERROR, NULL, "a second subscription named '%s'", st->sub);
    subrec *v = wsi_realloc(r->subs, (r->nsubs + 1) * sizeof *v);
    if (!v) return oom(r);
    r->subs = v;
    r->subs[r->nsubs] = (subrec){.name = wsi_strdup(st->sub), .sub = NULL, .def = st};
    if (!r->subs[r->nsubs].name) return oom(r);
    r->nsubs++;
    return 0;
}

/* The `consumer` statement that declares name. */
static const wsc_stmt *consumer_decl(runner *r, const char *name)
{
    for (size_t i = 0; i < r->sc->nst; i++)
        if (r->sc->st[i].kind == K_CONSUMER && strcmp(r->sc->st[i].proc, name) == 0)
            return &r->sc->st[i];
    return NULL;
}

/* start, stop, kill and wait of a consumer process; 0, or -1 after failing the run. */
static int do_process(runner *r, const wsc_stmt *st)
{
    char why[2048];
    int rc;
    switch (st->kind) {
    case K_START: rc = wsc_world_start(r->world, consumer_decl(r, st->proc), why, sizeof why); break;
    case K_STOP_PROC: rc = wsc_world_stop(r->world, st->proc, st->n, why, sizeof why); break;
    case K_KILL: rc = wsc_world_kill(r->world, st->proc, why, sizeof why); break;
    default: {
        size_t at = (size_t)(st - r->sc->st);
        rc = wsc_world_wait(r->world, st->proc, at, st->n, why, sizeof why);
        break;
    }
    }
    if (rc == WS_ENOMEM) return oom(r);
    return rc ? proc_fail(r, st, st->proc, why) : 0;
}

/* `fault CONSUMER crash-before|crash-after ...`: the server holds that command and the
 * consumer is killed there, then started again (wsc_world_arm_crash); 0, or -1 after
 * failing the run. */
static int do_proc_fault(runner *r, const wsc_stmt *st)
{
    char why[512];
    if (wsc_world_arm_crash(r->world, st->fault_name, st->fault.nth,
                            st->fault.kind == WS_FAULT_CRASH_AFTER, why, sizeof why))
        return fail(r, st, WSC_ERROR, NULL, "%s", why);
    size_t i = (size_t)(st - r->sc->st);
    if (i < r->sc->nst) r->fault_armed[i] = 1;
    return 0;
}

/* ----- The consumer's side alone (wsim consume) ------------------------------------------------------ */

static int run_stmt(runner *r, const wsc_stmt *st);

/* Runs st as the file's own run would (consume_stmt chose it). */
static int run_stmt_engine(runner *r, const wsc_stmt *st)
{
    r->consuming = 1;
    int rc = run_stmt(r, st);
    r->consuming = 0;
    return rc;
}

/* A produce statement in consume mode: its alias names the entry, found again by its
 * payload (the k-th produce statement is root k); nothing is sent.  0, or -1 (oom). */
static int adopt(runner *r, const wsc_stmt *st)
{
    size_t k = 0;
    for (const wsc_stmt *o = r->sc->st; o <= st; o++) k += o->kind == K_PRODUCE;
    if (wsi_strmap_put(&r->by_payload, st->payload, st->payload_len, k)) return oom(r);
    if (!st->alias) return 0;
    return add_alias(r, st, k);
}

/* A statement in consume mode: the consumer's steps run, their own checks left out (a
 * read's expected deliveries, a pool command's reply, a refusal); the rest is the world's
 * or the checks', and is left out. */
static int consume_stmt(runner *r, const wsc_stmt *st)
{
    if (st->refused) return 0;
    switch (st->kind) {
    case K_PRODUCE: return adopt(r, st);
    case K_SUBSCRIBE:
    case K_STOP: return run_stmt_engine(r, st);
    case K_READ:
    case K_QUEUE:
    case K_POOL:
    case K_PUBLISH:
    case K_REPLY:
    case K_BIND:
    case K_SETTLE: {
        /* an action of an entry no read has handed out yet: its handling comes when one
         * does (wsim consume serves what comes as the file handles its entry) */
        alias *a = st->alias ? find_alias(r, st->alias) : NULL;
        if (st->alias && (!a || !latest(r, a))) return 0;
        wsc_stmt copy = *st;
        copy.has_expect = 0;
        copy.read_nothing = copy.read_report = 0;
        copy.nexpect = 0;
        return run_stmt_engine(r, &copy);
    }
    default: return 0;
    }
}

/* ----- The run -------------------------------------------------------------------------------------- */

/* Runs one statement of any kind; 0, or -1 once the run failed. */
static int run_stmt(runner *r, const wsc_stmt *st)
{
    if (r->opt->no_checks && (st->kind == K_CHECK || st->kind >= K_EXPECT_FLUSH)) return 0;
    if (r->opt->consume && !r->consuming) return consume_stmt(r, st);
    switch (st->kind) {
    case K_SETUP:
    case K_CHECK:
    case K_QUEUE:
    case K_POOL: return do_command(r, st);
    case K_CONSUMER: return 0; /* a declaration: `start` starts it */
    case K_START:
    case K_STOP_PROC:
    case K_KILL:
    case K_WAIT: return do_process(r, st);
    case K_SUBSCRIBE: {
        if (r->world) return declare_sub(r, st); /* the process subscribes itself */
        ws_sub_config c = st->cfg;
        c.key = st->s_key;
        c.group = st->s_group;
        c.consumer = st->s_consumer;
        c.delay_queue = st->s_dq;
        c.processing = st->s_processing;
        c.recovery = st->s_recovery;
        c.reply.key = st->s_reply;
        c.dead_letter = st->s_dead_letter;
        c.group_start = st->s_group_start;
        c.label = st->sub; /* the scenario's names in the trace: "read 2 of recovery" */
        if (sub_index(r, st->sub) >= 0)
            return fail(r, st, WSC_ERROR, NULL, "a second subscription named '%s'", st->sub);
        ws_sub *s = ws_subscribe(r->sim, &c);
        if (st->refused) return step_result(r, st, s ? 0 : ws_sim_err(r->sim));
        if (!s) return fail(r, st, WSC_ERROR, NULL, "%s", ws_sim_errstr(r->sim));
        /* (the engine owns s: ws_sim_free frees it whatever happens here) */
        subrec *v = wsi_realloc(r->subs, (r->nsubs + 1) * sizeof *v);
        if (!v) return oom(r);
        r->subs = v;
        r->subs[r->nsubs] = (subrec){.name = wsi_strdup(st->sub), .sub = s, .def = st};
        if (!r->subs[r->nsubs].name) return oom(r);
        r->nsubs++;
        return 0;
    }
    case K_PRODUCE: {
        int i = sub_index(r, st->sub);
        const wsc_stmt *def = i >= 0 ? r->subs[i].def : NULL;
        if (!def) return fail(r, st, WSC_ERROR, NULL, "no subscription named '%s'", st->sub);
        const char *key = st->key ? st->key : def->s_key;
        int rc = st->raw ? ws_sim_produce_raw(r->sim, def->cfg.form, key, st->payload,
                                              st->payload_len, NULL)
                         : ws_sim_produce(r->sim, def->cfg.form, key, st->payload,
                                          st->payload_len, st->headers, st->nheaders, NULL);
        if (rc) return fail(r, st, WSC_ERROR, NULL, "%s", ws_sim_errstr(r->sim));
        if (st->alias) {
            if (find_alias(r, st->alias))
                return fail(r, st, WSC_ERROR, NULL, "a second entry named '%s'", st->alias);
            if (add_alias(r, st, ws_sim_produced_count(r->sim))) return -1;
        }
        return 0;
    }
    case K_READ: return do_read(r, st);
    case K_PUBLISH:
    case K_REPLY:
    case K_BIND:
    case K_SETTLE: return do_action(r, st);
    case K_ADVANCE: {
        int rc = step_result(r, st, ws_sim_advance(r->sim, st->n));
        if (r->world) wsc_world_clock_moved(r->world); /* reads whose time is up answer */
        return rc;
    }
    case K_CRASH: return step_result(r, st, ws_sim_crash(r->sim));
    case K_RESTART: return step_result(r, st, ws_sim_restart(r->sim));
    case K_SHUTDOWN:
        return step_result(r, st, st->n ? ws_sim_shutdown_drains_lost(r->sim)
                                        : ws_sim_shutdown(r->sim));
    case K_STOP: {
        ws_sub *s = find_sub(r, st, st->sub);
        return s ? step_result(r, st, ws_stop(s)) : -1;
    }
    case K_FAULT:
        if (st->proc_fault) return r->opt->no_crash_faults ? 0 : do_proc_fault(r, st);
        return r->opt->no_crash_faults && crash_fault(st) ? 0 : do_fault(r, st);
    case K_EXPECT_NOTHING: return 0;
    case K_EXPECT_FLUSH: return expect_flush(r, st);
    case K_EXPECT_READ: return expect_read(r, st);
    case K_EXPECT_RTS: {
        ws_sim_counts c = ws_sim_get_counts(r->sim);
        uint64_t v = st->which == 0 ? c.round_trips
                     : st->which == 1 ? c.read_round_trips
                     : st->which == 2 ? c.flush_round_trips : c.pool_round_trips;
        return expect_number(r, st, v, "round trips");
    }
    case K_EXPECT_FLUSHES: {
        if (!st->sub) return expect_number(r, st, ws_sim_get_counts(r->sim).flushes, "flushes");
        ws_sub *s = find_sub(r, st, st->sub);
        return s ? expect_number(r, st, ws_sub_flushes(s), "flushes") : -1;
    }
    case K_EXPECT_REPORTS:
        return expect_number(r, st, ws_sim_get_counts(r->sim).reports, "reports");
    case K_EXPECT_SKIPPED:
        return expect_number(r, st, ws_sim_get_counts(r->sim).skipped, "skipped messages");
    case K_EXPECT_REPORT: return expect_report(r, st);
    case K_EXPECT_PENDING: return expect_pending(r, st);
    case K_EXPECT_DELAYED: return expect_delayed(r, st);
    case K_EXPECT_INVARIANTS:
    case K_EXPECT_VIOLATION:
        if (r->world) return expect_process_check(r, st);
        return expect_check(r, st);
    case K_EXPECT_WARNING: return expect_warning(r, st);
    case K_EXPECT_PUBLISHED: return expect_published(r, st);
    case K_EXPECT_DELIVERY: {
        ws_delivery *d = delivery_of(r, st, st->alias);
        if (!d) return -1;
        long long v = st->which == 0 ? ws_delivery_count(d) : ws_delivery_retries(d);
        return expect_number(r, st, (unsigned long long)v,
                             st->which == 0 ? "deliveries" : "retries");
    }
    }
    return 0;
}

/* The final keyspace, for wsim diff: every key, sorted, with its type and value.  NULL
 * when out of memory. */
static char *final_state(ws_sim *sim)
{
    const fr_reply *rep;
    const char *keys_argv[] = {"KEYS", "*"};
    if (ws_sim_command(sim, 2, keys_argv, NULL, &rep) || rep->type != FR_REPLY_ARRAY)
        return wsi_strdup("(cannot read the keyspace)\n");
    size_t n = rep->count;
    char **keys = wsi_calloc(n, sizeof *keys);
    if (!keys) return NULL;
    int whole = 1;
    for (size_t i = 0; i < n; i++) whole &= (keys[i] = wsi_strdup(rep->elements[i].str)) != NULL;
    if (!whole) {
        for (size_t i = 0; i < n; i++) wsi_free(keys[i]);
        wsi_free(keys);
        return NULL;
    }
    qsort(keys, n, sizeof *keys, cmp_str);
    wsi_buf b = {0};
    wsi_buf_add(&b, "", 0);
    for (size_t i = 0; i < n; i++) {
        const char *targv[] = {"TYPE", keys[i]};
        char type[32] = "none";
        if (ws_sim_command(sim, 2, targv, NULL, &rep) == 0 && rep->type == FR_REPLY_STATUS)
            snprintf(type, sizeof type, "%s", rep->str);
        const char *argv[6] = {NULL};
        int argc = 0;
        if (!strcmp(type, "string")) { argv[0] = "GET"; argc = 2; }
        else if (!strcmp(type, "list")) { argv[0] = "LRANGE"; argv[2] = "0"; argv[3] = "-1"; argc = 4; }
        else if (!strcmp(type, "hash")) { argv[0] = "HGETALL"; argc = 2; }
        else if (!strcmp(type, "set")) { argv[0] = "SMEMBERS"; argc = 2; }
        else if (!strcmp(type, "zset")) { argv[0] = "ZRANGE"; argv[2] = "0"; argv[3] = "-1"; argv[4] = "WITHSCORES"; argc = 5; }
        else if (!strcmp(type, "stream")) { argv[0] = "XRANGE"; argv[2] = "-"; argv[3] = "+"; argc = 4; }
        argv[1] = keys[i];
        wsi_buf_printf(&b, "%s (%s): ", keys[i], type);
        if (argc && ws_sim_command(sim, argc, argv, NULL, &rep) == 0) {
            /* sets and hashes answer in the server's hash order, which differs between the
             * fake and redis-server: compare them sorted */
            int set = !strcmp(type, "set"), hash = !strcmp(type, "hash");
            if ((set || hash) && rep->type == FR_REPLY_ARRAY) {
                size_t step = hash ? 2 : 1, nitems = rep->count / step;
                char **items = wsi_calloc(nitems, sizeof *items);
                size_t made = 0;
                for (; items && made < nitems; made++) {
                    wsi_buf it = {0};
                    for (size_t j = 0; j < step; j++) {
                        char *t = ws_reply_text(&rep->elements[made * step + j], NULL);
                        wsi_buf_printf(&it, "%s%s", j ? ": " : "", t);
                        wsi_free(t);
                    }
                    if (!(items[made] = wsi_buf_take(&it))) break;
                }
                if (made < nitems) {
                    /* out of memory: the text is dropped (b.oom), so is what was made */
                    b.oom = 1;
                    nitems = made;
                }
                if (nitems) qsort(items, nitems, sizeof *items, cmp_str);
                wsi_buf_add(&b, "{", 1);
                for (size_t k = 0; k < nitems; k++) {
                    wsi_buf_printf(&b, "%s%s", k ? ", " : "", items[k]);
                    wsi_free(items[k]);
                }
                wsi_buf_add(&b, "}", 1);
                wsi_free(items);
            } else {
                char *t = ws_reply_text(rep, NULL);
                wsi_buf_printf(&b, "%s", t ? t : "?");
                wsi_free(t);
            }
        }
        wsi_buf_add(&b, "\n", 1);
        wsi_free(keys[i]);
    }
    wsi_free(keys);
    return wsi_buf_take(&b);
}

/* What only the end of a whole run can say: a fault the file armed that never fired (its
 * command was never sent, or was sent before the fault was armed), and a scenario that
 * checked nothing without saying so (`expect nothing`). */
static void end_of_run(runner *r)
{
    const wsc_scenario *sc = r->sc;
    int nothing = 0;
    for (size_t i = 0; i < sc->nst && !r->failed; i++) {
        const wsc_stmt *st = &sc->st[i];
        if (st->kind == K_EXPECT_NOTHING) nothing = 1;
        if (st->kind == K_FAULT && st->proc_fault && r->fault_armed[i] && r->world &&
            wsc_world_crashed(r->world, NULL, 0, NULL))
            continue;
        if (st->kind != K_FAULT || !r->fault_armed[i] || r->fault_fired[i]) continue;
        if (st->proc_fault)
            fail(r, st, WSC_FAIL, "the fault fires",
                 "fault at line %d never fired: %s did not send that %s after the fault "
                 "was armed", st->line, st->conn,
                 st->fault_name ? "occurrence of the command" : "many commands");
        else
            fail(r, st, WSC_FAIL, "the fault fires",
                 "fault at line %d never fired: the %s connection did not send %s after the "
                 "fault was armed (or a crash cut it off first)", st->line, st->conn,
                 st->fault_name ? "that occurrence of the command" : "that round trip's command");
    }
    if (!r->failed && r->checks == 0 && !nothing) {
        char src[512];
        snprintf(src, sizeof src, "scenario %s", sc->title);
        const wsc_stmt first = {.line = sc->title_line, .src = src};
        fail(r, &first, WSC_FAIL, "at least one expectation (or `expect nothing`)",
             "the scenario checked nothing: add an expectation (expect ..., check, read ... "
             "expect, => REPLY, => refused), or say `expect nothing` to run it for its trace");
    }
}

/* ----- The runner, for wsc_run and the explorer ------------------------------------------------- */

/* A runner on a fresh simulation for sc, NULL when out of memory; an unreachable server
 * makes one that failed already (wsc_int.h). */
wsc_runner *wsc_runner_new(const wsc_scenario *sc, const wsc_options *opt)
{
    static const wsc_options defaults = {0};
    if (!opt) opt = &defaults;
    int real = opt->backend && strcmp(opt->backend, "fake") != 0;
    runner *r = wsi_calloc(1, sizeof *r);
    if (!r) return NULL;
    r->sc = sc;
    r->opt = opt;
    r->fault_fired = wsi_calloc(sc->nst, sizeof *r->fault_fired);
    r->fault_armed = wsi_calloc(sc->nst, 1);
    if (!r->fault_fired || !r->fault_armed) {
        wsi_free(r->fault_fired);
        wsi_free(r->fault_armed);
        wsi_free(r);
        return NULL;
    }
    ws_sim_config cfg = {0};
    cfg.backend = opt->backend;
    cfg.seed = opt->seed_set ? opt->seed : sc->seed;
    cfg.start_ms = sc->start_ms;
    /* a real server declared a cluster is one whatever the file says; a file that says
     * `cluster` runs there, or on the fake's emulation */
    cfg.cluster = sc->cluster || (real && opt->cluster);
    cfg.no_trace_text = opt->no_trace_text;
    if (real && opt->flushall) {
        /* on a connection of its own, so that the trace holds the scenario alone */
        ws_conn *c = ws_conn_open(opt->backend, 0);
        if (c && !ws_conn_dead(c)) {
            const char *argv[] = {"FLUSHALL"};
            fr_command cmd = {1, argv, NULL};
            const fr_reply *rep;
            ws_pipeline(c, "flushall", 1, &cmd, &rep);
        }
        ws_conn_close(c);
    }
    r->sim = ws_sim_new(&cfg);
    if (!r->sim) {
        wsi_free(r->fault_fired);
        wsi_free(r->fault_armed);
        wsi_free(r);
        return NULL;
    }
    if (sc->consumer_line && ws_sim_err(r->sim) != WS_ECONNECT) {
        char why[512];
        r->world = wsc_world_new(sc, r->sim, opt, why, sizeof why);
        if (!r->world) {
            r->failed = 1;
            r->status = WSC_ERROR;
            wsi_buf b = {0};
            wsi_buf_printf(&b, "%s: cannot run its consumer processes: %s\n", sc->name, why);
            if (!runner_buf_ok(r, &b)) {
                wsi_buf_free(&b);
                wsc_runner_free(r);
                return NULL;
            }
            r->report = b.p;
        }
    }
    if (ws_sim_err(r->sim) == WS_ECONNECT) {
        r->failed = 1;
        r->status = WSC_ERROR;
        wsi_buf b = {0};
        wsi_buf_printf(&b, "%s: %s\n", sc->name, ws_sim_errstr(r->sim));
        if (!runner_buf_ok(r, &b)) {
            wsi_buf_free(&b);
            wsc_runner_free(r);
            return NULL;
        }
        r->report = b.p;
    }
    return r;
}

/* Runs statement i; 0, or -1 once the run failed. */
int wsc_runner_exec(wsc_runner *r, size_t i)
{
    if (r->failed || i >= r->sc->nst) return -1;
    int rc = run_stmt(r, &r->sc->st[i]);
    if (r->world) wsc_world_pump(r->world); /* a consumer blocked in a read gets what it
                                               produced */
    return rc;
}

int wsc_runner_failed(const wsc_runner *r) { return r->failed; }
ws_sim *wsc_runner_sim(wsc_runner *r) { return r->sim; }
wsc_world *wsc_runner_world(wsc_runner *r) { return r->world; }
size_t wsc_runner_subs(const wsc_runner *r) { return r->nsubs; }
ws_sub *wsc_runner_sub(wsc_runner *r, size_t i) { return i < r->nsubs ? r->subs[i].sub : NULL; }

/* ws_read, remembering the deliveries it handed out so aliases reach them. */
int wsc_runner_read(wsc_runner *r, ws_sub *s, ws_read_result *res)
{
    int rc = ws_read(s, res);
    if (rc) return rc;
    if (res->is_report) keep_report(r, s, &res->report);
    for (size_t i = 0; i < res->n && !r->oom; i++) seen(r, ws_read_delivery(s, i));
    return r->oom ? WS_ENOMEM : 0;
}

/* The handler statements of each alias (file order), built once.  NULL for none, and
 * when out of memory (oom). */
static const size_t *handler_of(runner *r, const char *name)
{
    if (!r->stmts_of.cap && !r->oom) {
        for (size_t i = 0; i < r->sc->nst; i++) {
            const wsc_stmt *st = &r->sc->st[i];
            if (!st->alias || st->kind == K_PRODUCE) continue;
            size_t li;
            if (!wsi_strmap_get(&r->stmts_of, st->alias, strlen(st->alias), &li)) {
                size_t **v = wsi_realloc(r->stmt_lists, (r->nstmt_lists + 1) * sizeof *v);
                if (!v) return oom(r), NULL;
                r->stmt_lists = v;
                li = r->nstmt_lists++;
                r->stmt_lists[li] = NULL;
                if (wsi_strmap_put(&r->stmts_of, st->alias, strlen(st->alias), li))
                    return oom(r), NULL;
            }
            size_t n = 0;
            while (r->stmt_lists[li] && r->stmt_lists[li][n] != (size_t)-1) n++;
            size_t *v = wsi_realloc(r->stmt_lists[li], (n + 2) * sizeof *v);
            if (!v) return oom(r), NULL;
            v[n] = i;
            v[n + 1] = (size_t)-1;
            r->stmt_lists[li] = v;
        }
        if (!r->stmts_of.cap && wsi_strmap_put(&r->stmts_of, "", 0, (size_t)-1))
            return oom(r), NULL;
    }
    if (r->oom) return NULL;
    size_t li;
    if (!wsi_strmap_get(&r->stmts_of, name, strlen(name), &li) || li == (size_t)-1) return NULL;
    return r->stmt_lists[li];
}

void wsc_runner_prepare_handlers(wsc_runner *r) { (void)handler_of(r, ""); }

/* Handles d as the scenario handles its entry: its actions up to its first outcome (ack
 * when it has none); returns ws_settle's code. */
int wsc_runner_handle(wsc_runner *r, ws_delivery *d)
{
    const char *name = root_alias(r, d);
    int settled = 0, rc = 0;
    const size_t *list = name ? handler_of(r, name) : NULL;
    if (r->oom) return WS_ENOMEM;
    for (size_t j = 0; list && list[j] != (size_t)-1 && !settled && !ws_sim_dead(r->sim); j++) {
        const wsc_stmt *st = &r->sc->st[list[j]];
        if (st->refused) continue;
        switch (st->kind) {
        case K_QUEUE:
        case K_POOL:
        case K_PUBLISH:
        case K_REPLY:
        case K_BIND: {
            /* the replayed handler's own expectations (=> reply) are not the point here */
            wsc_stmt copy = *st;
            copy.has_expect = 0;
            run_stmt(r, &copy);
            break;
        }
        case K_SETTLE:
            rc = ws_settle(d, st->outcome, st->n);
            settled = 1;
            break;
        default: break;
        }
        if (r->failed) return -1;
    }
    if (!settled && !ws_sim_dead(r->sim) && !ws_delivery_done(d)) rc = ws_settle(d, WS_ACK, 0);
    return rc;
}

/* Fills res with the run's verdict and report, and (unless the server was never reached)
 * its trace, diagrams, final state and counts; the runner keeps nothing it handed over. */
void wsc_runner_finish(wsc_runner *r, wsc_result *res)
{
    memset(res, 0, sizeof *res);
    res->status = r->failed ? r->status : WSC_PASS;
    res->checks = r->checks;
    res->failures = r->failed ? 1 : 0;
    res->report = r->report;
    res->bad_input = r->bad_input;
    r->report = NULL;
    if (r->status == WSC_ERROR && !ws_sim_round_trip_count(r->sim) && r->failed &&
        ws_sim_err(r->sim) == WS_ECONNECT)
        return;
    res->trace = ws_sim_trace_text(r->sim, NULL);
    res->diagram = ws_sim_diagram(r->sim, NULL);
    if (r->opt->picture && !(res->picture = wsc_picture_svg(r->sim, r->sc->title, NULL)))
        oom(r);
    res->trace_hash = ws_sim_trace_hash(r->sim);
    res->counts = ws_sim_get_counts(r->sim);
    if (!(res->state = final_state(r->sim))) oom(r);
}

int wsc_runner_oom(const wsc_runner *r) { return r->oom; }

/* Frees the runner, its simulation and everything it recorded (NULL allowed). */
void wsc_runner_free(wsc_runner *r)
{
    if (!r) return;
    wsc_world_free(r->world); /* (before the simulation: it serves its fake) */
    ws_sim_free(r->sim);
    for (size_t i = 0; i < r->nsubs; i++) {
        wsi_free(r->subs[i].name);
        wsi_free(r->subs[i].report_error);
    }
    wsi_free(r->subs);
    wsi_free(r->fault_fired);
    wsi_free(r->fault_armed);
    for (size_t i = 0; i < r->naliases; i++) {
        wsi_free(r->aliases[i].name);
        wsi_free(r->aliases[i].sub);
    }
    wsi_free(r->aliases);
    wsi_free(r->seen);
    wsi_free(r->report);
    wsi_strmap_free(&r->alias_index);
    wsi_strmap_free(&r->by_payload);
    wsi_strmap_free(&r->stmts_of);
    for (size_t i = 0; i < r->nstmt_lists; i++) wsi_free(r->stmt_lists[i]);
    wsi_free(r->stmt_lists);
    wsi_free(r->latest_of);
    wsi_free(r->alias_of_root);
    wsi_free(r);
}

/* Why wsc_run skips sc with opt (its needs line, or a cluster file without a cluster),
 * or NULL when it runs (wsc.h). */
const char *wsc_skips(const wsc_scenario *sc, const wsc_options *opt, const char **needs)
{
    const char *dummy;
    if (!needs) needs = &dummy;
    int real = opt && opt->backend && strcmp(opt->backend, "fake") != 0;
    if (real && sc->needs_fake) {
        *needs = "the fake";
        return sc->needs_fake;
    }
    if ((!real || (opt && opt->fake_server)) && sc->needs_real) {
        *needs = "a real server";
        return sc->needs_real;
    }
    /* `cluster` runs on the fake's emulation, or on a server said to be one */
    if (real && sc->cluster && !(opt && opt->cluster)) {
        *needs = "a one-node Redis Cluster";
        return "the file says `cluster`: wsim run --cluster runs it on one";
    }
    return NULL;
}

/* Runs sc on a fresh simulation: 0 with *res filled, or WS_ENOMEM (wsc.h). */
int wsc_run(const wsc_scenario *sc, const wsc_options *opt, wsc_result *res)
{
    memset(res, 0, sizeof *res);
    const char *why = wsc_skips(sc, opt, NULL);
    if (why) {
        res->status = WSC_SKIP;
        res->report = wsi_strdup(why);
        return res->report ? 0 : WS_ENOMEM;
    }
    wsc_runner *r = wsc_runner_new(sc, opt);
    if (!r) return WS_ENOMEM;
    for (size_t i = 0; i < sc->nst && !r->failed; i++) wsc_runner_exec(r, i);
    if (!r->oom) end_of_run(r);
    if (!r->oom) wsc_runner_finish(r, res);
    int rc = r->oom ? WS_ENOMEM : 0;
    wsc_runner_free(r);
    if (rc) wsc_result_free(res); /* (what finish made before memory ran out) */
    return rc;
}

/* Frees what a result holds; *res is empty afterwards. */
void wsc_result_free(wsc_result *res)
{
    wsi_free(res->report);
    wsi_free(res->trace);
    wsi_free(res->diagram);
    wsi_free(res->picture);
    wsi_free(res->state);
    memset(res, 0, sizeof *res);
}
