package systest

import (
	"os"
	"path/filepath"
	"testing"
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
	if got := string(readFile(t, d.path("t", "0", "log"))); got != "one\ntwo\n" {
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
