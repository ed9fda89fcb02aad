package logstore

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"strings"
	"testing"
	"unsafe"

	"github.com/partfs/partfs/kafkaname"
	"github.com/partfs/partfs/partlog"
	"github.com/partfs/partfs/record"
	"github.com/partfs/partfs/vfs"
)

// mappedLog is a log of one segment holding records of 1 KiB values,
// "v<offset>" padded, appended in batches of the sizes given (the last
// one repeated up to n records, each one batch): mapMin bytes or
// more.
func mappedLog(t *testing.T, n int, cfg map[string]string, batches ...int) *Log {
	st, l := openAt(t, t.TempDir(), Options{NoBackground: true, Defaults: cfg})
	t.Cleanup(func() { st.Close() })
	for done, i := 0, 0; done < n; i++ {
		rs := make([]record.Record, batches[min(i, len(batches)-1)])
		for i := range rs {
			rs[i] = record.Record{Timestamp: int64(done + i + 1), Value: []byte(fmt.Sprintf("v%-1023d", done+i))}
		}
		if _, err := l.Append(rs); err != nil {
			t.Fatal(err)
		}
		done += len(rs)
	}
	if size := l.Stats().SizeBytes; size < mapMin {
		t.Fatalf("log of %d bytes, want %d or more", size, mapMin)
	}
	return l
}

// TestMappedReadRecords reads segments scanned through mappings from
// several offsets: every record from there, in order, with its value. The
// first segment spans three regions, batches crossing their ends; the
// second holds a batch larger than a region.
func TestMappedReadRecords(t *testing.T) {
	crossing := mappedLog(t, 20_000, nil, 500)
	large := mappedLog(t, 13_000, map[string]string{"max.message.bytes": "20000000"}, 500, 500, 10_000, 500)
	for _, l := range []*Log{crossing, large} {
		n := l.EndOffset()
		for _, from := range []int64{0, 1, 499, 500, n / 2, n - 1} {
			got := readLog(t, l, from)
			if int64(len(got)) != n-from {
				t.Fatalf("from %d: %d records, want %d", from, len(got), n-from)
			}
			for i, r := range got {
				off := from + int64(i)
				if r.off != off || r.ts != off+1 || r.value != fmt.Sprintf("v%-1023d", off) {
					t.Fatalf("from %d: record %d is offset %d ts %d value %.12q", from, i, r.off, r.ts, r.value)
				}
			}
		}
	}
}

// TestMappedReadCorruptPosition flips a byte of a batch deep in a mapped
// segment: the read fails with a corruption naming that batch's position
// in the file, after passing every record before it.
func TestMappedReadCorruptPosition(t *testing.T) {
	l := mappedLog(t, 6000, nil, 500)
	segs, release := l.Segments()
	defer release()
	_, pos, err := l.Locate(4000) // the batch of offsets 4000-4499
	if err != nil {
		t.Fatal(err)
	}
	path := segmentPath(l.dir, 0, kafkaname.LogSuffix)
	mutate(t, vfs.Default, path, func(b []byte) []byte { b[pos+200] ^= 0xff; return b })
	n := 0
	err = l.Read(segs[0], 0, func(r *record.Record) bool { n++; return true })
	var ce *record.CorruptionError
	if !errors.As(err, &ce) || !errors.Is(err, partlog.ErrCorrupt) || ce.Pos != pos {
		t.Fatalf("read: %v, want a corruption at position %d", err, pos)
	}
	if n != 4000 {
		t.Fatalf("%d records passed before the corrupt batch, want 4000", n)
	}
}

// TestMappedReadSegmentTruncated truncates the segment under a mapped
// read (as another account writing the data directory could) once the
// callback has had the records of the first two appends: to 4 KiB, and to
// just past the header of the next batch, whose bytes the CRC check then
// faults on. The read fails with a truncation at that batch, and the
// process does not crash of the SIGBUS.
func TestMappedReadSegmentTruncated(t *testing.T) {
	for _, name := range []string{"to 4 KiB", "in the next batch"} {
		t.Run(name, func(t *testing.T) {
			l := mappedLog(t, 6000, nil, 500)
			segs, release := l.Segments()
			defer release()
			_, next, err := l.Locate(1000)
			if err != nil {
				t.Fatal(err)
			}
			size := int64(4096)
			if name != "to 4 KiB" {
				size = next + 8192
			}
			path := segmentPath(l.dir, 0, kafkaname.LogSuffix)
			n := 0
			err = l.Read(segs[0], 0, func(r *record.Record) bool {
				if n++; n == 1000 {
					if err := os.Truncate(path, size); err != nil {
						t.Fatal(err)
					}
				}
				return true
			})
			var ce *record.CorruptionError
			if !errors.As(err, &ce) || !errors.Is(err, partlog.ErrCorrupt) || !errors.Is(err, record.ErrTruncated) || ce.Pos != next {
				t.Fatalf("read of a segment truncated under it: %v, want a truncation at %d", err, next)
			}
			if n != 1000 {
				t.Fatalf("%d records passed, want the 1000 before the truncation", n)
			}
		})
	}
}

