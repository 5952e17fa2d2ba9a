/* test_scenario_run.c -- the scenario runner (scenario/src/run.c) on small scenario texts
 * on the in-process fake: every expectation kind passes when it holds and fails when it
 * does not, with the exact report "file:line: <line>\n  expected: ...\n  got:      ...\n
 * trace around it:\n" followed by the tail of the trace; refusals ("=> refused [text]");
 * steps that fail unexpectedly (ERROR); the run stops at the first failure; `needs fake`
 * scenarios are skipped on a real backend without even connecting; an unreachable server
 * is an ERROR; seeds and determinism. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <cmocka.h>

#include "wsc.h"

/* ----- Helpers ------------------------------------------------------------------------- */

#define NAME "t.wsim"

/* A stream subscription s on stream s, group g, consumer c1 (lines 1-3). */
#define STREAM                                                                             \
    "scenario T\n"                                                                         \
    "setup XGROUP CREATE s g $ MKSTREAM\n"                                                 \
    "subscribe s stream s group g consumer c1\n"
/* ... and two entries read at once (lines 4-6). */
#define READ2 STREAM "produce s a as e1\nproduce s b as e2\nread s expect e1 e2\n"

/* Parses text (which must parse) and runs it with opt (NULL: the fake). */
static wsc_result run_opt(const char *text, const wsc_options *opt)
{
    char *err = NULL;
    wsc_scenario *sc = wsc_parse(NAME, text, strlen(text), &err);
    if (!sc) fail_msg("did not parse: %s", err);
    wsc_result res;
    assert_int_equal(wsc_run(sc, opt, &res), 0);
    wsc_free(sc);
    return res;
}

/* Parses and runs text on the fake. */
static wsc_result run(const char *text) { return run_opt(text, NULL); }

/* The status as wsim prints it. */
static const char *status_name(wsc_status s)
{
    switch (s) {
    case WSC_PASS: return "PASS";
    case WSC_FAIL: return "FAIL";
    case WSC_SKIP: return "SKIP";
    default: return "ERROR";
    }
}

/* The run must pass with `checks` checks. */
static void passes(const char *text, size_t checks)
{
    wsc_result r = run(text);
    if (r.status != WSC_PASS) {
        print_error("input:\n%s\n", text);
        fail_msg("%s, not PASS:\n%s", status_name(r.status), r.report ? r.report : "");
    }
    assert_null(r.report);
    assert_int_equal(r.failures, 0);
    assert_int_equal(r.checks, checks);
    assert_non_null(r.trace);
    assert_non_null(r.diagram);
    assert_non_null(r.state);
    wsc_result_free(&r);
}

/* The last n lines of text (all of them if fewer), each prefixed with `indent`. */
static char *tail_lines(const char *text, size_t n, const char *indent)
{
    size_t len = strlen(text), lines = 0;
    size_t start = len;
    while (start > 0) {
        if (text[start - 1] == '\n' && start != len && ++lines >= n) break;
        start--;
    }
    size_t cap = (len - start) * 2 + strlen(indent) * (n + 2) + 1;
    char *out = calloc(cap, 1);
    assert_non_null(out);
    size_t o = 0;
    for (size_t i = start; i < len;) {
        size_t e = i;
        while (e < len && text[e] != '\n') e++;
        o += (size_t)snprintf(out + o, cap - o, "%s%.*s\n", indent, (int)(e - i), text + i);
        i = e + 1;
    }
    return out;
}

/* The run must end with `status` and the report must start with `head` (a head that does
 * not end in a newline is the start of its last line), then "  trace around it:\n" and the
 * tail of the trace, indented by four spaces: at least its last 16 lines (exactly 16:
 * the_trace_around_a_failure). */
static void reports(const char *text, wsc_status status, const char *head)
{
    wsc_result r = run(text);
    if (r.status != status) {
        print_error("input:\n%s\n", text);
        fail_msg("%s, not %s:\n%s", status_name(r.status), status_name(status),
                 r.report ? r.report : "(no report)");
    }
    assert_non_null(r.report);
    assert_int_equal(r.failures, 1);
    size_t hl = strlen(head);
    if (strncmp(r.report, head, hl) != 0) {
        print_error("input:\n%s\n", text);
        fail_msg("report:\n%s\nexpected it to start with:\n%s", r.report, head);
    }
    const char *rest = r.report + hl;
    if (hl && head[hl - 1] != '\n') {
        rest = strchr(rest, '\n');
        assert_non_null(rest);
        rest++;
    }
    if (strncmp(rest, "  trace around it:\n", 19) != 0)
        fail_msg("no \"  trace around it:\" line after the head:\n%s", r.report);
    assert_non_null(r.trace);
    rest += 19;
    size_t shown = 0, total = 0;
    for (const char *p = rest; *p; p++) shown += *p == '\n';
    for (const char *p = r.trace; *p; p++) total += *p == '\n';
    assert_true(shown >= (total < 16 ? total : 16));
    char *tail = tail_lines(r.trace, shown, "    ");
    assert_string_equal(rest, tail);
    free(tail);
    wsc_result_free(&r);
}

#define FAILS(text, head) reports(text, WSC_FAIL, head)
#define ERRS(text, head) reports(text, WSC_ERROR, head)

/* ----- Passing runs ------------------------------------------------------------------------ */

/* The seed page's window story: 7 checks; the trace, diagram and state are filled; two
 * runs give the same trace; the counts are the engine's. */
static void the_window_story_passes(void **state)
{
    (void)state;
    static const char text[] =
        STREAM "produce s \"order 1\" as e1\nproduce s \"order 2\" as e2\n"
               "produce s \"order 3\" as e3\n"
               "read s expect e1 e2 e3\n"
               "e1: queue INCR counter:$e1\ne1: ack\n"
               "e2: queue INCR counter:$e2\ne2: drop\n"
               "e3: queue INCR counter:$e3\ne3: ack\n"
               "expect flush 1 of s\n"
               "  e1> INCR counter:$e1\n"
               "  e3> INCR counter:$e3\n"
               "  XACK s g $e1 $e2 $e3\n"
               "expect round-trips 1 flushes\n"
               "check GET counter:$e2 => $-1\n"
               "check GET counter:$e1 => \"1\"\n"
               "expect pending s none\n"
               "expect invariants\n";
    passes(text, 7);
    wsc_result a = run(text), b = run(text);
    assert_int_equal(a.status, WSC_PASS);
    assert_string_equal(a.trace, b.trace);
    assert_int_equal(a.trace_hash, b.trace_hash);
    assert_string_equal(a.diagram, b.diagram);
    assert_non_null(strstr(a.diagram, "flush 1 of s"));
    assert_int_equal(a.counts.flushes, 1);
    assert_int_equal(a.counts.flush_round_trips, 1);
    assert_int_equal(a.counts.read_round_trips, 1);
    assert_int_equal(a.counts.round_trips, 3); /* the subscription's XGROUP CREATE too */
    assert_int_equal(a.counts.deliveries, 3);
    /* The final state: every key with its type and value, sorted. */
    assert_string_equal(a.state,
                        "counter:1700000000000-0 (string): \"1\"\n"
                        "counter:1700000000000-2 (string): \"1\"\n"
                        "s (stream): [[\"1700000000000-0\", [\"_payload\", \"order 1\"]], "
                        "[\"1700000000000-1\", [\"_payload\", \"order 2\"]], "
                        "[\"1700000000000-2\", [\"_payload\", \"order 3\"]]]\n");
    wsc_result_free(&a);
    wsc_result_free(&b);
}

/* A scenario with no statements passes with no checks; `needs fake` runs on the fake. */
static void empty_and_needs_fake_scenarios_run_on_the_fake(void **state)
{
    (void)state;
    passes("scenario Nothing at all\nexpect nothing\n", 0);
    passes("scenario Clock\nneeds fake the clock\nadvance 5\ncheck PING => +PONG\n", 1);
    wsc_options fake = {.backend = "fake"};
    wsc_result r = run_opt("scenario Clock\nneeds fake the clock\ncheck PING => +PONG\n", &fake);
    assert_int_equal(r.status, WSC_PASS);
    wsc_result_free(&r);
}

/* ----- The traps of issue 16 ------------------------------------------------------------- */

/* A scenario that checks nothing fails, at its `scenario` line, unless it says `expect
 * nothing` (then it passes with 0 checks). */
