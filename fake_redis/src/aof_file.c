/* aof_file.c -- one append-only file as Redis 7.0 reads and rewrites it.
 *
 * Loading (loadSingleAppendOnlyFile): a file may start with an RDB file (the "base" of a
 * multi-part AOF written with aof-use-rdb-preamble, or an old-style preamble), then holds
 * commands in RESP (`*argc`, `$len`, the bytes, CRLF), '#' lines being annotations.  The
 * fake checks the whole file first -- the RDB part as a dry run, every command's framing
 * and name -- and refuses it with Redis's lines before anything runs; then the commands
 * run on a client of their own (Redis's AOF client: nothing expires while they run,
 * nothing is propagated, the OOM gate and the call hook are off), MULTI ... EXEC as
 * written.  A file cut short inside a command (or inside a transaction never executed)
 * loads up to its last whole command when truncation is allowed (aof-load-truncated yes),
 * as Redis does, and says where it was cut.
 *
 * Rewriting (rewriteAppendOnlyFileRio): the keyspace and the libraries as the commands
 * that rebuild them -- FUNCTION LOAD, SELECT, SET / RPUSH / SADD / ZADD / HMSET in batches
 * of 64, XADD, XSETID, XGROUP CREATE, XCLAIM ... FORCE, XGROUP CREATECONSUMER,
 * PEXPIREAT -- what aof-use-rdb-preamble no writes as an AOF's base. */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fr_int.h"
#include "rdb_int.h"
#include "script_int.h"
#include "stream_int.h"

#define ITEMS_PER_CMD 64 /* Redis's AOF_REWRITE_ITEMS_PER_CMD */

/* One parsed command: views into the file's bytes. */
typedef struct aof_cmd {
    int argc;
    size_t first; /* index of its first argument in the argument arrays */
} aof_cmd;

typedef struct aof_parse {
    const unsigned char *p;
    size_t len, pos;
    const char **argv; /* every argument of every command, in order */
    size_t *lens;
    size_t nargs, capargs;
    aof_cmd *cmds;
    size_t ncmds, capcmds;
    size_t valid_up_to;     /* the end of the last whole command */
    size_t valid_before_multi;
    int in_multi;           /* a MULTI was read and no EXEC yet */
    size_t multi_cmds;      /* commands before that MULTI */
} aof_parse;

