package testutil

import (
	"testing"

	"golang.org/x/sys/unix"
)

// GuardedPage maps two pages and makes the second inaccessible, so that a read
// past the end of the first page faults. It returns the first page.
func GuardedPage(t *testing.T) []byte {
	t.Helper()
	page := unix.Getpagesize()
	m, err := unix.Mmap(-1, 0, 3*page, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_PRIVATE|unix.MAP_ANON)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { unix.Munmap(m) })
	for _, g := range [][]byte{m[:page], m[2*page:]} {
		if err := unix.Mprotect(g, unix.PROT_NONE); err != nil {
			t.Fatal(err)
		}
	}
	return m[page : 2*page : 2*page]
}
