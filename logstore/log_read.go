package logstore

import (
	"encoding/binary"
	"errors"
	"sync"

	"github.com/partfs/partfs/partlog"
	"github.com/partfs/partfs/record"
)

var decoders = sync.Pool{New: func() any { return new(record.Decoder) }}

// Read calls fn for each record of seg with offset >= from, in offset order,
// up to seg.Next. Control batches and records of aborted transactions are
// skipped. Corrupt data fails the read with a *record.CorruptionError
// (partlog.ErrCorrupt) naming the file and position.
//
// The batch holding from is found by Locate's header-only scan and read
// with one pread, or through a mapping of the segment when it is
// mapLocatedMin bytes or more; the batches after it by one pooled scanner,
// or, from mapMin bytes on, through a mapping (scanMapped: the records'
// bytes are the page cache's, not a copy). Decoder, scanner and buffers
// are pooled: a Read that maps nothing allocates nothing per call.
func (l *Log) Read(seg partlog.Segment, from int64, fn func(*record.Record) bool) error {
	if from >= seg.Next {
		return nil
	}
	s, err := l.segmentByID(seg)
	if err != nil {
		return err
	}
	defer l.releaseAll([]*segment{s})
	dec := decoders.Get().(*record.Decoder)
	defer decoders.Put(dec)
	w := getView()
	defer putView(w)
	v := recordFilter{s: s, next: seg.Next, from: from, aborted: l.abortedIn(seg.Base, seg.Next), fn: fn, dec: dec,
		order: record.NewOffsetOrder(seg.Base, seg.Next), size: seg.Size, w: w}
	if pos, h, err := l.locateWith(w, s, seg, from, true); err == nil {
		if w.beforeKnown {
			v.order.After(w.before)
			v.checked = true
		}
		switch err := v.readLocated(w, pos, &h, seg.Size); err {
		case errOrderUnknown:
			return v.rescan()
		case errLocatedUnchecked:
		default:
			return err
		}
	}
	// a header the header-only scan could not use, or a located batch
	// that failed its check (an index entry inside a batch can locate
	// one): the checking scan reports it (or finds nothing), as before
	pos := s.positionFor(from, seg.Size)
	v.restart()
	switch err := v.readFrom(pos, seg.Size); {
	case err == errOrderUnknown:
		return v.rescan()
	case !errors.Is(err, errIndexMismatch):
		return err
	}
	err = v.rescan()
	if ce := (*record.CorruptionError)(nil); errors.As(err, &ce) && ce.Pos == pos {
		// the entry's batch is where it said, and corrupt: nothing to rebuild
		return err
	}
	l.logger.WithField("segment", s.path).WithField("offset", from).
		Warn("offset index entry does not point at its batch; scanned the segment, rebuilding its index")
	l.scheduleRebuild(s)
	return err
}

var errIndexMismatch = errors.New("index entry does not match the segment")

// errOrderUnknown means the first batch of a read from inside the segment
// and the batch after it overlap, and which of the two is damaged depends
// on the batches before, which that read did not see: nothing was passed
// on, and a scan from the segment's start (rescan) tells.
var errOrderUnknown = errors.New("batch offsets overlap the next batch's; the batches before tell which is damaged")

// errLocatedUnchecked is readLocated's failure of the located batch's
// check (CRC, length), before any of its records was passed on.
var errLocatedUnchecked = errors.New("located batch failed its check")

// positionFor is the position an offset index lookup gives for offset.
func (s *segment) positionFor(offset, size int64) int64 {
	return s.spanFor(offset, size).pos
}

// indexSpan is what an offset index lookup tells of the batch holding an
// offset past off: it starts after pos, at next or before it (next is -1
// when there is no entry after pos before the segment's end); off and
// nextOff are the entries' offsets.
type indexSpan struct{ pos, next, off, nextOff int64 }

// spanFor is the index span of offset.
func (s *segment) spanFor(offset, size int64) indexSpan { return s.spanNear(offset, size, -1) }

