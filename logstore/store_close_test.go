package logstore

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"
)

// fileMarks is (inode, size, mtime, ctime) of every file under dir, by
// path: a file rewritten, renamed over, resized or written changes it.
func fileMarks(t *testing.T, dir string) map[string][4]int64 {
	t.Helper()
	out := map[string][4]int64{}
	err := filepath.Walk(dir, func(p string, fi os.FileInfo, err error) error {
		if err != nil || fi.IsDir() || filepath.Base(p) == ".lock" {
			return err
		}
		st := fi.Sys().(*syscall.Stat_t)
		out[p] = [4]int64{int64(st.Ino), st.Size, st.Mtim.Nano(), st.Ctim.Nano()}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// TestCloseLeavesUnchangedPartitionsAlone: a clean close rewrites,
// resizes or syncs nothing of a partition not written since a clean open
// (its segments, indexes, sidecars), and with nothing written at all not
// even the root checkpoint files; a written partition is closed as
// before (trimmed indexes, sidecar) and reads back after a reopen.
func TestCloseLeavesUnchangedPartitionsAlone(t *testing.T) {
	dir := t.TempDir()
	open := func() *Store { return openTopics(t, dir, Options{NoBackground: true}) }
	st := openTopics(t, dir, Options{NoBackground: true}, "a", "b")
	for _, name := range []string{"a", "b"} {
		for n := 1; n < 3; n++ {
			if err := st.AddPartition(name, n); err != nil {
				t.Fatal(err)
			}
		}
	}
	for _, l := range st.Logs() {
		if _, err := l.Append(recs(3, "x", 0)); err != nil {
			t.Fatal(err)
		}
	}
	if err := st.Close(); err != nil {
		t.Fatal(err)
	}
	before := fileMarks(t, dir)
	time.Sleep(20 * time.Millisecond) // past the file system's time granularity

	st = open()
	l, err := st.Log("b", 1)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := l.Append(recs(2, "y", 0)); err != nil {
		t.Fatal(err)
	}
	if err := st.Close(); err != nil {
		t.Fatal(err)
	}
	after := fileMarks(t, dir)
	changed := map[string]bool{}
	for p, m := range after {
		if before[p] != m {
			changed[filepath.Base(filepath.Dir(p))+"/"+filepath.Base(p)] = true
		}
	}
	for _, want := range []string{"b-1/00000000000000000000.log", "b-1/00000000000000000000.index", "b-1/logstore-segments.partfs"} {
		if !changed[want] {
			t.Errorf("%s of the written partition did not change", want)
		}
	}
	for p := range changed {
		if d := filepath.Dir(p); d != "b-1" && d != filepath.Base(dir) {
			t.Errorf("%s changed though its partition was not written", p)
		}
	}
	if size := after[filepath.Join(dir, "b-1", "00000000000000000000.index")][1]; size != 0 {
		t.Errorf("the written partition's index is %d bytes after close: not trimmed", size)
	}
	time.Sleep(20 * time.Millisecond)

	st = open()
	if l, err = st.Log("b", 1); err != nil || l.EndOffset() != 5 {
		t.Fatalf("b-1 after reopen: %v, end %d", err, l.EndOffset())
	}
	if err := st.Close(); err != nil {
		t.Fatal(err)
	}
	again := fileMarks(t, dir)
	for p, m := range again {
		if after[p] != m && filepath.Base(p) != ".kafka_cleanshutdown" {
			t.Errorf("%s changed by an open and close that wrote nothing", p)
		}
	}
}

// TestRecoveryLeavesUnchangedPartitionsAlone: an unclean open (the
// clean-shutdown marker gone) re-validates every partition but writes
// nothing of one whose indexes agree with its segments, not even the
// active segment's indexes, and the clean close after it leaves them too;
// an index that disagrees is rewritten with the entries its segment gives.
func TestRecoveryLeavesUnchangedPartitionsAlone(t *testing.T) {
	dir := t.TempDir()
	opt := Options{NoBackground: true, Defaults: map[string]string{"index.interval.bytes": "1"}}
	open := func() *Store { return openTopics(t, dir, opt) }
	st := openTopics(t, dir, opt, "a", "b")
	for _, name := range []string{"a", "b"} {
		if err := st.AddPartition(name, 1); err != nil {
			t.Fatal(err)
		}
	}
	for _, l := range st.Logs() {
		for i := 0; i < 4; i++ {
			if _, err := l.Append(recs(3, "x", 0)); err != nil {
				t.Fatal(err)
			}
		}
	}
	if err := st.Close(); err != nil {
		t.Fatal(err)
	}
	bad := filepath.Join(dir, "b-1", "00000000000000000000.index")
	good, err := os.ReadFile(bad)
	if err != nil || len(good) < 16 {
		t.Fatalf("index of b-1: %d bytes, %v", len(good), err)
	}
	if err := os.WriteFile(bad, good[:8], 0o644); err != nil { // an entry lost
		t.Fatal(err)
	}
	if err := os.Remove(filepath.Join(dir, ".kafka_cleanshutdown")); err != nil {
		t.Fatal(err)
	}
	before := fileMarks(t, dir)
	time.Sleep(20 * time.Millisecond)

	st = open()
	for _, l := range st.Logs() {
		if l.EndOffset() != 12 {
			t.Fatalf("%s after recovery: end %d", l.dir, l.EndOffset())
		}
	}
	if err := st.Close(); err != nil {
		t.Fatal(err)
	}
	for p, m := range fileMarks(t, dir) {
		switch {
		case p == bad:
			if got, _ := os.ReadFile(bad); string(got) != string(good) {
				t.Errorf("the damaged index holds %x after recovery, its segment gives %x", got, good)
			}
		case filepath.Dir(p) == dir:
		case before[p] != m:
			t.Errorf("%s changed by a recovery of an unchanged partition", p)
		}
	}
}
