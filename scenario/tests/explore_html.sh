#!/usr/bin/env bash
# explore_html.sh WSIM EXPLORE_DIR -- `wsim explore --format html` writes one valid,
# self-contained page that says what `--format json` says (docs/wsim-explore.md,
# scenario/tool/explore_html.h).
#
# On every scenario of EXPLORE_DIR (tests/scenario/explore: doubled, lost, stranded, all
# fine, forbidden points): the page is well-formed XML (xmllint, strict) and HTML that
# libxml2's HTML parser reads with no error but its not knowing HTML5's <details> and
# <summary>; it has no script, image, style sheet, font or link out of itself; every link is
# a fragment naming an id the page has; one table row per crash point; per verdict, as many
# rows and the same summary count as the JSON's results have; the forbidden points marked;
# the same exit status as the text report; the same bytes twice.
#
# Needs xmllint (libxml2-utils); without it it skips (exit 77, ctest's SKIP_RETURN_CODE).
set -uo pipefail
wsim="$1" dir="$2"
if ! command -v xmllint >/dev/null 2>&1; then
    echo "SKIP: xmllint is not installed (Debian: libxml2-utils; ./run.sh installs it)"
    exit 77
fi
. "$(dirname "${BASH_SOURCE[0]}")/check_lib.sh" # $tmp, bad, $fail
xcount() { xmllint --xpath "count($1)" "$2" 2>/dev/null; }

