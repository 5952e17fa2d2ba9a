#!/usr/bin/env bash
# The crash explorer's two paths give one report: for every scenario file under the
# directories given, `wsim explore --replay` (the scenario replayed up to each point),
# `--jobs 1` and `--jobs 3` (one run, a fork at each point, one or three workers at once)
# must print the same bytes (--verbose: every violation's sentence too) and exit alike,
# and the snapshot path must reach every point itself (nothing replayed behind the scenes).
#
#   explore_paths.sh WSIM DIR...
set -uo pipefail
wsim="$1"
shift
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
status=0 files=0 points=0
while IFS= read -r f; do
    "$wsim" explore --replay --verbose "$f" >"$tmp/replay" 2>&1
    rc_replay=$?
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
        if [[ -s $tmp/err ]]; then
            echo "STDERR: $f --jobs $jobs:"
            cat "$tmp/err"
            status=1
        fi
    done
done < <(find "$@" -name '*.wsim' | sort)
echo "$files scenario files, $points crash points: replay and snapshots $([[ $status == 0 ]] && echo agree || echo DIFFER)"
[[ $files -gt 100 ]] || { echo "too few scenario files found ($files)"; status=1; }
exit $status
