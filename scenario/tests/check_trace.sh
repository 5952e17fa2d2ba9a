#!/usr/bin/env bash
# check_trace.sh WSIM FAKEREDIS_SERVER SCENARIOS MODE -- `wsim check-trace` on real traffic
# (docs/recording.md):
#
#   library  every file of the scenario library run by `wsim run` against fakeredis-server
#            (wall clock) with FAKE.RECORD around it, then checked: the engine's own traffic
#            passes the checks its run passes, except the files listed below with what the
#            traffic shows (a finding, or a verdict the traffic cannot see); the files that
#            expect doubled, stranded or a lost delay-queue copy are found; and a recording
#            with its order deliberately broken (the XACK moved before its round's writes;
#            an atomic segment's MULTI and EXEC taken out) fails;
#   hand     consumers driven by hand with redis-cli (one connection each) against
#            fakeredis-server --clock virtual --record: write then ack passes, ack then write
#            is settle-before-writes, a consumer that dies after its write and a second one
#            that reclaims and writes again is doubled, a MULTI/EXEC segment passes;
#   proxy    the same through `wsim proxy` in front of a real redis-server: a library file
#            run through it passes, ack then write fails; and what the proxy forwards is
#            what redis-server answers.
# Exit 0 when every expectation holds; each failure says which file and what.
set -uo pipefail
wsim="$1" fakeredis="$2" lib="$3" mode="$4"
. "$(dirname "${BASH_SOURCE[0]}")/check_lib.sh"
pids=()
cleanup_servers() {
    for p in "${pids[@]}"; do kill "$p" 2>/dev/null; done
    wait 2>/dev/null
    [[ -f "$tmp/redis.pid" ]] && kill "$(cat "$tmp/redis.pid")" 2>/dev/null
    rm -rf "$tmp"
}
trap cleanup_servers EXIT

# wait_socket PATH: until the unix socket is there (5 s at most)
wait_socket() {
    for _ in $(seq 100); do [[ -S "$1" ]] && return 0; sleep 0.05; done
    echo "no socket $1" >&2
    return 1
}

# check FILE REC WANT [OPTIONS...]: check-trace REC against FILE's subscriptions; WANT is
# "pass" or a kind that must be among the violations (and the exit status must say so)
check() {
    local file="$1" rec="$2" want="$3"
    shift 3
    local out rc
    out="$("$wsim" check-trace "$@" --subscriptions "$file" "$rec" 2>&1)"
    rc=$?
    if [[ $want == pass ]]; then
        [[ $rc == 0 ]] || bad "$(basename "$file"): check-trace exit $rc, want 0:"$'\n'"$out"
    else
        [[ $rc == 1 ]] || bad "$(basename "$file"): check-trace exit $rc, want 1 ($want)"
        grep -qE "^  $want \[" <<<"$out" ||
            bad "$(basename "$file"): no $want violation:"$'\n'"$out"
    fi
}

# ----- library --------------------------------------------------------------------------------

# What the traffic shows of these files, where it is not the engine's verdict (and why):
declare -A finding=(
    # the handler queues XACK then INCRBY: the settle leaves before its write (the story
    # shows the crash between them losing the write, which wsim explore finds)
    [stories/check_then_write_two_commands_loses_on_crash.wsim]=settle-before-writes
    # an injected error on MULTI: the segment reaches the server unwrapped
    [regressions/injected_error_on_multi_runs_the_segment_unwrapped.wsim]=atomic-shape
)
# Verdicts of the engine the traffic cannot see (docs/recording.md, "What traffic cannot
# show"): the lost of an ack whose batch discarded its writes, of a runtime copy that never
# came after its settle; a split whose MULTI never reached the server.
declare -A invisible=(
    [rules/streams/a_batch_with_one_member_dropped_sends_none.wsim]=lost
    [rules/streams/atomic_batch_with_a_dropped_member_settles_through_the_shared_xack.wsim]=lost
    [rules/lists/reliable_retry_after_lost_to_crash.wsim]=lost
    [stories/timer_copy_lost_to_crash.wsim]=lost
    [regressions/injected_error_on_multi_then_a_crash_splits_the_segment.wsim]=split
)

