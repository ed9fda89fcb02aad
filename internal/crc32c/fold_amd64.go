package crc32c

import "golang.org/x/sys/cpu"

// useFold is whether this CPU (and its OS) runs fold.
var useFold = cpu.X86.HasAVX512F && cpu.X86.HasAVX512VPCLMULQDQ &&
	cpu.X86.HasPCLMULQDQ && cpu.X86.HasAVX && cpu.X86.HasSSE42

// fold returns Update(crc, p) for len(p) >= 256, a multiple of 64.
//
//go:noescape
func fold(crc uint32, p []byte, keys *[6]uint64) uint32
