package compact_test

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/partfs/partfs/compact"
	"github.com/partfs/partfs/logstore"
	"github.com/partfs/partfs/record"
	"github.com/partfs/partfs/vfs"
)

// TestStartCleansAMountedStore runs the background cleaner on an open
// store (as `partfs mount` does) until the log is clean, then stops it
// without leaking goroutines.
func TestStartCleansAMountedStore(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	fs := buildCrashLog(t)
	after, _ := stateOf(t, cleanedCopy(t, fs))
	st, err := openStore(t, fs)
	if err != nil {
		t.Fatal(err)
	}
	cleaned := make(chan int64, 10)
	stop := compact.Start(st, compact.BackgroundOptions{Threads: 2, Backoff: 10 * time.Millisecond,
		IOMaxBytesPerSecond: 10 << 20,
		Options:             compact.Options{Now: now, DedupeBufferSize: 1 << 17},
		OnCleaned: func(topic string, partition int, read, written, removed int64) {
			cleaned <- removed
		}})
	select {
	case removed := <-cleaned:
		if removed == 0 {
			t.Error("background cleaning removed nothing")
		}
	case <-time.After(10 * time.Second):
		t.Error("background cleaner did not clean")
	}
	stop()
	l, _ := st.Log("t", 0)
	if got := readAll(t, l); len(got) != len(after) {
		t.Errorf("%d records after background cleaning, want %d", len(got), len(after))
	}
	if l.Stats().DirtyRatio != 0 {
		t.Errorf("dirty ratio %v after cleaning", l.Stats().DirtyRatio)
	}
	if err := st.Close(); err != nil {
		t.Fatal(err)
	}
}

// TestBackgroundCleaningDuringAppends appends to a compacted log while the
// background cleaner runs on it: afterwards every key's latest value is the
// last one appended, and nothing was appended twice or lost past the
// cleaned range.
func TestBackgroundCleaningDuringAppends(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	fs := vfs.NewCrashFS()
	st, err := openStore(t, fs)
	if err != nil {
		t.Fatal(err)
	}
	if err := st.CreateTopic("t"); err != nil {
		t.Fatal(err)
	}
	l, _ := st.Log("t", 0)
	stop := compact.Start(st, compact.BackgroundOptions{Backoff: time.Millisecond,
		Options: compact.Options{Now: now, DedupeBufferSize: 1 << 16}})
	last := map[string]string{}
	for i := 0; i < 3000; i++ {
		k, v := fmt.Sprintf("k%d", i%37), fmt.Sprintf("v%d", i)
		if _, err := l.Append([]record.Record{{Key: []byte(k), Value: []byte(v)}}); err != nil {
			t.Fatal(err)
		}
		last[k] = v
	}
	time.Sleep(50 * time.Millisecond)
	stop()
	got := readAll(t, l)
	seen := map[string]string{}
	for _, r := range got {
		seen[r.key] = r.value
	}
	if fmt.Sprint(seen) != fmt.Sprint(last) {
		t.Fatalf("latest values after background cleaning:\n got %v\nwant %v", seen, last)
	}
	if len(got) >= 3000 {
		t.Errorf("the background cleaner removed nothing (%d records)", len(got))
	}
	if err := st.Close(); err != nil {
		t.Fatal(err)
	}
}

// heldFS holds the listing of partition directory t-0 until gate is
// closed, keeping a store opened in the background from finishing.
type heldFS struct {
	vfs.FS
	gate chan struct{}
}

func (h heldFS) ReadDir(name string) ([]os.DirEntry, error) {
	if filepath.Base(name) == "t-0" {
		<-h.gate
	}
	return h.FS.ReadDir(name)
}

// TestStartStopsWhilePartitionsOpen: the cleaner of a store whose
// partitions still open in the background cleans nothing yet and stops
// at once; the store closes once they are open.
func TestStartStopsWhilePartitionsOpen(t *testing.T) {
	dir := t.TempDir()
	st, err := logstore.Open(dir, logstore.Options{NoBackground: true})
	if err != nil {
		t.Fatal(err)
	}
	if err := st.CreateTopic("t"); err != nil {
		t.Fatal(err)
	}
	st.Close()
	gate := make(chan struct{})
	st, err = logstore.Open(dir, logstore.Options{NoBackground: true, OpenInBackground: true, FS: heldFS{vfs.Beneath(dir), gate}})
	if err != nil {
		t.Fatal(err)
	}
	stop := compact.Start(st, compact.BackgroundOptions{Backoff: time.Millisecond})
	time.Sleep(20 * time.Millisecond) // several passes
	stopped := make(chan struct{})
	go func() { stop(); close(stopped) }()
	select {
	case <-stopped:
	case <-time.After(10 * time.Second):
		t.Fatal("the cleaner's stop waited for partitions still opening")
	}
	if st.Opened() {
		t.Fatal("Opened while a partition's listing is held")
	}
	close(gate)
	if err := st.Close(); err != nil {
		t.Fatal(err)
	}
}
