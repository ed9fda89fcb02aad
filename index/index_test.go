package index

import (
	"bytes"
	"errors"
	"fmt"
	"math"
	"math/rand"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/partfs/partfs/internal/testutil"
	"github.com/partfs/partfs/record"
	"github.com/partfs/partfs/vfs"
)

func openFile(t testing.TB, name string) vfs.File {
	t.Helper()
	f, err := vfs.Default.OpenFile(name, os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	return f
}

func TestPreallocationSizes(t *testing.T) {
	dir := t.TempDir()
	ox, err := OpenOffsetIndex(openFile(t, filepath.Join(dir, "a.index")), 0, DefaultMaxBytes)
	if err != nil {
		t.Fatal(err)
	}
	tx, err := OpenTimeIndex(openFile(t, filepath.Join(dir, "a.timeindex")), 0, DefaultMaxBytes)
	if err != nil {
		t.Fatal(err)
	}
	for name, want := range map[string]int{"a.index": 10485760, "a.timeindex": 10485756} {
		b := testutil.ReadFile(t, filepath.Join(dir, name))
		if len(b) != want || !bytes.Equal(b, make([]byte, want)) {
			t.Fatalf("%s: %d bytes (zero: %v), want %d zero bytes", name, len(b), bytes.Equal(b, make([]byte, len(b))), want)
		}
	}
	if ox.Entries() != 0 || ox.MaxEntries() != 1310720 || tx.MaxEntries() != 873813 {
		t.Fatalf("entries %d max %d / %d", ox.Entries(), ox.MaxEntries(), tx.MaxEntries())
	}
	if off, pos := ox.Lookup(100); off != 0 || pos != 0 {
		t.Fatalf("empty lookup: %d %d", off, pos)
	}
	if ts, off := tx.Lookup(100); ts != -1 || off != 0 {
		t.Fatalf("empty time lookup: %d %d", ts, off)
	}
	ox.Close()
	tx.Close()
	if n := len(testutil.ReadFile(t, filepath.Join(dir, "a.index"))); n != 0 {
		t.Fatalf("close did not trim: %d bytes", n)
	}
}

// TestKafkaBytes checks the bytes of the entries a Kafka 3.7 broker wrote
// for __consumer_offsets-6 (kafka-format.md §3): (3 -> 4730), (7 -> 9571)
// and time entries (…783399, 3), (…518093, 7), (…578176, 12).
func TestKafkaBytes(t *testing.T) {
	dir := t.TempDir()
	on, tn := filepath.Join(dir, "0.index"), filepath.Join(dir, "0.timeindex")
	ox, _ := OpenOffsetIndex(openFile(t, on), 0, 4096)
	tx, _ := OpenTimeIndex(openFile(t, tn), 0, 4096)
	must(t, ox.Append(3, 4730))
	must(t, ox.Append(7, 9571))
	must(t, tx.MaybeAppend(1700000783399, 3, false))
	must(t, tx.MaybeAppend(1700000518093+1000000, 7, false))
	must(t, tx.MaybeAppend(1700001578176+1000000, 12, true))
	must(t, ox.Close())
	must(t, tx.Close())
	wantO := []byte{0, 0, 0, 3, 0, 0, 0x12, 0x7a, 0, 0, 0, 7, 0, 0, 0x25, 0x63}
	if got := testutil.ReadFile(t, on); !bytes.Equal(got, wantO) {
		t.Fatalf(".index bytes % x, want % x", got, wantO)
	}
	gotT := testutil.ReadFile(t, tn)
	if len(gotT) != 36 {
		t.Fatalf(".timeindex has %d bytes", len(gotT))
	}
	if ts, rel := DecodeTimeEntry(gotT[24:]); ts != 1700002578176 || rel != 12 {
		t.Fatalf("last time entry %d %d", ts, rel)
	}
}

func must(t testing.TB, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// model is the linear-scan oracle: largest entry with key <= target.
func modelLookup(keys []int64, target int64) int {
	slot := -1
	for i, k := range keys {
		if k <= target {
			slot = i
		}
	}
	return slot
}

// TestOffsetLookupMatchesLinearScan: Lookup and Span agree with a linear
// scan of the entries (Span also naming the next entry's position).
func TestOffsetLookupMatchesLinearScan(t *testing.T) {
	rng := rand.New(rand.NewSource(7))
	for _, n := range []int{0, 1, 2, 5, 1023, 1024, 1025, 3000} {
		base := int64(rng.Intn(1000000))
		f := vfs.NewCrashFS()
		file, _ := f.Create("/x.index")
		ox, err := OpenOffsetIndex(file, base, (n+1)*OffsetEntrySize)
		must(t, err)
		keys, poss := []int64{}, []int32{}
		off, pos := base, int32(0)
		for i := 0; i < n; i++ {
			off += int64(1 + rng.Intn(50))
			pos += int32(1 + rng.Intn(5000))
			must(t, ox.Append(off, pos))
			keys, poss = append(keys, off), append(poss, pos)
		}
		for q := 0; q < 2000; q++ {
			target := base - 5 + rng.Int63n(off-base+20)
			gotOff, gotPos := ox.Lookup(target)
			slot := modelLookup(keys, target)
			wantOff, wantPos, wantNext, wantNextOff := base, int32(0), int32(-1), int64(0)
			if slot >= 0 {
				wantOff, wantPos = keys[slot], poss[slot]
				if slot+1 < n {
					wantNext, wantNextOff = poss[slot+1], keys[slot+1]
				}
			}
			if gotOff != wantOff || gotPos != wantPos {
				t.Fatalf("n=%d lookup(%d) = (%d,%d), want (%d,%d)", n, target, gotOff, gotPos, wantOff, wantPos)
			}
			sp := ox.Span(target)
			if sp.Offset != wantOff || sp.Pos != wantPos || sp.NextPos != wantNext || wantNext >= 0 && sp.NextOffset != wantNextOff {
				t.Fatalf("n=%d Span(%d) = %+v, want (%d,%d,%d,%d)", n, target, sp, wantOff, wantPos, wantNextOff, wantNext)
			}
			// a hint, right or wrong, gives the same span
			for _, hint := range []int{slot, slot - 1, slot + 1, -1, n, rng.Intn(n + 1)} {
				if near := ox.SpanNear(target, hint); near != sp {
					t.Fatalf("n=%d SpanNear(%d, %d) = %+v, Span %+v", n, target, hint, near, sp)
				}
			}
		}
		if n > 0 && ox.LastOffset() != keys[n-1] {
			t.Fatalf("LastOffset %d, want %d", ox.LastOffset(), keys[n-1])
		}
	}
}

func TestTimeLookupMatchesLinearScan(t *testing.T) {
	rng := rand.New(rand.NewSource(8))
	for _, n := range []int{0, 1, 681, 682, 683, 2000} {
		f := vfs.NewCrashFS()
		file, _ := f.Create("/x.timeindex")
		tx, err := OpenTimeIndex(file, 100, (n+2)*TimeEntrySize)
		must(t, err)
		tss, offs := []int64{}, []int64{}
		ts, off := int64(1_700_000_000_000), int64(100)
		for i := 0; i < n; i++ {
			ts += int64(1 + rng.Intn(1000))
			off += int64(rng.Intn(3)) // offsets may repeat
			must(t, tx.MaybeAppend(ts, off, false))
			tss, offs = append(tss, ts), append(offs, off)
		}
		for q := 0; q < 2000; q++ {
			target := 1_700_000_000_000 - 10 + rng.Int63n(ts-1_700_000_000_000+30)
			gotTs, gotOff := tx.Lookup(target)
			slot := modelLookup(tss, target)
			wantTs, wantOff, wantNext := int64(-1), int64(100), int64(-1)
			if slot >= 0 {
				wantTs, wantOff = tss[slot], offs[slot]
				if slot+1 < n {
					wantNext = tss[slot+1]
				}
			}
			if gotTs != wantTs || gotOff != wantOff {
				t.Fatalf("n=%d lookup(%d) = (%d,%d), want (%d,%d)", n, target, gotTs, gotOff, wantTs, wantOff)
			}
			if ts, off, next, at := tx.SpanSlot(target); ts != wantTs || off != wantOff || next != wantNext || at != slot {
				t.Fatalf("n=%d SpanSlot(%d) = (%d,%d,%d,%d), want (%d,%d,%d,%d)", n, target, ts, off, next, at, wantTs, wantOff, wantNext, slot)
			}
		}
	}
}

func TestTimeIndexAppendRules(t *testing.T) {
	f := vfs.NewCrashFS()
	file, _ := f.Create("/x.timeindex")
	tx, err := OpenTimeIndex(file, 10, 3*TimeEntrySize) // 3 slots, full at 2
	must(t, err)
	if ts, off := tx.LastEntry(); ts != -1 || off != 10 {
		t.Fatalf("empty LastEntry (%d,%d)", ts, off)
	}
	must(t, tx.MaybeAppend(-1, 10, false)) // not above -1: ignored
	must(t, tx.MaybeAppend(100, 12, false))
	must(t, tx.MaybeAppend(100, 13, false)) // equal timestamp: ignored
	if tx.Entries() != 1 {
		t.Fatalf("entries %d", tx.Entries())
	}
	if err := tx.MaybeAppend(99, 14, false); !errors.Is(err, ErrInvalidOffset) {
		t.Fatalf("smaller timestamp: %v", err)
	}
	if err := tx.MaybeAppend(101, 11, false); !errors.Is(err, ErrInvalidOffset) {
		t.Fatalf("smaller offset: %v", err)
	}
	must(t, tx.MaybeAppend(200, 15, false))
	if !tx.IsFull() {
		t.Fatal("time index with maxEntries-1 entries is not full")
	}
	if err := tx.MaybeAppend(300, 16, false); !errors.Is(err, ErrFull) {
		t.Fatalf("append to full: %v", err)
	}
	must(t, tx.MaybeAppend(300, 16, true)) // the reserved slot
	if err := tx.MaybeAppend(400, 17, true); !errors.Is(err, ErrFull) {
		t.Fatalf("append past capacity: %v", err)
	}
	must(t, tx.MaybeAppend(300, 17, true)) // nothing to add: no error
}

func TestOffsetIndexAppendRules(t *testing.T) {
	f := vfs.NewCrashFS()
	file, _ := f.Create("/x.index")
	ox, err := OpenOffsetIndex(file, 1000, 2*OffsetEntrySize+5) // rounds down to 2 slots
	must(t, err)
	if err := ox.Append(999, 10); !errors.Is(err, ErrOffsetOverflow) {
		t.Fatalf("below base: %v", err)
	}
	if err := ox.Append(1000+math.MaxInt32+1, 10); !errors.Is(err, ErrOffsetOverflow) {
		t.Fatalf("relative overflow: %v", err)
	}
	must(t, ox.Append(1000+math.MaxInt32, 10))
	if err := ox.Append(1000+math.MaxInt32, 20); !errors.Is(err, ErrInvalidOffset) {
		t.Fatalf("repeated offset: %v", err)
	}
	fs2 := vfs.NewCrashFS()
	file2, _ := fs2.Create("/y.index")
	ox2, _ := OpenOffsetIndex(file2, 0, 16)
	must(t, ox2.Append(1, 1))
	must(t, ox2.Append(2, 2))
	if !ox2.IsFull() {
		t.Fatal("not full")
	}
	if err := ox2.Append(3, 3); !errors.Is(err, ErrFull) {
		t.Fatalf("append to full: %v", err)
	}
}

func TestTruncateToZeroesTheTail(t *testing.T) {
	dir := t.TempDir()
	on := filepath.Join(dir, "t.index")
	ox, _ := OpenOffsetIndex(openFile(t, on), 0, 80)
	tn := filepath.Join(dir, "t.timeindex")
	tx, _ := OpenTimeIndex(openFile(t, tn), 0, 120)
	for i := int64(1); i <= 6; i++ {
		must(t, ox.Append(i*10, int32(i*100)))
		must(t, tx.MaybeAppend(i*1000, i*10, false))
	}
	must(t, ox.TruncateTo(30)) // drops 30, 40, 50, 60
	must(t, tx.TruncateTo(35)) // drops 40, 50, 60
	if ox.Entries() != 2 || ox.LastOffset() != 20 || tx.Entries() != 3 {
		t.Fatalf("after truncate: %d entries, last %d; time %d", ox.Entries(), ox.LastOffset(), tx.Entries())
	}
	if ts, off := tx.LastEntry(); ts != 3000 || off != 30 {
		t.Fatalf("time last entry (%d,%d)", ts, off)
	}
	b := testutil.ReadFile(t, on)
	if len(b) != 80 || !bytes.Equal(b[16:], make([]byte, 64)) {
		t.Fatalf("tail not zeroed or size changed: %d % x", len(b), b)
	}
	if off, pos := ox.Lookup(59); off != 20 || pos != 200 {
		t.Fatalf("lookup after truncate (%d,%d)", off, pos)
	}
	must(t, ox.Append(25, 250)) // appends continue after the cut
	must(t, ox.TruncateTo(0))
	if ox.Entries() != 0 || ox.LastOffset() != 0 {
		t.Fatalf("truncate to base: %d", ox.Entries())
	}
}

func TestReopenCountsExistingEntriesWithoutLoading(t *testing.T) {
	dir := t.TempDir()
	on := filepath.Join(dir, "r.index")
	ox, _ := OpenOffsetIndex(openFile(t, on), 500, 1<<20)
	for i := int64(1); i <= 100; i++ {
		must(t, ox.Append(500+i*3, int32(i*4096)))
	}
	must(t, ox.Close())
	ox, err := OpenOffsetIndex(openFile(t, on), 500, 0) // inactive: as is
	must(t, err)
	if ox.Entries() != 100 || ox.LastOffset() != 800 || ox.MaxEntries() != 100 || !ox.IsFull() {
		t.Fatalf("reopen: %d entries last %d max %d", ox.Entries(), ox.LastOffset(), ox.MaxEntries())
	}
	if ox.loaded.Load() {
		t.Fatal("entries were read at open")
	}
	must(t, ox.SanityCheck(100*4096+1))
	if off, pos := ox.Lookup(650); off != 650 || pos != 50*4096 {
		t.Fatalf("lookup (%d,%d)", off, pos)
	}
	must(t, ox.Resize(1<<20)) // becomes active again
	must(t, ox.Append(900, 200*4096))
	must(t, ox.Close())
	if n := len(testutil.ReadFile(t, on)); n != 101*8 {
		t.Fatalf("size %d", n)
	}
}

// TestUntrimmedAfterCrash: a preallocated index reopened after a crash
// looks full of zero entries; the sanity check catches it and Reset
// makes it empty and preallocated again (Kafka's recovery).
func TestUntrimmedAfterCrash(t *testing.T) {
	mem := vfs.NewCrashFS()
	file, _ := mem.Create("/c.index")
	ox, _ := OpenOffsetIndex(file, 0, 1024)
	must(t, ox.Append(5, 4100))
	must(t, ox.Append(9, 8300))
	file.Sync()
	mem.SyncDir("/")
	crashed := mem.Crash()
	f2, _ := crashed.OpenFile("/c.index", os.O_RDWR, 0)
	ox2, err := OpenOffsetIndex(f2, 0, 1024)
	must(t, err)
	if ox2.Entries() != 128 {
		t.Fatalf("entries %d, want 128 (Kafka counts the whole file)", ox2.Entries())
	}
	err = ox2.SanityCheck(10000)
	var ce *record.CorruptionError
	if !errors.As(err, &ce) || !errors.Is(err, record.ErrCorruption) || !strings.HasPrefix(ce.Reason, "entry 2:") || ce.Pos != 16 || ce.File != "/c.index" {
		t.Fatalf("sanity check: %v", err)
	}
	must(t, ox2.Reset())
	if ox2.Entries() != 0 || ox2.MaxEntries() != 128 {
		t.Fatalf("after reset: %d/%d", ox2.Entries(), ox2.MaxEntries())
	}
	must(t, ox2.SanityCheck(0))
}

func TestSanityCheckCases(t *testing.T) {
	cases := []struct {
		name    string
		entries [][2]int32
		extra   int // stray bytes after the entries
		logSize int64
		bad     int // failing entry, -1 = valid
	}{
		{"valid", [][2]int32{{1, 10}, {5, 20}}, 0, 21, -1},
		{"empty", nil, 0, 0, -1},
		{"offset repeats", [][2]int32{{1, 10}, {1, 20}}, 0, 100, 1},
		{"offset decreases", [][2]int32{{4, 10}, {3, 20}}, 0, 100, 1},
		{"negative relative", [][2]int32{{-1, 10}}, 0, 100, 0},
		{"position past log", [][2]int32{{1, 10}, {2, 100}}, 0, 100, 1},
		{"position decreases", [][2]int32{{1, 50}, {2, 40}}, 0, 100, 1},
		{"partial entry", [][2]int32{{1, 10}}, 3, 100, 1},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var b []byte
			for _, e := range c.entries {
				b = EncodeOffsetEntry(b, e[0], e[1])
			}
			b = append(b, make([]byte, c.extra)...)
			ox := openMem(t, OpenOffsetIndex, "/s.index", b, 0)
			wantCorruptAt(t, ox.SanityCheck(c.logSize), c.bad)
		})
	}
}