static void a_scenario_must_check_something(void **state)
{
    (void)state;
    wsc_result r = run("# a comment first\nscenario Nothing at all\nsetup SET a b\n");
    assert_int_equal(r.status, WSC_FAIL);
    assert_int_equal(r.checks, 0);
    assert_string_equal(r.report,
                        NAME ":2: scenario Nothing at all\n"
                        "  expected: at least one expectation (or `expect nothing`)\n"
                        "  got:      the scenario checked nothing: add an expectation (expect "
                        "..., check, read ... expect, => REPLY, => refused), or say `expect "
                        "nothing` to run it for its trace\n"
                        "  trace around it:\n"
                        "    #1 admin (setup): ok\n"
                        "      SET a b -> +OK\n");
    wsc_result_free(&r);
    r = run("scenario Empty\n");
    assert_int_equal(r.status, WSC_FAIL);
    assert_string_equal(r.report, NAME ":1: scenario Empty\n"
                        "  expected: at least one expectation (or `expect nothing`)\n"
                        "  got:      the scenario checked nothing: add an expectation (expect "
                        "..., check, read ... expect, => REPLY, => refused), or say `expect "
                        "nothing` to run it for its trace\n");
    wsc_result_free(&r);
    passes("scenario Trace only\nsetup SET a b\nexpect nothing\n", 0);
    /* a refusal is a check too */
    passes("scenario Refused\nsetup SET a b\nsetup INCR a => refused not an integer\n", 1);
}

/* A fault that never fires fails the run at its line, once everything else held: its
 * command is never sent, or was sent before the fault was armed. */
static void a_fault_that_never_fires_fails(void **state)
{
    (void)state;
    /* one flush, one XACK: the 2nd never comes */
    FAILS(READ2 "fault window crash-after 2nd XACK\ne1: ack\ne2: ack\nexpect flushes 1 of s\n",
          NAME ":7: fault window crash-after 2nd XACK\n  expected: the fault fires\n"
          "  got:      fault at line 7 never fired: the window connection did not send that "
          "occurrence of the command after the fault was armed (or a crash cut it off "
          "first)\n");
    /* the window's round trip 2 (the flush) went before the fault was armed */
    FAILS(READ2 "e1: ack\ne2: ack\nexpect flushes 1 of s\nfault window lose-replies round-trip 2\n",
          NAME ":10: fault window lose-replies round-trip 2\n  expected: the fault fires\n"
          "  got:      fault at line 10 never fired: the window connection did not send that "
          "round trip's command after the fault was armed (or a crash cut it off first)\n");
    /* the reader never sends a SET */
    FAILS(READ2 "fault reader error 1st SET\ne1: ack\ne2: ack\nexpect flushes 1 of s\n",
          NAME ":7: fault reader error 1st SET\n  expected: the fault fires\n"
          "  got:      fault at line 7 never fired: the reader connection");
    /* a fault that fires is no check, and fails nothing */
    passes(READ2 "fault window crash-before 1st XACK\ne1: ack\ne2: ack\nexpect pending s e1 e2\n", 2);
    passes(READ2 "fault window error 1st XACK\ne1: ack\ne2: ack\nexpect flushes 1 of s\n", 2);
    /* an earlier failure is the one said */
    FAILS(READ2 "fault window crash-after 2nd XACK\ncheck PING => +NO\n",
          NAME ":8: check PING => +NO\n  expected: +NO\n  got:      +PONG\n");
}

/* A flush block is what the flush sent: a command the crash stopped before it left is not
 * in it (the trace shows it "not sent"), and a round trip the crash stopped whole is no
 * round trip of the block. */
static void a_flush_block_is_what_was_sent(void **state)
{
    (void)state;
    const char *crash = READ2 "fault window crash-after 1st INCR\n"
                              "e1: queue INCR x\ne1: ack\ne2: ack\n";
    char text[1024];
    snprintf(text, sizeof text, "%sexpect flush 1 of s\n  e1> INCR x\ncheck GET x => \"1\"\n",
             crash);
    passes(text, 3);
    snprintf(text, sizeof text, "%sexpect flush 1 of s\n  e1> INCR x\n  XACK s g $e1 $e2\n",
             crash);
    FAILS(text, NAME ":11: expect flush 1 of s\n  expected:\n      e1> INCR x\n"
                "      XACK s g 1700000000000-0 1700000000000-1\n  got:\n      e1> INCR x\n");
    wsc_result r = run(text);
    assert_non_null(strstr(r.trace, "XACK s g 1700000000000-0 1700000000000-1 -> (none) (not sent)"));
    wsc_result_free(&r);
    /* a retry's second round trip, stopped whole by a crash after the first */
    passes(READ2 "fault window crash-after round-trip 2 command 1\n"
                 "e1: retry\ne2: ack\nexpect flush 1 of s\n  e1> XADD s * _payload a\n", 2);
}

/* The trace says what each admin command is for: setup, check, and the reads of
 * `expect pending` and `expect delayed`. */
static void admin_commands_are_labelled(void **state)
{
    (void)state;
    wsc_result r = run(READ2 "check PING => +PONG\nexpect pending s e1 e2\n");
    assert_int_equal(r.status, WSC_PASS);
    assert_non_null(strstr(r.trace, "#1 admin (setup): ok\n  XGROUP CREATE s g $ MKSTREAM"));
    assert_non_null(strstr(r.trace, "admin (check): ok\n  PING -> +PONG"));
    assert_non_null(strstr(r.trace, "admin (expect): ok\n  XPENDING s g - + 1000000"));
    assert_null(strstr(r.trace, "admin (setup): ok\n  PING"));
    wsc_result_free(&r);
}

/* A reclaim subscription that says no mode recovers in its stream's: the atomic one's
 * redeliveries settle inside MULTI/EXEC. */
static void a_recovery_subscription_inherits_the_mode(void **state)
{
    (void)state;
    wsc_result r = run("scenario T\nsetup XGROUP CREATE s g $ MKSTREAM\n"
                       "subscribe s stream s group g consumer c1 mode atomic\n"
                       "subscribe r stream s group g consumer c2 reclaim 0\n"
                       "expect nothing\n");
    assert_int_equal(r.status, WSC_PASS);
    assert_non_null(strstr(r.trace, "-- subscription r: stream s group g, atomic mode"));
    wsc_result_free(&r);
}

/* A file that says `cluster` runs on the fake's emulation, and on a real server only when
 * it is said to be a cluster (wsc_options.cluster): else it is skipped, before connecting. */
static void cluster_files_need_a_cluster_on_a_server(void **state)
{
    (void)state;
    const char *text = "scenario C\ncluster\ncheck SET a b => +OK\n";
    wsc_result r = run(text);
    assert_int_equal(r.status, WSC_PASS);
    wsc_result_free(&r);
    wsc_options nowhere = {.backend = "unix:///nonexistent/wsim-cluster.sock"};
    r = run_opt(text, &nowhere);
    assert_int_equal(r.status, WSC_SKIP);
    assert_string_equal(r.report, "the file says `cluster`: wsim run --cluster runs it on one");
    wsc_result_free(&r);
    char *err = NULL;
    wsc_scenario *sc = wsc_parse(NAME, text, strlen(text), &err);
    assert_non_null(sc);
    const char *needs = NULL;
    assert_non_null(wsc_skips(sc, &nowhere, &needs));
    assert_string_equal(needs, "a one-node Redis Cluster");
    nowhere.cluster = 1; /* said to be one: it runs (and the server is not there) */
    assert_null(wsc_skips(sc, &nowhere, NULL));
    wsc_free(sc);
    r = run_opt(text, &nowhere);
    assert_int_equal(r.status, WSC_ERROR);
    wsc_result_free(&r);
}

/* wsim explore leaves the file's crash faults out: the points and verdicts of a file with
 * one are those of the same file without it; error faults stay. */
static void explore_leaves_the_files_crash_faults_out(void **state)
{
    (void)state;
    const char *with = READ2 "fault window crash-after 1st XACK\ne1: ack\ne2: ack\n"
                             "expect invariants\n";
    const char *without = READ2 "e1: ack\ne2: ack\nexpect invariants\n";
    wsc_exploration a, b;
    char *err = NULL;
    wsc_scenario *sa = wsc_parse(NAME, with, strlen(with), &err);
    wsc_scenario *sb = wsc_parse(NAME, without, strlen(without), &err);
    assert_non_null(sa);
    assert_non_null(sb);
    assert_int_equal(wsc_explore(sa, NULL, &a), 0);
    assert_int_equal(wsc_explore(sb, NULL, &b), 0);
    assert_null(a.error);
    assert_null(b.error);
    assert_true(a.npoints > 2);
    assert_int_equal(a.npoints, b.npoints);
    for (size_t i = 0; i < a.npoints; i++) {
        assert_string_equal(a.points[i].verdict, b.points[i].verdict);
        assert_string_equal(a.points[i].command_text, b.points[i].command_text);
    }
    wsc_exploration_free(&a);
    wsc_exploration_free(&b);
    wsc_free(sa);
    wsc_free(sb);
    /* a file whose expectations need its own crash: said, with the fault's line */
    const char *needs_it = READ2 "fault window crash-before 1st XACK\ne1: ack\ne2: ack\n"
                                 "expect pending s e1 e2\n";
    sa = wsc_parse(NAME, needs_it, strlen(needs_it), &err);
    assert_non_null(sa);
    assert_int_equal(wsc_explore(sa, NULL, &a), 0);
    assert_non_null(a.error);
    assert_non_null(strstr(a.error, "the scenario fails without a crash (explore leaves out "
                                    "its crash faults, line 7: each crash point is the one "
                                    "crash of its run):\n" NAME ":10: expect pending s e1 e2"));
    wsc_exploration_free(&a);
    wsc_free(sa);
}

