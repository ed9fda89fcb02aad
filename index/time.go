package index

import "fmt"

// TimeIndex is a segment's .timeindex: sparse (timestamp, offset) entries,
// timestamps strictly increasing, offsets nondecreasing. It counts as full
// one entry early, keeping a slot for the entry written on roll and close.
type TimeIndex struct{ core }

// OpenTimeIndex opens the .timeindex in f; maxBytes as for OpenOffsetIndex
// (rounded down to 12: 10 MiB gives 10 485 756 bytes).
func OpenTimeIndex(f File, base int64, maxBytes int) (*TimeIndex, error) {
	return openAs[TimeIndex](f, base, maxBytes, TimeEntrySize, false)
}

// OpenTimeIndexReadOnly opens a time index that is never changed.
func OpenTimeIndexReadOnly(f File, base int64) (*TimeIndex, error) {
	return openAs[TimeIndex](f, base, 0, TimeEntrySize, true)
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
func (x *TimeIndex) IsFull() bool { return x.isFull(1) }

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

// Lookup returns the largest entry with timestamp <= target, or
// (-1, base offset) if none.
func (x *TimeIndex) Lookup(target int64) (timestamp, offset int64) {
	timestamp, offset, _ = x.Span(target)
	return timestamp, offset
}

// Span is Lookup with the timestamp of the entry after the one found (-1
// when there is none, or no entry was found).
func (x *TimeIndex) Span(target int64) (timestamp, offset, nextTimestamp int64) {
	timestamp, offset, nextTimestamp, _ = x.SpanSlot(target)
	return timestamp, offset, nextTimestamp
}

// SpanSlot is Span with the slot of the entry found (-1 for none).
func (x *TimeIndex) SpanSlot(target int64) (timestamp, offset, nextTimestamp int64, slot int) {
	timestamp, offset, nextTimestamp, slot = -1, x.base, -1, -1
	x.lookup(target, timeKey, func(i int) {
		timestamp, offset, slot = x.keyAt(i, timeKey), x.keyAt(i, timeOffsetKey), i
		if i+1 < x.entries {
			nextTimestamp = x.keyAt(i+1, timeKey)
		}
	})
	return timestamp, offset, nextTimestamp, slot
}

// Entry returns entry i (0 <= i < Entries()).
func (x *TimeIndex) Entry(i int) (timestamp, offset int64, err error) {
	err = x.entry(i, func(b []byte) {
		ts, rel := DecodeTimeEntry(b)
		timestamp, offset = ts, x.base+int64(rel)
	})
	return timestamp, offset, err
}

// TruncateTo removes the entries with offset >= offset.
func (x *TimeIndex) TruncateTo(offset int64) error { return x.truncateAt(offset, timeOffsetKey) }

// SanityCheck verifies every entry: timestamps strictly increasing,
// offsets nondecreasing, not below the base and below nextOffset (the
// segment's next offset; pass -1 to skip that bound), and whole entries.
func (x *TimeIndex) SanityCheck(nextOffset int64) error {
	i, prevTs, prevRel := 0, int64(-1), int32(0)
	return x.sanityCheck(func(b []byte) string {
		ts, rel := DecodeTimeEntry(b)
		reason := checkTimeEntry(ts, rel, prevTs, prevRel, i, x.base, nextOffset)
		i, prevTs, prevRel = i+1, ts, rel
		return reason
	})
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