func TestTimeSanityCheck(t *testing.T) {
	cases := []struct {
		name    string
		entries [][2]int64
		next    int64
		bad     int
	}{
		{"valid", [][2]int64{{10, 1}, {20, 1}, {30, 5}}, 6, -1},
		{"timestamp repeats", [][2]int64{{10, 1}, {10, 2}}, 6, 1},
		{"offset decreases", [][2]int64{{10, 3}, {20, 2}}, 6, 1},
		{"offset past end", [][2]int64{{10, 3}, {20, 6}}, 6, 1},
		{"zero entries", [][2]int64{{0, 0}, {0, 0}}, -1, 1},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var b []byte
			for _, e := range c.entries {
				b = EncodeTimeEntry(b, e[0], int32(e[1]))
			}
			tx := openMem(t, OpenTimeIndex, "/s.timeindex", b, 0)
			if ce := wantCorruptAt(t, tx.SanityCheck(c.next), c.bad); ce != nil && ce.Pos != int64(c.bad*TimeEntrySize) {
				t.Fatalf("corruption at position %d, want %d", ce.Pos, c.bad*TimeEntrySize)
			}
		})
	}
}

// wantCorruptAt checks the result of a sanity check: nil when bad < 0,
// else a corruption error at entry bad, which it returns.
func wantCorruptAt(t *testing.T, err error, bad int) *record.CorruptionError {
	t.Helper()
	if bad < 0 {
		if err != nil {
			t.Fatalf("valid index rejected: %v", err)
		}
		return nil
	}
	var ce *record.CorruptionError
	if !errors.As(err, &ce) || !strings.HasPrefix(ce.Reason, fmt.Sprintf("entry %d:", bad)) {
		t.Fatalf("got %v, want corruption at entry %d", err, bad)
	}
	return ce
}

