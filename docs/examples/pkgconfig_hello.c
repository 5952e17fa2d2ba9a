/* The smallest program against an installed libfakeredis (docs/building.md):
 *   cc hello.c $(pkg-config --cflags --libs fakeredis) -o hello */
#include <stdio.h>

#include <fakeredis.h>

int main(void)
{
    fr_server *srv = fr_server_new(NULL);
    fr_client *c = fr_client_new(srv);
    fr_exec_line(c, "SET greeting hello EX 10");
    fr_clock_advance(srv, 4000); /* virtual time: nothing waits */
    const fr_reply *r = fr_exec_line(c, "TTL greeting");
    printf("TTL after 4 s of virtual time: %lld\n", r->integer);
    fr_client_free(c);
    fr_server_free(srv);
    return 0;
}
