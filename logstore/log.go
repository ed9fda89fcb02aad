package logstore

import (
	"bytes"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/sirupsen/logrus"

	"github.com/partfs/partfs/config"
	"github.com/partfs/partfs/partlog"
	"github.com/partfs/partfs/record"
	"github.com/partfs/partfs/vfs"
)

// Log is one partition: a directory of segments. It implements partlog.Log.
type Log struct {
	store     *Store
	topic     string
	partition int
	dir       string
	fs        vfs.FS
	now       func() time.Time
	logger    *logrus.Entry
	readOnly  bool

	mu sync.Mutex
	// guarded by mu
	topicGen          uint64 // the topic entry's generation this partition runs with (topic_gen.go)
	retentionHeld     bool   // the stored entry is missing or older than topicGen: retention by time and size suspended
	cfg               config.Topic
	segs              []*segment          // live segments sorted by base offset; the last is active
	byID              map[uint64]*segment // live segments and segments held by snapshots
	startOffset       int64
	recoveryPoint     int64
	sidecarSaved      []byte // logstore-segments.partfs as read at open or last written
	cleanerCheckpoint int64
	// werr is the sticky error: set when a failed append could not be rolled
	// back or an fsync failed; the log refuses appends until reopened.
	werr      error
	changed   chan struct{}
	watched   bool  // changed was handed out since the last notify
	unflushed int64 // records appended since the last flush
	lastFlush time.Time
	enc       record.Encoder
	buf       []byte
	spans     []int
	pipedLen  int          // bytes of the append that its pipe wrote (see pipe.go)
	cuts      []int        // planned batch ends (indexes into the append's records)
	txns      []abortedTxn // aborted transactions (.txnindex files, markers seen by recovery)
	tracker   *txnTracker  // set while recovery scans
	firstTs   cachedTs
	pending   []pendingDelete // .deleted files awaiting file.delete.delay.ms
	rebuild   []*segment      // segments whose index failed a lookup

	flushMu   sync.Mutex // serializes flushes (never held with mu while syncing)
	replaceMu sync.Mutex // serializes segment-list rewrites that fsync (swaps, retention)
}

var _ partlog.Log = (*Log)(nil)

// Topic returns the topic name.
func (l *Log) Topic() string { return l.topic }

// Partition returns the partition number.
func (l *Log) Partition() int { return l.partition }

// Dir returns the partition directory.
func (l *Log) Dir() string { return l.dir }

// StartOffset returns the log start offset.
func (l *Log) StartOffset() int64 { start, _ := l.offsets(); return start }

// EndOffset returns the log end offset (the next offset to assign).
func (l *Log) EndOffset() int64 { _, end := l.offsets(); return end }

// offsets returns the log start and end offsets, read together.
func (l *Log) offsets() (start, end int64) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.startOffset, l.endLocked()
}

// endLocked is the log end offset. REQUIRES: mu held.
func (l *Log) endLocked() int64 { return l.active().next }

// active is the last segment. REQUIRES: mu held.
func (l *Log) active() *segment { return l.segs[len(l.segs)-1] }

// Config returns the topic's effective configuration.
func (l *Log) Config() config.Topic {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.cfg
}

func (l *Log) setConfig(c config.Topic) {
	l.mu.Lock()
	l.cfg = c
	l.mu.Unlock()
}

// Changed returns a channel closed at the next append or segment-list change.
func (l *Log) Changed() <-chan struct{} {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.watched = true
	return l.changed
}

// notify wakes the waiters of Changed. A channel nobody was given cannot
// be waited on, so an append nobody watches costs no new channel.
// REQUIRES: mu held.
func (l *Log) notify() {
	if !l.watched {
		return
	}
	close(l.changed)
	l.changed = make(chan struct{})
	l.watched = false
}

// Append appends recs atomically as one or more consecutive batches and
// returns the first offset assigned.
func (l *Log) Append(recs []record.Record) (int64, error) {
	first, _, err := l.append(func(first int64, now time.Time) (int, error) {
		if err := partlog.CheckKeyed(l.topic, l.partition, l.cfg.Compacted(), recs); err != nil {
			return 0, err
		}
		return l.encodeRecords(recs, first, now)
	})
	return first, err
}

// AppendLines appends, atomically, a record for each '\n'-terminated line
// of the chunks (as record.AppendLineRecords makes them) and returns the
// first offset assigned and the number of records. Uncompressed, the lines
// are encoded where they lie, with no record made for each.
func (l *Log) AppendLines(chunks ...[]byte) (int64, int, error) {
	return l.append(func(first int64, now time.Time) (int, error) {
		if l.cfg.Compacted() && hasLine(chunks) {
			return 0, partlog.KeylessError(l.topic, l.partition)
		}
		return l.encodeLines(chunks, first, now)
	})
}

