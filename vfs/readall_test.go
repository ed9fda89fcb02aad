package vfs

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
)

// statFailsFS opens files whose Stat fails and counts their Closes.
type statFailsFS struct {
	FS
	closed int
}

type statFailsFile struct {
	File
	fs *statFailsFS
}

func (f statFailsFile) Stat() (os.FileInfo, error) { return nil, errors.New("stat refused") }

func (f statFailsFile) Close() error {
	f.fs.closed++
	return f.File.Close()
}

func (fs *statFailsFS) OpenFile(name string, flag int, perm os.FileMode) (File, error) {
	f, err := fs.FS.OpenFile(name, flag, perm)
	if err != nil {
		return nil, err
	}
	return statFailsFile{File: f, fs: fs}, nil
}

// TestOpenStat: the file with its size; a missing file's error; a file
// whose Stat fails is closed again.
func TestOpenStat(t *testing.T) {
	name := filepath.Join(t.TempDir(), "f")
	if err := os.WriteFile(name, []byte("abc"), 0o644); err != nil {
		t.Fatal(err)
	}
	f, fi, err := OpenStat(Default, name, os.O_RDONLY)
	if err != nil || fi.Size() != 3 || f.Name() != name {
		t.Fatalf("OpenStat = %v, %v", fi, err)
	}
	f.Close()
	if _, _, err := OpenStat(Default, name+".absent", os.O_RDONLY); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("OpenStat of a missing file: %v", err)
	}
	fs := &statFailsFS{FS: Default}
	if f, _, err := OpenStat(fs, name, os.O_RDONLY); f != nil || err == nil || fs.closed != 1 {
		t.Fatalf("OpenStat with a failing Stat = %v, %v; %d closes, want 1", f, err, fs.closed)
	}
}
