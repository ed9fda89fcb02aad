package compression

import (
	"encoding/binary"
	"math/bits"
)

// LZ4 block compression as the format's reference fast compressor does it
// at acceleration 1 (lz4-java's fastCompressor, Kafka's default level):
// one position hashed per step, the step growing by one for every 64
// misses, a 16-bit position table of 8,192 entries for blocks of at most
// 64 KiB, and the block format's end rules: the last 5 bytes are literals
// and no match starts in the last 12.
const (
	lz4HashLog      = 13
	lz4MinMatch     = 4
	lz4LastLiterals = 5
	lz4MFLimit      = 12
	lz4SkipTrigger  = 6
	lz4MaxInput     = 1 << 16
	// lz4Padded is what compression reads a block through: 64 KiB and
	// 8 bytes of slack, so that a load at any position masked to 16 bits
	// needs no bounds check.
	lz4Padded = lz4MaxInput + 8
	lz4Mask   = lz4MaxInput - 1
)

// lz4Table maps a hash of 4 bytes to the last block position holding them.
type lz4Table [1 << lz4HashLog]uint16

func lz4Hash(x uint32) uint32 { return x * 2654435761 >> (32 - lz4HashLog) & (1<<lz4HashLog - 1) }

func lz4Load32(w *[lz4Padded]byte, i int) uint32 {
	i &= lz4Mask
	return uint32(w[i]) | uint32(w[i+1])<<8 | uint32(w[i+2])<<16 | uint32(w[i+3])<<24
}

func lz4Load64(w *[lz4Padded]byte, i int) uint64 {
	i &= lz4Mask
	return binary.LittleEndian.Uint64(w[i : i+8])
}

// lz4BlockBound is the most bytes compressing n bytes into a block takes.
func lz4BlockBound(n int) int { return n + n/255 + 16 }

// compressBlock writes src (at most 64 KiB) as one LZ4 block to dst, which
// must hold lz4BlockBound(len(src)) bytes, and returns its length. It
// reads src through its capacity when that holds lz4Padded bytes, else
// through a copy in scratch.
func (t *lz4Table) compressBlock(dst, src []byte, scratch *[lz4Padded]byte) int {
	*t = lz4Table{}
	n := len(src)
	if n > lz4MaxInput {
		panic("record: lz4 block input over 64 KiB")
	}
	w := scratch
	if cap(src) >= lz4Padded {
		w = (*[lz4Padded]byte)(src[:lz4Padded])
	} else {
		copy(w[:], src)
	}
	di, anchor := 0, 0
	if n > lz4MFLimit {
		di, anchor = t.compressMatches(dst, w, n)
	}
	return appendLZ4Sequence(dst, di, src[anchor:], 0, 0)
}

// compressMatches writes the sequences of src's matches and returns the
// length written and where the trailing literals start. Table entries
// never point at or past the position searched, and every position is
// under 64 KiB, so every offset is in 1..65535.
func (t *lz4Table) compressMatches(dst []byte, src *[lz4Padded]byte, n int) (di, anchor int) {
	limit := n - lz4MFLimit + 1 // no match starts here or later
	matchEnd := n - lz4LastLiterals
	t[lz4Hash(lz4Load32(src, 0))] = 0
	ip := 1
	fh := lz4Hash(lz4Load32(src, ip))
	for {
		// Search: ip is where the next match would start.
		fip, step, misses := ip, 1, 1<<lz4SkipTrigger
		var ref int
		for {
			h := fh
			ip = fip
			fip += step
			step = misses >> lz4SkipTrigger
			misses++
			if fip > limit {
				return di, anchor
			}
			ref = int(t[h])
			fh = lz4Hash(lz4Load32(src, fip))
			t[h] = uint16(ip)
			if lz4Load32(src, ref) == lz4Load32(src, ip) {
				break
			}
		}
		for ip > anchor && ref > 0 && src[(ip-1)&lz4Mask] == src[(ref-1)&lz4Mask] {
			ip--
			ref--
		}
		for {
			m := lz4MinMatch + matchLen(src, ip+lz4MinMatch, ref+lz4MinMatch, matchEnd)
			di = appendLZ4Sequence(dst, di, src[anchor:ip], ip-ref, m)
			ip += m
			anchor = ip
			if ip >= limit {
				return di, anchor
			}
			t[lz4Hash(lz4Load32(src, ip-2))] = uint16(ip - 2)
			h := lz4Hash(lz4Load32(src, ip))
			ref = int(t[h])
			t[h] = uint16(ip)
			if lz4Load32(src, ref) != lz4Load32(src, ip) {
				break
			}
		}
		ip++
		fh = lz4Hash(lz4Load32(src, ip))
	}
}

// matchLen counts the bytes from i that equal those from ref, up to end.
func matchLen(src *[lz4Padded]byte, i, ref, end int) int {
	start := i
	for i+8 <= end {
		if x := lz4Load64(src, i) ^ lz4Load64(src, ref); x != 0 {
			return i + bits.TrailingZeros64(x)>>3 - start
		}
		i += 8
		ref += 8
	}
	for i < end && src[i&lz4Mask] == src[ref&lz4Mask] {
		i++
		ref++
	}
	return i - start
}

// appendLZ4Sequence writes at dst[di:] one sequence: the token, lit, and,
// if m > 0, the match's offset and length; it returns the new length.
func appendLZ4Sequence(dst []byte, di int, lit []byte, offset, m int) int {
	tok := di
	di++
	l := len(lit)
	if l >= 15 {
		dst[tok] = 15 << 4
		di = appendLZ4Length(dst, di, l-15)
	} else {
		dst[tok] = byte(l << 4)
	}
	di += copy(dst[di:], lit)
	if m == 0 {
		return di
	}
	binary.LittleEndian.PutUint16(dst[di:], uint16(offset))
	di += 2
	if m -= lz4MinMatch; m >= 15 {
		dst[tok] |= 15
		return appendLZ4Length(dst, di, m-15)
	}
	dst[tok] |= byte(m)
	return di
}

// appendLZ4Length writes a length's extension bytes: 255s, then the rest.
func appendLZ4Length(dst []byte, di, l int) int {
	for ; l >= 255; l -= 255 {
		dst[di] = 255
		di++
	}
	dst[di] = byte(l)
	return di + 1
}
