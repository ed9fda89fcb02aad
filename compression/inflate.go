package compression

import (
	"encoding/binary"
	"errors"
	"hash/crc32"
	"sync"
)

// A one-shot inflater for the gzip payloads Kafka's producers write: one
// member with no optional header fields, its whole output in memory. It
// decodes straight into the output slice through two-level Huffman tables
// and a 64-bit bit buffer filled 8 bytes at a time. Anything else, and
// any stream it finds malformed, it declines (errInflateDeclined), and the
// caller inflates with the general reader, whose result and errors stand.
// It declines every stream that reader rejects, so the two agree on what
// decodes (FuzzInflate checks that).

var errInflateDeclined = errors.New("inflate: declined")

const (
	litBits   = 10 // primary table bits, literal/length code
	distBits  = 8  // primary table bits, distance code
	clenBits  = 7  // the code length code (lengths of at most 7)
	maxCodeLn = 15
)

// A Huffman table: 1<<bits primary entries, then the subtables. An entry
// is a leaf, a kind flag | value<<8 | extra bits<<4 | code bits to take
// (the bits after the primary ones, in a subtable), or huffSub | subtable
// start<<8 | its index bits; 0 is no code.
type (
	litTable  [1<<litBits + 288<<(maxCodeLn-litBits)]uint32
	distTable [1<<distBits + 32<<(maxCodeLn-distBits)]uint32
)

// Entry kinds: a literal byte or code length symbol, a length or distance
// base, the end of the block.
const (
	huffSub = 1 << 31
	huffLit = 1 << 30
	huffLen = 1 << 29
	huffEnd = 1 << 28
)

// The leaves' values by symbol, code bits not included: literal/length
// (RFC 1951 3.2.5; 286-287 are no symbols), distance (30-31 none), code
// length.
var litLeaves, distLeaves, clenLeaves = func() (lit [288]uint32, dist [32]uint32, clen [19]uint32) {
	lenBase := [29]uint32{3, 4, 5, 6, 7, 8, 9, 10, 11, 13, 15, 17, 19, 23, 27, 31, 35, 43, 51, 59, 67, 83, 99, 115, 131, 163, 195, 227, 258}
	for i := range 256 {
		lit[i] = huffLit | uint32(i)<<8
	}
	lit[256] = huffEnd
	for i, b := range lenBase {
		x := uint32(max(i-4, 0) / 4)
		if i == 28 {
			x = 0
		}
		lit[257+i] = huffLen | b<<8 | x<<4
	}
	for i, b := 0, uint32(1); i < 30; i++ {
		x := uint32(max(i-2, 0) / 2)
		dist[i] = huffLen | b<<8 | x<<4
		b += 1 << x
	}
	for i := range clen {
		clen[i] = huffLit | uint32(i)<<8
	}
	return
}()

var clenOrder = [19]uint8{16, 17, 18, 0, 8, 7, 9, 6, 10, 5, 11, 4, 12, 3, 13, 2, 14, 1, 15}

// fixedTables are the tables of the fixed Huffman codes (block type 1).
var fixedTables = sync.OnceValue(func() *inflater {
	f := new(inflater)
	var lens [288 + 32]uint8
	for i := range lens {
		switch {
		case i < 144:
			lens[i] = 8
		case i < 256:
			lens[i] = 9
		case i < 280:
			lens[i] = 7
		case i < 288:
			lens[i] = 8
		default:
			lens[i] = 5
		}
	}
	// Literal/length symbols 286-287 and distances 30-31 have codes
	// here and decode as no code.
	buildHuffman(f.lit[:], lens[:288], litBits, litLeaves[:], true)
	buildHuffman(f.dist[:], lens[288:], distBits, distLeaves[:], true)
	return f
})

// inflater holds the tables of the block being decoded.
type inflater struct {
	lit  litTable
	dist distTable
	clen [1 << clenBits]uint32
}

// bitReader reads deflate's LSB-first bit stream; p may run up to 8 bytes
// past the input, which reads as zeros (checked at the end).
type bitReader struct {
	in []byte
	p  int
	bb uint64
	nb uint
}

func (r *bitReader) refill() bool {
	if r.p+8 <= len(r.in) {
		r.bb |= binary.LittleEndian.Uint64(r.in[r.p:]) << (r.nb & 63)
		r.p += int(63-r.nb) >> 3
		r.nb |= 56
		return true
	}
	for r.nb <= 56 {
		if r.p < len(r.in) {
			r.bb |= uint64(r.in[r.p]) << (r.nb & 63)
		} else if r.p >= len(r.in)+8 {
			return false
		}
		r.p++
		r.nb += 8
	}
	return true
}

// bits takes n (at most 32) bits, the reader filled.
func (r *bitReader) bits(n uint) uint32 {
	v := uint32(r.bb & (1<<(n&63) - 1))
	r.bb >>= n & 63
	r.nb -= n
	return v
}

// overrun reports whether more bits were taken than the input holds.
func (r *bitReader) overrun() bool { return r.p*8-int(r.nb) > len(r.in)*8 }

