package internaltopic

import (
	"unicode/utf16"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// GroupPartition is the partition of __consumer_offsets (of partitions
// partitions) that Kafka keeps group in: Kafka's Utils.abs of Java's
// String.hashCode of the name (over its UTF-16 code units; abs of the
// smallest int is 0), modulo the partition count.
func GroupPartition(group string, partitions int) int {
	var h int32
	for _, u := range utf16.Encode([]rune(group)) {
		h = 31*h + int32(u)
	}
	switch {
	case h == -1<<31:
		h = 0
	case h < 0:
		h = -h
	}
	return int(h) % partitions
}

// OffsetCommitRecord is the record Kafka's group coordinator appends to
// __consumer_offsets for one committed offset: key version 1 (group,
// topic, partition), value version 3 (offset, no leader epoch, empty
// metadata, the commit time in ms).
func OffsetCommitRecord(group, topic string, partition int32, offset, commitMs int64) (key, value []byte) {
	k := kmsg.OffsetCommitKey{Version: keyOffsetCommitV1, Group: group, Topic: topic, Partition: partition}
	v := kmsg.OffsetCommitValue{Version: 3, Offset: offset, LeaderEpoch: -1, CommitTimestamp: commitMs}
	return k.AppendTo(nil), v.AppendTo(nil)
}
