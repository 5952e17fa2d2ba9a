/* The consumer model of libwsim in one page (docs/engine.md, "The window"): the story of
 * the seed page "Window".  Three entries of stream `orders` are read by one pipelined
 * subscription of group `fulfilment`; each handler queues an INCR; the middle delivery
 * is dropped, the other two acked.  The window flushes once, in one round trip: the two
 * kept segments, then one XACK of the three ids.  The program prints the trace and the
 * flush diagram, shows that a settled delivery's handle is refused, and checks the
 * invariants.  Built and run by the test suite, like every docs example; give it a URL
 * (unix:///path/to/redis.sock) to run the same against a throwaway redis-server. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <ws_sim.h>

int main(int argc, char **argv)
{
    ws_sim_config cfg = {.backend = argc > 1 ? argv[1] : NULL, .seed = 1};
    ws_sim *sim = ws_sim_new(&cfg);
    if (!sim || ws_sim_err(sim)) {
        fprintf(stderr, "%s\n", sim ? ws_sim_errstr(sim) : "out of memory");
        return 1;
    }
    /* Setup on the admin connection: the group, and three entries as a producer writes
     * them (XADD orders * _payload <payload>). */
    ws_sim_command_line(sim, "FLUSHALL", NULL);
    ws_sim_command_line(sim, "XGROUP CREATE orders fulfilment $ MKSTREAM", NULL);
    const char *orders[] = {"order-1", "order-2", "order-3"};
    for (int i = 0; i < 3; i++)
        ws_sim_produce(sim, WS_FORM_STREAM, "orders", orders[i], strlen(orders[i]), NULL, 0,
                       NULL);

    /* .pipeline(): a window over the subscription; COUNT 64, BLOCK 10 by default. */
    ws_sub_config sc = {.form = WS_FORM_STREAM, .mode = WS_MODE_WINDOW, .key = "orders",
                        .group = "fulfilment", .consumer = "c1"};
    ws_sub *sub = ws_subscribe(sim, &sc);
    ws_read_result rr;
    if (!sub || ws_read(sub, &rr) != 0 || rr.n != 3) {
        fprintf(stderr, "read: %s\n", ws_sim_errstr(sim));
        return 1;
    }
    /* The handlers: each queues an INCR into its delivery's segment (no reply is seen). */
    for (size_t i = 0; i < rr.n; i++) {
        ws_delivery *d = ws_read_delivery(sub, i);
        char line[64];
        snprintf(line, sizeof line, "INCR picked:%s", ws_delivery_payload(d, NULL));
        ws_queue_line(d, line);
    }
    /* The outcomes: ack keeps a segment, drop discards it; the last settle leaves nothing
     * outstanding, so the window flushes inside this call. */
    ws_settle(ws_read_delivery(sub, 0), WS_ACK, 0);
    ws_settle(ws_read_delivery(sub, 1), WS_DROP, 0);
    ws_settle(ws_read_delivery(sub, 2), WS_ACK, 0);

    /* A handle kept past its delivery joins no later delivery. */
    int rc = ws_queue_line(ws_read_delivery(sub, 1), "INCR late");
    printf("late queue: %s: %s\n\n", ws_err_name(rc), ws_sim_errstr(sim));

    char *text = ws_sim_trace_text(sim, NULL);
    printf("%s\n", text);
    free(text);
    text = ws_sim_diagram(sim, NULL);
    printf("%s", text);
    free(text);

    const ws_violation *v;
    size_t nv = 0;
    ws_sim_check(sim, &v, &nv);
    ws_sim_counts n = ws_sim_get_counts(sim);
    const fr_reply *r = NULL;
    ws_sim_command_line(sim, "XPENDING orders fulfilment", &r);
    long long pending = r && r->type == FR_REPLY_ARRAY ? r->elements[0].integer : -1;
    printf("%llu read, %llu flush in %llu round trip; %lld pending; %zu violations\n",
           (unsigned long long)n.reads, (unsigned long long)n.flushes,
           (unsigned long long)n.flush_round_trips, pending, nv);
    int ok = rc == WS_ESTALE && n.flush_round_trips == 1 && pending == 0 && nv == 0;
    ws_sim_free(sim);
    return ok ? 0 : 1;
}
