#!/usr/bin/env bash
# diagram_svg.sh WSIM DIR... -- `wsim diagram --format svg` draws pictures that are valid,
# that render, that say what the text diagram says, and that do not overlap however long
# the flush (docs/wsim-diagram.md, scenario/include/wsc_picture.h).
#
# For every scenario file under the DIRs (the library, the test cases) that runs on the
# fake: the SVG is well-formed XML (xmllint), rsvg-convert turns it into a PNG, it is
# self-contained (no link, image, stylesheet or font from outside; the only URI is the SVG
# namespace), it is the same bytes twice (every eighth file), and it has one delivery box
# per `entry` line and one command row per command line of the text diagram.  Then made-up
# scenarios: a flush of 400 deliveries (rows and boxes never overlap, each kept delivery
# level with its command), text that needs escaping, a crashed round trip, bad usage.
#
# Needs xmllint (libxml2-utils) and rsvg-convert (librsvg2-bin); without them it skips
# (exit 77, ctest's SKIP_RETURN_CODE).  run.sh installs both, so CI runs it.
set -uo pipefail
wsim="$1"
shift
for tool in xmllint rsvg-convert; do
    if ! command -v "$tool" >/dev/null 2>&1; then
        echo "SKIP: $tool is not installed (Debian: libxml2-utils, librsvg2-bin; ./run.sh installs them)"
        exit 77
    fi
done
. "$(dirname "${BASH_SOURCE[0]}")/check_lib.sh" # $tmp, bad, $fail

# Every check of one picture: $1 the SVG, $2 the text diagram, $3 a name for messages.
check_picture() {
    local svg="$1" text="$2" what="$3"
    if ! xmllint --noout "$svg" 2>"$tmp/xmlerr"; then
        bad "$what: not well-formed XML"
        sed 's/^/    /' "$tmp/xmlerr" | head -5
        return
    fi
    if ! rsvg-convert -o "$tmp/out.png" "$svg" 2>"$tmp/rsvgerr" || [[ -s "$tmp/rsvgerr" ]]; then
        bad "$what: rsvg-convert failed"
        sed 's/^/    /' "$tmp/rsvgerr" | head -5
        return
    fi
    if [[ "$(head -c 8 "$tmp/out.png" | od -An -tx1 | tr -d ' \n')" != 89504e470d0a1a0a ]]; then
        bad "$what: rsvg-convert wrote no PNG"
    fi
    # self-contained: the namespace is the only URI, every url() is a fragment
    local uris
    uris="$(grep -o 'https\?://[^"]*' "$svg" | sort -u)"
    [[ -z "$uris" || "$uris" == "http://www.w3.org/2000/svg" ]] ||
        bad "$what: refers outside itself: $uris"
    grep -q '<image\|href=\|@import\|@font-face\|<style\|<script' "$svg" &&
        bad "$what: has an image, a link, a style sheet, a font or a script"
    grep -o 'url([^)]*)' "$svg" | grep -qv '^url(#' && bad "$what: a url() that is not a fragment"
    # the same content as the text diagram
    local boxes rows entries commands
    boxes="$(grep -c '<g class="delivery">' "$svg")"
    rows="$(grep -c '<g class="command">' "$svg")"
    entries="$(grep -c '^  entry ' "$text")"
    commands="$(grep '^    ' "$text" | grep -vc '^    \.\.$')"
    [[ "$boxes" == "$entries" ]] || bad "$what: $boxes delivery boxes, the text diagram has $entries entries"
    [[ "$rows" == "$commands" ]] || bad "$what: $rows command rows, the text diagram has $commands commands"
}

