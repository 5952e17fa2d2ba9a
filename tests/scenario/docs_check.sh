#!/usr/bin/env bash
# docs_check.sh WSIM SOURCE_DIR PAGE... -- the scenario pages cannot go stale.  In each page:
#   <!-- output: wsim ARGS [(exit N)] -->   the next fenced block is the stdout of `wsim ARGS`
#   <!-- stderr: wsim ARGS [(exit N)] -->   ... its stderr; both run in SOURCE_DIR, and the
#                                           exit status must be N (default 0); the port of
#                                           a fake wsim serves is written PORT
#   <!-- file: PATH -->                     the next fenced block is PATH (in SOURCE_DIR)
#   ```wsim block starting with `scenario ` a complete scenario: it must pass on the fake
# Prints every difference and exits 1 if there is one.
set -uo pipefail
wsim="$1" src="$2"
shift 2
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
bad=0 n=0
for page in "$@"; do
    if [[ ! -f "$page" ]]; then
        echo "$page: no such page"
        bad=1
        continue
    fi
    marker="" lineno=0 inblock=0 info="" start=0
    : > "$tmp/block"
    while IFS= read -r line || [[ -n "$line" ]]; do
        lineno=$((lineno + 1))
        if ((inblock)); then
            if [[ "$line" == '```' ]]; then
                inblock=0
                n=$((n + 1))
                where="$page:$start"
                if [[ "$marker" =~ ^(output|stderr):\ wsim\ (.*)$ ]]; then
                    stream="${BASH_REMATCH[1]}" args="${BASH_REMATCH[2]}" want=0
                    if [[ "$args" =~ ^(.*)\ \(exit\ ([0-9]+)\)$ ]]; then
                        args="${BASH_REMATCH[1]}" want="${BASH_REMATCH[2]}"
                    fi
                    # shellcheck disable=SC2086
                    (cd "$src" && "$wsim" $args >"$tmp/out" 2>"$tmp/err")
                    rc=$?
                    got="$tmp/out"
                    [[ "$stream" == stderr ]] && got="$tmp/err"
                    # the port a served fake got is the kernel's choice: pages write PORT
                    sed -i -E 's#redis://127\.0\.0\.1:[0-9]+#redis://127.0.0.1:PORT#g' "$got"
                    if [[ "$rc" != "$want" ]]; then
                        echo "$where: wsim $args exited $rc, the page says $want"
                        bad=1
                    fi
                    if ! diff -u --label "$where (the page)" --label "wsim $args ($stream)" \
                            "$tmp/block" "$got"; then
                        bad=1
                    fi
                elif [[ "$marker" =~ ^file:\ (.*)$ ]]; then
                    path="${BASH_REMATCH[1]}"
                    if ! diff -u --label "$where (the page)" --label "$path" "$tmp/block" "$src/$path"; then
                        bad=1
                    fi
                elif [[ "$info" == wsim ]] && head -n 1 "$tmp/block" | grep -q '^scenario '; then
                    cp "$tmp/block" "$tmp/example.wsim"
                    if ! (cd "$tmp" && "$wsim" run example.wsim >"$tmp/out" 2>&1); then
                        echo "$where: the example scenario does not pass:"
                        sed 's/^/    /' "$tmp/out"
                        bad=1
                    fi
                else
                    n=$((n - 1))
                fi
                marker=""
                : > "$tmp/block"
            else
                printf '%s\n' "$line" >> "$tmp/block"
            fi
            continue
        fi
        if [[ "$line" =~ ^\<!--\ (.*)\ --\>$ ]]; then
            marker="${BASH_REMATCH[1]}"
        elif [[ "$line" =~ ^\`\`\`(.*)$ ]]; then
            inblock=1 info="${BASH_REMATCH[1]}" start=$lineno
            : > "$tmp/block"
        elif [[ -n "$line" ]]; then
            marker=""
        fi
    done < "$page"
done
echo "$n blocks checked"
exit $bad
