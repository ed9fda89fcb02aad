package compact

import (
	"errors"
	"fmt"
	"math/rand"
	"testing"
	"time"

	"github.com/partfs/partfs/partlog"
	"github.com/partfs/partfs/record"
)

// fill appends a random workload: batches of keys k0..k(keys-1), some
// tombstones and null keys, rolling every few batches.
func fill(m *memTarget, rng *rand.Rand, batches, keys int) {
	for b := 0; b < batches; b++ {
		var kvs []string
		for i := 0; i < 1+rng.Intn(4); i++ {
			key, value := fmt.Sprintf("k%d", rng.Intn(keys)), fmt.Sprintf("v%d-%d", b, i)
			switch rng.Intn(10) {
			case 0:
				key = ""
			case 1:
				value = "<nil>"
			}
			kvs = append(kvs, key, value)
		}
		m.add(int64(1000+b), codecs[rng.Intn(len(codecs))], kvs...)
		if rng.Intn(4) == 0 {
			m.roll()
		}
	}
	m.roll()
	m.add(5000, record.None, "k0", "active")
}

// expectCleaned is the model: below activeBase only the latest record of
// each key remains; the active segment is untouched.
func expectCleaned(before []kv, activeBase int64) []kv {
	latest := map[string]int64{}
	for _, r := range before {
		if r.key != "" && r.off < activeBase {
			latest[r.key] = r.off
		}
	}
	var want []kv
	for _, r := range before {
		if r.off >= activeBase || (r.key != "" && latest[r.key] == r.off) {
			want = append(want, r)
		}
	}
	return want
}

func batchRanges(t testing.TB, m *memTarget) map[[2]int64]bool {
	out := map[[2]int64]bool{}
	for _, s := range m.segs {
		hs, _ := decodeAll(t, s.data)
		for _, h := range hs {
			out[[2]int64{h.BaseOffset, h.LastOffset()}] = true
		}
	}
	return out
}

func TestCleanMatchesModel(t *testing.T) {
	for _, tc := range []struct {
		name       string
		memory     int64
		wantRounds int64
	}{{"one round", 1 << 20, 1}, {"small map, many rounds", 24 * 13, 3}} {
		t.Run(tc.name, func(t *testing.T) {
			m := newMemTarget(t)
			fill(m, rand.New(rand.NewSource(1)), 200, 40)
			before := m.records()
			ranges := batchRanges(t, m)
			segs, _ := m.Segments()
			activeBase := segs[len(segs)-1].Base

			c := NewCleaner(Options{DedupeBufferSize: tc.memory, Now: func() time.Time { return time.UnixMilli(10000) }})
			st, err := c.Clean(m, false)
			if err != nil {
				t.Fatal(err)
			}
			want := expectCleaned(before, activeBase)
			if got := m.records(); fmt.Sprint(got) != fmt.Sprint(want) {
				t.Fatalf("after cleaning:\n got %v\nwant %v", got, want)
			}
			if m.checkpoint != activeBase {
				t.Fatalf("checkpoint %d, want the active base %d", m.checkpoint, activeBase)
			}
			if st.Rounds < tc.wantRounds || st.RecordsRemoved != int64(len(before)-len(want)) {
				t.Fatalf("stats %+v: want >= %d rounds and %d removed", st, tc.wantRounds, len(before)-len(want))
			}
			for r := range batchRanges(t, m) {
				if !ranges[r] {
					t.Fatalf("batch %v is not one of the original batches' offset ranges", r)
				}
			}

			again, err := c.Clean(m, false)
			if err != nil || again != (Stats{}) {
				t.Fatalf("second clean did %+v (err %v), want nothing", again, err)
			}
		})
	}
}

func TestTombstonesExpireWithClock(t *testing.T) {
	m := newMemTarget(t)
	m.cfg.DeleteRetentionMs = 1000
	m.add(100, record.Gzip, "a", "1", "b", "2")
	m.add(200, record.Gzip, "a", "<nil>")
	m.roll()
	m.add(300, record.None, "c", "3")
	now := int64(10000)
	c := NewCleaner(Options{Now: func() time.Time { return time.UnixMilli(now) }})
	if _, err := c.Clean(m, false); err != nil {
		t.Fatal(err)
	}
	if got, want := fmt.Sprint(m.records()), fmt.Sprint([]kv{{1, 100, "b", "2"}, {2, 200, "a", "<nil>"}, {3, 300, "c", "3"}}); got != want {
		t.Fatalf("after the first clean: %s, want %s", got, want)
	}
	hs, _ := decodeAll(t, m.segs[0].data)
	if h, ok := hs[len(hs)-1].DeleteHorizon(); !ok || h != 11000 {
		t.Fatalf("tombstone batch horizon %d %v, want 11000", h, ok)
	}

	m.roll() // make the segment of c cleanable so the log is dirty again
	m.add(400, record.None, "d", "4")
	now = 10999
	if _, err := c.Clean(m, true); err != nil {
		t.Fatal(err)
	}
	if len(m.records()) != 4 {
		t.Fatalf("tombstone removed before its horizon: %v", m.records())
	}
	m.roll()
	m.add(500, record.None, "e", "5")
	now = 11000
	if _, err := c.Clean(m, true); err != nil {
		t.Fatal(err)
	}
	if got, want := fmt.Sprint(m.records()), fmt.Sprint([]kv{{1, 100, "b", "2"}, {3, 300, "c", "3"}, {4, 400, "d", "4"}, {5, 500, "e", "5"}}); got != want {
		t.Fatalf("after the horizon: %s, want %s", got, want)
	}
}