/* ----- read ... expect ------------------------------------------------------------------------ */

/* read ... expect: aliases in delivery order, nothing, a report. */
static void read_expect(void **state)
{
    (void)state;
    passes(READ2 "read s expect nothing\n", 2);
    FAILS(STREAM "produce s a as e1\nread s expect e2\nproduce s b as e2\n",
          NAME ":5: read s expect e2\n  expected: e2\n  got:      e1\n");
    FAILS(STREAM "produce s a as e1\nproduce s b as e2\nread s expect e2 e1\n",
          NAME ":6: read s expect e2 e1\n  expected: e2 e1\n  got:      e1 e2\n");
    FAILS(READ2 "read s expect e1\n",
          NAME ":7: read s expect e1\n  expected: e1\n  got:      nothing\n");
    FAILS(STREAM "produce s a as e1\nread s expect nothing\n",
          NAME ":5: read s expect nothing\n  expected: nothing\n  got:      e1\n");
    FAILS(STREAM "produce s a as e1\nread s expect report\n",
          NAME ":5: read s expect report\n  expected: report\n  got:      e1\n");
    /* An entry produced without a name shows as its id. */
    FAILS(STREAM "produce s a\nread s expect nothing\n",
          NAME ":5: read s expect nothing\n  expected: nothing\n  got:      1700000000000-0\n");
}

/* ----- check and pool replies ------------------------------------------------------------------ */

/* check and pool replies in every notation; $alias and $$ inside. */
static void check_and_pool_replies(void **state)
{
    (void)state;
    passes("scenario T\nsetup RPUSH l a \"b c\"\ncheck LRANGE l 0 -1 => [\"a\", \"b c\"]\n"
           "check GET nokey => $-1\ncheck INCR n => :1\ncheck PING => +PONG\n"
           "check HGET l f => -WRONGTYPE Operation against a key holding the wrong kind of value\n"
           "check LPOP nokey 1 => *-1\n"
           "pool INCR n => :2\npool SET k $$v => +OK\ncheck GET k => \"$$v\"\n",
           9);
    FAILS("scenario T\nsetup SET k 1\ncheck GET k => \"2\"\n",
          NAME ":3: check GET k => \"2\"\n  expected: \"2\"\n  got:      \"1\"\n");
    FAILS("scenario T\ncheck GET k => \"\"\n",
          NAME ":2: check GET k => \"\"\n  expected: \"\"\n  got:      $-1\n");
    FAILS("scenario T\npool INCR n => :5\n",
          NAME ":2: pool INCR n => :5\n  expected: :5\n  got:      :1\n");
    /* $alias in the expected text stands for the id. */
    passes(STREAM "produce s a as e1\ncheck XRANGE s - + => [[\"$e1\", [\"_payload\", \"a\"]]]\n", 1);
    FAILS(STREAM "produce s a as e1\ncheck XLEN s => \"$e1\"\n",
          NAME ":5: check XLEN s => \"$e1\"\n  expected: \"1700000000000-0\"\n  got:      :1\n");
}

/* <*> in an expected reply stands for any one item: a string, a number, an array. */
static void reply_wildcards(void **state)
{
    (void)state;
    passes(STREAM "produce s a as e1\nproduce s b\n"
                  "check XRANGE s - + => [[<*>, [\"_payload\", \"a\"]], <*>]   # any ids\n"
                  "check XRANGE s - + COUNT 1 => [<*>]\n"
                  "check XLEN s => <*>\n"
                  "check XRANGE s - + COUNT 1 => [[\"$e1\", <*>]]\n"
                  "check ECHO \"x, ]\" => <*>\n"
                  "check ECHO \"a #b\" => \"a #b\" # the '#' inside quotes is kept\n",
           6);
    FAILS(STREAM "produce s a\ncheck XRANGE s - + => [<*>, <*>]\n",
          NAME ":5: check XRANGE s - + => [<*>, <*>]\n  expected: [<*>, <*>]\n"
               "  got:      [[\"1700000000000-0\", [\"_payload\", \"a\"]]]\n");
    /* Any one reply: a nil or an error too. */
    passes("scenario W\ncheck GET nokey => <*>\ncheck HGET nokey => <*>\n"
           "check LPOP nokey 1 => <*>\n", 3);
    /* Not two. */
    FAILS("scenario W\nsetup RPUSH l a b\ncheck LRANGE l 0 -1 => [<*>]\n",
          NAME ":3: check LRANGE l 0 -1 => [<*>]\n  expected: [<*>]\n  got:      [\"a\", \"b\"]\n");
}

/* A whole reply is one item even when its text holds a comma: an error reply as the
 * expected reply's only item. */
static void a_wildcard_matches_a_whole_error_reply(void **state)
{
    (void)state;
    passes("scenario W\ncheck NOSUCH => <*>\ncheck NOSUCH => -<*>\n", 2);
}

/* expect read: the commands of a read's round trips, "--" between them. */
static void expect_read(void **state)
{
    (void)state;
    passes(STREAM "produce s a as e1\nread s expect e1\nexpect read 1 of s\n"
                  "  XREADGROUP GROUP g c1 COUNT 64 BLOCK 10 STREAMS s >\n",
           2);
    passes(STREAM "produce s a as e1\nread s expect e1\nexpect read 1 of s\n  ? ? ? ? ? ? ? ? ? ? ?\n", 2);
    /* A reliable list reads with COUNT LMOVEs in one round trip. */
    passes("scenario L\nsubscribe r reliable-list jobs count 2\nproduce r j1 raw as j1\n"
           "read r expect j1\nexpect read 1 of r\n"
           "  LMOVE jobs jobs.processing RIGHT LEFT\n  LMOVE jobs jobs.processing RIGHT LEFT\n",
           2);
    FAILS(STREAM "produce s a as e1\nread s expect e1\nexpect read 1 of s\n  XREADGROUP ?\n",
          NAME ":6: expect read 1 of s\n  expected:\n      XREADGROUP ?\n"
               "  got:\n      XREADGROUP GROUP g c1 COUNT 64 BLOCK 10 STREAMS s >\n");
    FAILS(STREAM "produce s a as e1\nread s expect e1\nexpect read 2 of s\n  PING\n",
          NAME ":6: expect read 2 of s\n  expected:\n      PING\n  got:      no such read\n");
}

/* ----- expect flush ---------------------------------------------------------------------------- */

/* Two entries acked with one INCR each: one flush, INCR INCR XACK in one round trip. */
#define FLUSH2                                                                              \
    READ2 "e1: queue INCR c:$e1\ne1: ack\ne2: queue INCR c:$e2\ne2: ack\n"

