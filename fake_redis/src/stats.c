/* stats.c -- what INFO commandstats, errorstats and latencystats report, counted where
 * commands run, by redis-server 7.0.15's rules (server.c call(), processCommand's
 * rejectCommand, networking.c afterErrorReply, blocked.c updateStatsOnUnblock):
 *
 *  - every error reply counts once in total_error_replies and once under its prefix, the
 *    first word of the error when it ends within its first 32 bytes (with the '-'), else
 *    "ERR".  7.0.15 keeps every distinct prefix (the 128-prefix cap came later);
 *  - a command refused before it runs (wrong arity, NO_MULTI, CROSSSLOT, the Pub/Sub
 *    context, NOAUTH from the server) counts one rejected call on its row (an unknown
 *    command or subcommand has no row); EXEC refused this way too;
 *  - a command that runs counts one call, and one failed call when an error reply was
 *    written after the last call began or ended: so EXEC fails for its own errors only,
 *    not for those of the commands it ran, which count on their own rows;
 *  - a blocked command counts its call when it blocks and, when served or unblocked by
 *    CLIENT UNBLOCK, its serving time, a failure when the serve wrote an error (always
 *    for CLIENT UNBLOCK, as 7.0.15 passes had_errors = 1), and a latency sample; a
 *    timeout adds nothing.
 *
 * Durations come from a clock the embedder gives (fr_stats_set_clock); without one every
 * duration is 0, so the library's figures stay deterministic.  Latency samples go into a
 * histogram with the buckets of Redis's hdr_histogram (1 ns to 1 s, 2 significant
 * digits), so percentiles are computed as Redis computes them. */
#include <assert.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "fr_int.h"

/* ----- Row ids: every command row of the table (containers and subcommands too) ------- */

#define MAX_ROWS 1024
#define ID_SLOTS 2048 /* open addressing over row pointers, at most half full */

static const fri_command *rows[MAX_ROWS]; /* row id -> row */
static size_t nrows;
static struct { const fri_command *cmd; int id; } id_slots[ID_SLOTS];

static size_t ptr_slot(const fri_command *cmd)
{
    uint64_t x = (uint64_t)(uintptr_t)cmd;
    x = (x ^ (x >> 29)) * 0xbf58476d1ce4e5b9ull;
    return (size_t)(x >> 40) & (ID_SLOTS - 1);
}

void fri_stats_register_row(const fri_command *cmd)
{
    if (nrows == MAX_ROWS) abort(); /* raise MAX_ROWS */
    size_t j = ptr_slot(cmd);
    while (id_slots[j].cmd) j = (j + 1) & (ID_SLOTS - 1);
    id_slots[j].cmd = cmd;
    id_slots[j].id = (int)nrows;
    rows[nrows++] = cmd;
}

static inline int row_id(const fri_command *cmd)
{
    for (size_t j = ptr_slot(cmd); id_slots[j].cmd; j = (j + 1) & (ID_SLOTS - 1))
        if (id_slots[j].cmd == cmd) return id_slots[j].id;
    return -1;
}

/* ----- The latency histogram (hdr_histogram's buckets for 1..1e9, 2 digits) ------------ */

#define HIST_SUB_HALF_MAG 7                     /* sub_bucket_half_count = 128 */
#define HIST_SUB_HALF (1 << HIST_SUB_HALF_MAG)
#define HIST_SUB_MASK 255                       /* sub_bucket_count - 1 */
#define HIST_BUCKETS 23                         /* 256 << 22 > 1e9 */
#define HIST_LEN ((HIST_BUCKETS + 1) * HIST_SUB_HALF)
#define HIST_MIN_NS 1
#define HIST_MAX_NS 1000000000LL

typedef struct fri_hist {
    uint64_t total;
    uint64_t counts[HIST_LEN];
} fri_hist;

static int hist_index(int64_t v)
{
    int bucket = (64 - __builtin_clzll((unsigned long long)v | HIST_SUB_MASK)) -
                 (HIST_SUB_HALF_MAG + 1);
    int sub = (int)(v >> bucket);
    return ((bucket + 1) << HIST_SUB_HALF_MAG) + (sub - HIST_SUB_HALF);
}