// buildHuffman fills t from the code lengths of symbols 0..len(lens)-1,
// each symbol's leaf from leaves. It refuses (false) over-subscribed codes
// and, if strict, codes that leave part of the code space unused, one code
// of length 1 excepted.
func buildHuffman(t []uint32, lens []uint8, bits uint, leaves []uint32, strict bool) bool {
	var count, next [maxCodeLn + 1]uint32
	maxLen := uint(0)
	for _, l := range lens {
		count[l]++
		maxLen = max(maxLen, uint(l))
	}
	count[0] = 0
	left := 1
	for l := 1; l <= maxCodeLn; l++ {
		left = left<<1 - int(count[l])
		if left < 0 {
			return false
		}
	}
	if strict && left != 0 && !(maxLen == 1 && count[1] == 1) {
		return false
	}
	for l := 1; l <= maxCodeLn; l++ {
		next[l] = (next[l-1] + count[l-1]) << 1
	}
	primary := uint32(1) << bits
	clear(t[:primary])
	subBits := uint32(max(maxLen, bits) - bits)
	free := primary
	for sym, l := range lens {
		if l == 0 {
			continue
		}
		code := reverseBits(next[l], uint(l))
		next[l]++
		if uint(l) <= bits {
			for i := code; i < primary; i += 1 << l {
				t[i] = leaves[sym] | uint32(l)
			}
			continue
		}
		pre := code & (primary - 1)
		if t[pre]&huffSub == 0 {
			if int(free+1<<subBits) > len(t) {
				return false
			}
			t[pre] = huffSub | free<<8 | subBits
			clear(t[free : free+1<<subBits])
			free += 1 << subBits
		}
		start, rest := t[pre]>>8&0xffff, uint32(l)-uint32(bits)
		for i := code >> bits; i < 1<<subBits; i += 1 << rest {
			t[start+i] = leaves[sym] | rest
		}
	}
	return true
}

// subEntry is the entry in t's subtable that e points to for the code's
// bits after the primary ones, at the bottom of bb.
func subEntry(t []uint32, e uint32, bb uint64) uint32 {
	if i := int(e>>8&0xffff + uint32(bb)&(1<<(e&15)-1)); i < len(t) {
		return t[i]
	}
	return 0
}

// leafValue is a length or distance leaf's base plus its extra bits, which
// follow the code bits in bb, and the bits the two take.
func leafValue(e uint32, bb uint64) (int, uint) {
	cl, x := uint(e&15), uint(e>>4&15)
	return int(e>>8&0xffff) + int(bb>>cl&(1<<x-1)), cl + x
}

func reverseBits(c uint32, n uint) uint32 {
	var r uint32
	for i := uint(0); i < n; i++ {
		r = r<<1 | c&1
		c >>= 1
	}
	return r
}

// gunzipMember inflates src, one gzip member, into dst[:0], at most limit
// bytes, or declines.
func (f *inflater) gunzipMember(dst, src []byte, limit int) ([]byte, error) {
	if len(src) < 18 || src[0] != 0x1f || src[1] != 0x8b || src[2] != 8 || src[3] != 0 {
		return dst, errInflateDeclined
	}
	size := int(binary.LittleEndian.Uint32(src[len(src)-4:]))
	if size > limit || size > maxInflated(len(src)-18) {
		return dst, errInflateDeclined
	}
	if cap(dst) < size {
		dst = make([]byte, 0, size)
	}
	r := bitReader{in: src[10 : len(src)-8]}
	out, ok := f.inflate(dst[:cap(dst)], &r, limit)
	if !ok || r.overrun() || r.p-int(r.nb>>3) != len(r.in) || len(out) != size ||
		crc32.ChecksumIEEE(out) != binary.LittleEndian.Uint32(src[len(src)-8:]) {
		return dst[:0], errInflateDeclined
	}
	return out, nil
}

// maxInflated is the most bytes a deflate stream of n bytes inflates to:
// every symbol takes a bit at least, a match two (its length and distance
// codes) for at most 258 bytes. A member's ISIZE claiming more is false,
// and its buffer is not made.
func maxInflated(n int) int { return n * 8 / 2 * 258 }

// inflate decodes the deflate stream of r into buf (its whole length is
// room), growing it up to limit bytes; it returns the output.
func (f *inflater) inflate(buf []byte, r *bitReader, limit int) ([]byte, bool) {
	o := 0
	for {
		if !r.refill() {
			return nil, false
		}
		final, typ := r.bits(1), r.bits(2)
		var ok bool
		switch typ {
		case 0:
			buf, o, ok = stored(buf, o, r, limit)
		case 1:
			buf, o, ok = fixedTables().codes(buf, o, r, limit)
		case 2:
			if ok = f.readTables(r); ok {
				buf, o, ok = f.codes(buf, o, r, limit)
			}
		}
		if !ok {
			return nil, false
		}
		if final == 1 {
			return buf[:o], true
		}
	}
}

