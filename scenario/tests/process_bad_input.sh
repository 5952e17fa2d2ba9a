#!/usr/bin/env bash
# Consumer processes that misbehave (docs/consumer.md, "When the process misbehaves"):
# one that never connects, exits at once, hangs, floods the server, ignores SIGTERM or
# cannot be started.  Each must end `wsim run` with exit 2 and an error naming the cause,
# with no process of it left behind, no run directory left in TMPDIR and nothing written
# where wsim was started.  Then wsim itself killed (SIGKILL, SIGTERM) while its consumer
# runs: the watchdog ends the consumer and removes the run's directory.
#
#   process_bad_input.sh WSIM SOURCE_DIR
set -uo pipefail
wsim="$1" src="$2"
. "$(dirname "${BASH_SOURCE[0]}")/check_lib.sh"
bad_dir="$src/tests/scenario/process/bad"
export TMPDIR="$tmp/tmpdir"
mkdir -p "$TMPDIR" "$tmp/cwd"
echo "the user's file" >"$tmp/cwd/keep.txt"
ln -s "$src/tests" "$tmp/cwd/tests" # (the files name their consumer by a relative path)

# the marker every bad consumer's command line holds
left() { pgrep -f process/bad/behave.sh; }

expect_error() { # FILE TEXT...: exit 2, the error says each TEXT
    local f="$1"
    shift
    (cd "$tmp/cwd" && "$wsim" run "$bad_dir/$f") >"$tmp/out" 2>"$tmp/err"
    local rc=$?
    [[ $rc == 2 ]] || bad "$f: exit $rc, expected 2: $(cat "$tmp/out" "$tmp/err")"
    for text in "$@"; do
        grep -qF -- "$text" "$tmp/out" || bad "$f: the report does not say '$text': $(cat "$tmp/out")"
    done
    local pids
    pids=$(left)
    [[ -z $pids ]] || { bad "$f: processes left behind: $pids"; pkill -9 -f process/bad/behave.sh; }
    [[ -z $(ls -A "$TMPDIR") ]] || bad "$f: left in TMPDIR: $(ls -A "$TMPDIR")"
    [[ $(ls -A "$tmp/cwd" | tr '\n' ' ') == "keep.txt tests " &&
        $(cat "$tmp/cwd/keep.txt") == "the user's file" ]] ||
        bad "$f: the directory wsim ran in changed: $(ls -A "$tmp/cwd")"
    echo "  $f: exit $rc: $(grep -m1 'error:' "$tmp/out" | sed 's/^ *//')"
}

echo "bad consumers:"
expect_error never_connects.wsim "c did not settle within 1500 ms: orders: 1 unread" \
    "it never connected to the server (REDIS_URL=redis://127.0.0.1:"
expect_error exits_at_once.wsim "c exited with status 3 before it settled: orders: 1 unread" \
    "the end of c's output:" "    giving up"
expect_error hangs.wsim "c did not settle within 1500 ms: orders: 1 unread" \
    "it has no connection open" "    PONG"
expect_error floods.wsim "c did not settle within 1500 ms" "it floods the server:"
expect_error ignores_sigterm.wsim \
    "c ignored SIGTERM: still running 500 ms after it, so it was killed (SIGKILL)"
expect_error cannot_start.wsim "cannot start 'wsim-no-such-consumer': No such file or directory"

# wsim killed while its consumer runs: the watchdog ends the consumer and the directory
echo "wsim killed mid-run:"
for sig in KILL TERM INT; do
    (cd "$tmp/cwd" && exec "$wsim" run "$bad_dir/killed_mid_run.wsim") >/dev/null 2>&1 &
    pid=$!
    for _ in $(seq 200); do [[ -n $(left) ]] && break; sleep 0.02; done
    [[ -n $(left) ]] || bad "SIG$sig: the consumer never started"
    kill -s "$sig" "$pid"
    wait "$pid" 2>/dev/null
    for _ in $(seq 150); do [[ -z $(left) && -z $(ls -A "$TMPDIR") ]] && break; sleep 0.02; done
    pids=$(left)
    [[ -z $pids ]] || { bad "SIG$sig: the consumer outlived wsim: $pids"; pkill -9 -f process/bad/behave.sh; }
    [[ -z $(ls -A "$TMPDIR") ]] || bad "SIG$sig: the run's directory outlived wsim: $(ls -A "$TMPDIR")"
    echo "  SIG$sig: consumer ended, directory removed"
done
exit $fail
