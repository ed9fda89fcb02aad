#!/usr/bin/env bash
# Prints the commit the checkout around this script is at (with "-dirty"
# when git is there to see uncommitted changes), or nothing outside a
# checkout. mount.sh and the system tests stamp it into partfs
# (-ldflags "-X main.commit=...") so `partfs --version` names it even where
# Go builds without VCS stamping (GOFLAGS=-buildvcs=false, or no git).
set -u
repo=$(cd "$(dirname "$0")/.." && pwd)
if command -v git >/dev/null 2>&1 && rev=$(git -C "$repo" rev-parse HEAD 2>/dev/null); then
	[ -z "$(git -C "$repo" status --porcelain --untracked-files=no 2>/dev/null)" ] || rev=$rev-dirty
	echo "$rev"
	exit 0
fi
# No git: read .git by hand (a directory, or a worktree's "gitdir:" file).
gitdir=$repo/.git
[ -f "$gitdir" ] && gitdir=$(sed -n 's/^gitdir: //p' "$gitdir")
[ -f "$gitdir/HEAD" ] || exit 0
head=$(cat "$gitdir/HEAD")
case $head in
"ref: "*)
	ref=${head#ref: }
	common=$gitdir
	[ -f "$gitdir/commondir" ] && common=$gitdir/$(cat "$gitdir/commondir")
	if [ -f "$common/$ref" ]; then
		cat "$common/$ref"
	else
		sed -n "s| $ref\$||p" "$common/packed-refs" 2>/dev/null | head -1
	fi
	;;
*) echo "$head" ;;
esac
