/* config.c -- CONFIG GET/SET/RESETSTAT/REWRITE over every parameter redis-server 7.0.15
 * has (config_defaults.inc).  Values are checked by type and stored as Redis shows them
 * back (memory sizes in bytes, words in lower case); the ones the server acts on take
 * effect at once: maxclients, proto-max-bulk-len, requirepass, client-query-buffer-limit
 * and client-output-buffer-limit; the fake follows the encoding thresholds, maxmemory,
 * maxmemory-policy and the LFU parameters (fr_server_set_param).  The rest are kept and
 * echoed, as nothing uses them. */
#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#include "frs.h"

typedef enum ptype {
    FRS_P_STRING,   /* any text */
    FRS_P_BOOL,     /* yes or no */
    FRS_P_INT,      /* an integer */
    FRS_P_MEMORY,   /* a byte count with an optional unit (1mb, 512kb, 100) */
    FRS_P_ENUM,     /* one of the words in allowed */
    FRS_P_SAVE,     /* "" or pairs of integers */
    FRS_P_OUTLIMIT, /* client-output-buffer-limit's class/hard/soft/seconds groups */
    FRS_P_PERCENTILES, /* numbers in [0, 100] (latency-tracking-info-percentiles) */
} ptype;

#define FRS_P_IMMUTABLE 1 /* CONFIG SET refuses it */
#define FRS_P_HIDDEN 2    /* Redis's HIDDEN_CONFIG: CONFIG GET shows it by its exact name
                             only, never for a pattern */

/* A parameter's definition. */
typedef struct pdef {
    const char *name;    /* as CONFIG GET shows it */
    const char *def;     /* Redis 7.0.15's default */
    ptype type;          /* what SET accepts */
    int flags;           /* FRS_P_IMMUTABLE */
    const char *allowed; /* FRS_P_ENUM: "a, b, c" */
} pdef;

static const pdef defs[] = {
#include "config_defaults.inc"
};
#define NDEFS (sizeof(defs) / sizeof(defs[0]))

struct frs_param {
    const pdef *def; /* its definition */
    char *value;     /* its current value */
};

/* The index of a parameter by name (case-insensitive), or -1. */
static int find_param(const char *name, size_t n)
{
    size_t lo = 0, hi = NDEFS;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        int cmp = strncasecmp(defs[mid].name, name, n);
        if (cmp == 0 && defs[mid].name[n] != '\0') cmp = 1;
        if (cmp < 0) lo = mid + 1;
        else if (cmp > 0) hi = mid;
        else return (int)mid;
    }
    return -1;
}

/* Replaces a parameter's stored value with a copy of v. */
static void set_value(frs_param *p, const char *v)
{
    char *copy = strdup(v);
    if (!copy) frs_oom_abort(__func__);
    free(p->value);
    p->value = copy;
}

unsigned long long frs_memory_unit(const char *unit)
{
    static const struct {
        const char *name;
        unsigned long long mul;
    } units[] = {{"", 1},
                 {"b", 1},
                 {"k", 1000},
                 {"kb", 1024},
                 {"m", 1000 * 1000},
                 {"mb", 1024 * 1024},
                 {"g", 1000ull * 1000 * 1000},
                 {"gb", 1024ull * 1024 * 1024}};
    for (size_t i = 0; i < sizeof(units) / sizeof(units[0]); i++)
        if (!strcasecmp(unit, units[i].name)) return units[i].mul;
    return 0;
}

/* Redis's memtoull: digits, then an optional unit b k kb m mb g gb (any case).  1 if
 * it parses. */
static int parse_memory(const char *s, unsigned long long *out)
{
    const char *u = s;
    while (*u >= '0' && *u <= '9') u++;
    if (u == s) return 0;
    unsigned long long mul = frs_memory_unit(u);
    if (!mul) return 0;
    char digits[32];
    size_t n = (size_t)(u - s);
    if (n >= sizeof(digits)) return 0;
    memcpy(digits, s, n);
    digits[n] = '\0';
    unsigned long long v = strtoull(digits, NULL, 10);
    if (mul > 1 && v > ULLONG_MAX / mul) return 0;
    *out = v * mul;
    return 1;
}

