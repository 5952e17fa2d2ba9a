/* cluster.c -- cluster emulation: key slots (CRC16 with {hash tags}) and the CROSSSLOT
 * refusal of a one-node Redis Cluster that owns every slot.  Off unless the server was
 * made with cluster_enabled. */
#include <stdlib.h>
#include <string.h>

#include "fr_int.h"

/* CRC16-CCITT (XMODEM), the checksum Redis Cluster hashes keys with. */
static uint16_t crc16(const char *buf, size_t len)
{
    uint16_t crc = 0;
    for (size_t i = 0; i < len; i++) {
        crc ^= (uint16_t)((unsigned char)buf[i] << 8);
        for (int b = 0; b < 8; b++)
            crc = (crc & 0x8000) ? (uint16_t)((crc << 1) ^ 0x1021) : (uint16_t)(crc << 1);
    }
    return crc;
}

unsigned fri_key_slot(const char *key, size_t len)
{
    /* Only the part between the first '{' and the next '}' counts, when it is not empty. */
    size_t s, e;
    for (s = 0; s < len; s++)
        if (key[s] == '{') break;
    if (s == len) return crc16(key, len) & 16383;
    for (e = s + 1; e < len; e++)
        if (key[e] == '}') break;
    if (e == len || e == s + 1) return crc16(key, len) & 16383;
    return crc16(key + s + 1, e - s - 1) & 16383;
}

int fri_command_keys(const fri_command *cmd, int argc, const fri_arg *argv, int *keys, int max)
{
    if (cmd->getkeys) return cmd->getkeys(argc, argv, keys, max);
    if (cmd->first_key <= 0) return 0;
    int last = cmd->last_key < 0 ? argc + cmd->last_key : cmd->last_key;
    int step = cmd->key_step > 0 ? cmd->key_step : 1;
    int n = 0;
    for (int i = cmd->first_key; i <= last && i < argc && n < max; i += step) keys[n++] = i;
    return n;
}

int fri_numkeys_keys(int argc, const fri_arg *argv, int numkeys_idx, int with_dst, int *keys,
                     int max)
{
    if (numkeys_idx >= argc) return 0;
    /* Redis reads the count with atoi(), so "2x" is 2 and " +1" is 1: the slot check
     * sees those keys even though the command itself will refuse the count. */
    char buf[32];
    size_t len = argv[numkeys_idx].len < sizeof(buf) - 1 ? argv[numkeys_idx].len : sizeof(buf) - 1;
    memcpy(buf, argv[numkeys_idx].ptr, len);
    buf[len] = '\0';
    int num = (int)strtol(buf, NULL, 10);
    int first = numkeys_idx + 1;
    if (num < 1 || num > argc - first) return 0;
    int n = 0;
    for (int i = 0; i < num && n < max; i++) keys[n++] = first + i;
    if (with_dst && n < max) keys[n++] = 1;
    return n;
}

/* Folds the slots of one command's keys into *slot (-1 = none yet); -1 on a mismatch. */
static int fold_slots(const fri_command *cmd, int argc, const fri_arg *argv, int *slot)
{
    int small[64];
    int *keys = argc <= 64 ? small : fri_malloc(sizeof(int) * (size_t)argc);
    if (!keys) return 0; /* out of memory: let the command itself answer */
    int n = fri_command_keys(cmd, argc, argv, keys, argc);
    int rc = 0;
    for (int i = 0; i < n && rc == 0; i++) {
        int ks = (int)fri_key_slot(argv[keys[i]].ptr, argv[keys[i]].len);
        if (*slot == -1) *slot = ks;
        else if (*slot != ks) rc = -1;
    }
    if (keys != small) fri_free(keys);
    return rc;
}

/* Redis's getNodeByQuery for a node that owns every slot: the keys of the command (of the
 * whole queued transaction for EXEC) must share one slot. */
int fri_cluster_check(fr_client *c, const fri_command *cmd)
{
    int slot = -1, bad = 0;
    if (strcmp(cmd->name, "exec") == 0) {
        for (size_t i = 0; i < c->queue_len && !bad; i++)
            bad = fold_slots(c->queue[i].cmd, c->queue[i].argc, c->queue[i].argv, &slot) < 0;
    } else {
        bad = fold_slots(cmd, c->argc, c->argv, &slot) < 0;
    }
    if (!bad) return 0;
    if (strcmp(cmd->name, "exec") == 0) {
        fri_multi_reset(c);
        fri_unwatch_all(c);
    } else if (c->in_multi) {
        c->dirty_exec = 1;
    }
    fri_reply_error(c, "CROSSSLOT Keys in request don't hash to the same slot");
    return -1;
}

static void cluster_keyslot_command(fr_client *c)
{
    if (!c->srv->cluster_enabled) {
        fri_reply_error(c, "ERR This instance has cluster support disabled");
        return;
    }
    fri_reply_ll(c, fri_key_slot(c->argv[2].ptr, c->argv[2].len));
}

/* Every other CLUSTER subcommand of Redis 7.0 (with its arity, so CLUSTER INFO x gets
 * Redis's arity error): a standalone server refuses them all as Redis does; with cluster
 * emulation they say plainly that the fake does not emulate them (their real answers are
 * node ids, addresses and epochs that a fake could only invent). */
static void cluster_other_command(fr_client *c)
{
    if (!c->srv->cluster_enabled) {
        fri_reply_error(c, "ERR This instance has cluster support disabled");
        return;
    }
    fri_reply_errorf(c, "ERR CLUSTER %s is not emulated by the fake (only CLUSTER KEYSLOT is)",
                     c->cmd->name + strlen("cluster|"));
}

