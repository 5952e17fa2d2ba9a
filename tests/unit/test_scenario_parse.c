/* test_scenario_parse.c -- the scenario parser (scenario/src/parse.c, docs/scenarios.md):
 * every statement and every option parses into what the runner reads; every error message
 * of the parser comes out, with its exact "name:line:col: error: ..." text, for some input;
 * and malformed input never crashes it: every truncation of a valid file and thousands of
 * seeded random mutations either parse or give error lines naming the file (one per line
 * at most, in line order).
 *
 * The parsed form is read through scenario/src/wsc_int.h (the parser's contract with the
 * runner), so a test can say which field an option lands in. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "test_rng.h"
#include "wsi_alloc.h"
#include "wsc.h"
#include "wsc_int.h"

/* ----- Helpers ------------------------------------------------------------------------- */

#define NAME "t.wsim"

/* The head most tests start from: a title, a stream group and a stream subscription. */
#define HEAD "scenario T\n"
#define STREAM                                                                             \
    HEAD "setup XGROUP CREATE s g $ MKSTREAM\n"                                            \
         "subscribe s stream s group g\n"
/* ... with two entries, e1 and e2. */
#define ENTRIES STREAM "produce s a as e1\nproduce s b as e2\n"

/* Parses text that must parse; fails the test with the parser's message otherwise. */
static wsc_scenario *ok(const char *text)
{
    char *err = NULL;
    wsc_scenario *sc = wsc_parse(NAME, text, strlen(text), &err);
    if (!sc) {
        print_error("input:\n%s\n", text);
        fail_msg("did not parse: %s", err ? err : "(no message)");
    }
    assert_null(err);
    return sc;
}

/* The last statement of a scenario. */
static const wsc_stmt *last(const wsc_scenario *sc)
{
    assert_true(sc->nst > 0);
    return &sc->st[sc->nst - 1];
}

/* Parses text that must not parse; returns the message (heap). */
static char *bad(const char *text, size_t len)
{
    char *err = NULL;
    wsc_scenario *sc = wsc_parse(NAME, text, len, &err);
    if (sc) {
        wsc_free(sc);
        print_error("input:\n%.*s\n", (int)len, text);
        fail_msg("parsed, but an error was expected");
    }
    assert_non_null(err);
    return err;
}

/* Token i of an array, as a string. */
static const char *tok(const wsc_tok *t, size_t n, size_t i)
{
    assert_true(i < n);
    return t[i].s;
}

/* ----- The file and its header lines -------------------------------------------------- */

/* The title is the rest of the line as written (a '#' is part of it), trimmed; the file
 * name is kept for messages; a header line is no statement. */
static void scenario_line(void **state)
{
    (void)state;
    wsc_scenario *sc = ok("# a comment first\n\nscenario   The \"window\" # not a comment  \r\n");
    assert_string_equal(wsc_title(sc), "The \"window\" # not a comment");
    assert_string_equal(wsc_name(sc), NAME);
    assert_null(wsc_needs_fake(sc));
    assert_int_equal(wsc_statements(sc), 0);
    assert_int_equal(sc->seed, 1); /* the default seed */
    assert_int_equal(sc->cluster, 0);
    assert_int_equal(sc->start_ms, 0);
    wsc_free(sc);
    /* One path for every header line: a tab after the keyword, blanks inside, quotes and
     * '#' -- the title is the rest of the line as written, whatever separates it. */
    sc = ok("scenario\tTabbed   title # comment\n");
    assert_string_equal(wsc_title(sc), "Tabbed   title # comment");
    wsc_free(sc);
    sc = ok("scenario A   \"B\"  C\n");
    assert_string_equal(wsc_title(sc), "A   \"B\"  C");
    wsc_free(sc);
    sc = ok("scenario \t A   \"B\"  C\n");
    assert_string_equal(wsc_title(sc), "A   \"B\"  C");
    wsc_free(sc);
    /* "scenario " takes the rest of the line as written: a '#' there is the title. */
    sc = ok("scenario # just a comment\n");
    assert_string_equal(wsc_title(sc), "# just a comment");
    wsc_free(sc);
    /* A NULL name is "<scenario>". */
    char *err = NULL;
    sc = wsc_parse(NULL, "scenario X", 10, &err);
    assert_non_null(sc);
    assert_string_equal(wsc_name(sc), "<scenario>");
    wsc_free(sc);
    assert_null(wsc_parse(NULL, "", 0, &err));
    assert_string_equal(err, "<scenario>:1:1: error: empty scenario: the file must start "
                             "with 'scenario <title>'");
    free(err);
}

/* The text need not be NUL-terminated: only len bytes are read. */
static void text_is_length_delimited(void **state)
{
    (void)state;
    const char text[] = "scenario Short titleXXXX";
    char *err = NULL;
    wsc_scenario *sc = wsc_parse(NAME, text, 20, &err);
    assert_non_null(sc);
    assert_string_equal(wsc_title(sc), "Short title");
    wsc_free(sc);
}

/* needs fake: the reason as written, whatever blanks follow the keywords. */
static void needs_fake_line(void **state)
{
    (void)state;
    wsc_scenario *sc = ok(HEAD "needs fake  clock control # and this  \n");
    assert_string_equal(wsc_needs_fake(sc), "clock control # and this");
    assert_int_equal(wsc_statements(sc), 0);
    wsc_free(sc);
    /* A tab between the words: the same, as written. */
    sc = ok(HEAD "needs\tfake\tcluster   emulation # why\n");
    assert_string_equal(wsc_needs_fake(sc), "cluster   emulation # why");
    wsc_free(sc);
}

/* needs real: the same two forms, kept apart from needs fake. */
static void needs_real_line(void **state)
{
    (void)state;
    wsc_scenario *sc = ok(HEAD "needs real  the fake has no Lua  \n");
    assert_string_equal(wsc_needs_real(sc), "the fake has no Lua");
    assert_null(wsc_needs_fake(sc));
    wsc_free(sc);
    sc = ok(HEAD "needs\treal EVAL   scripts # why\n");
    assert_string_equal(wsc_needs_real(sc), "EVAL   scripts # why");
    wsc_free(sc);
}

/* The world lines set the seed, the clock and cluster emulation; they are no statements. */
static void seed_start_cluster(void **state)
{
    (void)state;
    wsc_scenario *sc = ok(HEAD "seed 42\nstart 1600000000000\ncluster\nsetup PING\n");
    assert_int_equal(sc->seed, 42);
    assert_int_equal(sc->start_ms, 1600000000000LL);
    assert_int_equal(sc->cluster, 1);
    assert_int_equal(wsc_statements(sc), 1); /* the setup line only */
    wsc_free(sc);
    /* Header lines may come after a needs line, and 0 is a number. */
    sc = ok(HEAD "needs fake x\nseed 0\n");
    assert_int_equal(sc->seed, 0);
    wsc_free(sc);
}

/* forbid: the kinds `wsim explore` must not find, a header line anywhere. */
static void forbid_line(void **state)
{
    (void)state;
    wsc_scenario *sc = ok(HEAD "forbid lost\n");
    assert_int_equal(wsc_forbidden(sc), 0x1);
    wsc_free(sc);
    sc = ok(HEAD "forbid leaked split\nsetup PING\nforbid doubled split\n");
    assert_int_equal(wsc_forbidden(sc), 0x2 | 0x4 | 0x8);
    assert_int_equal(wsc_statements(sc), 1);
    wsc_free(sc);
    sc = ok(HEAD);
    assert_int_equal(wsc_forbidden(sc), 0);
    wsc_free(sc);
}

/* Comments, blank lines, CRLF endings and a missing final newline. */
static void comments_blank_lines_crlf(void **state)
{
    (void)state;
    wsc_scenario *sc = ok("scenario T\r\n\r\n   \t\r\n# c\r\n  # indented comment\r\n"
                          "setup SET a#b c # comment \"unclosed\r\nsetup SET x '#y'");
    assert_int_equal(sc->nst, 2);
    const wsc_stmt *st = &sc->st[0];
    assert_int_equal(st->line, 6);
    assert_int_equal(st->ncmd, 3);
    assert_string_equal(tok(st->cmd, st->ncmd, 1), "a#b"); /* '#' inside a word */
    assert_string_equal(tok(st->cmd, st->ncmd, 2), "c");
    assert_string_equal(st->src, "setup SET a#b c # comment \"unclosed");
    st = &sc->st[1];
    assert_int_equal(st->line, 7);
    assert_string_equal(tok(st->cmd, st->ncmd, 2), "#y");
    wsc_free(sc);
}

/* ----- Tokens --------------------------------------------------------------------------- */

/* Double quotes take escapes, single quotes none; each token keeps its column and quoting. */
static void quoted_tokens_and_escapes(void **state)
{
    (void)state;
    wsc_scenario *sc = ok(HEAD "setup SET \"a b\\n\\r\\t\\\\\\\"\\x41\\x7a\" 'c \\n \" d' \"\"\n");
    const wsc_stmt *st = last(sc);
    assert_int_equal(st->kind, K_SETUP);
    assert_int_equal(st->ncmd, 4);
    assert_string_equal(st->cmd[1].s, "a b\n\r\t\\\"Az");
    assert_int_equal(st->cmd[1].len, 10);
    assert_int_equal(st->cmd[1].quoted, 1);
    assert_int_equal(st->cmd[1].col, 11);
    assert_string_equal(st->cmd[2].s, "c \\n \" d"); /* single quotes: no escapes */
    assert_int_equal(st->cmd[2].quoted, 1);
    assert_int_equal(st->cmd[3].len, 0); /* an empty argument */
    assert_int_equal(st->cmd[0].quoted, 0);
    assert_int_equal(st->cmd[0].col, 7);
    wsc_free(sc);
    /* A quote inside a word opens no string; "# " inside a quoted string is no comment. */
    sc = ok(HEAD "setup SET a\"b c\" \"d # e\"\n");
    st = last(sc);
    assert_int_equal(st->ncmd, 4);
    assert_string_equal(st->cmd[1].s, "a\"b");
    assert_string_equal(st->cmd[2].s, "c\"");
    assert_string_equal(st->cmd[3].s, "d # e");
    wsc_free(sc);
    /* \x00 gives a NUL byte inside an argument (binary safe). */
    sc = ok(HEAD "setup SET k \"a\\x00b\"\n");
    st = last(sc);
    assert_int_equal(st->cmd[2].len, 3);
    assert_memory_equal(st->cmd[2].s, "a\0b", 3);
    wsc_free(sc);
}

/* ----- Setup, check, pool ----------------------------------------------------------------- */

/* setup: the command's tokens, and "=> refused [text]". */
static void setup_statement(void **state)
{
    (void)state;
    wsc_scenario *sc = ok(HEAD "setup XGROUP CREATE s g $ MKSTREAM\n"
                               "setup GET k => refused\n"
                               "setup INCR k => refused ERR value is not an integer \n");
    assert_int_equal(sc->nst, 3);
    const wsc_stmt *st = &sc->st[0];
    assert_int_equal(st->kind, K_SETUP);
    assert_int_equal(st->line, 2);
    assert_int_equal(st->col, 1);
    assert_int_equal(st->ncmd, 6);
    assert_string_equal(tok(st->cmd, st->ncmd, 4), "$"); /* a lone $ is literal */
    assert_int_equal(st->refused, 0);
    st = &sc->st[1];
    assert_int_equal(st->ncmd, 2);
    assert_int_equal(st->refused, 1);
    assert_null(st->refused_text);
    st = &sc->st[2];
    assert_int_equal(st->refused, 1);
    assert_string_equal(st->refused_text, "ERR value is not an integer");
    wsc_free(sc);
}

/* check: what follows "=>" is the rest of the line, raw (brackets, quotes, a '#' inside a
 * quoted string or glued to a word), up to a comment: a '#' after whitespace. */
static void check_statement(void **state)
{
    (void)state;
    wsc_scenario *sc = ok(ENTRIES "check GET counter:$e1 => $-1\n"
                                  "check XRANGE s - + =>   [[\"$e1\", [\"_payload\", \"a\"]]]  # x  \n"
                                  "check SET a \"b c\" => +OK\n"
                                  "check ECHO \"a #b\" => \"a #b\" # a comment\n"
                                  "check ECHO x => +OK#not-a-comment\t#\tone\n"
                                  "check ECHO x => [<*>, \"\\\" #\"]   \n");
    const wsc_stmt *st = &sc->st[sc->nst - 6];
    assert_int_equal(st->kind, K_CHECK);
    assert_int_equal(st->ncmd, 2);
    assert_string_equal(st->cmd[1].s, "counter:$e1");
    assert_int_equal(st->has_expect, 1);
    assert_int_equal(st->nexpect, 1);
    assert_string_equal(st->expect[0].s, "$-1");
    st = &sc->st[sc->nst - 5];
    assert_int_equal(st->nexpect, 1);
    assert_string_equal(st->expect[0].s, "[[\"$e1\", [\"_payload\", \"a\"]]]");
    assert_int_equal(st->expect[0].col, 25);
    st = &sc->st[sc->nst - 4];
    assert_string_equal(st->cmd[2].s, "b c");
    assert_string_equal(st->expect[0].s, "+OK");
    st = &sc->st[sc->nst - 3];
    assert_string_equal(st->cmd[1].s, "a #b");
    assert_string_equal(st->expect[0].s, "\"a #b\"");
    st = &sc->st[sc->nst - 2];
    assert_string_equal(st->expect[0].s, "+OK#not-a-comment");
    st = last(sc);
    assert_string_equal(st->expect[0].s, "[<*>, \"\\\" #\"]");
    wsc_free(sc);
}

/* pool outside any handler: no alias, an optional expected reply or a refusal. */
static void pool_statement(void **state)
{
    (void)state;
    wsc_scenario *sc = ok(ENTRIES "pool INCR receipts\n"
                                  "pool INCR receipts => :2\n"
                                  "pool GET x => refused dead\n");
    const wsc_stmt *st = &sc->st[sc->nst - 3];
    assert_int_equal(st->kind, K_POOL);
    assert_null(st->alias);
    assert_int_equal(st->ncmd, 2);
    assert_int_equal(st->has_expect, 0);
    st = &sc->st[sc->nst - 2];
    assert_int_equal(st->has_expect, 1);
    assert_string_equal(st->expect[0].s, ":2");
    st = last(sc);
    assert_int_equal(st->refused, 1);
    assert_string_equal(st->refused_text, "dead");
    assert_int_equal(st->has_expect, 0);
    wsc_free(sc);
}

/* ----- subscribe and its options -------------------------------------------------------- */

/* Parses "HEAD <line>" and returns the subscribe statement (caller frees sc). */
static const wsc_stmt *sub_of(const char *line, wsc_scenario **sc)
{
    char text[512];
    snprintf(text, sizeof text, HEAD "%s\n", line);
    *sc = ok(text);
    const wsc_stmt *st = last(*sc);
    assert_int_equal(st->kind, K_SUBSCRIBE);
    return st;
}

/* The four forms, and the defaults of a subscription (window mode, no count, no batch). */
static void subscribe_forms(void **state)
{
    (void)state;
    wsc_scenario *sc;
    const wsc_stmt *st = sub_of("subscribe orders stream orders-key group fulfilment", &sc);
    assert_string_equal(st->sub, "orders");
    assert_int_equal(st->cfg.form, WS_FORM_STREAM);
    assert_int_equal(st->cfg.mode, WS_MODE_WINDOW); /* the default mode */
    assert_string_equal(st->s_key, "orders-key");
    assert_string_equal(st->s_group, "fulfilment");
    assert_null(st->s_consumer);
    assert_int_equal(st->cfg.count, 0);
    assert_int_equal(st->cfg.batch, 0);
    wsc_free(sc);
    st = sub_of("subscribe r reliable-list jobs", &sc);
    assert_int_equal(st->cfg.form, WS_FORM_RELIABLE_LIST);
    assert_string_equal(st->s_key, "jobs");
    wsc_free(sc);
    st = sub_of("subscribe l list jobs", &sc);
    assert_int_equal(st->cfg.form, WS_FORM_PLAIN_LIST);
    wsc_free(sc);
    st = sub_of("subscribe c channel news", &sc);
    assert_int_equal(st->cfg.form, WS_FORM_CHANNEL);
    assert_int_equal(st->cfg.pattern, 0);
    wsc_free(sc);
}

/* group and consumer: a later value replaces an earlier one. */
static void subscribe_option_group_consumer(void **state)
{
    (void)state;
    wsc_scenario *sc;
    /* A later value replaces an earlier one. */
    const wsc_stmt *st = sub_of("subscribe s stream k group g1 consumer c1 group g2 consumer c2", &sc);
    assert_string_equal(st->s_group, "g2");
    assert_string_equal(st->s_consumer, "c2");
    wsc_free(sc);
}

/* mode direct, window, atomic. */
static void subscribe_option_mode(void **state)
{
    (void)state;
    wsc_scenario *sc;
    const wsc_stmt *st = sub_of("subscribe s stream k group g mode direct", &sc);
    assert_int_equal(st->cfg.mode, WS_MODE_DIRECT);
    wsc_free(sc);
    st = sub_of("subscribe s stream k group g mode atomic", &sc);
    assert_int_equal(st->cfg.mode, WS_MODE_ATOMIC);
    wsc_free(sc);
    st = sub_of("subscribe s list k mode atomic mode window", &sc);
    assert_int_equal(st->cfg.mode, WS_MODE_WINDOW);
    wsc_free(sc);
}

/* count and batch (1 to 100000) and block (any number).  A batch subscription reads
 * COUNT = its batch size: count may be left out, or equal to it (errors_subscribe). */
