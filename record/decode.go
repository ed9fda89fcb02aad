package record

import (
	"fmt"
	"math"

	"github.com/partfs/partfs/compression"
)

// DefaultMaxDecompressed bounds the inflated size of one batch's records.
const DefaultMaxDecompressed = 64 << 20

// Decoder turns batches into records: it decompresses, expands legacy
// wrappers (V0 absolute, V1 relative inner offsets) and applies
// LogAppendTime. It reuses its buffers (one Decoder per goroutine); the
// uncompressed V2 path allocates nothing per record (header keys are
// strings: a key equal to the previous record's key at the same position
// reuses that string).
type Decoder struct {
	// MaxDecompressed bounds the decompressed size of one batch
	// (0 = DefaultMaxDecompressed).
	MaxDecompressed int

	rec     Record
	headers []Header
	keys    []string // header key cache, by header index
	buf     []byte   // decompressed records
	dec     compression.Decompressors
}

func (d *Decoder) limit() int {
	if d.MaxDecompressed > 0 {
		return d.MaxDecompressed
	}
	return DefaultMaxDecompressed
}

// Records calls fn for each record of b in order until fn returns false. The
// *Record and its slices are valid only during the call. Records of a control
// batch are passed too (see BatchHeader.IsControl). A failure is a
// *CorruptionError naming the batch's file and position; records before the
// failing one have been passed to fn.
func (d *Decoder) Records(b *Batch, fn func(*Record) bool) error {
	_, err := d.RecordsIn(b, math.MinInt64, math.MaxInt64, fn)
	return err
}

// RecordsIn is Records of the records with offsets in [from, next) only:
// it skips those before from and stops at the first at or after next.
// stopped reports whether it stopped before the batch's end, at next or
// because fn returned false.
func (d *Decoder) RecordsIn(b *Batch, from, next int64, fn func(*Record) bool) (stopped bool, err error) {
	defer d.forget()
	if b.Header.Magic >= 2 {
		return d.recordsV2(b, from, max(next, from), fn)
	}
	err = d.recordsLegacy(b, func(r *Record) bool {
		switch {
		case r.Offset < from:
			return true
		case r.Offset >= next || !fn(r):
			stopped = true
			return false
		}
		return true
	})
	return stopped, err
}

// forget drops the Decoder's references to the bytes of the batch it
// decoded (the last record's key, value and header values): they may be
// a mapping of the batch's file, unmapped once read.
func (d *Decoder) forget() {
	d.rec = Record{}
	clear(d.headers[:cap(d.headers)])
}

// deliver passes r to fn if its offset is in [from, next) (next >= from:
// one unsigned comparison tells the offsets in range); false when the
// walk stops.
func deliver(r *Record, from, next int64, fn func(*Record) bool) bool {
	if uint64(r.Offset-from) < uint64(next-from) {
		return fn(r)
	}
	return r.Offset < from
}

// Decompressed returns b's records area (V2) or wrapper value (V0/V1)
// decompressed, in the Decoder's buffer (valid until its next use).
func (d *Decoder) Decompressed(b *Batch) ([]byte, error) {
	if b.Header.Magic >= 2 {
		data, _, err := d.v2Data(b)
		return data, err
	}
	m, _, reason := parseLegacy(b.Raw, false)
	if reason != "" {
		return nil, corruptf(b.File, b.Pos, "%s", reason)
	}
	if m.codec == None {
		return m.value, nil
	}
	return d.wrapperData(b, &m)
}

// v2Data returns the uncompressed records area of a V2 batch.
func (d *Decoder) v2Data(b *Batch) ([]byte, bool, error) {
	if len(b.Raw) < BatchHeaderSize {
		return nil, false, corruptf(b.File, b.Pos, "batch of %d bytes is shorter than its header", len(b.Raw))
	}
	data := b.Raw[BatchHeaderSize:]
	codec := b.Header.Codec()
	if codec == None || len(data) == 0 && b.Header.NumRecords == 0 {
		return data, false, nil
	}
	if !codec.Valid() {
		return nil, false, corruptf(b.File, b.Pos, "unknown compression codec id %d", int8(codec))
	}
	out, err := d.dec.Decompress(d.buf, data, codec, 2, d.limit())
	d.buf = out[:0]
	if err != nil {
		return nil, false, &CorruptionError{File: b.File, Pos: b.Pos, Reason: "cannot decompress " + codec.String() + " records", Err: err}
	}
	return out, true, nil
}

