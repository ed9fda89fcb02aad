package schema

import (
	"errors"
	"fmt"
	"math"
	"strconv"

	"github.com/hamba/avro/v2"

	"github.com/partfs/partfs/jsonl"
)

// avroOp appends the JSON of one Avro value read from d to dst. A schema
// is compiled once into a tree of ops (compileAvro), so rendering a
// payload does no type switch, no schema lookup and no field-name
// escaping per value.
type avroOp func(d *avroDecoder, dst []byte) []byte

// avroCompiler compiles one schema; named holds the op of each named type
// compiled so far, so a recursive reference reaches its type's op.
type avroCompiler struct{ named map[string]*avroOp }

func compileAvro(s avro.Schema) avroOp {
	c := avroCompiler{named: map[string]*avroOp{}}
	return c.op(s)
}

func (c *avroCompiler) op(s avro.Schema) avroOp {
	switch s := s.(type) {
	case *avro.RefSchema:
		return c.ref(s.Schema())
	case *avro.NullSchema:
		return func(d *avroDecoder, dst []byte) []byte { return append(dst, "null"...) }
	case *avro.RecordSchema:
		return c.record(s)
	case *avro.EnumSchema:
		return enumOp(s)
	case *avro.ArraySchema:
		return arrayOp(c.op(s.Items()))
	case *avro.MapSchema:
		return mapOp(c.op(s.Values()))
	case *avro.UnionSchema:
		return c.union(s)
	case *avro.FixedSchema:
		return fixedOp(s)
	case *avro.PrimitiveSchema:
		return primitiveOp(s)
	}
	err := fmt.Errorf("avro: unsupported schema %s", s.Type())
	return func(d *avroDecoder, dst []byte) []byte { return d.fail(dst, err) }
}

// ref is the op of the named type s; a record's goes through its slot, as
// the record may still be being compiled (a recursive reference).
func (c *avroCompiler) ref(s avro.NamedSchema) avroOp {
	if slot, ok := c.named[s.FullName()]; ok {
		return func(d *avroDecoder, dst []byte) []byte { return (*slot)(d, dst) }
	}
	return c.op(s)
}

func (c *avroCompiler) record(s *avro.RecordSchema) avroOp {
	slot := new(avroOp)
	c.named[s.FullName()] = slot
	fields := s.Fields()
	keys := make([][]byte, len(fields)) // `{"name":` or `,"name":`
	ops := make([]avroOp, len(fields))
	for i, f := range fields {
		sep := byte(',')
		if i == 0 {
			sep = '{'
		}
		keys[i] = append(jsonl.AppendString([]byte{sep}, f.Name()), ':')
		ops[i] = c.op(f.Type())
	}
	*slot = func(d *avroDecoder, dst []byte) []byte {
		if len(keys) == 0 {
			return append(dst, "{}"...)
		}
		for i, op := range ops {
			if d.failed() {
				return dst
			}
			dst = op(d, append(dst, keys[i]...))
		}
		return append(dst, '}')
	}
	return *slot
}

func enumOp(s *avro.EnumSchema) avroOp {
	syms := make([][]byte, len(s.Symbols()))
	for i, sym := range s.Symbols() {
		syms[i] = jsonl.AppendString(nil, sym)
	}
	return func(d *avroDecoder, dst []byte) []byte {
		i := int(d.r.ReadInt())
		if d.failed() {
			return dst
		}
		if i < 0 || i >= len(syms) {
			return d.fail(dst, fmt.Errorf("avro: enum %s has no symbol %d", s.FullName(), i))
		}
		return append(dst, syms[i]...)
	}
}

func arrayOp(item avroOp) avroOp {
	return blocksOp('[', ']', item)
}

func mapOp(value avroOp) avroOp {
	return blocksOp('{', '}', func(d *avroDecoder, dst []byte) []byte {
		dst = appendString(dst, d.bytes())
		return value(d, append(dst, ':'))
	})
}

