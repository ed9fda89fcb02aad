package jsonl

import "unsafe"

// unsafeString views b as a string without copying. Only for reading b
// while it is not modified (JSON rendering).
func unsafeString(b []byte) string {
	return unsafe.String(unsafe.SliceData(b), len(b))
}
