// Package fs owns the FUSE filesystem of partfs (docs/spec.md §2–5, §8): the tree of
// topics and partitions, the rendered views (log, log.jsonl, @offset/N,
// @time/T, @key/K) with stable byte positions, appends, the config and stat
// files, and the mapping of partlog errors to errno. It sees the partition
// log only through package partlog, so any backend can be mounted.
//
// Stable positions. Each rendered stream (plain and JSON lines) of a
// partition is one byte stream in which every segment owns a fixed range
// [start(seg), start(next seg)). The start of a new segment is fixed when it
// appears: the start of its predecessor plus the predecessor's rendered
// length at that moment. Retention removes ranges at the front without
// moving the others; a compacted segment keeps its range and its records
// close up inside it, leaving a gap at its end. The starts, rendered lengths
// and a sparse position index (a checkpoint every ~64 KiB of rendering) are
// kept in the sidecar "fs-positions" so a clean mount reads no segment data.
//
// Choices where docs/spec.md is silent: a header whose key or value is not valid
// UTF-8 renders as ["k",{"b64":"..."}]; a log.jsonl line without "value" is
// a tombstone; an empty line written to log.jsonl is invalid (EINVAL);
// removing a topic or partition directory is refused with EPERM.
//
// Schema-encoded keys and values (SPEC §11) are decoded through the
// Schemas interface (schemas.go) and encoded on write (schemas_write.go);
// .schemas/ is schemadir.go.
package fs
