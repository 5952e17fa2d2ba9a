#!/usr/bin/env bash
# no_libc_allocator.sh LIB... -- no library of the project defines the C library's
# allocator (malloc, free, calloc, realloc, and their relatives): a program that links
# one keeps the allocator it had.  A library routes special-purpose memory through its own
# family instead (the crash explorer's child: fr_set_allocator, wsi_alloc_use).  Reads
# each archive or object with nm; names every definition it finds and fails.
#   no_libc_allocator.sh --self-test   shows it fails on an object that defines malloc
set -uo pipefail
names='malloc|free|calloc|realloc|reallocarray|aligned_alloc|posix_memalign|memalign|valloc|pvalloc|malloc_usable_size|strdup|strndup'

check() { # the nm text of one library on stdin, its name as $1: 0, or 1 naming what it defines
    local found
    found=$(awk -v re="^($names)\$" 'NF >= 2 && $(NF-1) ~ /^[TWiVDB]$/ && $NF ~ re { print $NF }' | sort -u)
    if [[ -n $found ]]; then
        echo "FAIL: $1 defines the C library's $(echo $found | sed 's/ /, /g')"
        return 1
    fi
    return 0
}

if [[ ${1:-} == --self-test ]]; then
    dir=$(mktemp -d)
    trap 'rm -rf "$dir"' EXIT
    printf 'void *malloc(unsigned long n) { (void)n; return 0; }\n' >"$dir/bad.c"
    printf 'int harmless(void) { return 1; }\n' >"$dir/good.c"
    cc -c -o "$dir/bad.o" "$dir/bad.c" && cc -c -o "$dir/good.o" "$dir/good.c" || exit 2
    nm "$dir/good.o" | check good.o || { echo "FAIL: the self-test's clean object was refused"; exit 1; }
    if nm "$dir/bad.o" | check bad.o >/dev/null; then
        echo "FAIL: an object that defines malloc was not refused"
        exit 1
    fi
    echo "the check refuses an object that defines malloc and passes a clean one"
    exit 0
fi

(($#)) || { echo "usage: no_libc_allocator.sh LIB... | --self-test" >&2; exit 2; }
fails=0
for lib in "$@"; do
    [[ -r $lib ]] || { echo "FAIL: cannot read $lib"; fails=$((fails + 1)); continue; }
    nm "$lib" 2>/dev/null | check "$(basename "$lib")" || fails=$((fails + 1))
done
((fails == 0)) && echo "none of the $# libraries defines the C library's allocator"
((fails == 0))
