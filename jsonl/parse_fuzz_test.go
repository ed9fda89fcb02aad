package jsonl

import (
	"bytes"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/partfs/partfs/partlog"
	"github.com/partfs/partfs/record"
)

// jsonLineSeeds are log.jsonl lines of every shape the parser takes or
// refuses.
var jsonLineSeeds = []string{
	`{"value":"plain"}`, `{}`, ` { "key" : "k" , "value" : "v" } `, "{\"value\":\"a\"}\r",
	`{"offset":12,"timestamp":1764410400000,"key":null,"value":"x","headers":[]}`,
	`{"offset":"12","value":"x"}`, `{"offset":"x","value":"x"}`, `{"offset":1.5e3}`, `{"offset":-0.0E+1}`,
	`{"offset":true}`, `{"offset":01}`, `{"offset":1.}`, `{"offset":null}`,
	`{"timestamp":-0}`, `{"timestamp":-1}`, `{"timestamp":9223372036854775807}`, `{"timestamp":9223372036854775808}`,
	`{"timestamp":1.0}`, `{"timestamp":1e3}`, `{"timestamp":"5"}`, `{"timestamp":null}`,
	`{"key_b64":"AP8=","value_b64":"eA=="}`, `{"key":"a","key_b64":"YQ=="}`, `{"key":null,"key_b64":"YQ=="}`,
	`{"value_b64":"%%%"}`, `{"value_b64":"eA"}`, `{"value_b64":""}`, `{"value":""}`,
	`{"value":"caf\u00e9 \"q\" \\ \/ \b\f\n\r\t"}`, `{"value":"\ud83d\ude00"}`, `{"value":"\ud800"}`,
	`{"value":"\udc00x"}`, `{"value":"\ud800\u0041"}`, `{"value":"\uZZZZ"}`, `{"value":"\x"}`,
	"{\"value\":\"a\x01b\"}", "{\"value\":\"a\xffb\"}", `{"value":"é東京"}`,
	`{"Value":"x"}`, `{"value":"x","value":"y"}`, `{"v\u0061lue":"x"}`, `{"extra":1}`,
	`{"value":1}`, `{"value":{"b64":"eA=="}}`, `{"value":["x"]}`, `{"value":nul}`, `{"value":nullx}`,
	`{"headers":[["h",{"b64":"AA=="}],["n",null],["s","t"],["e",""]]}`, `{"headers":null}`,
	`{"headers":[["a"]]}`, `{"headers":[[1,"a"]]}`, `{"headers":[[null,"a"]]}`, `{"headers":[null]}`,
	`{"headers":[["h",{"B64":"eA=="}]]}`, `{"headers":[["h",{"b64":"eA==","b64":"eQ=="}]]}`,
	`{"headers":[["h",{"b64":null}]]}`, `{"headers":[["h",{}]]}`, `{"headers":[["h","v","w"]]}`,
	`{"headers":[[{"b64":"AA=="},"v"]]}`, `{"headers":[["h","v"],]}`, `{"headers":{}}`,
	`{"value":"a",}`, `{,"value":"a"}`, `{"value":"a"} {"value":"b"}`, `{"value":"a"}x`, `[1,2]`, `null`, ``,
	`"value"`, `{"value":"a"`, `{"value"`, `{"value":`, `{"value":"a\`, `{"value" "a"}`,
	// Each refused for one reason a one-line slip in the parser would miss:
	// a control byte past a whole plain word, one after an escape, a bad
	// hex digit, a timestamp whose tenfold wraps uint64, a string offset
	// with a number only at its start; and a negative exponent, taken.
	"{\"value\":\"abcdefghijk\x01lmnop\"}", "{\"value\":\"\\n\x1f\"}", `{"value":"\u00eG"}`,
	`{"timestamp":20000000000000000000}`, `{"offset":"1x"}`, `{"offset":1e-5}`,
}

// FuzzJSONLine: the one-pass parser takes exactly the lines the parser
// before it (encoding/json and a strict scan) took, with the same records,
// and refuses the others with EINVAL.
func FuzzJSONLine(f *testing.F) {
	for _, s := range jsonLineSeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, line []byte) {
		if bytes.IndexByte(line, '\n') >= 0 {
			return // a line never holds its end
		}
		if err := compareJSONLine(line); err != nil {
			t.Fatal(err)
		}
	})
}

// compareJSONLine parses line with both parsers and reports a difference.
func compareJSONLine(line []byte) error {
	want, wantErr := refParseJSONLine(line)
	got, err := ParseLine(line)
	switch {
	case (err == nil) != (wantErr == nil):
		return fmt.Errorf("%q: err %v, the reference's %v", line, err, wantErr)
	case err != nil && !errors.Is(err, partlog.ErrInvalid):
		return fmt.Errorf("%q: err %v, not EINVAL", line, err)
	case err == nil && !sameRecord(got, want):
		return fmt.Errorf("%q: %+v, the reference's %+v", line, got, want)
	}
	return nil
}

// sameRecord compares records field by field, nil and empty apart.
func sameRecord(a, b record.Record) bool {
	if !sameBytes(a.Key, b.Key) || !sameBytes(a.Value, b.Value) || a.Timestamp != b.Timestamp || len(a.Headers) != len(b.Headers) {
		return false
	}
	if (a.Headers == nil) != (b.Headers == nil) {
		return false
	}
	for i := range a.Headers {
		if a.Headers[i].Key != b.Headers[i].Key || !sameBytes(a.Headers[i].Value, b.Headers[i].Value) {
			return false
		}
	}
	return true
}

func sameBytes(a, b []byte) bool { return (a == nil) == (b == nil) && bytes.Equal(a, b) }

func TestJSONLineSeedsMatchReference(t *testing.T) {
	for _, s := range jsonLineSeeds {
		if err := compareJSONLine([]byte(s)); err != nil {
			t.Error(err)
		}
	}
}

// TestJSONRecordsKeepEachOther: records of one write, some unescaped in
// the shared buffer and some in the write's own bytes, keep their bytes
// once all are parsed.
func TestJSONRecordsKeepEachOther(t *testing.T) {
	var in []byte
	var want []string
	for i := 0; i < 300; i++ {
		v := fmt.Sprintf("v%d", i)
		if i%3 == 0 {
			v += "\n\"é\""
		}
		want = append(want, v)
		in = fmt.Appendf(in, `{"value":%q,"value_b64":null,"headers":[["h",{"b64":"eA=="}]]}`+"\n", v)
	}
	recs, rest, err := Parse(in)
	if err != nil || len(rest) != 0 || len(recs) != len(want) {
		t.Fatalf("%d records, rest %q, err %v", len(recs), rest, err)
	}
	for i, r := range recs {
		if string(r.Value) != want[i] || string(r.Headers[0].Value) != "x" {
			t.Fatalf("record %d: %q %q, want %q", i, r.Value, r.Headers[0].Value, want[i])
		}
	}
}

// BenchmarkJSONRecords parses a write of 1,000 log.jsonl lines, against
// the parser before lineParser in alternating rounds, and reports the
// ratio.
func BenchmarkJSONRecords(b *testing.B) {
	for _, kind := range []string{"plain", "escaped", "headers"} {
		b.Run(kind, func(b *testing.B) {
			var in []byte
			for i := 0; i < 1000; i++ {
				switch kind {
				case "plain":
					in = fmt.Appendf(in, `{"value":"%010d level=info msg=request served path=/api/v1/items","key":"k%d"}`+"\n", i, i%100)
				case "escaped":
					in = fmt.Appendf(in, `{"value":"{\"n\":%d,\"msg\":\"request served\",\"path\":\"/api/v1/items\"}","timestamp":1764410400000}`+"\n", i)
				case "headers":
					in = fmt.Appendf(in, `{"value":"v%d","headers":[["trace","%s"],["bin",{"b64":"AP8A"}]]}`+"\n", i, strings.Repeat("ab", 20))
				}
			}
			var cur, old time.Duration
			for i := 0; i < b.N; i++ {
				t0 := time.Now()
				if _, _, err := Parse(in); err != nil {
					b.Fatal(err)
				}
				t1 := time.Now()
				for line := range record.Lines(in) {
					if _, err := refParseJSONLine(line); err != nil {
						b.Fatal(err)
					}
				}
				cur, old = cur+t1.Sub(t0), old+time.Since(t1)
			}
			b.ReportMetric(float64(len(in)*b.N)/cur.Seconds()/1e6, "MB/s")
			b.ReportMetric(old.Seconds()/cur.Seconds(), "x-old")
		})
	}
}
