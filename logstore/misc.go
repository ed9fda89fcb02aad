package logstore

import (
	"errors"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/partfs/partfs/kafkaname"
	"github.com/partfs/partfs/partlog"
)

func errInvalidf(format string, args ...any) error {
	return fmt.Errorf("%s: %w", fmt.Sprintf(format, args...), partlog.ErrInvalid)
}

// CleanerCheckpoint returns the cleaner's first dirty offset.
func (l *Log) CleanerCheckpoint() int64 {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.cleanerCheckpoint
}

// SetCleanerCheckpoint sets the first dirty offset and persists it in
// cleaner-offset-checkpoint.
func (l *Log) SetCleanerCheckpoint(offset int64) error {
	if l.readOnly {
		return fmt.Errorf("cleaner checkpoint of %s: %w", l.dir, partlog.ErrReadOnly)
	}
	l.mu.Lock()
	l.cleanerCheckpoint = offset
	l.mu.Unlock()
	if l.store == nil {
		return nil
	}
	return l.store.writeCheckpoints()
}

// SegmentReader returns the raw bytes of seg (as of its snapshot size);
// release lets the files go.
func (l *Log) SegmentReader(seg partlog.Segment) (io.ReaderAt, func(), error) {
	s, err := l.segmentByID(seg)
	if err != nil {
		return nil, nil, err
	}
	return io.NewSectionReader(s.log, 0, seg.Size), func() { l.releaseAll([]*segment{s}) }, nil
}

// SegmentModTime returns the modification time of seg's .log file (zero if
// unknown).
func (l *Log) SegmentModTime(seg partlog.Segment) time.Time {
	s, err := l.segmentByID(seg)
	if err != nil {
		return time.Time{}
	}
	defer l.releaseAll([]*segment{s})
	fi, err := s.log.Stat()
	if err != nil {
		return time.Time{}
	}
	return fi.ModTime()
}

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

// loadTxnIndexes reads every .txnindex of the live segments.
func (l *Log) loadTxnIndexes() error {
	var errs []error
	for _, s := range l.segs {
		path := segmentPath(l.dir, s.base, kafkaname.TxnIndexSuffix) + s.suffix
		f, err := l.fs.Open(path)
		if err != nil {
			if !errors.Is(err, os.ErrNotExist) {
				errs = append(errs, err)
			}
			continue
		}
		data, err := readAll(f)
		f.Close()
		if err != nil {
			errs = append(errs, err)
			continue
		}
		ts, err := parseTxnIndex(data, path)
		l.addTxns(ts)
		errs = append(errs, err)
	}
	return errors.Join(errs...)
}

// emptyFile is the .log of a read-only store's placeholder segment.
type emptyFile struct{}

func (emptyFile) ReadAt([]byte, int64) (int, error)  { return 0, io.EOF }
func (emptyFile) WriteAt([]byte, int64) (int, error) { return 0, errEmptyFile }
func (emptyFile) Write([]byte) (int, error)          { return 0, errEmptyFile }
func (emptyFile) Close() error                       { return nil }
func (emptyFile) Sync() error                        { return nil }
func (emptyFile) Truncate(int64) error               { return errEmptyFile }
func (emptyFile) Stat() (os.FileInfo, error)         { return memInfo{name: "empty"}, nil }
func (emptyFile) Name() string                       { return "empty" }
