package compact

import "math"

// LogConfig is what the cleaner needs of a topic's configuration (Kafka
// property names in the comments).
type LogConfig struct {
	Compacted              bool    // cleanup.policy contains compact
	MinCleanableDirtyRatio float64 // min.cleanable.dirty.ratio
	DeleteRetentionMs      int64   // delete.retention.ms
	MinCompactionLagMs     int64   // min.compaction.lag.ms
	MaxCompactionLagMs     int64   // max.compaction.lag.ms
	SegmentBytes           int64   // segment.bytes
	SegmentIndexBytes      int64   // segment.index.bytes
	IndexIntervalBytes     int64   // index.interval.bytes
}

// DefaultLogConfig has Kafka's defaults for a compacted topic.
func DefaultLogConfig() LogConfig {
	return LogConfig{
		Compacted:              true,
		MinCleanableDirtyRatio: 0.5,
		DeleteRetentionMs:      86400000,
		MaxCompactionLagMs:     math.MaxInt64,
		SegmentBytes:           1 << 30,
		SegmentIndexBytes:      10 << 20,
		IndexIntervalBytes:     4096,
	}
}
