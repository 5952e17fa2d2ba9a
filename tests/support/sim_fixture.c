/* sim_fixture.c -- the consumer model's test fixture (sim_fixture.h): runs each test body
 * on the fake and on redis-server, and compares the runs' transcripts and traces. */
#include "sim_fixture.h"
#include "wsi_alloc.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "redis_harness.h"

enum { SF_MAX_SIMS = 8 };

struct sf_world {
    int real;               /* this run is on redis-server */
    int skipped;            /* the body said it needs the fake */
    int expect_violations;  /* the world's simulation may break invariants */
    rh_buf log;             /* the transcript the runs compare */
    ws_sim *sims[SF_MAX_SIMS]; /* simulations made by the body; the last is compared */
    size_t nsims;
    char **owned;           /* strings handed to the body, freed with the world */
    size_t nowned, capowned;
};

static int g_real_mode;     /* --real: run every test on redis-server too */
static rh_server *g_srv;    /* the harness's server for the whole run */
static rh_server *g_cluster; /* a one-node cluster, started at the first simulation that
                                asks for one (ws_sim_config.cluster) in --real mode */
static sf_world *g_cur;     /* the world of the running body */

/* ----- Small helpers ---------------------------------------------------------------------- */

/* Keeps s (heap) until the world goes; returns it. */
static char *own(sf_world *w, char *s)
{
    if (!s) fail_msg("out of memory");
    if (w->nowned == w->capowned) {
        w->capowned = w->capowned ? w->capowned * 2 : 64;
        w->owned = wsi_xrealloc(w->owned, w->capowned * sizeof *w->owned);
    }
    w->owned[w->nowned++] = s;
    return s;
}

static char *vfmt(const char *fmt, va_list ap)
{
    va_list ap2;
    va_copy(ap2, ap);
    int n = vsnprintf(NULL, 0, fmt, ap2);
    va_end(ap2);
    char *s = wsi_xmalloc((size_t)n + 1);
    vsnprintf(s, (size_t)n + 1, fmt, ap);
    return s;
}

static sf_world *cur(void)
{
    if (!g_cur) fail_msg("sim_fixture: no test is running");
    return g_cur;
}

void sf_log(sf_world *w, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    char *s = vfmt(fmt, ap);
    va_end(ap);
    rh_buf_printf(&w->log, "%s\n", s);
    free(s);
}

int sf_real(const sf_world *w) { return w->real; }

int64_t sf_ms(const sf_world *w, int64_t fake_ms, int64_t real_ms)
{
    return w->real ? real_ms : fake_ms;
}

int sf_fake_only(sf_world *w, const char *why)
{
    if (!w->real) return 0;
    printf("      skipped on redis-server: %s\n", why);
    w->skipped = 1;
    return 1;
}

void sf_expect_violations(sf_world *w) { w->expect_violations = 1; }

/* ----- Masking ---------------------------------------------------------------------------- */

static int is_digit(char c) { return c >= '0' && c <= '9'; }

/* The first occurrence of needle in hay[0..len), or NULL (memmem is not POSIX). */
static const char *find_in(const char *hay, size_t len, const char *needle)
{
    size_t nl = strlen(needle);
    for (size_t i = 0; i + nl <= len; i++)
        if (memcmp(hay + i, needle, nl) == 0) return hay + i;
    return NULL;
}

/* Masks the idle times of one XPENDING line: `", :<idle>, :<count>]` -> `", <idle>, :n]`. */
static void mask_idle(rh_buf *out, const char *line, size_t len)
{
    size_t i = 0;
    while (i < len) {
        if (i + 4 <= len && memcmp(line + i, "\", :", 4) == 0) {
            size_t j = i + 4;
            while (j < len && is_digit(line[j])) j++;
            if (j > i + 4 && j + 3 <= len && memcmp(line + j, ", :", 3) == 0) {
                size_t k = j + 3;
                while (k < len && is_digit(line[k])) k++;
                if (k > j + 3 && k < len && line[k] == ']') {
                    rh_buf_append(out, "\", <idle>", 9);
                    i = j;
                    continue;
                }
            }
        }
        rh_buf_append(out, line + i, 1);
        i++;
    }
}

