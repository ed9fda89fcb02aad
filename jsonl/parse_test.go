package jsonl

import (
	"encoding/json"
	"errors"
	"testing"

	"github.com/partfs/partfs/partlog"
	"github.com/partfs/partfs/record"
)

func TestJSONRecordsRejects(t *testing.T) {
	for _, bad := range []string{"{\"value\":\"ok\"}\nnot json\n", `{"value":1}` + "\n", `{"value":"a","extra":1}` + "\n",
		"[1,2]\n", `{"value":"a"} {"value":"b"}` + "\n", `{"key":"a","key_b64":"YQ=="}` + "\n", `{"timestamp":-5}` + "\n",
		`{"value_b64":"%%%"}` + "\n", "\n", "null\n", `{"headers":[["a"]]}` + "\n", `{"headers":[[1,"a"]]}` + "\n"} {
		recs, _, err := Parse([]byte(bad))
		if !errors.Is(err, partlog.ErrInvalid) || recs != nil {
			t.Errorf("%q: recs %v err %v", bad, recs, err)
		}
	}
}

func TestJSONRecordsAccepts(t *testing.T) {
	recs, rest, err := Parse([]byte(`{"key_b64":"AP8=","value":"v","headers":[["h",{"b64":"AA=="}]]}` + "\n{\"va"))
	if err != nil || len(recs) != 1 || string(rest) != `{"va` {
		t.Fatalf("recs %v rest %q err %v", recs, rest, err)
	}
	r := recs[0]
	if string(r.Key) != "\x00\xff" || string(r.Value) != "v" || len(r.Headers) != 1 || string(r.Headers[0].Value) != "\x00" {
		t.Fatalf("record %+v", r)
	}
	if got := string(Append(nil, &r)); got != `{"offset":0,"timestamp":0,"key_b64":"AP8=","value":"v","headers":[["h","\u0000"]]}` {
		t.Fatalf("render %s", got)
	}
}

func TestAppendStringEscapes(t *testing.T) {
	for _, in := range []string{"", "plain ascii text here!", "a\"b\\c\nd\te\x01f\x1f", "12345678\"2345678\\", "ünïcødé and more text", "\x7f\x00"} {
		got := string(AppendString(nil, in))
		want, _ := json.Marshal(in)
		var back string
		if err := json.Unmarshal([]byte(got), &back); err != nil || back != in {
			t.Errorf("%q -> %s (json.Marshal: %s) err %v", in, got, want, err)
		}
	}
}

func TestJSONLenMatchesRendering(t *testing.T) {
	recs := []record.Record{
		{},
		{Offset: 1234567, Timestamp: -1, Key: []byte("k"), Value: []byte("v\"\\\n\x01 text over eight bytes")},
		{Offset: 9, Timestamp: 1764410400000, Key: []byte{0xff, 0}, Value: []byte{}},
		{Headers: []record.Header{{Key: "h", Value: nil}, {Key: "\xff", Value: []byte("x\ty")}, {Key: "b", Value: []byte{0xfe}}}},
	}
	for i := range recs {
		if got, want := Len(&recs[i]), int64(len(Append(nil, &recs[i]))); got != want {
			t.Errorf("record %d: jsonLen %d, rendered %d: %s", i, got, want, Append(nil, &recs[i]))
		}
	}
}
