package record

import (
	"errors"
	"hash/crc32"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/partfs/partfs/internal/testfixtures"
)

// fixtureFiles lists every .bin fixture (relative names).
func fixtureFiles(t testing.TB) (string, []string) {
	dir := testfixtures.Dir(t)
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
			kept, dropped := testfixtures.FranzView(t, got)
			testfixtures.CompareJSONL(t, kept, testfixtures.Lines(string(want)))
			testfixtures.CompareJSONL(t, dropped, testfixtures.Backwards[rel])
		})
	}
}

// TestFixturesNegative: partial tails stop with ErrTruncated at the tail's
// position (after the valid records); an invalid CRC and a mislabelled
// zstd batch fail with a CorruptionError naming file and position.
func TestFixturesNegative(t *testing.T) {
	dir := testfixtures.Dir(t)
	cases := []struct {
		file      string
		records   int
		truncated bool
		pos       int64
		reason    string
	}{
		{"kafkajs/fetch_v2_response_index_out_of_range.p1.records.bin", 3, true, 129, "only 9 bytes left"},
		{"kafkajs/fetch_v2_response_partial_messages_many_partitions.p0.records.bin", 0, true, 0, "runs past the end"},
		{"kafkajs/fetch_v2_response_partial_messages_many_partitions.p3.records.bin", 0, true, 0, "runs past the end"},
		{"kafkajs/fetch_v2_response_partial_messages_many_partitions.p6.records.bin", 0, true, 0, "runs past the end"},
		{"kafkajs/fetch_v2_response_partial_messages_many_partitions.p9.records.bin", 0, true, 0, "runs past the end"},
		{"kafka-rust/fetch2.mytopic.nocompression.invalid_crc.kafka.0900.records.bin", 0, false, 0, "CRC mismatch: stored 58585858"},
		{"kafkajs/v0_recordbatch_zstd.bin", 0, false, 0, "record 0 of 1: key length 44"},
	}
	for _, c := range cases {
		t.Run(c.file, func(t *testing.T) {
			data, err := os.ReadFile(filepath.Join(dir, c.file))
			if err != nil {
				t.Fatal(err)
			}
			lines, err := decodeAll(data, c.file)
			if len(lines) != c.records {
				t.Errorf("got %d records before the error, want %d", len(lines), c.records)
			}
			var ce *CorruptionError
			if !errors.As(err, &ce) || !errors.Is(err, ErrCorruption) {
				t.Fatalf("err = %v, want a CorruptionError", err)
			}
			if got := errors.Is(err, ErrTruncated); got != c.truncated {
				t.Errorf("errors.Is(err, ErrTruncated) = %v, want %v", got, c.truncated)
			}
			if ce.Pos != c.pos || ce.File != c.file || !strings.Contains(ce.Reason, c.reason) {
				t.Errorf("error %q: want position %d and reason containing %q", err, c.pos, c.reason)
			}
			if !strings.Contains(err.Error(), c.file) {
				t.Errorf("error %q does not name the file", err)
			}
		})
	}
}

// castagnoli is hash/crc32's table, the tests' own CRC-32C.
var castagnoli = crc32.MakeTable(crc32.Castagnoli)
