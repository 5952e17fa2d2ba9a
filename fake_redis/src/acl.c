/* acl.c -- Redis 7.0's access control lists: users with passwords, command, key and
 * channel permissions in selectors, the permission check every command passes before it
 * runs, the ACL log, the ACL command family and AUTH.
 *
 * Commands are known by their row in Redis's command metadata (cmd_meta.h): the ACL
 * universe is Redis 7.0.15's whole command set (as acl.c's server.orig_commands), so a
 * rule may name a command the fake does not implement, categories hold what Redis puts
 * in them, and ACL LIST / GETUSER describe a user with the same best-fit categories.
 * Where Redis walks its command dict (whose order depends on a per-process hash seed),
 * the fake walks the rows by name.
 *
 * Nothing is kept until the first ACL command or AUTH (s->acl stays NULL): until then
 * every client is the default user with every permission, and the check costs nothing. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "command_int.h"
#include "reply_int.h"

#define USER_ENABLED 1u          /* on */
#define USER_DISABLED 2u         /* off */
#define USER_NOPASS 4u           /* nopass */
#define USER_SANITIZE 8u         /* sanitize-payload */
#define USER_SKIP_SANITIZE 16u   /* skip-sanitize-payload */

#define SEL_ROOT 1u              /* the user's own rules (outside parentheses) */
#define SEL_ALLKEYS 2u
#define SEL_ALLCOMMANDS 4u
#define SEL_ALLCHANNELS 8u

#define PERM_R 1                 /* %R~ */
#define PERM_W 2                 /* %W~ */

#define FUTURE_BIT (FRI_CMD_META_MAX - 1) /* set by +@all: commands added later */
/* The embedder's own commands (fakeredis-server's FAKE.*: fr_server_declare_extension)
 * are administrative commands, as COMMAND INFO describes them: one bit of a selector
 * stands for all of them, set and cleared by their categories, +@all and -@all, as Redis
 * sets a module command's bit from its categories.  They are not named one by one in a
 * rule (a rule naming one is an unknown command). */
#define EXTENSION_BIT (FRI_CMD_META_MAX - 2)
#define EXTENSION_ACL (FRI_ACL_ADMIN | FRI_ACL_SLOW | FRI_ACL_DANGEROUS)
#define LOG_MAX 128              /* acllog-max-len's default */
#define LOG_GROUP_MS 60000       /* ACL_LOG_GROUPING_MAX_TIME_DELTA */

enum { ACL_OK, DENIED_CMD, DENIED_KEY, DENIED_AUTH, DENIED_CHANNEL };
enum { CTX_TOPLEVEL, CTX_LUA, CTX_MULTI };

/* A counted string (patterns, passwords, first-args may hold any byte). */
typedef struct astr {
    char *p;
    size_t len;
    int flags; /* key patterns: PERM_R | PERM_W */
} astr;

typedef struct selector {
    uint32_t flags;                     /* SEL_* */
    uint64_t cmds[FRI_CMD_META_MAX / 64]; /* a bit per metadata row, FUTURE_BIT */
    astr *keys;                         /* key patterns, in the order added */
    size_t nkeys;
    astr *chans;                        /* channel patterns */
    size_t nchans;
    astr **firstargs;                   /* per row: allowed first arguments, or NULL */
    size_t *nfirstargs;                 /* per row: how many */
} selector;

struct fri_acl_user {
    char *name;
    size_t namelen;
    uint32_t flags;     /* USER_* */
    astr *pw;           /* SHA-256 hex digests (64 bytes each) */
    size_t npw;
    selector *sel;      /* sel[0] is the root selector */
    size_t nsel;
};

typedef struct log_entry {
    long long count;
    int reason, context;
    astr object, username, cinfo;
    int64_t ctime;
} log_entry;

struct fri_acl {
    fri_acl_user **users; /* sorted by name (rax order: bytes, then length) */
    size_t nusers;
    fri_acl_user *def;    /* "default" */
    log_entry *log;       /* newest first */
    size_t nlog;
};

static const char *const category_names[FRI_ACL_CATEGORIES] = {
    "keyspace", "read", "write", "set", "sortedset", "list", "hash", "string", "bitmap",
    "hyperloglog", "geo", "stream", "pubsub", "admin", "fast", "slow", "blocking",
    "dangerous", "connection", "transaction", "scripting"};

uint32_t fri_acl_category_bit(const char *p, size_t n)
{
    for (int i = 0; i < FRI_ACL_CATEGORIES; i++)
        if (strlen(category_names[i]) == n && strncasecmp(category_names[i], p, n) == 0)
            return 1u << i;
    return 0;
}

/* ----- SHA-256 (FIPS 180-4), for ACLHashPassword's hex digests ------------------------- */

static const uint32_t sha_k[64] = {
    0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4,
    0xab1c5ed5, 0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe,
    0x9bdc06a7, 0xc19bf174, 0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f,
    0x4a7484aa, 0x5cb0a9dc, 0x76f988da, 0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7,
    0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967, 0x27b70a85, 0x2e1b2138, 0x4d2c6dfc,
    0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85, 0xa2bfe8a1, 0xa81a664b,
    0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070, 0x19a4c116,
    0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3,
    0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7,
    0xc67178f2};

static uint32_t ror(uint32_t x, int n) { return (x >> n) | (x << (32 - n)); }

static void sha256_block(uint32_t h[8], const unsigned char *b)
{
    uint32_t w[64];
    for (int i = 0; i < 16; i++)
        w[i] = (uint32_t)b[4 * i] << 24 | (uint32_t)b[4 * i + 1] << 16 |
               (uint32_t)b[4 * i + 2] << 8 | b[4 * i + 3];
    for (int i = 16; i < 64; i++) {
        uint32_t s0 = ror(w[i - 15], 7) ^ ror(w[i - 15], 18) ^ (w[i - 15] >> 3);
        uint32_t s1 = ror(w[i - 2], 17) ^ ror(w[i - 2], 19) ^ (w[i - 2] >> 10);
        w[i] = w[i - 16] + s0 + w[i - 7] + s1;
    }
    uint32_t a = h[0], bb = h[1], c = h[2], d = h[3], e = h[4], f = h[5], g = h[6], hh = h[7];
    for (int i = 0; i < 64; i++) {
        uint32_t t1 = hh + (ror(e, 6) ^ ror(e, 11) ^ ror(e, 25)) + ((e & f) ^ (~e & g)) +
                      sha_k[i] + w[i];
        uint32_t t2 = (ror(a, 2) ^ ror(a, 13) ^ ror(a, 22)) + ((a & bb) ^ (a & c) ^ (bb & c));
        hh = g; g = f; f = e; e = d + t1; d = c; c = bb; bb = a; a = t1 + t2;
    }
    h[0] += a; h[1] += bb; h[2] += c; h[3] += d; h[4] += e; h[5] += f; h[6] += g; h[7] += hh;
}

/* The lower-case hex SHA-256 of p[0..n) into out[64] (not terminated). */
static void hash_password(const char *p, size_t n, char *out)
{
    uint32_t h[8] = {0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a,
                     0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19};
    unsigned char blk[64];
    size_t i = 0;
    for (; i + 64 <= n; i += 64) sha256_block(h, (const unsigned char *)p + i);
    size_t rem = n - i;
    memset(blk, 0, sizeof(blk));
    memcpy(blk, p + i, rem);
    blk[rem] = 0x80;
    if (rem >= 56) {
        sha256_block(h, blk);
        memset(blk, 0, sizeof(blk));
    }
    uint64_t bits = (uint64_t)n * 8;
    for (int k = 0; k < 8; k++) blk[63 - k] = (unsigned char)(bits >> (8 * k));
    sha256_block(h, blk);
    static const char hex[] = "0123456789abcdef";
    for (int k = 0; k < 32; k++) {
        unsigned char byte = (unsigned char)(h[k / 4] >> (24 - 8 * (k % 4)));
        out[2 * k] = hex[byte >> 4];
        out[2 * k + 1] = hex[byte & 15];
    }
}

/* ----- Strings, selectors, users -------------------------------------------------------- */

static astr astr_new(const char *p, size_t n, int flags)
{
    astr a = {fri_malloc(n + 1), n, flags};
    memcpy(a.p, p, n);
    a.p[n] = '\0';
    return a;
}

static int astr_eq(const astr *a, const char *p, size_t n)
{
    return a->len == n && memcmp(a->p, p, n) == 0;
}

static void push(astr **v, size_t *n, astr a)
{
    astr *nv = fri_realloc(*v, (*n + 1) * sizeof(**v));
    nv[(*n)++] = a;
    *v = nv;
}

static void astr_list_free(astr *v, size_t n)
{
    for (size_t i = 0; i < n; i++) fri_free(v[i].p);
    fri_free(v);
}

/* Frees a list of patterns or passwords and leaves it empty. */
static void astr_list_clear(astr **v, size_t *n)
{
    astr_list_free(*v, *n);
    *v = NULL;
    *n = 0;
}

static void reset_firstargs_row(selector *s, size_t row)
{
    if (!s->firstargs || !s->firstargs[row]) return;
    astr_list_clear(&s->firstargs[row], &s->nfirstargs[row]);
}

