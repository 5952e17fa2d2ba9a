/* explore_html.c -- `wsim explore --format html`: the report as one self-contained page
 * (explore_html.h says what the page promises; docs/wsim-explore.md shows it).
 *
 * Output only: it reads a finished wsc_exploration and a trace text and writes HTML; it
 * explores nothing (explore_cmd.c runs the exploration and the trace). */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "explore_html.h"
#include "wsi_alloc.h"

/* The verdicts a point can have, in the summary's order, with their row colours. */
static const struct {
    const char *verdict;
    const char *cls;     /* the row's class: v-<cls> */
    const char *colour;  /* the row's background */
    const char *meaning; /* the summary's gloss */
} VERDICTS[] = {
    {"fine", "fine", "#e8f5e9", "recovery left nothing wrong"},
    {"doubled", "doubled", "#ffe0b2", "an entry's effect applied twice"},
    {"lost", "lost", "#ffcdd2", "an entry neither handled nor held for a redelivery"},
    {"split", "split", "#e1bee7", "an atomic segment applied in part"},
    {"leaked", "leaked", "#fff9c4", "a dropped or retried delivery's write applied"},
    {"stranded", "stranded", "#bbdefb", "a reliable list's value where no recovery finds it"},
    {"not reached", "not-reached", "#eeeeee", "the run never got there"},
    {"error", "error", "#d7ccc8", "the recovery could not run"},
};
#define NVERDICTS (sizeof VERDICTS / sizeof *VERDICTS)

static size_t verdict_index(const char *v)
{
    for (size_t i = 0; v && i < NVERDICTS; i++)
        if (strcmp(v, VERDICTS[i].verdict) == 0) return i;
    return NVERDICTS - 1; /* unknown: shown as an error */
}

/* Writes s[0..n) escaped for HTML/XML text and attribute values: & < > " ' as entities,
 * a control byte (but tab and newline) or a byte outside well-formed UTF-8 as \xNN. */
static void esc_n(FILE *f, const char *s, size_t n)
{
    if (!f) return;
    const unsigned char *p = (const unsigned char *)s;
    for (size_t i = 0; i < n;) {
        unsigned char c = p[i];
        size_t l = c < 0x80 ? 1 : (c & 0xe0) == 0xc0 ? 2 : (c & 0xf0) == 0xe0 ? 3
                   : (c & 0xf8) == 0xf0 ? 4 : 0;
        if (l > n - i) l = 0;
        for (size_t k = 1; k < l; k++)
            if ((p[i + k] & 0xc0) != 0x80) l = 0;
        if (l == 2 && c < 0xc2) l = 0;
        if (l == 3 && ((c == 0xe0 && p[i + 1] < 0xa0) || (c == 0xed && p[i + 1] >= 0xa0))) l = 0;
        if (l == 4 && (c > 0xf4 || (c == 0xf0 && p[i + 1] < 0x90) || (c == 0xf4 && p[i + 1] >= 0x90)))
            l = 0;
        if (l == 0 || (c < 0x20 && c != '\n' && c != '\t') || c == 0x7f) {
            fprintf(f, "\\x%02x", c);
            i++;
            continue;
        }
        switch (c) {
        case '&': fputs("&amp;", f); break;
        case '<': fputs("&lt;", f); break;
        case '>': fputs("&gt;", f); break;
        case '"': fputs("&quot;", f); break;
        case '\'': fputs("&#39;", f); break;
        default: fwrite(p + i, 1, l, f);
        }
        i += l;
    }
}

static void esc(FILE *f, const char *s)
{
    if (s) esc_n(f, s, strlen(s));
}

/* An anchor's id: "rt-" CONN "-" N, CONN with anything but letters, digits, '.' and '_'
 * made '-' (ids are attribute values and fragment names both). */