func TestReadOnlyIndexNeverWrites(t *testing.T) {
	dir := t.TempDir()
	on := filepath.Join(dir, "ro.index")
	ox, _ := OpenOffsetIndex(openFile(t, on), 0, 800)
	must(t, ox.Append(3, 100))
	ox.Release() // untrimmed, as after a crash
	f, err := os.Open(on)
	must(t, err)
	ro, err := OpenOffsetIndexReadOnly(f, 0)
	must(t, err)
	for _, err := range []error{ro.Append(9, 200), ro.TruncateTo(0), ro.Reset(), ro.Resize(8), ro.TrimToValidSize()} {
		if !errors.Is(err, ErrReadOnly) {
			t.Fatalf("change on read-only index: %v", err)
		}
	}
	must(t, ro.Close())
	if n := len(testutil.ReadFile(t, on)); n != 800 {
		t.Fatalf("read-only close changed the file to %d bytes", n)
	}
}

func TestIndexWriteErrorKeepsState(t *testing.T) {
	mem := vfs.NewCrashFS()
	inj := vfs.FailNth(vfs.OpWrite, 2, errors.New("injected"))
	efs := vfs.NewErrorFS(mem, inj)
	f, _ := efs.Create("/e.index")
	ox, _ := OpenOffsetIndex(f, 0, 80)
	must(t, ox.Append(1, 10))
	if err := ox.Append(2, 20); err == nil {
		t.Fatal("no error")
	}
	if ox.Entries() != 1 || ox.LastOffset() != 1 {
		t.Fatalf("failed append changed state: %d %d", ox.Entries(), ox.LastOffset())
	}
	must(t, ox.Append(2, 20))
	if off, pos := ox.Lookup(100); off != 2 || pos != 20 {
		t.Fatalf("lookup (%d,%d)", off, pos)
	}
}

