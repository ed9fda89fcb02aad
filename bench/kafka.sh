#!/usr/bin/env bash
# Kafka-cluster benchmarks: builds partfs and bench/kafkabench, then prints
# each figure of a mount of an in-process cluster (kfake) with its ratio
# to kcat on the same cluster in the same run. Needs root, /dev/fuse and
# kcat. Options go to kafkabench:
#   bench/kafka.sh -records 1000000 -lookups 200 -partitions 1000 [-work DIR]
. "$(dirname "$0")/build.sh" kafkabench
exec bin/kafkabench -partfs bin/partfs "$@"
