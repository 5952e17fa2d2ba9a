/* cmdtable.c -- the server's command table: every row of the fake's table (fr_command_at)
 * plus the server's own commands, looked up by name once per request.
 *
 * The server needs its own view of the fake's rows to check what Redis checks before
 * authentication (an unknown name or a wrong arity is answered as such even before AUTH,
 * NOAUTH only after).  COMMAND is the fake's (command.c): the server declares its own
 * commands to it (frs_cmdtable_declare), so COMMAND describes them too. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "frs.h"

/* The server's own rows.  Arity and flags are Redis 7.0's.  A container is a row with
 * is_container set whose subcommands follow as "name|sub" rows. */
static const frs_cmd host_rows[] = {
    {"hello", -1, FRS_CMD_NOAUTH | FRS_CMD_ALLOW_BUSY, frs_cmd_hello, "connection", NULL, 0, 0, 0, 0, 0},
    {"auth", -2, FRS_CMD_NOAUTH | FRS_CMD_ALLOW_BUSY, frs_cmd_auth, "connection", NULL, 0, 0, 0, 0, 0},
    {"quit", -1, FRS_CMD_NOAUTH | FRS_CMD_MULTICTL | FRS_CMD_PUBSUBOK | FRS_CMD_ALLOW_BUSY,
     frs_cmd_quit,
     "connection", NULL, 0, 0, 0, 0, 0},
    {"reset", 1, FRS_CMD_NOAUTH | FRS_CMD_MULTICTL | FRS_CMD_PUBSUBOK | FRS_CMD_ALLOW_BUSY,
     frs_cmd_reset,
     "connection", NULL, 0, 0, 0, 0, 0},
    {"info", -1, 0, frs_cmd_info, "server", NULL, 0, 0, 0, 0, 0},
    {"role", 1, 0, frs_cmd_role, "server", NULL, 0, 0, 0, 0, 0},
    {"lastsave", 1, 0, frs_cmd_lastsave, "server", NULL, 0, 0, 0, 0, 0},
    {"wait", 3, 0, frs_cmd_wait, "generic", NULL, 0, 0, 0, 0, 0},
    {"save", 1, FRS_CMD_NOMULTI, frs_cmd_save, "server", NULL, 0, 0, 0, 0, 0},
    {"bgsave", -1, 0, frs_cmd_bgsave, "server", NULL, 0, 0, 0, 0, 0},
    {"shutdown", -1, FRS_CMD_NOMULTI | FRS_CMD_ALLOW_BUSY, frs_cmd_shutdown, "server", NULL, 0, 0, 0, 0, 0},
    {"client", -2, 0, NULL, "connection", NULL, 1, 0, 0, 0, 0},
    {"client|setname", 3, 0, frs_cmd_client_setname, "connection", NULL, 0, 0, 0, 0, 0},
    {"client|getname", 2, 0, frs_cmd_client_getname, "connection", NULL, 0, 0, 0, 0, 0},
    {"client|id", 2, 0, frs_cmd_client_id, "connection", NULL, 0, 0, 0, 0, 0},
    {"client|info", 2, 0, frs_cmd_client_info, "connection", NULL, 0, 0, 0, 0, 0},
    {"client|list", -2, 0, frs_cmd_client_list, "connection", NULL, 0, 0, 0, 0, 0},
    {"client|kill", -3, 0, frs_cmd_client_kill, "connection", NULL, 0, 0, 0, 0, 0},
    {"client|reply", 3, 0, frs_cmd_client_reply, "connection", NULL, 0, 0, 0, 0, 0},
    {"client|no-evict", 3, 0, frs_cmd_client_noevict, "connection", NULL, 0, 0, 0, 0, 0},
    {"client|unblock", -3, 0, frs_cmd_client_unblock, "connection", NULL, 0, 0, 0, 0, 0},
    {"client|getredir", 2, 0, frs_cmd_client_getredir, "connection", NULL, 0, 0, 0, 0, 0},
    {"client|pause", -3, 0, frs_cmd_client_pause, "connection", NULL, 0, 0, 0, 0, 0},
    {"client|unpause", 2, 0, frs_cmd_client_unpause, "connection", NULL, 0, 0, 0, 0, 0},
    {"client|help", 2, 0, frs_cmd_client_help, "connection", NULL, 0, 0, 0, 0, 0},
    {"config", -2, 0, NULL, "server", NULL, 1, 0, 0, 0, 0},
    {"config|get", -3, 0, frs_cmd_config_get, "server", NULL, 0, 0, 0, 0, 0},
    {"config|set", -4, 0, frs_cmd_config_set, "server", NULL, 0, 0, 0, 0, 0},
    {"config|resetstat", 2, 0, frs_cmd_config_resetstat, "server", NULL, 0, 0, 0, 0, 0},
    {"config|rewrite", 2, 0, frs_cmd_config_rewrite, "server", NULL, 0, 0, 0, 0, 0},
    {"config|help", 2, 0, frs_cmd_config_help, "server", NULL, 0, 0, 0, 0, 0},
    {"client|tracking", -3, 0, frs_cmd_client_tracking, "connection", NULL, 0, 0, 0, 0, 0},
    {"client|caching", 3, 0, frs_cmd_client_caching, "connection", NULL, 0, 0, 0, 0, 0},
    {"client|trackinginfo", 2, 0, frs_cmd_client_trackinginfo, "connection", NULL, 0, 0, 0, 0, 0},
    /* Introspection and administration (admin.c). */
    {"monitor", 1, 0, frs_cmd_monitor, "server", NULL, 0, 0, 0, 0, 0},
    {"slowlog", -2, 0, NULL, "server", NULL, 1, 0, 0, 0, 0},
    {"slowlog|get", -2, 0, frs_cmd_slowlog_get, "server", NULL, 0, 0, 0, 0, 0},
    {"slowlog|len", 2, 0, frs_cmd_slowlog_len, "server", NULL, 0, 0, 0, 0, 0},
    {"slowlog|reset", 2, 0, frs_cmd_slowlog_reset, "server", NULL, 0, 0, 0, 0, 0},
    {"slowlog|help", 2, 0, frs_cmd_slowlog_help, "server", NULL, 0, 0, 0, 0, 0},
    {"latency", -2, 0, NULL, "server", NULL, 1, 0, 0, 0, 0},
    {"latency|doctor", 2, 0, frs_cmd_latency_doctor, "server", NULL, 0, 0, 0, 0, 0},
    {"latency|graph", 3, 0, frs_cmd_latency_graph, "server", NULL, 0, 0, 0, 0, 0},
    {"latency|histogram", -2, 0, frs_cmd_latency_histogram, "server", NULL, 0, 0, 0, 0, 0},
    {"latency|history", 3, 0, frs_cmd_latency_history, "server", NULL, 0, 0, 0, 0, 0},
    {"latency|latest", 2, 0, frs_cmd_latency_latest, "server", NULL, 0, 0, 0, 0, 0},
    {"latency|reset", -2, 0, frs_cmd_latency_reset, "server", NULL, 0, 0, 0, 0, 0},
    {"latency|help", 2, 0, frs_cmd_latency_help, "server", NULL, 0, 0, 0, 0, 0},
    {"lolwut", -1, 0, frs_cmd_lolwut, "server", NULL, 0, 0, 0, 0, 0},
    {"module", -2, 0, NULL, "server", NULL, 1, 0, 0, 0, 0},
    {"module|list", 2, 0, frs_cmd_module_list, "server", NULL, 0, 0, 0, 0, 0},
    {"module|load", -3, 0, frs_cmd_module_load, "server", NULL, 0, 0, 0, 0, 0},
    {"module|loadex", -3, 0, frs_cmd_module_load, "server", NULL, 0, 0, 0, 0, 0},
    {"module|unload", 3, 0, frs_cmd_module_unload, "server", NULL, 0, 0, 0, 0, 0},
    {"module|help", 2, 0, frs_cmd_module_help, "server", NULL, 0, 0, 0, 0, 0},
    {"asking", 1, 0, frs_cmd_asking, "cluster", NULL, 0, 0, 0, 0, 0},
    {"readonly", 1, 0, frs_cmd_readonly, "cluster", NULL, 0, 0, 0, 0, 0},
    {"readwrite", 1, 0, frs_cmd_readwrite, "cluster", NULL, 0, 0, 0, 0, 0},
    {"restore-asking", -4, 0, frs_cmd_restore_asking, "server", NULL, 0, 1, 1, 1, 0},
    {"bgrewriteaof", 1, 0, frs_cmd_bgrewriteaof, "server", NULL, 0, 0, 0, 0, 0},
    {"replicaof", 3, 0, frs_cmd_replicaof, "server", NULL, 0, 0, 0, 0, 0},
    {"slaveof", 3, 0, frs_cmd_replicaof, "server", NULL, 0, 0, 0, 0, 0},
    {"sync", 1, FRS_CMD_NOMULTI, frs_cmd_sync, "server", NULL, 0, 0, 0, 0, 0},
    {"psync", -3, FRS_CMD_NOMULTI, frs_cmd_sync, "server", NULL, 0, 0, 0, 0, 0},
    {"replconf", -1, FRS_CMD_ALLOW_BUSY, frs_cmd_replconf, "server", NULL, 0, 0, 0, 0, 0},
    {"failover", -1, 0, frs_cmd_failover, "server", NULL, 0, 0, 0, 0, 0},
    {"migrate", -6, 0, frs_cmd_migrate, "generic", NULL, 0, 3, 3, 1, 1},
    {"debug", -2, 0, frs_cmd_debug, "server", NULL, 0, 0, 0, 0, 0},
    /* Control of the fake: a namespace Redis does not use (docs/server.md). */
    {"fake.time", -2, 0, NULL, "fake", NULL, 1, 0, 0, 0, 0},
    {"fake.time|get", 2, 0, frs_cmd_fake_time_get, "fake", NULL, 0, 0, 0, 0, 0},
    {"fake.time|set", 3, 0, frs_cmd_fake_time_set, "fake", NULL, 0, 0, 0, 0, 0},
    {"fake.time|advance", 3, 0, frs_cmd_fake_time_advance, "fake", NULL, 0, 0, 0, 0, 0},
    {"fake.fail", -2, 0, NULL, "fake", NULL, 1, 0, 0, 0, 0},
    {"fake.fail|nth", -3, 0, frs_cmd_fake_fail_nth, "fake", NULL, 0, 0, 0, 0, 0},
    {"fake.fail|command", -3, 0, frs_cmd_fake_fail_command, "fake", NULL, 0, 0, 0, 0, 0},
    {"fake.fail|clear", 2, 0, frs_cmd_fake_fail_clear, "fake", NULL, 0, 0, 0, 0, 0},
    {"fake.fail|fired", 2, 0, frs_cmd_fake_fail_fired, "fake", NULL, 0, 0, 0, 0, 0},
    {"fake.dump", 1, 0, frs_cmd_fake_dump, "fake", NULL, 0, 0, 0, 0, 0},
    {"fake.seed", 1, 0, frs_cmd_fake_seed, "fake", NULL, 0, 0, 0, 0, 0},
    {"fake.published", -1, 0, frs_cmd_fake_published, "fake", NULL, 0, 0, 0, 0, 0},
    {"fake.help", 1, 0, frs_cmd_fake_help, "fake", NULL, 0, 0, 0, 0, 0},
    {"fake.record", -2, 0, NULL, "fake", NULL, 1, 0, 0, 0, 0},
    {"fake.record|start", 3, 0, frs_cmd_fake_record_start, "fake", NULL, 0, 0, 0, 0, 0},
    {"fake.record|stop", 2, 0, frs_cmd_fake_record_stop, "fake", NULL, 0, 0, 0, 0, 0},
    {"fake.record|status", 2, 0, frs_cmd_fake_record_status, "fake", NULL, 0, 0, 0, 0, 0},
};

