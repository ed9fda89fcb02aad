package logstore

import (
	"errors"
	"fmt"
)

// Sync makes everything appended so far durable: the segments from the one
// holding the recovery point to the end, their indexes, and the partition
// directory. The file handles are collected under the log mutex (with
// references held) and synced outside it, so appends continue meanwhile.
// The recovery point then advances to the log end offset seen at the start.
// A failed fsync makes the log refuse appends (sticky error); a log that
// refuses appends (or whose active segment changed under it) still syncs
// but reports that error. With nothing appended past the recovery point
// there is nothing to sync.
func (l *Log) Sync() error {
	if l.readOnly {
		return nil
	}
	l.flushMu.Lock()
	defer l.flushMu.Unlock()
	l.mu.Lock()
	if l.werr == nil && len(l.segs) > 0 {
		l.refuseChanged() // what was acknowledged before is still synced
	}
	end := l.endLocked()
	if end <= l.recoveryPoint && l.unflushed == 0 {
		err := l.werr // everything below the recovery point is durable already
		l.mu.Unlock()
		return err
	}
	held := append([]*segment(nil), l.segs[l.floorSegment(l.recoveryPoint):]...)
	for _, s := range held {
		s.acquire()
	}
	flushed := l.unflushed
	l.unflushed = 0
	l.mu.Unlock()
	defer l.releaseAll(held)

	var errs []error
	for _, s := range held {
		errs = append(errs, s.syncFiles())
	}
	errs = append(errs, l.fs.SyncDir(l.dir))
	err := errors.Join(errs...)

	l.mu.Lock()
	defer l.mu.Unlock()
	if err != nil {
		l.unflushed += flushed
		if l.werr == nil {
			l.werr = wrapIOError(fmt.Errorf("flush %s: %w", l.dir, err))
			l.logger.WithError(err).Error("fsync failed; the partition refuses appends until reopened")
		}
		return l.werr
	}
	if l.werr != nil {
		return l.werr
	}
	l.recoveryPoint = max(l.recoveryPoint, end)
	l.lastFlush = l.now()
	return nil
}

// syncFiles fsyncs the segment's .log and indexes.
func (s *segment) syncFiles() error {
	if s.closed.Load() {
		return nil
	}
	s.ixmu.RLock()
	defer s.ixmu.RUnlock()
	err := s.log.Sync()
	if err != nil {
		err = fmt.Errorf("fsync %s: %w", s.path, err)
	}
	return errors.Join(err, s.oidx.Sync(), s.tidx.Sync())
}

// flushDue reports whether flush.ms has passed with unflushed records.
func (l *Log) flushDue() bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.unflushed == 0 || l.cfg.FlushMs <= 0 {
		return false
	}
	return l.now().Sub(l.lastFlush).Milliseconds() >= l.cfg.FlushMs
}

// RecoveryPoint returns the offset below which everything is durable.
func (l *Log) RecoveryPoint() int64 {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.recoveryPoint
}

// needsSync reports whether a close has anything of the log to make
// durable: records past the recovery point, active indexes to trim,
// blocks reserved past the end.
func (l *Log) needsSync() bool {
	if l.readOnly {
		return false
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.endLocked() > l.recoveryPoint || l.unflushed > 0 {
		return true
	}
	if len(l.segs) == 0 {
		return false
	}
	a := l.active()
	return a.expanded || a.allocEnd > a.size
}

// endToSync is Sync's first step for a sync of the whole filesystem: the
// log end the sync will make durable (a log whose segment changed under
// it refuses appends from now on, as Sync does).
func (l *Log) endToSync() int64 {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.readOnly {
		return l.recoveryPoint
	}
	if l.werr == nil && len(l.segs) > 0 {
		l.refuseChanged()
	}
	return l.endLocked()
}

// synced is Sync's last step after a sync of the whole filesystem
// succeeded: the recovery point advances to end (endToSync).
func (l *Log) synced(end int64) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.werr != nil || l.readOnly {
		return
	}
	l.recoveryPoint = max(l.recoveryPoint, end)
	l.unflushed = 0
	l.lastFlush = l.now()
}
