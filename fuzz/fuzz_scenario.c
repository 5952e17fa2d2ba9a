/* fuzz_scenario.c -- the scenario parser and runner on arbitrary text (libFuzzer target).
 *
 * The input is a scenario file.  Checked:
 * - wsc_parse gives a scenario, or NULL with its error lines, each
 *   "fuzz.wsim:LINE:COL: error: MESSAGE" whose LINE is a line of the input and whose COL
 *   is at most one past that line's end ("fuzz.wsim:0:0: error: out of memory" aside), in
 *   line order, one per line, WSC_MAX_ERRORS at most (then the line "fuzz.wsim: note:
 *   stopped after 20 errors"), never both and never neither;
 * - a scenario of at most MAX_RUN_STATEMENTS statements runs on the fake without a crash
 *   or a sanitizer report, twice with the same result (status, counts, trace hash,
 *   report and final state): the runner is deterministic;
 * - a scenario with `forbid` lines (the ones meant for `wsim explore`) of at most
 *   MAX_EXPLORE_STATEMENTS statements is also explored, crash point by crash point;
 * - nothing leaks.
 *
 * With FUZZ_VERBOSE set in the environment it prints the parse error or the run's status.
 *
 * Scenarios whose raw commands cost what an argument says (SETRANGE, SETBIT or BITFIELD
 * far out, big negative RANDMEMBER counts, LCS) are parsed but not run: their cost is
 * Redis's own.
 */
#include <ctype.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "wsc.h"
#include "wsi_alloc.h"
#include "wsi_buf.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define FILE_NAME "fuzz.wsim"
#define MAX_RUN_STATEMENTS 200   /* longer scenarios are only parsed */
#define MAX_EXPLORE_STATEMENTS 80 /* one run per crash point: keep them short */

/* Fails the input: libFuzzer keeps it as a crash, the replay driver dies. */
static void fail(const char *what, const char *detail)
{
    fprintf(stderr, "fuzz_scenario: %s%s%s\n", what, detail ? ": " : "", detail ? detail : "");
    abort();
}

/* Non-zero when text[0..len) contains word, ignoring case. */
static int contains_nocase(const char *text, size_t len, const char *word)
{
    size_t wl = strlen(word);
    for (size_t i = 0; i + wl <= len; i++)
        if (strncasecmp(text + i, word, wl) == 0)
            return 1;
    return 0;
}

/* Checks that err is one well-formed error line pointing into the input; returns its
 * line (0 for out of memory). */
static long check_error_line(const char *err, const char *text, size_t len)
{
    const char *prefix = FILE_NAME ":";
    if (strncmp(err, prefix, strlen(prefix)) != 0)
        fail("an error that does not start with the file name", err);
    const char *p = err + strlen(prefix);
    char *end;
    long line = strtol(p, &end, 10);
    if (end == p || *end != ':')
        fail("an error without a line number", err);
    p = end + 1;
    long col = strtol(p, &end, 10);
    if (end == p || strncmp(end, ": error: ", 9) != 0 || end[9] == '\0')
        fail("an error without a column or an 'error:' message", err);
    if (line == 0 && col == 0)
        return 0; /* out of memory, or a file that cannot be read */
    /* Lines as the parser counts them: '\n'-separated, a final newline opens none. */
    size_t nlines = 0, at = 0, line_len = 0;
    while (at < len || nlines == 0) {
        size_t eol = at;
        while (eol < len && text[eol] != '\n')
            eol++;
        nlines++;
        if ((long)nlines == line)
            line_len = eol - at;
        at = eol + 1;
        if (eol >= len)
            break;
    }
    if (line < 1 || (size_t)line > nlines)
        fail("an error on a line the input does not have", err);
    if (col < 1 || (size_t)col > line_len + 1)
        fail("an error column past the end of its line", err);
    return line;
}

/* Checks err: its lines are well-formed errors (check_error_line), in line order, one per
 * line, WSC_MAX_ERRORS at most, and then maybe the note that says the parser stopped. */
