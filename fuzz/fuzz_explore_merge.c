/* fuzz_explore_merge.c -- `wsim explore --merge` on arbitrary shard files (libFuzzer
 * target).
 *
 * A shard file is JSON another machine wrote (docs/wsim-explore.md, "Shards across
 * machines"): untrusted bytes.  The input is split at NUL bytes into up to four shard
 * texts (wsim never writes a NUL in one), named shard1.json ...; they go to
 * wsim_explore_merge_texts (scenario/tool/explore_cmd.c, compiled in), as the tool's
 * --merge gives it the files it read.
 *
 * Checked: no crash, no sanitizer report, no leak; the exit status is 0, 1 or 2; a shard
 * that claims huge counts (2^64 shards, 10^18 points) is refused without taking memory
 * for them (libFuzzer's -rss_limit_mb catches one that does).  The seeds
 * (fuzz/corpus/fuzz_explore_merge/) are real shards of `wsim explore --shard I/N --format
 * json`, alone and in twos.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "explore_cmd.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerInitialize(int *argc, char ***argv);

#define MAX_SHARDS 4

/* The report goes to standard output: away with it (the exit status is what is checked;
 * the one-line refusals stay on stderr for whoever replays an input). */
int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc;
    (void)argv;
    if (!freopen("/dev/null", "w", stdout)) abort();
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static const char *const names[MAX_SHARDS] = {"shard1.json", "shard2.json", "shard3.json",
                                                   "shard4.json"};
    const char *texts[MAX_SHARDS];
    size_t lens[MAX_SHARDS];
    size_t n = 0, start = 0;
    for (size_t i = 0; i <= size && n < MAX_SHARDS; i++) {
        if (i == size || data[i] == 0) {
            texts[n] = (const char *)data + start;
            lens[n] = i - start;
            n++;
            start = i + 1;
        }
    }
    int rc = wsim_explore_merge_texts(n, names, texts, lens, (int)(size & 1));
    fflush(stdout);
    if (rc < 0 || rc > 2) {
        fprintf(stderr, "fuzz_explore_merge: exit status %d\n", rc);
        abort();
    }
    return 0;
}
