package record

import (
	"fmt"
	"math"
)

// What the log cleaner needs to rebuild a batch without some of its
// records while keeping the batch's identity: kept offsets (gaps in the
// offset deltas), checked here, and Kafka's header-only empty batch.

// offsetDeltas says how records get their offset delta: their index, or
// with keep their Offset - base (already checked by lastOffsetDelta).
type offsetDeltas struct {
	keep bool
	base int64
}

// AppendEmptyBatch appends a header-only batch (no records, uncompressed),
// as Kafka's DefaultRecordBatch.writeEmptyHeader: the cleaner keeps one
// for a producer whose records are all gone. baseTimestamp is -1,
// maxTimestamp is maxTs; opt supplies LastOffsetDelta, the producer fields
// (KeepProducer), LogAppendTime, Transactional and Control, while Codec,
// DeleteHorizonMs, LogAppendTimeMs and KeepOffsets are ignored.
func (e *Encoder) AppendEmptyBatch(dst []byte, baseOffset, maxTs int64, opt BatchOptions) []byte {
	opt.Codec, opt.DeleteHorizonMs = None, 0
	start := len(dst)
	dst = append(dst, make([]byte, BatchHeaderSize)...)
	writeHeader(dst[start:], baseOffset, 0, max(opt.LastOffsetDelta, 0), -1, maxTs, &opt)
	return dst
}

// lastOffsetDelta returns the batch's last offset delta and checks kept
// offsets (opt.KeepOffsets).
func lastOffsetDelta(baseOffset int64, recs []Record, opt *BatchOptions) (int32, error) {
	last := int64(len(recs) - 1)
	if opt.KeepOffsets {
		prev := int64(-1)
		for i := range recs {
			d := recs[i].Offset - baseOffset
			if d <= prev || d > math.MaxInt32 || recs[i].Offset < baseOffset {
				return 0, fmt.Errorf("record: record %d at offset %d does not follow offset %d in a batch based at %d",
					i, recs[i].Offset, baseOffset+prev, baseOffset)
			}
			prev = d
		}
		last = prev
	} else if last > math.MaxInt32 {
		return 0, errTooLarge
	}
	if opt.LastOffsetDelta > 0 {
		if int64(opt.LastOffsetDelta) < last {
			return 0, fmt.Errorf("record: last offset delta %d is below the last record's %d", opt.LastOffsetDelta, last)
		}
		return opt.LastOffsetDelta, nil
	}
	return int32(max(last, 0)), nil
}
