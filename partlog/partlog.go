// Package partlog is the partition log as the filesystem sees it: the narrow
// interface that fs/ is written against. The local-disk implementation is
// logstore; partlog/memlog keeps partitions in memory; a Kafka-cluster
// backend is another implementation of the same interfaces. It owns no data
// and does no I/O.
//
// The rules below are what fs/ (and keyindex, metrics) rely on; the
// conformance suite partlog/partlogtest checks each of them on a backend.
//
//   - Offsets. A partition's offsets are StartOffset <= EndOffset; every
//     record has one, records come in increasing offset order, and offsets
//     may have gaps (compaction, transaction markers, aborted records).
//   - Appends. Append is atomic (all or none) and contiguous: its records
//     get first, first+1, ... with no other writer's record between them,
//     and EndOffset is first+len(recs) when it returns. Records read back
//     carry the key, value, headers and (for a positive Timestamp under
//     CreateTime) the timestamp given.
//   - Segments. A snapshot is at least one segment, oldest first, with
//     strictly increasing Base, seg[i].Next <= seg[i+1].Base, and the last
//     Next equal to the EndOffset as of the snapshot. A snapshot is never
//     modified once returned; a backend may return the same one again
//     (the same slice) while nothing in it changed, and only then, so a
//     consumer that meets a snapshot it has seen skips reconciling it (a
//     cluster's snapshot of a long partition holds thousands of tiles).
//     ID is never 0. While a
//     segment keeps its Base and ID, the records below an earlier snapshot's
//     Next never change and Next and Size never decrease; rewriting its
//     content (compaction, truncation) gives it a new ID. The records of a
//     snapshot stay readable until release, also after retention removed
//     the segment. A backend without segment files (a cluster) still cuts
//     the partition into offset ranges with these rules; its Size is a
//     measure of the range's content that obeys them, and its Slot places
//     each range on a fixed lattice of positions, so that fs can place a
//     range without reading all those before it.
//   - Reopen. IDs need not survive a reopen of the store; Stamps do: a
//     segment keeps its Stamp while it keeps its ID (a Stamp 0 may become
//     nonzero once the backend can tell, not the other way), also across a reopen
//     while its content only grows, and a segment whose content was
//     rewritten (compaction, also one that merged several segments into
//     one with the first one's Base, truncation, also while the store was
//     closed) never has the Stamp of what it replaced. fs matches what it
//     kept of a segment (in a sidecar) by Base and Stamp, and trusts what
//     it rendered of it while Next and Size are no smaller than they were.
//     Stamp 0 means the backend cannot tell: fs keeps where the segment's
//     range starts and renders its records again. A Log whose rewrites may
//     leave no trace at all (a cluster compacts while nothing is mounted)
//     is a RewritesUnseen, and fs does so for every segment.
//   - Reads. Read yields the records of a snapshot segment with offsets in
//     [max(from, Base), Next), ascending, and only what a read_committed
//     consumer sees: no control records, no records of aborted transactions.
//     A backend that learns of a rewrite only by reading (a cluster) may
//     find in a Read that the segment was rewritten since the snapshot: it
//     then yields the records as they are now, gives the segment a new ID
//     in later snapshots and closes Changed before Read returns; fs places
//     a reader again when Changed closed while it placed it.
//   - Time. OffsetForTime follows Kafka's ListOffsets: Latest is EndOffset,
//     Earliest is StartOffset, MaxTimestamp the first record with the
//     largest timestamp (EndOffset when empty), and a timestamp ts >= 0 the
//     first record (offset order) with timestamp >= ts, EndOffset if none;
//     other negative values are ErrInvalid.
//   - Changes. Changed returns a channel that stays open while nothing
//     changes and is closed after the next append or segment-list change.
//   - Sidecars are durable small files beside the partition, keyed by a name
//     without '/'; an absent one is ErrNotFound.
//   - Errors wrap the sentinels below; fs/ maps them to errno in one place.
//     Unknown topic or partition: ErrNotFound; a bad name, partition number,
//     config key or value: ErrInvalid (and nothing changed); an existing
//     topic or partition: ErrExists; a record over max.message.bytes:
//     ErrTooLarge (and nothing appended); any change on a read-only store:
//     ErrReadOnly.
//
// Optional capabilities are the interfaces LineAppender, SegmentFiler,
// RewritesUnseen, Refresher, Bounded and SidecarWriter (of a Log),
// SegmentFileDuper (of a SegmentFile) and PartitionLister, GroupStore and
// BulkSyncer (of a Store); fs/ uses them where a backend has them and
// reaches nothing else of it.
package partlog

