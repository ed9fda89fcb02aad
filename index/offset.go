package index

import "fmt"

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
	return openAs[OffsetIndex](f, base, maxBytes, OffsetEntrySize, false)
}

// OpenOffsetIndexReadOnly opens an index that is never written, resized or
// trimmed (a read-only mount, a dump).
func OpenOffsetIndexReadOnly(f File, base int64) (*OffsetIndex, error) {
	return openAs[OffsetIndex](f, base, 0, OffsetEntrySize, true)
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
func (x *OffsetIndex) IsFull() bool { return x.isFull(0) }

// Lookup returns the largest entry with offset <= target, or (base, 0).
func (x *OffsetIndex) Lookup(target int64) (offset int64, pos int32) {
	sp := x.Span(target)
	return sp.Offset, sp.Pos
}

// OffsetSpan is an offset index entry and the one after it: the batch
// holding a target past Offset starts after Pos, at NextPos or before
// it. NextPos is -1 (NextOffset meaningless) when there is no next entry.
type OffsetSpan struct {
	Offset, NextOffset int64
	Pos, NextPos       int32
}

// Span is Lookup with the entry after the one found.
func (x *OffsetIndex) Span(target int64) OffsetSpan { return x.SpanNear(target, -1) }

// SpanNear is Span trying the entry at slot first, which is the answer
// without a search when its offset is the largest <= target (a time
// index entry's slot, the offset index entry written with it having the
// same slot while timestamps grow).
func (x *OffsetIndex) SpanNear(target int64, slot int) OffsetSpan {
	sp := OffsetSpan{Offset: x.base, NextPos: -1}
	x.lookupNear(target, offsetKey, slot, func(slot int) {
		rel, p := DecodeOffsetEntry(x.entryAt(slot))
		sp.Offset, sp.Pos = x.base+int64(rel), p
		if slot+1 < x.entries {
			rel, sp.NextPos = DecodeOffsetEntry(x.entryAt(slot + 1))
			sp.NextOffset = x.base + int64(rel)
		}
	})
	return sp
}

// Entry returns entry i (0 <= i < Entries()).
func (x *OffsetIndex) Entry(i int) (offset int64, pos int32, err error) {
	err = x.entry(i, func(b []byte) {
		rel, p := DecodeOffsetEntry(b)
		offset, pos = x.base+int64(rel), p
	})
	return offset, pos, err
}

// TruncateTo removes the entries with offset >= offset.
func (x *OffsetIndex) TruncateTo(offset int64) error { return x.truncateAt(offset, offsetKey) }

// SanityCheck verifies every entry: offsets strictly increasing and not
// below the base, positions strictly increasing and below logSize (the
// .log's size), and a file length that is a whole number of entries.
func (x *OffsetIndex) SanityCheck(logSize int64) error {
	prevRel, prevPos := int32(-1), int32(-1)
	return x.sanityCheck(func(b []byte) string {
		rel, pos := DecodeOffsetEntry(b)
		reason := checkOffsetEntry(rel, pos, prevRel, prevPos, logSize)
		prevRel, prevPos = rel, pos
		return reason
	})
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
