/* test_docs.c -- the docs must describe the library as built.
 *
 * docs/fake_redis.md carries the command coverage table between the markers of
 * command_table_md.h.  This test renders the table from the library's command table with
 * the same function fakeredis-commands uses and fails, printing the command that
 * regenerates it, when the document's copy differs.  It also checks the generator itself:
 * every command appears once, sorted by group then name, and the section replacement keeps
 * the rest of a document byte for byte.
 */
#include <ctype.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "command_table_md.h"
#include "fakeredis.h"

#ifndef WSIM_SOURCE_DIR
#error "WSIM_SOURCE_DIR must name the source tree (set in tests/CMakeLists.txt)"
#endif

#define DOC_PATH WSIM_SOURCE_DIR "/docs/fake_redis.md"

/* Counts the lines of s that start with prefix. */
static size_t count_lines_starting(const char *s, const char *prefix)
{
    size_t n = 0, plen = strlen(prefix);
    for (const char *p = s; p && *p; p = strchr(p, '\n'), p = p ? p + 1 : NULL)
        if (strncmp(p, prefix, plen) == 0)
            n++;
    return n;
}

/* Every row of the library's table is one table row, in group-then-name order. */
static void test_markdown_has_every_command_in_order(void **state)
{
    (void)state;
    size_t len;
    char *md = cmdtable_markdown(&len);
    assert_non_null(md);
    assert_int_equal(strlen(md), len);
    size_t n = fr_command_count();
    /* Header, separator, then one "| `NAME` |" row per command. */
    assert_int_equal(count_lines_starting(md, "| `"), n);
    assert_int_equal(count_lines_starting(md, "|"), n + 2);

    for (size_t i = 0; i < n; i++) {
        const fr_command_info *row = fr_command_at(i);
        assert_non_null(row);
        assert_non_null(row->name);
        assert_non_null(row->group);
        assert_null(strchr(row->group, '|'));
        assert_null(strchr(row->flags ? row->flags : "", '|'));
    }
    /* Walk the rendered rows: (group, name) must never go backwards. */
    char last_group[64] = "", last_name[128] = "";
    for (const char *p = strstr(md, "\n| `"); p; p = strstr(p + 1, "\n| `")) {
        char name[128], group[64];
        assert_int_equal(sscanf(p, "\n| `%127[^`]` | %63[^ |]", name, group), 2);
        /* Back to the table's spelling ("XGROUP CREATE" -> "xgroup|create"), whose byte
         * order the sort used. */
        for (char *q = name; *q; q++)
            *q = *q == ' ' ? '|' : (char)tolower((unsigned char)*q);
        int g = strcmp(last_group, group);
        assert_true(g < 0 || (g == 0 && strcmp(last_name, name) < 0));
        snprintf(last_group, sizeof last_group, "%s", group);
        snprintf(last_name, sizeof last_name, "%s", name);
    }
    free(md);
}

/* Replacing the section rewrites only the lines between the markers. */
static void test_replace_section_keeps_the_rest(void **state)
{
    (void)state;
    const char *doc = "# Title\n\nintro\n" CMDTABLE_BEGIN "\nold 1\nold 2\n" CMDTABLE_END
                      "\n\nafter\n";
    size_t begin, end, outlen;
    assert_int_equal(cmdtable_find_section(doc, strlen(doc), &begin, &end), 0);
    assert_int_equal(end - begin, strlen("old 1\nold 2\n"));
    assert_memory_equal(doc + begin, "old 1\nold 2\n", end - begin);

    char *out = cmdtable_replace_section(doc, strlen(doc), "new\n", 4, &outlen);
    assert_non_null(out);
    assert_string_equal(out, "# Title\n\nintro\n" CMDTABLE_BEGIN "\nnew\n" CMDTABLE_END
                             "\n\nafter\n");
    assert_int_equal(outlen, strlen(out));
    free(out);

    /* An empty section can be filled, too. */
    const char *empty = CMDTABLE_BEGIN "\n" CMDTABLE_END "\n";
    out = cmdtable_replace_section(empty, strlen(empty), "x\n", 2, &outlen);
    assert_non_null(out);
    assert_string_equal(out, CMDTABLE_BEGIN "\nx\n" CMDTABLE_END "\n");
    free(out);
}

/* Missing, misplaced or repeated markers are refused rather than guessed at. */
static void test_bad_markers_are_refused(void **state)
{
    (void)state;
    size_t b, e, outlen;
    const char *bad[] = {
        "no markers at all\n",
        CMDTABLE_BEGIN "\nno end\n",
        CMDTABLE_END "\n" CMDTABLE_BEGIN "\n",
        "text " CMDTABLE_BEGIN "\n" CMDTABLE_END "\n",
        CMDTABLE_BEGIN "\n" CMDTABLE_END "\n" CMDTABLE_BEGIN "\n" CMDTABLE_END "\n",
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        assert_int_equal(cmdtable_find_section(bad[i], strlen(bad[i]), &b, &e), -1);
        assert_null(cmdtable_replace_section(bad[i], strlen(bad[i]), "x", 1, &outlen));
    }
}

/* Prints the first line where the document's table and the generated one differ. */
static void print_first_difference(const char *have, size_t hlen, const char *want,
                                   size_t wlen)
{
    size_t i = 0, line = 1, line_start = 0;
    while (i < hlen && i < wlen && have[i] == want[i]) {
        if (have[i] == '\n') {
            line++;
            line_start = i + 1;
        }
        i++;
    }
    const char *h = have + line_start, *w = want + line_start;
    int hl = (int)strcspn(h, "\n"), wl = (int)strcspn(w, "\n");
    if (line_start >= hlen)
        hl = 0;
    if (line_start >= wlen)
        wl = 0;
    print_error("first difference at line %zu of the generated section:\n"
                "  docs:      %.*s\n  generated: %.*s\n",
                line, hl, h, wl, w);
}

/* docs/fake_redis.md's table is exactly what the library's table renders to. */
static void test_docs_table_is_up_to_date(void **state)
{
    (void)state;
    size_t dlen, tlen, begin, end;
    char *doc = cmdtable_read_file(DOC_PATH, &dlen);
    if (!doc)
        fail_msg("cannot read %s", DOC_PATH);
    if (cmdtable_find_section(doc, dlen, &begin, &end) != 0) {
        free(doc);
        fail_msg("%s has no command table section: it needs the lines\n  %s\n  %s\n"
                 "then run: %s", DOC_PATH, CMDTABLE_BEGIN, CMDTABLE_END, CMDTABLE_REGEN_HINT);
    }
    char *table = cmdtable_markdown(&tlen);
    assert_non_null(table);
    int same = end - begin == tlen && memcmp(doc + begin, table, tlen) == 0;
    if (!same) {
        print_first_difference(doc + begin, end - begin, table, tlen);
        free(doc);
        free(table);
        fail_msg("the command table in docs/fake_redis.md differs from the library's.\n"
                 "Regenerate it from the source tree with:\n"
                 "  cmake --build --preset debug --target fakeredis-commands && %s",
                 CMDTABLE_REGEN_HINT);
    }
    free(doc);
    free(table);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_markdown_has_every_command_in_order),
        cmocka_unit_test(test_replace_section_keeps_the_rest),
        cmocka_unit_test(test_bad_markers_are_refused),
        cmocka_unit_test(test_docs_table_is_up_to_date),
    };
    return cmocka_run_group_tests_name("docs", tests, NULL, NULL);
}
