package compact

import (
	"fmt"
	"math/rand"
	"testing"
	"time"
)

// TestRandomCleaningsKeepTheModel appends, rolls, advances the clock and
// cleans at random (small maps, all codecs, tombstones, null keys) and
// checks after every cleaning: every record left was written as it is;
// every key's latest record is the one last written for it, or the key is
// gone entirely after a tombstone; below the checkpoint a key appears at
// most once; the active segment is untouched.
func TestRandomCleaningsKeepTheModel(t *testing.T) {
	for seed := int64(0); seed < 20; seed++ {
		rng := rand.New(rand.NewSource(seed))
		m := newMemTarget(t)
		m.cfg.DeleteRetentionMs = int64(rng.Intn(3000))
		nowMs := int64(10000)
		c := NewCleaner(Options{DedupeBufferSize: int64(24 * (11 + rng.Intn(60))), Now: func() time.Time { return time.UnixMilli(nowMs) }})
		written := map[int64]kv{}
		lastOf := map[string]kv{}
		for step := 0; step < 15; step++ {
			before := m.end
			fill(m, rng, 5+rng.Intn(20), 5+rng.Intn(30))
			for _, r := range m.records() {
				if r.off >= before {
					written[r.off] = r
					if r.key != "" {
						lastOf[r.key] = r
					}
				}
			}
			nowMs += int64(rng.Intn(2000))
			if _, err := c.Clean(m, rng.Intn(2) == 0); err != nil {
				t.Fatalf("seed %d step %d: %v", seed, step, err)
			}
			checkModel(t, fmt.Sprintf("seed %d step %d", seed, step), m, written, lastOf)
		}
	}
}

func checkModel(t *testing.T, where string, m *memTarget, written map[int64]kv, lastOf map[string]kv) {
	t.Helper()
	got := m.records()
	segs, _ := m.Segments()
	active := segs[len(segs)-1]
	latest := map[string]kv{}
	below := map[string]int{}
	for _, r := range got {
		if w, ok := written[r.off]; !ok || fmt.Sprint(w) != fmt.Sprint(r) {
			t.Fatalf("%s: record %v was not written so (%v)", where, r, w)
		}
		if r.key != "" {
			latest[r.key] = r
			if r.off < m.checkpoint {
				below[r.key]++
			}
		}
	}
	for k, n := range below {
		if n > 1 {
			t.Fatalf("%s: key %s appears %d times below the checkpoint %d", where, k, n, m.checkpoint)
		}
	}
	for k, want := range lastOf {
		have, ok := latest[k]
		if want.value == "<nil>" && !ok {
			continue // the tombstone itself expired
		}
		if !ok || have != want {
			t.Fatalf("%s: key %s latest %v, want %v", where, k, have, want)
		}
	}
	n := 0
	for _, r := range got {
		if r.off >= active.Base {
			n++
		}
	}
	if int64(n) != active.Next-active.Base {
		t.Fatalf("%s: active segment holds %d records, want %d", where, n, active.Next-active.Base)
	}
}
