/* explore_cmd.h -- `wsim explore` (explore_cmd.c), called by the tool's main (wsim.c). */
#ifndef WSIM_EXPLORE_CMD_H
#define WSIM_EXPLORE_CMD_H

#include <stddef.h>

/* What `wsim explore --help` prints. */
extern const char *const WSIM_EXPLORE_HELP;
/* Runs `wsim explore` with the arguments after the command's name; returns the exit
 * status (0, 1, or 2 for bad usage). */
int wsim_cmd_explore(int argc, char **argv);
/* `wsim explore --merge` on shards already read: texts[i] (lens[i] bytes, any bytes: a
 * shard file is untrusted input) is the file names[i].  Prints the merged report, or one
 * line naming what is wrong; returns the exit status (0, 1, or 2 for a bad shard).
 * fuzz_explore_merge calls it on arbitrary bytes. */
int wsim_explore_merge_texts(size_t n, const char *const *names, const char *const *texts,
                             const size_t *lens, int verbose);

#endif /* WSIM_EXPLORE_CMD_H */
