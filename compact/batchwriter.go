package compact

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"hash/crc32"

	"github.com/partfs/partfs/record"
	"github.com/twmb/franz-go/pkg/kgo"
)

// Attribute bits of a V2 batch (docs/kafka-format.md §1.1).
const (
	attrCodecMask     = 0x07
	attrDeleteHorizon = 0x40
)

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// batchWriter writes the cleaned form of a V2 batch: the original header
// (base offset, last offset delta, producer fields, attributes, codec)
// around the records that survive, each keeping its offset and timestamp.
// It encodes the records area itself because a cleaned batch has gaps in
// its offset deltas, which record.Encoder (offset = base + index) cannot
// express. Compression uses franz-go's compressors (a raw snappy block for
// snappy, which Kafka's SnappyInputStream reads).
type batchWriter struct {
	area       []byte
	buf        bytes.Buffer
	compressor map[record.Codec]kgo.Compressor
}

// appendBatch appends one V2 batch holding recs to dst. h is the original
// batch's header; horizon > 0 sets the delete horizon (attribute bit 6,
// baseTimestamp = horizon). recs must be non-empty, in offset order, inside
// [h.BaseOffset, h.LastOffset()].
func (w *batchWriter) appendBatch(dst []byte, h *record.BatchHeader, recs []record.Record, horizon int64) ([]byte, error) {
	baseTs, maxTs := recs[0].Timestamp, int64(-1)
	for i := range recs {
		maxTs = max(maxTs, recs[i].Timestamp)
	}
	if horizon > 0 {
		baseTs = horizon
	}
	if h.LogAppendTime() {
		maxTs = h.MaxTimestamp
	}
	w.area = w.area[:0]
	for i := range recs {
		w.area = appendRecord(w.area, &recs[i], recs[i].Offset-h.BaseOffset, recs[i].Timestamp-baseTs)
	}
	body, err := w.compress(h.Codec(), w.area)
	if err != nil {
		return dst, err
	}
	start := len(dst)
	dst = append(dst, make([]byte, record.BatchHeaderSize)...)
	dst = append(dst, body...)
	attrs := h.Attributes &^ attrDeleteHorizon
	if horizon > 0 {
		attrs |= attrDeleteHorizon
	}
	putHeader(dst[start:], h, attrs, baseTs, maxTs, int32(len(recs)))
	return dst, nil
}

// appendEmpty appends a header-only batch (no records) that keeps h's
// offsets and producer identity, as Kafka's writeEmptyHeader.
func (w *batchWriter) appendEmpty(dst []byte, h *record.BatchHeader) []byte {
	start := len(dst)
	dst = append(dst, make([]byte, record.BatchHeaderSize)...)
	attrs := h.Attributes &^ (attrDeleteHorizon | attrCodecMask)
	putHeader(dst[start:], h, attrs, h.MaxTimestamp, h.MaxTimestamp, 0)
	return dst
}

// putHeader fills the 61-byte header at b and the CRC over b[21:].
func putHeader(b []byte, h *record.BatchHeader, attrs int16, baseTs, maxTs int64, count int32) {
	be := binary.BigEndian
	be.PutUint64(b[0:], uint64(h.BaseOffset))
	be.PutUint32(b[8:], uint32(len(b)-record.LogOverhead))
	be.PutUint32(b[12:], uint32(h.PartitionLeaderEpoch))
	b[16] = 2
	be.PutUint16(b[21:], uint16(attrs))
	be.PutUint32(b[23:], uint32(h.LastOffsetDelta))
	be.PutUint64(b[27:], uint64(baseTs))
	be.PutUint64(b[35:], uint64(maxTs))
	be.PutUint64(b[43:], uint64(h.ProducerID))
	be.PutUint16(b[51:], uint16(h.ProducerEpoch))
	be.PutUint32(b[53:], uint32(h.BaseSequence))
	be.PutUint32(b[57:], uint32(count))
	be.PutUint32(b[17:], crc32.Checksum(b[21:], castagnoli))
}

// appendRecord appends one V2 record (docs/kafka-format.md §1.2).
func appendRecord(b []byte, r *record.Record, offDelta, tsDelta int64) []byte {
	body := 1 + varintLen(tsDelta) + varintLen(offDelta) + bytesLen(r.Key) + bytesLen(r.Value) + varintLen(int64(len(r.Headers)))
	for i := range r.Headers {
		body += varintLen(int64(len(r.Headers[i].Key))) + len(r.Headers[i].Key) + bytesLen(r.Headers[i].Value)
	}
	b = binary.AppendVarint(b, int64(body))
	b = append(b, 0)
	b = binary.AppendVarint(b, tsDelta)
	b = binary.AppendVarint(b, offDelta)
	b = appendBytes(b, r.Key)
	b = appendBytes(b, r.Value)
	b = binary.AppendVarint(b, int64(len(r.Headers)))
	for i := range r.Headers {
		b = binary.AppendVarint(b, int64(len(r.Headers[i].Key)))
		b = append(b, r.Headers[i].Key...)
		b = appendBytes(b, r.Headers[i].Value)
	}
	return b
}

func appendBytes(b, v []byte) []byte {
	if v == nil {
		return binary.AppendVarint(b, -1)
	}
	b = binary.AppendVarint(b, int64(len(v)))
	return append(b, v...)
}

func bytesLen(v []byte) int {
	if v == nil {
		return 1
	}
	return varintLen(int64(len(v))) + len(v)
}

func varintLen(v int64) int {
	var tmp [binary.MaxVarintLen64]byte
	return binary.PutVarint(tmp[:], v)
}

// compress returns src compressed with codec (src itself for None).
func (w *batchWriter) compress(codec record.Codec, src []byte) ([]byte, error) {
	if codec == record.None {
		return src, nil
	}
	c, err := w.compressorFor(codec)
	if err != nil {
		return nil, err
	}
	w.buf.Reset()
	out, used := c.Compress(&w.buf, src)
	if int8(used) != int8(codec) {
		return nil, fmt.Errorf("compact: %v compression failed", codec)
	}
	return out, nil
}

func (w *batchWriter) compressorFor(codec record.Codec) (kgo.Compressor, error) {
	if c, ok := w.compressor[codec]; ok {
		return c, nil
	}
	var cc kgo.CompressionCodec
	switch codec {
	case record.Gzip:
		cc = kgo.GzipCompression()
	case record.Snappy:
		cc = kgo.SnappyCompression()
	case record.LZ4:
		cc = kgo.Lz4Compression()
	case record.Zstd:
		cc = kgo.ZstdCompression()
	default:
		return nil, fmt.Errorf("compact: cannot compress with codec %v", codec)
	}
	c, err := kgo.DefaultCompressor(cc)
	if err != nil {
		return nil, fmt.Errorf("compact: %v compressor: %w", codec, err)
	}
	if w.compressor == nil {
		w.compressor = map[record.Codec]kgo.Compressor{}
	}
	w.compressor[codec] = c
	return c, nil
}
