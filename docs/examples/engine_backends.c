/* The backend layer of libwsim in one page (docs/engine.md, "Backends"): a window
 * connection to the in-process fake behind a fault layer, a consumer crash after the
 * first of two commands of a flush, and a second connection that sees what the server
 * kept.  Built and run by the test suite, like every docs example. */
#include <stdio.h>
#include <stdlib.h>

#include <ws_conn.h>

/* The trace hook: print each round trip as it happens. */
static void print_round_trip(void *ud, const ws_round_trip *rt)
{
    (void)ud;
    char *text = ws_round_trip_text(rt, NULL);
    if (text) fputs(text, stdout);
    free(text);
}

int main(void)
{
    fr_server *srv = fr_server_new(NULL);
    /* ws_conn_open("unix:///tmp/r.sock", 5000) would give the same on a real server. */
    ws_conn *window = ws_conn_faulty(ws_conn_fake(srv));
    ws_conn *checker = ws_conn_fake(srv);
    ws_conn_set_label(window, "window");
    ws_conn_set_trace(window, print_round_trip, NULL);

    /* Round trip 1 goes through; round trip 2 dies after its first command. */
    ws_fault_crash_after(window, 2, 1);
    const char *set[] = {"SET", "seen", "0"};
    const char *lpush[] = {"LPUSH", "ledger", "order-1"};
    const char *incr[] = {"INCR", "seen"};
    fr_command first[] = {{3, set, NULL}};
    fr_command flush[] = {{3, lpush, NULL}, {2, incr, NULL}};
    const fr_reply *replies[2];
    int rc = ws_pipeline(window, "read", 1, first, replies);
    printf("round trip 1: %s\n", ws_err_name(rc));
    rc = ws_pipeline(window, "flush of read 1", 2, flush, replies);
    printf("round trip 2: %s (%s)\n", ws_err_name(rc), ws_conn_errstr(window));

    /* The server kept the LPUSH, never saw the INCR. */
    const char *llen[] = {"LLEN", "ledger"};
    const char *get[] = {"GET", "seen"};
    fr_command check[] = {{2, llen, NULL}, {2, get, NULL}};
    if (ws_pipeline(checker, NULL, 2, check, replies) != 0) return 1;
    printf("LLEN ledger = %lld, GET seen = %s\n", replies[0]->integer, replies[1]->str);

    ws_conn_stats st = ws_conn_get_stats(window);
    printf("window: %llu round trips, %llu commands sent, %llu replies received\n",
           (unsigned long long)st.round_trips, (unsigned long long)st.commands_sent,
           (unsigned long long)st.replies_received);
    int ok = rc == WS_ECRASHED && replies[0]->integer == 1 && replies[1]->str[0] == '0';
    ws_conn_close(window);
    ws_conn_close(checker);
    fr_server_free(srv);
    return ok ? 0 : 1;
}
