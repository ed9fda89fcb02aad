// Package varints reads a run of varints as encoding/binary writes them
// (zigzag for signed values) with one sticky error: the decoding of the
// small files partfs keeps beside a partition (fs/position's sidecar,
// kafkalog's prints).
package varints

import "encoding/binary"

// Reader reads varints from the front of a byte slice. The first
// malformed varint, or a count the rest cannot hold, sets Err to the
// error the Reader was made with; a failed read returns 0 and consumes
// nothing.
type Reader struct {
	b         []byte
	malformed error
	Err       error
}

// NewReader reads b; malformed is the error a failed read sets.
func NewReader(b []byte, malformed error) *Reader {
	return &Reader{b: b, malformed: malformed}
}

// Uvarint reads an unsigned varint.
func (r *Reader) Uvarint() uint64 {
	v, n := binary.Uvarint(r.b)
	if n <= 0 {
		r.Fail()
		return 0
	}
	r.b = r.b[n:]
	return v
}

// Varint reads a zigzag-encoded signed varint, as binary.Varint decodes it.
func (r *Reader) Varint() int64 {
	u := r.Uvarint()
	return int64(u>>1) ^ -int64(u&1)
}

// Count reads a count of items, refusing one the rest cannot hold (every
// item takes a byte at least).
func (r *Reader) Count() int {
	n := r.Uvarint()
	if n > uint64(len(r.b)) {
		r.Fail()
		return 0
	}
	return int(n)
}

// Fail sets Err: the bytes broke a rule of their format.
func (r *Reader) Fail() { r.Err = r.malformed }

// Len is the number of bytes not read yet.
func (r *Reader) Len() int { return len(r.b) }
