#!/usr/bin/env bash
# The scenario library under ctest:
#   library.sh WSIM SCENARIOS fake                  runs it on the in-process fake;
#   library.sh WSIM SCENARIOS real                  starts a throwaway redis-server on a unix
#                                                   socket in a temporary directory, runs the
#                                                   library on it (scenarios that need the fake
#                                                   are skipped, with the reason), then
#                                                   `wsim diff` over the portable ones;
#   library.sh WSIM SCENARIOS server FAKEREDIS_SERVER  the same against fakeredis-server (wall
#                                                   clock, as a real server's): the in-process
#                                                   fake, the fake server and redis-server
#                                                   must all agree;
#   library.sh WSIM SCENARIOS cluster               starts a redis-server that is a one-node
#                                                   Redis Cluster (every slot its own) and
#                                                   runs the files that say `cluster` on it
#                                                   with --cluster: each must pass, none skip.
set -euo pipefail
wsim="$1" dir="$2" mode="$3"
case "$mode" in
    fake) exec "$wsim" run "$dir" ;;
    real | server | cluster) ;;
    *) echo "library.sh: unknown mode $mode" >&2; exit 2 ;;
esac
tmp="$(mktemp -d)"
pid=
cleanup() {
    [[ -f "$tmp/redis.pid" ]] && kill "$(cat "$tmp/redis.pid")" 2>/dev/null || true
    [[ -n $pid ]] && kill "$pid" 2>/dev/null || true
    wait 2>/dev/null || true
    rm -rf "$tmp"
}
trap cleanup EXIT
if [[ $mode == real || $mode == cluster ]]; then
    cluster=()
    [[ $mode == cluster ]] && cluster=(--cluster-enabled yes --cluster-config-file "$tmp/nodes.conf")
    redis-server --port 0 --unixsocket "$tmp/r.sock" --unixsocketperm 700 --save '' \
        --appendonly no --daemonize yes --pidfile "$tmp/redis.pid" --dir "$tmp" \
        --logfile "$tmp/redis.log" "${cluster[@]}" >/dev/null
else
    "${4:?library.sh: server mode needs the fakeredis-server binary}" --port -1 \
        --unixsocket "$tmp/r.sock" --clock wall >"$tmp/redis.log" 2>&1 &
    pid=$!
fi
for _ in $(seq 100); do [[ -S "$tmp/r.sock" ]] && break; sleep 0.05; done
[[ -S "$tmp/r.sock" ]] || { echo "the server did not start:" >&2; cat "$tmp/redis.log" >&2; exit 1; }
if [[ $mode == cluster ]]; then
    redis-cli -s "$tmp/r.sock" CLUSTER ADDSLOTSRANGE 0 16383 >/dev/null
    for _ in $(seq 100); do
        redis-cli -s "$tmp/r.sock" CLUSTER INFO | grep -q '^cluster_state:ok' && break
        sleep 0.1
    done
    mapfile -t files < <(grep -rlx --include='*.wsim' 'cluster' "$dir" | sort)
    (( ${#files[@]} )) || { echo "library.sh: no file says cluster" >&2; exit 1; }
    out="$("$wsim" run --cluster --backend "unix://$tmp/r.sock" "${files[@]}")" || status=1
    printf '%s\n' "$out"
    ! grep -q '^SKIP' <<<"$out" || { echo "library.sh: a cluster file was skipped" >&2; exit 1; }
    exit "${status:-0}"
fi
status=0
fake_server=()
[[ $mode == server ]] && fake_server=(--fake-server)
"$wsim" run --backend "unix://$tmp/r.sock" "${fake_server[@]}" "$dir" || status=1
"$wsim" diff --backend "unix://$tmp/r.sock" "$dir" || status=1
exit $status
