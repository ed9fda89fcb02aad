package schema

import (
	"errors"
	"fmt"
	"math"
	"strconv"
	"unicode/utf8"

	"github.com/hamba/avro/v2"

	"github.com/partfs/partfs/jsonl"
)

// The schema walk the compiled ops (avroprog.go) replaced, kept as the
// reference the ops are compared with.

func walkAvroJSON(s avro.Schema, dst, data []byte) ([]byte, error) {
	return decodeAvro(dst, data, func(d *avroDecoder, dst []byte) []byte { return d.value(dst, s) })
}

func (d *avroDecoder) value(dst []byte, s avro.Schema) []byte {
	if d.failed() {
		return dst
	}
	r := d.r
	switch s := s.(type) {
	case *avro.RefSchema:
		return d.value(dst, s.Schema())
	case *avro.NullSchema:
		return append(dst, "null"...)
	case *avro.RecordSchema:
		dst = append(dst, '{')
		for i, f := range s.Fields() {
			if i > 0 {
				dst = append(dst, ',')
			}
			dst = jsonl.AppendString(dst, f.Name())
			dst = append(dst, ':')
			dst = d.value(dst, f.Type())
		}
		return append(dst, '}')
	case *avro.EnumSchema:
		i := int(r.ReadInt())
		sym, ok := s.Symbol(i)
		if !ok && r.Error == nil {
			d.err = fmt.Errorf("avro: enum %s has no symbol %d", s.FullName(), i)
		}
		return jsonl.AppendString(dst, sym)
	case *avro.ArraySchema:
		return d.walkBlocks(dst, '[', ']', func(dst []byte) []byte { return d.value(dst, s.Items()) })
	case *avro.MapSchema:
		return d.walkBlocks(dst, '{', '}', func(dst []byte) []byte {
			return d.value(append(appendString(dst, d.bytes()), ':'), s.Values())
		})
	case *avro.UnionSchema:
		i := int(r.ReadLong())
		types := s.Types()
		if i < 0 || i >= len(types) {
			if r.Error == nil {
				d.err = fmt.Errorf("avro: union branch %d of %d", i, len(types))
			}
			return dst
		}
		return d.value(dst, types[i])
	case *avro.FixedSchema:
		b := make([]byte, s.Size())
		r.Read(b)
		if l, ok := s.Logical().(*avro.DecimalLogicalSchema); ok {
			return appendDecimal(dst, b, l.Scale())
		}
		return appendBase64(dst, b)
	case *avro.PrimitiveSchema:
		return d.primitive(dst, s)
	}
	d.err = fmt.Errorf("avro: unsupported schema %s", s.Type())
	return dst
}

// blocks reads the blocks of an array or map, calling item for each item.
func (d *avroDecoder) blocks(item func()) {
	for !d.failed() {
		n, _ := d.r.ReadBlockHeader()
		if n == 0 || d.failed() {
			return
		}
		if d.budget -= int(min(n, math.MaxInt32)); d.budget < 0 || n < 0 {
			d.err = errors.New("avro: more items than the payload can hold")
			return
		}
		for ; n > 0 && !d.failed(); n-- {
			item()
		}
	}
}

func (d *avroDecoder) primitive(dst []byte, s *avro.PrimitiveSchema) []byte {
	r := d.r
	switch s.Type() {
	case avro.Boolean:
		return strconv.AppendBool(dst, r.ReadBool())
	case avro.Int:
		return strconv.AppendInt(dst, int64(r.ReadInt()), 10)
	case avro.Long:
		return strconv.AppendInt(dst, r.ReadLong(), 10)
	case avro.Float:
		return appendFloat(dst, float64(r.ReadFloat()), 32)
	case avro.Double:
		return appendFloat(dst, r.ReadDouble(), 64)
	case avro.String:
		b := d.bytes()
		if !utf8.Valid(b) && !d.failed() {
			d.err = errors.New("avro: a string that is not UTF-8")
		}
		return appendString(dst, b)
	case avro.Bytes:
		b := d.bytes()
		if l, ok := s.Logical().(*avro.DecimalLogicalSchema); ok {
			return appendDecimal(dst, b, l.Scale())
		}
		return appendBase64(dst, b)
	}
	d.err = fmt.Errorf("avro: unsupported type %s", s.Type())
	return dst
}

// walkBlocks writes the items of an array's or a map's blocks, each by
// item, between open and close and separated by commas.
func (d *avroDecoder) walkBlocks(dst []byte, open, close byte, item func([]byte) []byte) []byte {
	dst = append(dst, open)
	n := 0
	d.blocks(func() {
		if n > 0 {
			dst = append(dst, ',')
		}
		n++
		dst = item(dst)
	})
	return append(dst, close)
}
