//go:build !amd64

package crc32c

// useFold is false: fold is amd64 assembly.
var useFold = false

func fold(crc uint32, p []byte, keys *[6]uint64) uint32 {
	panic("crc32c: no folding on this architecture")
}
