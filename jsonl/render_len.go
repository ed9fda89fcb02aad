package jsonl

import (
	"encoding/base64"
	"math/bits"
	"unicode/utf8"

	"github.com/partfs/partfs/record"
)

// Len is len(Append(nil, r)), counted without rendering (the
// filesystem sizes its .jsonl views with it on every append).
func Len(r *record.Record) int64 {
	return LenAt(FieldsLen(r), r.Offset, r.Timestamp)
}

// LenAt is Len of a record at offset and timestamp whose
// FieldsLen is fields: fields plus the decimal lengths of offset and
// timestamp. It lets the filesystem measure records before the log has
// assigned their offsets.
func LenAt(fields, offset, timestamp int64) int64 {
	return fields + decimalLen(offset) + decimalLen(timestamp)
}

// FieldsLen is the part of Len(r) that depends on neither r.Offset
// nor r.Timestamp.
func FieldsLen(r *record.Record) int64 {
	if r.Key == nil && len(r.Headers) == 0 && plainASCII(r.Value) {
		return plainFieldsLen + int64(len(r.Value)) // a log line's record
	}
	return fieldsLen(r)
}

// plainFieldsLen is fieldsLen of a record with an empty plain value and no
// key or headers; every plain value adds its length to it.
var plainFieldsLen = fieldsLen(&record.Record{Value: []byte{}})

// fieldsLen is FieldsLen(r), every case.
func fieldsLen(r *record.Record) int64 {
	n := int64(len(`{"offset":,"timestamp":,"headers":[]}`))
	n += fieldLen("key", r.Key) + fieldLen("value", r.Value)
	for i := range r.Headers {
		if i > 0 {
			n++
		}
		n += 3 + jsonStringLen(r.Headers[i].Key) + headerValueLen(r.Headers[i].Value)
	}
	return n
}

// pow10 holds 10^0 .. 10^19.
var pow10 = func() (t [20]uint64) {
	t[0] = 1
	for i := 1; i < len(t); i++ {
		t[i] = t[i-1] * 10
	}
	return t
}()

// decimalLen is the length of strconv.FormatInt(v, 10), without a loop:
// the bit length gives the digit count to within one.
func decimalLen(v int64) int64 {
	u, n := uint64(v), int64(0)
	if v < 0 {
		u, n = -u, 1
	}
	if u == 0 {
		return 1
	}
	t := (bits.Len64(u) * 1233) >> 12 // 1233/4096 ~ log10(2); u < 10^t possible
	if u < pow10[t] {
		return n + int64(t)
	}
	return n + int64(t) + 1
}

// fieldLen is the length appendField writes.
func fieldLen(name string, v []byte) int64 {
	n := int64(len(name)) + 4 // ,"name":
	switch {
	case v == nil:
		return n + 4
	case plainASCII(v):
		return n + int64(len(v)) + 2
	}
	if sn, valid := stringLen(unsafeString(v)); valid {
		return n + sn
	}
	return n + 4 + int64(base64.StdEncoding.EncodedLen(len(v))) + 2 // _b64 "..."
}

func headerValueLen(v []byte) int64 {
	if v == nil {
		return 4
	}
	if n, valid := stringLen(unsafeString(v)); valid {
		return n
	}
	return int64(len(`{"b64":""}`) + base64.StdEncoding.EncodedLen(len(v)))
}

// jsonStringLen is len(AppendString(nil, s)).
func jsonStringLen(s string) int64 {
	n, _ := stringLen(s)
	return n
}

// stringLen is len(AppendString(nil, s)), and whether s is valid
// UTF-8, in one pass: eight ASCII bytes at a time, their escapes counted
// from byte masks (JSON values are mostly ASCII with many quotes), and
// rune by rune from a byte with its high bit set.
func stringLen(s string) (n int64, valid bool) {
	n, valid = int64(len(s))+2, true
	for i := 0; i < len(s); {
		for ; i+8 <= len(s); i += 8 {
			w := word(s[i : i+8])
			if w&hi7 != 0 {
				break
			}
			n += int64(bits.OnesCount64(byteIs(w, '"') | byteIs(w, '\\')))
			if ^(w+0x60*lo7)&hi7 != 0 { // a control byte
				n += controlEscapes(w, hi7)
			}
		}
		if i < len(s) && i+8 > len(s) && len(s) >= 8 {
			// the tail: the last word, less its bytes before i, if ASCII
			if w := word(s[len(s)-8:]); w&hi7 == 0 {
				keep := uint64(hi7) << (8 * (i + 8 - len(s)))
				n += int64(bits.OnesCount64((byteIs(w, '"') | byteIs(w, '\\')) & keep))
				return n + controlEscapes(w, keep), valid
			}
		}
		for end := min(i+8, len(s)); i < end; {
			c := s[i]
			if c < utf8.RuneSelf {
				n += asciiEscapes[c]
				i++
				continue
			}
			r, size := utf8.DecodeRuneInString(s[i:])
			switch {
			case r == utf8.RuneError && size == 1:
				n, valid = n+5, false // \ufffd for one byte
			case r == '\u2028' || r == '\u2029':
				n += 3 // \u202x for three bytes
			}
			i += size
		}
	}
	return n, valid
}

// asciiEscapes is what escaping adds to the length of each ASCII byte:
// 1 for the two-byte escapes, 5 for \u00XX, 0 for bytes copied as they are.
var asciiEscapes = func() (t [utf8.RuneSelf]int64) {
	for c := range t {
		switch {
		case c == '"' || c == '\\' || c == '\n' || c == '\r' || c == '\t':
			t[c] = 1
		case c < 0x20:
			t[c] = 5
		}
	}
	return t
}()

// controlEscapes is what escaping adds for the control bytes of x (no
// high bit set) whose high bit is set in keep. The masks are exact for
// such bytes: adding 0x60 to a byte reaches 0x80 unless the byte is below
// 0x20 (byteIs: adding 0x7f to a byte XORed with c reaches it unless the
// byte is c), and no sum carries into the next byte.
func controlEscapes(x, keep uint64) int64 {
	ctrl := ^(x + 0x60*lo7) & keep
	if ctrl == 0 {
		return 0
	}
	short := (byteIs(x, '\n') | byteIs(x, '\r') | byteIs(x, '\t')) & keep
	return int64(5*bits.OnesCount64(ctrl) - 4*bits.OnesCount64(short))
}

// word is the little-endian value of the eight bytes of s.
func word(s string) uint64 {
	_ = s[7]
	return uint64(s[0]) | uint64(s[1])<<8 | uint64(s[2])<<16 | uint64(s[3])<<24 |
		uint64(s[4])<<32 | uint64(s[5])<<40 | uint64(s[6])<<48 | uint64(s[7])<<56
}

// byteIs has the high bit of each byte of x set where that byte is c, for
// x without high bits and c < 0x80.
func byteIs(x uint64, c byte) uint64 {
	return ^((x ^ uint64(c)*lo7) + 0x7f*lo7) & hi7
}
