/* command.c -- COMMAND and its subcommands (COUNT, INFO, DOCS, LIST, GETKEYS,
 * GETKEYSANDFLAGS, HELP), answered from Redis 7.0.15's own description of its commands
 * (cmd_meta.h, recorded from a running redis-server) for the commands this server has:
 * the fake's command table plus what the embedder declares (fr_server_declare_command).
 *
 * Redis walks its command dict, whose order depends on a hash seed drawn at start-up, so
 * two redis-servers list their commands in two orders; the fake lists them by name (the
 * differential tests compare such replies as sets).  The embedder's own commands that
 * Redis does not have (fakeredis-server's FAKE.*) are described by COMMAND INFO and DOCS
 * when named, and left out of COMMAND, COUNT and LIST, so those show Redis's set.
 *
 * Key extraction (COMMAND GETKEYS, the ACL key checks) follows db.c's
 * getKeysFromCommandWithSpecs: the key specs, and Redis's getkeys function where the
 * specs cannot say (incomplete or variable-flag specs). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "command_int.h"
#include "reply_int.h"

/* An embedder's command Redis does not have (fr_server_declare_extension). */
typedef struct fri_ext_cmd {
    char *name;    /* lower case; "fake.time|get" for a subcommand */
    int arity;     /* as its handler checks it */
    char *summary; /* COMMAND DOCS's summary */
} fri_ext_cmd;

/* Rows of the fake's own command table, by metadata row (set once per process). */
static uint8_t builtin[FRI_CMD_META_MAX];

/* ----- Finding rows --------------------------------------------------------------------- */

/* The row named p[0..n) exactly (case-insensitive), or NULL. */
const fri_cmd_meta *fri_meta_find(const char *p, size_t n)
{
    char name[64];
    if (n == 0 || n >= sizeof(name)) return NULL;
    for (size_t i = 0; i < n; i++)
        name[i] = (char)(p[i] >= 'A' && p[i] <= 'Z' ? p[i] + 32 : p[i]);
    name[n] = '\0';
    if (memchr(name, '\0', n)) return NULL;
    size_t lo = 0, hi = fri_cmd_meta_count;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        int cmp = strcmp(fri_cmd_meta_table[mid].name, name);
        if (cmp == 0) return &fri_cmd_meta_table[mid];
        if (cmp < 0) lo = mid + 1;
        else hi = mid;
    }
    return NULL;
}

static size_t row_of(const fri_cmd_meta *m) { return (size_t)(m - fri_cmd_meta_table); }

void fri_meta_mark_builtin(const char *name)
{
    const fri_cmd_meta *m = fri_meta_find(name, strlen(name));
    if (m) builtin[row_of(m)] = 1;
}

/* Whether s has the command of row m: the fake's table or the embedder's declaration; a
 * container when it or one of its subcommands is there. */
static int row_present(const fr_server *s, const fri_cmd_meta *m)
{
    size_t r = row_of(m);
    return builtin[r] || s->cmd_declared[r];
}

int fri_meta_present(const fr_server *s, const fri_cmd_meta *m)
{
    if (row_present(s, m)) return 1;
    for (int i = 0; i < m->nsubs; i++)
        if (row_present(s, &fri_cmd_meta_table[m->first_sub + i])) return 1;
    return 0;
}

const fri_cmd_meta *fri_meta_find_sub(const fri_cmd_meta *base, const fri_arg *name)
{
    char full[128];
    size_t bl = strlen(base->name);
    if (name->len > sizeof(full) - bl - 2) return NULL;
    memcpy(full, base->name, bl);
    full[bl] = '|';
    memcpy(full + bl + 1, name->ptr, name->len);
    const fri_cmd_meta *sub = fri_meta_find(full, bl + 1 + name->len);
    return sub && sub->parent == (int)row_of(base) ? sub : NULL;
}

/* Redis's lookupCommand over this server's commands: argv[0], or argv[0] argv[1] for a
 * container given a subcommand; NULL when absent.  strict (lookupCommandBySds): exactly
 * one or two words. */
