package compression

import (
	"encoding/binary"
	"errors"
	"fmt"

	"github.com/pierrec/lz4/v4"
)

// LZ4 frame descriptor bits (LZ4 frame format v1.5.1, as Kafka reads it).
const (
	lz4Magic           = 0x184D2204
	lz4FlgVersionMask  = 0xc0
	lz4FlgVersion1     = 0x40
	lz4FlgIndependent  = 0x20
	lz4FlgBlockSum     = 0x10
	lz4FlgContentSize  = 0x08
	lz4FlgContentSum   = 0x04
	lz4FlgReservedMask = 0x03
	lz4BDSizeMask      = 0x70
	lz4BDReservedMask  = 0x8f
)

// lz4Frame is a parsed frame descriptor.
type lz4Frame struct {
	flg, bd  byte
	maxBlock int
}

// unKafkaLZ4 inflates one LZ4 frame as Kafka's Lz4BlockInputStream does:
// version 1, independent blocks, BD sizes 64 KiB..4 MiB, optional content
// size (skipped), block checksums verified when flagged, content checksum
// read but not verified. The header checksum is ignored for magic 0 (whose
// writers computed it over the magic too) and verified otherwise.
func unKafkaLZ4(dst, src []byte, magic int8, limit int) ([]byte, error) {
	f, rest, err := parseLZ4Header(src, magic)
	if err != nil {
		return dst, err
	}
	for {
		if len(rest) < 4 {
			return dst, errors.New("lz4: truncated block size")
		}
		size := binary.LittleEndian.Uint32(rest)
		rest = rest[4:]
		stored := size&lz4Uncompressed != 0
		size &^= lz4Uncompressed
		if size == 0 {
			return dst, nil // end mark; a content checksum may follow, unverified
		}
		if int64(size) > int64(f.maxBlock) || int64(size) > int64(len(rest)) {
			return dst, fmt.Errorf("lz4: block of %d bytes exceeds the block maximum or the data", size)
		}
		block := rest[:size]
		rest = rest[size:]
		if f.flg&lz4FlgBlockSum != 0 {
			if len(rest) < 4 || binary.LittleEndian.Uint32(rest) != xxh32(block) {
				return dst, errors.New("lz4: block checksum mismatch")
			}
			rest = rest[4:]
		}
		if dst, err = appendLZ4Block(dst, block, stored, f.maxBlock, limit); err != nil {
			return dst, err
		}
	}
}

func parseLZ4Header(src []byte, magic int8) (lz4Frame, []byte, error) {
	var f lz4Frame
	if len(src) < 7 || binary.LittleEndian.Uint32(src) != lz4Magic {
		return f, nil, errors.New("lz4: not an LZ4 frame")
	}
	f.flg, f.bd = src[4], src[5]
	switch {
	case f.flg&lz4FlgVersionMask != lz4FlgVersion1:
		return f, nil, fmt.Errorf("lz4: unsupported frame version in FLG %#02x", f.flg)
	case f.flg&lz4FlgReservedMask != 0 || f.bd&lz4BDReservedMask != 0:
		return f, nil, errors.New("lz4: reserved frame descriptor bits set")
	case f.flg&lz4FlgIndependent == 0:
		return f, nil, errors.New("lz4: dependent block stream is unsupported")
	case f.bd&lz4BDSizeMask < 0x40:
		return f, nil, fmt.Errorf("lz4: unsupported block size in BD %#02x", f.bd)
	}
	f.maxBlock = 1 << (8 + 2*int(f.bd>>4))
	hc := 6
	if f.flg&lz4FlgContentSize != 0 {
		hc += 8
	}
	if len(src) <= hc {
		return f, nil, errors.New("lz4: truncated frame descriptor")
	}
	if magic > 0 && byte(xxh32(src[4:hc])>>8) != src[hc] {
		return f, nil, errors.New("lz4: frame descriptor checksum mismatch")
	}
	return f, src[hc+1:], nil
}

// maxUnLZ4ed is the most bytes an LZ4 block of n bytes decodes to: a
// literal yields a byte per byte of it, a sequence's token and offset (3
// bytes) at most 19 match bytes, each match-length byte after them at
// most 255. The frame's block maximum (4 MiB for BD 0x70) is a claim; a
// small block gets no buffer of that size.
func maxUnLZ4ed(n int) int { return 255 * n }

// appendLZ4Block appends the block's content (stored, or compressed) to
// dst, at most limit bytes in all.
func appendLZ4Block(dst, block []byte, stored bool, maxBlock, limit int) ([]byte, error) {
	at := len(dst)
	if stored {
		if len(block) > limit-at {
			return dst, ErrTooBig
		}
		return append(dst, block...), nil
	}
	room := min(maxBlock, limit-at+1, maxUnLZ4ed(len(block)))
	dst = grow(dst, room)
	n, err := lz4.UncompressBlock(block, dst[at:at+room])
	if err != nil {
		if at+room > limit {
			return dst[:at], ErrTooBig
		}
		return dst[:at], fmt.Errorf("lz4: %w", err)
	}
	if at+n > limit {
		return dst[:at], ErrTooBig
	}
	return dst[:at+n], nil
}
