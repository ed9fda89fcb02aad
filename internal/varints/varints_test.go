package varints

import (
	"encoding/binary"
	"errors"
	"math"
	"testing"
)

var errBad = errors.New("bad")

func TestReader(t *testing.T) {
	b := binary.AppendUvarint(nil, 300)
	b = binary.AppendVarint(b, -5)
	b = binary.AppendUvarint(b, 1)
	b = append(b, 7)
	r := NewReader(b, errBad)
	if u, v, n := r.Uvarint(), r.Varint(), r.Count(); u != 300 || v != -5 || n != 1 || r.Err != nil || r.Len() != 1 {
		t.Fatalf("read %d %d %d, %v, %d left", u, v, n, r.Err, r.Len())
	}
	r = NewReader(binary.AppendUvarint(nil, 2), errBad)
	if n := r.Count(); n != 0 || r.Err != errBad {
		t.Fatalf("a count past the end: %d, %v", n, r.Err)
	}
	r = NewReader([]byte{0x80}, errBad)
	if v := r.Varint(); v != 0 || r.Err != errBad || r.Len() != 1 {
		t.Fatalf("a truncated varint: %d, %v, %d left", v, r.Err, r.Len())
	}
}

// TestVarintExtremes: Varint reads what binary.AppendVarint wrote, at the
// extremes too.
func TestVarintExtremes(t *testing.T) {
	for _, v := range []int64{0, 1, -1, 63, -64, 64, -65, math.MaxInt64, math.MinInt64, 1 << 40, -(1 << 40)} {
		r := NewReader(binary.AppendVarint(nil, v), errBad)
		if got := r.Varint(); got != v || r.Err != nil || r.Len() != 0 {
			t.Errorf("Varint of %d = %d (err %v, %d bytes left)", v, got, r.Err, r.Len())
		}
	}
}
