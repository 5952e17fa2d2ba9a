#!/usr/bin/env bash
# wsim explore's workers, shards and bad input (docs/wsim-explore.md):
#   - a worker that dies is named with the crash point it was exploring, and the
#     exploration fails (exit 1) without printing a table, with one worker or several;
#     likewise a replica (--jobs 2's second explorer) that dies;
#   - three shards' JSON merged (in any order) print the unsharded report byte for byte,
#     with the same exit status, with and without --verbose;
#   - bad input is one line on stderr and exit 2: --jobs 0, --shard 3/2 and friends, and
#     --merge of shards of different scenarios, versions, splits, or an incomplete set.
#
#   explore_cli.sh WSIM SCENARIOS_DIR TESTS_SCENARIO_DIR
set -uo pipefail
wsim="$1" lib="$2" tests="$3"
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
status=0
fail() {
    echo "FAIL: $*"
    status=1
}

# ----- a worker that dies
echo "a killed worker:"
for jobs in 1 2; do
    WSIM_EXPLORE_TEST_KILL=3 "$wsim" explore --jobs "$jobs" "$tests/explore/direct_doubles.wsim" \
        >"$tmp/out" 2>"$tmp/err"
    rc=$?
    [[ $rc == 1 ]] || fail "killed worker, --jobs $jobs: exit $rc, expected 1"
    grep -q 'the worker exploring crash point 3 (window #2, before 1/1) was killed by signal 9' \
        "$tmp/err" || fail "killed worker, --jobs $jobs: stderr does not name point 3: $(cat "$tmp/err")"
    [[ $(wc -l <"$tmp/err") == 1 ]] || fail "killed worker, --jobs $jobs: more than one line on stderr"
    [[ ! -s $tmp/out ]] || fail "killed worker, --jobs $jobs: a table was printed: $(head -3 "$tmp/out")"
    echo "  --jobs $jobs: exit $rc: $(cat "$tmp/err")"
done
# a replica (with --jobs 2, the second explorer, whose share is every second point) that
# dies itself is named by the point of its share it was about to explore
for point in 2 4; do
    WSIM_EXPLORE_TEST_KILL_REPLICA=$point "$wsim" explore --jobs 2 \
        "$tests/explore/direct_doubles.wsim" >"$tmp/out" 2>"$tmp/err"
    rc=$?
    [[ $rc == 1 && ! -s $tmp/out && $(wc -l <"$tmp/err") == 1 ]] &&
        grep -q "the worker exploring crash point $point (window #[0-9], replies lost) was killed by signal 9" \
            "$tmp/err" || fail "killed replica at point $point: exit $rc: $(cat "$tmp/err" "$tmp/out")"
    echo "  a killed replica, point $point: exit $rc: $(cat "$tmp/err")"
done
WSIM_EXPLORE_TEST_KILL=5 "$wsim" explore --format json "$tests/explore/direct_doubles.wsim" \
    >"$tmp/out" 2>"$tmp/err"
rc=$?
[[ $rc == 1 && ! -s $tmp/out ]] || fail "killed worker, json: exit $rc, output $(wc -c <"$tmp/out") bytes"
# the same point without the hook: explored, so the hook is what killed it
"$wsim" explore --jobs 2 "$tests/explore/direct_doubles.wsim" >"$tmp/out" 2>"$tmp/err"
[[ $? == 1 && ! -s $tmp/err ]] && grep -q '^8 fine, 2 doubled' "$tmp/out" ||
    fail "the unharmed run: $(cat "$tmp/err" "$tmp/out")"

# ----- shards merged == one machine
echo "shards:"
for f in "$lib/tutorial/crash_between_write_and_ack_window.wsim" \
    "$lib/framework/addresses_its_copies/list_pipeline.wsim" \
    "$tests/explore/failed_lrem_strands.wsim"; do
    for verbose in "" --verbose; do
        "$wsim" explore --jobs 2 $verbose "$f" >"$tmp/one"
        rc_one=$?
        for i in 1 2 3; do
            "$wsim" explore --shard "$i/3" --format json "$f" >"$tmp/shard$i.json" ||
                fail "$f: shard $i/3 exited $?"
        done
        "$wsim" explore --merge $verbose "$tmp/shard3.json" "$tmp/shard1.json" "$tmp/shard2.json" \
            >"$tmp/merged"
        rc_merged=$?
        if cmp -s "$tmp/one" "$tmp/merged" && [[ $rc_one == "$rc_merged" ]]; then
            echo "  $f $verbose: merged 3 shards == unsharded ($(grep -c . "$tmp/one") lines, exit $rc_one)"
        else
            fail "$f $verbose: merged shards differ (exit $rc_merged, unsharded $rc_one)"
            diff "$tmp/one" "$tmp/merged" | head
        fi
    done
    # a shard's own text report holds its points only
    n_all=$(grep -c ', before \|, replies lost' "$tmp/one")
    n_sum=0
    for i in 1 2 3; do
        n=$("$wsim" explore --shard "$i/3" "$f" | grep -c ', before \|, replies lost')
        n_sum=$((n_sum + n))
    done
    [[ $n_sum == "$n_all" ]] || fail "$f: the shards' tables hold $n_sum points, not $n_all"
