/* fr_int.h -- what the fake's modules share and nothing outside fake_redis/ may use.
 *
 * The shape follows redis-server: a command table (one row per command, arity checked
 * centrally), handlers that read c->argv and write their reply with the fri_reply_*
 * helpers, "...OrReply" argument parsers that answer the exact error and return -1, and
 * one file per data type.  Replies are written as RESP2 bytes into the client's output
 * buffer, exactly as Redis writes them; the public API parses them into a tree on demand.
 *
 * Internal names start with fri_ (types and functions) or FRI_ (constants).
 */
#ifndef FR_INT_H
#define FR_INT_H

#include <errno.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include "fakeredis.h"
#include "fr_alloc.h"

#define FRI_DBNUM 16
#define FRI_SLOTS 16384

/* ----- Binary strings ------------------------------------------------------------ */

/* An immutable-length heap string: len bytes, then a NUL (not counted) so that C string
 * functions and strtod can read it. */
typedef struct fri_str {
    size_t len;
    char buf[];
} fri_str;

fri_str *fri_str_new(const char *p, size_t len);          /* NULL when out of memory */
fri_str *fri_str_from_ll(long long v);
void fri_str_free(fri_str *s);
/* Resizes s to newlen bytes (a longer tail is zero-filled, the NUL is kept); NULL when out
 * of memory, with s untouched. */
fri_str *fri_str_resize(fri_str *s, size_t newlen);
/* memcmp order, shorter first on a common prefix (Redis's sdscmp). */
int fri_bytes_cmp(const char *a, size_t alen, const char *b, size_t blen);

/* One command argument: a view into the caller's (or the MULTI queue's) memory. */
typedef struct fri_arg {
    const char *ptr;
    size_t len;
} fri_arg;

/* Case-insensitive comparison of an argument with a lower- or upper-case word (ASCII
 * case, as strcasecmp in the C locale Redis runs in).  Inline, so that the usual mismatch
 * (an option parser trying its words on a score or a key) is a length test against a
 * literal's length, known at compile time. */
static inline int fri_arg_is(const fri_arg *a, const char *word)
{
    size_t n = __builtin_strlen(word);
    if (a->len != n) return 0;
    for (size_t i = 0; i < n; i++) {
        unsigned char x = (unsigned char)a->ptr[i], y = (unsigned char)word[i];
        if (x >= 'A' && x <= 'Z') x = (unsigned char)(x + 32);
        if (y >= 'A' && y <= 'Z') y = (unsigned char)(y + 32);
        if (x != y) return 0;
    }
    return 1;
}
/* The same the way Redis compares with strcasecmp on the argument as a C string: only the
 * bytes before a NUL count ("count\0x" is the word "count"). */
int fri_arg_is_cstr(const fri_arg *a, const char *word);

/* ----- Growable byte buffer --------------------------------------------------------- */

typedef struct fri_buf {
    char *p;
    size_t len;
    size_t cap;
} fri_buf;

/* Makes room for extra more bytes.  Inline because every reply writer calls it: the
 * common case (room left) is a comparison, growing is out of line.  It cannot fail inside
 * a guarded call (the reserve); outside one a buffer must not grow (fr_split_line sizes
 * its own first), and one that does and cannot is a bug of the fake: it aborts saying so
 * (fri_mem_unguarded). */
