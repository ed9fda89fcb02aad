package logstore

import (
	"errors"
	"fmt"
	"math"
	"os"

	"github.com/partfs/partfs/kafkaname"
	"github.com/partfs/partfs/record"
)

// recoverFrom re-validates every segment from the one containing rp to the
// end (Kafka's unclean load). Segments below it are trusted once their
// indexes pass the full sanity check. A corrupt or torn tail is cut at the
// last valid batch and every later segment is deleted, as Kafka does.
// REQUIRES: mu held or the log not shared.
func (l *Log) recoverFrom(rp int64) error {
	l.tracker = &txnTracker{ongoing: map[int64]int64{}}
	defer func() { l.addFoundTxns(l.tracker.found); l.tracker = nil }()
	from := l.floorSegment(rp)
	for i, s := range l.segs[:from] {
		if err := s.fullIndexCheck(l.segs[i+1].base); err != nil {
			l.logger.WithError(err).Warn("index failed its sanity check: rebuilding")
			if cut := l.recoverSegment(s, false); errors.Is(cut, errMisnamed) {
				return cut
			} else if cut != nil {
				l.dropAfter(i, cut)
				return nil
			}
			continue
		}
		s.next = l.segs[i+1].base
		s.maxTs, s.offMaxTs = s.tidx.LastEntry()
	}
	cut := false
	for i := from; i < len(l.segs); i++ {
		if err := l.recoverSegment(l.segs[i], i == len(l.segs)-1); errors.Is(err, errMisnamed) {
			return err
		} else if err != nil {
			l.dropAfter(i, err)
			cut = true
			break
		}
	}
	// Records past the recovery point, or a cut, are made durable now; a
	// partition that held nothing past it (nothing was written since the
	// checkpoint) has only rebuilt indexes, which its clean close syncs.
	if !l.readOnly && (cut || l.endLocked() > rp) {
		return l.syncRecovered(from)
	}
	return nil
}

// fullIndexCheck runs the index package's complete checks.
func (s *segment) fullIndexCheck(next int64) error {
	if err := s.oidx.SanityCheck(s.size); err != nil {
		return err
	}
	return s.tidx.SanityCheck(next)
}

// dropAfter deletes the segments after index i because i's data was cut.
func (l *Log) dropAfter(i int, cut error) {
	for _, s := range l.segs[i+1:] {
		l.logger.WithField("segment", s.path).WithField("bytes", s.size).WithError(cut).
			Warn("deleting segment after a corrupt tail")
		l.removeSegmentFiles(s)
		l.retire(s)
	}
	l.segs = l.segs[:i+1]
}

// recoverSegment rebuilds a segment's indexes and bookkeeping from its
// batches (Kafka's LogSegment.recover) and cuts the file at the last valid
// batch. It returns a non-nil error describing the cut when it cut data.
// The indexes are rebuilt in memory and then settled on the files, which
// are written only where they differ, and left trimmed: an active segment's
// first append preallocates them again (shouldRoll), so a partition
// unchanged since its last clean close is verified without a write.
func (l *Log) recoverSegment(s *segment, active bool) error {
	ox, tx := s.oidx, s.tidx
	l.restartRebuild(s)
	valid, scanErr := l.rebuild1(s, s.size)
	var ce *record.CorruptionError
	if errors.As(scanErr, &ce) && ce.Pos < valid {
		// the batch to blame is one already indexed: index up to it only
		l.restartRebuild(s)
		valid, _ = l.rebuild1(s, ce.Pos)
	}
	// Kafka's recover() keeps its own count; the segment's count for the
	// next append starts at 0 as on any open (LogSegment).
	s.bytesSinceIndex = 0
	err := s.finishIndexes(false)
	if s.oidx != ox {
		err = errors.Join(err, l.settleIndexes(s, ox, tx))
	}
	if err != nil {
		l.logger.WithError(err).WithField("segment", s.path).Error("cannot finish rebuilt indexes")
	}
	if f := l.store.opt.OnRecovered; f != nil {
		f(l.topic, l.partition, valid, s.size-valid)
	}
	if valid == s.size {
		return nil
	}
	if err := s.misnamed(valid); err != nil {
		l.logger.WithField("file", s.path).WithError(err).
			Error("segment's first batch lies below its file name: nothing cut, partition not opened")
		return err
	}
	cut := fmt.Errorf("%s: cut %d bytes at position %d: %w", s.path, s.size-valid, valid, scanErr)
	l.logger.WithField("file", s.path).WithField("position", valid).WithField("bytes", s.size-valid).
		WithError(scanErr).Warn("recovery truncated the segment at its last valid batch")
	if !l.readOnly {
		if err := s.log.Truncate(valid); err != nil {
			l.logger.WithError(err).WithField("segment", s.path).Error("truncate failed")
		}
	}
	s.size = valid
	return cut
}

// errMisnamed means a segment's first batch is sound but lies below the
// base offset its file name gives: a renamed (or misplaced) segment, not a
// torn write. Recovery cuts nothing of it and the partition is not opened.
var errMisnamed = errors.New("segment's first batch lies below its file name")

