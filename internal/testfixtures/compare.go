package testfixtures

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
)

// Backwards are the records, as docs/spec.md §3 JSON lines, that a log reader
// returns from a fixture but franz-go's consumer, which wrote the expected
// files, skips because their batch's offsets go backwards; keyed by the
// fixture's name relative to Dir.
var Backwards = map[string][]string{
	"kafka-python/record_batch_data_v2_2and3.bin": {`{"offset":0,"timestamp":1535546684353,"key":null,"value":"hdr","headers":[["hkey","hval"]]}`},
	"kafka-python/record_batch_data_v2_all.bin":   {`{"offset":0,"timestamp":1535546684353,"key":null,"value":"hdr","headers":[["hkey","hval"]]}`},
}

// FranzView splits JSON records, one a line, into those franz-go's
// consumer returns and those it skips (offsets below one already
// returned).
func FranzView(t testing.TB, lines []string) (kept, dropped []string) {
	t.Helper()
	next := int64(-1)
	for _, l := range lines {
		var r struct{ Offset int64 }
		if err := json.Unmarshal([]byte(l), &r); err != nil {
			t.Fatalf("our JSON %q: %v", l, err)
		}
		if r.Offset < next {
			dropped = append(dropped, l)
			continue
		}
		kept, next = append(kept, l), r.Offset+1
	}
	return kept, dropped
}

// Lines returns the lines of s that are not blank.
func Lines(s string) []string {
	var out []string
	for _, l := range strings.Split(s, "\n") {
		if strings.TrimSpace(l) != "" {
			out = append(out, l)
		}
	}
	return out
}

// CompareJSONL compares records as parsed JSON values, line by line.
func CompareJSONL(t testing.TB, got, want []string) {
	t.Helper()
	if len(got) != len(want) {
		t.Errorf("got %d records, want %d", len(got), len(want))
	}
	for i := 0; i < min(len(got), len(want)); i++ {
		var g, w any
		if err := json.Unmarshal([]byte(got[i]), &g); err != nil {
			t.Fatalf("record %d: our JSON %q: %v", i, got[i], err)
		}
		if err := json.Unmarshal([]byte(want[i]), &w); err != nil {
			t.Fatalf("record %d: expected JSON %q: %v", i, want[i], err)
		}
		gb, _ := json.Marshal(g)
		wb, _ := json.Marshal(w)
		if !bytes.Equal(gb, wb) {
			t.Fatalf("record %d:\n got  %s\n want %s", i, gb, wb)
		}
	}
}