/* expect flush: exact commands, ? wildcards, origins, round trips, missing and extra commands. */
static void expect_flush(void **state)
{
    (void)state;
    passes(FLUSH2 "expect flush 1 of s\n  e1> INCR c:$e1\n  e2> INCR c:$e2\n  XACK s g $e1 $e2\n", 2);
    /* Bare ? is any argument. */
    passes(FLUSH2 "expect flush 1 of s\n  ? ?\n  e2> INCR ?\n  XACK s g ? ?\n", 2);
    /* The origin may be left out. */
    passes(FLUSH2 "expect flush 1 of s\n  INCR c:$e1\n  INCR c:$e2\n  XACK s g $e1 $e2\n", 2);
    /* A wrong argument: expected and got in full, as blocks. */
    FAILS(FLUSH2 "expect flush 1 of s\n  e1> INCR c:$e1\n  e2> INCR c:$e1\n  XACK s g $e1 $e2\n",
          NAME ":11: expect flush 1 of s\n"
               "  expected:\n"
               "      e1> INCR c:1700000000000-0\n"
               "      e2> INCR c:1700000000000-0\n"
               "      XACK s g 1700000000000-0 1700000000000-1\n"
               "  got:\n"
               "      e1> INCR c:1700000000000-0\n"
               "      e2> INCR c:1700000000000-1\n"
               "      XACK s g 1700000000000-0 1700000000000-1\n");
    /* A quoted "?" is a literal question mark. */
    FAILS(FLUSH2 "expect flush 1 of s\n  INCR \"?\"\n  INCR ?\n  XACK s g ? ?\n",
          NAME ":11: expect flush 1 of s\n"
               "  expected:\n"
               "      INCR ?\n"
               "      INCR ?\n"
               "      XACK s g ? ?\n"
               "  got:\n"
               "      e1> INCR c:1700000000000-0\n"
               "      e2> INCR c:1700000000000-1\n"
               "      XACK s g 1700000000000-0 1700000000000-1\n");
    /* The wrong origin. */
    FAILS(FLUSH2 "expect flush 1 of s\n  e2> INCR ?\n  INCR ?\n  XACK s g ? ?\n",
          NAME ":11: expect flush 1 of s\n"
               "  expected:\n"
               "      e2> INCR ?\n"
               "      INCR ?\n"
               "      XACK s g ? ?\n"
               "  got:\n"
               "      e1> INCR c:1700000000000-0\n"
               "      e2> INCR c:1700000000000-1\n"
               "      XACK s g 1700000000000-0 1700000000000-1\n");
    /* A round trip boundary that is not there. */
    FAILS(FLUSH2 "expect flush 1 of s\n  INCR ?\n  --\n  INCR ?\n  XACK s g ? ?\n",
          NAME ":11: expect flush 1 of s\n"
               "  expected:\n"
               "      INCR ?\n"
               "      --\n"
               "      INCR ?\n"
               "      XACK s g ? ?\n"
               "  got:\n"
               "      e1> INCR c:1700000000000-0\n"
               "      e2> INCR c:1700000000000-1\n"
               "      XACK s g 1700000000000-0 1700000000000-1\n");
    /* Fewer commands written than sent. */
    FAILS(FLUSH2 "expect flush 1 of s\n  INCR ?\n  INCR ?\n",
          NAME ":11: expect flush 1 of s\n"
               "  expected:\n"
               "      INCR ?\n"
               "      INCR ?\n"
               "  got:\n"
               "      e1> INCR c:1700000000000-0\n"
               "      e2> INCR c:1700000000000-1\n"
               "      XACK s g 1700000000000-0 1700000000000-1\n");
    /* More commands written than sent. */
    FAILS(FLUSH2 "expect flush 1 of s\n  INCR ?\n  INCR ?\n  XACK ? ? ? ?\n  PING\n",
          NAME ":11: expect flush 1 of s\n"
               "  expected:\n"
               "      INCR ?\n"
               "      INCR ?\n"
               "      XACK ? ? ? ?\n"
               "      PING\n"
               "  got:\n"
               "      e1> INCR c:1700000000000-0\n"
               "      e2> INCR c:1700000000000-1\n"
               "      XACK s g 1700000000000-0 1700000000000-1\n");
    /* A flush that did not happen. */
    FAILS(FLUSH2 "expect flush 2 of s\n  PING\n",
          NAME ":11: expect flush 2 of s\n  expected:\n      PING\n  got:      s made 1 flush\n");
    FAILS(READ2 "expect flush 1 of s\n  PING\n",
          NAME ":7: expect flush 1 of s\n  expected:\n      PING\n  got:      s made 0 flushes\n");
}

/* Round trips of an atomic flush: MULTI ... EXEC, then the settle, all in one round trip;
 * a "--" separates round trips when there are several (a retry: the copy first, the entry
 * verbatim).  (The group exists before the subscription, which makes it too: BUSYGROUP.) */
static void expect_flush_round_trips(void **state)
{
    (void)state;
    passes(STREAM "setup XGROUP CREATE t g $ MKSTREAM\n"
                  "subscribe a stream t group g consumer c1 mode atomic\n"
                  "produce a x as e1\nread a expect e1\ne1: queue INCR c\ne1: ack\n"
                  "expect flush 1 of a\n  e1> MULTI\n  e1> INCR c\n  e1> XACK t g $e1\n  e1> EXEC\n",
           2);
    /* A retry: the copy is written in round trip 1, the XACK (of both) in round trip 2. */
    static const char retry[] = READ2 "e1: queue INCR x\ne1: retry\ne2: ack\n";
    char text[1024];
    snprintf(text, sizeof text, "%s%s", retry,
             "expect flush 1 of s\n  e1> XADD s * _payload a\n"
             "  --\n  XACK s g $e2 $e1\n");
    passes(text, 2);
    snprintf(text, sizeof text, "%s%s", retry,
             "expect flush 1 of s\n  e1> XADD s * _payload a\n"
             "  XACK s g $e2 $e1\n");
    FAILS(text, NAME ":10: expect flush 1 of s\n"
                "  expected:\n"
                "      e1> XADD s * _payload a\n"
                "      XACK s g 1700000000000-1 1700000000000-0\n"
                "  got:\n"
                "      e1> XADD s * _payload a\n"
                "      --\n"
                "      XACK s g 1700000000000-1 1700000000000-0\n");
}

/* Pipeline boundaries (".."): not checked by a block that marks none; once marked, every
 * one is, and the report says which line expected one or before which command one was. */
static void expect_flush_pipelines(void **state)
{
    (void)state;
    /* two segments and the settles: three pipelines in one round trip */
    passes(FLUSH2 "expect flush 1 of s\n  e1> INCR c:$e1\n  ..\n  e2> INCR c:$e2\n  ..\n"
                  "  XACK s g $e1 $e2\n",
           2);
    /* a batch's segment is one pipeline */
    passes(STREAM "setup XGROUP CREATE t g $ MKSTREAM\n"
                  "subscribe b stream t group g consumer c1 batch 2\n"
                  "produce b x as x1\nproduce b y as x2\nread b expect x1 x2\n"
                  "x1: queue INCR a\nx2: queue INCR b\nx1: ack\nx2: ack\n"
                  "expect flush 1 of b\n  INCR a\n  INCR b\n  ..\n  XACK t g $x1 $x2\n",
           2);
    /* a retry: the segment, the retry write, then (the next round trip) the settles */
    passes(READ2 "e1: retry\ne2: queue INCR c\ne2: ack\n"
                 "expect flush 1 of s\n  e2> INCR c\n  ..\n"
                 "  e1> XADD s * _payload a\n  --\n  XACK s g $e2 $e1\n",
           2);
    FAILS(FLUSH2 "expect flush 1 of s\n  e1> INCR c:$e1\n  e2> INCR c:$e2\n  ..\n"
                 "  XACK s g $e1 $e2\n",
          NAME ":11: expect flush 1 of s\n"
               "  expected:\n"
               "      e1> INCR c:1700000000000-0\n"
               "      e2> INCR c:1700000000000-1\n"
               "      ..\n"
               "      XACK s g 1700000000000-0 1700000000000-1\n"
               "  got:\n"
               "      e1> INCR c:1700000000000-0\n"
               "      ..\n"
               "      e2> INCR c:1700000000000-1\n"
               "      ..\n"
               "      XACK s g 1700000000000-0 1700000000000-1\n"
               "    a pipeline boundary before `INCR c:1700000000000-1` (line 13), which the "
               "block does not mark\n");
    FAILS(STREAM "setup XGROUP CREATE t g $ MKSTREAM\n"
                 "subscribe b stream t group g consumer c1 batch 2\n"
                 "produce b x as x1\nproduce b y as x2\nread b expect x1 x2\n"
                 "x1: queue INCR a\nx2: queue INCR b\nx1: ack\nx2: ack\n"
                 "expect flush 1 of b\n  INCR a\n  ..\n  INCR b\n  ..\n  XACK t g $x1 $x2\n",
          NAME ":13: expect flush 1 of b\n"
               "  expected:\n      INCR a\n      ..\n      INCR b\n      ..\n"
               "      XACK t g 1700000000000-0 1700000000000-1\n"
               "  got:\n      x1> INCR a\n      x2> INCR b\n      ..\n"
               "      XACK t g 1700000000000-0 1700000000000-1\n"
               "    line 15 marks a pipeline boundary before `INCR b`, but it left in the same "
               "pipeline as the command before it\n");
}

/* ----- Counters: round trips, flushes, reports -------------------------------------------- */

/* expect round-trips of each kind (the total counts the subscription's start, its XGROUP
 * CREATE, which is none of the others). */
