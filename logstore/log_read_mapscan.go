package logstore

import (
	"errors"
	"runtime/debug"
	"sync"
	"unsafe"

	"github.com/partfs/partfs/record"
	"github.com/partfs/partfs/vfs"
)

// A scan of mapMin bytes or more reads the segment through read-only
// mappings of mapRegion bytes, kept mapped between scans (regions), whose
// pages the kernel maps ahead of the scan once it is halfway through the
// range it populated last: firstPopulate bytes first, then twice as many
// each time up to populateStep, so a scan that stops after a few records
// (a lookup's first rendering) maps only those pages. A located batch
// (mappedLocated) is populated whole at once instead: its CRC check reads
// it all, and the pages left to fault in one by one cost more. Shorter
// scans read the segment with preads into a buffer.
const (
	mapMin        = 1 << 20
	mapRegion     = 8 << 20
	mapOverlap    = 2 << 20
	firstPopulate = 256 << 10
	populateStep  = 2 << 20
)

// scanMapped is scanRegions of [pos, end) through mapped regions of the
// segment (regions): the batches passed to fn, and the records decoded
// from them, are the page cache's bytes, not a copy of them, valid until
// fn returns. A scan goes on in a region through its overlap; a batch
// that starts in a region and runs past its overlap (one larger than
// mapOverlap) is read through a mapping of its own. done is false when a
// region could not be mapped: the batches from next on are left to the
// caller. first is how much the scan populates first (firstPopulate, or
// a located batch's size).
func scanMapped(s *segment, pos, end int64, first int, fn func(*record.Batch) (bool, error)) (next int64, done bool, err error) {
	for ; pos < end; first = firstPopulate {
		w, err := regions.get(s, pos/mapRegion)
		if err != nil {
			return pos, false, nil
		}
		limit := min(end, w.start+int64(len(w.m.Data)))
		next, stop, err := scanMappedData(s, w.m, w.start, pos, limit, &w.populated, first, false, fn)
		regions.release(w)
		if stop || err != nil && (limit == end || !errors.Is(err, record.ErrTruncated)) {
			return next, true, err
		}
		if (next < limit || err != nil) && next < w.start+mapRegion { // the batch at next runs past the region
			if next, stop, err = scanCrossing(s, next, end, first, fn); err == errNotMapped {
				return next, false, nil
			}
			if stop || err != nil {
				return next, true, err
			}
		}
		pos = next
	}
	return pos, true, nil
}

var errNotMapped = errors.New("segment region not mapped")

// scanCrossing passes fn the one batch at pos, which crosses the end of
// its region, through a mapping of its own from pos (of a region's size,
// doubled until the batch fits; first bytes populated first), unmapped
// after.
func scanCrossing(s *segment, pos, end int64, first int, fn func(*record.Batch) (bool, error)) (next int64, stop bool, err error) {
	for n := int64(mapRegion); ; n *= 2 {
		size := min(n, end-pos)
		m, merr := vfs.Map(s.log, pos, size)
		if merr != nil {
			return pos, false, errNotMapped
		}
		next, stop, err = scanMappedData(s, m, pos, pos, pos+size, &pageRange{}, first, true, fn)
		m.Unmap()
		if next > pos || stop || pos+size == end || !errors.Is(err, record.ErrTruncated) {
			return next, stop, err
		}
	}
}

// scanMappedData passes fn the batches wholly inside the file's bytes
// [pos, limit), which lie in m (a mapping of the file from start on;
// populated: the range of it whose pages were populated, extended here,
// by first bytes first), and returns the position after the last one and whether fn stopped the
// scan (or it failed). With once it returns after the first batch.
//
// The data directory can be written by others: a segment truncated under
// the scan makes the next touch of a byte past its new end fault (SIGBUS).
// The scan's goroutine panics instead of crashing (debug.SetPanicOnFault),
// and a fault in the mapping, in fn or in the scan, is recovered here: it
// fails the scan as a truncation at the batch fn had, or else at the
// position the scan had reached.
func scanMappedData(s *segment, m *vfs.Mapping, start, pos, limit int64, populated *pageRange, first int, once bool,
	fn func(*record.Batch) (bool, error)) (next int64, stop bool, err error) {
	data := m.Data
	sc := record.NewBytesScannerAt(data[pos-start:limit-start], pos, s.path)
	inFn := int64(-1) // the position of the batch fn has, while it runs
	defer debug.SetPanicOnFault(debug.SetPanicOnFault(true))
	defer func() {
		if r := recover(); r != nil {
			if !faultIn(r, data) {
				panic(r)
			}
			at := sc.Pos()
			if inFn >= 0 {
				at = inFn
			}
			next, stop, err = at, true, &record.CorruptionError{File: s.path, Pos: at,
				Reason: "the segment shrank under the read", Err: record.ErrTruncated}
		}
	}()
	// [lo, hi) is the last range populated (from start), chunk the next's
	// size; the pages below what the region had populated are mapped
	end := int(limit - start)
	lo, hi, chunk := int(pos-start), int(pos-start), first
	if p := populated.covered(hi); p > hi {
		lo, hi = p, p
	}
	for {
		if at := int(sc.Pos() - start); hi < end && 2*at >= lo+hi {
			from := hi
			lo, hi = hi, min(end, max(at, hi)+chunk)
			m.Populate(from, hi)
			populated.add(from, hi)
			chunk = min(2*chunk, populateStep)
		}
		if !sc.Next() {
			return sc.Pos(), false, sc.Err()
		}
		inFn = sc.Batch().Pos
		if stop, err := fn(sc.Batch()); err != nil || stop {
			return sc.Pos(), true, err
		}
		inFn = -1
		if once {
			return sc.Pos(), false, nil
		}
	}
}

// pageRange is the range of a mapping whose pages a scan populated
// (the kernel may have unmapped some since: those fault back in), and
// the bytes populated in all (what the mapping may count in the RSS,
// up to its size).
type pageRange struct {
	mu     sync.Mutex
	lo, hi int
	total  int
}

// populatedBytes is the bytes populated so far (some perhaps twice).
func (r *pageRange) populatedBytes() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.total
}

// covered is the end of the populated range if it holds at, else at.
func (r *pageRange) covered(at int) int {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.lo <= at && at < r.hi {
		return r.hi
	}
	return at
}

// add notes that [from, to) was populated: the range grows by it if they
// touch, or else becomes it if it is longer.
func (r *pageRange) add(from, to int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.total += to - from
	switch {
	case from <= r.hi && to >= r.lo:
		r.lo, r.hi = min(r.lo, from), max(r.hi, to)
	case to-from > r.hi-r.lo:
		r.lo, r.hi = from, to
	}
}

// faultIn reports whether r is the panic of a memory fault in data.
func faultIn(r any, data []byte) bool {
	f, ok := r.(interface{ Addr() uintptr })
	if !ok || len(data) == 0 {
		return false
	}
	start := uintptr(unsafe.Pointer(unsafe.SliceData(data)))
	return f.Addr() >= start && f.Addr()-start < uintptr(len(data))
}
