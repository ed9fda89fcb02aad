package vfs

import (
	"errors"
	"os"

	"golang.org/x/sys/unix"
)

// ErrNotMappable is Map's error for a file it cannot map (the in-memory
// and fault-injecting files of this package): read it instead.
var ErrNotMappable = errors.New("file cannot be mapped")

// Mapper is a File whose bytes can be mapped into memory read-only.
type Mapper interface {
	Map(off, n int64) (*Mapping, error)
}

// Mapping is a read-only shared mapping of a file's bytes. Touching a
// byte the file no longer holds (it shrank since) raises SIGBUS, which
// crashes the program unless the goroutine asked for a panic instead
// (runtime/debug.SetPanicOnFault).
type Mapping struct {
	Data []byte // the file's bytes [off, off+n)
	mem  []byte // the whole mapping, from the page holding off
}

// Map maps f's bytes [off, off+n), n > 0, read-only (mmap MAP_SHARED).
func Map(f File, off, n int64) (*Mapping, error) {
	switch f := f.(type) {
	case Mapper:
		return f.Map(off, n)
	case *os.File:
		return mapFile(f, off, n)
	}
	return nil, ErrNotMappable
}

func mapFile(f *os.File, off, n int64) (*Mapping, error) {
	rc, err := f.SyscallConn()
	if err != nil {
		return nil, err
	}
	lead := off % int64(os.Getpagesize())
	var mem []byte
	var merr error
	if err := rc.Control(func(fd uintptr) {
		mem, merr = unix.Mmap(int(fd), off-lead, int(lead+n), unix.PROT_READ, unix.MAP_SHARED)
	}); err != nil {
		return nil, err
	}
	if merr != nil {
		return nil, &os.PathError{Op: "mmap", Path: f.Name(), Err: merr}
	}
	return &Mapping{Data: mem[lead:], mem: mem}, nil
}

// Populate maps the pages of Data[from:to] ahead of their use
// (MADV_POPULATE_READ), so touching them takes no page faults. It is
// advice: pages it could not map fault in when touched.
func (m *Mapping) Populate(from, to int) {
	lead := len(m.mem) - len(m.Data)
	start := (lead + from) &^ (os.Getpagesize() - 1)
	_ = unix.Madvise(m.mem[start:lead+to], unix.MADV_POPULATE_READ)
}

// Unmap releases the mapping; its bytes must not be touched after.
func (m *Mapping) Unmap() error { return unix.Munmap(m.mem) }

// Map maps through the underlying file (see Map); the mapping outlives the
// descriptor.
func (cf *budgetFile) Map(off, n int64) (*Mapping, error) {
	f, err := cf.acquire("map")
	if err != nil {
		return nil, err
	}
	defer cf.release()
	return Map(f, off, n)
}
