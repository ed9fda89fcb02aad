package memlog

import (
	"errors"
	"testing"
	"time"

	"github.com/partfs/partfs/partlog"
	"github.com/partfs/partfs/record"
)

func TestAppendReadSnapshotsAndTime(t *testing.T) {
	now := time.UnixMilli(5000)
	st := New(Options{Now: func() time.Time { return now }})
	if err := st.CreateTopic("t"); err != nil {
		t.Fatal(err)
	}
	if err := st.AddPartition("t", 2); !errors.Is(err, partlog.ErrInvalid) {
		t.Fatalf("AddPartition gap: %v", err)
	}
	if err := st.SetTopicConfig("t", []partlog.KV{{Key: "segment.bytes", Value: "100"}}); err != nil {
		t.Fatal(err)
	}
	l, _ := st.Log("t", 0)
	for i, ts := range []int64{300, 100, 0, 200} {
		if first, err := l.Append([]record.Record{{Timestamp: ts, Value: []byte("v")}}); err != nil || first != int64(i) {
			t.Fatalf("append %d: %d %v", i, first, err)
		}
	}
	for ts, want := range map[int64]int64{150: 0, 301: 2, 6000: 4, partlog.Earliest: 0, partlog.Latest: 4, partlog.MaxTimestamp: 2, 400: 2} {
		if got, _ := l.OffsetForTime(ts); got != want {
			t.Errorf("OffsetForTime(%d) = %d, want %d", ts, got, want)
		}
	}
	snap, release := l.Segments()
	defer release()
	if len(snap) < 2 {
		t.Fatalf("no roll: %d segments", len(snap))
	}
	l.DeleteOldest(1)
	var got []int64
	if err := l.Read(snap[0], 0, func(r *record.Record) bool { got = append(got, r.Offset); return true }); err != nil || len(got) == 0 {
		t.Fatalf("old snapshot unreadable after retention: %v %v", got, err)
	}
	if l.StartOffset() != snap[1].Base {
		t.Fatalf("start %d, want %d", l.StartOffset(), snap[1].Base)
	}
	big := make([]byte, 2<<20)
	if _, err := l.Append([]record.Record{{Value: big}}); !errors.Is(err, partlog.ErrTooLarge) {
		t.Fatalf("large record: %v", err)
	}
	ro := New(Options{ReadOnly: true})
	if err := ro.CreateTopic("x"); !errors.Is(err, partlog.ErrReadOnly) {
		t.Fatalf("read-only create: %v", err)
	}
}
