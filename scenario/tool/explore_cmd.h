/* explore_cmd.h -- `wsim explore` (explore_cmd.c), called by the tool's main (wsim.c). */
#ifndef WSIM_EXPLORE_CMD_H
#define WSIM_EXPLORE_CMD_H

/* What `wsim explore --help` prints. */
extern const char *const WSIM_EXPLORE_HELP;
/* Runs `wsim explore` with the arguments after the command's name; returns the exit
 * status (0, 1, or 2 for bad usage). */
int wsim_cmd_explore(int argc, char **argv);

#endif /* WSIM_EXPLORE_CMD_H */