done

# ----- bad input: one line, exit 2
f="$tests/explore/direct_doubles.wsim"
g="$tests/explore/atomic_no_double.wsim"
"$wsim" explore --shard 1/2 --format json "$f" >"$tmp/a1.json"
"$wsim" explore --shard 2/2 --format json "$f" >"$tmp/a2.json"
"$wsim" explore --shard 2/2 --format json "$g" >"$tmp/b2.json"
"$wsim" explore --shard 2/3 --format json "$f" >"$tmp/c2.json"
"$wsim" explore --shard 2/2 --seed 7 --format json "$f" >"$tmp/s2.json"
sed 's/"wsim_version": "[^"]*"/"wsim_version": "0.0.0-other"/' "$tmp/a2.json" >"$tmp/v2.json"
sed 's/"scenario_hash": "[^"]*"/"scenario_hash": "0000000000000000"/' "$tmp/a2.json" >"$tmp/h2.json"
head -c 300 "$tmp/a2.json" >"$tmp/cut.json"
# hostile shards (issue 26): a split of 2^64-1 shards (its bookkeeping wrapped to 0 bytes
# and was written past), 10^18 points (allocated before anything was checked), a number
# past 64 bits (wrapped), bytes after the result
sed 's/"shards": 2,/"shards": 18446744073709551615,/' "$tmp/a2.json" >"$tmp/huge_split.json"
sed 's/"points": [0-9]*,/"points": 1000000000000000000,/' "$tmp/a1.json" >"$tmp/huge_points1.json"
sed 's/"points": [0-9]*,/"points": 1000000000000000000,/' "$tmp/a2.json" >"$tmp/huge_points2.json"
sed 's/"points": [0-9]*,/"points": 99999999999999999999999,/' "$tmp/a2.json" >"$tmp/overflow.json"
{ cat "$tmp/a2.json"; echo '{}'; } >"$tmp/trailing.json"
"$wsim" explore --merge "$tmp/a1.json" "$tmp/a2.json" >/dev/null || [[ $? == 1 ]] ||
    fail "the good merge failed"
bad_input() {
    local what="$1"
    shift
    "$wsim" explore "$@" >"$tmp/out" 2>"$tmp/err"
    local rc=$?
    if [[ $rc == 2 && $(wc -l <"$tmp/err") == 1 && ! -s $tmp/out ]]; then
        echo "  $what: $(cat "$tmp/err")"
    else
        fail "$what: exit $rc, $(wc -l <"$tmp/err") lines on stderr, $(wc -c <"$tmp/out") bytes out"
        cat "$tmp/err"
    fi
}
echo "bad input:"
bad_input "--jobs 0" --jobs 0 "$f"
bad_input "--jobs -1" --jobs -1 "$f"
bad_input "--jobs x" --jobs x "$f"
bad_input "--shard 3/2" --shard 3/2 "$f"
bad_input "--shard 0/2" --shard 0/2 "$f"
bad_input "--shard 2" --shard 2 "$f"
bad_input "--shard 1/0" --shard 1/0 "$f"
bad_input "--format xml" --format xml "$f"
bad_input "merge: different scenarios" --merge "$tmp/a1.json" "$tmp/b2.json"
bad_input "merge: different versions" --merge "$tmp/a1.json" "$tmp/v2.json"
bad_input "merge: a changed scenario file" --merge "$tmp/a1.json" "$tmp/h2.json"
bad_input "merge: different seeds" --merge "$tmp/a1.json" "$tmp/s2.json"
bad_input "merge: different splits" --merge "$tmp/a1.json" "$tmp/c2.json"
bad_input "merge: a missing shard" --merge "$tmp/a1.json"
bad_input "merge: a shard twice" --merge "$tmp/a1.json" "$tmp/a1.json" "$tmp/a2.json"
bad_input "merge: a cut file" --merge "$tmp/a1.json" "$tmp/cut.json"
bad_input "merge: no file" --merge
bad_input "merge: a scenario file" --merge "$f"
bad_input "merge: 2^64-1 shards" --merge "$tmp/huge_split.json"
bad_input "merge: 10^18 points" --merge "$tmp/huge_points1.json" "$tmp/huge_points2.json"
bad_input "merge: a number past 64 bits" --merge "$tmp/a1.json" "$tmp/overflow.json"
bad_input "merge: bytes after the result" --merge "$tmp/a1.json" "$tmp/trailing.json"
bad_input "merge: an endless file" --merge /dev/zero
exit $status
