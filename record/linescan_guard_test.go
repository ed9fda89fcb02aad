//go:build linux

package record

import (
	"bytes"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/partfs/partfs/internal/testutil"
)

// TestScanLinesGuardPages scans inputs of every length 0..200 that end
// exactly at the end of a mapped page followed by an inaccessible one, and
// that start exactly at the start of a page preceded by one, with the AVX2
// scan and with the fallback: any read outside the input faults, and the
// result must be checkScan's.
func TestScanLinesGuardPages(t *testing.T) {
	p := testutil.GuardedPage(t)
	rng := rand.New(rand.NewPCG(3, 4))
	for _, avx := range []bool{useScanAVX2, false} {
		withScanAVX2(t, avx, func() {
			for n := 0; n <= 200; n++ {
				for _, b := range [][]byte{p[len(p)-n:], p[:n:n]} {
					for trial := 0; trial < 8; trial++ {
						fillLines(rng, b, trial)
						if err := checkScan(b, 7, 3); err != nil {
							t.Fatalf("avx2 %v, %d bytes %q: %v", avx, n, b, err)
						}
					}
				}
			}
		})
	}
}

// TestScanLinesFallback checks ScanLines with the AVX2 scan turned off
// against the lines bytes.IndexByte finds, where every byte is plain.
func TestScanLinesFallback(t *testing.T) {
	b := bytes.Repeat([]byte("0123456789abcdefghij\n"), 2000)
	b = append(b, "tail"...)
	var want []int32
	for i, c := range b {
		if c == '\n' {
			want = append(want, int32(i))
		}
	}
	withScanAVX2(t, false, func() {
		got, quotes, q, ascii := ScanLines(nil, nil, b, 0, 0)
		if !slices.Equal(got, want) || !ascii || q != 0 || quotes[len(quotes)-1] != 0 {
			t.Fatalf("fallback: %d ends ascii %v quotes %d, want %d true 0", len(got), ascii, q, len(want))
		}
		b[5], b[25] = '"', '\\'
		if _, quotes, q, ascii := ScanLines(nil, nil, b, 0, 0); !ascii || q != 2 || quotes[0] != 1 || quotes[1] != 2 {
			t.Fatalf("fallback: ascii %v, quotes %v of %d", ascii, quotes[:2], q)
		}
		b[7] = 0x80
		if _, _, _, ascii := ScanLines(nil, nil, b, 0, 0); ascii {
			t.Fatal("fallback: 0x80 is ascii")
		}
	})
}

// withScanAVX2 runs fn with useScanAVX2 set to on.
func withScanAVX2(t *testing.T, on bool, fn func()) {
	t.Helper()
	was := useScanAVX2
	useScanAVX2 = on
	defer func() { useScanAVX2 = was }()
	fn()
}

// fillLines fills b with plain bytes and line ends, and for odd trials a
// byte that is not jsonSafe somewhere.
func fillLines(rng *rand.Rand, b []byte, trial int) {
	for i := range b {
		b[i] = byte(0x20 + rng.IntN(0x5f))
		if rng.IntN(9) == 0 {
			b[i] = '\n'
		}
	}
	if trial%2 == 1 && len(b) > 0 {
		b[rng.IntN(len(b))] = []byte{0, 0x1f, '"', '\\', 0x80, 0xff}[rng.IntN(6)]
	}
}

// FuzzScanLines checks ScanLines, with the AVX2 scan where the CPU has it,
// against scanBytes, at an offset.
func FuzzScanLines(f *testing.F) {
	f.Add([]byte("a\nb\n"), int32(0))
	f.Add(bytes.Repeat([]byte("0123456789abcde\n"), 20), int32(9))
	f.Add(append(bytes.Repeat([]byte("x"), 64), 0x7f, '"', '\n', 0x80), int32(1))
	f.Fuzz(func(t *testing.T, b []byte, off int32) {
		off &= 1<<30 - 1
		if err := checkScan(b, off, 11); err != nil {
			t.Fatal(err)
		}
	})
}
