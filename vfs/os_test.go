package vfs

import (
	"errors"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

func TestOSLockIsExclusive(t *testing.T) {
	dir := t.TempDir()
	name := filepath.Join(dir, ".lock")
	l, err := Default.Lock(name)
	if err != nil {
		t.Fatal(err)
	}
	_, err = Default.Lock(name)
	want := "data directory " + dir + " is in use by another partfs (lock held on " + name + ")"
	if !errors.Is(err, ErrLocked) || !strings.Contains(err.Error(), want) {
		t.Fatalf("second lock: %v", err)
	}
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	l, err = Default.Lock(name)
	if err != nil {
		t.Fatalf("lock after release: %v", err)
	}
	l.Close()
}

func TestOSWriteFileDurableAndReadDir(t *testing.T) {
	dir := t.TempDir()
	for _, n := range []string{"b", "a", "c"} {
		if err := WriteFileDurable(Default, filepath.Join(dir, n), []byte(n+n)); err != nil {
			t.Fatal(err)
		}
	}
	infos, err := Default.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, fi := range infos {
		names = append(names, fi.Name())
	}
	if strings.Join(names, ",") != "a,b,c" {
		t.Fatalf("ReadDir: %v (temp files left?)", names)
	}
	wantContents(t, Default, filepath.Join(dir, "b"), "bb", "file")
}

func TestErrorFSShortWrite(t *testing.T) {
	dir := t.TempDir()
	inj := FailNth(OpWrite, 2, syscall.ENOSPC)
	inj.Short = true
	fs := NewErrorFS(Default, inj)
	f, err := fs.Create(filepath.Join(dir, "f"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.Write([]byte("first")); err != nil {
		t.Fatal(err)
	}
	n, err := f.Write([]byte("12345678"))
	if !errors.Is(err, syscall.ENOSPC) || n != 4 {
		t.Fatalf("short write: n=%d err=%v", n, err)
	}
	if _, err := f.Write([]byte("!")); err != nil {
		t.Fatalf("third write (not persistent): %v", err)
	}
	f.Close()
	wantContents(t, Default, filepath.Join(dir, "f"), "first1234!", "file")
	if inj.Count() != 3 || inj.Fired() != 1 {
		t.Fatalf("count %d fired %d", inj.Count(), inj.Fired())
	}
}

func TestErrorFSEachOp(t *testing.T) {
	cases := []struct {
		op  Op
		run func(fs FS, f File) error
	}{
		{OpSync, func(fs FS, f File) error { return f.Sync() }},
		{OpTruncate, func(fs FS, f File) error { return f.Truncate(0) }},
		{OpRead, func(fs FS, f File) error { _, err := f.ReadAt(make([]byte, 1), 0); return err }},
		{OpRename, func(fs FS, f File) error { return fs.Rename("/x/f", "/x/g") }},
		{OpRemove, func(fs FS, f File) error { return fs.Remove("/x/f") }},
		{OpSyncDir, func(fs FS, f File) error { return fs.SyncDir("/x") }},
		{OpCreate, func(fs FS, f File) error { _, err := fs.Create("/x/new"); return err }},
	}
	for _, c := range cases {
		t.Run(c.op.String(), func(t *testing.T) {
			mem := NewCrashFS()
			mem.MkdirAll("/x", 0o755)
			inj := FailNth(c.op, 1, syscall.EIO)
			inj.Persist = true
			fs := NewErrorFS(mem, inj)
			f, err := fs.OpenFile("/x/f", 0x42, 0o644) // O_RDWR|O_CREATE
			if c.op == OpCreate {
				if !errors.Is(err, syscall.EIO) {
					t.Fatalf("create: %v", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			f.Write([]byte("data"))
			for i := 0; i < 2; i++ {
				if err := c.run(fs, f); !errors.Is(err, syscall.EIO) {
					t.Fatalf("attempt %d: %v, want EIO", i, err)
				}
			}
			if got := contents(t, mem, "/x/f"); got != "data" {
				t.Fatalf("failed %s changed the file: %q", c.op, got)
			}
		})
	}
}
