package memlog

import (
	"errors"
	"testing"
	"time"

	"github.com/partfs/partfs/config"
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

// TestConfigAsConfigPackage: memlog accepts a property value exactly when
// package config does, and shows it as config does.
func TestConfigAsConfigPackage(t *testing.T) {
	st := New(Options{})
	if err := st.CreateTopic("t"); err != nil {
		t.Fatal(err)
	}
	for _, kv := range [][2]string{
		{"segment.bytes", "2147483648"}, {"segment.bytes", "13"}, {"segment.bytes", " 1024 "},
		{"segment.ms", "0"}, {"segment.index.bytes", "3"}, {"delete.retention.ms", "-1"},
		{"max.compaction.lag.ms", "0"}, {"flush.messages", "0"}, {"flush.ms", "-1"},
		{"retention.ms", "-1"}, {"retention.ms", "-2"}, {"retention.bytes", "-1"},
		{"cleanup.policy", "compact,delete"}, {"cleanup.policy", ""}, {"compression.type", "GZIP"},
		{"min.cleanable.dirty.ratio", "NaN"}, {"min.cleanable.dirty.ratio", "1"},
		{"message.timestamp.type", "createtime"}, {"max.message.bytes", "0"}, {"nope", "1"},
	} {
		want := config.Defaults()
		wantErr := want.Set(kv[0], kv[1])
		gotErr := st.SetTopicConfig("t", []partlog.KV{{Key: kv[0], Value: kv[1]}})
		if (wantErr == nil) != (gotErr == nil) {
			t.Errorf("%s=%q: memlog %v, config %v", kv[0], kv[1], gotErr, wantErr)
			continue
		}
		if gotErr != nil {
			if !errors.Is(gotErr, partlog.ErrInvalid) {
				t.Errorf("%s=%q: %v does not wrap ErrInvalid", kv[0], kv[1], gotErr)
			}
			continue
		}
		kvs, _ := st.TopicConfig("t")
		shown, _ := want.Get(kv[0])
		for _, p := range kvs {
			if p.Key == kv[0] && p.Value != shown {
				t.Errorf("%s=%q shows %q, config shows %q", kv[0], kv[1], p.Value, shown)
			}
		}
		st.SetTopicConfig("t", []partlog.KV{{Key: kv[0], Value: func() string { v, _ := config.Defaults().Get(kv[0]); return v }()}})
	}
	bad := New(Options{Defaults: map[string]string{"segment.ms": "0"}})
	if err := bad.CreateTopic("t"); !errors.Is(err, partlog.ErrInvalid) {
		t.Errorf("CreateTopic under an invalid mount default: %v", err)
	}
}
