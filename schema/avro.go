package schema

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"maps"
	"math"
	"math/big"
	"slices"
	"strconv"
	"strings"
	"sync"
	"unsafe"

	"github.com/hamba/avro/v2"

	"github.com/partfs/partfs/jsonl"
)

// avroAPI is hamba/avro's configuration with strings and bytes up to
// 64 MiB (its default refuses more than 1 MiB).
var avroAPI = avro.Config{MaxByteSliceSize: 64 << 20}.Freeze()

// avroCodec renders and encodes one Avro schema. The rendering is ours
// (SPEC's plain JSON: a union is its branch's value, a decimal a decimal
// string), compiled from the schema once (prog); the binary primitives
// and schema parsing are hamba/avro's.
type avroCodec struct {
	s    avro.Schema
	prog avroOp
}

// parseAvro parses text with the named types of refs (Avro schemas,
// parsed in order, that text may use by full name).
func parseAvro(text string, refs []string) (*avroCodec, error) {
	cache := &avro.SchemaCache{}
	for _, r := range refs {
		if _, err := avro.ParseWithCache(r, "", cache); err != nil {
			return nil, fmt.Errorf("referenced schema: %w", err)
		}
	}
	s, err := avro.ParseWithCache(text, "", cache)
	if err != nil {
		return nil, err
	}
	return &avroCodec{s: s, prog: compileAvro(s)}, nil
}

// decoders are avroDecoders to reuse: a hamba Reader and a string
// buffer each.
var decoders = sync.Pool{New: func() any {
	return &avroDecoder{r: avro.NewReader(nil, 0, avro.WithReaderConfig(avroAPI))}
}}

func (c *avroCodec) appendJSON(dst, data []byte) ([]byte, error) {
	return decodeAvro(dst, data, c.prog)
}

// decodeAvro appends the JSON that render writes of data with a pooled
// decoder, its item budget set by data's size, and returns the first error.
func decodeAvro(dst, data []byte, render avroOp) ([]byte, error) {
	d := decoders.Get().(*avroDecoder)
	defer decoders.Put(d)
	d.r.Reset(data)
	d.r.Error, d.err, d.size, d.budget = nil, nil, len(data), 8*len(data)+1024
	dst = render(d, dst)
	if d.r.Error != nil {
		return dst, fmt.Errorf("avro: %w", d.r.Error)
	}
	return dst, d.err
}

// avroDecoder writes the JSON of Avro binary data. budget bounds the
// array and map items a payload may claim (items of an empty record take
// no bytes).
type avroDecoder struct {
	r      *avro.Reader
	budget int
	size   int    // of the payload: no string or bytes is longer
	buf    []byte // a string's or bytes' content, read without allocating
	err    error
}

// bytes reads a string or bytes into d.buf, valid until the next call.
func (d *avroDecoder) bytes() []byte {
	n := d.r.ReadLong()
	if d.failed() {
		return nil
	}
	if n < 0 || n > int64(d.size) {
		d.err = fmt.Errorf("avro: a string or bytes of %d bytes in a payload of %d", n, d.size)
		return nil
	}
	if cap(d.buf) < int(n) {
		d.buf = make([]byte, n, max(n, 256))
	}
	d.buf = d.buf[:n]
	d.r.Read(d.buf)
	return d.buf
}

func (d *avroDecoder) failed() bool { return d.r.Error != nil || d.err != nil }

func appendString(dst, b []byte) []byte {
	return jsonl.AppendString(dst, unsafe.String(unsafe.SliceData(b), len(b)))
}

func appendBase64(dst, b []byte) []byte {
	dst = append(dst, '"')
	dst = base64.StdEncoding.AppendEncode(dst, b)
	return append(dst, '"')
}

// appendFloat writes f as encoding/json does; NaN and infinities, which
// JSON lacks, as the strings "NaN", "Infinity", "-Infinity" (protojson's
// spelling).
func appendFloat(dst []byte, f float64, bits int) []byte {
	switch {
	case math.IsNaN(f):
		return append(dst, `"NaN"`...)
	case math.IsInf(f, 1):
		return append(dst, `"Infinity"`...)
	case math.IsInf(f, -1):
		return append(dst, `"-Infinity"`...)
	}
	if bits == 64 {
		if out, ok := appendShortDecimal(dst, f); ok {
			return out
		}
	}
	abs, format := math.Abs(f), byte('f')
	if abs != 0 && (bits == 64 && (abs < 1e-6 || abs >= 1e21) || bits == 32 && (float32(abs) < 1e-6 || float32(abs) >= 1e21)) {
		format = 'e'
	}
	dst = strconv.AppendFloat(dst, f, format, -1, bits)
	if format == 'e' {
		// clean up e-09 to e-9, as encoding/json does
		if n := len(dst); n >= 4 && dst[n-4] == 'e' && dst[n-3] == '-' && dst[n-2] == '0' {
			dst[n-2] = dst[n-1]
			dst = dst[:n-1]
		}
	}
	return dst
}

