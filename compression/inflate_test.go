package compression

import (
	"bytes"
	stdgzip "compress/gzip"
	"encoding/binary"
	"io"
	"runtime"
	"testing"

	"github.com/klauspost/compress/flate"
	"github.com/klauspost/compress/gzip"
)

// inflateInputs are payloads for the inflater: the benchmarks' records
// area, its edges, runs, and bytes that do not compress.
func inflateInputs() [][]byte {
	area := logArea(1000)
	rnd := make([]byte, 70000)
	for i, x := 0, uint32(7); i < len(rnd); i++ {
		x = x*1664525 + 1013904223
		rnd[i] = byte(x >> 24)
	}
	return [][]byte{nil, {0}, area[:1], area[:300], area, bytes.Repeat([]byte{'a'}, 100000), rnd,
		append(rnd[:40000:40000], area[:40000]...)}
}

// gzipped compresses in with klauspost's writer (levels -2..9) or, for
// level 100+l (98 for Huffman only), the standard library's at level l:
// the two write different block structures.
func gzipped(t testing.TB, in []byte, level int) []byte {
	var buf bytes.Buffer
	var w io.WriteCloser
	var err error
	if level >= 98 {
		w, err = stdgzip.NewWriterLevel(&buf, level-100)
	} else {
		w, err = gzip.NewWriterLevel(&buf, level)
	}
	if err != nil {
		t.Fatal(err)
	}
	w.Write(in)
	w.Close()
	return buf.Bytes()
}

// TestInflate: members from both writers at every level inflate to their
// input, into a buffer too small (grown) and into a large enough one.
func TestInflate(t *testing.T) {
	var f inflater
	for _, in := range inflateInputs() {
		for _, level := range []int{-2, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 100, 101, 105, 106, 109, 98} {
			z := gzipped(t, in, level)
			for _, dst := range [][]byte{nil, make([]byte, 0, len(in)+10)} {
				out, err := f.gunzipMember(dst, z, 1<<30)
				if err != nil || !bytes.Equal(out, in) {
					t.Fatalf("level %d, %d bytes: %d bytes out, %v", level, len(in), len(out), err)
				}
			}
		}
	}
}

// TestInflateDeclines: what the inflater leaves to klauspost's reader, and
// gunzip's answer for it, which is that reader's.
func TestInflateDeclines(t *testing.T) {
	in := inflateInputs()[4]
	z := gzipped(t, in, 5)
	named := func() []byte {
		var buf bytes.Buffer
		w := gzip.NewWriter(&buf)
		w.Name = "batch"
		w.Write(in)
		w.Close()
		return buf.Bytes()
	}()
	badCRC := bytes.Clone(z)
	badCRC[len(badCRC)-6] ^= 1
	badSize := bytes.Clone(z)
	badSize[len(badSize)-4] ^= 1
	for _, c := range []struct {
		name   string
		src    []byte
		limit  int
		decode bool // klauspost's reader decodes it to in (twice for two members)
	}{
		{"header field", named, 1 << 30, true},
		{"two members", append(bytes.Clone(z), z...), 1 << 30, true},
		{"truncated", z[:len(z)-9], 1 << 30, false},
		{"crc", badCRC, 1 << 30, false},
		{"size", badSize, 1 << 30, false},
		{"over the limit", z, len(in) - 1, false},
		{"short", z[:17], 1 << 30, false},
	} {
		var f inflater
		if out, err := f.gunzipMember(nil, c.src, c.limit); err != errInflateDeclined {
			t.Errorf("%s: %d bytes, %v, want declined", c.name, len(out), err)
		}
		var d Decompressors
		out, err := d.gunzip(nil, c.src, c.limit)
		want := in
		if c.name == "two members" {
			want = append(bytes.Clone(in), in...)
		}
		if c.decode != (err == nil) || c.decode && !bytes.Equal(out, want) {
			t.Errorf("%s: gunzip gave %d bytes, %v", c.name, len(out), err)
		}
	}
}

// TestInflateFalseSize: a member whose ISIZE claims more than its deflate
// bytes can inflate to (here the bound, from an empty block) fails, and no
// buffer of the claimed size is made for it.
func TestInflateFalseSize(t *testing.T) {
	limit := maxDecompressed
	member := []byte{0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0, 255, 3, 0, 0, 0, 0, 0}
	member = binary.LittleEndian.AppendUint32(member, uint32(limit))
	var f inflater
	if out, err := f.gunzipMember(nil, member, limit); err != errInflateDeclined || cap(out) != 0 {
		t.Fatalf("gunzipMember: %v, a buffer of %d bytes", err, cap(out))
	}
	var d Decompressors
	d.gunzip(nil, member, limit)
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	for range 10 {
		if out, err := d.gunzip(nil, member, limit); err == nil {
			t.Fatalf("inflated to %d bytes", len(out))
		}
	}
	runtime.ReadMemStats(&after)
	if n := after.TotalAlloc - before.TotalAlloc; n > 4<<20 {
		t.Errorf("10 members of %d bytes claiming %d: %d bytes allocated", len(member), limit, n)
	}
}

// FuzzInflate: whatever deflate stream the inflater decodes (within its
// input), klauspost's reader decodes to the same bytes.
func FuzzInflate(f *testing.F) {
	for i, in := range inflateInputs() {
		if len(in) <= 1000 || i == 4 {
			for _, level := range []int{5, 106, 1, -2, 98} {
				f.Add(gzipped(f, in[:min(len(in), 2000)], level)[10:])
			}
		}
	}
	var inf inflater
	f.Fuzz(func(t *testing.T, deflated []byte) {
		r := bitReader{in: deflated}
		out, ok := inf.inflate(make([]byte, 0, 64), &r, 1<<20)
		if !ok || r.overrun() {
			return
		}
		if len(out) > maxInflated(len(deflated)) {
			t.Fatalf("%d bytes inflated to %d, over the bound", len(deflated), len(out))
		}
		want, err := io.ReadAll(flate.NewReader(bytes.NewReader(deflated)))
		if err != nil || !bytes.Equal(out, want) {
			t.Fatalf("inflated %d bytes; klauspost %d, %v", len(out), len(want), err)
		}
	})
}
