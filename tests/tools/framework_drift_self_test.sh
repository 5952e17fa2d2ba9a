#!/usr/bin/env bash
# framework_drift_self_test.sh -- tools/framework_drift.sh on a repository made here (no
# network): a pin that nothing touched since is current (exit 0); a commit touching the
# pinned file makes it NEWER (exit 1) and is listed; a pin the history does not hold is
# UNKNOWN (exit 2).  The drift check itself needs the framework's repositories and is not
# run by any test.
set -u
script=$1
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*"; echo "--- output:"; cat "$tmp/out"; exit 1; }

git init --quiet "$tmp/fw"
g() { git -C "$tmp/fw" -c user.name=t -c user.email=t@t -c commit.gpgsign=false "$@"; }
mkdir -p "$tmp/fw/src"
echo one >"$tmp/fw/src/route.rs"
echo one >"$tmp/fw/src/other.rs"
g add . && g commit --quiet -m "first"
pin=$(g rev-parse HEAD)
echo two >"$tmp/fw/src/other.rs"
g commit --quiet -am "touches another file"
echo "owner/fw src/route.rs $pin # a test pin" >"$tmp/pins"

bash "$script" --pins "$tmp/pins" --repo "owner/fw=$tmp/fw" >"$tmp/out" 2>&1
[ $? -eq 0 ] || fail "an untouched file should be current (exit 0)"
grep -q "^current  owner/fw src/route.rs @ $pin$" "$tmp/out" || fail "no 'current' line"

echo two >"$tmp/fw/src/route.rs"
g commit --quiet -am "changes the route"
bash "$script" --pins "$tmp/pins" --repo "owner/fw=$tmp/fw" >"$tmp/out" 2>&1
[ $? -eq 1 ] || fail "a file changed after its pin should exit 1"
grep -q "^NEWER    owner/fw src/route.rs @ $pin: 1 commit, the newest [0-9a-f]* [0-9-]* changes the route$" "$tmp/out" ||
    fail "no NEWER line naming the commit"
grep -q "^  [0-9a-f]* [0-9-]* changes the route$" "$tmp/out" || fail "the commit is not listed"

echo "owner/fw src/route.rs 0123456789abcdef0123456789abcdef01234567" >"$tmp/pins"
bash "$script" --pins "$tmp/pins" --repo "owner/fw=$tmp/fw" >"$tmp/out" 2>&1
[ $? -eq 2 ] || fail "a pin the history lacks should exit 2"
grep -q "^UNKNOWN  owner/fw src/route.rs @ 0123456789abcdef0123456789abcdef01234567: the pinned commit is not in this history" "$tmp/out" ||
    fail "no UNKNOWN line"

echo "owner/fw src/route.rs" >"$tmp/pins"
bash "$script" --pins "$tmp/pins" --repo "owner/fw=$tmp/fw" >"$tmp/out" 2>&1
[ $? -eq 2 ] || fail "a malformed pins line should exit 2"
echo "framework_drift.sh: current, NEWER, UNKNOWN and a malformed pin as expected"
