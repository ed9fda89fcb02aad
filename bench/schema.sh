#!/usr/bin/env bash
# Schema-encoded payloads: builds partfs and bench/schemabench, then prints
# `cat log.jsonl` of Avro records (a mount of an in-process cluster, the
# schema from a registry stand-in) with its ratio to a Go consumer loop
# (franz-go, pkg/sr, hamba/avro, encoding/json) and to `cat log.jsonl` of
# the same records as JSON text, measured in the same run. Needs root and
# /dev/fuse. Options go to schemabench:
#   bench/schema.sh -records 1000000 -rounds 3 [-work DIR]
. "$(dirname "$0")/build.sh" schemabench
exec bin/schemabench -partfs bin/partfs "$@"
