package record

import "errors"

// DefaultMaxDecompressed bounds the inflated size of one batch's records.
const DefaultMaxDecompressed = 64 << 20

// Decoder turns batches into records: it decompresses, expands legacy
// wrappers (V0 absolute, V1 relative inner offsets) and applies
// LogAppendTime. It reuses its buffers (one Decoder per goroutine); the
// uncompressed V2 path allocates nothing per record.
type Decoder struct {
	// MaxDecompressed bounds the decompressed size of one batch
	// (0 = DefaultMaxDecompressed).
	MaxDecompressed int

	rec     Record
	headers []Header
	buf     []byte
}

// Records calls fn for each record of b in order until fn returns false. The
// *Record and its slices are valid only during the call.
func (d *Decoder) Records(b *Batch, fn func(*Record) bool) error {
	return errors.New("record: Records not implemented yet")
}