// stored copies a stored block.
func stored(buf []byte, o int, r *bitReader, limit int) ([]byte, int, bool) {
	r.bits(r.nb & 7)
	q := r.p - int(r.nb>>3) // the next unread byte
	if q+4 > len(r.in) {
		return buf, o, false
	}
	n := int(binary.LittleEndian.Uint16(r.in[q:]))
	if binary.LittleEndian.Uint16(r.in[q+2:]) != ^uint16(n) || q+4+n > len(r.in) {
		return buf, o, false
	}
	var ok bool
	if buf, ok = room(buf, o, n, limit); !ok {
		return buf, o, false
	}
	o += copy(buf[o:], r.in[q+4:q+4+n])
	r.p, r.bb, r.nb = q+4+n, 0, 0
	return buf, o, true
}

// room makes buf hold o+n bytes, up to limit.
func room(buf []byte, o, n, limit int) ([]byte, bool) {
	if o+n <= len(buf) {
		return buf, true
	}
	if o+n > limit {
		return buf, false
	}
	nb := make([]byte, min(max(2*len(buf), o+n, 4096), limit))
	copy(nb, buf[:o])
	return nb, true
}

// readTables reads a dynamic block's code lengths and builds its tables.
func (f *inflater) readTables(r *bitReader) bool {
	if !r.refill() {
		return false
	}
	nlit, ndist, nclen := int(r.bits(5))+257, int(r.bits(5))+1, int(r.bits(4))+4
	if nlit > 286 || ndist > 30 {
		return false
	}
	var lens [286 + 30]uint8
	for i := 0; i < nclen; i++ {
		if !r.refill() {
			return false
		}
		lens[clenOrder[i]] = uint8(r.bits(3))
	}
	if !buildHuffman(f.clen[:], lens[:19], clenBits, clenLeaves[:], true) {
		return false
	}
	lens = [286 + 30]uint8{}
	for i := 0; i < nlit+ndist; {
		if !r.refill() {
			return false
		}
		e := f.clen[r.bb&(1<<clenBits-1)]
		if e&huffLit == 0 {
			return false
		}
		r.bits(uint(e & 15))
		sym, rep, val := e>>8&0xff, 0, uint8(0)
		switch {
		case sym < 16:
			lens[i] = uint8(sym)
			i++
			continue
		case sym == 16:
			if i == 0 {
				return false
			}
			rep, val = 3+int(r.bits(2)), lens[i-1]
		case sym == 17:
			rep = 3 + int(r.bits(3))
		case sym == 18:
			rep = 11 + int(r.bits(7))
		default:
			return false
		}
		if i+rep > nlit+ndist {
			return false
		}
		for ; rep > 0; rep-- {
			lens[i] = val
			i++
		}
	}
	if lens[256] == 0 {
		return false
	}
	return buildHuffman(f.lit[:], lens[:nlit], litBits, litLeaves[:], true) &&
		buildHuffman(f.dist[:], lens[nlit:nlit+ndist], distBits, distLeaves[:], true)
}

// codes decodes one block's symbols up to its end code. The bit buffer
// lives in locals here (the hot loop), refilled 8 bytes at a time while
// the input has them, else through the reader.
func (f *inflater) codes(buf []byte, o int, r *bitReader, limit int) ([]byte, int, bool) {
	bb, nb, p, in := r.bb, r.nb, r.p, r.in
	ok := true
	for ok {
		if nb < 48 {
			if p+8 <= len(in) {
				bb |= binary.LittleEndian.Uint64(in[p:]) << (nb & 63)
				p += int(63-nb) >> 3
				nb |= 56
			} else {
				r.bb, r.nb, r.p = bb, nb, p
				if !r.refill() {
					return buf, o, false
				}
				bb, nb, p = r.bb, r.nb, r.p
			}
		}
		e := f.lit[bb&(1<<litBits-1)]
		if e&huffSub != 0 {
			e = subEntry(f.lit[:], e, bb>>litBits)
			bb, nb = bb>>litBits, nb-litBits
		}
		if e&huffLit != 0 {
			bb, nb = bb>>(e&15), nb-uint(e&15)
			if o >= len(buf) {
				if buf, ok = room(buf, o, 1, limit); !ok {
					break
				}
			}
			buf[o] = byte(e >> 8)
			o++
			continue
		}
		if e&huffLen == 0 {
			if e&huffEnd != 0 {
				r.bb, r.nb, r.p = bb>>(e&15), nb-uint(e&15), p
				return buf, o, true
			}
			break
		}
		n, used := leafValue(e, bb)
		bb, nb = bb>>used, nb-used
		e = f.dist[bb&(1<<distBits-1)]
		if e&huffSub != 0 {
			bb, nb = bb>>distBits, nb-distBits
			e = subEntry(f.dist[:], e, bb)
		}
		if e&huffLen == 0 {
			break
		}
		d, used := leafValue(e, bb)
		bb, nb = bb>>used, nb-used
		if d > o {
			break
		}
		if o+n > len(buf) {
			if buf, ok = room(buf, o, n, limit); !ok {
				break
			}
		}
		from := o - d
		if d >= n {
			o += copy(buf[o:o+n], buf[from:from+n])
			continue
		}
		for end := o + n; o < end; {
			o += copy(buf[o:end], buf[from:o])
		}
	}
	return buf, o, false
}
