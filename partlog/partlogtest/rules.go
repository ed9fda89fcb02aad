package partlogtest

import (
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/partfs/partfs/partlog"
	"github.com/partfs/partfs/record"
)

// CheckTopics: topics and partitions, and the errors of their operations.
func CheckTopics(t *testing.T, b Backend) {
	st := b.open(t)
	if st.ReadOnly() {
		t.Fatal("a New store says it is read-only")
	}
	l := NewLog(t, st, "t")
	if l.Topic() != "t" || l.Partition() != 0 || l.StartOffset() != 0 || l.EndOffset() != 0 {
		t.Fatalf("new partition: topic %q partition %d offsets [%d,%d)", l.Topic(), l.Partition(), l.StartOffset(), l.EndOffset())
	}
	if n, err := st.Partitions("t"); n != 1 || err != nil {
		t.Fatalf("Partitions(t) = %d, %v; want 1", n, err)
	}
	names, err := st.Topics()
	if err != nil {
		t.Fatalf("Topics(): %v", err)
	}
	if !slices.Contains(names, "t") || !slices.IsSorted(names) {
		t.Fatalf("Topics() = %v: lacks t or is not sorted", names)
	}
	wantErr(t, "CreateTopic of an existing topic", st.CreateTopic("t"), partlog.ErrExists)
	for _, bad := range []string{"", ".", "..", "a/b", "a b", strings.Repeat("x", 250)} {
		wantErr(t, fmt.Sprintf("CreateTopic(%q)", bad), st.CreateTopic(bad), partlog.ErrInvalid)
	}
	_, err = st.Partitions("nope")
	wantErr(t, "Partitions of an unknown topic", err, partlog.ErrNotFound)
	_, err = st.Partition("nope", 0)
	wantErr(t, "Partition of an unknown topic", err, partlog.ErrNotFound)
	_, err = st.Partition("t", 1)
	wantErr(t, "Partition beyond the count", err, partlog.ErrNotFound)
	wantErr(t, "AddPartition of an unknown topic", st.AddPartition("nope", 1), partlog.ErrNotFound)
	wantErr(t, "AddPartition leaving a gap", st.AddPartition("t", 2), partlog.ErrInvalid)
	wantErr(t, "AddPartition of an existing partition", st.AddPartition("t", 0), partlog.ErrExists)
	if err := st.AddPartition("t", 1); err != nil {
		t.Fatalf("AddPartition(t, 1): %v", err)
	}
	if n, err := st.Partitions("t"); n != 2 || err != nil {
		t.Fatalf("Partitions(t) after AddPartition = %d, %v", n, err)
	}
	l1, err := st.Partition("t", 1)
	if err != nil || l1.Topic() != "t" || l1.Partition() != 1 {
		t.Fatalf("Partition(t, 1): %v", err)
	}
	appendN(t, l1, values(0, "one")...)
	if l.EndOffset() != 0 {
		t.Fatalf("an append to partition 1 moved partition 0 to %d", l.EndOffset())
	}
}

// CheckConfig: TopicConfig lists what fs/ reads; SetTopicConfig validates
// everything before it changes anything.
func CheckConfig(t *testing.T, b Backend) {
	st := b.open(t)
	NewLog(t, st, "t")
	for _, key := range []string{"cleanup.policy", "max.message.bytes", "retention.ms"} {
		if configValue(t, st, "t", key) == "" {
			t.Errorf("TopicConfig lacks %s", key)
		}
	}
	_, err := st.TopicConfig("nope")
	wantErr(t, "TopicConfig of an unknown topic", err, partlog.ErrNotFound)
	wantErr(t, "SetTopicConfig of an unknown topic", st.SetTopicConfig("nope", []partlog.KV{{Key: "retention.ms", Value: "1000"}}), partlog.ErrNotFound)
	before := configValue(t, st, "t", "retention.ms")
	good := partlog.KV{Key: "retention.ms", Value: "3600000"}
	for _, bad := range []partlog.KV{
		{Key: "no.such.property", Value: "1"},
		{Key: "retention.ms", Value: "abc"},
		{Key: "cleanup.policy", Value: "remove"},
		{Key: "max.message.bytes", Value: "-5"},
	} {
		err := st.SetTopicConfig("t", []partlog.KV{good, bad})
		wantErr(t, fmt.Sprintf("SetTopicConfig(%s=%s)", bad.Key, bad.Value), err, partlog.ErrInvalid)
		if got := configValue(t, st, "t", "retention.ms"); got != before {
			t.Errorf("a refused SetTopicConfig(%s=%s) changed retention.ms to %s", bad.Key, bad.Value, got)
		}
	}
	setConfig(t, st, "t", good.Key, good.Value)
	if got := configValue(t, st, "t", "retention.ms"); got != good.Value {
		t.Errorf("retention.ms = %q after setting %q", got, good.Value)
	}
}

