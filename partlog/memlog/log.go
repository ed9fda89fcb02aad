package memlog

import (
	"fmt"
	"sync"

	"github.com/partfs/partfs/partlog"
	"github.com/partfs/partfs/record"
)

// Log is one in-memory partition. Segments roll on segment.bytes.
type Log struct {
	store *Store
	topic *topic
	part  int

	mu       sync.Mutex
	segs     []*segment // REQUIRES: mu held; oldest first, last is active
	start    int64      // log start offset
	end      int64      // log end offset
	changed  chan struct{}
	sidecars map[string][]byte
	gone     []*segment // removed segments, still readable through old snapshots
}

// segment holds copies of its records; records before a snapshot's Next
// are never modified, so readers iterate them without the lock.
type segment struct {
	base  int64
	id    uint64
	recs  []record.Record
	size  int64
	maxTs int64
}

var _ partlog.Log = (*Log)(nil)

const batchOverhead = record.BatchHeaderSize + record.LogOverhead

func (s *Store) newLog(t *topic, n int) *Log {
	l := &Log{store: s, topic: t, part: n, changed: make(chan struct{}), sidecars: map[string][]byte{}}
	l.segs = []*segment{{base: 0, id: s.newID(), maxTs: -1}}
	return l
}

// Topic returns the topic name.
func (l *Log) Topic() string { return l.topic.name }

// Partition returns the partition number.
func (l *Log) Partition() int { return l.part }

// StartOffset returns the log start offset.
func (l *Log) StartOffset() int64 {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.start
}

// EndOffset returns the log end offset.
func (l *Log) EndOffset() int64 {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.end
}

// REQUIRES: mu held.
func (l *Log) notify() {
	close(l.changed)
	l.changed = make(chan struct{})
}

// Changed returns a channel closed at the next change.
func (l *Log) Changed() <-chan struct{} {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.changed
}

func recSize(r *record.Record) int64 {
	n := int64(20 + len(r.Key) + len(r.Value))
	for _, h := range r.Headers {
		n += int64(8 + len(h.Key) + len(h.Value))
	}
	return n
}

// AppendLines appends the records record.AppendLineRecords makes of
// chunks, as one batch (partlog.LineAppender).
func (l *Log) AppendLines(chunks ...[]byte) (int64, int, error) {
	recs := record.AppendLineRecords(nil, chunks...)
	first, err := l.Append(recs)
	if err != nil {
		return 0, 0, err
	}
	return first, len(recs), nil
}

// Append appends recs as one batch (all or none).
func (l *Log) Append(recs []record.Record) (int64, error) {
	if l.store.opt.ReadOnly {
		return 0, fmt.Errorf("append to %s-%d: %w", l.topic.name, l.part, partlog.ErrReadOnly)
	}
	conf := l.store.config(l.topic)
	if err := partlog.CheckKeyed(l.topic.name, l.part, conf.Compacted(), recs); err != nil {
		return 0, err
	}
	maxMsg := int64(conf.MaxMessageBytes)
	logAppend := conf.LogAppendTime()
	now := l.store.opt.Now().UnixMilli()
	for i := range recs {
		if sz := recSize(&recs[i]) + batchOverhead; sz > maxMsg {
			return 0, fmt.Errorf("record of %d bytes > max.message.bytes %d: %w", sz, maxMsg, partlog.ErrTooLarge)
		}
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	first := l.end
	seg := l.active(conf.SegmentBytes)
	seg.size += batchOverhead
	for i := range recs {
		r := recs[i].Clone()
		r.Offset = l.end
		if r.Timestamp <= 0 || logAppend {
			r.Timestamp = now
		}
		seg.maxTs = max(seg.maxTs, r.Timestamp)
		seg.size += recSize(&r)
		seg.recs = append(seg.recs, r)
		l.end++
	}
	if len(recs) > 0 {
		l.notify()
	}
	return first, nil
}

// active returns the segment to append to, rolling when full.
// REQUIRES: mu held.
func (l *Log) active(segBytes int64) *segment {
	seg := l.segs[len(l.segs)-1]
	if seg.size > 0 && segBytes > 0 && seg.size >= segBytes {
		seg = &segment{base: l.end, id: l.store.newID(), maxTs: -1}
		l.segs = append(l.segs, seg)
	}
	return seg
}

// Sync does nothing: memory is the medium.
func (l *Log) Sync() error { return nil }

// Segments returns a snapshot of the segment list.
func (l *Log) Segments() ([]partlog.Segment, func()) {
	l.mu.Lock()
	defer l.mu.Unlock()
	out := make([]partlog.Segment, len(l.segs))
	for i, s := range l.segs {
		out[i] = partlog.Segment{Base: s.base, Next: s.next(), Size: s.size, MaxTimestamp: s.maxTs, ID: s.id, Stamp: s.id}
	}
	return out, func() {}
}

func (s *segment) next() int64 {
	if len(s.recs) == 0 {
		return s.base
	}
	return s.recs[len(s.recs)-1].Offset + 1
}

// Read calls fn for the records of seg from offset from.
func (l *Log) Read(seg partlog.Segment, from int64, fn func(*record.Record) bool) error {
	recs, err := l.segRecords(seg)
	if err != nil {
		return err
	}
	i := searchOffset(recs, from)
	for ; i < len(recs) && recs[i].Offset < seg.Next; i++ {
		r := recs[i]
		if !fn(&r) {
			return nil
		}
	}
	return nil
}

func searchOffset(recs []record.Record, from int64) int {
	lo, hi := 0, len(recs)
	for lo < hi {
		m := (lo + hi) / 2
		if recs[m].Offset < from {
			lo = m + 1
		} else {
			hi = m
		}
	}
	return lo
}

// segRecords finds the records of seg (by ID, also after removal).
func (l *Log) segRecords(seg partlog.Segment) ([]record.Record, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, s := range l.segs {
		if s.id == seg.ID {
			return s.recs, nil
		}
	}
	if s, ok := l.retired(seg.ID); ok {
		return s.recs, nil
	}
	return nil, fmt.Errorf("segment %d (id %d) of %s-%d: %w", seg.Base, seg.ID, l.topic.name, l.part, partlog.ErrNotFound)
}
