/* fuzz_recording.c -- the recording reader (recording/include/wsr.h), the RESP framing
 * under it (wsr_resp.h), and what reads a recording -- the traffic checker and the trace
 * (scenario/include/wsc_traffic.h) -- on arbitrary bytes (libFuzzer target).
 *
 * The input is a recording file.  Checked:
 * - wsr_parse gives a recording or one line "fuzz.rec:LINE:COL: error: MESSAGE" whose LINE
 *   is at most one past the input's last line and whose COL is at most one past that line's
 *   end (or "fuzz.rec:0:0: error: out of memory"), never both and never neither; with
 *   allow_open it accepts whatever it accepts without (and more: no end line);
 * - every event of a recording it gives renders back (wsr_event_text) to a line that parses
 *   again into the same event -- kind, connection, fields, arguments and reply bytes -- so
 *   what the checker quotes is what the file says;
 * - every reply is whole RESP (wsr_resp_whole) and parses (wsr_resp_parse) into a tree whose
 *   strings lie inside the reply;
 * - the checker, against subscriptions of every form it reads (a stream with a delay queue
 *   and a reclaim subscription, an atomic stream, a reliable list with a recovery set, a
 *   plain list, a channel), gives a result (or out of memory) without a crash, a leak or a
 *   sanitizer report, and the same report twice; the trace renders.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "wsc.h"
#include "wsc_traffic.h"
#include "wsi_alloc.h"
#include "wsr.h"
#include "wsr_resp.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define FILE_NAME "fuzz.rec"

static void fail(const char *what, const char *detail)
{
    fprintf(stderr, "fuzz_recording: %s%s%s\n", what, detail ? ": " : "", detail ? detail : "");
    abort();
}

/* The subscriptions every parsed recording is checked against. */
static const char SUBS[] =
    "scenario fuzz\n"
    "subscribe s stream s group g consumer c1 delay-queue dq\n"
    "subscribe r stream s group g consumer c2 reclaim 0\n"
    "subscribe a stream a group g mode atomic\n"
    "subscribe j reliable-list j recovery j:claims 100\n"
    "subscribe p list p\n"
    "subscribe n channel news\n";

static wsc_scenario *subs;

/* Checks an error line against the input: "fuzz.rec:L:C: error: ..." in range. */
static void check_error(const char *err, const uint8_t *data, size_t size)
{
    if (!strcmp(err, FILE_NAME ":0:0: error: out of memory")) return;
    unsigned long line, col;
    int n = 0;
    if (sscanf(err, FILE_NAME ":%lu:%lu: error: %n", &line, &col, &n) != 2 || n == 0 ||
        !err[n] || strchr(err, '\n'))
        fail("a malformed error line", err);
    size_t lines = 1, start = 0, at_line = 1;
    for (size_t i = 0; i < size; i++)
        if (data[i] == '\n') lines++;
    if (line < 1 || line > lines + 1) fail("an error on a line the input does not have", err);
    for (size_t i = 0; i < size && at_line < line; i++)
        if (data[i] == '\n') {
            at_line++;
            start = i + 1;
        }
    size_t len = 0;
    while (start + len < size && data[start + len] != '\n') len++;
    if (at_line == line && col > len + 1) fail("an error past its line's end", err);
}

/* Whether two events are the same (what a line says). */
static int same_event(const wsr_event *a, const wsr_event *b)
{
    if (a->kind != b->kind || a->conn != b->conn || a->batch != b->batch || a->t != b->t ||
        a->multi != b->multi || a->since != b->since || a->pid != b->pid || a->n != b->n ||
        a->from != b->from || a->argc != b->argc || a->reply_len != b->reply_len ||
        a->name_len != b->name_len || !a->name != !b->name || !a->word != !b->word ||
        !a->addr != !b->addr)
        return 0;
    if ((a->word && strcmp(a->word, b->word)) || (a->addr && strcmp(a->addr, b->addr)) ||
        (a->name && memcmp(a->name, b->name, a->name_len)) ||
        (a->reply_len && memcmp(a->reply, b->reply, a->reply_len)))
        return 0;
    for (int i = 0; i < a->argc; i++)
        if (a->argvlen[i] != b->argvlen[i] || memcmp(a->argv[i], b->argv[i], a->argvlen[i]))
            return 0;
    return 1;
}