library() {
    "$fakeredis" --port -1 --unixsocket "$tmp/s.sock" --clock wall >"$tmp/server.log" 2>&1 &
    pids+=($!)
    wait_socket "$tmp/s.sock" || { bad "fakeredis-server did not start"; return; }
    local n=0 file rel rec out kinds
    while IFS= read -r file; do
        rel="${file#"$lib"/}"
        rec="$tmp/${rel//\//_}.rec"
        redis-cli -s "$tmp/s.sock" FAKE.RECORD START "$rec" >/dev/null
        out="$("$wsim" run --backend "unix://$tmp/s.sock" --fake-server "$file" 2>&1)"
        redis-cli -s "$tmp/s.sock" FAKE.RECORD STOP >/dev/null
        [[ $out == SKIP* ]] && continue
        [[ $out == PASS* ]] || { bad "$rel: wsim run on fakeredis-server: $out"; continue; }
        n=$((n + 1))
        local expect
        expect="$(grep -oE '^expect violation (lost|doubled|stranded|split|leaked)' "$file" |
                  awk '{print $3}' | sort -u | head -1)"
        if [[ -n ${finding[$rel]:-} ]]; then
            check "$file" "$rec" "${finding[$rel]}" --allow-unsettled
        elif [[ -n ${invisible[$rel]:-} ]]; then
            [[ $expect == "${invisible[$rel]}" ]] ||
                bad "$rel: listed as an invisible ${invisible[$rel]}, but the file expects '${expect}'"
            check "$file" "$rec" pass --allow-unsettled
        elif [[ $expect == doubled || $expect == stranded || $expect == lost ]]; then
            check "$file" "$rec" "$expect" --allow-unsettled
        elif [[ -n $expect ]]; then
            bad "$rel: expects $expect, which this test does not know: list it above"
        else
            check "$file" "$rec" pass --allow-unsettled
        fi
    done < <(find "$lib" -name '*.wsim' | sort)
    ((n > 100)) || bad "only $n library files ran"
    echo "library: $n files checked"

    # a deliberately broken order: the flush's XACK moved before its round's writes
    local good="$tmp/stories_window_diagram.wsim.rec" broken="$tmp/broken.rec"
    check "$lib/stories/window_diagram.wsim" "$good" pass
    awk '/ INCR counter:/ && !held { held = held $0 "\n"; next }
         / INCR counter:/ { held = held $0 "\n"; next }
         / XACK orders fulfilment / && held { print; printf "%s", held; held = ""; next }
         { print }' "$good" >"$broken"
    cmp -s "$good" "$broken" && bad "the broken recording is the good one"
    check "$lib/stories/window_diagram.wsim" "$broken" settle-before-writes
    # an atomic segment without its MULTI and EXEC
    local atomic="$tmp/rules_streams_an_atomic_segment_leaves_with_the_ack.wsim.rec"
    check "$lib/rules/streams/an_atomic_segment_leaves_with_the_ack.wsim" "$atomic" pass --allow-unsettled
    # (its LPUSH and XACK each answered :1 inside EXEC: they answer it outside)
    grep -vE ' m=[01] (MULTI|EXEC) ' "$atomic" |
        sed -E 's/ m=1 (.*) => "\+QUEUED\\r\\n"$/ m=0 \1 => ":1\\r\\n"/' >"$broken"
    grep -q 'QUEUED' "$broken" && bad "the unwrapped recording still holds +QUEUED"
    check "$lib/rules/streams/an_atomic_segment_leaves_with_the_ack.wsim" "$broken" atomic-shape --allow-unsettled
}

# ----- hand-driven consumers -----------------------------------------------------------------

# cli SOCKET COMMAND-LINES...: one redis-cli connection running the lines in order
cli() {
    local sock="$1"
    shift
    printf '%s\n' "$@" | redis-cli -s "$sock" >/dev/null
}

# A subscriptions file.
subs() {
    printf 'scenario hand-driven consumers\nsubscribe s stream s group g consumer c1 %s\n' "$1" \
        >"$tmp/subs.wsim"
    echo "$tmp/subs.wsim"
}