/* The fake's rows the server replaces (its own versions above) */
static int host_replaces(const char *name)
{
    return strcmp(name, "quit") == 0 || strcmp(name, "auth") == 0;
}

/* What COMMAND DOCS says of the FAKE.* commands (fr_server_declare_extension). */
static const struct { const char *name, *summary; } fake_summaries[] = {
    {"fake.time", "Reads and moves the fake's clock."},
    {"fake.time|get", "The fake's clock, Unix milliseconds."},
    {"fake.time|set", "Sets the clock (virtual clock only)."},
    {"fake.time|advance", "Moves the clock forward; answers the new reading."},
    {"fake.fail", "Injects faults: commands that answer an error instead of running."},
    {"fake.fail|nth", "The n-th command the fake executes from now answers an error."},
    {"fake.fail|command", "Every command of a name answers an error."},
    {"fake.fail|clear", "Removes every fault."},
    {"fake.fail|fired", "How many faults have fired."},
    {"fake.dump", "The canonical dump of the keyspace."},
    {"fake.seed", "The seed the fake was started with."},
    {"fake.published", "Every message PUBLISH sent, or clears that log."},
    {"fake.help", "Describes the FAKE.* commands."},
    {"fake.record", "Records every command and reply into a file (docs/recording.md)."},
    {"fake.record|start", "Starts recording into a file (never one that is not a recording)."},
    {"fake.record|stop", "Writes the recording's end line and closes its file."},
    {"fake.record|status", "The file being recorded, its events and bytes (empty: none)."},
};

