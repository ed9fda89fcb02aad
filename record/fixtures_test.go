package record

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/partfs/partfs/internal/testfixtures"
)

// fixtureDir holds real Kafka record sets.
func fixtureDir(t testing.TB) string { return testfixtures.Dir(t) }

// fixtureFiles lists every .bin fixture (relative names).
func fixtureFiles(t testing.TB) (string, []string) {
	dir := fixtureDir(t)
	var out []string
	err := filepath.Walk(dir, func(p string, info os.FileInfo, err error) error {
		if err == nil && strings.HasSuffix(p, ".bin") {
			rel, _ := filepath.Rel(dir, p)
			out = append(out, rel)
		}
		return err
	})
	if err != nil || len(out) == 0 {
		t.Fatalf("listing fixtures: %v (%d files)", err, len(out))
	}
	return dir, out
}

// decodeAll scans and decodes a whole record set into jsonl lines.
func decodeAll(data []byte, name string) ([]string, error) {
	s := NewBytesScanner(data, name)
	var d Decoder
	var lines []string
	for s.Next() {
		err := d.Records(s.Batch(), func(r *Record) bool {
			lines = append(lines, string(AppendJSON(nil, r)))
			return true
		})
		if err != nil {
			return lines, err
		}
	}
	return lines, s.Err()
}

func TestFixturesMatchExpected(t *testing.T) {
	dir, files := fixtureFiles(t)
	for _, rel := range files {
		want, err := os.ReadFile(filepath.Join(dir, rel+".expected.jsonl"))
		if errors.Is(err, os.ErrNotExist) {
			continue // negative cases: TestFixturesNegative
		}
		t.Run(rel, func(t *testing.T) {
			data, err := os.ReadFile(filepath.Join(dir, rel))
			if err != nil {
				t.Fatal(err)
			}
			got, err := decodeAll(data, rel)
			if err != nil && !(errors.Is(err, ErrTruncated) && strings.Contains(rel, "index_out_of_range")) {
				t.Fatalf("decode: %v", err)
			}
			kept, dropped := franzView(t, got)
			compareJSONL(t, kept, splitLines(string(want)))
			compareJSONL(t, dropped, backwardsRecords[rel])
		})
	}
}

// backwardsRecords are records a log reader returns but franz-go (which made
// the expected files) skips, because their batch's offsets go backwards.
var backwardsRecords = map[string][]string{
	"kafka-python/record_batch_data_v2_2and3.bin": {`{"offset":0,"timestamp":1535546684353,"key":null,"value":"hdr","headers":[["hkey","hval"]]}`},
	"kafka-python/record_batch_data_v2_all.bin":   {`{"offset":0,"timestamp":1535546684353,"key":null,"value":"hdr","headers":[["hkey","hval"]]}`},
}

// franzView splits our records into those franz-go's consumer returns and
// those it skips (offsets below one already returned).
func franzView(t *testing.T, lines []string) (kept, dropped []string) {
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

func splitLines(s string) []string {
	var out []string
	for _, l := range strings.Split(s, "\n") {
		if strings.TrimSpace(l) != "" {
			out = append(out, l)
		}
	}
	return out
}

// compareJSONL compares records as parsed JSON values, line by line.
func compareJSONL(t *testing.T, got, want []string) {
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
