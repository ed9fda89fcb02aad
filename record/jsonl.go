package record

import (
	"encoding/base64"
	"strconv"
	"unicode/utf8"
)

// AppendJSON appends r as one SPEC §3 jsonl object (no newline), keys in the
// order offset, timestamp, key, value, headers:
//
//	{"offset":42,"timestamp":1764410400000,"key":"k1","value":"v1","headers":[["h","x"]]}
//
// key/value are null when null; bytes that are not valid UTF-8 are written
// as "key_b64"/"value_b64" (standard base64) instead. A header value follows
// the same rule inside its pair: null, a string, or {"b64":"..."} when not
// valid UTF-8. This is the one JSON rendering of records: `partfs dump
// --json` and the filesystem's .jsonl views both use it; JSONLen is its
// length.
func AppendJSON(dst []byte, r *Record) []byte {
	dst = append(dst, `{"offset":`...)
	dst = strconv.AppendInt(dst, r.Offset, 10)
	dst = append(dst, `,"timestamp":`...)
	dst = strconv.AppendInt(dst, r.Timestamp, 10)
	dst = appendField(dst, "key", r.Key)
	dst = appendField(dst, "value", r.Value)
	dst = append(dst, `,"headers":[`...)
	for i := range r.Headers {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = append(dst, '[')
		dst = AppendJSONString(dst, r.Headers[i].Key)
		dst = append(dst, ',')
		dst = appendHeaderValue(dst, r.Headers[i].Value)
		dst = append(dst, ']')
	}
	return append(dst, "]}"...)
}

// appendField writes ,"name":<string|null> or ,"name_b64":"<base64>".
// Printable ASCII (the common case) is copied without a per-byte loop.
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
	case utf8.Valid(v):
		dst = append(dst, `":`...)
		return appendJSONBytes(dst, v)
	default:
		dst = append(dst, `_b64":"`...)
		dst = base64.StdEncoding.AppendEncode(dst, v)
		return append(dst, '"')
	}
}

func appendHeaderValue(dst []byte, v []byte) []byte {
	switch {
	case v == nil:
		return append(dst, "null"...)
	case utf8.Valid(v):
		return appendJSONBytes(dst, v)
	default:
		dst = append(dst, `{"b64":"`...)
		dst = base64.StdEncoding.AppendEncode(dst, v)
		return append(dst, `"}`...)
	}
}

// AppendJSONString appends s as a JSON string (s must be valid UTF-8;
// invalid bytes are replaced by U+FFFD). U+2028 and U+2029 are escaped.
func AppendJSONString(dst []byte, s string) []byte {
	dst = append(dst, '"')
	start := 0
	for i := 0; i < len(s); {
		i = skipSafe(s, i)
		if i == len(s) {
			break
		}
		c := s[i]
		if c < utf8.RuneSelf {
			dst = appendEscape(append(dst, s[start:i]...), c)
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 || r == '\u2028' || r == '\u2029' {
			dst = append(dst, s[start:i]...)
			if r == utf8.RuneError {
				dst = append(dst, `\ufffd`...)
			} else {
				dst = append(dst, `\u202`...)
				dst = append(dst, hexDigits[r&0xf])
			}
			start = i + size
		}
		i += size
	}
	dst = append(dst, s[start:]...)
	return append(dst, '"')
}

func appendJSONBytes(dst, b []byte) []byte {
	return AppendJSONString(dst, unsafeString(b))
}

const hexDigits = "0123456789abcdef"

// jsonSafe marks the bytes copied as they are: printable ASCII except '"' and '\\'.
var jsonSafe = func() (t [256]bool) {
	for c := 0x20; c < utf8.RuneSelf; c++ {
		t[c] = c != '"' && c != '\\'
	}
	return t
}()

// skipSafe returns the index of the first byte at or after i that is not
// jsonSafe (len(s) if none), 8 bytes at a time where it can.
func skipSafe(s string, i int) int {
	for i+8 <= len(s) && special(load64(s[i:])) == 0 {
		i += 8
	}
	for i < len(s) && jsonSafe[s[i]] {
		i++
	}
	return i
}

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
