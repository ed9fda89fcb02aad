package logstore

import (
	"errors"
	"fmt"
	"io"
	"os"
	"sort"
	"time"

	"github.com/partfs/partfs/index"
	"github.com/partfs/partfs/kafkaname"
	"github.com/partfs/partfs/partlog"
	"github.com/partfs/partfs/record"
	"github.com/partfs/partfs/vfs"
)

// CleanedSegment is a segment the log cleaner writes beside the log as
// <base>.log.cleaned with its .index.cleaned and .timeindex.cleaned; Kafka's
// index rule applies to its batches. ReplaceSegments puts it in place.
type CleanedSegment struct {
	l    *Log
	seg  *segment
	done bool
	txns []byte // .txnindex entries of the aborted transactions it keeps
}

// AbortedTxn is one aborted transaction (a .txnindex entry).
type AbortedTxn = index.AbortedTxn

// AbortedTxns returns the aborted transactions that overlap [from, to),
// in order of their first offsets.
func (l *Log) AbortedTxns(from, to int64) []AbortedTxn {
	var out []AbortedTxn
	for _, t := range l.abortedIn(from, to) {
		out = append(out, AbortedTxn{ProducerID: t.pid, FirstOffset: t.first, LastOffset: t.last, LastStableOffset: t.lso})
	}
	return out
}

// AddAbortedTxn records an aborted transaction the cleaned segment keeps
// in its .txnindex.
func (c *CleanedSegment) AddAbortedTxn(t AbortedTxn) {
	c.txns = index.AppendTxnEntry(c.txns, t)
}

// NewCleanedSegment creates the .cleaned files of a segment at base.
func (l *Log) NewCleanedSegment(base int64) (*CleanedSegment, error) {
	if l.readOnly {
		return nil, fmt.Errorf("clean %s: %w", l.dir, partlog.ErrReadOnly)
	}
	path := segmentPath(l.dir, base, kafkaname.LogSuffix) + kafkaname.CleanedSuffix
	f, err := l.fs.OpenFile(path, os.O_RDWR|os.O_CREATE|os.O_TRUNC, 0o644)
	if err != nil {
		return nil, fmt.Errorf("create %s: %w", path, err)
	}
	l.mu.Lock()
	s := &segment{dir: l.dir, base: base, stamp: openStamp(f, path), log: f, path: path, suffix: kafkaname.CleanedSuffix, next: base, lastPos: -1,
		maxTs: -1, offMaxTs: base, rollTs: -1, created: l.now(), records: -1}
	err = l.openIndexes(s, true, true)
	l.mu.Unlock()
	if err != nil {
		f.Close()
		l.fs.Remove(path)
		return nil, err
	}
	return &CleanedSegment{l: l, seg: s}, nil
}

// AppendBatch appends one complete batch with its final offsets.
func (c *CleanedSegment) AppendBatch(raw []byte) error {
	h, err := record.ParseHeader(raw)
	if err != nil {
		return fmt.Errorf("cleaned batch for %s: %w", c.seg.path, err)
	}
	if h.Size() != int64(len(raw)) {
		return fmt.Errorf("cleaned batch for %s: %d bytes, header says %d: %w", c.seg.path, len(raw), h.Size(), partlog.ErrInvalid)
	}
	if h.BaseOffset < c.seg.next || !c.seg.fits(h.LastOffset()) {
		return fmt.Errorf("cleaned batch for %s: offsets %d..%d after next %d: %w",
			c.seg.path, h.BaseOffset, h.LastOffset(), c.seg.next, partlog.ErrInvalid)
	}
	c.l.mu.Lock()
	interval := c.l.cfg.IndexIntervalBytes
	c.l.mu.Unlock()
	return c.seg.appendBatch(raw, &h, interval)
}

// Size returns the bytes written so far.
func (c *CleanedSegment) Size() int64 { return c.seg.size }