/* Parses client-output-buffer-limit's text into the three classes' limits (normal,
 * replica, pubsub) starting from cur.  NULL, or the error's wording. */
static const char *parse_outlimits(const char *text, frs_outlimit lim[3])
{
    char *copy = strdup(text);
    if (!copy) frs_oom_abort(__func__);
    char *words[64];
    int n = 0;
    for (char *tok = strtok(copy, " "); tok && n < 64; tok = strtok(NULL, " "))
        words[n++] = tok;
    const char *err = NULL;
    if (n % 4 != 0 || n == 0) err = "Wrong number of arguments in buffer limit configuration.";
    for (int i = 0; !err && i < n; i += 4) {
        int cls;
        if (!strcasecmp(words[i], "normal")) cls = 0;
        else if (!strcasecmp(words[i], "slave") || !strcasecmp(words[i], "replica")) cls = 1;
        else if (!strcasecmp(words[i], "pubsub")) cls = 2;
        else {
            err = "Invalid client class specified in buffer limit configuration.";
            break;
        }
        unsigned long long hard, soft;
        long long secs;
        if (!parse_memory(words[i + 1], &hard) || !parse_memory(words[i + 2], &soft) ||
            !frs_string2ll(words[i + 3], strlen(words[i + 3]), &secs) || secs < 0) {
            err = "Error in hard, soft or soft_seconds setting in buffer limit configuration.";
            break;
        }
        lim[cls] = (frs_outlimit){hard, soft, secs};
    }
    free(copy);
    return err;
}

/* The ranges redis-server 7.0.15 enforces on the numeric parameters the fake follows
 * (createSizeTConfig, createIntConfig ...: anything else of type INT or MEMORY is taken
 * as it parses). */
static const struct {
    const char *name;
    long long min, max;
} ranges[] = {
    {"hash-max-listpack-entries", 0, LLONG_MAX}, {"hash-max-ziplist-entries", 0, LLONG_MAX},
    {"hash-max-listpack-value", 0, LLONG_MAX},   {"hash-max-ziplist-value", 0, LLONG_MAX},
    {"zset-max-listpack-entries", 0, LLONG_MAX}, {"zset-max-ziplist-entries", 0, LLONG_MAX},
    {"zset-max-listpack-value", 0, LLONG_MAX},   {"zset-max-ziplist-value", 0, LLONG_MAX},
    {"set-max-intset-entries", 0, LLONG_MAX},    {"stream-node-max-entries", 0, LLONG_MAX},
    {"stream-node-max-bytes", 0, LLONG_MAX},     {"lfu-log-factor", 0, INT_MAX},
    {"lfu-decay-time", 0, INT_MAX},              {"list-max-listpack-size", INT_MIN, INT_MAX},
    {"list-max-ziplist-size", INT_MIN, INT_MAX}, {"port", 0, 65535},
};

/* Redis's error for a number outside name's range; NULL when it is inside (or name has
 * none here).  v_neg: the number is negative (v holds it as a long long); else vu. */
static const char *check_range(const char *name, int v_neg, long long v, unsigned long long vu)
{
    static char msg[128];
    for (size_t i = 0; i < sizeof(ranges) / sizeof(ranges[0]); i++) {
        if (strcmp(ranges[i].name, name) != 0) continue;
        int inside = v_neg ? v >= ranges[i].min
                           : vu <= (unsigned long long)ranges[i].max &&
                                 (ranges[i].min <= 0 || vu >= (unsigned long long)ranges[i].min);
        if (inside) return NULL;
        snprintf(msg, sizeof(msg), "argument must be between %lld and %lld inclusive",
                 ranges[i].min, ranges[i].max);
        return msg;
    }
    return NULL;
}

/* Checks value for p and writes the form CONFIG GET will show into norm (cap bytes).
 * NULL, or the reason. */
/* Redis's trimDoubleString: "%f" text without trailing zeros (and then without a '.'). */
static void trim_double(char *buf)
{
    if (!strchr(buf, '.')) return;
    size_t n = strlen(buf);
    while (n && buf[n - 1] == '0') n--;
    if (n && buf[n - 1] == '.') n--;
    buf[n] = '\0';
}