# hand SOCKET RECORD-COMMAND... : the four consumers, each in its own recording
hand_consumers() {
    local sock="$1" rec="$2" id1="$3" id2="$4"
    # write, then ack
    redis-cli -s "$sock" FAKE.RECORD START "$rec.ok" >/dev/null
    cli "$sock" "FLUSHALL" "XGROUP CREATE s g \$ MKSTREAM" "XADD s $id1 _payload a" "XADD s $id2 _payload b"
    cli "$sock" "XREADGROUP GROUP g c1 COUNT 2 STREAMS s >" "INCR a" "XACK s g $id1" "INCR b" "XACK s g $id2"
    redis-cli -s "$sock" FAKE.RECORD STOP >/dev/null 2>&1
    # ack, then write
    redis-cli -s "$sock" FAKE.RECORD START "$rec.ackfirst" >/dev/null
    cli "$sock" "FLUSHALL" "XGROUP CREATE s g \$ MKSTREAM" "XADD s $id1 _payload a"
    cli "$sock" "XREADGROUP GROUP g c1 COUNT 1 STREAMS s >" "XACK s g $id1" "INCR a"
    redis-cli -s "$sock" FAKE.RECORD STOP >/dev/null 2>&1
    # a consumer that dies after its write; another reclaims it and writes again
    redis-cli -s "$sock" FAKE.RECORD START "$rec.crash" >/dev/null
    cli "$sock" "FLUSHALL" "XGROUP CREATE s g \$ MKSTREAM" "XADD s $id1 _payload a"
    cli "$sock" "XREADGROUP GROUP g c1 COUNT 1 STREAMS s >" "INCR a"
    cli "$sock" "XAUTOCLAIM s g c2 0 0-0 COUNT 10" "INCR a" "XACK s g $id1"
    redis-cli -s "$sock" FAKE.RECORD STOP >/dev/null 2>&1
    # an atomic segment
    redis-cli -s "$sock" FAKE.RECORD START "$rec.atomic" >/dev/null
    cli "$sock" "FLUSHALL" "XGROUP CREATE s g \$ MKSTREAM" "XADD s $id1 _payload a"
    cli "$sock" "XREADGROUP GROUP g c1 COUNT 1 STREAMS s >" "MULTI" "INCR a" "XACK s g $id1" "EXEC"
    redis-cli -s "$sock" FAKE.RECORD STOP >/dev/null 2>&1
    # a script that writes and settles (the server records the commands it runs)
    redis-cli -s "$sock" FAKE.RECORD START "$rec.script" >/dev/null
    cli "$sock" "FLUSHALL" "XGROUP CREATE s g \$ MKSTREAM" "XADD s $id1 _payload a"
    cli "$sock" "XREADGROUP GROUP g c1 COUNT 1 STREAMS s >" \
        "EVAL \"redis.call('INCR', KEYS[2]); return redis.call('XACK', KEYS[1], 'g', ARGV[1])\" 2 s a $id1"
    redis-cli -s "$sock" FAKE.RECORD STOP >/dev/null 2>&1
    # a script that settles, then a write after it
    redis-cli -s "$sock" FAKE.RECORD START "$rec.scriptack" >/dev/null
    cli "$sock" "FLUSHALL" "XGROUP CREATE s g \$ MKSTREAM" "XADD s $id1 _payload a"
    cli "$sock" "XREADGROUP GROUP g c1 COUNT 1 STREAMS s >" \
        "EVAL \"return redis.call('XACK', KEYS[1], 'g', ARGV[1])\" 1 s $id1" "INCR a"
    redis-cli -s "$sock" FAKE.RECORD STOP >/dev/null 2>&1
}