// CheckAppend: offsets, and what a record keeps (key, value, headers,
// timestamp, tombstone, empty value); a timestamp <= 0 means now.
func CheckAppend(t *testing.T, b Backend) {
	_, l := b.openLog(t)
	base := recent()
	in := []record.Record{
		{Timestamp: base + 1, Key: []byte("k1"), Value: []byte("v1"), Headers: []record.Header{{Key: "h", Value: []byte("x")}, {Key: "h2", Value: nil}}},
		{Timestamp: base, Value: []byte("no key, earlier")},
		{Timestamp: base + 2, Key: []byte("k1")}, // tombstone
		{Timestamp: base + 3, Key: []byte("k2"), Value: []byte{}},
	}
	if first := appendN(t, l, in...); first != 0 {
		t.Fatalf("first append at %d", first)
	}
	before := time.Now().UnixMilli()
	if first := appendN(t, l, values(0, "now")...); first != 4 {
		t.Fatalf("second append at %d, want 4", first)
	}
	after := time.Now().UnixMilli()
	got := readAll(t, l)
	if len(got) != 5 {
		t.Fatalf("read %d records (offsets %v), want 5", len(got), offsets(got))
	}
	for i := range in {
		want := in[i]
		want.Offset = int64(i)
		if d := sameRecord(got[i], want); d != "" {
			t.Errorf("read back: %s", d)
		}
	}
	if ts := got[4].Timestamp; ts < before-1000 || ts > after+1000 {
		t.Errorf("timestamp 0 became %d, want the append time in [%d,%d]", ts, before, after)
	}
	if got[4].Offset != 4 || string(got[4].Value) != "now" {
		t.Errorf("record 4 = offset %d %q", got[4].Offset, got[4].Value)
	}
}

// CheckAppendConcurrent: each Append's records are one contiguous run of
// offsets, never interleaved with another writer's.
func CheckAppendConcurrent(t *testing.T, b Backend) {
	const writers, appends, per = 4, 25, 5
	_, l := b.openLog(t)
	var wg sync.WaitGroup
	firsts := make([][]int64, writers)
	errs := make(chan error, writers)
	for w := 0; w < writers; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			for a := 0; a < appends; a++ {
				recs := make([]record.Record, per)
				for k := range recs {
					recs[k].Value = []byte(fmt.Sprintf("w%d-a%d-r%d", w, a, k))
				}
				first, err := l.Append(recs)
				if err != nil {
					errs <- err
					return
				}
				firsts[w] = append(firsts[w], first)
			}
		}(w)
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatalf("concurrent Append: %v", err)
	}
	got := readAll(t, l)
	if len(got) != writers*appends*per || l.EndOffset() != int64(len(got)) {
		t.Fatalf("%d records, EndOffset %d; want %d", len(got), l.EndOffset(), writers*appends*per)
	}
	for w, fs := range firsts {
		for a, first := range fs {
			for k := 0; k < per; k++ {
				r := got[first+int64(k)]
				if want := fmt.Sprintf("w%d-a%d-r%d", w, a, k); r.Offset != first+int64(k) || string(r.Value) != want {
					t.Fatalf("offset %d holds %q, want %q (append at %d)", r.Offset, r.Value, want, first)
				}
			}
		}
	}
}

