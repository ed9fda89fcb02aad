package internaltopic

import (
	"math"
	"strings"
	"unicode/utf8"
)

// kind is a field type of a metadata schema.
type kind int

const (
	kInt8 kind = iota
	kInt16
	kInt32
	kInt64
	kUint16
	kBool
	kFloat64
	kString
	kBytes
	kUUID
	kInt32s
	kStrings
	kUUIDs
	kStructs
	kStruct // one struct (here only as a tagged field)
)

// field is one field of a schema: present in plain form from version min
// on (never when min < 0), or, when tag >= 0, as tagged field tag from
// version tagMin on.
type field struct {
	name        string
	kind        kind
	min         int16
	tag, tagMin int
	fields      []field // of kStructs and kStruct
}

// schema is one metadata record type: its API key, name and highest
// known version.
type schema struct {
	key    int
	name   string
	maxVer int16
	fields []field
}

// fieldFrom is a plain field from version min on; f a plain field of
// every version; tagged a tagged field.
func fieldFrom(name string, k kind, min int16) field {
	return field{name: name, kind: k, min: min, tag: -1}
}

func f(name string, k kind) field { return fieldFrom(name, k, 0) }

func tagged(name string, k kind, tag, from int) field {
	return field{name: name, kind: k, min: -1, tag: tag, tagMin: from}
}

func structs(name string, fs ...field) field {
	return field{name: name, kind: kStructs, tag: -1, fields: fs}
}

// taggedStruct is a struct carried as tagged field tag from version from.
func taggedStruct(name string, tag, from int, fs ...field) field {
	return field{name: name, kind: kStruct, min: -1, tag: tag, tagMin: from, fields: fs}
}

// decodeMetadata decodes a __cluster_metadata record value: frame
// version 1, API key and version as unsigned varints, then the record.
func decodeMetadata(value []byte) (Decoded, error) {
	if value == nil {
		return Decoded{}, errorf("metadata record without a value")
	}
	r := reader{b: value}
	frame := r.uvarint()
	key := int(r.uvarint())
	ver := int16(r.uvarint())
	if r.err != nil {
		return Decoded{}, errorf("metadata record frame: %v", r.err)
	}
	if frame != 1 {
		return Decoded{}, errorf("metadata record frame version %d", frame)
	}
	s, ok := schemaByKey[key]
	if !ok {
		return Decoded{}, errorf("unknown metadata record type %d", key)
	}
	o, err := r.versioned(s.name, "record", ver, s.maxVer, s.fields)
	if err != nil {
		return Decoded{}, err
	}
	return Decoded{Type: s.name, Value: o}, nil
}

// versioned reads the fields of version ver (known up to maxVer) to the
// end of r and returns them after the version. what names the value in
// errors, part what bytes left after it are after.
func (r *reader) versioned(what, part string, ver, maxVer int16, fields []field) (Object, error) {
	if r.err == nil && (ver < 0 || ver > maxVer) {
		return nil, errorf("%s version %d (known up to %d)", what, ver, maxVer)
	}
	o := r.fields(fields, ver)
	if r.err == nil && len(r.b) > 0 {
		r.fail("%d bytes after the %s", len(r.b), part)
	}
	if r.err != nil {
		return nil, errorf("%s version %d: %v", what, ver, r.err)
	}
	return append(Object{{"version", ver}}, o...), nil
}

// fields reads a struct: its plain fields of version ver in order, then
// its tagged fields (unknown tags are skipped).
func (r *reader) fields(fs []field, ver int16) Object {
	var o Object
	for i := range fs {
		fd := &fs[i]
		if fd.tag < 0 && fd.min >= 0 && ver >= fd.min {
			o = append(o, Field{fd.name, r.value(fd, ver)})
		}
	}
	n := int(r.uvarint())
	for range n {
		if r.err != nil {
			break
		}
		tag := int(r.uvarint())
		data := r.take(int(r.uvarint()))
		fd := taggedField(fs, tag, ver)
		if fd == nil {
			continue
		}
		sub := reader{b: data}
		v := sub.value(fd, ver)
		if sub.err != nil {
			r.fail("tagged field %s: %v", fd.name, sub.err)
		}
		o = append(o, Field{fd.name, v})
	}
	return o
}

func taggedField(fs []field, tag int, ver int16) *field {
	for i := range fs {
		if fs[i].tag == tag && int(ver) >= fs[i].tagMin {
			return &fs[i]
		}
	}
	return nil
}

// value reads one field's value.
func (r *reader) value(fd *field, ver int16) any {
	switch fd.kind {
	case kInt8:
		return r.int8()
	case kInt16:
		return r.int16()
	case kInt32:
		return r.int32()
	case kInt64:
		return r.int64()
	case kUint16:
		return uint16(r.int16())
	case kBool:
		return r.int8() != 0
	case kFloat64:
		return math.Float64frombits(uint64(r.int64()))
	case kString:
		return r.str()
	case kBytes:
		return Bytes(r.compactBytes())
	case kUUID:
		return r.uuid()
	case kStruct:
		return r.fields(fd.fields, ver)
	}
	return r.array(fd, ver)
}

func (r *reader) str() any {
	b := r.compactBytes()
	if b == nil {
		return nil
	}
	if !utf8.Valid(b) {
		return strings.ToValidUTF8(string(b), "\uFFFD")
	}
	return string(b)
}

// array reads an array field; null is nil.
func (r *reader) array(fd *field, ver int16) any {
	minSize := map[kind]int{kInt32s: 4, kStrings: 1, kUUIDs: 16, kStructs: 1}[fd.kind]
	n := r.arrayLen(minSize)
	if n < 0 || r.err != nil {
		return nil
	}
	out := make([]any, 0, n)
	for range n {
		switch fd.kind {
		case kInt32s:
			out = append(out, r.int32())
		case kStrings:
			out = append(out, r.str())
		case kUUIDs:
			out = append(out, r.uuid())
		default:
			out = append(out, r.fields(fd.fields, ver))
		}
		if r.err != nil {
			return nil
		}
	}
	return out
}
