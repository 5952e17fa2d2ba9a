#!/usr/bin/env bash
# self_test.sh CALLGRAPH -- callgraph.sh finds a cycle where there is one (named file by
# file), a cycle of two, and none in a graph that only calls down; the input is `nm -A`
# text as nm prints it for an archive's members and for a lone object.
set -uo pipefail
cg=$1
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
fails=0

# a.c -> b.c -> c.c -> a.c, in archive form; d.c calls a.c from outside the circle
cat > "$dir/cycle.txt" <<'TXT'
libx.a:a.c.o:0000000000000000 T a_fn
libx.a:a.c.o:                 U b_fn
libx.a:a.c.o:                 U malloc
libx.a:b.c.o:0000000000000010 T b_fn
libx.a:b.c.o:                 U c_fn
libx.a:c.c.o:0000000000000020 T c_fn
libx.a:c.c.o:0000000000000030 D c_table
libx.a:c.c.o:                 U a_fn
d.c.o:0000000000000000 T d_fn
d.c.o:                 U a_fn
TXT
out=$(bash "$cg" --nm-text "$dir/cycle.txt")
rc=$?
if [[ $rc -ne 1 || $out != *"a cycle of calls: a.c -> b.c -> c.c -> a.c"* ]]; then
    echo "FAIL: a three-file cycle not named (rc $rc): $out"
    fails=$((fails + 1))
fi

# two files calling each other through data and a function
cat > "$dir/two.txt" <<'TXT'
p.c.o:0000000000000000 T p_fn
p.c.o:                 U q_table
q.c.o:0000000000000000 R q_table
q.c.o:                 U p_fn
TXT
out=$(bash "$cg" --nm-text "$dir/two.txt")
rc=$?
if [[ $rc -ne 1 || $out != *"a cycle of calls: p.c -> q.c -> p.c"* ]]; then
    echo "FAIL: a two-file cycle not named (rc $rc): $out"
    fails=$((fails + 1))
fi

# layers calling down only (a static function's lowercase t is no link): no cycle
cat > "$dir/down.txt" <<'TXT'
libx.a:top.c.o:0000000000000000 T top_fn
libx.a:top.c.o:                 U mid_fn
libx.a:top.c.o:                 U low_fn
libx.a:mid.c.o:0000000000000000 T mid_fn
libx.a:mid.c.o:0000000000000010 t helper
libx.a:mid.c.o:                 U low_fn
libx.a:low.c.o:0000000000000000 T low_fn
libx.a:low.c.o:                 U helper
TXT
out=$(bash "$cg" --nm-text "$dir/down.txt")
rc=$?
if [[ $rc -ne 0 || $out != *"3 files, no cycle"* ]]; then
    echo "FAIL: a graph that calls down only was refused (rc $rc): $out"
    fails=$((fails + 1))
fi

if [[ $fails -ne 0 ]]; then exit 1; fi
echo "callgraph self-test: 3 of 3"
