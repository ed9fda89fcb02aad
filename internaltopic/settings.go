package internaltopic

// segmentBytes is the segment.bytes Kafka creates its internal topics with
// (offsets.topic.segment.bytes, transaction.state.log.segment.bytes).
const segmentBytes = "104857600"

// Settings returns the topic-level configuration Kafka gives the internal
// topic named name when it creates it (none for other topics): committed
// offsets and transaction states are compacted, never deleted by
// retention. A data directory whose topic configurations live elsewhere
// (ZooKeeper) applies them under whatever it stores for the topic.
func Settings(name string) map[string]string {
	switch ForTopic(name) {
	case ConsumerOffsets:
		return map[string]string{"cleanup.policy": "compact", "segment.bytes": segmentBytes, "compression.type": "producer"}
	case TransactionState:
		return map[string]string{"cleanup.policy": "compact", "segment.bytes": segmentBytes, "compression.type": "none"}
	}
	return nil
}