static void reset_firstargs(selector *s)
{
    if (!s->firstargs) return;
    for (size_t r = 0; r < FRI_CMD_META_MAX; r++) reset_firstargs_row(s, r);
    fri_free(s->firstargs);
    fri_free(s->nfirstargs);
    s->firstargs = NULL;
    s->nfirstargs = NULL;
}

static void selector_free(selector *s)
{
    astr_list_free(s->keys, s->nkeys);
    astr_list_free(s->chans, s->nchans);
    reset_firstargs(s);
    memset(s, 0, sizeof(*s));
}

static void add_firstarg(selector *s, size_t row, const char *p, size_t n)
{
    if (!s->firstargs) {
        s->firstargs = fri_calloc(FRI_CMD_META_MAX, sizeof(*s->firstargs));
        s->nfirstargs = fri_calloc(FRI_CMD_META_MAX, sizeof(*s->nfirstargs));
    }
    for (size_t i = 0; i < s->nfirstargs[row]; i++)
        if (s->firstargs[row][i].len == n && strncasecmp(s->firstargs[row][i].p, p, n) == 0)
            return;
    push(&s->firstargs[row], &s->nfirstargs[row], astr_new(p, n, 0));
}

static selector selector_copy(const selector *src)
{
    selector d = *src;
    d.keys = NULL;
    d.chans = NULL;
    d.nkeys = d.nchans = 0;
    d.firstargs = NULL;
    d.nfirstargs = NULL;
    for (size_t i = 0; i < src->nkeys; i++)
        push(&d.keys, &d.nkeys, astr_new(src->keys[i].p, src->keys[i].len, src->keys[i].flags));
    for (size_t i = 0; i < src->nchans; i++)
        push(&d.chans, &d.nchans, astr_new(src->chans[i].p, src->chans[i].len, 0));
    if (src->firstargs)
        for (size_t r = 0; r < FRI_CMD_META_MAX; r++)
            for (size_t i = 0; src->firstargs[r] && i < src->nfirstargs[r]; i++)
                add_firstarg(&d, r, src->firstargs[r][i].p, src->firstargs[r][i].len);
    return d;
}

static void user_clear(fri_acl_user *u)
{
    astr_list_clear(&u->pw, &u->npw);
    for (size_t i = 0; i < u->nsel; i++) selector_free(&u->sel[i]);
    fri_free(u->sel);
    u->sel = NULL;
    u->nsel = 0;
}

static void user_free(fri_acl_user *u)
{
    if (!u) return;
    user_clear(u);
    fri_free(u->name);
    fri_free(u);
}

static void add_selector(fri_acl_user *u, selector s)
{
    selector *n = fri_realloc(u->sel, (u->nsel + 1) * sizeof(*n));
    n[u->nsel++] = s;
    u->sel = n;
}

/* A user as ACLCreateUser makes it: off, no password, a root selector with nothing. */
static fri_acl_user *user_new(const char *name, size_t n)
{
    fri_acl_user *u = fri_calloc(1, sizeof(*u));
    u->name = fri_malloc(n + 1);
    memcpy(u->name, name, n);
    u->name[n] = '\0';
    u->namelen = n;
    u->flags = USER_DISABLED;
    add_selector(u, (selector){.flags = SEL_ROOT});
    return u;
}

/* ACLCopyUser: dst gets src's flags, passwords and selectors (its name stays). */
static void user_copy(fri_acl_user *dst, const fri_acl_user *src)
{
    user_clear(dst);
    dst->flags = src->flags;
    for (size_t i = 0; i < src->npw; i++)
        push(&dst->pw, &dst->npw, astr_new(src->pw[i].p, src->pw[i].len, 0));
    for (size_t i = 0; i < src->nsel; i++) add_selector(dst, selector_copy(&src->sel[i]));
}

static int name_cmp(const char *a, size_t al, const char *b, size_t bl)
{
    int c = memcmp(a, b, al < bl ? al : bl);
    return c ? c : (al > bl) - (al < bl);
}

static size_t user_pos(const struct fri_acl *acl, const char *name, size_t n, int *found)
{
    size_t lo = 0, hi = acl->nusers;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        int c = name_cmp(acl->users[mid]->name, acl->users[mid]->namelen, name, n);
        if (c == 0) {
            *found = 1;
            return mid;
        }
        if (c < 0) lo = mid + 1;
        else hi = mid;
    }
    *found = 0;
    return lo;
}

static fri_acl_user *user_get(const struct fri_acl *acl, const char *name, size_t n)
{
    int found;
    size_t i = user_pos(acl, name, n, &found);
    return found ? acl->users[i] : NULL;
}

static void user_insert(struct fri_acl *acl, fri_acl_user *u)
{
    int found;
    size_t i = user_pos(acl, u->name, u->namelen, &found);
    fri_acl_user **n = fri_realloc(acl->users, (acl->nusers + 1) * sizeof(*n));
    memmove(n + i + 1, n + i, (acl->nusers - i) * sizeof(*n));
    n[i] = u;
    acl->users = n;
    acl->nusers++;
}

/* ----- Rules (ACLSetSelector, ACLSetUser) ------------------------------------------------- */

enum { E_OK, E_INVAL, E_NOENT, E_EXIST, E_ISDIR, E_NODEV, E_BADMSG, E_CHILD };

static void set_bit(selector *s, size_t row, int on)
{
    if (on) s->cmds[row / 64] |= 1ull << (row % 64);
    else {
        s->cmds[row / 64] &= ~(1ull << (row % 64));
        s->flags &= ~SEL_ALLCOMMANDS;
    }
}

static int get_bit(const selector *s, size_t row)
{
    return (s->cmds[row / 64] >> (row % 64)) & 1;
}

/* ACLChangeSelectorPerm: a command and, for a container, its subcommands. */
static void change_perm(selector *s, const fri_cmd_meta *m, int on)
{
    size_t row = (size_t)(m - fri_cmd_meta_table);
    set_bit(s, row, on);
    reset_firstargs_row(s, row);
    for (int i = 0; i < m->nsubs; i++) set_bit(s, (size_t)(m->first_sub + i), on);
}

static void set_category(selector *s, uint32_t cat, int on)
{
    for (size_t i = 0; i < fri_cmd_meta_count; i++)
        if (fri_cmd_meta_table[i].acl & cat) change_perm(s, &fri_cmd_meta_table[i], on);
    if (cat & EXTENSION_ACL) set_bit(s, EXTENSION_BIT, on);
}

/* Whether user u may run the embedder's commands (any selector allowing them). */
static int user_may_run_extensions(const fri_acl_user *u)
{
    for (size_t i = 0; i < u->nsel; i++)
        if (get_bit(&u->sel[i], EXTENSION_BIT)) return 1;
    return 0;
}

static int has_spaces(const char *p, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (p[i] == '\0' || p[i] == ' ' || (p[i] >= '\t' && p[i] <= '\r')) return 1;
    return 0;
}

static int word_is(const char *op, size_t n, const char *w)
{
    return strlen(w) == n && strncasecmp(op, w, n) == 0;
}

/* ACLLookupCommand: "name" or "container|sub" over every Redis command. */
static const fri_cmd_meta *acl_lookup(const char *p, size_t n)
{
    const char *bar = memchr(p, '|', n);
    const fri_cmd_meta *m = fri_meta_find(p, n);
    if (!m) return NULL;
    if (!bar) return m->parent < 0 ? m : NULL;
    return m->parent >= 0 ? m : NULL;
}

/* lookupCommand over every Redis command (ACL DRYRUN names any of them). */
static const fri_cmd_meta *acl_lookup_argv(int argc, const fri_arg *argv)
{
    const fri_cmd_meta *base = fri_meta_find(argv[0].ptr, argv[0].len);
    if (!base || base->parent >= 0) return NULL;
    if (argc == 1 || base->nsubs == 0) return base;
    return fri_meta_find_sub(base, &argv[1]);
}

