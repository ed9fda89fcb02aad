package compact

import (
	"testing"
	"time"
)

func TestParseBrokerConfig(t *testing.T) {
	opt, enabled, rest, err := ParseBrokerConfig(map[string]string{
		"log.cleaner.threads": "2", "log.cleaner.io.max.bytes.per.second": "1048576",
		"log.cleaner.dedupe.buffer.size": "1000000", "log.cleaner.backoff.ms": "500",
		"log.cleaner.io.buffer.load.factor": "0.75", "segment.bytes": "4096",
	})
	if err != nil || !enabled {
		t.Fatal(err, enabled)
	}
	if opt.Threads != 2 || opt.IOMaxBytesPerSecond != 1<<20 || opt.DedupeBufferSize != 1000000 ||
		opt.Backoff != 500*time.Millisecond || opt.LoadFactor != 0.75 {
		t.Fatalf("options %+v", opt)
	}
	if len(rest) != 1 || rest["segment.bytes"] != "4096" {
		t.Fatalf("rest %v", rest)
	}
	if _, enabled, _, _ := ParseBrokerConfig(map[string]string{"log.cleaner.enable": "false"}); enabled {
		t.Fatal("log.cleaner.enable=false ignored")
	}
	for _, bad := range []map[string]string{
		{"log.cleaner.threads": "0"}, {"log.cleaner.bogus": "1"}, {"log.cleaner.io.buffer.load.factor": "2"},
		{"log.cleaner.dedupe.buffer.size": "10"}, {"log.cleaner.enable": "maybe"},
	} {
		if _, _, _, err := ParseBrokerConfig(bad); err == nil {
			t.Errorf("%v accepted", bad)
		}
	}
}
