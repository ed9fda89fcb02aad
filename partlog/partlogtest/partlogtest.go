// Package partlogtest is the conformance suite of partlog backends: every
// rule the package doc of partlog states, which fs/ (and keyindex, metrics)
// rely on, as tests that run on any partlog.Store. A backend's own test
// file calls Run with a Backend that makes fresh stores of it:
//
//	func TestConformance(t *testing.T) {
//		partlogtest.Run(t, partlogtest.Backend{New: func(t *testing.T) partlog.Store { ... }})
//	}
//
// The suite covers topics and partitions (ErrNotFound, ErrInvalid,
// ErrExists), configs (validated all or nothing), appends (atomic and
// contiguous under concurrent writers, keys, headers, timestamps,
// tombstones, ErrTooLarge with nothing appended), offsets, OffsetForTime
// with Latest, Earliest, MaxTimestamp and timestamps, Read (order, bounds,
// early stop), segment snapshots (the invariants below, stability of a
// segment's records while its ID holds, ID and Size), Changed, sidecars,
// Stats, and the optional LineAppender and SegmentFiler.
//
// What only some backends can do is driven through optional hooks of
// Backend, and the subtests that need a missing hook are skipped with the
// reason: reopening the same data (durability of records, configs and
// sidecars, and the identity of unchanged segments across a remount), a
// read-only store (ErrReadOnly), transactional data (read_committed: a
// backend builds TxnLayout however it can — logstore writes the batches
// and the .txnindex, a cluster backend runs a transactional producer; an
// in-memory backend without transactions has none), removing the oldest
// segment as retention does (snapshots stay readable), and rewriting
// segments as compaction does (new IDs, each key's latest record kept).
//
// Timestamps the suite gives are recent (an hour ago), so that a broker's
// retention.ms keeps them; configs it sets are ones Kafka takes
// (segment.bytes=1024 may be refused, and the test then runs with the
// backend's own segments).
package partlogtest

import (
	"bytes"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/partfs/partfs/partlog"
	"github.com/partfs/partfs/record"
)

// Backend makes stores of the backend under test.
type Backend struct {
	// New returns a fresh, empty, writable store; the suite closes it.
	New func(t *testing.T) partlog.Store
	// Reopen, if set, closes st and opens the same data again.
	Reopen func(t *testing.T, st partlog.Store) partlog.Store
	// ReadOnly, if set, returns a read-only store holding topic "ro" with
	// one partition and at least one record.
	ReadOnly func(t *testing.T) partlog.Store
	// Transactions, if set, returns a store whose topic "txn" partition 0
	// holds TxnLayout.
	Transactions func(t *testing.T) partlog.Store
	// DropOldest, if set, removes the oldest segment of l (never the only
	// one) as retention does and moves the log start offset to the next
	// segment's base.
	DropOldest func(t *testing.T, st partlog.Store, l partlog.Log)
	// Rewrite, if set, rewrites the sealed segments of l as compaction does
	// (keeping only each key's latest record).
	Rewrite func(t *testing.T, st partlog.Store, l partlog.Log)
}

// TxnLayout is the content of the transactional partition a
// Backend.Transactions store holds, offset by offset: 0-1 plain records,
// 2-3 a transaction of producer A, 4 its ABORT marker, 5-6 a transaction
// of producer B, 7 its COMMIT marker, 8 a plain record. Record i's value is
// "v<i>". A read_committed reader sees offsets 0, 1, 5, 6 and 8; the log
// end offset is 9.
var TxnLayout = []int64{0, 1, 5, 6, 8}

// Run runs the whole suite on b.
func Run(t *testing.T, b Backend) {
	for _, c := range []struct {
		name string
		fn   func(*testing.T, Backend)
	}{
		{"Topics", CheckTopics},
		{"Config", CheckConfig},
		{"Append", CheckAppend},
		{"AppendConcurrent", CheckAppendConcurrent},
		{"TooLarge", CheckTooLarge},
		{"Keyless", CheckKeyless},
		{"OffsetForTime", CheckOffsetForTime},
		{"Read", CheckRead},
		{"Segments", CheckSegments},
		{"Changed", CheckChanged},
		{"Sidecars", CheckSidecars},
		{"Stats", CheckStats},
		{"LineAppender", CheckLineAppender},
		{"SegmentFiler", CheckSegmentFiler},
		{"Reopen", CheckReopen},
		{"ReadOnly", CheckReadOnly},
		{"ReadCommitted", CheckReadCommitted},
		{"Retention", CheckRetention},
		{"Rewrite", CheckRewrite},
	} {
		t.Run(c.name, func(t *testing.T) { c.fn(t, b) })
	}
}

