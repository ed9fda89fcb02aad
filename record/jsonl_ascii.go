package record

import "encoding/binary"

// Word-at-a-time tests for the JSON fast path: most values are printable
// ASCII, which is copied into a JSON string as it is.

const (
	lo7  = 0x0101010101010101
	hi7  = 0x8080808080808080
	quot = 0x2222222222222222
	bsl  = 0x5c5c5c5c5c5c5c5c
)

func load64(s string) uint64 {
	return uint64(s[0]) | uint64(s[1])<<8 | uint64(s[2])<<16 | uint64(s[3])<<24 |
		uint64(s[4])<<32 | uint64(s[5])<<40 | uint64(s[6])<<48 | uint64(s[7])<<56
}

// special has a high bit set where a byte of x may be non-ASCII, a control
// byte, a quote or a backslash (false positives only cost the slow path).
func special(x uint64) uint64 {
	q, s := x^quot, x^bsl
	return (x & hi7) | ((x - 0x20*lo7) & ^x & hi7) | ((q - lo7) & ^q & hi7) | ((s - lo7) & ^s & hi7)
}

// plainASCII reports whether b is non-nil printable ASCII without '"' or
// '\\' (its JSON string is b in quotes), 32 bytes at a time.
func plainASCII(b []byte) bool {
	if b == nil {
		return false
	}
	for len(b) >= 32 {
		w0, w1 := binary.LittleEndian.Uint64(b), binary.LittleEndian.Uint64(b[8:])
		w2, w3 := binary.LittleEndian.Uint64(b[16:]), binary.LittleEndian.Uint64(b[24:])
		if special(w0)|special(w1)|special(w2)|special(w3) != 0 {
			return false
		}
		b = b[32:]
	}
	for len(b) >= 8 {
		if special(binary.LittleEndian.Uint64(b)) != 0 {
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
