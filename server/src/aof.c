/* aof.c -- the append-only file (issue 25 b: not written yet; appendonly yes is refused). */
#include <stdio.h>
#include <string.h>

#include "frs.h"

int frs_aof_load_at_start(frs_server *srv)
{
    (void)srv;
    fprintf(stderr, "fakeredis-server: appendonly yes is not supported yet\n");
    return -1;
}

int frs_aof_shutdown(frs_server *srv)
{
    (void)srv;
    return 0;
}

int frs_aof_wants_cron(frs_server *srv)
{
    (void)srv;
    return 0;
}

void frs_aof_cron(frs_server *srv) { (void)srv; }

void frs_aof_info(frs_server *srv, frs_aof_figures *f)
{
    (void)srv;
    memset(f, 0, sizeof(*f));
    f->last_rewrite_secs = f->current_rewrite_secs = -1;
    f->last_bgrewrite_ok = f->last_write_ok = 1;
}
