package e2e

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/partfs/partfs/internal/testutil"
)

var (
	buildOnce sync.Once
	binPath   string
	buildErr  error
)

// partfsBin builds cmd/partfs once per test run.
func partfsBin(t *testing.T) string {
	t.Helper()
	buildOnce.Do(func() {
		dir, err := os.MkdirTemp("", "partfs-e2e-bin")
		if err != nil {
			buildErr = err
			return
		}
		binPath = filepath.Join(dir, "partfs")
		out, err := exec.Command("go", "build", "-o", binPath, "github.com/partfs/partfs/cmd/partfs").CombinedOutput()
		if err != nil {
			buildErr = err
			binPath = string(out)
		}
	})
	if buildErr != nil {
		t.Fatalf("build partfs: %v\n%s", buildErr, binPath)
	}
	return binPath
}

// daemon is `partfs mount` running as a child process.
type daemon struct {
	cmd     *exec.Cmd
	mnt     string
	logs    *testutil.SyncBuffer
	done    chan struct{} // closed at exit
	exitErr error
}

// startDaemon runs `partfs mount [flags] data mnt` and returns once it
// serves (testutil.WaitServing).
func startDaemon(t *testing.T, data, mnt string, flags ...string) *daemon {
	t.Helper()
	testutil.NeedFUSE(t)
	d := &daemon{mnt: mnt, logs: &testutil.SyncBuffer{}, done: make(chan struct{})}
	d.cmd = exec.Command(partfsBin(t), append(append([]string{"mount"}, flags...), data, mnt)...)
	d.cmd.Stdout, d.cmd.Stderr = d.logs, d.logs
	if err := d.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { d.exitErr = d.cmd.Wait(); close(d.done) }()
	t.Cleanup(func() {
		_ = d.cmd.Process.Kill()
		<-d.done
		if mounted(mnt) {
			_ = syscall.Unmount(mnt, syscall.MNT_DETACH)
		}
	})
	if err := testutil.WaitServing(mnt, d.logs, d.done); err != nil {
		t.Fatalf("%v (exit %v)\n%s", err, d.exitErr, d.logs)
	}
	return d
}

func mounted(mnt string) bool { return testutil.IsFUSEMount(mnt) }

func (d *daemon) wait(t *testing.T) error {
	t.Helper()
	select {
	case <-d.done:
		return d.exitErr
	case <-time.After(20 * time.Second):
		t.Fatalf("partfs did not exit\n%s", d.logs)
		return nil
	}
}

func run(t *testing.T, script string) string {
	t.Helper()
	out, err := exec.Command("bash", "-c", script).CombinedOutput()
	if err != nil {
		t.Fatalf("%s: %v\n%s", script, err, out)
	}
	return string(out)
}

// TestDaemonStopsCleanly: SIGTERM, SIGINT and umount from outside each end
// the daemon with exit 0, a clean-shutdown marker, and the data kept.
func TestDaemonStopsCleanly(t *testing.T) {
	data, mnt := t.TempDir(), t.TempDir()
	stops := []func(d *daemon){
		func(d *daemon) { _ = d.cmd.Process.Signal(syscall.SIGTERM) },
		func(d *daemon) { _ = d.cmd.Process.Signal(syscall.SIGINT) },
		func(d *daemon) { run(t, "umount "+mnt) },
	}
	for i, stop := range stops {
		d := startDaemon(t, data, mnt)
		if i == 0 {
			run(t, "mkdir "+mnt+"/t")
		}
		run(t, "echo line"+string(rune('0'+i))+" >> "+mnt+"/t/0/log")
		stop(d)
		if err := d.wait(t); err != nil {
			t.Fatalf("stop %d: exit %v\n%s", i, err, d.logs)
		}
		if _, err := os.Stat(filepath.Join(data, ".kafka_cleanshutdown")); err != nil {
			t.Fatalf("stop %d: no clean-shutdown marker: %v", i, err)
		}
		if mounted(mnt) {
			t.Fatalf("stop %d: still mounted", i)
		}
	}
	d := startDaemon(t, data, mnt)
	if got := run(t, "cat "+mnt+"/t/0/log"); got != "line0\nline1\nline2\n" {
		t.Fatalf("after restarts: %q", got)
	}
	_ = d.cmd.Process.Signal(syscall.SIGTERM)
	_ = d.wait(t)
}

// TestKill9LosesNothing: a write that returned survives SIGKILL of the
// daemon right after it.
func TestKill9LosesNothing(t *testing.T) {
	data, mnt := t.TempDir(), t.TempDir()
	d := startDaemon(t, data, mnt)
	run(t, "mkdir "+mnt+"/t && seq 1 1000 >> "+mnt+"/t/0/log && echo x >> "+mnt+"/t/0/log")
	_ = d.cmd.Process.Kill()
	_ = d.wait(t)
	if _, err := os.Stat(mnt); err == nil || !strings.Contains(err.Error(), "transport endpoint is not connected") {
		t.Logf("stat of the dead mount: %v", err)
	}
	_ = syscall.Unmount(mnt, syscall.MNT_DETACH)
	d2 := startDaemon(t, data, mnt)
	got := run(t, "tail -2 "+mnt+"/t/0/log; wc -l < "+mnt+"/t/0/log")
	if got != "1000\nx\n1001\n" {
		t.Fatalf("after kill -9 and remount: %q\n%s", got, d2.logs)
	}
	run(t, "dd if=/dev/null of="+mnt+"/t/0/log conv=notrunc,fsync oflag=append status=none")
	_ = d2.cmd.Process.Signal(syscall.SIGTERM)
	if err := d2.wait(t); err != nil {
		t.Fatalf("exit %v\n%s", err, d2.logs)
	}
}

// TestSecondMountRefused: the data directory's .lock keeps a second daemon out.
func TestSecondMountRefused(t *testing.T) {
	data, mnt, mnt2 := t.TempDir(), t.TempDir(), t.TempDir()
	d := startDaemon(t, data, mnt)
	out, err := exec.Command(partfsBin(t), "mount", data, mnt2).CombinedOutput()
	if err == nil || mounted(mnt2) {
		t.Fatalf("second mount succeeded: %s", out)
	}
	if !strings.Contains(string(out), "lock") {
		t.Errorf("message does not mention the lock: %s", out)
	}
	_ = d.cmd.Process.Signal(syscall.SIGTERM)
	_ = d.wait(t)
}