static void anchor(char *buf, size_t size, const char *conn, size_t conn_len,
                   unsigned long long rt)
{
    size_t o = 0;
    o += (size_t)snprintf(buf, size, "rt-");
    for (size_t i = 0; i < conn_len && o + 1 < size; i++) {
        char c = conn[i];
        int ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                 c == '.' || c == '_';
        buf[o++] = ok ? c : '-';
    }
    buf[o < size ? o : size - 1] = '\0';
    size_t l = strlen(buf);
    snprintf(buf + l, size - l, "-%llu", rt);
}

/* ----- The ids the trace defines, so that a link never points at nothing ---------------- */

typedef struct idset {
    char **slot;
    size_t cap, n;
} idset;

static uint64_t fnv(const char *s)
{
    uint64_t h = 1469598103934665603ull;
    for (; *s; s++) h = (h ^ (unsigned char)*s) * 1099511628211ull;
    return h;
}

/* Adds id; 1 when it was new, 0 when already there, -1 out of memory. */
static int idset_add(idset *s, const char *id)
{
    if ((s->n + 1) * 2 > s->cap) {
        size_t cap = s->cap ? s->cap * 2 : 256;
        char **slot = wsi_calloc(cap, sizeof *slot);
        if (!slot) return -1;
        for (size_t i = 0; i < s->cap; i++) {
            if (!s->slot[i]) continue;
            size_t k = fnv(s->slot[i]) & (cap - 1);
            while (slot[k]) k = (k + 1) & (cap - 1);
            slot[k] = s->slot[i];
        }
        free(s->slot);
        s->slot = slot;
        s->cap = cap;
    }
    size_t k = fnv(id) & (s->cap - 1);
    for (; s->slot[k]; k = (k + 1) & (s->cap - 1))
        if (strcmp(s->slot[k], id) == 0) return 0;
    if (!(s->slot[k] = wsi_strdup(id))) return -1;
    s->n++;
    return 1;
}

static int idset_has(const idset *s, const char *id)
{
    if (!s->cap) return 0;
    for (size_t k = fnv(id) & (s->cap - 1); s->slot[k]; k = (k + 1) & (s->cap - 1))
        if (strcmp(s->slot[k], id) == 0) return 1;
    return 0;
}

static void idset_free(idset *s)
{
    for (size_t i = 0; i < s->cap; i++) free(s->slot[i]);
    free(s->slot);
}

/* Parses "#N CONN (" at the start of a trace line: the round trip's number and its
 * connection (pointer into line, and length).  0, or -1 when the line is not a round
 * trip's heading. */
static int rt_heading(const char *line, size_t len, unsigned long long *n, const char **conn,
                      size_t *conn_len)
{
    if (len < 4 || line[0] != '#' || line[1] < '0' || line[1] > '9') return -1;
    size_t i = 1;
    *n = 0;
    while (i < len && line[i] >= '0' && line[i] <= '9') *n = *n * 10 + (unsigned)(line[i++] - '0');
    if (i >= len || line[i] != ' ') return -1;
    size_t c = ++i;
    while (i < len && line[i] != ' ') i++;
    if (i == c || i + 1 >= len || line[i + 1] != '(') return -1;
    *conn = line + c;
    *conn_len = i - c;
    return 0;
}

/* fputs, or nothing when f is NULL. */
static void put(const char *s, FILE *f)
{
    if (f) fputs(s, f);
}

/* Writes the trace, one anchor per round trip and per command, and records the ids in
 * ids; with f NULL it only records them (the table, written first, links to them). */