// append runs an append whose encode fills l.buf and l.spans with the
// batches of n records at offsets first.. (n = 0: nothing to write).
func (l *Log) append(encode func(first int64, now time.Time) (n int, err error)) (int64, int, error) {
	if l.readOnly {
		return 0, 0, fmt.Errorf("append to %s: %w", l.dir, partlog.ErrReadOnly)
	}
	l.mu.Lock()
	first, n, flush, err := l.appendLocked(encode)
	l.trimBuffers()
	l.mu.Unlock()
	if err == nil && flush {
		err = l.Sync()
	}
	return first, n, err
}

// appendLocked encodes and writes an append; on a write failure it rolls
// the log back to where it was (nothing of the append is left, so ENOSPC
// can be retried once space returns); if the rollback fails too, the error
// becomes sticky. REQUIRES: mu held.
func (l *Log) appendLocked(encode func(first int64, now time.Time) (int, error)) (first int64, n int, flush bool, err error) {
	if l.werr != nil {
		return 0, 0, false, l.werr
	}
	if err := l.refuseChanged(); err != nil {
		return 0, 0, false, err
	}
	first = l.endLocked()
	now := l.now()
	u := l.saveUndo()
	l.pipedLen = 0
	if n, err = encode(first, now); err != nil {
		if l.pipedLen > 0 { // the pipe wrote some of it
			err = l.rollBack(u, err)
		}
		return 0, 0, false, err
	}
	if n == 0 {
		return first, 0, false, nil
	}
	if err := l.writeSpans(now); err != nil {
		return 0, 0, false, l.rollBack(u, err)
	}
	l.unflushed += int64(n)
	l.notify()
	return first, n, l.cfg.FlushMessages > 0 && l.unflushed >= l.cfg.FlushMessages, nil
}

// rollBack undoes a failed append; if it cannot, the error becomes
// sticky. It returns the append's error. REQUIRES: mu held.
func (l *Log) rollBack(u undoState, cause error) error {
	clean, err := l.undo(u, cause)
	if !clean {
		l.werr = err
	}
	return err
}

// writeSpans writes the encoded batches in l.buf, rolling as needed. The
// batches that go to one segment are counted in it batch by batch (rolls
// and index entries as if each were written alone), then written as one
// run by writeRun, or, for the run whose records a pipe wrote already,
// given their headers (finishRun). REQUIRES: mu held.
func (l *Log) writeSpans(now time.Time) error {
	var r run
	piped := l.pipedLen // the first run's records are in the segment
	start := 0
	for _, end := range l.spans {
		raw := l.buf[start:end]
		h, err := record.ParseHeader(raw)
		if err != nil {
			return fmt.Errorf("encoded batch: %w", err)
		}
		if l.shouldRoll(l.active(), &h, now) {
			if err := l.finishRun(r, piped); err != nil {
				return err
			}
			piped = 0
			if err := l.roll(now); err != nil {
				return err
			}
			r = run{}
		}
		a := l.active()
		if r.end == 0 {
			r = run{start: start, firstEnd: end, pos: a.size}
		}
		r.end, start = end, end
		l.reserve(a, len(raw))
		if err := a.countBatch(&h, l.cfg.IndexIntervalBytes); err != nil {
			return err
		}
	}
	return l.finishRun(r, piped)
}

// maxKeptBuffer bounds the encode buffer a Log keeps between appends.
const maxKeptBuffer = 4 << 20

// trimBuffers drops buffers a huge append grew. REQUIRES: mu held.
func (l *Log) trimBuffers() {
	if cap(l.buf) > maxKeptBuffer {
		l.buf = nil
	}
}

// errNoSpaceMapped maps ENOSPC-like errors to partlog.ErrNoSpace.
func wrapIOError(err error) error {
	if err == nil || errors.Is(err, partlog.ErrNoSpace) {
		return err
	}
	if isNoSpace(err) {
		return fmt.Errorf("%w: %w", partlog.ErrNoSpace, err)
	}
	return err
}

// hasLine reports whether a chunk holds a complete line.
func hasLine(chunks [][]byte) bool {
	for _, c := range chunks {
		if bytes.IndexByte(c, '\n') >= 0 {
			return true
		}
	}
	return false
}
