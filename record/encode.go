package record

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"slices"

	"github.com/partfs/partfs/compression"
	"github.com/partfs/partfs/internal/crc32c"
)

// BatchOptions tune one encoded V2 batch.
type BatchOptions struct {
	Codec           Codec
	LogAppendTime   bool  // attribute bit 3; LogAppendTimeMs becomes maxTimestamp
	LogAppendTimeMs int64 // used as maxTimestamp when LogAppendTime
	// DeleteHorizonMs > 0 sets attribute bit 6 and stores the horizon as
	// baseTimestamp (record deltas are then relative to it).
	DeleteHorizonMs int64
	// DefaultTimestampMs > 0 is the timestamp of the records whose
	// Timestamp is <= 0 (a log takes the time of the append for them);
	// 0 writes every Timestamp as given.
	DefaultTimestampMs int64

	// For the cleaner, which keeps the original batch's identity:
	// KeepOffsets writes each Record.Offset (offset delta = Offset -
	// baseOffset) instead of baseOffset+i, so a batch can keep the gaps
	// of removed records. Offsets must increase and lie in
	// [baseOffset, baseOffset+MaxInt32].
	KeepOffsets bool
	// LastOffsetDelta > 0 overrides the delta (the batch keeps its last
	// offset although records were removed); it must not be below the
	// last record's delta.
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

// Encoder writes V2 batches. It keeps reusable buffers and compression.Compressors, so
// use one Encoder per goroutine; the zero value is ready to use.
type Encoder struct {
	raw []byte // the uncompressed records area when compressing
	cmp compression.Compressors
	// lineCounts is AppendLineBatchesPiped's buffer of record counts
	lineCounts []int
}

// errTooLarge is returned for a batch that cannot be framed (int32 sizes).
var errTooLarge = errors.New("record: batch larger than 2 GiB")

// AppendBatch appends one V2 batch holding recs to dst and returns the
// extended slice. Record i gets offset baseOffset+i (Record.Offset is
// ignored) unless opt.KeepOffsets; timestamps are used as given
// (baseTimestamp = the first, maxTimestamp = the largest), but see
// opt.DefaultTimestampMs. On error dst is
// returned with its original length.
func (e *Encoder) AppendBatch(dst []byte, baseOffset int64, recs []Record, opt BatchOptions) ([]byte, error) {
	if !opt.Codec.Valid() {
		return dst, fmt.Errorf("record: cannot encode with codec %d", opt.Codec)
	}
	lastDelta, err := lastOffsetDelta(baseOffset, recs, &opt)
	if err != nil {
		return dst, err
	}
	start := len(dst)
	baseTs := baseTimestamp(recs, &opt)
	var maxTs int64
	dst = append(dst, make([]byte, BatchHeaderSize)...)
	deltas := offsetDeltas{keep: opt.KeepOffsets, base: baseOffset}
	if opt.Codec == None || len(recs) == 0 { // Kafka writes empty batches uncompressed
		opt.Codec = None
		dst, maxTs, err = appendRecordsDefault(dst, recs, baseTs, opt.DefaultTimestampMs, deltas)
	} else {
		e.raw, maxTs, err = appendRecordsDefault(e.raw[:0], recs, baseTs, opt.DefaultTimestampMs, deltas)
		if opt.Codec == LZ4 {
			e.raw = slices.Grow(e.raw, compression.InPlaceCap) // compressed in place
		}
		if err == nil {
			dst, err = e.cmp.Compress(dst, e.raw, opt.Codec)
		}
	}
	if err == nil && len(dst)-start-LogOverhead > math.MaxInt32 {
		err = errTooLarge
	}
	if err != nil {
		return dst[:start], err
	}
	writeHeader(dst[start:], baseOffset, len(recs), lastDelta, baseTs, opt.maxTimestamp(maxTs), &opt)
	return dst, nil
}

// errBatchesOptions refuses options AppendBatches does not take.
var errBatchesOptions = errors.New("record: AppendBatches writes uncompressed batches without the cleaner's options")

// checkBatchesOptions refuses what AppendBatches and AppendLineBatches do
// not take: a codec, or the cleaner's options.
func checkBatchesOptions(opt *BatchOptions) error {
	if opt.Codec != None || opt.KeepOffsets || opt.LastOffsetDelta != 0 || opt.DeleteHorizonMs != 0 {
		return errBatchesOptions
	}
	return nil
}

// AppendBatches appends recs to dst as consecutive uncompressed V2 batches
// of at most limit bytes each where it can, in one pass: a batch is cut
// before the record that would take it over limit (a record too large
// alone gets a batch of its own, which the caller may refuse). The bytes
// are those of AppendBatch on each batch's records; record i gets offset
// baseOffset+i. The end position in dst of each batch is appended to
// ends (no records, no batch). opt.Codec must be None and the cleaner's
// options (KeepOffsets, LastOffsetDelta, DeleteHorizonMs) unset. On error
// dst and ends are returned with their original lengths.
func (e *Encoder) AppendBatches(dst []byte, baseOffset int64, recs []Record, opt BatchOptions, limit int, ends []int) ([]byte, []int, error) {
	if err := checkBatchesOptions(&opt); err != nil {
		return dst, ends, err
	}
	start, nends := len(dst), len(ends)
	for from := 0; from < len(recs); {
		at := len(dst)
		dst = append(dst, make([]byte, BatchHeaderSize)...)
		baseTs := TimestampOf(&recs[from], opt.DefaultTimestampMs)
		var n int
		var maxTs int64
		var err error
		dst, n, maxTs, err = appendRecordsUpTo(dst, recs[from:], baseTs, opt.DefaultTimestampMs, offsetDeltas{}, at+limit)
		batch := recs[from : from+n]
		var lastDelta int32
		if err == nil {
			lastDelta, err = lastOffsetDelta(baseOffset+int64(from), batch, &opt)
		}
		if err == nil && len(dst)-at-LogOverhead > math.MaxInt32 {
			err = errTooLarge
		}
		if err != nil {
			return dst[:start], ends[:nends], err
		}
		writeHeader(dst[at:], baseOffset+int64(from), n, lastDelta, baseTs, opt.maxTimestamp(maxTs), &opt)
		ends = append(ends, len(dst))
		from += n
	}
	return dst, ends, nil
}

// baseTimestamp is the batch's baseTimestamp as Kafka writes it: the first
// record's, or the delete horizon (-1 without records). maxTimestamp comes
// from writing the records.
func baseTimestamp(recs []Record, opt *BatchOptions) int64 {
	if opt.DeleteHorizonMs > 0 {
		return opt.DeleteHorizonMs
	}
	if len(recs) == 0 {
		return -1
	}
	return TimestampOf(&recs[0], opt.DefaultTimestampMs)
}

// maxTimestamp is a batch's maxTimestamp given the largest of its record
// timestamps: LogAppendTimeMs under LogAppendTime.
func (opt *BatchOptions) maxTimestamp(max int64) int64 {
	if opt.LogAppendTime {
		return opt.LogAppendTimeMs
	}
	return max
}

// TimestampOf is the timestamp r is encoded with when the batch's
// DefaultTimestampMs is def.
func TimestampOf(r *Record, def int64) int64 {
	if r.Timestamp <= 0 && def > 0 {
		return def
	}
	return r.Timestamp
}

// writeHeader fills the 61-byte header at b[0:] and the CRC over b[21:].
func writeHeader(b []byte, baseOffset int64, n int, lastDelta int32, baseTs, maxTs int64, opt *BatchOptions) {
	be := binary.BigEndian
	pid, epoch, seq, ple := int64(-1), int16(-1), int32(-1), int32(-1)
	if opt.KeepProducer {
		pid, epoch, seq, ple = opt.ProducerID, opt.ProducerEpoch, opt.BaseSequence, opt.PartitionLeaderEpoch
	}
	be.PutUint64(b[0:], uint64(baseOffset))
	be.PutUint32(b[8:], uint32(len(b)-LogOverhead))
	be.PutUint32(b[12:], uint32(ple))
	b[16] = 2
	be.PutUint16(b[21:], uint16(attributes(opt)))
	be.PutUint32(b[23:], uint32(lastDelta))
	be.PutUint64(b[27:], uint64(baseTs))
	be.PutUint64(b[35:], uint64(maxTs))
	be.PutUint64(b[43:], uint64(pid))
	be.PutUint16(b[51:], uint16(epoch))
	be.PutUint32(b[53:], uint32(seq))
	be.PutUint32(b[57:], uint32(n))
	be.PutUint32(b[17:], crc32c.Checksum(b[21:]))
}

func attributes(opt *BatchOptions) int16 {
	a := int16(opt.Codec)
	if opt.LogAppendTime {
		a |= attrLogAppendTime
	}
	if opt.Transactional {
		a |= attrTransactional
	}
	if opt.Control {
		a |= attrControl
	}
	if opt.DeleteHorizonMs > 0 {
		a |= attrDeleteHorizon
	}
	return a
}
