package partlog

import (
	"fmt"

	"github.com/partfs/partfs/record"
)

// CheckNextPartition applies AddPartition's rule to partition n of a topic
// with count partitions: an existing partition is ErrExists, one that
// would leave a gap ErrInvalid.
func CheckNextPartition(topic string, n, count int) error {
	if n >= 0 && n < count {
		return fmt.Errorf("partition %d of %q: %w", n, topic, ErrExists)
	}
	if n != count {
		return fmt.Errorf("partition %d of %q: the next partition is %d: %w", n, topic, count, ErrInvalid)
	}
	return nil
}

// LookupTopic returns the entry of topic name in topics, or an error
// wrapping ErrNotFound that names the topic.
func LookupTopic[T any](topics map[string]T, name string) (T, error) {
	t, ok := topics[name]
	if !ok {
		return t, fmt.Errorf("topic %q: %w", name, ErrNotFound)
	}
	return t, nil
}

// CheckKeyed applies Kafka's rule for a compacted topic ("Compacted topic
// cannot accept message without key"): every record needs a key, else
// the append is refused whole (ErrInvalid). recs are the records of an
// append to partition of topic; compacted is whether cleanup.policy
// includes compact.
func CheckKeyed(topic string, partition int, compacted bool, recs []record.Record) error {
	if !compacted {
		return nil
	}
	for i := range recs {
		if recs[i].Key == nil {
			return KeylessError(topic, partition)
		}
	}
	return nil
}

// KeylessError is the refusal CheckKeyed returns, for a backend that sees
// keyless records without making them (plain lines).
func KeylessError(topic string, partition int) error {
	return fmt.Errorf("append to %s-%d: a compacted topic cannot accept a record without a key: %w", topic, partition, ErrInvalid)
}
