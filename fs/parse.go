package fs

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"

	"github.com/partfs/partfs/partlog"
	"github.com/partfs/partfs/record"
)

// jsonInput is one log.jsonl line as written by a user.
type jsonInput struct {
	Offset    *json.Number      `json:"offset"`
	Timestamp *int64            `json:"timestamp"`
	Key       *string           `json:"key"`
	Value     *string           `json:"value"`
	KeyB64    *string           `json:"key_b64"`
	ValueB64  *string           `json:"value_b64"`
	Headers   []json.RawMessage `json:"headers"`
}

// jsonRecords parses complete lines of data as JSON objects (strict: any
// bad line fails all of them with an error wrapping ErrInvalid). It
// returns the records and the trailing partial line.
func jsonRecords(data []byte) ([]record.Record, []byte, error) {
	var recs []record.Record
	for line := 1; ; line++ {
		i := bytes.IndexByte(data, '\n')
		if i < 0 {
			return recs, data, nil
		}
		r, err := parseJSONLine(data[:i])
		if err != nil {
			return nil, nil, fmt.Errorf("line %d: %w", line, err)
		}
		recs = append(recs, r)
		data = data[i+1:]
	}
}

func invalid(format string, args ...any) error {
	return fmt.Errorf(format+": %w", append(args, partlog.ErrInvalid)...)
}

func parseJSONLine(line []byte) (record.Record, error) {
	var in jsonInput
	dec := json.NewDecoder(bytes.NewReader(line))
	dec.DisallowUnknownFields()
	dec.UseNumber()
	if err := dec.Decode(&in); err != nil {
		return record.Record{}, invalid("not a record object (%v)", err)
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return record.Record{}, invalid("trailing data after the object")
	}
	if bytes.TrimSpace(line)[0] != '{' {
		return record.Record{}, invalid("not an object")
	}
	if err := checkStrictJSON(line); err != nil {
		return record.Record{}, err
	}
	var r record.Record
	var err error
	if r.Key, err = bytesField("key", in.Key, in.KeyB64); err != nil {
		return r, err
	}
	if r.Value, err = bytesField("value", in.Value, in.ValueB64); err != nil {
		return r, err
	}
	if in.Timestamp != nil {
		if *in.Timestamp < 0 {
			return r, invalid("negative timestamp %d", *in.Timestamp)
		}
		r.Timestamp = *in.Timestamp
	}
	for _, raw := range in.Headers {
		h, err := parseHeader(raw)
		if err != nil {
			return r, err
		}
		r.Headers = append(r.Headers, h)
	}
	return r, nil
}

func bytesField(name string, s, b64 *string) ([]byte, error) {
	switch {
	case s != nil && b64 != nil:
		return nil, invalid("both %s and %s_b64", name, name)
	case s != nil:
		return []byte(*s), nil
	case b64 != nil:
		b, err := base64.StdEncoding.DecodeString(*b64)
		if err != nil {
			return nil, invalid("%s_b64: %v", name, err)
		}
		return b, nil
	}
	return nil, nil
}

// parseHeader reads ["key", value] where value is a string, null or
// {"b64":"..."}.
func parseHeader(raw json.RawMessage) (record.Header, error) {
	var parts []json.RawMessage
	if err := json.Unmarshal(raw, &parts); err != nil || len(parts) != 2 {
		return record.Header{}, invalid("header %s: want [key, value]", raw)
	}
	k, err := headerPart(parts[0])
	if err != nil || k == nil {
		return record.Header{}, invalid("header key %s", parts[0])
	}
	v, err := headerPart(parts[1])
	if err != nil {
		return record.Header{}, err
	}
	return record.Header{Key: string(k), Value: v}, nil
}

func headerPart(raw json.RawMessage) ([]byte, error) {
	if string(bytes.TrimSpace(raw)) == "null" {
		return nil, nil
	}
	var s string
	if err := json.Unmarshal(raw, &s); err == nil {
		return []byte(s), nil
	}
	var o struct {
		B64 *string `json:"b64"`
	}
	if err := json.Unmarshal(raw, &o); err != nil || o.B64 == nil {
		return nil, invalid("header value %s", raw)
	}
	b, err := base64.StdEncoding.DecodeString(*o.B64)
	if err != nil {
		return nil, invalid("header b64 %s", raw)
	}
	return b, nil
}
