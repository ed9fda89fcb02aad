package index

import (
	"errors"
	"fmt"

	"github.com/partfs/partfs/record"
)

// Errors of this package; match them with errors.Is.
var (
	// ErrFull: an append to a full index (roll the segment first).
	ErrFull = errors.New("index is full")
	// ErrInvalidOffset: an offset not above the last entry's, or a
	// timestamp below the last entry's.
	ErrInvalidOffset = errors.New("invalid index offset")
	// ErrOffsetOverflow: offset - base offset does not fit in 0..MaxInt32.
	ErrOffsetOverflow = errors.New("relative offset out of range")
	// ErrReadOnly: a change to an index opened read-only.
	ErrReadOnly = errors.New("index is read-only")
)

// corrupt names where a sanity check failed: the index file, the entry number
// and its byte position. It matches record.ErrCorruption: rebuild the index.
func corrupt(file string, entry int, pos int64, reason string) *record.CorruptionError {
	return &record.CorruptionError{File: file, Pos: pos, Reason: fmt.Sprintf("entry %d: %s", entry, reason)}
}