n=0
while IFS= read -r f; do
    case "$f" in */malformed/*) continue ;; esac
    "$wsim" diagram --format svg "$f" >"$tmp/a.svg" 2>/dev/null
    rc=$?
    if head -c 5 "$tmp/a.svg" | grep -q '^SKIP:'; then continue; fi
    if [[ "$rc" != 0 && "$rc" != 1 ]]; then
        bad "$f: wsim diagram --format svg exited $rc"
        continue
    fi
    "$wsim" diagram "$f" >"$tmp/a.txt" 2>/dev/null
    if ((n % 8 == 0)); then # every eighth file twice: the same bytes
        "$wsim" diagram --format svg "$f" >"$tmp/b.svg" 2>/dev/null
        cmp -s "$tmp/a.svg" "$tmp/b.svg" || bad "$f: two runs drew different bytes"
    fi
    check_picture "$tmp/a.svg" "$tmp/a.txt" "$f"
    n=$((n + 1))
done < <(find "$@" -name '*.wsim' | LC_ALL=C sort)
((n >= 100)) || bad "only $n scenario files drawn (expected the library's 100+)"
echo "$n scenario files drawn"

# One read of $2 deliveries, every third dropped and the others acked, each queueing
# INCR $4:<i>: $1 the title, $3 the payloads' prefix.
every_third_dropped() {
    local title="$1" n="$2" payload="$3" counter="$4"
    echo "scenario $title"
    echo 'setup XGROUP CREATE s g $ MKSTREAM'
    echo "subscribe s stream s group g consumer c1 mode window count $n"
    for i in $(seq 1 "$n"); do echo "produce s \"$payload$i\" as e$i"; done
    echo 'read s'
    for i in $(seq 1 "$n"); do
        echo "e$i: queue INCR $counter:$i"
        if ((i % 3 == 0)); then echo "e$i: drop"; else echo "e$i: ack"; fi
    done
    echo 'expect invariants'
}

# A flush of 400 deliveries in one read, every third dropped: 267 segments and the XACK.
every_third_dropped 'A long flush: 400 deliveries, every third dropped' 400 'order ' counter \
    >"$tmp/long.wsim"
"$wsim" diagram --format svg "$tmp/long.wsim" >"$tmp/long.svg" || bad "the long flush: wsim failed"
"$wsim" diagram "$tmp/long.wsim" >"$tmp/long.txt"
check_picture "$tmp/long.svg" "$tmp/long.txt" "the long flush"
[[ "$(grep -c '<g class="delivery">' "$tmp/long.svg")" == 400 ]] || bad "the long flush: not 400 boxes"
[[ "$(grep -c '<g class="command">' "$tmp/long.svg")" == 268 ]] || bad "the long flush: not 268 rows"
# no overlap: each row's text 20 px or more below the previous one, each box 38 px or more
grep -o '<g class="command"><title>[^<]*</title><text x="[0-9]*" y="[0-9]*"' "$tmp/long.svg" |
    sed 's/.* y="\([0-9]*\)"$/\1/' >"$tmp/rows"
grep -o '<rect x="16" y="[0-9]*" width="300" height="[0-9]*"' "$tmp/long.svg" |
    sed 's/.* y="\([0-9]*\)" width="300" height="\([0-9]*\)"/\1 \2/' >"$tmp/boxes"
[[ "$(wc -l <"$tmp/rows")" == 268 && "$(wc -l <"$tmp/boxes")" == 400 ]] ||
    bad "the long flush: could not find the rows and boxes"
awk 'NR > 1 && $1 - prev < 20 { print "rows overlap at line " NR; bad = 1 } { prev = $1 }
     END { exit bad }' "$tmp/rows" || bad "the long flush: command rows overlap"
awk 'NR > 1 && $1 < prev + h { print "boxes overlap at line " NR; bad = 1 } { prev = $1; h = $2 }
     END { exit bad }' "$tmp/boxes" || bad "the long flush: delivery boxes overlap"
# each kept delivery's box level with its INCR: 267 arrows straight across
straight="$(grep -c 'd="M[0-9]* \([0-9]*\) C[0-9]* \1 [0-9]* \1 [0-9]* \1"' "$tmp/long.svg")"
[[ "$straight" == 267 ]] || bad "the long flush: $straight arrows straight across, not 267"
height="$(sed -n 's/^<svg [^>]* height="\([0-9]*\)".*/\1/p' "$tmp/long.svg")"
last_row="$(tail -n 1 "$tmp/rows")"
last_box="$(tail -n 1 "$tmp/boxes" | cut -d' ' -f1)"
((height > last_row && height > last_box)) || bad "the long flush: the picture ($height px) is shorter than what it holds"

