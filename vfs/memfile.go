package vfs

import (
	"errors"
	"io"
	"os"
	"path"
	"time"
)

// memFile is an open file of a CrashFS.
type memFile struct {
	fs     *CrashFS
	n      *node
	name   string
	flag   int
	pos    int64 // for Write (guarded by fs.mu)
	closed bool
}

var errClosed = errors.New("file already closed")

func (f *memFile) Name() string { return f.name }

func (f *memFile) writable() bool { return f.flag&(os.O_WRONLY|os.O_RDWR) != 0 }

// check reports an error for a closed file or, if write, a read-only one.
// REQUIRES: fs.mu held.
func (f *memFile) check(op string, write bool) error {
	if f.closed {
		return pathErr(op, f.name, errClosed)
	}
	if f.n.dir && write {
		return pathErr(op, f.name, errors.New("is a directory"))
	}
	if write && !f.writable() {
		return pathErr(op, f.name, os.ErrPermission)
	}
	return nil
}

// checkAt is check for an operation at offset off, which may not be
// negative. REQUIRES: fs.mu held.
func (f *memFile) checkAt(op string, write bool, off int64) error {
	if err := f.check(op, write); err != nil {
		return err
	}
	if off < 0 {
		return pathErr(op, f.name, os.ErrInvalid)
	}
	return nil
}

func (f *memFile) ReadAt(p []byte, off int64) (int, error) {
	f.fs.mu.Lock()
	defer f.fs.mu.Unlock()
	if err := f.checkAt("read", false, off); err != nil {
		return 0, err
	}
	if off >= int64(len(f.n.data)) {
		return 0, io.EOF
	}
	n := copy(p, f.n.data[off:])
	if n < len(p) {
		return n, io.EOF
	}
	return n, nil
}

// Read reads from the file position (not part of File; for io.Reader users).
func (f *memFile) Read(p []byte) (int, error) {
	f.fs.mu.Lock()
	defer f.fs.mu.Unlock()
	if err := f.check("read", false); err != nil {
		return 0, err
	}
	if f.pos >= int64(len(f.n.data)) {
		return 0, io.EOF
	}
	n := copy(p, f.n.data[f.pos:])
	f.pos += int64(n)
	return n, nil
}

func (f *memFile) WriteAt(p []byte, off int64) (int, error) {
	f.fs.mu.Lock()
	defer f.fs.mu.Unlock()
	if err := f.checkAt("write", true, off); err != nil {
		return 0, err
	}
	f.writeAt(p, off)
	return len(p), nil
}

// writeAt writes p at off, growing the file. REQUIRES: fs.mu held.
func (f *memFile) writeAt(p []byte, off int64) {
	if end := off + int64(len(p)); end > int64(len(f.n.data)) {
		f.n.data = grow(f.n.data, end)
	}
	copy(f.n.data[off:], p)
	f.n.mtime = f.fs.now()
}

// grow extends data with zeros to size, amortizing copies.
func grow(data []byte, size int64) []byte {
	if size <= int64(cap(data)) {
		old := len(data)
		data = data[:size]
		clear(data[old:])
		return data
	}
	nd := make([]byte, size, max(size, int64(cap(data))*2))
	copy(nd, data)
	return nd
}

func (f *memFile) Write(p []byte) (int, error) {
	f.fs.mu.Lock()
	defer f.fs.mu.Unlock()
	if err := f.check("write", true); err != nil {
		return 0, err
	}
	if f.flag&os.O_APPEND != 0 {
		f.pos = int64(len(f.n.data))
	}
	f.writeAt(p, f.pos)
	f.pos += int64(len(p))
	return len(p), nil
}

func (f *memFile) Close() error {
	f.fs.mu.Lock()
	defer f.fs.mu.Unlock()
	if f.closed {
		return pathErr("close", f.name, errClosed)
	}
	f.closed = true
	return nil
}

// Sync makes the file's current data durable.
func (f *memFile) Sync() error {
	f.fs.mu.Lock()
	defer f.fs.mu.Unlock()
	if err := f.check("fsync", false); err != nil {
		return err
	}
	if !f.n.dir {
		f.n.synced = append(f.n.synced[:0:0], f.n.data...)
	}
	return nil
}

func (f *memFile) Truncate(size int64) error {
	f.fs.mu.Lock()
	defer f.fs.mu.Unlock()
	if err := f.check("truncate", true); err != nil {
		return err
	}
	if size < 0 {
		return pathErr("truncate", f.name, os.ErrInvalid)
	}
	if size <= int64(len(f.n.data)) {
		f.n.data = f.n.data[:size]
	} else {
		f.n.data = grow(f.n.data, size)
	}
	f.n.mtime = f.fs.now()
	return nil
}

func (f *memFile) Stat() (os.FileInfo, error) {
	f.fs.mu.Lock()
	defer f.fs.mu.Unlock()
	if f.closed {
		return nil, pathErr("stat", f.name, errClosed)
	}
	return f.n.info(path.Base(path.Clean("/" + f.name))), nil
}

// info describes the node. REQUIRES: fs.mu held.
func (n *node) info(name string) os.FileInfo {
	return memInfo{name: name, size: int64(len(n.data)), mode: n.mode, mtime: n.mtime, dir: n.dir}
}

type memInfo struct {
	name  string
	size  int64
	mode  os.FileMode
	mtime time.Time
	dir   bool
}

func (i memInfo) Name() string       { return i.name }
func (i memInfo) Size() int64        { return i.size }
func (i memInfo) Mode() os.FileMode  { return i.mode }
func (i memInfo) ModTime() time.Time { return i.mtime }
func (i memInfo) IsDir() bool        { return i.dir }
func (i memInfo) Sys() any           { return nil }

var _ FS = (*CrashFS)(nil)
