package compact

import (
	"io"
	"time"

	"github.com/partfs/partfs/config"
	"github.com/partfs/partfs/partlog"
	"github.com/partfs/partfs/record"
)

// Target is a partition log as the cleaner uses it: the cleaner section of
// logstore's API, behind an interface so the cleaning
// logic can be tested on its own. logstore.go adapts *logstore.Log.
type Target interface {
	Topic() string
	Partition() int
	StartOffset() int64
	// Segments is a snapshot of the segment list, oldest first, the last
	// one active; release it when done.
	Segments() (segs []partlog.Segment, release func())
	Config() config.Topic
	CleanerCheckpoint() int64
	SetCleanerCheckpoint(offset int64) error
	SegmentReader(seg partlog.Segment) (r io.ReaderAt, release func(), err error)
	// Read reads the records of seg from offset from on as a consumer
	// would (control records and aborted transactions skipped).
	Read(seg partlog.Segment, from int64, fn func(*record.Record) bool) error
	SegmentModTime(seg partlog.Segment) time.Time
	// NewCleaned starts the cleaned segment named by base.
	NewCleaned(base int64) (Cleaned, error)
	// Replace swaps cleaned in for old (crash-safe, see logstore).
	Replace(cleaned []Cleaned, old []partlog.Segment) error
	// AbortedTxns returns the aborted transactions (the .txnindex entries)
	// overlapping [from, to), by first offset.
	AbortedTxns(from, to int64) []AbortedTxn
}

// AbortedTxn is one aborted transaction, as a .txnindex entry holds it.
type AbortedTxn struct {
	ProducerID, FirstOffset, LastOffset, LastStableOffset int64
}

// Cleaned is a cleaned segment being written.
type Cleaned interface {
	AppendBatch(raw []byte) error
	// AddAbortedTxn keeps an aborted transaction in its .txnindex.
	AddAbortedTxn(t AbortedTxn)
	Size() int64
	Abort() error
}

// LogConfigOf takes what the cleaner needs from a topic's configuration.
func LogConfigOf(t config.Topic) LogConfig {
	return LogConfig{
		Compacted:              t.Compacted(),
		MinCleanableDirtyRatio: t.MinCleanableDirtyRatio,
		DeleteRetentionMs:      t.DeleteRetentionMs,
		MinCompactionLagMs:     t.MinCompactionLagMs,
		MaxCompactionLagMs:     t.MaxCompactionLagMs,
		SegmentBytes:           t.SegmentBytes,
		SegmentIndexBytes:      int64(t.SegmentIndexBytes),
		IndexIntervalBytes:     int64(t.IndexIntervalBytes),
	}
}
