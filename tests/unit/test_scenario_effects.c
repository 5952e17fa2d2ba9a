/* test_scenario_effects.c -- the handler convention (scenario/src/convention.c,
 * wsc_convention.h): payloads that follow it and those that do not; and the effects
 * check behind `expect invariants` in a file that drives a consumer process, on
 * keyspaces made by hand (the `check` lines play the consumer: they write and
 * acknowledge), for each verdict: fine, doubled, lost, leaked, a pending entry that is
 * not lost, and the files the check cannot judge. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "wsc.h"
#include "wsc_convention.h"

static void payloads(void **state)
{
    (void)state;
    wsc_task t;
    const char *ok = "{\"outcome\": \"ack\", \"writes\": [[\"INCRBY\", \"k:\\u00e9\", 100], "
                     "[\"SET\", \"a\\\"b\", \"x\\ny\"]]}";
    assert_int_equal(wsc_task_parse(ok, strlen(ok), &t), 0);
    assert_int_equal(t.ack, 1);
    assert_int_equal(t.nwrites, 2);
    assert_int_equal(t.argc[0], 3);
    assert_string_equal(t.argv[0][1], "k:\xc3\xa9");
    assert_string_equal(t.argv[0][2], "100");
    assert_string_equal(t.argv[1][1], "a\"b");
    assert_string_equal(t.argv[1][2], "x\ny");
    wsc_task_free(&t);
    const char *drop = " { \"writes\" : [ ] , \"outcome\" : \"drop\" } ";
    assert_int_equal(wsc_task_parse(drop, strlen(drop), &t), 0);
    assert_int_equal(t.ack, 0);
    assert_int_equal(t.nwrites, 0);
    wsc_task_free(&t);
    const char *no[] = {"", "ack", "{}", "{\"outcome\": \"retry\"}",
                        "{\"outcome\": \"ack\", \"writes\": [\"INCR\"]}",
                        "{\"outcome\": \"ack\", \"writes\": [[]]}",
                        "{\"outcome\": \"ack\", \"extra\": 1}",
                        "{\"outcome\": \"ack\"} trailing", "{\"outcome\": \"ack\"",
                        "{\"outcome\": \"ack\", \"writes\": [[\"INCR\", \"k\"]"};
    for (size_t i = 0; i < sizeof no / sizeof *no; i++) {
        assert_int_equal(wsc_task_parse(no[i], strlen(no[i]), &t), 1);
        assert_int_equal(t.nwrites, 0);
    }
}

#define NAME "t.wsim"
/* A file that drives a (never started) process, three convention entries; the check
 * lines below play the consumer. */
#define HEAD                                                                               \
    "scenario effects\n"                                                                   \
    "consumer c run true\n"                                                                \
    "setup XGROUP CREATE s g $ MKSTREAM\n"                                                 \
    "subscribe s stream s group g\n"                                                       \
    "produce s '{\"outcome\": \"ack\", \"writes\": [[\"INCRBY\", \"a\", \"5\"], [\"INCR\", \"a2\"]]}' as o1\n" \
    "produce s '{\"outcome\": \"drop\", \"writes\": [[\"INCR\", \"b\"]]}' as o2\n"          \
    "produce s '{\"outcome\": \"ack\"}' as o3\n"                                             \
    "check XREADGROUP GROUP g c COUNT 10 STREAMS s > => <*>\n"

/* Runs text; returns its status and copies its report (or "") into report. */
static wsc_status run(const char *text, char *report, size_t cap)
{
    char *err = NULL;
    wsc_scenario *sc = wsc_parse(NAME, text, strlen(text), &err);
    if (!sc) fail_msg("did not parse: %s", err);
    wsc_result res;
    assert_int_equal(wsc_run(sc, NULL, &res), 0);
    snprintf(report, cap, "%s", res.report ? res.report : "");
    wsc_status st = res.status;
    wsc_result_free(&res);
    wsc_free(sc);
    return st;
}

