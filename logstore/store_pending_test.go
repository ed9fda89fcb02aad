package logstore

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/partfs/partfs/kafkaname"
	"github.com/partfs/partfs/vfs"
)

// gatedFS holds every listing of a partition directory of topic b until
// gate is closed.
type gatedFS struct {
	vfs.FS
	gate chan struct{}
}

func (g gatedFS) ReadDir(name string) ([]os.DirEntry, error) {
	if strings.HasPrefix(filepath.Base(name), "b-") {
		<-g.gate
	}
	return g.FS.ReadDir(name)
}

// pendingLayout writes topics a and b of parts partitions each, partition
// n holding n+1 records, closed cleanly.
func pendingLayout(t *testing.T, parts int) string {
	t.Helper()
	dir := t.TempDir()
	st := openTopics(t, dir, Options{NoBackground: true}, "a", "b")
	for _, name := range []string{"a", "b"} {
		for n := 1; n < parts; n++ {
			if err := st.AddPartition(name, n); err != nil {
				t.Fatal(err)
			}
		}
		for n := 0; n < parts; n++ {
			l, _ := st.Log(name, n)
			if _, err := l.Append(recs(n+1, fmt.Sprintf("%s%d", name, n), 0)); err != nil {
				t.Fatal(err)
			}
		}
	}
	if err := st.Close(); err != nil {
		t.Fatal(err)
	}
	return dir
}

// checkEnds opens dir and checks that every partition of a and b ends
// after its n+1 records, with the last one's value.
func checkEnds(t *testing.T, dir string, parts int) {
	t.Helper()
	st := openTopics(t, dir, Options{NoBackground: true})
	defer st.Close()
	for _, name := range []string{"a", "b"} {
		for n := 0; n < parts; n++ {
			l, err := st.Log(name, n)
			if err != nil {
				t.Fatalf("%s-%d: %v", name, n, err)
			}
			got := readLog(t, l, 0)
			if len(got) != n+1 || got[n].value != fmt.Sprintf("%s%d-%d", name, n, n) {
				t.Fatalf("%s-%d: %d records %v, want %d", name, n, len(got), got, n+1)
			}
		}
	}
}

// TestOpenInBackground: Open returns while partitions still open; one asked
// for opens at once with all its records, from many goroutines at a time;
// every partition answers in the end, and WaitOpened and Logs see them all.
func TestOpenInBackground(t *testing.T) {
	const parts = 24
	dir := pendingLayout(t, parts)
	gate := make(chan struct{})
	st, err := Open(dir, Options{NoBackground: true, OpenInBackground: true, FS: gatedFS{vfs.Beneath(dir), gate}})
	if err != nil {
		t.Fatal(err)
	}
	l, err := st.Log("a", parts-1) // opens while b's partitions are held
	if err != nil || l.EndOffset() != parts {
		t.Fatalf("a-%d while b pends: %v, end %d", parts-1, err, l.EndOffset())
	}
	if ns, err := st.PartitionNumbers("b"); err != nil || len(ns) != parts {
		t.Fatalf("b's partitions while pending: %v %v", ns, err)
	}
	close(gate)
	var wg sync.WaitGroup
	for g := 0; g < 8; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for n := parts - 1; n >= 0; n-- {
				name := []string{"a", "b"}[(n+g)%2]
				l, err := st.Log(name, n)
				if err != nil || l.EndOffset() != int64(n+1) {
					t.Errorf("%s-%d: %v", name, n, err)
					return
				}
			}
		}()
	}
	wg.Wait()
	st.WaitOpened()
	if got := len(st.Logs()); got != 2*parts {
		t.Fatalf("Logs after WaitOpened: %d, want %d", got, 2*parts)
	}
	if err := st.Close(); err != nil {
		t.Fatal(err)
	}
	checkEnds(t, dir, parts)
}

// TestCloseWhilePending: a close soon after a clean open leaves the
// partitions not opened yet untouched and their checkpoint entries in
// place; after an unclean open it recovers every partition first (a torn
// tail is cut from each) before it writes the clean-shutdown marker.
func TestCloseWhilePending(t *testing.T) {
	const parts = 40
	for _, clean := range []bool{true, false} {
		t.Run(fmt.Sprintf("clean=%v", clean), func(t *testing.T) {
			dir := pendingLayout(t, parts)
			cpPath := filepath.Join(dir, kafkaname.RecoveryPointFile)
			cps, _ := os.ReadFile(cpPath)
			segment := func(n int) string { return filepath.Join(dir, fmt.Sprintf("b-%d", n), "00000000000000000000.log") }
			sizes := map[int]int64{}
			for n := 0; n < parts && !clean; n++ {
				fi, _ := os.Stat(segment(n))
				sizes[n] = fi.Size()
				f, _ := os.OpenFile(segment(n), os.O_WRONLY|os.O_APPEND, 0)
				f.Write([]byte("torn tail"))
				f.Close()
			}
			if !clean {
				os.Remove(filepath.Join(dir, kafkaname.CleanShutdownFile))
			}
			before := fileMarks(t, filepath.Join(dir, "b-39"))
			gate := make(chan struct{})
			st, err := Open(dir, Options{NoBackground: true, OpenInBackground: true, FS: gatedFS{vfs.Beneath(dir), gate}})
			if err != nil {
				t.Fatal(err)
			}
			go func() { time.Sleep(50 * time.Millisecond); close(gate) }()
			if err := st.Close(); err != nil {
				t.Fatal(err)
			}
			if _, err := os.Stat(filepath.Join(dir, kafkaname.CleanShutdownFile)); err != nil {
				t.Fatalf("no clean-shutdown marker: %v", err)
			}
			for n, size := range sizes {
				if fi, _ := os.Stat(segment(n)); fi.Size() != size {
					t.Errorf("b-%d: %d bytes after the close, want %d: its torn tail not recovered", n, fi.Size(), size)
				}
			}
			after, _ := os.ReadFile(cpPath)
			if clean {
				if string(after) != string(cps) {
					t.Errorf("recovery points changed by a close that opened few partitions:\n%s\nwas\n%s", after, cps)
				}
				for p, m := range fileMarks(t, filepath.Join(dir, "b-39")) {
					if before[p] != m {
						t.Errorf("%s changed though never opened", p)
					}
				}
			}
			checkEnds(t, dir, parts)
		})
	}
}
