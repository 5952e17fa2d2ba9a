# check_lib.sh -- what the wsim tool's shell tests share; sourced, not run:
#     . "$(dirname "${BASH_SOURCE[0]}")/check_lib.sh"
# gives $tmp, a temporary directory removed when the test exits, and bad MESSAGE, which
# prints "FAIL: MESSAGE" and sets fail=1 (the test exits with $fail at the end).
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
fail=0
bad() {
    echo "FAIL: $*"
    fail=1
}
