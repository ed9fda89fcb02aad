package jsonl

import (
	"errors"
	"testing"

	"github.com/partfs/partfs/partlog"
)

// TestStrictJSONInput: what encoding/json would accept by altering it is
// EINVAL; what it would take as written still parses.
func TestStrictJSONInput(t *testing.T) {
	for _, line := range []string{
		"{\"value\":\"a\xffb\"}",   // invalid UTF-8
		`{"value":"\ud800"}`,       // lone high surrogate
		`{"value":"\udc00x"}`,      // lone low surrogate
		`{"value":"\ud800\u0041"}`, // high surrogate then not a low one
		`{"Value":"x"}`,            // field name in another case
		`{"VALUE":"x"}`,
		`{"value":"x","value":"y"}`, // duplicate field
		`{"key":"k","value":"x","key":"j"}`,
		`{"headers":[["h",{"B64":"eA=="}]]}`, // header object key in another case
		`{"headers":[["h",{"b64":"eA==","b64":"eQ=="}]]}`,
	} {
		if _, err := ParseLine([]byte(line)); !errors.Is(err, partlog.ErrInvalid) {
			t.Errorf("%s: %v, want EINVAL", line, err)
		}
	}
	for line, want := range map[string]string{
		`{"value":"\ud83d\ude00"}`:          "\U0001F600",
		`{"value":"caf\u00e9 \"q\" \\ é"}`:  "café \"q\" \\ é",
		`{ "key" : "k" , "value" : "v\n" }`: "v\n",
		`{"value":"x","headers":[["h",{"b64":"eA=="}],["n",null],["s","t"]],"timestamp":5}`: "x",
	} {
		r, err := ParseLine([]byte(line))
		if err != nil || string(r.Value) != want {
			t.Errorf("%s: %q %v, want %q", line, r.Value, err, want)
		}
	}
}