import (
	"context"
	"errors"
	"fmt"
	"io"
	"iter"
	"os"
	"strings"
	"time"

	"github.com/partfs/partfs/config"
	"github.com/partfs/partfs/kafkaname"
	"github.com/partfs/partfs/record"
)

// Errors shared by every backend. fs/ maps them to errno in one place.
var (
	ErrNotFound = errors.New("not found")         // ENOENT
	ErrInvalid  = config.ErrInvalid               // EINVAL; every error of package config wraps it
	ErrTooLarge = errors.New("record too large")  // EFBIG
	ErrReadOnly = errors.New("read-only")         // EROFS
	ErrExists   = errors.New("already exists")    // EEXIST
	ErrNoSpace  = errors.New("no space left")     // ENOSPC
	ErrCorrupt  = record.ErrCorruption            // EIO: damaged stored data; those naming file and position are *record.CorruptionError
	ErrTimeout  = errors.New("backend timed out") // ETIMEDOUT: a remote backend did not answer in time
	ErrDenied   = errors.New("permission denied") // EACCES: a remote backend refused the principal
	ErrBusy     = errors.New("busy")              // EBUSY: a consumer group with active members
)

// Special timestamps for Log.OffsetForTime, as in Kafka's ListOffsets.
const (
	Latest       int64 = -1 // the log end offset
	Earliest     int64 = -2 // the log start offset
	MaxTimestamp int64 = -3 // the first record with the largest timestamp
)

// Store is a set of topics, each with partitions numbered from 0.
type Store interface {
	// Topics returns the topic names, sorted; an error when they cannot
	// be listed (a cluster that does not answer: ErrTimeout).
	Topics() ([]string, error)
	// Partitions returns the partition count of topic (ErrNotFound if none).
	Partitions(topic string) (int, error)
	// CreateTopic creates topic with one partition (ErrInvalid for a bad
	// name, ErrExists if present).
	CreateTopic(topic string) error
	// AddPartition adds partition n, which must equal the partition count
	// (CheckNextPartition: ErrExists below it, ErrInvalid above it).
	AddPartition(topic string, n int) error
	Partition(topic string, n int) (Log, error)
	// TopicConfig returns every effective property (Kafka names) with its
	// value and source: at least every key of config.Keys.
	TopicConfig(topic string) ([]KV, error)
	// SetTopicConfig validates all of kv, then changes those keys and no
	// others, persistently; on any bad key or value it changes nothing and
	// returns an error wrapping ErrInvalid.
	SetTopicConfig(topic string, kv []KV) error
	ReadOnly() bool
	Close() error
}

// KV is one configuration property. Source says where an effective
// value comes from (TopicConfig; ignored by SetTopicConfig): SourceTopic,
// SourceDefault, or the cluster's own word for it (a broker setting).
type KV struct{ Key, Value, Source string }

// Sources of configuration values.
const (
	SourceTopic   = "topic"   // set for this topic
	SourceDefault = "default" // Kafka's default
	// SourceAssumed: the cluster does not report the key; partfs
	// assumes Kafka's default.
	SourceAssumed = "not reported by the cluster, Kafka's default assumed"
)

// KVPairs yields kvs as key, value pairs (for config.Reported).
func KVPairs(kvs []KV) iter.Seq2[string, string] {
	return func(yield func(string, string) bool) {
		for _, kv := range kvs {
			if !yield(kv.Key, kv.Value) {
				return
			}
		}
	}
}

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
	// first offset assigned. On a compacted topic a record without a key
	// is refused, nothing appended (ErrInvalid: CheckKeyed). Errors wrap
	// ErrTooLarge, ErrReadOnly, ErrNoSpace, ErrInvalid, or describe an I/O
	// failure.
	Append(recs []record.Record) (first int64, err error)
	// Sync makes everything appended so far durable.
	Sync() error

	// Segments returns a consistent snapshot of the segment list, oldest
	// first: at least one segment, even for an empty log (see the package
	// doc for its invariants); the records stay readable through it until
	// release is called, even after retention or compaction replaced them.
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
	// segment list (roll, retention, compaction swap), also one made by
	// another writer; it is not closed while nothing changes.
	Changed() <-chan struct{}
	Stats() Stats

	// LoadSidecar and SaveSidecar keep small files a consumer of the log
	// needs beside the partition (in a place Kafka ignores), one set per
	// partition; SaveSidecar is durable and replaces the whole content.
	// LoadSidecar returns ErrNotFound when absent; a name that is empty,
	// "." or "..", or holds '/', is ErrInvalid; SaveSidecar on a read-only
	// store is ErrReadOnly.
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
	Size         int64  // bytes of the segment file as of the snapshot (a backend without files: a measure of the content that grows with it)
	MaxTimestamp int64  // largest record timestamp, -1 if none
	ID           uint64 // never 0; changes whenever the segment's content is rewritten (compaction, truncation)
	// Stamp identifies the content across a reopen of the store (see
	// Reopen in the package doc): a file's device, inode and birth time;
	// 0 if unknown.
	Stamp uint64
	// Slot > 0 is where the segment's rendered ranges begin (in every
	// rendering) when the segment before it has not been rendered: a
	// backend without segment files, whose segments are tiles of
	// offsets, places them on a fixed lattice so that placing one never
	// reads those before it. 0: the range begins where the previous
	// segment's rendering ends.
	Slot int64
}

