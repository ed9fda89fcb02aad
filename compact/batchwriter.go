package compact

import (
	"github.com/partfs/partfs/record"
)

// batchWriter writes the cleaned form of a V2 batch with record.Encoder:
// the original header's identity (base offset, last offset delta, producer
// fields, leader epoch, timestamp type, transactional flag, codec) around
// the records that survive, each keeping its offset (KeepOffsets) and
// timestamp. Compression and its framing are record's (xerial snappy and
// Kafka's LZ4 frame, as Kafka's Java client writes them).
type batchWriter struct {
	enc record.Encoder
}

// appendBatch appends one V2 batch holding recs to dst. h is the original
// batch's header; horizon > 0 sets the delete horizon (attribute bit 6,
// baseTimestamp = horizon). recs must be non-empty, in offset order, inside
// [h.BaseOffset, h.LastOffset()].
func (w *batchWriter) appendBatch(dst []byte, h *record.BatchHeader, recs []record.Record, horizon int64) ([]byte, error) {
	opt := identity(h)
	opt.Codec, opt.KeepOffsets, opt.DeleteHorizonMs = h.Codec(), true, horizon
	opt.LogAppendTimeMs = h.MaxTimestamp
	return w.enc.AppendBatch(dst, h.BaseOffset, recs, opt)
}

// appendEmpty appends a header-only batch (no records) that keeps h's
// offsets and producer identity, as Kafka's writeEmptyHeader.
func (w *batchWriter) appendEmpty(dst []byte, h *record.BatchHeader) []byte {
	return w.enc.AppendEmptyBatch(dst, h.BaseOffset, h.MaxTimestamp, identity(h))
}

// identity returns the options that keep h's offsets, producer fields and
// flags.
func identity(h *record.BatchHeader) record.BatchOptions {
	return record.BatchOptions{
		LastOffsetDelta: h.LastOffsetDelta, KeepProducer: true,
		ProducerID: h.ProducerID, ProducerEpoch: h.ProducerEpoch, BaseSequence: h.BaseSequence,
		PartitionLeaderEpoch: h.PartitionLeaderEpoch,
		LogAppendTime:        h.LogAppendTime(), Transactional: h.IsTransactional(), Control: h.IsControl(),
	}
}
