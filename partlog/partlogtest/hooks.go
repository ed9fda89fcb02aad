package partlogtest

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"sort"
	"strings"
	"testing"

	"github.com/partfs/partfs/kafkaname"
	"github.com/partfs/partfs/partlog"
	"github.com/partfs/partfs/record"
)

// CheckSegmentFiler: a SegmentFiler lists sorted files that it stats and
// opens alike, holds the partition's .log files, and knows no other names.
func CheckSegmentFiler(t *testing.T, b Backend) {
	_, l := b.openLog(t)
	sf, ok := l.(partlog.SegmentFiler)
	if !ok {
		t.Skip("the backend's Log is not a partlog.SegmentFiler (it has no segments/)")
	}
	appendN(t, l, values(0, "a", "b")...)
	if err := l.Sync(); err != nil {
		t.Fatal(err)
	}
	fis, err := sf.SegmentFiles()
	if err != nil {
		t.Fatalf("SegmentFiles: %v", err)
	}
	if !sort.SliceIsSorted(fis, func(i, j int) bool { return fis[i].Name < fis[j].Name }) {
		t.Errorf("SegmentFiles not sorted: %v", fis)
	}
	snap := segments(t, l)
	logs := map[string]bool{}
	for _, s := range snap {
		logs[kafkaname.SegmentFile(s.Base, kafkaname.LogSuffix)] = false
	}
	for _, fi := range fis {
		if _, ok := logs[fi.Name]; ok {
			logs[fi.Name] = true
		}
		stat, err := sf.StatSegmentFile(fi.Name)
		if err != nil || stat.Name != fi.Name || stat.Size != fi.Size {
			t.Errorf("StatSegmentFile(%q) = %+v, %v; listed as %+v", fi.Name, stat, err, fi)
		}
		if fi.Blocks < 0 || (strings.HasSuffix(fi.Name, kafkaname.LogSuffix) && fi.Size > 0 && fi.Blocks == 0) {
			t.Errorf("%s: %d bytes in %d blocks", fi.Name, fi.Size, fi.Blocks)
		}
		f, err := sf.OpenSegmentFile(fi.Name)
		if err != nil {
			t.Fatalf("OpenSegmentFile(%q): %v", fi.Name, err)
		}
		data, err := io.ReadAll(io.NewSectionReader(f, 0, fi.Size+1))
		if err != nil || int64(len(data)) != fi.Size {
			t.Errorf("read %d bytes of %s (%v), size %d", len(data), fi.Name, err, fi.Size)
		}
		checkDup(t, f, fi.Name, data)
		f.Close()
	}
	for name, seen := range logs {
		if !seen {
			t.Errorf("SegmentFiles %v lacks %s", fis, name)
		}
	}
	for _, bad := range []string{"notes.txt", "../t-0/00000000000000000000.log", "00000000000000000000.log/x",
		"0.log", "00000000000000000000.log.partfs", "fs-positions.partfs", ""} {
		if _, err := sf.StatSegmentFile(bad); !errors.Is(err, partlog.ErrNotFound) {
			t.Errorf("StatSegmentFile(%q): %v, want ErrNotFound", bad, err)
		}
		if f, err := sf.OpenSegmentFile(bad); !errors.Is(err, partlog.ErrNotFound) {
			if f != nil {
				f.Close()
			}
			t.Errorf("OpenSegmentFile(%q): %v, want ErrNotFound", bad, err)
		}
	}
}

// CheckReopen: records, offsets, configs and sidecars survive a reopen,
// and an unchanged segment keeps its Base and Stamp with Next and Size no
// smaller.
func CheckReopen(t *testing.T, b Backend) {
	if b.Reopen == nil {
		t.Skip("the backend keeps nothing across a reopen (no Reopen hook)")
	}
	st := b.New(t)
	l := NewLog(t, st, "t")
	smallSegments(t, st, "t")
	setConfig(t, st, "t", "retention.ms", "3600000")
	fill(t, l, 20, 200, nil)
	if err := l.SaveSidecar("pos", []byte("kept")); err != nil {
		t.Fatal(err)
	}
	if err := l.Sync(); err != nil {
		t.Fatal(err)
	}
	want := readAll(t, l)
	snap, release := l.Segments()
	release()
	st = b.Reopen(t, st)
	t.Cleanup(func() { st.Close() })
	l, err := st.Partition("t", 0)
	if err != nil {
		t.Fatalf("Partition after reopen: %v", err)
	}
	got := readAll(t, l)
	if len(got) != len(want) {
		t.Fatalf("%d records after reopen, %d before", len(got), len(want))
	}
	for i := range want {
		if d := sameRecord(got[i], want[i]); d != "" {
			t.Fatalf("after reopen: %s", d)
		}
	}
	if v := configValue(t, st, "t", "retention.ms"); v != "3600000" {
		t.Errorf("retention.ms = %q after reopen", v)
	}
	if data, err := l.LoadSidecar("pos"); err != nil || string(data) != "kept" {
		t.Errorf("sidecar after reopen: %q, %v", data, err)
	}
	now := segments(t, l)
	for _, o := range snap {
		for _, s := range now {
			if s.Base == o.Base && (s.Next < o.Next || s.Size < o.Size || s.Stamp != o.Stamp) {
				t.Errorf("segment %d after reopen: next %d size %d stamp %d, before %d %d %d", s.Base, s.Next, s.Size, s.Stamp, o.Next, o.Size, o.Stamp)
			}
		}
	}
}

