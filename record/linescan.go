package record

import "slices"

// ScanLines appends to ends the index in b of each '\n' of b, plus off, in
// order, and reports whether every other byte of b is jsonSafe (printable
// ASCII other than '"' and '\\'): then each line of b renders in JSON as
// itself in quotes. It reads b once, 32 bytes at a time where the CPU
// allows. b must be shorter than 2 GiB less off.
func ScanLines(ends []int32, b []byte, off int32) ([]int32, bool) {
	plain := true
	for len(b) > 0 {
		// a block at a time, so ends grows by at most one block's worth
		n := min(len(b), scanBlock)
		ends = slices.Grow(ends, n)
		var ok bool
		ends, ok = scanBlockOf(ends, b[:n], off)
		plain = plain && ok
		b, off = b[n:], off+int32(n)
	}
	return ends, plain
}

// scanBlock is the most bytes ScanLines hands scanBlockOf at once.
const scanBlock = 16 << 10

// scanBlockOf is ScanLines of b, whose ends has room for len(b) more.
func scanBlockOf(ends []int32, b []byte, off int32) ([]int32, bool) {
	plain := true
	if whole := len(b) &^ 31; useScanAVX2 && whole > 0 {
		k, bad := scanAVX2(b[:whole], ends[len(ends):len(ends)+whole], off)
		ends, plain = ends[:len(ends)+k], bad == 0
		b, off = b[whole:], off+int32(whole)
	}
	ends, ok := scanBytes(ends, b, off)
	return ends, plain && ok
}

// scanBytes is ScanLines a byte at a time, where ends has room for
// len(b) more.
func scanBytes(ends []int32, b []byte, off int32) ([]int32, bool) {
	plain := true
	for i, c := range b {
		if c == '\n' {
			ends = append(ends, off+int32(i))
		} else if !jsonSafe[c] {
			plain = false
		}
	}
	return ends, plain
}
