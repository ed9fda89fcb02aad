// Package partlog is the partition log as the filesystem sees it: the narrow
// interface that fs/ is written against. The local-disk implementation is
// logstore; a Kafka-cluster backend would be another implementation of the
// same interfaces. It owns no data and does no I/O.
package partlog

import (
	"errors"

	"github.com/partfs/partfs/record"
)

// Errors shared by every backend. fs/ maps them to errno in one place.
var (
	ErrNotFound = errors.New("not found")         // ENOENT
	ErrInvalid  = errors.New("invalid argument")  // EINVAL
	ErrTooLarge = errors.New("record too large")  // EFBIG
	ErrReadOnly = errors.New("read-only")         // EROFS
	ErrExists   = errors.New("already exists")    // EEXIST
	ErrNoSpace  = errors.New("no space left")     // ENOSPC
	ErrCorrupt  = errors.New("corrupt log data")  // EIO; record.ErrCorruption also maps to EIO
	ErrTimeout  = errors.New("backend timed out") // ETIMEDOUT: a remote backend did not answer in time
	ErrDenied   = errors.New("permission denied") // EACCES: a remote backend refused the principal
)

// Special timestamps for Log.OffsetForTime, as in Kafka's ListOffsets.
const (
	Latest       int64 = -1 // the log end offset
	Earliest     int64 = -2 // the log start offset
	MaxTimestamp int64 = -3 // the first record with the largest timestamp
)

// Store is a set of topics, each with partitions numbered from 0.
type Store interface {
	Topics() []string
	// Partitions returns the partition count of topic (ErrNotFound if none).
	Partitions(topic string) (int, error)
	// CreateTopic creates topic with one partition (ErrInvalid for a bad
	// name, ErrExists if present).
	CreateTopic(topic string) error
	// AddPartition adds partition n, which must equal the partition count.
	AddPartition(topic string, n int) error
	Partition(topic string, n int) (Log, error)
	// TopicConfig returns every effective property (Kafka names) with its value.
	TopicConfig(topic string) ([]KV, error)
	// SetTopicConfig validates all of kv, then changes those keys and no
	// others, persistently; on any bad key or value it changes nothing and
	// returns an error wrapping ErrInvalid.
	SetTopicConfig(topic string, kv []KV) error
	ReadOnly() bool
	Close() error
}

// KV is one configuration property.
type KV struct{ Key, Value string }

// Log is one partition.
type Log interface {
	Topic() string
	Partition() int
	StartOffset() int64
	EndOffset() int64

	// Append appends recs atomically (all or none) as one or more
	// consecutive batches, assigning offsets from the log end offset.
	// A record's Timestamp <= 0 means now; the topic's
	// message.timestamp.type and compression.type apply. It returns the
	// first offset assigned. Errors wrap ErrTooLarge, ErrReadOnly,
	// ErrNoSpace, or describe an I/O failure.
	Append(recs []record.Record) (first int64, err error)
	// Sync makes everything appended so far durable.
	Sync() error

	// Segments returns a consistent snapshot of the segment list, oldest
	// first; the files stay readable until release is called.
	Segments() (segs []Segment, release func())
	// Read calls fn for each record of seg with offset >= from, in offset
	// order, stopping at seg.Next (the snapshot's end), when fn returns
	// false, or at an error (corruption wraps ErrCorrupt). Control records
	// and records of aborted transactions are skipped. The record passed to
	// fn is valid only during the call.
	Read(seg Segment, from int64, fn func(*record.Record) bool) error
	// OffsetForTime resolves ts (epoch ms, or Latest/Earliest/MaxTimestamp)
	// with Kafka's ListOffsets rules; if no record qualifies it returns the
	// log end offset.
	OffsetForTime(ts int64) (int64, error)

	// Changed returns a channel closed at the next append or change of the
	// segment list (roll, retention, compaction swap).
	Changed() <-chan struct{}
	Stats() Stats

	// LoadSidecar and SaveSidecar keep small files a consumer of the log
	// needs beside the partition (in a place Kafka ignores); SaveSidecar is
	// durable. LoadSidecar returns ErrNotFound when absent.
	LoadSidecar(name string) ([]byte, error)
	SaveSidecar(name string, data []byte) error
}

// LineAppender is a Log that takes text as it is written to a plain log
// file. AppendLines appends, atomically, one record per '\n'-terminated
// line of the chunks, in order: no key, headers or timestamp, the line
// without its '\n' as value (record.AppendLineRecords); bytes after a
// chunk's last '\n' are ignored. It is Append of those records, with the
// same errors, without a record made per line; it returns the first offset
// and the number of records. The filesystem uses it where a Log has it.
type LineAppender interface {
	AppendLines(chunks ...[]byte) (first int64, n int, err error)
}

// Segment describes one segment in a snapshot.
type Segment struct {
	Base         int64  // base offset
	Next         int64  // offset after the last record (for the active segment, as of the snapshot)
	Size         int64  // bytes of the segment file as of the snapshot
	MaxTimestamp int64  // largest record timestamp, -1 if none
	ID           uint64 // changes whenever the segment's content is rewritten (compaction, truncation)
	// Slot > 0 is where the segment's rendered ranges begin (in every
	// rendering) when the segment before it has not been rendered: a
	// backend without segment files, whose segments are windows of
	// offsets, places them on a fixed lattice so that placing one never
	// reads those before it. 0: the range begins where the previous
	// segment's rendering ends.
	Slot int64
}

// Stats is what `stat` shows of a partition (SPEC §5).
type Stats struct {
	LogStartOffset    int64
	LogEndOffset      int64
	Records           int64 // records a reader of log.jsonl sees now
	Segments          int
	SizeBytes         int64
	FirstTimestampMs  int64
	MaxTimestampMs    int64
	RecoveryPoint     int64
	CleanerCheckpoint int64
	DirtyRatio        float64
	CleanupPolicy     string
	CompressionType   string
}
