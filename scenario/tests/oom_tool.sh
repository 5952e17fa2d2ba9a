#!/usr/bin/env bash
# The wsim tool when memory runs out (docs/architecture.md, "Running out of memory"):
# `wsim run` and `wsim diagram --format svg` on one scenario with every allocation of
# common/'s family from the n-th on failing (WSIM_TEST_ALLOC_FAIL=n), n = 1, 2, ... until
# the command succeeds.  Each failing n must end with a non-zero status and exactly one
# line on stderr, one of the rule's: what the scenario library reported
# ("FILE:0:0: error: out of memory" from the parser, "wsim: FILE: out of memory" from a
# run), or an abort's "wsim: out of memory in libwsim" (the engine) or "... in wsim"
# (the tool's own) -- nothing on stdout, no other text, no crash of another kind.
set -uo pipefail
wsim="$1" file="$2"
status=0
for cmd in "run" "diagram --format svg"; do
    declare -A seen=()
    n=1
    while :; do
        out=$(WSIM_TEST_ALLOC_FAIL=$n "$wsim" $cmd "$file" 2>/tmp/oom_tool.$$.err)
        rc=$?
        err=$(cat /tmp/oom_tool.$$.err)
        if [[ $rc == 0 ]]; then
            # the first n the command does not reach: its normal output
            if [[ $cmd == run && $out != PASS* ]] || [[ $cmd != run && $out != "<?xml"* ]]; then
                echo "$cmd, n = $n: exit 0 without its output"; status=1
            fi
            break
        fi
        lines=$(printf '%s' "$err" | grep -c '')
        case "$err" in
            "$file:0:0: error: out of memory") kind="parse" ;;
            "wsim: $file: out of memory") kind="run" ;;
            "wsim: out of memory in libwsim") kind="engine abort" ;;
            "wsim: out of memory in wsim") kind="tool abort" ;;
            *) kind="" ;;
        esac
        if [[ -z $kind || $lines != 1 || -n $out ]]; then
            echo "$cmd, n = $n: exit $rc, stdout '${out:0:200}', stderr:"
            printf '%s\n' "$err"
            status=1
            break
        fi
        seen[$kind]=$(( ${seen[$kind]:-0} + 1 ))
        n=$((n + 1))
        if (( n > 100000 )); then echo "$cmd: no end"; status=1; break; fi
    done
    summary=""
    for k in "parse" "run" "engine abort" "tool abort"; do
        summary+="$k ${seen[$k]:-0}, "
    done
    echo "wsim $cmd: n = 1..$((n - 1)) failed: ${summary%, }; n = $n completes"
    # each way the rule allows that this command can take must have been seen
    [[ ${seen[parse]:-0} -gt 0 && ${seen[run]:-0} -gt 0 && ${seen["engine abort"]:-0} -gt 0 ]] ||
        { echo "$cmd: an outcome never came"; status=1; }
    unset seen
done
rm -f /tmp/oom_tool.$$.err
exit $status
