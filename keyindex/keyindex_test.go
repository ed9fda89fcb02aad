package keyindex

import (
	"fmt"
	"runtime"
	"sync"
	"testing"

	"github.com/partfs/partfs/partlog"
	"github.com/partfs/partfs/partlog/memlog"
	"github.com/partfs/partfs/record"
)

// countingLog counts the records a Read hands out.
type countingLog struct {
	partlog.Log
	mu   sync.Mutex
	read int
}

func (c *countingLog) Read(seg partlog.Segment, from int64, fn func(*record.Record) bool) error {
	return c.Log.Read(seg, from, func(r *record.Record) bool {
		c.mu.Lock()
		c.read++
		c.mu.Unlock()
		return fn(r)
	})
}

func (c *countingLog) reads() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	n := c.read
	c.read = 0
	return n
}

func newLog(t testing.TB) *memlog.Log {
	t.Helper()
	s := memlog.New(memlog.Options{})
	if err := s.CreateTopic("t"); err != nil {
		t.Fatal(err)
	}
	l, err := s.Log("t", 0)
	if err != nil {
		t.Fatal(err)
	}
	return l
}

func put(t testing.TB, l partlog.Log, kv ...string) {
	t.Helper()
	var recs []record.Record
	for i := 0; i+1 < len(kv); i += 2 {
		r := record.Record{Key: []byte(kv[i])}
		if kv[i+1] != "<nil>" {
			r.Value = []byte(kv[i+1])
		}
		recs = append(recs, r)
	}
	if _, err := l.Append(recs); err != nil {
		t.Fatal(err)
	}
}

func expect(t *testing.T, x *Index, key, want string, wantOffset int64) {
	t.Helper()
	rec, ok, err := x.Latest([]byte(key))
	if err != nil {
		t.Fatalf("Latest(%s): %v", key, err)
	}
	if want == "" {
		if ok {
			t.Fatalf("Latest(%s) = %q at %d, want none", key, rec.Value, rec.Offset)
		}
		return
	}
	if !ok || string(rec.Value) != want || rec.Offset != wantOffset || string(rec.Key) != key {
		t.Fatalf("Latest(%s) = %q at %d (ok=%v), want %q at %d", key, rec.Value, rec.Offset, ok, want, wantOffset)
	}
}

func TestLatestFollowsAppends(t *testing.T) {
	ml := newLog(t)
	l := &countingLog{Log: ml}
	put(t, l, "k1", "v1", "k2", "v2")
	ml.Roll()
	put(t, l, "k1", "v3")
	x := New(l)
	expect(t, x, "k1", "v3", 2)
	if n := l.reads(); n != 3+1 { // build scan + the lookup's read
		t.Fatalf("first lookup read %d records, want 4", n)
	}
	expect(t, x, "k2", "v2", 1)
	expect(t, x, "nope", "", 0)
	if n := l.reads(); n != 1 {
		t.Fatalf("lookups without appends read %d records, want 1", n)
	}
	put(t, l, "k2", "v4", "k3", "v5")
	expect(t, x, "k2", "v4", 3)
	if n := l.reads(); n != 2+1 {
		t.Fatalf("catch-up read %d records, want only the 2 new ones + 1", n)
	}
	expect(t, x, "k3", "v5", 4)
}

func TestTombstoneAndNullKeys(t *testing.T) {
	l := newLog(t)
	put(t, l, "k1", "v1", "k2", "v2")
	if _, err := l.Append([]record.Record{{Value: []byte("no key")}}); err != nil {
		t.Fatal(err)
	}
	x := New(l)
	expect(t, x, "k1", "v1", 0)
	put(t, l, "k1", "<nil>")
	expect(t, x, "k1", "", 0)
	put(t, l, "k1", "again")
	expect(t, x, "k1", "again", 4)
	if rec, ok, err := x.Latest(nil); ok || err != nil || rec.Value != nil {
		t.Fatal("nil key found")
	}
	if n, _ := x.Len(); n != 2 {
		t.Fatalf("Len = %d, want 2 (null keys not indexed)", n)
	}
}

func TestCompactionAndRetention(t *testing.T) {
	l := newLog(t)
	put(t, l, "a", "1", "b", "2", "c", "3")
	l.Roll()
	put(t, l, "a", "4", "c", "<nil>")
	l.Roll()
	put(t, l, "d", "5")
	x := New(l)
	expect(t, x, "a", "4", 3)
	l.CompactSealed(true) // tombstone of c removed, old a and c removed
	expect(t, x, "a", "4", 3)
	expect(t, x, "b", "2", 1)
	expect(t, x, "c", "", 0)
	expect(t, x, "d", "5", 5)
	if n, _ := x.Len(); n != 3 {
		t.Fatalf("Len after the gone tombstone's lookup = %d, want 3", n)
	}
	l.Roll()
	put(t, l, "e", "6")
	l.DeleteOldest(2) // the compacted segment and d's segment
	if n, _ := x.Len(); n != 1 {
		t.Fatalf("Len after retention = %d, want 1 (only e)", n)
	}
	expect(t, x, "a", "", 0)
	expect(t, x, "d", "", 0)
	expect(t, x, "e", "6", 6)
}

func TestHashCollisionsNeverReturnAnotherKey(t *testing.T) {
	l := newLog(t)
	x := New(l)
	x.hash = func([]byte) uint64 { return 7 } // every key collides
	put(t, l, "a", "1", "b", "2", "a", "3")
	expect(t, x, "a", "3", 2)
	expect(t, x, "b", "2", 1)
	expect(t, x, "c", "", 0)
	put(t, l, "b", "<nil>")
	expect(t, x, "b", "", 0)
	expect(t, x, "a", "3", 2)
}

func TestConcurrentLookupsAndAppends(t *testing.T) {
	l := newLog(t)
	x := New(l)
	var wg sync.WaitGroup
	wg.Add(2)
	go func() {
		defer wg.Done()
		for i := 0; i < 500; i++ {
			put(t, l, fmt.Sprintf("k%d", i%10), fmt.Sprint(i))
		}
	}()
	go func() {
		defer wg.Done()
		for i := 0; i < 500; i++ {
			if _, _, err := x.Latest([]byte(fmt.Sprintf("k%d", i%10))); err != nil {
				t.Error(err)
				return
			}
		}
	}()
	wg.Wait()
	for k := 0; k < 10; k++ {
		expect(t, x, fmt.Sprintf("k%d", k), fmt.Sprint(490+k), int64(490+k))
	}
}

// TestMemoryPerKey measures the heap the index takes per distinct key.
func TestMemoryPerKey(t *testing.T) {
	const keys = 200000
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	x := New(newLog(t))
	for i := 0; i < keys; i++ {
		x.latest[uint64(i)*0x9E3779B97F4A7C15] = int64(i)
	}
	runtime.GC()
	runtime.ReadMemStats(&after)
	per := float64(after.HeapAlloc-before.HeapAlloc) / keys
	t.Logf("keyindex memory: %.1f bytes per key at %d keys", per, keys)
	if per > 48 {
		t.Fatalf("%.1f bytes per key, want <= 48", per)
	}
	runtime.KeepAlive(x)
}
