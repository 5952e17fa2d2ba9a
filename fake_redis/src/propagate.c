/* propagate.c -- what a write command hands to the AOF (and would hand to replicas), as
 * Redis 7.0's call() and propagatePendingCommands() decide it.
 *
 * A command that changed something (the server's change counter moved: s->dirty, Redis's
 * server.dirty) is propagated as it was sent, unless its handler said otherwise:
 *  - fri_propagate_rewrite: another form (Redis's rewriteClientCommandVector: SET ... EX
 *    becomes SET ... PXAT, EXPIRE becomes PEXPIREAT or DEL, XADD * gets its id, BLPOP
 *    becomes LPOP ...);
 *  - fri_propagate_also: further commands first (alsoPropagate: SPOP's SREMs, XREADGROUP's
 *    XCLAIMs, the DEL of a key found expired);
 *  - fri_propagate_prevent: not the command itself (SPOP with a count, XREADGROUP, XCLAIM);
 * EXEC and the scripts are never propagated themselves: their commands are.  FLUSHALL and
 * FLUSHDB always are.  What one top-level command produced goes to the hook when it ends,
 * wrapped in MULTI ... EXEC when there is more than one (a transaction's writes, a
 * script's, an expired key deleted before a write), except for SCAN and RANDOMKEY, which
 * may expire any number of keys.  A client served after it blocked is its own batch.
 *
 * Nothing of this runs unless a hook is set (fr_server_set_propagate_hook): s->prop stays
 * NULL and every entry point returns at its first test. */
#include <string.h>

#include "fr_int.h"

/* One command to propagate: its database and its own copy of the arguments. */
typedef struct prop_op {
    int db;
    int argc;
    fri_str **argv;
} prop_op;

struct fri_prop {
    fr_propagate_hook *hook; /* where the commands go */
    void *ctx;               /* its argument */
    int suspended;           /* loading an AOF: nothing is propagated (Redis's AOF client
                                runs commands without call()) */
    int depth;               /* fri_call nesting */
    fri_prop_frame *frame;   /* the innermost running call's */
    prop_op *ops;            /* pending: what the top-level command produced so far */
    size_t nops, capops;
};

static void op_free(prop_op *op)
{
    for (int i = 0; i < op->argc; i++) fri_str_free(op->argv[i]);
    fri_free(op->argv);
    op->argv = NULL;
    op->argc = 0;
}

/* A copy of argv as an op's arguments (the fri_ family: inside a guarded call it cannot
 * fail). */
static fri_str **copy_args(int argc, const fri_arg *argv)
{
    fri_str **v = fri_malloc(sizeof(*v) * (size_t)(argc ? argc : 1));
    for (int i = 0; i < argc; i++) v[i] = fri_str_new(argv[i].ptr, argv[i].len);
    return v;
}

static void push_op(struct fri_prop *p, int db, int argc, const fri_arg *argv)
{
    p->ops = fri_array_grow(p->ops, &p->capops, p->nops, sizeof(*p->ops), 8);
    p->ops[p->nops++] = (prop_op){db, argc, copy_args(argc, argv)};
}

static void emit(struct fri_prop *p, int db, int argc, fri_str *const *argv)
{
    const char *a[64] = {0};
    size_t l[64] = {0};
    const char **av = argc <= 64 ? a : fri_malloc(sizeof(*av) * (size_t)argc);
    size_t *lv = argc <= 64 ? l : fri_malloc(sizeof(*lv) * (size_t)argc);
    for (int i = 0; i < argc; i++) {
        av[i] = argv[i]->buf;
        lv[i] = argv[i]->len;
    }
    p->hook(p->ctx, db, argc, av, lv);
    if (av != a) fri_free(av);
    if (lv != l) fri_free(lv);
}

static void emit_word(struct fri_prop *p, int db, const char *word)
{
    const char *a[1] = {word};
    size_t l[1] = {strlen(word)};
    p->hook(p->ctx, db, 1, a, l);
}

/* propagatePendingCommands: hands the pending ops to the hook. */
static void flush(fr_server *s, int no_multi)
{
    struct fri_prop *p = s->prop;
    if (!p->nops) return;
    int transaction = p->nops > 1 && !no_multi;
    if (transaction) emit_word(p, p->ops[0].db, "MULTI");
    for (size_t i = 0; i < p->nops; i++) emit(p, p->ops[i].db, p->ops[i].argc, p->ops[i].argv);
    if (transaction) emit_word(p, p->ops[p->nops - 1].db, "EXEC");
    for (size_t i = 0; i < p->nops; i++) op_free(&p->ops[i]);
    p->nops = 0;
}

