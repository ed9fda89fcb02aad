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
		if o.jumped && h.BaseOffset > o.prevLast {
			return corruptf(b.File, o.lastPos, "batch base offset jumps from %d to %d; the batch after it at position %d starts at %d",
				o.prevLast+1, o.lastBase, b.Pos, h.BaseOffset)
		}
		return corruptf(b.File, b.Pos, "batch base offset %d does not follow the last offset %d of the batch before it",
			h.BaseOffset, o.last)
	}
	if !o.seen {
		o.last = o.Base - 1
	}
	o.jumped = h.BaseOffset > o.last+1
	o.prevLast, o.lastBase, o.last, o.lastPos, o.seen = o.last, h.BaseOffset, last, b.Pos, true
	return nil
}
