package index

import (
	"bytes"
	"fmt"
)

// Settle makes x's file hold exactly the entries of built, an index of the
// same segment rebuilt elsewhere (in memory, from the segment's batches),
// and nothing after them: a trimmed index. A file that already holds them
// (same length, same bytes) is not written; otherwise the entries are
// written over it and the file cut to their length. It reports whether it
// wrote; the caller syncs a written file when it needs it durable.
func (x *OffsetIndex) Settle(built *OffsetIndex) (wrote bool, err error) {
	return x.settle(&built.core)
}

// Settle is OffsetIndex.Settle for a time index.
func (x *TimeIndex) Settle(built *TimeIndex) (wrote bool, err error) {
	return x.settle(&built.core)
}

// settle implements Settle.
func (c *core) settle(built *core) (bool, error) {
	built.mu.Lock()
	err := built.loadLocked()
	want := built.mem
	built.mu.Unlock()
	if err != nil {
		return false, err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.readOnly {
		return false, fmt.Errorf("settle %s: %w", c.f.Name(), ErrReadOnly)
	}
	if c.fileSize == int64(len(want)) && c.loadLocked() == nil && bytes.Equal(c.mem, want) {
		c.maxEntries = c.entries
		return false, nil
	}
	if len(want) > 0 {
		if _, err := c.f.WriteAt(want, 0); err != nil {
			return true, fmt.Errorf("write index %s: %w", c.f.Name(), err)
		}
	}
	if c.fileSize > int64(len(want)) {
		if err := c.truncateFile(int64(len(want))); err != nil {
			return true, err
		}
	}
	c.fileSize = int64(len(want))
	c.entries, c.maxEntries = len(want)/c.entrySize, len(want)/c.entrySize
	c.mem, c.loadErr = append([]byte(nil), want...), nil
	c.loaded.Store(true)
	clear(c.last)
	if c.entries > 0 {
		copy(c.last, c.entryAt(c.entries-1))
	}
	return true, nil
}
