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

// decodeCount scans and decodes a whole record set, counting its records.
func decodeCount(data []byte, name string) (int, error) {
	s := NewBytesScanner(data, name)
	var d Decoder
	n := 0
	for s.Next() {
		if err := d.Records(s.Batch(), func(*Record) bool { n++; return true }); err != nil {
			return n, err
		}
	}
	return n, s.Err()
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
			n, err := decodeCount(data, c.file)
			if n != c.records {
				t.Errorf("got %d records before the error, want %d", n, c.records)
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