/* The slot of a 0 µs sample (recorded as HIST_MIN_NS): bucket 0, sub-bucket 1. */
#define HIST_ZERO_IDX 1

/* The lowest value of counts index i, and the width of its range. */
static void hist_range(int i, int64_t *low, int64_t *size)
{
    int bucket = (i >> HIST_SUB_HALF_MAG) - 1;
    int sub = (i & (HIST_SUB_HALF - 1)) + HIST_SUB_HALF;
    if (bucket < 0) {
        sub -= HIST_SUB_HALF;
        bucket = 0;
    }
    *low = (int64_t)sub << bucket;
    *size = (int64_t)1 << (sub >= 2 * HIST_SUB_HALF ? bucket + 1 : bucket);
}

static void hist_record(fri_hist *h, int64_t ns)
{
    if (ns < HIST_MIN_NS) ns = HIST_MIN_NS;
    if (ns > HIST_MAX_NS) ns = HIST_MAX_NS;
    h->counts[hist_index(ns)]++;
    h->total++;
}

/* hdr_value_at_percentile: the highest value equivalent to the first sample at or past
 * the percentile (the lowest one for 0). */
static int64_t hist_percentile(const fri_hist *h, double pct)
{
    double p = pct < 100.0 ? pct : 100.0;
    int64_t want = (int64_t)(((p / 100) * (double)h->total) + 0.5);
    if (want < 1) want = 1;
    uint64_t seen = 0;
    for (int i = 0; i < HIST_LEN; i++) {
        seen += h->counts[i];
        if (seen >= (uint64_t)want) {
            int64_t low, size;
            hist_range(i, &low, &size);
            /* value_at_index gives the lowest equivalent value of the slot; the
             * percentile is its lowest (p0) or highest equivalent value */
            return pct == 0.0 ? low : low + size - 1;
        }
    }
    return 0;
}

/* ----- Per-server counters ----------------------------------------------------------- */

typedef struct cmdstat {
    uint64_t calls, usec, rejected, failed;
    /* Latency samples.  While every sample falls into one slot of the histogram (always so
     * without an embedder clock: every duration is 0) they are counted here, and the
     * 24 KB histogram is made only when a sample lands in another slot: a server made per
     * simulation run (the fuzzer makes thousands) then allocates and clears nothing. */
    uint64_t one_n;  /* samples counted in slot one_idx (0 once hist exists) */
    int one_idx;
    fri_hist *hist;  /* NULL until two slots are used */
} cmdstat;

typedef struct errstat {
    char *prefix;
    size_t len;
    uint64_t count;
} errstat;

/* The fake's rows get their counters at their first count: a server made per simulation
 * run touches a dozen rows of a thousand, and clearing a thousand at every server's start
 * cost more than the run's commands did. */
struct fri_stats {
    uint16_t at[MAX_ROWS];      /* per row id: 1 + its index in used, 0 while uncounted */
    cmdstat *used;              /* the counted rows, in the order of their first count */
    size_t nused, capused;
    cmdstat *ext;               /* rows the embedder named (fr_stats_record_call) */
    char **ext_names;           /* their names, lower case */
    size_t next, ext_cap;       /* entries in ext, room */
    errstat *errs;              /* sorted by prefix bytes (Redis's rax order) */
    size_t nerrs, errs_cap;     /* entries, room */
    uint64_t total_errors;      /* total_error_replies */
    uint64_t err_prev;          /* incrCommandStatsOnError's baseline */
    int latency_tracking;       /* latency-tracking (default yes) */
    uint64_t (*clock)(void *);  /* microseconds, or NULL: durations are 0 */
    void *clock_arg;
};

int fri_stats_init(fr_server *s)
{
    s->stats = fri_calloc(1, sizeof(*s->stats));
    if (!s->stats) return -1;
    s->stats->latency_tracking = 1;
    assert(hist_index(HIST_MIN_NS) == HIST_ZERO_IDX);
    return 0;
}

