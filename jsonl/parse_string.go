package jsonl

import (
	"encoding/binary"
	"unicode/utf8"

	"github.com/partfs/partfs/record"
)

// str reads the JSON string at p.i (after white space) and returns its
// value: the line's own bytes when it has no escape, else its unescaped
// bytes in the arena. Control bytes and unpaired UTF-16 surrogate escapes
// are refused; the line is valid UTF-8 already.
func (p *lineParser) str() ([]byte, error) {
	p.ws()
	if p.i >= len(p.b) || p.b[p.i] != '"' {
		return nil, p.bad("a string")
	}
	p.i++
	start := p.i
	p.i += plainPrefix(p.b[p.i:])
	for ; p.i < len(p.b); p.i++ {
		switch c := p.b[p.i]; {
		case c == '"':
			p.i++
			return p.b[start : p.i-1 : p.i-1], nil
		case c == '\\':
			return p.unescape(start)
		case c < 0x20:
			return nil, invalid("control byte 0x%02x in a string at byte %d", c, p.i)
		}
	}
	return nil, invalid("truncated JSON string")
}

// plainPrefix is the length of b's prefix of whole 8-byte words that hold
// no '"', '\\' or control byte, the bytes a string copies as they are.
// The tests are exact for whether a word holds such a byte: x-0x20*lo
// borrows into a byte's high bit first at the lowest byte below 0x20,
// which ^x keeps only if that byte's own high bit was clear.
func plainPrefix(b []byte) int {
	const lo, hi = 0x0101010101010101, 0x8080808080808080
	n := 0
	for ; n+8 <= len(b); n += 8 {
		x := binary.LittleEndian.Uint64(b[n:])
		q, s := x^('"'*lo), x^('\\'*lo)
		if ((x-0x20*lo)&^x|(q-lo)&^q|(s-lo)&^s)&hi != 0 {
			break
		}
	}
	return n
}

// unescape reads the rest of a string from its first escape at p.i, its
// bytes from start on copied into the arena as they are unescaped.
func (p *lineParser) unescape(start int) ([]byte, error) {
	p.grow(len(p.b) - start)
	out := len(p.arena)
	p.arena = append(p.arena, p.b[start:p.i]...)
	for p.i < len(p.b) {
		c := p.b[p.i]
		switch {
		case c == '"':
			p.i++
			return p.arena[out:len(p.arena):len(p.arena)], nil
		case c < 0x20:
			return nil, invalid("control byte 0x%02x in a string at byte %d", c, p.i)
		case c != '\\':
			p.arena = append(p.arena, c)
			p.i++
			continue
		}
		if p.i+1 >= len(p.b) {
			break
		}
		switch e := p.b[p.i+1]; e {
		case '"', '\\', '/':
			p.arena = append(p.arena, e)
		case 'b':
			p.arena = append(p.arena, '\b')
		case 'f':
			p.arena = append(p.arena, '\f')
		case 'n':
			p.arena = append(p.arena, '\n')
		case 'r':
			p.arena = append(p.arena, '\r')
		case 't':
			p.arena = append(p.arena, '\t')
		case 'u':
			r, err := p.unicodeEscape()
			if err != nil {
				return nil, err
			}
			p.arena = utf8.AppendRune(p.arena, r)
			continue
		default:
			return nil, invalid("bad escape \\%c at byte %d", e, p.i)
		}
		p.i += 2
	}
	return nil, invalid("truncated JSON string")
}

// unicodeEscape reads the \uXXXX escape at p.i, and the low surrogate
// escape after a high one, and returns its rune.
func (p *lineParser) unicodeEscape() (rune, error) {
	r, ok := p.hex4(p.i)
	switch {
	case !ok:
		return 0, invalid("bad \\u escape at byte %d", p.i)
	case r >= 0xdc00 && r <= 0xdfff:
		return 0, invalid("unpaired UTF-16 surrogate \\u%04x at byte %d", r, p.i)
	case r >= 0xd800 && r <= 0xdbff:
		lo, ok := p.hex4(p.i + 6)
		if !ok || lo < 0xdc00 || lo > 0xdfff {
			return 0, invalid("unpaired UTF-16 surrogate \\u%04x at byte %d", r, p.i)
		}
		p.i += 12
		return 0x10000 + (r-0xd800)<<10 + (lo - 0xdc00), nil
	}
	p.i += 6
	return r, nil
}