// A mapped scan that stops early has mapped little: the first record seen
// through the mapping (of the third batch of 512 KB; the second is read
// with preads, locatedRest) finds no more than its batch, the first
// populate (256 KiB) and the first batch, which the located read mapped in
// the same region, resident in it (under 1.5 MiB), not the full populate
// step (2 MiB).
func TestMappedScanPopulatesLittleFirst(t *testing.T) {
	l := mappedLog(t, 6000, nil, 500)
	segs, release := l.Segments()
	defer release()
	var file string
	var rss int64
	err := l.Read(segs[0], 0, func(r *record.Record) bool {
		if r.Offset < 1000 {
			return true
		}
		file, rss = mappingAt(t, uintptr(unsafe.Pointer(unsafe.SliceData(r.Value))))
		return false
	})
	if err != nil || file == "" {
		t.Fatalf("read: %v (record 1000 in the mapping of %q)", err, file)
	}
	if rss > 3<<19 {
		t.Fatalf("%d KiB of the mapping resident after two batches of 512 KB", rss>>10)
	}
}

// mappingAt is the mapping of this process holding addr, from
// /proc/self/smaps: the file it maps ("" for none) and its Rss.
func mappingAt(t *testing.T, addr uintptr) (file string, rss int64) {
	f, err := os.Open("/proc/self/smaps")
	if err != nil {
		t.Skip(err)
	}
	defer f.Close()
	in := false
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		var lo, hi uintptr
		if n, _ := fmt.Sscanf(sc.Text(), "%x-%x ", &lo, &hi); n == 2 { // a mapping's first line
			if in = lo <= addr && addr < hi; in {
				if fields := strings.Fields(sc.Text()); len(fields) > 5 {
					file = fields[5]
				}
			}
			continue
		}
		if in && strings.HasPrefix(sc.Text(), "Rss:") {
			fmt.Sscanf(strings.TrimPrefix(sc.Text(), "Rss:"), "%d", &rss)
			return file, rss << 10
		}
	}
	t.Fatalf("no mapping holds %#x", addr)
	return "", 0
}

// A Read that stops a few batches after the one it located reads them with
// preads, not through a mapping of the segment (6 MB of appends cut into
// 64 KiB batches); one going on reads the rest of the segment through a
// mapping.
func TestLocatedReadMapsOnlyFarOn(t *testing.T) {
	st, l := openAt(t, t.TempDir(), Options{NoBackground: true, BatchBytes: 64 << 10})
	defer st.Close()
	for done := 0; done < 6000; done += 500 {
		rs := make([]record.Record, 500)
		for i := range rs {
			rs[i].Value = []byte(fmt.Sprintf("v%-1023d", done+i))
		}
		if _, err := l.Append(rs); err != nil {
			t.Fatal(err)
		}
	}
	segs, release := l.Segments()
	defer release()
	for _, c := range []struct {
		at     int64
		mapped bool
	}{{150, false}, {5000, true}} {
		file := "?"
		err := l.Read(segs[0], 10, func(r *record.Record) bool {
			if r.Offset < c.at {
				return true
			}
			if r.Offset != c.at || string(r.Value) != fmt.Sprintf("v%-1023d", c.at) {
				t.Fatalf("record %d: %.12q", r.Offset, r.Value)
			}
			file, _ = mappingAt(t, uintptr(unsafe.Pointer(unsafe.SliceData(r.Value))))
			return false
		})
		if err != nil || strings.HasSuffix(file, kafkaname.LogSuffix) != c.mapped {
			t.Fatalf("record %d read from the mapping of %q, want mapped %v (%v)", c.at, file, c.mapped, err)
		}
	}
}

// faultSink keeps the compiler from dropping the load that faults.
var faultSink byte

