package record

import "testing"

// TestRecordsStopAnywhere: a batch mixing records the one-loop parser
// takes (keyless, no headers) and records it leaves to fastRecord decodes
// in order with the right offsets, and stops exactly where fn says.
func TestRecordsStopAnywhere(t *testing.T) {
	recs := append(logLines(40), sampleRecords()...)
	recs = append(recs, logLines(40)...)
	recs[3].Headers = []Header{{Key: "h", Value: []byte("v")}}
	for _, c := range []Codec{None, LZ4} {
		var e Encoder
		raw, err := e.AppendBatch(nil, 500, recs, BatchOptions{Codec: c})
		if err != nil {
			t.Fatal(err)
		}
		all := decodeOne(t, raw)
		if len(all) != len(recs) {
			t.Fatalf("%v: %d records", c, len(all))
		}
		for i := range all {
			want := recs[i]
			want.Offset = 500 + int64(i)
			if msg := sameRecord(all[i], want); msg != "" {
				t.Fatalf("%v record %d: %s", c, i, msg)
			}
		}
		b := &Batch{Raw: raw}
		b.Header, _ = ParseHeader(raw)
		var d Decoder
		for stop := 1; stop <= len(recs); stop++ {
			n := 0
			err := d.Records(b, func(r *Record) bool { n++; return r.Offset < 500+int64(stop)-1 })
			if err != nil || n != stop {
				t.Fatalf("%v: stop at %d: %d records, %v", c, stop, n, err)
			}
		}
	}
}