func TestBuilderFollowsKafkaRule(t *testing.T) {
	mem := vfs.NewCrashFS()
	of, _ := mem.Create("/0.index")
	tf, _ := mem.Create("/0.timeindex")
	ox, _ := OpenOffsetIndex(of, 0, 1024)
	tx, _ := OpenTimeIndex(tf, 0, 1024)
	b := NewBuilder(ox, tx, 4096, 0)
	// 12 batches of 1000 bytes, 10 records each, timestamps 5, 3, 9, ...
	ts := []int64{5, 3, 9, 9, 12, 1, 20, 20, 15, 30, 2, 31}
	for i := 0; i < 12; i++ {
		last := int64(i*10 + 9)
		must(t, b.Add(int64(i*1000), 1000, last, ts[i], last))
	}
	must(t, b.Finish())
	// An entry when bytes since the last entry > 4096: before batch 5 (5000 bytes)
	// and batch 10 (5000 bytes since the entry at 5).
	wantO := [][2]int64{{59, 5000}, {109, 10000}}
	if ox.Entries() != len(wantO) {
		t.Fatalf("%d offset entries", ox.Entries())
	}
	for i, w := range wantO {
		off, pos, _ := ox.Entry(i)
		if off != w[0] || int64(pos) != w[1] {
			t.Fatalf("entry %d = (%d,%d), want %v", i, off, pos, w)
		}
	}
	// Time entries: max so far at batch 5 is 12 (batch 4, offset 49); at
	// batch 10 it is 30 (batch 9, offset 99); Finish adds 31 (offset 119).
	wantT := [][2]int64{{12, 49}, {30, 99}, {31, 119}}
	if tx.Entries() != len(wantT) {
		t.Fatalf("%d time entries", tx.Entries())
	}
	for i, w := range wantT {
		ts, off, _ := tx.Entry(i)
		if ts != w[0] || off != w[1] {
			t.Fatalf("time entry %d = (%d,%d), want %v", i, ts, off, w)
		}
	}
}

