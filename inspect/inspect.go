// Package inspect prints and verifies partfs/Kafka data files offline: the
// logic behind `partfs dump` (segments, raw record sets, indexes,
// checkpoints) and `partfs check` (a whole data directory). It changes
// nothing on disk.
package inspect

import "github.com/partfs/partfs/internaltopic"

// DumpOptions are the flags of `partfs dump`.
type DumpOptions struct {
	JSON        bool // one JSON object per line
	PrintData   bool // include keys, values and headers (for .log files)
	VerifyIndex bool // check index entries against the segment beside it
	// Decoder decodes records' keys and values with an internal topic's
	// schemas (kafka-dump-log's --offsets-decoder and its siblings); it
	// implies PrintData.
	Decoder internaltopic.Topic
}
