package compact

import (
	"fmt"
	"testing"
	"unsafe"
)

func TestSlotIs24Bytes(t *testing.T) {
	if got := unsafe.Sizeof(slot{}); got != SlotBytes {
		t.Fatalf("slot size = %d, want %d", got, SlotBytes)
	}
}

func TestOffsetMapPutGet(t *testing.T) {
	m, err := NewOffsetMap(24*1000, 0.9)
	if err != nil {
		t.Fatal(err)
	}
	if m.Slots() != 997 || m.Limit() != 897 {
		t.Fatalf("slots=%d limit=%d, want 997 and 897", m.Slots(), m.Limit())
	}
	for i := 0; i < 500; i++ {
		if !m.Put(fmt.Appendf(nil, "k%d", i%300), int64(i)) {
			t.Fatalf("put %d failed", i)
		}
	}
	if m.Len() != 300 || m.LatestOffset() != 499 {
		t.Fatalf("len=%d latest=%d", m.Len(), m.LatestOffset())
	}
	for k := 0; k < 300; k++ {
		want := int64(k)
		if k < 200 {
			want = int64(k + 300)
		}
		if got := m.Get(fmt.Appendf(nil, "k%d", k)); got != want {
			t.Fatalf("Get(k%d) = %d, want %d", k, got, want)
		}
	}
	if got := m.Get([]byte("absent")); got != -1 {
		t.Fatalf("Get(absent) = %d", got)
	}
	if got := m.Get(nil); got != -1 {
		t.Fatalf("Get(nil) = %d", got)
	}
	m.Clear()
	if m.Len() != 0 || m.LatestOffset() != -1 || m.Get([]byte("k1")) != -1 {
		t.Fatal("Clear left entries")
	}
}

func TestOffsetMapFull(t *testing.T) {
	m, err := NewOffsetMap(24*11, 0.9) // 11 slots, limit 9
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 9; i++ {
		if !m.Put(fmt.Appendf(nil, "k%d", i), int64(i)) {
			t.Fatalf("put %d failed before full", i)
		}
	}
	if !m.Full() {
		t.Fatal("not full at limit")
	}
	if m.Put([]byte("new"), 100) {
		t.Fatal("put of a new key into a full map succeeded")
	}
	if m.LatestOffset() != 8 {
		t.Fatalf("failed put moved latest to %d", m.LatestOffset())
	}
	if !m.Put([]byte("k3"), 101) || m.Get([]byte("k3")) != 101 {
		t.Fatal("update of an existing key in a full map failed")
	}
	for i := 0; i < 9; i++ {
		if i != 3 && m.Get(fmt.Appendf(nil, "k%d", i)) != int64(i) {
			t.Fatalf("k%d lost", i)
		}
	}
}

func TestOffsetMapGrows(t *testing.T) {
	m, err := NewOffsetMap(24*1_000_003, 0.9)
	if err != nil {
		t.Fatal(err)
	}
	if m.Slots() != 16381 || m.Capacity() != 1_000_003 || m.UsedBytes() != 24*16381 {
		t.Fatalf("starts with %d of %d slots", m.Slots(), m.Capacity())
	}
	for want := []int{65521, 1_000_003}; ; want = want[1:] {
		for i := 0; !m.Full(); i++ {
			m.Put(fmt.Appendf(nil, "k%d", i), int64(i))
		}
		if !m.Grow() {
			break
		}
		if m.Len() != 0 || m.LatestOffset() != -1 || m.Get([]byte("k1")) != -1 {
			t.Fatal("Grow kept entries")
		}
		if m.Slots() != want[0] {
			t.Fatalf("grew to %d slots, want %d", m.Slots(), want[0])
		}
	}
	if m.Len() != 900002 || m.Get([]byte("k900001")) != 900001 {
		t.Fatalf("full map holds %d keys", m.Len())
	}
	m.Clear()
	if m.Slots() != 16381 || m.Get([]byte("k5")) != -1 {
		t.Fatal("Clear did not return to the starting size")
	}
}

func TestOffsetMapBadSizes(t *testing.T) {
	if _, err := NewOffsetMap(30, 0.9); err == nil {
		t.Fatal("one slot accepted")
	}
	if _, err := NewOffsetMap(1<<20, 0); err == nil {
		t.Fatal("load factor 0 accepted")
	}
	if _, err := NewOffsetMap(1<<20, 1.5); err == nil {
		t.Fatal("load factor 1.5 accepted")
	}
}

func TestLargestPrime(t *testing.T) {
	for n, want := range map[uint64]uint64{0: 0, 1: 0, 2: 2, 3: 3, 4: 3, 100: 97, 5592405: 5592373} {
		if got := largestPrimeAtMost(n); got != want {
			t.Errorf("largestPrimeAtMost(%d) = %d, want %d", n, got, want)
		}
	}
}

func BenchmarkOffsetMapPut(b *testing.B) {
	m, _ := NewOffsetMap(128<<20, 0.9)
	keys := make([][]byte, 100000)
	for i := range keys {
		keys[i] = fmt.Appendf(nil, "key-%08d", i)
	}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		m.Put(keys[i%len(keys)], int64(i))
	}
}
