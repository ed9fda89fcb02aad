package config

import (
	"errors"
	"math"
	"strings"
	"testing"
)

func TestDefaultsAsKafka(t *testing.T) {
	want := map[string]string{
		"cleanup.policy":            "delete",
		"compression.type":          "producer",
		"segment.bytes":             "1073741824",
		"segment.ms":                "604800000",
		"segment.jitter.ms":         "0",
		"segment.index.bytes":       "10485760",
		"index.interval.bytes":      "4096",
		"retention.ms":              "604800000",
		"retention.bytes":           "-1",
		"min.cleanable.dirty.ratio": "0.5",
		"delete.retention.ms":       "86400000",
		"min.compaction.lag.ms":     "0",
		"max.compaction.lag.ms":     "9223372036854775807",
		"max.message.bytes":         "1048588",
		"message.timestamp.type":    "CreateTime",
		"flush.messages":            "9223372036854775807",
		"flush.ms":                  "9223372036854775807",
		"file.delete.delay.ms":      "60000",
	}
	d := Defaults()
	keys := Keys()
	if len(keys) != len(want) {
		t.Fatalf("%d keys, want %d", len(keys), len(want))
	}
	for _, k := range keys {
		v, ok := d.Get(k)
		if !ok || v != want[k] {
			t.Errorf("%s = %q, want %q", k, v, want[k])
		}
	}
	if keys[0] != "cleanup.policy" || keys[len(keys)-1] != "file.delete.delay.ms" {
		t.Fatalf("display order: %v", keys)
	}
	if d.Compacted() || !d.Deleting() {
		t.Fatal("default policy")
	}
	if _, ok := d.Get("nope"); ok {
		t.Fatal("unknown key found")
	}
}

func TestSetValidates(t *testing.T) {
	bad := [][2]string{
		{"nope", "1"},
		{"cleanup.policy", "remove"},
		{"cleanup.policy", ""},
		{"compression.type", "brotli"},
		{"compression.type", "GZIP"},
		{"segment.bytes", "13"},
		{"segment.bytes", "2147483648"},
		{"segment.bytes", "1g"},
		{"segment.ms", "0"},
		{"segment.jitter.ms", "-1"},
		{"segment.index.bytes", "3"},
		{"index.interval.bytes", "-1"},
		{"retention.ms", "-2"},
		{"retention.ms", "1.5"},
		{"min.cleanable.dirty.ratio", "1.1"},
		{"min.cleanable.dirty.ratio", "NaN"},
		{"min.cleanable.dirty.ratio", "x"},
		{"delete.retention.ms", "-1"},
		{"max.compaction.lag.ms", "0"},
		{"max.message.bytes", "-1"},
		{"message.timestamp.type", "createtime"},
		{"flush.messages", "0"},
		{"flush.ms", "-1"},
		{"file.delete.delay.ms", "-5"},
		{"min.compaction.lag.ms", "9223372036854775807"}, // fine alone...
	}
	for _, kv := range bad[:len(bad)-1] {
		d := Defaults()
		err := d.Set(kv[0], kv[1])
		if !errors.Is(err, ErrInvalid) {
			t.Errorf("%s=%q: %v, want ErrInvalid", kv[0], kv[1], err)
		}
		if d != Defaults() {
			t.Errorf("%s=%q changed the topic", kv[0], kv[1])
		}
	}
	d := Defaults()
	d.Set("max.compaction.lag.ms", "1000")
	if err := d.Set("min.compaction.lag.ms", "2000"); !errors.Is(err, ErrInvalid) {
		t.Fatalf("min > max compaction lag: %v", err)
	}
}

