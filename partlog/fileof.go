package partlog

import (
	"errors"
	"os"

	"github.com/partfs/partfs/record"
)

// FileOf is the file an error is about, for log lines: the file of a
// record.CorruptionError, the path of an *os.PathError or the source of
// an *os.LinkError; "" when it names none.
func FileOf(err error) string {
	var ce *record.CorruptionError
	var pe *os.PathError
	var le *os.LinkError
	switch {
	case errors.As(err, &ce):
		return ce.File
	case errors.As(err, &pe):
		return pe.Path
	case errors.As(err, &le):
		return le.Old
	}
	return ""
}