// blocksOp renders an array's or map's blocks of items between open and
// close, comma-separated.
func blocksOp(open, close byte, item avroOp) avroOp {
	return func(d *avroDecoder, dst []byte) []byte {
		dst = append(dst, open)
		first := true
		for n := d.block(); n > 0; n = d.block() {
			for ; n > 0 && !d.failed(); n-- {
				if !first {
					dst = append(dst, ',')
				}
				first = false
				dst = item(d, dst)
			}
		}
		return append(dst, close)
	}
}

// block reads the header of an array's or map's next block and returns
// its item count; 0 at the end or on failure.
func (d *avroDecoder) block() int64 {
	if d.failed() {
		return 0
	}
	n, _ := d.r.ReadBlockHeader()
	if n == 0 || d.failed() {
		return 0
	}
	if d.budget -= int(min(n, math.MaxInt32)); d.budget < 0 || n < 0 {
		d.err = errors.New("avro: more items than the payload can hold")
		return 0
	}
	return n
}

func (c *avroCompiler) union(s *avro.UnionSchema) avroOp {
	types := s.Types()
	ops := make([]avroOp, len(types))
	for i, t := range types {
		ops[i] = c.op(t)
	}
	return func(d *avroDecoder, dst []byte) []byte {
		i := d.r.ReadLong()
		if d.failed() {
			return dst
		}
		if i < 0 || i >= int64(len(ops)) {
			return d.fail(dst, fmt.Errorf("avro: union branch %d of %d", i, len(ops)))
		}
		return ops[i](d, dst)
	}
}

func fixedOp(s *avro.FixedSchema) avroOp {
	size := s.Size()
	if l, ok := s.Logical().(*avro.DecimalLogicalSchema); ok {
		scale := l.Scale()
		return func(d *avroDecoder, dst []byte) []byte { return appendDecimal(dst, d.fixed(size), scale) }
	}
	return func(d *avroDecoder, dst []byte) []byte { return appendBase64(dst, d.fixed(size)) }
}

// fixed reads n bytes into d.buf, valid until the next read of bytes.
func (d *avroDecoder) fixed(n int) []byte {
	if cap(d.buf) < n {
		d.buf = make([]byte, n, max(n, 256))
	}
	d.buf = d.buf[:n]
	d.r.Read(d.buf)
	return d.buf
}

func primitiveOp(s *avro.PrimitiveSchema) avroOp {
	switch s.Type() {
	case avro.Boolean:
		return func(d *avroDecoder, dst []byte) []byte { return strconv.AppendBool(dst, d.r.ReadBool()) }
	case avro.Int:
		return func(d *avroDecoder, dst []byte) []byte { return jsonl.AppendInt(dst, int64(d.r.ReadInt())) }
	case avro.Long:
		return func(d *avroDecoder, dst []byte) []byte { return jsonl.AppendInt(dst, d.r.ReadLong()) }
	case avro.Float:
		return func(d *avroDecoder, dst []byte) []byte { return appendFloat(dst, float64(d.r.ReadFloat()), 32) }
	case avro.Double:
		return func(d *avroDecoder, dst []byte) []byte { return appendFloat(dst, d.r.ReadDouble(), 64) }
	case avro.String:
		return func(d *avroDecoder, dst []byte) []byte {
			b := d.bytes()
			out, valid := jsonl.AppendValidString(dst, b)
			if !valid {
				return d.fail(dst, errNotUTF8)
			}
			return out
		}
	case avro.Bytes:
		if l, ok := s.Logical().(*avro.DecimalLogicalSchema); ok {
			scale := l.Scale()
			return func(d *avroDecoder, dst []byte) []byte { return appendDecimal(dst, d.bytes(), scale) }
		}
		return func(d *avroDecoder, dst []byte) []byte { return appendBase64(dst, d.bytes()) }
	}
	err := fmt.Errorf("avro: unsupported type %s", s.Type())
	return func(d *avroDecoder, dst []byte) []byte { return d.fail(dst, err) }
}

var errNotUTF8 = errors.New("avro: a string that is not UTF-8")

// fail records err (the first failure wins) and returns dst.
func (d *avroDecoder) fail(dst []byte, err error) []byte {
	if !d.failed() {
		d.err = err
	}
	return dst
}
