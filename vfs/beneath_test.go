package vfs

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
)

// TestBeneathRefusesSymlinks: no operation of a Beneath filesystem reaches
// a file through a symbolic link, and a name outside the root is refused;
// the files outside keep their bytes.
func TestBeneathRefusesSymlinks(t *testing.T) {
	top := t.TempDir()
	root, out := filepath.Join(top, "data"), filepath.Join(top, "outside")
	for _, d := range []string{filepath.Join(root, "t-0"), out} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	secret := filepath.Join(out, "secret")
	if err := os.WriteFile(secret, []byte("keep me"), 0o600); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(root, "t-0", "00000000000000000000.log")
	must(t, os.Symlink(secret, link))
	must(t, os.Symlink(out, filepath.Join(root, "t-1")))
	fs := Beneath(root)
	refused := func(what string, err error) {
		t.Helper()
		if !errors.Is(err, ErrOutside) {
			t.Errorf("%s: %v, want ErrOutside", what, err)
		}
	}
	_, err := fs.OpenFile(link, os.O_RDWR|os.O_TRUNC, 0)
	refused("open a link with O_TRUNC", err)
	_, err = fs.Open(link)
	refused("open a link read-only", err)
	_, err = fs.Create(filepath.Join(root, "t-1", "secret"))
	refused("create through a linked directory", err)
	_, err = fs.Open(filepath.Join(root, "t-1", "secret"))
	refused("open through a linked directory", err)
	refused("mkdir through a linked directory", fs.MkdirAll(filepath.Join(root, "t-1", "x"), 0o755))
	refused("remove through a linked directory", fs.Remove(filepath.Join(root, "t-1", "secret")))
	refused("removeall through a linked directory", fs.RemoveAll(filepath.Join(root, "t-1", "secret")))
	refused("rename through a linked directory", fs.Rename(filepath.Join(root, "t-1", "secret"), filepath.Join(root, "x")))
	_, err = fs.ReadDir(filepath.Join(root, "t-1"))
	refused("list a linked directory", err)
	_, err = fs.Open(secret)
	refused("open outside the root", err)
	refused("remove outside the root", fs.Remove(secret))
	if err := fs.RemoveAll(filepath.Join(root, "t-1")); err != nil {
		t.Errorf("removeall of a link: %v", err)
	}
	if b, err := os.ReadFile(secret); err != nil || string(b) != "keep me" {
		t.Fatalf("the file outside was touched: %q %v", b, err)
	}
	if _, err := os.Stat(out); err != nil {
		t.Fatalf("the directory outside was removed: %v", err)
	}
	fi, err := fs.Stat(link)
	if err != nil || fi.Mode()&os.ModeSymlink == 0 {
		t.Errorf("stat of a link: %v %v, want the link itself", fi, err)
	}
	// ordinary work below the root still works
	f, err := fs.Create(filepath.Join(root, "t-0", "a"))
	must(t, err)
	_, err = f.Write([]byte("x"))
	must(t, err)
	must(t, f.Close())
	must(t, fs.Rename(filepath.Join(root, "t-0", "a"), filepath.Join(root, "t-0", "b")))
	must(t, fs.MkdirAll(filepath.Join(root, "u-0", "v"), 0o755))
	must(t, fs.SyncDir(root))
	must(t, fs.SyncDir(top))
	must(t, fs.RemoveAll(filepath.Join(root, "u-0")))
	must(t, fs.Remove(filepath.Join(root, "t-0", "b")))
	l, err := fs.Lock(filepath.Join(root, ".lock"))
	must(t, err)
	must(t, l.Close())
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// TestBeneathStat: Stat describes files, directories and a trailing link
// below the root, and refuses a path through a linked directory.
func TestBeneathStat(t *testing.T) {
	top := t.TempDir()
	root := filepath.Join(top, "data")
	must(t, os.MkdirAll(filepath.Join(root, "t-0"), 0o755))
	must(t, os.WriteFile(filepath.Join(root, "t-0", "a"), []byte("12345"), 0o644))
	must(t, os.Symlink(filepath.Join(root, "t-0"), filepath.Join(root, "t-1")))
	fs := Beneath(root)
	fi, err := fs.Stat(filepath.Join(root, "t-0", "a"))
	if err != nil || fi.Size() != 5 || fi.Name() != "a" || !fi.Mode().IsRegular() {
		t.Errorf("stat of a file: %v %v", fi, err)
	}
	if fi, err := fs.Stat(filepath.Join(root, "t-0")); err != nil || !fi.IsDir() {
		t.Errorf("stat of a directory: %v %v", fi, err)
	}
	if fi, err := fs.Stat(filepath.Join(root, "t-1")); err != nil || fi.Mode()&os.ModeSymlink == 0 {
		t.Errorf("stat of a trailing link: %v %v, want the link", fi, err)
	}
	if _, err := fs.Stat(filepath.Join(root, "t-1", "a")); !errors.Is(err, ErrOutside) {
		t.Errorf("stat through a linked directory: %v, want ErrOutside", err)
	}
	if _, err := fs.Stat(filepath.Join(root, "t-0", "none")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("stat of a missing file: %v, want ErrNotExist", err)
	}
}

// TestBeneathRefusesHardLinksForWriting: a regular file with a second name
// (outside the root) is not opened for writing, not even truncated by
// O_TRUNC; reading it is allowed.
func TestBeneathRefusesHardLinksForWriting(t *testing.T) {
	top := t.TempDir()
	root := filepath.Join(top, "data")
	must(t, os.MkdirAll(filepath.Join(root, "t-0"), 0o755))
	outside := filepath.Join(top, "outside")
	must(t, os.WriteFile(outside, []byte("keep me"), 0o600))
	inside := filepath.Join(root, "t-0", "00000000000000000000.log")
	must(t, os.Link(outside, inside))
	fs := Beneath(root)
	for _, flag := range []int{os.O_RDWR, os.O_WRONLY | os.O_APPEND, os.O_RDWR | os.O_TRUNC, os.O_RDWR | os.O_CREATE | os.O_TRUNC} {
		if _, err := fs.OpenFile(inside, flag, 0o644); !errors.Is(err, ErrLinked) {
			t.Errorf("open flags %#x: %v, want ErrLinked", flag, err)
		}
	}
	f, err := fs.Open(inside)
	if err != nil {
		t.Fatalf("read-only open: %v", err)
	}
	f.Close()
	if b, err := os.ReadFile(outside); err != nil || string(b) != "keep me" {
		t.Fatalf("the file outside was touched: %q %v", b, err)
	}
	fresh := filepath.Join(root, "t-0", "new")
	if f, err := fs.OpenFile(fresh, os.O_RDWR|os.O_CREATE|os.O_TRUNC, 0o644); err != nil {
		t.Fatalf("create: %v", err)
	} else {
		f.Close()
	}
}

// TestBeneathRelativeRoot: a relative root and relative names are the same
// files as their absolute spellings, also through a BudgetFS reopening with
// a budget of one descriptor.
func TestBeneathRelativeRoot(t *testing.T) {
	top := t.TempDir()
	t.Chdir(top)
	must(t, os.MkdirAll("data/t-0", 0o755))
	fs := NewBudgetFS(Beneath("data"), 1)
	var files []File
	for i := 0; i < 4; i++ {
		name := filepath.Join("data", "t-0", string(rune('a'+i)))
		if i%2 == 1 {
			name = filepath.Join(top, name)
		}
		f, err := fs.OpenFile(name, os.O_RDWR|os.O_CREATE, 0o644)
		if err != nil {
			t.Fatalf("open %s: %v", name, err)
		}
		files = append(files, f)
	}
	for round := 0; round < 3; round++ {
		for i, f := range files {
			if _, err := f.WriteAt([]byte{byte('0' + round)}, int64(round)); err != nil {
				t.Fatalf("write %d after eviction: %v", i, err)
			}
		}
	}
	for _, f := range files {
		f.Close()
	}
	if b, err := os.ReadFile(filepath.Join(top, "data/t-0/d")); err != nil || string(b) != "012" {
		t.Fatalf("data/t-0/d: %q %v", b, err)
	}
	if _, err := fs.Open("elsewhere"); !errors.Is(err, ErrOutside) {
		t.Fatalf("a relative name outside the root: %v", err)
	}
}