verdicts_seen=""
for f in "$dir"/*.wsim; do
    "$wsim" explore --jobs 2 --format html "$f" >"$tmp/page.html" 2>"$tmp/err"
    rc_html=$?
    "$wsim" explore --jobs 2 "$f" >/dev/null 2>&1
    rc_text=$?
    "$wsim" explore --jobs 2 --format json "$f" >"$tmp/page.json" 2>/dev/null ||
        bad "$f: --format json failed"
    [[ "$rc_html" == "$rc_text" ]] || bad "$f: --format html exited $rc_html, the text report $rc_text"
    [[ -s "$tmp/page.html" ]] || { bad "$f: no page"; continue; }

    # well-formed, strictly; and HTML with no error but the HTML5 tags libxml2 lacks
    xmllint --noout "$tmp/page.html" 2>"$tmp/xmlerr" || {
        bad "$f: not well-formed"
        head -5 "$tmp/xmlerr"
    }
    xmllint --html --noout "$tmp/page.html" 2>"$tmp/htmlerr"
    errors="$(grep -c 'parser error' "$tmp/htmlerr")"
    html5="$(grep -c 'parser error : Tag \(details\|summary\) invalid' "$tmp/htmlerr")"
    [[ "$errors" == "$html5" ]] || {
        bad "$f: the HTML parser finds errors"
        grep 'parser error' "$tmp/htmlerr" | grep -v 'Tag \(details\|summary\) invalid' | head -5
    }
    head -n 1 "$tmp/page.html" | grep -qx '<!DOCTYPE html>' || bad "$f: no HTML5 doctype"

    # self-contained
    grep -qi 'http://\|https://\|src=\|<script\|<link\|<img\|<iframe\|<object\|@import\|url(\|@font-face' \
        "$tmp/page.html" && bad "$f: refers outside the page: $(grep -oi 'https\?://[^" ]*\|src=[^ >]*\|<script\|<link\|<img\|@import\|url(' "$tmp/page.html" | head -3)"
    grep -o 'href="[^"]*"' "$tmp/page.html" | grep -v '^href="#' | head -1 | grep -q . &&
        bad "$f: a link that is not a fragment"
    # every link leads somewhere
    grep -o 'href="#[^"]*"' "$tmp/page.html" | sed 's/href="#\(.*\)"/\1/' | sort -u >"$tmp/targets"
    grep -o ' id="[^"]*"' "$tmp/page.html" | sed 's/ id="\(.*\)"/\1/' | sort >"$tmp/ids"
    [[ -z "$(uniq -d "$tmp/ids")" ]] || bad "$f: ids given twice: $(uniq -d "$tmp/ids" | head -3)"
    missing="$(comm -23 "$tmp/targets" <(sort -u "$tmp/ids"))"
    [[ -z "$missing" ]] || bad "$f: links to ids the page lacks: $missing"

    # one row per point, the verdicts as the JSON counts them
    points="$(sed -n 's/.*"points": \([0-9]*\),.*/\1/p' "$tmp/page.json")"
    rows="$(xcount "//tr[contains(concat(' ', @class, ' '), ' point ')]" "$tmp/page.html")"
    [[ -n "$points" && "$rows" == "$points" ]] || bad "$f: $rows rows, the JSON has $points points"
    linked="$(xcount "//tr[contains(concat(' ', @class, ' '), ' point ')]/td[2]/a" "$tmp/page.html")"
    [[ "$linked" == "$points" ]] || bad "$f: $linked of $points points link into the trace"
    for v in fine doubled lost split leaked stranded "not reached" error; do
        want="$(grep -c "\"verdict\": \"$v\"" "$tmp/page.json")"
        cls="v-${v// /-}"
        got="$(xcount "//table[@class='points']//tr[contains(concat(' ', @class, ' '), ' $cls ')]" "$tmp/page.html")"
        [[ "$got" == "$want" ]] || bad "$f: $got rows '$v', the JSON has $want"
        summary="$(xmllint --xpath "string(//table[@class='summary']//tr[@class='$cls']/td[2])" "$tmp/page.html" 2>/dev/null)"
        [[ "$summary" == "$want" || ( -z "$summary" && "$want" == 0 ) ]] ||
            bad "$f: the summary says $summary '$v', the JSON has $want"
        ((want > 0)) && verdicts_seen="$verdicts_seen $v"
    done
    want="$(grep -c '"forbidden": true' "$tmp/page.json")"
    got="$(xcount "//tr[contains(concat(' ', @class, ' '), ' forbidden ')]" "$tmp/page.html")"
    [[ "$got" == "$want" ]] || bad "$f: $got rows forbidden, the JSON has $want"
    grep -qF "$(sed -n 's/^scenario //p' "$f" | head -1 | sed 's/&/\&amp;/g; s/</\&lt;/g; s/>/\&gt;/g; s/"/\&quot;/g; s/'"'"'/\&#39;/g')" \
        "$tmp/page.html" || bad "$f: the page does not name the scenario"
    grep -qF "<code>$f</code>" "$tmp/page.html" || bad "$f: the page does not name the file"
    # the trace is in the page
    [[ "$(xmllint --xpath "string(//pre[@class='trace'])" "$tmp/page.html" 2>/dev/null)" == \
       "$("$wsim" trace "$f" 2>/dev/null)" ]] || bad "$f: the page's trace is not wsim trace's"
    "$wsim" explore --jobs 1 --format html "$f" >"$tmp/again.html" 2>/dev/null
    cmp -s "$tmp/again.html" "$tmp/page.html" || bad "$f: a second run (--jobs 1) wrote different bytes"
done
# the files cover more than one colour
for v in fine doubled lost stranded; do
    [[ " $verdicts_seen " == *" $v "* ]] || bad "no scenario of $dir had a '$v' point"
done

# A scenario that fails without a crash: the page says so, with the explorer's words, and
# exits 1 as the text report does.
fail_case="$(dirname "$0")/../../tests/scenario/cases/fail.wsim"
"$wsim" explore --format html "$fail_case" >"$tmp/fail.html" 2>/dev/null
rc=$?
xmllint --noout "$tmp/fail.html" 2>/dev/null || bad "fail.wsim: the page is not well-formed"
[[ "$rc" == 1 ]] || bad "fail.wsim: --format html exited $rc, not 1"
grep -q 'No crash point was explored' "$tmp/fail.html" &&
    grep -q 'the scenario fails without a crash:' "$tmp/fail.html" ||
    bad "fail.wsim: the page does not say that the scenario fails without a crash"
[[ "$(xcount "//tr[contains(concat(' ', @class, ' '), ' point ')]" "$tmp/fail.html")" == 0 ]] ||
    bad "fail.wsim: the page has crash points"

# --shard cannot make a page
"$wsim" explore --shard 1/2 --format html "$dir/direct_doubles.wsim" >"$tmp/out" 2>"$tmp/err"
[[ $? == 2 && ! -s "$tmp/out" ]] || bad "--shard with --format html: not refused with exit 2"

if ((fail)); then exit 1; fi
echo "PASS: the pages are valid, self-contained and say what the JSON says"