static void reset_rows(cmdstat *r, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        fri_free(r[i].hist);
        memset(&r[i], 0, sizeof(r[i]));
    }
}

void fri_stats_free(fr_server *s)
{
    struct fri_stats *st = s->stats;
    if (!st) return;
    reset_rows(st->used, st->nused);
    fri_free(st->used);
    reset_rows(st->ext, st->next);
    for (size_t i = 0; i < st->next; i++) fri_free(st->ext_names[i]);
    for (size_t i = 0; i < st->nerrs; i++) fri_free(st->errs[i].prefix);
    fri_free(st->ext);
    fri_free(st->ext_names);
    fri_free(st->errs);
    fri_free(st);
    s->stats = NULL;
}

static cmdstat *row_stat_first(struct fri_stats *st, int id);

/* The counters of a row; inline, since every command's end needs them and a row is
 * counted already but for its first call. */
static inline cmdstat *row_stat(fr_server *s, const fri_command *cmd)
{
    int id = row_id(cmd);
    if (id < 0) return NULL;
    struct fri_stats *st = s->stats;
    if (__builtin_expect(!st->at[id], 0)) return row_stat_first(st, id);
    return &st->used[st->at[id] - 1];
}

/* A row's first count: its counters made. */
static cmdstat *row_stat_first(struct fri_stats *st, int id)
{
    if (st->nused == st->capused) {
        size_t cap = st->capused ? 2 * st->capused : 16;
        cmdstat *n = fri_realloc(st->used, cap * sizeof(*n));
        if (!n) return NULL;
        st->used = n;
        st->capused = cap;
    }
    memset(&st->used[st->nused], 0, sizeof(cmdstat));
    st->at[id] = (uint16_t)++st->nused;
    return &st->used[st->at[id] - 1];
}

uint64_t fri_stats_now(const fr_server *s)
{
    return s->stats->clock ? s->stats->clock(s->stats->clock_arg) : 0;
}

/* One error of prefix p[0..len) more (Redis's incrementErrorCount). */
static void count_prefix(struct fri_stats *st, const char *p, size_t len)
{
    size_t lo = 0, hi = st->nerrs;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        const errstat *e = &st->errs[mid];
        size_t n = e->len < len ? e->len : len;
        int cmp = memcmp(e->prefix, p, n);
        if (cmp == 0) cmp = e->len < len ? -1 : e->len > len ? 1 : 0;
        if (cmp == 0) {
            st->errs[mid].count++;
            return;
        }
        if (cmp < 0) lo = mid + 1;
        else hi = mid;
    }
    if (st->nerrs == st->errs_cap) {
        size_t cap = st->errs_cap ? 2 * st->errs_cap : 8;
        errstat *n = fri_realloc(st->errs, cap * sizeof(*n));
        if (!n) return; /* the total still counts */
        st->errs = n;
        st->errs_cap = cap;
    }
    char *copy = fri_malloc(len ? len : 1);
    if (!copy) return;
    memcpy(copy, p, len);
    memmove(&st->errs[lo + 1], &st->errs[lo], (st->nerrs - lo) * sizeof(errstat));
    st->errs[lo] = (errstat){copy, len, 1};
    st->nerrs++;
}

void fri_stats_error(fr_server *s, const char *err, size_t len)
{
    struct fri_stats *st = s->stats;
    st->total_errors++;
    /* afterErrorReply looks for a space in the first 32 bytes of "-CODE ..." */
    size_t window = len + 1 < 32 ? len : 31;
    const char *sp = memchr(err, ' ', window);
    if (sp) count_prefix(st, err, (size_t)(sp - err));
    else count_prefix(st, "ERR", 3);
}

void fri_stats_rejected(fr_server *s, const fri_command *cmd)
{
    cmdstat *r = cmd ? row_stat(s, cmd) : NULL;
    if (r) r->rejected++;
}

void fri_stats_failed(fr_server *s, const fri_command *cmd)
{
    cmdstat *r = cmd ? row_stat(s, cmd) : NULL;
    if (r) r->failed++;
}

