package vfs

import (
	"bytes"
	"errors"
	"math/rand"
	"os"
	"strings"
	"testing"
)

func writeFile(t *testing.T, fs FS, name, data string, sync bool) {
	t.Helper()
	f, err := fs.Create(name)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.Write([]byte(data)); err != nil {
		t.Fatal(err)
	}
	if sync {
		if err := f.Sync(); err != nil {
			t.Fatal(err)
		}
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
}

// contents returns the file's data, or "<missing>".
// wantContents fails the test (saying what was checked) unless name in fs
// holds want ("<missing>": does not exist).
func wantContents(t *testing.T, fs FS, name, want, what string) {
	t.Helper()
	if got := contents(t, fs, name); got != want {
		t.Fatalf("%s: %s holds %q, want %q", what, name, got, want)
	}
}

func contents(t *testing.T, fs FS, name string) string {
	t.Helper()
	f, err := fs.Open(name)
	if errors.Is(err, os.ErrNotExist) {
		return "<missing>"
	}
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	return readAll(t, f)
}

func newDirFS(t *testing.T) *CrashFS {
	t.Helper()
	fs := NewCrashFS()
	if err := fs.MkdirAll("/d", 0o755); err != nil {
		t.Fatal(err)
	}
	if err := fs.SyncDir("/"); err != nil {
		t.Fatal(err)
	}
	return fs
}

func TestCrashKeepsOnlySyncedData(t *testing.T) {
	fs := newDirFS(t)
	writeFile(t, fs, "/d/a", "synced", true)
	fs.SyncDir("/d")
	f, _ := fs.OpenFile("/d/a", os.O_RDWR|os.O_APPEND, 0)
	f.Write([]byte("+unsynced"))
	f.Close()
	wantContents(t, fs, "/d/a", "synced+unsynced", "before crash")
	wantContents(t, fs.Crash(), "/d/a", "synced", "after crash")
}

func TestCrashDropsNamesWithoutSyncDir(t *testing.T) {
	fs := newDirFS(t)
	writeFile(t, fs, "/d/a", "data", true) // data synced, name not
	wantContents(t, fs.Crash(), "/d/a", "<missing>", "crash before SyncDir of a synced create")
	fs.SyncDir("/d")
	wantContents(t, fs.Crash(), "/d/a", "data", "synced create")
}

func TestCrashUndoesUnsyncedRenameAndRemove(t *testing.T) {
	fs := newDirFS(t)
	writeFile(t, fs, "/d/a", "A", true)
	writeFile(t, fs, "/d/b", "B", true)
	fs.SyncDir("/d")
	if err := fs.Rename("/d/a", "/d/c"); err != nil {
		t.Fatal(err)
	}
	if err := fs.Remove("/d/b"); err != nil {
		t.Fatal(err)
	}
	c := fs.Crash()
	for name, want := range map[string]string{"/d/a": "A", "/d/b": "B", "/d/c": "<missing>"} {
		if got := contents(t, c, name); got != want {
			t.Errorf("crash before SyncDir: %s = %q, want %q", name, got, want)
		}
	}
	fs.SyncDir("/d")
	c = fs.Crash()
	for name, want := range map[string]string{"/d/a": "<missing>", "/d/b": "<missing>", "/d/c": "A"} {
		if got := contents(t, c, name); got != want {
			t.Errorf("crash after SyncDir: %s = %q, want %q", name, got, want)
		}
	}
}

func TestCrashUndoesUnsyncedTruncate(t *testing.T) {
	fs := newDirFS(t)
	writeFile(t, fs, "/d/a", "0123456789", true)
	fs.SyncDir("/d")
	f, _ := fs.OpenFile("/d/a", os.O_RDWR, 0)
	f.Truncate(4)
	f.Close()
	wantContents(t, fs.Crash(), "/d/a", "0123456789", "crash after an unsynced truncate")
}

func TestCrashDirectoryNeedsParentSync(t *testing.T) {
	fs := newDirFS(t)
	fs.MkdirAll("/d/p", 0o755)
	writeFile(t, fs, "/d/p/x", "x", true)
	fs.SyncDir("/d/p")
	if _, err := fs.Crash().Stat("/d/p"); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("directory without parent SyncDir survived: %v", err)
	}
	fs.SyncDir("/d")
	wantContents(t, fs.Crash(), "/d/p/x", "x", "after SyncDir of the parent")
}

func TestCrashCloneIsIndependent(t *testing.T) {
	fs := newDirFS(t)
	writeFile(t, fs, "/d/a", "A", true)
	fs.SyncDir("/d")
	c := fs.Crash()
	writeFile(t, c, "/d/a", "changed", true)
	wantContents(t, fs, "/d/a", "A", "the original after a change of its clone")
}

func TestCrashTornKeepsSyncedPrefix(t *testing.T) {
	fs := newDirFS(t)
	writeFile(t, fs, "/d/a", "synced", true)
	fs.SyncDir("/d")
	f, _ := fs.OpenFile("/d/a", os.O_RDWR|os.O_APPEND, 0)
	f.Write(bytes.Repeat([]byte("x"), 100))
	f.Close()
	rng := rand.New(rand.NewSource(1))
	lengths := map[int]bool{}
	for i := 0; i < 50; i++ {
		got := contents(t, fs.CrashTorn(rng), "/d/a")
		if !strings.HasPrefix(got, "synced") || len(got) > 106 {
			t.Fatalf("torn crash: %q", got)
		}
		for j := 6; j < len(got); j++ {
			if got[j] != 'x' && got[j] != 0 {
				t.Fatalf("torn crash invented byte %q at %d", got[j], j)
			}
		}
		lengths[len(got)] = true
	}
	if len(lengths) < 5 {
		t.Fatalf("torn crash lengths not random: %v", lengths)
	}
}