static const fri_cmd_meta *lookup_argv(const fr_server *s, int argc, const fri_arg *argv,
                                       int strict)
{
    const fri_cmd_meta *base = fri_meta_find(argv[0].ptr, argv[0].len);
    if (!base || !fri_meta_present(s, base)) return NULL;
    if (argc == 1 || base->nsubs == 0) return strict && argc != 1 ? NULL : base;
    if (strict && argc != 2) return NULL;
    const fri_cmd_meta *sub = fri_meta_find_sub(base, &argv[1]);
    return sub && row_present(s, sub) ? sub : NULL;
}

const fri_cmd_meta *fri_meta_lookup(const fr_server *s, int argc, const fri_arg *argv)
{
    return argc > 0 ? lookup_argv(s, argc, argv, 0) : NULL;
}

/* lookupCommandBySds: "name" or "container|sub". */
static const fri_cmd_meta *lookup_by_name(const fr_server *s, const fri_arg *a)
{
    fri_arg parts[2];
    const char *bar = memchr(a->ptr, '|', a->len);
    if (!bar) return lookup_argv(s, 1, a, 1);
    parts[0] = (fri_arg){a->ptr, (size_t)(bar - a->ptr)};
    parts[1] = (fri_arg){bar + 1, a->len - parts[0].len - 1};
    if (memchr(parts[1].ptr, '|', parts[1].len)) return NULL; /* one level only */
    return lookup_argv(s, 2, parts, 1);
}

/* The embedder's extension named a[0..len), or NULL. */
static const fri_ext_cmd *ext_find(const fr_server *s, const char *p, size_t n)
{
    for (size_t i = 0; i < s->n_ext; i++)
        if (strlen(s->ext[i].name) == n && strncasecmp(s->ext[i].name, p, n) == 0)
            return &s->ext[i];
    return NULL;
}

size_t fri_ext_count(const fr_server *s) { return s->n_ext; }

const char *fri_ext_name(const fr_server *s, size_t i) { return i < s->n_ext ? s->ext[i].name : NULL; }

const char *fri_ext_lookup_argv(const fr_server *s, int argc, const fri_arg *argv)
{
    if (argc < 1 || s->n_ext == 0) return NULL;
    const fri_ext_cmd *e = ext_find(s, argv[0].ptr, argv[0].len);
    if (!e || argc < 2) return e ? e->name : NULL;
    /* a container's subcommand: "name|sub" */
    char full[128];
    size_t nl = strlen(e->name);
    if (nl + 1 + argv[1].len >= sizeof(full)) return e->name;
    memcpy(full, e->name, nl);
    full[nl] = '|';
    memcpy(full + nl + 1, argv[1].ptr, argv[1].len);
    const fri_ext_cmd *sub = ext_find(s, full, nl + 1 + argv[1].len);
    return sub ? sub->name : e->name;
}

/* ----- Declarations by the embedder ------------------------------------------------------ */

static int server_declare_command_guarded(fr_server *s, const char *name)
{
    if (!s || !name) return -1;
    const fri_cmd_meta *m = fri_meta_find(name, strlen(name));
    if (!m) return -1;
    s->cmd_declared[row_of(m)] = 1;
    return 0;
}

int fr_server_declare_command(fr_server *s, const char *name)
{
    fr_server *guard = fri_mem_enter(s, "fr_server_declare_command");
    int r = server_declare_command_guarded(s, name);
    fri_mem_leave(guard);
    return r;
}

static int server_declare_extension_guarded(fr_server *s, const char *name, int arity,
                                            const char *summary)
{
    if (!s || !name || !*name || fri_meta_find(name, strlen(name)) ||
        ext_find(s, name, strlen(name)))
        return -1;
    fri_ext_cmd *n = fri_realloc(s->ext, (s->n_ext + 1) * sizeof(*n));
    if (!n) return -1;
    s->ext = n;
    fri_ext_cmd *e = &s->ext[s->n_ext];
    e->name = fri_strdup(name);
    e->summary = fri_strdup(summary ? summary : "");
    if (!e->name || !e->summary) {
        fri_free(e->name);
        fri_free(e->summary);
        return -1;
    }
    for (char *p = e->name; *p; p++)
        if (*p >= 'A' && *p <= 'Z') *p = (char)(*p + 32);
    e->arity = arity;
    s->n_ext++;
    return 0;
}

int fr_server_declare_extension(fr_server *s, const char *name, int arity, const char *summary)
{
    fr_server *guard = fri_mem_enter(s, "fr_server_declare_extension");
    int r = server_declare_extension_guarded(s, name, arity, summary);
    fri_mem_leave(guard);
    return r;
}

