/* cmd_meta.h -- Redis 7.0.15's description of its commands, as COMMAND INFO and COMMAND
 * DOCS give it, one row per command and subcommand.
 *
 * The rows are data, fake_redis/data/cmd_meta.txt, recorded by tools/record_command_table.py
 * from a running redis-server 7.0.15 (docs/fake_redis.md, "Command metadata"); the build
 * turns them into cmd_meta_table.c (fake_redis/tools/gen_cmd_meta.c), kept apart from the
 * command table of server.c, which says what the fake implements.  The
 * bits below follow Redis's own orders (the reply orders of addReplyFlagsForCommand,
 * ACLCommandCategories and addReplyFlagsForKeyArgs), so a name's bit is its index in
 * the name lists of command.c. */
#ifndef FR_CMD_META_H
#define FR_CMD_META_H

#include <stddef.h>
#include <stdint.h>

/* Command flags, in COMMAND INFO's order */
enum {
    FRI_MF_WRITE = 1u << 0, FRI_MF_READONLY = 1u << 1, FRI_MF_DENYOOM = 1u << 2,
    FRI_MF_MODULE = 1u << 3, FRI_MF_ADMIN = 1u << 4, FRI_MF_PUBSUB = 1u << 5,
    FRI_MF_NOSCRIPT = 1u << 6, FRI_MF_BLOCKING = 1u << 7, FRI_MF_LOADING = 1u << 8,
    FRI_MF_STALE = 1u << 9, FRI_MF_SKIP_MONITOR = 1u << 10, FRI_MF_SKIP_SLOWLOG = 1u << 11,
    FRI_MF_ASKING = 1u << 12, FRI_MF_FAST = 1u << 13, FRI_MF_NO_AUTH = 1u << 14,
    FRI_MF_NO_MANDATORY_KEYS = 1u << 15, FRI_MF_NO_ASYNC_LOADING = 1u << 16,
    FRI_MF_NO_MULTI = 1u << 17, FRI_MF_MOVABLEKEYS = 1u << 18, FRI_MF_ALLOW_BUSY = 1u << 19,
};

/* ACL categories, in ACL CAT's order (acl.c's ACLCommandCategories) */
#define FRI_ACL_CATEGORIES 21
enum {
    FRI_ACL_KEYSPACE = 1u << 0, FRI_ACL_READ = 1u << 1, FRI_ACL_WRITE = 1u << 2,
    FRI_ACL_SET = 1u << 3, FRI_ACL_SORTEDSET = 1u << 4, FRI_ACL_LIST = 1u << 5,
    FRI_ACL_HASH = 1u << 6, FRI_ACL_STRING = 1u << 7, FRI_ACL_BITMAP = 1u << 8,
    FRI_ACL_HYPERLOGLOG = 1u << 9, FRI_ACL_GEO = 1u << 10, FRI_ACL_STREAM = 1u << 11,
    FRI_ACL_PUBSUB = 1u << 12, FRI_ACL_ADMIN = 1u << 13, FRI_ACL_FAST = 1u << 14,
    FRI_ACL_SLOW = 1u << 15, FRI_ACL_BLOCKING = 1u << 16, FRI_ACL_DANGEROUS = 1u << 17,
    FRI_ACL_CONNECTION = 1u << 18, FRI_ACL_TRANSACTION = 1u << 19, FRI_ACL_SCRIPTING = 1u << 20,
};

/* Key spec flags, in COMMAND GETKEYSANDFLAGS's order */
enum {
    FRI_KS_RO = 1u << 0, FRI_KS_RW = 1u << 1, FRI_KS_OW = 1u << 2, FRI_KS_RM = 1u << 3,
    FRI_KS_ACCESS = 1u << 4, FRI_KS_UPDATE = 1u << 5, FRI_KS_INSERT = 1u << 6,
    FRI_KS_DELETE = 1u << 7, FRI_KS_NOT_KEY = 1u << 8, FRI_KS_INCOMPLETE = 1u << 9,
    FRI_KS_VARIABLE_FLAGS = 1u << 10,
};

enum { FRI_BS_INDEX, FRI_BS_KEYWORD, FRI_BS_UNKNOWN };  /* begin_search types */
enum { FRI_FK_RANGE, FRI_FK_KEYNUM, FRI_FK_UNKNOWN };   /* find_keys types */

/* Redis's getkeys functions (the json's get_keys_function), used where the key specs
 * cannot say (getKeysFromCommandWithSpecs) */
enum {
    FRI_GK_NONE, FRI_GK_BITFIELD, FRI_GK_BLMPOP, FRI_GK_EVAL, FRI_GK_FUNCTION,
    FRI_GK_GEORADIUS, FRI_GK_LMPOP, FRI_GK_MIGRATE, FRI_GK_SET, FRI_GK_SINTERCARD,
    FRI_GK_SORT, FRI_GK_SORT_RO, FRI_GK_XREAD, FRI_GK_ZMPOP, FRI_GK_ZUNIONINTERDIFF,
    FRI_GK_ZUNIONINTERDIFFSTORE, FRI_GK_BZMPOP,
};

/* One key spec. */
typedef struct fri_keyspec {
    uint16_t flags;      /* FRI_KS_* */
    uint8_t bs_type;     /* FRI_BS_* */
    int bs_pos;          /* index: the position; keyword: startfrom */
    const char *keyword; /* keyword: the word searched for */
    uint8_t fk_type;     /* FRI_FK_* */
    int fk_a;            /* range: lastkey; keynum: keynumidx */
    int fk_b;            /* range: keystep; keynum: firstkey */
    int fk_c;            /* range: limit; keynum: keystep */
} fri_keyspec;

/* One command or subcommand. */
typedef struct fri_cmd_meta {
    const char *name;          /* full lower-case name: "get", "client|list" */
    int parent;                /* row of the container, -1 for a top-level command */
    int first_sub;             /* row of the first subcommand (rows are contiguous), -1 */
    int nsubs;                 /* subcommands */
    int arity;                 /* Redis's arity (negative: at least) */
    uint32_t flags;            /* FRI_MF_* */
    uint32_t acl;              /* FRI_ACL_* */
    int first_key, last_key, key_step; /* the legacy range COMMAND INFO shows */
    int nspecs;                /* key specs */
    const fri_keyspec *specs;  /* nspecs key specs, NULL for none */
    int getkeys;               /* FRI_GK_* */
    int docs_nfields;          /* pairs in docs (the DOCS map without subcommands) */
    uint32_t info_len;         /* bytes of info */
    const char *info;          /* RESP3: COMMAND INFO's elements 2 to 9 (arity .. key specs) */
    uint32_t docs_len;         /* bytes of docs */
    const char *docs;          /* RESP3: the DOCS map's pairs, subcommands left out */
} fri_cmd_meta;

extern const fri_cmd_meta fri_cmd_meta_table[]; /* sorted by name (strcmp) */
extern const size_t fri_cmd_meta_count;         /* rows */
extern const size_t fri_cmd_meta_toplevel;      /* top-level rows: Redis's COMMAND COUNT */

#endif