hand() {
    "$fakeredis" --port -1 --unixsocket "$tmp/s.sock" --clock virtual >"$tmp/server.log" 2>&1 &
    pids+=($!)
    wait_socket "$tmp/s.sock" || { bad "fakeredis-server did not start"; return; }
    hand_consumers "$tmp/s.sock" "$tmp/hand" 1-1 1-2
    check "$(subs 'mode direct')" "$tmp/hand.ok" pass
    check "$(subs 'mode direct')" "$tmp/hand.ackfirst" settle-before-writes
    printf 'subscribe r stream s group g consumer c2 reclaim 0\n' >>"$tmp/subs.wsim"
    check "$tmp/subs.wsim" "$tmp/hand.crash" doubled
    check "$(subs 'mode atomic')" "$tmp/hand.atomic" pass
    grep -q '^call [0-9]* b=[0-9]* t=[0-9]* XACK s g 1-1 => ":1\\r\\n"$' "$tmp/hand.script" ||
        bad "no call line for the script's XACK:"$'\n'"$(cat "$tmp/hand.script")"
    check "$(subs 'mode direct')" "$tmp/hand.script" pass
    check "$(subs 'mode direct')" "$tmp/hand.scriptack" settle-before-writes
    # the trace of one of them
    out="$("$wsim" trace "$tmp/hand.crash")" || bad "wsim trace of a recording failed"
    grep -q '^  XAUTOCLAIM s g c2 0 0-0 COUNT 10 -> \["0-0", \[\["1-1", \["_payload", "a"\]\]\], \[\]\]$' \
        <<<"$out" || bad "wsim trace of a recording: no XAUTOCLAIM line:"$'\n'"$out"
    # a recording that is not one, cut short, of another version: exit 2, named
    printf 'scenario x\n' >"$tmp/not.rec"
    head -c 100 "$tmp/hand.ok" >"$tmp/cut.rec"
    sed '1s/wsim-recording 1/wsim-recording 9/' "$tmp/hand.ok" >"$tmp/v9.rec"
    for f in not cut v9; do
        out="$("$wsim" check-trace --subscriptions "$tmp/subs.wsim" "$tmp/$f.rec" 2>&1)"
        rc=$?
        [[ $rc == 2 ]] || bad "check-trace of $f.rec: exit $rc, want 2"
        grep -qE "^$tmp/$f.rec:1:[0-9]+: error: (not a recording|truncated|the recording is version 9)" \
            <<<"$out" || grep -qE "^$tmp/$f.rec:[0-9]+:[0-9]+: error: truncated" <<<"$out" ||
            bad "check-trace of $f.rec: $out"
        "$wsim" trace "$tmp/$f.rec" >/dev/null 2>&1
        rc=$?
        [[ $f == not || $rc == 2 ]] || bad "trace of $f.rec: exit $rc, want 2"
    done
}

# ----- through the proxy, in front of redis-server ---------------------------------------------

proxy() {
    redis-server --port 0 --unixsocket "$tmp/r.sock" --unixsocketperm 700 --save '' \
        --appendonly no --daemonize yes --pidfile "$tmp/redis.pid" --dir "$tmp" \
        --logfile "$tmp/redis.log" >/dev/null || { bad "redis-server did not start"; return; }
    wait_socket "$tmp/r.sock" || return
    "$wsim" proxy --upstream "unix://$tmp/r.sock" --unixsocket "$tmp/p.sock" \
        --record "$tmp/proxy.rec" >"$tmp/proxy.out" 2>&1 &
    local px=$!
    pids+=($px)
    wait_socket "$tmp/p.sock" || { bad "wsim proxy did not start"; return; }
    local file="$lib/stories/window_diagram.wsim"
    out="$("$wsim" run --backend "unix://$tmp/p.sock" "$file" 2>&1)" ||
        bad "wsim run through the proxy: $out"
    kill "$px"
    wait "$px" || bad "wsim proxy did not exit 0 on SIGTERM"
    check "$file" "$tmp/proxy.rec" pass
    grep -q '^end t=' "$tmp/proxy.rec" || bad "the proxy's recording has no end line"
    # ack, then write, through the proxy
    "$wsim" proxy --upstream "unix://$tmp/r.sock" --unixsocket "$tmp/p.sock" \
        --record "$tmp/proxy2.rec" >"$tmp/proxy.out" 2>&1 &
    px=$!
    pids+=($px)
    wait_socket "$tmp/p.sock" || return
    cli "$tmp/p.sock" "FLUSHALL" "XGROUP CREATE s g \$ MKSTREAM" "XADD s 1-1 _payload a"
    cli "$tmp/p.sock" "XREADGROUP GROUP g c1 COUNT 1 STREAMS s >" "XACK s g 1-1" "INCR a"
    got="$(redis-cli -s "$tmp/p.sock" GET a)"
    [[ $got == 1 ]] || bad "GET a through the proxy: '$got'"
    kill "$px"
    wait "$px"
    check "$(subs 'mode direct')" "$tmp/proxy2.rec" settle-before-writes
}

case "$mode" in
library | hand | proxy) "$mode" ;;
*) echo "check_trace.sh: unknown mode $mode" >&2; exit 2 ;;
esac
exit $fail