func TestConcurrentLookupsDuringAppends(t *testing.T) {
	mem := vfs.NewCrashFS()
	f, _ := mem.Create("/c.index")
	ox, _ := OpenOffsetIndex(f, 0, 1<<20)
	var wg sync.WaitGroup
	stop := make(chan struct{})
	for r := 0; r < 4; r++ {
		testutil.Spin(&wg, stop, func() bool {
			off, pos := ox.Lookup(1 << 40)
			if off != 0 && int64(pos) != off*10 {
				t.Errorf("torn entry (%d,%d)", off, pos)
				return false
			}
			return true
		})
	}
	for i := int64(1); i <= 5000; i++ {
		must(t, ox.Append(i, int32(i*10)))
	}
	close(stop)
	wg.Wait()
}

// TestUnreadableIndexIsNotOverwritten: when the entries cannot be read,
// lookups answer "no entry", the sanity check fails, an append still goes
// after the existing entries, and Reset works.
func TestUnreadableIndexIsNotOverwritten(t *testing.T) {
	mem := vfs.NewCrashFS()
	f, _ := mem.Create("/u.index")
	f.Write(EncodeOffsetEntry(EncodeOffsetEntry(nil, 1, 10), 2, 20))
	inj := vfs.FailNth(vfs.OpRead, 2, errors.New("EIO")) // read 1: last entry at open
	efs := vfs.NewErrorFS(mem, inj)
	ef, _ := efs.OpenFile("/u.index", os.O_RDWR, 0)
	ox, err := OpenOffsetIndex(ef, 0, 64)
	must(t, err)
	if off, pos := ox.Lookup(5); off != 0 || pos != 0 {
		t.Fatalf("lookup on unreadable index (%d,%d)", off, pos)
	}
	if ox.LoadErr() == nil {
		t.Fatal("no load error")
	}
	must(t, ox.SanityCheck(100)) // the next attempt reads them
	must(t, ox.Append(3, 30))    // lands after the two existing entries
	if off, pos := ox.Lookup(5); off != 3 || pos != 30 {
		t.Fatalf("lookup after retry (%d,%d)", off, pos)
	}
	if ox.Entries() != 3 {
		t.Fatalf("entries %d", ox.Entries())
	}
	must(t, ox.Reset())
	if ox.Entries() != 0 || ox.MaxEntries() != 8 {
		t.Fatalf("after reset %d/%d", ox.Entries(), ox.MaxEntries())
	}
}

