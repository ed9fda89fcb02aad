package testutil

import (
	"errors"
	"syscall"
)

// NotErrno is what Errno returns for an error that carries no errno; it is
// no errno a system call returns, so it never reads as success or as a
// docs/spec.md §8 code.
const NotErrno = syscall.Errno(0xffff)

// Errno returns the errno err carries (errors.As): 0 for nil, NotErrno for
// an error without one.
func Errno(err error) syscall.Errno {
	var en syscall.Errno
	if errors.As(err, &en) {
		return en
	}
	if err != nil {
		return NotErrno
	}
	return 0
}