void fri_command_meta_free(fr_server *s)
{
    for (size_t i = 0; i < s->n_ext; i++) {
        fri_free(s->ext[i].name);
        fri_free(s->ext[i].summary);
    }
    fri_free(s->ext);
    s->ext = NULL;
    s->n_ext = 0;
}

/* ----- Writing replies in the client's protocol ------------------------------------------ */

static void map_len(fr_client *c, long n)
{
    if (c->proto == 3) fri_buf_printf(&c->out, "%%%ld\r\n", n);
    else fri_reply_array_len(c, 2 * n);
}

static void set_len(fr_client *c, long n)
{
    if (c->proto == 3) fri_buf_printf(&c->out, "~%ld\r\n", n);
    else fri_reply_array_len(c, n);
}

void fri_reply_map_len_proto(fr_client *c, long n) { map_len(c, n); }
void fri_reply_set_len_proto(fr_client *c, long n) { set_len(c, n); }
void fri_reply_null_proto(fr_client *c)
{
    if (c->proto == 3) fri_reply_raw(c, "_\r\n", 3);
    else fri_reply_nil(c);
}

/* Recorded RESP3 bytes: as they are for a RESP3 client, maps and sets as arrays for
 * RESP2 (what addReplyMapLen and addReplySetLen write there). */
static void reply_blob(fr_client *c, const char *p, size_t n)
{
    if (c->proto == 3) {
        fri_reply_raw(c, p, n);
        return;
    }
    const char *end = p + n;
    while (p < end) {
        const char *eol = memchr(p, '\r', (size_t)(end - p));
        if (!eol) break;
        size_t line = (size_t)(eol - p) + 2;
        if (*p == '%') {
            map_len(c, strtol(p + 1, NULL, 10));
        } else if (*p == '~') {
            set_len(c, strtol(p + 1, NULL, 10));
        } else if (*p == '$') {
            long len = strtol(p + 1, NULL, 10);
            if (len > 0) line += (size_t)len + 2;
            else if (len == 0) line += 2;
            fri_reply_raw(c, p, line);
        } else {
            fri_reply_raw(c, p, line);
        }
        p += line;
    }
}

/* ----- COMMAND INFO / DOCS entries --------------------------------------------------------- */

static void reply_info(fr_client *c, const fri_cmd_meta *m)
{
    fri_reply_array_len(c, 10);
    fri_reply_bulk_cstr(c, m->name);
    reply_blob(c, m->info, m->info_len);
    if (!m->nsubs) { /* addReplyCommandSubCommands: an empty set when none */
        set_len(c, 0);
        return;
    }
    long n = 0;
    for (int i = 0; i < m->nsubs; i++) n += row_present(c->srv, &fri_cmd_meta_table[m->first_sub + i]);
    fri_reply_array_len(c, n);
    for (int i = 0; i < m->nsubs; i++)
        if (row_present(c->srv, &fri_cmd_meta_table[m->first_sub + i]))
            reply_info(c, &fri_cmd_meta_table[m->first_sub + i]);
}

static void reply_docs(fr_client *c, const fri_cmd_meta *m)
{
    map_len(c, m->docs_nfields + (m->nsubs ? 1 : 0));
    reply_blob(c, m->docs, m->docs_len);
    if (!m->nsubs) return;
    long n = 0;
    for (int i = 0; i < m->nsubs; i++) n += row_present(c->srv, &fri_cmd_meta_table[m->first_sub + i]);
    fri_reply_bulk_cstr(c, "subcommands");
    map_len(c, n);
    for (int i = 0; i < m->nsubs; i++) {
        const fri_cmd_meta *sub = &fri_cmd_meta_table[m->first_sub + i];
        if (!row_present(c->srv, sub)) continue;
        fri_reply_bulk_cstr(c, sub->name);
        reply_docs(c, sub);
    }
}

/* The subcommands of extension e ("e|..."), by index into s->ext. */
static size_t ext_subs(const fr_server *s, const fri_ext_cmd *e, size_t *idx, size_t cap)
{
    size_t n = 0, nl = strlen(e->name);
    for (size_t i = 0; i < s->n_ext; i++)
        if (strncmp(s->ext[i].name, e->name, nl) == 0 && s->ext[i].name[nl] == '|' && n < cap)
            idx[n++] = i;
    return n;
}

