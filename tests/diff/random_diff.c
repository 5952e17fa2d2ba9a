/* random_diff.c -- a seeded random differential test of the fake against redis-server.
 *
 *   random_diff [--seed N] [--runs R] [--commands N] [--only GROUP,...] [--skip CMD,...]
 *               [--cluster] [--keep-going] [--emit FILE] [--inject-fault N] [--events]
 *               [--verbose] [--list] [--default-config] [--roundtrip rdb|aof]
 *
 * A generator that knows every command of the fake's command table draws a sequence of
 * commands whose arguments aim at edge cases: a small pool of keys (so types collide and
 * WRONGTYPE happens), some with {hash tags}; integers at the edge of 64 bits, floats, inf,
 * nan, empty and binary strings, long strings that change Redis's encodings; counts that
 * are 0, negative or huge; out-of-range indexes; option words in random order and case;
 * occasionally a wrong arity or an unknown command; MULTI/EXEC blocks with queue-time and
 * run-time errors; a second client that writes WATCHed keys.  Each command runs on a real
 * redis-server (started with rh_start) and on the fake (on the wall clock), and the raw
 * RESP2 replies are compared byte for byte, except the few replies Redis leaves to chance:
 * see reply_rules below.  Most seeds also run under other values of the parameters that
 * change behaviour (encoding thresholds, stream node sizes: seed_config), set on both sides
 * before the first command.
 *
 * The sequence depends only on the seed, the options and the fake's command table (a
 * generator only runs for commands the fake has), never on the replies, so
 * `random_diff --seed N --commands K` replays the first K commands of any run.  Runs stop
 * at the first mismatch (unless --keep-going), print it with the replay command line and
 * the commands before it, and the last line is "N passed, M failed" (commands).
 * tests/diff/README.md ("Random differential runs") is the user's guide.
 *
 * --events also compares keyspace notifications: both servers get notify-keyspace-events
 * EVENTS_CLASSES, a listener on each side PSUBSCRIBEs __key*__:*, and the messages each
 * command publishes must be the same, in the same order.  Messages caused by the runner's
 * own probes and resyncs are dropped before each command.  The x (expired) and m (keymiss)
 * classes are left out: the two servers' clocks and the runner's probes (reads on the
 * real side only) would make them differ; tests/diff/notify.redis covers them.
 */
#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <time.h>

#include "diff_script.h"
#include "fakeredis.h"
#include "redis_harness.h"

#define MAX_CLIENTS 2     /* client 0 runs most commands, client 1 interferes with WATCH */
#define HISTORY 20        /* commands shown before a mismatch */
#define SHOW_MAX 2000     /* bytes of a reply shown in a report */
#define HUGE_COUNT "1000000" /* a count larger than any collection the generator builds */
#define EVENTS_CLASSES "KEg$lshztn" /* --events: every class but x, e, m and d */

/* ======================================================================================
 * Random numbers: splitmix64, so a seed means the same sequence on every system.
 * ==================================================================================== */

typedef struct rng {
    uint64_t s; /* the state; any value is fine */
} rng;

