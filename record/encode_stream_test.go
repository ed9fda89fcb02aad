package record

import (
	"bytes"
	"testing"
)

// TestBlockwiseCompressionSameBytes: compressing block by block while the
// records are written gives the bytes of compressing the whole records
// area, for records smaller than, straddling and larger than a block.
func TestBlockwiseCompressionSameBytes(t *testing.T) {
	sets := map[string][]Record{
		"log lines": logLines(2000),
		"sample":    sampleRecords(), // a 144 KB value: several blocks in one record
		"one":       logLines(1),
	}
	mixed := append(logLines(300), sampleRecords()...)
	sets["mixed"] = append(mixed, logLines(700)...)
	sets["exact block"] = append(exactBlockRecord(t), logLines(2)...)
	for name, recs := range sets {
		area, err := appendRecords(nil, recs, recs[0].Timestamp, offsetDeltas{})
		if err != nil {
			t.Fatal(err)
		}
		for _, c := range []Codec{Snappy, LZ4} {
			var cs compressors
			want, err := cs.compress(nil, area, c)
			if err != nil {
				t.Fatal(err)
			}
			var e Encoder
			raw, err := e.AppendBatch(nil, 0, recs, BatchOptions{Codec: c})
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(raw[BatchHeaderSize:], want) {
				t.Errorf("%s, %v: blockwise bytes differ from whole-area compression", name, c)
			}
			if got := decodeOne(t, raw); len(got) != len(recs) {
				t.Errorf("%s, %v: %d records back", name, c, len(got))
			}
		}
	}
}

// exactBlockRecord returns a record whose encoding is exactly one xerial
// block long.
func exactBlockRecord(t *testing.T) []Record {
	for n := xerialBlockSize - 16; n < xerialBlockSize; n++ {
		r := []Record{{Timestamp: 1, Value: bytes.Repeat([]byte("a"), n)}}
		if area, _ := appendRecords(nil, r, 1, offsetDeltas{}); len(area) == xerialBlockSize {
			return r
		}
	}
	t.Fatal("no record size fills a block exactly")
	return nil
}
