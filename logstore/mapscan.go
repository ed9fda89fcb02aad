package logstore

import (
	"runtime/debug"
	"unsafe"

	"github.com/partfs/partfs/record"
	"github.com/partfs/partfs/vfs"
)

// A scan of mapMin bytes or more reads the segment through a read-only
// mapping (scanMapped), whose pages the kernel maps populateStep bytes at a
// time ahead of the scan; shorter ones read it with preads into a buffer.
const (
	mapMin       = 1 << 20
	populateStep = 2 << 20
)

// scanMapped is scanWindows of [pos, end) through a mapping of the
// segment: the batches passed to fn, and the records decoded from them,
// are the page cache's bytes, not a copy of them, valid until it returns.
// done is false when the segment cannot be mapped (the caller reads it).
//
// The data directory can be written by others: a segment truncated under
// the scan makes the next touch of a byte past its new end fault (SIGBUS).
// The scan's goroutine panics instead of crashing (debug.SetPanicOnFault),
// and a fault in the mapping, in fn or in the scan, is recovered here: it
// fails the scan as a truncation at the position it had reached.
func scanMapped(s *segment, pos, end int64, fn func(*record.Batch) (bool, error)) (done bool, err error) {
	m, merr := vfs.Map(s.log, pos, end-pos)
	if merr != nil {
		return false, nil
	}
	defer m.Unmap()
	sc := record.NewBytesScannerAt(m.Data, pos, s.path)
	defer debug.SetPanicOnFault(debug.SetPanicOnFault(true))
	defer func() {
		if r := recover(); r != nil {
			if !faultIn(r, m.Data) {
				panic(r)
			}
			done, err = true, &record.CorruptionError{File: s.path, Pos: sc.Pos(),
				Reason: "the segment shrank under the read", Err: record.ErrTruncated}
		}
	}()
	populated := 0
	for {
		if at := int(sc.Pos() - pos); at+populateStep/2 > populated && populated < len(m.Data) {
			next := min(len(m.Data), at+populateStep)
			m.Populate(populated, next)
			populated = next
		}
		if !sc.Next() {
			return true, sc.Err()
		}
		if stop, err := fn(sc.Batch()); err != nil || stop {
			return true, err
		}
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
