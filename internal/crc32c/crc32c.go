// Package crc32c computes CRC-32C (Castagnoli), the checksum of Kafka's V2
// record batches, with the results of hash/crc32's Castagnoli table.
//
// On amd64 with AVX-512 and VPCLMULQDQ, inputs of foldMin bytes or more
// are folded 256 bytes at a time with carry-less multiplications (four
// 512-bit accumulators) and the 16 bytes left are reduced with the CRC32
// instruction; the rest of an input, and every input elsewhere, goes to
// hash/crc32, whose SSE 4.2 code handles 8 bytes per instruction.
package crc32c

import (
	"hash/crc32"
	"math/bits"
)

var table = crc32.MakeTable(crc32.Castagnoli)

// Checksum returns the CRC-32C of p.
func Checksum(p []byte) uint32 { return Update(0, p) }

// Update returns the CRC-32C of the bytes whose checksum is crc followed
// by p, as crc32.Update(crc, crc32.MakeTable(crc32.Castagnoli), p).
func Update(crc uint32, p []byte) uint32 {
	if useFold && len(p) >= foldMin {
		n := len(p) &^ 63
		crc = fold(crc, p[:n], &foldKeys)
		p = p[n:]
	}
	return crc32.Update(crc, table, p)
}

// foldMin is the shortest input folded: below it hash/crc32 is as fast.
const foldMin = 512

// foldKeys are, per folding distance d (2048, 512 and 128 bits), the
// multipliers of a 128-bit lane's two halves: x^(d+63) and x^(d-1) mod
// the polynomial. In the bit-reflected order of the data, a 64-bit
// carry-less product comes out one bit low, hence 63 and -1 rather than
// 64 and 0; each multiplier, of degree 31 at most, sits in the high half
// of its 64-bit word.
var foldKeys = [6]uint64{
	key(2048 + 63), key(2048 - 1),
	key(512 + 63), key(512 - 1),
	key(128 + 63), key(128 - 1),
}

// castagnoli is the CRC-32C polynomial without its x^32 term, bit i the
// coefficient of x^i.
const castagnoli = 0x1EDC6F41

// key is x^n mod the polynomial, bit-reflected into a 64-bit word's high
// half.
func key(n int) uint64 {
	r := uint32(1)
	for ; n > 0; n-- {
		carry := r >> 31
		r = r<<1 ^ castagnoli&-carry
	}
	return uint64(bits.Reverse32(r)) << 32
}
