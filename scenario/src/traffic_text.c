/* traffic_text.c -- a recording as text: replies and commands in the engine trace's
 * notation (through ws_round_trip_text and ws_reply_text, so that there is one writer of
 * that notation), and `wsim trace RECORDING` (wsc_traffic_trace).
 *
 * A recording's replies are RESP2 or RESP3 bytes; the trace notation is the fr_reply tree's,
 * so RESP3's own types are shown in the RESP2 shape a client would see (traffic_int.h). */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "traffic_int.h"
#include "ws_conn.h"
#include "wsc_traffic.h"
#include "wsi_alloc.h"
#include "wsi_buf.h"

/* ----- Replies --------------------------------------------------------------------------- */

/* Nodes and string bytes a conversion needs. */
static void measure(const wsr_value *v, size_t *nodes, size_t *bytes)
{
    *nodes += 1;
    if (v->str) *bytes += v->len + 1;
    for (size_t i = 0; i < v->count; i++) measure(&v->elements[i], nodes, bytes);
}

/* Fills node n from v, taking child nodes from *next and string bytes from *heap. */
static void fill(const wsr_value *v, fr_reply *n, fr_reply **next, char **heap)
{
    memset(n, 0, sizeof *n);
    const char *s = v->str;
    size_t len = v->len;
    if (v->type == '=' && len >= 4) { /* a verbatim string's "txt:" */
        s += 4;
        len -= 4;
    }
    if (s) {
        memcpy(*heap, s, len);
        (*heap)[len] = '\0';
        n->str = *heap;
        n->len = len;
        *heap += len + 1;
    }
    switch (v->type) {
    case '+': n->type = FR_REPLY_STATUS; break;
    case '-': case '!': n->type = FR_REPLY_ERROR; break;
    case ':': n->type = FR_REPLY_INTEGER; n->integer = v->integer; break;
    case '#': n->type = FR_REPLY_INTEGER; n->integer = v->integer; break;
    case '$': n->type = v->nil ? FR_REPLY_NIL : FR_REPLY_BULK; break;
    case ',': case '(': case '=': n->type = FR_REPLY_BULK; break;
    case '_': n->type = FR_REPLY_NIL; break;
    case '*': case '%': case '~': case '>':
        if (v->nil) {
            n->type = FR_REPLY_NIL_ARRAY;
            break;
        }
        n->type = FR_REPLY_ARRAY;
        n->count = v->count;
        n->elements = *next;
        fr_reply *kids = *next;
        *next += v->count;
        for (size_t i = 0; i < v->count; i++) fill(&v->elements[i], &kids[i], next, heap);
        break;
    default: n->type = FR_REPLY_NIL; break;
    }
}

fr_reply *wsct_reply_of(const wsr_value *v, int *oom)
{
    size_t nodes = 0, bytes = 0;
    measure(v, &nodes, &bytes);
    fr_reply *block = wsi_malloc(nodes * sizeof *block + bytes + 1);
    if (!block) {
        if (oom) *oom = 1;
        return NULL;
    }
    fr_reply *next = block + 1;
    char *heap = (char *)(block + nodes);
    fill(v, block, &next, &heap);
    return block;
}

fr_reply *wsct_reply(const char *bytes, size_t len, size_t *used, int *oom)
{
    if (oom) *oom = 0;
    if (!len) return NULL;
    int poom = 0;
    wsr_value *v = wsr_resp_parse(bytes, len, used, &poom);
    if (!v) {
        if (poom && oom) *oom = 1;
        return NULL;
    }
    fr_reply *r = wsct_reply_of(v, oom);
    wsi_free(v);
    return r;
}

char *wsct_reply_text(const char *bytes, size_t len)
{
    int oom = 0;
    fr_reply *r = wsct_reply(bytes, len, NULL, &oom);
    if (oom) return NULL;
    char *t = ws_reply_text(r, NULL);
    wsi_free(r);
    return t;
}

/* ----- Commands -------------------------------------------------------------------------- */

char *wsct_command_text(int argc, const char *const *argv, const size_t *argvlen)
{
    /* the engine writes commands in one place, its round trips: render one and keep its
     * command ("#0 x: ok\n  CMD -> (none)\n") */
    fr_command cmd = {argc, argv, argvlen};
    const fr_reply *none = NULL;
    unsigned char fate = WS_FATE_REPLIED;
    ws_round_trip rt = {.conn = "x", .cause = "", .note = "", .n = 1, .commands = &cmd,
                        .replies = &none, .fates = &fate};
    char *t = ws_round_trip_text(&rt, NULL);
    if (!t) return NULL;
    char *start = strstr(t, "\n  ");
    if (start) start += 3;
    /* (searched from the command on: an empty one is "\n   -> ", whose arrow starts
     * inside the indent) */
    char *end = start ? strstr(start, " -> ") : NULL;
    if (!start || !end) {
        wsi_free(t);
        return NULL;
    }
    memmove(t, start, (size_t)(end - start));
    t[end - start] = '\0';
    return t;
}

