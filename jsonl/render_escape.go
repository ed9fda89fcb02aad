package jsonl

import (
	"encoding/binary"
	"math/bits"
	"slices"
	"unicode/utf8"
)

// The JSON string writer: a word of eight bytes at a time, each word's
// bytes to escape found with an exact byte mask and handled one set bit at
// a time, the bytes between them copied by storing the whole word again.

// maxEscape is the most one byte of a string can become in its JSON
// string: six (\u00XX for a control byte, \ufffd for a byte of invalid
// UTF-8; U+2028 is three bytes for six).
const maxEscape = 6

// wordRoom is the room in the output the word loop needs for one word:
// eight escapes and a last 8-byte store, rounded up so that a store at any
// offset masked to six bits is in bounds.
const wordRoom = 64 + 8

// escapes[c], for a byte c < 0x80 that is not copied as it is, holds the
// bytes of its escape (little-endian, at most six) with the escape's length
// in the top byte; 0 for the others (256 entries, so that a byte indexes
// it without a bounds check).
var escapes = func() (t [256]uint64) {
	for c := range utf8.RuneSelf {
		if jsonSafe[c] {
			continue
		}
		e := string(appendEscape(nil, byte(c)))
		t[c] = stringWord(e) | uint64(len(e))<<56
	}
	return t
}()

// AppendString appends s as a JSON string (s must be valid UTF-8;
// invalid bytes are replaced by U+FFFD). U+2028 and U+2029 are escaped.
// Like append it reallocates only when the result outgrows cap(dst), but
// it may use the capacity beyond the result as scratch.
func AppendString(dst []byte, s string) []byte {
	if cap(dst)-len(dst) < maxEscape*len(s)+2 {
		dst = slices.Grow(dst, int(jsonStringLen(s)))
	}
	n := len(dst)
	k, _ := putJSONString(dst[n:cap(dst)], s, false)
	return dst[:n+k]
}

// AppendValidString is AppendString of b when b is valid UTF-8; when
// not, it returns dst as it was (its spare capacity perhaps written) and
// false. Printable ASCII is copied as it is; otherwise validity is found
// in the same pass as the escaping.
func AppendValidString(dst, b []byte) ([]byte, bool) {
	if plainASCII(b) {
		dst = append(dst, '"')
		dst = append(dst, b...)
		return append(dst, '"'), true
	}
	return appendValidJSONString(dst, unsafeString(b))
}

// appendValidJSONString is AppendString of s when s is valid UTF-8;
// when not, it returns false and dst as it was (its spare capacity
// perhaps written). Validity is found while rendering where dst has room
// for any result, else with the length (stringLen) first.
func appendValidJSONString(dst []byte, s string) ([]byte, bool) {
	if cap(dst)-len(dst) < maxEscape*len(s)+2 {
		n, valid := stringLen(s)
		if !valid {
			return dst, false
		}
		dst = slices.Grow(dst, int(n))
	}
	n := len(dst)
	k, valid := putJSONString(dst[n:cap(dst)], s, true)
	if !valid {
		return dst, false
	}
	return dst[:n+k], true
}