static void subscribe_option_count_batch_block(void **state)
{
    (void)state;
    wsc_scenario *sc;
    const wsc_stmt *st = sub_of("subscribe s stream k group g count 1 block 0", &sc);
    assert_int_equal(st->cfg.count, 1);
    assert_int_equal(st->cfg.batch, 0);
    assert_int_equal(st->cfg.block_ms, 0);
    wsc_free(sc);
    st = sub_of("subscribe s stream k group g batch 100000", &sc);
    assert_int_equal(st->cfg.count, 0); /* the engine reads COUNT = the batch size */
    assert_int_equal(st->cfg.batch, 100000);
    wsc_free(sc);
    st = sub_of("subscribe c channel k buffer 4", &sc);
    assert_int_equal(st->cfg.buffer, 4);
    wsc_free(sc);
    st = sub_of("subscribe c channel k", &sc);
    assert_int_equal(st->cfg.buffer, 0); /* the engine's default: 32 */
    wsc_free(sc);
    st = sub_of("subscribe s list k count 100000 batch 100000 block 250", &sc);
    assert_int_equal(st->cfg.count, 100000);
    assert_int_equal(st->cfg.batch, 100000);
    assert_int_equal(st->cfg.block_ms, 250);
    wsc_free(sc);
}

/* reclaim MIN_IDLE: a reclaim subscription with that min-idle (0 included). */
static void subscribe_option_reclaim(void **state)
{
    (void)state;
    wsc_scenario *sc;
    const wsc_stmt *st = sub_of("subscribe s stream k group g reclaim 5000", &sc);
    assert_int_equal(st->cfg.reclaim, 1);
    assert_int_equal(st->cfg.min_idle_ms, 5000);
    wsc_free(sc);
    st = sub_of("subscribe s stream k group g reclaim 0", &sc);
    assert_int_equal(st->cfg.reclaim, 1);
    assert_int_equal(st->cfg.min_idle_ms, 0);
    wsc_free(sc);
}

/* delay-queue ZSET and ttl MS. */
static void subscribe_option_delay_queue_ttl(void **state)
{
    (void)state;
    wsc_scenario *sc;
    const wsc_stmt *st = sub_of("subscribe s stream k group g delay-queue k:delayed ttl 60000", &sc);
    assert_string_equal(st->s_dq, "k:delayed");
    assert_int_equal(st->cfg.delay_ttl_ms, 60000);
    wsc_free(sc);
    /* ttl alone is accepted (it has no effect without a delay queue). */
    st = sub_of("subscribe s stream k group g ttl 5", &sc);
    assert_null(st->s_dq);
    assert_int_equal(st->cfg.delay_ttl_ms, 5);
    wsc_free(sc);
}

/* processing LIST and recovery ZSET MIN_IDLE [ttl MS] on a reliable list. */
static void subscribe_option_processing_recovery(void **state)
{
    (void)state;
    wsc_scenario *sc;
    const wsc_stmt *st = sub_of("subscribe r reliable-list jobs processing jobs:p recovery jobs:r 30000", &sc);
    assert_string_equal(st->s_processing, "jobs:p");
    assert_string_equal(st->s_recovery, "jobs:r");
    assert_int_equal(st->cfg.min_idle_ms, 30000);
    assert_int_equal(st->cfg.reclaim, 0);
    assert_int_equal(st->cfg.recovery_ttl_ms, 0);
    wsc_free(sc);
    st = sub_of("subscribe r reliable-list jobs recovery jobs:r 500 ttl 60000 mode direct", &sc);
    assert_string_equal(st->s_recovery, "jobs:r");
    assert_int_equal(st->cfg.min_idle_ms, 500);
    assert_int_equal(st->cfg.recovery_ttl_ms, 60000);
    assert_int_equal(st->cfg.delay_ttl_ms, 0); /* not the delay queue's ttl */
    assert_int_equal(st->cfg.mode, WS_MODE_DIRECT);
    wsc_free(sc);
}

/* max-attempts N (1 to 1000000) and dead-letter KEY, on any form, alone or together. */
static void subscribe_option_max_attempts_dead_letter(void **state)
{
    (void)state;
    wsc_scenario *sc;
    const wsc_stmt *st = sub_of("subscribe s stream k group g max-attempts 3 dead-letter k:dead", &sc);
    assert_int_equal(st->cfg.max_attempts, 3);
    assert_string_equal(st->s_dead_letter, "k:dead");
    wsc_free(sc);
    st = sub_of("subscribe l list k dead-letter dead", &sc);
    assert_int_equal(st->cfg.max_attempts, 0);
    assert_string_equal(st->s_dead_letter, "dead");
    wsc_free(sc);
    st = sub_of("subscribe c channel k max-attempts 1000000", &sc);
    assert_int_equal(st->cfg.max_attempts, 1000000);
    assert_null(st->s_dead_letter);
    wsc_free(sc);
    st = sub_of("subscribe s stream k group g", &sc);
    assert_int_equal(st->cfg.max_attempts, 0);
    assert_null(st->s_dead_letter);
    wsc_free(sc);
}

/* read claiming MIN_IDLE (a stream's XREADGROUP ... CLAIM) and group G start $|0|ID. */
static void subscribe_option_claiming_group_start(void **state)
{
    (void)state;
    wsc_scenario *sc;
    const wsc_stmt *st = sub_of("subscribe s stream k group g read claiming 2000", &sc);
    assert_int_equal(st->cfg.claiming, 1);
    assert_int_equal(st->cfg.reclaim, 0);
    assert_int_equal(st->cfg.min_idle_ms, 2000);
    assert_null(st->s_group_start);
    wsc_free(sc);
    st = sub_of("subscribe s stream k group g start 0 consumer c1", &sc);
    assert_string_equal(st->s_group, "g");
    assert_string_equal(st->s_group_start, "0");
    assert_string_equal(st->s_consumer, "c1");
    assert_int_equal(st->cfg.claiming, 0);
    wsc_free(sc);
    st = sub_of("subscribe s stream k group g start 1700000000000-5", &sc);
    assert_string_equal(st->s_group_start, "1700000000000-5");
    wsc_free(sc);
}

/* pattern: PSUBSCRIBE on a channel subscription. */
static void subscribe_option_pattern(void **state)
{
    (void)state;
    wsc_scenario *sc;
    const wsc_stmt *st = sub_of("subscribe c channel news.* pattern", &sc);
    assert_int_equal(st->cfg.pattern, 1);
    assert_string_equal(st->s_key, "news.*");
    wsc_free(sc);
}

/* reply FORM KEY [in-round], on every form. */
static void subscribe_option_reply(void **state)
{
    (void)state;
    wsc_scenario *sc;
    const wsc_stmt *st = sub_of("subscribe s stream k group g reply stream receipts", &sc);
    assert_int_equal(st->cfg.reply.form, WS_FORM_STREAM);
    assert_string_equal(st->s_reply, "receipts");
    assert_int_equal(st->cfg.reply_in_round, 0);
    wsc_free(sc);
    st = sub_of("subscribe s stream k group g reply list out in-round count 3", &sc);
    assert_int_equal(st->cfg.reply.form, WS_FORM_PLAIN_LIST); /* LPUSH, as any list */
    assert_string_equal(st->s_reply, "out");
    assert_int_equal(st->cfg.reply_in_round, 1);
    assert_int_equal(st->cfg.count, 3);
    wsc_free(sc);
    st = sub_of("subscribe s list k reply channel done in-round", &sc);
    assert_int_equal(st->cfg.reply.form, WS_FORM_CHANNEL);
    assert_int_equal(st->cfg.reply_in_round, 1);
    wsc_free(sc);
}

/* warn-crossslot on an atomic subscription. */
static void subscribe_option_warn_crossslot(void **state)
{
    (void)state;
    wsc_scenario *sc;
    const wsc_stmt *st = sub_of("subscribe s stream {o}k group g mode atomic warn-crossslot", &sc);
    assert_int_equal(st->cfg.warn_crossslot, 1);
    wsc_free(sc);
}

/* ----- produce, read ----------------------------------------------------------------------- */

/* produce: payload, headers (an empty value too), to KEY, as ALIAS. */
static void produce_statement(void **state)
{
    (void)state;
    wsc_scenario *sc = ok(STREAM "produce s \"order 1\"\n"
                                 "produce s p header trace-id abc header empty \"\" as e1\n"
                                 "produce s \"\" as e2\n");
    const wsc_stmt *st = &sc->st[sc->nst - 3];
    assert_int_equal(st->kind, K_PRODUCE);
    assert_string_equal(st->sub, "s");
    assert_int_equal(st->payload_len, 7);
    assert_memory_equal(st->payload, "order 1", 7);
    assert_null(st->alias);
    assert_int_equal(st->nheaders, 0);
    st = &sc->st[sc->nst - 2];
    assert_string_equal(st->alias, "e1");
    assert_int_equal(st->nheaders, 2);
    assert_string_equal(st->headers[0].name, "trace-id");
    assert_string_equal(st->headers[0].value, "abc");
    assert_int_equal(st->headers[0].value_len, 3);
    assert_string_equal(st->headers[1].name, "empty");
    assert_string_equal(st->headers[1].value, "");
    assert_int_equal(st->headers[1].value_len, 0);
    st = last(sc);
    assert_int_equal(st->payload_len, 0);
    assert_null(st->key);
    wsc_free(sc);
    /* to KEY: another key of the form (a channel a pattern subscription hears). */
    sc = ok(HEAD "subscribe c channel news.* pattern\nproduce c hello header h v to news.eu as m1\n"
                 "produce c bye to news.us\n");
    st = &sc->st[sc->nst - 2];
    assert_string_equal(st->key, "news.eu");
    assert_string_equal(st->alias, "m1");
    assert_int_equal(st->nheaders, 1);
    st = last(sc);
    assert_string_equal(st->key, "news.us");
    assert_null(st->alias);
    wsc_free(sc);
}

/* read, with each kind of expectation and a refusal. */
static void read_statement(void **state)
{
    (void)state;
    wsc_scenario *sc = ok(ENTRIES "read s\nread s expect e1 e2\nread s expect nothing\n"
                                  "read s expect report\nread s => refused stopped\n");
    const wsc_stmt *st = &sc->st[sc->nst - 5];
    assert_int_equal(st->kind, K_READ);
    assert_string_equal(st->sub, "s");
    assert_int_equal(st->has_expect, 0);
    st = &sc->st[sc->nst - 4];
    assert_int_equal(st->has_expect, 1);
    assert_int_equal(st->nexpect, 2);
    assert_string_equal(st->expect[0].s, "e1");
    assert_string_equal(st->expect[1].s, "e2");
    st = &sc->st[sc->nst - 3];
    assert_int_equal(st->read_nothing, 1);
    assert_int_equal(st->nexpect, 0);
    st = &sc->st[sc->nst - 2];
    assert_int_equal(st->read_report, 1);
    st = last(sc);
    assert_int_equal(st->refused, 1);
    assert_string_equal(st->refused_text, "stopped");
    assert_int_equal(st->has_expect, 0);
    wsc_free(sc);
}

/* ----- Handler actions --------------------------------------------------------------------- */

/* ALIAS: queue, with $alias inside and a refusal. */
static void action_queue(void **state)
{
    (void)state;
    wsc_scenario *sc = ok(ENTRIES "e1: queue LPUSH picks \"sku 1\" $e1\n"
                                  "e1: queue INCR x => refused stale\n");
    const wsc_stmt *st = &sc->st[sc->nst - 2];
    assert_int_equal(st->kind, K_QUEUE);
    assert_string_equal(st->alias, "e1");
    assert_int_equal(st->ncmd, 4);
    assert_string_equal(st->cmd[2].s, "sku 1");
    assert_string_equal(st->cmd[3].s, "$e1");
    st = last(sc);
    assert_int_equal(st->refused, 1);
    assert_string_equal(st->refused_text, "stale");
    assert_int_equal(st->ncmd, 2);
    wsc_free(sc);
}

/* ALIAS: pool, with and without an expected reply. */
static void action_pool(void **state)
{
    (void)state;
    wsc_scenario *sc = ok(ENTRIES "e2: pool INCR receipt => :1\ne2: pool INCR receipt\n");
    const wsc_stmt *st = &sc->st[sc->nst - 2];
    assert_int_equal(st->kind, K_POOL);
    assert_string_equal(st->alias, "e2");
    assert_int_equal(st->has_expect, 1);
    assert_string_equal(st->expect[0].s, ":1");
    st = last(sc);
    assert_int_equal(st->has_expect, 0);
    wsc_free(sc);
}

/* ALIAS: publish on each form, with headers and a refusal. */
static void action_publish(void **state)
{
    (void)state;
    wsc_scenario *sc = ok(ENTRIES "e1: publish stream receipts \"r 1\" header h v\n"
                                  "e1: publish list out x\n"
                                  "e1: publish channel news y => refused\n");
    const wsc_stmt *st = &sc->st[sc->nst - 3];
    assert_int_equal(st->kind, K_PUBLISH);
    assert_int_equal(st->form, WS_FORM_STREAM);
    assert_string_equal(st->key, "receipts");
    assert_int_equal(st->payload_len, 3);
    assert_int_equal(st->nheaders, 1);
    assert_string_equal(st->headers[0].name, "h");
    st = &sc->st[sc->nst - 2];
    assert_int_equal(st->form, WS_FORM_PLAIN_LIST);
    st = last(sc);
    assert_int_equal(st->form, WS_FORM_CHANNEL);
    assert_int_equal(st->refused, 1);
    wsc_free(sc);
}

/* ALIAS: reply and ALIAS: bind. */
static void action_reply_bind(void **state)
{
    (void)state;
    wsc_scenario *sc = ok(ENTRIES "e1: reply \"thanks\"\ne1: bind stream receipts\n"
                                  "e2: reply x => refused no reply output\n");
    const wsc_stmt *st = &sc->st[sc->nst - 3];
    assert_int_equal(st->kind, K_REPLY);
    assert_int_equal(st->payload_len, 6);
    st = &sc->st[sc->nst - 2];
    assert_int_equal(st->kind, K_BIND);
    assert_int_equal(st->form, WS_FORM_STREAM);
    assert_string_equal(st->key, "receipts");
    st = last(sc);
    assert_int_equal(st->refused, 1);
    assert_string_equal(st->refused_text, "no reply output");
    wsc_free(sc);
}

/* The five outcomes, retry-after's delay, and a refused one. */
static void action_outcomes(void **state)
{
    (void)state;
    wsc_scenario *sc = ok(ENTRIES "e1: ack\ne1: drop\ne1: retry\ne1: retry-after 1500\n"
                                  "e1: abandon\ne1: ack => refused stale\n");
    static const ws_outcome want[] = {WS_ACK, WS_DROP, WS_RETRY, WS_RETRY_AFTER, WS_ABANDON,
                                      WS_ACK};
    for (size_t i = 0; i < 6; i++) {
        const wsc_stmt *st = &sc->st[sc->nst - 6 + i];
        assert_int_equal(st->kind, K_SETTLE);
        assert_int_equal(st->outcome, want[i]);
        assert_string_equal(st->alias, "e1");
    }
    assert_int_equal(sc->st[sc->nst - 3].n, 1500);
    assert_int_equal(last(sc)->refused, 1);
    wsc_free(sc);
}

/* ----- World steps ------------------------------------------------------------------------- */

/* advance, crash, shutdown, restart, stop (and stop refused). */
static void advance_crash_restart_stop(void **state)
{
    (void)state;
    wsc_scenario *sc = ok(STREAM "advance 1000\ncrash\nshutdown\nrestart\nstop s\n"
                                 "stop s => refused stopped\n");
    const wsc_stmt *st = &sc->st[sc->nst - 6];
    assert_int_equal(st->kind, K_ADVANCE);
    assert_int_equal(st->n, 1000);
    assert_int_equal(sc->st[sc->nst - 5].kind, K_CRASH);
    assert_int_equal(sc->st[sc->nst - 4].kind, K_SHUTDOWN);
    assert_int_equal(sc->st[sc->nst - 3].kind, K_RESTART);
    st = &sc->st[sc->nst - 2];
    assert_int_equal(st->kind, K_STOP);
    assert_string_equal(st->sub, "s");
    assert_int_equal(st->refused, 0);
    st = last(sc);
    assert_int_equal(st->refused, 1);
    assert_string_equal(st->refused_text, "stopped");
    /* advance, crash, shutdown and restart take no "=> refused" (errors_world). */
    wsc_free(sc);
}

/* Parses "HEAD fault ..." and returns the statement (caller frees sc). */
static const wsc_stmt *fault_of(const char *line, wsc_scenario **sc)
{
    char text[512];
    snprintf(text, sizeof text, HEAD "%s\n", line);
    *sc = ok(text);
    const wsc_stmt *st = last(*sc);
    assert_int_equal(st->kind, K_FAULT);
    return st;
}

