/* server.c -- the server and client objects, the clock, the command table and the
 * dispatcher: the path every command takes, in the order redis-server 7.0's
 * processCommand takes it (lookup, arity, cluster slots, MULTI queueing, call). */
#include <assert.h>
#include <limits.h>
#include <pthread.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include "command_int.h"
#include "fr_int.h"
#include "reply_int.h"
#include "wsi_splitmix.h"

/* All command tables, in the order the coverage table lists them. */
static const fri_command *const all_tables[] = {
    fri_connection_commands, fri_command_commands,  fri_acl_commands,
    fri_keyspace_commands,   fri_object_commands,
    fri_string_commands,     fri_bitops_commands,
    fri_list_commands,       fri_hash_commands,     fri_set_commands,    fri_zset_commands,
    fri_sort_commands,       fri_rdb_commands,      fri_stream_commands,
    fri_stream_group_commands, fri_pubsub_commands, fri_multi_commands, fri_cluster_commands,
    fri_eval_commands,       fri_function_commands,
    fri_geo_commands,        fri_hll_commands,      NULL,
};

/* ----- Configuration, clock and randomness --------------------------------------------- */

fr_config fr_config_default(void)
{
    fr_config cfg = {.seed = 1, .start_ms = 1700000000000LL, .cluster_enabled = 0};
    return cfg;
}

uint64_t fri_random(fr_server *s)
{
    /* xorshift128+: small, fast, and the same sequence on every platform */
    uint64_t s1 = s->rng_state[0];
    const uint64_t s0 = s->rng_state[1];
    const uint64_t result = s0 + s1;
    s->rng_state[0] = s0;
    s1 ^= s1 << 23;
    s->rng_state[1] = s1 ^ s0 ^ (s1 >> 18) ^ (s0 >> 5);
    return result;
}

int64_t fr_clock_now(const fr_server *s)
{
    if (s->wall_clock) {
        struct timespec ts;
        clock_gettime(CLOCK_REALTIME, &ts);
        return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
    }
    return s->clock_ms;
}

void fr_clock_set(fr_server *s, int64_t unix_ms) { s->clock_ms = unix_ms; }
void fr_clock_advance(fr_server *s, int64_t ms) { s->clock_ms += ms; }

void fr_clock_use_wall(fr_server *s, int on)
{
    if (!on && s->wall_clock) s->clock_ms = fr_clock_now(s);
    s->wall_clock = on != 0;
    /* a server switched to the wall clock before any key held a shared integer started
     * on that clock, as far as their LRU fields can tell */
    if (!s->shared_lru) s->start_lru = fri_lru_clock(fr_clock_now(s));
}

uint64_t fr_server_commands_executed(const fr_server *s) { return s->executed; }

/* ----- Parameters (fr_server_set_param) ------------------------------------------------- */

/* Redis 7.0.15's defaults for the parameters the fake follows. */
static fri_tunables default_tunables(void)
{
    fri_tunables t = {
        .hash_max_listpack_entries = 512,
        .hash_max_listpack_value = 64,
        .set_max_intset_entries = 512,
        .zset_max_listpack_entries = 128,
        .zset_max_listpack_value = 64,
        .list_max_listpack_size = -2,
        .maxmemory = 0,
        .maxmemory_policy = FRI_MAXMEMORY_NO_EVICTION,
        .maxmemory_samples = 5,
        .lfu_log_factor = 10,
        .lfu_decay_time = 1,
        .busy_reply_threshold = 5000,
        .min_replicas_to_write = 0,
        .min_replicas_max_lag = 10,
        .stream_node_max_entries = 100,
        .stream_node_max_bytes = 4096,
        .hll_sparse_max_bytes = 3000,
    };
    return t;
}

/* Redis's memtoull: digits and an optional unit (b, k, kb, m, mb, g, gb, any case; "k" is
 * 1000, "kb" 1024).  1 on success. */
static int parse_memory(const char *v, unsigned long long *out)
{
    static const struct { const char *unit; unsigned long long mul; } units[] = {
        {"", 1},         {"b", 1},           {"k", 1000},       {"kb", 1024},
        {"m", 1000000},  {"mb", 1048576},    {"g", 1000000000}, {"gb", 1073741824},
    };
    size_t digits = strspn(v, "0123456789");
    if (digits == 0 || digits > 19) return 0;
    for (size_t i = 0; i < sizeof(units) / sizeof(units[0]); i++) {
        if (strcasecmp(v + digits, units[i].unit) != 0) continue;
        unsigned long long n = strtoull(v, NULL, 10);
        if (n > ULLONG_MAX / units[i].mul) return 0;
        *out = n * units[i].mul;
        return 1;
    }
    return 0;
}

/* An integer parameter in [min, max]: 1 on success. */
static int parse_int_param(const char *v, long long min, long long max, long long *out)
{
    long long n;
    if (!fri_string2ll(v, strlen(v), &n) || n < min || n > max) return 0;
    *out = n;
    return 1;
}

/* A size parameter (a count or a memory value) in [0, LONG_MAX]: 1 on success. */
static int parse_size_param(const char *v, int memory, long long *out)
{
    unsigned long long n;
    if (memory) {
        if (!parse_memory(v, &n) || n > LLONG_MAX) return 0;
        *out = (long long)n;
        return 1;
    }
    return parse_int_param(v, 0, LLONG_MAX, out);
}

