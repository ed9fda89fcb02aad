package memlog

import (
	"bytes"
	"fmt"
	"strconv"

	"github.com/partfs/partfs/partlog"
	"github.com/partfs/partfs/record"
)

// REQUIRES: mu held.
func (l *Log) retired(id uint64) (*segment, bool) {
	for _, s := range l.gone {
		if s.id == id {
			return s, true
		}
	}
	return nil, false
}

// OffsetForTime resolves ts with ListOffsets rules by a linear scan.
func (l *Log) OffsetForTime(ts int64) (int64, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	switch ts {
	case partlog.Latest:
		return l.end, nil
	case partlog.Earliest:
		return l.start, nil
	case partlog.MaxTimestamp:
		best, bestTs := l.end, int64(-1)
		l.each(func(r *record.Record) {
			if r.Timestamp > bestTs {
				best, bestTs = r.Offset, r.Timestamp
			}
		})
		return best, nil
	}
	if ts < 0 {
		return 0, fmt.Errorf("timestamp %d: %w", ts, partlog.ErrInvalid)
	}
	found := l.end
	l.each(func(r *record.Record) {
		if found == l.end && r.Timestamp >= ts {
			found = r.Offset
		}
	})
	return found, nil
}

// each visits every record from the log start. REQUIRES: mu held.
func (l *Log) each(fn func(*record.Record)) {
	for _, s := range l.segs {
		for i := range s.recs {
			if s.recs[i].Offset >= l.start {
				fn(&s.recs[i])
			}
		}
	}
}

// Stats describes the partition.
func (l *Log) Stats() partlog.Stats {
	conf := l.store.config(l.topic)
	l.mu.Lock()
	defer l.mu.Unlock()
	st := partlog.Stats{LogStartOffset: l.start, LogEndOffset: l.end, Segments: len(l.segs),
		FirstTimestampMs: -1, MaxTimestampMs: -1, RecoveryPoint: l.end,
		CleanupPolicy: conf.CleanupPolicy, CompressionType: conf.Compression}
	for _, s := range l.segs {
		st.SizeBytes += s.size
	}
	l.each(func(r *record.Record) {
		if st.Records == 0 {
			st.FirstTimestampMs = r.Timestamp
		}
		st.Records++
		st.MaxTimestampMs = max(st.MaxTimestampMs, r.Timestamp)
	})
	return st
}

// LoadSidecar returns a stored sidecar (ErrNotFound when absent).
func (l *Log) LoadSidecar(name string) ([]byte, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	b, ok := l.sidecars[name]
	if !ok {
		return nil, fmt.Errorf("sidecar %s: %w", name, partlog.ErrNotFound)
	}
	return bytes.Clone(b), nil
}

// SaveSidecar stores a sidecar; its name must not be empty, ".", ".." or
// contain '/'.
func (l *Log) SaveSidecar(name string, data []byte) error {
	if err := partlog.CheckSidecarName(name); err != nil {
		return err
	}
	if l.store.opt.ReadOnly {
		return fmt.Errorf("sidecar %s of %s: %w", name, l, partlog.ErrReadOnly)
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	l.sidecars[name] = bytes.Clone(data)
	return nil
}

// Roll seals the active segment (if not empty) and starts a new one.
func (l *Log) Roll() {
	l.mu.Lock()
	defer l.mu.Unlock()
	if len(l.segs[len(l.segs)-1].recs) == 0 {
		return
	}
	l.segs = append(l.segs, &segment{base: l.end, id: l.store.newID(), maxTs: -1})
	l.notify()
}

// DeleteOldest removes the n oldest segments (never the active one), as
// retention does, and moves the log start offset.
func (l *Log) DeleteOldest(n int) int {
	l.mu.Lock()
	defer l.mu.Unlock()
	n = min(n, len(l.segs)-1)
	if n <= 0 {
		return 0
	}
	l.gone = append(l.gone, l.segs[:n]...)
	l.segs = append([]*segment(nil), l.segs[n:]...)
	l.start = l.segs[0].base
	l.notify()
	return n
}

// CompactSealed keeps only the latest record of each key in the sealed
// segments (records with a null key are kept), merging all sealed segments
// into one with the first one's base offset and a new ID.
func (l *Log) CompactSealed(dropTombstones bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if len(l.segs) < 2 {
		return
	}
	latest := map[string]int64{}
	l.each(func(r *record.Record) {
		if r.Key != nil {
			latest[string(r.Key)] = r.Offset
		}
	})
	sealed := l.segs[:len(l.segs)-1]
	merged := &segment{base: sealed[0].base, id: l.store.newID(), maxTs: -1}
	for _, s := range sealed {
		for _, r := range s.recs {
			keep := r.Key == nil || latest[string(r.Key)] == r.Offset
			if keep && dropTombstones && r.Value == nil && r.Key != nil {
				keep = false
			}
			if keep {
				merged.recs = append(merged.recs, r)
				merged.size += recSize(&r)
				merged.maxTs = max(merged.maxTs, r.Timestamp)
			}
		}
	}
	l.gone = append(l.gone, sealed...)
	l.segs = append([]*segment{merged}, l.segs[len(l.segs)-1])
	l.notify()
}

// String names the partition.
func (l *Log) String() string { return l.topic.name + "-" + strconv.Itoa(l.part) }
