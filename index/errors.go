package index

import (
	"errors"
	"fmt"
)

// Errors of this package; match them with errors.Is.
var (
	// ErrCorrupt: an index failed its sanity check; rebuild it.
	ErrCorrupt = errors.New("corrupt index")
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

// CorruptError locates a failed sanity check: the index file, the entry
// number and its byte position in the file.
type CorruptError struct {
	File   string
	Entry  int
	Pos    int64
	Reason string
}

func (e *CorruptError) Error() string {
	return fmt.Sprintf("corrupt index %s at entry %d (byte %d): %s", e.File, e.Entry, e.Pos, e.Reason)
}

// Is makes errors.Is(err, ErrCorrupt) true.
func (e *CorruptError) Is(target error) bool { return target == ErrCorrupt }
