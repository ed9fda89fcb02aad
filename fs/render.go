package fs

import (
	"encoding/base64"
	"encoding/binary"
	"strconv"
	"unicode/utf8"

	"github.com/partfs/partfs/record"
)

// kind selects one of the two rendered streams of a partition.
type kind int

const (
	plainKind kind = iota // value + "\n"; tombstones hidden
	jsonKind              // one JSON object + "\n" per record
)

func (k kind) String() string {
	if k == jsonKind {
		return "jsonl"
	}
	return "plain"
}

// render appends the rendering of r in kind k to dst.
func render(dst []byte, k kind, r *record.Record) []byte {
	if k == plainKind {
		if r.Value == nil {
			return dst
		}
		dst = append(dst, r.Value...)
		return append(dst, '\n')
	}
	dst = appendJSON(dst, r)
	return append(dst, '\n')
}

// appendJSON appends r as one SPEC §3 object without a newline.
func appendJSON(dst []byte, r *record.Record) []byte {
	dst = append(dst, `{"offset":`...)
	dst = strconv.AppendInt(dst, r.Offset, 10)
	dst = append(dst, `,"timestamp":`...)
	dst = strconv.AppendInt(dst, r.Timestamp, 10)
	dst = appendField(dst, "key", r.Key)
	dst = appendField(dst, "value", r.Value)
	dst = append(dst, `,"headers":[`...)
	for i, h := range r.Headers {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = append(dst, '[')
		dst = appendHeaderPart(dst, []byte(h.Key))
		dst = append(dst, ',')
		dst = appendHeaderPart(dst, h.Value)
		dst = append(dst, ']')
	}
	return append(dst, "]}"...)
}

// appendField appends ,"name":value with null / string / _b64 forms.
func appendField(dst []byte, name string, b []byte) []byte {
	dst = append(dst, ',', '"')
	dst = append(dst, name...)
	if b == nil {
		return append(dst, `":null`...)
	}
	if plainASCII(b) {
		dst = append(dst, `":"`...)
		dst = append(dst, b...)
		return append(dst, '"')
	}
	if !utf8.Valid(b) {
		dst = append(dst, `_b64":"`...)
		dst = base64.StdEncoding.AppendEncode(dst, b)
		return append(dst, '"')
	}
	dst = append(dst, `":`...)
	return appendString(dst, b)
}

func appendHeaderPart(dst []byte, b []byte) []byte {
	if b == nil {
		return append(dst, "null"...)
	}
	if !utf8.Valid(b) {
		dst = append(dst, `{"b64":"`...)
		dst = base64.StdEncoding.AppendEncode(dst, b)
		return append(dst, `"}`...)
	}
	return appendString(dst, b)
}

const hexDigits = "0123456789abcdef"

const (
	lo7  = 0x0101010101010101
	hi7  = 0x8080808080808080
	quot = 0x2222222222222222
	bsl  = 0x5c5c5c5c5c5c5c5c
)

// plainWord reports whether none of 8 bytes needs escaping (no control
// byte, quote or backslash). False positives only cost the slow path.
func plainWord(x uint64) bool {
	ctl := (x - 0x20*lo7) & ^x & hi7
	q, s := x^quot, x^bsl
	return ctl|((q-lo7)&^q&hi7)|((s-lo7)&^s&hi7) == 0
}

// appendString appends b (valid UTF-8) as a JSON string.
func appendString(dst []byte, b []byte) []byte {
	dst = append(dst, '"')
	start := 0
	for i := 0; i < len(b); i++ {
		if i+8 <= len(b) && plainWord(binary.LittleEndian.Uint64(b[i:])) {
			i += 7
			continue
		}
		c := b[i]
		if c >= 0x20 && c != '"' && c != '\\' {
			continue
		}
		dst = append(dst, b[start:i]...)
		switch c {
		case '"', '\\':
			dst = append(dst, '\\', c)
		case '\n':
			dst = append(dst, '\\', 'n')
		case '\r':
			dst = append(dst, '\\', 'r')
		case '\t':
			dst = append(dst, '\\', 't')
		default:
			dst = append(dst, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xf])
		}
		start = i + 1
	}
	dst = append(dst, b[start:]...)
	return append(dst, '"')
}

// jsonLen is len(appendJSON(nil, r)) without rendering.
func jsonLen(r *record.Record) int64 {
	n := int64(len(`{"offset":,"timestamp":,"headers":[]}`))
	n += digits(r.Offset) + digits(r.Timestamp)
	n += fieldLen("key", r.Key) + fieldLen("value", r.Value)
	for i, h := range r.Headers {
		if i > 0 {
			n++
		}
		n += 3 + headerPartLen([]byte(h.Key)) + headerPartLen(h.Value)
	}
	return n
}

var pow10 = [...]int64{1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11, 1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18}

// digits is the length of strconv.FormatInt(v, 10).
func digits(v int64) int64 {
	n := int64(1)
	if v < 0 {
		if v == -v { // math.MinInt64
			return 20
		}
		n, v = 2, -v
	}
	for _, p := range pow10 {
		if v < p {
			return n
		}
		n++
	}
	return n
}

func fieldLen(name string, b []byte) int64 {
	n := int64(len(name)) + 4 // ,"name":
	if plainASCII(b) {
		return n + int64(len(b)) + 2
	}
	switch {
	case b == nil:
		return n + 4
	case !utf8.Valid(b):
		return n + 4 + int64(base64.StdEncoding.EncodedLen(len(b))) + 2
	}
	return n + stringLen(b)
}

func headerPartLen(b []byte) int64 {
	switch {
	case b == nil:
		return 4
	case !utf8.Valid(b):
		return int64(len(`{"b64":""}`) + base64.StdEncoding.EncodedLen(len(b)))
	}
	return stringLen(b)
}

// plainASCII reports whether b is non-nil ASCII that needs no escaping
// (so its JSON string is b in quotes), 32 bytes at a time.
func plainASCII(b []byte) bool {
	if b == nil {
		return false
	}
	for len(b) >= 32 {
		w0, w1 := binary.LittleEndian.Uint64(b), binary.LittleEndian.Uint64(b[8:])
		w2, w3 := binary.LittleEndian.Uint64(b[16:]), binary.LittleEndian.Uint64(b[24:])
		if special(w0)|special(w1)|special(w2)|special(w3) != 0 {
			return false
		}
		b = b[32:]
	}
	for len(b) >= 8 {
		if special(binary.LittleEndian.Uint64(b)) != 0 {
			return false
		}
		b = b[8:]
	}
	for _, c := range b {
		if c < 0x20 || c >= 0x80 || c == '"' || c == '\\' {
			return false
		}
	}
	return true
}

// special has a high bit set where a byte of x may be non-ASCII, a
// control byte, a quote or a backslash (false positives possible).
func special(x uint64) uint64 {
	q, s := x^quot, x^bsl
	return (x & hi7) | ((x - 0x20*lo7) & ^x & hi7) | ((q - lo7) & ^q & hi7) | ((s - lo7) & ^s & hi7)
}

// stringLen is the length of appendString(nil, b).
func stringLen(b []byte) int64 {
	n := int64(len(b)) + 2
	for i := 0; i < len(b); i++ {
		if i+8 <= len(b) && plainWord(binary.LittleEndian.Uint64(b[i:])) {
			i += 7
			continue
		}
		switch c := b[i]; {
		case c == '"' || c == '\\' || c == '\n' || c == '\r' || c == '\t':
			n++
		case c < 0x20:
			n += 5
		}
	}
	return n
}
