package record

import "encoding/binary"

// Sizes of Kafka's framing (see docs/format-record.md).
const (
	// BatchHeaderSize is the size of a V2 batch header (RECORD_BATCH_OVERHEAD).
	BatchHeaderSize = 61
	// LogOverhead is the offset + size prefix every batch or message starts with.
	LogOverhead = 12
	// headerUpToMagic is what must be present to tell the format (offset, size, epoch/crc, magic).
	headerUpToMagic = 17
	// legacyOverheadV0/V1 are Kafka's RECORD_OVERHEAD_V0/V1 (crc .. value length).
	legacyOverheadV0 = 14
	legacyOverheadV1 = 22
)

// Attribute bits of a V2 batch (the low byte of the int16 attributes).
const (
	attrCodecMask     = 0x07
	attrLogAppendTime = 0x08
	attrTransactional = 0x10
	attrControl       = 0x20
	attrDeleteHorizon = 0x40
)

// BatchHeader is the 61-byte header of a V2 batch. For a legacy V0/V1
// message (or compressed wrapper) it is synthesized: Magic 0/1, BaseOffset =
// LastOffset = the message's offset field, Length = its size field,
// Attributes = its attribute byte (codec and timestamp type), BaseTimestamp =
// MaxTimestamp = its timestamp (-1 for V0), NumRecords = 1, producer fields
// and PartitionLeaderEpoch -1.
type BatchHeader struct {
	BaseOffset           int64
	Length               int32
	PartitionLeaderEpoch int32
	Magic                int8
	CRC                  uint32
	Attributes           int16
	LastOffsetDelta      int32
	BaseTimestamp        int64
	MaxTimestamp         int64
	ProducerID           int64
	ProducerEpoch        int16
	BaseSequence         int32
	NumRecords           int32
}

// Size is the total size of the batch in bytes, including the 12-byte log overhead.
func (h *BatchHeader) Size() int64 { return LogOverhead + int64(h.Length) }

// LastOffset is the offset of the batch's last record (as the header says).
func (h *BatchHeader) LastOffset() int64 { return h.BaseOffset + int64(h.LastOffsetDelta) }

// Codec is the compression codec of the records area (or legacy wrapper value).
func (h *BatchHeader) Codec() Codec { return Codec(h.Attributes & attrCodecMask) }

// IsControl reports a control batch (transaction markers and the like).
func (h *BatchHeader) IsControl() bool { return h.Attributes&attrControl != 0 }

// IsTransactional reports a batch written inside a transaction.
func (h *BatchHeader) IsTransactional() bool { return h.Attributes&attrTransactional != 0 }

// LogAppendTime reports the LOG_APPEND_TIME timestamp type: every record's
// timestamp is then MaxTimestamp.
func (h *BatchHeader) LogAppendTime() bool { return h.Attributes&attrLogAppendTime != 0 }

// DeleteHorizon returns the delete horizon a cleaner stored in
// BaseTimestamp, if attribute bit 6 is set (V2 only).
func (h *BatchHeader) DeleteHorizon() (int64, bool) {
	if h.Magic >= 2 && h.Attributes&attrDeleteHorizon != 0 {
		return h.BaseTimestamp, true
	}
	return -1, false
}

// ParseHeader reads the header at the start of b (any magic) and checks its
// size bounds only (no CRC, and b need not hold the whole batch). Too few
// bytes for the header is an ErrTruncated error; a size below the format's
// minimum or an unknown magic is a *CorruptionError (positions relative to b).
func ParseHeader(b []byte) (BatchHeader, error) {
	return parseHeaderAt(b, "", 0)
}

func parseHeaderAt(b []byte, file string, pos int64) (BatchHeader, error) {
	if len(b) < headerUpToMagic {
		return BatchHeader{}, truncated(file, pos, "only %d bytes left, a batch header needs %d", len(b), headerUpToMagic)
	}
	switch magic := int8(b[16]); magic {
	case 2:
		return parseV2Header(b, file, pos)
	case 0, 1:
		return parseLegacyHeader(b, file, pos)
	default:
		return BatchHeader{}, corruptf(file, pos, "unknown magic %d", magic)
	}
}

func parseV2Header(b []byte, file string, pos int64) (BatchHeader, error) {
	be := binary.BigEndian
	h := BatchHeader{BaseOffset: int64(be.Uint64(b)), Length: int32(be.Uint32(b[8:]))}
	if h.Size() < BatchHeaderSize {
		return h, corruptf(file, pos, "batch size %d is smaller than the minimum %d", h.Size(), BatchHeaderSize)
	}
	if len(b) < BatchHeaderSize {
		return h, truncated(file, pos, "only %d bytes of a %d-byte batch header", len(b), BatchHeaderSize)
	}
	h.PartitionLeaderEpoch = int32(be.Uint32(b[12:]))
	h.Magic = 2
	h.CRC = be.Uint32(b[17:])
	h.Attributes = int16(be.Uint16(b[21:]))
	h.LastOffsetDelta = int32(be.Uint32(b[23:]))
	h.BaseTimestamp = int64(be.Uint64(b[27:]))
	h.MaxTimestamp = int64(be.Uint64(b[35:]))
	h.ProducerID = int64(be.Uint64(b[43:]))
	h.ProducerEpoch = int16(be.Uint16(b[51:]))
	h.BaseSequence = int32(be.Uint32(b[53:]))
	h.NumRecords = int32(be.Uint32(b[57:]))
	if h.NumRecords < 0 {
		return h, corruptf(file, pos, "negative record count %d", h.NumRecords)
	}
	return h, nil
}

func parseLegacyHeader(b []byte, file string, pos int64) (BatchHeader, error) {
	be := binary.BigEndian
	h := BatchHeader{
		BaseOffset: int64(be.Uint64(b)), Length: int32(be.Uint32(b[8:])),
		PartitionLeaderEpoch: -1, Magic: int8(b[16]), CRC: be.Uint32(b[12:]),
		BaseTimestamp: -1, MaxTimestamp: -1, ProducerID: -1, ProducerEpoch: -1, BaseSequence: -1, NumRecords: 1,
	}
	min := int32(legacyOverheadV0)
	if h.Magic == 1 {
		min = legacyOverheadV1
	}
	if h.Length < min {
		return h, corruptf(file, pos, "message size %d is smaller than the minimum %d for magic %d", h.Length, min, h.Magic)
	}
	if len(b) < LogOverhead+int(min)-8 {
		return h, truncated(file, pos, "only %d bytes of a message header", len(b))
	}
	attr := b[17]
	h.Attributes = int16(attr & (attrCodecMask | attrLogAppendTime))
	if h.Magic == 0 {
		h.Attributes &= attrCodecMask
		return h, nil
	}
	h.BaseTimestamp = int64(be.Uint64(b[18:]))
	h.MaxTimestamp = h.BaseTimestamp
	return h, nil
}
