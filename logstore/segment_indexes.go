package logstore

import (
	"errors"
	"fmt"
	"io"
	"os"
	"sync"
	"time"

	"github.com/partfs/partfs/index"
	"github.com/partfs/partfs/kafkaname"
)

// openIndexes opens (create: creates) a segment's .index and .timeindex;
// the active segment's are preallocated to segment.index.bytes. On a
// read-only store a missing index is an empty in-memory one.
// REQUIRES: mu held (or the log not yet shared).
func (l *Log) openIndexes(s *segment, active, create bool) error {
	maxBytes := 0
	if active {
		maxBytes = l.cfg.SegmentIndexBytes
	}
	oi, err := l.openIndexFile(s.base, kafkaname.IndexSuffix+s.suffix, create)
	if err != nil {
		return err
	}
	ti, err := l.openIndexFile(s.base, kafkaname.TimeIndexSuffix+s.suffix, create)
	if err != nil {
		oi.Close()
		return err
	}
	var ox *index.OffsetIndex
	var tx *index.TimeIndex
	if l.readOnly {
		ox, err = index.OpenOffsetIndexReadOnly(oi, s.base)
		if err == nil {
			tx, err = index.OpenTimeIndexReadOnly(ti, s.base)
		}
	} else {
		ox, err = index.OpenOffsetIndex(oi, s.base, maxBytes)
		if err == nil {
			tx, err = index.OpenTimeIndex(ti, s.base, maxBytes)
		}
	}
	if err != nil {
		oi.Close()
		ti.Close()
		return fmt.Errorf("open indexes of %s: %w", s.path, err)
	}
	s.ixmu.Lock()
	s.oidx, s.tidx = ox, tx
	s.expanded = maxBytes > 0
	s.ixmu.Unlock()
	return nil
}

func (l *Log) openIndexFile(base int64, suffix string, create bool) (index.File, error) {
	path := segmentPath(l.dir, base, suffix)
	if l.readOnly {
		f, err := l.fs.Open(path)
		if isNotExist(err) || create {
			return newMemFile(path), nil
		}
		return f, err
	}
	flag := os.O_RDWR | os.O_CREATE
	if create {
		flag |= os.O_TRUNC
	}
	f, err := l.fs.OpenFile(path, flag, 0o644)
	if err != nil {
		return nil, fmt.Errorf("open %s: %w", path, err)
	}
	return f, nil
}

// memIndexes gives s empty in-memory indexes of capacity maxBytes, for a
// rebuild, and returns the ones it had. REQUIRES: mu held.
func (l *Log) memIndexes(s *segment, maxBytes int) (*index.OffsetIndex, *index.TimeIndex, error) {
	ox, err := index.OpenOffsetIndex(newMemFile(segmentPath(l.dir, s.base, kafkaname.IndexSuffix)), s.base, maxBytes)
	if err != nil {
		return nil, nil, err
	}
	tx, err := index.OpenTimeIndex(newMemFile(segmentPath(l.dir, s.base, kafkaname.TimeIndexSuffix)), s.base, maxBytes)
	if err != nil {
		return nil, nil, err
	}
	s.ixmu.Lock()
	defer s.ixmu.Unlock()
	old1, old2 := s.oidx, s.tidx
	s.oidx, s.tidx = ox, tx
	return old1, old2, nil
}

// settleIndexes ends a rebuild into memory (memIndexes): on a writable
// store the files' indexes ox and tx are given the rebuilt entries,
// trimmed, written (and synced) only where they differ, and serve again;
// a read-only store keeps the rebuilt indexes in memory and releases ox
// and tx. REQUIRES: mu held.
func (l *Log) settleIndexes(s *segment, ox *index.OffsetIndex, tx *index.TimeIndex) error {
	if ox == nil {
		return nil
	}
	s.ixmu.Lock()
	defer s.ixmu.Unlock()
	if l.readOnly {
		return errors.Join(ox.Release(), tx.Release())
	}
	var errs []error
	wrote1, err := ox.Settle(s.oidx)
	errs = append(errs, err)
	wrote2, err := tx.Settle(s.tidx)
	errs = append(errs, err)
	if wrote1 {
		errs = append(errs, ox.Sync())
	}
	if wrote2 {
		errs = append(errs, tx.Sync())
	}
	s.oidx, s.tidx, s.expanded = ox, tx, false
	return errors.Join(errs...)
}

// seal ends a segment's active life: the final time-index entry and
// trimmed indexes (Kafka's onBecomeInactiveSegment).
func (s *segment) seal() error {
	s.ixmu.Lock()
	defer s.ixmu.Unlock()
	if s.maxTs >= 0 {
		if err := s.tidx.MaybeAppend(s.maxTs, s.offMaxTs, true); err != nil {
			return fmt.Errorf("final time index entry of %s: %w", s.path, err)
		}
	}
	s.expanded = false
	return errors.Join(s.oidx.TrimToValidSize(), s.tidx.TrimToValidSize())
}