static int server_set_param_guarded(fr_server *s, const char *name, const char *value)
{
    /* the *-ziplist-* names are 7.0's aliases of the *-listpack-* ones */
    static const struct {
        const char *name, *alias;
        int kind; /* 0: count, 1: memory size, 2: int, 3: policy, 4: maxmemory */
        size_t off;
    } params[] = {
        {"hash-max-listpack-entries", "hash-max-ziplist-entries", 0,
         offsetof(fri_tunables, hash_max_listpack_entries)},
        {"hash-max-listpack-value", "hash-max-ziplist-value", 1,
         offsetof(fri_tunables, hash_max_listpack_value)},
        {"set-max-intset-entries", NULL, 0, offsetof(fri_tunables, set_max_intset_entries)},
        {"zset-max-listpack-entries", "zset-max-ziplist-entries", 0,
         offsetof(fri_tunables, zset_max_listpack_entries)},
        {"zset-max-listpack-value", "zset-max-ziplist-value", 1,
         offsetof(fri_tunables, zset_max_listpack_value)},
        {"list-max-listpack-size", "list-max-ziplist-size", 2,
         offsetof(fri_tunables, list_max_listpack_size)},
        {"lfu-log-factor", NULL, 2, offsetof(fri_tunables, lfu_log_factor)},
        {"lfu-decay-time", NULL, 2, offsetof(fri_tunables, lfu_decay_time)},
        {"stream-node-max-entries", NULL, 0, offsetof(fri_tunables, stream_node_max_entries)},
        {"stream-node-max-bytes", NULL, 1, offsetof(fri_tunables, stream_node_max_bytes)},
        {"hll-sparse-max-bytes", NULL, 1, offsetof(fri_tunables, hll_sparse_max_bytes)},
        {"maxmemory-policy", NULL, 3, 0},
        {"maxmemory", NULL, 4, 0},
        {"maxmemory-samples", NULL, 2, offsetof(fri_tunables, maxmemory_samples)},
        {"busy-reply-threshold", "lua-time-limit", 0,
         offsetof(fri_tunables, busy_reply_threshold)},
        {"min-replicas-to-write", "min-slaves-to-write", 2,
         offsetof(fri_tunables, min_replicas_to_write)},
        {"min-replicas-max-lag", "min-slaves-max-lag", 2,
         offsetof(fri_tunables, min_replicas_max_lag)},
    };
    static const struct { const char *name; int flags; } policies[] = {
        {"volatile-lru", FRI_MAXMEMORY_FLAG_LRU},
        {"volatile-lfu", 1 << 8 | FRI_MAXMEMORY_FLAG_LFU},
        {"volatile-random", 3 << 8},
        {"volatile-ttl", FRI_MAXMEMORY_VOLATILE_TTL},
        {"allkeys-lru", 4 << 8 | FRI_MAXMEMORY_FLAG_LRU | FRI_MAXMEMORY_FLAG_ALLKEYS},
        {"allkeys-lfu", 5 << 8 | FRI_MAXMEMORY_FLAG_LFU | FRI_MAXMEMORY_FLAG_ALLKEYS},
        {"allkeys-random", 6 << 8 | FRI_MAXMEMORY_FLAG_ALLKEYS},
        {"noeviction", FRI_MAXMEMORY_NO_EVICTION},
    };
    if (!s || !name || !value) return -1;
    if (strcasecmp(name, "notify-keyspace-events") == 0) {
        int flags = fr_notify_flags_parse(value);
        if (flags < 0) return -1;
        s->notify_flags = (unsigned)flags;
        return 0;
    }
    for (size_t i = 0; i < sizeof(params) / sizeof(params[0]); i++) {
        if (strcasecmp(name, params[i].name) != 0 &&
            (!params[i].alias || strcasecmp(name, params[i].alias) != 0))
            continue;
        long long n;
        switch (params[i].kind) {
        case 0:
        case 1:
            if (!parse_size_param(value, params[i].kind == 1, &n)) return -1;
            break;
        case 2:
            if (!parse_int_param(value, params[i].off == offsetof(fri_tunables,
                                                                    list_max_listpack_size)
                                            ? INT_MIN : 0,
                                 INT_MAX, &n))
                return -1;
            break;
        case 3:
            for (size_t k = 0; k < sizeof(policies) / sizeof(policies[0]); k++) {
                if (strcasecmp(value, policies[k].name) == 0) {
                    s->tun.maxmemory_policy = policies[k].flags;
                    return 0;
                }
            }
            return -1;
        default: {
            unsigned long long m;
            if (!parse_memory(value, &m)) return -1;
            s->tun.maxmemory = m;
            return 0;
        }
        }
        *(long long *)((char *)&s->tun + params[i].off) = n;
        return 0;
    }
    return 1;
}

int fr_server_set_param(fr_server *s, const char *name, const char *value)
{
    fr_server *guard = fri_mem_enter(s, "fr_server_set_param");
    int r = server_set_param_guarded(s, name, value);
    fri_mem_leave(guard);
    return r;
}

/* ----- The command table ------------------------------------------------------------ */

/* Command names are looked up on every call, so they get their own small table rather
 * than a fri_dict: a name is read as CMD_WORDS 64-bit words, lower-cased a word at a
 * time, and compared with the row's words, with no copy and no byte loop.  The rows are
 * the same for every server, so the table is built once for the process.  Open
 * addressing with linear probing, at most a quarter full. */
#define CMD_TABLE_SIZE 1024u
#define CMD_WORDS 3 /* the longest top-level name, GEORADIUSBYMEMBER_RO, has 20 bytes */
typedef struct cmd_slot {
    uint64_t w[CMD_WORDS];  /* the lower-case name, zero-padded */
    size_t len;             /* name bytes */
    const fri_command *cmd; /* NULL for a free slot */
} cmd_slot;
static cmd_slot cmd_table[CMD_TABLE_SIZE];
static size_t cmd_table_count; /* top-level rows of the fake's own table */
static pthread_once_t cmd_table_once = PTHREAD_ONCE_INIT;

/* ASCII upper-case letters of the 8 bytes in w to lower case, other bytes unchanged (a
 * byte is a letter when adding 0x80-'A' carries into its top bit but adding 0x80-'Z'-1
 * does not; bytes >= 0x80 are left out by ~w). */
