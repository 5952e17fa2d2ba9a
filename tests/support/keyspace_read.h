/* keyspace_read.h -- a whole keyspace read back through commands, the same way on the fake
 * and on a real redis-server, so that two servers can be compared after one loaded what
 * the other saved (test_rdb, test_rdb_file, test_aof).
 *
 * The reading is canonical: databases in order, keys in byte order, sets and hashes
 * sorted; each key shows its TYPE, OBJECT ENCODING, PEXPIRETIME (absolute, so two clocks
 * need not agree) and its whole value (a stream: XINFO STREAM ... FULL, whose times are
 * the absolute ones the file carries).  Every helper fails the running cmocka test when a
 * command cannot be run. */
#ifndef KEYSPACE_READ_H
#define KEYSPACE_READ_H

#include <stddef.h>

#include "fakeredis.h"
#include "redis_harness.h"

/* Runs one command on a side and returns its raw RESP2 reply (heap memory, free() it). */
typedef char *kr_runner(void *side, int argc, const char *const *argv, const size_t *lens);

/* The two sides: side is an fr_client* for kr_fake, an rh_conn* for kr_real. */
char *kr_fake(void *side, int argc, const char *const *argv, const size_t *lens);
char *kr_real(void *side, int argc, const char *const *argv, const size_t *lens);

/* A command line (split as redis-cli splits it) on a side. */
char *kr_line(kr_runner run, void *side, const char *line);

/* The bulk strings of a flat array reply sorted into one string, one a line (with pairs,
 * "field=value" lines): the order-free form of SMEMBERS and HGETALL. */
char *kr_canonical_array(const char *raw, int pairs);

/* What the key holds in the selected database: TYPE, OBJECT ENCODING (when
 * with_encoding), PEXPIRETIME when with_ttl, and its value. */
char *kr_value(kr_runner run, void *side, const char *key, size_t klen, int with_encoding,
               int with_ttl);

/* Every database's keys, each as kr_value shows it (encodings and TTLs included), then
 * FUNCTION LIST WITHCODE; database 0 is selected after. */
char *kr_keyspace(kr_runner run, void *side);

#endif
