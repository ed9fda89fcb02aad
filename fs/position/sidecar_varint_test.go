package position

import (
	"encoding/binary"
	"testing"
)

// TestSidecarCutShort: a sidecar cut anywhere, the list of checkpoints of
// a segment included (fewer than its count says), decodes to errSidecar,
// never a panic; the whole of it decodes.
func TestSidecarCutShort(t *testing.T) {
	b := []byte(sidecarMagic)
	b = binary.AppendUvarint(b, 1) // one segment
	b = binary.AppendVarint(b, 0)  // base
	b = binary.AppendUvarint(b, 7) // stamp
	for range 6 {                  // start[2], next, size, length[2]
		b = binary.AppendVarint(b, 1)
	}
	b = binary.AppendUvarint(b, 5) // five checkpoints of three varints
	for range 15 {
		b = binary.AppendVarint(b, 1)
	}
	if segs, err := decodeSidecar(b); err != nil || len(segs) != 1 || len(segs[0].ckpts) != 5 {
		t.Fatalf("whole sidecar: %d segments, %v", len(segs), err)
	}
	for n := len(sidecarMagic); n < len(b); n++ {
		if _, err := decodeSidecar(b[:n]); err != errSidecar {
			t.Errorf("cut at %d of %d: %v, want errSidecar", n, len(b), err)
		}
	}
}