static uint64_t lower_word(uint64_t w)
{
    const uint64_t ones = 0x0101010101010101ull;
    uint64_t low7 = w & (0x7f * ones);
    uint64_t ge_a = low7 + (0x80 - 'A') * ones;
    uint64_t gt_z = low7 + (0x80 - 'Z' - 1) * ones;
    uint64_t upper = (ge_a ^ gt_z) & ~w & (0x80 * ones);
    return w | (upper >> 2);
}

/* The n <= 8 bytes at p as a little-endian word, zero-padded, reading no byte past them:
 * two overlapping loads cover 4..8 bytes, three single bytes cover 1..3. */
static uint64_t load_bytes(const char *p, size_t n)
{
    if (n >= 4) {
        uint32_t lo, hi;
        memcpy(&lo, p, 4);
        memcpy(&hi, p + n - 4, 4);
        return (uint64_t)lo | ((uint64_t)hi << (8 * (n - 4)));
    }
    if (n == 0) return 0;
    return (uint64_t)(uint8_t)p[0] | ((uint64_t)(uint8_t)p[n / 2] << (8 * (n / 2))) |
           ((uint64_t)(uint8_t)p[n - 1] << (8 * (n - 1)));
}

/* Loads name into CMD_WORDS lower-cased, zero-padded words; -1 if it is too long to be a
 * command (then no command has it). */
static int load_name(const char *name, size_t len, uint64_t *w)
{
    if (len > CMD_WORDS * 8) return -1;
    w[0] = lower_word(load_bytes(name, len < 8 ? len : 8));
    w[1] = len > 8 ? lower_word(load_bytes(name + 8, len < 16 ? len - 8 : 8)) : 0;
    w[2] = len > 16 ? lower_word(load_bytes(name + 16, len - 16)) : 0;
    return 0;
}

/* The slot to start probing at: from the first word and the length only, which tell the
 * table's names apart well enough (the probe compares the other words). */
static uint32_t name_hash(const uint64_t *w, size_t len)
{
    uint64_t h = (w[0] + len) * 0x9E3779B97F4A7C15ull;
    return (uint32_t)(h >> 40);
}

/* Runs once per process (pthread_once), so servers made in parallel threads are safe. */
static void build_cmd_table(void)
{
    for (const fri_command *const *t = all_tables; *t; t++) {
        for (const fri_command *cmd = *t; cmd->name; cmd++) {
            cmd_slot slot = {.len = strlen(cmd->name), .cmd = cmd};
            if (load_name(cmd->name, slot.len, slot.w) < 0) abort(); /* raise CMD_WORDS */
            uint32_t j = name_hash(slot.w, slot.len) & (CMD_TABLE_SIZE - 1);
            while (cmd_table[j].cmd) j = (j + 1) & (CMD_TABLE_SIZE - 1);
            cmd_table[j] = slot;
            cmd_table_count++;
            fri_stats_register_row(cmd);
            fri_meta_mark_builtin(cmd->name);
            for (const fri_command *sub = cmd->subcommands; sub && sub->name; sub++) {
                fri_stats_register_row(sub);
                fri_meta_mark_builtin(sub->name);
            }
        }
    }
}

const fri_command *fri_lookup_command(const fr_server *s, const char *name, size_t len)
{
    (void)s;
    uint64_t w[CMD_WORDS];
    if (load_name(name, len, w) < 0) return NULL;
    for (uint32_t j = name_hash(w, len) & (CMD_TABLE_SIZE - 1); cmd_table[j].cmd;
         j = (j + 1) & (CMD_TABLE_SIZE - 1)) {
        const cmd_slot *e = &cmd_table[j];
        if (e->w[0] == w[0] && e->len == len && e->w[1] == w[1] && e->w[2] == w[2])
            return e->cmd;
    }
    return NULL;
}

/* fri_lookup_command with a cache of the spellings this server was sent: a client sends
 * the same few names, each in one case, so most lookups compare the name's words as sent
 * with one slot's instead of folding its case and probing the table.  Names found only. */
static const fri_command *lookup_command_cached(fr_server *s, const char *name, size_t len)
{
    if (len == 0 || len > CMD_WORDS * 8) return fri_lookup_command(s, name, len);
    uint64_t w[CMD_WORDS];
    w[0] = load_bytes(name, len < 8 ? len : 8);
    struct fri_name_hit *e = &s->name_cache[((w[0] + len) * 0x9E3779B97F4A7C15ull) >> 58];
    if (e->len == len && e->w[0] == w[0] && e->cmd) {
        if (len <= 8) return e->cmd;
        w[1] = load_bytes(name + 8, len < 16 ? len - 8 : 8);
        w[2] = len > 16 ? load_bytes(name + 16, len - 16) : 0;
        if (e->w[1] == w[1] && e->w[2] == w[2]) return e->cmd;
    }
    const fri_command *cmd = fri_lookup_command(s, name, len);
    if (cmd) {
        w[1] = len > 8 ? load_bytes(name + 8, len < 16 ? len - 8 : 8) : 0;
        w[2] = len > 16 ? load_bytes(name + 16, len - 16) : 0;
        memcpy(e->w, w, sizeof(w));
        e->len = len;
        e->cmd = cmd;
    }
    return cmd;
}

const fri_command *fri_lookup_subcommand(const fri_command *container, const fri_arg *a)
{
    size_t plen = strlen(container->name);
    for (const fri_command *sub = container->subcommands; sub && sub->name; sub++) {
        const char *subname = sub->name + plen + 1; /* past "container|" */
        if (strlen(subname) == a->len && strncasecmp(subname, a->ptr, a->len) == 0) return sub;
    }
    return NULL;
}

