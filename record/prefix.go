package record

import "fmt"

// MaxRecordPrefix is the most bytes RecordPrefix reads of a V2 record: its
// length (a varint of up to 5 bytes), attributes (1), timestamp delta (up
// to 10) and offset delta (up to 5).
const MaxRecordPrefix = 21

// RecordPrefix parses the start of the V2 record at b[0] in the batch with
// header h, for walks that look at records without reading them (time
// lookups): the record's size with its length varint, its offset, and its
// timestamp (LogAppendTime applied). b holds at least MaxRecordPrefix
// bytes or the rest of the batch; the size is not checked against b.
// reason is not empty when the prefix is malformed (a bad varint, an
// offset delta outside the batch's). No CRC is checked here.
func RecordPrefix(b []byte, h *BatchHeader) (size, offset, ts int64, reason string) {
	// The common shape: length and deltas of one or two bytes each.
	u, n := uv2(b, 0)
	t, k1 := uv2(b, n+1)
	o, k2 := uv2(b, n+1+k1)
	length := int64(zigzag32(u))
	if n == 0 || k1 == 0 || k2 == 0 || int64(1+k1+k2) > length {
		return slowPrefix(b, h)
	}
	return prefixIn(h, int64(n)+length, int64(zigzag32(t)), int64(zigzag32(o)))
}

// slowPrefix is RecordPrefix for varints of any size, saying what is wrong.
func slowPrefix(b []byte, h *BatchHeader) (size, offset, ts int64, reason string) {
	length, n := readVarint32(b)
	if n <= 0 || length < 0 {
		return 0, 0, 0, "bad record length"
	}
	body := b[n:min(len(b), n+int(length))] // body[0] is the attributes byte
	if len(body) < 2 {
		return 0, 0, 0, "bad timestamp delta varint"
	}
	tsDelta, k1 := readVarint64(body[1:])
	if k1 <= 0 {
		return 0, 0, 0, "bad timestamp delta varint"
	}
	offDelta, k2 := readVarint32(body[1+k1:])
	if k2 <= 0 {
		return 0, 0, 0, "bad offset delta varint"
	}
	return prefixIn(h, int64(n)+int64(length), tsDelta, int64(offDelta))
}

// prefixIn places a record's deltas in its batch.
func prefixIn(h *BatchHeader, size, tsDelta, offDelta int64) (int64, int64, int64, string) {
	if offDelta < 0 || offDelta > int64(h.LastOffsetDelta) {
		return 0, 0, 0, fmt.Sprintf("offset delta %d outside the batch's [0, %d]", offDelta, h.LastOffsetDelta)
	}
	ts := h.BaseTimestamp + tsDelta
	if h.LogAppendTime() {
		ts = h.MaxTimestamp
	}
	return size, h.BaseOffset + offDelta, ts, ""
}