// spanNear is spanFor trying the offset index entry at slot first
// (index.OffsetIndex.SpanNear).
func (s *segment) spanNear(offset, size int64, slot int) indexSpan {
	if offset <= s.base {
		return indexSpan{next: -1}
	}
	s.ixmu.RLock()
	sp := s.oidx.SpanNear(offset, slot)
	s.ixmu.RUnlock()
	if int64(sp.Pos) >= size || sp.Pos < 0 {
		return indexSpan{next: -1}
	}
	out := indexSpan{pos: int64(sp.Pos), next: int64(sp.NextPos), off: sp.Offset, nextOff: sp.NextOffset}
	if out.next <= out.pos || out.next >= size || out.nextOff <= out.off {
		out.next = -1
	}
	return out
}

// recordFilter hands the records of a Read to its callback: offsets in
// [from, next), no control batches, no records of aborted transactions.
type recordFilter struct {
	s          *segment
	next, from int64
	aborted    []abortedTxn
	fn         func(*record.Record) bool
	dec        *record.Decoder
	first      bool // checking the first batch of a scan from an index position
	pos        int64
	order      record.OffsetOrder // offsets no CRC covers, checked like one
	checked    bool               // order has checked a batch of this scan
	size       int64              // the end of the segment's data
	w          *fileView          // bytes a peek at the next batch header may find held
	tail       []byte             // the bytes after the batch being passed on, when its read held them
}

// readLocated reads the batch at pos (header h, holding from) from w,
// which the locate read it through, or else with one pread, then the rest
// of the segment up to size with one scanner. errLocatedUnchecked when
// that batch fails its check: nothing was passed on.
func (v *recordFilter) readLocated(w *fileView, pos int64, h *record.BatchHeader, size int64) error {
	stop, mapped, err := v.mappedLocated(w, pos, h)
	if !mapped {
		stop, err = v.readLocatedBatch(w, pos, h)
	}
	if err == errLocatedUnchecked || err == errOrderUnknown {
		return err
	}
	if err != nil || stop {
		return scanErr(v.s, pos, err)
	}
	next := pos + h.Size()
	return scanErr(v.s, next, scanWithFirst(v.s, next, size, min(size-next, locatedRest), v.batch))
}

// readLocatedBatch passes the located batch at pos (header h) to v.batch
// from w, which the locate read it through, or else read with one pread;
// true when the read is done, errLocatedUnchecked when the batch fails
// its check.
func (v *recordFilter) readLocatedBatch(w *fileView, pos int64, h *record.BatchHeader) (bool, error) {
	bb := batchBufs.Get().(*batchBuf)
	defer putBatchBuf(bb)
	b, err := v.s.heldBatch(w, bb, pos, h)
	if err != nil {
		return false, errLocatedUnchecked
	}
	v.tail = bb.following(&b)
	defer func() { v.tail = nil }()
	return v.batch(&b)
}

// mapLocatedMin is the size from which a located batch that the locate's
// read does not hold is read through a mapping of the segment
// (mappedLocated) rather than copied by a pread.
const mapLocatedMin = 256 << 10

// mappedLocated passes the located batch at pos (header h) to v.batch
// through a mapping of the segment, when it is mapLocatedMin bytes or more
// and w does not hold it: its CRC is checked and its records decoded in
// the page cache's bytes, which a pread would first copy (for the 1 MiB
// batch of a `cat >> log` write() the copy cost more than the check).
// mapped is false when the batch is left to readLocatedBatch;
// errLocatedUnchecked when the batch fails its check.
func (v *recordFilter) mappedLocated(w *fileView, pos int64, h *record.BatchHeader) (stop, mapped bool, err error) {
	if h.Size() < mapLocatedMin || w.held(pos, h.Size()) != nil {
		return false, false, nil
	}
	checked := false
	_, mapped, err = scanMapped(v.s, pos, pos+h.Size(), int(h.Size()), func(b *record.Batch) (bool, error) {
		checked = true
		stop, err = v.batch(b)
		return stop, err
	})
	if err != nil && !checked {
		err = errLocatedUnchecked
	}
	return stop, mapped, err
}

// locatedRest is how much of the segment after a located batch a Read
// scans with preads, which read ahead 32 KiB first: a lookup's rendering
// stops a few records on, where mapping the segment (and unmapping it)
// costs more than the reads. A longer scan goes on through a mapping.
const locatedRest = 512 << 10