func TestWriteFileDurableSurvivesCrash(t *testing.T) {
	fs := newDirFS(t)
	if err := WriteFileDurable(fs, "/d/cp", []byte("v1")); err != nil {
		t.Fatal(err)
	}
	c := fs.Crash()
	wantContents(t, c, "/d/cp", "v1", "crash")
	if _, err := c.Stat("/d/cp.tmp"); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("temp file left: %v", err)
	}
}

func TestWriteFileDurableFailureKeepsOldContents(t *testing.T) {
	for _, op := range []Op{OpWrite, OpSync, OpRename, OpCreate, OpSyncDir} {
		t.Run(op.String(), func(t *testing.T) {
			fs := newDirFS(t)
			if err := WriteFileDurable(fs, "/d/cp", []byte("old")); err != nil {
				t.Fatal(err)
			}
			efs := NewErrorFS(fs, FailNth(op, 1, errors.New("injected")))
			if err := WriteFileDurable(efs, "/d/cp", []byte("new")); err == nil {
				t.Fatal("no error")
			}
			got := contents(t, fs.Crash(), "/d/cp")
			if got != "old" && !(op == OpSyncDir && got == "new") {
				t.Fatalf("after failed %s and crash: %q", op, got)
			}
			if op != OpSyncDir {
				if _, err := fs.Stat("/d/cp.tmp"); !errors.Is(err, os.ErrNotExist) {
					t.Fatalf("temp file left after failed %s: %v", op, err)
				}
			}
		})
	}
}

func TestCrashFSFileSemantics(t *testing.T) {
	fs := newDirFS(t)
	if _, err := fs.Open("/d/none"); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("open missing: %v", err)
	}
	writeFile(t, fs, "/d/a", "abc", false)
	if _, err := fs.OpenFile("/d/a", os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o644); !errors.Is(err, os.ErrExist) {
		t.Fatalf("O_EXCL on existing: %v", err)
	}
	f, _ := fs.OpenFile("/d/a", os.O_RDWR, 0)
	f.WriteAt([]byte("Z"), 5) // hole is zero-filled
	f.Close()
	wantContents(t, fs, "/d/a", "abc\x00\x00Z", "file")
	r, _ := fs.Open("/d/a")
	if _, err := r.Write([]byte("x")); err == nil {
		t.Fatal("write to read-only file succeeded")
	}
	r.Close()
	if err := r.Close(); err == nil {
		t.Fatal("double close succeeded")
	}
	infos, err := fs.ReadDir("/d")
	if err != nil || len(infos) != 1 || infos[0].Name() != "a" {
		t.Fatalf("ReadDir: %v %v", infos, err)
	}
	if fi, err := infos[0].Info(); err != nil || fi.Size() != 6 {
		t.Fatalf("ReadDir's entry: %v %v", fi, err)
	}
	if err := fs.Remove("/d"); err == nil {
		t.Fatal("removed a non-empty directory")
	}
	if err := fs.RemoveAll("/d"); err != nil {
		t.Fatal(err)
	}
	if _, err := fs.Stat("/d/a"); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("after RemoveAll: %v", err)
	}
}

func TestCrashFSLock(t *testing.T) {
	fs := newDirFS(t)
	l, err := fs.Lock("/d/.lock")
	if err != nil {
		t.Fatal(err)
	}
	_, err = fs.Lock("/d/.lock")
	if !errors.Is(err, ErrLocked) || !strings.Contains(err.Error(), "data directory /d is in use by another partfs (lock held on /d/.lock)") {
		t.Fatalf("second lock: %v", err)
	}
	l.Close()
	l, err = fs.Lock("/d/.lock")
	if err != nil {
		t.Fatalf("lock after release: %v", err)
	}
	l.Close()
}

// TestSyncAll: a sync of the whole filesystem makes every file's data and
// every directory's entries durable, on CrashFS as on the real one (where
// it is syncfs(2) through a descriptor of the directory).
func TestSyncAll(t *testing.T) {
	fs := NewCrashFS()
	if err := fs.MkdirAll("/d/e", 0o755); err != nil {
		t.Fatal(err)
	}
	f, err := fs.Create("/d/e/f")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.Write([]byte("data")); err != nil {
		t.Fatal(err)
	}
	all, err := fs.OpenSyncAll("/d")
	if err != nil {
		t.Fatal(err)
	}
	if err := all.Sync(); err != nil {
		t.Fatal(err)
	}
	wantContents(t, fs.Crash(), "/d/e/f", "data", "after a sync of the filesystem")
	if _, err := fs.OpenSyncAll("/d/e/f"); err == nil {
		t.Fatal("opened a file as a directory to sync")
	}

	dir := t.TempDir()
	for _, real := range []FS{Default, Beneath(dir)} {
		all, err := real.OpenSyncAll(dir)
		if err != nil {
			t.Fatal(err)
		}
		if err := all.Sync(); err != nil {
			t.Fatal(err)
		}
		all.Close()
	}
	if _, err := Beneath(dir).OpenSyncAll(t.TempDir()); err == nil {
		t.Fatal("opened a directory outside the root")
	}
}
