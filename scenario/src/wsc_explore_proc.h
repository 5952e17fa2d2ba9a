/* wsc_explore_proc.h -- wsim explore on a file that drives consumer processes
 * (explore_proc.c; docs/consumer.md).  wsc_explore_with hands such a file here. */
#ifndef WSC_EXPLORE_PROC_H
#define WSC_EXPLORE_PROC_H

#include "wsc_int.h"

/* Explores every crash point of the consumer processes sc drives (two per command of the
 * baseline run: held before it is applied, and after), as wsc_explore_with says; 0,
 * WS_ENOMEM, or WS_EINVAL for a shard outside 1..nshards. */
int wsc_explore_process(const wsc_scenario *sc, const wsc_options *opt,
                        const wsc_explore_options *xo, wsc_exploration *out);

#endif /* WSC_EXPLORE_PROC_H */
