package jsonl

// The log.jsonl line parser before lineParser (encoding/json, then a
// strict scan of the same line), kept as the reference its fuzz test
// compares with and the baseline of BenchmarkJSONRecords.

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"errors"
	"io"
	"slices"
	"strconv"
	"unicode/utf8"

	"github.com/partfs/partfs/record"
)

// refJSONInput is one log.jsonl line as written by a user.
type refJSONInput struct {
	Offset    *json.Number      `json:"offset"`
	Timestamp *int64            `json:"timestamp"`
	Key       *string           `json:"key"`
	Value     *string           `json:"value"`
	KeyB64    *string           `json:"key_b64"`
	ValueB64  *string           `json:"value_b64"`
	Headers   []json.RawMessage `json:"headers"`
}

func refParseJSONLine(line []byte) (record.Record, error) {
	var in refJSONInput
	dec := json.NewDecoder(bytes.NewReader(line))
	dec.DisallowUnknownFields()
	dec.UseNumber()
	if err := dec.Decode(&in); err != nil {
		return record.Record{}, invalid("not a record object (%v)", err)
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return record.Record{}, invalid("trailing data after the object")
	}
	if bytes.TrimSpace(line)[0] != '{' {
		return record.Record{}, invalid("not an object")
	}
	if err := refCheckStrict(line); err != nil {
		return record.Record{}, err
	}
	var r record.Record
	var err error
	if r.Key, err = refBytesField("key", in.Key, in.KeyB64); err != nil {
		return r, err
	}
	if r.Value, err = refBytesField("value", in.Value, in.ValueB64); err != nil {
		return r, err
	}
	if in.Timestamp != nil {
		if *in.Timestamp < 0 {
			return r, invalid("negative timestamp %d", *in.Timestamp)
		}
		r.Timestamp = *in.Timestamp
	}
	for _, raw := range in.Headers {
		h, err := refParseHeader(raw)
		if err != nil {
			return r, err
		}
		r.Headers = append(r.Headers, h)
	}
	return r, nil
}

func refBytesField(name string, s, b64 *string) ([]byte, error) {
	switch {
	case s != nil && b64 != nil:
		return nil, invalid("both %s and %s_b64", name, name)
	case s != nil:
		return []byte(*s), nil
	case b64 != nil:
		b, err := base64.StdEncoding.DecodeString(*b64)
		if err != nil {
			return nil, invalid("%s_b64: %v", name, err)
		}
		return b, nil
	}
	return nil, nil
}

// refParseHeader reads ["key", value] where value is a string, null or
// {"b64":"..."}.
func refParseHeader(raw json.RawMessage) (record.Header, error) {
	var parts []json.RawMessage
	if err := json.Unmarshal(raw, &parts); err != nil || len(parts) != 2 {
		return record.Header{}, invalid("header %s: want [key, value]", raw)
	}
	k, err := refHeaderPart(parts[0])
	if err != nil || k == nil {
		return record.Header{}, invalid("header key %s", parts[0])
	}
	v, err := refHeaderPart(parts[1])
	if err != nil {
		return record.Header{}, err
	}
	return record.Header{Key: string(k), Value: v}, nil
}

func refHeaderPart(raw json.RawMessage) ([]byte, error) {
	if string(bytes.TrimSpace(raw)) == "null" {
		return nil, nil
	}
	var s string
	if err := json.Unmarshal(raw, &s); err == nil {
		return []byte(s), nil
	}
	var o struct {
		B64 *string `json:"b64"`
	}
	if err := json.Unmarshal(raw, &o); err != nil || o.B64 == nil {
		return nil, invalid("header value %s", raw)
	}
	b, err := base64.StdEncoding.DecodeString(*o.B64)
	if err != nil {
		return nil, invalid("header b64 %s", raw)
	}
	return b, nil
}

// refInputFields are the field names of a log.jsonl line, exactly as written
// (encoding/json alone would take "Value" or "VALUE" for "value").
var refInputFields = []string{"offset", "timestamp", "key", "value", "key_b64", "value_b64", "headers"}

// refHeaderValueFields are those of an object given as a header value.
var refHeaderValueFields = []string{"b64"}

// refCheckStrict refuses what encoding/json would accept by changing it:
// invalid UTF-8 and unpaired UTF-16 surrogate escapes ("\ud800"), both of
// which it turns into U+FFFD; field names that are not exactly those of a
// record (or "b64" in a header value); and a field given twice. The line
// must already be valid JSON (it is decoded after this check passes).
func refCheckStrict(line []byte) error {
	if !utf8.Valid(line) {
		return invalid("not valid UTF-8")
	}
	s := refStrictScan{b: line}
	return s.value(0)
}

// refStrictScan walks one JSON value, checking strings and object keys.
type refStrictScan struct {
	b []byte
	i int
}

func (s *refStrictScan) ws() {
	for s.i < len(s.b) && (s.b[s.i] == ' ' || s.b[s.i] == '\t' || s.b[s.i] == '\r' || s.b[s.i] == '\n') {
		s.i++
	}
}

// value checks the value at s.i; depth is 0 for the line's object.
func (s *refStrictScan) value(depth int) error {
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
	for s.i < len(s.b) && !refEndsLiteral(s.b[s.i]) {
		s.i++
	}
	if s.i == start {
		return invalid("not JSON at byte %d", s.i)
	}
	return nil
}

// refEndsLiteral reports a byte that ends a number, true, false or null.
func refEndsLiteral(c byte) bool {
	switch c {
	case ',', '}', ']', ' ', '\t', '\r', '\n':
		return true
	}
	return false
}

func (s *refStrictScan) object(depth int) error {
	allowed := refInputFields
	if depth > 0 {
		allowed = refHeaderValueFields
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
func (s *refStrictScan) str() (string, error) {
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
func (s *refStrictScan) unicodeEscape() error {
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
func (s *refStrictScan) hex4(i int) (rune, bool) {
	if i+6 > len(s.b) || s.b[i] != '\\' || s.b[i+1] != 'u' {
		return 0, false
	}
	n, err := strconv.ParseUint(string(s.b[i+2:i+6]), 16, 16)
	return rune(n), err == nil
}
