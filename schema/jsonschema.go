package schema

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

// jsonCodec validates JSON payloads against a JSON Schema
// (santhosh-tekuri/jsonschema) on write; on read the payload is the JSON
// itself.
type jsonCodec struct{ s *jsonschema.Schema }

const jsonMainURL = "partfs:///schema.json"

// parseJSONSchema compiles text, with refs (reference name to schema
// text) as resources of those names.
func parseJSONSchema(text string, refs map[string]string) (*jsonCodec, error) {
	c := jsonschema.NewCompiler()
	add := func(url, t string) error {
		doc, err := jsonschema.UnmarshalJSON(strings.NewReader(t))
		if err != nil {
			return err
		}
		return c.AddResource(url, doc)
	}
	for name, t := range refs {
		if err := add(name, t); err != nil {
			return nil, fmt.Errorf("referenced schema %s: %w", name, err)
		}
	}
	if err := add(jsonMainURL, text); err != nil {
		return nil, err
	}
	s, err := c.Compile(jsonMainURL)
	if err != nil {
		return nil, err
	}
	return &jsonCodec{s: s}, nil
}

// appendJSON appends the payload's JSON, compacted to one line.
func appendCompactJSON(dst, data []byte) ([]byte, error) {
	b := bytes.NewBuffer(dst)
	if err := json.Compact(b, data); err != nil {
		return dst, fmt.Errorf("json: %w", err)
	}
	return b.Bytes(), nil
}

// encode validates js and returns it compacted.
func (c *jsonCodec) encode(js []byte) ([]byte, error) {
	v, err := jsonschema.UnmarshalJSON(bytes.NewReader(js))
	if err != nil {
		return nil, &FieldError{Path: "$", Reason: err.Error()}
	}
	if err := c.s.Validate(v); err != nil {
		var ve *jsonschema.ValidationError
		if errors.As(err, &ve) {
			leaf := ve
			for len(leaf.Causes) > 0 {
				leaf = leaf.Causes[0]
			}
			path := "$"
			for _, p := range leaf.InstanceLocation {
				path += "." + p
			}
			return nil, &FieldError{Path: path, Reason: leaf.Error()}
		}
		return nil, &FieldError{Path: "$", Reason: err.Error()}
	}
	return appendCompactJSON(nil, js)
}
