package jsonl

import "encoding/binary"

// Word-at-a-time tests for the JSON fast path: most values are printable
// ASCII, which is copied into a JSON string as it is.

const (
	lo7  = 0x0101010101010101
	hi7  = 0x8080808080808080
	quot = 0x2222222222222222
	bsl  = 0x5c5c5c5c5c5c5c5c
)

// plainASCII reports whether b is non-nil printable ASCII without '"' or
// '\\' (its JSON string is b in quotes), 32 bytes at a time.
func plainASCII(b []byte) bool {
	if b == nil {
		return false
	}
	for len(b) >= 32 {
		w0, w1 := binary.LittleEndian.Uint64(b), binary.LittleEndian.Uint64(b[8:])
		w2, w3 := binary.LittleEndian.Uint64(b[16:]), binary.LittleEndian.Uint64(b[24:])
		if (w0|w1|w2|w3)&hi7 != 0 || safeASCII(w0)&safeASCII(w1)&safeASCII(w2)&safeASCII(w3) != hi7 {
			return false
		}
		b = b[32:]
	}
	for len(b) >= 8 {
		if w := binary.LittleEndian.Uint64(b); w&hi7 != 0 || safeASCII(w) != hi7 {
			return false
		}
		b = b[8:]
	}
	for _, c := range b {
		if !jsonSafe[c] {
			return false
		}
	}
	return true
}

// safeASCII has the high bit of each byte of x set where that byte is
// safe, for x without high bits (exact, no carries between bytes): b+0x60
// reaches 0x80 when b >= 0x20, and (b^q)+0x7f when b != q.
func safeASCII(x uint64) uint64 {
	q, s := x^quot, x^bsl
	return (x + 0x60*lo7) & (q + 0x7f*lo7) & (s + 0x7f*lo7) & hi7
}
