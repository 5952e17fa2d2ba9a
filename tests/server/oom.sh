#!/usr/bin/env bash
# oom.sh -- fakeredis-server out of memory (docs/server.md, "Running out of memory"): a
# connection whose buffers cannot grow is closed and logged, the others go on.  The
# server runs with its address space limited (ulimit -v), and
#  - one connection sends a request whose argument needs more than the limit: its query
#    buffer cannot grow;
#  - one connection asks, pipelined, for a 40 MB value again and again without reading:
#    its output buffer cannot grow;
# after each, another connection still gets its answers and the log names the closing.
#
#   tests/server/oom.sh PATH/TO/fakeredis-server
set -uo pipefail

bin=${1:?usage: oom.sh PATH/TO/fakeredis-server}
source "$(dirname "$0")/two_servers.sh" oom

limit_kb=$((400 * 1024))
(
    ulimit -v "$limit_kb"
    exec "$bin" --port 0 --unixsocket "$dir/fake.sock" --dir "$dir"
) >"$dir/fake.out" 2>"$dir/fake.err" &
fake_pid=$!
for _ in $(seq 100); do
    grep -q '^fakeredis-server ready pid=' "$dir/fake.out" 2>/dev/null && break
    sleep 0.1
done
port=$(sed -n 's/^fakeredis-server listening on 127\.0\.0\.1:\([0-9]*\)$/\1/p' "$dir/fake.out")
if [[ -z $port ]]; then
    echo "fakeredis-server did not start:"
    cat "$dir/fake.out" "$dir/fake.err"
    echo "0 passed, 1 failed"
    exit 1
fi
cli() { timeout 20 redis-cli -s "$dir/fake.sock" "$@"; }

# ----- a query buffer that cannot grow ---------------------------------------------------
# a 500 MB argument (under proto-max-bulk-len) that the 400 MB address space cannot hold:
# once the header is parsed, the next read wants room for all of it
exec 3<>"/dev/tcp/127.0.0.1/$port"
printf '*3\r\n$3\r\nSET\r\n$3\r\nbig\r\n$500000000\r\nxxxx' >&3
sleep 0.5
printf 'xxxx' >&3
for _ in $(seq 50); do
    grep -q 'closed: out of memory for its query buffer' "$dir/fake.err" && break
    sleep 0.1
done
if grep -q 'closed: out of memory for its query buffer' "$dir/fake.err"; then
    ok "query buffer: the connection is closed and logged"
else
    bad "query buffer: no log line" "$(cat "$dir/fake.err")"
fi
timeout 5 cat <&3 >/dev/null 2>&1 # an end of file, or a reset (unread bytes were left)
[[ $? != 124 ]] && ok "query buffer: the peer sees the close" ||
    bad "query buffer: the connection stayed open"

exec 3>&-
got=$(cli ping)
[[ $got == PONG ]] && ok "query buffer: another connection goes on" ||
    bad "query buffer: PING answered '$got'"

# ----- an output buffer that cannot grow -------------------------------------------------
# 40 MB made inside the fake (APPENDs of 4 MB), then GETs that are never read
chunk=$(head -c $((4 * 1024 * 1024)) /dev/zero | tr '\0' 'v')
for _ in $(seq 10); do printf 'APPEND v %s\n' "$chunk"; done | cli >/dev/null
len=$(cli strlen v)
[[ $len == 41943040 ]] && ok "output buffer: a 40 MB value" || bad "output buffer: STRLEN $len"
exec 3<>"/dev/tcp/127.0.0.1/$port"
for _ in $(seq 20); do printf 'GET v\r\n' >&3; done
for _ in $(seq 100); do
    grep -q 'closed: out of memory for its output buffer' "$dir/fake.err" && break
    sleep 0.1
done
if grep -q 'closed: out of memory for its output buffer' "$dir/fake.err"; then
    ok "output buffer: the connection is closed and logged"
else
    bad "output buffer: no log line" "$(cat "$dir/fake.err")"
fi
exec 3>&-
got=$(cli ping)
[[ $got == PONG ]] && ok "output buffer: another connection goes on" ||
    bad "output buffer: PING answered '$got'"
got=$(cli strlen v)
[[ $got == 41943040 ]] && ok "output buffer: the keyspace is intact" ||
    bad "output buffer: STRLEN v answered '$got'"
kill -0 "$fake_pid" 2>/dev/null && ok "the server is still running" || bad "the server died"
finish