uint64_t fri_stats_call_begin(fr_server *s)
{
    struct fri_stats *st = s->stats;
    st->err_prev = st->total_errors;
    return st->clock ? st->clock(st->clock_arg) : 0;
}

int fri_stats_call_failed(fr_server *s)
{
    struct fri_stats *st = s->stats;
    int failed = (int64_t)(st->total_errors - st->err_prev) > 0;
    st->err_prev = st->total_errors;
    return failed;
}

/* Adds one sample of usec microseconds to r's histogram (Redis records nanoseconds). */
static void latency_sample(struct fri_stats *st, cmdstat *r, uint64_t usec)
{
    if (!st->latency_tracking) return;
    int64_t ns = usec > (uint64_t)HIST_MAX_NS ? HIST_MAX_NS : (int64_t)usec * 1000;
    if (!r->hist) {
        int idx = hist_index(ns < HIST_MIN_NS ? HIST_MIN_NS : ns);
        if (r->one_n == 0 || r->one_idx == idx) {
            r->one_idx = idx;
            r->one_n++;
            return;
        }
        r->hist = fri_calloc(1, sizeof(*r->hist));
        if (!r->hist) return;
        r->hist->counts[r->one_idx] = r->one_n;
        r->hist->total = r->one_n;
        r->one_n = 0;
    }
    hist_record(r->hist, ns);
}

/* The row has latency samples (INFO latencystats shows it). */
static int has_latency(const cmdstat *r) { return r->hist != NULL || r->one_n > 0; }

uint64_t fri_stats_call_end(fr_client *c, const fri_command *cmd, uint64_t start, int failed)
{
    fr_server *s = c->srv;
    struct fri_stats *st = s->stats;
    cmdstat *r = row_stat(s, cmd);
    if (!r) return 0;
    /* without a clock every duration is 0 (no call to read one), and while every sample
     * of the row fell into the 0 slot the sample is one increment */
    if (!st->clock && !c->bpop && !r->hist && (r->one_idx == HIST_ZERO_IDX || !r->one_n)) {
        r->calls++;
        if (failed) r->failed++;
        if (st->latency_tracking) {
            r->one_idx = HIST_ZERO_IDX;
            r->one_n++;
        }
        return 0;
    }
    uint64_t usec = 0;
    if (s->stats->clock) {
        uint64_t now = s->stats->clock(s->stats->clock_arg);
        usec = now > start ? now - start : 0;
    }
    r->calls++;
    r->usec += usec;
    if (failed) r->failed++;
    /* a client that blocked gets its sample when it is served */
    if (!c->bpop) latency_sample(s->stats, r, usec);
    else c->bpop_stat_usec = usec;
    return usec;
}

void fri_stats_unblocked(fr_client *c, const fri_command *cmd, uint64_t start, int had_errors)
{
    fr_server *s = c->srv;
    cmdstat *r = row_stat(s, cmd);
    if (!r) return;
    uint64_t now = fri_stats_now(s);
    uint64_t usec = (now > start ? now - start : 0) + c->bpop_stat_usec;
    r->usec += usec;
    if (had_errors) r->failed++;
    latency_sample(s->stats, r, usec);
}

uint64_t fri_stats_errors(const fr_server *s) { return s->stats->total_errors; }

/* ----- The public API ------------------------------------------------------------------ */

/* The row of a full name ("set", "config|get") in the fake's table, or NULL. */
static const fri_command *fake_row(const fr_server *s, const char *name)
{
    const char *bar = strchr(name, '|');
    const fri_command *top = fri_lookup_command(s, name, bar ? (size_t)(bar - name)
                                                             : strlen(name));
    if (!top || !bar) return top;
    for (const fri_command *sub = top->subcommands; sub && sub->name; sub++)
        if (strcasecmp(sub->name, name) == 0) return sub;
    return NULL;
}

/* The counters of a name: the fake's row, else the embedder's row of that name (made
 * when create is set). */