int frs_parse_percentiles(const char *value, double *out, int max, char *norm, size_t cap,
                          const char **err)
{
    int n = 0;
    size_t len = 0;
    if (norm && cap) norm[0] = '\0';
    for (const char *p = value; *p;) {
        while (*p == ' ') p++;
        if (!*p) break;
        const char *end = strchr(p, ' ');
        if (!end) end = p + strlen(p);
        char word[64];
        size_t wl = (size_t)(end - p);
        char *stop = NULL;
        double v = 0;
        if (wl < sizeof(word)) {
            memcpy(word, p, wl);
            word[wl] = '\0';
            if (!isspace((unsigned char)word[0])) v = strtod(word, &stop);
        }
        if (!stop || *stop || stop == word || v != v) {
            *err = "Invalid latency-tracking-info-percentiles parameters";
            return -1;
        }
        if (v > 100.0 || v < 0.0) {
            *err = "latency-tracking-info-percentiles parameters should sit between [0.0,100.0]";
            return -1;
        }
        if (n < max) out[n] = v;
        n++;
        if (norm) {
            char f[128];
            snprintf(f, sizeof(f), "%f", v);
            trim_double(f);
            int w = snprintf(norm + len, cap > len ? cap - len : 0, "%s%s", len ? " " : "", f);
            if (w > 0) len += (size_t)w;
        }
        p = end;
    }
    return n;
}

/* Redis's validateProcTitleTemplate: the template expands (sdstemplate: "{{" a brace,
 * "{name}" a known variable, no '{' left open) to something not empty with an empty title.
 * The variables that expand to nothing here: title and server-mode (no cluster, no
 * sentinel); the others (listen-addr, config-file, port, tls-port, unixsocket) to text. */
static int proc_title_valid(const char *t)
{
    static const char *const vars[] = {"title", "server-mode", "listen-addr", "config-file",
                                       "port", "tls-port", "unixsocket"};
    int nonempty = 0;
    while (*t) {
        const char *open = strchr(t, '{');
        if (!open) return 1;
        if (open > t) nonempty = 1;
        if (!open[1]) return 0;
        if (open[1] == '{') {
            nonempty = 1;
            t = open + 2;
            continue;
        }
        const char *close = strchr(open + 1, '}');
        if (!close) return 0;
        size_t n = (size_t)(close - open - 1);
        size_t v = 0;
        while (v < sizeof(vars) / sizeof(vars[0]) &&
               (strlen(vars[v]) != n || strncmp(vars[v], open + 1, n)))
            v++;
        if (v == sizeof(vars) / sizeof(vars[0])) return 0;
        if (v >= 2) nonempty = 1;
        t = close + 1;
    }
    return nonempty;
}

