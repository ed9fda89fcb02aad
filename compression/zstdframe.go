package compression

import (
	"encoding/binary"
	"fmt"
)

// Zstandard frame layout (RFC 8878 §3.1) as far as checkZstdClaims reads it.
const (
	zstdMagic          = 0xFD2FB528
	zstdSkippableMagic = 0x184D2A50 // low 4 bits vary
	zstdBlockMax       = 128 << 10  // Block_Maximum_Size, at most
	zstdBlockRLE       = 1
	zstdBlockReserved  = 3
)

// checkZstdClaims declines a frame of src whose Frame_Content_Size claims
// more than its blocks can decode to: a raw or RLE block its stated size,
// a compressed block at most zstdBlockMax. klauspost's DecodeAll makes its
// output buffer from the claim before it decodes a block (bounded only by
// 32 KiB per input byte), so a small frame of junk claiming 60 MiB would
// get a 60 MiB buffer. A frame with a claim whose blocks are not all
// there is declined too (it cannot decode); what the walk cannot read
// otherwise is left to the decoder.
func checkZstdClaims(src []byte) error {
	for len(src) >= 8 {
		magic := binary.LittleEndian.Uint32(src)
		if magic&^0xf == zstdSkippableMagic {
			n := binary.LittleEndian.Uint32(src[4:])
			if uint64(n) > uint64(len(src)-8) {
				return nil
			}
			src = src[8+n:]
			continue
		}
		if magic != zstdMagic {
			return nil
		}
		claim, claimed, checksum, blocks, ok := parseZstdHeader(src[4:])
		if !ok {
			return nil
		}
		most, rest, ok := zstdBlocksMax(blocks)
		if claimed && (!ok || claim > most) {
			return fmt.Errorf("zstd: a frame of %d bytes claims %d bytes of content, more than its blocks hold", len(src)-len(rest), claim)
		}
		if !ok || checksum && len(rest) < 4 {
			return nil
		}
		if checksum {
			rest = rest[4:]
		}
		src = rest
	}
	return nil
}

// parseZstdHeader reads a frame header after the magic: the content size
// when given, whether a checksum ends the frame, and the bytes after the
// header.
func parseZstdHeader(h []byte) (claim uint64, claimed, checksum bool, rest []byte, ok bool) {
	if len(h) < 1 {
		return 0, false, false, nil, false
	}
	fhd := h[0]
	single := fhd&0x20 != 0
	checksum = fhd&0x04 != 0
	dictLen := [4]int{0, 1, 2, 4}[fhd&3]
	fcsLen := [4]int{0, 2, 4, 8}[fhd>>6]
	if fcsLen == 0 && single {
		fcsLen = 1
	}
	at := 1 + dictLen
	if !single {
		at++ // Window_Descriptor
	}
	if len(h) < at+fcsLen {
		return 0, false, false, nil, false
	}
	var b [8]byte
	copy(b[:], h[at:at+fcsLen])
	claim = binary.LittleEndian.Uint64(b[:])
	if fcsLen == 2 {
		claim += 256
	}
	return claim, fcsLen > 0, checksum, h[at+fcsLen:], true
}

// zstdBlocksMax walks a frame's blocks: the most bytes they decode to and
// the bytes after the last block; false when a block runs past the end or
// has the reserved type.
func zstdBlocksMax(b []byte) (most uint64, rest []byte, ok bool) {
	for {
		if len(b) < 3 {
			return most, b, false
		}
		h := uint32(b[0]) | uint32(b[1])<<8 | uint32(b[2])<<16
		last, typ, size := h&1 != 0, h>>1&3, uint64(h>>3)
		b = b[3:]
		stored := size
		switch typ {
		case zstdBlockReserved:
			return most, b, false
		case zstdBlockRLE:
			stored = 1
		}
		if stored > uint64(len(b)) {
			return most, b, false
		}
		b = b[stored:]
		if typ == zstdBlockRLE || typ == 0 {
			most += size
		} else {
			most += zstdBlockMax
		}
		if last {
			return most, b, true
		}
	}
}