/* An extension's entry: Redis's shape with the fields the fake can give (no keys, the
 * flags and categories of an administrative command). */
static void reply_ext_info(fr_client *c, const fri_ext_cmd *e)
{
    fri_reply_array_len(c, 10);
    fri_reply_bulk_cstr(c, e->name);
    fri_reply_ll(c, e->arity);
    static const char rest[] = "~4\r\n+admin\r\n+noscript\r\n+loading\r\n+stale\r\n:0\r\n:0\r\n"
                               ":0\r\n~3\r\n+@admin\r\n+@slow\r\n+@dangerous\r\n~0\r\n*0\r\n";
    reply_blob(c, rest, sizeof(rest) - 1);
    size_t idx[32], n = ext_subs(c->srv, e, idx, 32);
    if (!n) { /* no subcommands: an empty set, as Redis's */
        set_len(c, 0);
        return;
    }
    fri_reply_array_len(c, (long)n);
    for (size_t i = 0; i < n; i++) reply_ext_info(c, &c->srv->ext[idx[i]]);
}

static void reply_ext_docs(fr_client *c, const fri_ext_cmd *e)
{
    size_t idx[32], n = ext_subs(c->srv, e, idx, 32);
    map_len(c, n ? 3 : 2);
    fri_reply_bulk_cstr(c, "summary");
    fri_reply_bulk_cstr(c, e->summary);
    fri_reply_bulk_cstr(c, "group");
    fri_reply_bulk_cstr(c, "server");
    if (!n) return;
    fri_reply_bulk_cstr(c, "subcommands");
    map_len(c, (long)n);
    for (size_t i = 0; i < n; i++) {
        fri_reply_bulk_cstr(c, c->srv->ext[idx[i]].name);
        reply_ext_docs(c, &c->srv->ext[idx[i]]);
    }
}

/* ----- Key extraction (db.c's getKeysFromCommandWithSpecs) ------------------------------- */

/* C's atoi on a counted string, as genericGetKeys reads numkeys. */
static long arg_atoi(const fri_arg *a)
{
    size_t i = 0;
    while (i < a->len && (a->ptr[i] == ' ' || (a->ptr[i] >= '\t' && a->ptr[i] <= '\r'))) i++;
    int neg = 0;
    if (i < a->len && (a->ptr[i] == '-' || a->ptr[i] == '+')) neg = a->ptr[i++] == '-';
    long v = 0;
    for (; i < a->len && a->ptr[i] >= '0' && a->ptr[i] <= '9'; i++) {
        v = v * 10 + (a->ptr[i] - '0');
        if (v > 1000000000L) v = 1000000000L;
    }
    return neg ? -v : v;
}

static int add_key(fri_keyref *keys, int n, int cap, int pos, unsigned flags)
{
    if (n < cap) keys[n] = (fri_keyref){pos, flags};
    return n + 1;
}

/* getKeysUsingKeySpecs: -1 when a spec cannot say (unknown, incomplete, out of range). */
static int keys_from_specs(const fri_cmd_meta *m, int argc, const fri_arg *argv,
                           fri_keyref *keys, int cap)
{
    int n = 0;
    for (int j = 0; j < m->nspecs; j++) {
        const fri_keyspec *sp = &m->specs[j];
        if (sp->flags & FRI_KS_NOT_KEY) continue;
        int first = 0, last, step;
        if (sp->bs_type == FRI_BS_INDEX) {
            first = sp->bs_pos;
        } else if (sp->bs_type == FRI_BS_KEYWORD) {
            int start = sp->bs_pos > 0 ? sp->bs_pos : argc + sp->bs_pos;
            int end = sp->bs_pos > 0 ? argc - 1 : 1;
            for (int i = start; i != end; i = start <= end ? i + 1 : i - 1) {
                if (i >= argc || i < 1) break;
                if (fri_arg_is(&argv[i], sp->keyword)) {
                    first = i + 1;
                    break;
                }
            }
            if (!first) continue; /* the keyword is not there */
        } else {
            return -1;
        }
        if (sp->fk_type == FRI_FK_RANGE) {
            step = sp->fk_b;
            if (sp->fk_a >= 0) last = first + sp->fk_a;
            else if (!sp->fk_c) last = argc + sp->fk_a;
            else last = first + ((argc - first) / sp->fk_c + sp->fk_a);
        } else if (sp->fk_type == FRI_FK_KEYNUM) {
            step = sp->fk_c;
            long long numkeys;
            if (sp->fk_a >= argc || first + sp->fk_a >= argc) return -1;
            const fri_arg *na = &argv[first + sp->fk_a];
            if (!fri_string2ll(na->ptr, na->len, &numkeys) || numkeys < 0 || numkeys > argc)
                return -1;
            first += sp->fk_b;
            last = first + (int)numkeys - 1;
        } else {
            return -1;
        }
        if (last >= argc || last < first || first >= argc) return -1;
        for (int i = first; i <= last && step > 0; i += step) n = add_key(keys, n, cap, i, sp->flags);
        if (sp->flags & FRI_KS_INCOMPLETE) return -1;
    }
    return n;
}

