package logstore

import (
	"errors"
	"fmt"
	"sync"

	"github.com/partfs/partfs/partlog"
	"github.com/partfs/partfs/record"
)

// headerProbe is what a header-only scan reads at a time: the headers of
// several small batches in one pread, little waste for large batches.
const headerProbe = 4 << 10

// maxSpanProbe bounds a lookup's first read when it covers the span to
// the next index entry (spanProbe).
const maxSpanProbe = 8 << 10

// spanProbe is the first read of a lookup from index span sp whose
// answer is estimated to end at guess (0: no estimate): from sp.pos
// through the batch header at sp.next (through past, when larger), or to
// guess when that comes first, so that one read holds what the lookup
// parses; headerProbe when that is more than maxSpanProbe bytes or there
// is no next entry.
func spanProbe(sp indexSpan, guess, past int64) int64 {
	if sp.next < 0 {
		return headerProbe
	}
	end := sp.next + max(past, record.BatchHeaderSize)
	if guess > sp.pos {
		end = min(end, guess)
	}
	if n := end - sp.pos; n <= maxSpanProbe {
		return n
	}
	return headerProbe
}

// evenPos is where key k, between the keys k0 at position p0 and k1 at
// p1 (k0 < k1), lies if the keys spread evenly over the bytes between.
func evenPos(p0, p1, k0, k1, k int64) int64 {
	return p0 + int64(float64(k-k0)/float64(k1-k0)*float64(p1-p0))
}

// offsetGuess estimates where the header of the batch holding offset ends
// (with whole, the batch itself), from index span sp and the segment's
// batch size hint: the batch at sp.pos holds sp.off, the offsets of the
// batches after it lie about one batch past where they would if they
// spread evenly over [sp.pos, sp.next). 0 without a hint.
func (s *segment) offsetGuess(sp indexSpan, offset int64, whole bool) int64 {
	hint := s.batchHint.Load()
	tail := int64(record.BatchHeaderSize)
	if whole {
		tail = hint
	}
	switch {
	case sp.next < 0 || offset > sp.nextOff:
		return 0
	case offset <= sp.off && (!whole || hint > 0):
		return sp.pos + tail
	case hint <= 0:
		return 0
	}
	return evenPos(sp.pos, sp.next, sp.off, sp.nextOff, offset) + hint + tail
}

// hintBatch records the size of a batch a lookup found.
func (s *segment) hintBatch(h *record.BatchHeader) {
	if n := h.Size(); s.batchHint.Load() != n {
		s.batchHint.Store(n)
	}
}

// fileView holds the bytes [pos, pos+n) of a segment file for a
// header-only scan and a time lookup's record walk. Pooled: a lookup
// allocates nothing, unless a read is larger than any before.
type fileView struct {
	buf   []byte
	pos   int64
	n     int
	probe int64                // the size of the next header read, when not headerProbe
	peek  [nextHeaderPeek]byte // a next batch header a read confirms with
	// before is the last offset of the V2 batch before the one findBatch
	// found, when the scan saw it (beforeKnown; the segment's base offset
	// less one for its first batch)
	before      int64
	beforeKnown bool
}

var fileViews = sync.Pool{New: func() any { return &fileView{buf: make([]byte, recordChunk)} }}

// getView returns an empty pooled view.
func getView() *fileView {
	w := fileViews.Get().(*fileView)
	w.n, w.probe = 0, 0
	return w
}

// putView returns w to the pool unless a huge read grew it.
func putView(w *fileView) {
	if cap(w.buf) <= maxKeptBuffer {
		fileViews.Put(w)
	}
}

// errNoBatch means no batch of the segment matched a header-only scan.
var errNoBatch = errors.New("no matching batch in the segment")

// at returns the view's bytes from p on, at least need of them (end is
// the end of the data), reading probe bytes from p when the view does
// not hold them; fewer than need is an error naming what was read.
func (w *fileView) at(s *segment, p, need, probe, end int64, what string) ([]byte, error) {
	need = min(need, end-p)
	if b := w.held(p, need); b != nil {
		return b, nil
	}
	size := min(probe, end-p)
	if int64(len(w.buf)) < size {
		w.buf = make([]byte, size)
	}
	n, err := s.log.ReadAt(w.buf[:size], p)
	w.pos, w.n = p, n
	if int64(n) < need {
		return nil, fmt.Errorf("%s: reading %s at position %d: got %d bytes: %w", s.path, what, p, n, err)
	}
	return w.buf[:n], nil
}

// held returns the view's bytes from p on if it holds need of them, else
// nil: at without the read, small enough to be inlined.
func (w *fileView) held(p, need int64) []byte {
	if off := p - w.pos; off >= 0 && off+need <= int64(w.n) {
		return w.buf[off:w.n]
	}
	return nil
}

