package compression

import (
	"bytes"
	"encoding/binary"
	"testing"

	"github.com/klauspost/compress/snappy"
	"github.com/klauspost/compress/zstd"
)

// TestClaimBoundsHold: blocks decoding to the most their bytes can hold
// decode (the bounds decline no valid block): a snappy block of copy-2
// ops of 64 bytes, an lz4 block of 255-byte match-length runs, a zstd
// frame of a content size 64 times its bytes.
func TestClaimBoundsHold(t *testing.T) {
	want := bytes.Repeat([]byte{'a'}, 1+64*1000)
	block := binary.AppendUvarint(nil, uint64(len(want)))
	block = append(block, 0, 'a')
	for range 1000 {
		block = append(block, 63<<2|2, 1, 0)
	}
	if most := maxUnsnappied(len(block) - 3); len(want) > most || len(want) < most-64 {
		t.Fatalf("%d bytes from %d: not near the bound", len(want), len(block))
	}
	got, err := unsnappy(nil, block, maxDecompressed)
	if err != nil || !bytes.Equal(got, want) {
		t.Errorf("snappy: %d bytes, %v", len(got), err)
	}
	// lz4: a literal, a match of 4+15+255*k+0 bytes, 5 final literals
	const k = 1000
	lz := append([]byte{0x1f, 'a', 1, 0}, bytes.Repeat([]byte{255}, k)...)
	lz = append(lz, 0, 0x50, 'a', 'a', 'a', 'a', 'a')
	n := 1 + 19 + 255*k + 5
	if maxUnLZ4ed(len(lz)) > n+3000 {
		t.Fatalf("%d bytes from %d: not near the bound", n, len(lz))
	}
	got, err = appendLZ4Block(nil, lz, false, 4<<20, maxDecompressed)
	if err != nil || !bytes.Equal(got, bytes.Repeat([]byte{'a'}, n)) {
		t.Errorf("lz4: %d bytes, %v", len(got), err)
	}
	enc, _ := zstd.NewWriter(nil, zstd.WithEncoderConcurrency(1))
	zeros := make([]byte, 8<<20)
	frame := enc.EncodeAll(zeros, nil)
	if len(frame)*64 > len(zeros) {
		t.Fatalf("zstd frame of %d bytes", len(frame))
	}
	var d Decompressors
	if got, err = d.unzstd(nil, frame, maxDecompressed); err != nil || !bytes.Equal(got, zeros) {
		t.Errorf("zstd: %d bytes, %v", len(got), err)
	}
}

// FuzzZstdClaims: an input checkZstdClaims declines does not decode with
// klauspost's decoder either (it declines no valid frame).
func FuzzZstdClaims(f *testing.F) {
	enc, _ := zstd.NewWriter(nil, zstd.WithEncoderConcurrency(1))
	for _, src := range [][]byte{nil, []byte("a"), bytes.Repeat([]byte("partfs "), 40000)} {
		f.Add(enc.EncodeAll(src, nil))
		f.Add(append([]byte{0x50, 0x2a, 0x4d, 0x18, 1, 0, 0, 0, 9}, enc.EncodeAll(src, nil)...))
	}
	crc, _ := zstd.NewWriter(nil, zstd.WithEncoderConcurrency(1), zstd.WithEncoderCRC(true), zstd.WithSingleSegment(true))
	f.Add(crc.EncodeAll([]byte("with a checksum"), nil))
	// a frame claiming 60 MiB of content in one 5-byte block (record's
	// TestFalseSizeClaimsDeclined), cut to 40 bytes
	claim := binary.LittleEndian.AppendUint32(nil, zstdMagic)
	claim = binary.LittleEndian.AppendUint32(append(claim, 0xa0), 60<<20)
	f.Add(append(append(claim, 0x2d, 0, 0, 1, 2, 3, 4, 5), make([]byte, 31)...)[:40])
	dec, _ := zstd.NewReader(nil, zstd.WithDecoderConcurrency(1), zstd.WithDecoderMaxMemory(64<<20))
	f.Fuzz(func(t *testing.T, in []byte) {
		if checkZstdClaims(in) == nil {
			return
		}
		if out, err := dec.DecodeAll(in, nil); err == nil {
			t.Fatalf("declined, but decodes to %d bytes", len(out))
		}
	})
}

// FuzzSnappyBlock: a raw block that the strict snappy decoder decodes
// (to at most 1 MiB) decodes to the same bytes here.
func FuzzSnappyBlock(f *testing.F) {
	for _, in := range inflateInputs() {
		f.Add(snappy.Encode(nil, in[:min(len(in), 5000)]))
	}
	f.Fuzz(func(t *testing.T, block []byte) {
		if n, err := snappy.DecodedLen(block); err != nil || n > 1<<20 {
			return
		}
		want, err := snappy.DecodeStrict(nil, block)
		if err != nil {
			return
		}
		got, err := appendSnappyBlock(nil, block, 1<<20)
		if err != nil || !bytes.Equal(got, want) {
			t.Fatalf("%d bytes, %v; strict decoder: %d bytes", len(got), err, len(want))
		}
	})
}