static int write_trace(FILE *f, const char *trace, idset *ids)
{
    put("<pre class=\"trace\">", f);
    char id[160], cid[192];
    int in_rt = 0;
    size_t k = 0;
    for (const char *p = trace; *p;) {
        const char *e = strchr(p, '\n');
        size_t len = e ? (size_t)(e - p) : strlen(p);
        unsigned long long n;
        const char *conn;
        size_t conn_len;
        if (rt_heading(p, len, &n, &conn, &conn_len) == 0) {
            anchor(id, sizeof id, conn, conn_len, n);
            int fresh = idset_add(ids, id);
            if (fresh < 0) return -1;
            in_rt = fresh; /* a repeated heading gets no anchors: ids stay unique */
            k = 0;
            if (in_rt) {
                put("<span class=\"rt\" id=\"", f);
                esc(f, id);
                put("\">", f);
            }
            esc_n(f, p, len);
            if (in_rt) put("</span>", f);
        } else if (in_rt && len >= 2 && p[0] == ' ' && p[1] == ' ') {
            snprintf(cid, sizeof cid, "%s.%zu", id, ++k);
            if (idset_add(ids, cid) < 0) return -1;
            put("<span class=\"cmd\" id=\"", f);
            esc(f, cid);
            put("\">", f);
            esc_n(f, p, len);
            put("</span>", f);
        } else {
            in_rt = 0;
            esc_n(f, p, len);
        }
        put("\n", f);
        p = e ? e + 1 : p + len;
    }
    put("</pre>\n", f);
    return 0;
}

/* The page's style: inline, so the page needs nothing else. */
static void write_style(FILE *f)
{
    fputs("<style>\n"
          "body { font-family: sans-serif; margin: 1.5em; color: #212121; }\n"
          "h1 { font-size: 1.4em; } h2 { font-size: 1.15em; margin-top: 1.6em; }\n"
          "code, pre { font-family: monospace; }\n"
          "table { border-collapse: collapse; }\n"
          "th, td { border: 1px solid #b0bec5; padding: 2px 8px; text-align: left; "
          "vertical-align: top; }\n"
          "th { background: #eceff1; }\n"
          "td.n { text-align: right; }\n"
          "td.where { white-space: nowrap; }\n"
          "td code { word-break: break-all; }\n"
          "tr.forbidden td.verdict { font-weight: bold; border-left: 4px solid #b71c1c; }\n"
          "details summary { cursor: pointer; }\n"
          "pre.trace { background: #fafafa; border: 1px solid #cfd8dc; padding: 0.8em; "
          "overflow-x: auto; }\n"
          "pre.trace span.rt { font-weight: bold; }\n"
          "pre.trace span:target { background: #fff176; }\n"
          "p.bad { color: #b71c1c; font-weight: bold; }\n",
          f);
    for (size_t i = 0; i < NVERDICTS; i++)
        fprintf(f, "tr.v-%s, td.v-%s { background: %s; }\n", VERDICTS[i].cls, VERDICTS[i].cls,
                VERDICTS[i].colour);
    fputs("</style>\n", f);
}

