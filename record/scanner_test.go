package record

import (
	"bytes"
	"errors"
	"testing"
)

// countingReader counts the bytes read through it.
type countingReader struct {
	r *bytes.Reader
	n int64
}

func (c *countingReader) ReadAt(p []byte, off int64) (int, error) {
	n, err := c.r.ReadAt(p, off)
	c.n += int64(n)
	return n, err
}

// TestScannerReadsBytesOnce: batches larger than the read-ahead, whose
// headers arrive with the previous read, are not read a second time, and
// every batch comes back whole and CRC-checked.
func TestScannerReadsBytesOnce(t *testing.T) {
	var e Encoder
	var raw []byte
	var sizes []int
	off := int64(0)
	for i := 0; i < 12; i++ {
		n := 9000 // ~1 MiB
		if i%2 == 1 {
			n = 700 // ~80 KiB: the next big batch's header lands in its read
		}
		before := len(raw)
		raw, _ = e.AppendBatch(raw, off, logLines(n), BatchOptions{})
		sizes = append(sizes, len(raw)-before)
		off += int64(n)
	}
	cr := &countingReader{r: bytes.NewReader(raw)}
	s := NewScanner(cr, 0, int64(len(raw)), "big")
	pos := int64(0)
	for i := 0; s.Next(); i++ {
		b := s.Batch()
		if b.Pos != pos || len(b.Raw) != sizes[i] || !bytes.Equal(b.Raw, raw[pos:pos+int64(sizes[i])]) {
			t.Fatalf("batch %d at %d: got pos %d, %d bytes", i, pos, b.Pos, len(b.Raw))
		}
		pos += int64(sizes[i])
	}
	if s.Err() != nil || pos != int64(len(raw)) {
		t.Fatalf("stopped at %d of %d: %v", pos, len(raw), s.Err())
	}
	if cr.n != int64(len(raw)) {
		t.Errorf("read %d bytes for a %d-byte file", cr.n, len(raw))
	}
}

// TestScannerShortRead: a file shorter than the caller said stops with
// ErrTruncated after the batches that are there, also when the short read
// follows bytes the read-ahead buffer held already.
func TestScannerShortRead(t *testing.T) {
	var e Encoder
	raw, _ := e.AppendBatch(nil, 0, logLines(50), BatchOptions{})
	first := len(raw)
	raw, _ = e.AppendBatch(raw, 50, logLines(9000), BatchOptions{})
	cut := raw[:first+500] // the second batch's header and a little of it
	s := NewScanner(bytes.NewReader(cut), 0, int64(len(raw)), "short")
	n := 0
	for s.Next() {
		n++
	}
	if n != 1 || !isTruncated(s.Err()) || s.Pos() != int64(first) {
		t.Fatalf("%d batches, pos %d, err %v", n, s.Pos(), s.Err())
	}
}

func isTruncated(err error) bool { return errors.Is(err, ErrTruncated) }

// TestBytesScannerAt scans two batches that lie at 1000 in their file:
// positions count from there, in batches and in errors.
func TestBytesScannerAt(t *testing.T) {
	var e Encoder
	b, _ := e.AppendBatch(nil, 0, []Record{{Value: []byte("a")}}, BatchOptions{})
	first := len(b)
	b, _ = e.AppendBatch(b, 1, []Record{{Value: []byte("b")}}, BatchOptions{})
	s := NewBytesScannerAt(b, 1000, "f")
	var pos []int64
	for s.Next() {
		pos = append(pos, s.Batch().Pos)
	}
	if s.Err() != nil || len(pos) != 2 || pos[0] != 1000 || pos[1] != 1000+int64(first) || s.Pos() != 1000+int64(len(b)) {
		t.Fatalf("batches at %v, end %d, err %v", pos, s.Pos(), s.Err())
	}
	b[first+30] ^= 1 // in the second batch's CRC-covered bytes
	s = NewBytesScannerAt(b, 1000, "f")
	for s.Next() {
	}
	var ce *CorruptionError
	if !errors.As(s.Err(), &ce) || ce.Pos != 1000+int64(first) {
		t.Fatalf("corrupt second batch: %v, want a corruption at %d", s.Err(), 1000+first)
	}
}
