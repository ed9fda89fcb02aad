package fs

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"

	"github.com/partfs/partfs/partlog"
	"github.com/partfs/partfs/record"
)

// encodes reports whether writes to p's topic are encoded with a schema:
// the topic has a value or a key subject (SPEC §11).
func (p *part) encodes() (value, key bool, err error) {
	if p.schemas == nil {
		return false, false, nil
	}
	topic := p.log.Topic()
	if value, err = p.schemas.s.HasSubject(topic, false); err != nil {
		return false, false, err
	}
	key, err = p.schemas.s.HasSubject(topic, true)
	return value, key, err
}

// encodePlain makes the records of complete plain lines on a topic with a
// value subject: each line is JSON text, encoded with the subject's latest
// schema. Any line that is not, or does not fit, fails all of them.
func (p *part) encodePlain(recs []record.Record, lines []byte) ([]record.Record, error) {
	for n := 1; len(lines) > 0; n++ {
		i := bytes.IndexByte(lines, '\n')
		if i < 0 {
			break
		}
		v, err := p.encodeValue(false, lines[:i])
		if err != nil {
			return nil, fmt.Errorf("line %d: %w", n, err)
		}
		recs = append(recs, record.Record{Value: v})
		lines = lines[i+1:]
	}
	return recs, nil
}

func (p *part) encodeValue(key bool, js []byte) ([]byte, error) {
	payload, _, err := p.schemas.s.Encode(p.log.Topic(), key, js)
	return payload, err
}

// encodeJSONLines rewrites the complete log.jsonl lines of data for a
// topic with subjects: a "value" (or "key") that is a JSON object, array,
// number or boolean becomes the "value_b64" of its encoding; the
// "value_schema_id"/"key_schema_id" a rendered line carries are dropped.
// Other lines are left as they are, for the line parser to judge.
func (p *part) encodeJSONLines(data []byte, value, key bool) ([]byte, error) {
	var out []byte
	for n := 1; len(data) > 0; n++ {
		i := bytes.IndexByte(data, '\n')
		if i < 0 {
			break
		}
		line, err := p.encodeJSONLine(data[:i], value, key)
		if err != nil {
			return nil, fmt.Errorf("line %d: %w", n, err)
		}
		out = append(append(out, line...), '\n')
		data = data[i+1:]
	}
	return out, nil
}

func (p *part) encodeJSONLine(line []byte, value, key bool) ([]byte, error) {
	var obj map[string]json.RawMessage
	if json.Unmarshal(line, &obj) != nil {
		return line, nil // the line parser says what is wrong
	}
	changed := false
	for _, f := range []struct {
		name string
		on   bool
	}{{"value", value}, {"key", key}} {
		if _, ok := obj[f.name+"_schema_id"]; ok && f.on {
			delete(obj, f.name+"_schema_id")
			changed = true
		}
		raw, ok := obj[f.name]
		if !ok || !f.on || len(raw) == 0 || raw[0] == '"' || raw[0] == 'n' {
			continue
		}
		payload, err := p.encodeValue(f.name == "key", raw)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", f.name, err)
		}
		delete(obj, f.name)
		b64, _ := json.Marshal(base64.StdEncoding.EncodeToString(payload))
		obj[f.name+"_b64"] = b64
		changed = true
	}
	if !changed {
		return line, nil
	}
	out, err := json.Marshal(obj)
	if err != nil {
		return nil, fmt.Errorf("%v: %w", err, partlog.ErrInvalid)
	}
	return out, nil
}

// appendDecoding is append of records some of which p's renderings
// decode: their lengths are left to the layout's next scan.
func (p *part) appendDecoding(log partlog.Log, recs []record.Record) error {
	first, err := log.Append(recs)
	if err != nil {
		return err
	}
	values := 0
	for i := range recs {
		values += len(recs[i].Value)
	}
	p.fsys.opt.Metrics.Appended(p.log.Topic(), p.log.Partition(), values, len(recs))
	_ = first
	return nil
}