static int set_selector(selector *s, const char *op, size_t n)
{
    if (word_is(op, n, "allkeys") || (n == 2 && memcmp(op, "~*", 2) == 0)) {
        s->flags |= SEL_ALLKEYS;
        astr_list_clear(&s->keys, &s->nkeys);
    } else if (word_is(op, n, "resetkeys")) {
        s->flags &= ~SEL_ALLKEYS;
        astr_list_clear(&s->keys, &s->nkeys);
    } else if (word_is(op, n, "allchannels") || (n == 2 && memcmp(op, "&*", 2) == 0)) {
        s->flags |= SEL_ALLCHANNELS;
        astr_list_clear(&s->chans, &s->nchans);
    } else if (word_is(op, n, "resetchannels")) {
        s->flags &= ~SEL_ALLCHANNELS;
        astr_list_clear(&s->chans, &s->nchans);
    } else if (word_is(op, n, "allcommands") || word_is(op, n, "+@all")) {
        memset(s->cmds, 0xff, sizeof(s->cmds));
        s->flags |= SEL_ALLCOMMANDS;
        reset_firstargs(s);
    } else if (word_is(op, n, "nocommands") || word_is(op, n, "-@all")) {
        memset(s->cmds, 0, sizeof(s->cmds));
        s->flags &= ~SEL_ALLCOMMANDS;
        reset_firstargs(s);
    } else if (op[0] == '~' || op[0] == '%') {
        if (s->flags & SEL_ALLKEYS) return E_EXIST;
        int flags = 0;
        size_t off = 1;
        if (op[0] == '%') {
            for (; off < n; off++) {
                char ch = op[off];
                if ((ch == 'R' || ch == 'r') && !(flags & PERM_R)) flags |= PERM_R;
                else if ((ch == 'W' || ch == 'w') && !(flags & PERM_W)) flags |= PERM_W;
                else if (ch == '~') {
                    off++;
                    break;
                } else return E_INVAL;
            }
        } else {
            flags = PERM_R | PERM_W;
        }
        if (has_spaces(op + off, n - off)) return E_INVAL;
        size_t i;
        for (i = 0; i < s->nkeys; i++)
            if (astr_eq(&s->keys[i], op + off, n - off)) break;
        if (i < s->nkeys) s->keys[i].flags |= flags;
        else push(&s->keys, &s->nkeys, astr_new(op + off, n - off, flags));
        s->flags &= ~SEL_ALLKEYS;
    } else if (op[0] == '&') {
        if (s->flags & SEL_ALLCHANNELS) return E_ISDIR;
        if (has_spaces(op + 1, n - 1)) return E_INVAL;
        size_t i;
        for (i = 0; i < s->nchans; i++)
            if (astr_eq(&s->chans[i], op + 1, n - 1)) break;
        if (i == s->nchans) push(&s->chans, &s->nchans, astr_new(op + 1, n - 1, 0));
        s->flags &= ~SEL_ALLCHANNELS;
    } else if (op[0] == '+' && (n < 2 || op[1] != '@')) {
        const char *bar = NULL;
        for (size_t i = n; i-- > 1;)
            if (op[i] == '|') {
                bar = op + i;
                break;
            }
        if (!bar) {
            const fri_cmd_meta *m = acl_lookup(op + 1, n - 1);
            if (!m) return E_NOENT;
            change_perm(s, m, 1);
        } else {
            const fri_cmd_meta *m = acl_lookup(op + 1, (size_t)(bar - op - 1));
            if (!m) return E_NOENT;
            if (m->parent >= 0) return E_CHILD;
            size_t sublen = n - (size_t)(bar - op) - 1;
            if (sublen == 0) return E_INVAL;
            if (m->nsubs) {
                const fri_cmd_meta *sub = acl_lookup(op + 1, n - 1);
                if (!sub) return E_NOENT;
                change_perm(s, sub, 1);
            } else {
                add_firstarg(s, (size_t)(m - fri_cmd_meta_table), bar + 1, sublen);
            }
        }
    } else if (op[0] == '-' && (n < 2 || op[1] != '@')) {
        const fri_cmd_meta *m = acl_lookup(op + 1, n - 1);
        if (!m) return E_NOENT;
        change_perm(s, m, 0);
    } else if ((op[0] == '+' || op[0] == '-') && n >= 2 && op[1] == '@') {
        uint32_t cat = fri_acl_category_bit(op + 2, n - 2);
        if (!cat) return E_NOENT;
        set_category(s, cat, op[0] == '+');
    } else {
        return E_INVAL;
    }
    return E_OK;
}

/* Splits "(a b c)" into rules as sdssplitargs would (plain words here) and applies them
 * to a new selector. */
static int selector_from_opset(const char *op, size_t n, selector *out)
{
    selector s = {0};
    size_t i = 1, end = n - 1;
    while (i < end) {
        while (i < end && (op[i] == ' ' || op[i] == '\t' || op[i] == '\n' || op[i] == '\r'))
            i++;
        if (i >= end) break;
        size_t j = i;
        while (j < end && op[j] != ' ' && op[j] != '\t' && op[j] != '\n' && op[j] != '\r') j++;
        int e = set_selector(&s, op + i, j - i);
        if (e != E_OK) {
            selector_free(&s);
            return e;
        }
        i = j;
    }
    *out = s;
    return E_OK;
}

static int is_hash(const char *p, size_t n)
{
    if (n != 64) return 0;
    for (size_t i = 0; i < n; i++)
        if (!((p[i] >= '0' && p[i] <= '9') || (p[i] >= 'a' && p[i] <= 'f'))) return 0;
    return 1;
}

static int set_user(fri_acl_user *u, const char *op, size_t n)
{
    if (n == 0) return E_OK;
    if (word_is(op, n, "on")) {
        u->flags = (u->flags | USER_ENABLED) & ~USER_DISABLED;
    } else if (word_is(op, n, "off")) {
        u->flags = (u->flags | USER_DISABLED) & ~USER_ENABLED;
    } else if (word_is(op, n, "skip-sanitize-payload")) {
        u->flags = (u->flags | USER_SKIP_SANITIZE) & ~USER_SANITIZE;
    } else if (word_is(op, n, "sanitize-payload")) {
        u->flags = (u->flags | USER_SANITIZE) & ~USER_SKIP_SANITIZE;
    } else if (word_is(op, n, "nopass") || word_is(op, n, "resetpass")) {
        if (op[0] == 'n' || op[0] == 'N') u->flags |= USER_NOPASS;
        else u->flags &= ~USER_NOPASS;
        astr_list_clear(&u->pw, &u->npw);
    } else if (op[0] == '>' || op[0] == '#' || op[0] == '<' || op[0] == '!') {
        char h[64];
        if (op[0] == '>' || op[0] == '<') hash_password(op + 1, n - 1, h);
        else if (!is_hash(op + 1, n - 1)) return E_BADMSG;
        else memcpy(h, op + 1, 64);
        size_t i;
        for (i = 0; i < u->npw; i++)
            if (astr_eq(&u->pw[i], h, 64)) break;
        if (op[0] == '>' || op[0] == '#') {
            if (i == u->npw) push(&u->pw, &u->npw, astr_new(h, 64, 0));
            u->flags &= ~USER_NOPASS;
        } else {
            if (i == u->npw) return E_NODEV;
            fri_free(u->pw[i].p);
            memmove(u->pw + i, u->pw + i + 1, (u->npw - i - 1) * sizeof(*u->pw));
            u->npw--;
        }
    } else if (op[0] == '(' && op[n - 1] == ')') {
        selector s;
        int e = selector_from_opset(op, n, &s);
        if (e != E_OK) return e;
        add_selector(u, s);
    } else if (word_is(op, n, "clearselectors")) {
        for (size_t i = 1; i < u->nsel; i++) selector_free(&u->sel[i]);
        u->nsel = 1;
    } else if (word_is(op, n, "reset")) {
        set_user(u, "resetpass", 9);
        set_user(u, "resetkeys", 9);
        set_user(u, "resetchannels", 13);
        set_user(u, "off", 3);
        set_user(u, "sanitize-payload", 16);
        set_user(u, "clearselectors", 14);
        set_user(u, "-@all", 5);
    } else {
        return set_selector(&u->sel[0], op, n);
    }
    return E_OK;
}

static const char *set_user_error(int e)
{
    switch (e) {
    case E_NOENT: return "Unknown command or category name in ACL";
    case E_INVAL: return "Syntax error";
    case E_EXIST:
        return "Adding a pattern after the * pattern (or the 'allkeys' flag) is not valid and "
               "does not have any effect. Try 'resetkeys' to start with an empty list of "
               "patterns";
    case E_ISDIR:
        return "Adding a pattern after the * pattern (or the 'allchannels' flag) is not valid "
               "and does not have any effect. Try 'resetchannels' to start with an empty list "
               "of channels";
    case E_NODEV: return "The password you are trying to remove from the user does not exist";
    case E_BADMSG:
        return "The password hash must be exactly 64 characters and contain only lowercase "
               "hexadecimal characters";
    case E_CHILD: return "Allowing first-arg of a subcommand is not supported";
    default: return "Wrong format";
    }
}

/* ----- The ACL state ------------------------------------------------------------------- */

static struct fri_acl *acl_get(fr_server *s)
{
    if (s->acl) return s->acl;
    struct fri_acl *a = fri_calloc(1, sizeof(*a));
    fri_acl_user *d = user_new("default", 7);
    set_user(d, "+@all", 5);
    set_user(d, "~*", 2);
    set_user(d, "&*", 2);
    set_user(d, "on", 2);
    set_user(d, "nopass", 6);
    a->def = d;
    user_insert(a, d);
    s->acl = a;
    return a;
}

static void log_entry_free(log_entry *e)
{
    fri_free(e->object.p);
    fri_free(e->username.p);
    fri_free(e->cinfo.p);
}

void fri_acl_free(fr_server *s)
{
    struct fri_acl *a = s->acl;
    if (!a) return;
    for (size_t i = 0; i < a->nusers; i++) user_free(a->users[i]);
    fri_free(a->users);
    for (size_t i = 0; i < a->nlog; i++) log_entry_free(&a->log[i]);
    fri_free(a->log);
    fri_free(a);
    s->acl = NULL;
}

static fri_acl_user *client_user(fr_client *c)
{
    return c->user ? c->user : acl_get(c->srv)->def;
}