void fr_server_set_propagate_hook(fr_server *s, fr_propagate_hook *hook, void *ctx)
{
    if (!hook) {
        if (s->prop) {
            for (size_t i = 0; i < s->prop->nops; i++) op_free(&s->prop->ops[i]);
            fri_free(s->prop->ops);
            fri_free(s->prop);
            s->prop = NULL;
        }
        return;
    }
    fr_server *guard = fri_mem_enter(s, "fr_server_set_propagate_hook");
    if (!s->prop) s->prop = fri_calloc(1, sizeof(*s->prop));
    s->prop->hook = hook;
    s->prop->ctx = ctx;
    fri_mem_leave(guard);
}

void fri_propagate_free(fr_server *s) { fr_server_set_propagate_hook(s, NULL, NULL); }

void fri_propagate_suspend(fr_server *s, int on)
{
    if (s->prop) s->prop->suspended = on;
}

int fri_propagating(const fr_server *s) { return s->prop && !s->prop->suspended; }

void fri_propagate_enter(fr_client *c, fri_prop_frame *f)
{
    struct fri_prop *p = c->srv->prop;
    f->outer = p->frame;
    f->rewrite = NULL;
    f->rewrite_argc = 0;
    f->prevent = 0;
    p->frame = f;
    p->depth++;
}

/* Whether cmd is one whose commands, not itself, are propagated (EXEC, the scripts). */
static int never_itself(const fri_command *cmd)
{
    const char *n = cmd->name;
    return !strcmp(n, "exec") || !strncmp(n, "eval", 4) || !strncmp(n, "fcall", 5);
}

void fri_propagate_leave(fr_client *c, const fri_command *cmd, fri_prop_frame *f,
                         uint64_t dirty_before)
{
    fr_server *s = c->srv;
    struct fri_prop *p = s->prop;
    int forced = !strcmp(cmd->name, "flushall") || !strcmp(cmd->name, "flushdb");
    if (!p->suspended && !f->prevent && !never_itself(cmd) &&
        (s->dirty != dirty_before || forced)) {
        if (f->rewrite) {
            p->ops = fri_array_grow(p->ops, &p->capops, p->nops, sizeof(*p->ops), 8);
            p->ops[p->nops++] = (prop_op){c->db->id, f->rewrite_argc, f->rewrite};
            f->rewrite = NULL;
        } else {
            push_op(p, c->db->id, c->argc, c->argv);
        }
    }
    if (f->rewrite) {
        prop_op tmp = {0, f->rewrite_argc, f->rewrite};
        op_free(&tmp);
    }
    p->frame = f->outer;
    if (--p->depth == 0) {
        int arbitrary = !strcmp(cmd->name, "scan") || !strcmp(cmd->name, "randomkey");
        flush(s, arbitrary);
    }
}

void fri_propagate_rewrite(fr_client *c, int argc, const fri_arg *argv)
{
    struct fri_prop *p = c->srv->prop;
    if (!p || p->suspended || !p->frame) return;
    fri_prop_frame *f = p->frame;
    if (f->rewrite) {
        prop_op tmp = {0, f->rewrite_argc, f->rewrite};
        op_free(&tmp);
    }
    f->rewrite = copy_args(argc, argv);
    f->rewrite_argc = argc;
}

void fri_propagate_also(fr_client *c, int argc, const fri_arg *argv)
{
    struct fri_prop *p = c->srv->prop;
    if (!p || p->suspended) return;
    push_op(p, c->db->id, argc, argv);
    if (p->depth == 0) flush(c->srv, 0);
}

void fri_propagate_prevent(fr_client *c)
{
    struct fri_prop *p = c->srv->prop;
    if (p && p->frame) p->frame->prevent = 1;
}

void fri_propagate_deletion(fr_server *s, int db, const char *key, size_t len)
{
    struct fri_prop *p = s->prop;
    if (!p || p->suspended) return;
    fri_arg argv[2] = {{"DEL", 3}, {key, len}};
    push_op(p, db, 2, argv);
    if (p->depth == 0) flush(s, 0);
}

void fri_propagate_served(fr_client *c, fri_prop_frame *f, int begin)
{
    /* a served blocked client is a top-level command of its own (afterCommand(receiver)):
     * what it wrote goes out right after it was served */
    struct fri_prop *p = c->srv->prop;
    if (begin) {
        fri_propagate_enter(c, f);
        f->prevent = 1; /* its rewrite or its ops say what it did */
        return;
    }
    fri_prop_frame *mine = p->frame;
    if (mine->rewrite && !p->suspended) {
        p->ops = fri_array_grow(p->ops, &p->capops, p->nops, sizeof(*p->ops), 8);
        p->ops[p->nops++] = (prop_op){c->db->id, mine->rewrite_argc, mine->rewrite};
        mine->rewrite = NULL;
    }
    if (mine->rewrite) {
        prop_op tmp = {0, mine->rewrite_argc, mine->rewrite};
        op_free(&tmp);
    }
    p->frame = mine->outer;
    if (--p->depth == 0) flush(c->srv, 0);
}
