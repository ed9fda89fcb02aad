package index

// Builder applies Kafka's rule for when an append gets index entries
// (LogSegment.append and LogSegment.recover): before an append, if more
// than IntervalBytes were appended since the last entry, the offset index
// gets (the append's last offset, the append's start position) and the
// time index gets (max timestamp so far, offset of that max). The first
// append of a segment therefore never gets an entry. Finish writes the
// final time entry of a roll or close. Not safe for concurrent use: one
// writer per segment.
type Builder struct {
	Offsets       *OffsetIndex
	Times         *TimeIndex
	IntervalBytes int

	bytesSince   int64
	maxTimestamp int64 // largest batch max timestamp so far, -1 if none
	offsetOfMax  int64 // last offset of the batch holding maxTimestamp
}

// NewBuilder returns a builder continuing the given indexes: the max
// timestamp so far is taken from the time index's last entry, as Kafka
// does on reopen, and the byte counter starts at bytesSinceLastEntry.
func NewBuilder(offsets *OffsetIndex, times *TimeIndex, intervalBytes int, bytesSinceLastEntry int64) *Builder {
	b := &Builder{Offsets: offsets, Times: times, IntervalBytes: intervalBytes, bytesSince: bytesSinceLastEntry}
	b.maxTimestamp, b.offsetOfMax = times.LastEntry()
	return b
}

// Add records one append (one or more batches) of size bytes starting at
// pos, whose last offset is lastOffset and whose largest timestamp is
// maxTimestamp, carried by the batch ending at offsetOfMax. Call it
// before or after writing the bytes; it writes index entries as needed.
func (b *Builder) Add(pos int64, size int64, lastOffset, maxTimestamp, offsetOfMax int64) error {
	if maxTimestamp > b.maxTimestamp {
		b.maxTimestamp, b.offsetOfMax = maxTimestamp, offsetOfMax
	}
	if b.bytesSince > int64(b.IntervalBytes) {
		if err := b.Offsets.Append(lastOffset, int32(pos)); err != nil {
			return err
		}
		if err := b.Times.MaybeAppend(b.maxTimestamp, b.offsetOfMax, false); err != nil {
			return err
		}
		b.bytesSince = 0
	}
	b.bytesSince += size
	return nil
}

// MaxTimestamp returns the largest timestamp seen and the offset it
// belongs to ((-1, base) if none).
func (b *Builder) MaxTimestamp() (timestamp, offset int64) { return b.maxTimestamp, b.offsetOfMax }

// Finish appends the final time entry (max timestamp so far) if it is
// larger than the last one, using the reserved slot, as Kafka does on roll,
// close and at the end of recovery. It does not trim.
func (b *Builder) Finish() error {
	return b.Times.MaybeAppend(b.maxTimestamp, b.offsetOfMax, true)
}