static cmdstat *named_stat(fr_server *s, const char *name, int create)
{
    const fri_command *cmd = fake_row(s, name);
    if (cmd) return row_stat(s, cmd);
    struct fri_stats *st = s->stats;
    for (size_t i = 0; i < st->next; i++)
        if (strcasecmp(st->ext_names[i], name) == 0) return &st->ext[i];
    if (!create) return NULL;
    if (st->next == st->ext_cap) {
        size_t cap = st->ext_cap ? 2 * st->ext_cap : 16;
        cmdstat *n = fri_realloc(st->ext, cap * sizeof(*n));
        if (!n) return NULL;
        st->ext = n;
        char **nn = fri_realloc(st->ext_names, cap * sizeof(*nn));
        if (!nn) return NULL;
        st->ext_names = nn;
        st->ext_cap = cap;
    }
    char *copy = fri_strdup(name);
    if (!copy) return NULL;
    for (char *p = copy; *p; p++)
        if (*p >= 'A' && *p <= 'Z') *p = (char)(*p + 32);
    st->ext_names[st->next] = copy;
    memset(&st->ext[st->next], 0, sizeof(cmdstat));
    return &st->ext[st->next++];
}

static void stats_record_error_guarded(fr_server *s, const char *err, size_t len)
{
    if (s && err) fri_stats_error(s, err, len);
}

void fr_stats_record_error(fr_server *s, const char *err, size_t len)
{
    fr_server *guard = fri_mem_enter(s, "fr_stats_record_error");
    stats_record_error_guarded(s, err, len);
    fri_mem_leave(guard);
}

static void stats_record_rejected_guarded(fr_server *s, const char *name)
{
    cmdstat *r = s && name ? named_stat(s, name, 1) : NULL;
    if (r) r->rejected++;
}

void fr_stats_record_rejected(fr_server *s, const char *name)
{
    fr_server *guard = fri_mem_enter(s, "fr_stats_record_rejected");
    stats_record_rejected_guarded(s, name);
    fri_mem_leave(guard);
}

static void stats_record_call_guarded(fr_server *s, const char *name, uint64_t usec, int failed)
{
    cmdstat *r = s && name ? named_stat(s, name, 1) : NULL;
    if (!r) return;
    r->calls++;
    r->usec += usec;
    if (failed) r->failed++;
    latency_sample(s->stats, r, usec);
}

void fr_stats_record_call(fr_server *s, const char *name, uint64_t usec, int failed)
{
    fr_server *guard = fri_mem_enter(s, "fr_stats_record_call");
    stats_record_call_guarded(s, name, usec, failed);
    fri_mem_leave(guard);
}

uint64_t fr_stats_total_error_replies(const fr_server *s) { return s->stats->total_errors; }

size_t fr_stats_error_count(const fr_server *s) { return s->stats->nerrs; }

int fr_stats_error_at(const fr_server *s, size_t i, const char **prefix, size_t *len,
                      uint64_t *count)
{
    if (i >= s->stats->nerrs) return -1;
    const errstat *e = &s->stats->errs[i];
    if (prefix) *prefix = e->prefix;
    if (len) *len = e->len;
    if (count) *count = e->count;
    return 0;
}

size_t fr_stats_command_rows(const fr_server *s) { return nrows + s->stats->next; }

static const cmdstat *row_at(const fr_server *s, size_t i, const char **name)
{
    if (i < nrows) {
        static const cmdstat none; /* a row never counted */
        *name = rows[i]->name;
        uint16_t at = s->stats->at[i];
        return at ? &s->stats->used[at - 1] : &none;
    }
    i -= nrows;
    if (i >= s->stats->next) return NULL;
    *name = s->stats->ext_names[i];
    return &s->stats->ext[i];
}

int fr_stats_command_at(const fr_server *s, size_t i, fr_command_stats *out)
{
    const char *name;
    const cmdstat *r = row_at(s, i, &name);
    if (!r) return -1;
    *out = (fr_command_stats){name, r->calls, r->usec, r->rejected, r->failed,
                              has_latency(r)};
    return 0;
}