/* genericGetKeys */
static int generic_keys(int store, int count_at, int first, int step, int argc,
                        const fri_arg *argv, fri_keyref *keys, int cap)
{
    long num = arg_atoi(&argv[count_at]);
    if (num < 1 || num > (argc - first) / step) return 0;
    int n = 0;
    for (long i = 0; i < num; i++) n = add_key(keys, n, cap, first + (int)i * step, 0);
    if (store) n = add_key(keys, n, cap, store, 0);
    return n;
}

/* Redis's getkeys functions (db.c), by FRI_GK_* */
static int keys_from_function(const fri_cmd_meta *m, int argc, const fri_arg *argv,
                              fri_keyref *keys, int cap)
{
    int n = 0;
    switch (m->getkeys) {
    case FRI_GK_SINTERCARD:
    case FRI_GK_ZUNIONINTERDIFF:
    case FRI_GK_LMPOP:
    case FRI_GK_ZMPOP: return generic_keys(0, 1, 2, 1, argc, argv, keys, cap);
    case FRI_GK_ZUNIONINTERDIFFSTORE: return generic_keys(1, 2, 3, 1, argc, argv, keys, cap);
    case FRI_GK_EVAL:
    case FRI_GK_FUNCTION:
    case FRI_GK_BLMPOP:
    case FRI_GK_BZMPOP: return generic_keys(0, 2, 3, 1, argc, argv, keys, cap);
    case FRI_GK_SORT_RO: return add_key(keys, 0, cap, 1, FRI_KS_RO | FRI_KS_ACCESS);
    case FRI_GK_SORT: {
        static const struct { const char *name; int skip; } skip[] = {
            {"limit", 2}, {"get", 1}, {"by", 1}};
        int store = 0;
        n = add_key(keys, 0, cap, 1, FRI_KS_RO | FRI_KS_ACCESS);
        for (int i = 2; i < argc; i++) {
            for (int j = 0; j < 3; j++) {
                if (fri_arg_is(&argv[i], skip[j].name)) {
                    i += skip[j].skip;
                    break;
                } else if (fri_arg_is(&argv[i], "store") && i + 1 < argc) {
                    store = i + 1; /* the last STORE wins, as in SORT */
                    break;
                }
            }
        }
        if (store) n = add_key(keys, n, cap, store, FRI_KS_OW | FRI_KS_UPDATE);
        return n;
    }
    case FRI_GK_MIGRATE: {
        static const struct { const char *name; int skip; } skip[] = {
            {"copy", 0}, {"replace", 0}, {"auth", 1}, {"auth2", 2}};
        int first = 3, num = 1;
        if (argc > 6) {
            for (int i = 6; i < argc; i++) {
                if (fri_arg_is(&argv[i], "keys")) {
                    if (argv[3].len > 0) num = 0;
                    else {
                        first = i + 1;
                        num = argc - first;
                    }
                    break;
                }
                for (int j = 0; j < 4; j++)
                    if (fri_arg_is(&argv[i], skip[j].name)) {
                        i += skip[j].skip;
                        break;
                    }
            }
        }
        for (int i = 0; i < num; i++)
            n = add_key(keys, n, cap, first + i, FRI_KS_RW | FRI_KS_ACCESS | FRI_KS_DELETE);
        return n;
    }
    case FRI_GK_GEORADIUS: {
        int stored = -1;
        for (int i = 5; i < argc; i++)
            if ((fri_arg_is(&argv[i], "store") || fri_arg_is(&argv[i], "storedist")) &&
                i + 1 < argc) {
                stored = i + 1;
                i++;
            }
        n = add_key(keys, 0, cap, 1, 0);
        if (stored != -1) n = add_key(keys, n, cap, stored, 0);
        return n;
    }
    case FRI_GK_XREAD: {
        int streams = -1;
        for (int i = 1; i < argc; i++) {
            if (fri_arg_is(&argv[i], "block") || fri_arg_is(&argv[i], "count")) i++;
            else if (fri_arg_is(&argv[i], "group")) i += 2;
            else if (fri_arg_is(&argv[i], "noack")) continue;
            else {
                if (fri_arg_is(&argv[i], "streams")) streams = i;
                break;
            }
        }
        int num = streams == -1 ? 0 : argc - streams - 1;
        if (streams == -1 || num == 0 || num % 2) return 0;
        for (int i = streams + 1; i < argc - num / 2; i++) n = add_key(keys, n, cap, i, 0);
        return n;
    }
    case FRI_GK_SET:
        for (int i = 3; i < argc; i++)
            if (argv[i].len == 3 && strncasecmp(argv[i].ptr, "get", 3) == 0)
                return add_key(keys, 0, cap, 1, FRI_KS_RW | FRI_KS_ACCESS | FRI_KS_UPDATE);
        return add_key(keys, 0, cap, 1, FRI_KS_OW | FRI_KS_UPDATE);
    case FRI_GK_BITFIELD: {
        int readonly = 1;
        for (int i = 2; i < argc; i++) {
            int rem = argc - i - 1;
            if (fri_arg_is(&argv[i], "get") && rem >= 2) i += 2;
            else if ((fri_arg_is(&argv[i], "set") || fri_arg_is(&argv[i], "incrby")) &&
                     rem >= 3) {
                readonly = 0;
                break;
            } else if (fri_arg_is(&argv[i], "overflow") && rem >= 1) i += 1;
            else {
                readonly = 0;
                break;
            }
        }
        return add_key(keys, 0, cap, 1,
                       readonly ? FRI_KS_RO | FRI_KS_ACCESS
                                : FRI_KS_RW | FRI_KS_ACCESS | FRI_KS_UPDATE);
    }
    default: return 0;
    }
}

