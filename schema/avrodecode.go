package schema

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"sync"
)

// avroDecoder reads Avro binary data (the spec's zig-zag varints,
// little-endian floats, length-prefixed bytes) from a payload held whole
// in memory: strings and bytes are views of it, not copies. The first
// failure sticks in err; reads after it return zero values. budget
// bounds the array and map items a payload may claim (items of an empty
// record take no bytes).
type avroDecoder struct {
	data   []byte
	pos    int
	budget int
	err    error
}

// decoders are avroDecoders to reuse.
var decoders = sync.Pool{New: func() any { return new(avroDecoder) }}

var errAvroShort = errors.New("avro: the payload ends inside a value")

func (d *avroDecoder) failed() bool { return d.err != nil }

// varint reads an unsigned varint of at most maxLen bytes.
func (d *avroDecoder) varint(maxLen int) uint64 {
	var v uint64
	rest := d.data[d.pos:]
	for i := 0; i < maxLen; i++ {
		if i == len(rest) {
			d.fail(nil, errAvroShort)
			return 0
		}
		b := rest[i]
		v |= uint64(b&0x7f) << (7 * i)
		if b < 0x80 {
			d.pos += i + 1
			return v
		}
	}
	d.fail(nil, errors.New("avro: a varint longer than its type"))
	return 0
}

func (d *avroDecoder) long() int64 {
	if d.pos < len(d.data) && d.data[d.pos] < 0x80 { // one byte: most
		v := uint64(d.data[d.pos])
		d.pos++
		return int64(v>>1) ^ -int64(v&1)
	}
	v := d.varint(10)
	return int64(v>>1) ^ -int64(v&1)
}

func (d *avroDecoder) int() int32 {
	v := uint32(d.varint(5))
	return int32(v>>1) ^ -int32(v&1)
}

func (d *avroDecoder) bool() bool {
	b := d.read(1)
	if len(b) == 0 {
		return false
	}
	if b[0] > 1 {
		d.fail(nil, fmt.Errorf("avro: a boolean of %d", b[0]))
	}
	return b[0] == 1
}

func (d *avroDecoder) float() float32 {
	if b := d.read(4); len(b) == 4 {
		return math.Float32frombits(binary.LittleEndian.Uint32(b))
	}
	return 0
}

func (d *avroDecoder) double() float64 {
	if b := d.read(8); len(b) == 8 {
		return math.Float64frombits(binary.LittleEndian.Uint64(b))
	}
	return 0
}

// read returns the next n bytes of the payload (nil after a failure).
func (d *avroDecoder) read(n int) []byte {
	if d.err != nil {
		return nil
	}
	if n > len(d.data)-d.pos {
		d.fail(nil, errAvroShort)
		return nil
	}
	b := d.data[d.pos : d.pos+n : d.pos+n]
	d.pos += n
	return b
}

// bytes reads a string or bytes.
func (d *avroDecoder) bytes() []byte {
	n := d.long()
	if d.err != nil {
		return nil
	}
	if n < 0 || n > int64(len(d.data)-d.pos) {
		d.err = fmt.Errorf("avro: a string or bytes of %d bytes with %d left in the payload", n, len(d.data)-d.pos)
		return nil
	}
	return d.read(int(n))
}

// block reads the header of an array's or map's next block and returns
// its item count; 0 at the end or on failure.
func (d *avroDecoder) block() int64 {
	if d.err != nil {
		return 0
	}
	n := d.long()
	if n < 0 { // a negative count is followed by the block's size
		d.long()
		n = -n
	}
	if n == 0 || d.err != nil {
		return 0
	}
	if d.budget -= int(min(n, math.MaxInt32)); d.budget < 0 || n < 0 {
		d.err = errors.New("avro: more items than the payload can hold")
		return 0
	}
	return n
}

// fail records err (the first failure wins) and returns dst.
func (d *avroDecoder) fail(dst []byte, err error) []byte {
	if d.err == nil {
		d.err = err
	}
	return dst
}