static const char *check_value(frs_server *srv, const pdef *d, const char *value, char *norm,
                               size_t cap)
{
    if (d->flags & FRS_P_IMMUTABLE) return "can't set immutable config";
    switch (d->type) {
    case FRS_P_PERCENTILES: {
        const char *err;
        double v[1];
        if (frs_parse_percentiles(value, v, 0, norm, cap, &err) < 0) return err;
        return NULL;
    }
    case FRS_P_BOOL:
        if (strcasecmp(value, "yes") && strcasecmp(value, "no"))
            return "argument must be 'yes' or 'no'";
        snprintf(norm, cap, "%s", strcasecmp(value, "yes") ? "no" : "yes");
        return NULL;
    case FRS_P_INT: {
        long long v;
        if (!frs_string2ll(value, strlen(value), &v))
            return "argument couldn't be parsed into an integer";
        if (!strcmp(d->name, "maxclients") && (v < 1 || v > 4294967295LL))
            return "argument must be between 1 and 4294967295 inclusive";
        const char *range = check_range(d->name, v < 0, v, (unsigned long long)v);
        if (range) return range;
        snprintf(norm, cap, "%lld", v);
        return NULL;
    }
    case FRS_P_MEMORY: {
        unsigned long long v;
        int percent = !strcmp(d->name, "maxmemory-clients"); /* Redis's PERCENT_CONFIG */
        long long pc;
        size_t vl = strlen(value);
        if (percent && !parse_memory(value, &v) && vl > 1 && value[vl - 1] == '%' &&
            frs_string2ll(value, vl - 1, &pc) && pc >= 0) {
            /* Redis keeps it as -pc, bounded below by -100 */
            if (pc > 100) return "percentage argument must be less or equal to 100";
            snprintf(norm, cap, "%lld%%", pc);
            return NULL;
        }
        if (!parse_memory(value, &v))
            return percent ? "argument must be a memory or percent value"
                           : "argument must be a memory value";
        if (!strcmp(d->name, "proto-max-bulk-len") && (v < 1048576 || v > LLONG_MAX))
            return "argument must be between 1048576 and 9223372036854775807 inclusive";
        const char *range = check_range(d->name, 0, 0, v);
        if (range) return range;
        snprintf(norm, cap, "%llu", v);
        return NULL;
    }
    case FRS_P_ENUM: {
        const char *p = d->allowed;
        size_t vl = strlen(value);
        while (*p) {
            size_t k = strcspn(p, ",");
            if (k == vl && strncasecmp(p, value, k) == 0) {
                snprintf(norm, cap, "%.*s", (int)k, p);
                return NULL;
            }
            p += k;
            while (*p == ',' || *p == ' ') p++;
        }
        static char msg[512];
        snprintf(msg, sizeof(msg), "argument(s) must be one of the following: %s",
                 d->allowed);
        return msg;
    }
    case FRS_P_SAVE: {
        int n = 0;
        const char *p = value;
        while (*p) {
            while (*p == ' ') p++;
            if (!*p) break;
            size_t k = strcspn(p, " ");
            long long v;
            if (!frs_string2ll(p, k, &v) || v < 0) return "Invalid save parameters";
            n++;
            p += k;
        }
        if (n % 2) return "Invalid save parameters";
        snprintf(norm, cap, "%s", value);
        return NULL;
    }
    case FRS_P_OUTLIMIT: {
        frs_outlimit lim[3] = {srv->limit_normal, {268435456, 67108864, 60}, srv->limit_pubsub};
        const char *cur = frs_config_get(srv, "client-output-buffer-limit");
        if (cur) parse_outlimits(cur, lim);
        const char *err = parse_outlimits(value, lim);
        if (err) return err;
        snprintf(norm, cap, "normal %llu %llu %lld slave %llu %llu %lld pubsub %llu %llu %lld",
                 lim[0].hard, lim[0].soft, lim[0].soft_secs, lim[1].hard, lim[1].soft,
                 lim[1].soft_secs, lim[2].hard, lim[2].soft, lim[2].soft_secs);
        return NULL;
    }
    default:
        if (!strcmp(d->name, "proc-title-template")) {
            if (!proc_title_valid(value))
                return "template format is invalid or contains unknown variables";
            snprintf(norm, cap, "%s", value);
            return NULL;
        }
        if (!strcmp(d->name, "dir")) {
            /* Redis chdir()s there (apply): a place it cannot enter is refused with
             * chdir's own error */
            struct stat st;
            if (stat(value, &st) < 0) return strerror(errno);
            if (!S_ISDIR(st.st_mode)) return strerror(ENOTDIR);
            if (access(value, X_OK) < 0) return strerror(errno);
            snprintf(norm, cap, "%s", value);
            return NULL;
        }
        if (!strcmp(d->name, "notify-keyspace-events")) {
            /* the classes, shown back as Redis's keyspaceEventsFlagsToString puts them */
            int flags = fr_notify_flags_parse(value);
            if (flags < 0) return "Invalid event class character. Use 'Ag$lshzxeKEtmdn'.";
            fr_notify_flags_string((unsigned)flags, norm, cap);
            return NULL;
        }
        snprintf(norm, cap, "%s", value);
        return NULL;
    }
}

/* Makes the server act on a parameter that changed, and the fake on those it follows
 * (encoding thresholds, maxmemory and its policy, the LFU parameters: fr_server_set_param
 * ignores the others). */
