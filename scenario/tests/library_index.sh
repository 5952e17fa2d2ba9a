#!/usr/bin/env bash
# library_index.sh SCENARIOS_DIR -- scenarios/README.md indexes the whole library: every
# *.wsim file under SCENARIOS_DIR is named in the README (as a path relative to it), and
# every *.wsim path the README names exists (relative to SCENARIOS_DIR or to its parent,
# the repository, as the README's commands write them).  Prints each mismatch; exit 1 if any.
set -uo pipefail
dir="$1"
readme="$dir/README.md"
[[ -f "$readme" ]] || { echo "$readme: no such file"; exit 1; }
bad=0
while IFS= read -r f; do
    rel="${f#"$dir"/}"
    grep -q -F "$rel" "$readme" || { echo "$readme does not name $rel"; bad=1; }
done < <(find "$dir" -name '*.wsim' | LC_ALL=C sort)
while IFS= read -r rel; do
    # relative to the library, or to the repository (in the README's commands)
    [[ -f "$dir/$rel" || -f "$dir/../$rel" ]] ||
        { echo "$readme names $rel, which does not exist"; bad=1; }
done < <(grep -o -E '[A-Za-z0-9_./-]+\.wsim' "$readme" | LC_ALL=C sort -u)
exit $bad
