#!/bin/sh
# behave.sh HOW -- a consumer that misbehaves as HOW says (scenario/tests/process_bad_input.sh
# finds what is left of it by this file's path):
#   never-connects  sleeps, never opening a connection
#   exits           says why and exits with status 3
#   hangs           connects (PING), then sleeps with no connection
#   floods          sends PING as fast as it can, for ever
#   ignores-sigterm ignores SIGTERM, acknowledges what group g of stream orders holds,
#                   then sleeps in a loop
case "$1" in
never-connects) while :; do sleep 1; done ;;
exits) echo "giving up"; exit 3 ;;
hangs) redis-cli -u "$REDIS_URL" PING; while :; do sleep 1; done ;;
floods) redis-cli -u "$REDIS_URL" -r -1 PING >/dev/null ;;
ignores-sigterm)
    trap '' TERM
    for id in $(redis-cli -u "$REDIS_URL" XREADGROUP GROUP g c1 STREAMS orders '>' |
                grep -E '^[0-9]+-[0-9]+$'); do
        redis-cli -u "$REDIS_URL" XACK orders g "$id"
    done
    while :; do sleep 0.05; done ;;
*) echo "behave.sh: unknown behaviour '$1'" >&2; exit 2 ;;
esac