/* The length of an escape at text[i] as the trace writes binary arguments (redis-cli
 * style: \xHH, \n, \", \\), or 0.  An escape is copied whole: the framework's binary
 * encodings put a length byte right before an id (a delay-queue member is [u32 BE id
 * length][id]...), and a length of 16 ("\x10") must not run into the id's digits. */
static size_t escape_len(const char *text, size_t i, size_t n)
{
    if (text[i] != '\\' || i + 1 >= n) return 0;
    if (text[i + 1] == 'x' && i + 3 < n) return 4;
    return 2;
}

char *sf_mask(const char *text)
{
    rh_buf a = {0};
    char **ids = NULL;
    size_t nids = 0;
    size_t n = strlen(text);
    for (size_t i = 0; i < n;) {
        size_t esc = escape_len(text, i, n);
        if (esc) {
            rh_buf_append(&a, text + i, esc);
            i += esc;
            continue;
        }
        int starts = is_digit(text[i]) && (i == 0 || !is_digit(text[i - 1]) ||
                                           (i >= 4 && text[i - 4] == '\\' &&
                                            text[i - 3] == 'x'));
        size_t j = i;
        while (starts && j < n && is_digit(text[j])) j++;
        if (starts && j - i == 13) {
            size_t k = j;
            if (k + 1 < n && text[k] == '-' && is_digit(text[k + 1])) {
                k++;
                while (k < n && is_digit(text[k])) k++;
                size_t idx = 0;
                while (idx < nids && !(strlen(ids[idx]) == k - i &&
                                       memcmp(ids[idx], text + i, k - i) == 0))
                    idx++;
                if (idx == nids) {
                    ids = wsi_xrealloc(ids, (nids + 1) * sizeof *ids);
                    ids[nids] = wsi_xmemdup(text + i, k - i);
                    nids++;
                }
                rh_buf_printf(&a, "<id%zu>", idx + 1);
                i = k;
                continue;
            }
            rh_buf_append(&a, "<ms>", 4);
            i = j;
            continue;
        }
        if (starts) {
            rh_buf_append(&a, text + i, j - i);
            i = j;
            continue;
        }
        rh_buf_append(&a, text + i, 1);
        i++;
    }
    for (size_t i = 0; i < nids; i++) free(ids[i]);
    free(ids);
    /* XPENDING's idle times, line by line. */
    rh_buf b = {0};
    const char *p = a.data ? a.data : "";
    while (*p) {
        const char *e = strchr(p, '\n');
        size_t len = e ? (size_t)(e - p) + 1 : strlen(p);
        if (find_in(p, len, "XPENDING")) mask_idle(&b, p, len);
        else if (len > 22 && memcmp(p, "-- the clock advances ", 22) == 0)
            rh_buf_printf(&b, "-- the clock advances <ms>\n"); /* sf_ms: per backend */
        else rh_buf_append(&b, p, len);
        p += len;
    }
    rh_buf_free(&a);
    if (!b.data) rh_buf_append(&b, "", 0);
    return b.data;
}

/* ----- Admin commands --------------------------------------------------------------------- */

/* Runs line on the admin connection; the reply (valid until the next admin call). */
static const fr_reply *admin(ws_sim *sim, const char *line)
{
    const fr_reply *r = NULL;
    int rc = ws_sim_command_line(sim, line, &r);
    if (rc != 0 || !r)
        fail_msg("admin command `%s` failed: %s (%s)", line, ws_err_name(rc), ws_sim_errstr(sim));
    return r;
}

static char *reply_text(const fr_reply *r)
{
    return ws_reply_text(r, NULL); /* (libwsim aborts when out of memory) */
}

static const char *vq(ws_sim *sim, const char *fmt, va_list ap)
{
    sf_world *w = cur();
    char *line = own(cur(), vfmt(fmt, ap)); /* kept: a failure jumps out */
    char *t = own(w, reply_text(admin(sim, line)));
    sf_log(w, "%s -> %s", line, t);
    return t;
}

