package internaltopic

import (
	"encoding/binary"
	"fmt"
	"math"
	"strings"
)

// reader reads Kafka's flexible-version encoding: big-endian fixed-size
// integers, unsigned varints, compact (length+1) strings, bytes and arrays.
// The first error sticks; every length is checked against what is left.
type reader struct {
	b   []byte
	err error
}

func (r *reader) fail(format string, args ...any) {
	if r.err == nil {
		r.err = fmt.Errorf(format, args...)
	}
}

func (r *reader) take(n int) []byte {
	if r.err != nil {
		return nil
	}
	if n < 0 || n > len(r.b) {
		r.fail("%d bytes wanted, %d left", n, len(r.b))
		return nil
	}
	out := r.b[:n:n]
	r.b = r.b[n:]
	return out
}

func (r *reader) uvarint() uint64 {
	if r.err != nil {
		return 0
	}
	v, n := binary.Uvarint(r.b)
	if n <= 0 || v > math.MaxInt32 {
		r.fail("bad unsigned varint")
		return 0
	}
	r.b = r.b[n:]
	return v
}

// int8, int16, int32 and int64 read big-endian two's-complement integers.
func (r *reader) int8() int8   { return int8(r.bigEndian(1)) }
func (r *reader) int16() int16 { return int16(r.bigEndian(2)) }
func (r *reader) int32() int32 { return int32(r.bigEndian(4)) }
func (r *reader) int64() int64 { return int64(r.bigEndian(8)) }

// bigEndian reads an n-byte big-endian unsigned integer; 0 when fewer
// than n bytes are left.
func (r *reader) bigEndian(n int) uint64 {
	var v uint64
	for _, c := range r.take(n) {
		v = v<<8 | uint64(c)
	}
	return v
}

func (r *reader) uuid() UUID {
	var u UUID
	copy(u[:], r.take(16))
	return u
}

// compactLen reads a compact length: -1 for null, else the length.
func (r *reader) compactLen() int {
	return int(r.uvarint()) - 1
}

// compactBytes returns nil for null.
func (r *reader) compactBytes() []byte {
	n := r.compactLen()
	if n < 0 {
		return nil
	}
	return r.take(n)
}

// arrayLen reads a compact array length, -1 for null; each element takes
// at least min bytes, so a length past what is left fails here.
func (r *reader) arrayLen(min int) int {
	n := r.compactLen()
	if n > 0 && n*max(min, 1) > len(r.b) {
		r.fail("array of %d elements in %d bytes", n, len(r.b))
		return 0
	}
	return n
}

// str16 reads a non-flexible string: an int16 length, then the bytes.
func (r *reader) str16() string {
	n := r.int16()
	if n < 0 {
		r.fail("null string")
		return ""
	}
	return strings.ToValidUTF8(string(r.take(int(n))), "\uFFFD")
}