static void expect_round_trips(void **state)
{
    (void)state;
    static const char base[] = FLUSH2 "pool INCR p\n";
    char text[1024];
    snprintf(text, sizeof text, "%s%s", base,
             "expect round-trips 4\nexpect round-trips 4 total\nexpect round-trips 1 reads\n"
             "expect round-trips 1 flushes\nexpect round-trips 1 pool\n");
    passes(text, 6);
    snprintf(text, sizeof text, "%s%s", base, "expect round-trips 3\n");
    FAILS(text, NAME ":12: expect round-trips 3\n  expected: 3 round trips\n  got:      4 round trips\n");
    snprintf(text, sizeof text, "%s%s", base, "expect round-trips 2 reads\n");
    FAILS(text, NAME ":12: expect round-trips 2 reads\n  expected: 2 round trips\n  got:      1 round trips\n");
    snprintf(text, sizeof text, "%s%s", base, "expect round-trips 0 flushes\n");
    FAILS(text, NAME ":12: expect round-trips 0 flushes\n  expected: 0 round trips\n  got:      1 round trips\n");
    snprintf(text, sizeof text, "%s%s", base, "expect round-trips 0 pool\n");
    FAILS(text, NAME ":12: expect round-trips 0 pool\n  expected: 0 round trips\n  got:      1 round trips\n");
}

/* expect flushes [of SUB] and expect reports. */
static void expect_flushes_and_reports(void **state)
{
    (void)state;
    passes(FLUSH2 "expect flushes 1\nexpect flushes 1 of s\nexpect reports 0\n", 4);
    FAILS(FLUSH2 "expect flushes 2\n",
          NAME ":11: expect flushes 2\n  expected: 2 flushes\n  got:      1 flushes\n");
    FAILS(FLUSH2 "subscribe t list l\nexpect flushes 1 of t\n",
          NAME ":12: expect flushes 1 of t\n  expected: 1 flushes\n  got:      0 flushes\n");
    FAILS(FLUSH2 "expect reports 1\n",
          NAME ":11: expect reports 1\n  expected: 1 reports\n  got:      0 reports\n");
}

/* A flush with an error reply (INCR on a hash): the next read hands out its report. */
#define REPORTED                                                                            \
    STREAM "setup HSET h f v\nproduce s a as e1\nread s expect e1\n"                        \
           "e1: queue INCR h\ne1: ack\nread s expect report\n"

/* expect report: each field, the error text, and no report handed out. */
static void expect_report(void **state)
{
    (void)state;
    passes(REPORTED "expect reports 1\nexpect report s\n"
                    "expect report s commands 1 settles 1 failed 1 error WRONGTYPE Operation\n"
                    "expect report s failed 1\nexpect pending s none\n",
           7);
    FAILS(REPORTED "expect report s failed 2\n",
          NAME ":10: expect report s failed 2\n"
               "  expected: expect report s failed 2\n"
               "  got:      report of s: commands 1 settles 1 failed 1 error WRONGTYPE "
               "Operation against a key holding the wrong kind of value\n");
    FAILS(REPORTED "expect report s commands 2\n",
          NAME ":10: expect report s commands 2\n"
               "  expected: expect report s commands 2\n"
               "  got:      report of s: commands 1 settles 1 failed 1 error WRONGTYPE "
               "Operation against a key holding the wrong kind of value\n");
    FAILS(REPORTED "expect report s settles 0\n",
          NAME ":10: expect report s settles 0\n"
               "  expected: expect report s settles 0\n"
               "  got:      report of s: commands 1 settles 1 failed 1 error WRONGTYPE "
               "Operation against a key holding the wrong kind of value\n");
    FAILS(REPORTED "expect report s error ERR\n",
          NAME ":10: expect report s error ERR\n"
               "  expected: expect report s error ERR\n"
               "  got:      report of s: commands 1 settles 1 failed 1 error WRONGTYPE "
               "Operation against a key holding the wrong kind of value\n");
    FAILS(READ2 "expect report s\n",
          NAME ":7: expect report s\n  expected: a failure report handed out by a read\n"
               "  got:      no read of s handed out a report\n");
    /* A report waits until a read hands it out. */
    FAILS(STREAM "setup HSET h f v\nproduce s a as e1\nread s expect e1\ne1: queue INCR h\n"
                 "e1: ack\nexpect report s\n",
          NAME ":9: expect report s\n  expected: a failure report handed out by a read\n"
               "  got:      no read of s handed out a report\n");
    FAILS(STREAM "setup HSET h f v\nproduce s a as e1\nread s expect e1\ne1: queue INCR h\n"
                 "e1: ack\nread s expect nothing\n",
          NAME ":9: read s expect nothing\n  expected: nothing\n"
               "  got:      the failure report of flush 1 (1 failed: WRONGTYPE Operation against "
               "a key holding the wrong kind of value)\n");
}

/* ----- Pending entries ---------------------------------------------------------------------------- */

/* expect pending on a stream and on a reliable list; a plain list is an ERROR. */
static void expect_pending(void **state)
{
    (void)state;
    passes(READ2 "expect pending s e1 e2\nexpect pending s $e2 $e1\n"
                 "expect pending s 1700000000000-1 e1\n",
           4);
    /* An ack waits in the window until the flush: both stay pending until e2 settles. */
    passes(READ2 "e1: ack\nexpect pending s e1 e2\ne2: drop\nexpect pending s none\n", 3);
    passes(READ2 "e1: queue INCR x\ne1: abandon\ne2: ack\nexpect pending s e1\n", 2);
    FAILS(READ2 "e1: ack\nexpect pending s none\n",
          NAME ":8: expect pending s none\n  expected: none\n"
               "  got:      1700000000000-0 1700000000000-1\n");
    FAILS(READ2 "expect pending s e1\n",
          NAME ":7: expect pending s e1\n  expected: 1700000000000-0\n"
               "  got:      1700000000000-0 1700000000000-1\n");
    FAILS(STREAM "produce s a as e1\nexpect pending s e1\n",
          NAME ":5: expect pending s e1\n  expected: 1700000000000-0\n  got:      none\n");
    /* A reliable list: the processing list (default <key>.processing, or `processing`). */
    passes("scenario L\nsubscribe r reliable-list jobs\nproduce r j1 raw as e1\nread r expect e1\n"
           "expect pending r e1\ne1: ack\nexpect pending r none\n"
           "check LRANGE jobs.processing 0 -1 => []\n",
           4);
    passes("scenario L\nsubscribe r reliable-list jobs processing inflight\nproduce r j1 raw as e1\n"
           "read r expect e1\nexpect pending r e1\ncheck LLEN inflight => :1\n",
           3);
    /* A plain list settles nothing: asking is an error of the scenario. */
    ERRS("scenario L\nsubscribe l list jobs\nexpect pending l none\n",
         NAME ":3: expect pending l none\n  error: l settles nothing: it has no pending entries\n");
}

/* expect pending as a block: exactly these entries, each with the consumer holding it
 * and its delivery count where the line writes them (XPENDING's extended form). */
static void expect_pending_block(void **state)
{
    (void)state;
    passes(READ2 "expect pending s\n  e1 consumer c1 deliveries 1\n  $e2 consumer c1\n"
                 "expect pending s\n  1700000000000-1 deliveries 1\n  e1\n",
           3);
    /* A reclaim read delivers again: the count goes up, the consumer is the reclaimer's. */
    passes(READ2 "subscribe r stream s group g consumer c2 reclaim 0 count 1\n"
                 "e1: abandon\ne2: ack\nread r expect e1\n"
                 "expect pending s\n  e1 consumer c2 deliveries 2\n",
           3);
    FAILS(READ2 "expect pending s\n  e1 consumer c2\n  e2\n",
          NAME ":7: expect pending s\n"
               "  expected:\n      1700000000000-0 consumer c2\n      1700000000000-1\n"
               "  got:\n      1700000000000-0 consumer c1 deliveries 1\n"
               "      1700000000000-1 consumer c1 deliveries 1\n");
    FAILS(READ2 "expect pending s\n  e1 deliveries 2\n  e2 deliveries 1\n",
          NAME ":7: expect pending s\n"
               "  expected:\n      1700000000000-0 deliveries 2\n      1700000000000-1 deliveries 1\n"
               "  got:\n      1700000000000-0 consumer c1 deliveries 1\n"
               "      1700000000000-1 consumer c1 deliveries 1\n");
    /* exactly these entries: one missing is a failure, whatever the fields */
    FAILS(READ2 "expect pending s\n  e1 consumer c1\n",
          NAME ":7: expect pending s\n"
               "  expected:\n      1700000000000-0 consumer c1\n"
               "  got:\n      1700000000000-0 consumer c1 deliveries 1\n"
               "      1700000000000-1 consumer c1 deliveries 1\n");
    FAILS(READ2 "e1: ack\ne2: ack\nexpect pending s\n  e1\n",
          NAME ":9: expect pending s\n  expected:\n      1700000000000-0\n  got:      none\n");
    /* A reliable list's block: the processing list's values, one a line. */
    passes("scenario L\nsubscribe r reliable-list jobs\nproduce r j1 raw as e1\nproduce r j2 raw as e2\n"
           "read r expect e1 e2\nexpect pending r\n  e2\n  j1\n",
           2);
    FAILS("scenario L\nsubscribe r reliable-list jobs\nproduce r j1 raw as e1\nread r expect e1\n"
          "expect pending r\n  e1\n  j2\n",
          NAME ":5: expect pending r\n  expected:\n      j1\n      j2\n  got:\n      j1\n");
}

