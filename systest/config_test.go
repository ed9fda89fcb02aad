package systest

import (
	"os"
	"strings"
	"testing"

	"github.com/partfs/partfs/internal/testutil"
)

// specConfig is one valid value for every property docs/spec.md §6 names.
var specConfig = []string{
	"cleanup.policy=delete,compact", "compression.type=zstd", "segment.bytes=65536", "segment.ms=3600000",
	"segment.jitter.ms=10", "segment.index.bytes=4096", "index.interval.bytes=128", "retention.ms=-1",
	"retention.bytes=1000000", "min.cleanable.dirty.ratio=0.25", "delete.retention.ms=1000",
	"min.compaction.lag.ms=5", "max.compaction.lag.ms=100000", "max.message.bytes=2000000",
	"message.timestamp.type=LogAppendTime", "flush.messages=1000", "flush.ms=2000", "file.delete.delay.ms=100",
}

// TestConfigLines: every docs/spec.md §6 key takes a valid value with `>` and `>>`,
// changes only that key, shows in `cat config`, and persists across a
// kill -9 and a clean remount.
func TestConfigLines(t *testing.T) {
	d := startFresh(t)
	mkTopic(t, d, "c", 1)
	cfg := d.path("c", "config")
	for i, line := range specConfig {
		before := configMap(t, cfg)
		flag := os.O_WRONLY | os.O_APPEND
		if i%2 == 0 {
			flag = os.O_WRONLY | os.O_TRUNC
		}
		if err := writeTo(cfg, flag, []byte(line+"\n"))(); err != nil {
			t.Errorf("write %q to config: %v", line, err)
			continue
		}
		after := configMap(t, cfg)
		k, v, _ := strings.Cut(line, "=")
		if after[k] != v {
			t.Errorf("after %q, config shows %s=%q", line, k, after[k])
		}
		for key, val := range before {
			if key != k && after[key] != val {
				t.Errorf("writing %q changed %s from %q to %q", line, key, val, after[key])
			}
		}
	}
	want := configMap(t, cfg)
	d.kill9()
	d.restart()
	if got := configMap(t, cfg); !equalMaps(got, want) {
		t.Errorf("config after kill -9 and remount differs:\n%v\nwant\n%v", got, want)
	}
	d.stop()
	d.restart()
	if got := configMap(t, cfg); !equalMaps(got, want) {
		t.Errorf("config after a clean remount differs:\n%v\nwant\n%v", got, want)
	}
	d.stop()
}

func configMap(t *testing.T, path string) map[string]string {
	t.Helper()
	m := map[string]string{}
	for _, line := range strings.Split(string(testutil.ReadFile(t, path)), "\n") {
		if k, v, ok := strings.Cut(line, "="); ok && !strings.HasPrefix(line, "#") {
			m[strings.TrimSpace(k)] = strings.TrimSpace(v)
		}
	}
	return m
}

func equalMaps(a, b map[string]string) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if b[k] != v {
			return false
		}
	}
	return true
}
