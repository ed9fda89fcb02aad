package record

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"

	"github.com/partfs/partfs/internal/crc32c"
)

// Batch is one batch (V2) or message/wrapper (V0/V1) as found by a Scanner.
type Batch struct {
	Header BatchHeader
	Pos    int64  // position of the batch in its file or slice
	Raw    []byte // the whole batch bytes (aliases the scanner's buffer; valid until Next)
	File   string // the name used in errors
}

// DefaultMaxBatchSize is the default Scanner.MaxBatchSize.
const DefaultMaxBatchSize = 128 << 20

func (s *Scanner) maxBatch() int64 {
	if s.MaxBatchSize > 0 {
		return s.MaxBatchSize
	}
	return DefaultMaxBatchSize
}

// A Scanner's read-ahead starts at minChunk and doubles per refill up to
// maxChunk, so short scans read little and long ones few times.
const (
	minChunk = 32 << 10
	maxChunk = 1 << 20
)

// Scanner walks the batches of a segment (or a raw record set) between
// start and end, checking size bounds and the CRC of each batch (V2:
// CRC-32C over attributes..end; V0/V1: CRC-32 IEEE over magic..end).
// Like Kafka's FileLogInputStream it stops at a partial tail: fewer than 17
// bytes left, or a size field running past end (Err then matches
// ErrTruncated).
type Scanner struct {
	// MaxBatchSize bounds one batch's size (0 = DefaultMaxBatchSize), so a
	// garbage size field in a large file cannot make the scanner allocate
	// without limit.
	MaxBatchSize int64

	r        io.ReaderAt
	pos, end int64
	file     string

	buf    []byte // read-ahead buffer holding the file's bytes [bufPos, bufPos+len(buf))
	bufPos int64
	chunk  int64 // the next read-ahead size
	batch  Batch
	err    error
}

// NewScanner returns a Scanner over r's bytes [start, end). file is the name
// used in errors.
func NewScanner(r io.ReaderAt, start, end int64, file string) *Scanner {
	return &Scanner{r: r, pos: start, end: end, file: file, bufPos: start, chunk: minChunk}
}

// Reset makes s scan r's bytes [start, end) as NewScanner would, keeping its
// read-ahead buffer (for pooled scanners). MaxBatchSize is kept.
func (s *Scanner) Reset(r io.ReaderAt, start, end int64, file string) {
	buf := s.buf
	if s.r == nil {
		buf = nil // a bytes scanner's buffer is the caller's slice
	}
	*s = Scanner{MaxBatchSize: s.MaxBatchSize, r: r, pos: start, end: end, file: file,
		buf: buf[:0], bufPos: start, chunk: minChunk}
}

// NewBytesScanner is NewScanner over a byte slice (positions relative to b).
func NewBytesScanner(b []byte, file string) *Scanner { return NewBytesScannerAt(b, 0, file) }

// NewBytesScannerAt is NewBytesScanner of bytes that lie at base in their
// file: batch positions, Pos and errors count from base.
func NewBytesScannerAt(b []byte, base int64, file string) *Scanner {
	return &Scanner{pos: base, end: base + int64(len(b)), file: file, buf: b, bufPos: base}
}

// Next advances to the next batch. It returns false at the end of the data
// or at the first error (see Err).
func (s *Scanner) Next() bool {
	s.batch = Batch{}
	if s.err != nil || s.pos >= s.end {
		return false
	}
	var err error
	if left := s.end - s.pos; left <= headerUpToMagic {
		err = truncated(s.file, s.pos, "only %d bytes left, less than a batch header", left)
	} else {
		err = s.nextBatch()
	}
	if err != nil {
		s.err = err
		s.batch = Batch{}
		return false
	}
	return true
}

// nextBatch checks the size field at s.pos as Kafka's FileLogInputStream
// does, then loads, parses and verifies the batch.
func (s *Scanner) nextBatch() error {
	head, err := s.load(s.pos, headerUpToMagic)
	if err != nil {
		return err
	}
	size := int64(int32(binary.BigEndian.Uint32(head[8:])))
	if size < legacyOverheadV0 {
		return corruptf(s.file, s.pos, "batch size %d is smaller than the minimum %d", size, legacyOverheadV0)
	}
	if size += LogOverhead; size > s.end-s.pos {
		return truncated(s.file, s.pos, "batch of %d bytes runs past the end of the data (%d bytes left)", size, s.end-s.pos)
	}
	if limit := s.maxBatch(); size > limit {
		return corruptf(s.file, s.pos, "batch size %d exceeds the largest allowed %d", size, limit)
	}
	raw, err := s.load(s.pos, size)
	if err != nil {
		return err
	}
	h, err := parseHeaderAt(raw, s.file, s.pos)
	if err != nil {
		return err
	}
	if err := CheckCRC(&h, raw, s.file, s.pos); err != nil {
		return err
	}
	s.batch = Batch{Header: h, Pos: s.pos, Raw: raw, File: s.file}
	s.pos += size
	return nil
}

// CheckCRC verifies the CRC of a whole batch raw whose header is h: a V2
// batch's CRC-32C over attributes..end, a legacy message's CRC-32 over
// magic..end. A mismatch is a *CorruptionError naming file and pos.
func CheckCRC(h *BatchHeader, raw []byte, file string, pos int64) error {
	var got uint32
	if h.Magic >= 2 {
		got = crc32c.Checksum(raw[21:])
	} else {
		got = crc32.ChecksumIEEE(raw[16:])
	}
	if got != h.CRC {
		return corruptf(file, pos, "CRC mismatch: stored %08x, computed %08x", h.CRC, got)
	}
	return nil
}

// load returns the bytes [pos, pos+n) of the data, reading ahead as needed.
func (s *Scanner) load(pos, n int64) ([]byte, error) {
	off := pos - s.bufPos
	if off >= 0 && off+n <= int64(len(s.buf)) {
		return s.buf[off : off+n], nil
	}
	if s.r == nil {
		return nil, truncated(s.file, pos, "data ends before %d bytes", n)
	}
	want := min(max(n, s.chunk), s.end-pos)
	s.chunk = min(2*s.chunk, maxChunk)
	// Bytes from pos on that the buffer holds already (a batch whose
	// header came with the last read) move to the front, not read again.
	held := s.buf[:0]
	if off >= 0 && off < int64(len(s.buf)) {
		held = s.buf[off:]
	}
	buf := s.buf
	if int64(cap(buf)) < want {
		buf = make([]byte, want)
	}
	buf = buf[:want]
	keep := copy(buf, held)
	s.bufPos = pos
	got, err := s.r.ReadAt(buf[keep:], pos+int64(keep))
	got += keep
	s.buf = buf[:got]
	if got >= int(n) {
		return s.buf[:n], nil
	}
	if err == nil || errors.Is(err, io.EOF) {
		s.end = pos + int64(got) // the file is shorter than the caller said
		return nil, truncated(s.file, pos, "data ends %d bytes into a %d-byte read", got, n)
	}
	return nil, fmt.Errorf("record: reading %s at position %d: %w", s.file, pos, err)
}

// Pos is the position after the last batch returned (the valid size when Err is set).
func (s *Scanner) Pos() int64 { return s.pos }

// Batch returns the current batch; valid until the next call of Next.
func (s *Scanner) Batch() *Batch { return &s.batch }

// Err is nil after a clean end, an error matching ErrTruncated at a partial
// tail, a *CorruptionError for bad bytes, and the reader's error (wrapped,
// not a corruption) when reading fails.
func (s *Scanner) Err() error { return s.err }
