package schema

import (
	"bytes"
	"encoding/json"
	"math/rand/v2"
	"testing"
)

// avroCases are schemas with JSON values of them, covering every kind of
// Avro type the rendering supports.
var avroCases = []struct{ schema, value string }{
	{`"null"`, `null`},
	{`"boolean"`, `true`},
	{`"int"`, `-2147483648`},
	{`"long"`, `9223372036854775807`},
	{`"float"`, `1.5e-7`},
	{`"double"`, `"NaN"`},
	{`"double"`, `1e21`},
	{`"string"`, `"tab\t quote\" é \u2028 \u0001"`},
	{`"bytes"`, `"AAEC/w=="`},
	{`{"type":"bytes","logicalType":"decimal","precision":10,"scale":3}`, `"-12.345"`},
	{`{"type":"fixed","name":"F","size":4}`, `"AQIDBA=="`},
	{`{"type":"fixed","name":"D","size":8,"logicalType":"decimal","precision":18,"scale":2}`, `"-0.05"`},
	{`{"type":"enum","name":"E","symbols":["A","B","C"]}`, `"C"`},
	{`{"type":"array","items":"long"}`, `[1,2,3]`},
	{`{"type":"array","items":"long"}`, `[]`},
	{`{"type":"map","values":["null","string"]}`, `{"a":null,"b\"":"x","c":"y"}`},
	{`["null","string",{"type":"array","items":"int"}]`, `[4,5]`},
	{`{"type":"record","name":"Empty","fields":[]}`, `{}`},
	{`{"type":"int","logicalType":"date"}`, `20000`},
	{`{"type":"long","logicalType":"timestamp-millis"}`, `1764410400000`},
	{`{"type":"string","logicalType":"uuid"}`, `"0e4f7c2a-9d8e-4b1a-8c3d-2f6e5a7b9c01"`},
	{`{"type":"record","name":"Order","namespace":"shop","fields":[
	  {"name":"id","type":"long"},{"name":"kind","type":{"type":"enum","name":"Kind","symbols":["X","Y"]}},
	  {"name":"again","type":"Kind"},{"name":"sum","type":{"type":"fixed","name":"Sum","size":3}},
	  {"name":"sums","type":{"type":"array","items":"Sum"}},
	  {"name":"note","type":["null","string"],"default":null},
	  {"name":"inner","type":{"type":"record","name":"Inner","fields":[{"name":"f","type":"float"},{"name":"m","type":{"type":"map","values":"Kind"}}]}},
	  {"name":"inners","type":{"type":"array","items":"shop.Inner"}}]}`,
		`{"id":7,"kind":"Y","again":"X","sum":"AQID","sums":["AAAA","////"],"note":"hi",
	  "inner":{"f":0.25,"m":{"k":"Y"}},"inners":[{"f":-1,"m":{}},{"f":3e30,"m":{"a":"X","b":"Y"}}]}`},
	{`{"type":"record","name":"List","fields":[{"name":"v","type":"int"},{"name":"next","type":["null","List"]}]}`,
		`{"v":1,"next":{"v":2,"next":{"v":3,"next":null}}}`},
}

// TestAvroProgramMatchesWalk: the compiled ops render every case, and
// every truncation and random corruption of it, as the schema walk does
// (the same JSON, or both fail).
func TestAvroProgramMatchesWalk(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for _, tc := range avroCases {
		c, err := parseAvro(tc.schema, nil)
		if err != nil {
			t.Fatalf("%s: %v", tc.schema, err)
		}
		d := json.NewDecoder(bytes.NewReader([]byte(tc.value)))
		d.UseNumber()
		var v any
		if err := d.Decode(&v); err != nil {
			t.Fatal(err)
		}
		data, err := c.encode(v)
		if err != nil {
			t.Fatalf("%s: encode %s: %v", tc.schema, tc.value, err)
		}
		got, err := c.appendJSON(nil, data)
		if err != nil {
			t.Fatalf("%s: %v", tc.schema, err)
		}
		var back any
		if err := json.Unmarshal(got, &back); err != nil {
			t.Fatalf("%s: rendered %s: %v", tc.schema, got, err)
		}
		inputs := [][]byte{data}
		for n := range data {
			inputs = append(inputs, data[:n])
		}
		for range 200 {
			b := bytes.Clone(data)
			for range 1 + rng.IntN(3) {
				if len(b) > 0 {
					b[rng.IntN(len(b))] = byte(rng.Uint32())
				}
			}
			inputs = append(inputs, b)
		}
		for _, in := range inputs {
			want, werr := walkAvroJSON(c.s, []byte("prefix"), in)
			got, gerr := c.appendJSON([]byte("prefix"), in)
			if (werr == nil) != (gerr == nil) || werr == nil && !bytes.Equal(got, want) {
				t.Fatalf("%s on %x:\nwalk %s (%v)\nops  %s (%v)", tc.schema, in, want, werr, got, gerr)
			}
		}
	}
}
