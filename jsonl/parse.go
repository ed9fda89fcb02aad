package jsonl

import (
	"bytes"
	"encoding/base64"
	"fmt"
	"slices"
	"unicode/utf8"

	"github.com/partfs/partfs/partlog"
	"github.com/partfs/partfs/record"
)

// Parse parses complete lines of data as JSON objects (strict: any
// bad line fails all of them with an error wrapping ErrInvalid). It
// returns the records and the trailing partial line. The records' bytes
// lie in data where a string needs no unescaping, else in one buffer for
// all of them.
func Parse(data []byte) ([]record.Record, []byte, error) {
	recs := make([]record.Record, 0, bytes.Count(data, []byte{'\n'}))
	p := lineParser{budget: len(data)}
	for line := 1; ; line++ {
		i := bytes.IndexByte(data, '\n')
		if i < 0 {
			return recs, data, nil
		}
		recs = append(recs, record.Record{})
		if err := p.parse(&recs[len(recs)-1], data[:i]); err != nil {
			return nil, nil, fmt.Errorf("line %d: %w", line, err)
		}
		data = data[i+1:]
	}
}

func invalid(format string, args ...any) error {
	return fmt.Errorf(format+": %w", append(args, partlog.ErrInvalid)...)
}

// ParseLine parses one log.jsonl line (without its '\n').
func ParseLine(line []byte) (record.Record, error) {
	var r record.Record
	p := lineParser{budget: len(line)}
	err := p.parse(&r, line)
	return r, err
}

// A lineParser reads log.jsonl lines in one pass, as strictly as docs/spec.md §4
// asks: the line is valid UTF-8 and one JSON object whose field names are
// exactly those of a record (offset, timestamp, key, value, key_b64,
// value_b64, headers), each at most once; strings hold no unpaired UTF-16
// surrogate escape; offset is ignored but must be a number (or a string
// holding one) or null; timestamp a non-negative integer or null; key,
// value and their _b64 forms strings or null, a field and its _b64 form
// not both non-null; headers null or an array of [key, value] pairs whose
// parts are strings, null (not for a key) or {"b64":"..."}.
type lineParser struct {
	b     []byte
	i     int
	arena []byte // unescaped strings and decoded base64 (made on first need)
	// budget is the bytes parsed in all, the arena's first size: unescaped
	// strings never outgrow it; base64 decoded from an escaped string may.
	budget int
}

// grow makes room for n more bytes in the arena.
func (p *lineParser) grow(n int) {
	if p.arena == nil {
		p.arena = make([]byte, 0, max(p.budget, n))
	}
	p.arena = slices.Grow(p.arena, n)
}

// field bits, for fields given twice.
const (
	fOffset = 1 << iota
	fTimestamp
	fKey
	fValue
	fKeyB64
	fValueB64
	fHeaders
)

// fieldBit is the bit of a record field's name, 0 for another name.
func fieldBit(name []byte) int {
	switch string(name) {
	case "value":
		return fValue
	case "key":
		return fKey
	case "timestamp":
		return fTimestamp
	case "headers":
		return fHeaders
	case "offset":
		return fOffset
	case "key_b64":
		return fKeyB64
	case "value_b64":
		return fValueB64
	}
	return 0
}

// parse parses line into r (zero).
func (p *lineParser) parse(r *record.Record, line []byte) error {
	if !utf8.Valid(line) {
		return invalid("not valid UTF-8")
	}
	p.b, p.i = line, 0
	if !p.skipTo('{') {
		return invalid("not a record object")
	}
	var seen int
	var key, keyB64, value, valueB64 []byte
	var keyNull, keyB64Null, valueNull, valueB64Null = true, true, true, true
	for first := true; ; first = false {
		if p.skipTo('}') {
			break
		}
		if !first && !p.skipTo(',') {
			return p.bad("',' or '}'")
		}
		name, err := p.fieldName()
		if err != nil {
			return err
		}
		bit := fieldBit(name)
		switch {
		case bit == 0:
			return invalid("unknown field %q (field names are offset, timestamp, key, value, key_b64, value_b64, headers, exactly)", name)
		case seen&bit != 0:
			return invalid("field %q given twice", name)
		}
		seen |= bit
		switch bit {
		case fOffset:
			err = p.offset()
		case fTimestamp:
			r.Timestamp, err = p.timestamp()
		case fKey:
			key, keyNull, err = p.stringOrNull("key")
		case fValue:
			value, valueNull, err = p.stringOrNull("value")
		case fKeyB64:
			keyB64, keyB64Null, err = p.stringOrNull("key_b64")
		case fValueB64:
			valueB64, valueB64Null, err = p.stringOrNull("value_b64")
		case fHeaders:
			r.Headers, err = p.headers()
		}
		if err != nil {
			return err
		}
	}
	p.ws()
	if p.i < len(p.b) {
		return invalid("trailing data after the object")
	}
	var err error
	if r.Key, err = p.bytesField("key", key, keyNull, keyB64, keyB64Null); err != nil {
		return err
	}
	r.Value, err = p.bytesField("value", value, valueNull, valueB64, valueB64Null)
	return err
}

// bytesField is a field's bytes from its string form s or its base64 form
// b64 (nil if both are null or absent).
func (p *lineParser) bytesField(name string, s []byte, sNull bool, b64 []byte, b64Null bool) ([]byte, error) {
	switch {
	case !sNull && !b64Null:
		return nil, invalid("both %s and %s_b64", name, name)
	case !sNull:
		return s, nil
	case !b64Null:
		b, err := p.base64(b64)
		if err != nil {
			return nil, invalid("%s_b64: %v", name, err)
		}
		return b, nil
	}
	return nil, nil
}

