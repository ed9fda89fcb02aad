package logstore

import (
	"encoding/binary"
	"fmt"
	"math"

	"github.com/partfs/partfs/record"
)

// recordChunk is the least a time lookup's record walk reads at a time
// (more when answerEnd guesses the answer further on).
const recordChunk = 32 << 10

// maxRecordPrefix is the most bytes of a V2 record the walk parses: its
// length (a varint of up to 5 bytes), attributes (1), timestamp delta (up
// to 10) and offset delta (up to 5).
const maxRecordPrefix = 21

// walk searches the uncompressed V2 batch at p (header h) for q's answer
// record by record, reading the records through w (up to answerEnd's
// guess, then chunk by chunk) and parsing only each record's length,
// timestamp delta and offset delta, up to the answer. As Kafka's FileRecords.searchForTimestamp, it does not check the
// batch CRC: CRCs are left to reads, which return the bytes. It checks the
// structure it walks instead (varints, record sizes inside the batch,
// offset deltas inside the batch's, the record count against the bytes),
// so corrupt bytes give a corruption error naming the batch, never an
// offset outside it.
func (q *timeQuery) walk(w *fileWindow, p int64, h *record.BatchHeader) error {
	end := p + h.Size()
	r := p + record.BatchHeaderSize
	guess := q.answerEnd(p, h)
	for i := int32(0); i < h.NumRecords; i++ {
		if r == end {
			return walkErr(q.s, p, fmt.Sprintf("batch declares %d records but its bytes hold only %d", h.NumRecords, i))
		}
		b, err := w.held(r, maxRecordPrefix), error(nil)
		if b == nil {
			if b, err = w.at(q.s, r, maxRecordPrefix, max(recordChunk, guess-r), end, "a record"); err != nil {
				return scanErr(q.s, p, err)
			}
		}
		size, offset, ts, ok := quickPrefix(b, h)
		if !ok || size > end-r {
			var reason string
			if size, offset, ts, reason = recordPrefix(b, h); reason == "" && size > end-r {
				reason = fmt.Sprintf("%d bytes run past the batch end", size)
			}
			if reason != "" {
				return walkErr(q.s, p, fmt.Sprintf("record %d of %d at position %d: %s", i, h.NumRecords, r, reason))
			}
		}
		if q.check(offset, ts); q.found {
			return nil
		}
		r += size
	}
	if r != end {
		return walkErr(q.s, p, fmt.Sprintf("incorrect declared batch size: %d bytes left after %d records", end-r, h.NumRecords))
	}
	return nil
}

// answerMargin is read past the position answerEnd guesses, for records
// whose timestamps do not grow quite evenly.
const answerMargin = 4 << 10

// answerEnd guesses the position before which the batch at p (header h)
// holds the answer, as if its record timestamps grew evenly from
// BaseTimestamp to MaxTimestamp (producers append in time order), plus
// answerMargin; 0 when the timestamps say nothing. The walk's reads go at
// least that far: a batch in time order is read up to about the answer in
// one pread instead of in chunks. A wrong guess costs bytes, not answers.
func (q *timeQuery) answerEnd(p int64, h *record.BatchHeader) int64 {
	span := h.MaxTimestamp - h.BaseTimestamp
	if span <= 0 || q.ts <= h.BaseTimestamp || h.LogAppendTime() {
		return 0
	}
	frac := min(float64(q.ts-h.BaseTimestamp)/float64(span), 1)
	return p + int64(frac*float64(h.Size())) + answerMargin
}

// walkErr is a corruption error for the batch at p.
func walkErr(s *segment, p int64, reason string) error {
	return corruptErr(s, p, &record.CorruptionError{File: s.path, Pos: p, Reason: reason})
}

// recordPrefix parses the start of the V2 record at b[0] (b holds at least
// maxRecordPrefix bytes or the rest of the batch): the record's size with
// its length varint, its offset, and its timestamp (LogAppendTime applied).
// Each varint is read by the inlined uv2, or by varintSlow when longer.
func recordPrefix(b []byte, h *record.BatchHeader) (size, offset, ts int64, reason string) {
	u, n := uv2(b, 0)
	length := unzigzag(u)
	if n == 0 {
		length, n = varintSlow(b, 0, 5)
	}
	if n <= 0 || length < 0 {
		return 0, 0, 0, "bad record length"
	}
	body := b[n:min(int64(len(b)), int64(n)+length)] // its attributes byte is body[0]
	u, k1 := uv2(body, 1)
	tsDelta := unzigzag(u)
	if k1 == 0 && len(body) > 0 {
		tsDelta, k1 = varintSlow(body, 1, 10)
	}
	if k1 <= 0 {
		return 0, 0, 0, "bad timestamp delta varint"
	}
	u, k2 := uv2(body, 1+k1)
	offDelta := unzigzag(u)
	if k2 == 0 {
		offDelta, k2 = varintSlow(body, 1+k1, 5)
	}
	if k2 <= 0 {
		return 0, 0, 0, "bad offset delta varint"
	}
	if offDelta < 0 || offDelta > int64(h.LastOffsetDelta) {
		return 0, 0, 0, fmt.Sprintf("offset delta %d outside the batch's [0, %d]", offDelta, h.LastOffsetDelta)
	}
	ts = h.BaseTimestamp + tsDelta
	if h.LogAppendTime() {
		ts = h.MaxTimestamp
	}
	return int64(n) + length, h.BaseOffset + offDelta, ts, ""
}

// quickPrefix is recordPrefix for the common shape (length and deltas of
// one or two bytes each), without the reasons; !ok sends the caller to
// recordPrefix, which also says what is wrong.
func quickPrefix(b []byte, h *record.BatchHeader) (size, offset, ts int64, ok bool) {
	u, n := uv2(b, 0)
	t, k1 := uv2(b, n+1)
	o, k2 := uv2(b, n+1+k1)
	length, offDelta := int64(u>>1), unzigzag(o)
	if n == 0 || k1 == 0 || k2 == 0 || u&1 != 0 || int64(1+k1+k2) > length ||
		offDelta < 0 || offDelta > int64(h.LastOffsetDelta) {
		return 0, 0, 0, false
	}
	ts = h.BaseTimestamp + unzigzag(t)
	if h.LogAppendTime() {
		ts = h.MaxTimestamp
	}
	return int64(n) + length, h.BaseOffset + offDelta, ts, true
}

func unzigzag(u uint64) int64 { return int64(u>>1) ^ -int64(u&1) }

// uv2 decodes a 1- or 2-byte varint at b[i] (lengths and deltas below
// 8192: the common sizes); k == 0 when it is longer or b too short.
func uv2(b []byte, i int) (u uint64, k int) {
	if i+1 < len(b) {
		if c := b[i]; c < 0x80 {
			return uint64(c), 1
		}
		if c := b[i+1]; c < 0x80 {
			return uint64(b[i]&0x7f) | uint64(c)<<7, 2
		}
	}
	return 0, 0
}

// varintSlow reads the zigzag varint at b[i] of at most maxLen bytes (5:
// an int32, 10: an int64) that ends inside b; n < 0 when there is none.
//
//go:noinline
func varintSlow(b []byte, i, maxLen int) (v int64, n int) {
	u, n := binary.Uvarint(b[i:])
	if n <= 0 || n > maxLen || maxLen <= 5 && u > math.MaxUint32 {
		return 0, -1
	}
	return unzigzag(u), n
}
