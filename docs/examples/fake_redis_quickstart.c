/* A complete program using libfakeredis: build it with
 *   cc quickstart.c $(pkg-config --cflags --libs fakeredis) -o quickstart
 * It is also built and run by the test suite, so it cannot go stale. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fakeredis.h"

int main(void)
{
    fr_config cfg = fr_config_default(); /* seed 1, clock at 1,700,000,000,000 ms */
    cfg.seed = 42;
    fr_server *srv = fr_server_new(&cfg);
    fr_client *c = fr_client_new(srv);

    /* One command, arguments as (argc, argv, lengths): binary safe. */
    const char *set[] = {"SET", "greeting", "hello"};
    const fr_reply *r = fr_exec(c, 3, set, NULL);
    printf("SET -> %s\n", r->str); /* OK */

    /* The same, written as a redis-cli line. */
    fr_exec_line(c, "RPUSH jobs a b c");
    r = fr_exec_line(c, "LRANGE jobs 0 -1");
    for (size_t i = 0; i < r->count; i++) printf("jobs[%zu] = %s\n", i, r->elements[i].str);

    /* The virtual clock drives expiry: nothing happens until you move it. */
    fr_exec_line(c, "SET session x PX 1000");
    fr_clock_advance(srv, 1001);
    r = fr_exec_line(c, "GET session");
    printf("session after 1001 ms: %s\n", r->type == FR_REPLY_NIL ? "(nil)" : r->str);

    /* A pipeline: every reply stays valid until the next call on this client. */
    const char *incr[] = {"INCR", "counter"};
    const char *get[] = {"GET", "counter"};
    fr_command cmds[] = {{2, incr, NULL}, {2, incr, NULL}, {2, get, NULL}};
    const fr_reply *replies[3];
    fr_pipeline(c, 3, cmds, replies);
    printf("counter = %s\n", replies[2]->str); /* 2 */

    /* A fault hook: the next INCR answers an error instead of running. */
    fr_fault_command(srv, "INCR", "ERR injected by the test", 1);
    r = fr_exec_line(c, "INCR counter");
    printf("INCR -> -%s\n", r->str);

    /* Raw RESP2 bytes, exactly what redis-server would send. */
    char buf[64];
    size_t n = fr_reply_encode(fr_exec_line(c, "GET greeting"), buf, sizeof(buf));
    printf("RESP: %.*s", (int)n, buf);

    /* The canonical dump of the whole keyspace. */
    char *dump = fr_dump(srv, NULL);
    fputs(dump, stdout);
    int ok = strstr(dump, "\"counter\" string\n  \"2\"\n") != NULL;
    free(dump);

    fr_server_free(srv); /* frees its clients too */
    return ok ? 0 : 1;
}