// Stats is what `stat` shows of a partition (docs/spec.md §5).
type Stats struct {
	LogStartOffset int64
	LogEndOffset   int64
	Records        int64 // records a reader of log.jsonl sees now
	// RecordsBound: Records is only an upper bound (the offsets between
	// start and end), for a backend that has not counted them all yet.
	RecordsBound bool
	// Segments: the segment count, -1 where the backend cannot tell (a
	// cluster: its offset tiles are not the brokers' segments)
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

// RewritesUnseen is a Log whose segments may have been rewritten while
// the store was closed with no trace in their Base, Next or Size.
// UnseenRewrites returns true for such a Log: across a reopen fs keeps
// where each segment's ranges start (positions outside a rewritten
// segment do not move) and renders the records of each segment with
// Stamp 0 again before it places or reads one inside it, so a rewritten
// segment's records close up inside its range. Such a Log gives a segment
// a nonzero Stamp only while it holds a fingerprint of its content, kept
// across a reopen, that its Reads check as the Reads rule says (a rewrite
// found gives a new ID and Stamp and closes Changed): fs keeps what it
// rendered of such a segment, as of any other Log.
type RewritesUnseen interface {
	UnseenRewrites() bool
}

// Refresher is a Log that uses its start and end offsets for a while
// before it asks for them again (a cluster's). Refresh asks for them now:
// Segments, StartOffset and EndOffset called after it returns show every
// append acknowledged before it was called. fs calls it when `log` or
// `log.jsonl` is opened for reading, whose end is the log end as of the
// open (SPEC §3).
type Refresher interface {
	Refresh() error
}

// Bounded is a Log whose calls wait on a remote backend (a cluster's).
// WithContext returns the same partition (sharing all its state) whose
// calls, all together, end by one deadline: the backend's timeout from
// the call of WithContext, or earlier when ctx is done. fs gives each
// request of the filesystem such a Log, so that the request waits no
// longer than the timeout in total, however many calls it makes; a call
// past the deadline fails with ErrTimeout.
type Bounded interface {
	WithContext(ctx context.Context) Log
}

// GroupStore is a Store whose consumer groups are kept by someone else
// (a cluster's group coordinator) rather than in the store's own
// __consumer_offsets topic; fs/ shows .groups/ from it. A Store without it
// keeps its groups in __consumer_offsets, which fs/ reads and appends to.
type GroupStore interface {
	// GroupNames lists the consumer groups, sorted.
	GroupNames() ([]string, error)
	// DescribeGroup returns a group's committed offsets and members
	// (ErrNotFound: no such group).
	DescribeGroup(group string) (Group, error)
	// CommitOffsets commits offsets for group, all or none, only while it
	// has no active members (else ErrBusy and nothing changed).
	CommitOffsets(group string, offsets []GroupOffset) error
}

// Group is a consumer group: its committed offsets and its members.
type Group struct {
	Offsets []GroupOffset
	Members []GroupMember
}

// GroupOffset is a group's offset for one partition.
type GroupOffset struct {
	Topic     string
	Partition int32
	Offset    int64
}

// GroupMember is a member of a group and the partitions assigned to it.
type GroupMember struct {
	ID, ClientID, Host string
	Assigned           []GroupOffset // Offset unused
}

// PartitionLister is a Store whose topics may lack some of the partitions
// below their count (a data directory holding only some of them, as a
// broker's JBOD disk does). fs/ lists, and finds, only the partitions it
// returns; a Store without it has every partition below the count.
type PartitionLister interface {
	// PartitionNumbers returns the partitions of topic that exist,
	// ascending (ErrNotFound for no such topic). A partition that exists
	// but cannot be opened is listed; opening it gives its error.
	PartitionNumbers(topic string) ([]int, error)
}

// BulkSyncer is a Store that makes what was written to many partitions
// durable at once, with one sync of its filesystem rather than one per
// file: after SyncAll returns nil, every record appended before the call
// and every sidecar written before it (SaveSidecar or WriteSidecar) is
// durable. fs/ uses it to save many position sidecars at unmount.
type BulkSyncer interface {
	SyncAll() error
}

// SidecarWriter is a Log of a BulkSyncer store whose sidecars can be
// written without a sync of their own: WriteSidecar replaces a sidecar
// as SaveSidecar does (the same names and errors), and after a crash
// before the store's next SyncAll the old content or the new one is
// found whole.
type SidecarWriter interface {
	WriteSidecar(name string, data []byte) error
}

// SegmentFiler is a Log whose partition is a directory of Kafka's own files
// on local disk; fs/ shows them, read-only, under segments/. A Log without
// it has no segments/ directory. Its records change only through it, so
// every change shows in its snapshots (a new segment ID): fs/ lets the
// kernel cache the rendered views of such a Log only. Only Kafka's files of that partition are
// ever listed or opened (segment files by their 20-digit base name with
// .log, .index, .timeindex, .txnindex or .snapshot, optionally followed by
// .deleted, .cleaned or .swap; leader-epoch-checkpoint; partition.metadata),
// only when they are regular files, and never through a symbolic link.
type SegmentFiler interface {
	// SegmentFiles lists those files, sorted by name.
	SegmentFiles() ([]FileInfo, error)
	// StatSegmentFile describes one of them; any other name (including a
	// symbolic link or a non-regular file of a listed name) is ErrNotFound.
	StatSegmentFile(name string) (FileInfo, error)
	// OpenSegmentFile opens one of them for reading, with the same rule.
	OpenSegmentFile(name string) (SegmentFile, error)
}

// FileInfo describes one file of a SegmentFiler.
type FileInfo struct {
	Name    string
	Size    int64 // bytes
	Blocks  int64 // 512-byte blocks allocated on disk, as st_blocks
	ModTime time.Time
	// ID identifies the file behind the name (its inode number): it
	// differs once the name is given to another file, as a compaction
	// swap does, and stays while the file grows. 0 if unknown.
	ID uint64
}

// SegmentFile is an open file of a SegmentFiler.
type SegmentFile interface {
	io.ReaderAt
	io.Closer
}

// SegmentFileDuper is a SegmentFile that is an operating-system file.
// DupFile returns a new *os.File of the same open file, read-only, which
// the caller closes: fs/ hands it to the kernel so that reads of the file
// bypass the daemon (FUSE passthrough). It reads exactly what ReadAt
// reads, and holds the file opened under the SegmentFiler's rules (no
// symbolic link, inside the partition). An error means there is no such
// file; fs/ then serves reads through ReadAt.
type SegmentFileDuper interface {
	DupFile() (*os.File, error)
}

// CheckTopic applies Kafka's topic name rule (kafkaname.CheckTopic); a bad
// name wraps ErrInvalid.
func CheckTopic(name string) error {
	if err := kafkaname.CheckTopic(name); err != nil {
		return fmt.Errorf("%w: %w", err, ErrInvalid)
	}
	return nil
}

// CheckNewTopic refuses (ErrInvalid) a topic name that collides with an
// existing one under Kafka's '.'/'_' rule (kafkaname.Collides).
func CheckNewTopic(name string, existing []string) error {
	for _, e := range existing {
		if kafkaname.Collides(name, e) {
			return fmt.Errorf("topic name %q collides with existing topic %q ('.' and '_' are one character to Kafka): %w",
				name, e, ErrInvalid)
		}
	}
	return nil
}

// CheckSidecarName refuses a sidecar name that is empty, "." or "..", or
// holds '/' or NUL (wrapping ErrInvalid).
func CheckSidecarName(name string) error {
	if name == "" || name == "." || name == ".." || strings.ContainsAny(name, "/\x00") {
		return fmt.Errorf("sidecar name %q: %w", name, ErrInvalid)
	}
	return nil
}
