package record

import (
	"encoding/binary"
	"math"
	"slices"
)

// The records area of a V2 batch, written record by record
// (docs/format-record.md).

// appendRecords appends the records area (uncompressed) to b with every
// Timestamp as given.
func appendRecords(b []byte, recs []Record, baseTs int64, deltas offsetDeltas) ([]byte, error) {
	b, _, err := appendRecordsDefault(b, recs, baseTs, 0, deltas)
	return b, err
}

// appendRecordsDefault appends the records area (uncompressed) to b and
// returns the largest timestamp (-1 if none is larger); a Timestamp <= 0
// is defTs if defTs > 0 (TimestampOf).
func appendRecordsDefault(b []byte, recs []Record, baseTs, defTs int64, deltas offsetDeltas) ([]byte, int64, error) {
	b, _, maxTs, err := appendRecordsUpTo(b, recs, baseTs, defTs, deltas, math.MaxInt)
	return b, maxTs, err
}

// appendRecordsUpTo is appendRecordsDefault for the leading records of recs
// that keep len(b) within limit (the first record goes in regardless): it
// returns how many it appended and their largest timestamp (-1 if none is
// larger). It grows b once per record (by a keyless record's bound, or by
// another's size computed first); a record that goes over the limit is
// taken back, which is cheaper than sizing every record before writing it.
func appendRecordsUpTo(b []byte, recs []Record, baseTs, defTs int64, deltas offsetDeltas, limit int) ([]byte, int, int64, error) {
	maxTs, prevMax := int64(-1), int64(-1)
	for i := range recs {
		mark := len(b)
		r := &recs[i]
		offDelta := int64(i)
		if deltas.keep {
			offDelta = r.Offset - deltas.base
		}
		ts := TimestampOf(r, defTs)
		tsDelta := ts - baseTs
		prevMax, maxTs = maxTs, max(maxTs, ts)
		n := 0
		if len(r.Headers) == 0 && r.Key == nil {
			b = slices.Grow(b, keylessMaxHead+len(r.Value))
			n = putKeyless(b[len(b):cap(b)], tsDelta, offDelta, r.Value)
			b = b[:len(b)+n]
		}
		if n == 0 {
			var err error
			if b, err = appendRecord(b, r, tsDelta, offDelta); err != nil {
				return b[:mark], i, prevMax, err
			}
		}
		if len(b) > limit && i > 0 {
			return b[:mark], i, prevMax, nil
		}
	}
	return b, len(recs), maxTs, nil
}

// appendRecord appends any record, field by field, its size computed
// first; errTooLarge (b unchanged) for one that cannot be framed.
func appendRecord(b []byte, r *Record, tsDelta, offDelta int64) ([]byte, error) {
	body, err := recordBodyLen(r, tsDelta, offDelta)
	if err != nil {
		return b, err
	}
	b = slices.Grow(b, 5+body)
	b = appendVarint(b, int64(body))
	b = append(b, 0) // attributes
	b = appendVarint(b, tsDelta)
	b = appendVarint(b, offDelta)
	b = appendBytesField(b, r.Key)
	b = appendBytesField(b, r.Value)
	b = appendVarint(b, int64(len(r.Headers)))
	for j := range r.Headers {
		h := &r.Headers[j]
		b = appendVarint(b, int64(len(h.Key)))
		b = append(b, h.Key...)
		b = appendBytesField(b, h.Value)
	}
	return b, nil
}

// Bounds of the records putKeyless takes: deltas whose zigzag varints
// fit 3 bytes, values of at least keylessMinValue bytes and under
// keylessMaxValue (so the record's length varint fits 3 bytes too).
// keylessMaxHead is the most bytes such a record has besides its value.
const (
	keylessMaxVarint = 1 << 21
	keylessMinValue  = 4
	keylessMaxValue  = 1 << 19
	keylessMaxHead   = 3 + 1 + 3 + 3 + 1 + 3 + 1
)

// putKeyless writes a record without key and headers (log lines, the
// common case) at the start of w and returns its size, or 0 if it is
// outside the bounds above or does not fit w. The fields before the value
// go in as two 8-byte little-endian stores (length, attributes, timestamp
// delta; offset delta, null key, value length), each one's spare bytes
// overwritten by what follows; the value's minimum length keeps the second
// store inside the record. The caller grows its buffer beforehand, which
// leaves the value's copy the only call here, with nothing live across it
// but n.
func putKeyless(w []byte, tsDelta, offDelta int64, value []byte) int {
	tz, oz := zigzag64(tsDelta), zigzag64(offDelta)
	if tz|oz >= keylessMaxVarint || uint(len(value)-keylessMinValue) >= keylessMaxValue-keylessMinValue {
		return 0
	}
	t, nt := packUvarint3(tz)
	o, no := packUvarint3(oz)
	v, nv := packUvarint3(uint64(len(value)) << 1)
	body := 1 + nt + no + 1 + nv + len(value) + 1
	l, nl := packUvarint3(uint64(body) << 1)
	n := nl + body
	if n > len(w) {
		return 0
	}
	w = w[:n]
	p := nl + 1 + nt // the second store: offset delta onwards
	le := binary.LittleEndian
	le.PutUint64(w, l|t<<(8*(nl+1)&63)) // the zero byte between is the attributes
	le.PutUint64(w[p:], o|1<<(8*no&63)|v<<(8*(no+1)&63))
	w[n-1] = 0 // no headers
	copy(w[p+no+1+nv:], value)
	return n
}

// appendBytesField writes a varint length (-1 for nil) and the bytes.
func appendBytesField(b, v []byte) []byte {
	if v == nil {
		return append(b, 1) // zigzag(-1)
	}
	b = appendVarint(b, int64(len(v)))
	return append(b, v...)
}

// recordBodyLen is the record's length field: its bytes after that field.
func recordBodyLen(r *Record, tsDelta, offDelta int64) (int, error) {
	n := bodyLen(r, tsDelta, offDelta)
	if n > math.MaxInt32-5 || len(r.Key) > math.MaxInt32 || len(r.Value) > math.MaxInt32 {
		return 0, errTooLarge
	}
	return n, nil
}

// RecordSize is the encoded size of r in a V2 records area with these
// deltas (its length varint and body), for cutting batches before
// encoding them; the encoder refuses records too large for a batch.
func RecordSize(r *Record, tsDelta, offDelta int64) int64 {
	n := bodyLen(r, tsDelta, offDelta)
	return int64(varintLen(int64(n)) + n)
}

// bodyLen is the size of r's body: attributes, deltas, key, value, headers.
func bodyLen(r *Record, tsDelta, offDelta int64) int {
	n := 1 + varintLen(tsDelta) + varintLen(offDelta)
	n += bytesFieldLen(r.Key) + bytesFieldLen(r.Value) + varintLen(int64(len(r.Headers)))
	for j := range r.Headers {
		h := &r.Headers[j]
		n += varintLen(int64(len(h.Key))) + len(h.Key) + bytesFieldLen(h.Value)
	}
	return n
}

func bytesFieldLen(v []byte) int {
	if v == nil {
		return 1
	}
	return varintLen(int64(len(v))) + len(v)
}
