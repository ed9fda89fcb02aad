package logstore

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/partfs/partfs/config"
	"github.com/partfs/partfs/partlog"
	"github.com/partfs/partfs/record"
)

// TestSmallIndexBytes: every segment.index.bytes that is accepted works as
// Kafka's does (the index size is rounded down to whole entries and the
// segment rolls when an index is full): appends succeed, the store closes
// cleanly, and a reopen serves every record. A value too small to hold one
// time index entry (the one a roll writes) is refused with EINVAL.
func TestSmallIndexBytes(t *testing.T) {
	for n := 1; n <= 64; n++ {
		t.Run(fmt.Sprint(n), func(t *testing.T) {
			dir, c := t.TempDir(), newClock()
			opt := Options{Now: c.Now, NoBackground: true, Jitter: func(int64) int64 { return 0 }}
			st, l := openAt(t, dir, opt)
			err := st.SetTopicConfig("t", []partlog.KV{{Key: "segment.index.bytes", Value: fmt.Sprint(n)},
				{Key: "index.interval.bytes", Value: "100"}})
			if n < config.MinIndexBytes {
				if !errors.Is(err, partlog.ErrInvalid) {
					t.Fatalf("segment.index.bytes=%d: %v, want EINVAL", n, err)
				}
				st.Close()
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			for i := 0; i < 20; i++ {
				c.Add(time.Millisecond)
				if i%2 == 0 {
					if _, err := l.Append([]record.Record{{Value: []byte(fmt.Sprint(i) + strings.Repeat(" ", 200)), Timestamp: c.Now().UnixMilli()}}); err != nil {
						t.Fatalf("append %d: %v", i, err)
					}
				} else if _, _, err := l.AppendLines([]byte(fmt.Sprintf("%d%s\n", i, strings.Repeat(" ", 200)))); err != nil {
					t.Fatalf("append line %d: %v", i, err)
				}
			}
			if err := st.Close(); err != nil {
				t.Fatalf("close: %v", err)
			}
			st, err = Open(dir, opt)
			if err != nil {
				t.Fatal(err)
			}
			l2, err := st.Log("t", 0)
			if err != nil {
				t.Fatal(err)
			}
			got := 0
			segs, release := l2.Segments()
			for _, s := range segs {
				if err := l2.Read(s, s.Base, func(r *record.Record) bool {
					if r.Offset != int64(got) || strings.TrimSpace(string(r.Value)) != fmt.Sprint(got) {
						t.Errorf("offset %d: %q", r.Offset, r.Value)
					}
					got++
					return true
				}); err != nil {
					t.Fatal(err)
				}
			}
			if got != 20 {
				t.Errorf("reopen serves %d records, want 20", got)
			}
			c.Add(time.Millisecond)
			if _, err := l2.Append([]record.Record{{Value: []byte("after"), Timestamp: c.Now().UnixMilli()}}); err != nil {
				t.Fatalf("append after the reopen: %v", err)
			}
			release()
			if err := st.Close(); err != nil {
				t.Fatalf("close after the reopen: %v", err)
			}
		})
	}
}