/* ----- The delay queue ------------------------------------------------------------------------- */

/* A stream with a delay queue, e1 and e2 read (lines 1-6). */
#define DELAYQ                                                                             \
    "scenario Q\nsetup XGROUP CREATE s g $ MKSTREAM\n"                                      \
    "subscribe s stream s group g consumer c1 delay-queue dq\n"                             \
    "produce s a as e1\nproduce s b as e2\nread s expect e1 e2\n"

/* expect delayed: the members of the delay queue, decoded to the original id, with the
 * copy's retry counter and the time left until the due time. */
static void expect_delayed(void **state)
{
    (void)state;
    passes(DELAYQ "expect delayed s none\ne1: retry-after 30000\nexpect delayed s none\n"
                  "e2: ack\nexpect delayed s e1\nexpect delayed s $e1\n"
                  "expect delayed s\n  e1 retries 1 due-in 30000\n"
                  "advance 1000\nexpect delayed s\n  e1 due-in 29000\n"
                  "expect pending s none\n",
           8);
    /* Due: the sweep before the next read takes it out and adds the copy. */
    passes(DELAYQ "e1: retry-after 500\ne2: ack\nadvance 500\nexpect delayed s\n  e1 due-in 0\n"
                  "read s\nexpect delayed s none\n",
           3);
    /* The copy delayed again: its own id, and the counter raised once more. */
    passes(DELAYQ "e1: retry-after 10\ne2: ack\nadvance 10\nread s expect e1\n"
                  "e1: retry-after 10\nexpect delayed s\n  e1 retries 2 due-in 10\n"
                  "check XLEN s => :3\n",
           4);
    FAILS(DELAYQ "e1: retry-after 30000\ne2: ack\nexpect delayed s\n  e1 retries 2 due-in 30000\n",
          NAME ":9: expect delayed s\n"
               "  expected:\n      1700000000000-0 retries 2 due-in 30000\n"
               "  got:\n      1700000000000-0 retries 1 due-in 30000\n");
    FAILS(DELAYQ "e1: retry-after 30000\ne2: ack\nadvance 5\nexpect delayed s\n  e1 due-in 30000\n",
          NAME ":10: expect delayed s\n"
               "  expected:\n      1700000000000-0 due-in 30000\n"
               "  got:\n      1700000000000-0 retries 1 due-in 29995\n");
    FAILS(DELAYQ "e1: retry-after 30000\ne2: retry-after 5\nexpect delayed s e1\n",
          NAME ":9: expect delayed s e1\n  expected: 1700000000000-0\n"
               "  got:      1700000000000-0 1700000000000-1\n");
    FAILS(DELAYQ "expect delayed s e2\n",
          NAME ":7: expect delayed s e2\n  expected: 1700000000000-1\n  got:      none\n");
    /* A member that is not the engine's encoding shows as written. */
    FAILS(DELAYQ "setup ZADD dq 5 stranger\nexpect delayed s none\n",
          NAME ":8: expect delayed s none\n  expected: none\n  got:      \"stranger\"\n");
    /* The delay queue's key holding another type: an error of the scenario. */
    ERRS(DELAYQ "setup SET dq x\nexpect delayed s none\n",
         NAME ":8: expect delayed s none\n  error: reading the delay queue dq answered "
              "-WRONGTYPE Operation against a key holding the wrong kind of value\n");
}

/* ----- Invariants -------------------------------------------------------------------------------- */

/* Direct mode, a crash before the XACK: the INCR stays, the entry is redelivered by the
 * reclaim subscription and handled again: its effect is applied twice. */
#define DOUBLED                                                                             \
    "scenario D\nsetup XGROUP CREATE s g $ MKSTREAM\n"                                      \
    "subscribe s stream s group g consumer c1 mode direct\n"                                \
    "subscribe r stream s group g consumer c1 reclaim 0\n"                                  \
    "produce s a as e1\nread s expect e1\n"                                                 \
    "fault window crash-before 1st XACK\ne1: queue INCR c\ne1: ack\nrestart\n"              \
    "read r expect e1\ne1: queue INCR c\ne1: ack\ncheck GET c => \"2\"\n"

/* expect invariants and expect violation, holding and not. */
static void expect_invariants_and_violations(void **state)
{
    (void)state;
    passes(FLUSH2 "expect invariants\n", 2);
    passes(DOUBLED "expect violation doubled e1\nexpect delivery e1 count 2\n"
                   "expect delivery e1 retries 0\n",
           6);
    FAILS(DOUBLED "expect invariants\n",
          NAME ":15: expect invariants\n  expected: no invariant broken\n  got:      doubled: ");
    FAILS(DOUBLED "expect violation lost e1\n",
          NAME ":15: expect violation lost e1\n  expected: a 'lost' violation for entry e1\n"
               "  got:      doubled: ");
    FAILS(FLUSH2 "expect violation doubled e2\n",
          NAME ":11: expect violation doubled e2\n  expected: a 'doubled' violation for entry e2\n"
               "  got:      no violation\n");
    /* An entry never read is lost; the violation names that entry only. */
    passes(STREAM "produce s a as e1\nproduce s b as e2\nsetup XGROUP SETID s g $\n"
                  "expect violation lost e1\nexpect violation lost e2\n",
           2);
}

/* expect delivery count|retries. */
static void expect_delivery(void **state)
{
    (void)state;
    /* A retry makes a copy: the alias follows its latest delivery.  A plain retry re-adds
     * the entry verbatim (retries 0); with max-attempts the runtime's copy raises it. */
    passes(STREAM "produce s a as e1\nread s expect e1\ne1: retry\nread s expect e1\n"
                  "expect delivery e1 retries 0\nexpect delivery e1 count 1\ne1: ack\n"
                  "expect pending s none\nexpect invariants\n",
           6);
    passes("scenario T\nsubscribe s stream s group g consumer c1 max-attempts 3\n"
           "produce s a as e1\nread s expect e1\ne1: retry\nread s expect e1\n"
           "expect delivery e1 retries 1\ne1: retry\nread s expect e1\n"
           "expect delivery e1 retries 2\ne1: ack\nexpect pending s none\nexpect invariants\n",
           7);
    FAILS(STREAM "produce s a as e1\nread s expect e1\nexpect delivery e1 retries 1\n",
          NAME ":6: expect delivery e1 retries 1\n  expected: 1 retries\n  got:      0 retries\n");
    FAILS(STREAM "produce s a as e1\nread s expect e1\nexpect delivery e1 count 3\n",
          NAME ":6: expect delivery e1 count 3\n  expected: 3 deliveries\n  got:      1 deliveries\n");
}

/* expect warning: a cross-slot atomic segment under cluster emulation. */
static void expect_warning(void **state)
{
    (void)state;
    static const char crossslot[] =
        "scenario W\nneeds fake cluster emulation\ncluster\n"
        "setup XGROUP CREATE {o}s g $ MKSTREAM\n"
        "subscribe s stream {o}s group g consumer c1 mode atomic\n"
        "produce s a as e1\nread s expect e1\ne1: queue INCR other\ne1: ack\n";
    char text[1024];
    snprintf(text, sizeof text, "%s%s", crossslot,
             "expect warning CROSSSLOT\nexpect warning the atomic segment of $e1 touches other\n"
             "expect reports 1\n");
    passes(text, 4);
    snprintf(text, sizeof text, "%s%s", crossslot, "expect warning MOVED\n");
    FAILS(text, NAME ":10: expect warning MOVED\n  expected: MOVED\n"
                "  got:      1 warning, the last: the atomic segment of 1700000000000-0 touches "
                "other (slot 11361) outside the slot of {o}s (7497): Redis Cluster refuses the "
                "transaction with CROSSSLOT\n");
    FAILS(FLUSH2 "expect warning CROSSSLOT\n",
          NAME ":11: expect warning CROSSSLOT\n  expected: CROSSSLOT\n  got:      0 warnings\n");
}