/* fault by occurrence (<n>th COMMAND) on each connection, of each kind, with an error text. */
static void fault_statement(void **state)
{
    (void)state;
    wsc_scenario *sc;
    const wsc_stmt *st = fault_of("fault window crash-after 3rd XACK", &sc);
    assert_string_equal(st->conn, "window");
    assert_int_equal(st->fault.kind, WS_FAULT_CRASH_AFTER);
    assert_int_equal(st->fault.nth, 3);
    assert_string_equal(st->fault_name, "XACK");
    assert_int_equal(st->fault.round_trip, 0);
    assert_null(st->fault_error);
    wsc_free(sc);
    st = fault_of("fault reader crash-before 1st XREADGROUP", &sc);
    assert_string_equal(st->conn, "reader");
    assert_int_equal(st->fault.kind, WS_FAULT_CRASH_BEFORE);
    assert_int_equal(st->fault.nth, 1);
    wsc_free(sc);
    st = fault_of("fault subscriber lose-replies 2nd PING", &sc);
    assert_string_equal(st->conn, "subscriber");
    assert_int_equal(st->fault.kind, WS_FAULT_LOSE_REPLIES);
    assert_int_equal(st->fault.nth, 2);
    wsc_free(sc);
    st = fault_of("fault window refuse 11th EXEC", &sc);
    assert_int_equal(st->fault.kind, WS_FAULT_REFUSE);
    assert_int_equal(st->fault.nth, 11);
    wsc_free(sc);
    /* The suffix is not checked against the number: "1th" and "2st" are accepted too. */
    st = fault_of("fault window refuse 2st EXEC", &sc);
    assert_int_equal(st->fault.nth, 2);
    wsc_free(sc);
    st = fault_of("fault window error 1st INCR error WRONGTYPE Operation against a key", &sc);
    assert_int_equal(st->fault.kind, WS_FAULT_ERROR);
    assert_string_equal(st->fault_error, "WRONGTYPE Operation against a key");
    wsc_free(sc);
    st = fault_of("fault window error 1st INCR error \"ERR x  y\"   # a comment", &sc);
    assert_string_equal(st->fault_error, "ERR x  y");
    wsc_free(sc);
    st = fault_of("fault window error 1st INCR error ERR  spaced 'q' # a comment", &sc);
    assert_string_equal(st->fault_error, "ERR  spaced 'q'");
    wsc_free(sc);
    st = fault_of("fault window error 1st INCR", &sc);
    assert_null(st->fault_error); /* the engine's default text */
    wsc_free(sc);
}

/* fault by position: round-trip I [command K]. */
static void fault_by_position(void **state)
{
    (void)state;
    wsc_scenario *sc;
    const wsc_stmt *st = fault_of("fault window crash-after round-trip 2", &sc);
    assert_int_equal(st->fault.round_trip, 2);
    assert_int_equal(st->fault.command, 0);
    assert_null(st->fault_name);
    wsc_free(sc);
    st = fault_of("fault window crash-before round-trip 1 command 3", &sc);
    assert_int_equal(st->fault.round_trip, 1);
    assert_int_equal(st->fault.command, 3);
    wsc_free(sc);
    st = fault_of("fault reader error round-trip 4 command 1 error ERR boom", &sc);
    assert_int_equal(st->fault.kind, WS_FAULT_ERROR);
    assert_string_equal(st->fault_error, "ERR boom");
    wsc_free(sc);
    st = fault_of("fault window lose-replies round-trip 1", &sc);
    assert_int_equal(st->fault.kind, WS_FAULT_LOSE_REPLIES);
    wsc_free(sc);
}

/* ----- Expectations ----------------------------------------------------------------------- */

/* expect flush and its block: origins, "--", bare and quoted ?, comments and blank lines inside. */
static void expect_flush_block(void **state)
{
    (void)state;
    wsc_scenario *sc = ok(ENTRIES "expect flush 2 of s   # a comment\n"
                                  "  e1> INCR counter:$e1\n"
                                  "\n"
                                  "  # comments and blank lines inside the block\n"
                                  "\t--\n"
                                  "    SET \"?\" ?\n"
                                  "  XACK s g $e1 $e2\n"
                                  "expect invariants\n");
    const wsc_stmt *st = &sc->st[sc->nst - 2];
    assert_int_equal(st->kind, K_EXPECT_FLUSH);
    assert_int_equal(st->n, 2);
    assert_string_equal(st->sub, "s");
    assert_int_equal(st->nflines, 4);
    const wsc_fline *f = st->flines;
    assert_string_equal(f[0].from, "e1");
    assert_int_equal(f[0].nt, 2);
    assert_string_equal(f[0].t[0].s, "INCR");
    assert_int_equal(f[0].line, 7);
    assert_int_equal(f[1].separator, 1);
    assert_null(f[1].from);
    assert_null(f[2].from);
    assert_int_equal(f[2].nt, 3);
    assert_int_equal(f[2].t[1].quoted, 1); /* "?" is a literal question mark */
    assert_int_equal(f[2].t[2].quoted, 0); /* ? is any argument */
    assert_null(f[3].from);
    assert_int_equal(f[3].nt, 5);
    assert_int_equal(last(sc)->kind, K_EXPECT_INVARIANTS);
    wsc_free(sc);
}

/* expect read: a read's round trips (sweeps included), as indented command lines. */
static void expect_read_block(void **state)
{
    (void)state;
    wsc_scenario *sc = ok(STREAM "expect read 2 of s\n"
                                 "  XREADGROUP GROUP g ? COUNT 64 BLOCK 10 STREAMS s >\n"
                                 "  --\n"
                                 "  XPENDING s g IDLE 0 - + 64 ?\n");
    const wsc_stmt *st = last(sc);
    assert_int_equal(st->kind, K_EXPECT_READ);
    assert_int_equal(st->n, 2);
    assert_string_equal(st->sub, "s");
    assert_int_equal(st->nflines, 3);
    assert_null(st->flines[0].from);
    assert_int_equal(st->flines[0].nt, 11);
    assert_int_equal(st->flines[1].separator, 1);
    wsc_free(sc);
}

/* expect round-trips with each kind (total by default). */
static void expect_round_trips(void **state)
{
    (void)state;
    wsc_scenario *sc = ok(HEAD "expect round-trips 3\nexpect round-trips 0 total\n"
                               "expect round-trips 1 reads\nexpect round-trips 2 flushes\n"
                               "expect round-trips 4 pool\n");
    static const int which[] = {0, 0, 1, 2, 3};
    static const long long n[] = {3, 0, 1, 2, 4};
    for (size_t i = 0; i < 5; i++) {
        assert_int_equal(sc->st[i].kind, K_EXPECT_RTS);
        assert_int_equal(sc->st[i].which, which[i]);
        assert_int_equal(sc->st[i].n, n[i]);
    }
    wsc_free(sc);
}

/* expect flushes [of SUB] and expect reports. */
static void expect_flushes_reports(void **state)
{
    (void)state;
    wsc_scenario *sc = ok(STREAM "expect flushes 2\nexpect flushes 1 of s\nexpect reports 0\n");
    const wsc_stmt *st = &sc->st[sc->nst - 3];
    assert_int_equal(st->kind, K_EXPECT_FLUSHES);
    assert_int_equal(st->n, 2);
    assert_null(st->sub);
    st = &sc->st[sc->nst - 2];
    assert_string_equal(st->sub, "s");
    assert_int_equal(st->n, 1);
    st = last(sc);
    assert_int_equal(st->kind, K_EXPECT_REPORTS);
    assert_int_equal(st->n, 0);
    wsc_free(sc);
}

/* expect report: each field, and the error text as written. */
static void expect_report(void **state)
{
    (void)state;
    wsc_scenario *sc = ok(STREAM "expect report s\n"
                                 "expect report s commands 3 settles 1 failed 2 error WRONGTYPE  Operation # c\n"
                                 "expect report s failed 1\n"
                                 "expect report s error \"ERR unknown command 'X'\"\n"
                                 "expect report s error \"ERR\" x\n");
    const wsc_stmt *st = &sc->st[sc->nst - 5];
    assert_int_equal(st->kind, K_EXPECT_REPORT);
    assert_string_equal(st->sub, "s");
    assert_int_equal(st->n2, -1); /* not checked */
    assert_int_equal(st->n3, -1);
    assert_int_equal(st->n4, -1);
    assert_null(st->text);
    st = &sc->st[sc->nst - 4];
    assert_int_equal(st->n2, 3);
    assert_int_equal(st->n3, 1);
    assert_int_equal(st->n4, 2);
    /* The rest of the line as written, without its comment. */
    assert_string_equal(st->text, "WRONGTYPE  Operation");
    st = &sc->st[sc->nst - 3];
    assert_int_equal(st->n2, -1);
    assert_int_equal(st->n4, 1);
    /* One quoted token: its value. */
    st = &sc->st[sc->nst - 2];
    assert_string_equal(st->text, "ERR unknown command 'X'");
    /* Several tokens: as written, quotes and all. */
    st = last(sc);
    assert_string_equal(st->text, "\"ERR\" x");
    wsc_free(sc);
}

/* expect pending: none, aliases, $aliases and ids. */
static void expect_pending(void **state)
{
    (void)state;
    wsc_scenario *sc = ok(ENTRIES "expect pending s none\nexpect pending s e1 e2\n"
                                  "expect pending s $e1 1-0\n");
    const wsc_stmt *st = &sc->st[sc->nst - 3];
    assert_int_equal(st->kind, K_EXPECT_PENDING);
    assert_int_equal(st->nexpect, 0);
    st = &sc->st[sc->nst - 2];
    assert_int_equal(st->nexpect, 2);
    assert_string_equal(st->expect[1].s, "e2");
    st = last(sc);
    assert_int_equal(st->nexpect, 2);
    assert_string_equal(st->expect[0].s, "$e1");
    assert_string_equal(st->expect[1].s, "1-0"); /* an id written out */
    wsc_free(sc);
}

/* expect pending as a block: one entry a line, with the consumer and the delivery count
 * where written (in any order), the others left unchecked (-1 / NULL). */
static void expect_pending_block(void **state)
{
    (void)state;
    wsc_scenario *sc = ok(ENTRIES "expect pending s   # the group's pending list\n"
                                  "  e1 consumer c1 deliveries 2\n"
                                  "\n"
                                  "  # a comment inside\n"
                                  "\t$e2 deliveries 1 consumer \"c 2\"\n"
                                  "  1-0\n"
                                  "expect invariants\n");
    const wsc_stmt *st = &sc->st[sc->nst - 2];
    assert_int_equal(st->kind, K_EXPECT_PENDING);
    assert_int_equal(st->entry_block, 1);
    assert_int_equal(st->nexpect, 0);
    assert_int_equal(st->nelines, 3);
    const wsc_eline *e = st->elines;
    assert_string_equal(e[0].item.s, "e1");
    assert_int_equal(e[0].line, 7);
    assert_string_equal(e[0].consumer, "c1");
    assert_int_equal(e[0].deliveries, 2);
    assert_int_equal(e[0].opt_col, 6);
    assert_int_equal(e[0].retries, -1);
    assert_int_equal(e[0].due_in, -1);
    assert_string_equal(e[1].item.s, "$e2");
    assert_int_equal(e[1].line, 10);
    assert_string_equal(e[1].consumer, "c 2");
    assert_int_equal(e[1].deliveries, 1);
    assert_int_equal(e[1].opt_col, 6);
    assert_string_equal(e[2].item.s, "1-0"); /* an id written out */
    assert_null(e[2].consumer);
    assert_int_equal(e[2].deliveries, -1);
    assert_int_equal(e[2].opt_col, 0);
    assert_int_equal(last(sc)->kind, K_EXPECT_INVARIANTS);
    wsc_free(sc);
    /* A reliable list's block takes entries alone. */
    sc = ok(HEAD "subscribe l reliable-list jobs\nproduce l j as j1\nexpect pending l\n  j1\n");
    assert_int_equal(last(sc)->nelines, 1);
    assert_int_equal(last(sc)->elines[0].opt_col, 0);
    wsc_free(sc);
}

/* expect delayed: inline (aliases or none) and as a block with retries and due-in. */
static void expect_delayed(void **state)
{
    (void)state;
    wsc_scenario *sc = ok(HEAD "setup XGROUP CREATE s g $ MKSTREAM\n"
                               "subscribe s stream s group g delay-queue dq\n"
                               "produce s a as e1\nproduce s b as e2\n"
                               "expect delayed s none\n"
                               "expect delayed s e1 $e2 1-0\n"
                               "expect delayed s\n"
                               "  e1 retries 1 due-in 30000\n"
                               "  e2 due-in 0\n"
                               "  e2\n");
    const wsc_stmt *st = &sc->st[sc->nst - 3];
    assert_int_equal(st->kind, K_EXPECT_DELAYED);
    assert_string_equal(st->sub, "s");
    assert_int_equal(st->entry_block, 0);
    assert_int_equal(st->nexpect, 0);
    st = &sc->st[sc->nst - 2];
    assert_int_equal(st->nexpect, 3);
    assert_string_equal(tok(st->expect, st->nexpect, 1), "$e2");
    st = last(sc);
    assert_int_equal(st->entry_block, 1);
    assert_int_equal(st->nelines, 3);
    assert_int_equal(st->elines[0].retries, 1);
    assert_int_equal(st->elines[0].due_in, 30000);
    assert_null(st->elines[0].consumer);
    assert_int_equal(st->elines[0].deliveries, -1);
    assert_int_equal(st->elines[1].retries, -1);
    assert_int_equal(st->elines[1].due_in, 0);
    assert_int_equal(st->elines[2].due_in, -1);
    wsc_free(sc);
}

/* ".." in a flush block: a pipeline boundary, beside "--" (a round-trip boundary). */
static void expect_flush_pipelines(void **state)
{
    (void)state;
    wsc_scenario *sc = ok(ENTRIES "expect flush 1 of s\n"
                                  "  e1> INCR a\n"
                                  "  ..\n"
                                  "  e2> INCR b\n"
                                  "  --\n"
                                  "  XACK s g $e1 $e2\n");
    const wsc_stmt *st = last(sc);
    assert_int_equal(st->nflines, 5);
    assert_int_equal(st->flines[1].separator, WSC_SEP_PIPELINE);
    assert_int_equal(st->flines[1].from_col, 3);
    assert_int_equal(st->flines[3].separator, WSC_SEP_ROUND_TRIP);
    assert_int_equal(st->flines[0].separator, 0);
    wsc_free(sc);
    /* A quoted ".." is a command named "..", not a boundary. */
    sc = ok(ENTRIES "expect flush 1 of s\n  \"..\"\n");
    assert_int_equal(last(sc)->flines[0].separator, 0);
    assert_int_equal(last(sc)->flines[0].nt, 1);
    wsc_free(sc);
}

/* Expected replies are checked when parsed, wherever "=> REPLY" may stand (check, pool,
 * ALIAS: pool): every form the trace prints parses. */
static void expected_reply_forms(void **state)
{
    (void)state;
    static const char *const good[] = {
        "+OK", "+", "-ERR a, b] [c", "-<*>", ":1", ":-20", "\"\"", "\"a\\\\ \\\" \\n\\r\\t\\a\\b\\x7f\"",
        "$-1", "*-1", "<*>", "[]", "[[]]", "[:1, \"a\", $-1, *-1, <*>, [+OK, -ERR x y], []]",
        "[[\"$e1\", [\"_payload\", \"a\"]]]", "\"a #b\"", "[\"]\", \"[\", \",\"]",
        "\"<*>\"",
    };
    for (size_t i = 0; i < sizeof good / sizeof good[0]; i++) {
        char text[512];
        snprintf(text, sizeof text, ENTRIES "check GET x => %s\npool GET x => %s\n"
                                            "e1: pool GET x => %s   # a comment\n",
                 good[i], good[i], good[i]);
        wsc_scenario *sc = ok(text);
        assert_string_equal(last(sc)->expect[0].s, good[i]);
        wsc_free(sc);
    }
}

/* expect invariants, and expect violation of each kind. */
static void expect_invariants_violation(void **state)
{
    (void)state;
    wsc_scenario *sc = ok(ENTRIES "expect invariants\nexpect violation lost e1\n"
                                  "expect violation leaked e1\nexpect violation split e2\n"
                                  "expect violation doubled e2\n"
                                  "expect violation stranded e2\n");
    assert_int_equal(sc->st[sc->nst - 6].kind, K_EXPECT_INVARIANTS);
    static const char *kinds[] = {"lost", "leaked", "split", "doubled", "stranded"};
    for (size_t i = 0; i < 5; i++) {
        const wsc_stmt *st = &sc->st[sc->nst - 5 + i];
        assert_int_equal(st->kind, K_EXPECT_VIOLATION);
        assert_string_equal(st->text, kinds[i]);
        assert_string_equal(st->alias, i < 2 ? "e1" : "e2");
    }
    wsc_free(sc);
}

/* expect warning (the text as written) and expect delivery count|retries. */
static void expect_warning_delivery(void **state)
{
    (void)state;
    wsc_scenario *sc = ok(ENTRIES "expect warning CROSSSLOT  of $e1\n"
                                  "expect delivery e1 count 2\nexpect delivery e2 retries 0\n");
    const wsc_stmt *st = &sc->st[sc->nst - 3];
    assert_int_equal(st->kind, K_EXPECT_WARNING);
    assert_string_equal(st->text, "CROSSSLOT  of $e1"); /* as written */
    st = &sc->st[sc->nst - 2];
    assert_int_equal(st->kind, K_EXPECT_DELIVERY);
    assert_string_equal(st->alias, "e1");
    assert_int_equal(st->which, 0);
    assert_int_equal(st->n, 2);
    st = last(sc);
    assert_int_equal(st->which, 1);
    assert_int_equal(st->n, 0);
    wsc_free(sc);
}

/* Repeated options and empty header values: parsed, and freed by wsc_free (this test
 * fails under -DWSIM_SANITIZE=ON when they leak). */
