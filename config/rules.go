package config

import (
	"fmt"
	"iter"
	"strings"

	"github.com/partfs/partfs/compression"
)

// DefaultMaxMessageBytes is Kafka's max.message.bytes: the largest record
// batch a topic takes (1 MiB plus the batch overhead of the old format).
const DefaultMaxMessageBytes = 1048588

// Codec is the codec a producer writes the topic's batches in: the
// compression.type, where "producer" (the producer chooses; partfs
// writes uncompressed) and "uncompressed" are None. An unknown name wraps
// ErrInvalid.
func (t Topic) Codec() (compression.Codec, error) {
	switch t.Compression {
	case "", "producer", "uncompressed", "none":
		return compression.None, nil
	}
	c, err := compression.Parse(t.Compression)
	if err != nil {
		return 0, fmt.Errorf("%w: compression.type %q", ErrInvalid, t.Compression)
	}
	return c, nil
}

// Compressed reports whether the topic's batches are written compressed
// (true when compression.type names no codec partfs knows, the cautious
// answer for a size bound).
func (t Topic) Compressed() bool {
	c, err := t.Codec()
	return err != nil || c != compression.None
}

// LogAppendTime reports message.timestamp.type=LogAppendTime: the log
// stamps each batch with the time of the append.
func (t Topic) LogAppendTime() bool { return t.TimestampType == "LogAppendTime" }

// Reported builds the configuration a store reported as key=value pairs
// (a cluster's DescribeConfigs, or a backend's TopicConfig): each known
// key with a valid value is taken, anything else keeps Kafka's default,
// so a setting partfs cannot read never makes a limit stricter than
// Kafka's.
func Reported(kv iter.Seq2[string, string]) Topic {
	t := Defaults()
	for k, v := range kv {
		next := t
		if next.set(k, v) == nil && next.Validate() == nil {
			t = next
		}
	}
	return t
}

// FormatLines renders key=value pairs as the `config` file shows them, one
// `key=value` line each; ParseLines reads them back.
func FormatLines(kvs [][2]string) string {
	var b strings.Builder
	for _, kv := range kvs {
		b.WriteString(kv[0] + "=" + kv[1] + "\n")
	}
	return b.String()
}
