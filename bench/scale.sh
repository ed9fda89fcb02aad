#!/usr/bin/env bash
# Scale benchmarks: stop, start and start after SIGKILL of 10,000
# partitions beside go-fuse's loopback of as many empty files, RSS with a
# budget, and line readers' first line of @offset/@time/@key beside the
# same readers on a plain file through the go-fuse baseline. Needs root
# and /dev/fuse. Options go to scalebench:
#   bench/scale.sh -rounds 3 -topics 100 -per 100 -records 1500000 [-huge] [-work DIR]
# PARTFS_BENCH_HUGE=1 adds the 100,000-partition run (minutes; not in CI).
. "$(dirname "$0")/build.sh" baseline scalebench
exec bin/scalebench -partfs bin/partfs -baseline bin/fsbench-baseline "$@"