int wsim_explore_html(FILE *f, const char *path, const char *title, const wsc_exploration *ex,
                      const char *trace)
{
    idset ids = {0};
    fputs("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\"/>\n<title>wsim "
          "explore: ", f);
    esc(f, path);
    fputs("</title>\n", f);
    write_style(f);
    fputs("</head>\n<body>\n<h1>wsim explore: ", f);
    esc(f, title);
    fputs("</h1>\n<p>The scenario <code>", f);
    esc(f, path);
    fputs("</code>, its consumer crashed at every point where the server may have applied "
          "part of what it was sent, then recovered and checked (docs/wsim-explore.md).</p>\n",
          f);

    /* the summary: the text report's counts, one row per verdict */
    fputs("<h2 id=\"summary\">Summary</h2>\n", f);
    if (ex->error) {
        /* the explorer's own words ("the scenario fails without a crash: ..."), with
         * the report's lines and trace */
        fputs("<p class=\"bad\">No crash point was explored.</p>\n<pre class=\"error\">", f);
        esc(f, ex->error);
        fputs("</pre>\n", f);
    }
    size_t count[NVERDICTS] = {0};
    for (size_t i = 0; i < ex->npoints; i++)
        if (ex->points[i].explored) count[verdict_index(ex->points[i].verdict)]++;
    fprintf(f, "<p>%zu crash point%s.</p>\n<table class=\"summary\">\n<tr><th>verdict</th>"
               "<th>points</th><th>meaning</th></tr>\n",
            ex->npoints, ex->npoints == 1 ? "" : "s");
    for (size_t v = 0; v < NVERDICTS; v++) {
        if (v >= 6 && !count[v]) continue; /* the six invariants always, the rest if any */
        fprintf(f, "<tr class=\"v-%s\"><td>%s</td><td class=\"n\">%zu</td><td>%s</td></tr>\n",
                VERDICTS[v].cls, VERDICTS[v].verdict, count[v], VERDICTS[v].meaning);
    }
    fputs("</table>\n", f);
    if (ex->forbidden)
        fprintf(f, "<p class=\"bad\">%zu crash point%s break%s what the scenario forbids.</p>\n",
                ex->forbidden, ex->forbidden == 1 ? "" : "s", ex->forbidden == 1 ? "s" : "");
    else if (!ex->error)
        fputs("<p>No crash point breaks what the scenario forbids.</p>\n", f);

    /* the trace is written after the table, but the links need its ids first */
    if (trace && *trace && write_trace(NULL, trace, &ids) != 0) {
        idset_free(&ids);
        errno = ENOMEM;
        return -1;
    }

    fputs("<h2 id=\"points\">Crash points</h2>\n<table class=\"points\">\n<tr><th>#</th>"
          "<th>crash point</th><th>command</th><th>verdict</th><th>what happened</th></tr>\n",
          f);
    for (size_t i = 0; i < ex->npoints; i++) {
        const wsc_crash_point *p = &ex->points[i];
        if (!p->explored) continue;
        size_t v = verdict_index(p->verdict);
        char id[160], target[192];
        anchor(id, sizeof id, p->conn, strlen(p->conn), (unsigned long long)p->round_trip);
        if (p->command) snprintf(target, sizeof target, "%s.%zu", id, p->command);
        else snprintf(target, sizeof target, "%s", id);
        fprintf(f, "<tr class=\"point v-%s%s\" id=\"point-%zu\"><td class=\"n\">%zu</td>"
                   "<td class=\"where\">",
                VERDICTS[v].cls, p->forbidden ? " forbidden" : "", i + 1, i + 1);
        int linked = idset_has(&ids, target);
        if (linked) {
            fputs("<a href=\"#", f);
            esc(f, target);
            fputs("\">", f);
        }
        if (p->fault) { /* a consumer process's point: the fault that replays it */
            esc(f, p->fault);
        } else {
            esc(f, p->conn);
            fprintf(f, " #%llu, ", (unsigned long long)p->round_trip);
            if (p->command) fprintf(f, "before %zu/%zu", p->command, p->commands);
            else fputs("replies lost", f);
        }
        if (linked) fputs("</a>", f);
        fputs("</td><td><code>", f);
        if (p->command || p->fault) esc(f, p->command_text);
        else fputs("(all applied)", f);
        fputs("</code></td><td class=\"verdict\">", f);
        esc(f, p->verdict);
        if (p->forbidden) fputs(" (forbidden)", f);
        fputs("</td><td>", f);
        if (p->detail && *p->detail) {
            fputs("<details><summary>why</summary>", f);
            /* one sentence per violation, "; " between them */
            const char *s = p->detail;
            for (const char *q; (q = strstr(s, "; ")); s = q + 2) {
                esc_n(f, s, (size_t)(q - s));
                fputs("<br/>", f);
            }
            esc(f, s);
            fputs("</details>", f);
        }
        fputs("</td></tr>\n", f);
    }
    fputs("</table>\n", f);

    fputs("<h2 id=\"trace\">The trace</h2>\n<p>The scenario's run without a crash (what "
          "<code>wsim trace</code> prints): every round trip with its cause and every "
          "command with its reply. A crash point's link leads to the command it comes "
          "before, or to the round trip whose replies it loses.</p>\n",
          f);
    int rc = 0;
    if (trace && *trace) {
        idset again = {0};
        rc = write_trace(f, trace, &again);
        idset_free(&again);
    } else {
        fputs("<p>(no trace)</p>\n", f);
    }
    fputs("</body>\n</html>\n", f);
    idset_free(&ids);
    if (rc) {
        errno = ENOMEM;
        return -1;
    }
    return ferror(f) ? -1 : 0;
}
