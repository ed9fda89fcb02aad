package systest

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/partfs/partfs/internal/testutil"
)

// TestStopsCleanly: SIGTERM, SIGINT and umount from outside each end the
// daemon with exit 0, a clean-shutdown marker and no mount left, and what
// was written before each stop is there after the next start.
func TestStopsCleanly(t *testing.T) {
	root := t.TempDir()
	data, mnt := filepath.Join(root, "data"), filepath.Join(root, "mnt")
	stops := []struct {
		name string
		stop func(d *daemon)
	}{
		{"SIGTERM", func(d *daemon) { _ = d.cmd.Process.Signal(syscall.SIGTERM) }},
		{"SIGINT", func(d *daemon) { _ = d.cmd.Process.Signal(syscall.SIGINT) }},
		{"umount", func(d *daemon) { _ = syscall.Unmount(d.mnt, 0) }},
	}
	d := startDaemon(t, data, mnt)
	mkTopic(t, d, "t", 1)
	want := ""
	for i, s := range stops {
		line := s.name + "\n"
		appendFile(t, d.path("t", "0", "log"), line)
		want += line
		s.stop(d)
		<-d.done
		if d.exitErr != nil {
			t.Fatalf("%s: exit %v\n%s", s.name, d.exitErr, d.log)
		}
		if _, err := os.Stat(filepath.Join(data, ".kafka_cleanshutdown")); err != nil {
			t.Fatalf("%s: no clean-shutdown marker: %v", s.name, err)
		}
		if testutil.IsFUSEMount(mnt) {
			t.Fatalf("%s: still mounted", s.name)
		}
		d.restart()
		if got := string(readFile(t, d.path("t", "0", "log"))); got != want {
			t.Fatalf("after stop %d (%s) and a start: %q, want %q", i, s.name, got, want)
		}
	}
	d.stop()
}
