#!/usr/bin/env bash
# The crash explorer on the tutorial's three scenarios (docs/fuzzing.md, "Tutorial"):
# direct mode and the plain window must show doubled effects (wsim explore exits 1: the
# scenarios forbid them), the atomic window none (exit 0); a declared retry loses its
# entry at exactly two points, between the runtime's XACK and its copy.
set -uo pipefail
wsim="$1" dir="$2"
status=0
for mode in direct window atomic; do
    out=$("$wsim" explore "$dir/crash_between_write_and_ack_$mode.wsim")
    rc=$?
    summary=$(printf '%s\n' "$out" | grep -E '^[0-9]+ fine, ')
    echo "$mode: $summary (exit $rc)"
    if [[ $mode == atomic ]]; then
        [[ $rc == 0 && $summary == *" 0 doubled, 0 lost, 0 split, 0 leaked"* ]] || status=1
    else
        [[ $rc == 1 && $summary != *" 0 doubled,"* ]] || status=1
    fi
done
out=$("$wsim" explore "$dir/retry_copy_after_the_ack_declared.wsim")
rc=$?
summary=$(printf '%s\n' "$out" | grep -E '^[0-9]+ fine, ')
echo "declared retry: $summary (exit $rc)"
[[ $rc == 0 && $summary == *" 0 doubled, 2 lost,"* ]] || status=1
exit $status
