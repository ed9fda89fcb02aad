package index

import (
	"encoding/binary"
	"math"
)

// Entry sizes in bytes.
const (
	OffsetEntrySize = 8
	TimeEntrySize   = 12
)

// Indexable reports whether offset can be indexed in a segment whose base
// offset is base: its relative offset, offset - base, fits 0..MaxInt32
// (Kafka's rule; a batch whose last offset does not goes to a new segment).
func Indexable(base, offset int64) bool {
	rel := offset - base
	return rel >= 0 && rel <= math.MaxInt32
}

// DecodeOffsetEntry decodes an 8-byte .index entry.
func DecodeOffsetEntry(b []byte) (relOffset int32, pos int32) {
	return int32(binary.BigEndian.Uint32(b)), int32(binary.BigEndian.Uint32(b[4:]))
}

// EncodeOffsetEntry appends an 8-byte .index entry to dst.
func EncodeOffsetEntry(dst []byte, relOffset, pos int32) []byte {
	dst = binary.BigEndian.AppendUint32(dst, uint32(relOffset))
	return binary.BigEndian.AppendUint32(dst, uint32(pos))
}

// DecodeTimeEntry decodes a 12-byte .timeindex entry.
func DecodeTimeEntry(b []byte) (timestamp int64, relOffset int32) {
	return int64(binary.BigEndian.Uint64(b)), int32(binary.BigEndian.Uint32(b[8:]))
}

// EncodeTimeEntry appends a 12-byte .timeindex entry to dst.
func EncodeTimeEntry(dst []byte, timestamp int64, relOffset int32) []byte {
	dst = binary.BigEndian.AppendUint64(dst, uint64(timestamp))
	return binary.BigEndian.AppendUint32(dst, uint32(relOffset))
}
