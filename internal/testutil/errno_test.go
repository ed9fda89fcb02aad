package testutil

import (
	"errors"
	"fmt"
	"os"
	"syscall"
	"testing"
)

// TestErrno: nil is 0, a wrapped errno is found, and an error without one
// is NotErrno, never 0 (which would read as success).
func TestErrno(t *testing.T) {
	wrapped := &os.PathError{Op: "open", Path: "/x", Err: syscall.ENOENT}
	cases := []struct {
		err  error
		want syscall.Errno
	}{
		{nil, 0},
		{syscall.EIO, syscall.EIO},
		{fmt.Errorf("ctx: %w", wrapped), syscall.ENOENT},
		{errors.New("no errno here"), NotErrno},
	}
	for _, c := range cases {
		if got := Errno(c.err); got != c.want {
			t.Errorf("Errno(%v) = %d, want %d", c.err, got, c.want)
		}
	}
}
