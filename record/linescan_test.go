package record

import (
	"bytes"
	"math/rand/v2"
	"slices"
	"testing"
)

// TestScanLines checks ScanLines against scanBytes alone on lines of
// every length around the 32-byte steps and the block size, with each
// kind of byte that is not jsonSafe at every position of a short input,
// and random bytes.
func TestScanLines(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	var inputs [][]byte
	for _, n := range []int{0, 1, 31, 32, 33, 63, 64, 65, 100, scanBlock - 1, scanBlock, scanBlock + 1, 3*scanBlock + 77} {
		b := bytes.Repeat([]byte("abcdefghij"), n/10+1)[:n]
		for i := 0; i < n; i += 1 + rng.IntN(130) {
			b[i] = '\n'
		}
		inputs = append(inputs, b)
	}
	for _, c := range []byte{0, 0x1f, 0x20, '"', '\\', 0x7e, 0x7f, 0x80, 0xc3, 0xff, '\t', '\r', '\n'} {
		for at := 0; at < 70; at++ {
			b := bytes.Repeat([]byte("x"), 70)
			b[at] = c
			inputs = append(inputs, b)
		}
	}
	for i := 0; i < 200; i++ {
		b := make([]byte, rng.IntN(300))
		for j := range b {
			b[j] = byte(rng.IntN(256))
			if rng.IntN(3) > 0 {
				b[j] = byte(0x20 + rng.IntN(0x5f))
			}
		}
		inputs = append(inputs, b)
	}
	for i, b := range inputs {
		for _, off := range []int32{0, 5} {
			want, wantPlain := scanBytes(make([]int32, 0, len(b)), b, off) // a byte at a time
			prefix := []int32{-1}
			got, plain := ScanLines(slices.Clone(prefix), b, off)
			if !slices.Equal(got[:1], prefix) || !slices.Equal(got[1:], want) || plain != wantPlain {
				t.Fatalf("input %d (%d bytes, off %d): ends %v plain %v, want %v %v", i, len(b), off, got[1:], plain, want, wantPlain)
			}
		}
	}
}

func BenchmarkScanLines(b *testing.B) {
	data := bytes.Repeat(append(bytes.Repeat([]byte("0123456789abcdefghij"), 6)[:119], '\n'), 8738)
	var ends []int32
	b.SetBytes(int64(len(data)))
	for b.Loop() {
		ends, _ = ScanLines(ends[:0], data, 0)
	}
}

func BenchmarkScanNoLines(b *testing.B) {
	data := bytes.Repeat([]byte("0123456789abcdefghij"), 52429)
	var ends []int32
	b.SetBytes(int64(len(data)))
	for b.Loop() {
		ends, _ = ScanLines(ends[:0], data, 0)
	}
}
