package index

import "encoding/binary"

// keyField is where an entry's search key lies: the big-endian field at
// byte at of each entry, a timestamp of 8 bytes when wide, else an offset
// of 4 bytes relative to the base offset. Searches read it in place,
// with no call per probe.
type keyField struct {
	at   int
	wide bool
}

var (
	offsetKey     = keyField{}                      // a .index entry's offset
	timeKey       = keyField{wide: true}            // a .timeindex entry's timestamp
	timeOffsetKey = keyField{at: TimeEntrySize - 4} // a .timeindex entry's offset
)

// keyAt returns entry i's key f. REQUIRES: mu held, loaded.
func (c *core) keyAt(i int, f keyField) int64 {
	b := c.mem[i*c.entrySize+f.at:]
	if f.wide {
		return int64(binary.BigEndian.Uint64(b))
	}
	return c.base + int64(int32(binary.BigEndian.Uint32(b)))
}

// largestLowerBound returns the slot of the largest entry whose key f is
// <= target, or -1, key f being nondecreasing in the slot. Like Kafka's
// largestLowerBoundSlotFor it first searches the warm last entries (those
// of the last warmBytes) when the target is past the first of them.
// REQUIRES: mu held, loaded.
func (c *core) largestLowerBound(target int64, f keyField) int {
	n := c.entries
	if n == 0 {
		return -1
	}
	firstHot := max(0, n-1-warmBytes/c.entrySize)
	if c.keyAt(firstHot, f) < target {
		return c.binarySearch(firstHot, n-1, target, f)
	}
	if c.keyAt(0, f) > target {
		return -1
	}
	return c.binarySearch(0, firstHot, target, f)
}

// isFloor reports whether slot holds the largest key f <= target (keys
// increasing). REQUIRES: mu held, loaded.
func (c *core) isFloor(slot int, target int64, f keyField) bool {
	return slot >= 0 && slot < c.entries && c.keyAt(slot, f) <= target &&
		(slot+1 == c.entries || c.keyAt(slot+1, f) > target)
}

// binarySearch finds the largest slot in [lo, hi] with key f <= target,
// given that of lo is. REQUIRES: mu held, loaded.
func (c *core) binarySearch(lo, hi int, target int64, f keyField) int {
	for lo < hi {
		mid := int(uint(lo+hi+1) >> 1)
		if c.keyAt(mid, f) <= target {
			lo = mid
		} else {
			hi = mid - 1
		}
	}
	return lo
}
