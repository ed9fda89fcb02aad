package logstore

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/partfs/partfs/internal/testutil"
	"github.com/partfs/partfs/kafkaname"
	"github.com/partfs/partfs/record"
	"github.com/partfs/partfs/vfs"
)

// requireAllocate skips where the test's filesystem cannot reserve blocks.
func requireAllocate(t *testing.T, dir string) {
	f, err := os.Create(filepath.Join(dir, "probe"))
	if err != nil {
		t.Fatal(err)
	}
	defer os.Remove(f.Name())
	defer f.Close()
	if err := vfs.Allocate(f, 0, 1<<20); errors.Is(err, syscall.EOPNOTSUPP) {
		t.Skipf("%s cannot fallocate: %v", dir, err)
	} else if err != nil {
		t.Fatal(err)
	}
}

// Large appends reserve blocks ahead of the active segment; rolling and
// closing give back what the segment did not use, and the reads and sizes
// are those of a log that never reserved anything.
func TestPreallocation(t *testing.T) {
	for name, fs := range map[string]func() vfs.FS{
		"os":     func() vfs.FS { return vfs.Default },
		"budget": func() vfs.FS { return vfs.NewBudgetFS(vfs.Default, 8) },
	} {
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			requireAllocate(t, dir)
			opt := Options{FS: fs(), NoBackground: true, Defaults: map[string]string{"segment.bytes": "4194304"}}
			st, l := openAt(t, dir, opt)
			rs := benchRecords(1000)
			const appends = 70 // ~9 MB: two rolls
			for i := 0; i < appends; i++ {
				if _, err := l.Append(rs); err != nil {
					t.Fatal(err)
				}
			}
			segs, release := l.Segments()
			release()
			if len(segs) < 3 {
				t.Fatalf("%d segments, want >= 3", len(segs))
			}
			pdir := filepath.Join(dir, "t-0")
			for i, s := range segs {
				path := segmentPath(pdir, s.Base, kafkaname.LogSuffix)
				got, size := testutil.AllocatedBytes(t, path), fileSize(t, vfs.Default, path)
				if size != s.Size {
					t.Fatalf("%s: file size %d, segment size %d", path, size, s.Size)
				}
				active := i == len(segs)-1
				if active && got <= roundUp(size, 4096) {
					t.Errorf("active %s: %d bytes allocated for %d, want blocks reserved ahead", path, got, size)
				}
				if !active && got > roundUp(size, 4096) {
					t.Errorf("sealed %s: %d bytes allocated for %d", path, got, size)
				}
			}
			if err := st.Close(); err != nil {
				t.Fatal(err)
			}
			last := segmentPath(pdir, segs[len(segs)-1].Base, kafkaname.LogSuffix)
			if got, size := testutil.AllocatedBytes(t, last), fileSize(t, vfs.Default, last); got > roundUp(size, 4096) {
				t.Errorf("closed %s: %d bytes allocated for %d", last, got, size)
			}
			st, l = openAt(t, dir, opt)
			defer st.Close()
			got := readLog(t, l, 0)
			if len(got) != appends*len(rs) {
				t.Fatalf("read %d records, want %d", len(got), appends*len(rs))
			}
			for i, r := range got {
				if r.off != int64(i) || r.value != string(rs[i%len(rs)].Value) {
					t.Fatalf("record %d: offset %d value %q", i, r.off, r.value)
				}
			}
		})
	}
}

func roundUp(n, to int64) int64 { return (n + to - 1) / to * to }

// Appends smaller than minAllocAppend reserve nothing.
func TestNoPreallocationForSmallAppends(t *testing.T) {
	dir := t.TempDir()
	requireAllocate(t, dir)
	st, l := openAt(t, dir, Options{NoBackground: true})
	defer st.Close()
	for i := 0; i < 100; i++ {
		if _, err := l.Append([]record.Record{{Value: []byte("one small line")}}); err != nil {
			t.Fatal(err)
		}
	}
	path := segmentPath(filepath.Join(dir, "t-0"), 0, kafkaname.LogSuffix)
	if got, size := testutil.AllocatedBytes(t, path), fileSize(t, vfs.Default, path); got > roundUp(size, 4096) {
		t.Fatalf("%d bytes allocated for %d", got, size)
	}
}