/* ----- Describing users (ACLDescribeUser) -------------------------------------------------- */

static void count_category(const selector *s, uint32_t cat, unsigned long *on,
                           unsigned long *off)
{
    *on = *off = 0;
    for (size_t i = 0; i < fri_cmd_meta_count; i++)
        if (fri_cmd_meta_table[i].acl & cat) {
            if (get_bit(s, i)) (*on)++;
            else (*off)++;
        }
}

/* ACLDescribeSelectorCommandRules: +@all or -@all, the best-fitting categories, then the
 * single commands (in row order: Redis's order is its dict's) and first-args. */
static void describe_commands(const selector *s, fri_buf *out)
{
    size_t start = out->len;
    selector fake = {0}, temp = {0};
    int additive = !get_bit(s, FUTURE_BIT);
    set_selector(&fake, additive ? "-@all" : "+@all", 5);
    fri_buf_printf(out, "%s ", additive ? "-@all" : "+@all");
    memcpy(temp.cmds, s->cmds, sizeof(temp.cmds));
    char applied[FRI_ACL_CATEGORIES] = {0};
    for (;;) {
        int best = -1;
        unsigned long mindiff = 0x7fffffff, maxsame = 0;
        for (int j = 0; j < FRI_ACL_CATEGORIES; j++) {
            if (applied[j]) continue;
            unsigned long on, off;
            count_category(&temp, 1u << j, &on, &off);
            unsigned long diff = additive ? off : on, same = additive ? on : off;
            if (same > diff && (diff < mindiff || (diff == mindiff && same > maxsame))) {
                best = j;
                mindiff = diff;
                maxsame = same;
            }
        }
        if (best < 0) break;
        set_category(&fake, 1u << best, additive);
        set_category(&temp, 1u << best, !additive);
        fri_buf_printf(out, "%s@%s ", additive ? "+" : "-", category_names[best]);
        applied[best] = 1;
    }
    /* single commands: a container first, then its subcommands, as Redis recurses */
    for (size_t i = 0; i < fri_cmd_meta_count; i++) {
        const fri_cmd_meta *m = &fri_cmd_meta_table[i];
        int ub = get_bit(s, i), fb = get_bit(&fake, i);
        if (ub != fb) {
            fri_buf_printf(out, "%s%s ", ub ? "+" : "-", m->name);
            change_perm(&fake, m, ub);
        }
        if (!ub && s->firstargs && s->firstargs[i])
            for (size_t k = 0; k < s->nfirstargs[i]; k++) {
                fri_buf_printf(out, "+%s|", m->name);
                fri_buf_append(out, s->firstargs[i][k].p, s->firstargs[i][k].len);
                fri_buf_append(out, " ", 1);
            }
    }
    if (out->len > start) out->len--; /* the last space */
    selector_free(&fake);
    selector_free(&temp);
}

static void describe_key_pattern(fri_buf *out, const astr *k)
{
    fri_buf_printf(out, "%s", k->flags == (PERM_R | PERM_W) ? "~" : k->flags == PERM_R ? "%R~"
                                                                                     : "%W~");
    fri_buf_append(out, k->p, k->len);
}

static void describe_selector(const selector *s, fri_buf *out)
{
    if (s->flags & SEL_ALLKEYS) fri_buf_append(out, "~* ", 3);
    else
        for (size_t i = 0; i < s->nkeys; i++) {
            describe_key_pattern(out, &s->keys[i]);
            fri_buf_append(out, " ", 1);
        }
    if (s->flags & SEL_ALLCHANNELS) fri_buf_append(out, "&* ", 3);
    else {
        fri_buf_append(out, "resetchannels ", 14);
        for (size_t i = 0; i < s->nchans; i++) {
            fri_buf_append(out, "&", 1);
            fri_buf_append(out, s->chans[i].p, s->chans[i].len);
            fri_buf_append(out, " ", 1);
        }
    }
    describe_commands(s, out);
}

static const struct { const char *name; uint32_t flag; } user_flags[] = {
    {"on", USER_ENABLED}, {"off", USER_DISABLED}, {"nopass", USER_NOPASS},
    {"skip-sanitize-payload", USER_SKIP_SANITIZE}, {"sanitize-payload", USER_SANITIZE}};

static void describe_user(const fri_acl_user *u, fri_buf *out)
{
    for (size_t j = 0; j < 5; j++)
        if (u->flags & user_flags[j].flag) fri_buf_printf(out, "%s ", user_flags[j].name);
    for (size_t i = 0; i < u->npw; i++) {
        fri_buf_append(out, "#", 1);
        fri_buf_append(out, u->pw[i].p, u->pw[i].len);
        fri_buf_append(out, " ", 1);
    }
    for (size_t i = 0; i < u->nsel; i++) {
        if (i) fri_buf_append(out, " (", 2);
        describe_selector(&u->sel[i], out);
        if (i) fri_buf_append(out, ")", 1);
    }
}

/* ACL GETUSER's "keys" (channels: "channels") of s: "~*" ("&*") for all of them, else the
 * patterns joined by spaces. */
static void describe_patterns(const selector *s, int channels, fri_buf *b)
{
    if (s->flags & (channels ? SEL_ALLCHANNELS : SEL_ALLKEYS)) {
        fri_buf_append(b, channels ? "&*" : "~*", 2);
        return;
    }
    size_t n = channels ? s->nchans : s->nkeys;
    for (size_t i = 0; i < n; i++) {
        if (i) fri_buf_append(b, " ", 1);
        if (!channels) {
            describe_key_pattern(b, &s->keys[i]);
        } else {
            fri_buf_append(b, "&", 1);
            fri_buf_append(b, s->chans[i].p, s->chans[i].len);
        }
    }
}

/* A field of a selector's description: its name, then what b holds (b is emptied). */
static void reply_described(fr_client *c, const char *name, fri_buf *b)
{
    fri_reply_bulk_cstr(c, name);
    fri_reply_bulk(c, b->p ? b->p : "", b->len);
    b->len = 0;
}

/* aclAddReplySelectorDescription */
static void reply_selector(fr_client *c, const selector *s)
{
    fri_buf b = {0};
    describe_commands(s, &b);
    reply_described(c, "commands", &b);
    describe_patterns(s, 0, &b);
    reply_described(c, "keys", &b);
    describe_patterns(s, 1, &b);
    reply_described(c, "channels", &b);
    fri_buf_free(&b);
}

/* ----- Permission checks (ACLSelectorCheckCmd, ACLCheckAllUserCommandPerm) ---------------- */

static int check_key(const selector *s, const fri_arg *key, unsigned ksflags)
{
    if (s->flags & SEL_ALLKEYS) return ACL_OK;
    int need = 0;
    if (ksflags & FRI_KS_ACCESS) need |= PERM_R;
    if (ksflags & (FRI_KS_INSERT | FRI_KS_DELETE | FRI_KS_UPDATE)) need |= PERM_W;
    for (size_t i = 0; i < s->nkeys; i++) {
        if ((s->keys[i].flags & need) != need) continue;
        if (fri_glob_match(s->keys[i].p, s->keys[i].len, key->ptr, key->len, 0)) return ACL_OK;
    }
    return DENIED_KEY;
}

/* The channel arguments of cmd (db.c's commands_with_channels): first position, count
 * (-1: the rest), whether they are patterns; 0 when it publishes or subscribes to none. */
static int channel_spec(const fri_cmd_meta *m, int *pattern, int *count)
{
    const char *n = m->name;
    *pattern = 0;
    *count = -1;
    if (!strcmp(n, "subscribe") || !strcmp(n, "ssubscribe")) return 1;
    if (!strcmp(n, "psubscribe")) {
        *pattern = 1;
        return 1;
    }
    if (!strcmp(n, "publish") || !strcmp(n, "spublish")) {
        *count = 1;
        return 1;
    }
    return 0;
}

static int check_channel(const selector *s, const fri_arg *ch, int is_pattern)
{
    for (size_t i = 0; i < s->nchans; i++) {
        const astr *p = &s->chans[i];
        if (is_pattern ? (p->len == ch->len && memcmp(p->p, ch->ptr, ch->len) == 0)
                       : fri_glob_match(p->p, p->len, ch->ptr, ch->len, 0))
            return ACL_OK;
    }
    return DENIED_CHANNEL;
}