// Abort closes and removes the .cleaned files.
func (c *CleanedSegment) Abort() error {
	if c.done {
		return nil
	}
	c.done = true
	err := c.seg.closeFiles()
	for _, kind := range []string{kafkaname.LogSuffix, kafkaname.IndexSuffix, kafkaname.TimeIndexSuffix, kafkaname.TxnIndexSuffix} {
		if e := c.l.fs.Remove(segmentPath(c.l.dir, c.seg.base, kind) + kafkaname.CleanedSuffix); e != nil && !isNotExist(e) {
			err = errors.Join(err, e)
		}
	}
	return err
}

// finish seals the cleaned segment, makes it durable and gives it the
// mtime of its last source segment (outside the log mutex).
func (c *CleanedSegment) finish(mtimeOf *segment) error {
	s := c.seg
	if err := errors.Join(s.seal(), s.syncFiles()); err != nil {
		return err
	}
	if len(c.txns) > 0 {
		path := segmentPath(c.l.dir, s.base, kafkaname.TxnIndexSuffix) + kafkaname.CleanedSuffix
		if err := vfs.WriteFileDurable(c.l.fs, path, c.txns); err != nil {
			return err
		}
	}
	if mtimeOf == nil {
		return nil
	}
	fi, err := mtimeOf.log.Stat()
	if err != nil {
		return err
	}
	return c.l.fs.Chtimes(s.path, fi.ModTime(), fi.ModTime())
}

// ReplaceSegments puts cleaned segments in place of old ones with Kafka's
// swap sequence: finish each cleaned segment (final time index entry,
// trim, fsync, mtime of its last source segment), rename .cleaned -> .swap
// in descending offset order and fsync the directory, rename the old
// segments to .deleted (removed after file.delete.delay.ms), rename .swap
// to the final names and fsync the directory. Snapshots held by readers
// keep the old files; the new segments get new IDs and Changed fires.
// A crash at any point is finished or undone by the loader.
func (l *Log) ReplaceSegments(cleaned []*CleanedSegment, old []partlog.Segment) error {
	if len(cleaned) == 0 || len(old) == 0 {
		return fmt.Errorf("replace segments: nothing to replace: %w", partlog.ErrInvalid)
	}
	sort.Slice(cleaned, func(i, j int) bool { return cleaned[i].seg.base < cleaned[j].seg.base })
	l.replaceMu.Lock()
	defer l.replaceMu.Unlock()
	l.mu.Lock()
	from, olds, err := l.checkReplace(cleaned, old)
	l.mu.Unlock()
	if err != nil {
		return err
	}
	for i, c := range cleaned {
		if err := c.finish(lastSource(olds, cleaned, i)); err != nil {
			return fmt.Errorf("finish cleaned segment %s: %w", c.seg.path, err)
		}
	}
	for i := len(cleaned) - 1; i >= 0; i-- {
		if err := l.renameSuffix(cleaned[i].seg.base, kafkaname.CleanedSuffix, kafkaname.SwapSuffix); err != nil {
			return err
		}
		cleaned[i].seg.suffix = kafkaname.SwapSuffix
	}
	if err := l.fs.SyncDir(l.dir); err != nil {
		return fmt.Errorf("fsync %s: %w", l.dir, err)
	}
	l.mu.Lock()
	err = l.swapIn(from, olds, cleaned)
	l.mu.Unlock()
	return errors.Join(err, l.fs.SyncDir(l.dir))
}

