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

/* A command a consumer process sent in a run, as crash points and fault lines name it. */
typedef struct wsc_pcmd {
    char name[64];      /* its name, upper case ("XACK") */
    size_t occurrence;  /* its number among the commands of that name (1-based) */
    char *text;         /* the whole command, as redis-cli shows it */
    int answered;       /* its reply came (a read that blocked until the end got none) */
} wsc_pcmd;

/* The commands a run of sc (its steps, without its expectations) made the consumer
 * processes send, in the order they reached the server: 0 with *cmds and *n (free with
 * wsc_process_commands_free); 1 when the run failed, *error its report (heap);
 * WS_ENOMEM. */
int wsc_process_commands(const wsc_scenario *sc, const wsc_options *opt, wsc_pcmd **cmds,
                         size_t *n, char **error);
void wsc_process_commands_free(wsc_pcmd *v, size_t n);
/* One crash point: a fresh run of sc with command c held (p->command 1: before it is
 * applied; 0: after), the consumer killed and started again, then classified; fills p's
 * verdict, detail, forbidden and command_text (the command it held).  0, or -1 when out
 * of memory. */
int wsc_process_point(const wsc_scenario *sc, const wsc_options *opt, const wsc_pcmd *c,
                      wsc_crash_point *p);

#endif /* WSC_EXPLORE_PROC_H */
