package record

// simpleRecords parses and passes to fn the leading records of data (at
// most want) that take the common shape: every varint before the value 1
// or 2 bytes, no headers. It stops at the first record of another shape
// or a malformed one, when fewer than 16 bytes are left, or when fn
// returns false or a record is at or after next (stop; records before
// from are parsed but not passed), and returns the records parsed and the
// bytes they used; the caller parses what follows with fastRecord, which
// also decides whether it is malformed.
//
// Decoding is bound by the instructions spent per record, so this loop is
// kept short: the batch's fields in locals, the varints before the key
// read through one 16-byte slice (one bounds check for all of them), a
// branch per varint size (predictable: the sizes repeat from record to
// record) and no calls but fn (deliver is inlined).
func (d *Decoder) simpleRecords(data []byte, h *BatchHeader, want int32, from, next int64, fn func(*Record) bool) (n int32, used int, stop bool) {
	r := &d.rec
	r.Headers = nil
	base, baseTs, tsMask := h.BaseOffset, h.BaseTimestamp, int64(-1)
	if h.Attributes&attrLogAppendTime != 0 {
		baseTs, tsMask = h.MaxTimestamp, 0 // every record gets maxTimestamp
	}
	p := 0
	for ; n < want && p <= len(data)-16; n++ {
		w := (*[16]byte)(data[p : p+16])
		u, k := uint(w[0]), 1 // the length
		if u >= 0x80 {
			u, k = u&0x7f|uint(w[1])<<7, 2
		}
		end := p + k + int(u>>1)
		if u&1 != 0 || u >= 1<<14 || u < 12 || end > len(data) {
			break
		}
		last := end - 1 - p // the header count: w[last] when inside w
		// attributes at w[k], then the timestamp and offset deltas
		ts, off, i := uint(w[k+1]), uint(w[k+2]), k+3
		if ts >= 0x80 {
			ts, off, i = ts&0x7f|off<<7, uint(w[k+3]), k+4
		}
		if off >= 0x80 {
			off, i = off&0x7f|uint(w[i&15])<<7, i+1
		}
		if ts >= 1<<14 || off >= 1<<14 || i >= last || data[p+last] != 0 {
			break
		}
		// the key (null for log lines), then the value, running to the
		// header count
		j := p + i + 1
		if kl := uint(w[i&15]); kl != 1 {
			if kl >= 0x80 {
				kl, j = kl&0x7f|uint(data[j])<<7, j+1
			}
			// (a 3-byte varint read as 2 bytes is 8 KiB or more, past the
			// end of a record whose length took 2 bytes)
			if kl&1 != 0 || int(kl>>1) >= end-1-j {
				break
			}
			r.Key, j = data[j:j+int(kl>>1):j+int(kl>>1)], j+int(kl>>1)
		} else {
			r.Key = nil
		}
		vl := uint(data[j])
		if j++; vl >= 0x80 {
			vl, j = vl&0x7f|uint(data[j])<<7, j+1
		}
		if vl == uint(end-1-j)<<1 {
			r.Value = data[j : end-1 : end-1]
		} else if vl == 1 && j == end-1 {
			r.Value = nil
		} else {
			break
		}
		r.Offset = base + int64(zigzag32(uint32(off)))
		r.Timestamp = baseTs + int64(zigzag32(uint32(ts)))&tsMask
		p = end
		if !deliver(r, from, next, fn) {
			return n + 1, p, true
		}
	}
	return n, p, false
}
