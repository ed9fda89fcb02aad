package record

import (
	"errors"
	"fmt"
)

// ErrCorruption is matched (errors.Is) by every decode failure of this package.
var ErrCorruption = errors.New("record: corrupt data")

// ErrTruncated marks a partial tail: fewer than 17 bytes left, or a batch
// whose size field runs past the end of the data. Kafka's file iterator stops
// silently there and recovery truncates it. An error wrapping ErrTruncated
// also matches ErrCorruption.
var ErrTruncated = errors.New("record: truncated batch at end of data")

// CorruptionError locates a decode failure: the file (or the name the caller
// gave a byte slice), the byte position of the batch (or message) that failed,
// and what was wrong. Err, when set, is the underlying cause (ErrTruncated, a
// decompressor's error, ...).
type CorruptionError struct {
	File   string
	Pos    int64
	Reason string
	Err    error
}

// Error names the file and the position.
func (e *CorruptionError) Error() string {
	name := e.File
	if name == "" {
		name = "<records>"
	}
	if e.Err != nil && e.Err != ErrTruncated {
		return fmt.Sprintf("%s: at position %d: %s: %v", name, e.Pos, e.Reason, e.Err)
	}
	return fmt.Sprintf("%s: at position %d: %s", name, e.Pos, e.Reason)
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
