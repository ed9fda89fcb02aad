#!/usr/bin/env bash
# The whole test suite, as CI runs it: unit and end-to-end tests (real FUSE
# mounts driven by real shell tools), then every fuzz target for a bounded time.
#   FUZZTIME=15s   time per fuzz target (0 to skip fuzzing)
#   TESTFLAGS=...  extra flags for go test (e.g. -run, -v)
set -euo pipefail
cd "$(dirname "$0")"

# Tools the end-to-end tests drive; Go itself is the only other requirement.
need=()
command -v jq >/dev/null 2>&1 || need+=(jq)
if [ ${#need[@]} -gt 0 ] && [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
	echo "test.sh: installing ${need[*]}"
	(apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${need[@]}") >/dev/null 2>&1 ||
		echo "test.sh: could not install ${need[*]}; the tests that need it will say so"
fi

go vet ./...
go test -count=1 -timeout 40m ${TESTFLAGS:-} ./...

fuzztime=${FUZZTIME:-15s}
if [ "$fuzztime" != 0 ]; then
	grep -rl --include='*_test.go' '^func Fuzz' . | xargs -r -n1 dirname | sort -u | while read -r pkg; do
		for target in $(grep -h '^func Fuzz' "$pkg"/*_test.go | sed 's/^func \(Fuzz[A-Za-z0-9_]*\).*/\1/'); do
			echo "fuzz $pkg $target for $fuzztime"
			go test -run='^$' -fuzz="^${target}\$" -fuzztime="$fuzztime" "$pkg"
		done
	done
fi
