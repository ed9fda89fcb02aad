package vfs

import (
	"os"

	"golang.org/x/sys/unix"
)

// Allocator is a File that can reserve disk blocks without changing its
// size.
type Allocator interface {
	Allocate(off, n int64) error
}

// Allocate reserves the blocks of f's bytes [off, off+n) without changing
// its size (fallocate with FALLOC_FL_KEEP_SIZE), so later writes there skip
// the filesystem's delayed block reservation, which makes large write(2)s
// into them faster on ext4. Files of this package's in-memory filesystems
// do nothing.
// Truncate(size) releases what lies past the end.
func Allocate(f File, off, n int64) error {
	switch f := f.(type) {
	case Allocator:
		return f.Allocate(off, n)
	case *os.File:
		rc, err := f.SyscallConn()
		if err != nil {
			return err
		}
		var ferr error
		if err := rc.Control(func(fd uintptr) {
			ferr = unix.Fallocate(int(fd), unix.FALLOC_FL_KEEP_SIZE, off, n)
		}); err != nil {
			return err
		}
		if ferr != nil {
			return &os.PathError{Op: "fallocate", Path: f.Name(), Err: ferr}
		}
	}
	return nil
}

// Allocate reserves blocks through the underlying file (see Allocate).
func (cf *budgetFile) Allocate(off, n int64) error {
	f, err := cf.acquire("allocate")
	if err != nil {
		return err
	}
	defer cf.release()
	return Allocate(f, off, n)
}
