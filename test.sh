#!/usr/bin/env bash
# The whole test suite, as CI runs it: unit and end-to-end tests (real FUSE
# mounts driven by real shell tools), then every fuzz target for a bounded time.
#   FUZZTIME=...   budget for every fuzz target, 20s or 50000x (0 to skip
#                  fuzzing); by default each target has its own below
#   TESTFLAGS=...  extra flags for go test (e.g. -run, -v)
set -euo pipefail
cd "$(dirname "$0")"

# Tools the tests run (command:Debian package); Go itself is the only other
# requirement. systest's TestTestScriptInstallsTools checks the list.
need=()
for tool in jq:jq rsync:rsync kcat:kcat vim:vim lz4:lz4 zstd:zstd python3:python3 \
	tar:tar gzip:gzip awk:mawk od:coreutils timeout:coreutils git:git node:nodejs npm:npm; do
	command -v "${tool%%:*}" >/dev/null 2>&1 || need+=("${tool#*:}")
done
if [ ${#need[@]} -gt 0 ] && [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
	echo "test.sh: installing ${need[*]}"
	(apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${need[@]}") >/dev/null 2>&1 ||
		echo "test.sh: could not install ${need[*]}; the tests that need it will say so"
fi

# Another stack's Schema Registry serializers (kafkajs with
# @kafkajs/confluent-schema-registry), which systest's schema tests check
# partfs against.
if command -v npm >/dev/null 2>&1; then
	(cd systest/testdata/srclient && npm install --no-audit --no-fund --no-save --silent >/dev/null 2>&1) ||
		echo "test.sh: could not install systest/testdata/srclient's npm packages; the schema tests will say so"
fi

go vet ./...
go test -count=1 -timeout 40m ${TESTFLAGS:-} ./...

# Fuzzing is bounded by executions, not by time: with a -fuzztime duration
# Go 1.26's coordinator can fail a target with "context deadline exceeded"
# when a worker is mid-call at the deadline (golang/go#75804), a flake with no
# failing input. Each budget is about 15 s of executions on a 2-core machine;
# FUZZTIME (a duration or Nx) overrides them all.
declare -A budget=(
	[FuzzOffsetsText]=900000x [FuzzProperties]=650000x [FuzzFilter]=250000x
	[FuzzSetAndParse]=1000000x [FuzzOffsetIndex]=600000x [FuzzTimeIndex]=600000x
	[FuzzOpenSegment]=140000x [FuzzTimeWalk]=2000x [FuzzScanner]=400000x
	[FuzzV2]=600000x [FuzzLegacy]=450000x [FuzzRecordParsers]=450000x
	[FuzzSimpleRecords]=450000x [FuzzJSONLenAt]=350000x [FuzzAppendJSON]=200000x
	[FuzzPlainASCII]=330000x [FuzzRecordPrefix]=500000x [FuzzDecode]=500000x [FuzzKeep]=600000x
	[FuzzInflate]=300000x [FuzzLZ4Block]=60000x [FuzzUpdate]=1000000x
	[FuzzZstdClaims]=200000x [FuzzSnappyBlock]=300000x [FuzzScanLines]=250000x [FuzzSkipBefore]=400000x [FuzzStringLen]=150000x
	[FuzzAppendJSONString]=30000x [FuzzJSONLine]=100000x [FuzzAppendFloat]=200000x
)
if [ "${FUZZTIME:-}" != 0 ]; then
	grep -rl --include='*_test.go' '^func Fuzz' . | xargs -r -n1 dirname | sort -u | while read -r pkg; do
		for target in $(grep -h '^func Fuzz' "$pkg"/*_test.go | sed 's/^func \(Fuzz[A-Za-z0-9_]*\).*/\1/'); do
			limit=${FUZZTIME:-${budget[$target]:-100000x}}
			echo "fuzz $pkg $target for $limit"
			go test -run='^$' -fuzz="^${target}\$" -fuzztime="$limit" "$pkg"
		done
	done
fi
