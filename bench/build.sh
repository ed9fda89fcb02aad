# Sourced by the bench scripts: moves to the repository's top and builds
# bin/partfs and, for each argument NAME, bin/NAME from ./bench/NAME
# (bench/baseline becomes bin/fsbench-baseline, the programs' default).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
mkdir -p bin
go build -o bin/partfs ./cmd/partfs
for name in "$@"; do
	out=$name
	if [ "$name" = baseline ]; then out=fsbench-baseline; fi
	go build -o "bin/$out" "./bench/$name"
done
