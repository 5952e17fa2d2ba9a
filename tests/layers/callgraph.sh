#!/usr/bin/env bash
# callgraph.sh -- no source file of libwsim or libwscenario calls back up into a file that
# calls it (STYLE.md: layers call down only).
#
#   callgraph.sh LIB_OR_OBJECT...     the libraries' (or objects') symbols, read with nm
#   callgraph.sh --nm-text FILE...    the same from `nm -A` text (the self-test feeds one)
#
# Each object's defined global symbols (T, D, B, R...) and undefined ones (U) give the file
# call graph: a.c -> b.c when a.c.o uses a symbol b.c.o defines.  A cycle -- two files
# calling each other, directly or through a longer circle -- fails the test, named file by
# file ("a.c -> b.c -> a.c").  Otherwise it prints the files with what they call, lowest
# layer first, and exits 0.
set -euo pipefail

text=0
if [[ ${1:-} == --nm-text ]]; then
    text=1
    shift
fi
if [[ $# -eq 0 ]]; then
    echo "usage: callgraph.sh [--nm-text] FILE..." >&2
    exit 2
fi

{
    for f in "$@"; do
        if [[ $text == 1 ]]; then cat "$f"; else nm -A "$f"; fi
    done
} | awk '
# nm -A lines: "lib.a:obj.c.o:<value> <type> <name>" (an archive member) or
# "obj.c.o:<value> <type> <name>"; an undefined symbol has no value.
{
    n = split($0, part, ":")
    if (n < 2) next
    rest = part[n]
    obj = part[n - 1]
    sub(/^.*\//, "", obj)
    if (obj !~ /\.o$/) { obj = part[n]; next }
    file = obj
    sub(/\.o$/, "", file)
    m = split(rest, w, " ")
    if (m == 2 && w[1] == "U") { uses[file, w[2]] = 1; used[file] = used[file] " " w[2]; files[file] = 1 }
    else if (m == 3 && w[2] ~ /^[TDBRGSVW]$/) { def[w[3]] = file; files[file] = 1 }
}
END {
    nf = 0
    for (f in files) name[++nf] = f
    # sort the names, so that the output and the cycle found are the same every run
    for (i = 2; i <= nf; i++) { v = name[i]; for (j = i - 1; j >= 1 && name[j] > v; j--) name[j + 1] = name[j]; name[j + 1] = v }
    for (i = 1; i <= nf; i++) {
        f = name[i]
        k = split(used[f], sy, " ")
        for (s = 1; s <= k; s++) {
            g = def[sy[s]]
            if (g != "" && g != f && !((f, g) in edge)) { edge[f, g] = 1; out[f] = out[f] " " g }
        }
    }
    for (i = 1; i <= nf; i++) {
        k = split(out[name[i]], t, " ")
        for (a = 2; a <= k; a++) { v = t[a]; for (b = a - 1; b >= 1 && t[b] > v; b--) t[b + 1] = t[b]; t[b + 1] = v }
        s = ""
        for (a = 1; a <= k; a++) s = s " " t[a]
        out[name[i]] = s
    }
    # depth-first search, iterative; state 1: on the path, 2: done
    for (i = 1; i <= nf; i++) {
        if (state[name[i]]) continue
        depth = 1; path[1] = name[i]; next_i[1] = 1; state[name[i]] = 1
        while (depth > 0) {
            f = path[depth]
            k = split(out[f], t, " ")
            if (next_i[depth] > k) { state[f] = 2; depth--; continue }
            g = t[next_i[depth]++]
            if (state[g] == 1) {
                for (a = 1; path[a] != g; a++) ;
                c = path[a]
                for (b = a + 1; b <= depth; b++) c = c " -> " path[b]
                print "callgraph: a cycle of calls: " c " -> " g
                print "callgraph: each of these files calls back up into one that calls it;" \
                      " move the shared part down (STYLE.md: layers call down only)"
                exit 1
            }
            if (!state[g]) { state[g] = 1; path[++depth] = g; next_i[depth] = 1 }
        }
    }
    # no cycle: each file with what it calls, in an order where callees come first
    done_n = 0
    while (done_n < nf) {
        progress = 0
        for (i = 1; i <= nf; i++) {
            f = name[i]
            if (f in placed) continue
            k = split(out[f], t, " "); ready = 1
            for (a = 1; a <= k; a++) if (!(t[a] in placed)) ready = 0
            if (ready) { placed[f] = 1; done_n++; progress = 1; printf "%-16s -> %s\n", f, (out[f] == "" ? " (nothing)" : out[f]) }
        }
        if (!progress) break
    }
    print "callgraph: " nf " files, no cycle"
}'