// pow10 are the powers of ten appendShortDecimal tries.
var pow10 = [...]float64{1, 10, 100, 1000, 1e4}

// appendShortDecimal writes f as strconv.AppendFloat(dst, f, 'f', -1, 64)
// does when f is n/10^k for an integer n of at most 15 digits and k < 5
// (most values people store: prices, amounts, measures), and reports
// whether it did. Such a decimal is the shortest that reads back as f:
// no two decimals of at most 15 significant digits are the same float64,
// so a shorter one reading back as f would be n/10^k itself. Division is
// exactly rounded, so float64(n)/10^k == f says n/10^k reads back as f.
func appendShortDecimal(dst []byte, f float64) ([]byte, bool) {
	if f == 0 || !(math.Abs(f) >= 1e-4 && math.Abs(f) < 1e15) {
		return dst, false
	}
	for k, p := range pow10 {
		m := f * p
		if m != math.Trunc(m) || math.Abs(m) >= 1e15 {
			continue
		}
		n := int64(m)
		if float64(n)/p != f {
			continue
		}
		for k > 0 && n%10 == 0 {
			n, k = n/10, k-1
		}
		return appendScaled(dst, n, k), true
	}
	return dst, false
}

// appendScaled writes n/10^k with exactly k digits after the point (none
// when k is 0).
func appendScaled(dst []byte, n int64, k int) []byte {
	if n < 0 {
		dst, n = append(dst, '-'), -n
	}
	start := len(dst)
	dst = jsonl.AppendInt(dst, n)
	if k == 0 {
		return dst
	}
	if digits := len(dst) - start; digits <= k { // 0.0xyz: zeros first
		dst = append(dst, "0000000"[:k-digits+1]...)
		copy(dst[start+k-digits+1:], dst[start:start+digits])
		copy(dst[start:], "0000000"[:k-digits+1])
	}
	dst = append(dst, 0)
	point := len(dst) - 1 - k
	copy(dst[point+1:], dst[point:len(dst)-1])
	dst[point] = '.'
	return dst
}

// appendDecimal writes the two's-complement big-endian unscaled value b
// with scale digits after the point, as a JSON string.
func appendDecimal(dst, b []byte, scale int) []byte {
	n := new(big.Int).SetBytes(b)
	if len(b) > 0 && b[0]&0x80 != 0 {
		n.Sub(n, new(big.Int).Lsh(big.NewInt(1), uint(8*len(b))))
	}
	dst = append(dst, '"')
	s := n.Text(10)
	if scale <= 0 {
		return append(append(dst, s...), '"')
	}
	if s[0] == '-' {
		dst, s = append(dst, '-'), s[1:]
	}
	if len(s) <= scale {
		s = strings.Repeat("0", scale-len(s)+1) + s
	}
	dst = append(dst, s[:len(s)-scale]...)
	dst = append(dst, '.')
	dst = append(dst, s[len(s)-scale:]...)
	return append(dst, '"')
}

// encode encodes the JSON value v (decoded with UseNumber) with the
// schema, into Avro binary. An error names the field path.
func (c *avroCodec) encode(v any) ([]byte, error) {
	w := avro.NewWriter(nil, 256)
	if err := avroEncode(w, c.s, v, "$"); err != nil {
		return nil, err
	}
	return w.Buffer(), nil
}

// FieldError is a value that does not fit its schema, at Path ("$" is
// the whole value, "$.a.b[2]" a field of a nested record's array item).
type FieldError struct {
	Path, Reason string
}

func (e *FieldError) Error() string { return e.Path + ": " + e.Reason }

func misfit(path, format string, a ...any) error {
	return &FieldError{Path: path, Reason: fmt.Sprintf(format, a...)}
}

