package record

import "math/bits"

// Kafka's varints are zigzag protobuf varints (ByteUtils.readVarint): at most
// 5 bytes for an int32 and 10 for an int64. Go's binary.AppendVarint writes
// the identical bytes.

// varintLen is the encoded size of v as a zigzag varint.
func varintLen(v int64) int {
	u := uint64(v<<1) ^ uint64(v>>63)
	return (9*bits.Len64(u|1) + 64) / 64
}

func zigzag64(v int64) uint64 { return uint64(v<<1) ^ uint64(v>>63) }

// packUvarint3 returns the varint bytes of u (< 1<<21) packed into a
// little-endian word, and how many there are.
func packUvarint3(u uint64) (uint64, int) {
	if u < 0x80 {
		return u, 1
	}
	lo := u&0x7f | u<<1&0x7f00 | 0x80
	if u < 1<<14 {
		return lo, 2
	}
	return lo | u<<2&0x7f0000 | 0x8000, 3
}

// appendVarint appends v as a zigzag varint (1 and 2 bytes inline).
func appendVarint(b []byte, v int64) []byte {
	u := uint64(v<<1) ^ uint64(v>>63)
	if u < 0x80 {
		return append(b, byte(u))
	}
	if u < 1<<14 {
		return append(b, byte(u)|0x80, byte(u>>7))
	}
	return appendUvarintSlow(b, u)
}

//go:noinline
func appendUvarintSlow(b []byte, u uint64) []byte {
	for u >= 0x80 {
		b = append(b, byte(u)|0x80)
		u >>= 7
	}
	return append(b, byte(u))
}

// readVarint32 reads a zigzag varint of at most 5 bytes that fits an int32.
// n is the number of bytes read; n <= 0 means too short (0) or overlong (<0).
// The 1- and 2-byte cases are inlined.
func readVarint32(b []byte) (v int32, n int) {
	if len(b) > 1 {
		if b[0] < 0x80 {
			return int32(b[0]>>1) ^ -int32(b[0]&1), 1
		}
		if b[1] < 0x80 {
			u := uint32(b[0]&0x7f) | uint32(b[1])<<7
			return int32(u>>1) ^ -int32(u&1), 2
		}
	}
	return readVarint32Slow(b)
}

//go:noinline
func readVarint32Slow(b []byte) (v int32, n int) {
	u, n := readUvarintSlow(b, 5, 0x0f)
	return int32(uint32(u)>>1) ^ -int32(u&1), n
}

// readVarint64 reads a zigzag varint of at most 10 bytes (1 byte inlined).
func readVarint64(b []byte) (v int64, n int) {
	if len(b) > 0 && b[0] < 0x80 {
		return int64(b[0]>>1) ^ -int64(b[0]&1), 1
	}
	return readVarint64Slow(b)
}

//go:noinline
func readVarint64Slow(b []byte) (v int64, n int) {
	u, n := readUvarintSlow(b, 10, 1)
	return int64(u>>1) ^ -int64(u&1), n
}

// readUvarintSlow reads an unsigned varint of at most size bytes whose
// last byte may hold at most top. n is the number of bytes read; n <= 0
// means too short (0) or overlong (<0), and u is then 0.
func readUvarintSlow(b []byte, size int, top byte) (u uint64, n int) {
	for i := 0; i < size; i++ {
		if i >= len(b) {
			return 0, 0
		}
		c := b[i]
		if i == size-1 && c > top {
			return 0, -1
		}
		u |= uint64(c&0x7f) << (7 * i)
		if c < 0x80 {
			return u, i + 1
		}
	}
	return 0, -1
}
