package jsonl

import (
	"encoding/base64"
	"unicode/utf8"

	"github.com/partfs/partfs/record"
)

// refAppendJSON is Append's value, key and header rendering as it was:
// utf8.Valid first, then refAppendJSONString or base64.
func refAppendJSON(r *record.Record) []byte {
	field := func(dst []byte, name string, v []byte) []byte {
		dst = append(dst, `,"`+name...)
		switch {
		case v == nil:
			return append(dst, `":null`...)
		case utf8.Valid(v):
			return refAppendJSONString(append(dst, `":`...), string(v))
		}
		return append(base64.StdEncoding.AppendEncode(append(dst, `_b64":"`...), v), '"')
	}
	dst := append(AppendInt([]byte(`{"offset":`), r.Offset), `,"timestamp":`...)
	dst = field(field(AppendInt(dst, r.Timestamp), "key", r.Key), "value", r.Value)
	dst = append(dst, `,"headers":[`...)
	for i, h := range r.Headers {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = append(refAppendJSONString(append(dst, '['), h.Key), ',')
		switch {
		case h.Value == nil:
			dst = append(dst, "null"...)
		case utf8.Valid(h.Value):
			dst = refAppendJSONString(dst, string(h.Value))
		default:
			dst = append(base64.StdEncoding.AppendEncode(append(dst, `{"b64":"`...), h.Value), `"}`...)
		}
		dst = append(dst, ']')
	}
	return append(dst, "]}"...)
}

// refAppendJSONString is AppendString as it was before the
// word-at-a-time writer (jsonl_escape.go): skip to the next special byte,
// copy the run, append its escape. Kept as the reference the new writer
// must match byte for byte, and as the benchmarks' baseline.
func refAppendJSONString(dst []byte, s string) []byte {
	dst = append(dst, '"')
	start := 0
	for i := 0; i < len(s); {
		i = refSkipSafe(s, i)
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

// refSkipSafe returns the index of the first byte at or after i that is
// not jsonSafe (len(s) if none), 8 bytes at a time where it can: the old
// writer's and the old length's scan.
func refSkipSafe(s string, i int) int {
	for i+8 <= len(s) && refSpecial(word(s[i:i+8])) == 0 {
		i += 8
	}
	for i < len(s) && jsonSafe[s[i]] {
		i++
	}
	return i
}

// refSpecial has a high bit set where a byte of x may be non-ASCII, a
// control byte, a quote or a backslash (false positives only cost the
// slow path).
func refSpecial(x uint64) uint64 {
	q, s := x^quot, x^bsl
	return (x & hi7) | ((x - 0x20*lo7) & ^x & hi7) | ((q - lo7) & ^q & hi7) | ((s - lo7) & ^s & hi7)
}