// open makes a fresh store closed at the end of the test.
func (b Backend) open(t *testing.T) partlog.Store {
	t.Helper()
	st := b.New(t)
	t.Cleanup(func() { st.Close() })
	return st
}

// openLog opens a store that the test closes and returns it with
// partition 0 of a new topic "t".
func (b Backend) openLog(t *testing.T) (partlog.Store, partlog.Log) {
	t.Helper()
	st := b.open(t)
	return st, NewLog(t, st, "t")
}

// NewLog creates topic with one partition in st and returns partition 0;
// any failure fails t. Tests of other packages use it too.
func NewLog(t testing.TB, st partlog.Store, topic string) partlog.Log {
	t.Helper()
	if err := st.CreateTopic(topic); err != nil {
		t.Fatalf("CreateTopic(%q): %v", topic, err)
	}
	l, err := st.Partition(topic, 0)
	if err != nil {
		t.Fatalf("Partition(%q, 0): %v", topic, err)
	}
	return l
}

// wantErr fails unless err wraps target.
func wantErr(t *testing.T, what string, err, target error) {
	t.Helper()
	if !errors.Is(err, target) {
		t.Errorf("%s: error %v, want one wrapping %q", what, err, target)
	}
}

// setConfig sets one property, failing the test on an error.
func setConfig(t *testing.T, st partlog.Store, topic, key, value string) {
	t.Helper()
	if err := st.SetTopicConfig(topic, []partlog.KV{{Key: key, Value: value}}); err != nil {
		t.Fatalf("SetTopicConfig(%s=%s): %v", key, value, err)
	}
}

// configValue returns the effective value of key ("" if not listed).
func configValue(t *testing.T, st partlog.Store, topic, key string) string {
	t.Helper()
	kvs, err := st.TopicConfig(topic)
	if err != nil {
		t.Fatalf("TopicConfig(%q): %v", topic, err)
	}
	for _, kv := range kvs {
		if kv.Key == key {
			return kv.Value
		}
	}
	return ""
}

// appendN appends recs, checking the offsets assigned.
func appendN(t *testing.T, l partlog.Log, recs ...record.Record) int64 {
	t.Helper()
	end := l.EndOffset()
	first, err := l.Append(recs)
	if err != nil {
		t.Fatalf("Append of %d records: %v", len(recs), err)
	}
	if first != end {
		t.Fatalf("Append returned first offset %d, log end offset was %d", first, end)
	}
	if got := l.EndOffset(); got != first+int64(len(recs)) {
		t.Fatalf("after Append of %d records at %d: EndOffset %d", len(recs), first, got)
	}
	return first
}

// values makes one record per value, with timestamp ts (0: now).
func values(ts int64, vs ...string) []record.Record {
	recs := make([]record.Record, len(vs))
	for i, v := range vs {
		recs[i] = record.Record{Timestamp: ts, Value: []byte(v)}
	}
	return recs
}

// readSeg returns the records Read yields of seg from offset from,
// checking that they are in increasing offset order within its bounds.
func readSeg(t *testing.T, l partlog.Log, seg partlog.Segment, from int64) []record.Record {
	t.Helper()
	var out []record.Record
	err := l.Read(seg, from, func(r *record.Record) bool {
		out = append(out, r.Clone())
		return true
	})
	if err != nil {
		t.Fatalf("Read(segment %d, from %d): %v", seg.Base, from, err)
	}
	lo := max(from, seg.Base)
	for i, r := range out {
		if r.Offset < lo || r.Offset >= seg.Next {
			t.Fatalf("Read(segment [%d,%d), from %d) yielded offset %d", seg.Base, seg.Next, from, r.Offset)
		}
		if i > 0 && r.Offset <= out[i-1].Offset {
			t.Fatalf("Read(segment %d) yielded offset %d after %d", seg.Base, r.Offset, out[i-1].Offset)
		}
	}
	return out
}

// readAll returns every record of the log through one snapshot, which it
// checks (checkSnapshot).
func readAll(t *testing.T, l partlog.Log) []record.Record {
	t.Helper()
	snap, release := l.Segments()
	defer release()
	checkSnapshot(t, l, snap)
	var out []record.Record
	for _, seg := range snap {
		out = append(out, readSeg(t, l, seg, seg.Base)...)
	}
	return out
}

