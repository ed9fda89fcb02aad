// Package checkpoint owns Kafka's small text files of a log directory,
// byte for byte as a broker writes them (kafka-format.md §5):
//
//	recovery-point-offset-checkpoint,   "0\n" version, "<count>\n",
//	log-start-offset-checkpoint, ...    then "<topic> <partition> <offset>\n" lines
//	leader-epoch-checkpoint             "0\n<count>\n<epoch> <startOffset>\n..."
//	partition.metadata                  "version: 0\ntopic_id: <base64url UUID>" (no newline)
//	meta.properties                     "#\n#<date>\n" then key=value lines
//	.kafka_cleanshutdown                {"version":0,"brokerEpoch":N}
//
// Every write goes through vfs.WriteFileDurable (temp file, fsync, rename,
// directory fsync). Parse errors name the file and the line and match
// ErrMalformed.
package checkpoint

import (
	"errors"
	"fmt"
)

// ErrMalformed is matched by every parse error of this package.
var ErrMalformed = errors.New("malformed checkpoint file")

// ParseError locates a parse error: file, 1-based line, reason.
type ParseError struct {
	File   string
	Line   int
	Reason string
}

func (e *ParseError) Error() string {
	return fmt.Sprintf("%s: malformed checkpoint file %s line %d: %s", ErrMalformed.Error(), e.File, e.Line, e.Reason)
}

// Is makes errors.Is(err, ErrMalformed) true.
func (e *ParseError) Is(target error) bool { return target == ErrMalformed }

// currentCheckpointVer is the version line of the offset and epoch files.
const currentCheckpointVer = 0
