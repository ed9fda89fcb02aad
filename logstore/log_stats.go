package logstore

import (
	"github.com/partfs/partfs/partlog"
	"github.com/partfs/partfs/record"
)

// cachedTs caches the first record's timestamp of a segment incarnation.
type cachedTs struct {
	id uint64
	ts int64
}

// Stats returns what `stat` shows. Segments whose record count is not
// known yet (loaded without a trusted sidecar) are counted now, once.
func (l *Log) Stats() partlog.Stats {
	l.countUnknown()
	first := l.firstTimestamp()
	l.mu.Lock()
	defer l.mu.Unlock()
	st := partlog.Stats{
		LogStartOffset: l.startOffset, LogEndOffset: l.endLocked(), Segments: len(l.segs),
		FirstTimestampMs: first, MaxTimestampMs: -1, RecoveryPoint: l.recoveryPoint,
		CleanerCheckpoint: l.cleanerCheckpoint, CleanupPolicy: l.cfg.CleanupPolicy,
		CompressionType: l.cfg.Compression,
	}
	var clean, dirty int64
	for i, s := range l.segs {
		st.SizeBytes += s.size
		st.Records += max(s.records, 0)
		st.MaxTimestampMs = max(st.MaxTimestampMs, s.maxTs)
		switch {
		case i == len(l.segs)-1:
		case s.next <= l.cleanerCheckpoint:
			clean += s.size
		default:
			dirty += s.size
		}
	}
	if clean+dirty > 0 {
		st.DirtyRatio = float64(dirty) / float64(clean+dirty)
	}
	return st
}

// countUnknown counts the records of segments with an unknown count.
func (l *Log) countUnknown() {
	segs, release := l.Segments()
	defer release()
	for _, seg := range segs {
		l.mu.Lock()
		s := l.byID[seg.ID]
		unknown := s != nil && s.records < 0
		l.mu.Unlock()
		if !unknown {
			continue
		}
		n := int64(0)
		if err := l.Read(seg, seg.Base, func(*record.Record) bool { n++; return true }); err != nil {
			l.logger.WithError(err).Warn("cannot count the records of a segment")
			continue
		}
		l.mu.Lock()
		if s.records < 0 && s.next == seg.Next {
			s.records = n
		}
		l.mu.Unlock()
	}
}

// firstTimestamp is the timestamp of the first record a reader sees (-1
// when the log is empty), cached per segment incarnation.
func (l *Log) firstTimestamp() int64 {
	segs, release := l.Segments()
	defer release()
	l.mu.Lock()
	start, cached := l.startOffset, l.firstTs
	l.mu.Unlock()
	for _, seg := range segs {
		if seg.Next <= start || seg.Next == seg.Base {
			continue
		}
		if cached.id == seg.ID && cached.id != 0 {
			return cached.ts
		}
		ts, found := int64(-1), false
		err := l.Read(seg, start, func(r *record.Record) bool { ts, found = r.Timestamp, true; return false })
		if err != nil {
			return -1
		}
		if found {
			l.mu.Lock()
			l.firstTs = cachedTs{id: seg.ID, ts: ts}
			l.mu.Unlock()
			return ts
		}
	}
	return -1
}
