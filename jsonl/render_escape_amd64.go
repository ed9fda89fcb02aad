package jsonl

import "golang.org/x/sys/cpu"

// useEscapeSSSE3 is whether this CPU runs escapeSSSE3.
var useEscapeSSSE3 = cpu.X86.HasSSSE3 && cpu.X86.HasPOPCNT

// escapeSSSE3 writes the JSON string body of a prefix of s, 16 bytes at a
// time, at the start of o: it stops at the first 16 bytes holding a byte
// below 0x20 or above 0x7f, at the last 16 bytes of s, or when o has less
// than 32 bytes of room, and returns how much of s it read and of o it
// wrote. It may write past n, up to 32 bytes beyond it.
//
//go:noescape
func escapeSSSE3(o []byte, s string) (i, n int)