int fr_stats_command(fr_server *s, const char *name, fr_command_stats *out)
{
    const cmdstat *r = named_stat(s, name, 0);
    if (!r) {
        *out = (fr_command_stats){name, 0, 0, 0, 0, 0};
        return -1;
    }
    *out = (fr_command_stats){name, r->calls, r->usec, r->rejected, r->failed,
                              has_latency(r)};
    return 0;
}

int fr_stats_latency_at(const fr_server *s, size_t i, double percentile, double *usec)
{
    const char *name;
    const cmdstat *r = row_at(s, i, &name);
    if (!r || !has_latency(r)) return -1;
    if (r->hist) {
        *usec = (double)hist_percentile(r->hist, percentile) / 1000.0;
    } else {
        /* every sample in one slot: the percentile is that slot's lowest (p0) or highest
         * equivalent value, as hist_percentile finds it */
        int64_t low, size;
        hist_range(r->one_idx, &low, &size);
        *usec = (double)(percentile == 0.0 ? low : low + size - 1) / 1000.0;
    }
    return 0;
}

/* hdr_iter_log_init(h, 1024, 2) as Redis's fillCommandCDF walks it: the slots are visited
 * in order and, once a slot's value reaches the next reporting level (1024 ns, doubled at
 * each report), the highest value of that slot and the samples counted so far are
 * reported; Redis keeps the reports whose count grew. */
int fr_stats_latency_cdf(const fr_server *s, size_t i, uint64_t *calls, int64_t *usec,
                         uint64_t *cum, size_t max, size_t *n)
{
    const char *name;
    const cmdstat *r = row_at(s, i, &name);
    *n = 0;
    if (!r || !has_latency(r)) return -1;
    fri_hist *one = NULL; /* the samples of a row that used one slot only, as a histogram */
    if (!r->hist) {
        one = fri_calloc(1, sizeof(*one));
        if (!one) return -1;
        one->counts[r->one_idx] = r->one_n;
        one->total = r->one_n;
    }
    const fri_hist *h = r->hist ? r->hist : one;
    *calls = h->total;
    int64_t level = 1024, low, size;
    hist_range(hist_index(level), &low, &size);
    int64_t level_low = low;
    int idx = -1;
    int64_t value = 0;
    uint64_t seen = 0, prev = 0;
    for (;;) {
        int more = seen < h->total;
        if (!more && idx + 1 < HIST_LEN) {
            hist_range(idx + 1, &low, &size);
            more = low > level_low;
        }
        if (!more) break;
        int moved_out = 0;
        while (value < level_low) {
            if (idx + 1 >= HIST_LEN) {
                moved_out = 1;
                break;
            }
            idx++;
            seen += h->counts[idx];
            hist_range(idx, &low, &size);
            value = low;
        }
        if (idx >= 0) hist_range(idx, &low, &size);
        if (seen > prev && *n < max) {
            usec[*n] = (idx >= 0 ? low + size - 1 : 0) / 1000;
            cum[*n] = seen;
            (*n)++;
        }
        prev = seen;
        if (moved_out) break;
        level *= 2;
        if (level > HIST_MAX_NS * 4) break;
        hist_range(hist_index(level > HIST_MAX_NS ? HIST_MAX_NS : level), &low, &size);
        level_low = level > HIST_MAX_NS ? low + size : low;
    }
    fri_free(one);
    return 0;
}

void fr_stats_reset(fr_server *s)
{
    struct fri_stats *st = s->stats;
    reset_rows(st->used, st->nused);
    reset_rows(st->ext, st->next);
    for (size_t i = 0; i < st->nerrs; i++) fri_free(st->errs[i].prefix);
    st->nerrs = 0;
    st->total_errors = 0;
    s->expired_keys = 0;
}

void fr_stats_set_latency_tracking(fr_server *s, int on) { s->stats->latency_tracking = on != 0; }

void fr_stats_set_clock(fr_server *s, uint64_t (*now_us)(void *arg), void *arg)
{
    s->stats->clock = now_us;
    s->stats->clock_arg = arg;
}