static int selector_check(const selector *s, const fri_cmd_meta *m, int argc,
                          const fri_arg *argv, int *idx, fri_keyref *keys, int *nkeys)
{
    size_t row = (size_t)(m - fri_cmd_meta_table);
    if (!(s->flags & SEL_ALLCOMMANDS) && !(m->flags & FRI_MF_NO_AUTH) && !get_bit(s, row)) {
        int at = m->parent >= 0 ? 2 : 1;
        if (argc < 2 || !s->firstargs || !s->firstargs[row]) return DENIED_CMD;
        size_t k;
        for (k = 0; k < s->nfirstargs[row]; k++)
            if (at < argc && s->firstargs[row][k].len == argv[at].len &&
                strncasecmp(s->firstargs[row][k].p, argv[at].ptr, argv[at].len) == 0)
                break;
        if (k == s->nfirstargs[row]) return DENIED_CMD;
    }
    if (!(s->flags & SEL_ALLKEYS) && fri_meta_has_keys(m)) {
        if (*nkeys < 0) *nkeys = fri_meta_getkeys(m, argc, argv, keys, 2 * argc + 4);
        for (int j = 0; j < *nkeys; j++)
            if (check_key(s, &argv[keys[j].pos], keys[j].flags) != ACL_OK) {
                *idx = keys[j].pos;
                return DENIED_KEY;
            }
    }
    int pattern, count;
    if (!(s->flags & SEL_ALLCHANNELS) && channel_spec(m, &pattern, &count)) {
        int stop = count < 0 ? argc : 1 + count;
        if (stop > argc) stop = argc;
        for (int j = 1; j < stop; j++)
            if (check_channel(s, &argv[j], pattern) != ACL_OK) {
                *idx = j;
                return DENIED_CHANNEL;
            }
    }
    return ACL_OK;
}

/* ACL_OK, or the error to log and its argument position. */
static int user_check(const fri_acl_user *u, const fri_cmd_meta *m, int argc,
                      const fri_arg *argv, int *idxptr)
{
    int relevant = DENIED_CMD, last_idx = 0, nkeys = -1;
    fri_keyref small[64];
    int cap = 2 * argc + 4;
    fri_keyref *keys = cap <= 64 ? small : fri_malloc(sizeof(*keys) * (size_t)cap);
    int ret = -1;
    for (size_t i = 0; i < u->nsel; i++) {
        int idx = 0;
        int r = selector_check(&u->sel[i], m, argc, argv, &idx, keys, &nkeys);
        if (r == ACL_OK) {
            ret = ACL_OK;
            break;
        }
        if (r > relevant || (r == relevant && idx > last_idx)) {
            relevant = r;
            last_idx = idx;
        }
    }
    if (keys != small) fri_free(keys);
    if (ret == ACL_OK) return ACL_OK;
    *idxptr = last_idx;
    return relevant;
}

/* A line like CLIENT LIST's for the log's client-info (the fake knows no addresses). */
static void client_info(fr_client *c, fri_buf *b)
{
    const fri_acl_user *u = client_user(c);
    fri_buf_printf(b, "id=%llu addr=?:0 laddr=?:0 fd=-1 name= age=0 idle=0 flags=%s db=%d "
                      "sub=0 psub=0 ssub=0 multi=%d qbuf=0 qbuf-free=0 argv-mem=0 multi-mem=0 "
                      "rbs=0 rbp=0 obl=0 oll=0 omem=0 tot-mem=0 events=r cmd=%s user=",
                   (unsigned long long)c->id, c->in_multi ? "x" : "N", c->db->id,
                   c->in_multi ? (int)c->queue_len : -1, c->cmd ? c->cmd->name : "NULL");
    fri_buf_append(b, u->name, u->namelen);
    fri_buf_printf(b, " redir=-1 resp=%d", c->proto == 3 ? 3 : 2);
}

/* addACLLogEntry */
static void log_add(fr_client *c, int reason, int context, const char *obj, size_t objlen,
                    const char *user, size_t userlen)
{
    struct fri_acl *a = acl_get(c->srv);
    log_entry e = {1, reason, context, astr_new(obj, objlen, 0), astr_new(user, userlen, 0),
                   {0}, fr_clock_now(c->srv)};
    fri_buf b = {0};
    client_info(c, &b);
    e.cinfo = astr_new(b.p, b.len, 0);
    fri_buf_free(&b);
    for (size_t i = 0; i < a->nlog && i < 10; i++) {
        log_entry *cur = &a->log[i];
        int64_t d = cur->ctime - e.ctime;
        if (cur->reason != e.reason || cur->context != e.context || (d < 0 ? -d : d) > LOG_GROUP_MS ||
            !astr_eq(&cur->object, e.object.p, e.object.len) ||
            !astr_eq(&cur->username, e.username.p, e.username.len))
            continue;
        log_entry m = *cur;
        fri_free(m.cinfo.p);
        m.cinfo = e.cinfo;
        m.ctime = e.ctime;
        m.count++;
        memmove(a->log + 1, a->log, i * sizeof(*a->log));
        a->log[0] = m;
        fri_free(e.object.p);
        fri_free(e.username.p);
        return;
    }
    log_entry *n = fri_realloc(a->log, (a->nlog + 1) * sizeof(*n));
    memmove(n + 1, n, a->nlog * sizeof(*n));
    n[0] = e;
    a->log = n;
    a->nlog++;
    while (a->nlog > LOG_MAX) log_entry_free(&a->log[--a->nlog]);
}

/* Redis's rejectCommand: a refused EXEC aborts the transaction (execCommandAbort, even
 * outside MULTI), anything else inside MULTI dooms it. */
static void reject_with(fr_client *c, const fri_command *cmd, const char *err)
{
    fri_stats_rejected(c->srv, cmd);
    if (strcmp(cmd->name, "exec") == 0) {
        fri_multi_reset(c);
        fri_unwatch_all(c);
        fri_reply_errorf(c, "EXECABORT Transaction discarded because of: %s", err);
        return;
    }
    if (c->in_multi) c->dirty_exec = 1;
    fri_reply_error(c, err);
}

int fri_acl_noauth(fr_client *c, const fri_command *cmd)
{
    if (c->authenticated || !fr_server_auth_required(c->srv)) return 0;
    const fri_cmd_meta *m = fri_meta_find(cmd->name, strlen(cmd->name));
    if (m && (m->flags & FRI_MF_NO_AUTH)) return 0;
    reject_with(c, cmd, "NOAUTH Authentication required.");
    return -1;
}

/* The NOPERM error text of a refusal (processCommand's words), without the '-'. */
static void noperm_text(int r, const fri_cmd_meta *m, char *err, size_t cap)
{
    if (r == DENIED_CMD)
        snprintf(err, cap, "NOPERM this user has no permissions to run the '%s' command",
                 m->name);
    else if (r == DENIED_KEY)
        snprintf(err, cap, "NOPERM this user has no permissions to access one of the keys "
                           "used as arguments");
    else
        snprintf(err, cap, "NOPERM this user has no permissions to access one of the channels "
                           "used as arguments");
}

static int client_acl_check_guarded(fr_client *c, int argc, const char *const *argv,
                                    const size_t *argvlen, char *err, size_t cap)
{
    if (!c->srv->acl || argc < 1) return 0;
    const fri_acl_user *u = client_user(c);
    fri_arg small[16], *av = argc <= 16 ? small : fri_malloc(sizeof(*av) * (size_t)argc);
    for (int i = 0; i < argc; i++) av[i] = (fri_arg){argv[i], argvlen ? argvlen[i] : strlen(argv[i])};
    const fri_cmd_meta *m = acl_lookup_argv(argc, av);
    const char *ext = m ? NULL : fri_ext_lookup_argv(c->srv, argc, av);
    int idx = 0, r = m ? user_check(u, m, argc, av, &idx) : ACL_OK;
    if (ext && !user_may_run_extensions(u)) {
        int ctx = c->in_multi ? CTX_MULTI : CTX_TOPLEVEL;
        log_add(c, DENIED_CMD, ctx, ext, strlen(ext), u->name, u->namelen);
        snprintf(err, cap, "NOPERM this user has no permissions to run the '%s' command", ext);
        r = DENIED_CMD;
    } else if (r != ACL_OK) {
        int ctx = c->in_multi ? CTX_MULTI : CTX_TOPLEVEL;
        if (r == DENIED_CMD) log_add(c, r, ctx, m->name, strlen(m->name), u->name, u->namelen);
        else log_add(c, r, ctx, av[idx].ptr, av[idx].len, u->name, u->namelen);
        noperm_text(r, m, err, cap);
    }
    if (av != small) fri_free(av);
    return r == ACL_OK ? 0 : -1;
}

int fr_client_acl_check(fr_client *c, int argc, const char *const *argv, const size_t *argvlen,
                        char *err, size_t cap)
{
    fr_server *guard = fri_mem_enter(c->srv, "fr_client_acl_check");
    int r = client_acl_check_guarded(c, argc, argv, argvlen, err, cap);
    fri_mem_leave(guard);
    return r;
}

int fri_acl_check(fr_client *c, const fri_command *cmd)
{
    const fri_acl_user *u = client_user(c);
    const selector *root = &u->sel[0];
    if (u->nsel == 1 && (root->flags & (SEL_ALLCOMMANDS | SEL_ALLKEYS | SEL_ALLCHANNELS)) ==
                            (SEL_ALLCOMMANDS | SEL_ALLKEYS | SEL_ALLCHANNELS))
        return 0;
    const fri_cmd_meta *m = fri_meta_find(cmd->name, strlen(cmd->name));
    if (!m) return 0; /* not one of Redis's: nothing in the ACLs names it */
    int idx = 0;
    int r = user_check(u, m, c->argc, c->argv, &idx);
    if (r == ACL_OK) return 0;
    int ctx = c->in_multi ? CTX_MULTI : CTX_TOPLEVEL;
    if (r == DENIED_CMD) log_add(c, r, ctx, m->name, strlen(m->name), u->name, u->namelen);
    else log_add(c, r, ctx, c->argv[idx].ptr, c->argv[idx].len, u->name, u->namelen);
    char err[200];
    noperm_text(r, m, err, sizeof(err));
    reject_with(c, cmd, err);
    return -1;
}

