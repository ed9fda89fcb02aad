package logstore

import (
	"fmt"
	"sync"
	"testing"
	"unsafe"

	"github.com/partfs/partfs/record"
)

// valueAt reads offset off of l's first segment and returns the address
// of its value's bytes.
func valueAt(t *testing.T, l *Log, off int64) uintptr {
	segs, release := l.Segments()
	defer release()
	var at uintptr
	err := l.Read(segs[0], off, func(r *record.Record) bool {
		if r.Offset == off {
			at = uintptr(unsafe.Pointer(unsafe.SliceData(r.Value)))
		}
		return r.Offset < off
	})
	if err != nil || at == 0 {
		t.Fatalf("read of offset %d: %v", off, err)
	}
	return at
}

// A second read of a mapped segment finds the windows the first one
// mapped (a record's value at the same address); closing the segment's
// files (the store's close) unmaps them.
func TestMapCacheKeepsWindowsUntilClose(t *testing.T) {
	l := mappedLog(t, 20_000, nil, 500)
	first := valueAt(t, l, 15_000)
	if again := valueAt(t, l, 15_000); again != first {
		t.Fatalf("second read found the value at %#x, the first at %#x", again, first)
	}
	s := l.segs[0]
	if n := mapCache.cached(s); n == 0 {
		t.Fatal("no window of the segment cached after two reads")
	}
	l.store.Close()
	if n := mapCache.cached(s); n != 0 {
		t.Fatalf("%d windows of a closed segment still cached", n)
	}
}

// With a cache of two windows, reads of a segment of three windows (20 MB)
// from several offsets, by eight goroutines at once, each get every
// record from there in order, and the cache never holds more than two
// windows.
func TestMapCacheBoundedConcurrentReads(t *testing.T) {
	defer func(n int) { mapCacheWindows = n }(mapCacheWindows)
	mapCacheWindows = 2
	l := mappedLog(t, 20_000, nil, 500)
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	for g := 0; g < 8; g++ {
		wg.Add(1)
		go func(from int64) {
			defer wg.Done()
			segs, release := l.Segments()
			defer release()
			want := from
			err := l.Read(segs[0], from, func(r *record.Record) bool {
				if r.Offset != want || string(r.Value) != fmt.Sprintf("v%-1023d", want) {
					errs <- fmt.Errorf("from %d: offset %d (want %d) value %.12q", from, r.Offset, want, r.Value)
					return false
				}
				want++
				return true
			})
			if err == nil && want != 20_000 {
				err = fmt.Errorf("from %d: read to %d", from, want)
			}
			if err != nil {
				errs <- err
			}
		}(int64(g) * 2_400)
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	if n := mapCache.cached(l.segs[0]); n > 2 {
		t.Fatalf("%d windows cached, at most 2 allowed", n)
	}
}
