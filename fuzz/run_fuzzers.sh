#!/usr/bin/env bash
# run_fuzzers.sh -- build the libFuzzer targets with clang and run each for a bounded time.
#
# Usage: fuzz/run_fuzzers.sh [--time SECONDS] [--jobs N] [--build DIR] [--keep DIR] [TARGET...]
#
#   --time S    seconds per target (default 60, or $WSIM_FUZZ_TIME)
#   --jobs N    run each target with libFuzzer's -fork=N (N processes; default 1: in-process)
#   --build D   the clang build directory (default build/fuzz, or $WSIM_FUZZ_BUILD)
#   --keep D    keep the grown corpora and crash files under D (default: a temporary
#               directory, removed at the end when nothing crashed)
#   TARGET      only these targets (default: every one in the build's fuzzers.txt)
#
# Each target starts from its seed corpus fuzz/corpus/TARGET (read only: new inputs go to
# a working copy) with its dictionary fuzz/dict/TARGET.dict.  The script exits 1 as soon as
# a target crashes, leaks, times out or breaks one of its checks, and prints the crash file
# and how to replay it; 0 when every target ran its time clean; 2 on a usage or build error.
# It is what CI runs; see docs/fuzzing.md.
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
time_s=${WSIM_FUZZ_TIME:-60}
jobs=1
build=${WSIM_FUZZ_BUILD:-$root/build/fuzz}
keep=
targets=()

while [ $# -gt 0 ]; do
    case $1 in
        --time) time_s=$2; shift 2 ;;
        --jobs) jobs=$2; shift 2 ;;
        --build) build=$2; shift 2 ;;
        --keep) keep=$2; shift 2 ;;
        -h|--help) sed -n '2,18p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
        -*) echo "run_fuzzers.sh: unknown option $1" >&2; exit 2 ;;
        *) targets+=("$1"); shift ;;
    esac
done

if ! command -v clang >/dev/null 2>&1; then
    echo "run_fuzzers.sh: clang is needed (libFuzzer comes with it)" >&2
    exit 2
fi

# Build: a Release-with-asserts tree (-O1 -g) instrumented by WSIM_FUZZERS.  Warnings stay
# warnings: another clang version may warn where ours does not, and that is no reason to
# stop fuzzing.
cores=$(nproc 2>/dev/null || echo 2)
if ! { CC=clang cmake -S "$root" -B "$build" -DCMAKE_BUILD_TYPE=RelWithDebInfo \
        -DCMAKE_C_FLAGS_RELWITHDEBINFO="-O1 -g" -DWSIM_FUZZERS=ON -DWSIM_WERROR=OFF \
        -DBUILD_TESTING=OFF >"$build.configure.log" 2>&1 &&
       cmake --build "$build" --target fuzzers -j"$cores" >"$build.build.log" 2>&1; }; then
    echo "run_fuzzers.sh: the build failed; see $build.configure.log and $build.build.log" >&2
    tail -20 "$build.build.log" 2>/dev/null >&2 || tail -20 "$build.configure.log" >&2
    exit 2
fi
if [ ${#targets[@]} -eq 0 ]; then
    mapfile -t targets < <(grep -v '^$' "$build/fuzz/fuzzers.txt")
fi

if [ -n "$keep" ]; then
    work=$keep
    mkdir -p "$work"
else
    work=$(mktemp -d "${TMPDIR:-/tmp}/wsim-fuzz.XXXXXX")
fi

# Every call of the fake writes its replies both as a tree and as bytes and checks they
# agree (fake_redis/src/reply.c): the fuzzers drive both paths of every writer.
export FAKEREDIS_CHECK_REPLIES=1
status=0
for t in "${targets[@]}"; do
    bin=$build/fuzz/$t
    if [ ! -x "$bin" ]; then
        echo "run_fuzzers.sh: no fuzzer $t in $build/fuzz" >&2
        exit 2
    fi
    corpus=$work/corpus/$t
    mkdir -p "$corpus" "$work/crashes"
    args=(-max_total_time="$time_s" -timeout=10 -rss_limit_mb=2048 -print_final_stats=1
          -artifact_prefix="$work/crashes/$t-")
    [ -f "$root/fuzz/dict/$t.dict" ] && args+=(-dict="$root/fuzz/dict/$t.dict")
    if [ "$jobs" -gt 1 ]; then
        args+=(-fork="$jobs" -ignore_crashes=0)
    fi
    seeds=()
    [ -d "$root/fuzz/corpus/$t" ] && seeds+=("$root/fuzz/corpus/$t")
    echo "== $t: ${time_s}s, corpus $corpus"
    log=$work/$t.log
    if ! (cd "$work" && "$bin" "${args[@]}" "$corpus" "${seeds[@]}") >"$log" 2>&1; then
        echo "== $t FAILED; its log: $log" >&2
        grep -E '^(==[0-9]+==ERROR|SUMMARY|fuzz_[a-z]+:)' "$log" | head -5 >&2 || true
        for f in "$work/crashes/$t-"*; do
            [ -e "$f" ] || continue
            echo "   crash file: $f" >&2
            echo "   replay:     $bin $f   (or ${t}_replay $f in a gcc build)" >&2
        done
        status=1
        break
    fi
    grep -E '^(stat::number_of_executed_units|stat::average_exec_per_sec|#[0-9]+ *DONE)' "$log" |
        sed 's/^/   /'
done

if [ $status -eq 0 ] && [ -z "$keep" ]; then
    rm -rf "$work"
else
    echo "corpora and crash files kept in $work"
fi
exit $status
