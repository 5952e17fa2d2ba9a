#!/usr/bin/env bash
# Runs Redis's own Tcl test suite against fakeredis-server and, for the
# comparison, against a real redis-server, one fresh server per file, and
# prints a table per file and "N passed, M failed" per server.
#
# Not part of CI: it needs a checkout of redis/redis (the tag whose
# behaviour the fake follows, 7.0.15). See docs/server.md, "Redis's test
# suite".
#
#   tests/redis-suite/run.sh REDIS_CHECKOUT [options] [unit/FILE ...]
#
#   --server fake|real|both   which servers to run (default both)
#   --fake PATH               fakeredis-server (default build/release/...)
#   --real PATH               redis-server (default: the one on PATH)
#   --logs DIR                keep each run's output there (default: a
#                             temporary directory, printed at the end)
#   --timeout SEC             one test's limit (default 120; a hung test
#                             fails its file, it does not stall the run)
#   --list-failed             after the table, list every test that did
#                             not pass, per file and server
#   --unskip TAG              run the tests tagged TAG that are skipped by
#                             default (needs:config-resetstat, ...);
#                             needs:debug also starts both servers with
#                             --enable-debug-command yes;
#                             external:skip runs a file's servers that the
#                             suite keeps from external servers (unit/info),
#                             from a copy of the tests with that tag removed
#   --unlocked                --unskip each of needs:debug, needs:reset,
#                             needs:config-resetstat, needs:pfdebug,
#                             needs:config-maxmemory and needs:save
#   --skiptest NAME           skip the test NAME on both servers (repeatable;
#                             the suite's own --skiptest), e.g. a test that
#                             needs ACL SETUSER
#   --baseport N              the suite's own --baseport (its test server
#                             listens at N-32): another port range when
#                             several runs share the machine
#
# With no files, the fifteen files issue 13 names. Tests needing what an
# external server cannot give (DEBUG, replication, SAVE, ...) are left out
# by tag, the same for both servers.
set -euo pipefail

here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../.." && pwd)"

die() { echo "run.sh: $*" >&2; exit 2; }

