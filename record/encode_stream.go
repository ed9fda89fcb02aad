package record

import "encoding/binary"

// appendCompressed appends the records area of recs compressed with codec.
// Snappy and LZ4 are framed in fixed-size blocks of the records area
// (32 KiB xerial, 64 KiB LZ4), so each block is compressed as soon as the
// records filling it are written: the block is still in the L1/L2 cache
// when the compressor reads it, and e.raw stays about one block long. The
// bytes are those of compressing the whole area at once.
func (e *Encoder) appendCompressed(dst []byte, recs []Record, baseTs int64, deltas offsetDeltas, codec Codec) ([]byte, error) {
	var err error
	if codec != Snappy && codec != LZ4 {
		if e.raw, err = appendRecords(e.raw[:0], recs, baseTs, deltas); err != nil {
			return dst, err
		}
		return e.cmp.compress(dst, e.raw, codec)
	}
	block, header := xerialBlockSize, xerialHeader
	if codec == LZ4 {
		block, header = lz4BlockSize, kafkaLZ4Header
	}
	dst = append(dst, header...)
	raw, start := e.raw[:0], 0 // raw[start:] is not compressed yet
	for i := 0; i < len(recs) || start < len(raw); {
		if len(raw)-start < block && i < len(recs) {
			raw = raw[:copy(raw, raw[start:])] // less than a block: to the front
			start = 0
			if raw, i, err = appendRecordsUntil(raw, recs, i, block, baseTs, deltas); err != nil {
				e.raw = raw
				return dst, err
			}
			continue
		}
		chunk := raw[start:min(len(raw), start+block)]
		start += len(chunk)
		if codec == Snappy {
			dst = appendXerialBlock(dst, chunk)
		} else if dst, err = e.cmp.appendLZ4Block(dst, chunk); err != nil {
			e.raw = raw
			return dst, err
		}
	}
	e.raw = raw
	if codec == LZ4 {
		dst = binary.LittleEndian.AppendUint32(dst, 0)
	}
	return dst, nil
}
