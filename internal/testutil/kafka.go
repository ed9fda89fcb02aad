package testutil

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kfake"
)

// Kafka starts franz-go's in-process cluster (kfake) on loopback ports for
// the test and closes it when the test ends. By default it has one broker
// and a created topic gets one partition; opts come after those defaults,
// so they can change them (kfake.NumBrokers(3), kfake.EnableSASL(), ...).
// Its bootstrap address is strings.Join(c.ListenAddrs(), ",").
func Kafka(t testing.TB, opts ...kfake.Opt) *kfake.Cluster {
	t.Helper()
	all := append([]kfake.Opt{kfake.NumBrokers(1), kfake.DefaultNumPartitions(1)}, opts...)
	c, err := kfake.NewCluster(all...)
	if err != nil {
		t.Fatalf("start kfake: %v", err)
	}
	t.Cleanup(c.Close)
	return c
}

// Kcat returns the path of kcat (librdkafka's command-line client, which
// test.sh installs). Where it is missing the test is skipped, unless CI is
// set: under CI a test that needs kcat must run.
func Kcat(t testing.TB) string {
	t.Helper()
	for _, name := range []string{"kcat", "kafkacat"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	if os.Getenv("CI") != "" {
		t.Fatal("kcat is not installed (test.sh installs it with apt-get)")
	}
	t.Skip("kcat is not installed")
	return ""
}

// RunKcat runs kcat with args and stdin (within 60 s) and returns its
// stdout; it fails the test on a non-zero exit, with kcat's stderr.
func RunKcat(t testing.TB, stdin string, args ...string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, Kcat(t), args...)
	cmd.Stdin = strings.NewReader(stdin)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		t.Fatalf("kcat %s: %v\n%s", strings.Join(args, " "), err, errb.String())
	}
	return out.String()
}
