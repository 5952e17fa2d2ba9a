#!/usr/bin/env bash
# bench/run.sh -- build the release preset and run a fake-vs-redis-server benchmark.
#
#   bench/run.sh [bench_fake options]            e.g. bench/run.sh -n 500000 -r 7
#   bench/run.sh streams [bench_streams options] e.g. bench/run.sh streams --only xadd
#
# The first runs bench_fake (the mixed workload), "streams" runs bench_streams (stream and
# consumer-group commands, one operation at a time).  Both start their own redis-server on
# a unix socket (redis-server must be on PATH; ./run.sh main installs it).  Results and the
# workloads are described in docs/benchmarks.md.
set -euo pipefail
cd "$(dirname "$(readlink -f "$0")")/.."

bench=bench_fake
if [ "${1:-}" = streams ]; then
    bench=bench_streams
    shift
fi

echo "==> configure + build: release"
cmake --preset release >/dev/null
cmake --build --preset release -j"$(nproc 2>/dev/null || echo 2)" --target "$bench"
echo "==> $bench $*"
exec ./build/release/bench/"$bench" "$@"
