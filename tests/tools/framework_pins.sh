#!/usr/bin/env bash
# framework_pins.sh -- engine/framework.pins and docs/engine.md's table "Where each behaviour
# comes from" say the same: every `FILE @ COMMIT` of the table's revision column (the 4th)
# names a pinned file (a path ending in FILE) at its pinned commit (either a prefix of the
# other), every row's revision cell cites one or says "none" and why, and every pin is cited.
set -u
pins=$1
page=$2
status=0
declare -A commit_of=() cited=()
while IFS= read -r line; do
    line=${line%%#*}
    read -r repo path pin _ <<<"$line"
    [ -n "${pin:-}" ] || continue
    commit_of["$path"]=$pin
done <"$pins"

table=$(awk '/^## Where each behaviour comes from/{on=1; next} on && /^## /{exit} on && /^\|/' "$page")
[ -n "$table" ] || { echo "FAIL: no table under '## Where each behaviour comes from' in $page"; exit 1; }
header=$(printf '%s\n' "$table" | head -n 1)
case "$header" in
    *"| revision |"*) ;;
    *) echo "FAIL: the table has no revision column: $header"; exit 1 ;;
esac
row=0
while IFS= read -r line; do
    row=$((row + 1))
    [ "$row" -le 2 ] && continue # the header and its rule
    cell=$(printf '%s\n' "$line" | awk -F' \\| ' '{print $4}')
    what=$(printf '%s\n' "$line" | cut -c1-70)
    refs=$(printf '%s\n' "$cell" | grep -oE '[A-Za-z_./]+\.rs` @ `[0-9a-f]{7,40}' | tr -d '`')
    if [ -z "$refs" ]; then
        case "$cell" in
            none*) continue ;;
            *) echo "FAIL: row '$what...': the revision cell cites no FILE @ COMMIT ($cell)"; status=1; continue ;;
        esac
    fi
    while IFS= read -r ref; do
        file=${ref%% @ *}
        hex=${ref##* @ }
        found=""
        for path in "${!commit_of[@]}"; do
            case "$path" in */"$file"|"$file") ;; *) continue ;; esac
            pin=${commit_of[$path]}
            if [ "${pin#"$hex"}" != "$pin" ] || [ "${hex#"$pin"}" != "$hex" ]; then
                found=$path
            fi
        done
        if [ -z "$found" ]; then
            echo "FAIL: row '$what...' cites $file @ $hex, which engine/framework.pins does not pin"
            status=1
        else
            cited["$found"]=1
        fi
    done <<<"$refs"
done <<<"$table"
for path in "${!commit_of[@]}"; do
    [ -n "${cited[$path]:-}" ] ||
        { echo "FAIL: $path @ ${commit_of[$path]} is pinned but no row of the table cites it"; status=1; }
done
[ "$status" -eq 0 ] && echo "framework_pins.sh: the table's revisions are the pins, and every pin is cited"
exit "$status"
