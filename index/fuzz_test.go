package index

import (
	"encoding/binary"
	"testing"

	"github.com/partfs/partfs/vfs"
)

// openMem opens data, an in-memory file called name, with open
// (OpenOffsetIndex or OpenTimeIndex) at base; an error fails t.
func openMem[X any](t testing.TB, open func(File, int64, int) (X, error), name string, data []byte, base int64) X {
	t.Helper()
	f, err := vfs.NewCrashFS().Create(name)
	must(t, err)
	_, err = f.Write(data)
	must(t, err)
	x, err := open(f, base, 0)
	must(t, err)
	return x
}

// FuzzOffsetIndex opens arbitrary bytes as an .index: nothing panics, and
// when the sanity check passes, lookups agree with a linear scan.
func FuzzOffsetIndex(f *testing.F) {
	f.Add([]byte{}, int64(0), int64(5))
	f.Add(EncodeOffsetEntry(EncodeOffsetEntry(nil, 3, 4730), 7, 9571), int64(10000), int64(5))
	f.Add(make([]byte, 64), int64(100), int64(1))
	f.Add([]byte{0, 0, 0, 1, 0, 0, 0, 2, 0xff}, int64(3), int64(1))
	f.Add(EncodeOffsetEntry(EncodeOffsetEntry(nil, 9, 10), 2, 20), int64(100), int64(8))
	f.Fuzz(func(t *testing.T, data []byte, logSize, target int64) {
		const base = 1000
		ox := openMem(t, OpenOffsetIndex, "/f.index", data, base)
		off, pos := ox.Lookup(target)
		n := len(data) / OffsetEntrySize
		hints := []int{-1, 0, 1, n - 1, n, int(uint64(target) % uint64(n+2))}
		for _, hint := range hints { // any entries: no panic
			ox.SpanNear(target, hint)
		}
		if ox.SanityCheck(logSize) != nil {
			return
		}
		for _, hint := range hints {
			if near, sp := ox.SpanNear(target, hint), ox.Span(target); near != sp {
				t.Fatalf("SpanNear(%d, %d) = %+v, Span %+v", target, hint, near, sp)
			}
		}
		wantOff, wantPos := int64(base), int32(0)
		for i := 0; i+OffsetEntrySize <= len(data); i += OffsetEntrySize {
			rel, p := DecodeOffsetEntry(data[i:])
			if base+int64(rel) <= target {
				wantOff, wantPos = base+int64(rel), p
			}
		}
		if off != wantOff || pos != wantPos {
			t.Fatalf("lookup(%d) = (%d,%d), want (%d,%d)", target, off, pos, wantOff, wantPos)
		}
		if pos < 0 || int64(pos) >= max(logSize, 1) && off != base {
			t.Fatalf("valid index gave position %d outside %d", pos, logSize)
		}
	})
}

// FuzzTimeIndex does the same for a .timeindex.
func FuzzTimeIndex(f *testing.F) {
	f.Add([]byte{}, int64(10), int64(5))
	f.Add(EncodeTimeEntry(EncodeTimeEntry(nil, 100, 3), 200, 7), int64(10), int64(150))
	f.Add(make([]byte, 36), int64(-1), int64(0))
	f.Add(EncodeTimeEntry(EncodeTimeEntry(nil, 300, 3), 200, 7), int64(10), int64(250))
	f.Fuzz(func(t *testing.T, data []byte, next, target int64) {
		const base = 50
		tx := openMem(t, OpenTimeIndex, "/f.timeindex", data, base)
		ts, off := tx.Lookup(target)
		if tx.SanityCheck(next) != nil {
			return
		}
		wantTs, wantOff := int64(-1), int64(base)
		for i := 0; i+TimeEntrySize <= len(data); i += TimeEntrySize {
			et, rel := DecodeTimeEntry(data[i:])
			if et <= target {
				wantTs, wantOff = et, base+int64(rel)
			}
		}
		if ts != wantTs || off != wantOff {
			t.Fatalf("lookup(%d) = (%d,%d), want (%d,%d)", target, ts, off, wantTs, wantOff)
		}
		if n := len(data) / TimeEntrySize; n > 0 {
			lts, loff := tx.LastEntry()
			i := (n - 1) * TimeEntrySize
			if lts != int64(binary.BigEndian.Uint64(data[i:])) || loff != base+int64(int32(binary.BigEndian.Uint32(data[i+8:]))) {
				t.Fatalf("LastEntry (%d,%d) disagrees with the bytes", lts, loff)
			}
		}
	})
}