static const fri_command cluster_subcommands[] = {
    {"cluster|keyslot", cluster_keyslot_command, 3, FRI_CMD_STALE, "cluster", 0, 0, 0, NULL, NULL},
    {"cluster|addslots", cluster_other_command, -3, FRI_CMD_STALE, "cluster", 0, 0, 0, NULL, NULL},
    {"cluster|addslotsrange", cluster_other_command, -4, FRI_CMD_STALE, "cluster", 0, 0, 0, NULL, NULL},
    {"cluster|bumpepoch", cluster_other_command, 2, FRI_CMD_STALE, "cluster", 0, 0, 0, NULL, NULL},
    {"cluster|count-failure-reports", cluster_other_command, 3, FRI_CMD_STALE, "cluster", 0, 0, 0, NULL, NULL},
    {"cluster|countkeysinslot", cluster_other_command, 3, FRI_CMD_STALE, "cluster", 0, 0, 0, NULL, NULL},
    {"cluster|delslots", cluster_other_command, -3, FRI_CMD_STALE, "cluster", 0, 0, 0, NULL, NULL},
    {"cluster|delslotsrange", cluster_other_command, -4, FRI_CMD_STALE, "cluster", 0, 0, 0, NULL, NULL},
    {"cluster|failover", cluster_other_command, -2, FRI_CMD_STALE, "cluster", 0, 0, 0, NULL, NULL},
    {"cluster|flushslots", cluster_other_command, 2, FRI_CMD_STALE, "cluster", 0, 0, 0, NULL, NULL},
    {"cluster|forget", cluster_other_command, 3, FRI_CMD_STALE, "cluster", 0, 0, 0, NULL, NULL},
    {"cluster|getkeysinslot", cluster_other_command, 4, FRI_CMD_STALE, "cluster", 0, 0, 0, NULL, NULL},
    {"cluster|help", cluster_other_command, 2, FRI_CMD_STALE, "cluster", 0, 0, 0, NULL, NULL},
    {"cluster|info", cluster_other_command, 2, FRI_CMD_STALE, "cluster", 0, 0, 0, NULL, NULL},
    {"cluster|links", cluster_other_command, 2, FRI_CMD_STALE, "cluster", 0, 0, 0, NULL, NULL},
    {"cluster|meet", cluster_other_command, -4, FRI_CMD_STALE, "cluster", 0, 0, 0, NULL, NULL},
    {"cluster|myid", cluster_other_command, 2, FRI_CMD_STALE, "cluster", 0, 0, 0, NULL, NULL},
    {"cluster|nodes", cluster_other_command, 2, FRI_CMD_STALE, "cluster", 0, 0, 0, NULL, NULL},
    {"cluster|replicas", cluster_other_command, 3, FRI_CMD_STALE, "cluster", 0, 0, 0, NULL, NULL},
    {"cluster|replicate", cluster_other_command, 3, FRI_CMD_STALE, "cluster", 0, 0, 0, NULL, NULL},
    {"cluster|reset", cluster_other_command, -2, FRI_CMD_STALE, "cluster", 0, 0, 0, NULL, NULL},
    {"cluster|saveconfig", cluster_other_command, 2, FRI_CMD_STALE, "cluster", 0, 0, 0, NULL, NULL},
    {"cluster|set-config-epoch", cluster_other_command, 3, FRI_CMD_STALE, "cluster", 0, 0, 0, NULL, NULL},
    {"cluster|setslot", cluster_other_command, -4, FRI_CMD_STALE, "cluster", 0, 0, 0, NULL, NULL},
    {"cluster|shards", cluster_other_command, 2, FRI_CMD_STALE, "cluster", 0, 0, 0, NULL, NULL},
    {"cluster|slaves", cluster_other_command, 3, FRI_CMD_STALE, "cluster", 0, 0, 0, NULL, NULL},
    {"cluster|slots", cluster_other_command, 2, FRI_CMD_STALE, "cluster", 0, 0, 0, NULL, NULL},
    {0},
};

const fri_command fri_cluster_commands[] = {
    {"cluster", NULL, -2, FRI_CMD_CONTAINER, "cluster", 0, 0, 0, NULL, cluster_subcommands},
    {0},
};

/* ----- Public: slots and key positions (the engine's CROSSSLOT warning) ----------------- */

unsigned fr_key_slot(const char *key, size_t len) { return fri_key_slot(key, len); }

static int arity_ok(const fri_command *cmd, int argc)
{
    return cmd->arity >= 0 ? argc == cmd->arity : argc >= -cmd->arity;
}

int fr_command_keys(const fr_server *s, int argc, const char *const *argv,
                    const size_t *argvlen, int *keys, int max)
{
    if (argc < 1 || !argv) return -1;
    fri_arg stackv[32];
    fri_arg *av = argc <= 32 ? stackv : fri_malloc((size_t)argc * sizeof *av);
    if (!av) return -1;
    for (int i = 0; i < argc; i++)
        av[i] = (fri_arg){argv[i], argvlen ? argvlen[i] : strlen(argv[i])};
    int n = -1;
    const fri_command *cmd = fri_lookup_command(s, av[0].ptr, av[0].len);
    if (cmd && cmd->subcommands && argc >= 2) {
        const fri_command *found = NULL;
        size_t plen = strlen(cmd->name);
        for (const fri_command *sub = cmd->subcommands; sub->name; sub++)
            if (fri_arg_is(&av[1], sub->name + plen + 1)) found = sub;
        cmd = found;
    }
    if (cmd && arity_ok(cmd, argc)) n = fri_command_keys(cmd, argc, av, keys, max);
    if (av != stackv) fri_free(av);
    return n;
}
