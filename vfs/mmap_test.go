package vfs

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"testing"
)

// TestMap maps a file's bytes at offsets on and off a page boundary,
// directly and through a BudgetFS whose descriptor is closed after.
func TestMap(t *testing.T) {
	path := filepath.Join(t.TempDir(), "f")
	data := bytes.Repeat([]byte("0123456789abcdef"), 3000)
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	c := NewBudgetFS(Default, 4)
	for _, fs := range []FS{Default, c} {
		f, err := fs.Open(path)
		if err != nil {
			t.Fatal(err)
		}
		for _, off := range []int64{0, 1, 4095, 4096, 10_000} {
			m, err := Map(f, off, int64(len(data))-off)
			if err != nil {
				t.Fatalf("map at %d: %v", off, err)
			}
			m.Populate(100, len(m.Data))
			if !bytes.Equal(m.Data, data[off:]) {
				t.Fatalf("mapping at %d holds other bytes", off)
			}
			if err := m.Unmap(); err != nil {
				t.Fatal(err)
			}
		}
		f.Close()
	}
}

// TestMapNotMappable: an in-memory file cannot be mapped.
func TestMapNotMappable(t *testing.T) {
	fs := NewCrashFS()
	f, err := fs.Create("f")
	if err != nil {
		t.Fatal(err)
	}
	f.Write([]byte("data"))
	if _, err := Map(f, 0, 4); !errors.Is(err, ErrNotMappable) {
		t.Fatalf("map of an in-memory file: %v, want ErrNotMappable", err)
	}
}
