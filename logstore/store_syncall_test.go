package logstore

import (
	"errors"
	"fmt"
	"sync"
	"syscall"
	"testing"

	"github.com/partfs/partfs/vfs"
)

// syncAllWorkload opens a store on fs, writes 3 records to each of 6
// partitions and closes it through one sync of the filesystem.
func syncAllWorkload(t *testing.T, fs vfs.FS, c *clock, closing *bool) error {
	st := openTopics(t, "/data", testOptions(fs, c, smallIndexes))
	for _, name := range []string{"a", "b", "c"} {
		if err := st.CreateTopic(name); err != nil {
			t.Fatal(err)
		}
		if err := st.AddPartition(name, 1); err != nil {
			t.Fatal(err)
		}
	}
	for _, l := range st.Logs() {
		if _, err := l.Append(recs(3, l.dir, 0)); err != nil {
			t.Fatal(err)
		}
	}
	*closing = true
	return st.Close()
}

// TestCloseSyncingAll: a close that syncs the whole filesystem once
// (many partitions with something to sync) leaves, after a crash at any
// of its steps, either no clean-shutdown marker or every record written;
// the clean open after a whole close finds every partition's sidecar and
// checkpoint. A failed filesystem sync leaves no marker.
func TestCloseSyncingAll(t *testing.T) {
	defer func(n int) { syncAllFrom = n }(syncAllFrom)
	syncAllFrom = 1
	for k := 1; ; k++ {
		mem, c := vfs.NewCrashFS(), newClock()
		var after *vfs.CrashFS
		var mu sync.Mutex // the close works on several goroutines
		closing, ops := false, 0
		fs := vfs.NewErrorFS(mem, vfs.InjectorFunc(func(vfs.Op, string) (bool, error) {
			mu.Lock()
			defer mu.Unlock()
			if closing {
				if ops++; ops == k && after == nil {
					after = mem.Crash()
				}
			}
			return false, nil
		}))
		if err := syncAllWorkload(t, fs, c, &closing); err != nil {
			t.Fatalf("close: %v", err)
		}
		whole := after == nil
		if whole {
			after = mem.Crash()
		}
		st, err := Open("/data", testOptions(after, c, smallIndexes))
		if err != nil {
			t.Fatalf("crash at close step %d: open: %v", k, err)
		}
		clean := st.clean
		for _, l := range st.Logs() {
			got := readLog(t, l, 0)
			for i, r := range got {
				if want := fmt.Sprintf("%s-%d", l.dir, i); r.value != want {
					t.Fatalf("crash at close step %d: %s record %d is %q, want %q", k, l.dir, i, r.value, want)
				}
			}
			if clean && len(got) != 3 {
				t.Fatalf("crash at close step %d: clean-shutdown marker present but %s holds %d of 3 records", k, l.dir, len(got))
			}
		}
		if whole && (!clean || st.noSidecar.Load() != 0 || len(st.Logs()) != 6) {
			t.Fatalf("after a whole close: clean %v, %d partitions without a sidecar, %d partitions", clean, st.noSidecar.Load(), len(st.Logs()))
		}
		st.Close()
		if whole {
			t.Logf("crashed at each of the close's %d steps", k-1)
			break
		}
	}

	mem, c := vfs.NewCrashFS(), newClock()
	closing := false
	fs := vfs.NewErrorFS(mem, vfs.InjectorFunc(func(op vfs.Op, name string) (bool, error) {
		if closing && op == vfs.OpSyncDir && name == "/data" {
			return false, syscall.EIO
		}
		return false, nil
	}))
	if err := syncAllWorkload(t, fs, c, &closing); !errors.Is(err, syscall.EIO) {
		t.Fatalf("close with a failing filesystem sync: %v", err)
	}
	if exists(mem, "/data/.kafka_cleanshutdown") {
		t.Fatal("clean-shutdown marker written after a failed filesystem sync")
	}
}

// smallIndexes keeps the in-memory filesystem's preallocated indexes small.
var smallIndexes = map[string]string{"segment.index.bytes": "4096"}

// TestSyncAll: records appended and sidecars written (unsynced) before a
// SyncAll survive a crash after it, the recovery points advance to what it
// made durable, and a sidecar written after it is found old or new, whole.
func TestSyncAll(t *testing.T) {
	mem, c := vfs.NewCrashFS(), newClock()
	st := openTopics(t, "/data", testOptions(mem, c, smallIndexes), "a", "b")
	logs := st.Logs()
	for _, l := range logs {
		if _, err := l.Append(recs(3, l.dir, 0)); err != nil {
			t.Fatal(err)
		}
		if err := l.WriteSidecar("pos", []byte("old "+l.dir)); err != nil {
			t.Fatal(err)
		}
	}
	if err := st.SyncAll(); err != nil {
		t.Fatal(err)
	}
	for _, l := range logs {
		if l.recoveryPoint != 3 {
			t.Errorf("%s: recovery point %d after SyncAll, want 3", l.dir, l.recoveryPoint)
		}
		if _, err := l.Append(recs(2, "unsynced", 0)); err != nil {
			t.Fatal(err)
		}
		if err := l.WriteSidecar("pos", []byte("new "+l.dir)); err != nil {
			t.Fatal(err)
		}
	}
	after := mem.Crash()
	st2, err := Open("/data", testOptions(after, c, smallIndexes))
	if err != nil {
		t.Fatal(err)
	}
	defer st2.Close()
	for _, l := range st2.Logs() {
		got := readLog(t, l, 0)
		if len(got) < 3 || got[2].value != l.dir+"-2" {
			t.Errorf("%s after the crash: %v, want the 3 records synced", l.dir, got)
		}
		b, err := l.LoadSidecar("pos")
		if s := string(b); err != nil || s != "old "+l.dir && s != "new "+l.dir {
			t.Errorf("%s: sidecar %q, %v: want the old or the new one", l.dir, s, err)
		}
	}
}