void frs_cmdtable_declare(fr_server *fake)
{
    size_t nhost = sizeof(host_rows) / sizeof(host_rows[0]);
    for (size_t i = 0; i < nhost; i++) {
        const char *summary = NULL;
        for (size_t k = 0; k < sizeof(fake_summaries) / sizeof(fake_summaries[0]); k++)
            if (strcmp(fake_summaries[k].name, host_rows[i].name) == 0)
                summary = fake_summaries[k].summary;
        if (summary) fr_server_declare_extension(fake, host_rows[i].name, host_rows[i].arity,
                                                 summary);
        else fr_server_declare_command(fake, host_rows[i].name);
    }
}

/* Commands allowed in RESP2 subscribed mode besides the server's flagged ones */
static const char *const pubsub_ok[] = {"subscribe", "unsubscribe", "psubscribe",
                                        "punsubscribe", "ssubscribe", "sunsubscribe",
                                        "ping", NULL};

static frs_cmd *rows;      /* every row, fake's then server's */
static size_t nrows;       /* entries in rows */
static size_t ntoplevel;   /* names without '|' */
static const frs_cmd **slots; /* open-addressing hash of rows by name */
static size_t nslots;      /* a power of two, at least 4 * nrows */
static pthread_once_t once = PTHREAD_ONCE_INIT;

