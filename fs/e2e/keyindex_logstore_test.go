package e2e

import (
	"fmt"
	"testing"
	"time"

	"github.com/partfs/partfs/compact"
	"github.com/partfs/partfs/keyindex"
	"github.com/partfs/partfs/logstore"
	"github.com/partfs/partfs/partlog/partlogtest"
	"github.com/partfs/partfs/record"
	"github.com/partfs/partfs/vfs"
)

// TestLatestAcrossCompaction follows a logstore log through appends, rolls
// and two cleanings (the second drops a tombstone past its horizon).
func TestLatestAcrossCompaction(t *testing.T) {
	nowMs := int64(1_800_000_000_000)
	now := func() time.Time { return time.UnixMilli(nowMs) }
	st, err := logstore.Open("/data", logstore.Options{FS: vfs.NewCrashFS(), Now: now, NoBackground: true,
		Defaults: map[string]string{"cleanup.policy": "compact", "segment.bytes": "400", "delete.retention.ms": "1000"}})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	l := partlogtest.NewLog(t, st, "t")
	put := func(key, value string) {
		r := record.Record{Key: []byte(key)}
		if value != "" {
			r.Value = []byte(value)
		}
		if _, err := l.Append([]record.Record{r}); err != nil {
			t.Fatal(err)
		}
	}
	for i := 0; i < 40; i++ {
		put(fmt.Sprintf("k%d", i%8), fmt.Sprintf("value-%02d-padding-padding-padding", i))
	}
	put("k3", "")
	for i := 0; i < 10; i++ {
		put("filler", fmt.Sprintf("filler-%02d-padding-padding-padding-padding", i))
	}
	x := keyindex.New(l)
	expect := func(key, want string) {
		t.Helper()
		rec, ok, err := x.Latest([]byte(key))
		if err != nil || ok != (want != "") || string(rec.Value) != want {
			t.Fatalf("Latest(%s) = %q ok=%v err=%v, want %q", key, rec.Value, ok, err, want)
		}
	}
	expect("k1", "value-33-padding-padding-padding")
	expect("k3", "")
	c := compact.NewCleaner(compact.Options{Now: now, DedupeBufferSize: 1 << 16})
	if sum, err := c.CleanAll(compact.Targets(st), true); err != nil || sum.RecordsRemoved == 0 {
		t.Fatalf("clean: %v %+v", err, sum)
	}
	expect("k1", "value-33-padding-padding-padding")
	expect("k7", "value-39-padding-padding-padding")
	expect("k3", "")
	put("k1", "new")
	expect("k1", "new")

	nowMs += 2000 // past the tombstone's horizon
	for i := 0; i < 10; i++ {
		put("filler", fmt.Sprintf("filler-%02d-padding-padding-padding-padding", i))
	}
	if _, err := c.CleanAll(compact.Targets(st), true); err != nil {
		t.Fatal(err)
	}
	expect("k3", "")
	expect("k1", "new")
	expect("k0", "value-32-padding-padding-padding")
	segs, release := l.Segments()
	defer release()
	for _, s := range segs {
		l.Read(s, s.Base, func(r *record.Record) bool {
			if string(r.Key) == "k3" {
				t.Errorf("tombstone of k3 at %d still in the log after its horizon", r.Offset)
			}
			return true
		})
	}
}
