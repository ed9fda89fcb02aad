package systest

import (
	"encoding/hex"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// TestDiskFullMount: the data directory on an 8 MiB tmpfs, filled through
// the mount: the writer gets ENOSPC, nothing partial is left, the mount
// stays up, and appends work again once space is freed.
func TestDiskFullMount(t *testing.T) {
	disk, ballast := smallDisk(t, "8m")
	data, mnt := filepath.Join(disk, "data"), filepath.Join(t.TempDir(), "mnt")
	d := startDaemon(t, data, mnt)
	mkTopic(t, d, "t", 1, "segment.bytes=1048576")
	logPath := d.path("t", "0", "log")
	var acked []string
	write := func(tag string) error {
		f, err := os.OpenFile(logPath, os.O_WRONLY|os.O_APPEND, 0)
		if err != nil {
			return err
		}
		defer f.Close()
		var lines []string
		for i := 0; i < 4; i++ {
			lines = append(lines, tag+hex.EncodeToString(randomValue(2000, "")))
		}
		if _, err := f.WriteString(strings.Join(lines, "\n") + "\n"); err != nil {
			return err
		}
		acked = append(acked, lines...)
		return nil
	}
	var err error
	for i := 0; i < 10000 && err == nil; i++ {
		err = write("fill-")
	}
	if !errors.Is(err, syscall.ENOSPC) {
		t.Fatalf("filling the disk through the mount: %v, want ENOSPC", err)
	}
	t.Logf("ENOSPC after %d lines", len(acked))
	if !d.running() || !isFUSEMount(mnt) {
		t.Fatalf("the mount went down at ENOSPC:\n%s", d.log)
	}
	checkServedLines(t, logPath, acked)
	checkNoPartial(t, filepath.Join(data, "t-0"), int64(len(acked)))
	if err := os.Remove(ballast); err != nil {
		t.Fatal(err)
	}
	if err := write("after-"); err != nil {
		t.Errorf("BUG: append through the mount after space returned: %v (logstore's sticky append error)", err)
	}
	checkServedLines(t, logPath, acked)
	d.stop()
	if out, code := runPartfs(t, "check", data); code != 0 {
		t.Errorf("partfs check after the clean stop: exit %d\n%s", code, out)
	}
}

// checkServedLines: the plain view of a partition is exactly lines.
func checkServedLines(t *testing.T, path string, lines []string) {
	t.Helper()
	got := string(readFile(t, path))
	want := strings.Join(lines, "\n") + "\n"
	if got != want {
		t.Errorf("%s serves %d bytes (%d lines), want %d bytes (%d lines)", path, len(got), strings.Count(got, "\n"), len(want), len(lines))
	}
}