// An append that fails after its blocks were reserved is rolled back with
// them: the segment holds no spare blocks, and the next append reserves
// again and reads back whole.
func TestPreallocationUndo(t *testing.T) {
	dir := t.TempDir()
	requireAllocate(t, dir)
	inj := &vfs.NthInjector{Op: vfs.OpWrite, N: -1, Err: syscall.ENOSPC, Short: true, Filter: ".log"}
	st, l := openAt(t, dir, Options{FS: vfs.NewErrorFS(vfs.Default, inj), NoBackground: true})
	defer st.Close()
	rs := benchRecords(1000)
	if _, err := l.Append(rs); err != nil {
		t.Fatal(err)
	}
	path := segmentPath(filepath.Join(dir, "t-0"), 0, kafkaname.LogSuffix)
	size := fileSize(t, vfs.Default, path)
	inj.N = inj.Count() + 1 // the next write fails
	if _, err := l.Append(rs); err == nil {
		t.Fatal("append with a failing write succeeded")
	}
	if got := fileSize(t, vfs.Default, path); got != size {
		t.Fatalf("size %d after the failed append, want %d", got, size)
	}
	if got := testutil.AllocatedBytes(t, path); got > roundUp(size, 4096) {
		t.Fatalf("%d bytes allocated for %d after the failed append", got, size)
	}
	if _, err := l.Append(rs); err != nil {
		t.Fatal(err)
	}
	if got := testutil.AllocatedBytes(t, path); got <= roundUp(2*size, 4096) {
		t.Errorf("%d bytes allocated for %d: the append after the rollback reserved nothing", got, 2*size)
	}
	if got := readLog(t, l, 0); len(got) != 2*len(rs) || got[len(rs)].off != int64(len(rs)) {
		t.Fatalf("read %d records after the rollback, want %d", len(got), 2*len(rs))
	}
}

// noAllocFS opens files whose Allocate fails, as on a filesystem without
// fallocate.
type noAllocFS struct{ vfs.FS }

type noAllocFile struct{ vfs.File }

func (noAllocFile) Allocate(off, n int64) error { return syscall.EOPNOTSUPP }

func (fs noAllocFS) OpenFile(name string, flag int, perm os.FileMode) (vfs.File, error) {
	f, err := fs.FS.OpenFile(name, flag, perm)
	if err != nil {
		return nil, err
	}
	return noAllocFile{f}, nil
}

func (fs noAllocFS) Create(name string) (vfs.File, error) {
	return fs.OpenFile(name, os.O_RDWR|os.O_CREATE|os.O_TRUNC, 0o644)
}

// Where blocks cannot be reserved, appends go on without, with one warning
// per segment that names it.
func TestPreallocationUnsupported(t *testing.T) {
	lg := testutil.NewLogger()
	dir := t.TempDir()
	st, l := openAt(t, dir, Options{FS: noAllocFS{vfs.Default}, NoBackground: true, Logger: lg.Entry})
	defer st.Close()
	rs := benchRecords(1000)
	for i := 0; i < 3; i++ {
		if _, err := l.Append(rs); err != nil {
			t.Fatal(err)
		}
	}
	if got := readLog(t, l, 0); len(got) != 3*len(rs) {
		t.Fatalf("read %d records, want %d", len(got), 3*len(rs))
	}
	out := lg.Buf.String()
	if n := strings.Count(out, "cannot reserve blocks"); n != 1 || !strings.Contains(out, segmentPath(filepath.Join(dir, "t-0"), 0, kafkaname.LogSuffix)) {
		t.Fatalf("want one warning naming the segment, got:\n%s", out)
	}
}
