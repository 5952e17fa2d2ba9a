/* exploration.c -- an exploration's result: its tallies by verdict and its freeing.
 *
 * Both explorers fill a wsc_exploration: explore.c (the engine's consumer, forked or
 * replayed) and explore_proc.c (a real consumer process).  What they share lives here,
 * below both, so that neither calls up into the other (STYLE.md: layers call down only). */
#include <string.h>

#include "wsc.h"
#include "wsi_alloc.h"

/* Adds one classified point to the exploration's tallies (wsc.h). */
void wsc_exploration_count(wsc_exploration *ex, const wsc_crash_point *p)
{
    ex->explored++;
    if (!strcmp(p->verdict, "fine")) ex->fine++;
    else if (!strcmp(p->verdict, "doubled")) ex->doubled++;
    else if (!strcmp(p->verdict, "lost")) ex->lost++;
    else if (!strcmp(p->verdict, "split")) ex->split++;
    else if (!strcmp(p->verdict, "leaked")) ex->leaked++;
    else if (!strcmp(p->verdict, "stranded")) ex->stranded++;
    else ex->other++;
    if (p->forbidden) ex->forbidden++;
}

/* Frees what an exploration holds; *ex is empty afterwards. */
void wsc_exploration_free(wsc_exploration *ex)
{
    for (size_t i = 0; i < ex->npoints; i++) {
        wsi_free(ex->points[i].command_text);
        wsi_free(ex->points[i].detail);
        wsi_free(ex->points[i].fault);
    }
    wsi_free(ex->points);
    wsi_free(ex->error);
    wsi_free(ex->failure);
    wsi_free(ex->note);
    memset(ex, 0, sizeof *ex);
}
