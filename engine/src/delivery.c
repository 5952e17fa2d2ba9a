/* delivery.c -- the delivery records: made for each entry a read hands out, with the
 * entry's fields as the framework decodes them and the list of commands the delivery
 * caused (its effects, which the ledger fills in); and what the API reads of them.  The
 * records live as long as the simulation (the checks and the diagrams read them after
 * crashes). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sim_int.h"

/* ----- Records ------------------------------------------------------------------------------- */

/* A new delivery record of sub, numbered after every earlier one, in this process. */
ws_delivery *wsi_delivery_new(ws_sim *sim, ws_sub *sub)
{
    if (sim->ndl == sim->capdl) {
        sim->capdl = sim->capdl ? sim->capdl * 2 : 64;
        sim->dl = wsi_xrealloc(sim->dl, sim->capdl * sizeof *sim->dl);
    }
    ws_delivery *d = wsi_rec_alloc(sim, sizeof *d);
    d->sub = sub;
    d->seq = sim->ndl + 1;
    d->incarnation = sim->incarnation;
    d->count = 1;
    sim->dl[sim->ndl++] = d;
    sim->counts.deliveries++;
    return d;
}

/* Appends cmd (ownership taken) to d's effects as a command of this kind; its index. */
size_t wsi_effect_add(ws_delivery *d, wsi_cmd *cmd, int kind)
{
    if (d->neffects == d->capeffects) { /* doubling in the records arena */
        d->capeffects = d->capeffects ? d->capeffects * 2 : 4;
        wsi_effect *e = wsi_rec_alloc(d->sub->sim, d->capeffects * sizeof *e);
        if (d->neffects) memcpy(e, d->effects, d->neffects * sizeof *e);
        d->effects = e;
    }
    d->effects[d->neffects] = (wsi_effect){.cmd = cmd, .kind = kind};
    return d->neffects++;
}

/* ----- Fields -------------------------------------------------------------------------------- */

/* Sets the delivery's fields (stream form) from n strings, copied into one block of the
 * records arena: the pointers, the lengths, then the bytes, each NUL-terminated. */
static void set_field_strings(ws_delivery *d, const char *const *str, const size_t *lens,
                              size_t n)
{
    size_t bytes = 0;
    for (size_t i = 0; i < n; i++) bytes += lens[i] + 1;
    char *block = wsi_rec_alloc(d->sub->sim, n * (sizeof(char *) + sizeof(size_t)) + bytes);
    d->nfields = n;
    d->fields = (char **)(void *)block;
    d->field_lens = (size_t *)(void *)(block + n * sizeof(char *));
    char *text = block + n * (sizeof(char *) + sizeof(size_t));
    for (size_t i = 0; i < n; i++) {
        if (lens[i]) memcpy(text, str[i], lens[i]);
        text[lens[i]] = '\0';
        d->fields[i] = text;
        d->field_lens[i] = lens[i];
        text += lens[i] + 1;
    }
}

/* A stream entry's field-value list as delivered. */
void wsi_delivery_set_fields(ws_delivery *d, const fr_reply *arr)
{
    if (!arr || arr->type != FR_REPLY_ARRAY) return;
    size_t n = arr->count;
    const char **str = wsi_xmalloc((n ? n : 1) * sizeof *str);
    size_t *lens = wsi_xmalloc((n ? n : 1) * sizeof *lens);
    for (size_t i = 0; i < n; i++) {
        str[i] = arr->elements[i].str ? arr->elements[i].str : "";
        lens[i] = arr->elements[i].len;
    }
    set_field_strings(d, str, lens, n);
    wsi_free(str);
    wsi_free(lens);
}

/* Sets a delivery's fields from a command's arguments from the first on (field, value, ...). */
void wsi_delivery_set_fields_from(ws_delivery *d, const wsi_cmd *c, int first)
{
    int n = c->argc > first ? c->argc - first : 0;
    set_field_strings(d, (const char *const *)c->argv + first, c->argvlen + first, (size_t)n);
}

