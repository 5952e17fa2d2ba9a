#!/usr/bin/env bash
# test_cfl_build.sh -- runs .clusterfuzzlite/build.sh the way ClusterFuzzLite runs it, and
# checks what it leaves in $OUT (ctest: fuzz_cfl_build, label fuzz-regress).
#
# The service builds in its own image with these variables set; here they are exported by
# hand with the values of an address-sanitizer libFuzzer job ($CFLAGS as OSS-Fuzz sets
# them), the repository is placed at $SRC/wsim as the Dockerfile's COPY places it, and the
# script runs from there.  Then, for every fuzzer fuzz/fuzzers.txt names:
#   - $OUT/NAME is an executable that needs no library the runner image lacks (hiredis
#     is linked statically);
#   - $OUT/NAME_seed_corpus.zip holds its seed corpus and $OUT/NAME.dict its dictionary;
#   - it replays its seed corpus and runs 200 fuzzing iterations without a crash.
# Exits 77 (skipped) without clang, 0 when all holds, 1 otherwise.
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
if ! command -v clang >/dev/null 2>&1; then
    echo "test_cfl_build: clang is not installed: skipped"
    exit 77
fi

tmp=$(mktemp -d "${TMPDIR:-/tmp}/wsim-cfl.XXXXXX")
trap 'rm -rf "$tmp"' EXIT

export CC=clang CXX=clang++
export CFLAGS="-O1 -fno-omit-frame-pointer -gline-tables-only -DFUZZING_BUILD_MODE_UNSAFE_FOR_PRODUCTION -fsanitize=address -fsanitize-address-use-after-scope -fsanitize=fuzzer-no-link"
export CXXFLAGS="$CFLAGS"
export LIB_FUZZING_ENGINE="-fsanitize=fuzzer"
export SANITIZER=address FUZZING_ENGINE=libfuzzer ARCHITECTURE=x86_64 FUZZING_LANGUAGE=c
export SRC=$tmp/src WORK=$tmp/work OUT=$tmp/out
mkdir -p "$SRC" "$WORK" "$OUT"
ln -s "$root" "$SRC/wsim"
cp "$root/.clusterfuzzlite/build.sh" "$SRC/build.sh"

fail() {
    echo "test_cfl_build: $*" >&2
    exit 1
}

echo "== build.sh (log: $WORK/build.log)"
if ! (cd "$SRC/wsim" && bash "$SRC/build.sh") >"$WORK/build.log" 2>&1; then
    tail -30 "$WORK/build.log" >&2
    fail "build.sh failed"
fi

list=$WORK/wsim-build/fuzz/fuzzers.txt
[ -s "$list" ] || fail "no fuzzer list at $list"
count=0
while read -r name; do
    [ -n "$name" ] || continue
    count=$((count + 1))
    bin=$OUT/$name
    [ -x "$bin" ] || fail "$name: no executable in \$OUT"
    if ldd "$bin" | grep -q hiredis; then
        fail "$name: linked to a shared hiredis, which the runner image does not have"
    fi
    if [ -d "$root/fuzz/corpus/$name" ]; then
        [ -f "$OUT/${name}_seed_corpus.zip" ] || fail "$name: no seed corpus zip"
        want=$(find "$root/fuzz/corpus/$name" -type f | wc -l)
        got=$(unzip -Z1 "$OUT/${name}_seed_corpus.zip" | grep -vc '/$' || true)
        [ "$want" -eq "$got" ] || fail "$name: the zip holds $got seeds, the corpus $want"
    fi
    if [ -f "$root/fuzz/dict/$name.dict" ]; then
        cmp -s "$root/fuzz/dict/$name.dict" "$OUT/$name.dict" || fail "$name: no dictionary"
    fi
    seeds=$tmp/seeds/$name
    mkdir -p "$seeds"
    [ -f "$OUT/${name}_seed_corpus.zip" ] && unzip -q "$OUT/${name}_seed_corpus.zip" -d "$seeds"
    dict=()
    [ -f "$OUT/$name.dict" ] && dict=(-dict="$OUT/$name.dict")
    echo "== $name: the seeds, then 200 runs"
    (cd "$tmp" && "$bin" -runs=0 "$seeds") >"$WORK/$name.seeds.log" 2>&1 ||
        { tail -30 "$WORK/$name.seeds.log" >&2; fail "$name: a seed fails"; }
    mkdir -p "$tmp/grown/$name"
    (cd "$tmp" && "$bin" -runs=200 -seed=1 "${dict[@]}" "$tmp/grown/$name" "$seeds") \
        >"$WORK/$name.runs.log" 2>&1 ||
        { tail -30 "$WORK/$name.runs.log" >&2; fail "$name: crashed while fuzzing"; }
done <"$list"
[ "$count" -gt 0 ] || fail "the fuzzer list is empty"
echo "test_cfl_build: $count fuzzers built and run as ClusterFuzzLite would"
