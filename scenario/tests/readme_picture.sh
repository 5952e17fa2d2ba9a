#!/usr/bin/env bash
# readme_picture.sh WSIM SOURCE_DIR -- the docs' pictures cannot drift: each is what
# `wsim diagram --format svg` draws of its scenario now, and the pages show them:
#   docs/images/flush.svg         scenarios/stories/window_diagram.wsim   (README.md)
#   docs/images/flush-atomic.svg  scenarios/stories/payments_ledger_atomic.wsim
#                                                                 (docs/wsim-diagram.md)
# When the drawing changes, regenerate them (from SOURCE_DIR, the commands it prints).
set -uo pipefail
wsim="$1" src="$2"
cd "$src" || exit 1
fail=0
out="$(mktemp)"
trap 'rm -f "$out"' EXIT
check() { # IMAGE SCENARIO PAGE LINK
    local image="$1" scenario="$2" page="$3" link="$4"
    if ! "$wsim" diagram --format svg "$scenario" >"$out"; then
        echo "FAIL: wsim diagram --format svg $scenario failed"
        fail=1
    elif ! cmp -s "$out" "$image"; then
        echo "FAIL: $image is not what wsim draws now; regenerate it:"
        echo "  build/release/wsim diagram --format svg $scenario > $image"
        diff <(fold -w 200 "$image" 2>/dev/null) <(fold -w 200 "$out") | head -20
        fail=1
    fi
    if ! grep -qF "]($link)" "$page"; then
        echo "FAIL: $page does not show $link"
        fail=1
    fi
}
check docs/images/flush.svg scenarios/stories/window_diagram.wsim README.md docs/images/flush.svg
check docs/images/flush-atomic.svg scenarios/stories/payments_ledger_atomic.wsim \
    docs/wsim-diagram.md images/flush-atomic.svg
check docs/images/flush.svg scenarios/stories/window_diagram.wsim docs/wsim-diagram.md \
    images/flush.svg
if ((fail)); then exit 1; fi
echo "PASS: the docs' pictures are what wsim draws now, and the pages show them"