const char *fri_acl_script_check(fr_client *caller, fr_client *lc, const fri_command *cmd)
{
    if (!caller->srv->acl) return NULL;
    const fri_acl_user *u = client_user(caller);
    const fri_cmd_meta *m = fri_meta_find(cmd->name, strlen(cmd->name));
    if (!m) return NULL;
    int idx = 0;
    int r = user_check(u, m, lc->argc, lc->argv, &idx);
    if (r == ACL_OK) return NULL;
    /* logged as the script's caller (Redis's script_caller) */
    const fri_command *was = caller->cmd;
    caller->cmd = cmd;
    if (r == DENIED_CMD) log_add(caller, r, CTX_LUA, m->name, strlen(m->name), u->name, u->namelen);
    else log_add(caller, r, CTX_LUA, lc->argv[idx].ptr, lc->argv[idx].len, u->name, u->namelen);
    caller->cmd = was;
    switch (r) { /* scriptVerifyACL with getAclErrorMessage */
    case DENIED_CMD: return "The user executing the script can't run this command or subcommand";
    case DENIED_KEY:
        return "The user executing the script can't access at least one of the keys mentioned "
               "in the command arguments";
    default:
        return "The user executing the script can't publish to the channel mentioned in the "
               "command";
    }
}

int fri_acl_user_may(fr_client *caller, int argc, const fri_arg *argv)
{
    const fri_cmd_meta *m = argc > 0 ? acl_lookup_argv(argc, argv) : NULL;
    if (!m) return -1;
    if (!caller->srv->acl) return 1;
    int idx = 0;
    return user_check(client_user(caller), m, argc, argv, &idx) == ACL_OK;
}

int fri_acl_exec_check(fr_client *c, const fri_command *cmd, int argc, const fri_arg *argv)
{
    if (!c->srv->acl) return 0;
    const fri_acl_user *u = client_user(c);
    const fri_cmd_meta *m = fri_meta_find(cmd->name, strlen(cmd->name));
    if (!m) return 0;
    int idx = 0;
    int r = user_check(u, m, argc, argv, &idx);
    if (r == ACL_OK) return 0;
    if (r == DENIED_CMD) log_add(c, r, CTX_MULTI, m->name, strlen(m->name), u->name, u->namelen);
    else log_add(c, r, CTX_MULTI, argv[idx].ptr, argv[idx].len, u->name, u->namelen);
    fri_reply_errorf(c, "NOPERM ACLs rules changed between the moment the transaction was "
                        "accumulated and the EXEC call. This command is no longer allowed for "
                        "the following reason: %s",
                     r == DENIED_CMD   ? "no permission to execute the command or subcommand"
                     : r == DENIED_KEY ? "no permission to touch the specified keys"
                                       : "no permission to access one of the channels used "
                                         "as arguments");
    return -1;
}

/* ----- Authentication ------------------------------------------------------------------- */

/* ACLCheckUserCredentials */
static fri_acl_user *credentials(fr_server *s, const char *user, size_t ulen, const char *pass,
                                 size_t plen)
{
    fri_acl_user *u = user_get(acl_get(s), user, ulen);
    if (!u || (u->flags & USER_DISABLED)) return NULL;
    if (u->flags & USER_NOPASS) return u;
    char h[64];
    hash_password(pass, plen, h);
    for (size_t i = 0; i < u->npw; i++)
        if (astr_eq(&u->pw[i], h, 64)) return u;
    return NULL;
}

static int client_auth_guarded(fr_client *c, const char *verb, size_t vlen, const char *user,
                               size_t ulen, const char *pass, size_t plen)
{
    if (!user) {
        user = "default";
        ulen = 7;
    }
    fri_acl_user *u = credentials(c->srv, user, ulen, pass, plen);
    if (u) {
        c->user = u;
        c->authenticated = 1;
        return 0;
    }
    if (!verb) {
        verb = "AUTH";
        vlen = 4;
    }
    log_add(c, DENIED_AUTH, c->in_multi ? CTX_MULTI : CTX_TOPLEVEL, verb, vlen, user, ulen);
    return -1;
}

int fr_client_auth(fr_client *c, const char *verb, size_t vlen, const char *user, size_t ulen,
                   const char *pass, size_t plen)
{
    fr_server *guard = fri_mem_enter(c->srv, "fr_client_auth");
    int r = client_auth_guarded(c, verb, vlen, user, ulen, pass, plen);
    fri_mem_leave(guard);
    return r;
}

int fr_server_auth_required(fr_server *s)
{
    if (!s->acl) return 0;
    const fri_acl_user *d = s->acl->def;
    return !(d->flags & USER_NOPASS) || (d->flags & USER_DISABLED);
}

int fr_client_closing(const fr_client *c) { return c->closing; }

int fr_server_has_user(fr_server *s, const char *name, size_t len)
{
    if (!s->acl) return len == 7 && memcmp(name, "default", 7) == 0;
    return user_get(s->acl, name, len) != NULL;
}


int fr_server_default_nopass(fr_server *s)
{
    return !s->acl || (s->acl->def->flags & USER_NOPASS) != 0;
}

static int server_set_requirepass_guarded(fr_server *s, const char *pass, size_t n)
{
    fri_acl_user *d = acl_get(s)->def;
    set_user(d, "resetpass", 9);
    if (pass && n) {
        char *op = fri_malloc(n + 2);
        if (!op) return -1;
        op[0] = '>';
        memcpy(op + 1, pass, n);
        set_user(d, op, n + 1);
        fri_free(op);
    } else {
        set_user(d, "nopass", 6);
    }
    return 0;
}

int fr_server_set_requirepass(fr_server *s, const char *pass, size_t n)
{
    fr_server *guard = fri_mem_enter(s, "fr_server_set_requirepass");
    int r = server_set_requirepass_guarded(s, pass, n);
    fri_mem_leave(guard);
    return r;
}

const char *fr_client_user(fr_client *c, size_t *len)
{
    const fri_acl_user *u = c->user ? c->user : c->srv->acl ? c->srv->acl->def : NULL;
    if (!u) {
        if (len) *len = 7;
        return "default";
    }
    if (len) *len = u->namelen;
    return u->name;
}

/* ----- The commands ---------------------------------------------------------------------- */

/* addReplySubcommandSyntaxError: ACL CAT, GENPASS and LOG with too many arguments */
static int too_many(fr_client *c, int max)
{
    if (c->argc <= max) return 0;
    char up[16];
    size_t n = strnlen(c->argv[0].ptr, c->argv[0].len);
    if (n > sizeof(up) - 1) n = sizeof(up) - 1;
    for (size_t i = 0; i < n; i++)
        up[i] = (char)(c->argv[0].ptr[i] >= 'a' && c->argv[0].ptr[i] <= 'z'
                           ? c->argv[0].ptr[i] - 32 : c->argv[0].ptr[i]);
    up[n] = '\0';
    size_t sl = strnlen(c->argv[1].ptr, c->argv[1].len);
    fri_reply_errorf(c, "ERR unknown subcommand or wrong number of arguments for '%.*s'. "
                        "Try %s HELP.", (int)(sl > 128 ? 128 : sl), c->argv[1].ptr, up);
    return 1;
}

/* AUTH [username] password */
static void auth_command(fr_client *c)
{
    if (c->argc > 3) {
        fri_reply_error(c, "ERR syntax error");
        return;
    }
    struct fri_acl *a = acl_get(c->srv);
    if (c->argc == 2 && (a->def->flags & USER_NOPASS)) {
        fri_reply_error(c, "ERR AUTH <password> called without any password configured for "
                           "the default user. Are you sure your configuration is correct?");
        return;
    }
    const fri_arg *v = &c->argv[0];
    int rc = c->argc == 2
                 ? fr_client_auth(c, v->ptr, v->len, NULL, 0, c->argv[1].ptr, c->argv[1].len)
                 : fr_client_auth(c, v->ptr, v->len, c->argv[1].ptr, c->argv[1].len,
                                  c->argv[2].ptr, c->argv[2].len);
    if (rc == 0) fri_reply_ok(c);
    else fri_reply_error(c, "WRONGPASS invalid username-password pair or user is disabled.");
}

/* The channel patterns of every selector of u, for kill_revoked_subscribers. */
typedef struct chan_list {
    const astr **v;
    size_t n;
} chan_list;

static int chan_listed(const chan_list *l, const char *p, size_t n, int is_pattern)
{
    for (size_t i = 0; i < l->n; i++) {
        const astr *a = l->v[i];
        if (is_pattern ? (a->len == n && memcmp(a->p, p, n) == 0)
                       : fri_glob_match(a->p, a->len, p, n, 0))
            return 1;
    }
    return 0;
}

static int sub_revoked(void *ctx, int kind, const char *p, size_t n)
{
    return !chan_listed(ctx, p, n, kind == 1);
}