/* expect published: every message that took effect on a channel, in order -- a publish
 * at once, a bound one that left with its ack, not one dropped with its segment, and the
 * admin connection's own. */
static void expect_published(void **state)
{
    (void)state;
    static const char base[] =
        STREAM "produce s a as e1\nproduce s b as e2\nread s expect e1 e2\n"
               "expect published news none\n"
               "e1: publish channel news \"at once\"\ne1: bind channel news\n"
               "e1: publish channel news bound-1\ne1: ack\n"
               "e2: bind channel news\ne2: publish channel news bound-2\ne2: drop\n";
    char text[2048];
    snprintf(text, sizeof text, "%s%s", base,
             "expect published news \"\\x00\\x00\\x00\\x00at once\" \"\\x00\\x00\\x00\\x00bound-1\"\n"
             "setup PUBLISH news by-admin\n"
             "expect published news \"\\x00\\x00\\x00\\x00at once\" \"\\x00\\x00\\x00\\x00bound-1\" by-admin\n"
             "expect published other none\n"
             "setup PUBLISH other $e2\nexpect published other $e2\n");
    passes(text, 6);
    snprintf(text, sizeof text, "%s%s", base, "expect published news bound-1\n");
    FAILS(text, NAME ":15: expect published news bound-1\n"
                "  expected: bound-1\n"
                "  got:      \"\\x00\\x00\\x00\\x00at once\" \"\\x00\\x00\\x00\\x00bound-1\"\n");
    snprintf(text, sizeof text, "%s%s", base, "expect published news none\n");
    FAILS(text, NAME ":15: expect published news none\n  expected: none\n"
                "  got:      \"\\x00\\x00\\x00\\x00at once\" \"\\x00\\x00\\x00\\x00bound-1\"\n");
}

/* ----- Refusals ------------------------------------------------------------------------------------- */

/* => refused: server error replies of setup, the engine's refusals, refusal texts. */
static void refusals(void **state)
{
    (void)state;
    /* A setup command refused by the server: its error reply. */
    passes("scenario R\nsetup SET k v\nsetup INCR k => refused\n"
           "setup INCR k => refused not an integer\n",
           2);
    FAILS("scenario R\nsetup SET k v\nsetup INCR k => refused WRONGTYPE\n",
          NAME ":3: setup INCR k => refused WRONGTYPE\n  expected: WRONGTYPE\n"
               "  got:      -ERR value is not an integer or out of range\n");
    FAILS("scenario R\nsetup PING => refused\n",
          NAME ":2: setup PING => refused\n  expected: the step to be refused\n"
               "  got:      it was not refused\n");
    /* The engine's refusals: a second settle (stale handle), reads and stops after stop. */
    passes(READ2 "e1: ack\ne1: ack => refused\ne1: queue INCR x => refused\n"
                 "e2: ack\nstop s\nread s => refused\nstop s => refused\n",
           5);
    FAILS(READ2 "e1: ack => refused\n",
          NAME ":7: e1: ack => refused\n  expected: the step to be refused\n"
               "  got:      it was not refused\n");
    FAILS(READ2 "e1: ack\ne1: drop => refused no such thing\n",
          NAME ":8: e1: drop => refused no such thing\n  expected: no such thing\n"
               "  got:      refused with: ");
    /* The refused text may name an entry. */
    passes(READ2 "e1: ack\ne1: drop => refused $e1\n", 2);
}

/* ----- Errors: steps that fail unexpectedly ---------------------------------------------------------- */

/* Steps that fail unexpectedly make the run an ERROR, with "error:" in the report. */
static void unexpected_failures_are_errors(void **state)
{
    (void)state;
    ERRS("scenario E\nsetup SET k v\nsetup INCR k\n",
         NAME ":3: setup INCR k\n  error: the setup command answered -ERR value is not an "
              "integer or out of range\n");
    ERRS(READ2 "e1: ack\ne1: ack\n",
         NAME ":8: e1: ack\n  error: the step failed: ");
    ERRS(STREAM "produce s a as e1\ne1: ack\n",
         NAME ":5: e1: ack\n  error: entry 'e1' was not delivered yet\n");
    ERRS(STREAM "stop s\nread s\n", NAME ":5: read s\n  error: the step failed: ");
    /* A stream subscription makes its group (XGROUP CREATE ... MKSTREAM); one whose group
     * cannot be made (the key holds a string) fails at once. */
    passes("scenario E\nsubscribe s stream s group g\nproduce s a as e1\nread s expect e1\n", 1);
    ERRS("scenario E\nsetup SET s x\nsubscribe s stream s group g\nproduce s a\nread s\n",
         NAME ":3: subscribe s stream s group g\n  error: s: the group g cannot be made: "
              "WRONGTYPE Operation against a key holding the wrong kind of value\n");
}

/* The run stops at the first failure: nothing after it runs or is counted. */
static void the_run_stops_at_the_first_failure(void **state)
{
    (void)state;
    wsc_result r = run("scenario S\ncheck PING => +PONG\ncheck PING => +NO\n"
                       "setup SET after 1\ncheck PING => +PONG\n");
    assert_int_equal(r.status, WSC_FAIL);
    assert_int_equal(r.checks, 1);
    assert_int_equal(r.failures, 1);
    assert_null(strstr(r.trace, "SET after"));
    assert_null(strstr(r.state, "after"));
    wsc_result_free(&r);
}

/* The trace around a failure is its last 16 lines (indented); short traces in full. */
static void the_trace_around_a_failure(void **state)
{
    (void)state;
    wsc_result r = run("scenario S\ncheck PING => +NO\n");
    assert_string_equal(r.report, NAME ":2: check PING => +NO\n  expected: +NO\n"
                                  "  got:      +PONG\n  trace around it:\n"
                                  "    #1 admin (check): ok\n      PING -> +PONG\n");
    wsc_result_free(&r);
    char text[4096] = "scenario S\n";
    for (int i = 0; i < 30; i++) strcat(text, "setup PING\n");
    strcat(text, "check DBSIZE => :1\n");
    r = run(text);
    assert_int_equal(r.status, WSC_FAIL);
    const char *t = strstr(r.report, "  trace around it:\n");
    assert_non_null(t);
    size_t lines = 0;
    for (t += 19; *t; t++) lines += *t == '\n';
    assert_int_equal(lines, 16);
    assert_non_null(strstr(r.report, "    #31 admin (check): ok\n      DBSIZE -> :0\n"));
    wsc_result_free(&r);
}

/* Messages, the trace and the diagrams name a subscription as the file does (not by its
 * key): two subscriptions of one stream (a reader and its reclaim twin) stay apart. */
static void subscriptions_are_named_as_in_the_file(void **state)
{
    (void)state;
    FAILS("scenario N\nsetup XGROUP CREATE o-key g $ MKSTREAM\n"
          "subscribe orders stream o-key group g consumer c1\n"
          "produce orders a as e1\nread orders expect e1\ne1: ack\nexpect flush 2 of orders\n  PING\n",
          NAME ":7: expect flush 2 of orders\n  expected:\n      PING\n"
               "  got:      orders made 1 flush\n");
    wsc_result r = run("scenario N\nsetup XGROUP CREATE o-key g $ MKSTREAM\n"
                       "subscribe orders stream o-key group g consumer c1\n"
                       "subscribe again stream o-key group g consumer c1 reclaim 0\n"
                       "produce orders a as e1\nread orders expect e1\ne1: ack\n"
                       "read again expect nothing\n");
    assert_int_equal(r.status, WSC_PASS);
    assert_non_null(strstr(r.diagram, "flush 1 of orders"));
    assert_non_null(strstr(r.trace, "(read 1 of again)"));
    wsc_result_free(&r);
}

/* ----- Backends ------------------------------------------------------------------------------------ */

/* A unix socket that listens and never accepts: a connection attempt would queue on it. */
typedef struct listener {
    char dir[32];
    char path[64];
    int fd;
} listener;

/* Makes l listen on a fresh unix socket in a temporary directory. */
static void listen_on(listener *l)
{
    snprintf(l->dir, sizeof l->dir, "/tmp/wsc_run_XXXXXX");
    assert_non_null(mkdtemp(l->dir));
    snprintf(l->path, sizeof l->path, "%s/r.sock", l->dir);
    l->fd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK, 0);
    assert_true(l->fd >= 0);
    struct sockaddr_un a = {.sun_family = AF_UNIX};
    snprintf(a.sun_path, sizeof a.sun_path, "%s", l->path);
    assert_int_equal(bind(l->fd, (struct sockaddr *)&a, sizeof a), 0);
    assert_int_equal(listen(l->fd, 8), 0);
}