// readFrom scans from pos (0 or an index position) and hands the records
// >= from to fn; errIndexMismatch when the batch at pos is not the one an
// index entry for from should point at.
func (v *recordFilter) readFrom(pos, size int64) error {
	v.first, v.pos = pos > 0, pos
	err := scanFrom(v.s, pos, size, v.batch)
	if err != nil && err != errIndexMismatch && v.first {
		return errIndexMismatch
	}
	if err == errIndexMismatch || err == errOrderUnknown {
		return err
	}
	return scanErr(v.s, pos, err)
}

// restart makes the next batch the first of a new scan.
func (v *recordFilter) restart() {
	v.order, v.checked = record.NewOffsetOrder(v.order.Base, v.order.Limit), false
}

// rescan reads the segment from its start with a new offset order check.
func (v *recordFilter) rescan() error {
	v.restart()
	return v.readFrom(0, v.size)
}

// batch passes the wanted records of b to fn; true when the read is done.
func (v *recordFilter) batch(b *record.Batch) (bool, error) {
	h := &b.Header
	if v.first && h.BaseOffset > v.from && h.Magic >= 2 {
		return true, errIndexMismatch
	}
	v.first = false
	predecessor := v.checked || b.Pos == 0
	if err := v.order.Check(b); err != nil {
		return true, corruptErr(v.s, b.Pos, err)
	}
	v.checked = true
	if h.LastOffset() < v.from || h.IsControl() {
		return false, nil
	}
	if v.order.Jumped() {
		if err := v.confirm(b, predecessor); err != nil {
			return true, err
		}
	}
	fn := v.fn
	if txn := abortedFor(v.aborted, h); txn != nil { // its aborted records are skipped
		fn = func(r *record.Record) bool { return isAborted(txn, r.Offset) || v.fn(r) }
	}
	stop, err := v.dec.RecordsIn(b, v.from, v.next, fn)
	if err != nil {
		return true, corruptErr(v.s, b.Pos, err)
	}
	return stop, nil
}

// confirm checks b, whose base offset jumped over a gap (or whose
// predecessor this read did not see), against the base offset of the V2
// batch after it before any of its records is passed on: a base offset
// damaged upwards makes it overlap that batch (record.OffsetOrder.Follows).
// errOrderUnknown when they overlap and the batch before b is unknown.
// A next header that cannot be read is left to the scan that reaches it.
func (v *recordFilter) confirm(b *record.Batch, predecessor bool) error {
	next := b.Pos + int64(len(b.Raw))
	if next+nextHeaderPeek > v.size {
		return nil
	}
	hd := v.w.held(next, nextHeaderPeek)
	if hd == nil && len(v.tail) >= nextHeaderPeek {
		hd = v.tail
	}
	if hd == nil {
		if n, _ := v.s.log.ReadAt(v.w.peek[:], next); n < nextHeaderPeek {
			return nil
		}
		hd = v.w.peek[:]
	}
	base := int64(binary.BigEndian.Uint64(hd))
	if hd[nextHeaderPeek-1] < 2 || base > b.Header.LastOffset() {
		return nil
	}
	if !predecessor {
		return errOrderUnknown
	}
	return v.order.Follows(v.s.path, next, base)
}

// nextHeaderPeek is how much of a batch header confirm reads: the base
// offset, the length, the leader epoch and the magic byte.
const nextHeaderPeek = 17

// scanErr makes a scan failure at or after pos name its place (corruptErr).
func scanErr(s *segment, pos int64, err error) error {
	if err == nil {
		return nil
	}
	return corruptErr(s, pos, err)
}

// corruptErr makes a read failure of s at pos a corruption naming its
// place: a *record.CorruptionError (matching record.ErrCorruption, which
// is partlog.ErrCorrupt) naming the file and the position. One that names
// them already is returned as it is.
func corruptErr(s *segment, pos int64, err error) error {
	var ce *record.CorruptionError
	if errors.As(err, &ce) {
		return err
	}
	return &record.CorruptionError{File: s.path, Pos: pos, Err: err}
}
