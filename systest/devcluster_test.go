package systest

import (
	"bufio"
	"fmt"
	"io"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/partfs/partfs/internal/testutil"
)

// TestDevClusterRoundTripsKcat: `partfs dev-cluster` prints its bootstrap
// address; what kcat -P produces there (keys, headers), kcat -C -e reads
// back record for record, at offsets from 0; SIGINT and SIGTERM stop it
// with exit status 0.
func TestDevClusterRoundTripsKcat(t *testing.T) {
	testutil.Kcat(t)
	for _, sig := range []syscall.Signal{syscall.SIGTERM, syscall.SIGINT} {
		var stderr testutil.SyncBuffer
		cmd, addr, done := devClusterProc(t, &stderr, "--topic", "demo")
		in := "k1:hello\nk2:second record\n:no key\n"
		testutil.RunKcat(t, in, "-P", "-b", addr, "-t", "demo", "-p", "0", "-K:", "-H", "src=kcat", "-H", "n=2")
		got := testutil.RunKcat(t, "", "-C", "-b", addr, "-t", "demo", "-p", "0", "-o", "beginning", "-e", "-q", "-f", "%o|%k|%s|%h\n")
		want := "0|k1|hello|src=kcat,n=2\n1|k2|second record|src=kcat,n=2\n2||no key|src=kcat,n=2\n"
		if got != want {
			t.Errorf("kcat -C read\n%s\nwant\n%s", got, want)
		}
		if err := cmd.Process.Signal(sig); err != nil {
			t.Fatal(err)
		}
		select {
		case err := <-done:
			if err != nil {
				t.Fatalf("after %v: %v\n%s", sig, err, stderr.String())
			}
		case <-time.After(10 * time.Second):
			t.Fatalf("still running 10 s after %v", sig)
		}
		if !strings.Contains(stderr.String(), "stopping") {
			t.Errorf("no stop line after %v:\n%s", sig, stderr.String())
		}
	}
	out, err := exec.Command(partfsBin, "dev-cluster", "--help").CombinedOutput()
	if err != nil || !strings.Contains(string(out), "usage: partfs dev-cluster") || !strings.Contains(string(out), "--listen") {
		t.Errorf("dev-cluster --help: %v\n%s", err, out)
	}
}

// devClusterProc runs `partfs dev-cluster --listen 127.0.0.1:0` with args
// in a child process (so that it can be stopped and killed), its stderr
// to stderr, and returns it, the brokers of its first stdout line and its
// exit status (sent once it exits, the channel closed after). The test's
// end kills it.
func devClusterProc(t *testing.T, stderr io.Writer, args ...string) (*exec.Cmd, string, <-chan error) {
	t.Helper()
	cmd := exec.Command(partfsBin, append([]string{"dev-cluster", "--listen", "127.0.0.1:0"}, args...)...)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	t.Cleanup(func() {
		_ = cmd.Process.Signal(syscall.SIGCONT)
		_ = cmd.Process.Kill()
		<-done
	})
	line, err := bufio.NewReader(out).ReadString('\n')
	go func() { done <- cmd.Wait(); close(done) }()
	if line = strings.TrimSpace(line); err != nil || !strings.HasPrefix(line, "127.0.0.1:") {
		logged, _ := stderr.(fmt.Stringer)
		t.Fatalf("dev-cluster's first stdout line %q (%v); stderr: %v", line, err, logged)
	}
	return cmd, line, done
}
