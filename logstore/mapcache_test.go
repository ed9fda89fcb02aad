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

// A window cached while it reached past the segment's end (the active
// segment) shows the records appended since: a read after the appends
// gets every record, the new ones through the same mapping.
func TestMapCacheWindowSeesAppends(t *testing.T) {
	l := mappedLog(t, 3_000, nil, 500)
	if got := readLog(t, l, 0); len(got) != 3_000 {
		t.Fatalf("%d records, want 3000", len(got))
	}
	for done := 3_000; done < 4_000; done += 500 {
		rs := make([]record.Record, 500)
		for i := range rs {
			rs[i] = record.Record{Timestamp: int64(done + i + 1), Value: []byte(fmt.Sprintf("v%-1023d", done+i))}
		}
		if _, err := l.Append(rs); err != nil {
			t.Fatal(err)
		}
	}
	got := readLog(t, l, 0)
	if len(got) != 4_000 {
		t.Fatalf("%d records after the appends, want 4000", len(got))
	}
	for i, r := range got {
		if r.off != int64(i) || r.value != fmt.Sprintf("v%-1023d", i) {
			t.Fatalf("record %d: offset %d value %.12q", i, r.off, r.value)
		}
	}
	mapCache.mu.Lock()
	w := mapCache.wins[windowKey{l.segs[0], 0}]
	mapCache.mu.Unlock()
	if w == nil || mapCache.cached(l.segs[0]) != 1 {
		t.Fatal("the segment's window is not the one cached window")
	}
	start := uintptr(unsafe.Pointer(unsafe.SliceData(w.m.Data)))
	for _, off := range []int64{2_500, 3_500} {
		if at := valueAt(t, l, off); at < start || at >= start+mapWindow {
			t.Fatalf("record %d at %#x, outside the cached window at %#x", off, at, start)
		}
	}
}
