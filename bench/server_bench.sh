#!/usr/bin/env bash
# bench/server_bench.sh -- redis-benchmark against fakeredis-server and redis-server in the
# same run: PING, SET, GET, INCR, LPUSH, LPOP and XADD, without and with pipelining.
#
#   bench/server_bench.sh [-n REQUESTS] [-c CLIENTS] [-P PIPELINE] [-r ROUNDS] [--tcp]
#                         [-F 'FAKEREDIS-SERVER OPTIONS']
#
# Both servers run on unix sockets in a temporary directory (--tcp: on loopback ports),
# started here and stopped at exit; redis-server and redis-benchmark must be on PATH
# (./run.sh main installs them).  Each test runs ROUNDS times per server, in pairs run back
# to back (which server goes first alternates) so that a noisy machine hurts both alike;
# the table shows each server's median requests per second and the median of the pairs'
# ratios fakeredis-server / redis-server (>= 1.00: at least as fast; a paired ratio, as
# the load of a shared machine drifts between pairs more than within one).  -F passes options to fakeredis-server (-F '--busy-poll-us 0': no polling before
# sleeping, redis-server's behaviour).  Results: docs/benchmarks.md, "fakeredis-server".
#
# It builds the release preset's fakeredis-server (build/release) unless
# WSIM_BENCH_BUILD_DIR=DIR names a private Release tree, or FRS_BIN the binary itself.
set -euo pipefail
cd "$(dirname "$(readlink -f "$0")")/.."

requests=100000
clients=50
pipeline=16
rounds=3
tcp=0
fake_opts=()
while (($#)); do
    case "$1" in
    -n) requests=$2; shift 2 ;;
    -c) clients=$2; shift 2 ;;
    -P) pipeline=$2; shift 2 ;;
    -r) rounds=$2; shift 2 ;;
    --tcp) tcp=1; shift ;;
    -F) read -r -a fake_opts <<<"$2"; shift 2 ;;
    -h | --help) sed -n '2,18p' "$0"; exit 0 ;;
    *) echo "server_bench.sh: unknown option $1" >&2; exit 2 ;;
    esac
done

jobs="$(nproc 2>/dev/null || echo 2)"
if [[ -n "${FRS_BIN:-}" ]]; then
    bin=$FRS_BIN
elif [[ -n "${WSIM_BENCH_BUILD_DIR:-}" ]]; then
    echo "==> configure + build: Release in $WSIM_BENCH_BUILD_DIR" >&2
    cmake -S . -B "$WSIM_BENCH_BUILD_DIR" -DCMAKE_BUILD_TYPE=Release >/dev/null
    cmake --build "$WSIM_BENCH_BUILD_DIR" -j"$jobs" --target fakeredis-server >/dev/null
    bin=$WSIM_BENCH_BUILD_DIR/server/fakeredis-server
else
    echo "==> configure + build: release" >&2
    cmake --preset release >/dev/null
    cmake --build --preset release -j"$jobs" --target fakeredis-server >/dev/null
    bin=build/release/server/fakeredis-server
fi

dir=$(mktemp -d /tmp/frs-bench.XXXXXX)
fake_pid=
real_pid=
cleanup() {
    [[ -n $fake_pid ]] && kill "$fake_pid" 2>/dev/null
    [[ -n $real_pid ]] && kill "$real_pid" 2>/dev/null
    wait 2>/dev/null || true
    rm -rf "$dir"
}
trap cleanup EXIT

if ((tcp)); then
    "$bin" "${fake_opts[@]}" --port 0 >"$dir/fake.out" 2>"$dir/fake.err" &
else
    "$bin" "${fake_opts[@]}" --unixsocket "$dir/fake.sock" >"$dir/fake.out" 2>"$dir/fake.err" &
fi
fake_pid=$!
if ((tcp)); then
    redis-server --port 0 --save '' --appendonly no --dir "$dir" --bind 127.0.0.1 \
        --logfile "$dir/real.log" --unixsocket "$dir/real.sock" &
else
    redis-server --port 0 --save '' --appendonly no --dir "$dir" \
        --logfile "$dir/real.log" --unixsocket "$dir/real.sock" &
fi
real_pid=$!
for _ in $(seq 100); do
    grep -q '^fakeredis-server ready' "$dir/fake.out" 2>/dev/null &&
        redis-cli -s "$dir/real.sock" ping >/dev/null 2>&1 && break
    sleep 0.1
done
if ((tcp)); then
    fake_addr=(-h 127.0.0.1 -p "$(sed -n 's/^fakeredis-server listening on 127\.0\.0\.1:\([0-9]*\)$/\1/p' "$dir/fake.out")")
    # redis-server was asked for port 0 = no TCP; give it one now
    real_port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])' 2>/dev/null || echo 16379)
    redis-cli -s "$dir/real.sock" config set port "$real_port" >/dev/null
    real_addr=(-h 127.0.0.1 -p "$real_port")
else
    fake_addr=(-s "$dir/fake.sock")
    real_addr=(-s "$dir/real.sock")
fi

# One redis-benchmark run: prints its requests per second.
run() { # $1 server addr array name, $2 pipeline, rest: test selection
    local -n addr=$1
    local p=$2
    shift 2
    redis-cli "${addr[@]}" flushall >/dev/null
    redis-benchmark "${addr[@]}" -n "$requests" -c "$clients" -P "$p" --csv "$@" 2>/dev/null |
        tail -1 | awk -F'","' '{ print $2 }'
}

median() { sort -g | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }

tests=("PING:-t ping_mbulk" "SET:-t set" "GET:-t get" "INCR:-t incr" "LPUSH:-t lpush"
    "LPOP:-t lpop" "XADD:XADD bench:stream * field value")

echo "fakeredis-server $("$bin" --version | awk '{ print $2 }') vs redis-server $(redis-server --version | awk '{ print $3 }' | cut -d= -f2)"
echo "$requests requests per run, $clients clients, median of $rounds rounds (ratio: median of the paired ratios), $( ((tcp)) && echo 'TCP loopback' || echo 'unix sockets')${fake_opts[*]:+, fakeredis-server ${fake_opts[*]}}"
echo
printf '| %-6s | %-8s | %16s | %16s | %5s |\n' test pipeline "fakeredis-server" "redis-server" ratio
printf '|%s|%s|%s|%s|%s|\n' "--------" "----------" "------------------" "------------------" "-------"
for p in 1 "$pipeline"; do
    for t in "${tests[@]}"; do
        name=${t%%:*}
        sel=${t#*:}
        read -r -a args <<<"$sel"
        f=() r=() q=()
        for k in $(seq "$rounds"); do
            # each round a pair, run back to back; which server goes first alternates
            if ((k % 2)); then
                a=$(run fake_addr "$p" "${args[@]}")
                b=$(run real_addr "$p" "${args[@]}")
            else
                b=$(run real_addr "$p" "${args[@]}")
                a=$(run fake_addr "$p" "${args[@]}")
            fi
            f+=("$a") r+=("$b")
            q+=("$(awk -v a="$a" -v b="$b" 'BEGIN { print (b > 0) ? a / b : 0 }')")
        done
        fm=$(printf '%s\n' "${f[@]}" | median)
        rm_=$(printf '%s\n' "${r[@]}" | median)
        ratio=$(printf '%s\n' "${q[@]}" | median | awk '{ printf "%.2f", $1 }')
        printf '| %-6s | %-8s | %16.0f | %16.0f | %5s |\n' "$name" "$p" "$fm" "$rm_" "$ratio"
    done
done