int fri_meta_has_keys(const fri_cmd_meta *m)
{
    if (m->getkeys != FRI_GK_NONE) return 1;
    for (int j = 0; j < m->nspecs; j++)
        if (!(m->specs[j].flags & FRI_KS_NOT_KEY)) return 1;
    return 0;
}

int fri_meta_getkeys(const fri_cmd_meta *m, int argc, const fri_arg *argv, fri_keyref *keys,
                     int cap)
{
    int has_spec = 0, varflags = 0;
    for (int j = 0; j < m->nspecs; j++) {
        if (!(m->specs[j].flags & FRI_KS_NOT_KEY)) has_spec = 1;
        if (m->specs[j].flags & FRI_KS_VARIABLE_FLAGS) varflags = 1;
    }
    if (has_spec && !varflags) {
        int n = keys_from_specs(m, argc, argv, keys, cap);
        if (n >= 0) return n < cap ? n : cap;
    }
    int n = keys_from_function(m, argc, argv, keys, cap);
    return n < cap ? n : cap;
}

/* ----- The commands ---------------------------------------------------------------------- */

/* The top-level rows present, in table (name) order: COMMAND, COUNT, LIST. */
static long present_toplevel(const fr_server *s)
{
    long n = 0;
    for (size_t i = 0; i < fri_cmd_meta_count; i++)
        if (fri_cmd_meta_table[i].parent < 0 && fri_meta_present(s, &fri_cmd_meta_table[i])) n++;
    return n;
}

static void command_all(fr_client *c)
{
    fri_reply_array_len(c, present_toplevel(c->srv));
    for (size_t i = 0; i < fri_cmd_meta_count; i++) {
        const fri_cmd_meta *m = &fri_cmd_meta_table[i];
        if (m->parent < 0 && fri_meta_present(c->srv, m)) reply_info(c, m);
    }
}

static void command_command(fr_client *c) { command_all(c); }

static void command_count_command(fr_client *c) { fri_reply_ll(c, present_toplevel(c->srv)); }