static void repeated_options_and_empty_values_are_freed(void **state)
{
    (void)state;
    wsc_scenario *sc = ok(HEAD "subscribe s stream k group g1 group g2 consumer a consumer b "
                               "delay-queue d1 delay-queue d2 reply stream r1 reply list r2\n"
                               "subscribe l reliable-list j processing p1 processing p2 "
                               "recovery z1 5 recovery z2 6\n"
                               "produce s \"\" header a \"\" header b \"\" as e1\n");
    const wsc_stmt *st = &sc->st[0];
    assert_string_equal(st->s_dq, "d2");
    assert_string_equal(st->s_reply, "r2");
    st = &sc->st[1];
    assert_string_equal(st->s_processing, "p2");
    assert_string_equal(st->s_recovery, "z2");
    assert_int_equal(st->cfg.min_idle_ms, 6);
    st = &sc->st[2];
    assert_int_equal(st->nheaders, 2);
    assert_string_equal(st->headers[1].value, "");
    wsc_free(sc);
}

/* expect published: a channel's messages, in order, or none. */
static void expect_published_line(void **state)
{
    (void)state;
    wsc_scenario *sc = ok(ENTRIES "expect published news none\n"
                                  "expect published news \"at once\" $e1 b\n");
    const wsc_stmt *st = &sc->st[sc->nst - 2];
    assert_int_equal(st->kind, K_EXPECT_PUBLISHED);
    assert_string_equal(st->key, "news");
    assert_int_equal(st->nexpect, 0);
    st = last(sc);
    assert_int_equal(st->nexpect, 3);
    assert_string_equal(st->expect[0].s, "at once");
    assert_string_equal(st->expect[1].s, "$e1");
    wsc_free(sc);
}

/* ----- $references --------------------------------------------------------------------------- */

/* $$ is a dollar; a $ not followed by a letter or '_' is literal; $name takes the longest
 * alias that matches, and what follows it is plain text. */
static void dollar_references(void **state)
{
    (void)state;
    wsc_scenario *sc = ok(STREAM "produce s a as e1\nproduce s b as e10\n"
                                 "setup SET $$x $1 $ $e1x\n"
                                 "check GET k:$e10 => \"$e1$$\"\n"
                                 "check GET $-1 => $-1\n");
    assert_int_equal(sc->nst, 7);
    wsc_free(sc);
}

/* The text of a refusal and the names in pending/read lists are not $-checked by the
 * parser: only command tokens, expected replies, flush lines and warnings' texts are. */
static void unchecked_references(void **state)
{
    (void)state;
    wsc_scenario *sc = ok(STREAM "read s expect e9\nexpect pending s e9\n");
    assert_int_equal(sc->nst, 4);
    wsc_free(sc);
}

/* ----- Consumer processes ------------------------------------------------------------- */

/* A file that drives a process: its command line (quotes and $ as written), environment
 * and directory; start, stop (with and without a bound), kill, wait; a fault on the
 * process; `start UNIX_MS` still sets the clock; `stop SUB` still stops a subscription in
 * a file without consumers. */
static void process_statements(void **state)
{
    (void)state;
    wsc_scenario *sc = ok("scenario P\n"
                          "start 1700000000000\n"
                          "consumer orders env RUST_LOG=info env A=b=c dir /tmp run sh -c 'echo $HOME' x\n"
                          "subscribe orders stream orders group g\n"
                          "produce orders a as o1\n"
                          "start orders\n"
                          "wait orders settled\n"
                          "wait orders settled within 2s\n"
                          "fault orders crash-before 2nd XACK\n"
                          "fault orders crash-after command 7\n"
                          "stop orders\n"
                          "stop orders within 500ms\n"
                          "kill orders\n"
                          "expect pending orders none\n");
    assert_int_equal(sc->start_ms, 1700000000000LL);
    assert_int_equal(sc->consumer_line, 3);
    const wsc_stmt *c = &sc->st[0];
    assert_int_equal(c->kind, K_CONSUMER);
    assert_string_equal(c->proc, "orders");
    assert_int_equal(c->nargv, 4);
    assert_string_equal(tok(c->argv, c->nargv, 0), "sh");
    assert_string_equal(tok(c->argv, c->nargv, 2), "echo $HOME");
    assert_string_equal(tok(c->argv, c->nargv, 3), "x");
    assert_int_equal(c->nenv, 2);
    assert_string_equal(c->env[0], "RUST_LOG=info");
    assert_string_equal(c->env[1], "A=b=c");
    assert_string_equal(c->dir, "/tmp");
    assert_int_equal(sc->st[3].kind, K_START);
    assert_string_equal(sc->st[3].proc, "orders");
    assert_int_equal(sc->st[4].kind, K_WAIT);
    assert_int_equal(sc->st[4].n, 0);
    assert_int_equal(sc->st[5].n, 2000);
    const wsc_stmt *f = &sc->st[6];
    assert_int_equal(f->kind, K_FAULT);
    assert_true(f->proc_fault);
    assert_int_equal(f->fault.kind, WS_FAULT_CRASH_BEFORE);
    assert_int_equal(f->fault.nth, 2);
    assert_string_equal(f->fault_name, "XACK");
    assert_string_equal(f->conn, "orders");
    f = &sc->st[7];
    assert_int_equal(f->fault.kind, WS_FAULT_CRASH_AFTER);
    assert_int_equal(f->fault.nth, 7);
    assert_null(f->fault_name);
    assert_int_equal(sc->st[8].kind, K_STOP_PROC);
    assert_int_equal(sc->st[8].n, 0);
    assert_int_equal(sc->st[9].n, 500);
    assert_int_equal(sc->st[10].kind, K_KILL);
    wsc_free(sc);
    sc = ok(STREAM "stop s\n");
    assert_int_equal(last(sc)->kind, K_STOP);
    assert_int_equal(sc->consumer_line, 0);
    wsc_free(sc);
    /* durations: a bare number is ms; m is minutes */
    sc = ok(HEAD "consumer c run x\nstart c\nwait c settled within 1m\nstop c within 250\n");
    assert_int_equal(sc->st[2].n, 60000);
    assert_int_equal(sc->st[3].n, 250);
    wsc_free(sc);
}

/* ----- Every error message ------------------------------------------------------------------- */

typedef struct err_case {
    const char *text;  /* the whole file */
    const char *error; /* the message, exactly, for file name NAME */
} err_case;

/* Runs a table of cases and reports every mismatch before failing. */
static void run_errors(const err_case *cases, size_t n)
{
    int bad_cases = 0;
    for (size_t i = 0; i < n; i++) {
        char *err = NULL;
        wsc_scenario *sc = wsc_parse(NAME, cases[i].text, strlen(cases[i].text), &err);
        if (sc) {
            print_error("case %zu parsed:\n%s\n  expected: %s\n", i, cases[i].text,
                        cases[i].error);
            wsc_free(sc);
            bad_cases++;
            continue;
        }
        if (!err || strcmp(err, cases[i].error) != 0) {
            print_error("case %zu:\n%s\n  expected: %s\n  got:      %s\n", i, cases[i].text,
                        cases[i].error, err ? err : "(null)");
            bad_cases++;
        }
        free(err);
    }
    assert_int_equal(bad_cases, 0);
}

#define E(text, msg) {text, NAME ":" msg}

/* The statements an unknown one is told about: the statement table's first words. */
#define STATEMENTS                                                                          \
    "(scenario, needs, forbid, seed, start, cluster, setup, subscribe, produce, read, "     \
    "ALIAS:, pool, advance, crash, shutdown, restart, stop, fault, consumer, wait, kill, check, expect)"

/* Quotes and escapes. */
static void errors_tokens(void **state)
{
    (void)state;
    static const err_case cases[] = {
        E(HEAD "setup SET \"a\\x4\" b", "2:13: error: bad \\x escape: two hex digits expected"),
        E(HEAD "setup SET \"a\\xg0\" b", "2:13: error: bad \\x escape: two hex digits expected"),
        E(HEAD "setup SET \"\\x", "2:12: error: bad \\x escape: two hex digits expected"),
        E(HEAD "setup SET \"a\\q\" b", "2:13: error: unknown escape \\q in a quoted string"),
        E(HEAD "setup SET \"abc", "2:11: error: unbalanced quotes: the string opened here never closes"),
        E(HEAD "setup SET \"abc\\\"", "2:11: error: unbalanced quotes: the string opened here never closes"),
        E(HEAD "setup SET 'abc\n", "2:11: error: unbalanced quotes: the string opened here never closes"),
        E(HEAD "setup SET \"a\"b", "2:14: error: a quoted string must be followed by a space"),
        E(HEAD "setup SET 'a'\"b\"", "2:14: error: a quoted string must be followed by a space"),
        E(HEAD "setup SET \"a\"# c", "2:14: error: a quoted string must be followed by a space"),
    };
    run_errors(cases, sizeof cases / sizeof cases[0]);
}

/* Every place a number is read. */
static void errors_numbers(void **state)
{
    (void)state;
    static const err_case cases[] = {
        E(HEAD "advance \"\"", "2:9: error: advance: a number expected, got ''"),
        E(HEAD "advance -1", "2:9: error: advance: a number expected, got '-1'"),
        E(HEAD "advance 1.5", "2:9: error: advance: a number expected, got '1.5'"),
        E(HEAD "advance 1234567890123456789", "2:9: error: advance: a number expected, got '1234567890123456789'"),
        E(HEAD "seed x", "2:6: error: seed: a number expected, got 'x'"),
        E(HEAD "start 1e3", "2:7: error: start: a number expected, got '1e3'"),
        E(HEAD "subscribe s stream k group g count x", "2:36: error: count: a number expected, got 'x'"),
        E(HEAD "subscribe s stream k group g block +5", "2:36: error: block: a number expected, got '+5'"),
        E(HEAD "subscribe s stream k group g reclaim 1s", "2:38: error: reclaim: a number expected, got '1s'"),
        E(HEAD "subscribe s stream k group g ttl x", "2:34: error: ttl: a number expected, got 'x'"),
        E(HEAD "subscribe s stream k group g batch z", "2:36: error: batch: a number expected, got 'z'"),
        E(HEAD "subscribe r reliable-list k recovery z y", "2:40: error: recovery min-idle: a number expected, got 'y'"),
        E(HEAD "subscribe r reliable-list k recovery z 5 ttl x", "2:46: error: recovery ttl: a number expected, got 'x'"),
        E(HEAD "subscribe s stream k group g max-attempts x", "2:43: error: max-attempts: a number expected, got 'x'"),
        E(HEAD "subscribe s stream k group g read claiming x", "2:44: error: claiming min-idle: a number expected, got 'x'"),
        E(HEAD "fault window crash-after round-trip x", "2:37: error: round-trip: a number expected, got 'x'"),
        E(HEAD "fault window crash-after round-trip 1 command x", "2:47: error: command: a number expected, got 'x'"),
        E(HEAD "expect flush x of s", "2:14: error: flush: a number expected, got 'x'"),
        E(HEAD "expect round-trips x", "2:20: error: round-trips: a number expected, got 'x'"),
        E(HEAD "expect flushes x", "2:16: error: flushes: a number expected, got 'x'"),
        E(HEAD "expect reports x", "2:16: error: reports: a number expected, got 'x'"),
        E(HEAD "expect report s commands x", "2:26: error: commands: a number expected, got 'x'"),
        E(HEAD "expect report s settles x", "2:25: error: settles: a number expected, got 'x'"),
        E(HEAD "expect report s failed x", "2:24: error: failed: a number expected, got 'x'"),
        E(HEAD "expect delivery e count x", "2:25: error: count: a number expected, got 'x'"),
        E(HEAD "expect delivery e retries -1", "2:27: error: retries: a number expected, got '-1'"),
        E(ENTRIES "e1: retry-after soon", "6:17: error: retry-after: a number expected, got 'soon'"),
    };
    run_errors(cases, sizeof cases / sizeof cases[0]);
}

/* The file: the scenario line, NUL bytes, indentation, blocks, unknown statements. */
static void errors_file_level(void **state)
{
    (void)state;
    static const char nul[] = "scenario T\nsetup SET a\0b\n";
    char *err = bad(nul, sizeof nul - 1);
    assert_string_equal(err, NAME ":2:12: error: a NUL byte in the file");
    free(err);
    static const char nul_title[] = "scenario T\0\n";
    err = bad(nul_title, sizeof nul_title - 1);
    assert_string_equal(err, NAME ":1:11: error: a NUL byte in the file");
    free(err);
    static const err_case cases[] = {
        E("", "1:1: error: empty scenario: the file must start with 'scenario <title>'"),
        E("# only a comment\n\n", "2:1: error: empty scenario: the file must start with 'scenario <title>'"),
        E("setup PING", "1:1: error: the file must start with 'scenario <title>' (got 'setup')"),
        E("\n  \nseed 1\nscenario T", "3:1: error: the file must start with 'scenario <title>' (got 'seed')"),
        E("needs fake x\nscenario T", "1:1: error: the file must start with 'scenario <title>' (got 'needs')"),
        E("scenario A\nscenario B", "2:1: error: a second 'scenario' line (one scenario per file)"),
        E("scenario\tA\nscenario\tB", "2:1: error: a second 'scenario' line (one scenario per file)"),
        E("scenario A\nscenario\tB", "2:1: error: a second 'scenario' line (one scenario per file)"),
        E("scenario", "1:9: error: scenario needs a title"),
        E("scenario   ", "1:12: error: scenario needs a title"),
        E(HEAD "needs", "2:1: error: usage: needs fake REASON... | needs real REASON..."),
        E(HEAD "needs server x", "2:1: error: usage: needs fake REASON... | needs real REASON..."),
        E(HEAD "needs fake", "2:11: error: say why it needs the fake: needs fake <reason>"),
        E(HEAD "needs real", "2:11: error: say why it needs a real server: needs real <reason>"),
        E(HEAD "needs fake   ", "2:14: error: say why it needs the fake: needs fake <reason>"),
        E(HEAD "  setup PING", "2:1: error: an indented line outside a block ('expect flush', 'expect read', 'expect pending' or 'expect delayed')"),
        E(HEAD "\tXACK s g 1-0", "2:1: error: an indented line outside a block ('expect flush', 'expect read', 'expect pending' or 'expect delayed')"),
        E(STREAM "expect flush 1 of s\n  XACK s g 1-0\nexpect invariants\n  XACK s g 1-0",
          "7:1: error: an indented line outside a block ('expect flush', 'expect read', 'expect pending' or 'expect delayed')"),
        /* every error of the file, in line order: the block is empty and the title twice */
        E(STREAM "expect flush 1 of s\nscenario X\n  XACK s g 1-0",
          "4:1: error: 'expect flush' needs its commands on indented lines below it\n"
          NAME ":5:1: error: a second 'scenario' line (one scenario per file)"),
        E(STREAM "expect flush 1 of s\nexpect invariants",
          "4:1: error: 'expect flush' needs its commands on indented lines below it"),
        E(STREAM "expect flush 1 of s\n\n# nothing\n",
          "4:1: error: 'expect flush' needs its commands on indented lines below it"),
        E(ENTRIES "expect flush 1 of s\n  e1>", "7:6: error: a command expected after 'e1>'"),
        E(STREAM "expect read 1 of s\nexpect invariants",
          "4:1: error: 'expect read' needs its commands on indented lines below it"),
        E(ENTRIES "expect read 1 of s\n  e1> XREADGROUP", "7:3: error: 'e1>': a read's commands come from no delivery"),
        /* The column is the origin's, whatever the indentation. */
        E(ENTRIES "expect read 1 of s\n\te1> XREADGROUP", "7:2: error: 'e1>': a read's commands come from no delivery"),
        E(ENTRIES "expect read 1 of s\n      e1> XREADGROUP", "7:7: error: 'e1>': a read's commands come from no delivery"),
        E(ENTRIES "expect flush 1 of s\n  e1> INCR x\n  e1>   # comment",
          "8:6: error: a command expected after 'e1>'"),
        E(HEAD "bogus x", "2:1: error: unknown statement 'bogus' " STATEMENTS),
        /* an action written without the space after its colon: the hint, at the colon */
        E(HEAD "e1:ack", "2:4: error: unknown statement 'e1:ack': write a space after the colon "
                         "('e1: ack')"),
        E(HEAD "e1:retry-after 5", "2:4: error: unknown statement 'e1:retry-after': write a "
                                   "space after the colon ('e1: retry-after')"),
        E(HEAD "e1:bogus", "2:1: error: unknown statement 'e1:bogus' " STATEMENTS),
        E(HEAD "\"setup\" PING", "2:1: error: unknown statement 'setup' " STATEMENTS),
        /* A ':' with no name before it is an action without its entry. */
        E(HEAD ": ack", "2:1: error: an entry's name expected before ':' (ALIAS: ACTION, e.g. e1: ack)"),
        E(ENTRIES "  :  queue INCR x", "6:1: error: an indented line outside a block ('expect flush', 'expect read', 'expect pending' or 'expect delayed')"),
        E(ENTRIES ":", "6:1: error: an entry's name expected before ':' (ALIAS: ACTION, e.g. e1: ack)"),
    };
    run_errors(cases, sizeof cases / sizeof cases[0]);
}