static void check_error(const char *err, const char *text, size_t len)
{
    long last = 0;
    int count = 0;
    for (const char *l = err; l;) {
        const char *nl = strchr(l, '\n');
        size_t n = nl ? (size_t)(nl - l) : strlen(l);
        char *one = wsi_xmalloc(n + 1);
        memcpy(one, l, n);
        one[n] = '\0';
        l = nl ? nl + 1 : NULL;
        if (!l && count == WSC_MAX_ERRORS &&
            strcmp(one, FILE_NAME ": note: stopped after 20 errors") == 0) {
            free(one);
            break;
        }
        long line = check_error_line(one, text, len);
        free(one);
        if (++count > WSC_MAX_ERRORS)
            fail("more errors than WSC_MAX_ERRORS", err);
        if (line <= last && !(line == 0 && count == 1 && !l))
            fail("errors out of line order, or two on one line", err);
        last = line;
    }
}

/* Runs the scenario on the fake; returns the result (free with wsc_result_free). */
static void run_once(const wsc_scenario *sc, wsc_result *res)
{
    wsc_options opt;
    memset(&opt, 0, sizeof(opt));
    if (wsc_run(sc, &opt, res) != 0)
        fail("wsc_run: out of memory", NULL);
}

/* Compares two optional strings. */
static int same_str(const char *a, const char *b)
{
    if (a == NULL || b == NULL)
        return a == b;
    return strcmp(a, b) == 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const char *text = (const char *)data;
    char *err = NULL;
    wsc_scenario *sc = wsc_parse(FILE_NAME, text, size, &err);
    int verbose = getenv("FUZZ_VERBOSE") != NULL;
    if (verbose)
        fprintf(stderr, "  %s\n", sc ? "parsed" : err ? err : "(no error)");
    if (sc == NULL) {
        if (err == NULL)
            fail("wsc_parse returned neither a scenario nor an error", NULL);
        check_error(err, text, size);
        free(err);
        return 0;
    }
    if (err != NULL)
        fail("wsc_parse returned a scenario and an error", err);
    if (wsc_title(sc) == NULL || wsc_name(sc) == NULL || strcmp(wsc_name(sc), FILE_NAME) != 0)
        fail("a parsed scenario without its title or file name", NULL);

    size_t nst = wsc_statements(sc);
    int costly = contains_nocase(text, size, "SETRANGE") ||
                 contains_nocase(text, size, "SETBIT") ||
                 contains_nocase(text, size, "BITFIELD") ||
                 contains_nocase(text, size, "RANDMEMBER") ||
                 contains_nocase(text, size, "RANDFIELD") || contains_nocase(text, size, "LCS");
    if (nst <= MAX_RUN_STATEMENTS && !costly) {
        wsc_result a, b;
        run_once(sc, &a);
        run_once(sc, &b);
        if (a.status != b.status || a.checks != b.checks || a.failures != b.failures ||
            a.trace_hash != b.trace_hash || !same_str(a.report, b.report) ||
            !same_str(a.state, b.state) || !same_str(a.trace, b.trace))
            fail("two runs of the same scenario differ", a.report ? a.report : "");
        if (a.status != WSC_PASS && a.status != WSC_FAIL && a.status != WSC_SKIP &&
            a.status != WSC_ERROR)
            fail("wsc_run gave an unknown status", NULL);
        if ((a.status == WSC_FAIL || a.status == WSC_ERROR) && a.report == NULL)
            fail("a failed run without a report", NULL);
        if (verbose)
            fprintf(stderr, "  ran: status %d, %zu checks, %zu failures\n", (int)a.status,
                    a.checks, a.failures);
        wsc_result_free(&a);
        wsc_result_free(&b);

        if (wsc_forbidden(sc) != 0 && nst <= MAX_EXPLORE_STATEMENTS) {
            wsc_options opt;
            memset(&opt, 0, sizeof(opt));
            wsc_exploration ex;
            if (wsc_explore(sc, &opt, &ex) != 0)
                fail("wsc_explore: out of memory", NULL);
            if (verbose)
                fprintf(stderr, "  explored: %zu crash points, %zu fine\n", ex.npoints, ex.fine);
            size_t sum = ex.fine + ex.doubled + ex.lost + ex.split + ex.leaked + ex.stranded + ex.other;
            if (ex.error == NULL && sum != ex.npoints)
                fail("the explorer's verdict counts do not add up to its crash points", NULL);
            wsc_exploration_free(&ex);
        }
    }
    wsc_free(sc);
    return 0;
}