func TestSetGood(t *testing.T) {
	cases := [][3]string{ // key, value, shown
		{"cleanup.policy", "compact", "compact"},
		{"cleanup.policy", "compact,delete", "delete,compact"},
		{"cleanup.policy", " delete , compact ", "delete,compact"},
		{"compression.type", "zstd", "zstd"},
		{"compression.type", "none", "none"},
		{"segment.bytes", "14", "14"},
		{"segment.bytes", " 1024 ", "1024"},
		{"retention.ms", "-1", "-1"},
		{"retention.bytes", "1000000", "1000000"},
		{"min.cleanable.dirty.ratio", "0.01", "0.01"},
		{"min.cleanable.dirty.ratio", "1", "1"},
		{"message.timestamp.type", "LogAppendTime", "LogAppendTime"},
		{"flush.messages", "1", "1"},
		{"segment.index.bytes", "4096", "4096"},
	}
	for _, c := range cases {
		d := Defaults()
		if err := d.Set(c[0], c[1]); err != nil {
			t.Errorf("%s=%q: %v", c[0], c[1], err)
			continue
		}
		if v, _ := d.Get(c[0]); v != c[2] {
			t.Errorf("%s=%q shows %q, want %q", c[0], c[1], v, c[2])
		}
	}
	d := Defaults()
	d.Set("cleanup.policy", "delete,compact")
	if !d.Compacted() || !d.Deleting() {
		t.Fatal("delete,compact")
	}
	d.Set("segment.index.bytes", "1000")
	if d.SegmentIndexBytes != 1000 {
		t.Fatal(d.SegmentIndexBytes)
	}
}

func TestApplyIsAllOrNothing(t *testing.T) {
	base := Defaults()
	got, err := Apply(base, map[string]string{"retention.ms": "1000", "segment.bytes": "nope", "bogus": "1"})
	if !errors.Is(err, ErrInvalid) || got != base {
		t.Fatalf("bad apply: %v, topic changed: %v", err, got != base)
	}
	if !strings.Contains(err.Error(), "segment.bytes") || !strings.Contains(err.Error(), "bogus") {
		t.Fatalf("error does not name every bad key: %v", err)
	}
	got, err = Apply(base, map[string]string{"retention.ms": "1000", "cleanup.policy": "compact"})
	if err != nil || got.RetentionMs != 1000 || got.CleanupPolicy != "compact" || got.SegmentBytes != base.SegmentBytes {
		t.Fatalf("%+v %v", got, err)
	}
	if got, err := Apply(base, map[string]string{"min.compaction.lag.ms": "5", "max.compaction.lag.ms": "4"}); err == nil || got != base {
		t.Fatal("cross-property check missing")
	}
	if got, err := Apply(base, nil); err != nil || got != base {
		t.Fatal("empty apply")
	}
}

func TestParseLines(t *testing.T) {
	kvs, err := ParseLines("# comment\n\nretention.ms=1000\n  segment.bytes = 2048  \nx=a=b\nempty=\n")
	if err != nil {
		t.Fatal(err)
	}
	want := [][2]string{{"retention.ms", "1000"}, {"segment.bytes", "2048"}, {"x", "a=b"}, {"empty", ""}}
	if len(kvs) != len(want) {
		t.Fatalf("%v", kvs)
	}
	for i := range want {
		if kvs[i] != want[i] {
			t.Fatalf("line %d: %v, want %v", i, kvs[i], want[i])
		}
	}
	for _, bad := range []string{"retention.ms\n", "a=1\n=2\n", "just words"} {
		if _, err := ParseLines(bad); !errors.Is(err, ErrInvalid) {
			t.Errorf("%q: %v", bad, err)
		}
	}
	_, err = ParseLines("a=1\nbroken\n")
	if err == nil || !strings.Contains(err.Error(), "line 2") {
		t.Fatalf("error does not name the line: %v", err)
	}
}

func TestFormatRoundTrip(t *testing.T) {
	d := Defaults()
	d.Set("cleanup.policy", "compact")
	d.Set("min.cleanable.dirty.ratio", "0.25")
	kvs, err := ParseLines(d.Format())
	if err != nil {
		t.Fatal(err)
	}
	m := map[string]string{}
	for _, kv := range kvs {
		m[kv[0]] = kv[1]
	}
	back, err := Apply(Defaults(), m)
	if err != nil || back != d {
		t.Fatalf("round trip: %+v %v", back, err)
	}
	if d.FlushMs != math.MaxInt64 {
		t.Fatal("flush.ms default")
	}
}