static void apply(frs_server *srv, const char *name, const char *value, const char *raw)
{
    /* 7.0's *-ziplist-* names are aliases of the *-listpack-* ones: one value, two names */
    static const char *const aliases[][2] = {
        {"hash-max-listpack-entries", "hash-max-ziplist-entries"},
        {"hash-max-listpack-value", "hash-max-ziplist-value"},
        {"zset-max-listpack-entries", "zset-max-ziplist-entries"},
        {"zset-max-listpack-value", "zset-max-ziplist-value"},
        {"list-max-listpack-size", "list-max-ziplist-size"},
    };
    for (size_t i = 0; i < sizeof(aliases) / sizeof(aliases[0]); i++) {
        for (int side = 0; side < 2; side++) {
            if (strcmp(name, aliases[i][side]) != 0) continue;
            const char *other = aliases[i][!side];
            int k = find_param(other, strlen(other));
            if (k >= 0) set_value(&srv->params[k], value);
        }
    }
    /* notify-keyspace-events' shown text can lose a class (n next to A): the fake gets
     * the letters as given */
    if (srv->fake)
        fr_server_set_param(srv->fake, name,
                            strcmp(name, "notify-keyspace-events") ? value : raw);
    if (srv->fake && !strcmp(name, "latency-tracking"))
        fr_stats_set_latency_tracking(srv->fake, !strcmp(value, "yes"));
    if (!strcmp(name, "dir")) {
        /* the working directory is the files' place, as Redis's; CONFIG GET shows it
         * whole */
        char cwd[4096];
        if (chdir(value) == 0 && getcwd(cwd, sizeof(cwd))) {
            int k = find_param("dir", 3);
            set_value(&srv->params[k], cwd);
        }
    } else if (!strcmp(name, "save")) {
        frs_persist_config_changed(srv);
    } else if (!strcmp(name, "appendonly")) {
        frs_aof_config_changed(srv);
    } else if (!strcmp(name, "maxclients")) {
        srv->maxclients = strtoll(value, NULL, 10);
    } else if (!strcmp(name, "proto-max-bulk-len")) {
        srv->max_bulk_len = strtoll(value, NULL, 10);
        frs_apply_limits(srv);
    } else if (!strcmp(name, "requirepass")) {
        free(srv->requirepass);
        srv->requirepass = value[0] ? strdup(value) : NULL;
        if (srv->fake)
            fr_server_set_requirepass(srv->fake, value, strlen(value)); /* binary: below */
        frs_apply_limits(srv);
    } else if (!strcmp(name, "maxmemory")) {
        srv->maxmemory = strtoull(value, NULL, 10);
        /* updateMaxmemory: a lower limit evicts at once (the events published now) */
        if (srv->fake && fr_server_evict(srv->fake)) frs_drain_fake_events(srv, NULL);
    } else if (!strcmp(name, "client-query-buffer-limit")) {
        srv->querybuf_limit = strtoull(value, NULL, 10);
    } else if (!strcmp(name, "client-output-buffer-limit")) {
        frs_outlimit lim[3];
        if (!parse_outlimits(value, lim)) {
            srv->limit_normal = lim[0];
            srv->limit_pubsub = lim[2];
        }
    }
}

const char *frs_config_get(frs_server *srv, const char *name)
{
    int i = find_param(name, strlen(name));
    return i < 0 || !srv->params ? NULL : srv->params[i].value;
}

