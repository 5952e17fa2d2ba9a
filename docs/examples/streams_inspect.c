/* Streams and consumer groups on the virtual clock, checked through the inspection calls
 * (no RESP parsing needed).  Built and run by the test suite, like every docs example. */
#include <stdio.h>
#include <stdlib.h>

#include "fakeredis.h"

#define CHECK(cond)                                                    \
    do {                                                               \
        if (!(cond)) {                                                 \
            fprintf(stderr, "%s:%d: check failed: %s\n", __FILE__,     \
                    __LINE__, #cond);                                  \
            return 1;                                                  \
        }                                                              \
    } while (0)

int main(void)
{
    fr_server *srv = fr_server_new(NULL); /* clock at 1,700,000,000,000 ms */
    fr_client *c = fr_client_new(srv);

    /* Ids made by "*" come from the virtual clock: 1700000000000-0, -1, ... */
    fr_exec_line(c, "XADD orders * _payload order-1 h:x-ruststream-retry-count 0");
    fr_exec_line(c, "XADD orders * _payload order-2");
    fr_exec_line(c, "XGROUP CREATE orders fulfilment 0");
    const fr_reply *r =
        fr_exec_line(c, "XREADGROUP GROUP fulfilment worker-1 COUNT 10 STREAMS orders >");
    CHECK(r->type == FR_REPLY_ARRAY && r->elements[0].elements[1].count == 2);

    /* 30 s later, nothing acked: both entries pending, idle 30 s, delivered once. */
    fr_clock_advance(srv, 30000);
    fr_pending *pel;
    size_t n;
    CHECK(fr_stream_pending(srv, 0, "orders", 6, "fulfilment", 10, NULL, 0, &pel, &n) == 0);
    CHECK(n == 2);
    for (size_t i = 0; i < n; i++) {
        printf("pending %llu-%llu consumer=%s idle=%lld ms count=%llu\n",
               (unsigned long long)pel[i].id_ms, (unsigned long long)pel[i].id_seq,
               pel[i].consumer, (long long)pel[i].idle_ms,
               (unsigned long long)pel[i].delivery_count);
        CHECK(pel[i].idle_ms == 30000 && pel[i].delivery_count == 1);
    }
    free(pel);

    /* Ack one, delete the other while it is pending: a history read answers [id, nil]. */
    fr_exec_line(c, "XACK orders fulfilment 1700000000000-0");
    fr_exec_line(c, "XDEL orders 1700000000000-1");
    r = fr_exec_line(c, "XREADGROUP GROUP fulfilment worker-1 STREAMS orders 0");
    const fr_reply *entry = &r->elements[0].elements[1].elements[0];
    CHECK(entry->elements[1].type == FR_REPLY_NIL_ARRAY);

    /* A second consumer takes over what stayed pending for at least 10 s. */
    fr_clock_advance(srv, 10000);
    r = fr_exec_line(c, "XAUTOCLAIM orders fulfilment worker-2 10000 0-0");
    CHECK(r->elements[2].count == 1); /* the deleted entry is reported and leaves the PEL */

    fr_consumer_state st;
    CHECK(fr_stream_consumer(srv, 0, "orders", 6, "fulfilment", 10, "worker-1", 8, &st) == 0);
    CHECK(st.pending == 0);

    fr_stream_meta meta;
    CHECK(fr_stream_meta_get(srv, 0, "orders", 6, &meta) == 0);
    CHECK(meta.length == 1 && meta.entries_added == 2 && meta.groups == 1);

    fr_stream_entry *entries;
    CHECK(fr_stream_entries(srv, 0, "orders", 6, &entries, &n) == 0 && n == 1);
    printf("entry %llu-%llu %s=%s\n", (unsigned long long)entries[0].id_ms,
           (unsigned long long)entries[0].id_seq, entries[0].fv[0], entries[0].fv[1]);
    free(entries);

    char *dump = fr_dump(srv, NULL);
    fputs(dump, stdout);
    free(dump);
    fr_server_free(srv);
    return 0;
}