/* The flags as words, e.g. "write denyoom fast", into buf. */
static void flags_text(uint32_t f, char *buf, size_t cap)
{
    static const struct { uint32_t bit; const char *name; } names[] = {
        {FRI_CMD_WRITE, "write"},       {FRI_CMD_READONLY, "readonly"},
        {FRI_CMD_DENYOOM, "denyoom"},   {FRI_CMD_ADMIN, "admin"},
        {FRI_CMD_PUBSUB, "pubsub"},     {FRI_CMD_NO_MULTI, "no-multi"},
        {FRI_CMD_BLOCKING, "blocking"}, {FRI_CMD_LOADING, "loading"},
        {FRI_CMD_STALE, "stale"},       {FRI_CMD_FAST, "fast"},
        {FRI_CMD_NOSCRIPT, "noscript"}, {FRI_CMD_ALLOW_BUSY, "allow-busy"},
    };
    size_t len = 0;
    buf[0] = '\0';
    for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
        if (!(f & names[i].bit)) continue;
        int n = snprintf(buf + len, cap - len, "%s%s", len ? " " : "", names[i].name);
        if (n < 0 || (size_t)n >= cap - len) break;
        len += (size_t)n;
    }
}

/* The public view of the table: every top-level command that is not a container, then
 * the subcommands of each container, built once and never freed (rows are stable). */
static fr_command_info *info_rows;
static size_t info_count;
static pthread_once_t info_rows_once = PTHREAD_ONCE_INIT;

static void add_info_row(const fri_command *cmd, size_t *n)
{
    if (info_rows) {
        char flags[160];
        flags_text(cmd->flags, flags, sizeof(flags));
        char *copy = fri_strdup(flags);
        info_rows[*n] = (fr_command_info){cmd->name, cmd->arity, cmd->group, copy ? copy : "",
                                          cmd->first_key, cmd->last_key, cmd->key_step,
                                          cmd->getkeys != NULL};
    }
    (*n)++;
}

static void build_info_rows(void)
{
    for (int pass = 0; pass < 2; pass++) {
        size_t n = 0;
        for (const fri_command *const *t = all_tables; *t; t++) {
            for (const fri_command *cmd = *t; cmd->name; cmd++) {
                if (!(cmd->flags & FRI_CMD_CONTAINER)) add_info_row(cmd, &n);
                for (const fri_command *sub = cmd->subcommands; sub && sub->name; sub++)
                    add_info_row(sub, &n);
            }
        }
        if (pass == 0) {
            info_rows = fri_calloc(n ? n : 1, sizeof(*info_rows));
            if (!info_rows) return;
        }
        info_count = n;
    }
}

size_t fr_command_count(void)
{
    pthread_once(&info_rows_once, build_info_rows);
    return info_rows ? info_count : 0;
}

const fr_command_info *fr_command_at(size_t i)
{
    return i < fr_command_count() ? &info_rows[i] : NULL;
}

/* ----- Server and client lifecycle --------------------------------------------------- */

/* Everything a server holds is made here, on a zeroed struct, and let go of in
 * server_clear: fr_server_new, fr_server_free and fr_server_reset are made of the two, so
 * a reset server is a new one by construction.  -1 when out of memory (what was made is
 * let go of by server_clear). */
static int server_init(fr_server *s, const fr_config *cfg)
{
    fr_config def = fr_config_default();
    if (!cfg) cfg = &def;
    s->keyspaces = fri_dict_new_n(FRI_DBNUM);
    s->watch_tables = fri_dict_new_n(FRI_DBNUM);
    if (!s->keyspaces || !s->watch_tables) return -1;
    for (int i = 0; i < FRI_DBNUM; i++) {
        s->db[i].id = i;
        s->db[i].keys = fri_dict_nth(s->keyspaces, (size_t)i);
        s->db[i].watched = fri_dict_nth(s->watch_tables, (size_t)i);
        s->db[i].srv = s;
    }
    pthread_once(&cmd_table_once, build_cmd_table);
    s->check_replies = fri_reply_check_wanted();
    s->clock_ms = cfg->start_ms;
    s->cmd_ms = cfg->start_ms;
    s->start_lru = s->cmd_lru = fri_lru_clock(cfg->start_ms);
    s->tun = default_tunables();
    s->cluster_enabled = cfg->cluster_enabled;
    uint64_t x = cfg->seed;
    s->rng_state[0] = wsi_splitmix64(&x);
    s->rng_state[1] = wsi_splitmix64(&x);
    s->next_client_id = 1;
    fr_published_set_limit(s, FR_PUBLISHED_DEFAULT_MAX, FR_PUBLISHED_DEFAULT_MAX_BYTES);
    return fri_stats_init(s);
}

static void free_obj_val(fri_val *v) { fri_obj_free(v->ptr); }
static void free_watchers_val(fri_val *v) { fri_free(v->ptr); }

static void server_clear(fr_server *s)
{
    while (s->clients) fr_client_free(s->clients);
    fri_evict_pool_free(s);
    fri_dict_free_n(s->keyspaces, FRI_DBNUM, free_obj_val);
    fri_dict_free_n(s->watch_tables, FRI_DBNUM, free_watchers_val);
    for (size_t i = 0; i < s->faults_len; i++) {
        fri_free(s->faults[i].name);
        fri_free(s->faults[i].error);
    }
    fri_free(s->faults);
    fr_published_clear(s);
    fri_free(s->published);
    fri_pubsub_server_free(s);
    fri_blocked_server_free(s);
    fri_scripting_free(s);
    fri_free(s->shared_lru);
    fri_exec_args_release(s);
    fri_free(s->exec_args);
    fri_stats_free(s);
    fri_command_meta_free(s);
    fri_acl_free(s);
    fri_propagate_free(s);
}

/* The emergency reserve is taken first and let go of last (alloc.c): outside a command
 * nothing draws from it, so these return NULL / -1 when out of memory. */
fr_server *fr_server_new(const fr_config *cfg)
{
    fr_server *s = fri_calloc(1, sizeof(*s));
    if (!s) return NULL;
    if (!(s->reserve = fri_reserve_new()) || server_init(s, cfg) < 0) {
        fr_server_free(s);
        return NULL;
    }
    return s;
}