int frs_config_init(frs_server *srv)
{
    srv->nparams = NDEFS;
    srv->params = calloc(NDEFS, sizeof(*srv->params));
    if (!srv->params) return -1;
    for (size_t i = 0; i < NDEFS; i++) {
        srv->params[i].def = &defs[i];
        set_value(&srv->params[i], defs[i].def);
    }
    /* What the command line decided. */
    char buf[64];
    snprintf(buf, sizeof(buf), "%d", srv->tcp_port);
    set_value(&srv->params[find_param("port", 4)], buf);
    set_value(&srv->params[find_param("unixsocket", 10)], srv->opt.unixsocket ? srv->opt.unixsocket : "");
    char bind[512] = "";
    for (int i = 0; i < srv->opt.nbind; i++) {
        if (i) strcat(bind, " ");
        strncat(bind, srv->opt.bind[i], sizeof(bind) - strlen(bind) - 2);
    }
    set_value(&srv->params[find_param("bind", 4)], srv->opt.nbind ? bind : "127.0.0.1");
    set_value(&srv->params[find_param("cluster-enabled", 15)], srv->opt.cluster ? "yes" : "no");
    set_value(&srv->params[find_param("save", 4)], "");
    char cwd[4096];
    if (getcwd(cwd, sizeof(cwd))) set_value(&srv->params[find_param("dir", 3)], cwd);
    snprintf(buf, sizeof(buf), "%lld", srv->maxclients);
    set_value(&srv->params[find_param("maxclients", 10)], buf);
    if (srv->requirepass) set_value(&srv->params[find_param("requirepass", 11)], srv->requirepass);
    /* client-output-buffer-limit as the server starts it (docs/server.md) */
    char lim[256];
    snprintf(lim, sizeof(lim), "normal %llu %llu %lld slave 268435456 67108864 60 pubsub %llu %llu %lld",
             srv->limit_normal.hard, srv->limit_normal.soft, srv->limit_normal.soft_secs,
             srv->limit_pubsub.hard, srv->limit_pubsub.soft, srv->limit_pubsub.soft_secs);
    set_value(&srv->params[find_param("client-output-buffer-limit", 26)], lim);
    /* --NAME VALUE options, as redis-server takes them */
    for (int i = 0; i + 1 < srv->opt.nconfig; i += 2) {
        const char *name = srv->opt.config[i];
        int k = find_param(name, strlen(name));
        if (k < 0) {
            fprintf(stderr, "fakeredis-server: unknown option --%s\n", name);
            return -1;
        }
        char norm[1024];
        /* at start even immutable parameters may be given */
        pdef d = defs[k];
        d.flags &= ~FRS_P_IMMUTABLE;
        const char *e = check_value(srv, &d, srv->opt.config[i + 1], norm, sizeof(norm));
        if (e) {
            fprintf(stderr, "fakeredis-server: --%s %s: %s\n", name, srv->opt.config[i + 1], e);
            return -1;
        }
        set_value(&srv->params[k], norm);
        apply(srv, defs[k].name, norm, srv->opt.config[i + 1]);
    }
    return 0;
}

void frs_config_free(frs_server *srv)
{
    for (size_t i = 0; i < srv->nparams; i++) free(srv->params[i].value);
    free(srv->params);
    srv->params = NULL;
    srv->nparams = 0;
}

/* ----- Glob matching (Redis's stringmatchlen, case-insensitive for CONFIG GET) -------- */

static int glob(const char *pat, size_t pl, const char *s, size_t sl)
{
    while (pl) {
        switch (pat[0]) {
        case '*':
            while (pl > 1 && pat[1] == '*') {
                pat++;
                pl--;
            }
            if (pl == 1) return 1;
            for (size_t k = 0; k <= sl; k++)
                if (glob(pat + 1, pl - 1, s + k, sl - k)) return 1;
            return 0;
        case '?':
            if (!sl) return 0;
            s++;
            sl--;
            break;
        case '[': {
            if (!sl) return 0;
            pat++;
            pl--;
            int neg = pl && pat[0] == '^';
            if (neg) {
                pat++;
                pl--;
            }
            int match = 0;
            while (pl && pat[0] != ']') {
                if (pat[0] == '\\' && pl >= 2) {
                    pat++;
                    pl--;
                    if (tolower((unsigned char)pat[0]) == tolower((unsigned char)s[0])) match = 1;
                } else if (pl >= 3 && pat[1] == '-') {
                    int a = tolower((unsigned char)pat[0]), b = tolower((unsigned char)pat[2]);
                    int c = tolower((unsigned char)s[0]);
                    if (a > b) { int t = a; a = b; b = t; }
                    if (c >= a && c <= b) match = 1;
                    pat += 2;
                    pl -= 2;
                } else if (tolower((unsigned char)pat[0]) == tolower((unsigned char)s[0])) {
                    match = 1;
                }
                pat++;
                pl--;
            }
            if (neg) match = !match;
            if (!match) return 0;
            s++;
            sl--;
            if (!pl) return 0;
            break;
        }
        case '\\':
            if (pl >= 2) {
                pat++;
                pl--;
            }
            /* fall through */
        default:
            if (!sl || tolower((unsigned char)pat[0]) != tolower((unsigned char)s[0])) return 0;
            s++;
            sl--;
            break;
        }
        pat++;
        pl--;
    }
    return sl == 0;
}

