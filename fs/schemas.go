package fs

import (
	"sync"

	"github.com/partfs/partfs/fs/position"
	"github.com/partfs/partfs/jsonl"
	"github.com/partfs/partfs/record"
)

// Schemas renders and encodes schema-encoded keys and values (SPEC §11);
// schema.Codecs implements it. Its lookups are cached by schema ID, so
// rendering asks its source only for an ID not seen before.
type Schemas interface {
	// AppendJSON appends the JSON of the wire-format payload p and
	// returns its schema ID. problem, when set, says why p was not
	// rendered (out is then dst), or that its schema's versions are
	// deleted (out rendered). err (the source did not answer) fails
	// the read.
	AppendJSON(dst, p []byte) (out []byte, id int, problem string, err error)
	// Encode encodes the JSON text js with the latest schema of the
	// topic's key or value subject; ok is false when the topic has no
	// such subject.
	Encode(topic string, key bool, js []byte) (payload []byte, ok bool, err error)
	// HasSubject reports whether the topic has a key or value subject,
	// without asking its source more than once in a while.
	HasSubject(topic string, key bool) (bool, error)
}

// decoder renders the records of one mount with their schema-encoded
// keys and values decoded; a nil decoder renders as SPEC §3 alone.
type decoder struct{ s Schemas }

// wireFormat reports whether b may be a schema-encoded payload (SPEC §11:
// byte 0 is 0, then a 4-byte schema ID).
func wireFormat(b []byte) bool { return len(b) >= 5 && b[0] == 0 }

// Decodes reports whether d renders r differently from SPEC §3.
func (d *decoder) Decodes(r *record.Record) bool {
	return d != nil && (wireFormat(r.Value) || wireFormat(r.Key))
}

// decodesAny reports whether d renders any of recs differently.
func (d *decoder) decodesAny(recs []record.Record) bool {
	for i := range recs {
		if d.Decodes(&recs[i]) {
			return true
		}
	}
	return false
}

var scratch = sync.Pool{New: func() any { return new([]byte) }}

// Render is position.Render for a record that d decodes.
func (d *decoder) Render(dst []byte, k position.Kind, r *record.Record) ([]byte, error) {
	if k == position.Plain {
		if r.Value == nil {
			return dst, nil
		}
		out, _, err := d.appendValue(dst, r.Value)
		return append(out, '\n'), err
	}
	out, _, err := d.AppendJSON(dst, r)
	return append(out, '\n'), err
}

// Lens returns the lengths of r's plain and JSON lines.
func (d *decoder) Lens(r *record.Record) (plain, json int64, err error) {
	b := scratch.Get().(*[]byte)
	defer scratch.Put(b)
	var vlen int
	*b, vlen, err = d.AppendJSON((*b)[:0], r)
	if r.Value != nil {
		plain = int64(vlen) + 1
	}
	return plain, int64(len(*b)) + 1, err
}

// appendValue appends the plain rendering of a value (without '\n'): its
// JSON when it decodes, else its bytes.
func (d *decoder) appendValue(dst, v []byte) ([]byte, int, error) {
	if wireFormat(v) {
		out, _, problem, err := d.s.AppendJSON(dst, v)
		if err != nil {
			return dst, 0, err
		}
		if len(out) > len(dst) || problem == "" {
			return out, len(out) - len(dst), nil
		}
	}
	return append(dst, v...), len(v), nil
}

// AppendJSON appends r's JSON line (without '\n'): SPEC §3's object with
// a decoded key or value in place of the string, followed by its
// "key_schema_id"/"value_schema_id", and "key_error"/"value_error" where
// one was not decoded (or its schema was deleted). It also returns the
// length of the value's plain rendering.
func (d *decoder) AppendJSON(dst []byte, r *record.Record) ([]byte, int, error) {
	dst = append(dst, `{"offset":`...)
	dst = jsonl.AppendInt(dst, r.Offset)
	dst = append(dst, `,"timestamp":`...)
	dst = jsonl.AppendInt(dst, r.Timestamp)
	dst, _, err := d.appendField(dst, "key", r.Key)
	if err != nil {
		return dst, 0, err
	}
	dst, vlen, err := d.appendField(dst, "value", r.Value)
	if err != nil {
		return dst, 0, err
	}
	if len(r.Headers) == 0 {
		return append(dst, noHeaders...), vlen, nil
	}
	return append(dst, headersJSON(r.Headers)...), vlen, nil
}

// emptyPrefix is the start of jsonl.Append's object for a record
// with zero offset and timestamp and null key and value; what follows it
// is the headers' part.
const emptyPrefix = `{"offset":0,"timestamp":0,"key":null,"value":null`

// noHeaders is headersJSON of no headers.
const noHeaders = `,"headers":[]}`

func headersJSON(h []record.Header) []byte {
	return jsonl.Append(nil, &record.Record{Headers: h})[len(emptyPrefix):]
}

// appendField appends ,"name":... for one key or value, and returns the
// length of its plain rendering.
func (d *decoder) appendField(dst []byte, name string, v []byte) ([]byte, int, error) {
	if wireFormat(v) {
		mark := len(dst)
		dst = append(append(append(dst, `,"`...), name...), `":`...)
		start := len(dst)
		out, id, problem, err := d.s.AppendJSON(dst, v)
		if err != nil {
			return dst[:mark], 0, err
		}
		if len(out) > start {
			vlen := len(out) - start
			out = append(append(append(out, `,"`...), name...), `_schema_id":`...)
			out = jsonl.AppendInt(out, int64(id))
			if problem != "" {
				out = appendProblem(out, name, problem)
			}
			return out, vlen, nil
		}
		dst = dst[:mark]
		dst = appendPlainField(dst, name, v)
		return appendProblem(dst, name, problem), len(v), nil
	}
	return appendPlainField(dst, name, v), len(v), nil
}

func appendProblem(dst []byte, name, problem string) []byte {
	dst = append(append(append(dst, `,"`...), name...), `_error":`...)
	return jsonl.AppendString(dst, problem)
}

// appendPlainField is jsonl.Append's rendering of one key or value
// field (a string, null, or "_b64").
func appendPlainField(dst []byte, name string, v []byte) []byte {
	if v == nil {
		return append(append(append(dst, `,"`...), name...), `":null`...)
	}
	r := record.Record{Value: v}
	obj := jsonl.Append(nil, &r) // {"offset":0,"timestamp":0,"key":null,"value":...,"headers":[]}
	field := obj[len(`{"offset":0,"timestamp":0,"key":null,`) : len(obj)-len(`,"headers":[]}`)]
	// field is "value":... or "value_b64":...
	dst = append(append(append(dst, `,"`...), name...), field[len(`"value`):]...)
	return dst
}