// misnamed returns an error wrapping errMisnamed when the valid data of s
// ends at 0 because its first batch, whole and CRC-checked, has offsets
// below the segment's base offset.
func (s *segment) misnamed(valid int64) error {
	if valid != 0 {
		return nil
	}
	sc := record.NewScanner(s.log, 0, s.size, s.path)
	if !sc.Next() || sc.Batch().Header.BaseOffset >= s.base {
		return nil
	}
	return fmt.Errorf("%w: %s starts at offset %d", errMisnamed, s.path, sc.Batch().Header.BaseOffset)
}

// restartRebuild gives s empty in-memory indexes and bookkeeping before
// rebuild1 (recoverSegment settles them on the files).
func (l *Log) restartRebuild(s *segment) {
	if _, _, err := l.memIndexes(s, l.cfg.SegmentIndexBytes); err != nil {
		l.logger.WithError(err).WithField("segment", s.path).Error("cannot start an index rebuild")
	}
	s.next, s.lastPos, s.maxTs, s.offMaxTs, s.bytesSinceIndex, s.records = s.base, -1, -1, s.base, 0, 0
	s.rollTsKnown = false
}

// resetIndexes empties a segment's indexes at full capacity for a rebuild.
func (l *Log) resetIndexes(s *segment, maxBytes int) error {
	s.ixmu.Lock()
	defer s.ixmu.Unlock()
	s.expanded = true
	return errors.Join(s.oidx.Resize(maxBytes), s.tidx.Resize(maxBytes), s.oidx.Reset(), s.tidx.Reset())
}

// rebuild1 scans s up to end and indexes each valid batch; it returns the
// end of the valid data and why the scan stopped before end (nil if not).
func (l *Log) rebuild1(s *segment, end int64) (int64, error) {
	sc := record.NewScanner(s.log, 0, end, s.path)
	valid := int64(0)
	dec := decoders.Get().(*record.Decoder)
	defer decoders.Put(dec)
	order := record.NewOffsetOrder(s.base, l.limitOf(s))
	for sc.Next() {
		b := sc.Batch()
		h := &b.Header
		if err := order.Check(b); err != nil {
			return valid, err
		}
		if !s.fits(h.LastOffset()) {
			return valid, &record.CorruptionError{File: s.path, Pos: b.Pos, Err: record.ErrCorruption,
				Reason: fmt.Sprintf("batch offsets %d..%d outside segment with base %d", h.BaseOffset, h.LastOffset(), s.base)}
		}
		if err := s.indexBatch(h, b.Pos, l.cfg.IndexIntervalBytes); err != nil {
			return valid, err
		}
		n, err := l.countBatch(dec, b)
		if err != nil {
			return valid, err
		}
		if l.tracker != nil {
			l.tracker.observe(dec, b)
		}
		s.records += n
		valid = b.Pos + h.Size()
	}
	return valid, sc.Err()
}

// limitOf is the base offset of the segment after s (math.MaxInt64 for the
// active one): no batch of s may reach it. REQUIRES: mu held or the log not
// shared.
func (l *Log) limitOf(s *segment) int64 {
	for i, x := range l.segs[:max(len(l.segs)-1, 0)] {
		if x == s {
			return l.segs[i+1].base
		}
	}
	return math.MaxInt64
}

// countBatch counts the records of b a reader sees: none for control
// batches, the header count for plain V2, a decode for legacy wrappers and
// transactional batches.
func (l *Log) countBatch(dec *record.Decoder, b *record.Batch) (int64, error) {
	h := &b.Header
	switch {
	case h.IsControl():
		return 0, nil
	case h.Magic >= 2 && !h.IsTransactional():
		return int64(h.NumRecords), nil
	case h.Magic < 2 && h.Codec() == record.None:
		return 1, nil
	}
	aborted := abortedFor(l.txns, h)
	n := int64(0)
	err := dec.Records(b, func(r *record.Record) bool {
		if aborted == nil || !isAborted(aborted, r.Offset) {
			n++
		}
		return true
	})
	return n, err
}

// finishIndexes writes the final time entry and trims the indexes of an
// inactive segment (Kafka's end of recover()).
func (s *segment) finishIndexes(active bool) error {
	s.ixmu.Lock()
	defer s.ixmu.Unlock()
	var err error
	if s.maxTs >= 0 {
		err = s.tidx.MaybeAppend(s.maxTs, s.offMaxTs, true)
	}
	if active {
		return err
	}
	s.expanded = false
	return errors.Join(err, s.oidx.TrimToValidSize(), s.tidx.TrimToValidSize())
}

// syncRecovered makes the recovered segments and the directory durable.
func (l *Log) syncRecovered(from int) error {
	var errs []error
	for _, s := range l.segs[min(from, len(l.segs)):] {
		errs = append(errs, s.syncFiles())
	}
	errs = append(errs, l.fs.SyncDir(l.dir))
	return errors.Join(errs...)
}

// removeSegmentFiles deletes a segment's files from disk (not on a
// read-only store).
func (l *Log) removeSegmentFiles(s *segment) {
	if l.readOnly {
		return
	}
	for _, suf := range []string{kafkaname.LogSuffix, kafkaname.IndexSuffix, kafkaname.TimeIndexSuffix, kafkaname.TxnIndexSuffix} {
		if err := l.fs.Remove(segmentPath(l.dir, s.base, suf)); err != nil && !errors.Is(err, os.ErrNotExist) {
			l.logger.WithError(err).Warn("cannot remove segment file")
		}
	}
}