/* Sets (adds or replaces) one field of a delivery, as the framework inserts its headers
 * into the fields it read (subscriber.rs insert_meta_header). */
void wsi_delivery_set_field(ws_delivery *d, const char *name, long long value)
{
    char digits[25];
    digits[24] = '\0';
    const char *v = wsi_decimal(digits, value);
    size_t n = d->nfields, nl = strlen(name);
    const char **str = wsi_xmalloc((n + 2) * sizeof *str);
    size_t *lens = wsi_xmalloc((n + 2) * sizeof *lens);
    int replaced = 0;
    for (size_t i = 0; i < n; i++) {
        str[i] = d->fields[i];
        lens[i] = d->field_lens[i];
        if (i % 2 == 1 && lens[i - 1] == nl && memcmp(str[i - 1], name, nl) == 0) {
            str[i] = v;
            lens[i] = strlen(v);
            replaced = 1;
        }
    }
    if (!replaced) {
        str[n] = name;
        lens[n] = nl;
        str[n + 1] = v;
        lens[n + 1] = strlen(v);
        n += 2;
    }
    /* the block is replaced (the old one stays in the arena: str points into it) */
    set_field_strings(d, str, lens, n);
    wsi_free(str);
    wsi_free(lens);
}

/* A list value or channel message: its fields as the framework decodes it (a binary
 * frame's payload and headers, or the whole value as the payload). */
void wsi_delivery_message_fields(ws_delivery *d)
{
    char **parts;
    size_t *lens;
    long n = wsi_frame_decode(d->id, d->id_len, &parts, &lens);
    set_field_strings(d, (const char *const *)parts, lens, (size_t)n);
    wsi_strings_free(parts, lens, (size_t)n);
}

/* ----- Accessors ----------------------------------------------------------------------------- */

ws_sub *ws_delivery_sub(const ws_delivery *d) { return d->sub; }

ws_outcome ws_delivery_outcome(const ws_delivery *d) { return d->outcome; }
const char *ws_delivery_id(const ws_delivery *d) { return d->id; }

size_t ws_delivery_id_size(const ws_delivery *d) { return d->id_len; }

long long ws_delivery_count(const ws_delivery *d) { return d->count; }

unsigned ws_delivery_slot(const ws_delivery *d) { return d->slot; }

unsigned ws_delivery_generation(const ws_delivery *d) { return d->gen; }

int ws_delivery_done(const ws_delivery *d) { return d->done || d->dead; }

/* The value of d's field name (its length in *len), NULL when d has none. */
static const char *field_of(const ws_delivery *d, const char *name, size_t *len)
{
    size_t dummy;
    if (!len) len = &dummy;
    size_t nl = strlen(name);
    for (size_t i = 0; i + 1 < d->nfields; i += 2)
        if (d->field_lens[i] == nl && memcmp(d->fields[i], name, nl) == 0) {
            *len = d->field_lens[i + 1];
            return d->fields[i + 1];
        }
    return NULL;
}

const char *ws_delivery_payload(const ws_delivery *d, size_t *len)
{
    return field_of(d, "_payload", len);
}

/* The header name's value: the field "h:<name>", NULL when absent. */
const char *ws_delivery_header(const ws_delivery *d, const char *name, size_t *len)
{
    char key[256];
    wsi_snprintf(key, sizeof key, "h:%s", name);
    return field_of(d, key, len);
}

/* The retry counter the header carries; 0 when absent or not a decimal number. */
long long ws_delivery_retries(const ws_delivery *d)
{
    size_t len;
    const char *v = ws_delivery_header(d, WS_RETRY_HEADER, &len);
    if (!v || len == 0 || len > 18) return 0;
    long long n = 0;
    for (size_t i = 0; i < len; i++) {
        if (v[i] < '0' || v[i] > '9') return 0;
        n = n * 10 + (v[i] - '0');
    }
    return n;
}
