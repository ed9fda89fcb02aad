package systest

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/partfs/partfs/internal/testutil"
)

// TestDaemonKillRemount: the smallest crash: an acknowledged write survives
// SIGKILL of the daemon and a remount; a clean stop leaves check clean.
func TestDaemonKillRemount(t *testing.T) {
	root := t.TempDir()
	data, mnt := filepath.Join(root, "data"), filepath.Join(root, "mnt")
	d := startDaemon(t, data, mnt)
	mkTopic(t, d, "t", 1, "segment.bytes=4096")
	appendFile(t, d.path("t", "0", "log"), "one\ntwo\n")
	d.kill9()
	d.restart()
	if got := string(testutil.ReadFile(t, d.path("t", "0", "log"))); got != "one\ntwo\n" {
		t.Fatalf("after kill -9 and remount: %q", got)
	}
	appendFile(t, d.path("t", "0", "log"), "three\n")
	d.stop()
	if out, code := runPartfs(t, "check", data); code != 0 {
		t.Fatalf("check after clean stop: %d\n%s", code, out)
	}
	if left := tempLeftovers(t, data); len(left) > 0 {
		t.Fatalf("leftovers: %v", left)
	}
}

func appendFile(t testing.TB, path, s string) {
	t.Helper()
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteString(s); err != nil {
		t.Fatalf("write %s: %v", path, err)
	}
	if err := f.Close(); err != nil {
		t.Fatalf("close %s: %v", path, err)
	}
}

// TestSIGTERMRightAfterMount: SIGTERM as soon as the mount appears is a
// clean stop (exit 0, clean-shutdown marker), as docs/spec.md §1 says for SIGTERM.
func TestSIGTERMRightAfterMount(t *testing.T) {
	testutil.NeedFUSE(t)
	root := t.TempDir()
	data, mnt := filepath.Join(root, "data"), filepath.Join(root, "mnt")
	os.MkdirAll(mnt, 0o755)
	t.Cleanup(func() { _ = syscall.Unmount(mnt, syscall.MNT_DETACH) })
	bad := 0
	for i := 0; i < 20; i++ {
		var out testutil.SyncBuffer
		cmd := exec.Command(partfsBin, "mount", data, mnt)
		cmd.Stdout, cmd.Stderr = &out, &out
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		deadline := time.Now().Add(20 * time.Second)
		for !testutil.IsFUSEMount(mnt) && time.Now().Before(deadline) {
			time.Sleep(time.Millisecond)
		}
		cmd.Process.Signal(syscall.SIGTERM)
		done := make(chan error, 1)
		go func() { done <- cmd.Wait() }()
		var err error
		select {
		case err = <-done:
		case <-time.After(20 * time.Second):
			st, _ := os.ReadFile(fmt.Sprintf("/proc/%d/stat", cmd.Process.Pid))
			var stack []byte
			tasks, _ := filepath.Glob(fmt.Sprintf("/proc/%d/task/*/stack", cmd.Process.Pid))
			for _, task := range tasks {
				b, _ := os.ReadFile(task)
				stack = append(append(stack, task+":\n"...), b...)
			}
			cmd.Process.Kill()
			_ = syscall.Unmount(mnt, syscall.MNT_DETACH)
			t.Fatalf("BUG: try %d: the daemon did not exit 20 s after SIGTERM right after the mount appeared; /proc stat %s\nkernel stack:\n%s\noutput:\n%s", i, st, stack, out.String())
		}
		detach(t, mnt)
		if _, serr := os.Stat(filepath.Join(data, ".kafka_cleanshutdown")); err != nil || serr != nil {
			bad++
			t.Logf("try %d: exit %v, clean-shutdown marker: %v", i, err, serr)
		}
	}
	if bad > 0 {
		t.Errorf("BUG: %d of 20 SIGTERMs right after the mount appeared were not a clean stop (cmd/partfs/mount.go installs signal.Notify after Mount returns and after logging \"mounted\")", bad)
	}
}

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
		if got := string(testutil.ReadFile(t, d.path("t", "0", "log"))); got != want {
			t.Fatalf("after stop %d (%s) and a start: %q, want %q", i, s.name, got, want)
		}
	}
	d.stop()
}