// CheckTooLarge: a record over max.message.bytes fails the whole Append
// with ErrTooLarge and appends nothing.
func CheckTooLarge(t *testing.T, b Backend) {
	st, l := b.openLog(t)
	setConfig(t, st, "t", "max.message.bytes", "2048")
	appendN(t, l, values(0, "small")...)
	big := record.Record{Value: make([]byte, 4096)}
	_, err := l.Append([]record.Record{{Value: []byte("before")}, big})
	wantErr(t, "Append of a record over max.message.bytes", err, partlog.ErrTooLarge)
	if l.EndOffset() != 1 {
		t.Fatalf("a refused Append moved EndOffset to %d", l.EndOffset())
	}
	if got := readAll(t, l); len(got) != 1 {
		t.Fatalf("a refused Append left %d records", len(got))
	}
	appendN(t, l, values(0, "after")...)
}

// CheckOffsetForTime: Kafka's ListOffsets rules.
func CheckOffsetForTime(t *testing.T, b Backend) {
	_, l := b.openLog(t)
	resolve := func(ts, want int64) {
		t.Helper()
		got, err := l.OffsetForTime(ts)
		if err != nil || got != want {
			t.Errorf("OffsetForTime(%d) = %d, %v; want %d", ts, got, err, want)
		}
	}
	resolve(partlog.Latest, 0)
	resolve(partlog.Earliest, 0)
	resolve(partlog.MaxTimestamp, 0)
	base := recent()
	resolve(base, 0)
	// One record per Append, timestamps out of order; base+500 twice.
	for _, ts := range []int64{100, 300, 200, 500, 400, 500} {
		appendN(t, l, values(base+ts, fmt.Sprint("at", ts))...)
	}
	for ts, want := range map[int64]int64{
		0: 0, 100: 0, 101: 1, 250: 1, 300: 1, 301: 3, 450: 3, 500: 3, 501: 6,
	} {
		resolve(base+ts, want)
	}
	resolve(0, 0)
	resolve(partlog.Latest, 6)
	resolve(partlog.Earliest, 0)
	resolve(partlog.MaxTimestamp, 3)
	_, err := l.OffsetForTime(-7)
	wantErr(t, "OffsetForTime(-7)", err, partlog.ErrInvalid)
}

// CheckRead: bounds, order and early stop of Read; ReadFrom reads on
// from an offset across the segments.
func CheckRead(t *testing.T, b Backend) {
	_, l := b.openLog(t)
	appendN(t, l, values(recent(), "a", "b", "c", "d", "e")...)
	snap := segments(t, l)
	checkSnapshot(t, l, snap)
	last := snap[len(snap)-1]
	if last.Base > 2 {
		t.Skipf("records 0-4 span segments %v; the test wants offset 2 in the last", snap)
	}
	if got := offsets(readSeg(t, l, last, 2)); fmt.Sprint(got) != "[2 3 4]" {
		t.Errorf("Read from 2 = %v", got)
	}
	if got := readSeg(t, l, last, last.Next); len(got) != 0 {
		t.Errorf("Read from Next yielded %v", offsets(got))
	}
	n := 0
	if err := l.Read(last, 0, func(*record.Record) bool { n++; return n < 2 }); err != nil || n != 2 {
		t.Errorf("Read stopped by fn after %d calls, %v; want 2", n, err)
	}
	appendN(t, l, values(recent(), "f")...)
	if got := readSeg(t, l, last, 0); len(got) != int(last.Next-last.Base) {
		t.Errorf("Read of a snapshot segment yielded %v, past its Next %d", offsets(got), last.Next)
	}
	var from3 []int64
	next, err := partlog.ReadFrom(l, 3, func(r *record.Record) { from3 = append(from3, r.Offset) })
	if err != nil || fmt.Sprint(from3) != "[3 4 5]" || next != l.EndOffset() {
		t.Errorf("ReadFrom(3) = %v, next %d, %v; want [3 4 5], next %d", from3, next, err, l.EndOffset())
	}
}