const char *sf_q(ws_sim *sim, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    const char *t = vq(sim, fmt, ap);
    va_end(ap);
    return t;
}

long long sf_int(ws_sim *sim, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    const char *t = vq(sim, fmt, ap);
    va_end(ap);
    if (t[0] != ':') fail_msg("expected an integer reply, got %s", t);
    return strtoll(t + 1, NULL, 10);
}

void sf_do(ws_sim *sim, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    char *line = own(cur(), vfmt(fmt, ap)); /* kept: a failure jumps out */
    va_end(ap);
    const fr_reply *r = admin(sim, line);
    if (r->type == FR_REPLY_ERROR || r->type == FR_REPLY_NIL)
        fail_msg("setup `%s` answered %s", line, own(cur(), reply_text(r)));
}

long long sf_pending(ws_sim *sim, const char *key, const char *group)
{
    char line[512];
    snprintf(line, sizeof line, "XPENDING %s %s", key, group);
    const fr_reply *r = admin(sim, line);
    if (r->type != FR_REPLY_ARRAY || r->count < 1 || r->elements[0].type != FR_REPLY_INTEGER)
        fail_msg("XPENDING %s %s answered %s", key, group, own(cur(), reply_text(r)));
    long long n = r->elements[0].integer;
    sf_log(cur(), "pending %s %s: %lld", key, group, n);
    return n;
}

void sf_group(ws_sim *sim, const char *key, const char *group)
{
    sf_do(sim, "XGROUP CREATE %s %s 0 MKSTREAM", key, group);
}

const char *sf_produce(ws_sim *sim, ws_form form, const char *key, const char *payload)
{
    char *id = NULL;
    /* a list's or channel's value bare (ws_sim_produce_raw), so that the tests name values
     * as they read; the framed default has its own tests (test_sim_publish.c) */
    int rc = form == WS_FORM_STREAM
                 ? ws_sim_produce(sim, (int)form, key, payload, strlen(payload), NULL, 0, &id)
                 : ws_sim_produce_raw(sim, (int)form, key, payload, strlen(payload), &id);
    if (rc != 0) fail_msg("ws_sim_produce: %s (%s)", ws_err_name(rc), ws_sim_errstr(sim));
    if (!id) fail_msg("ws_sim_produce gave no id");
    own(cur(), id);
    sf_log(cur(), "produced %s on %s: %s", payload, key, id);
    return id;
}

/* ----- The consumer --------------------------------------------------------------------- */

ws_sub *sf_subscribe(ws_sim *sim, const ws_sub_config *cfg)
{
    ws_sub *s = ws_subscribe(sim, cfg);
    if (!s) fail_msg("ws_subscribe refused: %s", ws_sim_errstr(sim));
    return s;
}

ws_sub_config sf_sub_config(ws_sim *sim, ws_form form, ws_mode mode, const char *key,
                            size_t count)
{
    ws_sub_config cfg;
    memset(&cfg, 0, sizeof cfg);
    cfg.form = form;
    cfg.mode = mode;
    cfg.key = key;
    cfg.count = count;
    cfg.block_ms = 100;
    if (form == WS_FORM_STREAM) {
        cfg.group = "g";
        sf_group(sim, key, "g");
    }
    return cfg;
}

ws_sub *sf_sub(ws_sim *sim, ws_form form, ws_mode mode, const char *key, size_t count)
{
    ws_sub_config cfg = sf_sub_config(sim, form, mode, key, count);
    return sf_subscribe(sim, &cfg);
}

void sf_produce_n(ws_sim *sim, ws_form form, const char *key, int n)
{
    char payload[32];
    for (int i = 1; i <= n; i++) {
        snprintf(payload, sizeof payload, "order-%d", i);
        sf_produce(sim, form, key, payload);
    }
}

