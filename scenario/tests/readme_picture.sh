#!/usr/bin/env bash
# readme_picture.sh WSIM SOURCE_DIR -- the README's picture cannot drift: docs/images/flush.svg
# is what `wsim diagram --format svg scenarios/stories/window_diagram.wsim` draws now, and
# README.md shows it.  When the drawing changes, regenerate it (from SOURCE_DIR):
#   build/release/wsim diagram --format svg scenarios/stories/window_diagram.wsim > docs/images/flush.svg
set -uo pipefail
wsim="$1" src="$2"
cd "$src" || exit 1
fail=0
out="$(mktemp)"
trap 'rm -f "$out"' EXIT
if ! "$wsim" diagram --format svg scenarios/stories/window_diagram.wsim >"$out"; then
    echo "FAIL: wsim diagram --format svg scenarios/stories/window_diagram.wsim failed"
    fail=1
elif ! cmp -s "$out" docs/images/flush.svg; then
    echo "FAIL: docs/images/flush.svg is not what wsim draws now; regenerate it:"
    echo "  build/release/wsim diagram --format svg scenarios/stories/window_diagram.wsim > docs/images/flush.svg"
    diff <(fold -w 200 docs/images/flush.svg) <(fold -w 200 "$out") | head -20
    fail=1
fi
if ! grep -q '^!\[[^]]*\](docs/images/flush\.svg)' README.md; then
    echo "FAIL: README.md does not show docs/images/flush.svg"
    fail=1
fi
if ((fail)); then exit 1; fi
echo "PASS: docs/images/flush.svg is up to date and README.md shows it"
