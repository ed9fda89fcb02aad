package systest

import (
	"crypto/rand"
	"errors"
	"fmt"
	"os"
	"path/filepath"
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