ws_sub *sf_orders_read(sf_world *w, ws_sim **simp, ws_form form, ws_mode mode, size_t count,
                       int n)
{
    ws_sim *sim = sf_sim(w, 1);
    ws_sub *sub = sf_sub(sim, form, mode, "orders", count);
    sf_produce_n(sim, form, "orders", n);
    assert_int_equal(sf_read(sub), n);
    *simp = sim;
    return sub;
}

long long sf_unsettled(ws_sim *sim, ws_form form, const char *key)
{
    if (form == WS_FORM_STREAM) return sf_pending(sim, key, "g");
    if (form == WS_FORM_RELIABLE_LIST) return sf_int(sim, "LLEN %s.processing", key);
    return 0;
}

/* The delivery's id and payload for the transcript. */
static void log_delivery(sf_world *w, const ws_delivery *d)
{
    size_t len = 0;
    const char *p = ws_delivery_payload(d, &len);
    rh_buf_printf(&w->log, "  %s payload=%.*s retries=%lld count=%lld\n", ws_delivery_id(d),
                  (int)len, p ? p : "", ws_delivery_retries(d), ws_delivery_count(d));
}

size_t sf_read(ws_sub *sub)
{
    ws_read_result res;
    memset(&res, 0, sizeof res);
    int rc = ws_read(sub, &res);
    if (rc != 0) fail_msg("ws_read: %s", ws_err_name(rc));
    if (res.is_report)
        fail_msg("ws_read handed out a report (%s: %s), not deliveries",
                 res.report.subscription, res.report.first_error);
    sf_world *w = cur();
    sf_log(w, "read %llu of %s: %zu deliveries", (unsigned long long)res.read,
           ws_sub_name(sub), res.n);
    for (size_t i = 0; i < res.n; i++) log_delivery(w, ws_read_delivery(sub, i));
    return res.n;
}

void sf_ack_copy(ws_sub *sub, long long retries)
{
    assert_int_equal(sf_read(sub), 1);
    assert_int_equal(ws_delivery_retries(sf_d(sub, 0)), retries);
    sf_settle(sf_d(sub, 0), WS_ACK);
}

ws_report sf_read_report(ws_sub *sub)
{
    ws_read_result res;
    memset(&res, 0, sizeof res);
    int rc = ws_read(sub, &res);
    if (rc != 0) fail_msg("ws_read: %s", ws_err_name(rc));
    if (!res.is_report) fail_msg("ws_read handed out %zu deliveries, not a report", res.n);
    sf_log(cur(), "report of %s: commands=%zu settles=%zu failed=%zu flush=%llu error=%s",
           res.report.subscription, res.report.commands, res.report.settles,
           res.report.failed, (unsigned long long)res.report.flush,
           res.report.first_error ? res.report.first_error : "(null)");
    return res.report;
}

ws_delivery *sf_d(ws_sub *sub, size_t i)
{
    ws_delivery *d = ws_read_delivery(sub, i);
    if (!d) fail_msg("no delivery %zu in the latest read of %s", i, ws_sub_name(sub));
    return d;
}

void sf_queue(ws_delivery *d, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    char *line = own(cur(), vfmt(fmt, ap)); /* kept: a failure jumps out */
    va_end(ap);
    int rc = ws_queue_line(d, line);
    if (rc != 0) fail_msg("ws_queue_line(%s): %s", line, ws_err_name(rc));
}

void sf_settle(ws_delivery *d, ws_outcome outcome)
{
    int rc = ws_settle(d, outcome, 0);
    if (rc != 0) fail_msg("ws_settle(%s, %d): %s", ws_delivery_id(d), (int)outcome, ws_err_name(rc));
}

const char *sf_pool(ws_sim *sim, ws_delivery *d, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    char *line = own(cur(), vfmt(fmt, ap)); /* kept: a failure jumps out */
    va_end(ap);
    const fr_reply *r = NULL;
    int rc = ws_pool_line(sim, d, line, &r);
    if (rc != 0 || !r) fail_msg("ws_pool_line(%s): %s (%s)", line, ws_err_name(rc), ws_sim_errstr(sim));
    sf_world *w = cur();
    char *t = own(w, reply_text(r));
    sf_log(w, "pool %s -> %s", line, t);
    return t;
}

