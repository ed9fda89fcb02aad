package logstore

import (
	"errors"
	"runtime/debug"
	"unsafe"

	"github.com/partfs/partfs/record"
	"github.com/partfs/partfs/vfs"
)

// A scan of mapMin bytes or more reads the segment through read-only
// mappings of mapWindow bytes (scanMapped), whose pages the kernel maps
// ahead of the scan once it is halfway through the range mapped last:
// firstPopulate bytes first, then twice as many each time up to
// populateStep, so a scan that stops after a few records (a lookup's first
// rendering) maps, and unmaps, only those pages. Shorter scans read the
// segment with preads into a buffer. A window is unmapped once scanned,
// so a scan holds no more than one window of the page cache mapped.
const (
	mapMin        = 1 << 20
	mapWindow     = 8 << 20
	firstPopulate = 256 << 10
	populateStep  = 2 << 20
)

// scanMapped is scanWindows of [pos, end) through mappings of the
// segment, a window at a time: the batches passed to fn, and the records
// decoded from them, are the page cache's bytes, not a copy of them,
// valid until fn returns. done is false when a window could not be
// mapped: the batches from next on are left to the caller.
func scanMapped(s *segment, pos, end int64, fn func(*record.Batch) (bool, error)) (next int64, done bool, err error) {
	for n := int64(mapWindow); pos < end; {
		size := min(n, end-pos)
		next, stop, err := scanMappedWindow(s, pos, size, fn)
		switch {
		case err == errNotMapped:
			return pos, false, nil
		case stop || err != nil && (pos+size == end || !errors.Is(err, record.ErrTruncated)):
			return next, true, err
		case next == pos: // a batch larger than the window
			n *= 2
		default: // the next window starts with the batch crossing this one's end
			n = mapWindow
		}
		pos = next
	}
	return pos, true, nil
}

var errNotMapped = errors.New("segment window not mapped")

// scanMappedWindow passes fn the batches wholly inside [pos, pos+n),
// mapped, and returns the position after the last one and whether fn
// stopped the scan (or it failed).
//
// The data directory can be written by others: a segment truncated under
// the scan makes the next touch of a byte past its new end fault (SIGBUS).
// The scan's goroutine panics instead of crashing (debug.SetPanicOnFault),
// and a fault in the mapping, in fn or in the scan, is recovered here: it
// fails the scan as a truncation at the batch fn had, or else at the
// position the scan had reached.
func scanMappedWindow(s *segment, pos, n int64, fn func(*record.Batch) (bool, error)) (next int64, stop bool, err error) {
	m, merr := vfs.Map(s.log, pos, n)
	if merr != nil {
		return pos, false, errNotMapped
	}
	defer m.Unmap()
	sc := record.NewBytesScannerAt(m.Data, pos, s.path)
	inFn := int64(-1) // the position of the batch fn has, while it runs
	defer debug.SetPanicOnFault(debug.SetPanicOnFault(true))
	defer func() {
		if r := recover(); r != nil {
			if !faultIn(r, m.Data) {
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
	// [start, populated) is the last range populated, chunk the next's size
	start, populated, chunk := 0, 0, firstPopulate
	for {
		if at := int(sc.Pos() - pos); populated < len(m.Data) && 2*at >= start+populated {
			start, populated = populated, min(len(m.Data), max(at, populated)+chunk)
			m.Populate(start, populated)
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
