package record

import (
	"encoding/binary"
	"errors"
	"runtime"
	"strings"
	"testing"

	"github.com/partfs/partfs/compression"
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
	xerial := binary.BigEndian.AppendUint32([]byte{0x82, 'S', 'N', 'A', 'P', 'P', 'Y', 0, 0, 0, 0, 1, 0, 0, 0, 1}, uint32(len(block)))
	xerial = append(xerial, block...)
	// zstd: single segment, 4-byte content size, one compressed block of
	// 5 bytes, then 3000 bytes of zeros (a buffer of 3005 * 32 KiB would
	// be allowed by klauspost's own bound)
	frame := binary.LittleEndian.AppendUint32(nil, 0xfd2fb528)
	frame = binary.LittleEndian.AppendUint32(append(frame, 0xa0), hostileClaim)
	frame = append(frame, 0x2d, 0, 0, 1, 2, 3, 4, 5)
	frame = append(frame, make([]byte, 3000)...)
	// lz4: BD 0x70 (4 MiB blocks), one 5-byte block
	lz := []byte{0x04, 0x22, 0x4d, 0x18, 0x60, 0x70, 0x73} // HC: xxh32(FLG, BD) >> 8
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
			if !errors.Is(err, ErrCorruption) || errors.Is(err, compression.ErrTooBig) || !strings.HasSuffix(err.Error(), c.reason) {
				t.Errorf("err = %v, want one ending %q", err, c.reason)
			}
			if n := after.TotalAlloc - before.TotalAlloc; n > 1<<20 {
				t.Errorf("10 decodes of %d bytes allocated %d bytes", len(c.area), n)
			}
		})
	}
}