/* World and command steps: order, arguments, "=>". */
static void errors_world(void **state)
{
    (void)state;
    static const err_case cases[] = {
        E(HEAD "setup PING\nseed 2", "3:1: error: 'seed' must come before the first step"),
        E(HEAD "setup PING\nstart 2", "3:1: error: 'start' must come before the first step"),
        E(HEAD "setup PING\ncluster", "3:1: error: 'cluster' must come before the first step"),
        E(HEAD "expect invariants\ncluster", "3:1: error: 'cluster' must come before the first step"),
        E(ENTRIES "e1: ack\nseed 3", "7:1: error: 'seed' must come before the first step"),
        E(HEAD "cluster yes", "2:9: error: cluster takes no argument"),
        E(HEAD "forbid", "2:7: error: usage: forbid lost|leaked|split|doubled|stranded..."),
        E(HEAD "forbid # nothing", "2:7: error: usage: forbid lost|leaked|split|doubled|stranded..."),
        E(HEAD "forbid lost gone", "2:13: error: unknown invariant 'gone' (lost, leaked, split, doubled or stranded)"),
        E(HEAD "forbid \"lost\"", "2:8: error: unknown invariant 'lost' (lost, leaked, split, doubled or stranded)"),
        E("forbid lost\nscenario T", "1:1: error: the file must start with 'scenario <title>' (got 'forbid')"),
        E(HEAD "seed", "2:1: error: usage: seed N"),
        E(HEAD "seed 1 2", "2:1: error: usage: seed N"),
        E(HEAD "start", "2:1: error: usage: start UNIX_MS"),
        E(HEAD "setup", "2:6: error: setup needs a command"),
        E(HEAD "setup => refused", "2:6: error: setup needs a command"),
        E(HEAD "pool", "2:5: error: pool needs a command"),
        E(HEAD "check", "2:6: error: check needs a command"),
        E(HEAD "check => +OK", "2:6: error: check needs a command"),
        E(HEAD "check GET a", "2:12: error: check needs '=> <expected reply>'"),
        E(HEAD "check GET a => refused", "2:23: error: check needs '=> <expected reply>'"),
        E(HEAD "check GET a =>", "2:13: error: '=>' must be followed by the expected reply"),
        E(HEAD "pool GET a =>   ", "2:12: error: '=>' must be followed by the expected reply"),
        E(HEAD "setup SET a b => +OK", "2:15: error: '=>' here can only say 'refused [text]'"),
        E(HEAD "setup SET a b =>", "2:15: error: '=>' here can only say 'refused [text]'"),
        E(HEAD "setup SET a b => refusedx", "2:15: error: '=>' here can only say 'refused [text]'"),
        E(STREAM "read s => nothing", "4:8: error: '=>' here can only say 'refused [text]'"),
        E(STREAM "stop s => +OK", "4:8: error: '=>' here can only say 'refused [text]'"),
        E(HEAD "advance", "2:1: error: usage: advance MS"),
        E(HEAD "advance 1 2", "2:1: error: usage: advance MS"),
        E(HEAD "crash now", "2:7: error: crash takes no argument"),
        E(HEAD "restart 1", "2:9: error: restart takes no argument"),
        E(HEAD "shutdown now", "2:10: error: shutdown takes no argument but drains-lost"),
        E(HEAD "crash => refused", "2:7: error: crash takes no argument"),
        E(HEAD "stop", "2:1: error: usage: stop SUB"),
        E(HEAD "stop a b", "2:1: error: usage: stop SUB"),
        E(HEAD "stop => refused", "2:1: error: usage: stop SUB"),
    };
    run_errors(cases, sizeof cases / sizeof cases[0]);
}

/* subscribe: forms, every option's value, and the combinations refused. */
static void errors_subscribe(void **state)
{
    (void)state;
    static const err_case cases[] = {
        E(HEAD "subscribe", "2:10: error: incomplete statement: subscribe NAME FORM KEY [OPTION...]"),
        E(HEAD "subscribe s stream", "2:19: error: incomplete statement: subscribe NAME FORM KEY [OPTION...]"),
        E(HEAD "subscribe s bogus k", "2:13: error: unknown form 'bogus' (stream, reliable-list, list or channel)"),
        E(HEAD "subscribe s \"stream\" k group g", "2:13: error: unknown form 'stream' (stream, reliable-list, list or channel)"),
        E(HEAD "subscribe s stream k group", "2:22: error: group needs a value"),
        E(HEAD "subscribe s stream k group g consumer", "2:30: error: consumer needs a value"),
        E(HEAD "subscribe r reliable-list k processing", "2:29: error: processing needs a value"),
        E(HEAD "subscribe s stream k group g mode", "2:30: error: mode needs direct, window or atomic"),
        E(HEAD "subscribe s stream k group g mode fast", "2:35: error: unknown mode 'fast' (direct, window or atomic)"),
        E(HEAD "subscribe s stream k group g count", "2:30: error: count needs a number"),
        E(HEAD "subscribe s stream k group g batch", "2:30: error: batch needs a number"),
        E(HEAD "subscribe s stream k group g block", "2:30: error: block needs a number"),
        E(HEAD "subscribe s stream k group g reclaim", "2:30: error: reclaim needs a number"),
        E(HEAD "subscribe s stream k group g ttl", "2:30: error: ttl needs a number"),
        E(HEAD "subscribe s stream k group g count 0", "2:36: error: count must be between 1 and 100000"),
        E(HEAD "subscribe s stream k group g count 100001", "2:36: error: count must be between 1 and 100000"),
        E(HEAD "subscribe s stream k group g batch 0", "2:36: error: batch must be between 1 and 100000"),
        E(HEAD "subscribe s stream k group g delay-queue", "2:30: error: delay-queue needs a sorted set key"),
        E(HEAD "subscribe r reliable-list k recovery z", "2:29: error: recovery needs a sorted set and a min-idle in ms"),
        E(HEAD "subscribe s stream k group g reply", "2:30: error: reply needs a form and a key"),
        E(HEAD "subscribe s stream k group g reply stream", "2:30: error: reply needs a form and a key"),
        E(HEAD "subscribe s stream k group g reply hash h", "2:36: error: unknown form 'hash' (stream, reliable-list, list or channel)"),
        E(HEAD "subscribe c channel k buffer", "2:23: error: buffer needs a number (a power of two)"),
        E(HEAD "subscribe c channel k buffer 3", "2:30: error: buffer must be a power of two from 1 to 65536 (the client's broadcast channel holds that many unread messages)"),
        E(HEAD "subscribe c channel k buffer 0", "2:30: error: buffer must be a power of two from 1 to 65536 (the client's broadcast channel holds that many unread messages)"),
        E(HEAD "subscribe l list k buffer 2", "2:20: error: buffer is for channels (the Pub/Sub client's broadcast buffer)"),
        E(HEAD "subscribe s stream k group g fast", "2:30: error: unknown option 'fast' (group, consumer, mode, count, batch, block, reclaim, read claiming, delay-queue, ttl, processing, recovery, pattern, reply, warn-crossslot, max-attempts, dead-letter, buffer)"),
        E(HEAD "subscribe s stream k group g in-round", "2:30: error: unknown option 'in-round' (group, consumer, mode, count, batch, block, reclaim, read claiming, delay-queue, ttl, processing, recovery, pattern, reply, warn-crossslot, max-attempts, dead-letter, buffer)"),
        E(HEAD "subscribe s stream k group g start", "2:30: error: start needs where the group starts: $, 0 or an id"),
        E(HEAD "subscribe s stream k start 0 group g", "2:22: error: unknown option 'start' (group, consumer, mode, count, batch, block, reclaim, read claiming, delay-queue, ttl, processing, recovery, pattern, reply, warn-crossslot, max-attempts, dead-letter, buffer)"),
        E(HEAD "subscribe s stream k group g max-attempts", "2:30: error: max-attempts needs a number (1 or more)"),
        E(HEAD "subscribe s stream k group g max-attempts 0", "2:43: error: max-attempts must be between 1 and 1000000 (a handler runs at most that many times)"),
        E(HEAD "subscribe s stream k group g max-attempts 1000001", "2:43: error: max-attempts must be between 1 and 1000000 (a handler runs at most that many times)"),
        E(HEAD "subscribe s stream k group g dead-letter", "2:30: error: dead-letter needs a key (dead-letter KEY)"),
        E(HEAD "subscribe s stream k group g read", "2:30: error: read takes one mode: read claiming MIN_IDLE_MS"),
        E(HEAD "subscribe s stream k group g read fast 5", "2:35: error: read takes one mode: read claiming MIN_IDLE_MS"),
        E(HEAD "subscribe s stream k group g read claiming", "2:35: error: claiming needs a min-idle in ms"),
        E(HEAD "subscribe r reliable-list k recovery z 5 ttl 0", "2:46: error: the recovery ttl must be 1 ms or more"),
        E(HEAD "subscribe s stream k group g reclaim 5 read claiming 5", "2:13: error: reclaim and read claiming are two read modes: choose one"),
        E(HEAD "subscribe s stream k group g count 3 batch 2", "2:13: error: a batch subscription reads COUNT = its batch size: drop 'count 3' (or make it 2)"),
        E(HEAD "subscribe s stream k group g batch 2 count 3", "2:13: error: a batch subscription reads COUNT = its batch size: drop 'count 3' (or make it 2)"),
        E(HEAD "subscribe s stream k", "2:20: error: a stream subscription needs 'group <name>'"),
        E(HEAD "subscribe s stream k count 2", "2:20: error: a stream subscription needs 'group <name>'"),
        E(HEAD "subscribe l list k group g", "2:13: error: group, reclaim, read claiming and delay-queue are for streams (RedisStream::claiming reads XREADGROUP ... CLAIM)"),
        E(HEAD "subscribe l reliable-list k reclaim 5", "2:13: error: group, reclaim, read claiming and delay-queue are for streams (RedisStream::claiming reads XREADGROUP ... CLAIM)"),
        E(HEAD "subscribe c channel k delay-queue z", "2:13: error: group, reclaim, read claiming and delay-queue are for streams (RedisStream::claiming reads XREADGROUP ... CLAIM)"),
        E(HEAD "subscribe l list k read claiming 5", "2:13: error: group, reclaim, read claiming and delay-queue are for streams (RedisStream::claiming reads XREADGROUP ... CLAIM)"),
        E(HEAD "subscribe s stream k group g processing p", "2:13: error: processing and recovery are for reliable lists"),
        E(HEAD "subscribe l list k recovery z 5", "2:13: error: processing and recovery are for reliable lists"),
        E(HEAD "subscribe s stream k group g mode direct batch 2", "2:13: error: batch handlers need a window (mode window or atomic)"),
        E(HEAD "subscribe s stream k group g batch 2 mode direct", "2:13: error: batch handlers need a window (mode window or atomic)"),
        /* one name, two Redis types: refused at the framework's start (route.rs) */
        E(HEAD "subscribe j list jobs dead-letter jobs.dead\nsubscribe d stream jobs.dead group g",
          "3:11: error: 'd' writes jobs.dead as a stream, but 'j' (line 2) reads or dead-letters to it as a list: the framework refuses to start such a pair (give one of them another name)"),
        E(HEAD "subscribe s stream orders group g\nsubscribe c channel events dead-letter orders",
          "3:11: error: 'c' writes orders as a Pub/Sub channel, but 's' (line 2) reads or dead-letters to it as a stream: the framework refuses to start such a pair (give one of them another name)"),
    };
    run_errors(cases, sizeof cases / sizeof cases[0]);
}

/* produce and read. */
static void errors_produce_read(void **state)
{
    (void)state;
    static const err_case cases[] = {
        E(STREAM "produce", "4:8: error: incomplete statement: produce SUB PAYLOAD [header NAME VALUE]... [to KEY] [raw] [as ALIAS]"),
        E(STREAM "produce s", "4:10: error: incomplete statement: produce SUB PAYLOAD [header NAME VALUE]... [to KEY] [raw] [as ALIAS]"),
        E(STREAM "produce s p header", "4:13: error: header needs a name and a value"),
        E(STREAM "produce s p header n", "4:13: error: header needs a name and a value"),
        E(STREAM "produce s p as", "4:13: error: as needs an alias"),
        E(STREAM "produce s p to", "4:13: error: to needs a key (the channel a pattern hears)"),
        E(STREAM "produce s p as 1x", "4:16: error: an alias is a name: a letter or '_', then "
                                      "letters, digits, '_', '-' or '.' (got '1x')"),
        E(STREAM "produce s p as e:1", "4:16: error: an alias is a name: a letter or '_', then "
                                       "letters, digits, '_', '-' or '.' (got 'e:1')"),
        E(STREAM "produce s p as \"\"", "4:16: error: an alias is a name: a letter or '_', then "
                                        "letters, digits, '_', '-' or '.' (got '')"),
        E(STREAM "produce s p as e1 to k", "4:19: error: unexpected 'to' (header NAME VALUE, to KEY, raw or as ALIAS)"),
        E(STREAM "produce s p extra", "4:13: error: unexpected 'extra' (header NAME VALUE, to KEY, raw or as ALIAS)"),
        E(STREAM "produce s p as e1 header n v", "4:19: error: unexpected 'header' (header NAME VALUE, to KEY, raw or as ALIAS)"),
        E(STREAM "produce s p => refused", "4:13: error: unexpected '=>' (header NAME VALUE, to KEY, raw or as ALIAS)"),
        E(STREAM "read", "4:5: error: read needs a subscription"),
        E(STREAM "read => refused", "4:5: error: read needs a subscription"),
        E(STREAM "read s e1", "4:8: error: expected 'expect' after read <sub>, got 'e1'"),
        E(STREAM "read s expect", "4:14: error: expect what: aliases, 'nothing' or 'report'"),
        E(STREAM "read s expect => refused", "4:14: error: expect what: aliases, 'nothing' or 'report'"),
    };
    run_errors(cases, sizeof cases / sizeof cases[0]);
}

/* The process statements' errors, and what a process file cannot say. */
static void errors_process(void **state)
{
    (void)state;
#define PROC HEAD "consumer c run worker\n"
    static const err_case cases[] = {
        E(HEAD "consumer", "2:9: error: incomplete statement: consumer NAME [env NAME=VALUE]... [dir DIR] run COMMAND..."),
        E(HEAD "consumer c run", "2:15: error: incomplete statement: consumer NAME [env NAME=VALUE]... [dir DIR] run COMMAND..."),
        E(HEAD "consumer c x run y", "2:12: error: expected 'run COMMAND...' (or env NAME=VALUE, dir DIR before it), got 'x'"),
        E(HEAD "consumer c env run y", "2:16: error: env needs NAME=VALUE (env RUST_LOG=info)"),
        E(HEAD "consumer c env =x run y", "2:16: error: env needs NAME=VALUE (env RUST_LOG=info)"),
        E(HEAD "consumer c env A=1 dir", "2:20: error: dir needs a directory"),
        E(HEAD "consumer c env A=1 x y", "2:20: error: expected 'run COMMAND...' (or env NAME=VALUE, dir DIR before it), got 'x'"),
        E(HEAD "consumer 9c run y", "2:10: error: a consumer's name is a name: a letter or '_', then letters, digits, '_', '-' or '.' (got '9c')"),
        E(PROC "consumer c run y", "3:10: error: a second consumer named 'c'"),
        E(HEAD "start c", "2:7: error: no consumer named 'c' above (consumer c run COMMAND...)"),
        E(HEAD "kill c\nconsumer c run y", "2:6: error: no consumer named 'c' above (consumer c run COMMAND...)"),
        E(PROC "start c x", "3:1: error: usage: start CONSUMER"),
        E(PROC "kill", "3:1: error: usage: kill CONSUMER"),
        E(PROC "wait c", "3:1: error: usage: wait CONSUMER settled [within DURATION]"),
        E(PROC "wait c done", "3:1: error: usage: wait CONSUMER settled [within DURATION]"),
        E(PROC "wait d settled", "3:6: error: no consumer named 'd' above (consumer d run COMMAND...)"),
        E(PROC "wait c settled by 5s", "3:16: error: expected 'within DURATION', got 'by'"),
        E(PROC "wait c settled within 5h", "3:23: error: a duration expected (500ms, 10s, 2m; a bare number is ms), got '5h'"),
        E(PROC "wait c settled within s", "3:23: error: a duration expected (500ms, 10s, 2m; a bare number is ms), got 's'"),
        E(PROC "wait c settled within 0", "3:23: error: a duration between 1 ms and 1 hour expected, got '0'"),
        E(PROC "wait c settled within 61m", "3:23: error: a duration between 1 ms and 1 hour expected, got '61m'"),
        E(PROC "stop c within", "3:8: error: usage: stop CONSUMER [within DURATION]"),
        E(PROC "stop c after 1s", "3:8: error: usage: stop CONSUMER [within DURATION]"),
        E(PROC "fault c lose-replies 1st XACK", "3:9: error: a consumer process crashes before or after a command: crash-before or crash-after, got 'lose-replies'"),
        E(PROC "fault c crash-before XACK", "3:22: error: expected '<n>th COMMAND' (e.g. 2nd XACK) or 'command <n>', got 'XACK'"),
        E(PROC "fault c crash-before 2nd", "3:22: error: '2nd' needs a command name"),
        E(PROC "fault c crash-before 0th XACK", "3:22: error: occurrences count from 1"),
        E(PROC "fault c crash-before 1st XACK error x", "3:31: error: unexpected 'error' after the fault's place"),
        E(PROC "fault c crash-after command", "3:21: error: usage: fault CONSUMER crash-after command N"),
        E(PROC "fault c crash-after command 0", "3:29: error: commands count from 1"),
        E(PROC "subscribe s stream s group g\nread s", "4:1: error: 'read' drives or inspects wsim's own consumer, but this file drives a consumer process (line 2), which reads, handles and settles by itself"),
        E(HEAD "subscribe s stream s group g\nproduce s a as e1\ne1: ack\nconsumer c run y", "4:1: error: 'e1:' drives or inspects wsim's own consumer, but this file drives a consumer process (line 5), which reads, handles and settles by itself"),
        E(PROC "subscribe s stream s group g\nstop s", "4:1: error: 'stop' drives or inspects wsim's own consumer: a subscription's stop, but this file drives a consumer process (line 2), which reads, handles and settles by itself"),
        E(PROC "crash", "3:1: error: 'crash' drives or inspects wsim's own consumer, but this file drives a consumer process (line 2), which reads, handles and settles by itself"),
        E(PROC "fault window crash-before 1st XACK", "3:1: error: 'fault' drives or inspects wsim's own consumer, but this file drives a consumer process (line 2), which reads, handles and settles by itself"),
        E(PROC "pool INCR x", "3:1: error: 'pool' drives or inspects wsim's own consumer, but this file drives a consumer process (line 2), which reads, handles and settles by itself"),
        E(PROC "expect round-trips 1", "3:1: error: 'expect' drives or inspects wsim's own consumer, but this file drives a consumer process (line 2), which reads, handles and settles by itself"),
    };
#undef PROC
    run_errors(cases, sizeof cases / sizeof cases[0]);
}

