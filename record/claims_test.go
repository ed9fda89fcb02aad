package record

import (
	"bytes"
	"encoding/binary"
	"errors"
	"runtime"
	"strings"
	"testing"

	"github.com/klauspost/compress/snappy"
	"github.com/klauspost/compress/zstd"
)

// hostileClaim is 60 MiB, under DefaultMaxDecompressed: only the claim's
// own check can decline it.
const hostileClaim = 60 << 20

// falseClaims are records areas of a few bytes claiming hostileClaim
// bytes uncompressed, with the error each must fail with.
func falseClaims() []struct {
	name   string
	codec  Codec
	area   []byte
	reason string
} {
	block := binary.AppendUvarint(nil, hostileClaim)
	block = append(block, 0, 'a', 0, 'b') // two 1-byte literals
	xerial := binary.BigEndian.AppendUint32(append([]byte{}, xerialHeader...), uint32(len(block)))
	xerial = append(xerial, block...)
	// zstd: single segment, 4-byte content size, one compressed block of
	// 5 bytes, then 3000 bytes of zeros (a buffer of 3005 * 32 KiB would
	// be allowed by klauspost's own bound)
	frame := binary.LittleEndian.AppendUint32(nil, zstdMagic)
	frame = binary.LittleEndian.AppendUint32(append(frame, 0xa0), hostileClaim)
	frame = append(frame, 0x2d, 0, 0, 1, 2, 3, 4, 5)
	frame = append(frame, make([]byte, 3000)...)
	// lz4: BD 0x70 (4 MiB blocks), one 5-byte block
	lz := []byte{0x04, 0x22, 0x4d, 0x18, 0x60, 0x70, 0}
	lz[6] = byte(xxh32(lz[4:6]) >> 8)
	lz = append(lz, 5, 0, 0, 0, 0x10, 'a', 0, 0, 0, 0, 0, 0, 0)
	return []struct {
		name   string
		codec  Codec
		area   []byte
		reason string
	}{
		{"snappy block", Snappy, block, "snappy: a block of 8 bytes claims 62914560 bytes uncompressed, more than it can hold (85)"},
		{"xerial chunk", Snappy, xerial, "snappy: a block of 8 bytes claims 62914560 bytes uncompressed, more than it can hold (85)"},
		{"zstd frame", Zstd, frame, "zstd: a frame of 17 bytes claims 62914560 bytes of content, more than its blocks hold"},
		{"lz4 block", LZ4, lz, "lz4: lz4: invalid source or destination buffer too short"},
	}
}

// areaBatch returns a V2 batch of codec c whose records area is area.
func areaBatch(t *testing.T, c Codec, area []byte) *Batch {
	var e Encoder
	raw, err := e.AppendBatch(nil, 0, []Record{{Value: []byte("v")}}, BatchOptions{Codec: c})
	if err != nil {
		t.Fatal(err)
	}
	raw = append(raw[:BatchHeaderSize], area...)
	binary.BigEndian.PutUint32(raw[8:], uint32(len(raw)-LogOverhead))
	fixCRC(raw, 0)
	s := NewBytesScanner(raw, "claims")
	if !s.Next() {
		t.Fatal(s.Err())
	}
	return s.Batch()
}

// TestFalseSizeClaimsDeclined: a records area of a few bytes claiming
// 60 MiB (a snappy block's length, in a bare block and in an xerial chunk,
// a zstd frame's content size, an lz4 frame's 4 MiB block size) fails with
// a corruption error naming the claim, and no buffer of the claimed size
// is made: 10 decodes allocate under 1 MiB in all.
func TestFalseSizeClaimsDeclined(t *testing.T) {
	for _, c := range falseClaims() {
		t.Run(c.name, func(t *testing.T) {
			b := areaBatch(t, c.codec, c.area)
			var d Decoder
			good := areaBatch(t, c.codec, nil) // warm the codec's state on an empty area
			d.Records(good, func(*Record) bool { return true })
			var before, after runtime.MemStats
			runtime.ReadMemStats(&before)
			var err error
			for range 10 {
				err = d.Records(b, func(*Record) bool { t.Error("a record"); return true })
			}
			runtime.ReadMemStats(&after)
			if !errors.Is(err, ErrCorruption) || errors.Is(err, errTooBig) || !strings.HasSuffix(err.Error(), c.reason) {
				t.Errorf("err = %v, want one ending %q", err, c.reason)
			}
			if n := after.TotalAlloc - before.TotalAlloc; n > 1<<20 {
				t.Errorf("10 decodes of %d bytes allocated %d bytes", len(c.area), n)
			}
		})
	}
}

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
	got, err := unsnappy(nil, block, DefaultMaxDecompressed)
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
	got, err = appendLZ4Block(nil, lz, false, 4<<20, DefaultMaxDecompressed)
	if err != nil || !bytes.Equal(got, bytes.Repeat([]byte{'a'}, n)) {
		t.Errorf("lz4: %d bytes, %v", len(got), err)
	}
	enc, _ := zstd.NewWriter(nil, zstd.WithEncoderConcurrency(1))
	zeros := make([]byte, 8<<20)
	frame := enc.EncodeAll(zeros, nil)
	if len(frame)*64 > len(zeros) {
		t.Fatalf("zstd frame of %d bytes", len(frame))
	}
	var d decompressors
	if got, err = d.unzstd(nil, frame, DefaultMaxDecompressed); err != nil || !bytes.Equal(got, zeros) {
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
	for _, c := range falseClaims() {
		if c.codec == Zstd {
			f.Add(c.area[:40])
		}
	}
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
