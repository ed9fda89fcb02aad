#!/usr/bin/env bash
# Filesystem benchmarks: builds partfs and the minimal go-fuse
# baseline, then prints each figure with its ratio to the baseline measured
# in the same run. Needs root and /dev/fuse. Options go to fsbench:
#   bench/run.sh -size 1024 -samples 200 -partitions 1000 [-work DIR]
. "$(dirname "$0")/build.sh" baseline fsbench
# 10 alternating rounds unless -rounds says otherwise (a later flag wins).
exec bin/fsbench -partfs bin/partfs -baseline bin/fsbench-baseline -rounds 10 "$@"
