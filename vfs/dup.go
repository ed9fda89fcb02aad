package vfs

import (
	"errors"
	"os"

	"golang.org/x/sys/unix"
)

// ErrNoDescriptor is the error of DupFile for a File that is not an
// operating-system file.
var ErrNoDescriptor = errors.New("not an operating-system file")

// DupFile returns a new *os.File of the open file f (a descriptor of its
// own, close-on-exec, which the caller closes): for handing the file to
// the kernel. Files of the operating system's FS, of Beneath and of a
// BudgetFS over either have one; other Files (in memory, crash clones,
// error injection) give ErrNoDescriptor.
func DupFile(f File) (*os.File, error) {
	switch f := f.(type) {
	case *os.File:
		return dupOS(f)
	case *budgetFile:
		inner, err := f.acquire("dup")
		if err != nil {
			return nil, err
		}
		defer f.release()
		return DupFile(inner)
	}
	return nil, ErrNoDescriptor
}

func dupOS(f *os.File) (*os.File, error) {
	sc, err := f.SyscallConn()
	if err != nil {
		return nil, err
	}
	nfd := -1
	cerr := sc.Control(func(fd uintptr) {
		nfd, err = unix.FcntlInt(fd, unix.F_DUPFD_CLOEXEC, 0)
	})
	if cerr != nil {
		return nil, &os.PathError{Op: "dup", Path: f.Name(), Err: cerr}
	}
	if err != nil {
		return nil, &os.PathError{Op: "dup", Path: f.Name(), Err: err}
	}
	return os.NewFile(uintptr(nfd), f.Name()), nil
}