uint64_t sf_window_round_trips(ws_sim *sim)
{
    ws_conn *c = ws_sim_window(sim);
    if (!c) fail_msg("no window connection");
    return ws_conn_get_stats(c).round_trips;
}

/* ----- Checks ----------------------------------------------------------------------------- */

const ws_violation *sf_check(ws_sim *sim, size_t *n)
{
    const ws_violation *v = NULL;
    size_t nv = 0;
    int rc = ws_sim_check(sim, &v, &nv);
    if (rc != 0) fail_msg("ws_sim_check: %s (%s)", ws_err_name(rc), ws_sim_errstr(sim));
    for (size_t i = 0; i < nv; i++)
        sf_log(cur(), "check: %s %s: %s", v[i].invariant, v[i].entry, v[i].sentence);
    if (n) *n = nv;
    return v;
}

const ws_violation *sf_violation(ws_sim *sim, const char *invariant)
{
    size_t n = 0;
    const ws_violation *v = sf_check(sim, &n);
    for (size_t i = 0; i < n; i++)
        if (strcmp(v[i].invariant, invariant) == 0) return &v[i];
    return NULL;
}

const ws_violation *sf_only_violation(ws_sim *sim, const char *invariant, const char *entry)
{
    size_t n;
    const ws_violation *v = sf_check(sim, &n);
    if (n != 1) fail_msg("%zu violations, want 1 (%s)", n, n ? v[0].sentence : "none");
    assert_string_equal(v[0].invariant, invariant);
    assert_string_equal(v[0].entry, entry);
    return v;
}

/* ----- The trace -------------------------------------------------------------------------- */

const char *sf_trace(ws_sim *sim)
{
    char *t = ws_sim_trace_text(sim, NULL);
    if (!t) fail_msg("ws_sim_trace_text: out of memory");
    return own(cur(), t);
}

const char *sf_commands(ws_sim *sim, const char *filter)
{
    const char *t = sf_trace(sim);
    rh_buf b = {0};
    int take = 0;
    for (const char *p = t; *p;) {
        const char *e = strchr(p, '\n');
        size_t len = e ? (size_t)(e - p) : strlen(p);
        if (len > 0 && p[0] != ' ') {
            take = !filter || find_in(p, len, filter) != NULL;
        } else if (take && len > 2 && p[0] == ' ' && p[1] == ' ' && p[2] != ' ') {
            const char *arrow = find_in(p, len, " -> ");
            size_t cl = arrow ? (size_t)(arrow - p) : len;
            rh_buf_append(&b, p + 2, cl - 2);
            rh_buf_append(&b, "\n", 1);
        }
        p += len + (e ? 1 : 0);
    }
    if (!b.data) rh_buf_append(&b, "", 0);
    return own(cur(), b.data);
}

size_t sf_count(const char *hay, const char *needle)
{
    size_t n = 0, nl = strlen(needle);
    for (const char *p = hay; (p = strstr(p, needle)) != NULL; p += nl) n++;
    return n;
}

void sf_in_order(const char *hay, ...)
{
    va_list ap;
    va_start(ap, hay);
    const char *p = hay, *prev = "(start)";
    for (const char *s; (s = va_arg(ap, const char *)) != NULL; prev = s) {
        const char *at = strstr(p, s);
        if (!at) {
            va_end(ap);
            fail_msg("`%s` does not follow `%s` in:\n%s", s, prev, hay);
        }
        p = at + strlen(s);
    }
    va_end(ap);
}

/* ----- Worlds and runs -------------------------------------------------------------------- */