// header parses the batch header at p (size is the end of the data).
func (w *fileView) header(s *segment, p, size int64) (record.BatchHeader, error) {
	probe := int64(headerProbe)
	if w.probe > 0 {
		probe, w.probe = w.probe, 0
	}
	b, err := w.at(s, p, record.BatchHeaderSize, probe, size, "the batch header")
	if err != nil {
		return record.BatchHeader{}, err
	}
	h, err := record.ParseHeader(b)
	switch {
	case err != nil:
	case h.Size() > size-p:
		err = fmt.Errorf("batch of %d bytes runs past the segment end %d", h.Size(), size)
	case h.Size() > record.DefaultMaxBatchSize: // as record.Scanner: no huge buffer for a garbage size
		err = fmt.Errorf("batch size %d exceeds the largest allowed %d", h.Size(), record.DefaultMaxBatchSize)
	}
	if err != nil {
		return h, &record.CorruptionError{File: s.path, Pos: p, Reason: "batch header", Err: err}
	}
	return h, nil
}

// batchMatcher tells a header-only scan whether the batch at p with header
// h is the one it looks for; it may read the batch through w.
type batchMatcher func(w *fileView, p int64, h record.BatchHeader) (bool, error)

// findBatch is a header-only forward scan (no payload read, no CRC) from
// pos, the index position for offset target, to the first batch before
// size for which match is true. A first batch past target means the index
// entry is wrong (errIndexMismatch), as does any failure to parse the
// first header of a scan starting inside the segment.
//
// The offsets the headers give are checked as the scan passes them, as
// record.OffsetOrder checks a reader's batches: no V2 batch below the
// segment's base offset (its file name) or not above the last offset of
// the V2 batch before it. A header that fails is a corruption at its
// position (a checking scan tells which of the two batches is damaged).
func (s *segment) findBatch(w *fileView, pos, size, target int64, match batchMatcher) (int64, record.BatchHeader, error) {
	prevLast := s.base - 1
	for p := pos; p < size; {
		before := prevLast
		h, err := w.header(s, p, size)
		if p == pos && pos > 0 && (err != nil || h.Magic >= 2 && h.BaseOffset > target) {
			return 0, h, errIndexMismatch
		}
		if err != nil {
			return 0, h, err
		}
		if h.Magic >= 2 {
			if h.BaseOffset <= prevLast {
				return 0, h, &record.CorruptionError{File: s.path, Pos: p, Reason: fmt.Sprintf(
					"batch base offset %d does not follow offset %d (the segment's base offset or the last offset of the batch before it)", h.BaseOffset, prevLast)}
			}
			prevLast = h.LastOffset()
		}
		if ok, err := match(w, p, h); ok || err != nil {
			w.before, w.beforeKnown = before, p > pos || p == 0
			return p, h, err
		}
		p += h.Size()
	}
	return 0, record.BatchHeader{}, errNoBatch
}

// locateIn returns the position and header of the batch of s holding
// offset (the first batch whose last offset >= offset): index lookup plus
// a header-only scan, falling back to a scan from the segment start (and a
// scheduled index rebuild) when the index entry is wrong.
func (l *Log) locateIn(s *segment, seg partlog.Segment, offset int64) (int64, record.BatchHeader, error) {
	w := getView()
	defer putView(w)
	return l.locateWith(w, s, seg, offset, false)
}

// locateWith is locateIn reading through w; with whole, its first read
// is meant to hold the whole batch found, for a read of it.
func (l *Log) locateWith(w *fileView, s *segment, seg partlog.Segment, offset int64, whole bool) (int64, record.BatchHeader, error) {
	holds := func(_ *fileView, _ int64, h record.BatchHeader) (bool, error) { return h.LastOffset() >= offset, nil }
	sp := s.spanFor(offset, seg.Size)
	past := int64(0)
	if whole {
		past = s.batchHint.Load()
	}
	w.probe = spanProbe(sp, s.offsetGuess(sp, offset, whole), past)
	p, h, err := s.findBatch(w, sp.pos, seg.Size, offset, holds)
	if err == nil {
		s.hintBatch(&h)
	}
	if err == errIndexMismatch {
		l.scheduleRebuild(s)
		p, h, err = s.findBatch(w, 0, seg.Size, offset, holds)
	}
	return p, h, err
}

// Locate returns the segment holding offset and the position in its .log
// file of the batch holding offset, as Kafka's offset lookup does: an index
// lookup and a scan of batch headers only (no payload is read or
// CRC-checked, nothing is allocated). Offsets outside [StartOffset,
// EndOffset) are ErrNotFound; a corrupt header is a *record.CorruptionError
// naming file and position (partlog.ErrCorrupt).
func (l *Log) Locate(offset int64) (partlog.Segment, int64, error) {
	l.mu.Lock()
	if offset < l.startOffset || offset >= l.endLocked() {
		start, end := l.startOffset, l.endLocked()
		l.mu.Unlock()
		return partlog.Segment{}, 0, fmt.Errorf("offset %d of %s outside [%d, %d): %w", offset, l.dir, start, end, partlog.ErrNotFound)
	}
	s := l.segs[l.floorSegment(offset)]
	s.acquire()
	seg := s.meta()
	l.mu.Unlock()
	defer l.releaseAll([]*segment{s})
	pos, _, err := l.locateIn(s, seg, offset)
	if err == errNoBatch {
		return seg, 0, fmt.Errorf("offset %d in segment %s: %w", offset, s.path, partlog.ErrNotFound)
	}
	return seg, pos, err
}
