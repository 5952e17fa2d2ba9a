/* driver.c -- replays fuzz inputs through a libFuzzer target without libFuzzer.
 *
 * Linked with one fuzz target (fuzz_commands.c, fuzz_resp.c, ...) and built with any C
 * compiler, it makes each target's corpus a regression test: ctest runs
 * `fuzz_<target>_replay fuzz/corpus/<target>` (label fuzz-regress) in the gcc build, where
 * libFuzzer does not exist.  A target reports a bug by crashing (abort(), a sanitizer
 * report), so the driver only has to feed every input and say which one it is feeding:
 * when a replay dies, the last "replay:" line on stderr names the file.
 *
 * Usage: fuzz_<target>_replay PATH...   PATH is a file or a directory, whose regular
 * files (not starting with '.') are replayed in name order so runs are reproducible.
 * Exits 0 when every input ran, 2 on a usage or I/O error.
 */
#include <dirent.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "wsi_io.h"
#include "wsi_alloc.h"

/* The target's entry point, as libFuzzer calls it. */
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
/* Optional, as in libFuzzer: a target that defines it is initialised once before the
 * first input (weak, so targets without it link). */
int LLVMFuzzerInitialize(int *argc, char ***argv) __attribute__((weak));

/* Runs one file through the target.  0, or -1 when it cannot be read. */
static int replay_file(const char *path)
{
    size_t size;
    uint8_t *data = (uint8_t *)wsi_read_file(path, 0, &size); /* never NULL when read */
    if (!data) {
        fprintf(stderr, "replay: cannot read %s: %s\n", path, strerror(errno));
        return -1;
    }
    /* Named before it runs: if the target aborts, this is the last line printed. */
    fprintf(stderr, "replay: %s (%zu bytes)\n", path, size);
    LLVMFuzzerTestOneInput(data, size);
    free(data);
    return 0;
}

/* qsort's comparison for the directory's names. */
static int cmp_names(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Replays every regular file of a directory in name order; returns how many ran, or -1
 * on an I/O error. */
static long replay_dir(const char *dir)
{
    DIR *d = opendir(dir);
    if (!d) {
        fprintf(stderr, "replay: cannot open %s: %s\n", dir, strerror(errno));
        return -1;
    }
    char **names = NULL;
    size_t n = 0, cap = 0;
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        if (e->d_name[0] == '.')
            continue;
        if (n == cap) {
            cap = cap ? cap * 2 : 64;
            names = wsi_xrealloc(names, cap * sizeof(*names));
        }
        size_t len = strlen(dir) + strlen(e->d_name) + 2;
        names[n] = wsi_xmalloc(len);
        snprintf(names[n], len, "%s/%s", dir, e->d_name);
        n++;
    }
    closedir(d);
    qsort(names, n, sizeof(*names), cmp_names);
    long ran = 0;
    for (size_t i = 0; i < n; i++) {
        struct stat st;
        if (stat(names[i], &st) == 0 && S_ISREG(st.st_mode)) {
            if (replay_file(names[i]) < 0)
                ran = -1;
            else if (ran >= 0)
                ran++;
        }
        free(names[i]);
    }
    free(names);
    return ran;
}

int main(int argc, char **argv)
{
    int first = 1;
    if (first >= argc) {
        fprintf(stderr, "usage: %s FILE|DIR...\n", argv[0]);
        return 2;
    }
    if (LLVMFuzzerInitialize)
        LLVMFuzzerInitialize(&argc, &argv);
    long total = 0;
    int failed = 0;
    for (int i = first; i < argc; i++) {
        struct stat st;
        if (stat(argv[i], &st) != 0) {
            fprintf(stderr, "replay: %s: %s\n", argv[i], strerror(errno));
            failed = 1;
            continue;
        }
        if (S_ISDIR(st.st_mode)) {
            long ran = replay_dir(argv[i]);
            if (ran < 0)
                failed = 1;
            else
                total += ran;
        } else if (replay_file(argv[i]) < 0) {
            failed = 1;
        } else {
            total++;
        }
    }
    printf("%s: %ld inputs replayed%s\n", argv[0], total, failed ? ", some unreadable" : "");
    return failed ? 2 : 0;
}
