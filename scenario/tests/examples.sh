#!/usr/bin/env bash
# The example consumers of examples/ (Node.js with ioredis from npm), as examples/README.md
# says to run them: each of examples/*.wsim passes `wsim run` on the fake wsim serves and,
# through --backend, on a real redis-server (behind the recording proxy wsim puts there); `wsim explore` finds what each design
# promises -- no point of the MULTI/EXEC consumer loses or doubles anything, the
# write-then-ack one doubles an entry at the two points between its write and its XACK,
# the ack-then-write one loses it there -- the same with two workers and in two shards
# merged; and a point's fault line, put into the file, reproduces it with `wsim run`.
#
#   examples.sh WSIM SOURCE_DIR NODE_CACHE_DIR
#
# Installs examples/node's dependencies (ioredis 5) with npm into NODE_CACHE_DIR once;
# needs node and npm (./run.sh installs them) and the npm registry.
set -uo pipefail
wsim="$1" src="$2" cache="$3"
. "$(dirname "${BASH_SOURCE[0]}")/check_lib.sh"
command -v node >/dev/null || { echo "examples.sh: node is not installed"; exit 1; }
command -v npm >/dev/null || { echo "examples.sh: npm is not installed"; exit 1; }
mkdir -p "$cache"
if [[ ! -f $cache/node_modules/ioredis/package.json ]]; then
    echo "installing examples/node's dependencies into $cache"
    cp "$src/examples/node/package.json" "$cache/"
    (cd "$cache" && timeout 300 npm install --no-audit --no-fund --loglevel=error >/dev/null) ||
        { echo "examples.sh: npm install failed"; exit 1; }
fi
export NODE_PATH="$cache/node_modules"
cd "$src" || exit 1

run() { # what FILES...: wsim run [options] FILES passes
    local what="$1"
    shift
    "$wsim" run "$@" >"$tmp/out" 2>&1
    local rc=$?
    sed 's/^/  /' "$tmp/out"
    [[ $rc == 0 ]] || bad "$what: wsim run exit $rc"
}
echo "on the fake:"
run fake examples/*.wsim
echo "on redis-server:"
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
redis-server --port "$port" --bind 127.0.0.1 --save '' --appendonly no --dir "$tmp" \
    --daemonize yes --pidfile "$tmp/redis.pid" >/dev/null
trap 'kill $(cat "$tmp/redis.pid" 2>/dev/null) 2>/dev/null; rm -rf "$tmp"' EXIT
for _ in $(seq 100); do redis-cli -p "$port" PING >/dev/null 2>&1 && break; sleep 0.05; done
# (through the recording proxy wsim puts in front of it; ack_then_write.wsim expects the
# traffic checker's settle-before-writes, which it finds in the fake's recording and not
# yet in the proxy's, which has no wait lines: /work/wt/requests-to-traffic.md d.)
run real --backend "redis://127.0.0.1:$port" examples/atomic.wsim examples/write_then_ack.wsim

# explore: the points that break what each file forbids (doubled, lost)
forbidden() { grep '(forbidden)' "$1" | awk '{print $1, $2, $3}' | sort | tr '\n' ';'; }
explore() { # FILE EXIT POINTS...: exit status and the forbidden points, --jobs 1 and 2
    local f="$1" want="$2"
    shift 2
    local expected
    expected=$(printf '%s\n' "$@" | sed '/^$/d' | sort | tr '\n' ';')
    for jobs in 1 2; do
        "$wsim" explore --jobs "$jobs" --verbose "examples/$f" >"$tmp/x$jobs" 2>&1
        local rc=$?
        [[ $rc == "$want" ]] || bad "explore --jobs $jobs $f: exit $rc, expected $want"
        [[ $(forbidden "$tmp/x$jobs") == "$expected" ]] ||
            bad "explore --jobs $jobs $f: forbidden points '$(forbidden "$tmp/x$jobs")', expected '$expected'"
    done
    sed -n '/^[0-9]* fine/p' "$tmp/x1" | sed "s|^|  $f: |"
}
echo "explore:"
explore atomic.wsim 0
explore write_then_ack.wsim 1 "crash-after 1st INCRBY" "crash-before 1st XACK" \
    "crash-after 2nd INCRBY" "crash-before 3rd XACK"
grep -q 'doubled (effects): entry o1 (1700000000000-0, ack): its write INCRBY balance:alice 100 took effect 2 times' \
    "$tmp/x1" || bad "explore write_then_ack.wsim: no sentence for o1's doubled write"
grep -q 'to replay a point, put its fault line before `start billing`: fault billing crash-after 1st INCRBY' \
    "$tmp/x1" || bad "explore write_then_ack.wsim: no replay line"
explore ack_then_write.wsim 1 "crash-after 1st XACK" "crash-before 1st INCRBY" \
    "crash-after 3rd XACK" "crash-before 2nd INCRBY"

# the replay line, put into the file, reproduces the doubled write with wsim run
sed 's/^start billing$/fault billing crash-after 1st INCRBY\nstart billing/' \
    examples/write_then_ack.wsim >examples/.replay_test.wsim
"$wsim" run examples/.replay_test.wsim >"$tmp/replay" 2>&1
rc=$?
rm -f examples/.replay_test.wsim
[[ $rc == 1 ]] && grep -q 'got:      "200"' "$tmp/replay" ||
    bad "the replayed point: exit $rc: $(cat "$tmp/replay")"
echo "  the replayed point: exit $rc, $(grep -m1 'got:' "$tmp/replay" | sed 's/^ *//')"

