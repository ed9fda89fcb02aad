package logstore

import (
	"errors"
	"fmt"

	"github.com/partfs/partfs/partlog"
	"github.com/partfs/partfs/record"
)

// OffsetForTime resolves ts with Kafka's ListOffsets rules (kafka-format.md
// §7). When no record qualifies it returns the log end offset.
func (l *Log) OffsetForTime(ts int64) (int64, error) {
	if s, seg, start, end, ok := l.timeSegment(ts); ok {
		if s == nil {
			return end, nil
		}
		defer l.releaseAll([]*segment{s})
		return answerOrEnd(l.findIn(s, seg, ts, start))(end)
	}
	segs, release := l.Segments()
	defer release()
	start, end := l.offsets()
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
			return answerOrEnd(l.findInSegment(seg, ts, start))(end)
		}
	}
	return end, nil
}

// timeSegment is OffsetForTime's common case, under one lock: for a
// timestamp ts >= 0, the first segment whose max timestamp is ts or more,
// acquired (nil when there is none), with the log's start and end
// offsets. ok is false for the other cases: a special timestamp, or a
// segment without timestamps before the one found (its largest timestamp
// is its file's modification time, which the general path reads).
func (l *Log) timeSegment(ts int64) (s *segment, seg partlog.Segment, start, end int64, ok bool) {
	if ts < 0 {
		return nil, seg, 0, 0, false
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	start, end = l.startOffset, l.endLocked()
	for _, x := range l.segs {
		switch {
		case x.maxTs < 0:
			return nil, seg, 0, 0, false
		case x.maxTs >= ts:
			x.acquire()
			return x, x.meta(), start, end, true
		}
	}
	return nil, seg, start, end, true
}

// answerOrEnd turns a segment search's result into OffsetForTime's: the
// log end offset unless it found an offset before it.
func answerOrEnd(off int64, found bool, err error) func(end int64) (int64, error) {
	return func(end int64) (int64, error) {
		if err != nil || !found || off >= end {
			return end, err
		}
		return off, nil
	}
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
// index, then a header-only scan to the batches with maxTimestamp >= ts,
// searched in order for the first record with timestamp >= ts and offset
// >= start (see timeQuery.match; as Kafka's, this path leaves the CRC of
// uncompressed batches to reads). Headers the header-only scan cannot use
// fall back to a checking scan, which reports them.
func (l *Log) findInSegment(seg partlog.Segment, ts, start int64) (int64, bool, error) {
	s, err := l.segmentByID(seg)
	if err != nil {
		return 0, false, err
	}
	defer l.releaseAll([]*segment{s})
	return l.findIn(s, seg, ts, start)
}

// findIn is findInSegment of s, acquired, whose snapshot is seg.
func (l *Log) findIn(s *segment, seg partlog.Segment, ts, start int64) (int64, bool, error) {
	s.ixmu.RLock()
	entryTs, off, nextTs, slot := s.tidx.SpanSlot(ts)
	s.ixmu.RUnlock()
	target := max(off, start)
	// the offset index entry written with the time entry: the same slot
	// while timestamps grow (checked, else searched)
	sp := s.spanNear(target, seg.Size, slot)
	pos := sp.pos
	w := getView()
	defer putView(w)
	// the next entry's timestamp is the largest of the batch at sp.next,
	// which may hold the answer: the first read reaches into it
	w.probe = spanProbe(sp, s.timeGuess(sp, ts, entryTs, nextTs), s.batchHint.Load())
	q := timeQuery{s: s, next: seg.Next, ts: ts, start: start}
	_, h, err := s.findBatch(w, pos, seg.Size, target, q.match)
	if err == nil {
		s.hintBatch(&h)
	}
	if err == errIndexMismatch {
		l.scheduleRebuild(s)
		pos = 0
		_, _, err = s.findBatch(w, 0, seg.Size, target, q.match)
	}
	switch {
	case err == nil || q.err != nil:
		return q.res, q.found, q.err
	case err == errNoBatch:
		return 0, false, nil
	}
	return q.scan(pos, seg.Size, target)
}

// timeGuess estimates where the prefix of the record answering ts ends,
// from index span sp of the time index entry at or before ts (timestamp
// entryTs; the next one's nextTs) and the segment's batch size hint, as
// offsetGuess does for an offset: timestamps spread evenly between the
// two entries, one batch further. 0 without a hint or entries around ts.
func (s *segment) timeGuess(sp indexSpan, ts, entryTs, nextTs int64) int64 {
	hint := s.batchHint.Load()
	if hint <= 0 || sp.next < 0 || entryTs < 0 || ts <= entryTs || ts >= nextTs {
		return 0
	}
	return evenPos(sp.pos, sp.next, entryTs, nextTs, ts) + hint + record.MaxRecordPrefix
}

// timeQuery finds the first record with timestamp >= ts and offset in
// [start, next) in a segment.
type timeQuery struct {
	s               *segment
	next, ts, start int64
	found           bool
	res             int64
	err             error // a batch search failed (not a header)
}

// holds reports a batch to search: maxTimestamp >= ts (V2 batches at or
// past next are not in the snapshot).
func (q *timeQuery) holds(h *record.BatchHeader) bool {
	return h.MaxTimestamp >= q.ts && !(h.BaseOffset >= q.next && h.Magic >= 2)
}

// match searches the batch at p if it holds candidates, as Kafka's
// FileRecords.searchForTimestamp does: uncompressed V2 batches are walked
// record by record, reading only as far as the answer (walk); compressed
// and legacy batches are read whole (CRC-checked) and decoded. A batch
// without an answer (all its candidates before start) sends the scan on.
func (q *timeQuery) match(w *fileView, p int64, h record.BatchHeader) (bool, error) {
	if !q.holds(&h) {
		return false, nil
	}
	if h.Magic >= 2 && h.Codec() == record.None {
		q.err = q.walk(w, p, &h)
	} else {
		q.err = q.readAt(p, &h)
	}
	return q.found, q.err
}

// readAt reads the batch at p with one pread and searches it.
func (q *timeQuery) readAt(p int64, h *record.BatchHeader) error {
	bb := batchBufs.Get().(*batchBuf)
	defer putBatchBuf(bb)
	b, err := q.s.readBatch(bb, p, h)
	if err == nil {
		err = q.search(&b)
	}
	return scanErr(q.s, p, err)
}

// search decodes b up to the answer.
func (q *timeQuery) search(b *record.Batch) error {
	dec := decoders.Get().(*record.Decoder)
	defer decoders.Put(dec)
	err := dec.Records(b, func(r *record.Record) bool {
		q.check(r.Offset, r.Timestamp)
		return !q.found
	})
	if err != nil {
		return corruptErr(q.s, b.Pos, err)
	}
	return nil
}

// check records offset as the answer if the record qualifies.
func (q *timeQuery) check(offset, ts int64) {
	if ts >= q.ts && offset >= q.start && offset < q.next {
		q.found, q.res = true, offset
	}
}

// scan is the checking scan from pos (an index position for target, or 0).
func (q *timeQuery) scan(pos, size, target int64) (int64, bool, error) {
	first := true
	var searchErr error
	err := scanFrom(q.s, pos, size, func(b *record.Batch) (bool, error) {
		if first && pos > 0 && b.Header.Magic >= 2 && b.Header.BaseOffset > target {
			return true, errIndexMismatch
		}
		first = false
		if !q.holds(&b.Header) {
			return false, nil
		}
		searchErr = q.search(b)
		return q.found || searchErr != nil, searchErr
	})
	switch {
	case err == nil || err == searchErr: // a search error names its place already
		return q.res, q.found, err
	case err == errIndexMismatch || first && pos > 0:
		return q.scan(0, size, target)
	}
	return 0, false, corruptErr(q.s, pos, err)
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

// errInvalidf is an error wrapping partlog.ErrInvalid.
func errInvalidf(format string, args ...any) error {
	return fmt.Errorf("%s: %w", fmt.Sprintf(format, args...), partlog.ErrInvalid)
}
