#!/usr/bin/env bash
# The crash explorer's two paths give one report: for every scenario file under the
# directories given, `wsim explore --replay` (the scenario replayed up to each point),
# `--jobs 1` and `--jobs 3` (one run, a fork at each point, one or three workers at once)
# must print the same bytes (--verbose: every violation's sentence too) and exit alike,
# and the snapshot path must reach every point itself (nothing replayed behind the scenes).
# The recovery bounded to what each crash left (the default where the explorer can tell it
# changes no verdict, docs/wsim-explore.md) must print the same bytes as the full recovery
# (WSIM_EXPLORE_RECOVERY=full: every subscription reads until nothing comes), verdicts and
# sentences alike, on every file.
#
#   explore_paths.sh WSIM DIR...
set -uo pipefail
wsim="$1"
shift
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
status=0 files=0 points=0 bounded=0
while IFS= read -r f; do
    "$wsim" explore --replay --verbose "$f" >"$tmp/replay" 2>"$tmp/replay_err"
    rc_replay=$?
    grep -q 'each recovery is bounded' "$tmp/replay_err" && bounded=$((bounded + 1))
    grep -v 'each recovery is bounded' "$tmp/replay_err" >>"$tmp/replay"
    [[ $rc_replay == 2 ]] && continue # malformed on purpose: nothing explores
    files=$((files + 1))
    points=$((points + $(sed -n 's/^\([0-9]*\) crash points$/\1/p' "$tmp/replay" | head -1) + 0))
    for jobs in 1 3; do
        "$wsim" explore --jobs "$jobs" --verbose "$f" >"$tmp/snap" 2>"$tmp/err"
        rc=$?
        if ! cmp -s "$tmp/replay" "$tmp/snap" || [[ $rc != "$rc_replay" ]]; then
            echo "DIFFERENT: $f --jobs $jobs (exit $rc, replay $rc_replay)"
            diff "$tmp/replay" "$tmp/snap" | head -20
            status=1
        fi
        grep -v 'each recovery is bounded' "$tmp/err" >"$tmp/err2"
        mv "$tmp/err2" "$tmp/err"
        if [[ -s $tmp/err ]]; then
            echo "STDERR: $f --jobs $jobs:"
            cat "$tmp/err"
            status=1
        fi
    done
    WSIM_EXPLORE_RECOVERY=full "$wsim" explore --jobs 3 --verbose "$f" >"$tmp/full" 2>/dev/null
    rc=$?
    "$wsim" explore --jobs 3 --verbose "$f" >"$tmp/snap" 2>/dev/null
    if ! cmp -s "$tmp/full" "$tmp/snap" || [[ $rc != "$rc_replay" ]]; then
        echo "DIFFERENT: $f: the bounded recovery against the full one (exit $rc, bounded $rc_replay)"
        diff "$tmp/full" "$tmp/snap" | head -20
        status=1
    fi
done < <(find "$@" -name '*.wsim' | sort)
echo "$files scenario files, $points crash points: replay and snapshots $([[ $status == 0 ]] && echo agree || echo DIFFER)"
echo "$bounded files with the recovery bounded to what each crash left, the same report as the full recovery"
[[ $files -gt 100 ]] || { echo "too few scenario files found ($files)"; status=1; }
exit $status
