package vfs

import (
	"errors"
	"io"
	"os"
	"syscall"
	"testing"
)

func TestErrorFSCreateCountsOnlyNewFiles(t *testing.T) {
	mem := NewCrashFS()
	writeFile(t, mem, "/old", "x", false)
	inj := FailNth(OpCreate, 1, syscall.ENOSPC)
	fs := NewErrorFS(mem, inj)
	f, err := fs.OpenFile("/old", os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		t.Fatalf("reopening an existing file counted as a create: %v", err)
	}
	f.Close()
	if _, err := fs.OpenFile("/new", os.O_RDWR|os.O_CREATE, 0o644); !errors.Is(err, syscall.ENOSPC) {
		t.Fatalf("first create: %v", err)
	}
	if _, err := mem.Stat("/new"); !errors.Is(err, os.ErrNotExist) {
		t.Fatal("failed create left a file")
	}
}

func TestMemFileRead(t *testing.T) {
	mem := NewCrashFS()
	writeFile(t, mem, "/f", "hello", false)
	f, _ := mem.Open("/f")
	b, err := io.ReadAll(f.(io.Reader))
	if err != nil || string(b) != "hello" {
		t.Fatalf("%q %v", b, err)
	}
}

func TestErrorFSAnyOpPersist(t *testing.T) {
	mem := NewCrashFS()
	inj := FailNth(OpAny, 3, syscall.EIO)
	inj.Persist = true
	fs := NewErrorFS(mem, inj)
	f, err := fs.Create("/f") // op 1: create
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.Write([]byte("a")); err != nil { // op 2
		t.Fatal(err)
	}
	if err := f.Sync(); !errors.Is(err, syscall.EIO) { // op 3
		t.Fatalf("third op: %v", err)
	}
	if err := fs.Rename("/f", "/g"); !errors.Is(err, syscall.EIO) { // op 4
		t.Fatalf("fourth op: %v", err)
	}
}
