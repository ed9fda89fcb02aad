// Package inspect prints and verifies partfs/Kafka data files offline: the
// logic behind `partfs dump` (segments, raw record sets, indexes,
// checkpoints) and `partfs check` (a whole data directory). It changes
// nothing on disk.
package inspect

// DumpOptions are the flags of `partfs dump`.
type DumpOptions struct {
	JSON        bool // one JSON object per line
	PrintData   bool // include keys, values and headers (for .log files)
	VerifyIndex bool // check index entries against the segment beside it
}
