package internaltopic

import (
	"encoding/base64"
	"encoding/json"
	"math"
	"strconv"

	"github.com/partfs/partfs/jsonl"
)

// Field is one member of an Object.
type Field struct {
	Name  string
	Value any
}

// Object is a JSON object whose members keep their order. Values are
// Object, []any, string, *string (nil is null), bool, the integer types,
// float64, Bytes, UUID or nil.
type Object []Field

// Bytes render as standard base64.
type Bytes []byte

// UUID is a 16-byte Kafka Uuid, rendered base64url without padding.
type UUID [16]byte

func (u UUID) String() string { return base64.RawURLEncoding.EncodeToString(u[:]) }

// Get returns the value of the member name, or nil.
func (o Object) Get(name string) any {
	for _, f := range o {
		if f.Name == name {
			return f.Value
		}
	}
	return nil
}

// MarshalJSON renders o.
func (o Object) MarshalJSON() ([]byte, error) { return appendValue(nil, o), nil }

// AppendValue appends the JSON of v (an Object, a Decoded's Key or Value).
func AppendValue(dst []byte, v any) []byte { return appendValue(dst, v) }

// appendValue appends the JSON of v.
func appendValue(dst []byte, v any) []byte {
	switch x := v.(type) {
	case nil:
		return append(dst, "null"...)
	case Object:
		dst = append(dst, '{')
		for i, f := range x {
			if i > 0 {
				dst = append(dst, ',')
			}
			dst = appendString(dst, f.Name)
			dst = append(dst, ':')
			dst = appendValue(dst, f.Value)
		}
		return append(dst, '}')
	case []any:
		dst = append(dst, '[')
		for i, e := range x {
			if i > 0 {
				dst = append(dst, ',')
			}
			dst = appendValue(dst, e)
		}
		return append(dst, ']')
	case string:
		return appendString(dst, x)
	case *string:
		if x == nil {
			return append(dst, "null"...)
		}
		return appendString(dst, *x)
	case bool:
		return strconv.AppendBool(dst, x)
	case int8:
		return strconv.AppendInt(dst, int64(x), 10)
	case int16:
		return strconv.AppendInt(dst, int64(x), 10)
	case int32:
		return strconv.AppendInt(dst, int64(x), 10)
	case int64:
		return strconv.AppendInt(dst, x, 10)
	case int:
		return strconv.AppendInt(dst, int64(x), 10)
	case uint16:
		return strconv.AppendUint(dst, uint64(x), 10)
	case float64:
		if math.IsInf(x, 0) || math.IsNaN(x) {
			return appendString(dst, strconv.FormatFloat(x, 'g', -1, 64))
		}
		return strconv.AppendFloat(dst, x, 'g', -1, 64)
	case Bytes:
		if x == nil {
			return append(dst, "null"...)
		}
		return appendString(dst, base64.StdEncoding.EncodeToString(x))
	case UUID:
		return appendString(dst, x.String())
	}
	b, err := json.Marshal(v)
	if err != nil {
		return appendString(dst, err.Error())
	}
	return append(dst, b...)
}

// appendString appends s as a JSON string (invalid UTF-8 becomes U+FFFD).
func appendString(dst []byte, s string) []byte { return jsonl.AppendString(dst, s) }