ws_sim *sf_sim_cfg(sf_world *w, const ws_sim_config *cfg)
{
    if (w->nsims == SF_MAX_SIMS) fail_msg("too many simulations in one test");
    ws_sim_config c = *cfg;
    char url[400];
    if (w->real && c.cluster) {
        if (!g_cluster) g_cluster = rh_start(&(rh_options){.cluster = 1, .quiet = 1});
        if (!g_cluster) fail_msg("cannot start a one-node redis-server cluster");
        snprintf(url, sizeof url, "unix://%s", g_cluster->socket);
        c.backend = url;
    } else if (w->real) {
        snprintf(url, sizeof url, "unix://%s", g_srv->socket);
        c.backend = url;
    } else {
        c.backend = "fake";
    }
    ws_sim *sim = ws_sim_new(&c);
    if (!sim) fail_msg("ws_sim_new: out of memory");
    w->sims[w->nsims++] = sim;
    if (ws_sim_err(sim) != 0)
        fail_msg("ws_sim_new: %s (%s)", ws_err_name(ws_sim_err(sim)), ws_sim_errstr(sim));
    /* the backend asked for is the one the simulation runs on */
    if (ws_sim_is_real(sim) != w->real)
        fail_msg("ws_sim_is_real says %d for backend %s", ws_sim_is_real(sim), c.backend);
    /* The previous test's (or simulation's) keys go; the fake starts empty, but the
     * record must be the same on both. */
    sf_do(sim, "FLUSHALL");
    return sim;
}

ws_sim *sf_sim(sf_world *w, uint64_t seed)
{
    ws_sim_config c = {0};
    c.seed = seed;
    return sf_sim_cfg(w, &c);
}

static sf_world *world_new(int real)
{
    sf_world *w = wsi_xcalloc(1, sizeof *w);
    w->real = real;
    return w;
}

static void world_free(sf_world *w)
{
    if (!w) return;
    for (size_t i = 0; i < w->nsims; i++) ws_sim_free(w->sims[i]);
    for (size_t i = 0; i < w->nowned; i++) free(w->owned[i]);
    free(w->owned);
    rh_buf_free(&w->log);
    free(w);
}

/* Appends the keyspace of sim to the transcript: every key (sorted) with its content;
 * streams with their entries, groups and pending entries (without idle times). */
static void dump_keyspace(sf_world *w, ws_sim *sim)
{
    const fr_reply *r = admin(sim, "KEYS *");
    size_t n = r->count;
    char **keys = wsi_xcalloc(n ? n : 1, sizeof *keys);
    for (size_t i = 0; i < n; i++) keys[i] = wsi_xmemdup(r->elements[i].str, r->elements[i].len);
    for (size_t i = 1; i < n; i++)
        for (size_t j = i; j > 0 && strcmp(keys[j - 1], keys[j]) > 0; j--) {
            char *t = keys[j];
            keys[j] = keys[j - 1];
            keys[j - 1] = t;
        }
    rh_buf_printf(&w->log, "keyspace: %zu keys\n", n);
    char line[1024];
    for (size_t i = 0; i < n; i++) {
        const char *k = keys[i];
        snprintf(line, sizeof line, "TYPE \"%s\"", k);
        char *type = reply_text(admin(sim, line));
        const char *fmt = NULL;
        if (!strcmp(type, "+string")) fmt = "GET \"%s\"";
        else if (!strcmp(type, "+list")) fmt = "LRANGE \"%s\" 0 -1";
        else if (!strcmp(type, "+hash")) fmt = "HGETALL \"%s\"";
        else if (!strcmp(type, "+set")) fmt = "SORT \"%s\" ALPHA";
        else if (!strcmp(type, "+zset")) fmt = "ZRANGE \"%s\" 0 -1 WITHSCORES";
        else if (!strcmp(type, "+stream")) fmt = "XRANGE \"%s\" - +";
        if (!fmt) fail_msg("key %s of type %s", k, type);
        snprintf(line, sizeof line, fmt, k);
        char *content = reply_text(admin(sim, line));
        rh_buf_printf(&w->log, "  %s %s: %s\n", type, k, content);
        free(content);
        if (!strcmp(type, "+stream")) {
            snprintf(line, sizeof line, "XINFO GROUPS \"%s\"", k);
            const fr_reply *g = admin(sim, line);
            size_t ng = g->count;
            char **groups = wsi_xcalloc(ng ? ng : 1, sizeof *groups);
            for (size_t gi = 0; gi < ng; gi++) {
                const fr_reply *gr = &g->elements[gi];
                /* name, consumers, pending, last-delivered-id */
                groups[gi] = wsi_xmemdup(gr->elements[1].str, gr->elements[1].len);
                char *info = reply_text(gr);
                rh_buf_printf(&w->log, "    group %s\n", info ? info : "?");
                free(info);
            }
            for (size_t gi = 0; gi < ng; gi++) {
                snprintf(line, sizeof line, "XPENDING \"%s\" \"%s\" - + 1000", k, groups[gi]);
                const fr_reply *p = admin(sim, line);
                for (size_t e = 0; e < p->count; e++) {
                    const fr_reply *pe = &p->elements[e];
                    rh_buf_printf(&w->log, "    pending %s %.*s %.*s count=%lld\n", groups[gi],
                                  (int)pe->elements[0].len, pe->elements[0].str,
                                  (int)pe->elements[1].len, pe->elements[1].str,
                                  pe->elements[3].integer);
                }
                free(groups[gi]);
            }
            free(groups);
        }
        free(type);
    }
    for (size_t i = 0; i < n; i++) free(keys[i]);
    free(keys);
}

