package record

import "errors"

// BatchOptions tune one encoded V2 batch.
type BatchOptions struct {
	Codec           Codec
	LogAppendTime   bool  // attribute bit 3; LogAppendTimeMs becomes maxTimestamp
	LogAppendTimeMs int64 // used as maxTimestamp when LogAppendTime
	// DeleteHorizonMs > 0 sets attribute bit 6 and stores the horizon as
	// baseTimestamp (record deltas are then relative to it).
	DeleteHorizonMs int64

	// For the cleaner, which keeps the original batch's identity:
	// LastOffsetDelta > 0 overrides the delta (the batch keeps its last
	// offset although records were removed).
	LastOffsetDelta      int32
	Control              bool
	Transactional        bool
	ProducerID           int64
	ProducerEpoch        int16
	BaseSequence         int32
	PartitionLeaderEpoch int32
	// KeepProducer uses ProducerID, ProducerEpoch, BaseSequence and
	// PartitionLeaderEpoch as given; otherwise they are written as -1.
	KeepProducer bool
}

// Encoder writes V2 batches. It keeps reusable buffers and compressors, so
// reuse one Encoder per goroutine; the zero value is ready to use.
type Encoder struct {
	raw []byte // the uncompressed records area when compressing
}

// AppendBatch appends one V2 batch holding recs to dst and returns the
// extended slice. Record i gets offset baseOffset+i (Record.Offset is
// ignored); timestamps are used as given (baseTimestamp = the first,
// maxTimestamp = the largest). On error dst is returned unchanged in length.
func (e *Encoder) AppendBatch(dst []byte, baseOffset int64, recs []Record, opt BatchOptions) ([]byte, error) {
	return dst, errors.New("record: AppendBatch not implemented yet")
}