static uint64_t hash_name(const char *p, size_t n)
{
    uint64_t h = 1469598103934665603ull;
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)p[i];
        if (c >= 'A' && c <= 'Z') c = (unsigned char)(c + 32);
        h = (h ^ c) * 1099511628211ull;
    }
    return h;
}

/* Appends a row to the table being built. */
static void add_row(const frs_cmd *r)
{
    rows[nrows++] = *r;
}

/* Builds the table once: the fake's rows (minus those the server replaces, plus
 * the containers their "x|y" names imply), then the server's. */
static void build(void)
{
    size_t nfake = fr_command_count();
    size_t nhost = sizeof(host_rows) / sizeof(host_rows[0]);
    /* room for the containers implied by "x|y" names too */
    rows = calloc(2 * nfake + nhost + 1, sizeof(*rows));
    if (!rows) frs_oom_abort(__func__);
    for (size_t i = 0; i < nfake; i++) {
        const fr_command_info *fi = fr_command_at(i);
        if (host_replaces(fi->name)) continue;
        const char *bar = strchr(fi->name, '|');
        if (bar) {
            /* the first subcommand of a container brings the container's row */
            size_t plen = (size_t)(bar - fi->name);
            int seen = 0;
            for (size_t j = 0; j < nrows; j++)
                if (rows[j].is_container && strlen(rows[j].name) == plen &&
                    strncmp(rows[j].name, fi->name, plen) == 0)
                    seen = 1;
            if (!seen) {
                char *cname = strndup(fi->name, plen);
                if (!cname) frs_oom_abort(__func__);
                /* COMMAND alone runs too (the fake answers it): arity -1 says so */
                int arity = strcmp(cname, "command") == 0 ? -1 : -2;
                frs_cmd cont = {cname, arity, 0, NULL, fi->group, "", 1, 0, 0, 0, 0}; /* fake's */
                add_row(&cont);
            }
        }
        unsigned flags = 0;
        for (size_t k = 0; pubsub_ok[k]; k++)
            if (strcmp(fi->name, pubsub_ok[k]) == 0) flags |= FRS_CMD_PUBSUBOK;
        frs_cmd r = {fi->name,      fi->arity,    flags,         NULL,
                     fi->group,     fi->flags,    0,             fi->first_key,
                     fi->last_key,  fi->key_step, fi->movable_keys};
        add_row(&r);
    }
    for (size_t i = 0; i < nhost; i++) add_row(&host_rows[i]);
    for (size_t i = 0; i < nrows; i++)
        if (!strchr(rows[i].name, '|')) ntoplevel++;
    nslots = 64;
    while (nslots < 4 * nrows) nslots *= 2;
    slots = calloc(nslots, sizeof(*slots));
    if (!slots) frs_oom_abort(__func__);
    for (size_t i = 0; i < nrows; i++) {
        size_t j = hash_name(rows[i].name, strlen(rows[i].name)) & (nslots - 1);
        while (slots[j]) j = (j + 1) & (nslots - 1);
        slots[j] = &rows[i];
    }
}

