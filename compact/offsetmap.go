package compact

import (
	"fmt"
	"hash/maphash"
	"math/bits"
)

// SlotBytes is the memory of one offset map slot: a 128-bit key hash and an
// 8-byte offset, as in Kafka's SkimpyOffsetMap.
const SlotBytes = 24

// slot is one map entry; off holds offset+1 so that a zero slot is empty.
type slot struct {
	h1, h2 uint64
	off    int64
}

// startSlots is the size a map starts at (384 KiB of slots): small key
// sets stay in the CPU caches.
const startSlots = 1 << 14

// OffsetMap maps keys (by a 128-bit hash) to the latest offset seen for
// them, in fixed memory. Its slots are allocated once; only a prefix is in
// use, starting at startSlots and grown by Grow (which empties the map) up
// to all of them, so the memory touched follows the number of keys. It is
// not safe for concurrent use.
type OffsetMap struct {
	slots      []slot  // all the map's memory; slots[:n] are in use
	n          uint64  // slots in use, a prime so that every probe step cycles through them
	limit      int     // fill limit: n × load factor
	loadFactor float64 // log.cleaner.io.buffer.load.factor
	entries    int
	latest     int64
	seed1      maphash.Seed
	seed2      maphash.Seed
	sink       int64 // keeps touch's loads from being optimized away
}

// NewOffsetMap allocates a map of memory bytes (rounded down to a prime
// number of 24-byte slots) that accepts new keys up to loadFactor of the
// slots in use.
func NewOffsetMap(memory int64, loadFactor float64) (*OffsetMap, error) {
	if loadFactor <= 0 || loadFactor > 1 {
		return nil, fmt.Errorf("offset map: load factor %v not in (0,1]", loadFactor)
	}
	n := largestPrimeAtMost(uint64(memory / SlotBytes))
	if n < 2 {
		return nil, fmt.Errorf("offset map: %d bytes is less than two %d-byte slots", memory, SlotBytes)
	}
	m := &OffsetMap{slots: make([]slot, n), loadFactor: loadFactor, seed1: maphash.MakeSeed(), seed2: maphash.MakeSeed()}
	m.use(m.startSize())
	m.latest = -1
	return m, nil
}

func (m *OffsetMap) startSize() uint64 {
	if c := uint64(len(m.slots)); c <= startSlots {
		return c
	}
	return largestPrimeAtMost(startSlots)
}

// use makes n slots the map's size.
func (m *OffsetMap) use(n uint64) {
	m.n = n
	m.limit = max(1, int(float64(n)*m.loadFactor))
}

// Slots returns the number of slots in use.
func (m *OffsetMap) Slots() int { return int(m.n) }

// Capacity returns the number of slots the map's memory holds.
func (m *OffsetMap) Capacity() int { return len(m.slots) }

// Limit is the number of distinct keys the map accepts at its current
// size before it is full.
func (m *OffsetMap) Limit() int { return m.limit }

// Len returns the number of distinct keys in the map.
func (m *OffsetMap) Len() int { return m.entries }

// Full reports whether no new key can be added at the current size.
func (m *OffsetMap) Full() bool { return m.entries >= m.limit }

// LatestOffset is the offset of the last Put, -1 after Clear.
func (m *OffsetMap) LatestOffset() int64 { return m.latest }

// MemoryBytes is the fixed memory the slots take.
func (m *OffsetMap) MemoryBytes() int64 { return int64(len(m.slots)) * SlotBytes }

// UsedBytes is the memory of the slots in use.
func (m *OffsetMap) UsedBytes() int64 { return int64(m.n) * SlotBytes }

// Clear empties the map and returns it to its starting size, keeping its
// memory.
func (m *OffsetMap) Clear() {
	if m.entries > 0 {
		clear(m.slots[:m.n])
	}
	m.use(m.startSize())
	m.entries = 0
	m.latest = -1
}

// Grow empties the map and makes it four times larger (all of its memory
// once that is within another factor of four). It returns false, changing
// nothing, when the map already uses all of its memory.
func (m *OffsetMap) Grow() bool {
	c := uint64(len(m.slots))
	if m.n == c {
		return false
	}
	clear(m.slots[:m.n])
	next := 4 * m.n
	if 4*next > c {
		next = c
	}
	m.use(largestPrimeAtMost(next))
	m.entries = 0
	m.latest = -1
	return true
}

// Put records offset as the latest for key. It returns false, changing
// nothing, when key is new and the map is full.
func (m *OffsetMap) Put(key []byte, offset int64) bool {
	return m.put(m.hash(key), offset)
}

// Get returns the latest offset put for key, or -1.
func (m *OffsetMap) Get(key []byte) int64 {
	return m.get(m.hash(key))
}

// keyHash is a key's 128-bit hash in this map.
type keyHash struct{ h1, h2 uint64 }

func (m *OffsetMap) hash(key []byte) keyHash {
	return keyHash{maphash.Bytes(m.seed1, key), maphash.Bytes(m.seed2, key)}
}

// touch loads the first slot of each hash so that the cache misses of a
// batch of keys overlap instead of coming one after another; callers then
// put or get the same hashes.
func (m *OffsetMap) touch(hs []keyHash) {
	var sum int64
	for _, h := range hs {
		i, _ := m.start(h.h1, h.h2)
		sum += m.slots[i].off
	}
	m.sink += sum
}

func (m *OffsetMap) put(h keyHash, offset int64) bool {
	h1, h2 := h.h1, h.h2
	i, step := m.start(h1, h2)
	for {
		s := &m.slots[i]
		if s.off == 0 {
			if m.entries >= m.limit {
				return false
			}
			*s = slot{h1: h1, h2: h2, off: offset + 1}
			m.entries++
			m.latest = offset
			return true
		}
		if s.h1 == h1 && s.h2 == h2 {
			s.off = offset + 1
			m.latest = offset
			return true
		}
		i = m.next(i, step)
	}
}

func (m *OffsetMap) get(h keyHash) int64 {
	h1, h2 := h.h1, h.h2
	i, step := m.start(h1, h2)
	for probes := uint64(0); probes < m.n; probes++ {
		s := &m.slots[i]
		if s.off == 0 {
			return -1
		}
		if s.h1 == h1 && s.h2 == h2 {
			return s.off - 1
		}
		i = m.next(i, step)
	}
	return -1
}

// start returns the first probe slot and the double-hashing step
// (1..n-1, so with a prime n the probe sequence visits every slot).
func (m *OffsetMap) start(h1, h2 uint64) (uint64, uint64) {
	i, _ := bits.Mul64(h1, m.n)
	step, _ := bits.Mul64(h2, m.n-1)
	return i, step + 1
}

func (m *OffsetMap) next(i, step uint64) uint64 {
	i += step
	if i >= m.n {
		i -= m.n
	}
	return i
}

// largestPrimeAtMost returns the largest prime <= n, or 0 when n < 2.
func largestPrimeAtMost(n uint64) uint64 {
	for ; n >= 2; n-- {
		if isPrime(n) {
			return n
		}
	}
	return 0
}

func isPrime(n uint64) bool {
	if n < 4 {
		return n >= 2
	}
	if n%2 == 0 {
		return false
	}
	for d := uint64(3); d*d <= n; d += 2 {
		if n%d == 0 {
			return false
		}
	}
	return true
}