/* Handler actions. */
static void errors_actions(void **state)
{
    (void)state;
    static const err_case cases[] = {
        E(ENTRIES "e1:", "6:4: error: an action expected after 'e1:'"),
        E(ENTRIES "e1:   # comment", "6:4: error: an action expected after 'e1:'"),
        E(ENTRIES "e1: queue", "6:10: error: queue needs a command"),
        E(ENTRIES "e1: queue => refused", "6:10: error: queue needs a command"),
        E(ENTRIES "e1: pool", "6:9: error: pool needs a command"),
        E(ENTRIES "e1: queue INCR x => :1", "6:18: error: '=>' here can only say 'refused [text]'"),
        E(ENTRIES "e1: pool INCR x =>", "6:17: error: '=>' must be followed by the expected reply"),
        E(ENTRIES "e1: ack => done", "6:9: error: '=>' here can only say 'refused [text]'"),
        E(ENTRIES "e1: publish stream out", "6:23: error: incomplete statement: ALIAS: publish FORM KEY PAYLOAD [header NAME VALUE]..."),
        E(ENTRIES "e1: publish stream out => refused", "6:23: error: incomplete statement: ALIAS: publish FORM KEY PAYLOAD [header NAME VALUE]..."),
        E(ENTRIES "e1: publish hash out p", "6:13: error: unknown form 'hash' (stream, reliable-list, list or channel)"),
        E(ENTRIES "e1: publish stream out p header n", "6:26: error: header needs a name and a value"),
        E(ENTRIES "e1: publish stream out p as x", "6:26: error: unexpected 'as' (only 'header NAME VALUE' may follow)"),
        E(ENTRIES "e1: reply", "6:5: error: usage: ALIAS: reply PAYLOAD"),
        E(ENTRIES "e1: reply a b", "6:5: error: usage: ALIAS: reply PAYLOAD"),
        E(ENTRIES "e1: bind stream", "6:5: error: usage: ALIAS: bind FORM KEY"),
        E(ENTRIES "e1: bind stream a b", "6:5: error: usage: ALIAS: bind FORM KEY"),
        E(ENTRIES "e1: bind zset k", "6:10: error: unknown form 'zset' (stream, reliable-list, list or channel)"),
        E(ENTRIES "e1: ack now", "6:9: error: unexpected 'now' after ack"),
        E(ENTRIES "e1: drop 1", "6:10: error: unexpected '1' after drop"),
        E(ENTRIES "e1: retry 5", "6:11: error: unexpected '5' after retry"),
        E(ENTRIES "e1: abandon x", "6:13: error: unexpected 'x' after abandon"),
        E(ENTRIES "e1: retry-after", "6:5: error: usage: ALIAS: retry-after MS"),
        E(ENTRIES "e1: retry-after 1 2", "6:5: error: usage: ALIAS: retry-after MS"),
        E(ENTRIES "e1: settle", "6:5: error: unknown action 'settle' (queue, pool, publish, reply, bind, ack, drop, retry, abandon, retry-after)"),
        E(ENTRIES "e1: \"ack\"", "6:5: error: unknown action 'ack' (queue, pool, publish, reply, bind, ack, drop, retry, abandon, retry-after)"),
    };
    run_errors(cases, sizeof cases / sizeof cases[0]);
}

/* fault: connections, kinds, places, error texts. */
static void errors_fault(void **state)
{
    (void)state;
    static const char *const usage =
        "fault reader|window|subscriber crash-after|crash-before|lose-replies|error|refuse|disconnect "
        "(Nth COMMAND | round-trip I [command K]) [error TEXT]";
    char want[2][512];
    snprintf(want[0], sizeof want[0], NAME ":2:6: error: incomplete statement: %s", usage);
    snprintf(want[1], sizeof want[1], NAME ":2:25: error: incomplete statement: %s", usage);
    const err_case incomplete[] = {{HEAD "fault", want[0]}, {HEAD "fault window crash-after", want[1]}};
    run_errors(incomplete, 2);
    static const err_case cases[] = {
        E(HEAD "fault admin crash-after 1st XACK", "2:7: error: unknown connection 'admin' (reader, window or subscriber)"),
        E(HEAD "fault window explode 1st XACK", "2:14: error: unknown fault 'explode' (crash-after, crash-before, lose-replies, error, refuse or disconnect)"),
        E(HEAD "fault window crash-after round-trip", "2:26: error: round-trip needs a number"),
        E(HEAD "fault window crash-after round-trip 0", "2:37: error: round trips count from 1"),
        E(HEAD "fault window crash-after round-trip 1 command", "2:39: error: command needs a number"),
        E(HEAD "fault window error round-trip 1", "2:20: error: error needs 'command <k>' (k >= 1)"),
        E(HEAD "fault window error round-trip 1 command 0", "2:20: error: error needs 'command <k>' (k >= 1)"),
        E(HEAD "fault window crash-before round-trip 2", "2:27: error: crash-before needs 'command <k>' (k >= 1)"),
        E(HEAD "fault window crash-after XACK", "2:26: error: expected '<n>th COMMAND' (e.g. 3rd XACK) or 'round-trip <i>', got 'XACK'"),
        E(HEAD "fault window crash-after 3 XACK", "2:26: error: expected '<n>th COMMAND' (e.g. 3rd XACK) or 'round-trip <i>', got '3'"),
        E(HEAD "fault window crash-after 3x XACK", "2:26: error: expected '<n>th COMMAND' (e.g. 3rd XACK) or 'round-trip <i>', got '3x'"),
        E(HEAD "fault window crash-after th XACK", "2:26: error: expected '<n>th COMMAND' (e.g. 3rd XACK) or 'round-trip <i>', got 'th'"),
        E(HEAD "fault window crash-after 1234567890th XACK", "2:26: error: expected '<n>th COMMAND' (e.g. 3rd XACK) or 'round-trip <i>', got '1234567890th'"),
        E(HEAD "fault window crash-after 0th XACK", "2:26: error: occurrences count from 1"),
        E(HEAD "fault window crash-after 3rd", "2:26: error: '3rd' needs a command name"),
        E(HEAD "fault window crash-after 1st XACK error ERR x", "2:35: error: only an 'error' fault takes an error text"),
        E(HEAD "fault window error 1st XACK error", "2:29: error: error needs the text of the error reply"),
        E(HEAD "fault window crash-after 1st XACK now", "2:35: error: unexpected 'now' after the fault's place"),
        E(HEAD "fault window refuse round-trip 1 command 2 x", "2:44: error: unexpected 'x' after the fault's place"),
    };
    run_errors(cases, sizeof cases / sizeof cases[0]);
}

/* Every expectation's usage. */
static void errors_expect(void **state)
{
    (void)state;
    static const err_case cases[] = {
        E(HEAD "expect", "2:7: error: incomplete statement: expect WHAT ..."),
        E(HEAD "expect bogus", "2:8: error: unknown expectation 'bogus' (flush, read, round-trips, flushes, reports, skipped, report, pending, delayed, invariants, violation, warning, published, delivery, nothing)"),
        E(HEAD "expect nothing at all", "2:16: error: usage: expect nothing"),
        /* expect nothing says the scenario checks nothing: not beside an expectation */
        E(HEAD "expect nothing\ncheck PING => +PONG", "2:1: error: 'expect nothing' says the "
          "scenario checks nothing, but line 3 checks something"),
        E(HEAD "setup SET a b => refused\nexpect nothing", "3:1: error: 'expect nothing' says "
          "the scenario checks nothing, but line 2 checks something"),
        E(HEAD "expect flush 1", "2:8: error: usage: expect flush N of SUB"),
        E(HEAD "expect flush 1 in s", "2:8: error: usage: expect flush N of SUB"),
        E(HEAD "expect flush 1 of s x", "2:8: error: usage: expect flush N of SUB"),
        E(HEAD "expect flush 0 of s", "2:14: error: flushes count from 1"),
        E(HEAD "expect read 1", "2:8: error: usage: expect read N of SUB"),
        E(HEAD "expect read 1 in s", "2:8: error: usage: expect read N of SUB"),
        E(HEAD "expect read x of s", "2:13: error: read: a number expected, got 'x'"),
        E(HEAD "expect read 0 of s", "2:13: error: reads count from 1"),
        E(HEAD "expect round-trips", "2:8: error: usage: expect round-trips N [total|reads|flushes|pool]"),
        E(HEAD "expect round-trips 1 reads x", "2:8: error: usage: expect round-trips N [total|reads|flushes|pool]"),
        E(HEAD "expect round-trips 1 writes", "2:22: error: unknown kind 'writes' (total, reads, flushes or pool)"),
        E(HEAD "expect flushes", "2:8: error: usage: expect flushes N [of SUB]"),
        E(HEAD "expect flushes 1 of", "2:8: error: usage: expect flushes N [of SUB]"),
        E(HEAD "expect flushes 1 in s", "2:8: error: usage: expect flushes N [of SUB]"),
        E(HEAD "expect skipped", "2:8: error: usage: expect skipped N"),
        E(HEAD "expect skipped x", "2:16: error: skipped: a number expected, got 'x'"),
        E(HEAD "expect reports", "2:8: error: usage: expect reports N"),
        E(HEAD "expect reports 1 2", "2:8: error: usage: expect reports N"),
        E(HEAD "expect report", "2:8: error: usage: expect report SUB [commands N] [settles N] [failed N] [error TEXT]"),
        E(HEAD "expect report s error", "2:17: error: error needs a text"),
        E(HEAD "expect report s count 1", "2:17: error: unknown field 'count' (commands, settles, failed, error)"),
        E(HEAD "expect report s failed", "2:17: error: failed needs a number"),
        E(HEAD "expect report s commands 1 settles", "2:28: error: settles needs a number"),
        E(HEAD "expect pending", "2:8: error: usage: expect pending <sub> (<alias>... | none), or the entries on indented lines below it"),
        E(HEAD "expect delayed", "2:8: error: usage: expect delayed <sub> (<alias>... | none), or the entries on indented lines below it"),
        E(HEAD "expect invariants hold", "2:19: error: usage: expect invariants"),
        E(HEAD "expect violation lost", "2:8: error: usage: expect violation lost|leaked|split|doubled|stranded ALIAS"),
        E(HEAD "expect violation lost e1 e2", "2:8: error: usage: expect violation lost|leaked|split|doubled|stranded ALIAS"),
        E(HEAD "expect violation gone e1", "2:18: error: unknown invariant 'gone' (lost, leaked, split, doubled or stranded)"),
        E(HEAD "expect warning", "2:8: error: usage: expect warning TEXT"),
        E(HEAD "expect published", "2:8: error: usage: expect published CHANNEL (PAYLOAD... | none)"),
        E(HEAD "expect published news", "2:8: error: usage: expect published CHANNEL (PAYLOAD... | none)"),
        E(HEAD "expect delivery e1", "2:8: error: usage: expect delivery ALIAS (count N | retries N)"),
        E(HEAD "expect delivery e1 count", "2:8: error: usage: expect delivery ALIAS (count N | retries N)"),
        E(HEAD "expect delivery e1 times 2", "2:8: error: usage: expect delivery ALIAS (count N | retries N)"),
    };
    run_errors(cases, sizeof cases / sizeof cases[0]);
}

/* A malformed expected reply is a parse error, with the column of what is wrong, in a
 * check, a pool and an ALIAS: pool line alike. */
static void errors_replies(void **state)
{
    (void)state;
    static const err_case cases[] = {
        E(HEAD "check GET a => [", "2:16: error: unbalanced brackets in the expected reply: this '[' never closes"),
        E(HEAD "check GET a => [\"a\",", "2:16: error: unbalanced brackets in the expected reply: this '[' never closes"),
        E(HEAD "check GET a => [\"a\", ", "2:16: error: unbalanced brackets in the expected reply: this '[' never closes"),
        E(HEAD "check GET a => [[:1, [\"a\"]]", "2:16: error: unbalanced brackets in the expected reply: this '[' never closes"),
        E(HEAD "check GET a => [[:1], [\"a\"", "2:23: error: unbalanced brackets in the expected reply: this '[' never closes"),
        E(HEAD "check GET a => [:1 # a comment ends it]", "2:16: error: unbalanced brackets in the expected reply: this '[' never closes"),
        E(HEAD "check GET a => \"unterminated", "2:16: error: unterminated string in the expected reply: this '\"' never closes"),
        E(HEAD "check GET a => [\"a\\\"]", "2:17: error: unterminated string in the expected reply: this '\"' never closes"),
        E(HEAD "check GET a => \"a\\", "2:16: error: unterminated string in the expected reply: this '\"' never closes"),
        E(HEAD "check GET a => \"a\\q\"", "2:18: error: unknown escape \\q in a string of the expected reply (\\\\ \\\" \\n \\r \\t \\a \\b \\xHH)"),
        E(HEAD "check GET a => \"a\\x4\"", "2:18: error: bad \\x escape: two hex digits expected"),
        E(HEAD "check GET a => \"\\xg0\"", "2:17: error: bad \\x escape: two hex digits expected"),
        /* a \xHH the trace never writes: printable, named, or upper-case hex */
        E(HEAD "check GET a => \"x\\x41\"", "2:18: error: '\\x41' in the expected reply: the trace writes this byte as 'A'"),
        E(HEAD "check GET a => \"\\x0a\"", "2:17: error: '\\x0a' in the expected reply: the trace writes this byte as '\\n'"),
        E(HEAD "check GET a => \"\\x07\"", "2:17: error: '\\x07' in the expected reply: the trace writes this byte as '\\a'"),
        E(HEAD "check GET a => \"\\x22\"", "2:17: error: '\\x22' in the expected reply: the trace writes this byte as '\\\"'"),
        E(HEAD "check GET a => [\"\\xFF\"]", "2:18: error: '\\xFF' in the expected reply: the trace writes this byte as '\\xff'"),
        E(HEAD "check GET a => [\"a\"]]", "2:21: error: unexpected ']' after the complete expected reply"),
        E(HEAD "check GET a => [\"a\"] x", "2:22: error: unexpected 'x' after the complete expected reply"),
        E(HEAD "check GET a => :1 2", "2:19: error: unexpected '2' after the complete expected reply"),
        E(HEAD "check GET a => \"a\"\"b\"", "2:19: error: unexpected '\"b\"' after the complete expected reply"),
        E(HEAD "check GET a => $-1x", "2:19: error: unexpected 'x' after the complete expected reply"),
        E(HEAD "check GET a => [\"a\",\"b\"]", "2:20: error: array items are separated by ', ' (a comma and a space)"),
        E(HEAD "check GET a => [\"a\" ,\"b\"]", "2:20: error: expected ', ' or ']' after an array item, got ' '"),
        E(HEAD "check GET a => [:1 :2]", "2:19: error: expected ', ' or ']' after an array item, got ' :2'"),
        E(HEAD "check GET a => [, ]", "2:17: error: expected a reply item (+status, -error, :integer, \"string\", $-1, *-1, [array] or <*>), got ','"),
        E(HEAD "check GET a => [:1, ]", "2:21: error: expected a reply item (+status, -error, :integer, \"string\", $-1, *-1, [array] or <*>), got ']'"),
        E(HEAD "check GET a => OK", "2:16: error: expected a reply item (+status, -error, :integer, \"string\", $-1, *-1, [array] or <*>), got 'OK'"),
        E(HEAD "check GET a => 'a'", "2:16: error: expected a reply item (+status, -error, :integer, \"string\", $-1, *-1, [array] or <*>), got ''a''"),
        E(HEAD "check GET a => :x", "2:16: error: an integer expected after ':' in the expected reply"),
        E(HEAD "check GET a => [:-]", "2:17: error: an integer expected after ':' in the expected reply"),
        E(HEAD "check GET a => $e1", "2:16: error: '$e1' in the expected reply: a string is written in double quotes (\"...\"), a nil as $-1"),
        E(HEAD "check GET a => [$-2]", "2:17: error: '$-2' in the expected reply: a string is written in double quotes (\"...\"), a nil as $-1"),
        E(HEAD "check GET a => *3", "2:16: error: '*3' in the expected reply: a nil array is *-1, an array [...]"),
        E(HEAD "check GET a => <x>", "2:16: error: '<x>' in the expected reply: the wildcard is <*>"),
        E(HEAD "check GET a => [<*>, <*]", "2:22: error: '<*' in the expected reply: the wildcard is <*>"),
        /* pool and ALIAS: pool are checked the same way */
        E(HEAD "pool GET a => [", "2:15: error: unbalanced brackets in the expected reply: this '[' never closes"),
        E(ENTRIES "e1: pool GET a => [\"a\",", "6:19: error: unbalanced brackets in the expected reply: this '[' never closes"),
        E(ENTRIES "e1: pool GET a => \"x", "6:19: error: unterminated string in the expected reply: this '\"' never closes"),
    };
    run_errors(cases, sizeof cases / sizeof cases[0]);
}