// putJSONString writes the JSON string of s at the start of o, which has
// room for it, and returns its length and whether s is valid UTF-8 (a
// byte >= 0x80 that is one byte of input is not in a rune); with stop, it
// stops at the first byte that is not. It goes a word at a time (the last
// one overlapping the one before when len(s) is not a multiple of 8) while
// wordRoom bytes are left, and writes the rest a byte at a time, exactly.
func putJSONString(o []byte, s string, stop bool) (int, bool) {
	o[0] = '"'
	i, j, valid := 0, 1, true
	blocks := 0 // where 16-byte blocks may go on: past the one they stopped at
	if !useEscapeSSSE3 {
		blocks = len(s)
	}
	for {
		if i >= blocks && i+16 <= len(s) {
			di, dj := escapeSSSE3(o[j:], s[i:])
			i, j, blocks = i+di, j+dj, i+di+16
		}
		if i+8 > len(s) || j+wordRoom > len(o) {
			break
		}
		w := word(s[i : i+8])
		m := escapeMask(w)
		win := (*[wordRoom]byte)(o[j : j+wordRoom])
		put(win, 0, w)
		switch {
		case m == 0:
			i, j = i+8, j+8
		case w&hi7 == 0:
			i, j = i+8, j+putEscapes(win, w, m, 8)
		default:
			k := bits.TrailingZeros64(m) >> 3
			at := i + k
			var jj int
			i, jj = putSpecial(win, k, s, at)
			j += jj
			if s[at] >= utf8.RuneSelf && i == at+1 {
				if valid = false; stop {
					return 0, false
				}
			}
		}
	}
	if n := len(s) - i; n > 0 && n < 8 && len(s) >= 8 && j+wordRoom <= len(o) {
		// The last n bytes, as the top of the last word.
		if w := word(s[len(s)-8:]) >> (64 - 8*n); w&hi7 == 0 {
			win := (*[wordRoom]byte)(o[j : j+wordRoom])
			put(win, 0, w)
			i, j = len(s), j+putEscapes(win, w, escapeMask(w)&(hi7>>(64-8*n)), n)
		}
	}
	n, tailValid := putTail(o, j, s, i, stop)
	return n, valid && tailValid
}

// putTail writes the rest of the JSON string of s, from s[i] on, at o[j:]
// a byte or rune at a time, nothing beyond it, and returns its end and
// whether s[i:] is valid UTF-8 (with stop, stopping where it is not).
func putTail(o []byte, j int, s string, i int, stop bool) (int, bool) {
	valid := true
	for i < len(s) {
		if c := s[i]; jsonSafe[c] {
			o[j] = c
			i, j = i+1, j+1
			continue
		}
		out, size := specialBytes(s, i)
		if s[i] >= utf8.RuneSelf && size == 1 {
			if valid = false; stop {
				return 0, false
			}
		}
		i, j = i+size, j+copy(o[j:], out)
	}
	o[j] = '"'
	return j + 1, valid
}

// escapeMask has the high bit set in every byte of x that is not copied
// as it is (a control byte, '"', '\\', a byte >= 0x80). It is exact up to
// and including the first byte >= 0x80 (the sums carry only from such a
// byte into the bytes above it), and exact everywhere when x is ASCII.
func escapeMask(x uint64) uint64 {
	return (x | ^safeASCII(x)) & hi7
}

// putEscapes writes the n low bytes of the ASCII word w, whose bytes to
// escape are marked in m, at the start of win, where w was already stored
// once, and returns how many bytes that is. The bytes between escapes are
// w shifted down and stored again after each escape.
func putEscapes(win *[wordRoom]byte, w, m uint64, n int) int {
	p, jj := 0, 0 // the next byte of w to write, and where
	for m != 0 {
		k := bits.TrailingZeros64(m) >> 3
		m &= m - 1
		jj += k - p
		e := escapes[byte(w>>(8*k&63))]
		put(win, jj, e)
		jj += int(e >> 56)
		p = k + 1
		put(win, jj, w>>(8*p&63)) // p == 8: nothing is left, any store does
	}
	return jj + n - p
}

// putSpecial writes what s[i] (not a byte copied as it is) becomes at
// win[jj:], jj < 8, and returns the positions after it in s and win.
func putSpecial(win *[wordRoom]byte, jj int, s string, i int) (int, int) {
	if c := s[i]; c < utf8.RuneSelf {
		e := escapes[c]
		put(win, jj, e)
		return i + 1, jj + int(e>>56)
	}
	switch size := runeSize(s, i); {
	case size == 0:
		put(win, jj, escInvalid)
		return i + 1, jj + 6
	case isLineSep(s, i, size):
		put(win, jj, escLineSep|uint64('0'+s[i+2]&0xf)<<40)
		return i + 3, jj + 6
	case i+8 <= len(s):
		put(win, jj, word(s[i:i+8]))
		return i + size, jj + size
	default:
		return i + size, jj + copy(win[jj&7:], s[i:i+size])
	}
}

