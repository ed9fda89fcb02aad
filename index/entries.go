package index

import "fmt"

// The reads and checks both index kinds make of their entries; each kind
// supplies its key (offset or timestamp of entry i) and its decoding.

// openAs opens f as an index of kind T (OffsetIndex or TimeIndex) with
// entries of entrySize bytes.
func openAs[T any, P interface {
	*T
	open(f File, base int64, maxBytes, entrySize int, readOnly bool) error
}](f File, base int64, maxBytes, entrySize int, readOnly bool) (*T, error) {
	x := P(new(T))
	if err := x.open(f, base, maxBytes, entrySize, readOnly); err != nil {
		return nil, err
	}
	return x, nil
}

// lookup finds the largest entry whose key is <= target and hands its slot
// to at with mu held; false (at not called) when the entries cannot be
// read, so the caller scans from the segment start, or no entry is <=
// target.
func (c *core) lookup(target int64, key keyField, at func(slot int)) bool {
	return c.lookupNear(target, key, -1, at)
}

// lookupNear is lookup trying slot hint first: when it holds the largest
// key <= target (keys increasing), there is no search.
func (c *core) lookupNear(target int64, key keyField, hint int, at func(slot int)) bool {
	if !c.ensureLoaded() {
		return false
	}
	c.mu.RLock()
	defer c.mu.RUnlock()
	slot := hint
	if !c.isFloor(hint, target, key) {
		slot = c.largestLowerBound(target, key)
	}
	if slot < 0 {
		return false
	}
	at(slot)
	return true
}

// counts returns the number of entries and the capacity, read together.
func (c *core) counts() (entries, maxEntries int) {
	c.mu.RLock()
	defer c.mu.RUnlock()
	return c.entries, c.maxEntries
}

// isFull reports whether the entries fill all but reserved slots.
func (c *core) isFull(reserved int) bool {
	n, capacity := c.counts()
	return n >= capacity-reserved
}

// entry hands the bytes of entry i to at with mu held, or says why there
// is no entry i.
func (c *core) entry(i int, at func(b []byte)) error {
	if !c.ensureLoaded() {
		return c.LoadErr()
	}
	c.mu.RLock()
	defer c.mu.RUnlock()
	if i < 0 || i >= c.entries {
		return fmt.Errorf("entry %d of %s with %d entries: %w", i, c.f.Name(), c.entries, ErrInvalidOffset)
	}
	at(c.entryAt(i))
	return nil
}

// truncateAt removes the entries whose offset (key field key,
// nondecreasing in the slot) is >= offset.
func (c *core) truncateAt(offset int64, key keyField) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if err := c.loadLocked(); err != nil {
		return err
	}
	slot := c.largestLowerBound(offset, key)
	n := slot + 1
	if slot >= 0 && c.keyAt(slot, key) == offset {
		// Offsets may repeat: drop every entry at offset.
		for n = slot; n > 0 && c.keyAt(n-1, key) == offset; n-- {
		}
	}
	return c.truncateToEntries(n)
}

// sanityCheck verifies the file length and hands each entry in turn to
// check, which says what is wrong with it ("" for nothing); the first
// complaint is a corruption error at that entry.
func (c *core) sanityCheck(check func(b []byte) string) error {
	if !c.ensureLoaded() {
		return c.LoadErr()
	}
	c.mu.RLock()
	defer c.mu.RUnlock()
	if err := c.checkLength(); err != nil {
		return err
	}
	for i := 0; i < c.entries; i++ {
		if reason := check(c.entryAt(i)); reason != "" {
			return corrupt(c.f.Name(), i, int64(i*c.entrySize), reason)
		}
	}
	return nil
}

// checkLength verifies the file length is whole entries. REQUIRES: mu held.
func (c *core) checkLength() error {
	fi, err := c.f.Stat()
	if err != nil {
		return fmt.Errorf("stat index %s: %w", c.f.Name(), err)
	}
	if fi.Size()%int64(c.entrySize) != 0 {
		return corrupt(c.f.Name(), c.entries, fi.Size(), fmt.Sprintf("file size %d is not a multiple of %d", fi.Size(), c.entrySize))
	}
	return nil
}