void fr_server_free(fr_server *s)
{
    if (!s) return;
    server_clear(s);
    fri_reserve_release(s->reserve);
    fri_reserve_check_gone(s);
    fri_free(s);
}

int fr_server_reset(fr_server *s, const fr_config *cfg)
{
    server_clear(s);
    fri_reserve *r = s->reserve; /* kept: whole again when the world freed its blocks */
    memset(s, 0, sizeof(*s));
    s->reserve = r;
    if (fri_mem_reacquire(s) < 0 || server_init(s, cfg) < 0) {
        r = s->reserve; /* the one fr_server_free will let go of */
        server_clear(s);
        memset(s, 0, sizeof(*s));
        s->reserve = r;
        return -1;
    }
    return 0;
}

fr_client *fr_client_new(fr_server *s)
{
    fr_client *c = fri_calloc(1, sizeof(*c));
    if (!c) return NULL;
    c->srv = s;
    if (fri_tree_init(c) < 0) {
        fri_free(c);
        return NULL;
    }
    c->db = &s->db[0];
    c->resp = 2;
    c->id = s->next_client_id++;
    c->authenticated = !fr_server_auth_required(s); /* Redis's createClient */
    s->redis_errno = EAGAIN; /* where redis-server's accept loop leaves errno */
    c->next = s->clients;
    if (s->clients) s->clients->prev = c;
    s->clients = c;
    return c;
}

static void client_free_guarded(fr_client *c)
{
    if (!c) return;
    fri_blocked_client_free(c);
    fri_pubsub_client_free(c);
    fri_multi_reset(c);
    fri_unwatch_all(c);
    fri_free(c->watched);
    fri_free(c->queue);
    if (c->prev) c->prev->next = c->next;
    else c->srv->clients = c->next;
    if (c->next) c->next->prev = c->prev;
    fri_arena_free(c);
    fri_buf_free(&c->out);
    fri_free(c->argv_buf);
    fri_free(c->tframes);
    fri_free(c);
}

void fr_client_free(fr_client *c)
{
    if (!c) return;
    fr_server *guard = fri_mem_enter(c->srv, "fr_client_free");
    client_free_guarded(c);
    fri_mem_leave(guard);
}

int fr_client_db(const fr_client *c) { return c->db->id; }
int fr_client_in_multi(const fr_client *c) { return c->in_multi; }

/* ----- Faults ------------------------------------------------------------------------ */

static int add_fault(fr_server *s, uint64_t at, const char *name, const char *error, int times)
{
    if (!error) return -1;
    if (s->faults_len == s->faults_cap) {
        size_t cap = s->faults_cap ? s->faults_cap * 2 : 4;
        fri_fault *n = fri_realloc(s->faults, cap * sizeof(*n));
        if (!n) return -1;
        s->faults = n;
        s->faults_cap = cap;
    }
    fri_fault f = {.at = at, .remaining = times};
    f.error = fri_strdup(error);
    if (name) {
        f.name = fri_strdup(name);
        if (f.name)
            for (char *p = f.name; *p; p++)
                if (*p >= 'A' && *p <= 'Z') *p = (char)(*p + 32);
    }
    if (!f.error || (name && !f.name)) {
        fri_free(f.error);
        fri_free(f.name);
        return -1;
    }
    s->faults[s->faults_len++] = f;
    return 0;
}

int fr_fault_nth(fr_server *s, uint64_t n, const char *error)
{
    if (n == 0) return -1;
    return add_fault(s, s->executed + n, NULL, error, 1);
}

int fr_fault_command(fr_server *s, const char *name, const char *error, int times)
{
    if (!name || !*name || times == 0) return -1;
    return add_fault(s, 0, name, error, times);
}

void fr_fault_clear(fr_server *s)
{
    for (size_t i = 0; i < s->faults_len; i++) {
        fri_free(s->faults[i].name);
        fri_free(s->faults[i].error);
    }
    s->faults_len = 0;
}

uint64_t fr_fault_fired(const fr_server *s) { return s->faults_fired; }

static int fault_matches(const fri_fault *f, const fri_command *cmd, uint64_t executed)
{
    if (!f->name) return f->at == executed;
    if (strcmp(f->name, cmd->name) == 0) return 1;
    /* "xgroup" matches every XGROUP subcommand */
    size_t n = strlen(f->name);
    return strncmp(f->name, cmd->name, n) == 0 && cmd->name[n] == '|';
}

/* Answers the first matching fault instead of running the command; 1 if one fired. */
static int apply_fault(fr_client *c, const fri_command *cmd)
{
    fr_server *s = c->srv;
    for (size_t i = 0; i < s->faults_len; i++) {
        fri_fault *f = &s->faults[i];
        if (!fault_matches(f, cmd, s->executed)) continue;
        fri_reply_error_raw(c, f->error, strlen(f->error));
        s->faults_fired++;
        if (!f->name || (f->remaining > 0 && --f->remaining == 0)) {
            fri_free(f->name);
            fri_free(f->error);
            s->faults[i] = s->faults[--s->faults_len];
        }
        return 1;
    }
    return 0;
}

/* ----- Dispatch ---------------------------------------------------------------------- */

/* Redis's call(): runs cmd (or the fault that replaces it) and counts it (stats.c): a
 * failure is an error written by the command itself, decided before the clients it made
 * ready are served. */
