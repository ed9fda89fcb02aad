package logstore

import (
	"errors"

	"github.com/partfs/partfs/partlog"
	"github.com/partfs/partfs/record"
)

// OffsetForTime resolves ts with Kafka's ListOffsets rules (kafka-format.md
// §7). When no record qualifies it returns the log end offset.
func (l *Log) OffsetForTime(ts int64) (int64, error) {
	segs, release := l.Segments()
	defer release()
	l.mu.Lock()
	start, end := l.startOffset, l.endLocked()
	l.mu.Unlock()
	switch {
	case ts == partlog.Latest:
		return end, nil
	case ts == partlog.Earliest:
		return start, nil
	case ts == partlog.MaxTimestamp:
		return l.offsetOfMaxTimestamp(segs, end)
	case ts < 0:
		return 0, errInvalidf("timestamp %d", ts)
	}
	for _, seg := range segs {
		if l.largestTimestamp(seg) >= ts {
			off, ok, err := l.findInSegment(seg, ts, start)
			if err != nil || !ok || off >= end {
				return end, err
			}
			return off, nil
		}
	}
	return end, nil
}

// largestTimestamp is Kafka's LogSegment.largestTimestamp: the max record
// timestamp, or the file's modification time when there is none.
func (l *Log) largestTimestamp(seg partlog.Segment) int64 {
	if seg.MaxTimestamp >= 0 {
		return seg.MaxTimestamp
	}
	return l.SegmentModTime(seg).UnixMilli()
}

// findInSegment is LogSegment.findOffsetByTimestamp: time index, offset
// index, then a scan to the first batch with maxTimestamp >= ts and its
// first record with timestamp >= ts and offset >= start.
func (l *Log) findInSegment(seg partlog.Segment, ts, start int64) (int64, bool, error) {
	s, err := l.segmentByID(seg)
	if err != nil {
		return 0, false, err
	}
	defer l.releaseAll([]*segment{s})
	s.ixmu.RLock()
	_, off := s.tidx.Lookup(ts)
	s.ixmu.RUnlock()
	target := max(off, start)
	pos := s.positionFor(target, seg.Size)
	res, found, err := l.scanForTime(s, seg, pos, target, ts, start)
	if err == errIndexMismatch {
		l.scheduleRebuild(s)
		return l.scanForTime(s, seg, 0, target, ts, start)
	}
	return res, found, err
}

func (l *Log) scanForTime(s *segment, seg partlog.Segment, pos, target, ts, start int64) (int64, bool, error) {
	dec := decoders.Get().(*record.Decoder)
	defer decoders.Put(dec)
	first := true
	found, res := false, int64(0)
	err := scanFrom(s, pos, seg.Size, func(b *record.Batch) (bool, error) {
		if first && pos > 0 && b.Header.Magic >= 2 && b.Header.BaseOffset > target {
			return true, errIndexMismatch
		}
		first = false
		if b.Header.MaxTimestamp < ts || b.Header.BaseOffset >= seg.Next && b.Header.Magic >= 2 {
			return false, nil
		}
		err := dec.Records(b, func(r *record.Record) bool {
			if r.Timestamp >= ts && r.Offset >= start && r.Offset < seg.Next {
				found, res = true, r.Offset
				return false
			}
			return true
		})
		if err != nil {
			return true, corruptErr(s, b.Pos, err)
		}
		return true, nil
	})
	switch {
	case err == nil || err == errIndexMismatch || errors.Is(err, partlog.ErrCorrupt):
		return res, found, err
	case first && pos > 0:
		return 0, false, errIndexMismatch
	}
	return 0, false, corruptErr(s, pos, err)
}

// offsetOfMaxTimestamp implements MAX_TIMESTAMP (-3): the segment with the
// largest max timestamp (the first such), the first batch there whose max
// timestamp equals it, the first record in it with that timestamp.
func (l *Log) offsetOfMaxTimestamp(segs []partlog.Segment, end int64) (int64, error) {
	best := -1
	for i, seg := range segs {
		if best < 0 || seg.MaxTimestamp > segs[best].MaxTimestamp {
			best = i
		}
	}
	if best < 0 || segs[best].MaxTimestamp < 0 {
		return end, nil
	}
	seg := segs[best]
	off, found, err := l.findMaxInSegment(seg)
	if err != nil || !found {
		return end, err
	}
	return off, nil
}

func (l *Log) findMaxInSegment(seg partlog.Segment) (int64, bool, error) {
	s, err := l.segmentByID(seg)
	if err != nil {
		return 0, false, err
	}
	defer l.releaseAll([]*segment{s})
	dec := decoders.Get().(*record.Decoder)
	defer decoders.Put(dec)
	found, res := false, int64(0)
	err = scanFrom(s, 0, seg.Size, func(b *record.Batch) (bool, error) {
		if b.Header.MaxTimestamp != seg.MaxTimestamp {
			return false, nil
		}
		err := dec.Records(b, func(r *record.Record) bool {
			if r.Timestamp == seg.MaxTimestamp {
				found, res = true, r.Offset
				return false
			}
			return true
		})
		if err != nil {
			return true, corruptErr(s, b.Pos, err)
		}
		return true, nil
	})
	if err != nil && !errors.Is(err, partlog.ErrCorrupt) {
		err = corruptErr(s, 0, err)
	}
	return res, found, err
}