[[ $# -ge 1 ]] || die "usage: run.sh REDIS_CHECKOUT [--server fake|real|both] [unit/FILE ...]"
checkout="$(cd "$1" 2>/dev/null && pwd)" || die "no such directory: $1"
shift
[[ -f "$checkout/tests/test_helper.tcl" ]] ||
    die "$checkout has no tests/test_helper.tcl (a redis/redis checkout?)"

servers="fake real"
fake_bin="$root/build/release/server/fakeredis-server"
real_bin="$(command -v redis-server || true)"
logs=""
list_failed=0
test_timeout=120
files=()
unskip=()
skips=()
while [[ $# -gt 0 ]]; do
    case "$1" in
    --server)
        case "${2:-}" in
        fake | real) servers="$2" ;;
        both) servers="fake real" ;;
        *) die "--server takes fake, real or both" ;;
        esac
        shift 2 ;;
    --fake) fake_bin="$2"; shift 2 ;;
    --real) real_bin="$2"; shift 2 ;;
    --logs) logs="$2"; shift 2 ;;
    --list-failed) list_failed=1; shift ;;
    --unskip) unskip+=("$2"); shift 2 ;;
    --unlocked)
        # the tags issue 25 unlocks, all at once (both servers with the same options)
        unskip+=(needs:debug needs:reset needs:config-resetstat needs:pfdebug
            needs:config-maxmemory needs:save)
        shift ;;
    --timeout) test_timeout="$2"; shift 2 ;;
    --skiptest) skips+=(--skiptest "$2"); shift 2 ;;
    --baseport) skips+=(--baseport "$2"); shift 2 ;;
    unit/*) files+=("$1"); shift ;;
    *) die "unknown argument: $1" ;;
    esac
done
[[ ${#files[@]} -gt 0 ]] || files=(
    unit/type/stream-cgroups unit/type/stream unit/type/list unit/type/hash
    unit/type/incr unit/multi unit/pubsub unit/type/zset
    unit/type/set unit/type/string unit/keyspace unit/expire
    unit/info-command unit/protocol unit/scan)
for s in $servers; do
    case $s in
    fake) [[ -x "$fake_bin" ]] || die "no fakeredis-server at $fake_bin (build the release preset)" ;;
    real) [[ -x "$real_bin" ]] || die "no redis-server (apt-get install redis-server)" ;;
    esac
done
command -v tclsh >/dev/null || die "no tclsh (apt-get install tcl)"

if [[ -z "$logs" ]]; then logs="$(mktemp -d /tmp/redis-suite.XXXXXX)"; fi
mkdir -p "$logs"
logs="$(cd "$logs" && pwd)"

# What an external server cannot do, for either server: these tags are
# skipped by the suite itself.
tags="-needs:debug -needs:repl -needs:config-maxmemory -needs:config-resetstat"
tags+=" -needs:save -needs:reset -needs:pfdebug"
debug_args=()
for t in "${unskip[@]}"; do
    tags="${tags//-$t/}"
    # DEBUG is refused unless the server starts with it enabled (both servers alike)
    [[ $t == needs:debug ]] && debug_args=(--enable-debug-command yes)
    if [[ $t == external:skip ]]; then
        # a private copy of the tests without the tag (the checkout stays as it is)
        mkdir -p "$logs/.checkout"
        rm -rf "$logs/.checkout/tests"
        cp -r "$checkout/tests" "$logs/.checkout/tests"
        find "$logs/.checkout/tests/unit" -name '*.tcl' -exec sed -i 's/"external:skip"//g; s/external:skip//g' {} +
        checkout="$logs/.checkout"
    fi
done

server_pid=""
stop_server() {
    if [[ -n "$server_pid" ]]; then
        kill "$server_pid" 2>/dev/null || true
        wait "$server_pid" 2>/dev/null || true
        server_pid=""
    fi
}
trap stop_server EXIT

free_port() {
    python3 - <<'EOF' 2>/dev/null || echo $((20000 + RANDOM % 20000))
import socket
s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])
EOF
}

# start_server KIND LOGFILE: starts a fresh server, sets $port.
start_server() {
    local kind=$1 log=$2
    if [[ $kind == fake ]]; then
        local fifo="$logs/.ready.$$"
        rm -f "$fifo"
        mkfifo "$fifo"
        local fdir="$logs/.fake.$$.$RANDOM"
        mkdir -p "$fdir"
        "$fake_bin" --port 0 --dir "$fdir" ${debug_args[@]+"${debug_args[@]}"} >"$fifo" 2>>"$log" &
        server_pid=$!
        local fd line
        exec {fd}<"$fifo"
        rm -f "$fifo"
        port=""
        while read -r -u "$fd" line; do
            if [[ $line =~ ^fakeredis-server\ listening\ on\ 127\.0\.0\.1:([0-9]+)$ ]]; then
                port=${BASH_REMATCH[1]}
            fi
            [[ $line == "fakeredis-server ready"* ]] && break
        done
        # keep draining stdout so the server never blocks on it
        cat <&"$fd" >/dev/null &
        exec {fd}<&-
    else
        port=$(free_port)
        local dir="$logs/.real.$port"
        mkdir -p "$dir"
        "$real_bin" --port "$port" --bind 127.0.0.1 --save "" --appendonly no \
            --dir "$dir" ${debug_args[@]+"${debug_args[@]}"} >>"$log" 2>&1 &
        server_pid=$!
        local i
        for i in $(seq 100); do
            if (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null; then break; fi
            sleep 0.05
        done
    fi
    [[ -n "$port" ]] || die "$kind server did not start (see $log)"
}

# run_file KIND FILE: one fresh server, one file; prints "passed failed aborted".
run_file() {
    local kind=$1 file=$2
    local log="$logs/$kind.${file//\//_}.log"
    : >"$log"
    start_server "$kind" "$log"
    (cd "$checkout" &&
        timeout 1800 tclsh tests/test_helper.tcl --host 127.0.0.1 --port "$port" \
            --single "$file" --tags "$tags" --timeout "$test_timeout" --clients 1 ${skips[@]+"${skips[@]}"} \
            >>"$log" 2>&1) || true
    stop_server
    # the suite colours its tags; count on plain text
    sed -i 's/\x1b\[[0-9;]*m//g' "$log"
    local passed failed aborted=no
    passed=$(grep -c '^\[ok\]' "$log" || true)
    failed=$(grep -c '^\[err\]' "$log" || true)
    if grep -q '^\[exception\]' "$log" || ! grep -q 'All tests passed\|tests failed' "$log"; then
        aborted=yes
    fi
    echo "$passed $failed $aborted"
}

declare -A result
for file in "${files[@]}"; do
    for s in $servers; do
        result[$s,$file]="$(run_file "$s" "$file")"
    done
done

# The table.
header="| file |"
rule="|---|"
for s in $servers; do header+=" $s passed | $s failed |"; rule+="---:|---:|"; done
[[ $servers == "fake real" ]] && { header+=" fake/real |"; rule+="---:|"; }
echo "$header"
echo "$rule"
declare -A total_pass total_fail
for s in $servers; do total_pass[$s]=0; total_fail[$s]=0; done
for file in "${files[@]}"; do
    row="| $file |"
    for s in $servers; do
        read -r p f a <<<"${result[$s,$file]}"
        total_pass[$s]=$((total_pass[$s] + p))
        total_fail[$s]=$((total_fail[$s] + f))
        mark=""
        [[ $a == yes ]] && mark=" (aborted)"
        row+=" $p$mark | $f |"
    done
    if [[ $servers == "fake real" ]]; then
        read -r fp _ _ <<<"${result[fake,$file]}"
        read -r rp _ _ <<<"${result[real,$file]}"
        if [[ $rp -gt 0 ]]; then
            row+=" $(awk -v a="$fp" -v b="$rp" 'BEGIN{printf "%.1f%%", 100*a/b}') |"
        else
            row+=" - |"
        fi
    fi
    echo "$row"
done
echo
for s in $servers; do
    echo "$s: ${total_pass[$s]} passed, ${total_fail[$s]} failed"
done
if [[ $list_failed == 1 ]]; then
    echo
    for file in "${files[@]}"; do
        for s in $servers; do
            log="$logs/$s.${file//\//_}.log"
            grep -E '^\[(err|exception)\]' "$log" | sed "s|^|$s $file: |" || true
        done
    done
fi
echo "logs: $logs"
