package crc32c

import (
	"hash/crc32"
	"syscall"
	"testing"
)

// TestReadsOnlyTheSlice checksums inputs that end at, or start at, a page
// no access is allowed to: a load past either end of p faults.
func TestReadsOnlyTheSlice(t *testing.T) {
	const page = 4096
	mem, err := syscall.Mmap(-1, 0, 4*page, syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_ANON|syscall.MAP_PRIVATE)
	if err != nil {
		t.Fatal(err)
	}
	defer syscall.Munmap(mem)
	for _, guard := range [][]byte{mem[:page], mem[3*page:]} {
		if err := syscall.Mprotect(guard, syscall.PROT_NONE); err != nil {
			t.Fatal(err)
		}
	}
	data := mem[page : 3*page]
	for i := range data {
		data[i] = byte(i*7 + i>>8)
	}
	for n := 0; n <= len(data); n += 1 + n/16 {
		for _, p := range [][]byte{data[len(data)-n:], data[:n]} {
			if got, want := Update(1, p), crc32.Update(1, table, p); got != want {
				t.Fatalf("%d bytes: %08x, hash/crc32 %08x", n, got, want)
			}
		}
	}
}
