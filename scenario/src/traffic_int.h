/* traffic_int.h -- what traffic.c (the checker) and traffic_text.c (the trace of a
 * recording) share: replies and commands as the engine's trace writes them. */
#ifndef TRAFFIC_INT_H
#define TRAFFIC_INT_H

#include <stddef.h>

#include "fakeredis.h"
#include "wsr_resp.h"

/* The first RESP value of bytes[0..len) as an fr_reply tree in RESP2's shapes (a map's
 * pairs, a set, a push: arrays; a double, a big number, a verbatim string: bulks; a
 * boolean: 1 or 0; RESP3's null: $-1; a bulk error: an error; attributes dropped), in one
 * heap block (free() it).  *rest gets the bytes after that value.  NULL when len is 0, the
 * bytes are not RESP, or memory ran out (*oom set). */
fr_reply *wsct_reply(const char *bytes, size_t len, size_t *used, int *oom);
/* The same for a parsed value. */
fr_reply *wsct_reply_of(const wsr_value *v, int *oom);

/* A command as the engine's trace writes it (redis-cli's quoting), heap; NULL when out of
 * memory. */
char *wsct_command_text(int argc, const char *const *argv, const size_t *argvlen);
/* A reply as the trace writes it (+OK, "bulk", [a, b], (none) for NULL), heap. */
char *wsct_reply_text(const char *bytes, size_t len);

#endif /* TRAFFIC_INT_H */
