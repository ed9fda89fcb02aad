package systest

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/partfs/partfs/internal/testutil"
)

// TestUnmountScriptWithFileOpen: `mount.sh -u` while `tail -f` holds a
// file open, on a machine where fusectl is not where the daemon looks
// (PARTFS_FUSECTL_DIR): the daemon detaches, serves the open file 2 s
// more, mounts fusectl on a directory of its own to abort the connection,
// and exits 0; mount.sh says "unmounted" within 5 s, tail gets an error,
// and no fusectl mount of the daemon's is left behind.
func TestUnmountScriptWithFileOpen(t *testing.T) {
	testutil.NeedFUSE(t)
	if os.Geteuid() != 0 {
		t.Skip("mounting fusectl needs root")
	}
	t.Setenv("PARTFS_FUSECTL_DIR", filepath.Join(t.TempDir(), "no-fusectl"))
	d := startFresh(t)
	d.sh("mkdir t && seq 1 3 >> t/0/log")
	tailf := exec.Command("tail", "-f", d.path("t", "0", "log"))
	tailDone := make(chan error, 1)
	if err := tailf.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { tailDone <- tailf.Wait() }()
	defer func() { _ = tailf.Process.Kill() }()
	time.Sleep(300 * time.Millisecond) // tail has opened the file
	script, err := filepath.Abs("../mount.sh")
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	out, err := testutil.Sh(filepath.Dir(d.mnt), script+" -u "+d.mnt+" 2>&1", time.Minute)
	took := time.Since(start)
	t.Logf("mount.sh -u took %v: %s", took, strings.TrimSpace(out))
	if err != nil || !strings.Contains(out, "unmounted "+d.mnt) {
		t.Fatalf("mount.sh -u: %v %q\n%s", err, out, tail(d.log.String(), 2000))
	}
	if took > 5*time.Second {
		t.Errorf("mount.sh -u took %v with a file open, want under 5 s", took)
	}
	select {
	case <-d.done:
	case <-time.After(5 * time.Second):
		t.Fatal("the daemon still runs after mount.sh said unmounted")
	}
	if d.exitErr != nil {
		t.Errorf("daemon exit: %v\n%s", d.exitErr, tail(d.log.String(), 2000))
	}
	select {
	case <-tailDone:
	case <-time.After(5 * time.Second):
		t.Error("tail -f still runs on the aborted connection")
	}
	if testutil.IsFUSEMount(d.mnt) {
		t.Errorf("%s is still mounted", d.mnt)
	}
	if m, _ := os.ReadFile("/proc/self/mounts"); strings.Contains(string(m), "partfs-fusectl-") {
		t.Errorf("the daemon left its fusectl mount behind:\n%s", m)
	}
}