// CheckReadOnly: a read-only store says so and refuses every change with
// ErrReadOnly; it reads what is there.
func CheckReadOnly(t *testing.T, b Backend) {
	if b.ReadOnly == nil {
		t.Skip("no ReadOnly hook")
	}
	st := b.ReadOnly(t)
	t.Cleanup(func() { st.Close() })
	if !st.ReadOnly() {
		t.Fatal("ReadOnly() is false")
	}
	wantErr(t, "CreateTopic", st.CreateTopic("new"), partlog.ErrReadOnly)
	wantErr(t, "AddPartition", st.AddPartition("ro", 1), partlog.ErrReadOnly)
	wantErr(t, "SetTopicConfig", st.SetTopicConfig("ro", []partlog.KV{{Key: "retention.ms", Value: "1000"}}), partlog.ErrReadOnly)
	l, err := st.Partition("ro", 0)
	if err != nil {
		t.Fatalf("Partition(ro, 0): %v", err)
	}
	end := l.EndOffset()
	if end == 0 || len(readAll(t, l)) == 0 {
		t.Fatalf("read-only partition ro-0 is empty (EndOffset %d)", end)
	}
	_, err = l.Append(values(0, "x"))
	wantErr(t, "Append", err, partlog.ErrReadOnly)
	wantErr(t, "SaveSidecar", l.SaveSidecar("pos", []byte("x")), partlog.ErrReadOnly)
	if l.EndOffset() != end {
		t.Fatalf("EndOffset moved from %d to %d", end, l.EndOffset())
	}
}

// CheckReadCommitted: Read hides transaction markers and aborted records
// (TxnLayout); offsets keep their gaps.
func CheckReadCommitted(t *testing.T, b Backend) {
	if b.Transactions == nil {
		t.Skip("the backend cannot hold transactional data (no Transactions hook)")
	}
	st := b.Transactions(t)
	t.Cleanup(func() { st.Close() })
	l, err := st.Partition("txn", 0)
	if err != nil {
		t.Fatalf("Partition(txn, 0): %v", err)
	}
	if l.EndOffset() != 9 {
		t.Fatalf("EndOffset %d, want 9", l.EndOffset())
	}
	got := readAll(t, l)
	if fmt.Sprint(offsets(got)) != fmt.Sprint(TxnLayout) {
		t.Fatalf("read_committed offsets %v, want %v", offsets(got), TxnLayout)
	}
	for _, r := range got {
		if want := fmt.Sprint("v", r.Offset); string(r.Value) != want {
			t.Errorf("offset %d: value %q, want %q", r.Offset, r.Value, want)
		}
	}
	if s := l.Stats(); s.Records != int64(len(TxnLayout)) {
		t.Errorf("Stats.Records %d, want %d (what a reader sees)", s.Records, len(TxnLayout))
	}
}

