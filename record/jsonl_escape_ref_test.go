package record

import "unicode/utf8"

// refAppendJSONString is AppendJSONString as it was before the
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
			dst = refAppendEscape(append(dst, s[start:i]...), c)
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

func refSkipSafe(s string, i int) int {
	for i+8 <= len(s) && special(load64(s[i:])) == 0 {
		i += 8
	}
	for i < len(s) && jsonSafe[s[i]] {
		i++
	}
	return i
}

func refAppendEscape(dst []byte, c byte) []byte {
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
