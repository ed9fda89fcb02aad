package index

import (
	"encoding/binary"
	"fmt"
)

// TimeIndex is a segment's .timeindex: sparse (timestamp, offset) entries,
// timestamps strictly increasing, offsets nondecreasing. It counts as full
// one entry early, keeping a slot for the entry written on roll and close.
type TimeIndex struct{ core }

// OpenTimeIndex opens the .timeindex in f; maxBytes as for OpenOffsetIndex
// (rounded down to 12: 10 MiB gives 10 485 756 bytes).
func OpenTimeIndex(f File, base int64, maxBytes int) (*TimeIndex, error) {
	x := &TimeIndex{}
	if err := x.open(f, base, maxBytes, TimeEntrySize, false); err != nil {
		return nil, err
	}
	return x, nil
}

// OpenTimeIndexReadOnly opens a time index that is never changed.
func OpenTimeIndexReadOnly(f File, base int64) (*TimeIndex, error) {
	x := &TimeIndex{}
	if err := x.open(f, base, 0, TimeEntrySize, true); err != nil {
		return nil, err
	}
	return x, nil
}

// DecodeTimeEntry decodes a 12-byte .timeindex entry.
func DecodeTimeEntry(b []byte) (timestamp int64, relOffset int32) {
	return int64(binary.BigEndian.Uint64(b)), int32(binary.BigEndian.Uint32(b[8:]))
}

// EncodeTimeEntry appends a 12-byte .timeindex entry to dst.
func EncodeTimeEntry(dst []byte, timestamp int64, relOffset int32) []byte {
	dst = binary.BigEndian.AppendUint64(dst, uint64(timestamp))
	return binary.BigEndian.AppendUint32(dst, uint32(relOffset))
}

// lastEntry returns the last entry or (-1, base). REQUIRES: mu held.
func (x *TimeIndex) lastEntry() (int64, int64) {
	if x.entries == 0 {
		return -1, x.base
	}
	ts, rel := DecodeTimeEntry(x.last)
	return ts, x.base + int64(rel)
}

// LastEntry returns the last entry, or (-1, base offset) if empty.
func (x *TimeIndex) LastEntry() (timestamp, offset int64) {
	x.mu.RLock()
	defer x.mu.RUnlock()
	return x.lastEntry()
}

// IsFull reports whether the index holds maxEntries-1 entries (the last
// slot is kept for the roll/close entry).
func (x *TimeIndex) IsFull() bool {
	x.mu.RLock()
	defer x.mu.RUnlock()
	return x.entries >= x.maxEntries-1
}

// MaybeAppend adds (timestamp, offset) if timestamp is larger than the
// last entry's (Kafka's TimeIndex.maybeAppend): an offset below the last
// entry's or a smaller timestamp is an error, an equal timestamp is
// ignored. skipFullCheck allows the reserved last slot (roll, close).
func (x *TimeIndex) MaybeAppend(timestamp, offset int64, skipFullCheck bool) error {
	x.mu.Lock()
	defer x.mu.Unlock()
	if x.readOnly {
		return fmt.Errorf("append to %s: %w", x.f.Name(), ErrReadOnly)
	}
	if !skipFullCheck && x.entries >= x.maxEntries-1 {
		return fmt.Errorf("append to %s with %d entries: %w", x.f.Name(), x.entries, ErrFull)
	}
	lastTs, lastOff := x.lastEntry()
	if x.entries > 0 && offset < lastOff {
		return fmt.Errorf("time index %s: offset %d below last entry's %d: %w", x.f.Name(), offset, lastOff, ErrInvalidOffset)
	}
	if x.entries > 0 && timestamp < lastTs {
		return fmt.Errorf("time index %s: timestamp %d below last entry's %d: %w", x.f.Name(), timestamp, lastTs, ErrInvalidOffset)
	}
	if timestamp <= lastTs {
		return nil
	}
	if err := x.checkWritable(true, 0); err != nil {
		return err
	}
	rel, err := x.relative(offset)
	if err != nil {
		return err
	}
	var buf [TimeEntrySize]byte
	return x.appendEntry(EncodeTimeEntry(buf[:0], timestamp, rel))
}