// CheckRetention: a removed segment's records stay readable through an
// earlier snapshot until release; StartOffset and Changed follow.
func CheckRetention(t *testing.T, b Backend) {
	if b.DropOldest == nil {
		t.Skip("no DropOldest hook")
	}
	st, l := b.openLog(t)
	smallSegments(t, st, "t")
	fill(t, l, 30, 200, nil)
	snap, release := l.Segments()
	defer release()
	if len(snap) < 2 {
		t.Skipf("one segment for %d records: nothing to remove", l.EndOffset())
	}
	before := readSeg(t, l, snap[0], snap[0].Base)
	ch := l.Changed()
	b.DropOldest(t, st, l)
	waitClosed(t, ch, "removing a segment")
	if got := l.StartOffset(); got != snap[1].Base {
		t.Fatalf("StartOffset %d after removing segment %d, want %d", got, snap[0].Base, snap[1].Base)
	}
	now := segments(t, l)
	checkSnapshot(t, l, now)
	if now[0].Base != snap[1].Base {
		t.Fatalf("first segment %d after removal, want %d", now[0].Base, snap[1].Base)
	}
	after := readSeg(t, l, snap[0], snap[0].Base)
	if len(after) != len(before) {
		t.Fatalf("removed segment read through the old snapshot: %d records, %d before", len(after), len(before))
	}
	if got, _ := l.OffsetForTime(partlog.Earliest); got != snap[1].Base {
		t.Errorf("OffsetForTime(Earliest) = %d, want %d", got, snap[1].Base)
	}
}

// CheckRewrite: compaction gives every rewritten segment a new ID, leaves
// the others' records as they were, and keeps each key's latest record; a
// rewritten segment, also one that merged several, never has the Stamp of
// the segment it replaced, or the Log is a partlog.RewritesUnseen (the
// rule fs relies on across a reopen).
func CheckRewrite(t *testing.T, b Backend) {
	if b.Rewrite == nil {
		t.Skip("no Rewrite hook")
	}
	st, l := b.openLog(t)
	setConfig(t, st, "t", "cleanup.policy", "compact")
	smallSegments(t, st, "t")
	fill(t, l, 40, 200, func(i int) []byte { return []byte(fmt.Sprint("k", i%4)) })
	old, release := l.Segments()
	defer release()
	oldRecs := make([][]record.Record, len(old))
	for i, s := range old {
		oldRecs[i] = readSeg(t, l, s, s.Base)
	}
	ch := l.Changed()
	b.Rewrite(t, st, l)
	waitClosed(t, ch, "a rewrite")
	now := segments(t, l)
	checkSnapshot(t, l, now)
	compareSnapshots(t, l, old, oldRecs, now)
	checkRewriteSeen(t, l, old, oldRecs, now)
	latest := map[string]int64{}
	for _, rs := range oldRecs {
		for _, r := range rs {
			latest[string(r.Key)] = r.Offset
		}
	}
	kept := map[int64]bool{}
	for _, r := range readAll(t, l) {
		kept[r.Offset] = true
	}
	if len(kept) >= int(l.EndOffset()) {
		t.Errorf("%d records of %d remain: the rewrite removed nothing", len(kept), l.EndOffset())
	}
	for k, off := range latest {
		if !kept[off] {
			t.Errorf("the latest record of key %s (offset %d) is gone", k, off)
		}
	}
}

// checkRewriteSeen: a segment of now that has the Base of one of old and
// other records has another Stamp (or 0), unless l says that its rewrites
// may leave no trace (partlog.RewritesUnseen).
func checkRewriteSeen(t *testing.T, l partlog.Log, old []partlog.Segment, oldRecs [][]record.Record, now []partlog.Segment) {
	t.Helper()
	if ru, ok := l.(partlog.RewritesUnseen); ok && ru.UnseenRewrites() {
		return
	}
	for _, s := range now {
		for i, o := range old {
			if s.Base != o.Base || s.Stamp == 0 || s.Stamp != o.Stamp || sameRecords(readSeg(t, l, s, s.Base), oldRecs[i]) {
				continue
			}
			t.Errorf("segment %d rewritten (ID %d -> %d, next %d -> %d) with its Stamp %d: a reopen cannot tell it changed, and the Log is not a partlog.RewritesUnseen",
				s.Base, o.ID, s.ID, o.Next, s.Next, s.Stamp)
		}
	}
}

func sameRecords(a, b []record.Record) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if sameRecord(a[i], b[i]) != "" {
			return false
		}
	}
	return true
}

// checkDup: a SegmentFileDuper's descriptor reads what ReadAt read, and
// stays readable after the SegmentFile is closed.
func checkDup(t *testing.T, f partlog.SegmentFile, name string, want []byte) {
	d, ok := f.(partlog.SegmentFileDuper)
	if !ok {
		return
	}
	of, err := d.DupFile()
	if err != nil {
		t.Logf("DupFile(%s): %v (served through ReadAt)", name, err)
		return
	}
	defer of.Close()
	got, err := io.ReadAll(io.NewSectionReader(of, 0, int64(len(want))+1))
	if err != nil || !bytes.Equal(got, want) {
		t.Errorf("DupFile(%s) read %d bytes (%v), ReadAt %d", name, len(got), err, len(want))
	}
}