func TestTrimCutsPartialEntry(t *testing.T) {
	mem := vfs.NewCrashFS()
	f, _ := mem.Create("/p.index")
	f.Write(append(EncodeOffsetEntry(nil, 1, 10), 1, 2, 3))
	ox, err := OpenOffsetIndex(f, 0, 0)
	must(t, err)
	if ox.SanityCheck(100) == nil {
		t.Fatal("partial entry passed the sanity check")
	}
	must(t, ox.TrimToValidSize())
	fi, _ := f.Stat()
	if fi.Size() != 8 {
		t.Fatalf("size %d after trim", fi.Size())
	}
	must(t, ox.SanityCheck(100))
}

// TestLookupUnevenKeys: the search that starts where even keys would put
// the target finds the same entry as a linear scan when the keys are far
// from even.
func TestLookupUnevenKeys(t *testing.T) {
	rng := rand.New(rand.NewSource(9))
	for _, n := range []int{2, 3, 100, 1500, 5000} {
		ox, tx, offs, tss := unevenIndexes(t, rng, n)
		for q := 0; q < 3000; q++ {
			target := offs[rng.Intn(n)] + int64(rng.Intn(5)) - 2
			if slot := modelLookup(offs, target); slot >= 0 {
				if got, _ := ox.Lookup(target); got != offs[slot] {
					t.Fatalf("n=%d Lookup(%d) = %d, want %d", n, target, got, offs[slot])
				}
			}
			tsTarget := tss[rng.Intn(n)] + int64(rng.Intn(5)) - 2
			if slot := modelLookup(tss, tsTarget); slot >= 0 {
				if got, _, _, at := tx.SpanSlot(tsTarget); got != tss[slot] || at != slot {
					t.Fatalf("n=%d SpanSlot(%d) = %d at %d, want %d at %d", n, tsTarget, got, at, tss[slot], slot)
				}
			}
		}
	}
}

