package logstore

import (
	"fmt"

	"github.com/partfs/partfs/record"
)

// recordChunk is the least a time lookup's record walk reads at a time
// (more when answerEnd guesses the answer further on).
const recordChunk = 32 << 10

// walk searches the uncompressed V2 batch at p (header h) for q's answer
// record by record, reading the records through w (up to answerEnd's
// guess, then chunk by chunk) and parsing only each record's length,
// timestamp delta and offset delta, up to the answer. As Kafka's
// FileRecords.searchForTimestamp, it does not check the batch CRC: CRCs
// are left to reads, which return the bytes. It checks the structure it
// walks instead (varints, record sizes inside the batch, offset deltas
// inside the batch's, the record count against the bytes), so corrupt
// bytes give a corruption error naming the batch, never an offset outside
// it.
func (q *timeQuery) walk(w *fileView, p int64, h *record.BatchHeader) error {
	end := p + h.Size()
	r := p + record.BatchHeaderSize
	guess := q.answerEnd(p, h)
	for i := int32(0); i < h.NumRecords; i++ {
		if r == end {
			return walkErr(q.s, p, fmt.Sprintf("batch declares %d records but its bytes hold only %d", h.NumRecords, i))
		}
		b, err := w.held(r, record.MaxRecordPrefix), error(nil)
		if b == nil {
			if b, err = w.at(q.s, r, record.MaxRecordPrefix, max(recordChunk, guess-r), end, "a record"); err != nil {
				return scanErr(q.s, p, err)
			}
		}
		size, offset, ts, reason := record.RecordPrefix(b, h)
		if reason == "" && size > end-r {
			reason = fmt.Sprintf("%d bytes run past the batch end", size)
		}
		if reason != "" {
			return walkErr(q.s, p, fmt.Sprintf("record %d of %d at position %d: %s", i, h.NumRecords, r, reason))
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
