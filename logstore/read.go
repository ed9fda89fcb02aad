package logstore

import (
	"errors"
	"fmt"
	"sync"

	"github.com/partfs/partfs/partlog"
	"github.com/partfs/partfs/record"
)

var decoders = sync.Pool{New: func() any { return new(record.Decoder) }}

// Read calls fn for each record of seg with offset >= from, in offset order,
// up to seg.Next. Control batches and records of aborted transactions are
// skipped. Corrupt data fails the read with an error wrapping
// partlog.ErrCorrupt and naming the file and position.
func (l *Log) Read(seg partlog.Segment, from int64, fn func(*record.Record) bool) error {
	if from >= seg.Next {
		return nil
	}
	s, err := l.segmentByID(seg)
	if err != nil {
		return err
	}
	defer l.releaseAll([]*segment{s})
	aborted := l.abortedIn(seg.Base, seg.Next)
	pos := s.positionFor(from, seg.Size)
	if err := l.readFrom(s, seg, pos, from, aborted, fn); !errors.Is(err, errIndexMismatch) {
		return err
	}
	l.logger.WithField("segment", s.path).WithField("offset", from).
		Warn("offset index entry does not point at its batch; scanning the segment and rebuilding its index")
	l.scheduleRebuild(s)
	return l.readFrom(s, seg, 0, from, aborted, fn)
}

var errIndexMismatch = errors.New("index entry does not match the segment")

// positionFor is the position an offset index lookup gives for offset.
func (s *segment) positionFor(offset, size int64) int64 {
	if offset <= s.base {
		return 0
	}
	s.ixmu.RLock()
	_, pos := s.oidx.Lookup(offset)
	s.ixmu.RUnlock()
	if int64(pos) >= size || pos < 0 {
		return 0
	}
	return int64(pos)
}

// readFrom scans s from pos and hands the records >= from to fn.
func (l *Log) readFrom(s *segment, seg partlog.Segment, pos, from int64, aborted []abortedTxn, fn func(*record.Record) bool) error {
	dec := decoders.Get().(*record.Decoder)
	defer decoders.Put(dec)
	first := true
	err := scanFrom(s, pos, seg.Size, func(b *record.Batch) (bool, error) {
		h := &b.Header
		if first && pos > 0 && h.BaseOffset > from && h.Magic >= 2 {
			return true, errIndexMismatch
		}
		first = false
		if h.LastOffset() < from || h.IsControl() {
			return false, nil
		}
		if h.BaseOffset >= seg.Next && h.Magic >= 2 {
			return true, nil
		}
		stop := false
		txn := abortedFor(aborted, h)
		err := dec.Records(b, func(r *record.Record) bool {
			switch {
			case r.Offset < from:
				return true
			case r.Offset >= seg.Next:
				stop = true
				return false
			case txn != nil && isAborted(txn, r.Offset):
				return true
			}
			if !fn(r) {
				stop = true
				return false
			}
			return true
		})
		if err != nil {
			return true, corruptErr(s, b.Pos, err)
		}
		return stop, nil
	})
	if err != nil && err != errIndexMismatch && first && pos > 0 {
		return errIndexMismatch
	}
	if err != nil && err != errIndexMismatch && !errors.Is(err, partlog.ErrCorrupt) {
		return corruptErr(s, pos, err)
	}
	return err
}

// corruptErr wraps a decode failure so that it matches partlog.ErrCorrupt and
// names file and position.
func corruptErr(s *segment, pos int64, err error) error {
	var ce *record.CorruptionError
	if errors.As(err, &ce) {
		return fmt.Errorf("%w: %w", partlog.ErrCorrupt, err)
	}
	return fmt.Errorf("%w: %s: at position %d: %w", partlog.ErrCorrupt, s.path, pos, err)
}
