// Package logstore owns the partition log on local disk: a Kafka-compatible
// data directory (Store) holding one directory per partition (Log), each a
// list of segments (.log + .index + .timeindex, named by their 20-digit base
// offset). It implements partlog.Store and partlog.Log and owns appends,
// rolling, offset and timestamp lookups, loading and crash recovery,
// retention, flushing, checkpoints, and the segment-swap API the log
// cleaner uses.
//
// Locking: each Log has one mutex (Log.mu) that guards the segment list and
// the append path. Readers take a refcounted snapshot of the segment list and
// then read without the log mutex; segment files stay open until the last
// snapshot holding them is released. fsync never runs under Log.mu: flushes
// copy the file handles (holding references) and sync outside it.
//
// Reads: an offset is located as Kafka does it (Locate): the offset index,
// then a scan of batch headers only; Read then reads the batch holding it
// with one pread (CRC-checked) and the rest of the segment with one pooled
// record.Scanner. Time lookups, as Kafka's, walk the records of an
// uncompressed batch only up to the answer and leave its CRC to reads
// (compressed batches are read whole, CRC-checked, and decoded). Decoders,
// scanners and buffers are pooled (no allocation per call).
//
// Record counts (Stats.Records) are maintained per segment: appends and
// recovery count as they go; segments loaded on a clean open get their counts
// from the logstore-segments.partfs sidecar written at clean close, and any
// segment without a trusted count is counted lazily, once, by the first Stats
// call that needs it.
//
// Files are grouped by what they serve: store_* the data directory (open,
// load, topics, checkpoints, the KRaft metadata read, options); log_* one
// partition's Log, with log_append_* the write path (encode, pipe, roll,
// undo) and log_read_* the read path (locate, scan, mapped reads, time
// lookups); segment_* one segment's files (indexes, .txnindex, identity,
// stamp, the files fs lists); recovery_* what an open repairs; maint_*
// background work (flush timers, retention, the cleaner's swap).
package logstore
