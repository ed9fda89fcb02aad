package record

import (
	"math"
	"slices"
)

// The records area of a V2 batch, written record by record
// (docs/format-record.md).

// appendRecords appends the records area (uncompressed) to b with every
// Timestamp as given.
func appendRecords(b []byte, recs []Record, baseTs int64, deltas offsetDeltas) ([]byte, error) {
	return appendRecordsDefault(b, recs, baseTs, 0, deltas)
}

// appendRecordsDefault appends the records area (uncompressed) to b; a
// Timestamp <= 0 is defTs if defTs > 0 (TimestampOf).
func appendRecordsDefault(b []byte, recs []Record, baseTs, defTs int64, deltas offsetDeltas) ([]byte, error) {
	b, _, _, err := appendRecordsUpTo(b, recs, baseTs, defTs, deltas, math.MaxInt)
	return b, err
}

// appendRecordsUpTo is appendRecordsDefault for the leading records of recs
// that keep len(b) within limit (the first record goes in regardless): it
// returns how many it appended and their largest timestamp (-1 if none is
// larger). It grows b once per record (a record's size is known first); a
// record that goes over the limit is taken back, which is cheaper than
// sizing every record before writing it.
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
		if len(r.Headers) == 0 && r.Key == nil && len(r.Value) <= maxKeylessValue {
			if b = appendKeyless(b, tsDelta, offDelta, r.Value); len(b) > limit && i > 0 {
				return b[:mark], i, prevMax, nil
			}
			continue
		}
		body, err := recordBodyLen(r, tsDelta, offDelta)
		if err != nil {
			return b, i, prevMax, err
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
		if len(b) > limit && i > 0 {
			return b[:mark], i, prevMax, nil
		}
	}
	return b, len(recs), maxTs, nil
}

// maxKeylessValue bounds the values appendKeyless takes; larger ones take
// the checked path (errTooLarge).
const maxKeylessValue = math.MaxInt32 - 64

// appendKeyless appends a record without key and headers (log lines, the
// common case): its size from the fields' varint sizes, then its bytes
// stored one by one into room grown once.
func appendKeyless(b []byte, tsDelta, offDelta int64, value []byte) []byte {
	tz, oz := zigzag64(tsDelta), zigzag64(offDelta)
	vz, vfield := uint64(0), 1 // null value
	if value != nil {
		vz = uint64(len(value)) << 1
		vfield = uvarintLen(vz) + len(value)
	}
	body := 1 + uvarintLen(tz) + uvarintLen(oz) + 1 + vfield + 1
	b = slices.Grow(b, 5+body)
	at := len(b)
	w := b[at : at+5+body]
	i := putUvarint(w, 0, uint64(body)<<1)
	w[i] = 0 // attributes
	i = putUvarint(w, i+1, tz)
	i = putUvarint(w, i, oz)
	w[i] = 1 // null key
	if value == nil {
		w[i+1], w[i+2] = 1, 0 // null value, no headers
		return b[:at+i+3]
	}
	i = putUvarint(w, i+1, vz)
	i += copy(w[i:], value)
	w[i] = 0 // no headers
	return b[:at+i+1]
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
	n := 1 + varintLen(tsDelta) + varintLen(offDelta)
	n += bytesFieldLen(r.Key) + bytesFieldLen(r.Value) + varintLen(int64(len(r.Headers)))
	for j := range r.Headers {
		h := &r.Headers[j]
		n += varintLen(int64(len(h.Key))) + len(h.Key) + bytesFieldLen(h.Value)
	}
	if n > math.MaxInt32-5 || len(r.Key) > math.MaxInt32 || len(r.Value) > math.MaxInt32 {
		return 0, errTooLarge
	}
	return n, nil
}

func bytesFieldLen(v []byte) int {
	if v == nil {
		return 1
	}
	return varintLen(int64(len(v))) + len(v)
}
