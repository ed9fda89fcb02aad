package record

import "github.com/partfs/partfs/compression"

// Codec is a batch's compression codec, bits 0-2 of its attributes; the
// codecs themselves live in package compression.
type Codec = compression.Codec

// The codecs Kafka knows, as a batch names them.
const (
	None   = compression.None
	Gzip   = compression.Gzip
	Snappy = compression.Snappy
	LZ4    = compression.LZ4
	Zstd   = compression.Zstd
)
