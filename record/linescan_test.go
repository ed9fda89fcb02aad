package record

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/partfs/partfs/internal/testutil"
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
	for _, n := range []int{31, 32, 33, 64, 1000, scanBlock + 1, 2*scanBlock + 5} {
		json := []byte(`{"n":1,"msg":"a \\"quoted\\" word","path":"c:\\\\x"}` + "\n")
		inputs = append(inputs, bytes.Repeat(json, n/len(json)+1)[:n])
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
			if err := checkScan(b, off, int32(i)); err != nil {
				t.Fatalf("input %d (%d bytes, off %d): %v", i, len(b), off, err)
			}
		}
	}
}

// checkScan checks ScanLines of b at off and q, appending to slices that
// hold one entry already, against scanBytes alone (a byte at a time) and
// against counting each line's quotes with bytes.Count.
func checkScan(b []byte, off, q int32) error {
	want, wantQ, wantEnd, wantASCII := scanBytes(make([]int32, 0, len(b)), make([]int32, 0, len(b)), b, off, q)
	ends, quotes, qend, ascii := ScanLines([]int32{-1}, []int32{-2}, b, off, q)
	if ends[0] != -1 || quotes[0] != -2 || !slices.Equal(ends[1:], want) || !slices.Equal(quotes[1:], wantQ) || qend != wantEnd || ascii != wantASCII {
		return fmt.Errorf("ends %v quotes %v (%d) ascii %v, want %v %v (%d) %v", ends[1:], quotes[1:], qend, ascii, want, wantQ, wantEnd, wantASCII)
	}
	start, n := 0, q
	for k, e := range ends[1:] {
		line := b[start : e-off]
		n += int32(bytes.Count(line, []byte{'"'}) + bytes.Count(line, []byte{'\\'}))
		if quotes[1+k] != n {
			return fmt.Errorf("line %d %q: %d quotes before its end, want %d", k, line, quotes[1+k], n)
		}
		start = int(e-off) + 1
	}
	if rest := b[start:]; qend != n+int32(bytes.Count(rest, []byte{'"'})+bytes.Count(rest, []byte{'\\'})) {
		return fmt.Errorf("%d quotes in all, want %d more than %d", qend, len(rest), n)
	}
	return nil
}

func BenchmarkScanLines(b *testing.B) {
	data := bytes.Repeat(append(bytes.Repeat([]byte("0123456789abcdefghij"), 6)[:119], '\n'), 8738)
	var ends, quotes []int32
	b.SetBytes(int64(len(data)))
	for b.Loop() {
		ends, quotes, _, _ = ScanLines(ends[:0], quotes[:0], data, 0, 0)
	}
}

func BenchmarkScanNoLines(b *testing.B) {
	data := bytes.Repeat([]byte("0123456789abcdefghij"), 52429)
	var ends, quotes []int32
	b.SetBytes(int64(len(data)))
	for b.Loop() {
		ends, quotes, _, _ = ScanLines(ends[:0], quotes[:0], data, 0, 0)
	}
}

// TestAppendLineBatchesPiped: with a pipe, the lines encode byte for byte
// as without one, and the pipe is told of the output at least Step bytes
// apart and once done: each time a prefix of the final output (from dst's
// start) whose batch headers are still zero, the last time all of it.
func TestAppendLineBatchesPiped(t *testing.T) {
	text := bytes.Repeat(append(bytes.Repeat([]byte("q"), 150), '\n'), 5000)
	for _, limit := range []int{1 << 20, 64 << 10} {
		var e Encoder
		opt := BatchOptions{DefaultTimestampMs: 7}
		want, wantEnds, wantN, err := e.AppendLineBatches([]byte("x"), 3, [][]byte{[]byte("a\n"), text}, opt, limit, nil)
		if err != nil {
			t.Fatal(err)
		}
		var seen [][]byte
		var dones int
		pipe := &LinePipe{Step: 10000, Encoded: func(out []byte, done bool) {
			seen = append(seen, slices.Clone(out))
			dones += map[bool]int{true: 1}[done]
		}}
		got, ends, n, err := e.AppendLineBatchesPiped([]byte("x"), 3, [][]byte{[]byte("a\n"), text}, opt, limit, nil, pipe)
		if err != nil || !bytes.Equal(got, want) || !slices.Equal(ends, wantEnds) || n != wantN {
			t.Fatalf("limit %d: piped output differs (%v)", limit, err)
		}
		if dones != 1 || len(seen) < len(text)/10000 || len(seen[len(seen)-1]) != len(want)-1 {
			t.Fatalf("limit %d: %d calls, %d done", limit, len(seen), dones)
		}
		final := slices.Clone(want[1:])
		for i, at := range append([]int{1}, ends[:len(ends)-1]...) {
			clear(final[at-1 : at-1+BatchHeaderSize]) // ends count the "x"
			if i == 0 && len(ends) == 1 && limit < 1<<20 {
				t.Fatalf("limit %d: one batch", limit)
			}
		}
		for i, out := range seen {
			if i > 0 && i < len(seen)-1 && len(out)-len(seen[i-1]) < 10000 {
				t.Fatalf("limit %d: call %d after %d bytes", limit, i, len(out)-len(seen[i-1]))
			}
			if !bytes.Equal(out, final[:len(out)]) {
				t.Fatalf("limit %d: call %d: not a prefix of the output with zero headers", limit, i)
			}
		}
	}
}

// TestScanLinesGuardPages scans inputs of every length 0..200 that end
// exactly at the end of a mapped page followed by an inaccessible one, and
// that start exactly at the start of a page preceded by one, with the AVX2
// scan and with the fallback: any read outside the input faults, and the
// result must be checkScan's.
func TestScanLinesGuardPages(t *testing.T) {
	edges := testutil.GuardedSlices(t, 200)
	rng := rand.New(rand.NewPCG(3, 4))
	for _, avx := range []bool{useScanAVX2, false} {
		withScanAVX2(t, avx, func() {
			for b := range edges {
				for trial := 0; trial < 8; trial++ {
					fillLines(rng, b, trial)
					if err := checkScan(b, 7, 3); err != nil {
						t.Fatalf("avx2 %v, %d bytes %q: %v", avx, len(b), b, err)
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
