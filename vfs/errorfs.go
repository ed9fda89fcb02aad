package vfs

import (
	"errors"
	"io"
	"os"
	"time"
)

// Op is a kind of filesystem operation that an Injector can fail.
type Op int

// The operations an ErrorFS counts.
const (
	OpWrite    Op = iota // File.Write, File.WriteAt
	OpSync               // File.Sync
	OpSyncDir            // FS.SyncDir
	OpRename             // FS.Rename
	OpCreate             // FS.Create or FS.OpenFile with os.O_CREATE of a missing file, FS.MkdirAll
	OpRemove             // FS.Remove, FS.RemoveAll
	OpTruncate           // File.Truncate
	OpRead               // File.ReadAt
	numOps
)

// Injector decides, before each operation of an ErrorFS, whether it fails.
// A non-nil error fails the operation; for OpWrite, short asks for a short
// write: about half of the bytes are written before the error is returned
// (a disk filling up).
type Injector interface {
	MaybeFail(op Op, name string) (short bool, err error)
}

// NewErrorFS wraps inner so that every counted operation first asks inj.
func NewErrorFS(inner FS, inj Injector) FS {
	return &errorFS{inner: inner, inj: inj}
}

type errorFS struct {
	inner FS
	inj   Injector
}

func (e *errorFS) fail(op Op, name string) error {
	_, err := e.inj.MaybeFail(op, name)
	return err
}

func (e *errorFS) OpenFile(name string, flag int, perm os.FileMode) (File, error) {
	if flag&os.O_CREATE != 0 && e.missing(name) {
		if err := e.fail(OpCreate, name); err != nil {
			return nil, &os.PathError{Op: "open", Path: name, Err: err}
		}
	}
	f, err := e.inner.OpenFile(name, flag, perm)
	if err != nil {
		return nil, err
	}
	return &errorFile{File: f, inj: e.inj}, nil
}

// missing reports whether name does not exist yet (an open with O_CREATE
// then counts as a create).
func (e *errorFS) missing(name string) bool {
	_, err := e.inner.Stat(name)
	return errors.Is(err, os.ErrNotExist)
}

func (e *errorFS) Create(name string) (File, error) {
	return e.OpenFile(name, os.O_RDWR|os.O_CREATE|os.O_TRUNC, 0o644)
}

func (e *errorFS) Open(name string) (File, error) { return e.OpenFile(name, os.O_RDONLY, 0) }

func (e *errorFS) Remove(name string) error {
	if err := e.fail(OpRemove, name); err != nil {
		return &os.PathError{Op: "remove", Path: name, Err: err}
	}
	return e.inner.Remove(name)
}

func (e *errorFS) RemoveAll(name string) error {
	if err := e.fail(OpRemove, name); err != nil {
		return &os.PathError{Op: "removeall", Path: name, Err: err}
	}
	return e.inner.RemoveAll(name)
}

func (e *errorFS) Rename(oldname, newname string) error {
	if err := e.fail(OpRename, oldname); err != nil {
		return &os.LinkError{Op: "rename", Old: oldname, New: newname, Err: err}
	}
	return e.inner.Rename(oldname, newname)
}

func (e *errorFS) MkdirAll(name string, perm os.FileMode) error {
	if err := e.fail(OpCreate, name); err != nil {
		return &os.PathError{Op: "mkdir", Path: name, Err: err}
	}
	return e.inner.MkdirAll(name, perm)
}

func (e *errorFS) SyncDir(name string) error {
	if err := e.fail(OpSyncDir, name); err != nil {
		return &os.PathError{Op: "fsync", Path: name, Err: err}
	}
	return e.inner.SyncDir(name)
}

// OpenSyncAll's handle asks the injector (OpSyncDir, with the directory's
// name) before each Sync.
func (e *errorFS) OpenSyncAll(name string) (SyncAll, error) {
	h, err := e.inner.OpenSyncAll(name)
	if err != nil {
		return nil, err
	}
	return errorSyncAll{h, e, name}, nil
}

type errorSyncAll struct {
	SyncAll
	e    *errorFS
	name string
}

func (h errorSyncAll) Sync() error {
	if err := h.e.fail(OpSyncDir, h.name); err != nil {
		return &os.PathError{Op: "syncfs", Path: h.name, Err: err}
	}
	return h.SyncAll.Sync()
}

func (e *errorFS) ReadDir(name string) ([]os.DirEntry, error) { return e.inner.ReadDir(name) }
func (e *errorFS) Stat(name string) (os.FileInfo, error)      { return e.inner.Stat(name) }
func (e *errorFS) Lock(name string) (io.Closer, error)        { return e.inner.Lock(name) }
func (e *errorFS) Chtimes(name string, atime, mtime time.Time) error {
	return e.inner.Chtimes(name, atime, mtime)
}

// errorFile asks the injector before writes, syncs, truncations and reads.
type errorFile struct {
	File
	inj Injector
}

func (f *errorFile) Write(p []byte) (int, error) {
	short, err := f.inj.MaybeFail(OpWrite, f.Name())
	if err == nil {
		return f.File.Write(p)
	}
	n := 0
	if short && len(p) > 1 {
		n, _ = f.File.Write(p[:len(p)/2])
	}
	return n, &os.PathError{Op: "write", Path: f.Name(), Err: err}
}

func (f *errorFile) WriteAt(p []byte, off int64) (int, error) {
	short, err := f.inj.MaybeFail(OpWrite, f.Name())
	if err == nil {
		return f.File.WriteAt(p, off)
	}
	n := 0
	if short && len(p) > 1 {
		n, _ = f.File.WriteAt(p[:len(p)/2], off)
	}
	return n, &os.PathError{Op: "write", Path: f.Name(), Err: err}
}

// Allocate reserves blocks through the wrapped file; it is not counted.
func (f *errorFile) Allocate(off, n int64) error { return Allocate(f.File, off, n) }

func (f *errorFile) Sync() error {
	if _, err := f.inj.MaybeFail(OpSync, f.Name()); err != nil {
		return &os.PathError{Op: "fsync", Path: f.Name(), Err: err}
	}
	return f.File.Sync()
}

func (f *errorFile) Truncate(size int64) error {
	if _, err := f.inj.MaybeFail(OpTruncate, f.Name()); err != nil {
		return &os.PathError{Op: "truncate", Path: f.Name(), Err: err}
	}
	return f.File.Truncate(size)
}

func (f *errorFile) ReadAt(p []byte, off int64) (int, error) {
	if _, err := f.inj.MaybeFail(OpRead, f.Name()); err != nil {
		return 0, &os.PathError{Op: "read", Path: f.Name(), Err: err}
	}
	return f.File.ReadAt(p, off)
}
