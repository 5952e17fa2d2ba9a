#!/usr/bin/env bash
# framework_drift.sh -- lists the framework files that changed after the revision the engine
# follows (engine/framework.pins), so drift is seen the day it happens.  A developer's check:
# it needs the framework's repositories (network, or clones you point it at), which CI does
# not have, so no test runs it.
#
# usage: tools/framework_drift.sh [--pins FILE] [--cache DIR] [--repo OWNER/NAME=DIR]...
#
#   --pins FILE             the pins (default: engine/framework.pins beside this script)
#   --cache DIR             where the repositories are cloned (partial clones, blobs on
#                           demand) and fetched again on later runs (default:
#                           ${XDG_CACHE_HOME:-$HOME/.cache}/wsim-framework)
#   --repo OWNER/NAME=DIR   use the git directory DIR (a clone or a bare mirror) for that
#                           repository, as it is: no clone, no fetch
#
# For each pinned file it prints one line:
#   current  REPO PATH @ PIN                      nothing touched the file after the pin
#   NEWER    REPO PATH @ PIN: N commits, the newest HASH DATE SUBJECT
#   UNKNOWN  REPO PATH @ PIN: WHY                 the pin is not in the history, or not on
#                                                 the default branch
# then the commits of each NEWER file, newest first.
#
# Exit status: 0 every file current; 1 a file is newer than its pin; 2 bad usage, a
# repository that cannot be reached, or a pin the history does not hold.
set -u

here=$(cd "$(dirname "$0")" && pwd)
pins="$here/../engine/framework.pins"
cache="${XDG_CACHE_HOME:-$HOME/.cache}/wsim-framework"
declare -A given=()

usage() {
    sed -n '/^# usage:/,/^# Exit status/p' "$0" | sed 's/^# \{0,1\}//' >&2
    exit 2
}

while [ $# -gt 0 ]; do
    case "$1" in
        --pins) [ $# -ge 2 ] || usage; pins=$2; shift 2 ;;
        --cache) [ $# -ge 2 ] || usage; cache=$2; shift 2 ;;
        --repo)
            [ $# -ge 2 ] || usage
            case "$2" in */*=*) given[${2%%=*}]=${2#*=} ;; *) usage ;; esac
            shift 2 ;;
        -h|--help) usage ;;
        *) echo "framework_drift.sh: unknown argument '$1'" >&2; usage ;;
    esac
done
[ -r "$pins" ] || { echo "framework_drift.sh: cannot read $pins" >&2; exit 2; }

# The git directory of a repository: the one given, else the cached clone (made or fetched).
declare -A gitdir=()
repo_dir() {
    local repo=$1
    if [ -n "${gitdir[$repo]:-}" ]; then echo "${gitdir[$repo]}"; return 0; fi
    local dir
    if [ -n "${given[$repo]:-}" ]; then
        dir=${given[$repo]}
        git --git-dir="$dir" rev-parse --git-dir >/dev/null 2>&1 ||
            dir="$dir/.git"
    else
        dir="$cache/${repo/\//+}.git"
        if [ -d "$dir" ]; then
            git --git-dir="$dir" fetch --quiet origin '+refs/heads/*:refs/heads/*' >&2 ||
                { echo "framework_drift.sh: cannot fetch $repo" >&2; return 1; }
        else
            mkdir -p "$cache"
            git clone --quiet --bare --filter=blob:none "https://github.com/$repo" "$dir" >&2 ||
                { echo "framework_drift.sh: cannot clone https://github.com/$repo" >&2; return 1; }
        fi
    fi
    git --git-dir="$dir" rev-parse --git-dir >/dev/null 2>&1 ||
        { echo "framework_drift.sh: $dir is not a git directory" >&2; return 1; }
    gitdir[$repo]=$dir
    echo "$dir"
}

# The default branch's head: origin/HEAD of a clone, HEAD of a mirror.
head_of() {
    local dir=$1
    git --git-dir="$dir" rev-parse --verify --quiet refs/remotes/origin/HEAD ||
        git --git-dir="$dir" rev-parse --verify --quiet HEAD
}

status=0
details=""
while IFS= read -r line || [ -n "$line" ]; do
    line=${line%%#*}
    read -r repo path pin rest <<<"$line"
    [ -n "${repo:-}" ] || continue
    if [ -z "${pin:-}" ] || [ -n "${rest:-}" ]; then
        echo "framework_drift.sh: $pins: malformed line: $line" >&2
        exit 2
    fi
    dir=$(repo_dir "$repo") || exit 2
    head=$(head_of "$dir") || { echo "UNKNOWN  $repo $path @ $pin: the repository has no default branch"; status=2; continue; }
    full=$(git --git-dir="$dir" rev-parse --verify --quiet "$pin^{commit}")
    if [ -z "$full" ]; then
        echo "UNKNOWN  $repo $path @ $pin: the pinned commit is not in this history (fetch it, or the pin is from another line)"
        status=2
        continue
    fi
    if ! git --git-dir="$dir" merge-base --is-ancestor "$full" "$head"; then
        echo "UNKNOWN  $repo $path @ $pin: the pinned commit is not on the default branch"
        status=2
        continue
    fi
    newer=$(git --git-dir="$dir" log --format='%h %ad %s' --date=short "$full..$head" -- "$path")
    if [ -z "$newer" ]; then
        echo "current  $repo $path @ $pin"
        continue
    fi
    n=$(printf '%s\n' "$newer" | wc -l)
    echo "NEWER    $repo $path @ $pin: $n commit$([ "$n" -eq 1 ] || echo s), the newest $(printf '%s\n' "$newer" | head -n 1)"
    details+="$repo $path after $pin:"$'\n'"$(printf '%s\n' "$newer" | sed 's/^/  /')"$'\n'
    [ "$status" -eq 0 ] && status=1
done <"$pins"
[ -n "$details" ] && printf '\n%s' "$details"
exit "$status"
