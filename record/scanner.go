package record

import "io"

// Batch is one batch (V2) or message/wrapper (V0/V1) as found by a Scanner.
type Batch struct {
	Header BatchHeader
	Pos    int64  // position of the batch in its file or slice
	Raw    []byte // the whole batch bytes (aliases the scanner's buffer; valid until Next)
	File   string // the name used in errors
}

// Scanner walks the batches of a segment (or a raw record set) between
// start and end, checking size bounds and the CRC of each batch (V2:
// CRC-32C over attributes..end; V0/V1: CRC-32 IEEE over magic..end).
type Scanner struct {
	r        io.ReaderAt
	pos, end int64
	file     string
	buf      []byte
	batch    Batch
	err      error
}

// NewScanner returns a Scanner over r's bytes [start, end). file is the name
// used in errors.
func NewScanner(r io.ReaderAt, start, end int64, file string) *Scanner {
	return &Scanner{r: r, pos: start, end: end, file: file}
}

// Next advances to the next batch. It returns false at the end of the data
// or at the first error (see Err).
func (s *Scanner) Next() bool { return false }

// Batch returns the current batch; valid until the next call of Next.
func (s *Scanner) Batch() *Batch { return &s.batch }

// Err is nil after a clean end, an error matching ErrTruncated at a partial
// tail, and a *CorruptionError for anything else.
func (s *Scanner) Err() error { return s.err }
