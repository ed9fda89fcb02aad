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

// A second read of a mapped segment finds the regions the first one
// mapped (a record's value at the same address); closing the segment's
// files (the store's close) unmaps them.
func TestRegionsStayMappedUntilClose(t *testing.T) {
	l := mappedLog(t, 20_000, nil, 500)
	first := valueAt(t, l, 15_000)
	if again := valueAt(t, l, 15_000); again != first {
		t.Fatalf("second read found the value at %#x, the first at %#x", again, first)
	}
	s := l.segs[0]
	if n := regions.held(s); n == 0 {
		t.Fatal("no region of the segment mapped after two reads")
	}
	l.store.Close()
	if n := regions.held(s); n != 0 {
		t.Fatalf("%d regions of a closed segment still mapped", n)
	}
}

// With room for two mapped regions, reads of a segment of three regions (20 MB)
// from several offsets, by eight goroutines at once, each get every
// record from there in order, and the set never holds more than two
// regions.
func TestRegionsBoundedConcurrentReads(t *testing.T) {
	defer func(n int) { maxMappedRegions = n }(maxMappedRegions)
	maxMappedRegions = 2
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
	if n := regions.held(l.segs[0]); n > 2 {
		t.Fatalf("%d regions mapped, at most 2 allowed", n)
	}
}

// A region mapped while it reached past the segment's end (the active
// segment) shows the records appended since: a read after the appends
// gets every record, the new ones through the same mapping.
func TestRegionSeesAppends(t *testing.T) {
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
	w := regionOf(l, 0)
	if w == nil || regions.held(l.segs[0]) != 1 {
		t.Fatal("the segment's region is not the one mapped region")
	}
	start := uintptr(unsafe.Pointer(unsafe.SliceData(w.m.Data)))
	for _, off := range []int64{2_500, 3_500} {
		if at := valueAt(t, l, off); at < start || at >= start+mapRegion {
			t.Fatalf("record %d at %#x, outside the mapped region at %#x", off, at, start)
		}
	}
}

// regionOf returns the mapped region k of l's first segment, nil if none.
func regionOf(l *Log, k int64) *mappedRegion {
	regions.mu.Lock()
	defer regions.mu.Unlock()
	return regions.byKey[regionKey{l.segs[0], k}]
}

// regionsPopulated is the bytes the mapped regions count populated.
func regionsPopulated() int {
	regions.mu.Lock()
	defer regions.mu.Unlock()
	return regions.populated
}

// inRegion reports whether address at lies in w's mapping.
func inRegion(w *mappedRegion, at uintptr) bool {
	start := uintptr(unsafe.Pointer(unsafe.SliceData(w.m.Data)))
	return at >= start && at < start+uintptr(len(w.m.Data))
}

// The batch that holds the first region's end (batches of 500 KB) is read
// through that region's overlap, not a mapping of its own: its records'
// values lie in the region, and the read goes on into the next region.
func TestRegionBatchInOverlap(t *testing.T) {
	l := mappedLog(t, 20_000, nil, 500)
	var straddle int64 = -1
	for off := int64(0); off < 20_000; off += 500 {
		_, p, err := l.Locate(off)
		if err != nil {
			t.Fatal(err)
		}
		if p >= mapRegion {
			straddle = off - 1 // the last record of the batch before
			break
		}
	}
	if straddle < 0 {
		t.Fatal("no batch past the first region")
	}
	got := readLog(t, l, straddle-499)
	if len(got) != int(20_000-(straddle-499)) || got[0].off != straddle-499 {
		t.Fatalf("read from %d: %d records from %d", straddle-499, len(got), got[0].off)
	}
	w := regionOf(l, 0)
	if w == nil {
		t.Fatal("region 0 not mapped")
	}
	if at := valueAt(t, l, straddle); !inRegion(w, at) || at < uintptr(unsafe.Pointer(&w.m.Data[0]))+mapRegion-(1<<20) {
		t.Fatalf("record %d, in the batch across the grid line, at %#x: not in region 0", straddle, at)
	}
}

// With a budget of 3 MiB populated, reads of a segment of three regions
// get every record and leave the set holding one region; the regions
// it dropped are unmapped.
func TestRegionsByteBudget(t *testing.T) {
	defer func(n int) { maxMappedBytes = n }(maxMappedBytes)
	maxMappedBytes = 3 << 20
	l := mappedLog(t, 20_000, nil, 500)
	valueAt(t, l, 100)
	w0 := regionOf(l, 0)
	if w0 == nil {
		t.Fatal("region 0 not mapped")
	}
	if got := readLog(t, l, 0); len(got) != 20_000 {
		t.Fatalf("%d records, want 20000", len(got))
	}
	if regionOf(l, 0) != nil {
		t.Fatal("region 0 still mapped past the budget")
	}
	waitUnmapped(t, w0)
	if n := regions.held(l.segs[0]); n != 1 {
		t.Fatalf("%d regions mapped, want 1", n)
	}
	populated := regionsPopulated()
	if populated > mapRegion+mapOverlap {
		t.Fatalf("%d bytes populated in the mapped regions, over one region", populated)
	}
	for _, from := range []int64{0, 9_000, 19_999} {
		if got := readLog(t, l, from); len(got) != int(20_000-from) || got[0].off != from || got[0].value != fmt.Sprintf("v%-1023d", from) {
			t.Fatalf("read from %d: %d records", from, len(got))
		}
	}
}

// waitUnmapped waits for the regions' unmapping and checks that w was
// unmapped (its addresses may be another mapping's by now).
func waitUnmapped(t *testing.T, w *mappedRegion) {
	t.Helper()
	regions.settle()
	if !w.unmapped.Load() {
		t.Fatalf("region %d still mapped", w.key.k)
	}
}

// A region whose release takes the set over its budget while another
// region is more recent is dropped by that release and unmapped once, by
// the set, not again by its last user; the set's count of populated
// bytes is then the other region's.
func TestReleaseOverBudgetDropsRegion(t *testing.T) {
	defer func(n int) { maxMappedBytes = n }(maxMappedBytes)
	maxMappedBytes = 1 << 20
	l := mappedLog(t, 20_000, nil, 500)
	s := l.segs[0]
	w0, err := regions.get(s, 0)
	if err != nil {
		t.Fatal(err)
	}
	w1, err := regions.get(s, 1)
	if err != nil {
		t.Fatal(err)
	}
	w1.populated.add(0, 4096)
	regions.release(w1)
	w0.populated.add(0, 2<<20)
	regions.release(w0)
	if regionOf(l, 0) != nil || regionOf(l, 1) != w1 {
		t.Fatal("the release over the budget did not drop its own, least recent, region")
	}
	waitUnmapped(t, w0)
	populated := regionsPopulated()
	if populated != 4096 {
		t.Fatalf("%d bytes counted populated, want region 1's 4096", populated)
	}
}