/* The blocks of expect pending and expect delayed, and pipeline boundaries. */
static void errors_blocks(void **state)
{
    (void)state;
#define DQ HEAD "setup XGROUP CREATE s g $ MKSTREAM\nsubscribe s stream s group g delay-queue dq\n" \
           "produce s a as e1\n"
    static const err_case cases[] = {
        E(ENTRIES "expect pending s", "6:1: error: 'expect pending s' needs its entries on indented lines below it (or 'none')"),
        E(ENTRIES "expect pending s\n# no entries\nexpect invariants", "6:1: error: 'expect pending s' needs its entries on indented lines below it (or 'none')"),
        E(DQ "expect delayed s\n", "5:1: error: 'expect delayed s' needs its entries on indented lines below it (or 'none')"),
        E(ENTRIES "expect pending s\n  none", "7:3: error: 'none' in a block: write 'expect pending s none' instead"),
        E(DQ "expect delayed s\n  none", "6:3: error: 'none' in a block: write 'expect delayed s none' instead"),
        E(ENTRIES "expect pending s\n  e1 retries 1", "7:6: error: unknown field 'retries' (consumer NAME, deliveries N)"),
        E(ENTRIES "expect pending s\n  e1 e2", "7:6: error: unknown field 'e2' (consumer NAME, deliveries N)"),
        E(ENTRIES "expect pending s\n  e1 consumer", "7:6: error: consumer needs a name"),
        E(ENTRIES "expect pending s\n  e1 consumer c1 deliveries", "7:18: error: deliveries needs a number"),
        E(ENTRIES "expect pending s\n  e1 deliveries two", "7:17: error: deliveries: a number expected, got 'two'"),
        E(DQ "expect delayed s\n  e1 consumer c1", "6:6: error: unknown field 'consumer' (retries N, due-in MS)"),
        E(DQ "expect delayed s\n  e1 retries", "6:6: error: retries needs a number"),
        E(DQ "expect delayed s\n  e1 due-in -5", "6:13: error: due-in: a number expected, got '-5'"),
        E(ENTRIES "expect pending s\n  $e3", "7:3: error: $e3 names no entry produced above (produce ... as NAME; $$ for a $)"),
        E(ENTRIES "expect pending x\n  e1", "6:16: error: no subscription named 'x' above (subscribe x ...)"),
        /* what the subscription cannot tell */
        E(HEAD "subscribe l reliable-list jobs\nproduce l j as j1\nexpect pending l\n  j1\n  j1 consumer c1",
          "6:6: error: 'l' is a reliable list: its pending entries (the processing list) have no consumer or delivery count; write the entry alone"),
        E(HEAD "subscribe l reliable-list jobs\nproduce l j as j1\nexpect pending l\n  j1 deliveries 1",
          "5:6: error: 'l' is a reliable list: its pending entries (the processing list) have no consumer or delivery count; write the entry alone"),
        E(ENTRIES "expect delayed s none", "6:1: error: 's' has no delay queue (subscribe s stream ... delay-queue ZSET)"),
        E(ENTRIES "expect delayed s\n  e1 retries 1", "6:1: error: 's' has no delay queue (subscribe s stream ... delay-queue ZSET)"),
        /* pipeline boundaries: between two commands of a flush block */
        E(ENTRIES "expect flush 1 of s\n  ..\n  XACK s g 1-0", "7:3: error: '..' (a pipeline boundary) must sit between two commands"),
        E(ENTRIES "expect flush 1 of s\n  XACK s g 1-0\n\t..", "8:2: error: '..' (a pipeline boundary) must sit between two commands"),
        E(ENTRIES "expect flush 1 of s\n  INCR a\n  ..\n  --\n  XACK s g 1-0", "8:3: error: '..' (a pipeline boundary) must sit between two commands"),
        E(ENTRIES "expect flush 1 of s\n  INCR a\n  --\n  ..\n  XACK s g 1-0", "8:3: error: '--' (a round-trip boundary) must sit between two commands"),
        /* round-trip boundaries the same */
        E(ENTRIES "expect flush 1 of s\n  --\n  XACK s g 1-0", "7:3: error: '--' (a round-trip boundary) must sit between two commands"),
        E(ENTRIES "expect flush 1 of s\n  XACK s g 1-0\n  --", "8:3: error: '--' (a round-trip boundary) must sit between two commands"),
        E(ENTRIES "expect flush 1 of s\n  INCR a\n  --\n  --\n  XACK s g 1-0", "8:3: error: '--' (a round-trip boundary) must sit between two commands"),
        E(ENTRIES "expect read 1 of s\n  XREADGROUP\n  --", "8:3: error: '--' (a round-trip boundary) must sit between two commands"),
        E(ENTRIES "expect flush 1 of s\n  INCR a\n  ..\n  ..\n  XACK s g 1-0", "8:3: error: '..' (a pipeline boundary) must sit between two commands"),
        E(ENTRIES "expect read 1 of s\n  XREADGROUP\n    ..\n  ?", "8:5: error: '..' marks a pipeline boundary of a flush; a read's round trip is one pipeline ('--' between round trips)"),
    };
#undef DQ
    run_errors(cases, sizeof cases / sizeof cases[0]);
}

/* A line of a block written at column 1: said, with the block it belongs to, and read as
 * one of its lines (so the block is not "empty" too). */
static void errors_unindented_block_lines(void **state)
{
    (void)state;
    static const err_case cases[] = {
        E(ENTRIES "expect flush 1 of s\ne1> INCR x",
          "7:1: error: unknown statement 'e1>': a line of the block above ('expect flush 1 of "
          "s', line 6) must be indented"),
        E(ENTRIES "expect flush 1 of s\n  INCR x\nXACK s g $e1",
          "8:1: error: unknown statement 'XACK': a line of the block above ('expect flush 1 "
          "of s', line 6) must be indented"),
        E(ENTRIES "expect read 1 of s\n--",
          "7:1: error: unknown statement '--': a line of the block above ('expect read 1 of "
          "s', line 6) must be indented"),
        E(ENTRIES "expect pending s\ne1",
          "7:1: error: unknown statement 'e1': a line of the block above ('expect pending s', "
          "line 6) must be indented"),
        /* a statement's word ends the block as ever */
        E(ENTRIES "expect flush 1 of s\nexpect invariants",
          "6:1: error: 'expect flush' needs its commands on indented lines below it"),
        /* every such line is said */
        E(ENTRIES "expect flush 1 of s\nINCR x\nXACK s g $e1",
          "7:1: error: unknown statement 'INCR': a line of the block above ('expect flush 1 "
          "of s', line 6) must be indented\n" NAME ":8:1: error: unknown statement 'XACK': a "
          "line of the block above ('expect flush 1 of s', line 6) must be indented"),
    };
    run_errors(cases, sizeof cases / sizeof cases[0]);
}

/* Every error of a file, in line order, one per line, up to WSC_MAX_ERRORS; names are
 * checked only once every line reads (a line that failed would make them repeat it). */
static void errors_every_one_up_to_a_limit(void **state)
{
    (void)state;
    static const err_case cases[] = {
        E(HEAD "seed x\nbogus\nexpect flush 0 of s\n  XACK",
          "2:6: error: seed: a number expected, got 'x'\n"
          NAME ":3:1: error: unknown statement 'bogus' " STATEMENTS "\n"
          NAME ":4:14: error: flushes count from 1"),
        /* the second error of a line is not said */
        E(HEAD "subscribe s stream k mode fast count x",
          "2:27: error: unknown mode 'fast' (direct, window or atomic)"),
        /* a subscribe that fails: no "no subscription named" after it, its block unread */
        E(HEAD "subscribe s stream\nread s\nexpect flush 1 of s\n  XACK",
          "2:19: error: incomplete statement: subscribe NAME FORM KEY [OPTION...]"),
        /* the names, once the lines read: every one */
        E(HEAD "read a\nread b\nproduce c x",
          "2:6: error: no subscription named 'a' above (subscribe a ...)\n"
          NAME ":3:6: error: no subscription named 'b' above (subscribe b ...)\n"
          NAME ":4:9: error: no subscription named 'c' above (subscribe c ...)"),
    };
    run_errors(cases, sizeof cases / sizeof cases[0]);
    /* 25 bad lines: the first 20, then a note */
    char text[2048] = HEAD;
    for (int i = 0; i < 25; i++) strcat(text, "bogus\n");
    char *err = bad(text, strlen(text));
    size_t lines = 1;
    for (const char *c = err; *c; c++) lines += *c == '\n';
    assert_int_equal(lines, WSC_MAX_ERRORS + 1);
    assert_non_null(strstr(err, NAME ":21:1: error: unknown statement 'bogus'"));
    assert_null(strstr(err, NAME ":22:1:"));
    const char *note = strrchr(err, '\n');
    assert_string_equal(note, "\n" NAME ": note: stopped after 20 errors");
    free(err);
}

/* A reclaim (or claiming) stream subscription that says no mode takes the mode of the
 * subscription above it on the same stream and group; one that says it keeps it. */
static void recovery_subscriptions_inherit_the_mode(void **state)
{
    (void)state;
    wsc_scenario *sc = ok(HEAD "subscribe s stream s group g mode atomic\n"
                               "subscribe r stream s group g consumer c2 reclaim 50\n"
                               "subscribe w stream s group g consumer c3 mode window reclaim 50\n"
                               "subscribe c stream s group g consumer c4 read claiming 50\n"
                               "subscribe o stream o group g reclaim 50\n"
                               "subscribe d stream o group g mode direct\n"
                               "subscribe f stream s group g consumer c5\n"
                               "expect nothing\n");
    assert_int_equal(sc->st[0].cfg.mode, WS_MODE_ATOMIC);
    assert_int_equal(sc->st[1].cfg.mode, WS_MODE_ATOMIC);  /* inherited */
    assert_int_equal(sc->st[2].cfg.mode, WS_MODE_WINDOW);  /* said */
    assert_int_equal(sc->st[3].cfg.mode, WS_MODE_WINDOW);  /* the nearest above: w */
    assert_int_equal(sc->st[4].cfg.mode, WS_MODE_WINDOW);  /* nothing above on o */
    assert_int_equal(sc->st[5].cfg.mode, WS_MODE_DIRECT);
    assert_int_equal(sc->st[6].cfg.mode, WS_MODE_WINDOW);  /* no reclaim: the default */
    wsc_free(sc);
}

/* The grammar comes from the statement table: one line per form, and every first word the
 * unknown-statement message lists starts a line of it (and the other way round). */
static void the_grammar_is_the_table(void **state)
{
    (void)state;
    char *g = wsc_grammar();
    assert_non_null(g);
    assert_non_null(strstr(g, "\nsubscribe NAME FORM KEY [OPTION...]           FORM: stream"));
    assert_non_null(strstr(g, "\nALIAS: ack | drop | retry | abandon"));
    assert_non_null(strstr(g, "\nexpect nothing "));
    assert_non_null(strstr(g, "\nfault reader|window|subscriber crash-after|"));
    /* the unknown-statement list, word by word, against the grammar's first words */
    char *err = bad(HEAD "bogus\n", strlen(HEAD "bogus\n"));
    size_t from = strcspn(err, "("), to = strlen(err);
    while (to > 0 && err[to - 1] != ')') to--;
    assert_true(err[from] == '(' && to > from + 1);
    char list[512];
    snprintf(list, sizeof list, "%.*s", (int)(to - from - 2), err + from + 1);
    size_t words = 0;
    for (char *w = strtok(list, ", "); w; w = strtok(NULL, ", "), words++) {
        char at[64];
        snprintf(at, sizeof at, "\n%s ", w);
        char first[64];
        snprintf(first, sizeof first, "%s ", w);
        char alone[64];
        snprintf(alone, sizeof alone, "\n%s\n", w);
        if (!strstr(g, at) && strncmp(g, first, strlen(first)) != 0 && !strstr(g, alone))
            fail_msg("'%s' starts no line of the grammar:\n%s", w, g);
    }
    /* the grammar's distinct first words: as many */
    char seen[64][32];
    size_t first_words = 0;
    for (const char *l = g; l && *l; l = strchr(l, '\n') ? strchr(l, '\n') + 1 : NULL) {
        if (*l == '\n' || *l == ' ') continue;
        char w[32];
        snprintf(w, sizeof w, "%.*s", (int)strcspn(l, " \n"), l);
        size_t k = 0;
        while (k < first_words && strcmp(seen[k], w) != 0) k++;
        if (k == first_words && first_words < 64) strcpy(seen[first_words++], w);
    }
    assert_int_equal(first_words, words);
    free(err);
    free(g);
}

/* Every alias and subscription a statement names is defined above it; $names too. */
static void errors_references(void **state)
{
    (void)state;
    static const err_case cases[] = {
        E(HEAD "produce s p", "2:9: error: no subscription named 's' above (subscribe s ...)"),
        E(HEAD "read s", "2:6: error: no subscription named 's' above (subscribe s ...)"),
        E(HEAD "stop s", "2:6: error: no subscription named 's' above (subscribe s ...)"),
        E(HEAD "expect flush 1 of s\n  PING", "2:19: error: no subscription named 's' above (subscribe s ...)"),
        E(HEAD "expect flushes 1 of s", "2:21: error: no subscription named 's' above (subscribe s ...)"),
        E(HEAD "expect report s", "2:15: error: no subscription named 's' above (subscribe s ...)"),
        E(HEAD "expect pending s none", "2:16: error: no subscription named 's' above (subscribe s ...)"),
        /* Defined below is not defined above. */
        E(HEAD "read s\nsubscribe s list k", "2:6: error: no subscription named 's' above (subscribe s ...)"),
        E(STREAM "subscribe s list k", "4:11: error: a second subscription named 's'"),
        E(STREAM "produce s a as e1\nproduce s b as e1", "5:16: error: a second entry named 'e1'"),
        E(STREAM "e1: ack", "4:1: error: no entry named 'e1' above (produce ... as e1)"),
        E(STREAM "e1: pool PING", "4:1: error: no entry named 'e1' above (produce ... as e1)"),
        E(STREAM "e1: ack\nproduce s a as e1", "4:1: error: no entry named 'e1' above (produce ... as e1)"),
        E(STREAM "expect violation lost e1", "4:23: error: no entry named 'e1' above (produce ... as e1)"),
        E(STREAM "expect delivery e1 count 1", "4:17: error: no entry named 'e1' above (produce ... as e1)"),
        E(STREAM "setup GET $e1", "4:11: error: $e1 names no entry produced above (produce ... as NAME; $$ for a $)"),
        E(STREAM "setup GET \"k $e1\"", "4:14: error: $e1 names no entry produced above (produce ... as NAME; $$ for a $)"),
        E(STREAM "check GET k => \"$nope\"", "4:17: error: $nope names no entry produced above (produce ... as NAME; $$ for a $)"),
        E(STREAM "produce s a as e1\nsetup GET k:$e2.x", "5:13: error: $e2.x names no entry produced above (produce ... as NAME; $$ for a $)"),
        E(STREAM "produce s a as e1\nsetup GET $_x", "5:11: error: $_x names no entry produced above (produce ... as NAME; $$ for a $)"),
        E(STREAM "produce s a as e1\npool GET $E1", "5:10: error: $E1 names no entry produced above (produce ... as NAME; $$ for a $)"),
        E(STREAM "produce s a as e1\ne1: queue INCR $e2", "5:16: error: $e2 names no entry produced above (produce ... as NAME; $$ for a $)"),
        E(STREAM "produce s a as e1\nexpect flush 1 of s\n  INCR $e2",
          "6:8: error: $e2 names no entry produced above (produce ... as NAME; $$ for a $)"),
        E(STREAM "produce s a as e1\nexpect flush 1 of s\n  e1> INCR x\n  e2> INCR y",
          "7:3: error: no entry named 'e2' above"),
        /* $name in a flush line or a check is checked against the entries above. */
        E(STREAM "check GET $e1 => $-1\nproduce s a as e1", "4:11: error: $e1 names no entry produced above (produce ... as NAME; $$ for a $)"),
    };
    run_errors(cases, sizeof cases / sizeof cases[0]);
}

/* A message is one line even when the token it quotes holds a newline (a quoted "\n"):
 * the tool prints it as one line and editors jump to it.  The token is shown with the
 * escapes it was written with. */
static void errors_stay_on_one_line(void **state)
{
    (void)state;
    static const err_case cases[] = {
        E(HEAD "\"a\\nb\" x", "2:1: error: unknown statement 'a\\nb' " STATEMENTS),
        E(HEAD "subscribe s \"str\\ream\" k", "2:13: error: unknown form 'str\\ream' (stream, "
                                              "reliable-list, list or channel)"),
        E(HEAD "advance \"1\\r\"", "2:9: error: advance: a number expected, got '1\\r'"),
    };
    run_errors(cases, sizeof cases / sizeof cases[0]);
}

/* wsc_parse_file: a missing file, a directory, and a file over 64 MB. */
static void errors_files(void **state)
{
    (void)state;
    char *err = NULL;
    assert_null(wsc_parse_file("/nonexistent/dir/x.wsim", &err));
    assert_string_equal(err, "/nonexistent/dir/x.wsim:0:0: error: cannot open: No such file or directory");
    free(err);
    char dir[] = "/tmp/wsc_parse_XXXXXX";
    assert_non_null(mkdtemp(dir));
    assert_null(wsc_parse_file(dir, &err));
    char want[400];
    snprintf(want, sizeof want, "%s:0:0: error: read error", dir);
    assert_string_equal(err, want);
    free(err);
    /* A readable file parses like its text. */
    char path[300];
    snprintf(path, sizeof path, "%s/ok.wsim", dir);
    FILE *f = fopen(path, "wb");
    assert_non_null(f);
    fputs("scenario From a file\nsetup PING\n", f);
    fclose(f);
    wsc_scenario *sc = wsc_parse_file(path, &err);
    assert_non_null(sc);
    assert_string_equal(wsc_name(sc), path);
    assert_string_equal(wsc_title(sc), "From a file");
    wsc_free(sc);
    /* Over 64 MB: refused before it is parsed (a sparse file). */
    snprintf(path, sizeof path, "%s/big.wsim", dir);
    f = fopen(path, "wb");
    assert_non_null(f);
    assert_int_equal(ftruncate(fileno(f), (off_t)(64 << 20) + 1), 0);
    fclose(f);
    assert_null(wsc_parse_file(path, &err));
    snprintf(want, sizeof want, "%s:0:0: error: file over 64 MB", path);
    assert_string_equal(err, want);
    free(err);
    unlink(path);
    snprintf(path, sizeof path, "%s/ok.wsim", dir);
    unlink(path);
    rmdir(dir);
}

