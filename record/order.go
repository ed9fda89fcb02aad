package record

import "math"

// OffsetOrder checks the offsets of a segment's batches, which no CRC
// covers (a V2 batch's CRC starts after its base offset): every batch lies
// in [Base, Limit) and every V2 batch starts above the last offset of the
// V2 batch before it (no duplicate, no step back). Legacy V0/V1 messages
// are range-checked only, as old brokers wrote offsets that step back.
//
// When a batch does not follow the one before it, the error names the
// batch to blame: the one before it if that one jumped over a gap and the
// failing batch follows the batch before the jump (a damaged base offset
// that points too far ahead), else the failing batch (a duplicate or a
// step back).
type OffsetOrder struct {
	Base, Limit int64 // the segment's base offset; the next segment's (math.MaxInt64 for none)
	lastBase    int64 // base offset of the previous V2 batch
	last        int64 // its last offset
	lastPos     int64 // its position
	prevLast    int64 // last offset of the V2 batch before it (Base-1 for none)
	jumped      bool  // the previous V2 batch started after a gap
	seen        bool
}

// NewOffsetOrder checks the batches of a segment with base offset base,
// below limit (math.MaxInt64 when nothing follows).
func NewOffsetOrder(base, limit int64) OffsetOrder {
	if limit <= base {
		limit = math.MaxInt64
	}
	return OffsetOrder{Base: base, Limit: limit}
}

// Check checks b against the segment's range and the batches before it and
// returns a CorruptionError naming a file and position (see OffsetOrder).
func (o *OffsetOrder) Check(b *Batch) error {
	h := &b.Header
	last := h.LastOffset()
	switch {
	case h.BaseOffset < o.Base || last >= o.Limit || last < h.BaseOffset:
		return corruptf(b.File, b.Pos, "batch offsets %d..%d outside the segment's offsets [%d, %d)",
			h.BaseOffset, last, o.Base, o.Limit)
	case h.Magic < 2:
		return nil
	case o.seen && h.BaseOffset <= o.last:
		return o.Follows(b.File, b.Pos, h.BaseOffset)
	}
	if !o.seen {
		o.last = o.Base - 1
	}
	o.jumped = h.BaseOffset > o.last+1
	o.prevLast, o.lastBase, o.last, o.lastPos, o.seen = o.last, h.BaseOffset, last, b.Pos, true
	return nil
}

// After makes the next batch Check is given follow a V2 batch whose last
// offset is last, as a header-only scan of the batches before found them
// in order: a read from inside a segment that knows its first batch's
// predecessor.
func (o *OffsetOrder) After(last int64) {
	o.seen, o.jumped, o.last, o.prevLast, o.lastBase, o.lastPos = true, false, last, last, last, -1
}

// Jumped reports that the V2 batch Check passed last started after a gap
// (for the first batch of a segment: above the segment's base offset).
// Such a batch cannot be told from one whose base offset was damaged
// upwards until the batch after it is seen: a reader that passes on its
// records first confirms it with the next batch's base offset (Follows).
func (o *OffsetOrder) Jumped() bool { return o.seen && o.jumped }

// Follows checks nextBase, the base offset of the V2 batch at nextPos that
// follows the batch Check passed last, as Check would check that batch,
// without moving on: a CorruptionError blaming the batch Check passed last
// when it jumped too far (the next batch follows the one before it), or
// the batch at nextPos when it steps back.
func (o *OffsetOrder) Follows(file string, nextPos, nextBase int64) error {
	switch {
	case !o.seen || nextBase > o.last:
		return nil
	case o.jumped && nextBase > o.prevLast:
		return corruptf(file, o.lastPos, "batch base offset jumps from %d to %d; the batch after it at position %d starts at %d",
			o.prevLast+1, o.lastBase, nextPos, nextBase)
	}
	return corruptf(file, nextPos, "batch base offset %d does not follow the last offset %d of the batch before it",
		nextBase, o.last)
}
