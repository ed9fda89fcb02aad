package kafkaname

import (
	"strings"
	"testing"
)

func TestCheckTopic(t *testing.T) {
	for _, name := range []string{"a", "a.b_c-D9", "..a", strings.Repeat("x", 249)} {
		if err := CheckTopic(name); err != nil {
			t.Errorf("CheckTopic(%q) = %v", name, err)
		}
	}
	for _, name := range []string{"", ".", "..", "a/b", "a\x00b", "a b", "é", strings.Repeat("x", 250)} {
		if ValidTopic(name) {
			t.Errorf("ValidTopic(%q) = true", name)
		}
	}
}

// TestParsePartitionDir: only what PartitionDir makes parses, so that two
// directories never name one partition ("t-1" and "t-01").
func TestParsePartitionDir(t *testing.T) {
	good := []struct {
		name  string
		topic string
		n     int
	}{{"t-0", "t", 0}, {"t-01x-12", "t-01x", 12}, {"a.b-2147483647", "a.b", 2147483647}, {"-x-3", "-x", 3}}
	for _, c := range good {
		topic, n, ok := ParsePartitionDir(c.name)
		if !ok || topic != c.topic || n != c.n {
			t.Errorf("ParsePartitionDir(%q) = %q, %d, %v", c.name, topic, n, ok)
		}
		if PartitionDir(topic, n) != c.name {
			t.Errorf("PartitionDir(%q, %d) = %q", topic, n, PartitionDir(topic, n))
		}
	}
	for _, name := range []string{"t-01", "t-+1", "t-", "-1", "t", "t-1.abc-delete", "t-1-future", "a b-1", "..-0", strings.Repeat("x", 250) + "-0"} {
		if topic, n, ok := ParsePartitionDir(name); ok {
			t.Errorf("ParsePartitionDir(%q) = %q, %d, true", name, topic, n)
		}
	}
}

func TestSegmentNames(t *testing.T) {
	if got := SegmentFile(42, TimeIndexSuffix); got != "00000000000000000042.timeindex" {
		t.Fatalf("SegmentFile = %q", got)
	}
	for name, want := range map[string]int64{"00000000000000000042.log": 42, "00000000000000000007.log.deleted": 7, "9223372036854775807.index": 1<<63 - 1} {
		if got, ok := ParseBase(name); !ok || got != want {
			t.Errorf("ParseBase(%q) = %d, %v", name, got, ok)
		}
	}
	for _, name := range []string{".log", "x.log", "-1.log", "99999999999999999999.log", "12"} {
		if _, ok := ParseBase(name); ok {
			t.Errorf("ParseBase(%q) parsed", name)
		}
	}
	if got, ok := ParseSegmentFile("00000000000000000042.log", LogSuffix); !ok || got != 42 {
		t.Errorf("ParseSegmentFile = %d, %v", got, ok)
	}
	for _, name := range []string{"00000000000000000042.log.swap", "42.x.log", "+42.log", "-42.log", ".log", "42.index"} {
		if _, ok := ParseSegmentFile(name, LogSuffix); ok {
			t.Errorf("ParseSegmentFile(%q) parsed", name)
		}
	}
}

func TestParseSnapshotCheckpoint(t *testing.T) {
	if end, epoch, ok := ParseSnapshotCheckpoint("00000000000000000035-0000000001.checkpoint"); !ok || end != 35 || epoch != 1 {
		t.Fatalf("got %d %d %v", end, epoch, ok)
	}
	for _, name := range []string{"recovery-point-offset-checkpoint", "leader-epoch-checkpoint", "35-1.checkpoint",
		"00000000000000000035-000000001.checkpoint", "00000000000000000035-0000000001.log", "0000000000000000003x-0000000001.checkpoint",
		"00000000000000000035-9999999999.checkpoint"} {
		if _, _, ok := ParseSnapshotCheckpoint(name); ok {
			t.Errorf("%s parsed as a snapshot", name)
		}
	}
}
