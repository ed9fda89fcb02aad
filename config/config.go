// Package config owns a topic's configuration: Kafka's topic property
// names, their defaults, their validation and their text form (the
// `config` file of the mount shows and takes `key=value` lines). It
// imports only compression, for the codecs of compression.type. Errors
// wrap ErrInvalid, which partlog shares as its ErrInvalid (EINVAL).
package config

import (
	"errors"
	"fmt"
	"math"
	"sort"
	"strings"
)

// ErrInvalid is matched by every error about an unknown key or a bad
// value. It is partlog.ErrInvalid (EINVAL) itself, so backends return
// config's errors as they are.
var ErrInvalid = errors.New("invalid argument")

// Topic is the effective configuration of a topic, one field per property.
type Topic struct {
	CleanupPolicy          string  // cleanup.policy: delete | compact | delete,compact
	Compression            string  // compression.type: none|uncompressed|gzip|snappy|lz4|zstd|producer
	SegmentBytes           int64   // segment.bytes
	SegmentMs              int64   // segment.ms
	SegmentJitterMs        int64   // segment.jitter.ms
	SegmentIndexBytes      int     // segment.index.bytes
	IndexIntervalBytes     int     // index.interval.bytes
	RetentionMs            int64   // retention.ms (-1 = forever)
	RetentionBytes         int64   // retention.bytes (-1 = unlimited)
	MinCleanableDirtyRatio float64 // min.cleanable.dirty.ratio
	DeleteRetentionMs      int64   // delete.retention.ms
	MinCompactionLagMs     int64   // min.compaction.lag.ms
	MaxCompactionLagMs     int64   // max.compaction.lag.ms
	MaxMessageBytes        int     // max.message.bytes
	TimestampType          string  // message.timestamp.type: CreateTime | LogAppendTime
	FlushMessages          int64   // flush.messages (math.MaxInt64 = never)
	FlushMs                int64   // flush.ms (math.MaxInt64 = never)
	FileDeleteDelayMs      int64   // file.delete.delay.ms
}

// MinIndexBytes is the smallest segment.index.bytes: one time index entry.
// Smaller indexes round down to whole entries and roll the segment when
// full, as Kafka's do.
const MinIndexBytes = 12

// Defaults returns Kafka's topic defaults.
func Defaults() Topic {
	return Topic{
		CleanupPolicy:          "delete",
		Compression:            "producer",
		SegmentBytes:           1 << 30,
		SegmentMs:              7 * 24 * 3600 * 1000,
		SegmentJitterMs:        0,
		SegmentIndexBytes:      10 << 20,
		IndexIntervalBytes:     4096,
		RetentionMs:            7 * 24 * 3600 * 1000,
		RetentionBytes:         -1,
		MinCleanableDirtyRatio: 0.5,
		DeleteRetentionMs:      24 * 3600 * 1000,
		MinCompactionLagMs:     0,
		MaxCompactionLagMs:     math.MaxInt64,
		MaxMessageBytes:        DefaultMaxMessageBytes,
		TimestampType:          "CreateTime",
		FlushMessages:          math.MaxInt64,
		FlushMs:                math.MaxInt64,
		FileDeleteDelayMs:      60000,
	}
}

// Keys returns every known property name in display order.
func Keys() []string {
	keys := make([]string, len(props))
	for i, p := range props {
		keys[i] = p.key
	}
	return keys
}

// Known reports whether key is a topic property.
func Known(key string) bool { _, ok := lookup(key); return ok }

// Get returns the value of key as text.
func (t Topic) Get(key string) (string, bool) {
	p, ok := lookup(key)
	if !ok {
		return "", false
	}
	return p.get(&t), true
}

// KVs returns every property with its value, in display order.
func (t Topic) KVs() [][2]string {
	out := make([][2]string, len(props))
	for i, p := range props {
		out[i] = [2]string{p.key, p.get(&t)}
	}
	return out
}

// Set validates value for key and changes it. On error t is unchanged.
func (t *Topic) Set(key, value string) error {
	next := *t
	if err := next.set(key, value); err != nil {
		return err
	}
	if err := next.Validate(); err != nil {
		return err
	}
	*t = next
	return nil
}

// set changes one key without cross-property checks.
func (t *Topic) set(key, value string) error {
	p, ok := lookup(key)
	if !ok {
		return fmt.Errorf("%w: unknown property %q", ErrInvalid, key)
	}
	if err := p.set(t, strings.TrimSpace(value)); err != nil {
		return fmt.Errorf("%w: %s=%q: %v", ErrInvalid, key, value, err)
	}
	return nil
}

// Validate checks rules across properties (Kafka's LogConfig.validateValues).
func (t Topic) Validate() error {
	if t.MinCompactionLagMs > t.MaxCompactionLagMs {
		return fmt.Errorf("%w: min.compaction.lag.ms (%d) > max.compaction.lag.ms (%d)",
			ErrInvalid, t.MinCompactionLagMs, t.MaxCompactionLagMs)
	}
	return nil
}

// Apply returns base with overrides applied if every key and value is
// valid; otherwise it returns base unchanged and an error naming every
// bad key (each wrapping ErrInvalid).
func Apply(base Topic, overrides map[string]string) (Topic, error) {
	keys := make([]string, 0, len(overrides))
	for k := range overrides {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	next := base
	var errs []error
	for _, k := range keys {
		if err := next.set(k, overrides[k]); err != nil {
			errs = append(errs, err)
		}
	}
	if len(errs) == 0 {
		errs = append(errs, next.Validate())
	}
	if err := errors.Join(errs...); err != nil {
		return base, err
	}
	return next, nil
}

// ApplyStored is Apply for settings read back from storage: keys that are
// not topic properties (written by a newer version, or by hand) are
// returned in unknown, sorted, and skipped rather than refused; a bad value
// of a known key is still an error.
func ApplyStored(base Topic, overrides map[string]string) (t Topic, unknown []string, err error) {
	known := make(map[string]string, len(overrides))
	for k, v := range overrides {
		if Known(k) {
			known[k] = v
		} else {
			unknown = append(unknown, k)
		}
	}
	sort.Strings(unknown)
	t, err = Apply(base, known)
	return t, unknown, err
}

// Compacted reports whether cleanup.policy includes compact.
func (t Topic) Compacted() bool { return strings.Contains(t.CleanupPolicy, "compact") }

// Deleting reports whether cleanup.policy includes delete.
func (t Topic) Deleting() bool { return strings.Contains(t.CleanupPolicy, "delete") }

// ParseLines parses `key=value` lines as written to the `config` file:
// blank lines and lines starting with '#' are skipped, white space around
// key and value is trimmed. A line without '=' or with an empty key is an
// error naming its line number. Keys and values are not validated here.
func ParseLines(text string) ([][2]string, error) {
	var out [][2]string
	for i, line := range strings.Split(text, "\n") {
		line = strings.TrimSpace(line)
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		k, v, ok := strings.Cut(line, "=")
		k = strings.TrimSpace(k)
		if !ok || k == "" {
			return nil, fmt.Errorf("%w: line %d: want key=value, got %q", ErrInvalid, i+1, line)
		}
		out = append(out, [2]string{k, strings.TrimSpace(v)})
	}
	return out, nil
}

// Format renders t as `key=value` lines in display order.
func (t Topic) Format() string { return FormatLines(t.KVs()) }