/* Finishes a run: the masked trace of the world's simulation, then its invariant check
 * and keyspace into the transcript; both masked, heap. */
static void world_finish(sf_world *w, char **transcript, char **trace)
{
    *transcript = NULL;
    *trace = NULL;
    if (w->nsims == 0) {
        *transcript = sf_mask(w->log.data ? w->log.data : "");
        *trace = wsi_xstrdup("");
        return;
    }
    ws_sim *sim = w->sims[w->nsims - 1];
    char *t = ws_sim_trace_text(sim, NULL);
    if (!t) fail_msg("ws_sim_trace_text: out of memory");
    *trace = sf_mask(t);
    free(t);
    size_t nv = 0;
    const ws_violation *v = sf_check(sim, &nv);
    if (nv && !w->expect_violations)
        fail_msg("ws_sim_check found %zu violation(s) in a test that expects none; "
                 "the first: %s %s: %s", nv, v[0].invariant, v[0].entry, v[0].sentence);
    dump_keyspace(w, sim);
    *transcript = sf_mask(w->log.data ? w->log.data : "");
}

/* Whether a and b are equal once every "<idN>" is read as "<id>".  The numbers cannot be
 * compared: an id is unique within its stream only, and two streams' ids coincide on
 * the fake (its clock stands still, so every stream's first entry is 1700000000000-0)
 * and, now and then, on a server (two XADDs in one millisecond), never at the same
 * places.  Which entry is which is what the tests' own assertions check, per backend. */
static int same_up_to_ids(const char *a, const char *b)
{
    while (*a && *b) {
        if (strncmp(a, "<id", 3) == 0 && strncmp(b, "<id", 3) == 0 && is_digit(a[3]) &&
            is_digit(b[3])) {
            a += 3;
            b += 3;
            while (is_digit(*a)) a++;
            while (is_digit(*b)) b++;
            continue;
        }
        if (*a != *b) return 0;
        a++;
        b++;
    }
    return *a == *b;
}

int sf_same_masked(const char *a, const char *b)
{
    char *ma = sf_mask(a), *mb = sf_mask(b);
    int same = same_up_to_ids(ma, mb);
    free(ma);
    free(mb);
    return same;
}

/* Prints where a and b first differ, with a few lines of context, and fails. */
static void compare(const char *what, const char *a, const char *b)
{
    if (same_up_to_ids(a, b)) return;
    size_t line = 1, i = 0, start = 0;
    while (a[i] && a[i] == b[i]) {
        if (a[i] == '\n') {
            line++;
            start = i + 1;
        }
        i++;
    }
    fprintf(stderr, "the fake and redis-server differ in the %s, from line %zu:\n", what, line);
    fprintf(stderr, "--- fake:\n%.800s\n--- redis-server:\n%.800s\n---\n", a + start, b + start);
    fail_msg("the fake and redis-server differ in the %s (line %zu)", what, line);
}