/* ACLKillPubsubClientsIfNeeded: when user original becomes nu and loses channels, its
 * clients subscribed to what nu no longer allows are closed (fr_client_closing). */
static void kill_revoked_subscribers(fr_server *s, const fri_acl_user *nu,
                                     const fri_acl_user *original)
{
    for (size_t i = 0; i < nu->nsel; i++)
        if (nu->sel[i].flags & SEL_ALLCHANNELS) return;
    chan_list up = {0};
    for (size_t i = 0; i < nu->nsel; i++) up.n += nu->sel[i].nchans;
    up.v = fri_calloc(up.n ? up.n : 1, sizeof(*up.v));
    up.n = 0;
    for (size_t i = 0; i < nu->nsel; i++)
        for (size_t k = 0; k < nu->sel[i].nchans; k++) up.v[up.n++] = &nu->sel[i].chans[k];
    int match = 1;
    for (size_t i = 0; i < original->nsel && match; i++) {
        const selector *sel = &original->sel[i];
        if (sel->flags & SEL_ALLCHANNELS) match = 0;
        for (size_t k = 0; k < sel->nchans && match; k++) {
            size_t j;
            for (j = 0; j < up.n; j++)
                if (up.v[j]->len == sel->chans[k].len &&
                    memcmp(up.v[j]->p, sel->chans[k].p, up.v[j]->len) == 0)
                    break;
            if (j == up.n) match = 0;
        }
    }
    if (!match)
        for (fr_client *k = s->clients; k; k = k->next)
            if (client_user(k) == original && fri_pubsub_subscribed(k) &&
                fri_pubsub_each(k, sub_revoked, &up))
                k->closing = 1;
    fri_free(up.v);
}

/* ACLMergeSelectorArguments + ACLStringSetUser */
static void acl_setuser_command(fr_client *c)
{
    const fri_arg *name = &c->argv[2];
    if (has_spaces(name->ptr, name->len)) {
        fri_reply_error(c, "ERR Usernames can't contain spaces or null characters");
        return;
    }
    struct fri_acl *a = acl_get(c->srv);
    fri_acl_user *u = user_get(a, name->ptr, name->len);
    /* merge "(a" "b)" into one rule */
    int n = c->argc - 3;
    astr *rules = fri_calloc((size_t)(n ? n : 1), sizeof(*rules));
    int nr = 0, open = -1;
    fri_buf sel = {0};
    for (int j = 0; j < n; j++) {
        const fri_arg *op = &c->argv[3 + j];
        int opens = op->len > 0 && op->ptr[0] == '(', closes = op->len > 0 &&
                                                              op->ptr[op->len - 1] == ')';
        if (opens && !closes) {
            sel.len = 0;
            fri_buf_append(&sel, op->ptr, op->len);
            open = j;
            continue;
        }
        if (open != -1) {
            fri_buf_append(&sel, " ", 1);
            fri_buf_append(&sel, op->ptr, op->len);
            if (closes) {
                open = -1;
                rules[nr++] = astr_new(sel.p, sel.len, 0);
            }
            continue;
        }
        rules[nr++] = astr_new(op->ptr, op->len, 0);
    }
    if (open != -1) {
        const fri_arg *op = &c->argv[3 + open];
        fri_reply_errorf(c, "ERR Unmatched parenthesis in acl selector starting at '%.*s'.",
                         (int)strnlen(op->ptr, op->len), op->ptr);
        goto done;
    }
    fri_acl_user *temp = user_new("__fakeuser__", 12);
    if (u) user_copy(temp, u);
    for (int j = 0; j < nr; j++) {
        int e = set_user(temp, rules[j].p, rules[j].len);
        if (e != E_OK) {
            fri_reply_errorf(c, "ERR Error in ACL SETUSER modifier '%.*s': %s",
                             (int)strlen(rules[j].p), rules[j].p, set_user_error(e));
            user_free(temp);
            goto done;
        }
    }
    if (u) kill_revoked_subscribers(c->srv, temp, u);
    if (!u) {
        u = user_new(name->ptr, name->len);
        user_insert(a, u);
    }
    user_copy(u, temp);
    user_free(temp);
    fri_reply_ok(c);
done:
    astr_list_free(rules, (size_t)nr);
    fri_buf_free(&sel);
}

static void acl_deluser_command(fr_client *c)
{
    struct fri_acl *a = acl_get(c->srv);
    for (int j = 2; j < c->argc; j++)
        if (strnlen(c->argv[j].ptr, c->argv[j].len) == 7 &&
            strncmp(c->argv[j].ptr, "default", 7) == 0) {
            fri_reply_error(c, "ERR The 'default' user cannot be removed");
            return;
        }
    long deleted = 0;
    for (int j = 2; j < c->argc; j++) {
        int found;
        size_t i = user_pos(a, c->argv[j].ptr, c->argv[j].len, &found);
        if (!found) continue;
        fri_acl_user *u = a->users[i];
        memmove(a->users + i, a->users + i + 1, (a->nusers - i - 1) * sizeof(*a->users));
        a->nusers--;
        /* ACLFreeUserAndKillClients: its connections are closed */
        for (fr_client *k = c->srv->clients; k; k = k->next)
            if (k->user == u) {
                k->user = NULL;
                k->closing = 1;
            }
        user_free(u);
        deleted++;
    }
    fri_reply_ll(c, deleted);
}

static void acl_getuser_command(fr_client *c)
{
    const fri_acl_user *u = user_get(acl_get(c->srv), c->argv[2].ptr, c->argv[2].len);
    if (!u) {
        fri_reply_null_proto(c);
        return;
    }
    fri_reply_map_len_proto(c, 6);
    fri_reply_bulk_cstr(c, "flags");
    long nf = 0;
    for (size_t j = 0; j < 5; j++) nf += (u->flags & user_flags[j].flag) != 0;
    fri_reply_set_len_proto(c, nf);
    for (size_t j = 0; j < 5; j++)
        if (u->flags & user_flags[j].flag) fri_reply_bulk_cstr(c, user_flags[j].name);
    fri_reply_bulk_cstr(c, "passwords");
    fri_reply_array_len(c, (long)u->npw);
    for (size_t i = 0; i < u->npw; i++) fri_reply_bulk(c, u->pw[i].p, u->pw[i].len);
    reply_selector(c, &u->sel[0]);
    fri_reply_bulk_cstr(c, "selectors");
    fri_reply_array_len(c, (long)u->nsel - 1);
    for (size_t i = 1; i < u->nsel; i++) {
        fri_reply_map_len_proto(c, 3);
        reply_selector(c, &u->sel[i]);
    }
}

static void acl_list_command(fr_client *c)
{
    struct fri_acl *a = acl_get(c->srv);
    fri_reply_array_len(c, (long)a->nusers);
    fri_buf b = {0};
    for (size_t i = 0; i < a->nusers; i++) {
        b.len = 0;
        fri_buf_append(&b, "user ", 5);
        fri_buf_append(&b, a->users[i]->name, a->users[i]->namelen);
        fri_buf_append(&b, " ", 1);
        describe_user(a->users[i], &b);
        fri_reply_bulk(c, b.p, b.len);
    }
    fri_buf_free(&b);
}

static void acl_users_command(fr_client *c)
{
    struct fri_acl *a = acl_get(c->srv);
    fri_reply_array_len(c, (long)a->nusers);
    for (size_t i = 0; i < a->nusers; i++)
        fri_reply_bulk(c, a->users[i]->name, a->users[i]->namelen);
}

static void acl_whoami_command(fr_client *c)
{
    const fri_acl_user *u = client_user(c);
    fri_reply_bulk(c, u->name, u->namelen);
}

static void acl_load_save_command(fr_client *c)
{
    /* the fake has no aclfile, like a redis-server started without one */
    fri_reply_error(c, "ERR This Redis instance is not configured to use an ACL file. You may "
                       "want to specify users via the ACL SETUSER command and then issue a "
                       "CONFIG REWRITE (assuming you have a Redis configuration file set) in "
                       "order to store users in the Redis configuration.");
}

static void acl_cat_command(fr_client *c)
{
    if (c->argc == 2) {
        fri_reply_array_len(c, FRI_ACL_CATEGORIES);
        for (int j = 0; j < FRI_ACL_CATEGORIES; j++) fri_reply_bulk_cstr(c, category_names[j]);
        return;
    }
    if (too_many(c, 3)) return;
    uint32_t cat = fri_acl_category_bit(c->argv[2].ptr, c->argv[2].len);
    if (!cat) {
        fri_reply_errorf(c, "ERR Unknown category '%.*s'",
                         (int)(c->argv[2].len > 128 ? 128 : c->argv[2].len), c->argv[2].ptr);
        return;
    }
    long n = 0;
    size_t next = (cat & EXTENSION_ACL) ? fri_ext_count(c->srv) : 0;
    for (size_t i = 0; i < fri_cmd_meta_count; i++) n += (fri_cmd_meta_table[i].acl & cat) != 0;
    fri_reply_array_len(c, n + (long)next);
    for (size_t i = 0; i < fri_cmd_meta_count; i++)
        if (fri_cmd_meta_table[i].acl & cat) fri_reply_bulk_cstr(c, fri_cmd_meta_table[i].name);
    for (size_t i = 0; i < next; i++) fri_reply_bulk_cstr(c, fri_ext_name(c->srv, i));
}

