package index

import (
	"encoding/binary"
	"fmt"
)

// OffsetIndex is a segment's .index: sparse (offset, position) entries,
// offsets and positions strictly increasing. Safe for concurrent lookups
// with one appender.
type OffsetIndex struct{ core }

// OpenOffsetIndex opens the .index in f for a segment with base offset
// base. An empty file is preallocated to maxBytes (rounded down to 8) when
// maxBytes > 0; an existing file counts as full of entries (Kafka's rule)
// and is grown to maxBytes if smaller. Pass maxBytes 0 for an inactive
// segment. Check an existing file with SanityCheck before trusting it.
func OpenOffsetIndex(f File, base int64, maxBytes int) (*OffsetIndex, error) {
	x := &OffsetIndex{}
	if err := x.open(f, base, maxBytes, OffsetEntrySize, false); err != nil {
		return nil, err
	}
	return x, nil
}

// OpenOffsetIndexReadOnly opens an index that is never written, resized or
// trimmed (a read-only mount, a dump).
func OpenOffsetIndexReadOnly(f File, base int64) (*OffsetIndex, error) {
	x := &OffsetIndex{}
	if err := x.open(f, base, 0, OffsetEntrySize, true); err != nil {
		return nil, err
	}
	return x, nil
}

// DecodeOffsetEntry decodes an 8-byte .index entry.
func DecodeOffsetEntry(b []byte) (relOffset int32, pos int32) {
	return int32(binary.BigEndian.Uint32(b)), int32(binary.BigEndian.Uint32(b[4:]))
}

// EncodeOffsetEntry appends an 8-byte .index entry to dst.
func EncodeOffsetEntry(dst []byte, relOffset, pos int32) []byte {
	dst = binary.BigEndian.AppendUint32(dst, uint32(relOffset))
	return binary.BigEndian.AppendUint32(dst, uint32(pos))
}

// Append adds an entry for offset (the last offset of an append) at the
// byte position pos of the append's start. Offsets must increase.
func (x *OffsetIndex) Append(offset int64, pos int32) error {
	x.mu.Lock()
	defer x.mu.Unlock()
	if err := x.checkWritable(false, x.maxEntries); err != nil {
		return err
	}
	if x.entries > 0 && offset <= x.lastOffset() {
		return fmt.Errorf("append offset %d to %s after %d: %w", offset, x.f.Name(), x.lastOffset(), ErrInvalidOffset)
	}
	rel, err := x.relative(offset)
	if err != nil {
		return err
	}
	if pos < 0 {
		return fmt.Errorf("append position %d to %s: %w", pos, x.f.Name(), ErrInvalidOffset)
	}
	var buf [OffsetEntrySize]byte
	return x.appendEntry(EncodeOffsetEntry(buf[:0], rel, pos))
}

// lastOffset returns the last entry's offset, or base. REQUIRES: mu held.
func (x *OffsetIndex) lastOffset() int64 {
	if x.entries == 0 {
		return x.base
	}
	rel, _ := DecodeOffsetEntry(x.last)
	return x.base + int64(rel)
}

// LastOffset returns the last entry's offset, or the base offset if empty.
func (x *OffsetIndex) LastOffset() int64 {
	x.mu.RLock()
	defer x.mu.RUnlock()
	return x.lastOffset()
}

// IsFull reports whether no entry can be appended.
func (x *OffsetIndex) IsFull() bool {
	x.mu.RLock()
	defer x.mu.RUnlock()
	return x.entries >= x.maxEntries
}

// key returns entry i's offset. REQUIRES: mu held, loaded.
func (x *OffsetIndex) key(i int) int64 {
	return x.base + int64(int32(binary.BigEndian.Uint32(x.mem[i*OffsetEntrySize:])))
}

// Lookup returns the largest entry with offset <= target, or (base, 0).
func (x *OffsetIndex) Lookup(target int64) (offset int64, pos int32) {
	if !x.ensureLoaded() {
		return x.base, 0 // unreadable: the caller scans from the start
	}
	x.mu.RLock()
	defer x.mu.RUnlock()
	slot := largestLowerBound(x.entries, warmBytes/OffsetEntrySize, target, x.key)
	if slot < 0 {
		return x.base, 0
	}
	rel, p := DecodeOffsetEntry(x.entryAt(slot))
	return x.base + int64(rel), p
}

// Entry returns entry i (0 <= i < Entries()).
func (x *OffsetIndex) Entry(i int) (offset int64, pos int32, err error) {
	if !x.ensureLoaded() {
		return 0, 0, x.LoadErr()
	}
	x.mu.RLock()
	defer x.mu.RUnlock()
	if i < 0 || i >= x.entries {
		return 0, 0, fmt.Errorf("entry %d of %s with %d entries: %w", i, x.f.Name(), x.entries, ErrInvalidOffset)
	}
	rel, p := DecodeOffsetEntry(x.entryAt(i))
	return x.base + int64(rel), p, nil
}

// TruncateTo removes the entries with offset >= offset.
func (x *OffsetIndex) TruncateTo(offset int64) error {
	x.mu.Lock()
	defer x.mu.Unlock()
	if err := x.loadLocked(); err != nil {
		return err
	}
	slot := largestLowerBound(x.entries, warmBytes/OffsetEntrySize, offset, x.key)
	n := slot + 1
	if slot >= 0 && x.key(slot) == offset {
		n = slot
	}
	return x.truncateToEntries(n)
}

// SanityCheck verifies every entry: offsets strictly increasing and not
// below the base, positions strictly increasing and below logSize (the
// .log's size), and a file length that is a whole number of entries.
func (x *OffsetIndex) SanityCheck(logSize int64) error {
	if !x.ensureLoaded() {
		return x.LoadErr()
	}
	x.mu.RLock()
	defer x.mu.RUnlock()
	if err := x.checkLength(); err != nil {
		return err
	}
	prevRel, prevPos := int32(-1), int32(-1)
	for i := 0; i < x.entries; i++ {
		rel, pos := DecodeOffsetEntry(x.entryAt(i))
		if reason := checkOffsetEntry(rel, pos, prevRel, prevPos, logSize); reason != "" {
			return corrupt(x.f.Name(), i, int64(i*OffsetEntrySize), reason)
		}
		prevRel, prevPos = rel, pos
	}
	return nil
}

// checkOffsetEntry validates one entry against its predecessor.
func checkOffsetEntry(rel, pos, prevRel, prevPos int32, logSize int64) string {
	switch {
	case rel < 0:
		return fmt.Sprintf("negative relative offset %d", rel)
	case rel <= prevRel:
		return fmt.Sprintf("relative offset %d not above previous %d", rel, prevRel)
	case pos < 0 || int64(pos) >= logSize:
		return fmt.Sprintf("position %d outside the log of %d bytes", pos, logSize)
	case pos <= prevPos:
		return fmt.Sprintf("position %d not above previous %d", pos, prevPos)
	}
	return ""
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
