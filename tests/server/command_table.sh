#!/usr/bin/env bash
# command_table.sh -- COMMAND on fakeredis-server against a real redis-server 7.0.15, over
# every command Redis has: COUNT, the set of names LIST gives, and COMMAND INFO and
# COMMAND DOCS of each of the 366 names (commands and subcommands), in RESP2 and RESP3.
#
# redis-server lists commands (bare COMMAND, LIST) and a container's subcommands in the
# order of a dict seeded at random per process, so two real servers already disagree on
# that order: names are compared as sets, and a container's INFO and DOCS by their sorted
# lines.  Everything else must be the same bytes as redis-cli shows them (--no-raw).
#
#   tests/server/command_table.sh PATH/TO/fakeredis-server
set -uo pipefail

bin=${1:?usage: command_table.sh PATH/TO/fakeredis-server}
source "$(dirname "$0")/two_servers.sh" cmdtable

"$bin" --port -1 --unixsocket "$dir/fake.sock" --dir "$dir" >"$dir/fake.out" 2>"$dir/fake.err" &
fake_pid=$!
start_real_redis
for _ in $(seq 100); do
    redis-cli -s "$dir/fake.sock" ping >/dev/null 2>&1 &&
        redis-cli -s "$dir/real.sock" ping >/dev/null 2>&1 && break
    sleep 0.1
done

# Sends stdin to a server as a batch of commands; redis-cli shows the replies with their
# structure (--no-raw) and in RESP3 when $2 is -3.
ask() { timeout 60 redis-cli -s "$dir/$1.sock" --no-raw ${2:-} >"$dir/$1.$3"; }

# same_file NAME SUFFIX: $dir/fake.SUFFIX and $dir/real.SUFFIX hold the same bytes.
same_file() {
    if cmp -s "$dir/fake.$2" "$dir/real.$2"; then
        ok "$1"
    else
        local why
        mapfile -t why < <(diff "$dir/real.$2" "$dir/fake.$2" | head -20)
        bad "$1" "${why[@]}"
    fi
}

echo 'COMMAND COUNT' | ask fake '' count
echo 'COMMAND COUNT' | ask real '' count
same_file "COMMAND COUNT ($(cat "$dir/real.count"))" count

for side in fake real; do
    echo 'COMMAND LIST' | ask "$side" '' list
    sed 's/^ *[0-9]*) //' "$dir/$side.list" | sort >"$dir/$side.names"
done
same_file "COMMAND LIST, as a set ($(wc -l <"$dir/real.names") names)" names

# Bare COMMAND: every command's INFO, in dict order, so compared by its sorted lines.
for side in fake real; do
    echo 'COMMAND' | ask "$side" '' bare
    sed -E 's/^ *([0-9]+[)#] *)*//' "$dir/$side.bare" | sort >"$dir/$side.bare.sorted"
done
same_file "bare COMMAND (sorted lines, $(wc -l <"$dir/real.bare") lines)" bare.sorted

# Containers: names some "name|sub" extends.  Their subcommands come in dict order.
sed -n 's/^"\([^|]*\)|.*"$/\1/p' "$dir/real.names" | sort -u >"$dir/containers"
sed 's/^"\(.*\)"$/\1/' "$dir/real.names" | grep -vxF -f "$dir/containers" >"$dir/plain"

for proto in 2 3; do
    flag=; [[ $proto == 3 ]] && flag=-3
    for what in INFO DOCS; do
        sed "s/^/COMMAND $what /" "$dir/plain" >"$dir/batch"
        ask fake "$flag" "plain.$what.$proto" <"$dir/batch"
        ask real "$flag" "plain.$what.$proto" <"$dir/batch"
        same_file "COMMAND $what of $(wc -l <"$dir/plain") commands and subcommands, RESP$proto" \
            "plain.$what.$proto"
        sed "s/^/COMMAND $what /" "$dir/containers" >"$dir/batch"
        for side in fake real; do
            ask "$side" "$flag" "cont.$what.$proto" <"$dir/batch"
            sed -E 's/^ *([0-9]+[)#] *)*//' "$dir/$side.cont.$what.$proto" | sort \
                >"$dir/$side.cont.$what.$proto.sorted"
        done
        same_file "COMMAND $what of $(wc -l <"$dir/containers") containers (sorted lines), RESP$proto" \
            "cont.$what.$proto.sorted"
    done
done

finish