// CheckSegments: snapshot invariants while the log grows (and rolls, where
// the backend takes segment.bytes), a segment's records stay as they were
// while its Base and ID hold, and a snapshot is never modified nor
// returned again once the log changed.
func CheckSegments(t *testing.T, b Backend) {
	st, l := b.openLog(t)
	empty := segments(t, l)
	checkSnapshot(t, l, empty)
	smallSegments(t, st, "t")
	var prev, kept []partlog.Segment
	var prevRecs [][]record.Record
	for round := 0; round < 4; round++ {
		fill(t, l, 10, 200, nil)
		snap := segments(t, l)
		checkSnapshot(t, l, snap)
		recs := make([][]record.Record, len(snap))
		for i, s := range snap {
			recs[i] = readSeg(t, l, s, s.Base)
		}
		compareSnapshots(t, l, prev, prevRecs, snap)
		if !slices.Equal(prev, kept) {
			t.Errorf("a snapshot changed after it was returned: %v, was %v", prev, kept)
		}
		if len(prev) == len(snap) && &prev[0] == &snap[0] {
			t.Errorf("Segments returned the same snapshot after an append")
		}
		prev, kept, prevRecs = snap, slices.Clone(snap), recs
	}
	t.Logf("%d segments for %d records", len(prev), l.EndOffset())
	var all []int64
	for _, r := range readAll(t, l) {
		all = append(all, r.Offset)
	}
	for i, off := range all {
		if off != int64(i) {
			t.Fatalf("offsets %v: appended offsets have no gaps", all)
		}
	}
}

// compareSnapshots checks a later snapshot against an earlier one: a
// segment with the same Base and ID has Next and Size no smaller and the
// same records below the earlier Next.
func compareSnapshots(t *testing.T, l partlog.Log, old []partlog.Segment, oldRecs [][]record.Record, snap []partlog.Segment) {
	t.Helper()
	for _, s := range snap {
		for i, o := range old {
			if o.Base != s.Base || o.ID != s.ID {
				continue
			}
			if s.Next < o.Next || s.Size < o.Size {
				t.Errorf("segment %d (ID %d) shrank: next %d -> %d, size %d -> %d without a new ID", s.Base, s.ID, o.Next, s.Next, o.Size, s.Size)
			}
			if s.Stamp != o.Stamp && o.Stamp != 0 {
				t.Errorf("segment %d (ID %d) changed its Stamp %d -> %d under the same ID", s.Base, s.ID, o.Stamp, s.Stamp)
			}
			now := readSeg(t, l, s, s.Base)
			for k, r := range oldRecs[i] {
				if k >= len(now) {
					t.Fatalf("segment %d (ID %d) lost records from offset %d without a new ID", s.Base, s.ID, r.Offset)
				}
				if d := sameRecord(now[k], r); d != "" {
					t.Fatalf("segment %d (ID %d) changed without a new ID: %s", s.Base, s.ID, d)
				}
			}
		}
	}
}

// CheckChanged: the channel stays open while nothing changes and is
// closed after an append.
func CheckChanged(t *testing.T, b Backend) {
	_, l := b.openLog(t)
	appendN(t, l, values(0, "a")...)
	ch := l.Changed()
	select {
	case <-ch:
		t.Fatal("Changed is closed with nothing changed")
	case <-time.After(100 * time.Millisecond):
	}
	appendN(t, l, values(0, "b")...)
	waitClosed(t, ch, "an append")
}

// waitClosed fails unless ch closes within 5 s.
func waitClosed(t *testing.T, ch <-chan struct{}, after string) {
	t.Helper()
	select {
	case <-ch:
	case <-time.After(5 * time.Second):
		t.Fatalf("Changed not closed 5 s after %s", after)
	}
}

// CheckSidecars: absent is ErrNotFound, saving replaces, names are checked,
// partitions do not share sidecars.
func CheckSidecars(t *testing.T, b Backend) {
	st, l := b.openLog(t)
	if err := st.AddPartition("t", 1); err != nil {
		t.Fatal(err)
	}
	l1, _ := st.Partition("t", 1)
	_, err := l.LoadSidecar("pos")
	wantErr(t, "LoadSidecar of an absent sidecar", err, partlog.ErrNotFound)
	for _, data := range []string{"first", "second, longer than the first", "3"} {
		if err := l.SaveSidecar("pos", []byte(data)); err != nil {
			t.Fatalf("SaveSidecar: %v", err)
		}
		if got, err := l.LoadSidecar("pos"); err != nil || string(got) != data {
			t.Fatalf("LoadSidecar = %q, %v; want %q", got, err, data)
		}
	}
	_, err = l1.LoadSidecar("pos")
	wantErr(t, "LoadSidecar of partition 1 after saving partition 0's", err, partlog.ErrNotFound)
	for _, bad := range []string{"", "a/b", ".", ".."} {
		wantErr(t, fmt.Sprintf("SaveSidecar(%q)", bad), l.SaveSidecar(bad, []byte("x")), partlog.ErrInvalid)
	}
}

