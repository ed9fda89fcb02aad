package record

import "fmt"

// Codec is a compression codec as stored in bits 0-2 of a batch's attributes.
type Codec int8

// The codecs Kafka knows. Ids 5-7 are invalid on disk.
const (
	None   Codec = 0
	Gzip   Codec = 1
	Snappy Codec = 2
	LZ4    Codec = 3
	Zstd   Codec = 4
)

var codecNames = [...]string{"none", "gzip", "snappy", "lz4", "zstd"}

// String returns Kafka's name of the codec ("none", "gzip", ...).
func (c Codec) String() string {
	if c >= 0 && int(c) < len(codecNames) {
		return codecNames[c]
	}
	return fmt.Sprintf("unknown(%d)", int8(c))
}

// ParseCodec parses Kafka's codec names "none", "gzip", "snappy", "lz4"
// and "zstd" ("uncompressed" is accepted for "none").
func ParseCodec(name string) (Codec, error) {
	for i, n := range codecNames {
		if n == name {
			return Codec(i), nil
		}
	}
	if name == "uncompressed" {
		return None, nil
	}
	return None, fmt.Errorf("record: unknown compression codec %q", name)
}

// valid reports whether c is one of the five known codecs.
func (c Codec) valid() bool { return c >= None && c <= Zstd }
