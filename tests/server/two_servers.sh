# two_servers.sh -- what the shell tests comparing fakeredis-server with redis-server share
# (sourced): a temporary directory removed at exit with both servers stopped, the pass and
# fail counters and their lines, and a redis-server on a unix socket in that directory.
#
#   source two_servers.sh NAME     # the directory is /tmp/frs-NAME.XXXXXX, in $dir
#   start_real_redis               # redis-server at $dir/real.sock, pid in $real_pid
#   ...; finish                    # prints "N passed, M failed"; status 0 when none failed

dir=$(mktemp -d "/tmp/frs-${1:?usage: source two_servers.sh NAME}.XXXXXX")
fake_pid=
real_pid=
passed=0
failed=0

cleanup() {
    [[ -n $fake_pid ]] && kill "$fake_pid" 2>/dev/null
    [[ -n $real_pid ]] && kill "$real_pid" 2>/dev/null
    wait 2>/dev/null
    rm -rf "$dir"
}
trap cleanup EXIT

ok() { passed=$((passed + 1)); echo "ok   $1"; }
# bad NAME [LINE...]: a failed check, and the lines that show why.
bad() {
    failed=$((failed + 1))
    echo "FAIL $1"
    shift
    printf '     %s\n' "$@"
}

start_real_redis() {
    redis-server --port 0 --unixsocket "$dir/real.sock" --save '' --appendonly no \
        --dir "$dir" >"$dir/real.log" 2>&1 &
    real_pid=$!
}

finish() {
    echo "$passed passed, $failed failed"
    [[ $failed == 0 ]]
}