/* ----- The commands ----------------------------------------------------------------- */

/* CONFIG GET pattern [pattern ...]: the matching parameters, a map. */
void frs_cmd_config_get(frs_conn *c, int argc, const char *const *argv, const size_t *argvlen)
{
    frs_server *srv = c->srv;
    char *hit = calloc(NDEFS, 1);
    if (!hit) frs_oom_abort(__func__);
    long n = 0;
    for (int a = 2; a < argc; a++) {
        int pattern = memchr(argv[a], '[', argvlen[a]) || memchr(argv[a], '*', argvlen[a]) ||
                      memchr(argv[a], '?', argvlen[a]); /* argv[a] need not end in a NUL */
        for (size_t i = 0; i < NDEFS; i++) {
            if (hit[i] || ((defs[i].flags & FRS_P_HIDDEN) && pattern)) continue;
            if (glob(argv[a], argvlen[a], defs[i].name, strlen(defs[i].name))) {
                hit[i] = 1;
                n++;
            }
        }
    }
    frs_reply_map(c, n);
    for (size_t i = 0; i < NDEFS; i++) {
        if (!hit[i]) continue;
        frs_reply_bulk_cstr(c, defs[i].name);
        frs_reply_bulk_cstr(c, srv->params[i].value);
    }
    free(hit);
}

/* CONFIG SET name value [name value ...]: all or nothing. */
/* CONFIG SET's bind and port among the npairs (parameter rows idx, checked values norm):
 * when either differs from what is in force, the TCP sockets are opened again
 * (frs_listen_tcp_again).  0; -1 with the argument and Redis's apply error when they could
 * not be. */
static int listen_changed(frs_server *srv, int npairs, const int *idx, char (*norm)[1024],
                          const char **err_arg, const char **err)
{
    const char *bind = frs_config_get(srv, "bind"), *cur_bind = bind;
    long long port = atoll(frs_config_get(srv, "port")), cur_port = port;
    for (int p = 0; p < npairs; p++) {
        if (!strcmp(defs[idx[p]].name, "bind")) bind = norm[p];
        if (!strcmp(defs[idx[p]].name, "port")) port = atoll(norm[p]);
    }
    if (port == cur_port && !strcmp(bind, cur_bind)) return 0;
    if (frs_listen_tcp_again(srv, bind, (int)port, cur_bind, (int)cur_port) == 0) return 0;
    if (port != cur_port) {
        *err_arg = "port";
        *err = "Unable to listen on this port. Check server logs.";
    } else {
        *err_arg = "bind";
        *err = "Failed to bind to specified addresses.";
    }
    return -1;
}

