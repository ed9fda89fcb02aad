package position

import (
	"fmt"
	"slices"
	"testing"

	"github.com/sirupsen/logrus"

	"github.com/partfs/partfs/partlog"
	"github.com/partfs/partfs/partlog/memlog"
	"github.com/partfs/partfs/record"
)

// remounted is a log as a later mount sees it: other segment IDs, and a
// count of the records read.
type remounted struct {
	*memlog.Log
	reads int
}

func (r *remounted) Segments() ([]partlog.Segment, func()) {
	segs, release := r.Log.Segments()
	for i := range segs {
		segs[i].ID += 1000
	}
	return segs, release
}

func (r *remounted) Read(seg partlog.Segment, from int64, fn func(*record.Record) bool) error {
	seg.ID -= 1000
	return r.Log.Read(seg, from, func(rec *record.Record) bool {
		r.reads++
		return fn(rec)
	})
}

func filledLog(t *testing.T, batches int) *memlog.Log {
	t.Helper()
	st := memlog.New(memlog.Options{})
	if err := st.CreateTopic("t"); err != nil {
		t.Fatal(err)
	}
	if err := st.SetTopicConfig("t", []partlog.KV{{Key: "segment.bytes", Value: "100000"}}); err != nil {
		t.Fatal(err)
	}
	l, _ := st.Log("t", 0)
	for b := 0; b < batches; b++ {
		recs := make([]record.Record, 100)
		for i := range recs {
			recs[i].Value = []byte(fmt.Sprintf("value-%d-%d", b, i))
		}
		if _, err := l.Append(recs); err != nil {
			t.Fatal(err)
		}
	}
	return l
}

func endOf(t *testing.T, ly *Layout, k Kind) int64 {
	t.Helper()
	defer lockSynced(t, ly)()
	end, err := ly.End(k)
	if err != nil {
		t.Fatal(err)
	}
	return end
}

func TestCleanRemountReadsNoSegmentData(t *testing.T) {
	l := filledLog(t, 100)
	lg := logrus.NewEntry(logrus.New())
	ly := NewLayout(l, lg)
	want := [2]int64{endOf(t, ly, Plain), endOf(t, ly, JSON)}
	if err := ly.Save(); err != nil {
		t.Fatal(err)
	}
	r := &remounted{Log: l}
	ly2 := NewLayout(r, lg)
	got := [2]int64{endOf(t, ly2, Plain), endOf(t, ly2, JSON)}
	if got != want || r.reads != 0 {
		t.Fatalf("remount: ends %v (want %v), %d records read (want 0)", got, want, r.reads)
	}
	// Appending after the remount reads only the new records.
	if _, err := l.Append([]record.Record{{Value: []byte("new")}}); err != nil {
		t.Fatal(err)
	}
	if got := endOf(t, ly2, Plain); got != want[0]+4 || r.reads != 1 {
		t.Fatalf("after append: end %d (want %d), %d reads", got, want[0]+4, r.reads)
	}
	// A position deep inside is found from a checkpoint, not from the start.
	r.reads = 0
	ly2.mu.Lock()
	release, _ := ly2.sync()
	cur, err := ly2.cursorAt(Plain, want[0]-5)
	release()
	ly2.mu.Unlock()
	if err != nil || cur.Off != 9999 || cur.Skip != 7 {
		t.Fatalf("cursorAt: %+v %v", cur, err)
	}
	if r.reads > 10000/4 {
		t.Fatalf("cursorAt read %d records", r.reads)
	}
}

func TestSidecarRoundTripAndGarbage(t *testing.T) {
	segs := []*SegInfo{{base: 5, start: [2]int64{1, 2}, next: 9, size: 77, length: [2]int64{3, 4},
		ckpts: []Ckpt{{Off: 6, pos: [2]int64{1, 2}}}}}
	got, err := decodeSidecar(encodeSidecar(segs))
	if err != nil || len(got) != 1 || got[0].size != 77 || got[0].ckpts[0].Off != 6 || got[0].lastCk != [2]int64{1, 2} {
		t.Fatalf("round trip: %+v %v", got, err)
	}
	b := encodeSidecar(segs)
	for i := range b {
		if _, err := decodeSidecar(b[:i]); err == nil {
			t.Fatalf("truncated sidecar of %d bytes accepted", i)
		}
	}
}

