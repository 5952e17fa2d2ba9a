/* commands_md.c -- fakeredis-commands: the fake's command coverage table as Markdown.
 *
 *   fakeredis-commands                  print the table on stdout
 *   fakeredis-commands --update FILE    rewrite the generated section of FILE in place
 *   fakeredis-commands --check FILE     exit 1 if FILE's section differs from the table
 *
 * The table comes from the library's own command table (fr_command_count/fr_command_at),
 * so docs/fake_redis.md cannot drift from what the fake implements; tests/unit/test_docs.c
 * runs the --check comparison under ctest.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "command_table_md.h"

static int usage(FILE *f)
{
    fprintf(f, "usage: fakeredis-commands [--update FILE | --check FILE]\n"
               "  (no option)     print the command table as Markdown\n"
               "  --update FILE   replace the lines between\n"
               "                  %s\n"
               "                  and %s in FILE\n"
               "  --check FILE    exit 1 if that section is not up to date\n",
            CMDTABLE_BEGIN, CMDTABLE_END);
    return f == stderr ? 2 : 0;
}

/* Writes len bytes to path through a temporary file renamed over it, so a failure never
 * leaves a half-written document.  Returns 0, or -1 after printing why. */
static int write_file_atomically(const char *path, const char *data, size_t len)
{
    size_t n = strlen(path) + sizeof ".tmp";
    char *tmp = malloc(n);
    if (!tmp) {
        fprintf(stderr, "fakeredis-commands: out of memory\n");
        return -1;
    }
    snprintf(tmp, n, "%s.tmp", path);
    FILE *f = fopen(tmp, "wb");
    int ok = f && fwrite(data, 1, len, f) == len;
    if (f && fclose(f) != 0)
        ok = 0;
    if (!ok || rename(tmp, path) != 0) {
        fprintf(stderr, "fakeredis-commands: cannot write %s: %s\n", path, strerror(errno));
        remove(tmp);
        free(tmp);
        return -1;
    }
    free(tmp);
    return 0;
}

/* --update (check == 0) or --check (check != 0) on path.  Returns the exit status. */
static int update_or_check(const char *path, int check)
{
    size_t tlen, dlen, olen;
    char *table = cmdtable_markdown(&tlen);
    if (!table) {
        fprintf(stderr, "fakeredis-commands: out of memory\n");
        return 1;
    }
    char *doc = cmdtable_read_file(path, &dlen);
    if (!doc) {
        fprintf(stderr, "fakeredis-commands: cannot read %s: %s\n", path, strerror(errno));
        free(table);
        return 1;
    }
    size_t begin, end;
    if (cmdtable_find_section(doc, dlen, &begin, &end) != 0) {
        fprintf(stderr,
                "fakeredis-commands: %s has no generated section: put the two lines\n"
                "  %s\n  %s\n"
                "each alone on its line, once, where the table belongs\n",
                path, CMDTABLE_BEGIN, CMDTABLE_END);
        free(doc);
        free(table);
        return 1;
    }
    int same = end - begin == tlen && memcmp(doc + begin, table, tlen) == 0;
    int status = 0;
    if (check) {
        if (!same) {
            fprintf(stderr, "fakeredis-commands: the command table in %s is out of date; "
                            "regenerate it with --update\n", path);
            status = 1;
        }
    } else if (same) {
        printf("%s: command table already up to date\n", path);
    } else {
        char *out = cmdtable_replace_section(doc, dlen, table, tlen, &olen);
        if (!out) {
            fprintf(stderr, "fakeredis-commands: out of memory\n");
            status = 1;
        } else {
            status = write_file_atomically(path, out, olen) == 0 ? 0 : 1;
            if (status == 0)
                printf("%s: command table updated\n", path);
            free(out);
        }
    }
    free(doc);
    free(table);
    return status;
}

int main(int argc, char **argv)
{
    if (argc == 1) {
        size_t len;
        char *table = cmdtable_markdown(&len);
        if (!table) {
            fprintf(stderr, "fakeredis-commands: out of memory\n");
            return 1;
        }
        fwrite(table, 1, len, stdout);
        free(table);
        return 0;
    }
    if (argc == 2 && (!strcmp(argv[1], "-h") || !strcmp(argv[1], "--help")))
        return usage(stdout);
    if (argc == 3 && !strcmp(argv[1], "--update"))
        return update_or_check(argv[2], 0);
    if (argc == 3 && !strcmp(argv[1], "--check"))
        return update_or_check(argv[2], 1);
    return usage(stderr);
}