func (d *Decoder) recordsV2(b *Batch, from, next int64, fn func(*Record) bool) (bool, error) {
	data, _, err := d.v2Data(b)
	if err != nil {
		return false, err
	}
	h := &b.Header
	i := int32(0)
	if from > h.BaseOffset {
		var reason string
		if data, i, reason = skipBefore(data, h, from); reason != "" {
			return false, corruptf(b.File, b.Pos, "record %d of %d: %s", i, h.NumRecords, reason)
		}
	}
	for ; i < h.NumRecords; i++ {
		n, used, stop := d.simpleRecords(data, h, h.NumRecords-i, from, next, fn)
		if data, i = data[used:], i+n; stop {
			return true, nil
		}
		if i == h.NumRecords {
			break
		}
		if len(data) == 0 {
			return false, corruptf(b.File, b.Pos, "batch declares %d records but its bytes hold only %d", h.NumRecords, i)
		}
		rest, ok := d.fastRecord(data, h)
		if !ok {
			_, reason := d.parseRecord(data, h)
			return false, corruptf(b.File, b.Pos, "record %d of %d: %s", i, h.NumRecords, reason)
		}
		data = rest
		if !deliver(&d.rec, from, next, fn) {
			return true, nil
		}
	}
	if len(data) != 0 {
		return false, corruptf(b.File, b.Pos, "incorrect declared batch size: %d bytes left after %d records", len(data), h.NumRecords)
	}
	return false, nil
}

// skipBefore passes over the leading records of a V2 records area whose
// offsets are below from, parsing only each one's prefix (its length and
// deltas, as RecordPrefix, through skipSimple where they are short) and
// checking that it lies inside data, so that a read from an offset deep
// inside a large batch does not decode every record before it (those
// records were only checked against the batch's CRC, as every byte of it).
// It returns the bytes from the first record at or after from on (or
// none), how many records it passed over, and what is malformed ("" for
// nothing).
func skipBefore(data []byte, h *BatchHeader, from int64) ([]byte, int32, string) {
	i := int32(0)
	for i < h.NumRecords && len(data) > 0 {
		p, n := skipSimple(data, h, from-h.BaseOffset, h.NumRecords-i)
		if data, i = data[p:], i+n; i == h.NumRecords || len(data) == 0 {
			break
		}
		// the record skipSimple stopped at: the one sought, or another shape
		size, reached, reason := prefixBefore(data, h, from)
		if reason != "" {
			return data, i, reason
		}
		if reached {
			break
		}
		data, i = data[size:], i+1
	}
	return data, i, ""
}

// prefixBefore parses the prefix of the record at data[0] (RecordPrefix)
// and checks that it lies inside data: it returns the record's size,
// whether its offset is at or after from, and what is malformed ("" for
// nothing).
func prefixBefore(data []byte, h *BatchHeader, from int64) (size int64, reached bool, reason string) {
	size, off, _, reason := RecordPrefix(data, h)
	if reason == "" && size > int64(len(data)) {
		reason = fmt.Sprintf("%d bytes run past the batch end", size)
	}
	return size, off >= from, reason
}

// skipSimple is skipBefore's loop over records (at most want) whose
// length, timestamp delta and offset delta take one or two bytes each, the
// record inside data and its offset delta inside the batch's: it stops at
// the first record whose offset delta is target or more, or that it does
// not take (of another shape, malformed, or within 8 bytes of data's end),
// and returns that record's position and the records passed over.
func skipSimple(data []byte, h *BatchHeader, target int64, want int32) (p int, n int32) {
	last := int64(h.LastOffsetDelta)
	for ; n < want && p <= len(data)-8; n++ {
		w := (*[8]byte)(data[p : p+8])
		u, k := uint(w[0]), 1 // the length
		if u >= 0x80 {
			if w[1] >= 0x80 {
				return p, n
			}
			u, k = u&0x7f|uint(w[1])<<7, 2
		}
		// attributes at w[k], then the timestamp delta
		i := k + 1
		if w[i] >= 0x80 {
			if w[i+1] >= 0x80 {
				return p, n
			}
			i++
		}
		i++
		o := uint(w[i]) // the offset delta
		if o >= 0x80 {
			if w[i+1] >= 0x80 {
				return p, n
			}
			o, i = o&0x7f|uint(w[i+1])<<7, i+1
		}
		length, off := int(u>>1), int64(zigzag32(uint32(o)))
		if u&1 != 0 || length < i+1-k || p+k+length > len(data) || off < 0 || off > last || off >= target {
			return p, n
		}
		p += k + length
	}
	return p, n
}