// base64 decodes s into the arena.
func (p *lineParser) base64(s []byte) ([]byte, error) {
	p.grow(base64.StdEncoding.DecodedLen(len(s)))
	start := len(p.arena)
	n, err := base64.StdEncoding.Decode(p.arena[start:start+base64.StdEncoding.DecodedLen(len(s))], s)
	if err != nil {
		return nil, err
	}
	p.arena = p.arena[:start+n]
	return p.arena[start : start+n : start+n], nil
}

func (p *lineParser) ws() {
	for p.i < len(p.b) {
		switch p.b[p.i] {
		case ' ', '\t', '\r', '\n':
			p.i++
		default:
			return
		}
	}
}

// skipTo skips white space and then c if it is next, reporting whether it was.
func (p *lineParser) skipTo(c byte) bool {
	p.ws()
	if p.i < len(p.b) && p.b[p.i] == c {
		p.i++
		return true
	}
	return false
}

// bad is the error for a line where want was expected at p.i.
func (p *lineParser) bad(want string) error {
	if p.i >= len(p.b) {
		return invalid("truncated JSON: want %s", want)
	}
	return invalid("not JSON at byte %d: want %s", p.i, want)
}

// fieldName reads `"name" :`.
func (p *lineParser) fieldName() ([]byte, error) {
	p.ws()
	name, err := p.str()
	if err != nil {
		return nil, err
	}
	if !p.skipTo(':') {
		return nil, p.bad("':'")
	}
	return name, nil
}

// null reads null if it is next, reporting whether it was.
func (p *lineParser) null() bool {
	p.ws()
	if bytes.HasPrefix(p.b[p.i:], []byte("null")) && !p.literalGoesOn(p.i+4) {
		p.i += 4
		return true
	}
	return false
}

// literalGoesOn reports a byte at i that would continue a literal.
func (p *lineParser) literalGoesOn(i int) bool {
	if i >= len(p.b) {
		return false
	}
	switch p.b[i] {
	case ',', '}', ']', ' ', '\t', '\r', '\n':
		return false
	}
	return true
}

// stringOrNull reads a string or null (null reports isNull).
func (p *lineParser) stringOrNull(name string) (s []byte, isNull bool, err error) {
	if p.null() {
		return nil, true, nil
	}
	if p.i >= len(p.b) || p.b[p.i] != '"' {
		return nil, false, invalid("%s: want a string or null", name)
	}
	s, err = p.str()
	return s, false, err
}

// offset reads the ignored offset: null, a number, or a string holding
// one.
func (p *lineParser) offset() error {
	if p.null() {
		return nil
	}
	if p.i < len(p.b) && p.b[p.i] == '"' {
		s, err := p.str()
		if err != nil {
			return err
		}
		if n := numberLen(s); n == 0 || n != len(s) {
			return invalid("offset %q: not a number", s)
		}
		return nil
	}
	n := numberLen(p.b[p.i:])
	if n == 0 || p.literalGoesOn(p.i+n) {
		return p.bad("a number as offset")
	}
	p.i += n
	return nil
}

// timestamp reads null (0) or an integer that fits an int64, not below 0.
func (p *lineParser) timestamp() (int64, error) {
	if p.null() {
		return 0, nil
	}
	n := numberLen(p.b[p.i:])
	if n == 0 || p.literalGoesOn(p.i+n) {
		return 0, p.bad("a number as timestamp")
	}
	lit := p.b[p.i : p.i+n]
	p.i += n
	neg := lit[0] == '-'
	digits := lit
	if neg {
		digits = lit[1:]
	}
	var v uint64
	for _, c := range digits {
		if c < '0' || c > '9' {
			return 0, invalid("timestamp %s: not an integer", lit)
		}
		if v > (1<<63)/10 || v*10+uint64(c-'0') > 1<<63 {
			return 0, invalid("timestamp %s: out of range", lit)
		}
		v = v*10 + uint64(c-'0')
	}
	switch {
	case neg && v > 0:
		return 0, invalid("negative timestamp %s", lit)
	case v == 1<<63:
		return 0, invalid("timestamp %s: out of range", lit)
	}
	return int64(v), nil
}

// numberLen is the length of the JSON number at the start of b, 0 if none.
func numberLen(b []byte) int {
	i := 0
	if i < len(b) && b[i] == '-' {
		i++
	}
	switch {
	case i < len(b) && b[i] == '0':
		i++
	case i < len(b) && b[i] >= '1' && b[i] <= '9':
		i = digitsEnd(b, i)
	default:
		return 0
	}
	if i < len(b) && b[i] == '.' {
		if j := digitsEnd(b, i+1); j > i+1 {
			i = j
		} else {
			return 0
		}
	}
	if i < len(b) && (b[i] == 'e' || b[i] == 'E') {
		j := i + 1
		if j < len(b) && (b[j] == '+' || b[j] == '-') {
			j++
		}
		if k := digitsEnd(b, j); k > j {
			i = k
		} else {
			return 0
		}
	}
	return i
}

// digitsEnd is the index of the first non-digit of b at or after i.
func digitsEnd(b []byte, i int) int {
	for i < len(b) && b[i] >= '0' && b[i] <= '9' {
		i++
	}
	return i
}