# Thousands: 1,500 deliveries are taller than librsvg draws (32,767 px a side); the picture
# asks to be drawn 32,000 px high, narrower in proportion, and rsvg-convert draws it.
every_third_dropped 'A flush of 1500 deliveries' 1500 o c >"$tmp/huge.wsim"
"$wsim" diagram --format svg "$tmp/huge.wsim" >"$tmp/huge.svg" || bad "1500 deliveries: wsim failed"
svgtag="$(grep -m1 '^<svg ' "$tmp/huge.svg")"
[[ "$svgtag" =~ width=\"([0-9]+)\"\ height=\"([0-9]+)\"\ viewBox=\"0\ 0\ ([0-9]+)\ ([0-9]+)\" ]] ||
    bad "1500 deliveries: no size"
if (( BASH_REMATCH[4] > 32000 && BASH_REMATCH[2] == 32000 &&
      BASH_REMATCH[1] == BASH_REMATCH[3] * 32000 / BASH_REMATCH[4] )); then
    rsvg-convert -o "$tmp/huge.png" "$tmp/huge.svg" 2>"$tmp/rsvgerr" && [[ ! -s "$tmp/rsvgerr" ]] ||
        bad "1500 deliveries: rsvg-convert failed: $(head -2 "$tmp/rsvgerr")"
else
    bad "1500 deliveries: drawn at ${BASH_REMATCH[1]}x${BASH_REMATCH[2]} for a viewBox of ${BASH_REMATCH[3]}x${BASH_REMATCH[4]}"
fi
xmllint --noout "$tmp/huge.svg" || bad "1500 deliveries: not well-formed"

# Text that needs escaping, in a command, an id and the title; a byte that is not UTF-8.
cat >"$tmp/esc.wsim" <<'EOF'
scenario Escaping: <tags> & "quotes" 'too'
setup XGROUP CREATE s g $ MKSTREAM
subscribe s stream s group g consumer c1 mode atomic
produce s "x" as e1
read s expect e1
e1: queue SET "k<&>\"'" "\xff\x01v"
e1: ack
EOF
"$wsim" diagram --format svg "$tmp/esc.wsim" >"$tmp/esc.svg" || bad "escaping: wsim failed"
"$wsim" diagram "$tmp/esc.wsim" >"$tmp/esc.txt"
check_picture "$tmp/esc.svg" "$tmp/esc.txt" "escaping"
grep -q '&lt;tags&gt; &amp; &quot;quotes&quot; &apos;too&apos;' "$tmp/esc.svg" ||
    bad "escaping: the title is not escaped as expected"
grep -q 'k&lt;&amp;&gt;' "$tmp/esc.svg" || bad "escaping: the command is not escaped as expected"
grep -q 'class="atomic"' "$tmp/esc.svg" || bad "escaping: the atomic block is not boxed"

# A round trip that crashed: its box and its commands in red, with the error and the fates.
crashed="$(dirname "$0")/../../scenarios/regressions/injected_error_on_multi_then_a_crash_splits_the_segment.wsim"
if [[ -f "$crashed" ]]; then
    "$wsim" diagram --format svg "$crashed" >"$tmp/crash.svg"
    grep -q 'class="round-trip"[^>]*stroke="#c62828"' "$tmp/crash.svg" ||
        bad "a crashed round trip: its box is not red"
    grep -q 'WS_ECRASHED' "$tmp/crash.svg" || bad "a crashed round trip: no error named"
    grep -q '<text [^>]*fill="#c62828">INCR' "$tmp/crash.svg" ||
        bad "a crashed round trip: the command it lost is not red"
else
    bad "$crashed: missing"
fi

# Bad usage: exit 2, nothing on stdout.
"$wsim" diagram --format png "$tmp/esc.wsim" >"$tmp/out" 2>"$tmp/err"
[[ $? == 2 && ! -s "$tmp/out" ]] && grep -q "unknown format 'png' (text or svg)" "$tmp/err" ||
    bad "--format png: not refused with exit 2"

if ((fail)); then exit 1; fi
echo "PASS: the pictures are valid, render, say what the text says and do not overlap"
