package systest

import (
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