static void command_info_command(fr_client *c)
{
    if (c->argc == 2) {
        command_all(c);
        return;
    }
    fri_reply_array_len(c, c->argc - 2);
    for (int i = 2; i < c->argc; i++) {
        const fri_cmd_meta *m = lookup_by_name(c->srv, &c->argv[i]);
        const fri_ext_cmd *e = m ? NULL : ext_find(c->srv, c->argv[i].ptr, c->argv[i].len);
        if (m) reply_info(c, m);
        else if (e) reply_ext_info(c, e);
        else fri_reply_null_proto(c);
    }
}

static void command_docs_command(fr_client *c)
{
    if (c->argc == 2) {
        map_len(c, present_toplevel(c->srv));
        for (size_t i = 0; i < fri_cmd_meta_count; i++) {
            const fri_cmd_meta *m = &fri_cmd_meta_table[i];
            if (m->parent >= 0 || !fri_meta_present(c->srv, m)) continue;
            fri_reply_bulk_cstr(c, m->name);
            reply_docs(c, m);
        }
        return;
    }
    size_t h = fri_reply_deferred_len(c);
    long n = 0;
    for (int i = 2; i < c->argc; i++) {
        const fri_cmd_meta *m = lookup_by_name(c->srv, &c->argv[i]);
        const fri_ext_cmd *e = m ? NULL : ext_find(c->srv, c->argv[i].ptr, c->argv[i].len);
        if (!m && !e) continue;
        fri_reply_bulk_cstr(c, m ? m->name : e->name);
        if (m) reply_docs(c, m);
        else reply_ext_docs(c, e);
        n++;
    }
    if (c->proto == 3) {
        char head[32];
        int hl = snprintf(head, sizeof(head), "%%%ld\r\n", n);
        fri_buf_reserve(&c->out, (size_t)hl);
        memmove(c->out.p + h + hl, c->out.p + h, c->out.len - h);
        memcpy(c->out.p + h, head, (size_t)hl);
        c->out.len += (size_t)hl;
    } else {
        fri_reply_set_deferred_map_len(c, h, n);
    }
}

/* COMMAND LIST [FILTERBY MODULE name|ACLCAT category|PATTERN pattern] */
static void command_list_command(fr_client *c)
{
    enum { NONE, MODULE, ACLCAT, PATTERN } filter = NONE;
    const fri_arg *arg = NULL;
    for (int i = 2; i < c->argc; i++) {
        if (fri_arg_is(&c->argv[i], "filterby") && c->argc - 1 - i == 2) {
            const fri_arg *t = &c->argv[i + 1];
            if (fri_arg_is(t, "module")) filter = MODULE;
            else if (fri_arg_is(t, "aclcat")) filter = ACLCAT;
            else if (fri_arg_is(t, "pattern")) filter = PATTERN;
            else {
                fri_reply_error(c, "ERR syntax error");
                return;
            }
            arg = &c->argv[i + 2];
            i += 2;
        } else {
            fri_reply_error(c, "ERR syntax error");
            return;
        }
    }
    uint32_t cat = filter == ACLCAT ? fri_acl_category_bit(arg->ptr, arg->len) : 0;
    size_t h = fri_reply_deferred_len(c);
    long n = 0;
    for (size_t i = 0; i < fri_cmd_meta_count; i++) {
        const fri_cmd_meta *m = &fri_cmd_meta_table[i];
        if (m->parent >= 0 ? !row_present(c->srv, m) || !fri_meta_present(c->srv,
                                                         &fri_cmd_meta_table[m->parent])
                           : !fri_meta_present(c->srv, m))
            continue;
        int keep = 1;
        if (filter == MODULE) keep = 0; /* the fake loads no modules */
        else if (filter == ACLCAT) keep = cat && (m->acl & cat);
        else if (filter == PATTERN)
            keep = fri_glob_match(arg->ptr, arg->len, m->name, strlen(m->name), 1);
        if (!keep) continue;
        fri_reply_bulk_cstr(c, m->name);
        n++;
    }
    fri_reply_set_deferred_len(c, h, n);
}

static const char *const key_flag_names[] = {"RO",     "RW",     "OW",      "RM",
                                             "access", "update", "insert",  "delete",
                                             "not_key", "incomplete", "variable_flags"};