// syncOrder is a log that records whether Sync came before each
// SaveSidecar.
type syncOrder struct {
	*memlog.Log
	synced      bool
	saves, late int
}

func (s *syncOrder) Sync() error { s.synced = true; return s.Log.Sync() }

func (s *syncOrder) SaveSidecar(name string, data []byte) error {
	s.saves++
	if !s.synced {
		s.late++
	}
	s.synced = false
	return s.Log.SaveSidecar(name, data)
}

// TestSaveSyncsFirst: the log is synced before each sidecar save, so
// the durable sidecar never places records a power loss could drop.
func TestSaveSyncsFirst(t *testing.T) {
	l := &syncOrder{Log: filledLog(t, 300)}
	ly := NewLayout(l, logrus.NewEntry(logrus.New()))
	syncLayout(t, ly)
	ly.dirty = true
	if err := ly.Save(); err != nil {
		t.Fatal(err)
	}
	if l.saves != 1 || l.late != 0 {
		t.Fatalf("%d saves, %d of them before a Sync", l.saves, l.late)
	}
}

// sharedSnapshots is a log that hands out its last snapshot again while
// nothing changed, as partlog allows.
type sharedSnapshots struct {
	*memlog.Log
	last []partlog.Segment
}

func (s *sharedSnapshots) Segments() ([]partlog.Segment, func()) {
	segs, release := s.Log.Segments()
	if !slices.Equal(segs, s.last) {
		s.last = segs
	}
	return s.last, release
}

// TestSyncOfTheSameSnapshot: a sync that meets the snapshot it reconciled
// last leaves the bookkeeping as it is; one that meets another snapshot
// merges it by base, keeping each segment's bookkeeping, with positions
// that are those of a layout built afresh.
func TestSyncOfTheSameSnapshot(t *testing.T) {
	l := &sharedSnapshots{Log: filledLog(t, 300)}
	ly := NewLayout(l, logrus.NewEntry(logrus.New()))
	syncLayout(t, ly)
	segs := ly.segs
	if len(segs) < 3 {
		t.Fatalf("%d segments, want several", len(segs))
	}
	syncLayout(t, ly)
	if &ly.segs[0] != &segs[0] {
		t.Error("a sync of the same snapshot rebuilt the bookkeeping")
	}
	if _, err := l.Append([]record.Record{{Value: []byte("more")}}); err != nil {
		t.Fatal(err)
	}
	syncLayout(t, ly)
	if &ly.segs[0] == &segs[0] {
		t.Error("a sync of a new snapshot kept the old bookkeeping")
	}
	for i, s := range segs {
		if ly.segs[i] != s {
			t.Errorf("segment %d: bookkeeping %p replaced by %p", s.base, s, ly.segs[i])
		}
	}
	fresh := NewLayout(l.Log, logrus.NewEntry(logrus.New()))
	for _, k := range []Kind{Plain, JSON} {
		if a, b := endOf(t, ly, k), endOf(t, fresh, k); a != b {
			t.Errorf("%s: end %d, built afresh %d", k, a, b)
		}
	}
}

// lockSynced locks ly and syncs it with its log; done releases both.
func lockSynced(t testing.TB, ly *Layout) (done func()) {
	t.Helper()
	ly.mu.Lock()
	release, err := ly.sync()
	done = func() { release(); ly.mu.Unlock() }
	if err != nil {
		done()
		t.Fatal(err)
	}
	return done
}

func syncLayout(t testing.TB, ly *Layout) { lockSynced(t, ly)() }