func TestMinCompactionLagAndPolicy(t *testing.T) {
	m := newMemTarget(t)
	m.cfg.MinCompactionLagMs = 1000
	m.add(100, record.None, "a", "1")
	m.roll()
	m.add(9500, record.None, "a", "2") // younger than the lag at now=10000
	m.roll()
	m.add(9900, record.None, "b", "3")
	c := NewCleaner(Options{Now: func() time.Time { return time.UnixMilli(10000) }})
	if _, err := c.Clean(m, false); err != nil {
		t.Fatal(err)
	}
	if len(m.records()) != 3 || m.checkpoint != 1 {
		t.Fatalf("young segment cleaned: %v, checkpoint %d", m.records(), m.checkpoint)
	}
	m.cfg.CleanupPolicy = "delete"
	m.cfg.MinCompactionLagMs = 0
	if st, _ := c.Clean(m, true); st != (Stats{}) {
		t.Fatalf("a delete-policy topic was cleaned: %+v", st)
	}
}

func TestGroupsBecomeOneSegmentEach(t *testing.T) {
	m := newMemTarget(t)
	for i := 0; i < 12; i++ {
		m.add(int64(i), record.None, fmt.Sprintf("k%d", i%3), "value-value-value")
		m.roll()
	}
	m.cfg.SegmentBytes = 3 * int64(len(m.segs[0].data))
	c := NewCleaner(Options{})
	if _, err := c.Clean(m, false); err != nil {
		t.Fatal(err)
	}
	if m.replaces != 4 || len(m.segs) != 5 {
		t.Fatalf("%d replaces, %d segments; want 4 groups of 3 and the active one", m.replaces, len(m.segs))
	}
	for i, s := range m.segs[:4] {
		if s.base != int64(3*i) {
			t.Fatalf("segment %d named %d, want %d", i, s.base, 3*i)
		}
	}
}

func TestReplaceConflictAbortsTheCleaning(t *testing.T) {
	m := newMemTarget(t)
	fill(m, rand.New(rand.NewSource(5)), 30, 5)
	before := m.String()
	m.replaceErr = fmt.Errorf("old segments not live: %w", partlog.ErrInvalid)
	_, err := NewCleaner(Options{}).Clean(m, false)
	if !errors.Is(err, ErrConflict) {
		t.Fatalf("err %v, want ErrConflict", err)
	}
	if !m.lastClean.aborted || m.checkpoint != 0 || m.String() != before {
		t.Fatalf("aborted=%v checkpoint=%d, log changed=%v", m.lastClean.aborted, m.checkpoint, m.String() != before)
	}
	m.replaceErr = errors.New("disk on fire")
	if _, err := NewCleaner(Options{}).Clean(m, false); err == nil || errors.Is(err, ErrConflict) {
		t.Fatalf("err %v, want a plain failure", err)
	}
}

func TestMapGrowsWithinARound(t *testing.T) {
	m := newMemTarget(t)
	for b := 0; b < 250; b++ {
		var kvs []string
		for i := 0; i < 100; i++ {
			kvs = append(kvs, fmt.Sprintf("k%d", (b*100+i)%20000), fmt.Sprint(b))
		}
		m.add(int64(b), record.None, kvs...)
		if b%50 == 49 {
			m.roll()
		}
	}
	m.roll()
	before := m.records()
	st, err := NewCleaner(Options{DedupeBufferSize: 1 << 20}).Clean(m, false)
	if err != nil {
		t.Fatal(err)
	}
	if st.MapGrowths != 1 || st.Rounds != 1 {
		t.Fatalf("%d growths, %d rounds; want 1 and 1 (20,000 keys, 16,381 starting slots, 43,669 in all)", st.MapGrowths, st.Rounds)
	}
	if got, want := m.records(), expectCleaned(before, m.end); fmt.Sprint(got) != fmt.Sprint(want) || len(got) != 20000 {
		t.Fatalf("%d records after cleaning, want the 20,000 latest", len(got))
	}
}
