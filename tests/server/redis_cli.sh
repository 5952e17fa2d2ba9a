#!/usr/bin/env bash
# redis_cli.sh -- redis-cli against fakeredis-server, compared with redis-cli against a
# real redis-server 7.0.15: one-shot commands, commands read from stdin, an interactive
# session on a pseudo-terminal (prompts, RESP3 output, Pub/Sub), --pipe mass insertion,
# and SHUTDOWN.  Both servers run in a temporary directory (unix sockets, and loopback
# port 0 for fakeredis-server); every step is bounded by `timeout`.
#
#   tests/server/redis_cli.sh PATH/TO/fakeredis-server
set -uo pipefail

bin=${1:?usage: redis_cli.sh PATH/TO/fakeredis-server}
source "$(dirname "$0")/two_servers.sh" cli

# ----- the two servers ------------------------------------------------------------------
"$bin" --port 0 --unixsocket "$dir/fake.sock" --dir "$dir" --clock wall >"$dir/fake.out" 2>"$dir/fake.err" &
fake_pid=$!
start_real_redis
for _ in $(seq 100); do
    grep -q '^fakeredis-server ready pid=' "$dir/fake.out" 2>/dev/null &&
        redis-cli -s "$dir/real.sock" ping >/dev/null 2>&1 && break
    sleep 0.1
done
port=$(sed -n 's/^fakeredis-server listening on 127\.0\.0\.1:\([0-9]*\)$/\1/p' "$dir/fake.out")
if [[ -z $port ]]; then
    echo "fakeredis-server did not start:"
    cat "$dir/fake.out" "$dir/fake.err"
    echo "0 passed, 1 failed"
    exit 1
fi
echo "fakeredis-server on 127.0.0.1:$port, redis-server on $dir/real.sock"

fake() { timeout 20 redis-cli -p "$port" "$@"; }
real() { timeout 20 redis-cli -s "$dir/real.sock" "$@"; }

# Runs redis-cli with the same arguments (and the same stdin, from $2's file when given)
# on both servers; the outputs must be identical.
same() {
    local name=$1
    shift
    local a b
    a=$(fake "$@" 2>&1 </dev/null)
    b=$(real "$@" 2>&1 </dev/null)
    if [[ "$a" == "$b" ]]; then ok "$name"; else bad "$name" "fake: $a" "real: $b"; fi
}
same_stdin() {
    local name=$1 input=$2
    shift 2
    local a b
    a=$(printf '%b' "$input" | fake "$@" 2>&1)
    b=$(printf '%b' "$input" | real "$@" 2>&1)
    if [[ "$a" == "$b" ]]; then ok "$name"; else bad "$name" "fake: $a" "real: $b"; fi
}

# ----- one-shot commands ------------------------------------------------------------------
same "ping" ping
same "set" set greeting hello
same "get" get greeting
same "incr" incr counter
same "repeat (-r)" -r 5 incr counter
same "hash" hset h f1 v1 f2 v2
same "hgetall" hgetall h
same "hgetall, RESP3 (-3)" -3 hgetall h
same "zadd" zadd z 1 a 2.5 b
same "zrange withscores, RESP3" -3 zrange z 0 -1 withscores
same "zscore, RESP3" -3 zscore z b
same "missing key, RESP3" -3 get nope
same "smembers, RESP3" -3 smembers nope
same "error reply" incr greeting
same "unknown command" nosuchcommand a b
same "wrong arity" get
same "expire and ttl" set t v EX 100
same "ttl" ttl t
same "xadd" xadd s 1-1 f v
same "xrange" xrange s - +
same "multi via stdin" multi
same_stdin "stdin lines" 'MULTI\nINCR n\nINCR n\nEXEC\nGET n\n'
same_stdin "stdin with quotes" 'SET q "a b\\tc"\nGET q\nSTRLEN q\n'
same "config get" config get maxmemory
same_stdin "client name" 'CLIENT SETNAME cli\nCLIENT GETNAME\nCLIENT SETNAME "a b"\n'
same "--scan" --scan --pattern 'gr*'

# INFO: the fields a client's ready check reads
info=$(fake info)
for field in redis_version:7.0.15 loading:0 role:master connected_clients: \
    blocked_clients: used_memory: total_commands_processed: "# Keyspace"; do
    if grep -q "^$field" <<<"$info"; then ok "info has $field"; else bad "info has $field" "$info"; fi
done

# ----- an interactive session on a pseudo-terminal ---------------------------------------
session() { # $1: the redis-cli address arguments
    local script_in="$dir/session.in"
    printf 'SET greeting hi\nGET greeting\nHELLO 3\nZADD zz 1 m\nZRANGE zz 0 -1 WITHSCORES\nHGETALL h\nDEL zz\nQUIT\n' >"$script_in"
    # TERM=dumb: linenoise then reads plain lines instead of querying the terminal.  The
    # terminal echoes the typed lines whenever `script` hands them over, before or between
    # the replies as the machine's load decides: they are dropped, and what is compared is
    # the replies in their order.
    TERM=dumb timeout 20 script -qfec "redis-cli $1" /dev/null <"$script_in" 2>&1 |
        tr -d '\r' | sed -E -e 's/^(redis [^ ]*|127\.0\.0\.1:[0-9]+)> //' |
        grep -v -x -F -f "$script_in" | grep -v -e '^[0-9]# "id" => ' -e '^$'
}
a=$(session "-p $port")
b=$(session "-s $dir/real.sock")
if [[ -n "$a" && "$a" == "$b" ]]; then ok "interactive session"; else bad "interactive session" "fake: $a" "real: $b"; fi

# Pub/Sub from redis-cli: a subscriber gets what another client publishes
fake subscribe news >"$dir/sub.out" 2>&1 &
sub_pid=$!
for _ in $(seq 50); do
    [[ $(fake pubsub numsub news | tail -1) == 1 ]] && break
    sleep 0.1
done
fake publish news "hello there" >/dev/null
for _ in $(seq 50); do grep -q "hello there" "$dir/sub.out" && break; sleep 0.1; done
kill "$sub_pid" 2>/dev/null
wait "$sub_pid" 2>/dev/null
if grep -q "hello there" "$dir/sub.out"; then ok "subscribe"; else bad "subscribe" "$(cat "$dir/sub.out")"; fi

# ----- --pipe --------------------------------------------------------------------------
awk 'BEGIN { for (i = 0; i < 20000; i++) {
        k = "key:" i; v = "value:" i;
        printf "*3\r\n$3\r\nSET\r\n$%d\r\n%s\r\n$%d\r\n%s\r\n", length(k), k, length(v), v } }' \
    >"$dir/pipe.in"
out=$(fake --pipe <"$dir/pipe.in" 2>&1)
if grep -q "errors: 0, replies: 20000" <<<"$out"; then ok "--pipe"; else bad "--pipe" "$out"; fi
n=$(fake eval 'return 1' 0 2>&1) # not supported: must answer an error, not hang
if [[ -n $n ]]; then ok "unsupported command answers"; else bad "unsupported command answers"; fi
got=$(fake get key:19999)
if [[ $got == value:19999 ]]; then ok "--pipe data"; else bad "--pipe data" "$got"; fi

# ----- SHUTDOWN ----------------------------------------------------------------------------
fake shutdown nosave >/dev/null 2>&1
for _ in $(seq 50); do kill -0 "$fake_pid" 2>/dev/null || break; sleep 0.1; done
if kill -0 "$fake_pid" 2>/dev/null; then bad "shutdown" "still running"; else ok "shutdown"; fake_pid=; fi

finish