// unevenIndexes is an offset index and a time index of n entries each,
// with their keys: runs of close offsets (and timestamps) between jumps
// of up to a million.
func unevenIndexes(t *testing.T, rng *rand.Rand, n int) (*OffsetIndex, *TimeIndex, []int64, []int64) {
	fs := vfs.NewCrashFS()
	create := func(name string) vfs.File {
		f, err := fs.Create(name)
		must(t, err)
		return f
	}
	ox, err := OpenOffsetIndex(create("/x.index"), 0, (n+1)*OffsetEntrySize)
	must(t, err)
	tx, err := OpenTimeIndex(create("/x.timeindex"), 0, (n+1)*TimeEntrySize)
	must(t, err)
	jump := func() int64 {
		if rng.Intn(40) == 0 {
			return int64(1 + rng.Intn(1_000_000))
		}
		return int64(1 + rng.Intn(3))
	}
	var offs, tss []int64
	off, ts := int64(0), int64(1_700_000_000_000)
	for i := 0; i < n; i++ {
		off, ts = off+jump(), ts+jump()
		must(t, ox.Append(off, int32(i)))
		must(t, tx.MaybeAppend(ts, off, false))
		offs, tss = append(offs, off), append(tss, ts)
	}
	return ox, tx, offs, tss
}
