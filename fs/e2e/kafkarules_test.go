package e2e

import (
	"strings"
	"testing"
)

// TestCompactedTopicRefusesKeylessRecords: as Kafka's "Compacted topic
// cannot accept message without key", a plain line or a keyless JSON line
// on a compacted topic fails with EINVAL and appends nothing; keyed
// records (log.jsonl with a key, @key/K) are taken.
func TestCompactedTopicRefusesKeylessRecords(t *testing.T) {
	e := newEnv(t, mountOpt{})
	e.Sh("mkdir users && echo cleanup.policy=compact >> users/config")
	for _, script := range []string{
		"echo x >> users/0/log",
		`echo '{"value":"v"}' >> users/0/log.jsonl`,
	} {
		out, err := e.Try("{ " + script + "; } 2>&1")
		if err == nil || !strings.Contains(out, "Invalid argument") {
			t.Fatalf("%s: %q %v, want EINVAL", script, out, err)
		}
	}
	if err := e.AppendOnce("users/0/log.jsonl", "{\"key\":\"a\",\"value\":\"1\"}\n{\"value\":\"2\"}\n"); err == nil {
		t.Fatal("a write with a keyless JSON line was taken")
	}
	e.Sh(`echo '{"key":"a","value":"1"}' >> users/0/log.jsonl && echo 2 > users/0/@key/b`)
	if got := e.Sh("jq -c '[.offset,.key,.value]' users/0/log.jsonl"); got != "[0,\"a\",\"1\"]\n[1,\"b\",\"2\"]\n" {
		t.Fatalf("log: %q", got)
	}
	if !strings.Contains(e.logs.String(), "without a key") {
		t.Fatal("no log line names the refusal")
	}
	e.Sh("echo cleanup.policy=delete >> users/config && echo x >> users/0/log")
}
