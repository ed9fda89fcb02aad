package record

import (
	"bytes"
	"testing"
)

// TestNoPerRecordAllocation: scanning (with a reused Scanner) and decoding
// an uncompressed 1000-record batch with headers allocates nothing.
func TestNoPerRecordAllocation(t *testing.T) {
	recs := logLines(1000)
	for i := range recs {
		recs[i].Headers = []Header{{Key: "trace", Value: []byte("abc")}}
	}
	var e Encoder
	raw, _ := e.AppendBatch(nil, 0, recs, BatchOptions{})
	raw, _ = e.AppendBatch(raw, 1000, recs, BatchOptions{})
	r := bytes.NewReader(raw)
	s := NewScanner(r, 0, int64(len(raw)), "a")
	var d Decoder
	n := 0
	fn := func(*Record) bool { n++; return true }
	pass := func() {
		s.Reset(r, 0, int64(len(raw)), "a")
		for s.Next() {
			if err := d.Records(s.Batch(), fn); err != nil {
				t.Fatal(err)
			}
		}
	}
	pass()
	if allocs := testing.AllocsPerRun(10, pass); allocs != 0 {
		t.Errorf("%v allocations per pass of 2000 records", allocs)
	}
	if n != 2000*12 { // first pass, warm-up, 10 runs
		t.Errorf("%d records", n)
	}
}

// TestEmptyBatch: the cleaner's empty batch keeps its offsets and is
// written uncompressed, as Kafka does.
func TestEmptyBatch(t *testing.T) {
	var e Encoder
	raw, err := e.AppendBatch(nil, 10, nil, BatchOptions{Codec: Zstd, LastOffsetDelta: 5, KeepProducer: true, ProducerID: 3})
	if err != nil {
		t.Fatal(err)
	}
	s := NewBytesScanner(raw, "e")
	if !s.Next() {
		t.Fatal(s.Err())
	}
	h := s.Batch().Header
	if h.LastOffset() != 15 || h.NumRecords != 0 || h.Codec() != None || h.ProducerID != 3 || len(raw) != BatchHeaderSize {
		t.Errorf("header %+v, %d bytes", h, len(raw))
	}
	var d Decoder
	if err := d.Records(s.Batch(), func(*Record) bool { t.Error("a record"); return true }); err != nil {
		t.Error(err)
	}
}