void frs_cmd_config_set(frs_conn *c, int argc, const char *const *argv, const size_t *argvlen)
{
    frs_server *srv = c->srv;
    /* Redis checks every name first, then the pairs' count, then each value; nothing is
     * applied unless everything passes. */
    int npairs = (argc - 2) / 2;
    int *idx = malloc(sizeof(int) * (size_t)(npairs + 1));
    if (!idx) frs_oom_abort(__func__);
    for (int a = 2; a < argc; a += 2) {
        int k = find_param(argv[a], argvlen[a]);
        if (k < 0 || a + 1 >= argc) {
            frs_reply_errorf(c, "ERR Unknown option or number of arguments for CONFIG SET - "
                                "'%.*s'", (int)argvlen[a], argv[a]);
            free(idx);
            return;
        }
        for (int b = 2; b < a; b += 2) {
            if (idx[(b - 2) / 2] == k) {
                frs_reply_errorf(c, "ERR CONFIG SET failed (possibly related to argument "
                                    "'%.*s') - duplicate parameter", (int)argvlen[a], argv[a]);
                free(idx);
                return;
            }
        }
        idx[(a - 2) / 2] = k;
    }
    char (*norm)[1024] = malloc(sizeof(*norm) * (size_t)(npairs + 1));
    char (*raw)[1024] = malloc(sizeof(*raw) * (size_t)(npairs + 1));
    if (!norm || !raw) frs_oom_abort(__func__);
    for (int p = 0; p < npairs; p++) {
        char *value = raw[p];
        size_t vl = argvlen[2 + 2 * p + 1];
        snprintf(value, sizeof(raw[p]), "%.*s",
                 (int)(vl < sizeof(raw[p]) ? vl : sizeof(raw[p]) - 1), argv[2 + 2 * p + 1]);
        const char *e = check_value(srv, &defs[idx[p]], value, norm[p], sizeof(norm[p]));
        if (e) {
            frs_reply_errorf(c, "ERR CONFIG SET failed (possibly related to argument '%s') - %s",
                             defs[idx[p]].name, e);
            free(idx);
            free(norm);
            free(raw);
            return;
        }
    }
    /* bind and port first: a socket that cannot be opened fails the whole CONFIG SET with
     * nothing changed (Redis applies them last and rolls everything back) */
    const char *err_arg = NULL, *err = NULL;
    if (listen_changed(srv, npairs, idx, norm, &err_arg, &err) < 0) {
        frs_reply_errorf(c, "ERR CONFIG SET failed (possibly related to argument '%s') - %s",
                         err_arg, err);
        free(idx);
        free(norm);
        free(raw);
        return;
    }
    for (int p = 0; p < npairs; p++) {
        set_value(&srv->params[idx[p]], norm[p]);
        apply(srv, defs[idx[p]].name, norm[p], raw[p]);
        /* the default user's password is binary safe (a NUL byte included) */
        if (!strcmp(defs[idx[p]].name, "requirepass"))
            fr_server_set_requirepass(srv->fake, argv[3 + 2 * p], argvlen[3 + 2 * p]);
    }
    free(raw);
    free(idx);
    free(norm);
    frs_admin_config_changed(srv); /* slowlog-*, latency-monitor-threshold */
    frs_reply_ok(c);
}

/* CONFIG RESETSTAT: zeroes INFO stats' counters. */
void frs_cmd_config_resetstat(frs_conn *c, int argc, const char *const *argv,
                              const size_t *argvlen)
{
    /* Redis's resetServerStats, resetCommandTableStats and resetErrorTableStats */
    memset(&c->srv->stats, 0, sizeof(c->srv->stats));
    fr_stats_reset(c->srv->fake);
    frs_reply_ok(c);
}

/* CONFIG REWRITE: there is no config file. */
void frs_cmd_config_rewrite(frs_conn *c, int argc, const char *const *argv,
                            const size_t *argvlen)
{
    frs_reply_error(c, "ERR The server is running without a config file");
}

/* CONFIG HELP, as 7.0 words it. */
void frs_cmd_config_help(frs_conn *c, int argc, const char *const *argv, const size_t *argvlen)
{
    frs_reply_array(c, 11);
    frs_reply_status(c, "CONFIG <subcommand> [<arg> [value] [opt] ...]. Subcommands are:");
    frs_reply_status(c, "GET <pattern>");
    frs_reply_status(c, "    Return parameters matching the glob-like <pattern> and their values.");
    frs_reply_status(c, "SET <directive> <value>");
    frs_reply_status(c, "    Set the configuration <directive> to <value>.");
    frs_reply_status(c, "RESETSTAT");
    frs_reply_status(c, "    Reset statistics reported by the INFO command.");
    frs_reply_status(c, "REWRITE");
    frs_reply_status(c, "    Rewrite the configuration file.");
    frs_reply_status(c, "HELP");
    frs_reply_status(c, "    Prints this help.");
}