void fri_call(fr_client *c, const fri_command *cmd)
{
    fr_server *s = c->srv;
    s->executed++;
    c->cmd = cmd;
    uint64_t start = fri_stats_call_begin(s);
    size_t out_mark = c->out.len;
    if (s->faults_len && apply_fault(c, cmd)) {
        fri_stats_call_end(c, cmd, start, fri_stats_call_failed(s));
        if (s->call_hook) fri_call_report(c, cmd, 0, 0, out_mark);
        return;
    }
    fr_client *outer = s->running; /* EXEC's client, when EXEC runs its queue */
    s->running = c;
    if (s->call_hook && (cmd->name[0] == 'e' || cmd->name[0] == 'f'))
        fri_call_report(c, cmd, 1, 0, out_mark); /* EVAL/FCALL: MONITOR before */
    /* a command that may block a client that blocks answers in bytes: blocked.c reads
     * them to see whether it blocks, and drops them when it does */
    int tree = (cmd->flags & FRI_CMD_BLOCKING) && c->blocking ? fri_tree_pause(c) : 0;
    uint64_t dirty = s->dirty;
    fri_prop_frame frame;
    if (s->prop) fri_propagate_enter(c, &frame); /* an AOF listens (propagate.c) */
    cmd->proc(c);
    if (s->prop) fri_propagate_leave(c, cmd, &frame, dirty);
    int failed = fri_stats_call_failed(s);
    s->running = outer;
    if ((cmd->flags & FRI_CMD_BLOCKING) || s->blocking) fri_blocked_after_call(c, cmd, out_mark);
    if (tree) fri_tree_resume(c, tree, out_mark);
    uint64_t usec = fri_stats_call_end(c, cmd, start, failed);
    if (s->call_hook) fri_call_report(c, cmd, 0, usec, out_mark);
}

/* A command refused before it runs: inside MULTI it also dooms the transaction
 * (Redis's rejectCommand + flagTransaction). */
static void reject(fr_client *c, const char *msg)
{
    if (c->in_multi) c->dirty_exec = 1;
    fri_stats_rejected(c->srv, c->cmd);
    fri_reply_error(c, msg);
}

/* Redis's rejectCommand turns any refusal of EXEC itself into an aborted transaction
 * (discarded, WATCHes dropped, even outside MULTI), worded "because of: <reason>". */
static void reject_arity(fr_client *c)
{
    fri_stats_rejected(c->srv, c->cmd);
    if (strcmp(c->cmd->name, "exec") == 0) {
        fri_multi_reset(c);
        fri_unwatch_all(c);
        fri_reply_errorf(c, "EXECABORT Transaction discarded because of: wrong number of "
                            "arguments for '%s' command", c->cmd->name);
        return;
    }
    if (c->in_multi) c->dirty_exec = 1;
    fri_reply_arity_error(c);
}

/* Redis's rejectCommand of EXEC itself (execCommandAbort): the transaction discarded, its
 * WATCHes dropped, "-EXECABORT Transaction discarded because of: <reason>". */
static void abort_exec(fr_client *c, const char *reason)
{
    fri_stats_rejected(c->srv, c->cmd);
    fri_multi_reset(c);
    fri_unwatch_all(c);
    fri_reply_errorf(c, "EXECABORT Transaction discarded because of: %s", reason);
}

/* Whether EXEC's queue holds a deny-oom command (Redis's mstate.cmd_flags & CMD_DENYOOM,
 * which queueMultiCommand accumulates): then EXEC itself is refused when over maxmemory. */
static int queue_denies_oom(const fr_client *c)
{
    for (size_t i = 0; i < c->queue_len; i++)
        if (c->queue[i].cmd->flags & FRI_CMD_DENYOOM) return 1;
    return 0;
}

static void reject_unknown(fr_client *c)
{
    fri_buf args = {0};
    for (int i = 1; i < c->argc && args.len < 128; i++) {
        /* Redis prints each argument with %.*s, so it stops at a NUL byte too */
        size_t room = 128 - args.len;
        size_t n = strnlen(c->argv[i].ptr, c->argv[i].len);
        if (n > room) n = room;
        fri_buf_append(&args, "'", 1);
        fri_buf_append(&args, c->argv[i].ptr, n);
        fri_buf_append(&args, "' ", 2);
    }
    size_t nlen = strnlen(c->argv[0].ptr, c->argv[0].len);
    if (nlen > 128) nlen = 128;
    if (c->in_multi) c->dirty_exec = 1;
    fri_reply_errorf(c, "ERR unknown command '%.*s', with args beginning with: %.*s", (int)nlen,
                     c->argv[0].ptr, (int)args.len, args.p ? args.p : "");
    fri_buf_free(&args);
}

