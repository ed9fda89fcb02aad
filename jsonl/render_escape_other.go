//go:build !amd64

package jsonl

// useEscapeSSSE3 is false: escapeSSSE3 is amd64 assembly.
var useEscapeSSSE3 = false

func escapeSSSE3(o []byte, s string) (i, n int) {
	panic("record: no SSSE3 JSON escaping on this architecture")
}
