package logstore

import (
	"strings"
	"sync/atomic"
	"testing"

	"github.com/partfs/partfs/record"
	"github.com/partfs/partfs/vfs"
)

var cleanCfg = map[string]string{"segment.bytes": "2000", "index.interval.bytes": "250", "segment.index.bytes": "4096"}

// cleanHalf writes a cleaned segment at the first segment's base holding
// the even-offset batches of the first two segments, and swaps it in.
func cleanHalf(t *testing.T, l *Log) error {
	segs, release := l.Segments()
	defer release()
	old := segs[:2]
	c, err := l.NewCleanedSegment(old[0].Base)
	if err != nil {
		return err
	}
	for _, s := range old {
		r, rel, err := l.SegmentReader(s)
		if err != nil {
			return err
		}
		sc := record.NewScanner(r, 0, s.Size, "old")
		for sc.Next() {
			if b := sc.Batch(); b.Header.BaseOffset%2 == 0 {
				if err := c.AppendBatch(append([]byte(nil), b.Raw...)); err != nil {
					rel()
					return err
				}
			}
		}
		rel()
	}
	return l.ReplaceSegments([]*CleanedSegment{c}, old)
}

func wantAfterClean(i int64) bool { return i >= 22 || i%2 == 0 }

func TestReplaceSegments(t *testing.T) {
	fs, c := vfs.NewCrashFS(), newClock()
	st, l := buildLogOpen(t, fs, c, cleanCfg, 40)
	defer st.Close()
	held, release := l.Segments()
	changed := l.Changed()
	if err := cleanHalf(t, l); err != nil {
		t.Fatal(err)
	}
	select {
	case <-changed:
	default:
		t.Fatal("Changed did not fire")
	}
	all := readLog(t, l, 0)
	var want []int64
	for i := int64(0); i < 40; i++ {
		if wantAfterClean(i) {
			want = append(want, i)
		}
	}
	if len(all) != len(want) {
		t.Fatalf("%d records after cleaning, want %d", len(all), len(want))
	}
	for i, r := range all {
		if r.off != want[i] {
			t.Fatalf("record %d has offset %d, want %d", i, r.off, want[i])
		}
	}
	segs, rel2 := l.Segments()
	if len(segs) != 3 || segs[0].Base != 0 || segs[0].Next != 22 || segs[0].ID == held[0].ID {
		t.Fatalf("segments after swap %+v", segs)
	}
	rel2()
	n := 0 // a reader of the old snapshot still sees the old segment
	if err := l.Read(held[1], 11, func(*record.Record) bool { n++; return true }); err != nil || n != 11 {
		t.Fatalf("held old segment: %d records %v", n, err)
	}
	release()
	names, _ := fs.ReadDir("/data/t-0")
	for _, fi := range names {
		if strings.HasSuffix(fi.Name(), ".cleaned") || strings.HasSuffix(fi.Name(), ".swap") {
			t.Fatalf("leftover %s", fi.Name())
		}
	}
	if !exists(fs, "/data/t-0/00000000000000000011.log.deleted") {
		t.Fatal("old segment not renamed to .deleted")
	}
	if s := l.Stats(); s.Records != int64(len(want)) {
		t.Fatalf("stats records %d", s.Records)
	}
	if n := fileSize(t, fs, "/data/t-0/00000000000000000000.index"); n%8 != 0 || n >= 4096 {
		t.Fatalf("cleaned index not trimmed: %d", n)
	}
}

// TestReplaceSegmentsCrash crashes at every filesystem operation of a swap:
// after reopening, the log holds either all old records or exactly the
// cleaned result, and no .cleaned or .swap file is left.
func TestReplaceSegmentsCrash(t *testing.T) {
	outcomes := map[bool]int{}
	for k := 1; ; k++ {
		mem, c := vfs.NewCrashFS(), newClock()
		var armed atomic.Bool
		var after *vfs.CrashFS
		count := 0
		fs := vfs.NewErrorFS(mem, vfs.InjectorFunc(func(op vfs.Op, name string) (bool, error) {
			if armed.Load() {
				if count++; count == k {
					after = mem.Crash()
				}
			}
			return false, nil
		}))
		st, l := buildLogOpen(t, fs, c, cleanCfg, 40)
		if err := l.Sync(); err != nil {
			t.Fatal(err)
		}
		armed.Store(true)
		if err := cleanHalf(t, l); err != nil {
			t.Fatal(err)
		}
		armed.Store(false)
		st.Close()
		if after == nil {
			if k < 10 || outcomes[true] == 0 || outcomes[false] == 0 {
				t.Fatalf("swap did only %d operations; outcomes %v", k, outcomes)
			}
			t.Logf("crashed at each of %d operations: %d old, %d cleaned outcomes", k-1, outcomes[false], outcomes[true])
			return
		}
		outcomes[checkSwapOutcome(t, k, after, c)]++
	}
}

func checkSwapOutcome(t *testing.T, k int, fs *vfs.CrashFS, c *clock) bool {
	st, l := openTest(t, fs, c, cleanCfg)
	defer st.Close()
	all := readLog(t, l, 0)
	cleaned := len(all) == 29
	if len(all) != 40 && !cleaned {
		t.Fatalf("crash at op %d: %d records, want 40 (old) or 29 (cleaned)", k, len(all))
	}
	for i, r := range all {
		want := int64(i)
		if cleaned {
			want = map[bool]int64{true: int64(2 * i), false: int64(i - 11 + 22)}[i < 11]
		}
		if r.off != want || len(r.value) != 100 {
			t.Fatalf("crash at op %d: record %d is %+v, want offset %d", k, i, r, want)
		}
	}
	names, _ := fs.ReadDir("/data/t-0")
	for _, fi := range names {
		if strings.HasSuffix(fi.Name(), ".cleaned") || strings.HasSuffix(fi.Name(), ".swap") {
			t.Fatalf("crash at op %d: leftover %s", k, fi.Name())
		}
	}
	return cleaned
}