// expandIndexes preallocates the active segment's indexes again, to
// segment.index.bytes but never below the entries they hold plus the time
// index's slot for the entry the next roll or close writes (a segment
// written under a larger segment.index.bytes then rolls at its next
// append). A clean open leaves the active segment's indexes as they are on
// disk; the first append expands them (shouldRoll), so a partition that
// is not written to is neither resized nor trimmed.
func (l *Log) expandIndexes(s *segment) error {
	if l.readOnly {
		return nil
	}
	s.ixmu.Lock()
	defer s.ixmu.Unlock()
	s.expanded = true
	return errors.Join(s.oidx.Resize(max(l.cfg.SegmentIndexBytes, s.oidx.Entries()*8)),
		s.tidx.Resize(max(l.cfg.SegmentIndexBytes, (s.tidx.Entries()+1)*12)))
}

// truncateIndexes drops index entries with offsets >= next.
func (s *segment) truncateIndexes(next int64, _, _ int) error {
	s.ixmu.Lock()
	defer s.ixmu.Unlock()
	return errors.Join(s.oidx.TruncateTo(next), s.tidx.TruncateTo(next))
}

// resetIndexes drops every entry, ready for a rebuild.
func (s *segment) resetIndexes() error {
	s.ixmu.Lock()
	defer s.ixmu.Unlock()
	return errors.Join(s.oidx.Reset(), s.tidx.Reset())
}

// memFile is an in-memory index.File for indexes rebuilt on a read-only
// store or checked by a recovery. Its length may run past the bytes
// written (a preallocated index): the rest reads as zeros and holds no
// memory.
type memFile struct {
	mu   sync.Mutex
	name string
	data []byte // the bytes written, at most size
	size int64
}

func newMemFile(name string) *memFile { return &memFile{name: name} }

func (f *memFile) ReadAt(p []byte, off int64) (int, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if off >= f.size {
		return 0, io.EOF
	}
	n := int(min(int64(len(p)), f.size-off))
	clear(p[:n])
	if off < int64(len(f.data)) {
		copy(p[:n], f.data[off:])
	}
	if n < len(p) {
		return n, io.EOF
	}
	return n, nil
}

func (f *memFile) WriteAt(p []byte, off int64) (int, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if end := off + int64(len(p)); end > int64(len(f.data)) {
		f.data = append(f.data, make([]byte, end-int64(len(f.data)))...)
	}
	f.size = max(f.size, int64(len(f.data)))
	return copy(f.data[off:], p), nil
}

func (f *memFile) Truncate(size int64) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if size < int64(len(f.data)) {
		f.data = f.data[:size]
	}
	f.size = size
	return nil
}

func (f *memFile) Sync() error  { return nil }
func (f *memFile) Close() error { return nil }
func (f *memFile) Name() string { return f.name }

func (f *memFile) Stat() (os.FileInfo, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return memInfo{name: f.name, size: f.size}, nil
}

type memInfo struct {
	name string
	size int64
}

func (i memInfo) Name() string       { return i.name }
func (i memInfo) Size() int64        { return i.size }
func (i memInfo) Mode() os.FileMode  { return 0o444 }
func (i memInfo) ModTime() time.Time { return time.Time{} }
func (i memInfo) IsDir() bool        { return false }
func (i memInfo) Sys() any           { return nil }

// scheduleRebuild asks the next maintenance round to rebuild s's indexes.
func (l *Log) scheduleRebuild(s *segment) {
	if l.readOnly {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, r := range l.rebuild {
		if r == s {
			return
		}
	}
	l.rebuild = append(l.rebuild, s)
}

// runRebuilds rebuilds the indexes of scheduled live segments (never
// cutting data: a corrupt batch found here is left for reads to report).
func (l *Log) runRebuilds() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	var errs []error
	for _, s := range l.rebuild {
		if s.dead || s.closed.Load() {
			continue
		}
		active := s == l.active()
		size := s.size
		errs = append(errs, l.resetIndexes(s, l.cfg.SegmentIndexBytes))
		s.bytesSinceIndex, s.maxTs, s.offMaxTs = 0, -1, s.base
		s.records = 0
		_, err := l.rebuild1(s, s.size)
		s.size = size
		errs = append(errs, err, s.finishIndexes(active))
		l.logger.WithField("segment", s.path).Info("rebuilt segment indexes")
	}
	l.rebuild = nil
	return errors.Join(errs...)
}
