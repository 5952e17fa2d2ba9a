#!/usr/bin/env bash
# bench/compare.sh -- two revisions of the tree, the fake's benchmarks run on both in turn.
#
#   bench/compare.sh [options] REV_A REV_B
#
#   -p, --pairs N        pairs of runs (default 3); the order alternates: A B, B A, A B, ...;
#                        0 builds and runs nothing and summarises the runs kept in --logs
#   --fake ARGS          bench_fake's options (default "-r 5"); "" leaves bench_fake out
#   --streams ARGS       bench_streams' options (default "-r 3"); "" leaves it out
#   --builds DIR         keep each revision's release build in DIR/<commit> and reuse it
#                        (default: a temporary directory, removed at the end)
#   --logs DIR           keep every run's output in DIR (default: in the temporary directory)
#
# Each revision is checked out in a git worktree of a temporary directory (this checkout's
# repository; the worktree is removed once built) and built with the release preset's
# settings (Release, warnings as errors), bench_fake and bench_streams only.  The runs then
# alternate between the two builds, each run preceded by the machine's load (uptime), and
# the summary gives, per measured row, the median over the runs of each revision: the fake
# through fr_exec, through fr_exec_resp, redis-server pipelined, their ratio, and B's fake
# against A's (B/A > 1: B is faster).  Every run starts its own redis-server, so the
# ratio fake/real compares each revision with the server of the same minute.
# docs/benchmarks.md ("Comparing two revisions") says how the figures were read.
set -euo pipefail
repo="$(cd "$(dirname "$(readlink -f "$0")")/.." && pwd)"

pairs=3
fake_args="-r 5"
streams_args="-r 3"
builds=""
logs=""
revs=()
while [ $# -gt 0 ]; do
    case "$1" in
    -p | --pairs) pairs="$2"; shift 2 ;;
    --fake) fake_args="$2"; shift 2 ;;
    --streams) streams_args="$2"; shift 2 ;;
    --builds) builds="$2"; shift 2 ;;
    --logs) logs="$2"; shift 2 ;;
    -h | --help) sed -n '2,22p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    -*) echo "compare.sh: unknown option $1 (--help)" >&2; exit 2 ;;
    *) revs+=("$1"); shift ;;
    esac
done
if [ "${#revs[@]}" -ne 2 ] || ! [ "$pairs" -ge 0 ] 2>/dev/null || { [ "$pairs" = 0 ] && [ -z "$logs" ]; }; then
    echo "usage: bench/compare.sh [-p PAIRS] [--fake ARGS] [--streams ARGS] [--builds DIR] [--logs DIR] REV_A REV_B" >&2
    exit 2
fi

tmp="$(mktemp -d "${TMPDIR:-/tmp}/wsim-compare.XXXXXX")"
worktrees=()
cleanup() {
    for w in "${worktrees[@]}"; do git -C "$repo" worktree remove --force "$w" 2>/dev/null || true; done
    rm -rf "$tmp"
}
trap cleanup EXIT
trap 'exit 130' INT TERM
[ -n "$builds" ] || builds="$tmp/builds"
[ -n "$logs" ] || logs="$tmp/logs"
mkdir -p "$builds" "$logs"

targets=()
[ -n "$fake_args" ] && targets+=(bench_fake)
[ -n "$streams_args" ] && targets+=(bench_streams)
[ "${#targets[@]}" -gt 0 ] || { echo "compare.sh: nothing to run" >&2; exit 2; }

# Builds rev (once per commit when --builds keeps them); prints the build directory.
build() {
    local sha dir src
    sha="$(git -C "$repo" rev-parse --verify "$1^{commit}")"
    dir="$builds/$sha"
    local have=1
    for t in "${targets[@]}"; do [ -x "$dir/bench/$t" ] || have=0; done
    if [ "$have" = 0 ]; then
        src="$tmp/src-$sha"
        git -C "$repo" worktree add --detach --quiet "$src" "$sha" >&2
        worktrees+=("$src")
        cmake -S "$src" -B "$dir" -DCMAKE_BUILD_TYPE=Release -DWSIM_WERROR=ON >"$dir.configure.log" 2>&1 ||
            { cat "$dir.configure.log" >&2; exit 1; }
        cmake --build "$dir" -j"$(nproc 2>/dev/null || echo 2)" --target "${targets[@]}" \
            >"$dir.build.log" 2>&1 || { tail -30 "$dir.build.log" >&2; exit 1; }
        git -C "$repo" worktree remove --force "$src" >&2
    fi
    echo "$dir"
}