// A memory fault in fn outside the scan's mapping (here: in another
// mapping whose file shrank) is not the scan's to recover: Read panics
// with it, at the address fn touched.
func TestMappedReadFaultElsewherePanics(t *testing.T) {
	l := mappedLog(t, 6000, nil, 500)
	segs, release := l.Segments()
	defer release()
	other, err := os.CreateTemp(t.TempDir(), "other")
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	if err := other.Truncate(8192); err != nil {
		t.Fatal(err)
	}
	m, err := vfs.Map(other, 0, 8192)
	if err != nil {
		t.Fatal(err)
	}
	defer m.Unmap()
	if err := other.Truncate(0); err != nil {
		t.Fatal(err)
	}
	touched := &m.Data[4096]
	r := func() (r any) {
		defer func() { r = recover() }()
		_ = l.Read(segs[0], 0, func(r *record.Record) bool {
			if r.Offset == 3000 { // read through a mapping
				faultSink = *touched
			}
			return true
		})
		return nil
	}()
	f, ok := r.(interface{ Addr() uintptr })
	if !ok || f.Addr() != uintptr(unsafe.Pointer(touched)) {
		t.Fatalf("Read recovered %v, want the fault at %p to go on", r, touched)
	}
}

// A Read from an offset inside a located batch of mapLocatedMin bytes or
// more (two appends of 1,500 records of 1 KiB, one batch each) gets its
// records from a mapping of the segment, not a pread's copy: the right
// offsets and values from there on, into the next batch; with a byte of
// that batch flipped, it fails with a corruption at the batch's position
// before passing any record.
func TestLocatedLargeBatchReadMapped(t *testing.T) {
	l := mappedLog(t, 3000, nil, 1500)
	segs, release := l.Segments()
	defer release()
	for _, from := range []int64{0, 1, 777, 1499, 1500, 2999} {
		want, file := from, ""
		err := l.Read(segs[0], from, func(r *record.Record) bool {
			if r.Offset != want || string(r.Value) != fmt.Sprintf("v%-1023d", want) {
				t.Fatalf("from %d: offset %d (want %d) value %.12q", from, r.Offset, want, r.Value)
			}
			if want == from {
				file, _ = mappingAt(t, uintptr(unsafe.Pointer(unsafe.SliceData(r.Value))))
			}
			want++
			return want < from+600
		})
		if err != nil || want != min(from+600, 3000) {
			t.Fatalf("from %d: read to %d: %v", from, want, err)
		}
		if !strings.HasSuffix(file, kafkaname.LogSuffix) {
			t.Fatalf("from %d: the first record's value is not in a mapping of the segment (%q)", from, file)
		}
	}
	_, pos, err := l.Locate(1500)
	if err != nil {
		t.Fatal(err)
	}
	h := headerAt(t, vfs.Default, l, 0, pos)
	if h.Size() < mapLocatedMin {
		t.Fatalf("batch of %d bytes, want %d or more", h.Size(), mapLocatedMin)
	}
	path := segmentPath(l.dir, 0, kafkaname.LogSuffix)
	mutate(t, vfs.Default, path, func(b []byte) []byte { b[pos+h.Size()-100] ^= 0xff; return b })
	n := 0
	err = l.Read(segs[0], 2000, func(r *record.Record) bool { n++; return true })
	var ce *record.CorruptionError
	if !errors.As(err, &ce) || !errors.Is(err, partlog.ErrCorrupt) || ce.Pos != pos || n != 0 {
		t.Fatalf("read of a corrupt batch: %v after %d records, want a corruption at %d before any", err, n, pos)
	}
}

// TestLocatedMappedBatchTruncated truncates the segment to 8 KiB into a
// located batch read through a mapping (mapLocatedMin bytes or more):
// before the Read, and from the callback after ten of its records, whose
// next record then faults. Either way the read fails with a truncation at
// that batch's position, not at the end of the batch, past the file.
func TestLocatedMappedBatchTruncated(t *testing.T) {
	for _, during := range []bool{false, true} {
		l := mappedLog(t, 3000, nil, 1500)
		segs, release := l.Segments()
		_, pos, err := l.Locate(1500)
		if err != nil {
			t.Fatal(err)
		}
		path := segmentPath(l.dir, 0, kafkaname.LogSuffix)
		truncate := func() {
			if err := os.Truncate(path, pos+8192); err != nil {
				t.Fatal(err)
			}
		}
		if !during {
			truncate()
		}
		n := 0
		err = l.Read(segs[0], 1600, func(r *record.Record) bool {
			if n++; n == 10 && during {
				truncate()
			}
			faultSink += r.Value[len(r.Value)-1]
			return true
		})
		release()
		var ce *record.CorruptionError
		if !errors.As(err, &ce) || !errors.Is(err, partlog.ErrCorrupt) || !errors.Is(err, record.ErrTruncated) || ce.Pos != pos {
			t.Errorf("truncated during the read %v: %v, want a truncation at %d", during, err, pos)
		}
		if want := map[bool]int{false: 0, true: 10}[during]; n != want {
			t.Errorf("truncated during the read %v: %d records passed, want %d", during, n, want)
		}
	}
}
