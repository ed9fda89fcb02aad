package logstore

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"syscall"
	"time"

	"github.com/partfs/partfs/kafkaname"
	"github.com/partfs/partfs/record"
)

// shouldRoll is Kafka's LogSegment.shouldRoll, checked before each batch.
// REQUIRES: mu held.
func (l *Log) shouldRoll(s *segment, h *record.BatchHeader, now time.Time) bool {
	incoming := h.Size()
	if s.size > 0 && s.size > l.cfg.SegmentBytes-incoming {
		return true
	}
	if s.size > 0 && l.timeWaited(s, h.MaxTimestamp, now) > l.maxSegmentMs()-s.jitter {
		return true
	}
	if !s.expanded {
		if err := l.expandIndexes(s); err != nil {
			l.logger.WithError(err).WithField("segment", s.path).Warn("cannot preallocate the active indexes: rolling")
			return true
		}
	}
	s.ixmu.RLock()
	full := s.oidx.IsFull() || s.tidx.IsFull()
	s.ixmu.RUnlock()
	return full || !s.fits(h.LastOffset())
}

// maxSegmentMs is segment.ms, capped by max.compaction.lag.ms for compacted
// topics. REQUIRES: mu held.
func (l *Log) maxSegmentMs() int64 {
	ms := l.cfg.SegmentMs
	if l.cfg.Compacted() && l.cfg.MaxCompactionLagMs > 0 && l.cfg.MaxCompactionLagMs < ms {
		ms = l.cfg.MaxCompactionLagMs
	}
	return ms
}

// timeWaited is Kafka's timeWaitedForRoll: the incoming max timestamp minus
// the first batch's max timestamp, or the wall clock since the segment was
// created when the first batch has none. REQUIRES: mu held.
func (l *Log) timeWaited(s *segment, incomingMaxTs int64, now time.Time) int64 {
	if !s.rollTsKnown {
		s.rollTs, s.rollTsKnown = l.firstBatchTimestamp(s), true
	}
	if s.rollTs >= 0 {
		return incomingMaxTs - s.rollTs
	}
	return now.Sub(s.created).Milliseconds()
}

// firstBatchTimestamp reads the max timestamp of a segment's first batch
// (-1 when unreadable or absent).
func (l *Log) firstBatchTimestamp(s *segment) int64 {
	if s.size == 0 {
		return -1
	}
	buf := make([]byte, record.BatchHeaderSize)
	n, _ := s.log.ReadAt(buf, 0)
	h, err := record.ParseHeader(buf[:n])
	if err != nil {
		return -1
	}
	return h.MaxTimestamp
}

// rollJitter picks the per-segment jitter: random % min(jitter, segment.ms).
func (l *Log) rollJitter() int64 {
	j := l.cfg.SegmentJitterMs
	if j <= 0 {
		return 0
	}
	if l.cfg.SegmentMs < j {
		j = l.cfg.SegmentMs
	}
	if l.store != nil && l.store.opt.Jitter != nil {
		return l.store.opt.Jitter(j)
	}
	return rand.Int64N(j)
}

// roll seals the active segment (final time-index entry, trimmed indexes)
// and starts a new one at the log end offset. Nothing is fsynced here: the
// sealed segment is made durable by the next flush. REQUIRES: mu held.
func (l *Log) roll(now time.Time) error {
	old := l.active()
	if err := errors.Join(old.seal(), old.releaseAlloc()); err != nil {
		return err
	}
	s, err := l.createSegment(old.next, now)
	if err != nil {
		return err
	}
	l.addSegment(s)
	l.logger.WithFields(map[string]any{"segment": s.path, "base": s.base}).Debug("rolled segment")
	l.requestFlush()
	return nil
}

// requestFlush asks the background loop to flush the log (Kafka flushes the
// sealed segment after a roll, advancing the recovery point); the request is
// dropped when the queue is full or there is no background loop.
func (l *Log) requestFlush() {
	if l.store == nil || l.store.opt.NoBackground {
		return
	}
	select {
	case l.store.flushReq <- l:
	default:
	}
}

// addSegment appends s to the live list. REQUIRES: mu held.
func (l *Log) addSegment(s *segment) {
	s.refs.Store(1)
	l.segs = append(l.segs, s)
	l.byID[s.id] = s
	l.notify()
}

// createSegment creates the files of an empty active segment at base.
// REQUIRES: mu held.
func (l *Log) createSegment(base int64, now time.Time) (*segment, error) {
	path := segmentPath(l.dir, base, kafkaname.LogSuffix)
	f, err := l.fs.OpenFile(path, os.O_RDWR|os.O_CREATE|os.O_TRUNC, 0o644)
	if err != nil {
		return nil, fmt.Errorf("create segment %s: %w", path, err)
	}
	s := &segment{dir: l.dir, base: base, id: l.store.nextID(), stamp: openStamp(f, path), ident: identOf(f), log: f, path: path,
		next: base, lastPos: -1, maxTs: -1, offMaxTs: base, rollTs: -1, created: now,
		jitter: l.rollJitter(), records: 0}
	if err := l.openIndexes(s, true, true); err != nil {
		f.Close()
		l.fs.Remove(path)
		return nil, err
	}
	return s, nil
}

func isNoSpace(err error) bool {
	return errors.Is(err, syscall.ENOSPC) || errors.Is(err, syscall.EDQUOT)
}
