package compact_test

import (
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/partfs/partfs/compact"
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