func avroEncode(w *avro.Writer, s avro.Schema, v any, path string) error {
	switch s := s.(type) {
	case *avro.RefSchema:
		return avroEncode(w, s.Schema(), v, path)
	case *avro.NullSchema:
		if v != nil {
			return misfit(path, "want null, have %s", jsonKind(v))
		}
		return nil
	case *avro.RecordSchema:
		return avroRecord(w, s, v, path)
	case *avro.EnumSchema:
		str, ok := v.(string)
		i := slices.Index(s.Symbols(), str)
		if !ok || i < 0 {
			return misfit(path, "want one of %s, have %s", strings.Join(s.Symbols(), ","), jsonText(v))
		}
		w.WriteInt(int32(i))
		return nil
	case *avro.ArraySchema:
		items, ok := v.([]any)
		if !ok {
			return misfit(path, "want an array, have %s", jsonKind(v))
		}
		if len(items) > 0 {
			w.WriteBlockHeader(int64(len(items)), 0)
			for i, it := range items {
				if err := avroEncode(w, s.Items(), it, fmt.Sprintf("%s[%d]", path, i)); err != nil {
					return err
				}
			}
		}
		w.WriteLong(0)
		return nil
	case *avro.MapSchema:
		m, ok := v.(map[string]any)
		if !ok {
			return misfit(path, "want an object, have %s", jsonKind(v))
		}
		if len(m) > 0 {
			w.WriteBlockHeader(int64(len(m)), 0)
			for _, k := range slices.Sorted(maps.Keys(m)) {
				w.WriteString(k)
				if err := avroEncode(w, s.Values(), m[k], path+"."+k); err != nil {
					return err
				}
			}
		}
		w.WriteLong(0)
		return nil
	case *avro.UnionSchema:
		return avroUnion(w, s, v, path)
	case *avro.FixedSchema:
		var b []byte
		var err error
		if l, ok := s.Logical().(*avro.DecimalLogicalSchema); ok {
			b, err = decimalBytes(v, l.Scale(), s.Size(), path)
		} else {
			b, err = base64Of(v, path)
		}
		if err != nil {
			return err
		}
		if len(b) != s.Size() {
			return misfit(path, "want %d bytes, have %d", s.Size(), len(b))
		}
		_, _ = w.Write(b)
		return nil
	case *avro.PrimitiveSchema:
		return avroPrimitive(w, s, v, path)
	}
	return misfit(path, "unsupported schema type %s", s.Type())
}

func avroRecord(w *avro.Writer, s *avro.RecordSchema, v any, path string) error {
	m, ok := v.(map[string]any)
	if !ok {
		return misfit(path, "want an object (%s), have %s", s.FullName(), jsonKind(v))
	}
	seen := 0
	for _, f := range s.Fields() {
		fp := path + "." + f.Name()
		fv, ok := m[f.Name()]
		switch {
		case ok:
			seen++
		case f.HasDefault():
			fv = f.Default()
			if u, isUnion := f.Type().(*avro.UnionSchema); isUnion {
				// a union's default is of its first branch
				w.WriteLong(0)
				if err := avroEncode(w, u.Types()[0], fv, fp); err != nil {
					return err
				}
				continue
			}
		default:
			return misfit(fp, "missing (the field has no default)")
		}
		if err := avroEncode(w, f.Type(), fv, fp); err != nil {
			return err
		}
	}
	if seen < len(m) {
		for k := range m {
			if !slices.ContainsFunc(s.Fields(), func(f *avro.Field) bool { return f.Name() == k }) {
				return misfit(path+"."+k, "not a field of %s", s.FullName())
			}
		}
	}
	return nil
}

// avroUnion writes the first branch v fits; v may also be Avro's own JSON
// form of a union, {"branch name": value}, when no branch takes it plain.
func avroUnion(w *avro.Writer, s *avro.UnionSchema, v any, path string) error {
	var first error
	for i, t := range s.Types() {
		tmp := avro.NewWriter(nil, 64)
		err := avroEncode(tmp, t, v, path)
		if err == nil {
			w.WriteLong(int64(i))
			_, _ = w.Write(tmp.Buffer())
			return nil
		}
		if first == nil && t.Type() != avro.Null {
			first = err
		}
	}
	if m, ok := v.(map[string]any); ok && len(m) == 1 {
		for name, inner := range m {
			for i, t := range s.Types() {
				if branchName(t) == name {
					w.WriteLong(int64(i))
					return avroEncode(w, t, inner, path)
				}
			}
		}
	}
	if first != nil {
		return first
	}
	return misfit(path, "fits no branch of the union %s", s.String())
}

// branchName is the name Avro's JSON encoding gives a union branch.
func branchName(t avro.Schema) string {
	if n, ok := t.(avro.NamedSchema); ok {
		return n.FullName()
	}
	return string(t.Type())
}

func avroPrimitive(w *avro.Writer, s *avro.PrimitiveSchema, v any, path string) error {
	switch s.Type() {
	case avro.Boolean:
		b, ok := v.(bool)
		if !ok {
			return misfit(path, "want a boolean, have %s", jsonKind(v))
		}
		w.WriteBool(b)
	case avro.Int, avro.Long:
		n, err := intOf(v, bitsOf(s.Type()), path)
		if err != nil {
			return err
		}
		w.WriteLong(n) // an int is written as a long is: a zigzag varint
	case avro.Float, avro.Double:
		f, err := floatOf(v, bitsOf(s.Type()), path)
		if err != nil {
			return err
		}
		if s.Type() == avro.Float {
			w.WriteFloat(float32(f))
		} else {
			w.WriteDouble(f)
		}
	case avro.String:
		str, ok := v.(string)
		if !ok {
			return misfit(path, "want a string, have %s", jsonKind(v))
		}
		w.WriteString(str)
	case avro.Bytes:
		var b []byte
		var err error
		if l, ok := s.Logical().(*avro.DecimalLogicalSchema); ok {
			b, err = decimalBytes(v, l.Scale(), 0, path)
		} else {
			b, err = base64Of(v, path)
		}
		if err != nil {
			return err
		}
		w.WriteBytes(b)
	default:
		return misfit(path, "unsupported type %s", s.Type())
	}
	return nil
}