/* ----- Malformed input never crashes ------------------------------------------------------- */

/* A file with every statement kind, the base of the truncation and mutation loops. */
static const char FULL[] =
    "scenario Every statement # kept\n"
    "needs fake clock control\n"
    "seed 7\n"
    "start 1700000000000\n"
    "cluster\n"
    "forbid lost\n"
    "forbid doubled # and a comment\n"
    "setup XGROUP CREATE {o}s g $ MKSTREAM\n"
    "setup SET \"a b\\x41\\n\" 'c d' => refused ERR\n"
    "subscribe s stream {o}s group g consumer c1 mode atomic count 2 batch 2 block 5 "
    "delay-queue {o}dq ttl 100 reply stream {o}out in-round warn-crossslot\n"
    "subscribe r stream {o}s group g start 0 reclaim 1000 max-attempts 3 dead-letter {o}dead\n"
    "subscribe l reliable-list jobs processing jobs:p recovery jobs:r 500 ttl 9000 mode direct\n"
    "subscribe k stream {o}s group g read claiming 2000 dead-letter {o}dead\n"
    "subscribe c channel news.* pattern reply channel done buffer 8\n"
    "produce s \"order 1\" header trace t1 header empty \"\" as e1\n"
    "produce s order-2 as e2\n"
    "read s expect e1 e2\n"
    "e1: queue INCR counter:$e1\n"
    "e1: pool INCR receipts => :1\n"
    "e1: publish stream {o}out \"r 1\" header h v\n"
    "e1: reply thanks\n"
    "e1: bind list {o}picks\n"
    "e1: ack\n"
    "e2: retry-after 250 => refused stale\n"
    "pool PING => +PONG\n"
    "advance 300\n"
    "fault window crash-after 2nd XACK\n"
    "fault reader error round-trip 3 command 1 error ERR boom\n"
    "fault window disconnect 3rd XACK\n"
    "crash\n"
    "restart\n"
    "shutdown drains-lost\n"
    "restart\n"
    "shutdown\n"
    "restart\n"
    "read r expect nothing\n"
    "read s expect report\n"
    "stop l => refused\n"
    "check GET counter:$e1 => \"1\"  # a comment?\n"
    "expect flush 1 of s\n"
    "  e1> MULTI\n"
    "  e1> INCR counter:$e1 ?\n"
    "  --\n"
    "  XACK {o}s g $e1 $e2 \"?\"\n"
    "expect flush 2 of s\n"
    "  e1> INCR a\n"
    "  ..\n"
    "  XACK {o}s g $e1\n"
    "expect pending s\n"
    "  e1 consumer c1 deliveries 2\n"
    "  $e2\n"
    "expect delayed s e1\n"
    "expect delayed s\n"
    "  e2 retries 1 due-in 250\n"
    "expect read 1 of s\n"
    "  XREADGROUP GROUP g c1 COUNT 2 BLOCK 5 STREAMS {o}s >\n"
    "  --\n"
    "  ? ?\n"
    "produce c \"m 1\" header h v to news.eu as m1\n"
    "expect round-trips 4 flushes\n"
    "expect flushes 1 of s\n"
    "expect reports 1\n"
    "expect skipped 0\n"
    "expect report s commands 2 settles 1 failed 1 error ERR boom\n"
    "expect pending s e2 $e1\n"
    "expect invariants\n"
    "expect violation doubled e1\n"
    "expect warning CROSSSLOT $$1\n"
    "expect published news none\n"
    "expect delivery e1 count 1\n";

/* The message must be error lines "t.wsim:LINE:COL: error: ...", each with LINE within
 * the file and COL >= 1, in line order, one per line at most, WSC_MAX_ERRORS at most --
 * then one last line "t.wsim: note: stopped after 20 errors". */
static void assert_error_lines(const char *err, const char *text, size_t len)
{
    assert_non_null(err);
    size_t lines = 1;
    for (size_t i = 0; i < len; i++) lines += text[i] == '\n';
    int count = 0, last_line = 0;
    for (const char *m = err; m;) {
        const char *nl = strchr(m, '\n');
        char one[4096];
        snprintf(one, sizeof one, "%.*s", nl ? (int)(nl - m) : (int)strlen(m), m);
        m = nl ? nl + 1 : NULL;
        if (!m && strcmp(one, NAME ": note: stopped after 20 errors") == 0 &&
            count == WSC_MAX_ERRORS)
            break;
        int line = -1, col = -1, off = 0;
        if (sscanf(one, NAME ":%d:%d: error: %n", &line, &col, &off) != 2 || off == 0) {
            print_error("input (%zu bytes):\n%.*s\n", len, (int)len, text);
            fail_msg("malformed message line: %s", one);
        }
        if (line < 1 || (size_t)line > lines || col < 1 || one[off] == '\0' ||
            line <= last_line || ++count > WSC_MAX_ERRORS) {
            print_error("input (%zu bytes):\n%.*s\n", len, (int)len, text);
            fail_msg("message line out of the file (%zu lines), out of order or one too "
                     "many: %s\nin: %s", lines, one, err);
        }
        last_line = line;
    }
}

/* Parses text[0..len) and checks the outcome is a scenario or its error lines. */
static void parse_or_errors(const char *text, size_t len)
{
    char *err = NULL;
    /* A copy of exactly len bytes, so that ASan sees any read past the end. */
    char *copy = malloc(len ? len : 1);
    assert_non_null(copy);
    memcpy(copy, text, len);
    wsc_scenario *sc = wsc_parse(NAME, copy, len, &err);
    if (sc) {
        assert_null(err);
        assert_non_null(wsc_title(sc));
        wsc_free(sc);
    } else {
        assert_error_lines(err, text, len);
        free(err);
    }
    free(copy);
}

/* The base of the truncation and mutation loops parses, every statement kind in it. */
static void the_full_file_parses(void **state)
{
    (void)state;
    wsc_scenario *sc = ok(FULL);
    assert_string_equal(wsc_title(sc), "Every statement # kept");
    assert_string_equal(wsc_needs_fake(sc), "clock control");
    assert_int_equal(wsc_statements(sc), 50); /* a second flush block, a pending block, two delayed */
    assert_int_equal(wsc_forbidden(sc), 0x9);
    wsc_free(sc);
}

/* Every prefix of the full file. */
static void every_truncation(void **state)
{
    (void)state;
    size_t len = sizeof FULL - 1;
    for (size_t n = 0; n <= len; n++) parse_or_errors(FULL, n);
}

/* Bytes the mutations insert: the grammar's own punctuation and keywords' letters. */
static const char INTERESTING[] = "\"'\\#:>$= \t\n\r\0x-?0123456789";

/* Seeded random mutations of the full file: each round applies 1..4 edits (overwrite,
 * insert, delete a range, duplicate a range, swap two bytes). */
static void random_mutations(void **state)
{
    (void)state;
    uint64_t seed = 20240601;
    size_t base = sizeof FULL - 1;
    char *buf = malloc(base * 4 + 64);
    assert_non_null(buf);
    for (int round = 0; round < 4000; round++) {
        size_t len = base;
        memcpy(buf, FULL, base);
        unsigned edits = 1 + splitmix64_below(&seed, 4);
        for (unsigned e = 0; e < edits; e++) {
            unsigned what = splitmix64_below(&seed, 5);
            size_t at = len ? splitmix64_below(&seed, (unsigned)len) : 0;
            char c = splitmix64_below(&seed, 2)
                         ? INTERESTING[splitmix64_below(&seed, sizeof INTERESTING - 1)]
                         : (char)splitmix64_below(&seed, 256);
            if (what == 0 && len) {
                buf[at] = c;
            } else if (what == 1) {
                memmove(buf + at + 1, buf + at, len - at);
                buf[at] = c;
                len++;
            } else if (what == 2 && len) {
                size_t n = 1 + splitmix64_below(&seed, 16);
                if (n > len - at) n = len - at;
                memmove(buf + at, buf + at + n, len - at - n);
                len -= n;
            } else if (what == 3 && len && len < base * 3) {
                size_t n = 1 + splitmix64_below(&seed, 40);
                if (n > len - at) n = len - at;
                memmove(buf + at + n, buf + at, len - at);
                len += n; /* the range [at, at+n) now appears twice */
            } else if (len) {
                size_t other = splitmix64_below(&seed, (unsigned)len);
                char t = buf[at];
                buf[at] = buf[other];
                buf[other] = t;
            }
        }
        parse_or_errors(buf, len);
    }
    free(buf);
}

/* Random lines drawn from the grammar's words: mostly errors, never a crash. */
static void random_word_salad(void **state)
{
    (void)state;
    static const char *const words[] = {
        "scenario", "needs", "fake", "seed", "start", "cluster", "setup", "subscribe",
        "produce", "read", "expect", "e1:", "e1>", "pool", "queue", "advance", "crash",
        "restart", "stop", "fault", "check", "=>", "refused", "flush", "of", "s", "stream",
        "list", "reliable-list", "channel", "group", "g", "header", "as", "e1", "$e1", "$$",
        "1", "0", "3rd", "round-trip", "command", "error", "--", "?", "\"q\"", "'", "\"",
        "#", "window", "reader", "crash-after", "pending", "none", "report", "nothing",
        "round-trips", "violation", "lost", "delivery", "count", "reply", "in-round",
        "mode", "atomic", "batch", "2", "\\x", "ack", "retry-after", "\t", "  "};
    uint64_t seed = 99;
    char buf[4096];
    for (int round = 0; round < 3000; round++) {
        size_t len = (size_t)snprintf(buf, sizeof buf, "%s",
                                      splitmix64_below(&seed, 8) ? "scenario S\nsubscribe s stream s group g\nproduce s x as e1\n" : "");
        unsigned lines = 1 + splitmix64_below(&seed, 6);
        for (unsigned l = 0; l < lines && len < sizeof buf - 200; l++) {
            if (splitmix64_below(&seed, 4) == 0) buf[len++] = ' ';
            unsigned nw = 1 + splitmix64_below(&seed, 7);
            for (unsigned w = 0; w < nw; w++) {
                const char *word = words[splitmix64_below(&seed, sizeof words / sizeof words[0])];
                len += (size_t)snprintf(buf + len, sizeof buf - len, "%s%s", w ? " " : "", word);
            }
            buf[len++] = '\n';
        }
        parse_or_errors(buf, len);
    }
}

/* ----- Size ----------------------------------------------------------------------------- */

/* A scenario of lines statements, each "produce s a", and its text. */
static char *many_lines(size_t lines, size_t *len)
{
    static const char line[] = "produce s a\n";
    size_t head = strlen(STREAM), n = head + lines * (sizeof line - 1);
    char *text = malloc(n + 1);
    assert_non_null(text);
    memcpy(text, STREAM, head);
    for (size_t i = 0; i < lines; i++) memcpy(text + head + i * (sizeof line - 1), line, sizeof line - 1);
    text[n] = '\0';
    *len = n;
    return text;
}

/* wsi_realloc calls made while parsing text. */
static unsigned long reallocs_to_parse(const char *text, size_t len, size_t want_statements)
{
    char *err = NULL;
    unsigned long before = wsi_alloc_reallocs();
    wsc_scenario *sc = wsc_parse(NAME, text, len, &err);
    unsigned long used = wsi_alloc_reallocs() - before;
    if (!sc) fail_msg("%s", err);
    assert_int_equal(wsc_statements(sc), want_statements);
    wsc_free(sc);
    return used;
}

/* The parser's arrays grow geometrically (issue 26: a 100,000-line scenario took over
 * 120 s under the sanitizers, growing its statement array by one each line): the
 * reallocations a file costs grow with the logarithm of its size, not with its lines --
 * counted, not timed. */
static void large_files_cost_logarithmic_reallocations(void **state)
{
    (void)state;
    size_t len;
    char *small = many_lines(1000, &len);
    unsigned long r_small = reallocs_to_parse(small, len, 2 + 1000);
    free(small);
    char *big = many_lines(100000, &len);
    unsigned long r_big = reallocs_to_parse(big, len, 2 + 100000);
    free(big);
    /* one more doubling of each array per factor 2: 100x the lines is 7 doublings */
    if (r_big > r_small + 3 * 7 || r_big > 200)
        fail_msg("1,000 lines cost %lu reallocations, 100,000 lines %lu", r_small, r_big);

    /* one line of 100,000 tokens: its token array doubles, and each token is copied at
     * its own length (not the rest of the line's) */
    size_t ntok = 100000, tl = strlen("produce s ");
    char *line = malloc(strlen(STREAM) + tl + 2 * ntok + 2);
    assert_non_null(line);
    size_t w = (size_t)sprintf(line, "%sproduce s ", STREAM);
    for (size_t i = 0; i < ntok; i++) line[w++] = 'x', line[w++] = ' ';
    line[w++] = '\n';
    line[w] = '\0';
    char *err = NULL;
    unsigned long before = wsi_alloc_reallocs();
    wsc_scenario *sc = wsc_parse(NAME, line, w, &err);
    unsigned long used = wsi_alloc_reallocs() - before;
    wsc_free(sc);
    free(err);
    free(line);
    if (used > 64) fail_msg("a line of 100,000 tokens cost %lu reallocations", used);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(scenario_line),
        cmocka_unit_test(text_is_length_delimited),
        cmocka_unit_test(needs_fake_line),
        cmocka_unit_test(needs_real_line),
        cmocka_unit_test(seed_start_cluster),
        cmocka_unit_test(forbid_line),
        cmocka_unit_test(comments_blank_lines_crlf),
        cmocka_unit_test(quoted_tokens_and_escapes),
        cmocka_unit_test(setup_statement),
        cmocka_unit_test(check_statement),
        cmocka_unit_test(pool_statement),
        cmocka_unit_test(subscribe_forms),
        cmocka_unit_test(subscribe_option_group_consumer),
        cmocka_unit_test(subscribe_option_mode),
        cmocka_unit_test(subscribe_option_count_batch_block),
        cmocka_unit_test(subscribe_option_reclaim),
        cmocka_unit_test(subscribe_option_delay_queue_ttl),
        cmocka_unit_test(subscribe_option_processing_recovery),
        cmocka_unit_test(subscribe_option_max_attempts_dead_letter),
        cmocka_unit_test(subscribe_option_claiming_group_start),
        cmocka_unit_test(subscribe_option_pattern),
        cmocka_unit_test(subscribe_option_reply),
        cmocka_unit_test(subscribe_option_warn_crossslot),
        cmocka_unit_test(produce_statement),
        cmocka_unit_test(read_statement),
        cmocka_unit_test(action_queue),
        cmocka_unit_test(action_pool),
        cmocka_unit_test(action_publish),
        cmocka_unit_test(action_reply_bind),
        cmocka_unit_test(action_outcomes),
        cmocka_unit_test(advance_crash_restart_stop),
        cmocka_unit_test(fault_statement),
        cmocka_unit_test(fault_by_position),
        cmocka_unit_test(expect_flush_block),
        cmocka_unit_test(expect_read_block),
        cmocka_unit_test(expect_round_trips),
        cmocka_unit_test(expect_flushes_reports),
        cmocka_unit_test(expect_report),
        cmocka_unit_test(expect_pending),
        cmocka_unit_test(expect_pending_block),
        cmocka_unit_test(expect_delayed),
        cmocka_unit_test(expect_flush_pipelines),
        cmocka_unit_test(expected_reply_forms),
        cmocka_unit_test(expect_invariants_violation),
        cmocka_unit_test(expect_warning_delivery),
        cmocka_unit_test(repeated_options_and_empty_values_are_freed),
        cmocka_unit_test(expect_published_line),
        cmocka_unit_test(dollar_references),
        cmocka_unit_test(unchecked_references),
        cmocka_unit_test(errors_tokens),
        cmocka_unit_test(errors_numbers),
        cmocka_unit_test(errors_file_level),
        cmocka_unit_test(errors_world),
        cmocka_unit_test(errors_subscribe),
        cmocka_unit_test(errors_produce_read),
        cmocka_unit_test(process_statements),
        cmocka_unit_test(errors_process),
        cmocka_unit_test(errors_actions),
        cmocka_unit_test(errors_fault),
        cmocka_unit_test(errors_expect),
        cmocka_unit_test(errors_replies),
        cmocka_unit_test(errors_blocks),
        cmocka_unit_test(errors_references),
        cmocka_unit_test(errors_unindented_block_lines),
        cmocka_unit_test(errors_every_one_up_to_a_limit),
        cmocka_unit_test(recovery_subscriptions_inherit_the_mode),
        cmocka_unit_test(the_grammar_is_the_table),
        cmocka_unit_test(errors_stay_on_one_line),
        cmocka_unit_test(errors_files),
        cmocka_unit_test(the_full_file_parses),
        cmocka_unit_test(every_truncation),
        cmocka_unit_test(random_mutations),
        cmocka_unit_test(random_word_salad),
        cmocka_unit_test(large_files_cost_logarithmic_reallocations),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