/* ----- The trace of a recording ------------------------------------------------------------ */

/* A connection's label and block counter, by id. */
typedef struct conn_label {
    uint64_t id;
    char *name;        /* its latest name (heap), or NULL */
    uint64_t blocks;   /* blocks printed for it */
} conn_label;

typedef struct labels {
    conn_label *v;
    size_t n, cap;
    int oom;
} labels;

static conn_label *label_of(labels *L, uint64_t id)
{
    for (size_t i = L->n; i-- > 0;)
        if (L->v[i].id == id) return &L->v[i];
    if (L->n == L->cap) {
        size_t cap = L->cap ? L->cap * 2 : 16;
        conn_label *v = wsi_realloc(L->v, cap * sizeof *v);
        if (!v) {
            L->oom = 1;
            return NULL;
        }
        L->v = v;
        L->cap = cap;
    }
    conn_label *c = &L->v[L->n++];
    memset(c, 0, sizeof *c);
    c->id = id;
    return c;
}

/* Remembers the name an event carries. */
static void take_name(labels *L, conn_label *c, const wsr_event *e)
{
    if (!e->name || (c->name && strlen(c->name) == e->name_len &&
                     memcmp(c->name, e->name, e->name_len) == 0))
        return;
    char *n = wsi_malloc(e->name_len + 1);
    if (!n) {
        L->oom = 1;
        return;
    }
    memcpy(n, e->name, e->name_len);
    n[e->name_len] = '\0';
    wsi_free(c->name);
    c->name = n;
}

/* "name" or "conn C". */
static void put_label(wsi_buf *b, const conn_label *c)
{
    if (c->name) wsi_buf_puts(b, c->name);
    else wsi_buf_printf(b, "conn %" PRIu64, c->id);
}

/* One block: events [from, to) are cmd lines of one connection and one batch. */
static void put_block(wsi_buf *b, labels *L, const wsr_recording *rec, size_t from, size_t to)
{
    const wsr_event *e0 = &rec->ev[from];
    conn_label *c = label_of(L, e0->conn);
    if (!c) return;
    size_t n = to - from;
    fr_command *cmds = wsi_calloc(n, sizeof *cmds);
    const fr_reply **replies = wsi_calloc(n, sizeof *replies);
    unsigned char *fates = wsi_calloc(n, 1);
    fr_reply **owned = wsi_calloc(n, sizeof *owned);
    char cause[96], label[160];
    wsi_buf lb;
    wsi_buf_room(&lb, label, sizeof label);
    put_label(&lb, c);
    if (!cmds || !replies || !fates || !owned || lb.oom) {
        L->oom = 1;
        goto out;
    }
    if (c->name) /* the label is the name: the cause says the connection too */
        snprintf(cause, sizeof cause, "conn %" PRIu64 ", batch %" PRIu64 ", %" PRId64 " ms",
                 e0->conn, e0->batch, e0->t);
    else
        snprintf(cause, sizeof cause, "batch %" PRIu64 ", %" PRId64 " ms", e0->batch, e0->t);
    for (size_t i = 0; i < n; i++) {
        const wsr_event *e = &rec->ev[from + i];
        cmds[i] = (fr_command){e->argc, e->argv, e->argvlen};
        fates[i] = WS_FATE_REPLIED;
        int oom = 0;
        owned[i] = wsct_reply(e->reply, e->reply_len, NULL, &oom);
        if (oom) L->oom = 1;
        replies[i] = owned[i];
    }
    ws_round_trip rt = {.conn = lb.p, .cause = cause, .index = ++c->blocks, .note = "", .n = n,
                        .commands = cmds, .replies = replies, .fates = fates};
    char *text = ws_round_trip_text(&rt, NULL);
    if (!text) {
        L->oom = 1;
        goto out;
    }
    /* a command whose reply CLIENT REPLY dropped shows "-> " and nothing: say so; a reply of
     * several values (SUBSCRIBE a b) shows its first, then how many more */
    size_t line = 0;
    for (char *p = text, *nl; *p; p = nl + 1, line++) {
        nl = strchr(p, '\n');
        if (!nl) break;
        wsi_buf_add(b, p, (size_t)(nl - p));
        if (line > 0) {
            const wsr_event *e = &rec->ev[from + line - 1];
            if (e->reply_len == 0) {
                wsi_buf_puts(b, "(no reply: CLIENT REPLY OFF or SKIP)");
            } else {
                size_t used = 0, values = 0;
                while (used < e->reply_len) {
                    long long k = wsr_resp_len(e->reply + used, e->reply_len - used, NULL);
                    if (k <= 0) break;
                    used += (size_t)k;
                    values++;
                }
                if (values > 1) wsi_buf_printf(b, " (and %zu more values)", values - 1);
            }
            if (e->since >= 0)
                wsi_buf_printf(b, "  (blocked from %" PRId64 " ms)", e->since);
        }
        wsi_buf_puts(b, "\n");
    }
    wsi_free(text);
out:
    for (size_t i = 0; owned && i < n; i++) wsi_free(owned[i]);
    wsi_free(owned);
    wsi_free(cmds);
    wsi_free(replies);
    wsi_free(fates);
    wsi_buf_free(&lb);
}