void fri_buf_grow(fri_buf *b, size_t extra);
static inline void fri_buf_reserve(fri_buf *b, size_t extra)
{
    if (b->cap - b->len < extra) fri_buf_grow(b, extra);
}
static inline void fri_buf_append(fri_buf *b, const void *p, size_t len)
{
    fri_buf_reserve(b, len);
    if (len) __builtin_memcpy(b->p + b->len, p, len);
    b->len += len;
}
void fri_buf_printf(fri_buf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void fri_buf_free(fri_buf *b);
/* Appends p[0..len) quoted the way redis-cli shows it ("a\"b\n\x01"), so any value prints
 * on one line: the quoting of fr_dump's text, shared by dump.c and t_stream.c. */
void fri_buf_put_quoted(fri_buf *b, const char *p, size_t len);

/* ----- Whole files (fileio.c) ------------------------------------------------------------ */

/* The file's bytes in memory the caller free()s (never the reserve), a NUL after them (not
 * counted), *len set; NULL with errno when it cannot be read. */
char *fri_read_file(const char *path, size_t *len);
/* Writes len bytes to path as Redis's rdbSave does: "temp-PID.tag" beside it, fsync,
 * rename, fsync of the directory.  0, or -1 with errno (path untouched). */
int fri_write_file_atomic(const char *path, const char *tag, const void *p, size_t len);
/* fsync of the directory holding path (a rename made durable).  0, or -1 with errno. */
int fri_fsync_dir(const char *path);

/* ----- Growable arrays (clientq.c) ----------------------------------------------------- */

/* arr (an array of *cap elements of size bytes, len of them used) with room for one more:
 * arr itself, or a copy twice as large (first_cap elements when it had none; *cap is
 * updated).  NULL when out of memory, arr left as it was. */
void *fri_array_grow(void *arr, size_t *cap, size_t len, size_t size, size_t first_cap);

/* A queue of clients to hand to the embedder (those woken by a blocking command, those
 * given pushes).  A client is queued at most once (its own flag says so) and blanked when
 * it is freed meanwhile. */
typedef struct fri_client_queue {
    fr_client **c;         /* slots [head, len) are queued; NULL for a freed client */
    size_t head, len, cap;
} fri_client_queue;
/* Appends c; aborts when out of memory, like fri_buf (the caller's state already says c
 * is queued). */
void fri_cq_push(fri_client_queue *q, fr_client *c);
/* The next queued client, NULL when none is left (freed ones are passed over). */
fr_client *fri_cq_take(fri_client_queue *q);
/* Blanks c's slot: c is being freed. */
void fri_cq_forget(fri_client_queue *q, const fr_client *c);
void fri_cq_free(fri_client_queue *q);

/* ----- Number conversions, exactly as Redis's util.c behaves --------------------------- */

/* Strict integer parse: no spaces, no leading '+', no leading zeros, fits in long long.
 * Returns 1 on success. */
int fri_string2ll(const char *s, size_t len, long long *out);
/* Redis's string2ld / strtold based parse for INCRBYFLOAT: 1 on success.  errno is left
 * as string2ld leaves it: untouched for "" or 5 KiB and more, else 0 or ERANGE. */
int fri_string2ld(const char *s, size_t len, long double *out);
/* Redis's getDoubleFromObject rules (strtod, no spaces, no NaN): 1 on success.  errno is
 * left as Redis's string2d leaves it: 0, or ERANGE. */
int fri_string2d(const char *s, size_t len, double *out);
size_t fri_ll2string(char *dst, size_t cap, long long v);
/* fri_ll2string for an unsigned value (stream ids): digits and a NUL, 0 if over cap. */
size_t fri_ull2string(char *dst, size_t cap, unsigned long long u);
/* "%.17g" the way Redis 7.0 prints doubles in replies (inf, -inf handled). */
size_t fri_d2string(char *dst, size_t cap, double d);
/* SHA-1 (FIPS 180-4) of len bytes (sha1.c). */
void fri_sha1(unsigned char out[20], const void *data, size_t len);
/* n bytes as 2n lower-case hex digits and a NUL. */
void fri_hex(char *out, const unsigned char *bytes, size_t n);
/* Redis's ld2string(..., LD_STR_HUMAN): "%.17Lf" with trailing zeros removed. */
size_t fri_ld2string(char *dst, size_t cap, long double ld);
/* Redis's stringmatchlen: glob match with * ? [a-z] [^a] and \ escapes. */
int fri_glob_match(const char *pattern, size_t plen, const char *s, size_t slen, int nocase);

/* ----- Ordered hash table ------------------------------------------------------------- */

/* A hash table of binary keys that iterates in insertion order (deleted entries leave a
 * hole until the table is compacted, which keeps the order).  Every entry also gets a
 * sequence number that never changes, so SCAN-style cursors survive compaction. */
typedef union fri_val {
    void *ptr;
    double d;
    long long ll;
} fri_val;

typedef struct fri_dent {
    fri_str *key;   /* NULL for a deleted entry */
    uint64_t hash;
    uint64_t seq;   /* insertion sequence number, strictly increasing */
    fri_val v;
} fri_dent;

typedef struct fri_dict fri_dict;

fri_dict *fri_dict_new(void);
/* n empty dictionaries in one block (a server's databases: made and dropped with every
 * server, which a fuzzing run does thousands of times); fri_dict_nth(first, i) is the
 * i-th.  They are freed together by fri_dict_free_n, never one by one. */
fri_dict *fri_dict_new_n(size_t n);
fri_dict *fri_dict_nth(fri_dict *first, size_t i);
void fri_dict_free_n(fri_dict *first, size_t n, void (*free_val)(fri_val *v));
/* Frees the table and its keys; free_val (may be NULL) is called on each value. */
void fri_dict_free(fri_dict *d, void (*free_val)(fri_val *v));
/* A zeroed block of size bytes whose first member is an array of n tables, each made (the
 * state the Pub/Sub and blocking modules make on first use); NULL when out of memory.
 * The tables are freed one by one with fri_dict_free, the block with free. */
void *fri_calloc_with_dicts(size_t size, size_t n);
size_t fri_dict_size(const fri_dict *d);
/* The entry for key, or NULL.  Entry pointers stay valid until the next add or delete. */
fri_dent *fri_dict_find(fri_dict *d, const char *key, size_t len);
/* The entry for key, created (value zeroed) if missing; *created says which. */
fri_dent *fri_dict_add(fri_dict *d, const char *key, size_t len, int *created);
/* Removes key; if old is not NULL the removed value is stored there.  1 if removed. */
int fri_dict_delete(fri_dict *d, const char *key, size_t len, fri_val *old);
/* Iteration over slots 0..fri_dict_slots(d): fri_dict_slot returns NULL for holes. */
size_t fri_dict_slots(const fri_dict *d);
fri_dent *fri_dict_slot(fri_dict *d, size_t i);
/* The first slot whose entry has seq >= seq (fri_dict_slots(d) if none). */
size_t fri_dict_slot_from_seq(const fri_dict *d, uint64_t seq);
/* One page of a SCAN-style walk whose cursor is a sequence number (0 starts): the page is
 * slots [*first, returned end) and holds at most count live entries; *next is the seq of
 * the first live entry after it, or 0 when none is left.  Every entry present for a whole
 * walk is on exactly one page. */
size_t fri_dict_page(const fri_dict *d, uint64_t cursor, long long count, size_t *first,
                     uint64_t *next);
/* Squeezes the holes out, keeping the order and every entry's sequence number (so a
 * cursor stays valid).  0, or -1 when out of memory (the dict is then unchanged). */
int fri_dict_compact(fri_dict *d);
/* Removes every entry (free_val as for fri_dict_free). */
void fri_dict_clear(fri_dict *d, void (*free_val)(fri_val *v));

/* ----- Values ------------------------------------------------------------------------- */

typedef enum fri_type {
    FRI_STRING = 0,
    FRI_LIST,
    FRI_HASH,
    FRI_SET,
    FRI_ZSET,
    FRI_STREAM,
} fri_type;

/* How Redis 7.0 would hold a string value (OBJECT ENCODING, MEMORY USAGE); the other
 * types keep their encoding in their own structures. */
typedef enum fri_strenc {
    FRI_STRENC_RAW = 0, /* an sds of its own */
    FRI_STRENC_EMBSTR,  /* at most 44 bytes, allocated with the object */
    FRI_STRENC_INT,     /* a long kept in the pointer */
} fri_strenc;

/* A value in the keyspace, with what Redis keeps in its robj header besides the type. */
typedef struct fri_obj {
    uint8_t type;       /* fri_type */
    uint8_t strenc;     /* strings: fri_strenc */
    uint8_t shared : 1; /* strings: Redis would store its shared integer object (0..9999,
                           refcount INT_MAX), whose one LRU field all such keys share */
    uint8_t argref : 1; /* strings: Redis stored the command's argument object itself
                           inside EXEC, which the transaction's queue holds until EXEC
                           ends (refcount 2: see fri_str_stored_arg) */
    uint8_t sdstype : 3; /* raw strings: 0, or the sds header type + 1 when it is not the
                           one the allocation implies (a big argument's query buffer) */
    uint8_t sds;        /* raw strings: the sds as Redis would have allocated it: made for
                           its length, the same with its spare room trimmed away, or grown
                           into a jemalloc size class (object.c, SDS_*) */
    uint32_t lru;       /* Redis's 24-bit LRU clock or LFU (minutes << 8 | counter) field;
                           FRI_LRU_UNSET until the object enters the keyspace */
    int64_t expire_ms;  /* absolute Unix ms, or -1 for no TTL */
    void *ptr;          /* fri_str*, fri_list*, fri_hash*, fri_set*, fri_zset*, stream */
} fri_obj;

#define FRI_LRU_UNSET UINT32_MAX

/* Each data type module provides its free function; fri_obj_free dispatches. */
void fri_obj_free(fri_obj *o);
const char *fri_type_name(fri_type t); /* "string", "list", ... as TYPE answers */

/* ----- Keyspace --------------------------------------------------------------------- */

typedef struct fri_db {
    int id;
    fri_dict *keys;    /* key -> fri_obj* */
    fri_dict *watched; /* key -> fri_watchers* : clients WATCHing it */
    fr_server *srv;    /* the server it belongs to (its clock stamps new values) */
} fri_db;

/* ----- Tunables: the redis.conf parameters the fake follows (fr_server_set_param) ------ */

/* maxmemory-policy: Redis's MAXMEMORY_* values, a policy number << 8 and its flags */
#define FRI_MAXMEMORY_FLAG_LRU (1 << 0)
#define FRI_MAXMEMORY_FLAG_LFU (1 << 1)
#define FRI_MAXMEMORY_FLAG_ALLKEYS (1 << 2) /* any key may go, not only those with a TTL */
#define FRI_MAXMEMORY_VOLATILE_TTL (2 << 8)
#define FRI_MAXMEMORY_NO_EVICTION (7 << 8)
#define FRI_MAXMEMORY_FLAG_NO_SHARED_INTEGERS (FRI_MAXMEMORY_FLAG_LRU | FRI_MAXMEMORY_FLAG_LFU)

typedef struct fri_tunables {
    long long hash_max_listpack_entries; /* a hash longer than this becomes a table */
    long long hash_max_listpack_value;   /* ... so does one with a longer field or value */
    long long set_max_intset_entries;    /* an intset longer than this becomes a table */
    long long zset_max_listpack_entries; /* a sorted set longer than this: a skiplist */
    long long zset_max_listpack_value;   /* ... or with a longer member */
    long long list_max_listpack_size;    /* quicklist node fill (MEMORY USAGE's estimate) */
    unsigned long long maxmemory;        /* 0: none.  With the policy: whether integers
                                            are shared, whether keys are evicted (evict.c) */
    int maxmemory_policy;                /* FRI_MAXMEMORY_*: the policy and its flags */
    long long maxmemory_samples;         /* keys sampled per database per eviction */
    long long lfu_log_factor;            /* OBJECT FREQ's logarithmic counter */
    long long lfu_decay_time;            /* minutes per decrement of that counter */
    long long busy_reply_threshold;      /* ms a script runs before others get -BUSY
                                            (lua-time-limit); 0: never busy */
    long long min_replicas_to_write;     /* with min_replicas_max_lag > 0, writes need that
                                            many good replicas: the fake has none, so any
                                            value > 0 refuses them (NOREPLICAS) */
    long long min_replicas_max_lag;      /* seconds; 0 turns the rule off */
    long long stream_node_max_entries;   /* a stream node takes no more entries (0: any) */
    long long stream_node_max_bytes;     /* ... nor a listpack this big (0: 1 GB) */
    long long hll_sparse_max_bytes;      /* a sparse HLL longer than this becomes dense */
} fri_tunables;

/* Redis's OBJ_SHARED_INTEGERS: 0..9999 are shared objects, unless an LRU or LFU policy
 * with a maxmemory limit wants a private LRU field per key. */
#define FRI_SHARED_INTEGERS 10000

/* ----- Clients and server ----------------------------------------------------------- */

typedef struct fri_command fri_command;
typedef struct fri_acl_user fri_acl_user; /* acl.c */

/* A command queued inside MULTI: its own copy of the arguments. */
typedef struct fri_queued {
    const fri_command *cmd;
    int argc;
    struct fri_arg *argv; /* views into mem */
    char *mem;            /* one block holding every argument's bytes */
    uint8_t write;        /* it writes, by its flags or its script's, judged when queued
                             (Redis's mstate.cmd_flags: CMD_WRITE) */
    uint8_t may_replicate; /* it may replicate (CMD_WRITE | CMD_MAY_REPLICATE), idem */
} fri_queued;

typedef struct fri_watched_key {
    int db;
    fri_str *key;
    int expired; /* the key was already logically expired when WATCHed */
} fri_watched_key;

struct fr_client {
    fr_server *srv;
    fri_db *db;               /* the selected database */
    int resp;                 /* 2 (RESP3 comes with the server mode) */
    struct fri_acl_user *user; /* the ACL user it is authenticated as; NULL: default */
    int authenticated;        /* AUTH passed, or no password was needed when it was made */
    uint64_t id;

    /* The command being executed */
    int argc;
    fri_arg *argv;
    const fri_command *cmd;
    int64_t now_ms;           /* the clock, read once when the command started */

    fri_buf out;              /* RESP2 bytes of the replies of the current call (unused
                                 while the call builds a tree, but in the check) */
    /* Replies as trees (reply.c): fr_exec and fr_pipeline have the writers build the
     * fr_reply nodes directly, instead of writing RESP2 bytes and parsing them back */
    int tree;                 /* 0: the writers append RESP2 bytes to out; FRI_TREE: nodes
                                 to the tree of this call; FRI_TREE_AND_BYTES: both,
                                 compared at the call's end (FAKEREDIS_CHECK_REPLIES: the
                                 tests' check) */
    int tree_fast;            /* fr_exec may start a tree in place: tframes made, no check */
    struct fri_tframe *tframes; /* the open arrays, [0] the call's top-level replies */
    struct fri_tframe *ttop;  /* the innermost open array (where the next node goes) */
    struct fri_tframe *tframes_end; /* past the stack's room */
    size_t tframes_cap;
    fr_reply tone[2];         /* room for fr_exec's top-level reply (and one more: the
                                 first never fills the frame, which then takes no test) */
    fr_reply *thole;          /* a node written later (fri_reply_deferred_bulk) */

    /* MULTI state */
    int in_multi;
    int dirty_exec;           /* a command was rejected while queueing: EXEC aborts */
    int dirty_cas;            /* a WATCHed key was touched: EXEC answers nil */
    int in_exec;              /* EXEC is running the queue */
    fri_queued *queue;
    size_t queue_len, queue_cap;

    fri_watched_key *watched;
    size_t watched_len, watched_cap;

    /* Arena for reply trees handed out by the public API */
    void *arena;

    /* Links in the server's client list */
    fr_client *prev, *next;

    /* Scratch argument vector, reused between commands */
    fri_arg *argv_buf;
    int argv_cap;

    int closing;              /* QUIT was answered: a server would close the connection */
    int obey;                 /* the AOF's client (Redis's mustObeyClient): what it replays
                                 is taken as written (XADD's "=" with LIMIT) */
    int is_script;            /* the client scripts' commands run on (CLIENT_SCRIPT) */

    /* Pub/Sub (pubsub.c) */
    struct fri_client_subs *subs; /* its channels and patterns; NULL until it subscribes */
    fri_buf push;             /* messages published to it, RESP2 arrays, not yet taken */
    size_t push_count;        /* how many arrays push holds */
    int push_listed;          /* it is in the server's queue of clients with pushes */
    fri_buf push_taken;       /* the bytes behind the trees fr_client_take_pushes gave */
    int proto;                /* the protocol its connection speaks (fr_client_set_protocol),
                                 0 meaning 2: only the subscribed-mode rules depend on it,
                                 replies stay RESP2 bytes whatever it is */

    /* Blocking (blocked.c) */
    int blocking;             /* opted in: an unservable blocking command really blocks */
    struct fri_blocked *bpop; /* what it waits for while blocked, else NULL */
    fri_buf woken_out;        /* the reply that unblocked it, until it blocks again */
    fri_buf woken_parsed;     /* a copy of woken_out parsed in place (fr_client_woken_reply) */
    int woken_listed;         /* it is in the server's queue of woken clients */
    uint64_t bpop_stat_usec;  /* the blocking call's own duration, added again when it is
                                 served, as 7.0.15's updateStatsOnUnblock does (stats.c) */
};

typedef struct fri_fault {
    uint64_t at;        /* the executed-command number that fails, 0 if by name */
    char *name;         /* lower-case command name, NULL if by number */
    char *error;        /* error text without the leading '-' */
    int remaining;      /* by name: executions left, < 0 for ever */
} fri_fault;

struct fr_server {
    fri_db db[FRI_DBNUM];
    fri_dict *keyspaces;      /* the FRI_DBNUM `keys` dictionaries, one block (SWAPDB swaps
                                 which database points at which) */
    fri_dict *watch_tables;   /* the FRI_DBNUM `watched` dictionaries, one block */
    int64_t clock_ms;
    int wall_clock;
    uint64_t rng_state[2];   /* xorshift128+, seeded from the config */
    int cluster_enabled;

    uint64_t executed;       /* commands executed (see fakeredis.h) */
    uint64_t next_client_id;
    fr_client *clients;

    fri_fault *faults;
    size_t faults_len, faults_cap;
    uint64_t faults_fired;

    /* The published-message log (fr_published): a ring of at most published_max
     * messages holding at most published_max_bytes of channel and payload bytes; the
     * oldest go first, counted in published_dropped (docs/fake_redis.md). */
    fr_message *published;      /* the ring, published_cap slots */
    size_t published_len, published_cap;
    size_t published_head;      /* slot of the oldest message */
    size_t published_bytes;     /* channel and payload bytes held */
    size_t published_max;       /* messages kept at most */
    size_t published_max_bytes; /* bytes kept at most */
    uint64_t published_dropped; /* messages dropped since the log was last cleared */

    struct fri_pubsub *pubsub;     /* subscriptions and the pushed queue (pubsub.c); NULL
                                      until the first subscription */
    struct fri_blocking *blocking; /* blocked clients by key, ready keys, the woken queue
                                      (blocked.c); NULL until a client first blocks */
    int redis_errno;         /* the value errno would hold in redis-server now (below) */

    fri_tunables tun;          /* the parameters fr_server_set_param changed */
    int64_t cmd_ms;            /* the clock as the running command read it: new values
                                  get their LRU/LFU stamp from it */
    uint32_t cmd_lru;          /* fri_lru_clock(cmd_ms), computed once per command */
    uint32_t *shared_lru;      /* the LRU fields of Redis's shared integers 0..9999,
                                  NULL until a key first holds one */
    uint32_t start_lru;        /* the LRU clock when the server was made: Redis creates
                                  its shared integers at start-up */
    struct fri_exec_arg *exec_args; /* keys whose values EXEC's commands stored from their
                                       arguments (fri_obj.argref), until EXEC ends */
    size_t exec_args_len, exec_args_cap;
    struct fri_stats *stats;   /* INFO commandstats / errorstats / latencystats (stats.c) */

    unsigned notify_flags;          /* notify-keyspace-events: FR_NOTIFY_* (notify.c) */
    fr_keyspace_hook *notify_hook;  /* fr_server_set_keyspace_hook's, or NULL */
    void *notify_hook_ud;           /* its userdata */
    fr_client *running;             /* the client whose command runs (fri_call), NULL
                                       between commands: a notification it receives
                                       goes into its own reply, as Redis writes it */

    struct fri_name_hit {     /* command names as sent lately, byte for byte (server.c) */
        uint64_t w[3];        /* the name's bytes, zero-padded, as sent (no case folding) */
        size_t len;
        const struct fri_command *cmd; /* NULL: an empty slot */
    } name_cache[64];
    int check_replies;        /* FAKEREDIS_CHECK_REPLIES: every call writes its replies as
                                 both a tree and bytes, and checks they agree (reply.c) */
    struct fri_scripting *scripting; /* the Lua interpreter and script cache (script_int.h),
                                        NULL until the first script */
    fr_busy_hook *busy_hook;   /* fr_server_set_busy_hook: runs while a script is busy */
    void *busy_hook_ctx;       /* its argument */
    fr_resp3_hook *resp3_hook; /* fr_server_set_resp3_hook: RESP3 for redis.call */
    void *resp3_hook_ctx;      /* its argument */
    fr_script_host_hook *script_host_hook; /* fr_server_set_script_host_hook: the embedder's
                                              commands (DEBUG) called from scripts */
    void *script_host_hook_ctx;            /* its argument */
    fr_oom_hook *oom_hook;     /* fr_server_set_oom_hook: over maxmemory now? */
    void *oom_hook_ctx;        /* its argument */
    int active_expiry_off;     /* fr_server_set_active_expiry(s, 0): counts keep expired keys */
    struct fri_evict_pool *evict_pool; /* maxmemory's eviction pool (evict.c), lazily made */
    unsigned long long stat_evicted_keys; /* keys evicted (INFO evicted_keys) */
    int evicting;              /* the eviction before a command runs (fr_server_evicting) */
    int pre_command_oom;       /* the hook's answer when the last command started
                                  (Redis's pre_command_oom_state) */
    int script_gc_count;       /* scripts since the last Lua GC step (Redis's every 50) */

    /* COMMAND and ACL (command.c, acl.c); rows of cmd_meta_table.c, at most: */
#define FRI_CMD_META_MAX 512
    uint8_t cmd_declared[FRI_CMD_META_MAX]; /* metadata rows the embedder answers itself
                                               (fr_server_declare_command) */
    struct fri_ext_cmd *ext;   /* fr_server_declare_extension: its commands Redis lacks */
    size_t n_ext;              /* entries in ext */
    struct fri_acl *acl;       /* users, the ACL log (acl.c); NULL until first needed */
    fr_call_hook *call_hook;   /* fr_server_set_call_hook: every call() (observer.c) */
    void *call_hook_ctx;       /* its argument */
    fr_key_hook *key_hook;     /* fr_server_set_key_hook: modified keys, flushes */
    void *key_hook_ctx;        /* its argument */
    fri_reserve *reserve;      /* the emergency reserve (alloc.c), taken by fr_server_new */
    int mem_short;             /* the reserve served a request and is not whole again:
                                  deny-oom commands are refused (server.c's gate) */
    uint64_t dirty;            /* changes since the server was made (Redis's server.dirty,
                                  never reset here: fr_server_dirty) */
    struct fri_prop *prop;     /* propagation to an AOF (propagate.c), NULL without a hook */
    int loading;               /* an AOF is being loaded: no key expires (keyIsExpired's
                                  server.loading), no deadline counts as already past */
    int pause_type;            /* CLIENT PAUSE in force (fr_pause; pause.c), FR_PAUSE_OFF */
    int64_t pause_end_ms;      /* when it ends, Unix ms on the fake's clock (it ends once
                                  the clock is past it, as Redis's end < mstime) */
    uint64_t expired_keys;     /* keys deleted because their deadline passed (INFO's
                                  expired_keys; zeroed by fr_stats_reset) */
};

/* ----- CLIENT PAUSE (pause.c) ----------------------------------------------------------- */

/* Redis's checkClientPauseTimeoutAndReturnIfPaused: the pause in force now, ended first
 * when the clock has passed its end.  While it is not FR_PAUSE_OFF the keyspace stays as it
 * is: an expired key reads as missing but is kept, the active expiry does nothing. */
int fri_paused(fr_server *s);

/* ----- Propagation (propagate.c): what an AOF records ------------------------------------ */

/* One running call's propagation state (on fri_call's stack). */
typedef struct fri_prop_frame {
    struct fri_prop_frame *outer; /* the call it is nested in, or NULL */
    fri_str **rewrite;            /* the form it propagates as (fri_propagate_rewrite), or
                                     NULL for its own arguments */
    int rewrite_argc;
    int prevent;                  /* it is not propagated itself */
} fri_prop_frame;

/* Whether a propagation hook listens (and no AOF is being loaded): handlers skip the work
 * of building a rewrite when not. */
int fri_propagating(const fr_server *s);
/* fri_call's brackets: after the command, what it propagates joins the pending ops (when
 * the change counter moved since dirty_before, or it is FLUSHALL/FLUSHDB), and the
 * outermost call hands them to the hook. */
void fri_propagate_enter(fr_client *c, fri_prop_frame *f);
void fri_propagate_leave(fr_client *c, const fri_command *cmd, fri_prop_frame *f,
                         uint64_t dirty_before);
/* The running command propagates as argv (copied) instead (rewriteClientCommandVector). */
void fri_propagate_rewrite(fr_client *c, int argc, const fri_arg *argv);
/* A further command, in c's database, before the running command's own (alsoPropagate). */
void fri_propagate_also(fr_client *c, int argc, const fri_arg *argv);
/* The running command is not propagated itself (preventCommandPropagation). */
void fri_propagate_prevent(fr_client *c);
/* A key deleted because its deadline passed: DEL key (propagateDeletion). */
void fri_propagate_deletion(fr_server *s, int db, const char *key, size_t len);
/* A blocked client served (begin 1, then 0 when done): a top-level batch of its own. */
void fri_propagate_served(fr_client *c, fri_prop_frame *f, int begin);
/* Loading an AOF: nothing is propagated while on. */
void fri_propagate_suspend(fr_server *s, int on);
void fri_propagate_free(fr_server *s);

/* ----- Observers (observer.c) --------------------------------------------------------- */

/* fri_call's report to the call hook: before (EVAL, EVALSHA, FCALL and their _RO forms,
 * which Redis feeds to MONITOR before their scripts run) or after the command ran for
 * usec microseconds.  No-op without a hook. */
void fri_call_report(fr_client *c, const fri_command *cmd, int before, uint64_t usec,
                     size_t out_mark);
/* A key written (Redis's signalModifiedKey: tracking's invalidation) and a database
 * emptied (-1: all of them; Redis's signalFlushedDb), for the key hook. */
void fri_key_report_modified(fr_server *s, fr_client *c, int db, const char *key, size_t len);
void fri_key_report_flushed(fr_server *s, fr_client *c, int db);

/* ----- Redis's errno ------------------------------------------------------------------ */

/* redis-server never resets errno between commands, and two of its checks read it
 * without setting it first: SORT tests errno == ERANGE after each strtod (so an ERANGE
 * left by any earlier parse fails a later numeric SORT: "One or more scores can't be
 * converted into double"), and XADD picks its error text by errno == EDOM.  The server
 * keeps what errno would hold in redis-server (redis_errno), and:
 *  - each parse that Redis runs through the C library (strtod, strtold, strtoul(l): scores,
 *    INCRBYFLOAT, timeouts, SCAN cursors, score ranges, stream ids) is run here the same
 *    way between these two, so errno starts from the mirror and the mirror keeps what the
 *    parse left;
 *  - the stream code clears it where Redis's radix trees set errno = 0: an iterator that
 *    runs off a tree, a raxInsert whose key is already there (fri_stream_iter_errno and
 *    the commands in t_stream*.c);
 *  - a new connection leaves EAGAIN (Redis's accept loop ends on it).
 * Not mirrored: the strtod Redis runs to read back a listpack sorted set's non-integer
 * scores (only a subnormal score leaves ERANGE there), an XADD whose append moved an old
 * node's listpack in memory (which only Redis's allocator knows), socket errors. */
static inline void fri_errno_load(const fr_server *s) { errno = s->redis_errno; }
static inline void fri_errno_save(fr_server *s) { s->redis_errno = errno; }

/* The server's seeded generator: uniform 64-bit values. */
uint64_t fri_random(fr_server *s);

/* ----- The command table ------------------------------------------------------------- */

typedef void fri_command_proc(fr_client *c);

/* Command flags (a subset of Redis's, those the fake acts on or documents) */
#define FRI_CMD_WRITE     (1u << 0)
#define FRI_CMD_READONLY  (1u << 1)
#define FRI_CMD_FAST      (1u << 2)
#define FRI_CMD_NO_MULTI  (1u << 3) /* rejected inside MULTI */
#define FRI_CMD_MULTI_CTL (1u << 4) /* EXEC, DISCARD, MULTI, WATCH, QUIT, RESET: never queued */
#define FRI_CMD_BLOCKING  (1u << 5)
#define FRI_CMD_PUBSUB    (1u << 6)
#define FRI_CMD_ADMIN     (1u << 7)
#define FRI_CMD_CONTAINER (1u << 8) /* has subcommands, proc is NULL */
#define FRI_CMD_DENYOOM   (1u << 9)
#define FRI_CMD_LOADING   (1u << 10)
#define FRI_CMD_STALE     (1u << 11)
#define FRI_CMD_NOSCRIPT  (1u << 12) /* refused inside scripts (more by name: script_lua.c) */
#define FRI_CMD_ALLOW_BUSY (1u << 13) /* runs while a script is busy (SCRIPT KILL ...) */

/* Where a command's keys are, for WATCH-free commands and cluster slot checks:
 * first key index, last key index (negative counts from the end, -1 = last argument),
 * step.  first == 0 means no keys.  Commands whose keys move (e.g. XREAD's STREAMS,
 * ZUNIONSTORE's numkeys) set getkeys instead. */
typedef int fri_getkeys_proc(int argc, const fri_arg *argv, int *keys, int max);

struct fri_command {
    const char *name;          /* lower case; a subcommand is "container|sub" */
    fri_command_proc *proc;
    int arity;
    uint32_t flags;
    const char *group;         /* "string", "bitmap", "list", "hash", "set", "sorted-set",
                                  "stream", "generic", "connection", "server", "transactions",
                                  "pubsub", "cluster" */
    int first_key, last_key, key_step;
    fri_getkeys_proc *getkeys; /* overrides the three above when set */
    const fri_command *subcommands; /* for containers: rows ending with name == NULL */
};

/* Each module exports a table ending with a row whose name is NULL. */
extern const fri_command fri_connection_commands[];
extern const fri_command fri_command_commands[];      /* command.c: COMMAND */
extern const fri_command fri_acl_commands[];          /* acl.c: ACL, AUTH */
extern const fri_command fri_keyspace_commands[];
extern const fri_command fri_multi_commands[];
extern const fri_command fri_string_commands[];
extern const fri_command fri_bitops_commands[];       /* t_bitops.c */
extern const fri_command fri_list_commands[];
extern const fri_command fri_hash_commands[];
extern const fri_command fri_set_commands[];
extern const fri_command fri_zset_commands[];
extern const fri_command fri_sort_commands[];         /* t_sort.c */
extern const fri_command fri_stream_commands[];       /* t_stream.c */
extern const fri_command fri_stream_group_commands[]; /* t_stream_group.c */
extern const fri_command fri_pubsub_commands[];
extern const fri_command fri_cluster_commands[];
extern const fri_command fri_object_commands[];       /* object.c: OBJECT, MEMORY */
extern const fri_command fri_eval_commands[];         /* eval.c: EVAL*, SCRIPT */
extern const fri_command fri_function_commands[];     /* functions.c: FCALL*, FUNCTION */
extern const fri_command fri_rdb_commands[];          /* rdb.c: DUMP, RESTORE */
extern const fri_command fri_geo_commands[];          /* t_geo.c */
extern const fri_command fri_hll_commands[];          /* hyperloglog.c: PF* */

/* ----- Statistics (stats.c) ---------------------------------------------------------- */

/* Gives a row of the command table its id (once per process, while the table is built). */
void fri_stats_register_row(const fri_command *cmd);
/* The server's counters: 0, or -1 when out of memory (fri_stats_free releases them). */
int fri_stats_init(fr_server *s);
void fri_stats_free(fr_server *s);
/* One error reply more: err is its text without the '-' (total and per prefix). */
void fri_stats_error(fr_server *s, const char *err, size_t len);
/* cmd was refused before it ran (rejected_calls). */
void fri_stats_rejected(fr_server *s, const fri_command *cmd);
/* One failed call of cmd for an error reply that is not counted again (afterErrorReply
 * with ERR_REPLY_FLAG_NO_STATS_UPDATE: a script's error raised from redis.call). */
void fri_stats_failed(fr_server *s, const fri_command *cmd);
/* call(): the start (the error baseline; the embedder's clock, 0 without one), whether
 * an error reply was written since (and the new baseline), and the end (calls, usec,
 * failed, a latency sample unless c blocked). */
uint64_t fri_stats_call_begin(fr_server *s);
int fri_stats_call_failed(fr_server *s);
/* ... and returns the call's duration (microseconds) */
uint64_t fri_stats_call_end(fr_client *c, const fri_command *cmd, uint64_t start, int failed);
/* A blocked client served (or unblocked by CLIENT UNBLOCK): its serving time, failed when
 * had_errors, a latency sample.  start is fri_stats_now() before the serve. */
void fri_stats_unblocked(fr_client *c, const fri_command *cmd, uint64_t start, int had_errors);
/* The embedder's clock in microseconds, 0 without one; the error replies so far. */
uint64_t fri_stats_now(const fr_server *s);
uint64_t fri_stats_errors(const fr_server *s);

/* Looks a top-level command up by name (case-insensitive); NULL if unknown. */
const fri_command *fri_lookup_command(const fr_server *s, const char *name, size_t len);
/* A container's subcommand named by a (case-insensitive); NULL if unknown. */
const fri_command *fri_lookup_subcommand(const fri_command *container, const fri_arg *a);

/* Scripts (eval.c): the -BUSY error for the running script; SCRIPT KILL / FUNCTION KILL. */
const char *fri_script_busy_error(const fr_server *s);
void fri_script_kill(fr_client *c, int is_eval);
/* Whether c's script is running (c may run nothing until it returns: a busy hook must not
 * use the client whose script it interrupts). */
int fri_script_running_for(const fr_client *c);
/* Whether the command counts as a write for Redis's min-replicas rule: its write flag,
 * EVAL/EVALSHA/FCALL by their script's flags (a shebang or function without no-writes),
 * EXEC by its queue. */
int fri_cmd_is_write(fr_client *c, const fri_command *cmd);
/* Whether the command may replicate (Redis's CMD_WRITE or CMD_MAY_REPLICATE after
 * getCommandFlags: PUBLISH, SPUBLISH, PFCOUNT; EVAL, EVALSHA and FCALL without declared
 * flags, a script or function by whether it declared no-writes; EXEC by its queue): what
 * CLIENT PAUSE WRITE holds.  c->argv is the command's. */
int fri_cmd_may_replicate(fr_client *c, const fri_command *cmd);
/* Whether cmd is deny-oom for c's arguments (EVAL, EVALSHA and FCALL: by the script's
 * flags, as Redis's scriptFlagsToCmdFlags). */
int fri_cmd_is_denyoom(fr_client *c, const fri_command *cmd);
/* Non-zero when min-replicas-to-write asks for replicas the fake never has. */
int fri_noreplicas(const fr_server *s);
#define FRI_ERR_NOREPLICAS "NOREPLICAS Not enough good replicas to write."
/* Frees the scripting state (server teardown, after the clients). */
void fri_scripting_free(fr_server *s);

/* Runs the command now in c->argc/c->argv (already looked up, arity checked), counting it
 * as executed and applying faults.  Used by dispatch and by EXEC. */
void fri_call(fr_client *c, const fri_command *cmd);

/* MULTI (multi.c): queue the current command and answer QUEUED; leave MULTI, freeing the
 * queue (WATCHes are left to the caller). */
void fri_multi_queue(fr_client *c, const fri_command *cmd);
void fri_multi_reset(fr_client *c);

/* Cluster emulation (cluster.c): the keys of the command (of the queued transaction for
 * EXEC) must share a slot; otherwise answers CROSSSLOT (dooming or discarding the
 * transaction as Redis does) and returns -1. */
int fri_cluster_check(fr_client *c, const fri_command *cmd);

/* The keys of a "numkeys" command (ZUNIONSTORE, ZMPOP, LMPOP, ...): the count at
 * argv[numkeys_idx], read as Redis's getkeys procs read it (atoi), then that many keys
 * after it, plus argv[1] when with_dst; none when the count is out of range. */
int fri_numkeys_keys(int argc, const fri_arg *argv, int numkeys_idx, int with_dst, int *keys,
                     int max);

/* Fills keys[] with the argument indexes of cmd's keys; returns how many (<= max). */
int fri_command_keys(const fri_command *cmd, int argc, const fri_arg *argv, int *keys,
                     int max);

/* ----- Replies ------------------------------------------------------------------------
 * Handlers write every reply through these.  They append RESP2 bytes to c->out, or, in a
 * call that wants a tree (c->tree: fr_exec, fr_pipeline), the fr_reply nodes those bytes
 * parse to, with the same strings (reply.c).  fri_reply_raw's bytes are parsed into nodes
 * there: they must be whole replies or aggregate headers. */

void fri_reply_raw(fr_client *c, const char *p, size_t len);
void fri_reply_ok(fr_client *c);
void fri_reply_status(fr_client *c, const char *status);
/* A status whose text lives as long as the process (a literal: fri_reply_status_lit), so
 * a tree points at it instead of copying it. */
void fri_reply_status_shared(fr_client *c, const char *status, size_t len);
#define FRI_TREE 1
#define FRI_TREE_AND_BYTES 2
#define fri_reply_status_lit(c, lit) fri_reply_status_shared((c), "" lit, sizeof(lit) - 1)
/* err is the full error text without '-', e.g. "ERR syntax error"; a text that does not
 * start with one of Redis's error codes (ERR, WRONGTYPE, EXECABORT, CROSSSLOT, NOGROUP,
 * BUSYGROUP, ...) gets "ERR " in front, as Redis's addReplyError does.  Newlines are
 * replaced by spaces. */
void fri_reply_error(fr_client *c, const char *err);
/* Writes err as it is, whatever its first word (for injected faults). */
void fri_reply_error_raw(fr_client *c, const char *err, size_t len);
void fri_reply_errorf(fr_client *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void fri_reply_ll(fr_client *c, long long v);
/* The integer v whose n decimal digits the caller has already written (INCR stores them). */
void fri_reply_ll_digits(fr_client *c, long long v, const char *digits, size_t n);
void fri_reply_bulk(fr_client *c, const char *p, size_t len);
void fri_reply_bulk_str(fr_client *c, const fri_str *s);
/* A bulk string of len < FRI_REPLY_SMALL bytes formatted by the caller into tmp, a buffer
 * of FRI_REPLY_SMALL bytes that is copied whole (numbers, stream ids: no memcpy call). */
#define FRI_REPLY_SMALL 48
void fri_reply_bulk_small(fr_client *c, const char tmp[FRI_REPLY_SMALL], size_t len);
void fri_reply_bulk_cstr(fr_client *c, const char *s);
void fri_reply_bulk_ll(fr_client *c, long long v);
/* A double as Redis 7.0's addReplyDouble writes it in RESP2 ("%.17g", "inf", "-inf"). */
void fri_reply_double(fr_client *c, double d);
void fri_reply_nil(fr_client *c);        /* $-1 */
void fri_reply_null_array(fr_client *c); /* *-1 */
void fri_reply_array_len(fr_client *c, long n);
void fri_reply_map_len(fr_client *c, long n); /* *2n in RESP2 */
void fri_reply_set_len(fr_client *c, long n);
void fri_reply_empty_array(fr_client *c);
/* Redis's addReplyHelp: "<CMD> <subcommand> [<arg> [value] [opt] ...]. Subcommands are:"
 * (the command as typed, upper-cased), the lines (NULL-terminated), then HELP's own two,
 * as status replies. */
void fri_reply_help(fr_client *c, const char *const *lines);
/* ["0", []]: what a SCAN-family command answers for a missing key (shared.emptyscan). */
void fri_reply_empty_scan(fr_client *c);
/* An array whose length is known only after its elements: reserve, then fill in with the
 * number of elements written since.  Fill inner ones before outer ones (the natural
 * order): a tree closes the innermost open array. */
size_t fri_reply_deferred_len(fr_client *c);
void fri_reply_set_deferred_len(fr_client *c, size_t handle, long n);
void fri_reply_set_deferred_map_len(fr_client *c, size_t handle, long n);
/* A bulk string whose value is known only after what follows it (XAUTOCLAIM's cursor):
 * reserve its place, write what follows, then fill it in (after any deferred length
 * taken after it).  One at a time. */
size_t fri_reply_deferred_bulk(fr_client *c);
void fri_reply_set_deferred_bulk(fr_client *c, size_t handle, const char *p, size_t len);
/* The replies written so far in this call, and dropping those written after a mark (a
 * command that answers something else after all); at the top level only, between
 * replies. */
size_t fri_reply_mark(const fr_client *c);
void fri_reply_rewind(fr_client *c, size_t mark);
/* An error written as it is and not counted in the error statistics (a script's error
 * already counted where redis.call met it). */
void fri_reply_error_uncounted(fr_client *c, const char *err, size_t len);

/* Writing a reply's nodes directly (reply.c).  A handler that knows a reply's whole shape
 * (a stream entry: [id, [field, value, ...]]) builds its nodes in one go when c->tree is
 * set, without an array frame per level: fri_tree_node claims the node the reply goes
 * into (where the next writer's reply would go), fri_tree_nodes the room for an array's
 * elements, and the _at functions fill nodes.  In the check (FRI_TREE_AND_BYTES) the
 * handler writes the bytes too, with c->tree at 0 around those writers (the check then
 * compares the two). */
/* After the nodes, in the check only: 1 with the tree paused for the bytes writers that
 * follow (end the pause with fri_tree_bytes_end), else 0 (nothing more to write). */
static inline int fri_tree_bytes_begin(fr_client *c)
{
    if (c->tree != FRI_TREE_AND_BYTES) return 0;
    c->tree = 0;
    return 1;
}
static inline void fri_tree_bytes_end(fr_client *c) { c->tree = FRI_TREE_AND_BYTES; }
fr_reply *fri_tree_node(fr_client *c);
fr_reply *fri_tree_nodes(fr_client *c, size_t n);
void fri_tree_bulk_at(fr_client *c, fr_reply *r, const char *p, size_t len);
static inline void fri_tree_int_at(fr_reply *r, long long v)
{
    r->type = FR_REPLY_INTEGER;
    r->integer = v;
    r->str = NULL;
    r->len = 0;
    r->elements = NULL;
    r->count = 0;
}
static inline void fri_tree_array_at(fr_reply *r, fr_reply *el, size_t n)
{
    r->type = FR_REPLY_ARRAY;
    r->integer = 0;
    r->str = NULL;
    r->len = 0;
    r->elements = n ? el : NULL;
    r->count = n;
}

/* The shared error texts, word for word as Redis 7.0's. */
#define FRI_ERR_WRONGTYPE "WRONGTYPE Operation against a key holding the wrong kind of value"
#define FRI_ERR_SYNTAX "ERR syntax error"
#define FRI_ERR_NOTINT "ERR value is not an integer or out of range"
#define FRI_ERR_NOTFLOAT "ERR value is not a valid float"
#define FRI_ERR_OVERFLOW "ERR increment or decrement would overflow"
#define FRI_ERR_NOKEY "ERR no such key"
#define FRI_ERR_OUTOFRANGE "ERR index out of range"
#define FRI_ERR_POSITIVE "ERR value is out of range, must be positive"
#define FRI_ERR_OOM "OOM command not allowed when used memory > 'maxmemory'."

/* Redis's default proto-max-bulk-len: no string may grow past it (APPEND, SETRANGE), and
 * no bit offset may address a byte at or past it (SETBIT, GETBIT, BITFIELD). */
#define FRI_PROTO_MAX_BULK_LEN (512LL * 1024 * 1024)

/* The most elements a reply the fake invents (not one bounded by stored data, like
 * SRANDMEMBER with a negative count) may have: beyond it the command answers FRI_ERR_OOM
 * where Redis would exhaust memory building it. */
#define FRI_MAX_REPLY_ELEMENTS (16u * 1024 * 1024)

/* Replies the arity error for the current command, as Redis words it. */
void fri_reply_arity_error(fr_client *c);

/* ----- Argument parsing ("...OrReply": answer the exact error and return -1) ---------- */

int fri_get_ll_or_reply(fr_client *c, const fri_arg *a, long long *out, const char *msg);
/* A long long within [min, max], else msg (or "ERR value is out of range"). */
int fri_get_range_ll_or_reply(fr_client *c, const fri_arg *a, long long min, long long max,
                              long long *out, const char *msg);
/* >= 0, else "ERR value is out of range, must be positive" (or msg). */
int fri_get_positive_ll_or_reply(fr_client *c, const fri_arg *a, long long *out,
                                 const char *msg);
int fri_get_double_or_reply(fr_client *c, const fri_arg *a, double *out, const char *msg);
int fri_get_long_double_or_reply(fr_client *c, const fri_arg *a, long double *out,
                                 const char *msg);
/* Redis's parseScanCursorOrReply: strtoul in base 10 on the argument as a C string, so a
 * sign is accepted (a negative cursor wraps), "" is cursor 0 and bytes after a NUL are
 * ignored; a leading space, trailing garbage or a value past 2^64-1 is "ERR invalid
 * cursor". */
int fri_get_scan_cursor_or_reply(fr_client *c, const fri_arg *a, uint64_t *out);
/* LMPOP and ZMPOP's numkeys at argv[idx] (BLMPOP, BZMPOP: idx 2): at least 1, else "ERR
 * numkeys should be greater than 0", and the keys and the direction after it must fit in
 * the arguments (a syntax error).  0, or -1 answered. */
int fri_mpop_numkeys_or_reply(fr_client *c, int idx, long long *numkeys);
/* What follows LMPOP and ZMPOP's direction, from argv[from]: COUNT count once (at least 1,
 * else "ERR count should be greater than 0"; *count is 1 without it), anything else a
 * syntax error; then, when blocking, the timeout at argv[1].  0, or -1 answered. */
int fri_mpop_count_or_reply(fr_client *c, int from, int blocking, long long *count);
/* *value += incr (INCRBY, HINCRBY), or FRI_ERR_OVERFLOW answered and -1 when the sum
 * leaves the long long range (*value unchanged then). */
int fri_add_ll_or_reply(fr_client *c, long long *value, long long incr);
/* The count l of SRANDMEMBER, HRANDFIELD and ZRANDMEMBER once the key is found: *count its
 * size, *uniq 1 when l >= 0 (distinct members).  A count of 0 answers an empty array; a
 * negative one past FRI_MAX_REPLY_ELEMENTS answers FRI_ERR_OOM (Redis would run out of
 * memory building it); -1 then.  l > LLONG_MIN (the callers' range check refuses it). */
int fri_random_count_or_reply(fr_client *c, long long l, unsigned long long *count, int *uniq);
/* What SSCAN, HSCAN and ZSCAN were asked for. */
typedef struct fri_scan_args {
    uint64_t cursor;    /* where the page starts */
    long long count;    /* COUNT, 10 without it */
    const fri_arg *pat; /* MATCH, NULL without it or for "*" */
} fri_scan_args;
/* The start of SSCAN, HSCAN and ZSCAN key cursor [MATCH p] [COUNT n], in Redis's order:
 * the cursor, the key (of type t: WRONGTYPE otherwise; a missing key answers the empty
 * scan), then the options.  The key's value (its object's ptr: the fri_set, fri_hash or
 * fri_zset), or NULL when the command was answered. */
void *fri_scan_key_or_reply(fr_client *c, fri_type t, fri_scan_args *a);
/* 1 when an element of the page is answered: there is no MATCH, or it matches. */
int fri_scan_match(const fri_scan_args *a, const char *p, size_t len);
/* The head of a SCAN-family reply: a 2-element array and the next cursor (0 at the end);
 * the elements follow. */
void fri_reply_scan_cursor(fr_client *c, uint64_t next);
/* A whole HSCAN or ZSCAN reply over a table's slots [first, end): the cursor next, then
 * for each entry there that MATCH lets through what emit answers (it returns how many
 * elements that is). */
void fri_reply_scan_dict(fr_client *c, const fri_scan_args *a, fri_dict *d, size_t first,
                         size_t end, uint64_t next,
                         long (*emit)(fr_client *c, const fri_dent *e, const void *ctx),
                         const void *ctx);
/* The options of SSCAN, HSCAN and ZSCAN from argv[first] on, as Redis's scanGenericCommand
 * reads them: COUNT n (an integer >= 1, else "ERR syntax error") and MATCH pattern, in any
 * order, the last one of each winning; anything else (TYPE included) is a syntax error.
 * *count is 10 without COUNT; *pat NULL without MATCH or for "*", which matches all. */
int fri_get_scan_options_or_reply(fr_client *c, int first, long long *count,
                                  const fri_arg **pat);
/* A blocking command's timeout in seconds, as Redis 7.0 checks it; *ms_out (may be NULL)
 * gets it in milliseconds, 0 meaning "for ever". */
int fri_get_timeout_or_reply(fr_client *c, const fri_arg *a, long long *ms_out);

/* ----- Keyspace access ---------------------------------------------------------------- */

/* Looks a key up for reading or writing, deleting it first if its TTL has passed (lazy
 * expiry on the virtual clock).  NULL when missing. */
fri_obj *fri_lookup_read(fr_client *c, const fri_arg *key);
fri_obj *fri_lookup_write(fr_client *c, const fri_arg *key);
/* The same on any database and key bytes (for RENAME, MOVE, dumps).  Unlike the two
 * above it does not count as an access (see fri_obj_touch). */
fri_obj *fri_db_lookup(fr_server *s, fri_db *db, const char *key, size_t len, int64_t now);
/* fri_lookup_read without the access: Redis's LOOKUP_NOTOUCH (TYPE, EXISTS, TTL, OBJECT,
 * MEMORY USAGE, DEL). */
fri_obj *fri_lookup_notouch(fr_client *c, const fri_arg *key);

/* Reads a key expecting type t: returns the object, or NULL with *wrongtype set when the
 * key holds another type (the WRONGTYPE error has been replied then) or clear when the
 * key does not exist (nothing replied). */
fri_obj *fri_lookup_typed(fr_client *c, const fri_arg *key, fri_type t, int write,
                          int *wrongtype);

/* Adds a new key (must not exist); the db owns obj afterwards. */
void fri_db_add(fri_db *db, const char *key, size_t len, fri_obj *obj);
/* Sets key to obj, replacing (and freeing) any old value; keeps the old TTL only if
 * keepttl, else obj's expire_ms stands. */
void fri_db_set(fri_db *db, const char *key, size_t len, fri_obj *obj, int keepttl);
/* Deletes a key; 1 if it existed. */
int fri_db_delete(fri_db *db, const char *key, size_t len);
/* Removes the key's entry without freeing the object and returns it (NULL if missing). */
fri_obj *fri_db_unlink(fri_db *db, const char *key, size_t len);

/* Marks the key as modified: every client WATCHing it on this db will see EXEC fail.
 * Every write must call it (Redis's signalModifiedKey). */
void fri_signal_modified(fr_client *c, fri_db *db, const char *key, size_t len);
/* Touches every WATCHed key of db (-1: of every db) that exists now (FLUSHDB/FLUSHALL). */
void fri_touch_all_watched(fr_server *s, int dbid);
/* SWAPDB, before database emptied's keys are replaced with database replaced_with's:
 * Redis's touchAllWatchedKeysInDb(emptied, replaced_with).  A key WATCHed in emptied
 * that exists in either is touched, except: a key that had expired when WATCHed and is
 * absent from replaced_with or expired there (now) is no change; a key absent from emptied
 * that is expired in replaced_with is marked expired instead. */
void fri_touch_watched_swapped(fr_server *s, int emptied, int replaced_with, int64_t now);
void fri_unwatch_all(fr_client *c);

/* Is the key logically expired at now (it may still be in the table)?  Redis's
 * keyIsExpired: a key lives through its deadline millisecond. */
static inline int fri_obj_is_expired(const fri_obj *o, int64_t now)
{
    return o->expire_ms >= 0 && now > o->expire_ms;
}
/* Counts the live keys of a db (every key in it when the active expiry is off). */
size_t fri_db_size(fr_server *s, fri_db *db, int64_t now);

/* Redis "deletes the key if the container became empty" helper. */
void fri_delete_if_empty(fr_client *c, const fri_arg *key, fri_obj *o);

/* Object constructors used by several modules.  A new string is encoded as Redis's
 * createStringObject makes it ("embstr" up to 44 bytes, else "raw"); see object.c's
 * fri_str_* for the other ways Redis makes strings. */
fri_obj *fri_obj_new(fri_type type, void *ptr);
fri_obj *fri_obj_new_string(const char *p, size_t len);
/* A deep copy of the value as COPY makes it (Redis's dupStringObject, listTypeDup, ...):
 * same type and encoding, no TTL, not yet stamped; a string copy is never a shared
 * integer.  NULL when out of memory. */
fri_obj *fri_obj_dup(const fri_obj *o);

/* ----- Object headers: encodings, LRU/LFU, memory (object.c) --------------------------- */

/* Redis's LRU clock at ms: Unix seconds, 24 bits. */
uint32_t fri_lru_clock(int64_t ms);
/* Seconds o has been idle by the LRU clock at now (the clock wraps after 2^24 s). */
unsigned long long fri_obj_lru_idle(fr_server *s, const fri_obj *o, int64_t now);

/* ----- Eviction (evict.c) ------------------------------------------------------------- */

/* Before a command: while maxmemory is set with an evicting policy and the OOM hook says
 * the limit is passed, evicts one key at a time by the policy (docs in evict.c). */
void fri_evict_before_command(fr_server *s, int64_t now);
/* Frees the eviction pool (the server going away). */
void fri_evict_pool_free(fr_server *s);
/* The LRU/LFU field of a value (a shared integer's own, for a key holding one). */
uint32_t fri_obj_lru_get(fr_server *s, const fri_obj *o);
void fri_obj_lru_set(fr_server *s, fri_obj *o, uint32_t lru);
/* LFUDecrAndReturn: the value's LFU counter decayed to now (what an RDB file saves). */
unsigned fri_obj_lfu_counter(fr_server *s, const fri_obj *o, int64_t now);
/* A value entering the keyspace (fri_db_add, fri_db_set) gets the stamp Redis's
 * createObject gives when it is still FRI_LRU_UNSET: the LRU clock of s->cmd_ms, or under
 * an LFU policy that minute and the counter 5. */
void fri_obj_stamp(fr_server *s, fri_obj *o);
/* A command accessed the value (Redis's lookupKey without LOOKUP_NOTOUCH): LRU clock set
 * to now, or the LFU counter decayed and maybe incremented. */
void fri_obj_touch_slow(fr_server *s, fri_obj *o, int64_t now);
static inline void fri_obj_touch(fr_server *s, fri_obj *o, int64_t now)
{
    /* the common case, on every lookup: a key's own LRU field, at the command's clock */
    if (!o->shared && !(s->tun.maxmemory_policy & FRI_MAXMEMORY_FLAG_LFU) && now == s->cmd_ms)
        o->lru = s->cmd_lru;
    else fri_obj_touch_slow(s, o, now);
}
/* The value o stands for a new object that replaced one whose field was old_lru (Redis's
 * dbOverwrite): the LFU data carries over, an LRU stamp is now. */
void fri_obj_overwrite_stamp(fr_server *s, fri_obj *o, uint32_t old_lru);

/* String encodings, as Redis would have them after ... */
void fri_str_created(fri_obj *o);                  /* createStringObject */
void fri_str_encode(fr_server *s, fri_obj *o);     /* tryObjectEncoding (SET, MSET ...) */
/* The same for the argument arg of c's command stored as the value: an argument of 32 kB
 * or more is the query buffer's own sds in Redis (processMultibulkBuffer), not a copy. */
void fri_str_encode_arg(fr_client *c, fri_obj *o, const fri_arg *arg);
void fri_str_new_ll(fr_server *s, fri_obj *o, long long v); /* INCR of a missing key */
/* INCR's result v, whose digits o now holds, over the old value whose LRU/LFU field was
 * old (fri_obj_lru_get before the digits changed): kept in place, or a new int object. */
void fri_str_set_ll(fr_server *s, fri_obj *o, long long v, uint32_t old);
/* SET and its friends store their argument object itself: inside EXEC the queued command
 * still holds it, so until EXEC ends it has two references (OBJECT REFCOUNT 2) and
 * APPEND, SETRANGE, SETBIT or INCR copy it before changing it.  Records that o, just
 * stored under key in c's database, is such an argument (nothing outside EXEC, or for a
 * shared integer).  fri_exec_args_release, when EXEC ends, drops the references. */
void fri_str_stored_arg(fr_client *c, fri_obj *o, const fri_arg *key);
/* The value moved to key (RENAME) still is an argument of the running EXEC. */
void fri_exec_arg_moved(fr_client *c, fri_obj *o, const fri_arg *key);
void fri_exec_args_release(fr_server *s);
/* dbUnshareStringValue: a raw string of its own (restamped when it was not). */
void fri_str_unshare(fr_server *s, fri_obj *o);
/* sdsMakeRoomFor(greedy) on a raw string about to hold newlen bytes: its allocation. */
void fri_str_grow(fri_obj *o, size_t newlen);

/* Sizes for MEMORY USAGE: jemalloc's usable size for a request of n bytes; an sds of len
 * bytes as sdsnewlen allocates it; listpack element sizes (encoding and back-length) of
 * bytes (an integer when they read as one), of an integer, the back-length of an
 * element of l bytes; a dict of n entries whose first `samples` entries take
 * sampled_bytes (entries, keys, values), averaged over n as objectComputeSize does. */
size_t fri_je_size(size_t n);
size_t fri_sds_size(size_t len);
uint64_t fri_lp_str_size(const char *p, size_t len);
uint64_t fri_lp_int_size(int64_t v);
uint64_t fri_lp_backlen_size(uint64_t l);
size_t fri_dict_mem(size_t n, size_t samples, size_t sampled_bytes);
/* The k-th of `samples` entries (by live position) a hash table of n entries is sampled
 * at: spread evenly, as the first ones of Redis's hash order are a random pick. */
size_t fri_sample_index(size_t k, size_t samples, size_t n);
/* objectComputeSize of a value, sampling at most `samples` elements of an aggregate. */
size_t fri_obj_memory(fr_server *s, const fri_obj *o, size_t samples);

/* ----- Data type internals other modules need ----------------------------------------- */

/* Lists: a deque of fri_str* (t_list.c). */
typedef struct fri_list fri_list;
void fri_list_free(fri_list *l);
size_t fri_list_len(const fri_list *l);
const fri_str *fri_list_at(const fri_list *l, size_t i);
/* A new list holding items[0..n) in that order, which it owns afterwards (SORT ... STORE);
 * NULL when out of memory, the items then still the caller's. */
fri_list *fri_list_from_array(fri_str **items, size_t n);
fri_list *fri_list_dup(const fri_list *l);
size_t fri_list_memory(const fri_list *l, const fri_tunables *t, size_t samples);

/* Hashes (t_hash.c): fields in a fri_dict (field -> fri_str* value, insertion order). */
typedef struct fri_hash fri_hash;
void fri_hash_free(fri_hash *h);
/* An empty hash for RESTORE (rdb.c) in the encoding given; fill fri_hash_fields(h). */
fri_hash *fri_hash_restore_new(int listpack);
size_t fri_hash_size(const fri_hash *h);
fri_dict *fri_hash_fields(fri_hash *h);
int fri_hash_is_listpack(const fri_hash *h);
fri_hash *fri_hash_dup(const fri_hash *h);
size_t fri_hash_memory(const fri_hash *h, size_t samples);

/* Sets (t_set.c). */
typedef struct fri_set fri_set;
void fri_set_free(fri_set *s);
size_t fri_set_size(const fri_set *s);
int fri_set_is_intset(const fri_set *s);
/* DUMP and RESTORE (rdb.c): an intset's width in bytes (2, 4, 8); an empty set in the
 * encoding given (an intset of that width at least); setTypeAdd without the size limit
 * (1 added, 0 already there, -1 out of memory; a non-integer turns an intset into a
 * table); setTypeConvert to a table (0, or -1 out of memory). */
unsigned fri_set_intset_width(const fri_set *s);
fri_set *fri_set_restore_new(int intset, unsigned width);
int fri_set_restore_add(fri_set *s, const char *p, size_t len);
int fri_set_restore_convert(fri_set *s);
fri_set *fri_set_dup(const fri_set *s);
size_t fri_set_memory(const fri_set *s, size_t samples);
/* Calls fn for every member in the order SMEMBERS answers; p is valid only during the
 * call (integer members are formatted on the fly). */
void fri_set_foreach(fri_set *s, void (*fn)(const char *p, size_t len, void *ctx), void *ctx);

/* Sorted sets (t_zset.c). */
typedef struct fri_zset fri_zset;
void fri_zset_free(fri_zset *z);
size_t fri_zset_size(const fri_zset *z);
/* SORT's destructive conversion (Redis's zsetConvert to a skiplist): from now on the set
 * behaves as one Redis keeps as a skiplist, whatever its size. */
void fri_zset_convert_skiplist(fri_zset *z);
int fri_zset_is_listpack(const fri_zset *z);
/* RESTORE (rdb.c): an empty set in the encoding given, which adding keeps (1 added, 0
 * already there, -1 out of memory). */
fri_zset *fri_zset_restore_new(int listpack, const fri_tunables *tun);
int fri_zset_restore_add(fri_zset *z, double score, const char *p, size_t len);
fri_zset *fri_zset_dup(const fri_zset *z);
size_t fri_zset_memory(const fri_zset *z, size_t samples);
/* Calls fn for every member in rank order (ascending score, then member bytes). */
void fri_zset_foreach(fri_zset *z, void (*fn)(const char *p, size_t len, double score,
                                              void *ctx), void *ctx);
/* For the GEO commands (t_geo.c), which read a set as Redis's geo.c does: a member's
 * score (1, or 0 when it is not in the set), the ordered index, and ZADD itself, run on
 * the arguments c->argc/c->argv hold (GEOADD's rewritten vector). */
int fri_zset_score(fri_zset *z, const char *p, size_t len, double *score);
struct fri_zsl *fri_zset_zsl(fri_zset *z);
void fri_zadd_command(fr_client *c);

/* Streams (t_stream.c). */
void fri_stream_free(void *stream);
/* A deep copy: entries, nodes, groups, consumers and their pending entries, with their
 * times and counters (Redis's streamDup); NULL when out of memory. */
void *fri_stream_dup(const void *stream);
/* objectComputeSize of a stream (entries' listpacks, radix trees, groups, consumers). */
size_t fri_stream_memory_usage(const void *stream, size_t samples);
/* Appends a stream's dump lines (entries, then groups, consumers and pending entries;
 * format in docs/fake_redis.md) for fr_dump; now is the server's clock. */
void fri_stream_dump(fri_buf *b, void *stream, int64_t now);

/* ----- Pub/Sub (pubsub.c) ---------------------------------------------------------------- */

/* Non-zero when the client has a subscription of any kind (channel, pattern, shard
 * channel): Redis's subscribed mode. */
int fri_pubsub_subscribed(const fr_client *c);
/* The subscribed-mode gate of the dispatcher: in RESP2 (c->proto) a subscribed client
 * may only run (P|S)SUBSCRIBE, (P|S)UNSUBSCRIBE, PING, QUIT and RESET.  Answers Redis's
 * error for any other command and returns -1; 0 lets the command through. */
int fri_pubsub_gate(fr_client *c, const fri_command *cmd);
/* PING of a subscribed RESP2 client answers ["pong", message or ""]: 1 when it replied
 * so, 0 when PING should answer as usual. */
int fri_pubsub_ping(fr_client *c);
/* Drops every subscription of the client without a reply (disconnect, RESET). */
void fri_pubsub_client_free(fr_client *c);
/* Calls fn for each of c's subscriptions (kind 0 channel, 1 pattern, 2 shard channel)
 * until it returns nonzero, which is returned (0 when none did). */
int fri_pubsub_each(fr_client *c, int (*fn)(void *ctx, int kind, const char *p, size_t n),
                    void *ctx);
/* Frees the server's subscription tables (after its clients are gone). */
void fri_pubsub_server_free(fr_server *s);

/* Publishes msg on ch to the subscribers and matching patterns, as PUBLISH does (the
 * message also goes into the fr_published log), on behalf of the server itself: from is
 * the client running a command (NULL when none), which gets the message in its own
 * reply if it is a receiver.  The receivers. */
long long fri_pubsub_publish(fr_server *s, fr_client *from, const char *ch, size_t chlen,
                             const char *msg, size_t msglen);

/* ----- Keyspace notifications (notify.c) ------------------------------------------------ */

/* Redis's notifyKeyspaceEvent: when class type (one FR_NOTIFY_* bit) is enabled, calls
 * the hook and publishes the keyspace and keyevent messages the config asks for. */
void fri_notify_publish(fr_server *s, unsigned type, const char *event, const char *key,
                        size_t len, int dbid);
static inline void fri_notify(fr_server *s, unsigned type, const char *event, const char *key,
                              size_t len, int dbid)
{
    if (s->notify_flags & type) fri_notify_publish(s, type, event, key, len, dbid);
}
/* The same for the running command's key argument in its database. */
static inline void fri_notify_key(fr_client *c, unsigned type, const char *event,
                                  const fri_arg *key)
{
    fri_notify(c->srv, type, event, key->ptr, key->len, c->db->id);
}

/* ----- Blocking (blocked.c) --------------------------------------------------------------- */

/* Runs after each command proc (fri_call), out_mark being c->out's length before it: a
 * blocking command of an opted-in client that could not be served (it wrote the timeout
 * reply) outside EXEC blocks the client instead, its reply withdrawn; then, while any
 * client is blocked, notes the keys the command made ready, in Redis's signal order. */
void fri_blocked_after_call(fr_client *c, const fri_command *cmd, size_t out_mark);
/* Serves the clients blocked on the keys made ready, as Redis's handleClientsBlockedOnKeys
 * does after each top-level command.  Cheap when nothing is ready. */
void fri_blocked_serve_ready(fr_server *s);
/* Forgets a client being freed: unblocks it without a reply, leaves the woken queue. */
void fri_blocked_client_free(fr_client *c);
/* Frees the server's blocking tables (after its clients are gone). */
void fri_blocked_server_free(fr_server *s);

/* XREADGROUP ... BLOCK served when its key was signalled ready (t_stream_group.c), as
 * Redis 7.0 serves a client blocked in a group: a key gone or no longer a stream answers
 * "-UNBLOCKED the stream key no longer exists", a group gone "-NOGROUP the consumer group
 * this client was blocked on no longer exists"; a stream whose last id is past the group's
 * last-delivered id answers [[key, entries after it]] (possibly none: deleted since),
 * delivering them as XREADGROUP > does, the consumer created if needed.  Returns 1 when
 * it replied (the client is to be unblocked), 0 when there is nothing new yet. */
int fri_xreadgroup_serve_blocked(fr_client *c, const fri_arg *key, const fri_arg *group,
                                 const fri_arg *consumer, long long count, int noack);

/* ----- Cluster emulation --------------------------------------------------------------- */

/* CRC16 slot of a key with {hash tags}, as Redis Cluster computes it. */
unsigned fri_key_slot(const char *key, size_t len);

#endif /* FR_INT_H */
