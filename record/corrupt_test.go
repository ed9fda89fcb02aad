package record

import (
	"bytes"
	"encoding/binary"
	"errors"
	"hash/crc32"
	"strings"
	"testing"

	"github.com/partfs/partfs/compression"
)

// twoBatches returns two uncompressed batches; the second starts at pos.
func twoBatches(t *testing.T) (raw []byte, pos int64) {
	var e Encoder
	recs := []Record{{Timestamp: 1, Key: []byte("k"), Value: []byte("v1")}, {Timestamp: 2, Value: []byte("v2")}}
	raw, err := e.AppendBatch(nil, 0, recs, BatchOptions{})
	if err != nil {
		t.Fatal(err)
	}
	pos = int64(len(raw))
	raw, err = e.AppendBatch(raw, 2, recs, BatchOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return raw, pos
}

// fixCRC recomputes the CRC of the V2 batch at b[pos:].
func fixCRC(b []byte, pos int64) {
	size := int64(binary.BigEndian.Uint32(b[pos+8:])) + LogOverhead
	end := min(pos+size, int64(len(b)))
	binary.BigEndian.PutUint32(b[pos+17:], crc32.Checksum(b[pos+21:end], castagnoli))
}

// TestCorruptionCases: one harness, many corruptions of the second batch;
// each yields the first batch's records, then an error at the second's
// position with the expected reason.
func TestCorruptionCases(t *testing.T) {
	be := binary.BigEndian
	cases := []struct {
		name      string
		mutate    func(b []byte, p int64) []byte
		reason    string
		truncated bool
	}{
		{"bit flip", func(b []byte, p int64) []byte { b[p+70] ^= 1; return b }, "CRC mismatch", false},
		{"count too high", func(b []byte, p int64) []byte { be.PutUint32(b[p+57:], 3); fixCRC(b, p); return b }, "declares 3 records", false},
		{"count too low", func(b []byte, p int64) []byte { be.PutUint32(b[p+57:], 1); fixCRC(b, p); return b }, "incorrect declared batch size", false},
		{"negative count", func(b []byte, p int64) []byte { be.PutUint32(b[p+57:], 0xffffffff); fixCRC(b, p); return b }, "negative record count", false},
		{"unknown codec", func(b []byte, p int64) []byte { b[p+22] |= 5; fixCRC(b, p); return b }, "unknown compression codec id 5", false},
		{"varint overflow", func(b []byte, p int64) []byte {
			copy(b[p+61:], []byte{0xff, 0xff, 0xff, 0xff, 0xff, 0x01})
			fixCRC(b, p)
			return b
		}, "bad record length varint", false},
		{"record length past end", func(b []byte, p int64) []byte { b[p+61] = 0x7e; fixCRC(b, p); return b }, "runs past", false},
		{"size below header", func(b []byte, p int64) []byte { be.PutUint32(b[p+8:], 40); return b }, "smaller than the minimum 61", false},
		{"size below minimum", func(b []byte, p int64) []byte { be.PutUint32(b[p+8:], 3); return b }, "smaller than the minimum 14", false},
		{"unknown magic", func(b []byte, p int64) []byte { b[p+16] = 3; return b }, "unknown magic 3", false},
		{"zero-filled tail", func(b []byte, p int64) []byte { clear(b[p:]); return b }, "smaller than the minimum", false},
		{"short zero tail", func(b []byte, p int64) []byte { return append(b[:p], make([]byte, 17)...) }, "only 17 bytes left", true},
		{"cut batch", func(b []byte, p int64) []byte { return b[:len(b)-1] }, "runs past the end", true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			raw, pos := twoBatches(t)
			raw = c.mutate(raw, pos)
			n, err := decodeCount(raw, "seg.log")
			var ce *CorruptionError
			if !errors.As(err, &ce) || !errors.Is(err, ErrCorruption) {
				t.Fatalf("err = %v", err)
			}
			want := 2 // the first batch's records
			if c.name == "count too high" {
				want = 4 // records stream out before the count check fails
			} else if c.name == "count too low" {
				want = 3
			}
			if n != want || ce.Pos != pos || ce.File != "seg.log" || !strings.Contains(ce.Reason, c.reason) {
				t.Errorf("%d records, error %q; want %d records and position %d, reason %q", n, err, want, pos, c.reason)
			}
			if errors.Is(err, ErrTruncated) != c.truncated {
				t.Errorf("truncated = %v, want %v", !c.truncated, c.truncated)
			}
		})
	}
}

// TestDecompressionBombRejected: a small zstd batch of 1 MiB zeros fails
// under a 512 KiB bound with a corruption error at its position.
func TestDecompressionBombRejected(t *testing.T) {
	var e Encoder
	raw, _ := e.AppendBatch(nil, 0, []Record{{Value: make([]byte, 1<<20)}}, BatchOptions{Codec: Zstd})
	if len(raw) > 4096 {
		t.Fatalf("batch is %d bytes", len(raw))
	}
	s := NewBytesScanner(raw, "bomb")
	s.Next()
	d := Decoder{MaxDecompressed: 512 << 10}
	err := d.Records(s.Batch(), func(*Record) bool { return true })
	if !errors.Is(err, ErrCorruption) || !errors.Is(err, compression.ErrTooBig) {
		t.Errorf("err = %v", err)
	}
}

// TestScannerReaderAt: the ReaderAt path (small read-ahead buffers, a
// batch larger than the buffer) sees the same batches as the byte path.
func TestScannerReaderAt(t *testing.T) {
	var e Encoder
	var raw []byte
	for i := 0; i < 50; i++ {
		raw, _ = e.AppendBatch(raw, int64(i*3), []Record{{Value: bytes.Repeat([]byte{'x'}, i*4000)}, {}, {}}, BatchOptions{})
	}
	s := NewScanner(bytes.NewReader(raw), 0, int64(len(raw)), "r")
	n := 0
	for ; s.Next(); n++ {
		if s.Batch().Header.BaseOffset != int64(n*3) {
			t.Fatalf("batch %d at offset %d", n, s.Batch().Header.BaseOffset)
		}
	}
	if n != 50 || s.Err() != nil || s.Pos() != int64(len(raw)) {
		t.Errorf("%d batches, err %v, pos %d", n, s.Err(), s.Pos())
	}
	// end beyond the real size: a partial tail at the real end.
	s = NewScanner(bytes.NewReader(raw[:len(raw)-5]), 0, int64(len(raw)), "r")
	for s.Next() {
	}
	if !errors.Is(s.Err(), ErrTruncated) {
		t.Errorf("short reader: %v", s.Err())
	}
}