/* Non-zero if someone connected. */
static int connected(listener *l)
{
    int c = accept(l->fd, NULL, NULL);
    if (c >= 0) {
        close(c);
        return 1;
    }
    assert_true(errno == EAGAIN || errno == EWOULDBLOCK);
    return 0;
}

/* Closes and removes l. */
static void unlisten(listener *l)
{
    close(l->fd);
    unlink(l->path);
    rmdir(l->dir);
}

/* needs fake on a real backend: SKIP with the reason, without connecting (not even for the
 * FLUSHALL the tool asks for). */
static void needs_fake_skips_without_connecting(void **state)
{
    (void)state;
    listener l;
    listen_on(&l);
    char url[200];
    snprintf(url, sizeof url, "unix://%s", l.path);
    wsc_options opt = {.backend = url, .flushall = 1};
    wsc_result r = run_opt("scenario Clock\nneeds fake clock control\nadvance 1000\n"
                           "check PING => +PONG\n", &opt);
    assert_int_equal(r.status, WSC_SKIP);
    assert_string_equal(r.report, "clock control");
    assert_int_equal(r.checks, 0);
    assert_int_equal(r.failures, 0);
    assert_null(r.trace);
    assert_int_equal(connected(&l), 0);
    wsc_result_free(&r);
    /* The same on a redis:// URL that nothing listens on. */
    wsc_options opt2 = {.backend = "redis://127.0.0.1:1", .flushall = 1};
    r = run_opt("scenario Clock\nneeds fake clock control\n", &opt2);
    assert_int_equal(r.status, WSC_SKIP);
    wsc_result_free(&r);
    unlisten(&l);
}

/* needs real: SKIP on the fake, and on a fakeredis-server (fake_server), with the reason,
 * without connecting; a real server runs it. */
static void needs_real_skips_on_the_fake_and_the_fake_server(void **state)
{
    (void)state;
    const char *text = "scenario Lua\nneeds real the fake has no Lua\ncheck PING => +PONG\n";
    wsc_result r = run_opt(text, NULL);
    assert_int_equal(r.status, WSC_SKIP);
    assert_string_equal(r.report, "the fake has no Lua");
    assert_int_equal(r.checks, 0);
    wsc_result_free(&r);
    listener l;
    listen_on(&l);
    char url[200];
    snprintf(url, sizeof url, "unix://%s", l.path);
    wsc_options opt = {.backend = url, .flushall = 1, .fake_server = 1};
    r = run_opt(text, &opt);
    assert_int_equal(r.status, WSC_SKIP);
    assert_int_equal(connected(&l), 0);
    wsc_result_free(&r);
    unlisten(&l);
}

/* A portable scenario on an unreachable server: ERROR "file: why", no checks. */
static void an_unreachable_server_is_an_error(void **state)
{
    (void)state;
    wsc_options opt = {.backend = "unix:///nonexistent/wsim/r.sock", .flushall = 1};
    wsc_result r = run_opt("scenario P\ncheck PING => +PONG\n", &opt);
    assert_int_equal(r.status, WSC_ERROR);
    assert_int_equal(r.checks, 0);
    assert_non_null(r.report);
    assert_true(strncmp(r.report, NAME ": ", strlen(NAME) + 2) == 0);
    assert_non_null(strstr(r.report, "unix:///nonexistent/wsim/r.sock"));
    assert_non_null(strstr(r.report, "No such file or directory"));
    assert_int_equal(r.report[strlen(r.report) - 1], '\n');
    wsc_result_free(&r);
    wsc_options opt2 = {.backend = "redis://127.0.0.1:1"};
    r = run_opt("scenario P\ncheck PING => +PONG\n", &opt2);
    assert_int_equal(r.status, WSC_ERROR);
    assert_non_null(strstr(r.report, "Connection refused"));
    wsc_result_free(&r);
}

/* ----- Seeds ---------------------------------------------------------------------------------------- */

/* The seed draws the process id that starts every recovery member of a reliable list
 * (recovery.rs claim_member): the file's `seed`, or the options' when seed_set.  Consumer
 * names draw nothing: without `consumer` a stream subscription is ruststream-0 whatever
 * the seed (stream.rs auto_consumer). */
static void seeds(void **state)
{
    (void)state;
    static const char text[] = "scenario S\nseed 5\n"
                               "subscribe s stream s group g\nproduce s a as e1\n"
                               "read s expect e1\ne1: ack\n"
                               "subscribe r reliable-list jobs recovery jobs:claims 100\n"
                               "produce r j as j1\nread r expect j1\nj1: ack\n";
    wsc_result a = run(text);
    wsc_options o5 = {.seed = 5, .seed_set = 1}, o6 = {.seed = 6, .seed_set = 1};
    wsc_result b = run_opt(text, &o5), c = run_opt(text, &o6);
    assert_int_equal(a.status, WSC_PASS);
    assert_int_equal(c.status, WSC_PASS);
    assert_string_equal(a.trace, b.trace);
    assert_int_equal(a.trace_hash, b.trace_hash);
    assert_string_not_equal(a.trace, c.trace);
    assert_true(a.trace_hash != c.trace_hash);
    assert_non_null(strstr(a.trace, "XREADGROUP GROUP g ruststream-0 "));
    assert_non_null(strstr(c.trace, "XREADGROUP GROUP g ruststream-0 "));
    /* They differ in the members only: the same trace once the ZADD/ZREM lines go. */
    const char *ta = strstr(a.trace, "ZADD jobs:claims"), *tc = strstr(c.trace, "ZADD jobs:claims");
    assert_non_null(ta);
    assert_non_null(tc);
    assert_int_equal(ta - a.trace, tc - c.trace);
    assert_memory_equal(a.trace, c.trace, (size_t)(ta - a.trace));
    wsc_result_free(&a);
    wsc_result_free(&b);
    wsc_result_free(&c);
}

/* The start line sets the fake's clock: ids follow it. */
static void start_sets_the_clock(void **state)
{
    (void)state;
    passes("scenario S\nstart 1600000000000\nsetup XGROUP CREATE s g $ MKSTREAM\n"
           "subscribe s stream s group g\nproduce s a as e1\n"
           "check XRANGE s - + => [[\"1600000000000-0\", [\"_payload\", \"a\"]]]\n"
           "advance 1500\nproduce s b\ncheck XREVRANGE s + - COUNT 1 => "
           "[[\"1600000001500-0\", [\"_payload\", \"b\"]]]\n",
           2);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(the_window_story_passes),
        cmocka_unit_test(empty_and_needs_fake_scenarios_run_on_the_fake),
        cmocka_unit_test(a_scenario_must_check_something),
        cmocka_unit_test(a_fault_that_never_fires_fails),
        cmocka_unit_test(a_flush_block_is_what_was_sent),
        cmocka_unit_test(admin_commands_are_labelled),
        cmocka_unit_test(a_recovery_subscription_inherits_the_mode),
        cmocka_unit_test(cluster_files_need_a_cluster_on_a_server),
        cmocka_unit_test(explore_leaves_the_files_crash_faults_out),
        cmocka_unit_test(read_expect),
        cmocka_unit_test(check_and_pool_replies),
        cmocka_unit_test(reply_wildcards),
        cmocka_unit_test(a_wildcard_matches_a_whole_error_reply),
        cmocka_unit_test(expect_read),
        cmocka_unit_test(expect_flush),
        cmocka_unit_test(expect_flush_round_trips),
        cmocka_unit_test(expect_flush_pipelines),
        cmocka_unit_test(expect_round_trips),
        cmocka_unit_test(expect_flushes_and_reports),
        cmocka_unit_test(expect_report),
        cmocka_unit_test(expect_pending),
        cmocka_unit_test(expect_pending_block),
        cmocka_unit_test(expect_delayed),
        cmocka_unit_test(expect_invariants_and_violations),
        cmocka_unit_test(expect_delivery),
        cmocka_unit_test(expect_warning),
        cmocka_unit_test(expect_published),
        cmocka_unit_test(refusals),
        cmocka_unit_test(unexpected_failures_are_errors),
        cmocka_unit_test(the_run_stops_at_the_first_failure),
        cmocka_unit_test(the_trace_around_a_failure),
        cmocka_unit_test(subscriptions_are_named_as_in_the_file),
        cmocka_unit_test(needs_fake_skips_without_connecting),
        cmocka_unit_test(needs_real_skips_on_the_fake_and_the_fake_server),
        cmocka_unit_test(an_unreachable_server_is_an_error),
        cmocka_unit_test(seeds),
        cmocka_unit_test(start_sets_the_clock),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