/* A `--` line for an event that is not a command. */
static void put_note(wsi_buf *b, labels *L, const wsr_event *e)
{
    conn_label *c = e->kind == WSR_CLOCK || e->kind == WSR_NOTE || e->kind == WSR_END
                        ? NULL : label_of(L, e->conn);
    if (e->kind != WSR_CLOCK && e->kind != WSR_NOTE && e->kind != WSR_END && !c) return;
    if (c) take_name(L, c, e);
    wsi_buf_puts(b, "-- ");
    switch (e->kind) {
    case WSR_OPEN:
        wsi_buf_printf(b, "conn %" PRIu64 " opens at %" PRId64 " ms from %s", e->conn, e->t,
                       e->addr);
        if (e->pid >= 0) wsi_buf_printf(b, " (pid %lld)", e->pid);
        if (c->name) wsi_buf_printf(b, ", named %s", c->name);
        break;
    case WSR_CLOSE:
        put_label(b, c);
        wsi_buf_printf(b, " closes at %" PRId64 " ms (%s)", e->t, e->word);
        break;
    case WSR_WAIT: {
        put_label(b, c);
        char *cmd = wsct_command_text(e->argc, e->argv, e->argvlen);
        wsi_buf_printf(b, " blocks at %" PRId64 " ms in %s", e->t, cmd ? cmd : "?");
        wsi_free(cmd);
        break;
    }
    case WSR_PUSH: {
        put_label(b, c);
        char *r = wsct_reply_text(e->reply, e->reply_len);
        wsi_buf_printf(b, " receives %s", r ? r : "?");
        wsi_free(r);
        break;
    }
    case WSR_CALL: {
        put_label(b, c);
        char *cmd = wsct_command_text(e->argc, e->argv, e->argvlen);
        char *r = wsct_reply_text(e->reply, e->reply_len);
        wsi_buf_printf(b, "'s script runs %s -> %s", cmd ? cmd : "?", r ? r : "?");
        free(cmd);
        free(r);
        break;
    }
    case WSR_HOLD: {
        put_label(b, c);
        char *cmd = e->argc ? wsct_command_text(e->argc, e->argv, e->argvlen) : NULL;
        wsi_buf_printf(b, " held (%s, counted command %" PRIu64 ")%s%s", e->word, e->n,
                       cmd ? ": " : "", cmd ? cmd : "");
        wsi_free(cmd);
        break;
    }
    case WSR_CLOCK:
        wsi_buf_printf(b, "the clock moves %" PRId64 " ms (%s): %" PRId64 " ms", e->t - e->from,
                       e->word, e->t);
        break;
    case WSR_NOTE: wsi_buf_printf(b, "note at %" PRId64 " ms: %s", e->t, e->word); break;
    case WSR_END: wsi_buf_printf(b, "the recording ends at %" PRId64 " ms", e->t); break;
    default: break;
    }
    wsi_buf_puts(b, "\n");
}

char *wsc_traffic_trace(const wsr_recording *rec)
{
    wsi_buf b = {0};
    labels L = {0};
    for (size_t i = 0; i < rec->n && !L.oom;) {
        const wsr_event *e = &rec->ev[i];
        if (e->kind != WSR_CMD) {
            put_note(&b, &L, e);
            i++;
            continue;
        }
        conn_label *c = label_of(&L, e->conn);
        if (!c) break;
        take_name(&L, c, e);
        /* the commands of one read that completed in a row; a blocked command's
         * completion stands alone */
        size_t j = i + 1;
        if (e->since < 0)
            while (j < rec->n && rec->ev[j].kind == WSR_CMD && rec->ev[j].conn == e->conn &&
                   rec->ev[j].batch == e->batch && rec->ev[j].since < 0)
                j++;
        put_block(&b, &L, rec, i, j);
        i = j;
    }
    for (size_t i = 0; i < L.n; i++) wsi_free(L.v[i].name);
    wsi_free(L.v);
    if (L.oom || b.oom) {
        wsi_buf_free(&b);
        return NULL;
    }
    return wsi_buf_take(&b);
}
