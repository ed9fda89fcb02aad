package testutil

import (
	"strings"
	"testing"

	"github.com/twmb/franz-go/pkg/kfake"
)

// TestKafkaWithKcat: the in-process cluster takes what kcat produces and
// gives it back to a kcat consumer.
func TestKafkaWithKcat(t *testing.T) {
	c := Kafka(t, kfake.SeedTopics(1, "seeded"))
	addr := strings.Join(c.ListenAddrs(), ",")
	RunKcat(t, "a\nb\n", "-P", "-b", addr, "-t", "seeded", "-p", "0")
	if got := RunKcat(t, "", "-C", "-b", addr, "-t", "seeded", "-p", "0", "-e", "-q", "-f", "%o %s\n"); got != "0 a\n1 b\n" {
		t.Fatalf("kcat -C read %q", got)
	}
}
