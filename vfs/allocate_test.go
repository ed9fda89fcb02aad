package vfs

import (
	"errors"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/partfs/partfs/internal/testutil"
)

// Allocate reserves blocks past the end without changing the size, through
// a BudgetFS too; Truncate(size) gives them back.
func TestAllocate(t *testing.T) {
	for name, fs := range map[string]FS{"os": Default, "budget": NewBudgetFS(Default, 4)} {
		t.Run(name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "f")
			f, err := fs.Create(path)
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			f.WriteAt(make([]byte, 4096), 0)
			err = Allocate(f, 4096, 1<<20)
			if errors.Is(err, syscall.EOPNOTSUPP) {
				t.Skip(err)
			}
			if err != nil {
				t.Fatal(err)
			}
			if fi, _ := f.Stat(); fi.Size() != 4096 {
				t.Fatalf("size %d after Allocate, want 4096", fi.Size())
			}
			if got := testutil.AllocatedBytes(t, path); got < 4096+1<<20 {
				t.Fatalf("%d bytes allocated, want >= %d", got, 4096+1<<20)
			}
			if err := f.Truncate(4096); err != nil {
				t.Fatal(err)
			}
			if got := testutil.AllocatedBytes(t, path); got > 4096 {
				t.Fatalf("%d bytes allocated after Truncate, want 4096", got)
			}
		})
	}
}

// Files of the in-memory filesystems ignore Allocate.
func TestAllocateInMemory(t *testing.T) {
	fs := NewCrashFS()
	f, err := fs.Create("/f")
	if err != nil {
		t.Fatal(err)
	}
	if err := Allocate(f, 0, 1<<20); err != nil {
		t.Fatal(err)
	}
	if fi, _ := f.Stat(); fi.Size() != 0 {
		t.Fatalf("size %d, want 0", fi.Size())
	}
}
