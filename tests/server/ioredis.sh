#!/usr/bin/env bash
# ioredis.sh -- the Node.js client ioredis (from npm) against fakeredis-server.
#
#   tests/server/ioredis.sh PATH/TO/fakeredis-server CACHE_DIR
#
# Installs ioredis 5 with npm into CACHE_DIR (once; later runs reuse it), starts the server
# on loopback port 0 with the virtual clock (--clock virtual: the test moves it with
# FAKE.TIME), runs node/ioredis_test.js against it, stops it.  Needs node and npm
# (./run.sh installs them); the npm registry must be reachable.
set -euo pipefail
bin=${1:?usage: ioredis.sh PATH/TO/fakeredis-server CACHE_DIR}
cache=${2:?usage: ioredis.sh PATH/TO/fakeredis-server CACHE_DIR}
here="$(cd "$(dirname "$0")" && pwd)"
command -v node >/dev/null || { echo "ioredis.sh: node is not installed" >&2; exit 1; }
command -v npm >/dev/null || { echo "ioredis.sh: npm is not installed" >&2; exit 1; }
mkdir -p "$cache"
if [[ ! -f "$cache/node_modules/ioredis/package.json" ]]; then
    echo "installing ioredis@5 into $cache"
    (cd "$cache" && timeout 300 npm install --no-audit --no-fund --loglevel=error ioredis@5 >/dev/null)
fi
dir=$(mktemp -d /tmp/frs-ioredis.XXXXXX)
pid=
cleanup() {
    [[ -n $pid ]] && kill "$pid" 2>/dev/null
    wait 2>/dev/null || true
    rm -rf "$dir"
}
trap cleanup EXIT
# The files exist before the server starts: the server's own redirection happens in its
# process, which a loaded machine may not run before this one reads them -- and a sed of
# a file not there yet fails, which `set -e` turned into this script's exit 2 (the cause
# of server_ioredis failing now and then under parallel load: 1 run in 20 at load 16).
: >"$dir/out"
: >"$dir/err"
"$bin" --port 0 --dir "$dir" --clock virtual >"$dir/out" 2>"$dir/err" &
pid=$!
port=
for _ in $(seq 100); do
    grep -q '^fakeredis-server ready' "$dir/out" && break
    sleep 0.05
done
port=$(sed -n 's/^fakeredis-server listening on 127\.0\.0\.1:\([0-9]*\)$/\1/p' "$dir/out")
[[ -n $port ]] || { echo "fakeredis-server did not start:"; cat "$dir/err"; exit 1; }
NODE_PATH="$cache/node_modules" timeout 60 node "$here/node/ioredis_test.js" "$port"