// checkSnapshot checks the invariants of one snapshot of a quiet log.
func checkSnapshot(t *testing.T, l partlog.Log, snap []partlog.Segment) {
	t.Helper()
	if len(snap) == 0 {
		t.Fatal("Segments returned no segment; a snapshot has at least one")
	}
	ids := map[uint64]bool{}
	for i, s := range snap {
		if s.ID == 0 {
			t.Errorf("segment %d has ID 0", s.Base)
		}
		if ids[s.ID] {
			t.Errorf("segment %d repeats ID %d", s.Base, s.ID)
		}
		ids[s.ID] = true
		if s.Next < s.Base || s.Size < 0 {
			t.Errorf("segment base %d next %d size %d", s.Base, s.Next, s.Size)
		}
		if i > 0 && (s.Base <= snap[i-1].Base || s.Base < snap[i-1].Next) {
			t.Errorf("segment [%d,%d) follows [%d,%d)", s.Base, s.Next, snap[i-1].Base, snap[i-1].Next)
		}
	}
	if start := l.StartOffset(); snap[0].Base > start {
		t.Errorf("first segment base %d > StartOffset %d", snap[0].Base, start)
	}
	if last, end := snap[len(snap)-1], l.EndOffset(); last.Next != end {
		t.Errorf("last segment ends at %d, EndOffset %d", last.Next, end)
	}
}

// sameRecord reports how a and b differ ("" if they do not).
func sameRecord(a, b record.Record) string {
	switch {
	case a.Offset != b.Offset:
		return fmt.Sprintf("offset %d != %d", a.Offset, b.Offset)
	case !bytes.Equal(a.Key, b.Key) || (a.Key == nil) != (b.Key == nil):
		return fmt.Sprintf("offset %d: key %q != %q", a.Offset, a.Key, b.Key)
	case !bytes.Equal(a.Value, b.Value) || (a.Value == nil) != (b.Value == nil):
		return fmt.Sprintf("offset %d: value %q != %q (nil: %v, %v)", a.Offset, a.Value, b.Value, a.Value == nil, b.Value == nil)
	case a.Timestamp != b.Timestamp:
		return fmt.Sprintf("offset %d: timestamp %d != %d", a.Offset, a.Timestamp, b.Timestamp)
	case len(a.Headers) != len(b.Headers):
		return fmt.Sprintf("offset %d: %d headers != %d", a.Offset, len(a.Headers), len(b.Headers))
	}
	for i := range a.Headers {
		if a.Headers[i].Key != b.Headers[i].Key || !bytes.Equal(a.Headers[i].Value, b.Headers[i].Value) {
			return fmt.Sprintf("offset %d: header %d %q=%q != %q=%q", a.Offset, i,
				a.Headers[i].Key, a.Headers[i].Value, b.Headers[i].Key, b.Headers[i].Value)
		}
	}
	return ""
}

// offsets lists the offsets of recs.
func offsets(recs []record.Record) []int64 {
	out := make([]int64, len(recs))
	for i, r := range recs {
		out[i] = r.Offset
	}
	return out
}

// fill appends n records of about size bytes each stamped now (old
// timestamps would meet retention.ms), one Append per record, so that a
// backend with segment.bytes set small rolls.
func fill(t *testing.T, l partlog.Log, n, size int, key func(i int) []byte) {
	t.Helper()
	for i := 0; i < n; i++ {
		v := fmt.Sprintf("r%d-", l.EndOffset())
		r := record.Record{Timestamp: time.Now().UnixMilli(), Value: []byte(v + string(bytes.Repeat([]byte("x"), max(size-len(v), 0))))}
		if key != nil {
			r.Key = key(i)
		}
		appendN(t, l, r)
	}
}

// smallSegments asks for small segments (1 KiB); a backend that refuses
// the value keeps its own, and the test goes on with what it has.
func smallSegments(t *testing.T, st partlog.Store, topic string) {
	t.Helper()
	if err := st.SetTopicConfig(topic, []partlog.KV{{Key: "segment.bytes", Value: "1024"}}); err != nil {
		t.Logf("segment.bytes=1024 refused (%v): the test runs with the backend's segments", err)
	}
}

// recent is a timestamp an hour ago: records the suite stamps are recent
// enough that no retention.ms default removes them during a test.
func recent() int64 { return time.Now().Add(-time.Hour).UnixMilli() }

// segments returns a snapshot of l, released at the end of the test.
func segments(t *testing.T, l partlog.Log) []partlog.Segment {
	snap, release := l.Segments()
	t.Cleanup(release)
	return snap
}