label=(A B)
dirs=()
for k in 0 1; do
    [ "$pairs" -gt 0 ] || break
    echo "==> ${label[$k]}: ${revs[$k]} ($(git -C "$repo" log -1 --format='%h %s' "${revs[$k]}" | cut -c1-90))"
    dirs+=("$(build "${revs[$k]}")")
done

# One run of bench on side k, its output kept as $logs/<bench>.<side>.<pair>.
run() {
    local bench="$1" k="$2" p="$3" args
    [ "$bench" = bench_fake ] && args="$fake_args" || args="$streams_args"
    local out="$logs/$bench.${label[$k]}.$p"
    { echo "load: $(uptime | sed 's/.*load average: //')"; "${dirs[$k]}/bench/$bench" $args; } >"$out" 2>&1 ||
        { echo "compare.sh: $bench of ${label[$k]} failed (see $out):" >&2; tail -5 "$out" >&2; exit 1; }
    echo "    $bench ${label[$k]} (pair $p, load $(head -1 "$out" | cut -d' ' -f2- ))"
}

[ "$pairs" = 0 ] || echo "==> $pairs pairs, alternating"
for ((p = 1; p <= pairs; p++)); do
    if ((p % 2)); then order=(0 1); else order=(1 0); fi
    for bench in "${targets[@]}"; do
        for k in "${order[@]}"; do run "$bench" "$k" "$p"; done
    done
done

# The rounds of one run: "row<TAB>fr_exec<TAB>fr_exec_resp<TAB>real" per round (each
# benchmark prints one line per round and side before its medians).
rounds() {
    case "$1" in
    *bench_fake.*) awk '$1 ~ /^[0-9]+$/ && $2 ~ /\/s$/ { gsub("/s", ""); print "mixed workload\t" $2 "\t" $3 "\t" $4 }' "$1" ;;
    *) awk '/^medians, commands per second/ { exit }
            $1 ~ /^[0-9]+$/ && /\/s/ { line = $0; sub(/^[0-9]+ +/, "", line); n = split(line, f, /   */);
                                        gsub("/s", "", f[2]); gsub("/s", "", f[3]); gsub("/s", "", f[4]);
                                        print f[1] "\t" f[2] "\t" f[3] "\t" f[4] }' "$1" ;;
    esac
}

echo
echo "==> over every round of every run (commands/s): the median and the best (the least disturbed);"
echo "    ratio = fr_exec / real; B/A = B's fr_exec / A's"
printf '%-22s %-6s %11s %11s %9s %6s | %11s %11s %9s %6s | %6s\n' "row" "" "A fr_exec" "A resp" "A real" \
    "ratio" "B fr_exec" "B resp" "B real" "ratio" "B/A"
for bench in "${targets[@]}"; do
    for k in 0 1; do
        for f in "$logs/$bench.${label[$k]}".*; do rounds "$f" | sed "s/^/${label[$k]}\t/"; done
    done
done | awk -F'\t' '
    function sorted(list, v,   n, i, j, t) {
        n = split(list, v, " ")
        for (i = 2; i <= n; i++) for (j = i; j > 1 && v[j - 1] + 0 > v[j] + 0; j--) { t = v[j]; v[j] = v[j - 1]; v[j - 1] = t }
        return n
    }
    function pick(list, best,   v, n) {
        n = sorted(list, v)
        if (best) return v[n]
        return n % 2 ? v[(n + 1) / 2] : (v[n / 2] + v[n / 2 + 1]) / 2
    }
    { key = $1 SUBSEP $2; if (!($2 in seen)) { seen[$2] = 1; order[++nrows] = $2 }
      ex[key] = ex[key] " " $3; resp[key] = resp[key] " " $4; real[key] = real[key] " " ($5 == "" ? 0 : $5) }
    END {
        for (i = 1; i <= nrows; i++) {
            r = order[i]
            for (b = 0; b < 2; b++) {
                line = sprintf("%-22s %-6s", b ? "" : substr(r, 1, 22), b ? "best" : "median")
                for (s = 0; s < 2; s++) {
                    key = (s ? "B" : "A") SUBSEP r
                    e[s] = pick(ex[key], b); q = pick(resp[key], b); m = pick(real[key], b)
                    line = line sprintf(" %11.0f %11.0f %9.0f %5.1fx |", e[s], q, m, m > 0 ? e[s] / m : 0)
                }
                printf "%s %5.2fx\n", line, e[1] / e[0]
            }
        }
    }'
[ "$logs" = "$tmp/logs" ] || echo "(every run's output: $logs)"
