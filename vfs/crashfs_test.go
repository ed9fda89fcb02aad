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
	if got := contents(t, fs, "/d/a"); got != "synced+unsynced" {
		t.Fatalf("before crash: %q", got)
	}
	if got := contents(t, fs.Crash(), "/d/a"); got != "synced" {
		t.Fatalf("after crash: %q, want the synced prefix", got)
	}
}

func TestCrashDropsNamesWithoutSyncDir(t *testing.T) {
	fs := newDirFS(t)
	writeFile(t, fs, "/d/a", "data", true) // data synced, name not
	if got := contents(t, fs.Crash(), "/d/a"); got != "<missing>" {
		t.Fatalf("unsynced create survived: %q", got)
	}
	fs.SyncDir("/d")
	if got := contents(t, fs.Crash(), "/d/a"); got != "data" {
		t.Fatalf("synced create: %q", got)
	}
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
	if got := contents(t, fs.Crash(), "/d/a"); got != "0123456789" {
		t.Fatalf("unsynced truncate survived: %q", got)
	}
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
	if got := contents(t, fs.Crash(), "/d/p/x"); got != "x" {
		t.Fatalf("got %q", got)
	}
}

func TestCrashCloneIsIndependent(t *testing.T) {
	fs := newDirFS(t)
	writeFile(t, fs, "/d/a", "A", true)
	fs.SyncDir("/d")
	c := fs.Crash()
	writeFile(t, c, "/d/a", "changed", true)
	if got := contents(t, fs, "/d/a"); got != "A" {
		t.Fatalf("clone changed the original: %q", got)
	}
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
	if got := contents(t, c, "/d/cp"); got != "v1" {
		t.Fatalf("got %q", got)
	}
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
	if got := contents(t, fs, "/d/a"); got != "abc\x00\x00Z" {
		t.Fatalf("got %q", got)
	}
	r, _ := fs.Open("/d/a")
	if _, err := r.Write([]byte("x")); err == nil {
		t.Fatal("write to read-only file succeeded")
	}
	r.Close()
	if err := r.Close(); err == nil {
		t.Fatal("double close succeeded")
	}
	infos, err := fs.ReadDir("/d")
	if err != nil || len(infos) != 1 || infos[0].Name() != "a" || infos[0].Size() != 6 {
		t.Fatalf("ReadDir: %v %v", infos, err)
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
