package memlog

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/partfs/partfs/partlog"
)

// defaults are Kafka's topic defaults (SPEC §6), in display order.
var defaults = []partlog.KV{
	{Key: "cleanup.policy", Value: "delete"},
	{Key: "compression.type", Value: "producer"},
	{Key: "segment.bytes", Value: "1073741824"},
	{Key: "segment.ms", Value: "604800000"},
	{Key: "segment.jitter.ms", Value: "0"},
	{Key: "segment.index.bytes", Value: "10485760"},
	{Key: "index.interval.bytes", Value: "4096"},
	{Key: "retention.ms", Value: "604800000"},
	{Key: "retention.bytes", Value: "-1"},
	{Key: "min.cleanable.dirty.ratio", Value: "0.5"},
	{Key: "delete.retention.ms", Value: "86400000"},
	{Key: "min.compaction.lag.ms", Value: "0"},
	{Key: "max.compaction.lag.ms", Value: "9223372036854775807"},
	{Key: "max.message.bytes", Value: "1048588"},
	{Key: "message.timestamp.type", Value: "CreateTime"},
	{Key: "flush.messages", Value: "9223372036854775807"},
	{Key: "flush.ms", Value: "9223372036854775807"},
	{Key: "file.delete.delay.ms", Value: "60000"},
}

func knownKey(key string) bool {
	for _, kv := range defaults {
		if kv.Key == key {
			return true
		}
	}
	return false
}

// validate checks one property; the error wraps partlog.ErrInvalid.
func validate(key, value string) error {
	if !knownKey(key) {
		return fmt.Errorf("unknown config key %q: %w", key, partlog.ErrInvalid)
	}
	bad := func() error {
		return fmt.Errorf("bad value %q for %s: %w", value, key, partlog.ErrInvalid)
	}
	switch key {
	case "cleanup.policy":
		switch value {
		case "delete", "compact", "delete,compact", "compact,delete":
			return nil
		}
		return bad()
	case "compression.type":
		switch value {
		case "producer", "none", "gzip", "snappy", "lz4", "zstd", "uncompressed":
			return nil
		}
		return bad()
	case "message.timestamp.type":
		if value == "CreateTime" || value == "LogAppendTime" {
			return nil
		}
		return bad()
	case "min.cleanable.dirty.ratio":
		f, err := strconv.ParseFloat(value, 64)
		if err != nil || f < 0 || f > 1 {
			return bad()
		}
		return nil
	}
	n, err := strconv.ParseInt(value, 10, 64)
	if err != nil || (n < 0 && n != -1) || (n == -1 && !strings.HasPrefix(key, "retention.")) {
		return bad()
	}
	if key == "segment.bytes" && n < 14 {
		return bad()
	}
	return nil
}

// effective merges Kafka defaults, mount defaults and topic overrides.
func effective(mount, topic map[string]string) []partlog.KV {
	out := make([]partlog.KV, len(defaults))
	for i, kv := range defaults {
		if v, ok := mount[kv.Key]; ok {
			kv.Value = v
		}
		if v, ok := topic[kv.Key]; ok {
			kv.Value = v
		}
		out[i] = kv
	}
	return out
}

func lookup(kvs []partlog.KV, key string) string {
	for _, kv := range kvs {
		if kv.Key == key {
			return kv.Value
		}
	}
	return ""
}

func lookupInt(kvs []partlog.KV, key string) int64 {
	n, _ := strconv.ParseInt(lookup(kvs, key), 10, 64)
	return n
}
