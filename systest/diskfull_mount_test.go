package systest

import (
	"encoding/hex"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/partfs/partfs/internal/testutil"
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
	if err := writeUntilFull(write, "fill-"); !errors.Is(err, syscall.ENOSPC) {
		t.Fatalf("filling the disk through the mount: %v, want ENOSPC", err)
	}
	t.Logf("ENOSPC after %d lines", len(acked))
	if !d.running() || !testutil.IsFUSEMount(mnt) {
		t.Fatalf("the mount went down at ENOSPC:\n%s", d.log)
	}
	checkServedLines(t, logPath, acked)
	checkNoPartial(t, filepath.Join(data, "t-0"), int64(len(acked)))
	// a crash while the disk is full: the remount on the full disk recovers
	// and serves everything acknowledged
	d.kill9()
	d.restart()
	checkServedLines(t, logPath, acked)
	if err := write("full-"); !errors.Is(err, syscall.ENOSPC) {
		t.Errorf("append on the still-full disk after a remount: %v, want ENOSPC", err)
	}
	checkServedLines(t, logPath, acked)
	if err := os.Remove(ballast); err != nil {
		t.Fatal(err)
	}
	if err := write("after-"); err != nil {
		t.Errorf("append through the mount after space returned: %v", err)
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
	got := string(testutil.ReadFile(t, path))
	want := strings.Join(lines, "\n") + "\n"
	if got != want {
		t.Errorf("%s serves %d bytes (%d lines), want %d bytes (%d lines)", path, len(got), strings.Count(got, "\n"), len(want), len(lines))
	}
}

// TestDiskFullConcurrent: three writers on three partitions (plain and
// jsonl, gzip and none) fill the disk together; each gets ENOSPC, each
// partition holds exactly its acknowledged lines, whole batches only; after
// space returns all three append again.
func TestDiskFullConcurrent(t *testing.T) {
	disk, ballast := smallDisk(t, "8m")
	data, mnt := filepath.Join(disk, "data"), filepath.Join(t.TempDir(), "mnt")
	d := startDaemon(t, data, mnt)
	mkTopic(t, d, "a", 2, "segment.bytes=524288")
	mkTopic(t, d, "b", 1, "segment.bytes=524288", "compression.type=gzip")
	type filler struct {
		part, file string
		acked      []string
		err        error
	}
	fillers := []*filler{{part: "a/0", file: "log"}, {part: "a/1", file: "log.jsonl"}, {part: "b/0", file: "log"}}
	write := func(f *filler, tag string) error {
		var b strings.Builder
		var lines []string
		for i := 0; i < 3; i++ {
			l := tag + hex.EncodeToString(randomValue(1500, ""))
			lines = append(lines, l)
			if f.file == "log" {
				b.WriteString(l + "\n")
			} else {
				b.WriteString("{\"value\":\"" + l + "\"}\n")
			}
		}
		if err := appendTo(d.path(f.part, f.file), []byte(b.String()))(); err != nil {
			return err
		}
		f.acked = append(f.acked, lines...)
		return nil
	}
	done := make(chan struct{})
	for _, f := range fillers {
		go func() {
			defer func() { done <- struct{}{} }()
			for i := 0; i < 100000 && f.err == nil; i++ {
				f.err = write(f, "fill-")
			}
		}()
	}
	for range fillers {
		<-done
	}
	for _, f := range fillers {
		if !errors.Is(f.err, syscall.ENOSPC) {
			t.Errorf("%s/%s: %v, want ENOSPC", f.part, f.file, f.err)
		}
		checkServedLines(t, d.path(f.part, "log"), f.acked)
		dir := strings.Replace(f.part, "/", "-", 1)
		checkNoPartial(t, filepath.Join(data, dir), int64(len(f.acked)))
	}
	if err := os.Remove(ballast); err != nil {
		t.Fatal(err)
	}
	for _, f := range fillers {
		if err := write(f, "after-"); err != nil {
			t.Errorf("%s: append after space returned: %v", f.part, err)
		}
		checkServedLines(t, d.path(f.part, "log"), f.acked)
	}
	d.stop()
	if out, code := runPartfs(t, "check", data); code != 0 {
		t.Errorf("partfs check after the clean stop: exit %d\n%s", code, out)
	}
}
