package fs

import (
	"encoding/json"
	"slices"
	"strconv"
	"unicode/utf8"
)

// inputFields are the field names of a log.jsonl line, exactly as written
// (encoding/json alone would take "Value" or "VALUE" for "value").
var inputFields = []string{"offset", "timestamp", "key", "value", "key_b64", "value_b64", "headers"}

// headerValueFields are those of an object given as a header value.
var headerValueFields = []string{"b64"}

// checkStrictJSON refuses what encoding/json would accept by changing it:
// invalid UTF-8 and unpaired UTF-16 surrogate escapes ("\ud800"), both of
// which it turns into U+FFFD; field names that are not exactly those of a
// record (or "b64" in a header value); and a field given twice. The line
// must already be valid JSON (it is decoded after this check passes).
func checkStrictJSON(line []byte) error {
	if !utf8.Valid(line) {
		return invalid("not valid UTF-8")
	}
	s := strictScan{b: line}
	return s.value(0)
}

// strictScan walks one JSON value, checking strings and object keys.
type strictScan struct {
	b []byte
	i int
}

func (s *strictScan) ws() {
	for s.i < len(s.b) && (s.b[s.i] == ' ' || s.b[s.i] == '\t' || s.b[s.i] == '\r' || s.b[s.i] == '\n') {
		s.i++
	}
}

// value checks the value at s.i; depth is 0 for the line's object.
func (s *strictScan) value(depth int) error {
	s.ws()
	if s.i >= len(s.b) {
		return invalid("truncated JSON")
	}
	switch s.b[s.i] {
	case '"':
		_, err := s.str()
		return err
	case '{':
		return s.object(depth)
	case '[':
		s.i++
		for {
			s.ws()
			if s.i < len(s.b) && s.b[s.i] == ']' {
				s.i++
				return nil
			}
			if err := s.value(depth + 1); err != nil {
				return err
			}
			s.ws()
			if s.i < len(s.b) && s.b[s.i] == ',' {
				s.i++
			}
		}
	}
	start := s.i
	for s.i < len(s.b) && !endsLiteral(s.b[s.i]) {
		s.i++
	}
	if s.i == start {
		return invalid("not JSON at byte %d", s.i)
	}
	return nil
}

// endsLiteral reports a byte that ends a number, true, false or null.
func endsLiteral(c byte) bool {
	switch c {
	case ',', '}', ']', ' ', '\t', '\r', '\n':
		return true
	}
	return false
}

func (s *strictScan) object(depth int) error {
	allowed := inputFields
	if depth > 0 {
		allowed = headerValueFields
	}
	var seen []string
	s.i++
	for {
		s.ws()
		if s.i >= len(s.b) {
			return invalid("truncated JSON")
		}
		if s.b[s.i] == '}' {
			s.i++
			return nil
		}
		if s.b[s.i] == ',' {
			s.i++
			continue
		}
		if s.b[s.i] != '"' {
			return invalid("not JSON at byte %d", s.i)
		}
		key, err := s.str()
		if err != nil {
			return err
		}
		if !slices.Contains(allowed, key) {
			return invalid("unknown field %q (field names are %v, exactly)", key, allowed)
		}
		if slices.Contains(seen, key) {
			return invalid("field %q given twice", key)
		}
		seen = append(seen, key)
		s.ws()
		if s.i < len(s.b) && s.b[s.i] == ':' {
			s.i++
		}
		if err := s.value(depth + 1); err != nil {
			return err
		}
	}
}

// str reads the string at s.i, refusing unpaired surrogate escapes, and
// returns its value.
func (s *strictScan) str() (string, error) {
	start := s.i
	s.i++
	escaped := false
	for s.i < len(s.b) {
		switch c := s.b[s.i]; c {
		case '"':
			s.i++
			raw := s.b[start:s.i]
			if !escaped {
				return string(raw[1 : len(raw)-1]), nil
			}
			var v string
			if err := json.Unmarshal(raw, &v); err != nil {
				return "", invalid("string %s: %v", raw, err)
			}
			return v, nil
		case '\\':
			escaped = true
			if s.i+1 < len(s.b) && s.b[s.i+1] == 'u' {
				if err := s.unicodeEscape(); err != nil {
					return "", err
				}
				continue
			}
			s.i += 2
		default:
			s.i++
		}
	}
	return "", invalid("truncated JSON string")
}

// unicodeEscape checks the \uXXXX escape at s.i (and the low surrogate
// after a high one) and moves past it.
func (s *strictScan) unicodeEscape() error {
	r, ok := s.hex4(s.i)
	switch {
	case !ok:
		return invalid("bad \\u escape at byte %d", s.i)
	case r >= 0xdc00 && r <= 0xdfff:
		return invalid("unpaired UTF-16 surrogate \\u%04x at byte %d", r, s.i)
	case r >= 0xd800 && r <= 0xdbff:
		lo, ok := s.hex4(s.i + 6)
		if !ok || s.b[s.i+6] != '\\' || lo < 0xdc00 || lo > 0xdfff {
			return invalid("unpaired UTF-16 surrogate \\u%04x at byte %d", r, s.i)
		}
		s.i += 12
		return nil
	}
	s.i += 6
	return nil
}

// hex4 reads the XXXX of a \uXXXX escape starting at i.
func (s *strictScan) hex4(i int) (rune, bool) {
	if i+6 > len(s.b) || s.b[i] != '\\' || s.b[i+1] != 'u' {
		return 0, false
	}
	n, err := strconv.ParseUint(string(s.b[i+2:i+6]), 16, 16)
	return rune(n), err == nil
}
