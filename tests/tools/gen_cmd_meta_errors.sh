#!/bin/bash
# gen_cmd_meta_errors.sh GEN -- fakeredis-gen-cmd-meta refuses bad metadata with
# "FILE:line:col: error: ..." and exit status 1, and writes nothing then; a good file
# gives a table with the rows' links (parent, first subcommand, count) from the names.
gen=$1
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
fails=0

row() { # row NAME [INFO-STRING]: a complete block
    printf 'command %s\narity -2\nflags admin\nacl slow\nkeys 0 0 0\ngetkeys none\n' "$1"
    printf 'docs-fields 0\ninfo "%s"\ndocs ""\n' "${2:-x}"
}

# expect NAME WANTED-MESSAGE: runs the generator on $dir/NAME.txt
expect() {
    rm -f "$dir/out.c"
    msg=$("$gen" "$dir/$1.txt" "$dir/out.c" 2>&1)
    rc=$?
    if [ $rc -ne 1 ] || [ "$msg" != "$dir/$1.txt:$2" ] || [ -e "$dir/out.c" ]; then
        echo "FAIL $1: status $rc, said: $msg (wanted $dir/$1.txt:$2)"
        fails=$((fails + 1))
    else
        echo "ok $1"
    fi
}

{ echo "toplevel 1"; row get 'a\q'; } > "$dir/escape.txt"
expect escape "9:8: error: only \\\\ \\\" \\r \\n and \\ooo escapes are read"
{ echo "toplevel 1"; row get 'a"b'; } > "$dir/piece.txt"
expect piece "9:9: error: one quoted piece a line"
{ echo "toplevel 2"; row set; row get; } > "$dir/order.txt"
expect order "11:9: error: 'get' is out of order (the rows are sorted by name)"
{ echo "toplevel 1"; row get | grep -v '^docs '; } > "$dir/missing.txt"
expect missing "2:1: error: 'get' has no 'docs'"
{ echo "toplevel 1"; row 'client|list'; } > "$dir/orphan.txt"
expect orphan "2:9: error: 'client|list' has no container row"
{ echo "toplevel 1"; row get; echo "tips none"; } > "$dir/field.txt"
expect field "11:1: error: unknown field 'tips'"
{ echo "toplevel 1"; row get; echo "keyspec RO | index 1"; } > "$dir/keyspec.txt"
expect keyspec "11:13: error: a key spec is FLAGS | BEGIN | FIND"
{ echo "toplevel 1"; row get | sed 's/^arity -2/arity two/'; } > "$dir/number.txt"
expect number "3:7: error: 'two' is not a number"

# A good file: the container's links come from the names.
{ echo "toplevel 2"; row client; row 'client|id'; row 'client|list'; row get; } > "$dir/good.txt"
if "$gen" "$dir/good.txt" "$dir/out.c" &&
   grep -q '{"client", -1, 1, 2, -2,' "$dir/out.c" &&
   grep -q '{"client|list", 0, -1, 0, -2,' "$dir/out.c" &&
   grep -q 'fri_cmd_meta_count = 4;' "$dir/out.c" &&
   grep -q 'fri_cmd_meta_toplevel = 2;' "$dir/out.c"; then
    echo "ok good"
else
    echo "FAIL good"; fails=$((fails + 1))
fi
exit $((fails != 0))