// specialBytes returns what the byte or rune at s[i] (not a byte copied as
// it is) becomes, and how many bytes of s that consumes.
func specialBytes(s string, i int) (string, int) {
	if c := s[i]; c < utf8.RuneSelf {
		return escapeStrings[c], 1
	}
	switch size := runeSize(s, i); {
	case size == 0:
		return `\ufffd`, 1
	case isLineSep(s, i, size) && s[i+2] == 0xa8:
		return `\u2028`, 3
	case isLineSep(s, i, size):
		return `\u2029`, 3
	default:
		return s[i : i+size], size
	}
}

// runeSize is the length of the UTF-8 encoding of a rune at s[i] (a byte
// >= 0x80), or 0 where s[i] does not start one (as utf8.DecodeRuneInString
// then returns RuneError, 1): a lead byte C2-F4 followed by the right
// number of continuation bytes 80-BF, the first of them narrower after E0
// (A0-BF, no overlong form), ED (80-9F, no surrogate), F0 (90-BF, no
// overlong form) and F4 (80-8F, nothing above U+10FFFF).
func runeSize(s string, i int) int {
	c, n := s[i], len(s)-i
	lo, hi := byte(0x80), byte(0xbf)
	switch c {
	case 0xe0:
		lo = 0xa0
	case 0xed:
		hi = 0x9f
	case 0xf0:
		lo = 0x90
	case 0xf4:
		hi = 0x8f
	}
	switch {
	case c < 0xc2 || c > 0xf4 || n < 2 || s[i+1] < lo || s[i+1] > hi:
		return 0
	case c < 0xe0:
		return 2
	case n < 3 || !continuation(s[i+2]):
		return 0
	case c < 0xf0:
		return 3
	case n < 4 || !continuation(s[i+3]):
		return 0
	}
	return 4
}

func continuation(b byte) bool { return b&0xc0 == 0x80 }

// isLineSep reports whether the rune of size bytes at s[i] is U+2028 or
// U+2029 (E2 80 A8, E2 80 A9), which are escaped.
func isLineSep(s string, i, size int) bool {
	return size == 3 && s[i] == 0xe2 && s[i+1] == 0x80 && s[i+2]|1 == 0xa9
}

// escapeShuffles[m] spreads an 8-byte half of a string, whose '"' and '\\'
// bytes are marked in the bits of m, into its JSON string (PSHUFB indexes
// into the half, 0-7, and backslashes, 8): each marked byte gets a
// backslash before it.
var escapeShuffles = func() (t [256][16]byte) {
	for m := range t {
		p := 0
		for k := range 8 {
			if m>>k&1 != 0 {
				t[m][p] = 8
				p++
			}
			t[m][p] = byte(k)
			p++
		}
	}
	return t
}()

// escInvalid and escLineSep are the escapes \ufffd and \u2028 as words
// (the sixth byte of escLineSep is the last digit, 8 or 9).
var (
	escInvalid = stringWord(`\ufffd`)
	escLineSep = stringWord(`\u202`)
)

// stringWord is the bytes of s (at most 8) as a little-endian word.
func stringWord(s string) (w uint64) {
	for k := range len(s) {
		w |= uint64(s[k]) << (8 * k)
	}
	return w
}

// escapeStrings[c] is the escape of an ASCII byte c that has one.
var escapeStrings = func() (t [utf8.RuneSelf]string) {
	for c := range t {
		if !jsonSafe[c] {
			t[c] = string(appendEscape(nil, byte(c)))
		}
	}
	return t
}()

// put stores w at win[jj&63:], little-endian (no bounds check).
func put(win *[wordRoom]byte, jj int, w uint64) {
	jj &= 63
	binary.LittleEndian.PutUint64(win[jj:jj+8], w)
}
