package record

import "slices"

// ScanLines appends to ends the index in b of each '\n' of b, plus off, in
// order, and to quotes, for each of them, the number of '"' and '\\' bytes
// of b before it, plus q. It returns both, q plus the number of those
// bytes in all of b, and whether every byte of b other than '\n' is
// printable ASCII (0x20 to 0x7f): then each line of b renders in JSON as
// itself in quotes with a '\\' added before each '"' and '\\'. It reads b
// once, 32 bytes at a time where the CPU allows. b must be shorter than
// 2 GiB less off.
func ScanLines(ends, quotes []int32, b []byte, off, q int32) ([]int32, []int32, int32, bool) {
	ascii := true
	for len(b) > 0 {
		// a block at a time, so ends and quotes grow by at most one
		// block's worth
		n := min(len(b), scanBlock)
		ends, quotes = slices.Grow(ends, n), slices.Grow(quotes, n)
		var ok bool
		ends, quotes, q, ok = scanBlockOf(ends, quotes, b[:n], off, q)
		ascii = ascii && ok
		b, off = b[n:], off+int32(n)
	}
	return ends, quotes, q, ascii
}

// scanBlock is the most bytes ScanLines hands scanBlockOf at once.
const scanBlock = 16 << 10

// scanBlockOf is ScanLines of b, where ends and quotes have room for
// len(b) more.
func scanBlockOf(ends, quotes []int32, b []byte, off, q int32) ([]int32, []int32, int32, bool) {
	ascii := true
	if whole := len(b) &^ 31; useScanAVX2 && whole > 0 {
		k, bad, qend := scanAVX2(b[:whole], ends[len(ends):len(ends)+whole], quotes[len(quotes):len(quotes)+whole], off, q)
		ends, quotes, q, ascii = ends[:len(ends)+k], quotes[:len(quotes)+k], qend, bad == 0
		b, off = b[whole:], off+int32(whole)
	}
	ends, quotes, q, ok := scanBytes(ends, quotes, b, off, q)
	return ends, quotes, q, ascii && ok
}

// scanBytes is ScanLines a byte at a time, where ends and quotes have
// room for len(b) more.
func scanBytes(ends, quotes []int32, b []byte, off, q int32) ([]int32, []int32, int32, bool) {
	ascii := true
	for i, c := range b {
		switch {
		case c == '\n':
			ends, quotes = append(ends, off+int32(i)), append(quotes, q)
		case c == '"' || c == '\\':
			q++
		case c < 0x20 || c >= utf8RuneSelf:
			ascii = false
		}
	}
	return ends, quotes, q, ascii
}

// utf8RuneSelf is utf8.RuneSelf: bytes from it on are not ASCII.
const utf8RuneSelf = 0x80
