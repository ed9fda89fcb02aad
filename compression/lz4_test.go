package compression

import (
	"bytes"
	"encoding/binary"
	"errors"
	"testing"

	"github.com/pierrec/lz4/v4"
)

// TestLZ4HeaderChecksum checks xxh32 against the two header checksums Kafka
// documents: 0x82 for FLG 0x60 BD 0x40, and the broken 0x1a (computed over
// magic too) of magic-0 writers.
func TestLZ4HeaderChecksum(t *testing.T) {
	if hc := byte(xxh32([]byte{0x60, 0x40}) >> 8); hc != 0x82 {
		t.Errorf("HC = %#x, want 0x82", hc)
	}
	if hc := byte(xxh32([]byte{0x04, 0x22, 0x4d, 0x18, 0x60, 0x40}) >> 8); hc != 0x1a {
		t.Errorf("broken HC = %#x, want 0x1a", hc)
	}
	if h := xxh32(nil); h != 0x02cc5d05 {
		t.Errorf("xxh32(\"\") = %#x, want 0x02cc5d05", h)
	}
}

// TestLZ4WriterFramesDecode: frames written by pierrec/lz4 with block and
// content checksums and various block sizes decode; a flipped byte in a
// checksummed block fails.
func TestLZ4WriterFramesDecode(t *testing.T) {
	src := bytes.Repeat([]byte("partfs lz4 frame test line\n"), 20000)
	for _, opts := range [][]lz4.Option{
		{lz4.BlockChecksumOption(true), lz4.ChecksumOption(true), lz4.BlockSizeOption(lz4.Block64Kb)},
		{lz4.ChecksumOption(false), lz4.BlockSizeOption(lz4.Block256Kb)},
		{lz4.BlockSizeOption(lz4.Block4Mb), lz4.SizeOption(uint64(len(src)))},
	} {
		var buf bytes.Buffer
		w := lz4.NewWriter(&buf)
		if err := w.Apply(opts...); err != nil {
			t.Fatal(err)
		}
		w.Write(src)
		w.Close()
		got, err := unKafkaLZ4(nil, buf.Bytes(), 2, 64<<20)
		if err != nil || !bytes.Equal(got, src) {
			t.Fatalf("opts %v: %d bytes, err %v", opts, len(got), err)
		}
	}
	var buf bytes.Buffer
	w := lz4.NewWriter(&buf)
	w.Apply(lz4.BlockChecksumOption(true))
	w.Write(src)
	w.Close()
	frame := buf.Bytes()
	frame[20] ^= 0xff
	if _, err := unKafkaLZ4(nil, frame, 2, 64<<20); err == nil {
		t.Error("corrupted checksummed block decoded")
	}
}

// TestLZ4BrokenHeaderChecksum: magic 0 ignores the header checksum (Kafka's
// old writers computed it wrongly); magic 1 and 2 verify it.
func TestLZ4BrokenHeaderChecksum(t *testing.T) {
	var c Compressors
	frame, err := c.kafkaLZ4(nil, []byte("hello hello hello hello"))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.HasPrefix(frame, kafkaLZ4Header) {
		t.Fatalf("header % x", frame[:7])
	}
	frame[6] = 0x1a // the broken HC
	if got, err := unKafkaLZ4(nil, frame, 0, 1<<20); err != nil || string(got) != "hello hello hello hello" {
		t.Errorf("magic 0: %q %v", got, err)
	}
	if _, err := unKafkaLZ4(nil, frame, 1, 1<<20); err == nil {
		t.Error("magic 1 accepted a wrong header checksum")
	}
}

