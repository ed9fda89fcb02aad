package record

import (
	"errors"
	"fmt"
)

// ErrCorruption is partfs's one corruption sentinel: every decode failure
// of this package matches it (errors.Is), and so does every
// *CorruptionError, which the packages reading stored files (index,
// checkpoint, logstore) return for what they find damaged.
var ErrCorruption = errors.New("corrupt data")

// ErrTruncated marks a partial tail: fewer than 17 bytes left, or a batch
// whose size field runs past the end of the data. Kafka's file iterator stops
// silently there and recovery truncates it. An error wrapping ErrTruncated
// also matches ErrCorruption.
var ErrTruncated = errors.New("record: truncated batch at end of data")

// CorruptionError says where stored data is damaged: the file (or the name the
// caller gave a byte slice), the byte position of the batch, message or
// index entry that failed, and what was wrong. In a text file Line, when
// not 0, is the 1-based line that failed, and Pos the byte where it starts
// when known. Err, when set, is the underlying cause (ErrTruncated, a
// decompressor's error, ...).
type CorruptionError struct {
	File   string
	Pos    int64
	Line   int
	Reason string
	Err    error
}

// Error names the file and the position.
func (e *CorruptionError) Error() string {
	name := e.File
	if name == "" {
		name = "<records>"
	}
	at := fmt.Sprintf("%s: at position %d", name, e.Pos)
	if e.Line > 0 {
		at = fmt.Sprintf("%s: line %d", name, e.Line)
	}
	why := e.Reason
	if e.Err != nil && e.Err != ErrTruncated {
		if why != "" {
			why += ": "
		}
		why += e.Err.Error()
	}
	return at + ": " + why
}

// Unwrap returns the underlying cause.
func (e *CorruptionError) Unwrap() error { return e.Err }

// Is makes every CorruptionError match ErrCorruption.
func (e *CorruptionError) Is(target error) bool { return target == ErrCorruption }

// corruptf builds a CorruptionError without a cause.
func corruptf(file string, pos int64, format string, args ...any) *CorruptionError {
	return &CorruptionError{File: file, Pos: pos, Reason: fmt.Sprintf(format, args...)}
}

// truncated builds the error of a partial tail.
func truncated(file string, pos int64, format string, args ...any) *CorruptionError {
	return &CorruptionError{File: file, Pos: pos, Reason: fmt.Sprintf(format, args...), Err: ErrTruncated}
}