// CheckStats: stat's figures agree with the log.
func CheckStats(t *testing.T, b Backend) {
	st, l := b.openLog(t)
	base := recent()
	appendN(t, l, values(base+1000, "a", "b")...)
	appendN(t, l, values(base, "c")...)
	s := l.Stats()
	snap := segments(t, l)
	if s.LogStartOffset != l.StartOffset() || s.LogEndOffset != 3 || s.Records != 3 || (s.Segments != len(snap) && s.Segments != -1) {
		t.Errorf("Stats %+v; want offsets [%d,3), 3 records, %d segments (or -1, unknown)", s, l.StartOffset(), len(snap))
	}
	if s.MaxTimestampMs != base+1000 {
		t.Errorf("Stats max timestamp %d, want %d", s.MaxTimestampMs, base+1000)
	}
	if s.CleanupPolicy != configValue(t, st, "t", "cleanup.policy") {
		t.Errorf("Stats cleanup policy %q", s.CleanupPolicy)
	}
}

// CheckLineAppender: AppendLines is Append of one record per
// '\n'-terminated line of each chunk; what follows a chunk's last '\n' is
// left out.
func CheckLineAppender(t *testing.T, b Backend) {
	_, l := b.openLog(t)
	la, ok := l.(partlog.LineAppender)
	if !ok {
		t.Skip("the backend's Log is not a partlog.LineAppender")
	}
	appendN(t, l, values(0, "x")...)
	first, n, err := la.AppendLines([]byte("a\nb\n"), []byte("c\n\nd\ntail"))
	if err != nil || first != 1 || n != 5 {
		t.Fatalf("AppendLines = %d, %d, %v; want 1, 5", first, n, err)
	}
	got := readAll(t, l)
	var vs []string
	for _, r := range got[1:] {
		vs = append(vs, string(r.Value))
		if r.Key != nil || len(r.Headers) != 0 || r.Timestamp <= 0 {
			t.Errorf("line record %d: key %q, %d headers, timestamp %d", r.Offset, r.Key, len(r.Headers), r.Timestamp)
		}
	}
	if fmt.Sprint(vs) != "[a b c  d]" || l.EndOffset() != 6 {
		t.Fatalf("lines read back %q, EndOffset %d", vs, l.EndOffset())
	}
}

// CheckKeyless: a compacted topic refuses an append holding a record
// without a key, whole (ErrInvalid, nothing appended), through Append and
// AppendLines alike; keyed records and tombstones are taken; a topic that
// only deletes takes keyless records.
func CheckKeyless(t *testing.T, b Backend) {
	st, l := b.openLog(t)
	appendN(t, l, values(0, "before")...)
	setConfig(t, st, l.Topic(), "cleanup.policy", "compact")
	_, err := l.Append([]record.Record{{Key: []byte("k"), Value: []byte("v")}, {Value: []byte("no key")}})
	wantErr(t, "Append of a keyless record to a compacted topic", err, partlog.ErrInvalid)
	if la, ok := l.(partlog.LineAppender); ok {
		_, _, err := la.AppendLines([]byte("line\n"))
		wantErr(t, "AppendLines to a compacted topic", err, partlog.ErrInvalid)
	}
	if l.EndOffset() != 1 {
		t.Fatalf("refused appends moved the end to %d", l.EndOffset())
	}
	appendN(t, l, record.Record{Key: []byte("k"), Value: []byte("v")}, record.Record{Key: []byte("k")})
	setConfig(t, st, l.Topic(), "cleanup.policy", "delete")
	appendN(t, l, values(0, "keyless again")...)
}
