/* explore_cmd.c -- `wsim explore`: the crash explorer's command line (docs/wsim-explore.md):
 * the text report, --jobs, --shard, --format json and html (the page: explore_html.c),
 * and --merge of the shards' JSON back into the report one machine prints.
 *
 * The JSON is this file's own format (written and read here only), one object:
 *   {"format": "wsim-explore", "format_version": 1, "wsim_version": "...",
 *    "scenario": path, "title": ..., "scenario_hash": "<FNV-1a 64 of the file, hex>",
 *    "seed": "file" or "<N>", "shard": I, "shards": N, "points": total,
 *    "error": null or the baseline's failure,
 *    "results": [{"point": 1-based, "conn", "round_trip", "command", "commands", "text",
 *                 "verdict", "forbidden": true|false, "detail"}, ...]}
 * with only the shard's points in "results".  Strings escape '"', '\\' and every byte
 * below 0x20 or from 0x7f as \u00XX, which the reader turns back into that byte, so the
 * merge prints the very bytes one machine prints. */
#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "explore_cmd.h"
#include "explore_html.h"
#include "wsi_alloc.h"
#include "wsc.h"
#include "wsi_io.h"

#ifndef WSIM_VERSION
#define WSIM_VERSION "unknown"
#endif
#define FORMAT_VERSION 1

const char *const WSIM_EXPLORE_HELP =
    "usage: wsim explore [--seed N] [--verbose] [--jobs N] [--shard I/N]\n"
    "                    [--format text|json|html] [--replay] FILE\n"
    "       wsim explore --merge [--verbose] JSON...\n"
    "\n"
    "Runs the scenario once on the in-process fake to learn the consumer's round trips,\n"
    "then explores every crash point: before each command the server applies, and after\n"
    "each round trip applied with its replies lost.  It runs the scenario once more and\n"
    "forks at each point; the child crashes there, restarts the consumer and recovers\n"
    "through the configured paths (reclaim subscriptions, list orphan sweeps, delay-queue\n"
    "sweeps; the clock moves past every min-idle and delay), each redelivery handled as\n"
    "the scenario handles its entry.  Each point is then classified: fine, doubled (an\n"
    "entry's effect applied twice), lost, split (an atomic segment applied in part),\n"
    "leaked (a dropped delivery's write applied) or stranded (a reliable list's value\n"
    "left where no recovery will find it).  Prints a table and a summary; --verbose adds\n"
    "each violation's sentence.\n"
    "\n"
    "  --jobs N      worker processes at once (default: the number of cores)\n"
    "  --shard I/N   explore every N-th point from the I-th (1 <= I <= N) only\n"
    "  --format F    text (default), json (the shard's results, for --merge) or html\n"
    "                (one self-contained page: the table coloured by verdict, a summary,\n"
    "                the trace each point links into; not with --shard)\n"
    "  --replay      replay the scenario up to each point instead (slower; same output)\n"
    "  --merge       read the shards' JSON and print the report one machine prints\n"
    "\n"
    "exit status: 0, or 1 when a point breaks an invariant the scenario forbids\n"
    "(`forbid doubled lost ...`), the scenario fails without a crash, or a worker died;\n"
    "with --format json 0 once the results are written; 2 bad usage/file\n"
    "the page: docs/wsim-explore.md\n";

