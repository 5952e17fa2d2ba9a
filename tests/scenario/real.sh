#!/usr/bin/env bash
# real.sh WSIM DIR ACTUAL -- the golden tests that need a real server: starts a throwaway
# redis-server on a unix socket in a temporary directory, then, from DIR (tests/scenario):
#   wsim run --format tap, a pass and a needs-fake scenario  -> golden/real.tap, exit 0
#   wsim run, the same and an ERROR                          -> golden/real.txt, exit 1
#   wsim diff, a pass and a needs-fake scenario              -> golden/real_diff.txt, exit 0
#   wsim diff, a scenario that fails the same on both sides  -> golden/real_diff_fail.txt,
#                                                               exit 1 ("1 a difference or
#                                                               a failure", wsim diff --help)
#   wsim diff, a set and a big hash in the final keyspace     -> golden/real_diff_unordered.txt,
#                                                               exit 0 (hash order differs)
#   wsim diff, a scenario the two sides answer differently    -> golden/real_diff_differ.txt,
#                                                               exit 1, the first difference
# Every check runs; the exit status is 1 if any failed.  ACTUAL: where golden.cmake leaves
# what differed.
set -euo pipefail
wsim="$1" dir="$2" actual="$3"
tmp="$(mktemp -d)"
cleanup() {
    [[ -f "$tmp/redis.pid" ]] && kill "$(cat "$tmp/redis.pid")" 2>/dev/null || true
    rm -rf "$tmp"
}
trap cleanup EXIT
redis-server --port 0 --unixsocket "$tmp/r.sock" --unixsocketperm 700 --save '' \
    --appendonly no --daemonize yes --pidfile "$tmp/redis.pid" --dir "$tmp" \
    --logfile "$tmp/redis.log" >/dev/null
for _ in $(seq 100); do [[ -S "$tmp/r.sock" ]] && break; sleep 0.05; done
[[ -S "$tmp/r.sock" ]] || { echo "redis-server did not start:" >&2; cat "$tmp/redis.log" >&2; exit 1; }
status=0
golden() { # STATUS OUT ARGS...
    local want="$1" out="$2"
    shift 2
    cmake -DWSIM="$wsim" -DWORKDIR="$dir" -DARGS="$*" -DSTATUS="$want" -DOUT="$out" \
        -DACTUAL="$actual" -P "$dir/golden.cmake" || status=1
}
be="--backend unix://$tmp/r.sock"
golden 0 golden/real.tap run --format tap $be cases/pass.wsim cases/skip.wsim
golden 1 golden/real.txt run $be cases/pass.wsim cases/skip.wsim cases/error.wsim
golden 0 golden/real_diff.txt diff $be cases/pass.wsim cases/skip.wsim
golden 1 golden/real_diff_fail.txt diff $be cases/fail.wsim
golden 0 golden/real_diff_unordered.txt diff $be portable/unordered_final_state.wsim
golden 1 golden/real_diff_differ.txt diff $be cases/differ.wsim cases/pass.wsim
exit $status
