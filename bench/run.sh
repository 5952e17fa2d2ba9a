#!/usr/bin/env bash
# bench/run.sh -- build the release preset and run a fake-vs-redis-server benchmark.
#
#   bench/run.sh [bench_fake options]            e.g. bench/run.sh -n 500000 -r 7
#   bench/run.sh streams [bench_streams options] e.g. bench/run.sh streams --only xadd
#   bench/run.sh engine [bench_engine options]   e.g. bench/run.sh engine -r 7
#   bench/run.sh eval [bench_eval options]       e.g. bench/run.sh eval -n 100000
#   bench/run.sh explore [options] [deliveries]  e.g. bench/run.sh explore -r 3 --replay 1000
#   bench/run.sh process [options]               e.g. bench/run.sh process --entries 100
#
# The first runs bench_fake (the mixed workload), "streams" runs bench_streams (stream and
# consumer-group commands, one operation at a time), "engine" runs bench_engine (the
# engine's round trips per read and deliveries per second, window against direct mode),
# "eval" runs bench_eval (EVAL and EVALSHA of one INCR), "explore" runs bench_explore (every crash point of a scenario against one plain run; the
# fake only), "process" runs bench_process (wsim explore of a consumer process, and a
# BLOCK 5000 consumer on the virtual clock).  The others start their own redis-server on a unix socket in a temporary directory
# (redis-server must be on PATH; ./run.sh main installs it).  Results and the workloads are
# described in docs/benchmarks.md.
#
# WSIM_BENCH_BUILD_DIR=DIR builds a Release tree in DIR instead of the release preset's
# build/release (for a private build directory on a shared checkout).
set -euo pipefail
cd "$(dirname "$(readlink -f "$0")")/.."

bench=bench_fake
case "${1:-}" in
streams)
    bench=bench_streams
    shift
    ;;
engine)
    bench=bench_engine
    shift
    ;;
eval)
    bench=bench_eval
    shift
    ;;
explore)
    bench=bench_explore
    shift
    ;;
process)
    bench=bench_process
    shift
    ;;
esac

jobs="$(nproc 2>/dev/null || echo 2)"
if [ -n "${WSIM_BENCH_BUILD_DIR:-}" ]; then
    dir="$WSIM_BENCH_BUILD_DIR"
    echo "==> configure + build: Release in $dir"
    cmake -S . -B "$dir" -DCMAKE_BUILD_TYPE=Release >/dev/null
    cmake --build "$dir" -j"$jobs" --target "$bench"
else
    dir=build/release
    echo "==> configure + build: release"
    cmake --preset release >/dev/null
    cmake --build --preset release -j"$jobs" --target "$bench"
fi
echo "==> $bench $*"
exec "$dir"/bench/"$bench" "$@"
