package record

import (
	"encoding/binary"
	"fmt"
	"hash/crc32"
)

// legacyMsg is one parsed V0/V1 message (its slices alias the input).
type legacyMsg struct {
	offset    int64
	magic     int8
	codec     Codec
	appendTs  bool
	timestamp int64
	key       []byte
	value     []byte
}

// parseLegacy parses the message at the start of b ([offset][size][message])
// and returns it with its total size. It checks sizes and field bounds; the
// CRC only when checkCRC is set.
func parseLegacy(b []byte, checkCRC bool) (legacyMsg, int, string) {
	var m legacyMsg
	if len(b) < LogOverhead+legacyOverheadV0 {
		return m, 0, fmt.Sprintf("%d bytes cannot hold a message", len(b))
	}
	be := binary.BigEndian
	size := int64(int32(be.Uint32(b[8:])))
	m.offset, m.magic = int64(be.Uint64(b)), int8(b[16])
	overhead := int64(legacyOverheadV0)
	if m.magic == 1 {
		overhead = legacyOverheadV1
	} else if m.magic != 0 {
		return m, 0, fmt.Sprintf("magic %d in a legacy message set", m.magic)
	}
	if size < overhead || size > int64(len(b)-LogOverhead) {
		return m, 0, fmt.Sprintf("message size %d is invalid for the %d bytes left", size, len(b)-LogOverhead)
	}
	msg := b[LogOverhead : LogOverhead+size]
	if checkCRC {
		if got, want := crc32.ChecksumIEEE(msg[4:]), be.Uint32(msg); got != want {
			return m, 0, fmt.Sprintf("CRC mismatch: stored %08x, computed %08x", want, got)
		}
	}
	attr := msg[5]
	m.codec, m.appendTs, m.timestamp = Codec(attr&attrCodecMask), false, -1
	p := msg[6:]
	if m.magic == 1 {
		m.appendTs = attr&attrLogAppendTime != 0
		m.timestamp = int64(be.Uint64(p))
		p = p[8:]
	}
	var reason string
	if m.key, p, reason = readInt32Bytes(p, "key"); reason != "" {
		return m, 0, reason
	}
	if m.value, p, reason = readInt32Bytes(p, "value"); reason != "" {
		return m, 0, reason
	}
	if len(p) != 0 {
		return m, 0, fmt.Sprintf("%d bytes left inside the message after its value", len(p))
	}
	return m, LogOverhead + int(size), ""
}

// readInt32Bytes reads an int32 length (-1 = null) and that many bytes.
func readInt32Bytes(p []byte, what string) ([]byte, []byte, string) {
	if len(p) < 4 {
		return nil, nil, "no room for the " + what + " length"
	}
	l := int32(binary.BigEndian.Uint32(p))
	p = p[4:]
	if l == -1 {
		return nil, p, ""
	}
	if l < 0 || int(l) > len(p) {
		return nil, nil, fmt.Sprintf("%s length %d is invalid for the %d bytes left", what, l, len(p))
	}
	return p[:l:l], p[l:], ""
}

// recordsLegacy passes a V0/V1 message, or the inner messages of a
// compressed wrapper, to fn.
func (d *Decoder) recordsLegacy(b *Batch, fn func(*Record) bool) error {
	m, _, reason := parseLegacy(b.Raw, false)
	if reason != "" {
		return corruptf(b.File, b.Pos, "%s", reason)
	}
	if m.codec == None {
		d.setLegacy(&m, m.offset, m.timestamp)
		fn(&d.rec)
		return nil
	}
	inner, err := d.wrapperData(b, &m)
	if err != nil {
		return err
	}
	return d.innerRecords(b, &m, inner, fn)
}

// wrapperData decompresses a wrapper's value.
func (d *Decoder) wrapperData(b *Batch, m *legacyMsg) ([]byte, error) {
	switch {
	case !m.codec.ValidFor(m.magic):
		return nil, corruptf(b.File, b.Pos, "compression codec id %d is invalid for magic %d", int8(m.codec), m.magic)
	case m.value == nil:
		return nil, corruptf(b.File, b.Pos, "compressed message with a null value")
	}
	out, err := d.dec.Decompress(d.buf, m.value, m.codec, m.magic, d.limit())
	d.buf = out[:0]
	if err != nil {
		return nil, &CorruptionError{File: b.File, Pos: b.Pos, Reason: "cannot decompress " + m.codec.String() + " message set", Err: err}
	}
	return out, nil
}

// innerRecords validates all inner messages of a wrapper (V1 offsets need
// the last one), then passes them to fn with absolute offsets.
func (d *Decoder) innerRecords(b *Batch, w *legacyMsg, inner []byte, fn func(*Record) bool) error {
	var last int64
	count := 0
	for p := inner; len(p) > 0; count++ {
		m, n, reason := parseLegacy(p, true)
		if reason == "" && m.codec != None {
			reason = "nested compression inside a compressed message"
		}
		if reason != "" {
			return corruptf(b.File, b.Pos, "inner message %d of the %s wrapper: %s", count, w.codec, reason)
		}
		last, p = m.offset, p[n:]
	}
	if count == 0 {
		return corruptf(b.File, b.Pos, "compressed message set with no inner messages")
	}
	base := int64(-1) // V0 inner offsets are absolute
	if w.magic >= 1 && w.offset > 0 {
		base = w.offset - last // V1: relative inner offsets
	}
	for p := inner; len(p) > 0; {
		m, n, _ := parseLegacy(p, false)
		p = p[n:]
		off, ts := m.offset, m.timestamp
		if base >= 0 {
			off += base
		}
		if w.appendTs {
			ts = w.timestamp
		}
		d.setLegacy(&m, off, ts)
		if !fn(&d.rec) {
			return nil
		}
	}
	return nil
}

func (d *Decoder) setLegacy(m *legacyMsg, offset, ts int64) {
	d.rec = Record{Offset: offset, Timestamp: ts, Key: m.key, Value: m.value}
}