// tsKey returns entry i's timestamp. REQUIRES: mu held, loaded.
func (x *TimeIndex) tsKey(i int) int64 {
	return int64(binary.BigEndian.Uint64(x.mem[i*TimeEntrySize:]))
}

// offKey returns entry i's offset. REQUIRES: mu held, loaded.
func (x *TimeIndex) offKey(i int) int64 {
	return x.base + int64(int32(binary.BigEndian.Uint32(x.mem[i*TimeEntrySize+8:])))
}

// Lookup returns the largest entry with timestamp <= target, or
// (-1, base offset) if none.
func (x *TimeIndex) Lookup(target int64) (timestamp, offset int64) {
	if !x.ensureLoaded() {
		return -1, x.base // unreadable: the caller scans from the start
	}
	x.mu.RLock()
	defer x.mu.RUnlock()
	slot := largestLowerBound(x.entries, warmBytes/TimeEntrySize, target, x.tsKey)
	if slot < 0 {
		return -1, x.base
	}
	return x.tsKey(slot), x.offKey(slot)
}

// Entry returns entry i (0 <= i < Entries()).
func (x *TimeIndex) Entry(i int) (timestamp, offset int64, err error) {
	if !x.ensureLoaded() {
		return 0, 0, x.LoadErr()
	}
	x.mu.RLock()
	defer x.mu.RUnlock()
	if i < 0 || i >= x.entries {
		return 0, 0, fmt.Errorf("entry %d of %s with %d entries: %w", i, x.f.Name(), x.entries, ErrInvalidOffset)
	}
	return x.tsKey(i), x.offKey(i), nil
}

// TruncateTo removes the entries with offset >= offset.
func (x *TimeIndex) TruncateTo(offset int64) error {
	x.mu.Lock()
	defer x.mu.Unlock()
	if err := x.loadLocked(); err != nil {
		return err
	}
	slot := largestLowerBound(x.entries, warmBytes/TimeEntrySize, offset, x.offKey)
	n := slot + 1
	if slot >= 0 && x.offKey(slot) == offset {
		// Offsets may repeat: drop every entry at offset.
		for n = slot; n > 0 && x.offKey(n-1) == offset; n-- {
		}
	}
	return x.truncateToEntries(n)
}

// SanityCheck verifies every entry: timestamps strictly increasing,
// offsets nondecreasing, not below the base and below nextOffset (the
// segment's next offset; pass -1 to skip that bound), and whole entries.
func (x *TimeIndex) SanityCheck(nextOffset int64) error {
	if !x.ensureLoaded() {
		return x.LoadErr()
	}
	x.mu.RLock()
	defer x.mu.RUnlock()
	if err := x.checkLength(); err != nil {
		return err
	}
	prevTs, prevRel := int64(-1), int32(0)
	for i := 0; i < x.entries; i++ {
		ts, rel := DecodeTimeEntry(x.entryAt(i))
		if reason := checkTimeEntry(ts, rel, prevTs, prevRel, i, x.base, nextOffset); reason != "" {
			return corrupt(x.f.Name(), i, int64(i*TimeEntrySize), reason)
		}
		prevTs, prevRel = ts, rel
	}
	return nil
}

// checkTimeEntry validates one time entry against its predecessor.
func checkTimeEntry(ts int64, rel int32, prevTs int64, prevRel int32, i int, base, next int64) string {
	switch {
	case rel < 0:
		return fmt.Sprintf("negative relative offset %d", rel)
	case i > 0 && ts <= prevTs:
		return fmt.Sprintf("timestamp %d not above previous %d", ts, prevTs)
	case i == 0 && ts < 0:
		return fmt.Sprintf("negative timestamp %d", ts)
	case i > 0 && rel < prevRel:
		return fmt.Sprintf("relative offset %d below previous %d", rel, prevRel)
	case next >= 0 && base+int64(rel) >= next:
		return fmt.Sprintf("offset %d not below the segment's next offset %d", base+int64(rel), next)
	}
	return ""
}