static void say(fr_aof_report *rep, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void say(fr_aof_report *rep, const char *fmt, ...)
{
    size_t used = strlen(rep->error);
    if (used >= sizeof(rep->error) - 1) return;
    if (used) rep->error[used++] = '\n';
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(rep->error + used, sizeof(rep->error) - used, fmt, ap);
    va_end(ap);
}

/* The line at pos (fgets with Redis's 1024-byte buffer: without its newline in reach the
 * rest comes with the next read).  Its length with the newline, 0 at the end. */
static size_t line_at(const aof_parse *a, size_t pos)
{
    size_t room = a->len - pos, max = room < 1023 ? room : 1023;
    const unsigned char *nl = memchr(a->p + pos, '\n', max);
    return nl ? (size_t)(nl - (a->p + pos)) + 1 : max;
}

/* Whether the command's name (and subcommand) is one the fake has (lookupCommand). */
static int known_command(fr_server *s, const char *name, size_t nlen, const char *sub,
                         size_t slen, int argc)
{
    const fri_command *cmd = fri_lookup_command(s, name, nlen);
    if (!cmd) return 0;
    if (!(cmd->flags & FRI_CMD_CONTAINER)) return 1;
    if (argc < 2) return 0;
    fri_arg a = {sub, slen};
    return fri_lookup_subcommand(cmd, &a) != NULL;
}

/* strtoll(p, NULL, 10) (atoi's value too, within int) over the n bytes at p, which need
 * not end in a NUL: leading white space, a sign, digits to the first other byte;
 * saturated as strtoll saturates. */
static long long bounded_strtoll(const char *p, size_t n)
{
    size_t i = 0;
    while (i < n && (p[i] == ' ' || (p[i] >= '\t' && p[i] <= '\r'))) i++;
    int neg = 0;
    if (i < n && (p[i] == '+' || p[i] == '-')) neg = p[i++] == '-';
    unsigned long long v = 0, lim = neg ? (unsigned long long)LLONG_MAX + 1 : LLONG_MAX;
    for (; i < n && p[i] >= '0' && p[i] <= '9'; i++) {
        unsigned d = (unsigned)(p[i] - '0');
        v = v > (lim - d) / 10 ? lim : v * 10 + d;
    }
    return neg ? (v == (unsigned long long)LLONG_MAX + 1 ? LLONG_MIN : -(long long)v)
               : (long long)v;
}

enum { P_OK, P_FORMAT, P_EOF, P_UNKNOWN };

/* Parses the commands from a->pos to the end.  P_OK, or what stopped it (a->pos there). */
static int parse_commands(fr_server *s, aof_parse *a, char *unknown, size_t ucap)
{
    while (a->pos < a->len) {
        size_t n = line_at(a, a->pos);
        const char *line = (const char *)a->p + a->pos;
        if (line[0] == '#') { /* an annotation (#TS:...) */
            a->pos += n;
            continue;
        }
        if (line[0] != '*') return P_FORMAT;
        if (n < 2 || line[n - 1] != '\n') return P_EOF; /* "*" alone at the end */
        long long argcll = bounded_strtoll(line + 1, n - 1);
        if (argcll < 1 || argcll > INT_MAX) return P_FORMAT; /* atoi: 0, or not an int */
        int argc = (int)argcll;
        size_t pos = a->pos + n, first = a->nargs;
        for (int j = 0; j < argc; j++) {
            if (pos >= a->len) return P_EOF;
            a->pos = pos;
            size_t ln = line_at(a, pos);
            const char *l = (const char *)a->p + pos;
            if (l[0] != '$') return P_FORMAT;
            long long alen = bounded_strtoll(l + 1, ln - 1);
            pos += ln;
            if (alen < 0 || (unsigned long long)alen > a->len - pos) return P_EOF;
            if ((size_t)alen + 2 > a->len - pos) return P_EOF; /* its CRLF */
            a->argv = fri_array_grow(a->argv, &a->capargs, a->nargs, sizeof(*a->argv), 16);
            a->lens = fri_realloc(a->lens, a->capargs * sizeof(*a->lens));
            a->argv[a->nargs] = (const char *)a->p + pos;
            a->lens[a->nargs++] = (size_t)alen;
            pos += (size_t)alen + 2;
        }
        const char *sub = argc > 1 ? a->argv[first + 1] : NULL;
        if (!known_command(s, a->argv[first], a->lens[first], sub, argc > 1 ? a->lens[first + 1] : 0,
                           argc)) {
            snprintf(unknown, ucap, "%.*s", (int)strnlen(a->argv[first], a->lens[first]),
                     a->argv[first]);
            return P_UNKNOWN;
        }
        fri_arg name = {a->argv[first], a->lens[first]};
        if (fri_arg_is(&name, "multi")) {
            a->valid_before_multi = a->valid_up_to;
            a->multi_cmds = a->ncmds;
            a->in_multi = 1;
        } else if (fri_arg_is(&name, "exec")) {
            a->in_multi = 0;
        }
        a->cmds = fri_array_grow(a->cmds, &a->capcmds, a->ncmds, sizeof(*a->cmds), 64);
        a->cmds[a->ncmds++] = (aof_cmd){argc, first};
        a->pos = pos;
        a->valid_up_to = pos;
    }
    return P_OK;
}

/* Runs the parsed commands 0..n on an AOF client. */
static long long run_commands(fr_server *s, const aof_parse *a, size_t n)
{
    fr_client *c = fr_client_new(s);
    if (!c) return -1;
    c->obey = 1;
    fr_call_hook *call_hook = s->call_hook;
    fr_oom_hook *oom_hook = s->oom_hook;
    s->call_hook = NULL; /* Redis runs them without call(): no MONITOR, no slow log */
    s->oom_hook = NULL;  /* nor processCommand's gates */
    s->loading = 1;
    fri_propagate_suspend(s, 1);
    for (size_t i = 0; i < n; i++) {
        size_t len;
        fr_exec_resp(c, a->cmds[i].argc, &a->argv[a->cmds[i].first], &a->lens[a->cmds[i].first],
                     &len);
    }
    fri_propagate_suspend(s, 0);
    s->loading = 0;
    s->call_hook = call_hook;
    s->oom_hook = oom_hook;
    fr_client_free(c);
    return (long long)n;
}

int fr_aof_load(fr_server *s, const void *data, size_t len, const char *name, unsigned flags,
                fr_aof_report *rep)
{
    fr_aof_report local;
    if (!rep) rep = &local;
    memset(rep, 0, sizeof(*rep));
    if (!name) name = "appendonly.aof";
    if (len == 0) return 0; /* AOF_EMPTY */
    fr_server *guard = fri_mem_enter(s, "fr_aof_load");
    aof_parse a = {data, len, 0, NULL, NULL, 0, 0, NULL, 0, 0, 0, 0, 0, 0};
    int rc = -1, rdb = len >= 5 && !memcmp(data, "REDIS", 5);
    fri_rdb_load_result *rres = NULL;
    fri_rdb_load_opts ropts = {1, 0, 1, 0, 1}; /* noflush, keep expired, dry run */
    int old_style = !strcmp(name, "appendonly.aof");
    if (rdb) {
        rres = fri_malloc(sizeof(*rres));
        if (fri_rdb_file_load(s, data, len, &ropts, rres) < 0) {
            say(rep, "%s", rres->error);
            say(rep, old_style ? "Error reading the RDB preamble of the AOF file %s, AOF loading "
                                 "aborted"
                               : "Error reading the RDB base file %s, AOF loading aborted",
                name);
            goto out;
        }
        a.pos = a.valid_up_to = rres->consumed;
        rep->rdb_preamble = 1;
    }
    char unknown[160] = "";
    int r = parse_commands(s, &a, unknown, sizeof(unknown));
    size_t run = a.ncmds;
    if (r == P_OK && a.in_multi) {
        say(rep, "Revert incomplete MULTI/EXEC transaction in AOF file %s", name);
        a.valid_up_to = a.valid_before_multi;
        run = a.multi_cmds;
        r = P_EOF;
    }
    if (r == P_FORMAT) {
        say(rep, "Bad file format reading the append only file %s: make a backup of your AOF "
                 "file, then use ./redis-check-aof --fix <filename.manifest>", name);
        goto out;
    }
    if (r == P_UNKNOWN) {
        say(rep, "Unknown command '%s' reading the append only file %s", unknown, name);
        goto out;
    }
    if (r == P_EOF) {
        if (a.in_multi) { /* cut inside a transaction: what came before its MULTI */
            a.valid_up_to = a.valid_before_multi;
            run = a.multi_cmds;
        }
        if (!(flags & FR_AOF_LOAD_TRUNCATED)) {
            say(rep, "Unexpected end of file reading the append only file %s. You can: 1) Make "
                     "a backup of your AOF file, then use ./redis-check-aof --fix "
                     "<filename.manifest>. 2) Alternatively you can set the "
                     "'aof-load-truncated' configuration option to yes and restart the server.",
                name);
            goto out;
        }
        rep->truncated = 1;
        snprintf(rep->log, sizeof(rep->log),
                 "!!! Warning: short read while loading the AOF file %s!!!\n"
                 "!!! Truncating the AOF %s at offset %llu !!!\n"
                 "AOF %s loaded anyway because aof-load-truncated is enabled",
                 name, name, (unsigned long long)a.valid_up_to, name);
    }
    rep->valid_up_to = a.valid_up_to;
    rc = 0;
    if (flags & FR_AOF_CHECK_ONLY) goto out;
    if (rdb) { /* checked above: it loads */
        ropts.dry_run = 0;
        fri_rdb_file_load(s, data, len, &ropts, rres);
    }
    rep->commands = run_commands(s, &a, run);
out:
    fri_free(rres);
    fri_free(a.argv);
    fri_free(a.lens);
    fri_free(a.cmds);
    fri_mem_leave(guard);
    return rc;
}

/* ----- Rewriting ------------------------------------------------------------------------- */

static void put_count(fri_buf *b, char type, long long n) { fri_buf_printf(b, "%c%lld\r\n", type, n); }

static void put_bulk(fri_buf *b, const void *p, size_t len)
{
    fri_buf_printf(b, "$%zu\r\n", len);
    fri_buf_append(b, p, len);
    fri_buf_append(b, "\r\n", 2);
}

static void put_word(fri_buf *b, const char *w) { put_bulk(b, w, strlen(w)); }

static void put_ll(fri_buf *b, long long v)
{
    char d[24];
    put_bulk(b, d, fri_ll2string(d, sizeof(d), v));
}

static void put_sid(fri_buf *b, fri_sid id)
{
    char d[FRI_SID_STRLEN];
    put_bulk(b, d, fri_sid_format(d, id));
}

static void put_double(fri_buf *b, double v)
{
    char d[64];
    put_bulk(b, d, fri_d2string(d, sizeof(d), v));
}

/* Elements collected for a batched command. */
typedef struct batch {
    fri_buf *b;
    const fri_str *key;
    const char *cmd;
    size_t total, done, in_cmd;
    int pairs;
} batch;

static void batch_item(batch *bt, const char *p, size_t len)
{
    if (bt->in_cmd == 0) {
        size_t left = bt->total - bt->done, n = left < ITEMS_PER_CMD ? left : ITEMS_PER_CMD;
        put_count(bt->b, '*', (long long)(2 + n * (size_t)(bt->pairs ? 2 : 1)));
        put_word(bt->b, bt->cmd);
        put_bulk(bt->b, bt->key->buf, bt->key->len);
    }
    put_bulk(bt->b, p, len);
}

static void batch_done_one(batch *bt)
{
    bt->done++;
    if (++bt->in_cmd == ITEMS_PER_CMD) bt->in_cmd = 0;
}

static void set_item(const char *p, size_t len, void *ctx)
{
    batch_item(ctx, p, len);
    batch_done_one(ctx);
}

static void zset_item(const char *p, size_t len, double score, void *ctx)
{
    batch *bt = ctx;
    if (bt->in_cmd == 0) {
        size_t left = bt->total - bt->done, n = left < ITEMS_PER_CMD ? left : ITEMS_PER_CMD;
        put_count(bt->b, '*', (long long)(2 + n * 2));
        put_word(bt->b, bt->cmd);
        put_bulk(bt->b, bt->key->buf, bt->key->len);
    }
    put_double(bt->b, score);
    put_bulk(bt->b, p, len);
    batch_done_one(bt);
}

static int cmp_dent(const void *x, const void *y)
{
    const fri_dent *a = *(const fri_dent *const *)x, *b = *(const fri_dent *const *)y;
    return fri_bytes_cmp(a->key->buf, a->key->len, b->key->buf, b->key->len);
}

/* A dict's entries in key byte order (Redis's radix trees' order): free() the array. */
static fri_dent **sorted(fri_dict *d, size_t *n)
{
    size_t k = 0;
    fri_dent **v = fri_malloc((fri_dict_size(d) + 1) * sizeof(*v));
    for (size_t i = 0; d && i < fri_dict_slots(d); i++) {
        fri_dent *e = fri_dict_slot(d, i);
        if (e) v[k++] = e;
    }
    qsort(v, k, sizeof(*v), cmp_dent);
    *n = k;
    return v;
}

/* rewriteStreamObject */
static void rewrite_stream(fri_buf *b, const fri_str *key, fri_stream *s)
{
    if (s->length) {
        fri_stream_iter it;
        fri_sid id;
        long nfields;
        fri_stream_iter_start(&it, s, FRI_SID_MIN, FRI_SID_MAX, 0);
        while (fri_stream_iter_next(&it, &id, &nfields)) {
            put_count(b, '*', 3 + nfields * 2);
            put_word(b, "XADD");
            put_bulk(b, key->buf, key->len);
            put_sid(b, id);
            for (long f = 0; f < nfields; f++) {
                const char *field, *value;
                size_t flen, vlen;
                fri_stream_iter_field(&it, &field, &flen, &value, &vlen);
                put_bulk(b, field, flen);
                put_bulk(b, value, vlen);
            }
        }
    } else {
        /* an empty stream: one entry added and trimmed away (0-1, x y) */
        put_count(b, '*', 7);
        put_word(b, "XADD");
        put_bulk(b, key->buf, key->len);
        put_word(b, "MAXLEN");
        put_word(b, "0");
        put_word(b, "0-1");
        put_word(b, "x");
        put_word(b, "y");
    }
    put_count(b, '*', 7);
    put_word(b, "XSETID");
    put_bulk(b, key->buf, key->len);
    put_sid(b, s->last_id);
    put_word(b, "ENTRIESADDED");
    put_ll(b, (long long)s->entries_added);
    put_word(b, "MAXDELETEDID");
    put_sid(b, s->max_deleted_entry_id);
    size_t ng = 0;
    fri_dent **groups = s->cgroups ? sorted(s->cgroups, &ng) : NULL;
    for (size_t g = 0; g < ng; g++) {
        fri_stream_cg *cg = groups[g]->v.ptr;
        const fri_str *gname = groups[g]->key;
        put_count(b, '*', 7);
        put_word(b, "XGROUP");
        put_word(b, "CREATE");
        put_bulk(b, key->buf, key->len);
        put_bulk(b, gname->buf, gname->len);
        put_sid(b, cg->last_id);
        put_word(b, "ENTRIESREAD");
        put_ll(b, cg->entries_read);
        size_t nc;
        fri_dent **cons = sorted(cg->consumers, &nc);
        for (size_t k = 0; k < nc; k++) {
            fri_stream_consumer *cons_k = cons[k]->v.ptr;
            if (fri_sidmap_len(cons_k->pel) == 0) {
                put_count(b, '*', 5);
                put_word(b, "XGROUP");
                put_word(b, "CREATECONSUMER");
                put_bulk(b, key->buf, key->len);
                put_bulk(b, gname->buf, gname->len);
                put_bulk(b, cons_k->name->buf, cons_k->name->len);
                continue;
            }
            fri_sidmap_iter pit;
            fri_sid id;
            void *val;
            fri_sidmap_iter_init(&pit, cons_k->pel, FRI_SID_MIN, FRI_SID_MAX, 0);
            while (fri_sidmap_iter_next(&pit, &id, &val)) {
                const fri_stream_nack *nack = val;
                put_count(b, '*', 12);
                put_word(b, "XCLAIM");
                put_bulk(b, key->buf, key->len);
                put_bulk(b, gname->buf, gname->len);
                put_bulk(b, cons_k->name->buf, cons_k->name->len);
                put_word(b, "0");
                put_sid(b, id);
                put_word(b, "TIME");
                put_ll(b, nack->delivery_time);
                put_word(b, "RETRYCOUNT");
                put_ll(b, (long long)nack->delivery_count);
                put_word(b, "JUSTID");
                put_word(b, "FORCE");
            }
        }
        fri_free(cons);
    }
    fri_free(groups);
}

static void collect_hash(fri_buf *b, const fri_str *key, fri_hash *h)
{
    fri_dict *d = fri_hash_fields(h);
    batch bt = {b, key, "HMSET", fri_dict_size(d), 0, 0, 1};
    for (size_t i = 0; i < fri_dict_slots(d); i++) {
        fri_dent *e = fri_dict_slot(d, i);
        if (!e) continue;
        const fri_str *v = e->v.ptr;
        batch_item(&bt, e->key->buf, e->key->len);
        put_bulk(b, v->buf, v->len);
        batch_done_one(&bt);
    }
}

static int aof_rewrite(fr_server *s, fri_buf *b)
{
    fri_scripting *sc = s->scripting;
    for (size_t i = 0; sc && sc->libraries && i < fri_dict_slots(sc->libraries); i++) {
        fri_dent *e = fri_dict_slot(sc->libraries, i);
        if (!e) continue;
        const fri_library *lib = e->v.ptr;
        put_count(b, '*', 3);
        put_word(b, "FUNCTION");
        put_word(b, "LOAD");
        put_bulk(b, lib->code->buf, lib->code->len);
    }
    int64_t now = fr_clock_now(s);
    for (int d = 0; d < FRI_DBNUM; d++) {
        fri_dict *keys = s->db[d].keys;
        int selected = 0;
        for (size_t i = 0; i < fri_dict_slots(keys); i++) {
            fri_dent *e = fri_dict_slot(keys, i);
            if (!e) continue;
            fri_obj *o = e->v.ptr;
            if (fri_obj_is_expired(o, now)) continue; /* as the RDB file: never shown */
            if (!selected) {
                put_count(b, '*', 2);
                put_word(b, "SELECT");
                put_ll(b, d);
                selected = 1;
            }
            const fri_str *key = e->key;
            switch ((fri_type)o->type) {
            case FRI_STRING:
                put_count(b, '*', 3);
                put_word(b, "SET");
                put_bulk(b, key->buf, key->len);
                put_bulk(b, ((fri_str *)o->ptr)->buf, ((fri_str *)o->ptr)->len);
                break;
            case FRI_LIST: {
                fri_list *l = o->ptr;
                batch bt = {b, key, "RPUSH", fri_list_len(l), 0, 0, 0};
                for (size_t k = 0; k < bt.total; k++) {
                    const fri_str *v = fri_list_at(l, k);
                    set_item(v->buf, v->len, &bt);
                }
                break;
            }
            case FRI_SET: {
                batch bt = {b, key, "SADD", fri_set_size(o->ptr), 0, 0, 0};
                fri_set_foreach(o->ptr, set_item, &bt);
                break;
            }
            case FRI_ZSET: {
                batch bt = {b, key, "ZADD", fri_zset_size(o->ptr), 0, 0, 1};
                fri_zset_foreach(o->ptr, zset_item, &bt);
                break;
            }
            case FRI_HASH: collect_hash(b, key, o->ptr); break;
            case FRI_STREAM: rewrite_stream(b, key, o->ptr); break;
            }
            if (o->expire_ms != -1) {
                put_count(b, '*', 3);
                put_word(b, "PEXPIREAT");
                put_bulk(b, key->buf, key->len);
                put_ll(b, o->expire_ms);
            }
        }
    }
    return 0;
}

char *fr_aof_rewrite(fr_server *s, size_t *len)
{
    fr_server *guard = fri_mem_enter(s, "fr_aof_rewrite");
    fri_buf b = {0};
    char *out = NULL;
    if (aof_rewrite(s, &b) == 0) {
        out = fri_malloc_plain(b.len ? b.len : 1);
        if (out) {
            if (b.len) memcpy(out, b.p, b.len);
            if (len) *len = b.len;
        }
    }
    fri_buf_free(&b);
    fri_mem_leave(guard);
    return out;
}