// checkReplace finds old in the live list: contiguous, not the active
// segment, and covering the cleaned segments' bases. REQUIRES: mu held.
func (l *Log) checkReplace(cleaned []*CleanedSegment, old []partlog.Segment) (int, []*segment, error) {
	from := -1
	for i, s := range l.segs {
		if s.id == old[0].ID {
			from = i
		}
	}
	if from < 0 || from+len(old) >= len(l.segs) {
		return 0, nil, fmt.Errorf("replace segments of %s: old segments not live or include the active one: %w", l.dir, partlog.ErrInvalid)
	}
	olds := l.segs[from : from+len(old)]
	for i, s := range olds {
		if s.id != old[i].ID {
			return 0, nil, fmt.Errorf("replace segments of %s: segment %d changed: %w", l.dir, old[i].Base, partlog.ErrInvalid)
		}
	}
	end := l.segs[from+len(old)].base
	for _, c := range cleaned {
		if c.seg.base < olds[0].base || c.seg.next > end || c.done {
			return 0, nil, fmt.Errorf("replace segments of %s: cleaned segment %d outside [%d, %d): %w",
				l.dir, c.seg.base, olds[0].base, end, partlog.ErrInvalid)
		}
	}
	if cleaned[0].seg.base != olds[0].base {
		return 0, nil, fmt.Errorf("replace segments of %s: first cleaned segment %d must start at %d: %w",
			l.dir, cleaned[0].seg.base, olds[0].base, partlog.ErrInvalid)
	}
	return from, append([]*segment(nil), olds...), nil
}

// lastSource is the last old segment that cleaned[i] replaces.
func lastSource(olds []*segment, cleaned []*CleanedSegment, i int) *segment {
	var last *segment
	for _, s := range olds {
		if s.base >= cleaned[i].seg.base && (i+1 == len(cleaned) || s.base < cleaned[i+1].seg.base) {
			last = s
		}
	}
	return last
}

// swapIn renames the old segments to .deleted and the .swap files to their
// final names, and replaces the old segments in the live list.
// REQUIRES: mu held.
func (l *Log) swapIn(from int, olds []*segment, cleaned []*CleanedSegment) error {
	var errs []error
	newBases := map[int64]bool{}
	for _, c := range cleaned {
		newBases[c.seg.base] = true
	}
	for _, s := range olds {
		if newBases[s.base] {
			// the final rename of the .swap replaces it; keep a .deleted copy
			// of nothing: the old files stay open for held snapshots
			errs = append(errs, l.removeOldFiles(s))
		} else {
			errs = append(errs, l.markDeleted(s.base, ""))
		}
	}
	end := l.segs[from+len(olds)].base
	news := make([]*segment, len(cleaned))
	for i, c := range cleaned {
		errs = append(errs, l.renameSuffix(c.seg.base, kafkaname.SwapSuffix, ""))
		s := c.seg
		c.done = true
		s.suffix, s.path, s.id = "", segmentPath(l.dir, s.base, kafkaname.LogSuffix), l.store.nextID()
		s.next = end
		if i+1 < len(cleaned) {
			s.next = cleaned[i+1].seg.base
		}
		s.records = -1
		s.refs.Store(1)
		l.byID[s.id] = s
		news[i] = s
	}
	for _, s := range olds {
		l.retire(s)
	}
	segs := append([]*segment(nil), l.segs[:from]...)
	segs = append(segs, news...)
	l.segs = append(segs, l.segs[from+len(olds):]...)
	l.notify()
	return errors.Join(errs...)
}

// removeOldFiles renames an old segment whose name a new segment takes to
// .deleted (Kafka deletes it asynchronously).
func (l *Log) removeOldFiles(s *segment) error {
	return l.markDeleted(s.base, "")
}

// renameSuffix renames a segment's files (its .txnindex where it has one)
// from one operation suffix to another.
func (l *Log) renameSuffix(base int64, from, to string) error {
	var errs []error
	for _, kind := range []string{kafkaname.TxnIndexSuffix, kafkaname.IndexSuffix, kafkaname.TimeIndexSuffix, kafkaname.LogSuffix} {
		p := segmentPath(l.dir, base, kind)
		if err := l.fs.Rename(p+from, p+to); err != nil {
			if kind == kafkaname.TxnIndexSuffix && isNotExist(err) {
				continue
			}
			errs = append(errs, fmt.Errorf("rename %s%s to %s: %w", p, from, to, err))
		}
	}
	return errors.Join(errs...)
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
