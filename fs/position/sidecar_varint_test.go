package position

import (
	"encoding/binary"
	"math"
	"testing"
)

// TestSidecarVarint: sidecarReader.varint reads what binary.AppendVarint
// wrote, at the extremes too, and a truncated one is errSidecar.
func TestSidecarVarint(t *testing.T) {
	for _, v := range []int64{0, 1, -1, 63, -64, 64, -65, math.MaxInt64, math.MinInt64, 1 << 40, -(1 << 40)} {
		r := &sidecarReader{b: binary.AppendVarint(nil, v)}
		if got := r.varint(); got != v || r.err != nil || len(r.b) != 0 {
			t.Errorf("varint of %d = %d (err %v, %d bytes left)", v, got, r.err, len(r.b))
		}
	}
	r := &sidecarReader{b: binary.AppendVarint(nil, math.MinInt64)[:3]}
	if r.varint(); r.err != errSidecar {
		t.Errorf("truncated varint: err %v", r.err)
	}
}
