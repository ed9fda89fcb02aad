package systest

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/partfs/partfs/internal/testutil"
	"github.com/partfs/partfs/logstore"
	"github.com/partfs/partfs/partlog"
	"github.com/partfs/partfs/record"
)

// smallDisk mounts a tmpfs of size bytes and returns its path; the
// returned ballast file (1 MiB of it) can be removed to free space.
func smallDisk(t *testing.T, size string) (dir, ballast string) {
	t.Helper()
	needRoot(t)
	dir = t.TempDir()
	if err := syscall.Mount("tmpfs", dir, "tmpfs", 0, "size="+size); err != nil {
		t.Fatalf("mount -t tmpfs -o size=%s: %v", size, err)
	}
	t.Cleanup(func() {
		if err := syscall.Unmount(dir, syscall.MNT_DETACH); err != nil {
			t.Errorf("umount %s: %v", dir, err)
		}
	})
	ballast = filepath.Join(dir, "ballast")
	testutil.WriteFile(t, ballast, make([]byte, 1<<20))
	return dir, ballast
}

// randomValue is incompressible, unique payload.
func randomValue(n int, tag string) []byte {
	b := make([]byte, n)
	rand.Read(b)
	copy(b, tag)
	return b
}

// writeUntilFull calls write with tag until it fails, at most 10,000
// times, and returns its error.
func writeUntilFull(write func(tag string) error, tag string) error {
	for i := 0; i < 10000; i++ {
		if err := write(tag); err != nil {
			return err
		}
	}
	return nil
}

// TestDiskFullLogstore: appends on a full tmpfs fail with ErrNoSpace, leave
// no partial batch, and work again once space is freed; everything
// acknowledged is there after a reopen.
func TestDiskFullLogstore(t *testing.T) {
	disk, ballast := smallDisk(t, "8m")
	data := filepath.Join(disk, "data")
	lg := testutil.NewLogger()
	st, err := logstore.Open(data, logstore.Options{Logger: lg.Entry, NoBackground: true})
	if err != nil {
		t.Fatal(err)
	}
	defer func() { st.Close() }()
	if err := st.CreateTopic("t"); err != nil {
		t.Fatal(err)
	}
	if err := st.SetTopicConfig("t", []partlog.KV{{Key: "segment.bytes", Value: "1048576"}}); err != nil {
		t.Fatal(err)
	}
	l, err := st.Log("t", 0)
	if err != nil {
		t.Fatal(err)
	}
	var acked [][]byte
	appendN := func(tag string) error {
		recs := make([]record.Record, 20)
		for i := range recs {
			recs[i].Value = randomValue(1000, fmt.Sprintf("%s-%d-%d|", tag, len(acked), i))
		}
		if _, err := l.Append(recs); err != nil {
			return err
		}
		for _, r := range recs {
			acked = append(acked, r.Value)
		}
		return nil
	}
	fullErr := writeUntilFull(appendN, "fill")
	if !errors.Is(fullErr, partlog.ErrNoSpace) {
		t.Fatalf("filling the disk: %v, want ErrNoSpace", fullErr)
	}
	t.Logf("disk full after %d records: %v", len(acked), fullErr)
	checkNoPartial(t, filepath.Join(data, "t-0"), int64(len(acked)))
	if err := os.Remove(ballast); err != nil {
		t.Fatal(err)
	}
	if err := appendN("after"); err != nil {
		t.Errorf("append after space returned: %v", err)
	}
	if err := st.Close(); err != nil {
		t.Logf("close: %v", err)
	}
	st, err = logstore.Open(data, logstore.Options{Logger: lg.Entry, NoBackground: true})
	if err != nil {
		t.Fatalf("reopen: %v", err)
	}
	checkValues(t, st, "t", acked)
}

// checkNoPartial: every .log of pdir is whole batches, and they hold exactly
// n records.
func checkNoPartial(t *testing.T, pdir string, n int64) {
	t.Helper()
	var records int64
	for _, path := range segmentFiles(t, pdir) {
		fi, err := os.Stat(path)
		if err != nil {
			t.Fatal(err)
		}
		end := int64(0)
		for _, b := range batchesOf(t, path) {
			records += b.last - b.base + 1
			end = b.pos + b.size
		}
		if end != fi.Size() {
			t.Errorf("%s: %d bytes after the last whole batch (at %d): a partial write was left", path, fi.Size()-end, end)
		}
	}
	if records != n {
		t.Errorf("segments hold %d records, %d were acknowledged", records, n)
	}
}

// checkValues: topic-0 serves exactly want, in order.
func checkValues(t *testing.T, st partlog.Store, topic string, want [][]byte) {
	t.Helper()
	l, err := st.Partition(topic, 0)
	if err != nil {
		t.Fatal(err)
	}
	segs, release := l.Segments()
	defer release()
	n := 0
	for _, seg := range segs {
		err := l.Read(seg, seg.Base, func(r *record.Record) bool {
			if n >= len(want) || string(r.Value) != string(want[n]) {
				t.Errorf("offset %d: not the acknowledged value", r.Offset)
				return false
			}
			n++
			return true
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	if n != len(want) {
		t.Errorf("%d records served, %d acknowledged", n, len(want))
	}
}

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
