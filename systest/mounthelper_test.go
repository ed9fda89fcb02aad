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

// TestMountHelper drives scripts/mount.fuse.partfs as mount(8) calls it
// for `mount -t fuse.partfs -o OPTIONS DATADIR MOUNTPOINT`: it returns once
// the mount answers, maps -o options to flags (a dotted KEY=VALUE becomes a
// topic default), and a plain umount stops the daemon cleanly.
func TestMountHelper(t *testing.T) {
	testutil.NeedFUSE(t)
	dir := t.TempDir()
	data, mnt, logf := filepath.Join(dir, "data"), filepath.Join(dir, "mnt"), filepath.Join(dir, "partfs.log")
	if err := os.Mkdir(mnt, 0o755); err != nil {
		t.Fatal(err)
	}
	helper, err := filepath.Abs("../scripts/mount.fuse.partfs")
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(helper, data, mnt, "-o", "rw,nofail,segment.bytes=1048576,log_level=debug")
	cmd.Env = append(os.Environ(), "PARTFS="+partfsBin, "PARTFS_LOG="+logf)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("mount helper: %v\n%s", err, out)
	}
	defer detach(t, mnt)
	if !testutil.IsFUSEMount(mnt) {
		t.Fatal("the helper returned before the mount answered")
	}
	out, err := testutil.Sh(mnt, "mkdir t && echo hello >> t/0/log && cat t/0/log && grep '^segment.bytes=' t/config", 30*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	if out != "hello\nsegment.bytes=1048576\n" {
		t.Fatalf("through the helper's mount: %q", out)
	}
	if out, err := exec.Command("umount", mnt).CombinedOutput(); err != nil {
		t.Fatalf("umount: %v %s", err, out)
	}
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		if b, _ := os.ReadFile(logf); strings.Contains(string(b), "clean shutdown") {
			if _, err := os.Stat(filepath.Join(data, ".kafka_cleanshutdown")); err != nil {
				t.Fatalf("clean shutdown logged but no marker: %v", err)
			}
			return
		}
	}
	b, _ := os.ReadFile(logf)
	t.Fatalf("daemon did not shut down cleanly after umount; log:\n%s", b)
}
