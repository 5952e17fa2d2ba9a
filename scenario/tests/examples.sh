#!/usr/bin/env bash
# The example consumers of examples/ (Node.js with ioredis from npm), as examples/README.md
# says to run them: each of examples/*.wsim passes `wsim run` on the fake wsim serves and,
# through --backend, on a real redis-server.
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

run() { # what: wsim run [options] examples/*.wsim passes
    local what="$1"
    shift
    "$wsim" run "$@" examples/*.wsim >"$tmp/out" 2>&1
    local rc=$?
    sed 's/^/  /' "$tmp/out"
    [[ $rc == 0 ]] || bad "$what: wsim run exit $rc"
}
echo "on the fake:"
run fake
echo "on redis-server:"
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
redis-server --port "$port" --bind 127.0.0.1 --save '' --appendonly no --dir "$tmp" \
    --daemonize yes --pidfile "$tmp/redis.pid" >/dev/null
trap 'kill $(cat "$tmp/redis.pid" 2>/dev/null) 2>/dev/null; rm -rf "$tmp"' EXIT
for _ in $(seq 100); do redis-cli -p "$port" PING >/dev/null 2>&1 && break; sleep 0.05; done
run real --backend "redis://127.0.0.1:$port"
exit $fail
