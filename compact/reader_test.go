package compact_test

import (
	"fmt"
	"testing"

	"github.com/partfs/partfs/compact"
	"github.com/partfs/partfs/partlog"
	"github.com/partfs/partfs/record"
	"github.com/partfs/partfs/vfs"
)

// TestReaderAcrossSwap reads a log through a snapshot taken before a
// cleaning and finishes reading it after the swaps: the reader sees the
// whole old stream, in order, without error or duplicate; a new snapshot
// sees the cleaned log.
func TestReaderAcrossSwap(t *testing.T) {
	fs, before, after := crashLogStates(t)

	st, err := openStore(t, fs)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	l, _ := st.Log("t", 0)
	segs, release := l.Segments()
	var got []rec
	readSeg := func(s partlog.Segment) {
		err := l.Read(s, s.Base, func(r *record.Record) bool {
			got = append(got, rec{off: r.Offset, key: string(r.Key), value: string(r.Value), tomb: r.Value == nil})
			return true
		})
		if err != nil {
			t.Fatalf("read old snapshot segment %d after the swap: %v", s.Base, err)
		}
	}
	half := len(segs) / 2
	for _, s := range segs[:half] {
		readSeg(s)
	}
	c := compact.NewCleaner(compact.Options{Now: now, DedupeBufferSize: 1 << 16})
	if sum, err := c.CleanAll(compact.Targets(st), false); err != nil || sum.Cleaned != 1 {
		t.Fatalf("clean: %v %+v", err, sum)
	}
	for _, s := range segs[half:] {
		readSeg(s)
	}
	release()
	if fmt.Sprint(got) != fmt.Sprint(before) {
		t.Fatalf("reader across the swap saw\n%v\nwant\n%v", got, before)
	}
	if now := readAll(t, l); fmt.Sprint(now) != fmt.Sprint(after) {
		t.Fatalf("new reader sees\n%v\nwant the cleaned log\n%v", now, after)
	}
}

// crashLogStates builds the crash log and returns it with its records and
// those of a cleaned copy.
func crashLogStates(t *testing.T) (fs *vfs.CrashFS, before, after []rec) {
	fs = buildCrashLog(t)
	before, _ = stateOf(t, fs.Crash())
	after, _ = stateOf(t, cleanedCopy(t, fs))
	return fs, before, after
}

func cleanedCopy(t *testing.T, fs *vfs.CrashFS) *vfs.CrashFS {
	c := fs.Crash()
	if _, err := cleanOnce(t, c); err != nil {
		t.Fatal(err)
	}
	return c
}