// bitsOf is the width of an Avro int or float (32) and long or double (64).
func bitsOf(t avro.Type) int {
	if t == avro.Int || t == avro.Float {
		return 32
	}
	return 64
}

func intOf(v any, bits int, path string) (int64, error) {
	var s string
	switch n := v.(type) {
	case json.Number:
		s = string(n)
	case float64:
		if n != math.Trunc(n) {
			return 0, misfit(path, "want an integer, have %v", n)
		}
		s = strconv.FormatFloat(n, 'f', -1, 64)
	case int:
		s = strconv.Itoa(n)
	case int64:
		s = strconv.FormatInt(n, 10)
	case int32:
		s = strconv.FormatInt(int64(n), 10)
	default:
		return 0, misfit(path, "want an integer, have %s", jsonKind(v))
	}
	n, err := strconv.ParseInt(s, 10, bits)
	if err != nil {
		return 0, misfit(path, "want a %d-bit integer, have %s", bits, s)
	}
	return n, nil
}

func floatOf(v any, bits int, path string) (float64, error) {
	switch n := v.(type) {
	case json.Number:
		f, err := strconv.ParseFloat(string(n), bits)
		if err != nil {
			return 0, misfit(path, "want a number, have %s", n)
		}
		return f, nil
	case float64:
		return n, nil
	case float32:
		return float64(n), nil
	case int:
		return float64(n), nil
	case int64:
		return float64(n), nil
	case string:
		switch n {
		case "NaN":
			return math.NaN(), nil
		case "Infinity":
			return math.Inf(1), nil
		case "-Infinity":
			return math.Inf(-1), nil
		}
	}
	return 0, misfit(path, "want a number, have %s", jsonKind(v))
}

// base64Of takes bytes as they are rendered: a standard base64 string.
func base64Of(v any, path string) ([]byte, error) {
	switch b := v.(type) {
	case string:
		out, err := base64.StdEncoding.DecodeString(b)
		if err != nil {
			return nil, misfit(path, "want base64 bytes: %v", err)
		}
		return out, nil
	case []byte: // a default hamba parsed
		return b, nil
	}
	return nil, misfit(path, "want a base64 string, have %s", jsonKind(v))
}

// decimalBytes is the two's-complement big-endian unscaled value of the
// decimal v (a string or number) with scale digits after the point, size
// bytes long (sign-extended) when size > 0.
func decimalBytes(v any, scale, size int, path string) ([]byte, error) {
	var s string
	switch d := v.(type) {
	case string:
		s = d
	case json.Number:
		s = string(d)
	default:
		return nil, misfit(path, "want a decimal string, have %s", jsonKind(v))
	}
	r, ok := new(big.Rat).SetString(s)
	if !ok {
		return nil, misfit(path, "want a decimal, have %q", s)
	}
	r.Mul(r, new(big.Rat).SetInt(new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(scale)), nil)))
	if !r.IsInt() {
		return nil, misfit(path, "%s has more than %d digits after the point", s, scale)
	}
	n := r.Num()
	nbytes := (n.BitLen() + 8) / 8 // room for the sign bit
	if size > 0 {
		if nbytes > size {
			return nil, misfit(path, "%s does not fit %d bytes", s, size)
		}
		nbytes = size
	}
	out := make([]byte, nbytes)
	if n.Sign() >= 0 {
		n.FillBytes(out)
	} else {
		new(big.Int).Add(n, new(big.Int).Lsh(big.NewInt(1), uint(8*nbytes))).FillBytes(out)
	}
	return out, nil
}

// jsonKind names the JSON type of v for an error message.
func jsonKind(v any) string {
	switch v.(type) {
	case nil:
		return "null"
	case bool:
		return "a boolean"
	case json.Number, float64, int, int64:
		return "a number"
	case string:
		return "a string"
	case []any:
		return "an array"
	case map[string]any:
		return "an object"
	}
	return fmt.Sprintf("%T", v)
}

// jsonText is v as short JSON, for an error message.
func jsonText(v any) string {
	b, _ := json.Marshal(v)
	if len(b) > 64 {
		return string(b[:61]) + "..."
	}
	return string(b)
}
