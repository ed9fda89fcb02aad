package record

import (
	"encoding/base64"
	"math/bits"
	"unicode/utf8"
)

// JSONLen is len(AppendJSON(nil, r)), counted without rendering (the
// filesystem sizes its .jsonl views with it on every append).
func JSONLen(r *Record) int64 {
	return JSONLenAt(JSONFieldsLen(r), r.Offset, r.Timestamp)
}

// JSONLenAt is JSONLen of a record at offset and timestamp whose
// JSONFieldsLen is fields: fields plus the decimal lengths of offset and
// timestamp. It lets the filesystem measure records before the log has
// assigned their offsets.
func JSONLenAt(fields, offset, timestamp int64) int64 {
	return fields + decimalLen(offset) + decimalLen(timestamp)
}

// JSONFieldsLen is the part of JSONLen(r) that depends on neither r.Offset
// nor r.Timestamp.
func JSONFieldsLen(r *Record) int64 {
	if r.Key == nil && len(r.Headers) == 0 && plainASCII(r.Value) {
		return plainFieldsLen + int64(len(r.Value)) // a log line's record
	}
	return fieldsLen(r)
}

// plainFieldsLen is fieldsLen of a record with an empty plain value and no
// key or headers; every plain value adds its length to it.
var plainFieldsLen = fieldsLen(&Record{Value: []byte{}})

// fieldsLen is JSONFieldsLen(r), every case.
func fieldsLen(r *Record) int64 {
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
	case utf8.Valid(v):
		return n + jsonStringLen(unsafeString(v))
	}
	return n + 4 + int64(base64.StdEncoding.EncodedLen(len(v))) + 2 // _b64 "..."
}

func headerValueLen(v []byte) int64 {
	switch {
	case v == nil:
		return 4
	case utf8.Valid(v):
		return jsonStringLen(unsafeString(v))
	}
	return int64(len(`{"b64":""}`) + base64.StdEncoding.EncodedLen(len(v)))
}

// jsonStringLen is len(AppendJSONString(nil, s)).
func jsonStringLen(s string) int64 {
	n := int64(len(s)) + 2
	for i := 0; i < len(s); {
		i = skipSafe(s, i)
		if i == len(s) {
			break
		}
		c := s[i]
		if c < utf8.RuneSelf {
			n += escapeLen(c) - 1
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 || r == '\u2028' || r == '\u2029' {
			n += 6 - int64(size)
		}
		i += size
	}
	return n
}

// escapeLen is the length appendEscape writes for c.
func escapeLen(c byte) int64 {
	switch c {
	case '"', '\\', '\n', '\r', '\t':
		return 2
	}
	return 6
}