static void process_command(fr_client *c)
{
    fr_server *s = c->srv;
    int64_t now = fr_clock_now(s);
    if (now != s->cmd_ms) { /* the pair always changes together, so the LRU clock holds */
        s->cmd_ms = now;
        s->cmd_lru = fri_lru_clock(now);
    }
    c->now_ms = now;

    const fri_command *cmd = lookup_command_cached(s, c->argv[0].ptr, c->argv[0].len);
    if (!cmd) {
        reject_unknown(c);
        return;
    }
    /* Redis 7.0 answers QUIT before any check, whatever follows it.  Its row is the only
     * one without a handler that is not a container, which spares every other command a
     * comparison of its name. */
    if (!cmd->proc && !(cmd->flags & FRI_CMD_CONTAINER) && strcmp(cmd->name, "quit") == 0) {
        c->cmd = cmd;
        uint64_t start = fri_stats_call_begin(s);
        fri_reply_ok(c);
        fri_multi_reset(c);
        fri_unwatch_all(c);
        c->closing = 1;
        fri_stats_call_end(c, cmd, start, 0);
        return;
    }
    if (cmd->subcommands && c->argc >= 2) {
        const fri_command *sub = fri_lookup_subcommand(cmd, &c->argv[1]);
        if (!sub) {
            char upper[64];
            size_t n = strlen(cmd->name);
            for (size_t i = 0; i <= n; i++)
                upper[i] = (cmd->name[i] >= 'a' && cmd->name[i] <= 'z')
                               ? (char)(cmd->name[i] - 32) : cmd->name[i];
            size_t alen = strnlen(c->argv[1].ptr, c->argv[1].len);
            if (alen > 128) alen = 128;
            if (c->in_multi) c->dirty_exec = 1;
            fri_reply_errorf(c, "ERR unknown subcommand '%.*s'. Try %s HELP.", (int)alen,
                             c->argv[1].ptr, upper);
            return;
        }
        cmd = sub;
    }
    c->cmd = cmd;
    if ((cmd->arity > 0 && cmd->arity != c->argc) || c->argc < -cmd->arity || !cmd->proc) {
        reject_arity(c);
        return;
    }
    /* ACLs (acl.c), once any ACL command or AUTH ran; a no-multi command inside MULTI is
     * refused as such first, as processCommand orders them */
    if (s->acl && (fri_acl_noauth(c, cmd) < 0 || (!(c->in_multi && (cmd->flags &
                                                                       FRI_CMD_NO_MULTI)) &&
                                                 fri_acl_check(c, cmd) < 0)))
        return;
    if (s->cluster_enabled && fri_cluster_check(c, cmd) < 0) {
        fri_stats_rejected(s, cmd);
        return;
    }
    /* the gates below are rarely shut: one test of what could shut any of them first.  A
     * new gate (a check that may refuse the command) goes above this test, or adds what
     * can shut it to the test: otherwise most commands skip it. */
    if (!((s->oom_hook != NULL) | s->mem_short | (s->tun.min_replicas_to_write > 0) |
          (c->subs != NULL) | (s->scripting != NULL) | c->in_multi)) {
        fri_call(c, cmd);
        return;
    }
    /* maxmemory, as the embedder's hook tells it (nothing to evict), not re-read while a
     * script runs (Redis's isInsideYieldingLongCommand); and the fake's own shortage: the
     * emergency reserve served an allocation and cannot be made whole again yet (alloc.c,
     * docs/architecture.md "Running out of memory"), refused on the same path */
    if ((s->oom_hook || s->mem_short) && !fr_server_script_busy(s)) {
        fri_evict_before_command(s, now);
        int over = s->mem_short && fri_mem_reacquire(s) < 0;
        int over_maxmemory = s->oom_hook && s->oom_hook(s, s->oom_hook_ctx) != 0;
        s->pre_command_oom = over || over_maxmemory;
        /* over maxmemory (the fake's own shortage dooms the transaction instead) */
        if (over_maxmemory && strcmp(cmd->name, "exec") == 0 && queue_denies_oom(c)) {
            abort_exec(c, FRI_ERR_OOM);
            return;
        }
        if (s->pre_command_oom &&
            (fri_cmd_is_denyoom(c, cmd) ||
             (c->in_multi && strcmp(cmd->name, "exec") && strcmp(cmd->name, "discard") &&
              strcmp(cmd->name, "reset")))) {
            reject(c, FRI_ERR_OOM);
            return;
        }
    }
    /* min-replicas-to-write: the fake has no replicas, so writes are refused */
    if (fri_noreplicas(s) && fri_cmd_is_write(c, cmd)) {
        if (strcmp(cmd->name, "exec") == 0) {
            abort_exec(c, FRI_ERR_NOREPLICAS);
            return;
        }
        reject(c, FRI_ERR_NOREPLICAS);
        return;
    }
    if (c->subs && fri_pubsub_gate(c, cmd) < 0) {
        fri_stats_rejected(s, cmd);
        return;
    }
    /* a script past busy-reply-threshold: only the few commands Redis lets through */
    if (s->scripting && fr_server_script_busy(s) && !(cmd->flags & FRI_CMD_ALLOW_BUSY)) {
        if (strcmp(cmd->name, "exec") == 0) {
            abort_exec(c, fri_script_busy_error(s));
            return;
        }
        reject(c, fri_script_busy_error(s));
        return;
    }
    if (c->in_multi && (cmd->flags & FRI_CMD_NO_MULTI)) {
        reject(c, "ERR Command not allowed inside a transaction");
        return;
    }
    if (c->in_multi && !(cmd->flags & FRI_CMD_MULTI_CTL)) {
        fri_multi_queue(c, cmd);
        return;
    }
    fri_call(c, cmd);
}

/* Points c->argv at the caller's arguments (no copy: they live for the call). */
static int load_args(fr_client *c, int argc, const char *const *argv, const size_t *lens)
{
    if (argc > c->argv_cap) {
        int cap = c->argv_cap ? c->argv_cap : 16;
        while (cap < argc) cap *= 2;
        fri_arg *n = fri_realloc(c->argv_buf, sizeof(*n) * (size_t)cap);
        if (!n) return -1;
        c->argv_buf = n;
        c->argv_cap = cap;
    }
    for (int i = 0; i < argc; i++) {
        c->argv_buf[i].ptr = argv[i];
        c->argv_buf[i].len = lens ? lens[i] : strlen(argv[i]);
    }
    c->argc = argc;
    c->argv = c->argv_buf;
    return 0;
}

#define FRI_KEEP_ARGS 1024 /* argument slots a client keeps between commands */

static void run_one(fr_client *c, int argc, const char *const *argv, const size_t *lens)
{
    assert(!c->bpop); /* a blocked client runs nothing until it is woken */
    assert(!c->srv->scripting || !fri_script_running_for(c)); /* nor one inside its script */
    if (argc <= 0 || !argv) {
        fri_reply_error(c, "ERR empty command");
        return;
    }
    if (load_args(c, argc, argv, lens) < 0) {
        fri_reply_error(c, FRI_ERR_OOM);
        return;
    }
    process_command(c);
    if (c->srv->blocking) fri_blocked_serve_ready(c->srv);
    if (c->argv_cap > FRI_KEEP_ARGS && !c->bpop) {
        /* what a long command made the vector grow to goes back (Redis frees its argv
         * after each command: a freed 100,000-member set must show in used_memory) */
        fri_free(c->argv_buf);
        c->argv_buf = NULL;
        c->argv = NULL;
        c->argv_cap = 0;
    }
}

