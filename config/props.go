package config

import (
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/partfs/partfs/compression"
)

// prop describes one property: how to show it and how to parse, check
// and store a value.
type prop struct {
	key string
	get func(t *Topic) string
	set func(t *Topic, v string) error
}

// props lists every property in display order (docs/spec.md §6).
var props = []prop{
	{"cleanup.policy", func(t *Topic) string { return t.CleanupPolicy }, setCleanupPolicy},
	enumProp("compression.type", func(t *Topic) *string { return &t.Compression },
		append(compression.Names(), "producer")...),
	longProp("segment.bytes", 14, math.MaxInt32, func(t *Topic) *int64 { return &t.SegmentBytes }),
	longProp("segment.ms", 1, math.MaxInt64, func(t *Topic) *int64 { return &t.SegmentMs }),
	longProp("segment.jitter.ms", 0, math.MaxInt64, func(t *Topic) *int64 { return &t.SegmentJitterMs }),
	// Kafka accepts 4, but below 12 bytes a time index has no slot for the
	// entry every roll and close writes: refused (EINVAL) instead
	intProp("segment.index.bytes", MinIndexBytes, func(t *Topic) *int { return &t.SegmentIndexBytes }),
	intProp("index.interval.bytes", 0, func(t *Topic) *int { return &t.IndexIntervalBytes }),
	longProp("retention.ms", -1, math.MaxInt64, func(t *Topic) *int64 { return &t.RetentionMs }),
	longProp("retention.bytes", math.MinInt64, math.MaxInt64, func(t *Topic) *int64 { return &t.RetentionBytes }),
	{"min.cleanable.dirty.ratio", func(t *Topic) string {
		return strconv.FormatFloat(t.MinCleanableDirtyRatio, 'g', -1, 64)
	}, setDirtyRatio},
	longProp("delete.retention.ms", 0, math.MaxInt64, func(t *Topic) *int64 { return &t.DeleteRetentionMs }),
	longProp("min.compaction.lag.ms", 0, math.MaxInt64, func(t *Topic) *int64 { return &t.MinCompactionLagMs }),
	longProp("max.compaction.lag.ms", 1, math.MaxInt64, func(t *Topic) *int64 { return &t.MaxCompactionLagMs }),
	intProp("max.message.bytes", 0, func(t *Topic) *int { return &t.MaxMessageBytes }),
	enumProp("message.timestamp.type", func(t *Topic) *string { return &t.TimestampType },
		"CreateTime", "LogAppendTime"),
	longProp("flush.messages", 1, math.MaxInt64, func(t *Topic) *int64 { return &t.FlushMessages }),
	longProp("flush.ms", 0, math.MaxInt64, func(t *Topic) *int64 { return &t.FlushMs }),
	longProp("file.delete.delay.ms", 0, math.MaxInt64, func(t *Topic) *int64 { return &t.FileDeleteDelayMs }),
}

func lookup(key string) (prop, bool) {
	for _, p := range props {
		if p.key == key {
			return p, true
		}
	}
	return prop{}, false
}

// longProp is a 64-bit integer property with an inclusive range.
func longProp(key string, lo, hi int64, field func(*Topic) *int64) prop {
	return prop{
		key: key,
		get: func(t *Topic) string { return strconv.FormatInt(*field(t), 10) },
		set: func(t *Topic, v string) error {
			n, err := parseRange(v, lo, hi)
			if err != nil {
				return err
			}
			*field(t) = n
			return nil
		},
	}
}

// intProp is a 32-bit integer property with a lower bound.
func intProp(key string, lo int64, field func(*Topic) *int) prop {
	return prop{
		key: key,
		get: func(t *Topic) string { return strconv.Itoa(*field(t)) },
		set: func(t *Topic, v string) error {
			n, err := parseRange(v, lo, math.MaxInt32)
			if err != nil {
				return err
			}
			*field(t) = int(n)
			return nil
		},
	}
}

func parseRange(v string, lo, hi int64) (int64, error) {
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil {
		return 0, fmt.Errorf("not an integer")
	}
	if n < lo || n > hi {
		return 0, fmt.Errorf("must be in [%d, %d]", lo, hi)
	}
	return n, nil
}

// enumProp is a string property taking one of values (case-sensitive).
func enumProp(key string, field func(*Topic) *string, values ...string) prop {
	return prop{
		key: key,
		get: func(t *Topic) string { return *field(t) },
		set: func(t *Topic, v string) error {
			for _, ok := range values {
				if v == ok {
					*field(t) = v
					return nil
				}
			}
			return fmt.Errorf("must be one of %s", strings.Join(values, ", "))
		},
	}
}

// setCleanupPolicy takes a comma-separated list of delete and compact,
// stored canonically as delete, compact or delete,compact.
func setCleanupPolicy(t *Topic, v string) error {
	var del, compact bool
	for _, item := range strings.Split(v, ",") {
		switch strings.TrimSpace(item) {
		case "delete":
			del = true
		case "compact":
			compact = true
		default:
			return fmt.Errorf("must be delete, compact or delete,compact")
		}
	}
	switch {
	case del && compact:
		t.CleanupPolicy = "delete,compact"
	case compact:
		t.CleanupPolicy = "compact"
	default:
		t.CleanupPolicy = "delete"
	}
	return nil
}

func setDirtyRatio(t *Topic, v string) error {
	f, err := strconv.ParseFloat(v, 64)
	if err != nil || math.IsNaN(f) {
		return fmt.Errorf("not a number")
	}
	if f < 0 || f > 1 {
		return fmt.Errorf("must be in [0, 1]")
	}
	t.MinCleanableDirtyRatio = f
	return nil
}