static void acl_genpass_command(fr_client *c)
{
    long long bits = 256;
    if (too_many(c, 3)) return;
    if (c->argc == 3) {
        if (!fri_string2ll(c->argv[2].ptr, c->argv[2].len, &bits)) {
            fri_reply_error(c, "ERR value is not an integer or out of range");
            return;
        }
    }
    if (bits <= 0 || bits > 4096) {
        fri_reply_error(c, "ERR ACL GENPASS argument must be the number of bits for the output "
                           "password, a positive number up to 4096");
        return;
    }
    /* the fake's seeded generator, not the system's: runs are reproducible */
    static const char hex[] = "0123456789abcdef";
    char pass[1024];
    long chars = (long)(bits + 3) / 4;
    uint64_t r = 0;
    for (long i = 0; i < chars; i++) {
        if (i % 16 == 0) r = fri_random(c->srv);
        pass[i] = hex[r & 15];
        r >>= 4;
    }
    fri_reply_bulk(c, pass, (size_t)chars);
}

static void acl_log_command(fr_client *c)
{
    struct fri_acl *a = acl_get(c->srv);
    long long count = 10;
    if (too_many(c, 3)) return;
    if (c->argc == 3) {
        if (fri_arg_is(&c->argv[2], "reset")) {
            for (size_t i = 0; i < a->nlog; i++) log_entry_free(&a->log[i]);
            a->nlog = 0;
            fri_reply_ok(c);
            return;
        }
        if (!fri_string2ll(c->argv[2].ptr, c->argv[2].len, &count)) {
            fri_reply_error(c, "ERR value is not an integer or out of range");
            return;
        }
        if (count < 0) count = 0;
    }
    if ((size_t)count > a->nlog) count = (long long)a->nlog;
    fri_reply_array_len(c, (long)count);
    int64_t now = fr_clock_now(c->srv);
    static const char *const reasons[] = {"unknown", "command", "key", "auth", "channel"};
    static const char *const contexts[] = {"toplevel", "lua", "multi", "module"};
    for (long long i = 0; i < count; i++) {
        const log_entry *e = &a->log[i];
        fri_reply_map_len_proto(c, 7);
        fri_reply_bulk_cstr(c, "count");
        fri_reply_ll(c, e->count);
        fri_reply_bulk_cstr(c, "reason");
        fri_reply_bulk_cstr(c, reasons[e->reason]);
        fri_reply_bulk_cstr(c, "context");
        fri_reply_bulk_cstr(c, contexts[e->context]);
        fri_reply_bulk_cstr(c, "object");
        fri_reply_bulk(c, e->object.p, e->object.len);
        fri_reply_bulk_cstr(c, "username");
        fri_reply_bulk(c, e->username.p, e->username.len);
        fri_reply_bulk_cstr(c, "age-seconds");
        double age = (double)(now - e->ctime) / 1000;
        if (c->proto == 3) {
            char buf[64];
            size_t n = fri_d2string(buf, sizeof(buf), age);
            fri_buf_printf(&c->out, ",%.*s\r\n", (int)n, buf);
        } else {
            fri_reply_double(c, age);
        }
        fri_reply_bulk_cstr(c, "client-info");
        fri_reply_bulk(c, e->cinfo.p, e->cinfo.len);
    }
}

static void acl_dryrun_command(fr_client *c)
{
    const fri_acl_user *u = user_get(acl_get(c->srv), c->argv[2].ptr, c->argv[2].len);
    if (!u) {
        fri_reply_errorf(c, "ERR User '%.*s' not found", (int)strnlen(c->argv[2].ptr,
                                                                       c->argv[2].len),
                         c->argv[2].ptr);
        return;
    }
    int argc = c->argc - 3;
    const fri_arg *argv = c->argv + 3;
    const fri_cmd_meta *m = acl_lookup_argv(argc, argv);
    const char *ext = m ? NULL : fri_ext_lookup_argv(c->srv, argc, argv);
    if (ext) {
        if (user_may_run_extensions(u)) {
            fri_reply_ok(c);
            return;
        }
        fri_buf b = {0};
        fri_buf_printf(&b, "This user has no permissions to run the '%s' command", ext);
        fri_reply_bulk(c, b.p, b.len);
        fri_buf_free(&b);
        return;
    }
    if (!m) {
        fri_reply_errorf(c, "ERR Command '%.*s' not found", (int)strnlen(argv[0].ptr,
                                                                          argv[0].len),
                         argv[0].ptr);
        return;
    }
    if ((m->arity > 0 && m->arity != argc) || argc < -m->arity) {
        fri_reply_errorf(c, "ERR wrong number of arguments for '%s' command", m->name);
        return;
    }
    int idx = 0;
    int r = user_check(u, m, argc, argv, &idx);
    if (r == ACL_OK) {
        fri_reply_ok(c);
        return;
    }
    fri_buf b = {0};
    if (r == DENIED_CMD)
        fri_buf_printf(&b, "This user has no permissions to run the '%s' command", m->name);
    else {
        fri_buf_printf(&b, "This user has no permissions to access the '%.*s' %s",
                       (int)strnlen(argv[idx].ptr, argv[idx].len), argv[idx].ptr,
                       r == DENIED_KEY ? "key" : "channel");
    }
    fri_reply_bulk(c, b.p, b.len);
    fri_buf_free(&b);
}

static void acl_help_command(fr_client *c)
{
    static const char *const help[] = {
        "CAT [<category>]",
        "    List all commands that belong to <category>, or all command categories",
        "    when no category is specified.",
        "DELUSER <username> [<username> ...]",
        "    Delete a list of users.",
        "DRYRUN <username> <command> [<arg> ...]",
        "    Returns whether the user can execute the given command without executing the "
        "command.",
        "GETUSER <username>",
        "    Get the user's details.",
        "GENPASS [<bits>]",
        "    Generate a secure 256-bit user password. The optional `bits` argument can",
        "    be used to specify a different size.",
        "LIST",
        "    Show users details in config file format.",
        "LOAD",
        "    Reload users from the ACL file.",
        "LOG [<count> | RESET]",
        "    Show the ACL log entries.",
        "SAVE",
        "    Save the current config to the ACL file.",
        "SETUSER <username> <attribute> [<attribute> ...]",
        "    Create or modify a user with the specified attributes.",
        "USERS",
        "    List all the registered usernames.",
        "WHOAMI",
        "    Return the current connection username.",
        NULL,
    };
    fri_reply_help(c, help);
}

/* Arity and flags are Redis 7.0.15's (cmd_meta_table.c) */
#define ADM (FRI_CMD_ADMIN | FRI_CMD_NOSCRIPT | FRI_CMD_LOADING | FRI_CMD_STALE)
static const fri_command acl_subcommands[] = {
    {"acl|cat", acl_cat_command, -2, FRI_CMD_NOSCRIPT | FRI_CMD_LOADING | FRI_CMD_STALE,
     "server", 0, 0, 0, NULL, NULL},
    {"acl|deluser", acl_deluser_command, -3, ADM, "server", 0, 0, 0, NULL, NULL},
    {"acl|dryrun", acl_dryrun_command, -4, ADM, "server", 0, 0, 0, NULL, NULL},
    {"acl|genpass", acl_genpass_command, -2, FRI_CMD_NOSCRIPT | FRI_CMD_LOADING | FRI_CMD_STALE,
     "server", 0, 0, 0, NULL, NULL},
    {"acl|getuser", acl_getuser_command, 3, ADM, "server", 0, 0, 0, NULL, NULL},
    {"acl|help", acl_help_command, 2, FRI_CMD_LOADING | FRI_CMD_STALE, "server", 0, 0, 0, NULL,
     NULL},
    {"acl|list", acl_list_command, 2, ADM, "server", 0, 0, 0, NULL, NULL},
    {"acl|load", acl_load_save_command, 2, ADM, "server", 0, 0, 0, NULL, NULL},
    {"acl|log", acl_log_command, -2, ADM, "server", 0, 0, 0, NULL, NULL},
    {"acl|save", acl_load_save_command, 2, ADM, "server", 0, 0, 0, NULL, NULL},
    {"acl|setuser", acl_setuser_command, -3, ADM, "server", 0, 0, 0, NULL, NULL},
    {"acl|users", acl_users_command, 2, ADM, "server", 0, 0, 0, NULL, NULL},
    {"acl|whoami", acl_whoami_command, 2, FRI_CMD_NOSCRIPT | FRI_CMD_LOADING | FRI_CMD_STALE,
     "server", 0, 0, 0, NULL, NULL},
    {0},
};

const fri_command fri_acl_commands[] = {
    {"acl", NULL, -2, FRI_CMD_CONTAINER, "server", 0, 0, 0, NULL, acl_subcommands},
    {"auth", auth_command, -2, FRI_CMD_NOSCRIPT | FRI_CMD_LOADING | FRI_CMD_STALE |
                                   FRI_CMD_FAST | FRI_CMD_ALLOW_BUSY,
     "connection", 0, 0, 0, NULL, NULL},
    {0},
};
