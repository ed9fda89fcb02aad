package jsonl

import (
	"encoding/base64"
	"encoding/json"
	"strconv"
	"strings"
	"testing"

	"github.com/partfs/partfs/internal/benchutil"
	"github.com/partfs/partfs/record"
)

func TestAppendJSONExact(t *testing.T) {
	r := record.Record{Offset: 42, Timestamp: 1764410400000, Key: []byte("k1"), Value: []byte("v1"), Headers: []record.Header{{Key: "h", Value: []byte("x")}}}
	want := `{"offset":42,"timestamp":1764410400000,"key":"k1","value":"v1","headers":[["h","x"]]}`
	if got := string(Append(nil, &r)); got != want {
		t.Errorf("got  %s\nwant %s", got, want)
	}
	r = record.Record{Offset: 0, Timestamp: -1, Key: nil, Value: []byte{0xff, 0x00}, Headers: []record.Header{{Key: "n", Value: nil}, {Key: "b", Value: []byte{0x80}}}}
	want = `{"offset":0,"timestamp":-1,"key":null,"value_b64":"/wA=","headers":[["n",null],["b",{"b64":"gA=="}]]}`
	if got := string(Append(nil, &r)); got != want {
		t.Errorf("got  %s\nwant %s", got, want)
	}
}

// FuzzAppendJSON: the output is the reference rendering's, valid JSON that
// decodes back to the record.
func FuzzAppendJSON(f *testing.F) {
	f.Add([]byte("k"), []byte("line with \"quotes\", \\ and \n\t\x01 \u2028 é"), "h")
	f.Add([]byte{0xff}, []byte{}, "\x00")
	f.Fuzz(func(t *testing.T, key, value []byte, hk string) {
		r := record.Record{Offset: 7, Timestamp: 9, Key: key, Value: value, Headers: []record.Header{{Key: hk, Value: value}}}
		out := Append(nil, &r)
		if n := Len(&r); n != int64(len(out)) {
			t.Fatalf("Len %d, rendered %d: %s", n, len(out), out)
		}
		if want := refAppendJSON(&r); string(out) != string(want) {
			t.Fatalf("got  %s\nwant %s (the reference)", out, want)
		}
		var m map[string]any
		if err := json.Unmarshal(out, &m); err != nil {
			t.Fatalf("%s: %v", out, err)
		}
		check := func(name string, b []byte) {
			if s, ok := m[name].(string); ok {
				if s != string(b) {
					t.Fatalf("%s = %q, want %q", name, s, b)
				}
				return
			}
			s, _ := m[name+"_b64"].(string)
			if d, err := base64.StdEncoding.DecodeString(s); err != nil || string(d) != string(b) {
				t.Fatalf("%s_b64 = %q for %q", name, s, b)
			}
		}
		check("key", key)
		check("value", value)
	})
}

// TestAppendJSONEscapes: each escape form, and Len agreeing with the
// rendering on every path (plain ASCII, escapes, UTF-8, base64, headers).
func TestAppendJSONEscapes(t *testing.T) {
	long := strings.Repeat("abcdefgh", 5)
	cases := []struct {
		r    record.Record
		want string
	}{
		{record.Record{Value: []byte(long)}, `{"offset":0,"timestamp":0,"key":null,"value":"` + long + `","headers":[]}`},
		{record.Record{Key: []byte{}, Value: []byte(long + "\"\\\n\r\t\x01\x7f")},
			`{"offset":0,"timestamp":0,"key":"","value":"` + long + `\"\\\n\r\t\u0001` + "\x7f" + `","headers":[]}`},
		{record.Record{Offset: -5, Timestamp: 1 << 62, Value: []byte("é\u2028x\u2029")},
			`{"offset":-5,"timestamp":4611686018427387904,"key":null,"value":"é\u2028x\u2029","headers":[]}`},
		{record.Record{Key: []byte{0, 0xff}, Headers: []record.Header{{Key: "a\xff", Value: []byte("\x00")}, {Key: "n"}}},
			`{"offset":0,"timestamp":0,"key_b64":"AP8=","value":null,"headers":[["a\ufffd","\u0000"],["n",null]]}`},
	}
	for i, c := range cases {
		got := Append(nil, &c.r)
		if string(got) != c.want {
			t.Errorf("case %d:\ngot  %s\nwant %s", i, got, c.want)
		}
		if n := Len(&c.r); n != int64(len(got)) {
			t.Errorf("case %d: Len %d, rendered %d", i, n, len(got))
		}
	}
}

func BenchmarkJSONLen(b *testing.B) {
	recs := logLines(1000)
	n := 0
	for i := range recs {
		n += len(Append(nil, &recs[i]))
	}
	b.SetBytes(int64(n))
	for i := 0; i < b.N; i++ {
		for j := range recs {
			Len(&recs[j])
		}
	}
}

func BenchmarkAppendJSON(b *testing.B) {
	recs := logLines(1000)
	var buf []byte
	n := 0
	for i := range recs {
		n += len(Append(nil, &recs[i]))
	}
	b.SetBytes(int64(n))
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		buf = buf[:0]
		for j := range recs {
			buf = Append(buf, &recs[j])
		}
	}
}

func TestDecimalLen(t *testing.T) {
	vs := []int64{0, 1, 9, 10, 11, 99, 100, -1, -9, -10, 1764410400000, 1<<63 - 1, -1 << 63, -(1<<63 - 1)}
	for p := int64(1); p <= 1e18; p *= 10 {
		vs = append(vs, p-1, p, p+1, -p, -p+1, -p-1)
	}
	for _, v := range vs {
		if got, want := decimalLen(v), int64(len(strconv.FormatInt(v, 10))); got != want {
			t.Errorf("decimalLen(%d) = %d, want %d", v, got, want)
		}
	}
}

// FuzzPlainASCII: the word-at-a-time test agrees with the byte table.
func FuzzPlainASCII(f *testing.F) {
	f.Add([]byte(strings.Repeat("abcdefgh", 5) + "\x7f\x1f\"\\ \x80"))
	f.Fuzz(func(t *testing.T, b []byte) {
		for i := 0; i <= len(b); i++ {
			p := b[i:]
			want := true
			for _, c := range p {
				want = want && jsonSafe[c]
			}
			if got := plainASCII(p); got != want {
				t.Fatalf("plainASCII(%q) = %v", p, got)
			}
		}
	})
}

// logLines returns n records of the benchmarks' log lines, 1 ms apart.
func logLines(n int) []record.Record {
	recs := make([]record.Record, n)
	for i := range recs {
		recs[i] = record.Record{Timestamp: 1764464400000 + int64(i), Value: []byte(benchutil.LogLine(i))}
	}
	return recs
}