/* Each event's line parses back into the same event. */
static void check_round_trip(const wsr_recording *r)
{
    for (size_t i = 0; i < r->n; i++) {
        const wsr_event *e = &r->ev[i];
        char *line = wsr_event_text(e, 0);
        if (!line) continue; /* out of memory */
        /* alone in a recording: its connection opened first (unless it is the open) */
        size_t cap = strlen(line) + 128;
        char *text = malloc(cap);
        int has_conn = e->kind != WSR_CLOCK && e->kind != WSR_NOTE && e->kind != WSR_END;
        int n = 0;
        if (e->kind == WSR_OPEN || !has_conn)
            n = snprintf(text, cap, "wsim-recording 1\n%s\n%s", line, e->kind == WSR_END ? "" : "end t=0\n");
        else
            n = snprintf(text, cap, "wsim-recording 1\nopen %llu t=0 addr=?\n%s\nend t=0\n",
                         (unsigned long long)e->conn, line);
        char *err = NULL;
        wsr_recording *back = wsr_parse(FILE_NAME, text, (size_t)n, NULL, &err);
        if (!back) {
            if (err && strstr(err, "out of memory")) {
                free(err);
                free(text);
                free(line);
                continue;
            }
            fprintf(stderr, "line: %s\n", line);
            fail("a rendered line does not parse back", err);
        }
        const wsr_event *b = &back->ev[e->kind == WSR_OPEN || !has_conn ? 0 : 1];
        if (!same_event(e, b)) {
            fprintf(stderr, "line: %s\n", line);
            fail("a rendered line parses back into another event", NULL);
        }
        wsr_free(back);
        free(text);
        free(line);
    }
}

/* Every reply is whole RESP, and the first value's tree lies inside it. */
static void check_replies(const wsr_recording *r)
{
    for (size_t i = 0; i < r->n; i++) {
        const wsr_event *e = &r->ev[i];
        if (!e->reply_len) continue;
        if (!wsr_resp_whole(e->reply, e->reply_len, NULL, NULL))
            fail("the reader kept a reply that is not whole RESP", NULL);
        size_t used = 0;
        int oom = 0;
        wsr_value *v = wsr_resp_parse(e->reply, e->reply_len, &used, &oom);
        if (!v) {
            if (!oom) fail("a whole reply does not parse", NULL);
            continue;
        }
        if (used == 0 || used > e->reply_len) fail("a value longer than its reply", NULL);
        if (v->str && (v->str < e->reply || v->str + v->len > e->reply + used))
            fail("a value's string outside its reply", NULL);
        free(v);
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (!subs) {
        char *err = NULL;
        subs = wsc_parse("subs.wsim", SUBS, sizeof SUBS - 1, &err);
        if (!subs) fail("the fixed subscriptions do not parse", err);
    }
    char *err = NULL;
    wsr_recording *r = wsr_parse(FILE_NAME, (const char *)data, size, NULL, &err);
    if (!r == !err) fail("a recording and an error, or neither", err);
    if (!r) {
        check_error(err, data, size);
        free(err);
    }
    wsr_read_options open = {.allow_open = 1};
    char *err2 = NULL;
    wsr_recording *r2 = wsr_parse(FILE_NAME, (const char *)data, size, &open, &err2);
    if (r && !r2 && !(err2 && strstr(err2, "out of memory")))
        fail("allow_open refuses what the strict reader reads", err2);
    free(err2);
    if (r2) {
        check_replies(r2);
        check_round_trip(r2);
        if (r2->n <= 400) {
            wsc_traffic_result a, b;
            int ra = wsc_traffic_check(r2, subs, NULL, &a);
            int rb = wsc_traffic_check(r2, subs, NULL, &b);
            if (ra == 0 && rb == 0 && strcmp(a.report, b.report) != 0)
                fail("two checks of one recording differ", NULL);
            if (ra == 0) wsc_traffic_result_free(&a);
            if (rb == 0) wsc_traffic_result_free(&b);
            char *trace = wsc_traffic_trace(r2);
            free(trace);
        }
        wsr_free(r2);
    }
    wsr_free(r);
    return 0;
}