static void verdicts(void **state)
{
    (void)state;
    char rep[4096];
    /* each entry as it asks, settled */
    assert_int_equal(run(HEAD "check INCRBY a 5 => :5\ncheck INCR a2 => :1\n"
                              "check XACK s g $o1 $o2 $o3 => :3\nexpect invariants\n",
                         rep, sizeof rep), WSC_PASS);
    /* o1's writes twice */
    assert_int_equal(run(HEAD "check INCRBY a 10 => :10\ncheck INCR a2 => :1\n"
                              "check XACK s g $o1 $o2 $o3 => :3\n"
                              "expect violation doubled o1\nexpect invariants\n",
                         rep, sizeof rep), WSC_FAIL);
    assert_non_null(strstr(rep, "t.wsim:13: expect invariants\n"));
    assert_non_null(strstr(rep, "doubled (effects): entry o1 (1700000000000-0, ack): its write "
                                "INCRBY a 5 took effect 2 times"));
    /* o1 acknowledged without its writes: lost */
    assert_int_equal(run(HEAD "check XACK s g $o1 $o2 $o3 => :3\nexpect violation lost o1\n"
                              "expect invariants\n", rep, sizeof rep), WSC_FAIL);
    assert_non_null(strstr(rep, "lost (effects): entry o1 (1700000000000-0, ack): its write INCRBY a "
                                "5 took effect 0 times; entry o1 (1700000000000-0, ack): its "
                                "write INCR a2 took effect 0 times, and the entry is settled: "
                                "nothing will deliver it again"));
    /* ... but pending, it is not lost */
    assert_int_equal(run(HEAD "check XACK s g $o2 $o3 => :2\nexpect invariants\n", rep, sizeof rep),
                     WSC_PASS);
    /* the dropped entry's write: leaked */
    assert_int_equal(run(HEAD "check INCRBY a 5 => :5\ncheck INCR a2 => :1\ncheck INCR b => :1\n"
                              "check XACK s g $o1 $o2 $o3 => :3\nexpect violation leaked o2\n",
                         rep, sizeof rep), WSC_PASS);
}

/* The files the effects check cannot judge say which condition they break (the check
 * itself, on a run of the file's steps: the runner's contract, wsc_int.h). */
static void files_it_cannot_judge(void **state)
{
    (void)state;
    const char *base = "scenario effects\nconsumer c run true\n"
                       "setup XGROUP CREATE s g $ MKSTREAM\nsubscribe s stream s group g\n";
    struct { const char *lines, *why; } cases[] = {
        {"produce s plain as o1\n", "line 5: the payload is not the handler convention's"},
        {"produce s '{\"outcome\": \"ack\", \"writes\": [[\"SET\", \"k\", \"v\"]]}' as o1\n",
         "line 5: write 1 is not an INCR or INCRBY"},
        {"produce s '{\"outcome\": \"ack\", \"writes\": [[\"INCR\", \"k\"]]}' as o1\n"
         "produce s '{\"outcome\": \"ack\", \"writes\": [[\"INCR\", \"k\"]]}' as o2\n",
         "lines 5 and 6 write the same key k"},
        {"setup SET k 1\nproduce s '{\"outcome\": \"ack\", \"writes\": [[\"INCR\", \"k\"]]}' as o1\n",
         "line 5 names k, which line 6's entry counts in"},
        {"subscribe l list l\nproduce l '{\"outcome\": \"ack\"}' as o1\n",
         "line 6: the effects check follows stream subscriptions' own keys only"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        char text[2048], *err = NULL;
        snprintf(text, sizeof text, "%s%s", base, cases[i].lines);
        wsc_scenario *sc = wsc_parse(NAME, text, strlen(text), &err);
        if (!sc) fail_msg("did not parse: %s", err);
        wsc_runner *r = wsc_runner_new(sc, NULL);
        assert_non_null(r);
        for (size_t k = 0; k < sc->nst; k++) assert_int_equal(wsc_runner_exec(r, k), 0);
        wsc_effect *v;
        size_t n;
        char why[512];
        assert_int_equal(wsc_effects_check(wsc_runner_sim(r), sc, &v, &n, why, sizeof why), 1);
        if (!strstr(why, cases[i].why)) fail_msg("case %zu: %s", i, why);
        wsc_runner_free(r);
        wsc_free(sc);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(payloads),
        cmocka_unit_test(verdicts),
        cmocka_unit_test(files_it_cannot_judge),
    };
    return cmocka_run_group_tests_name("effects", tests, NULL, NULL);
}