/* A one-line usage error: exit status 2. */
static int bad(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static int bad(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fputs("wsim: ", stderr);
    vfprintf(stderr, fmt, ap);
    fputs("\n", stderr);
    va_end(ap);
    return 2;
}

/* ----- The text report ----------------------------------------------------------------------- */

/* Prints the report of ex (its explored points) and returns the exit status: 1 when a
 * point breaks what the scenario forbids or the baseline failed, else 0. */
static int print_report(const char *path, const char *title, const wsc_exploration *ex,
                        size_t shard, size_t nshards, int verbose)
{
    if (ex->error) {
        printf("%s: %s\n", path, ex->error);
        return 1;
    }
    int process = ex->npoints && ex->points[0].fault;
    if (process) /* a consumer process: its commands, two points each */
        printf("%s: %s\n%zu crash points (%zu commands of %s, each held before it is "
               "applied and, when its reply came, after)\n", path, title, ex->npoints,
               ex->points[0].commands, ex->points[0].conn);
    else printf("%s: %s\n%zu crash points\n", path, title, ex->npoints);
    if (nshards > 1) printf("shard %zu/%zu: %zu of them\n", shard, nshards, ex->explored);
    if (ex->note) printf("note: %s\n", ex->note);
    printf("\n  %-34s %-44s %s\n", "crash point", process ? "command it held" : "command",
           "verdict");
    for (size_t i = 0; i < ex->npoints; i++) {
        const wsc_crash_point *p = &ex->points[i];
        if (!p->explored) continue;
        char where[160], cmd[64];
        if (p->fault)
            snprintf(where, sizeof where, "%s", p->fault);
        else if (p->command)
            snprintf(where, sizeof where, "%s #%llu, before %zu/%zu", p->conn,
                     (unsigned long long)p->round_trip, p->command, p->commands);
        else
            snprintf(where, sizeof where, "%s #%llu, replies lost", p->conn,
                     (unsigned long long)p->round_trip);
        int shown = p->command || p->fault;
        snprintf(cmd, sizeof cmd, "%s", shown ? p->command_text : "(all applied)");
        if (strlen(p->command_text) > 43 && shown) strcpy(cmd + 40, "...");
        printf("  %-34s %-44s %s%s\n", where, cmd, p->verdict, p->forbidden ? " (forbidden)" : "");
        if (verbose && p->detail && *p->detail) printf("      %s\n", p->detail);
    }
    printf("\n%zu fine, %zu doubled, %zu lost, %zu split, %zu leaked, %zu stranded", ex->fine,
           ex->doubled, ex->lost, ex->split, ex->leaked, ex->stranded);
    if (ex->other) printf(", %zu other", ex->other);
    printf("\n");
    for (size_t i = 0; process && i < ex->npoints; i++) {
        const wsc_crash_point *p = &ex->points[i];
        if (!p->explored || !p->verdict || !strcmp(p->verdict, "fine") ||
            !strcmp(p->verdict, "not reached") || !strcmp(p->verdict, "error"))
            continue;
        printf("to replay a point, put its fault line before `start %s`: fault %s %s\n",
               p->conn, p->conn, p->fault);
        break;
    }
    if (ex->forbidden) {
        printf("%zu crash point%s break%s what the scenario forbids\n", ex->forbidden,
               ex->forbidden == 1 ? "" : "s", ex->forbidden == 1 ? "s" : "");
        return 1;
    }
    return 0;
}

/* ----- JSON out ------------------------------------------------------------------------------ */

static void json_str(FILE *f, const char *s)
{
    fputc('"', f);
    for (const unsigned char *p = (const unsigned char *)(s ? s : ""); *p; p++) {
        if (*p == '"' || *p == '\\') fprintf(f, "\\%c", *p);
        else if (*p < 0x20 || *p >= 0x7f) fprintf(f, "\\u%04x", *p);
        else fputc(*p, f);
    }
    fputc('"', f);
}

/* FNV-1a 64 of the file's bytes: which scenario (text, not name) the shards explored. */
static int file_hash(const char *path, char out[17])
{
    FILE *f = fopen(path, "rb");
    if (!f) return -1;
    uint64_t h = 1469598103934665603ull;
    int c;
    while ((c = fgetc(f)) != EOF) {
        h ^= (unsigned char)c;
        h *= 1099511628211ull;
    }
    fclose(f);
    snprintf(out, 17, "%016llx", (unsigned long long)h);
    return 0;
}

static void print_json(const char *path, const char *title, const char *hash, const char *seed,
                       const wsc_exploration *ex, size_t shard, size_t nshards)
{
    FILE *f = stdout;
    fprintf(f, "{\"format\": \"wsim-explore\", \"format_version\": %d, \"wsim_version\": ",
            FORMAT_VERSION);
    json_str(f, WSIM_VERSION);
    fputs(",\n \"scenario\": ", f);
    json_str(f, path);
    fputs(", \"title\": ", f);
    json_str(f, title);
    fputs(", \"scenario_hash\": ", f);
    json_str(f, hash);
    fputs(", \"seed\": ", f);
    json_str(f, seed);
    fprintf(f, ",\n \"shard\": %zu, \"shards\": %zu, \"points\": %zu, \"error\": ", shard,
            nshards, ex->npoints);
    if (ex->error) json_str(f, ex->error);
    else fputs("null", f);
    if (ex->note) {
        fputs(", \"note\": ", f);
        json_str(f, ex->note);
    }
    fputs(",\n \"results\": [", f);
    int first = 1;
    for (size_t i = 0; i < ex->npoints; i++) {
        const wsc_crash_point *p = &ex->points[i];
        if (!p->explored) continue;
        fprintf(f, "%s\n  {\"point\": %zu, \"conn\": ", first ? "" : ",", i + 1);
        first = 0;
        json_str(f, p->conn);
        fprintf(f, ", \"round_trip\": %llu, \"command\": %zu, \"commands\": %zu, \"text\": ",
                (unsigned long long)p->round_trip, p->command, p->commands);
        json_str(f, p->command_text);
        if (p->fault) {
            fputs(", \"fault\": ", f);
            json_str(f, p->fault);
        }
        fputs(", \"verdict\": ", f);
        json_str(f, p->verdict);
        fprintf(f, ", \"forbidden\": %s, \"detail\": ", p->forbidden ? "true" : "false");
        json_str(f, p->detail);
        fputc('}', f);
    }
    fputs("\n]}\n", f);
}

/* ----- JSON in: just enough of a reader for what print_json writes ----------------------- */

typedef enum jtype { J_NULL, J_BOOL, J_NUM, J_STR, J_ARR, J_OBJ } jtype;

typedef struct jval {
    jtype type;
    unsigned long long num; /* J_NUM (non-negative integers only), J_BOOL */
    char *str;              /* J_STR: decoded, NUL-terminated */
    struct jval *items;     /* J_ARR, J_OBJ: the values */
    char **keys;            /* J_OBJ: the keys */
    size_t n;
    size_t cap;             /* room in items (and keys): grown geometrically */
} jval;

typedef struct jreader {
    const char *p, *end;
    const char *err; /* the first error, or NULL */
} jreader;

static void jfree(jval *v)
{
    free(v->str);
    for (size_t i = 0; i < v->n; i++) {
        jfree(&v->items[i]);
        if (v->keys) free(v->keys[i]);
    }
    free(v->items);
    free(v->keys);
}

static void jskip(jreader *r)
{
    while (r->p < r->end && (*r->p == ' ' || *r->p == '\n' || *r->p == '\t' || *r->p == '\r'))
        r->p++;
}

static int hexval(char c)
{
    return c >= '0' && c <= '9' ? c - '0'
           : c >= 'a' && c <= 'f' ? c - 'a' + 10
           : c >= 'A' && c <= 'F' ? c - 'A' + 10 : -1;
}

static char *jstring(jreader *r)
{
    if (r->p >= r->end || *r->p != '"') {
        r->err = "a string expected";
        return NULL;
    }
    r->p++;
    size_t cap = 64, len = 0;
    char *s = wsi_xmalloc(cap);
    while (r->p < r->end && *r->p != '"') {
        char c = *r->p++;
        if (c == '\\') {
            if (r->p >= r->end) break;
            char e = *r->p++;
            if (e == 'u') {
                int v = 0;
                for (int k = 0; k < 4; k++) {
                    int h = r->p < r->end ? hexval(*r->p++) : -1;
                    if (h < 0) {
                        r->err = "a bad \\u escape";
                        free(s);
                        return NULL;
                    }
                    v = v * 16 + h;
                }
                if (v > 0xff) {
                    r->err = "a \\u escape above 00ff";
                    free(s);
                    return NULL;
                }
                c = (char)v;
            } else {
                c = e == 'n' ? '\n' : e == 't' ? '\t' : e == 'r' ? '\r' : e;
            }
        }
        if (len + 2 > cap) {
            cap *= 2;
            s = wsi_xrealloc(s, cap);
        }
        s[len++] = c;
    }
    if (r->p >= r->end) {
        r->err = "an unterminated string";
        free(s);
        return NULL;
    }
    r->p++;
    s[len] = '\0';
    return s;
}

static int jparse(jreader *r, jval *v, int depth)
{
    memset(v, 0, sizeof *v);
    jskip(r);
    if (r->p >= r->end || depth > 8) {
        r->err = "unexpected end";
        return -1;
    }
    char c = *r->p;
    if (c == '"') {
        v->type = J_STR;
        v->str = jstring(r);
        return v->str ? 0 : -1;
    }
    if (c == '{' || c == '[') {
        v->type = c == '{' ? J_OBJ : J_ARR;
        char close = c == '{' ? '}' : ']';
        r->p++;
        jskip(r);
        if (r->p < r->end && *r->p == close) {
            r->p++;
            return 0;
        }
        for (;;) {
            if (v->n == v->cap) {
                v->cap = v->cap ? 2 * v->cap : 8;
                v->items = wsi_xrealloc(v->items, v->cap * sizeof *v->items);
                if (v->type == J_OBJ) v->keys = wsi_xrealloc(v->keys, v->cap * sizeof *v->keys);
            }
            if (v->type == J_OBJ) {
                jskip(r);
                v->keys[v->n] = jstring(r);
                if (!v->keys[v->n]) return -1;
                jskip(r);
                if (r->p >= r->end || *r->p != ':') {
                    free(v->keys[v->n]);
                    r->err = "':' expected";
                    return -1;
                }
                r->p++;
            }
            if (jparse(r, &v->items[v->n], depth + 1)) {
                if (v->keys) free(v->keys[v->n]);
                jfree(&v->items[v->n]);
                return -1;
            }
            v->n++;
            jskip(r);
            if (r->p < r->end && *r->p == ',') {
                r->p++;
                continue;
            }
            if (r->p < r->end && *r->p == close) {
                r->p++;
                return 0;
            }
            r->err = "',' or a closing bracket expected";
            return -1;
        }
    }
    if (c >= '0' && c <= '9') {
        v->type = J_NUM;
        while (r->p < r->end && *r->p >= '0' && *r->p <= '9') {
            unsigned d = (unsigned)(*r->p++ - '0');
            if (v->num > (ULLONG_MAX - d) / 10) {
                r->err = "a number out of range";
                return -1;
            }
            v->num = v->num * 10 + d;
        }
        return 0;
    }
    static const struct { const char *word; jtype type; unsigned long long num; } words[] = {
        {"true", J_BOOL, 1}, {"false", J_BOOL, 0}, {"null", J_NULL, 0}};
    for (size_t k = 0; k < 3; k++) {
        size_t l = strlen(words[k].word);
        if ((size_t)(r->end - r->p) >= l && memcmp(r->p, words[k].word, l) == 0) {
            v->type = words[k].type;
            v->num = words[k].num;
            r->p += l;
            return 0;
        }
    }
    r->err = "a value expected";
    return -1;
}

static const jval *jget(const jval *o, const char *key, jtype type)
{
    if (o->type != J_OBJ) return NULL;
    for (size_t i = 0; i < o->n; i++)
        if (strcmp(o->keys[i], key) == 0) return o->items[i].type == type ? &o->items[i] : NULL;
    return NULL;
}

/* One shard's file, read. */
typedef struct shardfile {
    const char *path;
    jval root;
    const char *version, *scenario, *title, *hash, *seed, *error, *note;
    size_t shard, nshards, points;
    const jval *results;
} shardfile;

/* Reads and checks one shard's top level from its text; 0, or 2 after a one-line error
 * naming path. */
static int read_shard(const char *path, const char *text, size_t len, shardfile *sf)
{
    memset(sf, 0, sizeof *sf);
    sf->path = path;
    jreader r = {text, text + len, NULL};
    int rc = jparse(&r, &sf->root, 0);
    if (!rc) {
        jskip(&r);
        if (r.p != r.end) {
            r.err = "bytes after the result";
            rc = -1;
        }
    }
    if (rc) return bad("%s: not an explore result (%s)", path, r.err ? r.err : "?");
    const jval *fmt = jget(&sf->root, "format", J_STR);
    const jval *fv = jget(&sf->root, "format_version", J_NUM);
    if (!fmt || strcmp(fmt->str, "wsim-explore") != 0 || !fv)
        return bad("%s: not a wsim explore --format json result", path);
    if (fv->num != FORMAT_VERSION)
        return bad("%s: format version %llu, this wsim reads %d", path, fv->num, FORMAT_VERSION);
    const jval *v;
#define STR(field, name)                                                                  \
    if (!(v = jget(&sf->root, name, J_STR))) return bad("%s: no \"%s\" string", path, name); \
    sf->field = v->str;
#define NUM(field, name)                                                                  \
    if (!(v = jget(&sf->root, name, J_NUM))) return bad("%s: no \"%s\" number", path, name); \
    sf->field = (size_t)v->num;
    STR(version, "wsim_version")
    STR(scenario, "scenario")
    STR(title, "title")
    STR(hash, "scenario_hash")
    STR(seed, "seed")
    NUM(shard, "shard")
    NUM(nshards, "shards")
    NUM(points, "points")
#undef STR
#undef NUM
    v = jget(&sf->root, "error", J_STR);
    sf->error = v ? v->str : NULL;
    v = jget(&sf->root, "note", J_STR);
    sf->note = v ? v->str : NULL;
    sf->results = jget(&sf->root, "results", J_ARR);
    if (!sf->results) return bad("%s: no \"results\" array", path);
    if (sf->nshards < 1 || sf->shard < 1 || sf->shard > sf->nshards)
        return bad("%s: shard %zu/%zu is not one of 1..N", path, sf->shard, sf->nshards);
    return 0;
}

int wsim_explore_merge_texts(size_t n, const char *const *names, const char *const *texts,
                             const size_t *lens, int verbose)
{
    if (n == 0) return bad("--merge needs the shards' JSON files");
    shardfile *sf = wsi_xcalloc(n, sizeof *sf);
    int rc = 0;
    wsc_exploration ex = {0};
    for (size_t i = 0; i < n && !rc; i++) rc = read_shard(names[i], texts[i], lens[i], &sf[i]);
    for (size_t i = 1; i < n && !rc; i++) {
        const shardfile *a = &sf[0], *b = &sf[i];
        if (strcmp(a->version, b->version) != 0)
            rc = bad("%s and %s come from different wsim versions (%s, %s)", a->path, b->path,
                     a->version, b->version);
        else if (strcmp(a->scenario, b->scenario) != 0)
            rc = bad("%s and %s explore different scenarios (%s, %s)", a->path, b->path,
                     a->scenario, b->scenario);
        else if (strcmp(a->hash, b->hash) != 0)
            rc = bad("%s and %s explore different texts of %s (hashes %s, %s)", a->path,
                     b->path, a->scenario, a->hash, b->hash);
        else if (strcmp(a->seed, b->seed) != 0)
            rc = bad("%s and %s explore with different seeds (%s, %s)", a->path, b->path,
                     a->seed, b->seed);
        else if (a->nshards != b->nshards || a->points != b->points)
            rc = bad("%s and %s are shards of different splits (%zu and %zu shards of %zu "
                     "and %zu points)",
                     a->path, b->path, a->nshards, b->nshards, a->points, b->points);
    }
    if (!rc) {
        /* n files hold at most n shards: whatever the files say of the split, shards
         * 1..n+1 are all that need looking at (one of them is missing when the split
         * has more than n), so a file claiming 2^64 shards costs nothing */
        size_t ns = sf[0].nshards, look = ns < n + 1 ? ns : n + 1;
        unsigned char *have = wsi_xcalloc(look + 1, 1);
        for (size_t i = 0; i < n && !rc; i++) {
            if (sf[i].shard > look) continue;
            if (have[sf[i].shard]) rc = bad("shard %zu/%zu is given twice", sf[i].shard, ns);
            have[sf[i].shard] = 1;
        }
        for (size_t k = 1; k <= look && !rc; k++)
            if (!have[k]) rc = bad("shard %zu/%zu is missing", k, ns);
        free(have);
    }
    if (!rc && !sf[0].error) {
        /* every point is one result: more points than results is a shard short of them,
         * said before any memory is taken for the points */
        size_t results = 0;
        for (size_t i = 0; i < n; i++) results += sf[i].results->n;
        if (sf[0].points > results)
            rc = bad("the shards hold %zu of %zu points", results, sf[0].points);
    }
    if (!rc && sf[0].error) {
        ex.error = wsi_xstrdup(sf[0].error);
    } else if (!rc) {
        if (sf[0].note) ex.note = wsi_xstrdup(sf[0].note);
        ex.npoints = sf[0].points;
        ex.points = wsi_xcalloc(ex.npoints ? ex.npoints : 1, sizeof *ex.points);
        for (size_t i = 0; i < n && !rc; i++) {
            const jval *res = sf[i].results;
            for (size_t k = 0; k < res->n && !rc; k++) {
                const jval *o = &res->items[k];
                const jval *pt = jget(o, "point", J_NUM), *conn = jget(o, "conn", J_STR),
                           *rt = jget(o, "round_trip", J_NUM), *cmd = jget(o, "command", J_NUM),
                           *cmds = jget(o, "commands", J_NUM), *text = jget(o, "text", J_STR),
                           *verdict = jget(o, "verdict", J_STR),
                           *forb = jget(o, "forbidden", J_BOOL), *det = jget(o, "detail", J_STR);
                if (!pt || !conn || !rt || !cmd || !cmds || !text || !verdict || !forb || !det) {
                    rc = bad("%s: result %zu lacks a field", sf[i].path, k + 1);
                    break;
                }
                size_t ns = sf[i].nshards;
                if (pt->num < 1 || pt->num > ex.npoints || (pt->num - 1) % ns != sf[i].shard - 1) {
                    rc = bad("%s: point %llu is not shard %zu/%zu's", sf[i].path, pt->num,
                             sf[i].shard, ns);
                    break;
                }
                wsc_crash_point *p = &ex.points[pt->num - 1];
                if (p->explored) {
                    rc = bad("%s: point %llu is given twice", sf[i].path, pt->num);
                    break;
                }
                p->explored = 1;
                snprintf(p->conn, sizeof p->conn, "%s", conn->str);
                p->round_trip = rt->num;
                p->command = (size_t)cmd->num;
                p->commands = (size_t)cmds->num;
                p->command_text = wsi_xstrdup(text->str);
                p->detail = wsi_xstrdup(det->str);
                const jval *fault = jget(o, "fault", J_STR); /* a consumer process's point */
                p->fault = fault ? wsi_xstrdup(fault->str) : NULL;
                p->forbidden = (int)forb->num;
                /* the verdict as one of the library's own strings */
                static const char *const known[] = {"fine", "doubled", "lost", "split",
                                                    "leaked", "stranded", "error",
                                                    "not reached"};
                p->verdict = NULL;
                for (size_t q = 0; q < sizeof known / sizeof *known; q++)
                    if (strcmp(verdict->str, known[q]) == 0) p->verdict = known[q];
                if (!p->verdict) {
                    rc = bad("%s: point %llu has an unknown verdict '%s'", sf[i].path, pt->num,
                             verdict->str);
                    break;
                }
                wsc_exploration_count(&ex, p);
            }
        }
        if (!rc && ex.explored != ex.npoints)
            rc = bad("the shards hold %zu of %zu points", ex.explored, ex.npoints);
    }
    if (!rc) rc = print_report(sf[0].scenario, sf[0].title, &ex, 1, 1, verbose);
    wsc_exploration_free(&ex);
    for (size_t i = 0; i < n; i++) jfree(&sf[i].root);
    free(sf);
    return rc;
}

/* wsim explore --merge: the shards' files read whole, then merged. */
static int merge(char **paths, size_t n, int verbose)
{
    char **texts = wsi_xcalloc(n ? n : 1, sizeof *texts);
    size_t *lens = wsi_xcalloc(n ? n : 1, sizeof *lens);
    int rc = 0;
    for (size_t i = 0; i < n && !rc; i++) {
        texts[i] = wsi_read_file(paths[i], WSI_INPUT_MAX, &lens[i]);
        if (!texts[i]) rc = bad("%s: %s", paths[i], wsi_read_error(errno));
    }
    if (!rc)
        rc = wsim_explore_merge_texts(n, (const char *const *)paths, (const char *const *)texts,
                                      lens, verbose);
    for (size_t i = 0; i < n; i++) free(texts[i]);
    free(texts);
    free(lens);
    return rc;
}

/* ----- HTML out (explore_html.c) ----------------------------------------------------------- */

/* Writes the page of ex to standard output, with the trace of one run of sc without a
 * crash (the points link into it); returns the text report's exit status (1 when a point
 * breaks what the scenario forbids or the baseline failed), or 1 when writing failed. */
static int write_html(const wsc_scenario *sc, const char *path, const wsc_options *wo,
                      const wsc_exploration *ex)
{
    wsc_result r;
    int have = wsc_run(sc, wo, &r) == 0;
    int rc = wsim_explore_html(stdout, path, wsc_title(sc), ex, have ? r.trace : NULL);
    if (have) wsc_result_free(&r);
    if (rc != 0 || fflush(stdout) != 0) {
        fprintf(stderr, "wsim: writing the page: %s\n", strerror(errno));
        return 1;
    }
    return ex->error || ex->forbidden ? 1 : 0;
}

/* ----- The command -------------------------------------------------------------------------- */

/* A positive decimal that fits size_t, or 0. */
static size_t positive(const char *s)
{
    if (!s || !*s || *s == '-' || *s == '+') return 0;
    char *end;
    errno = 0;
    unsigned long long v = strtoull(s, &end, 10);
    if (errno || *end || v > (size_t)-1) return 0;
    return (size_t)v;
}

int wsim_cmd_explore(int argc, char **argv)
{
    const char *path = NULL, *format = "text";
    int verbose = 0, replay = 0, do_merge = 0, seed_set = 0;
    uint64_t seed = 0;
    long cores = sysconf(_SC_NPROCESSORS_ONLN);
    size_t jobs = cores > 0 ? (size_t)cores : 1, shard = 0, nshards = 0;
    char **files = wsi_xcalloc((size_t)argc + 1, sizeof *files);
    size_t nfiles = 0;
    int rc = -1;
    for (int i = 0; i < argc && rc < 0; i++) {
        const char *a = argv[i];
        const char *val = i + 1 < argc ? argv[i + 1] : NULL;
        if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
            fputs(WSIM_EXPLORE_HELP, stdout);
            rc = 0;
        } else if (!strcmp(a, "--verbose")) {
            verbose = 1;
        } else if (!strcmp(a, "--replay")) {
            replay = 1;
        } else if (!strcmp(a, "--merge")) {
            do_merge = 1;
        } else if (!strcmp(a, "--backend")) {
            if (!val) rc = bad("--backend needs a value");
            else if (strcmp(val, "fake") != 0) rc = bad("explore runs on the fake only");
            i++;
        } else if (!strcmp(a, "--seed") || !strcmp(a, "--jobs") || !strcmp(a, "--shard") ||
                   !strcmp(a, "--format")) {
            if (!val) {
                rc = bad("%s needs a value", a);
                break;
            }
            i++;
            if (!strcmp(a, "--seed")) {
                char *end;
                errno = 0;
                seed = strtoull(val, &end, 10);
                if (errno || *end || !*val || val[0] == '-')
                    rc = bad("--seed needs a non-negative number, got '%s'", val);
                seed_set = 1;
            } else if (!strcmp(a, "--jobs")) {
                jobs = positive(val);
                if (!jobs) rc = bad("--jobs needs a positive number, got '%s'", val);
            } else if (!strcmp(a, "--format")) {
                if (strcmp(val, "text") && strcmp(val, "json") && strcmp(val, "html"))
                    rc = bad("unknown format '%s' (text, json or html)", val);
                format = val;
            } else {
                const char *slash = strchr(val, '/');
                char first[32];
                size_t l = slash ? (size_t)(slash - val) : 0;
                if (slash && l < sizeof first) {
                    memcpy(first, val, l);
                    first[l] = '\0';
                    shard = positive(first);
                    nshards = positive(slash + 1);
                }
                if (!slash || !shard || !nshards || shard > nshards)
                    rc = bad("--shard needs I/N with 1 <= I <= N, got '%s'", val);
            }
        } else if (a[0] == '-' && a[1]) {
            rc = bad("unknown option '%s' (see wsim explore --help)", a);
        } else {
            files[nfiles++] = argv[i];
        }
    }
    if (rc >= 0) {
        free(files);
        return rc;
    }
    if (do_merge) {
        if (replay || shard || seed_set || strcmp(format, "text") != 0)
            rc = bad("--merge takes only --verbose and the shards' JSON files");
        else rc = merge(files, nfiles, verbose);
        free(files);
        return rc;
    }
    if (nfiles != 1) {
        free(files);
        return bad("give exactly one scenario file");
    }
    path = files[0];
    free(files);
    int json = strcmp(format, "json") == 0, html = strcmp(format, "html") == 0;
    if (html && nshards)
        return bad("--format html needs every point: run it without --shard, or --merge "
                   "the shards' JSON into the text report");
    char *err = NULL;
    wsc_scenario *sc = wsc_parse_file(path, &err);
    if (!sc) {
        if (err) fprintf(stderr, "%s\n", err);
        else fprintf(stderr, "%s:0:0: error: out of memory\n", path);
        free(err);
        return 2;
    }
    char hash[17] = "";
    if (json && file_hash(path, hash)) {
        wsc_free(sc);
        return bad("%s: %s", path, strerror(errno));
    }
    wsc_options wo = {.seed = seed, .seed_set = seed_set};
    wsc_explore_options xo = {.replay = replay, .jobs = (int)(jobs > 4096 ? 4096 : jobs),
                              .shard = shard, .nshards = nshards};
    wsc_exploration ex;
    if (wsc_explore_with(sc, &wo, &xo, &ex)) {
        fprintf(stderr, "wsim: %s: out of memory\n", path);
        wsc_free(sc);
        return 1;
    }
    if (verbose && ex.bounded)
        fprintf(stderr, "wsim: %s: each recovery is bounded to what its crash left "
                        "(docs/wsim-explore.md)\n", path);
    if (verbose && ex.replayed)
        fprintf(stderr, "wsim: %zu of the points were replayed: the snapshot run did "
                        "not reach them\n", ex.replayed);
    if (ex.failure) {
        fprintf(stderr, "wsim: %s: %s\n", path, ex.failure);
        rc = 1;
    } else if (html) {
        rc = write_html(sc, path, &wo, &ex);
    } else if (json) {
        char seedtext[32] = "file";
        if (seed_set) snprintf(seedtext, sizeof seedtext, "%llu", (unsigned long long)seed);
        print_json(path, wsc_title(sc), hash, seedtext, &ex, shard ? shard : 1,
                   nshards ? nshards : 1);
        rc = 0;
    } else {
        rc = print_report(path, wsc_title(sc), &ex, shard, nshards, verbose);
    }
    wsc_exploration_free(&ex);
    wsc_free(sc);
    return rc;
}
