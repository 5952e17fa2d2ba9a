#!/usr/bin/env bash
# run.sh -- wsim's one entry point.
#
#   ./run.sh main   install what is missing, build the release preset, run the main job
#   ./run.sh test   install what is missing, build and run every test under the debug
#                   preset, then again under the sanitize preset (ASan + UBSan), build the
#                   release preset (warnings are errors there too), then run each
#                   libFuzzer target for a bounded time (fuzz/run_fuzzers.sh)
#
# Both modes are idempotent: packages already installed are left alone and the builds are
# incremental.  The network is used by apt when a package is missing, and by the tests
# once, for npm to fetch the ioredis client.  Tests start their own redis-server and
# fakeredis-server on unix sockets or loopback port 0; nothing here needs one running.
set -euo pipefail

cd "$(dirname "$(readlink -f "$0")")"

# The Debian 12 packages wsim needs to build, test and benchmark.
PACKAGES=(cmake gcc clang libclang-rt-14-dev libcmocka-dev libhiredis-dev redis-server
          pkg-config make liblua5.1-0-dev lua-cjson-dev lua-bitop-dev
          librsvg2-bin libxml2-utils   # rsvg-convert, xmllint: the picture tests
          python3)                     # tools/hostile_probe.py (ctest server_hostile_probe)

JOBS="$(nproc 2>/dev/null || echo 2)"

say() { printf '==> %s\n' "$*"; }
die() { printf 'run.sh: %s\n' "$*" >&2; exit 1; }

usage() {
    cat <<'EOF'
usage: ./run.sh main    build (release) and run the main job
       ./run.sh test    build and run every test (debug, then ASan+UBSan), then each
                        fuzzer for 30 s (WSIM_FUZZ_TIME)
EOF
}

# Installs the packages that dpkg does not report as installed.  apt runs only when
# something is missing; as a non-root user we say what is missing and stop.
ensure_packages() {
    local missing=() p status
    command -v dpkg-query >/dev/null 2>&1 ||
        die "dpkg-query not found: this script expects Debian 12; install ${PACKAGES[*]} by hand"
    for p in "${PACKAGES[@]}"; do
        status="$(dpkg-query -W -f='${Status}' "$p" 2>/dev/null || true)"
        [[ "$status" == "install ok installed" ]] || missing+=("$p")
    done
    # Node.js and npm, for the tests only (the ioredis client test): any install will do,
    # Debian's or another that ships npm with node, so they are looked for as commands.
    if [[ "${1:-}" == test ]]; then
        command -v node >/dev/null 2>&1 || missing+=(nodejs)
        command -v npm >/dev/null 2>&1 || missing+=(npm)
    fi
    if ((${#missing[@]} == 0)); then
        say "packages: all ${#PACKAGES[@]} present"
        return
    fi
    if [[ "$(id -u)" != 0 ]]; then
        die "missing Debian packages: ${missing[*]}
run as root, or install them first:  sudo apt-get install -y ${missing[*]}"
    fi
    say "installing missing packages: ${missing[*]}"
    export DEBIAN_FRONTEND=noninteractive
    apt-get update
    apt-get install -y "${missing[@]}"
}

# Configures (if needed) and builds one preset.
build_preset() {
    local preset="$1"
    say "configure: $preset"
    cmake --preset "$preset" >/dev/null
    say "build: $preset (-j$JOBS)"
    cmake --build --preset "$preset" -j"$JOBS"
}

# Runs every ctest test of one preset; returns ctest's status.
test_preset() {
    local preset="$1"
    say "test: $preset"
    ctest --preset "$preset" -j"$JOBS"
}

mode_main() {
    ensure_packages
    build_preset release
    say "main job: the scenario library on the embedded fake"
    echo
    ./build/release/wsim run scenarios
}

mode_test() {
    ensure_packages test
    local failed=()
    build_preset debug
    test_preset debug || failed+=(debug)
    build_preset sanitize
    # Stop at the first ASan/UBSan report and make it fail the test.
    ASAN_OPTIONS="${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=1}" \
    UBSAN_OPTIONS="${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}" \
        test_preset sanitize || failed+=(sanitize)
    # The optimised build (what ./run.sh main and the benchmarks use) must stay warning-free
    # too: GCC -O2 sees warnings the debug build does not.
    build_preset release || failed+=(release)
    say "fuzz: each libFuzzer target for ${WSIM_FUZZ_TIME:-30} s (clang, ASan + UBSan)"
    WSIM_FUZZ_TIME="${WSIM_FUZZ_TIME:-30}" fuzz/run_fuzzers.sh || failed+=(fuzz)
    echo
    if ((${#failed[@]})); then
        die "tests FAILED under: ${failed[*]} (see the output above)"
    fi
    say "all tests passed under debug and sanitize, and the fuzzers ran clean"
}

case "${1:-}" in
    main) shift; (($# == 0)) || die "main takes no arguments"; mode_main ;;
    test) shift; (($# == 0)) || die "test takes no arguments"; mode_test ;;
    -h|--help|help) usage ;;
    *) usage >&2; exit 2 ;;
esac
