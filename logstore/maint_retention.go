package logstore

import (
	"errors"
	"fmt"
	"github.com/partfs/partfs/kafkaname"
	"time"
)

// pendingDelete is a .deleted file removed after file.delete.delay.ms.
type pendingDelete struct {
	path string
	at   time.Time
}

// ApplyRetention deletes the oldest segments that breach the log start
// offset, retention.bytes or retention.ms (Kafka's deleteOldSegments): it
// walks from the oldest segment and stops at the first one to keep. A
// non-empty active segment that breaches retention is deleted too, after a
// roll to an empty one at the log end (so the log end offset stays).
// Deleted segments are renamed to .deleted and removed after
// file.delete.delay.ms; readers holding them keep reading. It returns how
// many segments it deleted.
func (l *Log) ApplyRetention() (int, error) {
	if l.readOnly {
		return 0, nil
	}
	l.replaceMu.Lock()
	defer l.replaceMu.Unlock()
	l.mu.Lock()
	now := l.now()
	victims := l.retentionVictims(now)
	var err error
	if len(victims) > 0 && len(victims) == len(l.segs) {
		err = l.roll(now)
	}
	n := 0
	if err == nil {
		n, err = l.deleteSegments(victims, "retention")
	}
	l.mu.Unlock()
	if n > 0 {
		err = errors.Join(err, l.fs.SyncDir(l.dir))
		if l.store != nil {
			err = errors.Join(err, l.store.writeCheckpoints())
		}
	}
	return n, err
}

// retentionVictims lists the segments to delete. REQUIRES: mu held.
func (l *Log) retentionVictims(now time.Time) []*segment {
	var total int64
	for _, s := range l.segs {
		total += s.size
	}
	deleting := l.cfg.Deleting() && !l.retentionHeld
	var out []*segment
	for i, s := range l.segs {
		last := i == len(l.segs)-1
		if last && s.size == 0 {
			break
		}
		breach := !last && l.segs[i+1].base <= l.startOffset
		if deleting && l.cfg.RetentionBytes >= 0 && total-l.cfg.RetentionBytes-s.size >= 0 {
			breach = true
		}
		if deleting && l.cfg.RetentionMs >= 0 && now.UnixMilli()-l.segmentLargestTs(s) > l.cfg.RetentionMs {
			breach = true
		}
		if !breach {
			break
		}
		out = append(out, s)
		total -= s.size
	}
	return out
}

// segmentLargestTs is the max timestamp or the file's mtime.
func (l *Log) segmentLargestTs(s *segment) int64 {
	if s.maxTs >= 0 {
		return s.maxTs
	}
	fi, err := s.log.Stat()
	if err != nil {
		return l.now().UnixMilli()
	}
	return fi.ModTime().UnixMilli()
}

// deleteSegments removes victims (a prefix of the live list) from the log:
// files renamed to .deleted, log start offset advanced; the caller fsyncs
// the directory after releasing mu. REQUIRES: mu held.
func (l *Log) deleteSegments(victims []*segment, why string) (int, error) {
	var err error
	done := 0
	for _, s := range victims {
		if err = l.markDeleted(s.base, ""); err != nil {
			break // the .log is still in place: keep it and everything after it
		}
		l.logger.WithField("segment", s.path).WithField("reason", why).Info("deleting segment")
		l.retire(s)
		done++
	}
	if done == 0 {
		return 0, err
	}
	l.segs = append(l.segs[:0:0], l.segs[done:]...)
	l.startOffset = max(l.startOffset, l.segs[0].base)
	l.notify()
	return done, err
}

// markDeleted renames a segment's files (with their operation suffix) to
// .deleted and schedules their removal. The .log goes first; if it cannot
// be renamed nothing else is. REQUIRES: mu held.
func (l *Log) markDeleted(base int64, suffix string) error {
	var errs []error
	at := l.now().Add(time.Duration(l.cfg.FileDeleteDelayMs) * time.Millisecond)
	for i, kind := range []string{kafkaname.LogSuffix, kafkaname.IndexSuffix, kafkaname.TimeIndexSuffix, kafkaname.TxnIndexSuffix} {
		from := segmentPath(l.dir, base, kind) + suffix
		to := segmentPath(l.dir, base, kind) + kafkaname.DeletedSuffix
		if err := l.fs.Rename(from, to); err != nil {
			if i == 0 {
				return fmt.Errorf("rename %s to .deleted: %w", from, err)
			}
			if !isNotExist(err) {
				errs = append(errs, fmt.Errorf("rename %s to .deleted: %w", from, err))
			}
			continue
		}
		l.pending = append(l.pending, pendingDelete{path: to, at: at})
	}
	if len(errs) > 0 {
		l.logger.WithError(errors.Join(errs...)).Warn("index files of a deleted segment left in place")
	}
	return nil
}

// removeDueDeletes removes the .deleted files whose delay has passed.
func (l *Log) removeDueDeletes(all bool) error {
	l.mu.Lock()
	now := l.now()
	var due []string
	keep := l.pending[:0]
	for _, p := range l.pending {
		if all || !now.Before(p.at) {
			due = append(due, p.path)
		} else {
			keep = append(keep, p)
		}
	}
	l.pending = keep
	l.mu.Unlock()
	var errs []error
	for _, path := range due {
		if err := l.fs.Remove(path); err != nil && !isNotExist(err) {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}