/* The next 64 random bits. */
static uint64_t rng_next(rng *r) {
    uint64_t z = (r->s += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

/* ======================================================================================
 * How replies are compared.
 *
 * reply_rules -- the only replies not compared byte for byte, each with its reason.  Any
 * error reply is always compared exactly, whatever the rule.
 *   CMP_SORTED  SMEMBERS, HKEYS/HVALS, KEYS, SINTER/SUNION/SDIFF..., SPOP/SRANDMEMBER with
 *               a count covering the whole set: Redis answers in its hash table's order,
 *               seeded at random at start-up.  Exact instead when the real server says
 *               the key is an intset or a listpack (then its order is deterministic).
 *   CMP_PAIRS   HGETALL (and HRANDFIELD ... WITHVALUES covering the hash): the same, but
 *               field/value pairs are kept together.  Exact for listpacks.
 *   CMP_TYPE    TIME (the clock), RANDOMKEY and SRANDMEMBER/SPOP of one member out of
 *               several (random choice): only the reply's type.  Exact when the key space
 *               or set has at most one element.
 *   CMP_ARRLEN  SRANDMEMBER/SPOP/HRANDFIELD/ZRANDMEMBER with a count smaller than the
 *               collection, or negative (repeats allowed): random members, so only the
 *               number of elements.  SPOP then makes the fake's set hold the real one's
 *               members (fake-only SADD/SREM in place, or DEL, SADD, PEXPIREAT when Redis
 *               rebuilt its set; see resync_set), so the runs do not drift apart.
 *   CMP_NEAR    TTL, PTTL, EXPIRETIME, PEXPIRETIME: both servers read the wall clock a few
 *               microseconds apart, so the numbers may differ a little: by 1 in seconds (a
 *               rounding), by DS_NEAR_MS (25) in milliseconds; -1/-2 exactly.  OBJECT
 *               IDLETIME within 1 s, the same way; by type when the key holds a shared
 *               integer, whose one LRU field every key holding it has touched since each
 *               server started (PROBE_IDLE).
 *   CMP_TYPE    (also) MEMORY USAGE of a key the real server holds as a hash table or a
 *               skiplist, whose size the fake estimates (docs/fake_redis.md); exact for
 *               every other encoding (PROBE_MEMORY).
 *   CMP_SCAN    SCAN/SSCAN/HSCAN/ZSCAN: cursors are the implementation's.  Compared (as a
 *               multiset) only when the scan ends in one call: when the real cursor is 0
 *               and the whole collection fits in COUNT, or both cursors are 0; exact for
 *               intsets/listpacks (Redis returns them whole, in order); otherwise type.
 *   CMP_EXEC    EXEC: each element of the array by the rule of the command it answers.
 *   SORT        exact, except where Redis's order is its hash table's (see sort_mode):
 *               BY nosort on a set kept as a hash table (no STORE), and ALPHA on such a
 *               set or on a sorted set (which SORT always loads from its hash table) when
 *               elements can tie: with a BY pattern (equal or missing BY values), or
 *               without STORE (strcoll stops at a NUL).  Then as multisets, by length
 *               with LIMIT; CMP_COLL compares ALPHA without BY exactly unless the real
 *               reply holds such a tie.  A STORE whose list may differ has its count
 *               compared and the fake's list rebuilt from the real one (resync_sort).
 *   CMP_TIMES   XPENDING (extended form), XINFO CONSUMERS, XINFO STREAM FULL: idle times
 *               and delivery/seen timestamps come from each server's clock, so those
 *               integers (and only those) may differ by DS_NEAR_MS; everything else
 *               exactly.
 *   skipped     XADD with an automatic ID (*) when the ID would come from the clock (the
 *               stream is missing or its last ID is not far in the future): the IDs would
 *               differ.  A lex range over a sorted set whose scores differ, when Redis
 *               keeps it as a skiplist: the answer depends on the skiplist's random shape
 *               (Redis's documentation calls it unspecified).  Skipped commands are run on
 *               neither side and not counted.
 * Not generated at all: COMMAND COUNT (the fake has fewer commands, by design) and
 * COMMAND without a subcommand (the whole command table).
 * ==================================================================================== */

typedef enum cmp_mode {
    CMP_EXACT = 0, /* byte for byte */
    CMP_SORTED,    /* arrays as multisets, at every depth */
    CMP_PAIRS,     /* a flat array as a multiset of consecutive pairs */
    CMP_TYPE,      /* the first byte only */
    CMP_ARRLEN,    /* the array header only */
    CMP_NEAR,      /* an integer within step.tolerance */
    CMP_FIRSTLINE, /* the first line only: a bulk string's or an array's length */
    CMP_SCAN,      /* a SCAN-family reply, see compare() */
    CMP_EXEC,      /* EXEC's array, element by element with the queued commands' rules */
    CMP_TIMES,     /* exact but for idle times and timestamps */
    CMP_COLL,      /* SORT ... ALPHA: exact unless the real reply holds a strcoll tie */
} cmp_mode;

/* The rule's description, for a mismatch report. */
static const char *mode_name(cmp_mode m) {
    switch (m) {
    case CMP_EXACT: return "byte for byte";
    case CMP_SORTED: return "as multisets (order is Redis's hash table's)";
    case CMP_PAIRS: return "as multisets of field/value pairs";
    case CMP_TYPE: return "by type only (a random choice)";
    case CMP_ARRLEN: return "by array length only (random members)";
    case CMP_FIRSTLINE: return "by length only (a payload holding Redis's hash order or times)";
    case CMP_NEAR: return "as numbers within the clock's tolerance";
    case CMP_SCAN: return "as a scan (cursor 0 and a multiset when it ends in one call)";
    case CMP_EXEC: return "element by element, each by its command's rule";
    case CMP_TIMES: return "exactly, except idle times and timestamps (within DS_NEAR_MS)";
    case CMP_COLL: return "exactly, or as multisets where strcoll ties (hash-table order)";
    }
    return "?";
}

/* What the executor asks the real server before a command, to pick the rule. */
typedef enum probe_kind {
    PROBE_NONE = 0,
    PROBE_ORDER,     /* exact when the key is an intset/listpack, else the step's mode */
    PROBE_RANDPICK,  /* SRANDMEMBER/HRANDFIELD/ZRANDMEMBER: by the count and the size */
    PROBE_SPOP,      /* SPOP: like RANDPICK, and resynchronise the fake afterwards */
    PROBE_RANDOMKEY, /* exact when the database has at most one key */
    PROBE_SCAN,      /* SCAN family: the size of the collection (or database) */
    PROBE_LEX,       /* a lex range: skipped when Redis's answer is unspecified */
    PROBE_XADD_STAR, /* XADD *: skipped unless the new ID is certain */
    PROBE_SORT,      /* SORT/SORT_RO: the source's type and encoding decide (sort_mode) */
    PROBE_MEMORY,    /* MEMORY USAGE: exact unless the key is a hash table or a skiplist,
                        whose size the fake estimates (docs/fake_redis.md), then by type */
    PROBE_IDLE,      /* OBJECT IDLETIME: by type when the key holds a shared integer, whose
                        one LRU field every key holding it touches (since each server
                        started), else the step's mode */
    PROBE_DUMP,      /* DUMP: exact where Redis's payload is deterministic; by length for a
                        hash table (its order) or a stream with groups (delivery and seen
                        times); by type for a list of several quicklist nodes, whose cuts
                        depend on how it was built (the fake cuts as RPUSH does) */
} probe_kind;

/* One generated command. */
typedef struct step {
    int client;       /* 0 or 1 */
    int argc;         /* number of arguments */
    int cap;          /* allocated slots in argv/lens */
    char **argv;      /* NUL-terminated heap copies, binary safe via lens */
    size_t *lens;     /* byte length of each argument */
    cmp_mode mode;    /* how to compare (the conservative rule) */
    probe_kind probe; /* what to ask the real server first */
    int key_arg;      /* index of the key the probe looks at (0: none, the database) */
    long long count;  /* PROBE_RANDPICK/SPOP/SCAN: the count argument */
    int has_count;    /* a count was given (PROBE_RANDPICK/SPOP) */
    int pairs;        /* the reply is field/value (or member/score) pairs */
    long tolerance;   /* CMP_NEAR: the allowed difference */
    int keep_payload; /* DUMP: remember each side's payload for a RESTORE that follows */
    int payload_arg;  /* RESTORE: the argument replaced by each side's remembered payload
                         ("" when there is none), 0 for none */
    char *src;        /* with payload_arg: the DUMPed key, for the diff-script line */
    size_t srclen;
} step;

/* Frees a step's arguments and zeroes it. */
static void step_free(step *s) {
    for (int i = 0; i < s->argc; i++) free(s->argv[i]);
    free(s->argv);
    free(s->lens);
    free(s->src);
    memset(s, 0, sizeof *s);
}

/* ======================================================================================
 * RESP2 helpers: spans of replies, for the comparison rules.
 * ==================================================================================== */

/* Length of the line at p (up to and including \r\n), or 0 if there is none. */
static size_t line_len(const char *p, size_t len) {
    for (size_t i = 0; i + 1 < len; i++)
        if (p[i] == '\r' && p[i + 1] == '\n') return i + 2;
    return 0;
}

/* Length of the one complete reply at p, or 0 if it is incomplete or malformed. */
static size_t resp_len(const char *p, size_t len) {
    size_t l = line_len(p, len);
    if (l == 0) return 0;
    long long n = strtoll(p + 1, NULL, 10);
    switch (p[0]) {
    case '+':
    case '-':
    case ':': return l;
    case '$':
        if (n < 0) return l;
        return l + (size_t)n + 2 <= len ? l + (size_t)n + 2 : 0;
    case '*': {
        size_t off = l;
        for (long long i = 0; i < n; i++) {
            size_t e = resp_len(p + off, len - off);
            if (e == 0) return 0;
            off += e;
        }
        return off;
    }
    default: return 0;
    }
}

/* A reply cut into pieces: the elements of an array. */
typedef struct span {
    const char *p; /* first byte of the element */
    size_t len;    /* its length */
} span;

typedef struct spans {
    span *v;    /* the elements */
    size_t n;   /* in use */
    size_t cap; /* allocated */
} spans;

/* Splits an array reply into its elements.  Returns the count, or -1 if the reply is not
 * a (non-nil) array. */
static long split_array(const char *p, size_t len, spans *out) {
    out->n = 0;
    if (len == 0 || p[0] != '*') return -1;
    size_t l = line_len(p, len);
    long long n = strtoll(p + 1, NULL, 10);
    if (l == 0 || n < 0) return -1;
    size_t off = l;
    for (long long i = 0; i < n; i++) {
        size_t e = resp_len(p + off, len - off);
        if (e == 0) return -1;
        if (out->n == out->cap) {
            out->cap = out->cap ? out->cap * 2 : 16;
            out->v = realloc(out->v, out->cap * sizeof *out->v);
            if (!out->v) abort();
        }
        out->v[out->n].p = p + off;
        out->v[out->n].len = e;
        out->n++;
        off += e;
    }
    return (long)out->n;
}

/* qsort order of spans: bytes, shorter first on a common prefix. */
static int span_cmp(const void *a, const void *b) {
    const span *x = a, *y = b;
    size_t n = x->len < y->len ? x->len : y->len;
    int c = memcmp(x->p, y->p, n);
    if (c) return c;
    return x->len < y->len ? -1 : x->len > y->len;
}

/* Whether two byte strings are identical. */
static int bytes_equal(const char *a, size_t alen, const char *b, size_t blen) {
    return alen == blen && (alen == 0 || !memcmp(a, b, alen));
}

/* Arrays equal as multisets of consecutive pairs (HGETALL): pairs stay together. */
static int pairs_equal(const char *a, size_t alen, const char *b, size_t blen) {
    spans sa = {0}, sb = {0};
    int eq = 0;
    long na = split_array(a, alen, &sa), nb = split_array(b, blen, &sb);
    if (na < 0 || nb < 0 || na != nb || na % 2) {
        eq = bytes_equal(a, alen, b, blen);
    } else {
        /* Fold each pair into one span (the two elements are adjacent in memory). */
        for (long i = 0; i < na / 2; i++) {
            sa.v[i].p = sa.v[2 * i].p;
            sa.v[i].len = sa.v[2 * i].len + sa.v[2 * i + 1].len;
            sb.v[i].p = sb.v[2 * i].p;
            sb.v[i].len = sb.v[2 * i].len + sb.v[2 * i + 1].len;
        }
        if (na > 0) {
            qsort(sa.v, (size_t)na / 2, sizeof *sa.v, span_cmp);
            qsort(sb.v, (size_t)nb / 2, sizeof *sb.v, span_cmp);
        }
        eq = 1;
        for (long i = 0; i < na / 2 && eq; i++) eq = span_cmp(&sa.v[i], &sb.v[i]) == 0;
    }
    free(sa.v);
    free(sb.v);
    return eq;
}

/* The integer of a ":N" reply; 0 if it is not one. */
static int reply_integer(const char *p, size_t len, long long *out) {
    if (len < 4 || p[0] != ':') return 0;
    char *end;
    errno = 0;
    *out = strtoll(p + 1, &end, 10);
    return errno == 0 && *end == '\r';
}

/* Whether the bulk or status reply at p is exactly the string s. */
static int reply_is_string(const char *p, size_t len, const char *s) {
    size_t n = strlen(s);
    if (len > 0 && p[0] == '+') return len == n + 3 && !memcmp(p + 1, s, n);
    if (len > 0 && p[0] == '$') {
        size_t l = line_len(p, len);
        return l && strtoll(p + 1, NULL, 10) == (long long)n && len == l + n + 2 &&
               !memcmp(p + l, s, n);
    }
    return 0;
}

/* ======================================================================================
 * The generator.
 * ==================================================================================== */

/* A binary-safe string constant. */
typedef struct bstr {
    const char *p; /* bytes */
    size_t n;      /* length */
} bstr;
#define B(s) {s, sizeof(s) - 1}
#define NELEM(a) (sizeof(a) / sizeof((a)[0]))

typedef struct gen gen;
typedef void gen_fn(gen *g);

/* One generator: a command of the fake's table and how to draw its arguments. */
typedef struct gen_entry {
    const char *name; /* the fake's row name: "set", "command|count" */
    gen_fn *fn;       /* pushes one or more steps */
    int weight;       /* relative frequency within its group (tenths) */
    int no_block;     /* never drawn inside a MULTI block (a block of its own, or a lex
                         range whose answer may be unspecified by the time EXEC runs it) */
} gen_entry;

/* A generator the fake has, with its group. */
typedef struct live_entry {
    const gen_entry *e; /* the generator */
    char *group;        /* the fake table's group ("string", "sorted-set" ...) */
} live_entry;

struct gen {
    rng r;              /* the sequence's only source of randomness */
    int cluster;        /* keys lean to one hash slot: {t} */
    int client;         /* the client the next command goes to */
    int in_block;       /* generating inside MULTI: only deterministic forms */
    step cur;           /* the step being built */
    step *queue;        /* generated, not yet executed, in order */
    size_t qhead, qlen, qcap;
    live_entry *live;   /* the generators in use */
    size_t nlive;
    char **groups;      /* distinct groups of live, for the two-level draw */
    size_t ngroups;
};

/* Uniform in [0, n) (the modulo bias is irrelevant here); chance: true percent% of the
 * time; pick: one element of a pool. */
static uint64_t rnd(gen *g, uint64_t n) { return n ? rng_next(&g->r) % n : 0; }
static int chance(gen *g, int percent) { return (int)rnd(g, 100) < percent; }
static const bstr *pick(gen *g, const bstr *arr, size_t n) { return &arr[rnd(g, n)]; }
#define PICK(g, arr) pick((g), (arr), NELEM(arr))

/* ----- Building a step ------------------------------------------------------------- */

/* Appends an argument (a copy of n bytes) to the step being built; a, ab and af are the
 * C-string, pool and printf forms. */
static void add_arg(gen *g, const char *p, size_t n) {
    step *s = &g->cur;
    if (s->argc == s->cap) {
        s->cap = s->cap ? s->cap * 2 : 8;
        s->argv = realloc(s->argv, (size_t)s->cap * sizeof *s->argv);
        s->lens = realloc(s->lens, (size_t)s->cap * sizeof *s->lens);
        if (!s->argv || !s->lens) abort();
    }
    char *c = malloc(n + 1);
    if (!c) abort();
    if (n) memcpy(c, p, n);
    c[n] = 0;
    s->argv[s->argc] = c;
    s->lens[s->argc] = n;
    s->argc++;
}

static void a(gen *g, const char *s) { add_arg(g, s, strlen(s)); }
static void ab(gen *g, const bstr *b) { add_arg(g, b->p, b->n); }
static void af(gen *g, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void af(gen *g, const char *fmt, ...) {
    char buf[128];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    a(g, buf);
}

/* An option word (or command name) in a random case: mostly upper, some lower, some mixed. */
static void word(gen *g, const char *w) {
    char buf[64];
    size_t n = strlen(w);
    if (n >= sizeof buf) n = sizeof buf - 1;
    int how = (int)rnd(g, 10);
    for (size_t i = 0; i < n; i++) {
        char ch = w[i];
        int up = how < 6 ? 1 : how < 9 ? 0 : (int)rnd(g, 2);
        if (ch >= 'a' && ch <= 'z' && up) ch = (char)(ch - 32);
        if (ch >= 'A' && ch <= 'Z' && !up) ch = (char)(ch + 32);
        buf[i] = ch;
    }
    add_arg(g, buf, n);
}

/* Starts a command on the current client. */
static void begin(gen *g, const char *name) {
    memset(&g->cur, 0, sizeof g->cur);
    g->cur.client = g->client;
    word(g, name);
}

/* Moves the step being built to the end of the queue. */
static void push_step(gen *g) {
    if (g->qhead + g->qlen == g->qcap) {
        if (g->qhead > 0) {
            memmove(g->queue, g->queue + g->qhead, g->qlen * sizeof *g->queue);
            g->qhead = 0;
        } else {
            g->qcap = g->qcap ? g->qcap * 2 : 64;
            g->queue = realloc(g->queue, g->qcap * sizeof *g->queue);
            if (!g->queue) abort();
        }
    }
    g->queue[g->qhead + g->qlen++] = g->cur;
    memset(&g->cur, 0, sizeof g->cur);
}

/* Finishes the command with its comparison rule; sometimes breaks its arity (one argument
 * less or one more) unless fixed_arity. */
static void finish_ex(gen *g, cmp_mode mode, int fixed_arity) {
    g->cur.mode = mode;
    if (!fixed_arity && chance(g, 2)) {
        if (g->cur.argc > 1 && chance(g, 50)) {
            g->cur.argc--;
            free(g->cur.argv[g->cur.argc]);
            if (g->cur.key_arg >= g->cur.argc) g->cur.probe = PROBE_NONE;
        } else {
            a(g, "extra");
        }
    }
    push_step(g);
}
static void finish(gen *g, cmp_mode mode) { finish_ex(g, mode, 0); }

/* ----- Argument pools ---------------------------------------------------------------- */

/* Keys: three per type so each type's commands mostly meet their own type, plus a few
 * shared ones; {t} keys share a hash slot (they matter in --cluster runs). */
static const bstr KEYS_STRING[] = {B("s1"), B("{t}s2"), B("{t}s3")};
static const bstr KEYS_LIST[] = {B("l1"), B("{t}l2"), B("{t}l3")};
static const bstr KEYS_HASH[] = {B("h1"), B("{t}h2"), B("{t}h3")};
static const bstr KEYS_SET[] = {B("S1"), B("{t}S2"), B("{t}S3")};
static const bstr KEYS_ZSET[] = {B("z1"), B("{t}z2"), B("{t}z3")};
static const bstr KEYS_STREAM[] = {B("x1"), B("{t}x2"), B("{t}x3")};
static const bstr KEYS_EXTRA[] = {B("k"), B("{t}k"), B(""), B("\x00k\xff"), B("{t}")};
static const bstr *const KEY_POOLS[] = {KEYS_STRING, KEYS_LIST, KEYS_HASH, KEYS_SET, KEYS_ZSET,
                                        KEYS_STREAM};

/* A key: mostly one of the command's own type (own), sometimes any type's, sometimes an
 * odd one (empty, binary, a bare hash tag).  In a cluster, mostly {t} keys, so that
 * multi-key commands usually stay in one slot. */
static void key_from(gen *g, const bstr *own) {
    int r = (int)rnd(g, 100);
    if (g->cluster && r < 40) {
        /* In a cluster most multi-key commands should stay in one slot. */
        const bstr *pool = r < 30 ? own : KEY_POOLS[rnd(g, NELEM(KEY_POOLS))];
        ab(g, &pool[1 + rnd(g, 2)]);
    } else if (r < 72) {
        ab(g, &own[rnd(g, 3)]);
    } else if (r < 95) {
        ab(g, &KEY_POOLS[rnd(g, NELEM(KEY_POOLS))][rnd(g, 3)]);
    } else {
        ab(g, PICK(g, KEYS_EXTRA));
    }
}
static void key_s(gen *g) { key_from(g, KEYS_STRING); }
static void key_l(gen *g) { key_from(g, KEYS_LIST); }
static void key_h(gen *g) { key_from(g, KEYS_HASH); }
static void key_S(gen *g) { key_from(g, KEYS_SET); }
static void key_z(gen *g) { key_from(g, KEYS_ZSET); }
static void key_x(gen *g) { key_from(g, KEYS_STREAM); }
static void key_any(gen *g) { key_from(g, KEY_POOLS[rnd(g, NELEM(KEY_POOLS))]); }

static const bstr INTS[] = {
    B("0"), B("1"), B("-1"), B("2"), B("3"), B("10"), B("-7"), B("100"), B("12345"),
    B("9223372036854775807"), B("-9223372036854775808"), B("9223372036854775806"),
    B("-9223372036854775807"), B("9223372036854775808"), B("-9223372036854775809"),
    B("4611686018427387904"), B("1.5"), B("abc"), B(""), B("007"), B(" 1"), B("+1"),
    B("-0"), B("1e3"), B("0x10"), B("99999999999999999999"),
};
static const bstr FLOATS[] = {
    B("0"), B("1"), B("1.5"), B("-2.25"), B("0.1"), B("1e3"), B("1e308"), B("-1e308"),
    B("1.7976931348623157e308"), B("inf"), B("-inf"), B("+inf"), B("nan"), B("abc"), B(""),
    B("3.0e-5"), B("5.0e3"), B("10"), B("-0"), B("1e-320"), B("17179869184"), B(".5"),
    B("5."), B(" 1"), B("1 "), B("0x10"), B("9223372036854775807"), B("-3"), B("2.5"),
};
static const bstr STRINGS[] = {
    B("hello"), B("a"), B("b"), B(""), B("\x00\xff"), B("a b"), B("a\r\nb"), B("\xc3\xa9t\xc3\xa9"),
    B("foo"), B("bar"), B("abcdefghij"), B("ab"), B("ba"), B("x"),
};

/* A long string: a little over Redis's 64-byte listpack limit, or a few hundred bytes. */
static void long_string(gen *g) {
    static const size_t lens[] = {65, 65, 100, 300};
    size_t n = lens[rnd(g, NELEM(lens))];
    char buf[300];
    char c = (char)('a' + rnd(g, 3));
    for (size_t i = 0; i < n; i++) buf[i] = (i % 10 == 9) ? (char)('0' + i / 10 % 10) : c;
    add_arg(g, buf, n);
}

/* A value: any string, integer or float. */
static void value(gen *g) {
    int r = (int)rnd(g, 100);
    if (r < 35) ab(g, PICK(g, STRINGS));
    else if (r < 65) ab(g, PICK(g, INTS));
    else if (r < 92) ab(g, PICK(g, FLOATS));
    else long_string(g);
}
/* An integer argument (INCRBY ...): mostly small, sometimes an edge of 64 bits or not an
 * integer at all.  floatv: the same for floats. */
static void integer(gen *g) {
    if (chance(g, 60)) af(g, "%d", (int)rnd(g, 21) - 10);
    else ab(g, PICK(g, INTS));
}
static void floatv(gen *g) {
    if (chance(g, 30)) af(g, "%d.%d", (int)rnd(g, 21) - 10, (int)rnd(g, 100));
    else ab(g, PICK(g, FLOATS));
}

/* A count: mostly small, sometimes 0, negative, huge or not a number. */
static const bstr COUNTS[] = {
    B("0"), B("-1"), B("-5"), B("100"), B("9223372036854775807"), B("-9223372036854775808"),
    B("4294967296"), B("abc"), B("1.5"), B(""), B("2147483648"), B("-2147483649"),
};
static long long count_arg(gen *g) {
    if (chance(g, 75)) {
        long long v = (long long)rnd(g, 6);
        af(g, "%lld", v);
        return v;
    }
    const bstr *b = PICK(g, COUNTS);
    ab(g, b);
    char *end;
    errno = 0;
    long long v = strtoll(b->p, &end, 10);
    return (errno || *end || b->n == 0) ? LLONG_MIN : v;
}

/* An index into a list/string/zset: mostly small, sometimes out of range. */
static const bstr INDEXES[] = {
    B("0"), B("-1"), B("100"), B("-100"), B("9223372036854775807"), B("-9223372036854775808"),
    B("2147483648"), B("x"), B("1.0"), B(""), B("-0"),
};
static void index_arg(gen *g) {
    if (chance(g, 75)) af(g, "%d", (int)rnd(g, 13) - 6);
    else ab(g, PICK(g, INDEXES));
}

/* Hash fields, set members (mostly integers, so intsets form and break), zset members. */
static const bstr FIELDS[] = {B("f1"), B("f2"), B("f3"), B("a"), B("b"), B("1"), B(""), B("\x00"),
                              B("F1")};
static void field(gen *g) {
    if (chance(g, 3)) long_string(g);
    else ab(g, PICK(g, FIELDS));
}
static const bstr MEMBERS[] = {
    B("1"), B("2"), B("3"), B("-1"), B("10"), B("100"), B("0"), B("a"), B("b"), B("c"), B(""),
    B("\x00\xff"), B("007"), B("9223372036854775807"), B("-9223372036854775808"), B("+5"),
    B("1.0"), B("65536"), B("4294967296"), B("-32769"),
};
static void member(gen *g) {
    int r = (int)rnd(g, 100);
    if (r < 55) af(g, "%d", (int)rnd(g, 12) - 2);
    else if (r < 97) ab(g, PICK(g, MEMBERS));
    else long_string(g);
}
static const bstr ZMEMBERS[] = {B("a"), B("b"), B("c"), B("d"), B("e"), B("aa"), B("1"), B("2"),
                                B(""), B("m\x00"), B("\xff"), B("B")};
static void zmember(gen *g) {
    if (chance(g, 3)) long_string(g);
    else ab(g, PICK(g, ZMEMBERS));
}
static const bstr SCORES[] = {
    B("0"), B("1"), B("2"), B("3"), B("-1"), B("1.5"), B("-2.5"), B("inf"), B("-inf"), B("+inf"),
    B("1e300"), B("nan"), B("abc"), B("(1"), B("10"), B("3.0"), B("0x10"), B(""), B("-0"),
    B("1e-300"), B("9007199254740993"), B(" 1"),
};
static void score(gen *g) {
    if (chance(g, 60)) af(g, "%d", (int)rnd(g, 7) - 2);
    else ab(g, PICK(g, SCORES));
}
static const bstr SCORE_RANGES[] = {
    B("-inf"), B("+inf"), B("inf"), B("0"), B("1"), B("2"), B("(1"), B("(2"), B("(0"), B("-1"),
    B("(-inf"), B("(+inf"), B("1.5"), B("(2.5"), B("abc"), B("("), B("nan"), B("(nan"), B(""),
    B("[1"), B("3"),
};
static void score_range(gen *g) {
    if (chance(g, 30)) af(g, "%s%d", chance(g, 50) ? "(" : "", (int)rnd(g, 6) - 2);
    else ab(g, PICK(g, SCORE_RANGES));
}
static const bstr LEX_RANGES[] = {
    B("-"), B("+"), B("[a"), B("(a"), B("[b"), B("(b"), B("[c"), B("(d"), B("[aa"), B("["),
    B("("), B("a"), B("[\xff"), B("(\x00"), B(""), B("-inf"), B("[e"), B("+a"),
};
static void lex_range(gen *g) { ab(g, PICK(g, LEX_RANGES)); }

/* Expiry times that never race the wall clock: at least 1000 s ahead, or in the past, or
 * invalid. */
static const bstr TTL_EDGES[] = {
    B("0"), B("-1"), B("-100"), B("9223372036854775807"), B("-9223372036854775808"),
    B("9223372036854775"), B("abc"), B("1.5"), B(""), B("4611686018427387904"),
};
static void ttl_seconds(gen *g) {
    if (chance(g, 85)) af(g, "%d", 1000 + (int)rnd(g, 1000000));
    else ab(g, PICK(g, TTL_EDGES));
}
static void ttl_millis(gen *g) {
    if (chance(g, 85)) af(g, "%lld", (1000 + (long long)rnd(g, 1000000)) * 1000 + (long long)rnd(g, 1000));
    else ab(g, PICK(g, TTL_EDGES));
}
static void unix_seconds(gen *g) {
    int r = (int)rnd(g, 100);
    if (r < 60) af(g, "%lld", 4102444800LL + (long long)rnd(g, 1000000)); /* after 2100 */
    else if (r < 85) af(g, "%lld", 1000000000LL + (long long)rnd(g, 1000000)); /* 2001 */
    else ab(g, PICK(g, TTL_EDGES));
}
static void unix_millis(gen *g) {
    int r = (int)rnd(g, 100);
    if (r < 60) af(g, "%lld", (4102444800LL + (long long)rnd(g, 1000000)) * 1000 + (long long)rnd(g, 1000));
    else if (r < 85) af(g, "%lld", (1000000000LL + (long long)rnd(g, 1000000)) * 1000);
    else ab(g, PICK(g, TTL_EDGES));
}

/* A blocking timeout that returns quickly on an empty key (never 0 outside MULTI). */
static void block_timeout(gen *g) {
    static const bstr t[] = {B("0.01"), B("0.01"), B("0.001"), B("-1"), B("abc"), B("1e-3"),
                             B("0.005"), B("inf")};
    const bstr *b = PICK(g, t);
    if (b->p[0] == 'i' && !g->in_block) b = &t[0]; /* inf would block for ever */
    ab(g, b);
}

/* Draws each of the options (given as NULL-terminated words), in random order, each with
 * probability percent; fn (may be NULL) adds what follows the word i. */
typedef void opt_fn(gen *g, int i);
static void options(gen *g, const char *const *words, int percent, opt_fn *fn) {
    int n = 0;
    while (words[n]) n++;
    int order[16];
    for (int i = 0; i < n; i++) order[i] = i;
    for (int i = n - 1; i > 0; i--) {
        int j = (int)rnd(g, (uint64_t)i + 1);
        int t = order[i];
        order[i] = order[j];
        order[j] = t;
    }
    for (int i = 0; i < n; i++) {
        if (!chance(g, percent)) continue;
        word(g, words[order[i]]);
        if (fn) fn(g, order[i]);
    }
}

/* ----- Generic / keyspace ------------------------------------------------------------ */

/* Between min and max keys drawn by k. */
static void keys_n(gen *g, void (*k)(gen *), int min, int max) {
    int n = min + (int)rnd(g, (uint64_t)(max - min + 1));
    for (int i = 0; i < n; i++) k(g);
}

static void g_del(gen *g) { begin(g, "del"); keys_n(g, key_any, 1, 3); finish(g, CMP_EXACT); }
static void g_unlink(gen *g) { begin(g, "unlink"); keys_n(g, key_any, 1, 3); finish(g, CMP_EXACT); }
static void g_exists(gen *g) { begin(g, "exists"); keys_n(g, key_any, 1, 4); finish(g, CMP_EXACT); }
static void g_touch(gen *g) { begin(g, "touch"); keys_n(g, key_any, 1, 3); finish(g, CMP_EXACT); }
static void g_type(gen *g) { begin(g, "type"); key_any(g); finish(g, CMP_EXACT); }

static const bstr PATTERNS[] = {
    B("*"), B("s*"), B("{t}*"), B("?1"), B("[sS]*"), B("[^s]*"), B("\\{t\\}*"), B("*\x00*"),
    B("h[1-2]"), B("["), B("\\"), B("*2"), B("[a-"), B("*[!]*"), B("z?"), B(""), B("S1"),
    B("*\\"), B("[]]"), B("*3*"),
};
static void g_keys(gen *g) { begin(g, "keys"); ab(g, PICK(g, PATTERNS)); finish(g, CMP_SORTED); }

/* The options of SCAN-family commands; returns the COUNT given (10 if none, -1 if not a
 * plain number). */
static long long scan_options(gen *g, int with_type) {
    long long count = 10;
    int n = (int)rnd(g, 4);
    for (int i = 0; i < n; i++) {
        int w = (int)rnd(g, with_type ? 3 : 2);
        if (w == 0) {
            word(g, "match");
            ab(g, PICK(g, PATTERNS));
        } else if (w == 1) {
            word(g, "count");
            if (chance(g, 70)) {
                static const long long big[] = {1000, 100, 1000, 3, 1};
                count = big[rnd(g, NELEM(big))];
                af(g, "%lld", count);
            } else {
                count = count_arg(g);
                if (count < 1) count = -1;
            }
        } else {
            static const bstr types[] = {B("string"), B("list"), B("hash"), B("set"), B("zset"),
                                         B("stream"), B("nosuch"), B("STRING"), B("")};
            word(g, "type");
            ab(g, PICK(g, types));
        }
    }
    return count;
}
/* A SCAN cursor: mostly 0, sometimes invalid or out of range. */
static void scan_cursor(gen *g) {
    static const bstr c[] = {B("0"), B("0"), B("0"), B("0"), B("abc"), B("-1"), B("1.5"),
                             B("18446744073709551615"), B("18446744073709551616"), B("")};
    ab(g, PICK(g, c));
}
static void g_scan(gen *g) {
    begin(g, "scan");
    scan_cursor(g);
    g->cur.count = scan_options(g, 1);
    g->cur.probe = PROBE_SCAN;
    finish(g, CMP_SCAN);
}

static void g_randomkey(gen *g) {
    begin(g, "randomkey");
    g->cur.probe = PROBE_RANDOMKEY;
    finish(g, CMP_TYPE);
}
static void rename_like(gen *g, const char *name) {
    begin(g, name);
    key_any(g);
    key_any(g);
    finish(g, CMP_EXACT);
}
static void g_rename(gen *g) { rename_like(g, "rename"); }
static void g_renamenx(gen *g) { rename_like(g, "renamenx"); }

/* A database index: 0 or 1, sometimes out of range or not a number. */
static void db_index(gen *g) {
    static const bstr d[] = {B("16"), B("-1"), B("abc"), B(""), B("1.0"), B("9223372036854775807")};
    if (chance(g, 90)) af(g, "%d", (int)rnd(g, 2));
    else ab(g, PICK(g, d));
}
static void g_move(gen *g) { begin(g, "move"); key_any(g); db_index(g); finish(g, CMP_EXACT); }

static const char *const EXPIRE_OPTS[] = {"NX", "XX", "GT", "LT", NULL};
static void expire_options(gen *g) {
    if (chance(g, 60)) return;
    options(g, EXPIRE_OPTS, 30, NULL);
}
static void g_expire(gen *g) { begin(g, "expire"); key_any(g); ttl_seconds(g); expire_options(g); finish(g, CMP_EXACT); }
static void g_pexpire(gen *g) { begin(g, "pexpire"); key_any(g); ttl_millis(g); expire_options(g); finish(g, CMP_EXACT); }
static void g_expireat(gen *g) { begin(g, "expireat"); key_any(g); unix_seconds(g); expire_options(g); finish(g, CMP_EXACT); }
static void g_pexpireat(gen *g) { begin(g, "pexpireat"); key_any(g); unix_millis(g); expire_options(g); finish(g, CMP_EXACT); }

/* A TTL-like read of a key, compared within tolerance. */
static void near(gen *g, const char *name, long tolerance) {
    begin(g, name);
    key_any(g);
    g->cur.tolerance = tolerance;
    finish(g, CMP_NEAR);
}
static void g_ttl(gen *g) { near(g, "ttl", 1); }
static void g_pttl(gen *g) { near(g, "pttl", DS_NEAR_MS); }
static void g_expiretime(gen *g) { near(g, "expiretime", 1); }
static void g_pexpiretime(gen *g) { near(g, "pexpiretime", DS_NEAR_MS); }
static void g_persist(gen *g) { begin(g, "persist"); key_any(g); finish(g, CMP_EXACT); }

static void g_copy(gen *g) {
    begin(g, "copy");
    key_any(g);
    key_any(g);
    if (chance(g, 30)) { word(g, "db"); db_index(g); }
    if (chance(g, 40)) word(g, "replace");
    finish(g, CMP_EXACT);
}

/* RESTORE payloads recorded from redis-server 7.0.15, then corrupted ones. */
static const struct restore_payload {
    const char *what;   /* what it holds */
    const bstr *pool;   /* the keys of its type */
    bstr payload;
} RESTORE_PAYLOADS[] = {
    {"a string", KEYS_STRING, B("\x00\x08\x72\x65\x73\x74\x6f\x72\x65\x64\x0a\x00\xb5\x65\xb8\xd8\xd2\x6f\x0a\xf4")},
    {"an integer", KEYS_STRING, B("\x00\xc0\x2a\x0a\x00\x81\xfb\x5c\xfa\x86\x63\x4f\x50")},
    {"a long string (LZF)", KEYS_STRING, B("\x00\xc3\x0b\x40\x5a\x03\x61\x62\x63\x61\xe0\x4b\x02\x01\x62\x63\x0a\x00\x23\x80\x36\xf9\xe2\xd0\xc7\x80")},
    {"a list", KEYS_LIST, B("\x12\x01\x02\x11\x11\x00\x00\x00\x04\x00\x81\x61\x02\x81\x62\x02\x01\x01\x02\x01\xff\x0a\x00\x6d\x72\x71\x3e\x9b\x43\x48\x2b")},
    {"a hash (listpack)", KEYS_HASH, B("\x10\x15\x15\x00\x00\x00\x04\x00\x82\x66\x31\x03\x82\x76\x31\x03\x82\x66\x32\x03\x02\x01\xff\x0a\x00\x5c\x5e\xa8\x13\xfe\xec\x1f\xf5")},
    {"a hash (hash table)", KEYS_HASH, B("\x04\x02\x02\x66\x33\x01\x79\x02\x66\x31\xc3\x09\x40\x46\x01\x78\x78\xe0\x39\x00\x01\x78\x78\x0a\x00\xed\xa7\x0e\x42\x69\xce\x98\x2e")},
    {"an intset", KEYS_SET, B("\x0b\x0e\x02\x00\x00\x00\x03\x00\x00\x00\x01\x00\x02\x00\x03\x00\x0a\x00\xa5\x02\x5c\xe2\x6d\x6e\x4d\x1b")},
    {"a set (hash table)", KEYS_SET, B("\x02\x03\x01\x61\x01\x62\xc0\x01\x0a\x00\x23\xff\x73\xbd\xb0\xf9\x35\x26")},
    {"a sorted set (listpack)", KEYS_ZSET, B("\x11\x14\x14\x00\x00\x00\x04\x00\x81\x61\x02\x01\x01\x81\x62\x02\x83\x32\x2e\x35\x04\xff\x0a\x00\xd4\x4c\x6e\xa4\xf6\x44\xd9\xd7")},
    {"a sorted set (skiplist)", KEYS_ZSET, B("\x05\x02\xc3\x09\x40\x46\x01\x71\x71\xe0\x39\x00\x01\x71\x71\x00\x00\x00\x00\x00\x00\x08\x40\x01\x61\x00\x00\x00\x00\x00\x00\xf0\x3f\x0a\x00\xd3\x01\x15\xcd\xd4\x8b\x6d\x35")},
    {"a stream with a group", KEYS_STREAM, B("\x13\x01\x10\x00\x00\x00\x00\x00\x00\x00\x01\x00\x00\x00\x00\x00\x00\x00\x01\x2a\x2a\x00\x00\x00\x0f\x00\x02\x01\x00\x01\x01\x01\x82\x66\x31\x03\x00\x01\x02\x01\x00\x01\x00\x01\x81\x76\x02\x04\x01\x02\x01\x01\x01\xdf\xff\x02\x81\x77\x02\x04\x01\xff\x02\x02\x00\x01\x01\x00\x00\x02\x01\x02\x67\x31\x01\x01\x01\x01\x00\x00\x00\x00\x00\x00\x00\x01\x00\x00\x00\x00\x00\x00\x00\x01\x29\x69\x4c\x34\xa2\x01\x00\x00\x01\x01\x02\x63\x31\x29\x69\x4c\x34\xa2\x01\x00\x00\x01\x00\x00\x00\x00\x00\x00\x00\x01\x00\x00\x00\x00\x00\x00\x00\x01\x0a\x00\xf7\x8d\xcc\x22\xa7\x62\x7f\x5d")},
    {"truncated", KEYS_STRING, B("\x00\x08\x72\x65\x73\x74\x6f\x72\x65\x64\x0a\x00\xb5\x65\xb8\xd8\xd2\x6f\x0a")},
    {"a flipped bit", KEYS_STRING, B("\x00\x08\x72\x6d\x73\x74\x6f\x72\x65\x64\x0a\x00\xb5\x65\xb8\xd8\xd2\x6f\x0a\xf4")},
    {"version 11", KEYS_STRING, B("\x00\x08\x72\x65\x73\x74\x6f\x72\x65\x64\x0b\x00\xdc\xba\x05\xab\x2f\xf0\xe3\x7d")},
    {"bad data", KEYS_STRING, B("\x00\x09\x61\x62\x63\x0a\x00\xab\x7b\xaa\x50\xf5\x1c\xa6\xc2")},
    {"garbage", KEYS_STRING, B("\x67\x61\x72\x62\x61\x67\x65")},
};

/* RESTORE's TTL: mostly none; far ahead; values that are in the past with ABSTTL (and far
 * ahead without: 100000000 ms); invalid ones.  Never a short relative TTL, which the two
 * servers would expire at different moments. */
static void restore_ttl(gen *g) {
    static const bstr t[] = {B("100000000"), B("4102444800000"), B("-1"), B("abc"), B(""),
                             B("1.5"), B("9223372036854775808")};
    if (chance(g, 65)) a(g, "0");
    else ab(g, PICK(g, t));
}

/* RESTORE's options in any order: REPLACE, ABSTTL, IDLETIME s, FREQ f (valid, invalid,
 * both of the last two: a syntax error), now and then a stray word or a missing value. */
static void restore_options(gen *g) {
    static const bstr idle[] = {B("0"), B("100"), B("-1"), B("x"), B("99999999999")};
    static const bstr freq[] = {B("0"), B("255"), B("256"), B("-1"), B("x"), B("7")};
    int n = (int)rnd(g, 4);
    for (int i = 0; i < n; i++) {
        switch (rnd(g, 10)) {
        case 0: case 1: case 2: case 3: word(g, "replace"); break;
        case 4: case 5: word(g, "absttl"); break;
        case 6: word(g, "idletime"); ab(g, PICK(g, idle)); break;
        case 7: word(g, "freq"); ab(g, PICK(g, freq)); break;
        case 8: if (chance(g, 50)) word(g, "idletime"); else word(g, "freq"); break;
        default: a(g, "nosuchoption"); break;
        }
    }
}

/* DUMP key: compared byte for byte where Redis's payload is deterministic (PROBE_DUMP).
 * Half the time a RESTORE of that payload follows, into the same key or another one, each
 * side restoring its own payload (a payload the fake wrote, read back by the fake). */
static void g_dump(gen *g) {
    begin(g, "dump");
    key_any(g);
    g->cur.probe = PROBE_DUMP;
    g->cur.key_arg = 1;
    g->cur.keep_payload = 1;
    size_t srclen = g->cur.lens[1];
    char *src = malloc(srclen + 1);
    if (!src) abort();
    memcpy(src, g->cur.argv[1], srclen + 1);
    finish_ex(g, CMP_TYPE, 1);
    if (chance(g, 50)) {
        free(src);
        return;
    }
    begin(g, "restore");
    if (chance(g, 30)) add_arg(g, src, srclen);
    else key_any(g);
    restore_ttl(g);
    a(g, "");
    g->cur.payload_arg = 3;
    g->cur.src = src;
    g->cur.srclen = srclen;
    restore_options(g);
    finish_ex(g, CMP_EXACT, 1);
}

/* RESTORE key ttl payload [options]: a payload recorded from redis-server 7.0.15 (every
 * type, then corrupted ones), mostly into a key of its own type. */
static void g_restore(gen *g) {
    const struct restore_payload *p = &RESTORE_PAYLOADS[rnd(g, NELEM(RESTORE_PAYLOADS))];
    begin(g, "restore");
    key_from(g, p->pool);
    restore_ttl(g);
    ab(g, &p->payload);
    restore_options(g);
    finish(g, CMP_EXACT);
}

/* ----- SORT, SORT_RO ------------------------------------------------------------------ */

/* A key to sort: mostly a list, a set or a sorted set, sometimes anything. */
static void key_sortable(gen *g) {
    static const bstr *const pools[] = {KEYS_LIST, KEYS_LIST, KEYS_SET, KEYS_ZSET};
    key_from(g, pools[rnd(g, NELEM(pools))]);
}
/* BY patterns: the elements are mostly small integers and short strings, so "s*" finds
 * s1, "{t}s*" {t}s2 and {t}s3, "h*->f1" the field f1 of h1; others find nothing, a key of
 * another type, or no '*' at all (nosort, and a '*' hidden behind a NUL). */
static const bstr SORT_BY[] = {
    B("nosort"), B("s*"), B("{t}s*"), B("h*->f1"), B("{t}h*->f2"), B("h*->a"), B("*"),
    B("nokey_*"), B("h*->"), B("l*"), B("S*->f1"), B("#"), B("\x00*"), B("s*\x00x"), B("*->1"),
};
static const bstr SORT_GET[] = {
    B("#"), B("#"), B("s*"), B("{t}s*"), B("h*->f1"), B("h*->1"), B("{t}h*->f2"), B("*"),
    B("nostar"), B(""), B("z*"), B("#\x00x"), B("s*->f1"),
};
static const char *const SORT_OPTS[] = {"by", "limit", "get", "asc", "desc", "alpha", "store",
                                        "get", NULL};
/* One LIMIT argument: mostly small, sometimes negative, huge or not a number. */
static void sort_limit_arg(gen *g) {
    static const bstr e[] = {B("-1"), B("-5"), B("9223372036854775807"),
                             B("-9223372036854775808"), B("abc"), B("1.5"), B(""), B("100")};
    if (chance(g, 80)) af(g, "%d", (int)rnd(g, 7));
    else ab(g, PICK(g, e));
}
/* What follows option word i of SORT_OPTS (for SORT_RO, STORE is drawn rarely: it is a
 * syntax error there). */
static void sort_opt_arg(gen *g, int i) {
    switch (i) {
    case 0: ab(g, PICK(g, SORT_BY)); break;
    case 1: sort_limit_arg(g); sort_limit_arg(g); break;
    case 2: case 7: ab(g, PICK(g, SORT_GET)); break;
    case 6: if (chance(g, 90)) key_l(g); else key_any(g); break;
    default: break;
    }
}
/* An element to sort: mostly a small integer (so that numbers sort and BY patterns find
 * s1, {t}s2, h1 ...), else any value. */
static void sort_element(gen *g) {
    if (chance(g, 60)) af(g, "%d", (int)rnd(g, 5));
    else value(g);
}
/* SORT key [option ...] in random order and case; ro: SORT_RO.  Often a list, set or
 * sorted set is filled first, so that most SORTs have something to sort.  Inside MULTI
 * nothing can be probed, so a STORE whose list could differ (ALPHA with a BY pattern) is
 * not drawn. */
static void sort_like(gen *g, const char *name, int ro) {
    char *key = NULL;
    size_t klen = 0;
    if (chance(g, 40)) {
        int t = (int)rnd(g, 4); /* 0, 1: a list, 2: a set, 3: a sorted set */
        const bstr *pool = t == 3 ? KEYS_ZSET : t == 2 ? KEYS_SET : KEYS_LIST;
        begin(g, t == 3 ? "zadd" : t == 2 ? "sadd" : "rpush");
        ab(g, &pool[g->cluster ? 1 + rnd(g, 2) : rnd(g, 3)]);
        int n = 1 + (int)rnd(g, 6);
        for (int i = 0; i < n; i++) {
            if (t == 3) {
                score(g);
                zmember(g);
            } else if (t == 2) {
                member(g);
            } else {
                sort_element(g);
            }
        }
        klen = g->cur.lens[1];
        key = malloc(klen + 1);
        if (!key) abort();
        memcpy(key, g->cur.argv[1], klen + 1);
        finish_ex(g, CMP_EXACT, 1);
    }
    begin(g, name);
    if (key) add_arg(g, key, klen);
    else key_sortable(g);
    free(key);
    options(g, SORT_OPTS, ro ? 25 : 30, sort_opt_arg);
    if (chance(g, 30)) word(g, "alpha"); /* often twice: still ALPHA */
    if (ro && chance(g, 3)) { word(g, "store"); key_l(g); }
    g->cur.probe = PROBE_SORT;
    g->cur.key_arg = 1;
    finish(g, CMP_EXACT);
    if (g->in_block) {
        step *st = &g->queue[g->qhead + g->qlen - 1];
        int store = 0, alpha = 0, by = 0;
        for (int i = 2; i < st->argc; i++) {
            if (!strcasecmp(st->argv[i], "store")) store = 1;
            if (!strcasecmp(st->argv[i], "alpha")) alpha = 1;
            if (!strcasecmp(st->argv[i], "by")) by = 1;
        }
        if (store && alpha && by) {
            /* rewrite ALPHA as ASC: same arity, no ambiguous list */
            for (int i = 2; i < st->argc; i++) {
                if (strcasecmp(st->argv[i], "alpha")) continue;
                free(st->argv[i]);
                st->argv[i] = strdup("ASC");
                if (!st->argv[i]) abort();
                st->lens[i] = 3;
            }
        }
    }
}
static void g_sort(gen *g) { sort_like(g, "sort", 0); }
static void g_sort_ro(gen *g) { sort_like(g, "sort_ro", 1); }
/* OBJECT's subcommands on any key: encodings and reference counts exactly; idle times in
 * whole seconds, which two clocks may round apart; FREQ answers the no-LFU error. */
static void g_object_encoding(gen *g) { begin(g, "object"); word(g, "encoding"); key_any(g); finish(g, CMP_EXACT); }
static void g_object_refcount(gen *g) { begin(g, "object"); word(g, "refcount"); key_any(g); finish(g, CMP_EXACT); }
static void g_object_freq(gen *g) { begin(g, "object"); word(g, "freq"); key_any(g); finish(g, CMP_EXACT); }
static void g_object_idletime(gen *g) {
    begin(g, "object");
    word(g, "idletime");
    key_any(g);
    g->cur.tolerance = 1;
    g->cur.probe = PROBE_IDLE;
    g->cur.key_arg = 2;
    finish(g, CMP_NEAR);
}
static void g_object_help(gen *g) { begin(g, "object"); word(g, "help"); finish(g, CMP_EXACT); }

/* MEMORY USAGE key [SAMPLES n]: exact where the fake's estimate is (PROBE_MEMORY). */
static void g_memory_usage(gen *g) {
    static const bstr samples[] = {B("0"), B("1"), B("5"), B("-1"), B("x"), B("")};
    begin(g, "memory");
    word(g, "usage");
    key_any(g);
    if (chance(g, 30)) { word(g, "samples"); ab(g, PICK(g, samples)); }
    else if (chance(g, 3)) word(g, "samples");
    g->cur.probe = PROBE_MEMORY;
    g->cur.key_arg = 2;
    finish(g, CMP_TYPE);
}
static void g_memory_purge(gen *g) { begin(g, "memory"); word(g, "purge"); finish(g, CMP_EXACT); }
static void g_memory_help(gen *g) { begin(g, "memory"); word(g, "help"); finish(g, CMP_EXACT); }

/* ----- Server / connection / pubsub / cluster ------------------------------------------ */

static void g_dbsize(gen *g) { begin(g, "dbsize"); finish(g, CMP_EXACT); }
static void g_flushdb(gen *g) {
    begin(g, "flushdb");
    if (chance(g, 30)) word(g, chance(g, 50) ? "async" : chance(g, 50) ? "sync" : "bogus");
    finish(g, CMP_EXACT);
}
static void g_flushall(gen *g) {
    begin(g, "flushall");
    if (chance(g, 30)) word(g, chance(g, 50) ? "sync" : "bogus");
    finish(g, CMP_EXACT);
}
static void g_swapdb(gen *g) { begin(g, "swapdb"); db_index(g); db_index(g); finish(g, CMP_EXACT); }
static void g_select(gen *g) {
    begin(g, "select");
    /* Mostly back to 0, so most commands see the main database. */
    if (chance(g, 60)) a(g, "0");
    else db_index(g);
    finish(g, CMP_EXACT);
}
static void g_ping(gen *g) {
    begin(g, "ping");
    if (chance(g, 50)) value(g);
    finish(g, CMP_EXACT);
}
static void g_echo(gen *g) { begin(g, "echo"); value(g); finish(g, CMP_EXACT); }
static void g_time(gen *g) { begin(g, "time"); finish(g, CMP_TYPE); }
static void g_quit(gen *g) { begin(g, "quit"); finish_ex(g, CMP_EXACT, 1); }
static void g_publish(gen *g) {
    begin(g, "publish");
    ab(g, PICK(g, STRINGS));
    value(g);
    finish(g, CMP_EXACT);
}
static void g_command_count(gen *g) {
    /* COMMAND COUNT itself differs by design; only its errors are compared. */
    begin(g, "command");
    int r = (int)rnd(g, 3);
    if (r == 0) { word(g, "count"); a(g, "extra"); }
    else if (r == 1) word(g, "nosuchsub");
    else { word(g, "count"); a(g, "x"); a(g, "y"); }
    finish_ex(g, CMP_EXACT, 1);
}
/* Draws a command from another generator (one whose name starts with none of skip) and
 * makes it the tail of `head sub [one of extra]`, in place of the step it queued (its
 * other steps, if any, run as they are); nothing when it queued nothing. */
static void wrap_drawn(gen *g, const char *const *skip, const char *head, const char *sub,
                       const char *const *extra, size_t nextra) {
    const gen_entry *e;
    int skipped;
    do {
        e = g->live[rnd(g, g->nlive)].e;
        skipped = 0;
        for (size_t i = 0; skip[i]; i++) skipped |= !strncmp(e->name, skip[i], strlen(skip[i]));
    } while (skipped);
    size_t before = g->qlen;
    e->fn(g);
    if (g->qlen == before) return;
    step *last = &g->queue[g->qhead + g->qlen - 1];
    step wrapped = *last;
    memset(&g->cur, 0, sizeof g->cur);
    g->cur.client = wrapped.client;
    word(g, head);
    word(g, sub);
    if (extra) a(g, extra[rnd(g, nextra)]);
    for (int i = 0; i < wrapped.argc; i++) add_arg(g, wrapped.argv[i], wrapped.lens[i]);
    step_free(last);
    g->qlen--;
    finish_ex(g, CMP_EXACT, 1);
}
/* COMMAND GETKEYS[ANDFLAGS] of a command another generator draws (its other steps, if
 * any, run as they are): the key specs and getkeys functions on every shape of every
 * command, errors included (a broken arity, an unknown subcommand). */
static void g_command_getkeys_of(gen *g, const char *sub) {
    static const char *const skip[] = {"command|", NULL};
    wrap_drawn(g, skip, "command", sub, NULL, 0);
}
static void g_command_getkeys(gen *g) { g_command_getkeys_of(g, "getkeys"); }
static void g_command_getkeysandflags(gen *g) { g_command_getkeys_of(g, "getkeysandflags"); }
/* COMMAND INFO / DOCS of commands the fake has: a container's subcommands come in
 * Redis's seeded order, so those replies are compared as multisets. */
static void g_command_info_of(gen *g, const char *sub) {
    begin(g, "command");
    word(g, sub);
    int n = 1 + (int)rnd(g, 3), sorted = 0;
    for (int i = 0; i < n; i++) {
        const char *name = g->live[rnd(g, g->nlive)].e->name;
        const char *bar = strchr(name, '|');
        if (bar && chance(g, 50)) {
            af(g, "%.*s", (int)(bar - name), name); /* the container */
            sorted = 1;
        } else {
            a(g, chance(g, 5) ? "nosuchcommand" : name);
        }
    }
    finish_ex(g, sorted ? CMP_SORTED : CMP_EXACT, 1);
}
static void g_command_info(gen *g) { g_command_info_of(g, "info"); }
static void g_command_docs(gen *g) { g_command_info_of(g, "docs"); }
static void g_command_list(gen *g) {
    /* patterns that match only commands the fake has (Redis's others would be missing) */
    static const char *const pats[] = {"x*", "acl*", "s?t", "z*", "nosuch*", "l[ips]*"};
    static const char *const cats[] = {"string", "list", "stream", "hash", "set", "sortedset",
                                       "bitmap", "transaction", "scripting", "nosuch"};
    begin(g, "command");
    word(g, "list");
    word(g, "filterby");
    if (chance(g, 50)) {
        word(g, "pattern");
        a(g, pats[rnd(g, NELEM(pats))]);
    } else {
        word(g, "aclcat");
        a(g, cats[rnd(g, NELEM(cats))]);
    }
    finish_ex(g, CMP_SORTED, 0);
}
static void g_command_help(gen *g) {
    begin(g, "command");
    word(g, "help");
    if (chance(g, 5)) a(g, "extra");
    finish_ex(g, CMP_EXACT, 1); /* not bare COMMAND: the whole table, which the fake lacks */
}

/* ACL: users u1..u3 made from category, key and channel rules (never more than one single
 * command, whose order Redis's seeded dict would decide), DRYRUN of what other
 * generators draw, the errors of every subcommand.  Nobody authenticates as them, so the
 * other generators keep running as the default user. */
static const char *const ACL_USERS[] = {"u1", "u2", "u3", "default", "nosuch"};
static const char *const ACL_RULES[] = {
    "on", "off", "nopass", "resetpass", ">pw", "<pw", "~k*", "%R~s*", "%W~l*", "%RW~h*",
    "allkeys", "resetkeys", "&ch*", "allchannels", "resetchannels", "+@read", "-@write",
    "+@string", "-@dangerous", "+@all", "-@all", "nocommands", "allcommands", "+@nosuch",
    "+nosuch", "bad", "(~x* +@list)", "clearselectors", "reset", "~*", "&*"};
static void g_acl_setuser(gen *g) {
    begin(g, "acl");
    word(g, "setuser");
    a(g, ACL_USERS[rnd(g, 3)]);
    int n = (int)rnd(g, 4);
    for (int i = 0; i < n; i++) a(g, ACL_RULES[rnd(g, NELEM(ACL_RULES))]);
    if (chance(g, 10)) a(g, "+get");
    finish_ex(g, CMP_EXACT, 1);
}
static void g_acl_dryrun(gen *g) {
    static const char *const skip[] = {"acl|", "command|", NULL};
    wrap_drawn(g, skip, "acl", "dryrun", ACL_USERS, NELEM(ACL_USERS));
}
static void g_acl_simple(gen *g, const char *sub, cmp_mode mode) {
    begin(g, "acl");
    word(g, sub);
    finish(g, mode);
}
static void g_acl_whoami(gen *g) { g_acl_simple(g, "whoami", CMP_EXACT); }
static void g_acl_users(gen *g) { g_acl_simple(g, "users", CMP_EXACT); }
static void g_acl_help(gen *g) { g_acl_simple(g, "help", CMP_EXACT); }
static void g_acl_save(gen *g) { g_acl_simple(g, chance(g, 50) ? "save" : "load", CMP_EXACT); }
static void g_acl_cat(gen *g) {
    static const char *const cats[] = {"read", "write", "geo", "keyspace", "nosuch", "Admin"};
    begin(g, "acl");
    word(g, "cat");
    if (chance(g, 70)) a(g, cats[rnd(g, NELEM(cats))]);
    finish(g, CMP_SORTED);
}
static void g_acl_genpass(gen *g) {
    static const char *const bits[] = {"1", "4", "5", "256", "4096", "0", "-3", "4097", "x"};
    begin(g, "acl");
    word(g, "genpass");
    if (chance(g, 70)) a(g, bits[rnd(g, NELEM(bits))]);
    finish(g, CMP_FIRSTLINE); /* the password itself is random on both sides */
}
static void g_acl_deluser(gen *g) {
    begin(g, "acl");
    word(g, "deluser");
    int n = 1 + (int)rnd(g, 2);
    for (int i = 0; i < n; i++) a(g, ACL_USERS[rnd(g, NELEM(ACL_USERS))]);
    finish_ex(g, CMP_EXACT, 1);
}
static void g_acl_log(gen *g) {
    begin(g, "acl");
    word(g, "log");
    int r = (int)rnd(g, 4);
    if (r == 0) word(g, "reset");
    else if (r == 1) a(g, "x");
    finish_ex(g, r == 0 || r == 1 ? CMP_EXACT : CMP_ARRLEN, 1); /* ages and client lines */
}
/* AUTH that never changes the user: wrong pairs, or default (nopass) */
static void g_auth(gen *g) {
    begin(g, "auth");
    int r = (int)rnd(g, 4);
    if (r == 0) a(g, "pw");
    else if (r == 1) { a(g, "default"); a(g, "any"); }
    else if (r == 2) { a(g, ACL_USERS[rnd(g, 3)]); a(g, "nope"); }
    else { a(g, "a"); a(g, "b"); a(g, "c"); }
    finish_ex(g, CMP_EXACT, 1);
}

static void g_cluster_keyslot(gen *g) {
    begin(g, "cluster");
    int r = (int)rnd(g, 10);
    if (r < 7) { word(g, "keyslot"); key_any(g); }
    else if (r < 9) word(g, "keyslot");
    else word(g, "nosuchsub");
    finish_ex(g, CMP_EXACT, 1);
}
static void g_unknown(gen *g) {
    /* No real name followed by a NUL ("set\x00"): Redis compares command names with
     * strcasecmp in a table hashed with a per-process random seed, so about one
     * redis-server in 256 runs such a name as SET (docs/fake_redis.md, "Where the fake
     * knowingly differs").  A NUL first, or after a name that is no command, is
     * answered the same way by every process. */
    static const bstr names[] = {B("foo"), B("GETT"), B(""), B("\x00"), B("\x00set"),
                                 B("sett\x00"), B("hgetall ")};
    memset(&g->cur, 0, sizeof g->cur);
    g->cur.client = g->client;
    ab(g, PICK(g, names));
    int n = (int)rnd(g, 4);
    for (int i = 0; i < n; i++) value(g);
    finish_ex(g, CMP_EXACT, 1);
}

/* ----- Strings ----------------------------------------------------------------------- */

static void g_get(gen *g) { begin(g, "get"); key_s(g); finish(g, CMP_EXACT); }

/* The number after SET's (and GETEX's) expiry option i (EX PX EXAT PXAT at 3..6). */
static void set_opt_arg(gen *g, int i) {
    switch (i) {
    case 3: ttl_seconds(g); break;  /* EX */
    case 4: ttl_millis(g); break;   /* PX */
    case 5: unix_seconds(g); break; /* EXAT */
    case 6: unix_millis(g); break;  /* PXAT */
    default: break;
    }
}
static void g_set(gen *g) {
    static const char *const opts[] = {"NX", "XX", "GET", "EX", "PX", "EXAT", "PXAT", "KEEPTTL", NULL};
    begin(g, "set");
    key_s(g);
    value(g);
    if (chance(g, 50)) {
        /* Mostly one expiry option so that most commands are valid. */
        if (chance(g, 70)) {
            int n = 0;
            while (opts[n]) n++;
            int w = (int)rnd(g, (uint64_t)n);
            word(g, opts[w]);
            set_opt_arg(g, w);
            if (chance(g, 30)) { int w2 = (int)rnd(g, 3); word(g, opts[w2]); }
        } else {
            options(g, opts, 25, set_opt_arg);
        }
    }
    finish(g, CMP_EXACT);
    /* SET ... EXAT/PXAT in the past leaves an expired key that Redis counts in DBSIZE until
     * something touches it (a documented difference of the fake): touch it at once. */
    const step *set = &g->queue[g->qhead + g->qlen - 1];
    for (int i = 3; i < set->argc; i++) {
        if ((set->lens[i] == 4 && !strcasecmp(set->argv[i], "exat")) ||
            (set->lens[i] == 4 && !strcasecmp(set->argv[i], "pxat"))) {
            char *k = set->argv[1];
            size_t kl = set->lens[1];
            begin(g, "exists");
            add_arg(g, k, kl);
            finish_ex(g, CMP_EXACT, 1);
            break;
        }
    }
}
static void g_setnx(gen *g) { begin(g, "setnx"); key_s(g); value(g); finish(g, CMP_EXACT); }
static void g_setex(gen *g) { begin(g, "setex"); key_s(g); ttl_seconds(g); value(g); finish(g, CMP_EXACT); }
static void g_psetex(gen *g) { begin(g, "psetex"); key_s(g); ttl_millis(g); value(g); finish(g, CMP_EXACT); }
static void g_getset(gen *g) { begin(g, "getset"); key_s(g); value(g); finish(g, CMP_EXACT); }
static void g_getdel(gen *g) { begin(g, "getdel"); key_s(g); finish(g, CMP_EXACT); }
static void g_getex(gen *g) {
    static const char *const opts[] = {"EX", "PX", "EXAT", "PXAT", "PERSIST", NULL};
    begin(g, "getex");
    key_s(g);
    if (chance(g, 60)) {
        int w = (int)rnd(g, 5);
        word(g, opts[w]);
        set_opt_arg(g, w + 3);
    } else if (chance(g, 30)) {
        options(g, opts, 30, NULL); /* words without their numbers: syntax errors */
    }
    finish(g, CMP_EXACT);
}
static void g_mget(gen *g) { begin(g, "mget"); keys_n(g, key_s, 1, 4); finish(g, CMP_EXACT); }
static void mset_like(gen *g, const char *name) {
    begin(g, name);
    int n = 1 + (int)rnd(g, 3);
    for (int i = 0; i < n; i++) { key_s(g); value(g); }
    finish(g, CMP_EXACT);
}
static void g_mset(gen *g) { mset_like(g, "mset"); }
static void g_msetnx(gen *g) { mset_like(g, "msetnx"); }
static void g_incr(gen *g) { begin(g, "incr"); key_s(g); finish(g, CMP_EXACT); }
static void g_decr(gen *g) { begin(g, "decr"); key_s(g); finish(g, CMP_EXACT); }
static void g_incrby(gen *g) { begin(g, "incrby"); key_s(g); integer(g); finish(g, CMP_EXACT); }
static void g_decrby(gen *g) { begin(g, "decrby"); key_s(g); integer(g); finish(g, CMP_EXACT); }
static void g_incrbyfloat(gen *g) { begin(g, "incrbyfloat"); key_s(g); floatv(g); finish(g, CMP_EXACT); }
static void g_append(gen *g) { begin(g, "append"); key_s(g); value(g); finish(g, CMP_EXACT); }
static void g_strlen(gen *g) { begin(g, "strlen"); key_s(g); finish(g, CMP_EXACT); }
static void getrange_like(gen *g, const char *name) {
    begin(g, name);
    key_s(g);
    index_arg(g);
    index_arg(g);
    finish(g, CMP_EXACT);
}
static void g_getrange(gen *g) { getrange_like(g, "getrange"); }
static void g_substr(gen *g) { getrange_like(g, "substr"); }
static void g_setrange(gen *g) {
    static const bstr offs[] = {B("-1"), B("536870912"), B("536870911"), B("abc"), B("9223372036854775807"), B("")};
    begin(g, "setrange");
    key_s(g);
    const bstr *o = NULL;
    if (chance(g, 85)) af(g, "%d", (int)rnd(g, chance(g, 80) ? 20 : 1000));
    else ab(g, o = PICK(g, offs));
    /* 536870911 plus one byte would really allocate 512 MB: keep that one empty. */
    if (o && o->n == 9 && !memcmp(o->p, "536870911", 9)) a(g, "");
    else value(g);
    finish(g, CMP_EXACT);
}
static void g_lcs(gen *g) {
    begin(g, "lcs");
    key_s(g);
    key_s(g);
    int r = (int)rnd(g, 10);
    if (r < 3) {
        word(g, "len");
    } else if (r < 8) {
        static const char *const opts[] = {"IDX", "MINMATCHLEN", "WITHMATCHLEN", "LEN", NULL};
        int n = 0;
        int order[4] = {0, 1, 2, 3};
        for (int i = 3; i > 0; i--) {
            int j = (int)rnd(g, (uint64_t)i + 1), t = order[i];
            order[i] = order[j];
            order[j] = t;
        }
        for (int i = 0; i < 4; i++) {
            int w = order[i];
            if (w == 0 ? !chance(g, 85) : w == 3 ? !chance(g, 10) : !chance(g, 50)) continue;
            word(g, opts[w]);
            if (w == 1) {
                if (chance(g, 80)) af(g, "%d", (int)rnd(g, 4));
                else ab(g, PICK(g, COUNTS));
            }
            n++;
        }
    } else if (r < 9) {
        word(g, "bogus");
    }
    finish(g, CMP_EXACT);
}

/* ----- Bitmaps ---------------------------------------------------------------------------- */

/* Bitmaps are strings: the bitmap commands draw string keys, so they meet the values SET,
 * APPEND, INCR ... left there, and the string commands meet the bytes they grew.  Offsets
 * that would grow a string stay below a few thousand bits; the huge ones (up to the last
 * valid bit, 4294967295) only go where nothing is allocated: reads, or a write refused
 * before it looks at the key. */
static const bstr BIT_OFFSET_EDGES[] = {
    B("4294967296"), B("-1"), B("abc"), B(""), B("1.5"), B("9223372036854775807"),
    B("-9223372036854775808"), B("18446744073709551616"), B("#8"), B(" 1"), B("+1"),
};
/* A bit offset for a write: small, or one the server refuses. */
static void bit_offset_write(gen *g) {
    int r = (int)rnd(g, 100);
    if (r < 70) af(g, "%d", (int)rnd(g, 64));
    else if (r < 92) af(g, "%d", (int)rnd(g, 2048));
    else ab(g, PICK(g, BIT_OFFSET_EDGES));
}
/* A bit offset for a read: anything up to the last valid bit. */
static void bit_offset_read(gen *g) {
    static const bstr far[] = {B("4294967295"), B("4294967288"), B("536870912")};
    if (chance(g, 90)) bit_offset_write(g);
    else ab(g, PICK(g, far));
}
/* A start or end of a BITCOUNT/BITPOS range: small (in bytes or bits), sometimes an edge. */
static void bit_range_arg(gen *g) {
    if (chance(g, 85)) af(g, "%d", (int)rnd(g, 41) - 20);
    else ab(g, PICK(g, INDEXES));
}
/* BYTE or BIT, now and then something else. */
static void bit_unit(gen *g) {
    static const char *const units[] = {"byte", "bit", "bit", "bits", ""};
    word(g, units[chance(g, 90) ? rnd(g, 3) : 3 + rnd(g, 2)]);
}

static void g_setbit(gen *g) {
    static const bstr vals[] = {B("2"), B("-1"), B("a"), B(""), B("1.0"), B("true")};
    begin(g, "setbit");
    key_s(g);
    if (chance(g, 2)) {
        a(g, "4294967295"); /* the last valid bit, with a value refused before any growth */
        ab(g, PICK(g, vals));
    } else {
        bit_offset_write(g);
        if (chance(g, 92)) a(g, chance(g, 50) ? "1" : "0");
        else ab(g, PICK(g, vals));
    }
    finish(g, CMP_EXACT);
}
static void g_getbit(gen *g) { begin(g, "getbit"); key_s(g); bit_offset_read(g); finish(g, CMP_EXACT); }
static void g_bitcount(gen *g) {
    begin(g, "bitcount");
    key_s(g);
    int r = (int)rnd(g, 100);
    if (r < 70) {
        bit_range_arg(g);
        bit_range_arg(g);
        if (chance(g, 50)) bit_unit(g);
    } else if (r < 80) {
        bit_range_arg(g); /* start alone: a syntax error on an existing key */
    }
    finish(g, CMP_EXACT);
}
static void g_bitpos(gen *g) {
    static const bstr bits[] = {B("2"), B("-1"), B("x"), B(""), B("01")};
    begin(g, "bitpos");
    key_s(g);
    if (chance(g, 93)) a(g, chance(g, 50) ? "1" : "0");
    else ab(g, PICK(g, bits));
    int n = (int)rnd(g, 4);
    if (n >= 1) bit_range_arg(g);
    if (n >= 2) bit_range_arg(g);
    if (n >= 3) bit_unit(g);
    finish(g, CMP_EXACT);
}
static void g_bitop(gen *g) {
    static const char *const ops[] = {"and", "or", "xor", "not", "and", "or", "xor", "not", "nand"};
    int op = (int)rnd(g, NELEM(ops));
    begin(g, "bitop");
    word(g, ops[op]);
    key_s(g);
    if (op == 3 && chance(g, 85)) key_s(g); /* NOT's single source */
    else keys_n(g, key_s, 1, 3);
    finish(g, CMP_EXACT);
}
/* BITFIELD's type: i1..i64, u1..u63, sometimes one Redis refuses. */
static void bitfield_type(gen *g) {
    static const bstr bad[] = {B("u64"), B("i65"), B("i0"), B("I8"), B("u"), B(""), B("x8"),
                               B("u+8"), B("u08")};
    static const int widths[] = {1, 3, 4, 7, 8, 8, 16, 16, 32, 63, 64};
    if (chance(g, 5)) {
        ab(g, PICK(g, bad));
        return;
    }
    int w = widths[rnd(g, NELEM(widths))];
    int sign = chance(g, 50);
    if (!sign && w == 64) w = 63;
    af(g, "%c%d", sign ? 'i' : 'u', w);
}
/* BITFIELD's offset: a bit number or #index.  write: keep it small (it is allocated). */
static void bitfield_offset(gen *g, int write) {
    static const bstr far[] = {B("4294967295"), B("4294967232"), B("#67108863"), B("#536870911")};
    static const bstr odd[] = {B("#288230376151711745"), B("#-1"), B("-1"), B("#"), B("##1"),
                               B("4294967296"), B("x"), B("")};
    int r = (int)rnd(g, 100);
    if (r < 60) af(g, "%d", (int)rnd(g, 96));
    else if (r < 85) af(g, "#%d", (int)rnd(g, 6));
    else if (r < 93 && !write) ab(g, PICK(g, far));
    else ab(g, PICK(g, odd));
}
/* BITFIELD's SET value or INCRBY increment: small, or at the edge of 64 bits. */
static void bitfield_value(gen *g) {
    int r = (int)rnd(g, 100);
    if (r < 50) af(g, "%d", (int)rnd(g, 601) - 300);
    else integer(g);
}
/* The operations of BITFIELD (writes: SET and INCRBY allowed) or BITFIELD_RO. */
static void bitfield_ops(gen *g, int writes) {
    static const char *const ow[] = {"wrap", "sat", "fail", "wrap", "sat", "fail", "bogus"};
    int n = (int)rnd(g, 5);
    for (int i = 0; i < n; i++) {
        int r = (int)rnd(g, 100);
        if (r < 15) {
            word(g, "overflow");
            word(g, ow[rnd(g, NELEM(ow))]);
        } else if (r < 50 || (!writes && r < 95)) {
            word(g, "get");
            bitfield_type(g);
            bitfield_offset(g, 0);
        } else if (r < 97) {
            word(g, r < 75 ? "set" : "incrby");
            bitfield_type(g);
            bitfield_offset(g, 1);
            bitfield_value(g);
        } else {
            word(g, chance(g, 50) ? "get" : "bogus"); /* a word without its arguments */
        }
    }
}
static void g_bitfield(gen *g) { begin(g, "bitfield"); key_s(g); bitfield_ops(g, 1); finish(g, CMP_EXACT); }
static void g_bitfield_ro(gen *g) { begin(g, "bitfield_ro"); key_s(g); bitfield_ops(g, 0); finish(g, CMP_EXACT); }

/* ----- Lists --------------------------------------------------------------------------- */

static void elements(gen *g, int min, int max) {
    int n = min + (int)rnd(g, (uint64_t)(max - min + 1));
    for (int i = 0; i < n; i++) {
        if (chance(g, 70)) ab(g, PICK(g, STRINGS));
        else value(g);
    }
}
static void push_like(gen *g, const char *name) { begin(g, name); key_l(g); elements(g, 1, 4); finish(g, CMP_EXACT); }
static void g_lpush(gen *g) { push_like(g, "lpush"); }
static void g_rpush(gen *g) { push_like(g, "rpush"); }
static void g_lpushx(gen *g) { push_like(g, "lpushx"); }
static void g_rpushx(gen *g) { push_like(g, "rpushx"); }
static void pop_like(gen *g, const char *name) {
    begin(g, name);
    key_l(g);
    if (chance(g, 40)) count_arg(g);
    finish(g, CMP_EXACT);
}
static void g_lpop(gen *g) { pop_like(g, "lpop"); }
static void g_rpop(gen *g) { pop_like(g, "rpop"); }
static void g_llen(gen *g) { begin(g, "llen"); key_l(g); finish(g, CMP_EXACT); }
static void g_lrange(gen *g) { begin(g, "lrange"); key_l(g); index_arg(g); index_arg(g); finish(g, CMP_EXACT); }
static void g_lindex(gen *g) { begin(g, "lindex"); key_l(g); index_arg(g); finish(g, CMP_EXACT); }
static void g_lset(gen *g) { begin(g, "lset"); key_l(g); index_arg(g); value(g); finish(g, CMP_EXACT); }
static void g_lrem(gen *g) {
    begin(g, "lrem");
    key_l(g);
    if (chance(g, 70)) af(g, "%d", (int)rnd(g, 7) - 3);
    else ab(g, PICK(g, COUNTS));
    ab(g, PICK(g, STRINGS));
    finish(g, CMP_EXACT);
}
static void g_ltrim(gen *g) { begin(g, "ltrim"); key_l(g); index_arg(g); index_arg(g); finish(g, CMP_EXACT); }
static void g_linsert(gen *g) {
    begin(g, "linsert");
    key_l(g);
    word(g, chance(g, 45) ? "before" : chance(g, 90) ? "after" : "middle");
    ab(g, PICK(g, STRINGS));
    value(g);
    finish(g, CMP_EXACT);
}
static void g_lpos(gen *g) {
    static const char *const opts[] = {"RANK", "COUNT", "MAXLEN", NULL};
    begin(g, "lpos");
    key_l(g);
    ab(g, PICK(g, STRINGS));
    int n = (int)rnd(g, 4);
    for (int i = 0; i < n; i++) {
        word(g, opts[rnd(g, 3)]);
        if (chance(g, 70)) af(g, "%d", (int)rnd(g, 7) - 3);
        else ab(g, PICK(g, COUNTS));
    }
    finish(g, CMP_EXACT);
}
/* LEFT or RIGHT (sometimes neither). */
static void side(gen *g) {
    static const char *const s[] = {"left", "right", "left", "right", "middle"};
    word(g, s[rnd(g, NELEM(s))]);
}
static void g_lmove(gen *g) { begin(g, "lmove"); key_l(g); key_l(g); side(g); side(g); finish(g, CMP_EXACT); }
static void g_rpoplpush(gen *g) { begin(g, "rpoplpush"); key_l(g); key_l(g); finish(g, CMP_EXACT); }
/* numkeys and that many keys (numkeys sometimes wrong or not a number). */
static void numkeys_keys(gen *g, void (*k)(gen *)) {
    int n = 1 + (int)rnd(g, 3);
    if (chance(g, 90)) af(g, "%d", n);
    else ab(g, PICK(g, COUNTS));
    for (int i = 0; i < n; i++) k(g);
}
static void g_lmpop(gen *g) {
    begin(g, "lmpop");
    numkeys_keys(g, key_l);
    side(g);
    if (chance(g, 50)) { word(g, "count"); count_arg(g); }
    finish(g, CMP_EXACT);
}
static void bpop_like(gen *g, const char *name) {
    begin(g, name);
    keys_n(g, key_l, 1, 3);
    block_timeout(g);
    finish(g, CMP_EXACT);
}
static void g_blpop(gen *g) { bpop_like(g, "blpop"); }
static void g_brpop(gen *g) { bpop_like(g, "brpop"); }
static void g_blmove(gen *g) { begin(g, "blmove"); key_l(g); key_l(g); side(g); side(g); block_timeout(g); finish(g, CMP_EXACT); }
static void g_brpoplpush(gen *g) { begin(g, "brpoplpush"); key_l(g); key_l(g); block_timeout(g); finish(g, CMP_EXACT); }
static void g_blmpop(gen *g) {
    begin(g, "blmpop");
    block_timeout(g);
    numkeys_keys(g, key_l);
    side(g);
    if (chance(g, 50)) { word(g, "count"); count_arg(g); }
    finish(g, CMP_EXACT);
}

/* ----- Hashes ---------------------------------------------------------------------------- */

static void hset_like(gen *g, const char *name) {
    begin(g, name);
    key_h(g);
    if (chance(g, 2)) {
        /* Enough fields to cross hash-max-listpack-entries (512, 7.0's compiled-in
         * default) over a few calls. */
        int base = (int)rnd(g, 1000);
        for (int i = 0; i < 200; i++) { af(g, "f%d", base + i); af(g, "%d", i); }
    } else {
        int n = 1 + (int)rnd(g, 3);
        for (int i = 0; i < n; i++) { field(g); value(g); }
    }
    finish(g, CMP_EXACT);
}
static void g_hset(gen *g) { hset_like(g, "hset"); }
static void g_hmset(gen *g) { hset_like(g, "hmset"); }
static void g_hsetnx(gen *g) { begin(g, "hsetnx"); key_h(g); field(g); value(g); finish(g, CMP_EXACT); }
static void g_hget(gen *g) { begin(g, "hget"); key_h(g); field(g); finish(g, CMP_EXACT); }
static void g_hmget(gen *g) { begin(g, "hmget"); key_h(g); int n = 1 + (int)rnd(g, 3); for (int i = 0; i < n; i++) field(g); finish(g, CMP_EXACT); }
/* A whole-collection read whose order is Redis's hash table's unless the key is an
 * intset/listpack: compared by mode, exactly when the probe says so. */
static void ordered_read(gen *g, const char *name, void (*k)(gen *), cmp_mode mode) {
    begin(g, name);
    k(g);
    g->cur.probe = PROBE_ORDER;
    g->cur.key_arg = 1;
    finish(g, mode);
}
static void g_hgetall(gen *g) { ordered_read(g, "hgetall", key_h, CMP_PAIRS); }
static void g_hkeys(gen *g) { ordered_read(g, "hkeys", key_h, CMP_SORTED); }
static void g_hvals(gen *g) { ordered_read(g, "hvals", key_h, CMP_SORTED); }
static void g_hdel(gen *g) { begin(g, "hdel"); key_h(g); int n = 1 + (int)rnd(g, 3); for (int i = 0; i < n; i++) field(g); finish(g, CMP_EXACT); }
static void g_hexists(gen *g) { begin(g, "hexists"); key_h(g); field(g); finish(g, CMP_EXACT); }
static void g_hlen(gen *g) { begin(g, "hlen"); key_h(g); finish(g, CMP_EXACT); }
static void g_hstrlen(gen *g) { begin(g, "hstrlen"); key_h(g); field(g); finish(g, CMP_EXACT); }
static void g_hincrby(gen *g) { begin(g, "hincrby"); key_h(g); field(g); integer(g); finish(g, CMP_EXACT); }
static void g_hincrbyfloat(gen *g) { begin(g, "hincrbyfloat"); key_h(g); field(g); floatv(g); finish(g, CMP_EXACT); }

/* The count of a random-pick command (SRANDMEMBER, HRANDFIELD, ZRANDMEMBER, SPOP); the
 * executor reads it back (parse_count) once the step's arity is final. */
static void rand_count(gen *g, int allow_negative) {
    int r = (int)rnd(g, 100);
    if (g->in_block) {
        /* Inside MULTI nothing can be probed: only counts whose answer is certain. */
        a(g, chance(g, 50) ? "0" : HUGE_COUNT);
    } else if (r < 70) {
        af(g, "%d", (int)rnd(g, 8) - (allow_negative ? 3 : 0));
    } else if (r < 80) {
        a(g, HUGE_COUNT);
    } else {
        /* Not -2147483649: Redis would really build two billion replies. */
        static const bstr odd[] = {B("-9223372036854775808"), B("9223372036854775807"),
                                   B("-100"), B("abc"), B("1.5"), B(""), B("4294967296")};
        ab(g, PICK(g, odd));
    }
}
static void g_hrandfield(gen *g) {
    begin(g, "hrandfield");
    key_h(g);
    g->cur.probe = PROBE_RANDPICK;
    g->cur.key_arg = 1;
    if (chance(g, 70) || g->in_block) {
        rand_count(g, 1);
        if (chance(g, 40)) { word(g, "withvalues"); g->cur.pairs = 1; }
    }
    finish(g, g->cur.pairs ? CMP_PAIRS : CMP_SORTED);
    /* finish may have dropped WITHVALUES (a broken arity): then the fields come alone. */
    step *st = &g->queue[g->qhead + g->qlen - 1];
    if (st->pairs && st->argc < 4) {
        st->pairs = 0;
        st->mode = CMP_SORTED;
    }
}
static void g_hscan(gen *g) {
    begin(g, "hscan");
    key_h(g);
    scan_cursor(g);
    g->cur.count = scan_options(g, 0);
    g->cur.probe = PROBE_SCAN;
    g->cur.key_arg = 1;
    g->cur.pairs = 1;
    finish(g, CMP_SCAN);
}

/* ----- Sets -------------------------------------------------------------------------------- */

static void g_sadd(gen *g) {
    begin(g, "sadd");
    key_S(g);
    if (chance(g, 3)) {
        /* Enough integers to cross set-max-intset-entries (512) over a few calls. */
        int base = (int)rnd(g, 1000);
        for (int i = 0; i < 200; i++) af(g, "%d", base + i);
    } else {
        int n = 1 + (int)rnd(g, 4);
        for (int i = 0; i < n; i++) member(g);
    }
    finish(g, CMP_EXACT);
}
static void g_srem(gen *g) { begin(g, "srem"); key_S(g); int n = 1 + (int)rnd(g, 3); for (int i = 0; i < n; i++) member(g); finish(g, CMP_EXACT); }
static void g_smembers(gen *g) { ordered_read(g, "smembers", key_S, CMP_SORTED); }
static void g_sismember(gen *g) { begin(g, "sismember"); key_S(g); member(g); finish(g, CMP_EXACT); }
static void g_smismember(gen *g) { begin(g, "smismember"); key_S(g); int n = 1 + (int)rnd(g, 4); for (int i = 0; i < n; i++) member(g); finish(g, CMP_EXACT); }
static void g_scard(gen *g) { begin(g, "scard"); key_S(g); finish(g, CMP_EXACT); }
static void g_spop(gen *g) {
    begin(g, "spop");
    key_S(g);
    g->cur.probe = PROBE_SPOP;
    g->cur.key_arg = 1;
    if (g->in_block || chance(g, 60)) rand_count(g, 0);
    /* Inside MULTI the count must stay: a random pop there could not be resynchronised. */
    finish_ex(g, CMP_SORTED, g->in_block);
}
static void g_srandmember(gen *g) {
    begin(g, "srandmember");
    key_S(g);
    g->cur.probe = PROBE_RANDPICK;
    g->cur.key_arg = 1;
    if (g->in_block || chance(g, 70)) rand_count(g, 1);
    finish(g, CMP_SORTED);
}
static void g_smove(gen *g) { begin(g, "smove"); key_S(g); key_S(g); member(g); finish(g, CMP_EXACT); }
/* SINTER/SUNION/SDIFF and their STORE forms. */
static void setop(gen *g, const char *name, int store) {
    begin(g, name);
    if (store) key_S(g);
    keys_n(g, key_S, 1, 3);
    /* Now and then the first input named again: SDIFF's "same set" case (an empty
     * result), an intersection or union with itself. */
    int first = store ? 2 : 1;
    if (chance(g, 10)) add_arg(g, g->cur.argv[first], g->cur.lens[first]);
    finish(g, store ? CMP_EXACT : CMP_SORTED);
}
static void g_sinter(gen *g) { setop(g, "sinter", 0); }
static void g_sunion(gen *g) { setop(g, "sunion", 0); }
static void g_sdiff(gen *g) { setop(g, "sdiff", 0); }
static void g_sinterstore(gen *g) { setop(g, "sinterstore", 1); }
static void g_sunionstore(gen *g) { setop(g, "sunionstore", 1); }
static void g_sdiffstore(gen *g) { setop(g, "sdiffstore", 1); }
static void g_sintercard(gen *g) {
    begin(g, "sintercard");
    numkeys_keys(g, key_S);
    if (chance(g, 40)) { word(g, "limit"); count_arg(g); }
    finish(g, CMP_EXACT);
}
static void g_sscan(gen *g) {
    begin(g, "sscan");
    key_S(g);
    scan_cursor(g);
    g->cur.count = scan_options(g, 0);
    g->cur.probe = PROBE_SCAN;
    g->cur.key_arg = 1;
    finish(g, CMP_SCAN);
}

/* ----- Sorted sets ------------------------------------------------------------------------ */

static void g_zadd(gen *g) {
    static const char *const opts[] = {"NX", "XX", "GT", "LT", "CH", "INCR", NULL};
    begin(g, "zadd");
    key_z(g);
    if (chance(g, 40)) options(g, opts, 20, NULL);
    if (chance(g, 2)) {
        /* Enough members to cross zset-max-listpack-entries (128). */
        for (int i = 0; i < 130; i++) { af(g, "%d", i % 7); af(g, "m%d", i); }
    } else {
        int n = chance(g, 60) ? 1 : 2 + (int)rnd(g, 3);
        for (int i = 0; i < n; i++) { score(g); zmember(g); }
        if (chance(g, 2)) score(g); /* a score without a member */
    }
    finish(g, CMP_EXACT);
}
static void g_zincrby(gen *g) { begin(g, "zincrby"); key_z(g); score(g); zmember(g); finish(g, CMP_EXACT); }
static void g_zrem(gen *g) { begin(g, "zrem"); key_z(g); int n = 1 + (int)rnd(g, 3); for (int i = 0; i < n; i++) zmember(g); finish(g, CMP_EXACT); }
static void g_zremrangebyscore(gen *g) { begin(g, "zremrangebyscore"); key_z(g); score_range(g); score_range(g); finish(g, CMP_EXACT); }
static void g_zremrangebyrank(gen *g) { begin(g, "zremrangebyrank"); key_z(g); index_arg(g); index_arg(g); finish(g, CMP_EXACT); }
/* Marks the step as a lex range on the key at argv[1] (skipped when unspecified). */
static void lex_probe(gen *g) {
    g->cur.probe = PROBE_LEX;
    g->cur.key_arg = 1;
}
static void g_zremrangebylex(gen *g) { begin(g, "zremrangebylex"); key_z(g); lex_range(g); lex_range(g); lex_probe(g); finish(g, CMP_EXACT); }

/* LIMIT offset count, mostly small, sometimes negative or huge. */
static void limit(gen *g) {
    word(g, "limit");
    if (chance(g, 75)) af(g, "%d", (int)rnd(g, 5) - (chance(g, 20) ? 2 : 0));
    else ab(g, PICK(g, COUNTS));
    if (chance(g, 75)) af(g, "%d", (int)rnd(g, 6) - 1);
    else ab(g, PICK(g, COUNTS));
}

/* ZRANGE / ZRANGESTORE: the range, then BYSCORE|BYLEX, REV, LIMIT and WITHSCORES in random
 * order.  The range usually fits the chosen mode. */
static void zrange_body(gen *g, int store) {
    /* 0 rank, 1 score, 2 lex.  Not lex inside MULTI: whether Redis's answer is defined is
     * only known when the command runs (see PROBE_LEX), and the block may change it. */
    int by = (int)rnd(g, g->in_block ? 2 : 3);
    int rev = chance(g, 35);
    int fits = chance(g, 85);
    int kind = fits ? by : (int)rnd(g, 3);
    for (int i = 0; i < 2; i++) {
        if (kind == 0) index_arg(g);
        else if (kind == 1) score_range(g);
        else lex_range(g);
    }
    /* Options in random order. */
    int order[4] = {0, 1, 2, 3};
    for (int i = 3; i > 0; i--) {
        int j = (int)rnd(g, (uint64_t)i + 1), t = order[i];
        order[i] = order[j];
        order[j] = t;
    }
    for (int i = 0; i < 4; i++) {
        switch (order[i]) {
        case 0:
            if (by == 1) word(g, "byscore");
            else if (by == 2) word(g, "bylex");
            if (by && !g->in_block && chance(g, 3)) word(g, by == 1 ? "bylex" : "byscore");
            if (by) {
                g->cur.probe = PROBE_LEX;
                g->cur.key_arg = store ? 2 : 1;
            }
            break;
        case 1: if (rev) word(g, "rev"); break;
        case 2: if (chance(g, by ? 40 : 8)) limit(g); break;
        case 3: if (!store && chance(g, 40)) word(g, "withscores"); break;
        }
    }
}
static void g_zrange(gen *g) { begin(g, "zrange"); key_z(g); zrange_body(g, 0); finish(g, CMP_EXACT); }
static void g_zrangestore(gen *g) { begin(g, "zrangestore"); key_z(g); key_z(g); zrange_body(g, 1); finish(g, CMP_EXACT); }
static void byscore_like(gen *g, const char *name) {
    begin(g, name);
    key_z(g);
    score_range(g);
    score_range(g);
    int ws = chance(g, 40), lim = chance(g, 35);
    if (chance(g, 50)) {
        if (ws) word(g, "withscores");
        if (lim) limit(g);
    } else {
        if (lim) limit(g);
        if (ws) word(g, "withscores");
    }
    finish(g, CMP_EXACT);
}
static void g_zrangebyscore(gen *g) { byscore_like(g, "zrangebyscore"); }
static void g_zrevrangebyscore(gen *g) { byscore_like(g, "zrevrangebyscore"); }
static void bylex_like(gen *g, const char *name) {
    begin(g, name);
    key_z(g);
    lex_range(g);
    lex_range(g);
    lex_probe(g);
    if (chance(g, 35)) limit(g);
    if (chance(g, 3)) word(g, "withscores");
    finish(g, CMP_EXACT);
}
static void g_zrangebylex(gen *g) { bylex_like(g, "zrangebylex"); }
static void g_zrevrangebylex(gen *g) { bylex_like(g, "zrevrangebylex"); }
static void g_zcount(gen *g) { begin(g, "zcount"); key_z(g); score_range(g); score_range(g); finish(g, CMP_EXACT); }
static void g_zlexcount(gen *g) { begin(g, "zlexcount"); key_z(g); lex_range(g); lex_range(g); lex_probe(g); finish(g, CMP_EXACT); }
static void g_zrevrange(gen *g) {
    begin(g, "zrevrange");
    key_z(g);
    index_arg(g);
    index_arg(g);
    if (chance(g, 40)) word(g, chance(g, 95) ? "withscores" : "withscore");
    finish(g, CMP_EXACT);
}
static void g_zcard(gen *g) { begin(g, "zcard"); key_z(g); finish(g, CMP_EXACT); }
static void g_zscore(gen *g) { begin(g, "zscore"); key_z(g); zmember(g); finish(g, CMP_EXACT); }
static void g_zmscore(gen *g) { begin(g, "zmscore"); key_z(g); int n = 1 + (int)rnd(g, 3); for (int i = 0; i < n; i++) zmember(g); finish(g, CMP_EXACT); }
static void g_zrank(gen *g) { begin(g, "zrank"); key_z(g); zmember(g); finish(g, CMP_EXACT); }
static void g_zrevrank(gen *g) { begin(g, "zrevrank"); key_z(g); zmember(g); finish(g, CMP_EXACT); }
static void zpop_like(gen *g, const char *name) {
    begin(g, name);
    key_z(g);
    if (chance(g, 50)) count_arg(g);
    finish(g, CMP_EXACT);
}
static void g_zpopmin(gen *g) { zpop_like(g, "zpopmin"); }
static void g_zpopmax(gen *g) { zpop_like(g, "zpopmax"); }
/* WEIGHTS (usually one per key) and AGGREGATE, each sometimes. */
/* A WEIGHTS factor (floatv's draw).  Not a subnormal one for a STORE: Redis keeps a
 * subnormal score of a small sorted set as text, and each strtod that reads it back leaves
 * errno = ERANGE, which a later numeric SORT sees; the fake does not mirror those reads
 * (fr_int.h, fri_errno_load).  Parsing a subnormal weight is mirrored, and drawn. */
static void weight(gen *g, int store) {
    static const bstr normal = B("1e-300");
    if (chance(g, 30)) {
        af(g, "%d.%d", (int)rnd(g, 21) - 10, (int)rnd(g, 100));
        return;
    }
    const bstr *b = PICK(g, FLOATS);
    ab(g, store && b->n == 6 && !memcmp(b->p, "1e-320", 6) ? &normal : b);
}
static void weights_aggregate(gen *g, int nkeys, int with_agg, int store) {
    if (chance(g, 30)) {
        word(g, "weights");
        int n = chance(g, 90) ? nkeys : nkeys + 1;
        for (int i = 0; i < n; i++) weight(g, store);
    }
    if (with_agg && chance(g, 30)) {
        static const char *const ag[] = {"sum", "min", "max", "avg"};
        word(g, "aggregate");
        word(g, ag[rnd(g, 4)]);
    }
}
/* ZUNION/ZINTER/ZDIFF and their STORE forms: numkeys, keys, options. */
static void zsetop(gen *g, const char *name, int store, int weights) {
    begin(g, name);
    if (store) key_z(g);
    int n = 1 + (int)rnd(g, 3);
    if (chance(g, 92)) af(g, "%d", n);
    else ab(g, PICK(g, COUNTS));
    for (int i = 0; i < n; i++) key_z(g);
    if (weights) weights_aggregate(g, n, 1, store);
    if (!store && chance(g, 40)) word(g, "withscores");
    finish(g, CMP_EXACT);
}
static void g_zunionstore(gen *g) { zsetop(g, "zunionstore", 1, 1); }
static void g_zinterstore(gen *g) { zsetop(g, "zinterstore", 1, 1); }
static void g_zdiffstore(gen *g) { zsetop(g, "zdiffstore", 1, 0); }
static void g_zunion(gen *g) { zsetop(g, "zunion", 0, 1); }
static void g_zinter(gen *g) { zsetop(g, "zinter", 0, 1); }
static void g_zdiff(gen *g) { zsetop(g, "zdiff", 0, 0); }
static void g_zintercard(gen *g) {
    begin(g, "zintercard");
    numkeys_keys(g, key_z);
    if (chance(g, 40)) { word(g, "limit"); count_arg(g); }
    finish(g, CMP_EXACT);
}
static void g_zrandmember(gen *g) {
    begin(g, "zrandmember");
    key_z(g);
    g->cur.probe = PROBE_RANDPICK;
    g->cur.key_arg = 1;
    if (chance(g, 70) || g->in_block) {
        rand_count(g, 1);
        if (chance(g, 40)) { word(g, "withscores"); g->cur.pairs = 1; }
    }
    finish(g, g->cur.pairs ? CMP_PAIRS : CMP_SORTED);
}
static void zmpop_tail(gen *g) {
    word(g, chance(g, 45) ? "min" : chance(g, 90) ? "max" : "mid");
    if (chance(g, 50)) { word(g, "count"); count_arg(g); }
}
static void g_zmpop(gen *g) { begin(g, "zmpop"); numkeys_keys(g, key_z); zmpop_tail(g); finish(g, CMP_EXACT); }
static void g_bzmpop(gen *g) { begin(g, "bzmpop"); block_timeout(g); numkeys_keys(g, key_z); zmpop_tail(g); finish(g, CMP_EXACT); }
static void bzpop_like(gen *g, const char *name) {
    begin(g, name);
    keys_n(g, key_z, 1, 3);
    block_timeout(g);
    finish(g, CMP_EXACT);
}
static void g_bzpopmin(gen *g) { bzpop_like(g, "bzpopmin"); }
static void g_bzpopmax(gen *g) { bzpop_like(g, "bzpopmax"); }
static void g_zscan(gen *g) {
    begin(g, "zscan");
    key_z(g);
    scan_cursor(g);
    g->cur.count = scan_options(g, 0);
    g->cur.probe = PROBE_SCAN;
    g->cur.key_arg = 1;
    g->cur.pairs = 1;
    finish(g, CMP_SCAN);
}

/* ----- GEO -------------------------------------------------------------------------------- */

/* Geo sets live on their own keys and on one sorted set's, so GEO commands meet sets whose
 * scores ZADD chose too. */
static const bstr KEYS_GEO[] = {B("G1"), B("{t}G2"), B("{t}z3")};
static void key_geo(gen *g) { key_from(g, KEYS_GEO); }
static const bstr GEO_MEMBERS[] = {B("a"), B("b"), B("c"), B("d"), B("Palermo"), B(""),
                                   B("m\x00"), B("1")};
static void geo_member(gen *g) {
    if (chance(g, 80)) ab(g, PICK(g, GEO_MEMBERS));
    else zmember(g); /* a sorted set's member */
}
/* Coordinates: mostly in a small area (so searches find things), sometimes at or past
 * the limits, or not numbers. */
static const bstr GEO_LONS[] = {B("180"), B("-180"), B("180.0000001"), B("0"), B("-0"),
                                B("179.99999"), B("abc"), B("inf"), B("nan"), B(""), B("1e3")};
static const bstr GEO_LATS[] = {B("85.05112878"), B("-85.05112878"), B("85.05112879"), B("90"),
                                B("0"), B("-85"), B("abc"), B("-inf"), B(" 1"), B("1e-300")};
static void geo_lonlat(gen *g) {
    if (chance(g, 85)) af(g, "13.%d", (int)rnd(g, 1000));
    else ab(g, PICK(g, GEO_LONS));
    if (chance(g, 85)) af(g, "38.%d", (int)rnd(g, 1000));
    else ab(g, PICK(g, GEO_LATS));
}
static const bstr GEO_UNITS[] = {B("m"), B("km"), B("ft"), B("mi"), B("KM"), B("Mi"), B("yd"),
                                 B(""), B("km\x00x")};
static void geo_unit(gen *g) {
    if (chance(g, 90)) ab(g, &GEO_UNITS[rnd(g, 6)]);
    else ab(g, PICK(g, GEO_UNITS));
}
static const bstr GEO_DISTS[] = {B("0"), B("-1"), B("abc"), B("1e10"), B("inf"), B(""), B("0.001")};
static void geo_dist(gen *g) {
    if (chance(g, 85)) af(g, "%d", (int)rnd(g, 120000));
    else ab(g, PICK(g, GEO_DISTS));
}
static void g_geoadd(gen *g) {
    static const char *const opts[] = {"NX", "XX", "CH", "GT", NULL};
    begin(g, "geoadd");
    key_geo(g);
    if (chance(g, 40)) options(g, opts, 25, NULL);
    int n = chance(g, 60) ? 1 : 2 + (int)rnd(g, 4);
    for (int i = 0; i < n; i++) { geo_lonlat(g); geo_member(g); }
    finish(g, CMP_EXACT);
}
static void g_geodist(gen *g) {
    begin(g, "geodist");
    key_geo(g);
    geo_member(g);
    geo_member(g);
    if (chance(g, 60)) geo_unit(g);
    finish(g, CMP_EXACT);
}
static void geo_members_cmd(gen *g, const char *name) {
    begin(g, name);
    key_geo(g);
    int n = (int)rnd(g, 4);
    for (int i = 0; i < n; i++) geo_member(g);
    finish(g, CMP_EXACT);
}
static void g_geohash(gen *g) { geo_members_cmd(g, "geohash"); }
static void g_geopos(gen *g) { geo_members_cmd(g, "geopos"); }
/* The options of the search commands, in random order; STORE/STOREDIST only when store. */
static void geo_search_options(gen *g, int store) {
    static const char *const opts[] = {"WITHDIST", "WITHHASH", "WITHCOORD", "ASC", "DESC",
                                       "COUNT", "STORE", "STOREDIST", NULL};
    int n = (int)rnd(g, 4);
    for (int i = 0; i < n; i++) {
        int o = (int)rnd(g, store ? 8 : 6);
        if (chance(g, 3)) o = (int)rnd(g, 8); /* STORE where it is refused */
        word(g, opts[o]);
        if (o == 5) {
            if (chance(g, 85)) af(g, "%d", 1 + (int)rnd(g, 6));
            else count_arg(g);
            if (chance(g, 30)) word(g, "any");
        } else if (o >= 6) {
            key_geo(g);
        }
    }
    if (chance(g, 3)) word(g, "any");
}
static void georadius_cmd(gen *g, const char *name, int store) {
    begin(g, name);
    key_geo(g);
    geo_lonlat(g);
    geo_dist(g);
    geo_unit(g);
    geo_search_options(g, store);
    finish(g, CMP_EXACT);
}
static void g_georadius(gen *g) { georadius_cmd(g, "georadius", 1); }
static void g_georadius_ro(gen *g) { georadius_cmd(g, "georadius_ro", 0); }
static void georadiusbymember_cmd(gen *g, const char *name, int store) {
    begin(g, name);
    key_geo(g);
    geo_member(g);
    geo_dist(g);
    geo_unit(g);
    geo_search_options(g, store);
    finish(g, CMP_EXACT);
}
static void g_georadiusbymember(gen *g) { georadiusbymember_cmd(g, "georadiusbymember", 1); }
static void g_georadiusbymember_ro(gen *g) { georadiusbymember_cmd(g, "georadiusbymember_ro", 0); }
/* GEOSEARCH's FROM and BY parts in random order, now and then one missing or doubled. */
static void geosearch_body(gen *g, int store) {
    int parts[2] = {0, 1};
    if (chance(g, 50)) { parts[0] = 1; parts[1] = 0; }
    for (int k = 0; k < 2; k++) {
        int reps = chance(g, 4) ? 0 : chance(g, 4) ? 2 : 1;
        for (int r = 0; r < reps; r++) {
            if (parts[k] == 0) {
                if (chance(g, 50)) { word(g, "frommember"); geo_member(g); }
                else { word(g, "fromlonlat"); geo_lonlat(g); }
            } else if (chance(g, 50)) {
                word(g, "byradius");
                geo_dist(g);
                geo_unit(g);
            } else {
                word(g, "bybox");
                geo_dist(g);
                geo_dist(g);
                geo_unit(g);
            }
        }
    }
    geo_search_options(g, 0);
    if (store && chance(g, 40)) word(g, "storedist");
}
static void g_geosearch(gen *g) {
    begin(g, "geosearch");
    key_geo(g);
    geosearch_body(g, 0);
    finish(g, CMP_EXACT);
}
static void g_geosearchstore(gen *g) {
    begin(g, "geosearchstore");
    key_geo(g);
    key_geo(g);
    geosearch_body(g, 1);
    finish(g, CMP_EXACT);
}

/* ----- HyperLogLog ------------------------------------------------------------------------- */

/* HLLs on their own keys and one string key (SET and APPEND make them invalid). */
static const bstr KEYS_HLL[] = {B("p1"), B("{t}p2"), B("{t}s3")};
static void key_hll(gen *g) { key_from(g, KEYS_HLL); }
static void g_pfadd(gen *g) {
    begin(g, "pfadd");
    key_hll(g);
    if (chance(g, 5)) {
        /* enough elements to pass the sparse limit (3000 bytes) at once */
        int base = (int)rnd(g, 100000), n = 100 + (int)rnd(g, 1500);
        for (int i = 0; i < n; i++) af(g, "e%d", base + i);
    } else {
        int n = (int)rnd(g, 5);
        for (int i = 0; i < n; i++) {
            if (chance(g, 50)) af(g, "e%d", (int)rnd(g, 2000));
            else value(g);
        }
    }
    finish(g, CMP_EXACT);
}
static void g_pfcount(gen *g) { begin(g, "pfcount"); keys_n(g, key_hll, 1, 3); finish(g, CMP_EXACT); }
static void g_pfmerge(gen *g) { begin(g, "pfmerge"); keys_n(g, key_hll, 1, 4); finish(g, CMP_EXACT); }
static void g_pfdebug(gen *g) {
    static const char *const subs[] = {"encoding", "decode", "todense", "getreg", "nope"};
    begin(g, "pfdebug");
    int r = (int)rnd(g, 100);
    /* GETREG answers 16384 integers: rarely */
    word(g, subs[r < 40 ? 0 : r < 75 ? 1 : r < 94 ? 2 : r < 97 ? 3 : 4]);
    key_hll(g);
    finish(g, CMP_EXACT);
}

/* ----- Streams ------------------------------------------------------------------------------ */

/* Entry IDs: small explicit ones (so both servers agree), partial and edge forms. */
static const bstr IDS[] = {
    B("0-0"), B("0-1"), B("1"), B("1-1"), B("2-0"), B("3-5"), B("5"), B("1-*"), B("9-*"),
    B("18446744073709551615-18446744073709551615"), B("18446744073709551615-*"),
    B("18446744073709551616"), B("abc"), B("-1"), B("1-x"), B(""), B("4102444800000-0"),
    B("0"), B("-"), B("+"), B("$"), B(">"), /* not "*": XADD draws it on its own */
};
static void stream_id(gen *g) {
    if (chance(g, 70)) {
        int ms = (int)rnd(g, 12);
        if (chance(g, 70)) af(g, "%d-%d", ms, (int)rnd(g, 3));
        else af(g, "%d", ms);
    } else {
        ab(g, PICK(g, IDS));
    }
}
/* A range bound: mostly - and + and small IDs, sometimes exclusive. */
static void stream_bound(gen *g, int low) {
    int r = (int)rnd(g, 100);
    if (r < 30) a(g, low ? "-" : "+");
    else if (r < 40) af(g, "(%d-%d", (int)rnd(g, 12), (int)rnd(g, 3));
    else stream_id(g);
}
/* XADD's field/value pairs (now and then a field without its value). */
static void fields(gen *g) {
    int n = chance(g, 85) ? 1 : 2;
    for (int i = 0; i < n; i++) { field(g); value(g); }
    if (chance(g, 2)) field(g); /* a field without a value */
}
/* MAXLEN|MINID [=|~] threshold [LIMIT count], for XADD and XTRIM. */
static void trim_spec(gen *g) {
    int maxlen = chance(g, 60);
    word(g, maxlen ? "maxlen" : "minid");
    int r = (int)rnd(g, 10);
    if (r < 3) a(g, "=");
    else if (r < 5) a(g, "~");
    if (!maxlen) stream_id(g);
    else if (chance(g, 80)) af(g, "%d", (int)rnd(g, 6));
    else ab(g, PICK(g, COUNTS));
    if (chance(g, 15)) {
        word(g, "limit");
        if (chance(g, 80)) af(g, "%d", (int)rnd(g, 200));
        else ab(g, PICK(g, COUNTS));
    }
}
static void g_xadd(gen *g) {
    begin(g, "xadd");
    key_x(g);
    if (chance(g, 15)) word(g, "nomkstream");
    if (chance(g, 20)) trim_spec(g);
    if (!g->in_block && chance(g, 8)) {
        a(g, "*");
        g->cur.probe = PROBE_XADD_STAR;
        g->cur.key_arg = 1;
    } else {
        stream_id(g);
    }
    fields(g);
    finish(g, CMP_EXACT);
}
static void g_xlen(gen *g) { begin(g, "xlen"); key_x(g); finish(g, CMP_EXACT); }
static void xrange_like(gen *g, const char *name, int rev) {
    begin(g, name);
    key_x(g);
    stream_bound(g, !rev);
    stream_bound(g, rev);
    if (chance(g, 40)) { word(g, "count"); if (chance(g, 80)) af(g, "%d", (int)rnd(g, 5)); else ab(g, PICK(g, COUNTS)); }
    finish(g, CMP_EXACT);
}
static void g_xrange(gen *g) { xrange_like(g, "xrange", 0); }
static void g_xrevrange(gen *g) { xrange_like(g, "xrevrange", 1); }
static void g_xdel(gen *g) { begin(g, "xdel"); key_x(g); int n = 1 + (int)rnd(g, 3); for (int i = 0; i < n; i++) stream_id(g); finish(g, CMP_EXACT); }
static void g_xtrim(gen *g) { begin(g, "xtrim"); key_x(g); trim_spec(g); finish(g, CMP_EXACT); }
static void g_xsetid(gen *g) {
    begin(g, "xsetid");
    key_x(g);
    stream_id(g);
    if (chance(g, 30)) { word(g, "entriesadded"); if (chance(g, 80)) af(g, "%d", (int)rnd(g, 20)); else ab(g, PICK(g, COUNTS)); }
    if (chance(g, 30)) { word(g, "maxdeletedid"); stream_id(g); }
    finish(g, CMP_EXACT);
}
/* BLOCK milliseconds that return quickly (never 0 outside MULTI). */
static void block_ms(gen *g) {
    static const bstr b[] = {B("1"), B("10"), B("1"), B("-1"), B("abc"), B("1.5")};
    word(g, "block");
    ab(g, PICK(g, b));
}
/* STREAMS key... id...: n keys and (usually) as many IDs. */
static void streams_tail(gen *g, int group) {
    word(g, "streams");
    int n = 1 + (int)rnd(g, 2);
    for (int i = 0; i < n; i++) key_x(g);
    int ids = chance(g, 95) ? n : n + 1;
    for (int i = 0; i < ids; i++) {
        int r = (int)rnd(g, 100);
        if (group && r < 55) a(g, ">");
        else if (!group && r < 15) a(g, "$");
        else if (r < 65) a(g, "0");
        else stream_id(g);
    }
}
static void g_xread(gen *g) {
    begin(g, "xread");
    if (chance(g, 40)) { word(g, "count"); if (chance(g, 80)) af(g, "%d", (int)rnd(g, 4)); else ab(g, PICK(g, COUNTS)); }
    if (chance(g, 20)) block_ms(g);
    streams_tail(g, 0);
    finish(g, CMP_EXACT);
}
static const bstr GROUPS[] = {B("g1"), B("g1"), B("g2"), B("G1"), B("")};
static const bstr CONSUMERS[] = {B("c1"), B("c1"), B("c2"), B("c3"), B("")};
static void group_name(gen *g) { ab(g, PICK(g, GROUPS)); }
static void consumer_name(gen *g) { ab(g, PICK(g, CONSUMERS)); }
static void g_xgroup_create(gen *g) {
    begin(g, "xgroup");
    word(g, "create");
    key_x(g);
    group_name(g);
    if (chance(g, 40)) a(g, "$");
    else if (chance(g, 50)) a(g, "0");
    else stream_id(g);
    if (chance(g, 50)) word(g, "mkstream");
    if (chance(g, 20)) { word(g, "entriesread"); if (chance(g, 80)) af(g, "%d", (int)rnd(g, 10) - 1); else ab(g, PICK(g, COUNTS)); }
    finish(g, CMP_EXACT);
}
static void g_xgroup_setid(gen *g) {
    begin(g, "xgroup");
    word(g, "setid");
    key_x(g);
    group_name(g);
    if (chance(g, 30)) a(g, "$");
    else stream_id(g);
    if (chance(g, 20)) { word(g, "entriesread"); if (chance(g, 80)) af(g, "%d", (int)rnd(g, 10) - 1); else ab(g, PICK(g, COUNTS)); }
    finish(g, CMP_EXACT);
}
static void g_xgroup_destroy(gen *g) { begin(g, "xgroup"); word(g, "destroy"); key_x(g); group_name(g); finish(g, CMP_EXACT); }
static void g_xgroup_createconsumer(gen *g) { begin(g, "xgroup"); word(g, "createconsumer"); key_x(g); group_name(g); consumer_name(g); finish(g, CMP_EXACT); }
static void g_xgroup_delconsumer(gen *g) { begin(g, "xgroup"); word(g, "delconsumer"); key_x(g); group_name(g); consumer_name(g); finish(g, CMP_EXACT); }
static void g_xgroup_help(gen *g) { begin(g, "xgroup"); word(g, chance(g, 90) ? "help" : "nosuchsub"); finish(g, CMP_EXACT); }
static void g_xreadgroup(gen *g) {
    begin(g, "xreadgroup");
    word(g, "group");
    group_name(g);
    consumer_name(g);
    if (chance(g, 40)) { word(g, "count"); if (chance(g, 80)) af(g, "%d", (int)rnd(g, 4)); else ab(g, PICK(g, COUNTS)); }
    if (chance(g, 15)) block_ms(g);
    if (chance(g, 20)) word(g, "noack");
    streams_tail(g, 1);
    finish(g, CMP_EXACT);
}
static void g_xack(gen *g) { begin(g, "xack"); key_x(g); group_name(g); int n = 1 + (int)rnd(g, 3); for (int i = 0; i < n; i++) stream_id(g); finish(g, CMP_EXACT); }
/* A minimum idle time that is not near any real idle time: 0 or very long. */
static void min_idle(gen *g) {
    static const bstr m[] = {B("0"), B("0"), B("0"), B("100000000"), B("-1"), B("abc")};
    ab(g, PICK(g, m));
}
static void g_xpending(gen *g) {
    begin(g, "xpending");
    key_x(g);
    group_name(g);
    if (chance(g, 60)) {
        if (chance(g, 25)) { word(g, "idle"); min_idle(g); }
        stream_bound(g, 1);
        stream_bound(g, 0);
        if (chance(g, 85)) af(g, "%d", (int)rnd(g, 6));
        else ab(g, PICK(g, COUNTS));
        if (chance(g, 40)) consumer_name(g);
    }
    finish(g, CMP_TIMES);
}
static void g_xclaim(gen *g) {
    begin(g, "xclaim");
    key_x(g);
    group_name(g);
    consumer_name(g);
    min_idle(g);
    int n = 1 + (int)rnd(g, 3);
    for (int i = 0; i < n; i++) stream_id(g);
    static const char *const opts[] = {"IDLE", "TIME", "RETRYCOUNT", "FORCE", "JUSTID", "LASTID", NULL};
    int k = (int)rnd(g, 3);
    for (int i = 0; i < k; i++) {
        int w = (int)rnd(g, 6);
        word(g, opts[w]);
        if (w == 0) af(g, "%d", (int)rnd(g, 100000));
        else if (w == 1) af(g, "%lld", 1600000000000LL + (long long)rnd(g, 1000000));
        else if (w == 2) af(g, "%d", (int)rnd(g, 5));
        else if (w == 5) stream_id(g);
    }
    finish(g, CMP_EXACT);
}
static void g_xautoclaim(gen *g) {
    begin(g, "xautoclaim");
    key_x(g);
    group_name(g);
    consumer_name(g);
    min_idle(g);
    stream_bound(g, 1);
    if (chance(g, 40)) { word(g, "count"); if (chance(g, 80)) af(g, "%d", (int)rnd(g, 5)); else ab(g, PICK(g, COUNTS)); }
    if (chance(g, 30)) word(g, "justid");
    finish(g, CMP_EXACT);
}
static void g_xinfo_consumers(gen *g) { begin(g, "xinfo"); word(g, "consumers"); key_x(g); group_name(g); finish(g, CMP_TIMES); }
static void g_xinfo_groups(gen *g) { begin(g, "xinfo"); word(g, "groups"); key_x(g); finish(g, CMP_EXACT); }
static void g_xinfo_stream(gen *g) {
    begin(g, "xinfo");
    word(g, "stream");
    key_x(g);
    if (chance(g, 40)) {
        word(g, "full");
        if (chance(g, 40)) { word(g, "count"); if (chance(g, 80)) af(g, "%d", (int)rnd(g, 4)); else ab(g, PICK(g, COUNTS)); }
    }
    finish(g, CMP_TIMES);
}
static void g_xinfo_help(gen *g) { begin(g, "xinfo"); word(g, chance(g, 90) ? "help" : "nosuchsub"); finish(g, CMP_EXACT); }

/* ----- Transactions ------------------------------------------------------------------------- */

static void gen_one(gen *g, int in_block);

/* MULTI, a few commands (sometimes an unknown one or a wrong arity: queue-time errors that
 * doom the transaction; WRONGTYPE and friends are run-time errors inside EXEC's array;
 * a nested MULTI or a WATCH: errors that doom nothing), then EXEC or DISCARD. */
static void multi_block(gen *g) {
    begin(g, "multi");
    finish_ex(g, CMP_EXACT, 1);
    int n = (int)rnd(g, 6);
    for (int i = 0; i < n; i++) {
        int r = (int)rnd(g, 100);
        if (r < 3) {
            g_unknown(g);
        } else if (r < 5) {
            begin(g, "multi");
            finish_ex(g, CMP_EXACT, 1);
        } else if (r < 7) {
            begin(g, "watch");
            key_any(g);
            finish_ex(g, CMP_EXACT, 1);
        } else {
            gen_one(g, 1);
        }
    }
    int r = (int)rnd(g, 100);
    if (r < 85) {
        begin(g, "exec");
        finish_ex(g, CMP_EXEC, 1);
    } else if (r < 95) {
        begin(g, "discard");
        finish_ex(g, CMP_EXACT, 1);
    } else {
        begin(g, "exec");
        a(g, "extra"); /* aborts the transaction */
        finish_ex(g, CMP_EXEC, 1);
    }
}
static void g_multi(gen *g) { multi_block(g); }

/* WATCH on one client, maybe a write by the other client (or by itself, or nothing, or
 * UNWATCH), then a transaction. */
/* Whether a command is drawn in this run (it is in the fake's table and not excluded). */
static int is_live(const gen *g, const char *name) {
    for (size_t i = 0; i < g->nlive; i++)
        if (!strcmp(g->live[i].e->name, name)) return 1;
    return 0;
}

/* Commands aimed at a WATCHed key K (O: another key), some of which modify it and some of
 * which do not (a no-op write, a failed condition, an error): Redis touches the watchers
 * only when the key really changed. */
static const struct touch {
    const char *cmd;        /* the fake table's name, to check it is live */
    const char *words[7];   /* the command; "K" is the watched key, "O" another key */
} TOUCHES[] = {
    {"set", {"SET", "K", "v"}}, {"set", {"SET", "K", "v", "NX"}}, {"set", {"SET", "K", "v", "XX", "GET"}},
    {"del", {"DEL", "K"}}, {"unlink", {"UNLINK", "O"}},
    {"expire", {"EXPIRE", "K", "5000"}}, {"expire", {"EXPIRE", "K", "5000", "NX"}},
    {"expire", {"EXPIRE", "K", "5000", "GT"}}, {"pexpireat", {"PEXPIREAT", "K", "1000000000000"}},
    {"persist", {"PERSIST", "K"}}, {"rename", {"RENAME", "K", "O"}}, {"rename", {"RENAME", "O", "K"}},
    {"rename", {"RENAME", "K", "K"}}, {"move", {"MOVE", "K", "1"}}, {"swapdb", {"SWAPDB", "0", "1"}},
    {"flushdb", {"FLUSHDB"}}, {"flushall", {"FLUSHALL"}}, {"copy", {"COPY", "O", "K", "REPLACE"}},
    {"sadd", {"SADD", "K", "1"}}, {"srem", {"SREM", "K", "nosuch"}}, {"spop", {"SPOP", "K", "0"}},
    {"hset", {"HSET", "K", "f1", "v"}}, {"hdel", {"HDEL", "K", "nosuch"}},
    {"zadd", {"ZADD", "K", "XX", "1", "a"}}, {"zadd", {"ZADD", "K", "1", "a"}},
    {"zincrby", {"ZINCRBY", "K", "0", "a"}}, {"lpush", {"LPUSH", "K", "a"}},
    {"ltrim", {"LTRIM", "K", "0", "-1"}}, {"lrem", {"LREM", "K", "0", "nosuch"}},
    {"incr", {"INCR", "K"}}, {"incrbyfloat", {"INCRBYFLOAT", "K", "0"}}, {"append", {"APPEND", "K", ""}},
    {"setrange", {"SETRANGE", "K", "0", ""}}, {"setbit", {"SETBIT", "K", "0", "0"}},
    {"setbit", {"SETBIT", "K", "3", "1"}}, {"bitfield", {"BITFIELD", "K", "SET", "u8", "0", "0"}},
    {"bitop", {"BITOP", "OR", "K", "K"}}, {"bitop", {"BITOP", "AND", "K", "O"}}, {"getex", {"GETEX", "K"}}, {"getex", {"GETEX", "K", "PERSIST"}},
    {"getdel", {"GETDEL", "K"}}, {"lpop", {"LPOP", "K", "0"}}, {"zremrangebyrank", {"ZREMRANGEBYRANK", "K", "5", "1"}},
    {"xadd", {"XADD", "K", "NOMKSTREAM", "99-0", "f", "v"}}, {"xtrim", {"XTRIM", "K", "MAXLEN", "100"}},
    {"xgroup|create", {"XGROUP", "CREATE", "K", "gw", "$", "MKSTREAM"}},
    {"sinterstore", {"SINTERSTORE", "K", "O"}}, {"zunionstore", {"ZUNIONSTORE", "K", "1", "O"}},
    {"sinterstore", {"SINTERSTORE", "O", "K"}}, {"sunionstore", {"SUNIONSTORE", "K", "K"}},
    {"sdiffstore", {"SDIFFSTORE", "K", "K", "O"}}, {"smove", {"SMOVE", "K", "O", "1"}},
    {"smove", {"SMOVE", "O", "K", "1"}}, {"smove", {"SMOVE", "K", "K", "1"}},
    {"sort", {"SORT", "O", "STORE", "K"}}, {"sort", {"SORT", "O", "LIMIT", "5", "0", "STORE", "K"}},
    {"sort", {"SORT", "K", "STORE", "O"}},
};

/* Pushes one command of TOUCHES aimed at key (klen bytes), on the current client. */
static void touch_key(gen *g, const char *key, size_t klen) {
    for (int tries = 0; tries < 20; tries++) {
        const struct touch *t = &TOUCHES[rnd(g, NELEM(TOUCHES))];
        if (!is_live(g, t->cmd)) continue;
        memset(&g->cur, 0, sizeof g->cur);
        g->cur.client = g->client;
        for (int i = 0; i < 7 && t->words[i]; i++) {
            if (!strcmp(t->words[i], "K")) add_arg(g, key, klen);
            else if (!strcmp(t->words[i], "O")) key_any(g);
            else if (i == 0) word(g, t->words[i]);
            else a(g, t->words[i]);
        }
        finish_ex(g, CMP_EXACT, 1);
        return;
    }
}

static void g_watch(gen *g) {
    int me = g->client, other = 1 - me;
    begin(g, "watch");
    keys_n(g, key_any, 1, 3);
    finish_ex(g, CMP_EXACT, 1);
    /* One of the watched keys, for commands aimed at it. */
    const step *w = &g->queue[g->qhead + g->qlen - 1];
    int wi = 1 + (int)rnd(g, (uint64_t)w->argc - 1);
    size_t klen = w->lens[wi];
    char *key = malloc(klen + 1);
    if (!key) abort();
    memcpy(key, w->argv[wi], klen + 1);
    int n = (int)rnd(g, 3);
    for (int i = 0; i < n; i++) {
        int r = (int)rnd(g, 100);
        g->client = r < 60 ? other : me;
        if (r >= 90) {
            begin(g, "unwatch");
            finish_ex(g, CMP_EXACT, 1);
        } else if (chance(g, 50)) {
            touch_key(g, key, klen);
        } else {
            gen_one(g, 0);
        }
    }
    free(key);
    g->client = me;
    multi_block(g);
    g->client = me;
}
/* EXEC drawn as a command: an error outside MULTI, or ends a block early when drawn in one. */
static void g_exec(gen *g) { begin(g, "exec"); finish_ex(g, CMP_EXEC, 1); }
static void g_discard(gen *g) { begin(g, "discard"); finish_ex(g, CMP_EXACT, 1); }
static void g_unwatch(gen *g) { begin(g, "unwatch"); finish(g, CMP_EXACT); }

/* ----- Scripts: EVAL, EVALSHA, their _RO forms, SCRIPT, FCALL, FUNCTION ----------------- */

/* SHA-1 in hex, the fake's own (sha1.c): EVALSHA's names are known when the sequence is
 * generated, before any reply. */
void fri_sha1hex(char out[41], const char *data, size_t len);

/* A small grammar of scripts: reads and writes of KEYS through redis.call and pcall,
 * returns of every type, errors of every kind (a command's, error(), a compile error, an
 * unknown command, a write in a read-only script).  nkeys: how many keys each expects. */
static const struct { const char *src; int nkeys; } SCRIPTS[] = {
    {"return redis.call('get', KEYS[1])", 1},
    {"return redis.call('set', KEYS[1], ARGV[1])", 1},
    {"return redis.call('incr', KEYS[1])", 1},
    {"return redis.pcall('incr', KEYS[1])", 1},
    {"return redis.call('lpush', KEYS[1], ARGV[1])", 1},
    {"return redis.call('type', KEYS[1])", 1},
    {"return redis.call('exists', KEYS[1], KEYS[2])", 2},
    {"return redis.call('del', KEYS[1])", 1},
    {"return redis.call('lrange', KEYS[1], 0, -1)", 1},
    {"return redis.call('zrange', KEYS[1], 0, -1, 'withscores')", 1},
    {"return redis.call('hlen', KEYS[1])", 1},
    {"return redis.call('expire', KEYS[1], 1000)", 1},
    {"return redis.call('rename', KEYS[1], KEYS[2])", 2},
    {"local v = redis.call('get', KEYS[1]) if v then return redis.call('set', KEYS[1], v .. 'x') end return false", 1},
    {"return {KEYS[1], ARGV[1], 1, 2.5, -3.7, false, true, {1, {2}}}", 1},
    {"return {1, 2, nil, 4}", 0},
    {"return {err = 'ERR custom error'}", 0},
    {"return redis.error_reply('MYCODE my message')", 0},
    {"return redis.status_reply('fine')", 0},
    {"error('boom')", 0},
    {"return redis.call('nosuch', KEYS[1])", 1},
    {"return redis.pcall('nosuch')", 0},
    {"return x(", 0},
    {"return a_global", 0},
    {"#!lua flags=no-writes\nreturn redis.call('get', KEYS[1])", 1},
    {"#!lua flags=no-writes\nreturn redis.call('set', KEYS[1], 'v')", 1},
    {"#!lua\nreturn redis.call('strlen', KEYS[1])", 1},
    {"return tonumber(ARGV[1])", 0},
    {"return cjson.encode({ARGV[1], 1})", 0},
    {"return redis.sha1hex(ARGV[1])", 0},
    {"return #KEYS + #ARGV", 0},
    {"return cmsgpack.unpack(cmsgpack.pack(ARGV[1]))", 0},
    {"return struct.unpack('>i4', struct.pack('>i4', tonumber(ARGV[1]) or 7))", 0},
};

/* The script's keys and arguments: mostly numkeys as it expects, sometimes a wrong or
 * malformed count. */
static void script_args(gen *g, int nkeys) {
    int r = (int)rnd(g, 100);
    if (r < 85) {
        af(g, "%d", nkeys);
        for (int i = 0; i < nkeys; i++) key_any(g);
    } else if (r < 90) {
        a(g, "-1");
    } else if (r < 95) {
        af(g, "%d", nkeys + 3);
    } else {
        a(g, "x");
    }
    int nargs = (int)rnd(g, 3);
    for (int i = 0; i < nargs; i++) value(g);
}

static void eval_like(gen *g, const char *cmd, int by_sha) {
    begin(g, cmd);
    size_t i = (size_t)rnd(g, NELEM(SCRIPTS));
    if (by_sha) {
        char sha[41];
        if (chance(g, 5)) snprintf(sha, sizeof sha, "%s", "ffffffffffffffffffffffffffffffffffffffff");
        else fri_sha1hex(sha, SCRIPTS[i].src, strlen(SCRIPTS[i].src));
        if (chance(g, 10)) sha[0] = (char)(sha[0] >= 'a' ? sha[0] - 32 : sha[0]);
        a(g, sha);
    } else {
        a(g, SCRIPTS[i].src);
    }
    script_args(g, SCRIPTS[i].nkeys);
    finish(g, CMP_EXACT);
}
static void g_eval(gen *g) { eval_like(g, "eval", 0); }
static void g_evalsha(gen *g) { eval_like(g, "evalsha", 1); }
static void g_eval_ro(gen *g) { eval_like(g, "eval_ro", 0); }
static void g_evalsha_ro(gen *g) { eval_like(g, "evalsha_ro", 1); }

static void g_script_load(gen *g) {
    begin(g, "script");
    word(g, "load");
    a(g, SCRIPTS[rnd(g, NELEM(SCRIPTS))].src);
    finish(g, CMP_EXACT);
}
static void g_script_exists(gen *g) {
    begin(g, "script");
    word(g, "exists");
    int n = 1 + (int)rnd(g, 3);
    for (int i = 0; i < n; i++) {
        char sha[41];
        const char *src = SCRIPTS[rnd(g, NELEM(SCRIPTS))].src;
        fri_sha1hex(sha, src, strlen(src));
        a(g, chance(g, 10) ? "nosuchsha" : sha);
    }
    finish(g, CMP_EXACT);
}
static void g_script_flush(gen *g) {
    begin(g, "script");
    word(g, "flush");
    if (chance(g, 50)) word(g, chance(g, 50) ? "sync" : "async");
    finish(g, CMP_EXACT);
}
static void g_script_kill(gen *g) { begin(g, "script"); word(g, "kill"); finish(g, CMP_EXACT); }
static void g_script_help(gen *g) { begin(g, "script"); word(g, "help"); finish(g, CMP_EXACT); }

/* One library only (FUNCTION LIST lists several in Redis's hash order). */
static const char *const LIBRARIES[] = {
    "#!lua name=rlib\nredis.register_function('rf_get', function(k, a) return redis.call('get', k[1]) end)\n"
    "redis.register_function{function_name='rf_ro', callback=function(k, a) return redis.call('type', k[1]) end, flags={'no-writes'}, description='type'}\n"
    "redis.register_function('rf_set', function(k, a) return redis.call('set', k[1], a[1] or 'v') end)",
    "#!lua name=rlib\nredis.register_function('rf_get', function(k, a) return {k[1], a[1]} end)",
    "#!lua name=rlib\nreturn 1",
    "#!lua name=rlib\nerror('not loading')",
};
static void g_function_load(gen *g) {
    begin(g, "function");
    word(g, "load");
    if (chance(g, 70)) word(g, "replace");
    a(g, LIBRARIES[rnd(g, NELEM(LIBRARIES))]);
    finish(g, CMP_EXACT);
}
static void fcall_like(gen *g, const char *cmd) {
    static const char *const names[] = {"rf_get", "rf_ro", "rf_set", "RF_GET", "nosuch"};
    begin(g, cmd);
    a(g, names[rnd(g, NELEM(names))]);
    script_args(g, 1);
    finish(g, CMP_EXACT);
}
static void g_fcall(gen *g) { fcall_like(g, "fcall"); }
static void g_fcall_ro(gen *g) { fcall_like(g, "fcall_ro"); }
static void g_function_list(gen *g) {
    begin(g, "function");
    word(g, "list");
    if (chance(g, 30)) word(g, "withcode");
    if (chance(g, 30)) { word(g, "libraryname"); a(g, chance(g, 50) ? "r*" : "x*"); }
    finish(g, CMP_SORTED); /* a library's functions come in Redis's hash order */
}
static void g_function_delete(gen *g) {
    begin(g, "function");
    word(g, "delete");
    a(g, chance(g, 80) ? "rlib" : "nolib");
    finish(g, CMP_EXACT);
}
static void g_function_flush(gen *g) { begin(g, "function"); word(g, "flush"); finish(g, CMP_EXACT); }
static void g_function_stats(gen *g) { begin(g, "function"); word(g, "stats"); finish(g, CMP_EXACT); }
static void g_function_kill(gen *g) { begin(g, "function"); word(g, "kill"); finish(g, CMP_EXACT); }
static void g_function_help(gen *g) { begin(g, "function"); word(g, "help"); finish(g, CMP_EXACT); }

/* ----- The table ------------------------------------------------------------------------------ */

/* Every command of Redis 7.0 that the fake has or may get, with its generator.  Only rows
 * whose name is in the fake's command table are used.  weight: tenths. */
static const gen_entry GENERATORS[] = {
    /* generic */
    {"del", g_del, 10, 0}, {"unlink", g_unlink, 5, 0}, {"exists", g_exists, 10, 0},
    {"touch", g_touch, 5, 0}, {"type", g_type, 10, 0}, {"keys", g_keys, 10, 0},
    {"scan", g_scan, 10, 0}, {"randomkey", g_randomkey, 5, 0}, {"rename", g_rename, 8, 0},
    {"renamenx", g_renamenx, 4, 0}, {"move", g_move, 5, 0}, {"expire", g_expire, 10, 0},
    {"pexpire", g_pexpire, 10, 0}, {"expireat", g_expireat, 10, 0},
    {"pexpireat", g_pexpireat, 10, 0}, {"ttl", g_ttl, 10, 0}, {"pttl", g_pttl, 10, 0},
    {"expiretime", g_expiretime, 5, 0}, {"pexpiretime", g_pexpiretime, 5, 0},
    {"persist", g_persist, 8, 0}, {"copy", g_copy, 8, 0}, {"sort", g_sort, 12, 0},
    {"dump", g_dump, 8, 0}, {"restore", g_restore, 8, 0},
    {"sort_ro", g_sort_ro, 5, 0},
    {"object|encoding", g_object_encoding, 15, 0}, {"object|refcount", g_object_refcount, 5, 0},
    {"object|freq", g_object_freq, 2, 0}, {"object|idletime", g_object_idletime, 3, 0},
    {"object|help", g_object_help, 1, 0}, {"memory|usage", g_memory_usage, 10, 0},
    {"memory|purge", g_memory_purge, 1, 0}, {"memory|help", g_memory_help, 1, 0},
    /* server, connection, pubsub, cluster */
    {"dbsize", g_dbsize, 10, 0}, {"flushdb", g_flushdb, 1, 0}, {"flushall", g_flushall, 1, 0},
    {"swapdb", g_swapdb, 3, 0}, {"select", g_select, 6, 0}, {"ping", g_ping, 5, 0},
    {"echo", g_echo, 5, 0}, {"time", g_time, 3, 0}, {"quit", g_quit, 1, 1},
    {"publish", g_publish, 5, 0}, {"command|count", g_command_count, 3, 0},
    {"command|getkeys", g_command_getkeys, 8, 1},
    {"command|getkeysandflags", g_command_getkeysandflags, 8, 1},
    {"command|info", g_command_info, 4, 1}, {"command|docs", g_command_docs, 3, 1},
    {"command|list", g_command_list, 2, 1}, {"command|help", g_command_help, 1, 0},
    {"acl|setuser", g_acl_setuser, 5, 0}, {"acl|dryrun", g_acl_dryrun, 8, 1},
    {"acl|whoami", g_acl_whoami, 1, 0}, {"acl|users", g_acl_users, 2, 0},
    {"acl|help", g_acl_help, 1, 0}, {"acl|save", g_acl_save, 1, 0},
    {"acl|load", g_acl_save, 1, 0}, {"acl|cat", g_acl_cat, 2, 0},
    {"acl|genpass", g_acl_genpass, 2, 0}, {"acl|deluser", g_acl_deluser, 2, 0},
    {"acl|log", g_acl_log, 2, 0}, {"auth", g_auth, 2, 0},
    {"cluster|keyslot", g_cluster_keyslot, 5, 0},
    /* scripting */
    {"eval", g_eval, 20, 0}, {"evalsha", g_evalsha, 10, 0}, {"eval_ro", g_eval_ro, 5, 0},
    {"evalsha_ro", g_evalsha_ro, 3, 0}, {"script|load", g_script_load, 5, 0},
    {"script|exists", g_script_exists, 3, 0}, {"script|flush", g_script_flush, 1, 0},
    {"script|kill", g_script_kill, 1, 0}, {"script|help", g_script_help, 1, 0},
    {"fcall", g_fcall, 8, 0}, {"fcall_ro", g_fcall_ro, 4, 0},
    {"function|load", g_function_load, 4, 0}, {"function|list", g_function_list, 2, 0},
    {"function|delete", g_function_delete, 1, 0}, {"function|flush", g_function_flush, 1, 0},
    {"function|stats", g_function_stats, 1, 0}, {"function|kill", g_function_kill, 1, 0},
    {"function|help", g_function_help, 1, 0},
    /* strings */
    {"get", g_get, 10, 0}, {"set", g_set, 30, 0}, {"setnx", g_setnx, 5, 0},
    {"setex", g_setex, 5, 0}, {"psetex", g_psetex, 5, 0}, {"getset", g_getset, 5, 0},
    {"getdel", g_getdel, 5, 0}, {"getex", g_getex, 8, 0}, {"mget", g_mget, 8, 0},
    {"mset", g_mset, 10, 0}, {"msetnx", g_msetnx, 5, 0}, {"incr", g_incr, 8, 0},
    {"decr", g_decr, 4, 0}, {"incrby", g_incrby, 8, 0}, {"decrby", g_decrby, 4, 0},
    {"incrbyfloat", g_incrbyfloat, 10, 0}, {"append", g_append, 8, 0},
    {"strlen", g_strlen, 5, 0}, {"getrange", g_getrange, 8, 0}, {"substr", g_substr, 3, 0},
    {"setrange", g_setrange, 8, 0}, {"lcs", g_lcs, 8, 0},
    /* bitmaps */
    {"setbit", g_setbit, 20, 0}, {"getbit", g_getbit, 10, 0}, {"bitcount", g_bitcount, 10, 0},
    {"bitpos", g_bitpos, 10, 0}, {"bitop", g_bitop, 10, 0}, {"bitfield", g_bitfield, 15, 0},
    {"bitfield_ro", g_bitfield_ro, 5, 0},
    /* lists */
    {"lpush", g_lpush, 20, 0}, {"rpush", g_rpush, 20, 0}, {"lpushx", g_lpushx, 5, 0},
    {"rpushx", g_rpushx, 5, 0}, {"lpop", g_lpop, 8, 0}, {"rpop", g_rpop, 8, 0},
    {"llen", g_llen, 5, 0}, {"lrange", g_lrange, 15, 0}, {"lindex", g_lindex, 8, 0},
    {"lset", g_lset, 8, 0}, {"lrem", g_lrem, 8, 0}, {"ltrim", g_ltrim, 8, 0},
    {"linsert", g_linsert, 8, 0}, {"lpos", g_lpos, 8, 0}, {"lmove", g_lmove, 8, 0},
    {"rpoplpush", g_rpoplpush, 5, 0}, {"lmpop", g_lmpop, 8, 0}, {"blpop", g_blpop, 4, 0},
    {"brpop", g_brpop, 4, 0}, {"blmove", g_blmove, 4, 0}, {"brpoplpush", g_brpoplpush, 3, 0},
    {"blmpop", g_blmpop, 4, 0},
    /* hashes */
    {"hset", g_hset, 25, 0}, {"hmset", g_hmset, 5, 0}, {"hsetnx", g_hsetnx, 5, 0},
    {"hget", g_hget, 10, 0}, {"hmget", g_hmget, 8, 0}, {"hgetall", g_hgetall, 10, 0},
    {"hkeys", g_hkeys, 5, 0}, {"hvals", g_hvals, 5, 0}, {"hdel", g_hdel, 8, 0},
    {"hexists", g_hexists, 5, 0}, {"hlen", g_hlen, 5, 0}, {"hstrlen", g_hstrlen, 5, 0},
    {"hincrby", g_hincrby, 8, 0}, {"hincrbyfloat", g_hincrbyfloat, 8, 0},
    {"hrandfield", g_hrandfield, 8, 0}, {"hscan", g_hscan, 8, 0},
    /* sets */
    {"sadd", g_sadd, 25, 0}, {"srem", g_srem, 8, 0}, {"smembers", g_smembers, 10, 0},
    {"sismember", g_sismember, 5, 0}, {"smismember", g_smismember, 5, 0},
    {"scard", g_scard, 5, 0}, {"spop", g_spop, 8, 0}, {"srandmember", g_srandmember, 8, 0},
    {"smove", g_smove, 8, 0}, {"sinter", g_sinter, 5, 0}, {"sunion", g_sunion, 5, 0},
    {"sdiff", g_sdiff, 5, 0}, {"sinterstore", g_sinterstore, 5, 0},
    {"sunionstore", g_sunionstore, 5, 0}, {"sdiffstore", g_sdiffstore, 5, 0},
    {"sintercard", g_sintercard, 5, 0}, {"sscan", g_sscan, 8, 0},
    /* sorted sets */
    {"zadd", g_zadd, 30, 0}, {"zincrby", g_zincrby, 8, 0}, {"zrem", g_zrem, 8, 0},
    {"zremrangebyscore", g_zremrangebyscore, 5, 0}, {"zremrangebyrank", g_zremrangebyrank, 5, 0},
    {"zremrangebylex", g_zremrangebylex, 5, 1}, {"zrange", g_zrange, 20, 0},
    {"zrangestore", g_zrangestore, 8, 0}, {"zrangebyscore", g_zrangebyscore, 8, 0},
    {"zrevrangebyscore", g_zrevrangebyscore, 8, 0}, {"zrangebylex", g_zrangebylex, 8, 1},
    {"zrevrangebylex", g_zrevrangebylex, 8, 1}, {"zcount", g_zcount, 5, 0},
    {"zlexcount", g_zlexcount, 5, 1}, {"zrevrange", g_zrevrange, 5, 0}, {"zcard", g_zcard, 5, 0},
    {"zscore", g_zscore, 8, 0}, {"zmscore", g_zmscore, 5, 0}, {"zrank", g_zrank, 5, 0},
    {"zrevrank", g_zrevrank, 5, 0}, {"zpopmin", g_zpopmin, 5, 0}, {"zpopmax", g_zpopmax, 5, 0},
    {"zunionstore", g_zunionstore, 5, 0}, {"zinterstore", g_zinterstore, 5, 0},
    {"zdiffstore", g_zdiffstore, 5, 0}, {"zunion", g_zunion, 5, 0}, {"zinter", g_zinter, 5, 0},
    {"zdiff", g_zdiff, 5, 0}, {"zintercard", g_zintercard, 5, 0},
    {"zrandmember", g_zrandmember, 8, 0}, {"zmpop", g_zmpop, 5, 0}, {"bzmpop", g_bzmpop, 3, 0},
    {"bzpopmin", g_bzpopmin, 3, 0}, {"bzpopmax", g_bzpopmax, 3, 0}, {"zscan", g_zscan, 8, 0},
    /* geo (GEOADD runs ZADD) */
    {"geoadd", g_geoadd, 25, 0}, {"geodist", g_geodist, 8, 0}, {"geohash", g_geohash, 5, 0},
    {"geopos", g_geopos, 8, 0}, {"georadius", g_georadius, 8, 0},
    {"georadius_ro", g_georadius_ro, 5, 0}, {"georadiusbymember", g_georadiusbymember, 8, 0},
    {"georadiusbymember_ro", g_georadiusbymember_ro, 5, 0}, {"geosearch", g_geosearch, 15, 0},
    {"geosearchstore", g_geosearchstore, 8, 0},
    /* hyperloglog (PFSELFTEST has none: 10 million additions take seconds on Redis) */
    {"pfadd", g_pfadd, 25, 0}, {"pfcount", g_pfcount, 15, 0}, {"pfmerge", g_pfmerge, 8, 0},
    {"pfdebug", g_pfdebug, 5, 0},
    /* streams */
    {"xadd", g_xadd, 30, 0}, {"xlen", g_xlen, 5, 0}, {"xrange", g_xrange, 10, 0},
    {"xrevrange", g_xrevrange, 8, 0}, {"xdel", g_xdel, 8, 0}, {"xtrim", g_xtrim, 5, 0},
    {"xsetid", g_xsetid, 5, 0}, {"xread", g_xread, 10, 0},
    {"xgroup|create", g_xgroup_create, 15, 0}, {"xgroup|setid", g_xgroup_setid, 5, 0},
    {"xgroup|destroy", g_xgroup_destroy, 3, 0},
    {"xgroup|createconsumer", g_xgroup_createconsumer, 5, 0},
    {"xgroup|delconsumer", g_xgroup_delconsumer, 4, 0}, {"xgroup|help", g_xgroup_help, 1, 0},
    {"xreadgroup", g_xreadgroup, 20, 0}, {"xack", g_xack, 8, 0},
    {"xpending", g_xpending, 10, 0}, {"xclaim", g_xclaim, 8, 0},
    {"xautoclaim", g_xautoclaim, 8, 0}, {"xinfo|consumers", g_xinfo_consumers, 5, 0},
    {"xinfo|groups", g_xinfo_groups, 5, 0}, {"xinfo|stream", g_xinfo_stream, 5, 0},
    {"xinfo|help", g_xinfo_help, 1, 0},
    /* transactions */
    {"multi", g_multi, 40, 1}, {"watch", g_watch, 25, 1}, {"exec", g_exec, 3, 0},
    {"discard", g_discard, 3, 0}, {"unwatch", g_unwatch, 3, 0},
};

/* Relative weight of each group when drawing (tenths); others get 5. */
static int group_weight(const char *group) {
    static const struct { const char *g; int w; } w[] = {
        {"string", 10}, {"bitmap", 6}, {"list", 10}, {"hash", 10}, {"set", 10}, {"sorted-set", 10},
        {"stream", 10},
        {"generic", 10}, {"transactions", 6}, {"server", 3}, {"connection", 2},
        {"pubsub", 1}, {"cluster", 1},
    };
    for (size_t i = 0; i < NELEM(w); i++)
        if (!strcmp(w[i].g, group)) return w[i].w;
    return 5;
}

/* Draws one command (or block) from the live generators and pushes its steps.  Inside a
 * MULTI block, commands that are blocks themselves (MULTI, WATCH, QUIT) are not drawn. */
static void gen_one(gen *g, int in_block) {
    int saved = g->in_block;
    g->in_block = in_block;
    if (chance(g, 1)) {
        g_unknown(g);
        g->in_block = saved;
        return;
    }
    for (;;) {
        /* Group first, then a command of the group by weight. */
        int total = 0;
        for (size_t i = 0; i < g->ngroups; i++) total += group_weight(g->groups[i]);
        int r = (int)rnd(g, (uint64_t)total);
        size_t gi = 0;
        for (; gi < g->ngroups; gi++) {
            r -= group_weight(g->groups[gi]);
            if (r < 0) break;
        }
        const char *group = g->groups[gi];
        int wsum = 0;
        for (size_t i = 0; i < g->nlive; i++)
            if (!strcmp(g->live[i].group, group) && !(in_block && g->live[i].e->no_block))
                wsum += g->live[i].e->weight;
        if (wsum == 0) continue; /* e.g. only MULTI/WATCH in a block */
        r = (int)rnd(g, (uint64_t)wsum);
        for (size_t i = 0; i < g->nlive; i++) {
            const gen_entry *e = g->live[i].e;
            if (strcmp(g->live[i].group, group) || (in_block && e->no_block)) continue;
            r -= e->weight;
            if (r < 0) {
                e->fn(g);
                g->in_block = saved;
                return;
            }
        }
    }
}

/* Generates the next action (one command or a block) on a random client. */
static void gen_action(gen *g) {
    g->client = chance(g, 85) ? 0 : 1;
    gen_one(g, 0);
}

/* ======================================================================================
 * The executor: both servers, both clients, the comparison.
 * ==================================================================================== */

/* A command queued inside MULTI, remembered for comparing EXEC's array. */
typedef struct queued {
    cmp_mode mode;  /* its rule, without probes (nothing can be probed in MULTI) */
    int pairs;      /* for CMP_SCAN: field/value pairs */
    long tolerance; /* for CMP_NEAR */
    int select_db;  /* SELECT n: the database it selects when it succeeds, else -1 */
} queued;

typedef struct client_state {
    rh_conn *real;   /* connection to redis-server */
    fr_client *fake; /* the fake's client */
    int db;          /* the database the client has selected (from the real replies) */
    int in_multi;    /* inside MULTI (from the real replies) */
    queued *q;       /* commands queued since MULTI */
    size_t qn, qcap;
} client_state;

/* One executed command, for the context shown with a mismatch. */
typedef struct hist {
    long number;     /* command number in the run, from 1 */
    char *line;      /* the command in diff-script format */
    char *real;      /* the real reply, escaped and shortened */
} hist;

typedef struct runner {
    int verbose;             /* show every command */
    int cluster;             /* the servers are one-node clusters */
    rh_server *real;         /* the real server */
    rh_conn *probe;          /* a third connection, for questions only the runner asks */
    int probe_db;            /* the database the probe connection has selected */
    fr_server *fake;         /* the fake server of the current run */
    client_state cl[MAX_CLIENTS];
    rh_buf real_reply, fake_reply, scratch;
    hist history[HISTORY];   /* ring buffer of the last commands */
    long number;             /* commands executed in this run */
    int final_check;         /* running the keyspace check that ends a run */
    int scripted;            /* a script ran in this run: a string it stored from an
                                argument may sit in a larger allocation (Redis reuses
                                redis.call's argument objects), so MEMORY USAGE of
                                strings is compared by type from then on */
    long n_error;            /* commands whose real reply was an error ... */
    long n_wrongtype;        /* ... of which WRONGTYPE */
    long n_relaxed;          /* commands compared by a rule other than byte for byte */
    long n_skipped;          /* commands skipped (unspecified or clock-dependent answers) */
    long run_length;         /* --commands: the replay length of a final-check mismatch */
    FILE *emit;              /* --emit: the run as a diff script, or NULL */
    rh_conn *listen_real;    /* --events: PSUBSCRIBEd to __key*__:* on the real server */
    fr_client *listen_fake;  /* ... and on the fake */
    rh_buf ev_real, ev_fake; /* the messages of the last command on each side */
    char config_line[512];   /* the run's parameters other than Redis's defaults */
    rh_buf real_payload;     /* the payloads of the last DUMP with keep_payload ... */
    rh_buf fake_payload;     /* ... on each side ("" for nil, an error, or inside MULTI) */
} runner;

/* Appends arg as redis-cli would read it: bare when it is plain, else double-quoted with
 * \" \\ \n \r \t and \xHH escapes. */
static void cli_quote(rh_buf *out, const char *p, size_t n) {
    int plain = n > 0;
    for (size_t i = 0; i < n && plain; i++) {
        unsigned char c = (unsigned char)p[i];
        if (c <= ' ' || c >= 0x7f || c == '"' || c == '\'' || c == '\\') plain = 0;
    }
    if (plain && (p[0] == '<' || p[0] == '@' || p[0] == '!' || p[0] == '#')) plain = 0;
    if (plain) {
        rh_buf_append(out, p, n);
        return;
    }
    rh_buf_append(out, "\"", 1);
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)p[i];
        switch (c) {
        case '"': rh_buf_append(out, "\\\"", 2); break;
        case '\\': rh_buf_append(out, "\\\\", 2); break;
        case '\n': rh_buf_append(out, "\\n", 2); break;
        case '\r': rh_buf_append(out, "\\r", 2); break;
        case '\t': rh_buf_append(out, "\\t", 2); break;
        default:
            if (c >= 0x20 && c < 0x7f) rh_buf_append(out, &p[i], 1);
            else rh_buf_printf(out, "\\x%02x", c);
        }
    }
    rh_buf_append(out, "\"", 1);
}

/* The command as a diff-script line: "<2> @sorted SMEMBERS S1". */
static void script_line(rh_buf *out, const step *s, cmp_mode mode) {
    if (s->payload_arg && s->client == 0 && s->payload_arg == 3) {
        /* RESTORE dst ttl <the DUMP's payload> options: diff_runner's directive */
        rh_buf_append(out, "!dumprestore ", 13);
        cli_quote(out, s->src ? s->src : "", s->srclen);
        for (int i = 1; i < s->argc; i++) {
            if (i == 3) continue;
            rh_buf_append(out, " ", 1);
            cli_quote(out, s->argv[i], s->lens[i]);
        }
        return;
    }
    if (s->client) rh_buf_printf(out, "<%d> ", s->client + 1);
    if (mode == CMP_SORTED || mode == CMP_PAIRS || mode == CMP_COLL)
        rh_buf_append(out, "@sorted ", 8);
    else if (mode == CMP_NEAR || mode == CMP_TIMES) rh_buf_append(out, "@near ", 6);
    else if (mode == CMP_ARRLEN || mode == CMP_FIRSTLINE) rh_buf_append(out, "@len ", 5);
    else if (mode != CMP_EXACT && mode != CMP_EXEC) rh_buf_append(out, "@type ", 6);
    for (int i = 0; i < s->argc; i++) {
        if (i) rh_buf_append(out, " ", 1);
        cli_quote(out, s->argv[i], s->lens[i]);
    }
}

/* Prints "  label: <escaped reply>", shortened past SHOW_MAX bytes. */
#define show(label, p, len) ds_show((label), (p), (len), SHOW_MAX)

/* Whether the step's command name is name (case-insensitive). */
static int is_cmd(const step *s, const char *name) {
    return s->argc >= 1 && s->lens[0] == strlen(name) && !strcasecmp(s->argv[0], name);
}

/* Asks the probe connection; the reply is in r->scratch.  0, or -1 on failure. */
static int probe_call(runner *r, int argc, char **argv, size_t *lens) {
    if (rh_send(r->probe, argc, argv, lens) != 0 || rh_read_reply(r->probe, &r->scratch) != 0) {
        fprintf(stderr, "random_diff: probe failed: %s\n", rh_conn_error(r->probe));
        return -1;
    }
    return 0;
}

/* What the probe learned about a key (or the database). */
typedef struct probe_info {
    int ordered;     /* the key is an intset or listpack: Redis's order is deterministic */
    int estimated;   /* the key is a hash table or a skiplist: MEMORY USAGE is estimated */
    int shared;      /* the key holds a shared integer (OBJECT REFCOUNT 2147483647) */
    long long size;  /* its number of elements (the database's keys when no key) */
    int mixed;       /* a sorted set whose scores are not all equal */
    char kind;       /* its type: 'l'ist, 's'et, 'z'set, 'h'ash, or 0 (other, none) */
    int hashtable;   /* the key is a hash table (a set's or a hash's) */
    int dump_mode;   /* PROBE_DUMP: the rule for its payload */
} probe_info;

/* The raw reply of "ZRANGE key i i WITHSCORES" on the probe connection, into out. */
static int probe_zrange_one(runner *r, char *key, size_t klen, const char *i, rh_buf *out) {
    char *argv[] = {"ZRANGE", key, (char *)i, (char *)i, "WITHSCORES"};
    size_t lens[] = {6, klen, strlen(i), strlen(i), 10};
    if (probe_call(r, 5, argv, lens) != 0) return -1;
    rh_buf_reset(out);
    rh_buf_append(out, r->scratch.data, r->scratch.len);
    return 0;
}

static int run_probe(runner *r, const step *s, int db, probe_info *pi) {
    memset(pi, 0, sizeof *pi);
    if (r->probe_db != db) {
        char dbs[16];
        snprintf(dbs, sizeof dbs, "%d", db);
        char *argv[] = {"SELECT", dbs};
        if (probe_call(r, 2, argv, NULL) != 0) return -1;
        r->probe_db = db;
    }
    if (s->key_arg == 0) {
        char *argv[] = {"DBSIZE"};
        if (probe_call(r, 1, argv, NULL) != 0) return -1;
        reply_integer(r->scratch.data, r->scratch.len, &pi->size);
        return 0;
    }
    char *key = s->argv[s->key_arg];
    size_t klen = s->lens[s->key_arg];
    char *argv[3];
    size_t lens[3];
    argv[0] = "OBJECT", lens[0] = 6;
    argv[1] = "ENCODING", lens[1] = 8;
    argv[2] = key, lens[2] = klen;
    if (probe_call(r, 3, argv, lens) != 0) return -1;
    pi->ordered = reply_is_string(r->scratch.data, r->scratch.len, "intset") ||
                  reply_is_string(r->scratch.data, r->scratch.len, "listpack") ||
                  reply_is_string(r->scratch.data, r->scratch.len, "ziplist");
    pi->estimated = reply_is_string(r->scratch.data, r->scratch.len, "hashtable") ||
                    reply_is_string(r->scratch.data, r->scratch.len, "skiplist") ||
                    (r->scripted && (reply_is_string(r->scratch.data, r->scratch.len, "embstr") ||
                                     reply_is_string(r->scratch.data, r->scratch.len, "raw")));
    pi->hashtable = reply_is_string(r->scratch.data, r->scratch.len, "hashtable");
    if (s->probe == PROBE_IDLE) {
        long long refcount = 0;
        argv[1] = "REFCOUNT", lens[1] = 8;
        if (probe_call(r, 3, argv, lens) != 0) return -1;
        pi->shared = reply_integer(r->scratch.data, r->scratch.len, &refcount) &&
                     refcount == 2147483647LL;
    }
    argv[0] = "TYPE", lens[0] = 4;
    argv[1] = key, lens[1] = klen;
    if (probe_call(r, 2, argv, lens) != 0) return -1;
    const char *card = NULL;
    if (reply_is_string(r->scratch.data, r->scratch.len, "set")) card = "SCARD", pi->kind = 's';
    else if (reply_is_string(r->scratch.data, r->scratch.len, "hash")) card = "HLEN", pi->kind = 'h';
    else if (reply_is_string(r->scratch.data, r->scratch.len, "zset")) card = "ZCARD", pi->kind = 'z';
    else if (reply_is_string(r->scratch.data, r->scratch.len, "list")) card = "LLEN", pi->kind = 'l';
    int is_stream = reply_is_string(r->scratch.data, r->scratch.len, "stream");
    /* (not for OBJECT IDLETIME: SCARD, HLEN ... are accesses, which would reset the idle
     * time on the real side only) */
    if (card && s->probe != PROBE_IDLE) {
        argv[0] = (char *)card, lens[0] = strlen(card);
        if (probe_call(r, 2, argv, lens) != 0) return -1;
        reply_integer(r->scratch.data, r->scratch.len, &pi->size);
    }
    if (s->probe == PROBE_DUMP) {
        pi->dump_mode = pi->hashtable ? CMP_FIRSTLINE : CMP_EXACT;
        if (is_stream) {
            /* no group: nothing in the payload comes from a clock */
            argv[0] = "XINFO", lens[0] = 5;
            argv[1] = "GROUPS", lens[1] = 6;
            argv[2] = key, lens[2] = klen;
            if (probe_call(r, 3, argv, lens) != 0) return -1;
            if (!(r->scratch.len == 4 && !memcmp(r->scratch.data, "*0\r\n", 4)))
                pi->dump_mode = CMP_FIRSTLINE;
        } else if (pi->kind == 'l') {
            /* one quicklist node small enough that RPUSH would not have cut it either */
            argv[0] = "DEBUG", lens[0] = 5;
            argv[1] = "OBJECT", lens[1] = 6;
            argv[2] = key, lens[2] = klen;
            if (probe_call(r, 3, argv, lens) != 0) return -1;
            const char *nodes = strstr(r->scratch.data, "ql_nodes:");
            const char *size = strstr(r->scratch.data, "ql_uncompressed_size:");
            if (!nodes || !size || strtol(nodes + 9, NULL, 10) != 1 ||
                strtol(size + 21, NULL, 10) > 4000)
                pi->dump_mode = CMP_TYPE;
        }
    }
    if (s->probe == PROBE_LEX && card && !strcmp(card, "ZCARD") && pi->size > 1) {
        /* The scores are all equal iff the first and the last are. */
        rh_buf first = {0}, last = {0};
        int rc = probe_zrange_one(r, key, klen, "0", &first) ||
                 probe_zrange_one(r, key, klen, "-1", &last);
        spans a1 = {0}, a2 = {0};
        if (rc == 0 && split_array(first.data, first.len, &a1) == 2 &&
            split_array(last.data, last.len, &a2) == 2)
            pi->mixed = !bytes_equal(a1.v[1].p, a1.v[1].len, a2.v[1].p, a2.v[1].len);
        free(a1.v);
        free(a2.v);
        rh_buf_free(&first);
        rh_buf_free(&last);
        if (rc) return -1;
    }
    return 0;
}

/* For the random-pick commands: whether the step (as finally built, its arity perhaps
 * broken) has a count, and its value (LLONG_MIN when it is not a valid integer). */
static void parse_count(step *s) {
    s->has_count = s->argc > s->key_arg + 1;
    s->count = LLONG_MIN;
    if (!s->has_count) return;
    const char *p = s->argv[s->key_arg + 1];
    char *end;
    errno = 0;
    long long v = strtoll(p, &end, 10);
    if (!errno && *end == 0 && end != p && s->lens[s->key_arg + 1] == strlen(p)) s->count = v;
}

/* XADD key ... * ...: whether the new ID is certain, i.e. does not come from the clock:
 * the key is not a stream (an error, or NOMKSTREAM on a missing key), or the stream's last
 * ID is in the far future (then the next ID is last ID + 1).  Sets *certain; returns 0, or
 * -1 when the probe failed. */
static int xadd_star_certain(runner *r, const step *s, int db, int *certain) {
    *certain = 0;
    if (r->probe_db != db) {
        char dbs[16];
        snprintf(dbs, sizeof dbs, "%d", db);
        char *argv[] = {"SELECT", dbs};
        if (probe_call(r, 2, argv, NULL) != 0) return -1;
        r->probe_db = db;
    }
    char *argv[3] = {"TYPE", s->argv[1], NULL};
    size_t lens[3] = {4, s->lens[1], 0};
    if (probe_call(r, 2, argv, lens) != 0) return -1;
    if (reply_is_string(r->scratch.data, r->scratch.len, "none")) {
        for (int i = 2; i < s->argc; i++)
            if (s->lens[i] == 10 && !strcasecmp(s->argv[i], "nomkstream")) *certain = 1;
        return 0;
    }
    if (!reply_is_string(r->scratch.data, r->scratch.len, "stream")) {
        *certain = 1; /* WRONGTYPE */
        return 0;
    }
    argv[0] = "XINFO", lens[0] = 5;
    argv[1] = "STREAM", lens[1] = 6;
    argv[2] = s->argv[1], lens[2] = s->lens[1];
    if (probe_call(r, 3, argv, lens) != 0) return -1;
    spans f = {0};
    if (split_array(r->scratch.data, r->scratch.len, &f) > 0) {
        for (size_t i = 0; i + 1 < f.n; i++) {
            if (!reply_is_string(f.v[i].p, f.v[i].len, "last-generated-id")) continue;
            const char *v = f.v[i + 1].p;
            size_t l = line_len(v, f.v[i + 1].len);
            *certain = f.v[i + 1].p[0] == '$' && strtoull(v + l, NULL, 10) >= 4102444800000ULL;
        }
    }
    free(f.v);
    return 0;
}

/* A SORT's options as Redis's parser reads them (up to a syntax error, whose reply is an
 * error and so compared exactly anyway). */
typedef struct sort_shape {
    int alpha, by, dontsort, limit, gets;
    int store; /* the argument index of the (last) STORE key, 0 if none */
} sort_shape;

static sort_shape sort_parse(const step *s) {
    sort_shape sh = {0};
    int ro = is_cmd(s, "sort_ro");
    for (int j = 2; j < s->argc; j++) {
        const char *w = s->argv[j]; /* compared as a C string, as Redis does */
        int left = s->argc - j - 1;
        if (!strcasecmp(w, "asc") || !strcasecmp(w, "desc")) continue;
        if (!strcasecmp(w, "alpha")) sh.alpha = 1;
        else if (!strcasecmp(w, "limit") && left >= 2) sh.limit = 1, j += 2;
        else if (!ro && !strcasecmp(w, "store") && left >= 1) sh.store = ++j;
        else if (!strcasecmp(w, "by") && left >= 1) {
            j++;
            if (strchr(s->argv[j], '*')) sh.by = 1;
            else sh.dontsort = 1;
        } else if (!strcasecmp(w, "get") && left >= 1) sh.gets++, j++;
        else break;
    }
    return sh;
}

/* Whether Redis's hash-table order can show in the SORT's result: see reply_rules. */
static int sort_ambiguous(const sort_shape *sh, char kind, int ordered) {
    if (kind == '?') return sort_ambiguous(sh, 's', 0) || sort_ambiguous(sh, 'z', 0);
    if (!(kind == 'z' || (kind == 's' && !ordered))) return 0;
    if (sh->dontsort) return kind == 's' && !sh->store; /* a stored set is sorted */
    return sh->alpha && (sh->by || !sh->store);
}

/* The rule for a SORT on a source of this kind ('?' inside MULTI: a set or a sorted set
 * held as a hash table, whichever is worse). */
static cmp_mode sort_mode(const step *s, char kind, int ordered) {
    sort_shape sh = sort_parse(s);
    if (!sort_ambiguous(&sh, kind, ordered) || sh.store) return CMP_EXACT;
    if (sh.limit) return CMP_ARRLEN;
    if (sh.alpha && !sh.by && !sh.dontsort && !sh.gets) return CMP_COLL;
    return CMP_SORTED;
}

/* Picks the rule for a probed step from what the real server holds. */
static cmp_mode resolve(const step *s, const probe_info *pi) {
    switch (s->probe) {
    case PROBE_NONE: return s->mode;
    case PROBE_ORDER: return pi->ordered ? CMP_EXACT : s->mode;
    case PROBE_MEMORY: return pi->estimated ? s->mode : CMP_EXACT;
    case PROBE_IDLE: return pi->shared ? CMP_TYPE : s->mode;
    case PROBE_DUMP: return (cmp_mode)pi->dump_mode;
    case PROBE_RANDOMKEY: return pi->size <= 1 ? CMP_EXACT : CMP_TYPE;
    case PROBE_SCAN: return CMP_SCAN;
    case PROBE_LEX:
    case PROBE_XADD_STAR: return s->mode;
    case PROBE_SORT: return sort_mode(s, pi->kind, pi->ordered);
    case PROBE_RANDPICK:
    case PROBE_SPOP:
        if (!s->has_count) return pi->size <= 1 ? CMP_EXACT : CMP_TYPE;
        if (s->count == LLONG_MIN || s->count == 0 || pi->size == 0) return CMP_EXACT;
        if (s->count > 0 && s->count >= pi->size) return pi->ordered ? CMP_EXACT : s->mode;
        if (s->count < 0 && pi->size == 1) return CMP_EXACT;
        return CMP_ARRLEN;
    }
    return s->mode;
}

/* The rule for a step inside MULTI, where nothing can be probed. */
static cmp_mode blind_mode(const step *s) {
    switch (s->probe) {
    case PROBE_RANDOMKEY:
    case PROBE_IDLE: return CMP_TYPE;
    case PROBE_SORT: return sort_mode(s, '?', 0);
    case PROBE_RANDPICK:
    case PROBE_SPOP:
        if (!s->has_count) return CMP_TYPE;
        if (s->count == 0 || s->count == LLONG_MIN) return CMP_EXACT;
        if (s->count >= 1000000) return s->mode;
        return CMP_ARRLEN;
    default: return s->mode;
    }
}

/* Whether an integer reply is a current Unix time in milliseconds (within ~11 days). */
static int looks_like_now(long long v) {
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    long long now = (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
    return v > now - 1000000000LL && v < now + 1000000000LL;
}

/* CMP_TIMES: equal, except that integers which are idle times or timestamps may differ by
 * DS_NEAR_MS (the harness's @near tolerance).  An integer is one when it follows the field name "idle" or "seen-time", when it
 * is the third of [id, consumer, idle, deliveries] (XPENDING's entries), or when it looks
 * like the current Unix time in milliseconds (delivery times in XINFO STREAM FULL). */
static int times_equal(const char *a, size_t alen, const char *b, size_t blen, int timelike) {
    long long x, y;
    if (reply_integer(a, alen, &x) && reply_integer(b, blen, &y)) {
        if (timelike || (looks_like_now(x) && looks_like_now(y)))
            return (x > y ? x - y : y - x) <= DS_NEAR_MS;
        return x == y;
    }
    spans sa = {0}, sb = {0};
    long na = split_array(a, alen, &sa), nb = split_array(b, blen, &sb);
    int eq;
    if (na < 0 || nb < 0 || na != nb) {
        eq = bytes_equal(a, alen, b, blen);
    } else {
        int pel = na == 4 && sa.v[0].p[0] == '$' && sa.v[1].p[0] == '$' && sa.v[2].p[0] == ':' &&
                  sa.v[3].p[0] == ':';
        eq = 1;
        for (long i = 0; i < na && eq; i++) {
            int t = (pel && i == 2) ||
                    (i > 0 && (reply_is_string(sa.v[i - 1].p, sa.v[i - 1].len, "idle") ||
                               reply_is_string(sa.v[i - 1].p, sa.v[i - 1].len, "seen-time")));
            eq = times_equal(sa.v[i].p, sa.v[i].len, sb.v[i].p, sb.v[i].len, t);
        }
    }
    free(sa.v);
    free(sb.v);
    return eq;
}

/* The bytes of the bulk string reply at p up to its first NUL (what strcoll compares). */
static size_t bulk_cstr(const char *p, size_t len, const char **data) {
    size_t l = line_len(p, len);
    long long n = l ? strtoll(p + 1, NULL, 10) : -1;
    if (p[0] != '$' || n < 0) {
        *data = NULL;
        return 0;
    }
    *data = p + l;
    return strnlen(p + l, (size_t)n);
}

/* CMP_COLL: SORT ... ALPHA on a set or sorted set whose order is its hash table's where
 * elements tie under strcoll, i.e. agree up to their first NUL ("" and "\x00\xff"):
 * exact, unless two neighbours of the real reply tie, then as multisets. */
static int coll_equal(const char *a, size_t alen, const char *b, size_t blen) {
    spans sa = {0};
    int tie = 0;
    if (split_array(a, alen, &sa) > 1) {
        for (size_t i = 0; i + 1 < sa.n && !tie; i++) {
            const char *x, *y;
            size_t nx = bulk_cstr(sa.v[i].p, sa.v[i].len, &x);
            size_t ny = bulk_cstr(sa.v[i + 1].p, sa.v[i + 1].len, &y);
            tie = x && y && nx == ny && !memcmp(x, y, nx);
        }
    }
    free(sa.v);
    return tie ? ds_replies_equal(DS_SORTED, a, alen, b, blen) : bytes_equal(a, alen, b, blen);
}

/* Compares two replies under a rule (not CMP_EXEC).  scan_total: for CMP_SCAN the size the
 * probe saw (-1 unknown); count: the scan's COUNT. */
static int compare(cmp_mode mode, const char *a, size_t alen, const char *b, size_t blen,
                   const step *s, int ordered, long long scan_total) {
    if (alen == 0 || blen == 0) return 0;
    if (a[0] == '-' || b[0] == '-' || mode == CMP_EXACT) return bytes_equal(a, alen, b, blen);
    if (a[0] != b[0]) return 0;
    switch (mode) {
    case CMP_SORTED: return ds_replies_equal(DS_SORTED, a, alen, b, blen);
    case CMP_PAIRS: return pairs_equal(a, alen, b, blen);
    case CMP_TYPE: return 1;
    case CMP_TIMES: return times_equal(a, alen, b, blen, 0);
    case CMP_COLL: return coll_equal(a, alen, b, blen);
    case CMP_FIRSTLINE: {
        if (a[0] != '*' && a[0] != '$') return bytes_equal(a, alen, b, blen);
        size_t la = line_len(a, alen), lb = line_len(b, blen);
        return la && la == lb && !memcmp(a, b, la);
    }
    case CMP_ARRLEN: {
        if (a[0] != '*') return bytes_equal(a, alen, b, blen);
        size_t la = line_len(a, alen), lb = line_len(b, blen);
        return la && la == lb && !memcmp(a, b, la);
    }
    case CMP_NEAR: {
        long long x, y;
        if (!reply_integer(a, alen, &x) || !reply_integer(b, blen, &y) || x < 0 || y < 0)
            return bytes_equal(a, alen, b, blen);
        long long d = x > y ? x - y : y - x;
        return d <= s->tolerance;
    }
    case CMP_SCAN: {
        spans sa = {0}, sb = {0};
        int eq = 0;
        if (split_array(a, alen, &sa) != 2 || split_array(b, blen, &sb) != 2) {
            eq = bytes_equal(a, alen, b, blen);
        } else {
            int real_done = reply_is_string(sa.v[0].p, sa.v[0].len, "0");
            int fake_done = reply_is_string(sb.v[0].p, sb.v[0].len, "0");
            int from_zero = s->argc > s->key_arg + 1 && s->lens[s->key_arg + 1] == 1 &&
                            s->argv[s->key_arg + 1][0] == '0';
            int must = from_zero && real_done &&
                       (ordered || (scan_total >= 0 && s->count > 0 && scan_total <= s->count));
            if (must && ordered) {
                eq = bytes_equal(a, alen, b, blen);
            } else if (must || (from_zero && real_done && fake_done)) {
                eq = fake_done && (s->pairs ? pairs_equal(sa.v[1].p, sa.v[1].len, sb.v[1].p, sb.v[1].len)
                                            : ds_replies_equal(DS_SORTED, sa.v[1].p, sa.v[1].len,
                                                               sb.v[1].p, sb.v[1].len));
            } else {
                eq = sa.v[1].p[0] == '*' && sb.v[1].p[0] == '*';
            }
        }
        free(sa.v);
        free(sb.v);
        return eq;
    }
    default: return bytes_equal(a, alen, b, blen);
    }
}

/* EXEC's reply: element by element, each by the rule of the command queued there. */
static int compare_exec(const client_state *c, const char *a, size_t alen, const char *b,
                        size_t blen, const step *s) {
    spans sa = {0}, sb = {0};
    int eq;
    long na = split_array(a, alen, &sa), nb = split_array(b, blen, &sb);
    if (na < 0 || nb < 0 || (size_t)na != c->qn) {
        eq = bytes_equal(a, alen, b, blen);
    } else if (na != nb) {
        eq = 0;
    } else {
        eq = line_len(a, alen) == line_len(b, blen);
        for (long i = 0; i < na && eq; i++) {
            step tmp = *s;
            tmp.pairs = c->q[i].pairs;
            tmp.tolerance = c->q[i].tolerance;
            tmp.argc = 0; /* a scan inside MULTI: no cursor known, type only */
            eq = compare(c->q[i].mode, sa.v[i].p, sa.v[i].len, sb.v[i].p, sb.v[i].len, &tmp, 0, -1);
        }
    }
    free(sa.v);
    free(sb.v);
    return eq;
}

/* Runs a command on the fake only (not compared, not counted), and writes it to the
 * --emit script as an @fake line. */
static void fake_only(runner *r, client_state *c, int argc, char **argv, size_t *lens) {
    size_t olen;
    fr_exec_resp(c->fake, argc, (const char *const *)argv, lens, &olen);
    if (r->emit) {
        rh_buf line = {0};
        rh_buf_append(&line, "@fake", 5);
        for (int i = 0; i < argc; i++) {
            rh_buf_append(&line, " ", 1);
            cli_quote(&line, argv[i], lens[i]);
        }
        fprintf(r->emit, "%s\n", line.data);
        rh_buf_free(&line);
    }
}

/* The members of a SMEMBERS reply (views into reply): their count, or -1. */
static long set_members(const rh_buf *reply, spans *m) {
    memset(m, 0, sizeof *m);
    if (!reply->data) return 0;
    return split_array(reply->data, reply->len, m);
}

/* Whether bulk element v of a SMEMBERS reply is among the elements of m. */
static int member_in(const span *v, const spans *m) {
    for (size_t i = 0; i < m->n; i++)
        if (bytes_equal(v->p, v->len, m->v[i].p, m->v[i].len)) return 1;
    return 0;
}

/* Runs "CMD key member..." on the fake alone for the elements of from not in other (all
 * of them when other is NULL). */
static void fake_members(runner *r, client_state *c, const char *cmd, char *key, size_t klen,
                         const spans *from, const spans *other) {
    char **av = calloc(from->n + 2, sizeof *av);
    size_t *al = calloc(from->n + 2, sizeof *al);
    if (!av || !al) abort();
    int argc = 2;
    av[0] = (char *)cmd, al[0] = strlen(cmd);
    av[1] = key, al[1] = klen;
    for (size_t i = 0; i < from->n; i++) {
        if (other && member_in(&from->v[i], other)) continue;
        size_t l = line_len(from->v[i].p, from->v[i].len);
        av[argc] = (char *)from->v[i].p + l;
        al[argc++] = (size_t)strtoll(from->v[i].p + 1, NULL, 10);
    }
    if (argc > 2) fake_only(r, c, argc, av, al);
    free(av);
    free(al);
}

/* After a SPOP that removed different random members on the two sides: makes the fake's
 * set hold the real one's members again, so the runs do not drift apart.  Redis 7.0 pops
 * one member, or a count of them one by one, from the set itself, which keeps its
 * encoding and its intset width (as wide as its widest member ever): then the fake's set
 * is mended in place, the members it popped instead added back and those the real server
 * popped removed.  A count that leaves few members (remaining * 5 <= count) makes Redis
 * build a new set of the members left: then the fake's is rebuilt the same way (DEL,
 * SADD of the real members, PEXPIREAT of the real deadline), an intset again when they
 * are all integers.  size is the set's size before the SPOP.  Returns 0, or -1 when the
 * probe connection failed. */
static int resync_set(runner *r, const step *s, long long size) {
    client_state *c = &r->cl[s->client];
    char *key = s->argv[s->key_arg];
    size_t klen = s->lens[s->key_arg];
    char *argv[2] = {"SMEMBERS", key};
    size_t lens[2] = {8, klen};
    if (probe_call(r, 2, argv, lens) != 0) return -1;
    rh_buf members = {0};
    rh_buf_append(&members, r->scratch.data, r->scratch.len);
    spans real = {0};
    set_members(&members, &real);

    int rebuild = s->has_count && s->count < size && (size - s->count) * 5 <= s->count;
    if (rebuild) {
        argv[0] = "PEXPIRETIME", lens[0] = 11;
        if (probe_call(r, 2, argv, lens) != 0) {
            free(real.v);
            rh_buf_free(&members);
            return -1;
        }
        long long deadline = -1;
        reply_integer(r->scratch.data, r->scratch.len, &deadline);
        argv[0] = "DEL", lens[0] = 3;
        fake_only(r, c, 2, argv, lens);
        fake_members(r, c, "SADD", key, klen, &real, NULL);
        if (real.n && deadline >= 0) {
            char when[32];
            snprintf(when, sizeof when, "%lld", deadline);
            char *pv[] = {"PEXPIREAT", key, when};
            size_t pl[] = {9, klen, strlen(when)};
            fake_only(r, c, 3, pv, pl);
        }
    } else {
        size_t olen;
        const char *p = fr_exec_resp(c->fake, 2, (const char *const *)argv, lens, &olen);
        rh_buf mine = {0};
        rh_buf_append(&mine, p, olen);
        spans fake = {0};
        set_members(&mine, &fake);
        fake_members(r, c, "SADD", key, klen, &real, &fake); /* first: never empty it */
        fake_members(r, c, "SREM", key, klen, &fake, &real);
        free(fake.v);
        rh_buf_free(&mine);
    }
    free(real.v);
    rh_buf_free(&members);
    return 0;
}

/* After a SORT ... STORE whose list may hold tied elements in another order on each side
 * (sort_ambiguous): the fake's destination is rebuilt from the real one (fake-only DEL
 * and RPUSH; SORT leaves no TTL), so the runs stay in step. */
static int resync_sort(runner *r, const step *s, int dst) {
    client_state *c = &r->cl[s->client];
    char *key = s->argv[dst];
    size_t klen = s->lens[dst];
    char *argv[4] = {"LRANGE", key, "0", "-1"};
    size_t lens[4] = {6, klen, 1, 2};
    if (probe_call(r, 4, argv, lens) != 0) return -1;
    rh_buf items = {0};
    rh_buf_append(&items, r->scratch.data, r->scratch.len);
    argv[0] = "DEL", lens[0] = 3;
    fake_only(r, c, 2, argv, lens);
    spans m = {0};
    if (split_array(items.data, items.len, &m) > 0) {
        int argc = 2 + (int)m.n;
        char **av = calloc((size_t)argc, sizeof *av);
        size_t *al = calloc((size_t)argc, sizeof *al);
        if (!av || !al) abort();
        av[0] = "RPUSH", al[0] = 5;
        av[1] = key, al[1] = klen;
        for (size_t i = 0; i < m.n; i++) {
            size_t l = line_len(m.v[i].p, m.v[i].len);
            av[2 + i] = (char *)m.v[i].p + l;
            al[2 + i] = (size_t)strtoll(m.v[i].p + 1, NULL, 10);
        }
        fake_only(r, c, argc, av, al);
        free(av);
        free(al);
    }
    free(m.v);
    rh_buf_free(&items);
    return 0;
}

/* Connects client i on both sides, as a new connection.  0, or -1. */
static int connect_client(runner *r, int i) {
    client_state *c = &r->cl[i];
    c->real = rh_connect(r->real);
    c->fake = fr_client_new(r->fake);
    c->db = 0;
    c->in_multi = 0;
    c->qn = 0;
    return c->real && c->fake ? 0 : -1;
}

/* Drops client i on both sides (its MULTI state and WATCHes go with it). */
static void disconnect_client(runner *r, int i) {
    client_state *c = &r->cl[i];
    ds_close_pair(&c->real, &c->fake);
    c->in_multi = 0;
    c->qn = 0;
}

/* Follows what the command did to the client's state (database, MULTI) in the real
 * server's reply. */
static void track(runner *r, const step *s, cmp_mode mode) {
    client_state *c = &r->cl[s->client];
    const char *rep = r->real_reply.data;
    size_t len = r->real_reply.len;
    if (c->in_multi) {
        if (is_cmd(s, "exec")) {
            /* EXEC always ends the transaction; SELECTs inside it took effect. */
            spans sp = {0};
            if (split_array(rep, len, &sp) == (long)c->qn) {
                for (size_t i = 0; i < sp.n; i++)
                    if (c->q[i].select_db >= 0 && sp.v[i].len == 5 && !memcmp(sp.v[i].p, "+OK\r\n", 5))
                        c->db = c->q[i].select_db;
            }
            free(sp.v);
            c->in_multi = 0;
            c->qn = 0;
        } else if (is_cmd(s, "discard") && len == 5 && !memcmp(rep, "+OK", 3)) {
            c->in_multi = 0;
            c->qn = 0;
        } else if (len == 9 && !memcmp(rep, "+QUEUED\r\n", 9)) {
            if (c->qn == c->qcap) {
                c->qcap = c->qcap ? c->qcap * 2 : 16;
                c->q = realloc(c->q, c->qcap * sizeof *c->q);
                if (!c->q) abort();
            }
            queued *q = &c->q[c->qn++];
            q->mode = mode;
            q->pairs = s->pairs;
            q->tolerance = s->tolerance;
            q->select_db = is_cmd(s, "select") && s->argc == 2 ? atoi(s->argv[1]) : -1;
        }
        return;
    }
    if (is_cmd(s, "multi") && len == 5 && !memcmp(rep, "+OK\r\n", 5)) {
        c->in_multi = 1;
        c->qn = 0;
    } else if (is_cmd(s, "select") && s->argc == 2 && len == 5 && !memcmp(rep, "+OK\r\n", 5)) {
        c->db = atoi(s->argv[1]);
    }
}

/* Records the command in the history ring. */
static void remember(runner *r, const step *s, cmp_mode mode) {
    hist *h = &r->history[r->number % HISTORY];
    free(h->line);
    free(h->real);
    rh_buf line = {0}, rep = {0};
    script_line(&line, s, mode);
    size_t n = r->real_reply.len > 120 ? 120 : r->real_reply.len;
    ds_escape(r->real_reply.data, n, &rep);
    if (n < r->real_reply.len) rh_buf_append(&rep, "...", 3);
    h->number = r->number;
    h->line = line.data ? line.data : strdup("");
    h->real = rep.data ? rep.data : strdup("");
}

/* The options that shape the sequence, for the replay command line. */
typedef struct options_t {
    uint64_t seed;      /* first seed */
    long runs;          /* seeds seed .. seed+runs-1 */
    long commands;      /* commands per run */
    int verbose;
    int keep_going;     /* after a mismatch, go on with the next seed */
    int cluster;        /* one-node cluster on both sides */
    int list;           /* print the coverage and exit */
    const char *only;   /* comma-separated groups, or NULL */
    const char *skip;   /* comma-separated command names, or NULL */
    const char *emit;   /* write the executed commands as a diff script */
    long fault_at;      /* --inject-fault N: the fake's N-th command fails (self-test) */
    int events;         /* --events: compare keyspace notifications too */
    int default_config; /* --default-config: every seed under Redis's default parameters */
    const char *roundtrip; /* --roundtrip rdb: the seed's keyspace, made on the fake alone,
                              goes fake -> redis-server -> fake (roundtrip_seed) */
} options_t;

/* Prints the command line that replays the first k commands of seed. */
static void print_replay(const options_t *o, uint64_t seed, long k) {
    printf("replay: random_diff --seed %llu --commands %ld", (unsigned long long)seed, k);
    if (o->only) printf(" --only %s", o->only);
    if (o->skip) printf(" --skip %s", o->skip);
    if (o->cluster) printf(" --cluster");
    if (o->fault_at) printf(" --inject-fault %ld", o->fault_at);
    if (o->events) printf(" --events");
    if (o->default_config) printf(" --default-config");
    printf("\n");
}

/* --events: collects what the listeners received since the last call into r->ev_real and
 * r->ev_fake.  On the real side every message before the answer to a PING sent now (Redis
 * has published them before it answered the command), on the fake its push queue.  0, or
 * -1 when the real listener failed. */
static int take_events(runner *r) {
    rh_buf_reset(&r->ev_real);
    rh_buf_reset(&r->ev_fake);
    size_t n;
    const char *p = fr_client_push_resp(r->listen_fake, &n);
    rh_buf_append(&r->ev_fake, p, n);
    fr_client_push_clear(r->listen_fake);
    char *ping[1] = {"PING"};
    static const char pong[] = "*2\r\n$4\r\npong\r\n$0\r\n\r\n";
    int rc = rh_send(r->listen_real, 1, ping, NULL);
    while (rc == 0 && (rc = rh_read_reply(r->listen_real, &r->scratch)) == 0) {
        if (r->scratch.len == sizeof(pong) - 1 && !memcmp(r->scratch.data, pong, r->scratch.len))
            break;
        rh_buf_append(&r->ev_real, r->scratch.data, r->scratch.len);
    }
    return rc;
}

/* --events: turns the classes on on both sides and subscribes the listeners.  0, or -1. */
static int start_events(runner *r) {
    char *cfg[] = {"CONFIG", "SET", "notify-keyspace-events", EVENTS_CLASSES};
    char *psub[] = {"PSUBSCRIBE", "__key*__:*"};
    if (probe_call(r, 4, cfg, NULL) != 0 ||
        fr_server_set_param(r->fake, "notify-keyspace-events", EVENTS_CLASSES) != 0)
        return -1;
    if (!(r->listen_real = rh_connect(r->real)) || !(r->listen_fake = fr_client_new(r->fake)))
        return -1;
    if (rh_send(r->listen_real, 2, psub, NULL) != 0 ||
        rh_read_reply(r->listen_real, &r->scratch) != 0)
        return -1;
    size_t n;
    fr_exec_resp(r->listen_fake, 2, (const char *const *)psub, NULL, &n);
    return 0;
}

/* ----- Parameters per seed --------------------------------------------------------------
 * The parameters that change what commands answer: the encoding thresholds (orders of
 * small hashes and sets, OBJECT ENCODING, MEMORY USAGE, SSCAN/HSCAN/ZSCAN pages) and the
 * stream node sizes (where MAXLEN ~ / MINID ~ may cut, XINFO STREAM's radix tree).  Each
 * seed draws its own values, from a generator of its own (so the commands drawn do not
 * change), each parameter keeping Redis's default (the first value) 60% of the time. */
typedef struct seed_param {
    const char *name;
    const char *values[6]; /* the default first; NULL-terminated */
} seed_param;
static const seed_param SEED_PARAMS[] = {
    {"hash-max-listpack-entries", {"512", "2", "8", "0", NULL}},
    {"hash-max-listpack-value", {"64", "3", "10", NULL}},
    {"set-max-intset-entries", {"512", "2", "10", NULL}},
    {"zset-max-listpack-entries", {"128", "2", "8", "0", NULL}},
    {"zset-max-listpack-value", {"64", "3", "10", NULL}},
    {"stream-node-max-entries", {"100", "1", "2", "5", "0", NULL}},
    {"stream-node-max-bytes", {"4096", "0", "60", "120", "400", NULL}},
};

/* The value of parameter i for seed (the default with --default-config). */
static const char *seed_config(const options_t *o, uint64_t seed, size_t i) {
    const seed_param *p = &SEED_PARAMS[i];
    if (o->default_config) return p->values[0];
    rng r = {seed * 0x9e3779b97f4a7c15ull + 0x632be59bd9b4e019ull + i};
    uint64_t x = rng_next(&r);
    if (x % 100 < 60) return p->values[0];
    size_t n = 0;
    while (p->values[n]) n++;
    return p->values[1 + (x >> 8) % (n - 1)];
}

/* The seed's parameters: every one set on the real server (the last seed's may linger),
 * the fake's only where they are not its defaults.  0, or -1. */
static int apply_seed_config(runner *r, const options_t *o, uint64_t seed) {
    int rc = 0;
    r->config_line[0] = '\0';
    for (size_t i = 0; i < NELEM(SEED_PARAMS) && rc == 0; i++) {
        const char *name = SEED_PARAMS[i].name, *v = seed_config(o, seed, i);
        char *set[] = {"CONFIG", "SET", (char *)name, (char *)v};
        if (probe_call(r, 4, set, NULL) != 0) rc = -1;
        if (v == SEED_PARAMS[i].values[0]) continue;
        if (fr_server_set_param(r->fake, name, v) != 0) {
            fprintf(stderr, "random_diff: the fake refuses %s %s\n", name, v);
            rc = -1;
        }
        size_t used = strlen(r->config_line);
        snprintf(r->config_line + used, sizeof(r->config_line) - used, " %s %s", name, v);
        if (r->emit) fprintf(r->emit, "!config %s %s\n", name, v);
    }
    return rc;
}

/* Keeps the payload of a DUMP reply (a bulk string), or nothing. */
static void keep_payload(rh_buf *dst, int in_multi, const rh_buf *reply) {
    rh_buf_reset(dst);
    if (in_multi || reply->len < 4 || reply->data[0] != '$' || reply->data[1] == '-') return;
    size_t l = line_len(reply->data, reply->len);
    size_t n = (size_t)strtoll(reply->data + 1, NULL, 10);
    if (l && l + n + 2 == reply->len) rh_buf_append(dst, reply->data + l, n);
}

/* Executes one step on both sides and compares.  Returns 1 when the replies matched, 0 on
 * a mismatch, 2 when the step was skipped (not run, not counted), -1 when the real server
 * cannot be reached any more. */
static int execute(runner *r, const options_t *o, uint64_t seed, step *s) {
    client_state *c = &r->cl[s->client];
    if (!c->real && connect_client(r, s->client) != 0) return -1;

    cmp_mode mode = s->mode;
    probe_info pi = {.size = -1};
    if (s->probe == PROBE_RANDPICK || s->probe == PROBE_SPOP) parse_count(s);
    int probed = 0;
    if (s->probe == PROBE_XADD_STAR) {
        int certain = 0;
        if (xadd_star_certain(r, s, c->db, &certain) != 0) return -1;
        if (!certain) {
            if (r->verbose) printf("-- skipped (XADD * would take its ID from the clock)\n");
            r->n_skipped++;
            return 2;
        }
    } else if (s->probe == PROBE_LEX) {
        /* A lex range over different scores walks Redis's skiplist, whose shape is random:
         * the answer is unspecified (Redis's documentation says so), so the command is
         * skipped, on both sides.  A listpack is scanned in order: deterministic. */
        if (run_probe(r, s, c->db, &pi) != 0) return -1;
        if (pi.mixed && !pi.ordered) {
            if (r->verbose) printf("-- skipped (a lex range over different scores)\n");
            r->n_skipped++;
            return 2;
        }
    } else if (s->probe != PROBE_NONE && !c->in_multi && !is_cmd(s, "exec")) {
        if (run_probe(r, s, c->db, &pi) != 0) return -1;
        mode = resolve(s, &pi);
        probed = 1;
    } else if (c->in_multi) {
        mode = blind_mode(s);
    }

    /* what the probes and resyncs published is not this command's */
    if (r->listen_real && take_events(r) != 0) return -1;

    r->number++;
    if (is_cmd(s, "eval") || is_cmd(s, "evalsha") || is_cmd(s, "eval_ro") ||
        is_cmd(s, "evalsha_ro") || is_cmd(s, "fcall") || is_cmd(s, "fcall_ro"))
        r->scripted = 1;
    /* RESTORE of the DUMP before it: each side gets its own payload (none inside MULTI,
     * where the DUMP only queued) */
    char *arg_saved = NULL;
    size_t len_saved = 0;
    if (s->payload_arg) {
        arg_saved = s->argv[s->payload_arg];
        len_saved = s->lens[s->payload_arg];
        s->argv[s->payload_arg] = c->in_multi ? "" : r->real_payload.data ? r->real_payload.data : "";
        s->lens[s->payload_arg] = c->in_multi ? 0 : r->real_payload.len;
    }
    int real_ok = rh_send(c->real, s->argc, s->argv, s->lens) == 0 &&
                  rh_read_reply(c->real, &r->real_reply) == 0;
    if (s->payload_arg) {
        s->argv[s->payload_arg] = c->in_multi ? "" : r->fake_payload.data ? r->fake_payload.data : "";
        s->lens[s->payload_arg] = c->in_multi ? 0 : r->fake_payload.len;
    }
    if (!real_ok) {
        rh_buf_reset(&r->real_reply);
        rh_buf_printf(&r->real_reply, "<no reply: %s>", rh_conn_error(c->real));
    }
    size_t flen = 0;
    const char *fp = fr_exec_resp(c->fake, s->argc, (const char *const *)s->argv, s->lens, &flen);
    rh_buf_reset(&r->fake_reply);
    rh_buf_append(&r->fake_reply, fp, flen);
    if (s->payload_arg) {
        s->argv[s->payload_arg] = arg_saved;
        s->lens[s->payload_arg] = len_saved;
    }
    if (s->keep_payload) {
        keep_payload(&r->real_payload, c->in_multi, &r->real_reply);
        keep_payload(&r->fake_payload, c->in_multi, &r->fake_reply);
    }

    int same;
    if (!real_ok) same = 0;
    else if (mode == CMP_EXEC && c->in_multi)
        same = compare_exec(c, r->real_reply.data, r->real_reply.len, r->fake_reply.data,
                            r->fake_reply.len, s);
    else
        same = compare(mode == CMP_EXEC ? CMP_EXACT : mode, r->real_reply.data, r->real_reply.len,
                       r->fake_reply.data, r->fake_reply.len, s, pi.ordered,
                       probed ? pi.size : -1);

    if (!same && real_ok && (mode == CMP_NEAR || mode == CMP_TIMES) && !c->in_multi) {
        /* A clock reading (these commands only read) that missed the tolerance may just
         * have been descheduled between the two servers: ask once more, the fake first
         * this time, and accept the answer if that pair agrees. */
        rh_buf real2 = {0}, fake2 = {0};
        fp = fr_exec_resp(c->fake, s->argc, (const char *const *)s->argv, s->lens, &flen);
        rh_buf_append(&fake2, fp, flen);
        if (rh_send(c->real, s->argc, s->argv, s->lens) == 0 && rh_read_reply(c->real, &real2) == 0 &&
            compare(mode, real2.data, real2.len, fake2.data, fake2.len, s, 0, -1)) {
            same = 1;
            if (r->verbose) printf("-- (a clock reading matched when asked again)\n");
        }
        rh_buf_free(&real2);
        rh_buf_free(&fake2);
    }

    int events_same = 1;
    if (r->listen_real && real_ok) {
        if (take_events(r) != 0) return -1;
        events_same = r->ev_real.len == r->ev_fake.len &&
                      (r->ev_fake.len == 0 ||
                       !memcmp(r->ev_real.data, r->ev_fake.data, r->ev_fake.len));
        same = same && events_same;
    }

    if (r->emit) {
        rh_buf line = {0};
        script_line(&line, s, mode);
        fprintf(r->emit, "%s\n", line.data);
        rh_buf_free(&line);
    }
    if (r->verbose || !same) {
        rh_buf line = {0};
        for (int i = 0; i < s->argc; i++) {
            if (i) rh_buf_append(&line, " ", 1);
            cli_quote(&line, s->argv[i], s->lens[i]);
        }
        if (!same) {
            printf("\nMISMATCH: seed %llu, command %ld (client %d): %s\n",
                   (unsigned long long)seed, r->number, s->client + 1, line.data);
            printf("  compared %s\n", mode_name(mode));
            if (r->config_line[0]) printf("  parameters:%s\n", r->config_line);
        } else {
            printf("%ld <%d> %s\n", r->number, s->client + 1, line.data);
        }
        show("real", r->real_reply.data, r->real_reply.len);
        show("fake", r->fake_reply.data, r->fake_reply.len);
        if (!events_same || (r->verbose && r->ev_real.len)) {
            if (!events_same) printf("  the keyspace notifications differ:\n");
            show("real events", r->ev_real.data, r->ev_real.len);
            show("fake events", r->ev_fake.data, r->ev_fake.len);
        }
        if (!same) {
            if (r->final_check)
                printf("  (in the keyspace check after the run's last command)\n");
            print_replay(o, seed, r->final_check ? r->run_length : r->number);
            printf("the commands before it (diff-script format, oldest first):\n");
            long first = r->number - HISTORY > 1 ? r->number - HISTORY : 1;
            for (long k = first; k < r->number; k++) {
                hist *h = &r->history[k % HISTORY];
                printf("  %-60s # %ld -> %s\n", h->line, h->number, h->real);
            }
            rh_buf l2 = {0};
            script_line(&l2, s, mode);
            printf("  %-60s # %ld <-- MISMATCH\n", l2.data, r->number);
            rh_buf_free(&l2);
        }
        rh_buf_free(&line);
    }

    if (!real_ok) return -1;
    if (r->real_reply.data[0] == '-') {
        r->n_error++;
        if (r->real_reply.len > 10 && !memcmp(r->real_reply.data, "-WRONGTYPE", 10)) r->n_wrongtype++;
    } else if (mode != CMP_EXACT && !(mode == CMP_EXEC && !c->in_multi)) {
        r->n_relaxed++;
    }
    if (same && s->probe == PROBE_SPOP && probed && mode != CMP_EXACT &&
        r->real_reply.data[0] != '-' && resync_set(r, s, pi.size) != 0)
        return -1;
    if (same && s->probe == PROBE_SORT && probed && r->real_reply.data[0] == ':') {
        sort_shape sh = sort_parse(s);
        if (sh.store && sort_ambiguous(&sh, pi.kind, pi.ordered) && resync_sort(r, s, sh.store) != 0)
            return -1;
    }
    track(r, s, mode);
    remember(r, s, mode);
    if (is_cmd(s, "quit") && r->real_reply.len == 5 && !memcmp(r->real_reply.data, "+OK\r\n", 5)) {
        /* Redis closes the connection: reconnect on both sides, as a new connection. */
        disconnect_client(r, s->client);
        if (connect_client(r, s->client) != 0) return -1;
    }
    return same;
}

/* ======================================================================================
 * Setup: which generators are live, the runs, the command line.
 * ==================================================================================== */

static int in_list(const char *list, const char *name) {
    if (!list) return 0;
    size_t n = strlen(name);
    const char *p = list;
    while (*p) {
        const char *e = strchr(p, ',');
        size_t l = e ? (size_t)(e - p) : strlen(p);
        if (l == n && !strncasecmp(p, name, n)) return 1;
        if (!e) break;
        p = e + 1;
    }
    return 0;
}

/* Fills g->live from the fake's command table.  Returns the number of fake commands with
 * no generator (listed on stderr when warn). */
static int build_live(gen *g, const options_t *o, int warn) {
    int missing = 0;
    size_t n = fr_command_count();
    g->live = calloc(n, sizeof *g->live);
    g->groups = calloc(n, sizeof *g->groups);
    if (!g->live || !g->groups) abort();
    for (size_t i = 0; i < n; i++) {
        const fr_command_info *info = fr_command_at(i);
        /* The row is only valid until the next call: copy what we keep. */
        char *name = strdup(info->name), *group = strdup(info->group);
        if (!name || !group) abort();
        const gen_entry *e = NULL;
        for (size_t j = 0; j < NELEM(GENERATORS); j++)
            if (!strcmp(GENERATORS[j].name, name)) e = &GENERATORS[j];
        if (!e) {
            if (warn) fprintf(stderr, "random_diff: no generator for '%s': not tested\n", name);
            missing++;
        } else if ((!o->only || in_list(o->only, group)) && !in_list(o->skip, name)) {
            g->live[g->nlive].e = e;
            g->live[g->nlive].group = group;
            g->nlive++;
            size_t k = 0;
            while (k < g->ngroups && strcmp(g->groups[k], group)) k++;
            if (k == g->ngroups) g->groups[g->ngroups++] = group;
            free(name);
            continue;
        }
        free(name);
        free(group);
    }
    return missing;
}

/* --list: the commands that would be drawn, by group. */
static void list_coverage(const gen *g) {
    printf("commands drawn (the fake's table, by group):\n");
    for (size_t k = 0; k < g->ngroups; k++) {
        printf("  %-13s", g->groups[k]);
        for (size_t i = 0; i < g->nlive; i++)
            if (!strcmp(g->live[i].group, g->groups[k])) printf(" %s", g->live[i].e->name);
        printf("\n");
    }
}

static int final_check(runner *r, const options_t *o, uint64_t seed, long *passed, long *failed);

/* ----- Round trips of the keyspace through redis-server ----------------------------------
 * --roundtrip rdb: each seed's commands run on the fake alone (its clock virtual, a day
 * ahead of the real one, so nothing the fake keeps has expired for redis-server), then its
 * keyspace goes as an RDB file to redis-server (DEBUG RELOAD NOSAVE reads it), redis-server
 * writes it back (SAVE), and a fake on the same clock reads that: its canonical dump must
 * be byte for byte the dump of a fake that read the first file, and redis-server's DEBUG
 * DIGEST of what it loaded must be the fake's (fr_debug_digest) of the same file, so that
 * the digest is checked over every keyspace the generator makes.  (Loading decides
 * encodings, and a skiplist small enough becomes a listpack, which keeps no -0: a score
 * of -0 comes back 0 from any load, Redis's own DEBUG RELOAD included.  Both sides of the
 * comparison have been through one load.) */

/* The seed's commands on the fake alone: no probe, nothing skipped, the DUMP payloads the
 * fake's own. */
static void run_fake_only(runner *r, gen *g, const options_t *o, uint64_t seed) {
    fr_client *cl[MAX_CLIENTS];
    for (int i = 0; i < MAX_CLIENTS; i++) cl[i] = fr_client_new(r->fake);
    g->r.s = seed;
    g->cluster = o->cluster;
    for (long n = 0; n < o->commands;) {
        if (g->qlen == 0) gen_action(g);
        step *st = &g->queue[g->qhead];
        char *saved = NULL;
        size_t saved_len = 0;
        if (st->payload_arg) {
            saved = st->argv[st->payload_arg];
            saved_len = st->lens[st->payload_arg];
            st->argv[st->payload_arg] = r->fake_payload.data ? r->fake_payload.data : "";
            st->lens[st->payload_arg] = r->fake_payload.len;
        }
        size_t len = 0;
        const char *rp = fr_exec_resp(cl[st->client], st->argc, (const char *const *)st->argv,
                                      st->lens, &len);
        rh_buf_reset(&r->fake_reply);
        rh_buf_append(&r->fake_reply, rp, len);
        if (st->payload_arg) {
            st->argv[st->payload_arg] = saved;
            st->lens[st->payload_arg] = saved_len;
        }
        if (st->keep_payload)
            keep_payload(&r->fake_payload, fr_client_in_multi(cl[st->client]), &r->fake_reply);
        if (is_cmd(st, "quit") && len == 5 && !memcmp(rp, "+OK\r\n", 5)) {
            fr_client_free(cl[st->client]);
            cl[st->client] = fr_client_new(r->fake);
        }
        step_free(st);
        g->qhead++;
        g->qlen--;
        n++;
    }
    while (g->qlen) {
        step_free(&g->queue[g->qhead++]);
        g->qlen--;
    }
    g->qhead = 0;
}

/* Prints where two dumps first differ. */
static void show_dump_difference(const char *a, const char *b) {
    size_t i = 0, line = 1, start = 0;
    while (a[i] && a[i] == b[i]) {
        if (a[i] == '\n') {
            line++;
            start = i + 1;
        }
        i++;
    }
    printf("  they differ at line %zu:\n  before: %.200s\n  after:  %.200s\n", line, a + start,
           b + start);
}

/* A fake at clock with the seed's parameters (loading decides encodings by them) that
 * read the RDB file at path; NULL (said) when it refused it. */
static fr_server *loaded_fake(const options_t *o, uint64_t seed, int64_t clock, const char *path) {
    fr_config cfg = fr_config_default();
    cfg.start_ms = clock;
    fr_server *f = fr_server_new(&cfg);
    if (!f) return NULL;
    for (size_t i = 0; i < NELEM(SEED_PARAMS); i++)
        fr_server_set_param(f, SEED_PARAMS[i].name, seed_config(o, seed, i));
    fr_load_report rep;
    if (fr_rdb_load_file(f, path, 0, &rep) != 0) {
        printf("  %s\n", rep.error);
        fr_server_free(f);
        return NULL;
    }
    return f;
}

/* One seed's round trip.  1 when the dumps are the same, 0 when not, -1 when redis-server
 * is not reachable. */
static int roundtrip_seed(runner *r, gen *g, const options_t *o, uint64_t seed, int64_t clock) {
    fr_config cfg = fr_config_default();
    cfg.start_ms = clock;
    r->fake = fr_server_new(&cfg);
    if (!r->fake) return -1;
    rh_buf_reset(&r->fake_payload);
    char *flush[] = {"FLUSHALL"};
    if (probe_call(r, 1, flush, NULL) != 0 || apply_seed_config(r, o, seed) != 0) return -1;
    run_fake_only(r, g, o, seed);
    int same = 0;
    char path[400];
    snprintf(path, sizeof(path), "%s/dump.rdb", r->real->dir);
    char *before = NULL, *after = NULL;
    fr_server *back = NULL, *self = NULL;
    if (fr_rdb_save_file(r->fake, path, NULL) != 0) {
        printf("\nseed %llu: the fake could not save %s\n", (unsigned long long)seed, path);
        goto out;
    }
    /* the fake's own file read back: one side of the comparison */
    if (!(self = loaded_fake(o, seed, fr_clock_now(r->fake), path)) ||
        !(before = fr_dump(self, NULL))) {
        printf("\nseed %llu: the fake refused its own file\n", (unsigned long long)seed);
        goto out;
    }
    char *reload[] = {"DEBUG", "RELOAD", "NOSAVE"};
    char *save[] = {"SAVE"};
    if (probe_call(r, 3, reload, NULL) != 0) return -1;
    if (strcmp(r->scratch.data, "+OK\r\n")) {
        printf("\nseed %llu: redis-server did not load the fake's file: %s\n",
               (unsigned long long)seed, r->scratch.data);
        rh_print_log_tail(r->real, 20);
        goto out;
    }
    /* DEBUG DIGEST: redis-server's signature of what it loaded against the fake's of the
     * same file (both through one load, see above) */
    char *digest[] = {"DEBUG", "DIGEST"};
    if (probe_call(r, 2, digest, NULL) != 0) return -1;
    char mine[41], want[48];
    fr_debug_digest(self, mine);
    snprintf(want, sizeof(want), "+%s\r\n", mine);
    if (strcmp(r->scratch.data, want)) {
        printf("\nMISMATCH: seed %llu: DEBUG DIGEST: redis-server %.*s, the fake +%s\n",
               (unsigned long long)seed, (int)strcspn(r->scratch.data, "\r"), r->scratch.data,
               mine);
        printf("replay: random_diff --roundtrip %s --seed %llu --commands %ld\n", o->roundtrip,
               (unsigned long long)seed, o->commands);
        goto out;
    }
    if (probe_call(r, 1, save, NULL) != 0) return -1;
    if (!(back = loaded_fake(o, seed, fr_clock_now(r->fake), path))) {
        printf("\nseed %llu: the fake refused redis-server's file\n", (unsigned long long)seed);
        goto out;
    }
    after = fr_dump(back, NULL);
    same = after && !strcmp(before, after);
    if (!same) {
        printf("\nMISMATCH: seed %llu: the keyspace changed on its way through redis-server\n",
               (unsigned long long)seed);
        if (r->config_line[0]) printf("  parameters:%s\n", r->config_line);
        if (after) show_dump_difference(before, after);
        printf("replay: random_diff --roundtrip %s --seed %llu --commands %ld\n", o->roundtrip,
               (unsigned long long)seed, o->commands);
    }
out:
    free(before);
    free(after);
    fr_server_free(back);
    fr_server_free(self);
    fr_server_free(r->fake);
    r->fake = NULL;
    return same;
}

/* ----- --roundtrip aof ------------------------------------------------------------------
 * Each seed's commands run on the fake alone with its propagation hook writing what a
 * fakeredis-server would write to its AOF (the fake's clock virtual and 500 s behind the
 * real one: no key the fake keeps expires for redis-server, whose replay times the
 * fake's are not ahead of).  A redis-server started on those files (a base RDB file of
 * the empty keyspace, the incremental file, the manifest) loads them and rewrites them
 * (BGREWRITEAOF, aof-use-rdb-preamble no); a fake on the fake's clock loads that rewrite,
 * and its canonical dump must be byte for byte the dump of a fake that loaded the fake's
 * own files, rewrote them itself (fr_aof_rewrite) and loaded that.  Both sides have been
 * through the same steps because an AOF does not carry everything, in Redis 7.0 as here:
 * replaying it stamps a consumer's seen time with the replay's clock, XCLAIM does not
 * carry entries-read, and a rewrite builds every value anew (a small skiplist becomes a
 * listpack and loses its -0 scores).  Sorted sets' -0 scores are compared as 0
 * (zero_negative_zeros): which survive a rewrite depends on Redis's hash order.  The
 * redis-server gets the seed's parameters (encodings decide what a value keeps).
 * RANDOM_DIFF_AOF_OUT=FILE keeps the incremental file (and the dumps of a mismatch). */

typedef struct aof_capture {
    rh_buf buf; /* the incremental file's bytes */
    int db;     /* the database the file is at, -1 at first */
} aof_capture;

static void capture_feed(void *ctx, int db, int argc, const char *const *argv,
                         const size_t *lens) {
    aof_capture *cap = ctx;
    if (db != cap->db) {
        rh_buf_printf(&cap->buf, "*2\r\n$6\r\nSELECT\r\n$%d\r\n%d\r\n", db > 9 ? 2 : 1, db);
        cap->db = db;
    }
    rh_buf_printf(&cap->buf, "*%d\r\n", argc);
    for (int i = 0; i < argc; i++) {
        rh_buf_printf(&cap->buf, "$%zu\r\n", lens[i]);
        rh_buf_append(&cap->buf, argv[i], lens[i]);
        rh_buf_append(&cap->buf, "\r\n", 2);
    }
}

/* A multi-part AOF's files. */
typedef struct aof_files {
    const char *base; /* an RDB file */
    size_t base_len;
    const char *incr;
    size_t incr_len;
} aof_files;

static void write_file(const char *path, const void *p, size_t n) {
    FILE *f = fopen(path, "wb");
    if (!f || fwrite(p, 1, n, f) != n) abort();
    fclose(f);
}

/* rh_options.prepare: the fake's files in the server's appendonlydir. */
static void put_fake_aof(const char *dir, void *arg) {
    const aof_files *af = arg;
    char path[600];
    snprintf(path, sizeof path, "%s/appendonlydir", dir);
    mkdir(path, 0755);
    snprintf(path, sizeof path, "%s/appendonlydir/appendonly.aof.1.base.rdb", dir);
    write_file(path, af->base, af->base_len);
    snprintf(path, sizeof path, "%s/appendonlydir/appendonly.aof.1.incr.aof", dir);
    write_file(path, af->incr, af->incr_len);
    const char *manifest = "file appendonly.aof.1.base.rdb seq 1 type b\n"
                           "file appendonly.aof.1.incr.aof seq 1 type i\n";
    snprintf(path, sizeof path, "%s/appendonlydir/appendonly.aof.manifest", dir);
    write_file(path, manifest, strlen(manifest));
}

/* A fake at clock with the seed's parameters that loaded the files named in order (each
 * as the fake reads an AOF file); NULL (said) when it refused one. */
static fr_server *aof_loaded_fake(const options_t *o, uint64_t seed, int64_t clock, int n,
                                  const char *const *bytes, const size_t *lens,
                                  const char *const *names) {
    fr_config cfg = fr_config_default();
    cfg.start_ms = clock;
    fr_server *f = fr_server_new(&cfg);
    if (!f) return NULL;
    for (size_t i = 0; i < NELEM(SEED_PARAMS); i++)
        fr_server_set_param(f, SEED_PARAMS[i].name, seed_config(o, seed, i));
    for (int i = 0; i < n; i++) {
        fr_aof_report rep;
        if (fr_aof_load(f, bytes[i], lens[i], names[i], 0, &rep) != 0) {
            printf("  %s: %s\n", names[i], rep.error);
            fr_server_free(f);
            return NULL;
        }
    }
    return f;
}

/* The files redis-server's manifest names, read from its directory, into a fake. */
static fr_server *load_redis_aof(const options_t *o, uint64_t seed, int64_t clock,
                                 const char *dir) {
    char path[700], line[600];
    snprintf(path, sizeof path, "%s/appendonlydir/appendonly.aof.manifest", dir);
    FILE *m = fopen(path, "r");
    if (!m) return NULL;
    char *names[8], *bytes[8];
    size_t lens[8];
    int n = 0;
    while (n < 8 && fgets(line, sizeof line, m)) {
        char name[512], type;
        long long seq;
        if (sscanf(line, "file %511s seq %lld type %c", name, &seq, &type) != 3 || type == 'h')
            continue;
        snprintf(path, sizeof path, "%s/appendonlydir/%s", dir, name);
        FILE *f = fopen(path, "rb");
        if (!f) continue;
        rh_buf b = {0};
        char chunk[65536];
        size_t r;
        while ((r = fread(chunk, 1, sizeof chunk, f)) > 0) rh_buf_append(&b, chunk, r);
        fclose(f);
        names[n] = strdup(name);
        bytes[n] = b.data ? b.data : strdup("");
        lens[n] = b.len;
        n++;
    }
    fclose(m);
    fr_server *f = aof_loaded_fake(o, seed, clock, n, (const char *const *)bytes, lens,
                                   (const char *const *)names);
    for (int i = 0; i < n; i++) {
        free(names[i]);
        free(bytes[i]);
    }
    return f;
}

/* A sorted set's -0 scores written 0, in place (lines "  <member> -0" under a "<key>
 * zset" line): whether a rewrite keeps a -0 depends on the order it writes the members
 * in, which is Redis's hash table order for a skiplist.  ZADD makes a listpack, which
 * stores -0 as 0, until a member too long or too many makes it a skiplist, which keeps
 * the -0 of the members added after that. */
static void zero_negative_zeros(char *dump) {
    int in_zset = 0;
    for (char *line = dump; *line;) {
        char *end = strchr(line, '\n');
        size_t len = end ? (size_t)(end - line) : strlen(line);
        if (line[0] != ' ') {
            in_zset = 0;
            for (size_t i = 1; i + 6 <= len && !in_zset; i++)
                in_zset = !memcmp(line + i, "\" zset", 6) && line[i - 1] != '\\' &&
                          (i + 6 == len || line[i + 6] == ' ');
        } else if (in_zset && len >= 3 && !memcmp(line + len - 3, " -0", 3)) {
            memmove(line + len - 2, line + len - 1, strlen(line + len - 1) + 1);
            len--;
            if (end) end--;
        }
        if (!end) break;
        line = end + 1;
    }
}

/* One seed's AOF round trip: 1 the same dumps, 0 not, -1 when redis-server would not
 * start or rewrite. */
static int roundtrip_aof_seed(runner *r, gen *g, const options_t *o, uint64_t seed,
                              int64_t clock) {
    fr_config cfg = fr_config_default();
    cfg.start_ms = clock;
    r->fake = fr_server_new(&cfg);
    if (!r->fake) return -1;
    for (size_t i = 0; i < NELEM(SEED_PARAMS); i++)
        fr_server_set_param(r->fake, SEED_PARAMS[i].name, seed_config(o, seed, i));
    fr_rdb_options bo = {-1, 0, 1};
    size_t base_len;
    char *base = fr_rdb_save(r->fake, &bo, &base_len); /* the empty keyspace's base */
    aof_capture cap = {{0}, -1};
    fr_server_set_propagate_hook(r->fake, capture_feed, &cap);
    rh_buf_reset(&r->fake_payload);
    run_fake_only(r, g, o, seed);
    int same = -1;
    char *before = NULL, *after = NULL;
    fr_server *mine = NULL, *back = NULL;
    rh_server *redis = NULL;
    aof_files af = {base, base_len, cap.buf.data ? cap.buf.data : "", cap.buf.len};
    if (getenv("RANDOM_DIFF_AOF_OUT")) /* the incremental file, to look at a mismatch */
        write_file(getenv("RANDOM_DIFF_AOF_OUT"), af.incr, af.incr_len);
    const char *bytes[2] = {af.base, af.incr};
    size_t lens[2] = {af.base_len, af.incr_len};
    const char *names[2] = {"appendonly.aof.1.base.rdb", "appendonly.aof.1.incr.aof"};
    if (!(mine = aof_loaded_fake(o, seed, clock, 2, bytes, lens, names))) {
        printf("\nseed %llu: the fake refused its own AOF\n", (unsigned long long)seed);
        same = 0;
        goto out;
    }
    {
        /* the fake's own rewrite of what it loaded, loaded again */
        size_t rw_len;
        char *rw = fr_aof_rewrite(mine, &rw_len);
        const char *rwb[1] = {rw};
        const char *rwn[1] = {"appendonly.aof.2.base.aof"};
        fr_server *again = rw ? aof_loaded_fake(o, seed, clock, 1, rwb, &rw_len, rwn) : NULL;
        free(rw);
        if (!again) {
            printf("\nseed %llu: the fake refused its own rewrite\n", (unsigned long long)seed);
            same = 0;
            goto out;
        }
        fr_server_free(mine);
        mine = again;
    }
    before = fr_dump(mine, NULL);
    /* redis-server with the seed's parameters too: a value's encoding decides what it
     * keeps (a listpack's score is 0 where a skiplist's is -0) */
    char flags[NELEM(SEED_PARAMS)][64];
    const char *extra[4 + 2 * NELEM(SEED_PARAMS) + 1] = {"--appendonly", "yes",
                                                         "--aof-use-rdb-preamble", "no"};
    for (size_t i = 0; i < NELEM(SEED_PARAMS); i++) {
        snprintf(flags[i], sizeof flags[i], "--%s", SEED_PARAMS[i].name);
        extra[4 + 2 * i] = flags[i];
        extra[5 + 2 * i] = seed_config(o, seed, i);
    }
    rh_options ropt = {0};
    ropt.quiet = 1;
    ropt.extra_args = extra;
    ropt.prepare = put_fake_aof;
    ropt.prepare_arg = &af;
    if (!(redis = rh_start(&ropt))) {
        printf("\nseed %llu: redis-server did not load the fake's AOF\n", (unsigned long long)seed);
        goto out;
    }
    rh_conn *rc = rh_connect(redis);
    rh_buf reply = {0};
    int done = 0;
    if (rc && rh_call(rc, &reply, "BGREWRITEAOF", NULL) == 0) {
        for (int i = 0; i < 400 && !done; i++) {
            if (rh_call(rc, &reply, "INFO", "persistence", NULL) != 0) break;
            done = strstr(reply.data, "aof_rewrite_in_progress:0\r\n") &&
                   strstr(reply.data, "aof_rewrites:1\r\n");
            if (!done) nanosleep(&(struct timespec){0, 10000000}, NULL);
        }
    }
    rh_buf_free(&reply);
    rh_close(rc);
    if (!done) {
        printf("\nseed %llu: redis-server did not rewrite its AOF\n", (unsigned long long)seed);
        rh_print_log_tail(redis, 20);
        goto out;
    }
    if (!(back = load_redis_aof(o, seed, clock, redis->dir))) {
        printf("\nseed %llu: the fake refused redis-server's rewrite\n", (unsigned long long)seed);
        same = 0;
        goto out;
    }
    after = fr_dump(back, NULL);
    if (before) zero_negative_zeros(before);
    if (after) zero_negative_zeros(after);
    same = before && after && !strcmp(before, after);
    if (!same) {
        printf("\nMISMATCH: seed %llu: the keyspace changed on its way through redis-server's AOF\n",
               (unsigned long long)seed);
        if (before && after) show_dump_difference(before, after);
        if (before && after && getenv("RANDOM_DIFF_AOF_OUT")) {
            char path[600];
            snprintf(path, sizeof path, "%s.before", getenv("RANDOM_DIFF_AOF_OUT"));
            write_file(path, before, strlen(before));
            snprintf(path, sizeof path, "%s.after", getenv("RANDOM_DIFF_AOF_OUT"));
            write_file(path, after, strlen(after));
        }
        printf("replay: random_diff --roundtrip aof --seed %llu --commands %ld\n",
               (unsigned long long)seed, o->commands);
    }
out:
    rh_stop(redis);
    free(base);
    rh_buf_free(&cap.buf);
    free(before);
    free(after);
    fr_server_free(mine);
    fr_server_free(back);
    fr_server_free(r->fake);
    r->fake = NULL;
    return same;
}

/* One run (one seed): fresh fake, FLUSHALL on the real server, fresh connections.
 * Adds to *passed and *failed; returns 0, or -1 when the real server is gone. */
static int run_seed(runner *r, gen *g, const options_t *o, uint64_t seed, long *passed,
                    long *failed) {
    fr_config cfg = fr_config_default();
    cfg.cluster_enabled = o->cluster;
    r->fake = fr_server_new(&cfg);
    if (!r->fake) {
        fprintf(stderr, "random_diff: fr_server_new failed\n");
        return -1;
    }
    fr_clock_use_wall(r->fake, 1);
    if (o->fault_at > 0) fr_fault_nth(r->fake, (uint64_t)o->fault_at, "ERR injected by random_diff");
    r->number = 0;
    r->scripted = 0;
    for (int i = 0; i < HISTORY; i++) {
        free(r->history[i].line);
        free(r->history[i].real);
        r->history[i].line = r->history[i].real = NULL;
    }
    int rc = 0;
    char *flush[] = {"FLUSHALL"};
    if (probe_call(r, 1, flush, NULL) != 0) rc = -1;
    /* scripts and functions outlive FLUSHALL: a fresh fake has none, nor must the server */
    char *sflush[] = {"SCRIPT", "FLUSH"};
    char *fflush[] = {"FUNCTION", "FLUSH"};
    if (rc == 0 && probe_call(r, 2, sflush, NULL) != 0) rc = -1;
    if (rc == 0 && probe_call(r, 2, fflush, NULL) != 0) rc = -1;
    /* so do ACL users and the ACL log (g_acl_setuser's users, AUTH's failures) */
    char *deluser[] = {"ACL", "DELUSER", "u1", "u2", "u3"};
    char *logreset[] = {"ACL", "LOG", "RESET"};
    if (rc == 0 && probe_call(r, 5, deluser, NULL) != 0) rc = -1;
    if (rc == 0 && probe_call(r, 3, logreset, NULL) != 0) rc = -1;
    char *sel[] = {"SELECT", "0"};
    if (!o->cluster && rc == 0 && probe_call(r, 2, sel, NULL) != 0) rc = -1;
    r->probe_db = 0;
    for (int i = 0; i < MAX_CLIENTS && rc == 0; i++)
        if (connect_client(r, i) != 0) rc = -1;
    if (rc == 0 && o->events && start_events(r) != 0) {
        fprintf(stderr, "random_diff: cannot start the notification listeners\n");
        rc = -1;
    }
    if (r->emit) fprintf(r->emit, "# random_diff --seed %llu\n", (unsigned long long)seed);
    if (rc == 0 && apply_seed_config(r, o, seed) != 0) rc = -1;

    g->r.s = seed;
    g->cluster = o->cluster;
    int mismatch = 0;
    while (rc == 0 && r->number < o->commands) {
        if (g->qlen == 0) gen_action(g);
        step *s = &g->queue[g->qhead];
        int res = execute(r, o, seed, s);
        step_free(s);
        g->qhead++;
        g->qlen--;
        if (res == 2) {
            /* skipped: not a command of the run */
        } else if (res < 0) {
            (*failed)++;
            rc = -1;
        } else if (res == 0) {
            (*failed)++;
            mismatch = 1;
            break;
        } else {
            (*passed)++;
        }
    }
    if (rc == 0 && !mismatch && final_check(r, o, seed, passed, failed) < 0) rc = -1;
    while (g->qlen) {
        step_free(&g->queue[g->qhead++]);
        g->qlen--;
    }
    g->qhead = 0;
    for (int i = 0; i < MAX_CLIENTS; i++) disconnect_client(r, i);
    if (r->listen_real) {
        /* the next run's FLUSHALL must not publish to a listener nobody reads */
        char *off[] = {"CONFIG", "SET", "notify-keyspace-events", ""};
        rh_close(r->listen_real);
        r->listen_real = NULL;
        if (probe_call(r, 4, off, NULL) != 0) rc = -1;
    }
    r->listen_fake = NULL; /* freed with its server */
    fr_server_free(r->fake);
    r->fake = NULL;
    return rc;
}

/* Runs one command of the final check: words[0..n) (the key, if any, is words[key] with
 * length klen; other words are NUL-terminated), compared by mode (with probe).  Returns 1
 * when it matched, 0 on a mismatch, -1 when the real server is gone. */
static int check_cmd(runner *r, const options_t *o, uint64_t seed, long *passed, long *failed,
                     cmp_mode mode, probe_kind probe, int n, const char *const *words, int key,
                     size_t klen) {
    step s;
    memset(&s, 0, sizeof s);
    s.cap = n;
    s.argv = calloc((size_t)n, sizeof *s.argv);
    s.lens = calloc((size_t)n, sizeof *s.lens);
    if (!s.argv || !s.lens) abort();
    for (int i = 0; i < n; i++) {
        size_t len = i == key ? klen : strlen(words[i]);
        s.argv[i] = malloc(len + 1);
        if (!s.argv[i]) abort();
        memcpy(s.argv[i], words[i], len);
        s.argv[i][len] = 0;
        s.lens[i] = len;
    }
    s.argc = n;
    s.mode = mode;
    s.probe = probe;
    s.key_arg = probe != PROBE_NONE ? key : 0;
    s.pairs = mode == CMP_PAIRS;
    s.tolerance = 1;
    int res = execute(r, o, seed, &s);
    step_free(&s);
    if (res == 1 || res == 2) {
        (*passed) += res == 1;
        return 1;
    }
    (*failed)++;
    return res;
}
#define CHECK(mode, probe, key, klen, ...)                                                   \
    do {                                                                                     \
        const char *const w_[] = {__VA_ARGS__};                                              \
        res = check_cmd(r, o, seed, passed, failed, mode, probe, (int)NELEM(w_), w_, key,    \
                        klen);                                                               \
        if (res != 1) goto done;                                                             \
    } while (0)

/* The end of a run: every key of databases 0 and 1 is read back on both sides (DBSIZE,
 * KEYS, then per key TYPE, TTL, its whole value, OBJECT ENCODING, OBJECT REFCOUNT and
 * MEMORY USAGE), so that a difference the commands of
 * the run never looked at is still found.  Returns 1 when everything matched, 0 on a
 * mismatch, -1 when the real server is gone. */
static int final_check(runner *r, const options_t *o, uint64_t seed, long *passed, long *failed) {
    int res = 1;
    rh_buf keys = {0};
    spans ks = {0};
    r->final_check = 1;
    r->run_length = o->commands;
    int has_dump = 0; /* the fake has DUMP (this branch's, or a later one's) */
    for (size_t i = 0; i < fr_command_count(); i++)
        if (!strcmp(fr_command_at(i)->name, "dump")) has_dump = 1;
    if (r->cl[0].in_multi) CHECK(CMP_EXACT, PROBE_NONE, -1, 0, "DISCARD");
    for (int db = 0; db < (o->cluster ? 1 : 2); db++) {
        char dbs[16];
        snprintf(dbs, sizeof dbs, "%d", db);
        if (!o->cluster) CHECK(CMP_EXACT, PROBE_NONE, -1, 0, "SELECT", dbs);
        if (!o->cluster) {
            char *sel[] = {"SELECT", dbs};
            if (probe_call(r, 2, sel, NULL) != 0) {
                res = -1;
                goto done;
            }
            r->probe_db = db;
        }
        /* Redis counts an expired key in DBSIZE until something deletes it (the fake counts
         * live keys only, a documented difference): a full SCAN on the real side, which
         * deletes every expired key it visits, makes the count comparable. */
        char *scan[] = {"SCAN", "0", "COUNT", "1000000"};
        if (probe_call(r, 4, scan, NULL) != 0) {
            res = -1;
            goto done;
        }
        CHECK(CMP_EXACT, PROBE_NONE, -1, 0, "DBSIZE");
        CHECK(CMP_SORTED, PROBE_NONE, -1, 0, "KEYS", "*");
        /* The keys, from the real server, in byte order. */
        char *kv[] = {"KEYS", "*"};
        if (probe_call(r, 2, kv, NULL) != 0) {
            res = -1;
            goto done;
        }
        rh_buf_reset(&keys);
        rh_buf_append(&keys, r->scratch.data, r->scratch.len);
        split_array(keys.data, keys.len, &ks);
        if (ks.n > 1) qsort(ks.v, ks.n, sizeof *ks.v, span_cmp);
        for (size_t i = 0; i < ks.n; i++) {
            size_t l = line_len(ks.v[i].p, ks.v[i].len);
            const char *k = ks.v[i].p + l;
            size_t kl = (size_t)strtoll(ks.v[i].p + 1, NULL, 10);
            char *tv[] = {"TYPE", (char *)k};
            size_t tl[] = {4, kl};
            if (probe_call(r, 2, tv, tl) != 0) {
                res = -1;
                goto done;
            }
            const char *t = r->scratch.data;
            int is_string = reply_is_string(t, r->scratch.len, "string");
            int is_list = reply_is_string(t, r->scratch.len, "list");
            int is_hash = reply_is_string(t, r->scratch.len, "hash");
            int is_set = reply_is_string(t, r->scratch.len, "set");
            int is_zset = reply_is_string(t, r->scratch.len, "zset");
            int is_stream = reply_is_string(t, r->scratch.len, "stream");
            CHECK(CMP_EXACT, PROBE_NONE, 1, kl, "TYPE", k);
            CHECK(CMP_NEAR, PROBE_NONE, 1, kl, "TTL", k);
            if (is_string) CHECK(CMP_EXACT, PROBE_NONE, 1, kl, "GET", k);
            if (is_list) CHECK(CMP_EXACT, PROBE_NONE, 1, kl, "LRANGE", k, "0", "-1");
            if (is_hash) CHECK(CMP_PAIRS, PROBE_ORDER, 1, kl, "HGETALL", k);
            if (is_set) CHECK(CMP_SORTED, PROBE_ORDER, 1, kl, "SMEMBERS", k);
            if (is_zset) CHECK(CMP_EXACT, PROBE_NONE, 1, kl, "ZRANGE", k, "0", "-1", "WITHSCORES");
            if (is_stream) {
                CHECK(CMP_EXACT, PROBE_NONE, 1, kl, "XRANGE", k, "-", "+");
                CHECK(CMP_EXACT, PROBE_NONE, 2, kl, "XINFO", "GROUPS", k);
                CHECK(CMP_TIMES, PROBE_NONE, 2, kl, "XINFO", "STREAM", k);
            }
            /* what Redis would hold it as, once the value is known to agree */
            CHECK(CMP_EXACT, PROBE_NONE, 2, kl, "OBJECT", "ENCODING", k);
            CHECK(CMP_EXACT, PROBE_NONE, 2, kl, "OBJECT", "REFCOUNT", k);
            CHECK(CMP_TYPE, PROBE_MEMORY, 2, kl, "MEMORY", "USAGE", k);
            /* and its DUMP payload, where Redis's is deterministic */
            if (has_dump) CHECK(CMP_TYPE, PROBE_DUMP, 1, kl, "DUMP", k);
        }
    }
done:
    free(ks.v);
    rh_buf_free(&keys);
    r->final_check = 0;
    return res;
}
#undef CHECK

/* The command line's help. */
static void usage(FILE *f) {
    fprintf(f,
            "usage: random_diff [--seed N] [--runs R] [--commands N] [--only GROUP,...]\n"
            "                   [--skip CMD,...] [--cluster] [--keep-going] [--emit FILE]\n"
            "                   [--inject-fault N] [--events] [--verbose] [--list]\n"
            "                   [--default-config] [--roundtrip rdb|aof]\n"
            "Runs a random command sequence on the fake and on a real redis-server and\n"
            "compares the raw replies.  --runs R: seeds N..N+R-1, one after the other.\n"
            "--only: groups of the fake's table (string, list, hash, set, sorted-set,\n"
            "generic, server, connection, transactions, pubsub, cluster).  --skip: commands\n"
            "never drawn.  --keep-going: after a mismatch go on with the next seed.\n"
            "--emit FILE: write the executed commands as a diff script.  --list: the\n"
            "commands that would be drawn.  --inject-fault N: make the fake's N-th command\n"
            "fail, to check that a difference is caught.  --events: compare the keyspace\n"
            "notifications of every command too.  --default-config: Redis's default\n"
            "parameters for every seed (by default most seeds draw other encoding thresholds\n"
            "and stream node sizes).  --roundtrip rdb|aof: run each seed on the fake alone\n"
            "and send its keyspace through redis-server as an RDB file (or as the AOF the\n"
            "fake's propagation writes, rewritten by redis-server) and back; the\n"
            "canonical dumps must agree.  See tests/diff/README.md.\n");
}

/* A whole-string integer >= min.  0, or -1. */
static int parse_long(const char *s, long long min, long long *out) {
    char *end;
    errno = 0;
    long long v = strtoll(s, &end, 10);
    if (errno || *end || end == s || v < min) return -1;
    *out = v;
    return 0;
}

int main(int argc, char **argv) {
    options_t o = {1, 1, 2000, 0, 0, 0, 0, NULL, NULL, NULL, 0, 0, 0, NULL};
    for (int i = 1; i < argc; i++) {
        const char *arg = argv[i];
        long long v;
        int has_value = i + 1 < argc;
        if (!strcmp(arg, "--seed") && has_value && parse_long(argv[i + 1], 0, &v) == 0) {
            o.seed = (uint64_t)v;
            i++;
        } else if (!strcmp(arg, "--runs") && has_value && parse_long(argv[i + 1], 1, &v) == 0) {
            o.runs = (long)v;
            i++;
        } else if (!strcmp(arg, "--commands") && has_value && parse_long(argv[i + 1], 1, &v) == 0) {
            o.commands = (long)v;
            i++;
        } else if (!strcmp(arg, "--inject-fault") && has_value &&
                   parse_long(argv[i + 1], 1, &v) == 0) {
            o.fault_at = (long)v;
            i++;
        } else if (!strcmp(arg, "--only") && has_value) {
            o.only = argv[++i];
        } else if (!strcmp(arg, "--skip") && has_value) {
            o.skip = argv[++i];
        } else if (!strcmp(arg, "--emit") && has_value) {
            o.emit = argv[++i];
        } else if (!strcmp(arg, "--verbose") || !strcmp(arg, "-v")) {
            o.verbose = 1;
        } else if (!strcmp(arg, "--keep-going")) {
            o.keep_going = 1;
        } else if (!strcmp(arg, "--cluster")) {
            o.cluster = 1;
        } else if (!strcmp(arg, "--events")) {
            o.events = 1;
        } else if (!strcmp(arg, "--default-config")) {
            o.default_config = 1;
        } else if (!strcmp(arg, "--roundtrip") && has_value &&
                   (!strcmp(argv[i + 1], "rdb") || !strcmp(argv[i + 1], "aof"))) {
            o.roundtrip = argv[++i];
        } else if (!strcmp(arg, "--list")) {
            o.list = 1;
        } else if (!strcmp(arg, "--help") || !strcmp(arg, "-h")) {
            usage(stdout);
            return 0;
        } else {
            fprintf(stderr, "random_diff: bad argument '%s'\n", arg);
            usage(stderr);
            return 2;
        }
    }
    setvbuf(stdout, NULL, _IOLBF, 0);

    gen g;
    memset(&g, 0, sizeof g);
    build_live(&g, &o, 1);
    if (o.list) {
        list_coverage(&g);
        return 0;
    }
    if (g.nlive == 0) {
        fprintf(stderr, "random_diff: no command to draw (--only/--skip)\n");
        return 2;
    }

    runner r;
    memset(&r, 0, sizeof r);
    r.verbose = o.verbose;
    r.cluster = o.cluster;
    if (o.emit) {
        r.emit = fopen(o.emit, "w");
        if (!r.emit) {
            fprintf(stderr, "random_diff: cannot write %s: %s\n", o.emit, strerror(errno));
            return 2;
        }
        if (o.cluster) fprintf(r.emit, "!cluster\n");
    }
    rh_options ropt = {0};
    ropt.cluster = o.cluster;
    ropt.quiet = !o.verbose;
    r.real = rh_start(&ropt);
    if (!r.real) {
        printf("random_diff: cannot start redis-server (see above)\n0 passed, 1 failed\n");
        return 1;
    }
    r.probe = rh_connect(r.real);
    char *hz[] = {"CONFIG", "SET", "hz", "500"};
    if (!r.probe || probe_call(&r, 4, hz, NULL) != 0) {
        /* hz 500: a blocking command's timeout fires within 2 ms, not 100 ms. */
        rh_stop(r.real);
        printf("0 passed, 1 failed\n");
        return 1;
    }

    long passed = 0, failed = 0, seeds_failed = 0;
    if (o.roundtrip) {
        struct timespec now;
        clock_gettime(CLOCK_REALTIME, &now);
        int aof = !strcmp(o.roundtrip, "aof");
        /* rdb: a day ahead; aof: 500 s behind (see each) */
        int64_t clock = ((int64_t)now.tv_sec + (aof ? -500 : 86400)) * 1000;
        for (long k = 0; k < o.runs; k++) {
            int same = aof ? roundtrip_aof_seed(&r, &g, &o, o.seed + (uint64_t)k, clock)
                           : roundtrip_seed(&r, &g, &o, o.seed + (uint64_t)k, clock);
            if (same < 0) {
                printf("random_diff: the real server is not reachable any more\n");
                failed++;
                break;
            }
            if (same) passed++;
            else if (failed++, !o.keep_going) break;
        }
        printf("%ld of %ld round trips (%s, %ld commands each) gave the same canonical dump\n",
               passed, o.runs, o.roundtrip, o.commands);
        printf("%ld passed, %ld failed\n", passed, failed);
    }
    for (long k = 0; !o.roundtrip && k < o.runs; k++) {
        long before = failed;
        if (run_seed(&r, &g, &o, o.seed + (uint64_t)k, &passed, &failed) != 0) {
            printf("random_diff: the real server is not reachable any more\n");
            rh_print_log_tail(r.real, 20);
            break;
        }
        if (failed > before) {
            seeds_failed++;
            if (!o.keep_going) break;
        }
    }
    if (!o.roundtrip) {
        printf("real replies: %ld errors (%ld WRONGTYPE); %ld compared by a rule, not byte for "
               "byte; %ld commands skipped\n",
               r.n_error, r.n_wrongtype, r.n_relaxed, r.n_skipped);
        if (o.runs > 1) printf("%ld of %ld seeds failed\n", seeds_failed, o.runs);
        printf("%ld passed, %ld failed\n", passed, failed);
    }

    rh_close(r.probe);
    rh_stop(r.real);
    if (r.emit) fclose(r.emit);
    for (int i = 0; i < HISTORY; i++) {
        free(r.history[i].line);
        free(r.history[i].real);
    }
    for (int i = 0; i < MAX_CLIENTS; i++) free(r.cl[i].q);
    rh_buf_free(&r.real_reply);
    rh_buf_free(&r.fake_reply);
    rh_buf_free(&r.scratch);
    rh_buf_free(&r.ev_real);
    rh_buf_free(&r.ev_fake);
    rh_buf_free(&r.real_payload);
    rh_buf_free(&r.fake_payload);
    for (size_t i = 0; i < g.nlive; i++) free(g.live[i].group);
    free(g.live);
    free(g.groups);
    free(g.queue);
    return failed ? 1 : 0;
}
