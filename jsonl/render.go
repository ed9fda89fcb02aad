package jsonl

import (
	"encoding/base64"
	"encoding/binary"
	"math/bits"
	"unicode/utf8"

	"github.com/partfs/partfs/record"
)

// Append appends r as one docs/spec.md §3 jsonl object (no newline), keys in the
// order offset, timestamp, key, value, headers:
//
//	{"offset":42,"timestamp":1764410400000,"key":"k1","value":"v1","headers":[["h","x"]]}
//
// key/value are null when null; bytes that are not valid UTF-8 are written
// as "key_b64"/"value_b64" (standard base64) instead. A header value follows
// the same rule inside its pair: null, a string, or {"b64":"..."} when not
// valid UTF-8. This is the one JSON rendering of records: `partfs dump
// --json` and the filesystem's .jsonl views both use it; Len is its
// length.
func Append(dst []byte, r *record.Record) []byte {
	dst = append(dst, `{"offset":`...)
	dst = AppendInt(dst, r.Offset)
	dst = append(dst, `,"timestamp":`...)
	dst = AppendInt(dst, r.Timestamp)
	dst = appendField(dst, "key", r.Key)
	dst = appendField(dst, "value", r.Value)
	dst = append(dst, `,"headers":[`...)
	for i := range r.Headers {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = append(dst, '[')
		dst = AppendString(dst, r.Headers[i].Key)
		dst = append(dst, ',')
		dst = appendHeaderValue(dst, r.Headers[i].Value)
		dst = append(dst, ']')
	}
	return append(dst, "]}"...)
}

// appendField writes ,"name":<string|null> or ,"name_b64":"<base64>".
// Printable ASCII without '"' and '\\' (the common case) is copied as it
// is.
func appendField(dst []byte, name string, v []byte) []byte {
	dst = append(dst, `,"`...)
	dst = append(dst, name...)
	switch {
	case v == nil:
		return append(dst, `":null`...)
	case plainASCII(v):
		dst = append(dst, `":"`...)
		dst = append(dst, v...)
		return append(dst, '"')
	}
	if out, valid := appendValidJSONString(append(dst, `":`...), unsafeString(v)); valid {
		return out
	}
	// Not UTF-8: base64 after dst itself (append(dst, `":`) may have
	// grown a copy), so that dst reallocates only if the result outgrows it.
	dst = append(dst, `_b64":"`...)
	dst = base64.StdEncoding.AppendEncode(dst, v)
	return append(dst, '"')
}

func appendHeaderValue(dst []byte, v []byte) []byte {
	if v == nil {
		return append(dst, "null"...)
	}
	if out, valid := appendValidJSONString(dst, unsafeString(v)); valid {
		return out
	}
	dst = append(dst, `{"b64":"`...) // after dst itself, as in appendField
	dst = base64.StdEncoding.AppendEncode(dst, v)
	return append(dst, `"}`...)
}

const hexDigits = "0123456789abcdef"

// AppendInt appends strconv.FormatInt(v, 10) in groups of eight digits,
// each made without a loop or a table (offsets and timestamps are two
// numbers of every JSON record).
func AppendInt(dst []byte, v int64) []byte {
	u := uint64(v)
	if v < 0 {
		dst, u = append(dst, '-'), -u
	}
	if u < 10 {
		return append(dst, byte('0'+u))
	}
	if u < 1e8 {
		return appendDigits(dst, uint32(u))
	}
	if u < 1e16 {
		hi, lo := u/1e8, u%1e8
		return appendEight(appendDigits(dst, uint32(hi)), uint32(lo))
	}
	hi, mid := u/1e16, u/1e8%1e8
	return appendEight(appendEight(appendDigits(dst, uint32(hi)), uint32(mid)), uint32(u%1e8))
}

// appendDigits appends v < 1e8 without leading zeros.
func appendDigits(dst []byte, v uint32) []byte {
	d := eightDigits(v)
	zeros := min(bits.TrailingZeros64(d)/8, 7) // leading zero digits
	var b [8]byte
	binary.LittleEndian.PutUint64(b[:], d+'0'*0x0101010101010101)
	return append(dst, b[zeros:]...)
}

// appendEight appends v < 1e8 as exactly eight digits.
func appendEight(dst []byte, v uint32) []byte {
	return binary.LittleEndian.AppendUint64(dst, eightDigits(v)+'0'*0x0101010101010101)
}

// eightDigits returns the eight decimal digits of v < 1e8 as byte values
// 0..9, most significant in the lowest byte. It splits v into 4-digit
// halves in two 32-bit lanes, those into 2-digit quarters in 16-bit lanes,
// and those into digits, dividing every lane at once: x*10486>>20 is x/100
// for x < 10000, and x*103>>10 is x/10 for x < 100.
func eightDigits(v uint32) uint64 {
	x := uint64(v/10000) | uint64(v%10000)<<32
	hundreds := (x * 10486 >> 20) & 0x0000007f0000007f
	x = hundreds | (x-hundreds*100)<<16
	tens := (x * 103 >> 10) & 0x000f000f000f000f
	return tens | (x-tens*10)<<8
}

// jsonSafe marks the bytes copied as they are: printable ASCII except '"' and '\\'.
var jsonSafe = func() (t [256]bool) {
	for c := 0x20; c < utf8.RuneSelf; c++ {
		t[c] = c != '"' && c != '\\'
	}
	return t
}()

func appendEscape(dst []byte, c byte) []byte {
	switch c {
	case '"', '\\':
		return append(dst, '\\', c)
	case '\n':
		return append(dst, '\\', 'n')
	case '\r':
		return append(dst, '\\', 'r')
	case '\t':
		return append(dst, '\\', 't')
	}
	return append(dst, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xf])
}
