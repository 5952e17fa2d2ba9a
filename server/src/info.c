/* info.c -- INFO in redis-server 7.0.15's format (sections, field names and order, CRLF
 * lines), and the CLIENT LIST / CLIENT INFO line.
 *
 * The figures are the server's own where it has them (clients, connections, commands,
 * bytes, blocked clients, keys); the rest are the values an idle redis-server with no
 * persistence reports, so a client's ready check (loading:0, role:master, ...) passes. */
#define _GNU_SOURCE /* mallinfo2 */
#include <malloc.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>

#include "frs.h"

/* A growing text. */
typedef struct text {
    char *p;    /* the bytes, NUL-terminated */
    size_t len; /* bytes used */
    size_t cap; /* bytes allocated */
} text;

static void tprintf(text *t, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Appends printf-formatted text. */
static void tprintf(text *t, const char *fmt, ...)
{
    for (;;) {
        va_list ap;
        va_start(ap, fmt);
        int n = vsnprintf(t->p ? t->p + t->len : NULL, t->p ? t->cap - t->len : 0, fmt, ap);
        va_end(ap);
        if (n < 0) return;
        if (t->p && (size_t)n < t->cap - t->len) {
            t->len += (size_t)n;
            return;
        }
        size_t cap = t->cap ? t->cap : 1024;
        while (cap - t->len <= (size_t)n) cap *= 2;
        char *np = realloc(t->p, cap);
        if (!np) frs_oom_abort(__func__);
        t->p = np;
        t->cap = cap;
    }
}

/* Redis's bytesToHuman: 1.20M, 512B, ... */
static void human(char *buf, size_t cap, unsigned long long n)
{
    const char *units = "BKMGTPE";
    double d = (double)n;
    int u = 0;
    while (d >= 1024 && u < 6) {
        d /= 1024;
        u++;
    }
    if (u == 0) snprintf(buf, cap, "%lluB", n);
    else snprintf(buf, cap, "%.2f%c", d, units[u]);
}

/* The live keys and keys with a TTL of each database, at the fake's clock (nothing
 * expires, no command is counted). */
static void keyspace_counts(frs_server *srv, size_t keys[16], size_t expires[16])
{
    for (int db = 0; db < 16; db++)
        if (fr_db_counts(srv->fake, db, &keys[db], &expires[db]) != 0) keys[db] = expires[db] = 0;
}

/* INFO's blocked_clients. */
static size_t count_blocked(frs_server *srv)
{
    return fr_server_blocked_count(srv->fake) + srv->npaused; /* Redis counts BLOCKED_POSTPONE */
}

/* Each section_* appends one INFO section, its "# Name" line first, CRLF lines. */
static void section_server(frs_server *srv, text *t)
{
    struct utsname un;
    if (uname(&un) != 0) memset(&un, 0, sizeof(un));
    time_t now = time(NULL);
    long long up = (long long)(frs_mono_ms() - srv->start_ms) / 1000;
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
/* Appends printf-formatted text. */
    tprintf(t,
            "# Server\r\n"
            "redis_version:%s\r\n"
            "redis_git_sha1:00000000\r\n"
            "redis_git_dirty:0\r\n"
            "redis_build_id:0\r\n"
            "redis_mode:%s\r\n"
            "os:%s %s %s\r\n"
            "arch_bits:%d\r\n"
            "monotonic_clock:POSIX clock_gettime\r\n"
            "multiplexing_api:epoll\r\n"
            "atomicvar_api:c11-builtin\r\n"
            "gcc_version:0.0.0\r\n"
            "process_id:%ld\r\n"
            "process_supervised:no\r\n"
            "run_id:%s\r\n"
            "tcp_port:%d\r\n"
            "server_time_usec:%lld\r\n"
            "uptime_in_seconds:%lld\r\n"
            "uptime_in_days:%lld\r\n"
            "hz:10\r\n"
            "configured_hz:10\r\n"
            "lru_clock:%lld\r\n"
            "executable:fakeredis-server\r\n"
            "config_file:\r\n"
            "io_threads_active:0\r\n"
            "fakeredis_version:%s\r\n"
            "fakeredis_clock:%s\r\n"
            "fakeredis_clock_ms:%lld\r\n",
            frs_redis_version(srv), srv->opt.cluster ? "cluster" : "standalone", un.sysname,
            un.release, un.machine, (int)(sizeof(void *) * 8), (long)getpid(), srv->run_id,
            srv->tcp_port, (long long)ts.tv_sec * 1000000 + ts.tv_nsec / 1000, up,
            up / 86400, (long long)(now & ((1 << 24) - 1)), FR_VERSION,
            srv->opt.wall_clock ? "wall" : srv->opt.auto_advance_ms ? "auto" : "virtual",
            (long long)fr_clock_now(srv->fake));
}

static void section_clients(frs_server *srv, text *t)
{
    frs_tracking_stats trk;
    frs_tracking_stats_get(srv, &trk);
    size_t maxin = 0, maxout = 0;
    for (frs_conn *c = srv->conns; c; c = c->next) {
        if (rr_pending(&c->in) > maxin) maxin = rr_pending(&c->in);
        if (frs_obuf_pending(&c->out) > maxout) maxout = frs_obuf_pending(&c->out);
    }
/* Appends printf-formatted text. */
    tprintf(t,
            "# Clients\r\n"
            "connected_clients:%zu\r\n"
            "cluster_connections:0\r\n"
            "maxclients:%lld\r\n"
            "client_recent_max_input_buffer:%zu\r\n"
            "client_recent_max_output_buffer:%zu\r\n"
            "blocked_clients:%zu\r\n"
            "tracking_clients:%zu\r\n"
            "clients_in_timeout_table:%zu\r\n",
            srv->nconns, srv->maxclients, maxin, maxout, count_blocked(srv), trk.clients,
            fr_server_blocked_count(srv->fake)); /* a paused client has no timeout */
}

unsigned long long frs_used_memory(void)
{
    struct mallinfo2 mi = mallinfo2();
    unsigned long long used = mi.uordblks + mi.hblkhd;
    if (used) return used;
    /* an allocator that does not fill mallinfo2 (AddressSanitizer's): the resident size */
    FILE *f = fopen("/proc/self/statm", "r");
    unsigned long long pages = 0, resident = 0;
    if (f) {
        if (fscanf(f, "%llu %llu", &pages, &resident) != 2) resident = 0;
        fclose(f);
    }
    return resident * (unsigned long long)sysconf(_SC_PAGESIZE);
}

static void section_memory(frs_server *srv, text *t)
{
    unsigned long long used = frs_used_memory();
    char h1[32], h2[32];
    human(h1, sizeof(h1), used);
    human(h2, sizeof(h2), used);
    const char *policy = frs_config_get(srv, "maxmemory-policy");
    const char *maxmem = frs_config_get(srv, "maxmemory");
    unsigned long long mm = maxmem ? strtoull(maxmem, NULL, 10) : 0;
    char h3[32];
    human(h3, sizeof(h3), mm);
/* Appends printf-formatted text. */
    tprintf(t,
            "# Memory\r\n"
            "used_memory:%llu\r\n"
            "used_memory_human:%s\r\n"
            "used_memory_rss:%llu\r\n"
            "used_memory_rss_human:%s\r\n"
            "used_memory_peak:%llu\r\n"
            "used_memory_peak_human:%s\r\n"
            "used_memory_lua:32768\r\n"
            "used_memory_scripts:0\r\n"
            "number_of_cached_scripts:%zu\r\n"
            "number_of_functions:0\r\n"
            "number_of_libraries:0\r\n"
            "maxmemory:%llu\r\n"
            "maxmemory_human:%s\r\n"
            "maxmemory_policy:%s\r\n"
            "mem_fragmentation_ratio:1.00\r\n"
            "mem_not_counted_for_evict:0\r\n" /* no AOF buffer, no replicas */
            "mem_allocator:jemalloc-5.3.0\r\n" /* MEMORY USAGE counts in its size classes */
            "lazyfree_pending_objects:0\r\n"
            "lazyfreed_objects:0\r\n",
            used, h1, used, h2, used, h1, fr_server_script_count(srv->fake), mm, h3,
            policy ? policy : "noeviction");
}

static void section_persistence(frs_server *srv, text *t)
{
    frs_persist_figures f;
    frs_persist_info(srv, &f);
    frs_aof_figures a;
    frs_aof_info(srv, &a);
    tprintf(t,
            "# Persistence\r\n"
            "loading:0\r\n"
            "async_loading:0\r\n"
            "current_cow_peak:0\r\n"
            "current_cow_size:0\r\n"
            "current_cow_size_age:0\r\n"
            "current_fork_perc:0.00\r\n"
            "current_save_keys_processed:0\r\n"
            "current_save_keys_total:0\r\n"
            "rdb_changes_since_last_save:%lld\r\n"
            "rdb_bgsave_in_progress:%d\r\n"
            "rdb_last_save_time:%lld\r\n"
            "rdb_last_bgsave_status:%s\r\n"
            "rdb_last_bgsave_time_sec:%lld\r\n"
            "rdb_current_bgsave_time_sec:%lld\r\n"
            "rdb_saves:%lld\r\n"
            "rdb_last_cow_size:0\r\n"
            "rdb_last_load_keys_expired:%lld\r\n"
            "rdb_last_load_keys_loaded:%lld\r\n"
            "aof_enabled:%d\r\n"
            "aof_rewrite_in_progress:%d\r\n"
            "aof_rewrite_scheduled:%d\r\n"
            "aof_last_rewrite_time_sec:%lld\r\n"
            "aof_current_rewrite_time_sec:%lld\r\n"
            "aof_last_bgrewrite_status:%s\r\n"
            "aof_rewrites:%lld\r\n"
            "aof_rewrites_consecutive_failures:%lld\r\n"
            "aof_last_write_status:%s\r\n"
            "aof_last_cow_size:0\r\n"
            "module_fork_in_progress:0\r\n"
            "module_fork_last_cow_size:0\r\n",
            f.changes, f.bgsave_in_progress, f.last_save_time, f.last_bgsave_ok ? "ok" : "err",
            f.last_bgsave_secs, f.current_bgsave_secs, f.saves, f.keys_expired, f.keys_loaded,
            a.enabled, a.rewrite_in_progress, a.rewrite_scheduled, a.last_rewrite_secs,
            a.current_rewrite_secs, a.last_bgrewrite_ok ? "ok" : "err", a.rewrites,
            a.consecutive_failures, a.last_write_ok ? "ok" : "err");
    if (a.enabled)
        tprintf(t,
                "aof_current_size:%lld\r\n"
                "aof_base_size:%lld\r\n"
                "aof_pending_rewrite:%d\r\n"
                "aof_buffer_length:%lld\r\n"
                "aof_pending_bio_fsync:0\r\n"
                "aof_delayed_fsync:%lld\r\n",
                a.current_size, a.base_size, a.rewrite_scheduled, a.buffer_length,
                a.delayed_fsync);
}

/* total_commands_processed: Redis counts every call() (a command inside EXEC too, a
 * blocked one once, a refused one never), which is the sum of the calls of every row. */
static unsigned long long commands_processed(frs_server *srv)
{
    unsigned long long n = 0;
    size_t rows = fr_stats_command_rows(srv->fake);
    for (size_t i = 0; i < rows; i++) {
        fr_command_stats st;
        if (fr_stats_command_at(srv->fake, i, &st) == 0) n += st.calls;
    }
    return n;
}

static void section_stats(frs_server *srv, text *t)
{
    const frs_stats *s = &srv->stats;
    frs_tracking_stats trk;
    frs_tracking_stats_get(srv, &trk);
    size_t channels = 0;
    (void)channels;
/* Appends printf-formatted text. */
    tprintf(t,
            "# Stats\r\n"
            "total_connections_received:%llu\r\n"
            "total_commands_processed:%llu\r\n"
            "instantaneous_ops_per_sec:0\r\n"
            "total_net_input_bytes:%llu\r\n"
            "total_net_output_bytes:%llu\r\n"
            "instantaneous_input_kbps:0.00\r\n"
            "instantaneous_output_kbps:0.00\r\n"
            "rejected_connections:%llu\r\n"
            "sync_full:0\r\n"
            "sync_partial_ok:0\r\n"
            "sync_partial_err:0\r\n"
            "expired_keys:%llu\r\n"
            "expired_stale_perc:0.00\r\n"
            "expired_time_cap_reached_count:0\r\n"
            "evicted_keys:%llu\r\n"
            "evicted_clients:0\r\n"
            "keyspace_hits:0\r\n"
            "keyspace_misses:0\r\n"
            "pubsub_channels:0\r\n"
            "pubsub_patterns:0\r\n"
            "pubsubshard_channels:0\r\n"
            "latest_fork_usec:0\r\n"
            "total_forks:0\r\n"
            "migrate_cached_sockets:0\r\n"
            "slave_expires_tracked_keys:0\r\n"
            "active_defrag_hits:0\r\n"
            "active_defrag_misses:0\r\n"
            "active_defrag_key_hits:0\r\n"
            "active_defrag_key_misses:0\r\n"
            "total_active_defrag_time:0\r\n"
            "current_active_defrag_time:0\r\n"
            "tracking_total_keys:%zu\r\n"
            "tracking_total_items:%zu\r\n"
            "tracking_total_prefixes:%zu\r\n"
            "unexpected_error_replies:0\r\n"
            "total_error_replies:%llu\r\n"
            "dump_payload_sanitizations:0\r\n"
            "total_reads_processed:0\r\n"
            "total_writes_processed:0\r\n"
            "io_threaded_reads_processed:0\r\n"
            "io_threaded_writes_processed:0\r\n"
            "reply_buffer_shrinks:0\r\n"
            "reply_buffer_expands:0\r\n"
            "client_output_buffer_limit_disconnections:%llu\r\n"
            "fakeredis_commands_executed:%llu\r\n"
            "fakeredis_faults_fired:%llu\r\n",
            s->connections, commands_processed(srv), s->net_in, s->net_out, s->rejected,
            (unsigned long long)fr_server_expired_keys(srv->fake),
            (unsigned long long)fr_server_evicted_keys(srv->fake), trk.keys, trk.items,
            trk.prefixes,
            (unsigned long long)fr_stats_total_error_replies(srv->fake),
            s->outlimit_kills, (unsigned long long)fr_server_commands_executed(srv->fake),
            (unsigned long long)fr_fault_fired(srv->fake));
}

static void section_replication(frs_server *srv, text *t)
{
    (void)srv;
/* Appends printf-formatted text. */
    tprintf(t, "# Replication\r\n"
               "role:master\r\n"
               "connected_slaves:0\r\n"
               "master_failover_state:no-failover\r\n"
               "master_replid:0000000000000000000000000000000000000000\r\n"
               "master_replid2:0000000000000000000000000000000000000000\r\n"
               "master_repl_offset:0\r\n"
               "second_repl_offset:-1\r\n"
               "repl_backlog_active:0\r\n"
               "repl_backlog_size:1048576\r\n"
               "repl_backlog_first_byte_offset:0\r\n"
               "repl_backlog_histlen:0\r\n");
}

static void section_cpu(frs_server *srv, text *t)
{
    (void)srv;
    struct timespec ts;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
/* Appends printf-formatted text. */
    tprintf(t, "# CPU\r\nused_cpu_sys:0.000000\r\nused_cpu_user:%ld.%06ld\r\n"
               "used_cpu_sys_children:0.000000\r\nused_cpu_user_children:0.000000\r\n",
            (long)ts.tv_sec, ts.tv_nsec / 1000);
}

static void section_modules(frs_server *srv, text *t)
{
    (void)srv;
    tprintf(t, "# Modules\r\n");
}

/* Redis's getSafeInfoString: '#', ':', CR and LF become '_' in a name INFO prints. */
static void safe_name(char *dst, size_t cap, const char *p, size_t len)
{
    size_t n = len < cap - 1 ? len : cap - 1;
    for (size_t i = 0; i < n; i++)
        dst[i] = (p[i] == '#' || p[i] == ':' || p[i] == '\n' || p[i] == '\r') ? '_' : p[i];
    dst[n] = '\0';
}

/* The fake counts every command, the server's own included (fr_stats_record_call):
 * rows with any call, rejection or failure, in the command table's order (Redis's is the
 * order of its command dict). */
static void section_commandstats(frs_server *srv, text *t)
{
    tprintf(t, "# Commandstats\r\n");
    size_t n = fr_stats_command_rows(srv->fake);
    for (size_t i = 0; i < n; i++) {
        fr_command_stats st;
        if (fr_stats_command_at(srv->fake, i, &st) < 0) break;
        if (!st.calls && !st.failed_calls && !st.rejected_calls) continue;
        char name[160];
        safe_name(name, sizeof(name), st.name, strlen(st.name));
        tprintf(t,
                "cmdstat_%s:calls=%llu,usec=%llu,usec_per_call=%.2f,rejected_calls=%llu,"
                "failed_calls=%llu\r\n",
                name, (unsigned long long)st.calls, (unsigned long long)st.usec,
                st.calls ? (double)((float)st.usec / (float)st.calls) : 0.0,
                (unsigned long long)st.rejected_calls, (unsigned long long)st.failed_calls);
    }
}

/* One line per error prefix, in byte order as Redis's radix tree keeps them. */
static void section_errorstats(frs_server *srv, text *t)
{
    tprintf(t, "# Errorstats\r\n");
    for (size_t i = 0; i < fr_stats_error_count(srv->fake); i++) {
        const char *p;
        size_t len;
        uint64_t count;
        if (fr_stats_error_at(srv->fake, i, &p, &len, &count) < 0) break;
        char name[160];
        safe_name(name, sizeof(name), p, len);
        tprintf(t, "errorstat_%s:count=%llu\r\n", name, (unsigned long long)count);
    }
}

/* latency_percentiles_usec_<cmd>:p50=...,p99=...: the percentiles of
 * latency-tracking-info-percentiles, when latency-tracking is on. */
static void section_latencystats(frs_server *srv, text *t)
{
    tprintf(t, "# Latencystats\r\n");
    const char *on = frs_config_get(srv, "latency-tracking");
    if (on && strcmp(on, "yes") != 0) return;
    double pct[64];
    const char *err;
    const char *conf = frs_config_get(srv, "latency-tracking-info-percentiles");
    int np = frs_parse_percentiles(conf ? conf : "", pct, 64, NULL, 0, &err);
    if (np > 64) np = 64;
    size_t n = fr_stats_command_rows(srv->fake);
    for (size_t i = 0; i < n; i++) {
        fr_command_stats st;
        if (fr_stats_command_at(srv->fake, i, &st) < 0) break;
        if (!st.has_latency) continue;
        char name[160];
        safe_name(name, sizeof(name), st.name, strlen(st.name));
        tprintf(t, "latency_percentiles_usec_%s:", name);
        for (int j = 0; j < np; j++) {
            char f[128];
            snprintf(f, sizeof(f), "%f", pct[j]);
            if (strchr(f, '.')) {
                size_t fl = strlen(f);
                while (fl && f[fl - 1] == '0') fl--;
                if (fl && f[fl - 1] == '.') fl--;
                f[fl] = '\0';
            }
            double us = 0;
            fr_stats_latency_at(srv->fake, i, pct[j], &us);
            tprintf(t, "p%s=%.3f%s", f, us, j + 1 < np ? "," : "");
        }
        tprintf(t, "\r\n");
    }
}

static void section_cluster(frs_server *srv, text *t)
{
    tprintf(t, "# Cluster\r\ncluster_enabled:%d\r\n", srv->opt.cluster ? 1 : 0);
}

static void section_keyspace(frs_server *srv, text *t)
{
    size_t keys[16], expires[16];
    keyspace_counts(srv, keys, expires);
    tprintf(t, "# Keyspace\r\n");
    for (int i = 0; i < 16; i++)
        if (keys[i])
            tprintf(t, "db%d:keys=%zu,expires=%zu,avg_ttl=0\r\n", i, keys[i], expires[i]);
}

typedef struct section {
    const char *name;                           /* lower case, as INFO's argument */
    const char *alias;                          /* another name for it, or NULL */
    void (*fn)(frs_server *srv, text *t);       /* writes it */
    int in_default;                             /* part of INFO without arguments */
} section;

/* In the order Redis prints them (genRedisInfoString). */
static const section sections[] = {
    {"server", NULL, section_server, 1},
    {"clients", NULL, section_clients, 1},
    {"memory", NULL, section_memory, 1},
    {"persistence", NULL, section_persistence, 1},
    {"stats", NULL, section_stats, 1},
    {"replication", NULL, section_replication, 1},
    {"cpu", NULL, section_cpu, 1},
    {"module_list", "modules", section_modules, 1},
    {"commandstats", NULL, section_commandstats, 0},
    {"errorstats", NULL, section_errorstats, 1},
    {"latencystats", NULL, section_latencystats, 0},
    {"cluster", NULL, section_cluster, 1},
    {"keyspace", NULL, section_keyspace, 1},
};
#define NSECTIONS (sizeof(sections) / sizeof(sections[0]))

char *frs_info_text(frs_server *srv, int argc, const char *const *argv, size_t *len)
{
    /* genInfoSectionDict: no argument or "default" are the default sections, "all" and
     * "everything" every section, any other word the section of that name */
    int want[NSECTIONS] = {0};
    if (argc == 0) {
        for (size_t i = 0; i < NSECTIONS; i++) want[i] = sections[i].in_default;
    }
    for (int a = 0; a < argc; a++) {
        int all = strcasecmp(argv[a], "all") == 0 || strcasecmp(argv[a], "everything") == 0;
        int def = strcasecmp(argv[a], "default") == 0;
        for (size_t i = 0; i < NSECTIONS; i++)
            if (all || (def && sections[i].in_default) ||
                strcasecmp(argv[a], sections[i].name) == 0 ||
                (sections[i].alias && strcasecmp(argv[a], sections[i].alias) == 0))
                want[i] = 1;
    }
    text t = {0};
    tprintf(&t, "%s", "");
    int first = 1;
    for (size_t i = 0; i < NSECTIONS; i++) {
        if (!want[i]) continue;
        if (!first) tprintf(&t, "\r\n");
        first = 0;
        sections[i].fn(srv, &t);
    }
    *len = t.len;
    return t.p;
}

void frs_cmd_info(frs_conn *c, int argc, const char *const *argv, const size_t *argvlen)
{
    /* Section names as C strings (arguments are binary safe, names are short). */
    char names[16][32];
    const char *ptrs[16];
    int n = 0;
    for (int i = 1; i < argc && n < 16; i++) {
        snprintf(names[n], sizeof(names[n]), "%.*s", (int)(argvlen[i] < 31 ? argvlen[i] : 31),
                 argv[i]);
        ptrs[n] = names[n];
        n++;
    }
    size_t len;
    char *txt = frs_info_text(c->srv, n, ptrs, &len);
    frs_reply_verbatim(c, txt, len);
    free(txt);
}

void frs_client_line(frs_conn *c, char *buf, size_t cap)
{
    char flags[16];
    int nf = 0;
    int subs = 0;
    subs = (int)fr_client_subscriptions(c->fc);
    if (c->monitor) flags[nf++] = 'O';
    if (subs) flags[nf++] = 'P';
    if (fr_client_in_multi(c->fc)) flags[nf++] = 'x';
    if (c->blocked || c->paused) flags[nf++] = 'b'; /* a pause blocks it (BLOCKED_POSTPONE) */
    if (c->tracking & FRS_TRACK_ON) flags[nf++] = 't';
    if (c->tracking & FRS_TRACK_BROKEN) flags[nf++] = 'R';
    if (c->tracking & FRS_TRACK_BCAST) flags[nf++] = 'B';
    if (c->close_after_reply) flags[nf++] = 'c';
    if (c->close_asap) flags[nf++] = 'A';
    if (c->is_unix) flags[nf++] = 'U';
    if (nf == 0) flags[nf++] = 'N';
    flags[nf] = '\0';
    int64_t now = frs_mono_ms();
    /* Redis trims a query buffer after the commands of one read ran: the connection whose
     * command runs still has that command's bytes (qbuf=26 for CLIENT LIST itself), the
     * others only what they have not parsed yet */
    size_t qbuf = c == frs_admin_current(c->srv) ? c->in.len : rr_pending(&c->in);
    size_t pend = frs_obuf_pending(&c->out);
    size_t ulen;
    const char *user = fr_client_user(c->fc, &ulen); /* its ACL user (the fake's acl.c) */
    snprintf(buf, cap,
             "id=%llu addr=%s laddr=%s fd=%d name=%s age=%lld idle=%lld flags=%s db=%d "
             "sub=%d psub=0 ssub=0 multi=%ld qbuf=%zu qbuf-free=%zu argv-mem=0 multi-mem=0 "
             "rbs=%zu rbp=0 obl=%zu oll=0 omem=%zu tot-mem=%zu events=r%s cmd=%s "
             "user=%.*s redir=%lld resp=%d",
             (unsigned long long)c->id, c->addr, c->laddr, c->fd, c->name ? c->name : "",
             (long long)(now - c->ctime_ms) / 1000, (long long)(now - c->last_ms) / 1000,
             flags, fr_client_db(c->fc), subs,
             fr_client_in_multi(c->fc) ? (long)c->queue_len : -1L, qbuf,
             frs_qb_free(c, qbuf), c->in.cap, pend, pend,
             c->in.cap + c->out.cap, c->want_write ? "w" : "", c->last_cmd, (int)ulen, user,
             (c->tracking & FRS_TRACK_ON) ? (long long)c->track_redir : -1LL, c->resp);
}
