package systest

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/partfs/partfs/internal/testutil"
)

// TestRelativeDataDirAtLowFileLimit: `partfs mount data mnt` run from
// their parent, with 200 partitions and `ulimit -n 256` (a budget of 64
// descriptors, so segment files are closed and reopened by name), appends
// to every partition, fsyncs, unmounts with status 0 and serves every
// record after a remount, as an absolute data directory does.
func TestRelativeDataDirAtLowFileLimit(t *testing.T) {
	testutil.NeedFUSE(t)
	root := t.TempDir()
	d := &daemon{t: t, data: filepath.Join(root, "data"), mnt: filepath.Join(root, "mnt"), relative: true, nofile: 256}
	d.start()
	t.Cleanup(func() {
		if d.running() {
			d.kill9()
		}
	})
	const parts = 200
	mkTopic(t, d, "r", parts)
	for round := 0; round < 2; round++ {
		for p := 0; p < parts; p++ {
			f, err := os.OpenFile(d.path("r", strconv.Itoa(p), "log"), os.O_WRONLY|os.O_APPEND, 0)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := f.WriteString("p" + strconv.Itoa(p) + "-" + strconv.Itoa(round) + "\n"); err != nil {
				t.Fatalf("append to r/%d: %v", p, err)
			}
			if err := f.Sync(); err != nil {
				t.Fatalf("fsync r/%d: %v", p, err)
			}
			if err := f.Close(); err != nil {
				t.Fatalf("close r/%d: %v", p, err)
			}
		}
	}
	d.stop()
	if strings.Contains(d.log.String(), "outside the data directory") {
		t.Fatalf("the daemon refused its own files:\n%s", tail(d.log.String(), 2000))
	}
	d.restart()
	defer d.stop()
	for p := 0; p < parts; p++ {
		got := string(testutil.ReadFile(t, d.path("r", strconv.Itoa(p), "log")))
		want := "p" + strconv.Itoa(p) + "-0\np" + strconv.Itoa(p) + "-1\n"
		if got != want {
			t.Fatalf("r/%d after a remount: %q, want %q", p, got, want)
		}
	}
}

// TestHardLinkedSegmentNotOpened: a segment with a second name outside the
// data directory leaves its partition closed (EIO, a log line) while the
// others open; the outside file keeps its bytes after writes to the topic's
// other partition and an unmount.
func TestHardLinkedSegmentNotOpened(t *testing.T) {
	d := startFresh(t)
	mkTopic(t, d, "h", 2)
	for p := 0; p < 2; p++ {
		appendLine(t, d.path("h", strconv.Itoa(p), "log"), "before")
	}
	d.stop()
	seg := filepath.Join(d.data, "h-0", "00000000000000000000.log")
	outside := filepath.Join(filepath.Dir(d.data), "outside.log")
	if err := os.Link(seg, outside); err != nil {
		t.Fatal(err)
	}
	before := testutil.ReadFile(t, outside)
	d.restart()
	if _, err := os.ReadFile(d.path("h", "0", "log")); err == nil {
		t.Error("h/0 with a hard-linked segment was opened")
	}
	appendLine(t, d.path("h", "1", "log"), "after")
	if !d.waitLog(5e9, "more than one hard link") {
		t.Errorf("no log line names the hard link:\n%s", tail(d.log.String(), 2000))
	}
	d.stop()
	if after := testutil.ReadFile(t, outside); string(after) != string(before) {
		t.Fatal("the file outside the data directory changed")
	}
}

func appendLine(t *testing.T, path, line string) {
	t.Helper()
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := f.WriteString(line + "\n"); err != nil {
		t.Fatalf("append to %s: %v", path, err)
	}
}

// TestSegmentTruncatedUnderTheMount: after another process truncates the
// active segment, the next append through the mount fails with EIO, the
// daemon logs it, the unmount leaves no clean-shutdown marker, and the
// next mount recovers: every record still in the file is served and new
// appends get the offsets after them.
func TestSegmentTruncatedUnderTheMount(t *testing.T) {
	d := startFresh(t)
	mkTopic(t, d, "c", 1)
	for i := 0; i < 30; i++ {
		appendLine(t, d.path("c", "0", "log"), "line"+strconv.Itoa(i))
	}
	seg := filepath.Join(d.data, "c-0", "00000000000000000000.log")
	fi, err := os.Stat(seg)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Truncate(seg, fi.Size()/2); err != nil {
		t.Fatal(err)
	}
	f, err := os.OpenFile(d.path("c", "0", "log"), os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		t.Fatal(err)
	}
	_, werr := f.WriteString("after\n")
	f.Close()
	if werr == nil || !strings.Contains(werr.Error(), "input/output error") {
		t.Fatalf("append after the truncation: %v, want EIO", werr)
	}
	if !d.waitLog(5e9, "changed under the mount") {
		t.Errorf("no log line:\n%s", tail(d.log.String(), 2000))
	}
	_ = syscall.Unmount(d.mnt, 0)
	<-d.done
	if _, err := os.Stat(filepath.Join(d.data, ".kafka_cleanshutdown")); err == nil {
		t.Fatal("a clean-shutdown marker was written")
	}
	d.restart()
	defer d.stop()
	got := strings.Split(strings.TrimSuffix(string(testutil.ReadFile(t, d.path("c", "0", "log"))), "\n"), "\n")
	if len(got) == 0 || len(got) >= 30 {
		t.Fatalf("after recovery %d records", len(got))
	}
	for i, line := range got {
		if line != "line"+strconv.Itoa(i) {
			t.Fatalf("record %d is %q", i, line)
		}
	}
	appendLine(t, d.path("c", "0", "log"), "new")
	if b := string(testutil.ReadFile(t, d.path("c", "0", "log"))); !strings.HasSuffix(b, "line"+strconv.Itoa(len(got)-1)+"\nnew\n") {
		t.Fatalf("after an append: %q", b)
	}
}
