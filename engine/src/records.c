/* records.c -- the simulation's long-lived records: the arena every record that lives as
 * long as the simulation comes from (sim_int.h says which), freed at once with it. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sim_int.h"

/* n zeroed bytes that live as long as the simulation; aborts on out of memory. */
void *wsi_rec_alloc(ws_sim *sim, size_t n)
{
    void *p = wsi_arena_alloc(&sim->records, n); /* aborts when out of memory */
    memset(p, 0, n);
    return p;
}

/* A NUL-terminated copy of p[0..len) that lives as long as the simulation. */
char *wsi_rec_memdup(ws_sim *sim, const char *p, size_t len)
{
    char *s = wsi_rec_alloc(sim, len + 1);
    if (len) memcpy(s, p, len);
    return s;
}

/* A copy of c in one block of the arena, each argument NUL-terminated. */
wsi_cmd *wsi_rec_cmd(ws_sim *sim, const wsi_cmd *c)
{
    size_t bytes = 0;
    for (int i = 0; i < c->argc; i++) bytes += c->argvlen[i] + 1;
    size_t n = (size_t)c->argc;
    char *block = wsi_rec_alloc(sim, sizeof(wsi_cmd) + n * (sizeof(char *) + sizeof(size_t)) +
                                         bytes);
    wsi_cmd *d = (wsi_cmd *)(void *)block;
    d->argc = c->argc;
    d->argv = (char **)(void *)(block + sizeof(wsi_cmd));
    d->argvlen = (size_t *)(void *)(block + sizeof(wsi_cmd) + n * sizeof(char *));
    char *text = block + sizeof(wsi_cmd) + n * (sizeof(char *) + sizeof(size_t));
    for (size_t i = 0; i < n; i++) {
        if (c->argvlen[i]) memcpy(text, c->argv[i], c->argvlen[i]);
        d->argv[i] = text;
        d->argvlen[i] = c->argvlen[i];
        text += c->argvlen[i] + 1; /* NUL from the zeroed block */
    }
    return d;
}