func TestLZ4Rejects(t *testing.T) {
	good := append([]byte(nil), kafkaLZ4Header...)
	good = binary.LittleEndian.AppendUint32(good, 0)
	cases := map[string]func(b []byte){
		"dependent blocks": func(b []byte) { b[4] &^= lz4FlgIndependent },
		"version 0":        func(b []byte) { b[4] &^= lz4FlgVersion1 },
		"reserved FLG":     func(b []byte) { b[4] |= 0x02 },
		"block size 3":     func(b []byte) { b[5] = 0x30 },
		"bad magic":        func(b []byte) { b[0] = 0 },
	}
	for name, mutate := range cases {
		b := append([]byte(nil), good...)
		mutate(b)
		b[6] = byte(xxh32(b[4:6]) >> 8)
		if _, err := unKafkaLZ4(nil, b, 2, 1<<20); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
	if _, err := unKafkaLZ4(nil, good, 2, 1<<20); err != nil {
		t.Errorf("empty frame: %v", err)
	}
}

// TestDecompressBound: every codec stops at the decompressed-size bound.
func TestDecompressBound(t *testing.T) {
	src := make([]byte, 1<<20) // zeros compress ~1000:1
	for _, c := range []Codec{Gzip, Snappy, LZ4, Zstd} {
		var cs Compressors
		comp, err := cs.Compress(nil, src, c)
		if err != nil {
			t.Fatal(err)
		}
		var d Decompressors
		if _, err := d.Decompress(nil, comp, c, 2, 1<<19); !errors.Is(err, ErrTooBig) {
			t.Errorf("%v: bound 512 KiB on 1 MiB: err %v", c, err)
		}
		if out, err := d.Decompress(nil, comp, c, 2, 1<<20); err != nil || len(out) != len(src) {
			t.Errorf("%v: bound 1 MiB: %d bytes, err %v", c, len(out), err)
		}
	}
}

// lz4BlockInputs are block inputs around the compressor's edges: empty,
// shorter than the last-literals and match-start limits, runs longer than
// one length byte, incompressible bytes, and a whole 64 KiB block.
func lz4BlockInputs() [][]byte {
	rnd := make([]byte, lz4MaxInput)
	for i, x := 0, uint32(1); i < len(rnd); i++ {
		x = x*1664525 + 1013904223
		rnd[i] = byte(x >> 24)
	}
	in := [][]byte{nil, {1}, []byte("abcdabcdabcd"), []byte("abcdabcdabcda"), bytes.Repeat([]byte{7}, 13),
		bytes.Repeat([]byte{0}, 600), append(rnd[:300:300], bytes.Repeat([]byte("xy"), 400)...), rnd,
		bytes.Repeat([]byte("partfs lz4 block test line\n"), 2500)[:lz4MaxInput]}
	for n := 0; n <= 40; n++ {
		in = append(in, bytes.Repeat([]byte("ab"), n)[:n], rnd[:n])
	}
	return in
}

// checkLZ4Block compresses src in place (src's capacity extended) and
// through a copy; both must write the same block, which pierrec/lz4's
// decoder decodes to src, and the Kafka LZ4 frame of src decodes to src.
func checkLZ4Block(t *testing.T, src []byte) {
	t.Helper()
	var tab lz4Table
	var scratch [lz4Padded]byte
	wide := append(make([]byte, 0, len(src)+lz4Padded), src...)
	a := make([]byte, lz4BlockBound(len(src)))
	b := make([]byte, len(a))
	na := tab.compressBlock(a, wide, &scratch)
	nb := tab.compressBlock(b, src[:len(src):len(src)], &scratch)
	if !bytes.Equal(a[:na], b[:nb]) {
		t.Fatalf("%d bytes: in place and through a copy wrote different blocks", len(src))
	}
	out := make([]byte, len(src)+1)
	if n, err := lz4.UncompressBlock(a[:na], out); err != nil || !bytes.Equal(out[:n], src) {
		t.Fatalf("%d bytes: pierrec/lz4 decodes %d bytes, %v", len(src), n, err)
	}
	var c Compressors
	frame, err := c.kafkaLZ4(nil, src)
	if err != nil {
		t.Fatal(err)
	}
	if got, err := unKafkaLZ4(nil, frame, 2, lz4MaxInput); err != nil || !bytes.Equal(got, src) {
		t.Fatalf("%d bytes: the Kafka frame decodes %d bytes, %v", len(src), len(got), err)
	}
}

// TestLZ4BlockRoundTrip: blocks of the edge inputs decode to their input,
// whether read in place or through a copy.
func TestLZ4BlockRoundTrip(t *testing.T) {
	for _, src := range lz4BlockInputs() {
		if len(src) > 0 { // the frame writer never writes an empty block
			checkLZ4Block(t, src)
		}
	}
}

// TestLZ4BlockRatio: on the benchmarks' log lines the block compressor
// writes no more than pierrec/lz4's fast compressor, so its speed is not
// bought with a worse ratio.
func TestLZ4BlockRatio(t *testing.T) {
	area := logArea(1000)
	var tab lz4Table
	var scratch [lz4Padded]byte
	var pc lz4.Compressor
	ours, theirs := 0, 0
	for p := area; len(p) > 0; p = p[min(len(p), lz4BlockSize):] {
		chunk := p[:min(len(p), lz4BlockSize)]
		dst := make([]byte, lz4BlockBound(len(chunk)))
		ours += tab.compressBlock(dst, chunk, &scratch)
		n, err := pc.CompressBlock(chunk, dst)
		if err != nil {
			t.Fatal(err)
		}
		theirs += n
	}
	if ours > theirs {
		t.Errorf("%d bytes compressed to %d, pierrec/lz4 %d", len(area), ours, theirs)
	}
	t.Logf("%d bytes compressed to %d, pierrec/lz4 %d", len(area), ours, theirs)
}

// FuzzLZ4Block: any block input round-trips, in place and through a copy.
func FuzzLZ4Block(f *testing.F) {
	for _, src := range lz4BlockInputs() {
		f.Add(src)
	}
	f.Fuzz(func(t *testing.T, src []byte) {
		if len(src) == 0 || len(src) > lz4MaxInput {
			return
		}
		checkLZ4Block(t, src)
	})
}
