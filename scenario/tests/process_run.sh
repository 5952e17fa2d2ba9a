#!/usr/bin/env bash
# Scenario files that drive consumer processes, run with `wsim run` (docs/consumer.md):
# every file of tests/scenario/process/ passes on the fake wsim serves; with a real
# redis-server (--backend, started here on a free loopback port) they pass too.  On the
# fake, --redis-version is what a consumer reads in INFO (tests/scenario/process/version).
#
#   process_run.sh WSIM SOURCE_DIR [real]
set -uo pipefail
wsim="$1" src="$2" mode="${3:-fake}"
. "$(dirname "${BASH_SOURCE[0]}")/check_lib.sh"
cd "$src" || exit 1
files=(tests/scenario/process/*.wsim)
backend=()
if [[ $mode == real ]]; then
    command -v redis-server >/dev/null || { echo "no redis-server: skipped"; exit 77; }
    # a free loopback port: the examples' clients take redis://host:port
    port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
    redis-server --port "$port" --bind 127.0.0.1 --save '' --appendonly no \
        --dir "$tmp" --daemonize yes --pidfile "$tmp/redis.pid" >/dev/null
    trap 'kill $(cat "$tmp/redis.pid" 2>/dev/null) 2>/dev/null; rm -rf "$tmp"' EXIT
    for _ in $(seq 100); do redis-cli -p "$port" PING >/dev/null 2>&1 && break; sleep 0.05; done
    backend=(--backend "redis://127.0.0.1:$port")
fi
"$wsim" run "${backend[@]}" "${files[@]}" >"$tmp/out" 2>&1
rc=$?
cat "$tmp/out"
[[ $rc == 0 ]] || bad "wsim run ${backend[*]}: exit $rc"
if [[ $mode != real ]]; then
    "$wsim" run --redis-version 8.4.0 tests/scenario/process/version/*.wsim >"$tmp/out" 2>&1
    rc=$?
    cat "$tmp/out"
    [[ $rc == 0 ]] || bad "wsim run --redis-version 8.4.0: exit $rc"
fi
exit $fail