// hex4 reads the XXXX of a \uXXXX escape starting at i.
func (p *lineParser) hex4(i int) (rune, bool) {
	if i+6 > len(p.b) || p.b[i] != '\\' || p.b[i+1] != 'u' {
		return 0, false
	}
	var r rune
	for _, c := range p.b[i+2 : i+6] {
		switch {
		case c >= '0' && c <= '9':
			r = r<<4 | rune(c-'0')
		case c >= 'a' && c <= 'f':
			r = r<<4 | rune(c-'a'+10)
		case c >= 'A' && c <= 'F':
			r = r<<4 | rune(c-'A'+10)
		default:
			return 0, false
		}
	}
	return r, true
}

// headers reads null or an array of [key, value] pairs (none: nil).
func (p *lineParser) headers() ([]record.Header, error) {
	if p.null() {
		return nil, nil
	}
	if !p.skipTo('[') {
		return nil, invalid("headers: want an array of [key, value]")
	}
	if p.skipTo(']') {
		return nil, nil
	}
	var hs []record.Header
	for {
		h, err := p.header()
		if err != nil {
			return nil, err
		}
		hs = append(hs, h)
		if p.skipTo(']') {
			return hs, nil
		}
		if !p.skipTo(',') {
			return nil, p.bad("',' or ']' in headers")
		}
	}
}

// header reads one [key, value]; the key may not be null.
func (p *lineParser) header() (record.Header, error) {
	at := p.i
	if !p.skipTo('[') {
		return record.Header{}, invalid("header at byte %d: want [key, value]", at)
	}
	k, err := p.headerPart()
	if err != nil {
		return record.Header{}, err
	}
	if k == nil {
		return record.Header{}, invalid("header at byte %d: null key", at)
	}
	if !p.skipTo(',') {
		return record.Header{}, invalid("header at byte %d: want [key, value]", at)
	}
	v, err := p.headerPart()
	if err != nil {
		return record.Header{}, err
	}
	if !p.skipTo(']') {
		return record.Header{}, invalid("header at byte %d: want [key, value]", at)
	}
	return record.Header{Key: string(k), Value: v}, nil
}

// headerPart reads a string, null (nil) or {"b64":"..."}.
func (p *lineParser) headerPart() ([]byte, error) {
	if p.null() {
		return nil, nil
	}
	switch {
	case p.i < len(p.b) && p.b[p.i] == '"':
		return p.str()
	case p.i < len(p.b) && p.b[p.i] == '{':
		return p.b64Object()
	}
	return nil, p.bad("a header string, null or {\"b64\":...}")
}

// b64Object reads {"b64":"..."} and returns the decoded bytes.
func (p *lineParser) b64Object() ([]byte, error) {
	at := p.i
	p.i++
	name, err := p.fieldName()
	if err != nil {
		return nil, err
	}
	if string(name) != "b64" {
		return nil, invalid("header value at byte %d: field %q (want b64, exactly)", at, name)
	}
	s, isNull, err := p.stringOrNull("b64")
	switch {
	case err != nil:
		return nil, err
	case isNull:
		return nil, invalid("header value at byte %d: b64 is null", at)
	case p.skipTo(','):
		return nil, invalid("header value at byte %d: more than the b64 field", at)
	case !p.skipTo('}'):
		return nil, p.bad("'}'")
	}
	b, err := p.base64(s)
	if err != nil {
		return nil, invalid("header value at byte %d: b64: %v", at, err)
	}
	return b, nil
}