void sf_run(const char *name, void (*body)(sf_world *w))
{
    /* A failed test leaves its world behind (cmocka jumped out of it). */
    world_free(g_cur);
    g_cur = NULL;

    char *tr_fake, *tx_fake, *tr_real, *tx_real;
    g_cur = world_new(0);
    body(g_cur);
    world_finish(g_cur, &tx_fake, &tr_fake);
    world_free(g_cur);
    g_cur = NULL;
    if (getenv("WSIM_SF_PRINT")) printf("== %s (fake)\n%s\n-- trace:\n%s", name, tx_fake, tr_fake);
    if (!g_real_mode) {
        free(tx_fake);
        free(tr_fake);
        return;
    }
    g_cur = world_new(1);
    body(g_cur);
    if (g_cur->skipped) {
        world_free(g_cur);
        g_cur = NULL;
        free(tx_fake);
        free(tr_fake);
        skip();
        return;
    }
    world_finish(g_cur, &tx_real, &tr_real);
    world_free(g_cur);
    g_cur = NULL;
    if (getenv("WSIM_SF_PRINT")) printf("== %s (redis-server)\n%s\n-- trace:\n%s", name, tx_real, tr_real);
    int same = same_up_to_ids(tx_fake, tx_real) && same_up_to_ids(tr_fake, tr_real);
    if (!same) {
        /* Copies on the stack of this frame would leak on fail_msg: keep them in a world. */
        g_cur = wsi_xcalloc(1, sizeof *g_cur);
        own(g_cur, tx_fake);
        own(g_cur, tx_real);
        own(g_cur, tr_fake);
        own(g_cur, tr_real);
        compare("transcript", tx_fake, tx_real);
        compare("trace", tr_fake, tr_real);
    }
    free(tx_fake);
    free(tx_real);
    free(tr_fake);
    free(tr_real);
}

/* The tests SF_TEST registered, with their order keys (the file's __COUNTER__). */
static struct CMUnitTest *g_tests;
static int *g_order;
static size_t g_ntests, g_captests;

void sf_register(const char *name, void (*fn)(void **state), int order)
{
    if (g_ntests == g_captests) {
        g_captests = g_captests ? g_captests * 2 : 64;
        g_tests = realloc(g_tests, g_captests * sizeof *g_tests);
        g_order = realloc(g_order, g_captests * sizeof *g_order);
        if (!g_tests || !g_order) {
            fprintf(stderr, "sim_fixture: out of memory registering %s\n", name);
            exit(1);
        }
    }
    /* Insertion by order: constructors need not run in the file's order. */
    size_t i = g_ntests++;
    for (; i > 0 && g_order[i - 1] > order; i--) {
        g_tests[i] = g_tests[i - 1];
        g_order[i] = g_order[i - 1];
    }
    g_tests[i] = (struct CMUnitTest){.name = name, .test_func = fn};
    g_order[i] = order;
}

int sf_main(int argc, char **argv, const char *group)
{
    g_real_mode = argc > 1 && strcmp(argv[1], "--real") == 0;
    int failed = 1;
    char name[256];
    if (!g_real_mode) {
        failed = _cmocka_run_group_tests(group, g_tests, g_ntests, NULL, NULL);
    } else if ((g_srv = rh_start(&(rh_options){.quiet = 1})) == NULL) {
        fprintf(stderr, "%s --real: cannot start redis-server\n", argv[0]);
    } else {
        snprintf(name, sizeof name, "%s (fake, then redis-server)", group);
        failed = _cmocka_run_group_tests(name, g_tests, g_ntests, NULL, NULL);
        world_free(g_cur);
        g_cur = NULL;
        rh_stop(g_cluster);
        rh_stop(g_srv);
    }
    free(g_tests);
    free(g_order);
    return failed;
}
