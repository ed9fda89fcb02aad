package compact_test

import (
	"bufio"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hanwen/go-fuse/v2/fuse"

	"github.com/partfs/partfs/compact"
	"github.com/partfs/partfs/fs"
	"github.com/partfs/partfs/internal/testutil"
	"github.com/partfs/partfs/logstore"
	"github.com/partfs/partfs/vfs"
)

// mounted is a compacted partition on disk, mounted with package fs.
type mounted struct {
	t      *testing.T
	st     *logstore.Store
	dir    string // mount point
	before []rec  // the records before any cleaning
}

func mountCompacted(t *testing.T) *mounted {
	testutil.NeedFUSE(t)
	mem := buildCrashLog(t)
	before, _ := stateOf(t, mem.Crash())
	data := filepath.Join(t.TempDir(), "data")
	copyCrashFS(t, mem, "/data", data)
	st, err := logstore.Open(data, logstore.Options{Now: now, Defaults: crashCfg, NoBackground: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	fsys := fs.New(fs.Options{Store: st, Now: now})
	mnt := testutil.NewMount(t, func(dir string) (*fuse.Server, error) {
		return fsys.Mount(dir, fs.MountOptions{FsName: "partfs-test"})
	})
	mnt.AfterUnmount = append(mnt.AfterUnmount, fsys.Close)
	return &mounted{t: t, st: st, dir: mnt.Dir, before: before}
}

func (m *mounted) clean() {
	c := compact.NewCleaner(compact.Options{Now: now, DedupeBufferSize: 1 << 16})
	if sum, err := c.CleanAll(compact.Targets(m.st), false); err != nil || sum.Cleaned != 1 {
		m.t.Fatalf("clean: %v %+v", err, sum)
	}
}

// jsonlReader reads log.jsonl line by line, keeping the offsets seen and
// the byte position after the last whole line.
type jsonlReader struct {
	t       *testing.T
	f       *os.File
	r       *bufio.Reader
	offsets []int64
	pos     int64
}

func (m *mounted) openJSONL(bufSize int) *jsonlReader {
	f, err := os.Open(filepath.Join(m.dir, "t", "0", "log.jsonl"))
	if err != nil {
		m.t.Fatal(err)
	}
	m.t.Cleanup(func() { f.Close() })
	return &jsonlReader{t: m.t, f: f, r: bufio.NewReaderSize(f, bufSize)}
}

// lines reads n lines (n < 0: to the end).
func (j *jsonlReader) lines(n int) {
	for i := 0; n < 0 || i < n; i++ {
		line, err := j.r.ReadString('\n')
		if err != nil {
			if n < 0 && line == "" {
				return
			}
			j.t.Fatalf("read after %d records: %v (%q)", len(j.offsets), err, line)
		}
		var obj struct{ Offset int64 }
		if err := json.Unmarshal([]byte(line), &obj); err != nil {
			j.t.Fatalf("line %q is not a whole record: %v", line, err)
		}
		j.offsets = append(j.offsets, obj.Offset)
		j.pos += int64(len(line))
	}
}

// check asserts one stream in offset order ending at the last record.
func (j *jsonlReader) check(before []rec) {
	for i := 1; i < len(j.offsets); i++ {
		if j.offsets[i] <= j.offsets[i-1] {
			j.t.Fatalf("offset %d after %d: duplicate or out of order", j.offsets[i], j.offsets[i-1])
		}
	}
	if last := before[len(before)-1].off; j.offsets[len(j.offsets)-1] != last {
		j.t.Fatalf("reader ended at offset %d, want %d", j.offsets[len(j.offsets)-1], last)
	}
}

// TestMountedReaderAcrossCompaction mounts a compacted partition, reads
// half of log.jsonl, cleans the log and reads on from the same position
// (a record boundary): one stream in offset order, without error or
// duplicate. @key/K then gives every key's latest value (ENOENT for a
// tombstone).
func TestMountedReaderAcrossCompaction(t *testing.T) {
	m := mountCompacted(t)
	j := m.openJSONL(64)
	j.lines(len(m.before) / 2)
	m.clean()
	if _, err := j.f.Seek(j.pos, 0); err != nil {
		t.Fatal(err)
	}
	j.r.Reset(j.f)
	j.lines(-1)
	j.check(m.before)
	for key, want := range latest(m.before) {
		b, err := os.ReadFile(filepath.Join(m.dir, "t", "0", "@key", key))
		switch {
		case want.tomb && !os.IsNotExist(err):
			t.Errorf("@key/%s of a tombstoned key: %q, %v; want ENOENT", key, b, err)
		case !want.tomb && (err != nil || strings.TrimSuffix(string(b), "\n") != want.value):
			t.Errorf("@key/%s = %q, %v; want %q", key, b, err, want.value)
		}
	}
}

// copyCrashFS copies the files under from in mem to the OS directory to.
func copyCrashFS(t *testing.T, mem *vfs.CrashFS, from, to string) {
	t.Helper()
	infos, err := mem.ReadDir(from)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(to, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, fi := range infos {
		src, dst := from+"/"+fi.Name(), filepath.Join(to, fi.Name())
		if fi.IsDir() {
			copyCrashFS(t, mem, src, dst)
			continue
		}
		f, err := mem.Open(src)
		if err != nil {
			t.Fatal(err)
		}
		b := make([]byte, fi.Size())
		if _, err := f.ReadAt(b, 0); err != nil && len(b) > 0 {
			t.Fatal(err)
		}
		f.Close()
		if err := os.WriteFile(dst, b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
}