void fri_reply_key_flags(fr_client *c, unsigned flags)
{
    long n = 0;
    for (unsigned b = 0; b < 11; b++) n += (flags >> b) & 1;
    set_len(c, n);
    for (unsigned b = 0; b < 11; b++)
        if (flags & (1u << b)) fri_reply_status(c, key_flag_names[b]);
}

/* getKeysSubcommandImpl */
static void getkeys(fr_client *c, int with_flags)
{
    int argc = c->argc - 2;
    const fri_arg *argv = c->argv + 2;
    const fri_cmd_meta *m = fri_meta_lookup(c->srv, argc, argv);
    if (!m) {
        fri_reply_error(c, "ERR Invalid command specified");
        return;
    }
    if (!fri_meta_has_keys(m)) {
        fri_reply_error(c, "ERR The command has no key arguments");
        return;
    }
    if ((m->arity > 0 && m->arity != argc) || argc < -m->arity) {
        fri_reply_error(c, "ERR Invalid number of arguments specified for command");
        return;
    }
    int cap = 2 * argc + 4;
    fri_keyref small[64], *keys = cap <= 64 ? small : fri_malloc(sizeof(*keys) * (size_t)cap);
    if (!keys) {
        fri_reply_error(c, FRI_ERR_OOM);
        return;
    }
    int n = fri_meta_getkeys(m, argc, argv, keys, cap);
    if (n == 0) {
        if (m->flags & FRI_MF_NO_MANDATORY_KEYS) fri_reply_array_len(c, 0);
        else fri_reply_error(c, "ERR Invalid arguments specified for command");
    } else {
        fri_reply_array_len(c, n);
        for (int i = 0; i < n; i++) {
            if (with_flags) fri_reply_array_len(c, 2);
            fri_reply_bulk(c, argv[keys[i].pos].ptr, argv[keys[i].pos].len);
            if (with_flags) fri_reply_key_flags(c, keys[i].flags);
        }
    }
    if (keys != small) fri_free(keys);
}

static void command_getkeys_command(fr_client *c) { getkeys(c, 0); }
static void command_getkeysandflags_command(fr_client *c) { getkeys(c, 1); }

static void command_help_command(fr_client *c)
{
    static const char *const help[] = {
        "(no subcommand)",
        "    Return details about all Redis commands.",
        "COUNT",
        "    Return the total number of commands in this Redis server.",
        "LIST",
        "    Return a list of all commands in this Redis server.",
        "INFO [<command-name> ...]",
        "    Return details about multiple Redis commands.",
        "    If no command names are given, documentation details for all",
        "    commands are returned.",
        "DOCS [<command-name> ...]",
        "    Return documentation details about multiple Redis commands.",
        "    If no command names are given, documentation details for all",
        "    commands are returned.",
        "GETKEYS <full-command>",
        "    Return the keys from a full Redis command.",
        "GETKEYSANDFLAGS <full-command>",
        "    Return the keys and the access flags from a full Redis command.",
        NULL,
    };
    fri_reply_help(c, help);
}

#define CMD_ST (FRI_CMD_LOADING | FRI_CMD_STALE)
static const fri_command command_subcommands[] = {
    {"command|count", command_count_command, 2, CMD_ST, "server", 0, 0, 0, NULL, NULL},
    {"command|docs", command_docs_command, -2, CMD_ST, "server", 0, 0, 0, NULL, NULL},
    {"command|getkeys", command_getkeys_command, -4, CMD_ST, "server", 0, 0, 0, NULL, NULL},
    {"command|getkeysandflags", command_getkeysandflags_command, -4, CMD_ST, "server", 0, 0,
     0, NULL, NULL},
    {"command|help", command_help_command, 2, CMD_ST, "server", 0, 0, 0, NULL, NULL},
    {"command|info", command_info_command, -2, CMD_ST, "server", 0, 0, 0, NULL, NULL},
    {"command|list", command_list_command, -2, CMD_ST, "server", 0, 0, 0, NULL, NULL},
    {0},
};

/* COMMAND alone runs too: a container with a handler of its own. */
const fri_command fri_command_commands[] = {
    {"command", command_command, -1, FRI_CMD_CONTAINER | CMD_ST, "server", 0, 0, 0, NULL,
     command_subcommands},
    {0},
};