int fr_client_pause_holds(fr_client *c, int argc, const char *const *argv,
                          const size_t *argvlen)
{
    fr_server *s = c->srv;
    int type = s->pause_type != FR_PAUSE_OFF ? fri_paused(s) : FR_PAUSE_OFF;
    if (type == FR_PAUSE_OFF || argc <= 0 || !argv) return 0;
    /* processCommand answers an unknown command or a wrong arity before it looks at the
     * pause */
    const fri_command *cmd = lookup_command_cached(s, argv[0], argvlen ? argvlen[0]
                                                                       : strlen(argv[0]));
    if (!cmd) return 0;
    if (cmd->subcommands) {
        if (argc < 2) return 0;
        fri_arg sub = {argv[1], argvlen ? argvlen[1] : strlen(argv[1])};
        if (!(cmd = fri_lookup_subcommand(cmd, &sub))) return 0;
    }
    if ((cmd->arity > 0 && cmd->arity != argc) || argc < -cmd->arity || !cmd->proc) return 0;
    if (type == FR_PAUSE_ALL) return 1;
    if (load_args(c, argc, argv, argvlen) < 0) return 0; /* the script's flags read argv */
    return fri_cmd_may_replicate(c, cmd);
}

static void begin_call(fr_client *c)
{
    c->out.len = 0;
    fri_arena_reset(c);
}

/* Each entry point runs guarded (fri_mem_enter): an allocation that fails is served by
 * the server's reserve, so a command never stops half-way (alloc.c).  fr_exec and
 * fr_pipeline have the writers build their trees (reply.c); fr_exec_resp has them write
 * bytes. */
const char *fr_exec_resp(fr_client *c, int argc, const char *const *argv,
                         const size_t *argvlen, size_t *len)
{
    fr_server *guard = fri_mem_enter(c->srv, "fr_exec_resp");
    begin_call(c);
    fri_tree_begin(c, 1, 0); /* only in the tests' check */
    run_one(c, argc, argv, argvlen);
    const fr_reply *roots;
    fri_tree_end(c, &roots);
    fri_mem_leave(guard);
    if (len) *len = c->out.len;
    return c->out.p;
}

const fr_reply *fr_exec(fr_client *c, int argc, const char *const *argv, const size_t *argvlen)
{
    fr_server *guard = fri_mem_enter(c->srv, "fr_exec");
    const fr_reply *r;
    fri_arena_reset(c);
    if (fri_tree_begin_one(c)) { /* the common case, kept short (c->out unused) */
        run_one(c, argc, argv, argvlen);
        r = fri_tree_end_one(c);
    } else {
        c->out.len = 0;
        fri_tree_begin(c, 1, 1);
        run_one(c, argc, argv, argvlen);
        size_t n = fri_tree_end(c, &r);
        if (c->bpop) r = NULL;
        else if (n == (size_t)-1) r = fri_parse_reply(c); /* a RESP3 client's bytes */
    }
    fri_mem_leave(guard);
    return r;
}

int fr_pipeline(fr_client *c, size_t n, const fr_command *cmds, const fr_reply **replies)
{
    fr_server *guard = fri_mem_enter(c->srv, "fr_pipeline");
    begin_call(c);
    fri_tree_begin(c, n, 1);
    size_t ran = 0;
    while (ran < n && !c->bpop) {
        run_one(c, cmds[ran].argc, cmds[ran].argv, cmds[ran].argvlen);
        ran++;
    }
    if (c->bpop) ran--; /* the last one blocked: it answered nothing */
    const fr_reply *roots;
    size_t have = fri_tree_end(c, &roots);
    if (have == (size_t)-1) {
        fri_parse_replies(c, ran, replies); /* a RESP3 client's bytes */
    } else {
        assert(have >= ran);
        for (size_t i = 0; i < ran; i++) replies[i] = &roots[i];
    }
    for (size_t i = ran; i < n; i++) replies[i] = NULL;
    fri_mem_leave(guard);
    return 0;
}

const fr_reply *fr_exec_line(fr_client *c, const char *line)
{
    char **argv;
    size_t *lens;
    int argc = fr_split_line(line, &argv, &lens);
    if (argc < 0) { /* unbalanced quotes, or out of memory before anything ran */
        const fr_reply *r;
        fr_server *guard = fri_mem_enter(c->srv, "fr_exec_line");
        begin_call(c);
        fri_reply_error(c, "ERR Protocol error: unbalanced quotes in request");
        fri_parse_replies(c, 1, &r);
        fri_mem_leave(guard);
        return r;
    }
    const fr_reply *r = fr_exec(c, argc, (const char *const *)argv, lens);
    fr_split_free(argc, argv, lens);
    return r;
}

/* ----- Connection commands -------------------------------------------------------------- */

static void ping_command(fr_client *c)
{
    if (c->argc > 2) {
        fri_reply_arity_error(c);
        return;
    }
    if (c->subs && fri_pubsub_ping(c)) return;
    if (c->argc == 1) fri_reply_status_lit(c, "PONG");
    else fri_reply_bulk(c, c->argv[1].ptr, c->argv[1].len);
}

static void echo_command(fr_client *c) { fri_reply_bulk(c, c->argv[1].ptr, c->argv[1].len); }

static void time_command(fr_client *c)
{
    int64_t now = c->now_ms;
    fri_reply_array_len(c, 2);
    fri_reply_bulk_ll(c, now / 1000);
    fri_reply_bulk_ll(c, (now % 1000) * 1000);
}

const fri_command fri_connection_commands[] = {
    {"ping", ping_command, -1, FRI_CMD_FAST, "connection", 0, 0, 0, NULL, NULL},
    {"echo", echo_command, 2, FRI_CMD_FAST, "connection", 0, 0, 0, NULL, NULL},
    {"time", time_command, 1, FRI_CMD_FAST | FRI_CMD_LOADING | FRI_CMD_STALE, "server", 0, 0,
     0, NULL, NULL},
    {"quit", NULL, -1, FRI_CMD_MULTI_CTL | FRI_CMD_FAST, "connection", 0, 0, 0, NULL, NULL},
    {0},
};