void frs_cmdtable_init(void) { pthread_once(&once, build); }

/* The row named p[0..n) (case-insensitive), or NULL. */
static const frs_cmd *find(const char *p, size_t n)
{
    if (n == 0 || n > 64) return NULL;
    for (size_t j = hash_name(p, n) & (nslots - 1); slots[j]; j = (j + 1) & (nslots - 1)) {
        const char *name = slots[j]->name;
        if (strlen(name) == n && strncasecmp(name, p, n) == 0) return slots[j];
    }
    return NULL;
}

const frs_cmd *frs_cmd_lookup(int argc, const char *const *argv, const size_t *argvlen,
                              const frs_cmd **container)
{
    frs_cmdtable_init();
    *container = NULL;
    const frs_cmd *top = find(argv[0], argvlen[0]);
    /* "config|get" names a row, not a command a client may send (Redis: unknown) */
    if (top && memchr(argv[0], '|', argvlen[0])) return NULL;
    if (!top || !top->is_container) return top;
    if (argc < 2) {
        /* COMMAND alone is a command (arity -1); any other bare container is an arity
         * error */
        if (top->proc || top->arity == -1) return top;
        *container = top;
        return NULL;
    }
    char full[160];
    size_t tl = strlen(top->name);
    if (argvlen[1] > sizeof(full) - tl - 2) {
        *container = top;
        return NULL;
    }
    memcpy(full, top->name, tl);
    full[tl] = '|';
    memcpy(full + tl + 1, argv[1], argvlen[1]);
    const frs_cmd *sub = find(full, tl + 1 + argvlen[1]);
    if (!sub) *container = top;
    return sub;
}
