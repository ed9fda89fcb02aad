package compression

import (
	"encoding/binary"
	"math/bits"
)

// xxh32 is xxHash32 with seed 0, as LZ4 frames use it for the header
// checksum (HC) and block checksums.
func xxh32(b []byte) uint32 {
	const (
		p1 uint32 = 2654435761
		p2 uint32 = 2246822519
		p3 uint32 = 3266489917
		p4 uint32 = 668265263
		p5 uint32 = 374761393
	)
	le := binary.LittleEndian
	n := uint32(len(b))
	var h uint32
	if len(b) >= 16 {
		var seed uint32
		v1, v2, v3, v4 := seed+p1+p2, seed+p2, seed, seed-p1
		for ; len(b) >= 16; b = b[16:] {
			v1 = bits.RotateLeft32(v1+le.Uint32(b)*p2, 13) * p1
			v2 = bits.RotateLeft32(v2+le.Uint32(b[4:])*p2, 13) * p1
			v3 = bits.RotateLeft32(v3+le.Uint32(b[8:])*p2, 13) * p1
			v4 = bits.RotateLeft32(v4+le.Uint32(b[12:])*p2, 13) * p1
		}
		h = bits.RotateLeft32(v1, 1) + bits.RotateLeft32(v2, 7) + bits.RotateLeft32(v3, 12) + bits.RotateLeft32(v4, 18)
	} else {
		h = p5
	}
	h += n
	for ; len(b) >= 4; b = b[4:] {
		h = bits.RotateLeft32(h+le.Uint32(b)*p3, 17) * p4
	}
	for _, c := range b {
		h = bits.RotateLeft32(h+uint32(c)*p5, 11) * p1
	}
	h ^= h >> 15
	h *= p2
	h ^= h >> 13
	h *= p3
	h ^= h >> 16
	return h
}
