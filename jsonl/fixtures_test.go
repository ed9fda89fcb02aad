package jsonl

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/partfs/partfs/internal/testfixtures"
	"github.com/partfs/partfs/record"
)

// decodeAll scans and decodes a whole record set into jsonl lines.
func decodeAll(data []byte, name string) ([]string, error) {
	s := record.NewBytesScanner(data, name)
	var d record.Decoder
	var lines []string
	for s.Next() {
		err := d.Records(s.Batch(), func(r *record.Record) bool {
			lines = append(lines, string(Append(nil, r)))
			return true
		})
		if err != nil {
			return lines, err
		}
	}
	return lines, s.Err()
}

func TestFixturesMatchExpected(t *testing.T) {
	dir, files := testfixtures.Files(t)
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
			if err != nil && !(errors.Is(err, record.ErrTruncated) && strings.Contains(rel, "index_out_of_range")) {
				t.Fatalf("decode: %v", err)
			}
			kept, dropped := testfixtures.FranzView(t, got)
			testfixtures.CompareJSONL(t, kept, testfixtures.Lines(string(want)))
			testfixtures.CompareJSONL(t, dropped, testfixtures.Backwards[rel])
		})
	}
}
