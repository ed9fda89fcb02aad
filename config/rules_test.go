package config

import (
	"errors"
	"maps"
	"testing"

	"github.com/partfs/partfs/compression"
)

func TestCodec(t *testing.T) {
	for name, want := range map[string]compression.Codec{"": compression.None, "producer": compression.None,
		"uncompressed": compression.None, "none": compression.None, "gzip": compression.Gzip, "zstd": compression.Zstd,
		"lz4": compression.LZ4, "snappy": compression.Snappy} {
		got, err := Topic{Compression: name}.Codec()
		if err != nil || got != want {
			t.Errorf("%q: %v %v, want %v", name, got, err, want)
		}
		if (Topic{Compression: name}).Compressed() != (want != compression.None) {
			t.Errorf("%q: Compressed() wrong", name)
		}
	}
	if _, err := (Topic{Compression: "brotli"}).Codec(); !errors.Is(err, ErrInvalid) {
		t.Errorf("brotli: %v, want ErrInvalid", err)
	}
	if !(Topic{Compression: "brotli"}).Compressed() {
		t.Error("an unknown codec taken for uncompressed")
	}
}

// TestReported: known keys with valid values are taken, the rest keep
// Kafka's defaults.
func TestReported(t *testing.T) {
	got := Reported(maps.All(map[string]string{"max.message.bytes": "5000", "compression.type": "lz4",
		"message.timestamp.type": "LogAppendTime", "segment.bytes": "nonsense", "x.unknown": "1"}))
	if got.MaxMessageBytes != 5000 || got.Compression != "lz4" || !got.LogAppendTime() || got.SegmentBytes != Defaults().SegmentBytes {
		t.Errorf("Reported: %+v", got)
	}
	if d := Reported(maps.All(map[string]string{})); d != Defaults() || d.MaxMessageBytes != DefaultMaxMessageBytes || d.LogAppendTime() {
		t.Errorf("Reported(nothing) = %+v", d)
	}
}

// TestFormatParseLines: what FormatLines prints, ParseLines reads back.
func TestFormatParseLines(t *testing.T) {
	kvs := Defaults().KVs()
	got, err := ParseLines(FormatLines(kvs))
	if err != nil || len(got) != len(kvs) {
		t.Fatalf("%d lines, %v", len(got), err)
	}
	for i := range kvs {
		if got[i] != kvs[i] {
			t.Errorf("line %d: %q, want %q", i, got[i], kvs[i])
		}
	}
	if Defaults().Format() != FormatLines(kvs) {
		t.Error("Format and FormatLines differ")
	}
}