# two shards merged: the same forbidden points
for i in 1 2; do
    "$wsim" explore --shard "$i/2" --format json examples/ack_then_write.wsim >"$tmp/s$i.json"
done
"$wsim" explore --merge "$tmp/s2.json" "$tmp/s1.json" >"$tmp/merged" 2>&1
rc=$?
[[ $rc == 1 && $(forbidden "$tmp/merged") == $(forbidden "$tmp/x1") ]] ||
    bad "explore --merge of two shards: exit $rc, forbidden '$(forbidden "$tmp/merged")'"
echo "  two shards merged: exit $rc, $(grep -c '(forbidden)' "$tmp/merged") forbidden points"
# drawn outcomes (wsim outcomes): a finding for write-then-ack, its replay line, its
# shrunk scenario failing wsim run; none for MULTI/EXEC
"$wsim" outcomes --runs 10 -o "$tmp/shrunk.wsim" examples/write_then_ack.wsim >"$tmp/o" 2>&1
rc=$?
[[ $rc == 1 ]] || bad "outcomes write_then_ack: exit $rc: $(cat "$tmp/o")"
replay=$(sed -n 's/^replay it: //p' "$tmp/o")
first=$(head -1 "$tmp/o" | sed 's/^[^:]*: run [0-9]* of //')
if [[ -n $replay ]]; then
    # shellcheck disable=SC2086
    again=$("$wsim" ${replay#wsim } --no-shrink 2>&1 | head -1 | sed 's/^[^:]*: run [0-9]* of //')
    [[ $again == "$first" ]] || bad "outcomes: the replay line does not replay it: '$again' vs '$first'"
else
    bad "outcomes: no replay line: $(cat "$tmp/o")"
fi
"$wsim" run "$tmp/shrunk.wsim" >"$tmp/r" 2>&1
rc=$?
[[ $rc == 1 ]] && grep -q 'doubled (effects)' "$tmp/r" ||
    bad "outcomes: the shrunk scenario does not fail so: exit $rc: $(cat "$tmp/r")"
echo "  outcomes: $(head -1 "$tmp/o" | cut -c1-110)..."
echo "  $(grep '^shrunk' "$tmp/o")"
"$wsim" outcomes --runs 6 examples/atomic.wsim >"$tmp/o" 2>&1
rc=$?
[[ $rc == 0 ]] || bad "outcomes atomic: exit $rc: $(cat "$tmp/o")"
echo "  $(cat "$tmp/o")"

# one page: well-formed, the points in it
if command -v xmllint >/dev/null; then
    "$wsim" explore --format html examples/ack_then_write.wsim >"$tmp/page.html"
    xmllint --noout "$tmp/page.html" || bad "explore --format html: not well-formed"
    [[ $(grep -c 'crash-after 1st XACK' "$tmp/page.html") -ge 1 ]] ||
        bad "explore --format html: the points are not in the page"
fi
exit $fail
