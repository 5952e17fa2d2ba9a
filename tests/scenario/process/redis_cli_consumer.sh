#!/bin/sh
# redis_cli_consumer.sh -- the smallest consumer process: redis-cli in a loop.  Reads the
# stream orders as group g, consumer c1 (its own pending entries first, then new ones),
# and for each entry INCRs total and acknowledges it.  Where Redis is: REDIS_URL.
r() { redis-cli -u "$REDIS_URL" "$@"; }
r XGROUP CREATE orders g '$' MKSTREAM >/dev/null 2>&1
from=0
while :; do
    if [ "$from" = 0 ]; then
        out=$(r XREADGROUP GROUP g c1 COUNT 100 STREAMS orders 0)
    else
        out=$(r XREADGROUP GROUP g c1 COUNT 100 BLOCK 5000 STREAMS orders '>')
    fi
    ids=$(printf '%s\n' "$out" | grep -E '^[0-9]+-[0-9]+$')
    if [ -z "$ids" ] && [ "$from" = 0 ]; then from='>'; continue; fi
    for id in $ids; do
        r INCR total >/dev/null
        r XACK orders g "$id" >/dev/null
        echo "handled $id"
    done
done
