package jsonl

import (
	"errors"
	"path/filepath"
	"testing"

	"github.com/partfs/partfs/internal/testfixtures"
	"github.com/partfs/partfs/internal/testutil"
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
	dir, files := testfixtures.Expected(t) // the others: TestFixturesNegative
	for _, rel := range files {
		t.Run(rel, func(t *testing.T) {
			want := testutil.ReadFile(t, filepath.Join(dir, rel+".expected.jsonl"))
			got, err := decodeAll(testutil.ReadFile(t, filepath.Join(dir, rel)), rel)
			if err != nil && !(errors.Is(err, record.ErrTruncated) && testfixtures.EndsCut(rel)) {
				t.Fatalf("decode: %v", err)
			}
			kept, dropped := testfixtures.FranzView(t, got)
			testfixtures.CompareJSONL(t, kept, testfixtures.Lines(string(want)))
			testfixtures.CompareJSONL(t, dropped, testfixtures.Backwards[rel])
		})
	}
}
