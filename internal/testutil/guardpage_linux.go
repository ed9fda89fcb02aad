package testutil

import (
	"iter"
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

// GuardedSlices returns, over a GuardedPage, the slices of every length
// 0..maxLen that end at the page's end, each followed by the one of the
// same length that starts at the page's start: a read past either end of
// a slice faults. The bytes are the caller's to fill; the sequence may be
// ranged over again (the same page).
func GuardedSlices(t *testing.T, maxLen int) iter.Seq[[]byte] {
	p := GuardedPage(t)
	return func(yield func([]byte) bool) {
		for n := 0; n <= maxLen; n++ {
			if !yield(p[len(p)-n:]) || !yield(p[:n:n]) {
				return
			}
		}
	}
}
