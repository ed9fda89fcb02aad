// Package inspect prints and verifies partfs/Kafka data files offline, and
// changes nothing on disk. It owns the logic behind `partfs dump`:
// segments and raw record sets, their records decoded with an internal
// topic's schemas on request (dumplog.go); offset and time indexes, their
// check against the segment beside them, and transaction indexes
// (dumpindex.go); offset checkpoints, leader-epoch checkpoints,
// partition.metadata, meta.properties and the clean-shutdown marker
// (dumpcheckpoint.go). And behind `partfs check`: a whole data directory,
// its partitions being the directories the store opens (check.go).
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
