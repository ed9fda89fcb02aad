package logstore

import (
	"errors"
	"fmt"
	"github.com/partfs/partfs/kafkaname"
)

// segState is the bookkeeping of a segment that an append changes.
type segState struct {
	size, next, lastPos, maxTs, offMaxTs, bytesSinceIndex int64
	rollTs                                                int64
	rollTsKnown, dirty                                    bool
	records                                               int64
	oidxEntries, tidxEntries                              int
}

// undoState is what a failed append restores.
type undoState struct {
	active *segment
	nsegs  int
	state  segState
}

func (s *segment) state() segState {
	s.ixmu.RLock()
	defer s.ixmu.RUnlock()
	return segState{size: s.size, next: s.next, lastPos: s.lastPos, maxTs: s.maxTs, offMaxTs: s.offMaxTs,
		bytesSinceIndex: s.bytesSinceIndex, rollTs: s.rollTs, rollTsKnown: s.rollTsKnown,
		dirty: s.dirty, records: s.records, oidxEntries: s.oidx.Entries(), tidxEntries: s.tidx.Entries()}
}

// saveUndo records where the log is before an append. REQUIRES: mu held.
func (l *Log) saveUndo() undoState {
	a := l.active()
	return undoState{active: a, nsegs: len(l.segs), state: a.state()}
}

// undo puts the log back where u says after cause failed an append: segments
// created by the append are removed, the active segment and its indexes are
// cut back to their size before it. It reports whether the rollback
// succeeded and returns the append's error. REQUIRES: mu held.
func (l *Log) undo(u undoState, cause error) (clean bool, err error) {
	var errs []error
	for _, s := range l.segs[u.nsegs:] {
		errs = append(errs, l.dropSegment(s))
	}
	l.segs = l.segs[:u.nsegs]
	a := u.active
	a.allocEnd = 0 // the truncate releases reserved blocks too
	if err := a.log.Truncate(u.state.size); err != nil {
		errs = append(errs, fmt.Errorf("truncate %s to %d: %w", a.path, u.state.size, err))
	}
	errs = append(errs, a.truncateIndexes(u.state.next, u.state.oidxEntries, u.state.tidxEntries))
	if len(l.segs) > 0 && l.active() == a {
		errs = append(errs, l.expandIndexes(a))
	}
	st := u.state
	a.size, a.next, a.lastPos, a.maxTs, a.offMaxTs = st.size, st.next, st.lastPos, st.maxTs, st.offMaxTs
	a.bytesSinceIndex, a.rollTs, a.rollTsKnown, a.dirty, a.records = st.bytesSinceIndex, st.rollTs, st.rollTsKnown, st.dirty, st.records
	if rb := errors.Join(errs...); rb != nil {
		l.logger.WithError(cause).WithField("segment", a.path).WithField("rollback_error", rb).
			Error("append failed and could not be rolled back; the partition refuses appends until reopened")
		return false, wrapIOError(fmt.Errorf("append to %s: %w; rollback: %v", l.dir, cause, rb))
	}
	l.logger.WithError(cause).WithField("segment", a.path).WithField("size", st.size).
		Warn("append failed; log cut back to its size before the append")
	return true, wrapIOError(fmt.Errorf("append to %s: %w", l.dir, cause))
}

// dropSegment closes and removes the files of a segment created by a failed
// append (never seen by a reader of a snapshot taken before). REQUIRES: mu held.
func (l *Log) dropSegment(s *segment) error {
	delete(l.byID, s.id)
	s.dead = true
	err := s.closeFiles()
	for _, suf := range []string{kafkaname.LogSuffix, kafkaname.IndexSuffix, kafkaname.TimeIndexSuffix} {
		if e := l.fs.Remove(segmentPath(l.dir, s.base, suf)); e != nil && err == nil && !isNotExist(e) {
			err = e
		}
	}
	return err
}
